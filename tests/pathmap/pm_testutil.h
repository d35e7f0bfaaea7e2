/* pm_testutil.h: sample pathmaps and field-by-field comparison for the
 * pathmap tests and the fuzz target. */
#ifndef ICPP_PM_TESTUTIL_H
#define ICPP_PM_TESTUTIL_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include "pathmap/pathmap.h"

/* A map that uses every feature of the format: modules with and without a
 * build-id, a full 64-byte build-id, named and unnamed functions, a shared
 * name (string dedup), roots with and without a caller, a callsite outside its
 * caller, negative and huge values. */
static inline struct pathmap *pmt_sample(void)
{
	struct pathmap *pm = pm_new();
	static const uint8_t id1[20] = {0xde, 0xad, 0xbe, 0xef, 1, 2, 3, 4, 5, 6,
					7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
	uint8_t id64[PM_BUILD_ID_MAX];
	for (int i = 0; i < PM_BUILD_ID_MAX; i++)
		id64[i] = (uint8_t)(0xff - i);
	uint32_t prog = pm_add_module(pm, "/usr/bin/prog", id1, sizeof(id1));
	uint32_t libc = pm_add_module(pm, "/lib/x86_64-linux-gnu/libc.so.6", id64, PM_BUILD_ID_MAX);
	uint32_t vdso = pm_add_module(pm, "[vdso]", NULL, 0);
	pm->modules[prog].functions_found = 130;
	pm->modules[prog].functions_hooked = 120;
	uint32_t fmain = pm_add_function(pm, prog, 0x401126, 0x40, "main");
	uint32_t ffoo = pm_add_function(pm, prog, 0x401170, 0x20, "_ZN2ns3fooEi");
	uint32_t fanon = pm_add_function(pm, prog, 0x4011a0, 0, NULL);
	uint32_t fcmp = pm_add_function(pm, libc, 0x4a3b0, 0x10, "main"); /* same name */
	(void)pm_add_function(pm, vdso, 0xffffffffffff0000ull, 0xffff, "");
	uint32_t r = pm_add_node(pm, PM_NONE, fmain, libc, 0x2724a, 48, 1);
	uint32_t a = pm_add_node(pm, r, ffoo, prog, 0x40113c, 96, 10);
	uint32_t b = pm_add_node(pm, a, fanon, prog, 0x401180, 160, UINT64_MAX);
	(void)pm_add_node(pm, r, fanon, prog, 0x401150, 96, 3);
	(void)pm_add_node(pm, b, fcmp, libc, 0x4a000, 4000, 7); /* outside its caller */
	(void)pm_add_node(pm, PM_NONE, ffoo, PM_NONE, 0, -16, 0); /* root, no caller */
	return pm;
}

static inline bool pmt_str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* Every field of every record equal (not source, not capacities). */
static inline bool pmt_equal(const struct pathmap *a, const struct pathmap *b)
{
	if (a->nmodules != b->nmodules || a->nfuncs != b->nfuncs || a->nnodes != b->nnodes)
		return false;
	for (uint32_t i = 0; i < a->nmodules; i++) {
		const struct pm_module *x = &a->modules[i], *y = &b->modules[i];
		if (!pmt_str_eq(x->path, y->path) || x->build_id_len != y->build_id_len ||
		    memcmp(x->build_id, y->build_id, sizeof(x->build_id)) ||
		    x->functions_found != y->functions_found ||
		    x->functions_hooked != y->functions_hooked)
			return false;
	}
	for (uint32_t i = 0; i < a->nfuncs; i++) {
		const struct pm_function *x = &a->funcs[i], *y = &b->funcs[i];
		if (x->module != y->module || x->addr != y->addr || x->size != y->size ||
		    !pmt_str_eq(x->name, y->name))
			return false;
	}
	for (uint32_t i = 0; i < a->nnodes; i++) {
		const struct pm_node *x = &a->nodes[i], *y = &b->nodes[i];
		if (x->parent != y->parent || x->func != y->func || x->cs_module != y->cs_module ||
		    x->cs_addr != y->cs_addr || x->height != y->height || x->entries != y->entries)
			return false;
	}
	return true;
}

/* Recompute both checksums of a file image whose header is intact enough
 * (docs/pathmap-format.md), so that a corruption reaches the field checks. */
static inline void pmt_fix_crcs(uint8_t *b, size_t len)
{
	if (len < 56)
		return;
	uLong c = crc32(0L, b, 48);
	for (int i = 0; i < 4; i++)
		b[48 + i] = (uint8_t)(c >> (8 * i));
	uint64_t size = 0;
	for (int i = 0; i < 8; i++)
		size |= (uint64_t)b[40 + i] << (8 * i);
	if (size < 60 || size > len)
		return;
	c = crc32(0L, b, (uInt)(size - 4));
	for (int i = 0; i < 4; i++)
		b[size - 4 + i] = (uint8_t)(c >> (8 * i));
}

#endif
