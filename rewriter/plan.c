/* plan.c: the rewriter's plan (addresses in the rewritten file), its text form
 * (kept in the output's note) and its check against the capability. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rewriter/internal.h"
#include "util/order.h"

static int add_item(struct rw_plan_item **v, uint32_t *n, uint64_t addr, uint32_t bytes)
{
	struct rw_plan_item *nv = realloc(*v, (*n + 1) * sizeof(**v));
	if (!nv)
		return -1;
	*v = nv;
	nv[(*n)++] = (struct rw_plan_item){addr, bytes};
	return 0;
}

static int cmp_item(const void *x, const void *y)
{
	const struct rw_plan_item *a = x, *b = y;
	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

/* Sort; refuse duplicates; drop zero amounts. */
static int normalise(struct rw_plan_item *v, uint32_t *n, const char *what, char *err, size_t errlen)
{
	qsort(v, *n, sizeof(*v), cmp_item);
	uint32_t k = 0;
	for (uint32_t i = 0; i < *n; i++) {
		if (i && v[i].addr == v[i - 1].addr) {
			errmsg(err, errlen, "plan names %s 0x%" PRIx64 " twice", what, v[i].addr);
			return -1;
		}
		if (v[i].bytes)
			v[k++] = v[i];
	}
	*n = k;
	return 0;
}

int rw_plan_add(struct rw_plan *p, bool wrap, uint64_t addr, uint32_t bytes)
{
	return wrap ? add_item(&p->wraps, &p->nwraps, addr, bytes)
		    : add_item(&p->pads, &p->npads, addr, bytes);
}

int rw_plan_add_clone(struct rw_plan *p, uint64_t func, uint64_t site, uint32_t pad,
		      uint32_t parent)
{
	struct rw_plan_clone *v = realloc(p->clones, (p->nclones + 1) * sizeof(*v));
	if (!v)
		return -1;
	p->clones = v;
	v[p->nclones++] = (struct rw_plan_clone){.func = func, .site = site, .pad = pad, .parent = parent};
	return 0;
}

int rw_plan_add_tag(struct rw_plan *p, uint64_t site, uint64_t tag, uint32_t clone)
{
	struct rw_plan_tag *v = realloc(p->tags, (p->ntags + 1) * sizeof(*v));
	if (!v)
		return -1;
	p->tags = v;
	v[p->ntags++] = (struct rw_plan_tag){site, tag, clone};
	return 0;
}

/* FNV-1a over the build-id and the site, then splitmix64's finaliser: the
 * tag must not occur by chance before another return address. */
uint64_t rw_xcall_value(const uint8_t *id, uint32_t idlen, uint64_t page)
{
	/* the page with bit 63, which no call's key (nor a copy's) has */
	return rw_tag(id, idlen, page | (1ull << 63));
}

uint64_t rw_tag(const uint8_t *id, uint32_t idlen, uint64_t site)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (uint32_t i = 0; i < idlen + 8; i++) {
		h ^= i < idlen ? id[i] : (uint8_t)(site >> (8 * (i - idlen)));
		h *= 0x100000001b3ull;
	}
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	h ^= h >> 31;
	return h ? h : 1;
}

static int cmp_tag(const void *x, const void *y)
{
	const struct rw_plan_tag *a = x, *b = y;
	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	return a->clone < b->clone ? -1 : a->clone > b->clone;
}

static int cmp_xcall(const void *x, const void *y)
{
	const struct rw_plan_xcall *a = x, *b = y;
	if (a->site != b->site)
		return a->site < b->site ? -1 : 1;
	return a->clone < b->clone ? -1 : a->clone > b->clone;
}

int rw_plan_add_xcall(struct rw_plan *p, const struct rw_plan_xcall *x)
{
	struct rw_plan_xcall *v = realloc(p->xcalls, (p->nxcalls + 1) * sizeof(*v));
	if (!v)
		return -1;
	p->xcalls = v;
	v[p->nxcalls++] = *x;
	return 0;
}

int rw_plan_add_mark(struct rw_plan *p, uint64_t func)
{
	uint64_t *v = realloc(p->marks, (p->nmarks + 1) * sizeof(*v));
	if (!v)
		return -1;
	p->marks = v;
	v[p->nmarks++] = func;
	return 0;
}

const struct rw_plan_xcall *rw_plan_xcall_of(const struct rw_plan *p, uint64_t site,
					     uint32_t clone)
{
	struct rw_plan_xcall key = {.site = site, .clone = clone};
	return p->nxcalls ? bsearch(&key, p->xcalls, p->nxcalls, sizeof(*p->xcalls), cmp_xcall)
			  : NULL;
}

int rw_plan_add_clone_wrap(struct rw_plan *p, uint32_t clone, uint64_t site, uint32_t bytes)
{
	struct rw_plan_clone_wrap *v = realloc(p->clone_wraps, (p->nclone_wraps + 1) * sizeof(*v));
	if (!v)
		return -1;
	p->clone_wraps = v;
	v[p->nclone_wraps++] = (struct rw_plan_clone_wrap){clone, site, bytes};
	return 0;
}

void rw_plan_free(struct rw_plan *p)
{
	free(p->pads);
	free(p->wraps);
	free(p->clones);
	free(p->clone_wraps);
	free(p->tags);
	free(p->xcalls);
	free(p->marks);
	free(p->heat);
	*p = (struct rw_plan){0};
}

