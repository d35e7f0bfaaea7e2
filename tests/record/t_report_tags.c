/* t_report_tags: icpp report on the pair run_tags.sh rewrites (rewriter.h
 * section 1, Tagged calls), on run_bound.sh's library (Bound calls), on
 * run_promote.sh's program (Promoted calls) and on run_veneer.sh's
 * (Cloning: veneers), one file per run:
 *  - the program (the library): a sample in a tagged call's stub
 *    (__icpp_tag_SITE; a bound call's, __icpp_bind_SITE; a promoted call's,
 *    __icpp_promote_SITE, in its displaced instructions) is its caller's at
 *    the caller's height (the stub's FDE repeats the caller's row at the
 *    call), as the sample would be at the call itself;
 *  - run_bound.sh's library: a sample in a bound call's thunk
 *    (__icpp_bindto_CLONE) is the clone's at its entry's height, where the
 *    thunk jumps to it (its FDE: CFA = rsp + 8, as at the clone's entry);
 *  - run_xcall.sh's program: a sample in the thunk of a call of another
 *    module's clone (__icpp_xcall_SLOT_CLONE) is that clone's, at the
 *    height of the frames the call makes, as a sample in a PLT entry is
 *    its callee's (report/plt.c);
 *  - run_veneer.sh's program: a sample in a clone's veneer
 *    (__icpp_veneer_COPY) is the clone's at the height of its jump;
 *  - the library: a sample in the dispatch of fx_tag_leaf before its tag
 *    test may be in the frame of the function or of its clone, one after
 *    it in the function's alone (report/entry.c).
 * The pathmap and the samples are made by hand. */
#include <stdio.h>
#include <string.h>

#include "binary/binary.h"
#include "collector/samplefile.h"
#include "pathmap/pathmap.h"
#include "report/report.h"
#include "tests/check.h"
#include "tests/record/hand_samples.h"
#include "x86/reloc.h"

/* the dispatch: the guard, the page check, the check of the tag's first nopl and the low
 * half's load, the tag's test (the search over low halves: cmp, je, jmp past; at its
 * hit: mov, cmpl, je) */
enum { H_FUNC = 96, H_CLONE = 160, H_BOTH = 224, GUARD = 16, PAGE_CHECK = 32, LO_TEST = 18,
       TAG_TEST = 36 };
/* a bound call's thunk: lea, cmp (7 bytes each), then its je to the clone */
enum { THUNK_JE = 14 };

static const struct bin_function *stub_of(struct bin_module *m)
{
	size_t n;
	const struct bin_function *f = bin_functions(m, &n);
	for (size_t i = 0; i < n; i++)
		if (f[i].name && (!strncmp(f[i].name, "__icpp_tag_", 11) ||
				  !strncmp(f[i].name, "__icpp_bind_", 12) ||
				  !strncmp(f[i].name, "__icpp_promote_", 15)))
			return &f[i];
	return NULL;
}

static void check_stub(struct bin_module *m, const char *path, const char *dir,
		       const struct bin_function *stub)
{
	uint64_t site;
	const struct bin_function *caller = bin_stub_caller(m, stub, &site);
	CHECK(caller != NULL);
	if (!caller)
		return;
	const uint8_t *id;
	size_t idlen = bin_build_id(m, &id);
	struct pathmap *pm = pm_new();
	uint32_t mod = pm_add_module(pm, path, id, (uint32_t)idlen);
	uint32_t fc = pm_add_function(pm, mod, caller->addr, caller->size, "the_caller");
	pm_add_node(pm, PM_NONE, fc, PM_NONE, 0, H_FUNC, 1);
	struct sample_set *ss = hand_samples(m, path, "fx_tags", 7);
	CHECK(ss != NULL);
	if (!ss)
		return;
	/* at the tag */
	CHECK(hand_sample_in_frame(ss, m, stub->addr + GUARD, H_FUNC, 3));
	/* in the caller, at its call (a promoted call's bytes before its
	 * end are the jump to the stub and int3: after it) */
	bool promoted = !strncmp(stub->name, "__icpp_promote_", 15);
	CHECK(hand_sample_in_frame(ss, m, promoted ? site + 1 : site - 4, H_FUNC, 4));
	const char *folded = hand_report(pm, ss, dir, "tags_stub", RP_FOLDED);
	CHECK(folded != NULL);
	if (folded) {
		printf("%s", folded);
		CHECK(!strcmp(folded, "the_caller 7\n"));
	}
	pm_free(pm);
	sf_free(ss);
}

static const struct bin_function *thunk_of(struct bin_module *m)
{
	size_t n;
	const struct bin_function *f = bin_functions(m, &n);
	for (size_t i = 0; i < n; i++)
		if (f[i].name && !strncmp(f[i].name, "__icpp_bindto_", 14))
			return &f[i];
	return NULL;
}

