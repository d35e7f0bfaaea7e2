/* open.c: opening an input for rewriting (what icpp refuses, and why), the
 * GOT-slot names of PLT calls, the capability accessors and reports. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rewriter/internal.h"

/* ------------------------------------------------------------------ masks, names */

rw_mask rw_mask_range(uint32_t lo, uint32_t hi)
{
	rw_mask m = 1;
	uint32_t b0 = (lo + RW_ALIGN - 1) / RW_ALIGN, b1 = hi / RW_ALIGN;
	if (b0 == 0)
		b0 = 1;
	if (b1 > 63)
		b1 = 63;
	for (uint32_t b = b0; b <= b1; b++)
		m |= 1ull << b;
	return m;
}

uint32_t rw_mask_max(rw_mask m)
{
	for (int b = 63; b > 0; b--)
		if (m & (1ull << b))
			return (uint32_t)b * RW_ALIGN;
	return 0;
}

bool rw_mask_allows(rw_mask m, uint32_t bytes)
{
	if (bytes % RW_ALIGN || bytes / RW_ALIGN > 63)
		return false;
	return bytes == 0 || (m >> (bytes / RW_ALIGN)) & 1;
}

const char *rw_pad_why_name(enum rw_pad_why w)
{
	static const char *const names[RW_PAD_N] = {
		[RW_PAD_OK] = "ok",
		[RW_PAD_FRAGMENT] = "fragment of another function's frame",
		[RW_PAD_LEAF] = "leaf: calls nothing, padding would move no frame",
		[RW_PAD_NO_ALLOC] = "no sub/add/lea immediate allocates the frame",
		[RW_PAD_MULTI_ALLOC] = "several frame allocations (shrink-wrapped)",
		[RW_PAD_IMM_FULL] = "allocation immediate has no room (imm8 holds 127)",
		[RW_PAD_DISP_FULL] = "an rsp-relative disp8 above the padding has no room",
		[RW_PAD_STRADDLE] = "an rsp-relative access spans the padding's place",
		[RW_PAD_SAVED_ADDR] = "an address computed among the saved registers (one past a local's end?)",
		[RW_PAD_LARGE_FRAME] = "frame near 4 KiB (stack-clash probing)",
		[RW_PAD_DYNAMIC] = "dynamic stack allocation without a frame pointer",
		[RW_PAD_REALIGN] = "stack realignment",
		[RW_PAD_CALL_OUTSIDE] = "a call outside the allocated frame (shrink-wrapped)",
		[RW_PAD_RSP_LOCALS] = "frame-pointer function reaches its locals through rsp",
		[RW_PAD_RBP_RESTORE] = "rsp restored from rbp inside the allocation",
		[RW_PAD_POP_RELEASE] = "a pop releases the frame's allocation",
		[RW_PAD_UNDECODABLE] = "undecodable bytes or a jump into an instruction (data in text)",
		[RW_PAD_NO_CFI] = "no CFI, or a CFA rule that is not register+offset",
		[RW_PAD_CFI_MISMATCH] = "CFI disagrees with the code",
		[RW_PAD_CFI_EDIT] = "FDE cannot be re-encoded",
		[RW_PAD_STACK_STATE] = "unknown or inconsistent stack pointer",
		[RW_PAD_FRAGMENT_SHARED] = "a code fragment shared by two functions",
		[RW_PAD_ENTERED_INSIDE] = "another function jumps into its code",
	};
	return w < RW_PAD_N && names[w] ? names[w] : "?";
}

const char *rw_wrap_why_name(enum rw_wrap_why w)
{
	static const char *const names[RW_WRAP_N] = {
		[RW_WRAP_OK] = "ok",
		[RW_WRAP_INDIRECT] = "indirect call",
		[RW_WRAP_RETURNS_TWICE] = "returns-twice callee (setjmp, vfork, ...)",
		[RW_WRAP_ARGS_UNKNOWN] = "stack arguments cannot be bounded",
		[RW_WRAP_ARGS_LARGE] = "too many possible stack-argument bytes to copy",
		[RW_WRAP_CALLER] = "calling code could not be analysed",
	};
	return w < RW_WRAP_N && names[w] ? names[w] : "?";
}

