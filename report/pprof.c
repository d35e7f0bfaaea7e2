/* pprof: profile.proto (report/profile.proto, compiled by protoc-c), gzip.
 *
 * Values: [samples/count], and [cpu/nanoseconds] for cpu-clock sampled at a
 * frequency.  Every location carries its function and line (has_functions),
 * addressed by ELF virtual address in its module's mapping.  Each sample has
 * the label cid = precise | ambiguous | missing; an ambiguous CID's samples
 * are split among its candidates by training entries (whole samples, largest
 * remainder per record) and its leaf function is named "... [ambiguous]". */
#include "report/report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>
#include <zlib.h>

#ifdef ICPP_HAVE_PROTOBUF_C
#include "profile.pb-c.h"
#include "util/grow.h"

typedef Perftools__Profiles__Profile Profile;
typedef Perftools__Profiles__ValueType ValueType;
typedef Perftools__Profiles__Sample Sample;
typedef Perftools__Profiles__Label Label;
typedef Perftools__Profiles__Mapping Mapping;
typedef Perftools__Profiles__Location Location;
typedef Perftools__Profiles__Line Line;
typedef Perftools__Profiles__Function Function;

struct kv {                         /* string -> id */
	char *key;
	uint64_t id;
	UT_hash_handle hh;
};

struct pp {
	struct rp_ctx *c;
	Profile prof;
	struct kv *strings, *funcs, *locs;
	uint32_t cap_str, cap_fn, cap_loc, cap_smp;
	Label lab_precise, lab_ambig, lab_missing;
	Label *lp_precise, *lp_ambig, *lp_missing;
	int oom;
};

/* arr, its n elements with room for one more (grow_array), or NULL. */
static void *room(void *arr, uint32_t *cap, size_t n, size_t elem)
{
	return grow_array(&arr, (uint64_t)n + 1, cap, elem) ? arr : NULL;
}

static int64_t str_id(struct pp *p, const char *s)
{
	struct kv *e;
	HASH_FIND_STR(p->strings, s, e);
	if (e)
		return (int64_t)e->id;
	char **t = room(p->prof.string_table, &p->cap_str, p->prof.n_string_table, sizeof(char *));
	e = calloc(1, sizeof(*e));
	char *copy = strdup(s);
	if (!t || !e || !copy) {
		free(e);
		free(copy);
		p->oom = 1;
		return 0;
	}
	p->prof.string_table = t;
	e->key = copy;
	e->id = p->prof.n_string_table;
	t[p->prof.n_string_table++] = copy;
	HASH_ADD_KEYPTR(hh, p->strings, e->key, strlen(e->key), e);
	return (int64_t)e->id;
}

static uint64_t map_id(struct pp *p, uint32_t pm_module)
{
	if (pm_module == PM_NONE || pm_module >= p->c->pm->nmodules)
		return 0;
	return (uint64_t)pm_module + 1;     /* mappings are created up front */
}

static uint64_t func_id(struct pp *p, const char *name, const char *system, const char *file)
{
	char key[1600];
	struct kv *e;
	snprintf(key, sizeof(key), "%s\x1f%s\x1f%s", name, system ? system : "", file ? file : "");
	HASH_FIND_STR(p->funcs, key, e);
	if (e)
		return e->id;
	Function **t = room(p->prof.function, &p->cap_fn, p->prof.n_function, sizeof(Function *));
	Function *f = malloc(sizeof(*f));
	e = calloc(1, sizeof(*e));
	if (!t || !f || !e || !(e->key = strdup(key))) {
		free(f);
		if (e)
			free(e->key);
		free(e);
		p->oom = 1;
		return 0;
	}
	p->prof.function = t;
	perftools__profiles__function__init(f);
	f->id = p->prof.n_function + 1;
	f->name = str_id(p, name);
	f->system_name = str_id(p, system ? system : name);
	f->filename = file ? str_id(p, file) : 0;
	t[p->prof.n_function++] = f;
	e->id = f->id;
	HASH_ADD_KEYPTR(hh, p->funcs, e->key, strlen(e->key), e);
	return f->id;
}

