/* Building, dedup, lookup, merge, validation and metrics of pathmaps, on
 * hand-built maps with known answers. */
#include <stdlib.h>

#include "tests/check.h"
#include "tests/pathmap/pm_testutil.h"

static const uint8_t ID_A[] = {0xaa, 0x01};
static const uint8_t ID_B[] = {0xbb, 0x02};

static void test_dedup(void)
{
	struct pathmap *pm = pm_new();
	uint32_t m = pm_add_module(pm, "/bin/p", ID_A, 2);
	CHECK_EQ_INT(m, 0);
	CHECK_EQ_INT(pm_add_module(pm, "/bin/p", ID_A, 2), 0);
	CHECK_EQ_INT(pm_add_module(pm, "/bin/p", ID_B, 2), 1);  /* same path, other build */
	CHECK_EQ_INT(pm_add_module(pm, "/bin/p", NULL, 0), 2);  /* no build-id */
	CHECK_EQ_INT(pm_add_module(pm, "/bin/p", ID_A, 1), 3);  /* prefix of a build-id */
	CHECK_EQ_INT(pm_add_module(pm, NULL, ID_A, 2), PM_NONE);
	CHECK_EQ_INT(pm_add_module(pm, "", ID_A, 2), PM_NONE);
	CHECK_EQ_INT(pm_add_module(pm, "/x", ID_A, PM_BUILD_ID_MAX + 1), PM_NONE);
	CHECK_EQ_INT(pm->nmodules, 4);

	uint32_t f = pm_add_function(pm, m, 0x1000, 0, NULL);
	CHECK_EQ_INT(pm_add_function(pm, m, 0x1000, 0x20, "f"), f); /* fills size and name */
	CHECK_EQ_INT(pm->funcs[f].size, 0x20);
	CHECK_EQ_STR(pm->funcs[f].name, "f");
	CHECK_EQ_INT(pm_add_function(pm, m, 0x1000, 0x30, "g"), f); /* keeps the first */
	CHECK_EQ_INT(pm->funcs[f].size, 0x20);
	CHECK_EQ_STR(pm->funcs[f].name, "f");
	CHECK_EQ_INT(pm_add_function(pm, 1, 0x1000, 0, "f"), 1);    /* other module */
	CHECK_EQ_INT(pm_add_function(pm, 9, 0x1000, 0, "f"), PM_NONE);
	CHECK_EQ_INT(pm_add_function(pm, m, UINT64_MAX, 2, "wrap"), PM_NONE);
	CHECK_EQ_INT(pm->nfuncs, 2);

	uint32_t r = pm_add_node(pm, PM_NONE, f, PM_NONE, 0x1234, 48, 1);
	CHECK_EQ_INT(r, 0);
	CHECK_EQ_INT(pm->nodes[r].cs_addr, 0);                  /* no module: no address */
	CHECK_EQ_INT(pm_add_node(pm, PM_NONE, f, PM_NONE, 0, 48, 2), r);
	CHECK_EQ_INT(pm->nodes[r].entries, 3);
	uint32_t c = pm_add_node(pm, r, f, m, 0x1010, 96, UINT64_MAX - 1);
	CHECK_EQ_INT(c, 1);
	CHECK_EQ_INT(pm_add_node(pm, r, f, m, 0x1010, 96, 5), c);
	CHECK(pm->nodes[c].entries == UINT64_MAX);               /* saturates */
	CHECK_EQ_INT(pm_add_node(pm, r, f, m, 0x1014, 96, 1), 2); /* other callsite */
	CHECK_EQ_INT(pm_add_node(pm, r, f, m, 0x1010, 112, 1), 3); /* other height */
	CHECK_EQ_INT(pm_add_node(pm, 4, f, m, 0x1010, 96, 1), PM_NONE); /* parent not there */
	CHECK_EQ_INT(pm_add_node(pm, r, 7, m, 0x1010, 96, 1), PM_NONE);
	CHECK_EQ_INT(pm_add_node(pm, r, f, 4, 0x1010, 96, 1), PM_NONE);
	CHECK_EQ_INT(pm->nnodes, 4);
	CHECK_EQ_INT(pm_depth(pm, 0), 1);
	CHECK_EQ_INT(pm_depth(pm, 3), 2);
	CHECK_EQ_INT(pm_depth(pm, 99), 0);
	char err[256];
	CHECK_EQ_INT(pm_validate(pm, err, sizeof(err)), 0);
	pm_free(pm);
}

/* pm_append_node: no lookup, the same range checks; pm_add_node afterwards
 * finds the appended nodes (the dedup table catches up), and a duplicate
 * appended is pm_validate's to report. */
