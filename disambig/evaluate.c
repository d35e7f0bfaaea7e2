/* Results of a plan: what remains ambiguous and why, and da_evaluate (the
 * same report for a plan that did not come from da_solve). */
#include <string.h>

#include "disambig/internal.h"
#include "util/grow.h"

static int cmp_left(const void *x, const void *y)
{
	const struct da_leftover *a = x, *b = y;
	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	if (a->inst != b->inst)
		return a->inst < b->inst ? -1 : 1;
	if (a->height != b->height)
		return a->height < b->height ? -1 : 1;
	return a->b < b->b ? -1 : a->b > b->b;
}

/* ---------------------------------------------------------------- capacity */

static int64_t residue(int64_t h)
{
	return ((h % DA_ALIGN) + DA_ALIGN) % DA_ALIGN;
}

/* The highest height each node can reach under any plan within the masks
 * and the stack cap (its lowest is its measured height: amounts only add).
 * Every proper ancestor may add its largest padding and every frame its
 * largest wrap (a clone and its copies take the masks of the originals).
 * Deltas only grow down the tree, so a descendant d of i stays at least
 * h0(d) - h0(i) above i, and the cap bounds d's height. */
static int64_t *reach_tops(const struct da_problem *p, const struct da_options *o)
{
	uint32_t n = p->nnodes;
	int64_t *top = malloc((n + 1) * sizeof(*top)), *below = malloc((n + 1) * sizeof(*below));
	uint32_t *root = malloc((n + 1) * sizeof(*root));
	if (!top || !below || !root)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		const struct da_node *nd = &p->nodes[i];
		int64_t d = 0;
		root[i] = nd->parent == DA_NONE ? i : root[nd->parent];
		if (nd->parent != DA_NONE) {
			const struct da_node *par = &p->nodes[nd->parent];
			const struct da_node *frame = &p->nodes[da_frame(p, nd->parent)];
			d = top[nd->parent] - par->height;
			if (o->allow_arr && !nd->fragment && !nd->tail)
				d += da_mask_max(p->funcs[frame->func].pad_mask |
						 (o->allow_clone ? p->funcs[frame->func].clone_pad_mask : 0));
		}
		if (nd->callsite != DA_NONE && o->allow_wrap)
			d += da_mask_max(p->callsites[nd->callsite].wrap_mask);
		top[i] = nd->height + d;        /* delta, before the cap */
		below[i] = nd->height;
	}
	for (uint32_t i = n; i-- > 0;)
		if (p->nodes[i].parent != DA_NONE && below[i] > below[p->nodes[i].parent])
			below[p->nodes[i].parent] = below[i];
	for (uint32_t i = 0; i < n; i++) {
		int64_t h0 = p->nodes[i].height, old = below[root[i]] > 16 ? below[root[i]] : 16;
		if (o->max_stack_growth > 0) {
			int64_t lim = (int64_t)(o->max_stack_growth * (double)old) - (below[i] - h0);
			if (lim < top[i])
				top[i] = lim;
		}
		top[i] = top[i] < h0 ? h0 : h0 + (top[i] - h0) / DA_ALIGN * DA_ALIGN;
	}
out:
	free(below);
	free(root);
	return top;
}

/* One path's claim on a height of its function: from its measured height
 * lo to top, in steps of DA_ALIGN. */
struct claim {
	uint32_t func;
	int64_t res, lo, top;
};