static uint64_t loc_id(struct pp *p, uint64_t mapping, uint64_t addr, uint64_t fn, int64_t line)
{
	char key[96];
	struct kv *e;
	snprintf(key, sizeof(key), "%" PRIu64 ":%" PRIx64 ":%" PRIu64 ":%" PRId64, mapping, addr, fn, line);
	HASH_FIND_STR(p->locs, key, e);
	if (e)
		return e->id;
	Location **t = room(p->prof.location, &p->cap_loc, p->prof.n_location, sizeof(Location *));
	Location *l = malloc(sizeof(*l));
	Line *ln = malloc(sizeof(*ln));
	Line **lines = malloc(sizeof(*lines));
	e = calloc(1, sizeof(*e));
	if (!t || !l || !ln || !lines || !e || !(e->key = strdup(key))) {
		free(l);
		free(ln);
		free(lines);
		if (e)
			free(e->key);
		free(e);
		p->oom = 1;
		return 0;
	}
	p->prof.location = t;
	perftools__profiles__location__init(l);
	perftools__profiles__line__init(ln);
	ln->function_id = fn;
	ln->line = line;
	lines[0] = ln;
	l->id = p->prof.n_location + 1;
	l->mapping_id = mapping;
	l->address = addr;
	l->n_line = 1;
	l->line = lines;
	t[p->prof.n_location++] = l;
	e->id = l->id;
	HASH_ADD_KEYPTR(hh, p->locs, e->key, strlen(e->key), e);
	return l->id;
}

/* Location of pathmap function func at addr (module pm_module). */
static uint64_t frame_loc(struct pp *p, uint32_t func, uint32_t pm_module, uint64_t addr, bool ambiguous)
{
	struct rp_ctx *c = p->c;
	char name[700];
	struct bin_symbol sym;
	const char *file = NULL;
	int line = 0;
	struct rp_module *rm = pm_module != PM_NONE ? rp_module_of_pm(c, pm_module) : NULL;
	if (rm && bin_symbolize(rm->bin, addr, &sym) >= -1 && sym.file) {
		file = sym.file;
		line = sym.line;
	}
	rp_func_label(c, func, name, 600);
	if (ambiguous)
		strcat(name, " [ambiguous]");
	const struct pm_function *f = &c->pm->funcs[func];
	uint64_t fn = func_id(p, name, f->name, file);
	return loc_id(p, map_id(p, pm_module), addr, fn, line);
}

static void add_sample(struct pp *p, uint64_t *locs, size_t n, uint64_t count, Label *label)
{
	const struct sf_meta *m = &p->c->ss->meta;
	Sample **t = room(p->prof.sample, &p->cap_smp, p->prof.n_sample, sizeof(Sample *));
	Sample *s = malloc(sizeof(*s));
	uint64_t *ids = malloc(n * sizeof(uint64_t));
	int64_t *vals = malloc(2 * sizeof(int64_t));
	Label **labs = malloc(sizeof(Label *));
	if (!t || !s || !ids || !vals || !labs) {
		free(s);
		free(ids);
		free(vals);
		free(labs);
		p->oom = 1;
		return;
	}
	p->prof.sample = t;
	perftools__profiles__sample__init(s);
	memcpy(ids, locs, n * sizeof(uint64_t));
	s->n_location_id = n;
	s->location_id = ids;
	vals[0] = (int64_t)count;
	vals[1] = (int64_t)count * p->prof.period;
	s->n_value = p->prof.n_sample_type;
	s->value = vals;
	labs[0] = label;
	s->n_label = 1;
	s->label = labs;
	t[p->prof.n_sample++] = s;
	(void)m;
}

