/* icpp rewrite PROG: ask the rewriter what it may change, solve (or take a
 * plan), write the rewritten program and its predicted pathmap
 * (rewriter/rewriter.h, disambig/from_pathmap.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "binary/binary.h"
#include "cli/cmds.h"
#include "cli/rewrite_cap.h"
#include "cli/sample_weights.h"
#include "disambig/disambig.h"
#include "disambig/from_pathmap.h"
#include "pathmap/pathmap.h"
#include "rewriter/rewriter.h"
#include "util/fileio.h"

static const char usage_text[] =
	"usage: icpp rewrite PROG [-m MAP] [-o OUT] [--lib LIB[=OUT2]]... [--plan PLAN |\n"
	"                    --everything[=P,W[,C]]] [options]\n"
	"\n"
	"Rewrite the program PROG so that the call paths of its pathmap MAP get CIDs of\n"
	"their own: the rewriter says which frames it can pad, which callsites it can\n"
	"wrap and which functions it can clone, the solver chooses, and the result is\n"
	"written to OUT with its predicted\n"
	"pathmap OUT.icpp.  PROG is never modified.  Check the result with\n"
	"'icpp verify OUT -- ARGS'.\n"
	"\n"
	"options:\n"
	"  -m, --map MAP          PROG's pathmap (default: PROG's name + .icpp)\n"
	"  -o, --output OUT       the rewritten program (default: PROG's name + .rw)\n"
	"  --lib LIB[=OUT2]       rewrite the library LIB (a module of MAP) with PROG, by\n"
	"                         one plan, to OUT2 (default OUT.libs/ + LIB's name);\n"
	"                         OUT.icpp predicts them together, for a run that loads\n"
	"                         OUT2 (e.g. LD_LIBRARY_PATH=OUT.libs)\n"
	"  --plan PLAN            apply PLAN (written by icpp plan) instead of solving\n"
	"  --samples FILE         as icpp plan: weigh paths by the samples of FILE (icpp\n"
	"                         record of PROG) instead of training entries\n"
	"  --everything[=P,W[,C]] pad every function the analysis allows by up to P bytes,\n"
	"                         wrap every callsite it allows by at least W and, unless\n"
	"                         C is 0, clone every function it allows for one of its\n"
	"                         calls and, in each clone, one callee for the copy of\n"
	"                         its call (a chain), tag every call it allows and\n"
	"                         point every call of a --lib library's function\n"
	"                         that its GOT slot allows, and the call's copies in\n"
	"                         clones, at a clone there by a check (default\n"
	"                         32,16,1): exercises the rewriter, disambiguates\n"
	"                         nothing\n"
	"  --explain              print what can be changed, per function and callsite\n"
	"                         (with -m: calls into the map's libraries bounded by\n"
	"                         their callees' code, as a rewrite does)\n"
	"  --max-stack-growth X   as icpp plan (default 1.25; 0: no cap)\n"
	"  --max-recursion-growth X   as icpp plan (default 0: no cap)\n"
	"  --code-per-path BYTES  as icpp plan (default " STR(DA_DEFAULT_CODE_PER_PATH) "; 0: code is free)\n"
	"  --hot-code-per-path BYTES   as icpp plan (default " STR(DA_DEFAULT_HOT_CODE_PER_PATH) "; 0: free)\n"
	"  --no-wrap              no callsite wrappers\n"
	"  --no-clone             no clones\n"
	"  --no-dispatch          clones take direct calls only: no function tests\n"
	"                         its return address or a tag at entry (the run-time\n"
	"                         cost of a clone of a hot function)\n"
	"  --no-promote           indirect calls take clones by a dispatch only, not by\n"
	"                         a stub that compares their target\n"
	"  --no-tail              frames after tail jumps take clones by a dispatch only,\n"
	"                         not by the jumps pointed at them\n"
	"  --dispatch-weight X    as icpp plan (default " STR(DA_DEFAULT_DISPATCH_WEIGHT) "; 0: run time is free)\n"
	"  --wrap-weight X        as icpp plan (default " STR(DA_DEFAULT_WRAP_WEIGHT) "; 0: run time is free)\n"
	"  --precision PCT        as icpp plan (default " STR(DA_DEFAULT_PRECISION_PCT) "; 0: the prices as given)\n"
	"  --pad-bound B, --wrap-bound B, --seed N, --searches N, --budget N, --callsites\n"
	"                         as icpp plan\n"
	"  -q, --quiet            no progress or summary on stderr\n"
	"  -h, --help             show this help\n"
	"\n"
	"example:\n"
	"  icpp train -o lua.icpp -- lua5.4 bench.lua\n"
	"  icpp rewrite /usr/bin/lua5.4 -m lua.icpp -o lua.rw\n"
	"  icpp verify lua.rw -- bench.lua\n"
	"  icpp rewrite /usr/bin/lua5.4 -m lua.icpp -o lua.rw --lib /lib/x86_64-linux-gnu/libc.so.6\n"
	"  LD_LIBRARY_PATH=lua.rw.libs icpp verify lua.rw -- bench.lua\n";

/* A change the plan makes in module `in`, which is not rewritten here. */
static int not_rewritten(const struct pathmap *pm, uint32_t in, const char *what, uint64_t addr,
			 char *err, size_t errlen)
{
	snprintf(err, errlen, "the plan %s 0x%" PRIx64 " in %s, which is not rewritten here (add "
		 "--lib %s)", what, addr, pm->modules[in].path, pm->modules[in].path);
	return -1;
}

static bool has_tag(const struct rw_plan *p, uint64_t site, uint32_t clone)
{
	for (uint32_t i = 0; i < p->ntags; i++)
		if (p->tags[i].site == site && p->tags[i].clone == clone)
			return true;
	return false;
}

static bool has_mark(const struct rw_plan *p, uint64_t func)
{
	for (uint32_t i = 0; i < p->nmarks; i++)
		if (p->marks[i] == func)
			return true;
	return false;
}

/* Where module m's rewrite marks the page of its function at addr for
 * another module's checks (rw_func.xcall_mark), or 0. */
static uint64_t xcall_mark(const struct rewrite_cap *rc, uint32_t m, uint64_t addr)
{
	const struct rewrite_target *t = rewrite_cap_target(rc, m);
	size_t n;
	const struct rw_func *f = t ? rw_functions(t->b, &n) : NULL;
	uint32_t i = t ? rw_func_index(t->b, addr) : RW_NONE;
	return i == RW_NONE ? 0 : f[i].xcall_mark;
}

/* How many forwarders check x passes: its clone is the last one's target. */
static int xcall_depth(const struct rw_plan_xcall *x)
{
	return (x->fwd != 0) + (x->hop_slot != 0);
}

