/* ehframe.c: .eh_frame as the rewriter needs it -- entries with the places
 * of their pointers, LSDA call-site tables, CFA programs re-encoded for
 * no-frame-pointer padding, and the merged .eh_frame + sorted .eh_frame_hdr
 * of the output.  libdw reads CFI but writes none, hence this file. */
#include <dwarf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/internal.h"

/* ------------------------------------------------------------------ buffers */

static void rb_grow(struct rbuf *b, size_t need)
{
	if (b->oom || b->n + need <= b->cap)
		return;
	size_t cap = b->cap ? b->cap : 256;
	while (cap < b->n + need)
		cap *= 2;
	uint8_t *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return;
	}
	b->p = p;
	b->cap = cap;
}

void rb_put(struct rbuf *b, const void *d, size_t n)
{
	rb_grow(b, n);
	if (b->oom)
		return;
	if (n)
		memcpy(b->p + b->n, d, n);
	b->n += n;
}

void rb_u8(struct rbuf *b, uint8_t v) { rb_put(b, &v, 1); }
void rb_u32(struct rbuf *b, uint32_t v) { rb_put(b, &v, 4); }
void rb_u64(struct rbuf *b, uint64_t v) { rb_put(b, &v, 8); }

void rb_uleb(struct rbuf *b, uint64_t v)
{
	do {
		uint8_t c = v & 0x7f;
		v >>= 7;
		rb_u8(b, c | (v ? 0x80 : 0));
	} while (v);
}

void rb_sleb(struct rbuf *b, int64_t v)
{
	for (;;) {
		uint8_t c = v & 0x7f;
		v >>= 7;
		if ((v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40))) {
			rb_u8(b, c);
			return;
		}
		rb_u8(b, c | 0x80);
	}
}

void rb_align(struct rbuf *b, size_t a, uint8_t fill)
{
	while (b->n % a)
		rb_u8(b, fill);
}

void rb_free(struct rbuf *b)
{
	free(b->p);
	*b = (struct rbuf){0};
}

/* ------------------------------------------------------------------ decoding */





/* Fixed-size encodings the rewriter can move (leb128 pointers cannot be
 * re-encoded in place). */
static bool movable_enc(int enc)
{
	if (enc == DW_EH_PE_omit)
		return true;
	int app = enc & 0x70;
	return eh_enc_size(enc) && (app == DW_EH_PE_absptr || app == DW_EH_PE_pcrel);
}

static int parse_cie(const uint8_t *base, struct eh_entry *e, char *err, size_t errlen)
{
	const uint8_t *s = base + e->off, *end = s + e->size, *p = s + 8;
	e->fde_enc = DW_EH_PE_absptr;
	e->lsda_enc = e->per_enc = DW_EH_PE_omit;
	if (p >= end)
		goto bad;
	uint8_t version = *p++;
	const char *aug = (const char *)p;
	size_t alen = strnlen(aug, (size_t)(end - p));
	if (p + alen >= end || (version != 1 && version != 3))
		goto bad;
	p += alen + 1;
	uint64_t ra;
	if (eh_uleb(&p, end, &e->code_align) || eh_sleb(&p, end, &e->data_align))
		goto bad;
	if (version == 1) {
		if (p >= end)
			goto bad;
		p++;
	} else if (eh_uleb(&p, end, &ra)) {
		goto bad;
	}
	if (aug[0] == 'z') {
		uint64_t zlen;
		if (eh_uleb(&p, end, &zlen) || zlen > (uint64_t)(end - p))
			goto bad;
		const uint8_t *zend = p + zlen;
		for (const char *a = aug + 1; *a; a++) {
			uint64_t v;
			switch (*a) {
			case 'P':
				if (p >= zend)
					goto bad;
				e->per_enc = *p++;
				e->per_field = (uint32_t)(p - s);
				if (eh_read_enc(e->per_enc & 0x7f, &p, zend, 0, &v))
					goto bad;
				break;
			case 'L':
				if (p >= zend)
					goto bad;
				e->lsda_enc = *p++;
				break;
			case 'R':
				if (p >= zend)
					goto bad;
				e->fde_enc = *p++;
				break;
			case 'S':
			case 'B':
				break;
			default:
				errmsg(err, errlen, "CIE at .eh_frame+0x%llx: augmentation \"%s\" not supported",
					(unsigned long long)e->off, aug);
				return -1;
			}
		}
		p = zend;
	} else if (aug[0]) {
		errmsg(err, errlen, "CIE at .eh_frame+0x%llx: augmentation \"%s\" not supported",
			(unsigned long long)e->off, aug);
		return -1;
	}
	if (!movable_enc(e->fde_enc) || !movable_enc(e->lsda_enc) ||
	    !movable_enc(e->per_enc == DW_EH_PE_omit ? e->per_enc : e->per_enc & 0x7f)) {
		errmsg(err, errlen, "CIE at .eh_frame+0x%llx: pointer encoding not supported",
			(unsigned long long)e->off);
		return -1;
	}
	e->insn_off = (uint32_t)(p - s);
	return 0;
bad:
	errmsg(err, errlen, "CIE at .eh_frame+0x%llx is malformed", (unsigned long long)e->off);
	return -1;
}