static void free_kv(struct kv **h, bool free_keys)
{
	struct kv *e, *t;
	HASH_ITER(hh, *h, e, t) {
		HASH_DEL(*h, e);
		if (free_keys)
			free(e->key);
		free(e);
	}
}

static void free_profile(struct pp *p)
{
	Profile *f = &p->prof;
	for (size_t i = 0; i < f->n_sample; i++) {
		free(f->sample[i]->location_id);
		free(f->sample[i]->value);
		free(f->sample[i]->label);
		free(f->sample[i]);
	}
	for (size_t i = 0; i < f->n_location; i++) {
		free(f->location[i]->line[0]);
		free(f->location[i]->line);
		free(f->location[i]);
	}
	for (size_t i = 0; i < f->n_function; i++)
		free(f->function[i]);
	for (size_t i = 0; i < f->n_mapping; i++)
		free(f->mapping[i]);
	for (size_t i = 0; i < f->n_sample_type; i++)
		free(f->sample_type[i]);
	free(f->sample_type);
	free(f->period_type);
	free(f->sample);
	free(f->location);
	free(f->function);
	free(f->mapping);
	free(f->comment);
	free_kv(&p->strings, false);      /* keys are the string table's */
	for (size_t i = 0; i < f->n_string_table; i++)
		free(f->string_table[i]);
	free(f->string_table);
	free_kv(&p->funcs, true);
	free_kv(&p->locs, true);
}

static ValueType *value_type(struct pp *p, const char *type, const char *unit)
{
	ValueType *v = malloc(sizeof(*v));
	if (!v) {
		p->oom = 1;
		return NULL;
	}
	perftools__profiles__value_type__init(v);
	v->type = str_id(p, type);
	v->unit = str_id(p, unit);
	return v;
}

/* The profile's sample types, period, time and comments. */
static int build_header(struct pp *p)
{
	struct rp_ctx *c = p->c;
	const struct sf_meta *m = &c->ss->meta;
	Profile *f = &p->prof;
	char buf[1400];
	perftools__profiles__profile__init(f);
	str_id(p, "");
	bool cpu = !strcmp(m->event, "cpu-clock") && m->freq;
	f->sample_type = calloc(2, sizeof(ValueType *));
	if (!f->sample_type)
		return -1;
	f->sample_type[f->n_sample_type++] = value_type(p, "samples", "count");
	if (cpu) {
		f->sample_type[f->n_sample_type++] = value_type(p, "cpu", "nanoseconds");
		f->period_type = value_type(p, "cpu", "nanoseconds");
		f->period = (int64_t)(1000000000ull / m->freq);
	} else {
		f->period_type = value_type(p, m->event, "count");
		f->period = (int64_t)m->period;
	}
	f->time_nanos = (int64_t)m->start_ns;
	f->duration_nanos = (int64_t)(m->end_ns - m->start_ns);
	f->comment = malloc(2 * sizeof(int64_t));
	if (f->comment) {
		snprintf(buf, sizeof(buf), "icpp: %s; backend %s", m->command,
			 m->backend == SF_BACKEND_BPF ? "bpf" : "perf");
		f->comment[f->n_comment++] = str_id(p, buf);
		snprintf(buf, sizeof(buf), "icpp: ambiguous CIDs split among candidates by training "
			 "entries, leaf marked [ambiguous]; precise %" PRIu64 ", ambiguous %" PRIu64
			 ", missing %" PRIu64 " samples", c->n_status[RP_PRECISE],
			 c->n_status[RP_AMBIGUOUS], c->n_status[RP_MISSING]);
		f->comment[f->n_comment++] = str_id(p, buf);
	}
	return 0;
}

