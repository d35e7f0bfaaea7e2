/* flame: folded stacks (flamegraph.pl / inferno input) and an SVG flame
 * graph drawn by icpp itself. */
#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

/* ---- folded ---- */

struct fold {
	char *stack;
	double weight;
	uint64_t count;
	UT_hash_handle hh;
};

struct fold_ctx {
	struct fold *h;
	char *buf;
	size_t cap;
	int oom;
};

static void fold_cb(void *ctx, const char *const *frames, uint32_t n, double w, enum rp_status st)
{
	struct fold_ctx *f = ctx;
	size_t len = 0;
	for (uint32_t i = 0; i < n; i++)
		len += strlen(frames[i]) + 1;
	if (len + 1 > f->cap) {
		char *b = realloc(f->buf, len + 1);
		if (!b) {
			f->oom = 1;
			return;
		}
		f->buf = b;
		f->cap = len + 1;
	}
	char *p = f->buf;
	for (uint32_t i = 0; i < n; i++) {
		if (i)
			*p++ = ';';
		/* ';' separates frames and a trailing number is the count: keep
		 * both out of names (C++ operator; and such). */
		for (const char *s = frames[i]; *s; s++)
			*p++ = *s == ';' ? ':' : *s == '\n' ? ' ' : *s;
	}
	*p = 0;
	struct fold *e;
	HASH_FIND_STR(f->h, f->buf, e);
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || !(e->stack = strdup(f->buf))) {
			free(e);
			f->oom = 1;
			return;
		}
		HASH_ADD_KEYPTR(hh, f->h, e->stack, strlen(e->stack), e);
	}
	e->weight += w;
}

static int cmp_frac(const void *a, const void *b)
{
	const struct fold *x = *(struct fold *const *)a, *y = *(struct fold *const *)b;
	double fx = x->weight - floor(x->weight), fy = y->weight - floor(y->weight);
	if (fx != fy)
		return fx < fy ? 1 : -1;
	return strcmp(x->stack, y->stack);
}

static int cmp_stack(const void *a, const void *b)
{
	return strcmp((*(struct fold *const *)a)->stack, (*(struct fold *const *)b)->stack);
}

int rp_folded(struct rp_ctx *c, FILE *out)
{
	struct fold_ctx f = {0};
	rp_for_each_stack(c, fold_cb, &f);
	size_t n = HASH_COUNT(f.h), i = 0;
	struct fold **v = malloc((n ? n : 1) * sizeof(*v)), *e, *t;
	int rc = f.oom || !v ? -1 : 0;
	if (v) {
		/* Integer counts (inferno wants them) that still add up to the
		 * samples: largest remainder over the fractional shares. */
		double total = 0;
		uint64_t floors = 0;
		HASH_ITER(hh, f.h, e, t) {
			v[i++] = e;
			total += e->weight;
			e->count = (uint64_t)floor(e->weight + 1e-9);
			floors += e->count;
		}
		uint64_t want = (uint64_t)llround(total);
		qsort(v, n, sizeof(*v), cmp_frac);
		for (i = 0; i < n && floors < want; i++) {
			if (v[i]->weight - (double)v[i]->count > 1e-9) {
				v[i]->count++;
				floors++;
			}
		}
		qsort(v, n, sizeof(*v), cmp_stack);
		for (i = 0; i < n; i++)
			if (v[i]->count)
				fprintf(out, "%s %llu\n", v[i]->stack, (unsigned long long)v[i]->count);
	}
	HASH_ITER(hh, f.h, e, t) {
		HASH_DEL(f.h, e);
		free(e->stack);
		free(e);
	}
	free(v);
	free(f.buf);
	return rc || ferror(out) ? -1 : 0;
}

/* ---- SVG ---- */

struct fnode {
	char *name;
	double w;
	enum rp_status st;          /* the worst status of what passes through */
	struct fnode *child, *next;
};

struct svg_ctx {
	struct fnode root;
	int oom;
	uint32_t max_depth;
};

static struct fnode *child(struct fnode *p, const char *name, int *oom)
{
	struct fnode *c;
	for (c = p->child; c; c = c->next)
		if (!strcmp(c->name, name))
			return c;
	c = calloc(1, sizeof(*c));
	if (!c || !(c->name = strdup(name))) {
		free(c);
		*oom = 1;
		return NULL;
	}
	c->next = p->child;
	p->child = c;
	return c;
}

static void svg_cb(void *ctx, const char *const *frames, uint32_t n, double w, enum rp_status st)
{
	struct svg_ctx *s = ctx;
	struct fnode *p = &s->root;
	p->w += w;
	for (uint32_t i = 0; i < n && p; i++) {
		p = child(p, frames[i], &s->oom);
		if (!p)
			return;
		p->w += w;
		if (st > p->st)
			p->st = st;
	}
	if (n > s->max_depth)
		s->max_depth = n;
}

static void xml(FILE *out, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '&': fputs("&amp;", out); break;
		case '"': fputs("&quot;", out); break;
		default: fputc(*s, out);
		}
	}
}

