/* Synthetic calling-context trees shaped like real programs, for the
 * disambiguation benchmark: a layered call graph (callers call deeper
 * functions), shared helpers with Zipf popularity, self and mutual recursion,
 * 1-3 callsites per call edge, x86-64 frame sizes (multiples of 16, mostly
 * small, a few large buffers), heavy-tailed entry counts and a few thread
 * roots.  The tree is grown by expanding random frontier nodes until it has
 * the requested number of nodes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/disambig/synth.h"

static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static double unif(uint64_t *s)
{
	return (double)(next(s) >> 11) * (1.0 / 9007199254740992.0);
}

static uint32_t below(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(next(s) % n) : 0;
}

/* A frame size (CFA to CFA): 16 (return address and saved rbp) plus saved
 * registers and locals, rounded to 16 by the ABI; -O2 code has mostly small
 * frames, a few large buffers. */
static int64_t frame_size(uint64_t *s)
{
	double u = unif(s);
	if (u < 0.60)
		return 16 * (1 + below(s, 3));          /* 16..48 */
	if (u < 0.90)
		return 16 * (4 + below(s, 7));          /* 64..160 */
	if (u < 0.98)
		return 16 * (11 + below(s, 22));        /* 176..512 */
	return 16 * (33 + below(s, 224));               /* up to 4 KiB */
}

struct edge {
	uint32_t callee, cs;
	double p;               /* probability the call happens in a context */
};

struct fn {
	struct edge *e;
	uint32_t ne;
	int64_t size;
	uint32_t level;
};

