/* validate: compare each inferred path with the sample's real stack.
 *
 * The truth is the frame-pointer walk recorded with the sample (bpf_get_stackid
 * or PERF_SAMPLE_CALLCHAIN: the IP, then the return address above each saved
 * BP), corrected and cut where a frame-pointer walk cannot be trusted:
 *   - leaf whose CFA rule is SP-based (prologue, epilogue, a function without
 *     a frame pointer): BP still belongs to an older frame, so the walk skips
 *     the caller.  Its return address is the stack word at CFA - 8, which
 *     record copied (the first words at SP): it is inserted.  The walk then
 *     goes on only if BP lies at or above the leaf's CFA (the leaf did not
 *     reuse BP) and the caller keeps a frame pointer at that call;
 *   - a return address into a function whose CFA rule at the call is not
 *     BP-based: that function is true, what the walk read above it is not
 *     (its BP is not a frame pointer): the truth ends there.
 * Frames through functions the pathmap does not know (never entered while
 * training) are left out of the comparison.  The truth, innermost first, must
 * then be a prefix of the candidate's function sequence read from the leaf
 * (a frame of the candidate may also be of a function that jumps into the
 * walk's function there: jumps.c):
 *   precise                  one candidate, and it matches;
 *   ambiguous, contains truth several candidates, one of them matches;
 *   incorrect                no candidate matches;
 *   missing                  the CID has no candidate.
 */
#include "report/report.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_TRUTH (SF_MAX_STACK + 2)

static const char *const class_names[RP_V_NR] = {
	"precise (correct)", "ambiguous, contains the truth", "incorrect", "missing",
	"no real stack recorded",
};

struct truth {
	uint32_t f[MAX_TRUTH];       /* pathmap functions, innermost first */
	uint32_t n;
	bool truncated;
	uint32_t unknown;            /* frames left out: not in the pathmap */
	uint64_t ra_leaf;            /* inserted caller return address, 0 if none */
};

/* The pathmap function of a return address's call (ra - 1), PM_NONE when
 * unknown; *fp tells whether that caller keeps a frame pointer there. */
static uint32_t caller_of(struct rp_ctx *c, uint32_t tgid, uint64_t ra, bool *fp, bool *resolved)
{
	struct rp_location loc;
	*fp = false;
	*resolved = false;
	if (ra == 0 || rp_locate(c, tgid, ra - 1, &loc) || !loc.fn)
		return PM_NONE;
	*resolved = true;
	*fp = loc.cfa_rc == 0 && loc.rule.reg == BIN_CFA_RBP && loc.rule.offset == 16;
	if (loc.mod->pm_module == PM_NONE)
		return PM_NONE;
	return pm_function_at(c->pm, loc.mod->pm_module, loc.fn->addr);
}

static void push(struct truth *t, uint32_t f)
{
	if (f == PM_NONE) {
		t->unknown++;
		return;
	}
	if (t->n < MAX_TRUTH)
		t->f[t->n++] = f;
}

static int build_truth(struct rp_ctx *c, const struct rp_sample *s, struct truth *t)
{
	const struct sf_record *r = s->rec;
	memset(t, 0, sizeof(*t));
	if (r->stack == SF_NONE)
		return -1;
	const struct sf_stack *st = &c->ss->stacks[r->stack];
	bool fp, ok;

	push(t, s->func);                   /* the leaf: the sample's own function */
	uint32_t i = 1;
	if (s->rule.reg == BIN_CFA_RSP) {
		int64_t k = s->rule.offset;
		int64_t slot = (k - 8) / 8;
		if (k < 8 || (k - 8) % 8 || r->nwords == 0 || slot >= (int64_t)r->nwords) {
			t->truncated = true;
			return 0;
		}
		t->ra_leaf = r->words[slot];
		uint32_t f = caller_of(c, r->tgid, t->ra_leaf, &fp, &ok);
		if (!ok) {
			t->truncated = true;
			return 0;
		}
		push(t, f);
		/* BP must be the caller's frame pointer for the walk to go on. */
		bool bp_ok = (r->flags & SF_R_BP_VALID) && r->bp_off <= r->sp_off - k;
		if (!fp || !bp_ok) {
			t->truncated = true;
			return 0;
		}
	}
	for (; i < st->n; i++) {
		uint32_t f = caller_of(c, r->tgid, st->ips[i], &fp, &ok);
		if (!ok) {
			t->truncated = true;
			return 0;
		}
		push(t, f);
		if (!fp) {
			t->truncated = true;
			return 0;
		}
	}
	return 0;
}

