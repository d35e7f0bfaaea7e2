/* icpp plan MAP: choose paddings (and wraps, clones) that make CIDs unique at
 * the least stack cost, write the plan, print before and after
 * (disambig/disambig.h, disambig/from_pathmap.h, docs/plan-format.md). */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/binary.h"
#include "cli/cmds.h"
#include "cli/rewrite_cap.h"
#include "cli/sample_weights.h"
#include "disambig/disambig.h"
#include "disambig/from_pathmap.h"
#include "pathmap/pathmap.h"

static const char usage_text[] =
	"usage: icpp plan [-o PLAN] [--binary PROG]... [--max-stack-growth X] [--no-wrap]\n"
	"                 [--no-clone] [--seed N] [options] MAP\n"
	"\n"
	"Choose how to change the program so that every call path of the pathmap MAP\n"
	"gets a CID (function, stack height) of its own: frame paddings (ARR), callsite\n"
	"wrappers and function clones, each a multiple of 16 bytes, at the least stack\n"
	"cost.  Writes the plan (docs/plan-format.md) and prints precision before and\n"
	"after, the stack growth, and the collisions that remain with the reason.\n"
	"With --binary PROG, the program or library of MAP to rewrite, the plan changes\n"
	"only PROG and only what the rewriter's analysis of it allows, clones included:\n"
	"the plan icpp rewrite PROG would apply (icpp rewrite PROG --plan PLAN).\n"
	"Name each library to rewrite with PROG by another --binary: one plan changes\n"
	"them all (icpp rewrite PROG --lib LIB --plan PLAN).\n"
	"Without it, every function may take up to 1008 bytes of padding and every\n"
	"callsite a wrapper of up to 1008 bytes, and nothing is cloned unless --clone.\n"
	"\n"
	"options:\n"
	"  -o PLAN                write the plan to PLAN (default: MAP with .plan)\n"
	"  --binary PROG          plan what the rewriter can do to PROG (see above);\n"
	"                         repeat for libraries rewritten with it\n"
	"  --max-stack-growth X   no thread's max stack may grow more than X times\n"
	"                         (default 1.25; 0: no cap)\n"
	"  --max-recursion-growth X\n"
	"                         no level of a recursion training saw may grow more\n"
	"                         than X times (default 0: no cap; the plan reports the\n"
	"                         largest: a recursion deeper than training's takes\n"
	"                         that much more stack a level)\n"
	"  --code-per-path BYTES  new code (clones, wrappers) worth one path made\n"
	"                         precise (default " STR(DA_DEFAULT_CODE_PER_PATH) "; 0: code is free): more buys\n"
	"                         more precise paths with more code\n"
	"  --hot-code-per-path BYTES\n"
	"                         hot code that clones add worth one path made precise:\n"
	"                         a clone (or original) whose frames take 0.01% of the\n"
	"                         entries or more adds all its code to what the\n"
	"                         instruction cache holds, a colder one its share\n"
	"                         (default " STR(DA_DEFAULT_HOT_CODE_PER_PATH) "; 0: free)\n"
	"  --no-wrap              frame padding only, no callsite wrappers\n"
	"  --no-clone             no clones (even with --clone)\n"
	"  --clone                assume every function may be cloned (without --binary),\n"
	"                         for direct calls and, by a test of the return address\n"
	"                         at its entry, for any other call from its own module\n"
	"                         or, by a tag the calling module carries (rewriting\n"
	"                         both), from another\n"
	"  --no-dispatch          clones take direct calls only\n"
	"  --no-promote           indirect calls take clones by a dispatch only, not by\n"
	"                         a stub that compares their target (with --binary)\n"
	"  --no-tail              frames after tail jumps take clones by a dispatch only,\n"
	"                         not by the jumps pointed at them (with --binary)\n"
	"  --dispatch-weight X    the run time of clones by dispatch: a function that takes\n"
	"                         S% of the weight (training's entries) and tests K\n"
	"                         clones at entry costs X*S%*(1+log2 K) of the paths\n"
	"                         (default " STR(DA_DEFAULT_DISPATCH_WEIGHT) "; 0: free)\n"
	"  --wrap-weight X        the run time of trampolines: S% of the weight entering\n"
	"                         frames by a wrapped call or an entry wrapper costs X*S%\n"
	"                         of the paths, a wrapped call that copies B bytes of stack\n"
	"                         arguments (1+B/32) times that (default "
	STR(DA_DEFAULT_WRAP_WEIGHT) "; 0: free)\n"
	"  --precision PCT        where the plan at these prices leaves fewer than PCT%\n"
	"                         of the reducible paths precise, go on from it with the\n"
	"                         prices of run time, code and stack lowered " STR(DA_TOPUP_FACTOR) "x\n"
	"                         a round, up to " STR(DA_TOPUP_ROUNDS) " rounds, until it does (default " STR(DA_DEFAULT_PRECISION_PCT) ";\n"
	"                         0: the prices as given)\n"
	"  --seed N               the search's random seed (default 1); same seed, same plan\n"
	"  --searches N           independent searches, the best plan kept (default " STR(DA_DEFAULT_SEARCHES) "; run\n"
	"                         at once on the CPUs this process may use, the plan the\n"
	"                         same however many run at once)\n"
	"  --pad-bound B          largest padding per function, bytes (default 1008)\n"
	"  --wrap-bound B         largest wrapper per callsite, bytes (default 1008)\n"
	"  --module SUFFIX        change only modules whose path ends with SUFFIX\n"
	"  --callsites            a path is a sequence of callsites (default: functions)\n"
	"  --budget N             work limit of each search in node moves (default " STR(DA_DEFAULT_BUDGET_M) "M)\n"
	"  --samples FILE         weigh paths by the samples of FILE (icpp record of the\n"
	"                         program MAP was trained on) instead of training entries\n"
	"  --predict OUT          also write the predicted pathmap of the changed program\n"
	"  --evaluate PLAN        report on an existing plan instead of making one\n"
	"  --top N                list the N heaviest collisions left (default 5)\n"
	"  -q, --quiet            no progress on stderr\n"
	"  -h, --help             show this help\n"
	"\n"
	"example:\n"
	"  icpp plan prog.icpp -o prog.plan --max-stack-growth 1.1\n";

