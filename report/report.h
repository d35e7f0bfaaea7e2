/* report: samples + pathmap -> call paths (`icpp report`).
 *
 * Each sample record is normalised to a CID with the CFI of its IP
 * (method.md): CFA = SP + k or BP + 16, height = base - CFA, function =
 * (module build-id, function start).  The pathmap's nodes at that CID are its
 * candidates, grouped by function sequence (the method's notion of a path):
 *   precise    one function sequence: all its samples go to that path (a
 *              clone of icpp rewrite counts as the function it copies: the
 *              same path through a clone and through the original, or two
 *              clones, is one path, the one the report shows);
 *   ambiguous  several: the samples are split among them in proportion to
 *              their training entries (evenly when those are all 0), and each
 *              share is marked as such wherever it is shown;
 *   missing    no node at that CID, or a sample that has no CID (no module, no
 *              function, no CFI, no base): reported with its function.
 * A sample in a PLT stub has the CID of the callee the stub leads to (plt.c);
 * one in code another function jumps into may be that function's (jumps.c);
 * one in a trampoline of icpp rewrite has its caller's (the call goes on),
 * one in a tagged or bound call's stub its caller's at the call, one in a
 * bound call's thunk the clone's it jumps to, at its entry.
 * With --validate, each sample's real stack (frame-pointer walk recorded with
 * it) is compared with the candidates (validate.c).
 */
#ifndef ICPP_REPORT_H
#define ICPP_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "binary/binary.h"
#include "collector/samplefile.h"
#include "pathmap/pathmap.h"

enum rp_format { RP_TEXT, RP_FOLDED, RP_PPROF, RP_SVG };

struct rp_opts {
	const char *samples;        /* -i, default icpp.samples */
	const char *pathmap;        /* -m */
	const char *output;         /* -o, default stdout (pprof: profile.pb.gz) */
	enum rp_format format;
	int top;                    /* --top N, default 20 */
	bool validate;
	const char *title;          /* svg title, may be NULL */
};

int rp_run(const struct rp_opts *o, char *err, size_t errlen);

/* The samples of `samples` per node of `pathmap` (the map of the program
 * recorded), as the report attributes them: a precise sample to its path's
 * node at the CID, an ambiguous one split among the candidates by training
 * entries, a missing one to none.  *w: one per node (free it); counts:
 * samples by enum rp_status.  For icpp plan --samples.  0, or -1 and one
 * line. */
int rp_node_samples(const char *samples, const char *pathmap, double **w, uint64_t counts[3],
		    char *err, size_t errlen);

/* ---- internal: shared by report.c, the formats and validate.c ---- */

enum rp_status { RP_PRECISE, RP_AMBIGUOUS, RP_MISSING };

/* Why a sample has no path. */
enum rp_missing {
	RP_M_NONE,
	RP_M_CID,                   /* CID not in the pathmap */
	RP_M_FUNCTION,              /* the function never appears in the pathmap */
	RP_M_MODULE,                /* the module is not in the pathmap */
	RP_M_NO_MAPPING,            /* the IP is in no recorded module (JIT, vdso, ...) */
	RP_M_NO_SYMBOL,             /* no function covers the IP */
	RP_M_NO_CFI,                /* no register+offset CFA rule at the IP */
	RP_M_NO_FP,                 /* CFA = BP + 16 but BP was not on the stack */
	RP_M_NO_BASE,               /* the thread's base was unknown */
	RP_M_OFF_STACK,             /* SP above the base: sigaltstack, coroutine */
	RP_M_ELSEWHERE,             /* every path at the CID runs through a module
	                             * the process never mapped (another program's) */
	RP_M_NR
};
extern const char *const rp_missing_names[RP_M_NR];

/* A module of the sample file, opened. */
struct rp_module {
	char *path;
	struct bin_module *bin;     /* NULL when the file cannot be opened */
	uint32_t pm_module;         /* pathmap module, PM_NONE */
	uint8_t build_id[SF_BUILD_ID_MAX];
	uint32_t build_id_len;
};

/* One sample record, resolved. */
struct rp_sample {
	const struct sf_record *rec;
	enum rp_status status;
	enum rp_missing why;
	struct rp_module *mod;      /* module of the IP, or NULL */
	uint64_t vaddr;             /* ELF vaddr of the IP */
	const struct bin_function *fn;
	struct bin_cfa rule;
	int64_t height;
	uint32_t func;              /* pathmap function, PM_NONE */
	/* Candidates: one node per function sequence, with its share. */
	uint32_t ncand;
	uint32_t *cand;             /* representative node of each sequence */
	double *share;              /* fraction of rec->count, sums to 1 */
};

struct rp_ctx {
	const struct rp_opts *o;
	struct sample_set *ss;
	struct pathmap *pm;
	uint32_t *path_id;          /* per pathmap node: function-sequence id */
	uint32_t npaths;
	uint32_t *profile_id;       /* the same with clones as their originals
	                             * (pm_profile_path_ids): the path shown */
	/* The modules of a node's path (its frames' functions and callsites)
	 * and those a process mapped, as bit (pathmap module % 64): a path
	 * with a module its process never mapped is no candidate (a map of
	 * several programs, or of another one, shares libc's CIDs). */
	uint64_t *path_mods;        /* per pathmap node */
	struct rp_proc_mods {
		uint32_t tgid;
		uint64_t mods;
	} *procs;
	uint32_t nprocs;
	struct rp_module *mods;     /* one per distinct module file */
	uint32_t nmods;
	uint32_t *sf_mod;           /* per sample-file mapping: index into mods */
	struct rp_sample *samples;  /* one per record */
	struct plt_calls *plt_calls; /* plt.c's index, built on first use */
	struct module_jumps *jumps;  /* jumps.c's, per module on first use */
	bool plt_indexed;
	uint64_t total;             /* samples in records */
	uint64_t n_status[3];
	uint64_t n_missing[RP_M_NR];
};

