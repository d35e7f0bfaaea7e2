/* t_samplefile: the sample file format (collector/samplefile.c), built with
 * ASan + UBSan.  Round trip, then deterministic corruption: every truncation,
 * a bit flip at every byte, field-level corruption with a valid checksum,
 * foreign files and other versions, each with its message.
 * Usage: t_samplefile [CORPUS_DIR]  (writes seed files for the fuzz target). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "collector/samplefile.h"
#include "tests/check.h"

static struct sample_set *make_set(bool validate)
{
	struct sample_set *s = sf_new();
	s->meta.flags = validate ? SF_M_VALIDATE : 0;
	s->meta.backend = validate ? SF_BACKEND_PERF : SF_BACKEND_BPF;
	s->meta.ncpus = 4;
	s->meta.freq = 999;
	s->meta.start_ns = 1000;
	s->meta.end_ns = 2000;
	s->meta.c.samples = 100;
	s->meta.c.dropped = 3;
	s->meta.c.kernel_hits = 7;
	sf_set_string(&s->meta.event, "cpu-clock");
	sf_set_string(&s->meta.command, "./app --flag");
	sf_set_string(&s->meta.hostname, "host");
	sf_set_string(&s->meta.kernel, "6.1.0");
	sf_add_process(s, 100, 0, "app");
	sf_add_process(s, 101, 100, "child");
	if (validate) {             /* perf backend: the fs-base facts */
		s->procs[0].tp_offset = 0x940;
		s->procs[1].flags = SF_P_PTRACE_REFUSED | SF_P_OFFSET_VARIES;
	}
	struct sf_module m = {0};
	m.tgid = 100;
	m.start = 0x400000;
	m.end = 0x401000;
	m.pgoff = 0x1000;
	m.bias = 0x3ff000;
	m.bias_known = 1;
	m.build_id_len = 20;
	for (int i = 0; i < 20; i++)
		m.build_id[i] = (uint8_t)(i * 7);
	m.path = "/usr/bin/app";
	CHECK_EQ_INT(sf_add_module(s, &m), 0);
	m.tgid = 101;
	m.path = "/lib/libc.so.6";
	m.build_id_len = 0;
	CHECK_EQ_INT(sf_add_module(s, &m), 1);
	uint64_t st[3] = {0x400123, 0x400456, 0x400789};
	if (validate) {
		CHECK_EQ_INT(sf_add_stack(s, st, 3), 0);
		CHECK_EQ_INT(sf_add_stack(s, st, 2), 1);
		CHECK_EQ_INT(sf_add_stack(s, st, 3), 0);      /* dedup by content */
	}
	struct sf_record r = {0};
	r.tgid = 100;
	r.flags = SF_R_MAIN | SF_R_BP_VALID;
	r.ip = 0x400123;
	r.sp_off = 320;
	r.bp_off = 304;
	r.count = 40;
	r.stack = validate ? 0 : SF_NONE;
	if (validate) {
		r.nwords = SF_WORDS;
		for (int i = 0; i < SF_WORDS; i++)
			r.words[i] = 0x400000 + i;
	}
	CHECK_EQ_INT(sf_add_record(s, &r), 0);
	CHECK_EQ_INT(sf_add_record(s, &r), 0);            /* merged: count 80 */
	r.tgid = 101;
	r.flags = SF_R_KERNEL;
	r.count = 10;
	r.stack = validate ? 1 : SF_NONE;
	CHECK_EQ_INT(sf_add_record(s, &r), 1);
	return s;
}

