/* fx_relr.c: a program whose function pointers in data are relocated by
 * DT_RELR (linked with -z pack-relative-relocs), for run_relr.sh: rewritten,
 * it must call through the same pointers. */
#include <stdio.h>
#include <stdlib.h>

static __attribute__((noinline)) long twice(long x) { return 2 * x; }
static __attribute__((noinline)) long square(long x) { return x * x; }
static __attribute__((noinline)) long negate(long x) { return -x; }

/* pointers in writable data: R_X86_64_RELATIVE, packed into .relr.dyn */
static long (*table[])(long) = {twice, square, negate, twice, square};

static __attribute__((noinline)) long apply(int i, long x)
{
	volatile char pad[48];
	pad[0] = (char)x;
	return table[i % 5](x + pad[0] % 2);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, s = 0;
	for (long i = 0; i < n; i++)
		s += apply((int)i, i);
	printf("%ld\n", s);
	return 0;
}