/* Add call x->site's (or its copy's) check to p.  A call takes one: where
 * the plan clones both a forwarder and its target for it, the target's
 * (the forwarder's frames, which the target's replace, then never come:
 * predicted, not taken).  0, or -1 when out of memory. */
static int add_xcall(struct rw_plan *p, const struct rw_plan_xcall *x)
{
	for (uint32_t i = 0; i < p->nxcalls; i++)
		if (p->xcalls[i].site == x->site && p->xcalls[i].clone == x->clone) {
			if (xcall_depth(x) > xcall_depth(&p->xcalls[i]))
				p->xcalls[i] = *x;
			return 0;
		}
	return rw_plan_add_xcall(p, x);
}

/* The heat of pp (da_pm_plan_weigh) at module m's code, in rewriter terms:
 * its callsites, their copies in m's clones (numbered from mfirst), its
 * functions; hot from DA_HOT_CODE_SHARE of all entries, as the solver's
 * hot code term (rewriter.h section 2).  0 or -1 (out of memory). */
static int add_heat(const struct pathmap *pm, uint32_t m, uint32_t mfirst,
		    const struct da_pm_plan *pp, struct rw_plan *p)
{
	for (uint32_t i = 0; i < pp->nheat; i++) {
		const struct da_pm_heat *h = &pp->heat[i];
		uint64_t key = h->addr;
		if (h->module != m)
			continue;
		if (h->clone != DA_NONE) {
			if (pm->funcs[pp->clones[h->clone].func].module != m || h->clone < mfirst)
				continue;
			key = rw_copy_key(h->addr, h->clone - mfirst);
		}
		if (rw_plan_add_heat(p, key, h->entries))
			return -1;
	}
	uint64_t hot = (uint64_t)(DA_HOT_CODE_SHARE * (double)pp->entries);
	p->hot_entries = p->nheat ? (hot ? hot : 1) : 0;
	return 0;
}

/* A plan in pathmap terms -> the rewriter's plan for module `m`: the changes
 * of the other rewritten modules (rc) are theirs, except that m tags its
 * calls (or their copies in its clones: a chain across modules) that
 * another module's clones test (rewriter.h section 1, Tagged calls); those
 * of a module not rewritten are an error.  Target t's clones are numbered
 * from first[t] (the plan lists each module's clones together:
 * group_clones). */
static int to_rw_plan(const struct pathmap *pm, const struct rewrite_cap *rc, uint32_t m,
		      const uint32_t *first, const struct da_pm_plan *pp, struct rw_plan *p,
		      char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	uint32_t mfirst = first[rewrite_cap_target(rc, m) - rc->t];
	for (uint32_t i = 0; i < pp->npads; i++) {
		const struct pm_function *f = &pm->funcs[pp->pads[i].func];
		if (f->module != m) {
			if (!rewrite_cap_target(rc, f->module))
				return not_rewritten(pm, f->module, "pads", f->addr, err, errlen);
			continue;
		}
		if (rw_plan_add(p, false, f->addr, pp->pads[i].bytes))
			goto oom;
	}
	for (uint32_t i = 0; i < pp->nwraps; i++) {
		const struct da_pm_wrap *w = &pp->wraps[i];
		if (w->module != m) {
			if (!rewrite_cap_target(rc, w->module))
				return not_rewritten(pm, w->module, "wraps callsite", w->addr, err, errlen);
			continue;
		}
		if (rw_plan_add(p, true, w->addr, w->bytes))
			goto oom;
	}
	for (uint32_t k = 0; k < pp->nclones; k++) {
		const struct da_pm_clone *c = &pp->clones[k];
		const struct pm_function *f = &pm->funcs[c->func];
		const struct pm_module *cm = &pm->modules[c->cs_module];
		const struct rewrite_target *ct = rewrite_cap_target(rc, c->cs_module);
		bool other = c->cs_module != f->module, tagged = other && !c->xcall;
		if (other && !ct)
			return not_rewritten(pm, c->cs_module, c->xcall ? "checks callsite"
							   : "tags callsite", c->cs_addr, err, errlen);
		/* a copy: of the call in the caller module's clone J */
		uint32_t copy_in = other && c->parent != DA_NONE ? c->parent - first[ct - rc->t] : RW_NONE;
		uint64_t key = copy_in == RW_NONE ? c->cs_addr : rw_copy_key(c->cs_addr, copy_in);
		uint64_t tag = tagged ? rw_tag(cm->build_id, cm->build_id_len, key) : 0;
		/* a checked call: the function its slot holds (f, or a forwarder
		 * to f) and the forwarders' slots */
		struct rewrite_xcall_route r = {.module = f->module, .hm = f->module, .g = f->addr,
						.h = f->addr};
		if (c->xcall && other && rewrite_cap_target(rc, f->module) &&
		    !rewrite_cap_xcall_route(rc, c->cs_module, c->cs_addr, f->module, f->addr, &r)) {
			snprintf(err, errlen, "clone %u of the plan takes the call at 0x%" PRIx64 " of %s "
				 "by a check, but that call does not reach 0x%" PRIx64 " through its GOT "
				 "slot and the libraries named after its module (the order of --lib)",
				 k, c->cs_addr, cm->path, f->addr);
			return -1;
		}
		/* the forwarder to a third module, whose page the check reads */
		if (c->xcall && other && r.hm == m && r.hm != f->module && !has_mark(p, r.h) &&
		    rw_plan_add_mark(p, r.h))
			goto oom;
		if (f->module != m) {
			const struct rewrite_target *ft = rewrite_cap_target(rc, f->module);
			if (!ft)
				return not_rewritten(pm, f->module, "clones", f->addr, err, errlen);
			if (tag && c->cs_module == m && !has_tag(p, c->cs_addr, copy_in) &&
			    rw_plan_add_tag(p, c->cs_addr, tag, copy_in))
				goto oom;
			/* where the clone is comes once its module is written
			 * (resolve_xcalls) */
			if (c->xcall && c->cs_module == m && add_xcall(p, &(struct rw_plan_xcall){
				    c->cs_addr, copy_in, r.h, 0, xcall_mark(rc, r.hm, r.h), 0, r.fwd,
				    r.fwd_slot, r.hop_slot, r.hop_slot ? f->addr : 0,
				    r.hop_slot ? xcall_mark(rc, f->module, f->addr) : 0, 0, c->tail}))
				goto oom;
			continue;
		}
		if (rw_plan_add_clone(p, f->addr, key, c->pad,
				      c->parent == DA_NONE || other ? RW_NONE : c->parent - mfirst))
			goto oom;
		p->clones[p->nclones - 1].tag = tag;
		p->clones[p->nclones - 1].weight = c->weight;
		p->clones[p->nclones - 1].promote = c->promote;
		p->clones[p->nclones - 1].tail = c->tail && !other;
		p->clones[p->nclones - 1].xcall = c->xcall && other;
		bool fwd_here = c->xcall && other && r.hm == m && r.h != f->addr;
		p->clones[p->nclones - 1].xcall_from = fwd_here ? r.h : 0;
	}
	for (uint32_t i = 0; i < pp->nclone_wraps; i++) {
		const struct da_pm_clone_wrap *w = &pp->clone_wraps[i];
		if (w->clone >= mfirst && w->clone - mfirst < p->nclones &&
		    rw_plan_add_clone_wrap(p, w->clone - mfirst, w->addr, w->bytes))
			goto oom;
	}
	if (add_heat(pm, m, mfirst, pp, p) < 0)
		goto oom;
	return rw_plan_sort(p, err, errlen);
oom:
	snprintf(err, errlen, "out of memory");
	return -1;
}

