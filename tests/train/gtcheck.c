/* gtcheck: hold training to the ground truth the test programs record (gt.h).
 *
 *   gtcheck same DIR_A DIR_B
 *       the GT of two runs (gt.*.txt files in each folder) is the same set of
 *       entries, chains included: heights did not move.
 *   gtcheck map MAP DIR
 *       (a) every GT entry (function, callsite, height) is the last frame of
 *           some pathmap node with that height; in frame-pointer builds its
 *           whole chain is a suffix of that node's path, heights included
 *           (a frame of a recursion's sibling group may name the callsite
 *           of a sibling: training keeps one subtree per group);
 *       (b) the nodes whose last function is a test function are exactly the
 *           GT entries, as (function, callsite, height) triples;
 *       (c) no recursion's sibling group (pm_sibling_groups) has callees
 *           under two of its nodes.
 *   gtcheck hooked MAP FUNCTION...
 *       every FUNCTION (a symbol name) was entered through its hook: some
 *       node of it has entries (a frame the collector rebuilt from CFI under
 *       a callee, its entry unseen, has none).
 *   gtcheck real MAP MIN_PATHS MODULE...
 *       a real program's map: at least MIN_PATHS distinct function sequences,
 *       and every MODULE (a file-name substring) has hooked functions and
 *       entered nodes; prints the coverage of every module.
 *
 * Exit status 0 when every check holds, 1 otherwise (with a diff on stderr),
 * 2 on a usage error.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "binary/binary.h"
#include "pathmap/pathmap.h"
#include "tests/check.h"

#define MAX_SHOWN 25   /* differences listed per kind */

/* ---- modules, shared by GT files and the pathmap ---- */

struct mod {
	char *path;                /* first path seen */
	char *key;                 /* "id:<build-id hex>" or "path:<realpath>" */
	struct bin_module *bin;    /* NULL when the file cannot be opened */
	bool gt;                   /* some GT file recorded this module */
	bool fp;                   /* ... built with frame pointers */
	uint64_t *tests;           /* start addresses of its test functions */
	size_t ntests, captests;
};
static struct mod *mods;
static int nmods, capmods;

static void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p) {
		fprintf(stderr, "gtcheck: out of memory\n");
		exit(1);
	}
	return p;
}

static char *xstrdup(const char *s)
{
	return strcpy(xrealloc(NULL, strlen(s) + 1), s);
}

static char *key_of(const char *path, const uint8_t *id, size_t idlen)
{
	char buf[PATH_MAX + 8];
	if (idlen) {
		strcpy(buf, "id:");
		for (size_t i = 0; i < idlen && i < PM_BUILD_ID_MAX; i++)
			sprintf(buf + 3 + 2 * i, "%02x", id[i]);
	} else {
		char real[PATH_MAX];
		snprintf(buf, sizeof buf, "path:%s", realpath(path, real) ? real : path);
	}
	return xstrdup(buf);
}

static int mod_add(const char *path, char *key, struct bin_module *bin)
{
	for (int i = 0; i < nmods; i++)
		if (!strcmp(mods[i].key, key)) {
			free(key);
			if (bin)
				bin_close(bin);
			return i;
		}
	if (nmods == capmods) {
		capmods = capmods ? 2 * capmods : 16;
		mods = xrealloc(mods, capmods * sizeof *mods);
	}
	memset(&mods[nmods], 0, sizeof mods[nmods]);
	mods[nmods].path = xstrdup(path);
	mods[nmods].key = key;
	mods[nmods].bin = bin;
	return nmods++;
}

/* A module named by a GT file: the file on disk says its build-id. */
static int mod_by_path(const char *path)
{
	static struct {
		char *path;
		int id;
	} cache[256];
	static int ncache;
	for (int i = 0; i < ncache; i++)
		if (!strcmp(cache[i].path, path))
			return cache[i].id;
	char err[256];
	const uint8_t *id = NULL;
	struct bin_module *bin = bin_open(path, err, sizeof err);
	size_t idlen = bin ? bin_build_id(bin, &id) : 0;
	if (!bin)
		fprintf(stderr, "gtcheck: %s (names and functions of it unknown)\n", err);
	int m = mod_add(path, key_of(path, id, idlen), bin);
	if (ncache < 256) {
		cache[ncache].path = xstrdup(path);
		cache[ncache++].id = m;
	}
	return m;
}

