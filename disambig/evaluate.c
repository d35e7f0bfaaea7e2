/* Results of a plan: what remains ambiguous and why, and da_evaluate (the
 * same report for a plan that did not come from da_solve). */
#include <string.h>

#include "disambig/internal.h"

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

int da_leftovers(const struct da_problem *p, const struct da_options *o, const int64_t *height,
		 const uint32_t *inst, struct da_result *r)
{
	uint32_t n = p->nnodes, ncl;
	struct da_cidkey *k = NULL;
	uint32_t *klass = malloc((n + 1) * sizeof(*klass));
	uint32_t *depth = da_depths(p);
	struct da_leftover *left = NULL;
	uint32_t nleft = 0, capleft = 0;
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
					if (!da_grow((void **)&left, nleft, &capleft, sizeof(*left)))
						goto oom;
					left[nleft++] = (struct da_leftover){k[i].inst, k[i].h, deg,
						k[heavy].node, k[t].node, wsum, c};
				}
				t = u;
			}
		}
		i = j;
	}
	if (nleft)
		qsort(left, nleft, sizeof(*left), cmp_left);
	free(r->left);
	r->left = left;
	r->nleft = nleft;
	free(k);
	free(klass);
	free(depth);
	return 0;
oom:
	free(k);
	free(klass);
	free(depth);
	free(left);
	return -1;
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
	return 0;
}
