/* disambig with pathmaps: the bridge (callsites, owners, capability), plans in
 * pathmap terms, the plan file (round trip and refusals), the predicted
 * pathmap (heights and pm_stats agree with the solver), and icpp plan
 * called in-process (cli/cmd_plan.c is compiled into this test). */
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "binary/binary.h"
#include "cli/cmds.h"
#include "cli/rewrite_cap.h"
#include "disambig/disambig.h"
#include "disambig/from_pathmap.h"
#include "tests/check.h"
#include "tests/cli_run.h"
#include "tests/disambig/plan_sample.h"
#include "util/fileio.h"

static char dir[] = "/tmp/icpp-plan-test-XXXXXX";

static const char *path_in(const char *name)
{
	static char buf[4][256];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

/* The problem of pm with the default capability and cloning allowed. */
static void clone_bridge(const struct pathmap *pm, struct da_capability *cap,
			 struct da_bridge *br)
{
	char err[256];
	da_capability_default(cap);
	cap->clone = true;
	CHECK(da_from_pathmap(pm, cap, DA_UNIT_FUNCTIONS, br, err, sizeof(err)) == 0);
}

static void test_bridge(void)
{
	struct pathmap *pm = pst_sample();
	struct da_capability cap;
	da_capability_default(&cap);
	struct da_bridge br;
	char err[256];
	CHECK(da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, &br, err, sizeof(err)) == 0);
	const struct da_problem *p = br.prob;
	CHECK_EQ_INT(p->nfuncs, pm->nfuncs);
	CHECK_EQ_INT(p->nnodes, pm->nnodes);
	/* callsites: the root's (in libc) and 10 in the program */
	CHECK_EQ_INT(p->ncallsites, 11);
	uint32_t root_cs = da_bridge_callsite(&br, 1, 0x27100);
	CHECK(root_cs != DA_NONE);
	CHECK_EQ_INT(p->callsites[root_cs].owner, 7);          /* __libc_start_call_main */
	uint32_t ma = da_bridge_callsite(&br, 0, 0x1010);
	CHECK_EQ_INT(p->callsites[ma].owner, 0);               /* inside M */
	CHECK_EQ_INT(p->callsites[ma].wrap_mask, da_mask_upto(DA_DEFAULT_BOUND));
	CHECK(!p->callsites[ma].redirectable);                 /* no cloning by default */
	CHECK_EQ_INT(p->funcs[3].pad_mask, da_mask_upto(DA_DEFAULT_BOUND));
	CHECK(!p->funcs[3].cloneable);
	CHECK_EQ_INT(p->nodes[pm->nnodes - 1].callsite, DA_NONE);
	CHECK_EQ_INT(da_bridge_callsite(&br, 0, 0x9999), DA_NONE);
	da_bridge_free(&br);

	/* only the program may change; clones allowed; smaller bounds */
	cap.module = "bin/prog";
	cap.clone = true;
	cap.pad_bound = 64;
	cap.wrap_bound = 32;
	CHECK(da_from_pathmap(pm, &cap, DA_UNIT_CALLSITES, &br, err, sizeof(err)) == 0);
	p = br.prob;
	CHECK_EQ_INT(p->unit, DA_UNIT_CALLSITES);
	CHECK_EQ_INT(p->funcs[7].pad_mask, 1);                 /* libc: fixed */
	CHECK(!p->funcs[7].cloneable);
	CHECK_EQ_INT(p->funcs[1].pad_mask, da_mask_upto(64));
	CHECK(p->funcs[1].cloneable);
	root_cs = da_bridge_callsite(&br, 1, 0x27100);
	CHECK_EQ_INT(p->callsites[root_cs].wrap_mask, 1);
	ma = da_bridge_callsite(&br, 0, 0x1010);
	CHECK_EQ_INT(p->callsites[ma].wrap_mask, da_mask_upto(32));
	CHECK(p->callsites[ma].redirectable);
	da_bridge_free(&br);
	cap.pad_bound = 24;
	CHECK(da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, &br, err, sizeof(err)) < 0);
	CHECK(strstr(err, "multiples of 16") != NULL);
	pm_free(pm);
}

/* What a clone may take.  Without the rewriter, a callsite calls the one
 * function training saw entered through it, and one through which it saw
 * two (the callee tail-called the other) is not redirected; with it, the
 * hook names the instruction's target and the paddings a clone may take. */
static void target_hook(void *ctx, const struct pathmap *pm, uint32_t module, uint64_t addr,
			struct da_callsite_cap *cc)
{
	(void)ctx, (void)pm, (void)module;
	cc->target = addr == 0x1010 ? 0x2000 : addr == 0x1020 ? 0x3000 : 0;   /* M->A, M->E */
}

static void clone_hook(void *ctx, const struct pathmap *pm, uint32_t func, da_mask *mask,
		       bool *cloneable, da_mask *clone_mask, bool *dispatch, bool *pad_runs,
		       uint32_t *pad_in_place)
{
	(void)ctx, (void)pm, (void)mask, (void)cloneable, (void)dispatch, (void)pad_in_place;
	if (func == 1) {                                /* A: padded by an entry wrapper */
		*clone_mask = 1;
		*pad_runs = true;
	}
}

static void test_bridge_targets(void)
{
	struct pathmap *pm = pst_sample();
	/* M's call to E also entered D (E tail-called D) */
	pm_add_node(pm, 0, 3, 0, 0x1020, 148, 1);
	struct da_capability cap;
	struct da_bridge br;
	char err[256];
	clone_bridge(pm, &cap, &br);
	const struct da_problem *p = br.prob;
	uint32_t ma = da_bridge_callsite(&br, 0, 0x1010), me = da_bridge_callsite(&br, 0, 0x1020);
	uint32_t mb = da_bridge_callsite(&br, 0, 0x1030);
	CHECK(p->callsites[ma].redirectable);
	CHECK_EQ_INT(p->callsites[ma].target, 1);               /* A */
	CHECK(!p->callsites[me].redirectable);                  /* E and D seen */
	CHECK_EQ_INT(p->funcs[1].clone_pad_mask, da_mask_upto(DA_DEFAULT_BOUND));
	da_bridge_free(&br);
	cap.callsite_hook = target_hook;
	cap.func_hook = clone_hook;
	CHECK(da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, &br, err, sizeof(err)) == 0);
	p = br.prob;
	CHECK(p->callsites[ma].redirectable);
	CHECK_EQ_INT(p->callsites[ma].target, 1);
	CHECK(p->callsites[me].redirectable);                   /* the instruction calls E */
	CHECK_EQ_INT(p->callsites[me].target, 2);
	CHECK(!p->callsites[mb].redirectable);                  /* target not known */
	CHECK_EQ_INT(p->funcs[1].clone_pad_mask, 1);
	CHECK_EQ_INT(p->funcs[1].pad_mask, da_mask_upto(DA_DEFAULT_BOUND));
	CHECK(p->funcs[1].pad_runs && !p->funcs[2].pad_runs);
	CHECK_EQ_INT(p->funcs[2].clone_pad_mask, da_mask_upto(DA_DEFAULT_BOUND));
	da_bridge_free(&br);
	pm_free(pm);
}

/* Promoted calls (disambig.h section 2, "Dispatch"): M's indirect call at
 * +0x50 enters A, E and D, and E may tail-call D: the call is promoted, and
 * D, which it may have entered by E's tail call, is listed in no_promote
 * (its clone there takes a dispatch); without the hook nothing is, and
 * without promotion (--no-promote) the call is not promoted. */
static void promote_hook(void *ctx, const struct pathmap *pm, uint32_t module, uint64_t addr,
			 struct da_callsite_cap *cc)
{
	(void)ctx, (void)pm, (void)module;
	cc->promoted = addr == 0x1050;
}

static bool e_tail_calls_d(void *ctx, const struct pathmap *pm, uint32_t callee, uint32_t func)
{
	(void)ctx, (void)pm;
	return callee == 2 && func == 3;
}

/* Cross-module calls (da_callsite.xcall): the hook says that M's call at
 * +0x10 may take a clone of libc's function at 0x27000 (and of one the map
 * lacks) through its check; where libc is not rewritten, of none. */
static void xcall_hook(void *ctx, const struct pathmap *pm, uint32_t module, uint64_t addr,
		       struct da_callsite_cap *cc)
{
	(void)ctx, (void)pm;
	if (module == 0 && addr == 0x1010) {
		cc->xcall[0] = (struct da_xcall_target){1, 0x27000};
		cc->xcall[1] = (struct da_xcall_target){1, 0x27100};
		cc->nxcall = 2;
	}
}

