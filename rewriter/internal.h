/* internal.h: what the rewriter's files share.  Not part of the contract. */
#ifndef ICPP_REWRITER_INTERNAL_H
#define ICPP_REWRITER_INTERNAL_H

#include <capstone/capstone.h>
#include <gelf.h>

#include "util/errmsg.h"
#include "binary/binary.h"
#include "binary/eh_encoding.h"
#include "rewriter/rewriter.h"
#include "x86/reloc.h"

/* A growable byte buffer. */
struct rbuf {
	uint8_t *p;
	size_t n, cap;
	bool oom;
};
void rb_put(struct rbuf *b, const void *d, size_t n);
void rb_u8(struct rbuf *b, uint8_t v);
void rb_u32(struct rbuf *b, uint32_t v);
void rb_u64(struct rbuf *b, uint64_t v);
void rb_uleb(struct rbuf *b, uint64_t v);
void rb_sleb(struct rbuf *b, int64_t v);
void rb_align(struct rbuf *b, size_t a, uint8_t fill);
void rb_free(struct rbuf *b);


/* ------------------------------------------------------------ .eh_frame */

struct eh_entry {
	uint64_t off;                /* in the section */
	uint32_t size;               /* whole entry, length field included */
	bool cie;
	/* CIE */
	int fde_enc, lsda_enc, per_enc;   /* DW_EH_PE_*; 0xff when absent */
	uint32_t per_field;          /* offset of the personality pointer in the entry (0: none) */
	uint64_t code_align;
	int64_t data_align;
	uint32_t insn_off;           /* initial instructions (CIE) / instructions (FDE) */
	/* FDE */
	uint32_t cie_index;          /* index of its CIE */
	uint32_t pc_field;           /* offset of pc_begin in the entry */
	uint64_t pc_begin, pc_range;
	uint32_t lsda_field;         /* offset of the LSDA pointer (0: none) */
	uint64_t lsda;               /* 0: none */
};

struct eh_frame {
	const uint8_t *data;         /* the section's bytes (owned by the ELF) */
	size_t size;
	uint64_t vaddr;
	struct eh_entry *e;
	uint32_t n;
	uint32_t *by_pc;             /* FDE entry indices sorted by pc_begin */
	uint32_t nfde;
};

/* Read the .eh_frame section data at address vaddr; 0, or -1 with err.
 * This file's readers and writers run on any binary icpp rewrite is given:
 * tests/rewrite/ehframe_check.h states what they keep, test_ehframe checks
 * it on real sections and their mutants, fuzz_ehframe (libFuzzer) on more. */
int eh_parse(const uint8_t *data, size_t size, uint64_t vaddr, struct eh_frame *eh, char *err,
	     size_t errlen);
void eh_free(struct eh_frame *eh);
/* The FDE covering pc (entry index), or RW_NONE. */
uint32_t eh_fde_at(const struct eh_frame *eh, uint64_t pc);
/* Read a DW_EH_PE-encoded value at p (field at vaddr `at`); advances *p.
 * Supports absptr, (s|u)data2/4/8, (s|u)leb128, pcrel; -1 otherwise. */

/* One call-site record of an LSDA: [start, start+len) lands on lp (0: none). */
struct eh_callsite {
	uint64_t start, len, lp;
};
/* Parse the LSDA at vaddr `lsda` of a function starting at func_start.
 * *out is malloc'd.  0 or -1. */
int eh_lsda(const struct bin_module *m, uint64_t lsda, uint64_t func_start,
	    struct eh_callsite **out, uint32_t *n);

/* A stub's LSDA (stub_lsda.c): for a stub at `start` that makes the call
 * returning to ret (in FDE fde's code, which has an LSDA) in its caller's
 * frame, an LSDA that says of its `range` bytes what fde's says of the call,
 * its landing pads counted from `base` (fde's pc_begin, or where a clone
 * copies that code), written at the end of o, address `at`.  Whether one can
 * be made: the caller's LPStart omitted, its pointers movable (pc-relative,
 * or absolute in a module that is not PIC).  0, or -1. */
bool eh_stub_lsda_ok(const struct bin_module *m, const struct eh_frame *eh, uint32_t fde,
		     uint64_t ret);
int eh_put_stub_lsda(const struct bin_module *m, const struct eh_frame *eh, uint32_t fde,
		     uint64_t ret, uint64_t start, uint32_t range, uint64_t base, uint64_t at,
		     struct rbuf *o);

