/* pathmap.c: building a pathmap (with dedup), merging, validating, freeing. */
#include "pathmap/pathmap_int.h"
#include "util/grow.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---- slab allocator for hash entries ---------------------------------- */

void *pm_slab_alloc(struct pm_slab **slab, size_t size)
{
	size = (size + 15) & ~(size_t)15;
	struct pm_slab *s = *slab;
	if (!s || s->used + size > s->cap) {
		size_t cap = s ? s->cap * 2 : 4096;
		if (cap > (1u << 22))
			cap = 1u << 22;
		if (cap < size)
			cap = size;
		struct pm_slab *n = malloc(sizeof(*n) + cap);
		if (!n)
			return NULL;
		n->next = s;
		n->used = 0;
		n->cap = cap;
		*slab = s = n;
	}
	void *p = s->data + s->used;
	s->used += size;
	return p;
}

void pm_slab_free(struct pm_slab *slab)
{
	while (slab) {
		struct pm_slab *next = slab->next;
		free(slab);
		slab = next;
	}
}

/* ---- dedup tables ------------------------------------------------------ */

struct pm_mod_ent {
	uint32_t index;
	UT_hash_handle hh;
	size_t keylen;
	unsigned char key[];         /* path, NUL, build-id */
};

struct pm_node_ent {
	struct pm_node_key key;
	uint32_t index;
	UT_hash_handle hh;
};

struct pm_intern {
	struct pm_mod_ent *mods;
	struct pm_func_ent *funcs;
	struct pm_node_ent *nodes;
	uint32_t nnodes;             /* nodes[0, nnodes) are in `nodes`; those
	                              * pm_append_node added since, not yet */
	struct pm_slab *slab;        /* funcs and nodes entries */
};

void pm_intern_free(struct pm_intern *in)
{
	if (!in)
		return;
	struct pm_mod_ent *m, *tmp;
	HASH_ITER(hh, in->mods, m, tmp) {
		HASH_DEL(in->mods, m);
		free(m);
	}
	HASH_CLEAR(hh, in->funcs);
	HASH_CLEAR(hh, in->nodes);
	pm_slab_free(in->slab);
	free(in);
}

static struct pm_mod_ent *mod_ent_new(const char *path, const uint8_t *id, uint32_t idlen)
{
	size_t plen = strlen(path);
	struct pm_mod_ent *e = malloc(sizeof(*e) + plen + 1 + idlen);
	if (!e)
		return NULL;
	e->keylen = plen + 1 + idlen;
	memcpy(e->key, path, plen + 1);
	if (idlen)
		memcpy(e->key + plen + 1, id, idlen);
	return e;
}

static bool intern_module(struct pm_intern *in, struct pm_mod_ent *e, uint32_t index)
{
	e->index = index;
	unsigned before = HASH_COUNT(in->mods);
	HASH_ADD_KEYPTR(hh, in->mods, e->key, e->keylen, e);
	return HASH_COUNT(in->mods) == before + 1;
}

static bool intern_func(struct pm_intern *in, uint32_t module, uint64_t addr, uint32_t index)
{
	struct pm_func_ent *e = pm_slab_alloc(&in->slab, sizeof(*e));
	if (!e)
		return false;
	e->key = pm_make_func_key(module, addr);
	e->index = index;
	return PM_HADD(in->funcs, key, e);
}

static bool intern_node(struct pm_intern *in, const struct pm_node *n, uint32_t index)
{
	struct pm_node_ent *e = pm_slab_alloc(&in->slab, sizeof(*e));
	if (!e)
		return false;
	e->key = pm_make_node_key(n);
	e->index = index;
	return PM_HADD(in->nodes, key, e);
}

