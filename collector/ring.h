/* ring: a perf_event mmap ring buffer and the records icpp reads from it.
 *
 * Side-band records (both backends): PERF_RECORD_MMAP2 (modules, and thread
 * stack mappings for the perf backend), FORK (children to follow), COMM with
 * the exec flag, LOST.  Samples (perf backend only): IP, TID, user regs
 * (BP, SP, IP), and with --validate the user callchain and stack words.
 */
#ifndef ICPP_RING_H
#define ICPP_RING_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

struct ring {
	int fd;
	void *base;                 /* metadata page + data */
	size_t data_size;
	size_t map_size;
	uint8_t *copy;              /* a record that wraps, copied contiguous */
	size_t copy_size;
};

/* mmap fd with 2^order data pages; 0 or -1 (errno set). */
int ring_map(struct ring *r, int fd, unsigned order);
void ring_unmap(struct ring *r);

typedef void (*ring_cb)(const struct perf_event_header *h, void *ctx);
/* Hand every available record to cb; returns how many. */
size_t ring_drain(struct ring *r, ring_cb cb, void *ctx);

/* Parsed records. */
struct rec_mmap2 {
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	const uint8_t *build_id;    /* NULL unless PERF_RECORD_MISC_MMAP_BUILD_ID */
	uint32_t build_id_len;
	uint32_t prot, flags;
	const char *filename;
};
int parse_mmap2(const struct perf_event_header *h, struct rec_mmap2 *m);

struct rec_task {                  /* FORK and EXIT */
	uint32_t pid, ppid, tid, ptid;
};
int parse_task(const struct perf_event_header *h, struct rec_task *t);

struct rec_comm {
	uint32_t pid, tid;
	const char *comm;
	int exec;
};
int parse_comm(const struct perf_event_header *h, struct rec_comm *c);

/* Samples as the perf backend requests them (sample_type of perf_backend.c):
 * IP | TID | CALLCHAIN? | REGS_USER | STACK_USER? | REGS_INTR? */
#define PS_MAX_CALLCHAIN 512
struct rec_sample {
	uint64_t ip;                /* PERF_SAMPLE_IP (precise with PEBS) */
	uint32_t pid, tid;
	uint64_t nr_chain;
	const uint64_t *chain;      /* user part, innermost first, markers removed */
	uint64_t user_abi;          /* PERF_SAMPLE_REGS_ABI_*; 0: no user regs */
	uint64_t ubp, usp, uip;
	uint64_t stack_size;        /* bytes of user stack copied at SP */
	const uint8_t *stack;
	uint64_t intr_abi;
	uint64_t ibp, isp, iip;
};
int parse_sample(const struct perf_event_header *h, uint64_t sample_type, struct rec_sample *s,
		 uint64_t *chain_buf);

#endif
