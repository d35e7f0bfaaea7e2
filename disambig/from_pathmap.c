/* Pathmap <-> problem, plans in pathmap terms, the predicted pathmap
 * (from_pathmap.h). */
#include <stdlib.h>
#include <string.h>

#include "disambig/from_pathmap.h"
#include "disambig/internal.h"
#include "disambig/pm_index.h"
#include "util/grow.h"

void da_capability_default(struct da_capability *c)
{
	memset(c, 0, sizeof(*c));
	c->pad_bound = DA_DEFAULT_BOUND;
	c->wrap_bound = DA_DEFAULT_BOUND;
	c->clone = false;
	c->dispatch = true;
	c->tag = true;
	c->promote = true;
	c->tail = true;
}

/* A promoted call's stub compares its operand with a clone's function f: a
 * frame of f that a callee g of the call entered by a tail call was not
 * called as f, so the stub would miss it.  Of the functions training saw
 * entered through a promoted call, those that one of them (f too) may have
 * entered by a tail call (the tail_enters hook) are listed in no_promote:
 * their clones there take a dispatch.  -1 when out of memory. */
static int block_tail_entered(const struct pathmap *pm, const struct da_capability *cap,
			      struct da_problem *p)
{
	if (!cap->tail_enters)
		return 0;
	uint64_t *seen = malloc((p->nnodes + 1) * sizeof(*seen));
	uint32_t n = 0;
	if (!seen)
		return -1;
	for (uint32_t i = 0; i < p->nnodes; i++) {
		uint32_t c = p->nodes[i].callsite;
		if (c != DA_NONE && p->callsites[c].promoted)
			seen[n++] = da_pair(c, p->nodes[i].func);
	}
	qsort(seen, n, sizeof(*seen), u64_cmp);
	uint32_t u = 0;
	for (uint32_t i = 0; i < n; i++)
		if (!u || seen[u - 1] != seen[i])
			seen[u++] = seen[i];
	/* one run per callsite: its callees, each blocked where one of them
	 * may tail-call it */
	uint64_t *blocked = malloc((u + 1) * sizeof(*blocked));
	uint32_t nb = 0;
	for (uint32_t lo = 0, hi; blocked && lo < u; lo = hi) {
		for (hi = lo; hi < u && seen[hi] >> 32 == seen[lo] >> 32; hi++)
			;
		for (uint32_t i = lo; i < hi; i++) {
			bool tail = false;
			for (uint32_t j = lo; j < hi && !tail; j++)
				tail = cap->tail_enters(cap->ctx, pm, (uint32_t)seen[j], (uint32_t)seen[i]);
			if (tail)
				blocked[nb++] = seen[i];
		}
	}
	free(seen);
	if (!blocked)
		return -1;
	free(p->no_promote);
	p->no_promote = blocked;
	p->nno_promote = nb;
	return 0;
}

/* Without the rewriter's analysis, the function a callsite calls is the one
 * that training saw entered through it; a callsite through which it saw
 * several (a callee's tail call) is not redirected. */
static void seen_targets(struct da_problem *p)
{
	for (uint32_t i = 0; i < p->nnodes; i++) {
		uint32_t c = p->nodes[i].callsite;
		if (c == DA_NONE || !p->callsites[c].redirectable)
			continue;
		struct da_callsite *C = &p->callsites[c];
		if (C->target == DA_NONE)
			C->target = p->nodes[i].func;
		else if (C->target != p->nodes[i].func)
			C->redirectable = false;
	}
}

static void unchangeable(struct da_func *f)
{
	f->pad_mask = f->clone_pad_mask = 1;
	f->cloneable = f->dispatch = false;
}

/* A dispatch reads the bytes before its return address to test a tag
 * (disambig.h section 2): only in a function that training saw entered by a
 * call every time, never as a thread root (_start finds argc there) nor as
 * a frame without a callsite. */
static void mark_tag_readers(struct da_problem *p)
{
	for (uint32_t f = 0; f < p->nfuncs; f++)
		p->funcs[f].reads_tags = p->funcs[f].dispatch;
	for (uint32_t i = 0; i < p->nnodes; i++)
		if (p->nodes[i].parent == DA_NONE || p->nodes[i].callsite == DA_NONE)
			p->funcs[p->nodes[i].func].reads_tags = false;
}

/* .cold fragments (disambig.h section 2): a node without a callsite at its
 * parent's height (pm_fragment_frame) runs in its parent's frame.  Its
 * function is neither padded nor cloned.  Where the model has no term: a
 * fragment below a fragment leaves its frame's owner unchanged, a node
 * holding two fragments leaves its function unpadded (both would have to
 * stay while the rest moves), and an owner of fragments of two functions is
 * not cloned (a clone copies one).  A clone's code counts its fragment's. */
static int mark_fragments(const struct pathmap *pm, struct da_problem *p)
{
	for (uint32_t i = 0; i < p->nnodes; i++) {
		if (!pm_fragment_frame(pm, i))
			continue;
		struct da_node *n = &p->nodes[i];
		const struct da_node *par = &p->nodes[n->parent];
		unchangeable(&p->funcs[n->func]);
		if (par->fragment)
			unchangeable(&p->funcs[p->nodes[par->parent].func]);
		else
			n->fragment = true;
	}
	uint32_t *frag = da_fragments_of(p), *nfrag = calloc(p->nnodes + 1, sizeof(*nfrag));
	if (!frag || !nfrag) {
		free(frag);
		free(nfrag);
		return -1;
	}
	for (uint32_t i = 0; i < p->nnodes; i++) {
		if (!p->nodes[i].fragment)
			continue;
		struct da_func *o = &p->funcs[p->nodes[p->nodes[i].parent].func];
		if (++nfrag[p->nodes[i].parent] > 1)
			o->pad_mask = o->clone_pad_mask = 1;
	}
	for (uint32_t f = 0; f < p->nfuncs; f++) {
		if (frag[f] == DA_FRAGMENTS_SEVERAL)
			p->funcs[f].cloneable = p->funcs[f].dispatch = false;
		else if (frag[f] != DA_NONE && p->funcs[f].code_bytes)
			p->funcs[f].code_bytes += p->funcs[frag[f]].code_bytes;
	}
	free(frag);
	free(nfrag);
	return 0;
}

/* Recursion's sibling groups (pm_sibling_groups, in_group): which of a
 * group's callsites led to a callee is not in the map, so no plan may move
 * them apart.  They are neither wrapped nor taken by a clone, and the
 * function is not cloned: the copies of its calls would call the original,
 * another function, whose frames training records call by call. */
static void lock_sibling_groups(struct da_problem *p, const bool *in_group)
{
	for (uint32_t i = 0; i < p->nnodes; i++) {
		if (!in_group[i])
			continue;
		struct da_callsite *c = &p->callsites[p->nodes[i].callsite];
		c->wrap_mask = 1;
		c->redirectable = c->dispatchable = c->taggable = false;
		p->funcs[p->nodes[i].func].cloneable = p->funcs[p->nodes[i].func].dispatch = false;
	}
}

/* ---------------------------------------------------------------- function index */

static int cmp_fent(const void *x, const void *y)
{
	const struct pmi_fent *a = x, *b = y;
	if (a->module != b->module)
		return a->module < b->module ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->func < b->func ? -1 : a->func > b->func;
}

