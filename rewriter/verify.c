/* verify.c: pathmaps of rewritten binaries -- which module is the rewritten
 * file, trampoline frames removed from a trained map, and the comparison of
 * a trained map with the prediction (rewriter.h section 3). */
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "binary/binary.h"
#include "disambig/from_pathmap.h"
#include "rewriter/internal.h"

uint32_t rw_find_module(const struct pathmap *pm, const struct rw_binary *b)
{
	const uint8_t *id;
	size_t len = bin_build_id(b->bin, &id);
	if (len) {
		uint32_t m = pm_module_by_build_id(pm, id, (uint32_t)len);
		if (m != PM_NONE)
			return m;
	}
	char real[PATH_MAX];
	if (!realpath(b->path, real))
		return PM_NONE;
	for (uint32_t i = 0; i < pm->nmodules; i++)
		if (!strcmp(pm->modules[i].path, real) && (!len || !pm->modules[i].build_id_len))
			return i;
	return PM_NONE;
}

int rw_rename_module(struct pathmap *pm, uint32_t module, const char *path, const uint8_t *id,
		     uint32_t idlen)
{
	char *p = strdup(path);
	if (!p || module >= pm->nmodules || idlen > PM_BUILD_ID_MAX) {
		free(p);
		return -1;
	}
	free(pm->modules[module].path);
	pm->modules[module].path = p;
	memcpy(pm->modules[module].build_id, id, idlen);
	pm->modules[module].build_id_len = idlen;
	return 0;
}

/* ------------------------------------------------------------------ hidden frames */

/* The unit owning the function that contains addr (a fragment's parent). */
static uint32_t owner_at(const struct rw_binary *b, uint64_t addr)
{
	size_t lo = 0, hi = b->nfuncs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (b->funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= b->funcs[lo - 1].addr + b->funcs[lo - 1].size)
		return RW_NONE;
	uint32_t f = (uint32_t)(lo - 1);
	return b->funcs[f].parent != RW_NONE ? b->funcs[f].parent : f;
}

/* Does the code of pathmap function pf contain (csm, csa)? */
static bool contains(const struct rw_binary *b, const struct pathmap *pm, uint32_t module,
		     uint32_t pf, uint32_t csm, uint64_t csa)
{
	const struct pm_function *f = &pm->funcs[pf];
	if (f->module != csm)
		return false;
	if (csm == module) {
		uint32_t o = owner_at(b, csa), of = rw_func_index(b, f->addr);
		return o != RW_NONE && o == (of != RW_NONE && b->funcs[of].parent != RW_NONE
						     ? b->funcs[of].parent : of);
	}
	return csa >= f->addr && (f->size ? csa < f->addr + f->size : true);
}

static bool external(const struct rw_call *c)
{
	return c->slot || !c->target;
}

/* rw_visibility's work: the binary, the map's module of it, the result,
 * and per function of the binary what the nodes showed. */
struct vis {
	const struct rw_binary *b;
	const struct pathmap *pm;
	uint32_t module;
	struct rw_visibility *v;
	bool *hidden;           /* calls it makes may not show in training */
	bool *ext_in;           /* entered by calls of other modules */
	bool *no_wrap_into;     /* no call into it may be wrapped */
};

/* Node i has no callsite and a parent: a frame training rebuilt (its
 * caller's entry was not seen), so no call into it may be wrapped; or a
 * .cold fragment in its owner's frame (disambig.h section 2). */
static void rebuilt_frame(struct vis *V, uint32_t i)
{
	const struct pathmap *pm = V->pm;
	const struct pm_node *x = &pm->nodes[i], *p = &pm->nodes[x->parent];
	if (pm_fragment_frame(pm, i))
		return;
	V->v->hidden_nodes++;
	const struct pm_function *f = &pm->funcs[x->func];
	if (f->module == V->module) {
		/* a fragment (a landing pad in a .cold part) continues a
		 * frame of the function it belongs to, entered by a call
		 * the map does not name: no call into that function */
		uint32_t u = rw_func_index(V->b, f->addr);
		if (u != RW_NONE && V->b->funcs[u].parent != RW_NONE)
			u = V->b->funcs[u].parent;
		if (u != RW_NONE)
			V->no_wrap_into[u] = true;
	} else if (pm->funcs[p->func].module == V->module) {
		uint32_t pf = owner_at(V->b, pm->funcs[p->func].addr);
		if (pf != RW_NONE)
			V->ext_in[pf] = true;
	}
}

/* Node x's callsite lies in ancestor a above its parent (a stale parent):
 * the frames between had returned, so none of them is padded and none of
 * their calls wrapped. */
static void returned_between(struct vis *V, const struct pm_node *x, uint32_t a)
{
	const struct pathmap *pm = V->pm;
	for (uint32_t f = x->parent; f != a; f = pm->nodes[f].parent) {
		const struct pm_node *fn = &pm->nodes[f];
		if (pm->funcs[fn->func].module == V->module) {
			uint32_t o = owner_at(V->b, pm->funcs[fn->func].addr);
			if (o != RW_NONE)
				V->v->no_pad[o] = true;
		}
		if (fn->cs_module == V->module) {
			uint32_t c = rw_call_index(V->b, fn->cs_addr);
			if (c != RW_NONE)
				V->v->no_wrap[c] = true;
		}
	}
}

