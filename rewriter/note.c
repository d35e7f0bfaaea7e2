/* note.c: SHA-1 for build-ids, and reading the "icpp" note a rewritten
 * binary carries (rewriter.h section 2) and what its clone table says. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rewriter/internal.h"

/* ------------------------------------------------------------------ SHA-1 (FIPS 180-4) */

static uint32_t rol(uint32_t x, int n)
{
	return (x << n) | (x >> (32 - n));
}

static void sha1_block(struct rw_sha1 *s, const uint8_t *p)
{
	uint32_t w[80];
	for (int i = 0; i < 16; i++)
		w[i] = (uint32_t)p[4 * i] << 24 | (uint32_t)p[4 * i + 1] << 16 |
		       (uint32_t)p[4 * i + 2] << 8 | p[4 * i + 3];
	for (int i = 16; i < 80; i++)
		w[i] = rol(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	uint32_t a = s->h[0], b = s->h[1], c = s->h[2], d = s->h[3], e = s->h[4];
	for (int i = 0; i < 80; i++) {
		uint32_t f, k;
		if (i < 20) {
			f = (b & c) | (~b & d);
			k = 0x5a827999;
		} else if (i < 40) {
			f = b ^ c ^ d;
			k = 0x6ed9eba1;
		} else if (i < 60) {
			f = (b & c) | (b & d) | (c & d);
			k = 0x8f1bbcdc;
		} else {
			f = b ^ c ^ d;
			k = 0xca62c1d6;
		}
		uint32_t t = rol(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = rol(b, 30);
		b = a;
		a = t;
	}
	s->h[0] += a;
	s->h[1] += b;
	s->h[2] += c;
	s->h[3] += d;
	s->h[4] += e;
}

void rw_sha1_init(struct rw_sha1 *s)
{
	static const uint32_t h0[5] = {0x67452301, 0xefcdab89, 0x98badcfe, 0x10325476, 0xc3d2e1f0};
	memcpy(s->h, h0, sizeof(h0));
	s->len = 0;
}

void rw_sha1_update(struct rw_sha1 *s, const void *data, size_t n)
{
	const uint8_t *p = data;
	size_t have = s->len % 64;
	s->len += n;
	if (have) {
		size_t take = 64 - have < n ? 64 - have : n;
		memcpy(s->buf + have, p, take);
		p += take;
		n -= take;
		if (have + take < 64)
			return;
		sha1_block(s, s->buf);
	}
	for (; n >= 64; p += 64, n -= 64)
		sha1_block(s, p);
	memcpy(s->buf, p, n);
}

void rw_sha1_final(struct rw_sha1 *s, uint8_t out[20])
{
	uint64_t bits = s->len * 8;
	uint8_t pad = 0x80, zero = 0, len[8];
	rw_sha1_update(s, &pad, 1);
	while (s->len % 64 != 56)
		rw_sha1_update(s, &zero, 1);
	for (int i = 0; i < 8; i++)
		len[i] = (uint8_t)(bits >> (56 - 8 * i));
	rw_sha1_update(s, len, 8);
	for (int i = 0; i < 5; i++)
		for (int j = 0; j < 4; j++)
			out[4 * i + j] = (uint8_t)(s->h[i] >> (24 - 8 * j));
}

/* ------------------------------------------------------------------ the icpp note */

/* 0; -1 when damaged; the layout version when it is another (> 0). */
static int cmp_wrap(const void *x, const void *y)
{
	const struct rw_note_wrap *a = x, *b = y;
	return a->tramp < b->tramp ? -1 : a->tramp > b->tramp;
}

int rw_note_parse(const uint8_t *d, size_t n, struct rw_note *out)
{
	memset(out, 0, sizeof(*out));
	size_t at = 0;
	uint32_t v, idlen, nw, plen, disp;
#define TAKE(dst, sz)                                  \
	do {                                           \
		if (at + (sz) > n)                     \
			return -1;                     \
		memcpy((dst), d + at, (sz));           \
		at += (sz);                            \
	} while (0)
	TAKE(&v, 4);
	if (v != RW_NOTE_VERSION)
		return v && v < INT32_MAX ? (int)v : -1;
	TAKE(&idlen, 4);
	if (idlen > PM_BUILD_ID_MAX)
		return -1;
	TAKE(out->orig_id, idlen);
	out->orig_id_len = idlen;
	at = (at + 3) & ~(size_t)3;
	TAKE(&nw, 4);
	if (nw > n / 24)
		return -1;
	out->wraps = calloc(nw ? nw : 1, sizeof(*out->wraps));
	if (!out->wraps)
		return -1;
	for (uint32_t i = 0; i < nw; i++) {
		struct rw_note_wrap *w = &out->wraps[i];
		TAKE(&w->tramp, 8);
		TAKE(&w->size, 4);
		TAKE(&w->bytes, 4);
		TAKE(&w->site, 8);
	}
	out->nwraps = nw;
	qsort(out->wraps, nw, sizeof(*out->wraps), cmp_wrap);
	uint32_t nc;
	TAKE(&nc, 4);
	if (nc > n / 68)
		return -1;
	out->clones = calloc(nc ? nc : 1, sizeof(*out->clones));
	if (!out->clones)
		return -1;
	for (uint32_t k = 0; k < nc; k++) {
		struct rw_note_clone *c = &out->clones[k];
		TAKE(&c->addr, 8);
		TAKE(&c->size, 8);
		TAKE(&c->func, 8);
		TAKE(&c->site, 8);
		TAKE(&disp, 4);
		if (disp > 1)
			return -1;
		c->dispatched = disp;
		TAKE(&c->frag_addr, 8);
		TAKE(&c->frag_size, 8);
		TAKE(&c->frag_func, 8);
		TAKE(&c->tag, 8);
	}
	out->nclones = nc;
	uint32_t ne;
	TAKE(&ne, 4);
	if (ne > n / 24)
		return -1;
	out->entries = calloc(ne ? ne : 1, sizeof(*out->entries));
	if (!out->entries)
		return -1;
	for (uint32_t i = 0; i < ne; i++) {
		struct rw_note_entry *e = &out->entries[i];
		TAKE(&e->func, 8);
		TAKE(&e->tramp, 8);
		TAKE(&e->size, 4);
		TAKE(&e->bytes, 4);
	}
	out->nentries = ne;
	TAKE(&plen, 4);
	if (plen > n - at)
		return -1;
	out->plan = malloc(plen + 1);
	if (!out->plan)
		return -1;
	memcpy(out->plan, d + at, plen);
	out->plan[plen] = 0;
#undef TAKE
	return 0;
}

int rw_note_read(const char *path, struct rw_note *n, char *err, size_t errlen)
{
	memset(n, 0, sizeof(*n));
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		errmsg(err, errlen, "cannot open %s", path);
		return -1;
	}
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		errmsg(err, errlen, "%s is not an ELF file", path);
		if (e)
			elf_end(e);
		close(fd);
		return -1;
	}
	int ret = 1;
	for (Elf_Scn *scn = NULL; ret == 1 && (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		Elf_Data *d;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE || !(d = elf_getdata(scn, NULL)))
			continue;
		GElf_Nhdr nh;
		size_t off = 0, name_off, desc_off;
		while ((off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
			if (nh.n_type != NT_ICPP_REWRITE || nh.n_namesz != 5 ||
			    memcmp((char *)d->d_buf + name_off, "icpp", 5))
				continue;
			int v = rw_note_parse((const uint8_t *)d->d_buf + desc_off, nh.n_descsz, n);
			if (v > 0)
				errmsg(err, errlen, "%s was rewritten by another icpp (note layout %d, "
					       "this one reads %d): rewrite it again", path, v, RW_NOTE_VERSION);
			else if (v < 0)
				errmsg(err, errlen, "%s: its icpp note is corrupt", path);
			ret = v ? -1 : 0;
			if (v)
				rw_note_free(n);
			break;
		}
	}
	elf_end(e);
	close(fd);
	return ret;
}

uint64_t rw_clone_copy_addr(const struct rw_note_clone *c, uint64_t addr)
{
	if (addr >= c->func && addr - c->func < c->size)
		return c->addr + (addr - c->func);
	if (c->frag_size && addr >= c->frag_func && addr - c->frag_func < c->frag_size)
		return c->frag_addr + (addr - c->frag_func);
	return 0;
}

uint64_t rw_clone_orig_addr(const struct rw_note_clone *c, uint64_t addr)
{
	if (addr - c->addr < c->size)
		return c->func + (addr - c->addr);
	if (c->frag_size && addr - c->frag_addr < c->frag_size)
		return c->frag_func + (addr - c->frag_addr);
	return 0;
}

void rw_note_free(struct rw_note *n)
{
	free(n->plan);
	free(n->wraps);
	free(n->clones);
	free(n->entries);
	memset(n, 0, sizeof(*n));
}