int pmi_build(struct pm_index *ix, const struct pathmap *pm)
{
	ix->n = pm->nfuncs;
	ix->f = malloc((ix->n + 1) * sizeof(*ix->f));
	if (!ix->f)
		return -1;
	for (uint32_t i = 0; i < pm->nfuncs; i++)
		ix->f[i] = (struct pmi_fent){pm->funcs[i].module, i, pm->funcs[i].addr,
					     pm->funcs[i].size};
	qsort(ix->f, ix->n, sizeof(*ix->f), cmp_fent);
	return 0;
}

void pmi_free(struct pm_index *ix)
{
	free(ix->f);
	ix->f = NULL;
}

/* First entry with (module, addr) >= key. */
static uint32_t lower(const struct pm_index *ix, uint32_t module, uint64_t addr)
{
	uint32_t lo = 0, hi = ix->n;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		const struct pmi_fent *e = &ix->f[mid];
		if (e->module < module || (e->module == module && e->addr < addr))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint32_t pmi_function_at(const struct pm_index *ix, uint32_t module, uint64_t addr)
{
	uint32_t i = lower(ix, module, addr);
	if (i < ix->n && ix->f[i].module == module && ix->f[i].addr == addr)
		return ix->f[i].func;
	return DA_NONE;
}

uint32_t pmi_owner(const struct pm_index *ix, uint32_t module, uint64_t addr)
{
	if (module == PM_NONE)
		return DA_NONE;
	uint32_t i = lower(ix, module, addr + 1);       /* first start > addr */
	if (i == 0 || ix->f[i - 1].module != module)
		return DA_NONE;
	const struct pmi_fent *e = &ix->f[i - 1];
	if (e->size)
		return addr < e->addr + e->size ? e->func : DA_NONE;
	/* size unknown: up to the next function of the module */
	if (i < ix->n && ix->f[i].module == module)
		return addr < ix->f[i].addr ? e->func : DA_NONE;
	return e->func;
}

uint64_t pmi_cskey(uint32_t module, uint64_t addr)
{
	if (module == PM_NONE || module >= 0xffff || addr >= (1ULL << 48))
		return UINT64_MAX;
	return ((uint64_t)module << 48) | addr;
}

/* ---------------------------------------------------------------- problem */

static bool module_ok(const struct pathmap *pm, const struct da_capability *cap, uint32_t m)
{
	if (m == PM_NONE || m >= pm->nmodules)
		return false;
	if (!cap->module)
		return true;
	size_t lp = strlen(pm->modules[m].path), lm = strlen(cap->module);
	return lp >= lm && !strcmp(pm->modules[m].path + lp - lm, cap->module);
}

/* The problem's functions: the pathmap's, with what the capability (and
 * its hook) lets the rewriter do to each. */
static int bridge_funcs(const struct pathmap *pm, const struct da_capability *cap,
			struct da_bridge *b)
{
	da_mask pads = cap->pad_bound ? da_mask_upto(cap->pad_bound) : 1;
	for (uint32_t f = 0; f < pm->nfuncs; f++) {
		const struct pm_function *fn = &pm->funcs[f];
		bool ok = module_ok(pm, cap, fn->module);
		da_mask m = ok ? pads : 1;
		bool clone = ok && cap->clone, dispatch = clone && cap->dispatch;
		da_mask cm = m;
		bool runs = false;
		uint32_t in_place = 0;
		if (cap->func_hook) {
			da_mask hm = m, hcm = m;
			bool hc = clone, hd = dispatch;
			cap->func_hook(cap->ctx, pm, f, &hm, &hc, &hcm, &hd, &runs, &in_place);
			m &= hm;
			cm &= hcm;
			clone = clone && hc;
			dispatch = dispatch && clone && hd;
		}
		uint32_t df = da_add_func(b->prob, fn->name, fn->size, m, clone);
		if (df == DA_NONE)
			return -1;
		b->prob->funcs[df].clone_pad_mask = cm | 1;
		b->prob->funcs[df].dispatch = dispatch;
		b->prob->funcs[df].pad_runs = runs && m > 1;
		b->prob->funcs[df].pad_in_place = runs ? in_place : 0;
		b->prob->funcs[df].module = fn->module;
	}
	return 0;
}

/* Problem callsite cs (DA_NONE: none made) is at (module, addr), key its
 * pmi_cskey (cs_index, cs_module, cs_addr).  0, or -1 when out of memory. */
static int bridge_register(struct da_bridge *b, uint32_t *capcs, uint32_t cs, uint32_t module,
			   uint64_t addr, uint64_t key)
{
	if (cs == DA_NONE || u64map_put(b->cs_index, key, cs) < 0)
		return -1;
	if (cs >= *capcs) {
		uint32_t nc = *capcs ? *capcs * 2 : 1024;
		uint32_t *a = realloc(b->cs_module, nc * sizeof(*a));
		if (!a)
			return -1;
		b->cs_module = a;
		uint64_t *c = realloc(b->cs_addr, nc * sizeof(*c));
		if (!c)
			return -1;
		b->cs_addr = c;
		*capcs = nc;
	}
	b->cs_module[cs] = module;
	b->cs_addr[cs] = addr;
	return 0;
}

/* A new callsite of the problem for the call at (module, addr), key its
 * pmi_cskey: what the capability (and its hook) allows, and where it is
 * (cs_module, cs_addr).  Its index, or DA_NONE when out of memory. */
static uint32_t bridge_callsite(const struct pathmap *pm, const struct da_capability *cap,
				const struct pm_index *ix, struct da_bridge *b, uint32_t *capcs,
				uint32_t module, uint64_t addr, uint64_t key)
{
	bool ok = module_ok(pm, cap, module);
	da_mask m = ok ? (cap->wrap_bound ? da_mask_upto(cap->wrap_bound) : 1) : 1;
	bool redirect = ok && cap->clone;
	uint32_t target = DA_NONE;
	bool dispatchable = true, taggable = ok && cap->tag;
	uint32_t copy = 0, xcall[DA_MAX_XCALL], nxcall = 0;
	bool bound = false, promoted = false;
	if (cap->callsite_hook) {
		struct da_callsite_cap cc = {.wrap_mask = m, .redirectable = redirect,
					     .dispatchable = dispatchable, .taggable = taggable};
		cap->callsite_hook(cap->ctx, pm, module, addr, &cc);
		taggable = taggable && cc.taggable;
		dispatchable = cc.dispatchable;
		m &= cc.wrap_mask;
		target = cc.target ? pmi_function_at(ix, module, cc.target) : DA_NONE;
		redirect = redirect && cc.redirectable && target != DA_NONE;
		copy = m > 1 ? cc.wrap_copy : 0;
		bound = redirect && cc.bound;
		promoted = ok && cap->clone && cap->promote && cc.promoted && !cc.target;
		redirect = redirect || promoted;
		bound = bound || promoted;
		for (uint32_t i = 0; ok && cap->clone && i < cc.nxcall; i++)
			if (cc.xcall[i].module != module && module_ok(pm, cap, cc.xcall[i].module) &&
			    (xcall[nxcall] = pmi_function_at(ix, cc.xcall[i].module, cc.xcall[i].addr)) !=
				    DA_NONE)
				nxcall++;
	}
	uint32_t cs = da_add_callsite(b->prob, pmi_owner(ix, module, addr), m, redirect);
	if (bridge_register(b, capcs, cs, module, addr, key) < 0)
		return DA_NONE;
	struct da_callsite *C = &b->prob->callsites[cs];
	C->target = target;
	C->module = module;
	C->dispatchable = dispatchable;
	C->taggable = taggable;
	C->wrap_copy = copy;
	C->bound = bound;
	C->promoted = promoted;
	if (nxcall && da_set_xcall(b->prob, cs, xcall, nxcall) < 0)
		return DA_NONE;
	return cs;
}

/* ---------------------------------------------------------------- tail calls */

/* The tail jumps of function g that the plan's tail clones take, as the
 * tail_targets hook would give them (none bound). */
static uint32_t plan_tail_targets(const struct da_pm_plan *plan, const struct pathmap *pm,
				  const struct pm_index *ix, uint32_t g, struct da_tail_target *out,
				  uint32_t max)
{
	uint32_t n = 0;
	for (uint32_t k = 0; k < plan->nclones && n < max; k++) {
		const struct da_pm_clone *c = &plan->clones[k];
		if (!c->tail || c->func >= pm->nfuncs || pmi_owner(ix, c->cs_module, c->cs_addr) != g)
			continue;
		const struct pm_function *f = &pm->funcs[c->func];
		bool seen = false;
		for (uint32_t i = 0; i < n && !seen; i++)
			seen = out[i].module == f->module && out[i].addr == f->addr;
		if (!seen)
			out[n++] = (struct da_tail_target){f->module, f->addr, c->cs_addr, false, false};
	}
	return n;
}

#define TAIL_TARGETS 64         /* per function, what the hook is asked for */

/* What reparent_tails works with: edges (g, f) of the tail_targets hook,
 * each node's proposed parent, the siblings of each (parent, callsite). */
struct tails {
	const struct pathmap *pm;
	const struct da_capability *cap;
	const struct pm_index *ix;
	struct da_problem *p;
	struct tail_edge {
		uint64_t jump;          /* g's first jump to f */
		uint32_t g, f, cs;      /* cs: its problem callsite, when made */
		bool bound;             /* da_tail_target.bound */
		bool any;               /* by g's route to any function */
		bool bad;               /* not every frame it would take moves */
	} *e;
	uint32_t ne, cape;
	struct u64map edges;            /* (g, f) -> e */
	uint32_t *first, *nt;           /* per function: its edges e[first..+nt), once asked */
	uint64_t *any_jump;             /* per function: the first jump of its route to
	                                 * any function of its module, else 0 */
	struct u64map loose;            /* (g, f): a frame of f beside one of g that
	                                 * no direct call entered (propose) */
	bool *contested;                /* per node: such a g's stubs may have entered it */
	uint32_t *any_to;               /* per function with such a route: the one function
	                                 * its frames have beside them (DA_NONE: none yet;
	                                 * ANY_MANY: several) */
	uint32_t *prop, *pe;            /* per node: the sibling it would hang below, the edge */
	uint32_t *next;                 /* per node: the next earlier sibling of its group */
	struct u64map group;            /* (parent, callsite) -> the group's last node */
	const struct da_bridge *b;      /* its callsites' addresses */
};

/* Does the plan read back (da_capability.tail_plan) take frames of f at
 * problem callsite c by another clone than a tail clone (made where the
 * edge into f was not a tail route: --no-tail, or before them)? */
static bool plan_keeps_at_call(const struct tails *T, uint32_t c, uint32_t f)
{
	const struct da_pm_plan *plan = T->cap->tail_plan;
	for (uint32_t k = 0; plan && k < plan->nclones; k++)
		if (!plan->clones[k].tail && plan->clones[k].func == f &&
		    plan->clones[k].cs_module == T->b->cs_module[c] &&
		    plan->clones[k].cs_addr == T->b->cs_addr[c])
			return true;
	return false;
}

/* Function g's edges, from the hook the first time.  -1 out of memory. */
static int tail_edges_of(struct tails *T, uint32_t g)
{
	if (T->first[g] != DA_NONE)
		return 0;
	struct da_tail_target t[TAIL_TARGETS];
	const struct da_capability *cap = T->cap;
	uint32_t n = cap->tail_targets
			     ? cap->tail_targets(cap->ctx, T->pm, g, t, TAIL_TARGETS)
			     : plan_tail_targets(cap->tail_plan, T->pm, T->ix, g, t, TAIL_TARGETS);
	T->first[g] = T->ne;
	for (uint32_t i = 0; i < n && i < TAIL_TARGETS; i++) {
		if (t[i].any) {
			T->any_jump[g] = t[i].module == T->pm->funcs[g].module ? t[i].jump : 0;
			continue;
		}
		uint32_t f = module_ok(T->pm, cap, t[i].module)
				     ? pmi_function_at(T->ix, t[i].module, t[i].addr) : DA_NONE;
		if (f == DA_NONE || f == g || u64map_get(&T->edges, da_pair(g, f)) != DA_NONE)
			continue;
		if (!grow_array((void **)&T->e, T->ne + 1ull, &T->cape, sizeof(*T->e)) ||
		    u64map_put(&T->edges, da_pair(g, f), T->ne) < 0)
			return -1;
		T->e[T->ne++] = (struct tail_edge){t[i].jump, g, f, DA_NONE, t[i].bound, false, false};
	}
	T->nt[g] = T->ne - T->first[g];
	return 0;
}

#define ANY_MANY (DA_NONE - 1)

/* The edge (g, f) of g's route to any function (T->any_jump), made once;
 * DA_NONE when g has none or f is not of g's module (-1 out of memory). */
static int64_t any_edge(struct tails *T, uint32_t g, uint32_t f)
{
	const struct pathmap *pm = T->pm;
	if (!T->any_jump[g] || f == g || pm->funcs[f].module != pm->funcs[g].module)
		return DA_NONE;
	if (!grow_array((void **)&T->e, T->ne + 1ull, &T->cape, sizeof(*T->e)) ||
	    u64map_put(&T->edges, da_pair(g, f), T->ne) < 0)
		return -1;
	T->e[T->ne] = (struct tail_edge){T->any_jump[g], g, f, DA_NONE, false, true, false};
	return T->ne++;
}

/* May node x of g have entered the frames beside it by tail jumps?  Not
 * where its call calls another function directly (its callsite's target),
 * unless direct jumps led from that one to g (a proposal on an edge not
 * `any`).  An indirect call (no target) is taken to have called g, as for
 * direct tail jumps. */
static bool entered_directly(const struct tails *T, uint32_t x)
{
	const struct da_node *N = &T->p->nodes[x];
	uint32_t target = T->p->callsites[N->callsite].target;
	return target == DA_NONE || target == N->func ||
	       (T->prop[x] != DA_NONE && !T->e[T->pe[x]].any);
}

/* Every sibling of node x (same parent, callsite and height) of a function
 * that x's function g enters by tail jumps takes x as its proposed parent;
 * a second proposal, x after it, either in a recursion's sibling group, or
 * a plan read back that takes the sibling at its call spoils the edges. */
static int propose(struct tails *T, uint32_t x, const bool *in_group)
{
	const struct da_node *N = T->p->nodes;
	uint32_t g = N[x].func;
	if (tail_edges_of(T, g) < 0)
		return -1;
	bool any = T->any_jump[g] && entered_directly(T, x);
	if (!T->nt[g] && !T->any_jump[g])
		return 0;
	uint32_t head = u64map_get(&T->group, da_pair(N[x].parent, N[x].callsite));
	for (uint32_t y = head; y != DA_NONE; y = T->next[y]) {
		if (y == x || N[y].height != N[x].height)
			continue;
		uint64_t gf = da_pair(g, N[y].func);
		int64_t ed = u64map_get(&T->edges, gf);
		if (ed == DA_NONE && any && (ed = any_edge(T, g, N[y].func)) < 0)
			return -1;
		/* g's stubs could have entered it, unknown whether they did: it
		 * spoils any_edge(g, f), and whatever else would move it (a
		 * chain of such jumps: g entered by another's, then f by g's) */
		bool could = T->any_jump[g] && N[y].func != g &&
			     T->pm->funcs[N[y].func].module == T->pm->funcs[g].module;
		if (could && !any && u64map_put(&T->loose, gf, 1) < 0)
			return -1;
		T->contested[y] |= could && !any;
		/* f's frame first, c a call of f: f entered g, and g's direct
		 * jumps may have entered f again, at c's return address but not
		 * by c (sqlite3VdbeAddOp3 -> growOp3 -> sqlite3VdbeAddOp3): no
		 * clone of f takes c, which would take only the first frame.
		 * (That g's jumps through a pointer went back to f is taken to
		 * be rare: every call of such an f would lose its clones.) */
		struct da_callsite *C = &T->p->callsites[N[y].callsite];
		if (ed != DA_NONE && !T->e[ed].any && x > y && C->target == N[y].func)
			C->redirectable = C->dispatchable = C->taggable = false;
		if (ed == DA_NONE || (T->e[ed].any && !any))
			continue;
		/* a direct jump explains the frame better than a pointer's:
		 * the weaker proposal gives way; two alike spoil both */
		uint32_t old = T->prop[y] == DA_NONE ? DA_NONE : T->pe[y];
		if (old != DA_NONE && T->e[ed].any && !T->e[old].any)
			continue;
		bool clash = old != DA_NONE && T->e[ed].any == T->e[old].any;
		if (clash)
			T->e[old].bad = true;
		T->e[ed].bad |= clash || x > y || in_group[x] || in_group[y] ||
				plan_keeps_at_call(T, N[y].callsite, N[y].func);
		T->prop[y] = x;
		T->pe[y] = ed;
	}
	return 0;
}

/* Would node i move (a proposal on a good edge)? */
static bool moves(const struct tails *T, uint32_t i)
{
	return T->prop[i] != DA_NONE && !T->e[T->pe[i]].bad;
}

/* Whole callsites: an edge is spoilt where one of the frames it would move
 * shares its callsite and function with a frame that stays, until none
 * does.  -1 out of memory. */
static int spoil_partial(struct tails *T)
{
	const struct da_problem *p = T->p;
	for (bool changed = true; changed;) {
		changed = false;
		struct u64map stays;
		if (u64map_init(&stays, 1024) < 0)
			return -1;
		for (uint32_t i = 0; i < p->nnodes; i++)
			if (p->nodes[i].callsite != DA_NONE && !moves(T, i) &&
			    u64map_put(&stays, da_pair(p->nodes[i].callsite, p->nodes[i].func), 1) < 0) {
				u64map_free(&stays);
				return -1;
			}
		for (uint32_t i = 0; i < p->nnodes; i++)
			if (moves(T, i) &&
			    u64map_get(&stays, da_pair(p->nodes[i].callsite, p->nodes[i].func)) != DA_NONE) {
				T->e[T->pe[i]].bad = true;
				changed = true;
			}
		u64map_free(&stays);
	}
	return 0;
}

/* Tail calls (from_pathmap.h, disambig.h section 2): frames of f beside
 * frames of g that enter f only by direct tail jumps hang below them.  -1
 * when out of memory. */
static int reparent_tails(const struct pathmap *pm, const struct da_capability *cap,
			  const struct pm_index *ix, const bool *in_group, struct da_bridge *b,
			  uint32_t *capcs)
{
	struct da_problem *p = b->prob;
	uint32_t n = p->nnodes;
	if ((!cap->tail_targets && !cap->tail_plan) || !cap->clone || !cap->tail || !n)
		return 0;
	struct tails T = {.pm = pm, .cap = cap, .ix = ix, .p = p, .b = b};
	T.first = malloc((p->nfuncs + 1) * sizeof(*T.first));
	T.nt = calloc(p->nfuncs + 1, sizeof(*T.nt));
	T.prop = malloc((n + 1) * sizeof(*T.prop));
	T.pe = malloc((n + 1) * sizeof(*T.pe));
	T.next = malloc((n + 1) * sizeof(*T.next));
	T.any_jump = calloc(p->nfuncs + 1, sizeof(*T.any_jump));
	T.contested = calloc(n + 1, sizeof(*T.contested));
	T.any_to = malloc((p->nfuncs + 1) * sizeof(*T.any_to));
	int rc = -1;
	if (!T.first || !T.nt || !T.prop || !T.pe || !T.next || !T.any_jump || !T.contested ||
	    !T.any_to ||
	    u64map_init(&T.edges, 64) < 0 || u64map_init(&T.loose, 64) < 0 ||
	    u64map_init(&T.group, n / 4 + 16) < 0)
		goto out;
	for (uint32_t f = 0; f < p->nfuncs; f++)
		T.first[f] = T.any_to[f] = DA_NONE;
	for (uint32_t i = 0; i < n; i++) {
		const struct da_node *N = &p->nodes[i];
		T.prop[i] = T.next[i] = DA_NONE;
		if (N->callsite == DA_NONE || N->fragment)
			continue;
		uint64_t key = da_pair(N->parent, N->callsite);
		T.next[i] = u64map_get(&T.group, key);
		if (u64map_put(&T.group, key, i) < 0)
			goto out;
	}
	for (uint32_t i = 0; i < n; i++)
		if (p->nodes[i].callsite != DA_NONE && !p->nodes[i].fragment &&
		    propose(&T, i, in_group) < 0)
			goto out;
	/* a stub tests every frame through g's jumps: only where they reach
	 * one function (sqlite3's mutex and allocator methods), not a
	 * dispatcher's many (python3's tp_ slots: stubs there cost more
	 * than the dispatches they save) */
	for (uint32_t i = 0; i < n; i++) {
		const struct tail_edge *E = T.prop[i] == DA_NONE ? NULL : &T.e[T.pe[i]];
		if (E && E->any)
			T.any_to[E->g] = T.any_to[E->g] == DA_NONE || T.any_to[E->g] == E->f
						 ? E->f : ANY_MANY;
	}
	for (uint32_t e = 0; e < T.ne; e++)
		T.e[e].bad |= T.e[e].any && (u64map_get(&T.loose, da_pair(T.e[e].g, T.e[e].f)) != DA_NONE ||
					     T.any_to[T.e[e].g] == ANY_MANY);
	for (uint32_t i = 0; i < n; i++)
		if (T.contested[i] && T.prop[i] != DA_NONE)
			T.e[T.pe[i]].bad = true;
	/* a plan's edges alone: it was made on a problem where they were whole */
	if (cap->tail_targets && spoil_partial(&T) < 0)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		if (!moves(&T, i))
			continue;
		struct tail_edge *E = &T.e[T.pe[i]];
		uint32_t gm = pm->funcs[E->g].module;
		/* one callsite per jump: edges that share it take any function */
		uint32_t shared = E->cs == DA_NONE ? da_bridge_callsite(b, gm, E->jump) : DA_NONE;
		if (shared != DA_NONE && p->callsites[shared].tail && p->callsites[shared].owner == E->g) {
			E->cs = shared;
			if (p->callsites[shared].target != E->f)
				p->callsites[shared].target = DA_NONE;
		} else if (E->cs == DA_NONE) {
			E->cs = da_add_tail_callsite(p, E->g, E->any ? DA_NONE : E->f);
			uint64_t key = pmi_cskey(gm, E->jump);
			if (key == UINT64_MAX || bridge_register(b, capcs, E->cs, gm, E->jump, key) < 0)
				goto out;
			p->callsites[E->cs].module = gm;
			p->callsites[E->cs].bound = E->bound;
			/* another module's function, through the jumps' check */
			if (pm->funcs[E->f].module != gm && da_set_xcall(p, E->cs, &E->f, 1) < 0)
				goto out;
		}
		p->nodes[i].parent = T.prop[i];
		p->nodes[i].callsite = E->cs;
		p->nodes[i].tail = true;
	}
	rc = 0;
out:
	if (T.edges.keys)
		u64map_free(&T.edges);
	if (T.loose.keys)
		u64map_free(&T.loose);
	if (T.group.keys)
		u64map_free(&T.group);
	free(T.e);
	free(T.first);
	free(T.nt);
	free(T.prop);
	free(T.pe);
	free(T.next);
	free(T.any_jump);
	free(T.contested);
	free(T.any_to);
	return rc;
}

