/* binary.c: opening an ELF file and the facts read straight from its headers
 * (type, segments, executable sections, build-id, raw bytes). */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <elfutils/libdwelf.h>

#include "binary/internal.h"

/* Reject what icpp cannot use, with the reason. */
static int check_header(struct bin_module *m, char *err, size_t errlen)
{
	if (elf_kind(m->elf) != ELF_K_ELF) {
		errmsg(err, errlen, "%s: not an ELF file", m->path);
		return -1;
	}
	if (gelf_getclass(m->elf) != ELFCLASS64) {
		errmsg(err, errlen, "%s: not a 64-bit ELF file (icpp reads x86-64 only)", m->path);
		return -1;
	}
	if (!gelf_getehdr(m->elf, &m->ehdr)) {
		errmsg(err, errlen, "%s: corrupt ELF header: %s", m->path, elf_errmsg(-1));
		return -1;
	}
	if (m->ehdr.e_machine != EM_X86_64) {
		errmsg(err, errlen, "%s: not x86-64 (e_machine %u)", m->path, m->ehdr.e_machine);
		return -1;
	}
	if (m->ehdr.e_type != ET_EXEC && m->ehdr.e_type != ET_DYN) {
		errmsg(err, errlen, "%s: not an executable or shared object (e_type %u)", m->path,
			 m->ehdr.e_type);
		return -1;
	}
	return 0;
}

/* PT_LOAD and PT_INTERP; every loaded byte must be inside the file, so that
 * bin_read never reads past a truncated image. */
static int scan_segments(struct bin_module *m, char *err, size_t errlen)
{
	size_t n;
	if (elf_getphdrnum(m->elf, &n) != 0) {
		errmsg(err, errlen, "%s: corrupt program headers: %s", m->path, elf_errmsg(-1));
		return -1;
	}
	m->load_base = UINT64_MAX;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(m->elf, (int)i, &ph)) {
			errmsg(err, errlen, "%s: corrupt program header %zu", m->path, i);
			return -1;
		}
		if (ph.p_type == PT_INTERP && !m->interp) {
			/* the loader's path, NUL-terminated within the segment */
			if (ph.p_offset > m->image_size || ph.p_filesz > m->image_size - ph.p_offset ||
			    !ph.p_filesz || memchr(m->image + ph.p_offset, 0, ph.p_filesz) == NULL) {
				errmsg(err, errlen, "%s: corrupt PT_INTERP", m->path);
				return -1;
			}
			m->interp = strdup(m->image + ph.p_offset);
			if (!m->interp) {
				errmsg(err, errlen, "out of memory");
				return -1;
			}
		}
		if (ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset > m->image_size || ph.p_filesz > m->image_size - ph.p_offset) {
			errmsg(err, errlen, "%s: truncated (segment %zu ends past the end of the file)",
				 m->path, i);
			return -1;
		}
		uint64_t base = ph.p_vaddr;
		if (ph.p_align > 1 && (ph.p_align & (ph.p_align - 1)) == 0)
			base &= ~(ph.p_align - 1);
		if (base < m->load_base)
			m->load_base = base;
	}
	if (m->load_base == UINT64_MAX) {
		errmsg(err, errlen, "%s: no loadable segment", m->path);
		return -1;
	}
	return 0;
}

/* binutils' names for the stubs that calls into other modules go through. */
static void note_plt(struct bin_module *m, const char *name, const GElf_Shdr *sh)
{
	if (!name || m->nplt == BIN_MAX_PLT ||
	    (strcmp(name, ".plt") && strcmp(name, ".plt.sec") && strcmp(name, ".plt.got")))
		return;
	m->plt[m->nplt++] = (struct bin_plt){sh->sh_addr, sh->sh_addr + sh->sh_size, sh->sh_entsize};
}

/* Executable sections, and a bounds check of every section's file bytes
 * (libelf maps the file lazily and would only fail later, deep in libdw). */
static int scan_sections(struct bin_module *m, char *err, size_t errlen)
{
	size_t n, strndx;
	if (elf_getshdrnum(m->elf, &n) != 0 || elf_getshdrstrndx(m->elf, &strndx) != 0) {
		errmsg(err, errlen, "%s: corrupt section headers: %s", m->path, elf_errmsg(-1));
		return -1;
	}
	if (n == 0) {
		errmsg(err, errlen, "%s: no section headers", m->path);
		return -1;
	}
	m->exec = calloc(n, sizeof(*m->exec));
	if (!m->exec) {
		errmsg(err, errlen, "%s: out of memory", m->path);
		return -1;
	}
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh)) {
			errmsg(err, errlen, "%s: corrupt section header %zu", m->path, elf_ndxscn(scn));
			return -1;
		}
		if (sh.sh_type != SHT_NOBITS &&
		    (sh.sh_offset > m->image_size || sh.sh_size > m->image_size - sh.sh_offset)) {
			errmsg(err, errlen, "%s: truncated (section %zu ends past the end of the file)",
				 m->path, elf_ndxscn(scn));
			return -1;
		}
		if ((sh.sh_flags & SHF_EXECINSTR) && (sh.sh_flags & SHF_ALLOC) && sh.sh_size) {
			m->exec[m->nexec++] = (struct bin_range){sh.sh_addr, sh.sh_addr + sh.sh_size};
			note_plt(m, elf_strptr(m->elf, strndx, sh.sh_name), &sh);
		}
	}
	return 0;
}

/* DWARF and CFI are optional: a stripped file has neither .debug_* nor, at
 * worst, .eh_frame, and still opens. */
static void open_dwarf(struct bin_module *m)
{
	m->eh_cfi = dwarf_getcfi_elf(m->elf);
	m->dwarf = dwarf_begin_elf(m->elf, DWARF_C_READ, NULL);
	if (m->dwarf)
		m->debug_cfi = dwarf_getcfi(m->dwarf);
}