static void test_bridge_xcall(void)
{
	struct pathmap *pm = pst_sample();
	struct da_capability cap;
	struct da_bridge br;
	char err[256];
	da_capability_default(&cap);
	cap.clone = true;
	cap.callsite_hook = xcall_hook;
	CHECK(da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, &br, err, sizeof(err)) == 0);
	const struct da_problem *p = br.prob;
	const struct da_callsite *c = &p->callsites[da_bridge_callsite(&br, 0, 0x1010)];
	CHECK_EQ_INT(c->nxcall, 1);
	if (c->nxcall == 1)
		CHECK_EQ_INT(p->xcall_funcs[c->xcall], 7);      /* __libc_start_call_main */
	CHECK_EQ_INT(p->callsites[da_bridge_callsite(&br, 0, 0x1020)].nxcall, 0);
	da_bridge_free(&br);
	cap.module = "bin/prog";
	CHECK(da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, &br, err, sizeof(err)) == 0);
	CHECK_EQ_INT(br.prob->callsites[da_bridge_callsite(&br, 0, 0x1010)].nxcall, 0);
	da_bridge_free(&br);
	/* the plan's word for such a clone, `xcall`, read back; refused for a
	 * clone of the call's own module */
	static const char xplan[] = "icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\n"
				    "module 1 - /lib/libc.so.6\nclone 0 1 0x27000 0 0x1010 0 xcall\nend 1\n";
	struct da_pm_plan xp;
	CHECK(da_plan_parse("x.plan", xplan, strlen(xplan), pm, &xp, err, sizeof(err)) == 0);
	CHECK_EQ_INT(xp.nclones, 1);
	if (xp.nclones == 1)
		CHECK(xp.clones[0].xcall && !xp.clones[0].promote && xp.clones[0].func == 7);
	da_pm_plan_free(&xp);
	static const char own[] = "icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\n"
				  "clone 0 0 0x1000 0 0x1020 0 xcall\nend 1\n";
	CHECK(da_plan_parse("o.plan", own, strlen(own), pm, &xp, err, sizeof(err)) < 0);
	CHECK(strstr(err, "its own module") != NULL);
	pm_free(pm);
}

static void test_bridge_promoted(void)
{
	struct pathmap *pm = pst_sample();
	for (uint32_t f = 1; f <= 3; f++)                       /* A, E, D */
		pm_add_node(pm, 0, f, 0, 0x1050, 148, f);
	struct da_capability cap;
	struct da_bridge br;
	char err[256];
	da_capability_default(&cap);
	cap.clone = true;
	cap.callsite_hook = promote_hook;
	cap.tail_enters = e_tail_calls_d;
	CHECK(da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, &br, err, sizeof(err)) == 0);
	const struct da_problem *p = br.prob;
	const struct da_callsite *c = &p->callsites[da_bridge_callsite(&br, 0, 0x1050)];
	CHECK(c->promoted && c->redirectable && c->bound);
	CHECK_EQ_INT(c->target, DA_NONE);
	CHECK(!p->callsites[da_bridge_callsite(&br, 0, 0x1010)].promoted);
	CHECK_EQ_INT(p->nno_promote, 1);
	if (p->nno_promote == 1)
		CHECK_EQ_INT(p->no_promote[0],
			     (uint64_t)da_bridge_callsite(&br, 0, 0x1050) << 32 | 3);
	da_bridge_free(&br);
	cap.tail_enters = NULL;
	CHECK(da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, &br, err, sizeof(err)) == 0);
	CHECK_EQ_INT(br.prob->nno_promote, 0);
	da_bridge_free(&br);
	/* --no-promote: the call is no promoted one, and not redirectable */
	cap.promote = false;
	CHECK(da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, &br, err, sizeof(err)) == 0);
	c = &br.prob->callsites[da_bridge_callsite(&br, 0, 0x1050)];
	CHECK(!c->promoted && !c->redirectable && !c->bound);
	da_bridge_free(&br);
	pm_free(pm);
}

/* A recursion's sibling group (docs/training.md): D calls itself from two
 * callsites at one height, and training keeps one subtree for both, so the
 * bridge locks those callsites and D itself; a self-call at another height,
 * or from one callsite, locks nothing. */
/* How the bridge's hooks see pst_sample_tails' T (t_enters, calls_t). */
struct t_view {
	bool any;               /* T's tail jumps are indirect */
	bool calls_t;           /* M's call at 0x1050 calls T (else V, 0xa000) */
	bool u_any;             /* and U's (first at 0x9020) */
};

/* The rewriter's analysis as pst_sample_tails has it: T enters U only by its
 * direct tail jump at 0x8020; or, with `any`, by indirect ones (the first
 * at 0x8020), any function of its module, by their stubs. */
static uint32_t t_enters(void *ctx, const struct pathmap *pm, uint32_t g,
			 struct da_tail_target *out, uint32_t max)
{
	const struct t_view *v = ctx;
	if (v->u_any && !strcmp(pm->funcs[g].name, "U") && max) {
		out[0] = (struct da_tail_target){0, 0, 0x9020, false, true};
		return 1;
	}
	if (strcmp(pm->funcs[g].name, "T") || !max)
		return 0;
	out[0] = (struct da_tail_target){0, v->any ? 0 : 0x9000, 0x8020, false, v->any};
	return 1;
}

/* The tail node of U's frame (from_pathmap.h, Tail calls), or DA_NONE when
 * the bridge left it beside T's. */
static uint32_t tail_of_u(const struct pathmap *pm, struct da_bridge *br)
{
	struct da_capability cap;
	char err[256];
	static const struct t_view direct = {false, false, false};
	da_capability_default(&cap);
	cap.clone = true;
	cap.tail_targets = t_enters;
	cap.ctx = (void *)&direct;
	CHECK(da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, br, err, sizeof(err)) == 0);
	for (uint32_t i = 0; i < br->prob->nnodes; i++)
		if (br->prob->nodes[i].tail)
			return i;
	return DA_NONE;
}

/* U's frame beside T's hangs below it, through a callsite named by T's tail
 * jump; not where a frame of U at the same call stays (a dispatch of U
 * testing that call would take the other), nor when U's frame comes first. */
static void test_bridge_tails(void)
{
	struct pathmap *pm = pst_sample_tails();
	struct da_bridge br;
	uint32_t u = tail_of_u(pm, &br);
	CHECK_EQ_INT(u, pm->nnodes - 1);
	const struct da_problem *p = br.prob;
	uint32_t e = p->nodes[u].callsite;
	CHECK_EQ_INT(p->nodes[u].parent, pm->nnodes - 2);      /* T's frame */
	CHECK(e == da_bridge_callsite(&br, 0, 0x8020) && p->callsites[e].tail);
	CHECK(p->callsites[e].redirectable && p->callsites[e].target == p->nodes[u].func &&
	      !p->callsites[e].dispatchable);
	da_bridge_free(&br);
	/* a frame of U at M's call of T at another height, no T beside it */
	pm_add_node(pm, 0, pm->nodes[u].func, 0, 0x1050, 164, 1);
	CHECK_EQ_INT(tail_of_u(pm, &br), DA_NONE);
	da_bridge_free(&br);
	pm_free(pm);
	/* U's frame before T's */
	pm = pst_sample();
	uint32_t t = pm_add_function(pm, 0, 0x8000, 0x100, "T");
	uint32_t uf = pm_add_function(pm, 0, 0x9000, 0x100, "U");
	pm_add_node(pm, 0, uf, 0, 0x1050, 148, 4);
	pm_add_node(pm, 0, t, 0, 0x1050, 148, 4);
	CHECK_EQ_INT(tail_of_u(pm, &br), DA_NONE);
	da_bridge_free(&br);
	pm_free(pm);
}

/* M's call at 0x1050 calls T (0x8000) or V (0xa000) directly. */
static void calls_t(void *ctx, const struct pathmap *pm, uint32_t module, uint64_t addr,
		    struct da_callsite_cap *cc)
{
	const struct t_view *v = ctx;
	(void)pm;
	(void)module;
	cc->target = addr != 0x1050 ? 0 : v->calls_t ? 0x8000 : 0xa000;
}

/* By T's indirect tail jumps, U's frame beside T's hangs below it, through
 * a callsite named by the first jump, for any function (target DA_NONE):
 * not where M's call calls another function directly (U's frame there may
 * be its own), nor where T's frames have U's and V's beside them (T's
 * stubs would test every frame of both, a dispatcher's pointer), nor when
 * U jumps through pointers too (V's frame may be U's jump's, not T's). */
