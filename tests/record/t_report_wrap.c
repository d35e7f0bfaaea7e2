/* t_report_wrap: a sample taken in a trampoline of icpp rewrite
 * (__icpp_wrap_SITE) is charged to the caller's frame, whose call at SITE
 * is still going on (report.c, wrap_caller).  run_record.sh rewrites rt_prog
 * with wrappers only and passes the result; the pathmap and the samples are
 * made here by hand: a caller frame at height H_CALLER, one sample in its
 * call's trampoline at that frame (7 samples) and one at a height no frame
 * of the caller has (3, missing).  The folded output must show the caller
 * for the 7 and no trampoline at all. */
#include <stdlib.h>
#include <string.h>

#include "binary/binary.h"
#include "collector/samplefile.h"
#include "pathmap/pathmap.h"
#include "report/report.h"
#include "tests/check.h"
#include "tests/record/hand_samples.h"

enum { H_CALLER = 160 };

/* The first trampoline whose call site lies in a function with a CFA rule
 * there; *site and *caller set. */
static const struct bin_function *find_wrap(struct bin_module *m, uint64_t *site,
					    const struct bin_function **caller, struct bin_cfa *rule)
{
	size_t n;
	const struct bin_function *f = bin_functions(m, &n);
	for (size_t i = 0; i < n; i++) {
		if (!f[i].name || strncmp(f[i].name, "__icpp_wrap_", 12))
			continue;
		*site = strtoull(f[i].name + 12, NULL, 16);
		*caller = bin_function_at(m, *site);
		if (*caller && (*caller)->name && bin_cfa_at(m, *site, rule) == 0)
			return &f[i];
	}
	return NULL;
}

int main(int argc, char **argv)
{
	struct bin_module *m = hand_open(argc, argv, "t_report_wrap REWRITTEN_PROG WORKDIR");
	if (!m)
		return 1;
	uint64_t site = 0;
	const struct bin_function *caller = NULL;
	struct bin_cfa crule, trule;
	const struct bin_function *tramp = find_wrap(m, &site, &caller, &crule);
	CHECK(tramp != NULL);
	if (!tramp)
		return check_exit();
	/* at the trampoline's first instruction: CFA = SP + 8 */
	CHECK(bin_cfa_at(m, tramp->addr, &trule) == 0 && trule.reg == BIN_CFA_RSP);
	/* the trampoline's CFA is the caller's SP at the call: the caller's CFA
	 * lies crule.offset above it (an rsp rule), or at BP + crule.offset */
	int64_t h_tramp = crule.reg == BIN_CFA_RSP ? H_CALLER + crule.offset : H_CALLER + 48;
	int64_t bp_off = H_CALLER + crule.offset;

	struct pathmap *pm = pm_new();
	const uint8_t *id;
	size_t idlen = bin_build_id(m, &id);
	uint32_t mod = pm_add_module(pm, argv[1], id, (uint32_t)idlen);
	uint32_t fc = pm_add_function(pm, mod, caller->addr, caller->size, "the_caller");
	pm_add_node(pm, PM_NONE, fc, PM_NONE, 0, H_CALLER, 1);

	struct sample_set *ss = hand_samples(m, argv[1], "rt_prog", 10);
	CHECK(ss != NULL);
	if (!ss)
		return check_exit();
	CHECK(hand_sample(ss, tramp->addr, h_tramp + trule.offset, bp_off, SF_R_BP_VALID, 7));
	CHECK(hand_sample(ss, tramp->addr, h_tramp + 256 + trule.offset, bp_off + 256,
			  SF_R_BP_VALID, 3));
	const char *folded = hand_report(pm, ss, argv[2], "wrap", RP_FOLDED);
	CHECK(folded != NULL);
	if (!folded)
		return check_exit();
	printf("trampoline %s for the call at 0x%lx in %s\n%s", tramp->name, (unsigned long)site,
	       caller->name, folded);
	CHECK(strstr(folded, "\nthe_caller 7\n") != NULL || !strncmp(folded, "the_caller 7\n", 13));
	CHECK(strstr(folded, " 3\n") != NULL);                /* the missing one */
	CHECK(strstr(folded, "__icpp_wrap") == NULL);
	pm_free(pm);
	sf_free(ss);
	bin_close(m);
	return check_exit();
}
