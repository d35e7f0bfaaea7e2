/* The plan file, format 1 (docs/plan-format.md): line-oriented text, written
 * atomically, every line validated on reading. */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "disambig/from_pathmap.h"
#include "disambig/internal.h"
#include "disambig/pm_index.h"
#include "util/fileio.h"

#define PLAN_MAGIC "icpp-plan"
#define PLAN_VERSION 1

static void hex(FILE *f, const uint8_t *id, uint32_t len)
{
	if (!len) {
		fputc('-', f);
		return;
	}
	for (uint32_t i = 0; i < len; i++)
		fprintf(f, "%02x", id[i]);
}

static const char *unit_name(uint32_t u)
{
	return u == DA_UNIT_CALLSITES ? "callsites" : "functions";
}

int da_plan_write(const char *path, const struct pathmap *pm, const struct da_pm_plan *plan,
		  char *err, size_t errlen)
{
	struct atomic_file af;
	if (af_open(&af, path, 0644, err, errlen) < 0)
		return -1;
	FILE *f = af.f;
	const struct da_pm_summary *s = &plan->summary;
	fprintf(f, "%s %d\n", PLAN_MAGIC, PLAN_VERSION);
	fprintf(f, "# written by icpp plan; see docs/plan-format.md\n");
	fprintf(f, "unit %s\n", unit_name(s->unit));
	fprintf(f, "seed %" PRIu64 "\n", s->seed);
	fprintf(f, "paths %" PRIu64 "\n", s->paths);
	fprintf(f, "precise-paths %" PRIu64 " %" PRIu64 "\n", s->precise_before, s->precise_after);
	fprintf(f, "weight %" PRIu64 "\n", s->weight);
	fprintf(f, "precise-weight %" PRIu64 " %" PRIu64 "\n", s->precise_weight_before,
		s->precise_weight_after);
	fprintf(f, "growth %.6f %" PRId64 "\n", s->max_growth, s->max_growth_bytes);
	fprintf(f, "code-bytes %" PRIu64 "\n", s->code_bytes);
	for (int l = 1; l < DA_LEFT_N; l++)
		for (int d = 0; d < 4; d++)
			if (s->left_by[l][d])
				fprintf(f, "left %s %s %" PRIu64 "\n", da_left_name(l), da_diff_name(d),
					s->left_by[l][d]);
	/* the modules the plan touches, numbered in the file */
	uint32_t *fileno = malloc((pm->nmodules + 1) * sizeof(*fileno)), nm = 0;
	if (!fileno) {
		af_abort(&af);
		return errmsg(err, errlen, "out of memory");
	}
	for (uint32_t m = 0; m < pm->nmodules; m++)
		fileno[m] = DA_NONE;
#define USE(m)                                                                                \
	do {                                                                                  \
		uint32_t m_ = (m);                                                            \
		if (m_ < pm->nmodules && fileno[m_] == DA_NONE) {                             \
			fileno[m_] = nm++;                                                    \
			fprintf(f, "module %u ", fileno[m_]);                                 \
			hex(f, pm->modules[m_].build_id, pm->modules[m_].build_id_len);       \
			fprintf(f, " %s\n", pm->modules[m_].path);                            \
		}                                                                             \
	} while (0)
	for (uint32_t i = 0; i < plan->npads; i++)
		USE(pm->funcs[plan->pads[i].func].module);
	for (uint32_t i = 0; i < plan->nwraps; i++)
		USE(plan->wraps[i].module);
	for (uint32_t i = 0; i < plan->nclones; i++) {
		USE(pm->funcs[plan->clones[i].func].module);
		USE(plan->clones[i].cs_module);
	}
	for (uint32_t i = 0; i < plan->nclone_wraps; i++)
		USE(plan->clone_wraps[i].module);
#undef USE
	uint64_t records = 0;
	for (uint32_t i = 0; i < plan->npads; i++, records++) {
		const struct pm_function *fn = &pm->funcs[plan->pads[i].func];
		fprintf(f, "pad %u 0x%" PRIx64 " %u %s\n", fileno[fn->module], fn->addr,
			plan->pads[i].bytes, fn->name && *fn->name ? fn->name : "-");
	}
	for (uint32_t i = 0; i < plan->nwraps; i++, records++)
		fprintf(f, "wrap %u 0x%" PRIx64 " %u\n", fileno[plan->wraps[i].module],
			plan->wraps[i].addr, plan->wraps[i].bytes);
	for (uint32_t i = 0; i < plan->nclones; i++, records++) {
		const struct da_pm_clone *c = &plan->clones[i];
		const struct pm_function *fn = &pm->funcs[c->func];
		fprintf(f, "clone %u %u 0x%" PRIx64 " %u 0x%" PRIx64 " %u", i, fileno[fn->module],
			fn->addr, fileno[c->cs_module], c->cs_addr, c->pad);
		if (c->parent != DA_NONE)
			fprintf(f, " in %u", c->parent);
		if (c->promote)
			fputs(" promote", f);
		if (c->tail)            /* of another module: by its check too */
			fputs(" tail", f);
		else if (c->xcall)
			fputs(" xcall", f);
		fputc('\n', f);
	}
	for (uint32_t i = 0; i < plan->nclone_wraps; i++, records++) {
		const struct da_pm_clone_wrap *w = &plan->clone_wraps[i];
		fprintf(f, "clone-wrap %u %u 0x%" PRIx64 " %u\n", w->clone, fileno[w->module], w->addr,
			w->bytes);
	}
	fprintf(f, "end %" PRIu64 "\n", records);
	free(fileno);
	if (ferror(f)) {
		af_abort(&af);
		return errmsg(err, errlen, "%s: write error", path);
	}
	return af_commit(&af, err, errlen);
}

