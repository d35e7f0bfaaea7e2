/* The bridge between a pathmap (pathmap/pathmap.h) and the abstract problem of
 * disambig.h, the plan in pathmap terms, its file (docs/plan-format.md) and
 * the predicted pathmap of the rewritten program.
 *
 * Problem from pathmap: problem node i is pathmap node i, problem function f
 * is pathmap function f; callsites are the distinct (cs_module, cs_addr) of
 * the nodes (a node with cs_module PM_NONE has no callsite), each owned by the
 * function whose code contains it (the function of the same module with the
 * largest start <= addr and addr < start + size, or < the next start when
 * the size is unknown).  Weights are training entries.
 *
 * Capability: what the rewriter may change.  Until its analysis exists the
 * default is explicit and optimistic: every function may take padding in
 * multiples of 16 up to pad_bound (1008), every callsite with a known address
 * may be wrapped by up to wrap_bound (1008), nothing is cloned unless `clone`
 * is set (then every function may be cloned and every callsite redirected).
 * `module` restricts all changes to the modules whose path ends with it; the
 * hooks, when set, refine (may only forbid) what the rest allows.
 *
 * The callsites of a recursion's sibling group (a function's calls of
 * itself from several callsites at one height: training keeps one subtree
 * for them, docs/training.md) are neither wrapped nor taken by a clone, and
 * the function is not cloned.
 *
 * A clone takes a call from a call instruction that calls it directly (a
 * frame entered through a callsite may be of a function its callee
 * tail-called) or, with `dispatch`, from any callsite of its module, and
 * with `tag` from any callsite of another module, except in a function
 * training saw as a thread root or without a callsite.  The
 * callsite hook says which address the instruction calls (*target, 0 when it
 * does not know); without the hook, the one function that training saw
 * entered through it, and none when it saw several.
 *
 * Tail calls (disambig.h section 2): with the tail_targets hook, a frame of
 * f at a callsite c beside a frame of g at c (same parent, same height,
 * g's first), where g's only ways into f are jumps the rewriter can point
 * elsewhere, hangs below g's frame as a tail node, through a callsite
 * named by the address of g's first such jump (da_pm_clone.tail).  Whole
 * edges (g, f) or none: each of f's frames beside g's must have that one
 * such sibling, and each callsite with one of them none of f's frames
 * without (a dispatch of f testing c's return address would take them).
 * A call c of f whose frame of f comes before a sibling's frame of g that
 * jumps to f directly takes no clone (g's jump may have entered f again: a
 * frame at c's height and return address that the clone would not take).
 * By indirect tail jumps (da_tail_target.any), g may have entered any
 * function of its module: a frame of f beside g's hangs below it unless c
 * calls another function than g directly (da_callsite.target; and g's
 * frame does not hang below that one's, entered by its direct jumps), and
 * the edge is spoilt where one such frame stays; a frame that such a g
 * (not so entered) may have entered moves nowhere (of a chain of such
 * jumps, the first only); all of g's such edges share one callsite,
 * whatever their target (da_callsite.target DA_NONE).
 *
 * A plan in pathmap terms names functions and callsites by module and
 * address, so that it can be written to a file and applied to the binary;
 * da_predict_pathmap needs only the pathmap and that plan.
 */
#ifndef ICPP_DISAMBIG_FROM_PATHMAP_H
#define ICPP_DISAMBIG_FROM_PATHMAP_H

#include <string.h>

#include "disambig/disambig.h"
#include "pathmap/pathmap.h"

/* What a callsite hook may narrow (or, for target and wrap_copy, tell):
 * preset from the capability, target 0 (unknown) and wrap_copy 0. */
