/* test_ehframe: the .eh_frame reader and CFA program editor
 * (rewriter/ehframe.c) by the properties of ehframe_check.h, on the
 * .eh_frame of each binary named on the command line, then on mutants of
 * its first entries (up to PREFIX bytes, cut at an entry, a terminator
 * after): MUTANTS copies with one to four bytes changed at random (a fixed
 * seed) and the prefix cut at every STEP-th length.  A real section must
 * parse and be rebuilt with every FDE copied; mutants must both parse and
 * be refused (or they test nothing); no property may fail on any.  A new
 * FDE (generated code) keeps each of its rows in place however far apart.
 * The libFuzzer target fuzz_ehframe checks the same on what it makes. */
#include <dwarf.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "binary/binary.h"
#include "binary/eh_encoding.h"
#include "rewriter/internal.h"
#include "tests/check.h"
#include "tests/rewrite/ehframe_check.h"

enum { PREFIX = 16384, MUTANTS = 2000, STEP = 7 };

struct section {
	uint8_t *data;
	size_t size;
	uint64_t vaddr;
	uint64_t offset;        /* in the file */
};

/* A copy of `path`'s section `want`, or false. */
static bool read_section(const char *path, const char *want, struct section *s)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t shstrndx;
	bool found = false;
	if (e && elf_getshdrstrndx(e, &shstrndx) == 0) {
		for (Elf_Scn *scn = NULL; !found && (scn = elf_nextscn(e, scn));) {
			GElf_Shdr sh;
			const char *name;
			Elf_Data *d;
			if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(e, shstrndx, sh.sh_name)) ||
			    strcmp(name, want) || !(d = elf_getdata(scn, NULL)) || !d->d_size)
				continue;
			s->data = malloc(d->d_size);
			if (!s->data)
				break;
			memcpy(s->data, d->d_buf, d->d_size);
			s->size = d->d_size;
			s->vaddr = sh.sh_addr;
			s->offset = sh.sh_offset;
			found = true;
		}
	}
	elf_end(e);
	close(fd);
	return found;
}

/* The length of the first whole entries within PREFIX bytes. */
static size_t prefix_len(const struct section *s)
{
	size_t off = 0;
	while (off + 4 <= s->size) {
		uint32_t len;
		memcpy(&len, s->data + off, 4);
		if (!len || len > s->size - off - 4 || off + 4 + len > PREFIX - 4)
			break;
		off += 4 + (size_t)len;
	}
	return off;
}

