/* fx_imports_lib.c: a library whose exported functions read their stack
 * arguments or not, for run_imports.sh.  The program calling them through the
 * PLT cannot bound those calls from its own code; icpp reads the bound here. */
#include <stdarg.h>

/* four of its ten arguments are on the stack: 32 bytes */
static __attribute__((noinline)) long weigh10(long a, long b, long c, long d, long e, long f,
					      long g, long h, long i, long j)
{
	return a + 2 * b + 3 * c + 4 * d + 5 * e + 6 * f + 7 * g + 8 * h + 9 * i + 10 * j;
}

/* reads them only through its tail call */
long sum10(long a, long b, long c, long d, long e, long f, long g, long h, long i, long j)
{
	return weigh10(a, b, c, d, e, f, g, h, i, j);
}

long sum2(long a, long b)
{
	return a * 31 + b;
}

/* va_start takes the stack arguments' address: no bound */
long vsum(int n, ...)
{
	va_list ap;
	long s = 0;
	va_start(ap, n);
	for (int i = 0; i < n; i++)
		s += va_arg(ap, long);
	va_end(ap);
	return s;
}

/* an IFUNC: the resolver's choices read no stack arguments */
volatile int fx_use_twice = 1;
static long pick_twice(long a) { return 2 * a; }
static long pick_thrice(long a) { return 3 * a; }
static long (*resolve_pick(void))(long)
{
	return fx_use_twice ? pick_twice : pick_thrice;
}
long pick(long a) __attribute__((ifunc("resolve_pick")));
