/* bpf_backend: load bpf/sample.bpf.c, attach it to one perf event per CPU,
 * follow the target set, drain the count maps, read module side-band. */
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "collector/recorder.h"
#include "sample.h"
#include "sample.skel.h"

struct bpf_state {
	struct sample_bpf *skel;
	int *pfds;                  /* sampling event per CPU */
	struct bpf_link **links;
	int *sbfds;                 /* side-band dummy event per CPU */
	struct ring *rings;
	int nfd;
	uint32_t active;
	int stats_fd;               /* BPF_ENABLE_STATS, -1 */
	uint64_t lost;
	/* stack id -> sample set index (ids are stable: never reused) */
	uint32_t *stack_idx;
	void *keys, *vals;          /* drain buffers */
	size_t nbuf;
};

static char libbpf_msg[512];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	/* Keep the last warning: it says why loading failed. */
	if (level == LIBBPF_WARN)
		vsnprintf(libbpf_msg, sizeof(libbpf_msg), fmt, ap);
	return 0;
}

static bool bpf_is_target(struct recorder *r, uint32_t tgid)
{
	struct bpf_state *b = r->bk;
	uint8_t v;
	return bpf_map__lookup_elem(b->skel->maps.targets, &tgid, sizeof(tgid), &v, sizeof(v), 0) == 0;
}

static int open_sideband(struct recorder *r, struct bpf_state *b, int i, char *err, size_t errlen)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.mmap = 1;
	a.mmap2 = 1;
	a.comm = 1;
	a.comm_exec = 1;
	a.task = 1;
	a.build_id = 1;
	a.watermark = 1;
	a.wakeup_watermark = 1 << 20;
	int fd = (int)ev_open(&a, -1, r->cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0 && errno == EINVAL) {   /* kernel without build_id in MMAP2 */
		a.build_id = 0;
		fd = (int)ev_open(&a, -1, r->cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
	}
	if (fd < 0) {
		struct rec_event dummy = {.name = "dummy"};
		ev_explain(&dummy, errno, "side-band event", err, errlen);
		return -1;
	}
	b->sbfds[i] = fd;
	if (ring_map(&b->rings[i], fd, REC_RING_ORDER)) {
		snprintf(err, errlen, "cannot map the side-band ring buffer: %s", strerror(errno));
		return -1;
	}
	return 0;
}

