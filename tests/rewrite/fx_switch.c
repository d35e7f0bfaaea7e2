/* Clones of functions with switch tables (rewriter.h section 1, Cloning):
 * classify() dispatches on op through gcc's table of offsets relative to
 * the table (-fPIE; without PIE, a table of addresses: jmp *T(,%rdi,8)),
 * its cases calling leaf() and using its frame after.
 * run_switch.sh clones it for caller_a's call with a padding its original
 * lacks: a case reached through the original's table would release the
 * wrong frame.  Prints a sum over N rounds. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile long sink;

NOINLINE static long leaf(long x)
{
	sink = x;
	return x + 1;
}

NOINLINE long classify(long op, long x)
{
	volatile long keep = x;
	switch (op) {
	case 0: return leaf(x) * 2 + keep;
	case 1: return leaf(x * 3) - keep;
	case 2: return leaf(x ^ 5) * 2 - keep;
	case 3: return leaf(x + 7) + keep * 3;
	case 4: return leaf(x - 9) * 3 + keep;
	case 5: return leaf(x << 1) - keep * 2;
	case 6: return leaf(x >> 1) + keep * 5;
	default: return keep;
	}
}

NOINLINE static long caller_a(long i)
{
	return classify(i % 8, i) + 1;
}

NOINLINE static long caller_b(long i)
{
	return classify((i + 3) % 8, -i) * 2;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10, s = 0;
	for (long i = 0; i < n; i++)
		s += caller_a(i) + caller_b(i);
	printf("%ld\n", s);
	return 0;
}