/* ---------------------------------------------------------------- reading */

/* A plan being read: where in the text, and what its lines gave so far. */
struct reader {
	const char *name;
	const char *p, *end;
	uint32_t line;
	char *err;
	size_t errlen;
	const struct pathmap *pm;
	struct pm_index ix;
	struct da_pm_plan *plan;
	uint32_t modmap[4096], nmod;    /* file module -> pathmap module */
	uint64_t records;               /* pad, wrap, clone and clone-wrap lines */
	bool ended, have_unit;
};

static int bad(struct reader *r, const char *what)
{
	return errmsg(r->err, r->errlen, "%s: line %u: %s", r->name, r->line, what);
}

/* Next whitespace-separated word of the current line into buf. */
static bool word(const char **s, const char *eol, char *buf, size_t len)
{
	while (*s < eol && (**s == ' ' || **s == '\t'))
		(*s)++;
	size_t n = 0;
	while (*s < eol && **s != ' ' && **s != '\t') {
		if (n + 1 >= len)
			return false;
		buf[n++] = *(*s)++;
	}
	buf[n] = 0;
	return n > 0;
}

/* A number as the format writes it: decimal digits, or hexadecimal digits
 * after 0x for addresses (a leading 0 is not octal: "0020" is 20). */
static bool parse_u64(const char *w, uint64_t *v, uint64_t max, int base)
{
	const char *digits = base == 10 ? "0123456789" : "0123456789abcdefABCDEF";
	if (!*w || w[strspn(w, digits)])
		return false;
	errno = 0;
	unsigned long long x = strtoull(w, NULL, base);
	if (errno || x > max)
		return false;
	*v = x;
	return true;
}

static bool num(const char *w, uint64_t *v, uint64_t max)
{
	return parse_u64(w, v, max, 10);
}

static bool hex_addr(const char *w, uint64_t *v, uint64_t max)
{
	return w[0] == '0' && w[1] == 'x' && parse_u64(w + 2, v, max, 16);
}

static bool amount(const char *w, uint32_t *v)
{
	uint64_t x;
	if (!num(w, &x, DA_MAX_STEPS * DA_ALIGN) || x % DA_ALIGN)
		return false;
	*v = (uint32_t)x;
	return true;
}

/* A ratio: finite, from 0 to 1e9 (the writer prints it with 6 decimals,
 * which must fit a field). */
