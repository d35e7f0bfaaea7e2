#include "x86/reloc.h"

#include <string.h>

bool x86_open(csh *cs)
{
	if (cs_open(CS_ARCH_X86, CS_MODE_64, cs) != CS_ERR_OK)
		return false;
	cs_option(*cs, CS_OPT_DETAIL, CS_OPT_ON);
	return true;
}

/* The AVX-512 mask instructions x86_disasm_iter decodes itself: VEX map 1
 * (0F), EVEX map 2 (0F38) and map 3 (0F3A, with an imm8), the opcode, and
 * whether the ModRM must name registers (mod 3). */
struct mask_op {
	uint8_t evex, map, op;
	bool reg_only;
	x86_insn id;
};
static const struct mask_op MASK_OPS[] = {
	{0, 1, 0x41, true, X86_INS_KANDQ},     {0, 1, 0x42, true, X86_INS_KANDNQ},
	{0, 1, 0x44, true, X86_INS_KNOTQ},     {0, 1, 0x45, true, X86_INS_KORQ},
	{0, 1, 0x46, true, X86_INS_KXNORQ},    {0, 1, 0x47, true, X86_INS_KXORQ},
	{0, 1, 0x4b, true, X86_INS_KUNPCKBW},  {0, 1, 0x90, false, X86_INS_KMOVQ},
	{0, 1, 0x91, false, X86_INS_KMOVQ},    {0, 1, 0x92, true, X86_INS_KMOVQ},
	{0, 1, 0x93, true, X86_INS_KMOVQ},     {0, 1, 0x98, true, X86_INS_KORTESTQ},
	{0, 1, 0x99, true, X86_INS_KORTESTQ},  /* ktest: no id of its own in 4.0.2 */
	{1, 2, 0x26, false, X86_INS_VPTESTMD}, /* vptestm(b|w), vptestnm(b|w) */
	{1, 2, 0x27, false, X86_INS_VPTESTMD}, /* vptestm(d|q), vptestnm(d|q) */
	{1, 3, 0x1e, false, X86_INS_VPCMPUD},  {1, 3, 0x1f, false, X86_INS_VPCMPD},
	{1, 3, 0x25, false, X86_INS_VPCMPD},   /* vpternlog(d|q): no id in 4.0.2 */
	{1, 3, 0x3e, false, X86_INS_VPCMPUB},  {1, 3, 0x3f, false, X86_INS_VPCMPB},
};

/* The length of the mask instruction at c (n bytes), with *id, or 0. */
static size_t mask_insn_len(const uint8_t *c, size_t n, x86_insn *id)
{
	enum { RSP = 4, RBP = 5 };
	if (n < 4 || (c[0] != 0xc5 && c[0] != 0xc4 && c[0] != 0x62))
		return 0;
	bool evex = c[0] == 0x62, vex2 = c[0] == 0xc5;
	size_t pre = vex2 ? 2 : evex ? 4 : 3;
	if (n < pre + 2 || (evex && (c[1] & 0x0c || !(c[2] & 0x04))))
		return 0;
	unsigned map = vex2 ? 1 : evex ? c[1] & 0x03 : c[1] & 0x1f;
	unsigned r_ext = !(c[1] & 0x80), b_ext = !vex2 && !(c[1] & 0x20);
	uint8_t op = c[pre], modrm = c[pre + 1];
	unsigned mod = modrm >> 6, reg = ((modrm >> 3) & 7) | r_ext << 3, rm = modrm & 7;
	const struct mask_op *m = NULL;
	for (size_t i = 0; i < sizeof(MASK_OPS) / sizeof(*MASK_OPS) && !m; i++)
		if (MASK_OPS[i].evex == evex && MASK_OPS[i].map == map && MASK_OPS[i].op == op)
			m = &MASK_OPS[i];
	if (!m || (m->reg_only && mod != 3) || (op == 0x91 && !evex && mod == 3))
		return 0;
	/* kmov to a general register: a caller-saved one only */
	if (!evex && op == 0x93 && (reg == 3 || reg == RSP || reg == RBP || reg >= 12))
		return 0;
	size_t len = pre + 2;
	if (mod != 3) {
		unsigned base = rm;
		if (rm == 4) {
			if (n < len + 1)
				return 0;
			base = c[len++] & 7;
		}
		/* rip-relative or absolute (mod 0, base 5), or through rsp or rbp */
		if ((mod == 0 && base == RBP) || ((base == RSP || base == RBP) && !b_ext))
			return 0;
		len += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	}
	len += map == 3;
	*id = m->id;
	return len <= n && len <= 15 ? len : 0;
}