/* What the problem's weights count: training entries, or samples
 * (--samples, SAMPLE_WEIGHT_SCALE per sample). */
struct weights {
	const char *unit;
	uint64_t scale;
};

static void degree_table(const struct da_metrics *b, const struct da_metrics *a,
			 const char *weight_unit)
{
	printf("\ndegree of ambiguity   before: paths  %%   %7s %%   after: paths  %%   %7s %%\n",
	       weight_unit, weight_unit);
	for (int i = 0; i < DA_DEGREE_BUCKETS; i++) {
		if (!b->degree_paths[i] && !a->degree_paths[i] && !b->degree_weight[i] &&
		    !a->degree_weight[i])
			continue;
		char deg[8];
		snprintf(deg, sizeof(deg), i == DA_DEGREE_BUCKETS - 1 ? ">%d" : "%d",
			 i == DA_DEGREE_BUCKETS - 1 ? i : i + 1);
		printf("  %6s %19" PRIu64 " %5.1f %9.1f %16" PRIu64 " %5.1f %9.1f\n", deg,
		       b->degree_paths[i], cli_pct(b->degree_paths[i], b->paths, 100.0),
		       cli_pct(b->degree_weight[i], b->weight, 100.0), a->degree_paths[i],
		       cli_pct(a->degree_paths[i], a->paths, 100.0), cli_pct(a->degree_weight[i], a->weight, 100.0));
	}
}

/* May the solver clone any function of p? */
static bool any_cloneable(const struct da_problem *p)
{
	for (uint32_t f = 0; f < p->nfuncs; f++)
		if (p->funcs[f].cloneable)
			return true;
	return false;
}

