/* test_rewrite: the rewriter against fixtures with known answers.
 *
 *   test_rewrite FIXTURE WORKDIR
 *
 * FIXTURE is fx_frames.S + fx_main.c linked (PIE or not).  Checks the
 * feasibility analysis function by function and call by call, then rewrites
 * the fixture with a plan that pads and wraps what it can and checks the
 * output: input untouched, mode bits, program headers, the merged
 * .eh_frame/.eh_frame_hdr (through libdw: CFA rules of padded frames and of
 * trampolines), patched bytes, symbols, build-id and note, and that it runs
 * and prints what the original prints.  Then refusals: plans outside the
 * capability, bad inputs. */
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "binary/binary.h"
#include "disambig/from_pathmap.h"
#include "rewriter/rewriter.h"
#include "tests/check.h"
#include "util/fileio.h"

static const struct rw_func *func(const struct rw_binary *b, const char *name)
{
	size_t n;
	const struct rw_func *f = rw_functions(b, &n);
	for (size_t i = 0; i < n; i++)
		if (f[i].name && !strcmp(f[i].name, name))
			return &f[i];
	fprintf(stderr, "no function %s\n", name);
	exit(1);
}

/* The call in `caller` to `callee` (NULL: indirect), the k-th such. */
static const struct rw_call *nth_call(const struct rw_binary *b, const char *caller,
				      const char *callee, unsigned k)
{
	const struct rw_func *f = func(b, caller);
	size_t n;
	const struct rw_call *c = rw_calls(b, &n);
	for (size_t i = 0; i < n; i++) {
		if (c[i].insn < f->addr || c[i].insn >= f->addr + f->size)
			continue;
		if ((callee ? (c[i].target_name && !strcmp(c[i].target_name, callee))
			    : (!c[i].target && !c[i].slot)) && !k--)
			return &c[i];
	}
	fprintf(stderr, "no call %s -> %s\n", caller, callee ? callee : "*");
	exit(1);
}

static const struct rw_call *call(const struct rw_binary *b, const char *caller, const char *callee)
{
	return nth_call(b, caller, callee, 0);
}

/* rw_write of plan p to out, its error on stderr; 0 when written. */
static int write_checked(struct rw_binary *b, const struct rw_plan *p, const char *out,
			 struct rw_write_stats *st)
{
	char err[512];
	int r = rw_write(b, p, out, st, err, sizeof(err));
	if (r)
		fprintf(stderr, "rw_write: %s\n", err);
	CHECK_EQ_INT(r, 0);
	return r;
}

static uint32_t min_wrap(rw_mask m)
{
	return m > 1 ? (uint32_t)__builtin_ctzll(m & ~1ull) * 16 : 0;
}

/* In place: max is the largest in-place padding (0: refused for why). */
static void check_pad(const struct rw_binary *b, const char *name, enum rw_frame frame,
		      uint32_t max, enum rw_pad_why why)
{
	const struct rw_func *f = func(b, name);
	uint32_t in_place = f->pad_entry ? f->pad_in_place : rw_mask_max(f->pad_mask);
	if (f->frame != frame || in_place != max || f->pad_why != why)
		fprintf(stderr, "  %s: frame %s max %u why %s\n", name, rw_frame_name(f->frame),
			in_place, rw_pad_why_name(f->pad_why));
	CHECK_EQ_INT(f->frame, frame);
	CHECK_EQ_INT(in_place, max);
	CHECK_EQ_INT(f->pad_why, why);
}

/* Through an entry wrapper: why (RW_ENTRY_OK: offered, up to RW_MAX_AMOUNT). */
static void check_entry(const struct rw_binary *b, const char *name, enum rw_entry_why why)
{
	const struct rw_func *f = func(b, name);
	if (f->entry_why != why)
		fprintf(stderr, "  %s: entry wrapper %s\n", name, rw_entry_why_name(f->entry_why));
	CHECK_EQ_INT(f->entry_why, why);
	CHECK_EQ_INT(f->pad_entry, why == RW_ENTRY_OK);
	if (why == RW_ENTRY_OK)
		CHECK_EQ_INT(rw_mask_max(f->pad_mask), RW_MAX_AMOUNT);
}