static void check_thunk(struct bin_module *m, const char *path, const char *dir,
			const struct bin_function *thunk)
{
	const struct bin_function *clone = bin_thunk_callee(m, thunk),
				  *f = hand_function(m, "fx_bound_leaf");
	CHECK(clone && f && !strncmp(clone->name, "__icpp_clone_", 13));
	if (!clone || !f)
		return;
	struct pathmap *pm = hand_clone_map(m, path, f, clone, H_FUNC, H_CLONE, H_BOTH);
	struct sample_set *ss = hand_samples(m, path, "fx_bound", 9);
	CHECK(pm && ss);
	if (!pm || !ss) {
		pm_free(pm);
		sf_free(ss);
		return;
	}
	/* at the thunk's slot test, at its jump to the clone, and at the
	 * clone's entry: the clone's frame */
	CHECK(hand_sample_in_frame(ss, m, thunk->addr + GUARD, H_CLONE, 2));
	CHECK(hand_sample_in_frame(ss, m, thunk->addr + GUARD + THUNK_JE, H_CLONE, 3));
	CHECK(hand_sample_in_frame(ss, m, clone->addr, H_CLONE, 4));
	const char *folded = hand_report(pm, ss, dir, "bound_thunk", RP_FOLDED);
	CHECK(folded != NULL);
	if (folded) {
		printf("%s", folded);
		CHECK(!strcmp(folded, "the_clone 9\n"));
	}
	pm_free(pm);
	sf_free(ss);
}

/* The return address of the call of m that calls `to`, and its function;
 * 0 when none. */
static uint64_t call_of(struct bin_module *m, uint64_t to, const struct bin_function **caller)
{
	csh cs;
	CHECK(x86_open(&cs));
	cs_insn *insn = cs_malloc(cs);
	size_t n;
	const struct bin_function *f = bin_functions(m, &n);
	uint64_t ret = 0;
	uint8_t code[4096];
	for (size_t i = 0; i < n && !ret; i++) {
		if (f[i].size > sizeof(code) || bin_read(m, f[i].addr, code, f[i].size) < 0)
			continue;
		const uint8_t *c = code;
		size_t left = f[i].size;
		uint64_t at = f[i].addr;
		while (!ret && x86_disasm_iter(cs, &c, &left, &at, insn))
			if (insn->id == X86_INS_CALL && x86_branch_target(insn) == to) {
				ret = at;
				*caller = &f[i];
			}
	}
	cs_free(insn, 1);
	cs_close(&cs);
	return ret;
}

static const struct bin_function *xthunk_of(struct bin_module *m)
{
	size_t n;
	const struct bin_function *f = bin_functions(m, &n);
	for (size_t i = 0; i < n; i++)
		if (f[i].name && !strncmp(f[i].name, BIN_XCALL_PREFIX, strlen(BIN_XCALL_PREFIX)))
			return &f[i];
	return NULL;
}

/* Samples in the thunk, at its first instruction and at its jump to the
 * clone, at the height the map has the clone's frame under the call: the
 * clone's. */
static void check_xthunk(struct bin_module *m, const char *path, const char *dir,
			 const struct bin_function *thunk)
{
	const struct bin_function *caller = NULL;
	uint64_t ret = call_of(m, thunk->addr + GUARD, &caller);
	CHECK(ret != 0);
	if (!ret)
		return;
	uint64_t lo, hi;
	CHECK(bin_call_stub(m, thunk->addr + GUARD, &lo, &hi) && lo == thunk->addr &&
	      hi == thunk->addr + thunk->size);
	const uint8_t *id;
	size_t idlen = bin_build_id(m, &id);
	struct pathmap *pm = pm_new();
	uint32_t mod = pm_add_module(pm, path, id, (uint32_t)idlen);
	uint32_t lib = pm_add_module(pm, "/lib/the_lib.so", NULL, 0);
	uint32_t fc = pm_add_function(pm, mod, caller->addr, caller->size, "the_caller");
	uint32_t fk = pm_add_function(pm, lib, 0x5000, 0x40, "the_clone");
	uint32_t root = pm_add_node(pm, PM_NONE, fc, PM_NONE, 0, H_FUNC, 1);
	pm_add_node(pm, root, fk, mod, ret - 1, H_CLONE, 1);
	struct sample_set *ss = hand_samples(m, path, "fx_xcall", 5);
	CHECK(ss && hand_map(ss, "/lib/the_lib.so", 0x7f0000000000ULL));
	if (!ss) {
		pm_free(pm);
		return;
	}
	/* the thunk ends `add $X,%r11; jmp *%r11` (7 and 3 bytes), then its
	 * fallback's 6-byte jmp */
	CHECK(hand_sample_in_frame(ss, m, thunk->addr + GUARD, H_CLONE, 2));
	CHECK(hand_sample_in_frame(ss, m, thunk->addr + thunk->size - 9, H_CLONE, 3));
	const char *folded = hand_report(pm, ss, dir, "xcall_thunk", RP_FOLDED);
	CHECK(folded != NULL);
	if (folded) {
		printf("%s", folded);
		CHECK(!strcmp(folded, "the_caller;the_clone 5\n"));
	}
	pm_free(pm);
	sf_free(ss);
}

