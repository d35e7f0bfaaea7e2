/* The abstract problem: building, checking, plans, prediction from scratch,
 * classification of collisions and metrics (disambig.h sections 1-4). */
#include <math.h>
#include <string.h>

#include "disambig/internal.h"
#include "util/grow.h"

/* ---------------------------------------------------------------- masks */

da_mask da_mask_upto(uint32_t bytes)
{
	uint32_t k = bytes / DA_ALIGN;
	if (k >= DA_MAX_STEPS)
		return ~(da_mask)0;
	return ((da_mask)1 << (k + 1)) - 1;
}

bool da_mask_allows(da_mask m, uint32_t bytes)
{
	if (bytes == 0)
		return true;
	if (bytes % DA_ALIGN || bytes / DA_ALIGN > DA_MAX_STEPS)
		return false;
	return (m >> (bytes / DA_ALIGN)) & 1;
}

uint32_t da_mask_max(da_mask m)
{
	m &= ~(da_mask)1;
	if (!m)
		return 0;
	return (uint32_t)(63 - __builtin_clzll(m)) * DA_ALIGN;
}

/* ---------------------------------------------------------------- u64map */

int u64map_init(struct u64map *m, size_t expect)
{
	size_t cap = 16;
	while (cap < expect * 2)
		cap <<= 1;
	m->keys = malloc(cap * sizeof(*m->keys));
	m->vals = malloc(cap * sizeof(*m->vals));
	if (!m->keys || !m->vals) {
		free(m->keys);
		free(m->vals);
		m->keys = NULL;
		m->vals = NULL;
		return -1;
	}
	memset(m->keys, 0xff, cap * sizeof(*m->keys));
	m->cap = cap;
	m->n = 0;
	return 0;
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}

uint32_t u64map_get(const struct u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1;
	for (size_t i = da_mix64(key) & mask;; i = (i + 1) & mask) {
		if (m->keys[i] == key)
			return m->vals[i];
		if (m->keys[i] == UINT64_MAX)
			return DA_NONE;
	}
}

static int u64map_grow(struct u64map *m)
{
	struct u64map big;
	if (u64map_init(&big, m->cap) < 0)
		return -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i] != UINT64_MAX)
			u64map_put(&big, m->keys[i], m->vals[i]);
	u64map_free(m);
	*m = big;
	return 0;
}

int u64map_put(struct u64map *m, uint64_t key, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap && u64map_grow(m) < 0)
		return -1;
	size_t mask = m->cap - 1;
	for (size_t i = da_mix64(key) & mask;; i = (i + 1) & mask) {
		if (m->keys[i] == key) {
			m->vals[i] = val;
			return 0;
		}
		if (m->keys[i] == UINT64_MAX) {
			m->keys[i] = key;
			m->vals[i] = val;
			m->n++;
			return 0;
		}
	}
}

