/* What icpp rewrite may change in a program, as the solver's capability
 * (cli/rewrite_cap.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/binary.h"
#include "cli/cmds.h"
#include "cli/rewrite_cap.h"
#include "util/fileio.h"
#include "util/grow.h"
#include "util/order.h"
#include "uthash.h"

/* the solver plans no more dispatched clones per function than the rewriter
 * applies */
_Static_assert(DA_MAX_DISPATCH == RW_MAX_DISPATCH, "dispatch limits differ");

const struct rewrite_target *rewrite_cap_target(const struct rewrite_cap *rc, uint32_t m)
{
	for (uint32_t i = 0; i < rc->n; i++)
		if (rc->t[i].module == m)
			return &rc->t[i];
	return NULL;
}

static void func_hook(void *ctx, const struct pathmap *pm, uint32_t func, da_mask *mask,
		      bool *cloneable, da_mask *clone_mask, bool *dispatch, bool *pad_runs,
		      uint32_t *pad_in_place)
{
	const struct rewrite_target *c = rewrite_cap_target(ctx, pm->funcs[func].module);
	size_t n;
	const struct rw_func *f = c ? rw_functions(c->b, &n) : NULL;
	uint32_t i = c ? rw_func_index(c->b, pm->funcs[func].addr) : RW_NONE;
	if (i == RW_NONE || c->vis.no_pad[i]) {
		*mask = *clone_mask = 1;
		*cloneable = *dispatch = *pad_runs = false;
		return;
	}
	da_mask in_place = rw_in_place_mask(&f[i]);      /* the entry wrapper pads the rest */
	/* an entry wrapper would move the frame of a tail call training saw */
	bool wrapper = f[i].pad_entry && !(f[i].entry_tail && c->vis.tail_seen[i]);
	*mask &= wrapper ? f[i].pad_mask : in_place;
	*cloneable = f[i].cloneable;
	/* a clone is padded in place only: it has no entry wrapper */
	*clone_mask &= in_place;
	*dispatch = f[i].dispatch;
	*pad_runs = wrapper;
	*pad_in_place = f[i].pad_in_place;
}

/* May another module's calls take a clone of function fi of l by a check? */
static bool xcall_ok(const struct rewrite_target *l, const struct rw_func *lf, uint32_t fi)
{
	return lf[fi].xcall_mark && lf[fi].cloneable && !l->vis.no_pad[fi] &&
	       !rw_tail_calls_self(l->b, fi);
}

/* The first library named after c's module (rewritten after it, so that
 * c's module knows where the clones are: rewriter.h section 1, Cross-module
 * calls) that defines symbol name, and what a GOT slot of it may hold there:
 * its FUNC, or the implementations of its IFUNC (rw_export_impls, into
 * impls, *n of them); NULL when none. */
static const struct rewrite_target *definer(const struct rewrite_cap *rc,
					    const struct rewrite_target *c, const char *name,
					    uint64_t impls[DA_MAX_XCALL], uint32_t *n)
{
	for (const struct rewrite_target *l = c + 1; name && l < rc->t + rc->n; l++)
		if ((*n = rw_export_impls(l->b, name, impls, DA_MAX_XCALL)))
			return l;
	return NULL;
}

/* The routes on from route r, whose function h of l forwards to another
 * module through its slot (rw_func.forward_symbol): to each function of
 * the library that defines that symbol (definer) a clone of may take the
 * call, appended to out (*n of them, DA_MAX_XCALL at most). */
static void hop_routes(const struct rewrite_cap *rc, const struct rewrite_target *l,
		       const struct rw_func *h, struct rewrite_xcall_route r,
		       struct rewrite_xcall_route out[DA_MAX_XCALL], uint32_t *n)
{
	uint64_t impls[DA_MAX_XCALL];
	uint32_t ni = 0;
	const struct rewrite_target *k =
		h->forward_symbol ? definer(rc, l, h->forward_symbol, impls, &ni) : NULL;
	size_t nf;
	const struct rw_func *kf = k ? rw_functions(k->b, &nf) : NULL;
	r.module = k ? k->module : 0;
	r.hop_slot = h->forward_slot;
	for (uint32_t j = 0; j < ni && *n < DA_MAX_XCALL; j++) {
		r.g = impls[j];
		if (xcall_ok(k, kf, rw_func_index(k->b, impls[j])))
			out[(*n)++] = r;
	}
}