/* Reorder pp's clones so that each rewritten module's are together, in the
 * order of rc's targets (the rest after them), each module's in the plan's
 * order (a chain's parent stays before it); first[t] is where target t's
 * begin.  0 or -1 (out of memory). */
static int group_clones(const struct pathmap *pm, const struct rewrite_cap *rc,
			struct da_pm_plan *pp, uint32_t *first)
{
	uint32_t n = pp->nclones, at = 0;
	struct da_pm_clone *c = malloc((n ? n : 1) * sizeof(*c));
	uint32_t *to = malloc((n ? n : 1) * sizeof(*to));
	if (!c || !to) {
		free(c);
		free(to);
		return -1;
	}
	for (uint32_t t = 0; t <= rc->n; t++) {
		if (t < rc->n)
			first[t] = at;
		for (uint32_t k = 0; k < n; k++) {
			const struct rewrite_target *owner =
				rewrite_cap_target(rc, pm->funcs[pp->clones[k].func].module);
			if (t < rc->n ? owner == &rc->t[t] : !owner) {
				to[k] = at;
				c[at++] = pp->clones[k];
			}
		}
	}
	for (uint32_t k = 0; k < n; k++)
		if (c[k].parent != DA_NONE)
			c[k].parent = to[c[k].parent];
	for (uint32_t i = 0; i < pp->nclone_wraps; i++)
		pp->clone_wraps[i].clone = to[pp->clone_wraps[i].clone];
	free(pp->clones);
	pp->clones = c;
	free(to);
	return 0;
}

/* The rewriter's plan for module m -> pathmap terms, appended to pp, for the
 * prediction: functions and callsites the pathmap never saw move nothing in
 * it (clones are made only of functions it has: their numbers must stay).
 * 0 or -1 (out of memory, or a clone of a function the map lacks). */
static int to_pm_plan(struct pathmap *pm, uint32_t m, const struct rw_plan *p, struct da_pm_plan *pp)
{
	uint32_t base = pp->nclones;
	struct da_pm_pad *pads = realloc(pp->pads, (pp->npads + p->npads + 1) * sizeof(*pads));
	if (pads)
		pp->pads = pads;
	struct da_pm_wrap *wraps = realloc(pp->wraps, (pp->nwraps + p->nwraps + 1) * sizeof(*wraps));
	if (wraps)
		pp->wraps = wraps;
	struct da_pm_clone *clones = realloc(pp->clones, (base + p->nclones + 1) * sizeof(*clones));
	if (clones)
		pp->clones = clones;
	if (!pads || !wraps || !clones)
		return -1;
	for (uint32_t k = 0; k < p->nclones; k++) {
		uint32_t f = pm_function_at(pm, m, p->clones[k].func);
		if (f == PM_NONE)
			return -1;
		uint32_t parent = p->clones[k].parent == RW_NONE ? DA_NONE : base + p->clones[k].parent;
		pp->clones[pp->nclones++] =
			(struct da_pm_clone){f, m, p->clones[k].site, p->clones[k].pad, parent, 0,
					     p->clones[k].promote, false, p->clones[k].tail};
	}
	for (uint32_t i = 0; i < p->npads; i++) {
		uint32_t f = pm_function_at(pm, m, p->pads[i].addr);
		if (f != PM_NONE)
			pp->pads[pp->npads++] = (struct da_pm_pad){f, p->pads[i].bytes};
	}
	for (uint32_t i = 0; i < p->nwraps; i++)
		pp->wraps[pp->nwraps++] = (struct da_pm_wrap){m, p->wraps[i].addr, p->wraps[i].bytes};
	return 0;
}

/* A fragment (gcc's .cold part) runs in its parent's frame.  Below a frame of
 * its parent the model knows it (disambig.h section 2: it takes its frame's
 * padding, not its own); where training shows it in its parent's place (a
 * landing pad in the fragment, its frame rebuilt from the CFI) whatever it
 * calls moves with the parent's padding too, so the prediction gives each
 * fragment its parent's padding. */
static int add_fragment_pads(struct pathmap *pm, uint32_t m, const struct rw_binary *b,
			     struct da_pm_plan *pp)
{
	size_t n;
	const struct rw_func *f = rw_functions(b, &n);
	uint32_t base = pp->npads;
	for (size_t i = 0; i < n; i++) {
		if (f[i].parent == RW_NONE)
			continue;
		uint32_t g = pm_function_at(pm, m, f[i].addr);
		uint32_t parent = pm_function_at(pm, m, f[f[i].parent].addr);
		uint32_t bytes = 0;
		for (uint32_t k = 0; k < base && parent != PM_NONE; k++)
			if (pp->pads[k].func == parent)
				bytes = pp->pads[k].bytes;
		if (g == PM_NONE || !bytes)
			continue;
		struct da_pm_pad *v = realloc(pp->pads, (pp->npads + 1) * sizeof(*v));
		if (!v)
			return -1;
		pp->pads = v;
		pp->pads[pp->npads++] = (struct da_pm_pad){g, bytes};
	}
	return 0;
}

/* Is path the dynamic loader that prog's PT_INTERP names (the same file)? */
static bool is_loader_of(const char *path, const struct rw_binary *prog)
{
	const char *interp = bin_interp(rw_module(prog));
	return interp && same_file(path, interp);
}

/* One file rewritten: PROG, or a library named by --lib. */
struct target {
	const char *in, *out;
	char *out_owned;        /* a default output's name */
	struct rw_binary *b;
	uint32_t module;        /* in the pathmap */
	uint32_t first;         /* its first clone in the plan (group_clones) */
	struct rw_plan plan;
	struct rw_write_stats st;
	bool written;
};

/* Put the prediction's clones where the written files have them
 * (rw_place_clones). */