/* Whether FDE `fde` uses DW_CFA_GNU_args_size with a non-zero size (landing
 * pads then start below the call's rsp), or cannot be read. */
bool eh_args_size(const struct eh_frame *eh, uint32_t fde);

/* Re-encode the CFA program of FDE `fde` for no-frame-pointer padding d:
 * every CFA offset >= k1 of an rsp-based rule, and every register slot saved
 * at CFA - s with s > k0 (inside the allocation), grow by d.  Appends the new
 * instruction bytes to out (may be NULL); -1 when the program holds something
 * that cannot be adjusted (an expression CFA, set_loc, unknown opcodes).
 * With stop (not UINT64_MAX) the program ends at the row of location
 * pc_begin + stop, without its advances: one row, the one at stop. */
int eh_edit_cfa(const struct eh_frame *eh, uint32_t fde, int64_t k0, int64_t k1, int64_t d,
		uint64_t stop, struct rbuf *out);
/* The same for the rows from offset `from` to `stop`: the row at from (no
 * advance), then each later one `lead` bytes plus its distance from `from`
 * further on, up to the row at stop (for code moved whole to lead bytes
 * past the start of its copy's FDE: a tail jump's stub). */
int eh_window_cfa(const struct eh_frame *eh, uint32_t fde, int64_t k0, int64_t k1, int64_t d,
		  uint64_t from, uint64_t stop, uint64_t lead, struct rbuf *out);

/* A new FDE for generated code: rows of CFA = rsp + off from pc onwards. */
struct eh_row {
	uint32_t pc;                 /* offset from start */
	uint32_t cfa;                /* rsp + cfa */
};
struct eh_newfde {
	uint64_t start;
	uint32_t size;
	const struct eh_row *rows;   /* first row at pc 0 must be cfa 8 */
	uint32_t nrows;
};
/* Per-FDE edits for rw_write: replace FDE `fde`'s instructions. */
struct eh_fde_edit {
	uint32_t fde;
	int64_t k0, k1, d;
};
/* A clone's FDE: a copy of FDE edit.fde for the code at `start`, its CFA
 * program edited as edit says when edit.d is not 0 (the clone's padding).
 * A tagged call's stub (section 1 of rewriter.h) takes the row of its call
 * instead: row_at is the call's offset from the FDE's pc_begin, and the
 * copy covers `range` bytes with that row alone (UINT64_MAX: a clone), and
 * points at the stub's own LSDA `lsda` (eh_put_stub_lsda; 0: the FDE's, as a
 * clone's copy and a veneer's, where no call returns).  With `window`, the
 * rows from row_from to row_at instead (eh_window_cfa, lead bytes in). */
struct eh_clonefde {
	struct eh_fde_edit edit;
	uint64_t start;
	uint64_t row_at;
	uint64_t range;
	uint64_t lsda;
	bool window;
	uint64_t row_from, lead;
};
/* Build the merged .eh_frame for address `vaddr`: the old entries in their
 * order (pointers re-encoded, edits applied), the clones' FDEs (sharing the
 * originals' CIEs and LSDAs), then one CIE and the new FDEs, then the
 * terminator.  Also the sorted .eh_frame_hdr for address hdr_vaddr (may be
 * computed with a guess and rebuilt: sizes depend only on counts). */
int eh_build(const struct eh_frame *eh, const struct eh_fde_edit *edits, uint32_t nedits,
	     const struct eh_clonefde *cf, uint32_t ncf, const struct eh_newfde *nf, uint32_t nnew,
	     uint64_t vaddr, uint64_t hdr_vaddr, struct rbuf *frame, struct rbuf *hdr, char *err,
	     size_t errlen);

/* ------------------------------------------------------------ analysis */

/* A field to grow by D when a function is padded: the immediate or
 * displacement at vaddr `at` (size 1 or 4 bytes) holding `value`; the new value
 * is value + sign * D. */
struct rw_edit {
	uint64_t at;
	int64_t value;
	uint8_t size;
	int8_t sign;
};

#define RW_ENTRY_MAX_INSNS 8       /* instructions an entry wrapper displaces at most */
#define RW_ENTRY_MAX_BYTES 16       /* ... and bytes (a patch's room in write.c) */
/* CFA rows of entry code: the guard's, the wrapper's two, one per displaced
 * instruction and a call's copy's (x86/reloc.h), the jump back's */