struct da_problem *synth_problem(const struct synth_params *sp)
{
	uint64_t s = sp->seed * 0x2545f4914f6cdd1dULL + 7;
	uint32_t nf = sp->nfuncs < 8 ? 8 : sp->nfuncs, levels = sp->levels ? sp->levels : 12;
	struct da_problem *p = da_problem_new();
	struct fn *F = calloc(nf, sizeof(*F));
	if (!p || !F)
		return NULL;
	da_mask pads = da_mask_upto(sp->pad_bound ? sp->pad_bound : DA_DEFAULT_BOUND);
	/* functions: level 0 is main, the rest spread over levels, more of
	 * them deeper (helpers) */
	for (uint32_t f = 0; f < nf; f++) {
		F[f].size = frame_size(&s);
		F[f].level = f == 0 ? 0 : 1 + (uint32_t)((levels - 1) * sqrt(unif(&s)));
		da_mask m = unif(&s) < sp->fixed_frac ? 1 : pads;
		char name[32];
		snprintf(name, sizeof(name), "f%u", f);
		da_add_func(p, name, 64 + 16 * below(&s, 64), m, true);
	}
	/* sort functions into levels for callee choice */
	uint32_t *bylevel = malloc(nf * sizeof(*bylevel)), *lstart = calloc(levels + 2, sizeof(*lstart));
	for (uint32_t f = 0; f < nf; f++)
		lstart[F[f].level + 1]++;
	for (uint32_t l = 0; l <= levels; l++)
		lstart[l + 1] += lstart[l];
	uint32_t *fill = calloc(levels + 1, sizeof(*fill));
	for (uint32_t f = 0; f < nf; f++)
		bylevel[lstart[F[f].level] + fill[F[f].level]++] = f;
	free(fill);
	/* edges */
	for (uint32_t f = 0; f < nf; f++) {
		uint32_t fan = 1 + (uint32_t)(-log(1 - unif(&s)) * sp->fanout);
		if (f == 0 && fan < 4)
			fan = 4;
		if (F[f].level + 1 >= levels)
			fan = unif(&s) < 0.3 ? 1 : 0;          /* leaves mostly */
		F[f].e = calloc(fan + 3, sizeof(*F[f].e));
		for (uint32_t k = 0; k < fan; k++) {
			uint32_t callee;
			if (unif(&s) < sp->shared) {
				/* a popular helper: Zipf over the deepest third */
				uint32_t lo = lstart[levels * 2 / 3], n = lstart[levels + 1] - lo;
				callee = bylevel[lo + (uint32_t)(n * pow(unif(&s), 3.0))];
			} else {
				uint32_t l = F[f].level + 1 + below(&s, 3);
				if (l > levels)
					l = levels;
				while (l <= levels && lstart[l + 1] == lstart[l])
					l++;
				if (l > levels)
					continue;
				callee = bylevel[lstart[l] + below(&s, lstart[l + 1] - lstart[l])];
			}
			if (callee == f)
				continue;
			F[f].e[F[f].ne++] = (struct edge){callee, 0, 0.15 + 0.85 * unif(&s)};
		}
		if (unif(&s) < sp->recursive) {             /* self recursion */
			F[f].e[F[f].ne++] = (struct edge){f, 0, 0.6 + 0.35 * unif(&s)};
		} else if (unif(&s) < sp->recursive && F[f].level > 1) {
			/* mutual: call back to a shallower function */
			uint32_t l = 1 + below(&s, F[f].level - 1);
			if (lstart[l + 1] > lstart[l]) {
				uint32_t callee = bylevel[lstart[l] + below(&s, lstart[l + 1] - lstart[l])];
				F[f].e[F[f].ne++] = (struct edge){callee, 0, 0.1 + 0.3 * unif(&s)};
			}
		}
	}
	/* callsites: 1-3 per edge (a function calling the same callee from
	 * several places); each edge keeps its first, alternatives at expansion */
	uint32_t **alt = calloc(nf, sizeof(*alt));
	uint32_t *nalt_per = calloc(nf, sizeof(*nalt_per));
	for (uint32_t f = 0; f < nf; f++) {
		alt[f] = calloc(F[f].ne * 3 + 1, sizeof(**alt));
		for (uint32_t k = 0; k < F[f].ne; k++) {
			uint32_t nc = unif(&s) < 0.25 ? 2 + below(&s, 2) : 1;
			F[f].e[k].cs = nalt_per[f];
			for (uint32_t j = 0; j < nc; j++)
				alt[f][nalt_per[f]++] = da_add_callsite(p, f, sp->fixed_frac && unif(&s) < sp->fixed_frac / 2
									? 1 : pads, true);
			alt[f][nalt_per[f]] = DA_NONE;
			/* mark the count in the high bits */
			F[f].e[k].cs |= nc << 24;
		}
	}
	/* Grow the tree: a pool of potential calls (node, edge, callsite); each
	 * step draws `deep` of them and materialises the deepest (biasing
	 * towards realistic depths), subject to the edge's probability. */
	uint32_t want = sp->nodes;
	struct pot {
		uint32_t node, edge, alt;
	} *pool = NULL;
	size_t npool = 0, cappool = 0;
	uint32_t *depth = malloc((size_t)(want + 64) * sizeof(*depth));
#define POOL_NODE(x)                                                                          \
	do {                                                                                  \
		uint32_t f_ = p->nodes[(x)].func;                                             \
		if (depth[(x)] >= sp->max_depth)                                              \
			break;                                                                \
		for (uint32_t k_ = 0; k_ < F[f_].ne; k_++)                                    \
			for (uint32_t j_ = 0; j_ < (F[f_].e[k_].cs >> 24); j_++) {            \
				if (npool == cappool) {                                       \
					cappool = cappool ? cappool * 2 : 4096;               \
					pool = realloc(pool, cappool * sizeof(*pool));        \
				}                                                             \
				pool[npool++] = (struct pot){(x), k_, j_};                    \
			}                                                                     \
	} while (0)
	da_add_node(p, DA_NONE, 0, DA_NONE, 344, 1);
	depth[0] = 1;
	POOL_NODE(0);
	for (uint32_t t = 0; t < sp->threads && t + 1 < nf; t++) {
		uint32_t f = bylevel[lstart[1] + below(&s, lstart[2] - lstart[1])];
		uint32_t x = da_add_node(p, DA_NONE, f, DA_NONE, 200 + 16 * below(&s, 40), 1);
		depth[x] = 1;
		POOL_NODE(x);
	}
	uint32_t deep = sp->deep ? sp->deep : 2;
	while (npool && p->nnodes < want) {
		size_t pick = next(&s) % npool;
		for (uint32_t t = 1; t < deep; t++) {
			size_t q = next(&s) % npool;
			if (depth[pool[q].node] > depth[pool[pick].node])
				pick = q;
		}
		struct pot pt = pool[pick];
		pool[pick] = pool[--npool];
		uint32_t f = p->nodes[pt.node].func;
		const struct edge *e = &F[f].e[pt.edge];
		/* the first callsite of an edge is the usual one; others are
		 * used in some contexts only */
		if (pt.alt && unif(&s) >= e->p * 0.5)
			continue;
		uint32_t first = e->cs & 0xffffff;
		uint64_t w = (uint64_t)pow(1 - unif(&s), -1.3);
		uint32_t y = da_add_node(p, pt.node, e->callee, alt[f][first + pt.alt],
					 p->nodes[pt.node].height + F[f].size, w);
		if (y == DA_NONE)
			break;
		depth[y] = depth[pt.node] + 1;
		POOL_NODE(y);
	}
#undef POOL_NODE
	free(pool);
	free(depth);
	for (uint32_t f = 0; f < nf; f++) {
		free(F[f].e);
		free(alt[f]);
	}
	free(F);
	free(alt);
	free(nalt_per);
	free(bylevel);
	free(lstart);
	return p;
}