struct da_callsite_cap {
	da_mask wrap_mask;
	bool redirectable;
	uint64_t target;            /* the address it calls directly, 0: unknown */
	bool dispatchable, taggable;
	uint32_t wrap_copy;         /* da_callsite.wrap_copy */
	bool bound;                 /* da_callsite.bound */
	struct da_xcall_target {    /* the functions (of modules not the
	                             * call's) a clone of which may take the call
	                             * directly (da_callsite.xcall): the slot's
	                             * callee's, or a third module's that it
	                             * forwards to */
		uint32_t module;
		uint64_t addr;
	} xcall[DA_MAX_XCALL];
	uint32_t nxcall;
	bool promoted;              /* da_callsite.promoted: an indirect call
	                             * whose callees training saw may be cloned
	                             * for it without a dispatch, each unless one
	                             * of them may have entered it by a tail call
	                             * (tail_enters: da_problem.no_promote) */
};

struct da_pm_plan;

/* A tail route of the capability: the function (module, address), g's first
 * jump to it, and how its jumps take a clone of it: through a check of a
 * GOT slot that g's module's own definition of it fills (bound: priced as a
 * bound call, da_callsite.bound), or, for a function of another module,
 * the thunk of a checked call (da_callsite.xcall).  With `any`, no address:
 * every function of the module, by g's indirect tail jumps (the first of
 * them `jump`), each through a stub that compares its operand with the
 * clones' functions first (priced by the solver as a dispatch of as many
 * tests, which every frame through them runs). */
struct da_tail_target {
	uint32_t module;
	uint64_t addr, jump;
	bool bound, any;
};

struct da_capability {
	uint32_t pad_bound;         /* bytes, multiple of 16; 0: no ARR */
	uint32_t wrap_bound;        /* bytes, multiple of 16; 0: no wrapping */
	bool clone;
	bool dispatch;              /* with clone: a clone may also take calls by a
	                             * dispatch at its function's entry (disambig.h
	                             * section 2), from any callsite of that module */
	bool promote;               /* with clone: an indirect call the callsite
	                             * hook calls promotable takes clones
	                             * without a dispatch (da_callsite.promoted) */
	bool tag;                   /* with dispatch: and from a tagged call of
	                             * another module (disambig.h section 2) */
	bool tail;                  /* with clone: frames after tail jumps hang
	                             * below the jumping frames (tail_targets,
	                             * disambig.h section 2, "Tail calls") */
	const char *module;         /* NULL: every module may change */
	/* refinements (may be NULL): narrow *mask / *ok for one function or
	 * callsite; the rewriter's feasibility analysis goes here */
	void (*func_hook)(void *ctx, const struct pathmap *pm, uint32_t func, da_mask *pad_mask,
			  bool *cloneable, da_mask *clone_pad_mask, bool *dispatch,
			  bool *pad_runs, uint32_t *pad_in_place);
	void (*callsite_hook)(void *ctx, const struct pathmap *pm, uint32_t module, uint64_t addr,
			      struct da_callsite_cap *cc);
	/* may a frame entered by a call of function `callee` be one of `func`
	 * (maybe callee itself), which callee entered by a tail call (NULL:
	 * never)? */
	bool (*tail_enters)(void *ctx, const struct pathmap *pm, uint32_t callee, uint32_t func);
	/* the functions that function g enters only by tail jumps a clone of
	 * them may take (disambig.h section 2, "Tail calls"; or, `any`, every
	 * function of its module, by stubs of its jumps through pointers), at
	 * most max into out; how many (NULL: none) */
	uint32_t (*tail_targets)(void *ctx, const struct pathmap *pm, uint32_t g,
				 struct da_tail_target *out, uint32_t max);
	void *ctx;
	/* a plan read back (icpp plan --evaluate), so that it finds the
	 * problem it was made on: without tail_targets, the tail jumps of its
	 * tail clones (their edges taken whole); with, none where the plan
	 * takes a frame at its call by another clone (made without tail
	 * chains) */
	const struct da_pm_plan *tail_plan;
};
/* pad_bound and wrap_bound 1008, no clone (dispatch, tag, promote and tail
 * on, for when clone is set). */
void da_capability_default(struct da_capability *c);

