/* stub_lsda.c: the LSDA of a stub that makes a call in its caller's frame
 * (rewriter.h section 1, Tagged calls and Promoted calls).
 *
 * A call c moved into a stub returns into the stub, whose FDE repeats the
 * caller's CFA row at c.  A C++ personality looks a frame's return address
 * up in the call-site table of its FDE's LSDA: with the caller's LSDA it
 * would find no record for the stub's address and terminate, with none it
 * would skip the caller's cleanups and handlers for c.  So the stub's FDE
 * points at an LSDA of its own that says of the whole stub what the
 * caller's says of c:
 *   LPStart     omitted, as the caller's (an explicit one would take the
 *               personality through code that training never saw it run);
 *   call sites  one record, the stub's bytes -> c's landing pad and action,
 *               signed LEB128: the landing pad lies before the stub; none
 *               where no record covers c (the personality terminates, as it
 *               would at c);
 *   actions     the caller's action table up to the end of c's chain,
 *               verbatim: links are relative and c's action offset stays;
 *   types       the caller's entries 1..N that the chain names, re-encoded
 *               at their new place: the landing pad compares the selector
 *               (the entry's number) with constants of its own;
 *   specs       the exception specifications the chain names, verbatim.
 * The caller's own LPStart must be omitted (GCC and clang omit it).  A
 * DW_CFA_GNU_args_size (arguments pushed before the call) needs nothing
 * more: the stub's FDE repeats the caller's row at the call, that size
 * included, and the unwinder lands with the stack pointer it gives. */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/internal.h"

#define LSDA_MAX_CHAIN 64        /* action records followed from one call */
#define LSDA_MAX_TYPES 256       /* type table entries copied */
#define LSDA_MAX_BYTES 4096      /* action or specification bytes copied */

/* What the caller's LSDA says of the call returning to ret. */
struct caller_eh {
	bool covered;            /* a call-site record covers the call */
	uint64_t lp_off;         /* its landing pad from LPStart (0: none) */
	uint64_t action;         /* 1 + offset in the action table (0: cleanup only) */
	uint64_t actions;        /* vaddr of the action table */
	uint32_t nactions;       /* its bytes up to the end of the call's chain */
	int ttenc;               /* type table encoding */
	uint64_t ttbase;
	uint32_t ntypes;         /* entries 1..ntypes copied */
	uint32_t nspec;          /* specification bytes from ttbase copied */
};

/* Up to n bytes of m at vaddr (fewer where its segment ends); how many. */
static size_t read_some(const struct bin_module *m, uint64_t vaddr, uint8_t *buf, size_t n)
{
	while (n && bin_read(m, vaddr, buf, n) < 0)
		n--;
	return n;
}

static int rd_u8(const struct bin_module *m, uint64_t *at, uint8_t *v)
{
	if (bin_read(m, *at, v, 1) < 0)
		return -1;
	(*at)++;
	return 0;
}

/* A LEB128 number at *at (signed into *sv, else into *uv). */
static int rd_leb(const struct bin_module *m, uint64_t *at, uint64_t *uv, int64_t *sv)
{
	uint8_t b[10];
	const uint8_t *p = b, *end = b + read_some(m, *at, b, sizeof(b));
	if (sv ? eh_sleb(&p, end, sv) : eh_uleb(&p, end, uv))
		return -1;
	*at += (uint64_t)(p - b);
	return 0;
}

/* The type table entries that specification list at ttbase + off names. */
static int read_spec(const struct bin_module *m, struct caller_eh *c, uint64_t off)
{
	uint64_t at = c->ttbase + off, idx;
	for (int k = 0;; k++) {
		if (k == LSDA_MAX_TYPES || rd_leb(m, &at, &idx, NULL))
			return -1;
		if (!idx)
			break;
		if (idx > c->ntypes)
			c->ntypes = (uint32_t)(idx < LSDA_MAX_TYPES ? idx : LSDA_MAX_TYPES + 1);
	}
	if (at - c->ttbase > c->nspec)
		c->nspec = (uint32_t)(at - c->ttbase < LSDA_MAX_BYTES ? at - c->ttbase
								     : LSDA_MAX_BYTES + 1);
	return 0;
}

/* Follow the call's action chain: what of the action and type tables it
 * names. */