/* One mapping per pathmap module (ids = index + 1), and the labels. */
static int build_mappings(struct pp *p)
{
	const struct pathmap *pm = p->c->pm;
	Profile *f = &p->prof;
	f->mapping = calloc(pm->nmodules ? pm->nmodules : 1, sizeof(Mapping *));
	if (!f->mapping)
		return -1;
	for (uint32_t i = 0; i < pm->nmodules; i++) {
		const struct pm_module *pmm = &pm->modules[i];
		Mapping *mp = malloc(sizeof(*mp));
		if (!mp)
			return -1;
		perftools__profiles__mapping__init(mp);
		mp->id = i + 1;
		mp->memory_start = 0;
		mp->memory_limit = UINT64_MAX;
		mp->filename = str_id(p, pmm->path);
		char hex[2 * PM_BUILD_ID_MAX + 1] = "";
		for (uint32_t k = 0; k < pmm->build_id_len; k++)
			sprintf(hex + 2 * k, "%02x", pmm->build_id[k]);
		mp->build_id = str_id(p, hex);
		mp->has_functions = mp->has_filenames = mp->has_line_numbers = 1;
		f->mapping[f->n_mapping++] = mp;
	}
	perftools__profiles__label__init(&p->lab_precise);
	perftools__profiles__label__init(&p->lab_ambig);
	perftools__profiles__label__init(&p->lab_missing);
	p->lab_precise.key = p->lab_ambig.key = p->lab_missing.key = str_id(p, "cid");
	p->lab_precise.str = str_id(p, "precise");
	p->lab_ambig.str = str_id(p, "ambiguous");
	p->lab_missing.str = str_id(p, "missing");
	return 0;
}

/* A sample's count split into whole samples per candidate by its shares:
 * each the floor, then the largest remainders one more. */
static void apportion(const struct rp_sample *s, uint64_t count, uint64_t *whole)
{
	uint64_t given = 0;
	for (uint32_t k = 0; k < s->ncand; k++) {
		whole[k] = (uint64_t)floor((double)count * s->share[k] + 1e-9);
		given += whole[k];
	}
	while (given < count) {
		uint32_t best = 0;
		double bf = -1;
		for (uint32_t k = 0; k < s->ncand; k++) {
			double fr = (double)count * s->share[k] - (double)whole[k];
			if (fr > bf) {
				bf = fr;
				best = k;
			}
		}
		whole[best]++;
		given++;
	}
}

/* Room for a path of depth frames in chain and locs. */
struct path_buf {
	uint32_t *chain;
	uint64_t *locs;
	uint32_t cap;
};

static bool path_room(struct path_buf *b, uint32_t depth)
{
	if (depth <= b->cap)
		return true;
	uint32_t *ch = realloc(b->chain, depth * sizeof(uint32_t));
	if (ch)
		b->chain = ch;
	uint64_t *lc = realloc(b->locs, depth * sizeof(uint64_t));
	if (lc)
		b->locs = lc;
	if (!ch || !lc)
		return false;
	b->cap = depth;
	return true;
}

/* Candidate path `node` of sample s as a pprof sample of n: the leaf at
 * the sampled IP, each other frame where it called the next. */
static int add_candidate(struct pp *p, const struct rp_sample *s, uint32_t node, uint64_t n,
			 struct path_buf *b)
{
	const struct pathmap *pm = p->c->pm;
	uint32_t depth = pm_depth(pm, node);
	if (!path_room(b, depth))
		return -1;
	pm_path_nodes(pm, node, b->chain, depth);
	for (uint32_t d = 0; d < depth; d++) {
		const struct pm_node *nd = &pm->nodes[b->chain[d]];
		uint32_t module;
		uint64_t addr;
		if (d + 1 == depth) {   /* the leaf: the sampled IP */
			module = s->mod->pm_module;
			addr = s->vaddr;
		} else {                /* where it called the next frame */
			const struct pm_node *callee = &pm->nodes[b->chain[d + 1]];
			module = callee->cs_module;
			addr = callee->cs_addr;
			if (module == PM_NONE) {
				module = pm->funcs[nd->func].module;
				addr = pm->funcs[nd->func].addr;
			}
		}
		b->locs[depth - 1 - d] = frame_loc(p, nd->func, module, addr,
						   d + 1 == depth && s->status == RP_AMBIGUOUS);
	}
	add_sample(p, b->locs, depth, n, s->status == RP_PRECISE ? &p->lab_precise : &p->lab_ambig);
	return 0;
}

