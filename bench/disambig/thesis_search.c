/* The thesis' random search for ARR (Mytkowicz 2010, section 5.4.1), as the
 * benchmark's baseline, run on the solver's own incremental state:
 *  1. pick at random two call paths that share a CID;
 *  2. list the functions that differ between them;
 *  3. pad the first by 16, check whether the two separated; if not pad the
 *     second by 32, the third by 48, ..., stopping as soon as they separate;
 *  4. keep the change if more CIDs map to a single path, else undo it, except
 *     that after 100 iterations without progress a change is kept anyway;
 * until >= 97% of CIDs are unique or 2000 iterations pass without progress.
 * Paddings stay within the problem's masks (the capability): a step that
 * would leave the mask skips that function.  No stack cap (the thesis had
 * none); an optional time limit keeps benchmark runs bounded. */
#include <string.h>
#include <time.h>

#include "bench/disambig/thesis_search.h"
#include "disambig/internal.h"
#include "disambig/state.h"

int thesis_search(const struct da_problem *p, const struct thesis_params *tp,
		  struct da_result *r, struct thesis_stats *st, char *err, size_t errlen)
{
	struct da_options o;
	da_options_default(&o);
	o.allow_wrap = false;
	o.allow_clone = false;
	o.max_stack_growth = 0;
	struct ds *s = ds_new(p, &o, err, errlen);
	if (!s)
		return -1;
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint64_t rng = tp->seed ? tp->seed : 1;
	uint32_t list[512], old[512];
	uint64_t fruitless = 0, iters = 0, accepted = 0, forced = 0;
	memset(st, 0, sizeof(*st));
	while (ds_cids(s) && (double)ds_unique_cids(s) < tp->target * (double)ds_cids(s) &&
	       fruitless < tp->max_fruitless) {
		iters++;
		if ((iters & 255) == 0 && tp->time_limit_s > 0) {
			clock_gettime(CLOCK_MONOTONIC, &t);
			if ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9 > tp->time_limit_s) {
				st->timed_out = true;
				break;
			}
		}
		uint32_t a, b;
		if (!ds_random_collision(s, &rng, &a, &b))
			break;
		uint32_t n = ds_differing_funcs(s, a, b, list, 512);
		uint64_t before = ds_unique_cids(s);
		uint32_t changed = 0;
		bool separated = false;
		for (uint32_t i = 0; i < n && !separated; i++) {
			uint32_t f = list[i], v = ds_pad(s, f) + 16 * (i + 1);
			if (!da_mask_allows(p->funcs[f].pad_mask, v))
				continue;
			old[changed] = ds_pad(s, f);
			list[changed++] = f;       /* reuse list: f is at or after changed */
			ds_set_pad(s, f, v);
			separated = !ds_same_cid(s, a, b);
		}
		bool keep = separated && ds_unique_cids(s) > before;
		if (separated && !keep && fruitless && fruitless % tp->escape == 0) {
			keep = true;
			forced++;
		}
		if (keep) {
			accepted++;
			if (ds_unique_cids(s) > before)
				fruitless = 0;
			else
				fruitless++;
		} else {
			for (uint32_t i = changed; i-- > 0;)
				ds_set_pad(s, list[i], old[i]);
			fruitless++;
		}
	}
	st->iterations = iters;
	st->accepted = accepted;
	st->forced = forced;
	int rc = ds_result(s, &o, r, err, errlen);
	clock_gettime(CLOCK_MONOTONIC, &t);
	if (!rc)
		r->stats.seconds = (t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) * 1e-9;
	ds_free(s);
	return rc;
}
