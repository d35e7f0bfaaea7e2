/* thread_base.h: which base a thread's heights are measured from (method.md,
 * refined in docs/training.md).  Shared by the training runtime, the BPF
 * sampler and the perf backend, so it includes nothing and uses only plain
 * C types.
 *
 * A thread whose SP is on the process's initial stack (within RLIMIT_STACK
 * below mm->start_stack: the kernel keeps every mapping at least that far
 * away) measures from start_stack; any other thread from its fs base.  Not
 * "tid == pid": the main thread of a process forked from a worker thread
 * runs on that worker's stack. */
#ifndef ICPP_THREAD_BASE_H
#define ICPP_THREAD_BASE_H

#define ICPP_RLIMIT_STACK 3                   /* RLIMIT_STACK on Linux */
#define ICPP_STACK_REACH_MAX (1ull << 36)     /* cap for an unlimited stack */

static inline int icpp_on_initial_stack(unsigned long long start_stack, unsigned long long sp,
					unsigned long long stack_rlimit)
{
	if (stack_rlimit > ICPP_STACK_REACH_MAX)
		stack_rlimit = ICPP_STACK_REACH_MAX;
	return start_stack && start_stack - sp < stack_rlimit;
}

#endif
