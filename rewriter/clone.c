/* clone.c: copies of whole functions, with their fragment, for the plan's
 * clones (rewriter.h section 1, Cloning).  A copy keeps every instruction's
 * length, so the original's CFI program and LSDA (offsets from the FDE's
 * start) are valid for it unchanged. */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/internal.h"
#include "x86/reloc.h"

/* The index of the range holding addr, or n. */
static uint32_t range_of(const struct rw_copy_range *r, uint32_t n, uint64_t addr)
{
	uint32_t i = 0;
	while (i < n && (addr < r[i].lo || addr >= r[i].hi))
		i++;
	return i;
}

/* Where the copy of a branch must go: into the copy of the range holding its
 * target (but a call of the function's entry), else the original. */
static uint64_t copy_target(const cs_insn *insn, const struct rw_copy_range *r, uint32_t n)
{
	uint64_t t = x86_branch_target(insn);
	uint32_t i = range_of(r, n, t);
	bool inside = i < n && (insn->id != X86_INS_CALL || t != r[0].lo);
	return inside ? r[i].to + (t - r[i].lo) : t;
}

/* The veneer that takes the copy of a rel8 branch out of the ranges
 * (rewriter.h section 1, Cloning) to its target: a new one at the end of v,
 * or 0 when v is full. */
static uint64_t add_veneer(struct rw_clone_tail *v, uint64_t branch, uint64_t to, uint64_t target)
{
	if (v->n == RW_MAX_VENEERS)
		return 0;
	uint64_t at = v->base + (uint64_t)v->n * RW_VENEER_BYTES;
	v->v[v->n++] = (struct rw_veneer){at, branch, to, target};
	return at;
}

/* Where the copy of the unit's switch table at t lies (after the veneers'
 * room), or 0 when t is none of its tables. */
static uint64_t table_copy(const struct rw_clone_tail *v, uint64_t t)
{
	uint64_t at = v->tables;
	for (uint32_t i = 0; t && i < v->unit->ntables; i++) {
		const struct rw_switch_table *st = &v->unit->tables[i];
		if (st->at == t)
			return at;
		at = (at + (st->abs ? 8 : 4) * (uint64_t)st->n + 7) & ~(uint64_t)7;
	}
	return 0;
}

/* Copy insn, which lies in range `in`; a rel8 branch out that does not reach
 * its target from the copy goes through a veneer of v, a lea of one of the
 * unit's switch tables names its copy. */
static enum rw_clone_why copy_insn(const cs_insn *insn, const struct rw_copy_range *r, uint32_t n,
				   uint32_t in, struct rw_clone_tail *v, struct rbuf *out)
{
	if (range_of(r, n, x86_rip_target(insn)) < n)
		return RW_CLONE_CODE_ADDRESS;
	uint8_t bytes[X86_RELOC_MAX_INSN];
	const char *why;
	uint64_t to = r[in].to + (insn->address - r[in].lo);
	uint64_t target = x86_branch_target(insn) ? copy_target(insn, r, n) : 0;
	if (x86_copy_insn(insn, to, target, bytes, &why) < 0) {
		if (insn->detail->x86.encoding.imm_size != 1)
			return RW_CLONE_FAR;
		uint32_t before = v->n;
		uint64_t at = range_of(r, n, target) == n ? add_veneer(v, insn->address, to, target) : 0;
		if (!at || x86_copy_insn(insn, to, at, bytes, &why) < 0) {
			v->n = before;
			return RW_CLONE_SHORT_BRANCH;
		}
	}
	uint64_t table = table_copy(v, x86_rip_target(insn));
	if (table) {            /* a switch's lea: of the table's copy */
		uint8_t off = insn->detail->x86.encoding.disp_offset;
		int64_t d = (int64_t)(table - (to + insn->size));
		if (!off || insn->detail->x86.encoding.disp_size != 4 || d < INT32_MIN || d > INT32_MAX)
			return RW_CLONE_FAR;
		int32_t d32 = (int32_t)d;
		memcpy(bytes + off, &d32, 4);
	}
	uint8_t off = 0;
	uint64_t abs = x86_abs_operand(insn, &off);
	if (abs && (table = table_copy(v, abs))) {      /* jmp *T(,%rI,8) */
		if (!off || table > INT32_MAX)
			return RW_CLONE_FAR;
		int32_t d32 = (int32_t)table;
		memcpy(bytes + off, &d32, 4);
	}
	if (out)
		rb_put(out, bytes, insn->size);
	return RW_CLONE_OK;
}