static int open_elf(struct bin_module *m, char *err, size_t errlen)
{
	m->fd = open(m->path, O_RDONLY | O_CLOEXEC);
	if (m->fd < 0) {
		errmsg(err, errlen, "%s: %s", m->path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(m->fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		errmsg(err, errlen, "%s: not a regular file", m->path);
		return -1;
	}
	elf_version(EV_CURRENT);
	m->elf = elf_begin(m->fd, ELF_C_READ_MMAP, NULL);
	if (!m->elf) {
		errmsg(err, errlen, "%s: not an ELF file (%s)", m->path, elf_errmsg(-1));
		return -1;
	}
	m->image = elf_rawfile(m->elf, &m->image_size);
	if (!m->image) {
		errmsg(err, errlen, "%s: not an ELF file", m->path);
		return -1;
	}
	return 0;
}

struct bin_module *bin_open(const char *path, char *err, size_t errlen)
{
	struct bin_module *m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path))) {
		errmsg(err, errlen, "%s: out of memory", path);
		free(m);
		return NULL;
	}
	m->fd = -1;
	if (open_elf(m, err, errlen) || check_header(m, err, errlen) ||
	    scan_segments(m, err, errlen) || scan_sections(m, err, errlen)) {
		bin_close(m);
		return NULL;
	}
	const void *id;
	ssize_t idlen = dwelf_elf_gnu_build_id(m->elf, &id);
	if (idlen > 0) {
		m->build_id = id;
		m->build_id_len = (size_t)idlen;
	}
	open_dwarf(m);
	if (bin_load_functions(m, err, errlen)) {
		bin_close(m);
		return NULL;
	}
	bin_open_debuginfo(m);
	return m;
}

void bin_close(struct bin_module *m)
{
	if (!m)
		return;
	if (m->eh_cfi)
		dwarf_cfi_end(m->eh_cfi);
	if (m->dwarf)
		dwarf_end(m->dwarf);
	if (m->dwfl)
		dwfl_end(m->dwfl);
	if (m->elf)
		elf_end(m->elf);
	if (m->fd >= 0)
		close(m->fd);
	free(m->funcs);
	free(m->exec);
	free(m->interp);
	free(m->path);
	free(m);
}

const char *bin_path(const struct bin_module *m)
{
	return m->path;
}

bool bin_is_pic(const struct bin_module *m)
{
	return m->ehdr.e_type == ET_DYN;
}

/* Does m's dynamic section set DF_1_PIE (a position-independent program)? */
static bool flagged_pie(struct bin_module *m)
{
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(m->elf, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		GElf_Dyn dyn;
		for (size_t i = 0; i < sh.sh_size / sh.sh_entsize && gelf_getdyn(d, (int)i, &dyn); i++)
			if (dyn.d_tag == DT_FLAGS_1)
				return dyn.d_un.d_val & DF_1_PIE;
	}
	return false;
}

int bin_peek(const char *path, struct bin_peek *out)
{
	memset(out, 0, sizeof(*out));
	struct bin_module *m = calloc(1, sizeof(*m));
	if (!m || !(m->path = strdup(path))) {
		free(m);
		return -1;
	}
	m->fd = -1;
	char err[256];
	int rc = -1;
	if (!open_elf(m, err, sizeof(err)) && !check_header(m, err, sizeof(err)) &&
	    !scan_segments(m, err, sizeof(err))) {
		out->interp = m->interp;
		m->interp = NULL;
		out->program = m->ehdr.e_type == ET_EXEC || flagged_pie(m);
		rc = 0;
	}
	bin_close(m);
	return rc;
}

bool bin_has_interp(const struct bin_module *m)
{
	return m->interp != NULL;
}

const char *bin_interp(const struct bin_module *m)
{
	return m->interp;
}

uint64_t bin_load_base(const struct bin_module *m)
{
	return m->load_base;
}

size_t bin_build_id(const struct bin_module *m, const uint8_t **id)
{
	*id = m->build_id;
	return m->build_id_len;
}

/* From the PT_LOAD segment holding the bytes: sections can be absent or lie
 * (sstrip), segments are what the loader maps. */
int bin_read(const struct bin_module *m, uint64_t vaddr, void *buf, size_t len)
{
	size_t n;
	if (elf_getphdrnum(m->elf, &n) != 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(m->elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (vaddr < ph.p_vaddr || vaddr - ph.p_vaddr > ph.p_filesz ||
		    len > ph.p_filesz - (vaddr - ph.p_vaddr))
			continue;
		memcpy(buf, m->image + ph.p_offset + (vaddr - ph.p_vaddr), len);
		return 0;
	}
	return -1;
}

bool bin_plt_stub(const struct bin_module *m, uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	for (size_t i = 0; i < m->nplt; i++) {
		const struct bin_plt *p = &m->plt[i];
		if (vaddr < p->start || vaddr >= p->end)
			continue;
		uint64_t start = p->start, end = p->end;
		if (p->entsize) {
			start = p->start + (vaddr - p->start) / p->entsize * p->entsize;
			end = start + p->entsize < p->end ? start + p->entsize : p->end;
		}
		if (lo)
			*lo = start;
		if (hi)
			*hi = end;
		return true;
	}
	return false;
}

int bin_exec_range(const struct bin_module *m, uint64_t vaddr, uint64_t *start, uint64_t *end)
{
	for (size_t i = 0; i < m->nexec; i++) {
		if (vaddr >= m->exec[i].start && vaddr < m->exec[i].end) {
			*start = m->exec[i].start;
			*end = m->exec[i].end;
			return 0;
		}
	}
	return -1;
}
