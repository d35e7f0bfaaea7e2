/* perf_backend: record without BPF.  perf_event_open on the target's threads
 * (inherited by new threads and children), one ring buffer per CPU, samples
 * with PERF_SAMPLE_IP | TID | REGS_USER (BP, SP, IP).
 *
 * The base of a thread is not in any perf register (the FS entry is the
 * selector, not the fs base), so procs.c finds it: mm->start_stack from
 * /proc/PID/stat on the initial stack (pathmap/thread_base.h), elsewhere the
 * thread's fs base read with ptrace (thread_pointer.h), or for a thread that
 * ended before that, the end of the anonymous mapping holding SP (from MMAP2
 * records with mmap_data, or /proc/PID/maps) minus the process's offset. */
#include <asm/perf_regs.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "collector/recorder.h"
#include "util/grow.h"
#include "sample.h"

struct perf_state {
	int *fds;
	int nfds, capfds;
	struct ring *rings;         /* per CPU index */
	int *ring_fd;               /* the fd each CPU's ring belongs to, or -1 */
	uint64_t sample_type;
	struct sf_counters c;
	int exclude_kernel, no_build_id;  /* what this kernel and user allow */
	unsigned order;             /* ring buffer: 2^order data pages per CPU */
	uint64_t chain[PS_MAX_CALLCHAIN];
};

static bool perf_is_target(struct recorder *r, uint32_t tgid)
{
	return true;                /* per-task events see only the targets */
}

static int add_fd(struct perf_state *p, int fd)
{
	if (p->nfds == p->capfds) {
		int nc = p->capfds ? p->capfds * 2 : 64;
		int *f = realloc(p->fds, nc * sizeof(int));
		if (!f)
			return -1;
		p->fds = f;
		p->capfds = nc;
	}
	p->fds[p->nfds++] = fd;
	return 0;
}

static void make_attr(struct recorder *r, struct perf_state *p, struct perf_event_attr *a,
		      bool exclude_kernel, bool build_id)
{
	ev_attr(&r->ev, r->freq, r->period, a);
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_REGS_USER;
	a->sample_regs_user = (1ULL << PERF_REG_X86_BP) | (1ULL << PERF_REG_X86_SP) |
			      (1ULL << PERF_REG_X86_IP);
	if (r->ev.regs_intr) {
		a->sample_type |= PERF_SAMPLE_REGS_INTR;
		a->sample_regs_intr = a->sample_regs_user;
	}
	if (r->o->validate) {
		a->sample_type |= PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_STACK_USER;
		a->exclude_callchain_kernel = 1;
		a->sample_max_stack = 127;
		a->sample_stack_user = SF_WORDS * 8;
	}
	a->inherit = 1;
	a->mmap = 1;
	a->mmap2 = 1;
	a->mmap_data = 1;           /* thread stacks: their end gives the fs base */
	a->comm = 1;
	a->comm_exec = 1;
	a->task = 1;
	a->build_id = build_id;
	a->exclude_kernel = exclude_kernel;
	a->exclude_hv = 1;
	a->watermark = 1;
	/* few wake-ups: the kernel caps this at the ring size */
	a->wakeup_watermark = (uint32_t)(((size_t)sysconf(_SC_PAGESIZE) << REC_RING_ORDER) / 2);
	if (r->launched) {
		a->disabled = 1;
		a->enable_on_exec = 1;
	}
	p->sample_type = a->sample_type;
}

static int open_one(struct recorder *r, struct perf_state *p, pid_t tid, int ci, char *err,
		    size_t errlen)
{
	struct perf_event_attr a;
	int fd;

	for (;;) {
		make_attr(r, p, &a, p->exclude_kernel, !p->no_build_id);
		fd = (int)ev_open(&a, tid, r->cpus[ci], -1, PERF_FLAG_FD_CLOEXEC);
		if (fd >= 0)
			break;
		if ((errno == EACCES || errno == EPERM) && !p->exclude_kernel) {
			p->exclude_kernel = 1;      /* unprivileged: user mode only */
			r->no_kernel = true;
			continue;
		}
		if (errno == EINVAL && !p->no_build_id) {
			p->no_build_id = 1;         /* kernel before 5.12 */
			continue;
		}
		if (errno == ESRCH)
			return 1;                   /* the thread is gone: skip it */
		char what[96];
		snprintf(what, sizeof(what), "perf event %s on thread %d, CPU %d", r->ev.name, tid,
			 r->cpus[ci]);
		ev_explain(&r->ev, errno, what, err, errlen);
		return -1;
	}
	if (add_fd(p, fd)) {
		close(fd);
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (p->ring_fd[ci] < 0) {
		/* An unprivileged user may lock only kernel.perf_event_mlock_kb
		 * (516 KiB by default) for all rings: shrink them until they fit. */
		while (ring_map(&p->rings[ci], fd, p->order) && (errno == EPERM || errno == ENOMEM) &&
		       p->order > 1)
			p->order--;
		if (!p->rings[ci].base) {
			snprintf(err, errlen, "cannot map the perf ring buffer: %s%s", strerror(errno),
				 errno == EPERM ? " (raise kernel.perf_event_mlock_kb)" : "");
			return -1;
		}
		p->ring_fd[ci] = fd;
	} else if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, p->ring_fd[ci])) {
		snprintf(err, errlen, "cannot share CPU %d's ring buffer: %s", r->cpus[ci], strerror(errno));
		return -1;
	}
	return 0;
}

