/* Veneers (rewriter.h section 1, Cloning): caller_a and caller_b call
 * find_entry (fx_veneer_thunk.S), whose rel8 jumps leave it; run_veneer.sh
 * clones it for caller_a's call.  Prints a sum over N rounds. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile long sink;

long find_entry(long x, long k);

NOINLINE long vleaf(long x)
{
	sink = x;
	return x + 1;
}

NOINLINE static long caller_a(long x)
{
	volatile long k = 1;
	return find_entry(x, k) + 1;
}

NOINLINE static long caller_b(long x)
{
	return find_entry(x, 2) * 2;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, s = 0;
	for (long i = 0; i < n; i++)
		s += caller_a(i % 2 ? i : -i) + caller_b(i % 3 ? -i : i);
	printf("%ld\n", s);
	return 0;
}