#define RW_ENTRY_MAX_ROWS (RW_ENTRY_MAX_INSNS + 4 + X86_RELOC_CALL_STEPS)
#define RW_ENTRY_GUARD 16           /* int3 bytes before its trampoline (rewriter.h) */

/* Instructions displaced from a function's entry: the bytes [addr + off,
 * + len), and per instruction CFA - SP before it (k[nins]: after the last)
 * and where it ends (bytes past off). */
struct rw_displaced {
	uint8_t off, len, nins;
	int32_t k[RW_ENTRY_MAX_INSNS + 1];
	uint8_t end[RW_ENTRY_MAX_INSNS];
};

/* An island: the bytes [at, at + len) of the padding before a function,
 * where the entry's jmp rel8 goes; they become a jmp rel32 and nops. */
struct rw_island {
	uint64_t at;
	uint8_t len;
};

/* A switch's table of 32-bit offsets relative to its start, or (abs, in an
 * executable that is no PIE) of 64-bit addresses. */
#define RW_MAX_SWITCH_ENTRIES 4096
struct rw_switch_table {
	uint64_t at;
	uint32_t n;                  /* entries that land in the function */
	bool abs;
};

struct rw_unit {
	struct rw_edit *edits;
	uint32_t nedits;
	uint32_t *fdes;              /* FDEs to re-encode (no-fp): entry indices */
	uint32_t nfdes;
	int64_t k0;                  /* CFA - SP just before the allocation */
	int64_t k1;                  /* CFA - SP right after the allocation */
	/* the instructions the jmp at its entry displaces (an entry wrapper,
	 * a dispatch); when island.at is not 0 that jmp is a jmp rel8 to a jmp
	 * rel32 written there, in the padding before the function
	 * (rewriter.h section 1, Islands) */
	struct rw_displaced entry;
	struct rw_island island;
	/* the alternative by an island, when the padding has room for it
	 * (near_island.at not 0): whole instructions covering 2 bytes */
	struct rw_displaced near;
	struct rw_island near_island;
	bool entry_rel32;            /* a jmp rel32 at its entry displaces whole
	                              * instructions that no branch of its own
	                              * enters: training needs no island before
	                              * it, nor does a dispatch (analyze.c
	                              * find_marks) */
	struct rw_tail_jump *tail_to;        /* its direct tail calls */
	uint32_t ntail_to;
	struct rw_tail_jump *tail_ind;       /* with rw_func.tail_promotable:
	                                      * its indirect ones (to 0) */
	uint32_t ntail_ind;
	/* its relative switch tables,
	 * which its clones copy (rewriter.h section 1, Cloning) */
	struct rw_switch_table *tables;
	uint32_t ntables;
	uint32_t frag;               /* the one fragment of a unit of two ranges
	                              * (function index; a clone copies it too),
	                              * else RW_NONE */
};

struct rw_slot_name {
	uint64_t slot;
	const char *name;
	uint64_t own;                /* the module's own definition of name (a
	                              * FUNC, not an IFUNC), 0: none */
};

struct rw_export {
	const char *name;
	uint64_t addr;               /* a FUNC's (0: an IFUNC) */
	uint64_t resolver;           /* an IFUNC's: its impls */
	uint32_t impl_at, nimpls;    /* ... in rw_binary.impls */
};

/* Each defined, non-local FUNC or IFUNC of elf's .dynsym (a version each):
 * cb(ctx, name, value, ifunc); a negative return stops the walk and is
 * returned, else 0. */
int rw_each_export(Elf *elf, int (*cb)(void *ctx, const char *name, uint64_t value, bool ifunc),
		   void *ctx);

/* The functions (indices) whose addresses an IFUNC resolver takes (`lea
 * impl(%rip)`), the implementations it may return: how many (at most max,
 * each once), or -1 when it takes none, more, or one that is no function
 * start, or cannot be decoded. */
#define RW_MAX_IFUNC_IMPLS 32
int rw_ifunc_impls(const struct rw_binary *lib, csh cs, uint64_t resolver, uint32_t *impls,
		   uint32_t max);

/* How a module can be made to bind its calls at load time (DT_BIND_NOW),
 * which a bound call's stub needs (rewriter.h section 1, Bound calls). */
