/* recorder: state shared by record.c and the two backends (internal). */
#ifndef ICPP_RECORDER_H
#define ICPP_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "collector/collector.h"
#include "collector/events.h"
#include "collector/procs.h"
#include "collector/ring.h"
#include "collector/samplefile.h"

#define REC_MAX_CPUS 1024

struct recorder {
	const struct rec_opts *o;
	struct rec_event ev;
	uint64_t freq, period;
	struct sample_set *ss;
	struct procs *procs;
	pid_t target;               /* the launched child or -p PID */
	bool launched;              /* target waits for its exec */
	int cpus[REC_MAX_CPUS];
	int ncpus;
	bool no_kernel;             /* kernel-mode time is not sampled */
	void *bk;                   /* backend state */
	/* Is tgid followed?  (side-band records of other processes are ignored) */
	bool (*is_target)(struct recorder *r, uint32_t tgid);
};

struct backend {
	const char *name;
	/* Open events and attach to r->target (still before its exec when
	 * launched); -1 with err. */
	int (*open)(struct recorder *r, char *err, size_t errlen);
	/* Read what has arrived (side-band, samples).  Cheap; called often. */
	void (*poll)(struct recorder *r);
	/* Move aggregated counts into r->ss (BPF maps); called twice a second. */
	void (*drain)(struct recorder *r);
	/* Stop sampling (then a last poll and drain collect the rest). */
	void (*stop)(struct recorder *r);
	/* Counters so far. */
	void (*counters)(struct recorder *r, struct sf_counters *c);
	/* Print the program's cost (--bpf-stats); may be NULL. */
	void (*stats)(struct recorder *r);
	void (*close)(struct recorder *r);
};

extern const struct backend bpf_backend;
extern const struct backend perf_backend;

/* Side-band records common to both backends (MMAP2, FORK, COMM, LOST);
 * returns 1 when h was one of them. */
int rec_sideband(struct recorder *r, const struct perf_event_header *h, uint64_t *lost);

/* Open a per-CPU ring buffer for fd (or redirect fd into the CPU's ring). */
#define REC_RING_ORDER 7            /* 128 pages per CPU */

#endif