static int cmp_heat(const void *x, const void *y)
{
	const struct rw_plan_heat *a = x, *b = y;
	return (a->key > b->key) - (a->key < b->key);
}

int rw_plan_add_heat(struct rw_plan *p, uint64_t key, uint64_t entries)
{
	struct rw_plan_heat *v = realloc(p->heat, (p->nheat + 1) * sizeof(*v));
	if (!v)
		return -1;
	p->heat = v;
	v[p->nheat++] = (struct rw_plan_heat){key, entries};
	return 0;
}

uint64_t rw_plan_heat_of(const struct rw_plan *p, uint64_t key)
{
	struct rw_plan_heat k = {key, 0};
	const struct rw_plan_heat *h =
		p->nheat ? bsearch(&k, p->heat, p->nheat, sizeof(*p->heat), cmp_heat) : NULL;
	return h ? h->entries : 0;
}

int rw_plan_sort(struct rw_plan *p, char *err, size_t errlen)
{
	qsort(p->tags, p->ntags, sizeof(*p->tags), cmp_tag);
	for (uint32_t i = 1; i < p->ntags; i++)
		if (!cmp_tag(&p->tags[i], &p->tags[i - 1]))
			return errmsg(err, errlen, "plan tags callsite 0x%" PRIx64 "%s twice",
				      p->tags[i].site, p->tags[i].clone == RW_NONE ? "" : " in a clone");
	qsort(p->xcalls, p->nxcalls, sizeof(*p->xcalls), cmp_xcall);
	for (uint32_t i = 1; i < p->nxcalls; i++)
		if (!cmp_xcall(&p->xcalls[i], &p->xcalls[i - 1]))
			return errmsg(err, errlen, "plan points callsite 0x%" PRIx64 "%s at another "
				      "module's clone twice", p->xcalls[i].site,
				      p->xcalls[i].clone == RW_NONE ? "" : " in a clone");
	qsort(p->marks, p->nmarks, sizeof(*p->marks), u64_cmp);
	for (uint32_t i = 1; i < p->nmarks; i++)
		if (p->marks[i] == p->marks[i - 1])
			return errmsg(err, errlen, "plan marks 0x%" PRIx64 " twice", p->marks[i]);
	qsort(p->heat, p->nheat, sizeof(*p->heat), cmp_heat);
	for (uint32_t i = 1; i < p->nheat; i++)
		if (!cmp_heat(&p->heat[i], &p->heat[i - 1]))
			return errmsg(err, errlen, "plan gives 0x%" PRIx64 " two heats", p->heat[i].key);
	return 0;
}

uint64_t rw_plan_tag(const struct rw_plan *p, uint64_t site, uint32_t clone)
{
	struct rw_plan_tag key = {.site = site, .clone = clone};
	const struct rw_plan_tag *t =
		p->ntags ? bsearch(&key, p->tags, p->ntags, sizeof(*p->tags), cmp_tag) : NULL;
	return t ? t->tag : 0;
}

/* The rest of a clone line: 0xFUNC 0xSITE PAD, then `promote`, `in K`,
 * `tag 0xTAG`, `xcall` or `tail` (of the last four one at most but `in K`
 * with `tail`, a clone for another module's call not promoted). */
static int parse_clone(const char *s, struct rw_plan *p, char *err, size_t errlen)
{
	unsigned long long func, site, tag = 0, from = 0;
	unsigned pad, k = RW_NONE;
	int used = 0;
	bool promote = false, xcall = false, tail = false;
	char word[16];
	if (sscanf(s, " %llx %llx %u%n", &func, &site, &pad, &used) != 3 || pad % RW_ALIGN ||
	    pad > RW_MAX_AMOUNT)
		goto bad;
	for (s += used; sscanf(s, " %15s%n", word, &used) == 1; s += used) {
		int more = 0;
		if (!strcmp(word, "promote") && !promote && !tag && !xcall)
			promote = true;
		else if (!strcmp(word, "xcall") && !xcall && !promote && !tag && k == RW_NONE) {
			xcall = true;
			if (sscanf(s + used, " 0x%llx%n", &from, &more) == 1 && from)
				used += more;
		}
		else if (!strcmp(word, "in") && k == RW_NONE && !tag && !xcall &&
			 sscanf(s + used, " %u%n", &k, &more) == 1 && k < p->nclones)
			used += more;
		else if (!strcmp(word, "tail") && !tail && !promote && !tag && !xcall)
			tail = true;
		else if (!strcmp(word, "tag") && !tag && k == RW_NONE && !promote && !xcall &&
			 sscanf(s + used, " %llx%n", &tag, &more) == 1 && tag)
			used += more;
		else
			goto bad;
	}
	if (rw_plan_add_clone(p, func, site, pad, k))
		return errmsg(err, errlen, "out of memory");
	p->clones[p->nclones - 1].tag = tag;
	p->clones[p->nclones - 1].promote = promote;
	p->clones[p->nclones - 1].xcall = xcall;
	p->clones[p->nclones - 1].xcall_from = from;
	p->clones[p->nclones - 1].tail = tail;
	return 0;
bad:
	return errmsg(err, errlen, "want \"clone 0xFUNC 0xSITE PAD [promote|tail] [in K] | [tag 0xTAG] | "
		      "[xcall [0xFWD]]\" "
		      "(K an earlier clone, TAG not 0, PAD a multiple of 16 up to %d)", RW_MAX_AMOUNT);
}

