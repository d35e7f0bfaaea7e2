/* analyze.c: feasibility of frame padding and callsite wrapping (rewriter.h
 * section 1).
 *
 * Every function is decoded once with Capstone into compact records (what the
 * instruction does to rsp, its rsp/rbp-based memory operands, where its
 * immediate or displacement sits).  A unit is a function plus the fragments
 * that run in its frame; the dataflow walks it from its entry, then from
 * landing pads and jump-table targets, keeping per instruction
 *     k      CFA - rsp (when known)
 *     PAD    the allocation A has run (the padding would be below rsp)
 *     RBP    rbp == CFA - 16
 * and the checks that follow decide the padding mask and the edits, and the
 * stack-argument bound of every call.
 */
#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/internal.h"
#include "util/order.h"
#include "x86/reloc.h"

enum eff {
	E_OTHER,
	E_PUSH,         /* k += 8 */
	E_POP,          /* k -= 8 */
	E_ADJ,          /* k += imm (sub/add immediate, lea d(%rsp),%rsp) */
	E_LEA_RBP,      /* rsp = rbp + imm */
	E_LEAVE,
	E_DYN,          /* rsp = something unknown */
	E_REALIGN,      /* and $-N,%rsp */
	E_BAD,          /* writes rsp in a way the analysis does not follow */
	E_CALL,
	E_RET,
	E_JMP,
	E_JCC,
	E_JMP_IND,
	E_STOP,         /* ud2, hlt */
};

enum {
	F_POP_RBP = 2,
	F_SET_RBP = 4,  /* mov %rsp,%rbp */
	F_CLOBBER_RBP = 8,
	F_PAD = 16,     /* nop or int3 */
	F_NORET = 32,   /* call that does not return */
	F_LOCK = 64,    /* starts with a lock prefix (0xf0) */
	F_TABLE_JMP = 128,      /* jmp *%rC after movslq (%rA,%rI,4),%rC; add %rA,%rC */
	F_RIP_LEA = 256,        /* lea X(%rip): rip is X */
};

struct mref {
	int64_t disp;
	uint16_t size;
	uint8_t base;   /* 7 rsp, 6 rbp */
	uint8_t lea;
	uint8_t disp_off, disp_size;
};

struct ins {
	uint64_t addr;
	uint64_t target;         /* direct branch/call target */
	uint64_t slot;           /* call/jmp *slot(%rip) */
	uint64_t rip;            /* an operand's rip-relative address, or 0 */
	uint64_t abs;            /* a memory operand's absolute address (no base
	                          * register, not rip), or 0 */
	uint64_t case_table;     /* F_TABLE_JMP: the table its bounds check names, */
	uint32_t cases;          /* and the entries it allows (0: none found) */
	int64_t imm;             /* E_ADJ: k += imm; E_LEA_RBP: displacement */
	int64_t fld_value;       /* E_ADJ: the encoded immediate/displacement */
	int8_t fld_coef;         /* E_ADJ: k += fld_coef * field */
	uint8_t fld_off, fld_size;
	uint8_t len, eff, nmem;
	uint16_t flags;
	uint8_t push_cs;         /* E_PUSH of a callee-saved register: its bit */
	uint8_t writes_cs;       /* the callee-saved registers it writes (bits) */
	struct mref mem[2];
};

enum { S_REACH = 1, S_KNOWN = 2, S_PAD = 4, S_RBP = 8 };

struct st {
	int32_t k;
	uint8_t f;
	uint8_t w;      /* callee-saved registers written on some path to here:
	                 * a push of one of them stores a value (a stack
	                 * argument, say), not the caller's register */
};

struct range {
	uint32_t func;
	struct ins *ins;
	uint32_t n;
	struct st *st;
	uint64_t bad;            /* first undecodable address, or 0 */
	struct eh_callsite *cs;  /* LSDA */
	uint32_t ncs;
	bool args_size;
};

struct unit {
	struct range *r;
	uint32_t nr, cap;
	uint64_t *work;
	size_t nwork, capwork;
	/* allocation */
	int32_t k0, n_alloc;
	int32_t alloc_r, alloc_i;
	/* refusal of padding (first reason wins), and of the dataflow */
	enum rw_pad_why why;
	uint64_t why_at;
	bool conflict;           /* states disagree: nothing from this unit is trusted */
	bool unreached;          /* code left with no state that matters */
	/* indirect jumps */
	struct st ind;
	int nind;                /* distinct states seen (capped at 2) */
	bool ind_inner;          /* one jumps with a frame live: not a tail call */
	bool ind_table;          /* code reached only through them (a jump table) */
	bool ind_switch;         /* one is a relative switch's (F_TABLE_JMP) */
	bool ind_other;          /* one is not */
	bool tail;               /* jumps out at k = 8 (tail calls) */
	bool falls_off;          /* runs past its last instruction (not a call)
	                          * into the code after it, as a tail call would */
	bool tail_indirect;      /* ... through a register or memory */
	struct rw_tail_jump *tail_to;   /* ... directly: the jumps */
	uint32_t ntail_to;
	int32_t k_save;          /* lowest push saving a callee-saved register (CFA - k) */
};

struct ana {
	struct rw_binary *b;
	csh cs;
	const struct bin_function *bf;
	size_t nbf;
	uint32_t *owner;         /* unit (function index) each function belongs to */
	bool *cand;              /* fragment candidate */
	bool *claimed_twice;     /* a fragment another unit than its owner's jumps into */
	struct unit_tails {      /* per unit (function index): its direct tail calls */
		struct rw_tail_jump *to;
		uint32_t n;
		struct rw_tail_jump *ind;       /* its indirect ones, promotable */
		uint32_t nind;
	} *tails;
	/* the code addresses its data, its relative relocations and its
	 * instructions' operands name (data_labels, operand_labels), and the
	 * promotable calls of units with indirect jumps, which may land only
	 * there (refuse_promote_targets) */
	struct addr_set {
		uint64_t *v;
		size_t n, cap;
	} labels, jump_callers;
	uint64_t code_lo, code_hi;
	bool oom;
};

/* ------------------------------------------------------------------ names */

static bool name_is(const char *name, const char *const *list)
{
	if (!name)
		return false;
	size_t n = strcspn(name, "@");
	for (; *list; list++)
		if (strlen(*list) == n && !strncmp(name, *list, n))
			return true;
	return false;
}

static bool noreturn_name(const char *name)
{
	static const char *const list[] = {
		"abort", "exit", "_exit", "_Exit", "quick_exit", "__stack_chk_fail",
		"__cxa_throw", "__cxa_rethrow", "__cxa_bad_cast", "__cxa_bad_typeid",
		"__cxa_throw_bad_array_new_length", "__cxa_pure_virtual", "_Unwind_Resume",
		"longjmp", "_longjmp", "siglongjmp", "__longjmp_chk", "__assert_fail",
		"__assert_perror_fail", "__fortify_fail", "__chk_fail", "err", "errx", "verr",
		"verrx", "pthread_exit", "__libc_fatal", "_ZSt9terminatev", NULL};
	if (name_is(name, list))
		return true;
	/* std::__throw_* helpers */
	return name && !strncmp(name, "_ZSt", 4) && strstr(name, "__throw_");
}

static bool returns_twice_name(const char *name)
{
	static const char *const list[] = {"setjmp", "_setjmp", "__setjmp", "sigsetjmp",
					   "__sigsetjmp", "savectx", "vfork", "__vfork",
					   "getcontext", "__getcontext", NULL};
	return name_is(name, list);
}

static const struct bin_function *func_at(const struct ana *a, uint64_t addr)
{
	return bin_function_at(a->b->bin, addr);
}

static uint32_t func_index(const struct ana *a, const struct bin_function *f)
{
	return f ? (uint32_t)(f - a->bf) : RW_NONE;
}

/* A PLT stub's GOT slot: that of its first rip-relative jmp; 0 unknown. */
static uint64_t plt_slot(struct ana *a, uint64_t target)
{
	uint8_t code[32];
	if (bin_read(a->b->bin, target, code, sizeof(code)) < 0)
		return 0;
	const uint8_t *p = code;
	size_t left = sizeof(code);
	uint64_t addr = target;
	cs_insn *insn = cs_malloc(a->cs);
	uint64_t slot = 0;
	for (int i = 0; i < 3 && x86_disasm_iter(a->cs, &p, &left, &addr, insn); i++) {
		const cs_x86 *x = &insn->detail->x86;
		if (insn->id == X86_INS_JMP && x->op_count == 1 && x->operands[0].type == X86_OP_MEM &&
		    x->operands[0].mem.base == X86_REG_RIP) {
			slot = x86_rip_target(insn);
			break;
		}
	}
	cs_free(insn, 1);
	return slot;
}

/* The GOT slot a call goes through: its own operand, or its PLT stub's. */
static uint64_t call_slot(struct ana *a, uint64_t target, uint64_t slot)
{
	if (slot)
		return slot;
	return target && bin_plt_stub(a->b->bin, target, NULL, NULL) ? plt_slot(a, target) : 0;
}

/* The symbol of what a call or jump to target (through GOT slot got, its
 * own or its PLT stub's: call_slot) reaches; NULL unknown. */
static const char *callee_name(struct ana *a, uint64_t target, uint64_t got)
{
	if (got)
		return rw_slot_symbol(a->b, got);
	if (!target || bin_plt_stub(a->b->bin, target, NULL, NULL))
		return NULL;
	const struct bin_function *f = func_at(a, target);
	return f && f->addr == target ? f->name : NULL;
}

static const char *target_name(struct ana *a, uint64_t target, uint64_t slot)
{
	return callee_name(a, target, call_slot(a, target, slot));
}

/* ------------------------------------------------------------------ decoding */

static bool is_reg(const cs_x86_op *op, x86_reg r)
{
	return op->type == X86_OP_REG && op->reg == r;
}

static const x86_reg gpr_names[16][4] = {
	{X86_REG_RAX, X86_REG_EAX, X86_REG_AX, X86_REG_AL},
	{X86_REG_RCX, X86_REG_ECX, X86_REG_CX, X86_REG_CL},
	{X86_REG_RDX, X86_REG_EDX, X86_REG_DX, X86_REG_DL},
	{X86_REG_RBX, X86_REG_EBX, X86_REG_BX, X86_REG_BL},
	{X86_REG_RSP, X86_REG_ESP, X86_REG_SP, X86_REG_SPL},
	{X86_REG_RBP, X86_REG_EBP, X86_REG_BP, X86_REG_BPL},
	{X86_REG_RSI, X86_REG_ESI, X86_REG_SI, X86_REG_SIL},
	{X86_REG_RDI, X86_REG_EDI, X86_REG_DI, X86_REG_DIL},
	{X86_REG_R8, X86_REG_R8D, X86_REG_R8W, X86_REG_R8B},
	{X86_REG_R9, X86_REG_R9D, X86_REG_R9W, X86_REG_R9B},
	{X86_REG_R10, X86_REG_R10D, X86_REG_R10W, X86_REG_R10B},
	{X86_REG_R11, X86_REG_R11D, X86_REG_R11W, X86_REG_R11B},
	{X86_REG_R12, X86_REG_R12D, X86_REG_R12W, X86_REG_R12B},
	{X86_REG_R13, X86_REG_R13D, X86_REG_R13W, X86_REG_R13B},
	{X86_REG_R14, X86_REG_R14D, X86_REG_R14W, X86_REG_R14B},
	{X86_REG_R15, X86_REG_R15D, X86_REG_R15W, X86_REG_R15B}};

/* The general-purpose register r names (its number, 0 rax ... 15 r15) by
 * its 64, 32, 16 or low 8 bits (*width 8, 4, 2, 1), or -1 (ah, a vector
 * register, rip). */
static int gpr_number(x86_reg r, int *width)
{
	*width = 0;
	for (int n = 0; n < 16; n++)
		for (int k = 0; k < 4; k++)
			if (r == gpr_names[n][k]) {
				*width = 8 >> k;
				return n;
			}
	return -1;
}

/* The bit of the callee-saved register r belongs to (rbx, rbp, r12-r15),
 * or 0. */
static uint8_t callee_saved_bit(x86_reg r)
{
	int width, n = r == X86_REG_BH ? 3 : gpr_number(r, &width);
	switch (n) {
	case 3:                 /* rbx */
		return 1;
	case 5:                 /* rbp */
		return 2;
	case 12: case 13: case 14: case 15:
		return (uint8_t)(4 << (n - 12));
	default:
		return 0;
	}
}

/* The callee-saved registers insn writes (all of them when Capstone cannot
 * say: then no later push of one counts as saving it). */
static uint8_t callee_saved_written(csh cs, const cs_insn *insn)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr, bits = 0;
	if (cs_regs_access(cs, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return 0x3f;
	for (int i = 0; i < nwr; i++)
		bits |= callee_saved_bit(wr[i]);
	return bits;
}

static bool writes_reg(csh cs, const cs_insn *insn, x86_reg r1, x86_reg r2, x86_reg r3)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	if (cs_regs_access(cs, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return true;
	for (int i = 0; i < nwr; i++)
		if (wr[i] == r1 || wr[i] == r2 || wr[i] == r3)
			return true;
	return false;
}

/* The instruction's references to the stack through rsp or rbp (two at
 * most). */
static void stack_refs(const cs_insn *insn, struct ins *o)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *op = x->operands;
	for (int i = 0; i < x->op_count && o->nmem < 2; i++) {
		if (op[i].type != X86_OP_MEM || op[i].mem.segment != X86_REG_INVALID)
			continue;
		if (op[i].mem.base != X86_REG_RSP && op[i].mem.base != X86_REG_RBP)
			continue;
		struct mref *m = &o->mem[o->nmem++];
		m->disp = op[i].mem.disp;
		m->size = op[i].size ? op[i].size : 8;
		m->base = op[i].mem.base == X86_REG_RSP ? 7 : 6;
		m->lea = insn->id == X86_INS_LEA;
		m->disp_off = x->encoding.disp_offset;
		m->disp_size = x->encoding.disp_size;
	}
}

/* Control flow and the instructions that move rsp by themselves (push,
 * pop, leave, call, ret): true when insn is one of them. */
static bool classify_special(struct ana *a, const cs_insn *insn, struct ins *o)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *op = x->operands;
	switch (insn->id) {
	case X86_INS_NOP:
	case X86_INS_INT3:
		o->flags |= F_PAD;
		if (insn->id == X86_INS_INT3)
			o->eff = E_STOP;
		return true;
	case X86_INS_PUSH:
	case X86_INS_PUSHFQ:
		if (insn->id == X86_INS_PUSH && op[0].size != 8)
			o->eff = E_BAD;
		else
			o->eff = E_PUSH;
		if (x->op_count == 1 && op[0].type == X86_OP_REG)
			o->push_cs = callee_saved_bit(op[0].reg);
		return true;
	case X86_INS_POP:
	case X86_INS_POPFQ:
		o->eff = E_POP;
		if (insn->id == X86_INS_POP && (op[0].size != 8 || is_reg(&op[0], X86_REG_RSP) ||
						(op[0].type == X86_OP_MEM && op[0].mem.base == X86_REG_RSP)))
			o->eff = E_BAD;
		if (x->op_count == 1 && is_reg(&op[0], X86_REG_RBP))
			o->flags |= F_POP_RBP;
		return true;
	case X86_INS_LEAVE:
		o->eff = E_LEAVE;
		return true;
	case X86_INS_ENTER:
		o->eff = E_BAD;
		return true;
	case X86_INS_CALL:
		o->eff = E_CALL;
		o->target = x86_branch_target(insn);
		if (!o->target && x->op_count == 1 && op[0].type == X86_OP_MEM &&
		    op[0].mem.base == X86_REG_RIP && op[0].mem.index == X86_REG_INVALID)
			o->slot = x86_rip_target(insn);
		if (o->target == insn->address + insn->size)
			o->eff = E_PUSH;          /* call next: pushes its own address */
		else if (noreturn_name(target_name(a, o->target, o->slot)))
			o->flags |= F_NORET;
		return true;
	case X86_INS_RET:
		o->eff = x->op_count ? E_BAD : E_RET;
		return true;
	case X86_INS_JMP:
		o->target = x86_branch_target(insn);
		o->eff = o->target ? E_JMP : E_JMP_IND;
		return true;
	case X86_INS_UD2:
	case X86_INS_HLT:
		o->eff = E_STOP;
		return true;
	default:
		return false;
	}
}

/* An instruction that writes rsp as its destination (sub, add, lea, mov,
 * and): true when insn is one. */
static bool classify_rsp(const cs_insn *insn, struct ins *o)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *op = x->operands;
	bool to_rsp = x->op_count >= 1 && is_reg(&op[0], X86_REG_RSP);
	if (to_rsp && (insn->id == X86_INS_SUB || insn->id == X86_INS_ADD)) {
		if (x->op_count == 2 && op[1].type == X86_OP_IMM) {
			o->eff = E_ADJ;
			o->fld_coef = insn->id == X86_INS_SUB ? 1 : -1;
			o->fld_value = op[1].imm;
			o->imm = o->fld_coef * op[1].imm;
			o->fld_off = x->encoding.imm_offset;
			o->fld_size = x->encoding.imm_size;
		} else {
			o->eff = E_DYN;
		}
		return true;
	}
	if (to_rsp && insn->id == X86_INS_LEA) {
		const x86_op_mem *m = &op[1].mem;
		if (m->index != X86_REG_INVALID || m->segment != X86_REG_INVALID) {
			o->eff = E_DYN;
		} else if (m->base == X86_REG_RSP) {
			o->eff = E_ADJ;
			o->fld_coef = -1;
			o->fld_value = m->disp;
			o->imm = -m->disp;
			o->fld_off = x->encoding.disp_offset;
			o->fld_size = x->encoding.disp_size;
		} else if (m->base == X86_REG_RBP) {
			o->eff = E_LEA_RBP;
			o->imm = m->disp;
		} else {
			o->eff = E_DYN;
		}
		o->nmem = 0;               /* the lea itself addresses nothing */
		return true;
	}
	if (to_rsp && insn->id == X86_INS_MOV) {
		if (is_reg(&op[1], X86_REG_RBP)) {
			o->eff = E_LEA_RBP;
			o->imm = 0;
		} else {
			o->eff = E_DYN;
		}
		return true;
	}
	if (to_rsp && insn->id == X86_INS_AND) {
		o->eff = E_REALIGN;
		return true;
	}
	return false;
}

