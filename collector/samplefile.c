/* samplefile: the sample set in memory and its file format
 * (docs/sample-format.md). */
#include "collector/samplefile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include <zlib.h>

#include "util/fileio.h"
#include "util/grow.h"

#define SF_HEADER_SIZE 32
#define SF_STR_MAX 4096
enum { SEC_META = 1, SEC_PROCS, SEC_MODULES, SEC_STACKS, SEC_RECORDS, SEC_NR };
static const char *const sec_names[SEC_NR] = {"", "meta", "processes", "modules", "stacks", "records"};

/* ---- in memory ---- */

struct rec_key {                /* sf_record without count, padding zeroed */
	uint32_t tgid, flags;
	uint64_t ip;
	int64_t sp_off, bp_off;
	uint32_t stack, nwords;
	uint64_t words[SF_WORDS];
};

struct rec_entry {
	struct rec_key key;
	uint32_t idx;
	UT_hash_handle hh;
};

struct stack_entry {
	uint32_t idx;
	UT_hash_handle hh;          /* keyed by the ips bytes of stacks[idx] */
};

struct sf_index {
	struct rec_entry *recs;
	struct stack_entry *stacks;
};

struct sample_set *sf_new(void)
{
	struct sample_set *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->index = calloc(1, sizeof(*s->index));
	if (!s->index) {
		free(s);
		return NULL;
	}
	s->meta.version = SF_VERSION;
	return s;
}

static void index_free(struct sf_index *ix)
{
	struct rec_entry *r, *rt;
	struct stack_entry *st, *stt;

	if (!ix)
		return;
	HASH_ITER(hh, ix->recs, r, rt) {
		HASH_DEL(ix->recs, r);
		free(r);
	}
	HASH_ITER(hh, ix->stacks, st, stt) {
		HASH_DEL(ix->stacks, st);
		free(st);
	}
	free(ix);
}

void sf_free(struct sample_set *s)
{
	if (!s)
		return;
	free(s->meta.event);
	free(s->meta.command);
	free(s->meta.hostname);
	free(s->meta.kernel);
	for (uint32_t i = 0; i < s->nprocs; i++)
		free(s->procs[i].comm);
	for (uint32_t i = 0; i < s->nmods; i++)
		free(s->mods[i].path);
	for (uint32_t i = 0; i < s->nstacks; i++)
		free(s->stacks[i].ips);
	free(s->procs);
	free(s->mods);
	free(s->stacks);
	free(s->recs);
	index_free(s->index);
	free(s);
}

int sf_set_string(char **dst, const char *src)
{
	char *c = strdup(src ? src : "");
	if (!c)
		return -1;
	free(*dst);
	*dst = c;
	return 0;
}

uint32_t sf_add_process(struct sample_set *s, uint32_t tgid, uint32_t parent, const char *comm)
{
	for (uint32_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].tgid == tgid) {
			if (comm && *comm)
				sf_set_string(&s->procs[i].comm, comm);
			return i;
		}
	if (!grow_array((void **)&s->procs, (uint64_t)s->nprocs + 1, &s->cap_procs, sizeof(*s->procs)))
		return SF_NONE;
	struct sf_process *p = &s->procs[s->nprocs];
	memset(p, 0, sizeof(*p));
	p->tgid = tgid;
	p->parent = parent;
	if (sf_set_string(&p->comm, comm))
		return SF_NONE;
	return s->nprocs++;
}

uint32_t sf_add_module(struct sample_set *s, const struct sf_module *m)
{
	for (uint32_t i = 0; i < s->nmods; i++) {
		struct sf_module *o = &s->mods[i];
		if (o->tgid == m->tgid && o->start == m->start && o->end == m->end &&
		    o->pgoff == m->pgoff && !strcmp(o->path, m->path ? m->path : ""))
			return i;
	}
	if (!grow_array((void **)&s->mods, (uint64_t)s->nmods + 1, &s->cap_mods, sizeof(*s->mods)))
		return SF_NONE;
	struct sf_module *n = &s->mods[s->nmods];
	*n = *m;
	n->path = NULL;
	if (sf_set_string(&n->path, m->path))
		return SF_NONE;
	return s->nmods++;
}