/* The rest of an xcall line (rewriter.h section 3): 0, or -1 (malformed,
 * or out of memory). */
static int parse_xcall(const char *s, struct rw_plan *p)
{
	unsigned long long site, f, dest, mark, value, g = 0, slot = 0;
	unsigned long long hslot = 0, hf = 0, hmark = 0, hvalue = 0;
	unsigned k = RW_NONE;
	int used = 0, more = 0;
	char word[8];
	if (sscanf(s, " %llx %llx %llx %llx %llx%n", &site, &f, &dest, &mark, &value, &used) != 5 ||
	    !value)
		return -1;
	s += used;
	if (sscanf(s, " %7s%n", word, &used) == 1 && !strcmp(word, "via")) {
		if (sscanf(s + used, " %llx %llx%n", &g, &slot, &more) != 2 || !g || !slot)
			return -1;
		s += used + more;
	}
	if (sscanf(s, " %7s%n", word, &used) == 1 && !strcmp(word, "then")) {
		if (sscanf(s + used, " %llx %llx %llx %llx%n", &hslot, &hf, &hmark, &hvalue, &more) != 4 ||
		    !hslot || !hf || !hvalue)
			return -1;
		s += used + more;
	}
	if (sscanf(s, " %7s%n", word, &used) == 1 && !strcmp(word, "in")) {
		if (sscanf(s + used, " %u%n", &k, &more) != 1 || k >= p->nclones)
			return -1;
		s += used + more;
	}
	bool tail = sscanf(s, " %7s%n", word, &used) == 1 && !strcmp(word, "tail") && !g && !hslot;
	if (tail)
		s += used;
	if (sscanf(s, " %7s", word) == 1)
		return -1;
	struct rw_plan_xcall x = {site, k, f, dest, mark, value, g, slot, hslot, hf, hmark, hvalue, tail};
	return rw_plan_add_xcall(p, &x);
}

int rw_plan_parse(const char *text, size_t len, struct rw_plan *p, char *err, size_t errlen)
{
	*p = (struct rw_plan){0};
	size_t line = 0;
	bool header = false;
	for (size_t at = 0; at < len;) {
		size_t eol = at;
		while (eol < len && text[eol] != '\n')
			eol++;
		char buf[512];
		size_t n = eol - at < sizeof(buf) - 1 ? eol - at : sizeof(buf) - 1;
		memcpy(buf, text + at, n);
		buf[n] = 0;
		at = eol + 1;
		line++;
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = 0;
		char kw[16];
		unsigned long long addr;
		unsigned bytes;
		int used = 0;
		if (sscanf(buf, " %15s%n", kw, &used) != 1)
			continue;
		if (!header) {
			unsigned ver;
			if (strcmp(kw, "icpp-plan") || sscanf(buf + used, " %u", &ver) != 1 || ver != 1) {
				errmsg(err, errlen, "line %zu: not an icpp rewrite plan (want \"icpp-plan 1\")", line);
				goto fail;
			}
			header = true;
			continue;
		}
		char extra[2];
		unsigned long long site, tag = 0;
		unsigned k = RW_NONE;
		if (!strcmp(kw, "tag")) {
			int got = sscanf(buf + used, " %llx %llx in %u %1s", &site, &tag, &k, extra);
			bool in = got == 3;
			if (got == 2) {
				got = sscanf(buf + used, " %llx %llx %1s", &site, &tag, extra) == 2 ? 3 : 0;
				k = RW_NONE;
			}
			if (got != 3 || !tag || (in && k >= p->nclones)) {
				errmsg(err, errlen, "line %zu: want \"tag 0xSITE 0xTAG [in K]\" (TAG not 0, "
					"K an earlier clone)", line);
				goto fail;
			}
			if (rw_plan_add_tag(p, site, tag, k)) {
				errmsg(err, errlen, "out of memory");
				goto fail;
			}
			continue;
		}
		if (!strcmp(kw, "xcall")) {
			if (parse_xcall(buf + used, p) < 0) {
				errmsg(err, errlen, "line %zu: want \"xcall 0xSITE 0xFUNC 0xCLONE 0xMARK "
					"0xVALUE [via 0xG 0xSLOT] [then 0xSLOT2 0xG2 0xMARK2 0xVALUE2] [in K] "
					"[tail]\" (VALUEs not 0, K an earlier clone)",
					line);
				goto fail;
			}
			continue;
		}
		if (!strcmp(kw, "mark")) {
			if (sscanf(buf + used, " %llx %1s", &addr, extra) != 1 || !addr) {
				errmsg(err, errlen, "line %zu: want \"mark 0xFUNC\"", line);
				goto fail;
			}
			if (rw_plan_add_mark(p, addr)) {
				errmsg(err, errlen, "out of memory");
				goto fail;
			}
			continue;
		}
		if (!strcmp(kw, "clone-wrap")) {
			if (sscanf(buf + used, " %u %llx %u %1s", &k, &site, &bytes, extra) != 3 ||
			    bytes % RW_ALIGN || bytes > RW_MAX_AMOUNT || k >= p->nclones) {
				errmsg(err, errlen, "line %zu: want \"clone-wrap K 0xSITE BYTES\" (K an "
					"earlier clone, BYTES a multiple of 16 up to %d)", line,
					RW_MAX_AMOUNT);
				goto fail;
			}
			if (rw_plan_add_clone_wrap(p, k, site, bytes)) {
				errmsg(err, errlen, "out of memory");
				goto fail;
			}
			continue;
		}
		if (!strcmp(kw, "clone")) {
			if (parse_clone(buf + used, p, err, errlen) < 0) {
				char e2[256];
				snprintf(e2, sizeof(e2), "%s", err);
				errmsg(err, errlen, "line %zu: %s", line, e2);
				goto fail;
			}
			continue;
		}
		if ((strcmp(kw, "pad") && strcmp(kw, "wrap")) ||
		    sscanf(buf + used, " %llx %u %1s", &addr, &bytes, extra) != 2 || bytes % RW_ALIGN ||
		    bytes > RW_MAX_AMOUNT) {
			errmsg(err, errlen, "line %zu: want \"pad 0xADDR BYTES\" or \"wrap 0xSITE BYTES\" "
				"with BYTES a multiple of 16 up to %d", line, RW_MAX_AMOUNT);
			goto fail;
		}
		if (rw_plan_add(p, kw[0] == 'w', addr, bytes)) {
			errmsg(err, errlen, "out of memory");
			goto fail;
		}
	}
	if (!header) {
		errmsg(err, errlen, "empty plan (want \"icpp-plan 1\")");
		goto fail;
	}
	if (normalise(p->pads, &p->npads, "function", err, errlen) ||
	    normalise(p->wraps, &p->nwraps, "callsite", err, errlen) ||
	    rw_plan_sort(p, err, errlen))
		goto fail;
	return 0;
fail:
	rw_plan_free(p);
	return -1;
}

