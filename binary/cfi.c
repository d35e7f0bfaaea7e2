/* cfi.c: CFA rules from libdw's CFI (.eh_frame first, then .debug_frame). */
#include <stdlib.h>

#include <dwarf.h>

#include "binary/internal.h"

int bin_cfi_row_start(Dwarf_CFI *cfi, uint64_t pc, uint64_t *start)
{
	Dwarf_Frame *f;
	Dwarf_Addr lo, hi;
	bool signal;
	if (dwarf_cfi_addrframe(cfi, pc, &f) != 0)
		return -1;
	int r = dwarf_frame_info(f, &lo, &hi, &signal);
	free(f);
	*start = lo;
	return r < 0 ? -1 : 0;
}

/* One value of a CFA expression: a number, or the rsp/rbp register plus a
 * number (base >= 0). */
struct cfa_value {
	int base;
	int64_t num;
};

#define CFA_STACK 8
#define DWARF_REG_RIP 16

/* The value a DW_OP_breg* pushes: rsp/rbp stay symbolic; rip is pc, which
 * the CFI row is for (binutils' lazy .plt FDE computes the CFA from rip's low
 * bits, and a load bias is page-aligned, so the link-time pc serves). */
static int breg_value(uint64_t reg, int64_t off, uint64_t pc, struct cfa_value *v)
{
	if (reg == BIN_CFA_RSP || reg == BIN_CFA_RBP)
		*v = (struct cfa_value){(int)reg, off};
	else if (reg == DWARF_REG_RIP)
		*v = (struct cfa_value){-1, (int64_t)(pc + (uint64_t)off)};
	else
		return -1;
	return 0;
}

/* a OP b for the binary operations; only + and - take a register. */
static int cfa_binary(uint8_t atom, struct cfa_value a, struct cfa_value b, struct cfa_value *r)
{
	uint64_t x = (uint64_t)a.num, y = (uint64_t)b.num;
	if (atom == DW_OP_plus && (a.base < 0 || b.base < 0)) {
		*r = (struct cfa_value){a.base >= 0 ? a.base : b.base, (int64_t)(x + y)};
		return 0;
	}
	if (atom == DW_OP_minus && b.base < 0) {
		*r = (struct cfa_value){a.base, (int64_t)(x - y)};
		return 0;
	}
	if (a.base >= 0 || b.base >= 0)
		return -1;
	switch (atom) {
	case DW_OP_and: x &= y; break;
	case DW_OP_or: x |= y; break;
	case DW_OP_xor: x ^= y; break;
	case DW_OP_mul: x *= y; break;
	case DW_OP_shl: x = y < 64 ? x << y : 0; break;
	case DW_OP_shr: x = y < 64 ? x >> y : 0; break;
	case DW_OP_ge: x = a.num >= b.num; break;
	case DW_OP_gt: x = a.num > b.num; break;
	case DW_OP_le: x = a.num <= b.num; break;
	case DW_OP_lt: x = a.num < b.num; break;
	case DW_OP_eq: x = a.num == b.num; break;
	case DW_OP_ne: x = a.num != b.num; break;
	default: return -1;
	}
	*r = (struct cfa_value){-1, (int64_t)x};
	return 0;
}

/* Push the value of one operation that takes nothing from the stack; 1 when
 * op is not such an operation. */
static int cfa_push(const Dwarf_Op *op, uint64_t pc, struct cfa_value *v)
{
	if (op->atom >= DW_OP_lit0 && op->atom <= DW_OP_lit31)
		*v = (struct cfa_value){-1, op->atom - DW_OP_lit0};
	else if (op->atom >= DW_OP_breg0 && op->atom <= DW_OP_breg31)
		return breg_value(op->atom - DW_OP_breg0, (int64_t)op->number, pc, v);
	else if (op->atom == DW_OP_bregx)
		return breg_value(op->number, (int64_t)op->number2, pc, v);
	else if (op->atom == DW_OP_const1u || op->atom == DW_OP_const1s ||
		 op->atom == DW_OP_const2u || op->atom == DW_OP_const2s ||
		 op->atom == DW_OP_const4u || op->atom == DW_OP_const4s ||
		 op->atom == DW_OP_const8u || op->atom == DW_OP_const8s ||
		 op->atom == DW_OP_constu || op->atom == DW_OP_consts)
		*v = (struct cfa_value){-1, (int64_t)op->number};
	else
		return 1;
	return 0;
}

