/* t_procs: a dlopen'd shared object calling back into the program, then fork:
 * the child runs its own calls and execs t_exec (of the same variant); then
 * posix_spawn of t_exec (glibc: a CLONE_VM|CLONE_VFORK child on its own
 * stack, sharing the parent's memory until it execs). */
#include "gt.h"

#include <spawn.h>
#include <sys/wait.h>

#ifndef PLUG_NAME
#error "PLUG_NAME: file name of the t_plug variant, beside this program"
#endif
#ifndef EXEC_NAME
#error "EXEC_NAME: file name of the t_exec variant, beside this program"
#endif

static volatile int sink;

GT_FN static int callback(int x)
{
	GT_ENTER();
	return x * x;
}

GT_FN static int work(int n)
{
	GT_ENTER();
	return n <= 0 ? 0 : work(n - 1) + n;
}

GT_FN static int child_work(int n)
{
	GT_ENTER();
	return work(n) + callback(n);
}

GT_FN static int parent_after(int n)
{
	GT_ENTER();
	return work(n) * 2;
}

/* dirname of /proc/self/exe + "/" + name */
static void sibling(char *out, size_t len, const char *name)
{
	ssize_t n = readlink("/proc/self/exe", out, len - 1);
	out[n > 0 ? n : 0] = 0;
	char *slash = strrchr(out, '/');
	snprintf(slash ? slash + 1 : out, len - (slash ? (size_t)(slash + 1 - out) : 0), "%s", name);
}

GT_FN static int use_plugin(void)
{
	GT_ENTER();
	char path[4096];
	sibling(path, sizeof path, PLUG_NAME);
	void *h = dlopen(path, RTLD_NOW);
	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		return -1;
	}
	int (*run)(int (*)(int), int) = (int (*)(int (*)(int), int))dlsym(h, "plug_run");
	int r = run ? run(callback, 5) : -1;
	gt_modules_snapshot();   /* callsites in the object outlive it */
	dlclose(h);
	return r;
}

extern char **environ;
GT_FN static int spawn_exec(void)
{
	GT_ENTER();
	char path[4096];
	pid_t pid;
	int status = 0;
	sibling(path, sizeof path, EXEC_NAME);
	char *args[] = {path, (char *)"3", NULL};
	if (posix_spawn(&pid, path, NULL, NULL, args, environ) || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

GT_FN int main(void)
{
	GT_ENTER();
	printf("work %d\n", work(6));
	printf("plugin %d\n", use_plugin());
	fflush(stdout);

	pid_t pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		char path[4096];
		sink = child_work(4);
		sibling(path, sizeof path, EXEC_NAME);
		gt_flush();
		execl(path, path, "5", (char *)NULL);
		_exit(127);
	}
	int status = 0;
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	printf("child status %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	printf("after %d\n", parent_after(3));
	fflush(stdout);
	printf("spawn %d\n", spawn_exec());
	printf("after spawn %d\n", parent_after(4));
	return 0;
}
