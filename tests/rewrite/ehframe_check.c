/* ehframe_check.c: see ehframe_check.h. */
#include <dwarf.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/internal.h"
#include "tests/rewrite/ehframe_check.h"

enum {
	KEEP = 16,              /* the edit: saved slots and CFA offsets past 16 */
	PAD = 32,               /* move by 32 */
	STUB_RANGE = 16,        /* the one-row copy's code */
};
#define MOVE 0x10000ULL         /* the rebuilt section lies this much higher */
#define CLONE_AT 0x100000ULL    /* the clone's code, above its original's */
#define STUB_AT 0x200000ULL
#define WINDOW_AT 0x300000ULL   /* a tail jump's stub: its rows moved 16 bytes in */
enum { LEAD = 16 };

struct rebuild {
	struct eh_fde_edit *edits;
	uint32_t nedits;
	struct rbuf *progs;     /* the edited programs, by FDE (n = 0: none) */
	struct eh_clonefde cf[3];
	uint32_t ncf;
};

/* FDE i's program at padding d, up to stop, into out (emptied first). */
static int edit(const struct eh_frame *eh, uint32_t i, int64_t d, uint64_t stop,
		struct rbuf *out)
{
	out->n = 0;
	out->oom = false;
	return eh_edit_cfa(eh, i, KEEP, KEEP, d, stop, out);
}

/* Walk every FDE's program; list the editable ones for the rebuild. */
static const char *walk_fdes(const struct eh_frame *eh, struct rebuild *rb,
			     struct ehframe_tally *t)
{
	struct rbuf copy = {0};
	const char *bad = NULL;
	for (uint32_t i = 0; i < eh->n && !bad; i++) {
		const struct eh_entry *e = &eh->e[i];
		if (e->cie)
			continue;
		t->fdes++;
		(void)eh_args_size(eh, i);
		bool copied = edit(eh, i, 0, UINT64_MAX, &copy) == 0;
		if (copied) {
			t->copied++;
			if (copy.n != e->size - e->insn_off ||
			    (copy.n && memcmp(copy.p, eh->data + e->off + e->insn_off, copy.n)))
				bad = "a CFA program at padding 0 is not copied byte for byte";
		}
		(void)edit(eh, i, PAD, e->pc_range / 2, &copy);
		if (edit(eh, i, PAD, UINT64_MAX, &rb->progs[i]) == 0) {
			if (!copied)
				bad = "a CFA program edited at padding 32 that cannot be copied";
			t->edited++;
			rb->edits[rb->nedits++] = (struct eh_fde_edit){i, KEEP, KEEP, PAD};
		} else {
			rb->progs[i].n = 0;
		}
	}
	rb_free(&copy);
	return bad;
}

/* A clone of the first editable FDE of some code, padded, and a one-row
 * copy of its first row (a tagged call's stub).  Not of an FDE whose
 * pc_begin is 0: a null pointer to libgcc, it covers no code to copy. */
static void add_copies(const struct eh_frame *eh, struct rebuild *rb)
{
	uint32_t k = 0;
	while (k < rb->nedits && !eh->e[rb->edits[k].fde].pc_begin)
		k++;
	if (k == rb->nedits)
		return;
	uint32_t i = rb->edits[k].fde;
	uint64_t pc = eh->e[i].pc_begin;
	rb->cf[rb->ncf++] = (struct eh_clonefde){{i, KEEP, KEEP, PAD}, pc + CLONE_AT, UINT64_MAX,
						  UINT64_MAX, 0, false, 0, 0};
	rb->cf[rb->ncf++] = (struct eh_clonefde){{i, KEEP, KEEP, 0}, pc + STUB_AT, 0, STUB_RANGE, 0,
						  false, 0, 0};
	uint64_t range = eh->e[i].pc_range, from = range / 4, stop = range / 2;
	if (eh_window_cfa(eh, i, KEEP, KEEP, 0, from, stop, LEAD, NULL) == 0)
		rb->cf[rb->ncf++] = (struct eh_clonefde){{i, KEEP, KEEP, 0}, pc + WINDOW_AT, stop,
							  LEAD + stop - from + 8, 0, true, from, LEAD};
}

/* Two rows' programs (eh_edit_cfa at a stop) the same but for the
 * DW_CFA_nop that pad each FDE's program at its end. */
static bool same_rules(const struct rbuf *a, const struct rbuf *b)
{
	size_t na = a->n, nb = b->n;
	while (na && a->p[na - 1] == DW_CFA_nop)
		na--;
	while (nb && b->p[nb - 1] == DW_CFA_nop)
		nb--;
	return na == nb && (!na || !memcmp(a->p, b->p, na));
}

/* A window's copy (rb->cf[k]) in eh2, entry w: its row at LEAD + x - from
 * is the original's at x, for every x in [from, stop]. */