void u64map_del(struct u64map *m, uint64_t key)
{
	size_t mask = m->cap - 1, i = da_mix64(key) & mask;
	while (m->keys[i] != key) {
		if (m->keys[i] == UINT64_MAX)
			return;
		i = (i + 1) & mask;
	}
	/* backward-shift deletion keeps probe chains intact */
	size_t j = i;
	for (;;) {
		j = (j + 1) & mask;
		if (m->keys[j] == UINT64_MAX)
			break;
		size_t home = da_mix64(m->keys[j]) & mask;
		if ((j > i && (home <= i || home > j)) || (j < i && home <= i && home > j)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = UINT64_MAX;
	m->n--;
}

/* ---------------------------------------------------------------- building */

struct da_problem *da_problem_new(void)
{
	return calloc(1, sizeof(struct da_problem));
}

void da_problem_free(struct da_problem *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->nfuncs; i++)
		free(p->funcs[i].name);
	free(p->funcs);
	free(p->callsites);
	free(p->nodes);
	free(p->no_promote);
	free(p->xcall_funcs);
	free(p);
}

uint32_t da_add_func(struct da_problem *p, const char *name, uint64_t code_bytes,
		     da_mask pad_mask, bool cloneable)
{
	if (!grow_array((void **)&p->funcs, p->nfuncs + 1ull, &p->cap_funcs, sizeof(*p->funcs)))
		return DA_NONE;
	struct da_func *f = &p->funcs[p->nfuncs];
	f->name = name ? strdup(name) : NULL;
	if (name && !f->name)
		return DA_NONE;
	f->code_bytes = code_bytes;
	f->pad_mask = pad_mask | 1;
	f->cloneable = cloneable;
	f->clone_pad_mask = f->pad_mask;
	f->dispatch = false;
	f->pad_runs = false;
	f->pad_in_place = 0;
	f->reads_tags = false;
	f->module = 0;
	return p->nfuncs++;
}

uint32_t da_add_callsite(struct da_problem *p, uint32_t owner, da_mask wrap_mask,
			 bool redirectable)
{
	if (!grow_array((void **)&p->callsites, p->ncallsites + 1ull, &p->cap_callsites, sizeof(*p->callsites)))
		return DA_NONE;
	struct da_callsite *c = &p->callsites[p->ncallsites];
	c->owner = owner;
	c->wrap_mask = wrap_mask | 1;
	c->redirectable = redirectable;
	c->target = DA_NONE;
	c->module = 0;
	c->dispatchable = true;
	c->taggable = false;
	c->wrap_copy = 0;
	c->bound = false;
	c->xcall = c->nxcall = 0;
	c->promoted = false;
	c->tail = false;
	return p->ncallsites++;
}

uint32_t da_add_tail_callsite(struct da_problem *p, uint32_t owner, uint32_t target)
{
	uint32_t c = da_add_callsite(p, owner, 1, true);
	if (c != DA_NONE) {
		p->callsites[c].target = target;
		p->callsites[c].dispatchable = false;
		p->callsites[c].tail = true;
	}
	return c;
}

uint32_t da_add_node(struct da_problem *p, uint32_t parent, uint32_t func, uint32_t callsite,
		     int64_t height, uint64_t weight)
{
	if (parent != DA_NONE && parent >= p->nnodes)
		return DA_NONE;
	if (!grow_array((void **)&p->nodes, p->nnodes + 1ull, &p->cap_nodes, sizeof(*p->nodes)))
		return DA_NONE;
	p->nodes[p->nnodes] = (struct da_node){parent, func, callsite, height, weight, weight,
					       false, false};
	return p->nnodes++;
}

int da_set_xcall(struct da_problem *p, uint32_t c, const uint32_t *funcs, uint32_t n)
{
	if (p->nxcall_funcs + n > p->cap_xcall_funcs) {
		uint32_t cap = 2 * (p->nxcall_funcs + n);
		uint32_t *v = realloc(p->xcall_funcs, cap * sizeof(*v));
		if (!v)
			return -1;
		p->xcall_funcs = v;
		p->cap_xcall_funcs = cap;
	}
	memcpy(p->xcall_funcs + p->nxcall_funcs, funcs, n * sizeof(*funcs));
	p->callsites[c].xcall = p->nxcall_funcs;
	p->callsites[c].nxcall = n;
	p->nxcall_funcs += n;
	return 0;
}

uint32_t da_add_fragment(struct da_problem *p, uint32_t parent, uint32_t func, uint64_t weight)
{
	if (parent >= p->nnodes)
		return DA_NONE;
	uint32_t n = da_add_node(p, parent, func, DA_NONE, p->nodes[parent].height, weight);
	if (n != DA_NONE)
		p->nodes[n].fragment = true;
	return n;
}

uint32_t da_add_tail(struct da_problem *p, uint32_t parent, uint32_t func, uint32_t callsite,
		     uint64_t weight)
{
	if (parent >= p->nnodes)
		return DA_NONE;
	uint32_t n = da_add_node(p, parent, func, callsite, p->nodes[parent].height, weight);
	if (n != DA_NONE)
		p->nodes[n].tail = true;
	return n;
}

uint32_t *da_fragments_of(const struct da_problem *p)
{
	uint32_t *frag = malloc((p->nfuncs + 1) * sizeof(*frag));
	if (!frag)
		return NULL;
	for (uint32_t f = 0; f < p->nfuncs; f++)
		frag[f] = DA_NONE;
	for (uint32_t i = 0; i < p->nnodes; i++) {
		const struct da_node *n = &p->nodes[i];
		if (!n->fragment || n->parent >= p->nnodes || n->func >= p->nfuncs)
			continue;
		uint32_t *f = &frag[p->nodes[n->parent].func];
		*f = *f == DA_NONE || *f == n->func ? n->func : DA_FRAGMENTS_SEVERAL;
	}
	return frag;
}

/* Fragments as section 2 wants them (da_problem_check). */
static int check_fragments(const struct da_problem *p, char *err, size_t errlen)
{
	uint32_t *frag = da_fragments_of(p), *nfrag = calloc(p->nnodes + 1, sizeof(*nfrag));
	int rc = 0;
	if (!frag || !nfrag) {
		rc = errmsg(err, errlen, "out of memory checking the problem");
		goto out;
	}
	for (uint32_t i = 0; i < p->nnodes && !rc; i++) {
		const struct da_node *n = &p->nodes[i];
		if (!n->fragment)
			continue;
		const struct da_node *par = n->parent == DA_NONE ? NULL : &p->nodes[n->parent];
		const struct da_func *f = &p->funcs[n->func], *o = par ? &p->funcs[par->func] : NULL;
		if (!par || par->fragment || n->callsite != DA_NONE || n->height != par->height)
			rc = errmsg(err, errlen, "node %u: a fragment must have a parent that is none, "
				    "its height and no callsite", i);
		else if (f->pad_mask > 1 || f->clone_pad_mask > 1 || f->cloneable)
			rc = errmsg(err, errlen, "node %u: fragment function %u may be padded or cloned",
				    i, n->func);
		else if (++nfrag[n->parent] > 1 && (o->pad_mask > 1 || o->clone_pad_mask > 1))
			rc = errmsg(err, errlen, "node %u: two fragments below a node of function %u, "
				    "which may be padded", n->parent, par->func);
		else if (o->cloneable && frag[par->func] == DA_FRAGMENTS_SEVERAL)
			rc = errmsg(err, errlen, "function %u may be cloned and has several fragments",
				    par->func);
	}
out:
	free(frag);
	free(nfrag);
	return rc;
}

/* Tail nodes and callsites as section 2 wants them (da_problem_check). */
static int check_tails(const struct da_problem *p, char *err, size_t errlen)
{
	for (uint32_t c = 0; c < p->ncallsites; c++) {
		const struct da_callsite *C = &p->callsites[c];
		if (C->tail && (C->owner == DA_NONE || C->wrap_mask > 1 || C->dispatchable ||
				C->taggable || C->promoted ||
				(C->nxcall && (C->nxcall > 1 || p->xcall_funcs[C->xcall] != C->target))))
			return errmsg(err, errlen, "callsite %u: a tail callsite needs an owner, and "
				      "takes no wrap, dispatch, tag or check of another function", c);
	}
	for (uint32_t i = 0; i < p->nnodes; i++) {
		const struct da_node *n = &p->nodes[i];
		const struct da_node *par = n->parent == DA_NONE ? NULL : &p->nodes[n->parent];
		bool tail_cs = n->callsite != DA_NONE && p->callsites[n->callsite].tail;
		if (!n->tail && !tail_cs)
			continue;
		const struct da_callsite *C = &p->callsites[n->callsite];
		if (!n->tail || !par || par->fragment || n->fragment ||
		    n->height != par->height || C->owner != par->func ||
		    (C->target != DA_NONE ? C->target != n->func
					  : C->module != p->funcs[n->func].module))
			return errmsg(err, errlen, "node %u: a tail node (and only a tail node) enters "
				      "through a tail callsite of its parent's function to its own (or "
				      "to any of its module), at its parent's height, below no "
				      "fragment", i);
	}
	return 0;
}

uint32_t da_add_path(struct da_problem *p, uint32_t nframes, const uint32_t *funcs,
		     const uint32_t *callsites, const int64_t *heights, uint64_t weight)
{
	uint32_t parent = DA_NONE;
	for (uint32_t i = 0; i < nframes; i++) {
		uint32_t cs = callsites ? callsites[i] : DA_NONE, found = DA_NONE;
		for (uint32_t n = parent == DA_NONE ? 0 : parent + 1; n < p->nnodes; n++) {
			const struct da_node *x = &p->nodes[n];
			if (x->parent == parent && x->func == funcs[i] && x->callsite == cs &&
			    x->height == heights[i]) {
				found = n;
				break;
			}
		}
		if (found == DA_NONE)
			found = da_add_node(p, parent, funcs[i], cs, heights[i], 0);
		if (found == DA_NONE)
			return DA_NONE;
		parent = found;
	}
	if (parent != DA_NONE) {
		p->nodes[parent].weight += weight;
		p->nodes[parent].entries += weight;
	}
	return parent;
}

int da_problem_check(const struct da_problem *p, char *err, size_t errlen)
{
	if (p->unit != DA_UNIT_FUNCTIONS && p->unit != DA_UNIT_CALLSITES)
		return errmsg(err, errlen, "unknown path unit %d", (int)p->unit);
	for (uint32_t c = 0; c < p->ncallsites; c++) {
		if (p->callsites[c].owner != DA_NONE && p->callsites[c].owner >= p->nfuncs)
			return errmsg(err, errlen, "callsite %u: owner %u out of range", c,
				      p->callsites[c].owner);
		if (p->callsites[c].target != DA_NONE && p->callsites[c].target >= p->nfuncs)
			return errmsg(err, errlen, "callsite %u: target %u out of range", c,
				      p->callsites[c].target);
	}
	for (uint32_t i = 0; i < p->nnodes; i++) {
		const struct da_node *n = &p->nodes[i];
		if (n->parent != DA_NONE && n->parent >= i)
			return errmsg(err, errlen, "node %u: parent %u is not before it", i,
				      n->parent);
		if (n->func >= p->nfuncs)
			return errmsg(err, errlen, "node %u: function %u out of range", i,
				      n->func);
		if (n->callsite != DA_NONE && n->callsite >= p->ncallsites)
			return errmsg(err, errlen, "node %u: callsite %u out of range", i,
				      n->callsite);
	}
	return check_fragments(p, err, errlen) || check_tails(p, err, errlen) ? -1 : 0;
}

/* ---------------------------------------------------------------- plans */

int da_plan_init(struct da_plan *plan, const struct da_problem *p)
{
	memset(plan, 0, sizeof(*plan));
	plan->nfuncs = p->nfuncs;
	plan->ncallsites = p->ncallsites;
	plan->pad = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*plan->pad));
	plan->wrap = calloc(p->ncallsites ? p->ncallsites : 1, sizeof(*plan->wrap));
	if (!plan->pad || !plan->wrap) {
		da_plan_free(plan);
		return -1;
	}
	return 0;
}