enum rw_bind_now {
	RW_BIND_NOW_NONE,            /* no .dynamic, or no room for a flag */
	RW_BIND_NOW_ALREADY,         /* DT_BIND_NOW, or a flag says it */
	RW_BIND_NOW_FLAGS,           /* OR DF_BIND_NOW into DT_FLAGS */
	RW_BIND_NOW_FLAGS_1,         /* OR DF_1_NOW into DT_FLAGS_1 */
	RW_BIND_NOW_SPARE,           /* a DT_FLAGS in a spare DT_NULL */
};

struct rw_binary {
	char *path;
	struct bin_module *bin;
	int fd;
	Elf *elf;
	GElf_Ehdr ehdr;
	size_t shnum, shstrndx;
	size_t eh_scn, hdr_scn;      /* section indices of .eh_frame(_hdr) */
	struct eh_frame eh;
	struct rw_func *funcs;
	size_t nfuncs;
	struct rw_unit *units;       /* per function (fragments: empty) */
	struct rw_call *calls;
	size_t ncalls, capcalls;
	struct rw_slot_name *slots;  /* GOT slot -> symbol, sorted */
	size_t nslots;
	struct rw_export *exports;   /* .dynsym's defined FUNCs, sorted by name */
	size_t nexports;
	uint64_t *impls;             /* the IFUNCs' implementations (rw_export) */
	size_t nimpls;
	enum rw_bind_now bind_now;
	size_t bind_now_at;          /* the .dynamic entry it edits */
};

/* The function of b that GOT slot's symbol names, when b defines it
 * itself (a FUNC symbol at a function's start), else 0. */
uint64_t rw_slot_own(const struct rw_binary *b, uint64_t slot);

/* rw_open; for_writing false: only for its analysis (imports.c), without the
 * refusals that are about writing an output (no .eh_frame_hdr, ...). */
struct rw_binary *rw_open_mode(const char *path, bool for_writing, char *err, size_t errlen);
/* Decode and analyse every function (analyze.c). */
int rw_analyse(struct rw_binary *b, char *err, size_t errlen);
/* Set a call's stack-argument bound K, its wrap mask and wrap_why from its
 * caller's bound (args_stored) and the callee's (args_read, -1 unknown):
 * the smaller known one wins. */
void rw_call_bound_args(struct rw_call *rc, int32_t callee);

/* Clones (clone.c).  A clone copies ranges of code, each whole and byte for
 * byte in the same layout (so its FDE and LSDA describe its copy too): the
 * function [lo, hi) to `to`, and its fragment, if any, to its own place. */
struct rw_copy_range {
	uint64_t lo, hi;             /* the original */
	uint64_t to;                 /* its copy's start */
};
/* The ranges a clone of function fi copies, the function's to `to`, its
 * fragment's (units[fi].frag) at the next 16-byte boundary after it: how
 * many (1 or 2) into r. */
uint32_t rw_clone_ranges(const struct rw_binary *b, uint32_t fi, uint64_t to,
			 struct rw_copy_range r[2]);
/* A veneer: the way of a rel8 branch out of a clone to its target, which
 * the copy's rel8 no longer reaches (rewriter.h section 1, Cloning). */
#define RW_MAX_VENEERS 8
#define RW_VENEER_BYTES 5           /* jmp rel32 */
struct rw_veneer {
	uint64_t at;                 /* the veneer */
	uint64_t branch, copy;       /* the branch, and its copy, that jump to it */
	uint64_t target;
};
/* What a clone appends after its copies: its veneers, then the copies of
 * its function's switch tables. */
struct rw_clone_tail {
	uint64_t base;               /* the first veneer: the 16-byte boundary after the last range's copy */
	struct rw_veneer v[RW_MAX_VENEERS];
	uint32_t n;
	/* then, at the 16-byte boundary after room for RW_MAX_VENEERS, the
	 * copies of the unit's switch tables (rw_unit.tables), in order */
	uint64_t tables;
	const struct rw_unit *unit;
};
/* Copy the ranges r[0..n) (r[i].to ascending): a jump or call into any of
 * them goes to its copy, but a call of r[0].lo (the function's entry:
 * recursion calls the original); calls and jumps out go to the originals,
 * a rel8 jump that no longer reaches through a veneer, a switch through a
 * copy of its table (both into v);
 * other rip-relative operands keep their addresses.  Appends the copies to
 * out, r[0]'s at out->n, the gaps filled with int3, then the tail (NULL:
 * only check).  RW_CLONE_OK or why not. */
