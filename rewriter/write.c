/* write.c: apply a plan and write the output with libelf (rewriter.h
 * section 2).
 *
 * Output layout, by file offset:
 *   [0, old load end)        every PT_LOAD byte of the input, sections at their
 *                            offsets; patched code and the build-id differ
 *   non-alloc sections       moved here (symtab, strtab, shstrtab rebuilt)
 *   section header table
 *   R+X segment              .icpp.text (trampolines)
 *   R segment                .eh_frame, .eh_frame_hdr, notes, program headers
 * The program header table is the very last thing in the file: libelf fills
 * the gaps it sees between sections with zeros, and it counts the program
 * header table as written before all of them.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rewriter/internal.h"
#include "util/fileio.h"
#include "util/grow.h"
#include "x86/reloc.h"

#define PAGE 4096ull
#define MAX_PAD_FILE (1ull << 20)   /* file padding accepted for old-kernel PHDR placement */
#define HOT_MEASURE_ROOM (1ull << 28) /* the cold code's offset while the hot code is
                                       * measured: beyond any, within rel32 reach */

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return a > 1 ? (v + a - 1) / a * a : v;
}

/* ------------------------------------------------------------------ trampolines */

/* A trampoline's CFA rows: one at its entry, after its lea, after each push
 * that copies 8 bytes of stack arguments, after its restoring lea; an entry
 * wrapper's (rw_emit_entry) fewer. */
#define TRAMP_ROWS (RW_MAX_COPY / 8 + 3)
#define TRAMP_MAX_ROWS (TRAMP_ROWS > RW_ENTRY_MAX_ROWS ? TRAMP_ROWS : RW_ENTRY_MAX_ROWS)

struct tramp {
	uint64_t addr;               /* in .icpp.text */
	uint32_t size;
	uint64_t func;               /* an entry wrapper's function; 0: a callsite's */
	const struct rw_call *call;  /* the call it serves, or whose copy it serves */
	uint64_t site;               /* the callsite it serves (a copy's: in a clone) */
	uint64_t target;             /* what it calls (a clone, for a redirected call) */
	uint64_t ret;                /* the return address of its call */
	uint32_t bytes;              /* W (0: an entry that only dispatches, or a
	                              * tagged call's stub) */
	uint64_t tag;                /* its call's tag (0: none) */
	bool bound;                  /* a bound call's, target its clone: checks
	                              * the GOT slot first (put_call) */
	const struct rw_plan_xcall *x;   /* bound too, for a clone of another
	                              * module (target unused): checks the GOT
	                              * slot's function and its page's marker */
	uint64_t ret2;               /* a bound one's: the return address of the
	                              * original call, when the slot holds another
	                              * function */
	bool stub;                   /* a tagged or bound call's stub, no frame (no
	                              * rows: its FDE is a copy of the caller's row) */
	bool thunk;                  /* a bound call's thunk (emit_thunk): serves
	                              * every untagged, unwrapped call of one slot
	                              * redirected to one clone, target */
	bool promote;                /* a promotion stub (emit_promote), a stub */
	bool tail;                   /* ... of an indirect tail jump */
	struct eh_row rows[TRAMP_MAX_ROWS];
	uint32_t nrows;
};

/* Two nopl disp32(%rax) holding v's halves: a tag, or a page's marker for
 * cross-module calls (rewriter.h section 1). */
static void put_nopl_pair(struct rbuf *o, uint64_t v)
{
	static const uint8_t nopl[] = {0x0f, 0x1f, 0x80};
	rb_put(o, nopl, 3);
	rb_u32(o, (uint32_t)v);
	rb_put(o, nopl, 3);
	rb_u32(o, (uint32_t)(v >> 32));
}

/* The tag before a call instruction of call_len bytes (rewriter.h section
 * 1, Tagged calls): nopl lo(%rax); nopl hi(%rax), then nops up to a 6-byte
 * call, so that the tag's halves lie at RW_TAG_LO and RW_TAG_HI from the
 * return address whatever the call. */
static void put_tag(struct rbuf *o, uint64_t tag, uint32_t call_len)
{
	put_nopl_pair(o, tag);
	for (uint32_t n = call_len; n < 6; n++)
		rb_u8(o, 0x90);
}

/* May a dispatch read the tag before return address ret (the page check of
 * rewriter/entry.c)? */
static bool tag_readable(uint64_t ret)
{
	return (ret & RW_TAG_PAGE_MASK) != 0;
}

/* lea disp(%rsp),%rsp */
static void lea_rsp(struct rbuf *o, int64_t disp)
{
	if (disp >= INT8_MIN && disp <= INT8_MAX) {
		static const uint8_t op[] = {0x48, 0x8d, 0x64, 0x24};
		rb_put(o, op, 4);
		rb_u8(o, (uint8_t)(int8_t)disp);
	} else {
		static const uint8_t op[] = {0x48, 0x8d, 0xa4, 0x24};
		rb_put(o, op, 4);
		rb_u32(o, (uint32_t)(int32_t)disp);
	}
}

/* An instruction op (n bytes) with a rel32 to dest, at origin + o->n. */
static int put_rel32(struct rbuf *o, uint64_t origin, const uint8_t *op, size_t n, uint64_t dest)
{
	int64_t rel = (int64_t)(dest - (origin + o->n + n + 4));
	if (rel < INT32_MIN || rel > INT32_MAX)
		return -1;
	rb_put(o, op, n);
	rb_u32(o, (uint32_t)(int32_t)rel);
	return 0;
}

/* A bound call's test of its GOT slot (rewriter.h section 1, Bound calls),
 * code at origin + o->n: lea own(%rip),%r11; cmp slot(%rip),%r11, so that
 * ZF says whether the slot holds the module's own function.  -1 when out
 * of rel32 reach. */
static int put_slot_test(struct rbuf *o, uint64_t origin, const struct rw_call *c)
{
	static const uint8_t lea_r11[] = {0x4c, 0x8d, 0x1d}, cmp_r11[] = {0x4c, 0x3b, 0x1d};
	if (put_rel32(o, origin, lea_r11, 3, c->bind) < 0)
		return -1;
	return put_rel32(o, origin, cmp_r11, 3, c->bind_slot);
}

/* The check that %r11, a function's address, is func of the module whose
 * page's marker at mark holds value (rewriter.h section 1, Cross-module
 * calls); after it %r11 is func's page.  Its three jumps to the fallback
 * go into jf from *nj. */
static void put_page_check(struct rbuf *o, uint64_t func, uint64_t mark, uint64_t value,
			   size_t *jf, int *nj)
{
	static const uint8_t sub_r11[] = {0x49, 0x81, 0xeb}, test_r11d[] = {0x41, 0xf7, 0xc3},
			     cmpl_r11[] = {0x41, 0x81, 0xbb}, jne[] = {0x0f, 0x85};
	uint64_t page = func & ~(uint64_t)0xfff;
	rb_put(o, sub_r11, 3);
	rb_u32(o, (uint32_t)(func & 0xfff));
	rb_put(o, test_r11d, 3);
	rb_u32(o, 0xfff);
	for (int i = 0; i < 3; i++) {
		if (i) {
			rb_put(o, cmpl_r11, 3);
			rb_u32(o, (uint32_t)(mark - page + (i == 1 ? 3 : 10)));
			rb_u32(o, (uint32_t)(i == 1 ? value : value >> 32));
		}
		rb_put(o, jne, 2);
		rb_u32(o, 0);
		jf[(*nj)++] = o->n;
	}
}

/* Does v fit a rel32 or disp32? */
static bool fits32(int64_t v)
{
	return v >= INT32_MIN && v <= INT32_MAX;
}

/* A cross-module call's check (rewriter.h section 1, Cross-module calls),
 * code at origin + o->n: that the GOT slot holds x->func of the module
 * rewritten with this one, by its page's marker (and for a forwarder, that
 * its own slot holds x->fwd: cmp %r11,SLOT-FWD(%r11) once %r11 is x->fwd;
 * and for a forwarder to a third module, that its slot x->hop_slot holds
 * x->hop_func there, by that page's marker); then %r11 = x->dest.  The
 * offsets of its jumps' rel32 fields, to the fallback, into jf (0 after the
 * last).  -1 when out of reach. */
#define XCALL_JUMPS 8
static int put_xcall_check(struct rbuf *o, uint64_t origin, const struct rw_call *c,
			   const struct rw_plan_xcall *x, size_t jf[XCALL_JUMPS])
{
	static const uint8_t mov_r11[] = {0x4c, 0x8b, 0x1d}, add_r11[] = {0x49, 0x81, 0xc3},
			     jne[] = {0x0f, 0x85}, cmp_r11_mem[] = {0x4d, 0x39, 0x9b},
			     mov_r11_mem[] = {0x4d, 0x8b, 0x9b};
	uint64_t page = x->func & ~(uint64_t)0xfff, at = x->fwd ? x->fwd : page;
	uint64_t end = x->hop_slot ? x->hop_func & ~(uint64_t)0xfff : at;
	int64_t to = (int64_t)(x->dest - end), fwd = (int64_t)(x->fwd - page),
		slot = (int64_t)(x->fwd_slot - x->fwd),
		hop = x->hop_slot ? (int64_t)(x->hop_slot - at) : 0;
	if (!fits32(to) || !fits32(fwd) || !fits32(slot) || !fits32(hop) ||
	    put_rel32(o, origin, mov_r11, 3, c->got) < 0)
		return -1;
	int nj = 0;
	put_page_check(o, x->func, x->mark, x->value, jf, &nj);
	if (x->fwd) {    /* %r11 = the forwarder's target, if its slot holds it */
		rb_put(o, add_r11, 3);
		rb_u32(o, (uint32_t)(int32_t)fwd);
		rb_put(o, cmp_r11_mem, 3);
		rb_u32(o, (uint32_t)(int32_t)slot);
		rb_put(o, jne, 2);
		rb_u32(o, 0);
		jf[nj++] = o->n;
	}
	if (x->hop_slot) {      /* %r11 = what the forwarder's slot holds */
		rb_put(o, mov_r11_mem, 3);
		rb_u32(o, (uint32_t)(int32_t)hop);
		put_page_check(o, x->hop_func, x->hop_mark, x->hop_value, jf, &nj);
	}
	jf[nj] = 0;
	rb_put(o, add_r11, 3);
	rb_u32(o, (uint32_t)(int32_t)to);
	return 0;
}

/* Point the jumps put_xcall_check left at the code that follows now. */
static void xcall_fallback_here(struct rbuf *o, const size_t jf[XCALL_JUMPS])
{
	for (int i = 0; i < XCALL_JUMPS && jf[i] && !o->oom; i++) {
		int32_t rel = (int32_t)(o->n - jf[i]);
		memcpy(o->p + jf[i] - 4, &rel, 4);
	}
}

/* The call that t makes for t->call (code at origin + o->n), its tag before
 * it: call t->target, or call *slot for a call through one that takes no
 * clone; t->ret is its return address.  A bound call's (t->bound:
 * rewriter.h section 1, Bound calls) calls its clone only while the GOT
 * slot holds the module's own function:
 *       lea own(%rip),%r11; cmp slot(%rip),%r11; jne F
 *       [tag] call clone; jmp exit (0: J)
 *   F:  [tag] call as the original does     (t->ret2 after it)
 *   J:
 * %r11 and the flags are scratch at a call in the ABI.  -1 when out of
 * rel32 reach. */
static int put_call(struct rbuf *o, uint64_t origin, struct tramp *t, uint64_t exit)
{
	static const uint8_t jne[] = {0x0f, 0x85}, call[] = {0xe8}, call_slot[] = {0xff, 0x15},
			     jmp[] = {0xe9};
	static const uint8_t call_r11[] = {0x41, 0xff, 0xd3};
	const struct rw_call *c = t->call;
	size_t to_fallback = 0, to_exit = 0, jf[XCALL_JUMPS];
	if (t->x) {
		if (put_xcall_check(o, origin, c, t->x, jf) < 0)
			return -1;
		if (t->tag)
			put_tag(o, t->tag, sizeof(call_r11));
		rb_put(o, call_r11, sizeof(call_r11));
		t->ret = origin + o->n;
		rb_put(o, jmp, 1);
		rb_u32(o, 0);
		to_exit = o->n;
		xcall_fallback_here(o, jf);
	} else if (t->bound) {
		if (put_slot_test(o, origin, c) < 0)
			return -1;
		rb_put(o, jne, 2);
		rb_u32(o, 0);
		to_fallback = o->n;
		if (t->tag)
			put_tag(o, t->tag, 5);
		if (put_rel32(o, origin, call, 1, t->target) < 0)
			return -1;
		t->ret = origin + o->n;
		rb_put(o, jmp, 1);
		rb_u32(o, 0);
		to_exit = o->n;
		if (o->oom)
			return 0;          /* the caller reports it */
		int32_t rel = (int32_t)(o->n - to_fallback);
		memcpy(o->p + to_fallback - 4, &rel, 4);
	}
	if (t->tag)
		put_tag(o, t->tag, c->slot ? 6 : 5);
	if (c->slot ? put_rel32(o, origin, call_slot, 2, c->slot)
		    : put_rel32(o, origin, call, 1, t->bound ? c->target : t->target))
		return -1;
	*(t->bound ? &t->ret2 : &t->ret) = origin + o->n;
	if (to_exit && !o->oom) {
		int64_t rel = exit ? (int64_t)(exit - (origin + to_exit)) : (int64_t)(o->n - to_exit);
		if (rel < INT32_MIN || rel > INT32_MAX)
			return -1;
		int32_t r32 = (int32_t)rel;
		memcpy(o->p + to_exit - 4, &r32, 4);
	}
	return 0;
}

/* One trampoline at t->addr:
 *   lea -(W-8-K)(%rsp),%rsp; K/8 x pushq (W-8)(%rsp); call target;
 *   lea (W-8)(%rsp),%rsp; ret
 * with a CFA row after every instruction that moves %rsp: a sample or a
 * signal among the pushes (64 of them for 512 bytes) finds the caller's
 * frame, as icpp report and a debugger do. */