int da_from_pathmap(const struct pathmap *pm, const struct da_capability *cap, enum da_unit unit,
		    struct da_bridge *b, char *err, size_t errlen)
{
	memset(b, 0, sizeof(*b));
	if (cap->pad_bound % DA_ALIGN || cap->wrap_bound % DA_ALIGN)
		return errmsg(err, errlen, "padding and wrap bounds must be multiples of 16");
	struct pm_index ix = {0};
	bool *in_group = NULL;          /* recursion's sibling groups, per node */
	b->prob = da_problem_new();
	b->cs_index = calloc(1, sizeof(*b->cs_index));
	uint32_t capcs = 0;
	if (!b->prob || !b->cs_index || pmi_build(&ix, pm) < 0 ||
	    u64map_init(b->cs_index, pm->nnodes / 4 + 16) < 0)
		goto oom;
	b->prob->unit = unit;
	if (bridge_funcs(pm, cap, b) < 0)
		goto oom;
	for (uint32_t i = 0; i < pm->nnodes; i++) {
		const struct pm_node *n = &pm->nodes[i];
		uint32_t cs = DA_NONE;
		uint64_t key = pmi_cskey(n->cs_module, n->cs_addr);
		if (n->cs_module != PM_NONE && key == UINT64_MAX) {
			pmi_free(&ix);
			da_bridge_free(b);
			return errmsg(err, errlen, "node %u: callsite address 0x%llx is outside what a plan can name",
				      i, (unsigned long long)n->cs_addr);
		}
		if (key != UINT64_MAX && (cs = u64map_get(b->cs_index, key)) == DA_NONE &&
		    (cs = bridge_callsite(pm, cap, &ix, b, &capcs, n->cs_module, n->cs_addr, key)) ==
			    DA_NONE)
			goto oom;
		if (da_add_node(b->prob, n->parent == PM_NONE ? DA_NONE : n->parent, n->func, cs,
				n->height, n->entries) == DA_NONE)
			goto oom;
	}
	if (cap->tag)
		mark_tag_readers(b->prob);
	if (!cap->callsite_hook)
		seen_targets(b->prob);
	if (block_tail_entered(pm, cap, b->prob) < 0)
		goto oom;
	in_group = malloc((pm->nnodes + 1) * sizeof(*in_group));
	if (!in_group || pm_sibling_groups(pm, in_group) < 0 || mark_fragments(pm, b->prob) < 0)
		goto oom;
	lock_sibling_groups(b->prob, in_group);
	if (reparent_tails(pm, cap, &ix, in_group, b, &capcs) < 0)
		goto oom;
	free(in_group);
	pmi_free(&ix);
	if (da_problem_check(b->prob, err, errlen) < 0) {
		da_bridge_free(b);
		return -1;
	}
	return 0;
oom:
	free(in_group);
	pmi_free(&ix);
	da_bridge_free(b);
	return errmsg(err, errlen, "out of memory converting the pathmap (%u nodes)", pm->nnodes);
}