enum rw_clone_why rw_copy_function(csh cs, const struct rw_binary *b, const struct rw_copy_range *r,
				   uint32_t n, struct rw_clone_tail *v, struct rbuf *out);
/* Whether function fi (analysed, with at most one fragment) can be cloned:
 * its code, and per range its FDE (exactly the range, pc-relative) and its
 * LSDA (LPStart omitted, landing pads in the range). */
enum rw_clone_why rw_clone_check(csh cs, const struct rw_binary *b, uint32_t fi);
/* The address of the copy of original code at addr in clone c (either
 * range), or 0 when c copies no code there (note.c). */
uint64_t rw_clone_copy_addr(const struct rw_note_clone *c, uint64_t addr);
/* The other way: the original code that clone c's copy at addr copies, or
 * 0 when addr is not in c's copies. */
uint64_t rw_clone_orig_addr(const struct rw_note_clone *c, uint64_t addr);

/* Entry code (entry.c): entry wrappers and dispatches, appended to text
 * (its first byte at text_vaddr): code from the guard on, its FDE rows, and
 * the bytes that replace fi's displaced instructions. */
struct rw_entry_code {
	uint64_t addr;               /* the guard G: FDE and symbol start */
	uint32_t size;
	struct eh_row rows[RW_ENTRY_MAX_ROWS];
	uint32_t nrows;
	uint64_t patch_at;           /* fi's displaced instructions */
	uint8_t patch[RW_ENTRY_MAX_BYTES];   /* jmp T (or jmp rel8 to the
	                                      * island), then int3 */
	uint8_t patch_len;
	uint64_t island_at;          /* 0, or the island: jmp T, then nops */
	uint8_t island[RW_ENTRY_MAX_BYTES];
	uint8_t island_len;
};
struct rw_dispatch_test {
	uint64_t ret;                /* a return address of fi's module */
	uint64_t dest;               /* the clone that takes its frames */
	uint64_t tag;                /* not 0: the tag of a call of another module
	                              * (ret unused) */
	uint64_t weight;             /* how often it matches (training's entries
	                              * of the clone; 0: unknown): the search
	                              * reaches the heavier tests sooner */
};
/* Tagged calls (rewriter.h section 1): the tag's halves lie at these offsets
 * from the return address; a dispatch reads them only when the return
 * address is not in the first RW_TAG_SHIFT bytes of a page (so they are in
 * its page), and the rewriter moves a tagged return address out of those. */
#define RW_TAG_LO (-17)
#define RW_TAG_HI (-10)
#define RW_TAG_SHIFT 32
#define RW_TAG_PAGE_MASK 0xfe0
/* A dispatch's tests (rewriter.h section 1), at text_vaddr + text->n: the
 * search over the return addresses of the tests without a tag, then the
 * search over the tags; a test that matches jumps to its dest, and none
 * falls through past the code, with only %r11 and the flags changed.  At
 * most RW_MAX_DISPATCH tests of each kind.  -1 when a dest or a return
 * address is out of rel32 reach. */
int rw_emit_dispatch(struct rbuf *text, uint64_t text_vaddr, const struct rw_dispatch_test *tests,
		     uint32_t ntests);
/* Entry code of function fi: its dispatch tests (any), then its entry
 * wrapper padded by w (none when w is 0), then its displaced instructions
 * as head holds them (entry.len bytes from entry.off: the rewritten image's,
 * with fi's in-place padding and the changes of a displaced call). */
int rw_emit_entry(csh cs, const struct rw_binary *b, uint32_t fi, uint32_t w, const uint8_t *head,
		  const struct rw_dispatch_test *tests, uint32_t ntests, uint64_t text_vaddr,
		  struct rbuf *text, struct rw_entry_code *out, char *err, size_t errlen);

/* W of the entry wrapper of pathmap function `func` when it is a function of
 * module `module` that the note lists as entry-wrapped, else 0. */
uint32_t rw_entry_bytes(const struct rw_note *n, const struct pathmap *pm, uint32_t module,
			uint32_t func);

/* SHA-1 (build-ids). */
struct rw_sha1 {
	uint32_t h[5];
	uint64_t len;
	uint8_t buf[64];
};
void rw_sha1_init(struct rw_sha1 *s);
void rw_sha1_update(struct rw_sha1 *s, const void *d, size_t n);
void rw_sha1_final(struct rw_sha1 *s, uint8_t out[20]);

#endif
