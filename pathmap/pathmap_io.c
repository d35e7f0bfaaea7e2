/* pathmap_io.c: the on-disk pathmap (docs/pathmap-format.md).
 *
 * Little-endian throughout, fixed-size records, one string table, a header
 * checksum and a whole-file checksum (zlib crc32).  The parser trusts nothing:
 * every size is checked against the buffer with 64-bit arithmetic that cannot
 * wrap, every index and string offset is range-checked, and the semantic
 * invariants are pm_validate()'s. */
#include "pathmap/pathmap_int.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "util/fileio.h"

static const uint8_t MAGIC[8] = {'I', 'C', 'P', 'P', 'M', 'A', 'P', 0};

enum {
	HDR_SIZE = 56,
	HDR_CRC_OFF = 48,            /* crc32 of bytes [0, 48) */
	MOD_SIZE = 80,
	FUNC_SIZE = 24,
	NODE_SIZE = 40,
	CRC_SIZE = 4,
};
#define STR_NONE UINT32_MAX

/* ---- little-endian helpers --------------------------------------------- */

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) | (uint64_t)get32(p + 4) << 32;
}

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)v);
	put32(p + 4, (uint32_t)(v >> 32));
}

static uint32_t crc(const uint8_t *p, size_t len)
{
	uLong c = crc32(0L, Z_NULL, 0);
	while (len) {
		uInt chunk = len > (1u << 30) ? (1u << 30) : (uInt)len;
		c = crc32(c, p, chunk);
		p += chunk;
		len -= chunk;
	}
	return (uint32_t)c;
}

/* Size of a file with these counts; fits in 64 bits for any u32 counts and
 * strtab_size < 2^32. */
static uint64_t file_size(uint64_t nm, uint64_t nf, uint64_t nn, uint64_t strtab)
{
	return HDR_SIZE + nm * MOD_SIZE + nf * FUNC_SIZE + nn * NODE_SIZE + strtab + CRC_SIZE;
}

/* ---- writing ----------------------------------------------------------- */

struct str_ent {
	const char *s;
	uint32_t off;
	UT_hash_handle hh;
};

struct strtab {
	uint8_t *buf;
	size_t len, cap;
	struct str_ent *set;
	struct pm_slab *slab;
};

/* Offset of s in the table, adding it once; STR_NONE for NULL, and *oom set
 * when it cannot be added. */
static uint32_t str_add(struct strtab *t, const char *s, bool *oom)
{
	if (!s)
		return STR_NONE;
	size_t n = strlen(s);
	struct str_ent *e;
	HASH_FIND(hh, t->set, s, n, e);
	if (e)
		return e->off;
	if (t->len + n + 1 >= STR_NONE) {
		*oom = true;
		return STR_NONE;
	}
	if (t->len + n + 1 > t->cap) {
		size_t cap = t->cap ? t->cap : 4096;
		while (cap < t->len + n + 1)
			cap *= 2;
		uint8_t *p = realloc(t->buf, cap);
		if (!p) {
			*oom = true;
			return STR_NONE;
		}
		t->buf = p;
		t->cap = cap;
	}
	if (!(e = pm_slab_alloc(&t->slab, sizeof(*e)))) {
		*oom = true;
		return STR_NONE;
	}
	e->s = s;
	e->off = (uint32_t)t->len;
	unsigned before = HASH_COUNT(t->set);
	HASH_ADD_KEYPTR(hh, t->set, s, n, e);
	if (HASH_COUNT(t->set) != before + 1) {
		*oom = true;
		return STR_NONE;
	}
	memcpy(t->buf + t->len, s, n + 1);
	t->len += n + 1;
	return e->off;
}

