/* report: load, normalise every sample to a CID, look it up, dispatch. */
#include "report/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include <uthash.h>

#include "util/fileio.h"

const char *const rp_missing_names[RP_M_NR] = {
	[RP_M_NONE] = "",
	[RP_M_CID] = "CID not in the pathmap",
	[RP_M_FUNCTION] = "function not in the pathmap",
	[RP_M_MODULE] = "module not in the pathmap",
	[RP_M_NO_MAPPING] = "IP in no recorded module",
	[RP_M_NO_SYMBOL] = "no function at the IP",
	[RP_M_NO_CFI] = "no CFA rule at the IP",
	[RP_M_NO_FP] = "CFA is BP+16 but BP was not on the stack",
	[RP_M_NO_BASE] = "thread base unknown",
	[RP_M_OFF_STACK] = "SP off the thread's stack",
	[RP_M_ELSEWHERE] = "the CID's paths run through modules the process did not map",
};

const char *rp_base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s && s[1] ? s + 1 : p;
}

const char *rp_func_label(struct rp_ctx *c, uint32_t func, char *buf, size_t len)
{
	return pm_profile_label(c->pm, func, bin_demangle, buf, len);
}

struct rp_module *rp_module_of_pm(struct rp_ctx *c, uint32_t pm_module)
{
	for (uint32_t i = 0; i < c->nmods; i++)
		if (c->mods[i].pm_module == pm_module && c->mods[i].bin)
			return &c->mods[i];
	return NULL;
}

void rp_missing_label(struct rp_ctx *c, const struct rp_sample *s, char *buf, size_t len)
{
	char name[600];
	if (!s->mod) {
		snprintf(buf, len, "[unknown] 0x%" PRIx64, s->rec->ip);
		return;
	}
	const char *mod = rp_base_name(s->mod->path);
	if (s->fn && s->fn->name)
		snprintf(buf, len, "%s (%s)", bin_demangle(s->fn->name, name, sizeof(name)), mod);
	else if (s->fn)
		snprintf(buf, len, "%s+0x%" PRIx64, mod, s->fn->addr);
	else
		snprintf(buf, len, "%s+0x%" PRIx64, mod, s->vaddr);
}

/* ---- modules ---- */

static uint32_t pm_module_for(struct pathmap *pm, const char *path, const uint8_t *bid, uint32_t len)
{
	if (len)
		return pm_module_by_build_id(pm, bid, len);
	for (uint32_t i = 0; i < pm->nmodules; i++)
		if (!pm->modules[i].build_id_len && !strcmp(pm->modules[i].path, path))
			return i;
	return PM_NONE;
}

static int open_modules(struct rp_ctx *c, char *err, size_t errlen)
{
	struct sample_set *ss = c->ss;
	c->mods = calloc(ss->nmods ? ss->nmods : 1, sizeof(*c->mods));
	c->sf_mod = calloc(ss->nmods ? ss->nmods : 1, sizeof(uint32_t));
	if (!c->mods || !c->sf_mod) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < ss->nmods; i++) {
		const struct sf_module *m = &ss->mods[i];
		uint32_t j;
		for (j = 0; j < c->nmods; j++)
			if (!strcmp(c->mods[j].path, m->path) && c->mods[j].build_id_len == m->build_id_len &&
			    !memcmp(c->mods[j].build_id, m->build_id, m->build_id_len))
				break;
		c->sf_mod[i] = j;
		if (j < c->nmods)
			continue;
		struct rp_module *rm = &c->mods[c->nmods++];
		rm->path = strdup(m->path);
		memcpy(rm->build_id, m->build_id, m->build_id_len);
		rm->build_id_len = m->build_id_len;
		rm->pm_module = pm_module_for(c->pm, m->path, m->build_id, m->build_id_len);
		char e[512];
		rm->bin = bin_open(m->path, e, sizeof(e));
		if (!rm->bin) {
			fprintf(stderr, "icpp report: warning: %s; its samples are reported as missing\n", e);
			continue;
		}
		const uint8_t *id;
		size_t n = bin_build_id(rm->bin, &id);
		if (m->build_id_len && (n != m->build_id_len || memcmp(id, m->build_id, n))) {
			fprintf(stderr, "icpp report: warning: %s changed since it was recorded (other "
				"build-id); its samples are reported as missing\n", m->path);
			bin_close(rm->bin);
			rm->bin = NULL;
		}
	}
	return 0;
}