uint32_t sf_add_stack(struct sample_set *s, const uint64_t *ips, uint32_t n)
{
	struct stack_entry *e;

	if (n > SF_MAX_STACK)
		n = SF_MAX_STACK;
	/* uthash keys must live in the entry's memory or stay put: find by
	 * content with a temporary lookup key. */
	HASH_FIND(hh, s->index->stacks, ips, n * sizeof(uint64_t), e);
	if (e && s->stacks[e->idx].n == n)
		return e->idx;
	if (!grow_array((void **)&s->stacks, (uint64_t)s->nstacks + 1, &s->cap_stacks, sizeof(*s->stacks)))
		return SF_NONE;
	uint64_t *copy = malloc(n ? n * sizeof(uint64_t) : 1);
	e = calloc(1, sizeof(*e));
	if (!copy || !e) {
		free(copy);
		free(e);
		return SF_NONE;
	}
	memcpy(copy, ips, n * sizeof(uint64_t));
	s->stacks[s->nstacks].n = n;
	s->stacks[s->nstacks].ips = copy;
	e->idx = s->nstacks;
	HASH_ADD_KEYPTR(hh, s->index->stacks, copy, n * sizeof(uint64_t), e);
	return s->nstacks++;
}

static void rec_key_of(const struct sf_record *r, struct rec_key *k)
{
	memset(k, 0, sizeof(*k));
	k->tgid = r->tgid;
	k->flags = r->flags;
	k->ip = r->ip;
	k->sp_off = r->sp_off;
	k->bp_off = r->bp_off;
	k->stack = r->stack;
	k->nwords = r->nwords;
	for (uint32_t i = 0; i < r->nwords && i < SF_WORDS; i++)
		k->words[i] = r->words[i];
}

uint32_t sf_add_record(struct sample_set *s, const struct sf_record *r)
{
	struct rec_key k;
	struct rec_entry *e;

	rec_key_of(r, &k);
	HASH_FIND(hh, s->index->recs, &k, sizeof(k), e);
	if (e) {
		s->recs[e->idx].count += r->count;
		return e->idx;
	}
	if (!grow_array((void **)&s->recs, (uint64_t)s->nrecs + 1, &s->cap_recs, sizeof(*s->recs)))
		return SF_NONE;
	e = calloc(1, sizeof(*e));
	if (!e)
		return SF_NONE;
	e->key = k;
	e->idx = s->nrecs;
	HASH_ADD(hh, s->index->recs, key, sizeof(k), e);
	struct sf_record *n = &s->recs[s->nrecs];
	*n = *r;
	if (n->nwords < SF_WORDS)
		memset(n->words + n->nwords, 0, (SF_WORDS - n->nwords) * sizeof(uint64_t));
	return s->nrecs++;
}

uint64_t sf_total(const struct sample_set *s)
{
	uint64_t t = 0;
	for (uint32_t i = 0; i < s->nrecs; i++)
		t += s->recs[i].count;
	return t;
}

const struct sf_module *sf_module_at(const struct sample_set *s, uint32_t tgid, uint64_t addr)
{
	/* The last one added wins: a mapping made later replaces an older one
	 * at the same address (exec, dlclose + dlopen). */
	for (uint32_t i = s->nmods; i-- > 0;) {
		const struct sf_module *m = &s->mods[i];
		if (m->tgid == tgid && addr >= m->start && addr < m->end)
			return m;
	}
	return NULL;
}

const struct sf_process *sf_process(const struct sample_set *s, uint32_t tgid)
{
	for (uint32_t i = 0; i < s->nprocs; i++)
		if (s->procs[i].tgid == tgid)
			return &s->procs[i];
	return NULL;
}

/* ---- writing ---- */

struct buf {
	uint8_t *p;
	size_t len, cap;
	int oom;
};

