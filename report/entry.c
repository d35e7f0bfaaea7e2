/* entry: samples in the dispatch of a function f that icpp rewrite cloned
 * by dispatch (rewriter.h section 1, "Clones by dispatch"; rewriter/entry.c
 * writes it, symbol __icpp_dispatch_NAME).  f's entry jumps there:
 *     G: 16 x int3
 *        lea RET_k(%rip),%r11; cmp %r11,(%rsp); je CLONE_k    (per clone k)
 *        f's displaced first instructions; jmp f+N
 * The code runs in the frame f's caller just entered, which becomes f's or
 * clone k's: a sample at test k or before it may be in the frame of f or of
 * any clone whose test has not run yet (the sample has no return address to
 * tell), one after the tests is f's.  Its height is that frame's (the code's
 * FDE gives CFA = rsp + 8 in the tests and f's own CFA offset in the
 * displaced instructions). */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "x86/reloc.h"

static const char dispatch_prefix[] = "__icpp_dispatch_";

int rp_dispatch_frames(const struct rp_module *mod, const struct bin_function *code, uint64_t vaddr,
		       uint64_t *func, uint64_t *clones, uint32_t *nclones)
{
	*func = 0;
	*nclones = 0;
	if (!code->name || strncmp(code->name, dispatch_prefix, sizeof(dispatch_prefix) - 1))
		return -1;
	uint8_t *bytes = malloc(code->size ? code->size : 1);
	csh cs;
	if (!bytes || bin_read(mod->bin, code->addr, bytes, code->size) || !x86_open(&cs)) {
		free(bytes);
		return -1;
	}
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *p = bytes;
	size_t left = insn ? code->size : 0;
	uint64_t at = code->addr;
	while (left && cs_disasm_iter(cs, &p, &left, &at, insn)) {
		uint64_t t = x86_branch_target(insn);
		if (insn->id == X86_INS_JE && t && vaddr <= insn->address && *nclones < RP_MAX_DISPATCH)
			clones[(*nclones)++] = t;
		if (insn->id == X86_INS_JMP && t && (t < code->addr || t >= code->addr + code->size)) {
			const struct bin_function *f = bin_function_at(mod->bin, t);
			*func = f ? f->addr : 0;
			break;
		}
	}
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
	free(bytes);
	return *func ? 0 : -1;
}