void da_bridge_free(struct da_bridge *b)
{
	da_problem_free(b->prob);
	free(b->cs_module);
	free(b->cs_addr);
	if (b->cs_index) {
		u64map_free(b->cs_index);
		free(b->cs_index);
	}
	memset(b, 0, sizeof(*b));
}

uint32_t da_bridge_callsite(const struct da_bridge *b, uint32_t module, uint64_t addr)
{
	uint64_t key = pmi_cskey(module, addr);
	return key == UINT64_MAX ? DA_NONE : u64map_get(b->cs_index, key);
}

/* ---------------------------------------------------------------- plans */

void da_pm_plan_free(struct da_pm_plan *p)
{
	free(p->pads);
	free(p->wraps);
	free(p->clones);
	free(p->clone_wraps);
	free(p->heat);
	memset(p, 0, sizeof(*p));
}

int da_pm_plan_from(const struct da_bridge *b, const struct da_plan *plan, struct da_pm_plan *out)
{
	memset(out, 0, sizeof(*out));
	const struct da_problem *p = b->prob;
	out->pads = calloc(p->nfuncs + 1, sizeof(*out->pads));
	out->wraps = calloc(p->ncallsites + 1, sizeof(*out->wraps));
	out->clones = calloc(plan->nclones + 1, sizeof(*out->clones));
	out->clone_wraps = calloc(plan->nclone_wraps + 1, sizeof(*out->clone_wraps));
	if (!out->pads || !out->wraps || !out->clones || !out->clone_wraps) {
		da_pm_plan_free(out);
		return -1;
	}
	for (uint32_t f = 0; f < p->nfuncs; f++)
		if (plan->pad[f])
			out->pads[out->npads++] = (struct da_pm_pad){f, plan->pad[f]};
	for (uint32_t c = 0; c < p->ncallsites; c++)
		if (plan->wrap[c])
			out->wraps[out->nwraps++] =
				(struct da_pm_wrap){b->cs_module[c], b->cs_addr[c], plan->wrap[c]};
	for (uint32_t k = 0; k < plan->nclones; k++) {
		const struct da_clone *c = &plan->clones[k];
		out->clones[out->nclones++] = (struct da_pm_clone){
			c->func, b->cs_module[c->callsite], b->cs_addr[c->callsite], c->pad, c->parent, 0,
			p->callsites[c->callsite].promoted && da_direct(p, c->callsite, c->func),
			da_xcall(p, c->callsite, c->func), p->callsites[c->callsite].tail};
	}
	for (uint32_t i = 0; i < plan->nclone_wraps; i++) {
		const struct da_clone_wrap *w = &plan->clone_wraps[i];
		if (p->callsites[w->callsite].tail)
			continue;       /* a jump: never wrapped */
		out->clone_wraps[out->nclone_wraps++] = (struct da_pm_clone_wrap){
			w->clone, b->cs_module[w->callsite], b->cs_addr[w->callsite], w->amount};
	}
	out->summary.unit = p->unit;
	return 0;
}

