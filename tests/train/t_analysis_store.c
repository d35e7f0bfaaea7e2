/* The analysis kept between runs (train/analysis_store.h): a second run
 * reads back exactly what the first analysed; a file that is corrupt,
 * truncated or of another build of icpp is ignored and replaced, and so is
 * the analysis of a module changed in place; an empty ICPP_CACHE_DIR keeps
 * nothing.
 *   t_analysis_store MODULE   (a file with a build-id) */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/check.h"
#include "train/analysis.h"

static char dir[] = "/tmp/icpp-analysis-store-XXXXXX";
static char moddir[] = "/tmp/icpp-analysis-module-XXXXXX";

struct snapshot {
	struct train_reply reply;
	struct train_site *sites;
	uint64_t *fragments;
	size_t nfragments;
};

/* Analyse module with a fresh cache (one run of icpp train); whether the
 * store answered, and what the analysis was. */
static bool analyse(const char *module, struct snapshot *out)
{
	struct analysis_cache *c = analysis_cache_new();
	CHECK(c != NULL);
	const struct analysed_module *am = analysis_get(c, module);
	CHECK(am != NULL && am->reply.status == 0 && am->reply.nsites > 0);
	bool from_store = am->from_store;
	if (out) {
		out->reply = am->reply;
		out->sites = malloc(am->reply.nsites * sizeof(*out->sites));
		out->fragments = malloc((am->nfragments + 1) * sizeof(*out->fragments));
		memcpy(out->sites, am->sites, am->reply.nsites * sizeof(*out->sites));
		memcpy(out->fragments, am->fragments, am->nfragments * sizeof(*out->fragments));
		out->nfragments = am->nfragments;
	}
	analysis_cache_free(c);
	return from_store;
}

static bool same(const struct snapshot *a, const struct snapshot *b)
{
	return a->reply.nsites == b->reply.nsites &&
	       a->reply.functions_found == b->reply.functions_found &&
	       !memcmp(a->reply.skipped, b->reply.skipped, sizeof(a->reply.skipped)) &&
	       a->reply.sigtramp_lo == b->reply.sigtramp_lo &&
	       a->reply.sigtramp_hi == b->reply.sigtramp_hi &&
	       !memcmp(a->sites, b->sites, a->reply.nsites * sizeof(*a->sites)) &&
	       a->nfragments == b->nfragments &&
	       !memcmp(a->fragments, b->fragments, a->nfragments * sizeof(*a->fragments));
}

static void snapshot_free(struct snapshot *s)
{
	free(s->sites);
	free(s->fragments);
}

/* The one file in dir (its path into out); how many there are. */
static int stored(char *out, size_t len)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		if (e->d_name[0] != '.' && ++n == 1)
			snprintf(out, len, "%s/%s", dir, e->d_name);
	if (d)
		closedir(d);
	return n;
}

/* Change the byte at off of file (or cut the file there). */
static void damage(const char *file, long off, bool cut)
{
	FILE *f = fopen(file, "r+b");
	CHECK(f != NULL);
	if (!f)
		return;
	if (cut) {
		CHECK(ftruncate(fileno(f), off) == 0);
	} else {
		fseek(f, off, SEEK_SET);
		int c = fgetc(f);
		fseek(f, off, SEEK_SET);
		fputc(c ^ 0x5a, f);
	}
	fclose(f);
}

/* Copy file from to to; 0 or -1. */
static int copy_file(const char *from, const char *to)
{
	FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
	char buf[65536];
	size_t n;
	int rc = in && out ? 0 : -1;
	while (rc == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		rc = fwrite(buf, 1, n, out) == n ? 0 : -1;
	if (in)
		fclose(in);
	if (out && fclose(out))
		rc = -1;
	return rc;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: t_analysis_store MODULE\n");
		return 2;
	}
	char module[4200];             /* a copy of ours: its time changes below */
	CHECK(mkdtemp(moddir) != NULL);
	snprintf(module, sizeof(module), "%s/module", moddir);
	CHECK_EQ_INT(copy_file(argv[1], module), 0);
	CHECK(mkdtemp(dir) != NULL);
	setenv("ICPP_CACHE_DIR", dir, 1);
	char file[4096];

	struct snapshot first, again;
	CHECK(!analyse(module, &first));                /* analysed, then kept */
	CHECK_EQ_INT(stored(file, sizeof(file)), 1);
	CHECK(analyse(module, &again));                 /* read back: the same */
	CHECK(same(&first, &again));
	snapshot_free(&again);

	/* a damaged file is analysed again, and replaced */
	long offs[] = {0, 20, 200, 400, -1};
	for (int i = 0; i < 5; i++) {
		damage(file, offs[i] < 0 ? 1000 : offs[i], false);
		CHECK(!analyse(module, &again));
		CHECK(same(&first, &again));
		snapshot_free(&again);
		CHECK(analyse(module, NULL));
	}
	damage(file, 100, true);                        /* truncated */
	CHECK(!analyse(module, NULL));
	CHECK(analyse(module, NULL));
	/* the module changed in place: same build-id and size, another time */
	const struct timespec when[2] = {{0, UTIME_OMIT}, {1000000000, 0}};
	CHECK_EQ_INT(utimensat(AT_FDCWD, module, when, 0), 0);
	CHECK(!analyse(module, NULL));
	CHECK(analyse(module, NULL));
	CHECK_EQ_INT(stored(file, sizeof(file)), 1);
	/* bytes 16-79: icpp's own build-id; another build's file is not read
	 * (damage at 20 above); and none kept when the folder is empty */
	unlink(file);
	setenv("ICPP_CACHE_DIR", "", 1);
	CHECK(!analyse(module, NULL));
	CHECK_EQ_INT(stored(file, sizeof(file)), 0);
	CHECK(!analyse(module, NULL));
	snapshot_free(&first);
	rmdir(dir);
	unlink(module);
	rmdir(moddir);
	return check_exit();
}