char *rw_plan_format(const struct rw_plan *p, const struct rw_binary *b)
{
	struct rbuf o = {0};
	char line[640], nb[512];
	rb_put(&o, "icpp-plan 1\n", 12);
	for (uint32_t i = 0; i < p->npads; i++) {
		uint32_t fi = b ? rw_func_index(b, p->pads[i].addr) : RW_NONE;
		const char *name = fi != RW_NONE && b->funcs[fi].name
					   ? bin_demangle(b->funcs[fi].name, nb, sizeof(nb)) : NULL;
		int n = snprintf(line, sizeof(line), "pad 0x%" PRIx64 " %u%s%s\n", p->pads[i].addr,
				 p->pads[i].bytes, name ? "  # " : "", name ? name : "");
		rb_put(&o, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
	}
	for (uint32_t i = 0; i < p->nwraps; i++) {
		int n = snprintf(line, sizeof(line), "wrap 0x%" PRIx64 " %u\n", p->wraps[i].addr,
				 p->wraps[i].bytes);
		rb_put(&o, line, (size_t)n);
	}
	for (uint32_t i = 0; i < p->nclones; i++) {
		const struct rw_plan_clone *c = &p->clones[i];
		int n = snprintf(line, sizeof(line), "clone 0x%" PRIx64 " 0x%" PRIx64 " %u%s", c->func,
				 c->site, c->pad, c->promote ? " promote" : c->tail ? " tail" : "");
		if (c->tag)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " tag 0x%" PRIx64, c->tag);
		else if (c->xcall && c->xcall_from)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " xcall 0x%" PRIx64, c->xcall_from);
		else if (c->xcall)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " xcall");
		else if (c->parent != RW_NONE)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " in %u", c->parent);
		line[n++] = '\n';
		rb_put(&o, line, (size_t)n);
	}
	for (uint32_t i = 0; i < p->nclone_wraps; i++) {
		int n = snprintf(line, sizeof(line), "clone-wrap %u 0x%" PRIx64 " %u\n",
				 p->clone_wraps[i].clone, p->clone_wraps[i].site, p->clone_wraps[i].bytes);
		rb_put(&o, line, (size_t)n);
	}
	for (uint32_t i = 0; i < p->ntags; i++) {
		int n = p->tags[i].clone == RW_NONE
				? snprintf(line, sizeof(line), "tag 0x%" PRIx64 " 0x%" PRIx64 "\n",
					   p->tags[i].site, p->tags[i].tag)
				: snprintf(line, sizeof(line), "tag 0x%" PRIx64 " 0x%" PRIx64 " in %u\n",
					   p->tags[i].site, p->tags[i].tag, p->tags[i].clone);
		rb_put(&o, line, (size_t)n);
	}
	for (uint32_t i = 0; i < p->nxcalls; i++) {
		const struct rw_plan_xcall *x = &p->xcalls[i];
		int n = snprintf(line, sizeof(line), "xcall 0x%" PRIx64 " 0x%" PRIx64 " 0x%" PRIx64
				 " 0x%" PRIx64 " 0x%" PRIx64, x->site, x->func, x->dest, x->mark,
				 x->value);
		if (x->fwd)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " via 0x%" PRIx64 " 0x%" PRIx64,
				      x->fwd, x->fwd_slot);
		if (x->hop_slot)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " then 0x%" PRIx64 " 0x%" PRIx64
				      " 0x%" PRIx64 " 0x%" PRIx64, x->hop_slot, x->hop_func, x->hop_mark,
				      x->hop_value);
		if (x->clone != RW_NONE)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " in %u", x->clone);
		if (x->tail)
			n += snprintf(line + n, sizeof(line) - (size_t)n, " tail");
		line[n++] = '\n';
		rb_put(&o, line, (size_t)n);
	}
	for (uint32_t i = 0; i < p->nmarks; i++) {
		int n = snprintf(line, sizeof(line), "mark 0x%" PRIx64 "\n", p->marks[i]);
		rb_put(&o, line, (size_t)n);
	}
	rb_u8(&o, 0);
	if (o.oom) {
		rb_free(&o);
		return NULL;
	}
	return (char *)o.p;
}

