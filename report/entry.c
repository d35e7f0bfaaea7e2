/* entry: samples in the entry code icpp rewrite writes for a function f
 * (rewriter.h section 1; rewriter/entry.c), which f's entry jumps to:
 *     G: 16 x int3
 *        lea A(%rip),%r11; sub (%rsp),%r11;                   (clones k by
 *          a search: cmp $KEY_k,%r11; je CLONE_k; jg ...      dispatch)
 *        mov (%rsp),%r11; test $M,%r11d; jz T;                (clones k by
 *          mov -17(%r11),%r11d; a search: cmp $LO,%r11d;      a tagged
 *          je H_LO; ja ...; then per low half H_LO:           call)
 *          mov (%rsp),%r11; cmpl $HI_k,-10(%r11); je CLONE_k; jmp T
 *     T: lea -(W-8)(%rsp),%rsp; call B; lea (W-8)(%rsp),%rsp; ret
 *                                          (an entry wrapper padding f by W)
 *     B: f's displaced first instructions; jmp f+N
 *        (they may end in a jmp of their own, a tail call, or in a call's
 *        copy, which jumps to the callee: f is the last jump's)
 * Symbols __icpp_dispatch_NAME (no T) and __icpp_entry_NAME (with T).
 * The tests run in the frame f's caller just entered, which becomes f's or
 * clone k's: a sample at test k or before it may be in the frame of f or
 * of any clone whose je lies at or after it (the sample has no return
 * address to tell; a search skips some of those, and has ruled out the
 * clones whose je lies before it, run or jumped over).  Past the tests the
 * frame is f's.  In T its CFA is still the
 * entry's (the FDE's rule), but the prediction has f's frame W deeper, where
 * B runs f's body: a sample in the tests or T is at f's height + W, one in B
 * at f's height. */
#include <stdlib.h>
#include <string.h>

#include "report/report.h"
#include "x86/reloc.h"

static bool entry_code(const char *name)
{
	static const char dispatch[] = "__icpp_dispatch_", wrapper[] = "__icpp_entry_";
	return name && (!strncmp(name, dispatch, sizeof(dispatch) - 1) ||
			!strncmp(name, wrapper, sizeof(wrapper) - 1));
}

/* lea -(W-8)(%rsp),%rsp: W, else 0. */
static int64_t wrapper_bytes(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;
	if (insn->id != X86_INS_LEA || x->op_count != 2 || x->operands[0].type != X86_OP_REG ||
	    x->operands[0].reg != X86_REG_RSP || x->operands[1].type != X86_OP_MEM ||
	    x->operands[1].mem.base != X86_REG_RSP || x->operands[1].mem.index != X86_REG_INVALID ||
	    x->operands[1].mem.disp >= 0)
		return 0;
	return 8 - x->operands[1].mem.disp;
}

int rp_entry_frames(const struct rp_module *mod, const struct bin_function *code, uint64_t vaddr,
		    struct rp_entry_frames *out)
{
	memset(out, 0, sizeof(*out));
	if (!entry_code(code->name))
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
	uint64_t at = code->addr, body = 0;
	int64_t w = 0;
	while (left && cs_disasm_iter(cs, &p, &left, &at, insn)) {
		uint64_t t = x86_branch_target(insn);
		bool inside = t >= code->addr && t < code->addr + code->size;
		if (insn->id == X86_INS_JE && t && !inside && vaddr <= insn->address &&
		    out->nclones < RP_MAX_DISPATCH)
			out->clones[out->nclones++] = t;
		else if (!w && !body)
			w = wrapper_bytes(insn);
		if (insn->id == X86_INS_CALL && t && inside)
			body = t;
		if (insn->id == X86_INS_JMP && t && !inside) {   /* the last: jmp f+N */
			const struct bin_function *f = bin_function_at(mod->bin, t);
			out->func = f ? f->addr : 0;
		}
	}
	out->func_extra = vaddr < body ? w : 0;
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
	free(bytes);
	return out->func ? 0 : -1;
}