static int bpf_open(struct recorder *r, char *err, size_t errlen)
{
	struct bpf_state *b = calloc(1, sizeof(*b));
	int e;

	if (!b) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r->bk = b;
	r->is_target = bpf_is_target;
	b->stats_fd = -1;
	libbpf_set_print(libbpf_print);
	b->skel = sample_bpf__open();
	if (!b->skel) {
		snprintf(err, errlen, "cannot open the BPF program: %s", libbpf_msg[0] ? libbpf_msg : strerror(errno));
		return -1;
	}
	b->skel->rodata->validate = r->o->validate;
	b->skel->rodata->follow_forks = true;
	/* Only one pair of count maps is used; shrink the other. */
	if (r->o->validate) {
		bpf_map__set_max_entries(b->skel->maps.counts0, 1);
		bpf_map__set_max_entries(b->skel->maps.counts1, 1);
	} else {
		bpf_map__set_max_entries(b->skel->maps.vcounts0, 1);
		bpf_map__set_max_entries(b->skel->maps.vcounts1, 1);
		bpf_map__set_max_entries(b->skel->maps.stacks, 1);
	}
	/* ICPP_RECORD_MAP_ENTRIES (tests): a smaller count map, to see drops
	 * counted and reported. */
	const char *me = getenv("ICPP_RECORD_MAP_ENTRIES");
	if (me && atoi(me) > 0) {
		uint32_t n = (uint32_t)atoi(me);
		bpf_map__set_max_entries(r->o->validate ? b->skel->maps.vcounts0 : b->skel->maps.counts0, n);
		bpf_map__set_max_entries(r->o->validate ? b->skel->maps.vcounts1 : b->skel->maps.counts1, n);
	}
	if (r->o->bpf_stats)
		b->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	e = sample_bpf__load(b->skel);
	if (e) {
		libbpf_msg[strcspn(libbpf_msg, "\n")] = 0;
		snprintf(err, errlen, "cannot load the BPF program (%s)%s%s", strerror(-e),
			 libbpf_msg[0] ? ": " : "", libbpf_msg);
		return -1;
	}

	/* Targets first, then the fork/exec tracepoints, then sampling. */
	uint8_t v = r->launched ? ICPP_TARGET_PENDING : ICPP_TARGET_ARMED;
	uint32_t tgid = (uint32_t)r->target;
	if (bpf_map__update_elem(b->skel->maps.targets, &tgid, sizeof(tgid), &v, sizeof(v), BPF_ANY)) {
		snprintf(err, errlen, "cannot add the target to the BPF map: %s", strerror(errno));
		return -1;
	}
	if (!r->launched)
		b->skel->bss->fast_tgid = tgid;
	b->skel->links.icpp_fork = bpf_program__attach(b->skel->progs.icpp_fork);
	b->skel->links.icpp_exec = bpf_program__attach(b->skel->progs.icpp_exec);
	if (!b->skel->links.icpp_fork || !b->skel->links.icpp_exec) {
		snprintf(err, errlen, "cannot attach the fork/exec tracepoints: %s", strerror(errno));
		return -1;
	}

	b->nfd = r->ncpus;
	b->pfds = calloc(b->nfd, sizeof(int));
	b->sbfds = calloc(b->nfd, sizeof(int));
	b->links = calloc(b->nfd, sizeof(*b->links));
	b->rings = calloc(b->nfd, sizeof(*b->rings));
	b->stack_idx = malloc(ICPP_STACK_ENTRIES * sizeof(uint32_t));
	if (!b->pfds || !b->sbfds || !b->links || !b->rings || !b->stack_idx) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (int i = 0; i < ICPP_STACK_ENTRIES; i++)
		b->stack_idx[i] = SF_NONE;
	for (int i = 0; i < b->nfd; i++)
		b->pfds[i] = b->sbfds[i] = -1;

	for (int i = 0; i < b->nfd; i++)
		if (open_sideband(r, b, i, err, errlen))
			return -1;
	for (int i = 0; i < b->nfd; i++) {
		struct perf_event_attr a;
		char what[64];
		ev_attr(&r->ev, r->freq, r->period, &a);
		int fd = (int)ev_open(&a, -1, r->cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0 && a.precise_ip > 1 && errno == EOPNOTSUPP) {
			a.precise_ip = 1;
			fd = (int)ev_open(&a, -1, r->cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		}
		if (fd < 0) {
			snprintf(what, sizeof(what), "perf event %s on CPU %d", r->ev.name, r->cpus[i]);
			ev_explain(&r->ev, errno, what, err, errlen);
			return -1;
		}
		b->pfds[i] = fd;
		b->links[i] = bpf_program__attach_perf_event(b->skel->progs.icpp_sample, fd);
		if (!b->links[i]) {
			snprintf(err, errlen, "cannot attach the BPF program to CPU %d's event: %s",
				 r->cpus[i], strerror(errno));
			return -1;
		}
	}
	return 0;
}

static void bpf_on_record(const struct perf_event_header *h, void *ctx)
{
	struct recorder *r = ctx;
	struct bpf_state *b = r->bk;
	rec_sideband(r, h, &b->lost);
}

static void bpf_poll(struct recorder *r)
{
	struct bpf_state *b = r->bk;
	for (int i = 0; i < b->nfd; i++)
		ring_drain(&b->rings[i], bpf_on_record, r);
}

static uint32_t stack_index(struct recorder *r, int32_t id)
{
	struct bpf_state *b = r->bk;
	uint64_t ips[ICPP_STACK_DEPTH];
	uint32_t n = 0;

	if (id < 0 || id >= ICPP_STACK_ENTRIES)
		return SF_NONE;
	if (b->stack_idx[id] != SF_NONE)
		return b->stack_idx[id];
	if (bpf_map__lookup_elem(b->skel->maps.stacks, &id, sizeof(id), ips, sizeof(ips), 0))
		return SF_NONE;
	while (n < ICPP_STACK_DEPTH && ips[n])
		n++;
	if (!n)
		return SF_NONE;
	b->stack_idx[id] = sf_add_stack(r->ss, ips, n);
	return b->stack_idx[id];
}

static void add_key(struct recorder *r, const struct icpp_key *k, const struct icpp_vkey *vk,
		    uint64_t count)
{
	struct sf_record rec = {0};
	rec.tgid = k->tgid;
	rec.flags = k->flags;
	rec.ip = k->ip;
	rec.sp_off = k->sp_off;
	rec.bp_off = k->bp_off;
	rec.count = count;
	rec.stack = SF_NONE;
	if (vk) {
		rec.stack = stack_index(r, vk->stack_id);
		if (vk->words_ok) {
			rec.nwords = SF_WORDS;
			memcpy(rec.words, vk->words, sizeof(rec.words));
		}
	}
	if (!procs_has(r->procs, k->tgid))
		procs_add(r->procs, k->tgid, 0, true);
	sf_add_record(r->ss, &rec);
}

/* Move every entry of map into the sample set and empty it.  The map is not
 * being written (the program uses the other one). */
static void drain_map(struct recorder *r, struct bpf_map *map, bool validate)
{
	struct bpf_state *b = r->bk;
	size_t ksz = validate ? sizeof(struct icpp_vkey) : sizeof(struct icpp_key);
	int fd = bpf_map__fd(map);
	uint32_t max = bpf_map__max_entries(map);
	size_t want = max < 4096 ? max : 4096;

	if (b->nbuf < want) {
		free(b->keys);
		free(b->vals);
		b->keys = malloc(want * sizeof(struct icpp_vkey));
		b->vals = malloc(want * sizeof(uint64_t));
		b->nbuf = b->keys && b->vals ? want : 0;
		if (!b->nbuf)
			return;
	}
	/* Batched lookup-and-delete; falls back to one key at a time. */
	uint8_t in[sizeof(struct icpp_vkey)], out[sizeof(struct icpp_vkey)];
	void *pin = NULL;
	for (;;) {
		uint32_t count = (uint32_t)b->nbuf;
		int rc = bpf_map_lookup_and_delete_batch(fd, pin, out, b->keys, b->vals, &count, NULL);
		int e = rc ? errno : 0;
		for (uint32_t i = 0; i < count; i++) {
			const void *key = (uint8_t *)b->keys + i * ksz;
			uint64_t v = ((uint64_t *)b->vals)[i];
			if (validate)
				add_key(r, &((const struct icpp_vkey *)key)->k, key, v);
			else
				add_key(r, key, NULL, v);
		}
		if (rc) {
			if (e == ENOENT)
				return;         /* done */
			break;                  /* unsupported: fall back */
		}
		memcpy(in, out, sizeof(in));
		pin = in;
	}
	uint8_t key[sizeof(struct icpp_vkey)];
	while (bpf_map_get_next_key(fd, NULL, key) == 0) {
		uint64_t v;
		if (bpf_map_lookup_elem(fd, key, &v) == 0) {
			if (validate)
				add_key(r, &((const struct icpp_vkey *)key)->k, (void *)key, v);
			else
				add_key(r, (void *)key, NULL, v);
		}
		if (bpf_map_delete_elem(fd, key))
			break;
	}
}

static void bpf_drain(struct recorder *r)
{
	struct bpf_state *b = r->bk;

	/* Flip, then give programs that read the old value time to finish
	 * (they run for microseconds, in interrupt context). */
	uint32_t old = b->active;
	b->active = old ^ 1;
	__atomic_store_n(&b->skel->bss->active, b->active, __ATOMIC_SEQ_CST);
	struct timespec ts = {0, 20 * 1000 * 1000};
	nanosleep(&ts, NULL);
	if (r->o->validate)
		drain_map(r, old ? b->skel->maps.vcounts1 : b->skel->maps.vcounts0, true);
	else
		drain_map(r, old ? b->skel->maps.counts1 : b->skel->maps.counts0, false);
}

static void bpf_counters(struct recorder *r, struct sf_counters *c)
{
	struct bpf_state *b = r->bk;
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals;
	uint64_t sum[ICPP_ST_NR] = {0};

	if (ncpu <= 0 || !(vals = calloc(ncpu, sizeof(uint64_t))))
		return;
	for (uint32_t k = 0; k < ICPP_ST_NR; k++) {
		if (bpf_map__lookup_elem(b->skel->maps.stats, &k, sizeof(k), vals,
					 ncpu * sizeof(uint64_t), 0))
			continue;
		for (int i = 0; i < ncpu; i++)
			sum[k] += vals[i];
	}
	free(vals);
	c->dropped = sum[ICPP_ST_DROPS];
	c->samples = sf_total(r->ss) + sum[ICPP_ST_DROPS] + sum[ICPP_ST_NO_USER_REGS];
	c->no_user_regs = sum[ICPP_ST_NO_USER_REGS];
	c->kernel_hits = sum[ICPP_ST_KERNEL_HITS];
	c->stack_errors = sum[ICPP_ST_STACK_ERRORS];
	c->forks = sum[ICPP_ST_FORKS];
	c->lost = b->lost;
}

static void bpf_stats(struct recorder *r)
{
	struct bpf_state *b = r->bk;
	struct bpf_prog_info info;
	uint32_t len = sizeof(info);
	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(bpf_program__fd(b->skel->progs.icpp_sample), &info, &len))
		return;
	fprintf(stderr, "icpp record: bpf program: %llu runs, %llu ns, %.1f ns per run\n",
		(unsigned long long)info.run_cnt, (unsigned long long)info.run_time_ns,
		info.run_cnt ? (double)info.run_time_ns / (double)info.run_cnt : 0.0);
}