static void check_analysis(const struct rw_binary *b)
{
	check_pad(b, "fx_leaf", RW_FRAME_NONE, 0, RW_PAD_LEAF);
	check_pad(b, "fx_fp_leave", RW_FRAME_FP, 96, RW_PAD_OK);
	check_pad(b, "fx_fp_add", RW_FRAME_FP, 112, RW_PAD_OK);
	check_pad(b, "fx_fp_imm32", RW_FRAME_FP, RW_MAX_AMOUNT, RW_PAD_OK);
	check_pad(b, "fx_fp_full", RW_FRAME_FP, 0, RW_PAD_IMM_FULL);
	check_pad(b, "fx_sp", RW_FRAME_SP, 80, RW_PAD_OK);
	check_pad(b, "fx_sp_straddle", RW_FRAME_SP, 0, RW_PAD_STRADDLE);
	check_pad(b, "fx_sp_dispfull", RW_FRAME_SP, 0, RW_PAD_DISP_FULL);
	check_pad(b, "fx_sp_endptr", RW_FRAME_SP, 0, RW_PAD_SAVED_ADDR);
	check_pad(b, "fx_noalloc", RW_FRAME_NONE, 0, RW_PAD_NO_ALLOC);
	CHECK_EQ_INT(func(b, "fx_realign")->pad_why, RW_PAD_REALIGN);
	check_pad(b, "fx_fp_vla", RW_FRAME_FP, 96, RW_PAD_OK);
	CHECK_EQ_INT(func(b, "fx_sp_dyn")->pad_why, RW_PAD_DYNAMIC);
	CHECK_EQ_INT(func(b, "fx_call_outside")->pad_why, RW_PAD_CALL_OUTSIDE);
	CHECK_EQ_INT(func(b, "fx_fp_rsplocal")->pad_why, RW_PAD_RSP_LOCALS);
	CHECK_EQ_INT(func(b, "fx_data")->pad_why, RW_PAD_UNDECODABLE);
	CHECK_EQ_INT(func(b, "fx_multi")->pad_why, RW_PAD_MULTI_ALLOC);
	check_pad(b, "fx_pop_release", RW_FRAME_SP, 0, RW_PAD_POP_RELEASE);
	CHECK_EQ_INT(func(b, "fx_pop_release")->clone_why, RW_CLONE_OK);
	CHECK_EQ_INT(func(b, "fx_pop_release")->ncalls, 1);
	check_pad(b, "fx_lock_skip", RW_FRAME_SP, 96, RW_PAD_OK);
	CHECK_EQ_INT(func(b, "fx_lock_skip")->clone_why, RW_CLONE_OK);
	check_pad(b, "fx_jtab_run", RW_FRAME_SP, 96, RW_PAD_OK);
	check_pad(b, "fx_noret_cfi", RW_FRAME_SP, 96, RW_PAD_OK);
	CHECK_EQ_INT(func(b, "fx_noret_cfi")->clone_why, RW_CLONE_OK);
	CHECK_EQ_INT(func(b, "fx_mask")->clone_why, RW_CLONE_OK);   /* AVX-512 mask insns */
	CHECK(func(b, "fx_mask")->dispatch);
	check_pad(b, "fx_calls", RW_FRAME_FP, 80, RW_PAD_OK);
	check_pad(b, "fx_big", RW_FRAME_SP, RW_MAX_AMOUNT, RW_PAD_OK);
	/* entry wrappers where in-place padding is refused for its shape */
	check_entry(b, "fx_fp_full", RW_ENTRY_OK);
	check_entry(b, "fx_sp_straddle", RW_ENTRY_OK);
	check_entry(b, "fx_sp_endptr", RW_ENTRY_OK);
	check_entry(b, "fx_fp_rsplocal", RW_ENTRY_OK);
	check_entry(b, "fx_fp_leave", RW_ENTRY_OK);            /* in place up to 96: beyond */
	CHECK_EQ_INT(func(b, "fx_fp_leave")->pad_in_place, 96);
	check_entry(b, "fx_fp_imm32", RW_ENTRY_IN_PLACE);     /* in place up to the most */
	check_entry(b, "fx_sp", RW_ENTRY_ARGS);               /* up to 80, no wrapper beyond */
	char *ex = NULL;
	size_t exn = 0;
	FILE *exf = open_memstream(&ex, &exn);
	if (exf) {
		rw_explain(b, exf);
		fclose(exf);
	}
	/* --explain says why fx_sp stops at its allocation's room */
	CHECK(ex && strstr(ex, "pad <=80    entry wrapper refused (reaches its return address"));
	free(ex);
	CHECK_EQ_INT(func(b, "fx_fp_full")->pad_in_place, 0);  /* through the wrapper only */
	check_entry(b, "fx_sp_dispfull", RW_ENTRY_ARGS);      /* reads a stack argument */
	check_entry(b, "fx_noalloc", RW_ENTRY_OK);            /* push, then a call it displaces */
	check_entry(b, "fx_multi", RW_ENTRY_OK);              /* starts with a branch */
	check_entry(b, "fx_loophead", RW_ENTRY_DISPLACE);     /* ... back into itself */
	check_entry(b, "fx_pop_release", RW_ENTRY_OK);        /* a tail call: where training */
	CHECK(func(b, "fx_pop_release")->entry_tail);         /* saw none taken (rw_visibility) */
	check_entry(b, "fx_data", RW_ENTRY_SHAPE);
	check_entry(b, "fx_sp_dyn", RW_ENTRY_SHAPE);
	CHECK_EQ_INT(func(b, "fx_calls")->ncalls, 5);
	/* clones: a relative switch table is copied for one (its lea names
	 * the copy; the next table's entries after its own are code, but its
	 * jump is bounded to two), a table whose address no lea names, that is
	 * read as data or that leads out of the function is not; a tail call
	 * through a pointer may be cloned */
	CHECK_EQ_INT(func(b, "fx_switch")->clone_why, RW_CLONE_OK);
	CHECK_EQ_INT(func(b, "fx_jtab_run")->clone_why, RW_CLONE_OK);
	CHECK_EQ_INT(func(b, "fx_switch_loaded")->clone_why, RW_CLONE_INDIRECT_JUMP);
	CHECK_EQ_INT(func(b, "fx_switch_read")->clone_why, RW_CLONE_INDIRECT_JUMP);
	CHECK_EQ_INT(func(b, "fx_switch_out")->clone_why, RW_CLONE_SWITCH_UNBOUNDED);
	/* bounds found by a walk back along every path into the jump: cmp
	 * and ja (or jbe taken), copies, reloads, and the upper half of a
	 * register cleared on every path (fx_frames.S fx_switch_bounded) */
	CHECK_EQ_INT(func(b, "fx_switch_widened")->clone_why, RW_CLONE_OK);
	CHECK_EQ_INT(func(b, "fx_switch_memory")->clone_why, RW_CLONE_OK);
	CHECK_EQ_INT(func(b, "fx_switch_paths")->clone_why, RW_CLONE_OK);
	CHECK_EQ_INT(func(b, "fx_switch_copied")->clone_why, RW_CLONE_OK);
	CHECK_EQ_INT(func(b, "fx_switch_hoisted")->clone_why, RW_CLONE_OK);
	CHECK_EQ_INT(func(b, "fx_switch_rounds")->clone_why, RW_CLONE_OK);
	CHECK_EQ_INT(func(b, "fx_switch_changed")->clone_why, RW_CLONE_SWITCH_UNBOUNDED);
	CHECK_EQ_INT(func(b, "fx_switch_upper")->clone_why, RW_CLONE_SWITCH_UNBOUNDED);
	CHECK_EQ_INT(func(b, "fx_switch_stored")->clone_why, RW_CLONE_SWITCH_UNBOUNDED);
	CHECK_EQ_INT(func(b, "fx_switch_path")->clone_why, RW_CLONE_SWITCH_UNBOUNDED);
	CHECK_EQ_INT(func(b, "fx_switch_copied_changed")->clone_why, RW_CLONE_SWITCH_UNBOUNDED);
	CHECK_EQ_INT(func(b, "fx_switch_unhoisted")->clone_why, RW_CLONE_SWITCH_UNBOUNDED);
	CHECK_EQ_INT(func(b, "fx_tailptr")->clone_why, RW_CLONE_OK);
	CHECK_EQ_INT(func(b, "fx_sp")->alloc, 16);
	/* a .cold owner clones with its one fragment (and dispatches: its entry
	 * allows it); a fragment, two of them or a shared one do not */
	check_pad(b, "fx_owner", RW_FRAME_SP, 80, RW_PAD_OK);
	CHECK_EQ_INT(func(b, "fx_owner")->clone_why, RW_CLONE_OK);
	CHECK(func(b, "fx_owner")->cloneable && func(b, "fx_owner")->dispatch);
	CHECK_EQ_INT(func(b, "fx_owner")->ncalls, 2);
	CHECK_EQ_INT(func(b, "fx_owner.cold")->clone_why, RW_CLONE_FRAGMENT);
	CHECK(!func(b, "fx_owner.cold")->cloneable && !func(b, "fx_owner.cold")->dispatch);
	CHECK_EQ_INT(func(b, "fx_two_frags")->clone_why, RW_CLONE_FRAGMENT);
	CHECK_EQ_INT(func(b, "fx_two_frags.cold")->clone_why, RW_CLONE_FRAGMENT);
	CHECK_EQ_INT(func(b, "fx_two_frags.cold.1")->clone_why, RW_CLONE_FRAGMENT);
	CHECK(!func(b, "fx_two_frags")->dispatch);
	CHECK_EQ_INT(func(b, "fx_shares_a")->clone_why, RW_CLONE_FRAGMENT);   /* owns it */
	/* padding either would change the code and CFI of the other's frame */
	CHECK_EQ_INT(func(b, "fx_shares_a")->pad_mask, 1);
	CHECK_EQ_INT(func(b, "fx_shares_a")->pad_why, RW_PAD_FRAGMENT_SHARED);
	CHECK_EQ_INT(func(b, "fx_shares_b")->pad_why, RW_PAD_FRAGMENT_SHARED);
	CHECK_EQ_INT(func(b, "fx_shares_b")->clone_why, RW_CLONE_ANALYSIS);

	const struct rw_call *c = call(b, "fx_calls", "fx_leaf");
	CHECK_EQ_INT(c->wrap_why, RW_WRAP_OK);
	CHECK_EQ_INT(c->stack_args, 0);
	CHECK_EQ_INT(min_wrap(c->wrap_mask), 16);
	CHECK_EQ_INT(rw_mask_max(c->wrap_mask), RW_MAX_AMOUNT);
	CHECK_EQ_INT(c->site, c->insn + 4);
	c = call(b, "fx_calls", "fx_sp");         /* the callee's bound (16) beats the caller's (32) */
	CHECK_EQ_INT(c->stack_args, 16);
	CHECK_EQ_INT(min_wrap(c->wrap_mask), 32);
	c = call(b, "fx_calls", "fx_va");         /* address taken: the caller's bound */
	CHECK_EQ_INT(c->stack_args, 32);
	CHECK_EQ_INT(min_wrap(c->wrap_mask), 48);
	CHECK_EQ_INT(call(b, "fx_calls", NULL)->wrap_why, RW_WRAP_INDIRECT);
	CHECK_EQ_INT(call(b, "fx_calls", "_setjmp")->wrap_why, RW_WRAP_RETURNS_TWICE);
	CHECK_EQ_INT(call(b, "fx_big", "getpid")->wrap_why, RW_WRAP_ARGS_LARGE);
	CHECK_EQ_INT(call(b, "fx_data", "fx_leaf")->wrap_why, RW_WRAP_CALLER);
	c = call(b, "fx_argpush", "fx_argpush_callee");   /* arguments pushed from rbx, r14 */
	CHECK_EQ_INT(c->wrap_why, RW_WRAP_OK);
	CHECK_EQ_INT(c->args_stored, 24);
	CHECK_EQ_INT(c->stack_args, 16);
	CHECK_EQ_INT(min_wrap(c->wrap_mask), 32);
	int64_t depth = -1;
	CHECK_EQ_INT(bin_saved_depth(rw_module(b), c->insn, &depth), 0);
	CHECK_EQ_INT(depth, 24);                 /* rbx at CFA - 24, r14 at CFA - 16 */
	c = call(b, "fx_cfi_witness", "fx_arg8");  /* r12 pushed unwritten: the CFI says no save */
	CHECK_EQ_INT(bin_saved_depth(rw_module(b), c->insn, &depth), 0);
	CHECK_EQ_INT(depth, 16);
	CHECK_EQ_INT(c->args_stored, 8);
	CHECK_EQ_INT(c->stack_args, 8);
	c = call(b, "fx_fp_vla", "fx_leaf");      /* after a VLA: only the callee bounds it */
	CHECK_EQ_INT(c->wrap_why, RW_WRAP_OK);
	CHECK_EQ_INT(c->stack_args, 0);
	/* a tag needs a call of 5 bytes or more and no returns-twice callee; its
	 * stack arguments do not matter (the stub moves no stack) */
	CHECK(call(b, "fx_calls", "fx_sp")->taggable);
	CHECK(call(b, "fx_big", "getpid")->taggable);
	CHECK(!call(b, "fx_calls", NULL)->taggable);
	CHECK(!call(b, "fx_calls", "_setjmp")->taggable);
	CHECK(!call(b, "fx_data", "fx_leaf")->taggable);
	struct rw_plan tp = {0};
	char terr[512];
	CHECK_EQ_INT(rw_plan_add_tag(&tp, call(b, "fx_calls", NULL)->site, 1, RW_NONE), 0);
	CHECK(rw_plan_check(b, &tp, terr, sizeof(terr)) < 0);
	CHECK(strstr(terr, "cannot be tagged") != NULL);
	tp.tags[0].site = call(b, "fx_calls", "fx_sp")->site;
	CHECK_EQ_INT(rw_plan_check(b, &tp, terr, sizeof(terr)), 0);
	/* the copy of a call in a clone: of the function that makes it */
	tp.tags[0].clone = 0;
	CHECK(rw_plan_check(b, &tp, terr, sizeof(terr)) < 0);       /* no clone 0 */
	CHECK_EQ_INT(rw_plan_add_clone(&tp, func(b, "fx_leaf")->addr, 0, 0, RW_NONE), 0);
	CHECK(rw_plan_check(b, &tp, terr, sizeof(terr)) < 0);
	CHECK(strstr(terr, "does not copy that call") != NULL);
	tp.clones[0].func = func(b, "fx_calls")->addr;
	terr[0] = 0;
	rw_plan_check(b, &tp, terr, sizeof(terr));
	CHECK(!strstr(terr, "does not copy that call"));
	rw_plan_free(&tp);

	struct rw_summary s;
	rw_summarize(b, &s);
	CHECK(s.paddable >= 8);
	CHECK_EQ_INT(s.pad_refused[RW_PAD_STRADDLE], 1);
	CHECK_EQ_INT(s.wrap_refused[RW_WRAP_RETURNS_TWICE], 1);
}