/* code_weight: the solver's price of new code when it could clone (0: it
 * could not, or code was free) */
/* Precision before and after, and the degrees. */
static void report_precision(const struct da_problem *p, const struct da_result *r,
			     struct weights w)
{
	const struct da_metrics *b = &r->before, *a = &r->after;
	printf("%-34s %12s %12s\n", "", "before", "after");
	printf("%-34s %12" PRIu64 " %12" PRIu64 "\n", "paths (distinct function sequences)",
	       b->paths, a->paths);
	if (p->unit == DA_UNIT_CALLSITES)
		printf("  (paths are callsite sequences: --callsites)\n");
	printf("%-34s %12" PRIu64 " %12" PRIu64 "\n", "CIDs", b->cids, a->cids);
	printf("%-34s %11.1f%% %11.1f%%\n", "precise paths", cli_pct(b->precise_paths, b->paths, 100.0),
	       cli_pct(a->precise_paths, a->paths, 100.0));
	/* what some plan within the capability and the cap could make precise
	 * (disambig.h section 4): the solver's target */
	uint64_t reducible = da_reducible_paths(r);
	printf("%-34s %11.1f%% %11.1f%%\n", "  of the reducible paths",
	       cli_pct(b->precise_paths, reducible, 100.0), cli_pct(a->precise_paths, reducible, 100.0));
	char wlabel[64];
	snprintf(wlabel, sizeof(wlabel), "precise, weighted by %s", w.unit);
	printf("%-34s %11.1f%% %11.1f%%\n", wlabel,
	       cli_pct(b->precise_weight, b->weight, 100.0), cli_pct(a->precise_weight, a->weight, 100.0));
	printf("%-34s %12" PRIu32 " %12" PRIu32 "\n", "worst degree", b->max_degree, a->max_degree);
	degree_table(b, a, w.unit);
}

/* Stack growth per thread root, and the recursion that grows most. */
static void report_stack(struct pathmap *pm, const struct da_result *r)
{
	char label[1024];
	printf("\nstack: max growth %.3fx (%" PRId64 " bytes), geomean over %" PRIu32
	       " thread roots %.3fx\n", r->max_growth, r->max_growth_bytes, r->nroots,
	       r->geomean_growth);
	for (uint32_t i = 0; i < r->nroots && i < 8; i++) {
		const struct da_root_cost *rc = &r->roots[i];
		if (rc->new_max == rc->old_max && r->nroots > 3)
			continue;
		printf("  %-40s %8" PRId64 " -> %8" PRId64 " bytes (%.3fx)\n",
		       pm_function_label(pm, pm->nodes[rc->node].func, bin_demangle, label, sizeof(label)),
		       rc->old_max, rc->new_max, rc->growth);
	}
	if (r->recursion_node != DA_NONE)
		printf("  recursion: a level of %s grows %.2fx (%" PRId64 " -> %" PRId64 " bytes),"
		       " and so does every level deeper than training's (--max-recursion-growth)\n",
		       pm_function_label(pm, pm->nodes[r->recursion_node].func, bin_demangle, label,
					 sizeof(label)),
		       r->recursion_growth, r->recursion_old, r->recursion_new);
}