static int parse_fde(const uint8_t *base, uint64_t vaddr, struct eh_entry *e,
		     const struct eh_entry *cie, char *err, size_t errlen)
{
	const uint8_t *s = base + e->off, *end = s + e->size, *p = s + 8;
	e->pc_field = 8;
	if (eh_read_enc(cie->fde_enc, &p, end, vaddr + e->off + 8, &e->pc_begin))
		goto bad;
	if (eh_read_enc(cie->fde_enc & 0x0f, &p, end, 0, &e->pc_range))
		goto bad;
	/* augmentation data: present when the CIE's augmentation starts with z,
	 * which every CIE with an 'L' or 'R' has */
	const uint8_t *cs = base + cie->off + 9;
	if (*cs == 'z') {
		uint64_t zlen;
		if (eh_uleb(&p, end, &zlen) || zlen > (uint64_t)(end - p))
			goto bad;
		const uint8_t *zend = p + zlen;
		if (cie->lsda_enc != DW_EH_PE_omit && zlen) {
			e->lsda_field = (uint32_t)(p - s);
			if (eh_read_enc(cie->lsda_enc, &p, zend, vaddr + e->off + e->lsda_field, &e->lsda))
				goto bad;
		}
		p = zend;
	}
	e->insn_off = (uint32_t)(p - s);
	return 0;
bad:
	errmsg(err, errlen, "FDE at .eh_frame+0x%llx is malformed", (unsigned long long)e->off);
	return -1;
}

static const struct eh_frame *sort_eh;

static int cmp_fde_pc(const void *a, const void *b)
{
	uint64_t x = sort_eh->e[*(const uint32_t *)a].pc_begin;
	uint64_t y = sort_eh->e[*(const uint32_t *)b].pc_begin;
	return x < y ? -1 : x > y;
}

int eh_parse(const uint8_t *data, size_t size, uint64_t vaddr, struct eh_frame *eh, char *err,
	     size_t errlen)
{
	*eh = (struct eh_frame){.data = data, .size = size, .vaddr = vaddr};
	uint32_t cap = 0;
	size_t off = 0;
	while (off + 4 <= size) {
		uint32_t len;
		memcpy(&len, data + off, 4);
		if (len == 0) {
			/* the terminator: nothing may follow but zeros */
			for (size_t i = off; i < size; i++)
				if (data[i]) {
					errmsg(err, errlen, ".eh_frame has entries after its terminator");
					return -1;
				}
			off = size;
			break;
		}
		if (len == 0xffffffffu || len < 4 || len > size - off - 4) {
			errmsg(err, errlen, ".eh_frame+0x%zx: entry length not supported", off);
			return -1;
		}
		if (eh->n == cap) {
			cap = cap ? 2 * cap : 256;
			struct eh_entry *v = realloc(eh->e, cap * sizeof(*v));
			if (!v)
				goto oom;
			eh->e = v;
		}
		struct eh_entry *e = &eh->e[eh->n];
		*e = (struct eh_entry){.off = off, .size = len + 4, .cie_index = RW_NONE};
		uint32_t id;
		memcpy(&id, data + off + 4, 4);
		if (id == 0) {
			e->cie = true;
			if (parse_cie(data, e, err, errlen))
				return -1;
		} else {
			uint64_t cie_off = off + 4 - id;
			uint32_t ci = RW_NONE;
			for (uint32_t i = eh->n; i-- > 0;)
				if (eh->e[i].off == cie_off && eh->e[i].cie) {
					ci = i;
					break;
				}
			if (ci == RW_NONE) {
				errmsg(err, errlen, "FDE at .eh_frame+0x%zx names no earlier CIE", off);
				return -1;
			}
			e->cie = false;
			e->cie_index = ci;
			if (parse_fde(data, vaddr, e, &eh->e[ci], err, errlen))
				return -1;
			eh->nfde++;
		}
		eh->n++;
		off += len + 4;
	}
	eh->by_pc = malloc((eh->nfde ? eh->nfde : 1) * sizeof(*eh->by_pc));
	if (!eh->by_pc)
		goto oom;
	uint32_t k = 0;
	for (uint32_t i = 0; i < eh->n; i++)
		if (!eh->e[i].cie)
			eh->by_pc[k++] = i;
	sort_eh = eh;
	qsort(eh->by_pc, eh->nfde, sizeof(*eh->by_pc), cmp_fde_pc);
	return 0;
oom:
	errmsg(err, errlen, "out of memory reading .eh_frame");
	return -1;
}

void eh_free(struct eh_frame *eh)
{
	free(eh->e);
	free(eh->by_pc);
	*eh = (struct eh_frame){0};
}