static void classify(struct ana *a, const cs_insn *insn, struct ins *o)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *op = x->operands;
	o->addr = insn->address;
	o->len = (uint8_t)insn->size;
	o->eff = E_OTHER;
	o->writes_cs = callee_saved_written(a->cs, insn);
	if (insn->size > 1 && insn->bytes[0] == 0xf0)
		o->flags |= F_LOCK;
	stack_refs(insn, o);
	if (classify_special(a, insn, o))
		return;
	if (x86_branch_target(insn)) {
		o->eff = E_JCC;            /* jcc, jrcxz, loop */
		o->target = x86_branch_target(insn);
		return;
	}
	if (classify_rsp(insn, o))
		return;
	if (insn->id == X86_INS_MOV && x->op_count == 2 && is_reg(&op[0], X86_REG_RBP) &&
	    is_reg(&op[1], X86_REG_RSP)) {
		o->flags |= F_SET_RBP;
		return;
	}
	if (writes_reg(a->cs, insn, X86_REG_RSP, X86_REG_ESP, X86_REG_SP))
		o->eff = E_BAD;
	if (writes_reg(a->cs, insn, X86_REG_RBP, X86_REG_EBP, X86_REG_BP))
		o->flags |= F_CLOBBER_RBP;
}

/* Append x to the growing array *v (*n of *cap); false when out of memory. */
static bool u64_push(uint64_t **v, size_t *n, size_t *cap, uint64_t x)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 256;
		uint64_t *g = realloc(*v, c * sizeof(*g));
		if (!g)
			return false;
		*v = g;
		*cap = c;
	}
	(*v)[(*n)++] = x;
	return true;
}

static void addr_add(struct ana *a, struct addr_set *s, uint64_t v)
{
	if (!u64_push(&s->v, &s->n, &s->cap, v))
		a->oom = true;
}

/* The entries of a switch's table of code addresses relative to the table
 * (gcc's for position-independent code: lea T(%rip); movslq (T,i,4); add
 * T; jmp), read from t while they point into code. */
static void relative_table_labels(struct ana *a, uint64_t t)
{
	for (uint32_t k = 0; k < 4096; k++) {
		int32_t e;
		if (bin_read(a->b->bin, t + 4 * k, &e, 4) < 0)
			return;
		uint64_t v = t + (uint64_t)(int64_t)e;
		if (v < a->code_lo || v >= a->code_hi)
			return;
		addr_add(a, &a->labels, v);
	}
}

/* The code addresses in insn's operands (an immediate, a rip-relative
 * address, the entries of a relative table one names): where an indirect
 * jump may go, `&&label` of a computed goto among them. */
static void operand_labels(struct ana *a, const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;
	uint64_t rip = x86_rip_target(insn);
	if (rip >= a->code_lo && rip < a->code_hi)
		addr_add(a, &a->labels, rip);
	else if (rip)
		relative_table_labels(a, rip);
	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_IMM && (uint64_t)x->operands[i].imm >= a->code_lo &&
		    (uint64_t)x->operands[i].imm < a->code_hi)
			addr_add(a, &a->labels, (uint64_t)x->operands[i].imm);
}

/* The code addresses in the binary's data, read at every byte offset of
 * every loaded section that is no code, and the addends of its relative
 * relocations (a PIE's or a library's absolute addresses; the linker need
 * not store them in place): the jump tables of its switches and computed
 * gotos among them. */
static void data_labels(struct ana *a)
{
	Elf *elf = a->b->elf;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)))
			continue;
		if (sh.sh_type == SHT_RELA) {
			GElf_Rela r;
			for (int i = 0; gelf_getrela(d, i, &r); i++)
				if (GELF_R_TYPE(r.r_info) == R_X86_64_RELATIVE &&
				    (uint64_t)r.r_addend >= a->code_lo && (uint64_t)r.r_addend < a->code_hi)
					addr_add(a, &a->labels, (uint64_t)r.r_addend);
			continue;
		}
		if (!(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & SHF_EXECINSTR) ||
		    sh.sh_type == SHT_NOBITS || !d->d_buf)
			continue;
		const uint8_t *p = d->d_buf;
		for (size_t i = 0; i + 8 <= d->d_size; i++) {
			uint64_t v;
			memcpy(&v, p + i, 8);
			if (v >= a->code_lo && v < a->code_hi)
				addr_add(a, &a->labels, v);
		}
	}
}

/* gcc's jump through a table of offsets relative to the table (position-
 * independent code): movslq (%rA,%rI,4),%rC; add %rA,%rC; jmp *%rC, the
 * three in a row; or, in an executable that is no PIE, through a table of
 * addresses: jmp *T(,%rI,8) (clone.c copies such tables: rewriter.h section
 * 1, Cloning).  sw follows the instructions; the jmp gets F_TABLE_JMP.
 * Which table it reads and how many entries its index may take are found
 * later, when its unit is known whole (switch_bounds). */
struct switch_jump {
	x86_reg base, dst;
	int seen;               /* 1: the movslq, 2: and the add */
};

static void switch_step(const cs_insn *insn, struct ins *o, struct switch_jump *sw)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *op = x->operands;
	int seen = sw->seen;
	sw->seen = 0;
	if (insn->id == X86_INS_MOVSXD && x->op_count == 2 && op[0].type == X86_OP_REG &&
	    op[1].type == X86_OP_MEM && op[1].mem.scale == 4 && op[1].mem.disp == 0 &&
	    op[1].mem.index != X86_REG_INVALID && op[1].mem.base != X86_REG_RIP &&
	    op[1].mem.base != X86_REG_INVALID && op[1].mem.segment == X86_REG_INVALID) {
		sw->base = op[1].mem.base;
		sw->dst = op[0].reg;
		sw->seen = 1;
	} else if (seen == 1 && insn->id == X86_INS_ADD && x->op_count == 2 &&
		   is_reg(&op[0], sw->dst) && is_reg(&op[1], sw->base)) {
		sw->seen = 2;
	} else if (seen == 2 && o->eff == E_JMP_IND && x->op_count == 1 && is_reg(&op[0], sw->dst)) {
		o->flags |= F_TABLE_JMP;
	} else if (o->eff == E_JMP_IND && x->op_count == 1 && op[0].type == X86_OP_MEM &&
		   op[0].mem.base == X86_REG_INVALID && op[0].mem.index != X86_REG_INVALID &&
		   op[0].mem.scale == 8 && op[0].mem.segment == X86_REG_INVALID && op[0].mem.disp) {
		o->flags |= F_TABLE_JMP;        /* jmp *T(,%rI,8): absolute entries */
	}
}

static int decode(struct ana *a, uint32_t fi, struct range *r)
{
	const struct bin_function *f = &a->bf[fi];
	*r = (struct range){.func = fi};
	uint8_t *code = malloc(f->size);
	r->ins = calloc(f->size, sizeof(*r->ins));     /* at most one per byte */
	if (!code || !r->ins || bin_read(a->b->bin, f->addr, code, f->size) < 0) {
		free(code);
		r->bad = f->addr;
		return code && r->ins ? 0 : -1;
	}
	const uint8_t *p = code;
	size_t left = f->size;
	uint64_t addr = f->addr;
	struct switch_jump sw = {0};
	cs_insn *insn = cs_malloc(a->cs);
	while (left) {
		if (!x86_disasm_iter(a->cs, &p, &left, &addr, insn)) {
			/* Trailing padding is fine; anything else is data in text. */
			for (; left; p++, left--, addr++)
				if (*p != 0x90 && *p != 0xcc && *p != 0) {
					r->bad = addr;
					break;
				}
			break;
		}
		struct ins *o = &r->ins[r->n++];
		memset(o, 0, sizeof(*o));
		classify(a, insn, o);
		operand_labels(a, insn);
		o->rip = x86_rip_target(insn);
		if (o->rip && insn->id == X86_INS_LEA)
			o->flags |= F_RIP_LEA;
		uint8_t disp_off;
		o->abs = x86_abs_operand(insn, &disp_off);
		switch_step(insn, o, &sw);
	}
	cs_free(insn, 1);
	free(code);
	r->st = calloc(r->n ? r->n : 1, sizeof(*r->st));
	if (!r->st)
		return -1;
	uint32_t fde = eh_fde_at(&a->b->eh, f->addr);
	if (fde != RW_NONE) {
		const struct eh_entry *e = &a->b->eh.e[fde];
		if (e->lsda && eh_lsda(a->b->bin, e->lsda, e->pc_begin, &r->cs, &r->ncs) < 0)
			r->bad = r->bad ? r->bad : f->addr;
		r->args_size = eh_args_size(&a->b->eh, fde);
	}
	return 0;
}

static void range_free(struct range *r)
{
	free(r->ins);
	free(r->st);
	free(r->cs);
}

/* ------------------------------------------------------------------ dataflow */

static void set_why(struct unit *u, enum rw_pad_why w, uint64_t at)
{
	if (u->why == RW_PAD_OK) {
		u->why = w;
		u->why_at = at;
	}
}

static bool find(const struct unit *u, uint64_t addr, uint32_t *ri, uint32_t *ii)
{
	for (uint32_t r = 0; r < u->nr; r++) {
		const struct range *g = &u->r[r];
		uint32_t lo = 0, hi = g->n;
		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;
			if (g->ins[mid].addr < addr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < g->n && g->ins[lo].addr == addr) {
			*ri = r;
			*ii = lo;
			return true;
		}
	}
	return false;
}

static bool in_unit(const struct unit *u, const struct ana *a, uint64_t addr)
{
	for (uint32_t r = 0; r < u->nr; r++) {
		const struct bin_function *f = &a->bf[u->r[r].func];
		if (addr >= f->addr && addr < f->addr + f->size)
			return true;
	}
	return false;
}

static void push_work(struct unit *u, uint32_t r, uint32_t i)
{
	if (!u64_push(&u->work, &u->nwork, &u->capwork, (uint64_t)r << 32 | i))
		u->conflict = true;
}

static bool same_state(struct st x, struct st y)
{
	if ((x.f & ~S_REACH) != (y.f & ~S_REACH))
		return false;
	return !(x.f & S_KNOWN) || x.k == y.k;
}

static void join(struct unit *u, uint32_t r, uint32_t i, struct st s)
{
	struct st *t = &u->r[r].st[i];
	s.f |= S_REACH;
	if (!(t->f & S_REACH)) {
		*t = s;
		push_work(u, r, i);
		return;
	}
	if (!same_state(*t, s)) {
		u->conflict = true;
		set_why(u, RW_PAD_STACK_STATE, u->r[r].ins[i].addr);
	} else if (s.w & ~t->w) {
		t->w |= s.w;            /* grows at most six times */
		push_work(u, r, i);
	}
}

/* Add the function containing addr as a fragment of the unit; false when it
 * cannot be one. */
static bool add_fragment(struct ana *a, struct unit *u, uint32_t owner, uint64_t addr)
{
	const struct bin_function *f = func_at(a, addr);
	uint32_t g = func_index(a, f);
	if (g == RW_NONE || !a->cand[g])
		return false;
	if (a->owner[g] != RW_NONE && a->owner[g] != owner) {
		a->claimed_twice[g] = true;
		set_why(u, RW_PAD_FRAGMENT_SHARED, addr);
		u->conflict = true;
		return false;
	}
	if (a->owner[g] == owner)
		return true;
	if (u->nr == u->cap) {
		uint32_t cap = u->cap ? 2 * u->cap : 4;
		struct range *v = realloc(u->r, cap * sizeof(*v));
		if (!v)
			return false;
		u->r = v;
		u->cap = cap;
	}
	if (decode(a, g, &u->r[u->nr]) < 0)
		return false;
	u->nr++;
	a->owner[g] = owner;
	return true;
}

/* A tail call by the jump at `from` to target (through a PLT stub's GOT
 * slot, or 0); one that cannot be recorded counts as indirect (its callee's
 * stack-argument bound unknown). */
static void add_tail_call(struct unit *u, uint64_t from, uint64_t target, uint64_t slot)
{
	u->tail = true;
	struct rw_tail_jump *v = realloc(u->tail_to, (u->ntail_to + 1) * sizeof(*v));
	if (!v) {
		u->tail_indirect = true;
		return;
	}
	u->tail_to = v;
	u->tail_to[u->ntail_to++] = (struct rw_tail_jump){.at = from, .to = target, .slot = slot};
}

/* Follow a direct branch from state s to target. */
static void branch(struct ana *a, struct unit *u, uint32_t owner, uint64_t from, uint64_t target,
		   struct st s)
{
	uint32_t r, i;
	if (!in_unit(u, a, target)) {
		bool tail = (s.f & S_KNOWN) && s.k == 8 && !(s.f & S_PAD);
		if (tail) {
			add_tail_call(u, from, target, call_slot(a, target, 0));
			return;
		}
		if (!add_fragment(a, u, owner, target)) {
			set_why(u, RW_PAD_STACK_STATE, from);
			u->conflict = true;
			return;
		}
	}
	/* glibc skips a lock prefix when single-threaded (malloc's catomic_*:
	 * cmpl $0,%fs:0x18; je 1f; lock; 1: cmpxchg): the jump lands on the
	 * same instruction without it, the same stack effect, and a clone
	 * keeps its bytes */
	if (find(u, target, &r, &i) ||
	    (find(u, target - 1, &r, &i) && (u->r[r].ins[i].flags & F_LOCK)))
		join(u, r, i, s);
	else {
		set_why(u, RW_PAD_UNDECODABLE, from);   /* into the middle of an insn */
		u->conflict = true;
	}
}

/* Whether the CFI row after a call that does not return by name (a static
 * helper: glibc's malloc_printerr) says the call does not return: the
 * compiler lays out the code after it for the jumps into that block, so its
 * row gives another rsp than the call's (libc's _int_malloc: `call
 * malloc_printerr` in its frame, then `mov errno ...; ret` at entry depth,
 * which a fall through would make inconsistent).  The unwinder trusts that
 * row at every instruction, so the call falling through would break it. */
static bool cfi_says_noreturn(struct ana *a, const struct range *g, uint32_t i, struct st s)
{
	while (i + 1 < g->n && (g->ins[i + 1].flags & F_PAD))
		i++;            /* the row of the code after the alignment nops */
	struct bin_cfa cfa;
	if (!(s.f & S_KNOWN) || i + 1 == g->n ||
	    bin_cfa_at(a->b->bin, g->ins[i + 1].addr, &cfa) < 0)
		return false;
	return cfa.reg == BIN_CFA_RSP && cfa.offset != s.k;
}

