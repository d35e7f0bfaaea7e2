#include "train/analysis.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <uthash.h>

#include "train/analysis_store.h"
#include "util/cpus.h"
#include "util/order.h"
#include "x86/reloc.h"

struct cache_entry {
	struct analysed_module mod;
	UT_hash_handle hh;
};

struct analysis_cache {
	pthread_mutex_t lock;
	struct cache_entry *by_path;
	csh cs;
	struct analysis_store store;
};

/* Direct branch targets of the whole module, sorted, to test "does anything
 * jump into these displaced bytes". */
struct targets {
	uint64_t *v;
	size_t n, cap;
};

static void targets_add(struct targets *t, uint64_t a)
{
	if (t->n == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 4096;
		t->v = realloc(t->v, t->cap * sizeof(*t->v));
		if (!t->v) {
			fprintf(stderr, "icpp: out of memory\n");
			exit(1);
		}
	}
	t->v[t->n++] = a;
}

/* The index of the first of v[0..n) (ascending) at or above x, or n. */
static size_t first_at_or_above(const uint64_t *v, size_t n, uint64_t x)
{
	size_t a = 0, b = n;
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (v[mid] < x)
			a = mid + 1;
		else
			b = mid;
	}
	return a;
}

/* Is any target in the open interval (lo, hi)? */
static int targets_within(const struct targets *t, uint64_t lo, uint64_t hi)
{
	size_t a = first_at_or_above(t->v, t->n, lo + 1);
	return a < t->n && t->v[a] < hi;
}

/* and $-N,%rsp with N > 16: the frames below this one sit at heights that
 * depend on the base's alignment (16 is harmless: every CFA is 16-aligned). */
static bool realigns_stack(const cs_insn *insn)
{
	const cs_x86 *x = &insn->detail->x86;
	return insn->id == X86_INS_AND && x->op_count == 2 && x->operands[0].type == X86_OP_REG &&
	       x->operands[0].reg == X86_REG_RSP && x->operands[1].type == X86_OP_IMM &&
	       x->operands[1].imm < -16;
}

/* A share of a module's functions, [lo, hi), for one thread of the scan. */
struct scan_job {
	const struct bin_module *m;
	const struct bin_function *f;
	size_t lo, hi;
	csh cs;
	pthread_mutex_t *read_lock;     /* bin_read asks libelf, one thread at a time */
	struct targets t, foreign, realign;
};

static void *scan_functions(void *arg)
{
	struct scan_job *j = arg;
	const struct bin_function *f = j->f;
	cs_insn *insn = cs_malloc(j->cs);
	for (size_t i = j->lo; i < j->hi; i++) {
		uint8_t *code = malloc(f[i].size);
		pthread_mutex_lock(j->read_lock);
		int rc = code ? bin_read(j->m, f[i].addr, code, f[i].size) : -1;
		pthread_mutex_unlock(j->read_lock);
		if (rc < 0) {
			free(code);
			continue;
		}
		const uint8_t *p = code;
		size_t left = f[i].size;
		uint64_t addr = f[i].addr;
		while (left) {
			if (!x86_disasm_iter(j->cs, &p, &left, &addr, insn)) {
				p++, left--, addr++;   /* data or padding: resync */
				continue;
			}
			uint64_t target = x86_branch_target(insn);
			if (target)
				targets_add(&j->t, target);
			if (target && (target < f[i].addr || target - f[i].addr >= f[i].size))
				targets_add(&j->foreign, target);
			if (realigns_stack(insn) &&
			    (!j->realign.n || j->realign.v[j->realign.n - 1] != f[i].addr))
				targets_add(&j->realign, f[i].addr);
		}
		free(code);
	}
	cs_free(insn, 1);
	return NULL;
}

static void targets_append(struct targets *to, struct targets *from)
{
	for (size_t i = 0; i < from->n; i++)
		targets_add(to, from->v[i]);
	free(from->v);
}

#define SCAN_THREADS_MAX 16
#define SCAN_BYTES_PER_THREAD (1u << 20)   /* below this much code, one thread */

/* One pass over the module's code: direct branch targets (all of them; those
 * outside the function that branches into `foreign`) and the functions that
 * realign the stack (into `realign`, by start address).  Capstone decodes
 * some 5-10 MB of code a second (libLLVM: 10 s), so large modules are split
 * over the CPUs, each share with a Capstone handle of its own; the results
 * do not depend on the split. */
