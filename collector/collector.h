/* collector: `icpp record`, the user side of recording.
 *
 * Two backends write the same sample file:
 *   bpf   bpf/sample.bpf.c on one system-wide perf event per CPU, filtered by
 *         the target's tgid set (children added by a fork tracepoint); counts
 *         live in a BPF hash map that user space drains twice a second (double
 *         buffered), modules come from a side-band perf event (MMAP2 records).
 *         Needs root (CAP_BPF + CAP_PERFMON).
 *   perf  perf_event_open on the target itself (inherited by its threads and
 *         children), PERF_SAMPLE_IP | TID | REGS_USER, read from the mmap ring
 *         buffers; works for an unprivileged user on his own processes.
 * The automatic choice takes bpf when it can load, perf otherwise, and says
 * which and why on stderr.
 */
#ifndef ICPP_COLLECTOR_H
#define ICPP_COLLECTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum rec_backend_choice { REC_BACKEND_AUTO, REC_BACKEND_BPF, REC_BACKEND_PERF };

struct rec_opts {
	const char *event;          /* default "cpu-clock" */
	uint64_t freq;              /* -F (Hz) */
	uint64_t period;            /* -c (events); freq wins when both are 0: 999 Hz */
	const char *output;         /* default "icpp.samples" */
	enum rec_backend_choice backend;
	bool validate;              /* also record the real user stack per sample */
	pid_t pid;                  /* -p, or 0 */
	char **argv;                /* -- CMD ARGS (NULL-terminated), or NULL */
	bool quiet;
	double duration;            /* seconds, 0: until the target ends or Ctrl-C */
	bool bpf_stats;             /* print the BPF program's run time per sample */
};

/* Record; 0 on success, -1 with one line in err.  The command's own exit
 * status is reported on stderr, not returned. */
int rec_run(const struct rec_opts *o, char *err, size_t errlen);

#endif
