/* thread_pointer: read a thread's fs base with ptrace (see thread_pointer.h). */
#include "collector/thread_pointer.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

/* Why PTRACE_SEIZE said EPERM: the kernel says so for an exiting thread and
 * for one that is traced already, as well as for a refusal. */
static int seize_refusal(pid_t tgid, pid_t tid)
{
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", tgid, tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -ESRCH;
	int rc = -EPERM;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, "State:", 6) && strpbrk(line + 6, "ZX"))
			rc = -ESRCH;
		else if (!strncmp(line, "TracerPid:", 10) && atoi(line + 10) != 0 && rc == -EPERM)
			rc = -EBUSY;
	}
	fclose(f);
	return rc;
}

/* Wait for the seized thread's next stop; the stop's signal, to re-inject
 * on detach, goes to *sig (0 for the interrupt's own stop). */
static int wait_stop(pid_t tid, int *sig)
{
	int status;
	while (waitpid(tid, &status, __WALL) < 0)
		if (errno != EINTR)
			return -errno;
	if (!WIFSTOPPED(status))
		return -ESRCH;      /* it ended, and is reaped */
	/* PTRACE_EVENT_STOP (the interrupt, or a group stop) has the event in
	 * bits 16..23; without it the stop is a signal's delivery. */
	*sig = (status >> 16) == PTRACE_EVENT_STOP ? 0 : WSTOPSIG(status);
	return 0;
}

int thread_pointer_read(pid_t tgid, pid_t tid, uint64_t *fs_base, uint64_t *sp)
{
	char task[64];
	if (tid == tgid)
		return -EINVAL;
	snprintf(task, sizeof(task), "/proc/%d/task/%d", tgid, tid);
	if (access(task, F_OK))
		return -ESRCH;      /* gone: its tid may be another process's by now */
	if (ptrace(PTRACE_SEIZE, tid, 0, 0))
		return errno == EPERM ? seize_refusal(tgid, tid) : -errno;
	int sig = 0, rc = ptrace(PTRACE_INTERRUPT, tid, 0, 0) ? -errno : wait_stop(tid, &sig);
	if (rc == 0) {
		struct user_regs_struct regs;
		if (ptrace(PTRACE_GETREGS, tid, 0, &regs) == 0) {
			*fs_base = regs.fs_base;
			*sp = regs.rsp;
		} else {
			rc = -errno;
		}
	}
	ptrace(PTRACE_DETACH, tid, 0, (void *)(long)sig);
	return rc;
}