static uint64_t module_bit(uint32_t pm_module)
{
	return 1ULL << (pm_module % 64);
}

/* c->path_mods and c->procs (struct rp_ctx). */
static int module_masks(struct rp_ctx *c)
{
	const struct pathmap *pm = c->pm;
	c->path_mods = malloc((pm->nnodes ? pm->nnodes : 1) * sizeof(uint64_t));
	c->procs = calloc(c->ss->nmods ? c->ss->nmods : 1, sizeof(*c->procs));
	if (!c->path_mods || !c->procs)
		return -1;
	for (uint32_t i = 0; i < pm->nnodes; i++) {
		const struct pm_node *x = &pm->nodes[i];
		uint64_t m = module_bit(pm->funcs[x->func].module);
		if (x->cs_module != PM_NONE)
			m |= module_bit(x->cs_module);
		c->path_mods[i] = m | (x->parent == PM_NONE ? 0 : c->path_mods[x->parent]);
	}
	for (uint32_t i = 0; i < c->ss->nmods; i++) {
		uint32_t tgid = c->ss->mods[i].tgid, pmm = c->mods[c->sf_mod[i]].pm_module, p;
		for (p = 0; p < c->nprocs && c->procs[p].tgid != tgid; p++)
			;
		if (p == c->nprocs)
			c->procs[c->nprocs++].tgid = tgid;
		if (pmm != PM_NONE)
			c->procs[p].mods |= module_bit(pmm);
	}
	return 0;
}

/* The nodes of s's process's paths among nodes[0, n), into *kept
 * (malloc'd); their number, or -1 when out of memory. */
static ssize_t same_process(struct rp_ctx *c, const struct rp_sample *s, const uint32_t *nodes,
			    size_t n, uint32_t **kept)
{
	uint64_t mapped = 0;
	for (uint32_t p = 0; p < c->nprocs; p++)
		if (c->procs[p].tgid == s->rec->tgid)
			mapped = c->procs[p].mods;
	if (!(*kept = malloc(n * sizeof(uint32_t))))
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (!(c->path_mods[nodes[i]] & ~mapped))
			(*kept)[k++] = nodes[i];
	return (ssize_t)k;
}

/* ---- resolution ---- */

/* The function and CFA rule at an IP, cached: records share IPs (one per
 * height and flags), and libdw's CFI lookup is the dearest step. */
struct ip_info {
	struct { struct rp_module *mod; uint64_t vaddr; } key;
	const struct bin_function *fn;
	int cfa_rc;
	struct bin_cfa rule;
	UT_hash_handle hh;
};
static struct ip_info *ip_cache;

static struct ip_info *ip_lookup(struct rp_module *mod, uint64_t vaddr)
{
	struct ip_info k, *e;
	memset(&k, 0, sizeof(k));
	k.key.mod = mod;
	k.key.vaddr = vaddr;
	HASH_FIND(hh, ip_cache, &k.key, sizeof(k.key), e);
	if (e)
		return e;
	e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->key = k.key;
	e->fn = bin_function_at(mod->bin, vaddr);
	e->cfa_rc = e->fn ? bin_cfa_at(mod->bin, vaddr, &e->rule) : -1;
	HASH_ADD(hh, ip_cache, key, sizeof(e->key), e);
	return e;
}

static void ip_cache_free(void)
{
	struct ip_info *e, *t;
	HASH_ITER(hh, ip_cache, e, t) {
		HASH_DEL(ip_cache, e);
		free(e);
	}
}

int rp_locate(struct rp_ctx *c, uint32_t tgid, uint64_t addr, struct rp_location *loc)
{
	memset(loc, 0, sizeof(*loc));
	loc->cfa_rc = -1;
	const struct sf_module *m = sf_module_at(c->ss, tgid, addr);
	if (!m)
		return -1;
	loc->mod = &c->mods[c->sf_mod[m - c->ss->mods]];
	loc->vaddr = addr - m->bias;
	if (!loc->mod->bin || !m->bias_known)
		return 0;
	struct ip_info *ii = ip_lookup(loc->mod, loc->vaddr);
	if (ii) {
		loc->fn = ii->fn;
		loc->rule = ii->rule;
		loc->cfa_rc = ii->cfa_rc;
	}
	return 0;
}