static void put(struct buf *b, const void *d, size_t n)
{
	if (b->oom)
		return;
	if (b->len + n > b->cap) {
		size_t nc = b->cap ? b->cap : 4096;
		while (nc < b->len + n)
			nc *= 2;
		uint8_t *p = realloc(b->p, nc);
		if (!p) {
			b->oom = 1;
			return;
		}
		b->p = p;
		b->cap = nc;
	}
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

/* Little-endian fixed-width integers (x86-64 is little-endian; the format
 * says little-endian explicitly so the reader checks nothing else). */
static void put32(struct buf *b, uint32_t v) { put(b, &v, 4); }
static void put64(struct buf *b, uint64_t v) { put(b, &v, 8); }
static void putstr(struct buf *b, const char *s)
{
	size_t n = s ? strnlen(s, SF_STR_MAX) : 0;
	put32(b, (uint32_t)n);
	put(b, s, n);
}

static size_t sec_begin(struct buf *b, uint32_t type, uint32_t count)
{
	put32(b, type);
	put32(b, count);
	size_t at = b->len;
	put64(b, 0);                /* length, patched by sec_end */
	return at;
}

static void sec_end(struct buf *b, size_t at)
{
	if (b->oom)
		return;
	uint64_t len = b->len - at - 8;
	memcpy(b->p + at, &len, 8);
}

int sf_serialize(const struct sample_set *s, void **out, size_t *outlen, char *err, size_t errlen)
{
	struct buf b = {0};
	const struct sf_meta *m = &s->meta;
	size_t at;

	put(&b, SF_MAGIC, 8);
	put32(&b, SF_VERSION);
	put32(&b, SF_HEADER_SIZE);
	put64(&b, 0);               /* file size, patched below */
	put32(&b, SEC_NR - 1);
	put32(&b, 0);

	at = sec_begin(&b, SEC_META, 1);
	put32(&b, m->flags);
	put32(&b, m->backend);
	put32(&b, m->ncpus);
	put32(&b, 0);
	put64(&b, m->period);
	put64(&b, m->freq);
	put64(&b, m->start_ns);
	put64(&b, m->end_ns);
	put64(&b, m->c.samples);
	put64(&b, m->c.dropped);
	put64(&b, m->c.lost);
	put64(&b, m->c.no_user_regs);
	put64(&b, m->c.kernel_hits);
	put64(&b, m->c.stack_errors);
	put64(&b, m->c.unknown_base);
	put64(&b, m->c.forks);
	putstr(&b, m->event);
	putstr(&b, m->command);
	putstr(&b, m->hostname);
	putstr(&b, m->kernel);
	sec_end(&b, at);

	at = sec_begin(&b, SEC_PROCS, s->nprocs);
	for (uint32_t i = 0; i < s->nprocs; i++) {
		put32(&b, s->procs[i].tgid);
		put32(&b, s->procs[i].parent);
		put32(&b, s->procs[i].flags);
		put64(&b, s->procs[i].tp_offset);
		putstr(&b, s->procs[i].comm);
	}
	sec_end(&b, at);

	at = sec_begin(&b, SEC_MODULES, s->nmods);
	for (uint32_t i = 0; i < s->nmods; i++) {
		const struct sf_module *md = &s->mods[i];
		put32(&b, md->tgid);
		put32(&b, md->bias_known ? 1 : 0);
		put64(&b, md->start);
		put64(&b, md->end);
		put64(&b, md->pgoff);
		put64(&b, md->bias);
		put32(&b, md->build_id_len);
		put(&b, md->build_id, md->build_id_len);
		putstr(&b, md->path);
	}
	sec_end(&b, at);

	at = sec_begin(&b, SEC_STACKS, s->nstacks);
	for (uint32_t i = 0; i < s->nstacks; i++) {
		put32(&b, s->stacks[i].n);
		put(&b, s->stacks[i].ips, s->stacks[i].n * sizeof(uint64_t));
	}
	sec_end(&b, at);

	at = sec_begin(&b, SEC_RECORDS, s->nrecs);
	for (uint32_t i = 0; i < s->nrecs; i++) {
		const struct sf_record *r = &s->recs[i];
		put32(&b, r->tgid);
		put32(&b, r->flags);
		put64(&b, r->ip);
		put64(&b, (uint64_t)r->sp_off);
		put64(&b, (uint64_t)r->bp_off);
		put64(&b, r->count);
		put32(&b, r->stack);
		put32(&b, r->nwords);
		put(&b, r->words, r->nwords * sizeof(uint64_t));
	}
	sec_end(&b, at);

	uint64_t size = b.len + 4;
	if (!b.oom)
		memcpy(b.p + 16, &size, 8);
	uint32_t crc = b.oom ? 0 : (uint32_t)crc32(0L, b.p, (uInt)b.len);
	put32(&b, crc);
	if (b.oom) {
		free(b.p);
		snprintf(err, errlen, "out of memory while writing the sample file");
		return -1;
	}
	*out = b.p;
	*outlen = b.len;
	return 0;
}

int sf_write(const struct sample_set *s, const char *path, char *err, size_t errlen)
{
	struct atomic_file af;
	void *data;
	size_t len;

	if (sf_serialize(s, &data, &len, err, errlen))
		return -1;
	if (af_open(&af, path, 0644, err, errlen)) {
		free(data);
		return -1;
	}
	if (fwrite(data, 1, len, af.f) != len) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		af_abort(&af);
		free(data);
		return -1;
	}
	free(data);
	return af_commit(&af, err, errlen);
}

