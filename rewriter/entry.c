/* entry.c: callee-entry wrappers (rewriter.h section 1): the code that runs
 * a function's body W bytes deeper, and the own-frame term they add to a
 * pathmap's heights (section 3). */
#include <inttypes.h>
#include <string.h>

#include "rewriter/internal.h"
#include "x86/reloc.h"

/* lea disp32(%rsp),%rsp: one encoding whatever W is, so the CFA rows do not
 * depend on the size of the displacement. */
static void lea_rsp32(struct rbuf *o, int32_t disp)
{
	static const uint8_t op[] = {0x48, 0x8d, 0xa4, 0x24};
	rb_put(o, op, sizeof(op));
	rb_u32(o, (uint32_t)disp);
}

/* CFA = rsp + cfa from `at` on (a row only where it changes). */
static void add_row(struct rw_entry_code *e, uint64_t at, int64_t cfa)
{
	if (!e->nrows || e->rows[e->nrows - 1].cfa != (uint32_t)cfa)
		e->rows[e->nrows++] = (struct eh_row){(uint32_t)(at - e->addr), (uint32_t)cfa};
}

/* B: the displaced instructions relocated to the end of text, each with the
 * CFA row f's code has before it, then jmp back; -1 with err. */
static int emit_body(csh cs, const struct rw_binary *b, uint32_t fi, uint64_t text_vaddr,
		     struct rbuf *text, struct rw_entry_code *e, char *err, size_t errlen)
{
	const struct rw_func *f = &b->funcs[fi];
	const struct rw_unit *u = &b->units[fi];
	uint64_t from = f->addr + u->entry_off;
	uint8_t code[32];
	if (u->entry_len > sizeof(code) || bin_read(b->bin, from, code, u->entry_len) < 0)
		return errmsg(err, errlen, "cannot read the entry of %s (0x%" PRIx64 ")",
			      f->name ? f->name : "?", f->addr);
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *p = code;
	size_t left = u->entry_len;
	uint64_t addr = from;
	for (uint32_t i = 0; insn && i < u->entry_nins; i++) {
		uint64_t at = text_vaddr + text->n;
		uint8_t out[X86_RELOC_MAX_INSN];
		const char *why = "undecodable";
		int n = cs_disasm_iter(cs, &p, &left, &addr, insn) ? x86_relocate_insn(insn, at, out, &why)
								   : -1;
		if (n < 0) {
			cs_free(insn, 1);
			return errmsg(err, errlen, "cannot displace the entry of %s (0x%" PRIx64 "): %s",
				      f->name ? f->name : "?", f->addr, why);
		}
		add_row(e, at, u->entry_k[i]);
		rb_put(text, out, (size_t)n);
	}
	if (insn)
		cs_free(insn, 1);
	uint8_t jmp[5];
	if (x86_encode_jmp(text_vaddr + text->n, from + u->entry_len, jmp) < 0)
		return errmsg(err, errlen, "the entry wrapper of %s (0x%" PRIx64 ") is out of rel32 "
			      "reach", f->name ? f->name : "?", f->addr);
	add_row(e, text_vaddr + text->n, u->entry_k[u->entry_nins]);
	rb_put(text, jmp, sizeof(jmp));
	return 0;
}

int rw_emit_entry(csh cs, const struct rw_binary *b, uint32_t fi, uint32_t w, uint64_t text_vaddr,
		  struct rbuf *text, struct rw_entry_code *e, char *err, size_t errlen)
{
	const struct rw_func *f = &b->funcs[fi];
	const struct rw_unit *u = &b->units[fi];
	rb_align(text, 16, 0xcc);
	memset(e, 0, sizeof(*e));
	e->addr = text_vaddr + text->n;
	add_row(e, e->addr, 8);
	for (int i = 0; i < RW_ENTRY_GUARD; i++)
		rb_u8(text, 0xcc);
	uint64_t tramp = text_vaddr + text->n;
	lea_rsp32(text, -(int32_t)(w - 8));
	add_row(e, text_vaddr + text->n, w);
	size_t call_at = text->n;
	rb_u8(text, 0xe8);
	rb_u32(text, 0);                         /* B's rel32, below */
	lea_rsp32(text, (int32_t)(w - 8));
	add_row(e, text_vaddr + text->n, 8);
	rb_u8(text, 0xc3);
	uint64_t body = text_vaddr + text->n;
	int32_t rel = (int32_t)(body - (text_vaddr + call_at + 5));
	if (text->oom)
		return errmsg(err, errlen, "out of memory applying the plan");
	memcpy(text->p + call_at + 1, &rel, 4);
	if (emit_body(cs, b, fi, text_vaddr, text, e, err, errlen) < 0)
		return -1;
	e->size = (uint32_t)(text_vaddr + text->n - e->addr);
	e->patch_at = f->addr + u->entry_off;
	e->patch_len = u->entry_len;
	memset(e->patch, 0xcc, sizeof(e->patch));
	if (x86_encode_jmp(e->patch_at, tramp, e->patch) < 0)
		return errmsg(err, errlen, "%s (0x%" PRIx64 ") is out of rel32 reach of its entry "
			      "wrapper", f->name ? f->name : "?", f->addr);
	return text->oom ? errmsg(err, errlen, "out of memory applying the plan") : 0;
}

uint32_t rw_entry_bytes(const struct rw_note *n, const struct pathmap *pm, uint32_t module,
			uint32_t func)
{
	const struct pm_function *f = &pm->funcs[func];
	uint32_t lo = 0, hi = n->nentries;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (n->entries[mid].func < f->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return f->module == module && lo < n->nentries && n->entries[lo].func == f->addr
		       ? n->entries[lo].bytes : 0;
}
