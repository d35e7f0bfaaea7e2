/* binary: the ELF/DWARF/CFI layer every stage shares (libelf + libdw only).
 *
 * A bin_module is one ELF file opened read-only: an executable or a shared
 * object, PIE or not, stripped or not.  Addresses are the file's own virtual
 * addresses (what symbols and FDEs say); callers convert runtime addresses by
 * subtracting the load bias.
 *
 * Functions come from .symtab (else .dynsym) and the .eh_frame FDEs, so a
 * stripped binary still has its function bounds.  They are sorted by address
 * and never overlap; aliases (several symbols at one address) are one
 * function named by the preferred symbol (global, then weak, then local; then
 * the shortest name) with the largest of their sizes.  An FDE that starts
 * inside a symbol's function is part of it; any other FDE is a function of
 * its own with name NULL (static functions and gcc's .cold parts of a
 * stripped file).  Where two ranges overlap, the later start wins: the
 * earlier function ends there.  .debug_frame is used for CFA rules only:
 * strip removes it together with .symtab, so its FDEs add no function.
 *
 * A stripped file's separate debug file (a -dbgsym package's
 * /usr/lib/debug/.build-id/xx/yyyy.debug, or what .gnu_debuglink names),
 * found and checked by libdwfl's standard search (ICPP_DEBUGINFO_PATH, in
 * its syntax, replaces the default ":.debug:/usr/lib/debug"), gives names
 * to the functions that have none (its symbol at their start, by the alias
 * rule) and source lines; never bounds, so the functions are the same with
 * or without it.
 *
 * The CFA rule at a PC comes from dwarf_cfi_addrframe/dwarf_frame_cfa on
 * .eh_frame (or .debug_frame); icpp normalises a sample at any PC of a
 * function to that function's CFA with it (method.md).
 *
 * Not thread-safe per module; separate modules may be used from separate
 * threads.
 */
#ifndef ICPP_BINARY_H
#define ICPP_BINARY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bin_module;

struct bin_function {
	uint64_t addr;               /* first instruction */
	uint64_t size;               /* bytes (> 0) */
	const char *name;            /* symbol as in the ELF (mangled), or NULL */
	bool from_fde;               /* bounds came from an FDE, not a symbol */
};

/* Open path; NULL with a one-line message naming path in err (missing, not
 * ELF, not 64-bit x86-64, not ET_EXEC/ET_DYN, no sections, truncated, ...).
 * The file stays mapped until bin_close; names point into it. */
struct bin_module *bin_open(const char *path, char *err, size_t errlen);
void bin_close(struct bin_module *m);

const char *bin_path(const struct bin_module *m);
bool bin_is_pic(const struct bin_module *m);           /* ET_DYN: PIE or .so */
bool bin_has_interp(const struct bin_module *m);       /* dynamically linked program */
/* The dynamic loader PT_INTERP names (e.g. /lib64/ld-linux-x86-64.so.2), or
 * NULL: the kernel loads it, so no LD_LIBRARY_PATH replaces it. */
const char *bin_interp(const struct bin_module *m);
/* What the file at path is, from its headers and dynamic section alone
 * (bin_open reads it whole): the loader it names (malloc'd; NULL: none),
 * and whether it is a program (ET_EXEC, or a PIE: DF_1_PIE) rather than a
 * library (libc.so.6 names a loader too: it runs).  0, or -1 when it is not
 * an x86-64 ELF file it could read. */
struct bin_peek {
	char *interp;
	bool program;
};
int bin_peek(const char *path, struct bin_peek *out);
/* Lowest PT_LOAD vaddr rounded down to its page alignment: a runtime address
 * minus (load start - this) is a file vaddr. */
uint64_t bin_load_base(const struct bin_module *m);

/* GNU build-id note; returns its length (0: none) and points *id at it. */
size_t bin_build_id(const struct bin_module *m, const uint8_t **id);
/* The separate debug file that named m's functions or gave its lines, or
 * NULL (none was needed, or none was found that belongs to m). */
const char *bin_debug_file(const struct bin_module *m);
/* Whether m has no .symtab (strip removed it): its functions' names are
 * .dynsym's exports only, or its debug file's. */
bool bin_stripped(const struct bin_module *m);

