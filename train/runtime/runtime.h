/* The training runtime's internals (libicpp-train.so, preloaded into the
 * target).  See train/protocol.h for what it exchanges with `icpp train`.
 *
 * Hot path (hook.c, built with -mgeneral-regs-only and calling nothing
 * outside this library): every hooked function entry jumps to a per-function
 * stub, which calls icpp_common (stub.S), which saves the registers and calls
 * icpp_enter(fn, entry SP, entry rbp).  icpp_enter applies method.md's entry-only rule on
 * the calling thread's shadow stack and counts the entry on the node of the
 * calling-context tree for (parent, function, callsite, height).
 *
 * Per-thread state is found from the fs base, not through __thread: TLS in a
 * preloaded library would change every thread's stack layout.  Everything
 * else (module discovery, patching, talking to the parent) runs only at
 * start-up and after dlopen, with the thread marked busy so that hooked code
 * it calls is not recorded.
 */
#ifndef ICPP_TRAIN_RUNTIME_H
#define ICPP_TRAIN_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#include "train/protocol.h"

#define RT_HIDDEN __attribute__((visibility("hidden")))

/* What a hooked function's stub hands to icpp_enter. */
#define FN_RESCAN 1u             /* ld.so's r_brk: the module list may have changed */
#define FN_REALIGN 2u            /* SITE_REALIGN */
#define FN_CFA_RBP 4u            /* SITE_CFA_RBP */
#define FN_FRAGMENT 8u           /* SITE_FRAGMENT */
struct fn_meta {
	uint32_t module;         /* slot in the record file */
	uint16_t flags;          /* FN_* */
	uint16_t cfa_offset;     /* CFA = entry SP (or rbp) + this (train_site) */
	uint64_t vaddr;          /* ELF vaddr of the function */
};

struct runtime {
	struct rec_header *hdr;
	struct rec_module *modules;
	struct rec_node *nodes;
	int counts_shared;       /* forked: another process counts on our nodes */
	int64_t start_stack;
	char *arena, *arena_end; /* private bump allocator (atomic) */
	char *arena_next;
	uint64_t stack_limit;    /* RLIMIT_STACK (pathmap/thread_base.h) */
	uint32_t nsigtramps;     /* signal trampolines (protocol.h train_reply) */
	struct { uint64_t lo, hi; } sigtramps[4];
};
extern struct runtime rt RT_HIDDEN;
extern uint32_t rt_xsave_size RT_HIDDEN;  /* bytes icpp_rescan_saving_fpu reserves */

/* hook.c */
void icpp_enter(const struct fn_meta *fn, uintptr_t sp, uintptr_t rbp) RT_HIDDEN;
void *rt_alloc(size_t size) RT_HIDDEN;          /* zeroed, never freed */
/* The calling thread's state; marks it busy (returns 0) or says it already
 * was (returns 1).  rt_leave clears busy. */
int rt_enter_runtime(void) RT_HIDDEN;
void rt_leave_runtime(void) RT_HIDDEN;
void rt_before_fork(void) RT_HIDDEN;
void rt_after_fork(void) RT_HIDDEN;

/* stub.S */
void icpp_common(void) RT_HIDDEN;
void icpp_rescan_saving_fpu(void) RT_HIDDEN;

/* runtime.c */
void rt_rescan(void) RT_HIDDEN;

/* raw system calls: the hot path must not enter (hooked) libc */
long rt_syscall6(long nr, long a, long b, long c, long d, long e, long f) RT_HIDDEN;

#endif
