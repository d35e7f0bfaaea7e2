/* icpp stats MAP: how precise a pathmap's CIDs are (method.md "Metrics"). */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "binary/binary.h"
#include "cli/cmds.h"
#include "pathmap/pathmap.h"

static const char usage_text[] =
	"usage: icpp stats [--top N] [--module M] [--json] MAP\n"
	"\n"
	"How precisely the CIDs (function, stack height) of a pathmap identify call\n"
	"paths.  A path is a sequence of functions; it is precise when no other path\n"
	"ends in the same function at the same height, and its degree of ambiguity\n"
	"is the number of paths sharing its CID (its worst height when it occurs at\n"
	"several).  Weighted figures count training entries at each frame's own CID.\n"
	"\n"
	"options:\n"
	"  --top N     list the N most ambiguous CIDs with their paths (default 10)\n"
	"  --module M  only the paths with a frame of module M (an ELF file: the module\n"
	"              with its build-id; else its path in MAP, or its file name when\n"
	"              that is unique): what rewriting M can change; a CID's degree\n"
	"              still counts every path of MAP\n"
	"  --json      print one JSON object instead of text\n"
	"  -h, --help  show this help\n"
	"\n"
	"example:\n"
	"  icpp stats prog.icpp --top 3\n";

static void hex_id(char *out, const struct pm_module *m)
{
	out[0] = 0;
	for (uint32_t i = 0; i < m->build_id_len && i < PM_BUILD_ID_MAX; i++)
		sprintf(out + 2 * i, "%02x", m->build_id[i]);
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* The distinct function sequences at one CID: a representative node and the
 * entries of all its nodes there. */
struct candidate {
	uint32_t node;
	uint64_t entries;
};

/* slot[] has one entry per path id, all PM_NONE between calls. */
static size_t candidates(struct pathmap *pm, const uint32_t *ids, uint32_t *slot,
			 const struct pm_ambiguous_cid *c, struct candidate *out)
{
	size_t n, k = 0;
	const uint32_t *nodes = pm_lookup(pm, c->func, c->height, &n);
	for (size_t i = 0; i < n; i++) {
		uint32_t *s = &slot[ids[nodes[i]]];
		if (*s == PM_NONE) {
			*s = (uint32_t)k;
			out[k++] = (struct candidate){.node = nodes[i], .entries = 0};
		}
		out[*s].entries += pm->nodes[nodes[i]].entries;
	}
	for (size_t j = 0; j < k; j++)
		slot[ids[out[j].node]] = PM_NONE;
	return k;
}

/* Is module m's file (its path, the build it was trained on) stripped, with
 * no debug file found for it (binary.h)? */
static bool stripped_bare(const struct pm_module *m)
{
	char err[256];
	struct bin_module *bm = bin_open(m->path, err, sizeof(err));
	if (!bm)
		return false;
	const uint8_t *id;
	size_t n = bin_build_id(bm, &id);
	bool same = n && n == m->build_id_len && !memcmp(id, m->build_id, n);
	bool bare = same && bin_stripped(bm) && !bin_debug_file(bm);
	bin_close(bm);
	return bare;
}

/* Module m's functions in the map, and how many of them have no name. */
static uint32_t unnamed_functions(const struct pathmap *pm, uint32_t m, uint32_t *total)
{
	uint32_t n = 0;
	*total = 0;
	for (uint32_t f = 0; f < pm->nfuncs; f++) {
		if (pm->funcs[f].module != m)
			continue;
		(*total)++;
		n += !pm->funcs[f].name || !*pm->funcs[f].name;
	}
	return n;
}

static void print_text(const char *file, const char *only, struct pathmap *pm,
		       const struct pm_stats *st, const struct pm_ambiguous_cid *worst, size_t nworst,
		       const uint32_t *ids, uint32_t *slot, struct candidate *cand)
{
	char label[1024], id[2 * PM_BUILD_ID_MAX + 1];
	printf("pathmap %s: %" PRIu32 " modules, %" PRIu32 " functions, %" PRIu32 " nodes\n", file,
	       pm->nmodules, pm->nfuncs, pm->nnodes);
	for (uint32_t i = 0; i < pm->nmodules; i++) {
		const struct pm_module *m = &pm->modules[i];
		hex_id(id, m);
		printf("  %s\n      %" PRIu32 " of %" PRIu32 " functions hooked (%.1f%%), build-id %s\n",
		       m->path, m->functions_hooked, m->functions_found,
		       cli_pct(m->functions_hooked, m->functions_found, 0.0), m->build_id_len ? id : "none");
		/* a stripped module's names wait on its debug file */
		uint32_t total, unnamed = unnamed_functions(pm, i, &total);
		if (unnamed && stripped_bare(m))
			printf("      %" PRIu32 " of its %" PRIu32 " functions in the map unnamed "
			       "(stripped; with its -dbgsym package installed, training names them)\n",
			       unnamed, total);
	}
	if (only)
		printf("\nonly the paths with a frame of %s\n", only);
	if (!st->paths) {
		printf("\nno call paths recorded\n");
		return;
	}
	uint64_t amb = st->paths - st->precise_paths, amb_e = st->entries - st->precise_entries;
	printf("\n%-38s %12" PRIu64 "\n", "paths (distinct function sequences)", st->paths);
	printf("%-38s %12" PRIu64 "  (%" PRIu64 " ambiguous)\n", "CIDs (distinct function, height)",
	       st->cids, st->ambiguous_cids);
	printf("%-38s %12" PRIu64 "  (%.1f%%)\n", "precise paths", st->precise_paths,
	       cli_pct(st->precise_paths, st->paths, 0.0));
	printf("%-38s %12" PRIu64 "  (%.1f%%)\n", "ambiguous paths", amb, cli_pct(amb, st->paths, 0.0));
	printf("%-38s %12" PRIu64 "  (%.1f%%)\n", "precise, weighted by entries",
	       st->precise_entries, cli_pct(st->precise_entries, st->entries, 0.0));
	printf("%-38s %12" PRIu64 "  (%.1f%%)\n", "ambiguous, weighted by entries", amb_e,
	       cli_pct(amb_e, st->entries, 0.0));

	printf("\ndegree of ambiguity\n%8s %12s %7s %8s %10s\n", "degree", "paths", "%", "cum. %",
	       "entries %");
	uint64_t cum = 0;
	for (int b = 0; b < PM_DEGREE_BUCKETS; b++) {
		cum += st->degree_paths[b];
		if (!st->degree_paths[b] && !st->degree_entries[b])
			continue;
		char deg[8];
		snprintf(deg, sizeof(deg), b == PM_DEGREE_BUCKETS - 1 ? ">%d" : "%d",
			 b == PM_DEGREE_BUCKETS - 1 ? b : b + 1);
		printf("%8s %12" PRIu64 " %7.1f %8.1f %10.1f\n", deg, st->degree_paths[b],
		       cli_pct(st->degree_paths[b], st->paths, 0.0), cli_pct(cum, st->paths, 0.0),
		       cli_pct(st->degree_entries[b], st->entries, 0.0));
	}
	if (!nworst)
		return;
	printf("\nthe %zu most ambiguous CIDs (of %" PRIu64 "): function@height, then entries "
	       "and path of each candidate\n", nworst, st->ambiguous_cids);
	for (size_t w = 0; w < nworst; w++) {
		const struct pm_ambiguous_cid *c = &worst[w];
		printf("  %s@%" PRId64 ": degree %" PRIu32 ", %" PRIu64 " entries\n",
		       pm_function_label(pm, c->func, bin_demangle, label, sizeof(label)), c->height,
		       c->degree, c->entries);
		size_t nc = candidates(pm, ids, slot, c, cand);
		for (size_t k = 0; k < nc; k++) {
			printf("    %12" PRIu64 "  ", cand[k].entries);
			pm_print_path(stdout, pm, cand[k].node, " > ", 0, bin_demangle);
			putchar('\n');
		}
	}
}

static void print_json(const char *file, const char *only, struct pathmap *pm,
		       const struct pm_stats *st, const struct pm_ambiguous_cid *worst, size_t nworst,
		       const uint32_t *ids, uint32_t *slot, struct candidate *cand)
{
	char label[1024], id[2 * PM_BUILD_ID_MAX + 1];
	printf("{\"file\": ");
	json_str(stdout, file);
	printf(", \"only_module\": ");
	if (only)
		json_str(stdout, only);
	else
		printf("null");
	printf(", \"modules\": [");
	for (uint32_t i = 0; i < pm->nmodules; i++) {
		const struct pm_module *m = &pm->modules[i];
		hex_id(id, m);
		printf("%s{\"path\": ", i ? ", " : "");
		json_str(stdout, m->path);
		printf(", \"build_id\": \"%s\", \"functions_found\": %" PRIu32
		       ", \"functions_hooked\": %" PRIu32 "}", id, m->functions_found,
		       m->functions_hooked);
	}
	printf("],\n \"functions\": %" PRIu32 ", \"nodes\": %" PRIu64 ", \"paths\": %" PRIu64
	       ", \"cids\": %" PRIu64 ", \"ambiguous_cids\": %" PRIu64 ", \"max_degree\": %" PRIu32
	       ",\n \"precise_paths\": %" PRIu64 ", \"ambiguous_paths\": %" PRIu64
	       ", \"precise_paths_pct\": %.1f,\n \"entries\": %" PRIu64 ", \"precise_entries\": %" PRIu64
	       ", \"ambiguous_entries\": %" PRIu64 ", \"precise_entries_pct\": %.1f,\n",
	       pm->nfuncs, st->nodes, st->paths, st->cids, st->ambiguous_cids, st->max_degree,
	       st->precise_paths, st->paths - st->precise_paths, cli_pct(st->precise_paths, st->paths, 0.0),
	       st->entries, st->precise_entries, st->entries - st->precise_entries,
	       cli_pct(st->precise_entries, st->entries, 0.0));
	const uint64_t *cols[] = {st->degree_paths, st->degree_entries};
	for (int c = 0; c < 2; c++) {
		printf(" \"degree_%s\": [", c ? "entries" : "paths");
		for (int b = 0; b < PM_DEGREE_BUCKETS; b++)
			printf("%s%" PRIu64, b ? ", " : "", cols[c][b]);
		printf("],\n");
	}
	printf(" \"worst_cids\": [");
	for (size_t w = 0; w < nworst; w++) {
		const struct pm_ambiguous_cid *c = &worst[w];
		const struct pm_function *f = &pm->funcs[c->func];
		printf("%s\n  {\"function\": ", w ? "," : "");
		json_str(stdout, pm_function_label(pm, c->func, bin_demangle, label, sizeof(label)));
		printf(", \"module\": ");
		json_str(stdout, pm->modules[f->module].path);
		printf(", \"addr\": \"0x%" PRIx64 "\", \"height\": %" PRId64 ", \"degree\": %" PRIu32
		       ", \"entries\": %" PRIu64 ", \"paths\": [", f->addr, c->height, c->degree,
		       c->entries);
		size_t nc = candidates(pm, ids, slot, c, cand);
		for (size_t k = 0; k < nc; k++) {
			uint32_t chain[4096];
			uint32_t depth = pm_path_nodes(pm, cand[k].node, chain, 4096);
			printf("%s{\"entries\": %" PRIu64 ", \"functions\": [", k ? ", " : "",
			       cand[k].entries);
			for (uint32_t d = 0; d < depth && d < 4096; d++) {
				printf("%s", d ? ", " : "");
				json_str(stdout, pm_function_label(pm, pm->nodes[chain[d]].func,
								   bin_demangle, label, sizeof(label)));
			}
			printf("]}");
		}
		printf("]}");
	}
	printf("%s]}\n", nworst ? "\n " : "");
}

/* The module of the map with the build-id of the ELF file at path, if any
 * (the loader may have named it through a symlink). */
static uint32_t module_of_file(const struct pathmap *pm, const char *path)
{
	char err[256];
	struct bin_module *bm = bin_open(path, err, sizeof(err));
	if (!bm)
		return PM_NONE;
	const uint8_t *id;
	size_t n = bin_build_id(bm, &id);
	uint32_t m = n ? pm_module_by_build_id(pm, id, (uint32_t)n) : PM_NONE;
	bin_close(bm);
	return m;
}

/* Module M of the map: its path, the module with the build-id of the file M,
 * or a unique file name.  PM_NONE with one line said when there is none or
 * several. */
static uint32_t find_module(const struct pathmap *pm, const char *file, const char *name)
{
	uint32_t found = module_of_file(pm, name), n = 0;
	if (found != PM_NONE)
		return found;
	for (uint32_t i = 0; i < pm->nmodules; i++) {
		const char *path = pm->modules[i].path, *base = strrchr(path, '/');
		if (!strcmp(path, name))
			return i;
		if (!strcmp(base ? base + 1 : path, name)) {
			found = i;
			n++;
		}
	}
	if (n == 1)
		return found;
	cli_error("stats", "%s %s module '%s' (icpp stats %s lists its modules)", file,
		  n ? "has more than one" : "has no", name, file);
	return PM_NONE;
}

int cmd_stats(int argc, char **argv)
{
	static const struct option opts[] = {
		{"top", required_argument, NULL, 't'},
		{"module", required_argument, NULL, 'M'},
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	long top = 10;
	bool json = false;
	const char *only = NULL;
	char *end;
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 't':
			top = strtol(optarg, &end, 10);
			if (!*optarg || *end || top < 0 || top > 1000000) {
				cli_error("stats", "--top wants a count from 0 to 1000000, not '%s'",
					  optarg);
				return 2;
			}
			break;
		case 'j':
			json = true;
			break;
		case 'M':
			only = optarg;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cli_bad_option("stats", argv[optind - 1]);
		}
	}
	if (optind != argc - 1) {
		cli_error("stats", "expected one pathmap; usage: icpp stats [--top N] [--module M] "
			  "[--json] MAP");
		return 2;
	}
	const char *file = argv[optind];
	char err[1024];
	struct pathmap *pm;
	if (pm_read(file, &pm, err, sizeof(err)) < 0) {
		cli_error("stats", "%s", err);
		return 1;
	}
	uint32_t module = only ? find_module(pm, file, only) : PM_NONE;
	if (only && module == PM_NONE) {
		pm_free(pm);
		return 1;
	}
	struct pm_stats st;
	struct pm_ambiguous_cid *worst = calloc((size_t)top + 1, sizeof(*worst));
	uint32_t *ids = malloc(((size_t)pm->nnodes + 1) * sizeof(*ids));
	uint32_t *slot = malloc(((size_t)pm->nnodes + 1) * sizeof(*slot));
	struct candidate *cand = malloc(((size_t)pm->nnodes + 1) * sizeof(*cand));
	uint32_t npaths;
	int rc = 1;
	if (!worst || !ids || !slot || !cand || pm_stats_of(pm, module, &st) < 0 || pm_profile_path_ids(pm, ids, &npaths) < 0) {
		cli_error("stats", "out of memory analysing %s", file);
		goto out;
	}
	memset(slot, 0xff, ((size_t)pm->nnodes + 1) * sizeof(*slot));
	size_t nworst = pm_worst_cids_of(pm, module, worst, (size_t)top);
	(json ? print_json : print_text)(file, only ? pm->modules[module].path : NULL, pm, &st, worst,
					 nworst, ids, slot, cand);
	rc = fflush(stdout) ? 1 : 0;
	if (rc)
		cli_error("stats", "cannot write the output");
out:
	free(worst);
	free(ids);
	free(slot);
	free(cand);
	pm_free(pm);
	return rc;
}