void da_plan_free(struct da_plan *plan)
{
	free(plan->pad);
	free(plan->wrap);
	free(plan->clones);
	free(plan->clone_wraps);
	memset(plan, 0, sizeof(*plan));
}

/* Is callsite c a call of function f or of f's fragment (frag as
 * da_fragments_of gives): one a clone of f copies? */
static bool copied_with(const struct da_problem *p, const uint32_t *frag, uint32_t c, uint32_t f)
{
	uint32_t owner = p->callsites[c].owner;
	return owner == f || (owner != DA_NONE && owner == frag[f]);
}

/* Clone k of plan (disambig.h section 2), frag as da_fragments_of gives. */
static int check_clone(const struct da_problem *p, const struct da_plan *plan,
		       const uint32_t *frag, uint32_t k, char *err, size_t errlen)
{
	const struct da_clone *cl = &plan->clones[k];
	if (cl->func >= p->nfuncs || cl->callsite >= p->ncallsites ||
	    (cl->parent != DA_NONE && cl->parent >= k))
		return errmsg(err, errlen, "clone %u: index out of range", k);
	if (!p->funcs[cl->func].cloneable)
		return errmsg(err, errlen, "clone %u: function %u may not be cloned", k, cl->func);
	if (!da_redirects(p, cl->callsite, cl->func))
		return errmsg(err, errlen, "clone %u: callsite %u may not be redirected to "
			      "function %u", k, cl->callsite, cl->func);
	if (!da_mask_allows(p->funcs[cl->func].clone_pad_mask, cl->pad))
		return errmsg(err, errlen, "clone %u: function %u may not be padded by %u bytes",
			      k, cl->func, cl->pad);
	if (cl->parent != DA_NONE && !copied_with(p, frag, cl->callsite, plan->clones[cl->parent].func))
		return errmsg(err, errlen, "clone %u: callsite %u is not in clone %u's function %u "
			      "or its fragment", k, cl->callsite, cl->parent, plan->clones[cl->parent].func);
	uint32_t ndispatch = 0;
	for (uint32_t j = 0; j < k; j++) {
		const struct da_clone *o = &plan->clones[j];
		if (o->callsite == cl->callsite && o->parent == cl->parent && o->func == cl->func)
			return errmsg(err, errlen, "clones %u and %u take the same call", j, k);
		ndispatch += o->func == cl->func && da_dispatched(p, o->callsite, o->func);
	}
	if (da_dispatched(p, cl->callsite, cl->func) &&
	    ndispatch >= DA_MAX_DISPATCH)
		return errmsg(err, errlen, "clone %u: function %u has more than %u dispatched clones",
			      k, cl->func, DA_MAX_DISPATCH);
	return 0;
}

int da_plan_check(const struct da_problem *p, const struct da_plan *plan, char *err,
		  size_t errlen)
{
	if (plan->nfuncs != p->nfuncs || plan->ncallsites != p->ncallsites)
		return errmsg(err, errlen, "plan is for %u functions and %u callsites, the problem has %u and %u",
			      plan->nfuncs, plan->ncallsites, p->nfuncs, p->ncallsites);
	for (uint32_t f = 0; f < p->nfuncs; f++)
		if (!da_mask_allows(p->funcs[f].pad_mask, plan->pad[f]))
			return errmsg(err, errlen, "function %u (%s) may not be padded by %u bytes",
				      f, p->funcs[f].name ? p->funcs[f].name : "?", plan->pad[f]);
	for (uint32_t c = 0; c < p->ncallsites; c++)
		if (!da_mask_allows(p->callsites[c].wrap_mask, plan->wrap[c]))
			return errmsg(err, errlen, "callsite %u may not be wrapped by %u bytes", c,
				      plan->wrap[c]);
	uint32_t *frag = plan->nclones ? da_fragments_of(p) : NULL;
	if (plan->nclones && !frag)
		return errmsg(err, errlen, "out of memory checking the plan");
	for (uint32_t k = 0; k < plan->nclones; k++) {
		if (check_clone(p, plan, frag, k, err, errlen) < 0) {
			free(frag);
			return -1;
		}
	}
	for (uint32_t i = 0; i < plan->nclone_wraps; i++) {
		const struct da_clone_wrap *w = &plan->clone_wraps[i];
		if (w->clone >= plan->nclones || w->callsite >= p->ncallsites) {
			free(frag);
			return errmsg(err, errlen, "clone wrap %u: index out of range", i);
		}
		uint32_t f = plan->clones[w->clone].func;
		if (!copied_with(p, frag, w->callsite, f)) {
			free(frag);
			return errmsg(err, errlen, "clone wrap %u: callsite %u is not in function %u "
				      "or its fragment", i, w->callsite, f);
		}
		const char *why = da_mask_allows(p->callsites[w->callsite].wrap_mask, w->amount)
					  ? NULL : "may not be wrapped by";
		for (uint32_t j = 0; j < i && !why; j++)
			if (plan->clone_wraps[j].clone == w->clone &&
			    plan->clone_wraps[j].callsite == w->callsite)
				why = "is wrapped twice, the second time by";
		if (why) {
			free(frag);
			return errmsg(err, errlen, "clone wrap %u: callsite %u %s %u bytes", i,
				      w->callsite, why, w->amount);
		}
	}
	free(frag);
	return 0;
}

/* ---------------------------------------------------------------- prediction */

/* The clone whose copy runs instance `in` (clone k or its fragment), or
 * DA_NONE for an original function. */
static uint32_t inst_clone(const struct da_problem *p, const struct da_plan *plan, uint32_t in)
{
	if (in < p->nfuncs)
		return DA_NONE;
	in -= p->nfuncs;
	return in < plan->nclones ? in : in - plan->nclones;
}

/* da_predict, and into *runs (when not NULL) the entries that run a
 * trampoline: of each node entered by a wrapped call, and again of each
 * node of an original function padded by an entry wrapper (pad_runs); into
 * *copies the entries through a wrapped call times the bytes its trampoline
 * copies (wrap_copy). */
