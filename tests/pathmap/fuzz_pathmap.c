/* libFuzzer target for the pathmap parser (docs/pathmap-format.md, "Fuzzing").
 *
 * Each input is parsed twice: as it is, and with both checksums recomputed so
 * that mutations reach the field checks behind them.  A map that parses must
 * pass pm_validate and survive serialize -> parse unchanged, and its readers
 * (stats, lookup, clones read as their originals) must hold; anything else
 * (a crash, a leak, UB, an inconsistent map) is a finding. */
#include <stdlib.h>

#include "tests/pathmap/pm_testutil.h"

/* Is j a self-call sibling of node i under another callsite? */
static bool other_sibling(const struct pathmap *pm, uint32_t i, uint32_t j)
{
	const struct pm_node *a = &pm->nodes[i], *b = &pm->nodes[j];
	return j != i && b->parent == a->parent && b->height == a->height &&
	       b->func == a->func && b->cs_module != PM_NONE &&
	       (b->cs_module != a->cs_module || b->cs_addr != a->cs_addr);
}

/* pm_sibling_groups marks exactly the self-calls with a sibling of another
 * callsite (quadratic: fuzz inputs are small). */
static void check_groups(const struct pathmap *pm)
{
	bool *g = malloc((pm->nnodes + 1) * sizeof(*g));
	if (!g || pm_sibling_groups(pm, g) < 0)
		abort();
	for (uint32_t i = 0; i < pm->nnodes; i++) {
		const struct pm_node *x = &pm->nodes[i];
		bool self = x->parent != PM_NONE && x->cs_module != PM_NONE &&
			    pm->nodes[x->parent].func == x->func;
		bool any = false;
		for (uint32_t j = 0; self && !any && j < pm->nnodes; j++)
			any = other_sibling(pm, i, j);
		if (g[i] != any)
			abort();
	}
	free(g);
}

static void check(const uint8_t *data, size_t size)
{
	struct pathmap *pm = NULL, *back = NULL;
	char err[256];
	if (pm_parse(data, size, &pm, err, sizeof(err)) < 0) {
		if (pm || !err[0] || strchr(err, '\n'))
			abort();
		return;
	}
	void *buf;
	size_t len;
	if (pm_validate(pm, err, sizeof(err)) < 0 || pm_serialize(pm, &buf, &len, err, sizeof(err)) < 0)
		abort();
	if (pm_parse(buf, len, &back, err, sizeof(err)) < 0 || !pmt_equal(pm, back))
		abort();
	/* Exercise the readers of a parsed map too. */
	struct pm_stats st;
	struct pm_ambiguous_cid worst[4];
	if (pm_stats(back, &st) < 0 || st.nodes != back->nnodes)
		abort();
	pm_worst_cids(back, worst, 4);
	check_groups(back);
	for (uint32_t i = 0; i < back->nnodes; i++) {
		size_t n;
		const uint32_t *nodes = pm_lookup(back, back->nodes[i].func, back->nodes[i].height, &n);
		if (!nodes || !n)
			abort();
	}
	/* clones read as their originals (any name may look like a clone's):
	 * an original is a function of the clone's module, and paths that are
	 * one sequence stay one */
	uint32_t *ids = malloc((back->nnodes + 1) * sizeof(*ids));
	uint32_t *pids = malloc((back->nnodes + 1) * sizeof(*pids)), np, npp;
	if (!ids || !pids || pm_path_ids(back, ids, &np) < 0 || pm_profile_path_ids(back, pids, &npp) < 0 ||
	    npp > np)
		abort();
	for (uint32_t f = 0; f < back->nfuncs; f++) {
		uint32_t g = pm_clone_original(back, f);
		if (g >= back->nfuncs || back->funcs[g].module != back->funcs[f].module)
			abort();
	}
	uint32_t *of = malloc((np + 1) * sizeof(*of));     /* path id -> profile id */
	if (!of)
		abort();
	memset(of, 0xff, (np + 1) * sizeof(*of));
	for (uint32_t i = 0; i < back->nnodes; i++) {
		if (of[ids[i]] != UINT32_MAX && of[ids[i]] != pids[i])
			abort();
		of[ids[i]] = pids[i];
	}
	free(of);
	free(ids);
	free(pids);
	free(buf);
	pm_free(back);
	pm_free(pm);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	check(data, size);
	uint8_t *copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	pmt_fix_crcs(copy, size);
	check(copy, size);
	free(copy);
	return 0;
}
