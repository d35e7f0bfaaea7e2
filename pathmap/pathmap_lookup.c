/* pathmap_lookup.c: CID -> nodes, (module, addr) -> function, build-id ->
 * module.  One index, built lazily on the first lookup into pm->index and
 * dropped by every pm_add_* that adds something. */
#include "pathmap/pathmap_int.h"

#include <stdlib.h>
#include <string.h>

struct cid_ent {
	struct pm_cid_key key;
	uint32_t start, count;       /* nodes[start .. start+count) */
	UT_hash_handle hh;
};

struct bid_ent {
	uint8_t id[PM_BUILD_ID_MAX];
	uint32_t index;
	UT_hash_handle hh;
};

struct pm_lookup_index {
	struct cid_ent *cids, *cid_arr;
	uint32_t *nodes;
	struct pm_func_ent *funcs, *func_arr;
	struct bid_ent *bids, *bid_arr;
};

void pm_index_free(struct pm_lookup_index *ix)
{
	if (!ix)
		return;
	HASH_CLEAR(hh, ix->cids);
	HASH_CLEAR(hh, ix->funcs);
	HASH_CLEAR(hh, ix->bids);
	free(ix->cid_arr);
	free(ix->nodes);
	free(ix->func_arr);
	free(ix->bid_arr);
	free(ix);
}

static bool index_cids(struct pm_lookup_index *ix, const struct pathmap *pm)
{
	size_t n = pm->nnodes ? pm->nnodes : 1;
	uint32_t used = 0;
	/* Each node's CID entry, found once, then the nodes bucketed by it. */
	uint32_t *which = malloc(n * sizeof(*which));
	if (!which || !(ix->cid_arr = calloc(n, sizeof(*ix->cid_arr))) ||
	    !(ix->nodes = malloc(n * sizeof(*ix->nodes)))) {
		free(which);
		return false;
	}
	for (uint32_t i = 0; i < pm->nnodes; i++) {
		struct pm_cid_key key = pm_make_cid_key(pm->nodes[i].func, pm->nodes[i].height);
		struct cid_ent *e;
		HASH_FIND(hh, ix->cids, &key, sizeof(key), e);
		if (!e) {
			e = &ix->cid_arr[used++];
			e->key = key;
			if (!PM_HADD(ix->cids, key, e)) {
				free(which);
				return false;
			}
		}
		e->count++;
		which[i] = (uint32_t)(e - ix->cid_arr);
	}
	uint32_t start = 0;
	for (uint32_t c = 0; c < used; c++) {
		ix->cid_arr[c].start = start;
		start += ix->cid_arr[c].count;
		ix->cid_arr[c].count = 0;
	}
	for (uint32_t i = 0; i < pm->nnodes; i++) {
		struct cid_ent *e = &ix->cid_arr[which[i]];
		ix->nodes[e->start + e->count++] = i;
	}
	free(which);
	return true;
}

static bool index_funcs(struct pm_lookup_index *ix, const struct pathmap *pm)
{
	if (!(ix->func_arr = calloc(pm->nfuncs ? pm->nfuncs : 1, sizeof(*ix->func_arr))))
		return false;
	for (uint32_t i = 0; i < pm->nfuncs; i++) {
		struct pm_func_ent *e = &ix->func_arr[i], *old;
		e->key = pm_make_func_key(pm->funcs[i].module, pm->funcs[i].addr);
		e->index = i;
		HASH_FIND(hh, ix->funcs, &e->key, sizeof(e->key), old);
		if (!old && !PM_HADD(ix->funcs, key, e))
			return false;
	}
	return true;
}

static bool index_build_ids(struct pm_lookup_index *ix, const struct pathmap *pm)
{
	if (!(ix->bid_arr = calloc(pm->nmodules ? pm->nmodules : 1, sizeof(*ix->bid_arr))))
		return false;
	for (uint32_t i = 0; i < pm->nmodules; i++) {
		const struct pm_module *m = &pm->modules[i];
		struct bid_ent *e = &ix->bid_arr[i], *old;
		if (!m->build_id_len || m->build_id_len > PM_BUILD_ID_MAX)
			continue;
		memcpy(e->id, m->build_id, m->build_id_len);
		e->index = i;
		HASH_FIND(hh, ix->bids, e->id, m->build_id_len, old);
		if (old)
			continue; /* the lowest index wins */
		unsigned before = HASH_COUNT(ix->bids);
		HASH_ADD(hh, ix->bids, id, m->build_id_len, e);
		if (HASH_COUNT(ix->bids) != before + 1)
			return false;
	}
	return true;
}

static struct pm_lookup_index *index_get(struct pathmap *pm)
{
	if (pm->index)
		return pm->index;
	struct pm_lookup_index *ix = calloc(1, sizeof(*ix));
	if (!ix || !index_cids(ix, pm) || !index_funcs(ix, pm) || !index_build_ids(ix, pm)) {
		pm_index_free(ix);
		return NULL;
	}
	return pm->index = ix;
}

const uint32_t *pm_lookup(struct pathmap *pm, uint32_t func, int64_t height, size_t *n)
{
	struct pm_lookup_index *ix = index_get(pm);
	struct pm_cid_key key = pm_make_cid_key(func, height);
	struct cid_ent *e = NULL;
	if (ix)
		HASH_FIND(hh, ix->cids, &key, sizeof(key), e);
	if (n)
		*n = e ? e->count : 0;
	return e ? ix->nodes + e->start : NULL;
}

uint32_t pm_function_at(struct pathmap *pm, uint32_t module, uint64_t addr)
{
	struct pm_lookup_index *ix = index_get(pm);
	struct pm_func_key key = pm_make_func_key(module, addr);
	struct pm_func_ent *e = NULL;
	if (ix)
		HASH_FIND(hh, ix->funcs, &key, sizeof(key), e);
	return e ? e->index : PM_NONE;
}

uint32_t pm_module_by_build_id(const struct pathmap *pm, const uint8_t *id, uint32_t len)
{
	if (!id || !len || len > PM_BUILD_ID_MAX)
		return PM_NONE;
	if (pm->index) {
		struct bid_ent *e;
		HASH_FIND(hh, pm->index->bids, id, len, e);
		return e ? e->index : PM_NONE;
	}
	for (uint32_t i = 0; i < pm->nmodules; i++)
		if (pm->modules[i].build_id_len == len && !memcmp(pm->modules[i].build_id, id, len))
			return i;
	return PM_NONE;
}