static int predict(const struct da_problem *p, const struct da_plan *plan, int64_t *height,
		   uint32_t *inst, uint64_t *runs, uint64_t *copies, uint64_t *binds,
		   uint64_t *xcalls)
{
	struct u64map clones, chains = {0}, cwraps = {0};
	int64_t *delta = malloc((p->nnodes + 1) * sizeof(*delta));
	uint32_t *in = malloc((p->nnodes + 1) * sizeof(*in));
	uint32_t *fpad = malloc((p->nnodes + 1) * sizeof(*fpad));     /* frame_pad */
	uint32_t *next = malloc((plan->nclones + 1) * sizeof(*next)); /* same copy */
	if (!delta || !in || !fpad || !next || u64map_init(&clones, plan->nclones) < 0) {
		free(delta);
		free(in);
		free(fpad);
		free(next);
		return -1;
	}
	if (u64map_init(&cwraps, plan->nclone_wraps) < 0 ||
	    u64map_init(&chains, plan->nclones) < 0) {
		u64map_free(&cwraps);
		u64map_free(&clones);
		free(delta);
		free(in);
		free(fpad);
		free(next);
		return -1;
	}
	int rc = 0;
	if (runs)
		*runs = *copies = *binds = *xcalls = 0;
	/* originals by (function, callsite); chains by (callsite, parent), the
	 * clones of one copy linked by next (a direct one and dispatched ones:
	 * one function each) */
	for (uint32_t k = 0; k < plan->nclones && !rc; k++) {
		const struct da_clone *cl = &plan->clones[k];
		uint64_t key = da_pair(cl->callsite, cl->parent);
		next[k] = cl->parent == DA_NONE ? DA_NONE : u64map_get(&chains, key);
		rc = cl->parent == DA_NONE ? u64map_put(&clones, da_pair(cl->func, cl->callsite), k)
					   : u64map_put(&chains, key, k);
	}
	for (uint32_t i = 0; i < plan->nclone_wraps && !rc; i++)
		rc = u64map_put(&cwraps, da_pair(plan->clone_wraps[i].clone,
						 plan->clone_wraps[i].callsite), i);
	for (uint32_t i = 0; i < p->nnodes && !rc; i++) {
		const struct da_node *n = &p->nodes[i];
		uint32_t par = n->parent, cs = n->callsite, me = n->func;
		int64_t d = par != DA_NONE ? delta[par] : 0;
		uint32_t k_parent = par != DA_NONE ? inst_clone(p, plan, in[par]) : DA_NONE;
		if (n->fragment) {
			if (k_parent != DA_NONE)
				me = p->nfuncs + plan->nclones + k_parent;
			fpad[i] = fpad[par];
		} else {
			if (par != DA_NONE && !n->tail)
				d += fpad[par];
			bool copy = k_parent != DA_NONE && cs != DA_NONE &&
				    p->callsites[cs].owner == p->nodes[par].func;
			uint32_t wrap = 0;
			if (copy) {
				uint32_t w = u64map_get(&cwraps, da_pair(k_parent, cs));
				wrap = w != DA_NONE ? plan->clone_wraps[w].amount : plan->wrap[cs];
				uint32_t k = u64map_get(&chains, da_pair(cs, k_parent));
				while (k != DA_NONE && plan->clones[k].func != n->func)
					k = next[k];
				if (k != DA_NONE)
					me = p->nfuncs + k;
			} else if (cs != DA_NONE) {
				wrap = plan->wrap[cs];
				uint32_t k = u64map_get(&clones, da_pair(n->func, cs));
				if (k != DA_NONE)
					me = p->nfuncs + k;
			}
			d += wrap;
			fpad[i] = me < p->nfuncs ? plan->pad[me] : plan->clones[me - p->nfuncs].pad;
			if (runs) {
				bool direct = cs != DA_NONE && me != n->func && da_direct(p, cs, n->func);
				*binds += direct && p->callsites[cs].bound ? n->entries : 0;
				*xcalls += direct && da_xcall(p, cs, n->func) ? n->entries : 0;
				*runs += (wrap ? n->entries : 0) +
					 (me < p->nfuncs && da_pad_runs(&p->funcs[me], fpad[i])
						  ? n->entries : 0);
				*copies += wrap ? n->entries * p->callsites[cs].wrap_copy : 0;
			}
		}
		delta[i] = d;
		in[i] = me;
		if (height)
			height[i] = n->height + d;
		if (inst)
			inst[i] = me;
	}
	u64map_free(&clones);
	u64map_free(&chains);
	u64map_free(&cwraps);
	free(delta);
	free(in);
	free(fpad);
	free(next);
	return rc;
}

int da_predict(const struct da_problem *p, const struct da_plan *plan, int64_t *height,
	       uint32_t *inst)
{
	return predict(p, plan, height, inst, NULL, NULL, NULL, NULL);
}

int da_run_shares(const struct da_problem *p, const struct da_plan *plan, double *runs,
		  double *copies, double *binds, double *xcalls)
{
	uint64_t r, c, b, x, total = 0;
	if (predict(p, plan, NULL, NULL, &r, &c, &b, &x) < 0)
		return -1;
	for (uint32_t i = 0; i < p->nnodes; i++)
		total += p->nodes[i].entries;
	*runs = total ? (double)r / (double)total : 0;
	*copies = total ? (double)c / DA_COPY_RUN_BYTES / (double)total : 0;
	*binds = total ? (double)b / (double)total : 0;
	*xcalls = total ? (double)x / (double)total : 0;
	return 0;
}

/* ---------------------------------------------------------------- classes */

int da_classes(const struct da_problem *p, uint32_t *klass, uint32_t *n)
{
	if (p->unit == DA_UNIT_CALLSITES) {
		for (uint32_t i = 0; i < p->nnodes; i++)
			klass[i] = i;
		*n = p->nnodes;
		return 0;
	}
	struct u64map m;
	if (u64map_init(&m, p->nnodes) < 0)
		return -1;
	uint32_t next = 0;
	for (uint32_t i = 0; i < p->nnodes; i++) {
		uint32_t par = da_path_parent(p, i);
		uint64_t key = da_pair(par == DA_NONE ? DA_NONE - 1 : klass[par], p->nodes[i].func);
		uint32_t c = u64map_get(&m, key);
		if (c == DA_NONE) {
			c = next++;
			if (u64map_put(&m, key, c) < 0) {
				u64map_free(&m);
				return -1;
			}
		}
		klass[i] = c;
	}
	u64map_free(&m);
	*n = next;
	return 0;
}

uint32_t *da_depths(const struct da_problem *p)
{
	uint32_t *d = malloc((p->nnodes + 1) * sizeof(*d));
	if (!d)
		return NULL;
	for (uint32_t i = 0; i < p->nnodes; i++)
		d[i] = p->nodes[i].parent == DA_NONE ? 1 : d[p->nodes[i].parent] + 1;
	return d;
}

/* ---------------------------------------------------------------- classification */

const char *da_diff_name(enum da_diff d)
{
	static const char *n[] = {"identical", "functions", "edges", "order"};
	return (unsigned)d < 4 ? n[d] : "?";
}

const char *da_cure_name(enum da_cure c)
{
	static const char *n[] = {"none", "arr", "wrap", "clone"};
	return (unsigned)c < 4 ? n[c] : "?";
}

const char *da_left_name(enum da_left l)
{
	static const char *n[] = {"curable", "unsolved", "blocked", "disabled",
				  "identical", "crowded"};
	return (unsigned)l < DA_LEFT_N ? n[l] : "?";
}

/* Signed counts of a: +1, b: -1 per key, in a small map. */
struct tally {
	struct u64map m;
	int32_t *cnt;
	uint64_t *key;
	uint32_t n, cap;
};

static int tally_add(struct tally *t, uint64_t key, int32_t v)
{
	uint32_t i = u64map_get(&t->m, key);
	if (i == DA_NONE) {
		if (t->n == t->cap) {
			uint32_t nc = t->cap ? t->cap * 2 : 32;
			int32_t *c = realloc(t->cnt, nc * sizeof(*c));
			if (!c)
				return -1;
			t->cnt = c;
			uint64_t *k = realloc(t->key, nc * sizeof(*k));
			if (!k)
				return -1;
			t->key = k;
			t->cap = nc;
		}
		i = t->n++;
		t->cnt[i] = 0;
		t->key[i] = key;
		if (u64map_put(&t->m, key, i) < 0)
			return -1;
	}
	t->cnt[i] += v;
	return 0;
}

static void tally_free(struct tally *t)
{
	u64map_free(&t->m);
	free(t->cnt);
	free(t->key);
}