static int mod_of_pm(const struct pm_module *pmm)
{
	char err[256];
	int m = mod_add(pmm->path, key_of(pmm->path, pmm->build_id, pmm->build_id_len), NULL);
	if (!mods[m].bin)
		mods[m].bin = bin_open(pmm->path, err, sizeof err);
	return m;
}

static bool is_test(int m, uint64_t func)
{
	if (m < 0 || !mods[m].gt)
		return false;
	for (size_t i = 0; i < mods[m].ntests; i++)
		if (mods[m].tests[i] == func)
			return true;
	return false;
}

/* Start of the function containing vaddr; UINT64_MAX when unknown. */
static uint64_t func_start(int m, uint64_t vaddr)
{
	const struct bin_function *f;
	if (m < 0 || !mods[m].bin || !(f = bin_function_at(mods[m].bin, vaddr)))
		return UINT64_MAX;
	return f->addr;
}

/* "name+0xoff (file)" for an address of module m. */
static const char *label(int m, uint64_t addr, bool offset, char *buf, size_t len)
{
	struct bin_symbol sym;
	if (m < 0) {
		snprintf(buf, len, "?0x%" PRIx64, addr);
		return buf;
	}
	const char *file = strrchr(mods[m].path, '/');
	file = file ? file + 1 : mods[m].path;
	if (mods[m].bin && !bin_symbolize(mods[m].bin, addr, &sym) && sym.name[0]) {
		if (offset && sym.offset)
			snprintf(buf, len, "%s+0x%" PRIx64 " (%s)", sym.name, sym.offset, file);
		else
			snprintf(buf, len, "%s (%s)", sym.name, file);
	} else {
		snprintf(buf, len, "%s+0x%" PRIx64, file, addr);
	}
	return buf;
}

/* ---- frames and GT entries ---- */

struct frame {
	int fmod;                  /* module of the function */
	uint64_t func;             /* its start (GT: after resolution) */
	int csmod;                 /* module of the callsite, -1 unknown */
	uint64_t cs;               /* return address - 1 */
	int64_t h;                 /* height */
};

static int frame_cmp(const void *pa, const void *pb)
{
	const struct frame *a = pa, *b = pb;
#define CMP(x) if (a->x != b->x) return a->x < b->x ? -1 : 1
	CMP(fmod);
	CMP(func);
	CMP(csmod);
	CMP(cs);
	CMP(h);
#undef CMP
	return 0;
}

static const char *frame_str(const struct frame *f, char *buf, size_t len)
{
	char a[600], b[600];
	snprintf(buf, len, "%s called from %s at height %" PRId64,
		 label(f->fmod, f->func, false, a, sizeof a), label(f->csmod, f->cs, true, b, sizeof b),
		 f->h);
	return buf;
}

struct entry {
	struct frame *f;           /* f[0] the entered function, then its callers */
	int n;                     /* frames kept (chain cut at non-test callers) */
	int nraw;                  /* frames in the file */
	char *canon;               /* one line naming every frame, for "same" */
};

struct gt {
	struct entry *e;
	size_t n, cap;
	int files;
	int failures;              /* bad_ret, bad_fp, overflow, format */
};

static void gt_fail(struct gt *g, const char *file, const char *what)
{
	fprintf(stderr, "gtcheck: %s: %s\n", file, what);
	g->failures++;
}

/* Parse one gt.*.txt file; frames keep raw callsites, functions resolved
 * later (test functions of every file must be known first). */
