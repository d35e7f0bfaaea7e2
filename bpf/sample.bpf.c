// SPDX-License-Identifier: GPL-2.0
/* sample.bpf.c: icpp's passive sampler (CO-RE, see sample.h for the contract).
 *
 * Attached to one perf event per CPU.  Per sample of a target process it reads
 * the user IP, SP, BP and the thread's base and increments one counter: no
 * stack walk (except with --validate), no output to user space.
 *
 * Which registers: ctx->regs are the registers the perf core handed to the
 * overflow handler.  For cpu-clock they are the interrupted ones.  With Intel
 * PEBS the IP is the precise one from the PEBS record, and SP/BP are the
 * record's too only when the event asks for PERF_SAMPLE_REGS_INTR
 * (setup_pebs_fixed_sample_data copies the record's GPRs into the regs then);
 * AMD IBS replaces only the IP.  The CS in those regs is the interrupt's, so
 * user vs kernel is decided by the IP value: a kernel IP means the thread was
 * in the kernel, and its user state is the task's user pt_regs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "sample.h"
#include "pathmap/thread_base.h"

char LICENSE[] SEC("license") = "GPL";

/* Set by user space before load. */
const volatile bool validate = false;      /* walk the user stack as well */
const volatile bool follow_forks = true;   /* add children of targets */

/* Global data (a mmapped array: plain loads, no helper calls).
 * active: which count map is filled (user space flips it to drain the other);
 * fast_tgid: the armed target itself, checked before the targets map. */
volatile __u32 active;
volatile __u32 fast_tgid;

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ICPP_MAX_TARGETS);
	__type(key, __u32);                 /* tgid */
	__type(value, __u8);                /* ICPP_TARGET_* */
} targets SEC(".maps");

/* Two count maps so that user space drains one while the other fills. */
struct counts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ICPP_COUNT_ENTRIES);
	__type(key, struct icpp_key);
	__type(value, __u64);
};
struct counts_map counts0 SEC(".maps"), counts1 SEC(".maps");

struct vcounts_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, ICPP_COUNT_ENTRIES);
	__type(key, struct icpp_vkey);
	__type(value, __u64);
};
struct vcounts_map vcounts0 SEC(".maps"), vcounts1 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, ICPP_STACK_ENTRIES);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, ICPP_STACK_DEPTH * sizeof(__u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, ICPP_ST_NR);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* Scratch for the validate key (too big for the 512-byte BPF stack with the
 * rest). */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct icpp_vkey);
} vscratch SEC(".maps");

static __always_inline void stat_inc(__u32 idx)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &idx);
	if (v)
		*v += 1;            /* per-CPU: no atomic needed */
}

/* Increment map[key] by one; count a drop when the map is full. */
static __always_inline void count(void *map, const void *key)
{
	__u64 one = 1, *v;

	v = bpf_map_lookup_elem(map, key);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	if (bpf_map_update_elem(map, key, &one, BPF_NOEXIST) == 0)
		return;
	/* Another CPU may have inserted it meanwhile. */
	v = bpf_map_lookup_elem(map, key);
	if (v) {
		__sync_fetch_and_add(v, 1);
		return;
	}
	stat_inc(ICPP_ST_DROPS);
}

static __always_inline bool kernel_addr(__u64 a)
{
	return a >> 63;             /* x86-64 kernel half (4- and 5-level paging) */
}

SEC("perf_event")
int icpp_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 tgid = id >> 32;
	__u32 zero = 0;
	struct task_struct *task;
	struct icpp_key key = {};
	__u64 ip, sp, bp, base;
	__u8 *t;

	if (tgid != fast_tgid) {
		t = bpf_map_lookup_elem(&targets, &tgid);
		if (!t || *t != ICPP_TARGET_ARMED)
			return 0;
	}

	task = bpf_get_current_task_btf();
	ip = ctx->regs.ip;
	sp = ctx->regs.sp;
	bp = ctx->regs.bp;
	if (kernel_addr(ip)) {
		struct pt_regs *u = (struct pt_regs *)bpf_task_pt_regs(task);

		/* BTF pointers: direct (fault-safe) loads, relocated by CO-RE */
		ip = u->ip;
		sp = u->sp;
		bp = u->bp;
		key.flags |= ICPP_K_KERNEL;
		stat_inc(ICPP_ST_KERNEL_HITS);
	}
	if (ip == 0 || kernel_addr(ip) || sp == 0) {
		stat_inc(ICPP_ST_NO_USER_REGS);
		return 0;
	}

	/* The base, as training defines it (pathmap/thread_base.h). */
	struct mm_struct *mm = task->mm;
	__u64 start_stack = mm ? mm->start_stack : 0;

	if (icpp_on_initial_stack(start_stack, sp, task->signal->rlim[ICPP_RLIMIT_STACK].rlim_cur)) {
		base = start_stack;
		key.flags |= ICPP_K_MAIN;
	} else {
		base = task->thread.fsbase;
	}
	key.tgid = tgid;
	key.ip = ip;
	icpp_key_offsets(&key, base, sp, bp);

	if (!validate) {
		if (active)
			count(&counts1, &key);
		else
			count(&counts0, &key);
		return 0;
	}

	struct icpp_vkey *vk = bpf_map_lookup_elem(&vscratch, &zero);
	if (!vk)
		return 0;
	vk->k = key;
	vk->stack_id = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	if (vk->stack_id < 0)
		stat_inc(ICPP_ST_STACK_ERRORS);
	vk->words_ok = bpf_probe_read_user(vk->words, sizeof(vk->words), (void *)sp) == 0;
	if (!vk->words_ok)
		__builtin_memset(vk->words, 0, sizeof(vk->words));
	if (active)
		count(&vcounts1, vk);
	else
		count(&vcounts0, vk);
	return 0;
}

/* Children of a target are targets: fork() of a target process (threads share
 * the tgid and need nothing). */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(icpp_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 ptgid = parent->tgid, ctgid = child->tgid;
	__u8 *t;

	if (!follow_forks || ptgid == ctgid)
		return 0;
	t = bpf_map_lookup_elem(&targets, &ptgid);
	if (!t)
		return 0;
	/* A pending parent's child stays pending until it execs too. */
	if (bpf_map_update_elem(&targets, &ctgid, t, BPF_ANY) == 0)
		stat_inc(ICPP_ST_FORKS);
	else
		stat_inc(ICPP_ST_TARGETS_FULL);
	return 0;
}

/* A launched command is armed when it execs (not while icpp's child stub runs). */
SEC("tp_btf/sched_process_exec")
int BPF_PROG(icpp_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	__u32 tgid = p->tgid;
	__u8 armed = ICPP_TARGET_ARMED;
	__u8 *t = bpf_map_lookup_elem(&targets, &tgid);

	if (t && *t == ICPP_TARGET_PENDING) {
		bpf_map_update_elem(&targets, &tgid, &armed, BPF_EXIST);
		if (!fast_tgid)
			fast_tgid = tgid;
	}
	return 0;
}
