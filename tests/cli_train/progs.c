/* Small programs for the command-level tests of icpp train (run_cli.sh):
 *   progs exit N        exit with status N after a few calls
 *   progs segv          die of SIGSEGV
 *   progs altstack      run a signal handler on a sigaltstack
 *   progs signal        run a signal handler on the thread's stack, then after()
 *   progs alloca        grower() calls first(), grows its frame, calls second()
 *   progs lib           call lib_work() in libcli_lib.so
 *   progs print WORD    print WORD (its build differs per -DVARIANT) */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int lib_work(int n);

#ifndef VARIANT
#define VARIANT 0
#endif

static volatile int sink;

__attribute__((noinline)) static void handler_work(int n)
{
	sink += n;
}

static void handler(int sig)
{
	handler_work(sig);
}

__attribute__((noinline)) static void after(void)
{
	sink++;
}

__attribute__((noinline)) static void first(void)
{
	sink++;
}

__attribute__((noinline)) static void second(void)
{
	sink += 2;
}

/* After alloca, second() is called at a lower SP than first() was: at its
 * entry the shadow stack still holds first(), which had returned. */
__attribute__((noinline)) static void grower(int n)
{
	first();
	volatile char *p = __builtin_alloca((size_t)n);
	p[0] = 1;
	second();
}

__attribute__((noinline)) static int work(int n)
{
	return n ? work(n - 1) + 1 : VARIANT;
}

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "exit"))
		return work(3) + atoi(argv[2]) - 3 - VARIANT;
	if (!strcmp(argv[1], "segv")) {
		work(2);
		raise(SIGSEGV);
		return 0;
	}
	if (!strcmp(argv[1], "altstack")) {
		static char stack[1 << 16];
		stack_t ss = {.ss_sp = stack, .ss_size = sizeof(stack)};
		struct sigaction sa = {.sa_handler = handler, .sa_flags = SA_ONSTACK};
		sigaltstack(&ss, NULL);
		sigaction(SIGUSR1, &sa, NULL);
		raise(SIGUSR1);
		printf("handled %d\n", sink);
		return 0;
	}
	if (!strcmp(argv[1], "signal")) {
		signal(SIGUSR1, handler);
		raise(SIGUSR1);
		after();
		printf("handled %d\n", sink);
		return 0;
	}
	if (!strcmp(argv[1], "alloca")) {
		grower(256);
		printf("%d\n", sink);
		return 0;
	}
	if (!strcmp(argv[1], "lib")) {
		printf("%d\n", lib_work(3));
		return 0;
	}
	if (!strcmp(argv[1], "print")) {
		printf("%s %d\n", argv[2], work(1));
		return 0;
	}
	return 2;
}