static void gt_parse(struct gt *g, const char *file)
{
	FILE *f = fopen(file, "r");
	char *line = NULL;
	size_t cap = 0;
	int local[64], nlocal = 0, self = -1, fp = -1;
	bool header = false, done = false;

	for (int i = 0; i < 64; i++)
		local[i] = -1;
	if (!f) {
		gt_fail(g, file, strerror(errno));
		return;
	}
	g->files++;
	while (getline(&line, &cap, f) > 0) {
		char *p = line, path[PATH_MAX];
		uint64_t v, n;
		int idx;
		line[strcspn(line, "\n")] = 0;
		if (!strcmp(line, "icpp-gt 1")) {
			header = true;
		} else if (sscanf(line, "fp %d", &fp) == 1 || !strncmp(line, "pid ", 4)) {
		} else if (sscanf(line, "m %d %4095[^\n]", &idx, path) == 2 && idx >= 0 && idx < 64) {
			local[idx] = mod_by_path(path);
			nlocal = idx + 1 > nlocal ? idx + 1 : nlocal;
		} else if (sscanf(line, "self %d", &idx) == 1 && idx >= 0 && idx < nlocal) {
			self = local[idx];
			mods[self].gt = true;
			mods[self].fp = fp == 1;
		} else if (sscanf(line, "f %" SCNx64, &v) == 1 && self >= 0) {
			uint64_t s = func_start(self, v);
			struct mod *m = &mods[self];
			if (s == UINT64_MAX) {
				gt_fail(g, file, "a test function is in no function of its module");
			} else if (!is_test(self, s)) {
				if (m->ntests == m->captests) {
					m->captests = m->captests ? 2 * m->captests : 64;
					m->tests = xrealloc(m->tests, m->captests * sizeof *m->tests);
				}
				m->tests[m->ntests++] = s;
			}
		} else if (sscanf(line, "bad_ret %" SCNu64, &n) == 1) {
			if (n)
				gt_fail(g, file, "*(CFA-8) was not the return address: CFA is not SP before the call");
			done = true;
		} else if (sscanf(line, "bad_fp %" SCNu64, &n) == 1) {
			if (n)
				gt_fail(g, file, "CFA != rbp + 16 in a frame-pointer build");
		} else if (sscanf(line, "overflow %" SCNu64, &n) == 1) {
			if (n)
				gt_fail(g, file, "the GT buffer overflowed: the program makes too many calls");
		} else if (line[0] == 'e' && line[1] == ' ' && self >= 0) {
			struct entry e = {0};
			int capf = 0, used;
			int64_t h;
			p = line + 2;
			if (sscanf(p, "%" SCNx64 "%n", &v, &used) != 1) {
				gt_fail(g, file, "bad entry line");
				continue;
			}
			p += used;
			uint64_t pc = v;
			for (;;) {
				if (sscanf(p, " %d %" SCNx64 " %" SCNd64 "%n", &idx, &v, &h, &used) != 3 ||
				    idx < -1 || idx >= nlocal) {
					gt_fail(g, file, "bad entry line");
					break;
				}
				p += used;
				if (e.nraw == capf) {
					capf = capf ? 2 * capf : 8;
					e.f = xrealloc(e.f, capf * sizeof *e.f);
				}
				e.f[e.nraw].csmod = idx < 0 ? -1 : local[idx];
				e.f[e.nraw].cs = v;
				e.f[e.nraw].h = h;
				e.f[e.nraw].fmod = self;
				e.f[e.nraw].func = pc;   /* frame 0: a PC, resolved below */
				e.nraw++;
				while (*p == ' ')
					p++;
				if (*p != ';')
					break;
				p++;
			}
			if (g->n == g->cap) {
				g->cap = g->cap ? 2 * g->cap : 256;
				g->e = xrealloc(g->e, g->cap * sizeof *g->e);
			}
			g->e[g->n++] = e;
		} else if (line[0]) {
			gt_fail(g, file, "unknown line");
		}
	}
	free(line);
	fclose(f);
	if (!header || self < 0 || !done)
		gt_fail(g, file, "incomplete GT file (the program did not finish writing it)");
}

/* Functions of every frame; cut chains at the first caller that is not a test
 * function of a frame-pointer module (its rbp need not be a frame pointer). */
static void gt_resolve(struct gt *g)
{
	for (size_t i = 0; i < g->n; i++) {
		struct entry *e = &g->e[i];
		e->f[0].func = func_start(e->f[0].fmod, e->f[0].func);
		e->n = 1;
		for (int k = 1; k < e->nraw; k++) {
			const struct frame *prev = &e->f[k - 1];
			int m = prev->csmod;
			uint64_t fn = func_start(m, prev->cs);
			if (m < 0 || !mods[m].fp || !is_test(m, fn) || !mods[prev->fmod].fp)
				break;
			e->f[k].fmod = m;
			e->f[k].func = fn;
			e->n = k + 1;
		}
		char buf[4096 * 4], fr[1400];
		size_t len = 0;
		buf[0] = 0;
		for (int k = 0; k < e->n && len < sizeof buf - 1; k++)
			len += snprintf(buf + len, sizeof buf - len, "%s%s", k ? "\n      < " : "",
					frame_str(&e->f[k], fr, sizeof fr));
		e->canon = xstrdup(buf);
	}
}

