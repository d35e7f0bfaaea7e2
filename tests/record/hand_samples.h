/* Sample files and pathmaps made by hand for the report's tests
 * (t_report_plt, t_report_wrap, t_report_dispatch, t_report_procs): one
 * process (pid 100) with one module, the program under test, mapped at
 * HAND_BIAS (hand_map adds others). */
#ifndef ICPP_TESTS_HAND_SAMPLES_H
#define ICPP_TESTS_HAND_SAMPLES_H

#include <stdbool.h>
#include <stdint.h>

#include "binary/binary.h"
#include "collector/samplefile.h"
#include "pathmap/pathmap.h"
#include "report/report.h"

#define HAND_BIAS 0x555555554000ULL

/* The program under test, argv[1] of `usage` (PROG WORKDIR), opened; NULL
 * after a line on stderr. */
struct bin_module *hand_open(int argc, char **argv, const char *usage);
/* The function of m named name, or NULL. */
const struct bin_function *hand_function(struct bin_module *m, const char *name);
/* A cpu-clock sample set of `comm` with module m (file path) mapped; NULL
 * when out of memory. */
struct sample_set *hand_samples(struct bin_module *m, const char *path, const char *comm,
				uint64_t nsamples);
/* Another module file mapped by the process, without a build-id, at
 * start (a range of 1 MiB); false when out of memory. */
bool hand_map(struct sample_set *ss, const char *path, uint64_t start);
/* One record: IP at ELF address vaddr, SP and BP as offsets below the base
 * (bp_off counts when flags has SF_R_BP_VALID); false when out of memory. */
bool hand_sample(struct sample_set *ss, uint64_t vaddr, int64_t sp_off, int64_t bp_off,
		 uint32_t flags, uint64_t count);
/* One record at ELF address vaddr in a frame at height h, with RSP-based
 * CFI there (SP is the CFA less its rule); false when not or out of memory. */
bool hand_sample_in_frame(struct sample_set *ss, struct bin_module *m, uint64_t vaddr, int64_t h,
			  uint64_t count);
/* A pathmap of module m (file path) with function f alone at height
 * h_func, its clone alone at h_clone, and both at h_both: the frames a
 * sample in f's dispatch may be in.  Named the_func and the_clone; NULL
 * when out of memory. */
struct pathmap *hand_clone_map(struct bin_module *m, const char *path,
			       const struct bin_function *f, const struct bin_function *clone,
			       int64_t h_func, int64_t h_clone, int64_t h_both);

/* Write pm and ss to DIR/NAME.icpp and DIR/NAME.samples, run the report in
 * `format` (RP_FOLDED or RP_TEXT) to DIR/NAME.folded or .txt and return its
 * text (static, up to 8 KiB), or NULL after a line on stderr. */
const char *hand_report(struct pathmap *pm, struct sample_set *ss, const char *dir, const char *name,
			enum rp_format format);

#endif