const char *rw_clone_why_name(enum rw_clone_why w)
{
	static const char *const names[RW_CLONE_N] = {
		[RW_CLONE_OK] = "ok",
		[RW_CLONE_FRAGMENT] = "is a fragment (.cold), has more than one, or shares one",
		[RW_CLONE_ANALYSIS] = "the stack analysis of its code failed",
		[RW_CLONE_UNDECODABLE] = "undecodable bytes",
		[RW_CLONE_INDIRECT_JUMP] = "an indirect jump that is no tail call and no relative switch's",
		[RW_CLONE_CODE_ADDRESS] = "takes the address of its own code",
		[RW_CLONE_SHORT_BRANCH] = "a short branch out of the function that no veneer reaches",
		[RW_CLONE_NO_FDE] = "no FDE exactly covering it, or not pc-relative",
		[RW_CLONE_LSDA] = "an LSDA with its own LPStart, or pointed at absolutely in a PIE",
		[RW_CLONE_FAR] = "a displacement out of reach from the copy",
		[RW_CLONE_FALLS_OFF] = "runs past its end into the code after it",
		[RW_CLONE_SWITCH_UNBOUNDED] = "a switch table that runs on into other code, "
					      "its index bounded by no check found",
	};
	return w < RW_CLONE_N && names[w] ? names[w] : "?";
}

bool rw_pad_by_entry(const struct rw_func *f, uint32_t amount)
{
	return f->pad_entry && amount > f->pad_in_place;
}

rw_mask rw_in_place_mask(const struct rw_func *f)
{
	if (!f->pad_entry)
		return f->pad_mask;
	return f->pad_in_place ? rw_mask_range(16, f->pad_in_place) : 1;
}

const char *rw_entry_why_name(enum rw_entry_why w)
{
	static const char *const names[RW_ENTRY_N] = {
		[RW_ENTRY_OK] = "ok",
		[RW_ENTRY_IN_PLACE] = "paddable in place",
		[RW_ENTRY_SHAPE] = "refused in place for a reason a wrapper does not cure",
		[RW_ENTRY_LEAF] = "leaf: calls nothing",
		[RW_ENTRY_FRAGMENT] = "is or has a fragment sharing its frame (.cold)",
		[RW_ENTRY_ARGS] = "reaches its return address or stack arguments",
		[RW_ENTRY_FALLS_OFF] = "runs past its end",
		[RW_ENTRY_RETURNS_TWICE] = "returns-twice function",
		[RW_ENTRY_DISPLACE] = "first instructions cannot be displaced",
		[RW_ENTRY_BRANCH_TARGET] = "its code jumps into its first bytes",
		[RW_ENTRY_ENTERED_INSIDE] = "another function jumps into its code",
	};
	return w < RW_ENTRY_N && names[w] ? names[w] : "?";
}

const char *rw_frame_name(enum rw_frame f)
{
	switch (f) {
	case RW_FRAME_NONE:
		return "frameless";
	case RW_FRAME_FP:
		return "fp";
	case RW_FRAME_SP:
		return "sp";
	default:
		return "?";
	}
}

/* ------------------------------------------------------------------ slots */

static int cmp_slot(const void *x, const void *y)
{
	const struct rw_slot_name *a = x, *b = y;
	return a->slot < b->slot ? -1 : a->slot > b->slot;
}

static const struct rw_slot_name *slot_at(const struct rw_binary *b, uint64_t slot)
{
	size_t lo = 0, hi = b->nslots;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (b->slots[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->nslots && b->slots[lo].slot == slot ? &b->slots[lo] : NULL;
}

const char *rw_slot_symbol(const struct rw_binary *b, uint64_t slot)
{
	const struct rw_slot_name *s = slot_at(b, slot);
	return s ? s->name : NULL;
}

uint64_t rw_slot_own(const struct rw_binary *b, uint64_t slot)
{
	const struct rw_slot_name *s = slot_at(b, slot);
	return s ? s->own : 0;
}

static int load_slots(struct rw_binary *b)
{
	size_t cap = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(b->elf, scn));) {
		GElf_Shdr sh, lsh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA || !(d = elf_getdata(scn, NULL)))
			continue;
		Elf_Scn *link = elf_getscn(b->elf, sh.sh_link);
		Elf_Data *syms;
		if (!link || !gelf_getshdr(link, &lsh) || lsh.sh_type != SHT_DYNSYM ||
		    !(syms = elf_getdata(link, NULL)))
			continue;
		size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
		for (size_t i = 0; i < n; i++) {
			GElf_Rela r;
			GElf_Sym s;
			if (!gelf_getrela(d, (int)i, &r))
				continue;
			unsigned type = GELF_R_TYPE(r.r_info);
			if (type != R_X86_64_JUMP_SLOT && type != R_X86_64_GLOB_DAT)
				continue;
			if (!gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s))
				continue;
			const char *name = elf_strptr(b->elf, lsh.sh_link, s.st_name);
			if (!name || !*name)
				continue;
			if (b->nslots == cap) {
				cap = cap ? 2 * cap : 64;
				struct rw_slot_name *v = realloc(b->slots, cap * sizeof(*v));
				if (!v)
					return -1;
				b->slots = v;
			}
			bool own = s.st_shndx != SHN_UNDEF && GELF_ST_TYPE(s.st_info) == STT_FUNC;
			b->slots[b->nslots++] = (struct rw_slot_name){r.r_offset, name,
								      own ? s.st_value : 0};
		}
	}
	if (b->nslots)
		qsort(b->slots, b->nslots, sizeof(*b->slots), cmp_slot);
	return 0;
}