/* ------------------------------------------------------------------ the output */

static void *slurp(const char *path, size_t *n)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return NULL;
	void *p = malloc(st.st_size + 1);
	*n = (size_t)read(fd, p, st.st_size);
	close(fd);
	return p;
}

static int run(const char *cmd, char *out, size_t len)
{
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	size_t n = fread(out, 1, len - 1, p);
	out[n] = 0;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The fixture in prints want for args, and its rewrite out the same. */
static void check_same_output(const char *in, const char *out, const char *args,
			      const char *want)
{
	char cmd[8192], o1[64], o2[64];
	snprintf(cmd, sizeof(cmd), "%s %s", in, args);
	CHECK_EQ_INT(run(cmd, o1, sizeof(o1)), 0);
	snprintf(cmd, sizeof(cmd), "%s %s", out, args);
	CHECK_EQ_INT(run(cmd, o2, sizeof(o2)), 0);
	CHECK_EQ_STR(o1, want);
	CHECK_EQ_STR(o2, o1);
}

static void check_cfa(struct bin_module *m, uint64_t pc, enum bin_cfa_reg reg, int64_t off)
{
	struct bin_cfa r;
	int ok = bin_cfa_at(m, pc, &r);
	CHECK_EQ_INT(ok, 0);
	if (ok == 0 && (r.reg != reg || r.offset != off))
		fprintf(stderr, "  CFA at 0x%llx: reg %d off %lld, want %d %lld\n",
			(unsigned long long)pc, r.reg, (long long)r.offset, reg, (long long)off);
	CHECK(ok == 0 && r.reg == reg && r.offset == off);
}

/* Program headers and sections of the output, through libelf. */
static void check_layout(const char *path, const struct rw_write_stats *st)
{
	int fd = open(path, O_RDONLY);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	GElf_Ehdr eh;
	CHECK(e && gelf_getehdr(e, &eh));
	size_t phnum, shstrndx;
	elf_getphdrnum(e, &phnum);
	elf_getshdrstrndx(e, &shstrndx);
	uint64_t last = 0, phdr_va = 0, eh_va = 0;
	int loads_new = 0;
	bool phdr_in_load = false;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		gelf_getphdr(e, (int)i, &ph);
		if (ph.p_type == PT_LOAD) {
			CHECK(ph.p_vaddr >= last);      /* ascending */
			last = ph.p_vaddr;
			CHECK_EQ_INT(ph.p_vaddr % 4096, ph.p_offset % 4096);
			if (ph.p_vaddr >= st->new_vaddr)
				loads_new++;
			if (eh.e_phoff >= ph.p_offset && eh.e_phoff < ph.p_offset + ph.p_filesz)
				phdr_in_load = true;
		}
		if (ph.p_type == PT_PHDR) {
			phdr_va = ph.p_vaddr;
			CHECK_EQ_INT(ph.p_offset, eh.e_phoff);
			CHECK_EQ_INT(ph.p_filesz, phnum * sizeof(Elf64_Phdr));
		}
		if (ph.p_type == PT_GNU_EH_FRAME)
			eh_va = ph.p_vaddr;
	}
	CHECK_EQ_INT(loads_new, st->wraps ? 2 : 1);
	CHECK(phdr_in_load);
	CHECK(phdr_va >= st->new_vaddr);
	/* sections: the new .eh_frame_hdr is what PT_GNU_EH_FRAME names, sorted */
	bool text = false, hdr = false, old = false;
	for (Elf_Scn *s = NULL; (s = elf_nextscn(e, s));) {
		GElf_Shdr sh;
		gelf_getshdr(s, &sh);
		const char *n = elf_strptr(e, shstrndx, sh.sh_name);
		if (!strcmp(n, ".icpp.text"))
			text = (sh.sh_flags & SHF_EXECINSTR) && sh.sh_addr == st->new_vaddr;
		if (!strcmp(n, ".icpp.old.eh_frame"))
			old = true;
		if (!strcmp(n, ".eh_frame_hdr")) {
			hdr = sh.sh_addr == eh_va;
			Elf_Data *d = elf_rawdata(s, NULL);
			const uint8_t *p = d->d_buf;
			uint32_t cnt;
			memcpy(&cnt, p + 8, 4);
			CHECK(cnt > 10 && 12 + 8ull * cnt == d->d_size);
			int32_t prev = INT32_MIN;
			for (uint32_t k = 0; k < cnt; k++) {
				int32_t pc;
				memcpy(&pc, p + 12 + 8 * k, 4);
				CHECK(pc > prev);
				prev = pc;
			}
		}
	}
	CHECK(text == (st->wraps > 0));
	CHECK(hdr);
	CHECK(old);
	elf_end(e);
	close(fd);
}

/* A note of another layout (a file rewritten by another icpp) is refused,
 * saying so; one whose layout is unknown too, as damaged. */
static void check_note_layout(const char *rewritten, const char *dir)
{
	static const char desc_start[] = "icpp\0\0\0\0";      /* the name, padded to 4 */
	char other[4200], err[512];
	void *buf;
	size_t len;
	CHECK_EQ_INT(read_file(rewritten, &buf, &len, err, sizeof(err)), 0);
	uint8_t *at = memmem(buf, len, desc_start, 8);
	CHECK(at != NULL);
	if (!at) {
		free(buf);
		return;
	}
	uint32_t v;
	memcpy(&v, at + 8, 4);
	CHECK_EQ_INT(v, RW_NOTE_VERSION);
	snprintf(other, sizeof(other), "%s/other-layout", dir);
	struct rw_note note;
	for (uint32_t layout = RW_NOTE_VERSION - 1; layout <= RW_NOTE_VERSION + 1; layout += 2) {
		memcpy(at + 8, &layout, 4);
		FILE *f = fopen(other, "wb");
		CHECK(f && fwrite(buf, 1, len, f) == len && fclose(f) == 0);
		CHECK_EQ_INT(rw_note_read(other, &note, err, sizeof(err)), -1);
		CHECK(strstr(err, "was rewritten by another icpp"));
		CHECK(strstr(err, "rewrite it again"));
	}
	memset(at + 8, 0xff, 4);
	FILE *f = fopen(other, "wb");
	CHECK(f && fwrite(buf, 1, len, f) == len && fclose(f) == 0);
	CHECK_EQ_INT(rw_note_read(other, &note, err, sizeof(err)), -1);
	CHECK(strstr(err, "its icpp note is corrupt"));
	free(buf);
}