/* (call, function) of each tail node: the call that entered the frames its
 * frame replaced, a dispatch at the function would test.  malloc'd, sorted;
 * NULL when out of memory. */
static uint64_t *tail_entries(const struct da_problem *p, uint32_t *n)
{
	uint64_t *v = malloc((p->nnodes + 1) * sizeof(*v));
	*n = 0;
	for (uint32_t i = 0; v && i < p->nnodes; i++) {
		uint32_t x = i;
		while (p->nodes[x].tail)
			x = p->nodes[x].parent;
		if (x != i && p->nodes[x].callsite != DA_NONE)
			v[(*n)++] = da_pair(p->nodes[x].callsite, p->nodes[i].func);
	}
	if (v)
		qsort(v, *n, sizeof(*v), u64_cmp);
	return v;
}

/* A clone by dispatch of plan in whose call the problem has tail nodes of
 * its function: the dispatch would take the frames of the tail jumps its
 * tail clones leave alone, which the problem gives the original.  Its
 * index, or DA_NONE (also out of memory: *oom). */
static uint32_t dispatch_after_tails(const struct da_problem *p, const struct da_plan *plan,
				     bool *oom)
{
	uint32_t n, hit = DA_NONE;
	uint64_t *v = tail_entries(p, &n);
	*oom = !v;
	for (uint32_t k = 0; v && n && k < plan->nclones && hit == DA_NONE; k++) {
		uint64_t key = da_pair(plan->clones[k].callsite, plan->clones[k].func);
		if (da_dispatched(p, plan->clones[k].callsite, plan->clones[k].func) &&
		    bsearch(&key, v, n, sizeof(*v), u64_cmp))
			hit = k;
	}
	free(v);
	return hit;
}

