/* bench_disambig: the solver beside the thesis' random search on synthetic
 * path sets shaped like the thesis' Table 5.1, or on pathmaps.
 *
 *   bench_disambig [--profile NAME|all] [--scale X] [--seeds N] [--solvers LIST]
 *                  [--baseline-limit S] [--fixed F] [--threads T]
 *                  [--searches N [--each-search]] [--markdown] [--verbose]
 *   bench_disambig --nodes N --funcs F [--recursive R] ...
 *   bench_disambig --pathmap FILE [--pathmap FILE ...] (default capability, every
 *                  function cloneable: only the clone solver uses it, as icpp
 *                  rewrite clones what its analysis allows)
 *
 * Solvers: thesis (random ARR search, no stack cap), arr (ours, ARR only),
 * ours (ARR + wrapping), clone (ARR + wrapping + cloning), free (ours with
 * no stack penalty and no cap, as the thesis).  --budget sets our work
 * budget (node moves; default: the library's); --max-stack-growth X our
 * solvers' cap (default 1.25, as icpp plan; free has none), which also
 * bounds the heights a path can reach, so "% of reducible" is then what
 * the pigeonhole bound allows within X; --code-weight W the price of a byte
 * of new code (default the library's, 1/128 of a path); --hot-code-weight W
 * the price of a byte of hot code the clones add (default the library's);
 * --stack-weight S
 * the price of stack growth (default the library's, 0.2: per path of a
 * root, per unit of ln(growth); free ignores it); --bound B the largest
 * padding and wrap in bytes, for every solver, the thesis' search too
 * (default the capability's, 1008; 256 before session 23);
 * --max-recursion-growth X the cap on a recursion level's growth (default
 * none, as icpp plan; free ignores it); --searches N our solvers' independent
 * searches (default the library's, 4; run on the CPUs the process may use,
 * so that seconds are wall time); --each-search runs them one by one
 * instead and reports, for each k, the plans kept from the best of the
 * first k searches, pooled (the run's line is the best of all, the plan of
 * the library's da_solve; seconds the sum of the searches').  One line per run:
 * paths, precise before/after (distinct paths; % of reducible), weighted
 * precision, unique CIDs, max and geomean stack growth, wraps, clones, new
 * code (KB, and as a share of the code of the map's functions), seconds,
 * the largest growth of a recursion's level.
 * --verbose adds the solver's progress and, per run, what the plan leaves
 * (paths no plan makes precise; pairs by reason and kind, as icpp plan). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/disambig/synth.h"
#include "bench/disambig/thesis_search.h"
#include "disambig/from_pathmap.h"
#include "disambig/internal.h"

struct agg;
static void run_all(const char *name, const struct da_problem *p, uint32_t seed,
		    const char *solvers, double baseline_limit, bool md, struct agg *ag);
static uint64_t budget;
static double max_stack_growth;
static double max_recursion_growth;   /* --max-recursion-growth; 0: none */
static double code_weight = -1;   /* --code-weight; < 0: the library's */
static double hot_code_weight = -1;       /* --hot-code-weight; < 0: the library's */
static double dispatch_weight = -1;       /* --dispatch-weight; < 0: the library's */
static double wrap_weight = -1;           /* --wrap-weight; < 0: the library's */
static double stack_weight = -1;  /* --stack-weight; < 0: the library's */
static double precision = -1;     /* --precision PCT; < 0: the library's */
static int verbose;
static uint32_t searches;         /* --searches; 0: the library's */
static bool each_search;          /* --each-search */
#define NSOLVERS 5
static const char *names[NSOLVERS] = {"thesis", "arr", "ours", "clone", "free"};
static void summary(struct agg *ag, bool md);

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 100.0;
}

struct agg {
	double log_growth, log_geo;
	double sec;
	double reducible_pct_sum;
	uint32_t runs;
	uint64_t paths, precise, reducible;
};
/* --each-search: per solver, the best of the first k searches (k = 1..) */
static struct agg best_of[NSOLVERS][DA_MAX_SEARCHES];

