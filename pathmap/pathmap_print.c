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

const char *pm_profile_label(const struct pathmap *pm, uint32_t func, pm_demangle_fn demangle,
			     char *buf, size_t len)
{
	static const char prefix[] = "__icpp_clone_";
	const char *name = func < pm->nfuncs ? pm->funcs[func].name : NULL;
	size_t k = sizeof(prefix) - 1;
	if (!len || !name || strncmp(name, prefix, k) || !isdigit((unsigned char)name[k]))
		return pm_function_label(pm, func, demangle, buf, len);
	while (isdigit((unsigned char)name[k]))
		k++;
	const char *orig = name[k] == '_' && name[k + 1] ? name + k + 1 : NULL;
	if (!orig)
		return pm_function_label(pm, func, demangle, buf, len);
	char *end;
	uint64_t addr = strncmp(orig, "0x", 2) ? 0 : strtoull(orig + 2, &end, 16);
	if (addr && !*end) {
		module_offset(pm, pm->funcs[func].module, addr, buf, len);
		return buf;
	}
	return demangled(orig, demangle, buf, len);
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
