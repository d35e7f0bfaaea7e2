#include "x86/reloc.h"

#include <string.h>

bool x86_open(csh *cs)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, cs) != CS_ERR_OK)
		return false;
	cs_option(*cs, CS_OPT_DETAIL, CS_OPT_ON);
	return true;
}

/* cs_insn_group() needs the handle; the detail's group list does not. */
static bool in_group(const cs_insn *insn, uint8_t group)
{
	for (int i = 0; i < insn->detail->groups_count; i++)
		if (insn->detail->groups[i] == group)
			return true;
	return false;
}

static bool is_relative_branch(const cs_insn *insn)
{
	return in_group(insn, X86_GRP_BRANCH_RELATIVE) ||
	       (insn->id == X86_INS_CALL && insn->detail->x86.op_count == 1 &&
		insn->detail->x86.operands[0].type == X86_OP_IMM);
}

static bool has_rip_operand(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;
	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_RIP)
			return true;
	return false;
}

uint64_t x86_rip_target(const cs_insn *insn)
{
	return has_rip_operand(insn) ? insn->address + insn->size + (uint64_t)insn->detail->x86.disp
				     : 0;
}

const char *x86_unrelocatable(const cs_insn *insn)
{
	switch (insn->id) {
	case X86_INS_LOOP:
	case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
	case X86_INS_JRCXZ:
	case X86_INS_JECXZ:
		return "loop/jrcxz has no rel32 form";
	default:
		break;
	}
	if (has_rip_operand(insn) && insn->detail->x86.encoding.disp_size != 4)
		return "rip-relative operand without disp32";
	if (is_relative_branch(insn) && insn->detail->x86.op_count != 1)
		return "relative branch with unexpected operands";
	return NULL;
}

uint64_t x86_branch_target(const cs_insn *insn)
{
	if (!is_relative_branch(insn) || insn->detail->x86.op_count != 1 ||
	    insn->detail->x86.operands[0].type != X86_OP_IMM)
		return 0;
	return (uint64_t)insn->detail->x86.operands[0].imm;
}

bool x86_is_terminator(const cs_insn *insn)
{
	switch (insn->id) {
	case X86_INS_RET:
	case X86_INS_RETF:
	case X86_INS_JMP:
	case X86_INS_LJMP:
	case X86_INS_UD2:
	case X86_INS_HLT:
		return true;
	default:
		return false;
	}
}

const struct x86_sp_step X86_RELOC_CALL_SP[X86_RELOC_CALL_STEPS] = {{5, 8}, {6, 16}, {19, 8}};