static void agg_add(struct agg *ag, const struct da_result *r)
{
	uint64_t red = da_reducible_paths(r);
	ag->log_growth += log(r->max_growth);
	ag->log_geo += log(r->geomean_growth);
	ag->sec += r->stats.seconds;
	ag->reducible_pct_sum += pct(r->after.precise_paths, red);
	ag->runs++;
	ag->paths += r->after.paths;
	ag->precise += r->after.precise_paths;
	ag->reducible += red;
}

/* --verbose: what the plan leaves, as icpp plan's table (disambig.h
 * section 4): paths no plan makes precise, and pairs by reason and kind. */
static void print_left(const char *name, const char *solver, const struct da_result *r)
{
	static const enum da_diff kinds[] = {DA_DIFF_FUNCS, DA_DIFF_EDGES, DA_DIFF_ORDER,
					     DA_DIFF_NONE};
	fprintf(stderr, "%s %s: irreducible %llu, crowded %llu paths; pairs left "
		"(functions/edges/order/identical):", name, solver,
		(unsigned long long)r->irreducible_paths, (unsigned long long)r->crowded_paths);
	for (int l = 0; l < DA_LEFT_N; l++) {
		const uint64_t *n = r->left_by[l];
		if (n[0] + n[1] + n[2] + n[3] == 0)
			continue;
		fprintf(stderr, " %s", da_left_name(l));
		for (int k = 0; k < 4; k++)
			fprintf(stderr, "%c%llu", k ? '/' : ' ', (unsigned long long)n[kinds[k]]);
	}
	if (r->unsolved_priced)
		fprintf(stderr, "; priced out %llu (clones of %llu bytes or more)",
			(unsigned long long)r->unsolved_priced,
			(unsigned long long)r->priced_least_bytes);
	fputc('\n', stderr);
}

static void report(const char *name, const char *solver, const struct da_problem *p,
		   const struct da_result *r, bool md, struct agg *ag, const char *note)
{
	uint64_t red = da_reducible_paths(r);
	double red_pct = pct(r->after.precise_paths, red);
	if (verbose)
		print_left(name, solver, r);
	uint64_t code = 0;      /* the functions' own code, that clones copy */
	for (uint32_t f = 0; f < p->nfuncs; f++)
		code += p->funcs[f].code_bytes;
	double v[] = {pct(r->before.precise_paths, r->before.paths),
		      pct(r->after.precise_paths, r->after.paths), red_pct,
		      pct(r->before.precise_weight, r->before.weight),
		      pct(r->after.precise_weight, r->after.weight),
		      pct(r->after.unique_cids, r->after.cids), r->max_growth, r->geomean_growth};
	/* the weight of the functions that test at entry: with entries as
	 * weights, the share of the calls that run a dispatch */
	uint32_t ndisp;
	double disp = 100 * da_dispatch_share(p, &r->plan, &ndisp);
	if (md)
		printf("| %s | %s | %llu | %.1f | %.1f | %.2f | %.1f | %.1f | %.1f | %.3f | %.3f | %u | %u | %.0f | %.1f | %.2f | %.2f | %.1f |%s\n",
		       name, solver, (unsigned long long)r->after.paths, v[0], v[1], v[2], v[3], v[4],
		       v[5], v[6], v[7], r->nwraps, r->plan.nclones, (double)r->code_bytes / 1024,
		       pct(r->code_bytes, code), r->stats.seconds, r->recursion_growth, disp,
		       note ? note : "");
	else
		printf("%-11s %-6s paths %7llu precise %5.1f%% -> %5.1f%% (%6.2f%% of reducible) weight %5.1f%% -> %5.1f%% cids-unique %5.1f%% growth max %.3f geo %.3f wraps %u clones %u code %.0f KB (%.1f%%) hot %.1f KB %.2fs recursion %.2f dispatch %u functions %.1f%%%s\n",
		       name, solver, (unsigned long long)r->after.paths, v[0], v[1], v[2], v[3], v[4],
		       v[5], v[6], v[7], r->nwraps, r->plan.nclones, (double)r->code_bytes / 1024,
		       pct(r->code_bytes, code), (double)r->hot_code_bytes / 1024, r->stats.seconds,
		       r->recursion_growth, ndisp, disp,
		       note ? note : "");
	fflush(stdout);
	agg_add(ag, r);
}