static const char *compare_window(const struct eh_frame *eh, const struct eh_frame *eh2,
				  const struct eh_clonefde *cf, uint32_t w)
{
	struct rbuf a = {0}, b = {0};
	const char *bad = NULL;
	for (uint64_t x = cf->row_from; x <= cf->row_at && !bad; x++) {
		a.n = b.n = 0;
		if (eh_edit_cfa(eh, cf->edit.fde, 0, 0, 0, x, &a) ||
		    eh_edit_cfa(eh2, w, 0, 0, 0, LEAD + x - cf->row_from, &b) ||
		    !same_rules(&a, &b))
			bad = "a window's copy has another row than its original";
	}
	rb_free(&a);
	rb_free(&b);
	return bad;
}

/* The rebuilt section eh2 against the original: entries in order, each FDE
 * at its addresses, each edited program in place (then DW_CFA_nop). */
static const char *compare(const struct eh_frame *eh, const struct eh_frame *eh2,
			   const struct rebuild *rb)
{
	if (eh2->nfde != eh->nfde + rb->ncf || eh2->n < eh->n + rb->ncf)
		return "the rebuilt .eh_frame has other entries";
	for (uint32_t i = 0; i < eh->n; i++) {
		const struct eh_entry *a = &eh->e[i], *b = &eh2->e[i];
		if (a->cie != b->cie || (!a->cie && (a->pc_begin != b->pc_begin ||
						     a->pc_range != b->pc_range || a->lsda != b->lsda)))
			return "a rebuilt FDE covers other code or names another LSDA";
		const struct rbuf *prog = &rb->progs[i];
		if (a->cie || !prog->n)
			continue;
		const uint8_t *insn = eh2->data + b->off + b->insn_off;
		size_t room = b->size - b->insn_off;
		if (room < prog->n || memcmp(insn, prog->p, prog->n))
			return "a rebuilt FDE does not hold its edited CFA program";
		for (size_t k = prog->n; k < room; k++)
			if (insn[k] != DW_CFA_nop)
				return "a rebuilt FDE's program is padded with other than DW_CFA_nop";
	}
	for (uint32_t k = 0; k < rb->ncf; k++) {
		const struct eh_entry *c = &eh2->e[eh->n + k], *o = &eh->e[rb->cf[k].edit.fde];
		uint64_t range = rb->cf[k].range == UINT64_MAX ? o->pc_range : rb->cf[k].range;
		if (c->cie || c->pc_begin != rb->cf[k].start || c->pc_range != range)
			return "a clone's FDE covers other code";
		const char *bad = rb->cf[k].window ? compare_window(eh, eh2, &rb->cf[k], eh->n + k)
						   : NULL;
		if (bad)
			return bad;
	}
	return NULL;
}

/* Rebuild eh with its edits and copies, parse the result, compare. */
static const char *rebuild_check(const struct eh_frame *eh, struct rebuild *rb, uint64_t vaddr,
				 struct ehframe_tally *t)
{
	struct rbuf frame = {0}, hdr = {0};
	char err[256];
	const char *bad = NULL;
	if (eh_build(eh, rb->edits, rb->nedits, rb->cf, rb->ncf, NULL, 0, vaddr + MOVE,
		     vaddr + MOVE / 2, &frame, &hdr, err, sizeof(err)) == 0) {
		struct eh_frame eh2;
		if (eh_parse(frame.p, frame.n, vaddr + MOVE, &eh2, err, sizeof(err)))
			bad = "the rebuilt .eh_frame does not parse";
		else
			bad = compare(eh, &eh2, rb);
		t->rebuilt += !bad;
		eh_free(&eh2);
	}
	rb_free(&frame);
	rb_free(&hdr);
	return bad;
}

const char *ehframe_check(const uint8_t *data, size_t size, uint64_t vaddr,
			  struct ehframe_tally *t)
{
	struct eh_frame eh;
	char err[256] = "";
	if (eh_parse(data, size, vaddr, &eh, err, sizeof(err))) {
		eh_free(&eh);
		t->refused++;
		return err[0] ? NULL : "a refused .eh_frame without a message";
	}
	t->parsed++;
	struct rebuild rb = {0};
	rb.edits = malloc((eh.n + 1) * sizeof(*rb.edits));
	rb.progs = calloc(eh.n + 1, sizeof(*rb.progs));
	const char *bad = NULL;
	if (!rb.edits || !rb.progs)
		bad = "out of memory";
	if (!bad)
		bad = walk_fdes(&eh, &rb, t);
	if (!bad) {
		add_copies(&eh, &rb);
		bad = rebuild_check(&eh, &rb, vaddr, t);
	}
	for (uint32_t i = 0; rb.progs && i < eh.n; i++)
		rb_free(&rb.progs[i]);
	free(rb.progs);
	free(rb.edits);
	eh_free(&eh);
	return bad;
}
