/* pathmap_print.c: how people see functions and paths. */
#include "pathmap/pathmap_int.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

static const char *file_name(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && slash[1] ? slash + 1 : path;
}

static void module_offset(const struct pathmap *pm, uint32_t module, uint64_t addr, char *buf,
			  size_t len)
{
	snprintf(buf, len, "%s+0x%" PRIx64,
		 module < pm->nmodules ? file_name(pm->modules[module].path) : "?", addr);
}

/* sym, through demangle, into buf. */
static const char *demangled(const char *sym, pm_demangle_fn demangle, char *buf, size_t len)
{
	const char *s = demangle ? demangle(sym, buf, len) : sym;
	if (s != buf)
		snprintf(buf, len, "%s", s ? s : sym);
	return buf;
}

const char *pm_function_label(const struct pathmap *pm, uint32_t func, pm_demangle_fn demangle,
			      char *buf, size_t len)
{
	if (!len)
		return buf;
	if (func >= pm->nfuncs) {
		snprintf(buf, len, "?");
		return buf;
	}
	const struct pm_function *f = &pm->funcs[func];
	if (!f->name || !*f->name) {
		module_offset(pm, f->module, f->addr, buf, len);
		return buf;
	}
	return demangled(f->name, demangle, buf, len);
}

/* The part of a clone's name icpp rewrite made (__icpp_clone_K_ORIG) that
 * names the original: a symbol, or 0xADDR for a function without one; NULL
 * for any other name. */
static const char *clone_of(const char *name)
{
	static const char prefix[] = "__icpp_clone_";
	size_t k = sizeof(prefix) - 1;
	if (!name || strncmp(name, prefix, k) || !isdigit((unsigned char)name[k]))
		return NULL;
	while (isdigit((unsigned char)name[k]))
		k++;
	return name[k] == '_' && name[k + 1] ? name + k + 1 : NULL;
}

/* The address in ORIG when it is 0xADDR, else 0. */
static uint64_t clone_addr(const char *orig)
{
	char *end;
	uint64_t addr = strncmp(orig, "0x", 2) ? 0 : strtoull(orig + 2, &end, 16);
	return addr && !*end ? addr : 0;
}

const char *pm_profile_label(const struct pathmap *pm, uint32_t func, pm_demangle_fn demangle,
			     char *buf, size_t len)
{
	const char *orig = func < pm->nfuncs ? clone_of(pm->funcs[func].name) : NULL;
	if (!len || !orig)
		return pm_function_label(pm, func, demangle, buf, len);
	uint64_t addr = clone_addr(orig);
	if (addr) {
		module_offset(pm, pm->funcs[func].module, addr, buf, len);
		return buf;
	}
	return demangled(orig, demangle, buf, len);
}

uint32_t pm_clone_original(struct pathmap *pm, uint32_t func)
{
	const char *orig = func < pm->nfuncs ? clone_of(pm->funcs[func].name) : NULL;
	if (!orig)
		return func;
	uint32_t module = pm->funcs[func].module;
	uint64_t addr = clone_addr(orig);
	if (addr) {
		uint32_t g = pm_function_at(pm, module, addr);
		return g == PM_NONE ? func : g;
	}
	uint32_t found = PM_NONE;
	for (uint32_t g = 0; g < pm->nfuncs; g++) {
		const struct pm_function *f = &pm->funcs[g];
		if (f->module != module || !f->name || strcmp(f->name, orig))
			continue;
		if (found != PM_NONE)
			return func;
		found = g;
	}
	return found == PM_NONE ? func : found;
}

/* Where caller made the call to `callee` (a node), or "" when unknown. */
static void callsite(const struct pathmap *pm, uint32_t caller_func, const struct pm_node *callee,
		     char *buf, size_t len)
{
	buf[0] = 0;
	if (callee->cs_module == PM_NONE)
		return;
	if (caller_func < pm->nfuncs) {
		const struct pm_function *f = &pm->funcs[caller_func];
		if (f->module == callee->cs_module && callee->cs_addr >= f->addr &&
		    (!f->size || callee->cs_addr - f->addr < f->size)) {
			snprintf(buf, len, "+0x%" PRIx64, callee->cs_addr - f->addr);
			return;
		}
	}
	char where[512];
	module_offset(pm, callee->cs_module, callee->cs_addr, where, sizeof(where));
	snprintf(buf, len, "%s[%s]", caller_func == PM_NONE ? "" : " ", where);
}

void pm_print_path(FILE *out, const struct pathmap *pm, uint32_t node, const char *sep,
		   unsigned flags, pm_demangle_fn demangle)
{
	uint32_t local[256], *chain = local;
	uint32_t depth = pm_depth(pm, node);
	if (depth > 256 && !(chain = malloc(depth * sizeof(*chain)))) {
		fputs("(out of memory)", out);
		return;
	}
	pm_path_nodes(pm, node, chain, depth);
	char label[1024], cs[600];
	bool callsites = flags & PM_PRINT_CALLSITES;
	if (callsites && depth) {
		callsite(pm, PM_NONE, &pm->nodes[chain[0]], cs, sizeof(cs));
		if (cs[0])
			fprintf(out, "%s%s", cs, sep);
	}
	for (uint32_t k = 0; k < depth; k++) {
		uint32_t func = pm->nodes[chain[k]].func;
		fputs(flags & PM_PRINT_PROFILE ? pm_profile_label(pm, func, demangle, label, sizeof(label))
					       : pm_function_label(pm, func, demangle, label, sizeof(label)),
		      out);
		if (callsites && k + 1 < depth) {
			callsite(pm, func, &pm->nodes[chain[k + 1]], cs, sizeof(cs));
			fputs(cs, out);
		}
		if (k + 1 < depth)
			fputs(sep, out);
	}
	if (chain != local)
		free(chain);
}
