/* internal.h: what binary.c, functions.c, cfi.c and symbolize.c share.
 * Not part of the contract; only binary/ includes it. */
#ifndef ICPP_BINARY_INTERNAL_H
#define ICPP_BINARY_INTERNAL_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "util/errmsg.h"
#include "binary/binary.h"

struct bin_range {
	uint64_t start, end;         /* [start, end) */
};

/* A PLT section: .plt, .plt.sec or .plt.got. */
struct bin_plt {
	uint64_t start, end;         /* [start, end) */
	uint64_t entsize;            /* bytes per stub; 0: unknown */
};
#define BIN_MAX_PLT 3

struct bin_module {
	char *path;
	int fd;
	Elf *elf;
	const char *image;           /* the whole file (elf_rawfile) */
	size_t image_size;
	GElf_Ehdr ehdr;
	char *interp;                /* what PT_INTERP names (the program's
	                              * dynamic loader), or NULL */
	uint64_t load_base;
	const uint8_t *build_id;     /* points into image; NULL: none */
	size_t build_id_len;
	struct bin_range *exec;      /* SHF_EXECINSTR sections */
	size_t nexec;
	struct bin_plt plt[BIN_MAX_PLT];
	size_t nplt;
	struct bin_function *funcs;
	size_t nfuncs;
	Dwarf_CFI *eh_cfi;           /* .eh_frame; NULL when absent */
	Dwarf *dwarf;                /* NULL without DWARF sections */
	Dwarf_CFI *debug_cfi;        /* .debug_frame, owned by dwarf */
	/* the separate debug file (debuginfo.c), looked for when the module
	 * has no .symtab (names) or no DWARF and a line is asked for */
	Dwfl_Callbacks dwfl_cb;
	char *debuginfo_path;        /* $ICPP_DEBUGINFO_PATH, or NULL: libdwfl's */
	bool dwfl_tried;
	Dwfl *dwfl;                  /* a session of this module's own */
	Dwfl_Module *dwfl_mod;
	const char *debug_file;      /* its path (owned by dwfl), or NULL */
	bool lines_tried;
	Dwarf *debug_dwarf;          /* its DWARF, for lines where the module
	                              * has none (owned by dwfl); NULL: none */
};

/* Fill m->funcs from the symbol tables and the .eh_frame FDEs (functions.c). */
int bin_load_functions(struct bin_module *m, char *err, size_t errlen);

/* The first section of a type, or NULL (functions.c). */
Elf_Scn *bin_section_of_type(Elf *elf, GElf_Word type);
/* A symbol's preference as a function's name by its binding: global 0,
 * weak 1, local 2 (lower is preferred; functions.c). */
int bin_bind_rank(unsigned char info);

/* After bin_load_functions: names for m's unnamed functions from its
 * separate debug file when m has no .symtab; no debug file found (or none
 * that belongs to m) leaves m as it was (debuginfo.c). */
void bin_open_debuginfo(struct bin_module *m);
/* The DWARF of m's source lines: its own, else its debug file's; NULL:
 * none (debuginfo.c). */
Dwarf *bin_line_dwarf(struct bin_module *m);

/* Where the CFI row libdw finds for pc in cfi starts; at an FDE's first
 * address that is the FDE's start.  0 or -1 (cfi.c). */
int bin_cfi_row_start(Dwarf_CFI *cfi, uint64_t pc, uint64_t *start);

#endif
