/* The solver (disambig.h section 5): an incremental state over the tree in DFS
 * order, and the greedy / annealing / shrink search on it. */
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "disambig/internal.h"
#include "disambig/state.h"
#include "util/cpus.h"
#include "util/grow.h"

/* Variables: the padding of a function or clone, the wrap of a callsite or
 * of its copy in a clone, and (unit functions) an edge group: every callsite
 * by which one function calls another, wrapped by one amount, so that the
 * callsite variants of a path move together. */
enum { VPAD, VWRAP, VGROUP };

struct var {
	uint32_t *anch;         /* positions anchoring it, ascending */
	uint32_t nanch, capanch;
	uint64_t reach;         /* sum of the anchors' subtree sizes */
	uint64_t aweight;       /* sum of the anchors' entries (da_node): the
	                         * calls through a wrap's call, of a padding's
	                         * function */
	da_mask mask;
	uint32_t value;
	uint8_t kind;
	uint8_t dead;           /* a clone's variable after the clone was undone */
	uint32_t id;            /* function or callsite index */
	uint32_t clone;         /* clone index, DA_NONE for originals */
	uint32_t next;          /* the clone's next variable, or DA_NONE */
	uint32_t callee;        /* wraps: the one function called, or DA_NONE */
	uint32_t group;         /* wraps: the edge group, or DA_NONE */
	uint32_t *mem;          /* groups: member wraps */
	uint32_t nmem;
};

struct bent {
	uint32_t klass, count;
	uint32_t rep;           /* a node of the class here, or DA_NONE: find one */
	uint64_t weight;
};

/* A CID: per-class counts, weights and a representative node; the first two
 * classes inline (most CIDs hold one or two).  An emptied bucket
 * stays in the hash for reuse (trial moves come straight back) until the
 * table is compacted. */
struct bucket {
	int64_t h;
	uint32_t inst;
	uint32_t nent, cap;     /* classes; cap: room in more */
	uint32_t coll;          /* index in s->coll while nent >= 2, else DA_NONE */
	struct bent e[2];
	struct bent *more;
};

static inline struct bent *ent(struct bucket *B, uint32_t i)
{
	return i < 2 ? &B->e[i] : &B->more[i - 2];
}

/* The position of the frame a node runs in: its parent's for a fragment. */
#define FRAME(s, x) ((s)->frag[x] ? (s)->parent[x] : (x))

struct sclone {
	uint32_t func, callsite, padvar;
	uint32_t exec;          /* the call it takes: callsite's variable, or a
	                         * copy variable of another clone (a chain) */
	uint32_t fragvar;       /* the CIDs of its fragment's copy (DA_NONE
	                         * until a fragment node needs it) */
	uint32_t tmpl;          /* the clone it copies (mirror_below), or DA_NONE */
	uint32_t lastvar;       /* its variables: padvar, then by next, to this */
	bool alive;
	uint64_t bytes;
};

struct ds {
	const struct da_problem *p;
	struct da_options o;
	uint32_t n, nf, ncs;
	/* by position (DFS preorder) */
	uint32_t *node;         /* position -> problem node */
	uint32_t *pos;          /* problem node -> position */
	uint32_t *parent, *end, *root, *depth, *klass, *func, *cs;
	uint8_t *frag;          /* a fragment node (disambig.h section 2): the
	                         * first child of its parent in preorder */
	uint8_t *tail;          /* a tail node (disambig.h section 2): the last
	                         * children of its parent in preorder */
	uint32_t *padend;       /* where a padding of the frame at x stops
	                         * moving: its first tail child, else end[x] */
	uint64_t *weight;
	int64_t *h0, *h;
	uint32_t *inst, *exec;
	uint32_t *bkt;          /* position -> its CID's bucket */
	uint32_t *cstart, *cnodes;      /* class -> its nodes (positions) */
	/* classes */
	uint32_t nclasses;
	uint32_t *nbad;
	/* roots, by slot */
	uint32_t nroots;
	uint32_t *rootslot;     /* position of a root -> slot */
	uint32_t *rpos, *rnodes;        /* rnodes: distinct paths under the root */
	int64_t *rold;          /* old max height (at least 16) */
	double *rpen;
	/* variables */
	struct var *vars;
	uint32_t nvars, capvars;
	int32_t *cnt;           /* scratch tally per variable */
	uint32_t *stamp;        /* scratch per variable */
	uint32_t stampv;
	/* clones */
	struct sclone *clones;
	uint32_t nclones, capclones;
	uint8_t *ndispatch;     /* per function: its dispatched clones alive */
	uint64_t *fweight;      /* per function: its nodes' entries (da_node),
	                         * which all run its dispatch */
	uint64_t disp_units;    /* sum over functions that dispatch of their
	                         * entries times dispatch_depth(their tests),
	                         * and so over indirect tail callsites' stubs */
	uint32_t *nstub;        /* per callsite: clones alive that its stubs
	                         * test (stubbed) */
	uint64_t *cweight;      /* per callsite: its nodes' entries, which all
	                         * run its stubs */
	double dispk;           /* the price of an entry at depth 1
	                         * (dispatch_weight) */
	uint64_t run_weight;    /* the entries that run a trampoline: through a
	                         * wrapped call, or into a function padded by an
	                         * entry wrapper (var_runs) */
	uint64_t copy_weight;   /* of those through a wrapped call, entries
	                         * times the stack-argument bytes its
	                         * trampoline copies (da_callsite.wrap_copy) */
	uint64_t xcall_weight;  /* ... through cross-module calls' checks */
	uint64_t bind_weight;   /* the entries of frames that clones take
	                         * through bound calls (each runs its check) */
	uint64_t stub_bind_weight;      /* ... of those, through stubbed callsites,
	                                 * whose every frame stub_count prices */
	double runk;            /* the price of an entry of it (wrap_weight) */
	double hot_bytes;       /* the hot code of every function's copies
	                         * (da_hot_bytes), kept from the state built on */
	double hot_base;        /* what it was with no clone */
	double hot_unit;        /* da_hot_unit */
	bool hot_on;            /* kept up to date (hot_code_weight > 0) */
	uint64_t esum;          /* the entries of all nodes */
	struct u64map clonemap; /* (func, exec variable) -> clone, alive only */
	struct u64map copymap;  /* (clone, callsite) -> copy variable */
	struct u64map tramp;    /* (callee, amount) -> wrapped callsites sharing it */
	struct u64map failed;   /* CIDs (cid_key) a greedy sweep found no move
	                         * for, until one finds one (note_failed) */
	struct u64map cloned;   /* CIDs (cid_key) where a clone of the last
	                         * frame's function separated a pair that
	                         * differs in variables (improve_bucket) */
	uint32_t *gsave;        /* a group's member values during a trial */
	da_mask *rec_mask;      /* per function, then callsite: what the
	                         * recursion cap leaves (da_recursion_masks;
	                         * bit 0 always) */
	uint32_t maxmem;
	/* buckets */
	struct bucket *B;
	uint32_t nB, capB;
	uint32_t *freeB;
	uint32_t nfreeB, capfreeB;
	struct slot {           /* the CID hash: a fingerprint of the key beside
	                         * the bucket, so that probing touches only the
	                         * bucket it finds (which the caller reads next) */
		uint32_t fp, b;
	} *tab;
	size_t tabcap, tabn;
	uint32_t *coll;         /* colliding buckets */
	uint32_t ncoll, capcoll;
	uint64_t nempty;        /* emptied buckets still in the table */
	/* stack: per root the max extent and how many nodes reach it; a move
	 * collects what it changes (pmax/pcnt) and commits at its end */
	bool track_stack;
	int64_t *rmax, *pmax;
	uint32_t *rcnt, *pcnt;
	uint32_t *rstamp, *rtouched;
	uint32_t rstampv, ntouched;
	/* snapshot of the roots a trial touches (trial_begin / trial_restore) */
	struct rsnap {
		uint32_t slot, cnt;
		int64_t max;
		double pen;
	} *snap;
	uint32_t nsnap;
	double snap_pen;
	uint32_t snap_nover;
	/* scratch */
	uint32_t *stk;
	uint32_t *mvpos;        /* a move's nodes (positions), in index order */
	int64_t *mvdh;          /* and their height changes */
	struct anch_op {        /* an anchor to add (+1) or remove (-1) */
		uint32_t var, pos;
		int32_t add;
	} *aops;
	uint32_t naops, capaops;
	/* score components */
	int64_t nprecise;
	uint64_t uniq_weight;
	uint64_t ncids, nuniq;
	double pen;
	int64_t code_bytes;
	int64_t pad16;
	double hotk;
	uint32_t nover;         /* roots over the stack cap */
	/* accounting */
	uint64_t work, evals, accepted, rescans;
	uint32_t mirrors;       /* copies mirror_calls made, with the clones kept */
	bool sibling_clones;    /* clone_group may add a clone's siblings */
	bool pads_only;         /* candidates: paddings only (the first phases) */
	bool hot_only;          /* greedy: hot CIDs only, their heavy path kept (the last phase) */
	bool frugal;            /* construction: no amount that raises the stack penalty
				 * (else it costs CONS_STACK_PRICE times the search's) */
	bool cons_spent;        /* the construction kept an amount that raised it */
	uint64_t budget;
	uint64_t attempt_work;  /* node moves one collision may spend per attempt */
	struct timespec t0;
	bool out_of_budget;
	uint32_t phases_cut;    /* phases that spent their share of the budget */
	bool oom;
};

/* ---------------------------------------------------------------- buckets */

static uint64_t bhash(uint32_t inst, int64_t h)
{
	return da_mix64(((uint64_t)h * 0x9e3779b97f4a7c15ULL) ^ inst);
}

/* A key's slot is the hash's low bits, its fingerprint the high ones. */
static inline uint32_t fingerprint(uint64_t hash)
{
	return (uint32_t)(hash >> 32);
}

static uint32_t tab_find(const struct ds *s, uint32_t inst, int64_t h)
{
	size_t mask = s->tabcap - 1;
	uint64_t hash = bhash(inst, h);
	uint32_t fp = fingerprint(hash);
	for (size_t i = hash & mask;; i = (i + 1) & mask) {
		const struct slot *t = &s->tab[i];
		if (t->b == DA_NONE)
			return DA_NONE;
		if (t->fp == fp && s->B[t->b].h == h && s->B[t->b].inst == inst)
			return t->b;
	}
}

static void slots_clear(struct slot *t, size_t n)
{
	for (size_t i = 0; i < n; i++)
		t[i].b = DA_NONE;
}

static void slot_put(struct slot *t, size_t cap, uint64_t hash, uint32_t b)
{
	size_t j = hash & (cap - 1);
	while (t[j].b != DA_NONE)
		j = (j + 1) & (cap - 1);
	t[j] = (struct slot){fingerprint(hash), b};
}

static bool tab_grow(struct ds *s)
{
	size_t cap = s->tabcap ? s->tabcap * 2 : 1024;
	struct slot *t = malloc(cap * sizeof(*t));
	if (!t)
		return false;
	slots_clear(t, cap);
	for (size_t i = 0; i < s->tabcap; i++) {
		uint32_t b = s->tab[i].b;
		if (b != DA_NONE)
			slot_put(t, cap, bhash(s->B[b].inst, s->B[b].h), b);
	}
	free(s->tab);
	s->tab = t;
	s->tabcap = cap;
	return true;
}

static void tab_insert(struct ds *s, uint32_t b)
{
	slot_put(s->tab, s->tabcap, bhash(s->B[b].inst, s->B[b].h), b);
	s->tabn++;
}

static bool free_push(struct ds *s, uint32_t b)
{
	if (!grow_array((void **)&s->freeB, s->nfreeB + 1ull, &s->capfreeB, sizeof(*s->freeB)))
		return false;
	s->freeB[s->nfreeB++] = b;
	return true;
}

/* Drop the emptied buckets from the table: the buckets in order, each
 * live one to a random slot, fetched ahead. */
#define COMPACT_AHEAD 16

static void tab_compact(struct ds *s)
{
	slots_clear(s->tab, s->tabcap);
	s->tabn = 0;
	for (uint32_t b = 0; b < s->nB; b++) {
		struct bucket *B = &s->B[b];
		if (b + COMPACT_AHEAD < s->nB) {
			const struct bucket *A = &s->B[b + COMPACT_AHEAD];
			__builtin_prefetch(&s->tab[bhash(A->inst, A->h) & (s->tabcap - 1)], 1);
		}
		if (B->nent)
			tab_insert(s, b);
		else if (B->inst != DA_NONE) {
			B->inst = DA_NONE;      /* marks a free bucket */
			if (!free_push(s, b))
				s->oom = true;
		}
	}
	s->nempty = 0;
}

static uint32_t bucket_get(struct ds *s, uint32_t inst, int64_t h)
{
	uint32_t b = tab_find(s, inst, h);
	if (b != DA_NONE) {
		if (!s->B[b].nent) {
			s->nempty--;
			s->ncids++;
		}
		return b;
	}
	if (s->nempty > 65536 && s->nempty > s->tabn / 2)
		tab_compact(s);
	if ((s->tabn + 1) * 2 > s->tabcap && !tab_grow(s))
		goto oom;
	if (s->nfreeB) {
		b = s->freeB[--s->nfreeB];
	} else {
		if (!grow_array((void **)&s->B, s->nB + 1ull, &s->capB, sizeof(*s->B)))
			goto oom;
		b = s->nB++;
		s->B[b].more = NULL;
		s->B[b].cap = 0;
	}
	s->B[b].h = h;
	s->B[b].inst = inst;
	s->B[b].nent = 0;
	s->B[b].coll = DA_NONE;
	tab_insert(s, b);
	s->ncids++;
	return b;
oom:
	s->oom = true;
	return DA_NONE;
}

static void coll_add(struct ds *s, uint32_t b)
{
	if (!grow_array((void **)&s->coll, s->ncoll + 1ull, &s->capcoll, sizeof(*s->coll))) {
		s->oom = true;
		return;
	}
	s->B[b].coll = s->ncoll;
	s->coll[s->ncoll++] = b;
}

static void coll_del(struct ds *s, uint32_t b)
{
	uint32_t i = s->B[b].coll;
	if (i == DA_NONE)
		return;
	uint32_t last = s->coll[--s->ncoll];
	s->coll[i] = last;
	s->B[last].coll = i;
	s->B[b].coll = DA_NONE;
}

static void bad_add(struct ds *s, uint32_t c, int32_t k)
{
	uint32_t before = s->nbad[c];
	s->nbad[c] += k;
	if (!before && s->nbad[c])
		s->nprecise--;
	else if (before && !s->nbad[c])
		s->nprecise++;
}

static void node_in(struct ds *s, uint32_t x)
{
	uint32_t b = bucket_get(s, s->inst[x], s->h[x]);
	if (b == DA_NONE)
		return;
	struct bucket *B = &s->B[b];
	s->bkt[x] = b;
	uint32_t c = s->klass[x];
	uint64_t w = s->weight[x];
	for (uint32_t i = 0; i < B->nent; i++) {
		struct bent *e = ent(B, i);
		if (e->klass != c)
			continue;
		e->count++;
		e->weight += w;
		if (e->rep == DA_NONE)
			e->rep = x;
		if (B->nent >= 2) {
			bad_add(s, c, 1);
		} else {
			s->uniq_weight += w;
		}
		return;
	}
	if (B->nent >= 2 && B->nent - 2 == B->cap) {
		uint32_t nc = B->cap ? B->cap * 2 : 2;
		struct bent *e = realloc(B->more, nc * sizeof(*e));
		if (!e) {
			s->oom = true;
			return;
		}
		B->more = e;
		B->cap = nc;
	}
	*ent(B, B->nent++) = (struct bent){c, 1, x, w};
	if (B->nent == 1) {
		s->uniq_weight += w;
		s->nuniq++;
	} else if (B->nent == 2) {
		bad_add(s, B->e[0].klass, (int32_t)B->e[0].count);
		s->uniq_weight -= B->e[0].weight;
		s->nuniq--;
		bad_add(s, c, 1);
		coll_add(s, b);
	} else {
		bad_add(s, c, 1);
	}
}

static void node_out(struct ds *s, uint32_t x)
{
	uint32_t b = s->bkt[x];
	struct bucket *B = &s->B[b];
	uint32_t c = s->klass[x];
	uint64_t w = s->weight[x];
	uint32_t i = 0;
	while (ent(B, i)->klass != c)
		i++;
	struct bent *e = ent(B, i);
	e->count--;
	e->weight -= w;
	if (e->rep == x)
		e->rep = DA_NONE;
	if (B->nent >= 2) {
		bad_add(s, c, -1);
	} else {
		s->uniq_weight -= w;
	}
	if (e->count)
		return;
	*e = *ent(B, --B->nent);
	if (B->nent == 1) {
		bad_add(s, B->e[0].klass, -(int32_t)B->e[0].count);
		s->uniq_weight += B->e[0].weight;
		s->nuniq++;
		coll_del(s, b);
	} else if (B->nent == 0) {
		s->nuniq--;
		s->ncids--;
		s->nempty++;            /* stays in the table for reuse */
	}
}

/* A move first lists its nodes (position and height change, in index
 * order), then walks the list: each node's old bucket, new table slot and
 * new bucket are random places in tables larger than the cache, fetched
 * ahead of the walk, the slot MOVE_AHEAD nodes early, the bucket it names
 * half as early.  Over the whole list, not per anchored subtree: most moves
 * are of many small subtrees (a function called from many places), whose
 * first nodes a per-subtree look-ahead never reached.  No result changes
 * (docs/bench-disambig.md, sessions 14, 19 and 29).
 *
 * move_prefetch must be inlined: a function that only prefetches has no
 * side effects to gcc, which marks it const and deletes its calls (from
 * session 14 to 28 the walk ran without them; dealII, one search, takes
 * 0.70 of the time with them).  tests/disambig/prefetch_check.sh looks for
 * them in the compiled walk. */
#define MOVE_AHEAD 16

static inline size_t move_slot(const struct ds *s, uint32_t i)
{
	uint32_t x = s->mvpos[i];
	return bhash(s->inst[x], s->h[x] + s->mvdh[i]) & (s->tabcap - 1);
}

static inline __attribute__((always_inline)) void move_prefetch(const struct ds *s, uint32_t i,
								 uint32_t n)
{
	if (i + MOVE_AHEAD < n) {
		__builtin_prefetch(&s->B[s->bkt[s->mvpos[i + MOVE_AHEAD]]]);
		__builtin_prefetch(&s->tab[move_slot(s, i + MOVE_AHEAD)]);
	}
	if (i + MOVE_AHEAD / 2 < n) {
		const struct slot *t = &s->tab[move_slot(s, i + MOVE_AHEAD / 2)];
		if (t->b != DA_NONE)
			__builtin_prefetch(&s->B[t->b]);
	}
}

static void move_node(struct ds *s, uint32_t x, int64_t dh)
{
	node_out(s, x);
	s->h[x] += dh;
	node_in(s, x);
	s->work++;
}

/* ---------------------------------------------------------------- roots */

/* Stack accounting (disambig.h section 3).  For each root slot: rmax, the
 * largest extent (height + own padding) of its nodes, and rcnt, how many
 * nodes have it.  A move reports every node whose extent changes, first its
 * old extent (ext_out), then its new one (ext_in); roots_commit folds them in.
 * Only when every node at the max moved down is the root rescanned. */