static int cmp_export(const void *x, const void *y)
{
	const struct rw_export *a = x, *b = y;
	int c = strcmp(a->name, b->name);
	return c ? c : a->addr < b->addr ? -1 : a->addr > b->addr;
}

int rw_each_export(Elf *elf, int (*cb)(void *ctx, const char *name, uint64_t value, bool ifunc),
		   void *ctx)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 1; i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *name;
			int type, r;
			if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF ||
			    GELF_ST_BIND(sym.st_info) == STB_LOCAL ||
			    ((type = GELF_ST_TYPE(sym.st_info)) != STT_FUNC && type != STT_GNU_IFUNC) ||
			    !(name = elf_strptr(elf, sh.sh_link, sym.st_name)) || !*name)
				continue;
			if ((r = cb(ctx, name, sym.st_value, type == STT_GNU_IFUNC)) < 0)
				return r;
		}
	}
	return 0;
}

static int add_export(void *ctx, const char *name, uint64_t value, bool ifunc)
{
	struct rw_binary *b = ctx;
	if (!(b->nexports & (b->nexports + 1))) {       /* 0, 1, 3, 7, ...: grow */
		struct rw_export *v = realloc(b->exports, (2 * b->nexports + 1) * sizeof(*v));
		if (!v)
			return -1;
		b->exports = v;
	}
	b->exports[b->nexports++] = (struct rw_export){name, ifunc ? 0 : value, ifunc ? value : 0, 0, 0};
	return 0;
}

/* .dynsym's defined global functions, by name (an entry a version). */
static int load_exports(struct rw_binary *b)
{
	if (rw_each_export(b->elf, add_export, b) < 0)
		return -1;
	qsort(b->exports, b->nexports, sizeof(*b->exports), cmp_export);
	return 0;
}

/* Each IFUNC export's implementations (rw_ifunc_impls), once the
 * functions are known; an IFUNC whose resolver cannot be read has none. */
static int load_ifunc_impls(struct rw_binary *b)
{
	csh cs;
	if (!x86_open(&cs))
		return -1;
	int rc = 0;
	for (size_t i = 0; i < b->nexports && rc == 0; i++) {
		struct rw_export *e = &b->exports[i];
		uint32_t fi[RW_MAX_IFUNC_IMPLS];
		int n = e->resolver ? rw_ifunc_impls(b, cs, e->resolver, fi, RW_MAX_IFUNC_IMPLS) : -1;
		if (n <= 0)
			continue;
		uint64_t *v = realloc(b->impls, (b->nimpls + (size_t)n) * sizeof(*v));
		if (!v) {
			rc = -1;
			break;
		}
		b->impls = v;
		e->impl_at = (uint32_t)b->nimpls;
		e->nimpls = (uint32_t)n;
		for (int k = 0; k < n; k++)
			b->impls[b->nimpls++] = b->funcs[fi[k]].addr;
	}
	cs_close(&cs);
	return rc;
}

/* The first export `name` (its versions follow), or NULL. */
static const struct rw_export *export_of(const struct rw_binary *b, const char *name)
{
	size_t lo = 0, hi = b->nexports;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(b->exports[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->nexports && !strcmp(b->exports[lo].name, name) ? &b->exports[lo] : NULL;
}

/* Add addr to the n functions in out, once; false when max are there. */
static bool add_impl(uint64_t *out, uint32_t *n, uint32_t max, uint64_t addr)
{
	for (uint32_t i = 0; i < *n; i++)
		if (out[i] == addr)
			return true;
	if (*n == max)
		return false;
	out[(*n)++] = addr;
	return true;
}

uint32_t rw_export_impls(const struct rw_binary *b, const char *name, uint64_t *out, uint32_t max)
{
	uint32_t n = 0;
	for (const struct rw_export *e = export_of(b, name);
	     e && e < b->exports + b->nexports && !strcmp(e->name, name); e++) {
		bool fits = true;
		if (e->addr && rw_func_index(b, e->addr) != RW_NONE)
			fits = add_impl(out, &n, max, e->addr);
		for (uint32_t k = 0; k < e->nimpls && fits; k++)
			fits = add_impl(out, &n, max, b->impls[e->impl_at + k]);
		if (!fits)
			return 0;
	}
	return n;
}

/* Where a DT_BIND_NOW can be said in .dynamic: a flag already there to OR
 * into, or a DT_NULL followed by another (the linker's spare entries; the
 * last DT_NULL must stay). */
static void find_bind_now(struct rw_binary *b)
{
	b->bind_now = RW_BIND_NOW_NONE;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(b->elf, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC ||
		    !(d = elf_getdata(scn, NULL)) || !sh.sh_entsize)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Dyn dyn, next;
			if (!gelf_getdyn(d, (int)i, &dyn))
				break;
			if (dyn.d_tag == DT_BIND_NOW ||
			    (dyn.d_tag == DT_FLAGS && (dyn.d_un.d_val & DF_BIND_NOW)) ||
			    (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_NOW))) {
				b->bind_now = RW_BIND_NOW_ALREADY;
				return;
			}
			if (dyn.d_tag == DT_FLAGS ||
			    (dyn.d_tag == DT_FLAGS_1 && b->bind_now != RW_BIND_NOW_FLAGS)) {
				b->bind_now = dyn.d_tag == DT_FLAGS ? RW_BIND_NOW_FLAGS : RW_BIND_NOW_FLAGS_1;
				b->bind_now_at = i;
			}
			if (dyn.d_tag != DT_NULL)
				continue;
			if (b->bind_now == RW_BIND_NOW_NONE && i + 1 < n &&
			    gelf_getdyn(d, (int)i + 1, &next) && next.d_tag == DT_NULL) {
				b->bind_now = RW_BIND_NOW_SPARE;
				b->bind_now_at = i;
			}
			break;
		}
		return;
	}
}

