/* sample.h: the contract between the BPF sampler (sample.bpf.c) and its user
 * side (collector/bpf_backend.c), in the libbpf-tools manner (x.bpf.c + x.c +
 * x.h).  Included by both; only fixed-width types, no kernel or libc headers.
 *
 * Per sample the program reads the user IP, SP and BP of the interrupted
 * thread and the thread's base (shared/design/method.md):
 *   - main thread (pid == tgid): mm->start_stack,
 *   - other threads: task->thread.fsbase (glibc's struct pthread).
 * It keeps only what rebuilds the CID later: the IP and the offsets of SP and
 * BP below the base.  Report computes, with the CFI of the IP,
 *   CFA = SP + k  ->  height = base - CFA = sp_off - k
 *   CFA = BP + 16 ->  height = bp_off - 16
 * Samples are counted in a hash map keyed by struct icpp_key (struct
 * icpp_vkey with --validate); no stack walk, no per-sample wake-up.
 */
#ifndef ICPP_BPF_SAMPLE_H
#define ICPP_BPF_SAMPLE_H

#ifndef __VMLINUX_H__
#include <linux/types.h>
#endif

/* Bounds of the maps (user space may lower the count maps with --map-size). */
#define ICPP_MAX_TARGETS 4096       /* processes followed (target + children) */
#define ICPP_COUNT_ENTRIES 131072   /* distinct keys per drain interval */
#define ICPP_STACK_ENTRIES 16384    /* distinct user stacks (--validate) */
#define ICPP_STACK_DEPTH 127        /* = kernel.perf_event_max_stack default */
#define ICPP_VALIDATE_WORDS 8       /* user stack words copied at SP (--validate) */

/* Values of the targets map. */
#define ICPP_TARGET_ARMED 1         /* counted */
#define ICPP_TARGET_PENDING 2       /* launched child: counted from its exec on */

/* icpp_key.flags */
#define ICPP_K_MAIN 0x1             /* main thread: base = mm->start_stack */
#define ICPP_K_KERNEL 0x2           /* hit kernel mode: regs from the task's user pt_regs */
#define ICPP_K_BP_VALID 0x4         /* SP <= BP < base: bp_off holds base - BP */
#define ICPP_K_NO_BASE 0x8          /* base read as 0: sp_off/bp_off are meaningless */
#define ICPP_K_SP_OUTSIDE 0x10      /* SP not below base (hand-made stack, sigaltstack) */

struct icpp_key {
	__u32 tgid;
	__u32 flags;                /* ICPP_K_* */
	__u64 ip;                   /* user IP (runtime address) */
	__s64 sp_off;               /* base - SP */
	__s64 bp_off;               /* base - BP when ICPP_K_BP_VALID, else 0 */
};

/* Fill key's offsets and flags from the thread's base, SP and BP: the one
 * definition both backends use (the BPF program and the perf backend). */
static inline void icpp_key_offsets(struct icpp_key *key, __u64 base, __u64 sp, __u64 bp)
{
	if (base == 0) {
		key->flags |= ICPP_K_NO_BASE;
		return;
	}
	if (sp > base)
		key->flags |= ICPP_K_SP_OUTSIDE;
	key->sp_off = (__s64)(base - sp);
	if (bp >= sp && bp < base) {
		key->flags |= ICPP_K_BP_VALID;
		key->bp_off = (__s64)(base - bp);
	}
}

/* --validate: the key also carries the frame-pointer walk of the user stack
 * (bpf_get_stackid, BPF_F_USER_STACK) and the first user stack words at SP,
 * from which report recovers the caller a frame-pointer walk misses when the
 * sample is in a prologue or epilogue (CFA rule SP-based). */
struct icpp_vkey {
	struct icpp_key k;
	__s32 stack_id;             /* id in the stacks map, or -errno */
	__u32 words_ok;             /* 1 when words[] could be read */
	__u64 words[ICPP_VALIDATE_WORDS];
};

/* Per-CPU counters (stats map, array of ICPP_ST_NR __u64). */
enum icpp_stat {
	ICPP_ST_DROPS = 0,          /* lost: count map full */
	ICPP_ST_NO_USER_REGS,       /* target task without user registers (kernel worker) */
	ICPP_ST_KERNEL_HITS,        /* samples taken in kernel mode (still counted) */
	ICPP_ST_STACK_ERRORS,       /* --validate: no user stack (map full, collision, fault) */
	ICPP_ST_FORKS,              /* processes added by fork */
	ICPP_ST_TARGETS_FULL,       /* forks not followed: targets map full */
	ICPP_ST_NR
};

/* Samples of the targets = what the count maps hold + DROPS + NO_USER_REGS
 * (user space adds them up: no counter on the common path).  Global data of
 * the program: `active` (0: counts0/vcounts0 are filled, 1: counts1/vcounts1;
 * user space flips it, waits for running programs to finish and drains the
 * other) and `fast_tgid` (the armed target, checked before the map). */

#endif
