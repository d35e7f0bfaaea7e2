/* workload: the benchmark's target.  `workload UNITS DEPTH`: a fixed amount
 * of work (about a second per unit here; calibrated units, not time) done at
 * the bottom of a call chain DEPTH frames deep, so that a frame-pointer walk
 * has DEPTH + 4 frames to go through.  Built with frame pointers.  Prints
 * "work_seconds S": the monotonic time of the work loop itself, so that a
 * profiler's start-up and write-out do not count. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

__attribute__((noinline)) static void spin(long n)
{
	for (long i = 0; i < n; i++)
		sink += (unsigned long)i ^ (sink >> 3);
}

__attribute__((noinline)) static void down(int depth, long n)
{
	volatile char pad[16];
	pad[0] = (char)depth;
	if (depth > 0)
		down(depth - 1, n);
	else
		spin(n);
	__asm__ volatile("" ::: "memory");
	(void)pad;
}

int main(int argc, char **argv)
{
	double units = argc > 1 ? atof(argv[1]) : 1.0;     /* ~1 s of work per unit here */
	int depth = argc > 2 ? atoi(argv[2]) : 20;
	long rounds = (long)(units * 6400);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (long r = 0; r < rounds; r++)
		down(depth, 200000);
	clock_gettime(CLOCK_MONOTONIC, &b);
	printf("work_seconds %.6f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
	return (int)(sink & 0);
}