struct da_bridge {
	struct da_problem *prob;
	uint32_t *cs_module;        /* per problem callsite: pathmap module */
	uint64_t *cs_addr;          /* ... and address (return address - 1; a
	                             * tail callsite's: its first jump) */
	struct u64map *cs_index;    /* private: (module, addr) -> callsite */
};

/* Build the problem.  0, or -1 with one line in err. */
int da_from_pathmap(const struct pathmap *pm, const struct da_capability *cap, enum da_unit unit,
		    struct da_bridge *b, char *err, size_t errlen);
void da_bridge_free(struct da_bridge *b);
/* The problem callsite of (module, addr), or DA_NONE. */
uint32_t da_bridge_callsite(const struct da_bridge *b, uint32_t module, uint64_t addr);

/* ------------------------------------------------------------------ plan in pathmap terms */

struct da_pm_pad {
	uint32_t func;              /* pathmap function */
	uint32_t bytes;
};
struct da_pm_wrap {
	uint32_t module;            /* pathmap module of the call instruction */
	uint64_t addr;              /* its return address - 1 */
	uint32_t bytes;
};
struct da_pm_clone {
	uint32_t func;              /* function copied */
	uint32_t cs_module;         /* call redirected to the copy */
	uint64_t cs_addr;
	uint32_t pad;               /* the copy's frame padding */
	uint32_t parent;            /* DA_NONE: the call is the original
	                             * instruction; else its copy in clone
	                             * `parent` (a chain, disambig.h section 2) */
	uint64_t weight;            /* the entries training saw the nodes it
	                             * takes make (da_pm_plan_weigh; 0 until
	                             * then: a plan file does not hold it) */
	bool promote;               /* its call is a promoted one (da_callsite.
	                             * promoted): the rewriter's stub at the call
	                             * takes the frames, not a dispatch */
	bool xcall;                 /* its call is another module's that calls
	                             * the clone through its check (da_callsite.
	                             * xcall), not by a tag and a dispatch */
	bool tail;                  /* cs_addr is the first of the direct tail
	                             * jumps of the function there to func, all
	                             * pointed at the copy (or, with parent, their
	                             * copies in that clone): da_callsite.tail */
};
struct da_pm_clone_wrap {
	uint32_t clone;             /* index into clones */
	uint32_t module;            /* the callsite inside the original function */
	uint64_t addr;
	uint32_t bytes;             /* wrap of its copy (0: not wrapped) */
};

/* What the plan predicts, kept in its file for `icpp plan` and reviewers. */
struct da_pm_summary {
	uint64_t paths, precise_before, precise_after;
	uint64_t weight, precise_weight_before, precise_weight_after;
	double max_growth;
	int64_t max_growth_bytes;
	uint64_t code_bytes;
	uint64_t seed;
	uint32_t unit;              /* enum da_unit */
	uint64_t left_by[DA_LEFT_N][4];  /* collisions left, by reason and da_diff */
};

/* How often the rewrite runs code there, by the plan's prediction
 * (da_pm_plan_weigh; no plan file holds it): the entries of the frames
 * entered through a callsite, or through its copy in a clone, or of a
 * function's frames and its clones' (its dispatch, its entry wrapper run
 * on those).  The rewriter lays the code that runs most out together
 * (rewriter.h section 2). */
struct da_pm_heat {
	uint32_t module;            /* of the callsite, or of the function */
	uint64_t addr;              /* the callsite, or the function's start */
	uint32_t clone;             /* the callsite's copy in this clone;
	                             * DA_NONE: the callsite itself, or func */
	bool func;                  /* a function, not a callsite */
	uint64_t entries;
};

struct da_pm_plan {
	struct da_pm_pad *pads;     /* nonzero paddings, by function index */
	uint32_t npads;
	struct da_pm_wrap *wraps;   /* nonzero wraps, by (module, addr) */
	uint32_t nwraps;
	struct da_pm_clone *clones;
	uint32_t nclones;
	struct da_pm_clone_wrap *clone_wraps;
	uint32_t nclone_wraps;
	struct da_pm_heat *heat;    /* sorted by (func, module, addr, clone):
	                             * da_pm_plan_weigh's, for clones numbered
	                             * as then */
	uint32_t nheat;
	uint64_t entries;           /* ... and all frames' entries */
	struct da_pm_summary summary;
};