/* Append nodes[0, k) to *all (malloc'd, *n of them); -1 when out of memory. */
static int append_nodes(uint32_t **all, size_t *n, const uint32_t *nodes, size_t k)
{
	uint32_t *a = realloc(*all, (*n + k) * sizeof(uint32_t));
	if (!a)
		return -1;
	memcpy(a + *n, nodes, k * sizeof(uint32_t));
	*all = a;
	*n += k;
	return 0;
}

/* The nodes at the sample's CID (function, height), joined by those at
 * (j, height) for every function j that jumps into the inside of the
 * sample's function (jumps.c): its frame runs that code.  A join is
 * malloc'd into *joined.  -1 when out of memory. */
static int cid_nodes(struct rp_ctx *c, struct rp_sample *s, const uint32_t **nodes, size_t *n,
		     uint32_t **joined)
{
	size_t nj, k;
	*nodes = NULL;
	*n = 0;
	if (s->func != PM_NONE)
		*nodes = pm_lookup(c->pm, s->func, s->height, n);
	const uint64_t *jumpers = rp_jumpers_into(c, s->mod, s->fn->addr, &nj);
	for (size_t i = 0; i < nj; i++) {
		uint32_t jf = pm_function_at(c->pm, s->mod->pm_module, jumpers[i]);
		const uint32_t *more = jf == PM_NONE ? NULL : pm_lookup(c->pm, jf, s->height, &k);
		if (!more || !k)
			continue;
		size_t copied = 0;
		if (!*joined && *n && append_nodes(joined, &copied, *nodes, *n) < 0)
			return -1;
		if (append_nodes(joined, n, more, k) < 0)
			return -1;
		*nodes = *joined;
	}
	return 0;
}

/* A sample in a trampoline of icpp rewrite (__icpp_wrap_SITE, for the call
 * at SITE: rewriter.h section 1) is that call still going on, in the
 * caller's frame: the trampoline's CFA is the caller's SP at the call, so
 * the caller's CFA is it plus the caller's offset at SITE (or BP + 16).
 * Moves s to the caller (function, CFA rule, height); false when s is in no
 * trampoline or the caller cannot be placed. */
static bool wrap_caller(struct rp_ctx *c, struct rp_sample *s)
{
	static const char prefix[] = "__icpp_wrap_";
	const char *name = s->fn->name;
	char *end;
	if (!name || strncmp(name, prefix, sizeof(prefix) - 1))
		return false;
	uint64_t site = strtoull(name + sizeof(prefix) - 1, &end, 16);
	const struct bin_function *caller = bin_function_at(s->mod->bin, site);
	struct bin_cfa rule;
	if (*end || !caller || bin_cfa_at(s->mod->bin, site, &rule))
		return false;
	int64_t height;
	if (rule.reg == BIN_CFA_RSP)
		height = s->height - rule.offset;
	else if (s->rec->flags & SF_R_BP_VALID)
		height = s->rec->bp_off - rule.offset;
	else
		return false;
	uint32_t func = pm_function_at(c->pm, s->mod->pm_module, caller->addr);
	if (func == PM_NONE)
		return false;
	s->fn = caller;
	s->rule = rule;
	s->height = height;
	s->func = func;
	s->vaddr = site;
	return true;
}

/* A sample in the entry code icpp rewrite wrote for a function (its
 * dispatch to clones, its entry wrapper; entry.c): the nodes of that
 * function's frame and of the clones' whose frame it may be in, into
 * *joined (malloc'd, *n), with s->func the function's.  The function jumps
 * into that code, but a sample there is not simply in its frame at its
 * height (jumps.c): a test may hand the frame to a clone, and a wrapper
 * runs the body deeper.  1 when s is in such code, 0 when not, -1 when out
 * of memory. */