static bool fits_rel32(int64_t d)
{
	return d >= INT32_MIN && d <= INT32_MAX;
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

int x86_encode_jmp(uint64_t at, uint64_t target, uint8_t *out)
{
	int64_t d = (int64_t)(target - (at + 5));
	if (!fits_rel32(d))
		return -1;
	out[0] = 0xe9;
	put32(out + 1, (uint32_t)d);
	return 5;
}

/* jcc rel8 is 7x ib, jcc rel32 is 0f 8x id; the condition is the low nibble. */
static int jcc_condition(const cs_insn *insn)
{
	const uint8_t *b = insn->bytes;
	size_t i = 0;
	while (i < insn->size && (b[i] == 0x2e || b[i] == 0x3e || b[i] == 0xf2))
		i++;                 /* branch hints and bnd prefixes */
	if (i < insn->size && (b[i] & 0xf0) == 0x70)
		return b[i] & 0x0f;
	if (i + 1 < insn->size && b[i] == 0x0f && (b[i + 1] & 0xf0) == 0x80)
		return b[i + 1] & 0x0f;
	return -1;
}

static int relocate_branch(const cs_insn *insn, uint64_t to, uint8_t *out, const char **why)
{
	uint64_t target = x86_branch_target(insn);
	if (insn->id == X86_INS_CALL) {
		/* lea -8(%rsp),%rsp; push %rax; lea ret(%rip),%rax; mov %rax,8(%rsp);
		 * pop %rax; jmp target: the callee returns to the original site.
		 * rip-relative, so that code rewritten at link-time addresses
		 * loads anywhere; lea, push, mov and pop keep every register and
		 * the flags. */
		static const uint8_t head[] = {0x48, 0x8d, 0x64, 0x24, 0xf8, 0x50, 0x48, 0x8d, 0x05},
				     tail[] = {0x48, 0x89, 0x44, 0x24, 0x08, 0x58};
		uint64_t ret = insn->address + insn->size;
		int64_t d = (int64_t)(ret - (to + sizeof(head) + 4));
		if (!fits_rel32(d))
			goto far;
		memcpy(out, head, sizeof(head));
		put32(out + sizeof(head), (uint32_t)d);
		memcpy(out + sizeof(head) + 4, tail, sizeof(tail));
		if (x86_encode_jmp(to + X86_RELOC_CALL_BYTES - 5, target, out + X86_RELOC_CALL_BYTES - 5) < 0)
			goto far;
		return X86_RELOC_CALL_BYTES;
	}
	if (insn->id == X86_INS_JMP) {
		if (x86_encode_jmp(to, target, out) < 0)
			goto far;
		return 5;
	}
	int cc = jcc_condition(insn);
	if (cc < 0) {
		*why = "unknown relative branch encoding";
		return -1;
	}
	int64_t d = (int64_t)(target - (to + 6));
	if (!fits_rel32(d))
		goto far;
	out[0] = 0x0f;
	out[1] = (uint8_t)(0x80 | cc);
	put32(out + 2, (uint32_t)d);
	return 6;
far:
	*why = "branch target out of rel32 range";
	return -1;
}

/* The copy of insn at out (moved to `to`, same length) keeps the address its
 * rip-relative operand refers to.  rip-relative is always disp32 (Capstone 4
 * misreports disp_size of some SSE instructions, e.g. comisd, as 2). */
static int keep_rip_operand(const cs_insn *insn, uint64_t to, uint8_t *out, const char **why)
{
	int64_t d = (int64_t)(x86_rip_target(insn) - (to + insn->size));
	if (!fits_rel32(d)) {
		*why = "rip-relative operand out of rel32 range";
		return -1;
	}
	put32(out + insn->detail->x86.encoding.disp_offset, (uint32_t)d);
	return insn->size;
}

int x86_relocate_insn(const cs_insn *insn, uint64_t to, uint8_t *out, const char **why)
{
	if ((*why = x86_unrelocatable(insn)))
		return -1;
	if (is_relative_branch(insn))
		return relocate_branch(insn, to, out, why);
	memcpy(out, insn->bytes, insn->size);
	return has_rip_operand(insn) ? keep_rip_operand(insn, to, out, why) : insn->size;
}

int x86_copy_insn(const cs_insn *insn, uint64_t to, uint64_t target, uint8_t *out,
		  const char **why)
{
	const cs_x86 *x = &insn->detail->x86;
	memcpy(out, insn->bytes, insn->size);
	*why = NULL;
	if (is_relative_branch(insn)) {
		int64_t d = (int64_t)((target ? target : x86_branch_target(insn)) - (to + insn->size));
		uint8_t n = x->encoding.imm_size;
		if (n == 1 && d >= INT8_MIN && d <= INT8_MAX) {
			out[x->encoding.imm_offset] = (uint8_t)(int8_t)d;
		} else if (n == 4 && fits_rel32(d)) {
			put32(out + x->encoding.imm_offset, (uint32_t)d);
		} else {
			*why = n == 1 ? "short branch out of reach" : "branch target out of rel32 range";
			return -1;
		}
	} else if (has_rip_operand(insn)) {
		return keep_rip_operand(insn, to, out, why);
	}
	return insn->size;
}

size_t x86_padding_insn(csh cs, cs_insn *insn, const uint8_t *code, size_t len, uint64_t addr,
			uint64_t island)
{
	enum { JMP32 = 5 };
	if (!len)
		return 0;
	if (*code == 0xcc || *code == 0x90)
		return 1;
	if (island && addr == island && len >= JMP32 && *code == 0xe9)
		return JMP32;
	return cs_disasm_iter(cs, &code, &len, &addr, insn) && insn->id == X86_INS_NOP ? insn->size : 0;
}

bool x86_is_padding_in(csh cs, cs_insn *insn, const uint8_t *code, size_t len, uint64_t addr,
		       uint64_t island)
{
	size_t n;
	while (len && (n = x86_padding_insn(cs, insn, code, len, addr, island)))
		code += n, len -= n, addr += n;
	return !len;
}

bool x86_is_padding(csh cs, const uint8_t *code, size_t len, uint64_t addr)
{
	cs_insn *insn = cs_malloc(cs);
	bool ok = insn && x86_is_padding_in(cs, insn, code, len, addr, 0);
	if (insn)
		cs_free(insn, 1);
	return ok;
}
