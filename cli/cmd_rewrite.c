/* icpp rewrite PROG: ask the rewriter what it may change, solve (or take a
 * plan), write the rewritten program and its predicted pathmap
 * (rewriter/rewriter.h, disambig/from_pathmap.h). */
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binary/binary.h"
#include "cli/cmds.h"
#include "cli/rewrite_cap.h"
#include "disambig/disambig.h"
#include "disambig/from_pathmap.h"
#include "pathmap/pathmap.h"
#include "rewriter/rewriter.h"

static const char usage_text[] =
	"usage: icpp rewrite PROG [-m MAP] [-o OUT] [--plan PLAN | --everything[=P,W[,C]]] [options]\n"
	"\n"
	"Rewrite the program PROG so that the call paths of its pathmap MAP get CIDs of\n"
	"their own: the rewriter says which frames it can pad, which callsites it can\n"
	"wrap and which functions it can clone, the solver chooses, and the result is\n"
	"written to OUT with its predicted\n"
	"pathmap OUT.icpp.  PROG is never modified.  Check the result with\n"
	"'icpp verify OUT -- ARGS'.\n"
	"\n"
	"options:\n"
	"  -m, --map MAP          PROG's pathmap (default: PROG's name + .icpp)\n"
	"  -o, --output OUT       the rewritten program (default: PROG's name + .rw)\n"
	"  --plan PLAN            apply PLAN (written by icpp plan) instead of solving\n"
	"  --everything[=P,W[,C]] pad every function the analysis allows by up to P bytes,\n"
	"                         wrap every callsite it allows by at least W and, unless\n"
	"                         C is 0, clone every function it allows for one of its\n"
	"                         calls and, in each clone, one callee for the copy of\n"
	"                         its call (a chain; default 32,16,1): exercises the\n"
	"                         rewriter, disambiguates nothing\n"
	"  --explain              print what can be changed, per function and callsite\n"
	"                         (with -m: calls into the map's libraries bounded by\n"
	"                         their callees' code, as a rewrite does)\n"
	"  --max-stack-growth X   as icpp plan (default 1.25; 0: no cap)\n"
	"  --no-wrap              no callsite wrappers\n"
	"  --no-clone             no clones\n"
	"  --pad-bound B, --wrap-bound B, --seed N, --budget N, --callsites   as icpp plan\n"
	"  -q, --quiet            no summary on stderr\n"
	"  -h, --help             show this help\n"
	"\n"
	"example:\n"
	"  icpp train -o lua.icpp -- lua5.4 bench.lua\n"
	"  icpp rewrite /usr/bin/lua5.4 -m lua.icpp -o lua.rw\n"
	"  icpp verify lua.rw -- bench.lua\n";