static double root_pen(const struct ds *s, uint32_t slot, int64_t m)
{
	if (m <= s->rold[slot])
		return 0;
	return s->o.stack_weight * s->rnodes[slot] * log((double)m / (double)s->rold[slot]);
}

/* Is root slot over the stack cap? */
static inline bool root_over(const struct ds *s, uint32_t slot)
{
	return s->o.max_stack_growth > 0 &&
	       (double)s->rmax[slot] > s->o.max_stack_growth * (double)s->rold[slot];
}

/* Does the state pass the stack cap anywhere?  A count over the roots, not
 * a flag of the last move: a compound change (a clone with its siblings and
 * mirrors, a spread move) is judged by where it ends, whichever of its
 * steps moved which root. */
static inline bool over_cap(const struct ds *s)
{
	return s->nover != 0;
}

static void roots_begin(struct ds *s)
{
	s->ntouched = 0;
	if (++s->rstampv == 0) {
		memset(s->rstamp, 0, s->nroots * sizeof(*s->rstamp));
		s->rstampv = 1;
	}
}

static inline uint32_t root_touch(struct ds *s, uint32_t x)
{
	uint32_t slot = s->rootslot[s->root[x]];
	if (s->rstamp[slot] != s->rstampv) {
		s->rstamp[slot] = s->rstampv;
		s->rtouched[s->ntouched++] = slot;
		s->pmax[slot] = INT64_MIN;
		s->pcnt[slot] = 0;
	}
	return slot;
}

static inline void ext_out(struct ds *s, uint32_t x, int64_t old)
{
	uint32_t slot = root_touch(s, x);
	if (old == s->rmax[slot])
		s->rcnt[slot]--;
}

static inline void ext_in(struct ds *s, uint32_t x, int64_t nw)
{
	uint32_t slot = root_touch(s, x);
	if (nw > s->pmax[slot]) {
		s->pmax[slot] = nw;
		s->pcnt[slot] = 1;
	} else if (nw == s->pmax[slot]) {
		s->pcnt[slot]++;
	}
}

static void root_rescan(struct ds *s, uint32_t slot)
{
	uint32_t r = s->rpos[slot];
	int64_t m = INT64_MIN;
	uint32_t c = 0;
	for (uint32_t x = r; x < s->end[r]; x++) {
		int64_t e = s->h[x] + s->vars[s->inst[x]].value;
		if (e > m) {
			m = e;
			c = 1;
		} else if (e == m) {
			c++;
		}
	}
	s->rmax[slot] = m;
	s->rcnt[slot] = c;
	s->work += (s->end[r] - r) / 32;   /* a scan costs far less than a move */
	s->rescans++;
}

static void roots_commit(struct ds *s)
{
	for (uint32_t i = 0; i < s->ntouched; i++) {
		uint32_t slot = s->rtouched[i];
		bool was = root_over(s, slot);
		if (s->pmax[slot] > s->rmax[slot]) {
			s->rmax[slot] = s->pmax[slot];
			s->rcnt[slot] = s->pcnt[slot];
		} else if (s->pmax[slot] == s->rmax[slot]) {
			s->rcnt[slot] += s->pcnt[slot];
		}
		if (!s->rcnt[slot])
			root_rescan(s, slot);
		double np = root_pen(s, slot, s->rmax[slot]);
		s->pen += np - s->rpen[slot];
		s->rpen[slot] = np;
		bool now = root_over(s, slot);
		if (now && !was)
			s->nover++;
		else if (was && !now)
			s->nover--;
	}
}

/* Trials: remember the roots variable v can touch, to restore them exactly
 * after moving v back (which then skips the bookkeeping). */
static void trial_begin(struct ds *s, uint32_t v)
{
	s->nsnap = 0;
	s->snap_pen = s->pen;
	s->snap_nover = s->nover;
	if (s->vars[v].kind == VGROUP)
		for (uint32_t j = 0; j < s->vars[v].nmem; j++)
			s->gsave[j] = s->vars[s->vars[v].mem[j]].value;
	if (!s->track_stack)
		return;
	roots_begin(s);
	const struct var *V = &s->vars[v];
	uint32_t nm = V->kind == VGROUP ? V->nmem : 1;
	for (uint32_t j = 0; j < nm; j++) {
		const struct var *W = V->kind == VGROUP ? &s->vars[V->mem[j]] : V;
		for (uint32_t i = 0; i < W->nanch; i++) {
			uint32_t slot = s->rootslot[s->root[W->anch[i]]];
			if (s->rstamp[slot] == s->rstampv)
				continue;
			s->rstamp[slot] = s->rstampv;
			s->snap[s->nsnap++] =
				(struct rsnap){slot, s->rcnt[slot], s->rmax[slot], s->rpen[slot]};
		}
	}
}

static void trial_restore(struct ds *s)
{
	for (uint32_t i = 0; i < s->nsnap; i++) {
		const struct rsnap *r = &s->snap[i];
		s->rmax[r->slot] = r->max;
		s->rcnt[r->slot] = r->cnt;
		s->rpen[r->slot] = r->pen;
	}
	s->pen = s->snap_pen;
	s->nover = s->snap_nover;
}

/* ---------------------------------------------------------------- variables */

static uint32_t var_new(struct ds *s, uint8_t kind, uint32_t id, uint32_t clone, da_mask mask,
			uint32_t value)
{
	if (s->nvars == s->capvars) {
		uint32_t nc = s->capvars ? s->capvars * 2 : 64;
		struct var *v = realloc(s->vars, nc * sizeof(*v));
		int32_t *c = v ? realloc(s->cnt, nc * sizeof(*c)) : NULL;
		if (v)
			s->vars = v;
		if (c)
			s->cnt = c;
		uint32_t *st = c ? realloc(s->stamp, nc * sizeof(*st)) : NULL;
		if (!st) {
			s->oom = true;
			return DA_NONE;
		}
		s->stamp = st;
		memset(s->cnt + s->capvars, 0, (nc - s->capvars) * sizeof(*s->cnt));
		memset(s->stamp + s->capvars, 0, (nc - s->capvars) * sizeof(*s->stamp));
		s->capvars = nc;
	}
	struct var *v = &s->vars[s->nvars];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	v->id = id;
	v->clone = clone;
	v->mask = mask | 1;
	v->value = value;
	v->callee = DA_NONE;
	v->group = DA_NONE;
	v->next = DA_NONE;
	if (clone != DA_NONE && clone < s->nclones) {   /* not the padvar being made */
		s->vars[s->clones[clone].lastvar].next = s->nvars;
		s->clones[clone].lastvar = s->nvars;
	}
	return s->nvars++;
}

/* The first position that a padding of the frame at x moves: its fragment,
 * first among its children, runs in the same frame and stays. */
static inline uint32_t pad_from(const struct ds *s, uint32_t x)
{
	return x + 1 + (x + 1 < s->end[x] && s->frag[x + 1]);
}

/* The positions variable V anchored at x moves: [from, to). */
static inline uint32_t moves_from(const struct ds *s, const struct var *V, uint32_t x)
{
	return V->kind == VPAD ? pad_from(s, x) : x;
}

static inline uint32_t moves_to(const struct ds *s, const struct var *V, uint32_t x)
{
	return V->kind == VPAD ? s->padend[x] : s->end[x];
}