static int entry_nodes(struct rp_ctx *c, struct rp_sample *s, uint32_t **joined, size_t *n)
{
	struct rp_entry_frames ef;
	if (rp_entry_frames(s->mod, s->fn, s->vaddr, &ef) < 0)
		return 0;
	s->func = pm_function_at(c->pm, s->mod->pm_module, ef.func);
	for (uint32_t i = 0; i <= ef.nclones; i++) {
		uint32_t g = pm_function_at(c->pm, s->mod->pm_module, i ? ef.clones[i - 1] : ef.func);
		size_t k;
		const uint32_t *more = g == PM_NONE ? NULL
			: pm_lookup(c->pm, g, s->height + (i ? 0 : ef.func_extra), &k);
		if (more && k && append_nodes(joined, n, more, k) < 0)
			return -1;
	}
	return 1;
}

static int resolve(struct rp_ctx *c, const struct sf_record *r, struct rp_sample *s)
{
	struct rp_location loc;
	memset(s, 0, sizeof(*s));
	s->rec = r;
	s->func = PM_NONE;
	s->status = RP_MISSING;

	if (rp_locate(c, r->tgid, r->ip, &loc)) {
		s->why = RP_M_NO_MAPPING;
		return 0;
	}
	s->mod = loc.mod;
	s->vaddr = loc.vaddr;
	s->fn = loc.fn;
	s->rule = loc.rule;
	if (!s->fn) {
		s->why = RP_M_NO_SYMBOL;
		return 0;
	}
	if (r->flags & SF_R_NO_BASE) {
		s->why = RP_M_NO_BASE;
		return 0;
	}
	if (r->flags & SF_R_SP_OUTSIDE) {
		s->why = RP_M_OFF_STACK;
		return 0;
	}
	if (loc.cfa_rc) {
		s->why = RP_M_NO_CFI;
		return 0;
	}
	if (s->rule.reg == BIN_CFA_RSP) {
		s->height = r->sp_off - s->rule.offset;
	} else if (r->flags & SF_R_BP_VALID) {
		s->height = r->bp_off - s->rule.offset;
	} else {
		s->why = RP_M_NO_FP;
		return 0;
	}
	if (s->mod->pm_module == PM_NONE) {
		s->why = RP_M_MODULE;
		return 0;
	}
	/* a tagged call's stub runs in its caller's frame, with the caller's
	 * CFI row: the caller's sample at its call; a bound call's thunk
	 * with the entry CFA of the clone it jumps to: the clone's sample at
	 * its entry */
	uint64_t site;
	const struct bin_function *caller = bin_stub_caller(s->mod->bin, s->fn, &site),
				  *callee = caller ? NULL : bin_thunk_callee(s->mod->bin, s->fn);
	if (caller) {
		s->fn = caller;
		s->vaddr = site;
	} else if (callee) {
		s->fn = callee;
		s->vaddr = callee->addr;
	}
	s->func = pm_function_at(c->pm, s->mod->pm_module, s->fn->addr);
	size_t n = 0;
	uint32_t *joined = NULL;
	const uint32_t *nodes, *via_plt;
	int in_entry = entry_nodes(c, s, &joined, &n);
	nodes = joined;
	if (in_entry < 0 || (!in_entry && cid_nodes(c, s, &nodes, &n, &joined) < 0)) {
		free(joined);
		return -1;
	}
	if (!n && (via_plt = rp_plt_lookup(c, s->mod, s->vaddr, s->height, &n)))
		nodes = via_plt;
	if (!n && s->func == PM_NONE && wrap_caller(c, s))
		nodes = pm_lookup(c->pm, s->func, s->height, &n);
	if (n && s->func == PM_NONE)
		s->func = c->pm->nodes[nodes[0]].func;
	if (!n) {
		bool plt = bin_call_stub(s->mod->bin, s->vaddr, NULL, NULL);
		s->why = s->func == PM_NONE && !plt ? RP_M_FUNCTION : RP_M_CID;
		free(joined);
		return 0;
	}
	uint32_t *kept;
	ssize_t nk = same_process(c, s, nodes, n, &kept);
	free(joined);
	if (nk < 0)
		return -1;
	if (!nk) {
		s->why = RP_M_ELSEWHERE;
		free(kept);
		return 0;
	}
	nodes = joined = kept;
	n = (size_t)nk;
	/* One candidate per function sequence, weighted by training entries. */
	s->cand = malloc(n * sizeof(uint32_t));
	s->share = calloc(n, sizeof(double));
	if (!s->cand || !s->share) {
		free(joined);
		return -1;
	}
	double total = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t id = c->path_id[nodes[i]], k;
		for (k = 0; k < s->ncand; k++)
			if (c->path_id[s->cand[k]] == id)
				break;
		if (k == s->ncand)
			s->cand[s->ncand++] = nodes[i];
		s->share[k] += (double)c->pm->nodes[nodes[i]].entries;
		total += (double)c->pm->nodes[nodes[i]].entries;
	}
	free(joined);
	for (uint32_t k = 0; k < s->ncand; k++)
		s->share[k] = total > 0 ? s->share[k] / total : 1.0 / s->ncand;
	s->status = RP_PRECISE;
	for (uint32_t k = 1; k < s->ncand; k++)
		if (c->profile_id[s->cand[k]] != c->profile_id[s->cand[0]])
			s->status = RP_AMBIGUOUS;
	return 0;
}