static void check_output(const char *in, const char *out, struct rw_binary *b)
{
	const struct rw_func *leave = func(b, "fx_fp_leave"), *sp = func(b, "fx_sp");
	const struct rw_func *calls = func(b, "fx_calls"), *add = func(b, "fx_fp_add");
	const struct rw_call *c_sp = call(b, "fx_calls", "fx_sp");
	const struct rw_call *c_leaf = call(b, "fx_calls", "fx_leaf");
	struct rw_plan p = {0};
	CHECK_EQ_INT(rw_plan_add(&p, false, leave->addr, 32), 0);
	CHECK_EQ_INT(rw_plan_add(&p, false, sp->addr, 16), 0);
	CHECK_EQ_INT(rw_plan_add(&p, false, add->addr, 112), 0);
	CHECK_EQ_INT(rw_plan_add(&p, false, calls->addr, 48), 0);
	CHECK_EQ_INT(rw_plan_add(&p, true, c_sp->site, 48), 0);
	CHECK_EQ_INT(rw_plan_add(&p, true, c_leaf->site, 16), 0);
	size_t n0, n1;
	void *before = slurp(in, &n0);
	struct stat sin, sout;
	stat(in, &sin);
	char err[512];
	struct rw_write_stats st;
	int r = rw_write(b, &p, out, &st, err, sizeof(err));
	if (r) {
		fprintf(stderr, "rw_write: %s\n", err);
		CHECK_EQ_INT(r, 0);
		return;
	}
	void *after = slurp(in, &n1);
	CHECK(n0 == n1 && !memcmp(before, after, n0));        /* input untouched */
	free(before);
	free(after);
	stat(out, &sout);
	CHECK_EQ_INT(sout.st_mode & 0777, sin.st_mode & 0777);
	CHECK_EQ_INT(st.pads, 4);
	CHECK_EQ_INT(st.wraps, 2);
	check_layout(out, &st);

	char e2[512];
	struct bin_module *m = bin_open(out, e2, sizeof(e2));
	CHECK(m != NULL);
	if (!m)
		return;
	/* patched immediates */
	uint8_t buf[8];
	CHECK_EQ_INT(bin_read(m, leave->addr + 4 + 3, buf, 1), 0);   /* sub $16 -> $48 */
	CHECK_EQ_INT(buf[0], 48);
	/* fx_sp: sub 16 -> 32, disp 40 -> 56, CFA offset 32 -> 48 inside */
	CHECK_EQ_INT(bin_read(m, sp->addr + 1 + 3, buf, 1), 0);
	CHECK_EQ_INT(buf[0], 32);
	CHECK_EQ_INT(bin_read(m, sp->addr + 5 + 4, buf, 1), 0);
	CHECK_EQ_INT(buf[0], 56);
	check_cfa(m, sp->addr, BIN_CFA_RSP, 8);
	check_cfa(m, sp->addr + 1, BIN_CFA_RSP, 16);
	check_cfa(m, sp->addr + 5, BIN_CFA_RSP, 48);
	check_cfa(m, leave->addr + 8, BIN_CFA_RBP, 16);
	/* the wrapped call goes to a trampoline with its own FDE and symbol */
	CHECK_EQ_INT(bin_read(m, c_sp->insn, buf, 5), 0);
	CHECK_EQ_INT(buf[0], 0xe8);
	int32_t rel;
	memcpy(&rel, buf + 1, 4);
	uint64_t tramp = c_sp->insn + 5 + (int64_t)rel;
	CHECK_EQ_INT(tramp, st.new_vaddr + 16 * (c_leaf->site > c_sp->site));
	const struct bin_function *tf = bin_function_at(m, tramp);
	CHECK(tf && tf->addr == tramp && tf->name && !strncmp(tf->name, "__icpp_wrap_", 12));
	check_cfa(m, tramp, BIN_CFA_RSP, 8);
	check_cfa(m, tramp + 5, BIN_CFA_RSP, 8 + 48 - 8 - 16);      /* after lea */
	check_cfa(m, tramp + 9, BIN_CFA_RSP, 40);   /* after each push of a stack argument */
	check_cfa(m, tramp + 13, BIN_CFA_RSP, 48);
	check_cfa(m, tramp + tf->size - 1, BIN_CFA_RSP, 8);          /* at ret */
	/* build-id: new, and the note names the old one */
	const uint8_t *id_out, *id_in;
	size_t lo = bin_build_id(m, &id_out), li = bin_build_id(rw_module(b), &id_in);
	CHECK(lo == 20 && li == 20 && memcmp(id_out, id_in, 20));
	CHECK(!memcmp(id_out, st.build_id, 20));
	struct rw_note note;
	CHECK_EQ_INT(rw_note_read(out, &note, e2, sizeof(e2)), 0);
	CHECK(note.orig_id_len == 20 && !memcmp(note.orig_id, id_in, 20));
	CHECK_EQ_INT(note.nwraps, 2);
	CHECK(note.plan && strstr(note.plan, "icpp-plan 1"));
	struct rw_plan back;
	CHECK_EQ_INT(rw_plan_parse(note.plan, strlen(note.plan), &back, e2, sizeof(e2)), 0);
	CHECK_EQ_INT(back.npads, 4);
	CHECK_EQ_INT(back.nwraps, 2);
	rw_plan_free(&back);
	rw_note_free(&note);
	CHECK_EQ_INT(rw_note_read(in, &note, e2, sizeof(e2)), 1);  /* the input has none */
	bin_close(m);

	/* it runs and computes what the original computes */
	check_same_output(in, out, "7", "203\n");
	/* same plan, same build-id */
	char out2[4200];
	snprintf(out2, sizeof(out2), "%s.again", out);
	struct rw_write_stats st2;
	CHECK_EQ_INT(rw_write(b, &p, out2, &st2, err, sizeof(err)), 0);
	CHECK(!memcmp(st.build_id, st2.build_id, 20));
	rw_plan_free(&p);
}

/* fx_argpush's call wrapped by the least it allows: the trampoline copies
 * the 16 bytes of stack arguments its callee adds up (copying none, it
 * returned the trampoline's padding plus a return address). */
static void check_argpush_run(const char *in, const char *dir, struct rw_binary *b)
{
	const struct rw_call *c = call(b, "fx_argpush", "fx_argpush_callee");
	struct rw_plan p = {0};
	CHECK_EQ_INT(rw_plan_add(&p, true, c->site, min_wrap(c->wrap_mask)), 0);
	char out[4200], err[512];
	snprintf(out, sizeof(out), "%s/fx.argpush.rw", dir);
	struct rw_write_stats st;
	CHECK_EQ_INT(rw_write(b, &p, out, &st, err, sizeof(err)), 0);
	CHECK_EQ_INT(st.wraps, 1);
	check_same_output(in, out, "5 9", "14\n");
	rw_plan_free(&p);
}

/* The target of the rel32 branch at addr whose opcode has nop bytes. */
static uint64_t branch_target(struct bin_module *m, uint64_t addr, int nop)
{
	uint8_t buf[6];
	int32_t rel;
	if (bin_read(m, addr, buf, (size_t)nop + 4) < 0)
		return 0;
	memcpy(&rel, buf + nop, 4);
	return addr + (uint64_t)nop + 4 + (uint64_t)(int64_t)rel;
}

/* The offset in [at, at + size) of m of the first rel32 branch with opcode
 * op (nop bytes) into [lo, hi), or -1. */
static int64_t find_branch(struct bin_module *m, uint64_t at, uint64_t size, const uint8_t *op,
			   int nop, uint64_t lo, uint64_t hi)
{
	for (uint64_t o = 0; o + (uint64_t)nop + 4 <= size; o++) {
		uint8_t buf[2];
		uint64_t t = branch_target(m, at + o, nop);
		if (bin_read(m, at + o, buf, (size_t)nop) == 0 && !memcmp(buf, op, (size_t)nop) &&
		    t >= lo && t < hi)
			return (int64_t)o;
	}
	return -1;
}

/* New code lays the clones out by the entries training saw each take, the
 * heaviest first, a chain's clone after its parent: clone 2 (fx_leaf for
 * the copy of fx_sp's call in clone 0) is the heaviest, so clone 0 comes
 * first, then clone 2, then clone 1 (heavier than clone 0). */
/* Clones 0: fx_sp for fx_calls' call (entered once), 1: fx_fp_leave for
 * fx_run's (50 times), 2: fx_leaf for the copy of fx_sp's call in clone 0 (a
 * chain, 100 times), added to p; false (p freed) when one is refused. */
static bool three_clones(struct rw_binary *b, struct rw_plan *p)
{
	CHECK_EQ_INT(rw_plan_add_clone(p, func(b, "fx_sp")->addr, call(b, "fx_calls", "fx_sp")->site,
				       0, RW_NONE), 0);
	CHECK_EQ_INT(rw_plan_add_clone(p, func(b, "fx_fp_leave")->addr,
				       call(b, "fx_run", "fx_fp_leave")->site, 0, RW_NONE), 0);
	CHECK_EQ_INT(rw_plan_add_clone(p, func(b, "fx_leaf")->addr, call(b, "fx_sp", "fx_leaf")->site,
				       0, 0), 0);
	if (p->nclones != 3) {
		rw_plan_free(p);
		return false;
	}
	p->clones[0].weight = 1;
	p->clones[1].weight = 50;
	p->clones[2].weight = 100;
	return true;
}

/* The trampoline serving site in note n, or NULL. */
static const struct rw_note_wrap *tramp_of(const struct rw_note *n, uint64_t site)
{
	for (uint32_t i = 0; i < n->nwraps; i++)
		if (n->wraps[i].site == site)
			return &n->wraps[i];
	return NULL;
}

/* The layout by heat (rewriter.h section 2): at hot_entries 50, clones 2
 * (100) and 1 (50) and the trampoline of a call entered 80 times are hot,
 * laid out before clone 0 (1) and the trampoline of a call never entered;
 * the chain's call, the copy in cold clone 0, is pointed at hot clone 2. */