static void test_append(void)
{
	struct pathmap *pm = pm_new();
	uint32_t m = pm_add_module(pm, "/bin/p", ID_A, 2);
	uint32_t f = pm_add_function(pm, m, 0x1000, 0x20, "f");
	CHECK_EQ_INT(pm_add_node(pm, PM_NONE, f, PM_NONE, 0, 16, 1), 0);  /* table built */
	CHECK_EQ_INT(pm_append_node(pm, 0, f, m, 0x1010, 48, 2), 1);
	CHECK_EQ_INT(pm_append_node(pm, 1, f, PM_NONE, 0x1234, 80, 3), 2);
	CHECK_EQ_INT(pm->nodes[2].cs_addr, 0);                  /* no module: no address */
	CHECK_EQ_INT(pm_append_node(pm, 3, f, m, 0x1010, 48, 1), PM_NONE);  /* parent not there */
	CHECK_EQ_INT(pm_append_node(pm, 0, 5, m, 0x1010, 48, 1), PM_NONE);
	CHECK_EQ_INT(pm_append_node(pm, 0, f, 3, 0x1010, 48, 1), PM_NONE);
	CHECK_EQ_INT(pm->nnodes, 3);
	CHECK_EQ_INT(pm_add_node(pm, 0, f, m, 0x1010, 48, 4), 1);       /* found, not added */
	CHECK_EQ_INT(pm->nodes[1].entries, 6);
	CHECK_EQ_INT(pm_add_node(pm, 1, f, PM_NONE, 0, 80, 1), 2);
	CHECK_EQ_INT(pm_add_node(pm, 1, f, m, 0x1014, 80, 1), 3);       /* new */
	CHECK_EQ_INT(pm->nnodes, 4);
	char err[256];
	CHECK_EQ_INT(pm_validate(pm, err, sizeof(err)), 0);
	CHECK_EQ_INT(pm_append_node(pm, 1, f, m, 0x1014, 80, 1), 4);    /* a duplicate of 3 */
	CHECK_EQ_INT(pm_validate(pm, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "node 4 duplicates node 3");
	pm_free(pm);

	/* a map that never had a table: built with the appended nodes in it */
	pm = pm_new();
	m = pm_add_module(pm, "/bin/p", ID_A, 2);
	f = pm_add_function(pm, m, 0x1000, 0x20, "f");
	CHECK_EQ_INT(pm_append_node(pm, PM_NONE, f, PM_NONE, 0, 16, 1), 0);
	CHECK_EQ_INT(pm_add_node(pm, PM_NONE, f, PM_NONE, 0, 16, 1), 0);
	CHECK_EQ_INT(pm->nodes[0].entries, 2);
	pm_free(pm);
}

/* A .cold fragment's frame: no callsite, its parent's height; a frame
 * rebuilt from the CFI has no callsite either but lies above its parent. */
static void test_fragment_frame(void)
{
	struct pathmap *pm = pm_new();
	uint32_t m = pm_add_module(pm, "/bin/p", ID_A, 2);
	uint32_t f = pm_add_function(pm, m, 0x1000, 0x20, "owner");
	uint32_t g = pm_add_function(pm, m, 0x9000, 0x10, "owner.cold");
	uint32_t r = pm_add_node(pm, PM_NONE, f, PM_NONE, 0, 48, 1);
	uint32_t frag = pm_add_node(pm, r, g, PM_NONE, 0, 48, 1);
	uint32_t rebuilt = pm_add_node(pm, r, g, PM_NONE, 0, 96, 1);
	uint32_t called = pm_add_node(pm, r, g, m, 0x1010, 48, 1);
	CHECK(pm_fragment_frame(pm, frag));
	CHECK(!pm_fragment_frame(pm, rebuilt));
	CHECK(!pm_fragment_frame(pm, called));          /* a call, however odd */
	CHECK(!pm_fragment_frame(pm, r));               /* a root */
	pm_free(pm);
}

/* Adding to a map that came from the parser builds its dedup tables first. */
static void test_add_after_parse(void)
{
	struct pathmap *pm = pmt_sample(), *back;
	void *buf;
	size_t len;
	char err[256];
	CHECK_EQ_INT(pm_serialize(pm, &buf, &len, err, sizeof(err)), 0);
	CHECK_EQ_INT(pm_parse(buf, len, &back, err, sizeof(err)), 0);
	free(buf);
	uint32_t n = back->nnodes;
	CHECK_EQ_INT(pm_add_module(back, "/usr/bin/prog", pm->modules[0].build_id, 20), 0);
	CHECK_EQ_INT(pm_add_function(back, 0, 0x401170, 0, NULL), 1);
	CHECK_EQ_INT(pm_add_node(back, 0, 1, 0, 0x40113c, 96, 5), 1);
	CHECK_EQ_INT(back->nodes[1].entries, 15);
	CHECK_EQ_INT(back->nnodes, n);
	CHECK_EQ_INT(pm_add_node(back, 0, 1, 0, 0x40113d, 96, 5), n);
	pm_free(back);
	pm_free(pm);
}

/* Thesis, Figure 5.4's neighbour: B-A-D and B-E-D with A and E of one frame
 * size put D at one height: one CID of degree 2.  Entries are chosen so that
 * every weighted figure is a known sum. */
/* The thesis' B-A-D and B-E-D (Figure 5.3): D@128 holds both; A in a library
 * of its own when a_in_lib. */
struct thesis_map {
	struct pathmap *pm;
	uint32_t lib, A, D, b, ba, be, bad, bed;
};

static struct thesis_map thesis_pair(bool a_in_lib)
{
	struct thesis_map t = {.pm = pm_new()};
	struct pathmap *pm = t.pm;
	uint32_t m = pm_add_module(pm, "/bin/p", ID_A, 2);
	t.lib = a_in_lib ? pm_add_module(pm, "/lib/libl.so", ID_B, 2) : m;
	uint32_t B = pm_add_function(pm, m, 0x100, 0x10, "B");
	t.A = pm_add_function(pm, t.lib, 0x200, 0x10, "A");
	uint32_t E = pm_add_function(pm, m, 0x300, 0x10, "E");
	t.D = pm_add_function(pm, m, 0x400, 0x10, "D");
	t.b = pm_add_node(pm, PM_NONE, B, PM_NONE, 0, 16, 1);
	t.ba = pm_add_node(pm, t.b, t.A, m, 0x104, 64, 10);
	t.be = pm_add_node(pm, t.b, E, m, 0x108, 64, 20);
	t.bad = pm_add_node(pm, t.ba, t.D, t.lib, 0x204, 128, 100);
	t.bed = pm_add_node(pm, t.be, t.D, m, 0x304, 128, 300);
	return t;
}

static void test_stats_thesis(void)
{
	struct thesis_map t = thesis_pair(false);
	struct pathmap *pm = t.pm;
	uint32_t A = t.A, D = t.D, b = t.b, ba = t.ba, be = t.be, bad = t.bad, bed = t.bed;

	struct pm_stats st;
	CHECK_EQ_INT(pm_stats(pm, &st), 0);
	CHECK_EQ_INT(st.nodes, 5);
	CHECK_EQ_INT(st.paths, 5);
	CHECK_EQ_INT(st.cids, 4);
	CHECK_EQ_INT(st.ambiguous_cids, 1);
	CHECK_EQ_INT(st.max_degree, 2);
	CHECK_EQ_INT(st.precise_paths, 3);
	CHECK_EQ_INT(st.degree_paths[0], 3);
	CHECK_EQ_INT(st.degree_paths[1], 2);
	CHECK_EQ_INT(st.entries, 431);
	CHECK_EQ_INT(st.precise_entries, 31);
	CHECK_EQ_INT(st.degree_entries[1], 400);
	/* Weighted precision 31/431 = 7.19...% */
	CHECK(st.precise_entries * 10000 / st.entries == 719);

	struct pm_ambiguous_cid w[4];
	CHECK_EQ_INT(pm_worst_cids(pm, w, 4), 1);
	CHECK_EQ_INT(w[0].func, D);
	CHECK_EQ_INT(w[0].height, 128);
	CHECK_EQ_INT(w[0].degree, 2);
	CHECK_EQ_INT(w[0].entries, 400);
	CHECK_EQ_INT(pm_worst_cids(pm, w, 0), 0);

	size_t n;
	const uint32_t *nodes = pm_lookup(pm, D, 128, &n);
	CHECK_EQ_INT(n, 2);
	if (n == 2) {
		CHECK_EQ_INT(nodes[0], bad);
		CHECK_EQ_INT(nodes[1], bed);
	}
	nodes = pm_lookup(pm, A, 64, &n);
	CHECK_EQ_INT(n, 1);
	CHECK(nodes && nodes[0] == ba);
	CHECK(pm_lookup(pm, D, 127, &n) == NULL);
	CHECK_EQ_INT(n, 0);
	CHECK(pm_lookup(pm, 99, 128, &n) == NULL);
	CHECK_EQ_INT(n, 0);

	uint32_t chain[8];
	CHECK_EQ_INT(pm_path_nodes(pm, bed, chain, 8), 3);
	CHECK_EQ_INT(chain[0], b);
	CHECK_EQ_INT(chain[1], be);
	CHECK_EQ_INT(chain[2], bed);
	CHECK_EQ_INT(pm_path_nodes(pm, bed, chain, 1), 3); /* only the root stored */
	CHECK_EQ_INT(chain[0], b);
	pm_free(pm);
}

/* Only the paths through a library's frames (pm_stats_of): with A in a
 * library, its share is B-A and B-A-D, and B-A-D is still ambiguous with
 * B-E-D, which it does not count. */
static void test_stats_of_module(void)
{
	struct thesis_map t = thesis_pair(true);
	struct pm_stats st, all;
	CHECK_EQ_INT(pm_stats_of(t.pm, t.lib, &st), 0);
	CHECK_EQ_INT(st.nodes, 2);
	CHECK_EQ_INT(st.paths, 2);
	CHECK_EQ_INT(st.cids, 2);
	CHECK_EQ_INT(st.ambiguous_cids, 1);
	CHECK_EQ_INT(st.precise_paths, 1);
	CHECK_EQ_INT(st.entries, 110);
	CHECK_EQ_INT(st.precise_entries, 10);
	struct pm_ambiguous_cid w[4];
	CHECK_EQ_INT(pm_worst_cids_of(t.pm, t.lib, w, 4), 1);
	CHECK_EQ_INT(w[0].func, t.D);
	CHECK_EQ_INT(w[0].entries, 400);
	/* every path passes through the program's module: all of them */
	CHECK_EQ_INT(pm_stats_of(t.pm, 0, &st), 0);
	CHECK_EQ_INT(pm_stats(t.pm, &all), 0);
	CHECK_EQ_INT(st.paths, all.paths);
	CHECK_EQ_INT(st.precise_paths, all.precise_paths);
	CHECK_EQ_INT(st.entries, all.entries);
	CHECK_EQ_INT(st.cids, all.cids);
	pm_free(t.pm);
}

/* The same function sequence reached from two callsites is one path: not
 * ambiguous under the function-sequence metrics, whether the callsites give
 * one height or two. */
static void test_stats_callsites(void)
{
	struct pathmap *pm = pm_new();
	uint32_t m = pm_add_module(pm, "/bin/p", ID_A, 2);
	uint32_t fmain = pm_add_function(pm, m, 0x100, 0x100, "main");
	uint32_t foo = pm_add_function(pm, m, 0x300, 0x10, "foo");
	uint32_t r = pm_add_node(pm, PM_NONE, fmain, PM_NONE, 0, 16, 1);
	uint32_t c1 = pm_add_node(pm, r, foo, m, 0x120, 64, 2);
	uint32_t c2 = pm_add_node(pm, r, foo, m, 0x140, 64, 4);
	uint32_t c3 = pm_add_node(pm, r, foo, m, 0x160, 80, 8);
	struct pm_stats st;
	CHECK_EQ_INT(pm_stats(pm, &st), 0);
	CHECK_EQ_INT(st.nodes, 4);
	CHECK_EQ_INT(st.paths, 2);
	CHECK_EQ_INT(st.cids, 3);
	CHECK_EQ_INT(st.precise_paths, 2);
	CHECK_EQ_INT(st.ambiguous_cids, 0);
	CHECK_EQ_INT(st.max_degree, 1);
	CHECK_EQ_INT(st.precise_entries, 15);
	CHECK_EQ_INT(st.entries, 15);
	struct pm_ambiguous_cid w[2];
	CHECK_EQ_INT(pm_worst_cids(pm, w, 2), 0);

	uint32_t ids[4], np;
	CHECK_EQ_INT(pm_path_ids(pm, ids, &np), 0);
	CHECK_EQ_INT(np, 2);
	CHECK_EQ_INT(ids[r], 0);
	CHECK_EQ_INT(ids[c1], 1);
	CHECK_EQ_INT(ids[c2], 1);
	CHECK_EQ_INT(ids[c3], 1);

	/* Lookup returns both callsite nodes at height 64, and only those. */
	size_t n;
	const uint32_t *nodes = pm_lookup(pm, foo, 64, &n);
	CHECK_EQ_INT(n, 2);
	CHECK(nodes && nodes[0] == c1 && nodes[1] == c2);
	nodes = pm_lookup(pm, foo, 80, &n);
	CHECK(n == 1 && nodes && nodes[0] == c3);
	pm_free(pm);
}

/* A path at two heights takes its worst CID; weighted figures count each node
 * at its own CID; more than 10 paths at a CID go to the last bucket. */
static void test_stats_degrees(void)
{
	struct pathmap *pm = pm_new();
	uint32_t m = pm_add_module(pm, "/bin/p", ID_A, 2);
	uint32_t fmain = pm_add_function(pm, m, 0x100, 0x100, "main");
	uint32_t x = pm_add_function(pm, m, 0x200, 0x10, "x");
	uint32_t y = pm_add_function(pm, m, 0x300, 0x10, "y");
	uint32_t leaf = pm_add_function(pm, m, 0x400, 0x10, "leaf");
	uint32_t r = pm_add_node(pm, PM_NONE, fmain, PM_NONE, 0, 16, 1);
	uint32_t nx = pm_add_node(pm, r, x, m, 0x110, 48, 1);
	uint32_t ny = pm_add_node(pm, r, y, m, 0x120, 48, 1);
	pm_add_node(pm, nx, leaf, m, 0x204, 100, 5);   /* main>x>leaf alone at 100 */
	pm_add_node(pm, nx, leaf, m, 0x208, 200, 7);   /* ... and with main>y>leaf at 200 */
	pm_add_node(pm, ny, leaf, m, 0x304, 200, 11);
	struct pm_stats st;
	CHECK_EQ_INT(pm_stats(pm, &st), 0);
	CHECK_EQ_INT(st.paths, 5);
	CHECK_EQ_INT(st.cids, 5);
	CHECK_EQ_INT(st.precise_paths, 3);          /* main, main>x, main>y */
	CHECK_EQ_INT(st.degree_paths[1], 2);        /* both leaf paths: worst CID */
	CHECK_EQ_INT(st.entries, 26);
	CHECK_EQ_INT(st.precise_entries, 8);        /* 1 + 1 + 1 + 5 */
	CHECK_EQ_INT(st.degree_entries[1], 18);

	/* Twelve more sequences main>f_i>leaf at height 300: degree 12. */
	for (uint32_t i = 0; i < 12; i++) {
		uint32_t f = pm_add_function(pm, m, 0x1000 + 0x100 * i, 0x10, NULL);
		uint32_t n = pm_add_node(pm, r, f, m, 0x130, 48, 1);
		pm_add_node(pm, n, leaf, m, 0x1004 + 0x100 * i, 300, 2);
	}
	CHECK_EQ_INT(pm_stats(pm, &st), 0);
	CHECK_EQ_INT(st.paths, 5 + 24);
	CHECK_EQ_INT(st.max_degree, 12);
	CHECK_EQ_INT(st.ambiguous_cids, 2);
	CHECK_EQ_INT(st.degree_paths[PM_DEGREE_BUCKETS - 1], 12);
	CHECK_EQ_INT(st.degree_entries[PM_DEGREE_BUCKETS - 1], 24);
	CHECK_EQ_INT(st.precise_paths, 3 + 12);
	struct pm_ambiguous_cid w[3];
	CHECK_EQ_INT(pm_worst_cids(pm, w, 3), 2);
	CHECK_EQ_INT(w[0].degree, 12);
	CHECK_EQ_INT(w[0].height, 300);
	CHECK_EQ_INT(w[1].degree, 2);
	CHECK_EQ_INT(w[1].height, 200);
	CHECK_EQ_INT(w[1].entries, 18);
	CHECK_EQ_INT(pm_worst_cids(pm, w, 1), 1);
	CHECK_EQ_INT(w[0].degree, 12);

	struct pathmap *empty = pm_new();
	CHECK_EQ_INT(pm_stats(empty, &st), 0);
	CHECK_EQ_INT(st.paths, 0);
	CHECK_EQ_INT(st.cids, 0);
	CHECK_EQ_INT(pm_worst_cids(empty, w, 3), 0);
	pm_free(empty);
	pm_free(pm);
}

static void test_lookup(void)
{
	struct pathmap *pm = pmt_sample();
	/* Without an index: a scan; the lowest index for a shared build-id. */
	CHECK_EQ_INT(pm_module_by_build_id(pm, pm->modules[1].build_id, PM_BUILD_ID_MAX), 1);
	CHECK_EQ_INT(pm_module_by_build_id(pm, pm->modules[0].build_id, 20), 0);
	CHECK_EQ_INT(pm_module_by_build_id(pm, pm->modules[0].build_id, 19), PM_NONE);
	CHECK_EQ_INT(pm_module_by_build_id(pm, NULL, 0), PM_NONE);
	CHECK_EQ_INT(pm_function_at(pm, 0, 0x401170), 1);
	CHECK_EQ_INT(pm_function_at(pm, 1, 0x401170), PM_NONE);
	CHECK_EQ_INT(pm_function_at(pm, 1, 0x4a3b0), 3);
	CHECK_EQ_INT(pm_function_at(pm, 0, 0x401171), PM_NONE);
	CHECK(pm->index != NULL);
	/* With the index: the same answers. */
	CHECK_EQ_INT(pm_module_by_build_id(pm, pm->modules[1].build_id, PM_BUILD_ID_MAX), 1);
	CHECK_EQ_INT(pm_module_by_build_id(pm, pm->modules[0].build_id, 20), 0);
	CHECK_EQ_INT(pm_module_by_build_id(pm, pm->modules[0].build_id, 19), PM_NONE);
	uint32_t twin = pm_add_module(pm, "/other/prog", pm->modules[0].build_id, 20);
	CHECK(pm->index == NULL);                    /* adding dropped the index */
	CHECK_EQ_INT(pm_function_at(pm, twin, 0x401170), PM_NONE);
	CHECK_EQ_INT(pm_module_by_build_id(pm, pm->modules[0].build_id, 20), 0);

	size_t n;
	const uint32_t *nodes = pm_lookup(pm, 2, 96, &n);  /* the unnamed function */
	CHECK(n == 1 && nodes && nodes[0] == 3);
	uint32_t added = pm_add_node(pm, 1, 2, 0, 0x401178, 96, 1);
	nodes = pm_lookup(pm, 2, 96, &n);
	CHECK(n == 2 && nodes && nodes[0] == 3 && nodes[1] == added);
	nodes = pm_lookup(pm, 1, -16, &n);
	CHECK(n == 1 && nodes && nodes[0] == 5);
	pm_free(pm);
}

/* Two maps of the same program, indices in different orders. */
static void test_merge(void)
{
	char err[512];
	struct pathmap *dst = pm_new(), *src = pm_new();
	uint32_t dm = pm_add_module(dst, "/bin/p", ID_A, 2);
	dst->modules[dm].functions_found = 10;
	dst->modules[dm].functions_hooked = 4;
	uint32_t dmain = pm_add_function(dst, dm, 0x100, 0x10, "main");
	uint32_t dfoo = pm_add_function(dst, dm, 0x200, 0x10, "foo");
	uint32_t dr = pm_add_node(dst, PM_NONE, dmain, PM_NONE, 0, 16, 1);
	uint32_t dfn = pm_add_node(dst, dr, dfoo, dm, 0x104, 64, 5);

	uint32_t sl = pm_add_module(src, "/lib/libz.so", ID_B, 2);
	uint32_t sm = pm_add_module(src, "/bin/p", ID_A, 2);
	src->modules[sm].functions_found = 10;
	src->modules[sm].functions_hooked = 6;
	uint32_t sbar = pm_add_function(src, sl, 0x900, 0x10, "bar");
	uint32_t sfoo = pm_add_function(src, sm, 0x200, 0x10, "foo");
	uint32_t smain = pm_add_function(src, sm, 0x100, 0x10, "main");
	uint32_t sr = pm_add_node(src, PM_NONE, smain, PM_NONE, 0, 16, 2);
	uint32_t sfn = pm_add_node(src, sr, sfoo, sm, 0x104, 64, 7);
	pm_add_node(src, sfn, sbar, sm, 0x204, 128, 3);
	pm_add_node(src, sr, sfoo, sm, 0x108, 64, 1);

	CHECK_EQ_INT(pm_merge(dst, src, err, sizeof(err)), 0);
	CHECK_EQ_INT(dst->nmodules, 2);
	CHECK_EQ_INT(dst->nfuncs, 3);
	CHECK_EQ_INT(dst->nnodes, 4);
	CHECK_EQ_INT(dst->modules[dm].functions_hooked, 6);
	CHECK_EQ_INT(dst->nodes[dr].entries, 3);
	CHECK_EQ_INT(dst->nodes[dfn].entries, 12);
	uint32_t lib = pm_module_by_build_id(dst, ID_B, 2);
	CHECK_EQ_INT(lib, 1);
	CHECK_EQ_STR(dst->modules[lib].path, "/lib/libz.so");
	uint32_t bar = pm_function_at(dst, lib, 0x900);
	CHECK_EQ_INT(bar, 2);
	size_t n;
	const uint32_t *nodes = pm_lookup(dst, bar, 128, &n);
	CHECK(n == 1 && nodes);
	if (n == 1) {
		const struct pm_node *nd = &dst->nodes[nodes[0]];
		CHECK_EQ_INT(nd->parent, dfn);
		CHECK_EQ_INT(nd->cs_module, dm);
		CHECK_EQ_INT(nd->cs_addr, 0x204);
		CHECK_EQ_INT(nd->entries, 3);
	}
	nodes = pm_lookup(dst, dfoo, 64, &n);
	CHECK(n == 2 && nodes && nodes[0] == dfn && dst->nodes[nodes[1]].cs_addr == 0x108);
	CHECK_EQ_INT(pm_validate(dst, err, sizeof(err)), 0);

	/* A map is not merged into itself, nor an inconsistent one. */
	CHECK_EQ_INT(pm_merge(dst, dst, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "cannot merge a pathmap into itself");
	src->nodes[1].parent = 3;
	CHECK_EQ_INT(pm_merge(dst, src, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "cannot merge an inconsistent pathmap: node 1 has parent 3 "
		     "(must be below its own index)");
	src->nodes[1].parent = 0;
	CHECK_EQ_INT(dst->nnodes, 4);

	/* Another build of /bin/p: refused, dst unchanged. */
	struct pathmap *other = pm_new();
	uint32_t om = pm_add_module(other, "/bin/p", ID_B, 2);
	uint32_t of = pm_add_function(other, om, 0x100, 0x10, "main");
	pm_add_node(other, PM_NONE, of, PM_NONE, 0, 16, 1);
	dst->source = strdup("old.icpp");
	CHECK_EQ_INT(pm_merge(dst, other, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "pathmap old.icpp was trained on a different build of /bin/p "
		     "(build-id aa01, now bb02): train again without --append");
	CHECK_EQ_INT(dst->nmodules, 2);
	CHECK_EQ_INT(dst->nfuncs, 3);
	CHECK_EQ_INT(dst->nnodes, 4);
	/* The other way round: the file's map is src, its build-id comes first. */
	free(dst->source);
	dst->source = NULL;
	other->source = strdup("new.icpp");
	CHECK_EQ_INT(pm_merge(dst, other, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "pathmap new.icpp was trained on a different build of /bin/p "
		     "(build-id bb02, now aa01): train again without --append");
	/* A module without build-id against one with. */
	struct pathmap *noid = pm_new();
	pm_add_module(noid, "/lib/libz.so", NULL, 0);
	CHECK_EQ_INT(pm_merge(noid, src, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "pathmap (in memory) was trained on a different build of /lib/libz.so "
		     "(build-id none, now bb02): train again without --append");
	pm_free(noid);
	pm_free(other);
	pm_free(src);
	pm_free(dst);
}

static void test_validate(void)
{
	char err[256];
	struct pathmap *pm = pmt_sample();
	CHECK_EQ_INT(pm_validate(pm, err, sizeof(err)), 0);
	pm->nodes[1].parent = 1;
	CHECK_EQ_INT(pm_validate(pm, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "node 1 has parent 1 (must be below its own index)");
	void *buf;
	size_t len;
	CHECK_EQ_INT(pm_serialize(pm, &buf, &len, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "refusing to write an inconsistent pathmap: "
		     "node 1 has parent 1 (must be below its own index)");
	pm->nodes[1].parent = 0;
	pm->nodes[2] = pm->nodes[1];
	CHECK_EQ_INT(pm_validate(pm, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "node 2 duplicates node 1");
	pm_free(pm);

	pm = pmt_sample();
	pm->funcs[3].addr = pm->funcs[0].addr;
	pm->funcs[3].module = pm->funcs[0].module;
	CHECK_EQ_INT(pm_validate(pm, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "function 3 duplicates function 0");
	pm_free(pm);

	pm = pmt_sample();
	pm->modules[0].functions_hooked = 131;
	CHECK_EQ_INT(pm_validate(pm, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "module 0 has 131 functions hooked of 130 found");
	pm->modules[0].functions_hooked = 1;
	pm->nodes[5].cs_addr = 4;
	CHECK_EQ_INT(pm_validate(pm, err, sizeof(err)), -1);
	CHECK_EQ_STR(err, "node 5 has callsite module 4294967295 of 3 (address 0x4)");
	pm_free(pm);
}

/* Clones of icpp rewrite show as the functions they copy in profiles, and
 * as themselves elsewhere; names that only look alike stay as they are. */
static void test_profile_label(void)
{
	struct pathmap *pm = pm_new();
	uint32_t m = pm_add_module(pm, "/usr/bin/prog.rw", ID_A, sizeof(ID_A));
	const char *names[] = {"__icpp_clone_3_fx_a", "__icpp_clone_12_0x16e40", "__icpp_clone_4_",
			       "__icpp_clone_x_y", "__icpp_clone_5_0x12zz", "main"};
	const char *want[] = {"fx_a", "prog.rw+0x16e40", "__icpp_clone_4_", "__icpp_clone_x_y",
			      "0x12zz", "main"};
	for (uint32_t i = 0; i < 6; i++)
		pm_add_function(pm, m, 0x90000 + 0x100 * i, 0x80, names[i]);
	char buf[128];
	for (uint32_t i = 0; i < 6; i++) {
		CHECK_EQ_STR(pm_profile_label(pm, i, NULL, buf, sizeof(buf)), want[i]);
		CHECK_EQ_STR(pm_function_label(pm, i, NULL, buf, sizeof(buf)), names[i]);
	}
	CHECK_EQ_STR(pm_profile_label(pm, 99, NULL, buf, sizeof(buf)), "?");
	pm_free(pm);
}

/* pm_clone_original finds the copied function by address or by a name of
 * one function of the clone's module; path ids for profiles count a path
 * through a clone as the path through the original. */
static void test_clone_original(void)
{
	struct pathmap *pm = pm_new();
	uint32_t m = pm_add_module(pm, "/usr/bin/prog.rw", ID_A, sizeof(ID_A));
	uint32_t o = pm_add_module(pm, "/lib/libother.so", ID_B, sizeof(ID_B));
	uint32_t root = pm_add_function(pm, m, 0x1000, 0x10, "main");
	uint32_t a = pm_add_function(pm, m, 0x2000, 0x10, "fx_a");
	uint32_t anon = pm_add_function(pm, m, 0x3000, 0x10, NULL);
	uint32_t dup1 = pm_add_function(pm, m, 0x4000, 0x10, "dup");
	pm_add_function(pm, m, 0x5000, 0x10, "dup");
	uint32_t other = pm_add_function(pm, o, 0x2000, 0x10, "in_other");
	uint32_t ca = pm_add_function(pm, m, 0x9000, 0x10, "__icpp_clone_0_fx_a");
	uint32_t canon = pm_add_function(pm, m, 0x9100, 0x10, "__icpp_clone_1_0x3000");
	uint32_t cdup = pm_add_function(pm, m, 0x9200, 0x10, "__icpp_clone_2_dup");
	uint32_t cnone = pm_add_function(pm, m, 0x9300, 0x10, "__icpp_clone_3_0x7000");
	uint32_t cother = pm_add_function(pm, m, 0x9400, 0x10, "__icpp_clone_4_in_other");
	/* clone -> original; a clone of "dup" (two of them), of nothing at
	 * 0x7000 or of another module's function stays itself, as do originals */
	const uint32_t want[][2] = {{ca, a}, {canon, anon}, {cdup, cdup}, {cnone, cnone},
				    {cother, cother}, {a, a}, {dup1, dup1}, {other, other}};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		CHECK_EQ_INT(pm_clone_original(pm, want[i][0]), want[i][1]);

	/* main > fx_a > anon, main > clone of fx_a > clone of anon, main > dup */
	uint32_t r = pm_add_node(pm, PM_NONE, root, PM_NONE, 0, 16, 1);
	uint32_t n1 = pm_add_node(pm, r, a, m, 0x1005, 64, 1);
	uint32_t n2 = pm_add_node(pm, n1, anon, m, 0x2005, 128, 1);
	uint32_t k1 = pm_add_node(pm, r, ca, m, 0x1009, 64, 1);
	uint32_t k2 = pm_add_node(pm, k1, canon, m, 0x9005, 128, 1);
	uint32_t d = pm_add_node(pm, r, cdup, m, 0x100d, 64, 1);
	uint32_t ids[6], np, pids[6], npp;
	CHECK(pm_path_ids(pm, ids, &np) == 0);
	CHECK(pm_profile_path_ids(pm, pids, &npp) == 0);
	CHECK_EQ_INT(np, 6);
	CHECK_EQ_INT(npp, 4);
	CHECK(ids[n1] != ids[k1] && ids[n2] != ids[k2]);
	CHECK_EQ_INT(pids[n1], pids[k1]);
	CHECK_EQ_INT(pids[n2], pids[k2]);
	CHECK(pids[d] != pids[n1] && pids[r] != pids[n1]);
	pm_free(pm);
}

/* The metrics count a path through a clone and the same path through the
 * original as one (what a profile shows, and the solver's paths): the frames
 * below a clone, which its copies call at the original's heights, do not
 * make it ambiguous; a path of other functions there still does. */
static void test_stats_clones(void)
{
	struct pathmap *pm = pm_new();
	uint32_t m = pm_add_module(pm, "/usr/bin/prog.rw", ID_A, sizeof(ID_A));
	uint32_t root = pm_add_function(pm, m, 0x1000, 0x10, "main");
	uint32_t a = pm_add_function(pm, m, 0x2000, 0x10, "fx_a");
	uint32_t b = pm_add_function(pm, m, 0x2100, 0x10, "fx_b");
	uint32_t h = pm_add_function(pm, m, 0x3000, 0x10, "helper");
	uint32_t ca = pm_add_function(pm, m, 0x9000, 0x10, "__icpp_clone_0_fx_a");
	/* main > fx_a > helper and main > clone of fx_a > helper, helper at 96 */
	uint32_t r = pm_add_node(pm, PM_NONE, root, PM_NONE, 0, 16, 1);
	uint32_t n1 = pm_add_node(pm, r, a, m, 0x1005, 64, 1);
	pm_add_node(pm, n1, h, m, 0x2005, 96, 1);
	uint32_t k1 = pm_add_node(pm, r, ca, m, 0x1009, 64, 1);
	pm_add_node(pm, k1, h, m, 0x9005, 96, 1);
	struct pm_stats st;
	CHECK_EQ_INT(pm_stats(pm, &st), 0);
	CHECK_EQ_INT(st.paths, 3);              /* main, main>fx_a, main>fx_a>helper */
	CHECK_EQ_INT(st.precise_paths, 3);
	CHECK_EQ_INT(st.cids, 4);               /* the clone's CID is its own */
	CHECK_EQ_INT(st.ambiguous_cids, 0);
	struct pm_ambiguous_cid worst[2];
	CHECK_EQ_INT(pm_worst_cids(pm, worst, 2), 0);
	/* main > fx_b > helper at 96 too: ambiguous with it, the clone's path
	 * and the original's alike */
	uint32_t n3 = pm_add_node(pm, r, b, m, 0x100d, 64, 1);
	pm_add_node(pm, n3, h, m, 0x2105, 96, 1);
	CHECK_EQ_INT(pm_stats(pm, &st), 0);
	CHECK_EQ_INT(st.paths, 5);
	CHECK_EQ_INT(st.precise_paths, 3);
	CHECK_EQ_INT(st.ambiguous_cids, 1);
	CHECK_EQ_INT(st.max_degree, 2);
	CHECK_EQ_INT(pm_worst_cids(pm, worst, 2), 1);
	CHECK_EQ_INT(worst[0].degree, 2);
	pm_free(pm);
}

int main(void)
{
	test_dedup();
	test_append();
	test_profile_label();
	test_clone_original();
	test_stats_clones();
	test_add_after_parse();
	test_stats_thesis();
	test_stats_callsites();
	test_fragment_frame();
	test_stats_of_module();
	test_stats_degrees();
	test_lookup();
	test_merge();
	test_validate();
	return check_exit();
}