/* The routes by which a checked call through a GOT slot of c's module
 * whose symbol is name reaches a function that a clone of may take it
 * (rewriter.h section 1, Cross-module calls): the functions of the library
 * that defines the symbol (definer) that the slot may hold and that take a
 * marker, themselves where they may be cloned and make no tail call of
 * themselves (their frames are the call's own); the function one of them
 * forwards to in its module (rw_func.forward_to: its frames replace the
 * forwarder's); and where one of those forwards to another module, that
 * module's functions (hop_routes).  Into r, their number returned. */
static uint32_t xcall_routes(const struct rewrite_cap *rc, const struct rewrite_target *c,
			     const char *name, struct rewrite_xcall_route r[DA_MAX_XCALL])
{
	uint64_t impls[DA_MAX_XCALL];
	uint32_t ni = 0, n = 0;
	const struct rewrite_target *l = definer(rc, c, name, impls, &ni);
	size_t nf;
	const struct rw_func *lf = l ? rw_functions(l->b, &nf) : NULL;
	for (uint32_t i = 0; i < ni; i++) {
		uint32_t fi = rw_func_index(l->b, impls[i]);
		if (!lf[fi].xcall_mark)
			continue;
		struct rewrite_xcall_route base = {.module = l->module, .hm = l->module,
						   .g = impls[i], .h = impls[i]};
		if (xcall_ok(l, lf, fi) && n < DA_MAX_XCALL)
			r[n++] = base;
		uint32_t gi = lf[fi].forward_to ? rw_func_index(l->b, lf[fi].forward_to) : RW_NONE;
		if (gi == RW_NONE) {
			hop_routes(rc, l, &lf[fi], base, r, &n);
			continue;
		}
		base.fwd = base.g = lf[fi].forward_to;
		base.fwd_slot = lf[fi].forward_slot;
		if (xcall_ok(l, lf, gi) && n < DA_MAX_XCALL)
			r[n++] = base;
		hop_routes(rc, l, &lf[gi], base, r, &n);
	}
	return n;
}

/* The functions call cs makes through its GOT slot may reach by a check
 * (xcall_routes): into cc. */
static void xcall_target(const struct rewrite_cap *rc, const struct rewrite_target *c,
			 const struct rw_call *cs, struct da_callsite_cap *cc)
{
	struct rewrite_xcall_route r[DA_MAX_XCALL];
	uint32_t n = cs->xcallable ? xcall_routes(rc, c, cs->target_name, r) : 0;
	for (uint32_t i = 0; i < n; i++)
		cc->xcall[cc->nxcall++] = (struct da_xcall_target){r[i].module, r[i].g};
}

static int cmp_pm_clone(const void *x, const void *y)
{
	const struct da_pm_clone *a = x, *b = y;
	if (a->cs_module != b->cs_module)
		return a->cs_module < b->cs_module ? -1 : 1;
	if (a->cs_addr != b->cs_addr)
		return a->cs_addr < b->cs_addr ? -1 : 1;
	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	return (a->func > b->func) - (a->func < b->func);
}

/* Append clone (func, the call at site of module m, its copy in clone
 * parent) to the n of *v (capacity *cap), checked.  0, or -1 when out of
 * memory. */
static int add_xcall_clone(struct da_pm_clone **v, uint32_t *n, uint32_t *cap, uint32_t func,
			   uint32_t m, uint64_t site, uint32_t parent)
{
	if (!grow_array((void **)v, (uint64_t)*n + 1, cap, sizeof(**v)))
		return -1;
	(*v)[(*n)++] = (struct da_pm_clone){func, m, site, 0, parent, 0, false, true, false};
	return 0;
}

