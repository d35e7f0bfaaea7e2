/* internal.h: what binary.c, functions.c, cfi.c and symbolize.c share.
 * Not part of the contract; only binary/ includes it. */
#ifndef ICPP_BINARY_INTERNAL_H
#define ICPP_BINARY_INTERNAL_H

#include <elfutils/libdw.h>
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
};

/* Fill m->funcs from the symbol tables and the .eh_frame FDEs (functions.c). */
int bin_load_functions(struct bin_module *m, char *err, size_t errlen);

/* Where the CFI row libdw finds for pc in cfi starts; at an FDE's first
 * address that is the FDE's start.  0 or -1 (cfi.c). */
int bin_cfi_row_start(Dwarf_CFI *cfi, uint64_t pc, uint64_t *start);

#endif