/* Node x's callsite is in no frame above it: the function holding it
 * calls unseen; the call into its parent P is not wrapped, P is not
 * padded, and P (or its caller) may be entered from elsewhere. */
static void unseen_call(struct vis *V, const struct pm_node *x, const struct pm_node *p)
{
	const struct pathmap *pm = V->pm;
	const struct rw_binary *b = V->b;
	if (x->cs_module == V->module) {
		uint32_t u = owner_at(b, x->cs_addr);
		if (u != RW_NONE)
			V->hidden[u] = true;
	}
	if (!p)
		return;
	/* the call into P (P may be a stale sibling) is not wrapped */
	if (p->cs_module == V->module) {
		uint32_t c = rw_call_index(b, p->cs_addr);
		if (c != RW_NONE)
			V->v->no_wrap[c] = true;
	}
	if (pm->funcs[p->func].module != V->module)
		return;
	/* P is not padded */
	uint32_t pf = owner_at(b, pm->funcs[p->func].addr);
	if (pf != RW_NONE) {
		V->v->no_pad[pf] = true;
		if (x->cs_module != V->module)
			V->ext_in[pf] = true;
	}
	/* U elsewhere: the caller of P may be the real caller of U */
	const struct pm_node *pp = p->parent == PM_NONE ? NULL : &pm->nodes[p->parent];
	if (x->cs_module != V->module && pp && pm->funcs[pp->func].module == V->module) {
		uint32_t cf = owner_at(b, pm->funcs[pp->func].addr);
		if (cf != RW_NONE)
			V->ext_in[cf] = true;
	}
}

/* What node i shows of calls training did not see. */
static void visit_node(struct vis *V, uint32_t i)
{
	const struct pathmap *pm = V->pm;
	const struct pm_node *x = &pm->nodes[i];
	const struct pm_node *p = x->parent == PM_NONE ? NULL : &pm->nodes[x->parent];
	if (x->cs_module == PM_NONE) {
		if (p)
			rebuilt_frame(V, i);
		return;
	}
	if (p && contains(V->b, pm, V->module, p->func, x->cs_module, x->cs_addr))
		return;
	V->v->hidden_nodes++;
	uint32_t a = p ? p->parent : PM_NONE;
	while (a != PM_NONE &&
	       !contains(V->b, pm, V->module, pm->nodes[a].func, x->cs_module, x->cs_addr))
		a = pm->nodes[a].parent;
	if (a != PM_NONE)
		returned_between(V, x, a);
	else
		unseen_call(V, x, p);
}

/* Callers of hidden functions that training never saw are hidden too;
 * hidden functions are not padded, and calls into them (or into what no
 * call may be wrapped into, or out of a function entered from elsewhere
 * to another module or an unknown target) not wrapped. */
static void spread_hidden(struct vis *V)
{
	const struct rw_binary *b = V->b;
	struct rw_visibility *v = V->v;
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t c = 0; c < b->ncalls; c++) {
			const struct rw_call *rc = &b->calls[c];
			uint32_t t = rc->target ? rw_func_index(b, rc->target) : RW_NONE;
			if (t == RW_NONE || !V->hidden[t] || V->hidden[rc->func] || v->in_map[rc->func])
				continue;
			V->hidden[rc->func] = changed = true;
		}
	}
	for (size_t f = 0; f < b->nfuncs; f++)
		if (V->hidden[f]) {
			v->no_pad[f] = true;
			v->hidden_funcs++;
		}
	for (size_t c = 0; c < b->ncalls; c++) {
		const struct rw_call *rc = &b->calls[c];
		uint32_t t = rc->target ? rw_func_index(b, rc->target) : RW_NONE;
		if ((t != RW_NONE && (V->hidden[t] || V->no_wrap_into[t])) ||
		    (V->ext_in[rc->func] && (external(rc) || t == RW_NONE)))
			v->no_wrap[c] = true;
	}
}

/* A node of a recursion's sibling group: its call is not wrapped, its
 * function not cloned. */
static void lock_sibling(struct vis *V, const struct pm_node *x)
{
	if (x->cs_module == V->module) {
		uint32_t c = rw_call_index(V->b, x->cs_addr);
		if (c != RW_NONE)
			V->v->no_wrap[c] = true;
	}
	if (V->pm->funcs[x->func].module == V->module) {
		uint32_t f = rw_func_index(V->b, V->pm->funcs[x->func].addr);
		if (f != RW_NONE)
			V->v->no_clone[f] = true;
	}
}

/* A node by (parent, function, callsite, height), as the comparison below
 * finds predicted nodes; with func 0, where its frame was entered. */
struct key {
	uint32_t parent, func, csm;
	uint64_t csa;
	int64_t height;
	uint32_t node;
};

static int cmp_key(const void *x, const void *y)
{
	const struct key *a = x, *b = y;
	if (a->parent != b->parent)
		return a->parent < b->parent ? -1 : 1;
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	if (a->csm != b->csm)
		return a->csm < b->csm ? -1 : 1;
	if (a->csa != b->csa)
		return a->csa < b->csa ? -1 : 1;
	return a->height < b->height ? -1 : a->height > b->height;
}