static int emit_tramp(struct rbuf *o, struct tramp *t, char *err, size_t errlen)
{
	const struct rw_call *c = t->call;
	size_t start = o->n;
	int64_t w8 = (int64_t)t->bytes - 8, k = c->stack_args, low = w8 - k;
	t->nrows = 0;
	t->rows[t->nrows++] = (struct eh_row){0, 8};
	if (low > 0) {
		lea_rsp(o, -low);
		t->rows[t->nrows++] = (struct eh_row){(uint32_t)(o->n - start), (uint32_t)(8 + low)};
	}
	for (int64_t i = 0; i < k / 8; i++) {
		if (w8 <= INT8_MAX) {
			static const uint8_t op[] = {0xff, 0x74, 0x24};
			rb_put(o, op, 3);
			rb_u8(o, (uint8_t)w8);
		} else {
			static const uint8_t op[] = {0xff, 0xb4, 0x24};
			rb_put(o, op, 3);
			rb_u32(o, (uint32_t)w8);
		}
		/* the last: CFA = rsp + W from here until the restoring lea */
		t->rows[t->nrows++] = (struct eh_row){(uint32_t)(o->n - start),
						      (uint32_t)(8 + low + 8 * (i + 1))};
	}
	if (t->tag && !t->bound && o->n - start < 5) {
		/* icpp train hooks a trampoline like any function, moving the
		 * whole instructions that cover its first 5 bytes: the tag must
		 * start past them (one 4-byte push is too short: a 5-byte nop
		 * joins it), else the callee's dispatch misses it (a bound
		 * call's check comes first, 7 bytes) */
		static const uint8_t nop5[] = {0x0f, 0x1f, 0x44, 0x00, 0x00};
		rb_put(o, nop5, sizeof(nop5));
	}
	if (put_call(o, t->addr - start, t, 0) < 0)
		return errmsg(err, errlen, "trampoline for callsite 0x%" PRIx64 " is out of rel32 "
			      "reach of its target", t->site);
	lea_rsp(o, w8);
	t->rows[t->nrows++] = (struct eh_row){(uint32_t)(o->n - start), 8};
	rb_u8(o, 0xc3);
	t->size = (uint32_t)(o->n - start);
	return 0;
}

/* ------------------------------------------------------------------ patches */

struct patch {
	uint64_t at;
	uint8_t bytes[16];
	uint8_t len;
};

struct patches {
	struct patch *v;
	uint32_t n, cap;
};

static int patch_add(struct patches *p, uint64_t at, const void *bytes, uint8_t len)
{
	if (!grow_array((void **)&p->v, p->n + 1ull, &p->cap, sizeof(*p->v)))
		return -1;
	struct patch *x = &p->v[p->n++];
	x->at = at;
	x->len = len;
	memcpy(x->bytes, bytes, len);
	return 0;
}

/* ------------------------------------------------------------------ sections */

struct osec {
	GElf_Shdr sh;
	const void *data;            /* NULL for NOBITS */
	size_t size;
	void *owned;                 /* data we allocated */
	const char *name;
};

struct out {
	struct osec *s;
	size_t n, cap;
};

static struct osec *sec_add(struct out *o)
{
	if (o->n == o->cap) {
		size_t cap = o->cap ? 2 * o->cap : 64;
		struct osec *v = realloc(o->s, cap * sizeof(*v));
		if (!v)
			return NULL;
		o->s = v;
		o->cap = cap;
	}
	struct osec *x = &o->s[o->n++];
	memset(x, 0, sizeof(*x));
	return x;
}

static void *own_copy(struct osec *s)
{
	if (s->owned)
		return s->owned;
	s->owned = malloc(s->size ? s->size : 1);
	if (s->owned && s->size)
		memcpy(s->owned, s->data, s->size);
	s->data = s->owned;
	return s->owned;
}

/* ------------------------------------------------------------------ notes */

static void note_put(struct rbuf *o, const char *name, uint32_t type, const void *desc, uint32_t dlen)
{
	uint32_t nlen = (uint32_t)strlen(name) + 1;
	rb_u32(o, nlen);
	rb_u32(o, dlen);
	rb_u32(o, type);
	rb_put(o, name, nlen);
	rb_align(o, 4, 0);
	rb_put(o, desc, dlen);
	rb_align(o, 4, 0);
}

static void icpp_desc(struct rbuf *d, const uint8_t *id, uint32_t idlen, const struct tramp *t,
		      uint32_t nt, const struct rw_note_clone *c, uint32_t nc, const char *plan)
{
	rb_u32(d, RW_NOTE_VERSION);
	rb_u32(d, idlen);
	rb_put(d, id, idlen);
	rb_align(d, 4, 0);
	uint32_t nw = 0, nthunks = 0;
	for (uint32_t i = 0; i < nt; i++) {
		nw += !t[i].func && !t[i].thunk;
		nthunks += t[i].thunk;
	}
	rb_u32(d, nw);
	for (uint32_t i = 0; i < nt; i++) {
		if (t[i].func || t[i].thunk)
			continue;
		rb_u64(d, t[i].addr);
		rb_u32(d, t[i].size);
		rb_u32(d, t[i].bytes);
		rb_u64(d, t[i].site);
	}
	rb_u32(d, nc);
	for (uint32_t k = 0; k < nc; k++) {
		rb_u64(d, c[k].addr);
		rb_u64(d, c[k].size);
		rb_u64(d, c[k].func);
		rb_u64(d, c[k].site);
		rb_u32(d, c[k].dispatched);
		rb_u64(d, c[k].frag_addr);
		rb_u64(d, c[k].frag_size);
		rb_u64(d, c[k].frag_func);
		rb_u64(d, c[k].tag);
	}
	rb_u32(d, nt - nw - nthunks);
	for (uint32_t i = 0; i < nt; i++) {
		if (!t[i].func)
			continue;
		rb_u64(d, t[i].func);
		rb_u64(d, t[i].addr);
		rb_u32(d, t[i].size);
		rb_u32(d, t[i].bytes);
	}
	uint32_t plen = (uint32_t)strlen(plan);
	rb_u32(d, plen);
	rb_put(d, plan, plen);
	rb_align(d, 4, 0);
}

/* Replace the desc of the NT_GNU_BUILD_ID note in a copy of the section. */
static bool replace_build_id(uint8_t *data, size_t size, const uint8_t *id, uint32_t *idlen)
{
	size_t off = 0;
	while (off + 12 <= size) {
		uint32_t nsz, dsz, type;
		memcpy(&nsz, data + off, 4);
		memcpy(&dsz, data + off + 4, 4);
		memcpy(&type, data + off + 8, 4);
		size_t name = off + 12, desc = name + align_up(nsz, 4);
		if (desc + dsz > size)
			return false;
		if (type == NT_GNU_BUILD_ID && nsz == 4 && !memcmp(data + name, "GNU", 4)) {
			for (uint32_t i = 0; i < dsz; i++)
				data[desc + i] = id[i % 20];
			*idlen = dsz;
			return true;
		}
		off = desc + align_up(dsz, 4);
	}
	return false;
}

/* ------------------------------------------------------------------ main */

/* A function or trampoline added to .symtab. */
struct newsym {
	char name[96];
	uint64_t addr;
	uint32_t size;
};

struct plan_state {
	csh cs;                      /* for copying clones (owned by rw_write) */
	struct tramp *t;
	uint32_t nt, capt;
	struct rw_note_clone *clones;    /* [p->nclones] */
	struct eh_clonefde *cfdes;       /* the clones' copies: functions, fragments, veneers */
	uint32_t ncfdes, capcfdes;
	struct newsym *syms;             /* clones' copies, then trampolines */
	uint32_t nsyms, capsyms;
	struct patches patches;
	struct eh_fde_edit *fedits;
	uint32_t nfedits;
	struct rbuf text;                /* new code: the hot stream (at text_vaddr),
	                                  * all of it once the plan is applied */
	struct rbuf cold;                /* the cold stream (at text_vaddr + hot_room) */
	struct rbuf *out;                /* where the next piece goes (use_stream) */
	uint64_t base;                   /* ... the address of its start */
	uint64_t text_vaddr, hot_room;   /* hot_room 0: one stream */
	uint64_t hot_size;               /* what the hot stream took */
	const struct rw_plan *plan;
	uint32_t nbound;                 /* bound calls redirected: by thunks, stubs, trampolines */
	uint32_t npromoted;              /* indirect calls (or copies) with promotion stubs */
	uint32_t ntail_promoted;         /* indirect tail jumps (or copies) with them */
	struct tail_test *ttests;        /* the tests of those stubs (point_tails) */
	uint32_t nttests, capttests;
	uint32_t nmarks;                 /* pages marked (add_marks) */
	struct promoted_ret *prets;      /* the return addresses of promoted clones' calls */
	uint32_t nprets, capprets;
	struct rw_call *tail_calls;      /* what the thunk of a tail jump reads
	                                  * (redirect_tails): its PLT stub's slot */
	uint32_t ntail_calls;
};

/* A promotion stub's call of a clone of func, returning to ret: a dispatch
 * at a function that func may tail-call tests it too (add_entries). */
struct promoted_ret {
	uint64_t site;               /* the call's site key (the stub's t->site) */
	uint64_t func;               /* the clone's function */
	uint64_t ret;
};

static void plan_state_free(struct plan_state *ps)
{
	free(ps->t);
	free(ps->clones);
	free(ps->cfdes);
	free(ps->syms);
	free(ps->patches.v);
	free(ps->fedits);
	free(ps->prets);
	free(ps->tail_calls);
	free(ps->ttests);
	rb_free(&ps->text);
	rb_free(&ps->cold);
}

/* Room for fdes more clone FDEs and syms more symbols: 0, or -1 out of
 * memory. */
static int reserve(struct plan_state *ps, uint32_t fdes, uint32_t syms)
{
	bool ok = grow_array((void **)&ps->cfdes, (uint64_t)ps->ncfdes + fdes, &ps->capcfdes,
			     sizeof(*ps->cfdes)) &&
		  grow_array((void **)&ps->syms, (uint64_t)ps->nsyms + syms, &ps->capsyms,
			     sizeof(*ps->syms));
	return ok ? 0 : -1;
}

static int cmp_patch(const void *x, const void *y)
{
	const struct patch *a = x, *b = y;
	return a->at < b->at ? -1 : a->at > b->at;
}

/* The bytes that make the call instruction at insn (len bytes) call dest
 * with the same return address: nops, then call rel32. */
static int call_to(uint64_t insn, uint8_t len, uint64_t dest, uint8_t bytes[16])
{
	int64_t rel = (int64_t)(dest - (insn + len));
	if (rel < INT32_MIN || rel > INT32_MAX || len < 5 || len > 16)
		return -1;
	memset(bytes, 0x90, len);
	bytes[len - 5] = 0xe8;
	int32_t r32 = (int32_t)rel;
	memcpy(bytes + len - 4, &r32, 4);
	return 0;
}

/* The stream for a piece of new code that training's run entered `entries`
 * times: hot from the plan's hot_entries on (rewriter.h section 2). */
static void use_stream(struct plan_state *ps, uint64_t entries)
{
	bool hot = !ps->hot_room || entries >= ps->plan->hot_entries;
	ps->out = hot ? &ps->text : &ps->cold;
	ps->base = ps->text_vaddr + (hot ? 0 : ps->hot_room);
}

/* The bytes of new code made already at addr. */
static uint8_t *text_at(struct plan_state *ps, uint64_t addr)
{
	uint64_t cold = ps->text_vaddr + ps->hot_room;
	return ps->hot_room && addr >= cold ? ps->cold.p + (addr - cold)
					    : ps->text.p + (addr - ps->text_vaddr);
}

/* The heat of the call at site, original code or a clone's copy. */
static uint64_t site_heat(const struct plan_state *ps, uint64_t site)
{
	if (site < ps->text_vaddr)
		return rw_plan_heat_of(ps->plan, site);
	for (uint32_t k = 0; k < ps->plan->nclones; k++) {
		uint64_t orig = rw_clone_orig_addr(&ps->clones[k], site);
		if (orig)
			return rw_plan_heat_of(ps->plan, rw_copy_key(orig, k));
	}
	return 0;
}

/* The heat of trampoline t: its call's, an entry's function's; a thunk,
 * which serves every call of its slot to one clone, at least its clone's. */
static uint64_t tramp_heat(const struct plan_state *ps, const struct tramp *t)
{
	if (t->func)
		return rw_plan_heat_of(ps->plan, t->func);
	uint64_t h = site_heat(ps, t->site ? t->site : t->call->site);
	for (uint32_t k = 0; t->thunk && k < ps->plan->nclones; k++)
		if (ps->clones[k].addr == t->target && ps->plan->clones[k].weight > h)
			h = ps->plan->clones[k].weight;
	return h;
}

/* Frame-padding edits of unit u by d: into the section patches (copy NULL)
 * or into the copies of clone `copy` in text (its function's, its
 * fragment's). */
static int pad_edits(struct plan_state *ps, const struct rw_unit *u, int64_t d,
		     const struct rw_note_clone *copy)
{
	for (uint32_t e = 0; e < u->nedits; e++) {
		const struct rw_edit *ed = &u->edits[e];
		int64_t v = ed->value + ed->sign * d;
		uint8_t bytes[4];
		memcpy(bytes, &v, 4);      /* little-endian: the low bytes */
		if (!copy && patch_add(&ps->patches, ed->at, bytes, ed->size))
			return -1;
		if (copy)
			memcpy(text_at(ps, rw_clone_copy_addr(copy, ed->at)), bytes, ed->size);
	}
	return 0;
}

/* Room for one more trampoline record, or NULL with err. */
static struct tramp *next_tramp(struct plan_state *ps, char *err, size_t errlen)
{
	if (!grow_array((void **)&ps->t, ps->nt + 1ull, &ps->capt, sizeof(*ps->t))) {
		errmsg(err, errlen, "out of memory applying the plan");
		return NULL;
	}
	return &ps->t[ps->nt++];
}

/* Emit t at the end of its stream; a tagged one's return addresses never
 * lie in the first RW_TAG_SHIFT bytes of a page (no dispatch reads its tag
 * there): then it moves on by RW_TAG_SHIFT (twice at most: a bound call's
 * two lie less than RW_TAG_SHIFT apart).  t's address, or 0 with err. */
static uint64_t place(struct plan_state *ps, struct tramp *t,
		      int (*emit)(struct rbuf *, struct tramp *, char *, size_t), char *err,
		      size_t errlen)
{
	use_stream(ps, tramp_heat(ps, t));
	struct rbuf *o = ps->out;
	rb_align(o, 16, 0xcc);
	size_t at = o->n;
	for (int shift = 0; shift <= 2 * RW_TAG_SHIFT; shift += RW_TAG_SHIFT) {
		o->n = at;
		for (int i = 0; i < shift; i++)
			rb_u8(o, 0xcc);
		t->addr = ps->base + o->n;
		if (emit(o, t, err, errlen))
			return 0;
		if (!t->tag || (tag_readable(t->ret) && (!t->ret2 || tag_readable(t->ret2))))
			return t->addr;
	}
	errmsg(err, errlen, "internal error: the tag of callsite 0x%" PRIx64 " lies where no "
	       "dispatch reads it", t->site);
	return 0;
}

/* A trampoline for call c (or its copy at site) wrapped by bytes, calling
 * target: the clone of a bound call's callee when bound. */
static uint64_t add_tramp(struct plan_state *ps, const struct rw_call *c, uint64_t site,
			  uint64_t target, bool bound, const struct rw_plan_xcall *x, uint32_t bytes,
			  uint64_t tag, char *err, size_t errlen)
{
	struct tramp *t = next_tramp(ps, err, errlen);
	if (!t)
		return 0;
	*t = (struct tramp){.call = c, .site = site, .target = target, .bytes = bytes, .tag = tag,
			    .bound = bound || x, .x = x};
	ps->nbound += bound && !x;
	return place(ps, t, emit_tramp, err, errlen);
}