/* All functions, sorted by address. */
const struct bin_function *bin_functions(const struct bin_module *m, size_t *n);
/* The function containing addr, or NULL. */
const struct bin_function *bin_function_at(const struct bin_module *m, uint64_t addr);
/* icpp rewrite's stub of a tagged, bound or promoted call (a local symbol
 * __icpp_tag_SITE, __icpp_bind_SITE or __icpp_promote_SITE, rewriter.h
 * section 1, Tagged calls, Bound calls and Promoted calls) is no frame: it
 * runs in the frame of the function that makes the call at SITE; so does a
 * clone's veneer (__icpp_veneer_SITE, Cloning), for the clone's jump at SITE.
 * For such a stub f, that function and *site; else NULL. */
const struct bin_function *bin_stub_caller(const struct bin_module *m,
					   const struct bin_function *f, uint64_t *site);
/* Whether f is a clone's veneer (above): entered by a jump, never a call. */
bool bin_veneer(const struct bin_function *f);
/* icpp rewrite's thunk of bound calls (a local symbol __icpp_bindto_CLONE,
 * rewriter.h section 1, Bound calls) runs between a call and the entry of
 * the clone it jumps to, with that entry's CFA: for such a thunk f, the
 * clone's function; else NULL. */
const struct bin_function *bin_thunk_callee(const struct bin_module *m,
					    const struct bin_function *f);

/* Copy len bytes of the file's image at vaddr into buf (from the PT_LOAD
 * segment that holds them all; .bss is not in the file).  0 on success, -1 if
 * not all bytes are there. */
int bin_read(const struct bin_module *m, uint64_t vaddr, void *buf, size_t len);
/* The executable section range holding vaddr: [*start, *end).  0 or -1. */
int bin_exec_range(const struct bin_module *m, uint64_t vaddr, uint64_t *start, uint64_t *end);

/* Whether vaddr lies in a PLT section (.plt, .plt.sec, .plt.got), the stubs
 * that calls into other modules go through; then [*lo, *hi) is the stub
 * holding it: one entry of sh_entsize bytes (the lazy .plt's first one is the
 * code every stub shares on its way to the resolver), or the whole section
 * when sh_entsize is 0.  lo and hi may be NULL. */
bool bin_plt_stub(const struct bin_module *m, uint64_t vaddr, uint64_t *lo, uint64_t *hi);
/* The same, or icpp rewrite's thunk of a call of another module's clone (a
 * local symbol BIN_XCALL_PREFIX..., rewriter.h section 1, Cross-module
 * calls), which runs as a PLT entry does: between a call and its callee's
 * entry, with that entry's CFA; [*lo, *hi) the thunk's symbol. */
#define BIN_XCALL_PREFIX "__icpp_xcall_"
bool bin_call_stub(const struct bin_module *m, uint64_t vaddr, uint64_t *lo, uint64_t *hi);

/* The CFA rule at pc: CFA = value of register `reg` + offset. */
enum bin_cfa_reg { BIN_CFA_RSP = 7, BIN_CFA_RBP = 6 };
struct bin_cfa {
	enum bin_cfa_reg reg;
	int64_t offset;
};
/* 0 and *rule on success; -1 when there is no CFI for pc or the rule is not
 * register+offset at pc (another register, an expression that reads memory).
 * A CFA expression is evaluated at pc: the lazy .plt's rsp + 8 or + 16. */
int bin_cfa_at(struct bin_module *m, uint64_t pc, struct bin_cfa *rule);

/* Where the CFI at pc says the callee-saved registers (rbx, rbp, r12-r15)
 * are saved: *depth is the deepest slot's distance below the CFA (CFA -
 * *depth), 0 when none is saved.  0 on success; -1 when no CFI covers pc. */
int bin_saved_depth(struct bin_module *m, uint64_t pc, int64_t *depth);

/* Whether the CFI covering pc describes a signal frame ('S' augmentation:
 * glibc's __restore_rt, where a signal handler returns to); its FDE's range
 * in *lo, *hi. */
bool bin_signal_frame(struct bin_module *m, uint64_t pc, uint64_t *lo, uint64_t *hi);

/* Symbolisation.  name is demangled for C++ (into the caller's buffer);
 * "fn@0x<start>" for a function without a name; file/line only where DWARF
 * line info exists (file NULL otherwise).  0 when a function covers addr, -1
 * otherwise (name "", file/line still filled when known). */
struct bin_symbol {
	char name[512];              /* "" when no function covers addr */
	uint64_t offset;             /* addr - function start */
	const char *file;            /* owned by the module */
	int line;
};
int bin_symbolize(struct bin_module *m, uint64_t addr, struct bin_symbol *out);

/* Demangle a C++ symbol into buf; copies the input when it is not mangled. */
const char *bin_demangle(const char *sym, char *buf, size_t len);

#endif
