/* ring: perf mmap ring buffer reading and record parsing. */
#include "collector/ring.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

int ring_map(struct ring *r, int fd, unsigned order)
{
	long page = sysconf(_SC_PAGESIZE);
	memset(r, 0, sizeof(*r));
	r->fd = fd;
	r->data_size = (size_t)page << order;
	r->map_size = r->data_size + (size_t)page;
	r->base = mmap(NULL, r->map_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r->base == MAP_FAILED) {
		r->base = NULL;
		return -1;
	}
	return 0;
}

void ring_unmap(struct ring *r)
{
	if (r->base)
		munmap(r->base, r->map_size);
	free(r->copy);
	r->base = NULL;
	r->copy = NULL;
}

size_t ring_drain(struct ring *r, ring_cb cb, void *ctx)
{
	struct perf_event_mmap_page *mp = r->base;
	uint8_t *data;
	size_t n = 0;

	if (!mp)
		return 0;
	data = (uint8_t *)r->base + (r->map_size - r->data_size);
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	while (tail < head) {
		size_t off = tail % r->data_size;
		struct perf_event_header hdr;
		if (off + sizeof(hdr) <= r->data_size) {
			memcpy(&hdr, data + off, sizeof(hdr));
		} else {
			size_t first = r->data_size - off;
			memcpy(&hdr, data + off, first);
			memcpy((uint8_t *)&hdr + first, data, sizeof(hdr) - first);
		}
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail)
			break;  /* never happens with a sane kernel; stop rather than loop */
		const struct perf_event_header *rec;
		if (off + hdr.size <= r->data_size) {
			rec = (const void *)(data + off);
		} else {
			if (r->copy_size < hdr.size) {
				uint8_t *c = realloc(r->copy, hdr.size);
				if (!c)
					break;
				r->copy = c;
				r->copy_size = hdr.size;
			}
			size_t first = r->data_size - off;
			memcpy(r->copy, data + off, first);
			memcpy(r->copy + first, data, hdr.size - first);
			rec = (const void *)r->copy;
		}
		cb(rec, ctx);
		n++;
		tail += hdr.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

struct cursor {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t c64(struct cursor *c)
{
	uint64_t v = 0;
	if (c->end - c->p < 8) {
		c->bad = 1;
		return 0;
	}
	memcpy(&v, c->p, 8);
	c->p += 8;
	return v;
}

static void c32x2(struct cursor *c, uint32_t *a, uint32_t *b)
{
	uint64_t v = c64(c);
	*a = (uint32_t)v;
	*b = (uint32_t)(v >> 32);
}

static const char *cstr(struct cursor *c)
{
	const char *s = (const char *)c->p;
	const uint8_t *nul = memchr(c->p, 0, c->end - c->p);
	if (!nul) {
		c->bad = 1;
		return "";
	}
	/* strings are padded to 8 bytes */
	size_t len = (size_t)(nul - c->p) + 1;
	len = (len + 7) & ~(size_t)7;
	c->p = c->p + len > c->end ? c->end : c->p + len;
	return s;
}

static void cursor_init(struct cursor *c, const struct perf_event_header *h)
{
	c->p = (const uint8_t *)(h + 1);
	c->end = (const uint8_t *)h + h->size;
	c->bad = 0;
}

int parse_mmap2(const struct perf_event_header *h, struct rec_mmap2 *m)
{
	struct cursor c;
	if (h->type != PERF_RECORD_MMAP2)
		return -1;
	cursor_init(&c, h);
	memset(m, 0, sizeof(*m));
	c32x2(&c, &m->pid, &m->tid);
	m->addr = c64(&c);
	m->len = c64(&c);
	m->pgoff = c64(&c);
	if (c.end - c.p < 24)
		return -1;
	if (h->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
		uint8_t n = c.p[0];
		if (n <= 20) {
			m->build_id = c.p + 4;
			m->build_id_len = n;
		}
	}
	c.p += 24;                  /* maj, min, ino, ino_generation | build-id */
	c32x2(&c, &m->prot, &m->flags);
	m->filename = cstr(&c);
	return c.bad ? -1 : 0;
}

int parse_task(const struct perf_event_header *h, struct rec_task *t)
{
	struct cursor c;
	if (h->type != PERF_RECORD_FORK && h->type != PERF_RECORD_EXIT)
		return -1;
	cursor_init(&c, h);
	c32x2(&c, &t->pid, &t->ppid);
	c32x2(&c, &t->tid, &t->ptid);
	return c.bad ? -1 : 0;
}

int parse_comm(const struct perf_event_header *h, struct rec_comm *cm)
{
	struct cursor c;
	if (h->type != PERF_RECORD_COMM)
		return -1;
	cursor_init(&c, h);
	c32x2(&c, &cm->pid, &cm->tid);
	cm->comm = cstr(&c);
	cm->exec = !!(h->misc & PERF_RECORD_MISC_COMM_EXEC);
	return c.bad ? -1 : 0;
}

int parse_sample(const struct perf_event_header *h, uint64_t st, struct rec_sample *s,
		 uint64_t *chain_buf)
{
	struct cursor c;
	if (h->type != PERF_RECORD_SAMPLE)
		return -1;
	cursor_init(&c, h);
	memset(s, 0, sizeof(*s));
	if (st & PERF_SAMPLE_IP)
		s->ip = c64(&c);
	if (st & PERF_SAMPLE_TID)
		c32x2(&c, &s->pid, &s->tid);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t nr = c64(&c);
		if (nr > (uint64_t)(c.end - c.p) / 8)
			return -1;
		const uint8_t *ips = c.p;
		c.p += nr * 8;
		for (uint64_t i = 0; i < nr; i++) {
			uint64_t ip;
			memcpy(&ip, ips + i * 8, 8);
			if (ip >= (uint64_t)PERF_CONTEXT_MAX)
				continue;   /* PERF_CONTEXT_USER and friends */
			if (s->nr_chain < PS_MAX_CALLCHAIN)
				chain_buf[s->nr_chain++] = ip;
		}
		s->chain = chain_buf;
	}
	if (st & PERF_SAMPLE_REGS_USER) {
		s->user_abi = c64(&c);
		if (s->user_abi) {  /* mask is BP | SP | IP, in bit order */
			s->ubp = c64(&c);
			s->usp = c64(&c);
			s->uip = c64(&c);
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		s->stack_size = c64(&c);
		if (s->stack_size) {
			if (s->stack_size > (uint64_t)(c.end - c.p))
				return -1;
			s->stack = c.p;
			c.p += s->stack_size;
			uint64_t dyn = c64(&c);
			if (dyn < s->stack_size)
				s->stack_size = dyn;
		}
	}
	if (st & PERF_SAMPLE_REGS_INTR) {
		s->intr_abi = c64(&c);
		if (s->intr_abi) {
			s->ibp = c64(&c);
			s->isp = c64(&c);
			s->iip = c64(&c);
		}
	}
	return c.bad ? -1 : 0;
}