/* The stub of a tagged or bound call t->call that is not wrapped, at
 * t->addr:
 *     G: 16 x int3
 *     S: the call (put_call: a bound one's check, the tag); jmp back after
 *        the original call
 * entered by a jmp at the call.  No frame: the stub's FDE repeats the
 * caller's row at the call (an eh_clonefde with row_at). */
static int emit_stub(struct rbuf *o, struct tramp *t, char *err, size_t errlen)
{
	static const uint8_t jmp[] = {0xe9};
	size_t start = o->n;
	for (int i = 0; i < RW_ENTRY_GUARD; i++)
		rb_u8(o, 0xcc);
	uint64_t back = t->site + 1;
	if (put_call(o, t->addr - start, t, back) < 0 ||
	    put_rel32(o, t->addr - start, jmp, 1, back) < 0)
		return errmsg(err, errlen, "the stub of callsite 0x%" PRIx64 " is out of rel32 reach "
			      "of its target", t->call->site);
	t->size = (uint32_t)(o->n - start);
	return 0;
}

/* The thunk of the bound calls of t->call's GOT slot redirected to clone
 * t->target that are neither tagged nor wrapped (rewriter.h section 1,
 * Bound calls), at t->addr:
 *     G: 16 x int3
 *     T: lea own(%rip),%r11; cmp slot(%rip),%r11; je clone
 *        jmp *slot(%rip)
 * called in place of the PLT entry or the slot, so it runs with the callee's
 * entry CFA (rsp + 8) and leaves the return address as the call made it:
 * three instructions where the PLT entry ran two (endbr64; jmp *slot). */
static int emit_thunk(struct rbuf *o, struct tramp *t, char *err, size_t errlen)
{
	static const uint8_t je[] = {0x0f, 0x84}, jmp_slot[] = {0xff, 0x25},
			     jmp_r11[] = {0x41, 0xff, 0xe3};
	size_t start = o->n, jf[XCALL_JUMPS];
	uint64_t origin = t->addr - start;
	for (int i = 0; i < RW_ENTRY_GUARD; i++)
		rb_u8(o, 0xcc);
	if (t->x) {          /* a cross-module call's (rewriter.h section 1) */
		if (put_xcall_check(o, origin, t->call, t->x, jf) < 0)
			goto far;
		rb_put(o, jmp_r11, sizeof(jmp_r11));
		xcall_fallback_here(o, jf);
		if (put_rel32(o, origin, jmp_slot, 2, t->call->got) < 0)
			goto far;
	} else if (put_slot_test(o, origin, t->call) < 0 ||
	    put_rel32(o, origin, je, 2, t->target) < 0 ||
	    put_rel32(o, origin, jmp_slot, 2, t->call->bind_slot) < 0)
		goto far;
	t->size = (uint32_t)(o->n - start);
	t->rows[0] = (struct eh_row){0, 8};
	t->nrows = 1;
	return 0;
far:
	return errmsg(err, errlen, "the thunk of callsite 0x%" PRIx64 " is out of rel32 reach of "
		      "its clone or GOT slot", t->call->site);
}

/* The entry T of the thunk for bound call c (or its copy) redirected to
 * clone dest, or for a cross-module call x, made on its slot's first such
 * call; 0 with err. */
static uint64_t add_thunk(struct plan_state *ps, const struct rw_call *c, uint64_t dest,
			  const struct rw_plan_xcall *x, char *err,
			  size_t errlen)
{
	ps->nbound += !x;
	uint64_t slot = x ? c->got : c->bind_slot;
	dest = x ? x->dest : dest;
	for (uint32_t i = 0; i < ps->nt; i++)
		if (ps->t[i].thunk && ps->t[i].target == dest && !ps->t[i].x == !x &&
		    (x ? ps->t[i].call->got : ps->t[i].call->bind_slot) == slot)
			return ps->t[i].addr + RW_ENTRY_GUARD;
	struct tramp *t = next_tramp(ps, err, errlen);
	if (!t)
		return 0;
	*t = (struct tramp){.call = c, .target = dest, .bound = true, .thunk = true, .x = x};
	uint64_t g = place(ps, t, emit_thunk, err, errlen);
	return g ? g + RW_ENTRY_GUARD : 0;
}

/* A stub for call c (tagged, or bound and calling dest, its callee's
 * clone), or for its copy in a clone at site; its entry S, or 0 with err. */
static uint64_t add_stub(struct plan_state *ps, const struct rw_call *c, uint64_t site,
			 uint64_t dest, bool bound, const struct rw_plan_xcall *x, uint64_t tag,
			 char *err, size_t errlen)
{
	struct tramp *t = next_tramp(ps, err, errlen);
	if (!t)
		return 0;
	*t = (struct tramp){.call = c, .site = site, .target = dest, .tag = tag, .bound = bound || x,
			    .stub = true, .x = x};
	uint64_t g = place(ps, t, emit_stub, err, errlen);
	ps->nbound += bound && !x;
	return g ? g + RW_ENTRY_GUARD : 0;
}

/* The entry code of function fi (its dispatch tests, its entry wrapper
 * padded by w) at the end of text, and the patch that enters it.  The
 * displaced instructions take the patches among them along (padding edits,
 * a call's new target or the jump to its stub): they are relocated as the
 * rewritten image would hold them. */
static int add_entry(struct plan_state *ps, struct rw_binary *b, uint32_t fi, uint32_t w,
		     const struct rw_dispatch_test *tests, uint32_t ntests,
		     char *err, size_t errlen)
{
	const struct rw_unit *u = &b->units[fi];
	const char *name = b->funcs[fi].name ? b->funcs[fi].name : "?";
	uint64_t from = b->funcs[fi].addr + u->entry.off;
	uint8_t head[RW_ENTRY_MAX_BYTES];
	if (u->entry.len > sizeof(head) || bin_read(b->bin, from, head, u->entry.len) < 0)
		return errmsg(err, errlen, "cannot read the entry of %s (0x%" PRIx64 ")", name,
			      b->funcs[fi].addr);
	uint32_t kept = 0;
	for (uint32_t i = 0; i < ps->patches.n; i++) {
		const struct patch *x = &ps->patches.v[i];
		if (x->at >= from && x->at + x->len <= from + u->entry.len)
			memcpy(head + (x->at - from), x->bytes, x->len);
		else if (x->at < from + u->entry.len && x->at + x->len > from)
			return errmsg(err, errlen, "internal error: a change at 0x%" PRIx64 " straddles "
				      "the entry of %s", x->at, name);
		else
			ps->patches.v[kept++] = *x;
	}
	ps->patches.n = kept;
	struct rw_entry_code e;
	struct tramp *t = next_tramp(ps, err, errlen);
	use_stream(ps, rw_plan_heat_of(ps->plan, b->funcs[fi].addr));
	if (!t || rw_emit_entry(ps->cs, b, fi, w, head, tests, ntests, ps->base, ps->out, &e,
				err, errlen))
		return -1;
	*t = (struct tramp){.addr = e.addr, .size = e.size, .func = b->funcs[fi].addr, .bytes = w,
			    .nrows = e.nrows};
	memcpy(t->rows, e.rows, e.nrows * sizeof(*e.rows));
	if (patch_add(&ps->patches, e.patch_at, e.patch, e.patch_len) ||
	    (e.island_at && patch_add(&ps->patches, e.island_at, e.island, e.island_len)))
		return errmsg(err, errlen, "out of memory applying the plan");
	return 0;
}

static uint32_t plan_amount(const struct rw_plan_item *v, uint32_t n, uint64_t addr)
{
	for (uint32_t i = 0; i < n; i++)
		if (v[i].addr == addr)
			return v[i].bytes;
	return 0;
}

/* The clone that the original call at site is redirected to, or RW_NONE
 * (a clone for a call that is no direct call of its function takes it by a
 * dispatch instead: rewriter.h section 1). */
static uint32_t redirect_of(const struct rw_binary *b, const struct rw_plan *p, uint64_t site)
{
	for (uint32_t k = 0; k < p->nclones; k++)
		if (p->clones[k].site == site && p->clones[k].parent == RW_NONE &&
		    !rw_plan_dispatched(b, &p->clones[k]) && !p->clones[k].promote)
			return k;
	return RW_NONE;
}

/* The clone that the copy of the call at site inside clone k is redirected
 * to (a chain), or RW_NONE (a chain's clone for a copy that is no direct
 * call of its function takes it by a dispatch instead). */
static uint32_t chain_of(const struct rw_binary *b, const struct rw_plan *p, uint32_t k,
			 uint64_t site)
{
	for (uint32_t j = k + 1; j < p->nclones; j++)
		if (p->clones[j].site == site && p->clones[j].parent == k &&
		    !rw_plan_dispatched(b, &p->clones[j]) && !p->clones[j].promote)
			return j;
	return RW_NONE;
}

/* The return address a dispatch tests for the frames of call site (an
 * original one, or a copy in a clone): the call in its trampoline when it is
 * wrapped, or in its stub when it is tagged (the call jumps there), else its
 * own. */
static uint64_t return_address(const struct plan_state *ps, uint64_t site)
{
	for (uint32_t i = 0; i < ps->nt; i++)
		if (!ps->t[i].func && ps->t[i].site == site)
			return ps->t[i].ret;
	return site + 1;
}

/* Entry code for every function padded through an entry wrapper or with
 * dispatched clones. */
static int add_entries(struct plan_state *ps, struct rw_binary *b, const struct rw_plan *p,
		       char *err, size_t errlen)
{
	struct rw_dispatch_test tests[RW_MAX_DISPATCH];
	for (uint32_t fi = 0; fi < b->nfuncs; fi++) {
		uint32_t pad = plan_amount(p->pads, p->npads, b->funcs[fi].addr);
		uint32_t w = rw_pad_by_entry(&b->funcs[fi], pad) ? pad : 0;
		uint32_t n = 0;
		for (uint32_t k = 0; k < p->nclones && n < RW_MAX_DISPATCH; k++) {
			if (p->clones[k].func != b->funcs[fi].addr ||
			    !rw_plan_dispatched(b, &p->clones[k]))
				continue;
			tests[n++] = (struct rw_dispatch_test){
				p->clones[k].tag ? 0 : return_address(ps, ps->clones[k].site),
				ps->clones[k].addr, p->clones[k].tag, p->clones[k].weight};
			/* frames of fi that a promoted clone at the site entered by
			 * a tail call return into the stub's call of that clone */
			for (uint32_t r = 0; r < ps->nprets && n < RW_MAX_DISPATCH; r++)
				if (!p->clones[k].tag && ps->prets[r].site == ps->clones[k].site &&
				    rw_may_tail_call(b, rw_func_index(b, ps->prets[r].func),
						     b->funcs[fi].addr))
					tests[n++] = (struct rw_dispatch_test){
						ps->prets[r].ret, ps->clones[k].addr, 0,
						p->clones[k].weight};
		}
		if ((w || n) && add_entry(ps, b, fi, w, tests, n, err, errlen))
			return -1;
	}
	return 0;
}

/* A symbol for a copy in clone k: __icpp_clone_K_NAME. */
static void clone_symbol(struct plan_state *ps, uint32_t k, const char *name, const char *suffix,
			 uint64_t addr, uint64_t size)
{
	struct newsym *sy = &ps->syms[ps->nsyms++];
	snprintf(sy->name, sizeof(sy->name), "__icpp_clone_%u_%s%s", k, name, suffix);
	sy->addr = addr;
	sy->size = (uint32_t)size;
}

/* The FDE and symbol of each veneer of a clone of unit u (padded by pad): the row of
 * the branch that jumps to it, as a stub's (add_stub_fde), under a name
 * __icpp_veneer_COPY that bin_stub_caller reads as the branch's copy in the
 * clone, and training as no call target.  -1 out of memory. */
static int add_veneers(struct plan_state *ps, const struct rw_binary *b, const struct rw_unit *u,
		       const struct rw_clone_tail *v, uint32_t pad)
{
	if (reserve(ps, v->n, v->n))
		return -1;
	for (uint32_t i = 0; i < v->n; i++) {
		uint32_t fde = eh_fde_at(&b->eh, v->v[i].branch);
		ps->cfdes[ps->ncfdes++] = (struct eh_clonefde){
			{fde, u->k0, u->k1, u->nfdes ? pad : 0}, v->v[i].at,
			v->v[i].branch - b->eh.e[fde].pc_begin, RW_VENEER_BYTES, 0, false, 0, 0};
		struct newsym *n = &ps->syms[ps->nsyms++];
		snprintf(n->name, sizeof(n->name), "__icpp_veneer_%016" PRIx64, v->v[i].copy);
		n->addr = v->v[i].at;
		n->size = RW_VENEER_BYTES;
	}
	return 0;
}

/* Copy clone k to the end of text, its function and then its fragment,
 * with its padding, their FDEs and symbols (the fragment's named after its
 * own name, else the function's with .cold). */
static int emit_clone(struct rw_binary *b, const struct rw_plan *p, uint32_t k,
		      struct plan_state *ps, char *err, size_t errlen)
{
	const struct rw_plan_clone *pc = &p->clones[k];
	uint32_t fi = rw_func_index(b, pc->func);
	const struct rw_func *f = &b->funcs[fi];
	const struct rw_unit *u = &b->units[fi];
	use_stream(ps, pc->weight);
	rb_align(ps->out, 16, 0xcc);
	struct rw_copy_range r[2];
	struct rw_clone_tail v;
	uint32_t n = rw_clone_ranges(b, fi, ps->base + ps->out->n, r);
	enum rw_clone_why why = rw_copy_function(ps->cs, b, r, n, &v, ps->out);
	if (why != RW_CLONE_OK)
		return errmsg(err, errlen, "cannot copy %s (0x%" PRIx64 ") for clone %u: %s",
			      f->name ? f->name : "?", f->addr, k, rw_clone_why_name(why));
	struct rw_note_clone *cl = &ps->clones[k];
	/* a chain's call is the copy of site in its parent, copied already */
	uint64_t site = pc->parent == RW_NONE ? pc->site
					      : rw_clone_copy_addr(&ps->clones[pc->parent], pc->site);
	*cl = (struct rw_note_clone){.addr = r[0].to, .size = f->size, .func = f->addr,
				     .site = site,
				     .dispatched = rw_plan_dispatched(b, pc), .tag = pc->tag};
	if (n > 1) {
		cl->frag_addr = r[1].to;
		cl->frag_size = r[1].hi - r[1].lo;
		cl->frag_func = r[1].lo;
	}
	if (ps->out->oom || pad_edits(ps, u, pc->pad, cl) || reserve(ps, n, n))
		return errmsg(err, errlen, "out of memory applying the plan");
	for (uint32_t i = 0; i < n; i++)
		ps->cfdes[ps->ncfdes++] = (struct eh_clonefde){
			{eh_fde_at(&b->eh, r[i].lo), u->k0, u->k1, u->nfdes ? pc->pad : 0}, r[i].to,
			UINT64_MAX, 0, 0, false, 0, 0};
	/* a function without a name by its address, as the prediction names it */
	char own[32], frag_own[32];
	snprintf(own, sizeof(own), "0x%" PRIx64, f->addr);
	const char *name = f->name ? f->name : own;
	clone_symbol(ps, k, name, "", cl->addr, cl->size);
	if (n > 1) {
		const char *frag = b->funcs[u->frag].name;
		snprintf(frag_own, sizeof(frag_own), "0x%" PRIx64, cl->frag_func);
		if (!frag && !f->name)
			frag = frag_own;
		clone_symbol(ps, k, frag ? frag : name, frag ? "" : ".cold", cl->frag_addr, cl->frag_size);
	}
	return add_veneers(ps, b, u, &v, pc->pad) ? errmsg(err, errlen, "out of memory applying the plan")
					      : 0;
}