static void test_bridge_tails_any(void)
{
	static const struct {
		bool calls_t, with_v, u_any, u_moves;
	} cases[] = {
		{false, true, false, false}, {true, false, false, true},
		{true, true, false, false}, {true, true, true, false},
	};
	for (size_t k = 0; k < sizeof(cases) / sizeof(*cases); k++) {
		struct pathmap *pm = pst_sample_tails();
		uint32_t t = pm->nnodes - 2, u = pm->nnodes - 1;
		if (cases[k].with_v)
			pm_add_node(pm, 0, pm_add_function(pm, 0, 0xa000, 0x100, "V"), 0, 0x1050, 148, 2);
		struct da_capability cap;
		struct da_bridge br;
		char err[256];
		da_capability_default(&cap);
		cap.clone = true;
		struct t_view view = {true, cases[k].calls_t, cases[k].u_any};
		cap.tail_targets = t_enters;
		cap.callsite_hook = calls_t;
		cap.ctx = &view;
		CHECK(da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, &br, err, sizeof(err)) == 0);
		const struct da_problem *p = br.prob;
		uint32_t e = da_bridge_callsite(&br, 0, 0x8020);
		CHECK_EQ_INT(p->nodes[u].tail, cases[k].u_moves);
		CHECK_EQ_INT(p->nodes[u].parent, cases[k].u_moves ? t : 0);
		CHECK(!cases[k].u_moves || (p->nodes[u].callsite == e && p->callsites[e].tail &&
					    p->callsites[e].target == DA_NONE &&
					    p->callsites[e].redirectable));
		for (uint32_t i = u + 1; i < pm->nnodes; i++)
			CHECK(!p->nodes[i].tail);               /* V's */
		CHECK(da_problem_check(p, err, sizeof(err)) == 0);
		da_bridge_free(&br);
		pm_free(pm);
	}
}

/* M's call at 0x1050 calls U (0x9000) directly. */
static void calls_u(void *ctx, const struct pathmap *pm, uint32_t module, uint64_t addr,
		    struct da_callsite_cap *cc)
{
	(void)ctx;
	(void)pm;
	(void)module;
	cc->target = addr == 0x1050 ? 0x9000 : 0;
}

/* M calls U, U tail-calls T, T's jump to U enters U again: U's frame comes
 * first, T's beside it.  No clone of U may take M's call, which would take
 * U's first frame only (sqlite3VdbeAddOp3 -> growOp3 -> sqlite3VdbeAddOp3). */
static void test_bridge_tail_loop(void)
{
	struct pathmap *pm = pst_sample();
	uint32_t t = pm_add_function(pm, 0, 0x8000, 0x100, "T");
	uint32_t u = pm_add_function(pm, 0, 0x9000, 0x100, "U");
	uint32_t un = pm_add_node(pm, 0, u, 0, 0x1050, 148, 4);
	pm_add_node(pm, 0, t, 0, 0x1050, 148, 4);
	static const struct t_view direct = {false, false, false};
	struct da_capability cap;
	struct da_bridge br;
	char err[256];
	da_capability_default(&cap);
	cap.clone = true;
	cap.tail_targets = t_enters;
	cap.callsite_hook = calls_u;
	cap.ctx = (void *)&direct;
	CHECK(da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, &br, err, sizeof(err)) == 0);
	const struct da_callsite *c = &br.prob->callsites[da_bridge_callsite(&br, 0, 0x1050)];
	CHECK(!br.prob->nodes[un].tail);
	CHECK(!c->redirectable && !c->dispatchable && !c->taggable);
	da_bridge_free(&br);
	pm_free(pm);
}

static void test_recursion_group(void)
{
	struct pathmap *pm = pst_sample();
	uint32_t m = 0, d = 3, d1 = pm->nnodes;
	for (uint32_t i = 0; i < pm->nnodes; i++)
		if (pm->nodes[i].func == d && d1 == pm->nnodes)
			d1 = i;                                 /* M > A > D */
	int64_t h = pm->nodes[d1].height + 48;
	uint32_t first = pm_add_node(pm, d1, d, m, 0x4010, h, 9);
	pm_add_node(pm, d1, d, m, 0x4020, h, 7);
	pm_add_node(pm, first, 1, m, 0x4030, h + 16, 3);         /* the group's callee */
	uint32_t e1 = pm->nnodes;
	for (uint32_t i = 0; i < pm->nnodes; i++)
		if (pm->nodes[i].func == d && pm->nodes[pm->nodes[i].parent].func == 2)
			e1 = i;                                 /* M > E > D */
	pm_add_node(pm, e1, d, m, 0x4040, pm->nodes[e1].height + 48, 1);
	pm_add_node(pm, e1, d, m, 0x4050, pm->nodes[e1].height + 64, 1);
	struct da_capability cap;
	struct da_bridge br;
	clone_bridge(pm, &cap, &br);
	const struct da_problem *p = br.prob;
	for (uint64_t a = 0x4010; a <= 0x4020; a += 0x10) {
		const struct da_callsite *c = &p->callsites[da_bridge_callsite(&br, m, a)];
		CHECK_EQ_INT(c->wrap_mask, 1);
		CHECK(!c->redirectable && !c->dispatchable && !c->taggable);
	}
	CHECK(!p->funcs[d].cloneable && !p->funcs[d].dispatch);
	CHECK_EQ_INT(p->funcs[d].pad_mask, da_mask_upto(DA_DEFAULT_BOUND));
	for (uint64_t a = 0x4030; a <= 0x4050; a += 0x10) {
		const struct da_callsite *c = &p->callsites[da_bridge_callsite(&br, m, a)];
		CHECK_EQ_INT(c->wrap_mask, da_mask_upto(DA_DEFAULT_BOUND));
		CHECK(c->redirectable);
	}
	/* so no plan moves the group's frames apart */
	struct da_options o;
	da_options_default(&o);
	o.allow_clone = true;
	o.searches = 1;
	struct da_result r;
	char err[256];
	CHECK(da_solve(p, &o, &r, err, sizeof(err)) == 0);
	CHECK_EQ_INT(r.height[first + 1] - r.height[first], 0);
	da_result_free(&r);
	da_bridge_free(&br);
	pm_free(pm);
}

/* Solve, write, read back, predict: everything agrees. */
static void test_round_trip(void)
{
	struct pathmap *pm = pst_sample();
	struct da_capability cap;
	da_capability_default(&cap);
	struct da_bridge br;
	char err[256];
	CHECK(da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, &br, err, sizeof(err)) == 0);
	struct da_options o;
	da_options_default(&o);
	struct da_result r;
	CHECK(da_solve(br.prob, &o, &r, err, sizeof(err)) == 0);
	CHECK_EQ_INT(r.before.paths, 12);
	CHECK_EQ_INT(r.before.precise_paths, 8);
	CHECK_EQ_INT(r.after.precise_paths, 12);
	struct da_pm_plan pp;
	CHECK(da_pm_plan_from(&br, &r.plan, &pp) == 0);
	CHECK(pp.npads + pp.nwraps >= 2);
	pp.summary.paths = r.before.paths;
	pp.summary.precise_before = r.before.precise_paths;
	pp.summary.precise_after = r.after.precise_paths;
	pp.summary.max_growth = r.max_growth;
	pp.summary.seed = 7;
	pp.summary.left_by[DA_LEFT_BLOCKED][DA_DIFF_EDGES] = 3;
	const char *file = path_in("p.plan");
	CHECK(da_plan_write(file, pm, &pp, err, sizeof(err)) == 0);
	struct da_pm_plan back;
	CHECK(da_plan_read(file, pm, &back, err, sizeof(err)) == 0);
	CHECK_EQ_INT(back.npads, pp.npads);
	CHECK_EQ_INT(back.nwraps, pp.nwraps);
	for (uint32_t i = 0; i < pp.npads && i < back.npads; i++) {
		CHECK_EQ_INT(back.pads[i].func, pp.pads[i].func);
		CHECK_EQ_INT(back.pads[i].bytes, pp.pads[i].bytes);
	}
	for (uint32_t i = 0; i < pp.nwraps && i < back.nwraps; i++) {
		CHECK_EQ_INT(back.wraps[i].module, pp.wraps[i].module);
		CHECK_EQ_INT(back.wraps[i].addr, pp.wraps[i].addr);
		CHECK_EQ_INT(back.wraps[i].bytes, pp.wraps[i].bytes);
	}
	CHECK_EQ_INT(back.summary.seed, 7);
	CHECK_EQ_INT(back.summary.left_by[DA_LEFT_BLOCKED][DA_DIFF_EDGES], 3);
	CHECK_EQ_INT(back.summary.precise_after, 12);
	CHECK(back.summary.max_growth > 0.999 * r.max_growth && back.summary.max_growth < 1.001 * r.max_growth);
	/* back to indices: the same plan */
	struct da_plan plan;
	CHECK(da_pm_plan_to(&br, &back, &plan, err, sizeof(err)) == 0);
	CHECK(!memcmp(plan.pad, r.plan.pad, br.prob->nfuncs * sizeof(*plan.pad)));
	CHECK(!memcmp(plan.wrap, r.plan.wrap, br.prob->ncallsites * sizeof(*plan.wrap)));
	/* the predicted pathmap: the solver's heights; pm_stats agrees */
	struct pathmap *q;
	CHECK(da_predict_pathmap(pm, &back, &q, err, sizeof(err)) == 0);
	CHECK_EQ_INT(q->nnodes, pm->nnodes);
	CHECK_EQ_INT(q->nfuncs, pm->nfuncs);
	uint32_t bad = 0;
	for (uint32_t i = 0; i < pm->nnodes; i++)
		if (q->nodes[i].height != r.height[i] || q->nodes[i].func != pm->nodes[i].func ||
		    q->nodes[i].entries != pm->nodes[i].entries)
			bad++;
	CHECK_EQ_INT(bad, 0);
	struct pm_stats st;
	CHECK(pm_stats(q, &st) == 0);
	CHECK_EQ_INT(st.paths, r.after.paths);
	CHECK_EQ_INT(st.precise_paths, r.after.precise_paths);
	CHECK_EQ_INT(st.precise_entries, r.after.precise_weight);
	CHECK(pm_stats(pm, &st) == 0);
	CHECK_EQ_INT(st.precise_paths, r.before.precise_paths);
	CHECK_EQ_INT(st.precise_entries, r.before.precise_weight);
	/* it is a valid pathmap that can be written and read */
	CHECK(pm_write(q, path_in("pred.icpp"), err, sizeof(err)) == 0);
	pm_free(q);
	da_plan_free(&plan);
	da_pm_plan_free(&back);
	da_pm_plan_free(&pp);
	da_result_free(&r);
	da_bridge_free(&br);
	pm_free(pm);
}