/* key spaces */
#define K_FUNC 1ULL
#define K_EDGE 2ULL
#define K_PAIR 3ULL
static uint64_t kf(uint32_t f) { return (K_FUNC << 60) | f; }
static uint64_t ke(uint32_t c) { return (K_EDGE << 60) | (c == DA_NONE ? 0xfffffffULL : c); }
/* (callsite into f, callsite owned by f): both ids hashed into 60 bits */
static uint64_t pair_key(uint32_t c, uint32_t e)
{
	return (K_PAIR << 60) | (da_mix64(da_pair(c, e)) >> 4);
}

static uint64_t u64_min(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* Can a chain of clones (section 2) give node x's frame a function that y's
 * frame never runs in?  Only if y's last frames end the same way as x's as
 * far as the chain reaches does y follow it to its end; so the chain must
 * cover x's frames from the last up to one (function, callsite) that differs
 * from y's at the same distance from the end, and start there or above: its
 * first clone takes an original call, every later one the copy of its call
 * in its caller's clone (both as da_redirects allows).  Returns the
 * code of the shortest such chain (its clones' da_clone_bytes), or
 * UINT64_MAX when there is none. */
static uint64_t chain_bytes(const struct da_problem *p, uint32_t x, uint32_t y)
{
	const struct da_node *N = p->nodes;
	bool differ = false;
	uint64_t bytes = 0;
	for (uint32_t n = x, m = y; n != DA_NONE; n = N[n].parent) {
		differ |= m == DA_NONE || N[m].func != N[n].func || N[m].callsite != N[n].callsite ||
			  N[m].fragment != N[n].fragment;
		m = m == DA_NONE ? DA_NONE : N[m].parent;
		if (N[n].fragment)
			continue;       /* runs in its parent's copy */
		uint32_t c = N[n].callsite, par = N[n].parent;
		if (c == DA_NONE)
			return UINT64_MAX;
		bytes += da_clone_bytes(p, N[n].func, c);
		if (differ && da_redirects(p, c, N[n].func))
			return bytes;
		if (par == DA_NONE || p->callsites[c].owner != N[par].func ||
		    !da_redirects(p, c, N[n].func))
			return UINT64_MAX;
	}
	return UINT64_MAX;
}

/* One frame of the walk up from a (side +1) or b (side -1): its callsite
 * (an edge), its function unless its padding moves nothing of the path (a
 * last frame, the parent of a tail node: *own), and the adjacent pair (the
 * call into its parent's function, its own call from there). */
static int tally_frame(const struct da_problem *p, struct tally *t, uint32_t n, int32_t side,
		       bool *own)
{
	const struct da_node *N = p->nodes;
	uint32_t par = N[n].parent;
	int rc = tally_add(t, ke(N[n].callsite), side);
	if (!*own)
		rc |= tally_add(t, kf(N[n].func), side);
	*own = N[n].tail;
	if (par != DA_NONE && N[n].callsite != DA_NONE && N[par].callsite != DA_NONE &&
	    p->callsites[N[n].callsite].owner == N[par].func)
		rc |= tally_add(t, pair_key(N[par].callsite, N[n].callsite), side);
	return rc;
}

/* Tally a's frames +1 and b's -1 below their lowest common ancestor, which
 * *lca gets (DA_NONE: none; its padding counts for both alike and cancels,
 * unless one side leaves it by a tail call); *same_seq: their frame
 * sequences there are identical. */
static int tally_below_lca(const struct da_problem *p, const uint32_t *depth, uint32_t a,
			   uint32_t b, struct tally *t, uint32_t *lca, bool *same_seq)
{
	const struct da_node *N = p->nodes;
	uint32_t x = a, y = b;
	bool own_x = true, own_y = true;
	int rc = 0;
	*same_seq = true;
	while (x != DA_NONE && (y == DA_NONE || depth[x] > depth[y])) {
		*same_seq = false;
		rc |= tally_frame(p, t, x, 1, &own_x);
		x = N[x].parent;
	}
	while (y != DA_NONE && (x == DA_NONE || depth[y] > depth[x])) {
		*same_seq = false;
		rc |= tally_frame(p, t, y, -1, &own_y);
		y = N[y].parent;
	}
	while (x != y) {
		if (N[x].func != N[y].func || N[x].callsite != N[y].callsite)
			*same_seq = false;
		rc |= tally_frame(p, t, x, 1, &own_x);
		rc |= tally_frame(p, t, y, -1, &own_y);
		x = N[x].parent;
		y = N[y].parent;
	}
	if (x != DA_NONE && own_x != own_y)
		rc |= tally_add(t, kf(N[x].func), own_x ? -1 : 1);
	*lca = x;
	return rc;
}

/* The least code of a clone of a last frame's function (the last frames
 * entered through different callsites; a fragment's frame is renamed with
 * its parent's, section 2), or UINT64_MAX. */
static uint64_t clone_last_bytes(const struct da_problem *p, uint32_t a, uint32_t b)
{
	const struct da_node *N = p->nodes;
	uint32_t la = da_frame(p, a), lb = da_frame(p, b);
	uint64_t bytes = UINT64_MAX;
	if (N[la].callsite == N[lb].callsite)
		return bytes;
	for (int s = 0; s < 2; s++) {
		uint32_t n = s ? lb : la, c = N[n].callsite;
		if (da_redirects(p, c, N[n].func))
			bytes = u64_min(bytes, da_clone_bytes(p, N[n].func, c));
	}
	return bytes;
}

/* The least code of a clone of the caller of an adjacent pair (c into f,
 * e owned by f) that the two paths hold a different number of times, with
 * its copy of e wrapped; the pairs rechecked with their real ids by walking
 * again up to the LCA.  UINT64_MAX: none. */
static uint64_t clone_pair_bytes(const struct da_problem *p, const struct tally *t, uint32_t a,
				 uint32_t b, uint32_t lca)
{
	const struct da_node *N = p->nodes;
	uint64_t bytes = UINT64_MAX;
	for (int s = 0; s < 2; s++) {
		for (uint32_t n = s ? b : a; n != lca; n = N[n].parent) {
			uint32_t par = N[n].parent;
			if (par == DA_NONE || N[n].callsite == DA_NONE || N[par].callsite == DA_NONE)
				continue;
			const struct da_callsite *e = &p->callsites[N[n].callsite];
			if (e->owner != N[par].func)
				continue;
			uint32_t i = u64map_get(&t->m, pair_key(N[par].callsite, N[n].callsite));
			if (i != DA_NONE && t->cnt[i] && e->wrap_mask > 1 &&
			    da_redirects(p, N[par].callsite, N[par].func))
				bytes = u64_min(bytes, DA_WRAP_CODE_BYTES +
						da_clone_bytes(p, N[par].func, N[par].callsite));
		}
	}
	return bytes;
}

/* The cure the options allow, the cheapest of ARR < wrapping < cloning, or
 * why there is none (section 4). */
static void classify_cure(const struct da_options *o, bool clone_ok, struct da_classification *out)
{
	if (out->diff == DA_DIFF_NONE)
		out->cure = DA_CURE_NONE;
	else if (out->arr_possible && o->allow_arr)
		out->cure = DA_CURE_ARR;
	else if (out->wrap_possible && o->allow_wrap)
		out->cure = DA_CURE_WRAP;
	else if (clone_ok)
		out->cure = DA_CURE_CLONE;
	else
		out->cure = DA_CURE_NONE;
	if (out->cure != DA_CURE_NONE)
		out->left = DA_LEFT_CURABLE;
	else if (out->diff == DA_DIFF_NONE)
		out->left = DA_LEFT_IDENTICAL;
	else if (out->arr_possible || out->wrap_possible || out->clone_possible)
		out->left = DA_LEFT_DISABLED;
	else
		out->left = DA_LEFT_BLOCKED;
}

int da_classify_nodes(const struct da_problem *p, const struct da_options *o,
		      const uint32_t *depth, uint32_t a, uint32_t b,
		      struct da_classification *out)
{
	memset(out, 0, sizeof(*out));
	/* what differs below the common ancestor: non-last functions (ARR),
	 * edges (wrapping), adjacent pairs (cloning) */
	struct tally t = {0};
	if (u64map_init(&t.m, 64) < 0)
		return -1;
	uint32_t lca;
	bool same_seq;
	if (tally_below_lca(p, depth, a, b, &t, &lca, &same_seq) < 0) {
		tally_free(&t);
		return -1;
	}
	bool funcs_differ = false, edges_differ = false, pairs_differ = false;
	for (uint32_t i = 0; i < t.n; i++) {
		if (!t.cnt[i])
			continue;
		uint64_t kind = t.key[i] >> 60, id = t.key[i] & ((1ULL << 60) - 1);
		if (kind == K_FUNC) {
			funcs_differ = true;
			if (p->funcs[id].pad_mask > 1)
				out->arr_possible = true;
		} else if (kind == K_EDGE) {
			edges_differ = true;
			if (id != 0xfffffffULL && p->callsites[id].wrap_mask > 1)
				out->wrap_possible = true;
		} else if (kind == K_PAIR) {
			pairs_differ = true;
		}
	}
	/* cloning: each kind's least code (UINT64_MAX: not possible) */
	uint64_t last_bytes = clone_last_bytes(p, a, b);
	uint64_t pair_bytes = pairs_differ ? clone_pair_bytes(p, &t, a, b, lca) : UINT64_MAX;
	tally_free(&t);
	uint64_t chain = u64_min(chain_bytes(p, a, b), chain_bytes(p, b, a));
	bool clone_last = last_bytes != UINT64_MAX, clone_pair = pair_bytes != UINT64_MAX;
	bool clone_chain = chain != UINT64_MAX;
	out->clone_possible = clone_pair || clone_last || clone_chain;
	uint64_t least = u64_min(u64_min(last_bytes, chain),
				 o->allow_wrap ? pair_bytes : UINT64_MAX);
	out->clone_bytes = least == UINT64_MAX ? 0 : least;

	if (funcs_differ)
		out->diff = DA_DIFF_FUNCS;
	else if (edges_differ)
		out->diff = DA_DIFF_EDGES;
	else
		out->diff = same_seq ? DA_DIFF_NONE : DA_DIFF_ORDER;
	classify_cure(o, o->allow_clone && (clone_last || clone_chain || (clone_pair && o->allow_wrap)),
		      out);
	return 0;
}

int da_classify(const struct da_problem *p, const struct da_options *o, uint32_t a,
		uint32_t b, struct da_classification *out)
{
	memset(out, 0, sizeof(*out));
	if (a >= p->nnodes || b >= p->nnodes)
		return -1;
	if (a == b) {
		out->left = DA_LEFT_IDENTICAL;
		return 0;
	}
	if (p->unit == DA_UNIT_FUNCTIONS) {
		/* same class: compare function sequences */
		uint32_t x = a, y = b;
		while (x != DA_NONE && y != DA_NONE && p->nodes[x].func == p->nodes[y].func) {
			x = da_path_parent(p, x);
			y = da_path_parent(p, y);
		}
		if (x == DA_NONE && y == DA_NONE) {
			out->left = DA_LEFT_IDENTICAL;
			return 0;
		}
	}
	uint32_t *depth = da_depths(p);
	if (!depth)
		return -1;
	int rc = da_classify_nodes(p, o, depth, a, b, out);
	free(depth);
	return rc;
}

/* ---------------------------------------------------------------- metrics */

static int cmp_cidkey(const void *x, const void *y)
{
	const struct da_cidkey *a = x, *b = y;
	if (a->inst != b->inst)
		return a->inst < b->inst ? -1 : 1;
	if (a->h != b->h)
		return a->h < b->h ? -1 : 1;
	if (a->klass != b->klass)
		return a->klass < b->klass ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

struct da_cidkey *da_cid_keys(const struct da_problem *p, const int64_t *height,
			      const uint32_t *inst, const uint32_t *klass)
{
	struct da_cidkey *k = malloc((p->nnodes + 1) * sizeof(*k));
	if (!k)
		return NULL;
	for (uint32_t i = 0; i < p->nnodes; i++)
		k[i] = (struct da_cidkey){inst ? inst[i] : p->nodes[i].func, klass[i], i,
					  height ? height[i] : p->nodes[i].height};
	qsort(k, p->nnodes, sizeof(*k), cmp_cidkey);
	return k;
}

static int degree_bucket(uint32_t d)
{
	return d >= DA_DEGREE_BUCKETS ? DA_DEGREE_BUCKETS - 1 : (int)d - 1;
}

int da_metrics_of(const struct da_problem *p, const int64_t *height, const uint32_t *inst,
		  struct da_metrics *m)
{
	memset(m, 0, sizeof(*m));
	uint32_t n = p->nnodes, ncl = 0;
	struct da_cidkey *k = NULL;
	uint32_t *klass = malloc((n + 1) * sizeof(*klass));
	uint32_t *cdeg = malloc((n + 1) * sizeof(*cdeg));     /* per node: its CID's degree */
	uint32_t *pdeg = NULL;
	if (!klass || !cdeg || da_classes(p, klass, &ncl) < 0 ||
	    !(k = da_cid_keys(p, height, inst, klass)))
		goto oom;
	pdeg = calloc(ncl + 1, sizeof(*pdeg));
	if (!pdeg)
		goto oom;
	m->nodes = n;
	m->paths = ncl;
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i, deg = 0;
		while (j < n && k[j].inst == k[i].inst && k[j].h == k[i].h) {
			if (j == i || k[j].klass != k[j - 1].klass)
				deg++;
			j++;
		}
		m->cids++;
		if (deg == 1)
			m->unique_cids++;
		if (deg > m->max_degree)
			m->max_degree = deg;
		for (uint32_t t = i; t < j; t++) {
			cdeg[k[t].node] = deg;
			if (deg > pdeg[k[t].klass])
				pdeg[k[t].klass] = deg;
		}
		i = j;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint64_t w = p->nodes[i].weight;
		m->weight += w;
		if (cdeg[i] == 1)
			m->precise_weight += w;
		m->degree_weight[degree_bucket(cdeg[i])] += w;
	}
	for (uint32_t c = 0; c < ncl; c++) {
		m->degree_paths[degree_bucket(pdeg[c])]++;
		if (pdeg[c] == 1)
			m->precise_paths++;
	}
	free(k);
	free(klass);
	free(cdeg);
	free(pdeg);
	return 0;
oom:
	free(k);
	free(klass);
	free(cdeg);
	free(pdeg);
	return -1;
}

/* ---------------------------------------------------------------- costs */

uint32_t da_dispatch_top(const struct da_problem *p, const struct da_plan *plan,
			 struct da_dispatch_fn *top, uint32_t ntop, double *share)
{
	uint32_t *tests = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*tests)), n = 0, kept = 0;
	uint32_t *tags = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*tags));
	uint32_t *tails = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*tails));
	uint64_t *weight = calloc(p->nfuncs ? p->nfuncs : 1, sizeof(*weight));
	*share = 0;
	if (!tests || !tags || !tails || !weight) {
		free(tests);
		free(tags);
		free(tails);
		free(weight);
		return 0;
	}
	for (uint32_t k = 0; k < plan->nclones; k++) {
		uint32_t f = plan->clones[k].func, c = plan->clones[k].callsite;
		if (da_dispatched(p, c, f)) {
			n += !tests[f]++;
			tags[f] += da_tagged(p, c, f);
			tails[f] += p->callsites[c].target != DA_NONE && p->callsites[c].target != f;
		}
	}
	uint64_t total = 0, in = 0;
	for (uint32_t i = 0; i < p->nnodes; i++) {
		total += p->nodes[i].entries;
		weight[p->nodes[i].func] += p->nodes[i].entries;
		if (tests[p->nodes[i].func])
			in += p->nodes[i].entries;
	}
	for (uint32_t f = 0; f < p->nfuncs && ntop; f++) {   /* insertion, heaviest first */
		if (!tests[f] || (kept == ntop && weight[f] <= weight[top[kept - 1].func]))
			continue;
		uint32_t at = kept < ntop ? kept++ : kept - 1;
		while (at && weight[top[at - 1].func] < weight[f]) {
			top[at] = top[at - 1];
			at--;
		}
		top[at] = (struct da_dispatch_fn){f, tests[f], tags[f], tails[f],
						  total ? (double)weight[f] / (double)total : 0};
	}
	free(tests);
	free(tags);
	free(tails);
	free(weight);
	*share = total ? (double)in / (double)total : 0;
	return n;
}