static void same(const struct sample_set *a, const struct sample_set *b)
{
	CHECK_EQ_INT(a->meta.flags, b->meta.flags);
	CHECK_EQ_INT(a->meta.backend, b->meta.backend);
	CHECK_EQ_INT(a->meta.freq, b->meta.freq);
	CHECK_EQ_INT(a->meta.c.samples, b->meta.c.samples);
	CHECK_EQ_INT(a->meta.c.dropped, b->meta.c.dropped);
	CHECK_EQ_STR(a->meta.event, b->meta.event);
	CHECK_EQ_STR(a->meta.command, b->meta.command);
	CHECK_EQ_INT(a->nprocs, b->nprocs);
	CHECK_EQ_INT(a->nmods, b->nmods);
	CHECK_EQ_INT(a->nstacks, b->nstacks);
	CHECK_EQ_INT(a->nrecs, b->nrecs);
	for (uint32_t i = 0; i < a->nprocs && i < b->nprocs; i++) {
		CHECK_EQ_INT(a->procs[i].flags, b->procs[i].flags);
		CHECK_EQ_INT(a->procs[i].tp_offset, b->procs[i].tp_offset);
	}
	for (uint32_t i = 0; i < a->nmods && i < b->nmods; i++) {
		CHECK_EQ_STR(a->mods[i].path, b->mods[i].path);
		CHECK_EQ_INT(a->mods[i].bias, b->mods[i].bias);
		CHECK_EQ_INT(a->mods[i].build_id_len, b->mods[i].build_id_len);
		CHECK(!memcmp(a->mods[i].build_id, b->mods[i].build_id, a->mods[i].build_id_len));
	}
	for (uint32_t i = 0; i < a->nrecs && i < b->nrecs; i++) {
		CHECK_EQ_INT(a->recs[i].count, b->recs[i].count);
		CHECK_EQ_INT(a->recs[i].sp_off, b->recs[i].sp_off);
		CHECK_EQ_INT(a->recs[i].stack, b->recs[i].stack);
		CHECK_EQ_INT(a->recs[i].nwords, b->recs[i].nwords);
		CHECK(!memcmp(a->recs[i].words, b->recs[i].words, sizeof(a->recs[i].words)));
	}
	CHECK_EQ_INT(sf_total(b), 90);
}

static void fix_crc(uint8_t *buf, size_t len)
{
	uint32_t crc = (uint32_t)crc32(0L, buf, (uInt)(len - 4));
	memcpy(buf + len - 4, &crc, 4);
}

/* Parse must fail and the message contain want. */
static void refuse(const void *buf, size_t len, const char *want, const char *what)
{
	struct sample_set *s = NULL;
	char err[512] = "";
	int rc = sf_parse(buf, len, &s, err, sizeof(err));
	if (rc == 0 || !strstr(err, want)) {
		fprintf(stderr, "  %s: rc %d, message '%s', wanted '%s'\n", what, rc, err, want);
		CHECK(rc != 0 && strstr(err, want));
	}
	sf_free(s);
}

/* Serialise s after a mutation and expect the reader to refuse it. */
static void refuse_set(struct sample_set *s, const char *want, const char *what)
{
	void *buf;
	size_t len;
	char err[256];
	CHECK_EQ_INT(sf_serialize(s, &buf, &len, err, sizeof(err)), 0);
	refuse(buf, len, want, what);
	free(buf);
}