int da_pm_plan_to(const struct da_bridge *b, const struct da_pm_plan *in, struct da_plan *out,
		  char *err, size_t errlen)
{
	const struct da_problem *p = b->prob;
	if (da_plan_init(out, p) < 0)
		return errmsg(err, errlen, "out of memory");
	out->clones = calloc(in->nclones + 1, sizeof(*out->clones));
	out->clone_wraps = calloc(in->nclone_wraps + 1, sizeof(*out->clone_wraps));
	if (!out->clones || !out->clone_wraps) {
		da_plan_free(out);
		return errmsg(err, errlen, "out of memory");
	}
	for (uint32_t i = 0; i < in->npads; i++) {
		if (in->pads[i].func >= p->nfuncs) {
			da_plan_free(out);
			return errmsg(err, errlen, "plan pads function %u, the pathmap has %u",
				      in->pads[i].func, p->nfuncs);
		}
		out->pad[in->pads[i].func] = in->pads[i].bytes;
	}
#define CS(m, a, what)                                                                        \
	({                                                                                     \
		uint32_t c_ = da_bridge_callsite(b, (m), (a));                                 \
		if (c_ == DA_NONE) {                                                           \
			da_plan_free(out);                                                     \
			return errmsg(err, errlen, "plan %s callsite 0x%llx (module %u), which no path uses", \
				      what, (unsigned long long)(a), (m));                     \
		}                                                                              \
		c_;                                                                            \
	})
	for (uint32_t i = 0; i < in->nwraps; i++)
		out->wrap[CS(in->wraps[i].module, in->wraps[i].addr, "wraps")] = in->wraps[i].bytes;
	for (uint32_t k = 0; k < in->nclones; k++) {
		const struct da_pm_clone *c = &in->clones[k];
		uint32_t cs = CS(c->cs_module, c->cs_addr, "redirects");
		bool takes = c->func >= p->nfuncs ||     /* da_plan_check refuses it below */
			     da_redirects(p, cs, c->func);
		if (!takes) {
			const struct da_callsite *C = &p->callsites[cs];
			const char *name = p->funcs[c->func].name ? p->funcs[c->func].name : "a function";
			da_plan_free(out);
			if (!p->funcs[c->func].cloneable)
				return errmsg(err, errlen, "clone %u of the plan copies %s, which may not be cloned",
					      k, name);
			if (c->parent != DA_NONE)
				return errmsg(err, errlen, "clone %u of the plan takes the copy of the call at "
					      "0x%llx (module %u) in clone %u, which is no direct call of %s "
					      "and no call of its module that it takes a dispatch from",
					      k, (unsigned long long)c->cs_addr, c->cs_module, c->parent, name);
			return errmsg(err, errlen, "clone %u of the plan takes the call at 0x%llx (module %u), "
				      "which %s, and %s takes no dispatch from it",
				      k, (unsigned long long)c->cs_addr, c->cs_module,
				      !C->redirectable ? "cannot be redirected" : "calls another function", name);
		}
		out->clones[k] = (struct da_clone){c->func, cs, c->pad, c->parent};
	}
	out->nclones = in->nclones;
	for (uint32_t i = 0; i < in->nclone_wraps; i++) {
		const struct da_pm_clone_wrap *w = &in->clone_wraps[i];
		out->clone_wraps[i] = (struct da_clone_wrap){w->clone, CS(w->module, w->addr, "wraps"),
							     w->bytes};
	}
	out->nclone_wraps = in->nclone_wraps;
#undef CS
	bool oom;
	uint32_t k = dispatch_after_tails(p, out, &oom);
	if (oom || k != DA_NONE) {
		da_plan_free(out);
		return oom ? errmsg(err, errlen, "out of memory")
			   : errmsg(err, errlen, "clone %u of the plan takes frames by a dispatch that "
				    "its tail clones leave to the original function: make the plan "
				    "again", k);
	}
	if (da_plan_check(p, out, err, errlen) < 0) {
		da_plan_free(out);
		return -1;
	}
	return 0;
}

/* ---------------------------------------------------------------- predicted pathmap */

/* What da_predict_pathmap works with: the plan's changes indexed, and per
 * node of the pathmap the values disambig.h section 2 carries down. */
struct predict {
	const struct pathmap *pm;
	const struct da_pm_plan *plan;
	struct pathmap *q;              /* the predicted pathmap */
	struct pm_index ix;
	struct u64map wraps;            /* callsite key -> wrap */
	struct u64map clonewraps;       /* hash of (callsite key, clone) -> clone wrap */
	struct clone_key {              /* the clones by the call they take */
		uint64_t cs;
		uint32_t func, parent, k;
	} *takes;
	uint32_t *pad;                  /* [nfuncs] */
	int64_t *delta;                 /* [nnodes] height'(n) - height(n) */
	uint32_t *inst;                 /* [nnodes] the clone whose copy the node runs in, or DA_NONE */
	uint32_t *fpad;                 /* [nnodes] frame_pad */
	bool *frag;                     /* [nnodes] */
	/* tail calls: the plan's tail jumps (target, owner, a clone of them),
	 * sorted; the nodes done by (parent, function), chained by sib */
	struct tail_key {
		uint32_t f, g, k;
	} *tails;
	uint32_t ntails;
	struct u64map done;
	uint32_t *sib;
	/* per clone: its function, its fragment's copy (made when a node
	 * needs it), the fragment copied */
	uint32_t *newfunc;
	const char *what;               /* the failure, when not out of memory */
};

static int cmp_tail_key(const void *x, const void *y)
{
	const struct tail_key *a = x, *b = y;
	if (a->f != b->f)
		return a->f < b->f ? -1 : 1;
	return a->g < b->g ? -1 : a->g > b->g;
}

static int cmp_clone_key(const void *x, const void *y)
{
	const struct clone_key *a = x, *b = y;
	if (a->cs != b->cs)
		return a->cs < b->cs ? -1 : 1;
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	return a->k < b->k ? -1 : a->k > b->k;
}

/* The clone that takes the call at callsite key cs into func, made from
 * the copy in clone parent (DA_NONE: the original instruction): of two
 * alike, the later; DA_NONE when none does. */
