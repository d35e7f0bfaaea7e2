/* t_fork_thread: fork from a thread that is not the main thread.  In the
 * child that thread is the only one and gettid() == getpid(), yet it still
 * runs on its pthread stack, below its own fs base: its heights must stay
 * relative to fs base (the base of a thread is the one its stack has, fixed
 * for the life of the thread), not jump to mm->start_stack, which is an
 * ASLR-dependent distance away from a pthread stack. */
#include "gt.h"

#include <sys/wait.h>

static volatile int sink;

GT_FN static int leaf(int x)
{
	GT_ENTER();
	return x + 1;
}

GT_FN static int rec(int n)
{
	GT_ENTER();
	if (n == 0)
		return leaf(0);
	int r = rec(n - 1);
	sink = r;
	return r + 1;
}

GT_FN static void *worker(void *arg)
{
	GT_ENTER();
	(void)arg;
	int before = rec(2);   /* same calls before and after the fork */
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int v = rec(3) + before;
		gt_flush();
		_exit(v);
	}
	int status = -1;
	waitpid(pid, &status, 0);
	return (void *)(intptr_t)(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
}

GT_FN int main(void)
{
	GT_ENTER();
	pthread_t t;
	void *r;
	if (pthread_create(&t, NULL, worker, NULL) || pthread_join(t, &r))
		return 1;
	printf("child status %d\n", (int)(intptr_t)r);
	return 0;
}