static void check_hot_layout(const char *dir, struct rw_binary *b)
{
	const struct rw_call *c_sp = call(b, "fx_calls", "fx_sp");
	const struct rw_call *c_leaf = call(b, "fx_calls", "fx_leaf");
	struct rw_plan p = {0};
	if (!three_clones(b, &p))
		return;
	CHECK_EQ_INT(rw_plan_add(&p, true, c_leaf->site, min_wrap(c_leaf->wrap_mask)), 0);
	CHECK_EQ_INT(rw_plan_add(&p, true, c_sp->site, min_wrap(c_sp->wrap_mask)), 0);
	CHECK_EQ_INT(rw_plan_add_heat(&p, c_leaf->site, 80), 0);
	CHECK_EQ_INT(rw_plan_add_heat(&p, c_sp->site, 0), 0);
	char out[4200], err[512];
	CHECK_EQ_INT(rw_plan_sort(&p, err, sizeof(err)), 0);
	CHECK(rw_plan_heat_of(&p, c_leaf->site) == 80 && rw_plan_heat_of(&p, c_leaf->site + 1) == 0);
	p.hot_entries = 50;
	snprintf(out, sizeof(out), "%s/fx.hot", dir);
	struct rw_write_stats st;
	int r = write_checked(b, &p, out, &st);
	struct rw_note n;
	CHECK_EQ_INT(r == 0 ? rw_note_read(out, &n, err, sizeof(err)) : -1, 0);
	if (r == 0 && n.nclones == 3) {
		const struct rw_note_wrap *hot = tramp_of(&n, c_leaf->site), *cold = tramp_of(&n, c_sp->site);
		CHECK(hot && cold);
		if (hot && cold)
			CHECK(n.clones[2].addr < n.clones[1].addr && n.clones[1].addr < hot->tramp &&
			      hot->tramp < n.clones[0].addr && n.clones[0].addr < cold->tramp);
		CHECK(n.clones[2].site > n.clones[0].addr &&
		      n.clones[2].site < n.clones[0].addr + n.clones[0].size);
		rw_note_free(&n);
	} else {
		CHECK(0);
	}
	/* the same plan laid out in one stream is another file, so it has
	 * another build-id: training keeps its analysis of a module by build-id
	 * (with the same id, it hooked the hot layout's entries in the other) */
	char flat[4200];
	snprintf(flat, sizeof(flat), "%s/fx.flat", dir);
	p.hot_entries = 0;
	if (write_checked(b, &p, flat, &st) == 0 && r == 0) {
		struct bin_module *a = bin_open(out, err, sizeof(err)), *f = bin_open(flat, err, sizeof(err));
		const uint8_t *ida = NULL, *idf = NULL;
		size_t la = a ? bin_build_id(a, &ida) : 0, lf = f ? bin_build_id(f, &idf) : 0;
		CHECK(la == 20 && lf == 20 && memcmp(ida, idf, 20) != 0);
		if (a)
			bin_close(a);
		if (f)
			bin_close(f);
	}
	/* one key, two heats: refused */
	CHECK_EQ_INT(rw_plan_add_heat(&p, c_leaf->site, 3), 0);
	CHECK(rw_plan_sort(&p, err, sizeof(err)) < 0 && strstr(err, "two heats"));
	rw_plan_free(&p);
}

static void check_clone_order(const char *dir, struct rw_binary *b)
{
	struct rw_plan p = {0};
	if (!three_clones(b, &p))
		return;
	char out[4200], err[512];
	snprintf(out, sizeof(out), "%s/fx.order", dir);
	struct rw_write_stats st;
	int r = write_checked(b, &p, out, &st);
	rw_plan_free(&p);
	struct rw_note note;
	CHECK_EQ_INT(r == 0 ? rw_note_read(out, &note, err, sizeof(err)) : -1, 0);
	if (r == 0 && note.nclones == 3) {
		CHECK(note.clones[0].addr < note.clones[2].addr);
		CHECK(note.clones[2].addr < note.clones[1].addr);
		/* the chain's call is the copy in clone 0, wherever that lies */
		CHECK(note.clones[2].site > note.clones[0].addr &&
		      note.clones[2].site < note.clones[0].addr + note.clones[0].size);
	} else {
		CHECK(0);
	}
	if (r == 0)
		rw_note_free(&note);
	check_hot_layout(dir, b);
}

/* A clone of the .cold owner fx_owner, padded by 16, for fx_run's call that
 * takes its fragment: the copies, their jumps into each other, the padding
 * edit in the fragment's copy, their FDEs, symbols and note, and the run. */
static void check_clone_fragment(const char *in, const char *dir, struct rw_binary *b)
{
	static const uint8_t js[] = {0x0f, 0x88}, jmp[] = {0xe9};
	const struct rw_func *owner = func(b, "fx_owner"), *frag = func(b, "fx_owner.cold");
	const struct rw_call *c = nth_call(b, "fx_run", "fx_owner", 1);
	struct bin_module *orig = rw_module(b);
	int64_t js_at = find_branch(orig, owner->addr, owner->size, js, 2, frag->addr, frag->addr + 1);
	int64_t back_at = find_branch(orig, frag->addr, frag->size, jmp, 1, owner->addr,
				      owner->addr + owner->size);
	CHECK(js_at >= 0 && back_at >= 0);
	uint64_t back = branch_target(orig, frag->addr + (uint64_t)back_at, 1);

	struct rw_plan p = {0};
	CHECK_EQ_INT(rw_plan_add_clone(&p, owner->addr, c->site, 16, RW_NONE), 0);
	char out[4200], err[512];
	/* chains refused: of a call the clone's function does not make, of a
	 * clone that does not come earlier */
	struct rw_plan q = {0};
	CHECK_EQ_INT(rw_plan_add_clone(&q, owner->addr, c->site, 16, RW_NONE), 0);
	CHECK_EQ_INT(rw_plan_add_clone(&q, owner->addr, c->site, 0, 0), 0);
	CHECK(rw_plan_check(b, &q, err, sizeof(err)) < 0);
	CHECK(strstr(err, "does not make that call") != NULL);
	q.clones[1].parent = 1;
	CHECK(rw_plan_check(b, &q, err, sizeof(err)) < 0);
	CHECK(strstr(err, "not an earlier clone") != NULL);
	rw_plan_free(&q);
	snprintf(out, sizeof(out), "%s/fx.clone", dir);
	struct rw_write_stats st;
	int r = write_checked(b, &p, out, &st);
	CHECK_EQ_INT(st.clones, 1);
	rw_plan_free(&p);
	struct rw_note note;
	CHECK_EQ_INT(rw_note_read(out, &note, err, sizeof(err)), 0);
	CHECK_EQ_INT(note.nclones, 1);
	struct bin_module *m = r == 0 && note.nclones == 1 ? bin_open(out, err, sizeof(err)) : NULL;
	CHECK(m != NULL);
	if (!m || js_at < 0 || back_at < 0) {
		rw_note_free(&note);
		return;
	}
	const struct rw_note_clone *cl = &note.clones[0];
	CHECK_EQ_INT(cl->func, owner->addr);
	CHECK_EQ_INT(cl->size, owner->size);
	CHECK_EQ_INT(cl->frag_func, frag->addr);
	CHECK_EQ_INT(cl->frag_size, frag->size);
	CHECK_EQ_INT(cl->frag_addr, (cl->addr + cl->size + 15) & ~15ull);
	/* the owner's copy jumps to the fragment's copy, which jumps back into it */
	CHECK_EQ_INT(branch_target(m, cl->addr + (uint64_t)js_at, 2), cl->frag_addr);
	CHECK_EQ_INT(branch_target(m, cl->frag_addr + (uint64_t)back_at, 1),
		     cl->addr + (back - owner->addr));
	/* padded by 16: the fragment's copy reads s at 48(%rsp), the original
	 * at 32(%rsp); the copies' CFA is 16 deeper, the originals' is not */
	static const uint8_t add_s[] = {0x48, 0x03, 0x44, 0x24};
	uint8_t bytes[5];
	int64_t at = -1;
	for (uint64_t o = 0; at < 0 && o + 5 <= frag->size; o++)
		if (bin_read(orig, frag->addr + o, bytes, 5) == 0 && !memcmp(bytes, add_s, 4))
			at = (int64_t)o;
	CHECK(at >= 0 && bytes[4] == 32);
	CHECK_EQ_INT(bin_read(m, cl->frag_addr + (uint64_t)at, bytes, 5), 0);
	CHECK(!memcmp(bytes, add_s, 4) && bytes[4] == 48);
	CHECK_EQ_INT(bin_read(m, frag->addr + (uint64_t)at, bytes, 5), 0);
	CHECK_EQ_INT(bytes[4], 32);
	check_cfa(m, cl->frag_addr, BIN_CFA_RSP, 48);
	check_cfa(m, frag->addr, BIN_CFA_RSP, 32);
	check_cfa(m, cl->addr + (uint64_t)js_at, BIN_CFA_RSP, 48);
	check_cfa(m, owner->addr + (uint64_t)js_at, BIN_CFA_RSP, 32);
	/* symbols: the owner's copy and the fragment's, suffix kept */
	const struct bin_function *fc = bin_function_at(m, cl->addr);
	const struct bin_function *gc = bin_function_at(m, cl->frag_addr);
	CHECK(fc && fc->addr == cl->addr && fc->name && !strcmp(fc->name, "__icpp_clone_0_fx_owner"));
	CHECK(gc && gc->addr == cl->frag_addr && gc->size == frag->size && gc->name &&
	      !strcmp(gc->name, "__icpp_clone_0_fx_owner.cold"));
	bin_close(m);
	rw_note_free(&note);
	/* it runs through both copies and computes what the original computes */
	char cmd[8192], o1[64], o2[64];
	snprintf(cmd, sizeof(cmd), "%s 7", in);
	CHECK_EQ_INT(run(cmd, o1, sizeof(o1)), 0);
	snprintf(cmd, sizeof(cmd), "%s 7", out);
	CHECK_EQ_INT(run(cmd, o2, sizeof(o2)), 0);
	CHECK_EQ_STR(o2, o1);
}