static void gt_load(struct gt *g, const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	memset(g, 0, sizeof *g);
	if (!d) {
		fprintf(stderr, "gtcheck: %s: %s\n", dir, strerror(errno));
		g->failures++;
		return;
	}
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);
		if (strncmp(de->d_name, "gt.", 3) || len < 4 || strcmp(de->d_name + len - 4, ".txt"))
			continue;
		char path[PATH_MAX];
		snprintf(path, sizeof path, "%s/%s", dir, de->d_name);
		gt_parse(g, path);
	}
	closedir(d);
	if (!g->files) {
		fprintf(stderr, "gtcheck: %s: no gt.*.txt files (was ICPP_GT set?)\n", dir);
		g->failures++;
	}
	gt_resolve(g);
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Distinct canonical lines of a GT set, sorted. */
static char **gt_lines(const struct gt *g, size_t *n)
{
	char **v = xrealloc(NULL, g->n * sizeof *v);
	size_t k = 0;
	for (size_t i = 0; i < g->n; i++)
		v[i] = g->e[i].canon;
	qsort(v, g->n, sizeof *v, str_cmp);
	for (size_t i = 0; i < g->n; i++)
		if (!k || strcmp(v[k - 1], v[i]))
			v[k++] = v[i];
	*n = k;
	return v;
}

/* Print what is in a and not in b (both sorted); returns how many. */
static size_t only_in(char **a, size_t na, char **b, size_t nb, const char *what)
{
	size_t shown = 0, j = 0;
	for (size_t i = 0; i < na; i++) {
		while (j < nb && strcmp(b[j], a[i]) < 0)
			j++;
		if (j < nb && !strcmp(b[j], a[i]))
			continue;
		if (shown++ < MAX_SHOWN)
			fprintf(stderr, "  %s: %s\n", what, a[i]);
	}
	if (shown > MAX_SHOWN)
		fprintf(stderr, "  ... and %zu more %s\n", shown - MAX_SHOWN, what);
	return shown;
}

static int cmd_same(const char *da, const char *db)
{
	struct gt a, b;
	size_t na, nb;
	gt_load(&a, da);
	gt_load(&b, db);
	check_failures += a.failures + b.failures;
	char **la = gt_lines(&a, &na), **lb = gt_lines(&b, &nb);
	fprintf(stderr, "gtcheck same: %zu distinct entries in %s (%d files), %zu in %s (%d files)\n",
		na, da, a.files, nb, db, b.files);
	size_t x = only_in(la, na, lb, nb, "only in first run"),
	       y = only_in(lb, nb, la, na, "only in second run");
	if (x || y)
		fprintf(stderr, "gtcheck same: the runs' ground truth differs (%zu + %zu entries): "
				"heights or paths moved\n", x, y);
	CHECK_EQ_INT(x + y, 0);
	CHECK(na > 0);
	return check_exit();
}

/* ---- the pathmap side ---- */

struct mapped {
	struct pathmap *pm;
	int *mod;                  /* pathmap module -> mods[] */
	struct frame *node;        /* last frame of every node */
	uint32_t *order;           /* node indices sorted by last frame */
};

static int load_map(struct mapped *mp, const char *file)
{
	char err[512];
	if (pm_read(file, &mp->pm, err, sizeof err)) {
		fprintf(stderr, "gtcheck: %s\n", err);
		return -1;
	}
	struct pathmap *pm = mp->pm;
	mp->mod = xrealloc(NULL, pm->nmodules * sizeof *mp->mod);
	for (uint32_t i = 0; i < pm->nmodules; i++)
		mp->mod[i] = mod_of_pm(&pm->modules[i]);
	mp->node = xrealloc(NULL, pm->nnodes * sizeof *mp->node);
	for (uint32_t i = 0; i < pm->nnodes; i++) {
		const struct pm_node *n = &pm->nodes[i];
		const struct pm_function *f = &pm->funcs[n->func];
		mp->node[i] = (struct frame){
			.fmod = mp->mod[f->module],
			.func = f->addr,
			.csmod = n->cs_module == PM_NONE ? -1 : mp->mod[n->cs_module],
			.cs = n->cs_addr,
			.h = n->height,
		};
	}
	return 0;
}

