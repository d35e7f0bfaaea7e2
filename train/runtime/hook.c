/* The hot path: icpp_enter and the per-thread shadow stacks.
 * Built with -mgeneral-regs-only -ffreestanding: nothing here may call out of
 * this file except through rt_syscall6 (see runtime.h). */
#include "train/runtime/runtime.h"

#include "pathmap/thread_base.h"

#include <sys/mman.h>
#include <sys/syscall.h>

static void rt_zero(void *p, size_t n)
{
	volatile char *c = p;    /* volatile: keep gcc from emitting a memset call */
	while (n--)
		*c++ = 0;
}

/* uthash's key compare and hash for struct cct_key, four 8-byte words (the
 * only key type here): word-wise, and no call out of the hot path. */
static int rt_cmp(const void *a, const void *b, size_t n)
{
	const uint64_t *x = a, *y = b;
	for (n /= 8; n; n--, x++, y++)
		if (*x != *y)
			return 1;
	return 0;
}

static uint32_t rt_hash(const void *key, size_t n)
{
	const uint64_t *w = key;
	uint64_t h = 0;
	for (n /= 8; n; n--, w++)
		h = (h ^ *w) * 0x9e3779b97f4a7c15ull;
	return (uint32_t)(h >> 32);
}

static void rt_fatal(const char *msg)
{
	/* Only reachable if the arena runs out; say so and stop the target
	 * rather than record wrong paths. */
	rt_syscall6(SYS_write, 2, (long)"icpp: training runtime out of memory\n", 37, 0, 0, 0);
	rt_syscall6(SYS_exit_group, 70, 0, 0, 0, 0, 0);
	(void)msg;
	__builtin_unreachable();
}

#define uthash_malloc(sz) rt_alloc(sz)
#define uthash_free(ptr, sz) ((void)0)
#define uthash_bzero(a, n) rt_zero(a, n)
#define uthash_fatal(msg) rt_fatal(msg)
#define HASH_KEYCMP(a, b, n) rt_cmp(a, b, n)
#define HASH_FUNCTION(keyptr, keylen, hashv) ((hashv) = rt_hash(keyptr, keylen))
#include <uthash.h>

struct runtime rt;
uint32_t rt_xsave_size;

/* Freshly mapped anonymous memory is zero and the arena never reuses it. */
void *rt_alloc(size_t size)
{
	size = (size + 15) & ~(size_t)15;
	char *p = __atomic_fetch_add(&rt.arena_next, size, __ATOMIC_RELAXED);
	if (p + size > rt.arena_end)
		rt_fatal("arena");
	return p;
}

/* ---- threads ---- */

#define MAX_DEPTH (1u << 20)
#define THREAD_SLOTS (1u << 16)

struct frame {
	uintptr_t cfa;
	uint32_t node;
	uint16_t unstable;       /* UNSTABLE_*: heights below it are not reproducible */
	uint16_t fragment;       /* a .cold fragment's frame (FN_FRAGMENT) */
};

#define UNSTABLE_SIGNAL 1        /* a signal handler: where the kernel put the signal
				  * frame depends on the environment's size */
#define UNSTABLE_REALIGN 2       /* realigned the stack: heights below depend on the
				  * base's alignment */

struct cct_key {                 /* four 8-byte words, no padding (rt_hash, rt_cmp) */
	const struct fn_meta *fn;
	uintptr_t ra;
	int64_t height;
	uint32_t parent;
	uint32_t group;          /* 1: the key of a recursion's sibling group (ra 0) */
};

_Static_assert(sizeof(struct cct_key) == 32, "rt_hash and rt_cmp read whole words");

/* node counts the entries of the key; frame is the node the frame's callees
 * hang from: node itself, or for a call that joins a recursion's sibling
 * group (below) the group's first node. */
struct cct_entry {
	struct cct_key key;
	uint32_t node, frame;
	UT_hash_handle hh;
};

/* A direct-mapped memo in front of the thread's uthash table: most entries
 * repeat a recent (parent, function, callsite, height). */
#define MEMO_SLOTS (1u << 14)
struct memo {
	struct cct_key key;
	uint32_t node;           /* + 1; 0: empty */
	uint32_t frame;
};

struct thread {
	int64_t base;
	uint32_t depth;
	uint32_t unstable;       /* UNSTABLE_* of the one unstable frame on the
				  * stack (nothing is pushed above it), or 0 */
	volatile uint32_t busy;  /* the runtime is running on this thread */
	struct frame *stack;
	struct cct_entry *cct;   /* this thread's calling-context tree */
	struct memo *memo;
};

/* fs base -> thread.  uthash cannot be read while another thread inserts,
 * so this is a fixed open-addressing array claimed with compare-and-swap;
 * only the thread that owns an fs base ever creates its entry. */
static struct {
	uintptr_t fs;
	struct thread *thread;
} threads[THREAD_SLOTS];

static uintptr_t fs_base(void)
{
	uintptr_t fs;
	__asm__("mov %%fs:0, %0" : "=r"(fs));
	return fs;
}