static void bpf_stop(struct recorder *r)
{
	struct bpf_state *b = r->bk;
	for (int i = 0; i < b->nfd; i++) {
		if (b->links[i])
			bpf_link__destroy(b->links[i]);
		b->links[i] = NULL;
		if (b->pfds[i] >= 0)
			close(b->pfds[i]);
		b->pfds[i] = -1;
	}
}

static void bpf_close(struct recorder *r)
{
	struct bpf_state *b = r->bk;
	if (!b)
		return;
	for (int i = 0; i < b->nfd; i++) {
		if (b->links && b->links[i])
			bpf_link__destroy(b->links[i]);
		if (b->pfds && b->pfds[i] >= 0)
			close(b->pfds[i]);
		if (b->rings)
			ring_unmap(&b->rings[i]);
		if (b->sbfds && b->sbfds[i] >= 0)
			close(b->sbfds[i]);
	}
	sample_bpf__destroy(b->skel);
	if (b->stats_fd >= 0)
		close(b->stats_fd);
	free(b->pfds);
	free(b->sbfds);
	free(b->links);
	free(b->rings);
	free(b->stack_idx);
	free(b->keys);
	free(b->vals);
	free(b);
	r->bk = NULL;
}

const struct backend bpf_backend = {
	.name = "bpf",
	.open = bpf_open,
	.poll = bpf_poll,
	.drain = bpf_drain,
	.stop = bpf_stop,
	.counters = bpf_counters,
	.stats = bpf_stats,
	.close = bpf_close,
};