static void step(struct ana *a, struct unit *u, uint32_t owner, uint32_t r, uint32_t i)
{
	struct range *g = &u->r[r];
	const struct ins *in = &g->ins[i];
	struct st s = g->st[i];
	bool known = s.f & S_KNOWN, fall = true;
	s.w |= in->writes_cs;
	switch (in->eff) {
	case E_PUSH:
		s.k += 8;
		break;
	case E_POP:
		if (in->flags & F_POP_RBP)
			s.f &= ~S_RBP;
		s.k -= 8;
		if ((s.f & S_PAD) && known && s.k <= u->k0) {
			/* gcc releases an 8-byte allocation by a pop on some
			 * paths (python3.11's subtype_dealloc: sub $8,%rsp ...
			 * pop %rax; pop %rbx; ... jmp, a tail call); a padding
			 * would stay allocated, the rest of the unit is sound */
			s.f &= ~S_PAD;
			set_why(u, RW_PAD_POP_RELEASE, in->addr);
		}
		break;
	case E_ADJ:
		if (!known) {
			if (in->imm < 0 && (s.f & S_PAD))
				set_why(u, RW_PAD_STACK_STATE, in->addr);
			break;
		}
		if (!(s.f & S_PAD) && in->imm > 0) {
			/* the allocation */
			if (u->n_alloc == 0) {
				u->n_alloc = 1;
				u->alloc_r = (int32_t)r;
				u->alloc_i = (int32_t)i;
				u->k0 = s.k;
			} else if (u->alloc_r != (int32_t)r || u->alloc_i != (int32_t)i) {
				u->n_alloc = 2;
				set_why(u, RW_PAD_MULTI_ALLOC, in->addr);
			}
			s.f |= S_PAD;
		} else if ((s.f & S_PAD) && in->imm < 0 && s.k + in->imm <= u->k0) {
			s.f &= ~S_PAD;                  /* a deallocation */
		}
		s.k += (int32_t)in->imm;
		break;
	case E_LEA_RBP:
		if (!(s.f & S_RBP)) {
			set_why(u, RW_PAD_STACK_STATE, in->addr);
			s.f &= ~S_KNOWN;
			break;
		}
		s.k = 16 - (int32_t)in->imm;
		s.f |= S_KNOWN;
		if (s.f & S_PAD) {
			if (s.k <= u->k0)
				s.f &= ~S_PAD;
			else
				set_why(u, RW_PAD_RBP_RESTORE, in->addr);
		}
		break;
	case E_LEAVE:
		if (!(s.f & S_RBP))
			set_why(u, RW_PAD_STACK_STATE, in->addr);
		s.k = 8;
		s.f = (s.f | S_KNOWN) & ~(S_PAD | S_RBP);
		break;
	case E_DYN:
		if (!(s.f & S_RBP))
			set_why(u, RW_PAD_DYNAMIC, in->addr);
		s.f &= ~S_KNOWN;
		break;
	case E_REALIGN:
		set_why(u, RW_PAD_REALIGN, in->addr);
		s.f &= ~S_KNOWN;
		break;
	case E_BAD:
		set_why(u, RW_PAD_STACK_STATE, in->addr);
		s.f &= ~S_KNOWN;
		break;
	case E_CALL:
		if ((in->flags & F_NORET) || cfi_says_noreturn(a, g, i, s))
			fall = false;
		break;
	case E_RET:
		if (!known || s.k != 8 || (s.f & S_PAD))
			set_why(u, RW_PAD_STACK_STATE, in->addr);
		fall = false;
		break;
	case E_JMP:
		branch(a, u, owner, in->addr, in->target, s);
		fall = false;
		break;
	case E_JCC:
		branch(a, u, owner, in->addr, in->target, s);
		break;
	case E_JMP_IND:
		if (in->flags & F_TABLE_JMP)
			u->ind_switch = true;
		else
			u->ind_other = true;
		if (known && s.k == 8 && !(s.f & S_PAD))
			u->tail = u->tail_indirect = true;   /* maybe a tail call */
		else
			u->ind_inner = true;
		if (u->nind == 0) {
			u->ind = s;
			u->nind = 1;
		} else if (!same_state(u->ind, s)) {
			u->nind = 2;
		}
		fall = false;
		break;
	case E_STOP:
		fall = false;
		break;
	default:
		break;
	}
	if (in->flags & F_SET_RBP) {
		if (known && s.k == 16)
			s.f |= S_RBP;
		else
			s.f &= ~S_RBP;
	} else if (in->flags & F_CLOBBER_RBP) {
		s.f &= ~S_RBP;
	}
	if (fall && i + 1 < g->n && g->ins[i + 1].addr == in->addr + in->len)
		join(u, r, i + 1, s);
	else if (fall && i + 1 == g->n && in->eff != E_CALL)
		u->falls_off = true;    /* a call last is one that does not return */
}

static void run(struct ana *a, struct unit *u, uint32_t owner)
{
	while (u->nwork && !u->conflict) {
		uint64_t w = u->work[--u->nwork];
		step(a, u, owner, (uint32_t)(w >> 32), (uint32_t)w);
	}
}

/* Landing pads start with the rsp of the calls they catch. */
static bool seed_landing_pads(struct ana *a, struct unit *u, uint32_t owner)
{
	bool any = false;
	for (uint32_t r = 0; r < u->nr && !u->conflict; r++) {
		for (uint32_t c = 0; c < u->r[r].ncs; c++) {
			const struct eh_callsite *cs = &u->r[r].cs[c];
			if (!cs->lp)
				continue;
			struct range *g = &u->r[r];
			struct st s = {0};
			for (uint32_t i = 0; i < g->n; i++)
				if (g->ins[i].eff == E_CALL && g->ins[i].addr >= cs->start &&
				    g->ins[i].addr < cs->start + cs->len && (g->st[i].f & S_REACH)) {
					s = g->st[i];
					break;
				}
			if (!(s.f & S_REACH))
				continue;
			if (u->r[r].args_size)
				s.f &= ~S_KNOWN;
			if (!in_unit(u, a, cs->lp) && !add_fragment(a, u, owner, cs->lp)) {
				set_why(u, RW_PAD_STACK_STATE, cs->lp);
				u->conflict = true;
				return false;
			}
			uint32_t lr, li;
			if (!find(u, cs->lp, &lr, &li)) {
				set_why(u, RW_PAD_UNDECODABLE, cs->lp);
				u->conflict = true;
				return false;
			}
			if (!(u->r[lr].st[li].f & S_REACH))
				any = true;
			join(u, lr, li, s);
		}
	}
	return any;
}

/* Jump-table targets start with the state of the (single) indirect jump:
 * the first instruction of each run of unreached code.  Whether the one
 * before was reached is as it was before this seeding: the rest of a run
 * takes its state from the code before it in the run (seeding every
 * instruction of lua5.4's 0x22416 with the table's state made its `add
 * $0x10,%rsp; pop %rbx; ret` conflict with itself). */
static bool seed_unreached(struct unit *u)
{
	if (u->nind != 1)
		return false;
	bool any = false;
	for (uint32_t r = 0; r < u->nr; r++) {
		struct range *g = &u->r[r];
		bool after = true;      /* the one before was reached, or padding */
		for (uint32_t i = 0; i < g->n; i++) {
			bool reached = g->st[i].f & S_REACH, pad = g->ins[i].flags & F_PAD;
			if (!reached && !pad && after) {
				join(u, r, i, u->ind);
				any = u->ind_table = true;
			}
			after = reached || pad;
		}
	}
	return any;
}

/* ------------------------------------------------------------------ checks */

/* Largest D (multiple of 16) that keeps edit e encodable. */
static int64_t edit_room(const struct rw_edit *e)
{
	int64_t lim = e->size == 1 ? (e->sign > 0 ? INT8_MAX - e->value : e->value - INT8_MIN)
				   : (e->sign > 0 ? INT32_MAX - e->value : e->value - INT32_MIN);
	return lim < 0 ? 0 : lim & ~(int64_t)15;
}

static int add_edit(struct rw_unit *ru, uint64_t at, int64_t value, int size, int sign)
{
	for (uint32_t i = 0; i < ru->nedits; i++)
		if (ru->edits[i].at == at)
			return 0;
	struct rw_edit *v = realloc(ru->edits, (ru->nedits + 1) * sizeof(*v));
	if (!v)
		return -1;
	ru->edits = v;
	ru->edits[ru->nedits++] = (struct rw_edit){at, value, (uint8_t)size, (int8_t)sign};
	return 0;
}

static int add_call(struct ana *a, const struct ins *in, uint32_t owner, int32_t kr)
{
	struct rw_binary *b = a->b;
	if (b->ncalls == b->capcalls) {
		size_t cap = b->capcalls ? 2 * b->capcalls : 1024;
		struct rw_call *v = realloc(b->calls, cap * sizeof(*v));
		if (!v)
			return -1;
		b->calls = v;
		b->capcalls = cap;
	}
	b->calls[b->ncalls++] = (struct rw_call){
		.insn = in->addr,
		.site = in->addr + in->len - 1,
		.len = in->len,
		.target = in->target,
		.slot = in->slot,
		.func = owner,
		.args_stored = kr,
	};
	return 0;
}

/* Check the CFI against the dataflow at one instruction. */
static void check_cfi(struct ana *a, struct unit *u, const struct ins *in, struct st s)
{
	struct bin_cfa cfa;
	if (bin_cfa_at(a->b->bin, in->addr, &cfa) < 0) {
		set_why(u, RW_PAD_NO_CFI, in->addr);
		return;
	}
	if (cfa.reg == BIN_CFA_RBP) {
		if (!(s.f & S_RBP) || cfa.offset != 16)
			set_why(u, RW_PAD_CFI_MISMATCH, in->addr);
	} else if ((s.f & S_KNOWN) && cfa.offset != s.k) {
		set_why(u, RW_PAD_CFI_MISMATCH, in->addr);
	}
}

/* ------------------------------------------------------------------ entry wrappers */

/* In-place refusals that come from the allocation's shape, not from an
 * incomplete analysis: an entry wrapper does not need the allocation. */
static bool shape_refusal(enum rw_pad_why w)
{
	switch (w) {
	case RW_PAD_NO_ALLOC:
	case RW_PAD_MULTI_ALLOC:
	case RW_PAD_IMM_FULL:
	case RW_PAD_DISP_FULL:
	case RW_PAD_STRADDLE:
	case RW_PAD_SAVED_ADDR:
	case RW_PAD_LARGE_FRAME:
	case RW_PAD_CALL_OUTSIDE:
	case RW_PAD_RSP_LOCALS:
	case RW_PAD_RBP_RESTORE:
	case RW_PAD_POP_RELEASE:
	case RW_PAD_CFI_EDIT:
		return true;
	default:
		return false;
	}
}

/* Does the unit read, or take the address of, its return address or what
 * lies above it (stack arguments)?  An rsp-relative access at an unknown
 * state counts. */
static bool reaches_ra(const struct unit *u)
{
	for (uint32_t r = 0; r < u->nr; r++)
		for (uint32_t i = 0; i < u->r[r].n; i++) {
			const struct ins *in = &u->r[r].ins[i];
			struct st s = u->r[r].st[i];
			for (int m = 0; m < in->nmem && (s.f & S_REACH); m++) {
				const struct mref *mr = &in->mem[m];
				int64_t end = mr->disp + (mr->lea ? 1 : mr->size);
				if (mr->base == 6 && (s.f & S_RBP) && end > 8)
					return true;
				if (mr->base == 7 && (!(s.f & S_KNOWN) || end > s.k - 8))
					return true;
			}
		}
	return false;
}

/* Does a jump of the unit land in [lo, hi), or a call in (lo, hi)?  A call
 * of the entry is a call through the wrapper, as from anywhere else. */
static bool branches_into(const struct unit *u, uint64_t lo, uint64_t hi)
{
	for (uint32_t r = 0; r < u->nr; r++)
		for (uint32_t i = 0; i < u->r[r].n; i++) {
			const struct ins *in = &u->r[r].ins[i];
			bool jump = in->eff == E_JMP || in->eff == E_JCC;
			if ((jump || in->eff == E_CALL) && in->target >= lo + !jump && in->target < hi)
				return true;
		}
	return false;
}

/* Whether a jmp at f's entry that ends at jmp_end, past f's last
 * instruction, overwrites only alignment padding before the next function
 * (training's hooks take such a function the same way). */
static bool padding_after(struct ana *a, const struct bin_function *f, uint64_t jmp_end)
{
	uint64_t end = f->addr + f->size;
	size_t i = (size_t)(f - a->bf);
	uint64_t next = i + 1 < a->nbf ? a->bf[i + 1].addr : end + 16;
	uint64_t pad_end = next - end < 16 ? next : end + 16;
	uint8_t pad[16];
	return jmp_end <= next && bin_read(a->b->bin, end, pad, pad_end - end) >= 0 &&
	       x86_is_padding(a->cs, pad, pad_end - end, end);
}

/* The island for a jmp rel8 that ends at patch_end, at f's entry (f:
 * a->bf[fi]; rewriter.h section 1, Islands), or {0}.  The padding before
 * f, from the end of the code before it, must decode as nops, so that code
 * falling through it meets the island on an instruction boundary; the
 * island is its last boundary with room for the jmp rel32, in rel8 reach,
 * and an earlier boundary must have room for the island training writes
 * when it hooks the rewritten f (train/analysis.c).  Jumps of other units
 * into the island are looked for once every unit is known
 * (refuse_entered_inside). */
static struct rw_island find_island(struct ana *a, size_t fi, uint64_t patch_end)
{
	enum { JMP32 = 5, REL8_REACH = 128, MAX_ISLAND = 16 };
	const struct bin_function *f = &a->bf[fi];
	uint64_t lo = 0, sec_start, sec_end;
	for (size_t j = fi; j-- > 0 && j + 16 > fi;) {
		/* a short function's own entry patch may cover the padding after it */
		uint8_t head[4];
		const struct bin_function *e = &a->bf[j];
		size_t kept = bin_read(a->b->bin, e->addr, head, 4) == 0 ? x86_endbr64_len(head, 4) : 0;
		uint64_t end = e->addr + e->size, patch_end = e->addr + kept + JMP32;
		end = end > patch_end ? end : patch_end;
		lo = end > lo ? end : lo;
	}
	if (bin_exec_range(a->b->bin, f->addr, &sec_start, &sec_end) == 0 && lo < sec_start)
		lo = sec_start;
	uint8_t pad[REL8_REACH];
	size_t n = lo < f->addr ? (size_t)(f->addr - lo) : 0;
	if (n < 2 * JMP32 || n > sizeof(pad) || bin_read(a->b->bin, lo, pad, n) < 0)
		return (struct rw_island){0, 0};
	uint64_t bound[REL8_REACH + 1];
	size_t nb = 0, off = 0, k;
	cs_insn *insn = cs_malloc(a->cs);
	while (insn && off < n && (k = x86_padding_insn(a->cs, insn, pad + off, n - off, lo + off, 0))) {
		bound[nb++] = lo + off;
		off += k;
	}
	if (insn)
		cs_free(insn, 1);
	if (off < n)
		return (struct rw_island){0, 0};
	bound[nb] = f->addr;
	for (size_t r = nb; r-- > 0;) {
		if (bound[r] + JMP32 > f->addr)
			continue;
		if (bound[r] + REL8_REACH < patch_end)
			break;
		size_t e = r + 1;
		while (bound[e] < bound[r] + JMP32)
			e++;
		bool room = false;
		for (size_t t = 0; t < r && !room; t++)
			room = bound[t] + JMP32 <= bound[r] && bound[t] + REL8_REACH >= patch_end;
		if (!room || bound[e] - bound[r] > MAX_ISLAND)
			break;
		return (struct rw_island){bound[r], (uint8_t)(bound[e] - bound[r])};
	}
	return (struct rw_island){0, 0};
}

/* The instructions an entry wrapper displaces: whole ones after the
 * endbr64 covering `need` bytes (5 for a jmp rel32, 2 for a jmp rel8 to an
 * island), each relocatable, with a known CFA - SP before it (into d).  A
 * branch among them (test; je) keeps its target, which must lie past them
 * in f; a ret or jmp may end them (a tail call: the jmp back after them is
 * never reached), and when it ends f before `need` bytes the patch covers
 * the padding after f (sqlite3's `mov -8(%rdi),%eax; ret`).  A direct call
 * may end them too (libtcl's Tcl_Alloc: `push %rbx; mov %edi,%ebx; call
 * TclpAlloc@plt`): its copy pushes the original return address and jumps
 * (x86_relocate_insn), so the callee returns into f past the patch, as it
 * did.  No other call: its return would land in the displaced copy.
 * d->len counts the bytes patched. */
static bool plan_displacement(struct ana *a, const struct unit *u, struct rw_displaced *d,
			      uint32_t need)
{
	const struct range *g = &u->r[0];
	const struct bin_function *f = &a->bf[g->func];
	uint8_t code[64];
	size_t avail = f->size < sizeof(code) ? f->size : sizeof(code);
	if (bin_read(a->b->bin, f->addr, code, avail) < 0)
		return false;
	d->off = (uint8_t)x86_endbr64_len(code, avail);
	const uint8_t *p = code + d->off;
	size_t left = avail - d->off;
	uint64_t addr = f->addr + d->off;
	uint32_t i = d->off ? 1 : 0, len = 0;
	uint64_t targets[RW_ENTRY_MAX_INSNS];
	uint32_t ntargets = 0;
	bool stop = false;
	cs_insn *insn = cs_malloc(a->cs);
	bool ok = insn != NULL;
	d->nins = 0;
	while (ok && len < need && !stop) {
		const struct ins *in = i < g->n ? &g->ins[i] : NULL;
		bool branch = in && (in->eff == E_JMP || in->eff == E_JCC);
		bool call = in && in->eff == E_CALL && in->target;
		ok = in && in->addr == addr && (g->st[i].f & S_KNOWN) &&
		     d->nins < RW_ENTRY_MAX_INSNS &&
		     /* (a `call next` pushes too: its copy would jump into the patch) */
		     (in->eff == E_OTHER || (in->eff == E_PUSH && !in->target) || in->eff == E_POP ||
		      in->eff == E_ADJ || in->eff == E_RET || branch || call) &&
		     x86_disasm_iter(a->cs, &p, &left, &addr, insn) && !x86_unrelocatable(insn);
		if (ok) {
			if (branch || (call && in->target != f->addr))
				targets[ntargets++] = in->target;   /* f's own entry: its patch */
			stop = in->eff == E_RET || in->eff == E_JMP || call;
			d->k[d->nins++] = g->st[i].k;
			len += in->len;
			d->end[d->nins - 1] = (uint8_t)len;
			i++;
		}
	}
	if (insn)
		cs_free(insn, 1);
	if (ok && stop && len < need) {
		ok = addr == f->addr + f->size && padding_after(a, f, f->addr + d->off + need);
		len = need;
	}
	d->len = (uint8_t)len;
	for (uint32_t t = 0; ok && t < ntargets; t++)
		ok = targets[t] < f->addr || targets[t] >= f->addr + d->off + len;
	if (!ok || len < need || len > RW_ENTRY_MAX_BYTES)
		return false;
	if (stop) {
		d->k[d->nins] = d->k[d->nins - 1];
		return true;
	}
	/* the jmp back runs with the state after them */
	if (i >= g->n || !(g->st[i].f & S_KNOWN))
		return false;
	d->k[d->nins] = g->st[i].k;
	return true;
}

