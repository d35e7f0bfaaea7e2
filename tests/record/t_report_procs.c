/* t_report_procs: a path is a candidate for a sample only when its process
 * mapped every module of the path (report.c, same_process).  A map of
 * several programs, or of another one, shares CIDs with the profiled
 * program in the libraries they both use; those paths are no answer.
 * The pathmap, by hand: function f of the program under test (argv[1],
 * mapped by the recorded process) at three heights, one reached from a
 * module the process never mapped (/other/prog), one from f's own module
 * only, and one from both. */
#include <stdio.h>
#include <string.h>

#include "binary/binary.h"
#include "collector/samplefile.h"
#include "pathmap/pathmap.h"
#include "report/report.h"
#include "tests/check.h"
#include "tests/record/hand_samples.h"

enum { H_OTHER = 96, H_OWN = 160, H_BOTH = 224 };

static const uint8_t OTHER_ID[] = {0x0f, 0x7e, 0x4a};

int main(int argc, char **argv)
{
	struct bin_module *m = hand_open(argc, argv, "t_report_procs PROG WORKDIR");
	if (!m)
		return 1;
	const struct bin_function *f = hand_function(m, "main");
	struct bin_cfa rule;
	CHECK(f != NULL && bin_cfa_at(m, f->addr, &rule) == 0 && rule.reg == BIN_CFA_RSP);
	if (!f)
		return check_exit();

	struct pathmap *pm = pm_new();
	const uint8_t *id;
	size_t idlen = bin_build_id(m, &id);
	uint32_t own = pm_add_module(pm, argv[1], id, (uint32_t)idlen);
	uint32_t other = pm_add_module(pm, "/other/prog", OTHER_ID, sizeof(OTHER_ID));
	uint32_t ff = pm_add_function(pm, own, f->addr, f->size, "f");
	uint32_t fo = pm_add_function(pm, other, 0x1000, 0x10, "other_main");
	uint32_t ro = pm_add_node(pm, PM_NONE, fo, PM_NONE, 0, 0, 1);
	pm_add_node(pm, ro, ff, other, 0x1008, H_OTHER, 1);
	pm_add_node(pm, ro, ff, other, 0x1008, H_BOTH, 1);
	pm_add_node(pm, PM_NONE, ff, PM_NONE, 0, H_OWN, 1);
	uint32_t rf = pm_add_node(pm, PM_NONE, ff, PM_NONE, 0, 8, 1);
	pm_add_node(pm, rf, ff, own, f->addr + 4, H_BOTH, 1);

	struct sample_set *ss = hand_samples(m, argv[1], "prog", 14);
	CHECK(ss != NULL);
	if (!ss)
		return check_exit();
	CHECK(hand_sample(ss, f->addr, H_OTHER + rule.offset, 0, 0, 3));
	CHECK(hand_sample(ss, f->addr, H_OWN + rule.offset, 0, 0, 5));
	CHECK(hand_sample(ss, f->addr, H_BOTH + rule.offset, 0, 0, 6));
	const char *folded = hand_report(pm, ss, argv[2], "procs", RP_FOLDED);
	CHECK(folded != NULL);
	if (!folded)
		return check_exit();
	printf("%s", folded);
	/* the path from /other/prog is no candidate: missing, with the reason */
	CHECK(strstr(folded, "[missing: the CID's paths run through modules the process did not "
			     "map];main (plt_prog) 3\n") != NULL);
	CHECK(strstr(folded, "other_main") == NULL);
	/* H_OWN: its one path; H_BOTH: the path of f's own module alone,
	 * precise (not split with the other program's) */
	CHECK(strstr(folded, "f 5\n") != NULL);
	CHECK(strstr(folded, "f;f 6\n") != NULL);
	pm_free(pm);
	sf_free(ss);
	bin_close(m);
	return check_exit();
}