int main(int argc, char **argv)
{
	char err[512];
	void *buf;
	size_t len;

	for (int v = 0; v < 2; v++) {
		struct sample_set *a = make_set(v), *b = NULL;
		CHECK_EQ_INT(sf_serialize(a, &buf, &len, err, sizeof(err)), 0);
		CHECK_EQ_INT(sf_parse(buf, len, &b, err, sizeof(err)), 0);
		if (b)
			same(a, b);
		sf_free(b);
		if (argc > 1) {
			char path[4096];
			snprintf(path, sizeof(path), "%s/seed%d", argv[1], v);
			FILE *f = fopen(path, "wb");
			if (f) {
				fwrite(buf, 1, len, f);
				fclose(f);
			}
		}
		/* Every truncation. */
		for (size_t l = 0; l < len; l++)
			refuse(buf, l, l == 0 ? "empty" : l < 8 ? "not an icpp sample file" : "truncated",
			       "truncation");
		/* A flipped bit in every byte: the checksum (or the header
		 * check before it) catches each one. */
		uint8_t *c = malloc(len);
		for (size_t i = 0; i < len; i++) {
			memcpy(c, buf, len);
			c[i] ^= (uint8_t)(1u << (i % 8));
			const char *want = i < 8 ? "not an icpp sample file" : i < 12 ? "version" :
					   i >= 16 && i < 24 ? "sample file" : "corrupt";
			refuse(c, len, want, "bit flip");
		}
		/* Encoding corruption under a valid checksum. */
		memcpy(c, buf, len);
		c[32] = 9;                  /* first section type */
		fix_crc(c, len);
		refuse(c, len, "section 9 where meta was expected", "section type");
		memcpy(c, buf, len);
		uint64_t big = 1u << 30;
		memcpy(c + 40, &big, 8);    /* meta section length */
		fix_crc(c, len);
		refuse(c, len, "runs past the end", "section length");
		memcpy(c, buf, len);
		uint32_t ver = SF_VERSION - 1;
		memcpy(c + 8, &ver, 4);
		fix_crc(c, len);
		char want_ver[96];
		snprintf(want_ver, sizeof(want_ver), "format version %u; this icpp reads version %u",
			 ver, SF_VERSION);
		refuse(c, len, want_ver, "version");
		free(c);
		free(buf);

		/* Field corruption, serialised with a valid checksum. */
		a->recs[0].flags |= 0x100;
		refuse_set(a, "record 0 has unknown flags", "flags");
		a->recs[0].flags &= ~0x100u;
		a->recs[1].tgid = 999;
		refuse_set(a, "record 1 has an unknown process", "record tgid");
		a->recs[1].tgid = 101;
		a->recs[0].count = 0;
		refuse_set(a, "zero count", "count");
		a->recs[0].count = 1000;
		refuse_set(a, "more than the 100 recorded", "count sum");
		a->recs[0].count = 80;
		a->mods[0].end = a->mods[0].start;
		refuse_set(a, "empty range", "module range");
		a->mods[0].end = a->mods[0].start + 0x1000;
		a->meta.backend = 7;
		refuse_set(a, "unknown backend 7", "backend");
		a->meta.backend = SF_BACKEND_PERF;
		a->meta.period = 5;
		refuse_set(a, "exactly one of period and frequency", "period and freq");
		a->meta.period = 0;
		a->procs[0].flags = 0x80;
		refuse_set(a, "process 100 has unknown flags", "process flags");
		a->procs[0].flags = 0;
		a->procs[0].tp_offset = 0x941;
		refuse_set(a, "process 100 has a thread-pointer offset", "unaligned offset");
		a->procs[0].tp_offset = SF_TP_OFFSET_MAX;
		refuse_set(a, "process 100 has a thread-pointer offset", "huge offset");
		a->procs[0].tp_offset = 0x940;
		a->meta.backend = SF_BACKEND_BPF;
		refuse_set(a, "not made by the perf backend", "offset of a bpf recording");
		a->meta.backend = SF_BACKEND_PERF;
		if (v) {
			a->recs[0].stack = 7;
			refuse_set(a, "stack index out of range", "stack index");
			a->recs[0].stack = 0;
			a->meta.flags = 0;
			refuse_set(a, "not --validate", "validate flag");
			a->meta.flags = SF_M_VALIDATE;
		}
		a->procs[1].tgid = 100;
		refuse_set(a, "process 100 listed twice", "duplicate process");
		a->procs[1].tgid = 101;
		/* Unchanged again: accepted. */
		CHECK_EQ_INT(sf_serialize(a, &buf, &len, err, sizeof(err)), 0);
		struct sample_set *d = NULL;
		CHECK_EQ_INT(sf_parse(buf, len, &d, err, sizeof(err)), 0);
		sf_free(d);
		free(buf);
		sf_free(a);
	}

	/* Foreign files. */
	refuse("\177ELF\2\1\1\0\0\0\0\0", 12, "it is an ELF file", "ELF");
	refuse("PERFILE2\0\0\0\0\0\0\0\0", 16, "perf.data", "perf.data");
	refuse("ICPPMAP\0\1\0\0\0\0\0\0\0", 16, "a pathmap?", "pathmap");
	refuse("\x1f\x8b\x08\0\0\0\0\0", 8, "gzip", "gzip");
	refuse("hello world, not samples", 24, "bad magic", "text");

	/* File I/O: atomic write, read back, missing file. */
	struct sample_set *a = make_set(true), *b = NULL;
	char path[] = "/tmp/t_samplefile.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	CHECK_EQ_INT(sf_write(a, path, err, sizeof(err)), 0);
	CHECK_EQ_INT(sf_read(path, &b, err, sizeof(err)), 0);
	if (b)
		same(a, b);
	unlink(path);
	sf_free(b);
	b = NULL;
	CHECK(sf_read("/nonexistent/x.samples", &b, err, sizeof(err)) != 0);
	CHECK(strstr(err, "/nonexistent/x.samples") != NULL);
	sf_free(a);
	return check_exit();
}
