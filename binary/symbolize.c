/* symbolize.c: names (demangled) and source lines for addresses. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "binary/internal.h"

/* From libstdc++ (the C++ ABI); declared here to keep binary/ in C. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

const char *bin_demangle(const char *sym, char *buf, size_t len)
{
	int status = -1;
	char *d = strncmp(sym, "_Z", 2) ? NULL : __cxa_demangle(sym, NULL, NULL, &status);
	snprintf(buf, len, "%s", status == 0 ? d : sym);
	free(d);
	return buf;
}

/* The CU holding addr: .debug_aranges when present (gcc), else a walk over
 * the CUs' own ranges (clang emits no .debug_aranges by default). */
static int cu_at(Dwarf *dw, uint64_t addr, Dwarf_Die *cu)
{
	if (dwarf_addrdie(dw, addr, cu))
		return 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, cu) && dwarf_haspc(cu, addr) == 1)
			return 0;
		off = next;
	}
	return -1;
}

static void source_line(struct bin_module *m, uint64_t addr, struct bin_symbol *out)
{
	Dwarf_Die cu;
	Dwarf_Line *line;
	Dwarf *dw = bin_line_dwarf(m);
	if (!dw || cu_at(dw, addr, &cu) || !(line = dwarf_getsrc_die(&cu, addr)))
		return;
	out->file = dwarf_linesrc(line, NULL, NULL);
	if (out->file && dwarf_lineno(line, &out->line) != 0)
		out->line = 0;
}

int bin_symbolize(struct bin_module *m, uint64_t addr, struct bin_symbol *out)
{
	memset(out, 0, sizeof(*out));
	source_line(m, addr, out);
	const struct bin_function *f = bin_function_at(m, addr);
	if (!f)
		return -1;
	out->offset = addr - f->addr;
	if (f->name)
		bin_demangle(f->name, out->name, sizeof(out->name));
	else
		snprintf(out->name, sizeof(out->name), "fn@0x%" PRIx64, f->addr);
	return 0;
}
