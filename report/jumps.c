/* jumps: the direct jumps between the functions of a module, decoded once
 * per module (on the first question about it).  Two kinds matter to report:
 *
 * Into another function, past its first byte.  glibc's mempcpy sets its
 * return value and jumps to memmove + 3; training records mempcpy's frame
 * (hooked at its entry), and memmove's code then runs in that frame.  A
 * sample there has its IP in memmove, but its frame may be mempcpy's: the
 * candidates of (memmove, height) are joined by those of (mempcpy, height)
 * (report.c), and --validate takes either (validate.c).  A .cold fragment's
 * jumps back into its owner, and the owner's into it, are not such (the
 * fragment runs in the owner's frame: its entry CFA is not rsp + 8).
 *
 * Into a PLT stub: a tail call out of the module (gcc's `jmp fgetc@plt`),
 * which plt.c follows from a call of the function that makes it.
 */
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "report/report.h"
#include "x86/reloc.h"

/* Function starts, keyed by a function start. */
struct addr_list {
	uint64_t key;
	uint64_t *v;
	uint32_t n;
	UT_hash_handle hh;
};

struct module_jumps {
	const struct rp_module *mod;
	struct addr_list *jumpers;   /* function -> the functions that jump into it */
	struct addr_list *stubs;     /* function -> the PLT stubs it jumps to */
	UT_hash_handle hh;
};

static bool is_fragment(struct bin_module *m, const struct bin_function *f)
{
	struct bin_cfa cfa;
	return bin_cfa_at(m, f->addr, &cfa) == 0 && !(cfa.reg == BIN_CFA_RSP && cfa.offset == 8);
}

/* Add a to the list of key (once). */
static int add_addr(struct addr_list **set, uint64_t key, uint64_t a)
{
	struct addr_list *l;
	HASH_FIND(hh, *set, &key, sizeof(key), l);
	if (!l) {
		if (!(l = calloc(1, sizeof(*l))))
			return -1;
		l->key = key;
		HASH_ADD(hh, *set, key, sizeof(l->key), l);
	}
	for (uint32_t i = 0; i < l->n; i++)
		if (l->v[i] == a)
			return 0;
	uint64_t *v = realloc(l->v, (l->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	l->v = v;
	l->v[l->n++] = a;
	return 0;
}

static void free_lists(struct addr_list **set)
{
	struct addr_list *l, *t;
	HASH_ITER(hh, *set, l, t) {
		HASH_DEL(*set, l);
		free(l->v);
		free(l);
	}
}

/* The direct jumps of function i out of itself. */
static int scan_function(csh cs, cs_insn *insn, struct bin_module *m, const struct bin_function *all,
			 size_t i, const bool *fragment, struct module_jumps *mj)
{
	const struct bin_function *f = &all[i];
	uint8_t *code = malloc(f->size);
	if (!code)
		return -1;
	const uint8_t *p = code;
	size_t left = bin_read(m, f->addr, code, f->size) == 0 ? f->size : 0;
	uint64_t at = f->addr, stub;
	int rc = 0;
	while (left && rc == 0) {
		if (!x86_disasm_iter(cs, &p, &left, &at, insn)) {
			p++, left--, at++;      /* data or padding: resync */
			continue;
		}
		uint64_t t = insn->id != X86_INS_CALL ? x86_branch_target(insn) : 0;
		if (!t || (t >= f->addr && t < f->addr + f->size))
			continue;
		const struct bin_function *g = bin_function_at(m, t);
		if (bin_plt_stub(m, t, &stub, NULL))
			rc = add_addr(&mj->stubs, f->addr, stub);
		else if (g && g->addr != t && !fragment[i] && !fragment[g - all])
			rc = add_addr(&mj->jumpers, g->addr, f->addr);
	}
	free(code);
	return rc;
}

static void scan_module(struct bin_module *m, struct module_jumps *mj)
{
	csh cs;
	if (!x86_open(&cs))
		return;
	cs_insn *insn = cs_malloc(cs);
	size_t n;
	const struct bin_function *f = bin_functions(m, &n);
	bool *fragment = calloc(n + 1, sizeof(bool));
	bool oom = !insn || !fragment;
	for (size_t i = 0; !oom && i < n; i++)
		fragment[i] = is_fragment(m, &f[i]);
	for (size_t i = 0; !oom && i < n; i++)
		oom = scan_function(cs, insn, m, f, i, fragment, mj) < 0;
	if (oom)
		fprintf(stderr, "icpp report: warning: out of memory finding the jumps between the "
			"functions of %s; samples in them may be missing\n", bin_path(m));
	if (insn)
		cs_free(insn, 1);
	free(fragment);
	cs_close(&cs);
}

static struct module_jumps *jumps_of(struct rp_ctx *c, const struct rp_module *mod)
{
	struct module_jumps *mj;
	HASH_FIND(hh, c->jumps, &mod, sizeof(mod), mj);
	if (!mj && (mj = calloc(1, sizeof(*mj)))) {
		mj->mod = mod;
		scan_module(mod->bin, mj);
		HASH_ADD(hh, c->jumps, mod, sizeof(mj->mod), mj);
	}
	return mj;
}

static const uint64_t *list_of(struct addr_list *set, uint64_t key, size_t *n)
{
	struct addr_list *l;
	HASH_FIND(hh, set, &key, sizeof(key), l);
	*n = l ? l->n : 0;
	return l ? l->v : NULL;
}

const uint64_t *rp_jumpers_into(struct rp_ctx *c, const struct rp_module *mod, uint64_t func,
				size_t *n)
{
	struct module_jumps *mj = jumps_of(c, mod);
	*n = 0;
	return mj ? list_of(mj->jumpers, func, n) : NULL;
}

const uint64_t *rp_stubs_jumped_to(struct rp_ctx *c, const struct rp_module *mod, uint64_t func,
				   size_t *n)
{
	struct module_jumps *mj = jumps_of(c, mod);
	*n = 0;
	return mj ? list_of(mj->stubs, func, n) : NULL;
}

void rp_jumps_free(struct rp_ctx *c)
{
	struct module_jumps *mj, *t;
	HASH_ITER(hh, c->jumps, mj, t) {
		free_lists(&mj->jumpers);
		free_lists(&mj->stubs);
		HASH_DEL(c->jumps, mj);
		free(mj);
	}
}