/* Whether a frame of pathmap function f may be the walk's frame of pathmap
 * function truth: the same, or f jumps into truth's code (jumps.c: the walk
 * names the function its IP or return address is in, the frame may be the
 * jumper's). */
static bool same_frame(struct rp_ctx *c, uint32_t truth, uint32_t f)
{
	size_t nj;
	if (f == truth)
		return true;
	const struct pm_function *tf = &c->pm->funcs[truth];
	struct rp_module *mod = rp_module_of_pm(c, tf->module);
	const uint64_t *j = mod ? rp_jumpers_into(c, mod, tf->addr, &nj) : NULL;
	for (size_t i = 0; j && i < nj; i++)
		if (pm_function_at(c->pm, tf->module, j[i]) == f)
			return true;
	return false;
}

/* Is the truth a prefix of node's path read from the leaf? */
static bool matches(struct rp_ctx *c, uint32_t node, const struct truth *t)
{
	uint32_t k = 0, n = node;
	while (k < t->n) {
		if (n == PM_NONE)
			return false;
		if (!same_frame(c, t->f[k], c->pm->nodes[n].func))
			return false;
		k++;
		n = c->pm->nodes[n].parent;
	}
	return true;
}

static void print_truth(struct rp_ctx *c, const struct truth *t, FILE *out)
{
	char label[600];
	for (uint32_t k = t->n; k-- > 0;) {
		fputs(rp_func_label(c, t->f[k], label, sizeof(label)), out);
		if (k)
			fputs(" > ", out);
	}
	if (t->truncated)
		fputs("   (walk cut above the outermost frame shown)", out);
}

int rp_validate(struct rp_ctx *c, struct rp_validation *v, FILE *out)
{
	struct truth t;
	uint64_t with_unknown = 0;
	int examples = 0;

	memset(v, 0, sizeof(*v));
	for (uint32_t i = 0; i < c->ss->nrecs; i++) {
		const struct rp_sample *s = &c->samples[i];
		uint64_t n = s->rec->count;
		enum rp_vclass cl;
		if (s->status == RP_MISSING) {
			cl = RP_V_MISSING;
		} else if (build_truth(c, s, &t)) {
			cl = RP_V_NO_TRUTH;
		} else {
			bool any = false;
			for (uint32_t k = 0; k < s->ncand && !any; k++)
				any = matches(c, s->cand[k], &t);
			cl = !any ? RP_V_INCORRECT : s->status == RP_PRECISE ? RP_V_PRECISE : RP_V_AMBIG_OK;
			if (t.truncated)
				v->truncated += n;
			if (t.unknown)
				with_unknown += n;
			if (cl == RP_V_INCORRECT && examples < 10) {
				if (!examples)
					fprintf(out, "\nIncorrect samples (first 10):\n");
				examples++;
				char label[600];
				fprintf(out, "  %" PRIu64 " sample(s) at %s @ height %" PRId64 "\n", n,
					rp_func_label(c, s->func, label, sizeof(label)), s->height);
				for (uint32_t k = 0; k < s->ncand; k++) {
					fprintf(out, "    inferred: ");
					pm_print_path(out, c->pm, s->cand[k], " > ", 0, bin_demangle);
					fputc('\n', out);
				}
				fprintf(out, "    real:     ");
				print_truth(c, &t, out);
				fputc('\n', out);
			}
		}
		v->n[cl] += n;
	}
	uint64_t total = 0;
	for (int k = 0; k < RP_V_NR; k++)
		total += v->n[k];
	fprintf(out, "\nValidation against the real stacks (frame-pointer walk per sample):\n");
	for (int k = 0; k < RP_V_NR; k++)
		fprintf(out, "  %-30s %5.1f%%  %10" PRIu64 "\n", class_names[k],
			total ? 100.0 * (double)v->n[k] / (double)total : 0.0, v->n[k]);
	fprintf(out, "  compared on the frames a frame-pointer walk proves: %" PRIu64 " samples were cut at a "
		"frame without a frame pointer; %" PRIu64 " passed through functions the pathmap does "
		"not know (left out)\n", v->truncated, with_unknown);
	return ferror(out) ? -1 : 0;
}
