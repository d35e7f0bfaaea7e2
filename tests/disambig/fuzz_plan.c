/* libFuzzer target for the plan file (docs/plan-format.md, "Tests and
 * fuzzing"): each input is parsed as a plan of the sample pathmap
 * (plan_sample.h); a refusal must be one line naming the file, a plan must
 * survive write -> read -> write, and da_pm_plan_to, da_evaluate and
 * da_predict_pathmap must take it or refuse it with one line.  Anything else aborts. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "tests/disambig/plan_sample.h"

static struct pathmap *pm;
static struct da_bridge br;
static char file[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!pm) {
		pm = pst_sample_tails();
		if (pst_bridge(pm, &br) < 0)
			abort();
		snprintf(file, sizeof(file), "/tmp/icpp-fuzz-plan-%d.plan", (int)getpid());
	}
	char why[512];
	if (pst_check(pm, &br, file, (const char *)data, size, why, sizeof(why)) < 0) {
		fprintf(stderr, "fuzz_plan: %s\n", why);
		abort();
	}
	return 0;
}
