/* inside: samples in code that another function jumps into.
 *
 * glibc's mempcpy sets its return value and jumps to memmove + 3; training
 * records mempcpy's frame (hooked at its entry), and memmove's code then runs
 * in that frame.  A sample there has its IP in memmove, but the frame it
 * belongs to may be mempcpy's: the candidates of (memmove, height) are
 * joined by those of (mempcpy, height).  The jumpers into each function of a
 * module are found once per module, by decoding all of its functions: every
 * direct jmp/jcc that lands inside another function, past its first byte
 * (not in a PLT stub: a jump there is a tail call, plt.c).
 * A .cold fragment's jumps back into its owner, and the owner's into it, are
 * not such (the fragment runs in the owner's frame: its entry CFA is not
 * rsp + 8).
 */
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "report/report.h"
#include "x86/reloc.h"

struct jumpers {
	uint64_t target;             /* the start of the function jumped into */
	uint64_t *from;              /* starts of the functions that jump into it */
	uint32_t n;
	UT_hash_handle hh;
};

struct inside_index {
	const struct rp_module *mod;
	struct jumpers *by_target;
	UT_hash_handle hh;
};

static bool is_fragment(struct bin_module *m, const struct bin_function *f)
{
	struct bin_cfa cfa;
	return bin_cfa_at(m, f->addr, &cfa) == 0 && !(cfa.reg == BIN_CFA_RSP && cfa.offset == 8);
}

static int add_jumper(struct jumpers **by_target, uint64_t target, uint64_t from)
{
	struct jumpers *j;
	HASH_FIND(hh, *by_target, &target, sizeof(target), j);
	if (!j) {
		if (!(j = calloc(1, sizeof(*j))))
			return -1;
		j->target = target;
		HASH_ADD(hh, *by_target, target, sizeof(j->target), j);
	}
	for (uint32_t i = 0; i < j->n; i++)
		if (j->from[i] == from)
			return 0;
	uint64_t *v = realloc(j->from, (j->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	j->from = v;
	j->from[j->n++] = from;
	return 0;
}

/* The direct branches of f into the inside of other functions (not into a
 * fragment: its owner jumps in past its start, gcc's nop before a landing
 * pad, and it runs in the owner's frame, as the pathmap says). */
static int scan_function(csh cs, cs_insn *insn, struct bin_module *m, const struct bin_function *f,
			 const bool *fragment, struct jumpers **by_target)
{
	size_t nf;
	const struct bin_function *all = bin_functions(m, &nf);
	uint8_t *code = malloc(f->size);
	if (!code)
		return -1;
	const uint8_t *p = code;
	size_t left = bin_read(m, f->addr, code, f->size) == 0 ? f->size : 0;
	uint64_t at = f->addr;
	int rc = 0;
	while (left && rc == 0) {
		if (!cs_disasm_iter(cs, &p, &left, &at, insn)) {
			p++, left--, at++;      /* data or padding: resync */
			continue;
		}
		uint64_t t = insn->id != X86_INS_CALL ? x86_branch_target(insn) : 0;
		if (!t || (t >= f->addr && t < f->addr + f->size))
			continue;
		const struct bin_function *g = bin_function_at(m, t);
		if (g && g->addr != t && g != f && !fragment[g - all] && !bin_plt_stub(m, t, NULL, NULL))
			rc = add_jumper(by_target, g->addr, f->addr);
	}
	free(code);
	return rc;
}

static struct jumpers *index_module(struct bin_module *m)
{
	csh cs;
	struct jumpers *by_target = NULL;
	if (!x86_open(&cs))
		return NULL;
	cs_insn *insn = cs_malloc(cs);
	size_t n;
	const struct bin_function *f = bin_functions(m, &n);
	bool *fragment = calloc(n + 1, sizeof(bool));
	bool oom = !insn || !fragment;
	for (size_t i = 0; !oom && i < n; i++)
		fragment[i] = is_fragment(m, &f[i]);
	for (size_t i = 0; !oom && i < n; i++)
		oom = !fragment[i] && scan_function(cs, insn, m, &f[i], fragment, &by_target) < 0;
	if (oom)
		fprintf(stderr, "icpp report: warning: out of memory finding the jumps into "
			"functions of %s; samples in them may be missing\n", bin_path(m));
	if (insn)
		cs_free(insn, 1);
	free(fragment);
	cs_close(&cs);
	return by_target;
}

const uint64_t *rp_jumpers_into(struct rp_ctx *c, const struct rp_module *mod, uint64_t func,
				size_t *n)
{
	struct inside_index *ix;
	*n = 0;
	HASH_FIND(hh, c->inside, &mod, sizeof(mod), ix);
	if (!ix) {
		if (!(ix = calloc(1, sizeof(*ix))))
			return NULL;
		ix->mod = mod;
		ix->by_target = index_module(mod->bin);
		HASH_ADD(hh, c->inside, mod, sizeof(ix->mod), ix);
	}
	struct jumpers *j;
	HASH_FIND(hh, ix->by_target, &func, sizeof(func), j);
	if (!j)
		return NULL;
	*n = j->n;
	return j->from;
}

void rp_inside_free(struct rp_ctx *c)
{
	struct inside_index *ix, *t;
	HASH_ITER(hh, c->inside, ix, t) {
		struct jumpers *j, *u;
		HASH_ITER(hh, ix->by_target, j, u) {
			HASH_DEL(ix->by_target, j);
			free(j->from);
			free(j);
		}
		HASH_DEL(c->inside, ix);
		free(ix);
	}
}