/* What the plan changes, and what the search did. */
static void report_plan(const struct pathmap *pm, const struct da_problem *p,
			const struct da_result *r, const struct da_pm_plan *pp, bool solved,
			struct weights w, double code_weight, double target)
{
	uint32_t chains = 0;
	for (uint32_t k = 0; k < pp->nclones; k++)
		chains += pp->clones[k].parent != DA_NONE;
	printf("plan: %" PRIu32 " functions padded, %" PRIu32 " callsites wrapped, %" PRIu32
	       " clones", pp->npads, r->nwraps, pp->nclones);
	if (chains)
		printf(" (%" PRIu32 " in chains)", chains);
	printf("; %" PRIu64 " bytes of new code\n", r->code_bytes);
	cli_print_run_time(stdout, "  ", pm, p, r);
	if (solved) {
		printf("solver: %.2f s, %" PRIu32 " search%s (the plan of search %" PRIu32 "), %" PRIu64
		       " moves tried, %" PRIu64 " kept\n", r->stats.seconds, r->stats.searches,
		       r->stats.searches > 1 ? "es" : "", r->stats.best_search + 1,
		       r->stats.evaluations, r->stats.accepted);
		if (r->stats.phases_cut)
			printf("  %" PRIu32 " search phase%s stopped at %s share of the work budget: "
			       "--budget (default %dM) for more\n", r->stats.phases_cut,
			       r->stats.phases_cut > 1 ? "s" : "", r->stats.phases_cut > 1 ? "their" : "its",
			       DA_DEFAULT_BUDGET_M);
		cli_print_topup(stdout, "  ", r, target);
		uint64_t unsolved = 0;
		for (int d = 0; d < 4; d++)
			unsolved += r->left_by[DA_LEFT_UNSOLVED][d] + r->left_by[DA_LEFT_CROWDED][d];
		if (unsolved && code_weight > 0)
			printf("  clones were priced at %.0f bytes of new code per path made precise: "
			       "--code-per-path (more buys more)\n", 1.0 / code_weight);
	}
}

/* The CID function of a leftover: an original function, or "clone K of F"
 * (its fragment: "clone K of F's fragment"), K as in the plan file. */
static const char *leftover_label(struct pathmap *pm, const struct da_problem *p,
				  const struct da_result *r, uint32_t inst, char *buf, size_t len)
{
	if (inst < p->nfuncs)
		return pm_function_label(pm, inst, bin_demangle, buf, len);
	uint32_t k = inst - p->nfuncs;
	bool fragment = k >= r->plan.nclones;
	if (fragment)
		k -= r->plan.nclones;
	char name[768];
	pm_function_label(pm, r->plan.clones[k].func, bin_demangle, name, sizeof(name));
	snprintf(buf, len, "clone %" PRIu32 " of %s%s", k, name, fragment ? "'s fragment" : "");
	return buf;
}

