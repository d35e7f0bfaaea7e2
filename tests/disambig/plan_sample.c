/* The plan-file tests' sample pathmap, sample plan and round-trip check
 * (plan_sample.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/disambig/plan_sample.h"
#include "util/fileio.h"

const uint8_t PST_ID[4] = {0x12, 0x34, 0x56, 0x78};

struct pathmap *pst_sample(void)
{
	struct pathmap *pm = pm_new();
	uint32_t m = pm_add_module(pm, "/usr/bin/prog", PST_ID, sizeof(PST_ID));
	uint32_t lib = pm_add_module(pm, "/lib/libc.so.6", NULL, 0);
	const char *names[] = {"M", "A", "E", "D", "B", "C", "G"};
	uint32_t f[7];
	for (int i = 0; i < 7; i++)
		f[i] = pm_add_function(pm, m, 0x1000 * (i + 1), 0x100, names[i]);
	pm_add_function(pm, lib, 0x27000, 0x200, "__libc_start_call_main");
	enum { M, A, E, D, B, C, G };
#define CS(fn, k) (0x1000 * ((fn) + 1) + 0x10 * (k))
	int64_t size[] = {48, 32, 32, 16, 64, 80, 16};
	uint32_t r = pm_add_node(pm, PM_NONE, f[M], lib, 0x27100, 100, 1);
	uint32_t a = pm_add_node(pm, r, f[A], m, CS(M, 1), 100 + size[M], 5);
	uint32_t e = pm_add_node(pm, r, f[E], m, CS(M, 2), 100 + size[M], 5);
	pm_add_node(pm, a, f[D], m, CS(A, 1), 100 + size[M] + size[A], 50);
	pm_add_node(pm, e, f[D], m, CS(E, 1), 100 + size[M] + size[E], 70);
	uint32_t b = pm_add_node(pm, r, f[B], m, CS(M, 3), 100 + size[M], 3);
	uint32_t c = pm_add_node(pm, r, f[C], m, CS(M, 4), 100 + size[M], 3);
	uint32_t bc = pm_add_node(pm, b, f[C], m, CS(B, 1), 100 + size[M] + size[B], 2);
	uint32_t cb = pm_add_node(pm, c, f[B], m, CS(C, 1), 100 + size[M] + size[C], 2);
	pm_add_node(pm, bc, f[G], m, CS(C, 2), 100 + size[M] + size[B] + size[C], 9);
	pm_add_node(pm, cb, f[G], m, CS(B, 2), 100 + size[M] + size[B] + size[C], 9);
#undef CS
	/* a frame whose callsite is unknown */
	pm_add_node(pm, r, f[G], PM_NONE, 0, 100 + size[M] + 8, 1);
	return pm;
}

char *pst_plan_text(size_t *len)
{
	static const char text[] =
		"icpp-plan 1\n"
		"# written by hand for the tests; see docs/plan-format.md\n"
		"unit functions\n"
		"seed 7\n"
		"paths 12\n"
		"precise-paths 8 12\n"
		"weight 159\n"
		"precise-weight 30 159\n"
		"growth 1.171875 48\n"
		"code-bytes 880\n"
		"left unsolved functions 2\n"
		"left crowded edges 1\n"
		"module 0 12345678 /usr/bin/prog\n"
		"module 1 - /lib/libc.so.6\n"
		"pad 0 0x1000 16 M\n"
		"pad 0 0x2000 32 A\n"
		"pad 1 0x27000 16 __libc_start_call_main\n"
		"wrap 0 0x1010 16\n"
		"clone 0 0 0x4000 0 0x2010 0\n"
		"clone 1 0 0x6000 0 0x1040 16\n"
		"clone-wrap 1 0 0x6010 32\n"
		"clone-wrap 1 0 0x6020 0\n"
		"clone 2 0 0x5000 0 0x6010 0 in 1\n"
		"clone 3 0 0x9000 0 0x8020 0 tail\n"
		"end 10\n";
	*len = sizeof(text) - 1;
	return strdup(text);
}