/* Where an address of process tgid is: its module, ELF vaddr, function and
 * CFA rule (cfa_rc 0 when there is one).  -1 when no recorded module maps it;
 * fn is NULL when the module file is unusable or no function covers it. */
struct rp_location {
	struct rp_module *mod;
	uint64_t vaddr;
	const struct bin_function *fn;
	int cfa_rc;
	struct bin_cfa rule;
};
int rp_locate(struct rp_ctx *c, uint32_t tgid, uint64_t addr, struct rp_location *loc);
/* A sample in a PLT stub of mod at vaddr (plt.c): the trained frames at
 * height whose call went through that stub, or NULL (*n 0) when vaddr is in
 * no stub or no such frame was trained. */
const uint32_t *rp_plt_lookup(struct rp_ctx *c, const struct rp_module *mod, uint64_t vaddr,
			      int64_t height, size_t *n);
void rp_plt_free(struct rp_ctx *c);
/* The direct jumps between the functions of mod (jumps.c): the starts of
 * the functions that jump into the inside of the function starting at func,
 * and the PLT stubs (their starts) that function jumps to.  NULL (*n 0) when
 * there are none. */
const uint64_t *rp_jumpers_into(struct rp_ctx *c, const struct rp_module *mod, uint64_t func,
				size_t *n);
const uint64_t *rp_stubs_jumped_to(struct rp_ctx *c, const struct rp_module *mod, uint64_t func,
				   size_t *n);
void rp_jumps_free(struct rp_ctx *c);
/* A sample at vaddr in `code`, the entry code icpp rewrite wrote for a
 * function (__icpp_dispatch_NAME, __icpp_entry_NAME; entry.c): the start of
 * that function, what to add to the sample's height for its frame, and the
 * entries of the clones whose frame it may be in (those whose je the code
 * can still reach from vaddr: a search's other half cannot), at most
 * RP_MAX_DISPATCH.  -1 when code is no such code or does not decode. */
#define RP_MAX_DISPATCH 128        /* rewriter.h's RW_MAX_DISPATCH */
struct rp_entry_frames {
	uint64_t func;
	int64_t func_extra;
	uint64_t clones[RP_MAX_DISPATCH];
	uint32_t nclones;
};
int rp_entry_frames(const struct rp_module *mod, const struct bin_function *code, uint64_t vaddr,
		    struct rp_entry_frames *out);
/* rp_entry_frames on the code's bytes at addr, without the module: func
 * left 0, *resume the target of its last jump out (f+N, in the function),
 * and clones that may include a je among f's displaced instructions (which
 * rp_entry_frames drops by f's bounds).  -1 when out of memory. */
int rp_entry_scan(const uint8_t *bytes, size_t size, uint64_t addr, uint64_t vaddr,
		  uint64_t *resume, struct rp_entry_frames *out);
/* The file name of a path (after the last '/'). */
const char *rp_base_name(const char *path);
/* The label of pathmap function func (demangled, or FILE+0xADDR; a clone
 * icpp rewrite made is the function it copies: pm_profile_label). */
const char *rp_func_label(struct rp_ctx *c, uint32_t func, char *buf, size_t len);
/* The module of the sample file that holds pathmap module pm_module, or NULL. */
struct rp_module *rp_module_of_pm(struct rp_ctx *c, uint32_t pm_module);
/* Label of a missing sample's function: "name (module)" or "module+0xaddr". */
void rp_missing_label(struct rp_ctx *c, const struct rp_sample *s, char *buf, size_t len);

/* Outputs. */
int rp_text(struct rp_ctx *c, FILE *out);
int rp_folded(struct rp_ctx *c, FILE *out);
int rp_svg(struct rp_ctx *c, FILE *out);
int rp_pprof(struct rp_ctx *c, FILE *out, char *err, size_t errlen);

/* Flame-graph stacks shared by folded and svg: every (stack, weight) with
 * frames root first.  Ambiguous shares end in a frame marked "[ambiguous]",
 * missing samples sit under a "[missing: WHY]" frame. */
typedef void (*rp_stack_cb)(void *ctx, const char *const *frames, uint32_t n, double weight,
			    enum rp_status st);
void rp_for_each_stack(struct rp_ctx *c, rp_stack_cb cb, void *ctx);

/* Validation (report --validate): counts per class, and the text section. */
enum rp_vclass { RP_V_PRECISE, RP_V_AMBIG_OK, RP_V_INCORRECT, RP_V_MISSING, RP_V_NO_TRUTH, RP_V_NR };
struct rp_validation {
	uint64_t n[RP_V_NR];
	uint64_t truncated;         /* truths cut at a frame without a frame pointer */
};
int rp_validate(struct rp_ctx *c, struct rp_validation *v, FILE *out);

#endif
