/* tls_prog: worker threads of a program whose static TLS moves glibc's
 * struct pthread away from where it is in icpp itself (the perf backend's
 * thread base, docs/record-report.md).  A 64 KiB initialised `__thread`
 * block aligned to TLS_ALIGN: glibc puts the thread pointer at
 * (end of the stack mapping - sizeof(struct pthread)) rounded down to the
 * static TLS alignment, so the block's alignment, not its size, decides the
 * distance.  With TLS_ALIGN 4096 it is one page in every thread; with 65536
 * it depends on where each stack was mapped (it differs between threads).
 *
 * Call trees (frame pointers, no inlining, no sibling calls):
 *   main thread   main > m_work > spin                (1 unit per round)
 *   worker 1      w1_entry > w1_work > spin           (2 units)
 *   worker 2      w2_entry > w2_outer > w2_inner > spin (2 units)
 * Usage: tls_prog [ROUNDS]. */
#include <pthread.h>
#include <stdlib.h>

#ifndef TLS_ALIGN
#define TLS_ALIGN 4096
#endif
#define NOINLINE __attribute__((noinline))

__thread char tls_block[64 * 1024] __attribute__((aligned(TLS_ALIGN))) = {1};
static volatile unsigned long sink;
static long rounds = 200;
static const long N = 400000;       /* spin iterations per unit */

NOINLINE void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i ^ (sink >> 3);
	tls_block[n & 0xffff]++;    /* the block is used: it stays in static TLS */
}

NOINLINE void m_work(long n)
{
	spin(n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void w1_work(long n)
{
	volatile char pad[48] __attribute__((unused));
	pad[0] = (char)n;
	spin(n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void w2_inner(long n)
{
	spin(n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void w2_outer(long n)
{
	w2_inner(n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void *w1_entry(void *arg)
{
	for (long r = 0; r < rounds; r++)
		w1_work(2 * N);
	return arg;
}

NOINLINE void *w2_entry(void *arg)
{
	for (long r = 0; r < rounds; r++)
		w2_outer(2 * N);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t1, t2;
	if (argc > 1)
		rounds = atol(argv[1]);
	if (pthread_create(&t1, NULL, w1_entry, NULL) || pthread_create(&t2, NULL, w2_entry, NULL))
		return 1;
	for (long r = 0; r < rounds; r++)
		m_work(N);
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return (int)(sink & 0);
}
