/* pathmap_stats.c: the method's metrics (method.md "Metrics").
 *
 * A path, for the metrics, is a distinct sequence of functions (callsites
 * ignored, as in the thesis), a clone icpp rewrite made counted as the
 * function it copies (pm_profile_path_ids: as a profile shows it).
 * Sequences are interned by (parent sequence, function) in one pass over the
 * nodes, which are in topological order.  The nodes are then sorted by
 * (function, height, sequence): each run of one (function, height) is a CID,
 * and the number of distinct sequences in the run is its degree of
 * ambiguity. */
#include "pathmap/pathmap_int.h"

#include <stdlib.h>
#include <string.h>

struct seq_ent {
	struct {
		uint32_t parent_seq, func;
	} key;
	uint32_t id;
	UT_hash_handle hh;
};

/* pm_path_ids, each node's function read through orig (NULL: as it is). */
static int path_ids(const struct pathmap *pm, const uint32_t *orig, uint32_t *ids,
		    uint32_t *npaths)
{
	struct seq_ent *set = NULL, *arr = calloc(pm->nnodes ? pm->nnodes : 1, sizeof(*arr));
	uint32_t n = 0;
	int rc = -1;
	if (!arr)
		return -1;
	for (uint32_t i = 0; i < pm->nnodes; i++) {
		const struct pm_node *nd = &pm->nodes[i];
		struct seq_ent *e = &arr[n], *found;
		e->key.parent_seq = nd->parent < i ? ids[nd->parent] : PM_NONE;
		e->key.func = orig ? orig[nd->func] : nd->func;
		HASH_FIND(hh, set, &e->key, sizeof(e->key), found);
		if (!found) {
			e->id = n;
			if (!PM_HADD(set, key, e))
				goto out;
			found = e;
			n++;
		}
		ids[i] = found->id;
	}
	*npaths = n;
	rc = 0;
out:
	HASH_CLEAR(hh, set);
	free(arr);
	return rc;
}

int pm_path_ids(const struct pathmap *pm, uint32_t *ids, uint32_t *npaths)
{
	return path_ids(pm, NULL, ids, npaths);
}

int pm_profile_path_ids(struct pathmap *pm, uint32_t *ids, uint32_t *npaths)
{
	uint32_t *orig = malloc((pm->nfuncs ? pm->nfuncs : 1) * sizeof(*orig));
	if (!orig)
		return -1;
	for (uint32_t f = 0; f < pm->nfuncs; f++)
		orig[f] = pm_clone_original(pm, f);
	int rc = path_ids(pm, orig, ids, npaths);
	free(orig);
	return rc;
}

/* Nodes grouped by CID: perm holds the node indices sorted by (function,
 * height, sequence id). */
struct cid_runs {
	const struct pathmap *pm;
	uint32_t *ids, *perm, npaths;
	uint32_t pos;                /* next run starts at perm[pos] */
	bool *kept;                  /* node counted: has a frame of the module */
};

static int cmp_cid(const void *a, const void *b, void *ctx)
{
	const struct cid_runs *r = ctx;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct pm_node *x = &r->pm->nodes[i], *y = &r->pm->nodes[j];
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	if (x->height != y->height)
		return x->height < y->height ? -1 : 1;
	if (r->ids[i] != r->ids[j])
		return r->ids[i] < r->ids[j] ? -1 : 1;
	return i < j ? -1 : i > j;
}

static void runs_free(struct cid_runs *r)
{
	free(r->ids);
	free(r->perm);
	free(r->kept);
}

static int runs_init(struct cid_runs *r, struct pathmap *pm, uint32_t module)
{
	size_t n = pm->nnodes ? pm->nnodes : 1;
	memset(r, 0, sizeof(*r));
	r->pm = pm;
	r->ids = malloc(n * sizeof(*r->ids));
	r->perm = malloc(n * sizeof(*r->perm));
	r->kept = malloc(n * sizeof(*r->kept));
	if (!r->ids || !r->perm || !r->kept || pm_profile_path_ids(pm, r->ids, &r->npaths) < 0) {
		runs_free(r);
		return -1;
	}
	for (uint32_t i = 0; i < pm->nnodes; i++) {
		const struct pm_node *nd = &pm->nodes[i];
		r->kept[i] = module == PM_NONE || pm->funcs[nd->func].module == module ||
			     (nd->parent < i && r->kept[nd->parent]);
	}
	for (uint32_t i = 0; i < pm->nnodes; i++)
		r->perm[i] = i;
	qsort_r(r->perm, pm->nnodes, sizeof(*r->perm), cmp_cid, r);
	return 0;
}

/* The next CID: its nodes are perm[*start .. *end); returns its degree, or 0
 * when there are no more; *kept: some node of it is counted. */