static uint64_t next(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static void check_one(const char *what, const uint8_t *data, size_t size, uint64_t vaddr,
		      struct ehframe_tally *t)
{
	const char *bad = ehframe_check(data, size, vaddr, t);
	if (bad)
		fprintf(stderr, "%s (%zu bytes): %s\n", what, size, bad);
	CHECK(!bad);
}

static void check_mutants(const char *path, const struct section *s)
{
	size_t n = prefix_len(s);
	uint8_t *buf = calloc(n + 4, 1);        /* the prefix, a terminator */
	if (!buf || !n) {
		CHECK(!"whole entries in the first bytes");
		free(buf);
		return;
	}
	struct ehframe_tally t = {0};
	uint64_t seed = 1;
	for (uint32_t m = 0; m < MUTANTS; m++) {
		memcpy(buf, s->data, n);
		memset(buf + n, 0, 4);
		for (uint64_t k = 1 + next(&seed) % 4; k--;)
			buf[next(&seed) % n] = (uint8_t)next(&seed);
		check_one(path, buf, n + 4, s->vaddr, &t);
	}
	memcpy(buf, s->data, n);
	for (size_t len = 0; len <= n; len += STEP)
		check_one(path, buf, len, s->vaddr, &t);
	printf("%s: mutants of its first %zu bytes: %llu parsed (%llu FDEs, %llu copied, "
	       "%llu edited, %llu rebuilt), %llu refused\n",
	       path, n, (unsigned long long)t.parsed, (unsigned long long)t.fdes,
	       (unsigned long long)t.copied, (unsigned long long)t.edited,
	       (unsigned long long)t.rebuilt, (unsigned long long)t.refused);
	CHECK(t.parsed > 0 && t.refused > 0 && t.rebuilt > 0);
	free(buf);
}

/* A CIE without augmentation (pointers absolute, 8 bytes) and its FDE: a
 * clone's copy must move pc_begin itself (fuzz_ehframe's first finding:
 * the copy kept the original's). */
static const uint8_t absptr_section[] = {
	0x10, 0, 0, 0, 0, 0, 0, 0,              /* CIE, id 0 */
	1, 0, 1, 0x78, 16,                      /* version 1, "", code 1, data -8, ra 16 */
	0x0c, 7, 8, 0x90, 1, 0, 0,              /* def_cfa rsp+8, ra at cfa-8; nops */
	0x1c, 0, 0, 0, 24, 0, 0, 0,             /* FDE of the CIE 24 bytes back */
	0x00, 0x10, 0x40, 0, 0, 0, 0, 0,        /* pc_begin 0x401000 */
	0x40, 0, 0, 0, 0, 0, 0, 0,              /* pc_range 0x40 */
	0x44, 0x0e, 0x30, 0x83, 0x02, 0, 0, 0,  /* +4: cfa rsp+48, rbx at cfa-16; nops */
	0, 0, 0, 0,                             /* terminator */
};

/* A "zR" CIE whose FDE pointers have encoding enc, and one FDE: pc_begin
 * raw, range 0x40, then the CFA program insn; the terminator.  Its size. */
static size_t zr_section(uint8_t *out, uint8_t enc, uint32_t raw, const uint8_t *insn,
			 size_t ninsn)
{
	static const uint8_t cie[] = {
		0x14, 0, 0, 0, 0, 0, 0, 0, 1, 'z', 'R', 0, 1, 0x78, 16, 1, 0 /* enc */,
		0x0c, 7, 8, 0x90, 1, 0, 0,
	};
	size_t n = sizeof(cie), fde = n;
	memcpy(out, cie, n);
	out[16] = enc;
	uint32_t len = 4 + 4 + 4 + 1 + (uint32_t)ninsn, back = (uint32_t)(fde + 4);
	len = (len + 3) & ~3u;
	memcpy(out + n, &len, 4);
	memcpy(out + n + 4, &back, 4);
	memcpy(out + n + 8, &raw, 4);
	memcpy(out + n + 12, &(uint32_t){0x40}, 4);
	memset(out + n + 16, 0, len - 12);      /* augmentation length 0, nops */
	memcpy(out + n + 17, insn, ninsn);
	n += 4 + len;
	memset(out + n, 0, 4);
	return n + 4;
}

/* fuzz_ehframe's findings, each a section and what must come of it. */
static void check_findings(void)
{
	struct ehframe_tally t = {0};
	check_one("absolute pointers", absptr_section, sizeof(absptr_section), 0x400000, &t);
	CHECK(t.parsed == 1 && t.fdes == 1 && t.edited == 1 && t.rebuilt == 1);

	static const uint8_t plain[] = {0x44, 0x0e, 0x30, 0x83, 0x02};
	uint8_t sec[128];
	/* pc-relative, unsigned: moved 64 KiB up (ehframe_check's MOVE) the
	 * value turns negative, which udata4 cannot hold (the rebuild wrote it
	 * as if signed) */
	size_t n = zr_section(sec, DW_EH_PE_pcrel | DW_EH_PE_udata4, 0x88, plain, sizeof(plain));
	t = (struct ehframe_tally){0};
	check_one("pcrel|udata4 moved below zero", sec, n, 0x400000, &t);
	CHECK(t.parsed == 1 && t.edited == 1 && t.rebuilt == 0);
	/* pc-relative, moved by exactly its value: 0, which libgcc reads as
	 * null (the rebuild wrote it) */
	n = zr_section(sec, DW_EH_PE_pcrel | DW_EH_PE_sdata4, 0x10000, plain, sizeof(plain));
	t = (struct ehframe_tally){0};
	check_one("pcrel moved to its field", sec, n, 0x400000, &t);
	CHECK(t.parsed == 1 && t.edited == 1 && t.rebuilt == 0);
	/* a register saved 2^62 * 8 bytes below the CFA: copied, but padding
	 * refuses it (the slot's product overflowed) */
	static const uint8_t far[] = {0x05, 3, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40};
	n = zr_section(sec, DW_EH_PE_pcrel | DW_EH_PE_sdata4, 0x1000, far, sizeof(far));
	t = (struct ehframe_tally){0};
	check_one("a slot beyond any stack", sec, n, 0x400000, &t);
	CHECK(t.parsed == 1 && t.copied == 1 && t.edited == 0);
}

/* The CFA offset the program of FDE `fde` gives at pc_begin + at (its
 * last DW_CFA_def_cfa_offset there; 8, the CIE's, without one), or -1. */
static int64_t cfa_at(const struct eh_frame *eh, uint32_t fde, uint64_t at)
{
	struct rbuf row = {0};
	int64_t cfa = -1;
	if (eh_edit_cfa(eh, fde, 0, 0, 0, at, &row) == 0) {
		cfa = 8;
		for (size_t i = 0; i + 1 < row.n; i++)
			if (row.p[i] == DW_CFA_def_cfa_offset) {
				const uint8_t *q = row.p + i + 1;
				uint64_t v;
				if (eh_uleb(&q, row.p + row.n, &v) == 0)
					cfa = (int64_t)v;
				i = (size_t)(q - row.p) - 1;
			}
	}
	rb_free(&row);
	return cfa;
}

/* A new FDE whose rows lie more than 255 and 65535 bytes apart (a
 * trampoline that copies 512 bytes runs 64 pushes before its next row):
 * every row at its own place, as advance_loc2 and advance_loc4 put them
 * (advance_loc1 alone put the row at 300 at 44). */
static void check_long_advances(void)
{
	static const uint8_t empty[4] = {0};
	const uint64_t vaddr = 0x600000, code = 0x401000;
	struct eh_frame eh, eh2;
	char err[256];
	CHECK(eh_parse(empty, sizeof(empty), vaddr, &eh, err, sizeof(err)) == 0);
	const struct eh_row rows[] = {{0, 8}, {7, 24}, {300, 336}, {313, 8}, {70000, 40}};
	const struct eh_newfde nf = {code, 70100, rows, 5};
	struct rbuf frame = {0}, hdr = {0};
	CHECK(eh_build(&eh, NULL, 0, NULL, 0, &nf, 1, vaddr, vaddr + 0x10000, &frame, &hdr, err,
		       sizeof(err)) == 0);
	CHECK(eh_parse(frame.p, frame.n, vaddr, &eh2, err, sizeof(err)) == 0);
	uint32_t fde = eh_fde_at(&eh2, code);
	CHECK(fde != RW_NONE);
	if (fde != RW_NONE) {
		const uint64_t at[] = {0, 6, 7, 44, 299, 300, 312, 313, 69999, 70000, 70099};
		const int64_t want[] = {8, 8, 24, 24, 24, 336, 336, 8, 8, 40, 40};
		for (size_t i = 0; i < sizeof(at) / sizeof(at[0]); i++)
			CHECK_EQ_INT(cfa_at(&eh2, fde, at[i]), want[i]);
	}
	eh_free(&eh2);
	eh_free(&eh);
	rb_free(&frame);
	rb_free(&hdr);
}

/* ------------------------------------------------------------ stubs' LSDAs */

/* What a reference personality reads: a module's bytes, or a stub's LSDA
 * (buf, at vaddr at). */
struct lsda_mem {
	const struct bin_module *m;
	const uint8_t *buf;
	uint64_t at;
	size_t len;
};

static bool mem_read(const struct lsda_mem *x, uint64_t addr, void *out, size_t n)
{
	if (!x->buf)
		return bin_read(x->m, addr, out, n) == 0;
	if (addr < x->at || addr - x->at > x->len || n > x->len - (addr - x->at))
		return false;
	memcpy(out, x->buf + (addr - x->at), n);
	return true;
}

static bool mem_leb(const struct lsda_mem *x, uint64_t *addr, bool sign, uint64_t *v)
{
	uint64_t r = 0;
	uint8_t b;
	for (unsigned shift = 0; shift < 64; shift += 7) {
		if (!mem_read(x, (*addr)++, &b, 1))
			return false;
		r |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			if (sign && shift + 7 < 64 && (b & 0x40))
				r |= ~0ULL << (shift + 7);
			*v = r;
			return true;
		}
	}
	return false;
}

