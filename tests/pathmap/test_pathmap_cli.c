/* icpp stats and icpp paths, called in-process on a map with known answers
 * (cli/cmd_stats.c and cli/cmd_paths.c are compiled into this test). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cmds.h"
#include "tests/check.h"
#include "tests/pathmap/pm_testutil.h"

static char out[1 << 16], err[4096];

static void slurp(int fd, char *buf, size_t len)
{
	lseek(fd, 0, SEEK_SET);
	ssize_t n = read(fd, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
}

/* Run cmd with the arguments (NULL-terminated) and capture stdout/stderr. */
static int run(int (*cmd)(int, char **), const char *name, ...)
{
	char *argv[16];
	int argc = 0;
	va_list ap;
	va_start(ap, name);
	argv[argc++] = (char *)name;
	for (const char *a; (a = va_arg(ap, const char *)) && argc < 15;)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	char o[] = "/tmp/icpp-cli-XXXXXX", e[] = "/tmp/icpp-cli-XXXXXX";
	int fo = mkstemp(o), fe = mkstemp(e);
	unlink(o);
	unlink(e);
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	dup2(fo, 1);
	dup2(fe, 2);
	int rc = cmd(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	slurp(fo, out, sizeof(out));
	slurp(fe, err, sizeof(err));
	return rc;
}

#define CONTAINS(hay, needle)                                                       \
	do {                                                                       \
		if (!strstr(hay, needle)) {                                        \
			fprintf(stderr, "%s:%d: missing \"%s\" in:\n%s\n", __FILE__, __LINE__, \
				needle, hay);                                      \
			check_failures++;                                          \
		}                                                                  \
	} while (0)

/* B-A-D and B-E-D at one height (test_pathmap.c), plus a C++ name, an
 * unnamed function and a callsite outside its caller. */
static void write_map(const char *path)
{
	static const uint8_t id[] = {0xaa, 0x01};
	struct pathmap *pm = pm_new();
	uint32_t m = pm_add_module(pm, "/bin/p", id, 2);
	uint32_t lib = pm_add_module(pm, "/lib/libq.so", NULL, 0);
	pm->modules[m].functions_found = 8;
	pm->modules[m].functions_hooked = 6;
	uint32_t B = pm_add_function(pm, m, 0x100, 0x10, "B");
	uint32_t A = pm_add_function(pm, m, 0x200, 0x10, "A");
	uint32_t E = pm_add_function(pm, m, 0x300, 0x10, "E");
	uint32_t D = pm_add_function(pm, m, 0x400, 0x10, "D");
	uint32_t cxx = pm_add_function(pm, m, 0x500, 0x10, "_ZN2ns3fooEi");
	uint32_t anon = pm_add_function(pm, m, 0x600, 0, NULL);
	uint32_t b = pm_add_node(pm, PM_NONE, B, lib, 0x2724a, 16, 1);
	uint32_t ba = pm_add_node(pm, b, A, m, 0x104, 64, 10);
	uint32_t be = pm_add_node(pm, b, E, m, 0x108, 64, 20);
	pm_add_node(pm, ba, D, m, 0x204, 128, 100);
	pm_add_node(pm, be, D, m, 0x304, 128, 300);
	uint32_t c = pm_add_node(pm, b, cxx, m, 0x10c, 80, 0);
	pm_add_node(pm, c, anon, lib, 0x9000, 200, 0);
	char e[256];
	if (pm_write(pm, path, e, sizeof(e)) < 0)
		fprintf(stderr, "%s\n", e), exit(1);
	pm_free(pm);
}

static void test_stats(const char *map)
{
	CHECK_EQ_INT(run(cmd_stats, "stats", "--help", NULL), 0);
	CONTAINS(out, "usage: icpp stats [--top N] [--json] MAP");
	CONTAINS(out, "example:");
	CHECK_EQ_INT(run(cmd_stats, "stats", NULL), 2);
	CONTAINS(err, "icpp: stats: expected one pathmap");
	CHECK_EQ_INT(run(cmd_stats, "stats", "--bogus", map, NULL), 2);
	CHECK_EQ_STR(err, "icpp: stats: unknown option or missing value in '--bogus'; "
		     "'icpp stats --help' lists the options\n");
	CHECK_EQ_INT(run(cmd_stats, "stats", "--top", "x", map, NULL), 2);
	CHECK_EQ_INT(run(cmd_stats, "stats", "/nonexistent/m.icpp", NULL), 1);
	CHECK_EQ_STR(err, "icpp: stats: cannot open /nonexistent/m.icpp: No such file or directory\n");

	CHECK_EQ_INT(run(cmd_stats, "stats", map, NULL), 0);
	CHECK_EQ_STR(err, "");
	CONTAINS(out, "2 modules, 6 functions, 7 nodes");
	CONTAINS(out, "  /bin/p\n      6 of 8 functions hooked (75.0%), build-id aa01\n");
	CONTAINS(out, "0 of 0 functions hooked (0.0%), build-id none");
	/* 7 paths: B, B>A, B>E, B>A>D, B>E>D, B>foo, B>foo>anon; 6 CIDs. */
	CONTAINS(out, "paths (distinct function sequences)               7\n");
	CONTAINS(out, "CIDs (distinct function, height)                  6  (1 ambiguous)\n");
	CONTAINS(out, "precise paths                                     5  (71.4%)\n");
	CONTAINS(out, "ambiguous paths                                   2  (28.6%)\n");
	CONTAINS(out, "precise, weighted by entries                     31  (7.2%)\n");
	CONTAINS(out, "ambiguous, weighted by entries                  400  (92.8%)\n");
	CONTAINS(out, "  degree        paths       %   cum. %  entries %\n"
		      "       1            5    71.4     71.4        7.2\n"
		      "       2            2    28.6    100.0       92.8\n");
	CONTAINS(out, "the 1 most ambiguous CIDs (of 1)");
	CONTAINS(out, "  D@128: degree 2, 400 entries\n"
		      "             100  B > A > D\n"
		      "             300  B > E > D\n");
	CHECK_EQ_INT(run(cmd_stats, "stats", "--top", "0", map, NULL), 0);
	CHECK(strstr(out, "most ambiguous") == NULL);

	CHECK_EQ_INT(run(cmd_stats, "stats", "--json", map, NULL), 0);
	CONTAINS(out, "\"modules\": [{\"path\": \"/bin/p\", \"build_id\": \"aa01\", "
		      "\"functions_found\": 8, \"functions_hooked\": 6}, ");
	CONTAINS(out, "\"nodes\": 7, \"paths\": 7, \"cids\": 6, \"ambiguous_cids\": 1, "
		      "\"max_degree\": 2");
	CONTAINS(out, "\"precise_paths\": 5, \"ambiguous_paths\": 2, \"precise_paths_pct\": 71.4");
	CONTAINS(out, "\"entries\": 431, \"precise_entries\": 31, \"ambiguous_entries\": 400, "
		      "\"precise_entries_pct\": 7.2");
	CONTAINS(out, "\"degree_paths\": [5, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]");
	CONTAINS(out, "\"degree_entries\": [31, 400, 0, 0, 0, 0, 0, 0, 0, 0, 0]");
	CONTAINS(out, "{\"function\": \"D\", \"module\": \"/bin/p\", \"addr\": \"0x400\", "
		      "\"height\": 128, \"degree\": 2, \"entries\": 400, \"paths\": ["
		      "{\"entries\": 100, \"functions\": [\"B\", \"A\", \"D\"]}, "
		      "{\"entries\": 300, \"functions\": [\"B\", \"E\", \"D\"]}]}");

	/* A corrupt map: one clear line, exit 1. */
	char bad[4096];
	snprintf(bad, sizeof(bad), "%s.bad", map);
	FILE *f = fopen(bad, "wb");
	fputs("ICPPMAP", f);
	fclose(f);
	CHECK_EQ_INT(run(cmd_stats, "stats", bad, NULL), 1);
	char expect[8192];
	snprintf(expect, sizeof(expect), "icpp: stats: %s: truncated at byte 7 (in the 56-byte "
		 "header): file is incomplete, train again\n", bad);
	CHECK_EQ_STR(err, expect);
	unlink(bad);
}

static void test_paths(const char *map)
{
	CHECK_EQ_INT(run(cmd_paths, "paths", "-h", NULL), 0);
	CONTAINS(out, "usage: icpp paths [--function NAME] [--cid FUNC@HEIGHT] [--callsites] MAP");
	CONTAINS(out, "example:");
	CHECK_EQ_INT(run(cmd_paths, "paths", map, NULL), 0);
	CHECK_EQ_STR(out, "        16           1  B\n"
			  "        64          10  B > A\n"
			  "        64          20  B > E\n"
			  "       128         100  B > A > D\n"
			  "       128         300  B > E > D\n"
			  "        80           0  B > ns::foo(int)\n"
			  "       200           0  B > ns::foo(int) > p+0x600\n");
	const char *d128 = "       128         100  B > A > D\n"
			   "       128         300  B > E > D\n";
	CHECK_EQ_INT(run(cmd_paths, "paths", "--cid", "D@128", map, NULL), 0);
	CHECK_EQ_STR(out, d128);
	CHECK_EQ_INT(run(cmd_paths, "paths", map, "--cid", "0x400@128", NULL), 0);
	CHECK_EQ_STR(out, d128);
	CHECK_EQ_INT(run(cmd_paths, "paths", "--cid", "p+0x400@128", map, NULL), 0);
	CHECK_EQ_STR(out, d128);
	CHECK_EQ_INT(run(cmd_paths, "paths", "--function", "D", map, NULL), 0);
	CHECK_EQ_STR(out, d128);
	CHECK_EQ_INT(run(cmd_paths, "paths", "--function", "ns::foo", map, NULL), 0);
	CHECK_EQ_STR(out, "        80           0  B > ns::foo(int)\n");
	CHECK_EQ_INT(run(cmd_paths, "paths", "--function", "_ZN2ns3fooEi", map, NULL), 0);
	CHECK_EQ_STR(out, "        80           0  B > ns::foo(int)\n");
	CHECK_EQ_INT(run(cmd_paths, "paths", "--cid", "p+0x600@200", map, NULL), 0);
	CHECK_EQ_STR(out, "       200           0  B > ns::foo(int) > p+0x600\n");
	CHECK_EQ_INT(run(cmd_paths, "paths", "--callsites", "--cid", "p+0x600@200", map, NULL), 0);
	CHECK_EQ_STR(out, "       200           0  [libq.so+0x2724a] > B+0xc > ns::foo(int) "
			  "[libq.so+0x9000] > p+0x600\n");
	CHECK_EQ_INT(run(cmd_paths, "paths", "--callsites", "--function", "D", map, NULL), 0);
	CHECK_EQ_STR(out, "       128         100  [libq.so+0x2724a] > B+0x4 > A+0x4 > D\n"
			  "       128         300  [libq.so+0x2724a] > B+0x8 > E+0x4 > D\n");

	char expect[8192];
	CHECK_EQ_INT(run(cmd_paths, "paths", "--cid", "D@129", map, NULL), 1);
	snprintf(expect, sizeof(expect), "icpp: paths: no path in %s has CID D@129\n", map);
	CHECK_EQ_STR(err, expect);
	CHECK_EQ_STR(out, "");
	CHECK_EQ_INT(run(cmd_paths, "paths", "--function", "nope", map, NULL), 1);
	snprintf(expect, sizeof(expect), "icpp: paths: %s has no function named 'nope' "
		 "(icpp paths %s lists every path)\n", map, map);
	CHECK_EQ_STR(err, expect);
	CHECK_EQ_INT(run(cmd_paths, "paths", "--cid", "D", map, NULL), 2);
	CHECK_EQ_STR(err, "icpp: paths: --cid wants FUNC@HEIGHT (e.g. main@48), not 'D'\n");
	CHECK_EQ_INT(run(cmd_paths, "paths", "--cid", "D@12x", map, NULL), 2);
	CHECK_EQ_INT(run(cmd_paths, "paths", "--cid", "D@1", "--function", "D", map, NULL), 2);
	CHECK_EQ_INT(run(cmd_paths, "paths", map, map, NULL), 2);
	CHECK_EQ_INT(run(cmd_paths, "paths", "--function", NULL), 2);
}

int main(void)
{
	char dir[] = "/tmp/icpp-cli-XXXXXX", map[64];
	if (!mkdtemp(dir))
		return 1;
	snprintf(map, sizeof(map), "%s/t.icpp", dir);
	write_map(map);
	test_stats(map);
	test_paths(map);
	unlink(map);
	rmdir(dir);
	return check_exit();
}