/* The heat of (module, addr, clone, func) in plan p, or 0. */
static uint64_t heat_at(const struct da_pm_plan *p, uint32_t module, uint64_t addr, uint32_t clone,
			bool func)
{
	for (uint32_t i = 0; i < p->nheat; i++)
		if (p->heat[i].module == module && p->heat[i].addr == addr &&
		    p->heat[i].clone == clone && p->heat[i].func == func)
			return p->heat[i].entries;
	return 0;
}

/* Clones survive the file and the predicted pathmap (Figure 5.5 shape). */
static void test_clone_file(void)
{
	struct pathmap *pm = pm_new();
	uint32_t m = pm_add_module(pm, "/usr/bin/prog", PST_ID, sizeof(PST_ID));
	uint32_t A = pm_add_function(pm, m, 0x1000, 0x100, "A");
	uint32_t B = pm_add_function(pm, m, 0x2000, 0x100, "B");
	uint32_t D = pm_add_function(pm, m, 0x3000, 0x100, "D");
	/* A-B-A-A-D vs A-A-B-A-D; ab, aa, ad in A; ba in B */
	uint64_t ab = 0x1010, aa = 0x1020, ad = 0x1030, ba = 0x2010;
	uint32_t r = pm_add_node(pm, PM_NONE, A, PM_NONE, 0, 16, 1);
	uint32_t x1 = pm_add_node(pm, r, B, m, ab, 48, 1);
	uint32_t x2 = pm_add_node(pm, x1, A, m, ba, 96, 1);
	uint32_t x3 = pm_add_node(pm, x2, A, m, aa, 128, 1);
	uint32_t x4 = pm_add_node(pm, x3, D, m, ad, 160, 1);
	uint32_t y1 = pm_add_node(pm, r, A, m, aa, 48, 1);
	uint32_t y2 = pm_add_node(pm, y1, B, m, ab, 80, 1);
	uint32_t y3 = pm_add_node(pm, y2, A, m, ba, 128, 1);
	uint32_t y4 = pm_add_node(pm, y3, D, m, ad, 160, 1);
	struct da_capability cap;
	struct da_bridge br;
	char err[256];
	clone_bridge(pm, &cap, &br);
	struct da_options o;
	da_options_default(&o);
	o.allow_clone = true;
	o.max_stack_growth = 0;
	struct da_result res;
	CHECK(da_solve(br.prob, &o, &res, err, sizeof(err)) == 0);
	CHECK_EQ_INT(res.after.precise_paths, res.after.paths);
	CHECK_EQ_INT(res.plan.nclones, 1);
	struct da_pm_plan pp;
	CHECK(da_pm_plan_from(&br, &res.plan, &pp) == 0);
	CHECK_EQ_INT(pp.nclones, 1);
	/* A cloned for the A->A call (the thesis' choice) or for the B->A call:
	 * both separate the pairs */
	CHECK_EQ_INT(pp.clones[0].func, A);
	CHECK(pp.clones[0].cs_addr == aa || pp.clones[0].cs_addr == ba);
	const char *file = path_in("c.plan");
	CHECK(da_plan_write(file, pm, &pp, err, sizeof(err)) == 0);
	struct da_pm_plan back;
	CHECK(da_plan_read(file, pm, &back, err, sizeof(err)) == 0);
	CHECK_EQ_INT(back.nclones, 1);
	CHECK_EQ_INT(back.nclone_wraps, pp.nclone_wraps);
	/* a plan file holds no clone's weight; da_pm_plan_weigh gives it the
	 * entries of the frames the clone takes (x3 and y1, or x2 and y3), so
	 * that icpp rewrite --plan orders a dispatch's tests as the solver's
	 * plan does (before session 49 they stayed 0: the tests in plan order) */
	CHECK_EQ_INT(back.clones[0].weight, 0);
	CHECK(da_pm_plan_weigh(pm, &back, err, sizeof(err)) == 0);
	CHECK_EQ_INT(back.clones[0].weight, 2);
	/* and the heat the rewriter lays new code out by (one entry a frame):
	 * A's frames, the clone's among them; the redirected call's own frames
	 * (the call is the clone's: x3 and y1, or x2 and y3); D's call in the
	 * clone and in the original (x4 and y4, whichever is which) */
	CHECK_EQ_INT(back.entries, 9);
	uint64_t funcs = 0, sites = 0;
	for (uint32_t i = 0; i < back.nheat; i++)
		*(back.heat[i].func ? &funcs : &sites) += back.heat[i].entries;
	CHECK_EQ_INT(funcs, 9);
	CHECK_EQ_INT(sites, 8);
	CHECK_EQ_INT(heat_at(&back, m, pm->funcs[A].addr, DA_NONE, true), 5);
	CHECK_EQ_INT(heat_at(&back, m, back.clones[0].cs_addr, DA_NONE, false), 2);
	CHECK_EQ_INT(heat_at(&back, m, ad, 0, false), 1);
	CHECK_EQ_INT(heat_at(&back, m, ad, DA_NONE, false), 1);
	/* a chain's promoted clone, `in J promote`: nine words after the keyword
	 * (eight were read before session 48, and the promotion was lost) */
	static const char in_promote[] =
		"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\n"
		"clone 0 0 0x1000 0 0x1020 0 promote\nclone 1 0 0x3000 0 0x1030 0 in 0 promote\n"
		"end 2\n";
	struct da_pm_plan ip;
	CHECK(da_plan_parse("ip.plan", in_promote, strlen(in_promote), pm, &ip, err, sizeof(err)) == 0);
	CHECK_EQ_INT(ip.nclones, 2);
	if (ip.nclones == 2)
		CHECK(ip.clones[0].promote && ip.clones[1].promote && ip.clones[1].parent == 0);
	da_pm_plan_free(&ip);
	/* a pad's name is the rest of its line, however long (a C++ template's
	 * mangled name: cmake's plans were refused at 128 characters, session
	 * 49); a pad without one is refused */
	static const char head[] = "icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\npad 0 0x1000 16 ";
	char long_pad[sizeof(head) + 4000];
	memcpy(long_pad, head, sizeof(head) - 1);
	memset(long_pad + sizeof(head) - 1, 'x', 3000);
	strcpy(long_pad + sizeof(head) - 1 + 3000, " and more\nend 1\n");
	CHECK(da_plan_parse("lp.plan", long_pad, strlen(long_pad), pm, &ip, err, sizeof(err)) == 0);
	CHECK_EQ_INT(ip.npads, 1);
	if (ip.npads == 1)
		CHECK(ip.pads[0].func == A && ip.pads[0].bytes == 16);
	da_pm_plan_free(&ip);
	static const char nameless[] = "icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\n"
				       "pad 0 0x1000 16   \nend 1\n";
	CHECK(da_plan_parse("nn.plan", nameless, strlen(nameless), pm, &ip, err, sizeof(err)) < 0);
	CHECK(strstr(err, "expected: pad") != NULL);
	struct pathmap *q;
	CHECK(da_predict_pathmap(pm, &back, &q, err, sizeof(err)) == 0);
	CHECK_EQ_INT(q->nmodules, 2);
	CHECK_EQ_STR(q->modules[1].path, "[icpp-clones]");
	CHECK_EQ_INT(q->nfuncs, 4);
	CHECK_EQ_STR(q->funcs[3].name, "A.icpp_clone.0");
	/* the frames entered by the redirected call are the clone */
	bool via_aa = pp.clones[0].cs_addr == aa;
	CHECK_EQ_INT(q->nodes[x3].func, via_aa ? 3 : A);
	CHECK_EQ_INT(q->nodes[y1].func, via_aa ? 3 : A);
	CHECK_EQ_INT(q->nodes[y3].func, via_aa ? A : 3);
	CHECK_EQ_INT(q->nodes[x2].func, via_aa ? A : 3);
	for (uint32_t i = 0; i < pm->nnodes; i++) {
		CHECK_EQ_INT(q->nodes[i].height, res.height[i]);
		CHECK_EQ_INT(q->nodes[i].func, res.inst[i]);   /* clone k is function 3 + k */
	}
	CHECK(q->nodes[x4].height != q->nodes[y4].height);
	struct pm_stats st;
	CHECK(pm_stats(q, &st) == 0);
	CHECK_EQ_INT(st.precise_paths, st.paths);
	pm_free(q);
	/* a plan that points a call at a clone of a function it does not call:
	 * only D's dispatch could take it (it would take no frame) */
	struct da_plan dp;
	uint32_t cf = back.clones[0].func;
	back.clones[0].func = D;
	CHECK(br.prob->funcs[D].dispatch);
	uint32_t ncw = back.nclone_wraps;
	back.nclone_wraps = 0;                          /* they wrap calls of A */
	int rc = da_pm_plan_to(&br, &back, &dp, err, sizeof(err));
	CHECK_EQ_INT(rc, 0);
	if (rc == 0)
		da_plan_free(&dp);
	else
		fprintf(stderr, "%s\n", err);
	back.nclone_wraps = ncw;
	br.prob->funcs[D].dispatch = false;
	CHECK(da_pm_plan_to(&br, &back, &dp, err, sizeof(err)) < 0);
	CHECK(strstr(err, "calls another function") != NULL);
	br.prob->funcs[D].dispatch = true;
	back.clones[0].func = cf;
	CHECK(da_pm_plan_to(&br, &back, &dp, err, sizeof(err)) == 0);
	da_plan_free(&dp);
	/* a chain: clone 1 of D takes the copy of A's call of D in clone 0; it
	 * survives the file, and the predicted pathmap renames the D frame
	 * below clone 0 only */
	struct da_pm_clone two[2] = {pp.clones[0], {D, m, ad, 0, 0, 0, false, false, false}};
	struct da_pm_plan chain = pp;
	chain.clones = two;
	chain.nclones = 2;
	const char *cfile = path_in("chain.plan");
	CHECK(da_plan_write(cfile, pm, &chain, err, sizeof(err)) == 0);
	struct da_pm_plan cback;
	CHECK(da_plan_read(cfile, pm, &cback, err, sizeof(err)) == 0);
	CHECK_EQ_INT(cback.nclones, 2);
	CHECK_EQ_INT(cback.clones[0].parent, DA_NONE);
	CHECK_EQ_INT(cback.clones[1].parent, 0);
	CHECK(da_pm_plan_to(&br, &cback, &dp, err, sizeof(err)) == 0);
	da_plan_free(&dp);
	cback.clones[1].cs_addr = aa;                   /* a call of A, not of D */
	br.prob->funcs[D].dispatch = false;             /* (a dispatch would test it) */
	CHECK(da_pm_plan_to(&br, &cback, &dp, err, sizeof(err)) < 0);
	CHECK(strstr(err, "no direct call of D") != NULL);
	br.prob->funcs[D].dispatch = true;
	CHECK(da_pm_plan_to(&br, &cback, &dp, err, sizeof(err)) == 0);
	da_plan_free(&dp);
	cback.clones[1].cs_addr = ad;
	CHECK(da_predict_pathmap(pm, &cback, &q, err, sizeof(err)) == 0);
	CHECK_EQ_STR(q->funcs[4].name, "D.icpp_clone.1");
	CHECK_EQ_INT(q->nodes[x4].func, via_aa ? 4 : D);
	CHECK_EQ_INT(q->nodes[y4].func, via_aa ? D : 4);
	pm_free(q);
	/* of a clone that does not come earlier: refused when read */
	FILE *f = fopen(cfile, "r+");
	char text[2048];
	size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	text[n] = 0;
	char *in = strstr(text, " in 0\n");
	CHECK(in != NULL);
	if (f && in) {
		in[4] = '1';
		rewind(f);
		fwrite(text, 1, n, f);
	}
	if (f)
		fclose(f);
	struct da_pm_plan bad;
	CHECK(da_plan_read(cfile, pm, &bad, err, sizeof(err)) < 0);
	CHECK(strstr(err, "in J") != NULL);
	da_pm_plan_free(&cback);
	da_pm_plan_free(&back);
	da_pm_plan_free(&pp);
	da_result_free(&res);
	da_bridge_free(&br);
	pm_free(pm);
}