static void scan_module(csh cs, const struct bin_module *m, struct targets *t,
			struct targets *foreign, struct targets *realign)
{
	size_t n, bytes = 0;
	const struct bin_function *f = bin_functions(m, &n);
	for (size_t i = 0; i < n; i++)
		bytes += f[i].size;
	uint32_t nt = usable_cpus();
	if (nt > SCAN_THREADS_MAX)
		nt = SCAN_THREADS_MAX;
	if (nt > bytes / SCAN_BYTES_PER_THREAD)
		nt = (uint32_t)(bytes / SCAN_BYTES_PER_THREAD) + 1;
	struct scan_job job[SCAN_THREADS_MAX];
	pthread_t tid[SCAN_THREADS_MAX];
	bool started[SCAN_THREADS_MAX] = {false};
	size_t at = 0, done = 0;
	pthread_mutex_t read_lock = PTHREAD_MUTEX_INITIALIZER;
	for (uint32_t k = 0; k < nt; k++) {         /* shares of about equal code */
		size_t lo = at;
		while (at < n && (k == nt - 1 || done < bytes / nt * (k + 1)))
			done += f[at++].size;
		job[k] = (struct scan_job){.m = m, .f = f, .lo = lo, .hi = at, .cs = cs,
					   .read_lock = &read_lock};
		if (k && (!x86_open(&job[k].cs) ||
			  !(started[k] = pthread_create(&tid[k], NULL, scan_functions, &job[k]) == 0))) {
			if (job[k].cs != cs)
				cs_close(&job[k].cs);
			job[k].cs = cs;                 /* no thread: this one does it */
		}
	}
	for (uint32_t k = 0; k < nt; k++)
		if (!k || !started[k])
			scan_functions(&job[k]);
	for (uint32_t k = 0; k < nt; k++) {
		if (started[k]) {
			pthread_join(tid[k], NULL);
			cs_close(&job[k].cs);
		}
		targets_append(t, &job[k].t);
		targets_append(foreign, &job[k].foreign);
		targets_append(realign, &job[k].realign);
	}
	qsort(foreign->v, foreign->n, sizeof(*foreign->v), u64_cmp);
	qsort(t->v, t->n, sizeof(*t->v), u64_cmp);
}

/* Are the bytes [from, to) alignment padding? */
static bool is_padding(csh cs, const struct bin_module *m, uint64_t from, uint64_t to)
{
	uint8_t pad[32];
	return to - from <= sizeof(pad) && bin_read(m, from, pad, to - from) >= 0 &&
	       x86_is_padding(cs, pad, to - from, from);
}

/* Whole instructions from `at` (code[0..avail)) covering at least `need`
 * bytes, or up to a ret/jmp that ends f, each relocatable and starting
 * within f: their length in *len; SKIP_NREASONS when there are. */
static enum train_skip displace(csh cs, const uint8_t *code, size_t avail, uint64_t at,
				const struct bin_function *f, uint16_t need, uint16_t *len)
{
	cs_insn *insn = cs_malloc(cs);
	const uint8_t *p = code;
	size_t left = avail;
	enum train_skip why = SKIP_NREASONS;
	bool ended = false;
	*len = 0;
	while (*len < need && !ended && why == SKIP_NREASONS) {
		if (!left || at >= f->addr + f->size)
			why = SKIP_TOO_SHORT;
		else if (!x86_disasm_iter(cs, &p, &left, &at, insn))
			why = SKIP_UNDECODABLE;
		else if (x86_unrelocatable(insn))
			why = SKIP_UNRELOCATABLE;
		else
			*len += insn->size;
		ended = why == SKIP_NREASONS && x86_is_terminator(insn) && at == f->addr + f->size;
	}
	cs_free(insn, 1);
	return why;
}

/* Where a 5-byte jmp at f's entry would cover a branch target or run past
 * f, a 2-byte jmp (rel8) displaces fewer bytes: it goes to an island, a
 * 5-byte jmp to the stub written into the alignment padding [pad_lo, f)
 * before f.  The padding must decode as nops from pad_lo, so that code
 * falling through it meets the island on an instruction boundary and goes
 * where it went before, into f's hook; no branch may land inside the island,
 * and it must lie within rel8 reach.  glibc's memmove variants are the
 * case: mempcpy jumps to memmove + 3, past its first instruction.  In a
 * program icpp rewrite wrote, f's entry may be such a jmp rel8 already, to
 * the rewriter's own island (rewriter.h section 1, Islands): then the
 * padding holds that jmp rel32 among its nops, and training's island lies
 * before it, so that code falling through meets the hook first and goes on
 * through f's displaced jmp rel8.  code: f's bytes from its patch on (avail
 * of them). */
