/* imports.c: stack-argument bounds of calls into other modules
 * (rw_bound_imports).
 *
 * A call through the PLT or a GOT slot reaches whichever definition of the
 * name the dynamic linker binds: in a library, or in b itself when a shared
 * object calls its own exported function.  b's analysis cannot see that code,
 * so such a call has only its caller's bound, which in a function without a
 * frame pointer is usually unknown or too large (zstd: 44% of its calls).
 * How many argument bytes a callee reads from the stack is a property of its
 * code, so it is read there, from every module that defines the name: which
 * definition symbol lookup picks does not matter when the largest is taken. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uthash.h>

#include "rewriter/internal.h"
#include "util/fileio.h"
#include "x86/reloc.h"

struct import {
	const char *name;            /* key: the symbol b imports */
	int32_t bound;               /* largest args_read of its definitions; -1 unknown */
	bool defined;                /* some module defines it */
	UT_hash_handle hh;
};

/* A definition found in a module's .dynsym. */
struct definition {
	struct import *imp;
	uint64_t addr;
	bool ifunc;                  /* addr is the resolver */
};

static bool leaves_binary(const struct rw_binary *b, const struct rw_call *rc)
{
	return rc->slot || bin_plt_stub(b->bin, rc->target, NULL, NULL);
}

/* A call refused only for its stack arguments, into a name of another module. */
static bool wants_callee_bound(const struct rw_binary *b, const struct rw_call *rc)
{
	return (rc->wrap_why == RW_WRAP_ARGS_UNKNOWN || rc->wrap_why == RW_WRAP_ARGS_LARGE) &&
	       rc->target_name && leaves_binary(b, rc);
}

static int collect_imports(const struct rw_binary *b, struct import **set)
{
	for (size_t i = 0; i < b->ncalls; i++) {
		const struct rw_call *rc = &b->calls[i];
		struct import *imp;
		if (!wants_callee_bound(b, rc))
			continue;
		HASH_FIND_STR(*set, rc->target_name, imp);
		if (imp)
			continue;
		if (!(imp = calloc(1, sizeof(*imp))))
			return -1;
		imp->name = rc->target_name;
		HASH_ADD_KEYPTR(hh, *set, imp->name, strlen(imp->name), imp);
	}
	return 0;
}

struct found {
	struct import *set;
	struct definition *v;
	int n;
};