/* ---- stacks for flame graphs ---- */

void rp_for_each_stack(struct rp_ctx *c, rp_stack_cb cb, void *ctx)
{
	uint32_t cap = 256;
	uint32_t *chain = malloc(cap * sizeof(uint32_t));
	char **labels = malloc((cap + 2) * sizeof(char *));
	char *store = malloc((size_t)(cap + 2) * 600);
	if (!chain || !labels || !store)
		goto out;
	for (uint32_t i = 0; i < c->ss->nrecs; i++) {
		const struct rp_sample *s = &c->samples[i];
		double count = (double)s->rec->count;
		if (s->status == RP_MISSING) {
			snprintf(store, 600, "[missing: %s]", rp_missing_names[s->why]);
			rp_missing_label(c, s, store + 600, 600);
			labels[0] = store;
			labels[1] = store + 600;
			cb(ctx, (const char *const *)labels, 2, count, RP_MISSING);
			continue;
		}
		for (uint32_t k = 0; k < s->ncand; k++) {
			uint32_t depth = pm_depth(c->pm, s->cand[k]);
			if (depth > cap) {
				uint32_t nc = depth;
				uint32_t *ch = realloc(chain, nc * sizeof(uint32_t));
				char **lb = realloc(labels, (nc + 2) * sizeof(char *));
				char *st = realloc(store, (size_t)(nc + 2) * 600);
				if (ch)
					chain = ch;
				if (lb)
					labels = lb;
				if (st)
					store = st;
				if (!ch || !lb || !st)
					goto out;
				cap = nc;
			}
			pm_path_nodes(c->pm, s->cand[k], chain, depth);
			for (uint32_t d = 0; d < depth; d++) {
				char *b = store + (size_t)d * 600;
				rp_func_label(c, c->pm->nodes[chain[d]].func, b, 560);
				if (d + 1 == depth && s->status == RP_AMBIGUOUS)
					strcat(b, " [ambiguous]");
				labels[d] = b;
			}
			cb(ctx, (const char *const *)labels, depth, count * s->share[k], s->status);
		}
	}
out:
	free(chain);
	free(labels);
	free(store);
}

/* ---- run ---- */

static void ctx_free(struct rp_ctx *c)
{
	ip_cache_free();
	rp_plt_free(c);
	rp_jumps_free(c);
	if (c->samples)
		for (uint32_t i = 0; i < c->ss->nrecs; i++) {
			free(c->samples[i].cand);
			free(c->samples[i].share);
		}
	free(c->samples);
	for (uint32_t i = 0; i < c->nmods; i++) {
		free(c->mods[i].path);
		if (c->mods[i].bin)
			bin_close(c->mods[i].bin);
	}
	free(c->mods);
	free(c->sf_mod);
	free(c->path_id);
	free(c->profile_id);
	free(c->path_mods);
	free(c->procs);
	pm_free(c->pm);
	sf_free(c->ss);
}