/* The amount by which the copy of call c inside clone k is wrapped. */
static uint32_t copy_wrap(const struct rw_plan *p, uint32_t k, const struct rw_call *c)
{
	for (uint32_t i = 0; i < p->nclone_wraps; i++)
		if (p->clone_wraps[i].clone == k && p->clone_wraps[i].site == c->site)
			return p->clone_wraps[i].bytes;
	return plan_amount(p->wraps, p->nwraps, c->site);
}

/* The FDE of stub t for call c: the caller's row at the call, edited as the
 * caller's padding edits its FDE; for c's copy in a clone, copy_start is
 * where the clone's copy of c's function (or fragment) begins, and the
 * clone's FDE there gives the edit (its own padding).  Where the caller has
 * an LSDA, the stub's own follows the stub in text (eh_put_stub_lsda).  For
 * an indirect tail jump's stub (t->tail), the rows from its first displaced
 * instruction (which may pop) to the jump, as the stub moves them (after
 * its guard).  -1 with err. */
static int add_stub_fde(struct plan_state *ps, const struct rw_binary *b, const struct rw_call *c,
			uint64_t copy_start, const struct tramp *t, char *err,
			size_t errlen)
{
	if (reserve(ps, 1, 0))
		return errmsg(err, errlen, "out of memory applying the plan");
	uint32_t fde = eh_fde_at(&b->eh, c->insn);
	const struct eh_entry *e = &b->eh.e[fde];
	uint64_t lsda = 0;
	if (e->lsda) {
		lsda = ps->base + ps->out->n;      /* beside its stub */
		if (eh_put_stub_lsda(b->bin, &b->eh, fde, c->insn + c->len, t->addr, t->size,
				     copy_start ? copy_start : e->pc_begin, lsda, ps->out))
			return errmsg(err, errlen, "the stub of callsite 0x%" PRIx64 " gets no LSDA "
				      "(its exception table is out of reach)", t->site);
	}
	struct eh_fde_edit ed = {fde, 0, 0, 0};
	if (copy_start) {
		for (uint32_t e = 0; e < ps->ncfdes; e++)
			if (ps->cfdes[e].start == copy_start && ps->cfdes[e].row_at == UINT64_MAX)
				ed = ps->cfdes[e].edit;
	} else {
		for (uint32_t e = 0; e < ps->nfedits; e++)
			if (ps->fedits[e].fde == fde)
				ed = ps->fedits[e];
	}
	ps->cfdes[ps->ncfdes++] = (struct eh_clonefde){ed, t->addr, c->insn - e->pc_begin, t->size,
						       lsda, t->tail, c->promote_from - e->pc_begin,
						       RW_ENTRY_GUARD};
	return 0;
}

/* Where clone cl's copy of the code holding the original instruction at
 * insn begins: its function's copy, or its fragment's. */
static uint64_t copy_begin(const struct rw_note_clone *cl, uint64_t insn)
{
	return insn - cl->func < cl->size ? cl->addr : cl->frag_addr;
}

/* Trampolines for the wrapped copies of calls inside clone k (they call what
 * the original calls, or the clone of a chain that takes the copy), stubs
 * for the tagged ones that are not wrapped (with a bound one's check), and
 * the copies patched to call them, the thunk of a bound one neither tagged
 * nor wrapped, or that clone.  A wrapped copy's trampoline carries its tag
 * and check. */
static int wrap_copies(struct rw_binary *b, const struct rw_plan *p, uint32_t k,
		       struct plan_state *ps, char *err, size_t errlen)
{
	const struct rw_note_clone *cl = &ps->clones[k];
	for (size_t i = 0; i < b->ncalls; i++) {
		const struct rw_call *c = &b->calls[i];
		uint64_t insn = rw_clone_copy_addr(cl, c->insn);
		uint32_t w = insn ? copy_wrap(p, k, c) : 0;
		uint32_t chain = insn ? chain_of(b, p, k, c->site) : RW_NONE;
		uint64_t tag = insn ? rw_plan_tag(p, c->site, k) : 0;
		const struct rw_plan_xcall *x = insn ? rw_plan_xcall_of(p, c->site, k) : NULL;
		bool bound = chain != RW_NONE && c->bind;
		if (!w && chain == RW_NONE && !tag && !x)
			continue;
		uint64_t dest = chain == RW_NONE ? c->target : ps->clones[chain].addr;
		uint64_t site = c->site + (insn - c->insn);
		uint8_t bytes[16];
		if (!w && tag) {
			uint64_t stub = add_stub(ps, c, site, dest, bound, x, tag, err, errlen);
			if (!stub)
				return -1;
			if (add_stub_fde(ps, b, c, copy_begin(cl, c->insn),
					 &ps->t[ps->nt - 1], err, errlen))
				return -1;
			memset(bytes, 0xcc, sizeof(bytes));
			if (x86_encode_jmp(insn, stub, bytes) < 0)
				return errmsg(err, errlen, "callsite 0x%" PRIx64 " in clone %u is out of "
					      "rel32 reach of its stub", c->site, k);
			memcpy(text_at(ps, insn), bytes, c->len);
			continue;
		}
		uint64_t t = w            ? add_tramp(ps, c, site, dest, bound, x, w, tag,
							err, errlen)
			     : bound || x ? add_thunk(ps, c, dest, x, err, errlen)
					  : dest;
		if (!t)
			return -1;
		if (call_to(insn, c->len, t, bytes))
			return errmsg(err, errlen, "callsite 0x%" PRIx64 " in clone %u is out of rel32 "
				      "reach of its clone, trampoline or thunk", c->site, k);
		memcpy(text_at(ps, insn), bytes, c->len);
	}
	return 0;
}

/* The jump (jmp or jcc rel32) at `at` of the original, now at `to`, made
 * to jump to dest instead, into bytes; its length, or 0 when out of reach. */
static uint8_t retarget_jump(const struct rw_binary *b, uint64_t at, uint64_t to, uint64_t dest,
			     uint8_t bytes[6])
{
	if (bin_read(b->bin, at, bytes, 6) < 0)
		return 0;
	uint8_t len = bytes[0] == 0xe9 ? 5 : 6;
	int64_t rel = (int64_t)dest - (int64_t)(to + len);
	if (rel < INT32_MIN || rel > INT32_MAX)
		return 0;
	int32_t r32 = (int32_t)rel;
	memcpy(bytes + len - 4, &r32, 4);
	return len;
}

/* A stand-in call for the thunk of a tail jump (bound to own definition
 * own, or another module's function's by plan xcall x): the slot it reads. */
static struct rw_call *tail_call(struct plan_state *ps, const struct rw_tail_jump *j, uint64_t own)
{
	struct rw_call *c = &ps->tail_calls[ps->ntail_calls++];
	*c = (struct rw_call){.insn = j->at, .site = j->at, .got = j->slot, .bind = own,
			      .bind_slot = own ? j->slot : 0};
	return c;
}

/* A test of an indirect tail jump's promotion stub (add_tail_stubs): the
 * jump (its copy in clone k; RW_NONE: the original), the function its
 * operand is compared with, the clone it jumps to then. */
struct tail_test {
	struct rw_tail_jump jump;
	uint32_t k;
	uint64_t func, clone, weight;
};

static int add_tail_test(struct plan_state *ps, struct tail_test t)
{
	if (!grow_array((void **)&ps->ttests, ps->nttests + 1ull, &ps->capttests, sizeof(*ps->ttests)))
		return -1;
	ps->ttests[ps->nttests++] = t;
	return 0;
}

/* Point the tail jumps to func (0: to a PLT stub) starting at site (in
 * clone k: their copies) at dest, a clone of this binary (a jump through
 * its own PLT entry: at the bound thunk that checks the slot first; an
 * indirect one: by its promotion stub, add_tail_stubs) or a checked thunk;
 * weight the clone's. */
static int point_tails(const struct rw_binary *b, struct plan_state *ps, uint64_t site,
		       uint64_t func, uint32_t k, uint64_t dest, uint64_t weight,
		       char *err, size_t errlen)
{
	struct rw_tail_jump r, js[RW_MAX_TAIL_JUMPS];
	uint32_t n = rw_tail_route_at(b, site, func, &r, js);
	if (!n)
		return errmsg(err, errlen, "internal error: no tail jumps at 0x%" PRIx64, site);
	bool local = rw_func_index(b, r.to) != RW_NONE;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t at = js[i].at, d = dest;
		if (!js[i].to) {
			if (add_tail_test(ps, (struct tail_test){js[i], k, func, dest, weight}))
				return errmsg(err, errlen, "out of memory applying the plan");
			continue;
		}
		if (local && js[i].to != r.to &&
		    !(d = add_thunk(ps, tail_call(ps, &js[i], r.to), dest, NULL, err,
				    errlen)))
			return -1;
		uint64_t to = k == RW_NONE ? at : rw_clone_copy_addr(&ps->clones[k], at);
		uint8_t bytes[6], len = to ? retarget_jump(b, at, to, d, bytes) : 0;
		if (!len)
			return errmsg(err, errlen, "the tail jump at 0x%" PRIx64 " is out of rel32 "
				      "reach of its clone or thunk", at);
		if (k != RW_NONE)
			memcpy(text_at(ps, to), bytes, len);
		else if (patch_add(&ps->patches, to, bytes, len))
			return errmsg(err, errlen, "out of memory applying the plan");
	}
	return 0;
}

/* A stub for the original call c (tagged, or bound and calling dest, its
 * callee's clone), the jump at the call into it, and its FDE
 * (add_stub_fde). */
static int stub_call(struct plan_state *ps, const struct rw_binary *b, const struct rw_call *c,
		     uint64_t dest, bool bound, const struct rw_plan_xcall *x, uint64_t tag,
		     char *err, size_t errlen)
{
	uint64_t stub = add_stub(ps, c, c->site, dest, bound, x, tag, err, errlen);
	if (!stub)
		return -1;
	if (add_stub_fde(ps, b, c, 0, &ps->t[ps->nt - 1], err, errlen))
		return -1;
	uint8_t bytes[16];
	memset(bytes, 0xcc, sizeof(bytes));
	if (x86_encode_jmp(c->insn, stub, bytes) < 0)
		return errmsg(err, errlen, "callsite 0x%" PRIx64 " is out of rel32 reach of its stub",
			      c->site);
	if (patch_add(&ps->patches, c->insn, bytes, c->len))
		return errmsg(err, errlen, "out of memory applying the plan");
	return 0;
}

/* Original call c made to call dest (a trampoline, thunk or clone). */
static int patch_call(struct plan_state *ps, const struct rw_call *c, uint64_t dest, char *err,
		      size_t errlen)
{
	uint8_t bytes[16];
	if (call_to(c->insn, c->len, dest, bytes))
		return errmsg(err, errlen, "callsite 0x%" PRIx64 " is out of rel32 reach of the new "
			      "code", c->site);
	if (patch_add(&ps->patches, c->insn, bytes, c->len))
		return errmsg(err, errlen, "out of memory applying the plan");
	return 0;
}

/* The function whose page another module's check of clone c reads: the
 * forwarder the call's slot holds, else c's function. */
static uint64_t marked_of(const struct rw_plan_clone *c)
{
	return c->xcall_from ? c->xcall_from : c->func;
}

/* The marker of each page whose functions take another module's calls by
 * their checks (rewriter.h section 1, Cross-module calls): two nopl over
 * the gap's first RW_XCALL_MARK_BYTES, nops to a boundary of its padding
 * (rw_func.xcall_mark_len). */
static int add_marks(struct plan_state *ps, const struct rw_binary *b, const struct rw_plan *p,
		     const uint8_t id[20])
{
	/* the functions whose pages are checked: of the checked clones, and
	 * the forwarders of the `mark` lines */
	uint32_t n = p->nclones + p->nmarks, nmarks = 0;
	uint64_t *marks = malloc((n + 1) * sizeof(*marks));
	if (!marks)
		return -1;
	int r = 0;
	for (uint32_t k = 0; k < n && !r; k++) {
		if (k < p->nclones && !p->clones[k].xcall)
			continue;
		uint64_t func = k < p->nclones ? marked_of(&p->clones[k]) : p->marks[k - p->nclones];
		const struct rw_func *f = &b->funcs[rw_func_index(b, func)];
		uint64_t mark = f->xcall_mark;
		bool done = false;
		for (uint32_t j = 0; j < nmarks && !done; j++)
			done = marks[j] == mark;
		if (done)
			continue;
		marks[nmarks++] = mark;
		struct rbuf o = {0};
		put_nopl_pair(&o, rw_xcall_value(id, 20, mark & ~(uint64_t)0xfff));
		while (o.n < f->xcall_mark_len)
			rb_u8(&o, 0x90);
		r = o.oom;
		for (size_t at = 0; !r && at < o.n; at += 16)     /* a patch holds 16 */
			r = patch_add(&ps->patches, mark + at, o.p + at,
				      (uint8_t)(o.n - at < 16 ? o.n - at : 16));
		rb_free(&o);
	}
	ps->nmarks = nmarks;
	free(marks);
	return r ? -1 : 0;
}

/* The stubs of the tagged calls that are not wrapped (a wrapped one's
 * trampoline carries its tag); a copy's are wrap_copies'. */
static int add_stubs(struct plan_state *ps, const struct rw_binary *b, const struct rw_plan *p,
		     char *err, size_t errlen)
{
	for (uint32_t i = 0; i < p->ntags; i++) {
		uint64_t site = p->tags[i].site;
		if (p->tags[i].clone != RW_NONE || plan_amount(p->wraps, p->nwraps, site))
			continue;
		const struct rw_call *c = &b->calls[rw_call_index(b, site)];
		uint32_t k = redirect_of(b, p, site);
		uint64_t dest = k == RW_NONE ? c->target : ps->clones[k].addr;
		if (stub_call(ps, b, c, dest, k != RW_NONE && c->bind,
			      rw_plan_xcall_of(p, site, RW_NONE), p->tags[i].tag, err,
			      errlen))
			return -1;
	}
	return 0;
}

/* What a callsite's trampoline or stub is called: __icpp_KIND_SITE. */
static const char *stub_kind(const struct tramp *t)
{
	return !t->stub ? "wrap" : t->promote ? "promote" : t->bound ? "bind" : "tag";
}

/* ------------------------------------------------------------------ promotion */

/* What a promotion stub displaces: the whole instructions before an
 * indirect call and the call, as the output holds them at `at`. */
struct displaced {
	uint64_t at;                 /* the first (the call's promote_from, or its
	                              * copy's) */
	uint8_t bytes[RW_PROMOTE_MAX_BYTES];
	uint32_t len;                /* up to the call's end */
	uint32_t call_len;
};