static bool ratio(const char *w, double *v)
{
	char *e;
	errno = 0;
	*v = strtod(w, &e);
	return *w && !*e && !errno && isfinite(*v) && *v >= 0 && *v <= 1e9;
}

static bool sint(const char *w, int64_t *v)
{
	char *e;
	errno = 0;
	long long x = strtoll(w, &e, 10);
	*v = x;
	return *w && !*e && !errno;
}

static int grow_arr(void **a, uint32_t n, size_t elem)
{
	if (n & (n - 1))
		return 0;              /* not a power of two: room left */
	void *x = realloc(*a, (size_t)(n ? n * 2 : 1) * elem);
	if (!x)
		return -1;
	*a = x;
	return 0;
}

static int oom(struct reader *r)
{
	return errmsg(r->err, r->errlen, "out of memory reading %s", r->name);
}

/* The words after a line's keyword: at most 10 (a pad's name may go on; a
 * clone's line has 9 at most, `in J promote`, so a 10th refuses it). */
#define MAX_WORDS 10
typedef char words[MAX_WORDS][128];

static int read_magic(struct reader *r, const char *s, const char *eol)
{
	char kw[32], w[128];
	uint64_t v;
	if (!word(&s, eol, kw, sizeof(kw)) || strcmp(kw, PLAN_MAGIC))
		return errmsg(r->err, r->errlen, "%s: not an icpp plan", r->name);
	if (!word(&s, eol, w, sizeof(w)) || !num(w, &v, 1000000))
		return bad(r, "bad version");
	if (v != PLAN_VERSION)
		return errmsg(r->err, r->errlen,
			      "%s: plan format %llu, this icpp reads format %d: make the plan again",
			      r->name, (unsigned long long)v, PLAN_VERSION);
	return 0;
}

static bool build_id(const char *w, uint8_t *id, uint32_t *len)
{
	size_t hl = strlen(w);
	if (hl % 2 || hl / 2 > PM_BUILD_ID_MAX)
		return false;
	for (size_t i = 0; i < hl / 2; i++) {
		unsigned b;
		if (!isxdigit((unsigned char)w[2 * i]) || !isxdigit((unsigned char)w[2 * i + 1]) ||
		    sscanf(w + 2 * i, "%2x", &b) != 1)
			return false;
		id[i] = (uint8_t)b;
	}
	*len = (uint32_t)(hl / 2);
	return true;
}

/* module N BUILD-ID|- PATH: the path is the rest of the line (it may hold
 * spaces); the pathmap's module of that build-id (or, without one, that
 * path) gets the file's number N. */
static int read_module(struct reader *r, const char *s, const char *eol)
{
	char w[2][128];
	uint64_t idx;
	if (!word(&s, eol, w[0], sizeof(w[0])) || !num(w[0], &idx, 4095) || idx != r->nmod ||
	    !word(&s, eol, w[1], sizeof(w[1])))
		return bad(r, "expected: module N BUILD-ID|- PATH, numbered from 0");
	while (s < eol && *s == ' ')
		s++;
	size_t plen = (size_t)(eol - s);
	if (!plen || plen >= 4096)
		return bad(r, "module without a path");
	char path[4096];
	memcpy(path, s, plen);
	path[plen] = 0;
	uint8_t id[PM_BUILD_ID_MAX];
	uint32_t idlen = 0;
	if (strcmp(w[1], "-") && !build_id(w[1], id, &idlen))
		return bad(r, "bad build-id");
	bool path_match = false;
	for (uint32_t m = 0; m < r->pm->nmodules; m++) {
		const struct pm_module *md = &r->pm->modules[m];
		bool same_path = !strcmp(md->path, path);
		path_match |= same_path;
		if (idlen ? md->build_id_len == idlen && !memcmp(md->build_id, id, idlen)
			  : same_path && !md->build_id_len) {
			r->modmap[r->nmod++] = m;
			return 0;
		}
	}
	return errmsg(r->err, r->errlen,
		      path_match ? "%s: line %u: the plan was made for another build of %s: make the plan again"
				 : "%s: line %u: module %s is not in the pathmap",
		      r->name, r->line, path);
}