/* rw_place_clones on a prediction that names clone 0 of f at 16 and the
 * copy of its fragment f.cold at 24 (added first: mapped by address, not by
 * order): both go where the note puts them, named like their symbols, and a
 * frame called from either copy takes the callsite of the copy.  Clone 1,
 * of g in a library rewritten with the program, goes where the library's
 * note puts its clone 0 (icpp rewrite --lib).  A copy of a fragment the note
 * lacks is an error. */
static void check_place_clones(void)
{
	static const uint8_t id[20] = {1}, lib_id[20] = {2};
	struct pathmap *pred = pm_new();
	uint32_t m = pm_add_module(pred, "/prog.rw", id, 20);
	uint32_t lm = pm_add_module(pred, "/lib.so.rw", lib_id, 20);
	uint32_t cm = pm_add_module(pred, DA_CLONES_MODULE, NULL, 0);
	uint32_t fmain = pm_add_function(pred, m, 0x1000, 0x100, "main");
	pm_add_function(pred, m, 0x2000, 0x80, "f");
	pm_add_function(pred, m, 0x3000, 0x20, "f.cold");
	uint32_t leaf = pm_add_function(pred, m, 0x4000, 0x10, "leaf");
	pm_add_function(pred, lm, 0x5000, 0x40, "g");
	uint32_t frag_copy = pm_add_function(pred, cm, 24, 0x20, "f.cold.icpp_clone.0");
	uint32_t clone = pm_add_function(pred, cm, 16, 0x80, "f.icpp_clone.0");
	uint32_t gclone = pm_add_function(pred, cm, 32, 0x40, "g.icpp_clone.1");
	uint32_t root = pm_add_node(pred, PM_NONE, fmain, PM_NONE, 0, 16, 1);
	uint32_t nf = pm_add_node(pred, root, clone, m, 0x100f, 64, 1);
	uint32_t nfrag = pm_add_node(pred, nf, frag_copy, PM_NONE, 0, 64, 1);
	uint32_t from_frag = pm_add_node(pred, nfrag, leaf, m, 0x3008, 80, 1);
	uint32_t from_f = pm_add_node(pred, nf, leaf, m, 0x2010, 80, 1);
	uint32_t ng = pm_add_node(pred, root, gclone, m, 0x1020, 64, 1);
	uint32_t from_g = pm_add_node(pred, ng, leaf, lm, 0x5010, 96, 1);
	struct rw_note_clone c = {.addr = 0x9000, .size = 0x80, .func = 0x2000, .site = 0x100f,
				  .frag_addr = 0x9080, .frag_size = 0x20, .frag_func = 0x3000};
	struct rw_note_clone gc_note = {.addr = 0x7000, .size = 0x40, .func = 0x5000, .site = 0x1020};
	struct rw_note note = {.clones = &c, .nclones = 1};
	struct rw_note lib_note = {.clones = &gc_note, .nclones = 1};
	struct rw_placement pl[2] = {{m, &note, 0}, {lm, &lib_note, 1}};
	struct pathmap *out = NULL;
	char err[512];
	CHECK_EQ_INT(rw_place_clones(pred, pl, 2, &out, err, sizeof(err)), 0);
	CHECK(out != NULL && out->nmodules == 2 && out->nnodes == pred->nnodes);
	if (out && out->nfuncs == pred->nfuncs) {
		const struct pm_function *fc = &out->funcs[clone], *gc = &out->funcs[frag_copy];
		const struct pm_function *lc = &out->funcs[gclone];
		CHECK(fc->module == m && fc->addr == 0x9000 && fc->size == 0x80);
		CHECK_EQ_STR(fc->name, "__icpp_clone_0_f");
		CHECK(gc->module == m && gc->addr == 0x9080 && gc->size == 0x20);
		CHECK_EQ_STR(gc->name, "__icpp_clone_0_f.cold");
		CHECK(lc->module == lm && lc->addr == 0x7000 && lc->size == 0x40);
		CHECK_EQ_STR(lc->name, "__icpp_clone_0_g");
		CHECK_EQ_INT(out->nodes[nf].cs_addr, 0x100f);
		CHECK_EQ_INT(out->nodes[from_frag].cs_addr, 0x9088);
		CHECK_EQ_INT(out->nodes[from_f].cs_addr, 0x9010);
		CHECK_EQ_INT(out->nodes[from_g].cs_addr, 0x7010);
		CHECK_EQ_INT(out->nodes[from_frag].height, 80);
	}
	pm_free(out);
	/* without the library's note, its clone has no place */
	CHECK_EQ_INT(rw_place_clones(pred, pl, 1, &out, err, sizeof(err)), -1);
	CHECK(strstr(err, "clone 1") != NULL);
	c.frag_addr = c.frag_size = c.frag_func = 0;
	CHECK_EQ_INT(rw_place_clones(pred, pl, 2, &out, err, sizeof(err)), -1);
	CHECK(strstr(err, "clone 0's fragment") != NULL);
	pm_free(pred);
}

/* A tagged trampoline whose first instruction is short (a call copying one
 * 8-byte stack argument, W 16: push 8(%rsp), 4 bytes): icpp train's hook
 * moves the whole instructions covering the first 5 bytes, so the tag must
 * start past them, else the callee's dispatch misses it under training. */
static void check_tagged_trampoline(const char *dir, struct rw_binary *b)
{
	const struct rw_call *c = call(b, "fx_arg8_caller", "fx_arg8");
	CHECK_EQ_INT(c->stack_args, 8);
	CHECK_EQ_INT(min_wrap(c->wrap_mask), 16);
	char out[4096], err[512];
	snprintf(out, sizeof(out), "%s/tagged", dir);
	struct rw_plan p = {0};
	const uint64_t tag = 0x8877665544332211ull;
	CHECK_EQ_INT(rw_plan_add(&p, true, c->site, 16), 0);
	CHECK_EQ_INT(rw_plan_add_tag(&p, c->site, tag, RW_NONE), 0);
	struct rw_write_stats st;
	int r = write_checked(b, &p, out, &st);
	rw_plan_free(&p);
	struct bin_module *m = r ? NULL : bin_open(out, err, sizeof(err));
	CHECK(m != NULL);
	if (!m)
		return;
	uint8_t buf[32];
	int32_t rel;
	CHECK_EQ_INT(bin_read(m, c->insn, buf, 5), 0);
	CHECK_EQ_INT(buf[0], 0xe8);
	memcpy(&rel, buf + 1, 4);
	uint64_t tramp = c->insn + 5 + (int64_t)rel;
	CHECK_EQ_INT(bin_read(m, tramp, buf, sizeof(buf)), 0);
	/* the tag's first nopl: 0f 1f 80, then its low 32 bits */
	const uint8_t lo[] = {0x0f, 0x1f, 0x80, 0x11, 0x22, 0x33, 0x44};
	int at = -1;
	for (int i = 0; i + (int)sizeof(lo) <= (int)sizeof(buf) && at < 0; i++)
		if (!memcmp(buf + i, lo, sizeof(lo)))
			at = i;
	CHECK(at >= 5);
	check_cfa(m, tramp, BIN_CFA_RSP, 8);
	check_cfa(m, tramp + (uint64_t)at, BIN_CFA_RSP, 16);   /* after the push */
	bin_close(m);
}