static const struct frame *sort_frames;
static int by_frame(const void *a, const void *b)
{
	return frame_cmp(&sort_frames[*(const uint32_t *)a], &sort_frames[*(const uint32_t *)b]);
}

static void index_map(struct mapped *mp)
{
	mp->order = xrealloc(NULL, mp->pm->nnodes * sizeof *mp->order);
	for (uint32_t i = 0; i < mp->pm->nnodes; i++)
		mp->order[i] = i;
	sort_frames = mp->node;
	qsort(mp->order, mp->pm->nnodes, sizeof *mp->order, by_frame);
}

/* The nodes whose last frame is f: [*lo, *hi) in mp->order. */
static void nodes_at(const struct mapped *mp, const struct frame *f, size_t *lo, size_t *hi)
{
	size_t a = 0, b = mp->pm->nnodes;
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (frame_cmp(&mp->node[mp->order[mid]], f) < 0)
			a = mid + 1;
		else
			b = mid;
	}
	*lo = a;
	while (b < mp->pm->nnodes && !frame_cmp(&mp->node[mp->order[b]], f))
		b++;
	*hi = b < a ? a : b;
}

/* Is f the frame of node but for its callsite, a call of node's function by
 * itself whose node is a sibling of node's (same parent, function and
 * height)?  Training records the callees of such a recursion's sibling
 * group under its first node only (docs/training.md). */
static bool recursion_sibling(const struct mapped *mp, uint32_t node, const struct frame *f)
{
	const struct frame *nf = &mp->node[node];
	uint32_t parent = mp->pm->nodes[node].parent;
	if (parent == PM_NONE || mp->pm->nodes[parent].func != mp->pm->nodes[node].func ||
	    f->fmod != nf->fmod || f->func != nf->func || f->h != nf->h)
		return false;
	size_t lo, hi;
	nodes_at(mp, f, &lo, &hi);
	for (; lo < hi; lo++)
		if (mp->pm->nodes[mp->order[lo]].parent == parent)
			return true;
	return false;
}

/* How many frames of e's chain node's path matches, from the last frame up. */
static int chain_match(const struct mapped *mp, uint32_t node, const struct entry *e)
{
	int k = 0;
	for (; k < e->n && node != PM_NONE; k++, node = mp->pm->nodes[node].parent)
		if (frame_cmp(&mp->node[node], &e->f[k]) &&
		    (k == 0 || !recursion_sibling(mp, node, &e->f[k])))
			break;
	return k;
}

static void print_node_path_of(const struct pathmap *pm, uint32_t node)
{
	fprintf(stderr, "      map path: ");
	pm_print_path(stderr, pm, node, " > ", PM_PRINT_CALLSITES, bin_demangle);
	fprintf(stderr, "\n");
}

static void print_node_path(const struct mapped *mp, uint32_t node)
{
	print_node_path_of(mp->pm, node);
}

/* (c) A recursion's sibling group keeps one subtree: how many groups
 * (parent, height) have two members with callees. */
static size_t split_groups(const struct pathmap *pm)
{
	bool *in_group = xrealloc(NULL, (pm->nnodes + 1) * sizeof(bool));
	bool *has_child = xrealloc(NULL, (pm->nnodes + 1) * sizeof(bool));
	uint32_t *with = xrealloc(NULL, (pm->nnodes + 1) * sizeof(uint32_t));
	CHECK(pm_sibling_groups(pm, in_group) == 0);
	memset(has_child, 0, pm->nnodes * sizeof(bool));
	for (uint32_t i = 0; i < pm->nnodes; i++)
		if (pm->nodes[i].parent != PM_NONE)
			has_child[pm->nodes[i].parent] = true;
	size_t n = 0, split = 0;
	for (uint32_t i = 0; i < pm->nnodes; i++)
		if (in_group[i] && has_child[i])
			with[n++] = i;
	for (size_t a = 0; a < n; a++)
		for (size_t b = a + 1; b < n; b++)
			if (pm->nodes[with[a]].parent == pm->nodes[with[b]].parent &&
			    pm->nodes[with[a]].height == pm->nodes[with[b]].height && split++ < MAX_SHOWN) {
				fprintf(stderr, "  (c) two subtrees in one sibling group:\n");
				print_node_path_of(pm, with[a]);
				print_node_path_of(pm, with[b]);
			}
	free(in_group);
	free(has_child);
	free(with);
	return split;
}

