/* functions.c: function bounds from the symbol table and the .eh_frame FDEs.
 *
 * The rules are in binary.h.  Symbols and FDE ranges become candidates,
 * sorted by address, symbols before FDEs, then by preference; one sweep
 * (merge) then makes them a sorted, non-overlapping list.
 */
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>

#include "binary/eh_encoding.h"
#include "binary/internal.h"

enum { RANK_GLOBAL, RANK_WEAK, RANK_LOCAL, RANK_FDE };

struct cand {
	uint64_t addr, end;
	const char *name;
	int rank;
};

struct cands {
	struct cand *v;
	size_t n, cap;
};

static int push(struct cands *c, struct cand x)
{
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 1024;
		struct cand *v = realloc(c->v, cap * sizeof(*v));
		if (!v)
			return -1;
		c->v = v;
		c->cap = cap;
	}
	c->v[c->n++] = x;
	return 0;
}

Elf_Scn *bin_section_of_type(Elf *elf, GElf_Word type)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		if (gelf_getshdr(scn, &sh) && sh.sh_type == type)
			return scn;
	}
	return NULL;
}

static Elf_Scn *section_named(Elf *elf, const char *name)
{
	size_t strndx;
	if (elf_getshdrstrndx(elf, &strndx) != 0)
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		const char *n;
		if (gelf_getshdr(scn, &sh) && (n = elf_strptr(elf, strndx, sh.sh_name)) &&
		    !strcmp(n, name))
			return scn;
	}
	return NULL;
}

int bin_bind_rank(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return RANK_GLOBAL;
	case STB_WEAK:
		return RANK_WEAK;
	default:
		return RANK_LOCAL;
	}
}

static int add_symbols(struct bin_module *m, struct cands *c)
{
	Elf_Scn *scn = bin_section_of_type(m->elf, SHT_SYMTAB);
	if (!scn)
		scn = bin_section_of_type(m->elf, SHT_DYNSYM);
	GElf_Shdr sh;
	Elf_Data *d;
	if (!scn || !gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)))
		return 0;
	size_t n = d->d_size / gelf_fsize(m->elf, ELF_T_SYM, 1, EV_CURRENT);
	for (size_t i = 0; i < n; i++) {
		GElf_Sym s;
		uint64_t lo, hi;
		if (!gelf_getsym(d, (int)i, &s) || !s.st_size || s.st_shndx == SHN_UNDEF)
			continue;
		int type = GELF_ST_TYPE(s.st_info);
		if (type != STT_FUNC && type != STT_GNU_IFUNC)
			continue;
		const char *name = elf_strptr(m->elf, sh.sh_link, s.st_name);
		if (!name || s.st_value + s.st_size < s.st_value ||
		    bin_exec_range(m, s.st_value, &lo, &hi) != 0)
			continue;
		struct cand x = {s.st_value, s.st_value + s.st_size, name, bin_bind_rank(s.st_info)};
		if (push(c, x))
			return -1;
	}
	return 0;
}



/* The pointer encoding of a CIE's FDEs: the 'R' augmentation (-1: unknown).
 * libdw splits the entry but leaves the augmentation bytes to the caller. */
static int fde_encoding(const Dwarf_CIE *cie)
{
	const char *a = cie->augmentation;
	if (a[0] != 'z')
		return a[0] ? -1 : DW_EH_PE_absptr;
	const uint8_t *p = cie->augmentation_data;
	const uint8_t *end = p + cie->augmentation_data_size;
	for (a++; *a && p < end; a++) {
		switch (*a) {
		case 'R':
			return *p;
		case 'L':
			p++;
			break;
		case 'P':
			if (!eh_enc_size(*p))
				return -1;
			p += 1 + eh_enc_size(*p);
			break;
		case 'S':
		case 'B':
			break;
		default:
			return -1;
		}
	}
	return DW_EH_PE_absptr;
}

/* CIE section offsets and their FDE encodings; FDEs name their CIE by offset. */
struct cie_enc {
	Dwarf_Off off;
	int enc;
};

struct cie_table {
	struct cie_enc *v;
	size_t n;
};

static int cie_lookup(const struct cie_table *t, Dwarf_Off off)
{
	for (size_t i = t->n; i-- > 0;)
		if (t->v[i].off == off)
			return t->v[i].enc;
	return -1;
}

static int cie_add(struct cie_table *t, Dwarf_Off off, int enc)
{
	struct cie_enc *v = realloc(t->v, (t->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	t->v = v;
	t->v[t->n++] = (struct cie_enc){off, enc};
	return 0;
}

/* Decode one FDE's [start, end) (pcrel relative to the field's own vaddr)
 * and keep it only when libdw's lookup at that start finds the same start:
 * that confirms the decoding and that the FDE is the one libdw uses. */
static int decode_fde(struct bin_module *m, const Dwarf_FDE *fde, int enc, const Elf_Data *d,
		      uint64_t secaddr, struct cand *out)
{
	const uint8_t *p = fde->start;
	uint64_t at = secaddr + (uint64_t)(fde->start - (const uint8_t *)d->d_buf);
	uint64_t start, len, lo, hi, row;
	if ((enc & DW_EH_PE_indirect) || eh_read_enc(enc, &p, fde->end, at, &start) ||
	    eh_read_enc(enc & 0x0f, &p, fde->end, 0, &len))
		return -1;
	if (!len || start + len < start || bin_exec_range(m, start, &lo, &hi) != 0 ||
	    bin_cfi_row_start(m->eh_cfi, start, &row) != 0 || row != start)
		return -1;
	*out = (struct cand){start, start + len, NULL, RANK_FDE};
	return 0;
}

static int add_fdes(struct bin_module *m, struct cands *c)
{
	Elf_Scn *scn = section_named(m->elf, ".eh_frame");
	GElf_Shdr sh;
	Elf_Data *d;
	if (!m->eh_cfi || !scn || !gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)))
		return 0;
	struct cie_table cies = {0};
	int rc = 0;
	Dwarf_Off off = 0, next = 0;
	for (; rc == 0; off = next) {
		Dwarf_CFI_Entry e;
		next = off;
		int r = dwarf_next_cfi(m->ehdr.e_ident, d, true, off, &next, &e);
		if (r == 1 || (r < 0 && (next == (Dwarf_Off)-1 || next <= off)))
			break;
		struct cand x;
		if (r < 0)
			continue;
		if (dwarf_cfi_cie_p(&e))
			rc = cie_add(&cies, off, fde_encoding(&e.cie));
		else if (decode_fde(m, &e.fde, cie_lookup(&cies, e.fde.CIE_pointer), d, sh.sh_addr,
				    &x) == 0)
			rc = push(c, x);
	}
	free(cies.v);
	return rc;
}

