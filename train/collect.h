/* collect: turn the record files of one training run (protocol.h) into
 * pathmap nodes.  Functions and callsites are mapped from runtime addresses
 * to (module, ELF vaddr) with the module table each file carries, and named
 * from the analysis cache's ELF files. */
#ifndef ICPP_TRAIN_COLLECT_H
#define ICPP_TRAIN_COLLECT_H

#include "pathmap/pathmap.h"
#include "train/analysis.h"
#include "train/train.h"

/* Add every record file in dir to pm; -1 with err on a file that cannot be
 * read at all (a half-written node is skipped and counted instead). */
int collect_records(const char *dir, struct analysis_cache *cache, struct pathmap *pm,
		    struct train_totals *tot, char *err, size_t errlen);

#endif