static const struct bin_function *veneer_of(struct bin_module *m)
{
	size_t n;
	const struct bin_function *f = bin_functions(m, &n);
	for (size_t i = 0; i < n; i++)
		if (bin_veneer(&f[i]))
			return &f[i];
	return NULL;
}

/* A sample in a clone's veneer is the clone's, at the height of its jump
 * (the veneer's FDE repeats the clone's row there). */
static void check_veneer(struct bin_module *m, const char *path, const char *dir,
			 const struct bin_function *veneer)
{
	uint64_t site;
	const struct bin_function *clone = bin_stub_caller(m, veneer, &site);
	CHECK(clone && !strncmp(clone->name, "__icpp_clone_", 13));
	if (!clone)
		return;
	CHECK(site >= clone->addr && site < clone->addr + clone->size);
	const uint8_t *id;
	size_t idlen = bin_build_id(m, &id);
	struct pathmap *pm = pm_new();
	uint32_t mod = pm_add_module(pm, path, id, (uint32_t)idlen);
	uint32_t fc = pm_add_function(pm, mod, clone->addr, clone->size, "the_clone");
	pm_add_node(pm, PM_NONE, fc, PM_NONE, 0, H_FUNC, 1);
	struct sample_set *ss = hand_samples(m, path, "fx_veneer", 5);
	CHECK(ss != NULL);
	if (!ss) {
		pm_free(pm);
		return;
	}
	CHECK(hand_sample_in_frame(ss, m, veneer->addr, H_FUNC, 5));
	const char *folded = hand_report(pm, ss, dir, "veneer", RP_FOLDED);
	CHECK(folded != NULL);
	if (folded) {
		printf("%s", folded);
		CHECK(!strcmp(folded, "the_clone 5\n"));
	}
	pm_free(pm);
	sf_free(ss);
}

static void check_dispatch(struct bin_module *m, const char *path, const char *dir,
			   const struct bin_function *code)
{
	const struct bin_function *f = hand_function(m, "fx_tag_leaf"),
				  *clone = hand_function(m, "__icpp_clone_0_fx_tag_leaf");
	CHECK(f && clone);
	if (!f || !clone)
		return;
	uint64_t test = code->addr + GUARD, body = test + PAGE_CHECK + TAG_TEST;
	struct pathmap *pm = hand_clone_map(m, path, f, clone, H_FUNC, H_CLONE, H_BOTH);
	struct sample_set *ss = hand_samples(m, path, "fx_tags", 25);
	CHECK(pm && ss);
	if (!pm || !ss) {
		pm_free(pm);
		sf_free(ss);
		return;
	}
	/* before the tests: either */
	CHECK(hand_sample_in_frame(ss, m, test, H_FUNC, 3));
	/* at the tag's first compare */
	CHECK(hand_sample_in_frame(ss, m, test + PAGE_CHECK, H_CLONE, 5));
	/* between its compares (the low half's, then the high half's): both */
	CHECK(hand_sample_in_frame(ss, m, test + PAGE_CHECK + LO_TEST, H_BOTH, 4));
	/* after it: the function's */
	CHECK(hand_sample_in_frame(ss, m, body, H_BOTH, 6));
	/* the test has run: no frame */
	CHECK(hand_sample_in_frame(ss, m, body, H_CLONE, 7));
	const char *folded = hand_report(pm, ss, dir, "tags_dispatch", RP_FOLDED);
	CHECK(folded != NULL);
	if (folded) {
		printf("%s", folded);
		CHECK(strstr(folded, "\nthe_func 9\n") != NULL);
		CHECK(strstr(folded, "\nthe_clone 5\n") != NULL);
		CHECK(strstr(folded, "\nthe_func [ambiguous] 2\n") != NULL);
		CHECK(strstr(folded, "\nthe_clone [ambiguous] 2\n") != NULL);
		CHECK(!strncmp(folded, "[missing: CID not in the pathmap];__icpp_dispatch_fx_tag_leaf (",
			       63));
	}
	pm_free(pm);
	sf_free(ss);
}

int main(int argc, char **argv)
{
	struct bin_module *m = hand_open(argc, argv, "t_report_tags REWRITTEN_PROG_OR_LIB WORKDIR");
	if (!m)
		return 1;
	const struct bin_function *stub = stub_of(m), *thunk = thunk_of(m),
				  *code = hand_function(m, "__icpp_dispatch_fx_tag_leaf"),
				  *veneer = veneer_of(m), *xthunk = xthunk_of(m);
	CHECK(stub || thunk || code || veneer || xthunk);
	if (stub)
		check_stub(m, argv[1], argv[2], stub);
	if (thunk)
		check_thunk(m, argv[1], argv[2], thunk);
	if (code)
		check_dispatch(m, argv[1], argv[2], code);
	if (veneer)
		check_veneer(m, argv[1], argv[2], veneer);
	if (xthunk)
		check_xthunk(m, argv[1], argv[2], xthunk);
	bin_close(m);
	return check_exit();
}