/* The collisions left, by reason and structure, and the top heaviest. */
static void report_left(struct pathmap *pm, const struct da_problem *p, const struct da_result *r,
			long top, struct weights w, double code_weight)
{
	char label[1024];
	uint64_t total = 0;
	for (int l = 0; l < DA_LEFT_N; l++)
		for (int d = 0; d < 4; d++)
			total += r->left_by[l][d];
	if (!total) {
		printf("\nno ambiguous CIDs left\n");
		return;
	}
	printf("\ncollisions left (pairs of paths at one CID): %" PRIu64 "\n", total);
	printf("  %-10s %10s %10s %10s %10s\n", "reason", "functions", "edges", "order", "identical");
	for (int l = 1; l < DA_LEFT_N; l++) {
		uint64_t row = 0;
		for (int d = 0; d < 4; d++)
			row += r->left_by[l][d];
		if (!row)
			continue;
		printf("  %-10s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %10" PRIu64 "\n", da_left_name(l),
		       r->left_by[l][DA_DIFF_FUNCS], r->left_by[l][DA_DIFF_EDGES],
		       r->left_by[l][DA_DIFF_ORDER], r->left_by[l][DA_DIFF_NONE]);
	}
	printf("  (functions/edges/order: what differs between the two paths, so ARR/wrapping/\n"
	       "   cloning could separate them; unsolved: no plan within the bounds and the\n"
	       "   stack cap did; blocked: the functions and callsites that differ may not change;\n"
	       "   disabled: only a mechanism switched off would;\n"
	       "   crowded: unsolved, at a function with more paths than heights they can reach)\n");
	if (r->crowded_paths)
		printf("  %" PRIu64 " paths stay ambiguous under any plan within the paddings and the\n"
		       "  stack cap: their functions have fewer reachable heights than paths\n",
		       r->crowded_paths);
	if (r->unsolved_elsewhere > r->unsolved_no_dispatch)
		printf("  %" PRIu64 " of the unsolved are at functions both paths enter by a call from\n"
		       "  another module that no clone of the function may take: that module is\n"
		       "  not rewritten with it (--binary), or the call cannot be tagged (icpp\n"
		       "  rewrite --explain marks the calls that can \"tag ok\")\n",
		       r->unsolved_elsewhere - r->unsolved_no_dispatch);
	if (r->unsolved_no_dispatch)
		printf("  %" PRIu64 " of the unsolved are at functions both paths enter by a call from\n"
		       "  another module, which cannot take a clone by a test at their entry\n"
		       "  (icpp rewrite --explain says why)\n",
		       r->unsolved_no_dispatch);
	if (r->unsolved_priced && code_weight > 0)
		printf("  %" PRIu64 " of the unsolved only clones cure, at %" PRIu64 " bytes of new code\n"
		       "  or more each: more than the paths at their CID are worth at %.0f bytes a\n"
		       "  path (--code-per-path; one clone may serve several)\n",
		       r->unsolved_priced, r->priced_least_bytes, 1.0 / code_weight);
	for (uint32_t i = 0; i < r->nleft && i < (uint32_t)top; i++) {
		const struct da_leftover *l = &r->left[i];
		const char *fname = leftover_label(pm, p, r, l->inst, label, sizeof(label));
		char least[64] = "";
		if (l->why.cure == DA_CURE_CLONE)
			snprintf(least, sizeof(least), ", %" PRIu64 " bytes of clones or more",
				 l->why.clone_bytes);
		printf("\n  %s@%" PRId64 ": degree %" PRIu32 ", %" PRIu64 " %s, %s (%s differ, cure %s%s)\n",
		       fname, l->height, l->degree, l->weight / w.scale, w.unit,
		       da_left_name(l->why.left),
		       da_diff_name(l->why.diff), da_cure_name(l->why.cure), least);
		printf("    ");
		pm_print_path(stdout, pm, l->a, " > ", 0, bin_demangle);
		printf("\n    ");
		pm_print_path(stdout, pm, l->b, " > ", 0, bin_demangle);
		putchar('\n');
	}
}

static void report(struct pathmap *pm, const struct da_problem *p, const struct da_result *r,
		   const struct da_pm_plan *pp, long top, bool solved, struct weights w,
		   double code_weight, double target)
{
	report_precision(p, r, w);
	report_stack(pm, r);
	report_plan(pm, p, r, pp, solved, w, code_weight, target);
	report_left(pm, p, r, top, w, code_weight);
}

static char *default_output(const char *map)
{
	size_t n = strlen(map);
	char *out = malloc(n + 8);
	if (!out)
		return NULL;
	strcpy(out, map);
	if (n > 5 && !strcmp(out + n - 5, ".icpp"))
		out[n - 5] = 0;
	strcat(out, ".plan");
	return out;
}

/* The capability of --binary PROG...: what icpp rewrite PROG --lib ... may
 * change.  0, or -1 after one line. */
static int plan_for_binaries(const char *const *progs, uint32_t n, const char *map,
			     const struct pathmap *pm, bool quiet, struct rw_binary **b,
			     struct rewrite_cap *rwcap, struct da_capability *cap)
{
	char err[1024];
	for (uint32_t i = 0; i < n; i++) {
		b[i] = rw_open(progs[i], err, sizeof(err));
		if (!b[i]) {
			cli_error("plan", "%s", err);
			return -1;
		}
	}
	return rewrite_cap_init(rwcap, b, progs, n, pm, map, "plan", quiet, cap);
}

/* What the command line asks for. */
struct plan_args {
	struct da_options o;
	struct da_capability cap;
	const char *map, *output, *predict, *evaluate, *samples;
	const char *binaries[REWRITE_MAX_BINARIES];
	uint32_t nbin;
	bool quiet, callsites;
	long top;
};