/* The function at addr padded by bytes (0 allowed); its index, or RW_NONE
 * with err. */
static uint32_t check_pad(const struct rw_binary *b, uint64_t addr, uint32_t bytes, char *err,
			  size_t errlen)
{
	uint32_t fi = rw_func_index(b, addr);
	if (fi == RW_NONE) {
		errmsg(err, errlen, "plan changes 0x%" PRIx64 ", which is no function of %s", addr,
			b->path);
		return RW_NONE;
	}
	const struct rw_func *f = &b->funcs[fi];
	if (rw_mask_allows(f->pad_mask, bytes))
		return fi;
	if (f->pad_mask > 1)
		errmsg(err, errlen, "plan pads %s (0x%" PRIx64 ") by %u bytes; at most %u can be added",
			f->name ? f->name : "?", f->addr, bytes, rw_mask_max(f->pad_mask));
	else
		errmsg(err, errlen, "plan pads %s (0x%" PRIx64 "), which cannot be padded: %s",
			f->name ? f->name : "?", f->addr, rw_pad_why_name(f->pad_why));
	return RW_NONE;
}

/* The call at site wrapped by bytes (0 allowed); its index, or RW_NONE with
 * err. */
static uint32_t check_wrap(const struct rw_binary *b, uint64_t site, uint32_t bytes, char *err,
			   size_t errlen)
{
	uint32_t ci = rw_call_index(b, site);
	if (ci == RW_NONE) {
		errmsg(err, errlen, "plan changes callsite 0x%" PRIx64 ", which is no call "
			"instruction's return address - 1 in %s", site, b->path);
		return RW_NONE;
	}
	const struct rw_call *c = &b->calls[ci];
	if (rw_mask_allows(c->wrap_mask, bytes))
		return ci;
	if (c->wrap_mask > 1)
		errmsg(err, errlen, "plan wraps callsite 0x%" PRIx64 " by %u bytes; it allows "
			"%u to %u", c->site, bytes,
			(unsigned)(__builtin_ctzll(c->wrap_mask & ~1ull) * RW_ALIGN),
			rw_mask_max(c->wrap_mask));
	else
		errmsg(err, errlen, "plan wraps callsite 0x%" PRIx64 ", which cannot be "
			"wrapped: %s", c->site, rw_wrap_why_name(c->wrap_why));
	return RW_NONE;
}

/* Does a clone of the function at func copy call ci (made by the function
 * or by its fragment)? */
static bool copied_by(const struct rw_binary *b, uint32_t ci, uint64_t func)
{
	const struct rw_func *f = &b->funcs[b->calls[ci].func];
	return f->addr == func || (f->parent != RW_NONE && b->funcs[f->parent].addr == func);
}

/* Is the call at site a direct call of func, which can be pointed at a
 * clone of it? */
static bool direct_call_of(const struct rw_binary *b, uint64_t site, uint64_t func)
{
	uint32_t ci = rw_call_index(b, site);
	return ci != RW_NONE && b->calls[ci].redirectable && rw_call_callee(&b->calls[ci]) == func;
}

bool rw_plan_dispatched(const struct rw_binary *b, const struct rw_plan_clone *c)
{
	return !c->promote && !c->xcall && !c->tail &&
	       (c->tag || !direct_call_of(b, c->site, c->func));
}

/* Tail clone k: its site the first of its jumps' owner's direct tail jumps
 * to its function, a chain's in a clone of that owner (section 1, Tail
 * chains). */
static int check_tail(const struct rw_binary *b, const struct rw_plan *p, uint32_t k, char *err,
		      size_t errlen)
{
	const struct rw_plan_clone *c = &p->clones[k];
	uint32_t g = rw_func_at(b, c->site);
	struct rw_tail_jump r, js[RW_MAX_TAIL_JUMPS];
	if (!rw_tail_route_at(b, c->site, c->func, &r, js))
		return errmsg(err, errlen, "plan clone %u takes the tail jump at 0x%" PRIx64 ", which "
			      "is not the first of its function's tail jumps to 0x%" PRIx64
			      " (or not all of those can be redirected)", k, c->site, c->func);
	if (c->parent != RW_NONE && (c->parent >= k || p->clones[c->parent].func != b->funcs[g].addr))
		return errmsg(err, errlen, "plan clone %u takes the tail jump at 0x%" PRIx64 " in clone "
			      "%u, which is no earlier clone of the function making it", k, c->site,
			      c->parent);
	return 0;
}

