/* rt_prog: the program record/report tests sample.  Built with frame
 * pointers, no inlining and no sibling calls, so its call trees are exactly
 * the ones written here:
 *
 *   main thread   main > gamma > spin                      (2 units, precise)
 *                 main > alpha > spin, main > beta > spin  (1 unit each: alpha
 *                     and beta have the same frame size, so spin has the same
 *                     height under both: one ambiguous CID)
 *   thread 1      t1_entry > delta > epsilon > spin        (4 units)
 *   thread 2      t2_entry > rec > rec > rec > spin        (4 units)
 *
 * Every thread does the same work, so each gets about a third of the
 * samples.  Usage: rt_prog [SCALE | forever]; "forever" loops until killed
 * (for attaching with -p) and prints "ready" once its threads run. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))

static volatile unsigned long sink;
static long units = 300;            /* rounds of work per thread */
static volatile int forever;
static const long N = 200000;       /* spin iterations per unit */

NOINLINE void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i ^ (sink >> 3);
}

NOINLINE void alpha(long n)
{
	spin(n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void beta(long n)
{
	spin(n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void gamma_(long n)
{
	volatile char pad[96] __attribute__((unused));
	pad[0] = (char)n;
	spin(n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void epsilon(long n)
{
	volatile char pad[32] __attribute__((unused));
	pad[0] = (char)n;
	spin(n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void delta(long n)
{
	epsilon(n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void rec(int depth, long n)
{
	if (depth > 0)
		rec(depth - 1, n);
	else
		spin(n);
	__asm__ volatile("" ::: "memory");
}

NOINLINE void *t1_entry(void *arg)
{
	for (long r = 0; r < units || forever; r++)
		delta(4 * N);
	return arg;
}

NOINLINE void *t2_entry(void *arg)
{
	for (long r = 0; r < units || forever; r++)
		rec(2, 4 * N);
	return arg;
}

int main(int argc, char **argv)
{
	pthread_t t1, t2;
	if (argc > 1 && !strcmp(argv[1], "forever"))
		forever = 1;
	else if (argc > 1)
		units = atol(argv[1]);
	if (pthread_create(&t1, NULL, t1_entry, NULL) || pthread_create(&t2, NULL, t2_entry, NULL))
		return 1;
	if (forever) {
		printf("ready\n");
		fflush(stdout);
	}
	for (long r = 0; r < units || forever; r++) {
		gamma_(2 * N);
		alpha(N);
		beta(N);
	}
	pthread_join(t1, NULL);
	pthread_join(t2, NULL);
	return (int)(sink & 0);
}