static int cmp_claim(const void *x, const void *y)
{
	const struct claim *a = x, *b = y;
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	if (a->res != b->res)
		return a->res < b->res ? -1 : 1;
	if (a->top != b->top)
		return a->top < b->top ? -1 : 1;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* The first free step at or after the step of `key` (group in the high
 * half, step in the low): a union-find where a taken step points further up,
 * compressed on the way. */
static uint64_t free_step(struct u64map *taken, uint64_t key)
{
	uint64_t group = key & ~0xffffffffULL, k = key;
	for (uint32_t up; (up = u64map_get(taken, k)) != DA_NONE;)
		k = group | up;
	for (uint64_t j = key; j != k;) {
		uint32_t up = u64map_get(taken, j);
		u64map_put(taken, j, (uint32_t)k);      /* a present key: no allocation */
		j = group | up;
	}
	return k;
}

/* Pigeonhole (disambig.h section 4, "crowded"): a precise path holds the
 * CID of its first node alone, so at most as many paths ending in f can be
 * precise as there are distinct heights their first nodes can take: a
 * matching of paths to heights, each path to a height between its measured
 * one and the highest it can reach; greedy by the highest, taking the lowest
 * free height, is a maximum matching for such intervals.  When some path is
 * left out, it still lands on a height in its range, all of which the
 * maximum matching uses, so the precise paths with that height would be a
 * larger matching: at most matched - 1 are precise.  Counts the paths of
 * every (function, residue) group beyond that bound in *crowded, and
 * marks the groups over capacity in `over` (key: function and residue).
 * Paths marked in `skip` (irreducible) take part in nothing.  With
 * cloning, a path whose first frame is entered by a call that a clone of
 * its function may take has no bound (the clone is a function of its own;
 * for a fragment, the call into its parent's frame);
 * the others stay at (f, height) under every plan: a call is taken by a
 * clone only when it is a direct call of the clone's function or its
 * function's dispatch may test it, whether the original instruction or its
 * copy in a clone executes it (a chain takes direct calls only). */
static int capacity(const struct da_problem *p, const struct da_options *o,
		    const uint32_t *klass, uint32_t ncl, const uint8_t *skip, struct u64map *over,
		    uint64_t *crowded)
{
	uint32_t n = p->nnodes, nc = 0;
	int64_t *top = reach_tops(p, o);
	struct claim *c = malloc((ncl + 1) * sizeof(*c));
	uint8_t *seen = calloc(ncl + 1, 1);
	struct u64map taken = {0};
	int rc = -1;
	*crowded = 0;
	if (!top || !c || !seen || u64map_init(&taken, 1024) < 0)
		goto out;
	for (uint32_t i = 0; i < n; i++) {
		const struct da_node *nd = &p->nodes[i];
		if (seen[klass[i]] || skip[klass[i]])
			continue;
		seen[klass[i]] = 1;
		const struct da_node *frame = &p->nodes[da_frame(p, i)];   /* renamed with it */
		if (o->allow_clone && da_redirects(p, frame->callsite, frame->func))
			continue;
		c[nc++] = (struct claim){nd->func, residue(nd->height), nd->height, top[i]};
	}
	qsort(c, nc, sizeof(*c), cmp_claim);
	for (uint32_t g = 0, gid = 0; g < nc; gid++) {
		uint32_t e = g, matched = 0;
		int64_t base = c[g].lo;
		while (e < nc && c[e].func == c[g].func && c[e].res == c[g].res) {
			if (c[e].lo < base)
				base = c[e].lo;
			e++;
		}
		for (uint32_t i = g; i < e; i++) {
			uint64_t key = free_step(&taken, ((uint64_t)gid << 32) |
							 (uint64_t)((c[i].lo - base) / DA_ALIGN));
			if ((int64_t)(key & 0xffffffffULL) > (c[i].top - base) / DA_ALIGN)
				continue;
			if (u64map_put(&taken, key, (uint32_t)(key + 1)) < 0)
				goto out;
			matched++;
		}
		if (matched < e - g) {
			/* a path left out still lands on some height, which the
			 * matching uses: one fewer precise than matched */
			*crowded += e - g - matched + 1;
			if (u64map_put(over, da_pair(c[g].func, (uint32_t)c[g].res), 1) < 0)
				goto out;
		}
		g = e;
	}
	rc = 0;
out:
	u64map_free(&taken);
	free(top);
	free(c);
	free(seen);
	return rc;
}

/* Was node n's frame entered by a call from another module than its
 * function's, which no clone of the function may take (not tagged)? */
static bool called_from_elsewhere(const struct da_problem *p, uint32_t n)
{
	const struct da_node *x = &p->nodes[da_frame(p, n)];
	return x->callsite != DA_NONE && p->callsites[x->callsite].module != p->funcs[x->func].module &&
	       !da_redirects(p, x->callsite, x->func);
}

/* Both paths of every irreducible pair (their heights move together under
 * every plan) into skip; their number. */
static uint64_t mark_irreducible(const struct da_leftover *left, uint32_t nleft,
				 const uint32_t *klass, uint8_t *skip)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < nleft; i++) {
		if (left[i].why.left == DA_LEFT_UNSOLVED)
			continue;
		uint32_t k[2] = {klass[left[i].a], klass[left[i].b]};
		for (int j = 0; j < 2; j++)
			if (!skip[k[j]]) {
				skip[k[j]] = 1;
				n++;
			}
	}
	return n;
}