static uint32_t hash(const char *s)
{
	uint32_t h = 2166136261u;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return h;
}

#define SVG_W 1200.0
#define ROW_H 16
#define PAD_TOP 48
#define MARGIN 10.0

static int cmp_name(const void *a, const void *b)
{
	return strcmp((*(struct fnode *const *)a)->name, (*(struct fnode *const *)b)->name);
}

static void draw(FILE *out, struct fnode *n, double x, uint32_t depth, double scale, double total,
		 int height)
{
	double w = n->w * scale;
	if (w < 0.3)
		return;
	int y = height - ROW_H * (int)(depth + 1) - 4;
	uint32_t h = hash(n->name);
	int r, g, b;
	if (n->st == RP_MISSING) {          /* grey: no path */
		r = g = b = 170 + (int)(h % 40);
	} else if (strstr(n->name, "[ambiguous]")) {   /* blue: a share of an ambiguous CID */
		r = 90 + (int)(h % 40);
		g = 140 + (int)(h % 50);
		b = 230;
	} else {                            /* classic warm colours */
		r = 205 + (int)(h % 50);
		g = (int)((h >> 8) % 180);
		b = (int)((h >> 16) % 55);
	}
	fprintf(out, "<g><title>");
	xml(out, n->name);
	fprintf(out, " (%.1f samples, %.2f%%)</title><rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
		"fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>", n->w, total > 0 ? 100.0 * n->w / total : 0,
		x, y, w, ROW_H - 1, r, g, b);
	size_t fit = (size_t)(w / 7.0);
	if (fit >= 3) {
		char text[256];
		size_t len = strlen(n->name);
		if (len <= fit && len < sizeof(text))
			snprintf(text, sizeof(text), "%s", n->name);
		else
			snprintf(text, sizeof(text), "%.*s..", (int)(fit - 2 < sizeof(text) - 3 ? fit - 2 : sizeof(text) - 3), n->name);
		fprintf(out, "<text x=\"%.1f\" y=\"%d\">", x + 3, y + ROW_H - 4);
		xml(out, text);
		fprintf(out, "</text>");
	}
	fprintf(out, "</g>\n");
	/* children, alphabetical as flamegraph.pl does */
	size_t nc = 0;
	for (struct fnode *c = n->child; c; c = c->next)
		nc++;
	struct fnode **v = malloc((nc ? nc : 1) * sizeof(*v));
	if (!v)
		return;
	nc = 0;
	for (struct fnode *c = n->child; c; c = c->next)
		v[nc++] = c;
	qsort(v, nc, sizeof(*v), cmp_name);
	double cx = x;
	for (size_t i = 0; i < nc; i++) {
		draw(out, v[i], cx, depth + 1, scale, total, height);
		cx += v[i]->w * scale;
	}
	free(v);
}

static void free_tree(struct fnode *n)
{
	struct fnode *c = n->child, *next;
	for (; c; c = next) {
		next = c->next;
		free_tree(c);
		free(c->name);
		free(c);
	}
}

int rp_svg(struct rp_ctx *c, FILE *out)
{
	struct svg_ctx s = {0};
	s.root.name = "all";
	rp_for_each_stack(c, svg_cb, &s);
	int height = PAD_TOP + ROW_H * (int)(s.max_depth + 2) + 8;
	double scale = s.root.w > 0 ? (SVG_W - 2 * MARGIN) / s.root.w : 0;
	fprintf(out, "<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n", (int)SVG_W, height, (int)SVG_W, height);
	fprintf(out, "<style>text { font-family: monospace; font-size: 11px; fill: #000; } "
		"rect:hover { stroke: #000; stroke-width: 0.5; }</style>\n");
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n");
	fprintf(out, "<text x=\"%.0f\" y=\"20\" text-anchor=\"middle\" style=\"font-size:15px\">", SVG_W / 2);
	xml(out, c->o->title ? c->o->title : "icpp: inferred call paths");
	fprintf(out, "</text>\n<text x=\"%.0f\" y=\"38\" text-anchor=\"middle\">", SVG_W / 2);
	char sub[512];
	snprintf(sub, sizeof(sub), "%llu samples of %s: precise %.1f%%, ambiguous %.1f%% (blue, split by "
		 "training entries), missing %.1f%% (grey)", (unsigned long long)c->total, c->ss->meta.command,
		 c->total ? 100.0 * c->n_status[RP_PRECISE] / c->total : 0,
		 c->total ? 100.0 * c->n_status[RP_AMBIGUOUS] / c->total : 0,
		 c->total ? 100.0 * c->n_status[RP_MISSING] / c->total : 0);
	xml(out, sub);
	fprintf(out, "</text>\n");
	if (s.root.w > 0)
		draw(out, &s.root, MARGIN, 0, scale, s.root.w, height);
	fprintf(out, "</svg>\n");
	free_tree(&s.root);
	return s.oom || ferror(out) ? -1 : 0;
}