/* The first anchor of V at or after position x, from index lo on. */
static uint32_t anch_lower_from(const struct var *V, uint32_t lo, uint32_t x)
{
	uint32_t hi = V->nanch;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (V->anch[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static uint32_t anch_lower(const struct var *V, uint32_t x)
{
	return anch_lower_from(V, 0, x);
}

/* Does V's value run code at each of its anchors' entries: a wrapped call's
 * trampoline, or the entry wrapper of a function padded that way (a clone
 * is padded in place only)? */
static bool var_runs(const struct ds *s, const struct var *V)
{
	if (V->dead || !V->value)
		return false;
	return V->kind == VWRAP ||
	       (V->kind == VPAD && V->clone == DA_NONE && da_pad_runs(&s->p->funcs[V->id], V->value));
}

/* The code of the function's copy whose frames V's anchors are (the
 * padding of an original function or of a clone), or 0 for any other
 * variable. */
static uint64_t copy_bytes(const struct ds *s, const struct var *V)
{
	if (V->kind != VPAD)
		return 0;
	if (V->clone == DA_NONE)
		return da_func_bytes(s->p, V->id);
	const struct sclone *c = &s->clones[V->clone];
	return &s->vars[c->padvar] == V ? c->bytes : 0;
}

/* Does callsite c take clones by stubs that every frame through it runs:
 * a promoted call, indirect tail jumps to any function (disambig.h section
 * 2, Dispatch, Tail calls)? */
static bool stubbed(const struct da_problem *p, uint32_t c)
{
	return p->callsites[c].promoted || (p->callsites[c].tail && p->callsites[c].target == DA_NONE);
}

/* Entries w start (dir +1) or stop (-1) running V's code, if it runs any:
 * a trampoline, and the copies of stack arguments in it; or, V the
 * padding of a clone taken through a bound call, the call's check. */
static void run_tally(struct ds *s, const struct var *V, uint64_t w, int dir)
{
	const struct sclone *c = V->clone != DA_NONE ? &s->clones[V->clone] : NULL;
	if (c && !V->dead && &s->vars[c->padvar] == V && da_direct(s->p, c->callsite, c->func)) {
		const struct da_callsite *C = &s->p->callsites[c->callsite];
		if (C->bound)
			s->bind_weight += dir > 0 ? w : -w;
		if (C->bound && stubbed(s->p, c->callsite))     /* priced by stub_count */
			s->stub_bind_weight += dir > 0 ? w : -w;
		if (da_xcall(s->p, c->callsite, c->func))
			s->xcall_weight += dir > 0 ? w : -w;
	}
	if (!var_runs(s, V))
		return;
	uint64_t copy = V->kind == VWRAP ? w * s->p->callsites[V->id].wrap_copy : 0;
	s->run_weight += dir > 0 ? w : -w;
	s->copy_weight += dir > 0 ? copy : -copy;
}

/* Anchor x joins (dir +1) or leaves (-1) V's anchors: their entries. */
static void anch_weigh(struct ds *s, struct var *V, uint32_t x, int dir)
{
	uint64_t w = s->p->nodes[s->node[x]].entries;
	uint64_t bytes = s->hot_on ? copy_bytes(s, V) : 0;
	if (bytes)
		s->hot_bytes -= da_hot_bytes(bytes, V->aweight, s->hot_unit);
	V->aweight += dir > 0 ? w : -w;
	if (bytes)
		s->hot_bytes += da_hot_bytes(bytes, V->aweight, s->hot_unit);
	run_tally(s, V, w, dir);
}

static void anch_insert(struct ds *s, uint32_t v, uint32_t x)
{
	struct var *V = &s->vars[v];
	if (!grow_array((void **)&V->anch, V->nanch + 1ull, &V->capanch, sizeof(*V->anch))) {
		s->oom = true;
		return;
	}
	uint32_t lo = anch_lower(V, x);
	memmove(V->anch + lo + 1, V->anch + lo, (V->nanch - lo) * sizeof(*V->anch));
	V->anch[lo] = x;
	V->nanch++;
	V->reach += moves_to(s, V, x) - moves_from(s, V, x);
	anch_weigh(s, V, x, +1);
}

/* Anchor changes of a clone's recompute, applied together (anch_flush):
 * one by one, a clone of a route into a function with N anchors cost
 * O(N) per node it takes over (cppcheck: 38% of the solver in memmove). */
static void anch_defer(struct ds *s, uint32_t v, uint32_t x, int32_t add)
{
	if (!grow_array((void **)&s->aops, s->naops + 1ull, &s->capaops, sizeof(*s->aops))) {
		s->oom = true;
		return;
	}
	s->aops[s->naops++] = (struct anch_op){v, x, add};
}

/* One variable's sorted anchors merged with its sorted changes.  The
 * anchors between two changes are copied as one run: a clone changes a few
 * anchors of its function's padding, which has thousands (dealII: the
 * merge was 18% of the solver's instructions, one anchor at a time). */
static void anch_merge(struct ds *s, const struct anch_op *op, uint32_t nop)
{
	struct var *V = &s->vars[op[0].var];
	uint32_t cap = V->nanch + nop, n = 0, i = 0;
	uint32_t *a = malloc((cap + 1) * sizeof(*a));
	if (!a) {
		s->oom = true;
		return;
	}
	for (uint32_t j = 0; j < nop; j++) {
		uint32_t x = op[j].pos, run = anch_lower_from(V, i, x);
		if (run > i)
			memcpy(a + n, V->anch + i, (run - i) * sizeof(*a));
		n += run - i;
		i = run;
		int64_t r = moves_to(s, V, x) - moves_from(s, V, x);
		if (op[j].add < 0) {
			if (i < V->nanch && V->anch[i] == x) {
				i++;
				V->reach -= r;
				anch_weigh(s, V, x, -1);
			}
		} else {
			a[n++] = x;
			V->reach += r;
			anch_weigh(s, V, x, +1);
		}
	}
	if (V->nanch > i)
		memcpy(a + n, V->anch + i, (V->nanch - i) * sizeof(*a));
	n += V->nanch - i;
	free(V->anch);
	V->anch = a;
	V->nanch = n;
	V->capanch = cap + 1;
}

/* The changes grouped by variable, each group in the order made, by a
 * counting sort over the variables they touch (s->cnt): recompute makes
 * them in position order, at most one per variable and position, so each
 * group comes out sorted by position, as anch_merge wants.  (qsort took 8%
 * of dealII's search.) */
static void anch_flush(struct ds *s)
{
	uint32_t n = s->naops, nv = 0;
	struct anch_op *by = malloc((n + 1) * sizeof(*by));
	uint32_t *touched = malloc((n + 1) * sizeof(*touched));
	if (!by || !touched) {
		s->oom = true;
		n = 0;
	}
	for (uint32_t i = 0; i < n; i++)
		if (!s->cnt[s->aops[i].var]++)
			touched[nv++] = s->aops[i].var;
	uint32_t at = 0;
	for (uint32_t j = 0; j < nv; j++) {
		uint32_t c = (uint32_t)s->cnt[touched[j]];
		s->cnt[touched[j]] = (int32_t)at;
		at += c;
	}
	for (uint32_t i = 0; i < n; i++)
		by[s->cnt[s->aops[i].var]++] = s->aops[i];
	for (uint32_t j = 0, from = 0; j < nv; j++) {
		uint32_t to = (uint32_t)s->cnt[touched[j]];
		s->cnt[touched[j]] = 0;
		if (!s->oom)
			anch_merge(s, by + from, to - from);
		from = to;
	}
	free(by);
	free(touched);
	s->naops = 0;
}

/* Code of wraps (disambig.h section 3): wrapped callsites calling one
 * function with one amount share a trampoline; others have their own. */
static void code_change(struct ds *s, const struct var *V, int dir)
{
	if (V->kind != VWRAP || !V->value || V->dead)
		return;
	if (V->callee == DA_NONE) {
		s->code_bytes += dir * DA_WRAP_CODE_BYTES;
		return;
	}
	uint64_t key = da_pair(V->callee, V->value);
	uint32_t n = u64map_get(&s->tramp, key);
	n = n == DA_NONE ? 0 : n;
	if (dir > 0) {
		if (!n)
			s->code_bytes += DA_WRAP_CODE_BYTES;
		if (u64map_put(&s->tramp, key, n + 1) < 0)
			s->oom = true;
	} else {
		if (n == 1) {
			s->code_bytes -= DA_WRAP_CODE_BYTES;
			u64map_del(&s->tramp, key);
		} else if (n) {
			u64map_put(&s->tramp, key, n - 1);
		}
	}
}

/* Set variable v to value: moves every node under its anchors, by the
 * amount times the number of its anchors above it (disambig.h section 5).
 * With stack false the root bookkeeping is skipped: only for moving a trial
 * back before trial_restore. */
static void set_var_ex(struct ds *s, uint32_t v, uint32_t value, bool stack)
{
	struct var *V = &s->vars[v];
	int64_t d = (int64_t)value - (int64_t)V->value;
	int64_t old = V->value;
	stack = stack && s->track_stack;
	if (stack)
		roots_begin(s);
	if (!d)
		return;
	code_change(s, V, -1);
	run_tally(s, V, V->aweight, -1);
	s->pad16 += d / DA_ALIGN;
	V->value = value;
	run_tally(s, V, V->aweight, +1);
	code_change(s, V, +1);
	bool pad = V->kind == VPAD;
	uint32_t depth = 0, at = 0, nmv = 0;
	for (uint32_t i = 0; i <= V->nanch; i++) {
		uint32_t a = i < V->nanch ? V->anch[i] : UINT32_MAX;
		uint32_t st = i < V->nanch ? moves_from(s, V, a) : UINT32_MAX;
		while (depth && at < st) {
			uint32_t top = s->stk[depth - 1], upto = top < st ? top : st;
			int64_t dh = (int64_t)depth * d;
			for (; at < upto; at++) {
				s->mvpos[nmv] = at;
				s->mvdh[nmv++] = dh;
			}
			while (depth && s->stk[depth - 1] <= at)
				depth--;
		}
		if (i == V->nanch)
			break;
		if (pad && stack && at <= a) {
			/* an anchor outside every other anchor's range: only its
			 * own padding (its extent) changes */
			ext_out(s, a, s->h[a] + old);
			ext_in(s, a, s->h[a] + value);
		}
		if (!depth)
			at = st;
		if (st < moves_to(s, V, a))
			s->stk[depth++] = moves_to(s, V, a);
	}
	for (uint32_t i = 0; i < MOVE_AHEAD && i < nmv; i++) {
		__builtin_prefetch(&s->B[s->bkt[s->mvpos[i]]]);
		__builtin_prefetch(&s->tab[move_slot(s, i)]);
	}
	for (uint32_t i = 0; i < nmv; i++) {
		uint32_t x = s->mvpos[i];
		int64_t dh = s->mvdh[i];
		move_prefetch(s, i, nmv);
		if (stack) {
			/* its own padding changes too when it is an anchor */
			int64_t own = s->vars[s->inst[x]].value;
			int64_t own_old = pad && s->inst[x] == v ? old : own;
			ext_out(s, x, s->h[x] + own_old);
			ext_in(s, x, s->h[x] + dh + own);
		}
		move_node(s, x, dh);
	}
	if (stack)
		roots_commit(s);
}

static void set_var(struct ds *s, uint32_t v, uint32_t value)
{
	set_var_ex(s, v, value, true);
}

/* Set a variable of any kind (a group: all its members). */
static void set_any(struct ds *s, uint32_t v, uint32_t value)
{
	struct var *V = &s->vars[v];
	if (V->kind != VGROUP) {
		set_var(s, v, value);
		return;
	}
	for (uint32_t i = 0; i < V->nmem; i++)
		set_var(s, V->mem[i], value);
	V->value = value;
}

/* Back to the state trial_begin(v) saw, v's value having been cur. */
static void revert_any(struct ds *s, uint32_t v, uint32_t cur)
{
	struct var *V = &s->vars[v];
	if (V->kind != VGROUP) {
		set_var_ex(s, v, cur, false);
	} else {
		for (uint32_t i = 0; i < V->nmem; i++)
			set_var_ex(s, V->mem[i], s->gsave[i], false);
		V->value = cur;
	}
	trial_restore(s);
}

/* The run time of a dispatch of K tests at every entry, in units of one
 * test's (disambig.h section 5): a search of K keys runs about log2(K)
 * compares and branches, and mispredicts in proportion (jq: a search of 84
 * keys at jv_get_kind, 15 instructions and one mispredicted branch per
 * entry, against 4 and none for one test), so 1 + log2(K), in 1/256. */
#define DISPATCH_UNIT 256

static uint64_t dispatch_depth(uint32_t k)
{
	return k ? (uint64_t)lround(DISPATCH_UNIT * (1.0 + log2((double)k))) : 0;
}

/* Function f gains (dir +1) or loses (-1) a dispatched clone. */
static void dispatch_count(struct ds *s, uint32_t f, int dir)
{
	uint32_t k = s->ndispatch[f];
	uint32_t nk = dir > 0 ? k + 1 : k - 1;
	s->ndispatch[f] = (uint8_t)nk;
	s->disp_units += s->fweight[f] * dispatch_depth(nk);
	s->disp_units -= s->fweight[f] * dispatch_depth(k);
}

/* Stubbed callsite c gains (dir +1) or loses (-1) a clone, a test of its
 * stubs: priced as a dispatch of as many tests, run by c's every frame. */
static void stub_count(struct ds *s, uint32_t c, int dir)
{
	uint32_t k = s->nstub[c];
	uint32_t nk = dir > 0 ? k + 1 : k - 1;
	s->nstub[c] = nk;
	s->disp_units += s->cweight[c] * dispatch_depth(nk);
	s->disp_units -= s->cweight[c] * dispatch_depth(k);
}

static double score(const struct ds *s)
{
	return (double)s->nprecise + s->hotk * (double)s->uniq_weight - s->pen -
	       s->o.code_weight * (double)s->code_bytes -
	       s->o.hot_code_weight * (s->hot_bytes - s->hot_base) -
	       s->dispk * (double)s->disp_units / DISPATCH_UNIT -
	       s->runk * ((double)s->run_weight +
			  (double)s->copy_weight / DA_COPY_RUN_BYTES +
			  DA_BIND_RUN_SHARE * (double)(s->bind_weight - s->stub_bind_weight) +
			  DA_XCALL_RUN_SHARE * (double)s->xcall_weight) -
	       1e-4 * (double)s->pad16;
}

/* Seconds since t0 (CLOCK_MONOTONIC). */
static double seconds_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)(t.tv_sec - t0->tv_sec) + (double)(t.tv_nsec - t0->tv_nsec) * 1e-9;
}

static double elapsed(const struct ds *s)
{
	return seconds_since(&s->t0);
}

static bool out_of_time(struct ds *s)
{
	if (s->out_of_budget)
		return true;
	if (s->work > s->budget)
		s->out_of_budget = true;
	if (s->o.time_limit_s > 0 && (s->evals & 63) == 0 && elapsed(s) > s->o.time_limit_s)
		s->out_of_budget = true;
	return s->out_of_budget;
}

/* One line on stderr when verbose: where the search stands after `what`. */
static void progress(const struct ds *s, const char *what)
{
	if (!s->o.verbose)
		return;
	double wshare = s->hotk > 0 ? s->hotk * (double)s->uniq_weight /
					      (s->o.hot_weight * (double)s->nclasses) : 0;
	fprintf(stderr, "disambig: after %s: %.2f s, work %llu, %llu evaluations, %lld precise of %u, "
		"weight %.1f%% precise, %u ambiguous CIDs\n",
		what, elapsed(s), (unsigned long long)s->work, (unsigned long long)s->evals,
		(long long)s->nprecise, s->nclasses, 100 * wshare, s->ncoll);
}

/* ---------------------------------------------------------------- clones */

/* The instance of clone k's fragment (func) for CIDs: a padding that stays
 * 0 (its frame's padding is the clone's), made when first needed. */
static uint32_t fragment_var(struct ds *s, uint32_t k, uint32_t func)
{
	struct sclone *c = &s->clones[k];
	if (c->fragvar == DA_NONE) {
		c->fragvar = var_new(s, VPAD, func, k, 1, 0);
		if (c->fragvar == DA_NONE)
			s->oom = true;
	}
	return c->fragvar;
}

/* The amount a new copy of callsite cs in clone k starts with: that of the
 * copy in the clone k copies (its template), else the original's.  Any is
 * allowed (the masks are the original's); these keep heights unchanged. */
static uint32_t copy_value(const struct ds *s, uint32_t k, uint32_t cs)
{
	uint32_t t = s->clones[k].tmpl;
	uint32_t tv = t == DA_NONE ? DA_NONE : u64map_get(&s->copymap, da_pair(t, cs));
	return s->vars[tv == DA_NONE ? s->nf + cs : tv].value;
}

/* Is an anchor of v strictly inside the subtree of x? */
static bool anchored_below(const struct ds *s, uint32_t v, uint32_t x)
{
	const struct var *V = &s->vars[v];
	uint32_t i = anch_lower(V, x + 1);
	return i < V->nanch && V->anch[i] < s->end[x];
}

/* Recompute exec and inst (disambig.h section 2) and heights of the subtree
 * at `top`, whose parent is unchanged, after the clone that call variable
 * `via` enters changed (clone_create, clone_destroy); move what changed.
 * The anchors follow at anch_flush.
 * A node that keeps its exec, inst and height leaves its children as they
 * were (they see the same parent frame), so its subtree is skipped, unless
 * it is a fragment (its children count its frame's padding) or `via`
 * enters a node below it (recursion).  Before, every node below a clone's
 * frames was visited: a clone of a helper at the top of deep chains cost
 * up to 36k node moves of the budget, most of them changing nothing. */
static void recompute(struct ds *s, uint32_t top, uint32_t via)
{
	const struct da_problem *p = s->p;
	for (uint32_t x = top; x < s->end[top];) {
		uint32_t par = s->parent[x], cs = s->cs[x], f = s->func[x];
		uint32_t ex, in = f;
		uint32_t pk = par == DA_NONE ? DA_NONE : s->vars[s->inst[par]].clone;
		if (s->frag[x]) {
			ex = DA_NONE;
			if (pk != DA_NONE)
				in = fragment_var(s, pk, f);
			if (in == DA_NONE)
				return;
		} else if (pk != DA_NONE && cs != DA_NONE && p->callsites[cs].owner == s->func[par]) {
			ex = u64map_get(&s->copymap, da_pair(pk, cs));
			if (ex == DA_NONE) {
				const struct var *orig = &s->vars[s->nf + cs];
				ex = var_new(s, VWRAP, cs, pk, orig->mask, copy_value(s, pk, cs));
				if (ex == DA_NONE || u64map_put(&s->copymap, da_pair(pk, cs), ex) < 0) {
					s->oom = true;
					return;
				}
				s->vars[ex].callee = s->vars[s->nf + cs].callee;
				s->pad16 += s->vars[ex].value / DA_ALIGN;
				code_change(s, &s->vars[ex], +1);
			}
		} else {
			ex = cs == DA_NONE ? DA_NONE : s->nf + cs;
		}
		if (ex != DA_NONE) {
			uint32_t k = u64map_get(&s->clonemap, da_pair(f, ex));
			if (k != DA_NONE)
				in = s->clones[k].padvar;
		}
		int64_t d = 0;
		if (par != DA_NONE)     /* a tail node's parent frame is gone */
			d = s->h[par] - s->h0[par] +
			    (s->frag[x] || s->tail[x] ? 0 : s->vars[s->inst[FRAME(s, par)]].value);
		if (ex != DA_NONE)
			d += s->vars[ex].value;
		int64_t nh = s->h0[x] + d;
		int64_t oext = s->h[x] + s->vars[s->inst[x]].value, next = nh + s->vars[in].value;
		bool same = ex == s->exec[x] && in == s->inst[x] && nh == s->h[x];
		if (ex != s->exec[x]) {
			if (s->exec[x] != DA_NONE)
				anch_defer(s, s->exec[x], x, -1);
			if (ex != DA_NONE)
				anch_defer(s, ex, x, +1);
			s->exec[x] = ex;
		}
		if (in != s->inst[x] || nh != s->h[x]) {
			node_out(s, x);
			if (in != s->inst[x]) {
				anch_defer(s, s->inst[x], x, -1);
				anch_defer(s, in, x, +1);
				s->inst[x] = in;
			}
			s->h[x] = nh;
			node_in(s, x);
		}
		if (next != oext && s->track_stack) {
			ext_out(s, x, oext);
			ext_in(s, x, next);
		}
		s->work++;
		x = same && !s->frag[x] && !anchored_below(s, via, x) ? s->end[x] : x + 1;
	}
}

/* The outermost anchors of variable v (nested ones are inside their subtrees). */
static uint32_t top_anchors(struct ds *s, uint32_t v, uint32_t **out)
{
	struct var *V = &s->vars[v];
	uint32_t *t = malloc((V->nanch + 1) * sizeof(*t)), n = 0, lim = 0;
	if (!t) {
		s->oom = true;
		*out = NULL;
		return 0;
	}
	for (uint32_t i = 0; i < V->nanch; i++) {
		uint32_t a = V->anch[i];
		if (n && a < lim)
			continue;
		t[n++] = a;
		lim = s->end[a];
	}
	*out = t;
	return n;
}

/* Clone func for the call that variable ex executes (an original callsite or
 * its copy in a clone; checked by the caller), as a copy of clone tmpl
 * (its padding and wraps; DA_NONE: of the original).  Returns the clone
 * index; heights do not change, CIDs of the frames it takes over do. */
static uint32_t clone_create(struct ds *s, uint32_t func, uint32_t ex, uint32_t tmpl)
{
	uint32_t cs = s->vars[ex].id;
	if (!grow_array((void **)&s->clones, s->nclones + 1ull, &s->capclones, sizeof(*s->clones))) {
		s->oom = true;
		return DA_NONE;
	}
	uint32_t k = s->nclones;
	const struct var *fv = &s->vars[func];
	da_mask cm = (s->o.allow_arr ? s->p->funcs[func].clone_pad_mask : 1) &
		     s->rec_mask[func];
	uint32_t pval = tmpl == DA_NONE ? fv->value : s->vars[s->clones[tmpl].padvar].value;
	uint32_t pv = var_new(s, VPAD, func, k, cm, da_mask_allows(cm, pval) ? pval : 0);
	if (pv == DA_NONE || u64map_put(&s->clonemap, da_pair(func, ex), k) < 0) {
		s->oom = true;
		return DA_NONE;
	}
	s->nclones++;
	bool dispatched = da_dispatched(s->p, cs, func);
	s->clones[k] = (struct sclone){func, cs, pv, ex, DA_NONE, tmpl, pv, true,
				       da_clone_bytes(s->p, func, cs)};
	if (dispatched)
		dispatch_count(s, func, +1);
	if (stubbed(s->p, cs))
		stub_count(s, cs, +1);
	s->pad16 += s->vars[pv].value / DA_ALIGN;
	s->code_bytes += s->clones[k].bytes;
	uint32_t *tops, nt = top_anchors(s, ex, &tops);
	roots_begin(s);
	for (uint32_t i = 0; i < nt; i++)
		recompute(s, tops[i], ex);
	roots_commit(s);
	anch_flush(s);
	free(tops);
	return k;
}

/* Undo clone k (the last one created that is alive). */
static void clone_destroy(struct ds *s, uint32_t k)
{
	struct sclone *c = &s->clones[k];
	u64map_del(&s->clonemap, da_pair(c->func, c->exec));
	c->alive = false;
	if (da_dispatched(s->p, c->callsite, c->func))
		dispatch_count(s, c->func, -1);
	if (stubbed(s->p, c->callsite))
		stub_count(s, c->callsite, -1);
	uint32_t *tops, nt = top_anchors(s, c->exec, &tops);
	roots_begin(s);
	for (uint32_t i = 0; i < nt; i++)
		recompute(s, tops[i], c->exec);
	roots_commit(s);
	anch_flush(s);
	free(tops);
	s->code_bytes -= c->bytes;
	/* its variables have no anchors left */
	for (uint32_t v = c->padvar; v != DA_NONE; v = s->vars[v].next) {
		struct var *V = &s->vars[v];
		if (V->dead)
			continue;
		s->pad16 -= V->value / DA_ALIGN;
		code_change(s, V, -1);
		run_tally(s, V, V->aweight, -1);
		V->dead = 1;
		if (V->kind == VWRAP)
			u64map_del(&s->copymap, da_pair(k, V->id));
	}
}

/* ---------------------------------------------------------------- building */

/* Edge groups: the wrappable callsites of one caller that call one callee. */
static int build_groups(struct ds *s)
{
	const struct da_problem *p = s->p;
	struct u64map m;
	if (u64map_init(&m, s->ncs) < 0)
		return -1;
	uint32_t *cnt = calloc(s->ncs + 1, sizeof(*cnt)), ng = 0;
	uint32_t *gid = malloc((s->ncs + 1) * sizeof(*gid));
	if (!cnt || !gid)
		goto fail;
	for (uint32_t c = 0; c < s->ncs; c++) {
		const struct var *W = &s->vars[s->nf + c];
		gid[c] = DA_NONE;
		if (W->callee == DA_NONE || p->callsites[c].owner == DA_NONE || W->mask <= 1)
			continue;
		uint64_t key = da_pair(p->callsites[c].owner, W->callee);
		uint32_t g = u64map_get(&m, key);
		if (g == DA_NONE) {
			g = ng++;
			if (u64map_put(&m, key, g) < 0)
				goto fail;
		}
		gid[c] = g;
		cnt[g]++;
	}
	/* groups of two or more become variables */
	uint32_t *var_of = malloc((ng + 1) * sizeof(*var_of));
	if (!var_of)
		goto fail;
	for (uint32_t g = 0; g < ng; g++)
		var_of[g] = DA_NONE;
	for (uint32_t c = 0; c < s->ncs; c++) {
		uint32_t g = gid[c];
		if (g == DA_NONE || cnt[g] < 2)
			continue;
		if (var_of[g] == DA_NONE) {
			var_of[g] = var_new(s, VGROUP, g, DA_NONE, ~(da_mask)0, 0);
			if (var_of[g] == DA_NONE) {
				free(var_of);
				goto fail;
			}
			s->vars[var_of[g]].mem = malloc(cnt[g] * sizeof(uint32_t));
			if (!s->vars[var_of[g]].mem) {
				free(var_of);
				goto fail;
			}
			if (cnt[g] > s->maxmem)
				s->maxmem = cnt[g];
		}
		struct var *G = &s->vars[var_of[g]];
		G->mem[G->nmem++] = s->nf + c;
		G->mask &= s->vars[s->nf + c].mask;
		s->vars[s->nf + c].group = var_of[g];
	}
	free(var_of);
	free(cnt);
	free(gid);
	u64map_free(&m);
	s->gsave = malloc((s->maxmem + 1) * sizeof(*s->gsave));
	return s->gsave ? 0 : -1;
fail:
	free(cnt);
	free(gid);
	u64map_free(&m);
	return -1;
}

#define ALLOC(f, cnt) if (!(s->f = calloc((cnt) + 1, sizeof(*s->f)))) return -1

/* Positions: the problem's nodes in DFS preorder (node, pos), a fragment
 * first below its parent (pad_from), then the children in index order, tail
 * nodes last (padend), and each subtree's end. */
static int build_order(struct ds *s)
{
	const struct da_problem *p = s->p;
	uint32_t n = s->n;
	uint32_t *first = malloc((n + 1) * sizeof(*first)), *sib = malloc((n + 1) * sizeof(*sib));
	if (!first || !sib) {
		free(first);
		free(sib);
		return -1;
	}
	for (uint32_t i = 0; i < n; i++)
		first[i] = DA_NONE;
	/* sibling lists in index order (backwards, pushed in front): tail
	 * nodes pushed first, fragments last */
	for (int kind = 0; kind < 3; kind++)
		for (uint32_t i = n; i-- > 0;) {
			uint32_t par = p->nodes[i].parent;
			int k = p->nodes[i].tail ? 0 : p->nodes[i].fragment ? 2 : 1;
			if (par == DA_NONE || k != kind)
				continue;
			sib[i] = first[par];
			first[par] = i;
		}
	uint32_t roots_first = DA_NONE;
	for (uint32_t i = n; i-- > 0;)
		if (p->nodes[i].parent == DA_NONE) {
			sib[i] = roots_first;
			roots_first = i;
		}
	/* iterative DFS, stk holding problem nodes; children pushed in
	 * reverse so that the first pops first */
	uint32_t at = 0, sp = 0;
	for (uint32_t r = roots_first; r != DA_NONE; r = sib[r]) {
		s->stk[sp++] = r;
		while (sp) {
			uint32_t v = s->stk[--sp];
			s->node[at] = v;
			s->pos[v] = at++;
			for (uint32_t c = first[v]; c != DA_NONE; c = sib[c])
				sp++;
			uint32_t j = sp;
			for (uint32_t c = first[v]; c != DA_NONE; c = sib[c])
				s->stk[--j] = c;
		}
	}
	free(first);
	free(sib);
	/* a node's end is the largest of its children's, in reverse preorder */
	for (uint32_t x = 0; x < n; x++)
		s->end[x] = x + 1;
	for (uint32_t x = n; x-- > 0;) {
		uint32_t par = p->nodes[s->node[x]].parent;
		if (par != DA_NONE && s->end[x] > s->end[s->pos[par]])
			s->end[s->pos[par]] = s->end[x];
	}
	return 0;
}

/* What each position holds, from its problem node and its class. */
static void build_positions(struct ds *s, const uint32_t *cls)
{
	s->nroots = 0;
	for (uint32_t x = 0; x < s->n; x++) {
		uint32_t v = s->node[x];
		const struct da_node *nd = &s->p->nodes[v];
		s->parent[x] = nd->parent == DA_NONE ? DA_NONE : s->pos[nd->parent];
		s->root[x] = s->parent[x] == DA_NONE ? x : s->root[s->parent[x]];
		s->depth[x] = s->parent[x] == DA_NONE ? 1 : s->depth[s->parent[x]] + 1;
		s->klass[x] = cls[v];
		s->func[x] = nd->func;
		s->frag[x] = nd->fragment;
		s->tail[x] = nd->tail;
		s->cs[x] = nd->callsite;
		s->weight[x] = nd->weight;
		s->h0[x] = s->h[x] = nd->height;
		if (s->parent[x] == DA_NONE)
			s->rootslot[x] = s->nroots++;
	}
	for (uint32_t x = 0; x < s->n; x++)
		s->padend[x] = s->end[x];
	for (uint32_t x = s->n; x-- > 0;)       /* the first of the last children */
		if (s->tail[x])
			s->padend[s->parent[x]] = x;
}

/* Each class's nodes (cstart, cnodes); nbad, allocated here, is zero. */
static int build_classes(struct ds *s)
{
	ALLOC(nbad, s->nclasses);
	ALLOC(cstart, s->nclasses + 1);
	for (uint32_t x = 0; x < s->n; x++)
		s->cstart[s->klass[x] + 1]++;
	for (uint32_t c = 0; c < s->nclasses; c++)
		s->cstart[c + 1] += s->cstart[c];
	for (uint32_t x = 0; x < s->n; x++)
		s->cnodes[s->cstart[s->klass[x]] + s->nbad[s->klass[x]]++] = x;
	memset(s->nbad, 0, s->nclasses * sizeof(*s->nbad));
	return 0;
}

/* Per root slot: its position, its distinct paths (rnodes: a path under
 * two roots counts for both; nbad serves as scratch) and its old max. */
static int build_roots(struct ds *s)
{
	ALLOC(rpos, s->nroots); ALLOC(rnodes, s->nroots); ALLOC(rold, s->nroots);
	ALLOC(rpen, s->nroots); ALLOC(rstamp, s->nroots); ALLOC(rtouched, s->nroots);
	ALLOC(rmax, s->nroots); ALLOC(pmax, s->nroots); ALLOC(rcnt, s->nroots);
	ALLOC(pcnt, s->nroots); ALLOC(snap, s->nroots);
	for (uint32_t x = 0; x < s->n; x++) {
		uint32_t slot = s->rootslot[s->root[x]];
		if (s->parent[x] == DA_NONE) {
			s->rpos[slot] = x;
			s->rold[slot] = 16;
		}
		if (s->nbad[s->klass[x]] != slot + 1) {
			s->nbad[s->klass[x]] = slot + 1;
			s->rnodes[slot]++;
		}
		if (s->h0[x] > s->rold[slot])
			s->rold[slot] = s->h0[x];
	}
	memset(s->nbad, 0, s->nclasses * sizeof(*s->nbad));
	return 0;
}

/* Variables: pads of functions, wraps of callsites, within the recursion
 * cap (a clone's pads too, clone_create; copies of callsites take their
 * original's mask); each wrap's callee and the edge groups. */
static int build_vars(struct ds *s)
{
	const struct da_problem *p = s->p;
	s->rec_mask = malloc((s->nf + s->ncs + 1) * sizeof(*s->rec_mask));
	if (!s->rec_mask)
		return -1;
	for (uint32_t i = 0; i < s->nf + s->ncs; i++)
		s->rec_mask[i] = ~(da_mask)0;
	if (s->o.max_recursion_growth > 0)
		da_recursion_masks(p, s->o.max_recursion_growth, s->rec_mask, s->rec_mask + s->nf);
	for (uint32_t f = 0; f < s->nf; f++)
		if (var_new(s, VPAD, f, DA_NONE,
			    (s->o.allow_arr ? p->funcs[f].pad_mask : 1) & s->rec_mask[f], 0) ==
		    DA_NONE)
			return -1;
	for (uint32_t c = 0; c < s->ncs; c++)
		if (var_new(s, VWRAP, c, DA_NONE,
			    (s->o.allow_wrap ? p->callsites[c].wrap_mask : 1) &
			    s->rec_mask[s->nf + c], 0) == DA_NONE)
			return -1;
	if (u64map_init(&s->clonemap, 16) < 0 || u64map_init(&s->copymap, 16) < 0 ||
	    u64map_init(&s->tramp, 64) < 0 || u64map_init(&s->failed, 64) < 0 ||
	    u64map_init(&s->cloned, 16) < 0)
		return -1;
	/* the callee of each callsite: the one function its nodes enter */
	for (uint32_t x = 0; x < s->n; x++) {
		if (s->cs[x] == DA_NONE)
			continue;
		struct var *W = &s->vars[s->nf + s->cs[x]];
		if (W->group == DA_NONE) {              /* group: "seen" until below */
			W->group = 0;
			W->callee = s->func[x];
		} else if (W->callee != s->func[x]) {
			W->callee = DA_NONE;
		}
	}
	for (uint32_t c = 0; c < s->ncs; c++)
		s->vars[s->nf + c].group = DA_NONE;
	if (p->unit == DA_UNIT_FUNCTIONS && s->o.allow_wrap && build_groups(s) < 0)
		return -1;
	return 0;
}

static int build(struct ds *s)
{
	const struct da_problem *p = s->p;
	uint32_t n = p->nnodes;
	s->n = n;
	s->nf = p->nfuncs;
	s->ncs = p->ncallsites;
	ALLOC(node, n); ALLOC(pos, n); ALLOC(parent, n); ALLOC(end, n); ALLOC(root, n);
	ALLOC(depth, n); ALLOC(klass, n); ALLOC(func, n); ALLOC(cs, n); ALLOC(weight, n);
	ALLOC(h0, n); ALLOC(h, n); ALLOC(inst, n); ALLOC(exec, n); ALLOC(bkt, n);
	ALLOC(stk, n); ALLOC(mvpos, n); ALLOC(mvdh, n); ALLOC(rootslot, n); ALLOC(cnodes, n);
	ALLOC(ndispatch, s->nf); ALLOC(fweight, s->nf); ALLOC(frag, n);
	ALLOC(nstub, s->ncs); ALLOC(cweight, s->ncs);
	ALLOC(tail, n); ALLOC(padend, n);
	uint32_t *cls = malloc((n + 1) * sizeof(*cls));
	if (!cls || da_classes(p, cls, &s->nclasses) < 0 || build_order(s) < 0) {
		free(cls);
		return -1;
	}
	build_positions(s, cls);
	free(cls);
	if (build_classes(s) < 0 || build_roots(s) < 0 || build_vars(s) < 0)
		return -1;
	for (uint32_t x = 0; x < n; x++) {
		s->inst[x] = s->func[x];
		anch_insert(s, s->inst[x], x);
		s->exec[x] = s->cs[x] == DA_NONE ? DA_NONE : s->nf + s->cs[x];
		if (s->exec[x] != DA_NONE)
			anch_insert(s, s->exec[x], x);
	}
	/* every class starts precise; node_in counts it bad where it collides */
	s->nprecise = s->nclasses;
	if (!tab_grow(s))
		return -1;
	for (uint32_t x = 0; x < n; x++)
		node_in(s, x);
	/* stack: tracked when it can matter (a cap or a penalty) */
	s->track_stack = s->o.max_stack_growth > 0 || s->o.stack_weight != 0;
	for (uint32_t r = 0; r < s->nroots; r++) {
		root_rescan(s, r);
		s->nover += root_over(s, r);
	}
	uint64_t wsum = 0, esum = 0;
	for (uint32_t x = 0; x < n; x++) {
		uint64_t e = p->nodes[s->node[x]].entries;
		wsum += s->weight[x];
		esum += e;
		s->fweight[s->func[x]] += e;
		if (s->cs[x] != DA_NONE)
			s->cweight[s->cs[x]] += e;
	}
	s->hotk = da_per_weight(s->o.hot_weight, s->nclasses, wsum);
	/* run time is paid per call, also where weight counts samples */
	s->dispk = da_per_weight(s->o.dispatch_weight, s->nclasses, esum);
	s->runk = da_per_weight(s->o.wrap_weight, s->nclasses, esum);
	s->esum = esum;
	s->hot_unit = da_hot_unit(esum);
	s->hot_on = s->o.hot_code_weight > 0;
	for (uint32_t f = 0; s->hot_on && f < s->nf; f++)
		s->hot_base += da_hot_bytes(copy_bytes(s, &s->vars[f]), s->vars[f].aweight,
					    s->hot_unit);
	s->hot_bytes = s->hot_base;
	s->work = 0;
	return s->oom ? -1 : 0;
}
#undef ALLOC

void da_options_default(struct da_options *o)
{
	memset(o, 0, sizeof(*o));
	o->seed = 1;
	o->max_stack_growth = 1.25;
	o->allow_arr = true;
	o->allow_wrap = true;
	o->allow_clone = false;
	o->hot_weight = 0.25;
	o->stack_weight = DA_DEFAULT_STACK_WEIGHT;
	o->code_weight = 1.0 / DA_DEFAULT_CODE_PER_PATH;
	o->dispatch_weight = DA_DEFAULT_DISPATCH_WEIGHT;
	o->hot_code_weight = DA_DEFAULT_HOT_CODE_PER_PATH ? 1.0 / DA_DEFAULT_HOT_CODE_PER_PATH : 0;
	o->wrap_weight = DA_DEFAULT_WRAP_WEIGHT;
	o->precision_target = DA_DEFAULT_PRECISION;
	o->anneal = true;
}

struct ds *ds_new(const struct da_problem *p, const struct da_options *o, char *err,
		  size_t errlen)
{
	if (da_problem_check(p, err, errlen) < 0)
		return NULL;
	if (o->max_stack_growth > 0 && o->max_stack_growth < 1) {
		errmsg(err, errlen, "--max-stack-growth must be at least 1 (got %g)",
		       o->max_stack_growth);
		return NULL;
	}
	struct ds *s = calloc(1, sizeof(*s));
	if (!s) {
		errmsg(err, errlen, "out of memory");
		return NULL;
	}
	s->p = p;
	s->o = *o;
	clock_gettime(CLOCK_MONOTONIC, &s->t0);
	if (build(s) < 0) {
		ds_free(s);
		errmsg(err, errlen, "out of memory building the solver state (%u nodes)", p->nnodes);
		return NULL;
	}
	uint64_t b = o->budget;
	if (!b) {
		/* a node move costs 80 ns on a small tree to 400 ns on a
		 * crowded one of 1.5M nodes (cache misses on its CID buckets):
		 * 50M keeps large pathmaps to tens of seconds, where 250 per
		 * node took minutes (cppcheck: 393M moves, 150 s), and small
		 * ones under seconds.  Small ones get it too: each phase stops
		 * at its share, so a smaller budget ends their search early
		 * (lua: 94.2% of paths at 20M, 98.2% at 50M).  45M since clones
		 * skip what they leave unchanged (session 22): those visits
		 * were counted but cost little, so a node move of the budget
		 * took 1.1 times as long; 45M takes dealII the time 50M took
		 * (six seeds: real maps 97.93% of reducible against 97.97%,
		 * synthetic sets 98.12% against 97.88%) */
		b = DA_DEFAULT_BUDGET;
	}
	s->budget = b;
	s->attempt_work = 20000 + 4 * (uint64_t)p->nnodes / 10;
	return s;
}

void ds_free(struct ds *s)
{
	if (!s)
		return;
	free(s->node); free(s->pos); free(s->parent); free(s->end); free(s->root);
	free(s->depth); free(s->klass); free(s->func); free(s->frag); free(s->tail);
	free(s->padend); free(s->cs); free(s->weight);
	free(s->h0); free(s->h); free(s->inst); free(s->exec); free(s->bkt);
	free(s->cstart); free(s->cnodes); free(s->stk); free(s->mvpos); free(s->mvdh);
	free(s->aops); free(s->rootslot); free(s->nbad);
	free(s->rpos); free(s->rnodes); free(s->rold); free(s->rpen); free(s->rstamp);
	for (uint32_t v = 0; v < s->nvars; v++) {
		free(s->vars[v].anch);
		free(s->vars[v].mem);
	}
	free(s->gsave);
	free(s->rec_mask);
	u64map_free(&s->tramp);
	u64map_free(&s->failed);
	u64map_free(&s->cloned);
	free(s->vars); free(s->cnt); free(s->stamp); free(s->clones); free(s->ndispatch);
	free(s->fweight); free(s->nstub); free(s->cweight);
	u64map_free(&s->clonemap);
	u64map_free(&s->copymap);
	for (uint32_t b = 0; b < s->nB; b++)
		free(s->B[b].more);
	free(s->B); free(s->freeB); free(s->tab); free(s->coll);
	free(s->rtouched); free(s->rmax); free(s->pmax); free(s->rcnt); free(s->pcnt); free(s->snap);
	free(s);
}

/* ---------------------------------------------------------------- moves */

/* Try value for v; returns the change of score, leaves it applied.  *ok is
 * false when the stack cap is exceeded. */
static double try_set(struct ds *s, uint32_t v, uint32_t value, bool *ok)
{
	double before = score(s);
	set_var(s, v, value);
	s->evals++;
	*ok = !over_cap(s);
	return score(s) - before;
}

/* A fresh mark for s->stamp (no variable carries it yet). */
static void stamp_next(struct ds *s)
{
	if (++s->stampv == 0) {
		memset(s->stamp, 0, s->capvars * sizeof(*s->stamp));
		s->stampv = 1;
	}
}

/* Variables whose coefficient differs between positions a and b (the frames
 * below their common ancestor), with at least one allowed nonzero amount. */
static uint32_t diff_vars(struct ds *s, uint32_t a, uint32_t b, uint32_t *out, uint32_t max)
{
	uint32_t nt = 0, x = a, y = b;
	uint32_t *touched = out;        /* reuse out as the touched list */
	uint32_t cap = max;
#define BUMP(v, k)                                                                     \
	do {                                                                           \
		uint32_t v_ = (v);                                                     \
		if (v_ != DA_NONE) {                                                   \
			if (!s->cnt[v_] && s->stamp[v_] != s->stampv && nt < cap) {    \
				touched[nt++] = v_;                                    \
				s->stamp[v_] = s->stampv;                              \
			}                                                              \
			s->cnt[v_] += (k);                                             \
		}                                                                      \
	} while (0)
	/* own: the frame's padding moves nothing of the path (a last frame, a
	 * tail node's parent) */
#define STEP(n, k, own)                                                                \
	do {                                                                           \
		BUMP(s->exec[n], k);                                                   \
		if (!(own))                                                            \
			BUMP(s->inst[n], k);                                           \
		(own) = s->tail[n];                                                    \
		(n) = s->parent[n];                                                    \
	} while (0)
	stamp_next(s);
	bool own_x = true, own_y = true;
	/* a fragment is at its parent's height: what moves it moves that */
	x = FRAME(s, a);
	y = FRAME(s, b);
	while (x != DA_NONE && (y == DA_NONE || s->depth[x] > s->depth[y]))
		STEP(x, 1, own_x);
	while (y != DA_NONE && (x == DA_NONE || s->depth[y] > s->depth[x]))
		STEP(y, -1, own_y);
	while (x != y) {
		STEP(x, 1, own_x);
		STEP(y, -1, own_y);
	}
	if (x != DA_NONE && own_x != own_y)     /* one side left by a tail call */
		BUMP(s->inst[x], own_x ? -1 : 1);
#undef STEP
#undef BUMP
	uint32_t n = 0;
	for (uint32_t i = 0; i < nt; i++) {
		uint32_t v = touched[i];
		int32_t c = s->cnt[v];
		s->cnt[v] = 0;
		if (c && s->vars[v].mask > 1 && !s->vars[v].dead)
			out[n++] = v;
	}
	return n;
}

struct cand {
	uint32_t var;
	uint32_t kind;
	uint64_t cost;
};

/* Cheapest first: nodes moved, a wrap counting WRAP_FACTOR times as much as
 * a padding (it costs code and a trampoline per call); ties: padding first. */
#define WRAP_FACTOR 4
static int cmp_cand(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;
	if (a->cost != b->cost)
		return a->cost < b->cost ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	return a->var < b->var ? -1 : a->var > b->var;
}

#define MAXREP 16
#define MAXCAND 256

/* A node of entry e of bucket b (found among its class's nodes when the
 * one remembered has left). */
static uint32_t entry_rep(struct ds *s, uint32_t b, struct bent *e)
{
	if (e->rep == DA_NONE) {
		for (uint32_t i = s->cstart[e->klass]; i < s->cstart[e->klass + 1]; i++)
			if (s->bkt[s->cnodes[i]] == b) {
				e->rep = s->cnodes[i];
				break;
			}
	}
	return e->rep;
}

/* Representatives of the classes in bucket b: rep[0] of the heaviest class. */
static uint32_t bucket_reps(struct ds *s, uint32_t b, uint32_t *rep)
{
	struct bucket *B = &s->B[b];
	uint32_t heavy = 0;
	for (uint32_t i = 1; i < B->nent; i++) {
		const struct bent *e = ent(B, i), *h = ent(B, heavy);
		if (e->weight > h->weight || (e->weight == h->weight && (e->count > h->count ||
		    (e->count == h->count && e->klass < h->klass))))
			heavy = i;
	}
	uint32_t n = 1;
	rep[0] = entry_rep(s, b, ent(B, heavy));
	for (uint32_t i = 0; i < B->nent && n < MAXREP; i++)
		if (i != heavy)
			rep[n++] = entry_rep(s, b, ent(B, i));
	return n;
}

static uint32_t gather_cands(struct ds *s, uint32_t *rep, uint32_t nrep, struct cand *cand)
{
	uint32_t tmp[MAXCAND], nc = 0;
	for (uint32_t r = 1; r < nrep && nc < MAXCAND; r++) {
		uint32_t k = diff_vars(s, rep[0], rep[r], tmp, MAXCAND);
		for (uint32_t i = 0; i < k && nc < MAXCAND; i++) {
			bool dup = false;
			for (uint32_t j = 0; j < nc && !dup; j++)
				dup = cand[j].var == tmp[i];
			if (dup)
				continue;
			const struct var *V = &s->vars[tmp[i]];
			if (s->pads_only && V->kind != VPAD)
				continue;
			uint64_t cost = (V->reach + 1) * (V->kind == VWRAP ? WRAP_FACTOR : 1);
			cand[nc++] = (struct cand){tmp[i], V->kind, cost};
			/* its edge group, which moves a path's callsite variants together */
			uint32_t g = V->kind == VWRAP ? V->group : DA_NONE;
			bool gdup = g == DA_NONE;
			for (uint32_t j = 0; j < nc && !gdup; j++)
				gdup = cand[j].var == g;
			if (!gdup && nc < MAXCAND) {
				const struct var *G = &s->vars[g];
				uint64_t r = 0;
				for (uint32_t j = 0; j < G->nmem; j++)
					r += s->vars[G->mem[j]].reach;
				cand[nc++] = (struct cand){g, VWRAP, (r + 1) * WRAP_FACTOR};
			}
		}
	}
	qsort(cand, nc, sizeof(*cand), cmp_cand);
	return nc;
}

/* The construction's stack price, times the search's (at 3 or 4 the real
 * pathmaps' growth passes 1.05 geomean, at 10 the construction gains
 * nothing; docs/bench-disambig.md) */
#define CONS_STACK_PRICE 5.0

/* One function's nodes and the variables that tell them apart, for the
 * constructive phase (construct): coef[i * nv + k] is how many times var[k]
 * adds to the height of node[i]; sig[i] hashes node i's coefficients on the
 * variables not fixed yet. */
struct family {
	uint32_t *node, n;
	uint32_t *var, nv;
	int32_t *coef;
	uint64_t *sig;
	struct famkey {
		uint64_t key;
		uint32_t klass;
	} *keys;
	uint32_t *bad, *seen;   /* per class, epoch stamps (construct's) */
	uint32_t epoch;
	double pen;             /* stack penalty when the family started */
};

static int cmp_famkey(const void *x, const void *y)
{
	const struct famkey *a = x, *b = y;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->klass < b->klass ? -1 : a->klass > b->klass;
}

/* How many of the family's paths may still end precise: two paths whose
 * nodes agree in height and in the coefficients of every variable not fixed
 * yet share a CID whatever those variables become (they move both alike).
 * The last variable fixed, it is the number of the function's precise paths.
 * Charged to the work as a move of every node. */
static double potential(struct ds *s, struct family *F)
{
	for (uint32_t i = 0; i < F->n; i++) {
		uint32_t x = F->node[i];
		F->keys[i] = (struct famkey){da_mix64((uint64_t)s->h[x]) ^ F->sig[i], s->klass[x]};
	}
	qsort(F->keys, F->n, sizeof(*F->keys), cmp_famkey);
	s->work += F->n;
	uint32_t e = ++F->epoch, alive = 0;
	for (uint32_t i = 0, j; i < F->n; i = j) {
		for (j = i + 1; j < F->n && F->keys[j].key == F->keys[i].key; j++)
			;
		if (F->keys[i].klass != F->keys[j - 1].klass)
			for (uint32_t t = i; t < j; t++)
				F->bad[F->keys[t].klass] = e;
	}
	for (uint32_t i = 0; i < F->n; i++) {
		uint32_t c = F->keys[i].klass;
		if (F->bad[c] != e && F->seen[c] != e) {
			F->seen[c] = e;
			alive++;
		}
	}
	return alive;
}

/* The best single change of v; leaves v unchanged.  Returns the gain, and
 * the amount in *bestw (v's own when none gains).  With thin (a position),
 * only amounts after which its CID holds fewer paths count, and the best of
 * those is returned even when it loses (*bestw DA_NONE: none does).
 * With F, the gain counts the family's potential too, and stack at
 * CONS_STACK_PRICE times the search's price (frugal: amounts that raise the
 * stack penalty are not taken).
 * Amounts are tried in ascending order, each from the previous one (one
 * move per amount, not two). */
static double best_value(struct ds *s, uint32_t v, uint32_t *bestw, uint32_t thin,
			 struct family *F)
{
	struct var *V = &s->vars[v];
	uint32_t cur = V->value;
	bool need = thin != DA_NONE;
	uint32_t paths = need ? s->B[s->bkt[thin]].nent : 0;
	double best = need ? -INFINITY : 0, base = score(s) + (F ? potential(s, F) : 0);
	double pen0 = s->pen, extra = F && !s->frugal ? CONS_STACK_PRICE - 1 : 0;
	*bestw = need ? DA_NONE : cur;
	da_mask m = V->mask;
	trial_begin(s, v);
	for (uint32_t k = 0; k <= DA_MAX_STEPS; k++) {
		if (!((m >> k) & 1))
			continue;
		uint32_t w = k * DA_ALIGN;
		if (w == cur)
			continue;
		set_any(s, v, w);
		s->evals++;
		double d = score(s) + (F ? potential(s, F) : 0) - base;
		d -= extra * (s->pen - pen0);
		bool thinner = !need || s->B[s->bkt[thin]].nent < paths;
		bool grows = F && s->frugal && s->pen > F->pen + 1e-9;
		if (!over_cap(s) && thinner && !grows && d > best + 1e-9) {
			best = d;
			*bestw = w;
		}
		if (out_of_time(s))
			break;
	}
	revert_any(s, v, cur);
	return best;
}

/* The smallest amount of v that improves the score: applied, true; or v
 * unchanged, false. */
static bool first_value(struct ds *s, uint32_t v)
{
	struct var *V = &s->vars[v];
	uint32_t cur = V->value;
	double base = score(s);
	da_mask m = V->mask;
	trial_begin(s, v);
	for (uint32_t k = 0; k <= DA_MAX_STEPS; k++) {
		if (!((m >> k) & 1) || k * DA_ALIGN == cur)
			continue;
		set_any(s, v, k * DA_ALIGN);
		s->evals++;
		if (!over_cap(s) && score(s) - base > 1e-9) {
			s->accepted++;
			return true;
		}
		if (out_of_time(s))
			break;
	}
	revert_any(s, v, cur);
	return false;
}

/* Can the function at position y take a clone for the call that entered it
 * (s->exec[y]: an original callsite, or its copy in a clone: a chain)? */
static bool clone_ok(struct ds *s, uint32_t y)
{
	const struct da_problem *p = s->p;
	uint32_t f = s->func[y], c = s->cs[y], ex = s->exec[y];
	if (c == DA_NONE || ex == DA_NONE || s->inst[y] != f ||
	    u64map_get(&s->clonemap, da_pair(f, ex)) != DA_NONE)
		return false;
	return da_redirects(p, c, f) && (!da_dispatched(p, c, f) || s->ndispatch[f] < DA_MAX_DISPATCH);
}

/* Undo the clones from k on (the last ones made). */
static void clones_destroy_from(struct ds *s, uint32_t k)
{
	for (uint32_t j = s->nclones; j-- > k;)
		if (s->clones[j].alive)         /* a mirror undone already */
			clone_destroy(s, j);
}

static void mirror_below(struct ds *s, uint32_t k, uint32_t was, uint64_t until);

/* Is a node of x's subtree at a CID of two paths or more?  A copy of the
 * clone it ran in gains nothing otherwise. */
static bool colliding_below(const struct ds *s, uint32_t x)
{
	for (uint32_t y = x; y < s->end[x]; y++)
		if (s->B[s->bkt[y]].nent >= 2)
			return true;
	return false;
}

/* mirror_below for the call children of node a of clone k (a fragment
 * child's too: its calls are the frame's). */
static void mirror_calls(struct ds *s, uint32_t k, uint32_t a, uint32_t was, uint64_t until)
{
	for (uint32_t x = a + 1; x < s->end[a] && !s->oom && s->work < until; x = s->end[x]) {
		if (s->frag[x]) {
			mirror_calls(s, k, x, was, until);
			continue;
		}
		uint32_t cs = s->cs[x];
		if (cs == DA_NONE || s->vars[s->exec[x]].clone != k)
			continue;
		/* the call that entered x before: the original's, or was's copy */
		uint32_t before = was == DA_NONE ? s->nf + cs : u64map_get(&s->copymap, da_pair(was, cs));
		uint32_t c0 = before == DA_NONE ? DA_NONE
			      : u64map_get(&s->clonemap, da_pair(s->func[x], before));
		if (c0 == DA_NONE || s->stamp[s->exec[x]] == s->stampv || !clone_ok(s, x) ||
		    !colliding_below(s, x))
			continue;
		s->stamp[s->exec[x]] = s->stampv;      /* tried: not again for k's other frames */
		double score0 = score(s);
		uint32_t k2 = clone_create(s, s->func[x], s->exec[x], c0);
		if (k2 == DA_NONE)
			return;
		uint32_t mirrors = s->mirrors;
		mirror_below(s, k2, c0, until);
		if (over_cap(s) || score(s) <= score0 + 1e-9) {
			clones_destroy_from(s, k2);
			s->mirrors = mirrors;
		} else {
			s->mirrors++;
		}
	}
}

/* Clone k has just taken frames that ran in clone `was` (DA_NONE: in the
 * original function).  The callees of those frames that ran in clones
 * entered through was's calls now enter through k's copies of the calls,
 * which no clone takes: they fall back to the original functions' CIDs.
 * Each such clone is copied for k's copy of its call, with its padding and
 * wraps (its template), and the same below it, and kept when the objective
 * improves.  Without this a clone of a crowded helper undoes the chains
 * below it (perlbench: a clone for a route of 78 paths, 62 of them
 * ambiguous, lost 688 paths below it and was refused).  A copy for a call
 * by dispatch takes one of the function's DA_MAX_DISPATCH tests (clone_ok).
 * Stops at `until` node moves. */
static void mirror_below(struct ds *s, uint32_t k, uint32_t was, uint64_t until)
{
	uint32_t *tops, nt = top_anchors(s, s->clones[k].exec, &tops);
	for (uint32_t i = 0; i < nt && !s->oom; i++)
		if (s->vars[s->inst[tops[i]]].clone == k)
			mirror_calls(s, k, tops[i], was, until);
	free(tops);
}

/* Clone the function at position y for the call that entered it; when
 * that alone does not improve the score, and s->sibling_clones, clone it
 * also for the other direct calls of y's caller frame that enter it (the
 * same callee called from two places of the caller, as sqlite3Malloc calls
 * sqlite3StatusUp).  Under DA_UNIT_FUNCTIONS a path is precise only when
 * all its nodes are: one of them moved to a namespace of its own gains
 * nothing while its sibling through the other call stays where it was.
 * Siblings by dispatch are left out: a function takes few of them.
 * With mirror, each clone also copies the clones below it
 * (mirror_below), within a quarter of a collision's allowance.
 * Returns the first clone made (the others follow it), or DA_NONE. */
static uint32_t clone_group(struct ds *s, uint32_t y, bool mirror)
{
	uint32_t par = s->parent[y], f = s->func[y];
	double before = score(s);
	uint64_t until = s->work + s->attempt_work / 4;
	stamp_next(s);
	uint32_t k = clone_create(s, f, s->exec[y], DA_NONE);
	s->evals++;
	if (k != DA_NONE && mirror)
		mirror_below(s, k, DA_NONE, until);
	if (k == DA_NONE || par == DA_NONE || !s->sibling_clones ||
	    (!over_cap(s) && score(s) > before + 1e-9))
		return k;
	for (uint32_t z = par + 1; z < s->end[par] && !s->oom; z = s->end[z]) {
		if (z == y || s->func[z] != f || s->frag[z] || !clone_ok(s, z) ||
		    da_dispatched(s->p, s->cs[z], f))
			continue;
		uint32_t k2 = clone_create(s, f, s->exec[z], DA_NONE);
		if (k2 == DA_NONE)
			break;
		if (mirror)
			mirror_below(s, k2, DA_NONE, until);
	}
	return k;
}

/* Score change of clone_group(y) (no mirrors), with its copy of callsite e (DA_NONE:
 * none) set to the best amount (*w).  Leaves the state as it was. */
static double eval_clone(struct ds *s, uint32_t y, uint32_t e, uint32_t *w)
{
	double before = score(s);
	*w = DA_NONE;
	uint32_t k = clone_group(s, y, false);
	if (k == DA_NONE)
		return 0;
	double best = over_cap(s) ? 0 : score(s) - before;
	if (e != DA_NONE) {
		uint32_t cv = u64map_get(&s->copymap, da_pair(k, e)), bw;
		best = 0;
		if (cv != DA_NONE) {
			double gain = best_value(s, cv, &bw, DA_NONE, NULL);
			double base = score(s) - before;
			if (gain > 0 && base + gain > 0) {
				best = base + gain;
				*w = bw;
			}
		}
	}
	clones_destroy_from(s, k);
	return best;
}

/* An adjacent pair of a path: a frame's function, the call that entered
 * it, and the call it made to the next frame (disambig.h section 4). */
struct adj {
	uint32_t func, exec, cs;
};

static int cmp_adj(const void *x, const void *y)
{
	const struct adj *a = x, *b = y;
	if (a->func != b->func)
		return a->func < b->func ? -1 : 1;
	if (a->exec != b->exec)
		return a->exec < b->exec ? -1 : 1;
	return a->cs < b->cs ? -1 : a->cs > b->cs;
}

/* The adjacent pairs of the frames of x's path below its ancestor top
 * (the pair whose caller is top included), sorted; their number. */
static uint32_t adj_below(const struct ds *s, uint32_t x, uint32_t top, struct adj *out)
{
	uint32_t n = 0;
	for (; x != top && s->parent[x] != DA_NONE; x = s->parent[x]) {
		uint32_t y = s->parent[x];
		out[n++] = (struct adj){s->func[y], s->exec[y], s->cs[x]};
	}
	qsort(out, n, sizeof(*out), cmp_adj);
	return n;
}

static uint32_t adj_count(const struct adj *a, uint32_t n, struct adj key)
{
	const struct adj *hit = bsearch(&key, a, n, sizeof(*a), cmp_adj);
	if (!hit)
		return 0;
	uint32_t c = 0;
	for (const struct adj *p = hit; p >= a && !cmp_adj(p, &key); p--)
		c++;
	for (const struct adj *p = hit + 1; p < a + n && !cmp_adj(p, &key); p++)
		c++;
	return c;
}

/* Cloning moves for the pair (a, b): the last frame's function for its
 * callsite (the clone is a CID of its own), or the caller of an adjacent pair
 * (callsite into f, callsite e owned by f) with the clone's copy of e
 * wrapped (not when last_only).  Applies the best improving one.  Within
 * `allow` node moves: a clone of a frame high in the tree may change chains
 * far below it (python3's interpreter loop; when every node below was
 * visited, one pair's walk up both paths took up to 7M).
 * Only moves that treat the two paths differently are evaluated: a clone
 * of the last frames' function when they were entered through different
 * calls, and an adjacent pair that occurs a different number of times in
 * them.  Above their lowest common ancestor the two paths share their
 * frames, so only the pairs below it can differ in number.  (python3 under
 * its rewriter's capability: two hot collisions that differ only in a
 * module not rewritten took each of its greedy sweeps' share of the
 * budget, 3.5M node moves a sweep, for clones that moved both paths
 * alike.) */
static bool try_clones(struct ds *s, uint32_t a, uint32_t b, uint64_t allow, bool last_only)
{
	const struct da_problem *p = s->p;
	uint32_t fa = FRAME(s, a), fb = FRAME(s, b), top = fa;
	while (top != DA_NONE && !(top <= fb && fb < s->end[top]))
		top = s->parent[top];
	uint32_t da = s->depth[fa] - (top == DA_NONE ? 0 : s->depth[top]);
	uint32_t db = s->depth[fb] - (top == DA_NONE ? 0 : s->depth[top]);
	struct adj *below = malloc(((size_t)da + db + 2) * sizeof(*below));
	if (!below) {
		s->oom = true;
		return false;
	}
	uint32_t na = adj_below(s, fa, top, below);
	uint32_t nb = adj_below(s, fb, top, below + na);
	double best = 0;
	uint32_t by = DA_NONE, be = DA_NONE, bw = DA_NONE, w;
	uint64_t start = s->work;
	for (int side = 0; side < 2 && s->work - start <= allow; side++) {
		uint32_t x = side ? fb : fa;     /* a fragment: its parent's clone */
		if (s->exec[fa] != s->exec[fb] && clone_ok(s, x)) {
			double d = eval_clone(s, x, DA_NONE, &w);
			if (d > best + 1e-9) {
				best = d;
				by = x, be = DA_NONE, bw = DA_NONE;
			}
		}
		for (uint32_t steps = 0; !last_only && x != DA_NONE && steps < 64 && !out_of_time(s) &&
		     s->work - start <= allow; x = s->parent[x], steps++) {
			uint32_t y = s->parent[x];
			if (y == DA_NONE)
				break;
			uint32_t e = s->cs[x];
			if (!clone_ok(s, y) || e == DA_NONE || p->callsites[e].owner != s->func[y] ||
			    s->vars[s->nf + e].mask <= 1)
				continue;
			struct adj key = {s->func[y], s->exec[y], e};
			if (adj_count(below, na, key) == adj_count(below + na, nb, key))
				continue;       /* moves both paths alike */
			double d = eval_clone(s, y, e, &w);
			if (d > best + 1e-9 && w != DA_NONE) {
				best = d;
				by = y, be = e, bw = w;
			}
		}
	}
	free(below);
	if (best <= 1e-9)
		return false;
	uint32_t k = clone_group(s, by, false);
	if (k != DA_NONE && be != DA_NONE) {
		uint32_t cv = u64map_get(&s->copymap, da_pair(k, be));
		if (cv != DA_NONE)
			set_var(s, cv, bw);
	}
	s->accepted++;
	return true;
}

/* Clones for crowded functions: every (function, call) with nodes at
 * ambiguous CIDs, most such nodes first, cloned for that call when the
 * score improves (a call: an original callsite, or its copy in a clone that
 * existed when the pass gathered the routes, so that each pass copies a
 * crowded route one level further down: a chain).  A clone is a CID namespace of its own: the paths that
 * enter f through c then collide only among themselves (thesis section
 * 5.4.3 uses clones for paths that differ only in order; here they split a
 * helper reached by more paths than it has heights). */
struct crowd {
	uint32_t at, nodes;     /* a node of the route (its function, callsite) */
};

static int cmp_crowd(const void *x, const void *y)
{
	const struct crowd *a = x, *b = y;
	if (a->nodes != b->nodes)
		return a->nodes > b->nodes ? -1 : 1;
	return a->at < b->at ? -1 : a->at > b->at;
}

/* A function's first clone by dispatch pays for the tests that every entry
 * of it runs (dispatch_weight): at a hot function, more than one route's
 * paths are worth, while all its crowded routes may be worth it together
 * (python3 under its capability: libc's memmove takes 5.9% of the entries,
 * 3,000 paths at its ambiguous CIDs).  Clone f = c[i]'s function for each
 * of its routes by dispatch in c[i..n), most nodes first, and keep the
 * prefix that scores best (none when none beats the score before). */
static void clone_dispatch_routes(struct ds *s, const struct crowd *c, uint32_t i, uint32_t n,
				  bool mirror)
{
	uint32_t f = s->func[c[i].at];
	double best = score(s);
	uint32_t start = s->nclones, keep = start, mirrors = s->mirrors;
	for (uint32_t j = i; j < n && c[j].nodes >= 2 && !out_of_time(s) && !s->oom; j++) {
		uint32_t x = c[j].at;
		if (s->func[x] != f || !clone_ok(s, x) || !da_dispatched(s->p, s->cs[x], f))
			continue;
		if (clone_group(s, x, mirror) == DA_NONE)
			break;
		if (!over_cap(s) && score(s) > best + 1e-9) {
			best = score(s);
			keep = s->nclones;
			mirrors = s->mirrors;
		}
	}
	clones_destroy_from(s, keep);
	s->mirrors = mirrors;
	if (keep > start)
		s->accepted++;
}

static void clone_crowded(struct ds *s, bool mirror)
{
	struct u64map m;
	struct crowd *c = NULL;
	uint32_t n = 0, cap = 0;
	if (u64map_init(&m, 1024) < 0) {
		s->oom = true;
		return;
	}
	for (uint32_t x = 0; x < s->n && !s->oom; x++) {
		uint32_t y = FRAME(s, x);       /* a fragment: its parent's clone */
		if (s->B[s->bkt[x]].nent < 2 || !clone_ok(s, y))
			continue;
		uint64_t key = da_pair(s->func[y], s->exec[y]);
		uint32_t i = u64map_get(&m, key);
		if (i == DA_NONE) {
			if (!grow_array((void **)&c, n + 1ull, &cap, sizeof(*c)) || u64map_put(&m, key, n) < 0) {
				s->oom = true;
				break;
			}
			i = n++;
			c[i] = (struct crowd){y, 0};
		}
		c[i].nodes++;
	}
	u64map_free(&m);
	if (c)
		qsort(c, n, sizeof(*c), cmp_crowd);
	/* routes of one path end the list: one path is moved more cheaply by
	 * a padding or a wrap than by a copy of its function (sqlite3: 65.3%
	 * with them, 68.9% without) */
	bool *batched = calloc(s->nf ? s->nf : 1, sizeof(*batched));   /* clone_dispatch_routes tried */
	if (!batched)
		s->oom = true;
	for (uint32_t i = 0; i < n && c[i].nodes >= 2 && !out_of_time(s) && !s->oom; i++) {
		uint32_t x = c[i].at, f = s->func[x];
		if (!clone_ok(s, x))
			continue;
		double before = score(s);
		uint32_t mirrors = s->mirrors;
		bool first_test = !s->ndispatch[f] && da_dispatched(s->p, s->cs[x], f);
		uint32_t k = clone_group(s, x, mirror);
		if (k == DA_NONE)
			break;
		if (!over_cap(s) && score(s) > before + 1e-9) {
			s->accepted++;
			continue;
		}
		clones_destroy_from(s, k);
		s->mirrors = mirrors;
		if (first_test && !batched[f]) {
			batched[f] = true;
			clone_dispatch_routes(s, c, i, n, mirror);
		}
	}
	free(batched);
	free(c);
}

/* One improving move among the variables separating bucket b's paths,
 * cheapest first, spending at most `allow` node moves. */
static bool improve_once(struct ds *s, uint32_t b, uint64_t allow)
{
	uint32_t rep[MAXREP];
	struct cand cand[MAXCAND];
	uint32_t nrep = bucket_reps(s, b, rep);
	if (nrep < 2)
		return false;
	uint32_t nc = gather_cands(s, rep, nrep, cand);
	uint64_t start = s->work;
	for (uint32_t i = 0; i < nc && !out_of_time(s); i++) {
		if (first_value(s, cand[i].var))
			return true;
		if (s->work - start > allow)
			return false;
	}
	return false;
}

/* A CID as a key of s->failed and s->cloned (two CIDs may share one: an
 * order only). */
static uint64_t cid_key(uint32_t inst, int64_t h)
{
	return da_mix64(da_pair(inst, (uint32_t)h)) >> 1;
}

/* The paths a CID needs before improve_bucket clones for a pair that its
 * variables could separate but did not. */
#define CLONE_OVER_VARS 8

/* One improving move for bucket b; true when one was applied. */
static bool improve_bucket(struct ds *s, uint32_t b)
{
	if (improve_once(s, b, s->attempt_work))
		return true;
	uint32_t rep[MAXREP];
	uint32_t nrep = bucket_reps(s, b, rep);
	if (s->o.allow_clone && !out_of_time(s)) {
		/* every clone for pairs that nothing cheaper separates; for the
		 * others, whose variables found no free height, in a CID of at
		 * least CLONE_OVER_VARS paths (or one where such a clone was
		 * made before: its last paths), a clone of the last frame's
		 * function only: a CID namespace of its own for the call that
		 * entered it.  cmake's ~190 static constructors each call one
		 * small helper, at one height that its other paths crowd: 95.9%
		 * -> 97.6% of its reducible paths (three seeds, a short script's
		 * map), the other real maps and the synthetic sets the same
		 * plans.  Every clone for such pairs cost tcl 0.4 points; the
		 * last frame's for pairs in smaller CIDs cost dealII 17% more
		 * time for nothing (docs/bench-disambig.md, session 47) */
		uint64_t key = cid_key(s->B[b].inst, s->B[b].h);
		bool opened = u64map_get(&s->cloned, key) != DA_NONE;
		for (uint32_t r = 1; r < nrep; r++) {
			uint32_t tmp[MAXCAND];
			bool differ = diff_vars(s, rep[0], rep[r], tmp, MAXCAND) > 0;
			if (differ && s->B[b].nent < CLONE_OVER_VARS && !opened)
				continue;
			if (!try_clones(s, rep[0], rep[r], s->attempt_work, differ))
				continue;
			if (differ && !opened && u64map_put(&s->cloned, key, 1) < 0)
				s->oom = true;
			return true;
		}
	}
	return false;
}

/* Mark (or unmark) in s->cnt the variables that move the node at position
 * x: the wraps of its frames and the paddings of its non-last frames. */
static void mark_path_vars(struct ds *s, uint32_t x, int32_t mark)
{
	x = FRAME(s, x);        /* a fragment is at its parent's height */
	if (s->exec[x] != DA_NONE)
		s->cnt[s->exec[x]] = mark;
	for (uint32_t z = x, y = s->parent[x]; y != DA_NONE; z = y, y = s->parent[y]) {
		if (s->exec[y] != DA_NONE)
			s->cnt[s->exec[y]] = mark;
		if (!s->tail[z])        /* a tail node's parent frame is gone */
			s->cnt[s->inst[y]] = mark;
	}
}

struct logent {
	uint32_t var, old;
};

/* Move every other path of hot bucket b away from its heaviest, one at a
 * time, each by the move that loses least among the cheapest variables that
 * move it but not the heavy path; kept when the whole improves the score,
 * the heavy path alone being worth more than what the others lose.  (Single
 * improving moves cannot get there when every departure on its own costs,
 * and the first improving move of any variable may carry the heavy path
 * into another collision.)  At most `allow` node moves. */
#define ISOLATE_VARS 4
static bool isolate_heavy(struct ds *s, uint32_t b, uint64_t allow)
{
	uint32_t rep[MAXREP];
	if (bucket_reps(s, b, rep) < 2)
		return false;
	double base = score(s);
	uint64_t start = s->work;
	struct logent undo[2 * MAXREP];
	uint32_t nundo = 0, heavy = rep[0];
	while (s->B[s->bkt[heavy]].nent >= 2 && nundo < 2 * MAXREP && !out_of_time(s) &&
	       s->work - start <= allow) {
		bucket_reps(s, s->bkt[heavy], rep);
		uint32_t pair[2] = {heavy, rep[rep[0] == heavy ? 1 : 0]};
		struct cand cand[MAXCAND];
		uint32_t nc = gather_cands(s, pair, 2, cand), n = 0;
		mark_path_vars(s, heavy, 1);
		for (uint32_t i = 0; i < nc && n < ISOLATE_VARS; i++)
			if (!s->cnt[cand[i].var] && s->vars[cand[i].var].kind != VGROUP)
				cand[n++] = cand[i];
		mark_path_vars(s, heavy, 0);
		double best = -INFINITY;
		uint32_t bestv = DA_NONE, bestw = DA_NONE;
		for (uint32_t i = 0; i < n; i++) {
			uint32_t w;
			double gain = best_value(s, cand[i].var, &w, heavy, NULL);
			if (w != DA_NONE && gain > best) {
				best = gain;
				bestv = cand[i].var;
				bestw = w;
			}
		}
		if (bestv == DA_NONE)
			break;
		undo[nundo++] = (struct logent){bestv, s->vars[bestv].value};
		set_any(s, bestv, bestw);
	}
	if (score(s) > base + 1e-9 && !over_cap(s)) {
		s->accepted++;
		return true;
	}
	while (nundo--)
		set_any(s, undo[nundo].var, undo[nundo].old);
	return false;
}

struct ckey {
	uint32_t inst;
	int64_t h;
	double prio;            /* what fixing it is worth per node moved */
	uint32_t nent;
	double value;           /* what fixing it is worth */
	bool failed;            /* a sweep found no move for it */
};

static int cmp_ckey(const void *x, const void *y)
{
	const struct ckey *a = x, *b = y;
	/* hot CIDs (their weight worth more than a path) first, hottest first */
	bool ha = a->value > a->nent + 1, hb = b->value > b->nent + 1;
	if (ha != hb)
		return ha ? -1 : 1;
	if (ha && a->value != b->value)
		return a->value > b->value ? -1 : 1;
	if (a->failed != b->failed)
		return a->failed ? 1 : -1;
	if (a->prio != b->prio)
		return a->prio > b->prio ? -1 : 1;
	if (a->nent != b->nent)
		return a->nent > b->nent ? -1 : 1;
	if (a->inst != b->inst)
		return a->inst < b->inst ? -1 : 1;
	return a->h < b->h ? -1 : a->h > b->h;
}

/* The colliding CIDs: hot ones first (hottest first), then those no sweep
 * has failed on, then best value for the work (what separating its paths
 * is worth: the paths and their weight, over the nodes its cheapest
 * separating variable moves); in an order independent of the hash. */
static struct ckey *colliding_keys(struct ds *s, uint32_t *n)
{
	struct ckey *k = malloc((s->ncoll + 1) * sizeof(*k));
	if (!k) {
		s->oom = true;
		*n = 0;
		return NULL;
	}
	uint32_t tmp[MAXCAND];
	for (uint32_t i = 0; i < s->ncoll; i++) {
		struct bucket *B = &s->B[s->coll[i]];
		uint64_t w = 0;
		for (uint32_t j = 0; j < B->nent; j++)
			w += ent(B, j)->weight;
		uint32_t rep[MAXREP], nrep = bucket_reps(s, s->coll[i], rep);
		uint64_t cost = UINT64_MAX;
		for (uint32_t r = 1; r < nrep && r < 4; r++) {
			uint32_t nv = diff_vars(s, rep[0], rep[r], tmp, MAXCAND);
			for (uint32_t j = 0; j < nv; j++) {
				const struct var *V = &s->vars[tmp[j]];
				uint64_t c = (V->reach + 1) * (V->kind == VWRAP ? WRAP_FACTOR : 1);
				if (c < cost)
					cost = c;
			}
		}
		double value = B->nent + s->hotk * (double)w;
		k[i] = (struct ckey){B->inst, B->h,
				     cost == UINT64_MAX ? 0 : value / (double)(cost + 16), B->nent, value,
				     u64map_get(&s->failed, cid_key(B->inst, B->h)) != DA_NONE};
	}
	qsort(k, s->ncoll, sizeof(*k), cmp_ckey);
	*n = s->ncoll;
	return k;
}

/* Whether a sweep found no move for CID k.  colliding_keys puts such CIDs
 * after the others: a sweep cut by its phase's share of the budget then
 * reaches the CIDs after them instead of trying them again (six seeds,
 * real maps 97.54% -> 97.61% of reducible paths pooled, synthetic sets
 * 96.19% -> 96.65%). */
static void note_failed(struct ds *s, const struct ckey *k, bool failed)
{
	if (!failed)
		u64map_del(&s->failed, cid_key(k->inst, k->h));
	else if (u64map_put(&s->failed, cid_key(k->inst, k->h), 1) < 0)
		s->oom = true;
}

static uint32_t greedy(struct ds *s)
{
	uint32_t sweep;
	for (sweep = 0; sweep < 50 && !out_of_time(s); sweep++) {
		uint32_t nk;
		struct ckey *keys = colliding_keys(s, &nk);
		/* each CID may spend its share of what is left, in proportion
		 * to its value, within bounds (four times its share before
		 * session 20: one share gains dealII 0.4-0.7 points on three
		 * draws, and costs python3 0.1 over twelve seeds, its noise) */
		uint64_t left = s->budget > s->work ? s->budget - s->work : 0;
		double total = 0;
		for (uint32_t i = 0; i < nk; i++)
			total += keys[i].value;
		if (!keys)
			return sweep;
		uint64_t improved = 0;
		for (uint32_t i = 0; i < nk && !out_of_time(s); i++) {
			bool hot = keys[i].value > keys[i].nent + 1;
			if (s->hot_only && !hot)
				break;          /* hot ones come first */
			double share = total > 0 ? (double)left * keys[i].value / total : 0;
			/* within bounds; a hot CID at the end may take what its
			 * worth says (isolating a heavy path is many moves) */
			double most = s->hot_only ? (double)left : 1e6;
			s->attempt_work = share < 4000 ? 4000 : share > most ? (uint64_t)most : (uint64_t)share;
			/* a hot CID may take many moves: each may separate one path;
			 * so may a CID of many paths (cmake's 115 at its helper, under
			 * its capability: 90.4% -> 91.3% of paths; the other maps and
			 * the synthetic sets the same plans) */
			int tmax = hot || keys[i].nent > 8 ? 64 : 8;
			for (int t = 0; t < tmax; t++) {
				uint32_t b = tab_find(s, keys[i].inst, keys[i].h);
				if (b == DA_NONE || s->B[b].nent < 2)
					break;
				bool moved = s->hot_only ? isolate_heavy(s, b, s->attempt_work)
							 : improve_bucket(s, b);
				if (!t)
					note_failed(s, &keys[i], !moved);
				if (!moved)
					break;
				improved++;
			}
		}
		free(keys);
		char what[64];
		snprintf(what, sizeof(what), "sweep %u (%llu moves)", sweep + 1,
			 (unsigned long long)improved);
		progress(s, what);
		/* the hot CIDs' share: one sweep (dealII, seed 1: two more found
		 * one move for 2.9M node moves, which the last phase turns into
		 * 0.07 points) */
		if (!improved || s->hot_only)
			break;
	}
	return sweep;
}

/* Threshold accepting over the same neighbourhood; returns to the best. */
static void anneal(struct ds *s, uint64_t work_share)
{
	uint64_t rng = s->o.seed ? s->o.seed : 1, start = s->work, stop = s->work + work_share;
	struct logent *log = NULL;
	uint32_t nlog = 0, caplog = 0;
	double best = score(s), t0 = 1.0;
	uint32_t tmp[MAXCAND];
	/* give up after this many draws without a new best */
	uint64_t patience = 50ULL * s->ncoll + 20000, since = 0;
	while (s->ncoll && s->work < stop && !out_of_time(s) && since++ < patience) {
		s->work++;      /* every draw costs, so stuck draws still end */
		double frac = (double)(s->work - start) / (double)work_share;
		double thr = t0 * (1 - frac);
		uint32_t b = s->coll[da_rand_below(&rng, s->ncoll)];
		uint32_t rep[MAXREP], nrep = bucket_reps(s, b, rep);
		if (nrep < 2)
			continue;
		uint32_t other = 1 + da_rand_below(&rng, nrep - 1);
		uint32_t nv = diff_vars(s, rep[0], rep[other], tmp, MAXCAND);
		if (!nv)
			continue;
		/* smaller reach first: draw twice, keep the smaller */
		uint32_t v1 = tmp[da_rand_below(&rng, nv)], v2 = tmp[da_rand_below(&rng, nv)];
		uint32_t v = s->vars[v1].reach <= s->vars[v2].reach ? v1 : v2;
		struct var *V = &s->vars[v];
		uint32_t steps = __builtin_popcountll(V->mask & ~(da_mask)1);
		if (!steps)
			continue;
		uint32_t pick = da_rand_below(&rng, steps + 1), w = 0;
		for (uint32_t k = 1, seen = 0; k <= DA_MAX_STEPS; k++)
			if ((V->mask >> k) & 1) {
				if (seen++ == pick) {
					w = k * DA_ALIGN;
					break;
				}
			}
		if (w == V->value)
			continue;
		uint32_t old = V->value;
		bool ok;
		trial_begin(s, v);
		double d = try_set(s, v, w, &ok);
		if (!ok || d < -thr) {
			set_var_ex(s, v, old, false);
			trial_restore(s);
			continue;
		}
		if (nlog == caplog) {
			caplog = caplog ? caplog * 2 : 256;
			struct logent *l = realloc(log, caplog * sizeof(*l));
			if (!l) {
				set_var(s, v, old);
				break;
			}
			log = l;
		}
		log[nlog++] = (struct logent){v, old};
		double sc = score(s);
		if (sc > best + 1e-9) {
			best = sc;
			nlog = 0;
			since = 0;
		}
	}
	while (nlog) {
		nlog--;
		set_var(s, log[nlog].var, log[nlog].old);
	}
	free(log);
}

/* Spread moves (the thesis' move, scored exactly): for a random ambiguous
 * pair, pad the functions whose counts differ, in path order, by 16, 32,
 * 48, ... more than now until the pair separates; keep the whole change when
 * the score improves.  Distinct amounts on several functions at once reach
 * states that single moves cannot. */
static void spread(struct ds *s, uint64_t work_share)
{
	uint64_t rng = (s->o.seed ? s->o.seed : 1) * 0x9e3779b97f4a7c15ULL, stop = s->work + work_share;
	uint64_t fruitless = 0, limit = 200 + 4 * (uint64_t)s->ncoll;
	uint32_t list[MAXCAND], old[MAXCAND], tmp[MAXCAND];
	while (s->ncoll && s->work < stop && !out_of_time(s) && fruitless < limit) {
		s->work++;
		uint32_t b = s->coll[da_rand_below(&rng, s->ncoll)];
		uint32_t rep[MAXREP], nrep = bucket_reps(s, b, rep);
		if (nrep < 2) {
			fruitless++;
			continue;
		}
		uint32_t xa = rep[da_rand_below(&rng, nrep)], xb = rep[da_rand_below(&rng, nrep)];
		if (xa == xb)
			xb = rep[xa == rep[0] ? 1 : 0];
		uint32_t nv = diff_vars(s, xa, xb, tmp, MAXCAND), n = 0;
		for (uint32_t i = 0; i < nv; i++)
			if (s->vars[tmp[i]].kind == VPAD)
				list[n++] = tmp[i];
		if (!n) {
			fruitless++;
			continue;
		}
		double base = score(s);
		uint32_t changed = 0;
		bool separated = false;
		for (uint32_t i = 0; i < n && !separated; i++) {
			uint32_t v = list[i], w = s->vars[v].value + DA_ALIGN * (i + 1);
			if (!da_mask_allows(s->vars[v].mask, w))
				continue;
			old[changed] = s->vars[v].value;
			list[changed++] = v;
			set_var(s, v, w);
			separated = s->inst[xa] != s->inst[xb] || s->h[xa] != s->h[xb];
		}
		s->evals++;
		if (separated && !over_cap(s) && score(s) > base + 1e-9) {
			s->accepted++;
			fruitless = 0;
			continue;
		}
		while (changed--)
			set_var(s, list[changed], old[changed]);
		fruitless++;
	}
}

/* ---------------------------------------------------------------- construction */

/* The constructive phase builds a function's heights like a perfect hash,
 * level by level: the variables that tell its colliding paths apart are
 * fixed one at a time, most splitting first, each at the amount that keeps
 * the most paths apart from all others in (height, coefficients of the
 * variables still to come), the family's potential; the whole change is
 * kept when the score improves.  Single moves scored one at a time spread n
 * paths over m heights like random hashing (about n e^(-n/m) alone). */
#define FAMILY_VARS 64          /* variables fixed per function, most splitting */

/* The variables on the path of position x with their coefficients
 * (disambig.h section 2: a wrap for every frame entered through it, a
 * padding for every non-last frame), tallied in s->cnt; returns how many,
 * listed in out (room for every variable). */
static uint32_t path_vars(struct ds *s, uint32_t x, uint32_t *out)
{
	uint32_t n = 0;
#define TALLY(v)                                                                       \
	do {                                                                           \
		uint32_t v_ = (v);                                                     \
		if (v_ != DA_NONE && !s->cnt[v_]++)                                    \
			out[n++] = v_;                                                 \
	} while (0)
	x = FRAME(s, x);        /* a fragment is at its parent's height */
	TALLY(s->exec[x]);
	for (uint32_t z = x, y = s->parent[x]; y != DA_NONE; z = y, y = s->parent[y]) {
		TALLY(s->exec[y]);
		if (!s->tail[z])        /* a tail node's parent frame is gone */
			TALLY(s->inst[y]);
	}
#undef TALLY
	return n;
}

struct coef_at {
	uint32_t node, var;
	int32_t coef;
};

/* Per (variable, colliding bucket): the nodes there that it adds to, with
 * one coefficient or several. */
struct split_at {
	uint32_t var, bucket, nodes;
	int32_t coef;
	bool mixed;
};

struct family_scratch {
	uint32_t *touched;      /* [nvars] */
	uint32_t *splits;       /* [nvars] colliding buckets a variable splits */
	uint32_t *kof;          /* [nvars] index in the family, or DA_NONE */
	struct coef_at *coefs;
	uint32_t ncoefs, capcoefs;
	struct split_at *sp;
	uint32_t nsp, capsp;
	struct u64map spmap;    /* (var, bucket) -> index in sp */
};

static bool coef_push(struct ds *s, struct family_scratch *X, struct coef_at c)
{
	if (!grow_array((void **)&X->coefs, X->ncoefs + 1ull, &X->capcoefs, sizeof(*X->coefs))) {
		s->oom = true;
		return false;
	}
	X->coefs[X->ncoefs++] = c;
	return true;
}

/* Count in X->spmap that variable v adds coef to a node of colliding bucket b. */
static bool split_note(struct ds *s, struct family_scratch *X, uint32_t v, uint32_t b, int32_t coef)
{
	uint64_t key = da_pair(v, b);
	uint32_t k = u64map_get(&X->spmap, key);
	if (k == DA_NONE) {
		if (!grow_array((void **)&X->sp, X->nsp + 1ull, &X->capsp, sizeof(*X->sp)) ||
		    u64map_put(&X->spmap, key, X->nsp) < 0) {
			s->oom = true;
			return false;
		}
		X->sp[X->nsp++] = (struct split_at){v, b, 1, coef, false};
		return true;
	}
	X->sp[k].nodes++;
	X->sp[k].mixed |= X->sp[k].coef != coef;
	return true;
}

struct ranked_var {
	uint32_t var, splits;
	uint64_t reach;
};

/* Most colliding buckets split first, then the fewest nodes moved. */
static int cmp_ranked_var(const void *x, const void *y)
{
	const struct ranked_var *a = x, *b = y;
	if (a->splits != b->splits)
		return a->splits > b->splits ? -1 : 1;
	if (a->reach != b->reach)
		return a->reach < b->reach ? -1 : 1;
	return a->var < b->var ? -1 : a->var > b->var;
}

/* Nodes in a bucket with another path (all of one function, as the bucket). */
static uint32_t bucket_nodes(struct bucket *B)
{
	uint32_t n = 0;
	for (uint32_t j = 0; j < B->nent; j++)
		n += ent(B, j)->count;
	return n;
}

/* The variables that split some colliding bucket of the family's nodes,
 * ranked; fills F->var (at most FAMILY_VARS) and X->kof. */
static bool family_rank_vars(struct ds *s, struct family *F, struct family_scratch *X)
{
	for (uint32_t i = 0; i < X->nsp; i++) {
		const struct split_at *a = &X->sp[i];
		if (a->mixed || a->nodes < bucket_nodes(&s->B[a->bucket]))
			X->splits[a->var]++;
	}
	struct ranked_var *r = malloc((X->nsp + 1) * sizeof(*r));
	if (!r) {
		s->oom = true;
		return false;
	}
	uint32_t nr = 0;
	for (uint32_t i = 0; i < X->nsp; i++) {
		uint32_t v = X->sp[i].var;
		const struct var *V = &s->vars[v];
		if (X->splits[v] && V->mask > 1 && !V->dead)
			r[nr++] = (struct ranked_var){v, X->splits[v], V->reach};
		X->splits[v] = 0;       /* listed once */
	}
	qsort(r, nr, sizeof(*r), cmp_ranked_var);
	F->nv = nr < FAMILY_VARS ? nr : FAMILY_VARS;
	for (uint32_t k = 0; k < F->nv; k++) {
		F->var[k] = r[k].var;
		X->kof[r[k].var] = k;
	}
	free(r);
	return true;
}

/* The family of the n nodes at positions node[] (one function's): their
 * discriminating variables and coefficients.  False when out of memory. */
static bool family_build(struct ds *s, uint32_t *node, uint32_t n, struct family *F,
			 struct family_scratch *X)
{
	F->n = n;
	F->node = node;
	X->ncoefs = X->nsp = 0;
	u64map_free(&X->spmap);
	if (u64map_init(&X->spmap, 64) < 0) {
		s->oom = true;
		return false;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t x = node[i], b = s->bkt[x];
		bool colliding = s->B[b].nent >= 2;
		uint32_t nt = path_vars(s, x, X->touched);
		for (uint32_t t = 0; t < nt; t++) {
			uint32_t v = X->touched[t];
			int32_t c = s->cnt[v];
			s->cnt[v] = 0;
			if (!coef_push(s, X, (struct coef_at){i, v, c}) ||
			    (colliding && !split_note(s, X, v, b, c)))
				return false;
		}
	}
	if (!family_rank_vars(s, F, X))
		return false;
	memset(F->coef, 0, (size_t)n * F->nv * sizeof(*F->coef));
	memset(F->sig, 0, (size_t)n * sizeof(*F->sig));
	for (uint32_t t = 0; t < X->ncoefs; t++) {
		const struct coef_at *c = &X->coefs[t];
		uint32_t k = X->kof[c->var];
		if (k == DA_NONE)
			continue;
		F->coef[(size_t)c->node * F->nv + k] = c->coef;
		F->sig[c->node] += (uint64_t)(int64_t)c->coef * (da_mix64(c->var + 1) | 1);
	}
	for (uint32_t k = 0; k < F->nv; k++)
		X->kof[F->var[k]] = DA_NONE;
	return true;
}

/* Fix the family's variables in order, each at its best amount for the
 * score plus the potential; keep the whole change when the score improves. */
static void family_construct(struct ds *s, struct family *F)
{
	double base = score(s);
	F->pen = s->pen;
	struct logent *log = malloc((F->nv + 1) * sizeof(*log));
	if (!log) {
		s->oom = true;
		return;
	}
	uint32_t nlog = 0;
	bool spent = false;
	for (uint32_t k = 0; k < F->nv && !out_of_time(s); k++) {
		uint32_t v = F->var[k];
		uint64_t r = da_mix64(v + 1) | 1;
		for (uint32_t i = 0; i < F->n; i++)
			F->sig[i] -= (uint64_t)(int64_t)F->coef[(size_t)i * F->nv + k] * r;
		uint32_t w;
		if (best_value(s, v, &w, DA_NONE, F) > 0) {
			double pen = s->pen;
			log[nlog++] = (struct logent){v, s->vars[v].value};
			set_any(s, v, w);
			spent |= s->pen > pen + 1e-9;
		}
	}
	double extra = s->frugal ? 0 : CONS_STACK_PRICE - 1;
	if (score(s) - extra * (s->pen - F->pen) > base + 1e-9) {
		s->accepted++;
		s->cons_spent |= spent;
	} else {
		while (nlog--)
			set_var(s, log[nlog].var, log[nlog].old);
	}
	free(log);
}

/* Colliding paths per function (CID instance), and the functions with any,
 * most first. */
static uint32_t crowded_order(struct ds *s, uint32_t *count, uint32_t *order)
{
	for (uint32_t i = 0; i < s->ncoll; i++) {
		struct bucket *B = &s->B[s->coll[i]];
		count[B->inst] += B->nent;
	}
	uint32_t n = 0;
	for (uint32_t v = 0; v < s->nvars; v++)
		if (count[v])
			order[n++] = v;
	for (uint32_t i = 1; i < n; i++) {      /* insertion sort: stable, few */
		uint32_t v = order[i], j = i;
		for (; j && count[order[j - 1]] < count[v]; j--)
			order[j] = order[j - 1];
		order[j] = v;
	}
	return n;
}

/* Positions by function: byinst[start[v] .. start[v + 1]) for every
 * variable v that is a function instance. */
static void by_function(const struct ds *s, uint32_t *start, uint32_t *byinst)
{
	uint32_t nv = s->nvars;
	for (uint32_t x = 0; x < s->n; x++)
		start[s->inst[x] + 1]++;
	for (uint32_t v = 0; v < nv; v++)
		start[v + 1] += start[v];
	for (uint32_t x = 0; x < s->n; x++)
		byinst[start[s->inst[x]]++] = x;
	for (uint32_t v = nv; v; v--)
		start[v] = start[v - 1];
	start[0] = 0;
}

/* Build and construct the family of the m nodes at node[]. */
static void family_of(struct ds *s, uint32_t *node, uint32_t m, struct family *F,
		      struct family_scratch *X)
{
	F->coef = malloc(((size_t)m * FAMILY_VARS + 1) * sizeof(*F->coef));
	F->sig = malloc((m + 1) * sizeof(*F->sig));
	F->keys = malloc((m + 1) * sizeof(*F->keys));
	if (!F->coef || !F->sig || !F->keys)
		s->oom = true;
	else if (family_build(s, node, m, F, X))
		family_construct(s, F);
	free(F->coef);
	free(F->sig);
	free(F->keys);
}

/* The constructive phase, until the budget: functions with the most
 * colliding paths first. */
static void construct(struct ds *s)
{
	uint32_t nv = s->nvars;
	uint32_t *count = calloc(nv + 1, sizeof(*count)), *order = malloc((nv + 1) * sizeof(*order));
	uint32_t *start = calloc(nv + 2, sizeof(*start)), *byinst = malloc((s->n + 1) * sizeof(*byinst));
	struct family F = {0};
	struct family_scratch X = {0};
	X.touched = malloc((nv + 1) * sizeof(*X.touched));
	X.splits = calloc(nv + 1, sizeof(*X.splits));
	X.kof = malloc((nv + 1) * sizeof(*X.kof));
	F.var = malloc(FAMILY_VARS * sizeof(*F.var));
	F.bad = calloc(s->nclasses + 1, sizeof(*F.bad));
	F.seen = calloc(s->nclasses + 1, sizeof(*F.seen));
	if (count && order && start && byinst && X.touched && X.splits && X.kof && F.var && F.bad &&
	    F.seen) {
		for (uint32_t v = 0; v < nv; v++)
			X.kof[v] = DA_NONE;
		uint32_t nord = crowded_order(s, count, order);
		by_function(s, start, byinst);
		for (uint32_t i = 0; i < nord && !out_of_time(s) && !s->oom; i++) {
			uint32_t g = order[i];
			family_of(s, byinst + start[g], start[g + 1] - start[g], &F, &X);
		}
	} else {
		s->oom = true;
	}
	free(count);
	free(order);
	free(start);
	free(byinst);
	free(X.touched);
	free(X.splits);
	free(X.kof);
	free(X.coefs);
	free(X.sp);
	u64map_free(&X.spmap);
	free(F.var);
	free(F.bad);
	free(F.seen);
}

static int cmp_shrink(const void *x, const void *y, void *ctx)
{
	const struct ds *s = ctx;
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
	double ca = (double)s->vars[a].value * (double)s->vars[a].reach;
	double cb = (double)s->vars[b].value * (double)s->vars[b].reach;
	if (ca != cb)
		return ca > cb ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Lower every nonzero amount where the score allows: to 0, else by one
 * step.  Every amount in between (up to 15 moves of its reach each) cost
 * dealII 30M node moves after annealing's random amounts, 3.5 s, for 0.1
 * point of precision and no stack. */
static void shrink(struct ds *s)
{
	uint32_t *order = malloc((s->nvars + 1) * sizeof(*order)), n = 0;
	if (!order) {
		s->oom = true;
		return;
	}
	for (uint32_t v = 0; v < s->nvars; v++)
		if (s->vars[v].value && !s->vars[v].dead && s->vars[v].kind != VGROUP)
			order[n++] = v;
	qsort_r(order, n, sizeof(*order), cmp_shrink, s);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t v = order[i], cur = s->vars[v].value, below = cur - DA_ALIGN;
		uint32_t amount[2] = {0, below};
		uint32_t n_amounts = below && da_mask_allows(s->vars[v].mask, below) ? 2 : 1;
		for (uint32_t k = 0; k < n_amounts; k++) {
			bool ok;
			trial_begin(s, v);
			double d = try_set(s, v, amount[k], &ok);
			if (ok && d > 1e-9)
				break;
			set_var_ex(s, v, cur, false);
			trial_restore(s);
		}
	}
	free(order);
}

/* ---------------------------------------------------------------- prune */

/* Drop the clones whose removal improves the objective: the clone passes
 * come early, and the moves after them often keep the paths a clone held
 * apart without it (or leave them ambiguous anyway), so that its code buys
 * nothing.  Latest first; a clone that a chain continues stays until the
 * chain is gone.  One that must stay is made again with its amounts. */
struct copy_amount {
	uint32_t callsite, value;
};

static void prune_clones(struct ds *s)
{
	uint32_t n = s->nclones, *nchild = calloc(n + 1, sizeof(*nchild));
	struct copy_amount *copies = NULL;
	uint32_t ncopies = 0, capcopies = 0;
	if (!nchild) {
		s->oom = true;
		return;
	}
	for (uint32_t k = 0; k < n; k++)
		if (s->clones[k].alive && s->vars[s->clones[k].exec].clone != DA_NONE)
			nchild[s->vars[s->clones[k].exec].clone]++;
	for (uint32_t k = n; k-- > 0 && !s->oom && !out_of_time(s);) {
		struct sclone c = s->clones[k];
		if (!c.alive || nchild[k])
			continue;
		uint32_t pad = s->vars[c.padvar].value;
		ncopies = 0;
		for (uint32_t v = s->vars[c.padvar].next; v != DA_NONE; v = s->vars[v].next) {
			const struct var *V = &s->vars[v];
			if (V->dead || V->kind != VWRAP)
				continue;
			if (!grow_array((void **)&copies, ncopies + 1ull, &capcopies, sizeof(*copies))) {
				s->oom = true;
				break;
			}
			copies[ncopies++] = (struct copy_amount){V->id, V->value};
		}
		if (s->oom)
			break;
		double before = score(s);
		int64_t precise = s->nprecise;
		clone_destroy(s, k);
		s->evals++;
		if (!over_cap(s) && score(s) > before + 1e-9 && s->nprecise >= precise) {
			s->accepted++;
			if (s->vars[c.exec].clone != DA_NONE)
				nchild[s->vars[c.exec].clone]--;
			continue;
		}
		uint32_t k2 = clone_create(s, c.func, c.exec, DA_NONE);
		if (k2 == DA_NONE)
			break;
		if (s->vars[s->clones[k2].padvar].value != pad)
			set_var(s, s->clones[k2].padvar, pad);
		for (uint32_t i = 0; i < ncopies; i++) {
			uint32_t cv = u64map_get(&s->copymap, da_pair(k2, copies[i].callsite));
			if (cv != DA_NONE && s->vars[cv].value != copies[i].value)
				set_var(s, cv, copies[i].value);
		}
	}
	free(copies);
	free(nchild);
}

/* ---------------------------------------------------------------- results */

int ds_result(struct ds *s, const struct da_options *o, struct da_result *r, char *err,
	      size_t errlen)
{
	const struct da_problem *p = s->p;
	memset(r, 0, sizeof(*r));
	if (da_plan_init(&r->plan, p) < 0)
		return errmsg(err, errlen, "out of memory");
	for (uint32_t f = 0; f < s->nf; f++)
		r->plan.pad[f] = s->vars[f].value;
	for (uint32_t c = 0; c < s->ncs; c++)
		r->plan.wrap[c] = s->vars[s->nf + c].value;
	uint32_t *renum = calloc(s->nclones + 1, sizeof(*renum)), nalive = 0, ncw = 0;
	if (!renum)
		goto oom;
	for (uint32_t k = 0; k < s->nclones; k++)
		renum[k] = s->clones[k].alive ? nalive++ : DA_NONE;
	for (uint32_t v = s->nf + s->ncs; v < s->nvars; v++)
		if (s->vars[v].kind == VWRAP && !s->vars[v].dead && renum[s->vars[v].clone] != DA_NONE)
			ncw++;
	r->plan.clones = calloc(nalive + 1, sizeof(*r->plan.clones));
	r->plan.clone_wraps = calloc(ncw + 1, sizeof(*r->plan.clone_wraps));
	if (!r->plan.clones || !r->plan.clone_wraps)
		goto oom;
	for (uint32_t k = 0; k < s->nclones; k++) {
		const struct sclone *c = &s->clones[k];
		uint32_t parent = s->vars[c->exec].clone;      /* DA_NONE: an original call */
		if (renum[k] != DA_NONE)
			r->plan.clones[renum[k]] = (struct da_clone){c->func, c->callsite,
				s->vars[c->padvar].value, parent == DA_NONE ? DA_NONE : renum[parent]};
	}
	r->plan.nclones = nalive;
	for (uint32_t v = s->nf + s->ncs; v < s->nvars; v++) {
		const struct var *V = &s->vars[v];
		if (V->kind == VWRAP && !V->dead && renum[V->clone] != DA_NONE)
			r->plan.clone_wraps[r->plan.nclone_wraps++] =
				(struct da_clone_wrap){renum[V->clone], V->id, V->value};
	}
	r->height = malloc((s->n + 1) * sizeof(*r->height));
	r->inst = malloc((s->n + 1) * sizeof(*r->inst));
	if (!r->height || !r->inst)
		goto oom;
	for (uint32_t x = 0; x < s->n; x++) {
		uint32_t v = s->node[x];
		const struct var *I = &s->vars[s->inst[x]];
		r->height[v] = s->h[x];
		r->inst[v] = I->clone == DA_NONE ? I->id
			     : s->nf + renum[I->clone] +
				       (s->inst[x] == s->clones[I->clone].fragvar ? nalive : 0);
	}
	free(renum);
	renum = NULL;
	if (da_metrics_of(p, NULL, NULL, &r->before) < 0 ||
	    da_metrics_of(p, r->height, r->inst, &r->after) < 0 ||
	    da_costs(p, &r->plan, r->height, r->inst, r) < 0 ||
	    da_leftovers(p, o, r->height, r->inst, r) < 0)
		goto oom;
	r->stats.seconds = elapsed(s);
	r->stats.evaluations = s->evals;
	r->stats.accepted = s->accepted;
	r->stats.node_moves = s->work;
	r->stats.budget_exhausted = s->out_of_budget;
	r->stats.phases_cut = s->phases_cut;
	return 0;
oom:
	free(renum);
	da_result_free(r);
	return errmsg(err, errlen, "out of memory");
}

void da_result_free(struct da_result *r)
{
	da_plan_free(&r->plan);
	free(r->height);
	free(r->inst);
	free(r->roots);
	free(r->left);
	memset(r, 0, sizeof(*r));
}

/* The phase that ran is cut when it reached its mark. */
static void phase_end(struct ds *s)
{
	if (s->work >= s->budget)
		s->phases_cut++;
}

/* The next phase runs until `share` of `budget` is spent. */
static void phase_until(struct ds *s, uint64_t budget, double share)
{
	phase_end(s);
	s->out_of_budget = false;
	s->budget = (uint64_t)(share * (double)budget);
}

/* Clones for crowded functions (phase c) until `share` of `main`; mirror:
 * with the clones below each (mirror_below). */
static void clones_until(struct ds *s, const struct da_options *o, uint64_t main, double share,
			 bool mirror)
{
	if (s->ncoll && o->allow_clone && !s->oom) {
		phase_until(s, main, share);
		clone_crowded(s, mirror);
		progress(s, "clones");
	}
}

/* Annealing (phase 1) until `share` of `main`. */
static void anneal_until(struct ds *s, const struct da_options *o, uint64_t main, double share)
{
	if (o->anneal && s->ncoll && !s->oom) {
		phase_until(s, main, share);
		anneal(s, s->budget - s->work);
		progress(s, "annealing");
	}
}

/* The search (disambig.h section 5, phases 0-6) on s; returns the greedy
 * sweeps, *exhausted when the work budget ran out. */
static uint32_t search(struct ds *s, const struct da_options *o, bool *exhausted)
{
	/* a tenth of the budget is kept for the hot CIDs at the end */
	uint64_t budget = s->budget, main = budget - budget / 10;
	uint32_t sweeps = 0;
	/* clones for crowded functions first: a clone is a namespace of CIDs
	 * of its own, which no amount of padding gives a function reached by
	 * more paths than it has heights */
	clones_until(s, o, main, 0.05, false);
	/* then the construction, up to a quarter of the budget (the clones'
	 * share included): the search below starts from heights built like a
	 * perfect hash.  The construction makes more precise per node moved
	 * than the greedy sweeps after it, and it is cut by its share on the
	 * real maps (a tenth, with the clones' twentieth in it: 90.6% of the
	 * reducible paths pooled over three seeds, a fifth 92.7%; a quarter
	 * against a fifth, twelve seeds, % of paths: sqlite3 96.95 against
	 * 96.37, python3 95.28 against 95.15; three tenths cost python3 0.5
	 * points); on the synthetic sets the shares are within 0.2 points */
	if (s->ncoll) {
		phase_until(s, main, 0.25);
		construct(s);
		progress(s, "construction");
	}
	/* then annealing from the construction, up to half the budget: its
	 * moves take any amount and any variable that separates a pair, the
	 * large ones too, where a greedy sweep tries the cheapest variables
	 * smallest amount first, each amount a move of everything below them
	 * (python3.11: 16 of them for a variable reaching 41k nodes).  In its
	 * place the greedy sweeps of paddings reached 88.2% of the synthetic
	 * sets' paths and 92.2% of the real maps' reducible ones, annealing
	 * 89.9% and 92.9% (docs/bench-disambig.md, session 11).
	 * With cloning, a pass of clones for crowded functions follows the
	 * construction and each half of the annealing: each pass copies the
	 * routes that are crowded then one level further down (a chain), and
	 * the moves between passes change which are (real maps, pooled over
	 * three seeds: 94.05% of reducible paths with the passes at 0.05 and
	 * 0.85 only, 95.14% with these three; synthetic sets 91.84% ->
	 * 94.61%; docs/bench-disambig.md, session 13) */
	if (o->allow_clone) {
		/* from here on a clone that gains nothing alone is tried with its
		 * siblings (clone_group).  Before the construction it makes things
		 * worse: real maps, six seeds pooled, 96.24% of reducible paths
		 * with siblings in every pass, 96.99% from here, 96.50% never;
		 * sqlite3 95.5% -> 96.0%, where sqlite3Malloc calls each of its
		 * helpers from two places (docs/bench-disambig.md, session 18) */
		s->sibling_clones = true;
		clones_until(s, o, main, 0.3, false);
		anneal_until(s, o, main, 0.35);
		clones_until(s, o, main, 0.4, true);
		anneal_until(s, o, main, 0.5);
		clones_until(s, o, main, 0.55, true);
	} else {
		anneal_until(s, o, main, 0.5);
	}
	/* then paddings only: they cost no code and never split a path's
	 * callsite variants over several CIDs, as wrapping one callsite does */
	s->pads_only = true;
	if (s->ncoll && !s->oom) {
		phase_until(s, main, 0.6);      /* spread moves, then single */
		if (s->work < s->budget)
			spread(s, s->budget - s->work);
		progress(s, "spread");
		phase_until(s, main, 0.7);
		sweeps += greedy(s);
		progress(s, "greedy, paddings");
	}
	s->pads_only = false;
	/* clones where the paddings moved paths into new collisions (six
	 * seeds: synthetic sets 97.77% -> 97.88%, dealII and perlbench up on
	 * each of three seeds; real maps 97.96% -> 97.97%) */
	clones_until(s, o, main, 0.72, true);
	if (s->ncoll && !s->oom) {
		phase_until(s, main, 0.8);      /* then every kind of move */
		sweeps += greedy(s);
	}
	/* and again where the search has moved paths into new collisions */
	clones_until(s, o, main, 0.85, true);
	/* then the sweeps again.  A second annealing here, before them, made
	 * little precise for its work (seed 1: dealII 26 paths for 3.8M node
	 * moves, python3 24 for 3.7M, where the sweeps after it made 786 and
	 * 209 for 2M); its share given to the sweeps, four searches, six
	 * seeds: dealII 98.94% -> 99.02% of reducible paths, perlbench 99.05%
	 * -> 99.10%, sjeng 97.72% -> 97.63%, the real maps the same
	 * (docs/bench-disambig.md, session 28) */
	if (s->ncoll && !s->oom) {
		phase_until(s, main, 0.95);
		sweeps += greedy(s);
	}
	/* hot CIDs still colliding: their heavy paths isolated, in a share of
	 * their own, so that whether they are solved does not hinge on where
	 * the other phases' shares end (dealII: 92.6% or 62.7% of the weight
	 * precise for a 3% smaller budget) */
	if (s->ncoll && !s->oom) {
		s->hot_only = true;
		phase_until(s, budget, 1.0);
		sweeps += greedy(s);
		progress(s, "hot CIDs");
		/* what the hot CIDs left of their share goes to one more greedy
		 * sweep with every kind of move (real maps, three seeds: 95.14% ->
		 * 95.50% of reducible paths; most maps' weight is all but
		 * precise by now, and python3 left 7M node moves unspent) */
		s->hot_only = false;
		if (s->ncoll && !s->oom && s->work < s->budget) {
			sweeps += greedy(s);
			progress(s, "rest");
		}
	}
	if (o->verbose)
		fprintf(stderr, "disambig: %llu node moves, %llu rescans, %llu evaluations\n",
			(unsigned long long)s->work, (unsigned long long)s->rescans,
			(unsigned long long)s->evals);
	*exhausted = s->out_of_budget;
	phase_end(s);
	s->out_of_budget = false;
	s->budget = UINT64_MAX;
	if (!s->oom) {
		shrink(s);
		progress(s, "shrink");
	}
	if (o->allow_clone && !s->oom) {
		prune_clones(s);
		progress(s, "prune");
	}
	return sweeps;
}

/* One search (and its frugal rerun): the state it ends in, or NULL and one
 * line. */
static struct ds *solve_one(const struct da_problem *p, const struct da_options *o,
			    uint32_t *sweeps, bool *exhausted, char *err, size_t errlen)
{
	struct ds *s = ds_new(p, o, err, errlen);
	if (!s)
		return NULL;
	uint64_t budget = s->budget;
	*sweeps = search(s, o, exhausted);
	/* the construction spends stack (at a higher price than the search) and
	 * commits to amounts before the search shows whether they are needed,
	 * which shrink cannot undo (each holds paths apart): where it did and
	 * the search was cheap (a fifth of the budget), the search from a
	 * construction that spends none runs too, and the plan that scores
	 * better is kept (astar: 100% of paths at growth 1.000, not 1.24) */
	if (s->cons_spent && s->work < budget / 5 && !s->oom) {
		struct ds *t = ds_new(p, o, err, errlen);
		if (!t) {
			ds_free(s);
			return NULL;
		}
		t->t0 = s->t0;
		t->frugal = true;
		bool ex2;
		uint32_t sw2 = search(t, o, &ex2);
		uint64_t work = s->work + t->work, evals = s->evals + t->evals;
		if (t->oom || score(t) > score(s) + 1e-9) {
			struct ds *u = s;
			s = t;
			t = u;
			*sweeps = sw2;
			*exhausted = ex2;
		}
		s->work = work;
		s->evals = evals;
		ds_free(t);
	}
	if (s->oom) {
		ds_free(s);
		errmsg(err, errlen, "out of memory while solving");
		return NULL;
	}
	return s;
}

uint64_t da_search_seed(uint64_t seed, uint32_t j)
{
	/* the first search is the seed's own: more searches never give a
	 * plan that scores worse.  The others' seeds are no other seed's
	 * (seed + j would make --seed 2's second search --seed 1's third) */
	return j ? da_mix64(seed * 0x9e3779b97f4a7c15ULL + j) : seed;
}

/* One of da_solve's searches, run by a thread of its own. */
struct search_job {
	const struct da_problem *p;
	struct da_options o;
	struct ds *s;               /* the state it ends in; NULL: err says why */
	uint32_t sweeps;
	bool exhausted;
	char err[256];
};

static void *search_job_run(void *arg)
{
	struct search_job *J = arg;
	J->s = solve_one(J->p, &J->o, &J->sweeps, &J->exhausted, J->err, sizeof(J->err));
	return NULL;
}

/* What the searches leave: the state of the best so far (the earliest on a
 * tie), its search, and the work of all. */
struct search_pick {
	struct ds *best;
	uint32_t j, sweeps;
	bool exhausted;
	uint64_t work, evals;
	int rc;                     /* -1 once a search failed (err says why) */
	uint32_t n;                 /* searches in all */
	struct timespec t0;         /* da_solve's start */
};

/* Tell the caller (da_options.on_search) that search j ended in state s. */
static void search_done(const struct search_pick *P, const struct da_options *o, uint32_t j,
			const struct ds *s)
{
	if (!o->on_search)
		return;
	struct da_search_done d = {
		.search = j, .searches = P->n, .precise_paths = (uint64_t)s->nprecise,
		.best = P->j, .best_precise_paths = (uint64_t)P->best->nprecise,
		.paths = s->nclasses, .seconds = seconds_since(&P->t0),
	};
	o->on_search(o->on_search_ctx, &d);
}

/* Weigh search j's end state against the best so far; free the loser, so
 * that no more states than run at once, and the best, are alive. */
static void pick_search(struct search_pick *P, struct search_job *J, uint32_t j, char *err,
			size_t errlen)
{
	struct ds *s = J->s;
	J->s = NULL;
	if (!s) {
		if (!P->rc)
			P->rc = errmsg(err, errlen, "%s", J->err);
		return;
	}
	P->work += s->work;
	P->evals += s->evals;
	if (J->o.verbose)
		fprintf(stderr, "search %u (seed %llu): score %.2f, %lld paths precise\n", j,
			(unsigned long long)J->o.seed, score(s), (long long)s->nprecise);
	bool better = !P->best || score(s) > score(P->best) + 1e-9;
	if (better) {
		ds_free(P->best);
		P->best = s;
		P->j = j;
		P->sweeps = J->sweeps;
		P->exhausted = J->exhausted;
	}
	search_done(P, &J->o, j, s);
	if (!better)
		ds_free(s);
}

/* Run the n searches of J, `threads` at a time, and weigh them in order:
 * the plan kept does not depend on how many run at once. */
static void run_searches(struct search_job *J, uint32_t n, uint32_t threads,
			 struct search_pick *P, char *err, size_t errlen)
{
	for (uint32_t j0 = 0; j0 < n; j0 += threads) {
		pthread_t tid[DA_MAX_SEARCHES];
		bool started[DA_MAX_SEARCHES] = {false};
		uint32_t m = n - j0 < threads ? n - j0 : threads;
		/* the first of a round runs here; a thread that cannot start
		 * runs here too */
		for (uint32_t i = 1; i < m; i++)
			started[i] = pthread_create(&tid[i], NULL, search_job_run, &J[j0 + i]) == 0;
		search_job_run(&J[j0]);
		for (uint32_t i = 1; i < m; i++) {
			if (started[i])
				pthread_join(tid[i], NULL);
			else
				search_job_run(&J[j0 + i]);
		}
		for (uint32_t i = 0; i < m; i++)
			pick_search(P, &J[j0 + i], j0 + i, err, errlen);
	}
}

/* What the prices are after `rounds` top-up rounds, as a share of the
 * options'. */
static double topup_scale(uint32_t rounds)
{
	return pow(DA_TOPUP_FACTOR, rounds);
}

/* Every price of s lowered by f, the stack's too (its penalty rescaled root
 * by root): what a path made precise is worth rises against all costs
 * alike, and the stack cap still binds. */
static void lower_prices(struct ds *s, double f)
{
	s->o.code_weight *= f;
	s->o.hot_code_weight *= f;
	s->o.dispatch_weight *= f;
	s->o.wrap_weight *= f;
	s->o.stack_weight *= f;
	s->dispk *= f;
	s->runk *= f;
	s->pen *= f;
	for (uint32_t i = 0; i < s->nroots; i++)
		s->rpen[i] *= f;
}

/* Whether the plan of s leaves fewer than its target of the reducible paths
 * precise, with its counts in d; -1 and one line when out of memory. */
static int below_target(struct ds *s, struct da_round_done *d, char *err, size_t errlen)
{
	struct da_result r;
	if (ds_result(s, &s->o, &r, err, errlen) < 0)
		return -1;
	d->precise_paths = r.after.precise_paths;
	d->reducible_paths = da_reducible_paths(&r);
	da_result_free(&r);
	return (double)d->precise_paths < s->o.precision_target * (double)d->reducible_paths;
}

/* The top-up (disambig.h section 5) from the kept plan s, at s->o's prices,
 * which it lowers; t0: da_solve's start.  Returns the rounds run, or -1 and
 * one line. */
static int top_up(struct ds *s, uint64_t budget, const struct timespec *t0, char *err,
		  size_t errlen)
{
	const struct da_options *o = &s->o;
	struct da_round_done d = {.rounds = DA_TOPUP_ROUNDS};
	int below = below_target(s, &d, err, errlen);
	while (below > 0 && d.round < DA_TOPUP_ROUNDS) {
		lower_prices(s, DA_TOPUP_FACTOR);
		d.round++;
		s->out_of_budget = false;
		s->budget = s->work + budget / 4;
		for (int pass = 0; pass < 2 && s->ncoll && !s->oom; pass++) {
			if (o->allow_clone)
				clone_crowded(s, true);
			greedy(s);
		}
		s->out_of_budget = false;
		s->budget = UINT64_MAX;
		if (!s->oom)
			shrink(s);
		if (o->allow_clone && !s->oom)
			prune_clones(s);
		if (s->oom)
			return errmsg(err, errlen, "out of memory while solving");
		progress(s, "top-up");
		if (d.round == DA_TOPUP_ROUNDS && !o->on_round)
			break;          /* the last: nothing to weigh it for */
		below = below_target(s, &d, err, errlen);
		if (below >= 0 && o->on_round) {
			d.price_scale = topup_scale(d.round);
			d.seconds = seconds_since(t0);
			o->on_round(o->on_search_ctx, &d);
		}
	}
	return below < 0 ? -1 : (int)d.round;
}

int da_solve(const struct da_problem *p, const struct da_options *o, struct da_result *r,
	     char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint32_t n = o->searches ? o->searches : DA_DEFAULT_SEARCHES;
	if (n > DA_MAX_SEARCHES)
		return errmsg(err, errlen, "at most %d searches (got %u)", DA_MAX_SEARCHES, n);
	uint32_t threads = o->threads ? o->threads : usable_cpus();
	if (threads > n)
		threads = n;
	struct search_job J[DA_MAX_SEARCHES];
	for (uint32_t j = 0; j < n; j++) {
		J[j] = (struct search_job){.p = p, .o = *o};
		J[j].o.seed = da_search_seed(o->seed, j);
	}
	struct search_pick P = {.n = n, .t0 = t0};
	run_searches(J, n, threads, &P, err, errlen);
	int rc = P.rc, rounds = 0;
	if (!rc && o->precision_target > 0) {
		uint64_t work = P.best->work, evals = P.best->evals;
		rounds = top_up(P.best, o->budget ? o->budget : DA_DEFAULT_BUDGET, &t0, err, errlen);
		rc = rounds < 0 ? -1 : 0;
		P.work += P.best->work - work;
		P.evals += P.best->evals - evals;
	}
	if (!rc) {
		P.best->work = P.work;
		P.best->evals = P.evals;
		/* at the prices the plan was made at, which the top-up lowered
		 * (the kept search's own options: its seed is unused here) */
		rc = ds_result(P.best, &P.best->o, r, err, errlen);
	}
	if (!rc) {
		r->stats.sweeps = P.sweeps;
		r->stats.mirrors = P.best->mirrors;
		r->stats.budget_exhausted = P.exhausted;
		r->stats.objective = score(P.best);
		r->stats.hot_bytes = P.best->hot_bytes - P.best->hot_base;
		double esum = (double)P.best->esum;
		r->stats.run_share = esum ? (double)P.best->run_weight / esum : 0;
		r->stats.copy_share = esum ? (double)P.best->copy_weight /
						     DA_COPY_RUN_BYTES / esum : 0;
		r->stats.bind_share = esum ? (double)P.best->bind_weight / esum : 0;
		r->stats.xcall_share = esum ? (double)P.best->xcall_weight / esum : 0;
		r->stats.searches = n;
		r->stats.best_search = P.j;
		r->stats.topup_rounds = (uint32_t)rounds;
		r->stats.price_scale = topup_scale((uint32_t)rounds);
		r->stats.seconds = seconds_since(&t0);
	}
	if (P.best)
		ds_free(P.best);
	return rc;
}

/* ---------------------------------------------------------------- state API */

uint32_t ds_clone(struct ds *s, uint32_t func, uint32_t callsite)
{
	uint32_t k = clone_create(s, func, s->nf + callsite, DA_NONE);
	stamp_next(s);
	if (k != DA_NONE)
		mirror_below(s, k, DA_NONE, s->work + s->attempt_work / 4);
	return k;
}

void ds_prune_clones(struct ds *s)
{
	prune_clones(s);
}

bool ds_set_pad(struct ds *s, uint32_t func, uint32_t bytes)
{
	set_var(s, func, bytes);
	s->evals++;
	return !over_cap(s);
}

uint32_t ds_pad(const struct ds *s, uint32_t func)
{
	return s->vars[func].value;
}

uint64_t ds_cids(const struct ds *s) { return s->ncids; }
uint64_t ds_unique_cids(const struct ds *s) { return s->nuniq; }
uint64_t ds_precise_paths(const struct ds *s) { return (uint64_t)s->nprecise; }
uint64_t ds_work(const struct ds *s) { return s->work; }

bool ds_random_collision(struct ds *s, uint64_t *rng, uint32_t *a, uint32_t *b)
{
	if (!s->ncoll)
		return false;
	uint32_t bk = s->coll[da_rand_below(rng, s->ncoll)];
	struct bucket *B = &s->B[bk];
	/* two distinct classes, chosen at random among the entries */
	uint32_t i = da_rand_below(rng, B->nent), j = da_rand_below(rng, B->nent - 1);
	if (j >= i)
		j++;
	uint32_t xa = entry_rep(s, bk, ent(B, i)), xb = entry_rep(s, bk, ent(B, j));
	*a = s->node[xa];
	*b = s->node[xb];
	return true;
}

bool ds_same_cid(const struct ds *s, uint32_t a, uint32_t b)
{
	uint32_t x = s->pos[a], y = s->pos[b];
	return s->inst[x] == s->inst[y] && s->h[x] == s->h[y];
}

uint32_t ds_differing_funcs(struct ds *s, uint32_t a, uint32_t b, uint32_t *out, uint32_t max)
{
	/* non-last functions of both whole paths; order: a's root first, then b's */
	uint32_t n = 0;
	for (int side = 0; side < 2; side++) {
		uint32_t x = s->pos[side ? b : a];
		for (x = s->parent[x]; x != DA_NONE; x = s->parent[x])
			s->cnt[s->func[x]] += side ? -1 : 1;
	}
	for (int side = 0; side < 2; side++) {
		uint32_t chain[4096], nch = 0;
		uint32_t x = s->pos[side ? b : a];
		for (x = s->parent[x]; x != DA_NONE && nch < 4096; x = s->parent[x])
			chain[nch++] = x;
		for (uint32_t i = nch; i-- > 0;) {
			uint32_t f = s->func[chain[i]];
			if (s->cnt[f] && n < max) {
				out[n++] = f;
				s->cnt[f] = 0;  /* listed once */
			}
		}
	}
	for (int side = 0; side < 2; side++) {
		uint32_t x = s->pos[side ? b : a];
		for (x = s->parent[x]; x != DA_NONE; x = s->parent[x])
			s->cnt[s->func[x]] = 0;
	}
	return n;
}