/* The dedup tables, built from the arrays on first use. */
static struct pm_intern *intern_get(struct pathmap *pm)
{
	if (pm->intern)
		return pm->intern;
	struct pm_intern *in = calloc(1, sizeof(*in));
	if (!in)
		return NULL;
	for (uint32_t i = 0; i < pm->nmodules; i++) {
		const struct pm_module *m = &pm->modules[i];
		struct pm_mod_ent *e = mod_ent_new(m->path, m->build_id, m->build_id_len);
		if (!e || !intern_module(in, e, i)) {
			free(e);
			goto fail;
		}
	}
	for (uint32_t i = 0; i < pm->nfuncs; i++)
		if (!intern_func(in, pm->funcs[i].module, pm->funcs[i].addr, i))
			goto fail;
	pm->intern = in;
	return in;
fail:
	pm_intern_free(in);
	return NULL;
}

/* The node table, with the nodes appended since it was last used. */
static struct pm_intern *intern_nodes(struct pathmap *pm)
{
	struct pm_intern *in = intern_get(pm);
	if (!in)
		return NULL;
	for (; in->nnodes < pm->nnodes; in->nnodes++)
		if (!intern_node(in, &pm->nodes[in->nnodes], in->nnodes))
			return NULL;
	return in;
}

/* ---- life cycle -------------------------------------------------------- */

struct pathmap *pm_new(void)
{
	return calloc(1, sizeof(struct pathmap));
}

void pm_free(struct pathmap *pm)
{
	if (!pm)
		return;
	for (uint32_t i = 0; i < pm->nmodules; i++)
		free(pm->modules[i].path);
	for (uint32_t i = 0; i < pm->nfuncs; i++)
		free(pm->funcs[i].name);
	free(pm->modules);
	free(pm->funcs);
	free(pm->nodes);
	pm_intern_free(pm->intern);
	pm_index_free(pm->index);
	free(pm->source);
	free(pm);
}

static void invalidate_index(struct pathmap *pm)
{
	pm_index_free(pm->index);
	pm->index = NULL;
}

/* ---- building ---------------------------------------------------------- */

uint32_t pm_add_module(struct pathmap *pm, const char *path, const uint8_t *build_id,
		       uint32_t build_id_len)
{
	if (!path || !*path || build_id_len > PM_BUILD_ID_MAX || (build_id_len && !build_id))
		return PM_NONE;
	struct pm_intern *in = intern_get(pm);
	if (!in)
		return PM_NONE;
	struct pm_mod_ent *e = mod_ent_new(path, build_id, build_id_len), *found;
	if (!e)
		return PM_NONE;
	HASH_FIND(hh, in->mods, e->key, e->keylen, found);
	if (found) {
		free(e);
		return found->index;
	}
	if (!grow_array((void **)&pm->modules, pm->nmodules + 1ull, &pm->cap_modules,
			sizeof(*pm->modules))) {
		free(e);
		return PM_NONE;
	}
	uint32_t idx = pm->nmodules;
	struct pm_module *m = &pm->modules[idx];
	memset(m, 0, sizeof(*m));
	if (!(m->path = strdup(path)) || !intern_module(in, e, idx)) {
		free(m->path);
		free(e);
		return PM_NONE;
	}
	if (build_id_len)
		memcpy(m->build_id, build_id, build_id_len);
	m->build_id_len = build_id_len;
	pm->nmodules++;
	invalidate_index(pm);
	return idx;
}

uint32_t pm_add_function(struct pathmap *pm, uint32_t module, uint64_t addr, uint64_t size,
			 const char *name)
{
	if (module >= pm->nmodules || addr + size < addr)
		return PM_NONE;
	struct pm_intern *in = intern_get(pm);
	if (!in)
		return PM_NONE;
	struct pm_func_key key = pm_make_func_key(module, addr);
	struct pm_func_ent *found;
	HASH_FIND(hh, in->funcs, &key, sizeof(key), found);
	if (found) {
		struct pm_function *f = &pm->funcs[found->index];
		if (!f->size)
			f->size = size;
		if (!f->name && name && !(f->name = strdup(name)))
			return PM_NONE;
		return found->index;
	}
	if (!grow_array((void **)&pm->funcs, pm->nfuncs + 1ull, &pm->cap_funcs, sizeof(*pm->funcs)))
		return PM_NONE;
	uint32_t idx = pm->nfuncs;
	struct pm_function *f = &pm->funcs[idx];
	f->module = module;
	f->addr = addr;
	f->size = size;
	f->name = NULL;
	if ((name && !(f->name = strdup(name))) || !intern_func(in, module, addr, idx)) {
		free(f->name);
		return PM_NONE;
	}
	pm->nfuncs++;
	invalidate_index(pm);
	return idx;
}