/* The solver's plan in pathmap terms (only nonzero amounts; every clone wrap
 * the solver chose, zero or not).  0 or -1 (out of memory). */
int da_pm_plan_from(const struct da_bridge *b, const struct da_plan *plan,
		    struct da_pm_plan *out);
/* And back, against a bridge (the plan may name callsites the pathmap never
 * saw: those cannot be checked and are refused).  0, or -1 and one line. */
int da_pm_plan_to(const struct da_bridge *b, const struct da_pm_plan *in, struct da_plan *out,
		  char *err, size_t errlen);
void da_pm_plan_free(struct da_pm_plan *p);

#define DA_CLONES_MODULE "[icpp-clones]"
/* The pathmap of the rewritten program, from the pathmap and the plan alone
 * (disambig.h section 2 applied to every node): same modules, functions and
 * tree, new heights.  A clone becomes a function of a module named
 * DA_CLONES_MODULE (no build-id) at address 16 * (clone index + 1), named
 * "NAME.icpp_clone.K"; the copy of its fragment (a .cold part: a frame
 * without a callsite at its parent's height, pm_fragment_frame, as
 * da_from_pathmap marks them) one at 16 * (K + 1) + 8, named
 * "FRAGNAME.icpp_clone.K", after the clones, in the order the nodes first
 * need them.  Frames called from a clone keep the callsite address of the
 * original instruction (the rewriter's own prediction will name the copy).
 * 0, or -1 and one line (also for a clone whose frames hold fragments of
 * two functions). */
int da_predict_pathmap(const struct pathmap *pm, const struct da_pm_plan *plan,
		       struct pathmap **out, char *err, size_t errlen);
/* In a predicted pathmap q: the index of DA_CLONES_MODULE (PM_NONE when
 * the plan cloned nothing), and the clone that function func stands for, its
 * copy or its fragment's, when it is one of that module cm (else DA_NONE).
 * Inline: the rewriter's verification reads predictions without the solver. */
static inline uint32_t da_clones_module(const struct pathmap *q)
{
	for (uint32_t m = 0; m < q->nmodules; m++)
		if (!strcmp(q->modules[m].path, DA_CLONES_MODULE))
			return m;
	return PM_NONE;
}

static inline uint32_t da_clone_of(const struct pathmap *q, uint32_t cm, uint32_t func)
{
	const struct pm_function *f = &q->funcs[func];   /* clone k at 16 (k + 1), fragment + 8 */
	return cm != PM_NONE && f->module == cm ? (uint32_t)(f->addr / 16 - 1) : DA_NONE;
}
/* Each clone's weight: the entries of the frames that the plan's prediction
 * gives it (its fragment's left out), so that a dispatch tests the heaviest
 * first however the plan was made (solved, or read from a file); and the
 * plan's heat (da_pm_heat).  0, or -1 and one line. */
int da_pm_plan_weigh(const struct pathmap *pm, struct da_pm_plan *plan, char *err, size_t errlen);

/* The plan file (docs/plan-format.md): written atomically (util/fileio.h),
 * read back with every line validated; reading resolves modules (by
 * build-id, else by path) and functions against pm.  0, or -1 and one line
 * naming the file. */
int da_plan_write(const char *path, const struct pathmap *pm, const struct da_pm_plan *plan,
		  char *err, size_t errlen);
int da_plan_read(const char *path, const struct pathmap *pm, struct da_pm_plan *plan,
		 char *err, size_t errlen);
/* Parse from memory (what da_plan_read uses); `name` prefixes messages. */
int da_plan_parse(const char *name, const char *text, size_t len, const struct pathmap *pm,
		  struct da_pm_plan *plan, char *err, size_t errlen);

#endif