/* -1 to go on; else the exit status (0 after --help, 2 after one line). */
static int parse_args(int argc, char **argv, struct plan_args *a)
{
	static const struct option opts[] = {
		{"max-stack-growth", required_argument, NULL, 'g'},
		{"max-recursion-growth", required_argument, NULL, 'R'},
		{"code-per-path", required_argument, NULL, 'k'},
		{"hot-code-per-path", required_argument, NULL, 'K'},
		{"binary", required_argument, NULL, 'B'},
		{"no-wrap", no_argument, NULL, 'W'},
		{"no-clone", no_argument, NULL, 'C'},
		{"clone", no_argument, NULL, 'c'},
		{"no-dispatch", no_argument, NULL, 'D'},
		{"no-promote", no_argument, NULL, 'U'},
		{"no-tail", no_argument, NULL, 'T'},
		{"dispatch-weight", required_argument, NULL, 'X'},
		{"wrap-weight", required_argument, NULL, 'Y'},
		{"precision", required_argument, NULL, 'A'},
		{"seed", required_argument, NULL, 's'},
		{"searches", required_argument, NULL, 'N'},
		{"pad-bound", required_argument, NULL, 'p'},
		{"wrap-bound", required_argument, NULL, 'w'},
		{"module", required_argument, NULL, 'm'},
		{"callsites", no_argument, NULL, 'S'},
		{"budget", required_argument, NULL, 'b'},
		{"predict", required_argument, NULL, 'P'},
		{"samples", required_argument, NULL, 'i'},
		{"evaluate", required_argument, NULL, 'E'},
		{"top", required_argument, NULL, 't'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct da_options *o = &a->o;
	struct da_capability *cap = &a->cap;
	bool no_clone = false, no_dispatch = false;
	uint64_t v;
	char *end;
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			a->output = optarg;
			break;
		case 'B':
			if (a->nbin == REWRITE_MAX_BINARIES) {
				cli_error("plan", "at most %d --binary: name the libraries whose paths matter "
					  "(icpp stats MAP --module LIB shows a library's)",
					  REWRITE_MAX_BINARIES);
				return 2;
			}
			a->binaries[a->nbin++] = optarg;
			break;
		case 'g':
			if (!cli_parse_growth("plan", "max-stack-growth", optarg, &o->max_stack_growth))
				return 2;
			break;
		case 'R':
			if (!cli_parse_growth("plan", "max-recursion-growth", optarg,
					      &o->max_recursion_growth))
				return 2;
			break;
		case 'k':
			if (!cli_parse_code_per_path("plan", "--code-per-path", optarg,
						     &o->code_weight))
				return 2;
			break;
		case 'K':
			if (!cli_parse_code_per_path("plan", "--hot-code-per-path", optarg,
						     &o->hot_code_weight))
				return 2;
			break;
		case 'X':
			if (!cli_parse_run_weight("plan", "--dispatch-weight", optarg,
						  &o->dispatch_weight))
				return 2;
			break;
		case 'Y':
			if (!cli_parse_run_weight("plan", "--wrap-weight", optarg, &o->wrap_weight))
				return 2;
			break;
		case 'A':
			if (!cli_parse_precision("plan", optarg, &o->precision_target))
				return 2;
			break;
		case 'W':
			o->allow_wrap = false;
			break;
		case 'C':
			no_clone = true;
			break;
		case 'c':
			cap->clone = true;
			break;
		case 'D':
			no_dispatch = true;
			break;
		case 'U':
			cap->promote = false;
			break;
		case 'T':
			cap->tail = false;
			break;
		case 's':
			if (!cli_parse_u64(optarg, &o->seed, UINT64_MAX)) {
				cli_error("plan", "--seed wants a number, not '%s'", optarg);
				return 2;
			}
			break;
		case 'N':
			if (!cli_parse_searches("plan", optarg, &o->searches))
				return 2;
			break;
		case 'p':
		case 'w':
			if (!cli_parse_u64(optarg, &v, DA_MAX_STEPS * DA_ALIGN) || v % DA_ALIGN) {
				cli_error("plan", "--%s wants a multiple of 16 from 0 to %d, not '%s'",
					  c == 'p' ? "pad-bound" : "wrap-bound", DA_MAX_STEPS * DA_ALIGN, optarg);
				return 2;
			}
			*(c == 'p' ? &cap->pad_bound : &cap->wrap_bound) = (uint32_t)v;
			break;
		case 'm':
			cap->module = optarg;
			break;
		case 'S':
			a->callsites = true;
			break;
		case 'b':
			if (!cli_parse_count(optarg, &o->budget)) {
				cli_error("plan", "--budget wants a positive number of node moves (e.g. 200M), not '%s'", optarg);
				return 2;
			}
			break;
		case 'P':
			a->predict = optarg;
			break;
		case 'i':
			a->samples = optarg;
			break;
		case 'E':
			a->evaluate = optarg;
			break;
		case 't':
			a->top = strtol(optarg, &end, 10);
			if (!*optarg || *end || a->top < 0 || a->top > 100000) {
				cli_error("plan", "--top wants a count from 0 to 100000, not '%s'", optarg);
				return 2;
			}
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cli_bad_option("plan", argv[optind - 1]);
		}
	}
	if (optind != argc - 1) {
		cli_error("plan", "expected one pathmap; usage: icpp plan [-o PLAN] [options] MAP");
		return 2;
	}
	if (a->evaluate && a->output) {
		cli_error("plan", "--evaluate reports on a plan and writes none: drop -o");
		return 2;
	}
	if (a->nbin && cap->clone) {
		cli_error("plan", "--clone and --binary exclude each other: with the binary, its "
			  "analysis says what may be cloned");
		return 2;
	}
	o->allow_clone = !no_clone;
	cap->dispatch = !no_dispatch;
	a->map = argv[optind];
	return -1;
}