/* Copy range r[in] to the end of out (NULL: only check). */
static enum rw_clone_why copy_range(csh cs, const struct rw_binary *b, const struct rw_copy_range *r,
				    uint32_t n, uint32_t in, struct rw_clone_tail *v, struct rbuf *out)
{
	size_t size = r[in].hi - r[in].lo;
	uint8_t *code = malloc(size ? size : 1);
	if (!code || !size || bin_read(b->bin, r[in].lo, code, size) < 0) {
		free(code);
		return RW_CLONE_UNDECODABLE;
	}
	const uint8_t *p = code;
	size_t left = size;
	uint64_t addr = r[in].lo;
	enum rw_clone_why why = RW_CLONE_OK;
	cs_insn *insn = cs_malloc(cs);
	while (left && why == RW_CLONE_OK) {
		if (!x86_disasm_iter(cs, &p, &left, &addr, insn)) {
			/* trailing padding is copied as it is (analyze.c's rule) */
			for (size_t i = 0; i < left; i++)
				if (p[i] != 0x90 && p[i] != 0xcc && p[i] != 0)
					why = RW_CLONE_UNDECODABLE;
			if (out && why == RW_CLONE_OK)
				rb_put(out, p, left);
			break;
		}
		why = copy_insn(insn, r, n, in, v, out);
	}
	cs_free(insn, 1);
	free(code);
	return why;
}

/* The veneers of v, each a jmp rel32 to its target, at v->base (the end of
 * out, past int3 up to it; NULL: only check their reach). */
static enum rw_clone_why put_veneers(const struct rw_clone_tail *v, uint64_t out_vaddr,
				     struct rbuf *out)
{
	while (out && !out->oom && v->n && out_vaddr + out->n < v->base)
		rb_u8(out, 0xcc);
	for (uint32_t i = 0; i < v->n; i++) {
		uint8_t jmp[RW_VENEER_BYTES];
		if (x86_encode_jmp(v->v[i].at, v->v[i].target, jmp) < 0)
			return RW_CLONE_FAR;
		if (out)
			rb_put(out, jmp, sizeof(jmp));
	}
	return RW_CLONE_OK;
}

/* The copies of the unit's switch tables from v->tables, each at an 8-byte
 * boundary, each entry the offset of its target's copy from the table's
 * copy (an absolute table's: that copy's address; NULL: only check). */
static enum rw_clone_why put_tables(const struct rw_binary *b, const struct rw_copy_range *r,
				    uint32_t n, const struct rw_clone_tail *v, uint64_t out_vaddr,
				    struct rbuf *out)
{
	for (uint32_t i = 0; i < v->unit->ntables; i++) {
		const struct rw_switch_table *t = &v->unit->tables[i];
		uint64_t copy = table_copy(v, t->at);
		while (out && !out->oom && out_vaddr + out->n < copy)
			rb_u8(out, 0xcc);
		for (uint32_t k = 0; k < t->n; k++) {
			int32_t e;
			uint64_t target;
			if (t->abs ? bin_read(b->bin, t->at + 8 * k, &target, 8) < 0
				   : bin_read(b->bin, t->at + 4 * k, &e, 4) < 0)
				return RW_CLONE_UNDECODABLE;
			if (!t->abs)
				target = t->at + (uint64_t)(int64_t)e;
			uint32_t in = range_of(r, n, target);
			if (in == n)
				return RW_CLONE_INDIRECT_JUMP;
			uint64_t to = r[in].to + (target - r[in].lo);
			int64_t d = (int64_t)(to - copy);
			if (!t->abs && (d < INT32_MIN || d > INT32_MAX))
				return RW_CLONE_FAR;
			if (out && t->abs)
				rb_u64(out, to);
			else if (out)
				rb_u32(out, (uint32_t)(int32_t)d);
		}
	}
	return RW_CLONE_OK;
}