struct promote_test {
	uint64_t func;               /* what the call's operand is compared with */
	uint64_t clone;              /* where it goes then */
	uint64_t weight;
};

static int add_promoted_ret(struct plan_state *ps, struct promoted_ret r)
{
	if (!grow_array((void **)&ps->prets, ps->nprets + 1ull, &ps->capprets, sizeof(*ps->prets)))
		return -1;
	ps->prets[ps->nprets++] = r;
	return 0;
}

/* The promotion stub of an indirect call or tail jump (rewriter.h section
 * 1, Promoted calls, Tail chains) at the end of text, its record t (call,
 * site set):
 *     G: 16 x int3
 *     S: the displaced instructions, moved; per test (the heaviest first):
 *          lea func(%rip),%r11; cmp %r11,OP; je C_i
 *        call *OP; jmp back           (t->ret after the call)
 *   C_i: call clone_i; jmp back
 * and for a tail jump (tail):
 *     S: the displaced instructions, moved; per test:
 *          lea func(%rip),%r11; cmp %r11,OP; je clone_i
 *        jmp *OP                      (moved)
 * %r11 and the flags are scratch at a call and at a function's entry; OP
 * does not use %r11 (x86_cmp_r11_of); a call's is not rip-relative, so it
 * is copied as it is.  -1 with err. */
static int emit_promote(struct plan_state *ps, struct tramp *t, const struct displaced *d,
			const struct promote_test *tests, uint32_t ntests, bool tail, char *err,
			size_t errlen)
{
	static const uint8_t lea_r11[] = {0x4c, 0x8d, 0x1d}, je[] = {0x0f, 0x84}, jmp[] = {0xe9},
			     call[] = {0xe8};
	if (ntests > RW_MAX_DISPATCH)
		return errmsg(err, errlen, "internal error: callsite 0x%" PRIx64 " takes more than "
			      "%d clones", t->site, RW_MAX_DISPATCH);
	use_stream(ps, site_heat(ps, t->site));
	struct rbuf *o = ps->out;
	rb_align(o, 16, 0xcc);
	size_t start = o->n;
	uint64_t origin = ps->base, back = d->at + d->len, call_at = back - d->call_len;
	t->addr = origin + start;
	for (int i = 0; i < RW_ENTRY_GUARD; i++)
		rb_u8(o, 0xcc);
	const uint8_t *p = d->bytes;
	size_t left = d->len;
	uint64_t at = d->at;
	cs_insn *insn = cs_malloc(ps->cs);
	const char *why = "cannot decode";
	while (insn && at < call_at) {
		uint8_t out[X86_RELOC_MAX_INSN];
		if (!x86_disasm_iter(ps->cs, &p, &left, &at, insn))
			break;
		int n = x86_relocate_insn(insn, origin + o->n, out, &why);
		if (n < 0)
			break;
		rb_put(o, out, (size_t)n);
	}
	if (at != call_at) {
		if (insn)
			cs_free(insn, 1);
		return errmsg(err, errlen, "cannot move the instructions before callsite 0x%" PRIx64
			      ": %s", t->site, why);
	}
	const uint8_t *op = d->bytes + (d->len - d->call_len);
	uint8_t cmp[RW_PROMOTE_MAX_BYTES + 1];
	size_t to_c[RW_MAX_DISPATCH];
	int ncmp = 0;
	for (uint32_t i = 0; ncmp >= 0 && i < ntests; i++) {
		if (put_rel32(o, origin, lea_r11, 3, tests[i].func) < 0)
			goto far;
		ncmp = x86_cmp_r11_of(op, d->call_len, tail ? call_at : 0, origin + o->n, cmp);
		if (ncmp < 0)
			break;
		rb_put(o, cmp, (size_t)ncmp);
		if (tail && put_rel32(o, origin, je, 2, tests[i].clone) < 0)
			goto far;
		if (!tail) {
			rb_put(o, je, 2);
			rb_u32(o, 0);
		}
		to_c[i] = o->n;
	}
	/* the jump moved, the call copied */
	uint8_t moved[X86_RELOC_MAX_INSN];
	int nmoved = 0;
	if (tail)
		nmoved = insn && x86_disasm_iter(ps->cs, &p, &left, &at, insn)
				 ? x86_relocate_insn(insn, origin + o->n, moved, &why) : -1;
	if (insn)
		cs_free(insn, 1);
	if (ncmp < 0 || nmoved < 0)
		return errmsg(err, errlen, "internal error: callsite 0x%" PRIx64 " cannot be promoted",
			      t->site);
	if (tail) {
		rb_put(o, moved, (size_t)nmoved);
		t->size = (uint32_t)(o->n - start);
		return 0;
	}
	rb_put(o, op, d->call_len);
	t->ret = origin + o->n;
	if (put_rel32(o, origin, jmp, 1, back) < 0)
		goto far;
	for (uint32_t i = 0; i < ntests; i++) {
		int32_t rel = (int32_t)(o->n - to_c[i]);
		if (!o->oom)
			memcpy(o->p + to_c[i] - 4, &rel, 4);
		if (put_rel32(o, origin, call, 1, tests[i].clone) < 0)
			goto far;
		if (add_promoted_ret(ps, (struct promoted_ret){t->site, tests[i].func,
							       origin + o->n}))
			return errmsg(err, errlen, "out of memory applying the plan");
		if (put_rel32(o, origin, jmp, 1, back) < 0)
			goto far;
	}
	t->size = (uint32_t)(o->n - start);
	return 0;
far:
	return errmsg(err, errlen, "the promotion stub of callsite 0x%" PRIx64 " is out of rel32 "
		      "reach of its clones or the call", t->site);
}

static int cmp_test_weight(const void *x, const void *y)
{
	const struct promote_test *a = x, *b = y;
	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return a->func < b->func ? -1 : a->func > b->func;
}

/* The promotion stub for the original call c (k RW_NONE: its displaced
 * instructions as the patches leave them, which move into the stub) or for
 * its copy in clone k (from the copy in text), with tests, and the jump
 * into it that replaces the displaced instructions; with tail, c stands for
 * an indirect tail jump (emit_promote).  -1 with err. */
static int add_promote(struct plan_state *ps, const struct rw_binary *b, const struct rw_call *c,
		       uint32_t k, struct promote_test *tests, uint32_t ntests, bool tail, char *err,
		       size_t errlen)
{
	const struct rw_note_clone *cl = k == RW_NONE ? NULL : &ps->clones[k];
	uint64_t copy_start = cl ? copy_begin(cl, c->insn) : 0;
	uint64_t copy_at = cl ? rw_clone_copy_addr(cl, c->insn) : 0;
	struct displaced d = {.len = (uint32_t)(c->insn + c->len - c->promote_from),
			      .call_len = c->len};
	d.at = copy_start ? copy_at - (c->insn - c->promote_from) : c->promote_from;
	if (copy_start) {
		memcpy(d.bytes, text_at(ps, d.at), d.len);
	} else if (bin_read(b->bin, d.at, d.bytes, d.len) < 0) {
		return errmsg(err, errlen, "cannot read callsite 0x%" PRIx64, c->site);
	} else {
		uint32_t kept = 0;
		for (uint32_t i = 0; i < ps->patches.n; i++) {
			const struct patch *x = &ps->patches.v[i];
			if (x->at >= d.at && x->at + x->len <= d.at + d.len)
				memcpy(d.bytes + (x->at - d.at), x->bytes, x->len);
			else if (x->at < d.at + d.len && x->at + x->len > d.at)
				return errmsg(err, errlen, "internal error: a change at 0x%" PRIx64
					      " straddles callsite 0x%" PRIx64 "'s promotion", x->at,
					      c->site);
			else
				ps->patches.v[kept++] = *x;
		}
		ps->patches.n = kept;
	}
	qsort(tests, ntests, sizeof(*tests), cmp_test_weight);
	struct tramp *t = next_tramp(ps, err, errlen);
	if (!t)
		return -1;
	*t = (struct tramp){.call = c, .site = d.at + d.len - 1, .stub = true, .promote = true,
			    .tail = tail};
	if (emit_promote(ps, t, &d, tests, ntests, tail, err, errlen) < 0)
		return -1;
	if (add_stub_fde(ps, b, c, copy_start, t, err, errlen))
		return -1;
	uint8_t bytes[RW_PROMOTE_MAX_BYTES];
	memset(bytes, 0xcc, sizeof(bytes));
	if (x86_encode_jmp(d.at, t->addr + RW_ENTRY_GUARD, bytes) < 0)
		return errmsg(err, errlen, "callsite 0x%" PRIx64 " is out of rel32 reach of its "
			      "promotion stub", c->site);
	*(tail ? &ps->ntail_promoted : &ps->npromoted) += 1;
	if (copy_start) {
		memcpy(text_at(ps, d.at), bytes, d.len);
		return 0;
	}
	return patch_add(&ps->patches, d.at, bytes, (uint8_t)d.len)
		       ? errmsg(err, errlen, "out of memory applying the plan") : 0;
}

/* The promotion stubs of the plan: one per indirect call (or copy of one in
 * a clone) that takes promoted clones, testing them all. */
