/* vmlinux_min.h: the few kernel types sample.bpf.c uses, for building on a
 * machine without /sys/kernel/btf/vmlinux (bpf/CMakeLists.txt prefers a
 * vmlinux.h generated from the running kernel's BTF).  Kernel structures are
 * marked preserve_access_index, so libbpf relocates every field offset against
 * the target kernel's BTF at load time (CO-RE): only the field names must
 * exist there.  bpf_perf_event_data and pt_regs are ABI (the perf_event
 * program context), so their layout is spelled out exactly. */
#ifndef __VMLINUX_H__
#define __VMLINUX_H__

#include <linux/types.h>
#include <linux/bpf.h>

typedef _Bool bool;
#define true 1
#define false 0
typedef int pid_t;

#pragma clang attribute push(__attribute__((preserve_access_index)), apply_to = record)

struct pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8;
	unsigned long ax, cx, dx, si, di, orig_ax;
	unsigned long ip, cs, flags, sp, ss;
};
typedef struct pt_regs bpf_user_pt_regs_t;

struct bpf_perf_event_data {
	bpf_user_pt_regs_t regs;
	__u64 sample_period;
	__u64 addr;
};

struct mm_struct {
	unsigned long start_stack;
};

struct thread_struct {
	unsigned long fsbase;
};

struct rlimit {
	unsigned long rlim_cur;
	unsigned long rlim_max;
};

struct signal_struct {
	struct rlimit rlim[16];
};

struct task_struct {
	int pid;
	int tgid;
	struct mm_struct *mm;
	struct signal_struct *signal;
	struct thread_struct thread;
};

struct linux_binprm;

#pragma clang attribute pop

#endif