/* A sample whose CID no path has: one frame, named by why. */
static void add_missing(struct pp *p, const struct rp_sample *s, uint64_t *locs)
{
	char lab[700], buf[1400];
	rp_missing_label(p->c, s, lab, sizeof(lab));
	snprintf(buf, sizeof(buf), "[missing: %s] %s", rp_missing_names[s->why], lab);
	uint64_t fn = func_id(p, buf, NULL, NULL);
	locs[0] = loc_id(p, 0, s->vaddr, fn, 0);
	add_sample(p, locs, 1, s->rec->count, &p->lab_missing);
}

static int build(struct pp *p)
{
	struct rp_ctx *c = p->c;
	if (build_header(p) < 0 || build_mappings(p) < 0)
		return -1;
	struct path_buf b = {malloc(256 * sizeof(uint32_t)), malloc(256 * sizeof(uint64_t)), 256};
	uint64_t *whole = NULL;
	int rc = -1;
	if (!b.chain || !b.locs)
		goto out;
	for (uint32_t i = 0; i < c->ss->nrecs && !p->oom; i++) {
		const struct rp_sample *s = &c->samples[i];
		if (s->status == RP_MISSING) {
			add_missing(p, s, b.locs);
			continue;
		}
		free(whole);
		whole = calloc(s->ncand, sizeof(uint64_t));
		if (!whole)
			goto out;
		apportion(s, s->rec->count, whole);
		for (uint32_t k = 0; k < s->ncand; k++)
			if (whole[k] && add_candidate(p, s, s->cand[k], whole[k], &b) < 0)
				goto out;
	}
	rc = p->oom ? -1 : 0;
out:
	free(whole);
	free(b.chain);
	free(b.locs);
	return rc;
}

int rp_pprof(struct rp_ctx *c, FILE *out, char *err, size_t errlen)
{
	struct pp p;
	memset(&p, 0, sizeof(p));
	p.c = c;
	int rc = -1;
	uint8_t *raw = NULL, *gz = NULL;
	if (build(&p)) {
		snprintf(err, errlen, "out of memory building the profile");
		goto out;
	}
	size_t len = perftools__profiles__profile__get_packed_size(&p.prof);
	raw = malloc(len ? len : 1);
	uLong gzcap = compressBound((uLong)len) + 64;
	gz = malloc(gzcap);
	if (!raw || !gz) {
		snprintf(err, errlen, "out of memory packing the profile");
		goto out;
	}
	perftools__profiles__profile__pack(&p.prof, raw);
	/* gzip, as pprof expects on disk */
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		snprintf(err, errlen, "cannot start gzip");
		goto out;
	}
	z.next_in = raw;
	z.avail_in = (uInt)len;
	z.next_out = gz;
	z.avail_out = (uInt)gzcap;
	int zr = deflate(&z, Z_FINISH);
	size_t gzlen = z.total_out;
	deflateEnd(&z);
	if (zr != Z_STREAM_END) {
		snprintf(err, errlen, "gzip failed");
		goto out;
	}
	if (fwrite(gz, 1, gzlen, out) != gzlen) {
		snprintf(err, errlen, "cannot write the profile");
		goto out;
	}
	rc = 0;
out:
	free(raw);
	free(gz);
	free_profile(&p);
	return rc;
}

#else /* no libprotobuf-c */

int rp_pprof(struct rp_ctx *c, FILE *out, char *err, size_t errlen)
{
	snprintf(err, errlen, "this icpp was built without libprotobuf-c: install libprotobuf-c-dev "
		 "and protobuf-c-compiler (scripts/install-deps.sh) and build again");
	return -1;
}

#endif