int main(int argc, char **argv)
{
	const char *profile = "all", *solvers = "thesis,arr,ours";
	double scale = 1, baseline_limit = 120, fixed = 0;
	uint32_t seeds = 1, threads = 0, nodes = 0, funcs = 0, bound = DA_DEFAULT_BOUND;
	double recursive = 0.05;
	bool md = false, no_dispatch = false, no_tag = false, any_module = false;
	const char *maps[64];
	int nmaps = 0;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		if (!strcmp(a, "--profile") && v)
			profile = argv[++i];
		else if (!strcmp(a, "--scale") && v)
			scale = atof(argv[++i]);
		else if (!strcmp(a, "--seeds") && v)
			seeds = atoi(argv[++i]);
		else if (!strcmp(a, "--solvers") && v)
			solvers = argv[++i];
		else if (!strcmp(a, "--baseline-limit") && v)
			baseline_limit = atof(argv[++i]);
		else if (!strcmp(a, "--fixed") && v)
			fixed = atof(argv[++i]);
		else if (!strcmp(a, "--threads") && v)
			threads = atoi(argv[++i]);
		else if (!strcmp(a, "--nodes") && v)
			nodes = atoi(argv[++i]);
		else if (!strcmp(a, "--funcs") && v)
			funcs = atoi(argv[++i]);
		else if (!strcmp(a, "--recursive") && v)
			recursive = atof(argv[++i]);
		else if (!strcmp(a, "--pathmap") && v && nmaps < 64)
			maps[nmaps++] = argv[++i];
		else if (!strcmp(a, "--bound") && v)
			bound = atoi(argv[++i]);
		else if (!strcmp(a, "--budget") && v)
			budget = strtoull(argv[++i], NULL, 10);
		else if (!strcmp(a, "--code-weight") && v)
			code_weight = atof(argv[++i]);
		else if (!strcmp(a, "--hot-code-weight") && v)
			hot_code_weight = atof(argv[++i]);
		else if (!strcmp(a, "--dispatch-weight") && v)
			dispatch_weight = atof(argv[++i]);
		else if (!strcmp(a, "--wrap-weight") && v)
			wrap_weight = atof(argv[++i]);
		else if (!strcmp(a, "--stack-weight") && v)
			stack_weight = atof(argv[++i]);
		else if (!strcmp(a, "--precision") && v)
			precision = atof(argv[++i]);
		else if (!strcmp(a, "--max-recursion-growth") && v)
			max_recursion_growth = atof(argv[++i]);
		else if (!strcmp(a, "--max-stack-growth") && v)
			max_stack_growth = atof(argv[++i]);
		else if (!strcmp(a, "--markdown"))
			md = true;
		else if (!strcmp(a, "--no-dispatch"))
			no_dispatch = true;
		else if (!strcmp(a, "--no-tag"))
			no_tag = true;
		else if (!strcmp(a, "--any-module"))
			any_module = true;
		else if (!strcmp(a, "--searches") && v)
			searches = (uint32_t)atoi(argv[++i]);
		else if (!strcmp(a, "--each-search"))
			each_search = true;
		else if (!strcmp(a, "--verbose"))
			verbose = 1;
		else {
			fprintf(stderr, "usage: bench_disambig [--profile NAME|all] [--scale X] [--seeds N] "
					"[--solvers thesis,arr,ours,clone,free] [--budget N] [--bound B] [--max-stack-growth X] [--max-recursion-growth X] [--code-weight W] [--hot-code-weight W] [--dispatch-weight X] [--wrap-weight X] [--stack-weight S] [--precision PCT] [--baseline-limit S] [--fixed F] "
					"[--threads T] [--searches N [--each-search]] [--nodes N --funcs F [--recursive R]] [--no-dispatch] [--no-tag] [--any-module] [--markdown] [--verbose]\n");
			return 2;
		}
	}
	if (bound < DA_ALIGN || bound > DA_MAX_STEPS * DA_ALIGN || bound % DA_ALIGN) {
		fprintf(stderr, "bench_disambig: --bound wants a multiple of 16 from 16 to %d\n",
			DA_MAX_STEPS * DA_ALIGN);
		return 2;
	}
	if (max_recursion_growth != 0 && !(max_recursion_growth >= 1)) {
		fprintf(stderr, "bench_disambig: --max-recursion-growth wants a factor of at least 1, or 0\n");
		return 2;
	}
	struct synth_profile custom[2] = {{"custom", {.nodes = nodes, .nfuncs = funcs, .fanout = 3.5,
						      .shared = 0.35, .recursive = recursive}},
					  {NULL, {0}}};
	const struct synth_profile *profs = nodes ? custom : synth_profiles;
	if (md)
		printf("| program | solver | paths | precise before %% | after %% | %% of reducible | weight before %% | after %% | CIDs unique %% | growth max | growth geomean | wraps | clones | new code KB | code +%% | seconds | recursion growth | dispatch %% of weight |\n"
		       "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	struct agg ag[NSOLVERS] = {{0}};
	for (const struct synth_profile *pr = profs; pr->name; pr++) {
		if (nmaps && !nodes && !strcmp(profile, "all"))
			break;          /* pathmaps only, unless a profile is named */
		if (strcmp(profile, "all") && strcmp(profile, pr->name))
			continue;
		for (uint32_t seed = 1; seed <= seeds; seed++) {
			struct synth_params sp = pr->params;
			sp.nodes = (uint32_t)(sp.nodes * scale);
			if (sp.nodes < 8)
				sp.nodes = 8;
			sp.nfuncs = (uint32_t)(sp.nfuncs * (scale < 1 ? sqrt(scale) : 1));
			sp.seed = seed;
			sp.threads = threads;
			sp.fixed_frac = fixed;
			sp.pad_bound = bound;
			synth_defaults(&sp);
			struct da_problem *p = synth_problem(&sp);
			if (!p) {
				fprintf(stderr, "out of memory\n");
				return 1;
			}
			run_all(pr->name, p, seed, solvers, baseline_limit, md, ag);
			da_problem_free(p);
		}
	}
	for (int i = 0; i < nmaps; i++) {
		struct pathmap *pm;
		char err[512];
		if (pm_read(maps[i], &pm, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		struct da_capability cap;
		da_capability_default(&cap);
		cap.clone = true;
		cap.dispatch = !no_dispatch;
		cap.tag = !no_tag;
		cap.pad_bound = cap.wrap_bound = bound;
		struct da_bridge br;
		if (da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, &br, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s: %s\n", maps[i], err);
			return 1;
		}
		/* what a dispatch testing return addresses of any module would give:
		 * the rewriter cannot yet (docs/bench-disambig.md, session 16) */
		if (any_module) {
			for (uint32_t f = 0; f < br.prob->nfuncs; f++)
				br.prob->funcs[f].module = 0;
			for (uint32_t c = 0; c < br.prob->ncallsites; c++)
				br.prob->callsites[c].module = 0;
		}
		const char *base = strrchr(maps[i], '/') ? strrchr(maps[i], '/') + 1 : maps[i];
		for (uint32_t seed = 1; seed <= seeds; seed++)
			run_all(base, br.prob, seed, solvers, baseline_limit, md, ag);
		da_bridge_free(&br);
		pm_free(pm);
	}
	summary(ag, md);
	return 0;
}

/* --each-search: the searches of one solve run one by one (da_search_seed),
 * the best of the first k (by objective, the earliest on a tie: as
 * da_solve keeps) added to best_of[solver][k - 1]; r is the best of all,
 * the plan da_solve gives. */
static int solve_each(const struct da_problem *p, const struct da_options *o, int solver,
		      struct da_result *r, char *err, size_t errlen)
{
	uint32_t n = o->searches ? o->searches : DA_DEFAULT_SEARCHES, best = 0;
	if (n > DA_MAX_SEARCHES)
		return errmsg(err, errlen, "at most %d searches (got %u)", DA_MAX_SEARCHES, n);
	struct da_result *each = calloc(n, sizeof(*each));
	if (!each)
		return errmsg(err, errlen, "out of memory");
	struct da_options oj = *o;
	oj.searches = 1;
	int rc = 0;
	uint32_t j;
	for (j = 0; j < n; j++) {
		oj.seed = da_search_seed(o->seed, j);
		if ((rc = da_solve(p, &oj, &each[j], err, errlen)) < 0)
			break;
		if (each[j].stats.objective > each[best].stats.objective + 1e-9)
			best = j;
		agg_add(&best_of[solver][j], &each[best]);
	}
	for (uint32_t i = 0; i < j; i++) {
		if (!rc && i == best)
			*r = each[i];
		else
			da_result_free(&each[i]);
	}
	free(each);
	return rc;
}

static void run_all(const char *name, const struct da_problem *p, uint32_t seed,
		    const char *solvers, double baseline_limit, bool md, struct agg *ag)
{
	for (int k = 0; k < NSOLVERS; k++) {
		if (!strstr(solvers, names[k]))
			continue;
		struct da_result r;
		char err[256], note[64] = "";
		int rc;
		if (k == 0) {
			struct thesis_params tp = {seed, 0.97, 2000, 100, baseline_limit};
			struct thesis_stats st;
			rc = thesis_search(p, &tp, &r, &st, err, sizeof(err));
			if (!rc && st.timed_out)
				snprintf(note, sizeof(note), " (stopped at %.0f s)", baseline_limit);
		} else {
			struct da_options o;
			da_options_default(&o);
			o.seed = seed;
			o.allow_wrap = k >= 2;
			o.allow_clone = k == 3;
			o.budget = budget;
			if (code_weight >= 0)
				o.code_weight = code_weight;
			if (hot_code_weight >= 0)
				o.hot_code_weight = hot_code_weight;
			if (dispatch_weight >= 0)
				o.dispatch_weight = dispatch_weight;
			if (wrap_weight >= 0)
				o.wrap_weight = wrap_weight;
			if (stack_weight >= 0)
				o.stack_weight = stack_weight;
			if (precision >= 0)
				o.precision_target = precision / 100;
			o.verbose = verbose;
			if (searches)
				o.searches = searches;
			if (max_stack_growth > 0)
				o.max_stack_growth = max_stack_growth;
			o.max_recursion_growth = max_recursion_growth;
			if (k == 4) {
				o.stack_weight = 0;
				o.max_stack_growth = 0;
				o.max_recursion_growth = 0;
			}
			rc = each_search ? solve_each(p, &o, k, &r, err, sizeof(err))
					 : da_solve(p, &o, &r, err, sizeof(err));
			if (!rc && r.stats.budget_exhausted)
				snprintf(note, sizeof(note), " (budget)");
		}
		if (rc) {
			fprintf(stderr, "%s %s: %s\n", name, names[k], err);
			continue;
		}
		report(name, names[k], p, &r, md, &ag[k], note);
		da_result_free(&r);
	}
}

static void summary(struct agg *ag, bool md)
{
	for (int k = 0; k < NSOLVERS; k++) {
		for (uint32_t j = 0; j < DA_MAX_SEARCHES && best_of[k][j].runs; j++) {
			const struct agg *b = &best_of[k][j];
			printf("%s%-6s best of %u search%s: %.2f%% of reducible (pooled); growth geomean of max %.3f\n",
			       md ? "\n" : "", names[k], j + 1, j ? "es" : "", pct(b->precise, b->reducible),
			       exp(b->log_growth / b->runs));
		}
		if (!ag[k].runs)
			continue;
		printf("%s%-6s runs %u: precise %.2f%% of paths, %.2f%% of reducible (pooled), mean per program %.2f%%; growth geomean of max %.3f, of per-root geomean %.3f; %.1f s total%s\n",
		       md ? "\n" : "", names[k], ag[k].runs, pct(ag[k].precise, ag[k].paths),
		       pct(ag[k].precise, ag[k].reducible), ag[k].reducible_pct_sum / ag[k].runs,
		       exp(ag[k].log_growth / ag[k].runs), exp(ag[k].log_geo / ag[k].runs), ag[k].sec,
		       md ? "\n" : "");
	}
}
