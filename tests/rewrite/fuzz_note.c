/* fuzz_note: libFuzzer target for the "icpp" note a rewritten binary carries
 * (rw_note_parse, rewriter/note.c; layout RW_NOTE_VERSION), which icpp
 * verify and report read from any file they are given.  Every input is
 * parsed or refused without a fault (AddressSanitizer, UBSan); a parsed
 * note's tables and plan lie within the input.
 *   cmake -DICPP_FUZZ=ON -DCMAKE_C_COMPILER=clang ...; fuzz_note CORPUS_DIR */
#include <stdlib.h>
#include <string.h>

#include "rewriter/rewriter.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rw_note n;
	int r = rw_note_parse(data, size, &n);
	if (r == 0) {
		size_t need = (size_t)n.nwraps * 24 + (size_t)n.nclones * 68 +
			      (size_t)n.nentries * 24 + strlen(n.plan) + n.orig_id_len;
		if (need > size || n.orig_id_len > PM_BUILD_ID_MAX)
			abort();
		for (uint32_t i = 1; i < n.nwraps; i++)
			if (n.wraps[i].tramp < n.wraps[i - 1].tramp)
				abort();
	}
	rw_note_free(&n);       /* also what a refused one holds */
	return 0;
}
