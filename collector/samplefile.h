/* samplefile: what `icpp record` writes and `icpp report` reads.
 *
 * In memory a sample set is: the recording's metadata and counters, the
 * target processes, their modules (path, build-id, where each was mapped and
 * its load bias) and the aggregated samples: one record per distinct
 * (process, flags, IP, base - SP, base - BP[, user stack]) with its count.
 * Report needs nothing from the live processes.
 *
 * The on-disk format is documented in docs/sample-format.md.  sf_parse
 * validates every field and rejects corrupt, truncated or foreign files with
 * one clear line.
 */
#ifndef ICPP_SAMPLEFILE_H
#define ICPP_SAMPLEFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SF_MAGIC "ICPPSMPL"
#define SF_VERSION 2
#define SF_NONE UINT32_MAX
#define SF_BUILD_ID_MAX 64
#define SF_WORDS 8                  /* user stack words at SP (--validate) */
#define SF_MAX_STACK 512            /* frames per user stack */

/* Record flags: bpf/sample.h ICPP_K_* (same values). */
#define SF_R_MAIN 0x1
#define SF_R_KERNEL 0x2
#define SF_R_BP_VALID 0x4
#define SF_R_NO_BASE 0x8
#define SF_R_SP_OUTSIDE 0x10
#define SF_R_ALL 0x1f

/* Meta flags. */
#define SF_M_VALIDATE 0x1           /* records carry user stacks */
#define SF_M_SKID 0x2               /* IP and SP may come from different instants (AMD IBS) */
#define SF_M_NO_KERNEL 0x4          /* kernel-mode time was not sampled (exclude_kernel) */
#define SF_M_ALL 0x7

/* Process flags: what the perf backend met reading its threads' fs bases. */
#define SF_P_PTRACE_REFUSED 0x1     /* not readable: other threads' samples have no base */
#define SF_P_OFFSET_VARIES 0x2      /* stack end - fs base differs between threads */
#define SF_P_FOREIGN_STACK 0x4      /* a thread's fs base lies outside its SP's mapping */
#define SF_P_ALL 0x7
#define SF_TP_OFFSET_MAX (1ull << 32)

enum sf_backend { SF_BACKEND_BPF = 1, SF_BACKEND_PERF = 2 };

/* Counters of the recording (what did not become a record, and why). */
struct sf_counters {
	uint64_t samples;           /* samples of target processes (records sum to
	                             * samples - dropped - no_user_regs) */
	uint64_t dropped;           /* BPF count map full */
	uint64_t lost;              /* perf ring buffer overflow (PERF_RECORD_LOST) */
	uint64_t no_user_regs;      /* target task without user registers */
	uint64_t kernel_hits;       /* taken in kernel mode (counted via user regs) */
	uint64_t stack_errors;      /* --validate: no user stack for the sample */
	uint64_t unknown_base;      /* perf backend: no base for the thread (recorded
	                             * with SF_R_NO_BASE, reported as missing) */
	uint64_t forks;             /* child processes followed */
};

struct sf_meta {
	uint32_t version;
	uint32_t flags;             /* SF_M_* */
	uint32_t backend;           /* enum sf_backend */
	uint32_t ncpus;
	uint64_t period;            /* sampling period (events), 0 if freq */
	uint64_t freq;              /* sampling frequency (Hz), 0 if period */
	uint64_t start_ns, end_ns;  /* CLOCK_REALTIME */
	char *event;                /* "cpu-clock", ... */
	char *command;              /* command line or "-p PID" */
	char *hostname;
	char *kernel;               /* uname -r */
	struct sf_counters c;
};

struct sf_process {
	uint32_t tgid;
	uint32_t parent;            /* tgid of the parent target, 0 for a root */
	char *comm;                 /* may be "" */
	uint32_t flags;             /* SF_P_* (perf backend) */
	uint64_t tp_offset;         /* perf backend: end of a glibc thread's stack
	                             * mapping - its fs base, as measured on one of
	                             * the process's threads; 0: none measured */
};

struct sf_module {
	uint32_t tgid;              /* process that mapped it */
	uint64_t start, end;        /* runtime range of the mapping [start, end) */
	uint64_t pgoff;             /* file offset of start */
	uint64_t bias;              /* runtime address - ELF vaddr (0 if unknown) */
	uint32_t bias_known;        /* 1 when bias was computed from the ELF */
	uint32_t build_id_len;      /* 0: none found */
	uint8_t build_id[SF_BUILD_ID_MAX];
	char *path;
};

struct sf_stack {
	uint32_t n;                 /* frames, innermost (the IP) first */
	uint64_t *ips;
};

struct sf_record {
	uint32_t tgid;
	uint32_t flags;             /* SF_R_* */
	uint64_t ip;
	int64_t sp_off;             /* base - SP */
	int64_t bp_off;             /* base - BP (SF_R_BP_VALID) */
	uint64_t count;
	uint32_t stack;             /* index into stacks or SF_NONE */
	uint32_t nwords;            /* 0 or SF_WORDS */
	uint64_t words[SF_WORDS];   /* user stack at SP, SP+8, ... */
};

struct sample_set {
	struct sf_meta meta;
	struct sf_process *procs;
	uint32_t nprocs, cap_procs;
	struct sf_module *mods;
	uint32_t nmods, cap_mods;
	struct sf_stack *stacks;
	uint32_t nstacks, cap_stacks;
	struct sf_record *recs;
	uint32_t nrecs, cap_recs;
	struct sf_index *index;     /* private: dedup of records and stacks */
};

struct sample_set *sf_new(void);
void sf_free(struct sample_set *s);

/* Building (record).  Strings are copied.  sf_add_record merges records with
 * equal keys (everything but count) and adds count; sf_add_stack dedups on
 * content.  Each returns an index, or SF_NONE when out of memory. */
uint32_t sf_add_process(struct sample_set *s, uint32_t tgid, uint32_t parent, const char *comm);
uint32_t sf_add_module(struct sample_set *s, const struct sf_module *m);
uint32_t sf_add_stack(struct sample_set *s, const uint64_t *ips, uint32_t n);
uint32_t sf_add_record(struct sample_set *s, const struct sf_record *r);
int sf_set_string(char **dst, const char *src);
uint64_t sf_total(const struct sample_set *s);   /* sum of record counts */

/* The module of process tgid that maps addr, or NULL. */
const struct sf_module *sf_module_at(const struct sample_set *s, uint32_t tgid, uint64_t addr);
const struct sf_process *sf_process(const struct sample_set *s, uint32_t tgid);

/* File I/O: 0, or -1 with one line in err.  sf_write is atomic (util/fileio). */
int sf_write(const struct sample_set *s, const char *path, char *err, size_t errlen);
int sf_read(const char *path, struct sample_set **out, char *err, size_t errlen);
int sf_parse(const void *buf, size_t len, struct sample_set **out, char *err, size_t errlen);
/* Serialise into a malloc'd buffer (what sf_write writes). */
int sf_serialize(const struct sample_set *s, void **buf, size_t *len, char *err, size_t errlen);

#endif
