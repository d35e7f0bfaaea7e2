/* Private helpers shared by the files of disambig/ (and the benchmark's
 * baseline, which drives the solver state directly).  Not a contract. */
#ifndef ICPP_DISAMBIG_INTERNAL_H
#define ICPP_DISAMBIG_INTERNAL_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "util/errmsg.h"
#include "util/order.h"
#include "disambig/disambig.h"

/* One line into err (printf-style); always returns -1. */

/* Open-addressing map from a 64-bit key (not UINT64_MAX) to a 32-bit value. */
struct u64map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;      /* cap: power of two */
};
int u64map_init(struct u64map *m, size_t expect);
void u64map_free(struct u64map *m);
/* Value of key, or DA_NONE. */
uint32_t u64map_get(const struct u64map *m, uint64_t key);
/* Set key to val (insert or replace); 0 or -1 (out of memory). */
int u64map_put(struct u64map *m, uint64_t key, uint32_t val);
/* Remove key if present. */
void u64map_del(struct u64map *m, uint64_t key);

static inline uint64_t da_mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static inline uint64_t da_pair(uint32_t a, uint32_t b)
{
	return ((uint64_t)a << 32) | b;
}

/* The objective's worth of one training entry against one path
 * (disambig.h section 5): factor, scaled so that all the weight counts as
 * much as factor times all the paths (hot_weight for the weight at unique
 * CIDs, dispatch_weight for the weight that runs a dispatch). */
static inline double da_per_weight(double factor, uint64_t paths, uint64_t weight)
{
	return weight ? factor * (double)paths / (double)weight : 0;
}

/* The hot code of a function's copy (the original or a clone) of `bytes`
 * whose frames take `entries`: all of it from `unit` entries on (the
 * DA_HOT_CODE_SHARE of all entries), a share of it below (disambig.h
 * section 5, hot_code_weight). */
static inline double da_hot_bytes(uint64_t bytes, uint64_t entries, double unit)
{
	return entries >= unit ? (double)bytes : (double)bytes * (double)entries / unit;
}

/* The entries from which a copy is hot, of all nodes' `esum`. */
static inline double da_hot_unit(uint64_t esum)
{
	double u = DA_HOT_CODE_SHARE * (double)esum;
	return u < 1 ? 1 : u;
}

/* splitmix64: the solver's only source of randomness. */
static inline uint64_t da_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline uint32_t da_rand_below(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(da_rand(s) % n) : 0;
}

/* The paths of p under its unit: klass[i] for every node, ids 0..*n-1 in
 * order of first appearance (same function sequence <=> same id under
 * DA_UNIT_FUNCTIONS; the node index under DA_UNIT_CALLSITES).  0 or -1. */
int da_classes(const struct da_problem *p, uint32_t *klass, uint32_t *n);

/* Classification on any instance of the tree: the caller supplies parent,
 * func, callsite and per-node depth (da_classify uses the problem's). */
int da_classify_nodes(const struct da_problem *p, const struct da_options *o,
		      const uint32_t *depth, uint32_t a, uint32_t b,
		      struct da_classification *out);

/* Per function, the function of the fragment nodes below its nodes
 * (disambig.h section 2): DA_NONE for none, DA_FRAGMENTS_SEVERAL when they
 * are of two or more.  malloc'd, NULL when out of memory. */
#define DA_FRAGMENTS_SEVERAL (DA_NONE - 1)
uint32_t *da_fragments_of(const struct da_problem *p);

/* Depth of every node (root = 1). */
uint32_t *da_depths(const struct da_problem *p);

/* Narrow func_mask[f] and cs_mask[c] (every bit set on entry) so that no
 * level of a recursion of p grows more than x times (disambig.h section 3,
 * Recursion). */
void da_recursion_masks(const struct da_problem *p, double x, da_mask *func_mask,
			da_mask *cs_mask);

/* Costs of heights under a plan: roots, growth, code bytes (section 3). */
int da_costs(const struct da_problem *p, const struct da_plan *plan, const int64_t *height,
	     const uint32_t *inst, struct da_result *r);
/* Leftover ambiguities of heights/inst, classified (r->left, r->left_by). */
int da_leftovers(const struct da_problem *p, const struct da_options *o, const int64_t *height,
		 const uint32_t *inst, struct da_result *r);

