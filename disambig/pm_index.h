/* Private to disambig/: functions of a pathmap sorted by (module, address),
 * for "which function starts here" and "which function contains this
 * callsite" without touching the pathmap's own (mutable) index. */
#ifndef ICPP_DISAMBIG_PM_INDEX_H
#define ICPP_DISAMBIG_PM_INDEX_H

#include "pathmap/pathmap.h"

struct pmi_fent {
	uint32_t module, func;
	uint64_t addr, size;
};

struct pm_index {
	struct pmi_fent *f;
	uint32_t n;
};

int pmi_build(struct pm_index *ix, const struct pathmap *pm);
void pmi_free(struct pm_index *ix);
/* The function starting at (module, addr), or DA_NONE. */
uint32_t pmi_function_at(const struct pm_index *ix, uint32_t module, uint64_t addr);
/* The function whose code holds addr (from_pathmap.h), or DA_NONE. */
uint32_t pmi_owner(const struct pm_index *ix, uint32_t module, uint64_t addr);
/* (module, addr) as one key: module < 0xffff, addr < 2^48 (x86-64 user
 * addresses); UINT64_MAX otherwise or when module is PM_NONE. */
uint64_t pmi_cskey(uint32_t module, uint64_t addr);

#endif