/* ---- reading ---- */

struct rd {
	const uint8_t *p;
	size_t len, off;
	char *err;
	size_t errlen;
	int failed;
};

static void __attribute__((format(printf, 2, 3))) rd_fail(struct rd *r, const char *fmt, ...)
{
	va_list ap;
	if (r->failed)
		return;
	r->failed = 1;
	va_start(ap, fmt);
	vsnprintf(r->err, r->errlen, fmt, ap);
	va_end(ap);
}

static int need(struct rd *r, size_t n, const char *what)
{
	if (r->failed)
		return -1;
	if (n > r->len - r->off) {
		rd_fail(r, "corrupt sample file: %s runs past its section (offset %zu)", what, r->off);
		return -1;
	}
	return 0;
}

static uint32_t get32(struct rd *r, const char *what)
{
	uint32_t v = 0;
	if (need(r, 4, what) == 0) {
		memcpy(&v, r->p + r->off, 4);
		r->off += 4;
	}
	return v;
}

static uint64_t get64(struct rd *r, const char *what)
{
	uint64_t v = 0;
	if (need(r, 8, what) == 0) {
		memcpy(&v, r->p + r->off, 8);
		r->off += 8;
	}
	return v;
}

static char *getstr(struct rd *r, const char *what)
{
	uint32_t n = get32(r, what);
	if (r->failed)
		return NULL;
	if (n > SF_STR_MAX) {
		rd_fail(r, "corrupt sample file: %s is %u bytes long (limit %d)", what, n, SF_STR_MAX);
		return NULL;
	}
	if (need(r, n, what))
		return NULL;
	if (memchr(r->p + r->off, 0, n)) {
		rd_fail(r, "corrupt sample file: %s contains a NUL byte", what);
		return NULL;
	}
	char *s = malloc(n + 1);
	if (!s) {
		rd_fail(r, "out of memory reading %s", what);
		return NULL;
	}
	memcpy(s, r->p + r->off, n);
	s[n] = 0;
	r->off += n;
	return s;
}

