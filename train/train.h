/* train: the parent side of `icpp train`.
 *
 * train_run starts the program with the runtime preloaded (protocol.h), serves
 * the runtime's analysis questions from a thread, waits until the program and
 * every process it left behind have ended (it is their subreaper), then reads
 * the record files into a pathmap.  The program's standard streams, exit
 * status and signals are its own; train_run reports the wait status so the
 * caller can exit the same way.
 */
#ifndef ICPP_TRAIN_H
#define ICPP_TRAIN_H

#include <stddef.h>
#include <stdint.h>

#include "pathmap/pathmap.h"
#include "train/protocol.h"

/* What training could not record, and why (from the record files). */
struct train_totals {
	uint64_t processes;      /* record files: one per process image */
	uint64_t threads;
	uint64_t off_stack;      /* entries with SP off the thread's stack */
	uint64_t nested;         /* entries while the runtime ran (not recorded) */
	uint64_t too_deep;       /* entries past the shadow stack */
	uint64_t in_signal;      /* entries in signal handlers */
	uint64_t in_realign;     /* entries under a frame that realigned the stack */
	uint64_t nodes_full;     /* entries after a node log filled up */
	uint64_t invalid_nodes;  /* nodes a dying process left half-written */
	uint64_t stale_frames;   /* paths whose recorded parent had returned */
	uint64_t rebuilt_frames; /* callers without a seen entry, rebuilt from CFI */
	uint64_t unrebuilt;      /* paths dropped: such a caller could not be rebuilt */
	/* Per pathmap module (index as in the pathmap): functions not hooked,
	 * by reason (train/protocol.h enum train_skip). */
	uint32_t (*skipped)[SKIP_NREASONS];
	uint32_t nskipped;       /* entries in skipped */
};

struct train_result {
	int wait_status;         /* of the program, as waitpid reports it */
	struct train_totals totals;
};

/* Run argv[0] (searched in PATH) with the runtime at runtime_path preloaded
 * and add what it recorded to pm.  0 on success; -1 and a one-line err when
 * training could not happen (the program may still have run). */
int train_run(char *const argv[], const char *runtime_path, struct pathmap *pm,
	      struct train_result *res, char *err, size_t errlen);
void train_result_free(struct train_result *res);

/* Where libicpp-train.so is: $ICPP_RUNTIME, else beside the icpp executable,
 * else ../lib/icpp/ from it.  -1 with err if none exists. */
int train_find_runtime(char *out, size_t len, char *err, size_t errlen);

#endif
