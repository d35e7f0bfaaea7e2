/* record: launch or attach, choose a backend, loop until the target ends,
 * the duration passes or Ctrl-C, then write the sample file atomically. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "collector/collector.h"
#include "collector/recorder.h"

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig)
{
	stop_signal = sig;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int rec_sideband(struct recorder *r, const struct perf_event_header *h, uint64_t *lost)
{
	switch (h->type) {
	case PERF_RECORD_MMAP2: {
		struct rec_mmap2 m;
		if (parse_mmap2(h, &m))
			return 1;
		if (!procs_has(r->procs, m.pid)) {
			if (!r->is_target(r, m.pid))
				return 1;
			procs_add(r->procs, m.pid, 0, false);
		}
		procs_mmap(r->procs, m.pid, m.addr, m.len, m.pgoff, m.prot, m.filename, m.build_id,
			   m.build_id_len);
		return 1;
	}
	case PERF_RECORD_FORK: {
		struct rec_task t;
		if (parse_task(h, &t) || t.pid == t.ppid)
			return 1;   /* a thread */
		if (procs_has(r->procs, t.ppid) && r->is_target(r, t.pid))
			procs_fork(r->procs, t.pid, t.ppid);
		return 1;
	}
	case PERF_RECORD_COMM: {
		struct rec_comm c;
		if (parse_comm(h, &c) == 0 && c.exec && c.pid == c.tid && procs_has(r->procs, c.pid))
			procs_exec(r->procs, c.pid, c.comm);
		return 1;
	}
	case PERF_RECORD_LOST: {
		const uint64_t *v = (const uint64_t *)(h + 1);
		if (h->size >= sizeof(*h) + 16)
			*lost += v[1];
		return 1;
	}
	case PERF_RECORD_LOST_SAMPLES: {
		const uint64_t *v = (const uint64_t *)(h + 1);
		if (h->size >= sizeof(*h) + 8)
			*lost += v[0];
		return 1;
	}
	}
	return 0;
}

