#include "train/collect.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <fcntl.h>
#include <unistd.h>

struct record {
	const struct rec_header *hdr;
	const struct rec_module *modules;
	const struct rec_node *nodes;
	uint32_t nmodules;
	uint64_t nnodes;
	uint32_t *pm_module;             /* module slot -> pathmap module (lazily) */
};

static int map_record(const char *path, struct record *r, size_t *size, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot read record %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	*size = (size_t)st.st_size;
	void *map = *size >= REC_NODES_OFFSET ? mmap(NULL, *size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	close(fd);
	const struct rec_header *h = map;
	if (map == MAP_FAILED || memcmp(h->magic, REC_MAGIC, 8) ||
	    h->header_size != sizeof(*h) || h->module_size != sizeof(struct rec_module) ||
	    h->node_size != sizeof(struct rec_node) || h->nmodules > REC_MAX_MODULES) {
		snprintf(err, errlen, "record %s is not from this icpp's runtime (a stale "
			 "libicpp-train.so? rebuild icpp)", path);
		if (map != MAP_FAILED)
			munmap(map, *size);
		return -1;
	}
	r->hdr = h;
	r->modules = (const struct rec_module *)((const char *)map + REC_MODULES_OFFSET);
	r->nodes = (const struct rec_node *)((const char *)map + REC_NODES_OFFSET);
	r->nmodules = h->nmodules;
	uint64_t fits = (*size - REC_NODES_OFFSET) / sizeof(struct rec_node);
	r->nnodes = h->nnodes < h->max_nodes ? h->nnodes : h->max_nodes;
	r->nnodes = r->nnodes < fits ? r->nnodes : fits;
	return 0;
}

/* Keep the largest skip counts seen for a module (each process image that
 * loads it reports the same analysis). */
static int note_skips(struct train_totals *tot, uint32_t module, const uint32_t *skipped)
{
	if (module >= tot->nskipped) {
		uint32_t n = module + 16;
		void *p = realloc(tot->skipped, n * sizeof(*tot->skipped));
		if (!p)
			return -1;
		tot->skipped = p;
		memset(tot->skipped + tot->nskipped, 0, (n - tot->nskipped) * sizeof(*tot->skipped));
		tot->nskipped = n;
	}
	for (int k = 0; k < SKIP_NREASONS; k++)
		if (skipped[k] > tot->skipped[module][k])
			tot->skipped[module][k] = skipped[k];
	return 0;
}

/* The pathmap module for a record slot: path and build-id from the file. */
static uint32_t pm_module_of(struct record *r, uint32_t slot, struct analysis_cache *cache,
			     struct pathmap *pm, struct train_totals *tot)
{
	if (r->pm_module[slot] != PM_NONE)
		return r->pm_module[slot];
	const struct rec_module *m = &r->modules[slot];
	char path[TRAIN_PATH_MAX];
	snprintf(path, sizeof(path), "%.*s", (int)sizeof(m->path), m->path);
	const struct analysed_module *am = analysis_get(cache, path);
	const uint8_t *id = NULL;
	size_t idlen = am && am->bin ? bin_build_id(am->bin, &id) : 0;
	uint32_t i = pm_add_module(pm, path, id, (uint32_t)idlen);
	if (i != PM_NONE && note_skips(tot, i, m->skipped) == 0) {
		struct pm_module *pmm = &pm->modules[i];
		if (m->functions_found > pmm->functions_found)
			pmm->functions_found = m->functions_found;
		if (m->functions_hooked > pmm->functions_hooked)
			pmm->functions_hooked = m->functions_hooked;
	}
	return r->pm_module[slot] = i;
}

/* The module slot whose range holds a runtime address; a module loaded later
 * over an unloaded one's range wins. */
static uint32_t slot_of(const struct record *r, uint64_t addr)
{
	uint32_t best = REC_NONE;
	for (uint32_t i = 0; i < r->nmodules; i++)
		if (addr >= r->modules[i].start && addr < r->modules[i].end &&
		    (best == REC_NONE || r->modules[best].unloaded))
			best = i;
	return best;
}

static uint32_t pm_function_of(struct record *r, const struct rec_node *n,
			       struct analysis_cache *cache, struct pathmap *pm,
			       struct train_totals *tot)
{
	uint32_t mod = pm_module_of(r, n->module, cache, pm, tot);
	if (mod == PM_NONE)
		return PM_NONE;
	const struct analysed_module *am = analysis_get(cache, pm->modules[mod].path);
	const struct bin_function *f = am && am->bin ? bin_function_at(am->bin, n->func) : NULL;
	if (f && f->addr != n->func)
		f = NULL;
	return pm_add_function(pm, mod, n->func, f ? f->size : 0, f ? f->name : NULL);
}

/* Marks a node called from the runtime itself (its destructors at exit):
 * such paths do not exist without training, so they and their subtrees go. */
#define DROPPED (PM_NONE - 1)

/* The analysis of the module in a record's slot. */
static const struct analysed_module *slot_analysis(struct record *r, uint32_t slot,
						   struct analysis_cache *cache)
{
	char path[TRAIN_PATH_MAX];
	snprintf(path, sizeof(path), "%.*s", (int)sizeof(r->modules[slot].path), r->modules[slot].path);
	return analysis_get(cache, path);
}

/* The function of the code at a runtime address, and its module's analysis. */
static const struct bin_function *function_at(struct record *r, uint32_t slot, uint64_t addr,
					       struct analysis_cache *cache,
					       const struct analysed_module **am)
{
	*am = slot_analysis(r, slot, cache);
	return *am && (*am)->bin ? bin_function_at((*am)->bin, addr - r->modules[slot].bias) : NULL;
}

/* The pathmap parent of node n, whose recorded parent maps to `parent`.
 * A callsite in a stub of icpp rewrite's (bin_stub_caller) is its
 * caller's, whose CFI row the stub's FDE repeats.
 *
 * Entry-only training pops a returned frame only at a later entry at or
 * above its CFA.  A hooked function D whose caller X calls it at a lower SP
 * than X's previous callee (X's frame grew: alloca), or whose caller's entry
 * training never saw (X could not be hooked, or ran before the runtime
 * started), finds that returned callee still on the shadow stack: the
 * recorded parent is then wrong, though D's height is exact.  The callsite
 * says which function X made the call:
 *  - X is hooked and a recorded ancestor: the frames below it are stale, X
 *    is the parent;
 *  - otherwise the CFI at the call gives X's CFA: rsp + k (SP at the call is
 *    D's CFA) or rbp + k (rbp as D's entry found it, in the node): replay
 *    X's entry (pop the ancestors at or below its CFA) and put X between,
 *    with its callsite unknown.  This also covers a landing pad the unwinder
 *    jumped to, in a function whose entry was never run.
 * X a .cold fragment (SITE_FRAGMENT; analysis_fragment also when it is not
 * hooked, its owner jumping in past its start): its code runs in every activation of
 * its owner, entered at its start (hooked) or anywhere else (not), so the
 * nearest frame of X may be an outer activation's, which would swallow the
 * frames between: the ancestor must have the CFA the CFI gives.  Else X is
 * rebuilt under its owner's frame, which has the same CFA, as the runtime
 * puts a fragment it saw entered.  (Any other hooked X has a frame for its
 * current activation, the nearest; the CFI of a program's entry point,
 * which has no return address, would not match it.)
 * Returns UNREBUILT when X's frame cannot be rebuilt (code outside any
 * function, an implausible CFA): such a path would be wrong, so it goes. */
#define UNREBUILT (PM_NONE - 2)
static uint32_t true_parent(struct record *r, const struct rec_node *n, uint32_t parent,
			    uint32_t cs_slot, struct analysis_cache *cache, struct pathmap *pm,
			    struct train_totals *tot)
{
	const struct analysed_module *am;
	const struct bin_function *x = cs_slot == REC_NONE ? NULL
				       : function_at(r, cs_slot, n->ra - 1, cache, &am);
	uint64_t stub_site;
	const struct bin_function *stub_caller = x ? bin_stub_caller(am->bin, x, &stub_site)
						   : NULL;
	if (stub_caller)
		x = stub_caller;       /* a stub runs in its caller's frame */
	uint32_t mod = x ? pm_module_of(r, cs_slot, cache, pm, tot) : PM_NONE;
	uint32_t func = mod == PM_NONE ? PM_NONE : pm_add_function(pm, mod, x->addr, x->size, x->name);
	if (func == PM_NONE)
		return UNREBUILT;
	struct bin_cfa cfa;
	bool known = bin_cfa_at(am->bin, n->ra - 1 - r->modules[cs_slot].bias, &cfa) == 0;
	int64_t height = known ? (cfa.reg == BIN_CFA_RSP ? n->height : n->rbp_off) - cfa.offset : 0;
	known = known && height < n->height;    /* else rbp was no frame pointer */
	/* Only a hooked X has its activations on the shadow stack; an unhooked
	 * one that recurses would match an outer activation. */
	const struct train_site *site = analysis_site(am, x->addr);
	bool fragment = (site && site->flags & SITE_FRAGMENT) || analysis_fragment(am, x->addr);
	for (uint32_t a = parent; site && a != PM_NONE; a = pm->nodes[a].parent)
		if (pm->nodes[a].func == func && (!fragment || !known || pm->nodes[a].height == height)) {
			tot->stale_frames += a != parent;
			return a;
		}
	if (!known)
		return UNREBUILT;
	while (parent != PM_NONE && (pm->nodes[parent].height > height ||
				     (pm->nodes[parent].height == height && !fragment)))
		parent = pm->nodes[parent].parent;
	tot->rebuilt_frames++;
	return pm_add_node(pm, parent, func, PM_NONE, 0, height, 0);
}

/* Is n the frame of a .cold fragment jumped to inside its owner's
 * activation, the recorded parent (same CFA)?  Then it has no callsite:
 * the return address at its CFA is its owner's. */
static bool fragment_in_owner(struct record *r, const struct rec_node *n, uint32_t parent,
			      struct analysis_cache *cache, const struct pathmap *pm)
{
	if (parent == PM_NONE || pm->nodes[parent].height != n->height)
		return false;
	const struct analysed_module *am = slot_analysis(r, n->module, cache);
	const struct train_site *site = am ? analysis_site(am, n->func) : NULL;
	return site && site->flags & SITE_FRAGMENT;
}

static int add_nodes(struct record *r, struct analysis_cache *cache, struct pathmap *pm,
		     struct train_totals *tot)
{
	uint32_t *map = malloc((r->nnodes + 1) * sizeof(*map));
	if (!map)
		return -1;
	for (uint64_t i = 0; i < r->nnodes; i++) {
		const struct rec_node *n = &r->nodes[i];
		map[i] = PM_NONE;
		uint32_t parent = n->parent == REC_NONE ? PM_NONE
				  : n->parent < i ? map[n->parent] : PM_NONE;
		uint32_t cs_slot = slot_of(r, n->ra - 1);
		if (parent == DROPPED || (cs_slot != REC_NONE && r->modules[cs_slot].own)) {
			map[i] = DROPPED;
			continue;
		}
		if (n->valid != REC_NODE_VALID || n->module >= r->nmodules ||
		    (n->parent != REC_NONE && parent == PM_NONE)) {
			tot->invalid_nodes++;
			continue;
		}
		bool fragment = fragment_in_owner(r, n, parent, cache, pm);
		if (parent != PM_NONE && !fragment) {
			parent = true_parent(r, n, parent, cs_slot, cache, pm, tot);
			if (parent == UNREBUILT) {
				tot->unrebuilt++;
				map[i] = DROPPED;
				continue;
			}
			if (parent == PM_NONE)
				goto oom;
		}
		uint32_t func = pm_function_of(r, n, cache, pm, tot);
		uint32_t cs_module = cs_slot == REC_NONE || fragment ? PM_NONE
				     : pm_module_of(r, cs_slot, cache, pm, tot);
		uint64_t cs_addr = cs_module == PM_NONE ? n->ra - 1 : n->ra - 1 - r->modules[cs_slot].bias;
		if (func == PM_NONE)
			goto oom;
		map[i] = pm_add_node(pm, parent, func, cs_module, cs_addr, n->height, n->entries);
		if (map[i] == PM_NONE)
			goto oom;
	}
	free(map);
	return 0;
oom:
	free(map);
	return -1;
}

static int collect_one(const char *path, struct analysis_cache *cache, struct pathmap *pm,
		       struct train_totals *tot, char *err, size_t errlen)
{
	struct record r = {0};
	size_t size;
	if (map_record(path, &r, &size, err, errlen) < 0)
		return -1;
	r.pm_module = malloc((r.nmodules + 1) * sizeof(*r.pm_module));
	int ret = r.pm_module ? 0 : -1;
	for (uint32_t i = 0; r.pm_module && i < r.nmodules; i++)
		r.pm_module[i] = PM_NONE;
	/* Every module the process loaded, so coverage shows even unused ones. */
	for (uint32_t i = 0; ret == 0 && i < r.nmodules; i++)
		if (r.modules[i].functions_found && pm_module_of(&r, i, cache, pm, tot) == PM_NONE)
			ret = -1;
	if (ret == 0)
		ret = add_nodes(&r, cache, pm, tot);
	if (ret < 0)
		snprintf(err, errlen, "out of memory reading %s", path);
	tot->processes++;
	tot->threads += r.hdr->threads;
	tot->off_stack += r.hdr->off_stack;
	tot->nested += r.hdr->nested;
	tot->too_deep += r.hdr->too_deep;
	tot->in_signal += r.hdr->in_signal;
	tot->in_realign += r.hdr->in_realign;
	tot->nodes_full += r.hdr->nodes_full;
	free(r.pm_module);
	munmap((void *)r.hdr, size);
	return ret;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_record(const struct dirent *d)
{
	return !strncmp(d->d_name, "proc.", 5);
}

int collect_records(const char *dir, struct analysis_cache *cache, struct pathmap *pm,
		    struct train_totals *tot, char *err, size_t errlen)
{
	struct dirent **names;
	int n = scandir(dir, &names, is_record, by_name);
	if (n < 0) {
		snprintf(err, errlen, "cannot list %s: %s", dir, strerror(errno));
		return -1;
	}
	int ret = 0;
	for (int i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
		if (ret == 0 && collect_one(path, cache, pm, tot, err, errlen) < 0)
			ret = -1;
		free(names[i]);
	}
	free(names);
	return ret;
}