/* The jmp at the entry of f (at addr; into ru->entry, ru->island): a jmp
 * rel32 where the instructions it covers can be displaced and no branch of
 * f's unit lands among them, else a jmp rel8 to f's island (ru->near, found
 * before), else why not. */
static enum rw_entry_why plan_entry_jmp(struct ana *a, const struct unit *u, struct rw_unit *ru,
					uint64_t addr)
{
	ru->island = (struct rw_island){0, 0};
	enum rw_entry_why why = !plan_displacement(a, u, &ru->entry, 5) ? RW_ENTRY_DISPLACE
				: branches_into(u, addr, addr + ru->entry.off + ru->entry.len)
					? RW_ENTRY_BRANCH_TARGET
					: RW_ENTRY_OK;
	if (why != RW_ENTRY_OK && ru->near_island.at) {
		ru->entry = ru->near;
		ru->island = ru->near_island;
		why = RW_ENTRY_OK;
	}
	return why;
}

/* The alternative to a jmp rel32 at f's entry: a jmp rel8 to an island
 * (into ru->near, ru->near_island; near_island.at 0 when there is none). */
static void plan_near(struct ana *a, const struct unit *u, struct rw_unit *ru, uint64_t addr)
{
	ru->near_island = (struct rw_island){0, 0};
	if (plan_displacement(a, u, &ru->near, 2) &&
	    !branches_into(u, addr, addr + ru->near.off + ru->near.len))
		ru->near_island = find_island(a, u->r[0].func, addr + ru->near.off + 2);
}

/* Whether function `owner`, refused in place, can be padded by an entry
 * wrapper (rewriter.h section 1). */
static enum rw_entry_why entry_why(struct ana *a, const struct unit *u, uint32_t owner,
				   uint32_t ncalls)
{
	const struct rw_func *rf = &a->b->funcs[owner];
	/* padded in place up to its allocation's room (an imm8 of 127: most of
	 * cmake's functions stop at 112 bytes or less), by a wrapper beyond */
	bool room_only = rf->pad_mask > 1 && rw_mask_max(rf->pad_mask) < RW_MAX_AMOUNT;
	if (rf->pad_mask > 1 && !room_only)
		return RW_ENTRY_IN_PLACE;
	if (u->nr > 1 || a->cand[owner])
		return RW_ENTRY_FRAGMENT;
	if (u->conflict || u->unreached || u->r[0].bad || !u->r[0].n ||
	    (!room_only && !shape_refusal(rf->pad_why)))
		return RW_ENTRY_SHAPE;
	if (!ncalls)
		return RW_ENTRY_LEAF;
	if (u->falls_off)
		return RW_ENTRY_FALLS_OFF;
	if (reaches_ra(u))
		return RW_ENTRY_ARGS;
	if (returns_twice_name(rf->name))
		return RW_ENTRY_RETURNS_TWICE;
	return plan_entry_jmp(a, u, &a->b->units[owner], rf->addr);
}

/* Does a range of the unit hold bytes that are not code? */
static bool undecodable(const struct unit *u)
{
	for (uint32_t r = 0; r < u->nr; r++)
		if (u->r[r].bad)
			return true;
	return false;
}

/* The caller-side bound of the stack arguments of the call at pc is what
 * lies between rsp there and the lowest slot known not to be an argument
 * (CFA - the result): the saved registers, as the unit's pushes say and as
 * the call's CFI row says, the shallower of the two (a slot only one of
 * them calls saved may hold an argument: python3.11 pushes %rbx twice, the
 * second time to align, and its CFI names the first); with rbp, also the
 * lowest rbp-relative local (lmin). */
static int64_t frame_top(int64_t save, bool fp, int64_t lmin)
{
	int64_t top = fp ? 16 : 8;     /* the return address, and the saved rbp */
	if (save > top)
		top = save;
	if (fp && 16 - lmin > top)
		top = 16 - lmin;
	return top;
}

static int64_t args_top(const struct rw_binary *b, const struct unit *u, uint64_t pc, bool fp,
			int64_t lmin)
{
	int64_t save = u->k_save, cfi;
	if (bin_saved_depth(b->bin, pc, &cfi) == 0 && cfi < save)
		save = cfi;
	return frame_top(save, fp, lmin);
}

/* What one pass over a unit's reached instructions tells finish_unit. */
struct unit_scan {
	int64_t lmin;           /* lowest rbp-relative reference */
	uint32_t ncalls, calls_out;     /* calls, and those outside the padding */
	uint64_t call_out_at;
	bool kc_unknown;        /* the stack arguments it reads are not bounded */
	int64_t kc;             /* else their bytes */
};

/* The unit's instructions once: unreached code, CFI, the saved registers,
 * calls, rbp-relative references and the caller's stack arguments read. */
static void scan_unit(struct ana *a, struct unit *u, uint32_t owner, struct unit_scan *sc)
{
	*sc = (struct unit_scan){.kc_unknown = u->conflict || u->tail_indirect};
	for (uint32_t r = 0; r < u->nr; r++) {
		const struct range *g = &u->r[r];
		if (g->bad)
			set_why(u, RW_PAD_UNDECODABLE, g->bad);
		for (uint32_t i = 0; i < g->n; i++) {
			const struct ins *in = &g->ins[i];
			struct st s = g->st[i];
			if (!(s.f & S_REACH)) {
				if (!(in->flags & F_PAD) && (in->eff != E_OTHER || in->nmem)) {
					u->unreached = true;
					set_why(u, RW_PAD_STACK_STATE, in->addr);
				}
				if (in->eff == E_CALL)
					add_call(a, in, owner, -1);
				continue;
			}
			check_cfi(a, u, in, s);
			/* the saved registers: pushes of callee-saved ones that
			 * still hold the caller's values (lua5.4: a push of %r14
			 * that passes a stack argument is no save; counted as one,
			 * it bounded the call's arguments to 0 bytes, and the
			 * trampoline of that call copied none) */
			if ((in->push_cs & ~s.w) && (s.f & S_KNOWN) && !(s.f & S_PAD) &&
			    s.k + 8 > u->k_save)
				u->k_save = s.k + 8;
			if (in->eff == E_CALL) {
				sc->ncalls++;
				if (!(s.f & S_PAD) && !sc->calls_out++)
					sc->call_out_at = in->addr;
			}
			for (int m = 0; m < in->nmem; m++) {
				const struct mref *mr = &in->mem[m];
				if (mr->base == 6 && (s.f & S_RBP)) {
					if (mr->disp < sc->lmin)
						sc->lmin = mr->disp;
					if (mr->disp >= 16) {
						if (mr->lea)
							sc->kc_unknown = true;
						else if (mr->disp - 16 + mr->size > sc->kc)
							sc->kc = mr->disp - 16 + mr->size;
					}
				}
				if (mr->base == 7 && (s.f & S_KNOWN) && mr->disp >= s.k) {
					if (mr->lea)
						sc->kc_unknown = true;
					else if (mr->disp - s.k + mr->size > sc->kc)
						sc->kc = mr->disp - s.k + mr->size;
				}
			}
		}
	}
}

static bool stub_row_ok(const struct rw_binary *b, uint64_t insn, uint64_t ret);

/* Does a branch or a landing pad of unit u land in (lo, hi]? */
static bool lands_in(const struct unit *u, uint64_t lo, uint64_t hi)
{
	for (uint32_t r = 0; r < u->nr; r++) {
		for (uint32_t i = 0; i < u->r[r].n; i++) {
			uint64_t t = u->r[r].ins[i].target;
			if (t > lo && t <= hi)
				return true;
		}
		for (uint32_t c = 0; c < u->r[r].ncs; c++) {
			uint64_t t = u->r[r].cs[c].lp;
			if (t > lo && t <= hi)
				return true;
		}
	}
	return false;
}

/* Can Capstone decode code[lo, hi) into whole instructions that can be
 * moved (x86_relocate_insn), the last one excepted (the indirect call or
 * jump, whose operand a stub compares: x86_cmp_r11_of)? */
static bool movable(struct ana *a, uint64_t lo, uint64_t hi, uint64_t last)
{
	uint8_t code[RW_PROMOTE_MAX_BYTES];
	if (hi - lo > sizeof(code) || bin_read(a->b->bin, lo, code, hi - lo) < 0)
		return false;
	const uint8_t *p = code;
	size_t left = hi - lo;
	uint64_t addr = lo;
	cs_insn *insn = cs_malloc(a->cs);
	bool ok = insn != NULL;
	while (ok && addr < last)
		ok = x86_disasm_iter(a->cs, &p, &left, &addr, insn) && !x86_unrelocatable(insn);
	uint8_t cmp[RW_PROMOTE_MAX_BYTES + 1];
	ok = ok && addr == last && x86_cmp_r11_of(p, left, last, last, cmp) > 0;
	if (insn)
		cs_free(insn, 1);
	return ok;
}

/* The first of the whole instructions before indirect call g->ins[i] that
 * its promotion stub displaces with it (rewriter.h section 1, Promoted
 * calls), or 0 when it cannot be promoted: they must move whole (no
 * branch, push or other write of rsp, nothing that lands among them or on
 * the call: no branch or landing pad of the unit, nor a code address that
 * an indirect jump of it could go to, refuse_promote_targets), lie past
 * the bytes training's hook displaces at the range's start (at most an
 * endbr64 and 5 bytes), and the caller's CFI row at the call must be one a
 * stub can repeat.  Other units' jumps into them are checked once every
 * unit is known (refuse_promote_targets). */
static uint64_t promote_start(struct ana *a, const struct unit *u, const struct range *g,
			      uint32_t i, uint64_t lowest)
{
	const struct ins *call = &g->ins[i];
	bool jumps = u->ind_inner || u->ind_table, tail = call->eff == E_JMP_IND;
	if (call->target || call->slot || u->conflict || g->bad)
		return 0;
	uint64_t start = call->addr, end = call->addr + call->len;
	for (uint32_t j = i; end - start < 5;) {
		const struct ins *p = j ? &g->ins[--j] : NULL;
		/* a tail jump's epilogue moves too: its stub repeats its rows */
		bool epilogue = p && tail && (p->eff == E_POP || p->eff == E_ADJ ||
					      p->eff == E_LEA_RBP || p->eff == E_LEAVE);
		if (!p || (p->eff != E_OTHER && !epilogue) || p->addr + p->len != start ||
		    !(g->st[j].f & S_REACH))
			return 0;
		start = p->addr;
	}
	if (start < lowest || end - start > RW_PROMOTE_MAX_BYTES ||
	    lands_in(u, start, call->addr) || !stub_row_ok(a->b, call->addr, call->addr + call->len) ||
	    !movable(a, start, end, call->addr))
		return 0;
	/* where its indirect jumps go: refuse_promote_targets */
	if (jumps && !u64_push(&a->jump_callers.v, &a->jump_callers.n, &a->jump_callers.cap,
			       call->addr))
		return 0;
	return start;
}

/* The indirect tail jumps of unit u (at k = 8: a tail call through a
 * register or memory), each with the first of the instructions its
 * promotion stub displaces (rewriter.h section 1, Tail chains), as a
 * promoted call's (promote_start), but for the bytes training's hook
 * displaces: nothing returns to the jump, and the hook moves the stub's
 * jmp rel32 (its endbr64 stays); and they may be the epilogue (pops, an
 * add to rsp, leave), whose rows the stub's FDE repeats (eh_window_cfa);
 * its FDE has no LSDA (the stub gets none: it cannot throw).  Where they
 * meet the instructions the entry's jump would displace, the function takes
 * no dispatch (nor has it an entry wrapper).  Into a->tails[owner].ind; rw_func.tail_promotable when every
 * one of them has a stub and they are its only indirect jumps. */
static void unit_tail_ind(struct ana *a, struct unit *u, uint32_t owner)
{
	struct rw_func *rf = &a->b->funcs[owner];
	const struct rw_unit *ru = &a->b->units[owner];
	struct unit_tails *t = &a->tails[owner];
	bool ok = rf->tails_known && !u->falls_off && !u->ind_inner && !u->ind_table &&
		  !u->ind_switch;
	uint8_t head[4];
	uint64_t lowest = rf->addr, first = UINT64_MAX;
	uint64_t past = rf->dispatch || rf->pad_entry ? rf->addr + ru->entry.off + ru->entry.len : 0;
	if (bin_read(a->b->bin, rf->addr, head, sizeof(head)) == 0)
		lowest += x86_endbr64_len(head, sizeof(head));
	for (uint32_t r = 0; ok && r < u->nr; r++) {
		const struct range *g = &u->r[r];
		for (uint32_t i = 0; ok && i < g->n; i++) {
			const struct ins *in = &g->ins[i];
			struct st s = g->st[i];
			if (in->eff != E_JMP_IND || !(s.f & S_REACH))
				continue;
			const struct eh_frame *eh = &a->b->eh;
			uint32_t fde = eh_fde_at(eh, in->addr);
			uint64_t from = r == 0 && fde != RW_NONE && !eh->e[fde].lsda
						? promote_start(a, u, g, i, lowest) : 0;
			uint64_t pc = from ? eh->e[fde].pc_begin : 0;
			ok = from && eh_window_cfa(eh, fde, 0, 0, 0, from - pc, in->addr - pc,
						   RW_ENTRY_GUARD, NULL) == 0;
			first = from && from < first ? from : first;
			struct rw_tail_jump *v = ok ? realloc(t->ind, (t->nind + 1) * sizeof(*v)) : NULL;
			if ((ok = v != NULL))
				(t->ind = v)[t->nind++] = (struct rw_tail_jump){.at = in->addr, .from = from,
									      .len = in->len};
		}
	}
	rf->tail_promotable = ok && t->nind && (first >= past || !rf->pad_entry);
	if (rf->tail_promotable && first < past)
		rf->dispatch = false;
	if (!rf->tail_promotable) {
		free(t->ind);
		t->ind = NULL;
		t->nind = 0;
	}
}

/* The reached calls, each with its caller-side stack-argument bound. */
static void unit_calls(struct ana *a, struct unit *u, uint32_t owner, int64_t lmin)
{
	for (uint32_t r = 0; r < u->nr; r++) {
		const struct range *g = &u->r[r];
		for (uint32_t i = 0; i < g->n; i++) {
			const struct ins *in = &g->ins[i];
			struct st s = g->st[i];
			if (in->eff != E_CALL || !(s.f & S_REACH))
				continue;
			int32_t kr = -1;
			if ((s.f & S_KNOWN) && !u->conflict) {
				kr = (int32_t)(s.k - args_top(a->b, u, in->addr, (s.f & S_RBP) != 0, lmin));
				if (kr < -1)
					kr = 0;
			}
			if (add_call(a, in, owner, kr) == 0)
				a->b->calls[a->b->ncalls - 1].promote_from =
					promote_start(a, u, g, i, g->ins[0].addr + 4 + 5);
		}
	}
}

/* One rsp-relative reference of an instruction in the padded part of a
 * frame without rbp (s.k known): moved with the padding (an edit), or
 * why the frame cannot be padded. */
static void pad_rsp_ref(struct unit *u, struct rw_unit *ru, const struct ins *in,
			const struct mref *mr, int64_t sk, int64_t k0)
{
	int64_t thr = sk - k0;
	if (mr->lea && mr->disp >= thr && mr->disp < sk) {
		/* end of a local, or a saved register? */
		set_why(u, RW_PAD_SAVED_ADDR, in->addr);
	} else if (mr->disp >= thr) {
		if (!mr->disp_size)
			set_why(u, RW_PAD_STRADDLE, in->addr);
		else
			add_edit(ru, in->addr + mr->disp_off, mr->disp, mr->disp_size, 1);
	} else if (mr->disp + (mr->lea ? 1 : mr->size) > thr) {
		set_why(u, RW_PAD_STRADDLE, in->addr);
	}
}

/* The edits that pad the frame in place (its allocation, its
 * deallocations, the rsp-relative references above the padding), or why
 * it cannot be (u->why). */
static void pad_edits(struct unit *u, struct rw_unit *ru, const struct ins *alloc, bool fp,
		      int64_t k0, int64_t k1, int64_t top_fp)
{
	add_edit(ru, alloc->addr + alloc->fld_off, alloc->fld_value, alloc->fld_size,
		 alloc->fld_coef);
	for (uint32_t r = 0; r < u->nr && u->why == RW_PAD_OK; r++) {
		const struct range *g = &u->r[r];
		for (uint32_t i = 0; i < g->n; i++) {
			const struct ins *in = &g->ins[i];
			struct st s = g->st[i];
			if (!(s.f & S_REACH))
				continue;
			if (!fp && (s.f & S_KNOWN) && ((s.f & S_PAD) ? s.k < k1 : s.k >= k1))
				set_why(u, RW_PAD_STACK_STATE, in->addr);
			if (!(s.f & S_PAD))
				continue;
			if (in->eff == E_ADJ && in->imm < 0 && (s.f & S_KNOWN) && s.k + in->imm <= k0)
				add_edit(ru, in->addr + in->fld_off, in->fld_value, in->fld_size,
					 -in->fld_coef);
			for (int m = 0; m < in->nmem; m++) {
				const struct mref *mr = &in->mem[m];
				if (mr->base != 7)
					continue;
				int64_t k = (s.f & S_KNOWN) ? s.k : k1;
				if (fp) {
					/* outgoing area only: below the locals */
					if (mr->disp >= 0 && mr->disp + (mr->lea ? 1 : mr->size) > k - top_fp)
						set_why(u, RW_PAD_RSP_LOCALS, in->addr);
					continue;
				}
				if (!(s.f & S_KNOWN)) {
					set_why(u, RW_PAD_DYNAMIC, in->addr);
					continue;
				}
				pad_rsp_ref(u, ru, in, mr, s.k, k0);
			}
		}
	}
}