/* ------------------------------------------------------------------ checks */

static const char *scn_name(const struct rw_binary *b, const GElf_Shdr *sh)
{
	const char *n = elf_strptr(b->elf, b->shstrndx, sh->sh_name);
	return n ? n : "";
}

/* Bytes inside a PT_LOAD that no section or header covers must be zero:
 * libelf writes only what sections hold. */
static int check_uncovered(struct rw_binary *b, char *err, size_t errlen)
{
	size_t fsize;
	const char *img = elf_rawfile(b->elf, &fsize);
	size_t phnum;
	if (!img || elf_getphdrnum(b->elf, &phnum))
		return 0;
	uint8_t *cov = calloc(fsize ? fsize : 1, 1);
	if (!cov)
		return 0;
	memset(cov, 1, fsize < 64 ? fsize : 64);
	uint64_t ph_end = b->ehdr.e_phoff + (uint64_t)phnum * b->ehdr.e_phentsize;
	for (uint64_t o = b->ehdr.e_phoff; o < ph_end && o < fsize; o++)
		cov[o] = 1;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(b->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		for (uint64_t o = sh.sh_offset; o < sh.sh_offset + sh.sh_size && o < fsize; o++)
			cov[o] = 1;
	}
	int ret = 0;
	for (size_t i = 0; i < phnum && !ret; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(b->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		for (uint64_t o = ph.p_offset; o < ph.p_offset + ph.p_filesz && o < fsize; o++)
			if (!cov[o] && img[o]) {
				errmsg(err, errlen, "%s: byte at file offset 0x%llx is in a segment but in "
					"no section: icpp rewrite cannot keep it", b->path,
					(unsigned long long)o);
				ret = -1;
				break;
			}
	}
	free(cov);
	return ret;
}

/* What icpp refuses to read, and (for_writing) what it refuses to rewrite. */
static int check_input(struct rw_binary *b, bool for_writing, char *err, size_t errlen)
{
	size_t phnum;
	bool interp = false, dynamic = false, pie = false, ehhdr = false;
	const char *static_rel = NULL;
	if (elf_getphdrnum(b->elf, &phnum))
		goto notelf;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(b->elf, (int)i, &ph))
			goto notelf;
		interp |= ph.p_type == PT_INTERP;
		dynamic |= ph.p_type == PT_DYNAMIC;
		ehhdr |= ph.p_type == PT_GNU_EH_FRAME;
	}
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(b->elf, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh))
			goto notelf;
		const char *name = scn_name(b, &sh);
		if (!strcmp(name, ".eh_frame"))
			b->eh_scn = elf_ndxscn(scn);
		else if (!strcmp(name, ".eh_frame_hdr"))
			b->hdr_scn = elf_ndxscn(scn);
		if ((sh.sh_type == SHT_RELA || sh.sh_type == SHT_REL) && sh.sh_link) {
			GElf_Shdr lsh;
			Elf_Scn *l = elf_getscn(b->elf, sh.sh_link);
			if (l && gelf_getshdr(l, &lsh) && lsh.sh_type == SHT_SYMTAB && !static_rel)
				static_rel = name;
		}
		if (sh.sh_type == SHT_DYNAMIC && (d = elf_getdata(scn, NULL))) {
			size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; i < n; i++) {
				GElf_Dyn dyn;
				if (!gelf_getdyn(d, (int)i, &dyn))
					break;
				if (dyn.d_tag == DT_FLAGS_1 && (dyn.d_un.d_val & DF_1_PIE))
					pie = true;
			}
		}
	}
	if (!for_writing) {
		if (b->eh_scn)
			return 0;
		errmsg(err, errlen, "%s has no .eh_frame: icpp cannot follow its stack pointer",
		       b->path);
		return -1;
	}
	if (!interp && (b->ehdr.e_type == ET_EXEC || pie || !dynamic)) {
		errmsg(err, errlen, "%s is statically linked%s: icpp rewrite needs a dynamically "
			"linked program or a shared object", b->path, pie ? " (static PIE)" : "");
		return -1;
	}
	if (static_rel) {
		errmsg(err, errlen, "%s has static relocations (%s, linked with --emit-relocs): "
			"icpp rewrite does not support them", b->path, static_rel);
		return -1;
	}
	if (!b->eh_scn || !b->hdr_scn || !ehhdr) {
		errmsg(err, errlen, "%s has no .eh_frame/.eh_frame_hdr: icpp rewrite needs the "
			"unwind tables to add its own", b->path);
		return -1;
	}
	return check_uncovered(b, err, errlen);
