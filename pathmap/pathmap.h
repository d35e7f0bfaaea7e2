/* pathmap: call paths, context identifiers (CIDs) and the on-disk pathmap.
 *
 * Definitions (shared/design/method.md): a frame's height is base - CFA, where
 * CFA is SP just before the call that entered the frame and base is fixed per
 * thread.  A CID is (function, height).  A call path is the sequence of frames
 * from a thread's root to the current function; a frame is (function, callsite)
 * and the callsite is named by return address - 1.
 *
 * In memory a pathmap is a calling-context tree: every node is one call path
 * (its chain of parents up to a root), with the height of its last frame and
 * the number of times training saw that frame entered (but for the callees of
 * a recursion's sibling group, pm_sibling_groups below).  Nodes are stored in
 * topological order (parent index < own index), which the file format keeps.
 *
 * Addresses are ELF virtual addresses of their module (runtime address minus
 * load bias), so a pathmap is independent of ASLR.  A function is identified by
 * (module, start address); modules by path and build-id.
 *
 * Contract for the other stages:
 *  - train/ builds a pathmap with pm_add_* and writes it with pm_write();
 *  - everything else reads it with pm_read(), which validates every field;
 *  - pm_lookup() maps a CID to its paths in O(1) expected time;
 *  - pm_stats() computes the method's metrics (see pathmap_stats.c).
 * The file format is documented in docs/pathmap-format.md.
 */
#ifndef ICPP_PATHMAP_H
#define ICPP_PATHMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define PM_NONE UINT32_MAX       /* no index: root's parent, unknown module */
#define PM_BUILD_ID_MAX 64
#define PM_FORMAT_VERSION 1      /* the file format this icpp writes and reads */

struct pm_module {
	char *path;                  /* as the loader saw it (absolute) */
	uint8_t build_id[PM_BUILD_ID_MAX];
	uint32_t build_id_len;       /* 0: the module has no build-id note */
	uint32_t functions_found;    /* training coverage: functions in the module */
	uint32_t functions_hooked;   /* ... of which training hooked (<= found) */
};

struct pm_function {
	uint32_t module;             /* index into modules */
	uint64_t addr;               /* ELF vaddr of the first instruction */
	uint64_t size;               /* bytes; 0 if unknown */
	char *name;                  /* symbol (mangled as in the ELF), or NULL */
};

struct pm_node {
	uint32_t parent;             /* PM_NONE for a thread root */
	uint32_t func;               /* index into funcs */
	uint32_t cs_module;          /* module of the callsite, PM_NONE if unknown
	                              * (then cs_addr is 0) */
	uint64_t cs_addr;            /* ELF vaddr of return address - 1 */
	int64_t height;              /* base - CFA of this frame, bytes */
	uint64_t entries;            /* times training entered this frame */
};

struct pm_lookup_index;          /* private: CID -> nodes, function -> index */

struct pathmap {
	struct pm_module *modules;
	uint32_t nmodules;
	struct pm_function *funcs;
	uint32_t nfuncs;
	struct pm_node *nodes;
	uint32_t nnodes;
	uint32_t cap_modules, cap_funcs, cap_nodes;
	struct pm_intern *intern;         /* private: dedup tables for pm_add_* */
	struct pm_lookup_index *index;    /* private: built lazily by lookups */
	char *source;                /* file pm_read() read it from, or NULL (owned;
	                              * pm_merge names it in its refusal) */
};

struct pathmap *pm_new(void);
void pm_free(struct pathmap *pm);

/* Building.  Each returns the index of the (possibly already present) entry,
 * or PM_NONE when out of memory.  pm_add_module dedups on path + build-id,
 * pm_add_function on (module, addr), pm_add_node on (parent, func, cs_module,
 * cs_addr, height) and then adds `entries` to the existing node.
 * Also PM_NONE for arguments pm_validate() would refuse: a NULL or empty path,
 * build_id_len > PM_BUILD_ID_MAX, an index out of range (parent must already
 * exist, so nodes stay in topological order).  pm_add_function on an existing
 * function fills in a missing size or name; pm_add_node stores cs_addr 0 when
 * cs_module is PM_NONE; entries saturate at UINT64_MAX.  Each call that adds
 * something invalidates what pm_lookup/pm_function_at returned.  Any pathmap
 * accepts pm_add_*, including one from pm_read (its dedup tables are built on
 * the first add).  Coverage counters are set directly in modules[]. */
uint32_t pm_add_module(struct pathmap *pm, const char *path,
		       const uint8_t *build_id, uint32_t build_id_len);
uint32_t pm_add_function(struct pathmap *pm, uint32_t module, uint64_t addr,
			 uint64_t size, const char *name);
uint32_t pm_add_node(struct pathmap *pm, uint32_t parent, uint32_t func,
		     uint32_t cs_module, uint64_t cs_addr, int64_t height,
		     uint64_t entries);
