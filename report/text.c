/* text: the summary, hot call paths, ambiguous CIDs and missing CIDs. */
#include "report/report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <uthash.h>

static double pct(double part, double whole)
{
	return whole > 0 ? 100.0 * part / whole : 0.0;
}

struct path_row {
	uint32_t id;                /* function-sequence id */
	uint32_t rep;               /* a node with that sequence */
	double precise, ambiguous;
	double best;                /* largest single contribution: where the line comes from */
	const struct rp_sample *best_sample;
	char *label;                /* the path as printed (clones as their originals) */
	UT_hash_handle hh;
};

static int cmp_rows(const void *a, const void *b)
{
	const struct path_row *x = a, *y = b;
	double tx = x->precise + x->ambiguous, ty = y->precise + y->ambiguous;
	if (tx != ty)
		return tx < ty ? 1 : -1;
	return x->id < y->id ? -1 : x->id > y->id;
}

/* The rows of one printed path added up into its first: a clone icpp
 * rewrite made is shown as the function it copies (as in folded, SVG and
 * pprof), so the paths through it and through the original are one line.
 * -1 when out of memory. */
static int merge_rows(struct rp_ctx *c, struct path_row *rows, uint32_t n)
{
	struct path_row *seen = NULL, *first;
	int rc = 0;
	for (uint32_t i = 0; i < n; i++) {
		struct path_row *r = &rows[i];
		size_t len;
		if (r->precise + r->ambiguous <= 0)
			continue;
		FILE *f = open_memstream(&r->label, &len);
		if (!f) {
			rc = -1;
			break;
		}
		pm_print_path(f, c->pm, r->rep, " > ", PM_PRINT_PROFILE, bin_demangle);
		if (fclose(f) || !r->label) {
			rc = -1;
			break;
		}
		HASH_FIND_STR(seen, r->label, first);
		if (!first) {
			HASH_ADD_KEYPTR(hh, seen, r->label, strlen(r->label), r);
			continue;
		}
		first->precise += r->precise;
		first->ambiguous += r->ambiguous;
		if (r->best > first->best) {
			first->best = r->best;
			first->best_sample = r->best_sample;
		}
		r->precise = r->ambiguous = 0;
	}
	HASH_CLEAR(hh, seen);
	return rc;
}

struct named {
	char *key;
	uint64_t count;
	const struct rp_sample *s;
	UT_hash_handle hh;
};

static int cmp_named(const void *a, const void *b)
{
	const struct named *x = *(struct named *const *)a, *y = *(struct named *const *)b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->key, y->key);
}

static void bump(struct named **h, const char *key, uint64_t count, const struct rp_sample *s)
{
	struct named *e;
	HASH_FIND_STR(*h, key, e);
	if (!e) {
		e = calloc(1, sizeof(*e));
		if (!e || !(e->key = strdup(key))) {
			free(e);
			return;
		}
		e->s = s;
		HASH_ADD_KEYPTR(hh, *h, e->key, strlen(e->key), e);
	}
	e->count += count;
}

static struct named **sorted(struct named *h, size_t *n)
{
	*n = HASH_COUNT(h);
	struct named **v = malloc((*n ? *n : 1) * sizeof(*v));
	size_t i = 0;
	struct named *e, *t;
	if (!v)
		return NULL;
	HASH_ITER(hh, h, e, t)
		v[i++] = e;
	qsort(v, *n, sizeof(*v), cmp_named);
	return v;
}

static void free_named(struct named **h)
{
	struct named *e, *t;
	HASH_ITER(hh, *h, e, t) {
		HASH_DEL(*h, e);
		free(e->key);
		free(e);
	}
}

static void free_rows(struct path_row *rows, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++)
		free(rows[i].label);
	free(rows);
}

static void print_line(struct rp_ctx *c, const struct rp_sample *s, FILE *out)
{
	struct bin_symbol sym;
	if (!s || !s->mod || !s->mod->bin)
		return;
	if (bin_symbolize(s->mod->bin, s->vaddr, &sym) >= -1 && sym.file)
		fprintf(out, "  (%s:%d)", rp_base_name(sym.file), sym.line);
}

static void header(struct rp_ctx *c, FILE *out)
{
	const struct sf_meta *m = &c->ss->meta;
	double secs = (double)(m->end_ns - m->start_ns) / 1e9;
	fprintf(out, "icpp report: %" PRIu64 " samples of '%s' (%s at %" PRIu64 "%s, %s backend, %.1f s)\n",
		c->total, m->command, m->event, m->freq ? m->freq : m->period,
		m->freq ? " Hz" : " events/sample", m->backend == SF_BACKEND_BPF ? "bpf" : "perf", secs);
	fprintf(out, "pathmap %s: %u paths, %u nodes\n", c->o->pathmap, c->npaths, c->pm->nnodes);
	uint64_t lost = m->c.dropped + m->c.lost;
	if (lost)
		fprintf(out, "LOST while recording: %" PRIu64 " samples (%" PRIu64 " count map full, %" PRIu64
			" ring buffer), not in the figures below\n", lost, m->c.dropped, m->c.lost);
	if (m->c.no_user_regs)
		fprintf(out, "%" PRIu64 " samples had no user registers (kernel workers), not counted\n",
			m->c.no_user_regs);
	if (m->flags & SF_M_SKID)
		fprintf(out, "WARNING: event %s gives a precise IP but SP/BP from the interrupt: "
			"some CIDs may be wrong\n", m->event);
	if (m->flags & SF_M_NO_KERNEL)
		fprintf(out, "note: time in the kernel was not sampled (unprivileged perf backend)\n");
	fprintf(out, "\n");
	fprintf(out, "  precise    %5.1f%%  %10" PRIu64 "\n", pct(c->n_status[RP_PRECISE], c->total),
		c->n_status[RP_PRECISE]);
	fprintf(out, "  ambiguous  %5.1f%%  %10" PRIu64 "   split among candidate paths by training entries; marked ?\n",
		pct(c->n_status[RP_AMBIGUOUS], c->total), c->n_status[RP_AMBIGUOUS]);
	fprintf(out, "  missing    %5.1f%%  %10" PRIu64 "   no path for the CID; listed with their function\n",
		pct(c->n_status[RP_MISSING], c->total), c->n_status[RP_MISSING]);
}