static int read_chain(const struct bin_module *m, struct caller_eh *c)
{
	uint64_t rec = c->actions + c->action - 1;
	for (int k = 0; k < LSDA_MAX_CHAIN; k++) {
		int64_t filter, disp;
		uint64_t at = rec;
		if (rec < c->actions || rd_leb(m, &at, NULL, &filter))
			return -1;
		uint64_t link = at;
		if (rd_leb(m, &at, NULL, &disp))
			return -1;
		if (at - c->actions > c->nactions)
			c->nactions = (uint32_t)(at - c->actions < LSDA_MAX_BYTES ? at - c->actions
										  : LSDA_MAX_BYTES + 1);
		if (filter && c->ttenc == DW_EH_PE_omit)
			return -1;
		if (filter > 0 && (uint64_t)filter > c->ntypes)
			c->ntypes = (uint32_t)(filter < LSDA_MAX_TYPES ? filter : LSDA_MAX_TYPES + 1);
		if (filter < 0 && read_spec(m, c, (uint64_t)-(filter + 1)))
			return -1;
		if (!disp)
			return 0;
		rec = link + (uint64_t)disp;
	}
	return -1;
}

/* Whether a pointer in encoding enc (a type table entry, the FDE's LSDA
 * pointer) can move: a fixed size, and pc-relative, or absolute where
 * addresses are fixed (no PIE: an absolute pointer of a PIE has a relocation
 * that a copy would not). */
static bool movable_enc(int enc, bool pie)
{
	int app = enc & 0x70;
	return eh_enc_size(enc & 0x0f) &&
	       (app == DW_EH_PE_pcrel || (app == DW_EH_PE_absptr && !pie));
}

/* Parse the LSDA at lsda of the function (or fragment) starting at
 * func_start for the call returning to ret. */
static int caller_eh(const struct bin_module *m, uint64_t lsda, uint64_t func_start, uint64_t ret,
		     struct caller_eh *c)
{
	*c = (struct caller_eh){.ttenc = DW_EH_PE_omit};
	uint64_t at = lsda, v, cslen;
	uint8_t lpenc, ttenc, csenc;
	if (rd_u8(m, &at, &lpenc) || lpenc != DW_EH_PE_omit || rd_u8(m, &at, &ttenc))
		return -1;
	c->ttenc = ttenc;
	if (ttenc != DW_EH_PE_omit) {
		if (rd_leb(m, &at, &v, NULL) || !movable_enc(ttenc, bin_is_pic(m)))
			return -1;
		c->ttbase = at + v;
	}
	/* call-site fields are offsets (a pc-relative form would make the
	 * personality add the field's address: no toolchain writes one) */
	if (rd_u8(m, &at, &csenc) || (csenc & 0xf0) || rd_leb(m, &at, &cslen, NULL) ||
	    cslen > (1u << 24))
		return -1;
	uint8_t *t = malloc(cslen ? cslen : 1);
	if (!t || (cslen && bin_read(m, at, t, cslen) < 0)) {
		free(t);
		return -1;
	}
	c->actions = at + cslen;
	/* the personality's search: the first record covering ret - 1, in a
	 * table sorted by start */
	const uint8_t *q = t, *qend = t + cslen;
	while (q < qend) {
		uint64_t st, len, lp, action;
		if (eh_read_enc(csenc, &q, qend, 0, &st) || eh_read_enc(csenc, &q, qend, 0, &len) ||
		    eh_read_enc(csenc, &q, qend, 0, &lp) || eh_uleb(&q, qend, &action)) {
			free(t);
			return -1;
		}
		if (func_start + st > ret - 1)
			break;
		if (ret - 1 < func_start + st + len) {
			c->covered = true;
			c->lp_off = lp;
			c->action = lp ? action : 0;
			break;
		}
	}
	free(t);
	if (!c->covered || !c->lp_off || !c->action)
		return 0;
	if (read_chain(m, c) || c->nactions > LSDA_MAX_BYTES || c->ntypes > LSDA_MAX_TYPES ||
	    c->nspec > LSDA_MAX_BYTES)
		return -1;
	return 0;
}

/* The LSDA of FDE `fde` and whether a stub's can be made from it for the
 * call returning to ret: 0, or -1. */
static int stub_caller(const struct bin_module *m, const struct eh_frame *eh, uint32_t fde,
		       uint64_t ret, struct caller_eh *c)
{
	const struct eh_entry *e = &eh->e[fde], *cie = &eh->e[e->cie_index];
	if (!movable_enc(cie->lsda_enc, bin_is_pic(m)))
		return -1;
	return caller_eh(m, e->lsda, e->pc_begin, ret, c);
}

/* Write raw value v in n bytes (enc's size and sign) at p; -1 where it
 * does not fit. */
static int put_sized(uint8_t *p, int enc, uint64_t v)
{
	size_t n = eh_enc_size(enc & 0x0f);
	if (n < 8) {
		bool is_signed = enc & DW_EH_PE_signed;
		uint64_t top = is_signed ? (uint64_t)((int64_t)v >> (8 * n - 1)) : v >> (8 * n);
		if (top && !(is_signed && top == UINT64_MAX))
			return -1;
	}
	memcpy(p, &v, n);        /* little-endian */
	return 0;
}