static int read_unit(struct reader *r, const char *kw, words w, int nw)
{
	if (nw != 1 || (strcmp(w[0], "functions") && strcmp(w[0], "callsites")))
		return bad(r, "expected: unit functions|callsites");
	r->plan->summary.unit = strcmp(w[0], "callsites") ? DA_UNIT_FUNCTIONS : DA_UNIT_CALLSITES;
	r->have_unit = true;
	return 0;
}

static int read_seed(struct reader *r, const char *kw, words w, int nw)
{
	if (nw != 1 || !num(w[0], &r->plan->summary.seed, UINT64_MAX))
		return bad(r, "expected: seed N");
	return 0;
}

/* paths, weight, code-bytes */
static int read_count(struct reader *r, const char *kw, words w, int nw)
{
	struct da_pm_summary *m = &r->plan->summary;
	uint64_t *dst = !strcmp(kw, "paths") ? &m->paths : !strcmp(kw, "weight") ? &m->weight
										   : &m->code_bytes;
	if (nw != 1 || !num(w[0], dst, UINT64_MAX))
		return bad(r, "expected: KEY N");
	return 0;
}

/* precise-paths, precise-weight */
static int read_precise(struct reader *r, const char *kw, words w, int nw)
{
	struct da_pm_summary *m = &r->plan->summary;
	bool p = !strcmp(kw, "precise-paths");
	if (nw != 2 || !num(w[0], p ? &m->precise_before : &m->precise_weight_before, UINT64_MAX) ||
	    !num(w[1], p ? &m->precise_after : &m->precise_weight_after, UINT64_MAX))
		return bad(r, "expected: KEY BEFORE AFTER");
	return 0;
}

static int read_left(struct reader *r, const char *kw, words w, int nw)
{
	int l = 1, d = 0;
	uint64_t count;
	while (l < DA_LEFT_N && (nw < 1 || strcmp(w[0], da_left_name(l))))
		l++;
	/* "deeper" (plans written before clone chains): blocked */
	if (l == DA_LEFT_N && nw >= 1 && !strcmp(w[0], "deeper"))
		l = DA_LEFT_BLOCKED;
	while (d < 4 && (nw < 2 || strcmp(w[1], da_diff_name(d))))
		d++;
	if (nw != 3 || l == DA_LEFT_N || d == 4 || !num(w[2], &count, UINT64_MAX))
		return bad(r, "expected: left REASON KIND COUNT");
	r->plan->summary.left_by[l][d] += count;
	return 0;
}

static int read_growth(struct reader *r, const char *kw, words w, int nw)
{
	if (nw != 2 || !ratio(w[0], &r->plan->summary.max_growth) ||
	    !sint(w[1], &r->plan->summary.max_growth_bytes))
		return bad(r, "expected: growth RATIO BYTES");
	return 0;
}

/* A module number of the file, as the pathmap's module. */
static bool module_no(struct reader *r, const char *w, uint32_t *m)
{
	uint64_t mi;
	if (!num(w, &mi, 4095) || mi >= r->nmod)
		return false;
	*m = r->modmap[mi];
	return true;
}

static int read_pad(struct reader *r, const char *kw, words w, int nw)
{
	struct da_pm_plan *plan = r->plan;
	uint32_t m, bytes;
	uint64_t addr;
	/* the name (informational) may in principle hold spaces */
	if (nw < 4 || !module_no(r, w[0], &m) || !hex_addr(w[1], &addr, UINT64_MAX) ||
	    !amount(w[2], &bytes) || !bytes)
		return bad(r, "expected: pad MODULE 0xADDR BYTES NAME (BYTES a nonzero multiple of 16)");
	uint32_t fn = pmi_function_at(&r->ix, m, addr);
	if (fn == DA_NONE)
		return bad(r, "no function of the pathmap starts at that address");
	for (uint32_t i = 0; i < plan->npads; i++)
		if (plan->pads[i].func == fn)
			return bad(r, "function padded twice");
	if (grow_arr((void **)&plan->pads, plan->npads, sizeof(*plan->pads)) < 0)
		return oom(r);
	plan->pads[plan->npads++] = (struct da_pm_pad){fn, bytes};
	r->records++;
	return 0;
}