int rp_text(struct rp_ctx *c, FILE *out)
{
	int top = c->o->top > 0 ? c->o->top : 20;
	struct path_row *rows = calloc(c->npaths ? c->npaths : 1, sizeof(*rows));
	struct named *missing = NULL, *ambig = NULL;
	char label[1200];

	if (!rows)
		return -1;
	header(c, out);
	for (uint32_t i = 0; i < c->npaths; i++)
		rows[i].id = i;
	for (uint32_t i = 0; i < c->ss->nrecs; i++) {
		const struct rp_sample *s = &c->samples[i];
		double n = (double)s->rec->count;
		if (s->status == RP_MISSING) {
			char lab[700];
			rp_missing_label(c, s, lab, sizeof(lab));
			if (s->why == RP_M_CID)
				snprintf(label, sizeof(label), "%s @ height %" PRId64 "\t%s", lab, s->height,
					 rp_missing_names[s->why]);
			else
				snprintf(label, sizeof(label), "%s\t%s", lab, rp_missing_names[s->why]);
			bump(&missing, label, s->rec->count, s);
			continue;
		}
		for (uint32_t k = 0; k < s->ncand; k++) {
			struct path_row *r = &rows[c->path_id[s->cand[k]]];
			double part = n * s->share[k];
			r->rep = s->cand[k];
			if (s->status == RP_PRECISE)
				r->precise += part;
			else
				r->ambiguous += part;
			if (part > r->best) {
				r->best = part;
				r->best_sample = s;
			}
		}
		if (s->status == RP_AMBIGUOUS) {
			snprintf(label, sizeof(label), "%u@%" PRId64, s->func, s->height);
			bump(&ambig, label, s->rec->count, s);
		}
	}
	if (merge_rows(c, rows, c->npaths) < 0) {
		free_rows(rows, c->npaths);
		free_named(&missing);
		free_named(&ambig);
		return -1;
	}
	qsort(rows, c->npaths, sizeof(*rows), cmp_rows);

	fprintf(out, "\nHot call paths (root first; leaf line of the hottest sample):\n");
	fprintf(out, "   total    precise  ambiguous  path\n");
	int shown = 0;
	for (uint32_t i = 0; i < c->npaths && shown < top; i++) {
		struct path_row *r = &rows[i];
		if (r->precise + r->ambiguous <= 0)
			break;
		fprintf(out, "  %5.1f%%  %9.0f  ", pct(r->precise + r->ambiguous, c->total), r->precise);
		if (r->ambiguous > 0)
			fprintf(out, "%9.1f?  ", r->ambiguous);
		else
			fprintf(out, "%9s   ", "-");
		fputs(r->label, out);
		print_line(c, r->best_sample, out);
		fputc('\n', out);
		shown++;
	}
	if (!shown)
		fprintf(out, "  (none)\n");

	size_t n;
	struct named **v = sorted(ambig, &n);
	if (v && n) {
		fprintf(out, "\nAmbiguous CIDs (each sample split among all candidates by training entries):\n");
		for (size_t i = 0; i < n && (int)i < top; i++) {
			const struct rp_sample *s = v[i]->s;
			fprintf(out, "  %5.1f%%  %9" PRIu64 "  %s @ height %" PRId64 ": %u candidate paths\n",
				pct(v[i]->count, c->total), v[i]->count,
				rp_func_label(c, s->func, label, sizeof(label)), s->height, s->ncand);
			for (uint32_t k = 0; k < s->ncand; k++) {
				fprintf(out, "              ? %5.1f%%  ", 100.0 * s->share[k]);
				pm_print_path(out, c->pm, s->cand[k], " > ", 0, bin_demangle);
				fputc('\n', out);
			}
		}
	}
	free(v);
	v = sorted(missing, &n);
	if (v && n) {
		fprintf(out, "\nMissing (samples without a path in the pathmap):\n");
		for (size_t i = 0; i < n && (int)i < top; i++) {
			char *tab = strchr(v[i]->key, '\t');
			if (tab)
				*tab = 0;
			fprintf(out, "  %5.1f%%  %9" PRIu64 "  %s   [%s]\n", pct(v[i]->count, c->total),
				v[i]->count, v[i]->key, tab ? tab + 1 : "");
		}
		if ((int)n > top)
			fprintf(out, "  ... %zu more\n", n - top);
	}
	free(v);
	free_named(&missing);
	free_named(&ambig);
	free_rows(rows, c->npaths);
	return ferror(out) ? -1 : 0;
}
