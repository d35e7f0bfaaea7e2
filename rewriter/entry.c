/* entry.c: code at a function's entry (rewriter.h section 1): callee-entry
 * wrappers, which run its body W bytes deeper, and the own-frame term they
 * add to a pathmap's heights (section 3); dispatches to its clones. */
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
 * CFA row f's code has before it, padded in place by pad (a frame allocation
 * among them takes its edit here), then jmp back; -1 with err. */
static int emit_body(csh cs, const struct rw_binary *b, uint32_t fi, uint32_t pad,
		     uint64_t text_vaddr, struct rbuf *text, struct rw_entry_code *e, char *err,
		     size_t errlen)
{
	const struct rw_func *f = &b->funcs[fi];
	const struct rw_unit *u = &b->units[fi];
	uint64_t from = f->addr + u->entry_off;
	uint8_t code[32];
	if (u->entry_len > sizeof(code) || bin_read(b->bin, from, code, u->entry_len) < 0)
		return errmsg(err, errlen, "cannot read the entry of %s (0x%" PRIx64 ")",
			      f->name ? f->name : "?", f->addr);
	for (uint32_t i = 0; pad && i < u->nedits; i++) {
		const struct rw_edit *ed = &u->edits[i];
		if (ed->at >= from && ed->at + ed->size <= from + u->entry_len) {
			int64_t v = ed->value + ed->sign * (int64_t)pad;
			memcpy(code + (ed->at - from), &v, ed->size);   /* little-endian */
		}
	}
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

/* T: lea -(W-8)(%rsp),%rsp; call B; lea W-8(%rsp),%rsp; ret, with B right
 * after it.  -1 when out of memory. */
static int emit_wrapper(struct rbuf *text, uint64_t text_vaddr, uint32_t w, struct rw_entry_code *e)
{
	lea_rsp32(text, -(int32_t)(w - 8));
	add_row(e, text_vaddr + text->n, w);
	rb_u8(text, 0xe8);
	rb_u32(text, 0);                         /* B, right after ret */
	size_t rel_at = text->n - 4;
	size_t next = text->n;
	lea_rsp32(text, (int32_t)(w - 8));
	add_row(e, text_vaddr + text->n, 8);
	rb_u8(text, 0xc3);
	if (text->oom)
		return -1;
	int32_t rel = (int32_t)(text->n - next);
	memcpy(text->p + rel_at, &rel, 4);
	return 0;
}

/* lea ret(%rip),%r11; cmp %r11,(%rsp); je dest.  -1 when out of reach. */
static int emit_test(struct rbuf *text, uint64_t at, const struct rw_dispatch_test *t)
{
	static const uint8_t lea_r11[] = {0x4c, 0x8d, 0x1d}, cmp[] = {0x4c, 0x39, 0x1c, 0x24},
			     je[] = {0x0f, 0x84};
	int64_t r1 = (int64_t)(t->ret - (at + 7)), r2 = (int64_t)(t->dest - (at + 17));
	if (r1 < INT32_MIN || r1 > INT32_MAX || r2 < INT32_MIN || r2 > INT32_MAX)
		return -1;
	rb_put(text, lea_r11, sizeof(lea_r11));
	rb_u32(text, (uint32_t)(int32_t)r1);
	rb_put(text, cmp, sizeof(cmp));
	rb_put(text, je, sizeof(je));
	rb_u32(text, (uint32_t)(int32_t)r2);
	return 0;
}

/* The tests of tagged calls (rewriter.h section 1, Tagged calls):
 *     mov (%rsp),%r11; test $RW_TAG_PAGE_MASK,%r11d; jz done
 *     mov RW_TAG_LO(%r11),%r11d
 *     per tag: cmp $lo,%r11d; jne next;
 *              mov (%rsp),%r11; cmpl $hi,RW_TAG_HI(%r11); je dest;
 *              mov RW_TAG_LO(%r11),%r11d; next:
 *     done:
 * A call that matches no tag's low half costs one read and a compare per
 * tag.  Only %r11 and the flags change.  -1 when a clone is out of reach. */
static int emit_tag_tests(struct rbuf *text, uint64_t text_vaddr,
			  const struct rw_dispatch_test *tests, uint32_t ntests)
{
	static const uint8_t load_ret[] = {0x4c, 0x8b, 0x1c, 0x24}, test[] = {0x41, 0xf7, 0xc3},
			     load_lo[] = {0x45, 0x8b, 0x5b, (uint8_t)(int8_t)RW_TAG_LO},
			     cmp_r11d[] = {0x41, 0x81, 0xfb},
			     cmpl_hi[] = {0x41, 0x81, 0x7b, (uint8_t)(int8_t)RW_TAG_HI},
			     jz[] = {0x0f, 0x84};
	uint32_t ntags = 0;
	for (uint32_t i = 0; i < ntests; i++)
		ntags += tests[i].tag != 0;
	if (!ntags)
		return 0;
	rb_put(text, load_ret, sizeof(load_ret));
	rb_put(text, test, sizeof(test));
	rb_u32(text, RW_TAG_PAGE_MASK);
	rb_put(text, jz, sizeof(jz));
	rb_u32(text, sizeof(load_lo) + ntags * RW_TAG_TEST_BYTES);   /* over the rest */
	rb_put(text, load_lo, sizeof(load_lo));
	for (uint32_t i = 0; i < ntests; i++) {
		if (!tests[i].tag)
			continue;
		rb_put(text, cmp_r11d, sizeof(cmp_r11d));
		rb_u32(text, (uint32_t)tests[i].tag);
		rb_u8(text, 0x75);                 /* jne next */
		rb_u8(text, RW_TAG_TEST_BYTES - 9);
		rb_put(text, load_ret, sizeof(load_ret));
		rb_put(text, cmpl_hi, sizeof(cmpl_hi));
		rb_u32(text, (uint32_t)(tests[i].tag >> 32));
		int64_t rel = (int64_t)(tests[i].dest - (text_vaddr + text->n + 6));
		if (rel < INT32_MIN || rel > INT32_MAX)
			return -1;
		rb_put(text, jz, sizeof(jz));      /* je dest */
		rb_u32(text, (uint32_t)(int32_t)rel);
		rb_put(text, load_lo, sizeof(load_lo));
	}
	return 0;
}

int rw_emit_entry(csh cs, const struct rw_binary *b, uint32_t fi, uint32_t w, uint32_t pad,
		  const struct rw_dispatch_test *tests, uint32_t ntests, uint64_t text_vaddr,
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
	for (uint32_t i = 0; i < ntests; i++)
		if (!tests[i].tag && emit_test(text, text_vaddr + text->n, &tests[i]) < 0)
			return errmsg(err, errlen, "the dispatch of %s (0x%" PRIx64 ") is out of rel32 "
				      "reach of its clone", f->name ? f->name : "?", f->addr);
	if (emit_tag_tests(text, text_vaddr, tests, ntests) < 0)
		return errmsg(err, errlen, "the dispatch of %s (0x%" PRIx64 ") is out of rel32 "
			      "reach of its clone", f->name ? f->name : "?", f->addr);
	if (w && emit_wrapper(text, text_vaddr, w, e) < 0)
		return errmsg(err, errlen, "out of memory applying the plan");
	if (emit_body(cs, b, fi, pad, text_vaddr, text, e, err, errlen) < 0)
		return -1;
	e->size = (uint32_t)(text_vaddr + text->n - e->addr);
	e->patch_at = f->addr + u->entry_off;
	e->patch_len = u->entry_len;
	memset(e->patch, 0xcc, sizeof(e->patch));
	if (x86_encode_jmp(e->patch_at, tramp, e->patch) < 0)
		return errmsg(err, errlen, "%s (0x%" PRIx64 ") is out of rel32 reach of its entry "
			      "code", f->name ? f->name : "?", f->addr);
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