uint32_t pm_add_node(struct pathmap *pm, uint32_t parent, uint32_t func, uint32_t cs_module,
		     uint64_t cs_addr, int64_t height, uint64_t entries)
{
	if ((parent != PM_NONE && parent >= pm->nnodes) || func >= pm->nfuncs ||
	    (cs_module != PM_NONE && cs_module >= pm->nmodules))
		return PM_NONE;
	struct pm_intern *in = intern_nodes(pm);
	if (!in)
		return PM_NONE;
	struct pm_node n = {.parent = parent, .func = func, .cs_module = cs_module,
			    .cs_addr = cs_module == PM_NONE ? 0 : cs_addr, .height = height,
			    .entries = entries};
	struct pm_node_key key = pm_make_node_key(&n);
	struct pm_node_ent *found;
	HASH_FIND(hh, in->nodes, &key, sizeof(key), found);
	if (found) {
		struct pm_node *old = &pm->nodes[found->index];
		old->entries = pm_sat_add(old->entries, entries);
		return found->index;
	}
	if (!grow_array((void **)&pm->nodes, pm->nnodes + 1ull, &pm->cap_nodes, sizeof(*pm->nodes)))
		return PM_NONE;
	uint32_t idx = pm->nnodes;
	pm->nodes[idx] = n;
	if (!intern_node(in, &n, idx))
		return PM_NONE;
	pm->nnodes++;
	in->nnodes++;
	invalidate_index(pm);
	return idx;
}

uint32_t pm_append_node(struct pathmap *pm, uint32_t parent, uint32_t func, uint32_t cs_module,
			uint64_t cs_addr, int64_t height, uint64_t entries)
{
	if ((parent != PM_NONE && parent >= pm->nnodes) || func >= pm->nfuncs ||
	    (cs_module != PM_NONE && cs_module >= pm->nmodules))
		return PM_NONE;
	if (!grow_array((void **)&pm->nodes, pm->nnodes + 1ull, &pm->cap_nodes, sizeof(*pm->nodes)))
		return PM_NONE;
	pm->nodes[pm->nnodes] = (struct pm_node){.parent = parent, .func = func,
						 .cs_module = cs_module,
						 .cs_addr = cs_module == PM_NONE ? 0 : cs_addr,
						 .height = height, .entries = entries};
	invalidate_index(pm);
	return pm->nnodes++;
}

/* ---- merging ----------------------------------------------------------- */

static void hex(char *out, size_t outlen, const uint8_t *id, uint32_t len)
{
	if (!len) {
		snprintf(out, outlen, "none");
		return;
	}
	size_t o = 0;
	for (uint32_t i = 0; i < len && o + 3 <= outlen; i++)
		o += (size_t)snprintf(out + o, outlen - o, "%02x", id[i]);
}

static bool same_build(const struct pm_module *a, const struct pm_module *b)
{
	return a->build_id_len == b->build_id_len &&
	       !memcmp(a->build_id, b->build_id, a->build_id_len);
}

/* -1 and the refusal when a module path of src is in dst only with other
 * build-ids. */