notelf:
	errmsg(err, errlen, "%s: cannot read its ELF headers: %s", b->path, elf_errmsg(-1));
	return -1;
}

/* ------------------------------------------------------------------ open/close */

struct rw_binary *rw_open(const char *path, char *err, size_t errlen)
{
	return rw_open_mode(path, true, err, errlen);
}

struct rw_binary *rw_open_mode(const char *path, bool for_writing, char *err, size_t errlen)
{
	struct rw_binary *b = calloc(1, sizeof(*b));
	if (!b) {
		errmsg(err, errlen, "out of memory");
		return NULL;
	}
	b->fd = -1;
	b->path = strdup(path);
	b->bin = bin_open(path, err, errlen);
	if (!b->path || !b->bin)
		goto fail;
	elf_version(EV_CURRENT);
	b->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (b->fd < 0 || !(b->elf = elf_begin(b->fd, ELF_C_READ_MMAP, NULL)) ||
	    !gelf_getehdr(b->elf, &b->ehdr) || elf_getshdrnum(b->elf, &b->shnum) ||
	    elf_getshdrstrndx(b->elf, &b->shstrndx)) {
		errmsg(err, errlen, "%s: cannot read it as ELF", path);
		goto fail;
	}
	if (b->shnum >= SHN_LORESERVE || b->ehdr.e_shnum == 0) {
		errmsg(err, errlen, "%s: extended section numbering is not supported", path);
		goto fail;
	}
	if (check_input(b, for_writing, err, errlen))
		goto fail;
	Elf_Scn *escn = elf_getscn(b->elf, b->eh_scn);
	GElf_Shdr esh;
	Elf_Data *ed = escn ? elf_rawdata(escn, NULL) : NULL;
	if (!ed || !gelf_getshdr(escn, &esh)) {
		errmsg(err, errlen, "%s: cannot read .eh_frame", path);
		goto fail;
	}
	char e2[256];
	if (eh_parse(ed->d_buf, ed->d_size, esh.sh_addr, &b->eh, e2, sizeof(e2))) {
		errmsg(err, errlen, "%s: %s", path, e2);
		goto fail;
	}
	if (load_slots(b) || load_exports(b)) {
		errmsg(err, errlen, "out of memory reading %s", path);
		goto fail;
	}
	find_bind_now(b);
	if (rw_analyse(b, err, errlen))
		goto fail;
	if (load_ifunc_impls(b)) {
		errmsg(err, errlen, "out of memory reading %s", path);
		goto fail;
	}
	return b;
fail:
	rw_close(b);
	return NULL;
}

bool rw_may_tail_call(const struct rw_binary *b, uint32_t fi, uint64_t addr)
{
	if (b->funcs[fi].tail_indirect)
		return true;
	const struct rw_unit *u = &b->units[fi];
	for (uint32_t i = 0; i < u->ntail_to; i++)
		if (u->tail_to[i].to == addr || rw_func_index(b, u->tail_to[i].to) == RW_NONE)
			return true;
	return false;
}

/* Is the instruction at `at` a jmp or jcc with a rel32 operand?  (One among
 * the instructions an entry's jump displaces is pointed elsewhere all the
 * same: the displaced copy takes the patch along, write.c add_entry.) */
static bool jump_rel32(const struct rw_binary *b, uint64_t at)
{
	uint8_t op[2];
	if (bin_read(b->bin, at, op, sizeof(op)) < 0)
		return false;
	return op[0] == 0xe9 || (op[0] == 0x0f && (op[1] & 0xf0) == 0x80);
}