bool x86_disasm_iter(csh cs, const uint8_t **code, size_t *size, uint64_t *addr, cs_insn *insn)
{
	if (cs_disasm_iter(cs, code, size, addr, insn))
		return true;
	x86_insn id;
	size_t len = mask_insn_len(*code, *size, &id);
	if (!len)
		return false;
	insn->id = id;
	insn->address = *addr;
	insn->size = (uint16_t)len;
	memcpy(insn->bytes, *code, len);
	memcpy(insn->mnemonic, "(avx-512)", sizeof("(avx-512)"));   /* no stdio: the runtime */
	insn->op_str[0] = 0;
	if (insn->detail)
		memset(insn->detail, 0, sizeof(*insn->detail));
	*code += len, *size -= len, *addr += len;
	return true;
}

size_t x86_endbr64_len(const uint8_t *code, size_t len)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	return len >= sizeof(endbr64) && !memcmp(code, endbr64, sizeof(endbr64)) ? sizeof(endbr64) : 0;
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

int x86_cmp_r11_of(const uint8_t *insn, size_t len, uint64_t at, uint64_t to, uint8_t *out)
{
	size_t i = 0;
	uint8_t rex = 0;
	if (len && (insn[0] & 0xf0) == 0x40)
		rex = insn[i++];
	uint8_t ext = i + 2 <= len ? (insn[i + 1] >> 3) & 7 : 0;
	if (i + 2 > len || insn[i] != 0xff || (ext != 2 && ext != 4))
		return -1;
	uint8_t modrm = insn[i + 1], mod = modrm >> 6, rm = modrm & 7;
	size_t n = 2;                /* opcode and ModRM */
	bool r11 = false, rip = false;
	if (mod == 3) {
		r11 = (rm | (rex & 1) << 3) == 11;
	} else {
		uint8_t base = rm;
		if (rm == 4) {       /* SIB */
			if (i + 3 > len)
				return -1;
			uint8_t sib = insn[i + 2], index = (uint8_t)(((sib >> 3) & 7) | (rex & 2) << 2);
			base = sib & 7;
			r11 = index == 11;
			n++;
			if (mod == 0 && base == 5)
				n += 4;      /* disp32, no base */
			else
				r11 = r11 || (base | (rex & 1) << 3) == 11;
		} else if (mod == 0 && rm == 5) {
			if (!at)
				return -1;
			rip = true;
			n += 4;
		} else {
			r11 = (base | (rex & 1) << 3) == 11;
		}
		n += mod == 1 ? 1 : mod == 2 ? 4 : 0;
	}
	if (r11 || i + n != len)
		return -1;
	out[0] = 0x4c | (rex & 3);   /* REX.W, REX.R (%r11), the operand's X and B */
	out[1] = 0x39;               /* cmp r64, r/m64 */
	out[2] = (uint8_t)((modrm & 0xc7) | 3 << 3);
	memcpy(out + 3, insn + i + 2, n - 2);
	if (rip) {                   /* the same address, from the cmp's end */
		int32_t disp;
		memcpy(&disp, insn + i + 2, 4);
		int64_t d = (int64_t)(at + len) + disp - (int64_t)(to + n + 1);
		if (!fits_rel32(d))
			return -1;
		put32(out + 3, (uint32_t)d);
	}
	return (int)(n + 1);
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

uint64_t x86_abs_operand(const cs_insn *insn, uint8_t *disp_off)
{
	const cs_x86 *x = &insn->detail->x86;
	*disp_off = 0;
	for (int i = 0; i < x->op_count; i++) {
		const x86_op_mem *m = &x->operands[i].mem;
		if (x->operands[i].type == X86_OP_MEM && m->base == X86_REG_INVALID &&
		    m->segment == X86_REG_INVALID && m->disp) {
			if (x->encoding.disp_size == 4)
				*disp_off = x->encoding.disp_offset;
			return (uint64_t)m->disp;
		}
	}
	return 0;
}