double da_dispatch_share(const struct da_problem *p, const struct da_plan *plan, uint32_t *nfuncs)
{
	double share;
	*nfuncs = da_dispatch_top(p, plan, NULL, 0, &share);
	return share;
}

uint64_t da_func_bytes(const struct da_problem *p, uint32_t func)
{
	uint64_t b = p->funcs[func].code_bytes ? p->funcs[func].code_bytes : DA_CLONE_DEFAULT_BYTES;
	return (b + DA_ALIGN - 1) / DA_ALIGN * DA_ALIGN;
}

uint64_t da_clone_bytes(const struct da_problem *p, uint32_t func, uint32_t callsite)
{
	uint64_t b = da_func_bytes(p, func);
	/* a tagged call's stub, or a cross-module call's thunk: as long */
	return b + (da_dispatched(p, callsite, func) ? DA_DISPATCH_CODE_BYTES : 0) +
	       (da_tagged(p, callsite, func) || da_xcall(p, callsite, func)
			? DA_TAG_CODE_BYTES : 0);
}

/* A wrapped callsite c (or its copy in a clone) by amount: its trampoline
 * is new unless one of the same callee and amount exists (seen). */
static int wrapped(const uint32_t *callee, uint32_t c, uint32_t amount, struct u64map *seen,
		   struct da_result *r)
{
	r->nwraps++;
	if (callee[c] >= DA_NONE - 1) {
		r->code_bytes += DA_WRAP_CODE_BYTES;
	} else if (u64map_get(seen, da_pair(callee[c], amount)) == DA_NONE) {
		r->code_bytes += DA_WRAP_CODE_BYTES;
		if (u64map_put(seen, da_pair(callee[c], amount), 1) < 0)
			return -1;
	}
	return 0;
}