/* A DW_EH_PE value at *addr: pc-relative from its field, a zero staying
 * null; the indirect bit's slot is the value (it is not followed). */
static bool mem_enc(const struct lsda_mem *x, int enc, uint64_t *addr, uint64_t *v)
{
	uint64_t field = *addr, raw = 0;
	int form = enc & 0x0f;
	if (form == DW_EH_PE_uleb128 || form == DW_EH_PE_sleb128) {
		if (!mem_leb(x, addr, form == DW_EH_PE_sleb128, &raw))
			return false;
	} else {
		size_t n = eh_enc_size(form);
		if (!n || !mem_read(x, field, &raw, n))
			return false;
		if ((enc & DW_EH_PE_signed) && n < 8 && (raw >> (8 * n - 1)) & 1)
			raw |= ~0ULL << (8 * n);
		*addr += n;
	}
	*v = raw && (enc & 0x70) == DW_EH_PE_pcrel ? field + raw : raw;
	return (enc & 0x70) == DW_EH_PE_pcrel || (enc & 0x70) == DW_EH_PE_absptr;
}

/* What a personality concludes at ip, in the region starting at start:
 * whether a record covers it, its landing pad, and along the action chain
 * each filter with the type entries it names (a spec's, 0-terminated). */
struct verdict {
	bool covered;
	uint64_t lp;
	uint32_t n;
	int64_t filter[16];
	uint64_t type[16][8];
};

