/* icpp stats and icpp paths, called in-process on a map with known answers
 * (cli/cmd_stats.c and cli/cmd_paths.c are compiled into this test). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli/cmds.h"
#include "tests/check.h"
#include "tests/cli_run.h"
#include "tests/pathmap/pm_testutil.h"


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
	CHECK_EQ_INT(cli_run(cmd_stats, "stats", "--help", NULL), 0);
	CONTAINS(cli_out, "usage: icpp stats [--top N] [--module M] [--json] MAP");
	CONTAINS(cli_out, "example:");
	CHECK_EQ_INT(cli_run(cmd_stats, "stats", NULL), 2);
	CONTAINS(cli_err, "icpp: stats: expected one pathmap");
	CHECK_EQ_INT(cli_run(cmd_stats, "stats", "--bogus", map, NULL), 2);
	CHECK_EQ_STR(cli_err, "icpp: stats: unknown option or missing value in '--bogus'; "
		     "'icpp stats --help' lists the options\n");
	CHECK_EQ_INT(cli_run(cmd_stats, "stats", "--top", "x", map, NULL), 2);
	CHECK_EQ_INT(cli_run(cmd_stats, "stats", "/nonexistent/m.icpp", NULL), 1);
	CHECK_EQ_STR(cli_err, "icpp: stats: cannot open /nonexistent/m.icpp: No such file or directory\n");

	CHECK_EQ_INT(cli_run(cmd_stats, "stats", map, NULL), 0);
	CHECK_EQ_STR(cli_err, "");
	CONTAINS(cli_out, "2 modules, 6 functions, 7 nodes");
	/* anon has no name, but no file /bin/p says it is stripped */
	CONTAINS(cli_out, "  /bin/p\n      6 of 8 functions hooked (75.0%), build-id aa01\n"
		 "  /lib/libq.so\n");
	CONTAINS(cli_out, "0 of 0 functions hooked (0.0%), build-id none\n\n");
	/* 7 paths: B, B>A, B>E, B>A>D, B>E>D, B>foo, B>foo>anon; 6 CIDs. */
	CONTAINS(cli_out, "paths (distinct function sequences)               7\n");
	CONTAINS(cli_out, "CIDs (distinct function, height)                  6  (1 ambiguous)\n");
	CONTAINS(cli_out, "precise paths                                     5  (71.4%)\n");
	CONTAINS(cli_out, "ambiguous paths                                   2  (28.6%)\n");
	CONTAINS(cli_out, "precise, weighted by entries                     31  (7.2%)\n");
	CONTAINS(cli_out, "ambiguous, weighted by entries                  400  (92.8%)\n");
	CONTAINS(cli_out, "  degree        paths       %   cum. %  entries %\n"
		      "       1            5    71.4     71.4        7.2\n"
		      "       2            2    28.6    100.0       92.8\n");
	CONTAINS(cli_out, "the 1 most ambiguous CIDs (of 1)");
	CONTAINS(cli_out, "  D@128: degree 2, 400 entries\n"
		      "             100  B > A > D\n"
		      "             300  B > E > D\n");
	CHECK_EQ_INT(cli_run(cmd_stats, "stats", "--top", "0", map, NULL), 0);
	CHECK(strstr(cli_out, "most ambiguous") == NULL);

	CHECK_EQ_INT(cli_run(cmd_stats, "stats", "--json", map, NULL), 0);
	CONTAINS(cli_out, "\"modules\": [{\"path\": \"/bin/p\", \"build_id\": \"aa01\", "
		      "\"functions_found\": 8, \"functions_hooked\": 6}, ");
	CONTAINS(cli_out, "\"nodes\": 7, \"paths\": 7, \"cids\": 6, \"ambiguous_cids\": 1, "
		      "\"max_degree\": 2");
	CONTAINS(cli_out, "\"precise_paths\": 5, \"ambiguous_paths\": 2, \"precise_paths_pct\": 71.4");
	CONTAINS(cli_out, "\"entries\": 431, \"precise_entries\": 31, \"ambiguous_entries\": 400, "
		      "\"precise_entries_pct\": 7.2");
	CONTAINS(cli_out, "\"degree_paths\": [5, 2, 0, 0, 0, 0, 0, 0, 0, 0, 0]");
	CONTAINS(cli_out, "\"degree_entries\": [31, 400, 0, 0, 0, 0, 0, 0, 0, 0, 0]");
	CONTAINS(cli_out, "{\"function\": \"D\", \"module\": \"/bin/p\", \"addr\": \"0x400\", "
		      "\"height\": 128, \"degree\": 2, \"entries\": 400, \"paths\": ["
		      "{\"entries\": 100, \"functions\": [\"B\", \"A\", \"D\"]}, "
		      "{\"entries\": 300, \"functions\": [\"B\", \"E\", \"D\"]}]}");

	/* --module: by file name or path; every path of this map passes through
	 * /bin/p, none through the library */
	CHECK_EQ_INT(cli_run(cmd_stats, "stats", "--module", "p", map, NULL), 0);
	CONTAINS(cli_out, "only the paths with a frame of /bin/p\n");
	CONTAINS(cli_out, "precise paths                                     5  (71.4%)\n");
	CHECK_EQ_INT(cli_run(cmd_stats, "stats", "--module", "/lib/libq.so", "--json", map, NULL), 0);
	CONTAINS(cli_out, "\"only_module\": \"/lib/libq.so\"");
	CONTAINS(cli_out, "\"paths\": 0,");
	CHECK_EQ_INT(cli_run(cmd_stats, "stats", "--module", "nope", map, NULL), 1);
	CONTAINS(cli_err, "has no module 'nope'");

	/* A corrupt map: one clear line, exit 1. */
	char bad[4096];
	snprintf(bad, sizeof(bad), "%s.bad", map);
	FILE *f = fopen(bad, "wb");
	fputs("ICPPMAP", f);
	fclose(f);
	CHECK_EQ_INT(cli_run(cmd_stats, "stats", bad, NULL), 1);
	char expect[8192];
	snprintf(expect, sizeof(expect), "icpp: stats: %s: truncated at byte 7 (in the 56-byte "
		 "header): file is incomplete, train again\n", bad);
	CHECK_EQ_STR(cli_err, expect);
	unlink(bad);
}

