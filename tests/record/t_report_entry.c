/* t_report_entry: a sample in the entry wrapper icpp rewrite wrote for a
 * function f (__icpp_entry_NAME: 16 x int3, then T: lea -(W-8)(%rsp),%rsp;
 * call B; lea; ret, and B: f's displaced first instructions) is in f's
 * frame, which the prediction has W deeper than T's CFA (report/entry.c);
 * in B the CFA is already that deep.  run_entry.sh passes fx_entry
 * rewritten with --everything=32,0,0; the pathmap and the samples are made
 * here by hand: f's frame at H + W.  fx_entry_z's B ends in the copy of its
 * call (the return address stored, %rax saved while it is computed, then a
 * jmp to the callee): a sample there is Z's, at the CFA its rows give. */
#include <stdio.h>
#include <string.h>

#include "binary/binary.h"
#include "collector/samplefile.h"
#include "pathmap/pathmap.h"
#include "report/report.h"
#include "tests/check.h"
#include "tests/record/hand_samples.h"

enum { H = 160, GUARD = 16, T_BYTES = 22, Z_PUSHES = 4, COPY_SAVED = 6 };

int main(int argc, char **argv)
{
	struct bin_module *m = hand_open(argc, argv, "t_report_entry REWRITTEN_PROG WORKDIR");
	if (!m)
		return 1;
	const struct bin_function *code = hand_function(m, "__icpp_entry_fx_entry_x"),
				  *f = hand_function(m, "fx_entry_x"),
				  *zcode = hand_function(m, "__icpp_entry_fx_entry_z"),
				  *z = hand_function(m, "fx_entry_z");
	CHECK(code && f && zcode && z);
	if (!code || !f || !zcode || !z)
		return check_exit();
	uint64_t t = code->addr + GUARD, call = t + 8, b = t + T_BYTES;
	struct bin_cfa at_t, at_call, at_b;
	CHECK(!bin_cfa_at(m, t, &at_t) && !bin_cfa_at(m, call, &at_call) && !bin_cfa_at(m, b, &at_b));
	int64_t w = at_call.offset;             /* rsp + W while T's call is live */
	CHECK(at_t.offset == 8 && at_b.offset == 8 && w >= 16 && w % 16 == 0);

	struct pathmap *pm = pm_new();
	const uint8_t *id;
	size_t idlen = bin_build_id(m, &id);
	uint32_t mod = pm_add_module(pm, argv[1], id, (uint32_t)idlen);
	uint32_t fx = pm_add_function(pm, mod, f->addr, f->size, "the_x");
	pm_add_node(pm, PM_NONE, fx, PM_NONE, 0, H + w, 1);
	/* Z's call copy, past its lea and push %rax: its three pushes, the
	 * return address and %rax below the CFA */
	uint64_t zcopy = zcode->addr + GUARD + T_BYTES + Z_PUSHES + COPY_SAVED;
	struct bin_cfa at_zcopy;
	CHECK(!bin_cfa_at(m, zcopy, &at_zcopy) && at_zcopy.offset == 24 + 8 + 16);
	uint32_t fz = pm_add_function(pm, mod, z->addr, z->size, "the_z");
	pm_add_node(pm, PM_NONE, fz, PM_NONE, 0, H + w, 1);

	struct sample_set *ss = hand_samples(m, argv[1], "fx_entry", 17);
	CHECK(ss != NULL);
	if (!ss)
		return check_exit();
	CHECK(hand_sample(ss, t, H + at_t.offset, 0, 0, 2));            /* T, CFA at entry */
	CHECK(hand_sample(ss, call, H + at_call.offset, 0, 0, 3));      /* T, at its call */
	CHECK(hand_sample(ss, b, H + w + at_b.offset, 0, 0, 5));        /* B: f's body, deeper */
	CHECK(hand_sample(ss, zcopy, H + w + at_zcopy.offset, 0, 0, 7));        /* Z's call copy */
	const char *folded = hand_report(pm, ss, argv[2], "entry", RP_FOLDED);
	CHECK(folded != NULL);
	if (!folded)
		return check_exit();
	printf("W %lld\n%s", (long long)w, folded);
	CHECK(strstr(folded, "the_x 10\n") && strstr(folded, "the_z 7\n") &&
	      strlen(folded) == strlen("the_x 10\nthe_z 7\n"));
	pm_free(pm);
	sf_free(ss);
	bin_close(m);
	return check_exit();
}