/* pm_add_node for a node the caller knows to be new, as when copying a
 * pathmap node by node: no lookup (a copy of 800k nodes takes a fraction of
 * the time).  A duplicate it adds is the caller's error, which pm_validate
 * (and so pm_write) reports.  The same range checks; the index of the node. */
uint32_t pm_append_node(struct pathmap *pm, uint32_t parent, uint32_t func,
			uint32_t cs_module, uint64_t cs_addr, int64_t height,
			uint64_t entries);

/* File I/O.  Both return 0 on success, -1 with a one-line message in err.
 * pm_write writes to a temporary file beside `path` and renames it; it refuses
 * a map that pm_validate() refuses.  pm_read's messages start with the path
 * ("X: not an icpp pathmap", "X: truncated at byte N of M", "X: checksum
 * mismatch: file is corrupt, train again", "X: written by a newer icpp ..."). */
int pm_read(const char *path, struct pathmap **out, char *err, size_t errlen);
int pm_write(const struct pathmap *pm, const char *path, char *err, size_t errlen);
/* Parse a pathmap from memory (what pm_read and the fuzz target use).  Every
 * field is validated; messages are pm_read's without the leading "X: ". */
int pm_parse(const void *buf, size_t len, struct pathmap **out, char *err, size_t errlen);
/* The file's bytes in a malloc'd buffer (what pm_write writes). */
int pm_serialize(const struct pathmap *pm, void **buf, size_t *len, char *err, size_t errlen);
/* Check the invariants every pathmap keeps (the ones pm_parse enforces beyond
 * the encoding): counts < PM_NONE; module path non-empty, build_id_len <=
 * PM_BUILD_ID_MAX, hooked <= found; function module in range, addr + size
 * does not wrap; node func in range, parent PM_NONE or < own index, cs_module
 * PM_NONE (with cs_addr 0) or in range; no two modules with the same path and
 * build-id, no two functions at one (module, addr), no two nodes with one
 * (parent, func, cs_module, cs_addr, height).  0, or -1 and one line in err. */
int pm_validate(const struct pathmap *pm, char *err, size_t errlen);

/* Merge src into dst (training's --append).  Refuses, with -1 and err, when a
 * module path appears in both with different build-ids ("pathmap X was trained
 * on a different build of Y (build-id A, now B): train again without
 * --append", X being dst->source or else src->source, A that map's build-id);
 * dst is then unchanged; likewise when src fails pm_validate.  Entries of equal
 * nodes add up; coverage counters take the larger value.  src must not be dst.  On out of memory dst may hold part
 * of src. */
int pm_merge(struct pathmap *dst, const struct pathmap *src, char *err, size_t errlen);

/* Lookup.  pm_lookup returns the nodes whose last frame is (func, height), in
 * increasing index order, and stores their number in *n (0 and NULL when the
 * CID is unknown or out of memory).  The array lives in pm->index until the
 * next pm_add_* or pm_free. */
const uint32_t *pm_lookup(struct pathmap *pm, uint32_t func, int64_t height, size_t *n);
/* The function of module `module` that starts at addr, or PM_NONE. */
uint32_t pm_function_at(struct pathmap *pm, uint32_t module, uint64_t addr);
/* Module index by build-id, or PM_NONE; the lowest index when several modules
 * share it.  Hashed once pm->index exists (after any pm_lookup or
 * pm_function_at), a scan of the few modules otherwise. */
uint32_t pm_module_by_build_id(const struct pathmap *pm, const uint8_t *id, uint32_t len);
/* Is node a .cold fragment's frame inside its owner's activation (no callsite,
 * its parent's height: docs/training.md)?  Its owner is the parent.  A frame
 * training rebuilt from the CFI has no callsite either, but lies above. */
bool pm_fragment_frame(const struct pathmap *pm, uint32_t node);
/* Recursion's sibling groups: the frames a function enters by calls of
 * itself from two or more callsites at one height, under one parent node.
 * Training records the callees of such a group under one of its nodes
 * (docs/training.md, "Recursion through several callsites"), so which of the
 * callsites led to a callee is unknown: a rewrite must not move them apart.
 * in_group[i] (nnodes entries) is set for every node of such a group, others
 * cleared.  0, or -1 when out of memory. */
int pm_sibling_groups(const struct pathmap *pm, bool *in_group);
/* Depth (number of frames) of a node's path; 0 for an index out of range. */
uint32_t pm_depth(const struct pathmap *pm, uint32_t node);
/* The nodes of node's path, root first, into out[0..max-1]; returns the depth
 * (which may exceed max: then only the first max frames from the root are
 * stored). */
uint32_t pm_path_nodes(const struct pathmap *pm, uint32_t node, uint32_t *out, uint32_t max);

/* Printing, for icpp stats, icpp paths and reports.  `demangle` (may be NULL)
 * turns a symbol into a readable name, as bin_demangle does. */