/* A .cold fragment in the pathmap (a frame at its parent's height without a
 * callsite): the bridge marks it and keeps it unchanged, a clone of its owner
 * copies it, and the predicted pathmap names the copy and moves only what
 * it calls. */
static void test_fragment_pathmap(void)
{
	struct pathmap *pm = pm_new();
	uint32_t m = pm_add_module(pm, "/usr/bin/prog", PST_ID, sizeof(PST_ID));
	uint32_t A = pm_add_function(pm, m, 0x1000, 0x100, "A");
	uint32_t B = pm_add_function(pm, m, 0x2000, 0x100, "B");
	uint32_t O = pm_add_function(pm, m, 0x3000, 0x100, "O");
	uint32_t G = pm_add_function(pm, m, 0x4000, 0x100, "g");
	uint32_t F = pm_add_function(pm, m, 0x9000, 0x40, "O.cold");
	uint32_t ra = pm_add_node(pm, PM_NONE, A, PM_NONE, 0, 16, 1);
	uint32_t rb = pm_add_node(pm, PM_NONE, B, PM_NONE, 0, 16, 1);
	uint32_t oa = pm_add_node(pm, ra, O, m, 0x1010, 64, 3);
	uint32_t fa = pm_add_node(pm, oa, F, PM_NONE, 0, 64, 1);
	uint32_t ga = pm_add_node(pm, fa, G, m, 0x9010, 128, 1);
	uint32_t ob = pm_add_node(pm, rb, O, m, 0x2010, 64, 3);
	uint32_t fb = pm_add_node(pm, ob, F, PM_NONE, 0, 64, 1);
	uint32_t gb = pm_add_node(pm, fb, G, m, 0x9010, 128, 1);
	struct da_capability cap;
	struct da_bridge br;
	char err[256];
	clone_bridge(pm, &cap, &br);
	const struct da_problem *p = br.prob;
	CHECK(p->nodes[fa].fragment && p->nodes[fb].fragment && !p->nodes[oa].fragment);
	CHECK_EQ_INT(p->funcs[F].pad_mask, 1);
	CHECK(!p->funcs[F].cloneable);
	CHECK_EQ_INT(p->funcs[O].pad_mask, da_mask_upto(DA_DEFAULT_BOUND));
	CHECK(p->funcs[O].cloneable);
	CHECK_EQ_INT(p->funcs[O].code_bytes, 0x140);           /* a clone copies both */
	CHECK_EQ_INT(p->callsites[p->nodes[ga].callsite].owner, F);
	/* paddings of A or B, wraps of the calls into O or g, or a padded clone
	 * of O separate them: only the clone is left allowed */
	for (uint32_t c = 0; c < p->ncallsites; c++)
		br.prob->callsites[c].wrap_mask = 1;
	for (uint32_t f = 0; f < p->nfuncs; f++)
		br.prob->funcs[f].pad_mask = br.prob->funcs[f].clone_pad_mask = 1;
	br.prob->funcs[O].clone_pad_mask = da_mask_upto(256);
	br.prob->funcs[G].cloneable = false;
	struct da_options o;
	da_options_default(&o);
	o.allow_clone = true;
	o.max_stack_growth = 0;
	struct da_result res;
	CHECK(da_solve(p, &o, &res, err, sizeof(err)) == 0);
	CHECK_EQ_INT(res.after.precise_paths, res.after.paths);
	CHECK_EQ_INT(res.plan.nclones, 1);
	struct da_pm_plan pp;
	CHECK(da_pm_plan_from(&br, &res.plan, &pp) == 0);
	/* pad O as well: the fragments stay, what they call moves */
	CHECK_EQ_INT(pp.npads, 0);
	CHECK(pp.clones[0].pad > 0);
	struct da_pm_pad pad = {O, 32};
	pp.pads = realloc(pp.pads, sizeof(pad));
	pp.pads[0] = pad;
	pp.npads = 1;
	struct pathmap *q;
	CHECK(da_predict_pathmap(pm, &pp, &q, err, sizeof(err)) == 0);
	CHECK_EQ_INT(q->nfuncs, pm->nfuncs + 2);
	uint32_t k0 = pm->nfuncs, f0 = pm->nfuncs + 1;
	CHECK_EQ_STR(q->funcs[k0].name, "O.icpp_clone.0");
	CHECK_EQ_STR(q->funcs[f0].name, "O.cold.icpp_clone.0");
	CHECK_EQ_INT(q->funcs[f0].addr, 16 + 8);
	CHECK_EQ_INT(q->funcs[f0].size, 0x40);
	bool via_a = pp.clones[0].cs_addr == 0x1010;
	uint32_t fc = via_a ? fa : fb, fo = via_a ? fb : fa;
	uint32_t gc = via_a ? ga : gb, go = via_a ? gb : ga;
	CHECK_EQ_INT(q->nodes[fc].func, f0);
	CHECK_EQ_INT(q->nodes[fo].func, F);
	CHECK_EQ_INT(q->nodes[fc].height, 64);
	CHECK_EQ_INT(q->nodes[fo].height, 64);
	CHECK_EQ_INT(q->nodes[go].height, 128 + 32);
	CHECK_EQ_INT(q->nodes[gc].height, 128 + pp.clones[0].pad);
	CHECK(pm_fragment_frame(q, fc) && pm_fragment_frame(q, fo));
	struct pm_stats st;
	CHECK(pm_stats(q, &st) == 0);
	CHECK_EQ_INT(st.precise_paths, st.paths);
	pm_free(q);
	/* a clone whose frame holds fragments of two functions */
	uint32_t F2 = pm_add_function(pm, m, 0x9100, 0x10, "O.cold.1");
	pm_add_node(pm, oa, F2, PM_NONE, 0, 64, 1);
	pp.clones[0] = (struct da_pm_clone){O, m, 0x1010, 0, DA_NONE, 0, false, false, false};
	pp.nclone_wraps = 0;
	CHECK(da_predict_pathmap(pm, &pp, &q, err, sizeof(err)) < 0);
	CHECK(strstr(err, "two fragments") != NULL);
	da_pm_plan_free(&pp);
	da_result_free(&res);
	da_bridge_free(&br);
	pm_free(pm);
}