static int check_builds(const struct pathmap *dst, const struct pathmap *src, char *err,
			size_t errlen)
{
	for (uint32_t i = 0; i < src->nmodules; i++) {
		const struct pm_module *s = &src->modules[i], *other = NULL;
		bool match = false;
		for (uint32_t j = 0; j < dst->nmodules && !match; j++) {
			const struct pm_module *d = &dst->modules[j];
			if (strcmp(d->path, s->path))
				continue;
			if (same_build(d, s))
				match = true;
			else if (!other)
				other = d;
		}
		if (match || !other)
			continue;
		/* "trained on" names the map that came from a file; "now" the other. */
		const struct pathmap *old = dst->source || !src->source ? dst : src;
		const struct pm_module *was = old == dst ? other : s, *now = old == dst ? s : other;
		char a[2 * PM_BUILD_ID_MAX + 1], b[2 * PM_BUILD_ID_MAX + 1];
		hex(a, sizeof(a), was->build_id, was->build_id_len);
		hex(b, sizeof(b), now->build_id, now->build_id_len);
		snprintf(err, errlen,
			 "pathmap %s was trained on a different build of %s (build-id %s, now %s): "
			 "train again without --append",
			 old->source ? old->source : "(in memory)", s->path, a, b);
		return -1;
	}
	return 0;
}

int pm_merge(struct pathmap *dst, const struct pathmap *src, char *err, size_t errlen)
{
	if (dst == src) {
		snprintf(err, errlen, "cannot merge a pathmap into itself");
		return -1;
	}
	char why[256];
	if (pm_validate(src, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "cannot merge an inconsistent pathmap: %s", why);
		return -1;
	}
	if (check_builds(dst, src, err, errlen) < 0)
		return -1;
	uint32_t *mmap = malloc(((size_t)src->nmodules + 1) * sizeof(*mmap));
	uint32_t *fmap = malloc(((size_t)src->nfuncs + 1) * sizeof(*fmap));
	uint32_t *nmap = malloc(((size_t)src->nnodes + 1) * sizeof(*nmap));
	int rc = -1;
	if (!mmap || !fmap || !nmap)
		goto out;
	for (uint32_t i = 0; i < src->nmodules; i++) {
		const struct pm_module *s = &src->modules[i];
		if ((mmap[i] = pm_add_module(dst, s->path, s->build_id, s->build_id_len)) == PM_NONE)
			goto out;
		struct pm_module *d = &dst->modules[mmap[i]];
		if (s->functions_found > d->functions_found)
			d->functions_found = s->functions_found;
		if (s->functions_hooked > d->functions_hooked)
			d->functions_hooked = s->functions_hooked;
	}
	for (uint32_t i = 0; i < src->nfuncs; i++) {
		const struct pm_function *f = &src->funcs[i];
		fmap[i] = pm_add_function(dst, mmap[f->module], f->addr, f->size, f->name);
		if (fmap[i] == PM_NONE)
			goto out;
	}
	for (uint32_t i = 0; i < src->nnodes; i++) {
		const struct pm_node *n = &src->nodes[i];
		uint32_t parent = n->parent == PM_NONE ? PM_NONE : nmap[n->parent];
		uint32_t csm = n->cs_module == PM_NONE ? PM_NONE : mmap[n->cs_module];
		if ((nmap[i] = pm_add_node(dst, parent, fmap[n->func], csm, n->cs_addr, n->height,
					   n->entries)) == PM_NONE)
			goto out;
	}
	rc = 0;
out:
	if (rc)
		snprintf(err, errlen, "out of memory while merging pathmaps");
	free(mmap);
	free(fmap);
	free(nmap);
	return rc;
}

/* ---- paths ------------------------------------------------------------- */

bool pm_fragment_frame(const struct pathmap *pm, uint32_t node)
{
	const struct pm_node *x = &pm->nodes[node];
	return x->cs_module == PM_NONE && x->parent != PM_NONE &&
	       pm->nodes[x->parent].height == x->height;
}

struct self_call {
	uint32_t parent, cs_module, node;
	int64_t height;
	uint64_t cs_addr;
};

/* Self-calls by (parent, height), then callsite. */
static int by_group(const void *a, const void *b)
{
	const struct self_call *x = a, *y = b;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->height != y->height)
		return x->height < y->height ? -1 : 1;
	if (x->cs_module != y->cs_module)
		return x->cs_module < y->cs_module ? -1 : 1;
	return x->cs_addr < y->cs_addr ? -1 : x->cs_addr > y->cs_addr;
}