static void check_refusals(const char *in, const char *dir, struct rw_binary *b)
{
	char out[4096], err[512];
	snprintf(out, sizeof(out), "%s/refused", dir);
	unlink(out);
	struct rw_write_stats st;
	struct rw_plan p = {0};
	rw_plan_add(&p, false, func(b, "fx_sp")->addr, 96);         /* over 80, no wrapper */
	CHECK_EQ_INT(rw_write(b, &p, out, &st, err, sizeof(err)), -1);
	CHECK(strstr(err, "at most 80"));
	rw_plan_free(&p);
	/* fx_fp_leave pads in place up to 96, beyond through its entry
	 * wrapper, which a clone has not */
	rw_plan_add_clone(&p, func(b, "fx_fp_leave")->addr, call(b, "fx_run", "fx_fp_leave")->site,
			  112, RW_NONE);
	CHECK_EQ_INT(rw_write(b, &p, out, &st, err, sizeof(err)), -1);
	CHECK(strstr(err, "only an entry wrapper makes"));
	rw_plan_free(&p);
	rw_plan_add(&p, false, func(b, "fx_sp_dispfull")->addr, 16);  /* nor by an entry wrapper */
	CHECK_EQ_INT(rw_write(b, &p, out, &st, err, sizeof(err)), -1);
	CHECK(strstr(err, "cannot be padded"));
	rw_plan_free(&p);
	rw_plan_add(&p, true, call(b, "fx_calls", "fx_sp")->site, 16);   /* needs 32 */
	CHECK_EQ_INT(rw_write(b, &p, out, &st, err, sizeof(err)), -1);
	rw_plan_free(&p);
	rw_plan_add(&p, true, call(b, "fx_calls", "_setjmp")->site, 16);
	CHECK_EQ_INT(rw_write(b, &p, out, &st, err, sizeof(err)), -1);
	CHECK(strstr(err, "returns-twice"));
	rw_plan_free(&p);
	rw_plan_add(&p, true, 0x12345, 16);                         /* no callsite */
	CHECK_EQ_INT(rw_write(b, &p, out, &st, err, sizeof(err)), -1);
	rw_plan_free(&p);
	CHECK(access(out, F_OK) != 0);                              /* nothing written */
	for (uint32_t amount = 96; amount <= 112; amount += 16) {
		rw_plan_add(&p, false, func(b, "fx_fp_leave")->addr, amount);
		CHECK_EQ_INT(rw_write(b, &p, out, &st, err, sizeof(err)), 0);
		CHECK_EQ_INT(st.entry_pads, amount > 96);     /* 112: by the wrapper */
		struct bin_module *m = bin_open(out, err, sizeof(err));
		/* in place: sub $16 -> $112; by the wrapper: jmp T over its
		 * first instructions (push, mov, sub), the rest int3 */
		uint8_t code[8] = {0};
		CHECK(m && bin_read(m, func(b, "fx_fp_leave")->addr, code, 8) == 0);
		if (amount > 96)
			CHECK(code[0] == 0xe9 && code[7] == 0xcc);
		else
			CHECK_EQ_INT(code[7], 16 + 96);
		if (m)
			bin_close(m);
		rw_plan_free(&p);
		unlink(out);
	}
	/* bad inputs */
	CHECK(rw_open("/nonexistent/prog", err, sizeof(err)) == NULL);
	CHECK(strstr(err, "/nonexistent/prog") != NULL);
	char txt[4096];
	snprintf(txt, sizeof(txt), "%s/not-elf", dir);
	FILE *f = fopen(txt, "w");
	fputs("#!/bin/sh\necho hi\n", f);
	fclose(f);
	CHECK(rw_open(txt, err, sizeof(err)) == NULL);
	CHECK(strstr(err, "not") != NULL);
	/* plan text */
	const char *bad = "icpp-plan 1\npad 0x10 24\n";
	CHECK_EQ_INT(rw_plan_parse(bad, strlen(bad), &p, err, sizeof(err)), -1);
	const char *dup = "icpp-plan 1\npad 0x10 16\npad 0x10 32\n";
	CHECK_EQ_INT(rw_plan_parse(dup, strlen(dup), &p, err, sizeof(err)), -1);
	const char *good = "# a plan\nicpp-plan 1\n\npad 0x20 32 # f\nwrap 0x10 16\n";
	CHECK_EQ_INT(rw_plan_parse(good, strlen(good), &p, err, sizeof(err)), 0);
	CHECK(p.npads == 1 && p.pads[0].addr == 0x20 && p.pads[0].bytes == 32);
	CHECK(p.nwraps == 1 && p.wraps[0].addr == 0x10);
	rw_plan_free(&p);
	/* clones: a chain names an earlier clone; nothing else may follow PAD */
	const char *chain = "icpp-plan 1\nclone 0x20 0x10 0\nclone 0x30 0x24 16 in 0\n";
	CHECK_EQ_INT(rw_plan_parse(chain, strlen(chain), &p, err, sizeof(err)), 0);
	CHECK(p.nclones == 2 && p.clones[0].parent == RW_NONE && p.clones[1].parent == 0 &&
	      p.clones[1].pad == 16);
	char *text = rw_plan_format(&p, NULL);
	CHECK(text && strstr(text, "clone 0x30 0x24 16 in 0\n"));
	free(text);
	rw_plan_free(&p);
	/* tagged calls: a clone for another module's call, a tag on one of ours;
	 * tags come out sorted by site */
	const char *tags = "icpp-plan 1\nclone 0x20 0x5010 16 tag 0xabc\ntag 0x40 0x2\ntag 0x30 0x1\n";
	CHECK_EQ_INT(rw_plan_parse(tags, strlen(tags), &p, err, sizeof(err)), 0);
	CHECK(p.nclones == 1 && p.clones[0].tag == 0xabc && p.clones[0].parent == RW_NONE &&
	      p.clones[0].pad == 16);
	CHECK(p.ntags == 2 && p.tags[0].site == 0x30 && p.tags[1].tag == 2);
	text = rw_plan_format(&p, NULL);
	CHECK(text && strstr(text, "clone 0x20 0x5010 16 tag 0xabc\ntag 0x30 0x1\ntag 0x40 0x2\n"));
	free(text);
	rw_plan_free(&p);
	/* a tag on a copy in a clone (a chain across modules): sorted after the
	 * other copies' of the site, the call's own last */
	const char *copies = "icpp-plan 1\nclone 0x20 0x10 0\nclone 0x20 0x14 0\n"
			     "tag 0x24 0x3\ntag 0x24 0x2 in 1\ntag 0x24 0x1 in 0\n";
	CHECK_EQ_INT(rw_plan_parse(copies, strlen(copies), &p, err, sizeof(err)), 0);
	CHECK(p.ntags == 3 && p.tags[0].clone == 0 && p.tags[1].clone == 1 &&
	      p.tags[2].clone == RW_NONE);
	CHECK(rw_plan_tag(&p, 0x24, 1) == 2 && rw_plan_tag(&p, 0x24, RW_NONE) == 3 &&
	      !rw_plan_tag(&p, 0x25, 0));
	text = rw_plan_format(&p, NULL);
	CHECK(text && strstr(text, "tag 0x24 0x1 in 0\ntag 0x24 0x2 in 1\ntag 0x24 0x3\n"));
	free(text);
	rw_plan_free(&p);
	CHECK(rw_copy_key(0x24, 0) != rw_copy_key(0x24, 1) && rw_copy_key(0x24, 0) != 0x24);
	/* cross-module calls: a clone another module's call takes by its check
	 * (`xcall`), and our call (and a copy of it) checked for another
	 * module's clone; sorted by site, a copy's before the call's own */
	const char *xc = "icpp-plan 1\nclone 0x20 0x10 0\nclone 0x1100 0x11e4 0 xcall\n"
			 "xcall 0x14 0x1100 0x5000 0x1115 0xabc\nxcall 0x14 0x1100 0x5040 0x1115 0xabc in 0\n";
	CHECK_EQ_INT(rw_plan_parse(xc, strlen(xc), &p, err, sizeof(err)), 0);
	CHECK(p.nclones == 2 && p.clones[1].xcall && !p.clones[1].tag && !p.clones[0].xcall);
	CHECK(p.nxcalls == 2 && p.xcalls[0].clone == 0 && p.xcalls[1].clone == RW_NONE);
	const struct rw_plan_xcall *x = rw_plan_xcall_of(&p, 0x14, RW_NONE);
	CHECK(x && x->func == 0x1100 && x->dest == 0x5000 && x->mark == 0x1115 && x->value == 0xabc);
	CHECK(!rw_plan_xcall_of(&p, 0x10, RW_NONE));
	CHECK(!x->fwd && !p.clones[1].xcall_from);
	text = rw_plan_format(&p, NULL);
	CHECK(text && strstr(text, "clone 0x1100 0x11e4 0 xcall\n") &&
	      strstr(text, "xcall 0x14 0x1100 0x5040 0x1115 0xabc in 0\nxcall 0x14 0x1100 0x5000 "
			   "0x1115 0xabc\n"));
	free(text);
	rw_plan_free(&p);
	/* the same site's tag is rw_tag's; another site or module, another tag */
	static const uint8_t id1[] = {1, 2, 3}, id2[] = {1, 2, 4};
	CHECK(rw_tag(id1, 3, 0x10) == rw_tag(id1, 3, 0x10) && rw_tag(id1, 3, 0x10) != 0);
	CHECK(rw_tag(id1, 3, 0x10) != rw_tag(id1, 3, 0x11));
	CHECK(rw_tag(id1, 3, 0x10) != rw_tag(id2, 3, 0x10));
	/* a forwarder: the clone's call holds 0x1190, which jumps on to 0x1140
	 * through the slot at 0x4000 */
	const char *fw = "icpp-plan 1\nclone 0x1140 0x11d4 0 xcall 0x1190\n"
			 "xcall 0x11d4 0x1190 0x5020 0x1155 0xabc via 0x1140 0x4000\n";
	CHECK_EQ_INT(rw_plan_parse(fw, strlen(fw), &p, err, sizeof(err)), 0);
	CHECK(p.nclones == 1 && p.clones[0].xcall && p.clones[0].xcall_from == 0x1190);
	CHECK(p.nxcalls == 1 && p.xcalls[0].fwd == 0x1140 && p.xcalls[0].fwd_slot == 0x4000);
	text = rw_plan_format(&p, NULL);
	CHECK(text && strstr(text, "clone 0x1140 0x11d4 0 xcall 0x1190\n") &&
	      strstr(text, "xcall 0x11d4 0x1190 0x5020 0x1155 0xabc via 0x1140 0x4000\n"));
	free(text);
	rw_plan_free(&p);
	/* a forwarder to a third module: the slot at 0x4008 of the module of
	 * 0x1140 (reached through 0x1190) holds 0x2300 of a third, whose clone
	 * is at 0x7000; and the middle module's line that marks 0x1140 */
	const char *hop = "icpp-plan 1\nclone 0x20 0x10 0\nxcall 0x11d4 0x1190 0x7000 0x1155 0xabc "
			  "via 0x1140 0x4000 then 0x4008 0x2300 0x2410 0xdef in 0\n"
			  "mark 0x1140\nmark 0x1100\n";
	CHECK_EQ_INT(rw_plan_parse(hop, strlen(hop), &p, err, sizeof(err)), 0);
	CHECK(p.nxcalls == 1 && p.xcalls[0].fwd == 0x1140 && p.xcalls[0].hop_slot == 0x4008 &&
	      p.xcalls[0].hop_func == 0x2300 && p.xcalls[0].hop_mark == 0x2410 &&
	      p.xcalls[0].hop_value == 0xdef && p.xcalls[0].clone == 0 && !p.xcalls[0].tail);
	CHECK(p.nmarks == 2 && p.marks[0] == 0x1100 && p.marks[1] == 0x1140);
	text = rw_plan_format(&p, NULL);
	CHECK(text && strstr(text, "xcall 0x11d4 0x1190 0x7000 0x1155 0xabc via 0x1140 0x4000 then "
			   "0x4008 0x2300 0x2410 0xdef in 0\n") &&
	      strstr(text, "mark 0x1100\nmark 0x1140\n"));
	free(text);
	rw_plan_free(&p);
	/* a marker names the page and the build-id */
	CHECK(rw_xcall_value(id1, 3, 0x1000) != rw_xcall_value(id1, 3, 0x2000));
	CHECK(rw_xcall_value(id1, 3, 0x1000) != rw_xcall_value(id2, 3, 0x1000));
	CHECK(rw_xcall_value(id1, 3, 0x1000) != rw_tag(id1, 3, 0x1000));
	static const char *const refused[] = {
		"icpp-plan 1\nclone 0x20 0x10 0 in 0\n",          /* not an earlier clone */
		"icpp-plan 1\nclone 0x20 0x10 0\nclone 0x30 0x24 0 of 0\n",
		"icpp-plan 1\nclone 0x20 0x10 0 junk\n",
		"icpp-plan 1\nclone 0x20 0x10 0\nclone 0x30 0x24 0 in 0 1\n",
		"icpp-plan 1\nclone 0x20 0x10 0 tag 0x0\n",      /* a tag is never 0 */
		"icpp-plan 1\nclone 0x20 0x10 0 tag 0x5 1\n",
		"icpp-plan 1\ntag 0x10\n",
		"icpp-plan 1\ntag 0x10 0x0\n",
		"icpp-plan 1\ntag 0x10 0x1\ntag 0x10 0x2\n",    /* one site twice */
		"icpp-plan 1\ntag 0x10 0x1 in 0\n",             /* no clone 0 */
		"icpp-plan 1\nclone 0x20 0x10 0\ntag 0x24 0x1 in 0\ntag 0x24 0x2 in 0\n",
		"icpp-plan 1\nclone 0x20 0x10 0\ntag 0x24 0x1 in 0 2\n",
		"icpp-plan 1\nclone 0x20 0x10 0 xcall tag 0x5\n",   /* one way at most */
		"icpp-plan 1\nclone 0x20 0x10 0 promote xcall\n",
		"icpp-plan 1\nclone 0x20 0x10 0\nclone 0x30 0x24 0 in 0 xcall\n",
		"icpp-plan 1\nxcall 0x14 0x1100 0x5000 0x1115 0x0\n",   /* a marker is never 0 */
		"icpp-plan 1\nxcall 0x14 0x1100 0x5000 0x1115\n",
		"icpp-plan 1\nxcall 0x14 0x1100 0x5000 0x1115 0x1 in 0\n",  /* no clone 0 */
		"icpp-plan 1\nxcall 0x14 0x1 0x2 0x3 0x4\nxcall 0x14 0x1 0x2 0x3 0x5\n",
		"icpp-plan 1\nxcall 0x14 0x1 0x2 0x3 0x4 via 0x5\n",     /* a forwarder's slot */
		"icpp-plan 1\nxcall 0x14 0x1 0x2 0x3 0x4 via 0x0 0x6\n",
		"icpp-plan 1\nxcall 0x14 0x1 0x2 0x3 0x4 0x5\n",
		"icpp-plan 1\nxcall 0x14 0x1 0x2 0x3 0x4 then 0x6 0x7 0x8\n",  /* a hop's marker */
		"icpp-plan 1\nxcall 0x14 0x1 0x2 0x3 0x4 then 0x6 0x7 0x8 0x0\n",
		"icpp-plan 1\nxcall 0x14 0x1 0x2 0x3 0x4 then 0x0 0x7 0x8 0x9\n",
		"icpp-plan 1\nxcall 0x14 0x1 0x2 0x3 0x4 in 0 then 0x6 0x7 0x8 0x9\n",
		"icpp-plan 1\nxcall 0x14 0x1 0x2 0x3 0x4 then 0x6 0x7 0x8 0x9 tail\n",  /* no forwarder */
		"icpp-plan 1\nmark\n",
		"icpp-plan 1\nmark 0x0\n",
		"icpp-plan 1\nmark 0x10 0x20\n",
		"icpp-plan 1\nmark 0x10\nmark 0x10\n",                  /* one function twice */
	};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		CHECK_EQ_INT(rw_plan_parse(refused[i], strlen(refused[i]), &p, err, sizeof(err)), -1);
	(void)in;
}

