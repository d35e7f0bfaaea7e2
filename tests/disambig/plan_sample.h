/* What the plan-file tests share: the sample pathmap, a plan of it with
 * every kind of record, and the check that a text either is refused cleanly
 * or is a plan that survives the file and its consumers (test_plan.c,
 * test_plan_parse.c, fuzz_plan.c). */
#ifndef ICPP_TESTS_PLAN_SAMPLE_H
#define ICPP_TESTS_PLAN_SAMPLE_H

#include <stddef.h>
#include <stdint.h>

#include "disambig/from_pathmap.h"
#include "pathmap/pathmap.h"

/* A program module with a build-id and a library without one:
 *  root M (called from libc) calls A and E, both call D: M-A-D and M-E-D at
 *  one height (Figure 5.3), and M calls B and C each of which calls the
 *  other first (M-B-C-G vs M-C-B-G: Figure 5.4), and G with no callsite
 *  known.  Every function is 0x100 bytes at 0x1000 * (index + 1), in the
 *  order M A E D B C G; callsites at +0x10, +0x20 ... */
extern const uint8_t PST_ID[4];
struct pathmap *pst_sample(void);
/* The same, and M calls T (at 0x8000), whose tail jump at 0x8020 enters U
 * (at 0x9000; U's frame beside T's, at its height): what the plan text's
 * tail clone takes. */
struct pathmap *pst_sample_tails(void);

/* The text of a plan of pst_sample with every record kind: summary lines,
 * a left line, both modules, pads, a wrap, clones (a chain, a tail clone)
 * and clone wraps (the plan itself need not pass da_pm_plan_to).
 * malloc'd, NUL-terminated. */
char *pst_plan_text(size_t *len);
/* The bridge plans are checked against: cloning allowed, T's tail jump to U
 * that the sample plan takes (da_capability.tail_plan).  0 or -1. */
int pst_bridge(const struct pathmap *pm, struct da_bridge *br);

/* Parse text[0..len) as a plan of pm, under the name `file`.  A refusal
 * must be one non-empty line that starts with `file`.  A plan must be
 * written (to `file` itself), read back to the same records and summary,
 * and written again to the same bytes; da_pm_plan_to against br and
 * da_predict_pathmap must accept it or refuse it with one line, and a
 * predicted pathmap must pass pm_validate.  Returns 1 (a plan), 0 (refused)
 * or -1 with what went wrong in why. */
int pst_check(const struct pathmap *pm, const struct da_bridge *br, const char *file,
	      const char *text, size_t len, char *why, size_t whylen);

#endif
