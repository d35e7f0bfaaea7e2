/* icpp paths MAP: list a pathmap's call paths with names, heights, counts. */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "binary/binary.h"
#include "cli/cmds.h"
#include "pathmap/pathmap.h"

static const char usage_text[] =
	"usage: icpp paths [--function NAME] [--cid FUNC@HEIGHT] [--callsites] MAP\n"
	"\n"
	"List the call paths of a pathmap, one per line: the height of the last\n"
	"frame (bytes, decimal), how many times training entered it, and the\n"
	"functions from the thread's root, as in\n"
	"      4160          12  main > parse > expr\n"
	"Functions without a name show as FILE+0xADDR.\n"
	"\n"
	"options:\n"
	"  --function NAME    only paths ending in NAME (symbol, demangled name,\n"
	"                     0xADDR or FILE+0xADDR)\n"
	"  --cid FUNC@HEIGHT  only paths with that CID, FUNC as for --function\n"
	"  --callsites        show where each caller made its call (caller+0xOFF,\n"
	"                     or [FILE+0xADDR] outside the caller)\n"
	"  -h, --help         show this help\n"
	"\n"
	"example:\n"
	"  icpp paths prog.icpp --cid expr@4160\n";

/* Does spec name function f?  spec: a symbol, a demangled name (with or
 * without its parameters), 0xADDR, or FILE+0xADDR. */
static bool names(const struct pathmap *pm, uint32_t f, const char *spec)
{
	const struct pm_function *fn = &pm->funcs[f];
	char *end;
	if (!strncmp(spec, "0x", 2)) {
		unsigned long long a = strtoull(spec, &end, 16);
		return !*end && a == fn->addr;
	}
	const char *plus = strstr(spec, "+0x");
	if (plus) {
		const char *path = pm->modules[fn->module].path, *slash = strrchr(path, '/');
		const char *file = slash && slash[1] ? slash + 1 : path;
		unsigned long long a = strtoull(plus + 3, &end, 16);
		if (!*end && a == fn->addr && strlen(file) == (size_t)(plus - spec) &&
		    !strncmp(file, spec, (size_t)(plus - spec)))
			return true;
	}
	char label[1024];
	pm_function_label(pm, f, bin_demangle, label, sizeof(label));
	if (!strcmp(label, spec) || (fn->name && !strcmp(fn->name, spec)))
		return true;
	size_t n = strlen(spec);
	return fn->name && !strncmp(label, spec, n) && label[n] == '(';
}

static void print_node(struct pathmap *pm, uint32_t i, unsigned flags)
{
	const struct pm_node *n = &pm->nodes[i];
	printf("%10" PRId64 "  %10" PRIu64 "  ", n->height, n->entries);
	pm_print_path(stdout, pm, i, " > ", flags, bin_demangle);
	putchar('\n');
}

int cmd_paths(int argc, char **argv)
{
	static const struct option opts[] = {
		{"function", required_argument, NULL, 'f'},
		{"cid", required_argument, NULL, 'c'},
		{"callsites", no_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *function = NULL, *cid = NULL;
	unsigned flags = 0;
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f':
			function = optarg;
			break;
		case 'c':
			cid = optarg;
			break;
		case 's':
			flags |= PM_PRINT_CALLSITES;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cli_bad_option("paths", argv[optind - 1]);
		}
	}
	if (optind != argc - 1) {
		cli_error("paths", "expected one pathmap; usage: icpp paths [--function NAME] "
			  "[--cid FUNC@HEIGHT] [--callsites] MAP");
		return 2;
	}
	if (function && cid) {
		cli_error("paths", "give --function or --cid, not both");
		return 2;
	}
	char spec[1024];
	int64_t height = 0;
	if (cid) {
		const char *at = strrchr(cid, '@');
		char *end;
		if (!at || at == cid || (size_t)(at - cid) >= sizeof(spec)) {
			cli_error("paths", "--cid wants FUNC@HEIGHT (e.g. main@48), not '%s'", cid);
			return 2;
		}
		height = strtoll(at + 1, &end, 10);
		if (!at[1] || *end) {
			cli_error("paths", "--cid wants a decimal height after '@', not '%s'", at + 1);
			return 2;
		}
		memcpy(spec, cid, (size_t)(at - cid));
		spec[at - cid] = 0;
		function = spec;
	}

	const char *file = argv[optind];
	char err[1024];
	struct pathmap *pm;
	if (pm_read(file, &pm, err, sizeof(err)) < 0) {
		cli_error("paths", "%s", err);
		return 1;
	}
	int rc = 0;
	bool *want = NULL;
	size_t nwant = 0, shown = 0;
	if (function) {
		if (!(want = calloc((size_t)pm->nfuncs + 1, sizeof(*want)))) {
			cli_error("paths", "out of memory");
			pm_free(pm);
			return 1;
		}
		for (uint32_t f = 0; f < pm->nfuncs; f++)
			nwant += want[f] = names(pm, f, function);
		if (!nwant) {
			cli_error("paths", "%s has no function named '%s' (icpp paths %s lists "
				  "every path)", file, function, file);
			rc = 1;
			goto out;
		}
	}
	if (cid) {
		for (uint32_t f = 0; f < pm->nfuncs; f++) {
			size_t n;
			const uint32_t *nodes = want[f] ? pm_lookup(pm, f, height, &n) : NULL;
			for (size_t k = 0; nodes && k < n; k++, shown++)
				print_node(pm, nodes[k], flags);
		}
		if (!shown) {
			cli_error("paths", "no path in %s has CID %s", file, cid);
			rc = 1;
		}
	} else {
		for (uint32_t i = 0; i < pm->nnodes; i++)
			if (!want || want[pm->nodes[i].func])
				print_node(pm, i, flags);
	}
	if (!rc && fflush(stdout)) {
		cli_error("paths", "cannot write the output");
		rc = 1;
	}
out:
	free(want);
	pm_free(pm);
	return rc;
}
