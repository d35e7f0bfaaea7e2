/* t_threads: 8 pthreads, each running a different call tree, while the main
 * thread runs its own; then 8 more, one at a time, so that glibc hands each
 * the cached stack (and struct pthread, so the same fs base) of a thread that
 * has ended, and one of them leaves by pthread_exit from a recursion.
 * Heights of non-main threads are relative to fs base. */
#include "gt.h"

#include <setjmp.h>

static volatile int sink;

/* Shared leaves, reached from different trees at different heights. */
GT_FN static int leaf(int x)
{
	GT_ENTER();
	return x + 1;
}
GT_FN static int big_frame(int x)
{
	GT_ENTER();
	volatile char buf[2000];
	buf[x % 2000] = (char)x;
	return leaf(buf[x % 2000]);
}

/* 0: direct recursion */
GT_FN static int rec(int n)
{
	GT_ENTER();
	return n == 0 ? leaf(0) : rec(n - 1) + 1;
}
/* 1: mutual recursion */
GT_FN static int ping(int n);
GT_FN static int pong(int n)
{
	GT_ENTER();
	return n == 0 ? leaf(1) : ping(n - 1) + 1;
}
GT_FN static int ping(int n)
{
	GT_ENTER();
	return n == 0 ? leaf(2) : pong(n - 1) + 2;
}
/* 2: function pointers */
GT_FN static int twice(int x)
{
	GT_ENTER();
	return 2 * leaf(x);
}
GT_FN static int thrice(int x)
{
	GT_ENTER();
	return 3 * x;
}
GT_FN static int via_ptr(int (*f)(int), int x)
{
	GT_ENTER();
	return f(x);
}
/* 3: qsort callback */
GT_FN static int cmp_desc(const void *a, const void *b)
{
	GT_ENTER();
	return *(const int *)b - *(const int *)a;
}
/* 4: a deep chain */
GT_FN static int chain4(int x)
{
	GT_ENTER();
	return big_frame(x);
}
GT_FN static int chain3(int x)
{
	GT_ENTER();
	return chain4(x) + 1;
}
GT_FN static int chain2(int x)
{
	GT_ENTER();
	return chain3(x) + 1;
}
GT_FN static int chain1(int x)
{
	GT_ENTER();
	return chain2(x) + 1;
}
/* 6: longjmp inside a thread */
static __thread jmp_buf *tl_jb;   /* the program's own TLS, same in every run */
GT_FN static void jumper(int n)
{
	GT_ENTER();
	if (n > 0)
		jumper(n - 1);
	else if (sink >= 0)
		longjmp(*tl_jb, 1);
	sink = n;
}
/* 7: tail calls */
GT_FN static int tail2(int x)
{
	GT_ENTER();
	sink = x;
	return leaf(x);
}
GT_FN static int tail1(int x)
{
	GT_ENTER();
	sink = x;
	return tail2(x + 5);
}

GT_FN static int tree0(void) { GT_ENTER(); return rec(12); }
GT_FN static int tree1(void) { GT_ENTER(); return ping(9) + pong(4); }
GT_FN static int tree2(void) { GT_ENTER(); return via_ptr(twice, 4) + via_ptr(thrice, 5); }
GT_FN static int tree3(void)
{
	GT_ENTER();
	int v[25];
	for (int i = 0; i < 25; i++)
		v[i] = (i * 37) % 101;
	qsort(v, 25, sizeof v[0], cmp_desc);
	return v[0] + v[24];
}
GT_FN static int tree4(void) { GT_ENTER(); return chain1(3); }
GT_FN static int tree5(void) { GT_ENTER(); return big_frame(5) + leaf(6); }
GT_FN static int tree6(void)
{
	GT_ENTER();
	jmp_buf jb;
	tl_jb = &jb;
	if (!setjmp(jb))
		jumper(7);
	return leaf(60);
}
GT_FN static int tree7(void) { GT_ENTER(); return tail1(70); }

/* Second wave: pthread_exit from a recursion (a forced unwind). */
GT_FN static int exiter(int n)
{
	GT_ENTER();
	if (n > 0)
		return exiter(n - 1) + 1;
	if (sink >= 0)
		pthread_exit((void *)(intptr_t)leaf(40));
	return 0;
}

static int (*const trees[8])(void) = {tree0, tree1, tree2, tree3, tree4, tree5, tree6, tree7};
static int results[8];

GT_FN static void *thread_main(void *arg)
{
	GT_ENTER();
	int i = (int)(intptr_t)arg;
	results[i] = trees[i]();
	return NULL;
}

GT_FN static void *wave2_main(void *arg)
{
	GT_ENTER();
	int i = (int)(intptr_t)arg;
	if (i == 3)
		return (void *)(intptr_t)exiter(6);
	return (void *)(intptr_t)trees[7 - i]();
}

GT_FN int main(void)
{
	GT_ENTER();
	pthread_t t[8];
	for (int i = 0; i < 8; i++)
		if (pthread_create(&t[i], NULL, thread_main, (void *)(intptr_t)i)) {
			fprintf(stderr, "pthread_create failed\n");
			return 1;
		}
	int mine = chain2(1) + rec(3);   /* the main thread's tree meanwhile */
	for (int i = 0; i < 8; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < 8; i++)
		printf("tree%d %d\n", i, results[i]);
	printf("main %d\n", mine);
	for (int i = 0; i < 8; i++) {
		void *r;
		if (pthread_create(&t[i], NULL, wave2_main, (void *)(intptr_t)i) ||
		    pthread_join(t[i], &r))
			return 1;
		printf("wave2 %d %d\n", i, (int)(intptr_t)r);
	}
	return 0;
}