static int cmd_map(const char *mapfile, const char *dir)
{
	struct gt g;
	struct mapped mp = {0};
	char buf[1400];

	gt_load(&g, dir);
	check_failures += g.failures;
	if (load_map(&mp, mapfile))
		return 1;
	index_map(&mp);

	/* (a) every entry is a node's last frame; chains are suffixes. */
	size_t missing = 0, badchain = 0, chained = 0;
	for (size_t i = 0; i < g.n; i++) {
		const struct entry *e = &g.e[i];
		size_t lo, hi;
		nodes_at(&mp, &e->f[0], &lo, &hi);
		if (lo == hi) {
			if (missing++ < MAX_SHOWN)
				fprintf(stderr, "  (a) no node ends in %s\n", frame_str(&e->f[0], buf, sizeof buf));
			continue;
		}
		if (e->n < 2)
			continue;
		chained++;
		int best = 0;
		uint32_t best_node = mp.order[lo];
		for (size_t j = lo; j < hi && best < e->n; j++) {
			int k = chain_match(&mp, mp.order[j], e);
			if (k > best) {
				best = k;
				best_node = mp.order[j];
			}
		}
		if (best < e->n && badchain++ < MAX_SHOWN) {
			fprintf(stderr, "  (a) no node's path ends in this chain (%d of %d frames match):\n"
					"      %s\n", best, e->n, e->canon);
			print_node_path(&mp, best_node);
		}
	}
	if (missing > MAX_SHOWN || badchain > MAX_SHOWN)
		fprintf(stderr, "  ... %zu entries without a node, %zu chains not in the map\n",
			missing, badchain);

	/* (b) test-function nodes == GT entries, as triples. */
	size_t ngt = 0, nmap = 0, extra = 0;
	struct frame *gf = xrealloc(NULL, (g.n + 1) * sizeof *gf);
	for (size_t i = 0; i < g.n; i++)
		gf[ngt++] = g.e[i].f[0];
	qsort(gf, ngt, sizeof *gf, frame_cmp);
	size_t k = 0;
	for (size_t i = 0; i < ngt; i++)
		if (!k || frame_cmp(&gf[k - 1], &gf[i]))
			gf[k++] = gf[i];
	ngt = k;
	uint32_t last = PM_NONE;
	for (size_t j = 0; j < mp.pm->nnodes; j++) {
		uint32_t node = mp.order[j];
		const struct frame *f = &mp.node[node];
		if (!is_test(f->fmod, f->func))
			continue;
		if (last != PM_NONE && !frame_cmp(&mp.node[last], f))
			continue;   /* same triple, another path */
		last = node;
		nmap++;
		if (!bsearch(f, gf, ngt, sizeof *gf, frame_cmp) && extra++ < MAX_SHOWN) {
			fprintf(stderr, "  (b) extra in map: %s\n", frame_str(f, buf, sizeof buf));
			print_node_path(&mp, node);
		}
	}
	if (extra > MAX_SHOWN)
		fprintf(stderr, "  ... and %zu more extra nodes\n", extra - MAX_SHOWN);

	size_t split = split_groups(mp.pm);

	size_t ntests = 0;
	for (int m = 0; m < nmods; m++)
		ntests += mods[m].gt ? mods[m].ntests : 0;
	/* GT triples without a node are the entries (a) reports missing. */
	fprintf(stderr,
		"gtcheck map: %zu GT entries (%zu distinct triples, %zu with chains) from %d files, "
		"%zu test functions; map: %" PRIu32 " nodes, %zu test-function triples\n"
		"gtcheck map: %zu entries missing, %zu chains not suffixes, %zu extra triples, "
		"%zu sibling groups with two subtrees\n",
		g.n, ngt, chained, g.files, ntests, mp.pm->nnodes, nmap, missing, badchain, extra,
		split);
	CHECK_EQ_INT(split, 0);
	CHECK_EQ_INT(missing, 0);
	CHECK_EQ_INT(badchain, 0);
	CHECK_EQ_INT(extra, 0);
	CHECK(ngt > 0);
	pm_free(mp.pm);
	return check_exit();
}