static enum train_skip plan_island(csh cs, struct bin_module *m, const struct bin_function *f,
				   const uint8_t *code, size_t avail, uint64_t pad_lo,
				   const struct targets *t, struct train_site *site)
{
	enum { JMP8 = 2, JMP32 = 5, REL8_REACH = 128 };
	uint8_t pad[REL8_REACH];
	uint64_t patch = f->addr + site->patch_off;
	uint16_t len;
	enum train_skip why = displace(cs, code, avail, patch, f, JMP8, &len);
	if (why != SKIP_NREASONS || len < JMP8)
		return why != SKIP_NREASONS ? why : SKIP_TOO_SHORT;
	if (targets_within(t, f->addr, patch + len) || pad_lo + JMP32 > f->addr ||
	    f->addr - pad_lo > sizeof(pad) || bin_read(m, pad_lo, pad, f->addr - pad_lo) < 0)
		return SKIP_BRANCH_TARGET;
	/* the rewriter's island, where the jmp rel8 at f's entry goes */
	uint64_t theirs = code[0] == 0xeb ? patch + JMP8 + (uint64_t)(int64_t)(int8_t)code[1] : 0;
	if (theirs < pad_lo || theirs >= f->addr)
		theirs = 0;
	uint64_t limit = theirs ? theirs : f->addr;
	/* the last nop boundary with room for the island, in reach */
	cs_insn *insn = cs_malloc(cs);
	size_t off = 0, n;
	uint64_t island = 0;
	while (insn && pad_lo + off < f->addr &&
	       (n = x86_padding_insn(cs, insn, pad + off, f->addr - pad_lo - off, pad_lo + off,
				     theirs))) {
		uint64_t here = pad_lo + off;
		if (here + JMP32 <= limit && here + REL8_REACH >= patch + JMP8 &&
		    !targets_within(t, here, here + JMP32))
			island = here;
		off += n;
	}
	if (insn)
		cs_free(insn, 1);
	if (pad_lo + off < f->addr || !island)
		return SKIP_BRANCH_TARGET;      /* not all padding, or no room */
	site->patch_len = len;
	site->island = (int16_t)(int64_t)(island - patch);
	site->flags |= SITE_ISLAND;
	return SKIP_NREASONS;
}

/* Decide one function's site; returns SKIP_NREASONS when it can be hooked.
 * Padding before f starts at pad_lo. */
static enum train_skip plan_function(csh cs, struct bin_module *m, const struct bin_function *f,
				     uint64_t pad_lo, uint64_t next_start, const struct targets *t,
				     struct train_site *site)
{
	struct bin_cfa cfa = {.reg = BIN_CFA_RSP, .offset = 8};
	if (bin_veneer(f))
		return SKIP_ENTRY_CFA;   /* a clone's jump runs it in the clone's frame */
	if (bin_cfa_at(m, f->addr, &cfa) < 0 && f->from_fde)
		return SKIP_ENTRY_CFA;   /* an FDE whose rule is an expression */
	if (cfa.offset < 8 || cfa.offset % 8 || cfa.offset > 4096)
		return SKIP_ENTRY_CFA;
	site->cfa_offset = (uint16_t)cfa.offset;
	site->flags = cfa.reg == BIN_CFA_RBP ? SITE_CFA_RBP : 0;
	/* the last instruction displaced may run past f's end: the rewriter's
	 * dispatch of a function shorter than its jmp covers the padding after
	 * it (rewriter.h, Dispatch) */
	uint8_t code[64];
	uint64_t room = next_start > f->addr + f->size ? next_start - f->addr : f->size;
	size_t avail = room < sizeof(code) ? room : sizeof(code);
	if (bin_read(m, f->addr, code, avail) < 0)
		return SKIP_UNDECODABLE;
	site->addr = f->addr;
	site->patch_off = (uint16_t)x86_endbr64_len(code, avail);
	const uint8_t *patch = code + site->patch_off;
	size_t patch_avail = avail - site->patch_off;
	enum train_skip why = displace(cs, patch, patch_avail, f->addr + site->patch_off, f, 5,
				       &site->patch_len);
	if (why == SKIP_NREASONS && site->patch_len < 5) {
		/* The whole function fits before the jmp ends: allowed only if the
		 * rest of the jmp lands on padding before the next function. */
		uint64_t jmp_end = f->addr + site->patch_off + 5, end = f->addr + f->size;
		uint64_t pad_end = next_start - end < 16 ? next_start : end + 16;
		if (jmp_end > next_start || !is_padding(cs, m, end, pad_end))
			why = SKIP_TOO_SHORT;
		else
			site->flags |= SITE_PAD;
	}
	/* a jump to just past endbr64 enters f without its hook */
	bool at_patch = site->patch_off && targets_within(t, f->addr + site->patch_off - 1,
							  f->addr + site->patch_off + 1);
	if (why == SKIP_NREASONS &&
	    (at_patch || targets_within(t, f->addr, f->addr + site->patch_off + site->patch_len)))
		why = SKIP_BRANCH_TARGET;
	if (!at_patch && (why == SKIP_BRANCH_TARGET || why == SKIP_TOO_SHORT)) {
		site->flags &= (uint16_t)~SITE_PAD;
		if (plan_island(cs, m, f, patch, patch_avail, pad_lo, t, site) == SKIP_NREASONS)
			why = SKIP_NREASONS;
	}
	return why;
}