/* The functions with a frame of another function beside one of their own
 * (tail_seen).  0, or -1 out of memory. */
static int find_tail_seen(struct vis *V)
{
	const struct pathmap *pm = V->pm;
	struct key *e = malloc((pm->nnodes + 1) * sizeof(*e));
	uint32_t n = 0;
	if (!e)
		return -1;
	for (uint32_t i = 0; i < pm->nnodes; i++) {
		const struct pm_node *x = &pm->nodes[i];
		if (x->parent != PM_NONE && x->cs_module != PM_NONE)
			e[n++] = (struct key){x->parent, 0, x->cs_module, x->cs_addr, x->height, i};
	}
	qsort(e, n, sizeof(*e), cmp_key);
	for (uint32_t lo = 0, hi; lo < n; lo = hi) {
		bool mixed = false;
		for (hi = lo + 1; hi < n && !cmp_key(&e[lo], &e[hi]); hi++)
			mixed = mixed || pm->nodes[e[hi].node].func != pm->nodes[e[lo].node].func;
		for (uint32_t k = lo; mixed && k < hi; k++) {
			const struct pm_function *f = &pm->funcs[pm->nodes[e[k].node].func];
			uint32_t fi = f->module == V->module ? rw_func_index(V->b, f->addr) : RW_NONE;
			if (fi != RW_NONE)
				V->v->tail_seen[fi] = true;
		}
	}
	free(e);
	return 0;
}

int rw_visibility(const struct rw_binary *b, const struct pathmap *pm, uint32_t module,
		  struct rw_visibility *v)
{
	memset(v, 0, sizeof(*v));
	size_t n = b->nfuncs ? b->nfuncs : 1, nc = b->ncalls ? b->ncalls : 1;
	struct vis V = {b, pm, module, v, calloc(n, sizeof(bool)), calloc(n, sizeof(bool)),
			calloc(n, sizeof(bool))};
	v->no_pad = calloc(n, sizeof(bool));
	v->in_map = calloc(n, sizeof(bool));
	v->no_wrap = calloc(nc, sizeof(bool));
	v->no_clone = calloc(n, sizeof(bool));
	v->tail_seen = calloc(n, sizeof(bool));
	bool *in_group = malloc((pm->nnodes + 1) * sizeof(bool));
	int rc = -1;
	if (!V.hidden || !V.ext_in || !V.no_wrap_into || !v->no_pad || !v->in_map || !v->no_wrap ||
	    !v->no_clone || !v->tail_seen || !in_group || pm_sibling_groups(pm, in_group) < 0) {
		rw_visibility_free(v);
		goto out;
	}
	for (uint32_t i = 0; i < pm->nfuncs; i++)
		if (pm->funcs[i].module == module) {
			uint32_t f = rw_func_index(b, pm->funcs[i].addr);
			if (f != RW_NONE)
				v->in_map[f] = true;
		}
	for (uint32_t i = 0; i < pm->nnodes; i++)
		visit_node(&V, i);
	spread_hidden(&V);
	for (uint32_t i = 0; i < pm->nnodes; i++)
		if (in_group[i])
			lock_sibling(&V, &pm->nodes[i]);
	if (find_tail_seen(&V) < 0) {
		rw_visibility_free(v);
		goto out;
	}
	rc = 0;
out:
	free(in_group);
	free(V.hidden);
	free(V.ext_in);
	free(V.no_wrap_into);
	return rc;
}

void rw_visibility_free(struct rw_visibility *v)
{
	free(v->no_wrap);
	free(v->no_clone);
	free(v->no_pad);
	free(v->in_map);
	free(v->tail_seen);
	memset(v, 0, sizeof(*v));
}

/* The trampoline (index into n->wraps) holding addr, or RW_NONE. */
static uint32_t tramp_at(const struct rw_note *n, uint64_t addr)
{
	uint32_t lo = 0, hi = n->nwraps;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (n->wraps[mid].tramp <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < n->wraps[lo - 1].tramp + n->wraps[lo - 1].size)
		return lo - 1;
	return RW_NONE;
}

/* What the tag of another module's call at csa hashes: the callsite its
 * stub or trampoline serves, when csa is in one; for a copy of call c in
 * that module's clone J, rw_copy_key(c, J) (rewriter.h section 1). */
static uint64_t tagged_site(const struct rw_orig_id *o, uint64_t csa)
{
	uint32_t w = o->note ? tramp_at(o->note, csa) : RW_NONE;
	uint64_t site = w == RW_NONE ? csa : o->note->wraps[w].site;
	for (uint32_t j = 0; o->note && j < o->note->nclones; j++) {
		uint64_t orig = rw_clone_orig_addr(&o->note->clones[j], site);
		if (orig)
			return rw_copy_key(orig, j);
	}
	return site;
}

/* The clone whose dispatch hands on a frame of function func entered
 * through callsite (csm, csa) at its entry (rewriter.h section 1), or
 * NULL.  Training saw the function's entry, then the clone's at the same
 * CFA.  Only a dispatched clone does that: the same frame beside a direct
 * clone is the original function entered another way (a copy's tail call
 * of it), which the prediction must account for. */