static int add_definition(void *ctx, const char *name, uint64_t value, bool ifunc)
{
	struct found *f = ctx;
	struct import *imp;
	HASH_FIND_STR(f->set, name, imp);
	if (!imp)
		return 0;
	struct definition *v = realloc(f->v, (size_t)(f->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	f->v = v;
	v[f->n++] = (struct definition){imp, value, ifunc};
	return 0;
}

/* The defined, exported functions of path that b imports (libelf only: most
 * modules define none and are never analysed).  Count, or -1 unreadable.  A
 * module that no longer exists (a program the training run built and
 * deleted) defines nothing the rewritten program can call: 0. */
static int find_definitions(const char *path, struct import *set, struct definition **out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	struct found f = {set, *out, 0};
	int n = elf && rw_each_export(elf, add_definition, &f) == 0 ? f.n : -1;
	*out = f.v;
	if (elf)
		elf_end(elf);
	close(fd);
	return n;
}

int rw_ifunc_impls(const struct rw_binary *lib, csh cs, uint64_t resolver, uint32_t *impls,
		   uint32_t max)
{
	uint32_t fi = rw_func_index(lib, resolver);
	if (fi == RW_NONE)
		return -1;
	const struct rw_func *rf = &lib->funcs[fi];
	uint8_t *code = malloc(rf->size);
	if (!code || bin_read(lib->bin, rf->addr, code, rf->size) < 0) {
		free(code);
		return -1;
	}
	const uint8_t *p = code;
	size_t left = rf->size;
	uint64_t addr = rf->addr;
	cs_insn *insn = cs_malloc(cs);
	int n = 0;
	while (insn && n >= 0 && x86_disasm_iter(cs, &p, &left, &addr, insn)) {
		if (insn->id != X86_INS_LEA || !x86_rip_target(insn))
			continue;
		uint32_t impl = rw_func_index(lib, x86_rip_target(insn));
		bool seen = false;
		for (int i = 0; i < n && !seen; i++)
			seen = impls[i] == impl;
		if (impl == RW_NONE || (!seen && (uint32_t)n == max))
			n = -1;
		else if (!seen)
			impls[n++] = impl;
	}
	cs_free(insn, 1);
	free(code);
	return insn && n > 0 && left == 0 ? n : -1;
}

/* An IFUNC's bound: the largest of the implementations its resolver may
 * return (rw_ifunc_impls), or -1. */
static int32_t ifunc_bound(const struct rw_binary *lib, csh cs, uint64_t resolver)
{
	uint32_t impls[RW_MAX_IFUNC_IMPLS];
	int n = rw_ifunc_impls(lib, cs, resolver, impls, RW_MAX_IFUNC_IMPLS);
	int32_t bound = n > 0 ? 0 : -1;
	for (int i = 0; i < n && bound >= 0; i++) {
		int32_t k = lib->funcs[impls[i]].args_read;
		bound = k < 0 ? -1 : bound > k ? bound : k;
	}
	return bound;
}

static void merge_bound(struct import *imp, int32_t k)
{
	imp->bound = !imp->defined ? k : (imp->bound < 0 || k < 0) ? -1 : imp->bound > k ? imp->bound : k;
	imp->defined = true;
}

static bool build_id_matches(const struct rw_binary *lib, const uint8_t *id, uint32_t len)
{
	const uint8_t *have;
	size_t n = bin_build_id(lib->bin, &have);
	return !id || (n == len && !memcmp(have, id, len));
}

/* Merge the bounds of every definition in module `path` into the set. */
static int scan_module(struct rw_binary *b, const char *path, const uint8_t *id, uint32_t id_len,
		       struct import *set, csh cs, char *err, size_t errlen)
{
	struct definition *defs = NULL;
	int n = find_definitions(path, set, &defs);
	if (n < 0) {
		errmsg(err, errlen, "cannot read %s", path);
		return -1;
	}
	struct rw_binary *lib = NULL;
	int ret = 0;
	if (n > 0) {
		char e2[512];
		lib = same_file(path, b->path) ? b : rw_open_mode(path, false, e2, sizeof(e2));
		if (!lib) {
			errmsg(err, errlen, "%s", e2);
			ret = -1;
		} else if (!build_id_matches(lib, id, id_len)) {
			errmsg(err, errlen, "%s is not the build that was trained", path);
			ret = -1;
		}
	}
	for (int i = 0; i < n && !ret; i++) {
		uint32_t fi = rw_func_index(lib, defs[i].addr);
		int32_t k = defs[i].ifunc ? ifunc_bound(lib, cs, defs[i].addr)
			  : fi == RW_NONE ? -1 : lib->funcs[fi].args_read;
		merge_bound(defs[i].imp, k);
	}
	if (lib != b)
		rw_close(lib);
	free(defs);
	return ret;
}

static int apply_bounds(struct rw_binary *b, struct import *set)
{
	int changed = 0;
	for (size_t i = 0; i < b->ncalls; i++) {
		struct rw_call *rc = &b->calls[i];
		struct import *imp;
		if (!wants_callee_bound(b, rc))
			continue;
		HASH_FIND_STR(set, rc->target_name, imp);
		if (!imp || !imp->defined || imp->bound < 0)
			continue;
		rw_call_bound_args(rc, imp->bound);
		changed += rc->wrap_why == RW_WRAP_OK;
	}
	return changed;
}

int rw_bound_imports(struct rw_binary *b, const char *const *mods, const uint8_t *const *ids,
		     const uint32_t *id_lens, size_t nmods, char *err, size_t errlen)
{
	struct import *set = NULL, *imp, *tmp;
	csh cs;
	int ret = -1;
	if (!x86_open(&cs)) {
		errmsg(err, errlen, "cannot start the disassembler");
		return -1;
	}
	elf_version(EV_CURRENT);
	if (collect_imports(b, &set) < 0) {
		errmsg(err, errlen, "out of memory");
		goto out;
	}
	for (size_t i = 0; set && i < nmods; i++) {
		if (mods[i][0] != '/')
			continue;    /* [vdso] and the like: nothing is linked against them */
		if (scan_module(b, mods[i], ids ? ids[i] : NULL, id_lens ? id_lens[i] : 0, set, cs,
				err, errlen) < 0)
			goto out;
	}
	ret = apply_bounds(b, set);
out:
	HASH_ITER(hh, set, imp, tmp) {
		HASH_DEL(set, imp);
		free(imp);
	}
	cs_close(&cs);
	return ret;
}
