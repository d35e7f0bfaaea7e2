/* clone.c: copies of whole functions for the plan's clones (rewriter.h
 * section 1, Cloning).  A copy keeps every instruction's length, so the
 * original's CFI program and LSDA (offsets from the function start) are valid
 * for it unchanged. */
#include <dwarf.h>
#include <stdlib.h>

#include "rewriter/internal.h"
#include "x86/reloc.h"

/* Where the copy of insn at `to` must branch: into the copy for a jump
 * inside the function (and a call past its entry), else the original. */
static uint64_t copy_target(const cs_insn *insn, uint64_t lo, uint64_t hi, uint64_t to_lo)
{
	uint64_t t = x86_branch_target(insn);
	bool inside = t >= lo && t < hi && (insn->id != X86_INS_CALL || t != lo);
	return inside ? to_lo + (t - lo) : t;
}

static enum rw_clone_why copy_insn(const cs_insn *insn, uint64_t lo, uint64_t hi, uint64_t to_lo,
				   struct rbuf *out)
{
	uint64_t rip = x86_rip_target(insn);
	if (rip >= lo && rip < hi)
		return RW_CLONE_CODE_ADDRESS;
	uint8_t bytes[X86_RELOC_MAX_INSN];
	const char *why;
	uint64_t to = to_lo + (insn->address - lo);
	if (x86_copy_insn(insn, to, x86_branch_target(insn) ? copy_target(insn, lo, hi, to_lo) : 0,
			  bytes, &why) < 0)
		return insn->detail->x86.encoding.imm_size == 1 ? RW_CLONE_SHORT_BRANCH : RW_CLONE_FAR;
	if (out)
		rb_put(out, bytes, insn->size);
	return RW_CLONE_OK;
}

enum rw_clone_why rw_copy_function(csh cs, const struct rw_binary *b, uint32_t fi, uint64_t to,
				   struct rbuf *out)
{
	const struct rw_func *f = &b->funcs[fi];
	uint8_t *code = malloc(f->size ? f->size : 1);
	if (!code || !f->size || bin_read(b->bin, f->addr, code, f->size) < 0) {
		free(code);
		return RW_CLONE_UNDECODABLE;
	}
	const uint8_t *p = code;
	size_t left = f->size;
	uint64_t addr = f->addr;
	enum rw_clone_why why = RW_CLONE_OK;
	cs_insn *insn = cs_malloc(cs);
	while (left && why == RW_CLONE_OK) {
		if (!cs_disasm_iter(cs, &p, &left, &addr, insn)) {
			/* trailing padding is copied as it is (analyze.c's rule) */
			for (size_t i = 0; i < left; i++)
				if (p[i] != 0x90 && p[i] != 0xcc && p[i] != 0)
					why = RW_CLONE_UNDECODABLE;
			if (out && why == RW_CLONE_OK)
				rb_put(out, p, left);
			break;
		}
		why = copy_insn(insn, f->addr, f->addr + f->size, to, out);
	}
	cs_free(insn, 1);
	free(code);
	return why;
}

enum rw_clone_why rw_clone_check(csh cs, const struct rw_binary *b, uint32_t fi)
{
	const struct rw_func *f = &b->funcs[fi];
	uint32_t fde = eh_fde_at(&b->eh, f->addr);
	if (fde == RW_NONE)
		return RW_CLONE_NO_FDE;
	const struct eh_entry *e = &b->eh.e[fde], *cie = &b->eh.e[e->cie_index];
	if (e->pc_begin != f->addr || e->pc_range != f->size ||
	    (cie->fde_enc & 0x70) != DW_EH_PE_pcrel)
		return RW_CLONE_NO_FDE;
	if (e->lsda) {
		/* the copied FDE points at the same LSDA: pc-relative, or absolute
		 * where addresses are fixed (no PIE: no relocation needed) */
		int how = cie->lsda_enc & 0x70;
		bool fixed = how == DW_EH_PE_pcrel || (how == DW_EH_PE_absptr && b->ehdr.e_type == ET_EXEC);
		uint8_t lpstart;
		if (!fixed || bin_read(b->bin, e->lsda, &lpstart, 1) < 0 || lpstart != DW_EH_PE_omit)
			return RW_CLONE_LSDA;
	}
	/* a copy 16 MiB away: every rel8 out of the function shows */
	return rw_copy_function(cs, b, fi, f->addr + (16u << 20), NULL);
}