/* The function of b that tail jump t reaches: its target, or through a PLT
 * stub whose slot b's own definition fills, that definition (section 1,
 * Bound calls); 0 when none of b. */
static uint64_t tail_dest(const struct rw_binary *b, const struct rw_tail_jump *t)
{
	if (rw_func_index(b, t->to) != RW_NONE)
		return t->to;
	uint64_t own = t->slot ? rw_slot_own(b, t->slot) : 0;
	return own && rw_func_index(b, own) != RW_NONE ? own : 0;
}

static int cmp_tail_at(const void *x, const void *y)
{
	const struct rw_tail_jump *a = x, *b = y;
	return a->at < b->at ? -1 : a->at > b->at;
}

uint32_t rw_tail_jumps(const struct rw_binary *b, uint32_t fi, uint64_t addr,
		       struct rw_tail_jump *out, uint32_t max)
{
	const struct rw_func *f = &b->funcs[fi];
	bool local = rw_func_index(b, addr) != RW_NONE;
	if (!f->tails_known || (f->tail_indirect && !(f->tail_promotable && local)))
		return 0;
	const struct rw_unit *u = &b->units[fi];
	uint32_t n = 0;
	for (uint32_t i = 0; i < u->ntail_to; i++) {
		const struct rw_tail_jump *t = &u->tail_to[i];
		if (local ? tail_dest(b, t) != addr : t->to != addr) {
			if (local && !tail_dest(b, t) && !t->slot)
				return 0;       /* a PLT entry whose slot is unknown */
			continue;
		}
		/* through a slot: to the check of its own definition (a bound
		 * route) or of another module's function, bound at load time */
		if ((!local || t->to != addr) && (!t->slot || b->bind_now == RW_BIND_NOW_NONE))
			return 0;
		/* in fi's own code (not its fragment's): the function a
		 * pathmap names by the jump's address */
		if (!jump_rel32(b, t->at) || rw_func_at(b, t->at) != fi || n == max)
			return 0;
		out[n++] = *t;
	}
	for (uint32_t i = 0; i < u->ntail_ind; i++) {   /* each may reach addr */
		if (n == max)
			return 0;
		out[n++] = u->tail_ind[i];
	}
	qsort(out, n, sizeof(*out), cmp_tail_at);
	return n;
}

/* Jumps js[0..n) as one route: the first jump, dest, and the slot of one
 * that goes through a PLT entry (0: none). */
static struct rw_tail_jump route_of(const struct rw_tail_jump *js, uint32_t n, uint64_t dest)
{
	struct rw_tail_jump r = {.at = js[0].at, .to = dest};
	for (uint32_t i = 0; i < n && !r.slot; i++)
		r.slot = js[i].slot;
	return r;
}

/* May fi's tail jumps, indirect ones among them (tail_promotable), go to a
 * clone of any function of b: those to each function (its direct ones too)
 * rw_tail_jumps takes, as it does to a function none of them names? */
static bool any_route(const struct rw_binary *b, uint32_t fi)
{
	struct rw_tail_jump js[RW_MAX_TAIL_JUMPS];
	const struct rw_unit *u = &b->units[fi];
	if (!rw_tail_jumps(b, fi, b->funcs[fi].addr, js, RW_MAX_TAIL_JUMPS))
		return false;           /* fi's own address: only its jumps to itself */
	for (uint32_t i = 0; i < u->ntail_to; i++) {
		uint64_t d = tail_dest(b, &u->tail_to[i]);     /* 0: another module's */
		if (d && !rw_tail_jumps(b, fi, d, js, RW_MAX_TAIL_JUMPS))
			return false;
	}
	return true;
}

uint32_t rw_tail_routes(const struct rw_binary *b, uint32_t fi, struct rw_tail_jump *out,
			uint32_t max)
{
	const struct rw_unit *u = &b->units[fi];
	if (b->funcs[fi].tail_promotable) {     /* one route, to any function */
		if (!max || !any_route(b, fi))
			return 0;
		out[0] = (struct rw_tail_jump){.at = u->tail_ind[0].at};
		return 1;
	}
	uint32_t n = 0;
	for (uint32_t i = 0; i < u->ntail_to && n < max; i++) {
		uint64_t d = tail_dest(b, &u->tail_to[i]), key = d ? d : u->tail_to[i].to;
		struct rw_tail_jump js[RW_MAX_TAIL_JUMPS];
		bool seen = false;
		for (uint32_t j = 0; j < n && !seen; j++)
			seen = out[j].to == key;
		uint32_t nj = seen ? 0 : rw_tail_jumps(b, fi, key, js, RW_MAX_TAIL_JUMPS);
		if (nj)
			out[n++] = route_of(js, nj, key);
	}
	return n;
}