int pm_sibling_groups(const struct pathmap *pm, bool *in_group)
{
	struct self_call *v = malloc((pm->nnodes + 1) * sizeof(*v));
	uint32_t n = 0;
	if (!v)
		return -1;
	for (uint32_t i = 0; i < pm->nnodes; i++) {
		const struct pm_node *x = &pm->nodes[i];
		in_group[i] = false;
		if (x->parent != PM_NONE && x->cs_module != PM_NONE &&
		    pm->nodes[x->parent].func == x->func)
			v[n++] = (struct self_call){x->parent, x->cs_module, i, x->height, x->cs_addr};
	}
	qsort(v, n, sizeof(*v), by_group);
	for (uint32_t a = 0, b; a < n; a = b) {
		for (b = a + 1; b < n && v[b].parent == v[a].parent && v[b].height == v[a].height; b++)
			;
		if (v[b - 1].cs_module != v[a].cs_module || v[b - 1].cs_addr != v[a].cs_addr)
			for (uint32_t k = a; k < b; k++)
				in_group[v[k].node] = true;
	}
	free(v);
	return 0;
}

uint32_t pm_depth(const struct pathmap *pm, uint32_t node)
{
	uint32_t d = 0;
	/* parent < self bounds the walk; the counter guards unvalidated maps. */
	while (node < pm->nnodes && d < pm->nnodes) {
		d++;
		uint32_t p = pm->nodes[node].parent;
		if (p != PM_NONE && p >= node)
			break;
		node = p;
	}
	return d;
}

uint32_t pm_path_nodes(const struct pathmap *pm, uint32_t node, uint32_t *out, uint32_t max)
{
	uint32_t depth = pm_depth(pm, node);
	/* Frame k from the root is depth-1-k steps above node. */
	for (uint32_t k = depth; k-- > 0;) {
		if (k < max)
			out[k] = node;
		node = pm->nodes[node].parent;
	}
	return depth;
}

/* ---- validation -------------------------------------------------------- */

static int cmp_module(const void *a, const void *b, void *ctx)
{
	const struct pm_module *m = ctx, *x = &m[*(const uint32_t *)a], *y = &m[*(const uint32_t *)b];
	int c = strcmp(x->path, y->path);
	if (c)
		return c;
	if (x->build_id_len != y->build_id_len)
		return x->build_id_len < y->build_id_len ? -1 : 1;
	return memcmp(x->build_id, y->build_id, x->build_id_len);
}

#define CMP_FIELD(x, y, f)                                                     \
	do {                                                                   \
		if ((x)->f != (y)->f)                                          \
			return (x)->f < (y)->f ? -1 : 1;                       \
	} while (0)

static int cmp_func(const void *a, const void *b, void *ctx)
{
	const struct pm_function *f = ctx, *x = &f[*(const uint32_t *)a], *y = &f[*(const uint32_t *)b];
	CMP_FIELD(x, y, module);
	CMP_FIELD(x, y, addr);
	return 0;
}

static int cmp_node(const void *a, const void *b, void *ctx)
{
	const struct pm_node *n = ctx, *x = &n[*(const uint32_t *)a], *y = &n[*(const uint32_t *)b];
	CMP_FIELD(x, y, parent);
	CMP_FIELD(x, y, func);
	CMP_FIELD(x, y, cs_module);
	CMP_FIELD(x, y, cs_addr);
	CMP_FIELD(x, y, height);
	return 0;
}

/* The first pair of equal elements under cmp: -1 none, -2 out of memory,
 * otherwise the larger index of the pair (*other gets the smaller). */