static int place_clones(const struct target *t, uint32_t nt, struct pathmap **pred, char *err,
			size_t errlen)
{
	struct rw_note notes[REWRITE_MAX_BINARIES];
	struct rw_placement pl[REWRITE_MAX_BINARIES];
	uint32_t nread = 0;
	int r = 0;
	for (; nread < nt; nread++) {
		int q = rw_note_read(t[nread].out, &notes[nread], err, errlen);
		if (q != 0) {
			if (q > 0)
				snprintf(err, errlen, "%s has no icpp note", t[nread].out);
			r = -1;
			break;
		}
		pl[nread] = (struct rw_placement){t[nread].module, &notes[nread], t[nread].first};
	}
	struct pathmap *placed = NULL;
	if (r == 0)
		r = rw_place_clones(*pred, pl, nt, &placed, err, errlen);
	for (uint32_t i = 0; i < nread; i++)
		rw_note_free(&notes[i]);
	if (r == 0) {
		pm_free(*pred);
		*pred = placed;
	}
	return r;
}

static char *default_name(const char *prog, const char *suffix)
{
	const char *base = strrchr(prog, '/');
	base = base ? base + 1 : prog;
	size_t n = strlen(base) + strlen(suffix) + 1;
	char *s = malloc(n);
	if (s)
		snprintf(s, n, "%s%s", base, suffix);
	return s;
}