/* The most padding the edits and the stack-clash bound leave room for
 * (below 16: none, and u->why says why). */
static int64_t pad_room(struct unit *u, const struct rw_unit *ru, const struct ins *alloc,
			int64_t k1)
{
	int64_t room = RW_MAX_AMOUNT;
	if (k1 >= 4096 - 16)
		set_why(u, RW_PAD_LARGE_FRAME, alloc->addr);
	else if (4096 - 16 - k1 < room)
		room = (4096 - 16 - k1) & ~(int64_t)15;
	for (uint32_t e = 0; e < ru->nedits && u->why == RW_PAD_OK; e++) {
		int64_t er = edit_room(&ru->edits[e]);
		if (er < room)
			room = er;
	}
	if (room < 16 && u->why == RW_PAD_OK)
		set_why(u, ru->nedits > 0 && edit_room(&ru->edits[0]) < 16 ? RW_PAD_IMM_FULL
									   : RW_PAD_DISP_FULL,
			alloc->addr);
	return room;
}

/* Without rbp, the FDEs of the unit must be re-encodable with the padding:
 * they are kept (ru->fdes) for the edits. */
static void pad_fdes(struct ana *a, struct unit *u, struct rw_unit *ru, int64_t k0, int64_t k1)
{
	struct rw_binary *b = a->b;
	for (uint32_t r = 0; r < u->nr && u->why == RW_PAD_OK; r++) {
		uint32_t fde = eh_fde_at(&b->eh, a->bf[u->r[r].func].addr);
		if (fde == RW_NONE || eh_edit_cfa(&b->eh, fde, k0, k1, 16, UINT64_MAX, NULL) < 0) {
			set_why(u, RW_PAD_CFI_EDIT, a->bf[u->r[r].func].addr);
			break;
		}
		uint32_t *v = realloc(ru->fdes, (ru->nfdes + 1) * sizeof(*v));
		if (!v)
			break;
		ru->fdes = v;
		ru->fdes[ru->nfdes++] = fde;
	}
}

/* Whether and how much the function may be padded in place, and why not. */
static void unit_padding(struct ana *a, struct unit *u, uint32_t owner, const struct ins *alloc,
			 bool fp, const struct unit_scan *sc)
{
	struct rw_func *rf = &a->b->funcs[owner];
	struct rw_unit *ru = &a->b->units[owner];
	int64_t k0 = u->k0, k1 = alloc ? u->k0 + alloc->imm : 0;
	if (!alloc && u->n_alloc == 0)
		set_why(u, sc->ncalls ? RW_PAD_NO_ALLOC : RW_PAD_LEAF, 0);
	if (alloc && !sc->ncalls)
		set_why(u, RW_PAD_LEAF, 0);
	if (sc->calls_out)
		set_why(u, RW_PAD_CALL_OUTSIDE, sc->call_out_at);
	/* with rbp, the lowest slot of the saved registers and locals */
	if (u->why == RW_PAD_OK && alloc)
		pad_edits(u, ru, alloc, fp, k0, k1, frame_top(u->k_save, true, sc->lmin));
	int64_t room = RW_MAX_AMOUNT;
	if (u->why == RW_PAD_OK && alloc)
		room = pad_room(u, ru, alloc, k1);
	if (u->why == RW_PAD_OK && !fp && alloc)
		pad_fdes(a, u, ru, k0, k1);
	if (u->why == RW_PAD_OK && alloc) {
		rf->pad_mask = rw_mask_range(16, (uint32_t)room);
		rf->pad_why = RW_PAD_OK;
	} else {
		rf->pad_mask = 1;
		rf->pad_why = u->why == RW_PAD_OK ? RW_PAD_NO_ALLOC : u->why;
		rf->why_at = u->why_at;
		free(ru->edits);
		free(ru->fdes);
		ru->edits = NULL;
		ru->fdes = NULL;
		ru->nedits = ru->nfdes = 0;
	}
	ru->k1 = k1;
	ru->k0 = k0;
}

/* Whether the instruction of unit u at addr starts an instruction. */
static bool starts_insn(const struct unit *u, uint64_t addr)
{
	uint32_t r, i;
	return find(u, addr, &r, &i);
}

/* ----------------------------------------------------------- switch bounds */

/* A clone copies a switch's table as far as its entries land on the
 * function's code.  Where the entry after those is code all the same (the
 * next table's offsets, or a case in other code) the copy is whole only if
 * the index cannot reach past it: switch_bound looks for that bound by a
 * walk back from the jump along every path of the function's own control
 * flow into it (rewriter.h section 1, Cloning).  gcc checks the index
 * before it loads the table: `cmp $N-1,%eax; ja default` on this path or
 * the paths joining it, often on a narrower or earlier copy of the index. */

/* The 64-bit name of the general-purpose register r names (gcc bounds a
 * switch's index by cmp $N-1,%al, then widens it), or X86_REG_INVALID. */
static x86_reg gpr64(x86_reg r)
{
	int width, n = gpr_number(r, &width);
	return n < 0 ? X86_REG_INVALID : gpr_names[n][0];
}

/* What a switch's index equals at a point of the walk back from its jump
 * (switch_bound): the low w bytes of a register (reg, its 64-bit name) or,
 * when reg is X86_REG_INVALID, of the memory at mem (a rip-relative
 * address made absolute), zero-extended, or sign-extended when sext. */
struct sw_value {
	x86_reg reg;
	x86_op_mem mem;
	uint8_t w;
	bool sext;
};

/* Operand op of insn, a memory operand, a rip-relative address absolute. */
static x86_op_mem mem_operand(const cs_insn *insn, const cs_x86_op *op)
{
	x86_op_mem m = op->mem;
	if (m.base == X86_REG_RIP)
		m.disp += (int64_t)(insn->address + insn->size);
	if (m.index == X86_REG_INVALID)
		m.scale = 0;
	return m;
}

static bool same_mem(x86_op_mem x, x86_op_mem y)
{
	return x.segment == y.segment && x.base == y.base && x.index == y.index &&
	       x.scale == y.scale && x.disp == y.disp;
}

/* Whether operand op of insn holds v (at least its w bytes). */
static bool holds_value(const cs_insn *insn, const cs_x86_op *op, const struct sw_value *v)
{
	if (op->size < v->w)
		return false;
	if (op->type == X86_OP_REG)
		return v->reg != X86_REG_INVALID && gpr64(op->reg) == v->reg;
	return op->type == X86_OP_MEM && v->reg == X86_REG_INVALID &&
	       same_mem(mem_operand(insn, op), v->mem);
}

/* The entries of a table an index v <= imm (unsigned) may take: imm + 1,
 * fewer when v's w bytes hold fewer values; 0 when imm is out of a table's
 * reach, or v is sign-extended and its sign bit may be set. */
static uint32_t bound_cases(int64_t imm, const struct sw_value *v)
{
	if (imm < 0 || imm >= RW_MAX_SWITCH_ENTRIES)
		return 0;
	uint64_t values = v->w >= 8 ? UINT64_MAX : 1ull << (8 * v->w);
	if (v->sext && (uint64_t)imm >= values / 2)
		return 0;
	return (uint32_t)((uint64_t)imm + 1 < values ? (uint64_t)imm + 1 : values);
}

/* v as the w bytes of the first operand d of insn, a register write: a write
 * of 8 or 16 bits keeps the bytes above it, one of 32 clears them. */
static bool narrow_to_dest(const cs_x86_op *d, struct sw_value *v)
{
	if (v->w <= d->size)
		return true;
	if (d->size < 4)
		return false;
	v->w = d->size;
	v->sext = false;
	return true;
}

/* insn writes v's register: the value before it.  A move from a register
 * or memory (mov, movzx, movsx, movsxd) carries v on to its source; false
 * for anything else. */
static bool copy_back(const cs_insn *insn, struct sw_value *v)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *d = &x->operands[0], *s = &x->operands[1];
	if (x->op_count != 2 || d->type != X86_OP_REG || gpr64(d->reg) != v->reg ||
	    (s->type != X86_OP_REG && s->type != X86_OP_MEM) || !narrow_to_dest(d, v))
		return false;
	switch (insn->id) {
	case X86_INS_MOV:
		break;
	case X86_INS_MOVZX:     /* the bytes above the source's are 0 */
		if (v->w > s->size) {
			v->w = s->size;
			v->sext = false;
		}
		break;
	case X86_INS_MOVSX:
	case X86_INS_MOVSXD:    /* ... copies of its sign bit */
		if (v->w > s->size) {
			v->w = s->size;
			v->sext = true;
		}
		break;
	default:
		return false;
	}
	if (s->type == X86_OP_MEM) {
		v->reg = X86_REG_INVALID;
		v->mem = mem_operand(insn, s);
		return v->mem.segment == X86_REG_INVALID;
	}
	v->reg = gpr64(s->reg);
	return v->reg != X86_REG_INVALID;
}

/* The entries v may take after insn, `and $M` of its register, or 0. */
static uint32_t and_cases(const cs_insn *insn, struct sw_value v)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *op = x->operands;
	if (insn->id != X86_INS_AND || x->op_count != 2 || op[0].type != X86_OP_REG ||
	    gpr64(op[0].reg) != v.reg || op[1].type != X86_OP_IMM || !narrow_to_dest(&op[0], &v))
		return 0;
	return bound_cases(op[1].imm, &v);
}

/* A walk back from a switch's jump (switch_bound). */
struct sw_walk {
	struct sw_value v;      /* what its index is here */
	uint32_t cases;         /* the entries the index may take (0: not known), */
	uint8_t zero_from;      /* ... once v's register is known 0 from this
	                         * byte up (`cmp $M,%ecx` of a 64-bit index) */
	bool want_flags, jae;   /* past a ja (jae): what set its flags */
	bool pending;           /* a cmp of another value (cmp_value <= cmp_imm),
	                         * which v may turn out to be a copy of */
	struct sw_value cmp_value;
	int64_t cmp_imm;
};

/* The flags a ja (jae) tests come from insn: `cmp $M` of the index, or of
 * its low bytes (w->zero_from: the bytes above must be found 0, unless
 * they are the upper half of a register not in dirty).  false: no
 * bound. */
static bool cmp_bound(const cs_insn *insn, struct sw_walk *w, uint64_t dirty)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *op = x->operands;
	if (insn->id != X86_INS_CMP || x->op_count != 2 || op[1].type != X86_OP_IMM)
		return false;
	int64_t imm = w->jae ? op[1].imm - 1 : op[1].imm;
	if (holds_value(insn, &op[0], &w->v)) {
		w->cases = bound_cases(imm, &w->v);
		return w->cases != 0;
	}
	if (op[0].type != X86_OP_REG || gpr64(op[0].reg) != w->v.reg) {
		/* `movzbl %al,%edx; cmp $M,%al; ja`: v may be a copy of it */
		struct sw_value c = {.reg = X86_REG_INVALID, .w = op[0].size};
		if (op[0].type == X86_OP_REG)
			c.reg = gpr64(op[0].reg);
		else if (op[0].type == X86_OP_MEM)
			c.mem = mem_operand(insn, &op[0]);
		w->pending = op[0].type == X86_OP_MEM ? c.mem.segment == X86_REG_INVALID
						      : c.reg != X86_REG_INVALID;
		w->cmp_value = c;
		w->cmp_imm = imm;
		return w->pending;
	}
	struct sw_value low = {.w = op[0].size};
	int width, n = gpr_number(op[0].reg, &width);
	w->zero_from = width == 4 && !(dirty >> n & 1) ? 0 : op[0].size;
	w->cases = bound_cases(imm, &low);
	return w->cases != 0;
}

/* Whether insn, the write to v's register before its cmp (w->zero_from),
 * leaves 0 above the bytes the cmp compared: a write of 32 bits above
 * them, a movzx from no more of them. */
static bool zero_above(const cs_insn *insn, const struct sw_walk *w)
{
	const cs_x86 *x = &insn->detail->x86;
	const cs_x86_op *op = x->operands;
	if (!x->op_count || op[0].type != X86_OP_REG || gpr64(op[0].reg) != w->v.reg ||
	    op[0].size < 4)
		return false;
	return (op[0].size == 4 && w->zero_from == 4) ||
	       (insn->id == X86_INS_MOVZX && x->op_count == 2 && op[1].size <= w->zero_from);
}

static bool writes_cf_zf(const cs_insn *insn)
{
	return insn->detail->x86.eflags &
	       (X86_EFLAGS_MODIFY_CF | X86_EFLAGS_MODIFY_ZF | X86_EFLAGS_RESET_CF |
		X86_EFLAGS_RESET_ZF | X86_EFLAGS_SET_CF | X86_EFLAGS_SET_ZF |
		X86_EFLAGS_UNDEFINED_CF | X86_EFLAGS_UNDEFINED_ZF);
}

/* Whether insn (p) leaves v, held in memory, as it is: its stores (if
 * any) are to other bytes off the same base (no index), or to other
 * absolute addresses; no push (a call never gets here). */
static bool keeps_memory(const struct ins *p, const cs_insn *insn, const struct sw_value *v)
{
	const cs_x86 *x = &insn->detail->x86;
	if (insn->id == X86_INS_LEA)
		return true;
	if (p->eff == E_PUSH)
		return false;
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type != X86_OP_MEM || op->access == CS_AC_READ)
			continue;
		x86_op_mem m = mem_operand(insn, op);
		if (m.segment != v->mem.segment || m.base != v->mem.base ||
		    m.index != X86_REG_INVALID || v->mem.index != X86_REG_INVALID ||
		    (m.disp + op->size > v->mem.disp && v->mem.disp + v->w > m.disp))
			return false;
	}
	return true;
}

static bool redecode(struct ana *a, const struct ins *o, cs_insn *insn)
{
	uint8_t code[16];
	const uint8_t *p = code;
	size_t left = o->len;
	uint64_t addr = o->addr;
	return o->len <= sizeof(code) && bin_read(a->b->bin, o->addr, code, o->len) == 0 &&
	       x86_disasm_iter(a->cs, &p, &left, &addr, insn);
}

static bool is_label(const uint64_t *labels, size_t n, uint64_t addr)
{
	return bsearch(&addr, labels, n, sizeof(*labels), u64_cmp) != NULL;
}

/* The instructions a switch's walk back from its jump (switch_bound) may
 * visit, over all its paths (sqlite3's longest bound: 16 from its movslq). */
enum { SWITCH_BUDGET = 64 };

/* Whether insn (p, writing the registers wr) may change c, a register's
 * or memory's value. */
static bool changes_value(const struct ins *p, const cs_insn *insn, const uint16_t *wr,
			  uint8_t nwr, const struct sw_value *c)
{
	for (int i = 0; i < nwr; i++) {
		x86_reg r = gpr64(wr[i]);
		if (r != X86_REG_INVALID &&
		    (c->reg != X86_REG_INVALID ? r == c->reg
					       : r == gpr64(c->mem.base) || r == gpr64(c->mem.index)))
			return true;
	}
	return c->reg == X86_REG_INVALID && !keeps_memory(p, insn, c);
}

/* Whether v, just traced to its source, is (the low bytes of) c. */
static bool copy_of(const struct sw_value *v, const struct sw_value *c)
{
	return v->w <= c->w && (v->reg != X86_REG_INVALID
					? v->reg == c->reg
					: c->reg == X86_REG_INVALID && same_mem(v->mem, c->mem));
}

/* One instruction p (insn) of the walk back: what it writes, applied to
 * the index (until w->cases is known).  false: the walk ends without a
 * bound. */