static void write_text(const char *file, const char *text)
{
	FILE *f = fopen(file, "w");
	fputs(text, f);
	fclose(f);
}

/* Every damaged or foreign plan is refused with a line saying why. */
static void test_refusals(void)
{
	struct pathmap *pm = pst_sample();
	static const struct {
		const char *text, *want;
	} cases[] = {
		{"", "empty file"},
		{"hello 1\n", "not an icpp plan"},
		{"icpp-plan 2\nunit functions\nend 0\n", "plan format 2"},
		{"icpp-plan 1\nunit functions\n", "truncated (no end line)"},
		{"icpp-plan 1\nunit functions\nend 0", "no newline"},
		{"icpp-plan 1\nend 0\n", "no unit line"},
		{"icpp-plan 1\nunit functions\nend 1\n", "record count"},
		{"icpp-plan 1\nunit functions\nend 0\npad 0 0x1000 16 M\n", "after the end"},
		{"icpp-plan 1\nunit functions\nfrobnicate 3\nend 0\n", "unknown line"},
		{"icpp-plan 1\nunit functions\nleft tired edges 3\nend 0\n", "left REASON KIND COUNT"},
		{"icpp-plan 1\nunit both\nend 0\n", "unit functions|callsites"},
		{"icpp-plan 1\nunit functions\npad 0 0x1000 16 M\nend 1\n", "pad MODULE"},
		{"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\npad 0 0x1000 24 M\nend 1\n",
		 "nonzero multiple of 16"},
		{"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\npad 0 0x1004 16 M\nend 1\n",
		 "no function of the pathmap starts"},
		/* numbers as the format writes them: found by test_plan_parse, a
		 * ratio written back as 309 digits, an octal-looking amount */
		{"icpp-plan 1\nunit functions\ngrowth 1e308 0\nend 0\n", "growth RATIO BYTES"},
		{"icpp-plan 1\nunit functions\ngrowth nan 0\nend 0\n", "growth RATIO BYTES"},
		{"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\npad 0 4096 16 M\nend 1\n",
		 "pad MODULE"},
		{"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\npad 0 0x0x1000 16 M\nend 1\n",
		 "pad MODULE"},
		{"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\npad 0 0x1000 0020 M\nend 1\n",
		 "nonzero multiple of 16"},
		{"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\npad 0 0x1000 0x10 M\nend 1\n",
		 "nonzero multiple of 16"},
		{"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\npad 0 0x1000 16 M\n"
		 "pad 0 0x1000 32 M\nend 2\n", "padded twice"},
		{"icpp-plan 1\nunit functions\nmodule 0 99999999 /usr/bin/prog\nend 0\n", "another build"},
		{"icpp-plan 1\nunit functions\nmodule 0 - /usr/bin/other\nend 0\n", "not in the pathmap"},
		{"icpp-plan 1\nunit functions\nmodule 1 12345678 /usr/bin/prog\nend 0\n", "numbered from 0"},
		{"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\nwrap 0 0x1010 2048\nend 1\n",
		 "wrap MODULE"},
		{"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\nclone-wrap 0 0 0x1010 16\nend 1\n",
		 "a clone above"},
		{"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\nclone 1 0 0x1000 0 0x1010 0\nend 1\n",
		 "K from 0"},
		{"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\nclone 0 0 0x1000 0 0x1010 0 in 0\n"
		 "end 1\n", "J a clone above"},
		{"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\nclone 0 0 0x1000 0 0x1010 0\n"
		 "clone 1 0 0x2000 0 0x1010 0 of 0\nend 2\n", "J a clone above"},
		{"icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\nclone 0 0 0x1000 0 0x1010 0\n"
		 "clone 1 0 0x2000 0 0x1010 0 in 0 promote now\nend 2\n", "J a clone above"},
	};
	char err[512];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *file = path_in("bad.plan");
		write_text(file, cases[i].text);
		struct da_pm_plan pp;
		int rc = da_plan_read(file, pm, &pp, err, sizeof(err));
		CHECK(rc < 0);
		if (rc == 0) {
			fprintf(stderr, "case %zu accepted\n", i);
			da_pm_plan_free(&pp);
		} else if (!strstr(err, cases[i].want)) {
			fprintf(stderr, "case %zu: \"%s\" lacks \"%s\"\n", i, err, cases[i].want);
			check_failures++;
		}
		CHECK(!strncmp(err, file, strlen(file)));    /* names the file */
	}
	/* a binary file */
	const char *file = path_in("bin.plan");
	FILE *f = fopen(file, "w");
	fwrite("icpp-plan 1\n\0\n", 1, 14, f);
	fclose(f);
	struct da_pm_plan pp;
	CHECK(da_plan_read(file, pm, &pp, err, sizeof(err)) < 0);
	CHECK(strstr(err, "binary") != NULL);
	CHECK(da_plan_read(path_in("missing.plan"), pm, &pp, err, sizeof(err)) < 0);
	/* "deeper", written before clone chains, counts as blocked */
	write_text(file, "icpp-plan 1\nunit functions\nleft deeper order 3\nleft blocked order 2\n"
			 "end 0\n");
	CHECK(da_plan_read(file, pm, &pp, err, sizeof(err)) == 0);
	CHECK_EQ_INT(pp.summary.left_by[DA_LEFT_BLOCKED][DA_DIFF_ORDER], 5);
	da_pm_plan_free(&pp);
	/* a valid hand-written plan with a comment, a blank line and spaces in a path */
	write_text(path_in("ok.plan"),
		   "icpp-plan 1\n# comment\n\nunit callsites\nseed 3\nmodule 0 12345678 /usr/bin/prog\n"
		   "pad 0 0x1000 32 M\nwrap 0 0x1010 16\nend 2\n");
	CHECK(da_plan_read(path_in("ok.plan"), pm, &pp, err, sizeof(err)) == 0);
	CHECK_EQ_INT(pp.npads, 1);
	CHECK_EQ_INT(pp.pads[0].func, 0);
	CHECK_EQ_INT(pp.pads[0].bytes, 32);
	CHECK_EQ_INT(pp.nwraps, 1);
	CHECK_EQ_INT(pp.summary.unit, DA_UNIT_CALLSITES);
	CHECK_EQ_INT(pp.summary.seed, 3);
	da_pm_plan_free(&pp);
	/* writing into a missing directory fails and leaves nothing */
	struct da_pm_plan empty = {0};
	CHECK(da_plan_write(path_in("no/such/dir.plan"), pm, &empty, err, sizeof(err)) < 0);
	pm_free(pm);
}