/* A `mark` line (rewriter.h section 1, Cross-module calls) of the middle
 * library of run_xcall.sh's forwarders to a third module, hop_lib: fx_hop
 * (jmp fx_tag_leaf@plt, another module's) and fx_hop_sized (jmp fx_hop@plt)
 * may be marked; fx_hop_work (a marked page, but no forwarder) and an
 * address of no function may not. */
static void check_marks(const char *hop_lib)
{
	char err[512];
	struct rw_binary *b = rw_open(hop_lib, err, sizeof(err));
	CHECK(b != NULL);
	if (!b)
		return;
	struct rw_plan p = {0};
	CHECK(func(b, "fx_hop")->forward_symbol && !strcmp(func(b, "fx_hop")->forward_symbol,
							     "fx_tag_leaf"));
	CHECK_EQ_INT(rw_plan_add_mark(&p, func(b, "fx_hop")->addr), 0);
	CHECK_EQ_INT(rw_plan_add_mark(&p, func(b, "fx_hop_sized")->addr), 0);
	CHECK_EQ_INT(rw_plan_sort(&p, err, sizeof(err)), 0);
	CHECK_EQ_INT(rw_plan_check(b, &p, err, sizeof(err)), 0);
	p.marks[1] = func(b, "fx_hop_work")->addr;
	CHECK(func(b, "fx_hop_work")->xcall_mark && rw_plan_check(b, &p, err, sizeof(err)) < 0);
	CHECK(strstr(err, "forwards to no other module's function") != NULL);
	p.marks[1] = 1;
	CHECK(rw_plan_check(b, &p, err, sizeof(err)) < 0);
	CHECK(strstr(err, "no function of this binary") != NULL);
	rw_plan_free(&p);
	rw_close(b);
}

int main(int argc, char **argv)
{
	if (argc != 3 && argc != 4) {
		fprintf(stderr, "usage: test_rewrite FIXTURE WORKDIR [HOP_LIB]\n");
		return 2;
	}
	if (argc == 4)
		check_marks(argv[3]);
	char err[512], out[4096], cmd[4200];
	snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", argv[2]);
	if (system(cmd) != 0)
		return 1;
	struct rw_binary *b = rw_open(argv[1], err, sizeof(err));
	if (!b) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	check_analysis(b);
	snprintf(out, sizeof(out), "%s/fx.rw", argv[2]);
	check_output(argv[1], out, b);
	check_argpush_run(argv[1], argv[2], b);
	check_note_layout(out, argv[2]);
	check_clone_fragment(argv[1], argv[2], b);
	check_clone_order(argv[2], b);
	check_place_clones();
	check_tagged_trampoline(argv[2], b);
	check_refusals(argv[1], argv[2], b);
	rw_close(b);
	/* the rewritten file can itself be analysed (and would be refused as
	 * input to a second rewrite only if it broke the rules) */
	struct rw_binary *b2 = rw_open(out, err, sizeof(err));
	CHECK(b2 != NULL);
	if (b2) {
		const struct rw_func *f = func(b2, "fx_fp_leave");
		CHECK_EQ_INT(f->alloc, 48);
		rw_close(b2);
	}
	return check_exit();
}