static double secs(struct timespec a, struct timespec b)
{
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

static void print_capability(const struct rw_binary *b)
{
	struct rw_summary s;
	rw_summarize(b, &s);
	fprintf(stderr, "icpp rewrite: %u functions: %u paddable in place (%u fp, %u no-fp frames, "
		"%u frameless)\n", s.funcs, s.paddable, s.fp, s.sp, s.frameless);
	if (s.entry_beyond)
		fprintf(stderr, "  %6u of them beyond their allocation's room through an entry "
			"wrapper\n", s.entry_beyond);
	for (int i = 1; i < RW_PAD_N; i++)
		if (s.pad_refused[i])
			fprintf(stderr, "  %6u not paddable in place: %s\n", s.pad_refused[i],
				rw_pad_why_name((enum rw_pad_why)i));
	fprintf(stderr, "icpp rewrite: of those, %u paddable through an entry wrapper\n",
		s.entry_paddable);
	for (int i = RW_ENTRY_SHAPE + 1; i < RW_ENTRY_N; i++)
		if (s.entry_refused[i])
			fprintf(stderr, "  %6u no entry wrapper: %s\n", s.entry_refused[i],
				rw_entry_why_name((enum rw_entry_why)i));
	fprintf(stderr, "icpp rewrite: %u functions cloneable, %u of them also for another "
		"module's checked calls\n", s.cloneable, s.marked);
	for (int i = 1; i < RW_CLONE_N; i++)
		if (s.clone_refused[i])
			fprintf(stderr, "  %6u not cloneable: %s\n", s.clone_refused[i],
				rw_clone_why_name((enum rw_clone_why)i));
	fprintf(stderr, "icpp rewrite: %u call instructions: %u wrappable, %u redirectable to a "
		"clone (%u of them bound calls), %u taggable, %u may call another module's clones "
		"by a check; %u indirect, %u of them promotable\n", s.calls, s.wrappable, s.redirectable,
		s.bound, s.taggable, s.xcallable, s.indirect, s.promotable);
	for (int i = 1; i < RW_WRAP_N; i++)
		if (s.wrap_refused[i])
			fprintf(stderr, "  %6u not wrappable: %s\n", s.wrap_refused[i],
				rw_wrap_why_name((enum rw_wrap_why)i));
}

/* When a tenth or more of the map's paths do not pass through PROG (other
 * programs: a test suite run by sh and make), the share that rewriting PROG
 * can change, on its own line. */
static void print_module_precision(struct pathmap *pm, struct pathmap *pred, uint32_t m,
				   const char *prog, uint64_t all_paths)
{
	struct pm_stats sb, sa;
	if (pm_stats_of(pm, m, &sb) < 0 || sb.paths * 10 > all_paths * 9 || pm_stats_of(pred, m, &sa) < 0)
		return;
	fprintf(stderr, "icpp rewrite: the %" PRIu64 " paths through %s: precise %.1f%% -> %.1f%% "
		"predicted (weighted %.1f%% -> %.1f%%)\n", sb.paths, prog,
		cli_pct(sb.precise_paths, sb.paths, 100.0), cli_pct(sa.precise_paths, sa.paths, 100.0),
		cli_pct(sb.precise_entries, sb.entries, 100.0), cli_pct(sa.precise_entries, sa.entries, 100.0));
}

/* --lib LIB[=OUT]: t->in, and t->out when given (else outputs_init). */
static int parse_lib(char *arg, struct target *t)
{
	char *eq = strchr(arg, '=');
	if (eq)
		*eq = 0;
	t->in = arg;
	t->out = eq ? eq + 1 : NULL;
	return *t->in && (!eq || *t->out) ? 0 : -1;
}

/* The folder a library was written to (OUT.libs by default): where the
 * program must find it. */
static const char *libs_dir(const char *lib_out)
{
	static char dir[PATH_MAX];
	snprintf(dir, sizeof(dir), "%s", lib_out);
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
	return dir;
}

/* Every output's name: OUT (default PROG's name + .rw), each library's
 * (default OUT.libs/LIB's name, so that the program can load it by its own
 * name from there); none may name an input or another output.  0, or -1
 * after one line. */
static int outputs_init(struct target *t, uint32_t nt)
{
	if (!t[0].out && !(t[0].out = t[0].out_owned = default_name(t[0].in, ".rw")))
		goto oom;
	for (uint32_t i = 1; i < nt; i++) {
		if (t[i].out)
			continue;
		const char *base = strrchr(t[i].in, '/') ? strrchr(t[i].in, '/') + 1 : t[i].in;
		size_t n = strlen(t[0].out) + strlen(base) + 8;
		if (!(t[i].out_owned = malloc(n)))
			goto oom;
		snprintf(t[i].out_owned, n, "%s.libs", t[0].out);
		if (mkdir(t[i].out_owned, 0777) < 0 && errno != EEXIST) {
			cli_error("rewrite", "cannot create %s: %s", t[i].out_owned, strerror(errno));
			return -1;
		}
		snprintf(t[i].out_owned, n, "%s.libs/%s", t[0].out, base);
		t[i].out = t[i].out_owned;
	}
	for (uint32_t i = 0; i < nt; i++)
		for (uint32_t j = 0; j < nt; j++) {
			if ((i != j && !strcmp(t[i].out, t[j].out)) || same_file(t[j].in, t[i].out)) {
				cli_error("rewrite", "%s would be written twice or over an input: icpp rewrite "
					  "never modifies its input (name another output)", t[i].out);
				return -1;
			}
		}
	return 0;
oom:
	cli_error("rewrite", "out of memory");
	return -1;
}

/* The rewritten modules take their files' paths and build-ids. */
static int rename_modules(struct pathmap *pred, const struct target *t, uint32_t nt, char *err,
			  size_t errlen)
{
	for (uint32_t i = 0; i < nt; i++) {
		char real[PATH_MAX];
		if (!realpath(t[i].out, real)) {
			snprintf(err, errlen, "%s: %s", t[i].out, strerror(errno));
			return -1;
		}
		if (rw_rename_module(pred, t[i].module, real, t[i].st.build_id,
				     t[i].st.build_id_len) < 0) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
	}
	return 0;
}

static void print_written(const struct target *t, bool named)
{
	const struct rw_write_stats *st = &t->st;
	char chains[48] = "", tails[48] = "", bound[64] = "", tags[48] = "", promoted[96] = "";
	char xcalls[96] = "", hot[64] = "";
	int np = 0;
	if (st->promoted)
		np = snprintf(promoted, sizeof(promoted), "; %u indirect calls promoted", st->promoted);
	if (st->tail_promoted)
		snprintf(promoted + np, sizeof(promoted) - (size_t)np,
			 "; %u indirect tail jumps promoted", st->tail_promoted);
	if (st->chains)
		snprintf(chains, sizeof(chains), "; %u in chains", st->chains);
	if (st->tails)
		snprintf(tails, sizeof(tails), "; %u after tail jumps", st->tails);
	if (st->bound)
		snprintf(bound, sizeof(bound), "; %u through a bound call%s", st->bound,
			 st->bind_now ? ", bound at load time" : "");
	if (st->tags)
		snprintf(tags, sizeof(tags), ", %u calls tagged", st->tags);
	if (st->hot_bytes)
		snprintf(hot, sizeof(hot), " (%" PRIu64 " of them hot, laid out first)",
			 st->hot_bytes);
	if (st->xcalls || st->marks)
		snprintf(xcalls, sizeof(xcalls), ", %u calls of another module's clones checked%s, "
			 "%u pages marked for them", st->xcalls,
			 st->xcalls && st->bind_now && !st->bound ? " (bound at load time)" : "",
			 st->marks);
	fprintf(stderr, "icpp rewrite: %s%s%u functions padded (%u through entry wrappers), %u "
		"callsites wrapped, %u functions cloned (%u by dispatch%s%s%s%s)%s%s, %u bytes patched, %" PRIu64
		" bytes of new code%s; %" PRIu64 " -> %" PRIu64 " bytes (+%.1f%%)\n",
		named ? t->out : "", named ? ": " : "", st->pads, st->entry_pads, st->wraps,
		st->clones, st->dispatched, chains, tails, bound, promoted, tags, xcalls, st->patched_bytes,
		st->tramp_bytes, hot,
		st->in_size,
		st->out_size,
		st->in_size ? 100.0 * ((double)st->out_size - (double)st->in_size) / (double)st->in_size : 0);
}

/* One run of icpp rewrite: what the command line asks for, then what the
 * run has made so far (freed by rewrite_free). */
struct rewrite {
	struct da_options o;
	struct da_capability cap;
	const char *map, *planfile, *samples;
	struct target t[REWRITE_MAX_BINARIES];  /* PROG, then each --lib */
	uint32_t nt;
	bool everything, explain, quiet, callsites;
	uint64_t ev_pad, ev_wrap, ev_clone;
	char *defmap, *predpath;
	struct pathmap *pm, *pred;
	struct rewrite_cap rwcap;
	struct da_bridge br;
	struct da_result r;
	struct da_pm_plan pp;
	bool solved;
	struct timespec t0, ta, ts, tw, t1;     /* start, analysed, planned, written, predicted */
};

static int rewrite_oom(void)
{
	cli_error("rewrite", "out of memory");
	return -1;
}

/* --everything[=P,W[,C]] */
static bool parse_everything(const char *arg, struct rewrite *R)
{
	unsigned long long a, b, c = 1;
	char extra;
	int got = sscanf(arg, "%llu,%llu,%llu%c", &a, &b, &c, &extra);
	if ((got != 2 && got != 3) || a % 16 || b % 16 || a > RW_MAX_AMOUNT || b > RW_MAX_AMOUNT ||
	    c > 1) {
		cli_error("rewrite", "--everything wants PAD,WRAP[,CLONE], multiples of 16 up "
			  "to %d and 0 or 1, not '%s'", RW_MAX_AMOUNT, arg);
		return false;
	}
	R->ev_pad = a;
	R->ev_wrap = b;
	R->ev_clone = c;
	return true;
}

/* -1 to go on; else the exit status (0 after --help, 2 after one line). */
static int parse_args(int argc, char **argv, struct rewrite *R)
{
	static const struct option opts[] = {
		{"map", required_argument, NULL, 'm'},
		{"output", required_argument, NULL, 'o'},
		{"plan", required_argument, NULL, 'P'},
		{"lib", required_argument, NULL, 'L'},
		{"samples", required_argument, NULL, 'i'},
		{"everything", optional_argument, NULL, 'E'},
		{"explain", no_argument, NULL, 'x'},
		{"max-stack-growth", required_argument, NULL, 'g'},
		{"max-recursion-growth", required_argument, NULL, 'R'},
		{"code-per-path", required_argument, NULL, 'k'},
		{"hot-code-per-path", required_argument, NULL, 'K'},
		{"no-wrap", no_argument, NULL, 'W'},
		{"no-clone", no_argument, NULL, 'C'},
		{"no-dispatch", no_argument, NULL, 'D'},
		{"no-promote", no_argument, NULL, 'U'},
		{"no-tail", no_argument, NULL, 'T'},
		{"dispatch-weight", required_argument, NULL, 'X'},
		{"wrap-weight", required_argument, NULL, 'Y'},
		{"precision", required_argument, NULL, 'A'},
		{"pad-bound", required_argument, NULL, 'p'},
		{"wrap-bound", required_argument, NULL, 'w'},
		{"seed", required_argument, NULL, 's'},
		{"searches", required_argument, NULL, 'N'},
		{"budget", required_argument, NULL, 'b'},
		{"callsites", no_argument, NULL, 'S'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct da_options *o = &R->o;
	uint64_t v;
	int c;
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "m:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			R->map = optarg;
			break;
		case 'o':
			R->t[0].out = optarg;
			break;
		case 'P':
			R->planfile = optarg;
			break;
		case 'i':
			R->samples = optarg;
			break;
		case 'L':
			if (R->nt == REWRITE_MAX_BINARIES) {
				cli_error("rewrite", "at most %d --lib: name the libraries whose paths matter "
					  "(icpp stats MAP --module LIB shows a library's)",
					  REWRITE_MAX_BINARIES - 1);
				return 2;
			}
			if (parse_lib(optarg, &R->t[R->nt++]) < 0) {
				cli_error("rewrite", "--lib wants LIB or LIB=OUT, not '%s'", optarg);
				return 2;
			}
			break;
		case 'E':
			R->everything = true;
			if (optarg && !parse_everything(optarg, R))
				return 2;
			break;
		case 'x':
			R->explain = true;
			break;
		case 'g':
			if (!cli_parse_growth("rewrite", "max-stack-growth", optarg, &o->max_stack_growth))
				return 2;
			break;
		case 'R':
			if (!cli_parse_growth("rewrite", "max-recursion-growth", optarg,
					      &o->max_recursion_growth))
				return 2;
			break;
		case 'k':
			if (!cli_parse_code_per_path("rewrite", "--code-per-path", optarg,
						     &o->code_weight))
				return 2;
			break;
		case 'K':
			if (!cli_parse_code_per_path("rewrite", "--hot-code-per-path", optarg,
						     &o->hot_code_weight))
				return 2;
			break;
		case 'X':
			if (!cli_parse_run_weight("rewrite", "--dispatch-weight", optarg,
						  &o->dispatch_weight))
				return 2;
			break;
		case 'Y':
			if (!cli_parse_run_weight("rewrite", "--wrap-weight", optarg, &o->wrap_weight))
				return 2;
			break;
		case 'A':
			if (!cli_parse_precision("rewrite", optarg, &o->precision_target))
				return 2;
			break;
		case 'W':
			o->allow_wrap = false;
			break;
		case 'C':
			o->allow_clone = false;
			break;
		case 'D':
			R->cap.dispatch = false;
			break;
		case 'U':
			R->cap.promote = false;
			break;
		case 'T':
			R->cap.tail = false;
			break;
		case 'p':
		case 'w':
			if (!cli_parse_u64(optarg, &v, RW_MAX_AMOUNT) || v % 16) {
				cli_error("rewrite", "--%s wants a multiple of 16 from 0 to %d, not '%s'",
					  c == 'p' ? "pad-bound" : "wrap-bound", RW_MAX_AMOUNT, optarg);
				return 2;
			}
			*(c == 'p' ? &R->cap.pad_bound : &R->cap.wrap_bound) = (uint32_t)v;
			break;
		case 's':
			if (!cli_parse_u64(optarg, &o->seed, UINT64_MAX)) {
				cli_error("rewrite", "--seed wants a number, not '%s'", optarg);
				return 2;
			}
			break;
		case 'N':
			if (!cli_parse_searches("rewrite", optarg, &o->searches))
				return 2;
			break;
		case 'b':
			if (!cli_parse_count(optarg, &o->budget)) {
				cli_error("rewrite", "--budget wants a positive number of node moves (e.g. 200M), not '%s'",
					  optarg);
				return 2;
			}
			break;
		case 'S':
			R->callsites = true;
			break;
		case 'q':
			R->quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cli_bad_option("rewrite", argv[optind - 1]);
		}
	}
	if (optind != argc - 1) {
		cli_error("rewrite", "expected one program; usage: icpp rewrite PROG [-m MAP] [-o OUT]");
		return 2;
	}
	if (R->planfile && R->everything) {
		cli_error("rewrite", "--plan and --everything exclude each other");
		return 2;
	}
	if (R->samples && (R->planfile || R->everything)) {
		cli_error("rewrite", "--samples weighs the solver's problem: it has no use with %s",
			  R->planfile ? "--plan" : "--everything");
		return 2;
	}
	if (R->explain && R->nt > 1) {
		cli_error("rewrite", "--explain describes PROG alone: drop --lib");
		return 2;
	}
	R->t[0].in = argv[optind];
	return -1;
}

/* Each binary opened; none of the libraries PROG's dynamic loader. */
static int open_targets(struct rewrite *R)
{
	char err[1024];
	struct target *t = R->t;
	for (uint32_t i = 0; i < R->nt; i++) {
		t[i].b = rw_open(t[i].in, err, sizeof(err));
		if (!t[i].b) {
			cli_error("rewrite", "%s", err);
			return -1;
		}
	}
	for (uint32_t i = 1; i < R->nt; i++)
		if (is_loader_of(t[i].in, t[0].b)) {
			cli_error("rewrite", "%s is %s's dynamic loader, which the kernel loads (its "
				  "PT_INTERP), not LD_LIBRARY_PATH: a rewritten copy would never run; "
				  "drop --lib %s", t[i].in, t[0].in, t[i].in);
			return -1;
		}
	return 0;
}

/* --explain: what the rewriter may change in PROG, and why not elsewhere.
 * The exit status. */
static int explain(struct rewrite *R)
{
	char err[1024];
	struct pathmap *epm = NULL;
	if (R->map && pm_read(R->map, &epm, err, sizeof(err)) < 0) {
		cli_error("rewrite", "%s", err);
		return 1;
	}
	if (epm)
		rewrite_bound_imports(R->t[0].b, epm, "icpp rewrite", true);
	pm_free(epm);
	rw_explain(R->t[0].b, stdout);
	print_capability(R->t[0].b);
	return fflush(stdout) ? 1 : 0;
}

/* The outputs' names, the pathmap, and what the rewriter may change in
 * each binary (the capability the solver gets). */
static int read_capability(struct rewrite *R)
{
	char err[1024];
	const char *prog = R->t[0].in;
	if (!R->map) {
		R->defmap = default_name(prog, ".icpp");
		if (!R->defmap)
			return rewrite_oom();
		R->map = R->defmap;
	}
	if (outputs_init(R->t, R->nt) < 0)
		return -1;
	if (pm_read(R->map, &R->pm, err, sizeof(err)) < 0) {
		cli_error("rewrite", "%s (train first: icpp train -o %s -- %s ...)", err, R->map, prog);
		return -1;
	}
	struct rw_binary *bs[REWRITE_MAX_BINARIES];
	const char *ins[REWRITE_MAX_BINARIES];
	for (uint32_t i = 0; i < R->nt; i++) {
		bs[i] = R->t[i].b;
		ins[i] = R->t[i].in;
	}
	if (rewrite_cap_init(&R->rwcap, bs, ins, R->nt, R->pm, R->map, "rewrite", R->quiet,
			     &R->cap) < 0)
		return -1;
	for (uint32_t i = 0; i < R->nt; i++)
		R->t[i].module = R->rwcap.t[i].module;
	if (!R->quiet)
		for (uint32_t i = 0; i < R->nt; i++) {
			if (R->nt > 1)
				fprintf(stderr, "icpp rewrite: %s:\n", R->t[i].in);
			print_capability(R->t[i].b);
		}
	return 0;
}

/* The plan in pathmap terms (pp): --everything's, --plan's, or the
 * solver's. */
static int choose_plan(struct rewrite *R)
{
	char err[1024];
	if (R->everything) {
		for (uint32_t i = 0; i < R->nt; i++) {
			struct rw_plan ev = {0};
			int e = rw_plan_everything_seen(R->t[i].b, &R->rwcap.t[i].vis, (uint32_t)R->ev_pad,
							(uint32_t)R->ev_wrap, R->ev_clone, &ev) ||
				to_pm_plan(R->pm, R->t[i].module, &ev, &R->pp);
			rw_plan_free(&ev);
			if (e)
				return rewrite_oom();
		}
		if (R->ev_clone && rewrite_cap_everything_xcalls(&R->rwcap, R->pm, &R->pp) < 0)
			return rewrite_oom();
		return 0;
	}
	if (R->planfile) {
		if (da_plan_read(R->planfile, R->pm, &R->pp, err, sizeof(err)) < 0) {
			cli_error("rewrite", "%s", err);
			return -1;
		}
		return 0;
	}
	if (da_from_pathmap(R->pm, &R->cap, R->callsites ? DA_UNIT_CALLSITES : DA_UNIT_FUNCTIONS,
			    &R->br, err, sizeof(err)) < 0) {
		cli_error("rewrite", "%s: %s", R->map, err);
		return -1;
	}
	if (R->samples && sample_weights(R->br.prob, R->samples, R->map, "rewrite", R->quiet) < 0)
		return -1;
	if (!R->quiet && isatty(2))
		cli_solve_progress("rewrite", R->br.prob, &R->o);
	if (da_solve(R->br.prob, &R->o, &R->r, err, sizeof(err)) < 0) {
		cli_error("rewrite", "%s: %s", R->map, err);
		return -1;
	}
	if (da_pm_plan_from(&R->br, &R->r.plan, &R->pp) < 0)
		return rewrite_oom();
	R->solved = true;
	return 0;
}

/* The target whose module is m, as an index, or R->nt. */
static uint32_t target_of(const struct rewrite *R, uint32_t m)
{
	uint32_t i = 0;
	while (i < R->nt && R->t[i].module != m)
		i++;
	return i;
}

/* Point target i's calls of other modules' clones at them (rewriter.h
 * section 1, Cross-module calls): such a module comes after i on the
 * command line and is written before it (write_targets), its note says
 * where each of its clones went (notes[l], read once: noted[l]) and its
 * build-id what its markers hold.  0, or -1 with err. */
static int resolve_xcalls(struct rewrite *R, uint32_t i, const uint32_t *first,
			  struct rw_note *notes, bool *noted, char *err, size_t errlen)
{
	struct target *t = R->t;
	for (uint32_t k = 0; k < R->pp.nclones; k++) {
		const struct da_pm_clone *c = &R->pp.clones[k];
		const struct pm_function *f = &R->pm->funcs[c->func];
		if (!c->xcall || c->cs_module != t[i].module || f->module == c->cs_module)
			continue;
		uint32_t l = target_of(R, f->module);
		if (l <= i || l == R->nt) {
			snprintf(err, errlen, "clone %u of the plan takes a call of %s directly, but it "
				 "is of %s, which is not named after it (the order of --lib)", k,
				 t[i].in, l == R->nt ? "a module not rewritten" : t[l].in);
			return -1;
		}
		if (!noted[l]) {
			if (rw_note_read(t[l].out, &notes[l], err, errlen) != 0)
				return -1;
			noted[l] = true;
		}
		uint32_t lk = k - first[l];
		uint32_t copy_in = c->parent != DA_NONE ? c->parent - first[i] : RW_NONE;
		struct rw_plan_xcall *x =
			(struct rw_plan_xcall *)rw_plan_xcall_of(&t[i].plan, c->cs_addr, copy_in);
		if (x && (x->hop_slot ? x->hop_func : x->fwd ? x->fwd : x->func) != f->addr)
			continue;       /* a forwarder's clone the call's check passes by */
		if (!x || lk >= notes[l].nclones || notes[l].clones[lk].func != f->addr) {
			snprintf(err, errlen, "internal error: %s has no clone %u of 0x%" PRIx64,
				 t[l].out, lk, f->addr);
			return -1;
		}
		x->dest = notes[l].clones[lk].addr;
		/* the page checked first: of the forwarder to a third module
		 * (named between the two: xcall_routes), written before i */
		struct rewrite_xcall_route r;
		uint32_t h = l;
		if (x->hop_slot) {
			if (!rewrite_cap_xcall_route(&R->rwcap, c->cs_module, c->cs_addr, f->module,
						     f->addr, &r)) {
				snprintf(err, errlen, "internal error: no route to clone %u", k);
				return -1;
			}
			h = target_of(R, r.hm);
			x->hop_value = rw_xcall_value(t[l].st.build_id, 20,
						      x->hop_mark & ~(uint64_t)0xfff);
		}
		x->value = rw_xcall_value(t[h].st.build_id, 20, x->mark & ~(uint64_t)0xfff);
	}
	return 0;
}

/* Each binary's share of the plan, as the rewriter takes it; each written,
 * the last library first, so that a module's calls find the clones of the
 * libraries after it (resolve_xcalls). */
static int write_targets(struct rewrite *R)
{
	char err[1024];
	struct target *t = R->t;
	uint32_t first[REWRITE_MAX_BINARIES];
	if (group_clones(R->pm, &R->rwcap, &R->pp, first) < 0)
		return rewrite_oom();
	/* what each clone takes, so that a dispatch tests the heavier first,
	 * and how often each piece of new code runs, to lay it out */
	if (da_pm_plan_weigh(R->pm, &R->pp, err, sizeof(err)) < 0) {
		cli_error("rewrite", "%s", err);
		return -1;
	}
	for (uint32_t i = 0; i < R->nt; i++) {
		t[i].first = first[i];
		if (to_rw_plan(R->pm, &R->rwcap, t[i].module, first, &R->pp, &t[i].plan, err,
			       sizeof(err)) < 0) {
			cli_error("rewrite", "%s", err);
			return -1;
		}
	}
	for (uint32_t i = 0; i < R->nt; i++)
		if (add_fragment_pads(R->pm, t[i].module, t[i].b, &R->pp) < 0)
			return rewrite_oom();
	clock_gettime(CLOCK_MONOTONIC, &R->ts);
	struct rw_note notes[REWRITE_MAX_BINARIES];
	bool noted[REWRITE_MAX_BINARIES] = {false};
	int rc = 0;
	for (uint32_t i = R->nt; i-- > 0 && rc == 0;) {
		rc = resolve_xcalls(R, i, first, notes, noted, err, sizeof(err));
		if (rc == 0)
			rc = rw_write(t[i].b, &t[i].plan, t[i].out, &t[i].st, err, sizeof(err));
		t[i].written = rc == 0;
	}
	for (uint32_t i = 0; i < R->nt; i++)
		if (noted[i])
			rw_note_free(&notes[i]);
	if (rc < 0) {
		cli_error("rewrite", "%s", err);
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &R->tw);
	return 0;
}

/* The predicted pathmap of OUT (and the libraries), OUT.icpp. */
static int write_prediction(struct rewrite *R)
{
	char err[1024];
	const char *out = R->t[0].out;
	size_t pl = strlen(out) + 6;
	R->predpath = malloc(pl);
	if (!R->predpath)
		return rewrite_oom();
	snprintf(R->predpath, pl, "%s.icpp", out);
	if (da_predict_pathmap(R->pm, &R->pp, &R->pred, err, sizeof(err)) < 0 ||
	    place_clones(R->t, R->nt, &R->pred, err, sizeof(err)) < 0 ||
	    rename_modules(R->pred, R->t, R->nt, err, sizeof(err)) < 0 ||
	    pm_write(R->pred, R->predpath, err, sizeof(err)) < 0) {
		cli_error("rewrite", "%s written, but not its predicted pathmap: %s", out, err);
		return -1;
	}
	clock_gettime(CLOCK_MONOTONIC, &R->t1);
	return 0;
}

/* What was written, the time it took, and the precision predicted. */
static void print_summary(struct rewrite *R)
{
	const struct target *t = R->t;
	uint32_t nt = R->nt;
	const struct da_result *r = &R->r;
	for (uint32_t i = 0; i < nt; i++)
		print_written(&t[i], nt > 1);
	fprintf(stderr, "icpp rewrite: %.2f s: analysis %.2f s, %s %.2f s, writing %.2f s, "
		"prediction %.2f s\n", secs(R->t0, R->t1), secs(R->t0, R->ta),
		R->solved ? "solver" : "plan", secs(R->ta, R->ts), secs(R->ts, R->tw),
		secs(R->tw, R->t1));
	struct pm_stats sb, sa;
	if (pm_stats(R->pm, &sb) == 0 && pm_stats(R->pred, &sa) == 0) {
		fprintf(stderr, "icpp rewrite: precise paths %.1f%% -> %.1f%% predicted "
			"(weighted %.1f%% -> %.1f%%)%s\n", cli_pct(sb.precise_paths, sb.paths, 100.0),
			cli_pct(sa.precise_paths, sa.paths, 100.0), cli_pct(sb.precise_entries, sb.entries, 100.0),
			cli_pct(sa.precise_entries, sa.entries, 100.0), R->everything ? " [--everything]" : "");
		for (uint32_t i = 0; i < nt; i++)
			print_module_precision(R->pm, R->pred, t[i].module, t[i].in, sb.paths);
	}
	if (R->solved) {
		rewrite_cap_suggest(&R->rwcap, R->pm, r, "icpp rewrite: ", "--lib", stderr);
		if (R->samples)
			fprintf(stderr, "icpp rewrite: samples of %s at a precise CID: %.1f%% -> %.1f%% "
				"predicted\n", R->samples, cli_pct(r->before.precise_weight, r->before.weight, 100.0),
				cli_pct(r->after.precise_weight, r->after.weight, 100.0));
		fprintf(stderr, "icpp rewrite: max stack growth %.3fx (+%" PRId64 " bytes)\n",
			r->max_growth, r->max_growth_bytes);
		cli_print_run_time(stderr, "icpp rewrite: ", R->pm, R->br.prob, r);
		cli_print_topup(stderr, "icpp rewrite: ", r, R->o.precision_target);
		if (r->recursion_node != DA_NONE)
			fprintf(stderr, "icpp rewrite: a level of a recursion grows %.2fx (%" PRId64
				" -> %" PRId64 " bytes), and so does every level deeper than training's "
				"(--max-recursion-growth)\n", r->recursion_growth, r->recursion_old,
				r->recursion_new);
	}
	for (uint32_t i = 0; i < nt; i++)
		if (t[i].st.phdr_compact)
			fprintf(stderr, "icpp rewrite: note: %s's program headers need Linux >= 5.18 "
				"(its .bss is too large to place them the old way)\n", t[i].out);
	if (nt > 1)
		fprintf(stderr, "icpp rewrite: the program must load the rewritten libraries "
			"(LD_LIBRARY_PATH=%s for linked ones): the prediction holds for them "
			"together\n", libs_dir(t[1].out));
	fprintf(stderr, "icpp rewrite: wrote %s and %s; check with: icpp verify %s -- ARGS\n",
		t[0].out, R->predpath, t[0].out);
}

/* rc != 0: a set of files only some of which were written is no result. */
static void rewrite_free(struct rewrite *R, int rc)
{
	struct target *t = R->t;
	if (rc && !t[R->nt - 1].written)
		for (uint32_t i = 0; i < R->nt; i++)
			if (t[i].written)
				unlink(t[i].out);
	free(R->defmap);
	free(R->predpath);
	rewrite_cap_free(&R->rwcap);
	da_pm_plan_free(&R->pp);
	da_result_free(&R->r);
	da_bridge_free(&R->br);
	pm_free(R->pm);
	pm_free(R->pred);
	for (uint32_t i = 0; i < R->nt; i++) {
		rw_plan_free(&t[i].plan);
		free(t[i].out_owned);
		if (t[i].b)
			rw_close(t[i].b);
	}
}

int cmd_rewrite(int argc, char **argv)
{
	struct rewrite run = {.nt = 1, .ev_pad = 32, .ev_wrap = 16, .ev_clone = 1}, *R = &run;
	da_options_default(&R->o);
	da_capability_default(&R->cap);
	R->o.allow_clone = true;
	int rc = parse_args(argc, argv, R);
	if (rc >= 0)
		return rc;
	rc = 1;
	clock_gettime(CLOCK_MONOTONIC, &R->t0);
	if (open_targets(R) < 0)
		goto out;
	clock_gettime(CLOCK_MONOTONIC, &R->ta);
	if (R->explain) {
		rc = explain(R);
		goto out;
	}
	if (read_capability(R) < 0 || choose_plan(R) < 0 || write_targets(R) < 0 ||
	    write_prediction(R) < 0)
		goto out;
	if (!R->quiet)
		print_summary(R);
	rc = 0;
out:
	rewrite_free(R, rc);
	return rc;
}