static bool type_entry(const struct lsda_mem *x, int ttenc, uint64_t ttbase, uint64_t i,
		       uint64_t *v)
{
	uint64_t at = ttbase - i * eh_enc_size(ttenc & 0x0f);
	return mem_enc(x, ttenc & 0x7f, &at, v);
}

static bool judge(const struct lsda_mem *x, uint64_t lsda, uint64_t start, uint64_t ip,
		  struct verdict *v)
{
	memset(v, 0, sizeof(*v));
	uint64_t a = lsda, lpstart = start, ttbase = 0, off, cslen;
	uint8_t lpenc, ttenc, csenc;
	if (!mem_read(x, a++, &lpenc, 1) ||
	    (lpenc != DW_EH_PE_omit && !mem_enc(x, lpenc, &a, &lpstart)) ||
	    !mem_read(x, a++, &ttenc, 1))
		return false;
	if (ttenc != DW_EH_PE_omit) {
		if (!mem_leb(x, &a, false, &off))
			return false;
		ttbase = a + off;
	}
	if (!mem_read(x, a++, &csenc, 1) || !mem_leb(x, &a, false, &cslen))
		return false;
	uint64_t actions = a + cslen, st, len, lp, action = 0;
	while (a < actions) {
		if (!mem_enc(x, csenc, &a, &st) || !mem_enc(x, csenc, &a, &len) ||
		    !mem_enc(x, csenc, &a, &lp) || !mem_leb(x, &a, false, &action))
			return false;
		if (start + st > ip)
			break;
		if (ip < start + st + len) {
			v->covered = true;
			v->lp = lp ? lpstart + lp : 0;
			break;
		}
	}
	if (!v->covered || !v->lp || !action)
		return true;
	for (uint64_t rec = actions + action - 1; v->n < 16; v->n++) {
		uint64_t f, disp, at = rec, k, idx;
		if (!mem_leb(x, &at, true, &f))
			return false;
		uint64_t link = at;
		if (!mem_leb(x, &at, true, &disp))
			return false;
		v->filter[v->n] = (int64_t)f;
		if ((int64_t)f > 0 && !type_entry(x, ttenc, ttbase, f, &v->type[v->n][0]))
			return false;
		for (k = 0, at = ttbase - (int64_t)f - 1; (int64_t)f < 0 && k < 7; k++) {
			if (!mem_leb(x, &at, false, &idx))
				return false;
			if (!idx)
				break;
			if (!type_entry(x, ttenc, ttbase, idx, &v->type[v->n][k]))
				return false;
		}
		if (!disp)
			return ++v->n, true;
		rec = link + disp;
	}
	return false;
}

