/* plt: samples taken in a PLT stub, charged to the callee the stub leads to.
 *
 * A stub runs between a call and the callee's first instruction, so its CFA
 * is the callee's entry CFA and its height the callee frame's height.  The
 * pathmap knows the callee's frames, not the stub (training enters
 * functions): the sample's candidates are the trained frames at that height
 * whose call instruction targets this stub.  Such a frame's callsite is the
 * direct call that ends at its return address (cs_addr + 1).  A call may also
 * reach the stub through a function that jumps to it (gcc's `jmp fgetc@plt`,
 * a tail call; jumps.c finds them): then the frame of another function than
 * the one called, at the call's height, is the callee's.  The index of
 * (module, stub, height) -> frames is built on the first stub sample.
 */
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "report/report.h"
#include "x86/reloc.h"

struct plt_key {
	uint32_t pm_module;          /* module of the calls and the stub */
	uint64_t stub;               /* the stub's first address */
	int64_t height;
};

struct plt_calls {
	struct plt_key key;
	uint32_t *nodes;
	uint32_t n, cap;
	UT_hash_handle hh;
};

/* The direct call whose return address is cs_addr + 1: its target, or 0. */
static uint64_t call_target(csh cs, cs_insn *insn, const struct bin_module *bin, uint64_t cs_addr)
{
	enum { CALL_REL32 = 5 };
	uint8_t code[CALL_REL32];
	uint64_t at = cs_addr + 1 - CALL_REL32;
	const uint8_t *p = code;
	size_t left = sizeof(code);
	if (cs_addr + 1 < CALL_REL32 || bin_read(bin, at, code, sizeof(code)) < 0 ||
	    !cs_disasm_iter(cs, &p, &left, &at, insn) || insn->id != X86_INS_CALL || left)
		return 0;
	return x86_branch_target(insn);
}

static int add_call(struct plt_calls **index, const struct plt_key *k, uint32_t node)
{
	struct plt_calls *e;
	HASH_FIND(hh, *index, k, sizeof(*k), e);
	if (!e) {
		if (!(e = calloc(1, sizeof(*e))))
			return -1;
		e->key = *k;
		HASH_ADD(hh, *index, key, sizeof(e->key), e);
	}
	if (e->n == e->cap) {
		uint32_t cap = e->cap ? 2 * e->cap : 4;
		uint32_t *nodes = realloc(e->nodes, cap * sizeof(uint32_t));
		if (!nodes)
			return -1;
		e->nodes = nodes;
		e->cap = cap;
	}
	e->nodes[e->n++] = node;
	return 0;
}

/* The stubs the call of node i goes through: its target, or the tail jumps of
 * the function it calls when node i is another function (the tail callee). */
static int index_node(struct rp_ctx *c, csh cs, cs_insn *insn, uint32_t i)
{
	const struct pm_node *nd = &c->pm->nodes[i];
	const struct pm_function *fn = &c->pm->funcs[nd->func];
	struct rp_module *mod;
	const uint64_t *stubs;
	size_t nstubs;
	struct plt_key k;
	memset(&k, 0, sizeof(k));
	k.pm_module = nd->cs_module;
	k.height = nd->height;
	if (nd->cs_module == PM_NONE || !(mod = rp_module_of_pm(c, nd->cs_module)))
		return 0;
	uint64_t t = call_target(cs, insn, mod->bin, nd->cs_addr);
	if (!t)
		return 0;
	if (bin_call_stub(mod->bin, t, &k.stub, NULL))
		return add_call(&c->plt_calls, &k, i);
	if (fn->module == nd->cs_module && fn->addr == t)
		return 0;
	stubs = rp_stubs_jumped_to(c, mod, t, &nstubs);
	for (size_t j = 0; j < nstubs; j++) {
		k.stub = stubs[j];
		if (add_call(&c->plt_calls, &k, i) < 0)
			return -1;
	}
	return 0;
}

static int build_index(struct rp_ctx *c)
{
	csh cs;
	if (!x86_open(&cs))
		return -1;
	cs_insn *insn = cs_malloc(cs);
	int rc = insn ? 0 : -1;
	for (uint32_t i = 0; i < c->pm->nnodes && rc == 0; i++)
		rc = index_node(c, cs, insn, i);
	if (insn)
		cs_free(insn, 1);
	cs_close(&cs);
	return rc;
}

const uint32_t *rp_plt_lookup(struct rp_ctx *c, const struct rp_module *mod, uint64_t vaddr,
			      int64_t height, size_t *n)
{
	struct plt_key k;
	struct plt_calls *e;
	*n = 0;
	memset(&k, 0, sizeof(k));
	if (mod->pm_module == PM_NONE || !bin_call_stub(mod->bin, vaddr, &k.stub, NULL))
		return NULL;
	if (!c->plt_indexed) {
		c->plt_indexed = true;
		if (build_index(c) < 0)
			fprintf(stderr, "icpp report: warning: out of memory indexing calls "
				"through PLT stubs; samples in them may be reported as missing\n");
	}
	k.pm_module = mod->pm_module;
	k.height = height;
	HASH_FIND(hh, c->plt_calls, &k, sizeof(k), e);
	if (!e)
		return NULL;
	*n = e->n;
	return e->nodes;
}

void rp_plt_free(struct rp_ctx *c)
{
	struct plt_calls *e, *t;
	HASH_ITER(hh, c->plt_calls, e, t) {
		HASH_DEL(c->plt_calls, e);
		free(e->nodes);
		free(e);
	}
}
