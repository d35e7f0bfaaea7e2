/* entry.c: code at a function's entry (rewriter.h section 1): callee-entry
 * wrappers, which run its body W bytes deeper, and the own-frame term they
 * add to a pathmap's heights (section 3); dispatches to its clones. */
#include <inttypes.h>
#include <stdlib.h>
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

/* CFA - SP before the displaced byte `off` bytes past entry_off: the row
 * of the original instruction that holds it (head's may be cut otherwise:
 * a wrapped call's nops, then its call). */
static int32_t k_at(const struct rw_unit *u, uint64_t off)
{
	for (uint32_t i = 0; i < u->entry.nins; i++)
		if (off < u->entry.end[i])
			return u->entry.k[i];
	return u->entry.k[u->entry.nins];
}

/* B: the displaced instructions relocated to the end of text, each with the
 * CFA row f's code has before it, then jmp back.  They are relocated as the
 * rewritten image holds them (head: f's padding edits and the changes of a
 * displaced call applied), so a call among them keeps its wrapper, its stub
 * or its clone; its copy pushes the original return address and jumps
 * (x86_relocate_insn), the last of them.  -1 with err. */
static int emit_body(csh cs, const struct rw_binary *b, uint32_t fi, const uint8_t *head,
		     uint64_t text_vaddr, struct rbuf *text, struct rw_entry_code *e, char *err,
		     size_t errlen)
{
	const struct rw_func *f = &b->funcs[fi];
	const struct rw_unit *u = &b->units[fi];
	uint64_t from = f->addr + u->entry.off;
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *p = head;
	size_t left = u->entry.len;
	uint64_t addr = from;
	bool ended = false;
	const char *why = insn ? NULL : "out of memory";
	while (!why && left && !ended) {
		uint64_t at = text_vaddr + text->n;
		uint8_t out[X86_RELOC_MAX_INSN];
		why = "undecodable";
		int n = x86_disasm_iter(cs, &p, &left, &addr, insn) ? x86_relocate_insn(insn, at, out, &why)
								   : -1;
		if (n < 0)
			break;
		why = insn->id == X86_INS_CALL && !x86_branch_target(insn) ? "an indirect call" : NULL;
		if (why)
			break;
		int32_t k = k_at(u, insn->address - from);
		add_row(e, at, k);
		for (int j = 0; insn->id == X86_INS_CALL && j < X86_RELOC_CALL_STEPS; j++)
			add_row(e, at + X86_RELOC_CALL_SP[j].at, k + X86_RELOC_CALL_SP[j].sp);
		rb_put(text, out, (size_t)n);
		ended = insn->id == X86_INS_CALL || x86_is_terminator(insn);
	}
	if (insn)
		cs_free(insn, 1);
	if (why)
		return errmsg(err, errlen, "cannot displace the entry of %s (0x%" PRIx64 "): %s",
			      f->name ? f->name : "?", f->addr, why);
	/* after a ret, a jmp or a call's copy never reached, but B ends with it
	 * whatever they are: icpp report finds f there (report/entry.c) */
	uint8_t jmp[5];
	if (x86_encode_jmp(text_vaddr + text->n, from + u->entry.len, jmp) < 0)
		return errmsg(err, errlen, "the entry wrapper of %s (0x%" PRIx64 ") is out of rel32 "
			      "reach", f->name ? f->name : "?", f->addr);
	add_row(e, text_vaddr + text->n, u->entry.k[u->entry.nins]);
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

/* A dispatch's tests search sorted keys (rewriter.h section 1): a node
 * compares %r11 (or %r11d) with its key, jumps on equal to its target and on
 * greater to the upper half, and falls into the lower half; a run of at most
 * DISPATCH_RUN keys is compared one by one, the heaviest first.  A node
 * splits its keys by weight (the key whose sides weigh most evenly; by
 * count where they weigh nothing), so the tests that match most often are
 * found in a few compares: libc's pthread_getspecific under tcl has 73,
 * and two of them take most of its entries.  K tests of equal weight cost
 * about 3 log2(K) instructions at every entry of the function, not 3 K.
 * Jumps are rel32, patched once their target is known (positions in text). */
#define DISPATCH_RUN 4
struct search {
	struct rbuf *text;
	uint8_t cmp[3];              /* cmp $imm32,%r11 (signed) or %r11d (unsigned) */
	uint8_t greater;             /* jg or ja (second byte of 0f xx) */
	const int64_t *keys;         /* ascending (as the compare orders them) */
	const uint64_t *weights;     /* of the keys */
	size_t hit[RW_MAX_DISPATCH]; /* [i]: the rel32 of key i's je */
	size_t miss[2 * RW_MAX_DISPATCH + 2];        /* rel32s of jumps past the search */
	uint32_t nmiss;
};

static size_t jump32(struct rbuf *t, uint8_t cc)
{
	if (cc)
		rb_u8(t, 0x0f);
	rb_u8(t, cc ? cc : 0xe9);
	rb_u32(t, 0);
	return t->n - 4;
}

/* The rel32 at text position `at` jumps to position `to`. */
static void patch32(struct rbuf *t, size_t at, size_t to)
{
	int32_t rel = (int32_t)((int64_t)to - (int64_t)(at + 4));
	if (!t->oom)
		memcpy(t->p + at, &rel, 4);
}

static void compare(struct search *s, uint32_t i)
{
	rb_put(s->text, s->cmp, sizeof(s->cmp));
	rb_u32(s->text, (uint32_t)s->keys[i]);
	s->hit[i] = jump32(s->text, 0x84);
}

/* The root of keys lo..hi-1: the one whose two sides' heavier weighs
 * least (the middle one of those). */
static uint32_t split(const struct search *s, uint32_t lo, uint32_t hi)
{
	uint64_t total = 0, left = 0, best = UINT64_MAX;
	for (uint32_t i = lo; i < hi; i++)
		total += s->weights[i];
	uint32_t mid = lo + (hi - lo) / 2, root = mid;
	for (uint32_t i = lo; i < hi; left += s->weights[i++]) {
		uint64_t right = total - left - s->weights[i], worse = left > right ? left : right;
		uint32_t d = i > mid ? i - mid : mid - i, dr = root > mid ? root - mid : mid - root;
		if (worse < best || (worse == best && d < dr)) {
			best = worse;
			root = i;
		}
	}
	return root;
}

/* Keys lo..hi-1; the last part of the search falls through past it. */
static void emit_search(struct search *s, uint32_t lo, uint32_t hi, bool last)
{
	if (hi - lo <= DISPATCH_RUN) {
		bool done[DISPATCH_RUN] = {false};
		for (uint32_t n = lo; n < hi; n++) {      /* heaviest first */
			uint32_t pick = hi;
			for (uint32_t i = lo; i < hi; i++)
				if (!done[i - lo] && (pick == hi || s->weights[i] > s->weights[pick]))
					pick = i;
			done[pick - lo] = true;
			compare(s, pick);
		}
		if (!last)
			s->miss[s->nmiss++] = jump32(s->text, 0);
		return;
	}
	uint32_t mid = split(s, lo, hi);
	compare(s, mid);
	size_t upper = jump32(s->text, s->greater);
	emit_search(s, lo, mid, false);
	patch32(s->text, upper, s->text->n);
	emit_search(s, mid + 1, hi, last);
}

/* The rel32 at text position `at` jumps to address dest; -1 when out of
 * reach. */
static int patch_to(struct rbuf *t, uint64_t text_vaddr, size_t at, uint64_t dest)
{
	int64_t rel = (int64_t)(dest - (text_vaddr + at + 4));
	if (rel < INT32_MIN || rel > INT32_MAX)
		return -1;
	if (!t->oom)
		memcpy(t->p + at, &(int32_t){(int32_t)rel}, 4);
	return 0;
}

static void patch_misses(struct search *s)
{
	for (uint32_t i = 0; i < s->nmiss; i++)
		patch32(s->text, s->miss[i], s->text->n);
}

/* A test as the search sees it: its key, the clone it jumps to, its tag,
 * its weight. */
struct keyed {
	int64_t key;
	uint64_t dest, tag, weight;
};

/* Ascending keys; of one key (tags sharing a low half), the heaviest first. */
static int by_key(const void *a, const void *b)
{
	const struct keyed *p = a, *q = b;
	if (p->key != q->key)
		return (p->key > q->key) - (p->key < q->key);
	return (p->weight < q->weight) - (p->weight > q->weight);
}

/* The tests of return addresses of f's own module:
 *     lea A(%rip),%r11; sub (%rsp),%r11      (%r11 = A - return address)
 *     search over the keys A - R_k, each hit: je f_k
 * with A the end of the lea.  -1 when a clone or R_k is out of rel32 reach. */
static int emit_addr_tests(struct rbuf *text, uint64_t text_vaddr,
			   const struct rw_dispatch_test *tests, uint32_t ntests)
{
	static const uint8_t lea_r11[] = {0x4c, 0x8d, 0x1d, 0, 0, 0, 0},
			     sub_ret[] = {0x4c, 0x2b, 0x1c, 0x24};
	struct keyed t[RW_MAX_DISPATCH];
	int64_t keys[RW_MAX_DISPATCH];
	uint64_t weights[RW_MAX_DISPATCH];
	uint32_t n = 0;
	uint64_t anchor = text_vaddr + text->n + sizeof(lea_r11);
	for (uint32_t i = 0; i < ntests && n < RW_MAX_DISPATCH; i++) {
		if (tests[i].tag)
			continue;
		t[n] = (struct keyed){(int64_t)(anchor - tests[i].ret), tests[i].dest, 0,
				      tests[i].weight};
		if (t[n].key < INT32_MIN || t[n].key > INT32_MAX)
			return -1;
		n++;
	}
	if (!n)
		return 0;
	qsort(t, n, sizeof(*t), by_key);
	for (uint32_t i = 0; i < n; i++) {
		keys[i] = t[i].key;
		weights[i] = t[i].weight;
	}
	rb_put(text, lea_r11, sizeof(lea_r11));
	rb_put(text, sub_ret, sizeof(sub_ret));
	struct search s = {.text = text, .cmp = {0x49, 0x81, 0xfb}, .greater = 0x8f, .keys = keys,
			   .weights = weights};
	emit_search(&s, 0, n, true);
	patch_misses(&s);
	for (uint32_t i = 0; i < n; i++)
		if (patch_to(text, text_vaddr, s.hit[i], t[i].dest) < 0)
			return -1;
	return 0;
}

/* The tests of tagged calls (rewriter.h section 1, Tagged calls):
 *     mov (%rsp),%r11; test $RW_TAG_PAGE_MASK,%r11d; jz done
 *     cmpb $0x80,RW_TAG_LO-1(%r11); jne done
 *     mov RW_TAG_LO(%r11),%r11d
 *     search over the tags' low halves, each hit: je H_lo
 *     H_lo: mov (%rsp),%r11; per tag with that low half:
 *             cmpl $hi,RW_TAG_HI(%r11); je dest
 *           jmp done
 *     done:
 * The cmpb reads the ModRM byte of the first nopl of a tag: a call without
 * a tag (most, where a function's hot callers are not the tagged ones)
 * leaves by one branch that it predicts, not through the search, whose
 * branches on the bytes below any return address it mispredicts.  Only
 * %r11 and the flags change.  -1 when a clone is out of reach. */
static int emit_tag_tests(struct rbuf *text, uint64_t text_vaddr,
			  const struct rw_dispatch_test *tests, uint32_t ntests)
{
	static const uint8_t load_ret[] = {0x4c, 0x8b, 0x1c, 0x24}, test[] = {0x41, 0xf7, 0xc3},
			     load_lo[] = {0x45, 0x8b, 0x5b, (uint8_t)(int8_t)RW_TAG_LO},
			     nopl_modrm[] = {0x41, 0x80, 0x7b, (uint8_t)(int8_t)(RW_TAG_LO - 1), 0x80},
			     cmpl_hi[] = {0x41, 0x81, 0x7b, (uint8_t)(int8_t)RW_TAG_HI};
	struct keyed t[RW_MAX_DISPATCH];
	int64_t keys[RW_MAX_DISPATCH];
	uint64_t weights[RW_MAX_DISPATCH] = {0};
	uint32_t group[RW_MAX_DISPATCH + 1], n = 0, nkeys = 0;
	for (uint32_t i = 0; i < ntests && n < RW_MAX_DISPATCH; i++)
		if (tests[i].tag)
			t[n++] = (struct keyed){(uint32_t)tests[i].tag, tests[i].dest, tests[i].tag,
						tests[i].weight};
	if (!n)
		return 0;
	qsort(t, n, sizeof(*t), by_key);
	for (uint32_t i = 0; i < n; i++) {    /* group[k]: the first tag of key k */
		if (!i || t[i].key != t[i - 1].key) {
			group[nkeys] = i;
			keys[nkeys++] = t[i].key;
		}
		weights[nkeys - 1] += t[i].weight;
	}
	group[nkeys] = n;
	rb_put(text, load_ret, sizeof(load_ret));
	rb_put(text, test, sizeof(test));
	rb_u32(text, RW_TAG_PAGE_MASK);
	struct search s = {.text = text, .cmp = {0x41, 0x81, 0xfb}, .greater = 0x87, .keys = keys,
			   .weights = weights};
	s.miss[s.nmiss++] = jump32(text, 0x84);  /* jz done */
	rb_put(text, nopl_modrm, sizeof(nopl_modrm));
	s.miss[s.nmiss++] = jump32(text, 0x85);  /* jne done */
	rb_put(text, load_lo, sizeof(load_lo));
	emit_search(&s, 0, nkeys, false);
	for (uint32_t k = 0; k < nkeys; k++) {
		patch32(text, s.hit[k], text->n);
		rb_put(text, load_ret, sizeof(load_ret));
		for (uint32_t i = group[k]; i < group[k + 1]; i++) {
			rb_put(text, cmpl_hi, sizeof(cmpl_hi));
			rb_u32(text, (uint32_t)(t[i].tag >> 32));
			if (patch_to(text, text_vaddr, jump32(text, 0x84), t[i].dest) < 0)
				return -1;         /* je dest */
		}
		if (k + 1 < nkeys)
			s.miss[s.nmiss++] = jump32(text, 0);
	}
	patch_misses(&s);
	return 0;
}

int rw_emit_dispatch(struct rbuf *text, uint64_t text_vaddr, const struct rw_dispatch_test *tests,
		     uint32_t ntests)
{
	if (emit_addr_tests(text, text_vaddr, tests, ntests) < 0 ||
	    emit_tag_tests(text, text_vaddr, tests, ntests) < 0)
		return -1;
	return 0;
}

int rw_emit_entry(csh cs, const struct rw_binary *b, uint32_t fi, uint32_t w, const uint8_t *head,
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
	if (rw_emit_dispatch(text, text_vaddr, tests, ntests) < 0)
		return errmsg(err, errlen, "the dispatch of %s (0x%" PRIx64 ") is out of rel32 "
			      "reach of its clone", f->name ? f->name : "?", f->addr);
	if (w && emit_wrapper(text, text_vaddr, w, e) < 0)
		return errmsg(err, errlen, "out of memory applying the plan");
	if (emit_body(cs, b, fi, head, text_vaddr, text, e, err, errlen) < 0)
		return -1;
	e->size = (uint32_t)(text_vaddr + text->n - e->addr);
	e->patch_at = f->addr + u->entry.off;
	e->patch_len = u->entry.len;
	memset(e->patch, 0xcc, sizeof(e->patch));
	uint64_t jmp_at = e->patch_at;
	if (u->island.at) {
		/* jmp rel8 to the island, which jumps on (the rest of it nops) */
		e->patch[0] = 0xeb;
		e->patch[1] = (uint8_t)(int8_t)(int64_t)(u->island.at - (e->patch_at + 2));
		e->island_at = jmp_at = u->island.at;
		e->island_len = u->island.len;
		memset(e->island, 0x90, sizeof(e->island));
	}
	if (x86_encode_jmp(jmp_at, tramp, u->island.at ? e->island : e->patch) < 0)
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