struct pathmap *pst_sample_tails(void)
{
	struct pathmap *pm = pst_sample();
	uint32_t t = pm_add_function(pm, 0, 0x8000, 0x100, "T");
	uint32_t u = pm_add_function(pm, 0, 0x9000, 0x100, "U");
	pm_add_node(pm, 0, t, 0, 0x1050, 148, 4);       /* M's call of T */
	pm_add_node(pm, 0, u, 0, 0x1050, 148, 4);       /* T's tail call of U */
	return pm;
}

int pst_bridge(const struct pathmap *pm, struct da_bridge *br)
{
	size_t len;
	char *text = pst_plan_text(&len), err[256];
	struct da_pm_plan plan;
	struct da_capability cap;
	da_capability_default(&cap);
	cap.clone = true;
	cap.tail_plan = &plan;
	if (!text || da_plan_parse("sample", text, len, pm, &plan, err, sizeof(err)) < 0) {
		free(text);
		return -1;
	}
	int rc = da_from_pathmap(pm, &cap, DA_UNIT_FUNCTIONS, br, err, sizeof(err));
	da_pm_plan_free(&plan);
	free(text);
	return rc;
}

static bool one_line(const char *err)
{
	return err[0] && !strchr(err, '\n');
}

static bool same_summary(const struct da_pm_summary *a, const struct da_pm_summary *b)
{
	char ga[64], gb[64];
	/* the file keeps the ratio to 6 decimals */
	snprintf(ga, sizeof(ga), "%.6f", a->max_growth);
	snprintf(gb, sizeof(gb), "%.6f", b->max_growth);
	return a->paths == b->paths && a->precise_before == b->precise_before &&
	       a->precise_after == b->precise_after && a->weight == b->weight &&
	       a->precise_weight_before == b->precise_weight_before &&
	       a->precise_weight_after == b->precise_weight_after && !strcmp(ga, gb) &&
	       a->max_growth_bytes == b->max_growth_bytes && a->code_bytes == b->code_bytes &&
	       a->seed == b->seed && a->unit == b->unit && !memcmp(a->left_by, b->left_by, sizeof(a->left_by));
}

static bool same_plan(const struct da_pm_plan *a, const struct da_pm_plan *b)
{
	if (a->npads != b->npads || a->nwraps != b->nwraps || a->nclones != b->nclones ||
	    a->nclone_wraps != b->nclone_wraps || !same_summary(&a->summary, &b->summary))
		return false;
	for (uint32_t i = 0; i < a->npads; i++)
		if (a->pads[i].func != b->pads[i].func || a->pads[i].bytes != b->pads[i].bytes)
			return false;
	for (uint32_t i = 0; i < a->nwraps; i++)
		if (a->wraps[i].module != b->wraps[i].module || a->wraps[i].addr != b->wraps[i].addr ||
		    a->wraps[i].bytes != b->wraps[i].bytes)
			return false;
	for (uint32_t i = 0; i < a->nclones; i++) {
		const struct da_pm_clone *x = &a->clones[i], *y = &b->clones[i];
		if (x->func != y->func || x->cs_module != y->cs_module || x->cs_addr != y->cs_addr ||
		    x->pad != y->pad || x->parent != y->parent || x->promote != y->promote ||
		    x->xcall != y->xcall || x->tail != y->tail)
			return false;
	}
	for (uint32_t i = 0; i < a->nclone_wraps; i++) {
		const struct da_pm_clone_wrap *x = &a->clone_wraps[i], *y = &b->clone_wraps[i];
		if (x->clone != y->clone || x->module != y->module || x->addr != y->addr ||
		    x->bytes != y->bytes)
			return false;
	}
	return true;
}