/* Fork the command, stopped before exec until `go` is written. */
static pid_t launch(char **argv, int *go_fd, int *err_fd, char *err, size_t errlen)
{
	int go[2], ex[2];
	if (pipe2(go, O_CLOEXEC) || pipe2(ex, O_CLOEXEC)) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		snprintf(err, errlen, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		char c;
		close(go[1]);
		close(ex[0]);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127);     /* icpp gave up */
		execvp(argv[0], argv);
		int e = errno;
		if (write(ex[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ex[1]);
	*go_fd = go[1];
	*err_fd = ex[0];
	return pid;
}

static char *join_args(char **argv)
{
	size_t len = 1;
	for (char **a = argv; *a; a++)
		len += strlen(*a) + 1;
	char *s = malloc(len);
	if (!s)
		return NULL;
	s[0] = 0;
	for (char **a = argv; *a; a++) {
		if (a != argv)
			strcat(s, " ");
		strcat(s, *a);
	}
	return s;
}

static void progress(struct recorder *r, const struct backend *bk, uint64_t t0, bool final)
{
	struct sf_counters c = {0};
	bk->counters(r, &c);
	double secs = (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	fprintf(stderr, "\ricpp record: %.1fs, %" PRIu64 " samples, %" PRIu64 " lost%s", secs,
		c.samples, c.dropped + c.lost, final ? "\n" : "  ");
	fflush(stderr);
}

static bool can_bpf(char *why, size_t len)
{
	if (geteuid() != 0) {
		snprintf(why, len, "not root");
		return false;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(why, len, "no kernel BTF");
		return false;
	}
	return true;
}

/* The backend asked for, or bpf when it loads, else perf; opened.  *why
 * says why that one.  NULL after err. */
static const struct backend *open_backend(struct recorder *r, char *why, size_t whylen,
					  char *err, size_t errlen)
{
	const struct rec_opts *o = r->o;
	const struct backend *bk;
	char e2[512];
	if (o->backend == REC_BACKEND_PERF) {
		bk = &perf_backend;
		snprintf(why, whylen, "as asked");
	} else if (o->backend == REC_BACKEND_BPF) {
		bk = &bpf_backend;
		snprintf(why, whylen, "as asked");
	} else if (can_bpf(why, whylen)) {
		bk = &bpf_backend;
		if (!bk->open(r, e2, sizeof(e2))) {
			snprintf(why, whylen, "root, BPF loads");
			return bk;
		}
		bk->close(r);
		bk = &perf_backend;
		snprintf(why, whylen, "bpf unavailable: %.100s", e2);
	} else {
		bk = &perf_backend;
		char tmp[128];
		snprintf(tmp, sizeof(tmp), "%s", why);
		snprintf(why, whylen, "bpf needs root: %.100s", tmp);
	}
	if (bk->open(r, err, errlen)) {
		bk->close(r);
		return NULL;
	}
	return bk;
}

/* The launched command, stopped before its exec, goes on; its exec's
 * failure comes back on exec_err_fd.  0, or -1 after err. */
static int start_command(struct recorder *r, int *go_fd, int exec_err_fd, bool *child_done,
			 char *err, size_t errlen)
{
	char c = 1;
	int e;
	if (write(*go_fd, &c, 1) != 1) {
		snprintf(err, errlen, "cannot start the command: %s", strerror(errno));
		return -1;
	}
	close(*go_fd);
	*go_fd = -1;
	if (read(exec_err_fd, &e, sizeof(e)) == (ssize_t)sizeof(e)) {
		waitpid(r->target, NULL, 0);
		*child_done = true;
		snprintf(err, errlen, "cannot run %s: %s", r->o->argv[0], strerror(e));
		return -1;
	}
	return 0;
}

/* Poll and drain until the target ends, the duration passes or a signal
 * comes; then stop and take what is left. */
static void record_loop(struct recorder *r, const struct backend *bk, uint64_t t0,
			bool *child_done, int *child_status)
{
	const struct rec_opts *o = r->o;
	bool tty = isatty(2) && !o->quiet;
	uint64_t last_drain = t0, last_progress = t0;
	while (!stop_signal) {
		struct timespec ts = {0, 50 * 1000 * 1000};
		nanosleep(&ts, NULL);
		bk->poll(r);
		uint64_t t = now_ns(CLOCK_MONOTONIC);
		if (t - last_drain >= 500000000ull) {   /* twice a second: progress shows drained counts */
			bk->drain(r);
			last_drain = t;
		}
		if (tty && t - last_progress >= 500000000ull) {
			progress(r, bk, t0, false);
			last_progress = t;
		}
		if (o->duration > 0 && (double)(t - t0) / 1e9 >= o->duration)
			break;
		if (r->launched) {
			if (waitpid(r->target, child_status, WNOHANG) == r->target) {
				*child_done = true;
				break;
			}
		} else if (kill(r->target, 0) && errno == ESRCH) {
			break;
		}
	}
	bk->stop(r);
	bk->poll(r);
	bk->drain(r);
	r->ss->meta.end_ns = now_ns(CLOCK_REALTIME);
	if (tty)
		progress(r, bk, t0, true);
	if (o->bpf_stats && bk->stats)
		bk->stats(r);
}

/* The sample file's metadata: backend, event, counters, command, host.
 * The samples recorded (at least the count the counters say). */
static uint64_t fill_meta(struct recorder *r, const struct backend *bk)
{
	const struct rec_opts *o = r->o;
	struct sf_meta *m = &r->ss->meta;
	struct utsname u;
	char host[256] = "";
	gethostname(host, sizeof(host) - 1);
	uname(&u);
	m->backend = bk == &bpf_backend ? SF_BACKEND_BPF : SF_BACKEND_PERF;
	m->flags = (o->validate ? SF_M_VALIDATE : 0) | (r->ev.skid ? SF_M_SKID : 0) |
		   (r->no_kernel ? SF_M_NO_KERNEL : 0);
	m->ncpus = (uint32_t)r->ncpus;
	m->freq = r->freq;
	m->period = r->period;
	if (bk == &perf_backend)
		procs_store_threads(r->procs);
	bk->counters(r, &m->c);
	sf_set_string(&m->event, r->ev.name);
	if (o->argv) {
		char *cmd = join_args(o->argv);
		sf_set_string(&m->command, cmd ? cmd : o->argv[0]);
		free(cmd);
	} else {
		char cmd[64];
		snprintf(cmd, sizeof(cmd), "-p %d", o->pid);
		sf_set_string(&m->command, cmd);
	}
	sf_set_string(&m->hostname, host);
	sf_set_string(&m->kernel, u.release);
	/* Samples the count maps could not take are in the counters; records
	 * never exceed them. */
	uint64_t total = sf_total(r->ss);
	if (total > m->c.samples)
		m->c.samples = total;
	return total;
}

static void print_written(const struct recorder *r, const char *out, uint64_t total)
{
	const struct sf_counters *c = &r->ss->meta.c;
	fprintf(stderr, "icpp record: wrote %s: %" PRIu64 " samples in %u records, %u processes, %u module mappings",
		out, total, r->ss->nrecs, r->ss->nprocs, r->ss->nmods);
	if (c->dropped || c->lost)
		fprintf(stderr, "; LOST %" PRIu64 " (map full %" PRIu64 ", ring %" PRIu64 ")",
			c->dropped + c->lost, c->dropped, c->lost);
	if (c->unknown_base)
		fprintf(stderr, "; %" PRIu64 " without a base", c->unknown_base);
	if (c->stack_errors)
		fprintf(stderr, "; %" PRIu64 " without a user stack", c->stack_errors);
	fputc('\n', stderr);
	if (stop_signal)
		fprintf(stderr, "icpp record: stopped by signal %d\n", (int)stop_signal);
}

/* A launched command still running (Ctrl-C, --duration) is ended, as perf
 * does; after a recording, how it ended when that was not well. */
static void end_command(const struct recorder *r, bool child_done, int child_status, bool report)
{
	if (!child_done && waitpid(r->target, &child_status, WNOHANG) == 0) {
		kill(r->target, SIGTERM);
		waitpid(r->target, &child_status, 0);
	}
	if (!report)
		return;
	const char *cmd = r->o->argv[0];
	if (WIFEXITED(child_status) && WEXITSTATUS(child_status))
		fprintf(stderr, "icpp record: %s exited with status %d\n", cmd, WEXITSTATUS(child_status));
	else if (WIFSIGNALED(child_status) && WTERMSIG(child_status) != SIGTERM &&
		 WTERMSIG(child_status) != SIGINT)
		fprintf(stderr, "icpp record: %s was killed by signal %d\n", cmd, WTERMSIG(child_status));
}

int rec_run(const struct rec_opts *o, char *err, size_t errlen)
{
	struct recorder r;
	const struct backend *bk = NULL;
	int go_fd = -1, exec_err_fd = -1;
	int rc = -1;
	bool child_done = false;
	int child_status = 0;
	char why[128] = "";

	memset(&r, 0, sizeof(r));
	r.o = o;
	if (ev_lookup(o->event ? o->event : "cpu-clock", &r.ev, err, errlen))
		return -1;
	r.period = o->period;
	r.freq = o->period ? 0 : (o->freq ? o->freq : 999);
	r.ncpus = ev_online_cpus(r.cpus, REC_MAX_CPUS);
	if (r.ncpus <= 0) {
		snprintf(err, errlen, "cannot list the online CPUs");
		return -1;
	}
	r.ss = sf_new();
	if (!r.ss) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r.procs = procs_new(r.ss);

	/* The target. */
	if (o->argv) {
		r.target = launch(o->argv, &go_fd, &exec_err_fd, err, errlen);
		if (r.target < 0)
			goto out;
		r.launched = true;
		procs_add(r.procs, (uint32_t)r.target, 0, false);
	} else {
		if (kill(o->pid, 0) && errno == ESRCH) {
			snprintf(err, errlen, "no process %d", o->pid);
			goto out;
		}
		r.target = o->pid;
		procs_add(r.procs, (uint32_t)r.target, 0, true);
	}
	bk = open_backend(&r, why, sizeof(why), err, errlen);
	if (!bk)
		goto out;
	if (!o->quiet)
		fprintf(stderr, "icpp record: backend %s (%s), event %s, %s %" PRIu64 "%s\n", bk->name,
			why, r.ev.name, r.freq ? "frequency" : "period", r.freq ? r.freq : r.period,
			r.freq ? " Hz" : "");

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);

	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	r.ss->meta.start_ns = now_ns(CLOCK_REALTIME);
	if (r.launched && start_command(&r, &go_fd, exec_err_fd, &child_done, err, errlen) < 0)
		goto out;
	record_loop(&r, bk, t0, &child_done, &child_status);
	uint64_t total = fill_meta(&r, bk);
	const char *out = o->output ? o->output : "icpp.samples";
	if (sf_write(r.ss, out, err, errlen))
		goto out;
	if (!o->quiet)
		print_written(&r, out, total);
	rc = 0;
out:
	if (bk)
		bk->close(&r);
	if (go_fd >= 0)
		close(go_fd);       /* the child reads EOF and exits */
	if (exec_err_fd >= 0)
		close(exec_err_fd);
	if (r.launched)
		end_command(&r, child_done, child_status, rc == 0 && !o->quiet);
	procs_free(r.procs);
	sf_free(r.ss);
	return rc;
}