/* What a foreign file probably is, for the error message. */
static const char *foreign_kind(const uint8_t *p, size_t len)
{
	if (len >= 4 && !memcmp(p, "\177ELF", 4))
		return "an ELF file";
	if (len >= 8 && !memcmp(p, "PERFILE2", 8))
		return "a perf.data file (use 'icpp record' to record)";
	if (len >= 4 && !memcmp(p, "ICPP", 4))
		return "another icpp file (a pathmap? pass it with -m)";
	if (len >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return "a gzip file";
	return NULL;
}

static int parse_meta(struct rd *r, struct sample_set *s)
{
	struct sf_meta *m = &s->meta;
	m->flags = get32(r, "meta flags");
	m->backend = get32(r, "meta backend");
	m->ncpus = get32(r, "meta cpus");
	(void)get32(r, "meta reserved");
	m->period = get64(r, "meta period");
	m->freq = get64(r, "meta frequency");
	m->start_ns = get64(r, "meta start time");
	m->end_ns = get64(r, "meta end time");
	m->c.samples = get64(r, "counter samples");
	m->c.dropped = get64(r, "counter dropped");
	m->c.lost = get64(r, "counter lost");
	m->c.no_user_regs = get64(r, "counter no_user_regs");
	m->c.kernel_hits = get64(r, "counter kernel_hits");
	m->c.stack_errors = get64(r, "counter stack_errors");
	m->c.unknown_base = get64(r, "counter unknown_base");
	m->c.forks = get64(r, "counter forks");
	m->event = getstr(r, "event name");
	m->command = getstr(r, "command");
	m->hostname = getstr(r, "hostname");
	m->kernel = getstr(r, "kernel release");
	if (r->failed)
		return -1;
	if (m->flags & ~SF_M_ALL)
		rd_fail(r, "corrupt sample file: unknown meta flags 0x%x", m->flags);
	else if (m->backend != SF_BACKEND_BPF && m->backend != SF_BACKEND_PERF)
		rd_fail(r, "corrupt sample file: unknown backend %u", m->backend);
	else if (!m->event[0])
		rd_fail(r, "corrupt sample file: no event name");
	else if ((m->period == 0) == (m->freq == 0))
		rd_fail(r, "corrupt sample file: exactly one of period and frequency must be set");
	else if (m->end_ns < m->start_ns)
		rd_fail(r, "corrupt sample file: recording ends before it starts");
	return r->failed ? -1 : 0;
}

/* What is wrong with a process's thread-pointer facts, or NULL. */
static const char *bad_tp_facts(const struct sample_set *s, uint32_t flags, uint64_t tp_offset)
{
	if (flags & ~SF_P_ALL)
		return "unknown flags";
	if (tp_offset >= SF_TP_OFFSET_MAX || tp_offset % 8)
		return "a thread-pointer offset that is no stack end's (4 GiB at most, a multiple of 8)";
	if ((flags || tp_offset) && s->meta.backend != SF_BACKEND_PERF)
		return "thread-pointer facts but the recording was not made by the perf backend";
	return NULL;
}

static int parse_procs(struct rd *r, struct sample_set *s, uint32_t count)
{
	for (uint32_t i = 0; i < count && !r->failed; i++) {
		uint32_t tgid = get32(r, "process id");
		uint32_t parent = get32(r, "process parent");
		uint32_t flags = get32(r, "process flags");
		uint64_t tp_offset = get64(r, "process thread-pointer offset");
		char *comm = getstr(r, "process name");
		if (r->failed)
			return -1;
		const char *bad = bad_tp_facts(s, flags, tp_offset);
		if (bad || tgid == 0 || sf_process(s, tgid)) {
			free(comm);
			if (bad)
				rd_fail(r, "corrupt sample file: process %u has %s", tgid, bad);
			else if (tgid == 0)
				rd_fail(r, "corrupt sample file: process %u has pid 0", i);
			else
				rd_fail(r, "corrupt sample file: process %u listed twice", tgid);
			return -1;
		}
		uint32_t idx = sf_add_process(s, tgid, parent, comm);
		free(comm);
		if (idx == SF_NONE) {
			rd_fail(r, "out of memory reading processes");
			return -1;
		}
		s->procs[idx].flags = flags;
		s->procs[idx].tp_offset = tp_offset;
	}
	return r->failed ? -1 : 0;
}

static int parse_modules(struct rd *r, struct sample_set *s, uint32_t count)
{
	for (uint32_t i = 0; i < count && !r->failed; i++) {
		struct sf_module m = {0};
		m.tgid = get32(r, "module process");
		uint32_t fl = get32(r, "module flags");
		m.start = get64(r, "module start");
		m.end = get64(r, "module end");
		m.pgoff = get64(r, "module offset");
		m.bias = get64(r, "module bias");
		m.build_id_len = get32(r, "module build-id length");
		if (r->failed)
			return -1;
		if (fl > 1) {
			rd_fail(r, "corrupt sample file: module %u has unknown flags 0x%x", i, fl);
			return -1;
		}
		m.bias_known = fl;
		if (m.build_id_len > SF_BUILD_ID_MAX) {
			rd_fail(r, "corrupt sample file: module %u build-id of %u bytes", i, m.build_id_len);
			return -1;
		}
		if (need(r, m.build_id_len, "module build-id"))
			return -1;
		memcpy(m.build_id, r->p + r->off, m.build_id_len);
		r->off += m.build_id_len;
		m.path = getstr(r, "module path");
		if (r->failed)
			return -1;
		if (!m.path[0] || m.start >= m.end || !sf_process(s, m.tgid)) {
			rd_fail(r, "corrupt sample file: module %u (%s) has %s", i, m.path,
				!m.path[0] ? "no path" : m.start >= m.end ? "an empty range"
								: "an unknown process");
			free(m.path);
			return -1;
		}
		if (sf_add_module(s, &m) == SF_NONE)
			rd_fail(r, "out of memory reading modules");
		free(m.path);
	}
	return r->failed ? -1 : 0;
}

static int parse_stacks(struct rd *r, struct sample_set *s, uint32_t count)
{
	for (uint32_t i = 0; i < count && !r->failed; i++) {
		uint32_t n = get32(r, "stack depth");
		if (r->failed)
			return -1;
		if (n == 0 || n > SF_MAX_STACK) {
			rd_fail(r, "corrupt sample file: stack %u has %u frames (1..%d)", i, n, SF_MAX_STACK);
			return -1;
		}
		if (need(r, (size_t)n * 8, "stack frames"))
			return -1;
		uint64_t *ips = malloc((size_t)n * 8);
		if (!ips) {
			rd_fail(r, "out of memory reading stacks");
			return -1;
		}
		memcpy(ips, r->p + r->off, (size_t)n * 8);
		r->off += (size_t)n * 8;
		uint32_t idx = sf_add_stack(s, ips, n);
		free(ips);
		if (idx == SF_NONE)
			rd_fail(r, "out of memory reading stacks");
		else if (idx != i)
			rd_fail(r, "corrupt sample file: stack %u repeats stack %u", i, idx);
	}
	return r->failed ? -1 : 0;
}

static int parse_records(struct rd *r, struct sample_set *s, uint32_t count)
{
	for (uint32_t i = 0; i < count && !r->failed; i++) {
		struct sf_record rec = {0};
		rec.tgid = get32(r, "record process");
		rec.flags = get32(r, "record flags");
		rec.ip = get64(r, "record ip");
		rec.sp_off = (int64_t)get64(r, "record sp offset");
		rec.bp_off = (int64_t)get64(r, "record bp offset");
		rec.count = get64(r, "record count");
		rec.stack = get32(r, "record stack");
		rec.nwords = get32(r, "record words");
		if (r->failed)
			return -1;
		if (rec.nwords != 0 && rec.nwords != SF_WORDS) {
			rd_fail(r, "corrupt sample file: record %u has %u stack words (0 or %d)", i,
				rec.nwords, SF_WORDS);
			return -1;
		}
		if (need(r, rec.nwords * 8, "record words"))
			return -1;
		memcpy(rec.words, r->p + r->off, rec.nwords * 8);
		r->off += rec.nwords * 8;
		const char *bad = NULL;
		if (rec.flags & ~SF_R_ALL)
			bad = "unknown flags";
		else if (rec.count == 0)
			bad = "a zero count";
		else if (!sf_process(s, rec.tgid))
			bad = "an unknown process";
		else if (rec.stack != SF_NONE && rec.stack >= s->nstacks)
			bad = "a stack index out of range";
		else if ((rec.stack != SF_NONE || rec.nwords) && !(s->meta.flags & SF_M_VALIDATE))
			bad = "a user stack but the recording was not --validate";
		if (bad) {
			rd_fail(r, "corrupt sample file: record %u has %s", i, bad);
			return -1;
		}
		uint32_t before = s->nrecs;
		if (sf_add_record(s, &rec) == SF_NONE) {
			rd_fail(r, "out of memory reading records");
			return -1;
		}
		if (s->nrecs == before) {
			rd_fail(r, "corrupt sample file: record %u repeats an earlier one", i);
			return -1;
		}
	}
	return r->failed ? -1 : 0;
}

int sf_parse(const void *buf, size_t len, struct sample_set **out, char *err, size_t errlen)
{
	const uint8_t *p = buf;
	struct rd r = {.p = p, .len = len, .err = err, .errlen = errlen};
	struct sample_set *s = NULL;
	const char *kind;

	*out = NULL;
	if (len < 8 || memcmp(p, SF_MAGIC, 8)) {
		if (len == 0)
			snprintf(err, errlen, "empty file, not an icpp sample file");
		else if ((kind = foreign_kind(p, len)))
			snprintf(err, errlen, "not an icpp sample file: it is %s", kind);
		else
			snprintf(err, errlen, "not an icpp sample file (bad magic)");
		return -1;
	}
	if (len < SF_HEADER_SIZE + 4) {
		snprintf(err, errlen, "truncated sample file: %zu bytes, the header alone is %d", len,
			 SF_HEADER_SIZE);
		return -1;
	}
	uint32_t version, hsize, nsec;
	uint64_t fsize;
	memcpy(&version, p + 8, 4);
	memcpy(&hsize, p + 12, 4);
	memcpy(&fsize, p + 16, 8);
	memcpy(&nsec, p + 24, 4);
	if (version != SF_VERSION) {
		snprintf(err, errlen, "sample file format version %u; this icpp reads version %d%s",
			 version, SF_VERSION,
			 version > SF_VERSION ? " (record it with this icpp, or update icpp)" : "");
		return -1;
	}
	if (fsize != len) {
		if (fsize > len)
			snprintf(err, errlen, "truncated sample file: %zu of %" PRIu64 " bytes", len, fsize);
		else
			snprintf(err, errlen, "corrupt sample file: %zu bytes but the header says %" PRIu64,
				 len, fsize);
		return -1;
	}
	uint32_t want, have = (uint32_t)crc32(0L, p, (uInt)(len - 4));
	memcpy(&want, p + len - 4, 4);
	if (want != have) {
		snprintf(err, errlen, "corrupt sample file: checksum mismatch (stored %08x, computed %08x)",
			 want, have);
		return -1;
	}
	if (hsize != SF_HEADER_SIZE || nsec != SEC_NR - 1) {
		snprintf(err, errlen, "corrupt sample file: header size %u, %u sections", hsize, nsec);
		return -1;
	}
	s = sf_new();
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	r.off = SF_HEADER_SIZE;
	r.len = len - 4;            /* the checksum is not a section */
	for (uint32_t t = SEC_META; t < SEC_NR && !r.failed; t++) {
		uint32_t type = get32(&r, "section type");
		uint32_t count = get32(&r, "section count");
		uint64_t slen = get64(&r, "section length");
		if (r.failed)
			break;
		if (type != t) {
			rd_fail(&r, "corrupt sample file: section %u where %s was expected", type,
				sec_names[t]);
			break;
		}
		if (slen > r.len - r.off) {
			rd_fail(&r, "corrupt sample file: %s section of %" PRIu64 " bytes runs past the end",
				sec_names[t], slen);
			break;
		}
		struct rd sub = r;
		sub.len = r.off + slen;
		int rc = 0;
		switch (t) {
		case SEC_META:
			rc = count == 1 ? parse_meta(&sub, s) : (rd_fail(&sub, "corrupt sample file: %u meta entries", count), -1);
			break;
		case SEC_PROCS: rc = parse_procs(&sub, s, count); break;
		case SEC_MODULES: rc = parse_modules(&sub, s, count); break;
		case SEC_STACKS: rc = parse_stacks(&sub, s, count); break;
		case SEC_RECORDS: rc = parse_records(&sub, s, count); break;
		}
		if (rc == 0 && sub.off != sub.len)
			rd_fail(&sub, "corrupt sample file: %" PRIu64 " stray bytes at the end of the %s section",
				(uint64_t)(sub.len - sub.off), sec_names[t]);
		if (sub.failed) {
			r.failed = 1;
			break;
		}
		r.off = sub.len;
	}
	if (!r.failed && r.off != r.len)
		rd_fail(&r, "corrupt sample file: %zu stray bytes after the sections", r.len - r.off);
	if (!r.failed) {
		uint64_t tot = sf_total(s);
		if (tot > s->meta.c.samples)
			rd_fail(&r, "corrupt sample file: records hold %" PRIu64 " samples, more than the %" PRIu64 " recorded",
				tot, s->meta.c.samples);
	}
	if (r.failed) {
		sf_free(s);
		return -1;
	}
	s->meta.version = version;
	*out = s;
	return 0;
}

int sf_read(const char *path, struct sample_set **out, char *err, size_t errlen)
{
	void *buf;
	size_t len;
	char e[512];

	if (read_file(path, &buf, &len, err, errlen))
		return -1;
	int rc = sf_parse(buf, len, out, e, sizeof(e));
	free(buf);
	if (rc)
		snprintf(err, errlen, "%s: %s", path, e);
	return rc;
}