static int read_wrap(struct reader *r, const char *kw, words w, int nw)
{
	struct da_pm_plan *plan = r->plan;
	uint32_t m, bytes;
	uint64_t addr;
	if (nw != 3 || !module_no(r, w[0], &m) || !hex_addr(w[1], &addr, (1ULL << 48) - 1) ||
	    !amount(w[2], &bytes) || !bytes)
		return bad(r, "expected: wrap MODULE 0xADDR BYTES (BYTES a nonzero multiple of 16)");
	for (uint32_t i = 0; i < plan->nwraps; i++)
		if (plan->wraps[i].module == m && plan->wraps[i].addr == addr)
			return bad(r, "callsite wrapped twice");
	if (grow_arr((void **)&plan->wraps, plan->nwraps, sizeof(*plan->wraps)) < 0)
		return oom(r);
	plan->wraps[plan->nwraps++] = (struct da_pm_wrap){m, addr, bytes};
	r->records++;
	return 0;
}

static int read_clone(struct reader *r, const char *kw, words w, int nw)
{
	struct da_pm_plan *plan = r->plan;
	uint64_t k, addr, caddr, parent = DA_NONE;
	uint32_t m, cm, bytes;
	bool last = nw == 7 || nw == 9;
	bool promote = last && !strcmp(w[nw - 1], "promote");
	bool xcall = last && !strcmp(w[nw - 1], "xcall");
	bool tail = last && !strcmp(w[nw - 1], "tail");
	if (last && (promote || xcall || tail))
		nw--;
	else if (last)
		nw = 0;              /* refused below */
	if ((nw != 6 && nw != 8) || !num(w[0], &k, UINT32_MAX) || k != plan->nclones ||
	    !module_no(r, w[1], &m) || !hex_addr(w[2], &addr, UINT64_MAX) ||
	    !module_no(r, w[3], &cm) || !hex_addr(w[4], &caddr, (1ULL << 48) - 1) ||
	    !amount(w[5], &bytes) ||
	    (nw == 8 && (strcmp(w[6], "in") || !num(w[7], &parent, k ? k - 1 : 0) || !k)))
		return bad(r, "expected: clone K MODULE 0xFUNC CS-MODULE 0xCALLSITE PAD [in J] "
			   "[promote|xcall|tail], K from 0, J a clone above");
	uint32_t fn = pmi_function_at(&r->ix, m, addr);
	if (fn == DA_NONE)
		return bad(r, "no function of the pathmap starts at that address");
	if (grow_arr((void **)&plan->clones, plan->nclones, sizeof(*plan->clones)) < 0)
		return oom(r);
	if (xcall && cm == m)
		return bad(r, "xcall: a clone for a call of its own module");
	plan->clones[plan->nclones++] = (struct da_pm_clone){fn, cm, caddr, bytes, (uint32_t)parent, 0,
							     promote, xcall || (tail && cm != m), tail};
	r->records++;
	return 0;
}

static int read_clone_wrap(struct reader *r, const char *kw, words w, int nw)
{
	struct da_pm_plan *plan = r->plan;
	uint64_t k, addr;
	uint32_t m, bytes;
	if (nw != 4 || !num(w[0], &k, UINT32_MAX) || k >= plan->nclones || !module_no(r, w[1], &m) ||
	    !hex_addr(w[2], &addr, (1ULL << 48) - 1) || !amount(w[3], &bytes))
		return bad(r, "expected: clone-wrap K MODULE 0xCALLSITE BYTES, K a clone above");
	if (grow_arr((void **)&plan->clone_wraps, plan->nclone_wraps, sizeof(*plan->clone_wraps)) < 0)
		return oom(r);
	plan->clone_wraps[plan->nclone_wraps++] = (struct da_pm_clone_wrap){(uint32_t)k, m, addr, bytes};
	r->records++;
	return 0;
}