static uint32_t next_cid(struct cid_runs *r, uint32_t *start, uint32_t *end, uint64_t *entries,
			 bool *kept)
{
	const struct pathmap *pm = r->pm;
	if (r->pos >= pm->nnodes)
		return 0;
	uint32_t s = r->pos, e = s, degree = 0;
	const struct pm_node *first = &pm->nodes[r->perm[s]];
	*entries = 0;
	*kept = false;
	for (; e < pm->nnodes; e++) {
		const struct pm_node *n = &pm->nodes[r->perm[e]];
		if (n->func != first->func || n->height != first->height)
			break;
		*kept |= r->kept[r->perm[e]];
		if (e == s || r->ids[r->perm[e]] != r->ids[r->perm[e - 1]])
			degree++;
		*entries = pm_sat_add(*entries, n->entries);
	}
	*start = s;
	*end = r->pos = e;
	return degree;
}

static unsigned bucket(uint32_t degree)
{
	return degree > PM_DEGREE_BUCKETS - 1 ? PM_DEGREE_BUCKETS - 1 : degree - 1;
}

int pm_stats(struct pathmap *pm, struct pm_stats *st)
{
	return pm_stats_of(pm, PM_NONE, st);
}

/* A path's degree is its worst CID's; it is counted when its nodes are (a
 * function sequence holds the module's frame in every node or in none). */
static int count_paths(const struct cid_runs *r, const uint32_t *path_degree, struct pm_stats *st)
{
	bool *path_kept = calloc(r->npaths ? r->npaths : 1, sizeof(*path_kept));
	if (!path_kept)
		return -1;
	for (uint32_t i = 0; i < r->pm->nnodes; i++)
		path_kept[r->ids[i]] |= r->kept[i];
	for (uint32_t p = 0; p < r->npaths; p++)
		if (path_kept[p]) {
			st->degree_paths[bucket(path_degree[p])]++;
			st->paths++;
		}
	free(path_kept);
	return 0;
}

int pm_stats_of(struct pathmap *pm, uint32_t module, struct pm_stats *st)
{
	struct cid_runs r;
	memset(st, 0, sizeof(*st));
	if (runs_init(&r, pm, module) < 0)
		return -1;
	uint32_t *path_degree = calloc(r.npaths ? r.npaths : 1, sizeof(*path_degree));
	if (!path_degree) {
		runs_free(&r);
		return -1;
	}
	uint32_t s, e, degree;
	uint64_t cid_entries;
	bool kept;
	while ((degree = next_cid(&r, &s, &e, &cid_entries, &kept))) {
		for (uint32_t k = s; k < e; k++) {
			uint32_t *pd = &path_degree[r.ids[r.perm[k]]];
			if (degree > *pd)
				*pd = degree;
		}
		if (!kept)
			continue;
		st->cids++;
		if (degree > 1)
			st->ambiguous_cids++;
		if (degree > st->max_degree)
			st->max_degree = degree;
		for (uint32_t k = s; k < e; k++) {
			const struct pm_node *n = &pm->nodes[r.perm[k]];
			if (!r.kept[r.perm[k]])
				continue;
			st->nodes++;
			st->degree_entries[bucket(degree)] =
				pm_sat_add(st->degree_entries[bucket(degree)], n->entries);
			st->entries = pm_sat_add(st->entries, n->entries);
		}
	}
	int rc = count_paths(&r, path_degree, st);
	st->precise_paths = st->degree_paths[0];
	st->precise_entries = st->degree_entries[0];
	free(path_degree);
	runs_free(&r);
	return rc;
}

static int cmp_worst(const void *a, const void *b)
{
	const struct pm_ambiguous_cid *x = a, *y = b;
	if (x->degree != y->degree)
		return x->degree > y->degree ? -1 : 1;
	if (x->entries != y->entries)
		return x->entries > y->entries ? -1 : 1;
	if (x->func != y->func)
		return x->func < y->func ? -1 : 1;
	return x->height < y->height ? -1 : x->height > y->height;
}

size_t pm_worst_cids(struct pathmap *pm, struct pm_ambiguous_cid *out, size_t max)
{
	return pm_worst_cids_of(pm, PM_NONE, out, max);
}

size_t pm_worst_cids_of(struct pathmap *pm, uint32_t module, struct pm_ambiguous_cid *out,
			size_t max)
{
	struct cid_runs r;
	if (!max || runs_init(&r, pm, module) < 0)
		return 0;
	struct pm_ambiguous_cid *all = malloc((pm->nnodes ? pm->nnodes : 1) * sizeof(*all));
	size_t n = 0;
	uint32_t s, e, degree;
	uint64_t entries;
	bool kept;
	while (all && (degree = next_cid(&r, &s, &e, &entries, &kept))) {
		if (degree < 2 || !kept)
			continue;
		const struct pm_node *nd = &pm->nodes[r.perm[s]];
		all[n++] = (struct pm_ambiguous_cid){.func = nd->func, .height = nd->height,
						     .degree = degree, .entries = entries};
	}
	if (all) {
		qsort(all, n, sizeof(*all), cmp_worst);
		if (n > max)
			n = max;
		memcpy(out, all, n * sizeof(*out));
	}
	free(all);
	runs_free(&r);
	return n;
}