static int perf_open(struct recorder *r, char *err, size_t errlen)
{
	struct perf_state *p = calloc(1, sizeof(*p));
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->bk = p;
	r->is_target = perf_is_target;
	p->order = REC_RING_ORDER;
	p->rings = calloc(r->ncpus, sizeof(*p->rings));
	p->ring_fd = malloc(r->ncpus * sizeof(int));
	if (!p->rings || !p->ring_fd) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < r->ncpus; i++)
		p->ring_fd[i] = -1;

	/* The launched child has one thread; an attached process has its
	 * threads in /proc/PID/task (threads created later inherit). */
	pid_t *tids = NULL;
	size_t ntids = 0;
	uint32_t cap = 0;
	if (r->launched) {
		tids = malloc(sizeof(pid_t));
		if (tids)
			tids[ntids++] = r->target;
	} else {
		char path[64];
		snprintf(path, sizeof(path), "/proc/%d/task", r->target);
		DIR *d = opendir(path);
		struct dirent *de;
		if (!d) {
			snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
			return -1;
		}
		while ((de = readdir(d))) {
			pid_t t = (pid_t)atoi(de->d_name);
			if (t <= 0)
				continue;
			if (!grow_array((void **)&tids, (uint64_t)ntids + 1, &cap, sizeof(*tids)))
				break;
			tids[ntids++] = t;
		}
		closedir(d);
	}
	if (!tids || !ntids) {
		free(tids);
		snprintf(err, errlen, "process %d has no threads to sample", r->target);
		return -1;
	}
	int opened = 0;
	for (size_t t = 0; t < ntids; t++)
		for (int i = 0; i < r->ncpus; i++) {
			int rc = open_one(r, p, tids[t], i, err, errlen);
			if (rc < 0) {
				free(tids);
				return -1;
			}
			opened += rc == 0;
		}
	free(tids);
	if (!opened) {
		snprintf(err, errlen, "process %d is gone", r->target);
		return -1;
	}
	return 0;
}

static bool kernel_addr(uint64_t a)
{
	return a >> 63;
}

static void on_sample(struct recorder *r, struct perf_state *p, const struct perf_event_header *h)
{
	struct rec_sample s;
	if (parse_sample(h, p->sample_type, &s, p->chain))
		return;
	p->c.samples++;
	if (!procs_has(r->procs, s.pid))
		procs_add(r->procs, s.pid, 0, true);

	uint64_t ip = s.uip, sp = s.usp, bp = s.ubp;
	struct sf_record rec = {0};
	if (r->ev.regs_intr && s.intr_abi && !kernel_addr(s.ip)) {
		ip = s.ip;          /* PEBS: IP and regs of the same instant */
		sp = s.isp;
		bp = s.ibp;
	}
	if (kernel_addr(s.ip)) {
		rec.flags |= SF_R_KERNEL;
		p->c.kernel_hits++;
	}
	if (!s.user_abi || !ip || kernel_addr(ip) || !sp) {
		p->c.no_user_regs++;
		return;
	}
	bool initial_stack;
	uint64_t base = procs_base(r->procs, s.pid, s.tid, sp, &initial_stack);
	if (initial_stack)
		rec.flags |= SF_R_MAIN;
	struct icpp_key key = {.flags = rec.flags};
	icpp_key_offsets(&key, base, sp, bp);   /* as the BPF program does */
	rec.tgid = s.pid;
	rec.ip = ip;
	rec.stack = SF_NONE;
	rec.flags = key.flags;
	rec.sp_off = key.sp_off;
	rec.bp_off = key.bp_off;
	if (!base)
		p->c.unknown_base++;
	rec.count = 1;
	if (r->o->validate) {
		if (s.nr_chain)
			rec.stack = sf_add_stack(r->ss, s.chain, (uint32_t)s.nr_chain);
		else
			p->c.stack_errors++;
		if (s.stack_size >= SF_WORDS * 8) {
			rec.nwords = SF_WORDS;
			memcpy(rec.words, s.stack, SF_WORDS * 8);
		}
	}
	sf_add_record(r->ss, &rec);
}

static void on_record(const struct perf_event_header *h, void *ctx)
{
	struct recorder *r = ctx;
	struct perf_state *p = r->bk;
	if (h->type == PERF_RECORD_SAMPLE)
		on_sample(r, p, h);
	else if (h->type == PERF_RECORD_FORK) {
		struct rec_task t;
		if (parse_task(h, &t) == 0) {
			if (t.pid != t.ppid)
				p->c.forks++;
			else                /* a thread */
				procs_new_thread(r->procs, t.pid, t.tid);
		}
		rec_sideband(r, h, &p->c.lost);
	} else
		rec_sideband(r, h, &p->c.lost);
}

static void perf_poll(struct recorder *r)
{
	struct perf_state *p = r->bk;
	for (int i = 0; i < r->ncpus; i++)
		ring_drain(&p->rings[i], on_record, r);
}

static void perf_drain(struct recorder *r)
{
	perf_poll(r);
}

static void perf_counters(struct recorder *r, struct sf_counters *c)
{
	struct perf_state *p = r->bk;
	*c = p->c;
}

static void perf_stop(struct recorder *r)
{
	struct perf_state *p = r->bk;
	for (int i = 0; i < p->nfds; i++)
		ioctl(p->fds[i], PERF_EVENT_IOC_DISABLE, 0);
}

static void perf_close(struct recorder *r)
{
	struct perf_state *p = r->bk;
	if (!p)
		return;
	if (p->rings)
		for (int i = 0; i < r->ncpus; i++)
			ring_unmap(&p->rings[i]);
	for (int i = 0; i < p->nfds; i++)
		close(p->fds[i]);
	free(p->fds);
	free(p->rings);
	free(p->ring_fd);
	free(p);
	r->bk = NULL;
}

const struct backend perf_backend = {
	.name = "perf",
	.open = perf_open,
	.poll = perf_poll,
	.drain = perf_drain,
	.stop = perf_stop,
	.counters = perf_counters,
	.stats = NULL,
	.close = perf_close,
};