int pm_serialize(const struct pathmap *pm, void **out, size_t *outlen, char *err, size_t errlen)
{
	if (pm_validate(pm, err, errlen) < 0) {
		char why[256];
		snprintf(why, sizeof(why), "%s", err);
		snprintf(err, errlen, "refusing to write an inconsistent pathmap: %s", why);
		return -1;
	}
	struct strtab t = {0};
	bool oom = false;
	uint32_t *path_off = malloc(((size_t)pm->nmodules + 1) * sizeof(uint32_t));
	uint32_t *name_off = malloc(((size_t)pm->nfuncs + 1) * sizeof(uint32_t));
	uint8_t *buf = NULL;
	int rc = -1;
	if (!path_off || !name_off) {
		oom = true;
		goto done;
	}
	for (uint32_t i = 0; i < pm->nmodules && !oom; i++)
		path_off[i] = str_add(&t, pm->modules[i].path, &oom);
	for (uint32_t i = 0; i < pm->nfuncs && !oom; i++)
		name_off[i] = str_add(&t, pm->funcs[i].name, &oom);
	if (oom)
		goto done;
	uint64_t total = file_size(pm->nmodules, pm->nfuncs, pm->nnodes, t.len);
	if (total > SIZE_MAX || !(buf = calloc(1, (size_t)total))) {
		oom = true;
		goto done;
	}
	memcpy(buf, MAGIC, sizeof(MAGIC));
	put32(buf + 8, PM_FORMAT_VERSION);
	put32(buf + 12, 0);
	put32(buf + 16, pm->nmodules);
	put32(buf + 20, pm->nfuncs);
	put32(buf + 24, pm->nnodes);
	put64(buf + 32, t.len);
	put64(buf + 40, total);
	put32(buf + HDR_CRC_OFF, crc(buf, HDR_CRC_OFF));
	uint8_t *p = buf + HDR_SIZE;
	for (uint32_t i = 0; i < pm->nmodules; i++, p += MOD_SIZE) {
		const struct pm_module *m = &pm->modules[i];
		put32(p, path_off[i]);
		put32(p + 4, m->build_id_len);
		memcpy(p + 8, m->build_id, m->build_id_len);
		put32(p + 72, m->functions_found);
		put32(p + 76, m->functions_hooked);
	}
	for (uint32_t i = 0; i < pm->nfuncs; i++, p += FUNC_SIZE) {
		const struct pm_function *f = &pm->funcs[i];
		put32(p, f->module);
		put32(p + 4, name_off[i]);
		put64(p + 8, f->addr);
		put64(p + 16, f->size);
	}
	for (uint32_t i = 0; i < pm->nnodes; i++, p += NODE_SIZE) {
		const struct pm_node *n = &pm->nodes[i];
		put32(p, n->parent);
		put32(p + 4, n->func);
		put32(p + 8, n->cs_module);
		put64(p + 16, n->cs_addr);
		put64(p + 24, (uint64_t)n->height);
		put64(p + 32, n->entries);
	}
	if (t.len)
		memcpy(p, t.buf, t.len);
	p += t.len;
	put32(p, crc(buf, (size_t)total - CRC_SIZE));
	*out = buf;
	*outlen = (size_t)total;
	buf = NULL;
	rc = 0;
done:
	if (oom)
		snprintf(err, errlen, "out of memory while encoding the pathmap");
	free(buf);
	free(path_off);
	free(name_off);
	HASH_CLEAR(hh, t.set);
	pm_slab_free(t.slab);
	free(t.buf);
	return rc;
}