/* ---------------------------------------------------------------- icpp plan */

/* icpp plan in-process (tests/cli_run.h); the arguments end with NULL. */
#define run(...) cli_run(cmd_plan, "plan", __VA_ARGS__)

static void test_cli(void)
{
	struct pathmap *pm = pst_sample();
	char err[256];
	char map[256], plan[256], pred[256];
	snprintf(map, sizeof(map), "%s", path_in("s.icpp"));
	CHECK(pm_write(pm, map, err, sizeof(err)) == 0);
	CHECK_EQ_INT(run("--help", NULL), 0);
	CONTAINS(cli_out, "usage: icpp plan");
	CONTAINS(cli_out, "example:");
	CHECK_EQ_INT(run(NULL), 2);
	CONTAINS(cli_err, "icpp: plan: expected one pathmap");
	CHECK_EQ_INT(run("--frob", map, NULL), 2);
	CONTAINS(cli_err, "icpp plan --help");
	CHECK_EQ_INT(run("--max-stack-growth", "0.5", map, NULL), 2);
	CONTAINS(cli_err, "at least 1");
	CHECK_EQ_INT(run("--max-recursion-growth", "x", map, NULL), 2);
	CONTAINS(cli_err, "--max-recursion-growth wants a factor of at least 1");
	CHECK_EQ_INT(run("--pad-bound", "20", map, NULL), 2);
	CHECK_EQ_INT(run("--seed", "x", map, NULL), 2);
	const char *bad_budgets[] = {"0", "M", "5X", "-1M", "20000000000G", ""};
	for (size_t i = 0; i < sizeof(bad_budgets) / sizeof(*bad_budgets); i++) {
		CHECK_EQ_INT(run("--budget", bad_budgets[i], map, NULL), 2);
		CONTAINS(cli_err, "--budget wants a positive number");
	}
	CHECK_EQ_INT(run("-q", "--budget", "2K", "-o", path_in("k.plan"), map, NULL), 0);
	CHECK_EQ_INT(run("-q", "--budget", "50M", "-o", path_in("m.plan"), map, NULL), 0);
	CHECK_EQ_INT(run("-q", "--max-recursion-growth", "2", "-o", path_in("r.plan"), map, NULL), 0);
	const char *bad_searches[] = {"0", "65", "x", "-1", ""};
	for (size_t i = 0; i < sizeof(bad_searches) / sizeof(*bad_searches); i++) {
		CHECK_EQ_INT(run("--searches", bad_searches[i], map, NULL), 2);
		CONTAINS(cli_err, "--searches wants a count from 1 to 64");
	}
	CHECK_EQ_INT(run("--searches", "3", "-o", path_in("n.plan"), map, NULL), 0);
	CONTAINS(cli_out, "3 searches (the plan of search ");
	CHECK_EQ_INT(run("--searches", "1", "-o", path_in("n.plan"), map, NULL), 0);
	CONTAINS(cli_out, "1 search (the plan of search 1)");
	/* on a terminal, a line as each search ends; -q and a file: none */
	cli_err_tty = true;
	CHECK_EQ_INT(run("--searches", "2", "-o", path_in("n.plan"), map, NULL), 0);
	CONTAINS(cli_err, "solving...");
	CONTAINS(cli_err, "icpp plan: search 1 of 2 done after ");
	CONTAINS(cli_err, "icpp plan: search 2 of 2 done after ");
	CONTAINS(cli_err, "100.0% of paths precise (the best plan so far: search 1, 100.0%)");
	CHECK_EQ_INT(run("-q", "--searches", "2", "-o", path_in("n.plan"), map, NULL), 0);
	CHECK(!strstr(cli_err, "search"));
	cli_err_tty = false;
	CHECK_EQ_INT(run("--searches", "2", "-o", path_in("n.plan"), map, NULL), 0);
	CHECK(!strstr(cli_err, "search"));
	CHECK_EQ_INT(run(path_in("missing.icpp"), NULL), 1);
	CHECK(strchr(cli_err, '\n') == cli_err + strlen(cli_err) - 1);   /* one line */

	/* default output: the map's name with .plan */
	CHECK_EQ_INT(run("-q", map, NULL), 0);
	CONTAINS(cli_out, "written to ");
	CONTAINS(cli_out, "s.plan");
	CONTAINS(cli_out, "precise paths                             66.7%       100.0%");
	CONTAINS(cli_out, "no ambiguous CIDs left");
	/* Figure 5.4's pair is separated by a wrap, whose calls run a trampoline */
	CONTAINS(cli_out, "% of the entries run a trampoline (a wrapped call or an entry wrapper: "
			  "--wrap-weight prices them higher)\n");
	struct stat sb;
	CHECK(stat(path_in("s.plan"), &sb) == 0);

	/* ARR only: Figure 5.4's pair stays, reported as disabled */
	snprintf(plan, sizeof(plan), "%s", path_in("arr.plan"));
	snprintf(pred, sizeof(pred), "%s", path_in("arr.icpp"));
	CHECK_EQ_INT(run("--no-wrap", "-o", plan, "--predict", pred, "--seed", "5", map, NULL), 0);
	CONTAINS(cli_out, "collisions left (pairs of paths at one CID): 1");
	CHECK(!strstr(cli_out, "run a trampoline"));
	CONTAINS(cli_out, "disabled");
	CHECK(!strstr(cli_out, "clones were priced"));    /* nothing could be cloned */
	CONTAINS(cli_out, "G@");
	CONTAINS(cli_out, "M > B > C > G");
	CONTAINS(cli_out, "predicted pathmap written to");
	CHECK(stat(pred, &sb) == 0);
	{
		void *buf;
		size_t len;
		CHECK(read_file(plan, &buf, &len, err, sizeof(err)) == 0);
		CONTAINS((char *)buf, "\nleft disabled edges 1\n");
		free(buf);
	}
	struct pathmap *q;
	CHECK(pm_read(pred, &q, err, sizeof(err)) == 0);
	struct pm_stats st;
	CHECK(pm_stats(q, &st) == 0);
	CHECK_EQ_INT(st.precise_paths, 10);         /* 12 less the Figure 5.4 pair */
	pm_free(q);
	/* the same plan evaluated from its file: the same figures */
	char first[1 << 16];
	strcpy(first, strstr(cli_out, "precise paths"));
	*strstr(first, "plan:") = 0;
	CHECK_EQ_INT(run("--no-wrap", "--evaluate", plan, map, NULL), 0);
	CONTAINS(cli_out, first);
	/* the price of new code: without wraps the Figure 5.4 pair takes a
	 * clone when code is free, none when each byte costs a path */
	CHECK_EQ_INT(run("--no-wrap", "--clone", "--code-per-path", "0", "-o", plan, map, NULL), 0);
	CONTAINS(cli_out, "no ambiguous CIDs left");
	CHECK_EQ_INT(run("--no-wrap", "--clone", "--code-per-path", "1", "--precision", "0", "-o",
			 plan, map, NULL), 0);
	CONTAINS(cli_out, "collisions left (pairs of paths at one CID): 1");
	CHECK(!strstr(cli_out, "prices of run time, code and stack were lowered"));
	CONTAINS(cli_out, "clones were priced at 1 bytes of new code per path made precise");
	/* and why: the least clone that separates it costs more than its paths */
	CONTAINS(cli_out, "1 of the unsolved only clones cure, at ");
	CONTAINS(cli_out, "worth at 1 bytes a\n  path (--code-per-path");
	CONTAINS(cli_out, "(edges differ, cure clone, ");
	CONTAINS(cli_out, " bytes of clones or more)");
	/* the top-up (--precision, default 99): eight rounds lower the price of
	 * code to 0.058 of 1 byte a path, still too high; at 100 bytes a path
	 * one round takes the clone */
	CHECK_EQ_INT(run("--no-wrap", "--clone", "--code-per-path", "1", "-o", plan, map, NULL), 0);
	CONTAINS(cli_out, "collisions left (pairs of paths at one CID): 1");
	CONTAINS(cli_out, "  the prices of run time, code and stack were lowered to 0.06x of the options' in 8 "
			  "rounds: 83.33% of the reducible paths precise, short of --precision 99\n");
	CONTAINS(cli_out, "clones were priced at 17 bytes of new code per path made precise");
	/* on a terminal, a line as each round ends, the last one's too */
	cli_err_tty = true;
	CHECK_EQ_INT(run("--no-wrap", "--clone", "--code-per-path", "1", "-o", plan, map, NULL), 0);
	CONTAINS(cli_err, "icpp plan: top-up round 1 of at most 8 done after ");
	CONTAINS(cli_err, "s: prices at 0.70x, 83.33% of the reducible paths precise");
	CONTAINS(cli_err, "icpp plan: top-up round 8 of at most 8 done after ");
	CONTAINS(cli_err, "s: prices at 0.06x, 83.33% of the reducible paths precise");
	CHECK_EQ_INT(run("--no-wrap", "--clone", "--code-per-path", "100", "-o", plan, map, NULL), 0);
	CONTAINS(cli_err, "icpp plan: top-up round 1 of at most 8 done after ");
	CONTAINS(cli_err, "s: prices at 0.70x, 100.00% of the reducible paths precise");
	CHECK(!strstr(cli_err, "round 2"));
	CHECK_EQ_INT(run("-q", "--no-wrap", "--clone", "--code-per-path", "100", "-o", plan, map,
			 NULL), 0);
	CHECK(!strstr(cli_err, "top-up"));
	cli_err_tty = false;
	CHECK_EQ_INT(run("--no-wrap", "--clone", "--code-per-path", "100", "-o", plan, map, NULL), 0);
	CHECK(!strstr(cli_err, "top-up"));
	CONTAINS(cli_out, "no ambiguous CIDs left");
	CONTAINS(cli_out, "  the prices of run time, code and stack were lowered to 0.70x of the options' in 1 "
			  "round: 100.00% of the reducible paths precise, as --precision 99 asks (0: "
			  "the prices as given)\n");
	CHECK_EQ_INT(run("--precision", "101", map, NULL), 2);
	CONTAINS(cli_err, "--precision wants a percentage of the reducible paths from 0 (the prices "
			  "as given) to 100, not '101'");
	CHECK_EQ_INT(run("--precision", "", map, NULL), 2);
	/* and the price of hot code: the clone's frames take all of its
	 * function's entries, so at 1 byte of it a path the clone costs more
	 * than its paths, while new code is free */
	CHECK_EQ_INT(run("--no-wrap", "--clone", "--code-per-path", "0", "--hot-code-per-path", "1",
			 "-o", plan, map, NULL), 0);
	CONTAINS(cli_out, "collisions left (pairs of paths at one CID): 1");
	CHECK_EQ_INT(run("--code-per-path", "-5", map, NULL), 2);
	CONTAINS(cli_err, "--code-per-path wants bytes");
	CHECK_EQ_INT(run("--hot-code-per-path", "many", map, NULL), 2);
	CONTAINS(cli_err, "--hot-code-per-path wants bytes from 0 (code is free) to 1048576, not 'many'");
	CHECK_EQ_INT(run("--dispatch-weight", "x", map, NULL), 2);
	CONTAINS(cli_err, "--dispatch-weight wants a number from 0");
	CHECK_EQ_INT(run("--dispatch-weight", "1001", map, NULL), 2);
	CHECK_EQ_INT(run("--wrap-weight", "-1", map, NULL), 2);
	CONTAINS(cli_err, "--wrap-weight wants a number from 0 (run time is free) to 1000, not '-1'");
	CHECK_EQ_INT(run("--evaluate", plan, "-o", plan, map, NULL), 2);
	write_text(path_in("junk.plan"), "junk\n");
	CHECK_EQ_INT(run("--evaluate", path_in("junk.plan"), map, NULL), 1);
	CONTAINS(cli_err, "not an icpp plan");
	pm_free(pm);
}