static int cand_cmp(const void *pa, const void *pb)
{
	const struct cand *a = pa, *b = pb;
	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	if (a->rank != b->rank)
		return a->rank - b->rank;
	if (a->rank != RANK_FDE) {
		size_t la = strlen(a->name), lb = strlen(b->name);
		if (la != lb)
			return la < lb ? -1 : 1;
		int r = strcmp(a->name, b->name);
		if (r)
			return r;
	}
	return a->end == b->end ? 0 : a->end > b->end ? -1 : 1;
}

/* Apply binary.h's alias and overlap rules to the sorted candidates, in
 * place; returns how many functions remain. */
static size_t merge(struct cands *c)
{
	size_t n = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct cand x = c->v[i], *last = n ? &c->v[n - 1] : NULL;
		if (last && x.addr == last->addr) {
			if (x.end > last->end && x.rank != RANK_FDE)
				last->end = x.end;
			continue;
		}
		if (last && x.addr < last->end) {
			if (x.rank == RANK_FDE)
				continue;
			last->end = x.addr;
		}
		c->v[n++] = x;
	}
	return n;
}

int bin_load_functions(struct bin_module *m, char *err, size_t errlen)
{
	struct cands c = {0};
	if (add_symbols(m, &c) || add_fdes(m, &c)) {
		free(c.v);
		errmsg(err, errlen, "%s: out of memory", m->path);
		return -1;
	}
	if (c.n)
		qsort(c.v, c.n, sizeof(*c.v), cand_cmp);
	size_t n = merge(&c);
	m->funcs = calloc(n ? n : 1, sizeof(*m->funcs));
	if (!m->funcs) {
		free(c.v);
		errmsg(err, errlen, "%s: out of memory", m->path);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		m->funcs[i] = (struct bin_function){c.v[i].addr, c.v[i].end - c.v[i].addr,
						    c.v[i].name, c.v[i].rank == RANK_FDE};
	m->nfuncs = n;
	free(c.v);
	return 0;
}

const struct bin_function *bin_functions(const struct bin_module *m, size_t *n)
{
	*n = m->nfuncs;
	return m->funcs;
}

const struct bin_function *bin_function_at(const struct bin_module *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nfuncs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->funcs[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - m->funcs[lo - 1].addr >= m->funcs[lo - 1].size)
		return NULL;
	return &m->funcs[lo - 1];
}

#define VENEER_PREFIX "__icpp_veneer_"

bool bin_veneer(const struct bin_function *f)
{
	return f->name && !strncmp(f->name, VENEER_PREFIX, strlen(VENEER_PREFIX));
}

const struct bin_function *bin_stub_caller(const struct bin_module *m,
					   const struct bin_function *f, uint64_t *site)
{
	static const char *const prefixes[] = {"__icpp_tag_", "__icpp_bind_", "__icpp_promote_",
					       VENEER_PREFIX};
	const char *hex = NULL;
	for (size_t i = 0; f && f->name && !hex && i < sizeof(prefixes) / sizeof(*prefixes); i++)
		if (!strncmp(f->name, prefixes[i], strlen(prefixes[i])))
			hex = f->name + strlen(prefixes[i]);
	if (!hex)
		return NULL;
	char *end;
	uint64_t at = strtoull(hex, &end, 16);
	const struct bin_function *caller = *end ? NULL : bin_function_at(m, at);
	if (!caller || caller == f)
		return NULL;
	*site = at;
	return caller;
}

bool bin_call_stub(const struct bin_module *m, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	if (bin_plt_stub(m, vaddr, lo, hi))
		return true;
	const struct bin_function *f = bin_function_at(m, vaddr);
	if (!f || !f->name || strncmp(f->name, BIN_XCALL_PREFIX, strlen(BIN_XCALL_PREFIX)))
		return false;
	if (lo)
		*lo = f->addr;
	if (hi)
		*hi = f->addr + f->size;
	return true;
}

const struct bin_function *bin_thunk_callee(const struct bin_module *m,
					    const struct bin_function *f)
{
	static const char prefix[] = "__icpp_bindto_";
	if (!f || !f->name || strncmp(f->name, prefix, sizeof(prefix) - 1))
		return NULL;
	char *end;
	uint64_t at = strtoull(f->name + sizeof(prefix) - 1, &end, 16);
	const struct bin_function *callee = *end ? NULL : bin_function_at(m, at);
	return callee && callee != f && callee->addr == at ? callee : NULL;
}