struct lsda_tally {
	uint64_t calls, made, refused, with_types, differ;
	uint64_t unplaced;      /* made where the caller's lies, not at 0x70000000 */
};

/* For every call-site record of every FDE with an LSDA in m: a stub for the
 * call it covers (a region of 64 bytes at 0x70000000), if its LSDA can be
 * made, must bring a personality to the same landing pad, filters and type
 * entries as the caller's does at the call. */
static void stub_lsdas_of(const char *what, struct bin_module *m, const struct eh_frame *eh,
			  struct lsda_tally *t)
{
	const uint64_t start = 0x70000000, range = 64, at = start + range;
	for (uint32_t i = 0; i < eh->n; i++) {
		const struct eh_entry *e = &eh->e[i];
		struct eh_callsite *cs;
		uint32_t ncs;
		if (e->cie || !e->lsda || eh_lsda(m, e->lsda, e->pc_begin, &cs, &ncs) < 0)
			continue;
		for (uint32_t c = 0; c < ncs; c++) {
			uint64_t ret = cs[c].start + cs[c].len;
			t->calls++;
			if (!eh_stub_lsda_ok(m, eh, i, ret)) {
				t->refused++;
				continue;
			}
			struct rbuf o = {0};
			struct verdict want, got;
			struct lsda_mem caller = {.m = m}, stub;
			if (eh_put_stub_lsda(m, eh, i, ret, start, range, e->pc_begin, at, &o) < 0) {
				t->unplaced++;   /* a type entry out of a pc-relative reach */
				rb_free(&o);
				continue;
			}
			stub = (struct lsda_mem){.buf = o.p, .at = at, .len = o.n};
			bool ok = judge(&caller, e->lsda, e->pc_begin, ret - 1, &want) &&
			     judge(&stub, at, start, start + range / 2, &got) &&
			     want.covered == got.covered && want.lp == got.lp && want.n == got.n &&
			     !memcmp(want.filter, got.filter, sizeof(want.filter)) &&
			     !memcmp(want.type, got.type, sizeof(want.type));
			t->made += ok;
			t->with_types += ok && want.n && want.filter[0];
			if (!ok && t->differ++ < 5)
				fprintf(stderr, "%s: the stub of the call returning to 0x%llx is not "
					"its caller's\n", what, (unsigned long long)ret);
			rb_free(&o);
		}
		free(cs);
	}
}