/* Clone k of a chain, whose call ci is in the plan's calls: made by the
 * function of its parent (or its fragment); a direct call of its function,
 * or one that its function's dispatch tests (check_clones). */
static int check_chain(const struct rw_binary *b, const struct rw_plan *p, uint32_t k,
		       uint32_t ci, char *err, size_t errlen)
{
	const struct rw_plan_clone *c = &p->clones[k];
	if (c->parent >= k)
		return errmsg(err, errlen, "plan clone %u takes a call in clone %u, which is not an "
			      "earlier clone", k, c->parent);
	if (b->funcs[b->calls[ci].func].addr != p->clones[c->parent].func)
		return errmsg(err, errlen, "plan clone %u takes callsite 0x%" PRIx64 " in clone %u, "
			      "but the cloned function does not make that call", k, c->site, c->parent);
	return 0;
}

/* A tail jump x to another module's clone: the first of its function's
 * jumps to a PLT stub (section 1, Tail chains), its copy's clone one of
 * that function. */
static int check_tail_xcall(const struct rw_binary *b, const struct rw_plan *p,
			    const struct rw_plan_xcall *x, char *err, size_t errlen)
{
	struct rw_tail_jump r, js[RW_MAX_TAIL_JUMPS];
	if (!rw_tail_route_at(b, x->site, 0, &r, js))
		return errmsg(err, errlen, "plan points the tail jump at 0x%" PRIx64 " at another "
			      "module's clone, but it is not the first of its function's jumps to a PLT "
			      "stub (or not all of those can be redirected)", x->site);
	if (x->clone != RW_NONE &&
	    (x->clone >= p->nclones || p->clones[x->clone].func != b->funcs[rw_func_at(b, x->site)].addr))
		return errmsg(err, errlen, "plan points the tail jump at 0x%" PRIx64 " in clone %u at "
			      "another module's clone, but that clone does not copy the jump", x->site,
			      x->clone);
	return 0;
}

/* Is a marker at mark (RW_XCALL_MARK_BYTES) in func's page? */
static bool mark_in_page(uint64_t mark, uint64_t func)
{
	return mark / 4096 == func / 4096 && mark % 4096 <= 4096 - RW_XCALL_MARK_BYTES;
}

/* A `mark` line's function: one whose page takes a marker, a forwarder to
 * another module's function (forward_symbol), directly or through its
 * module's own forwarder (rewriter.h section 1, Cross-module calls). */
static int check_mark(const struct rw_binary *b, uint64_t func, char *err, size_t errlen)
{
	uint32_t fi = rw_func_index(b, func);
	const struct rw_func *f = fi == RW_NONE ? NULL : &b->funcs[fi];
	uint32_t gi = f && f->forward_to ? rw_func_index(b, f->forward_to) : fi;
	if (!f || !f->xcall_mark)
		return errmsg(err, errlen, "plan marks 0x%" PRIx64 ", %s", func, !f ? "which is no "
			      "function of this binary" : "whose page has no room for the marker");
	if (gi == RW_NONE || !b->funcs[gi].forward_symbol)
		return errmsg(err, errlen, "plan marks 0x%" PRIx64 " for another module's checked "
			      "calls, but it forwards to no other module's function (rewriter.h "
			      "section 1, Cross-module calls)", func);
	return 0;
}