/* Unsolved pairs at a CID of a group over capacity become crowded. */
static void mark_crowded(const struct da_problem *p, struct da_leftover *left, uint32_t nleft,
			 const struct u64map *over, struct da_result *r)
{
	for (uint32_t i = 0; i < nleft; i++) {
		struct da_leftover *l = &left[i];
		if (l->why.left != DA_LEFT_UNSOLVED || l->inst >= p->nfuncs ||
		    u64map_get(over, da_pair(l->inst, (uint32_t)residue(l->height))) == DA_NONE)
			continue;
		r->left_by[DA_LEFT_UNSOLVED][l->why.diff]--;
		r->left_by[DA_LEFT_CROWDED][l->why.diff]++;
		l->why.left = DA_LEFT_CROWDED;
	}
}

/* Unsolved pairs that only cloning cures, and whose least clone (the
 * classification's clone_bytes) costs more at the code price than all the
 * paths at their CID are worth, their weight included (the solver's
 * objective, section 5): the price, not the search, leaves them. */
static void priced_clones(const struct da_options *o, const struct da_leftover *left,
			  uint32_t nleft, struct da_result *r)
{
	const struct da_metrics *m = &r->before;
	double hotk = da_per_weight(o->hot_weight, m->paths, m->weight);
	r->unsolved_priced = 0;
	r->priced_least_bytes = 0;
	for (uint32_t i = 0; i < nleft; i++) {
		const struct da_leftover *l = &left[i];
		double worth = l->degree + hotk * (double)l->weight;
		if (l->why.left != DA_LEFT_UNSOLVED || l->why.cure != DA_CURE_CLONE ||
		    (double)l->why.clone_bytes * o->code_weight <= worth)
			continue;
		if (!r->unsolved_priced || l->why.clone_bytes < r->priced_least_bytes)
			r->priced_least_bytes = l->why.clone_bytes;
		r->unsolved_priced++;
	}
}

