/* The solver's incremental state, exposed (privately) so that the benchmark's
 * baseline, the thesis' random search, runs in the same harness: same CID
 * buckets, same stack accounting, same result.  Not a contract. */
#ifndef ICPP_DISAMBIG_STATE_H
#define ICPP_DISAMBIG_STATE_H

#include "disambig/disambig.h"

struct ds;

/* A state with every amount 0.  NULL and a message when out of memory. */
struct ds *ds_new(const struct da_problem *p, const struct da_options *o, char *err,
		  size_t errlen);
void ds_free(struct ds *s);

/* Set function f's padding.  Returns false when the result exceeds the stack
 * cap (the change stays applied: set the old value back). */
bool ds_set_pad(struct ds *s, uint32_t func, uint32_t bytes);
uint32_t ds_pad(const struct ds *s, uint32_t func);

/* Clone f for the original call instruction cs, as the later clone passes
 * do: with copies of the clones below it that improve the objective
 * (disambig.h section 5, c; no check that f may be cloned); the clone's
 * index, or DA_NONE. */
uint32_t ds_clone(struct ds *s, uint32_t func, uint32_t callsite);
/* The search's last step: drop every clone whose removal improves the
 * objective and leaves every precise path precise (solve.c, prune_clones). */
void ds_prune_clones(struct ds *s);

uint64_t ds_cids(const struct ds *s);           /* distinct CIDs */
uint64_t ds_unique_cids(const struct ds *s);    /* CIDs holding one path */
uint64_t ds_precise_paths(const struct ds *s);
uint64_t ds_work(const struct ds *s);           /* node moves so far */

/* Two problem nodes of different paths sharing a CID, chosen at random;
 * false when no CID is ambiguous. */
bool ds_random_collision(struct ds *s, uint64_t *rng, uint32_t *a, uint32_t *b);
bool ds_same_cid(const struct ds *s, uint32_t a, uint32_t b);
/* Functions whose number of non-last occurrences differs between the paths
 * of nodes a and b, in path order (a's path from its root, then b's). */
uint32_t ds_differing_funcs(struct ds *s, uint32_t a, uint32_t b, uint32_t *out, uint32_t max);

/* The state as a result (plan, heights, metrics, costs, leftovers). */
int ds_result(struct ds *s, const struct da_options *o, struct da_result *r, char *err,
	      size_t errlen);

#endif