/* Read the samples and the pathmap of o and resolve every record. */
static int ctx_open(struct rp_ctx *c, const struct rp_opts *o, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	c->o = o;
	if (sf_read(o->samples ? o->samples : "icpp.samples", &c->ss, err, errlen))
		return -1;
	if (pm_read(o->pathmap, &c->pm, err, errlen))
		return -1;
	if (o->validate && !(c->ss->meta.flags & SF_M_VALIDATE)) {
		snprintf(err, errlen, "%s was recorded without --validate: record again with "
			 "'icpp record --validate'", o->samples ? o->samples : "icpp.samples");
		return -1;
	}
	uint32_t nprofile;
	c->path_id = malloc((c->pm->nnodes ? c->pm->nnodes : 1) * sizeof(uint32_t));
	c->profile_id = malloc((c->pm->nnodes ? c->pm->nnodes : 1) * sizeof(uint32_t));
	if (!c->path_id || !c->profile_id || pm_path_ids(c->pm, c->path_id, &c->npaths) ||
	    pm_profile_path_ids(c->pm, c->profile_id, &nprofile)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (open_modules(c, err, errlen))
		return -1;
	if (module_masks(c)) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	c->samples = calloc(c->ss->nrecs ? c->ss->nrecs : 1, sizeof(*c->samples));
	if (!c->samples) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (uint32_t i = 0; i < c->ss->nrecs; i++) {
		struct rp_sample *s = &c->samples[i];
		if (resolve(c, &c->ss->recs[i], s)) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		c->total += s->rec->count;
		c->n_status[s->status] += s->rec->count;
		c->n_missing[s->why] += s->rec->count;
	}
	return 0;
}

int rp_node_samples(const char *samples, const char *pathmap, double **w, uint64_t counts[3],
		    char *err, size_t errlen)
{
	struct rp_opts o = {.samples = samples, .pathmap = pathmap};
	struct rp_ctx c;
	int rc = -1;
	*w = NULL;
	if (ctx_open(&c, &o, err, errlen))
		goto out;
	*w = calloc(c.pm->nnodes ? c.pm->nnodes : 1, sizeof(**w));
	if (!*w) {
		snprintf(err, errlen, "out of memory");
		goto out;
	}
	for (uint32_t i = 0; i < c.ss->nrecs; i++) {
		const struct rp_sample *s = &c.samples[i];
		for (uint32_t k = 0; k < s->ncand; k++)
			(*w)[s->cand[k]] += (double)s->rec->count * s->share[k];
	}
	memcpy(counts, c.n_status, sizeof(c.n_status));
	rc = 0;
out:
	ctx_free(&c);
	return rc;
}

int rp_run(const struct rp_opts *o, char *err, size_t errlen)
{
	struct rp_ctx c;
	int rc = -1;

	if (ctx_open(&c, o, err, errlen))
		goto out;

	struct atomic_file af;
	FILE *out = stdout;
	const char *path = o->output;
	if (!path && o->format == RP_PPROF)
		path = "profile.pb.gz";
	if (path && strcmp(path, "-")) {
		if (af_open(&af, path, 0644, err, errlen))
			goto out;
		out = af.f;
	} else {
		path = NULL;
	}
	int frc = 0;
	char ferr[512] = "";
	switch (o->format) {
	case RP_TEXT:
		frc = rp_text(&c, out);
		if (!frc && o->validate) {
			struct rp_validation v;
			frc = rp_validate(&c, &v, out);
		}
		break;
	case RP_FOLDED: frc = rp_folded(&c, out); break;
	case RP_SVG: frc = rp_svg(&c, out); break;
	case RP_PPROF: frc = rp_pprof(&c, out, ferr, sizeof(ferr)); break;
	}
	if (frc == 0 && o->validate && o->format != RP_TEXT) {
		/* the comparison goes to stderr beside a machine-readable output */
		struct rp_validation v;
		frc = rp_validate(&c, &v, stderr);
	}
	if (frc) {
		snprintf(err, errlen, "%s", ferr[0] ? ferr : "cannot write the report");
		if (path)
			af_abort(&af);
		goto out;
	}
	if (path) {
		if (af_commit(&af, err, errlen))
			goto out;
	} else if (fflush(stdout)) {
		snprintf(err, errlen, "cannot write the report: %s", strerror(errno));
		goto out;
	}
	rc = 0;
out:
	ctx_free(&c);
	return rc;
}