int da_leftovers(const struct da_problem *p, const struct da_options *o, const int64_t *height,
		 const uint32_t *inst, struct da_result *r)
{
	uint32_t n = p->nnodes, ncl;
	struct da_cidkey *k = NULL;
	uint32_t *klass = malloc((n + 1) * sizeof(*klass));
	uint32_t *depth = da_depths(p);
	struct da_leftover *left = NULL;
	uint32_t nleft = 0, capleft = 0;
	uint8_t *skip = NULL;
	struct u64map over = {0};
	int rc = -1;
	if (!klass || !depth || da_classes(p, klass, &ncl) < 0 ||
	    !(k = da_cid_keys(p, height, inst, klass)))
		goto oom;
	memset(r->left_by, 0, sizeof(r->left_by));
	for (uint32_t i = 0; i < n;) {
		uint32_t j = i, deg = 0;
		uint64_t wsum = 0;
		while (j < n && k[j].inst == k[i].inst && k[j].h == k[i].h) {
			if (j == i || k[j].klass != k[j - 1].klass)
				deg++;
			wsum += p->nodes[k[j].node].weight;
			j++;
		}
		if (deg >= 2) {
			/* the heaviest path at the CID: most weight, then most nodes,
			 * then the lowest path id */
			uint32_t heavy = i;
			uint64_t hw = 0, hc = 0;
			for (uint32_t t = i; t < j;) {
				uint32_t u = t;
				uint64_t w = 0;
				while (u < j && k[u].klass == k[t].klass)
					w += p->nodes[k[u++].node].weight;
				if (w > hw || (w == hw && u - t > hc)) {
					hw = w;
					hc = u - t;
					heavy = t;
				}
				t = u;
			}
			for (uint32_t t = i; t < j;) {
				uint32_t u = t;
				while (u < j && k[u].klass == k[t].klass)
					u++;
				if (k[t].klass != k[heavy].klass) {
					struct da_classification c;
					if (da_classify_nodes(p, o, depth, k[heavy].node, k[t].node, &c) < 0)
						goto oom;
					if (c.cure != DA_CURE_NONE)
						c.left = DA_LEFT_UNSOLVED;
					r->left_by[c.left][c.diff]++;
					if (!grow_array((void **)&left, nleft + 1ull, &capleft, sizeof(*left)))
						goto oom;
					left[nleft++] = (struct da_leftover){k[i].inst, k[i].h, deg,
						k[heavy].node, k[t].node, wsum, c};
				}
				t = u;
			}
		}
		i = j;
	}
	skip = calloc(ncl + 1, 1);
	if (!skip || u64map_init(&over, 64) < 0)
		goto oom;
	r->irreducible_paths = mark_irreducible(left, nleft, klass, skip);
	if (capacity(p, o, klass, ncl, skip, &over, &r->crowded_paths) < 0)
		goto oom;
	mark_crowded(p, left, nleft, &over, r);
	r->unsolved_elsewhere = r->unsolved_no_dispatch = 0;
	for (uint32_t i = 0; i < nleft; i++) {
		const struct da_leftover *l = &left[i];
		if ((l->why.left != DA_LEFT_UNSOLVED && l->why.left != DA_LEFT_CROWDED) ||
		    l->inst >= p->nfuncs || !called_from_elsewhere(p, l->a) ||
		    !called_from_elsewhere(p, l->b))
			continue;
		r->unsolved_elsewhere++;
		const struct da_func *f = &p->funcs[l->inst];
		r->unsolved_no_dispatch += !f->cloneable || !f->dispatch;
	}
	priced_clones(o, left, nleft, r);
	if (nleft)
		qsort(left, nleft, sizeof(*left), cmp_left);
	free(r->left);
	r->left = left;
	r->nleft = nleft;
	left = NULL;
	rc = 0;
oom:
	u64map_free(&over);
	free(skip);
	free(k);
	free(klass);
	free(depth);
	free(left);
	return rc;
}

static int copy_plan(struct da_plan *dst, const struct da_plan *src, const struct da_problem *p)
{
	if (da_plan_init(dst, p) < 0)
		return -1;
	memcpy(dst->pad, src->pad, p->nfuncs * sizeof(*dst->pad));
	memcpy(dst->wrap, src->wrap, p->ncallsites * sizeof(*dst->wrap));
	dst->clones = malloc((src->nclones + 1) * sizeof(*dst->clones));
	dst->clone_wraps = malloc((src->nclone_wraps + 1) * sizeof(*dst->clone_wraps));
	if (!dst->clones || !dst->clone_wraps)
		return -1;
	if (src->nclones)
		memcpy(dst->clones, src->clones, src->nclones * sizeof(*dst->clones));
	if (src->nclone_wraps)
		memcpy(dst->clone_wraps, src->clone_wraps,
		       src->nclone_wraps * sizeof(*dst->clone_wraps));
	dst->nclones = src->nclones;
	dst->nclone_wraps = src->nclone_wraps;
	return 0;
}

int da_evaluate(const struct da_problem *p, const struct da_options *o,
		const struct da_plan *plan, struct da_result *r, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	if (da_problem_check(p, err, errlen) < 0 || da_plan_check(p, plan, err, errlen) < 0)
		return -1;
	r->height = malloc((p->nnodes + 1) * sizeof(*r->height));
	r->inst = malloc((p->nnodes + 1) * sizeof(*r->inst));
	if (!r->height || !r->inst || copy_plan(&r->plan, plan, p) < 0 ||
	    da_predict(p, plan, r->height, r->inst) < 0 ||
	    da_metrics_of(p, NULL, NULL, &r->before) < 0 ||
	    da_metrics_of(p, r->height, r->inst, &r->after) < 0 ||
	    da_costs(p, plan, r->height, r->inst, r) < 0 ||
	    da_leftovers(p, o, r->height, r->inst, r) < 0) {
		da_result_free(r);
		return errmsg(err, errlen, "out of memory evaluating the plan");
	}
	r->stats.price_scale = 1;          /* the prices as given */
	return 0;
}

uint64_t da_reducible_paths(const struct da_result *r)
{
	return r->after.paths - r->irreducible_paths - r->crowded_paths;
}