/* The type table entries 1..c->ntypes at their new place, ending at new
 * ttbase `base` (entry i at base - i * size), into out. */
static int put_types(const struct bin_module *m, const struct caller_eh *c, uint64_t base,
		     uint8_t *out)
{
	int enc = c->ttenc & 0x7f;   /* the indirection stays: the slot is the target */
	size_t n = eh_enc_size(enc & 0x0f);
	for (uint32_t i = 1; i <= c->ntypes; i++) {
		uint8_t raw[8];
		uint64_t old = c->ttbase - i * n, target, neu = base - i * n;
		const uint8_t *p = raw;
		if (bin_read(m, old, raw, n) < 0 || eh_read_enc(enc, &p, raw + n, old, &target))
			return -1;
		uint64_t v = target && (enc & 0x70) == DW_EH_PE_pcrel ? target - neu : target;
		if ((target && !v) || put_sized(out + (c->ntypes - i) * n, enc, v))
			return -1;
	}
	return 0;
}

int eh_put_stub_lsda(const struct bin_module *m, const struct eh_frame *eh, uint32_t fde,
		     uint64_t ret, uint64_t start, uint32_t range, uint64_t base, uint64_t at,
		     struct rbuf *o)
{
	struct caller_eh c;
	if (stub_caller(m, eh, fde, ret, &c))
		return -1;
	bool types = c.ntypes || c.nspec;
	size_t tsize = types ? eh_enc_size(c.ttenc & 0x0f) : 0;
	/* the call-site table, the actions, the types (aligned), the specs */
	struct rbuf body = {0};
	rb_u8(&body, DW_EH_PE_sleb128);
	struct rbuf rec = {0};
	if (c.covered) {
		rb_sleb(&rec, 0);
		rb_sleb(&rec, range);
		rb_sleb(&rec, c.lp_off ? (int64_t)(base + c.lp_off - start) : 0);
		rb_uleb(&rec, c.action);
	}
	rb_uleb(&body, rec.n);
	rb_put(&body, rec.p, rec.n);
	body.oom |= rec.oom;
	rb_free(&rec);
	size_t acts = body.n;
	for (uint32_t i = 0; i < c.nactions; i++)
		rb_u8(&body, 0);
	/* header: LPStart's encoding (omitted), ttenc, ttoff as a 4-byte uleb */
	size_t head = 1 + 1 + (types ? 4 : 0);
	if (types)
		while ((at + head + body.n) % tsize)
			rb_u8(&body, 0);
	size_t ttb = body.n + c.ntypes * tsize;     /* ttbase from the body's start */
	for (size_t i = 0; i < c.ntypes * tsize + c.nspec; i++)
		rb_u8(&body, 0);
	if (body.oom || (c.nactions && bin_read(m, c.actions, body.p + acts, c.nactions) < 0) ||
	    (c.nspec && bin_read(m, c.ttbase, body.p + ttb, c.nspec) < 0) ||
	    (c.ntypes && put_types(m, &c, at + head + ttb, body.p + ttb - c.ntypes * tsize))) {
		rb_free(&body);
		return -1;
	}
	rb_u8(o, DW_EH_PE_omit);
	rb_u8(o, types ? (uint8_t)c.ttenc : DW_EH_PE_omit);
	if (types) {
		uint64_t off = ttb;      /* from the end of this field: the body's start */
		uint8_t uleb[4] = {(uint8_t)(0x80 | (off & 0x7f)), (uint8_t)(0x80 | ((off >> 7) & 0x7f)),
				   (uint8_t)(0x80 | ((off >> 14) & 0x7f)), (uint8_t)((off >> 21) & 0x7f)};
		rb_put(o, uleb, 4);
	}
	rb_put(o, body.p, body.n);
	rb_free(&body);
	return o->oom ? -1 : 0;
}

/* A stub's LSDA written where the caller's lies: every byte it copies must
 * be readable, every type entry movable (at the stub's own place the
 * pc-relative ones move by less than the module's size). */
bool eh_stub_lsda_ok(const struct bin_module *m, const struct eh_frame *eh, uint32_t fde,
		     uint64_t ret)
{
	const struct eh_entry *e = &eh->e[fde];
	struct rbuf o = {0};
	int r = eh_put_stub_lsda(m, eh, fde, ret, e->pc_begin, 64, e->pc_begin, e->lsda, &o);
	rb_free(&o);
	return r == 0;
}