typedef const char *(*pm_demangle_fn)(const char *sym, char *buf, size_t len);
/* A function's label: its name (through demangle), or "FILE+0xADDR" with the
 * module's file name when it has none.  Returns buf. */
const char *pm_function_label(const struct pathmap *pm, uint32_t func, pm_demangle_fn demangle,
			      char *buf, size_t len);
/* The label a profile shows: pm_function_label's, but a clone that icpp
 * rewrite made (named __icpp_clone_K_NAME in the predicted pathmap, or
 * __icpp_clone_K_0xADDR for a function without a name) is the function it
 * copies, so that its samples and stacks merge with the original's. */
const char *pm_profile_label(const struct pathmap *pm, uint32_t func, pm_demangle_fn demangle,
			     char *buf, size_t len);
/* The function a clone icpp rewrite made copies, named as pm_profile_label
 * reads it: the function of the clone's module at 0xADDR, or the one with
 * NAME.  func itself when it is no clone, or when the map has no such
 * function or several with that name. */
uint32_t pm_clone_original(struct pathmap *pm, uint32_t func);
/* Print node's path root first, labels separated by sep (" > " for text, ";"
 * for folded stacks).  PM_PRINT_CALLSITES appends to each caller where it
 * made the call ("main+0x1d", or "[FILE+0xADDR]" when the callsite is outside
 * the caller) and starts with the root's caller when it is known.
 * PM_PRINT_PROFILE labels functions as pm_profile_label does (a clone as the
 * function it copies). */
#define PM_PRINT_CALLSITES 1u
#define PM_PRINT_PROFILE 2u
void pm_print_path(FILE *out, const struct pathmap *pm, uint32_t node, const char *sep,
		   unsigned flags, pm_demangle_fn demangle);

/* Metrics (method.md "Metrics").  A path for the metrics is a sequence of
 * functions (callsites ignored, as in the thesis), a clone icpp rewrite made
 * counted as the function it copies (pm_clone_original): the path a profile
 * shows, and the solver's (disambig.h section 1); it is precise when every
 * CID it occurs at belongs to it alone.  A clone's CIDs stay its own.  The
 * degree of ambiguity of a CID is the number of distinct function sequences
 * ending there; a path's degree is the largest degree of the CIDs it occurs
 * at (its worst height).
 * Weighted figures use training entries, each node's entries counted at the
 * degree of that node's own CID (what a sample in that frame resolves to):
 * precise_entries is the entries of nodes whose CID has degree 1. */
#define PM_DEGREE_BUCKETS 11     /* degree 1..10, and >10 in the last bucket */
struct pm_stats {
	uint64_t nodes;              /* distinct (callsite path, height) */
	uint64_t paths;              /* distinct function sequences */
	uint64_t cids;               /* distinct (function, height) */
	uint64_t precise_paths;
	uint64_t entries, precise_entries;
	uint64_t degree_paths[PM_DEGREE_BUCKETS];   /* paths by degree of ambiguity */
	uint64_t degree_entries[PM_DEGREE_BUCKETS];
	uint32_t max_degree;
	uint64_t ambiguous_cids;     /* CIDs of degree >= 2 */
};
/* 0, or -1 when out of memory. */
int pm_stats(struct pathmap *pm, struct pm_stats *st);
/* The same for the paths with a frame of `module` only (the node's function
 * or an ancestor's is in it: what rewriting that module can change), each
 * CID's degree still taken over the whole map (a path is ambiguous when any
 * path shares its CID); cids, ambiguous_cids and max_degree count the CIDs
 * holding such a path.  module PM_NONE: pm_stats. */
int pm_stats_of(struct pathmap *pm, uint32_t module, struct pm_stats *st);

/* Number the distinct function sequences: ids[i] (an array of nnodes) gets
 * the same value for two nodes exactly when their paths have the same
 * functions in the same order; ids run 0..*npaths-1 in order of first
 * appearance.  0, or -1 when out of memory. */
int pm_path_ids(const struct pathmap *pm, uint32_t *ids, uint32_t *npaths);
/* The same, with every clone icpp rewrite made counted as the function it
 * copies (pm_clone_original): the sequences a profile shows, where a path
 * through a clone and the same path through the original are one. */
int pm_profile_path_ids(struct pathmap *pm, uint32_t *ids, uint32_t *npaths);

/* The CIDs with the most distinct function sequences, worst first (ties: more
 * entries first, then function index, then height); only CIDs of degree >= 2.
 * Returns how many were stored in out (at most max; 0 when out of memory). */
struct pm_ambiguous_cid {
	uint32_t func;
	int64_t height;
	uint32_t degree;             /* distinct function sequences */
	uint64_t entries;
};
size_t pm_worst_cids(struct pathmap *pm, struct pm_ambiguous_cid *out, size_t max);
/* ... only CIDs holding a path with a frame of `module` (PM_NONE: all). */
size_t pm_worst_cids_of(struct pathmap *pm, uint32_t module, struct pm_ambiguous_cid *out,
			size_t max);

#endif