/* Shapes after Table 5.1 (train paths) of the thesis: size, functions (the
 * programs' reachable functions, estimated), recursion and threads. */
const struct synth_profile synth_profiles[] = {
	{"namd", {.nodes = 207, .nfuncs = 60, .fanout = 2.5, .shared = 0.3, .recursive = 0.02}},
	{"dealII", {.nodes = 207317, .nfuncs = 6000, .fanout = 4, .shared = 0.35, .recursive = 0.05}},
	{"soplex", {.nodes = 7681, .nfuncs = 700, .fanout = 3.5, .shared = 0.3, .recursive = 0.04}},
	{"povray", {.nodes = 41495, .nfuncs = 1600, .fanout = 4, .shared = 0.35, .recursive = 0.08}},
	{"astar", {.nodes = 547, .nfuncs = 90, .fanout = 2.5, .shared = 0.3, .recursive = 0.05}},
	{"perlbench", {.nodes = 82441, .nfuncs = 1800, .fanout = 4, .shared = 0.4, .recursive = 0.1}},
	{"bzip2", {.nodes = 210, .nfuncs = 60, .fanout = 2.5, .shared = 0.3, .recursive = 0.0}},
	{"mcf", {.nodes = 49, .nfuncs = 25, .fanout = 2, .shared = 0.2, .recursive = 0.05}},
	{"milc", {.nodes = 304, .nfuncs = 120, .fanout = 2.5, .shared = 0.3, .recursive = 0.0}},
	{"hmmer", {.nodes = 92, .nfuncs = 50, .fanout = 2, .shared = 0.3, .recursive = 0.0}},
	{"sjeng", {.nodes = 16812, .nfuncs = 150, .fanout = 3, .shared = 0.3, .recursive = 0.15}},
	{"libquantum", {.nodes = 336, .nfuncs = 90, .fanout = 2.5, .shared = 0.3, .recursive = 0.0}},
	{"h264ref", {.nodes = 815, .nfuncs = 250, .fanout = 3, .shared = 0.3, .recursive = 0.01}},
	{"lbm", {.nodes = 17, .nfuncs = 12, .fanout = 2, .shared = 0.2, .recursive = 0.0}},
	{"sphinx3", {.nodes = 685, .nfuncs = 200, .fanout = 3, .shared = 0.3, .recursive = 0.01}},
	{NULL, {0}},
};

void synth_defaults(struct synth_params *sp)
{
	if (!sp->levels)
		sp->levels = 14;
	if (!sp->max_depth)
		sp->max_depth = 400;
	if (!sp->fanout)
		sp->fanout = 3;
}