static void check_stub_lsdas(const char *path, const struct section *s)
{
	char err[256];
	struct bin_module *m = bin_open(path, err, sizeof(err));
	struct eh_frame eh;
	if (!m || eh_parse(s->data, s->size, s->vaddr, &eh, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", path, err);
		CHECK(!"opened and parsed");
		bin_close(m);
		return;
	}
	struct lsda_tally t = {0};
	stub_lsdas_of(path, m, &eh, &t);
	printf("%s: %llu calls with an LSDA: stubs' LSDAs %llu the caller's (%llu with type "
	       "filters), %llu refused, %llu differ\n", path, (unsigned long long)t.calls,
	       (unsigned long long)t.made, (unsigned long long)t.with_types,
	       (unsigned long long)t.refused, (unsigned long long)t.differ);
	/* every call of a binary with LSDAs refused would check nothing: GCC's
	 * and clang's tables give a stub's LSDA for nearly all */
	CHECK(t.differ == 0 && t.unplaced == 0 && t.made * 10 >= t.calls * 9);
	eh_free(&eh);
	bin_close(m);
}

/* The same on LSDA_MUTANTS copies of `path` with LSDA_FLIPS random bytes
 * of its .gcc_except_table changed: whatever the LSDAs hold, a stub's LSDA
 * is refused, or cannot be placed (a mutated type entry that the test's
 * address puts out of pc-relative reach: icpp rewrite says so), or says
 * what the caller's does; nothing crashes. */
enum { LSDA_MUTANTS = 12, LSDA_FLIPS = 48 };

static void check_stub_lsda_mutants(const char *path, const struct section *s)
{
	struct section gx = {0};
	if (!read_section(path, ".gcc_except_table", &gx))
		return;                 /* no LSDA to mutate */
	free(gx.data);
	FILE *f = fopen(path, "rb");
	uint8_t *img = NULL;
	long size = -1;
	if (f && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 0 && fseek(f, 0, SEEK_SET) == 0)
		img = malloc((size_t)size);
	bool read = img && fread(img, 1, (size_t)size, f) == (size_t)size;
	if (f)
		fclose(f);
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char tmp[512];
	snprintf(tmp, sizeof(tmp), "%s/test_ehframe.XXXXXX", dir);
	int fd = read ? mkstemp(tmp) : -1;
	CHECK(read && fd >= 0);
	struct lsda_tally t = {0};
	uint64_t seed = 7;
	for (uint32_t k = 0; fd >= 0 && k < LSDA_MUTANTS; k++) {
		uint8_t *mut = malloc((size_t)size);
		if (!mut)
			break;
		memcpy(mut, img, (size_t)size);
		for (uint32_t b = 0; b < LSDA_FLIPS; b++)
			mut[gx.offset + next(&seed) % gx.size] = (uint8_t)next(&seed);
		char err[256];
		struct bin_module *m = NULL;
		struct eh_frame eh;
		bool parsed = false;
		if (pwrite(fd, mut, (size_t)size, 0) == size && (m = bin_open(tmp, err, sizeof(err))))
			parsed = eh_parse(s->data, s->size, s->vaddr, &eh, err, sizeof(err)) == 0;
		CHECK(parsed);
		if (parsed) {
			stub_lsdas_of(path, m, &eh, &t);
			eh_free(&eh);
		}
		bin_close(m);
		free(mut);
	}
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(img);
	printf("%s: %u mutants of its LSDAs: %llu calls, %llu stubs' LSDAs the caller's, "
	       "%llu refused, %llu out of reach at the test's address, %llu differ\n", path,
	       LSDA_MUTANTS, (unsigned long long)t.calls, (unsigned long long)t.made,
	       (unsigned long long)t.refused, (unsigned long long)t.unplaced,
	       (unsigned long long)t.differ);
	CHECK(t.differ == 0 && t.made > 0);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_ehframe ELF...\n");
		return 2;
	}
	check_findings();
	check_long_advances();
	for (int i = 1; i < argc; i++) {
		struct section s = {0};
		if (!read_section(argv[i], ".eh_frame", &s)) {
			fprintf(stderr, "%s: no .eh_frame read\n", argv[i]);
			CHECK(!"a binary with .eh_frame");
			continue;
		}
		struct ehframe_tally t = {0};
		check_one(argv[i], s.data, s.size, s.vaddr, &t);
		printf("%s: %zu bytes, %llu FDEs, %llu copied, %llu edited, rebuilt %s\n", argv[i],
		       s.size, (unsigned long long)t.fdes, (unsigned long long)t.copied,
		       (unsigned long long)t.edited, t.rebuilt ? "and parsed again" : "NOT");
		CHECK(t.parsed == 1 && t.fdes > 0 && t.copied == t.fdes && t.edited > 0 &&
		      t.rebuilt == 1);
		check_mutants(argv[i], &s);
		check_stub_lsdas(argv[i], &s);
		check_stub_lsda_mutants(argv[i], &s);
		free(s.data);
	}
	return check_exit();
}