static int check_clones(const struct rw_binary *b, const struct rw_plan *p, char *err,
			size_t errlen)
{
	for (uint32_t k = 0; k < p->nclones; k++) {
		const struct rw_plan_clone *c = &p->clones[k];
		uint32_t fi = check_pad(b, c->func, c->pad, err, errlen);
		/* a tagged or checked call is another module's: its check is there */
		uint32_t ci = fi == RW_NONE || c->tag || c->xcall || c->tail
				      ? fi : check_wrap(b, c->site, 0, err, errlen);
		if (ci == RW_NONE || (c->tail && check_tail(b, p, k, err, errlen) < 0))
			return -1;
		if (c->tag && c->parent != RW_NONE)
			return errmsg(err, errlen, "plan clone %u takes a tagged call in clone %u: a "
				      "chain takes a copy of this binary's own calls", k, c->parent);
		if (!b->funcs[fi].cloneable)
			return errmsg(err, errlen, "plan clones 0x%" PRIx64 ", which cannot be cloned: %s",
				      c->func, rw_clone_why_name(b->funcs[fi].clone_why));
		uint32_t mi = c->xcall_from ? rw_func_index(b, c->xcall_from) : fi;
		if (c->xcall && (mi == RW_NONE || !b->funcs[mi].xcall_mark ||
				 (c->xcall_from && b->funcs[mi].forward_to != c->func)))
			return errmsg(err, errlen, "plan clones 0x%" PRIx64 " for another module's call, "
				      "but %s (rewriter.h section 1, Cross-module calls)", c->func,
				      mi == RW_NONE || b->funcs[mi].xcall_mark ? "the function it names "
				      "does not forward to it" : "the page checked has no room for the marker");
		if (rw_pad_by_entry(&b->funcs[fi], c->pad))
			return errmsg(err, errlen, "plan pads a clone of 0x%" PRIx64 " by %u bytes, which "
				      "only an entry wrapper makes (a clone has none)", c->func, c->pad);
		bool dispatched = rw_plan_dispatched(b, c);
		if (c->parent != RW_NONE && !c->tail && check_chain(b, p, k, ci, err, errlen) < 0)
			return -1;
		if (c->promote && !b->calls[ci].promote_from)
			return errmsg(err, errlen, "plan promotes callsite 0x%" PRIx64 " for a clone of 0x%"
				      PRIx64 ", but it is no indirect call that can be promoted "
				      "(rewriter.h section 1, Promoted calls)", c->site, c->func);
		if (dispatched && !b->funcs[fi].dispatch)
			return errmsg(err, errlen, "plan points callsite 0x%" PRIx64 " at a clone of 0x%"
				      PRIx64 ", but it is no direct call of it and its entry cannot "
				      "dispatch", c->site, c->func);
		uint32_t ndispatch = 0;
		for (uint32_t j = 0; j < k; j++) {
			/* one site (or its copy in a clone) may take clones of
			 * several functions: f directly, g by dispatch (f
			 * tail-calls g) */
			if (p->clones[j].site == c->site && p->clones[j].parent == c->parent &&
			    p->clones[j].tag == c->tag && p->clones[j].xcall == c->xcall &&
			    p->clones[j].func == c->func)
				return errmsg(err, errlen, "plan clones 0x%" PRIx64 " for callsite 0x%"
					      PRIx64 " twice", c->func, c->site);
			ndispatch += p->clones[j].func == c->func && rw_plan_dispatched(b, &p->clones[j]);
		}
		if (dispatched && ndispatch >= RW_MAX_DISPATCH)
			return errmsg(err, errlen, "plan gives 0x%" PRIx64 " more than %d dispatched clones",
				      c->func, RW_MAX_DISPATCH);
	}
	for (uint32_t i = 0; i < p->nclone_wraps; i++) {
		const struct rw_plan_clone_wrap *w = &p->clone_wraps[i];
		if (w->clone >= p->nclones)
			return errmsg(err, errlen, "plan wraps a copy in clone %u, which it does not have",
				      w->clone);
		uint32_t ci = check_wrap(b, w->site, w->bytes, err, errlen);
		if (ci == RW_NONE)
			return -1;
		if (b->funcs[b->calls[ci].func].addr != p->clones[w->clone].func)
			return errmsg(err, errlen, "plan wraps callsite 0x%" PRIx64 " in clone %u, but "
				      "the cloned function does not make that call", w->site, w->clone);
		for (uint32_t j = 0; j < i; j++)
			if (p->clone_wraps[j].clone == w->clone && p->clone_wraps[j].site == w->site)
				return errmsg(err, errlen, "plan wraps callsite 0x%" PRIx64 " in clone %u "
					      "twice", w->site, w->clone);
	}
	return 0;
}

int rw_plan_check(const struct rw_binary *b, const struct rw_plan *p, char *err, size_t errlen)
{
	for (uint32_t i = 0; i < p->npads; i++)
		if (check_pad(b, p->pads[i].addr, p->pads[i].bytes, err, errlen) == RW_NONE)
			return -1;
	for (uint32_t i = 0; i < p->nwraps; i++)
		if (check_wrap(b, p->wraps[i].addr, p->wraps[i].bytes, err, errlen) == RW_NONE)
			return -1;
	for (uint32_t i = 0; i < p->ntags; i++) {
		const struct rw_plan_tag *t = &p->tags[i];
		uint32_t ci = rw_call_index(b, t->site);
		if (ci == RW_NONE || !b->calls[ci].taggable)
			return errmsg(err, errlen, "plan tags callsite 0x%" PRIx64 ", which %s",
				      t->site, ci == RW_NONE ? "is no call of this binary"
				      : "cannot be tagged (rewriter.h section 1, Tagged calls)");
		if (t->clone != RW_NONE &&
		    (t->clone >= p->nclones || !copied_by(b, ci, p->clones[t->clone].func)))
			return errmsg(err, errlen, "plan tags callsite 0x%" PRIx64 " in clone %u, which "
				      "does not copy that call", t->site, t->clone);
	}
	for (uint32_t i = 0; i < p->nxcalls; i++) {
		const struct rw_plan_xcall *x = &p->xcalls[i];
		uint32_t ci = rw_call_index(b, x->site);
		if (x->tail) {
			if (check_tail_xcall(b, p, x, err, errlen) < 0)
				return -1;
		} else if (ci == RW_NONE || !b->calls[ci].xcallable)
			return errmsg(err, errlen, "plan points callsite 0x%" PRIx64 " at another module's "
				      "clone, but it %s", x->site, ci == RW_NONE ? "is no call of this binary"
				      : "cannot check its GOT slot (rewriter.h section 1, Cross-module calls)");
		if (x->clone != RW_NONE && !x->tail &&
		    (x->clone >= p->nclones || !copied_by(b, ci, p->clones[x->clone].func)))
			return errmsg(err, errlen, "plan points callsite 0x%" PRIx64 " in clone %u at "
				      "another module's clone, but that clone does not copy the call",
				      x->site, x->clone);
		if (!mark_in_page(x->mark, x->func) || (x->hop_slot && !mark_in_page(x->hop_mark, x->hop_func)))
			return errmsg(err, errlen, "plan's marker 0x%" PRIx64 " for callsite 0x%" PRIx64
				      " is not in the page of its function 0x%" PRIx64,
				      x->hop_slot ? x->hop_mark : x->mark, x->site,
				      x->hop_slot ? x->hop_func : x->func);
	}
	for (uint32_t i = 0; i < p->nmarks; i++)
		if (check_mark(b, p->marks[i], err, errlen) < 0)
			return -1;
	return check_clones(b, p, err, errlen);
}

