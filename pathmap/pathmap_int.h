/* pathmap_int.h: private to pathmap/.  Hash keys, the dedup tables behind
 * pm_add_*, the lookup index, and helpers the .c files share.
 *
 * Every hash table is a uthash table.  uthash is configured non-fatal on
 * out-of-memory (an add that fails leaves the table as it was), and PM_HADD
 * reports whether the add happened. */
#ifndef ICPP_PATHMAP_INT_H
#define ICPP_PATHMAP_INT_H

#define HASH_NONFATAL_OOM 1
#include <uthash.h>

#include "pathmap/pathmap.h"

/* Keys are plain structs with explicit zeroed padding so that uthash can hash
 * and compare their bytes. */
struct pm_func_key {
	uint64_t addr;
	uint32_t module;
	uint32_t zero;
};

struct pm_node_key {
	uint32_t parent, func, cs_module, zero;
	uint64_t cs_addr;
	int64_t height;
};

struct pm_cid_key {
	int64_t height;
	uint32_t func;
	uint32_t zero;
};

static inline struct pm_func_key pm_make_func_key(uint32_t module, uint64_t addr)
{
	struct pm_func_key k = {.addr = addr, .module = module, .zero = 0};
	return k;
}

static inline struct pm_cid_key pm_make_cid_key(uint32_t func, int64_t height)
{
	struct pm_cid_key k = {.height = height, .func = func, .zero = 0};
	return k;
}

static inline struct pm_node_key pm_make_node_key(const struct pm_node *n)
{
	struct pm_node_key k = {.parent = n->parent, .func = n->func, .cs_module = n->cs_module,
				.zero = 0, .cs_addr = n->cs_addr, .height = n->height};
	return k;
}

/* Add `elt` (whose key field is `field`) to `head`; true when it was added. */
#define PM_HADD(head, field, elt)                                              \
	__extension__({                                                        \
		unsigned pm_before_ = HASH_COUNT(head);                        \
		HASH_ADD(hh, head, field, sizeof((elt)->field), elt);          \
		HASH_COUNT(head) == pm_before_ + 1;                            \
	})

/* An index into one of the pathmap's arrays, found by key. */
struct pm_func_ent {
	struct pm_func_key key;
	uint32_t index;
	UT_hash_handle hh;
};

/* A block allocator for hash entries that live as long as the table. */
struct pm_slab {
	struct pm_slab *next;
	size_t used, cap;
	_Alignas(16) unsigned char data[];
};
void *pm_slab_alloc(struct pm_slab **slab, size_t size);
void pm_slab_free(struct pm_slab *slab);

/* The lookup index (pathmap_lookup.c). */
void pm_index_free(struct pm_lookup_index *ix);
/* The dedup tables (pathmap.c). */
void pm_intern_free(struct pm_intern *in);

/* Saturating add for entry counters. */
static inline uint64_t pm_sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

#endif
