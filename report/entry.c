/* entry: samples in the entry code icpp rewrite writes for a function f
 * (rewriter.h section 1; rewriter/entry.c), which f's entry jumps to:
 *     G: 16 x int3
 *        lea A(%rip),%r11; sub (%rsp),%r11;                   (clones k by
 *          a search: cmp $KEY_k,%r11; je CLONE_k; jg ...      dispatch)
 *        mov (%rsp),%r11; test $M,%r11d; jz T;                (clones k by
 *          cmpb $0x80,-18(%r11); jne T;                       a tagged
 *          mov -17(%r11),%r11d; a search: cmp $LO,%r11d;
 *          je H_LO; ja ...; then per low half H_LO:           call)
 *          mov (%rsp),%r11; cmpl $HI_k,-10(%r11); je CLONE_k; jmp T
 *     T: lea -(W-8)(%rsp),%rsp; call B; lea (W-8)(%rsp),%rsp; ret
 *                                          (an entry wrapper padding f by W)
 *     B: f's displaced first instructions; jmp f+N
 *        (they may end in a jmp of their own, a tail call, or in a call's
 *        copy, which jumps to the callee: f is the last jump's)
 * Symbols __icpp_dispatch_NAME (no T) and __icpp_entry_NAME (with T).
 * The tests run in the frame f's caller just entered, which becomes f's or
 * clone k's: a sample in them may be in the frame of f or of any clone
 * whose je the code can still reach from the sample, following its
 * branches (the sample has no return address to tell; a search has ruled
 * out the je's it ran and the half it did not take).  Past the tests the
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

/* One decoded instruction of entry code. */
struct entry_insn {
	uint64_t addr, target;  /* target: a direct branch's, else 0 */
	unsigned id;
	bool stops;             /* never falls through (jmp, ret, int3) */
	int64_t wrapper;        /* wrapper_bytes */
};

static bool within(uint64_t a, uint64_t lo, uint64_t hi)
{
	return a >= lo && a < hi;
}

/* The instruction at addr, or the first after it: an index into e[n]. */
static uint32_t insn_at(const struct entry_insn *e, uint32_t n, uint64_t addr)
{
	uint32_t lo = 0, hi = n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (e[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The je of a test whose clone's frame a sample at vaddr may be in: one
 * that the code can still reach from vaddr, following its branches inside
 * the code (a search's other half is out of reach) and not into a call
 * (an entry wrapper's body). */
static void reachable_tests(const struct entry_insn *e, uint32_t n, uint64_t lo, uint64_t hi,
			    uint64_t vaddr, bool *seen, uint32_t *todo, struct rp_entry_frames *out)
{
	uint32_t ntodo = 0, first = insn_at(e, n, vaddr);
	if (first < n) {
		seen[first] = true;
		todo[ntodo++] = first;
	}
	while (ntodo) {
		uint32_t i = todo[--ntodo], next[2];
		uint32_t nnext = 0;
		if (e[i].id != X86_INS_CALL && within(e[i].target, lo, hi))
			next[nnext++] = insn_at(e, n, e[i].target);
		if (!e[i].stops && i + 1 < n)
			next[nnext++] = i + 1;
		for (uint32_t k = 0; k < nnext; k++)
			if (next[k] < n && !seen[next[k]]) {
				seen[next[k]] = true;
				todo[ntodo++] = next[k];
			}
	}
	for (uint32_t i = 0; i < n && out->nclones < RP_MAX_DISPATCH; i++)
		if (seen[i] && e[i].id == X86_INS_JE && e[i].target && !within(e[i].target, lo, hi))
			out->clones[out->nclones++] = e[i].target;
}

int rp_entry_scan(const uint8_t *bytes, size_t size, uint64_t addr, uint64_t vaddr,
		  uint64_t *resume, struct rp_entry_frames *out)
{
	memset(out, 0, sizeof(*out));
	*resume = 0;
	struct entry_insn *e = malloc((size + 1) * sizeof(*e));
	bool *seen = calloc(size + 1, sizeof(*seen));
	uint32_t *todo = malloc((size + 1) * sizeof(*todo));
	csh cs;
	if (!e || !seen || !todo || !x86_open(&cs)) {
		free(e);
		free(seen);
		free(todo);
		return -1;
	}
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *p = bytes;
	size_t left = insn ? size : 0;
	uint64_t at = addr, body = 0;
	uint32_t n = 0;
	while (left && x86_disasm_iter(cs, &p, &left, &at, insn)) {
		uint64_t t = x86_branch_target(insn);
		bool inside = within(t, addr, addr + size);
		e[n] = (struct entry_insn){insn->address, t, insn->id,
					   x86_is_terminator(insn) || insn->id == X86_INS_INT3,
					   wrapper_bytes(insn)};
		if (insn->id == X86_INS_CALL && t && inside)
			body = t;
		if (insn->id == X86_INS_JMP && t && !inside)    /* the last: jmp f+N */
			*resume = t;
		n++;
	}
	/* an entry wrapper's lea, before its body */
	for (uint32_t i = 0; i < n && e[i].addr < body; i++)
		if (e[i].wrapper && vaddr < body) {
			out->func_extra = e[i].wrapper;
			break;
		}
	reachable_tests(e, n, addr, addr + size, vaddr, seen, todo, out);
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
	free(e);
	free(seen);
	free(todo);
	return 0;
}

int rp_entry_frames(const struct rp_module *mod, const struct bin_function *code, uint64_t vaddr,
		    struct rp_entry_frames *out)
{
	memset(out, 0, sizeof(*out));
	if (!entry_code(code->name))
		return -1;
	uint8_t *bytes = malloc(code->size ? code->size : 1);
	uint64_t resume;
	if (!bytes || bin_read(mod->bin, code->addr, bytes, code->size) ||
	    rp_entry_scan(bytes, code->size, code->addr, vaddr, &resume, out) < 0) {
		free(bytes);
		return -1;
	}
	free(bytes);
	const struct bin_function *f = resume ? bin_function_at(mod->bin, resume) : NULL;
	out->func = f ? f->addr : 0;
	/* a je among f's displaced instructions goes on in f: no clone */
	uint32_t k = 0;
	for (uint32_t i = 0; i < out->nclones; i++)
		if (!f || !within(out->clones[i], f->addr, f->addr + f->size))
			out->clones[k++] = out->clones[i];
	out->nclones = k;
	return out->func ? 0 : -1;
}
