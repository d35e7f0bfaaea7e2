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

/* libdw gives a register+offset CFA as one DW_OP_bregx (DW_CFA_def_cfa); a
 * one-operation DW_OP_bregN expression says the same thing. */
static int rule_from_ops(const Dwarf_Op *ops, size_t nops, struct bin_cfa *rule)
{
	uint64_t reg;
	int64_t off;
	if (nops != 1)
		return -1;
	if (ops[0].atom == DW_OP_bregx) {
		reg = ops[0].number;
		off = (int64_t)ops[0].number2;
	} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg31) {
		reg = ops[0].atom - DW_OP_breg0;
		off = (int64_t)ops[0].number;
	} else {
		return -1;
	}
	if (reg != BIN_CFA_RSP && reg != BIN_CFA_RBP)
		return -1;
	*rule = (struct bin_cfa){(enum bin_cfa_reg)reg, off};
	return 0;
}

static int cfa_in(Dwarf_CFI *cfi, uint64_t pc, struct bin_cfa *rule)
{
	Dwarf_Frame *f;
	Dwarf_Op *ops;
	size_t nops;
	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &f) != 0)
		return 1;
	int r = dwarf_frame_cfa(f, &ops, &nops) == 0 ? rule_from_ops(ops, nops, rule) : -1;
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
