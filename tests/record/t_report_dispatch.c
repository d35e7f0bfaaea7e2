/* t_report_dispatch: a sample in the dispatch icpp rewrite wrote for a
 * function with a clone by dispatch (__icpp_dispatch_NAME: 16 x int3, the
 * tests of the return address, 24 bytes for one clone: lea, sub, cmp, je;
 * then the function's displaced first instructions) is in the frame of the function or of a
 * clone whose test has not run yet (report/entry.c).  run_dispatch_cases.sh
 * passes fx_dispatch rewritten with clone 1 of fx_dl_g by dispatch (case A);
 * the pathmap and the samples are made here by hand: the function and its
 * clone alone at heights of their own and together at a third.  Then the
 * text report of a clone named as icpp rewrite names it, and a sample in
 * either frame of the same path (the function's or its clone's) is precise. */
#include <stdio.h>
#include <string.h>

#include "binary/binary.h"
#include "collector/samplefile.h"
#include "pathmap/pathmap.h"
#include "report/report.h"
#include "tests/check.h"
#include "tests/record/hand_samples.h"

enum { H_FUNC = 96, H_CLONE = 160, H_BOTH = 224, GUARD = 16, TEST = 24, CMP = 11 };

/* A pathmap with f (the_func) at h_func and its clone at h_clone, the clone
 * named as the predicted pathmap of icpp rewrite names it. */
static struct pathmap *named_clone_map(const char *path, const uint8_t *id, size_t idlen,
				       const struct bin_function *f,
				       const struct bin_function *clone, int64_t h_func,
				       int64_t h_clone)
{
	struct pathmap *pm = pm_new();
	uint32_t mod = pm_add_module(pm, path, id, (uint32_t)idlen);
	uint32_t ff = pm_add_function(pm, mod, f->addr, f->size, "the_func");
	uint32_t fc = pm_add_function(pm, mod, clone->addr, clone->size, "__icpp_clone_1_the_func");
	pm_add_node(pm, PM_NONE, ff, PM_NONE, 0, h_func, 1);
	pm_add_node(pm, PM_NONE, fc, PM_NONE, 0, h_clone, 1);
	return pm;
}

int main(int argc, char **argv)
{
	struct bin_module *m = hand_open(argc, argv, "t_report_dispatch REWRITTEN_PROG WORKDIR");
	if (!m)
		return 1;
	const struct bin_function *code = hand_function(m, "__icpp_dispatch_fx_dl_g"),
				  *f = hand_function(m, "fx_dl_g"), *clone = hand_function(m, "__icpp_clone_1_fx_dl_g");
	CHECK(code && f && clone);
	if (!code || !f || !clone)
		return check_exit();
	uint64_t test = code->addr + GUARD, body = test + TEST;

	struct pathmap *pm = hand_clone_map(m, argv[1], f, clone, H_FUNC, H_CLONE, H_BOTH);
	CHECK(pm != NULL);
	if (!pm)
		return check_exit();
	const uint8_t *id;
	size_t idlen = bin_build_id(m, &id);

	struct sample_set *ss = hand_samples(m, argv[1], "fx_dispatch", 25);
	CHECK(ss != NULL);
	if (!ss)
		return check_exit();
	CHECK(hand_sample_in_frame(ss, m, test, H_FUNC, 3));     /* before the test: either frame */
	CHECK(hand_sample_in_frame(ss, m, test, H_CLONE, 5));
	CHECK(hand_sample_in_frame(ss, m, test + CMP, H_BOTH, 4));        /* at its cmp: both, split */
	CHECK(hand_sample_in_frame(ss, m, body, H_BOTH, 6));      /* after it: the function's */
	CHECK(hand_sample_in_frame(ss, m, body, H_CLONE, 7));     /* the clone's test has run: no frame */
	const char *folded = hand_report(pm, ss, argv[2], "dispatch", RP_FOLDED);
	CHECK(folded != NULL);
	if (!folded)
		return check_exit();
	printf("%s", folded);
	/* folded adds up equal stacks: the function's 3 and 6 */
	CHECK(strstr(folded, "\nthe_func 9\n") != NULL);
	CHECK(strstr(folded, "\nthe_clone 5\n") != NULL);
	CHECK(strstr(folded, "\nthe_func [ambiguous] 2\n") != NULL);
	CHECK(strstr(folded, "\nthe_clone [ambiguous] 2\n") != NULL);
	CHECK(!strncmp(folded, "[missing: CID not in the pathmap];__icpp_dispatch_fx_dl_g (", 59));
	pm_free(pm);
	sf_free(ss);

	/* The text's hot paths show a clone as the function it copies (named
	 * as the predicted pathmap names it): one line for both frames. */
	pm = named_clone_map(argv[1], id, idlen, f, clone, H_FUNC, H_CLONE);
	ss = hand_samples(m, argv[1], "fx_dispatch", 8);
	CHECK(ss != NULL);
	if (!ss)
		return check_exit();
	CHECK(hand_sample_in_frame(ss, m, test, H_FUNC, 3));
	CHECK(hand_sample_in_frame(ss, m, test, H_CLONE, 5));
	const char *text = hand_report(pm, ss, argv[2], "dispatch_text", RP_TEXT);
	CHECK(text != NULL);
	if (!text)
		return check_exit();
	printf("%s", text);
	CHECK(strstr(text, "  100.0%          8          -   the_func\n") != NULL);
	CHECK(strstr(text, "__icpp_clone") == NULL);
	pm_free(pm);
	sf_free(ss);

	/* A sample that may be in either frame, the function's or its clone's,
	 * at one height: the same path either way, so precise. */
	pm = named_clone_map(argv[1], id, idlen, f, clone, H_BOTH, H_BOTH);
	ss = hand_samples(m, argv[1], "fx_dispatch", 4);
	CHECK(ss != NULL);
	if (!ss)
		return check_exit();
	CHECK(hand_sample_in_frame(ss, m, test + CMP, H_BOTH, 4));
	text = hand_report(pm, ss, argv[2], "dispatch_same", RP_TEXT);
	CHECK(text != NULL);
	if (!text)
		return check_exit();
	printf("%s", text);
	CHECK(strstr(text, "  precise    100.0%") != NULL);
	CHECK(strstr(text, "  100.0%          4          -   the_func\n") != NULL);
	pm_free(pm);
	sf_free(ss);
	bin_close(m);
	return check_exit();
}
