/* t_report_plt: samples taken in PLT stubs are charged to the callee the stub
 * leads to (report/plt.c), and samples in code another function jumps into
 * may be the jumper's (report/jumps.c).  A pathmap and a sample file are
 * made by hand for plt_prog, whose calls and stubs are found in its code: a
 * sample in the stub of a direct call, one in the stub a tail jump reaches
 * (after the lazy stub pushed its index: CFA = SP + 16), one at a height no
 * trained call has, and one in inside_target's code at the height of a
 * frame of inside_jumper, which jumps there.  The folded output must show
 * exactly those frames. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/binary.h"
#include "collector/samplefile.h"
#include "pathmap/pathmap.h"
#include "report/report.h"
#include "tests/check.h"
#include "tests/record/hand_samples.h"
#include "x86/reloc.h"

enum { H_MAIN = 16, H_GETENV = 64, H_NEXT = 96, H_JUMPER = 48 };

struct prog {
	uint64_t getenv_ret, getenv_stub;   /* main's call getenv@plt */
	uint64_t next_ret;                  /* main's call next_char */
	uint64_t fgetc_stub;                /* next_char's jmp fgetc@plt */
	uint64_t main_addr, next_addr;
	uint64_t inside_target, inside_jumper;
};

/* Each direct call or jmp of function f: cb(insn target, return address). */
static void branches(struct bin_module *m, const struct bin_function *f, struct prog *p, bool in_main)
{
	csh cs;
	CHECK(x86_open(&cs));
	uint8_t code[4096];
	CHECK(f->size <= sizeof(code) && bin_read(m, f->addr, code, f->size) == 0);
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *c = code;
	size_t left = f->size;
	uint64_t at = f->addr;
	while (cs_disasm_iter(cs, &c, &left, &at, insn)) {
		uint64_t t = x86_branch_target(insn);
		bool plt = t && bin_plt_stub(m, t, NULL, NULL);
		if (in_main && insn->id == X86_INS_CALL && plt)
			p->getenv_ret = at, p->getenv_stub = t;
		else if (in_main && insn->id == X86_INS_CALL && t == p->next_addr)
			p->next_ret = at;
		else if (!in_main && insn->id == X86_INS_JMP && plt)
			p->fgetc_stub = t;
	}
	cs_free(insn, 1);
	cs_close(&cs);
}

static struct pathmap *make_pathmap(struct bin_module *m, const char *path, const struct prog *p)
{
	struct pathmap *pm = pm_new();
	const uint8_t *id;
	size_t idlen = bin_build_id(m, &id);
	uint32_t mod = pm_add_module(pm, path, id, (uint32_t)idlen);
	uint32_t libc = pm_add_module(pm, "/nonexistent/libc.so.6", NULL, 0);
	uint32_t f_main = pm_add_function(pm, mod, p->main_addr, 0, "main");
	uint32_t f_next = pm_add_function(pm, mod, p->next_addr, 0, "next_char");
	uint32_t f_getenv = pm_add_function(pm, libc, 0x1000, 0x100, "getenv");
	uint32_t f_fgetc = pm_add_function(pm, libc, 0x2000, 0x100, "fgetc");
	uint32_t root = pm_add_node(pm, PM_NONE, f_main, PM_NONE, 0, H_MAIN, 1);
	pm_add_node(pm, root, f_getenv, mod, p->getenv_ret - 1, H_GETENV, 1);
	/* next_char's own frame and its tail callee's share the call and height. */
	pm_add_node(pm, root, f_next, mod, p->next_ret - 1, H_NEXT, 1);
	pm_add_node(pm, root, f_fgetc, mod, p->next_ret - 1, H_NEXT, 1);
	uint32_t f_target = pm_add_function(pm, mod, p->inside_target, 0, "inside_target");
	uint32_t f_jumper = pm_add_function(pm, mod, p->inside_jumper, 0, "inside_jumper");
	pm_add_node(pm, root, f_target, PM_NONE, 0, H_JUMPER + 16, 1);
	pm_add_node(pm, root, f_jumper, PM_NONE, 0, H_JUMPER, 1);
	return pm;
}

static struct sample_set *make_samples(struct bin_module *m, const char *path, const struct prog *p)
{
	struct sample_set *ss = hand_samples(m, path, "plt_prog", 18);
	CHECK(ss != NULL);
	if (!ss)
		return NULL;
	/* the process maps the pathmap's libc too: its paths are candidates */
	CHECK(hand_map(ss, "/nonexistent/libc.so.6", 0x7f0000000000ULL));
	CHECK(hand_sample(ss, p->getenv_stub + 2, H_GETENV + 8, 0, 0, 3));     /* at its jmp *GOT */
	CHECK(hand_sample(ss, p->fgetc_stub + 11, H_NEXT + 16, 0, 0, 4));      /* index pushed */
	CHECK(hand_sample(ss, p->getenv_stub, H_GETENV + 8 + 32, 0, 0, 5));    /* no such call */
	CHECK(hand_sample(ss, p->inside_target + 2, H_JUMPER + 8, 0, 0, 6));   /* jumped into */
	return ss;
}

int main(int argc, char **argv)
{
	struct bin_module *m = hand_open(argc, argv, "t_report_plt PLT_PROG WORKDIR");
	if (!m)
		return 1;
	struct prog p;
	memset(&p, 0, sizeof(p));
	const struct bin_function *fm = hand_function(m, "main"), *fn = hand_function(m, "next_char");
	CHECK(fm && fn);
	if (!fm || !fn)
		return check_exit();
	const struct bin_function *ft = hand_function(m, "inside_target"), *fj = hand_function(m, "inside_jumper");
	CHECK(ft && fj);
	if (!ft || !fj)
		return check_exit();
	p.main_addr = fm->addr;
	p.next_addr = fn->addr;
	p.inside_target = ft->addr;
	p.inside_jumper = fj->addr;
	branches(m, fm, &p, true);
	branches(m, fn, &p, false);
	CHECK(p.getenv_ret && p.getenv_stub && p.next_ret && p.fgetc_stub);

	struct pathmap *pm = make_pathmap(m, argv[1], &p);
	struct sample_set *ss = make_samples(m, argv[1], &p);
	const char *folded = ss ? hand_report(pm, ss, argv[2], "plt", RP_FOLDED) : NULL;
	CHECK(folded != NULL);
	if (!folded)
		return check_exit();
	printf("%s", folded);
	CHECK(strstr(folded, "main;getenv 3\n") != NULL);
	CHECK(strstr(folded, "main;fgetc 4\n") != NULL);
	CHECK(strstr(folded, "next_char") == NULL);
	CHECK(strstr(folded, " 5\n") != NULL);               /* the missing one */
	CHECK(strstr(folded, "main;inside_jumper 6\n") != NULL);
	CHECK(strstr(folded, "inside_target") == NULL);      /* not at that height */
	pm_free(pm);
	sf_free(ss);
	bin_close(m);
	return check_exit();
}