int pm_write(const struct pathmap *pm, const char *path, char *err, size_t errlen)
{
	void *buf;
	size_t len;
	char why[512];
	if (pm_serialize(pm, &buf, &len, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	struct atomic_file af;
	if (af_open(&af, path, 0644, err, errlen) < 0) {
		free(buf);
		return -1;
	}
	size_t wrote = fwrite(buf, 1, len, af.f);
	free(buf);
	if (wrote != len) {
		af_abort(&af);
		snprintf(err, errlen, "cannot write %s (check free space and permissions)", path);
		return -1;
	}
	return af_commit(&af, err, errlen);
}

/* ---- reading ----------------------------------------------------------- */

#define CORRUPT "checksum mismatch: file is corrupt, train again"

/* A NUL-terminated string at off in the table, copied; NULL with *bad set
 * when off is outside the table or the string runs past its end. */
static char *get_str(const uint8_t *tab, uint64_t tablen, uint32_t off, bool *bad)
{
	if (off >= tablen || !memchr(tab + off, 0, (size_t)(tablen - off))) {
		*bad = true;
		return NULL;
	}
	return strdup((const char *)tab + off);
}

static int parse_header(const uint8_t *b, size_t len, uint32_t counts[3], uint64_t *strtab,
			char *err, size_t errlen)
{
	if (len == 0) {
		snprintf(err, errlen, "not an icpp pathmap (the file is empty)");
		return -1;
	}
	if (memcmp(b, MAGIC, len < sizeof(MAGIC) ? len : sizeof(MAGIC))) {
		snprintf(err, errlen, "not an icpp pathmap");
		return -1;
	}
	if (len < 12 || len < HDR_SIZE) {
		if (len >= 12 && get32(b + 8) > PM_FORMAT_VERSION)
			goto newer;
		snprintf(err, errlen, "truncated at byte %zu (in the %d-byte header): "
			 "file is incomplete, train again", len, HDR_SIZE);
		return -1;
	}
	uint32_t version = get32(b + 8);
	if (version > PM_FORMAT_VERSION)
		goto newer;
	if (get32(b + HDR_CRC_OFF) != crc(b, HDR_CRC_OFF)) {
		snprintf(err, errlen, CORRUPT);
		return -1;
	}
	if (version == 0) {
		snprintf(err, errlen, "corrupt pathmap: format version 0 does not exist; train again");
		return -1;
	}
	uint32_t flags = get32(b + 12);
	if (flags) {
		snprintf(err, errlen, "written by a newer icpp (unknown flags 0x%" PRIx32 "): "
			 "upgrade icpp or train again", flags);
		return -1;
	}
	for (int i = 0; i < 3; i++) {
		counts[i] = get32(b + 16 + 4 * i);
		if (counts[i] == PM_NONE) {
			snprintf(err, errlen, "corrupt pathmap: a count of %" PRIu32 " entries; "
				 "train again", counts[i]);
			return -1;
		}
	}
	*strtab = get64(b + 32);
	uint64_t size = get64(b + 40);
	if (*strtab >= STR_NONE ||
	    size != file_size(counts[0], counts[1], counts[2], *strtab)) {
		snprintf(err, errlen, "corrupt pathmap: the header's sizes disagree; train again");
		return -1;
	}
	if (len < size) {
		snprintf(err, errlen, "truncated at byte %zu of %" PRIu64 ": file is incomplete, "
			 "train again", len, size);
		return -1;
	}
	if (len > size) {
		snprintf(err, errlen, "corrupt pathmap: %zu bytes after its end at byte %" PRIu64
			 "; train again", len - (size_t)size, size);
		return -1;
	}
	if (get32(b + size - CRC_SIZE) != crc(b, (size_t)size - CRC_SIZE)) {
		snprintf(err, errlen, CORRUPT);
		return -1;
	}
	if (get32(b + 28) || get32(b + 52)) {
		snprintf(err, errlen, "corrupt pathmap: reserved header fields are not zero; "
			 "train again");
		return -1;
	}
	return 0;
newer:
	snprintf(err, errlen, "written by a newer icpp (format version %" PRIu32 "; this icpp "
		 "reads version %d): upgrade icpp or train again", get32(b + 8), PM_FORMAT_VERSION);
	return -1;
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* Decode the records (the header is already checked). */
static int parse_records(struct pathmap *pm, const uint8_t *b, const uint32_t counts[3],
			 uint64_t tablen, char *err, size_t errlen)
{
	const uint8_t *p = b + HDR_SIZE;
	const uint8_t *tab = p + (uint64_t)counts[0] * MOD_SIZE + (uint64_t)counts[1] * FUNC_SIZE +
			     (uint64_t)counts[2] * NODE_SIZE;
	bool bad = false;
	pm->modules = calloc(counts[0] ? counts[0] : 1, sizeof(*pm->modules));
	pm->funcs = calloc(counts[1] ? counts[1] : 1, sizeof(*pm->funcs));
	pm->nodes = calloc(counts[2] ? counts[2] : 1, sizeof(*pm->nodes));
	if (!pm->modules || !pm->funcs || !pm->nodes)
		goto oom;
	pm->cap_modules = counts[0];
	pm->cap_funcs = counts[1];
	pm->cap_nodes = counts[2];
	for (uint32_t i = 0; i < counts[0]; i++, p += MOD_SIZE) {
		struct pm_module *m = &pm->modules[i];
		uint32_t idlen = get32(p + 4);
		m->path = get_str(tab, tablen, get32(p), &bad);
		pm->nmodules = i + 1; /* pm_free frees the path */
		if (bad || idlen > PM_BUILD_ID_MAX || !all_zero(p + 8 + idlen, PM_BUILD_ID_MAX - idlen)) {
			snprintf(err, errlen, "corrupt pathmap: module %" PRIu32 " has %s; train again",
				 i, bad ? "a path outside the string table" : "a bad build-id");
			return -1;
		}
		if (!m->path)
			goto oom;
		m->build_id_len = idlen;
		memcpy(m->build_id, p + 8, idlen);
		m->functions_found = get32(p + 72);
		m->functions_hooked = get32(p + 76);
	}
	for (uint32_t i = 0; i < counts[1]; i++, p += FUNC_SIZE) {
		struct pm_function *f = &pm->funcs[i];
		uint32_t name = get32(p + 4);
		f->module = get32(p);
		f->addr = get64(p + 8);
		f->size = get64(p + 16);
		pm->nfuncs = i + 1;
		if (name != STR_NONE && !(f->name = get_str(tab, tablen, name, &bad))) {
			if (!bad)
				goto oom;
			snprintf(err, errlen, "corrupt pathmap: function %" PRIu32 " has a name outside "
				 "the string table; train again", i);
			return -1;
		}
	}
	for (uint32_t i = 0; i < counts[2]; i++, p += NODE_SIZE) {
		struct pm_node *n = &pm->nodes[i];
		if (get32(p + 12)) {
			snprintf(err, errlen, "corrupt pathmap: node %" PRIu32 " has a reserved field "
				 "that is not zero; train again", i);
			return -1;
		}
		n->parent = get32(p);
		n->func = get32(p + 4);
		n->cs_module = get32(p + 8);
		n->cs_addr = get64(p + 16);
		n->height = (int64_t)get64(p + 24);
		n->entries = get64(p + 32);
	}
	pm->nnodes = counts[2];
	char why[256];
	if (pm_validate(pm, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "corrupt pathmap: %s; train again", why);
		return -1;
	}
	return 0;
oom:
	snprintf(err, errlen, "out of memory while reading the pathmap");
	return -1;
}

int pm_parse(const void *buf, size_t len, struct pathmap **out, char *err, size_t errlen)
{
	const uint8_t *b = buf;
	uint32_t counts[3];
	uint64_t tablen;
	*out = NULL;
	if (parse_header(b, len, counts, &tablen, err, errlen) < 0)
		return -1;
	struct pathmap *pm = pm_new();
	if (!pm) {
		snprintf(err, errlen, "out of memory while reading the pathmap");
		return -1;
	}
	if (parse_records(pm, b, counts, tablen, err, errlen) < 0) {
		pm_free(pm);
		return -1;
	}
	*out = pm;
	return 0;
}

int pm_read(const char *path, struct pathmap **out, char *err, size_t errlen)
{
	void *buf;
	size_t len;
	*out = NULL;
	if (read_file(path, &buf, &len, err, errlen) < 0)
		return -1;
	char why[512];
	struct pathmap *pm;
	int rc = pm_parse(buf, len, &pm, why, sizeof(why));
	free(buf);
	if (rc < 0) {
		snprintf(err, errlen, "%s: %s", path, why);
		return -1;
	}
	if (!(pm->source = strdup(path))) {
		pm_free(pm);
		snprintf(err, errlen, "%s: out of memory", path);
		return -1;
	}
	*out = pm;
	return 0;
}