/* The CFA at pc as rsp/rbp + offset.  libdw gives DW_CFA_def_cfa as one
 * DW_OP_bregx; DW_CFA_def_cfa_expression comes as written, and is evaluated
 * here with rip = pc as long as it stays register + number (the lazy .plt's
 * rule: rsp + 8, or + 16 once the stub has pushed the relocation index).
 * Memory reads (DW_OP_deref) and other registers are refused: -1. */
static int rule_from_ops(const Dwarf_Op *ops, size_t nops, uint64_t pc, struct bin_cfa *rule)
{
	struct cfa_value st[CFA_STACK];
	size_t sp = 0;
	for (size_t i = 0; i < nops; i++) {
		const Dwarf_Op *op = &ops[i];
		struct cfa_value v;
		int pushed = cfa_push(op, pc, &v);
		if (pushed < 0)
			return -1;
		if (pushed == 0) {
			if (sp == CFA_STACK)
				return -1;
			st[sp++] = v;
		} else if (op->atom == DW_OP_plus_uconst && sp >= 1) {
			st[sp - 1].num += (int64_t)op->number;
		} else if (sp >= 2 && cfa_binary(op->atom, st[sp - 2], st[sp - 1], &v) == 0) {
			st[--sp - 1] = v;
		} else {
			return -1;
		}
	}
	if (sp != 1 || st[0].base < 0)
		return -1;
	*rule = (struct bin_cfa){(enum bin_cfa_reg)st[0].base, st[0].num};
	return 0;
}

static int cfa_in(Dwarf_CFI *cfi, uint64_t pc, struct bin_cfa *rule)
{
	Dwarf_Frame *f;
	Dwarf_Op *ops;
	size_t nops;
	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &f) != 0)
		return 1;
	int r = dwarf_frame_cfa(f, &ops, &nops) == 0 ? rule_from_ops(ops, nops, pc, rule) : -1;
	free(f);
	return r;
}

int bin_cfa_at(struct bin_module *m, uint64_t pc, struct bin_cfa *rule)
{
	int r = cfa_in(m->eh_cfi, pc, rule);
	if (r > 0)
		r = cfa_in(m->debug_cfi, pc, rule);
	return r > 0 ? -1 : r;
}

bool bin_signal_frame(struct bin_module *m, uint64_t pc, uint64_t *lo, uint64_t *hi)
{
	Dwarf_Frame *f;
	bool signal = false;
	if (!m->eh_cfi || dwarf_cfi_addrframe(m->eh_cfi, pc, &f) != 0)
		return false;
	Dwarf_Addr start, end;
	if (dwarf_frame_info(f, &start, &end, &signal) < 0)
		signal = false;
	free(f);
	*lo = start;
	*hi = end;
	return signal;
}

/* Where the CFI row at pc saves a callee-saved register: the deepest slot's
 * CFA - depth, or 0 for none; 1 when cfi has no row for pc. */
static int saved_in(Dwarf_CFI *cfi, uint64_t pc, int64_t *depth)
{
	static const int callee_saved[] = {3, 6, 12, 13, 14, 15};     /* rbx rbp r12-r15 */
	Dwarf_Frame *f;
	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &f) != 0)
		return 1;
	*depth = 0;
	for (size_t i = 0; i < sizeof(callee_saved) / sizeof(callee_saved[0]); i++) {
		Dwarf_Op mem[3], *ops;
		size_t n;
		if (dwarf_frame_register(f, callee_saved[i], mem, &ops, &n) != 0 || !ops || !n ||
		    ops[0].atom != DW_OP_call_frame_cfa)
			continue;       /* undefined, same value, or not "at CFA + N" */
		int64_t off;
		if (n == 1)
			off = 0;
		else if (n == 2 && ops[1].atom == DW_OP_plus_uconst)
			off = (int64_t)ops[1].number;
		else if (n == 3 && ops[1].atom == DW_OP_consts && ops[2].atom == DW_OP_plus)
			off = (int64_t)ops[1].number;
		else
			continue;
		if (-off > *depth)
			*depth = -off;
	}
	free(f);
	return 0;
}

int bin_saved_depth(struct bin_module *m, uint64_t pc, int64_t *depth)
{
	int r = saved_in(m->eh_cfi, pc, depth);
	if (r > 0)
		r = saved_in(m->debug_cfi, pc, depth);
	return r > 0 ? -1 : r;
}