/* A collision left at a clone names the clone and the function it copies:
 * R > A > F and R > B > A > F both enter F by A's call, which clone 0 of F
 * takes from R > C > F, so that the two stay together at the clone. */
static void test_clone_leftover(void)
{
	struct pathmap *pm = pm_new();
	uint32_t m = pm_add_module(pm, "/usr/bin/prog", PST_ID, sizeof(PST_ID));
	uint32_t R = pm_add_function(pm, m, 0x1000, 0x100, "R");
	uint32_t A = pm_add_function(pm, m, 0x2000, 0x100, "A");
	uint32_t B = pm_add_function(pm, m, 0x3000, 0x100, "B");
	uint32_t C = pm_add_function(pm, m, 0x4000, 0x100, "C");
	uint32_t F = pm_add_function(pm, m, 0x5000, 0x100, "F");
	uint32_t r = pm_add_node(pm, PM_NONE, R, PM_NONE, 0, 16, 1);
	uint32_t a = pm_add_node(pm, r, A, m, 0x1010, 48, 1);
	uint32_t b = pm_add_node(pm, r, B, m, 0x1020, 32, 1);
	uint32_t ba = pm_add_node(pm, b, A, m, 0x3010, 48, 1);
	uint32_t c = pm_add_node(pm, r, C, m, 0x1030, 48, 1);
	pm_add_node(pm, a, F, m, 0x2010, 96, 1);
	pm_add_node(pm, ba, F, m, 0x2010, 96, 1);
	pm_add_node(pm, c, F, m, 0x4010, 96, 1);
	char err[256], map[256], plan[256];
	snprintf(map, sizeof(map), "%s", path_in("cl.icpp"));
	snprintf(plan, sizeof(plan), "%s", path_in("cl.plan"));
	CHECK(pm_write(pm, map, err, sizeof(err)) == 0);
	write_text(plan, "icpp-plan 1\nunit functions\nmodule 0 12345678 /usr/bin/prog\n"
			 "clone 0 0 0x5000 0 0x2010 0\nend 1\n");
	CHECK_EQ_INT(run("--clone", "--evaluate", plan, map, NULL), 0);
	CONTAINS(cli_out, "\n  clone 0 of F@96: degree 2, ");
	CONTAINS(cli_out, "R > B > A > F\n");
	pm_free(pm);
}

/* What icpp plan --binary and icpp rewrite suggest adding for the
 * collisions a plan leaves (rewrite_cap_suggest): the module of a function
 * where collisions stay unsolved, as no clone of it may be made there, and
 * never a program (rewritten by a run of its own) or a program's dynamic
 * loader (the kernel maps it): no LD_LIBRARY_PATH loads a copy of either. */
static void test_suggest(void)
{
	struct bin_peek peek;
	CHECK(bin_peek("/bin/sh", &peek) == 0 && peek.interp && peek.program);
	char *interp = peek.interp;
	if (!interp)
		return;
	struct pathmap *pm = pm_new();
	uint32_t prog = pm_add_module(pm, "/bin/sh", NULL, 0);
	uint32_t ld = pm_add_module(pm, interp, NULL, 0);
	uint32_t lib = pm_add_module(pm, "/lib/libx.so", NULL, 0);
	uint32_t fp = pm_add_function(pm, prog, 0x1000, 0x10, "main");
	uint32_t fl = pm_add_function(pm, lib, 0x2000, 0x10, "helper");
	uint32_t fd = pm_add_function(pm, ld, 0x3000, 0x10, "dl");
	uint32_t root = pm_add_node(pm, PM_NONE, fp, PM_NONE, 0, 100, 1);
	uint32_t a = pm_add_node(pm, root, fl, prog, 0x1004, 200, 3);
	uint32_t b = pm_add_node(pm, root, fd, prog, 0x1008, 200, 1);
	struct da_leftover left[] = {
		{.inst = fl, .height = 200, .degree = 3, .a = a, .b = a, .weight = 3,
		 .why.left = DA_LEFT_UNSOLVED},
		/* the same CID's second pair: its weight counts once */
		{.inst = fl, .height = 200, .degree = 3, .a = a, .b = a, .weight = 3,
		 .why.left = DA_LEFT_UNSOLVED},
		{.inst = fd, .height = 200, .degree = 2, .a = b, .b = b, .weight = 1,
		 .why.left = DA_LEFT_UNSOLVED},
		{.inst = fp, .height = 100, .degree = 2, .a = root, .b = root, .weight = 1,
		 .why.left = DA_LEFT_UNSOLVED},
	};
	struct da_result r = {.left = left, .nleft = 4};
	r.before.weight = 4;
	struct rewrite_cap rc = {.n = 0};       /* nothing rewritten */
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	CHECK(f != NULL);
	if (f) {
		rewrite_cap_suggest(&rc, pm, &r, "", "--binary", f);
		fclose(f);
		CONTAINS(text, "2 unsolved collisions (their CIDs hold 75.0% of the weight) are at "
			       "functions of /lib/libx.so, which is not rewritten here: add --binary "
			       "/lib/libx.so\n");
		CHECK(!strstr(text, interp));
		CHECK(!strstr(text, "/bin/sh"));
	}
	free(text);
	free(interp);
	pm_free(pm);
}

int main(void)
{
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_bridge();
	test_bridge_targets();
	test_bridge_promoted();
	test_bridge_xcall();
	test_bridge_tails();
	test_bridge_tails_any();
	test_bridge_tail_loop();
	test_recursion_group();
	test_round_trip();
	test_clone_file();
	test_fragment_pathmap();
	test_refusals();
	test_suggest();
	test_cli();
	test_clone_leftover();
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (!check_failures && system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
	return check_exit();
}