/* pathmap/thread_base.h: start_stack on the initial stack, else fs base. */
static int64_t thread_base(uintptr_t fs, uintptr_t sp)
{
	return icpp_on_initial_stack((uint64_t)rt.start_stack, sp, rt.stack_limit) ? rt.start_stack
										 : (int64_t)fs;
}

static struct thread *thread_new(uintptr_t fs, uintptr_t sp)
{
	struct thread *t = rt_alloc(sizeof(*t));
	t->stack = rt_alloc(MAX_DEPTH * sizeof(struct frame));
	t->memo = rt_alloc(MEMO_SLOTS * sizeof(struct memo));
	t->base = thread_base(fs, sp);
	__atomic_fetch_add(&rt.hdr->threads, 1, __ATOMIC_RELAXED);
	return t;
}

static struct thread *thread_get(uintptr_t sp)
{
	uintptr_t fs = fs_base();
	uint32_t i = (uint32_t)((fs * 0x9e3779b97f4a7c15ull) >> 48) & (THREAD_SLOTS - 1);
	for (uint32_t probes = 0; probes < THREAD_SLOTS; probes++, i = (i + 1) & (THREAD_SLOTS - 1)) {
		uintptr_t k = __atomic_load_n(&threads[i].fs, __ATOMIC_ACQUIRE);
		if (k == fs)
			return threads[i].thread;
		if (k)
			continue;
		uintptr_t expected = 0;
		if (__atomic_compare_exchange_n(&threads[i].fs, &expected, fs, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			struct thread *t = thread_new(fs, sp);
			__atomic_store_n(&threads[i].thread, t, __ATOMIC_RELEASE);
			return t;
		}
		if (expected == fs)
			return threads[i].thread;
	}
	return NULL;
}

int rt_enter_runtime(void)
{
	struct thread *t = thread_get((uintptr_t)__builtin_frame_address(0));
	if (!t || t->busy)
		return 1;
	t->busy = 1;
	__asm__ volatile("" ::: "memory");
	return 0;
}

void rt_leave_runtime(void)
{
	struct thread *t = thread_get((uintptr_t)__builtin_frame_address(0));
	__asm__ volatile("" ::: "memory");
	if (t)
		t->busy = 0;
}

/* The base of a thread never changes under the SP rule, but a process may
 * have changed its stack limit since the thread state was made: recheck in
 * a fork child, whose states were inherited. */
void rt_before_fork(void)
{
	rt.counts_shared = 1;
}

void rt_after_fork(void)
{
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	struct thread *t = thread_get(sp);
	if (!t)
		return;
	int64_t base = thread_base(fs_base(), sp);
	if (base != t->base) {
		t->base = base;
		t->depth = 0;
		t->unstable = 0;
	}
}

/* ---- the calling-context tree ---- */

static uint32_t node_new(const struct cct_key *k, int64_t rbp_off)
{
	uint64_t i = __atomic_fetch_add(&rt.hdr->nnodes, 1, __ATOMIC_RELAXED);
	if (i >= rt.hdr->max_nodes)
		return REC_NONE;
	struct rec_node *n = &rt.nodes[i];
	n->parent = k->parent;
	n->module = k->fn->module;
	n->func = k->fn->vaddr;
	n->ra = k->ra;
	n->height = k->height;
	n->rbp_off = rbp_off;
	__atomic_store_n(&n->valid, REC_NODE_VALID, __ATOMIC_RELEASE);
	return (uint32_t)i;
}

static int key_eq(const struct cct_key *a, const struct cct_key *b)
{
	return a->fn == b->fn && a->ra == b->ra && a->height == b->height && a->parent == b->parent;
}

static struct cct_entry *cct_add(struct thread *t, const struct cct_key *k, uint32_t node,
				 uint32_t frame)
{
	struct cct_entry *e = rt_alloc(sizeof(*e));
	e->key = *k;
	e->node = node;
	e->frame = frame;
	HASH_ADD(hh, t->cct, key, sizeof(e->key), e);
	return e;
}

/* A recursion's sibling group: the calls a function makes of itself from
 * several callsites at one height (mergesort's two halves, glibc's
 * msort_with_tmp) would give the callsite-sensitive tree a node per call of
 * the recursion, 2^depth paths of one function sequence.  The frames of such
 * a group share one subtree, the first node's: every other callsite gets a
 * node of its own (its entries), whose callees are recorded under the first.
 * Heights are exact (the frames have one CFA); which of the callsites led to
 * a callee is not kept, and disambig/ never moves those callsites apart
 * (docs/training.md, "Recursion through several callsites"). */
static int self_call(const struct cct_key *k)
{
	if (k->parent == REC_NONE)
		return 0;
	const struct rec_node *p = &rt.nodes[k->parent];
	return p->func == k->fn->vaddr && p->module == k->fn->module;
}

/* A new entry for k: its node, and the node its callees hang from. */
static struct cct_entry *cct_new(struct thread *t, const struct cct_key *k, uintptr_t rbp)
{
	struct cct_entry *g = NULL;
	struct cct_key gk = {.fn = k->fn, .height = k->height, .parent = k->parent, .group = 1};
	int grouped = self_call(k);
	if (grouped)
		HASH_FIND(hh, t->cct, &gk, sizeof(gk), g);
	uint32_t node = node_new(k, t->base - (int64_t)rbp);
	if (node == REC_NONE)
		return NULL;
	if (grouped && !g)
		g = cct_add(t, &gk, node, node);
	return cct_add(t, k, node, g ? g->frame : node);
}

/* The entry of k, created when new: *frame gets the node the frame's
 * callees hang from; returns the node that counts the entry. */
static uint32_t cct_child(struct thread *t, const struct cct_key *k, uintptr_t rbp,
			  uint32_t *frame)
{
	uint64_t h = ((uintptr_t)k->fn ^ k->ra ^ ((uint64_t)k->parent << 32) ^ (uint64_t)k->height) *
		     0x9e3779b97f4a7c15ull;
	struct memo *m = &t->memo[h >> (64 - 14)];
	if (m->node && key_eq(&m->key, k)) {
		*frame = m->frame;
		return m->node - 1;
	}
	struct cct_entry *e;
	HASH_FIND(hh, t->cct, k, sizeof(*k), e);
	if (!e && !(e = cct_new(t, k, rbp)))
		return REC_NONE;
	m->key = *k;
	m->node = e->node + 1;
	m->frame = e->frame;
	*frame = e->frame;
	return e->node;
}

static void count(uint64_t *counter)
{
	__atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
}

/* method.md, "Training without exit hooks": frames whose CFA is at or below
 * the new entry's CFA have returned (or were left by a tail call, longjmp or
 * an exception); pop them, then push the new frame.  A .cold fragment is
 * jumped to inside its owner's activation, whose frame has the fragment's
 * CFA: that frame stays (the fragment's frame goes under it), and only a
 * fragment frame an earlier jump left at that CFA goes. */
static int is_sigtramp(uintptr_t ra)
{
	uint32_t n = __atomic_load_n(&rt.nsigtramps, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++)
		if (ra - 1 - rt.sigtramps[i].lo < rt.sigtramps[i].hi - rt.sigtramps[i].lo)
			return 1;
	return 0;
}

void icpp_enter(const struct fn_meta *fn, uintptr_t sp, uintptr_t rbp)
{
	struct thread *t = thread_get(sp);
	if (!t || t->busy) {
		count(&rt.hdr->nested);
		return;
	}
	t->busy = 1;
	__asm__ volatile("" ::: "memory");

	uintptr_t cfa = (fn->flags & FN_CFA_RBP ? rbp : sp) + fn->cfa_offset;
	struct cct_key k = {.fn = fn, .height = t->base - (int64_t)cfa};
	if (k.height < REC_HEIGHT_MIN || k.height > REC_HEIGHT_MAX) {
		count(&rt.hdr->off_stack);
		goto out;
	}
	k.ra = *(const uintptr_t *)(cfa - 8);    /* on this thread's stack: checked above */
	uint32_t d = t->depth;
	uint16_t fragment = fn->flags & FN_FRAGMENT ? 1 : 0;
	while (d && (t->stack[d - 1].cfa < cfa ||
		     (t->stack[d - 1].cfa == cfa && (!fragment || t->stack[d - 1].fragment))))
		if (t->stack[--d].unstable)
			t->unstable = 0;
	if (!t->unstable && is_sigtramp(k.ra) && d < MAX_DEPTH) {
		/* A signal handler: keep only its frame, to know when it has
		 * returned. */
		t->stack[d++] = (struct frame){.cfa = cfa, .node = REC_NONE, .unstable = UNSTABLE_SIGNAL};
		t->unstable = UNSTABLE_SIGNAL;
	}
	if (t->unstable) {
		count(t->unstable == UNSTABLE_SIGNAL ? &rt.hdr->in_signal : &rt.hdr->in_realign);
		t->depth = d;
		goto out;
	}
	k.parent = d ? t->stack[d - 1].node : REC_NONE;
	uint32_t frame;
	uint32_t node = cct_child(t, &k, rbp, &frame);
	if (node == REC_NONE) {
		count(&rt.hdr->nodes_full);
		t->depth = d;
		goto out;
	}
	/* Once the process has forked, parent and child count on the same
	 * shared nodes: then (only) the increment must be atomic. */
	if (rt.counts_shared)
		__atomic_fetch_add(&rt.nodes[node].entries, 1, __ATOMIC_RELAXED);
	else
		rt.nodes[node].entries++;
	if (d == MAX_DEPTH) {
		count(&rt.hdr->too_deep);
	} else {
		uint16_t unstable = fn->flags & FN_REALIGN ? UNSTABLE_REALIGN : 0;
		t->stack[d++] = (struct frame){.cfa = cfa, .node = frame, .unstable = unstable,
					       .fragment = fragment};
		t->unstable = unstable;
	}
	t->depth = d;
	if (fn->flags & FN_RESCAN)
		icpp_rescan_saving_fpu();
out:
	__asm__ volatile("" ::: "memory");
	t->busy = 0;
}
