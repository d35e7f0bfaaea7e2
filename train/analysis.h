/* analysis: which functions of a module training hooks, and how.
 *
 * For every function the binary layer finds (symbols and FDEs), decide the
 * bytes the runtime displaces to put a 5-byte jmp at the entry: endbr64 stays
 * in place; whole instructions covering at least 5 bytes move, but only if
 * every one can be relocated (x86/reloc.h) and no direct branch anywhere in
 * the module lands inside them (it would skip or re-run the hook).  Where a
 * branch does land there, or the function is too short, a 2-byte jmp (rel8)
 * at the entry displaces fewer bytes and goes to an island: the 5-byte jmp,
 * written into the nop padding just before the function (SITE_ISLAND; code
 * falling through the padding meets the island and is hooked as if it had
 * reached the entry).  Otherwise a
 * function shorter than 5 bytes is hooked only when it ends in ret/jmp and the
 * alignment padding after it can take the rest of the jmp; its last
 * displaced instruction may itself run into that padding (the jmp that
 * icpp rewrite writes at such a function's entry for a dispatch).  The CFA at the
 * entry comes from the CFI (rsp+8 for an ordinary function, more for ld.so's
 * resolver or a .cold fragment); an entry whose CFA is not rsp-relative (the
 * PLT, the signal trampoline) is skipped.  A function that realigns the
 * stack beyond 16 bytes (ld.so's lazy-binding resolvers) is marked: heights
 * below it depend on the base's alignment.
 *
 * Results are cached per path for the life of an `icpp train` run.
 *
 * Kept between runs (analysis_store.h): the analysis of a module with a
 * build-id is written to $ICPP_CACHE_DIR (else $XDG_CACHE_HOME/icpp, else
 * ~/.cache/icpp; ICPP_CACHE_DIR= turns it off) and read back by the same
 * build of icpp for the same file, as perf keeps its build-id cache: the
 * scan of every instruction of libLLVM and libclang-cpp took clang 16 s
 * of start-up per run.
 */
#ifndef ICPP_TRAIN_ANALYSIS_H
#define ICPP_TRAIN_ANALYSIS_H

#include <stdbool.h>
#include <stddef.h>

#include "binary/binary.h"
#include "train/protocol.h"

struct analysed_module {
	char *path;
	struct bin_module *bin;          /* NULL when the file could not be opened */
	struct train_reply reply;        /* status, counts, error */
	struct train_site *sites;
	uint64_t *fragments;             /* starts of the functions entered with a
	                                  * frame built, by a jump from another
	                                  * function (.cold fragments), hooked or
	                                  * not; ascending */
	size_t nfragments;
	bool from_store;                 /* read back from the store, not analysed */
};

struct analysis_cache;

struct analysis_cache *analysis_cache_new(void);
void analysis_cache_free(struct analysis_cache *c);
/* Analyse path (once); never NULL unless out of memory.  Thread-safe. */
const struct analysed_module *analysis_get(struct analysis_cache *c, const char *path);
/* The hook site of the function starting at addr, NULL when it is not
 * trained. */
const struct train_site *analysis_site(const struct analysed_module *am, uint64_t addr);
/* Is the function starting at addr a .cold fragment?  Also when it is not
 * hooked: gcc may start a fragment with a nop before a landing pad (an LSDA
 * offset of 0 would mean none), so that its owner jumps in past its start,
 * into the bytes the hook would displace. */
bool analysis_fragment(const struct analysed_module *am, uint64_t addr);

#endif
