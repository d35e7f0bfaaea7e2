/* What icpp rewrite may change in a program and the libraries rewritten with
 * it, as the solver's capability (disambig/from_pathmap.h): the rewriter's
 * analysis of each binary, its module in the pathmap, the calls into the
 * map's other modules bounded by their callees' code, and the frames training
 * did not hook left as they are.  Modules of the map that no binary names
 * stay as they are.  icpp rewrite solves with it; icpp plan --binary plans
 * with it, so that its plan is the one icpp rewrite would apply. */
#ifndef ICPP_CLI_REWRITE_CAP_H
#define ICPP_CLI_REWRITE_CAP_H

#include <stdbool.h>
#include <stdio.h>

#include "disambig/from_pathmap.h"
#include "pathmap/pathmap.h"
#include "rewriter/rewriter.h"

#define REWRITE_MAX_BINARIES 64

struct rewrite_target {
	struct rw_binary *b;            /* the caller's, analysed */
	const char *path;               /* as the user named it */
	uint32_t module;                /* b's module in the pathmap */
	struct rw_visibility vis;
};

struct rewrite_cap {
	struct rewrite_target t[REWRITE_MAX_BINARIES];
	uint32_t n;
};

/* Bound the calls from b into the modules of pm by their callees' code
 * (rw_bound_imports).  When that cannot be done they stay refused, which
 * costs precision, not correctness: one line on stderr, prefixed by `who`
 * ("icpp rewrite"), says so, and another how many it bounded unless quiet. */
void rewrite_bound_imports(struct rw_binary *b, const struct pathmap *pm, const char *who,
			   bool quiet);

/* Fill rc for the n binaries b[i] (files paths[i]) and their modules in pm
 * (the pathmap MAP), bounding imports as above, and point cap's hooks at it;
 * cap->clone is set (the rewriter clones what its analysis allows).  0, or
 * -1 after one line as icpp CMD (pm has no module of a binary's build, two
 * binaries are one module, or out of memory).  Free with rewrite_cap_free
 * (the binaries stay the caller's). */
int rewrite_cap_init(struct rewrite_cap *rc, struct rw_binary *const *b, const char *const *paths,
		     uint32_t n, const struct pathmap *pm, const char *map, const char *cmd,
		     bool quiet, struct da_capability *cap);
/* For the collisions r leaves blocked, the modules not rewritten whose frames
 * differ between the two paths (only a change there could separate them);
 * for those it leaves unsolved (or crowded) at a function of a module not
 * rewritten, that module (only there could a clone of the function take
 * calls: python3.11 with _json, seed 1, 91.8% of paths predicted precise,
 * with libc too 93.7%).  Of each kind the three whose collisions' CIDs hold
 * the most weight, one line each on out, beginning with `who`, naming the
 * option (`flag`: --lib, --binary) that would add them.  Only libraries:
 * never a program (a workload's sh or cmp: each is rewritten as PROG by a
 * run of its own) nor a dynamic loader (the kernel maps it), which no
 * LD_LIBRARY_PATH replaces.  Nothing when none. */
void rewrite_cap_suggest(const struct rewrite_cap *rc, const struct pathmap *pm,
			 const struct da_result *r, const char *who, const char *flag, FILE *out);
/* How another module's checked call reaches function g (module gm) to take
 * its clone (rewriter.h section 1, Cross-module calls): h, the function of
 * module hm that the call's GOT slot holds (g itself, or a forwarder); fwd,
 * the function h forwards to in hm (else 0) through hm's slot fwd_slot; and
 * hop_slot, the slot of hm through which h (fwd) forwards to g of another
 * module (else 0). */
struct rewrite_xcall_route {
	uint32_t module, hm;
	uint64_t g, h, fwd, fwd_slot, hop_slot;
};
/* The way M's call at site (module m; or the first of its function's tail
 * jumps to a PLT stub at site: rewriter.h section 1, Tail chains) reaches
 * function g of module gm by a check, into *route; false when none. */
bool rewrite_cap_xcall_route(const struct rewrite_cap *rc, uint32_t m, uint64_t site, uint32_t gm,
			     uint64_t g, struct rewrite_xcall_route *route);
/* --everything's checked calls: each call of a rewritten module through its
 * GOT slot, through which training saw it enter a function of the library
 * rewritten after it that a clone of may take by the check (rewriter.h
 * section 1, Cross-module calls), takes an unpadded clone of that
 * function, appended to pp: the checks on every such call a program makes,
 * where a solver's plan places a few.  0, or -1 when out of memory. */
int rewrite_cap_everything_xcalls(const struct rewrite_cap *rc, struct pathmap *pm,
				  struct da_pm_plan *pp);
/* The target whose module is m, or NULL. */
const struct rewrite_target *rewrite_cap_target(const struct rewrite_cap *rc, uint32_t m);
void rewrite_cap_free(struct rewrite_cap *rc);

#endif
