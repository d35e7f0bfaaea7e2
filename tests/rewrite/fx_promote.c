/* Promoted calls (rewriter.h section 1): apply() calls add() or mul()
 * through a function pointer, after loading an argument from its frame:
 * an instruction a promotion stub displaces with the call, and which a
 * padding of apply's frame edits.  run_promote.sh clones add()
 * for that call and checks that the stub calls the clone for add() only,
 * and mul() as before.  pass_on() (fx_promote_pass.S) makes such a call
 * after loading its stack argument, which a padding of its frame edits.
 * interp() jumps by computed gotos, and calls
 * through a pointer too: its jumps can only go to the labels its data
 * names (a PIE's by relative relocations), none of which lies among the
 * instructions the stub moves, so that call is promotable too. */
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile long sink;

NOINLINE static long leaf(long x)
{
	sink = x;
	return x + 1;
}

NOINLINE static long add(long a, long b)
{
	return leaf(a + b) * 2;
}

NOINLINE static long mul(long a, long b)
{
	return leaf(a * b) * 3;
}

typedef long (*op_fn)(long, long);
static op_fn volatile ops[2] = {add, mul};

long pass_on(op_fn f, long a, long b, long c, long d, long e, long g);

NOINLINE static long apply(long i, long a, long b)
{
	volatile long k = a;    /* loaded from the frame right before the call */
	op_fn f = ops[i & 1];
	return f(b, k) + i;
}

NOINLINE static long interp(const char *code, long a)
{
	static void *const labels[] = {&&op_call, &&op_double, &&op_end};
	long acc = a;
	for (;;) {
		goto *labels[*code++ - '0'];
	op_call:
		acc = ops[acc & 1](acc, a) + 1;
		continue;
	op_double:
		acc *= 2;
		continue;
	op_end:
		return acc;
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000, s = 0;
	for (long i = 0; i < n; i++)
		s += apply(i, i, 7) + interp("0100102", i & 15) + pass_on(ops[i & 1], i, 0, 0, 0, 0, 3);
	printf("%ld\n", s);
	return 0;
}