int rewrite_cap_everything_xcalls(const struct rewrite_cap *rc, struct pathmap *pm,
				  struct da_pm_plan *pp)
{
	struct da_pm_clone *add = NULL;
	uint32_t n = 0, cap = 0;
	/* the plan's clones by function: function << 32 | clone */
	uint64_t *byfunc = malloc((pp->nclones + 1) * sizeof(*byfunc));
	if (!byfunc)
		return -1;
	uint32_t nclones = pp->nclones;     /* the plan's own, before those added */
	for (uint32_t j = 0; j < nclones; j++)
		byfunc[j] = (uint64_t)pp->clones[j].func << 32 | j;
	qsort(byfunc, nclones, sizeof(*byfunc), u64_cmp);
	for (uint32_t i = 0; i < pm->nnodes; i++) {
		const struct pm_node *nd = &pm->nodes[i];
		const struct rewrite_target *c = nd->cs_module == PM_NONE ? NULL
									  : rewrite_cap_target(rc, nd->cs_module);
		size_t ncalls, nf;
		const struct rw_call *cs = c ? rw_calls(c->b, &ncalls) : NULL;
		uint32_t ci = c ? rw_call_index(c->b, nd->cs_addr) : RW_NONE;
		if (ci == RW_NONE || c->vis.no_wrap[ci])
			continue;
		struct da_callsite_cap cc = {0};
		xcall_target(rc, c, &cs[ci], &cc);
		const struct pm_function *f = &pm->funcs[nd->func];
		bool takes = false;
		for (uint32_t k = 0; k < cc.nxcall && !takes; k++)
			takes = f->module == cc.xcall[k].module && f->addr == cc.xcall[k].addr;
		if (!takes)
			continue;
		if (add_xcall_clone(&add, &n, &cap, nd->func, nd->cs_module, nd->cs_addr, DA_NONE) < 0)
			goto oom;
		/* and its copies in the clones of the function making the call:
		 * a chain across modules */
		uint32_t g = pm_function_at(pm, nd->cs_module, rw_functions(c->b, &nf)[cs[ci].func].addr);
		uint32_t lo = 0, hi = nclones;
		while (g != PM_NONE && lo < hi) {       /* the first clone of g */
			uint32_t mid = lo + (hi - lo) / 2;
			if (byfunc[mid] >> 32 < g)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (uint32_t j = lo; g != PM_NONE && j < nclones && byfunc[j] >> 32 == g; j++)
			if (add_xcall_clone(&add, &n, &cap, nd->func, nd->cs_module, nd->cs_addr,
					    (uint32_t)byfunc[j]) < 0)
				goto oom;
	}
	if (n)
		qsort(add, n, sizeof(*add), cmp_pm_clone);
	struct da_pm_clone *all = realloc(pp->clones, (pp->nclones + n + 1) * sizeof(*all));
	if (!all)
		goto oom;
	pp->clones = all;
	for (uint32_t i = 0; i < n; i++)     /* one clone per (function, call, copy) */
		if (!i || cmp_pm_clone(&add[i - 1], &add[i]))
			pp->clones[pp->nclones++] = add[i];
	free(add);
	free(byfunc);
	return 0;
oom:
	free(add);
	free(byfunc);
	return -1;
}

static void callsite_hook(void *ctx, const struct pathmap *pm, uint32_t module, uint64_t addr,
			  struct da_callsite_cap *cc)
{
	const struct rewrite_target *c = rewrite_cap_target(ctx, module);
	size_t n;
	const struct rw_call *cs = c ? rw_calls(c->b, &n) : NULL;
	uint32_t i = c ? rw_call_index(c->b, addr) : RW_NONE;
	cc->wrap_mask &= i == RW_NONE || c->vis.no_wrap[i] ? 1 : cs[i].wrap_mask;
	cc->redirectable = i != RW_NONE && !c->vis.no_wrap[i] && cs[i].redirectable;
	cc->target = i != RW_NONE ? rw_call_callee(&cs[i]) : 0;
	cc->wrap_copy = i != RW_NONE ? cs[i].stack_args : 0;
	/* a call whose frames the map may not show as they run keeps its
	 * callee's original code, as it keeps its height */
	cc->dispatchable = i != RW_NONE && !c->vis.no_wrap[i];
	/* a tag names its module by build-id: two modules without one could
	 * give two calls the same tag */
	cc->taggable = cc->dispatchable && cs[i].taggable && pm->modules[module].build_id_len;
	cc->bound = cc->redirectable && cs[i].bind;
	cc->promoted = i != RW_NONE && !c->vis.no_wrap[i] && cs[i].promote_from;
	if (i != RW_NONE && !c->vis.no_wrap[i])
		xcall_target(ctx, c, &cs[i], cc);
}

static bool tail_enters(void *ctx, const struct pathmap *pm, uint32_t callee, uint32_t func)
{
	const struct pm_function *g = &pm->funcs[callee], *f = &pm->funcs[func];
	const struct rewrite_target *c = rewrite_cap_target(ctx, g->module);
	uint32_t i = c ? rw_func_index(c->b, g->addr) : RW_NONE;
	/* a function of a module not rewritten: not known, so it may */
	return i == RW_NONE || rw_may_tail_call(c->b, i, f->module == g->module ? f->addr : 0);
}

/* Function g's tail routes (rw_tail_routes): a function of its module (any
 * of them, by promotion stubs of its indirect tail jumps), or through a PLT
 * stub the functions of the library that defines its symbol (definer) that
 * another module's check may take (xcall_ok), entered through the check's
 * thunk (rewriter.h section 1, Tail chains). */
static uint32_t tail_targets(void *ctx, const struct pathmap *pm, uint32_t g,
			     struct da_tail_target *out, uint32_t max)
{
	const struct rewrite_cap *rc = ctx;
	const struct pm_function *gf = &pm->funcs[g];
	const struct rewrite_target *c = rewrite_cap_target(rc, gf->module);
	uint32_t gi = c ? rw_func_index(c->b, gf->addr) : RW_NONE, n = 0;
	struct rw_tail_jump r[DA_MAX_XCALL];
	uint32_t nr = gi == RW_NONE ? 0 : rw_tail_routes(c->b, gi, r, DA_MAX_XCALL);
	for (uint32_t i = 0; i < nr && n < max; i++) {
		uint64_t impls[DA_MAX_XCALL];
		uint32_t ni = 1;
		const struct rewrite_target *l = c;
		if (!r[i].to) {         /* by promotion stubs, to any function of c */
			out[n++] = (struct da_tail_target){c->module, 0, r[i].at, false, true};
			continue;
		}
		bool local = rw_func_index(c->b, r[i].to) != RW_NONE;
		if (!local)
			l = definer(rc, c, rw_slot_symbol(c->b, r[i].slot), impls, &ni);
		else
			impls[0] = r[i].to;
		size_t nf;
		const struct rw_func *lf = l ? rw_functions(l->b, &nf) : NULL;
		for (uint32_t k = 0; l && k < ni && n < max; k++) {
			uint32_t fi = rw_func_index(l->b, impls[k]);
			if (!local && (fi == RW_NONE || !xcall_ok(l, lf, fi)))
				continue;
			out[n++] = (struct da_tail_target){l->module, impls[k], r[i].at,
							   local && r[i].slot, false};
		}
	}
	return n;
}

/* The symbol of the PLT stub whose tail jumps (rw_tail_routes) start with
 * the jump at `at`, or NULL. */
static const char *tail_symbol(const struct rw_binary *b, uint64_t at)
{
	struct rw_tail_jump r, jumps[RW_MAX_TAIL_JUMPS];
	return rw_tail_route_at(b, at, 0, &r, jumps) ? rw_slot_symbol(b, r.slot) : NULL;
}

bool rewrite_cap_xcall_route(const struct rewrite_cap *rc, uint32_t m, uint64_t site, uint32_t gm,
			     uint64_t g, struct rewrite_xcall_route *route)
{
	const struct rewrite_target *c = rewrite_cap_target(rc, m);
	size_t n;
	const struct rw_call *cs = c ? rw_calls(c->b, &n) : NULL;
	uint32_t i = c ? rw_call_index(c->b, site) : RW_NONE;
	const char *name = i != RW_NONE ? cs[i].target_name : c ? tail_symbol(c->b, site) : NULL;
	struct rewrite_xcall_route r[DA_MAX_XCALL];
	uint32_t nr = name ? xcall_routes(rc, c, name, r) : 0;
	for (uint32_t k = 0; k < nr; k++)
		if (r[k].module == gm && r[k].g == g) {
			*route = r[k];
			return true;
		}
	return false;
}

void rewrite_bound_imports(struct rw_binary *b, const struct pathmap *pm, const char *who,
			   bool quiet)
{
	const char **paths = calloc(pm->nmodules + 1, sizeof(*paths));
	const uint8_t **ids = calloc(pm->nmodules + 1, sizeof(*ids));
	uint32_t *lens = calloc(pm->nmodules + 1, sizeof(*lens));
	char err[1024] = "out of memory";
	int n = -1;
	if (paths && ids && lens) {
		for (uint32_t i = 0; i < pm->nmodules; i++) {
			paths[i] = pm->modules[i].path;
			ids[i] = pm->modules[i].build_id_len ? pm->modules[i].build_id : NULL;
			lens[i] = pm->modules[i].build_id_len;
		}
		n = rw_bound_imports(b, paths, ids, lens, pm->nmodules, err, sizeof(err));
	}
	if (n < 0)
		fprintf(stderr, "%s: calls into other modules keep their caller's "
			"stack-argument bounds: %s\n", who, err);
	else if (!quiet && n > 0)
		fprintf(stderr, "%s: %d calls into other modules bounded by their callees' "
			"code\n", who, n);
	free(paths);
	free(ids);
	free(lens);
}

int rewrite_cap_init(struct rewrite_cap *rc, struct rw_binary *const *b, const char *const *paths,
		     uint32_t n, const struct pathmap *pm, const char *map, const char *cmd,
		     bool quiet, struct da_capability *cap)
{
	char who[64];
	snprintf(who, sizeof(who), "icpp %s", cmd);
	if (n > REWRITE_MAX_BINARIES) {
		cli_error(cmd, "at most %d binaries at once", REWRITE_MAX_BINARIES);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++) {
		struct rewrite_target *t = &rc->t[i];
		t->b = b[i];
		t->path = paths[i];
		t->module = rw_find_module(pm, b[i]);
		if (t->module == PM_NONE) {
			cli_error(cmd, "pathmap %s has no module with the build-id of %s: train this "
				  "build (icpp train -o %s -- PROG ...)", map, paths[i], map);
			return -1;
		}
		if (rewrite_cap_target(rc, t->module)) {
			cli_error(cmd, "%s and %s are the same build: name each binary once",
				  rewrite_cap_target(rc, t->module)->path, paths[i]);
			return -1;
		}
		rewrite_bound_imports(b[i], pm, who, quiet);
		if (rw_visibility(b[i], pm, t->module, &t->vis) < 0) {
			cli_error(cmd, "out of memory");
			return -1;
		}
		rc->n++;
		if (!quiet && t->vis.hidden_nodes)
			fprintf(stderr, "%s: %u call paths pass through functions training did not "
				"hook (%u in %s): those and their callers stay as they are\n", who,
				t->vis.hidden_nodes, t->vis.hidden_funcs, paths[i]);
	}
	cap->clone = true;
	cap->func_hook = func_hook;
	cap->callsite_hook = callsite_hook;
	cap->tail_enters = tail_enters;
	cap->tail_targets = tail_targets;
	cap->ctx = rc;
	return 0;
}

/* Mark in seen[] the modules not rewritten of the frames from node x up to,
 * not including, node stop. */
static void mark_frames(const struct rewrite_cap *rc, const struct pathmap *pm, uint32_t x,
			uint32_t stop, bool *seen)
{
	for (; x != stop && x != PM_NONE; x = pm->nodes[x].parent) {
		uint32_t m = pm->funcs[pm->nodes[x].func].module;
		if (!rewrite_cap_target(rc, m))
			seen[m] = true;
	}
}

/* The lowest common ancestor of nodes a and b, or PM_NONE. */
static uint32_t common_ancestor(const struct pathmap *pm, uint32_t a, uint32_t b)
{
	uint32_t da = pm_depth(pm, a), db = pm_depth(pm, b);
	for (; da > db; da--)
		a = pm->nodes[a].parent;
	for (; db > da; db--)
		b = pm->nodes[b].parent;
	while (a != b && a != PM_NONE) {
		a = pm->nodes[a].parent;
		b = pm->nodes[b].parent;
	}
	return a;
}

/* Mark in unloadable[] the modules of pm that no LD_LIBRARY_PATH brings
 * into the program in place of the original: programs (a workload's sh,
 * cat or cmp, the program a library was trained under; each is rewritten
 * as PROG by a run of its own) and the dynamic loader another module's
 * PT_INTERP names (the kernel maps it).  A module whose file is gone stays
 * unmarked. */
static void mark_unloadable(const struct pathmap *pm, bool *unloadable)
{
	for (uint32_t k = 0; k < pm->nmodules; k++) {
		struct bin_peek peek;
		if (bin_peek(pm->modules[k].path, &peek) < 0)
			continue;
		unloadable[k] |= peek.program;
		for (uint32_t m = 0; peek.interp && m < pm->nmodules; m++)
			unloadable[m] |= same_file(peek.interp, pm->modules[m].path);
		free(peek.interp);
	}
}

/* The (up to) three modules of pairs[] with the most weight, a line each:
 * "<who><pairs> <what> (their CIDs hold X% of the weight) <where> MODULE,
 * which is not rewritten here: add <flag> MODULE". */
static void suggest_top(const struct pathmap *pm, const struct da_result *r, uint64_t *weight,
			uint32_t *pairs, const char *who, const char *what, const char *where,
			const char *flag, FILE *out)
{
	for (int k = 0; k < 3; k++) {
		uint32_t best = PM_NONE;
		for (uint32_t m = 0; m < pm->nmodules; m++)
			if (pairs[m] && (best == PM_NONE || weight[m] > weight[best] ||
					 (weight[m] == weight[best] && pairs[m] > pairs[best])))
				best = m;
		if (best == PM_NONE)
			break;
		fprintf(out, "%s%u %s (their CIDs hold %.1f%% of the weight) %s %s, which is not "
			"rewritten here: add %s %s\n", who, pairs[best], what,
			cli_pct(weight[best], r->before.weight, 0), where, pm->modules[best].path, flag,
			pm->modules[best].path);
		pairs[best] = 0;
	}
}

/* A CID whose weight a module's count holds: a CID with several pairs left
 * (degree 3 and up) counts once. */
struct counted_cid {
	struct {
		uint32_t inst, module;
		int64_t height;
		bool unsolved;          /* in uweight, else weight */
	} key;
	UT_hash_handle hh;
};

/* Add l's weight to sum[module] unless that CID is counted there already;
 * false when out of memory. */
static bool count_cid(struct counted_cid **set, const struct da_leftover *l, uint32_t module,
		      bool unsolved, uint64_t *sum)
{
	struct counted_cid k, *c;
	memset(&k, 0, sizeof(k));
	k.key.inst = l->inst;
	k.key.module = module;
	k.key.height = l->height;
	k.key.unsolved = unsolved;
	HASH_FIND(hh, *set, &k.key, sizeof(k.key), c);
	if (c)
		return true;
	if (!(c = malloc(sizeof(*c))))
		return false;
	*c = k;
	HASH_ADD(hh, *set, key, sizeof(c->key), c);
	sum[module] += l->weight;
	return true;
}

void rewrite_cap_suggest(const struct rewrite_cap *rc, const struct pathmap *pm,
			 const struct da_result *r, const char *who, const char *flag, FILE *out)
{
	struct counted_cid *counted = NULL, *c, *tmp;
	size_t nm = (size_t)pm->nmodules + 1;
	uint64_t *weight = calloc(nm, sizeof(*weight)), *uweight = calloc(nm, sizeof(*uweight));
	uint32_t *pairs = calloc(nm, sizeof(*pairs)), *upairs = calloc(nm, sizeof(*upairs));
	bool *seen = calloc(nm, sizeof(*seen)), *unloadable = calloc(nm, sizeof(*unloadable));
	if (!weight || !uweight || !pairs || !upairs || !seen || !unloadable)
		goto out;
	for (uint32_t i = 0; i < r->nleft; i++) {
		const struct da_leftover *l = &r->left[i];
		if ((l->why.left == DA_LEFT_UNSOLVED || l->why.left == DA_LEFT_CROWDED) &&
		    l->inst < pm->nfuncs && !rewrite_cap_target(rc, pm->funcs[l->inst].module)) {
			/* a clone of the function would be a namespace of CIDs
			 * of its own for the calls it takes, but only a module
			 * rewritten here has clones */
			if (!count_cid(&counted, l, pm->funcs[l->inst].module, true, uweight))
				goto out;
			upairs[pm->funcs[l->inst].module]++;
		}
		if (l->why.left != DA_LEFT_BLOCKED)
			continue;
		uint32_t lca = common_ancestor(pm, l->a, l->b);
		memset(seen, 0, pm->nmodules * sizeof(*seen));
		mark_frames(rc, pm, l->a, lca, seen);
		mark_frames(rc, pm, l->b, lca, seen);
		for (uint32_t m = 0; m < pm->nmodules; m++)
			if (seen[m]) {
				if (!count_cid(&counted, l, m, false, weight))
					goto out;
				pairs[m]++;
			}
	}
	mark_unloadable(pm, unloadable);
	for (uint32_t m = 0; m < pm->nmodules; m++)
		if (unloadable[m])
			pairs[m] = upairs[m] = 0;
	suggest_top(pm, r, weight, pairs, who, "blocked collisions", "differ in", flag, out);
	suggest_top(pm, r, uweight, upairs, who, "unsolved collisions", "are at functions of", flag,
		    out);
out:
	HASH_ITER(hh, counted, c, tmp) {
		HASH_DEL(counted, c);
		free(c);
	}
	free(weight);
	free(uweight);
	free(pairs);
	free(upairs);
	free(seen);
	free(unloadable);
}

void rewrite_cap_free(struct rewrite_cap *rc)
{
	for (uint32_t i = 0; i < rc->n; i++)
		rw_visibility_free(&rc->t[i].vis);
	rc->n = 0;
}