enum rw_clone_why rw_copy_function(csh cs, const struct rw_binary *b, const struct rw_copy_range *r,
				   uint32_t n, struct rw_clone_tail *v, struct rbuf *out)
{
	size_t start = out ? out->n : 0;
	v->n = 0;
	v->base = (r[n - 1].to + (r[n - 1].hi - r[n - 1].lo) + RW_ALIGN - 1) & ~(uint64_t)(RW_ALIGN - 1);
	v->tables = (v->base + RW_MAX_VENEERS * RW_VENEER_BYTES + RW_ALIGN - 1) & ~(uint64_t)(RW_ALIGN - 1);
	v->unit = &b->units[rw_func_index(b, r[0].lo)];
	enum rw_clone_why why = RW_CLONE_OK;
	for (uint32_t i = 0; i < n && why == RW_CLONE_OK; i++) {
		while (out && !out->oom && out->n < start + (r[i].to - r[0].to))
			rb_u8(out, 0xcc);
		why = copy_range(cs, b, r, n, i, v, out);
	}
	if (why == RW_CLONE_OK)
		why = put_veneers(v, r[0].to - start, out);
	return why == RW_CLONE_OK ? put_tables(b, r, n, v, r[0].to - start, out) : why;
}

uint32_t rw_clone_ranges(const struct rw_binary *b, uint32_t fi, uint64_t to,
			 struct rw_copy_range r[2])
{
	const struct rw_func *f = &b->funcs[fi];
	r[0] = (struct rw_copy_range){f->addr, f->addr + f->size, to};
	uint32_t g = b->units[fi].frag;
	if (g == RW_NONE)
		return 1;
	const struct rw_func *frag = &b->funcs[g];
	uint64_t frag_to = (to + f->size + RW_ALIGN - 1) & ~(uint64_t)(RW_ALIGN - 1);
	r[1] = (struct rw_copy_range){frag->addr, frag->addr + frag->size, frag_to};
	return 2;
}

/* Whether the copy of range r can have a copy of its FDE: one FDE covers
 * exactly r, pc-relative, and its LSDA (if any) serves the copy too. */
static enum rw_clone_why check_fde(const struct rw_binary *b, const struct rw_copy_range *r)
{
	uint32_t fde = eh_fde_at(&b->eh, r->lo);
	if (fde == RW_NONE)
		return RW_CLONE_NO_FDE;
	const struct eh_entry *e = &b->eh.e[fde], *cie = &b->eh.e[e->cie_index];
	if (e->pc_begin != r->lo || e->pc_range != r->hi - r->lo ||
	    (cie->fde_enc & 0x70) != DW_EH_PE_pcrel)
		return RW_CLONE_NO_FDE;
	if (!e->lsda)
		return RW_CLONE_OK;
	/* the copied FDE points at the same LSDA: pc-relative, or absolute
	 * where addresses are fixed (no PIE: no relocation needed) */
	int how = cie->lsda_enc & 0x70;
	bool fixed = how == DW_EH_PE_pcrel || (how == DW_EH_PE_absptr && b->ehdr.e_type == ET_EXEC);
	uint8_t lpstart;
	if (!fixed || bin_read(b->bin, e->lsda, &lpstart, 1) < 0 || lpstart != DW_EH_PE_omit)
		return RW_CLONE_LSDA;
	/* its landing pads count from the FDE's start: in the copy of the range
	 * only when they lie in the range */
	struct eh_callsite *cs;
	uint32_t ncs;
	if (eh_lsda(b->bin, e->lsda, e->pc_begin, &cs, &ncs) < 0)
		return RW_CLONE_LSDA;
	enum rw_clone_why why = RW_CLONE_OK;
	for (uint32_t i = 0; i < ncs; i++)
		if (cs[i].lp && (cs[i].lp < r->lo || cs[i].lp >= r->hi))
			why = RW_CLONE_LSDA;
	free(cs);
	return why;
}

enum rw_clone_why rw_clone_check(csh cs, const struct rw_binary *b, uint32_t fi)
{
	/* a copy 16 MiB away (every rel8 out of the function shows), at a
	 * 16-byte boundary as emit_clone places it (so are its veneers) */
	struct rw_copy_range r[2];
	uint64_t to = (b->funcs[fi].addr + (16u << 20)) & ~(uint64_t)(RW_ALIGN - 1);
	uint32_t n = rw_clone_ranges(b, fi, to, r);
	for (uint32_t i = 0; i < n; i++) {
		enum rw_clone_why why = check_fde(b, &r[i]);
		if (why != RW_CLONE_OK)
			return why;
	}
	struct rw_clone_tail v;
	return rw_copy_function(cs, b, r, n, &v, NULL);
}