/* The code of the clones and of their copies of wrapped callsites.  The
 * callsites each clone copies come from a list by owner and the clone wraps
 * from a map (per clone, over every callsite and every clone wrap, this
 * took a second of dealII's plan, 3,700 clones). */
static int clone_copy_wraps(const struct da_problem *p, const struct da_plan *plan,
			    const uint32_t *callee, struct u64map *seen, struct da_result *r)
{
	uint32_t *frag = da_fragments_of(p);
	uint32_t *start = calloc(p->nfuncs + 2, sizeof(*start));
	uint32_t *byowner = malloc((p->ncallsites + 1) * sizeof(*byowner));
	struct u64map cw;
	int rc = -1;
	if (!frag || !start || !byowner || u64map_init(&cw, 64) < 0)
		goto out_map;
	for (uint32_t c = 0; c < p->ncallsites; c++)
		if (p->callsites[c].owner < p->nfuncs)
			start[p->callsites[c].owner + 2]++;
	for (uint32_t f = 0; f < p->nfuncs; f++)
		start[f + 2] += start[f + 1];
	for (uint32_t c = 0; c < p->ncallsites; c++)
		if (p->callsites[c].owner < p->nfuncs)
			byowner[start[p->callsites[c].owner + 1]++] = c;
	/* start[f]..start[f + 1]: the callsites f owns */
	for (uint32_t i = 0; i < plan->nclone_wraps; i++) {
		const struct da_clone_wrap *w = &plan->clone_wraps[i];
		if (u64map_put(&cw, da_pair(w->clone, w->callsite), w->amount) < 0)
			goto out;
	}
	for (uint32_t k = 0; k < plan->nclones; k++) {
		uint32_t f = plan->clones[k].func, owners[2] = {f, frag[f]};
		r->code_bytes += da_clone_bytes(p, f, plan->clones[k].callsite);
		for (int o = 0; o < 2; o++) {
			uint32_t g = owners[o];
			if (g >= p->nfuncs || (o && g == f))
				continue;
			for (uint32_t i = start[g]; i < start[g + 1]; i++) {
				uint32_t c = byowner[i], amount = u64map_get(&cw, da_pair(k, c));
				if (amount == DA_NONE)
					amount = plan->wrap[c];
				if (amount && wrapped(callee, c, amount, seen, r) < 0)
					goto out;
			}
		}
	}
	rc = 0;
out:
	u64map_free(&cw);
out_map:
	free(frag);
	free(start);
	free(byowner);
	return rc;
}

/* The nearest ancestor of x of x's function (a level of a recursion), or
 * DA_NONE. */
static uint32_t recursion_top(const struct da_problem *p, uint32_t x)
{
	uint32_t y = p->nodes[x].parent;
	while (y != DA_NONE && p->nodes[y].func != p->nodes[x].func)
		y = p->nodes[y].parent;
	return y;
}

/* A level from y down to x grows by the paddings of the frames from y to
 * x's caller and the wraps of the calls below y: for a node z of it, the
 * frame z's call is made from (a fragment's is its parent's), or DA_NONE
 * for a tail node (its parent's frame is gone). */
static uint32_t level_frame(const struct da_problem *p, uint32_t z)
{
	uint32_t par = p->nodes[z].parent;
	if (p->nodes[z].tail)
		return DA_NONE;
	return p->nodes[par].fragment ? p->nodes[par].parent : par;
}