/* The node whose frame node n runs in: its parent for a fragment
 * (disambig.h section 2), else itself. */
static inline uint32_t da_frame(const struct da_problem *p, uint32_t n)
{
	return p->nodes[n].fragment ? p->nodes[n].parent : n;
}

/* The frame before node n on its call path: its parent, but for a tail
 * node (disambig.h section 2, "Tail calls") its parent's, whose frame is
 * gone (a tail node's parent may be one too). */
static inline uint32_t da_path_parent(const struct da_problem *p, uint32_t n)
{
	while (p->nodes[n].tail)
		n = p->nodes[n].parent;
	return p->nodes[n].parent;
}

/* Does padding original function f by `amount` run code at each entry of
 * it (its entry wrapper, beyond what it pads in place: da_func.pad_in_place)? */
static inline bool da_pad_runs(const struct da_func *f, uint32_t amount)
{
	return f->pad_runs && amount > f->pad_in_place;
}

/* Is f a function that call c of another module may take a clone of
 * through its check (da_callsite.xcall)? */
static inline bool da_xcall(const struct da_problem *p, uint32_t c, uint32_t f)
{
	const struct da_callsite *C = &p->callsites[c];
	for (uint32_t i = 0; i < C->nxcall; i++)
		if (p->xcall_funcs[C->xcall + i] == f)
			return true;
	return false;
}

/* Does call instruction c call f directly, so that it can be pointed at a
 * clone of f? */
static inline bool da_direct(const struct da_problem *p, uint32_t c, uint32_t f)
{
	const struct da_callsite *C = &p->callsites[c];
	if (C->nxcall && da_xcall(p, c, f))
		return true;
	if (!C->redirectable || (C->target != DA_NONE && C->target != f))
		return false;
	if (C->tail && C->target == DA_NONE)    /* by the jumps' stubs */
		return C->module == p->funcs[f].module;
	if (!C->promoted)
		return true;
	if (C->module != p->funcs[f].module)
		return false;
	uint64_t key = da_pair(c, f);
	return !p->nno_promote ||
	       !bsearch(&key, p->no_promote, p->nno_promote, sizeof(key), u64_cmp);
}

/* Would a clone of f for callsite c take its calls by a dispatch at f's
 * entry (disambig.h section 2, "Dispatch")? */
static inline bool da_dispatched(const struct da_problem *p, uint32_t c, uint32_t f)
{
	return !da_direct(p, c, f);
}

/* May function f be cloned for callsite c (a clone of f takes the call)?
 * Directly, or by a dispatch on c's return address at f's entry.  The same
 * for the copy of c in a clone (a chain): a copy of a call of another module
 * carries a tag of its own (disambig.h section 2, "Chains"). */
static inline bool da_redirects(const struct da_problem *p, uint32_t c, uint32_t f)
{
	if (c == DA_NONE || !p->funcs[f].cloneable)
		return false;
	return da_direct(p, c, f) || (p->funcs[f].dispatch && p->callsites[c].dispatchable &&
				      (p->callsites[c].module == p->funcs[f].module ||
				       (p->callsites[c].taggable && p->funcs[f].reads_tags)));
}

/* Would clone (f, c) test a tag of a call of another module (disambig.h
 * section 2, "Dispatch")? */
static inline bool da_tagged(const struct da_problem *p, uint32_t c, uint32_t f)
{
	return da_dispatched(p, c, f) && p->callsites[c].module != p->funcs[f].module;
}

/* The code of function f, as a copy lays it out (rounded up to DA_ALIGN;
 * DA_CLONE_DEFAULT_BYTES when unknown). */
uint64_t da_func_bytes(const struct da_problem *p, uint32_t func);
/* New code of clone (f, c): the copy, and its test in f's dispatch. */
uint64_t da_clone_bytes(const struct da_problem *p, uint32_t func, uint32_t callsite);

/* Every node's CID after a plan, sorted by (inst, height, path, node): the
 * nodes of one CID are adjacent, and within it those of one path.  height or
 * inst NULL: the measured ones.  malloc'd, NULL when out of memory. */
struct da_cidkey {
	uint32_t inst, klass, node;
	int64_t h;
};
struct da_cidkey *da_cid_keys(const struct da_problem *p, const int64_t *height,
			      const uint32_t *inst, const uint32_t *klass);

#endif