uint32_t rw_tail_route_at(const struct rw_binary *b, uint64_t site, uint64_t func,
			  struct rw_tail_jump *route, struct rw_tail_jump jumps[RW_MAX_TAIL_JUMPS])
{
	uint32_t fi = rw_func_at(b, site);
	const struct rw_unit *u = fi == RW_NONE ? NULL : &b->units[fi];
	if (u && b->funcs[fi].tail_promotable) {
		uint32_t n = func && u->tail_ind[0].at == site
				     ? rw_tail_jumps(b, fi, func, jumps, RW_MAX_TAIL_JUMPS) : 0;
		if (n) {
			*route = route_of(jumps, n, func);
			route->at = site;
		}
		return n;
	}
	for (uint32_t i = 0; u && i < u->ntail_to; i++) {
		const struct rw_tail_jump *t = &u->tail_to[i];
		uint64_t d = tail_dest(b, t), key = d ? d : t->to;
		if (t->at != site || (func ? key != func : rw_func_index(b, key) != RW_NONE))
			continue;
		uint32_t n = rw_tail_jumps(b, fi, key, jumps, RW_MAX_TAIL_JUMPS);
		if (n && jumps[0].at == site) {
			*route = route_of(jumps, n, key);
			return n;
		}
	}
	return 0;
}

bool rw_tail_calls_self(const struct rw_binary *b, uint32_t fi)
{
	if (b->funcs[fi].tail_indirect)
		return true;
	const struct rw_unit *u = &b->units[fi];
	for (uint32_t i = 0; i < u->ntail_to; i++)
		if (u->tail_to[i].to == b->funcs[fi].addr)
			return true;
	return false;
}

void rw_close(struct rw_binary *b)
{
	if (!b)
		return;
	for (size_t i = 0; b->units && i < b->nfuncs; i++) {
		free(b->units[i].edits);
		free(b->units[i].fdes);
		free(b->units[i].tail_to);
		free(b->units[i].tail_ind);
		free(b->units[i].tables);
	}
	free(b->units);
	free(b->funcs);
	free(b->calls);
	free(b->slots);
	free(b->exports);
	free(b->impls);
	eh_free(&b->eh);
	if (b->elf)
		elf_end(b->elf);
	if (b->fd >= 0)
		close(b->fd);
	if (b->bin)
		bin_close(b->bin);
	free(b->path);
	free(b);
}

struct bin_module *rw_module(const struct rw_binary *b) { return b->bin; }

const struct rw_func *rw_functions(const struct rw_binary *b, size_t *n)
{
	*n = b->nfuncs;
	return b->funcs;
}

const struct rw_call *rw_calls(const struct rw_binary *b, size_t *n)
{
	*n = b->ncalls;
	return b->calls;
}