static void test_paths(const char *map)
{
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "-h", NULL), 0);
	CONTAINS(cli_out, "usage: icpp paths [--function NAME] [--cid FUNC@HEIGHT] [--callsites] MAP");
	CONTAINS(cli_out, "example:");
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", map, NULL), 0);
	CHECK_EQ_STR(cli_out, "        16           1  B\n"
			  "        64          10  B > A\n"
			  "        64          20  B > E\n"
			  "       128         100  B > A > D\n"
			  "       128         300  B > E > D\n"
			  "        80           0  B > ns::foo(int)\n"
			  "       200           0  B > ns::foo(int) > p+0x600\n");
	const char *d128 = "       128         100  B > A > D\n"
			   "       128         300  B > E > D\n";
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--cid", "D@128", map, NULL), 0);
	CHECK_EQ_STR(cli_out, d128);
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", map, "--cid", "0x400@128", NULL), 0);
	CHECK_EQ_STR(cli_out, d128);
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--cid", "p+0x400@128", map, NULL), 0);
	CHECK_EQ_STR(cli_out, d128);
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--function", "D", map, NULL), 0);
	CHECK_EQ_STR(cli_out, d128);
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--function", "ns::foo", map, NULL), 0);
	CHECK_EQ_STR(cli_out, "        80           0  B > ns::foo(int)\n");
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--function", "_ZN2ns3fooEi", map, NULL), 0);
	CHECK_EQ_STR(cli_out, "        80           0  B > ns::foo(int)\n");
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--cid", "p+0x600@200", map, NULL), 0);
	CHECK_EQ_STR(cli_out, "       200           0  B > ns::foo(int) > p+0x600\n");
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--callsites", "--cid", "p+0x600@200", map, NULL), 0);
	CHECK_EQ_STR(cli_out, "       200           0  [libq.so+0x2724a] > B+0xc > ns::foo(int) "
			  "[libq.so+0x9000] > p+0x600\n");
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--callsites", "--function", "D", map, NULL), 0);
	CHECK_EQ_STR(cli_out, "       128         100  [libq.so+0x2724a] > B+0x4 > A+0x4 > D\n"
			  "       128         300  [libq.so+0x2724a] > B+0x8 > E+0x4 > D\n");

	char expect[8192];
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--cid", "D@129", map, NULL), 1);
	snprintf(expect, sizeof(expect), "icpp: paths: no path in %s has CID D@129\n", map);
	CHECK_EQ_STR(cli_err, expect);
	CHECK_EQ_STR(cli_out, "");
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--function", "nope", map, NULL), 1);
	snprintf(expect, sizeof(expect), "icpp: paths: %s has no function named 'nope' "
		 "(icpp paths %s lists every path)\n", map, map);
	CHECK_EQ_STR(cli_err, expect);
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--cid", "D", map, NULL), 2);
	CHECK_EQ_STR(cli_err, "icpp: paths: --cid wants FUNC@HEIGHT (e.g. main@48), not 'D'\n");
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--cid", "D@12x", map, NULL), 2);
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--cid", "D@1", "--function", "D", map, NULL), 2);
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", map, map, NULL), 2);
	CHECK_EQ_INT(cli_run(cmd_paths, "paths", "--function", NULL), 2);
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