/* Write plan to file and read the bytes back; 0 or -1 (why set). */
static int write_back(const struct pathmap *pm, const char *file, const struct da_pm_plan *plan,
		      void **buf, size_t *len, char *why, size_t whylen)
{
	char err[512];
	if (da_plan_write(file, pm, plan, err, sizeof(err)) < 0 ||
	    read_file(file, buf, len, err, sizeof(err)) < 0) {
		snprintf(why, whylen, "a parsed plan does not write: %s", err);
		return -1;
	}
	return 0;
}

/* The plan as icpp plan --evaluate reads it (its heights, metrics and costs,
 * the hot code's too): taken, or refused with one line; 0 or -1 (why set). */
static int evaluate(const struct da_bridge *br, const struct da_plan *dp, char *why,
		    size_t whylen)
{
	struct da_options o;
	struct da_result r;
	char err[512] = "";
	da_options_default(&o);
	o.allow_clone = true;
	o.hot_code_weight = 1.0 / 16;
	if (da_evaluate(br->prob, &o, dp, &r, err, sizeof(err)) == 0) {
		da_result_free(&r);
		return 0;
	}
	if (one_line(err))
		return 0;
	snprintf(why, whylen, "da_evaluate refused without one line: \"%s\"", err);
	return -1;
}

/* The plan's consumers accept it or refuse it with one line. */
static int consume(const struct pathmap *pm, const struct da_bridge *br,
		   const struct da_pm_plan *plan, char *why, size_t whylen)
{
	char err[512] = "";
	struct da_plan dp;
	if (da_pm_plan_to(br, plan, &dp, err, sizeof(err)) == 0) {
		int rc = evaluate(br, &dp, why, whylen);
		da_plan_free(&dp);
		if (rc < 0)
			return -1;
	} else if (!one_line(err)) {
		snprintf(why, whylen, "da_pm_plan_to refused without one line: \"%s\"", err);
		return -1;
	}
	struct pathmap *q = NULL;
	err[0] = 0;
	if (da_predict_pathmap(pm, plan, &q, err, sizeof(err)) < 0) {
		if (q || !one_line(err)) {
			snprintf(why, whylen, "da_predict_pathmap refused without one line: \"%s\"", err);
			return -1;
		}
		return 0;
	}
	int rc = pm_validate(q, err, sizeof(err));
	pm_free(q);
	if (rc < 0) {
		snprintf(why, whylen, "the predicted pathmap is invalid: %s", err);
		return -1;
	}
	return 0;
}

int pst_check(const struct pathmap *pm, const struct da_bridge *br, const char *file,
	      const char *text, size_t len, char *why, size_t whylen)
{
	char err[512] = "";
	struct da_pm_plan p1, p2;
	if (da_plan_parse(file, text, len, pm, &p1, err, sizeof(err)) < 0) {
		if (!one_line(err) || strncmp(err, file, strlen(file))) {
			snprintf(why, whylen, "refused without one line naming the file: \"%s\"", err);
			return -1;
		}
		if (p1.npads || p1.nwraps || p1.nclones || p1.nclone_wraps) {
			snprintf(why, whylen, "refused, but records left in the plan");
			return -1;
		}
		return 0;
	}
	void *t2 = NULL, *t3 = NULL;
	size_t l2, l3;
	int rc = -1;
	if (write_back(pm, file, &p1, &t2, &l2, why, whylen) < 0)
		goto out1;
	if (da_plan_parse(file, t2, l2, pm, &p2, err, sizeof(err)) < 0) {
		snprintf(why, whylen, "a written plan does not read back: %s", err);
		goto out1;
	}
	if (!same_plan(&p1, &p2))
		snprintf(why, whylen, "a plan read back differs from the one written");
	else if (write_back(pm, file, &p2, &t3, &l3, why, whylen) == 0) {
		if (l2 != l3 || memcmp(t2, t3, l2))
			snprintf(why, whylen, "a plan read back writes other bytes");
		else
			rc = consume(pm, br, &p1, why, whylen) < 0 ? -1 : 1;
	}
	da_pm_plan_free(&p2);
out1:
	free(t2);
	free(t3);
	da_pm_plan_free(&p1);
	return rc;
}