/* Solve and write the plan (pp) to -o, or beside the map.  0, or -1 after
 * one line. */
static int make_plan(struct plan_args *a, const struct pathmap *pm,
		     const struct da_bridge *br, struct da_result *r, struct da_pm_plan *pp)
{
	char err[1024];
	if (!a->quiet && isatty(2))
		cli_solve_progress("plan", br->prob, &a->o);
	if (da_solve(br->prob, &a->o, r, err, sizeof(err)) < 0) {
		cli_error("plan", "%s: %s", a->map, err);
		return -1;
	}
	if (da_pm_plan_from(br, &r->plan, pp) < 0) {
		cli_error("plan", "out of memory");
		return -1;
	}
	pp->summary = (struct da_pm_summary){
		r->before.paths, r->before.precise_paths, r->after.precise_paths, r->before.weight,
		r->before.precise_weight, r->after.precise_weight, r->max_growth,
		r->max_growth_bytes, r->code_bytes, a->o.seed, br->prob->unit, {{0}},
	};
	memcpy(pp->summary.left_by, r->left_by, sizeof(r->left_by));
	char *outpath = a->output ? strdup(a->output) : default_output(a->map);
	if (!outpath) {
		cli_error("plan", "out of memory");
		return -1;
	}
	int rc = da_plan_write(outpath, pm, pp, err, sizeof(err));
	if (rc < 0)
		cli_error("plan", "%s", err);
	else
		printf("plan for %s, written to %s\n\n", a->map, outpath);
	free(outpath);
	return rc;
}

/* --evaluate: the plan read (pp) in the problem's terms (plan), measured.
 * 0, or -1 after one line. */
