/* fuzz_ehframe: libFuzzer target for the .eh_frame reader and CFA program
 * editor (rewriter/ehframe.c), which icpp rewrite runs on the .eh_frame of
 * any binary it is given: each input is a section at a fixed address, and
 * no property of ehframe_check.h may fail (nor AddressSanitizer, UBSan).
 *   cmake -DICPP_FUZZ=ON -DCMAKE_C_COMPILER=clang ...; fuzz_ehframe CORPUS_DIR
 * Seeds: the .eh_frame of binaries,
 *   objcopy -O binary --only-section=.eh_frame /usr/bin/lua5.4 CORPUS_DIR/lua */
#include <stdio.h>
#include <stdlib.h>

#include "tests/rewrite/ehframe_check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct ehframe_tally t = {0};
	const char *bad = ehframe_check(data, size, 0x400000, &t);
	if (bad) {
		fprintf(stderr, "fuzz_ehframe: %s\n", bad);
		abort();
	}
	return 0;
}
