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

/* 44 of its 50 arguments on the stack: 352 bytes, more than a trampoline
 * copied before session 38 (RW_MAX_COPY was 128), in 44 pushes that take
 * more code than one DW_CFA_advance_loc1 spans */
long sum50(long a0, long a1, long a2, long a3, long a4, long a5, long a6, long a7, long a8,
	   long a9, long a10, long a11, long a12, long a13, long a14, long a15, long a16,
	   long a17, long a18, long a19, long a20, long a21, long a22, long a23, long a24,
	   long a25, long a26, long a27, long a28, long a29, long a30, long a31, long a32,
	   long a33, long a34, long a35, long a36, long a37, long a38, long a39, long a40,
	   long a41, long a42, long a43, long a44, long a45, long a46, long a47, long a48,
	   long a49)
{
	long v[] = {a0,  a1,  a2,  a3,  a4,  a5,  a6,  a7,  a8,  a9,  a10, a11, a12,
		    a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, a24, a25,
		    a26, a27, a28, a29, a30, a31, a32, a33, a34, a35, a36, a37, a38,
		    a39, a40, a41, a42, a43, a44, a45, a46, a47, a48, a49};
	long s = 0;
	for (int i = 0; i < 50; i++)
		s = s * 7 + (i + 1) * v[i];
	return s;
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