static uint32_t clone_taking(const struct predict *P, uint64_t cs, uint32_t func, uint32_t parent)
{
	struct clone_key key = {cs, func, parent, UINT32_MAX};
	uint32_t lo = 0, hi = P->plan->nclones;
	while (lo < hi) {               /* the first above key */
		uint32_t mid = lo + (hi - lo) / 2;
		if (cmp_clone_key(&P->takes[mid], &key) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return DA_NONE;
	const struct clone_key *c = &P->takes[lo - 1];
	return c->cs == cs && c->func == func && c->parent == parent ? c->k : DA_NONE;
}

/* The plan's paddings, wraps, clone wraps and clones indexed. */
static int predict_index(struct predict *P)
{
	const struct pathmap *pm = P->pm;
	const struct da_pm_plan *plan = P->plan;
	for (uint32_t i = 0; i < plan->npads; i++) {
		if (plan->pads[i].func >= pm->nfuncs) {
			P->what = "plan pads a function the pathmap does not have";
			return -1;
		}
		P->pad[plan->pads[i].func] = plan->pads[i].bytes;
	}
	for (uint32_t i = 0; i < plan->nwraps; i++)
		if (u64map_put(&P->wraps, pmi_cskey(plan->wraps[i].module, plan->wraps[i].addr), i) < 0)
			return -1;
	for (uint32_t i = 0; i < plan->nclone_wraps; i++) {
		const struct da_pm_clone_wrap *w = &plan->clone_wraps[i];
		if (w->clone >= plan->nclones) {
			P->what = "plan wraps a callsite of a clone it does not have";
			return -1;
		}
		uint64_t key = da_mix64(pmi_cskey(w->module, w->addr) ^ da_mix64(w->clone));
		if (u64map_put(&P->clonewraps, key, i) < 0)
			return -1;
	}
	for (uint32_t k = 0; k < plan->nclones; k++) {
		const struct da_pm_clone *c = &plan->clones[k];
		P->takes[k] = (struct clone_key){pmi_cskey(c->cs_module, c->cs_addr), c->func, c->parent, k};
		uint32_t g = c->tail ? pmi_owner(&P->ix, c->cs_module, c->cs_addr) : DA_NONE;
		if (c->tail && g == DA_NONE) {
			P->what = "plan takes a tail jump that no function of the pathmap makes";
			return -1;
		}
		if (c->tail)
			P->tails[P->ntails++] = (struct tail_key){c->func, g, k};
	}
	qsort(P->tails, P->ntails, sizeof(*P->tails), cmp_tail_key);
	qsort(P->takes, plan->nclones, sizeof(*P->takes), cmp_clone_key);
	return 0;
}

/* The same modules and functions, then a function per clone. */
static int predict_functions(struct predict *P)
{
	const struct pathmap *pm = P->pm;
	const struct da_pm_plan *plan = P->plan;
	for (uint32_t m = 0; m < pm->nmodules; m++) {
		const struct pm_module *md = &pm->modules[m];
		if (pm_add_module(P->q, md->path, md->build_id, md->build_id_len) != m)
			return -1;
		P->q->modules[m].functions_found = md->functions_found;
		P->q->modules[m].functions_hooked = md->functions_hooked;
	}
	for (uint32_t f = 0; f < pm->nfuncs; f++) {
		const struct pm_function *fn = &pm->funcs[f];
		if (pm_add_function(P->q, fn->module, fn->addr, fn->size, fn->name) != f)
			return -1;
	}
	if (!plan->nclones)
		return 0;
	uint32_t cm = pm_add_module(P->q, DA_CLONES_MODULE, NULL, 0);
	if (cm == PM_NONE)
		return -1;
	for (uint32_t k = 0; k < plan->nclones; k++) {
		const struct da_pm_clone *c = &plan->clones[k];
		if (c->func >= pm->nfuncs) {
			P->what = "plan clones a function the pathmap does not have";
			return -1;
		}
		char name[512];
		snprintf(name, sizeof(name), "%s.icpp_clone.%u",
			 pm->funcs[c->func].name ? pm->funcs[c->func].name : "?", k);
		P->newfunc[k] = pm_add_function(P->q, cm, 16 * ((uint64_t)k + 1), pm->funcs[c->func].size,
						name);
		P->newfunc[plan->nclones + k] = PM_NONE;
		if (P->newfunc[k] == PM_NONE)
			return -1;
	}
	return 0;
}

/* The function of the copy of fragment `func` in clone k, made at its first
 * frame (from_pathmap.h); PM_NONE when clone k has one of another fragment
 * already, or out of memory. */
static uint32_t fragment_copy(struct predict *P, uint32_t k, uint32_t func)
{
	uint32_t n = P->plan->nclones;
	uint32_t *f = &P->newfunc[n + k], *src = &P->newfunc[2 * n + k];
	if (*f != PM_NONE)
		return *src == func ? *f : PM_NONE;
	*src = func;
	char name[512];
	snprintf(name, sizeof(name), "%s.icpp_clone.%u",
		 P->pm->funcs[func].name ? P->pm->funcs[func].name : "?", k);
	*f = pm_add_function(P->q, P->q->funcs[P->newfunc[k]].module, 16 * ((uint64_t)k + 1) + 8,
			     P->pm->funcs[func].size, name);
	return *f;
}

/* The frame node i hangs below as a tail node (from_pathmap.h): a sibling
 * before it (same parent, callsite and height) whose function the plan's
 * tail jumps lead from to i's; its clone of those jumps into *k.  Else
 * DA_NONE. */
static uint32_t tail_parent(const struct predict *P, uint32_t i, uint32_t *k)
{
	const struct pm_node *N = P->pm->nodes, *n = &N[i];
	if (!P->ntails || n->parent == PM_NONE || n->cs_module == PM_NONE)
		return DA_NONE;
	uint32_t lo = 0, hi = P->ntails;
	while (lo < hi) {               /* the first tail jump to n's function */
		uint32_t mid = lo + (hi - lo) / 2;
		if (P->tails[mid].f < n->func)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t t = lo; t < P->ntails && P->tails[t].f == n->func; t++)
		for (uint32_t j = u64map_get(&P->done, da_pair(n->parent, P->tails[t].g));
		     j != DA_NONE; j = P->sib[j])
			if (N[j].cs_module == n->cs_module && N[j].cs_addr == n->cs_addr &&
			    N[j].height == n->height && !P->frag[j]) {
				*k = P->tails[t].k;
				return j;
			}
	return DA_NONE;
}

/* Node i of the pathmap under the plan (its parent done): its height
 * change, the clone it runs in, its frame padding, and its node in q. */
static int predict_node(struct predict *P, uint32_t i)
{
	const struct pathmap *pm = P->pm;
	const struct da_pm_plan *plan = P->plan;
	const struct pm_node *n = &pm->nodes[i];
	uint64_t key = pmi_cskey(n->cs_module, n->cs_addr);
	int64_t d = n->parent != PM_NONE ? P->delta[n->parent] : 0;
	uint32_t pk = n->parent != PM_NONE ? P->inst[n->parent] : DA_NONE, me = DA_NONE;
	uint32_t f = n->func;
	/* as da_from_pathmap marks them (mark_fragments) */
	P->frag[i] = pm_fragment_frame(pm, i) && !P->frag[n->parent];
	uint32_t tk = DA_NONE, tp = P->frag[i] ? DA_NONE : tail_parent(P, i, &tk);
	if (tp != DA_NONE) {
		/* below g's frame tp, its tail jump taken in tp's clone */
		const struct da_pm_clone *t = &plan->clones[tk];
		d = P->delta[tp];
		me = clone_taking(P, pmi_cskey(t->cs_module, t->cs_addr), n->func, P->inst[tp]);
		P->fpad[i] = me != DA_NONE ? plan->clones[me].pad : P->pad[n->func];
		f = me == DA_NONE ? n->func : P->newfunc[me];
	} else if (P->frag[i]) {
		me = pk;
		P->fpad[i] = P->fpad[n->parent];
		if (me != DA_NONE && (f = fragment_copy(P, me, n->func)) == PM_NONE) {
			P->what = "plan clones a function with two fragments, or out of memory";
			return -1;
		}
	} else {
		if (n->parent != PM_NONE)
			d += P->fpad[n->parent];
		bool copy = pk != DA_NONE && key != UINT64_MAX &&
			    pmi_owner(&P->ix, n->cs_module, n->cs_addr) == pm->nodes[n->parent].func;
		uint32_t w = key == UINT64_MAX ? DA_NONE : u64map_get(&P->wraps, key);
		if (copy) {
			uint32_t cw = u64map_get(&P->clonewraps, da_mix64(key ^ da_mix64(pk)));
			if (cw != DA_NONE && plan->clone_wraps[cw].clone == pk &&
			    pmi_cskey(plan->clone_wraps[cw].module, plan->clone_wraps[cw].addr) == key)
				d += plan->clone_wraps[cw].bytes;
			else if (w != DA_NONE)
				d += plan->wraps[w].bytes;
		} else if (w != DA_NONE) {
			d += plan->wraps[w].bytes;
		}
		/* the clone that takes the call: of the copy in clone pk (a
		 * chain), else of the original instruction */
		if (key != UINT64_MAX)
			me = clone_taking(P, key, n->func, copy ? pk : DA_NONE);
		P->fpad[i] = me != DA_NONE ? plan->clones[me].pad : P->pad[n->func];
		f = me == DA_NONE ? n->func : P->newfunc[me];
	}
	P->delta[i] = d;
	P->inst[i] = me;
	if (pm_append_node(P->q, n->parent, f, n->cs_module, n->cs_addr, n->height + d,
			   n->entries) == PM_NONE)
		return -1;
	if (P->ntails && n->parent != PM_NONE) {
		uint64_t key = da_pair(n->parent, n->func);
		P->sib[i] = u64map_get(&P->done, key);
		if (u64map_put(&P->done, key, i) < 0)
			return -1;
	}
	return 0;
}

static void predict_free(struct predict *P)
{
	pmi_free(&P->ix);
	if (P->wraps.keys)
		u64map_free(&P->wraps);
	if (P->clonewraps.keys)
		u64map_free(&P->clonewraps);
	free(P->takes);
	free(P->pad);
	free(P->delta);
	free(P->inst);
	free(P->fpad);
	free(P->frag);
	free(P->newfunc);
	free(P->tails);
	if (P->done.keys)
		u64map_free(&P->done);
	free(P->sib);
}

int da_predict_pathmap(const struct pathmap *pm, const struct da_pm_plan *plan,
		       struct pathmap **out, char *err, size_t errlen)
{
	*out = NULL;
	struct predict P = {
		.pm = pm,
		.plan = plan,
		.q = pm_new(),
		.takes = malloc((plan->nclones + 1) * sizeof(*P.takes)),
		.pad = calloc(pm->nfuncs + 1, sizeof(*P.pad)),
		.delta = malloc((pm->nnodes + 1) * sizeof(*P.delta)),
		.inst = malloc((pm->nnodes + 1) * sizeof(*P.inst)),
		.fpad = malloc((pm->nnodes + 1) * sizeof(*P.fpad)),
		.frag = malloc((pm->nnodes + 1) * sizeof(*P.frag)),
		.newfunc = malloc((3 * plan->nclones + 1) * sizeof(*P.newfunc)),
		.tails = malloc((plan->nclones + 1) * sizeof(*P.tails)),
		.sib = malloc((pm->nnodes + 1) * sizeof(*P.sib)),
	};
	int rc = -1;
	if (!P.q || !P.takes || !P.pad || !P.delta || !P.inst || !P.fpad || !P.frag || !P.newfunc ||
	    !P.tails || !P.sib || u64map_init(&P.done, 1024) < 0 ||
	    pmi_build(&P.ix, pm) < 0 || u64map_init(&P.wraps, plan->nwraps) < 0 ||
	    u64map_init(&P.clonewraps, plan->nclone_wraps) < 0 || predict_index(&P) < 0 ||
	    predict_functions(&P) < 0)
		goto out;
	for (uint32_t i = 0; i < pm->nnodes; i++)
		if (predict_node(&P, i) < 0)
			goto out;
	char why[256];
	if (pm_validate(P.q, why, sizeof(why)) < 0) {
		if (strstr(why, "duplicates"))
			P.what = "the predicted pathmap has two equal nodes (a plan error)";
		goto out;
	}
	*out = P.q;
	rc = 0;
out:
	predict_free(&P);
	if (rc) {
		pm_free(P.q);
		return errmsg(err, errlen, "%s", P.what ? P.what : "out of memory predicting the pathmap");
	}
	return 0;
}

static int cmp_heat(const void *x, const void *y)
{
	const struct da_pm_heat *a = x, *b = y;
	if (a->func != b->func)
		return a->func ? 1 : -1;
	if (a->module != b->module)
		return a->module < b->module ? -1 : 1;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return (a->clone > b->clone) - (a->clone < b->clone);
}

/* The heat of the prediction q of pm under plan (da_pm_heat): a record per
 * frame for its callsite (in its parent's copy) and one for its function
 * (a clone's: the function cloned), sorted, the same keys summed. */
static int plan_heat(const struct pathmap *pm, const struct pathmap *q, struct da_pm_plan *plan)
{
	struct da_pm_heat *h = malloc((2 * (size_t)q->nnodes + 1) * sizeof(*h));
	if (!h)
		return -1;
	uint32_t cm = da_clones_module(q), n = 0;
	plan->entries = 0;
	for (uint32_t i = 0; i < q->nnodes; i++) {
		const struct pm_node *x = &q->nodes[i];
		uint32_t k = da_clone_of(q, cm, x->func);
		uint32_t f = k < plan->nclones ? plan->clones[k].func : x->func;
		plan->entries += x->entries;
		if (f < pm->nfuncs)
			h[n++] = (struct da_pm_heat){pm->funcs[f].module, pm->funcs[f].addr, DA_NONE,
						     true, x->entries};
		if (x->parent != PM_NONE && x->cs_module != PM_NONE) {
			uint32_t in = da_clone_of(q, cm, q->nodes[x->parent].func);
			h[n++] = (struct da_pm_heat){x->cs_module, x->cs_addr,
						     in < plan->nclones ? in : DA_NONE, false,
						     x->entries};
		}
	}
	qsort(h, n, sizeof(*h), cmp_heat);
	uint32_t m = 0;
	for (uint32_t i = 0; i < n; i++)
		if (m && !cmp_heat(&h[m - 1], &h[i]))
			h[m - 1].entries += h[i].entries;
		else
			h[m++] = h[i];
	free(plan->heat);
	plan->heat = h;
	plan->nheat = m;
	return 0;
}

int da_pm_plan_weigh(const struct pathmap *pm, struct da_pm_plan *plan, char *err, size_t errlen)
{
	struct pathmap *q;
	if (da_predict_pathmap(pm, plan, &q, err, errlen) < 0)
		return -1;
	for (uint32_t k = 0; k < plan->nclones; k++)
		plan->clones[k].weight = 0;
	uint32_t cm = da_clones_module(q);
	for (uint32_t i = 0; i < q->nnodes; i++) {
		uint32_t f = q->nodes[i].func, k = da_clone_of(q, cm, f);
		if (k < plan->nclones && q->funcs[f].addr % 16 == 0)    /* not the fragment's */
			plan->clones[k].weight += q->nodes[i].entries;
	}
	int rc = plan_heat(pm, q, plan);
	pm_free(q);
	return rc < 0 ? errmsg(err, errlen, "out of memory weighing the plan") : 0;
}