static int evaluate_plan(const struct plan_args *a, const struct da_bridge *br,
			 struct da_result *r, const struct da_pm_plan *pp, struct da_plan *plan)
{
	char err[1024];
	if (da_pm_plan_to(br, pp, plan, err, sizeof(err)) < 0 ||
	    da_evaluate(br->prob, &a->o, plan, r, err, sizeof(err)) < 0) {
		cli_error("plan", "%s", err);
		return -1;
	}
	printf("plan %s for %s\n\n", a->evaluate, a->map);
	return 0;
}

/* --predict: the pathmap of the changed program.  0, or -1 after one line. */
static int write_predicted(const char *path, const struct pathmap *pm, const struct da_pm_plan *pp)
{
	char err[1024];
	struct pathmap *q;
	int rc = da_predict_pathmap(pm, pp, &q, err, sizeof(err));
	if (rc == 0) {
		rc = pm_write(q, path, err, sizeof(err));
		pm_free(q);
	}
	if (rc < 0)
		cli_error("plan", "%s", err);
	return rc;
}

int cmd_plan(int argc, char **argv)
{
	struct plan_args a = {.top = 5};
	da_options_default(&a.o);
	da_capability_default(&a.cap);
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	const char *map = a.map;
	char err[1024];
	struct pathmap *pm = NULL;
	struct da_bridge br = {0};
	struct da_result r = {0};
	struct da_pm_plan pp = {0};
	struct da_plan plan = {0};
	struct rw_binary *b[REWRITE_MAX_BINARIES] = {0};
	struct rewrite_cap rwcap = {0};
	struct weights weights = {"entries", 1};
	rc = 1;
	if (pm_read(map, &pm, err, sizeof(err)) < 0) {
		cli_error("plan", "%s", err);
		return 1;
	}
	if (a.nbin && plan_for_binaries(a.binaries, a.nbin, map, pm, a.quiet, b, &rwcap, &a.cap) < 0)
		goto out;
	if (a.evaluate && da_plan_read(a.evaluate, pm, &pp, err, sizeof(err)) < 0) {
		cli_error("plan", "%s", err);
		goto out;
	}
	if (a.evaluate)
		a.cap.tail_plan = &pp;  /* its tail jumps, the problem it was made on */
	if (da_from_pathmap(pm, &a.cap, a.callsites ? DA_UNIT_CALLSITES : DA_UNIT_FUNCTIONS, &br,
			    err, sizeof(err)) < 0) {
		cli_error("plan", "%s: %s", map, err);
		goto out;
	}
	if (a.samples) {
		if (sample_weights(br.prob, a.samples, map, "plan", a.quiet) < 0)
			goto out;
		weights = (struct weights){"samples", SAMPLE_WEIGHT_SCALE};
	}
	if (a.evaluate ? evaluate_plan(&a, &br, &r, &pp, &plan) < 0
		       : make_plan(&a, pm, &br, &r, &pp) < 0)
		goto out;
	if (a.predict && write_predicted(a.predict, pm, &pp) < 0)
		goto out;
	/* the code price the plan was made at: the top-up lowers it */
	double code_weight = a.o.code_weight * r.stats.price_scale;
	report(pm, br.prob, &r, &pp, a.top, !a.evaluate, weights,
	       a.o.allow_clone && any_cloneable(br.prob) ? code_weight : 0, a.o.precision_target);
	if (a.nbin) {
		putchar('\n');
		rewrite_cap_suggest(&rwcap, pm, &r, "", "--binary", stdout);
	}
	if (a.predict)
		printf("\npredicted pathmap written to %s\n", a.predict);
	if (fflush(stdout) || ferror(stdout)) {
		cli_error("plan", "cannot write the output");
		goto out;
	}
	rc = 0;
out:
	da_plan_free(&plan);
	da_pm_plan_free(&pp);
	da_result_free(&r);
	da_bridge_free(&br);
	rewrite_cap_free(&rwcap);
	for (uint32_t i = 0; i < a.nbin; i++)
		if (b[i])
			rw_close(b[i]);
	pm_free(pm);
	return rc;
}