static int read_end(struct reader *r, const char *kw, words w, int nw)
{
	uint64_t n;
	if (nw != 1 || !num(w[0], &n, UINT64_MAX))
		return bad(r, "expected: end N");
	if (n != r->records)
		return bad(r, "record count does not match: the file is damaged");
	r->ended = true;
	return 0;
}

static const struct {
	const char *kw;
	int (*read)(struct reader *r, const char *kw, words w, int nw);
} line_kinds[] = {
	{"unit", read_unit},       {"seed", read_seed},
	{"paths", read_count},     {"weight", read_count},
	{"code-bytes", read_count}, {"precise-paths", read_precise},
	{"precise-weight", read_precise}, {"left", read_left},
	{"growth", read_growth},   {"pad", read_pad},
	{"wrap", read_wrap},       {"clone", read_clone},
	{"clone-wrap", read_clone_wrap}, {"end", read_end},
};

/* One line (without its newline): 0, or -1 with the message written. */
static int read_line(struct reader *r, const char *s, const char *eol)
{
	char kw[32];
	words w;
	if (r->line == 1)
		return read_magic(r, s, eol);
	if (s == eol || *s == '#')
		return 0;
	if (r->ended)
		return bad(r, "text after the end line");
	if (!word(&s, eol, kw, sizeof(kw)))
		return bad(r, "blank line with spaces");
	if (!strcmp(kw, "module"))
		return read_module(r, s, eol);
	/* a pad's name (informational, any length: a C++ template's mangled
	 * name runs to thousands of characters) is the rest of the line */
	int nw = 0, before_text = strcmp(kw, "pad") ? MAX_WORDS : 3;
	while (nw < before_text && word(&s, eol, w[nw], sizeof(w[nw])))
		nw++;
	while (s < eol && (*s == ' ' || *s == '\t'))
		s++;
	if (nw == before_text && before_text < MAX_WORDS && s < eol)
		strcpy(w[nw++], "NAME");
	for (size_t i = 0; i < sizeof(line_kinds) / sizeof(line_kinds[0]); i++)
		if (!strcmp(kw, line_kinds[i].kw))
			return line_kinds[i].read(r, kw, w, nw);
	return bad(r, "unknown line");
}

int da_plan_parse(const char *name, const char *text, size_t len, const struct pathmap *pm,
		  struct da_pm_plan *plan, char *err, size_t errlen)
{
	memset(plan, 0, sizeof(*plan));
	struct reader r = {.name = name, .p = text, .end = text + len, .err = err, .errlen = errlen,
			   .pm = pm, .plan = plan};
	int rc = -1;
	if (pmi_build(&r.ix, pm) < 0)
		return errmsg(err, errlen, "out of memory");
	if (memchr(text, 0, len)) {
		errmsg(err, errlen, "%s: not an icpp plan (binary data)", name);
		goto out;
	}
	while (r.p < r.end) {
		const char *s = r.p, *eol = memchr(s, '\n', (size_t)(r.end - s));
		r.line++;
		if (!eol) {
			bad(&r, "truncated (no newline at the end)");
			goto out;
		}
		r.p = eol + 1;
		if (read_line(&r, s, eol) < 0)
			goto out;
	}
	if (r.line == 0)
		errmsg(err, errlen, "%s: empty file, not an icpp plan", name);
	else if (!r.ended)
		errmsg(err, errlen, "%s: truncated (no end line)", name);
	else if (!r.have_unit)
		errmsg(err, errlen, "%s: no unit line", name);
	else
		rc = 0;
out:
	pmi_free(&r.ix);
	if (rc)
		da_pm_plan_free(plan);
	return rc;
}

int da_plan_read(const char *path, const struct pathmap *pm, struct da_pm_plan *plan,
		 char *err, size_t errlen)
{
	void *buf;
	size_t len;
	memset(plan, 0, sizeof(*plan));
	if (read_file(path, &buf, &len, err, errlen) < 0)
		return -1;
	int rc = da_plan_parse(path, buf, len, pm, plan, err, errlen);
	free(buf);
	return rc;
}