/* The first target in [lo, hi), or 0. */
static uint64_t first_target(const struct targets *t, uint64_t lo, uint64_t hi)
{
	size_t a = first_at_or_above(t->v, t->n, lo);
	return a < t->n && t->v[a] < hi ? t->v[a] : 0;
}

/* Is f a .cold fragment: entered by a jump from another function at its
 * start, or past the one-byte nop gcc puts there before a landing pad, with a
 * frame built (the CFA there is not rsp+8; such a fragment's CFI describes
 * its owner's frame only after the nop)?  A jump further in is no fragment's
 * entry: an entry wrapper's or a dispatch's return into the displaced code
 * (icpp rewrite) lands after five bytes or more. */
static bool entered_built(struct bin_module *m, const struct bin_function *f,
			  const struct targets *foreign)
{
	struct bin_cfa cfa;
	uint64_t at = first_target(foreign, f->addr, f->addr + 2);
	return at && bin_cfa_at(m, at, &cfa) == 0 && !(cfa.reg == BIN_CFA_RSP && cfa.offset == 8);
}

/* The module's key in the store (no build-id: none). */
static struct store_key store_key(const struct analysed_module *am)
{
	struct store_key k = {0};
	struct stat st;
	k.idlen = bin_build_id(am->bin, &k.id);
	if (stat(am->path, &st) == 0) {
		k.size = (uint64_t)st.st_size;
		k.mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	} else {
		k.idlen = 0;
	}
	return k;
}