static int add_promotes(struct plan_state *ps, const struct rw_binary *b, const struct rw_plan *p,
			char *err, size_t errlen)
{
	struct promote_test tests[RW_MAX_DISPATCH];
	for (uint32_t k = 0; k < p->nclones; k++) {
		const struct rw_plan_clone *ck = &p->clones[k];
		bool first = ck->promote;
		for (uint32_t j = 0; j < k && first; j++)
			first = !(p->clones[j].promote && p->clones[j].site == ck->site &&
				  p->clones[j].parent == ck->parent);
		if (!first)
			continue;
		uint32_t n = 0;
		for (uint32_t j = k; j < p->nclones && n < RW_MAX_DISPATCH; j++)
			if (p->clones[j].promote && p->clones[j].site == ck->site &&
			    p->clones[j].parent == ck->parent)
				tests[n++] = (struct promote_test){p->clones[j].func, ps->clones[j].addr,
								   p->clones[j].weight};
		const struct rw_call *c = &b->calls[rw_call_index(b, ck->site)];
		if (add_promote(ps, b, c, ck->parent, tests, n, false, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* The promotion stubs of the indirect tail jumps (and copies) that tail
 * clones take (point_tails): one per jump, testing each of its clones.
 * Their stand-in calls (insn, len, promote_from: the jump's) go in
 * ps->tail_calls. */
static int add_tail_stubs(struct plan_state *ps, const struct rw_binary *b,
			  char *err, size_t errlen)
{
	struct promote_test tests[RW_MAX_DISPATCH];
	for (uint32_t i = 0; i < ps->nttests; i++) {
		const struct tail_test *ti = &ps->ttests[i];
		bool first = true;
		for (uint32_t j = 0; j < i && first; j++)
			first = ps->ttests[j].jump.at != ti->jump.at || ps->ttests[j].k != ti->k;
		if (!first)
			continue;
		uint32_t n = 0;
		for (uint32_t j = i; j < ps->nttests; j++) {
			const struct tail_test *tj = &ps->ttests[j];
			if (tj->jump.at != ti->jump.at || tj->k != ti->k)
				continue;
			if (n == RW_MAX_DISPATCH)
				return errmsg(err, errlen, "the plan takes more than %d clones by the tail "
					      "jump at 0x%" PRIx64, RW_MAX_DISPATCH, ti->jump.at);
			tests[n++] = (struct promote_test){tj->func, tj->clone, tj->weight};
		}
		struct rw_call *c = &ps->tail_calls[ps->ntail_calls++];
		*c = (struct rw_call){.insn = ti->jump.at, .site = ti->jump.at, .len = ti->jump.len,
				      .promote_from = ti->jump.from};
		if (add_promote(ps, b, c, ti->k, tests, n, true, err, errlen) < 0)
			return -1;
	}
	return 0;
}

/* Tail chains (rewriter.h section 1): each tail clone's jumps, the
 * original's in place, a chain's copies in its parent clone, pointed at
 * it (indirect ones by their promotion stubs); a tail jump to another
 * module's clone at its check's thunk.  The
 * thunks read the jumps' PLT slots (stand-in calls in ps->tail_calls). */
static int redirect_tails(const struct rw_binary *b, const struct rw_plan *p,
			  struct plan_state *ps, char *err, size_t errlen)
{
	ps->tail_calls = calloc((size_t)p->nxcalls + (size_t)p->nclones * RW_MAX_TAIL_JUMPS + 1,
				sizeof(*ps->tail_calls));
	if (!ps->tail_calls)
		return errmsg(err, errlen, "out of memory applying the plan");
	for (uint32_t k = 0; k < p->nclones; k++)
		if (p->clones[k].tail &&
		    point_tails(b, ps, p->clones[k].site, p->clones[k].func, p->clones[k].parent,
				ps->clones[k].addr, p->clones[k].weight, err, errlen))
			return -1;
	for (uint32_t i = 0; i < p->nxcalls; i++) {
		const struct rw_plan_xcall *x = &p->xcalls[i];
		struct rw_tail_jump r, js[RW_MAX_TAIL_JUMPS];
		if (!x->tail)
			continue;
		if (!rw_tail_route_at(b, x->site, 0, &r, js))
			return errmsg(err, errlen, "internal error: no tail jump to a PLT stub at 0x%"
				      PRIx64, x->site);
		uint64_t thunk = add_thunk(ps, tail_call(ps, &js[0], 0), 0, x, err, errlen);
		if (!thunk || point_tails(b, ps, x->site, 0, x->clone, thunk, 0, err, errlen))
			return -1;
	}
	return add_tail_stubs(ps, b, err, errlen);
}

/* A clone's place in the layout: heaviest first, plan order among equals. */
struct clone_rank {
	uint64_t weight;
	uint32_t k;
};
static int cmp_clone_rank(const void *x, const void *y)
{
	const struct clone_rank *a = x, *b = y;
	return a->weight != b->weight ? (a->weight < b->weight ? 1 : -1) : (a->k > b->k) - (a->k < b->k);
}

/* The order in which the clones are laid out in new code: the heaviest
 * first (the entries training saw each take), so that the code that runs
 * most shares cache lines with code that runs as much (the seed-1 and -2
 * rewrites of the six run_time.sh programs: 5.6% -> 5.2% more cycles than
 * the originals, on the mean; docs/bench-disambig.md, session 51); a
 * chain's clone after its parent, whose copy of the call it takes.
 * malloc'd, NULL when out of memory. */
static uint32_t *clone_order(const struct rw_plan *p)
{
	struct clone_rank *byweight = malloc((p->nclones + 1) * sizeof(*byweight));
	uint32_t *order = malloc((p->nclones + 1) * sizeof(*order)), n = 0;
	bool *placed = calloc(p->nclones + 1, sizeof(*placed));
	if (!byweight || !order || !placed) {
		free(byweight);
		free(order);
		free(placed);
		return NULL;
	}
	for (uint32_t k = 0; k < p->nclones; k++)
		byweight[k] = (struct clone_rank){p->clones[k].weight, k};
	qsort(byweight, p->nclones, sizeof(*byweight), cmp_clone_rank);
	for (uint32_t i = 0; i < p->nclones; i++)
		while (!placed[byweight[i].k]) {     /* its eldest unplaced ancestor first */
			uint32_t k = byweight[i].k;
			while (p->clones[k].parent != RW_NONE && !placed[p->clones[k].parent])
				k = p->clones[k].parent;
			placed[k] = true;
			order[n++] = k;
		}
	free(byweight);
	free(placed);
	return order;
}

/* The cold stream after the hot one's room (rewriter.h section 2); -1
 * when the hot one has outgrown it (it is the same at every address).
 * When measuring, the hot one's size in hot_size, nothing joined. */
static int join_streams(struct plan_state *ps)
{
	rb_align(&ps->text, 16, 0xcc);
	ps->hot_size = ps->text.n;
	if (!ps->cold.n || ps->hot_room == HOT_MEASURE_ROOM)
		return 0;
	if (ps->text.n > ps->hot_room)
		return -1;
	while (ps->text.n < ps->hot_room)
		rb_u8(&ps->text, 0xcc);
	rb_put(&ps->text, ps->cold.p, ps->cold.n);
	rb_align(&ps->text, 16, 0xcc);
	return 0;
}

/* Code edits of plan p: clones, then trampolines, laid out from text_vaddr,
 * the code that runs most first, the rest from text_vaddr + hot_room on
 * (hot_room 0: all in the order made). */
static int apply_plan(struct rw_binary *b, const struct rw_plan *p, const uint8_t id[20],
		      uint64_t text_vaddr, uint64_t hot_room, struct plan_state *ps, char *err,
		      size_t errlen)
{
	csh cs = ps->cs;
	plan_state_free(ps);
	memset(ps, 0, sizeof(*ps));
	ps->cs = cs;
	ps->plan = p;
	ps->text_vaddr = text_vaddr;
	ps->hot_room = hot_room;
	ps->clones = calloc(p->nclones + 1, sizeof(*ps->clones));
	if (!ps->clones || reserve(ps, 2 * p->nclones + 1, 2 * p->nclones + 1))
		goto oom;
	for (uint32_t i = 0; i < p->npads; i++) {
		uint32_t fi = rw_func_index(b, p->pads[i].addr);
		const struct rw_unit *u = &b->units[fi];
		int64_t d = p->pads[i].bytes;
		if (rw_pad_by_entry(&b->funcs[fi], p->pads[i].bytes))
			continue;               /* its entry wrapper (add_entries) */
		if (pad_edits(ps, u, d, NULL))
			goto oom;
		for (uint32_t k = 0; k < u->nfdes; k++) {
			struct eh_fde_edit *v = realloc(ps->fedits, (ps->nfedits + 1) * sizeof(*v));
			if (!v)
				goto oom;
			ps->fedits = v;
			v[ps->nfedits++] = (struct eh_fde_edit){u->fdes[k], u->k0, u->k1, d};
		}
	}
	uint32_t *order = clone_order(p);
	if (!order)
		goto oom;
	for (uint32_t i = 0; i < p->nclones; i++)
		if (emit_clone(b, p, order[i], ps, err, errlen)) {
			free(order);
			return -1;
		}
	free(order);
	/* original calls, in the plan's order: wrapped (the trampoline calls the
	 * clone when the call is also redirected), then redirected to a clone */
	for (uint32_t i = 0; i < p->nwraps + p->nclones; i++) {
		bool wrap = i < p->nwraps;
		if (!wrap && p->clones[i - p->nwraps].tail)
			continue;       /* redirect_tails */
		uint64_t site = wrap ? p->wraps[i].addr : p->clones[i - p->nwraps].site;
		const struct rw_call *c = &b->calls[rw_call_index(b, site)];
		uint32_t k = wrap ? redirect_of(b, p, site) : i - p->nwraps;
		uint64_t tag = rw_plan_tag(p, site, RW_NONE);
		if (!wrap && (p->clones[k].parent != RW_NONE || p->clones[k].xcall ||
			      plan_amount(p->wraps, p->nwraps, site) ||
			      rw_plan_dispatched(b, &p->clones[k]) || tag || p->clones[k].promote))
			continue;        /* a chain's (wrap_copies), another module's
					  * call, done with its wrap, dispatched, or
					  * its stub's (below) */
		uint64_t dest = k == RW_NONE ? c->target : ps->clones[k].addr;
		bool bound = k != RW_NONE && c->bind;
		const struct rw_plan_xcall *x = wrap ? rw_plan_xcall_of(p, site, RW_NONE) : NULL;
		if (wrap && !(dest = add_tramp(ps, c, site, dest, bound, x, p->wraps[i].bytes, tag,
					       err, errlen)))
			return -1;
		if (!wrap && bound && !(dest = add_thunk(ps, c, dest, NULL, err, errlen)))
			return -1;
		if (patch_call(ps, c, dest, err, errlen))
			return -1;
	}
	/* calls of another module's clones, neither wrapped nor tagged: a thunk */
	for (uint32_t i = 0; i < p->nxcalls; i++) {
		const struct rw_plan_xcall *x = &p->xcalls[i];
		if (x->clone != RW_NONE || x->tail || plan_amount(p->wraps, p->nwraps, x->site) ||
		    rw_plan_tag(p, x->site, RW_NONE))
			continue;       /* a copy's, a tail jump's (redirect_tails), ... */
		const struct rw_call *c = &b->calls[rw_call_index(b, x->site)];
		uint64_t dest = add_thunk(ps, c, 0, x, err, errlen);
		if (!dest || patch_call(ps, c, dest, err, errlen))
			return -1;
	}
	if (add_marks(ps, b, p, id))
		goto oom;
	if (add_stubs(ps, b, p, err, errlen))
		return -1;
	for (uint32_t k = 0; k < p->nclones; k++)
		if (wrap_copies(b, p, k, ps, err, errlen))
			return -1;
	if (add_promotes(ps, b, p, err, errlen))
		return -1;
	if (redirect_tails(b, p, ps, err, errlen))
		return -1;
	if (add_entries(ps, b, p, err, errlen))
		return -1;
	if (join_streams(ps) < 0)
		return errmsg(err, errlen, "internal error: new code outgrew its room between passes");
	if (ps->text.oom || ps->cold.oom || reserve(ps, 0, ps->nt + 1))
		goto oom;
	for (uint32_t i = 0; i < ps->nt; i++) {
		struct newsym *n = &ps->syms[ps->nsyms++];
		const char *fname = ps->t[i].func ? b->funcs[rw_func_index(b, ps->t[i].func)].name : NULL;
		if (ps->t[i].thunk && ps->t[i].x)   /* by its slot and the clone there */
			snprintf(n->name, sizeof(n->name), "%s%016" PRIx64 "_%016" PRIx64,
				 BIN_XCALL_PREFIX, ps->t[i].call->got, ps->t[i].x->dest);
		else if (ps->t[i].thunk)  /* named by its clone, in new code */
			snprintf(n->name, sizeof(n->name), "__icpp_bindto_%016" PRIx64,
				 ps->t[i].target);
		else if (ps->t[i].func && fname)
			snprintf(n->name, sizeof(n->name), "__icpp_%s_%s",
				 ps->t[i].bytes ? "entry" : "dispatch", fname);
		else if (ps->t[i].func)     /* no name: its address, as clones' copies */
			snprintf(n->name, sizeof(n->name), "__icpp_%s_0x%" PRIx64,
				 ps->t[i].bytes ? "entry" : "dispatch", ps->t[i].func);
		else if (ps->t[i].site < text_vaddr)
			snprintf(n->name, sizeof(n->name), "__icpp_%s_%" PRIx64,
				 stub_kind(&ps->t[i]), ps->t[i].site);
		else    /* a copy's, in new code: as long in both passes (final_code) */
			snprintf(n->name, sizeof(n->name), "__icpp_%s_%016" PRIx64,
				 stub_kind(&ps->t[i]), ps->t[i].site);
		n->addr = ps->t[i].addr;
		n->size = ps->t[i].size;
	}
	qsort(ps->patches.v, ps->patches.n, sizeof(*ps->patches.v), cmp_patch);
	for (uint32_t i = 1; i < ps->patches.n; i++)
		if (ps->patches.v[i].at < ps->patches.v[i - 1].at + ps->patches.v[i - 1].len) {
			errmsg(err, errlen, "two changes of the plan overlap at 0x%" PRIx64,
				ps->patches.v[i].at);
			return -1;
		}
	return 0;
oom:
	errmsg(err, errlen, "out of memory applying the plan");
	return -1;
}

/* The FDEs of the trampolines and entry code into nf (a stub's is a copy of
 * its caller's, among the clone FDEs); their number. */
static uint32_t new_fdes(const struct plan_state *ps, struct eh_newfde *nf)
{
	uint32_t n = 0;
	for (uint32_t i = 0; i < ps->nt; i++)
		if (!ps->t[i].stub)
			nf[n++] = (struct eh_newfde){ps->t[i].addr, ps->t[i].size, ps->t[i].rows,
						     ps->t[i].nrows};
	return n;
}

/* Does the plan pad a function through an entry wrapper? */
static bool entry_pads(const struct rw_binary *b, const struct rw_plan *p)
{
	for (uint32_t i = 0; i < p->npads; i++)
		if (rw_pad_by_entry(&b->funcs[rw_func_index(b, p->pads[i].addr)], p->pads[i].bytes))
			return true;
	return false;
}

/* Build-id: SHA-1 of the input, the plan, its heat and the rewriter's
 * version (rewriter.h section 2). */
static void new_build_id(const struct rw_binary *b, const struct rw_plan *p, const char *plan,
			 uint8_t id[20])
{
	struct rw_sha1 s;
	size_t size;
	const char *img = elf_rawfile(b->elf, &size);
	rw_sha1_init(&s);
	rw_sha1_update(&s, img, img ? size : 0);
	rw_sha1_update(&s, plan, strlen(plan));
	rw_sha1_update(&s, &p->hot_entries, sizeof(p->hot_entries));
	if (p->nheat)
		rw_sha1_update(&s, p->heat, p->nheat * sizeof(*p->heat));
	rw_sha1_update(&s, RW_VERSION, sizeof(RW_VERSION));
	rw_sha1_final(&s, id);
}

struct strtab {
	struct rbuf b;
};

static uint32_t str_add(struct strtab *t, const char *s)
{
	if (!t->b.n)
		rb_u8(&t->b, 0);
	if (!*s)
		return 0;
	uint32_t at = (uint32_t)t->b.n;
	rb_put(&t->b, s, strlen(s) + 1);
	return at;
}

/* The index of the input's executable section holding addr, or 0 (the
 * output keeps the input's sections at their indices). */
static size_t exec_section_at(Elf *elf, uint64_t addr)
{
	for (Elf_Scn *s = NULL; (s = elf_nextscn(elf, s));) {
		GElf_Shdr sh;
		if (gelf_getshdr(s, &sh) && (sh.sh_flags & SHF_EXECINSTR) &&
		    sh.sh_type == SHT_PROGBITS && addr >= sh.sh_addr &&
		    addr - sh.sh_addr < sh.sh_size)
			return elf_ndxscn(s);
	}
	return 0;
}

/* Local FUNC symbols for the functions that only the stripped input's
 * separate debug file names (binary.h: FDE bounds, its name): the output's
 * new build-id finds no debug file, so gdb, perf and training of the output
 * name them by these.  Their number. */
static uint32_t add_debug_names(const struct rw_binary *b, struct rbuf *syms,
				struct strtab *names)
{
	if (!bin_debug_file(b->bin))
		return 0;
	size_t nf, ndx;
	const struct bin_function *f = bin_functions(b->bin, &nf);
	uint32_t n = 0;
	for (size_t i = 0; i < nf; i++) {
		if (!f[i].from_fde || !f[i].name || !(ndx = exec_section_at(b->elf, f[i].addr)))
			continue;
		Elf64_Sym s = {.st_name = str_add(names, f[i].name),
			       .st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC),
			       .st_shndx = (uint16_t)ndx, .st_value = f[i].addr,
			       .st_size = f[i].size};
		rb_put(syms, &s, sizeof(s));
		n++;
	}
	return n;
}

/* Adds the trampoline symbols; *tsec and *tfirst say where they are (their
 * values are fixed up once the trampolines have their final address). */
static int build_symtab(struct rw_binary *b, struct out *o, size_t symtab, size_t text_idx,
			const struct plan_state *ps, size_t *new_strtab, size_t *tsec, size_t *tfirst,
			char *err, size_t errlen)
{
	/* trampoline and clone symbols */
	size_t nt = ps->nsyms;
	GElf_Sym *ts = calloc(nt ? nt : 1, sizeof(*ts));
	struct strtab names = {0};
	if (!ts)
		goto oom;
	if (symtab == SIZE_MAX) {
		/* stripped: a new .symtab from the trampolines, the names of a
		 * debug file and .dynsym */
		Elf_Scn *dscn = NULL;
		GElf_Shdr dsh;
		for (Elf_Scn *s = NULL; (s = elf_nextscn(b->elf, s));)
			if (gelf_getshdr(s, &dsh) && dsh.sh_type == SHT_DYNSYM) {
				dscn = s;
				break;
			}
		Elf_Data *dd = dscn ? elf_getdata(dscn, NULL) : NULL;
		size_t dn = dd ? dsh.sh_size / sizeof(Elf64_Sym) : 0;
		struct rbuf syms = {0};
		Elf64_Sym null = {0};
		rb_put(&syms, &null, sizeof(null));
		str_add(&names, "");
		for (size_t i = 0; i < nt; i++) {
			Elf64_Sym s = {.st_name = str_add(&names, ps->syms[i].name),
				       .st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC),
				       .st_shndx = (uint16_t)text_idx,
				       .st_value = ps->syms[i].addr,
				       .st_size = ps->syms[i].size};
			rb_put(&syms, &s, sizeof(s));
		}
		uint32_t nlocal = 1 + (uint32_t)nt + add_debug_names(b, &syms, &names);
		for (size_t i = 1; i < dn; i++) {
			GElf_Sym g;
			if (!gelf_getsym(dd, (int)i, &g) || g.st_shndx == SHN_UNDEF)
				continue;
			const char *n = elf_strptr(b->elf, dsh.sh_link, g.st_name);
			Elf64_Sym s = {.st_name = str_add(&names, n ? n : ""), .st_info = g.st_info,
				       .st_other = g.st_other, .st_shndx = g.st_shndx,
				       .st_value = g.st_value, .st_size = g.st_size};
			rb_put(&syms, &s, sizeof(s));
		}
		if (syms.oom || names.b.oom) {
			rb_free(&syms);
			goto oom;
		}
		if (!sec_add(o) || !sec_add(o)) {
			rb_free(&syms);
			goto oom;
		}
		struct osec *st = &o->s[o->n - 2], *str = &o->s[o->n - 1];
		*new_strtab = o->n - 1;
		*tsec = o->n - 2;
		*tfirst = 1;
		st->name = ".symtab";
		st->sh = (GElf_Shdr){.sh_type = SHT_SYMTAB, .sh_size = syms.n,
				     .sh_link = (GElf_Word)(o->n - 1), .sh_info = nlocal,
				     .sh_addralign = 8, .sh_entsize = sizeof(Elf64_Sym)};
		st->data = st->owned = syms.p;
		st->size = syms.n;
		str->name = ".strtab";
		str->sh = (GElf_Shdr){.sh_type = SHT_STRTAB, .sh_size = names.b.n, .sh_addralign = 1};
		str->data = str->owned = names.b.p;
		str->size = names.b.n;
		free(ts);
		return 0;
	}
	/* insert the trampoline symbols as locals before the first global */
	struct osec *st = &o->s[symtab];
	struct osec *str = &o->s[st->sh.sh_link];
	size_t n = st->size / sizeof(Elf64_Sym), first_global = st->sh.sh_info;
	if (first_global > n)
		first_global = n;
	rb_put(&names.b, str->data, str->size);
	uint8_t *sym = malloc((n + nt) * sizeof(Elf64_Sym) + 1);
	if (!sym)
		goto oom;
	memcpy(sym, st->data, first_global * sizeof(Elf64_Sym));
	for (size_t i = 0; i < nt; i++) {
		uint32_t at = (uint32_t)names.b.n;
		rb_put(&names.b, ps->syms[i].name, strlen(ps->syms[i].name) + 1);
		Elf64_Sym s = {.st_name = at, .st_info = ELF64_ST_INFO(STB_LOCAL, STT_FUNC),
			       .st_shndx = (uint16_t)text_idx, .st_value = ps->syms[i].addr,
			       .st_size = ps->syms[i].size};
		memcpy(sym + (first_global + i) * sizeof(Elf64_Sym), &s, sizeof(s));
	}
	memcpy(sym + (first_global + nt) * sizeof(Elf64_Sym),
	       (const uint8_t *)st->data + first_global * sizeof(Elf64_Sym),
	       (n - first_global) * sizeof(Elf64_Sym));
	if (names.b.oom) {
		free(sym);
		goto oom;
	}
	free(st->owned);
	st->data = st->owned = sym;
	st->size = st->sh.sh_size = (n + nt) * sizeof(Elf64_Sym);
	st->sh.sh_info = (GElf_Word)(first_global + nt);
	free(str->owned);
	str->data = str->owned = names.b.p;
	str->size = str->sh.sh_size = names.b.n;
	*new_strtab = st->sh.sh_link;
	*tsec = symtab;
	*tfirst = first_global;
	free(ts);
	return 0;
oom:
	free(ts);
	rb_free(&names.b);
	errmsg(err, errlen, "out of memory writing the symbol table");
	return -1;
}

/* rw_write's state, from the input's layout to the written file.  The new
 * sections are sized in a first pass at a provisional address, placed,
 * then made again at their real addresses (apply_plan, eh_build). */
struct writer {
	struct rw_binary *b;
	const struct rw_plan *p;
	const char *outpath;
	struct rw_write_stats *st;
	char *err;
	size_t errlen;
	struct plan_state ps;
	struct out o;
	struct rbuf frame, hdr, notes, desc;
	struct strtab shstr;
	char *plan_text;
	GElf_Phdr *ph;
	/* the input */
	size_t phnum;
	uint64_t load_end, vmax, bias;  /* end of the loaded file part, of the
	                                 * address space (page-aligned); vaddr - offset */
	size_t symtab, buildid;         /* section indices, SIZE_MAX: none */
	GElf_Word eh_type;
	/* the new sections */
	size_t nold;                    /* sections copied */
	bool text;                      /* an .icpp.text (trampolines, clones) */
	uint64_t hot_room;              /* its hot code's (plan_state.hot_room) */
	size_t text_idx, frame_idx, hdr_idx, note_idx, gnu_note_idx;
	size_t strtab_idx, tsec, tfirst;        /* build_symtab's */
	size_t text_size, frame_size, hdr_size;
	uint8_t id[20];
	uint32_t idlen;
	bool add_buildid;
	size_t nphdr, phsize;
	/* the output's layout */
	uint64_t shoff, x1, v1, x2, v2; /* .icpp.text's segment, the R segment */
	uint64_t frame_off, hdr_off, frame_va, hdr_va, note_off, ph_off, end;
	size_t icpp_note_size;
};

static int w_oom(struct writer *w)
{
	return errmsg(w->err, w->errlen, "out of memory writing %s", w->outpath);
}

/* Where the input's loaded part ends, in the file and in memory. */
static void input_layout(struct writer *w)
{
	elf_getphdrnum(w->b->elf, &w->phnum);
	bool have_bias = false;
	for (size_t i = 0; i < w->phnum; i++) {
		GElf_Phdr h;
		gelf_getphdr(w->b->elf, (int)i, &h);
		if (h.p_type != PT_LOAD)
			continue;
		if (!have_bias) {
			w->bias = h.p_vaddr - h.p_offset;
			have_bias = true;
		}
		if (h.p_offset + h.p_filesz > w->load_end)
			w->load_end = h.p_offset + h.p_filesz;
		if (h.p_vaddr + h.p_memsz > w->vmax)
			w->vmax = h.p_vaddr + h.p_memsz;
	}
	w->vmax = align_up(w->vmax, PAGE);
}

/* The input's sections, as they are; the old unwind tables renamed (new
 * ones replace them). */
static int copy_sections(struct writer *w)
{
	struct rw_binary *b = w->b;
	struct out *o = &w->o;
	sec_add(o);                                    /* index 0 */
	w->symtab = w->buildid = SIZE_MAX;
	for (size_t i = 1; i < b->shnum; i++) {
		Elf_Scn *scn = elf_getscn(b->elf, i);
		struct osec *s = sec_add(o);
		if (!s || !gelf_getshdr(scn, &s->sh))
			return w_oom(w);
		s->name = elf_strptr(b->elf, b->shstrndx, s->sh.sh_name);
		if (!s->name)
			s->name = "";
		if (s->sh.sh_type != SHT_NOBITS) {
			Elf_Data *d = elf_rawdata(scn, NULL);
			s->data = d ? d->d_buf : NULL;
			s->size = d ? d->d_size : 0;
		}
		if (s->sh.sh_type == SHT_SYMTAB)
			w->symtab = i;
		if (s->sh.sh_type == SHT_NOTE && !strcmp(s->name, ".note.gnu.build-id"))
			w->buildid = i;
		if (s->sh.sh_type == SHT_SYMTAB_SHNDX)
			return errmsg(w->err, w->errlen, "%s: extended section indices are not supported",
				      b->path);
	}
	o->s[b->eh_scn].name = ".icpp.old.eh_frame";
	o->s[b->hdr_scn].name = ".icpp.old.eh_frame_hdr";
	w->eh_type = o->s[b->eh_scn].sh.sh_type;
	o->s[b->eh_scn].sh.sh_type = SHT_PROGBITS;
	o->s[b->hdr_scn].sh.sh_type = SHT_PROGBITS;
	w->nold = o->n;
	return 0;
}

/* The trampolines, clones and unwind tables for code at text_vaddr, the
 * tables at frame_va and hdr_va (0: both on the page after the code, as a
 * guess for the first pass). */
static int make_code(struct writer *w, uint64_t text_vaddr, uint64_t frame_va, uint64_t hdr_va)
{
	if (apply_plan(w->b, w->p, w->id, text_vaddr, w->hot_room, &w->ps, w->err, w->errlen))
		return -1;
	if (!frame_va)
		frame_va = hdr_va = align_up(text_vaddr + w->ps.text.n, PAGE);
	struct eh_newfde *nf = calloc(w->ps.nt ? w->ps.nt : 1, sizeof(*nf));
	if (!nf)
		return w_oom(w);
	uint32_t nnf = new_fdes(&w->ps, nf);
	rb_free(&w->frame);
	rb_free(&w->hdr);
	int r = eh_build(&w->b->eh, w->ps.fedits, w->ps.nfedits, w->ps.cfdes, w->ps.ncfdes, nf, nnf,
			 frame_va, hdr_va, &w->frame, &w->hdr, w->err, w->errlen);
	free(nf);
	return r ? -1 : 0;
}

/* The first pass: the new sections' sizes (they do not depend on the
 * address), the new build-id, how many program headers. */
static int size_new_sections(struct writer *w)
{
	w->text = w->p->nwraps > 0 || w->p->nclones > 0 || w->p->ntags > 0 || w->p->nxcalls > 0 ||
		  entry_pads(w->b, w->p);
	w->text_idx = w->text ? w->nold : SIZE_MAX;
	w->frame_idx = w->nold + w->text;
	w->hdr_idx = w->frame_idx + 1;
	w->note_idx = w->hdr_idx + 1;
	/* the tables apart from the code: an FDE's pc-relative pointer to a
	 * clone must not land on its own field (null to libgcc, refused) */
	new_build_id(w->b, w->p, w->plan_text, w->id);      /* the markers name it */
	/* the hot code's room: its size, the same wherever the cold code goes */
	w->hot_room = 0;
	if (w->p->hot_entries) {
		if (apply_plan(w->b, w->p, w->id, w->vmax, HOT_MEASURE_ROOM, &w->ps, w->err, w->errlen))
			return -1;
		if (w->ps.cold.n)
			w->hot_room = align_up(w->ps.hot_size, 64);
	}
	if (make_code(w, w->vmax, 0, 0) < 0)
		return -1;
	w->text_size = w->ps.text.n;
	w->frame_size = w->frame.n;
	w->hdr_size = w->hdr.n;
	/* notes: icpp (+ a GNU build-id when the input has none) */
	w->add_buildid = w->buildid == SIZE_MAX;
	w->nphdr = w->phnum + 1 + w->text + 1;  /* R load, RX load, PT_NOTE */
	w->phsize = w->nphdr * sizeof(Elf64_Phdr);
	return 0;
}

static struct osec *new_section(struct out *o, const char *name, GElf_Shdr sh)
{
	struct osec *s = sec_add(o);
	if (s) {
		s->name = name;
		s->sh = sh;
	}
	return s;
}

/* .icpp.text, .eh_frame, .eh_frame_hdr, .note.icpp take their indices
 * first (size_new_sections named them), then a GNU build-id note, then the
 * symbols (build_symtab: it may add .symtab and .strtab to a stripped
 * input). */
static int add_sections(struct writer *w)
{
	struct out *o = &w->o;
	if (w->text && !new_section(o, ".icpp.text",
				    (GElf_Shdr){.sh_type = SHT_PROGBITS,
						.sh_flags = SHF_ALLOC | SHF_EXECINSTR, .sh_addralign = 16}))
		return w_oom(w);
	if (!new_section(o, ".eh_frame", (GElf_Shdr){.sh_type = w->eh_type, .sh_flags = SHF_ALLOC,
						     .sh_addralign = 8}) ||
	    !new_section(o, ".eh_frame_hdr", (GElf_Shdr){.sh_type = SHT_PROGBITS,
							 .sh_flags = SHF_ALLOC, .sh_addralign = 4}) ||
	    !new_section(o, ".note.icpp", (GElf_Shdr){.sh_type = SHT_NOTE, .sh_flags = SHF_ALLOC,
						      .sh_addralign = 4}))
		return w_oom(w);
	w->gnu_note_idx = SIZE_MAX;
	if (w->add_buildid) {
		if (!new_section(o, ".note.gnu.build-id",
				 (GElf_Shdr){.sh_type = SHT_NOTE, .sh_flags = SHF_ALLOC, .sh_addralign = 4}))
			return w_oom(w);
		w->gnu_note_idx = o->n - 1;
	}
	w->strtab_idx = w->tsec = SIZE_MAX;
	w->tfirst = 0;
	if ((w->text || w->symtab != SIZE_MAX) &&
	    build_symtab(w->b, o, w->symtab, w->text_idx, &w->ps, &w->strtab_idx, &w->tsec, &w->tfirst,
			 w->err, w->errlen))
		return -1;
	return 0;
}

/* .shstrtab: every name again. */
static int name_sections(struct writer *w)
{
	struct out *o = &w->o;
	size_t shstrndx = w->b->shstrndx;
	for (size_t i = 1; i < o->n; i++)
		o->s[i].sh.sh_name = str_add(&w->shstr, o->s[i].name);
	o->s[shstrndx].sh.sh_name = str_add(&w->shstr, ".shstrtab");
	if (w->shstr.b.oom)
		return w_oom(w);
	free(o->s[shstrndx].owned);
	o->s[shstrndx].data = o->s[shstrndx].owned = w->shstr.b.p;
	o->s[shstrndx].size = o->s[shstrndx].sh.sh_size = w->shstr.b.n;
	w->shstr.b = (struct rbuf){0};
	return 0;
}

/* The sections not loaded go after the loaded part, in their order of
 * before (a new .symtab and .strtab last), then the section headers. */
static int place_unloaded(struct writer *w)
{
	struct out *o = &w->o;
	struct {
		size_t idx;
		uint64_t off;
	} *order = malloc((o->n + 8) * sizeof(*order));
	if (!order)
		return w_oom(w);
	size_t nord = 0;
	for (size_t i = 1; i < w->nold; i++)
		if (!(o->s[i].sh.sh_flags & SHF_ALLOC) && o->s[i].sh.sh_type != SHT_NOBITS)
			order[nord++].idx = i, order[nord - 1].off = o->s[i].sh.sh_offset;
	for (size_t i = 1; i < nord; i++)
		for (size_t j = i; j > 0 && order[j].off < order[j - 1].off; j--) {
			__typeof__(*order) t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	if (w->symtab == SIZE_MAX && w->text)
		for (size_t i = o->n - 2; i < o->n; i++)
			order[nord++] = (__typeof__(*order)){i, UINT64_MAX};
	uint64_t off = w->load_end;
	for (size_t k = 0; k < nord; k++) {
		struct osec *s = &o->s[order[k].idx];
		off = align_up(off, s->sh.sh_addralign ? s->sh.sh_addralign : 1);
		s->sh.sh_offset = off;
		s->sh.sh_size = s->size;
		off += s->size;
	}
	free(order);
	w->shoff = align_up(off, 8);
	return 0;
}

/* The new segments after the section headers: .icpp.text's (RX), then
 * one (R) for the unwind tables, the notes and the program headers. */
static void place_segments(struct writer *w)
{
	uint64_t off = w->shoff + w->o.n * sizeof(Elf64_Shdr);
	w->x1 = align_up(off, PAGE);
	if (w->bias + w->x1 < w->vmax) {
		uint64_t gap = w->vmax - (w->bias + w->x1);
		if (gap <= MAX_PAD_FILE)
			w->x1 += gap;                    /* consistent: vaddr = bias + offset */
		else
			w->st->phdr_compact = true;
	}
	w->v1 = w->st->phdr_compact ? w->vmax : w->bias + w->x1;
	w->x2 = w->text ? align_up(w->x1 + w->text_size, PAGE) : w->x1;
	w->v2 = w->v1 + (w->x2 - w->x1);
	w->frame_off = w->x2;
	w->hdr_off = align_up(w->frame_off + w->frame_size, 4);
	w->frame_va = w->v2;
	w->hdr_va = w->v2 + (w->hdr_off - w->x2);
}

/* The second pass: code and unwind tables at their real addresses, the
 * same sizes; the new symbols' values. */
static int final_code(struct writer *w)
{
	if (make_code(w, w->v1, w->frame_va, w->hdr_va) < 0)
		return -1;
	if (w->frame.n != w->frame_size || w->hdr.n != w->hdr_size || w->ps.text.n != w->text_size)
		return errmsg(w->err, w->errlen, "internal error: new sections changed size between passes");
	if (w->tsec != SIZE_MAX && w->ps.nsyms) {
		Elf64_Sym *sy = own_copy(&w->o.s[w->tsec]);
		char *names = own_copy(&w->o.s[w->strtab_idx]);
		if (!sy || !names)
			return w_oom(w);
		for (uint32_t i = 0; i < w->ps.nsyms; i++) {
			/* a name with an address in new code (a copy's stub or
			 * trampoline: training finds a stub's caller by it) was
			 * written by the first pass */
			const char *name = w->ps.syms[i].name;
			size_t len = strlen(name), at = sy[w->tfirst + i].st_name;
			if (at + len >= w->o.s[w->strtab_idx].size || strlen(names + at) != len)
				return errmsg(w->err, w->errlen, "internal error: symbol %s changed between "
					      "passes", name);
			memcpy(names + at, name, len);
			sy[w->tfirst + i].st_value = w->ps.syms[i].addr;
		}
	}
	return 0;
}

static void put_section(struct osec *s, uint64_t addr, uint64_t off, const void *data, size_t size)
{
	s->sh.sh_addr = addr;
	s->sh.sh_offset = off;
	s->data = data;
	s->size = s->sh.sh_size = size;
}

/* The notes (icpp's, a GNU build-id where the input had none, else the
 * new id in its note), the program headers' place, and the new sections
 * filled in. */
static int make_notes(struct writer *w)
{
	const uint8_t *orig_id;
	size_t orig_len = bin_build_id(w->b->bin, &orig_id);
	w->note_off = align_up(w->hdr_off + w->hdr_size, 4);
	icpp_desc(&w->desc, orig_id, (uint32_t)orig_len, w->ps.t, w->ps.nt, w->ps.clones, w->p->nclones,
		  w->plan_text);
	note_put(&w->notes, "icpp", NT_ICPP_REWRITE, w->desc.p, (uint32_t)w->desc.n);
	w->icpp_note_size = w->notes.n;
	w->idlen = 20;
	if (w->add_buildid)
		note_put(&w->notes, "GNU", NT_GNU_BUILD_ID, w->id, 20);
	if (w->notes.oom || w->desc.oom)
		return w_oom(w);
	w->ph_off = align_up(w->note_off + w->notes.n, 8);
	w->end = w->ph_off + w->phsize;
	struct osec *S = w->o.s;
	if (w->text)
		put_section(&S[w->text_idx], w->v1, w->x1, w->ps.text.p, w->text_size);
	put_section(&S[w->frame_idx], w->frame_va, w->frame_off, w->frame.p, w->frame.n);
	put_section(&S[w->hdr_idx], w->hdr_va, w->hdr_off, w->hdr.p, w->hdr.n);
	uint64_t note_va = w->v2 + (w->note_off - w->x2);
	put_section(&S[w->note_idx], note_va, w->note_off, w->notes.p, w->icpp_note_size);
	if (w->add_buildid) {
		put_section(&S[w->gnu_note_idx], note_va + w->icpp_note_size,
			    w->note_off + w->icpp_note_size, w->notes.p + w->icpp_note_size,
			    w->notes.n - w->icpp_note_size);
		return 0;
	}
	uint8_t *bd = own_copy(&S[w->buildid]);
	if (!bd)
		return w_oom(w);
	if (!replace_build_id(bd, S[w->buildid].size, w->id, &w->idlen))
		return errmsg(w->err, w->errlen, "%s: its .note.gnu.build-id has no GNU build-id note",
			      w->b->path);
	return 0;
}

/* The code patches, each into the copied section that holds it. */
static int apply_patches(struct writer *w)
{
	for (uint32_t i = 0; i < w->ps.patches.n; i++) {
		const struct patch *pt = &w->ps.patches.v[i];
		bool done = false;
		for (size_t s = 1; s < w->nold && !done; s++) {
			struct osec *sec = &w->o.s[s];
			if (!(sec->sh.sh_flags & SHF_ALLOC) || sec->sh.sh_type == SHT_NOBITS ||
			    pt->at < sec->sh.sh_addr || pt->at + pt->len > sec->sh.sh_addr + sec->size)
				continue;
			uint8_t *d = own_copy(sec);
			if (!d)
				return w_oom(w);
			memcpy(d + (pt->at - sec->sh.sh_addr), pt->bytes, pt->len);
			done = true;
		}
		if (!done)
			return errmsg(w->err, w->errlen, "internal error: no section holds 0x%" PRIx64, pt->at);
		w->st->patched_bytes += pt->len;
	}
	return 0;
}

/* Does code read a GOT slot of the output before the first call through it:
 * a bound call's check, a check of another module's call, or another
 * module's check of a forwarder's slot here, to this module's function or
 * another's (rewriter.h section 1)? */
static bool reads_slots(const struct writer *w)
{
	if (w->ps.nbound || w->p->nxcalls || w->p->nmarks)
		return true;
	for (uint32_t k = 0; k < w->p->nclones; k++)
		if (w->p->clones[k].xcall_from)
			return true;
	return false;
}

/* A bound call's stub reads its GOT slot, which lazy binding fills only at
 * the first call through it: the output binds at load time (rewriter.h
 * section 1, Bound calls), by the flag rw_open found room for. */
static int bind_now(struct writer *w)
{
	const struct rw_binary *b = w->b;
	if (!reads_slots(w) || b->bind_now == RW_BIND_NOW_ALREADY)
		return 0;
	for (size_t i = 1; i < w->nold; i++) {
		struct osec *sec = &w->o.s[i];
		if (sec->sh.sh_type != SHT_DYNAMIC || sec->sh.sh_entsize != sizeof(Elf64_Dyn) ||
		    (b->bind_now_at + 1) * sizeof(Elf64_Dyn) > sec->size)
			continue;
		Elf64_Dyn *d = own_copy(sec);
		if (!d)
			return w_oom(w);
		d += b->bind_now_at;
		if (b->bind_now == RW_BIND_NOW_SPARE)
			*d = (Elf64_Dyn){.d_tag = DT_FLAGS, .d_un.d_val = DF_BIND_NOW};
		else
			d->d_un.d_val |= b->bind_now == RW_BIND_NOW_FLAGS ? DF_BIND_NOW : DF_1_NOW;
		w->st->bind_now = true;
		return 0;
	}
	return errmsg(w->err, w->errlen, "internal error: %s has no .dynamic to bind at load time",
		      b->path);
}

/* The input's program headers (PT_PHDR and PT_GNU_EH_FRAME moved to the
 * new tables), the new loads after its last load, and a PT_NOTE. */
static int program_headers(struct writer *w)
{
	w->ph = calloc(w->nphdr, sizeof(*w->ph));
	if (!w->ph)
		return w_oom(w);
	size_t k = 0, last_load = 0;
	for (size_t i = 0; i < w->phnum; i++) {
		GElf_Phdr h;
		gelf_getphdr(w->b->elf, (int)i, &h);
		if (h.p_type == PT_LOAD)
			last_load = i;
	}
	for (size_t i = 0; i < w->phnum; i++) {
		GElf_Phdr h;
		gelf_getphdr(w->b->elf, (int)i, &h);
		if (h.p_type == PT_PHDR) {
			h.p_offset = w->ph_off;
			h.p_vaddr = h.p_paddr = w->v2 + (w->ph_off - w->x2);
			h.p_filesz = h.p_memsz = w->phsize;
		} else if (h.p_type == PT_GNU_EH_FRAME) {
			h.p_offset = w->hdr_off;
			h.p_vaddr = h.p_paddr = w->hdr_va;
			h.p_filesz = h.p_memsz = w->hdr_size;
		}
		w->ph[k++] = h;
		if (i != last_load)
			continue;
		if (w->text)
			w->ph[k++] = (GElf_Phdr){.p_type = PT_LOAD, .p_flags = PF_R | PF_X,
						 .p_offset = w->x1, .p_vaddr = w->v1, .p_paddr = w->v1,
						 .p_filesz = w->text_size, .p_memsz = w->text_size,
						 .p_align = PAGE};
		w->ph[k++] = (GElf_Phdr){.p_type = PT_LOAD, .p_flags = PF_R, .p_offset = w->x2,
					 .p_vaddr = w->v2, .p_paddr = w->v2, .p_filesz = w->end - w->x2,
					 .p_memsz = w->end - w->x2, .p_align = PAGE};
	}
	uint64_t note_va = w->o.s[w->note_idx].sh.sh_addr;
	w->ph[k++] = (GElf_Phdr){.p_type = PT_NOTE, .p_flags = PF_R, .p_offset = w->note_off,
				 .p_vaddr = note_va, .p_paddr = note_va, .p_filesz = w->notes.n,
				 .p_memsz = w->notes.n, .p_align = 4};
	return 0;
}

/* The ELF image through libelf, laid out as placed (ELF_F_LAYOUT). */
static int write_image(struct writer *w, int fd)
{
	Elf *e = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!e || !gelf_newehdr(e, ELFCLASS64))
		goto elferr;
	GElf_Ehdr eh = w->b->ehdr;
	eh.e_phoff = w->ph_off;
	eh.e_phnum = (GElf_Half)w->nphdr;
	eh.e_shoff = w->shoff;
	eh.e_shnum = (GElf_Half)w->o.n;
	eh.e_shstrndx = (GElf_Half)w->b->shstrndx;
	if (!gelf_update_ehdr(e, &eh) || !gelf_newphdr(e, w->nphdr))
		goto elferr;
	for (size_t i = 0; i < w->nphdr; i++)
		if (!gelf_update_phdr(e, (int)i, &w->ph[i]))
			goto elferr;
	for (size_t i = 1; i < w->o.n; i++) {
		struct osec *s = &w->o.s[i];
		Elf_Scn *scn = elf_newscn(e);
		Elf_Data *d = scn ? elf_newdata(scn) : NULL;
		if (!d)
			goto elferr;
		d->d_type = ELF_T_BYTE;
		d->d_align = 1;
		d->d_off = 0;
		d->d_version = EV_CURRENT;
		if (s->sh.sh_type == SHT_NOBITS) {
			d->d_buf = NULL;
			d->d_size = s->sh.sh_size;
		} else {
			d->d_buf = (void *)s->data;
			d->d_size = s->size;
			s->sh.sh_size = s->size;
		}
		if (!gelf_update_shdr(scn, &s->sh))
			goto elferr;
	}
	elf_flagelf(e, ELF_C_SET, ELF_F_LAYOUT);
	elf_flagphdr(e, ELF_C_SET, ELF_F_DIRTY);
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto elferr;
	elf_end(e);
	return 0;
elferr:
	errmsg(w->err, w->errlen, "cannot write %s: %s", w->outpath, elf_errmsg(-1));
	if (e)
		elf_end(e);
	return -1;
}

/* The output, atomically, with the input's mode. */
static int write_file(struct writer *w)
{
	struct stat sb;
	if (fstat(w->b->fd, &sb) < 0)
		return errmsg(w->err, w->errlen, "cannot stat %s: %s", w->b->path, strerror(errno));
	struct atomic_file af;
	if (af_open(&af, w->outpath, sb.st_mode & 0777, w->err, w->errlen) < 0)
		return -1;
	if (fchmod(fileno(af.f), sb.st_mode & 0777) < 0) {
		errmsg(w->err, w->errlen, "cannot set the mode of %s: %s", af.tmp, strerror(errno));
		af_abort(&af);
		return -1;
	}
	if (write_image(w, fileno(af.f)) < 0) {
		af_abort(&af);
		return -1;
	}
	return af_commit(&af, w->err, w->errlen);
}

static void fill_stats(struct writer *w)
{
	struct rw_write_stats *st = w->st;
	const struct rw_plan *p = w->p;
	st->pads = p->npads;
	st->entry_pads = 0;
	for (uint32_t i = 0; i < w->ps.nt; i++)
		st->entry_pads += w->ps.t[i].func != 0 && w->ps.t[i].bytes;
	st->wraps = p->nwraps;
	st->tags = p->ntags;
	st->xcalls = p->nxcalls;
	st->marks = w->ps.nmarks;
	st->clones = p->nclones;
	st->dispatched = st->chains = st->tails = 0;
	st->bound = w->ps.nbound;
	st->promoted = w->ps.npromoted;
	st->tail_promoted = w->ps.ntail_promoted;
	for (uint32_t k = 0; k < p->nclones; k++) {
		st->chains += p->clones[k].parent != RW_NONE;
		st->tails += p->clones[k].tail;
		st->dispatched += rw_plan_dispatched(w->b, &p->clones[k]);
	}
	size_t insize;
	elf_rawfile(w->b->elf, &insize);
	st->in_size = insize;
	st->out_size = w->end;
	st->tramp_bytes = w->text_size;
	st->hot_bytes = w->hot_room ? w->ps.hot_size : 0;
	st->new_vaddr = w->v1;
	memcpy(st->build_id, w->id, 20);
	st->build_id_len = w->idlen < 20 ? w->idlen : 20;
}

static void writer_free(struct writer *w)
{
	cs_close(&w->ps.cs);
	for (size_t i = 0; i < w->o.n; i++)
		free(w->o.s[i].owned);
	free(w->o.s);
	free(w->ph);
	plan_state_free(&w->ps);
	rb_free(&w->frame);
	rb_free(&w->hdr);
	rb_free(&w->notes);
	rb_free(&w->desc);
	rb_free(&w->shstr.b);
	free(w->plan_text);
}

int rw_write(struct rw_binary *b, const struct rw_plan *p, const char *outpath,
	     struct rw_write_stats *st, char *err, size_t errlen)
{
	memset(st, 0, sizeof(*st));
	if (rw_plan_check(b, p, err, errlen))
		return -1;
	struct writer w = {.b = b, .p = p, .outpath = outpath, .st = st, .err = err,
			   .errlen = errlen};
	if (!x86_open(&w.ps.cs))
		return errmsg(err, errlen, "cannot start the disassembler");
	int ret = -1;
	w.plan_text = rw_plan_format(p, NULL);
	if (!w.plan_text) {
		w_oom(&w);
		goto out;
	}
	input_layout(&w);
	if (copy_sections(&w) < 0 || size_new_sections(&w) < 0 || add_sections(&w) < 0 ||
	    name_sections(&w) < 0 || place_unloaded(&w) < 0)
		goto out;
	place_segments(&w);
	if (final_code(&w) < 0 || make_notes(&w) < 0 || apply_patches(&w) < 0 || bind_now(&w) < 0 ||
	    program_headers(&w) < 0 || write_file(&w) < 0)
		goto out;
	fill_stats(&w);
	ret = 0;
out:
	writer_free(&w);
	return ret;
}