static int cmd_real(const char *mapfile, long min_paths, char **names, int nnames)
{
	struct mapped mp = {0};
	struct pm_stats st;
	if (load_map(&mp, mapfile))
		return 1;
	struct pathmap *pm = mp.pm;
	CHECK_EQ_INT(pm_stats(pm, &st), 0);
	fprintf(stderr, "gtcheck real: %" PRIu32 " modules, %" PRIu32 " functions, %" PRIu64
		" nodes, %" PRIu64 " paths, %" PRIu64 " CIDs, %" PRIu64 " precise paths\n",
		pm->nmodules, pm->nfuncs, st.nodes, st.paths, st.cids, st.precise_paths);
	uint64_t *nodes_in = xrealloc(NULL, pm->nmodules * sizeof *nodes_in);
	memset(nodes_in, 0, pm->nmodules * sizeof *nodes_in);
	for (uint32_t i = 0; i < pm->nnodes; i++)
		nodes_in[pm->funcs[pm->nodes[i].func].module]++;
	for (uint32_t i = 0; i < pm->nmodules; i++) {
		const struct pm_module *m = &pm->modules[i];
		fprintf(stderr, "  coverage %-50s %6" PRIu32 " of %6" PRIu32 " functions hooked, %" PRIu64
			" nodes\n", m->path, m->functions_hooked, m->functions_found, nodes_in[i]);
	}
	CHECK((long)st.paths >= min_paths);
	for (int n = 0; n < nnames; n++) {
		bool found = false;
		for (uint32_t i = 0; i < pm->nmodules; i++) {
			const struct pm_module *m = &pm->modules[i];
			const char *file = strrchr(m->path, '/');
			if (!strstr(file ? file + 1 : m->path, names[n]))
				continue;
			found = true;
			if (!m->functions_found || !m->functions_hooked || !nodes_in[i])
				fprintf(stderr, "gtcheck real: %s: no coverage or no nodes\n", m->path);
			CHECK(m->functions_found > 0);
			CHECK(m->functions_hooked > 0);
			CHECK(nodes_in[i] > 0);
		}
		if (!found)
			fprintf(stderr, "gtcheck real: no module named like %s in the map\n", names[n]);
		CHECK(found);
	}
	free(nodes_in);
	pm_free(pm);
	return check_exit();
}

static int cmd_hooked(const char *mapfile, char **names, int nnames)
{
	char err[512];
	struct pathmap *pm;
	if (pm_read(mapfile, &pm, err, sizeof err)) {
		fprintf(stderr, "gtcheck: %s\n", err);
		return 1;
	}
	for (int n = 0; n < nnames; n++) {
		uint32_t nodes = 0;
		uint64_t entries = 0;
		for (uint32_t i = 0; i < pm->nnodes; i++) {
			const char *name = pm->funcs[pm->nodes[i].func].name;
			if (name && !strcmp(name, names[n])) {
				nodes++;
				entries += pm->nodes[i].entries;
			}
		}
		fprintf(stderr, "gtcheck hooked: %s: %" PRIu32 " nodes, %" PRIu64 " entries\n",
			names[n], nodes, entries);
		CHECK(entries > 0);
	}
	pm_free(pm);
	return check_exit();
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "same"))
		return cmd_same(argv[2], argv[3]);
	if (argc == 4 && !strcmp(argv[1], "map"))
		return cmd_map(argv[2], argv[3]);
	if (argc >= 4 && !strcmp(argv[1], "hooked"))
		return cmd_hooked(argv[2], argv + 3, argc - 3);
	if (argc >= 4 && !strcmp(argv[1], "real"))
		return cmd_real(argv[2], strtol(argv[3], NULL, 10), argv + 4, argc - 4);
	fprintf(stderr, "usage: gtcheck same DIR_A DIR_B\n"
			"       gtcheck map MAP DIR\n"
			"       gtcheck hooked MAP FUNCTION...\n"
			"       gtcheck real MAP MIN_PATHS MODULE...\n");
	return 2;
}