static bool walk_back(struct ana *a, const struct ins *p, const cs_insn *insn, struct sw_walk *w)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	if (cs_regs_access(a->cs, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return false;
	struct sw_value *v = &w->v;
	bool writes_v = false, writes_addr = false;
	for (int i = 0; i < nwr; i++) {
		x86_reg r = gpr64(wr[i]);
		if (r == X86_REG_INVALID)
			continue;
		writes_v |= r == v->reg;
		writes_addr |= v->reg == X86_REG_INVALID &&
			       (r == gpr64(v->mem.base) || r == gpr64(v->mem.index));
	}
	if (w->zero_from) {             /* the cmp's bound holds once this is found */
		if (writes_v && !zero_above(insn, w))
			return false;
		w->zero_from = writes_v ? 0 : w->zero_from;
		return true;
	}
	if (writes_addr || (v->reg == X86_REG_INVALID && !keeps_memory(p, insn, v)) ||
	    (w->pending && changes_value(p, insn, wr, nwr, &w->cmp_value)))
		return false;
	if (writes_v && insn->id == X86_INS_AND)
		return (w->cases = and_cases(insn, *v)) != 0;
	if (!writes_v)
		return true;
	if (!copy_back(insn, v))
		return false;
	if (w->pending && copy_of(v, &w->cmp_value))
		return (w->cases = bound_cases(w->cmp_imm, v)) != 0;
	return true;
}

/* One instruction p (insn) of the walk back (dirty: U->dirty where it
 * starts); taken: a branch, along the edge to its target (jbe or jb
 * bounds the index as a ja or jae falling through does).  false when the
 * walk ends without a bound. */
static bool switch_step_back(struct ana *a, const struct ins *p, const cs_insn *insn,
			     struct sw_walk *w, bool taken, uint64_t dirty)
{
	/* a call keeps only the callee-saved registers (and may store anywhere) */
	if (p->eff == E_CALL &&
	    ((w->v.reg == X86_REG_INVALID || !callee_saved_bit(w->v.reg)) ||
	     (w->pending && !callee_saved_bit(w->cmp_value.reg))))
		return false;
	if (!w->cases && w->want_flags && writes_cf_zf(insn)) {
		w->want_flags = false;
		return cmp_bound(insn, w, dirty);
	}
	unsigned above = taken ? X86_INS_JBE : X86_INS_JA, above_eq = taken ? X86_INS_JB : X86_INS_JAE;
	if (!w->cases && !w->want_flags && (insn->id == above || insn->id == above_eq)) {
		w->want_flags = true;
		w->jae = insn->id == above_eq;
		return true;
	}
	return walk_back(a, p, insn, w);
}

/* What a switch's walk back knows of its unit: where its direct branches
 * go (the walk goes on along each), where control comes from elsewhere
 * (table entries; landing pads and calls into it, opaque: the walk ends),
 * all sorted, and per instruction (range by range) the registers whose
 * bits 32-63 may be nonzero where it starts (dirty_after's flow; bit n:
 * gpr_number n). */
struct sw_unit {
	uint64_t *to, *entries, *opaque;
	size_t nto, nentries, nopaque;
	uint64_t **dirty;
	uint64_t **lea[16];     /* by register number, as computed: lea_flow */
};

static bool falls_through(const struct ins *o)
{
	return o->eff != E_JMP && o->eff != E_JMP_IND && o->eff != E_RET && o->eff != E_STOP &&
	       !(o->eff == E_CALL && (o->flags & F_NORET));
}

static bool entered_elsewhere(const struct sw_unit *U, uint64_t at)
{
	return is_label(U->entries, U->nentries, at) || is_label(U->opaque, U->nopaque, at);
}

/* Whether the instruction before g->ins[k] runs on into it: one that falls
 * through, or alignment padding after one (padding after a jump is
 * reached by no path unless a label starts it). */
static bool falls_into(const struct range *g, uint32_t k, const struct sw_unit *U)
{
	uint32_t i = k - 1;
	while (i > 0 && (g->ins[i].flags & F_PAD) && !is_label(U->to, U->nto, g->ins[i].addr) &&
	       !entered_elsewhere(U, g->ins[i].addr))
		i--;
	return (g->ins[i].flags & F_PAD) || falls_through(&g->ins[i]);
}

static bool walk_from(struct ana *a, const struct unit *u, uint32_t r, uint32_t k,
		      struct sw_walk w, const struct sw_unit *U, int *budget, cs_insn *insn,
		      uint32_t *cases);

/* The walk back along every direct branch of u to `at` (its walk w at
 * `at`); false when one of them does not bound the index. */
static bool branches_to(struct ana *a, const struct unit *u, uint64_t at, const struct sw_walk *w,
			const struct sw_unit *U, int *budget, cs_insn *insn, uint32_t *cases)
{
	for (uint32_t r = 0; r < u->nr; r++)
		for (uint32_t i = 0; i < u->r[r].n; i++) {
			const struct ins *q = &u->r[r].ins[i];
			if (q->target != at)
				continue;
			struct sw_walk wq = *w;
			if ((q->eff != E_JMP && q->eff != E_JCC) || --*budget < 0 || !redecode(a, q, insn) ||
			    !switch_step_back(a, q, insn, &wq, true, U->dirty[r][i]) ||
			    !walk_from(a, u, r, i, wq, U, budget, insn, cases))
				return false;
		}
	return true;
}

/* The walk w back from instruction k of range r (w: what must hold where
 * k starts), along every path into k; false when one of them does not
 * bound the index, or the budget runs out.  *cases: the most entries the
 * index may take on the paths seen. */
static bool walk_from(struct ana *a, const struct unit *u, uint32_t r, uint32_t k,
		      struct sw_walk w, const struct sw_unit *U, int *budget, cs_insn *insn,
		      uint32_t *cases)
{
	const struct range *g = &u->r[r];
	for (;;) {
		if (w.cases && !w.zero_from) {
			*cases = w.cases > *cases ? w.cases : *cases;
			return true;
		}
		uint64_t at = g->ins[k].addr;
		bool joined = is_label(U->to, U->nto, at);
		if (entered_elsewhere(U, at) ||
		    (joined && !branches_to(a, u, at, &w, U, budget, insn, cases)))
			return false;
		if (k == 0 || !falls_into(g, k, U))
			return joined && (k || r);      /* entered by its branches only, not
							 * at the function's entry */
		const struct ins *p = &g->ins[--k];
		if (--*budget < 0 || !redecode(a, p, insn) ||
		    !switch_step_back(a, p, insn, &w, false, U->dirty[r][k]))
			return false;
	}
}

static uint64_t **lea_flow(struct ana *a, const struct unit *u, const struct sw_unit *U,
			   x86_reg r, cs_insn *insn);

/* Which table the F_TABLE_JMP o = u->r[r].ins[j] reads and how many of
 * its entries its index may take (o->case_table, o->cases; 0: not known).
 * The table: a relative one's base register holds it by a lea on every
 * path (lea_flow); the entries, by a walk back along every path of u into
 * the jump (switch_step_back): its index is traced through copies to an
 * `and $M` of it, or to a `cmp $M` of it (or of the value it turns out to
 * be copied from) whose ja (jae) goes to the default. */
static bool switch_bound(struct ana *a, const struct unit *u, uint32_t r, uint32_t j,
			 struct sw_unit *U, cs_insn *insn)
{
	struct ins *o = &u->r[r].ins[j];
	o->case_table = o->cases = 0;
	if (!redecode(a, o, insn))
		return true;
	struct sw_walk w = {.v = {.w = 8}};
	uint32_t k = j;
	uint64_t table = 0;
	const cs_x86_op *op = insn->detail->x86.operands;
	if (op[0].type == X86_OP_MEM) {         /* jmp *T(,%rI,8) */
		table = o->abs;
		w.v.reg = gpr64(op[0].mem.index);
	} else {                                /* movslq (%rA,%rI,4),%rC; add; jmp */
		if (j < 2 || !redecode(a, &u->r[r].ins[j - 2], insn))
			return true;
		w.v.reg = gpr64(op[1].mem.index);
		k = j - 2;
		int width, base = gpr_number(op[1].mem.base, &width);
		if (base < 0)
			return true;
		if (!U->lea[base] && !(U->lea[base] = lea_flow(a, u, U, gpr_names[base][0], insn)))
			return false;
		table = U->lea[base][r][k];
	}
	int budget = SWITCH_BUDGET;
	uint32_t cases = 0;
	if (table && w.v.reg != X86_REG_INVALID && walk_from(a, u, r, k, w, U, &budget, insn, &cases)) {
		o->case_table = table;
		o->cases = cases;
	}
	return true;
}

/* The entry k of the switch table at t (relative, or abs): the code address
 * it names; false past the binary's data. */
static bool table_entry(struct ana *a, uint64_t t, bool abs, uint32_t k, uint64_t *v)
{
	int32_t e;
	if (abs)
		return bin_read(a->b->bin, t + 8 * k, v, 8) == 0;
	if (bin_read(a->b->bin, t + 4 * k, &e, 4) < 0)
		return false;
	*v = t + (uint64_t)(int64_t)e;
	return true;
}

/* The table an operand of o names, if any, and whether its entries are
 * absolute (the jmp of an executable that is no PIE) or relative. */
static uint64_t named_table(struct ana *a, const struct ins *o, bool *abs)
{
	*abs = !o->rip && o->abs && a->b->ehdr.e_type == ET_EXEC;
	uint64_t t = *abs ? o->abs : o->rip, lo, hi;
	return t && bin_exec_range(a->b->bin, t, &lo, &hi) != 0 ? t : 0;
}

/* The labels of unit u a switch's walk back meets (struct sw_unit),
 * sorted; false when out of memory. */
static bool unit_labels(struct ana *a, const struct unit *u, struct sw_unit *U)
{
	size_t capto = 0, capen = 0, capop = 0;
	uint64_t e;
	bool abs, ok = true;
	for (uint32_t r = 0; ok && r < u->nr; r++) {
		const struct range *g = &u->r[r];
		for (uint32_t c = 0; ok && c < g->ncs; c++)
			ok = !g->cs[c].lp || u64_push(&U->opaque, &U->nopaque, &capop, g->cs[c].lp);
		for (uint32_t i = 0; ok && i < g->n; i++) {
			const struct ins *o = &g->ins[i];
			if (o->target)
				ok = o->eff == E_JMP || o->eff == E_JCC
					? u64_push(&U->to, &U->nto, &capto, o->target)
					: u64_push(&U->opaque, &U->nopaque, &capop, o->target);
			uint64_t t = named_table(a, o, &abs);
			for (uint32_t k = 0; ok && t && k < RW_MAX_SWITCH_ENTRIES &&
					     table_entry(a, t, abs, k, &e) && starts_insn(u, e); k++)
				ok = u64_push(&U->entries, &U->nentries, &capen, e);
		}
	}
	if (U->to)
		qsort(U->to, U->nto, sizeof(*U->to), u64_cmp);
	if (U->entries)
		qsort(U->entries, U->nentries, sizeof(*U->entries), u64_cmp);
	if (U->opaque)
		qsort(U->opaque, U->nopaque, sizeof(*U->opaque), u64_cmp);
	return ok;
}

/* A forward dataflow over unit u's own control flow (flow_run): a state
 * where each instruction starts, `after` an instruction's effect on it,
 * `join` where edges meet.  The entry and the landing pads start
 * `unknown` (as unreached instructions end), the table entries with what
 * every switch jump of u leaves: a clone's cases are reached only by its
 * own jumps. */
struct sw_flow {
	uint64_t (*after)(csh cs, const struct ins *o, const cs_insn *insn, uint64_t in, x86_reg arg);
	uint64_t (*join)(uint64_t x, uint64_t y);
	uint64_t unknown;
	x86_reg arg;            /* after's register */
};

struct flow_state {
	uint64_t **st;
	uint8_t **reached;
	uint64_t *work;
	size_t nwork, cap;
	bool ok;
};

static void flow_join(const struct unit *u, const struct sw_flow *f, struct flow_state *F,
		      uint64_t addr, uint64_t s)
{
	uint32_t r, i;
	if (!F->ok || !find(u, addr, &r, &i))
		return;
	uint64_t v = F->reached[r][i] ? f->join(F->st[r][i], s) : s;
	if (F->reached[r][i] && v == F->st[r][i])
		return;
	F->reached[r][i] = 1;
	F->st[r][i] = v;
	F->ok = u64_push(&F->work, &F->nwork, &F->cap, (uint64_t)r << 32 | i);
}

static void flow_free(const struct unit *u, uint64_t **st)
{
	for (uint32_t r = 0; st && r < u->nr; r++)
		free(st[r]);
	free(st);
}

/* A switch jump o (state s after it) whose table and bound an earlier
 * round proved (switch_bounds) goes only to the first o->cases entries of
 * its table: true when they all land on u's instructions, each joined. */
static bool bounded_targets(struct ana *a, const struct unit *u, const struct sw_flow *f,
			    struct flow_state *F, const struct ins *o, uint64_t s)
{
	uint64_t e;
	bool abs = o->case_table == o->abs;
	for (uint32_t k = 0; k < o->cases; k++)
		if (!table_entry(a, o->case_table, abs, k, &e) || !starts_insn(u, e))
			return false;
	for (uint32_t k = 0; k < o->cases && table_entry(a, o->case_table, abs, k, &e); k++)
		flow_join(u, f, F, e, s);
	return o->cases > 0;
}

/* The states where u's instructions start, range by range; NULL when out
 * of memory. */
static uint64_t **flow_run(struct ana *a, const struct unit *u, const struct sw_unit *U,
			   const struct sw_flow *f, cs_insn *insn)
{
	struct flow_state F = {.st = calloc(u->nr, sizeof(*F.st)),
			       .reached = calloc(u->nr, sizeof(*F.reached))};
	F.ok = F.st && F.reached;
	for (uint32_t r = 0; F.ok && r < u->nr; r++) {
		size_t n = u->r[r].n ? u->r[r].n : 1;
		F.ok = (F.st[r] = calloc(n, sizeof(**F.st))) && (F.reached[r] = calloc(n, 1));
	}
	if (u->r[0].n)
		flow_join(u, f, &F, u->r[0].ins[0].addr, f->unknown);
	for (size_t k = 0; k < U->nopaque; k++)
		flow_join(u, f, &F, U->opaque[k], f->unknown);
	uint64_t tables = f->unknown;
	bool jumped = false;
	while (F.ok && F.nwork) {
		uint64_t w = F.work[--F.nwork];
		uint32_t r = (uint32_t)(w >> 32), i = (uint32_t)w;
		const struct ins *o = &u->r[r].ins[i];
		uint64_t s = redecode(a, o, insn) ? f->after(a->cs, o, insn, F.st[r][i], f->arg)
						  : f->unknown;
		if (falls_through(o) && i + 1 < u->r[r].n)
			flow_join(u, f, &F, u->r[r].ins[i + 1].addr, s);
		if (o->eff == E_JMP || o->eff == E_JCC)
			flow_join(u, f, &F, o->target, s);
		if (!(o->flags & F_TABLE_JMP) || bounded_targets(a, u, f, &F, o, s))
			continue;
		uint64_t t = jumped ? f->join(tables, s) : s;
		if (!jumped || t != tables) {
			jumped = true;
			tables = t;
			for (size_t k = 0; k < U->nentries; k++)
				flow_join(u, f, &F, U->entries[k], tables);
		}
	}
	free(F.work);
	for (uint32_t r = 0; F.reached && r < u->nr; r++) {
		for (uint32_t i = 0; F.ok && i < u->r[r].n; i++)
			if (!F.reached[r][i])
				F.st[r][i] = f->unknown;
		free(F.reached[r]);
	}
	free(F.reached);
	if (!F.ok) {
		flow_free(u, F.st);
		return NULL;
	}
	return F.st;
}

/* The registers whose bits 32-63 may be nonzero after o (insn), d before
 * it: a 32-bit write or a movzx clears a register's bit (cmpxchg may not
 * write), any other write of all 64 bits sets it, and a call sets the bits
 * of the registers the ABI lets it clobber. */
static uint64_t dirty_after(csh cs, const struct ins *o, const cs_insn *insn, uint64_t d,
			    x86_reg unused)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	(void)unused;
	for (int n = 0; o->eff == E_CALL && n < 16; n++)
		if (gpr_names[n][0] != X86_REG_RSP && !callee_saved_bit(gpr_names[n][0]))
			d |= 1ull << n;
	if (cs_regs_access(cs, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return 0xffff;
	for (int i = 0; i < nwr; i++) {
		int width, n = gpr_number(wr[i], &width);
		if (n < 0 || width < 4)
			continue;
		bool zero = (width == 4 && insn->id != X86_INS_CMPXCHG) ||
			    (width == 8 && insn->id == X86_INS_MOVZX);
		d = zero ? d & ~(1ull << n) : d | 1ull << n;
	}
	return d;
}

static uint64_t join_or(uint64_t x, uint64_t y)
{
	return x | y;
}

/* Register r (its 64-bit name) after o (insn), holding `in` before it:
 * the address a `lea T(%rip),%r` loads, or 0 (not known). */
static uint64_t lea_after(csh cs, const struct ins *o, const cs_insn *insn, uint64_t in,
			  x86_reg r)
{
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	if (o->eff == E_CALL && !callee_saved_bit(r))
		return 0;
	if (cs_regs_access(cs, insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		return 0;
	for (int i = 0; i < nwr; i++)
		if (gpr64(wr[i]) == r) {
			const cs_x86_op *op = &insn->detail->x86.operands[0];
			return (o->flags & F_RIP_LEA) && op->type == X86_OP_REG && op->reg == r ? o->rip : 0;
		}
	return in;
}

static uint64_t join_same(uint64_t x, uint64_t y)
{
	return x == y ? x : 0;
}

/* What register r holds where each instruction of u starts: the table
 * address a lea loads into it on every path, or 0. */
static uint64_t **lea_flow(struct ana *a, const struct unit *u, const struct sw_unit *U,
			   x86_reg r, cs_insn *insn)
{
	const struct sw_flow f = {lea_after, join_same, 0, r};
	return flow_run(a, u, U, &f, insn);
}

static void sw_unit_free(const struct unit *u, struct sw_unit *U)
{
	flow_free(u, U->dirty);
	for (int n = 0; n < 16; n++)
		flow_free(u, U->lea[n]);
	free(U->to);
	free(U->entries);
	free(U->opaque);
}

/* One round of switch_bound over every switch jump of u, on dataflows
 * that take the bounds of the round before (bounded_targets); *known,
 * *unknown: the jumps bounded and not.  false when a relative one could be
 * entered at its add or jmp (its target may come from no table), or out
 * of memory. */
static bool switch_round(struct ana *a, struct unit *u, struct sw_unit *U, cs_insn *insn,
			 int *known, int *unknown)
{
	const struct sw_flow dirty = {dirty_after, join_or, 0xffff, X86_REG_INVALID};
	flow_free(u, U->dirty);
	for (int n = 0; n < 16; n++) {
		flow_free(u, U->lea[n]);
		U->lea[n] = NULL;
	}
	bool ok = (U->dirty = flow_run(a, u, U, &dirty, insn)) != NULL;
	for (uint32_t r = 0; ok && r < u->nr; r++)
		for (uint32_t j = 0; ok && j < u->r[r].n; j++) {
			const struct ins *o = &u->r[r].ins[j];
			if (!(o->flags & F_TABLE_JMP))
				continue;
			ok = switch_bound(a, u, r, j, U, insn);
			*known += o->cases != 0;
			*unknown += o->cases == 0;
			for (uint32_t q = j - 1; ok && !o->abs && q <= j; q++)
				ok = !is_label(U->to, U->nto, u->r[r].ins[q].addr) &&
				     !entered_elsewhere(U, u->r[r].ins[q].addr);
		}
	return ok;
}

/* switch_bound of every switch's jump in u; false when a relative one
 * could be entered at its add or jmp (its target may come from no table),
 * or out of memory. */
static bool switch_bounds(struct ana *a, struct unit *u)
{
	struct sw_unit U = {0};
	cs_insn *insn = cs_malloc(a->cs);
	bool ok = insn && unit_labels(a, u, &U);
	/* a second round where the first bounded some but not all: the jumps
	 * it bounded go only to their own cases, which may tell the others'
	 * tables (a register reused for other things where another switch
	 * jumps) */
	int known = 0, unknown = 0;
	ok = ok && switch_round(a, u, &U, insn, &known, &unknown);
	if (ok && known && unknown)
		ok = switch_round(a, u, &U, insn, &known, &unknown);
	if (insn)
		cs_free(insn, 1);
	sw_unit_free(u, &U);
	return ok;
}

/* The entries of a switch table at t (relative, or abs) that land on
 * instructions of unit u, read while they do (the tables of one function
 * follow each other: reading on into the next copies entries no jump of
 * this table reads).  *open when the entry that ends them is a code address
 * all the same: the table may go on into code outside u (python3.11's
 * PyToken_ThreeChars jumps into another function's code), so u's clone
 * could not copy it whole. */
static uint32_t switch_entries(struct ana *a, const struct unit *u, uint64_t t, bool abs,
			       bool *open)
{
	uint32_t n = 0;
	uint64_t v;
	*open = false;
	for (; n < RW_MAX_SWITCH_ENTRIES && table_entry(a, t, abs, n, &v); n++)
		if (!starts_insn(u, v)) {
			*open = v >= a->code_lo && v < a->code_hi;
			break;
		}
	return n;
}

/* Whether every jump of u through table t is bounded to at most n entries. */
static bool bounded(const struct unit *u, uint64_t t, uint32_t n)
{
	bool any = false;
	for (uint32_t r = 0; r < u->nr; r++)
		for (uint32_t i = 0; i < u->r[r].n; i++) {
			const struct ins *in = &u->r[r].ins[i];
			if (!(in->flags & F_TABLE_JMP))
				continue;
			if (in->case_table == t && in->cases && in->cases <= n)
				any = true;
			else if (!in->cases || in->case_table == t)
				return false;   /* unbounded: its table could be t */
		}
	return any;
}

static bool has_table(const struct rw_unit *ru, uint64_t at)
{
	for (uint32_t i = 0; i < ru->ntables; i++)
		if (ru->tables[i].at == at)
			return true;
	return false;
}

/* Whether u's indirect jumps let a clone copy it: none (or tail calls only,
 * no code reached only through them), or only switches' jumps, whose
 * tables ru->tables lists: every operand naming data whose entries land on
 * u's instructions is a lea (an absolute operand of an executable that is
 * no PIE, a table's jmp), at least two entries do (one could be chance)
 * and fewer than RW_MAX_SWITCH_ENTRIES, and either the one after them is
 * no code address or every jump of u is bounded (switch_bound) and those
 * through that table to no more entries (all of them read), and there is
 * such a table (clone.c gives the clone copies, rebased, and points its
 * leas there).  RW_CLONE_OK, or why not. */
static enum rw_clone_why clone_jumps(struct ana *a, struct unit *u, struct rw_unit *ru)
{
	if (!u->ind_switch)
		return !u->ind_inner && !u->ind_table ? RW_CLONE_OK : RW_CLONE_INDIRECT_JUMP;
	if (u->ind_other || !switch_bounds(a, u))
		return RW_CLONE_INDIRECT_JUMP;
	enum rw_clone_why why = RW_CLONE_OK;
	for (uint32_t r = 0; why == RW_CLONE_OK && r < u->nr; r++)
		for (uint32_t i = 0; why == RW_CLONE_OK && i < u->r[r].n; i++) {
			const struct ins *in = &u->r[r].ins[i];
			bool abs, open;
			uint64_t t = named_table(a, in, &abs);
			uint32_t n = t ? switch_entries(a, u, t, abs, &open) : 0;
			if (!n)
				continue;
			if (n < 2 || n >= RW_MAX_SWITCH_ENTRIES ||
			    !(in->flags & (abs ? F_TABLE_JMP : F_RIP_LEA)))
				why = RW_CLONE_INDIRECT_JUMP;
			else if (open && !bounded(u, t, n))
				why = RW_CLONE_SWITCH_UNBOUNDED;
			if (why != RW_CLONE_OK || has_table(ru, t))
				continue;
			struct rw_switch_table *v = realloc(ru->tables, (ru->ntables + 1) * sizeof(*v));
			if (!v) {
				why = RW_CLONE_INDIRECT_JUMP;
				continue;
			}
			ru->tables = v;
			ru->tables[ru->ntables++] = (struct rw_switch_table){t, n, abs};
		}
	if (why == RW_CLONE_OK && ru->ntables)
		return RW_CLONE_OK;
	free(ru->tables);
	ru->tables = NULL;
	ru->ntables = 0;
	return why == RW_CLONE_OK ? RW_CLONE_INDIRECT_JUMP : why;
}

/* Whether the function may be cloned, take an entry wrapper, dispatch. */
static void unit_clone_entry(struct ana *a, struct unit *u, uint32_t owner, uint32_t ncalls)
{
	struct rw_binary *b = a->b;
	struct rw_func *rf = &b->funcs[owner];
	struct rw_unit *ru = &b->units[owner];
	/* A clone copies the function and its fragment, if it has one.  An
	 * indirect jump with no frame live and no code reached only through
	 * it is a tail call (sqlite3_mutex_enter: jmp *0x80(%rax)): its copy
	 * jumps where the original does.  Were it a jump table after all, the
	 * copy would go on in the original's code in the state the jump left,
	 * no frame live: the heights then differ from the prediction (icpp
	 * verify says so), the stack stays balanced. */
	ru->frag = u->nr == 2 ? u->r[1].func : RW_NONE;
	if (u->nr > 2 || a->cand[owner])
		rf->clone_why = RW_CLONE_FRAGMENT;
	else if (u->conflict || u->unreached || undecodable(u))
		rf->clone_why = RW_CLONE_ANALYSIS;
	else if ((rf->clone_why = clone_jumps(a, u, ru)) == RW_CLONE_OK)
		rf->clone_why = u->falls_off ? RW_CLONE_FALLS_OFF : rw_clone_check(a->cs, b, owner);
	rf->cloneable = rf->clone_why == RW_CLONE_OK;
	if (!u->conflict && !u->unreached && !u->r[0].bad && u->r[0].n) {
		struct rw_displaced d;
		plan_near(a, u, &b->units[owner], rf->addr);
		ru->entry_rel32 = plan_displacement(a, u, &d, 5) &&
				  !branches_into(u, rf->addr, rf->addr + d.off + d.len);
	}
	rf->entry_why = entry_why(a, u, owner, ncalls);
	if (rf->entry_why == RW_ENTRY_OK) {
		rf->pad_entry = true;
		rf->pad_in_place = rf->pad_mask > 1 ? rw_mask_max(rf->pad_mask) : 0;
		rf->entry_tail = u->tail;
		rf->pad_mask = rw_mask_range(16, RW_MAX_AMOUNT);
	}
	/* a dispatch displaces the same instructions an entry wrapper would (a
	 * function with a fragment takes no entry wrapper, but may dispatch:
	 * branches_into sees the fragment's jumps back too) */
	rf->dispatch = rf->cloneable &&
		       (rf->pad_entry || plan_entry_jmp(a, u, &b->units[owner], rf->addr) == RW_ENTRY_OK);
	/* the fragments run in its frame */
	for (uint32_t r = 1; r < u->nr; r++) {
		struct rw_func *fr = &b->funcs[u->r[r].func];
		fr->parent = owner;
		fr->pad_mask = 1;
		fr->pad_why = RW_PAD_FRAGMENT;
		fr->entry_why = RW_ENTRY_FRAGMENT;
		fr->clone_why = RW_CLONE_FRAGMENT;
		fr->frame = rf->frame;
	}
}

static void finish_unit(struct ana *a, struct unit *u, uint32_t owner)
{
	struct rw_func *rf = &a->b->funcs[owner];
	struct unit_scan sc;
	scan_unit(a, u, owner, &sc);
	rf->args_read = sc.kc_unknown || u->unreached ? -1 : (int32_t)sc.kc;
	rf->tail_indirect = u->tail_indirect || u->falls_off;
	rf->tails_known = !u->conflict && !u->unreached && !undecodable(u);
	a->tails[owner] = (struct unit_tails){.to = u->tail_to, .n = u->ntail_to};
	u->tail_to = NULL;
	/* the allocation and its frame kind */
	const struct ins *alloc = NULL;
	bool fp = false;
	if (u->n_alloc == 1) {
		alloc = &u->r[u->alloc_r].ins[u->alloc_i];
		fp = u->r[u->alloc_r].st[u->alloc_i].f & S_RBP;
	}
	rf->frame = alloc ? (fp ? RW_FRAME_FP : RW_FRAME_SP) : RW_FRAME_NONE;
	rf->alloc = alloc ? (uint32_t)alloc->imm : 0;
	rf->ncalls = sc.ncalls;
	unit_calls(a, u, owner, sc.lmin);
	unit_padding(a, u, owner, alloc, fp, &sc);
	unit_clone_entry(a, u, owner, sc.ncalls);
	if (rf->tail_indirect)
		unit_tail_ind(a, u, owner);
}

static void analyse_unit(struct ana *a, uint32_t fi)
{
	struct unit u = {0};
	u.r = calloc(4, sizeof(*u.r));
	u.cap = 4;
	if (!u.r || decode(a, fi, &u.r[0]) < 0) {
		free(u.r);
		a->b->funcs[fi].pad_mask = 1;
		a->b->funcs[fi].pad_why = RW_PAD_UNDECODABLE;
		return;
	}
	u.nr = 1;
	a->owner[fi] = fi;
	struct st entry = {.k = 8, .f = S_KNOWN};
	struct bin_cfa cfa;
	if (bin_cfa_at(a->b->bin, a->bf[fi].addr, &cfa) == 0) {
		if (cfa.reg == BIN_CFA_RSP)
			entry.k = (int32_t)cfa.offset;
		else
			entry = (struct st){.f = S_RBP};   /* a fragment of an fp frame */
	}
	if (u.r[0].n) {
		join(&u, 0, 0, entry);
		for (;;) {
			run(a, &u, fi);
			if (u.conflict)
				break;
			if (seed_landing_pads(a, &u, fi))
				continue;
			run(a, &u, fi);
			if (u.conflict || !seed_unreached(&u))
				break;
		}
	}
	finish_unit(a, &u, fi);
	for (uint32_t r = 0; r < u.nr; r++)
		range_free(&u.r[r]);
	free(u.r);
	free(u.work);
	free(u.tail_to);
}

/* ------------------------------------------------------------------ calls */

static int cmp_call(const void *x, const void *y)
{
	const struct rw_call *a = x, *b = y;
	return a->site < b->site ? -1 : a->site > b->site;
}

/* A tail call passes the caller's incoming stack arguments on, so a function
 * reads what its tail callees read too: args_read becomes the largest over
 * the functions it reaches by direct tail calls, unknown when one of them is
 * unknown or not a function of this binary (a PLT stub).  Bounds only grow,
 * up to the largest own bound, so the iteration ends. */
static void add_tail_callees(struct ana *a)
{
	struct rw_binary *b = a->b;
	for (bool changed = true; changed;) {
		changed = false;
		for (size_t i = 0; i < a->nbf; i++) {
			struct rw_func *rf = &b->funcs[i];
			for (uint32_t t = 0; t < a->tails[i].n && rf->args_read >= 0; t++) {
				uint64_t to = a->tails[i].to[t].to;
				uint32_t ci = func_index(a, func_at(a, to));
				int32_t k = ci != RW_NONE && b->funcs[ci].addr == to
						    ? b->funcs[ci].args_read : -1;
				if (k < 0 || k > rf->args_read) {
					rf->args_read = k;
					changed = true;
				}
			}
		}
	}
}

void rw_call_bound_args(struct rw_call *rc, int32_t callee)
{
	int32_t kr = rc->args_stored;
	int32_t k = kr < 0 ? callee : (callee < 0 || kr < callee ? kr : callee);
	if (k < 0) {
		rc->wrap_why = RW_WRAP_ARGS_UNKNOWN;
		return;
	}
	if (k > RW_MAX_COPY) {
		rc->wrap_why = RW_WRAP_ARGS_LARGE;
		return;
	}
	rc->wrap_why = RW_WRAP_OK;
	rc->stack_args = (uint32_t)(k + 7) & ~7u;
	uint32_t lo = (rc->stack_args + 8 + 15) & ~15u;
	rc->wrap_mask = rw_mask_range(lo < 16 ? 16 : lo, RW_MAX_AMOUNT);
}

/* A tagged call's stub runs in its caller's frame with the caller's CFI row
 * at the call (rewriter.h section 1, Tagged calls): one whose program up to
 * the call can be copied, and where the caller has an LSDA, one that the
 * stub's own can be made from (a personality looks the stub's return address
 * up there: eh_put_stub_lsda). */
static bool stub_row_ok(const struct rw_binary *b, uint64_t insn, uint64_t ret)
{
	const struct eh_frame *eh = &b->eh;
	uint32_t fde = eh_fde_at(eh, insn);
	if (fde == RW_NONE ||
	    (eh->e[fde].lsda && !eh_stub_lsda_ok(b->bin, eh, fde, ret)))
		return false;
	return eh_edit_cfa(eh, fde, 0, 0, 0, insn - eh->e[fde].pc_begin, NULL) == 0;
}

/* The function of b that call rc reaches through GOT slot `slot` when b's
 * own definition fills it (rewriter.h section 1, Bound calls) and its stub
 * can take it: as for a tag's, and b can be made to bind at load time. */
static void bind_call(struct ana *a, struct rw_call *rc, uint64_t slot)
{
	rc->bind = rc->bind_slot = 0;
	if (!rc->taggable || a->b->bind_now == RW_BIND_NOW_NONE)
		return;
	uint64_t own = rw_slot_own(a->b, slot);
	const struct bin_function *f = own ? func_at(a, own) : NULL;
	if (f && f->addr == own && !returns_twice_name(f->name)) {
		rc->bind = own;
		rc->bind_slot = slot;
	}
}

static void resolve_calls(struct ana *a)
{
	struct rw_binary *b = a->b;
	for (size_t c = 0; c < b->ncalls; c++) {
		struct rw_call *rc = &b->calls[c];
		uint64_t got = call_slot(a, rc->target, rc->slot);
		rc->target_name = callee_name(a, rc->target, got);
		rc->wrap_mask = 1;
		rc->wrap_why = RW_WRAP_OK;
		const struct bin_function *tf = rc->target ? func_at(a, rc->target) : NULL;
		if (tf && tf->addr != rc->target)
			tf = NULL;
		if (!rc->target && !rc->slot)
			rc->wrap_why = RW_WRAP_INDIRECT;
		else if (rc->len < 5)
			rc->wrap_why = RW_WRAP_INDIRECT;
		else if (returns_twice_name(rc->target_name))
			rc->wrap_why = RW_WRAP_RETURNS_TWICE;
		else if (b->funcs[rc->func].pad_why == RW_PAD_UNDECODABLE)
			rc->wrap_why = RW_WRAP_CALLER;
		else
			rw_call_bound_args(rc, tf ? b->funcs[func_index(a, tf)].args_read : -1);
		/* a clone is entered through the rel32 of a direct call */
		rc->redirectable = tf && !rc->slot && rc->len >= 5 &&
				   !returns_twice_name(rc->target_name);
		rc->taggable = (rc->target || rc->slot) && rc->len >= 5 && rc->len <= 16 &&
			       !returns_twice_name(rc->target_name) &&
			       b->funcs[rc->func].pad_why != RW_PAD_UNDECODABLE &&
			       stub_row_ok(b, rc->insn, rc->insn + rc->len);
		bind_call(a, rc, got);
		rc->redirectable = rc->redirectable || rc->bind;
		rc->got = got;
		rc->xcallable = rc->taggable && got && !rc->bind && b->bind_now != RW_BIND_NOW_NONE;
	}
	qsort(b->calls, b->ncalls, sizeof(*b->calls), cmp_call);
	/* one record per site (a call reached twice is impossible; keep the first) */
	size_t k = 0;
	for (size_t c = 0; c < b->ncalls; c++)
		if (!k || b->calls[k - 1].site != b->calls[c].site)
			b->calls[k++] = b->calls[c];
	b->ncalls = k;
}

/* The first call of b at or after address `to`, or b->ncalls. */
static size_t call_from(const struct rw_binary *b, uint64_t to)
{
	size_t lo = 0, hi = b->ncalls;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (b->calls[mid].insn < to)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* No promotion stub displaces the target of another unit's jump (a tail
 * jump into the middle of a function, refuse_entered_inside), nor, in a
 * function with indirect jumps, a code address the program's data or
 * operands name (data_labels, operand_labels): it could be a jump's. */
static void refuse_promote_targets(struct ana *a)
{
	struct rw_binary *b = a->b;
	qsort(a->jump_callers.v, a->jump_callers.n, sizeof(uint64_t), u64_cmp);
	for (size_t i = 0; i < a->labels.n; i++) {
		size_t c = call_from(b, a->labels.v[i]);
		if (c < b->ncalls && b->calls[c].promote_from &&
		    b->calls[c].promote_from < a->labels.v[i] &&
		    bsearch(&b->calls[c].insn, a->jump_callers.v, a->jump_callers.n,
			    sizeof(uint64_t), u64_cmp))
			b->calls[c].promote_from = 0;
	}
	if (a->oom)           /* the labels may be incomplete: no such call */
		for (size_t i = 0; i < a->jump_callers.n; i++) {
			size_t c = call_from(b, a->jump_callers.v[i]);
			if (c < b->ncalls && b->calls[c].insn == a->jump_callers.v[i])
				b->calls[c].promote_from = 0;
		}
	for (size_t i = 0; i < a->nbf; i++)
		for (uint32_t t = 0; t < a->tails[i].n; t++) {
			/* the first call at or after the target: the only one
			 * whose displaced instructions could hold it (they are
			 * no calls, so they lie between two) */
			uint64_t to = a->tails[i].to[t].to;
			size_t lo = call_from(b, to);
			if (lo < b->ncalls && b->calls[lo].promote_from &&
			    b->calls[lo].promote_from < to)
				b->calls[lo].promote_from = 0;
		}
}

/* The same for the stubs of indirect tail jumps (unit_tail_ind): no other
 * unit's direct jump lands among what one displaces (the jump excepted: the
 * stub begins there), or the function's indirect tail jumps are not
 * promoted.  Labels are not checked: the unit has no indirect jump but
 * tail calls, and another unit's indirect jump into it is taken to go to a
 * function's entry, as for a promoted call's. */
static void refuse_tail_ind_targets(struct ana *a)
{
	for (size_t i = 0; i < a->nbf; i++)
		for (uint32_t t = 0; t < a->tails[i].n; t++) {
			uint64_t to = a->tails[i].to[t].to;
			uint32_t g = func_index(a, func_at(a, to));
			const struct unit_tails *u = g == RW_NONE ? NULL : &a->tails[a->owner[g]];
			for (uint32_t j = 0; u && j < u->nind; j++)
				if (to > u->ind[j].from && to <= u->ind[j].at)
					a->b->funcs[a->owner[g]].tail_promotable = false;
		}
}

/* ------------------------------------------------------------------ entry */

static bool is_cold_name(const char *name)
{
	if (!name)
		return false;
	const char *p = strstr(name, ".cold");
	return p && (p[5] == 0 || p[5] == '.');
}

/* A fragment that another unit jumps into too is not its owner's alone: a
 * clone of the owner would copy code that serves another frame, and padding
 * the owner would edit that code and its CFI for the other frame as well. */
static void refuse_shared_fragments(struct ana *a)
{
	for (size_t g = 0; g < a->nbf; g++) {
		if (!a->claimed_twice[g] || a->owner[g] == RW_NONE)
			continue;
		struct rw_func *owner = &a->b->funcs[a->owner[g]];
		owner->cloneable = owner->dispatch = false;
		owner->clone_why = RW_CLONE_FRAGMENT;
		owner->pad_mask = 1;
		owner->pad_in_place = 0;
		owner->pad_entry = false;
		owner->entry_tail = false;
		owner->pad_why = RW_PAD_FRAGMENT_SHARED;
		owner->why_at = a->b->funcs[g].addr;
	}
}

/* The end of the padding instruction at or after `at` (code at p, n bytes,
 * decoded from its start), or 0. */
static uint64_t padding_boundary(struct ana *a, const uint8_t *pad, size_t n, uint64_t p, uint64_t at)
{
	cs_insn *insn = cs_malloc(a->cs);
	size_t off = 0, k;
	while (insn && off < n && p + off < at && (k = x86_padding_insn(a->cs, insn, pad + off, n - off,
								  p + off, 0)))
		off += k;
	if (insn)
		cs_free(insn, 1);
	return p + off >= at ? p + off : 0;
}

/* Where a page takes the marker of cross-module calls (rewriter.h section
 * 1, Cross-module calls), or 0, and the bytes the rewrite writes there
 * (the marker, nops to a boundary of the padding) into *len: at the start
 * of the first gap of alignment padding in the page, between functions e
 * and g = e + 1, with room for RW_XCALL_MARK_BYTES.  Code may fall through
 * it (the marker is nops), and no island may need those bytes: g needs
 * none (its entry takes a jmp rel32 and nothing jumps inside it), or the
 * islands at the end of the gap lie past the marker (the rewriter's, found
 * on the original padding, past the nops written after the marker, and
 * training's jmp rel32 before it, at the last boundary with room); nor may
 * the entry patch of a function too short for its own (e at least 16
 * bytes). */
static uint64_t page_mark(struct ana *a, size_t from, uint64_t page, uint8_t *len)
{
	const struct rw_binary *b = a->b;
	for (size_t e = from; e + 1 < a->nbf && a->bf[e + 1].addr < page + 4096; e++) {
		uint64_t p = a->bf[e].addr + a->bf[e].size, g = a->bf[e + 1].addr, end;
		const struct rw_unit *ug = &b->units[e + 1];
		uint8_t pad[64];
		if (p < page || g < p + RW_XCALL_MARK_BYTES || g - p > sizeof(pad) ||
		    p + RW_XCALL_MARK_BYTES > page + 4096 || a->bf[e].size < 16 ||
		    bin_read(b->bin, p, pad, g - p) < 0 || !x86_is_padding(a->cs, pad, g - p, p) ||
		    !(end = padding_boundary(a, pad, g - p, p, p + RW_XCALL_MARK_BYTES)))
			continue;
		bool no_island = ug->entry_rel32 && !ug->island.at &&
				 b->funcs[e + 1].pad_why != RW_PAD_ENTERED_INSIDE;
		/* the rewriter's island, if g may take one, else g: training's
		 * jmp rel32 fits before it, past the marker */
		uint64_t island = ug->island.at ? ug->island.at
				  : ug->near_island.at ? ug->near_island.at : g;
		if (no_island || (island >= end && island >= p + RW_XCALL_MARK_BYTES + 5)) {
			*len = (uint8_t)(end - p);
			return p;
		}
	}
	return 0;
}

/* Every function's xcall_mark: its page's (page_mark), found once a page. */
static void find_marks(struct ana *a)
{
	uint64_t page = 1, mark = 0;
	uint8_t len = 0;
	size_t first = 0;
	for (size_t i = 0; i < a->nbf; i++) {
		uint64_t pg = a->bf[i].addr & ~(uint64_t)0xfff;
		if (pg != page) {
			page = pg;
			while (first < i && a->bf[first].addr + a->bf[first].size <= pg)
				first++;
			mark = page_mark(a, first ? first - 1 : 0, pg, &len);
		}
		a->b->funcs[i].xcall_mark = mark;
		a->b->funcs[i].xcall_mark_len = mark ? len : 0;
	}
}

/* Forwarders (rewriter.h section 1, Cross-module calls): functions whose
 * code is [endbr64;] jmp to a PLT stub (or jmp *slot(%rip)) whose GOT slot
 * the module's own FUNC fills: rw_func.forward_to, forward_slot; or another
 * module's definition of its symbol: forward_symbol (where the module can be
 * made to bind at load time: the check reads the slot). */
static void find_forwarders(struct ana *a)
{
	struct rw_binary *b = a->b;
	for (size_t i = 0; i < a->nbf; i++) {
		uint8_t code[10];
		const struct bin_function *f = &a->bf[i];
		size_t len = f->size < sizeof(code) ? f->size : sizeof(code);
		/* (a PLT stub is no function another module calls) */
		if (len < 5 || bin_plt_stub(b->bin, f->addr, NULL, NULL) ||
		    bin_read(b->bin, f->addr, code, len) < 0)
			continue;
		size_t o = x86_endbr64_len(code, len);
		uint64_t slot = 0;
		int32_t rel;
		if (o + 5 <= len && code[o] == 0xe9) {
			memcpy(&rel, code + o + 1, 4);
			uint64_t t = f->addr + o + 5 + (int64_t)rel;
			slot = bin_plt_stub(b->bin, t, NULL, NULL) ? plt_slot(a, t) : 0;
		} else if (o + 6 <= len && code[o] == 0xff && code[o + 1] == 0x25) {
			memcpy(&rel, code + o + 2, 4);
			slot = f->addr + o + 6 + (int64_t)rel;
		}
		/* the check reads the slot: filled at load time */
		if (!slot || b->bind_now == RW_BIND_NOW_NONE)
			continue;
		uint64_t own = rw_slot_own(b, slot);
		const char *sym = own ? NULL : rw_slot_symbol(b, slot);
		if (own ? own != f->addr && rw_func_index(b, own) != RW_NONE : sym != NULL) {
			b->funcs[i].forward_to = own;
			b->funcs[i].forward_slot = slot;
			b->funcs[i].forward_symbol = sym;
		}
	}
}

/* Function g's entry jmp loses its island: no dispatch, no entry wrapper. */
static void drop_island(struct ana *a, uint32_t g)
{
	struct rw_func *rf = &a->b->funcs[g];
	if (rf->pad_entry) {
		rf->pad_mask = rw_in_place_mask(rf);
		rf->pad_in_place = 0;
		rf->pad_entry = false;
		rf->entry_tail = false;
		rf->entry_why = RW_ENTRY_BRANCH_TARGET;
	}
	rf->dispatch = false;
	a->b->units[g].island.at = 0;
}

/* No jump of any unit may land in an island past its first byte. */
static void refuse_island_targets(struct ana *a)
{
	struct spot {
		uint64_t at, end;
		uint32_t func;
	} *v = malloc((a->nbf ? a->nbf : 1) * sizeof(*v));
	uint32_t n = 0;
	for (size_t g = 0; g < a->nbf; g++) {
		const struct rw_island *is = &a->b->units[g].island;
		if (is->at && v)
			v[n++] = (struct spot){is->at, is->at + is->len, (uint32_t)g};
		else if (is->at)        /* out of memory: none, rather than one not checked */
			drop_island(a, (uint32_t)g);
	}
	for (size_t i = 0; v && i < a->nbf; i++)
		for (uint32_t t = 0; t < a->tails[i].n; t++) {
			uint64_t to = a->tails[i].to[t].to;
			uint32_t lo = 0, hi = n;  /* the last island that starts before `to` */
			while (lo < hi) {
				uint32_t mid = (lo + hi) / 2;
				if (v[mid].at < to)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo && to < v[lo - 1].end)
				drop_island(a, v[lo - 1].func);
		}
	free(v);
}

/* A function another one jumps into, past its entry (a tail jump recorded
 * by the jumper's unit; glibc: mempcpy into memmove + 3): that path runs its
 * code without a frame of it, so padding it in place would move the jumper's
 * callees (an entry wrapper too: no entry wrapper).  A clone is a copy the
 * jump does not reach, and a dispatch displaces the first instructions
 * only: when the jmp rel32's lie before every such jump's target it keeps
 * them, else it may jump by its island when the instructions that displaces
 * do. */
static void refuse_entered_inside(struct ana *a)
{
	uint64_t *inside = calloc(a->nbf ? a->nbf : 1, sizeof(*inside));   /* lowest, per function */
	for (size_t i = 0; i < a->nbf; i++)
		for (uint32_t t = 0; t < a->tails[i].n; t++) {
			uint64_t to = a->tails[i].to[t].to;
			uint32_t g = func_index(a, func_at(a, to));
			if (g == RW_NONE || a->b->funcs[g].addr == to)
				continue;
			struct rw_func *rf = &a->b->funcs[g];
			if (!inside || !inside[g] || to < inside[g]) {
				rf->why_at = to;
				if (inside)
					inside[g] = to;
			}
			rf->pad_mask = 1;
			rf->pad_why = RW_PAD_ENTERED_INSIDE;
			rf->pad_in_place = 0;
			rf->pad_entry = false;
			rf->entry_tail = false;
			rf->entry_why = RW_ENTRY_ENTERED_INSIDE;
		}
	for (size_t g = 0; g < a->nbf; g++) {
		struct rw_func *rf = &a->b->funcs[g];
		struct rw_unit *ru = &a->b->units[g];
		if (rf->pad_why != RW_PAD_ENTERED_INSIDE)
			continue;
		uint64_t to = inside ? inside[g] : rf->addr;
		bool far = rf->dispatch && !ru->island.at && to >= rf->addr + ru->entry.off + ru->entry.len;
		uint64_t near_end = rf->addr + ru->near.off + ru->near.len;
		bool near = rf->cloneable && ru->near_island.at && to >= near_end;
		/* nor among an indirect tail jump's stub's (unit_tail_ind) */
		for (uint32_t t = 0; rf->tail_promotable && t < a->tails[g].nind; t++)
			near = near && a->tails[g].ind[t].from >= near_end;
		if (!far && near) {
			ru->entry = ru->near;
			ru->island = ru->near_island;
		} else if (!far) {
			ru->island.at = 0;
		}
		rf->dispatch = far || near;
	}
	free(inside);
	refuse_island_targets(a);
}

static void analysis_free(struct ana *a)
{
	cs_close(&a->cs);
	for (size_t i = 0; a->tails && i < a->nbf; i++) {
		free(a->tails[i].to);
		free(a->tails[i].ind);
	}
	free(a->tails);
	free(a->owner);
	free(a->cand);
	free(a->claimed_twice);
	free(a->labels.v);
	free(a->jump_callers.v);
}

int rw_analyse(struct rw_binary *b, char *err, size_t errlen)
{
	struct ana a = {.b = b};
	a.bf = bin_functions(b->bin, &a.nbf);
	if (!x86_open(&a.cs)) {
		errmsg(err, errlen, "cannot start the disassembler");
		return -1;
	}
	b->nfuncs = a.nbf;
	b->funcs = calloc(a.nbf ? a.nbf : 1, sizeof(*b->funcs));
	b->units = calloc(a.nbf ? a.nbf : 1, sizeof(*b->units));
	a.owner = malloc((a.nbf ? a.nbf : 1) * sizeof(*a.owner));
	a.cand = calloc(a.nbf ? a.nbf : 1, sizeof(*a.cand));
	a.tails = calloc(a.nbf ? a.nbf : 1, sizeof(*a.tails));
	a.claimed_twice = calloc(a.nbf ? a.nbf : 1, sizeof(*a.claimed_twice));
	if (!b->funcs || !b->units || !a.owner || !a.cand || !a.tails || !a.claimed_twice) {
		errmsg(err, errlen, "out of memory analysing %s", b->path);
		goto fail;
	}
	for (size_t i = 0; i < a.nbf; i++) {
		const struct bin_function *f = &a.bf[i];
		b->funcs[i] = (struct rw_func){.addr = f->addr, .size = f->size, .name = f->name,
					       .parent = RW_NONE, .pad_mask = 1,
					       .clone_why = RW_CLONE_ANALYSIS, .args_read = -1,
					       .entry_why = RW_ENTRY_SHAPE};
		a.owner[i] = RW_NONE;
		b->units[i].frag = RW_NONE;
		struct bin_cfa cfa;
		bool entry_ok = bin_cfa_at(b->bin, f->addr, &cfa) == 0 && cfa.reg == BIN_CFA_RSP &&
				cfa.offset == 8;
		a.cand[i] = is_cold_name(f->name) || (!f->name && !entry_ok);
	}
	if (a.nbf) {
		a.code_lo = a.bf[0].addr;
		a.code_hi = a.bf[a.nbf - 1].addr + a.bf[a.nbf - 1].size;
		data_labels(&a);
	}
	/* functions entered by calls first: they claim their fragments */
	for (int pass = 0; pass < 2; pass++)
		for (size_t i = 0; i < a.nbf; i++) {
			if (a.owner[i] != RW_NONE || a.cand[i] != (pass == 1))
				continue;
			analyse_unit(&a, (uint32_t)i);
			if (pass == 1) {
				/* a fragment nobody claimed: never entered by a call */
				b->funcs[i].pad_mask = 1;
				b->funcs[i].pad_why = RW_PAD_FRAGMENT;
				b->funcs[i].pad_in_place = 0;
				b->funcs[i].pad_entry = false;
				b->funcs[i].entry_tail = false;
				b->funcs[i].entry_why = RW_ENTRY_FRAGMENT;
			}
		}
	refuse_shared_fragments(&a);
	add_tail_callees(&a);
	refuse_entered_inside(&a);
	find_marks(&a);
	find_forwarders(&a);
	resolve_calls(&a);
	refuse_promote_targets(&a);
	refuse_tail_ind_targets(&a);
	for (size_t i = 0; i < a.nbf; i++) {     /* kept for rw_may_tail_call */
		b->units[i].tail_to = a.tails[i].to;
		b->units[i].ntail_to = a.tails[i].n;
		a.tails[i].to = NULL;
		if (b->funcs[i].tail_promotable) {
			b->units[i].tail_ind = a.tails[i].ind;
			b->units[i].ntail_ind = a.tails[i].nind;
			a.tails[i].ind = NULL;
		}
	}
	analysis_free(&a);
	return 0;
fail:
	analysis_free(&a);
	return -1;
}