/* A plan in pathmap terms -> the rewriter's plan (module `m` only). */
static int to_rw_plan(const struct pathmap *pm, uint32_t m, const struct da_pm_plan *pp,
		      struct rw_plan *p, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	for (uint32_t i = 0; i < pp->npads; i++) {
		const struct pm_function *f = &pm->funcs[pp->pads[i].func];
		if (f->module != m) {
			snprintf(err, errlen, "the plan pads 0x%" PRIx64 " in %s, not in the program "
				 "being rewritten", f->addr, pm->modules[f->module].path);
			return -1;
		}
		if (rw_plan_add(p, false, f->addr, pp->pads[i].bytes))
			goto oom;
	}
	for (uint32_t i = 0; i < pp->nwraps; i++) {
		if (pp->wraps[i].module != m) {
			snprintf(err, errlen, "the plan wraps callsite 0x%" PRIx64 " in %s, not in the "
				 "program being rewritten", pp->wraps[i].addr,
				 pm->modules[pp->wraps[i].module].path);
			return -1;
		}
		if (rw_plan_add(p, true, pp->wraps[i].addr, pp->wraps[i].bytes))
			goto oom;
	}
	for (uint32_t k = 0; k < pp->nclones; k++) {
		const struct da_pm_clone *c = &pp->clones[k];
		if (pm->funcs[c->func].module != m || c->cs_module != m) {
			snprintf(err, errlen, "the plan clones 0x%" PRIx64 " in %s, not in the program "
				 "being rewritten", pm->funcs[c->func].addr,
				 pm->modules[pm->funcs[c->func].module].path);
			return -1;
		}
		if (rw_plan_add_clone(p, pm->funcs[c->func].addr, c->cs_addr, c->pad,
				      c->parent == DA_NONE ? RW_NONE : c->parent))
			goto oom;
	}
	for (uint32_t i = 0; i < pp->nclone_wraps; i++)
		if (rw_plan_add_clone_wrap(p, pp->clone_wraps[i].clone, pp->clone_wraps[i].addr,
					   pp->clone_wraps[i].bytes))
			goto oom;
	return 0;
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* The rewriter's plan -> pathmap terms, for the prediction: functions and
 * callsites the pathmap never saw move nothing in it (clones are made only
 * of functions it has: their numbers must stay). */
static int to_pm_plan(struct pathmap *pm, uint32_t m, const struct rw_plan *p, struct da_pm_plan *pp)
{
	memset(pp, 0, sizeof(*pp));
	pp->pads = calloc(p->npads ? p->npads : 1, sizeof(*pp->pads));
	pp->wraps = calloc(p->nwraps ? p->nwraps : 1, sizeof(*pp->wraps));
	pp->clones = calloc(p->nclones ? p->nclones : 1, sizeof(*pp->clones));
	if (!pp->pads || !pp->wraps || !pp->clones)
		return -1;
	for (uint32_t k = 0; k < p->nclones; k++) {
		uint32_t f = pm_function_at(pm, m, p->clones[k].func);
		if (f == PM_NONE)
			return -1;
		pp->clones[pp->nclones++] =
			(struct da_pm_clone){f, m, p->clones[k].site, p->clones[k].pad, p->clones[k].parent};
	}
	for (uint32_t i = 0; i < p->npads; i++) {
		uint32_t f = pm_function_at(pm, m, p->pads[i].addr);
		if (f != PM_NONE)
			pp->pads[pp->npads++] = (struct da_pm_pad){f, p->pads[i].bytes};
	}
	for (uint32_t i = 0; i < p->nwraps; i++)
		pp->wraps[pp->nwraps++] = (struct da_pm_wrap){m, p->wraps[i].addr, p->wraps[i].bytes};
	return 0;
}

/* A fragment (gcc's .cold part) runs in its parent's frame.  Below a frame of
 * its parent the model knows it (disambig.h section 2: it takes its frame's
 * padding, not its own); where training shows it in its parent's place (a
 * landing pad in the fragment, its frame rebuilt from the CFI) whatever it
 * calls moves with the parent's padding too, so the prediction gives each
 * fragment its parent's padding. */
static int add_fragment_pads(struct pathmap *pm, uint32_t m, const struct rw_binary *b,
			     struct da_pm_plan *pp)
{
	size_t n;
	const struct rw_func *f = rw_functions(b, &n);
	uint32_t base = pp->npads;
	for (size_t i = 0; i < n; i++) {
		if (f[i].parent == RW_NONE)
			continue;
		uint32_t g = pm_function_at(pm, m, f[i].addr);
		uint32_t parent = pm_function_at(pm, m, f[f[i].parent].addr);
		uint32_t bytes = 0;
		for (uint32_t k = 0; k < base && parent != PM_NONE; k++)
			if (pp->pads[k].func == parent)
				bytes = pp->pads[k].bytes;
		if (g == PM_NONE || !bytes)
			continue;
		struct da_pm_pad *v = realloc(pp->pads, (pp->npads + 1) * sizeof(*v));
		if (!v)
			return -1;
		pp->pads = v;
		pp->pads[pp->npads++] = (struct da_pm_pad){g, bytes};
	}
	return 0;
}

/* Put the prediction's clones where OUT has them (rw_place_clones). */
static int place_clones(const char *out, uint32_t m, struct pathmap **pred, char *err,
			size_t errlen)
{
	struct rw_note n;
	struct pathmap *placed;
	if (rw_note_read(out, &n, err, errlen) != 0)
		return -1;
	int r = rw_place_clones(*pred, m, &n, &placed, err, errlen);
	rw_note_free(&n);
	if (r == 0) {
		pm_free(*pred);
		*pred = placed;
	}
	return r;
}

static char *default_name(const char *prog, const char *suffix)
{
	const char *base = strrchr(prog, '/');
	base = base ? base + 1 : prog;
	size_t n = strlen(base) + strlen(suffix) + 1;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s%s", base, suffix);
	return s;
}

static double secs(struct timespec a, struct timespec b)
{
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

static void print_capability(const struct rw_binary *b)
{
	struct rw_summary s;
	rw_summarize(b, &s);
	fprintf(stderr, "icpp rewrite: %u functions: %u paddable in place (%u fp, %u no-fp frames, "
		"%u frameless)\n", s.funcs, s.paddable, s.fp, s.sp, s.frameless);
	for (int i = 1; i < RW_PAD_N; i++)
		if (s.pad_refused[i])
			fprintf(stderr, "  %6u not paddable in place: %s\n", s.pad_refused[i],
				rw_pad_why_name((enum rw_pad_why)i));
	fprintf(stderr, "icpp rewrite: of those, %u paddable through an entry wrapper\n",
		s.entry_paddable);
	for (int i = RW_ENTRY_SHAPE + 1; i < RW_ENTRY_N; i++)
		if (s.entry_refused[i])
			fprintf(stderr, "  %6u no entry wrapper: %s\n", s.entry_refused[i],
				rw_entry_why_name((enum rw_entry_why)i));
	fprintf(stderr, "icpp rewrite: %u functions cloneable\n", s.cloneable);
	for (int i = 1; i < RW_CLONE_N; i++)
		if (s.clone_refused[i])
			fprintf(stderr, "  %6u not cloneable: %s\n", s.clone_refused[i],
				rw_clone_why_name((enum rw_clone_why)i));
	fprintf(stderr, "icpp rewrite: %u call instructions: %u wrappable, %u redirectable to a "
		"clone\n", s.calls, s.wrappable, s.redirectable);
	for (int i = 1; i < RW_WRAP_N; i++)
		if (s.wrap_refused[i])
			fprintf(stderr, "  %6u not wrappable: %s\n", s.wrap_refused[i],
				rw_wrap_why_name((enum rw_wrap_why)i));
}

/* When a tenth or more of the map's paths do not pass through PROG (other
 * programs: a test suite run by sh and make), the share that rewriting PROG
 * can change, on its own line. */
static void print_module_precision(const struct pathmap *pm, const struct pathmap *pred, uint32_t m,
				   const char *prog, uint64_t all_paths)
{
	struct pm_stats sb, sa;
	if (pm_stats_of(pm, m, &sb) < 0 || pm_stats_of(pred, m, &sa) < 0 || sb.paths * 10 > all_paths * 9)
		return;
	fprintf(stderr, "icpp rewrite: the %" PRIu64 " paths through %s: precise %.1f%% -> %.1f%% "
		"predicted (weighted %.1f%% -> %.1f%%)\n", sb.paths, prog,
		cli_pct(sb.precise_paths, sb.paths, 100.0), cli_pct(sa.precise_paths, sa.paths, 100.0),
		cli_pct(sb.precise_entries, sb.entries, 100.0), cli_pct(sa.precise_entries, sa.entries, 100.0));
}

int cmd_rewrite(int argc, char **argv)
{
	static const struct option opts[] = {
		{"map", required_argument, NULL, 'm'},
		{"output", required_argument, NULL, 'o'},
		{"plan", required_argument, NULL, 'P'},
		{"everything", optional_argument, NULL, 'E'},
		{"explain", no_argument, NULL, 'x'},
		{"max-stack-growth", required_argument, NULL, 'g'},
		{"no-wrap", no_argument, NULL, 'W'},
		{"no-clone", no_argument, NULL, 'C'},
		{"pad-bound", required_argument, NULL, 'p'},
		{"wrap-bound", required_argument, NULL, 'w'},
		{"seed", required_argument, NULL, 's'},
		{"budget", required_argument, NULL, 'b'},
		{"callsites", no_argument, NULL, 'S'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct da_options o;
	struct da_capability cap;
	da_options_default(&o);
	da_capability_default(&cap);
	o.allow_clone = true;
	const char *map = NULL, *output = NULL, *planfile = NULL;
	bool everything = false, explain = false, quiet = false, callsites = false;
	uint64_t ev_pad = 32, ev_wrap = 16, ev_clone = 1, v;
	char *end;
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "m:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			map = optarg;
			break;
		case 'o':
			output = optarg;
			break;
		case 'P':
			planfile = optarg;
			break;
		case 'E':
			everything = true;
			if (optarg) {
				unsigned long long a, b_, c_ = 1;
				char extra;
				int got = sscanf(optarg, "%llu,%llu,%llu%c", &a, &b_, &c_, &extra);
				if ((got != 2 && got != 3) || a % 16 || b_ % 16 || a > RW_MAX_AMOUNT ||
				    b_ > RW_MAX_AMOUNT || c_ > 1) {
					cli_error("rewrite", "--everything wants PAD,WRAP[,CLONE], multiples of 16 up "
						  "to %d and 0 or 1, not '%s'", RW_MAX_AMOUNT, optarg);
					return 2;
				}
				ev_pad = a;
				ev_wrap = b_;
				ev_clone = c_;
			}
			break;
		case 'x':
			explain = true;
			break;
		case 'g':
			o.max_stack_growth = strtod(optarg, &end);
			if (!*optarg || *end || (o.max_stack_growth != 0 && o.max_stack_growth < 1)) {
				cli_error("rewrite", "--max-stack-growth wants a factor of at least 1 (or 0), not '%s'",
					  optarg);
				return 2;
			}
			break;
		case 'W':
			o.allow_wrap = false;
			break;
		case 'C':
			o.allow_clone = false;
			break;
		case 'p':
		case 'w':
			if (!cli_parse_u64(optarg, &v, RW_MAX_AMOUNT) || v % 16) {
				cli_error("rewrite", "--%s wants a multiple of 16 from 0 to %d, not '%s'",
					  c == 'p' ? "pad-bound" : "wrap-bound", RW_MAX_AMOUNT, optarg);
				return 2;
			}
			*(c == 'p' ? &cap.pad_bound : &cap.wrap_bound) = (uint32_t)v;
			break;
		case 's':
			if (!cli_parse_u64(optarg, &o.seed, UINT64_MAX)) {
				cli_error("rewrite", "--seed wants a number, not '%s'", optarg);
				return 2;
			}
			break;
		case 'b':
			if (!cli_parse_count(optarg, &o.budget)) {
				cli_error("rewrite", "--budget wants a positive number of node moves (e.g. 200M), not '%s'",
					  optarg);
				return 2;
			}
			break;
		case 'S':
			callsites = true;
			break;
		case 'q':
			quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cli_bad_option("rewrite", argv[optind - 1]);
		}
	}
	if (optind != argc - 1) {
		cli_error("rewrite", "expected one program; usage: icpp rewrite PROG [-m MAP] [-o OUT]");
		return 2;
	}
	if (planfile && everything) {
		cli_error("rewrite", "--plan and --everything exclude each other");
		return 2;
	}
	const char *prog = argv[optind];
	char err[1024];
	int rc = 1;
	struct timespec t0, t1, ta, ts, tw;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct rw_binary *b = rw_open(prog, err, sizeof(err));
	clock_gettime(CLOCK_MONOTONIC, &ta);
	if (!b) {
		cli_error("rewrite", "%s", err);
		return 1;
	}
	if (explain) {
		struct pathmap *epm = NULL;
		if (map && pm_read(map, &epm, err, sizeof(err)) < 0) {
			cli_error("rewrite", "%s", err);
			rw_close(b);
			return 1;
		}
		if (epm)
			rewrite_bound_imports(b, epm, "icpp rewrite", true);
		pm_free(epm);
		rw_explain(b, stdout);
		print_capability(b);
		rw_close(b);
		return fflush(stdout) ? 1 : 0;
	}
	char *defmap = map ? NULL : default_name(prog, ".icpp");
	char *defout = output ? NULL : default_name(prog, ".rw");
	char *predpath = NULL;
	struct pathmap *pm = NULL, *pred = NULL;
	struct da_bridge br = {0};
	struct da_result r = {0};
	struct da_pm_plan pp = {0};
	struct rw_plan plan = {0};
	struct rewrite_cap rwcap = {0};
	bool solved = false;
	if ((!map && !defmap) || (!output && !defout))
		goto oom;
	map = map ? map : defmap;
	output = output ? output : defout;
	{
		char a[PATH_MAX], o2[PATH_MAX];
		if (realpath(prog, a) && realpath(output, o2) && !strcmp(a, o2)) {
			cli_error("rewrite", "OUT (%s) is PROG itself: icpp rewrite never modifies its input",
				  output);
			goto out;
		}
	}
	if (pm_read(map, &pm, err, sizeof(err)) < 0) {
		cli_error("rewrite", "%s (train first: icpp train -o %s -- %s ...)", err, map, prog);
		goto out;
	}
	if (rewrite_cap_init(&rwcap, b, prog, pm, map, "rewrite", quiet, &cap) < 0)
		goto out;
	uint32_t m = rwcap.module;
	if (!quiet)
		print_capability(b);
	if (everything) {
		if (rw_plan_everything_seen(b, &rwcap.vis, (uint32_t)ev_pad, (uint32_t)ev_wrap, ev_clone, &plan) ||
		    to_pm_plan(pm, m, &plan, &pp))
			goto oom;
	} else {
		if (planfile) {
			if (da_plan_read(planfile, pm, &pp, err, sizeof(err)) < 0) {
				cli_error("rewrite", "%s", err);
				goto out;
			}
		} else {
			if (da_from_pathmap(pm, &cap, callsites ? DA_UNIT_CALLSITES : DA_UNIT_FUNCTIONS, &br,
					    err, sizeof(err)) < 0 ||
			    da_solve(br.prob, &o, &r, err, sizeof(err)) < 0) {
				cli_error("rewrite", "%s: %s", map, err);
				goto out;
			}
			if (da_pm_plan_from(&br, &r.plan, &pp) < 0)
				goto oom;
			solved = true;
		}
		if (to_rw_plan(pm, m, &pp, &plan, err, sizeof(err)) < 0) {
			cli_error("rewrite", "%s", err);
			goto out;
		}
	}
	if (add_fragment_pads(pm, m, b, &pp) < 0)
		goto oom;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	struct rw_write_stats st;
	if (rw_write(b, &plan, output, &st, err, sizeof(err)) < 0) {
		cli_error("rewrite", "%s", err);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &tw);
	/* the predicted pathmap of OUT */
	char real[PATH_MAX];
	size_t pl = strlen(output) + 6;
	predpath = malloc(pl);
	if (!predpath)
		goto oom;
	snprintf(predpath, pl, "%s.icpp", output);
	if (!realpath(output, real) || da_predict_pathmap(pm, &pp, &pred, err, sizeof(err)) < 0 ||
	    place_clones(output, m, &pred, err, sizeof(err)) < 0 ||
	    rw_rename_module(pred, m, real, st.build_id, st.build_id_len) < 0 ||
	    pm_write(pred, predpath, err, sizeof(err)) < 0) {
		cli_error("rewrite", "%s written, but not its predicted pathmap: %s", output, err);
		goto out;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	if (!quiet) {
		struct pm_stats sb, sa;
		char chains[48] = "";
		if (st.chains)
			snprintf(chains, sizeof(chains), "; %u in chains", st.chains);
		fprintf(stderr, "icpp rewrite: %u functions padded (%u through entry wrappers), %u "
			"callsites wrapped, %u functions cloned (%u by dispatch%s), %u bytes patched, %" PRIu64
			" bytes of new code; %" PRIu64 " -> %" PRIu64 " bytes (+%.1f%%)\n", st.pads,
			st.entry_pads, st.wraps, st.clones, st.dispatched, chains, st.patched_bytes,
			st.tramp_bytes, st.in_size, st.out_size,
			st.in_size ? 100.0 * ((double)st.out_size - (double)st.in_size) / (double)st.in_size : 0);
		fprintf(stderr, "icpp rewrite: %.2f s: analysis %.2f s, %s %.2f s, writing %.2f s, "
			"prediction %.2f s\n", secs(t0, t1), secs(t0, ta), solved ? "solver" : "plan",
			secs(ta, ts), secs(ts, tw), secs(tw, t1));
		if (pm_stats(pm, &sb) == 0 && pm_stats(pred, &sa) == 0)
			fprintf(stderr, "icpp rewrite: precise paths %.1f%% -> %.1f%% predicted "
				"(weighted %.1f%% -> %.1f%%)%s\n", cli_pct(sb.precise_paths, sb.paths, 100.0),
				cli_pct(sa.precise_paths, sa.paths, 100.0), cli_pct(sb.precise_entries, sb.entries, 100.0),
				cli_pct(sa.precise_entries, sa.entries, 100.0), everything ? " [--everything]" : "");
		print_module_precision(pm, pred, m, prog, sb.paths);
		if (solved)
			fprintf(stderr, "icpp rewrite: max stack growth %.3fx (+%" PRId64 " bytes)\n",
				r.max_growth, r.max_growth_bytes);
		if (st.phdr_compact)
			fprintf(stderr, "icpp rewrite: note: %s's program headers need Linux >= 5.18 "
				"(its .bss is too large to place them the old way)\n", output);
		fprintf(stderr, "icpp rewrite: wrote %s and %s; check with: icpp verify %s -- ARGS\n",
			output, predpath, output);
	}
	rc = 0;
	goto out;
oom:
	cli_error("rewrite", "out of memory");
out:
	free(defmap);
	free(defout);
	free(predpath);
	rw_plan_free(&plan);
	rewrite_cap_free(&rwcap);
	da_pm_plan_free(&pp);
	da_result_free(&r);
	da_bridge_free(&br);
	pm_free(pm);
	pm_free(pred);
	rw_close(b);
	return rc;
}
