/* The analysis of a module kept on disk between runs of icpp (analysis.h,
 * "Kept between runs").
 *
 * One file per module, <dir>/<module build-id in hex>-<file size>.analysis,
 * in this machine's byte order (a cache, not an exchange format):
 *   "ICPPAN02", u32 length and 64 bytes of icpp's own build-id, the same for
 *   the module's, u64 file size, i64 modification time (ns; 01 had none),
 *   struct train_reply, u64 nfragments, nsites
 *   struct train_site, nfragments u64, u32 crc32 (zlib) of everything before.
 * icpp's own build-id changes with its code, so an analysis that another
 * build of icpp made is never read back.  The size tells a stripped file
 * from the unstripped one of the same build-id (symbols add functions), the
 * time a file changed in place (another layout of a rewrite's code).  A
 * file that is short, long, of another module or corrupt is ignored (and
 * replaced after the analysis). */
#include "train/analysis_store.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#include "util/fileio.h"

static const char MAGIC[8] = "ICPPAN02";

struct store_header {
	char magic[8];
	uint32_t self_len, mod_len;
	uint8_t self_id[64], mod_id[64];
	uint64_t size;
	int64_t mtime_ns;
	struct train_reply reply;
	uint64_t nfragments;
};

int analysis_store_dir(char *dir, size_t len)
{
	const char *env = getenv("ICPP_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;
	if (env)
		n = snprintf(dir, len, "%s", env);
	else if (xdg && *xdg)
		n = snprintf(dir, len, "%s/icpp", xdg);
	else if (home && *home)
		n = snprintf(dir, len, "%s/.cache/icpp", home);
	else
		return -1;
	return n > 0 && (size_t)n < len ? 0 : -1;
}

static void file_name(const struct analysis_store *s, const struct store_key *k, char *out,
		      size_t len)
{
	int n = snprintf(out, len, "%s/", s->dir);
	for (size_t i = 0; i < k->idlen && n > 0 && (size_t)n + 3 < len; i++)
		n += snprintf(out + n, len - (size_t)n, "%02x", k->id[i]);
	if (n > 0 && (size_t)n < len)
		snprintf(out + n, len - (size_t)n, "-%llu.analysis", (unsigned long long)k->size);
}

/* mkdir -p; errors are left to the write that follows. */
static void make_dirs(const char *dir)
{
	char p[4096];
	snprintf(p, sizeof(p), "%s", dir);
	for (char *c = p + 1; *c; c++)
		if (*c == '/') {
			*c = 0;
			mkdir(p, 0755);
			*c = '/';
		}
	mkdir(p, 0755);
}

static bool header_matches(const struct analysis_store *s, const struct store_header *h,
			   const struct store_key *k)
{
	return !memcmp(h->magic, MAGIC, sizeof(MAGIC)) && h->self_len == s->self_len &&
	       !memcmp(h->self_id, s->self_id, s->self_len) && h->mod_len == k->idlen &&
	       !memcmp(h->mod_id, k->id, k->idlen) && h->size == k->size &&
	       h->mtime_ns == k->mtime_ns && h->reply.status == 0 &&
	       h->reply.nsites <= h->reply.functions_found &&
	       h->nfragments <= h->reply.functions_found;
}

int analysis_store_load(const struct analysis_store *s, const struct store_key *k,
			struct analysed_module *am)
{
	if (!s->self_len || !k->idlen || k->idlen > 64)
		return -1;
	char path[4096], err[256];
	file_name(s, k, path, sizeof(path));
	void *buf;
	size_t len;
	if (read_file(path, &buf, &len, err, sizeof(err)) < 0)
		return -1;
	struct store_header h;
	int rc = -1;
	if (len < sizeof(h) + 4)
		goto out;
	memcpy(&h, buf, sizeof(h));
	if (!header_matches(s, &h, k))
		goto out;
	size_t sites = h.reply.nsites * sizeof(struct train_site);
	size_t frags = (size_t)h.nfragments * sizeof(uint64_t);
	uint32_t crc;
	if (len != sizeof(h) + sites + frags + 4)
		goto out;
	memcpy(&crc, (char *)buf + len - 4, 4);
	if (crc != (uint32_t)crc32(0L, buf, (uInt)(len - 4)))
		goto out;
	am->sites = malloc(sites + sizeof(struct train_site));
	am->fragments = malloc(frags + sizeof(uint64_t));
	if (!am->sites || !am->fragments) {
		free(am->sites);
		free(am->fragments);
		am->sites = NULL;
		am->fragments = NULL;
		goto out;
	}
	memcpy(am->sites, (char *)buf + sizeof(h), sites);
	memcpy(am->fragments, (char *)buf + sizeof(h) + sites, frags);
	am->reply = h.reply;
	am->nfragments = (size_t)h.nfragments;
	rc = 0;
out:
	free(buf);
	return rc;
}

void analysis_store_save(const struct analysis_store *s, const struct store_key *k,
			 const struct analysed_module *am)
{
	if (!s->self_len || !k->idlen || k->idlen > 64 || am->reply.status != 0)
		return;
	struct store_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, MAGIC, sizeof(MAGIC));
	h.self_len = (uint32_t)s->self_len;
	memcpy(h.self_id, s->self_id, s->self_len);
	h.mod_len = (uint32_t)k->idlen;
	memcpy(h.mod_id, k->id, k->idlen);
	h.size = k->size;
	h.mtime_ns = k->mtime_ns;
	h.reply = am->reply;
	h.nfragments = am->nfragments;
	size_t sites = am->reply.nsites * sizeof(struct train_site);
	size_t frags = am->nfragments * sizeof(uint64_t);
	uLong crc = crc32(0L, (const Bytef *)&h, sizeof(h));
	crc = crc32(crc, (const Bytef *)am->sites, (uInt)sites);
	crc = crc32(crc, (const Bytef *)am->fragments, (uInt)frags);
	uint32_t c32 = (uint32_t)crc;
	char path[4096], err[256];
	file_name(s, k, path, sizeof(path));
	make_dirs(s->dir);           /* the cache is best effort: errors mean no file */
	struct atomic_file af;
	if (af_open(&af, path, 0644, err, sizeof(err)) < 0)
		return;
	if (fwrite(&h, sizeof(h), 1, af.f) != 1 || (sites && fwrite(am->sites, sites, 1, af.f) != 1) ||
	    (frags && fwrite(am->fragments, frags, 1, af.f) != 1) || fwrite(&c32, 4, 1, af.f) != 1) {
		af_abort(&af);
		return;
	}
	af_commit(&af, err, sizeof(err));
}
