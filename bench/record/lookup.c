/* lookup: report-side costs at a large pathmap.
 *   - CID lookup (pm_lookup) in ns and TSC ticks, for CIDs that exist and
 *     CIDs that do not, on a synthetic pathmap of NPATHS distinct paths over
 *     the functions of a real library (libc by default);
 *   - report throughput: a synthetic sample file whose records hit random
 *     CIDs of that map (IPs at function entries of the real library, so the
 *     CFI lookup is real), turned into a text report by rp_run.
 * usage: lookup [NPATHS [LIBRARY]] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

#include "binary/binary.h"
#include "collector/samplefile.h"
#include "pathmap/pathmap.h"
#include "report/report.h"

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

int main(int argc, char **argv)
{
	uint32_t npaths = argc > 1 ? (uint32_t)atol(argv[1]) : 1000000;
	const char *lib = argc > 2 ? argv[2] : "/lib/x86_64-linux-gnu/libc.so.6";
	char err[512];

	struct bin_module *bm = bin_open(lib, err, sizeof(err));
	if (!bm) {
		fprintf(stderr, "lookup: %s\n", err);
		return 1;
	}
	size_t nf;
	const struct bin_function *fns = bin_functions(bm, &nf);
	/* functions whose entry has CFA = SP + 8 (every sane entry) */
	uint32_t *use = malloc(nf * sizeof(uint32_t)), nuse = 0;
	for (size_t i = 0; i < nf; i++) {
		struct bin_cfa r;
		if (bin_cfa_at(bm, fns[i].addr, &r) == 0 && r.reg == BIN_CFA_RSP && r.offset == 8)
			use[nuse++] = (uint32_t)i;
	}
	const uint8_t *bid;
	size_t bidlen = bin_build_id(bm, &bid);
	struct pathmap *pm = pm_new();
	uint32_t mod = pm_add_module(pm, lib, bid, (uint32_t)bidlen);
	uint32_t *pf = malloc(nuse * sizeof(uint32_t));
	for (uint32_t i = 0; i < nuse; i++)
		pf[i] = pm_add_function(pm, mod, fns[use[i]].addr, fns[use[i]].size, fns[use[i]].name);

	/* Paths root > mid > leaf: distinct function sequences, random heights
	 * (multiples of 16, as real ones are). */
	double t0 = now();
	uint32_t *leaf = malloc(npaths * sizeof(uint32_t));
	uint32_t made = 0;
	while (made < npaths) {
		uint32_t a = pf[rnd() % nuse], b = pf[rnd() % nuse], c = pf[rnd() % nuse];
		int64_t h0 = (int64_t)(rnd() % 64) * 16;
		uint32_t r = pm_add_node(pm, PM_NONE, a, PM_NONE, 0, h0, 1);
		uint32_t m = pm_add_node(pm, r, b, mod, pm->funcs[a].addr + 4, h0 + 16 + (int64_t)(rnd() % 32) * 16, 1);
		uint32_t l = pm_add_node(pm, m, c, mod, pm->funcs[b].addr + 4,
					 pm->nodes[m].height + 16 + (int64_t)(rnd() % 4096) * 16, 1 + rnd() % 100);
		if (l == PM_NONE)
			return 1;
		leaf[made++] = l;
	}
	double tbuild = now() - t0;
	struct pm_stats st;
	pm_stats(pm, &st);
	printf("pathmap: %u functions of %s, %u leaf paths root > mid > leaf; %llu paths counting prefixes, %llu nodes, %llu CIDs (%.1f%% of paths precise); built in %.2f s\n",
	       nuse, lib, npaths, (unsigned long long)st.paths, (unsigned long long)st.nodes,
	       (unsigned long long)st.cids, 100.0 * (double)st.precise_paths / (double)st.paths, tbuild);

	/* Lookups: warm the index once, then time. */
	size_t n;
	pm_lookup(pm, pm->nodes[leaf[0]].func, pm->nodes[leaf[0]].height, &n);
	const int N = 2000000;
	uint32_t *q = malloc(N * sizeof(uint32_t));
	for (int i = 0; i < N; i++)
		q[i] = leaf[rnd() % npaths];
	uint64_t found = 0;
	t0 = now();
	uint64_t h0 = __rdtsc();
	for (int i = 0; i < N; i++) {
		pm_lookup(pm, pm->nodes[q[i]].func, pm->nodes[q[i]].height, &n);
		found += n;
	}
	uint64_t h1 = __rdtsc();
	double thit = now() - t0;
	t0 = now();
	uint64_t m0 = __rdtsc();
	for (int i = 0; i < N; i++) {
		pm_lookup(pm, pm->nodes[q[i]].func, pm->nodes[q[i]].height + 8, &n);   /* never a height */
		found += n;
	}
	uint64_t m1 = __rdtsc();
	double tmiss = now() - t0;
	printf("CID lookup: hit %.0f ns (%.0f TSC ticks), miss %.0f ns (%.0f TSC ticks) per lookup "
	       "(%d random CIDs; %llu nodes found)\n", thit / N * 1e9, (double)(h1 - h0) / N,
	       tmiss / N * 1e9, (double)(m1 - m0) / N, N, (unsigned long long)found);

	/* Report throughput: write the map and a sample file, run rp_run. */
	char mpath[] = "/tmp/icpp-bench-map.XXXXXX", spath[] = "/tmp/icpp-bench-smp.XXXXXX";
	close(mkstemp(mpath));
	close(mkstemp(spath));
	if (pm_write(pm, mpath, err, sizeof(err))) {
		fprintf(stderr, "lookup: %s\n", err);
		return 1;
	}
	struct sample_set *ss = sf_new();
	ss->meta.backend = SF_BACKEND_BPF;
	ss->meta.freq = 999;
	sf_set_string(&ss->meta.event, "cpu-clock");
	sf_set_string(&ss->meta.command, "synthetic");
	sf_add_process(ss, 1000, 0, "synthetic");
	struct sf_module m = {0};
	m.tgid = 1000;
	m.bias = 0x7f0000000000ull;
	m.bias_known = 1;
	m.start = m.bias + fns[0].addr;
	m.end = m.bias + fns[nf - 1].addr + fns[nf - 1].size;
	m.build_id_len = (uint32_t)bidlen;
	memcpy(m.build_id, bid, bidlen);
	m.path = (char *)lib;
	sf_add_module(ss, &m);
	const uint32_t NREC = 1000000;
	for (uint32_t i = 0; i < NREC; i++) {
		const struct pm_node *nd = &pm->nodes[leaf[rnd() % npaths]];
		struct sf_record r = {0};
		r.tgid = 1000;
		r.flags = SF_R_MAIN;
		r.ip = m.bias + pm->funcs[nd->func].addr;
		r.sp_off = nd->height + 8;          /* CFA = SP + 8 at the entry */
		r.count = 1 + (i & 3);
		r.stack = SF_NONE;
		sf_add_record(ss, &r);
	}
	ss->meta.c.samples = sf_total(ss);
	if (sf_write(ss, spath, err, sizeof(err))) {
		fprintf(stderr, "lookup: %s\n", err);
		return 1;
	}
	uint64_t samples = ss->meta.c.samples, records = ss->nrecs;
	sf_free(ss);
	struct pathmap *rd = NULL;
	t0 = now();
	if (pm_read(mpath, &rd, err, sizeof(err))) {
		fprintf(stderr, "lookup: %s\n", err);
		return 1;
	}
	double tread = now() - t0;
	pm_free(rd);
	struct rp_opts o = {.samples = spath, .pathmap = mpath, .output = "-", .format = RP_TEXT, .top = 20};
	fflush(stdout);
	int saved = dup(1);
	if (!freopen("/dev/null", "w", stdout))
		return 1;
	t0 = now();
	int rc = rp_run(&o, err, sizeof(err));
	double trep = now() - t0;
	fflush(stdout);
	dup2(saved, 1);
	if (rc) {
		fprintf(stderr, "lookup: report: %s\n", err);
		return 1;
	}
	printf("report: %llu records (%llu samples) against %u leaf paths in %.2f s, of which %.2f s reading "
	       "the pathmap: %.0f records/s, %.0f samples/s end to end; %.0f records/s after the read "
	       "(CFI + lookup + attribution + text)\n",
	       (unsigned long long)records, (unsigned long long)samples, npaths, trep, tread,
	       records / trep, samples / trep, records / (trep - tread));
	unlink(mpath);
	unlink(spath);
	pm_free(pm);
	bin_close(bm);
	return 0;
}
