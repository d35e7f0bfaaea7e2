/* debuginfo.c: a stripped module's names and source lines from its separate
 * debug file.
 *
 * Debian's binaries are stripped; their -dbgsym packages put the .symtab and
 * the DWARF that strip removed in /usr/lib/debug/.build-id/xx/yyyy.debug.
 * libdwfl's standard search finds that file by the module's build-id (or by
 * the name and CRC in .gnu_debuglink), and checks that it belongs to the
 * module.  Only names and lines come from it: function bounds stay those of
 * the module's own symbols and FDEs (binary.h), so a pathmap, a plan and the
 * analysis kept between trainings mean the same functions whether or not the
 * debug file is installed.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "binary/internal.h"

/* Is name (bind rank `rank`) preferred over cur (cur_rank; NULL: none)?
 * The rule binary.h states for aliases: global, then weak, then local; then
 * the shortest name; then the first in strcmp order. */
static bool name_better(int rank, const char *name, int cur_rank, const char *cur)
{
	if (!cur)
		return true;
	if (rank != cur_rank)
		return rank < cur_rank;
	size_t l = strlen(name), lc = strlen(cur);
	if (l != lc)
		return l < lc;
	return strcmp(name, cur) < 0;
}

/* Name each function that has no name of its own by the debug file's symbol
 * starting exactly there. */
static void name_functions(struct bin_module *m, int n)
{
	int *rank = n > 0 && m->nfuncs ? malloc(m->nfuncs * sizeof(*rank)) : NULL;
	if (!rank)
		return;
	for (size_t i = 0; i < m->nfuncs; i++)
		rank[i] = m->funcs[i].name ? -1 : INT_MAX;  /* -1: a name of its own */
	for (int i = 1; i < n; i++) {
		GElf_Sym s;
		GElf_Addr addr;
		GElf_Word shndx;
		Dwarf_Addr bias;
		const char *name = dwfl_module_getsym_info(m->dwfl_mod, i, &s, &addr, &shndx,
							   NULL, &bias);
		int type = GELF_ST_TYPE(s.st_info);
		if (!name || !*name || s.st_shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		const struct bin_function *f = bin_function_at(m, addr - bias);
		if (!f || f->addr != addr - bias)
			continue;
		size_t k = (size_t)(f - m->funcs);
		int r = bin_bind_rank(s.st_info);
		if (rank[k] >= 0 && name_better(r, name, rank[k], m->funcs[k].name)) {
			m->funcs[k].name = name;
			rank[k] = r;
		}
	}
	free(rank);
}

/* m's module in a libdwfl session of its own, made at the first need. */
static bool dwfl_ready(struct bin_module *m)
{
	if (m->dwfl_tried)
		return m->dwfl_mod != NULL;
	m->dwfl_tried = true;
	m->debuginfo_path = getenv("ICPP_DEBUGINFO_PATH");
	m->dwfl_cb = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = dwfl_standard_find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &m->debuginfo_path,
	};
	m->dwfl = dwfl_begin(&m->dwfl_cb);
	if (!m->dwfl)
		return false;
	m->dwfl_mod = dwfl_report_offline(m->dwfl, m->path, m->path, -1);
	dwfl_report_end(m->dwfl, NULL, NULL);
	return m->dwfl_mod != NULL;
}

/* The separate debug file libdwfl's standard search found for m (it checks
 * that the file belongs to m: its build-id, else the debuglink's CRC). */
static const char *found_debug_file(struct bin_module *m)
{
	const char *debugfile = NULL;
	dwfl_module_info(m->dwfl_mod, NULL, NULL, NULL, NULL, NULL, NULL, &debugfile);
	if (debugfile)
		m->debug_file = debugfile;
	return debugfile;
}

void bin_open_debuginfo(struct bin_module *m)
{
	if (!bin_stripped(m) || !dwfl_ready(m))
		return;         /* names of its own, or no way to look */
	int nsyms = dwfl_module_getsymtab(m->dwfl_mod);         /* runs the search */
	if (found_debug_file(m))
		name_functions(m, nsyms);
}

Dwarf *bin_line_dwarf(struct bin_module *m)
{
	/* the debug file's DWARF only when a line is asked for: libdw
	 * decompresses its sections as it opens them (libc6-dbg's 4 MB) */
	if (m->dwarf)
		return m->dwarf;
	if (m->lines_tried)
		return m->debug_dwarf;
	m->lines_tried = true;
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_ready(m) ? dwfl_module_getdwarf(m->dwfl_mod, &bias) : NULL;
	if (dw && found_debug_file(m))
		m->debug_dwarf = dw;
	return m->debug_dwarf;
}

const char *bin_debug_file(const struct bin_module *m)
{
	return m->debug_file;
}

bool bin_stripped(const struct bin_module *m)
{
	return !bin_section_of_type(m->elf, SHT_SYMTAB);
}