void da_recursion_masks(const struct da_problem *p, double x, da_mask *func_mask,
			da_mask *cs_mask)
{
	for (uint32_t n = 0; n < p->nnodes; n++) {
		uint32_t y = p->nodes[n].fragment ? DA_NONE : recursion_top(p, n);
		if (y == DA_NONE)
			continue;
		uint32_t k = 0;
		for (uint32_t z = n; z != y; z = p->nodes[z].parent) {
			uint32_t lf = level_frame(p, z), c = p->nodes[z].callsite;
			const struct da_func *f = lf == DA_NONE ? NULL : &p->funcs[p->nodes[lf].func];
			k += f && (f->pad_mask > 1 || f->clone_pad_mask > 1);
			k += c != DA_NONE && p->callsites[c].wrap_mask > 1;
		}
		int64_t bytes = p->nodes[n].height - p->nodes[y].height;
		double share = k && bytes > 0 ? (x - 1) * (double)bytes / k : 0;
		da_mask m = da_mask_upto(share > DA_MAX_STEPS * DA_ALIGN ? DA_MAX_STEPS * DA_ALIGN
									 : (uint32_t)share);
		for (uint32_t z = n; z != y; z = p->nodes[z].parent) {
			if (level_frame(p, z) != DA_NONE)
				func_mask[p->nodes[level_frame(p, z)].func] &= m;
			if (p->nodes[z].callsite != DA_NONE)
				cs_mask[p->nodes[z].callsite] &= m;
		}
	}
}

/* The largest per-level growth of a recursion (section 3): every node
 * against its nearest ancestor of the same function. */
static void recursion_costs(const struct da_problem *p, const int64_t *height,
			    struct da_result *r)
{
	r->recursion_growth = 1;
	r->recursion_node = DA_NONE;
	r->recursion_old = r->recursion_new = 0;
	for (uint32_t x = 0; x < p->nnodes; x++) {
		uint32_t y = p->nodes[x].fragment ? DA_NONE : recursion_top(p, x);
		if (y == DA_NONE)
			continue;
		int64_t old = p->nodes[x].height - p->nodes[y].height, nw = height[x] - height[y];
		if (old <= 0 || (double)nw / (double)old <= r->recursion_growth)
			continue;
		r->recursion_growth = (double)nw / (double)old;
		r->recursion_node = x;
		r->recursion_old = old;
		r->recursion_new = nw;
	}
}

/* The hot code the plan adds (disambig.h section 5, hot_code_weight): of
 * every function's copy, original or clone, its code as hot as its frames'
 * entries make it (da_hot_bytes), less that of the originals before. */
static int hot_code(const struct da_problem *p, const struct da_plan *plan, const uint32_t *inst,
		    struct da_result *r)
{
	uint32_t ncopies = p->nfuncs + plan->nclones;
	uint64_t *after = calloc(ncopies + 1, sizeof(*after));
	uint64_t *before = calloc(p->nfuncs + 1, sizeof(*before));
	if (!after || !before) {
		free(after);
		free(before);
		return -1;
	}
	uint64_t esum = 0;
	for (uint32_t i = 0; i < p->nnodes; i++) {
		uint64_t e = p->nodes[i].entries;
		uint32_t in = inst ? inst[i] : p->nodes[i].func;
		esum += e;
		before[p->nodes[i].func] += e;
		if (in < ncopies)       /* a fragment's copy is its clone's code */
			after[in] += e;
	}
	double unit = da_hot_unit(esum), hot = 0;
	for (uint32_t f = 0; f < p->nfuncs; f++) {
		uint64_t b = da_func_bytes(p, f);
		hot += da_hot_bytes(b, after[f], unit) - da_hot_bytes(b, before[f], unit);
	}
	for (uint32_t k = 0; k < plan->nclones; k++)
		hot += da_hot_bytes(da_clone_bytes(p, plan->clones[k].func, plan->clones[k].callsite),
				    after[p->nfuncs + k], unit);
	r->hot_code_bytes = llround(hot);
	free(after);
	free(before);
	return 0;
}

int da_costs(const struct da_problem *p, const struct da_plan *plan, const int64_t *height,
	     const uint32_t *inst, struct da_result *r)
{
	recursion_costs(p, height, r);
	if (hot_code(p, plan, inst, r) < 0)
		return -1;
	uint32_t n = p->nnodes;
	uint32_t *root = malloc((n + 1) * sizeof(*root));
	uint32_t *slot = malloc((n + 1) * sizeof(*slot));
	if (!root || !slot) {
		free(root);
		free(slot);
		return -1;
	}
	uint32_t nroots = 0;
	for (uint32_t i = 0; i < n; i++) {
		root[i] = p->nodes[i].parent == DA_NONE ? i : root[p->nodes[i].parent];
		if (p->nodes[i].parent == DA_NONE)
			slot[i] = nroots++;
	}
	free(r->roots);
	r->roots = calloc(nroots + 1, sizeof(*r->roots));
	if (!r->roots) {
		free(root);
		free(slot);
		return -1;
	}
	r->nroots = nroots;
	for (uint32_t i = 0; i < n; i++) {
		struct da_root_cost *rc = &r->roots[slot[root[i]]];
		uint32_t in = inst ? inst[i] : p->nodes[i].func;
		int64_t ext = height[i];
		if (!p->nodes[i].fragment)      /* a fragment's padding counts at its parent */
			ext += in < p->nfuncs ? plan->pad[in] : plan->clones[in - p->nfuncs].pad;
		if (!rc->nodes) {
			rc->node = root[i];
			rc->old_max = p->nodes[i].height;
			rc->new_max = ext;
		}
		rc->nodes++;
		if (p->nodes[i].height > rc->old_max)
			rc->old_max = p->nodes[i].height;
		if (ext > rc->new_max)
			rc->new_max = ext;
	}
	double logsum = 0;
	r->max_growth = nroots ? 0 : 1;
	r->max_growth_bytes = 0;
	for (uint32_t i = 0; i < nroots; i++) {
		struct da_root_cost *rc = &r->roots[i];
		rc->growth = (double)rc->new_max / (double)(rc->old_max < 16 ? 16 : rc->old_max);
		if (rc->growth > r->max_growth)
			r->max_growth = rc->growth;
		if (rc->new_max - rc->old_max > r->max_growth_bytes)
			r->max_growth_bytes = rc->new_max - rc->old_max;
		logsum += log(rc->growth > 0 ? rc->growth : 1);
	}
	r->geomean_growth = nroots ? exp(logsum / nroots) : 1;
	/* code (disambig.h section 3): one trampoline per (callee, amount) of
	 * wrapped callsites with one callee, one per other wrapped callsite */
	r->code_bytes = 0;
	r->nwraps = 0;
	uint32_t *callee = malloc((p->ncallsites + 1) * sizeof(*callee));
	struct u64map seen;
	if (!callee || u64map_init(&seen, 64) < 0) {
		free(callee);
		free(root);
		free(slot);
		return -1;
	}
	for (uint32_t c = 0; c < p->ncallsites; c++)
		callee[c] = DA_NONE - 1;                /* not seen yet */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t c = p->nodes[i].callsite;
		if (c == DA_NONE)
			continue;
		if (callee[c] == DA_NONE - 1)
			callee[c] = p->nodes[i].func;
		else if (callee[c] != p->nodes[i].func)
			callee[c] = DA_NONE;
	}
	int rc = 0;
	for (uint32_t c = 0; c < plan->ncallsites && !rc; c++)
		if (plan->wrap[c])
			rc = wrapped(callee, c, plan->wrap[c], &seen, r);
	/* a clone's copies of wrapped callsites (its fragment's too) call
	 * trampolines too */
	if (!rc && plan->nclones)
		rc = clone_copy_wraps(p, plan, callee, &seen, r);
	u64map_free(&seen);
	free(callee);
	free(root);
	free(slot);
	return rc;
}
