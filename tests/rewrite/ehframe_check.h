/* ehframe_check.h: the properties of the .eh_frame reader and editor
 * (rewriter/ehframe.c) that test_ehframe checks on real sections and their
 * mutants and fuzz_ehframe on whatever libFuzzer makes.  icpp rewrite runs
 * that code on the .eh_frame of any binary it is given. */
#ifndef ICPP_TESTS_EHFRAME_CHECK_H
#define ICPP_TESTS_EHFRAME_CHECK_H

#include <stddef.h>
#include <stdint.h>

struct ehframe_tally {
	uint64_t parsed, refused;       /* sections */
	uint64_t fdes, copied, edited;  /* FDEs; CFA programs walked at padding 0 and 32 */
	uint64_t rebuilt;               /* sections rebuilt and parsed again */
};

/* Check the .eh_frame section `data` (at address `vaddr`): it is parsed or
 * refused; once parsed, each FDE's CFA program is walked for eh_args_size,
 * copied byte for byte at padding 0 (eh_edit_cfa), edited at padding 32
 * only where it could be copied, and cut at a row; the section rebuilt
 * with every editable FDE padded, a clone, a one-row copy and a window of
 * rows moved in (eh_window_cfa, rows compared one by one) (eh_build)
 * parses again with the same entries at the same addresses and the edited
 * programs in place.  NULL, or the property that failed. */
const char *ehframe_check(const uint8_t *data, size_t size, uint64_t vaddr,
			  struct ehframe_tally *t);

#endif