static const struct rw_note_clone *dispatched_by(const struct rw_note *note,
						 const struct pathmap *in,
						 const struct rw_orig_id *orig, uint32_t module,
						 uint32_t func, uint32_t csm, uint64_t csa)
{
	const struct pm_function *f = &in->funcs[func];
	if (f->module != module || csm == PM_NONE)
		return NULL;
	for (uint32_t k = 0; k < note->nclones; k++) {
		const struct rw_note_clone *c = &note->clones[k];
		if (!c->dispatched || c->func != f->addr)
			continue;
		if (!c->tag ? csm == module && c->site == csa
			    : csm != module && orig && c->site == tagged_site(&orig[csm], csa) &&
				      c->tag == rw_tag(orig[csm].id, orig[csm].len, c->site))
			return c;
	}
	return NULL;
}

/* Did clone c take node i's entries: frames of it beside i (same parent,
 * callsite and height) entered as often?  Where the dispatch missed, the
 * original's frame stays, and the comparison finds it where the prediction
 * has the clone's. */
static bool handed_on(const struct pathmap *in, const uint32_t *first_child,
		      const uint32_t *next_sibling, uint32_t i, uint32_t module,
		      const struct rw_note_clone *c)
{
	const struct pm_node *x = &in->nodes[i];
	uint64_t taken = 0;
	if (x->parent == PM_NONE)
		return false;
	for (uint32_t j = first_child[x->parent]; j != PM_NONE; j = next_sibling[j]) {
		const struct pm_node *y = &in->nodes[j];
		const struct pm_function *g = &in->funcs[y->func];
		if (g->module == module && g->addr == c->addr && y->cs_module == x->cs_module &&
		    y->cs_addr == x->cs_addr && y->height == x->height)
			taken += y->entries;
	}
	return taken >= x->entries;
}

int rw_collapse(const struct pathmap *in, uint32_t module, const struct rw_note *note,
		const struct rw_orig_id *orig, struct pathmap **out, char *err, size_t errlen)
{
	uint32_t *mods = malloc((in->nmodules ? in->nmodules : 1) * sizeof(*mods));
	uint32_t *funcs = malloc((in->nfuncs ? in->nfuncs : 1) * sizeof(*funcs));
	uint32_t *nodes = malloc((in->nnodes ? in->nnodes : 1) * sizeof(*nodes));
	uint32_t *first_child = malloc((in->nnodes ? in->nnodes : 1) * sizeof(*first_child));
	uint32_t *next_sibling = malloc((in->nnodes ? in->nnodes : 1) * sizeof(*next_sibling));
	struct pathmap *pm = pm_new();
	if (!mods || !funcs || !nodes || !first_child || !next_sibling || !pm)
		goto oom;
	for (uint32_t i = 0; i < in->nnodes; i++)
		first_child[i] = PM_NONE;
	for (uint32_t i = in->nnodes; i-- > 0;) {
		uint32_t up = in->nodes[i].parent;
		next_sibling[i] = up == PM_NONE ? PM_NONE : first_child[up];
		if (up != PM_NONE)
			first_child[up] = i;
	}
	for (uint32_t i = 0; i < in->nmodules; i++) {
		const struct pm_module *m = &in->modules[i];
		mods[i] = pm_add_module(pm, m->path, m->build_id, m->build_id_len);
		if (mods[i] == PM_NONE)
			goto oom;
		pm->modules[mods[i]].functions_found = m->functions_found;
		pm->modules[mods[i]].functions_hooked = m->functions_hooked;
	}
	for (uint32_t i = 0; i < in->nfuncs; i++) {
		const struct pm_function *f = &in->funcs[i];
		funcs[i] = PM_NONE;
		if (f->module == module && tramp_at(note, f->addr) != RW_NONE)
			continue;
		funcs[i] = pm_add_function(pm, mods[f->module], f->addr, f->size, f->name);
		if (funcs[i] == PM_NONE)
			goto oom;
	}
	/* For a removed trampoline node, nodes[i] is its parent's new index; its
	 * children called from inside it take the callsite it serves (the
	 * note's), others (a landing pad entered by the unwinder, with no
	 * callsite) keep theirs. */
	for (uint32_t i = 0; i < in->nnodes; i++) {
		const struct pm_node *x = &in->nodes[i];
		uint32_t parent = x->parent == PM_NONE ? PM_NONE : nodes[x->parent];
		uint32_t csm = x->cs_module;
		uint64_t csa = x->cs_addr;
		if (csm == module) {
			uint32_t w = tramp_at(note, csa);
			if (w != RW_NONE)
				csa = note->wraps[w].site;   /* a trampoline training did not hook */
		}
		/* a childless frame a dispatch may have handed on */
		const struct rw_note_clone *by =
			first_child[i] != PM_NONE
				? NULL
				: dispatched_by(note, in, orig, module, x->func, csm, csa);
		if (funcs[x->func] == PM_NONE ||
		    (by && handed_on(in, first_child, next_sibling, i, module, by))) {
			nodes[i] = parent;
			continue;
		}
		int64_t height = x->height + (csm == PM_NONE ? 0 : rw_entry_bytes(note, in, module, x->func));
		nodes[i] = pm_add_node(pm, parent, funcs[x->func], csm == PM_NONE ? PM_NONE : mods[csm],
				       csm == PM_NONE ? 0 : csa, height, x->entries);
		if (nodes[i] == PM_NONE)
			goto oom;
	}
	free(mods);
	free(funcs);
	free(nodes);
	free(first_child);
	free(next_sibling);
	*out = pm;
	return 0;
oom:
	errmsg(err, errlen, "out of memory removing trampoline frames");
	free(mods);
	free(funcs);
	free(nodes);
	free(first_child);
	free(next_sibling);
	pm_free(pm);
	return -1;
}

