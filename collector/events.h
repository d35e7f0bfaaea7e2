/* events: the sampling events `icpp record -e` accepts, and perf_event_open.
 *
 *   cpu-clock   software timer (default): works everywhere, VMs included.
 *   cycles      hardware core cycles (needs the CPU's PMU).
 *   l1d-miss    Intel PEBS mem_load_retired.l1_miss (alias of that name),
 *               precise IP, SP and BP from the PEBS record (REGS_INTR).
 *   ibs-op      AMD IBS op sampling: precise IP, but SP/BP come from the
 *               interrupt (the sample file is marked: CIDs may be off).
 * A hardware event that this machine lacks is refused with one line that
 * suggests -e cpu-clock; nothing falls back silently.
 */
#ifndef ICPP_EVENTS_H
#define ICPP_EVENTS_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct rec_event {
	const char *name;           /* canonical name */
	uint32_t type;              /* perf_event_attr.type */
	uint64_t config;
	uint32_t precise_ip;        /* 0, or the PEBS level asked for */
	bool regs_intr;             /* sample registers from the PEBS record */
	bool skid;                  /* IP precise, SP from the interrupt (IBS) */
	bool hardware;
};

/* Resolve an event name; -1 with one line (unknown name, PMU absent). */
int ev_lookup(const char *name, struct rec_event *ev, char *err, size_t errlen);

/* The attr for sampling ev at freq (Hz) or period (exactly one non-zero). */
void ev_attr(const struct rec_event *ev, uint64_t freq, uint64_t period,
	     struct perf_event_attr *attr);

long ev_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group_fd, unsigned long flags);

/* Explain a perf_event_open errno for ev in one line (what to do). */
void ev_explain(const struct rec_event *ev, int err_no, const char *what, char *err, size_t errlen);

/* Online CPUs, as perf_event_open wants them: ids in cpus[], count returned. */
int ev_online_cpus(int *cpus, int max);

#endif
