// The thesis' Figure 5.5: paths with the same functions and the same edges in
// another order, A-B-A-A-D and A-A-B-A-D, which only cloning separates
// (disambig.h section 4, DA_DIFF_ORDER).  Each A reads the next letter of its
// script and calls B, A or D from its one callsite for each; B calls A.  With
// an argument D throws on some inputs: the exception unwinds through the
// clones, running the destructor of A's guard (a landing pad of the LSDA a
// clone shares).  Training runs without one: the unwinder's own paths would
// outnumber the fixture's.
// Built with FX_INDIRECT, A makes its one call through a function pointer
// (and B its call of A): no call can be pointed at a clone, so a clone takes
// its frames by a dispatch at its function's entry (rewriter.h section 1).
// Built with FX_COLD (and gcc's hot/cold partitioning), B is a cold
// function: A calls it from its .cold fragment, which jumps back into A, so
// a clone of A copies the fragment too, and the landing pad's code runs in
// the fragment.
#include <cstdio>

#define NOINLINE __attribute__((noinline, noclone))
#ifdef FX_COLD
#define B_ATTR __attribute__((cold))
#else
#define B_ATTR
#endif

static volatile long sink;
static bool throwing;

struct Guard {
	~Guard() { sink = sink + 1; }
};

NOINLINE static long fx_d(long x)
{
	sink = x;
	if (throwing && x % 3 == 0)
		throw x;
	return x * 3 + 1;
}

NOINLINE static long fx_a(const char *script, long x);
NOINLINE static long fx_b(const char *script, long x);

#ifdef FX_INDIRECT
NOINLINE static long fx_d2(const char *, long x)
{
	return fx_d(x);
}

typedef long (*fx_fn)(const char *, long);
static fx_fn volatile fx_table[3] = {fx_a, fx_b, fx_d2};
#endif

NOINLINE B_ATTR static long fx_b(const char *script, long x)
{
#ifdef FX_INDIRECT
	return fx_table[0](script, x + 1) + 7;
#else
	return fx_a(script, x + 1) + 7;
#endif
}

NOINLINE static long fx_a(const char *script, long x)
{
	Guard g;
	long r;
#ifdef FX_INDIRECT
	int i = *script == 'A' ? 0 : *script == 'B' ? 1 : 2;
	r = fx_table[i](script + 1, *script == 'A' ? x * 2 : *script == 'B' ? x ^ 5 : x);
#else
	switch (*script) {
	case 'A':
		r = fx_a(script + 1, x * 2);
		break;
	case 'B':
		r = fx_b(script + 1, x ^ 5);
		break;
	default:
		r = fx_d(x);
		break;
	}
#endif
	return r + (long)*script;
}

int main(int argc, char **argv)
{
	(void)argv;
	throwing = argc > 1;
	// one callsite for both scripts
	static const char *const scripts[] = {"BAD", "ABD"};
	long total = 0, thrown = 0;
	for (int i = 0; i < 8; i++) {
		try {
			total += fx_a(scripts[i % 2], i);
		} catch (long v) {
			thrown += v;
		}
	}
	std::printf("%ld %ld %ld\n", total, thrown, (long)sink);
	return 0;
}
