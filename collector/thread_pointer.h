/* thread_pointer: a thread's fs base (glibc's struct pthread, the base of a
 * non-main thread's heights), which the perf backend cannot sample: the FS
 * entry of the perf registers is the selector.  Read with ptrace: seize the
 * thread, interrupt it, read its registers, detach, so the thread stops for
 * a moment once. */
#ifndef ICPP_THREAD_POINTER_H
#define ICPP_THREAD_POINTER_H

#include <stdint.h>
#include <sys/types.h>

/* The fs base and SP of thread tid of process tgid: 0, or -ESRCH (the
 * thread is gone or exiting), -EBUSY (another tracer, e.g. a debugger, holds
 * it), -EPERM (ptrace not permitted: yama ptrace_scope, another user, a
 * non-dumpable process), -EINVAL for the thread group leader, or another
 * -errno.  Never the leader: a traced leader that exits while other threads
 * live is not reported to its tracer until they all end (the wait could
 * last that long), and a launched target's leader is icpp's own child, whose
 * exit status record.c waits for.  Any other thread's exit reaches the
 * tracer at once, and reaping it as tracer is what releases it. */
int thread_pointer_read(pid_t tgid, pid_t tid, uint64_t *fs_base, uint64_t *sp);

#endif