static int64_t find_duplicate(uint32_t n, int (*cmp)(const void *, const void *, void *),
			      void *ctx, uint32_t *other)
{
	if (n < 2)
		return -1;
	uint32_t *perm = malloc((size_t)n * sizeof(*perm));
	if (!perm)
		return -2;
	for (uint32_t i = 0; i < n; i++)
		perm[i] = i;
	qsort_r(perm, n, sizeof(*perm), cmp, ctx);
	int64_t dup = -1;
	for (uint32_t i = 1; i < n; i++) {
		if (cmp(&perm[i - 1], &perm[i], ctx))
			continue;
		uint32_t lo = perm[i - 1] < perm[i] ? perm[i - 1] : perm[i];
		uint32_t hi = perm[i - 1] ^ perm[i] ^ lo;
		if (dup < 0 || hi < dup) {
			dup = hi;
			*other = lo;
		}
	}
	free(perm);
	return dup;
}

int pm_validate(const struct pathmap *pm, char *err, size_t errlen)
{
	if (pm->nmodules >= PM_NONE || pm->nfuncs >= PM_NONE || pm->nnodes >= PM_NONE) {
		snprintf(err, errlen, "too many entries (at most %" PRIu32 " of each)", PM_NONE - 1);
		return -1;
	}
	for (uint32_t i = 0; i < pm->nmodules; i++) {
		const struct pm_module *m = &pm->modules[i];
		if (!m->path || !*m->path) {
			snprintf(err, errlen, "module %" PRIu32 " has no path", i);
			return -1;
		}
		if (m->build_id_len > PM_BUILD_ID_MAX) {
			snprintf(err, errlen, "module %" PRIu32 " has a build-id of %" PRIu32
				 " bytes (at most %d)", i, m->build_id_len, PM_BUILD_ID_MAX);
			return -1;
		}
		if (m->functions_hooked > m->functions_found) {
			snprintf(err, errlen, "module %" PRIu32 " has %" PRIu32 " functions hooked "
				 "of %" PRIu32 " found", i, m->functions_hooked, m->functions_found);
			return -1;
		}
	}
	for (uint32_t i = 0; i < pm->nfuncs; i++) {
		const struct pm_function *f = &pm->funcs[i];
		if (f->module >= pm->nmodules) {
			snprintf(err, errlen, "function %" PRIu32 " has module %" PRIu32 " of %" PRIu32,
				 i, f->module, pm->nmodules);
			return -1;
		}
		if (f->addr + f->size < f->addr) {
			snprintf(err, errlen, "function %" PRIu32 " at 0x%" PRIx64 " has size 0x%" PRIx64
				 " past the end of the address space", i, f->addr, f->size);
			return -1;
		}
	}
	for (uint32_t i = 0; i < pm->nnodes; i++) {
		const struct pm_node *n = &pm->nodes[i];
		if (n->parent != PM_NONE && n->parent >= i) {
			snprintf(err, errlen, "node %" PRIu32 " has parent %" PRIu32
				 " (must be below its own index)", i, n->parent);
			return -1;
		}
		if (n->func >= pm->nfuncs) {
			snprintf(err, errlen, "node %" PRIu32 " has function %" PRIu32 " of %" PRIu32,
				 i, n->func, pm->nfuncs);
			return -1;
		}
		if (n->cs_module == PM_NONE ? n->cs_addr != 0 : n->cs_module >= pm->nmodules) {
			snprintf(err, errlen, "node %" PRIu32 " has callsite module %" PRIu32
				 " of %" PRIu32 " (address 0x%" PRIx64 ")", i, n->cs_module,
				 pm->nmodules, n->cs_addr);
			return -1;
		}
	}
	static const struct {
		const char *what;
		int (*cmp)(const void *, const void *, void *);
	} dups[] = {{"module", cmp_module}, {"function", cmp_func}, {"node", cmp_node}};
	void *arrays[] = {pm->modules, pm->funcs, pm->nodes};
	uint32_t counts[] = {pm->nmodules, pm->nfuncs, pm->nnodes};
	for (int k = 0; k < 3; k++) {
		uint32_t other = 0;
		int64_t d = find_duplicate(counts[k], dups[k].cmp, arrays[k], &other);
		if (d == -2) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		if (d >= 0) {
			snprintf(err, errlen, "%s %" PRId64 " duplicates %s %" PRIu32, dups[k].what, d,
				 dups[k].what, other);
			return -1;
		}
	}
	return 0;
}