/* The padding a clone of function fi takes in the stress plan: its
 * original's, unless an entry wrapper makes that. */
static uint32_t everything_clone_pad(const struct rw_binary *b, const struct rw_plan *p,
				     uint32_t fi)
{
	for (uint32_t i = 0; i < p->npads; i++)
		if (p->pads[i].addr == b->funcs[fi].addr)
			return rw_pad_by_entry(&b->funcs[fi], p->pads[i].bytes) ? 0 : p->pads[i].bytes;
	return 0;
}

/* May call c take a clone of its target in the stress plan?  Its function
 * index, or RW_NONE. */
static uint32_t everything_target(const struct rw_binary *b, const struct rw_visibility *v,
				  size_t c)
{
	const struct rw_call *call = &b->calls[c];
	uint32_t fi = call->redirectable ? rw_func_index(b, rw_call_callee(call)) : RW_NONE;
	if (fi == RW_NONE || !b->funcs[fi].cloneable ||
	    (v && (v->no_wrap[c] || v->no_pad[fi] || v->no_clone[fi] || !v->in_map[fi])))
		return RW_NONE;
	return fi;
}

/* A clone of every cloneable function padded like its original (unpadded
 * when that is an entry wrapper's padding), for its
 * first redirectable call (by site) that training saw no reason to leave;
 * then in each of those clones, a chain: a clone for the copy of its
 * function's first such call (rewriter.h section 1, Cloning). */
static int everything_clones(const struct rw_binary *b, const struct rw_visibility *v,
			     struct rw_plan *p)
{
	for (size_t c = 0; c < b->ncalls; c++) {
		uint32_t fi = everything_target(b, v, c);
		if (fi == RW_NONE)
			continue;
		bool done = false;
		for (uint32_t k = 0; k < p->nclones && !done; k++)
			done = p->clones[k].func == rw_call_callee(&b->calls[c]);
		if (!done && rw_plan_add_clone(p, rw_call_callee(&b->calls[c]), b->calls[c].site,
					       everything_clone_pad(b, p, fi), RW_NONE))
			return -1;
	}
	uint32_t originals = p->nclones;
	for (uint32_t k = 0; k < originals; k++) {
		uint64_t func = p->clones[k].func;
		for (size_t c = 0; c < b->ncalls; c++) {
			uint32_t fi = everything_target(b, v, c);
			if (fi == RW_NONE || b->funcs[b->calls[c].func].addr != func)
				continue;
			if (rw_plan_add_clone(p, rw_call_callee(&b->calls[c]), b->calls[c].site,
					      everything_clone_pad(b, p, fi), k))
				return -1;
			break;
		}
	}
	return 0;
}

int rw_plan_everything_seen(const struct rw_binary *b, const struct rw_visibility *v, uint32_t pad,
			    uint32_t wrap, bool clone, struct rw_plan *p)
{
	*p = (struct rw_plan){0};
	for (size_t i = 0; pad && i < b->nfuncs; i++) {
		const struct rw_func *f = &b->funcs[i];
		if (v && (!v->in_map[i] || v->no_pad[i] || (f->entry_tail && v->tail_seen[i])))
			continue;
		uint32_t amt = pad;
		while (amt && !rw_mask_allows(f->pad_mask, amt))
			amt -= RW_ALIGN;
		if (amt && rw_plan_add(p, false, f->addr, amt))
			goto oom;
	}
	for (size_t i = 0; wrap && i < b->ncalls; i++) {
		const struct rw_call *c = &b->calls[i];
		if (v && v->no_wrap[i])
			continue;
		uint32_t amt = wrap;
		while (amt <= RW_MAX_AMOUNT && !rw_mask_allows(c->wrap_mask, amt))
			amt += RW_ALIGN;
		if (amt <= RW_MAX_AMOUNT && c->wrap_mask > 1 && rw_plan_add(p, true, c->site, amt))
			goto oom;
	}
	if (clone && everything_clones(b, v, p))
		goto oom;
	const uint8_t *id;
	uint32_t idlen = (uint32_t)bin_build_id(b->bin, &id);
	for (size_t i = 0; clone && i < b->ncalls; i++) {
		uint64_t site = b->calls[i].site;
		if (!b->calls[i].taggable || (v && v->no_wrap[i]))
			continue;
		for (uint32_t k = 0; k < p->nclones; k++)   /* sorted: the copies, then the call */
			if (copied_by(b, (uint32_t)i, p->clones[k].func) &&
			    rw_plan_add_tag(p, site, rw_tag(id, idlen, rw_copy_key(site, k)), k))
				goto oom;
		if (rw_plan_add_tag(p, site, rw_tag(id, idlen, site), RW_NONE))
			goto oom;
	}
	return 0;
oom:
	rw_plan_free(p);
	return -1;
}