/* ------------------------------------------------------------------ compare */

/* First key >= k (height included when exact). */
static size_t lower(const struct key *v, size_t n, const struct key *k)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (cmp_key(&v[mid], k) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool same_site(const struct key *a, const struct key *b)
{
	return a->parent == b->parent && a->func == b->func && a->csm == b->csm && a->csa == b->csa;
}

/* For stale-parent nodes: keys with every parent 0, so that a lookup finds
 * (function, callsite, height) wherever it is.  2: all three predicted; 1:
 * (function, callsite) only; 0: neither. */
static int find_any_parent(const struct key *v, size_t n, struct key k)
{
	k.parent = 0;
	int64_t h = k.height;
	k.height = INT64_MIN;
	int found = 0;
	for (size_t at = lower(v, n, &k); at < n && same_site(&v[at], &k); at++) {
		found = 1;
		if (v[at].height == h)
			return 2;
	}
	return found;
}

static uint32_t match_module(const struct pathmap *pred, const struct pm_module *m)
{
	if (m->build_id_len) {
		uint32_t i = pm_module_by_build_id(pred, m->build_id, m->build_id_len);
		if (i != PM_NONE)
			return i;
	}
	for (uint32_t i = 0; i < pred->nmodules; i++)
		if (!strcmp(pred->modules[i].path, m->path) &&
		    (!m->build_id_len || !pred->modules[i].build_id_len))
			return i;
	return PM_NONE;
}

enum { V_MATCH, V_MISMATCH, V_UNPREDICTED, V_HIDDEN, V_VARYING, V_OUTSIDE };

static bool func_holds(const struct pathmap *pm, uint32_t func, uint32_t csm, uint64_t csa)
{
	const struct pm_function *f = &pm->funcs[func];
	return f->module == csm && csa >= f->addr && (!f->size || csa < f->addr + f->size);
}

/* Is node i's parent a guess?  Entry-only training keeps a frame that has
 * returned (a stale sibling) as long as no entry at its SP or above pops it,
 * so a call made deeper in the real caller looks like a call from that
 * sibling.  Then the callsite lies in an ancestor above the parent (training
 * now corrects most of these itself).  A node with a parent but no callsite
 * is a frame training rebuilt from the CFI (its entry was not seen) or a
 * landing pad: where it sits is training's reconstruction, not a call, so
 * it and its subtree are checked by function, callsite and height alone.
 * One at its parent's height is a .cold fragment in its owner's activation
 * (docs/training.md): where it sits is certain. */
static bool stale_parent(const struct pathmap *pm, uint32_t i)
{
	const struct pm_node *x = &pm->nodes[i];
	if (x->parent != PM_NONE && x->cs_module == PM_NONE)
		return !pm_fragment_frame(pm, i);        /* rebuilt, or a landing pad */
	if (x->parent == PM_NONE || x->cs_module == PM_NONE ||
	    func_holds(pm, pm->nodes[x->parent].func, x->cs_module, x->cs_addr))
		return false;
	for (uint32_t a = pm->nodes[x->parent].parent; a != PM_NONE; a = pm->nodes[a].parent)
		if (func_holds(pm, pm->nodes[a].func, x->cs_module, x->cs_addr))
			return true;
	return false;
}

/* What verify needs while it walks the observed nodes. */
struct vstate {
	struct pathmap *pred;        /* not const: pm_function_at indexes it */
	const struct pathmap *obs;
	struct key *keys, *fk;       /* predicted nodes; fk: every parent 0 */
	uint32_t *mods, *funcs;      /* observed module/function -> predicted */
	uint32_t *match;             /* observed node -> predicted node */
	uint8_t *state;              /* V_* */
	bool *offends;               /* the top of an offending subtree (--show) */
	bool *in_module;             /* a frame of a rewritten module on its path */
	const bool *rewritten;       /* per observed module (NULL: all) */
	bool *seen;                  /* predicted node observed */
	bool *varies;                /* predicted node: a frame whose size varies */
};

static struct key observed_key(const struct vstate *v, uint32_t i)
{
	const struct pm_node *x = &v->obs->nodes[i];
	return (struct key){x->parent == PM_NONE ? PM_NONE : v->match[x->parent], v->funcs[x->func],
			    x->cs_module == PM_NONE ? PM_NONE : v->mods[x->cs_module], x->cs_addr,
			    x->height, 0};
}

/* Distinct predicted heights of k's callsite path; *first: the first key. */
static unsigned predicted_heights(const struct vstate *v, struct key k, size_t *first)
{
	size_t n = v->pred->nnodes;
	k.height = INT64_MIN;
	size_t j = lower(v->keys, n, &k);
	*first = j;
	unsigned d = 0;
	for (; j < n && same_site(&v->keys[j], &k); j++)
		d += j == *first || v->keys[j].height != v->keys[j - 1].height;
	return d;
}

/* Is node i's parent a frame of a module not rewritten, and its callsite
 * too?  Then nothing of the rewrite lies between their heights but node i's
 * own entry wrapper, which both the prediction and the collapsed map add. */
static bool untouched_step(const struct vstate *v, uint32_t i)
{
	const struct pm_node *x = &v->obs->nodes[i];
	if (!v->rewritten || x->parent == PM_NONE)
		return false;
	const struct pm_node *p = &v->obs->nodes[x->parent];
	return !v->rewritten[v->obs->funcs[p->func].module] &&
	       (x->cs_module == PM_NONE || !v->rewritten[x->cs_module]);
}

/* A node whose parent matched: its height predicted, another one, or its
 * callsite path not predicted.  Another height is no error of the rewrite
 * below a frame whose size varies: training saw one of its callees' callsite
 * paths at several heights (glibc's printf sizes its frame by what it
 * prints), or the frame and its call of the callee are of modules not
 * rewritten, so that only the frame's own size can differ (glibc's loader
 * copies the program headers of a library it maps to its frame when they
 * lie past its first read, as a rewritten library's do, and sizes it by the
 * library's path; its callee may be of a rewritten libc).  Nor on a path
 * with no frame of a rewritten module (variation between runs). */
static void classify_node(struct vstate *v, uint32_t i)
{
	struct key k = observed_key(v, i);
	size_t at = lower(v->keys, v->pred->nnodes, &k);
	if (k.func != PM_NONE && at < v->pred->nnodes && !cmp_key(&v->keys[at], &k)) {
		v->state[i] = V_MATCH;
		v->match[i] = v->keys[at].node;
		v->seen[v->keys[at].node] = true;
		return;
	}
	size_t first;
	unsigned heights = k.func == PM_NONE ? 0 : predicted_heights(v, k, &first);
	bool varies = heights > 1 || (k.parent != PM_NONE && v->varies[k.parent]) ||
		      untouched_step(v, i);
	v->state[i] = !heights ? V_UNPREDICTED : !v->in_module[i] ? V_OUTSIDE
					 : varies ? V_VARYING : V_MISMATCH;
	v->offends[i] = v->state[i] == V_MISMATCH || v->state[i] == V_UNPREDICTED;
}

/* Under a reconstructed frame: (function, callsite, height) looked up
 * anywhere; counts and marks as rw_verify_result says. */
static void check_hidden(struct vstate *v, uint32_t i, struct rw_verify_result *r)
{
	const struct pm_node *x = &v->obs->nodes[i];
	struct key k = {0, v->funcs[x->func], x->cs_module == PM_NONE ? PM_NONE : v->mods[x->cs_module],
			x->cs_addr, x->height, 0};
	int f = v->funcs[x->func] == PM_NONE || x->cs_module == PM_NONE
			? 0 : find_any_parent(v->fk, v->pred->nnodes, k);
	r->hidden_matched += f == 2;
	r->hidden_mismatched += f == 1;
	v->offends[i] = f == 1;
}

static void print_offender(const struct vstate *v, FILE *out, uint32_t i)
{
	const struct pm_node *x = &v->obs->nodes[i];
	if (v->state[i] == V_HIDDEN) {
		fprintf(out, "  under a reconstructed frame, not at a predicted height: %" PRId64, x->height);
	} else if (v->state[i] == V_UNPREDICTED) {
		fprintf(out, "  not predicted: height %" PRId64, x->height);
	} else {
		size_t j;
		struct key k = observed_key(v, i);
		predicted_heights(v, k, &j);
		fprintf(out, "  wrong height: height %" PRId64 ", predicted", x->height);
		for (; j < v->pred->nnodes && same_site(&v->keys[j], &k); j++)
			fprintf(out, " %" PRId64, v->keys[j].height);
	}
	fprintf(out, "\n    ");
	pm_print_path(out, v->obs, i, " > ", PM_PRINT_CALLSITES, bin_demangle);
	fputc('\n', out);
}

/* Up to `show` offenders, wrong heights first: they are what verify is for. */
static void print_offenders(const struct vstate *v, FILE *out, unsigned show)
{
	static const uint8_t order[] = {V_MISMATCH, V_HIDDEN, V_UNPREDICTED};
	unsigned shown = 0;
	for (size_t o = 0; o < sizeof(order); o++)
		for (uint32_t i = 0; i < v->obs->nnodes && shown < show; i++)
			if (v->offends[i] && v->state[i] == order[o]) {
				print_offender(v, out, i);
				shown++;
			}
}

static int vstate_init(struct vstate *v, struct pathmap *pred, const struct pathmap *obs,
		       const bool *rewritten)
{
	size_t np = pred->nnodes ? pred->nnodes : 1, no = obs->nnodes ? obs->nnodes : 1;
	*v = (struct vstate){.pred = pred, .obs = obs, .rewritten = rewritten};
	v->keys = malloc(np * sizeof(*v->keys));
	v->fk = malloc(np * sizeof(*v->fk));
	v->seen = calloc(np, sizeof(*v->seen));
	v->varies = calloc(np, sizeof(*v->varies));
	v->mods = malloc((obs->nmodules ? obs->nmodules : 1) * sizeof(*v->mods));
	v->funcs = malloc((obs->nfuncs ? obs->nfuncs : 1) * sizeof(*v->funcs));
	v->match = malloc(no * sizeof(*v->match));
	v->state = malloc(no);
	v->offends = calloc(no, sizeof(*v->offends));
	v->in_module = calloc(no, sizeof(*v->in_module));
	if (!v->keys || !v->fk || !v->seen || !v->mods || !v->funcs || !v->match || !v->state ||
	    !v->offends || !v->in_module || !v->varies)
		return -1;
	for (uint32_t i = 0; i < pred->nnodes; i++) {
		const struct pm_node *x = &pred->nodes[i];
		v->keys[i] = (struct key){x->parent, x->func, x->cs_module, x->cs_addr, x->height, i};
	}
	qsort(v->keys, pred->nnodes, sizeof(*v->keys), cmp_key);
	for (uint32_t i = 1; i < pred->nnodes; i++)
		if (same_site(&v->keys[i], &v->keys[i - 1]) && v->keys[i].parent != PM_NONE)
			v->varies[v->keys[i].parent] = true;
	for (uint32_t i = 0; i < pred->nnodes; i++) {
		v->fk[i] = v->keys[i];
		v->fk[i].parent = 0;
	}
	qsort(v->fk, pred->nnodes, sizeof(*v->fk), cmp_key);
	for (uint32_t i = 0; i < obs->nmodules; i++)
		v->mods[i] = match_module(pred, &obs->modules[i]);
	for (uint32_t i = 0; i < obs->nfuncs; i++) {
		const struct pm_function *f = &obs->funcs[i];
		v->funcs[i] = v->mods[f->module] == PM_NONE ? PM_NONE
							    : pm_function_at(pred, v->mods[f->module], f->addr);
	}
	for (uint32_t i = 0; i < obs->nnodes; i++) {
		const struct pm_node *x = &obs->nodes[i];
		v->in_module[i] = !rewritten || rewritten[obs->funcs[x->func].module] ||
				  (x->parent != PM_NONE && v->in_module[x->parent]);
	}
	return 0;
}

static void vstate_free(struct vstate *v)
{
	free(v->keys);
	free(v->fk);
	free(v->seen);
	free(v->varies);
	free(v->mods);
	free(v->funcs);
	free(v->match);
	free(v->state);
	free(v->offends);
	free(v->in_module);
}

int rw_verify(struct pathmap *pred, struct pathmap *obs, const bool *rewritten, FILE *out,
	      unsigned show, struct rw_verify_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	struct vstate v;
	if (vstate_init(&v, pred, obs, rewritten) < 0) {
		vstate_free(&v);
		errmsg(err, errlen, "out of memory comparing pathmaps");
		return -1;
	}
	for (uint32_t i = 0; i < obs->nnodes; i++) {
		const struct pm_node *x = &obs->nodes[i];
		v.match[i] = PM_NONE;
		if (stale_parent(obs, i) || (x->parent != PM_NONE && v.state[x->parent] == V_HIDDEN))
			v.state[i] = V_HIDDEN;
		else if (x->parent != PM_NONE && v.state[x->parent] != V_MATCH)
			v.state[i] = v.state[x->parent];        /* below an unmatched frame */
		else
			classify_node(&v, i);
		r->observed++;
		switch (v.state[i]) {
		case V_MATCH: r->matched++; break;
		case V_MISMATCH: r->mismatched++; break;
		case V_UNPREDICTED: r->unpredicted++; break;
		case V_VARYING: r->varying++; break;
		case V_OUTSIDE: r->outside++; break;
		default: r->hidden++; check_hidden(&v, i, r); break;
		}
	}
	for (uint32_t i = 0; i < pred->nnodes; i++)
		r->unobserved += !v.seen[i];
	if (out)
		print_offenders(&v, out, show);
	struct pm_stats sp, so;
	if (pm_stats(pred, &sp) == 0 && pm_stats(obs, &so) == 0) {
		r->precise_predicted = sp.paths ? 100.0 * (double)sp.precise_paths / (double)sp.paths : 100;
		r->precise_observed = so.paths ? 100.0 * (double)so.precise_paths / (double)so.paths : 100;
	}
	vstate_free(&v);
	return 0;
}

/* ------------------------------------------------------------------ clones */

/* The name of the copy of the function at orig in clone k: its symbol's,
 * __icpp_clone_K_NAME with the name the prediction gives that function in
 * module `module`, or __icpp_clone_K_0xORIG when it has none
 * (pm_profile_label shows the copy as the original). */
static void copy_name(const struct pathmap *pred, uint32_t module, uint32_t k, uint64_t orig,
		      char *name, size_t len)
{
	snprintf(name, len, "__icpp_clone_%u_0x%" PRIx64, k, orig);
	for (uint32_t g = 0; g < pred->nfuncs; g++)
		if (pred->funcs[g].module == module && pred->funcs[g].addr == orig &&
		    pred->funcs[g].name && *pred->funcs[g].name)
			snprintf(name, len, "__icpp_clone_%u_%s", k, pred->funcs[g].name);
}

static int placing_oom(char *err, size_t errlen)
{
	return errmsg(err, errlen, "out of memory placing the clones in the predicted pathmap");
}

/* The placement holding clone k (global), or NULL. */
static const struct rw_placement *placement_of(const struct rw_placement *pl, uint32_t npl,
					       uint32_t k)
{
	for (uint32_t i = 0; i < npl; i++)
		if (k >= pl[i].first && k - pl[i].first < pl[i].note->nclones)
			return &pl[i];
	return NULL;
}

/* Function f of the prediction in the placed map (same index): a clone's
 * copy where its file has it, any other as it is. */
static int place_function(struct pathmap *pm, const struct pathmap *pred, uint32_t cm,
			  const struct rw_placement *pl, uint32_t npl, uint32_t f, char *err,
			  size_t errlen)
{
	const struct pm_function *fn = &pred->funcs[f];
	uint32_t r;
	if (cm == PM_NONE || fn->module != cm) {
		r = pm_add_function(pm, fn->module - (cm < fn->module), fn->addr, fn->size, fn->name);
		return r == f ? 0 : placing_oom(err, errlen);
	}
	if (fn->addr % 8 || fn->addr < 16)
		return errmsg(err, errlen, "the prediction has a function at 0x%" PRIx64 " in %s, "
			      "which is no clone", fn->addr, DA_CLONES_MODULE);
	bool frag = fn->addr % 16 == 8;
	uint32_t k = da_clone_of(pred, cm, f);
	const struct rw_placement *p = placement_of(pl, npl, k);
	if (!p)
		return errmsg(err, errlen, "the prediction has clone %u, the rewritten files' notes "
			      "do not", k);
	uint32_t local = k - p->first;
	const struct rw_note_clone *c = &p->note->clones[local];
	if (frag && !c->frag_size)
		return errmsg(err, errlen, "the prediction has a copy of clone %u's fragment, the "
			      "rewritten file's note none", k);
	char name[600];
	copy_name(pred, p->module, local, frag ? c->frag_func : c->func, name, sizeof(name));
	uint32_t m = p->module - (cm < p->module);
	r = frag ? pm_add_function(pm, m, c->frag_addr, c->frag_size, name)
		 : pm_add_function(pm, m, c->addr, c->size, name);
	return r == f ? 0 : placing_oom(err, errlen);
}

int rw_place_clones(const struct pathmap *pred, const struct rw_placement *pl, uint32_t npl,
		    struct pathmap **out, char *err, size_t errlen)
{
	*out = NULL;
	uint32_t cm = da_clones_module(pred);
	struct pathmap *pm = pm_new();
	if (!pm)
		return placing_oom(err, errlen);
	for (uint32_t m = 0; m < pred->nmodules; m++) {
		const struct pm_module *md = &pred->modules[m];
		if (m == cm)
			continue;
		if (pm_add_module(pm, md->path, md->build_id, md->build_id_len) != m - (cm < m))
			goto oom;
		pm->modules[pm->nmodules - 1].functions_found = md->functions_found;
		pm->modules[pm->nmodules - 1].functions_hooked = md->functions_hooked;
	}
	for (uint32_t f = 0; f < pred->nfuncs; f++)
		if (place_function(pm, pred, cm, pl, npl, f, err, errlen) < 0) {
			pm_free(pm);
			return -1;
		}
	for (uint32_t i = 0; i < pred->nnodes; i++) {
		const struct pm_node *x = &pred->nodes[i];
		uint32_t pk = x->parent == PM_NONE ? RW_NONE
						   : da_clone_of(pred, cm, pred->nodes[x->parent].func);
		const struct rw_placement *p = pk == RW_NONE ? NULL : placement_of(pl, npl, pk);
		uint64_t csa = x->cs_addr;
		/* a call from inside a clone (its function's copy or its
		 * fragment's) executed the copy of the instruction */
		uint64_t copy = p && x->cs_module == p->module
					? rw_clone_copy_addr(&p->note->clones[pk - p->first], csa) : 0;
		if (copy)
			csa = copy;
		uint32_t csm = x->cs_module == PM_NONE ? PM_NONE : x->cs_module - (cm < x->cs_module);
		int64_t height = x->height;
		for (uint32_t j = 0; j < npl; j++)
			height += rw_entry_bytes(pl[j].note, pred, pl[j].module, x->func);
		if (pm_append_node(pm, x->parent, x->func, csm, csa, height, x->entries) != i)
			goto oom;
	}
	*out = pm;
	return 0;
oom:
	pm_free(pm);
	return placing_oom(err, errlen);
}