uint32_t eh_fde_at(const struct eh_frame *eh, uint64_t pc)
{
	uint32_t lo = 0, hi = eh->nfde;
	while (lo < hi) {
		uint32_t mid = (lo + hi) / 2;
		if (eh->e[eh->by_pc[mid]].pc_begin <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the FDE starting last at or before pc; zero-length ones never match */
	for (uint32_t i = lo; i-- > 0;) {
		const struct eh_entry *e = &eh->e[eh->by_pc[i]];
		if (pc < e->pc_begin + e->pc_range)
			return eh->by_pc[i];
		if (e->pc_range)
			break;
	}
	return RW_NONE;
}

/* ------------------------------------------------------------------ LSDA */

int eh_lsda(const struct bin_module *m, uint64_t lsda, uint64_t func_start,
	    struct eh_callsite **out, uint32_t *n)
{
	*out = NULL;
	*n = 0;
	uint8_t hdr[32];
	/* Read generously: the table length is known after the header. */
	size_t avail = sizeof(hdr);
	while (avail && bin_read(m, lsda, hdr, avail) < 0)
		avail /= 2;
	if (avail < 4)
		return -1;
	const uint8_t *p = hdr, *end = hdr + avail;
	uint64_t lpstart = func_start, v;
	int lpenc = *p++;
	if (lpenc != DW_EH_PE_omit && eh_read_enc(lpenc, &p, end, lsda + (uint64_t)(p - hdr), &lpstart))
		return -1;
	if (p >= end)
		return -1;
	int ttenc = *p++;
	if (ttenc != DW_EH_PE_omit && eh_uleb(&p, end, &v))
		return -1;
	if (p >= end)
		return -1;
	int csenc = *p++;
	uint64_t cslen;
	if (eh_uleb(&p, end, &cslen) || cslen > (1u << 24))
		return -1;
	uint64_t table = lsda + (uint64_t)(p - hdr);
	uint8_t *t = malloc(cslen ? cslen : 1);
	if (!t || (cslen && bin_read(m, table, t, cslen) < 0)) {
		free(t);
		return -1;
	}
	struct eh_callsite *v_ = NULL;
	uint32_t cnt = 0, cap = 0;
	const uint8_t *q = t, *qend = t + cslen;
	while (q < qend) {
		uint64_t st, len, lp, action;
		if (eh_read_enc(csenc, &q, qend, 0, &st) || eh_read_enc(csenc, &q, qend, 0, &len) ||
		    eh_read_enc(csenc, &q, qend, 0, &lp) || eh_uleb(&q, qend, &action))
			goto bad;
		if (cnt == cap) {
			cap = cap ? 2 * cap : 16;
			struct eh_callsite *nv = realloc(v_, cap * sizeof(*nv));
			if (!nv)
				goto bad;
			v_ = nv;
		}
		v_[cnt++] = (struct eh_callsite){func_start + st, len, lp ? lpstart + lp : 0};
	}
	free(t);
	*out = v_;
	*n = cnt;
	return 0;
bad:
	free(t);
	free(v_);
	return -1;
}

/* ------------------------------------------------------------------ CFA programs */

#define EH_STACK 16

/* The operands of a CFA instruction that takes a register then an offset:
 * ULEB128 register, then a ULEB128 or (the _sf forms) SLEB128 offset. */
static int reg_offset(const uint8_t **p, const uint8_t *end, bool is_signed, uint64_t *reg,
		      int64_t *off)
{
	uint64_t u;
	if (eh_uleb(p, end, reg))
		return -1;
	if (is_signed)
		return eh_sleb(p, end, off);
	if (eh_uleb(p, end, &u))
		return -1;
	*off = (int64_t)u;
	return 0;
}

/* A walk of a CFA program (walk_cfa): it copies the program to out, adjusted
 * for padding d: the CFA offset of an rsp rule that is >= k1, and the CFA
 * offset s of a register saved at CFA - s with s > k0 (a slot in the
 * allocated area).  reg and off carry the CFA rule from one program to the
 * next (the CIE's initial program runs first, with d = 0).  With a stop, the
 * walk leaves out the advances and ends past code offset stop; with a
 * window too, it puts back those past offset `from`, from `lead` on
 * (eh_window_cfa). */
struct cfa_walk {
	const uint8_t *p, *end;
	const struct eh_entry *cie;
	int64_t k0, k1, d;
	uint64_t stop, loc;
	bool window;
	uint64_t from, lead, out_loc;   /* out_loc: where the output's rows are */
	uint64_t reg;           /* the CFA rule: reg + off (UINT64_MAX: an expression) */
	int64_t off;
	uint64_t stack_reg[EH_STACK];   /* DW_CFA_remember_state */
	int64_t stack_off[EH_STACK];
	int depth;
	struct rbuf *out;
	bool args_size;         /* a DW_CFA_GNU_args_size of a non-zero size seen */
};

enum { CFA_NEXT = 0, CFA_STOP = 1 };    /* or -1: an error */

/* The instruction at op, read up to w->p, copied unchanged. */
static int cfa_copy(struct cfa_walk *w, const uint8_t *op)
{
	if (w->p > w->end)
		return -1;
	rb_put(w->out, op, (size_t)(w->p - op));
	return CFA_NEXT;
}

/* An advance by delta code units, with a stop (and a window: an advance
 * in the output where the rows lie past `from`). */
static int cfa_at(struct cfa_walk *w, uint64_t delta)
{
	w->loc += delta * w->cie->code_align;
	if (w->loc > w->stop)
		return CFA_STOP;
	if (w->window && w->loc > w->from) {
		uint64_t at = w->lead + (w->loc - w->from), n = (at - w->out_loc) / w->cie->code_align;
		if (n > UINT32_MAX || (at - w->out_loc) % w->cie->code_align)
			return -1;
		uint32_t n32 = (uint32_t)n;
		rb_u8(w->out, DW_CFA_advance_loc4);
		rb_put(w->out, &n32, 4);        /* little-endian */
		w->out_loc = at;
	}
	return CFA_NEXT;
}

/* Does the slot of a register saved at CFA - factored * data_align move?
 * 1 and its new factored offset, 0, or -1 where no factored offset says it
 * (or the offsets are beyond any stack). */
static int cfa_moved_slot(const struct cfa_walk *w, int64_t factored, int64_t *moved)
{
	int64_t da = w->cie->data_align, slot, to;
	if (!w->d || !da)
		return 0;
	if (da == INT64_MIN || __builtin_mul_overflow(factored, -da, &slot))
		return -1;
	if (slot <= w->k0)
		return 0;
	if (__builtin_add_overflow(slot, w->d, &to) || to % (-da))
		return -1;
	*moved = to / -da;
	return 1;
}

/* The instructions with an operand in their low six bits. */
static int cfa_primary(struct cfa_walk *w, const uint8_t *op, uint8_t c)
{
	uint8_t hi = c & 0xc0;
	if (hi == DW_CFA_advance_loc && w->stop != UINT64_MAX)
		return cfa_at(w, c & 0x3f);
	if (hi != DW_CFA_offset)
		return cfa_copy(w, op);
	uint64_t a;
	int64_t moved;
	if (eh_uleb(&w->p, w->end, &a))
		return -1;
	int r = cfa_moved_slot(w, (int64_t)a, &moved);
	if (r <= 0)
		return r ? r : cfa_copy(w, op);
	rb_u8(w->out, c);
	rb_uleb(w->out, (uint64_t)moved);
	return CFA_NEXT;
}

static int cfa_state(struct cfa_walk *w, const uint8_t *op, uint8_t c)
{
	if (c == DW_CFA_remember_state) {
		if (w->depth == EH_STACK)
			return -1;
		w->stack_reg[w->depth] = w->reg;
		w->stack_off[w->depth++] = w->off;
	} else if (c == DW_CFA_restore_state) {
		if (!w->depth)
			return -1;
		w->reg = w->stack_reg[--w->depth];
		w->off = w->stack_off[w->depth];
	}
	return cfa_copy(w, op);
}

static int cfa_advance(struct cfa_walk *w, const uint8_t *op, uint8_t c)
{
	size_t n = c == DW_CFA_advance_loc1 ? 1 : c == DW_CFA_advance_loc2 ? 2 : 4;
	if ((size_t)(w->end - w->p) < n)
		return -1;
	uint32_t delta = 0;
	memcpy(&delta, w->p, n);        /* little-endian */
	w->p += n;
	return w->stop == UINT64_MAX ? cfa_copy(w, op) : cfa_at(w, delta);
}

/* DW_CFA_offset_extended(_sf): a register saved at CFA - offset. */
static int cfa_saved(struct cfa_walk *w, const uint8_t *op, uint8_t c)
{
	uint64_t a;
	int64_t s, moved;
	if (reg_offset(&w->p, w->end, c == DW_CFA_offset_extended_sf, &a, &s))
		return -1;
	int r = cfa_moved_slot(w, s, &moved);
	if (r <= 0)
		return r ? r : cfa_copy(w, op);
	rb_u8(w->out, c);
	rb_uleb(w->out, a);
	if (c == DW_CFA_offset_extended)
		rb_uleb(w->out, (uint64_t)moved);
	else
		rb_sleb(w->out, moved);
	return CFA_NEXT;
}

/* DW_CFA_def_cfa(_sf) and DW_CFA_def_cfa_offset(_sf): the rule's offset
 * moves by d where it is rsp's and at least k1. */
static int cfa_def(struct cfa_walk *w, const uint8_t *op, uint8_t c)
{
	int64_t da = w->cie->data_align, s;
	uint64_t a;
	bool whole = c == DW_CFA_def_cfa || c == DW_CFA_def_cfa_sf;
	if (whole) {
		if (reg_offset(&w->p, w->end, c == DW_CFA_def_cfa_sf, &a, &s))
			return -1;
		w->reg = a;
	} else if (c == DW_CFA_def_cfa_offset) {
		if (eh_uleb(&w->p, w->end, &a))
			return -1;
		s = (int64_t)a;
	} else if (eh_sleb(&w->p, w->end, &s)) {
		return -1;
	}
	if ((c == DW_CFA_def_cfa_sf || c == DW_CFA_def_cfa_offset_sf) &&
	    __builtin_mul_overflow(s, da, &s))
		return -1;
	w->off = s;
	if (!w->d || w->reg != 7 || s < w->k1)
		return cfa_copy(w, op);
	if (__builtin_add_overflow(s, w->d, &w->off))
		return -1;
	rb_u8(w->out, whole ? DW_CFA_def_cfa : DW_CFA_def_cfa_offset);
	if (whole)
		rb_uleb(w->out, w->reg);
	rb_uleb(w->out, (uint64_t)w->off);
	return CFA_NEXT;
}

/* The instructions copied as they are once their operands are read (those
 * that padding would have to change refused). */
static int cfa_other(struct cfa_walk *w, const uint8_t *op, uint8_t c)
{
	uint64_t a, b;
	int64_t s;
	switch (c) {
	case DW_CFA_restore_extended:
	case DW_CFA_undefined:
	case DW_CFA_same_value:
	case DW_CFA_GNU_args_size:
		if (eh_uleb(&w->p, w->end, &a))
			return -1;
		w->args_size |= c == DW_CFA_GNU_args_size && a;
		break;
	case DW_CFA_register:
		if (eh_uleb(&w->p, w->end, &a) || eh_uleb(&w->p, w->end, &b))
			return -1;
		break;
	case DW_CFA_val_offset:
	case DW_CFA_val_offset_sf:
	case DW_CFA_GNU_negative_offset_extended:
		/* rare; refused where padding would have to move them */
		if (reg_offset(&w->p, w->end, c == DW_CFA_val_offset_sf, &a, &s) || w->d)
			return -1;
		break;
	case DW_CFA_def_cfa_register:
		if (eh_uleb(&w->p, w->end, &a))
			return -1;
		w->reg = a;
		break;
	case DW_CFA_def_cfa_expression:
		if (eh_uleb(&w->p, w->end, &a) || a > (uint64_t)(w->end - w->p) || w->d)
			return -1;
		w->p += a;
		w->reg = UINT64_MAX;
		break;
	case DW_CFA_expression:
	case DW_CFA_val_expression:
		if (eh_uleb(&w->p, w->end, &a) || eh_uleb(&w->p, w->end, &b) ||
		    b > (uint64_t)(w->end - w->p))
			return -1;
		w->p += b;
		break;
	default:
		return -1;      /* DW_CFA_set_loc (absolute: gcc makes none), unknown */
	}
	return cfa_copy(w, op);
}

static int cfa_step(struct cfa_walk *w)
{
	const uint8_t *op = w->p;
	uint8_t c = *w->p++;
	if (c & 0xc0)
		return cfa_primary(w, op, c);
	switch (c) {
	case DW_CFA_nop:
	case DW_CFA_remember_state:
	case DW_CFA_restore_state:
		return cfa_state(w, op, c);
	case DW_CFA_advance_loc1:
	case DW_CFA_advance_loc2:
	case DW_CFA_advance_loc4:
		return cfa_advance(w, op, c);
	case DW_CFA_offset_extended:
	case DW_CFA_offset_extended_sf:
		return cfa_saved(w, op, c);
	case DW_CFA_def_cfa:
	case DW_CFA_def_cfa_sf:
	case DW_CFA_def_cfa_offset:
	case DW_CFA_def_cfa_offset_sf:
		return cfa_def(w, op, c);
	default:
		return cfa_other(w, op, c);
	}
}

/* Walk the CFA program [p, end); 0 or -1. */
static int walk_cfa(struct cfa_walk *w, const uint8_t *p, const uint8_t *end)
{
	w->p = p;
	w->end = end;
	w->loc = 0;
	w->depth = 0;
	while (w->p < w->end) {
		int r = cfa_step(w);
		if (r)
			return r < 0 ? -1 : 0;
	}
	return 0;
}

/* eh_edit_cfa, and with `window` eh_window_cfa. */
static int edit_rows(const struct eh_frame *eh, uint32_t fde, int64_t k0, int64_t k1, int64_t d,
		     bool window, uint64_t from, uint64_t stop, uint64_t lead, struct rbuf *out)
{
	const struct eh_entry *e = &eh->e[fde], *cie = &eh->e[e->cie_index];
	struct rbuf scratch = {0}, tmp = {0};
	struct cfa_walk w = {.cie = cie, .k0 = k0, .k1 = k1, .stop = UINT64_MAX, .reg = 7,
			     .off = 8, .out = &scratch};
	const uint8_t *cs = eh->data + cie->off, *fs = eh->data + e->off;
	int r = walk_cfa(&w, cs + cie->insn_off, cs + cie->size);
	rb_free(&scratch);
	if (r || !cie->code_align)
		return -1;
	w.d = d;
	w.stop = stop;
	w.window = window;
	w.from = from;
	w.lead = lead;
	w.out_loc = 0;
	w.out = out ? out : &tmp;
	r = walk_cfa(&w, fs + e->insn_off, fs + e->size);
	rb_free(&tmp);
	return r;
}

int eh_edit_cfa(const struct eh_frame *eh, uint32_t fde, int64_t k0, int64_t k1, int64_t d,
		uint64_t stop, struct rbuf *out)
{
	return edit_rows(eh, fde, k0, k1, d, false, 0, stop, 0, out);
}

int eh_window_cfa(const struct eh_frame *eh, uint32_t fde, int64_t k0, int64_t k1, int64_t d,
		  uint64_t from, uint64_t stop, uint64_t lead, struct rbuf *out)
{
	return from > stop ? -1 : edit_rows(eh, fde, k0, k1, d, true, from, stop, lead, out);
}

bool eh_args_size(const struct eh_frame *eh, uint32_t fde)
{
	const struct eh_entry *e = &eh->e[fde], *cie = &eh->e[e->cie_index];
	struct rbuf tmp = {0};
	struct cfa_walk w = {.cie = cie, .stop = UINT64_MAX, .reg = 7, .off = 8, .out = &tmp};
	const uint8_t *cs = eh->data + cie->off, *fs = eh->data + e->off;
	int r = walk_cfa(&w, cs + cie->insn_off, cs + cie->size);
	if (!r)
		r = walk_cfa(&w, fs + e->insn_off, fs + e->size);
	rb_free(&tmp);
	return r || w.args_size;
}

/* ------------------------------------------------------------------ output */

static void put_at(struct rbuf *b, size_t at, const void *d, size_t n)
{
	if (!b->oom)
		memcpy(b->p + at, d, n);
}

/* The raw value of the fixed-size pointer field at `at`, sign-extended
 * where its encoding is signed. */
static uint64_t get_ptr(const struct rbuf *b, size_t at, int enc)
{
	size_t n = eh_enc_size(enc);
	uint64_t raw = 0;
	memcpy(&raw, b->p + at, n);     /* little-endian */
	if (n < 8 && (enc & DW_EH_PE_signed) && (raw >> (8 * n - 1)) & 1)
		raw |= ~0ULL << (8 * n);
	return raw;
}

/* Write raw value v into the pointer field at `at`; -1 where its encoding
 * cannot hold it. */
static int put_ptr(struct rbuf *b, size_t at, int enc, uint64_t v)
{
	size_t n = eh_enc_size(enc);
	if (n < 8) {
		bool is_signed = enc & DW_EH_PE_signed;
		uint64_t top = is_signed ? (uint64_t)((int64_t)v >> (8 * n - 1)) : v >> (8 * n);
		if (top && !(is_signed && top == UINT64_MAX))
			return -1;
	}
	put_at(b, at, &v, n);
	return 0;
}

/* Re-encode a pointer field copied from old_at to new_at (both vaddrs)
 * whose target moves by shift (a clone's pc_begin; else 0): a pc-relative
 * one follows its field and its target, an absolute one its target.  A
 * null (0) pointer stays null. */
static int move_ptr(struct rbuf *b, size_t at, int enc, uint64_t old_at, uint64_t new_at,
		    uint64_t shift)
{
	if (enc == DW_EH_PE_omit || b->oom)
		return 0;
	int app = enc & 0x70;
	uint64_t raw = get_ptr(b, at, enc), v;
	if (app == DW_EH_PE_pcrel) {
		if (!raw)
			return 0;
		v = raw + (old_at - new_at) + shift;
		if (!v)
			return -1;      /* the field itself, which libgcc reads as null */
	} else if (app == DW_EH_PE_absptr && shift) {
		v = raw + shift;
	} else {
		return 0;
	}
	return put_ptr(b, at, enc, v);
}

/* Write pc_range of the FDE copied (from e) at start. */
static int put_range(const struct eh_frame *eh, const struct eh_entry *e, struct rbuf *frame,
		     size_t start, uint64_t range)
{
	int enc = eh->e[e->cie_index].fde_enc & 0x0f;
	size_t n = eh_enc_size(enc);
	if ((n != 4 && n != 8) || (n == 4 && range > UINT32_MAX))
		return -1;
	put_at(frame, start + e->pc_field + n, &range, n);    /* little-endian */
	return 0;
}

/* Point the LSDA field of the FDE copied (from e) at start, address vaddr +
 * start, at lsda: a stub's own (eh_put_stub_lsda).  -1 where e has no LSDA
 * or the field cannot hold it. */
static int put_lsda(const struct eh_frame *eh, const struct eh_entry *e, struct rbuf *frame,
		    size_t start, uint64_t vaddr, uint64_t lsda)
{
	int enc = eh->e[e->cie_index].lsda_enc;
	uint64_t field = vaddr + start + e->lsda_field;
	if (!e->lsda_field)
		return -1;
	return put_ptr(frame, start + e->lsda_field, enc,
		       (enc & 0x70) == DW_EH_PE_pcrel ? lsda - field : lsda);
}

struct hdr_ent {
	uint64_t pc, fde;
};

static int cmp_hdr(const void *a, const void *b)
{
	const struct hdr_ent *x = a, *y = b;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* A CFA row's advance by adv code bytes (the code alignment factor is 1):
 * a trampoline that copies 512 bytes of stack arguments runs 64 pushes
 * before its next row, more than advance_loc1 says. */
static void put_advance(struct rbuf *frame, uint32_t adv)
{
	if (adv < 64) {
		rb_u8(frame, (uint8_t)(DW_CFA_advance_loc | adv));
	} else if (adv <= UINT8_MAX) {
		rb_u8(frame, DW_CFA_advance_loc1);
		rb_u8(frame, (uint8_t)adv);
	} else if (adv <= UINT16_MAX) {
		rb_u8(frame, DW_CFA_advance_loc2);
		rb_put(frame, &(uint16_t){(uint16_t)adv}, 2);
	} else {
		rb_u8(frame, DW_CFA_advance_loc4);
		rb_u32(frame, adv);
	}
}

/* Append entry i of eh at the end of frame (address vaddr + offset), its
 * pointers re-encoded, an FDE's CFA program edited by ed (may be NULL) and
 * its pc_begin moved by shift (a clone's copy of the FDE).  CIEs must have
 * been appended before their FDEs (newoff).  0, or -1 with err. */
static int put_entry(const struct eh_frame *eh, uint32_t i, const struct eh_fde_edit *ed,
		     uint64_t stop, const struct eh_clonefde *win, uint64_t shift, uint64_t vaddr,
		     const uint64_t *newoff, struct rbuf *frame, char *err, size_t errlen)
{
	const struct eh_entry *e = &eh->e[i];
	const uint8_t *src = eh->data + e->off;
	size_t start = frame->n;
	if (!ed) {
		rb_put(frame, src, e->size);
	} else {
		rb_put(frame, src, e->insn_off);
		if ((win ? eh_window_cfa(eh, i, ed->k0, ed->k1, ed->d, win->row_from, stop, win->lead,
					 frame)
			 : eh_edit_cfa(eh, i, ed->k0, ed->k1, ed->d, stop, frame)) < 0)
			return errmsg(err, errlen, "FDE of 0x%llx cannot be re-encoded",
				      (unsigned long long)e->pc_begin);
		/* keep entries 8-aligned with DW_CFA_nop */
		while ((frame->n - start) % 8)
			rb_u8(frame, DW_CFA_nop);
		uint32_t len = (uint32_t)(frame->n - start - 4);
		put_at(frame, start, &len, 4);
	}
	if (frame->oom)
		return errmsg(err, errlen, "out of memory building .eh_frame");
	uint64_t old_base = eh->vaddr + e->off, new_base = vaddr + start;
	if (e->cie) {
		if (e->per_field && move_ptr(frame, start + e->per_field, e->per_enc & 0x7f,
					     old_base + e->per_field, new_base + e->per_field, 0))
			goto range;
		return 0;
	}
	const struct eh_entry *cie = &eh->e[e->cie_index];
	uint32_t cptr = (uint32_t)(start + 4 - newoff[e->cie_index]);
	put_at(frame, start + 4, &cptr, 4);
	if (move_ptr(frame, start + e->pc_field, cie->fde_enc, old_base + e->pc_field,
		     new_base + e->pc_field, shift))
		goto range;
	if (e->lsda_field && move_ptr(frame, start + e->lsda_field, cie->lsda_enc,
				      old_base + e->lsda_field, new_base + e->lsda_field, 0))
		goto range;
	return 0;
range:
	return errmsg(err, errlen, "merged .eh_frame: a pointer no longer fits its encoding");
}

int eh_build(const struct eh_frame *eh, const struct eh_fde_edit *edits, uint32_t nedits,
	     const struct eh_clonefde *cf, uint32_t ncf, const struct eh_newfde *nf, uint32_t nnew,
	     uint64_t vaddr, uint64_t hdr_vaddr, struct rbuf *frame, struct rbuf *hdr, char *err,
	     size_t errlen)
{
	uint64_t *newoff = malloc((eh->n + 1) * sizeof(*newoff));
	struct hdr_ent *tab = malloc((eh->nfde + ncf + nnew + 1) * sizeof(*tab));
	uint32_t ntab = 0;
	if (!newoff || !tab)
		goto oom;
	for (uint32_t i = 0; i < eh->n; i++) {
		const struct eh_entry *e = &eh->e[i];
		const struct eh_fde_edit *ed = NULL;
		for (uint32_t j = 0; !e->cie && j < nedits; j++)
			if (edits[j].fde == i)
				ed = &edits[j];
		newoff[i] = frame->n;
		if (put_entry(eh, i, ed, UINT64_MAX, NULL, 0, vaddr, newoff, frame, err, errlen))
			goto fail;
		if (!e->cie && e->pc_range)
			tab[ntab++] = (struct hdr_ent){e->pc_begin, vaddr + newoff[i]};
	}
	for (uint32_t i = 0; i < ncf; i++) {
		const struct eh_entry *e = &eh->e[cf[i].edit.fde];
		size_t start = frame->n;
		bool row = cf[i].row_at != UINT64_MAX;
		if (put_entry(eh, cf[i].edit.fde, cf[i].edit.d || row ? &cf[i].edit : NULL,
			      cf[i].row_at, cf[i].window ? &cf[i] : NULL, cf[i].start - e->pc_begin,
			      vaddr, newoff, frame, err, errlen))
			goto fail;
		if (row && put_range(eh, e, frame, start, cf[i].range) < 0)
			goto range;
		if (row && cf[i].lsda && put_lsda(eh, e, frame, start, vaddr, cf[i].lsda) < 0)
			goto range;
		tab[ntab++] = (struct hdr_ent){cf[i].start, vaddr + start};
	}
	if (nnew) {
		/* CIE: version 1, "zR", code 1, data -8, ra 16, pcrel|sdata4;
		 * CFA = rsp + 8, return address at CFA - 8. */
		size_t cie = frame->n;
		static const uint8_t body[] = {0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0x1b,
					       DW_CFA_def_cfa, 7, 8, DW_CFA_offset | 16, 1};
		rb_u32(frame, 0);
		rb_put(frame, body, sizeof(body));
		rb_align(frame, 8, DW_CFA_nop);
		uint32_t len = (uint32_t)(frame->n - cie - 4);
		put_at(frame, cie, &len, 4);
		for (uint32_t i = 0; i < nnew; i++) {
			size_t start = frame->n;
			rb_u32(frame, 0);
			rb_u32(frame, (uint32_t)(start + 4 - cie));
			int64_t rel = (int64_t)(nf[i].start - (vaddr + start + 8));
			if (rel < INT32_MIN || rel > INT32_MAX)
				goto range;
			rb_u32(frame, (uint32_t)(int32_t)rel);
			rb_u32(frame, nf[i].size);
			rb_uleb(frame, 0);              /* augmentation data */
			uint32_t pc = 0, cfa = 8;
			for (uint32_t r = 0; r < nf[i].nrows; r++) {
				const struct eh_row *row = &nf[i].rows[r];
				if (row->pc > pc) {
					put_advance(frame, row->pc - pc);
					pc = row->pc;
				}
				if (row->cfa != cfa) {
					rb_u8(frame, DW_CFA_def_cfa_offset);
					rb_uleb(frame, row->cfa);
					cfa = row->cfa;
				}
			}
			rb_align(frame, 8, DW_CFA_nop);
			len = (uint32_t)(frame->n - start - 4);
			put_at(frame, start, &len, 4);
			tab[ntab++] = (struct hdr_ent){nf[i].start, vaddr + start};
		}
	}
	rb_u32(frame, 0);                           /* terminator */
	if (frame->oom)
		goto oom;

	qsort(tab, ntab, sizeof(*tab), cmp_hdr);
	rb_u8(hdr, 1);
	rb_u8(hdr, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
	rb_u8(hdr, DW_EH_PE_udata4);
	rb_u8(hdr, DW_EH_PE_datarel | DW_EH_PE_sdata4);
	int64_t rel = (int64_t)(vaddr - (hdr_vaddr + 4));
	if (rel < INT32_MIN || rel > INT32_MAX)
		goto range;
	rb_u32(hdr, (uint32_t)(int32_t)rel);
	rb_u32(hdr, ntab);
	for (uint32_t i = 0; i < ntab; i++) {
		int64_t a = (int64_t)(tab[i].pc - hdr_vaddr), f = (int64_t)(tab[i].fde - hdr_vaddr);
		if (a < INT32_MIN || a > INT32_MAX || f < INT32_MIN || f > INT32_MAX)
			goto range;
		rb_u32(hdr, (uint32_t)(int32_t)a);
		rb_u32(hdr, (uint32_t)(int32_t)f);
	}
	if (hdr->oom)
		goto oom;
	free(newoff);
	free(tab);
	return 0;
range:
	errmsg(err, errlen, "merged .eh_frame: a pointer no longer fits its encoding");
	goto fail;
oom:
	errmsg(err, errlen, "out of memory building .eh_frame");
fail:
	free(newoff);
	free(tab);
	return -1;
}