/* The first function starting at or after addr. */
static size_t func_lower(const struct rw_binary *b, uint64_t addr)
{
	size_t lo = 0, hi = b->nfuncs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (b->funcs[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint32_t rw_func_index(const struct rw_binary *b, uint64_t addr)
{
	size_t lo = func_lower(b, addr);
	return lo < b->nfuncs && b->funcs[lo].addr == addr ? (uint32_t)lo : RW_NONE;
}

uint32_t rw_func_at(const struct rw_binary *b, uint64_t addr)
{
	size_t i = func_lower(b, addr + 1);     /* past the last start <= addr */
	return i && addr < b->funcs[i - 1].addr + b->funcs[i - 1].size ? (uint32_t)(i - 1) : RW_NONE;
}

uint32_t rw_call_index(const struct rw_binary *b, uint64_t site)
{
	size_t lo = 0, hi = b->ncalls;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (b->calls[mid].site < site)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < b->ncalls && b->calls[lo].site == site ? (uint32_t)lo : RW_NONE;
}

/* ------------------------------------------------------------------ reports */

void rw_summarize(const struct rw_binary *b, struct rw_summary *s)
{
	memset(s, 0, sizeof(*s));
	for (size_t i = 0; i < b->nfuncs; i++) {
		const struct rw_func *f = &b->funcs[i];
		s->funcs++;
		if (f->pad_mask > 1 && (!f->pad_entry || f->pad_in_place)) {
			s->paddable++;
			s->entry_beyond += f->pad_entry;
		} else {
			s->pad_refused[f->pad_why]++;
			if (f->pad_entry)
				s->entry_paddable++;
			else
				s->entry_refused[f->entry_why]++;
		}
		s->fp += f->frame == RW_FRAME_FP;
		s->sp += f->frame == RW_FRAME_SP;
		s->frameless += f->frame == RW_FRAME_NONE;
		if (f->cloneable)
			s->cloneable++;
		else
			s->clone_refused[f->clone_why]++;
		s->marked += f->cloneable && f->xcall_mark;
	}
	for (size_t i = 0; i < b->ncalls; i++) {
		s->calls++;
		if (b->calls[i].wrap_mask > 1)
			s->wrappable++;
		else
			s->wrap_refused[b->calls[i].wrap_why]++;
		s->redirectable += b->calls[i].redirectable;
		s->bound += b->calls[i].bind != 0;
		s->taggable += b->calls[i].taggable;
		s->xcallable += b->calls[i].xcallable;
		s->indirect += !b->calls[i].target && !b->calls[i].slot;
		s->promotable += b->calls[i].promote_from != 0;
	}
}

void rw_explain(const struct rw_binary *b, FILE *out)
{
	char buf[512];
	for (size_t i = 0; i < b->nfuncs; i++) {
		const struct rw_func *f = &b->funcs[i];
		const char *name = f->name ? bin_demangle(f->name, buf, sizeof(buf)) : "?";
		fprintf(out, "func 0x%llx %-9s alloc %-5u calls %-4u ", (unsigned long long)f->addr,
			rw_frame_name(f->frame), f->alloc, f->ncalls);
		if (f->pad_entry && f->pad_in_place)
			fprintf(out, "pad <=%-5u in place, <=%u by entry wrapper", f->pad_in_place,
				rw_mask_max(f->pad_mask));
		else if (f->pad_entry)
			fprintf(out, "pad <=%-5u by entry wrapper (in place: %s)", rw_mask_max(f->pad_mask),
				rw_pad_why_name(f->pad_why));
		else if (f->pad_mask > 1)
			fprintf(out, "pad <=%-5u", rw_mask_max(f->pad_mask));
		else if (f->why_at)
			fprintf(out, "refused (%s at 0x%llx)", rw_pad_why_name(f->pad_why),
				(unsigned long long)f->why_at);
		else
			fprintf(out, "refused (%s)", rw_pad_why_name(f->pad_why));
		if ((f->pad_mask <= 1 || (!f->pad_entry && rw_mask_max(f->pad_mask) < RW_MAX_AMOUNT)) &&
		    f->entry_why != RW_ENTRY_SHAPE && f->entry_why != RW_ENTRY_IN_PLACE)
			fprintf(out, " entry wrapper refused (%s)", rw_entry_why_name(f->entry_why));
		if (f->cloneable)
			fprintf(out, !f->dispatch ? " clone ok (direct calls only)"
				     : b->units[i].island.at ? " clone ok (direct calls, dispatch by an island)"
							      : " clone ok (direct calls, dispatch)");
		else
			fprintf(out, " clone refused (%s)", rw_clone_why_name(f->clone_why));
		if (f->cloneable && f->xcall_mark)
			fprintf(out, " marked at 0x%llx", (unsigned long long)f->xcall_mark);
		if (f->forward_to)
			fprintf(out, " forwards to 0x%llx", (unsigned long long)f->forward_to);
		else if (f->forward_symbol)
			fprintf(out, " forwards to %s of another module", f->forward_symbol);
		if (f->tail_promotable)
			fprintf(out, " %u indirect tail jumps promotable%s", b->units[i].ntail_ind,
				any_route(b, (uint32_t)i) ? "" : " (not its other tail jumps)");
		else if (f->tail_indirect)
			fprintf(out, " indirect tail jumps not promotable");
		fprintf(out, " %s\n", name);
	}
	for (size_t i = 0; i < b->ncalls; i++) {
		const struct rw_call *c = &b->calls[i];
		/* the code holding the call: its function, or a fragment of it */
		const struct bin_function *f = bin_function_at(b->bin, c->insn);
		const char *tn = c->target_name ? bin_demangle(c->target_name, buf, sizeof(buf)) : NULL;
		fprintf(out, "call 0x%llx in %s+0x%llx -> ", (unsigned long long)c->site,
			f && f->name ? f->name : "?", (unsigned long long)(f ? c->insn - f->addr : c->insn));
		if (tn)
			fprintf(out, "%s", tn);
		else if (c->target)
			fprintf(out, "0x%llx", (unsigned long long)c->target);
		else
			fprintf(out, "*");
		if (c->wrap_mask > 1)
			fprintf(out, ": wrap >=%u (copies %u)", (unsigned)(__builtin_ctzll(c->wrap_mask & ~1ull) * 16),
				c->stack_args);
		else
			fprintf(out, ": refused (%s)", rw_wrap_why_name(c->wrap_why));
		fprintf(out, "%s%s", c->taggable ? ", tag ok" : "", c->xcallable ? ", xcall ok" : "");
		if (c->promote_from)
			fprintf(out, ", promote ok (from 0x%llx)", (unsigned long long)c->promote_from);
		fputc('\n', out);
	}
}