static void analyse(struct analysis_cache *c, struct analysed_module *am)
{
	char err[256];
	am->bin = bin_open(am->path, err, sizeof(err));
	if (!am->bin) {
		am->reply.status = -1;
		snprintf(am->reply.error, sizeof(am->reply.error), "%s", err);
		return;
	}
	struct store_key key = store_key(am);
	if (analysis_store_load(&c->store, &key, am) == 0) {
		am->from_store = true;
		return;
	}
	size_t n;
	const struct bin_function *f = bin_functions(am->bin, &n);
	struct targets t = {0}, foreign = {0}, realign = {0};
	scan_module(c->cs, am->bin, &t, &foreign, &realign);
	am->sites = calloc(n + 1, sizeof(*am->sites));
	am->fragments = calloc(n + 1, sizeof(*am->fragments));
	if (!am->sites || !am->fragments) {
		am->reply.status = -1;
		snprintf(am->reply.error, sizeof(am->reply.error), "out of memory analysing %s", am->path);
		free(t.v);
		free(foreign.v);
		free(realign.v);
		return;
	}
	am->reply.functions_found = (uint32_t)n;
	uint64_t prev_end = 0;          /* of the code before f[i]: a function, its jmp */
	for (size_t i = 0; i < n; i++) {
		uint64_t next = i + 1 < n ? f[i + 1].addr : UINT64_MAX;
		uint64_t sec_start, sec_end, pad_lo = prev_end;
		if (bin_exec_range(am->bin, f[i].addr, &sec_start, &sec_end) == 0) {
			if (sec_end < next)
				next = sec_end;
			if (pad_lo < sec_start)
				pad_lo = sec_start;
		}
		enum train_skip why = plan_function(c->cs, am->bin, &f[i], pad_lo, next, &t,
						    &am->sites[am->reply.nsites]);
		struct train_site *site = &am->sites[am->reply.nsites];
		if (why == SKIP_NREASONS && targets_within(&realign, f[i].addr - 1, f[i].addr + 1))
			site->flags |= SITE_REALIGN;
		/* entered with a frame built, by a jump from another function: a
		 * .cold fragment (not the PLT's first entry, jumped to from the
		 * PLT itself, nor ld.so's lazy-binding resolver, which no direct
		 * branch of its module reaches) */
		if (why == SKIP_NREASONS && (site->cfa_offset != 8 || site->flags & SITE_CFA_RBP) &&
		    targets_within(&foreign, f[i].addr - 1, f[i].addr + 1))
			site->flags |= SITE_FRAGMENT;
		if (entered_built(am->bin, &f[i], &foreign))
			am->fragments[am->nfragments++] = f[i].addr;
		if (f[i].addr + f[i].size > prev_end)
			prev_end = f[i].addr + f[i].size;
		if (why == SKIP_NREASONS && site->flags & SITE_PAD && site->addr + site->patch_off + 5 > prev_end)
			prev_end = site->addr + site->patch_off + 5;
		if (why == SKIP_NREASONS)
			am->reply.nsites++;
		else
			am->reply.skipped[why]++;
		uint64_t lo, hi;
		if (why == SKIP_ENTRY_CFA && bin_signal_frame(am->bin, f[i].addr, &lo, &hi)) {
			am->reply.sigtramp_lo = lo;
			am->reply.sigtramp_hi = hi;
		}
	}
	free(t.v);
	free(foreign.v);
	free(realign.v);
	analysis_store_save(&c->store, &key, am);
}

/* The store's folder and icpp's own build-id (none: no store). */
static void store_init(struct analysis_store *s)
{
	char err[256];
	if (analysis_store_dir(s->dir, sizeof(s->dir)) < 0)
		return;
	struct bin_module *self = bin_open("/proc/self/exe", err, sizeof(err));
	const uint8_t *id;
	size_t len = self ? bin_build_id(self, &id) : 0;
	if (len && len <= sizeof(s->self_id)) {
		memcpy(s->self_id, id, len);
		s->self_len = len;
	}
	if (self)
		bin_close(self);
}

struct analysis_cache *analysis_cache_new(void)
{
	struct analysis_cache *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (!x86_open(&c->cs)) {
		free(c);
		return NULL;
	}
	pthread_mutex_init(&c->lock, NULL);
	store_init(&c->store);
	return c;
}

void analysis_cache_free(struct analysis_cache *c)
{
	if (!c)
		return;
	struct cache_entry *e, *tmp;
	HASH_ITER(hh, c->by_path, e, tmp) {
		HASH_DEL(c->by_path, e);
		if (e->mod.bin)
			bin_close(e->mod.bin);
		free(e->mod.sites);
		free(e->mod.fragments);
		free(e->mod.path);
		free(e);
	}
	cs_close(&c->cs);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

const struct analysed_module *analysis_get(struct analysis_cache *c, const char *path)
{
	pthread_mutex_lock(&c->lock);
	struct cache_entry *e;
	HASH_FIND_STR(c->by_path, path, e);
	if (!e && (e = calloc(1, sizeof(*e))) && (e->mod.path = strdup(path))) {
		analyse(c, &e->mod);
		HASH_ADD_KEYPTR(hh, c->by_path, e->mod.path, strlen(e->mod.path), e);
	}
	pthread_mutex_unlock(&c->lock);
	return e ? &e->mod : NULL;
}

/* Sites are in function order, hence sorted by address. */
const struct train_site *analysis_site(const struct analysed_module *am, uint64_t addr)
{
	size_t lo = 0, hi = am->reply.nsites;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (am->sites[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < am->reply.nsites && am->sites[lo].addr == addr ? &am->sites[lo] : NULL;
}

bool analysis_fragment(const struct analysed_module *am, uint64_t addr)
{
	size_t a = first_at_or_above(am->fragments, am->nfragments, addr);
	return a < am->nfragments && am->fragments[a] == addr;
}
