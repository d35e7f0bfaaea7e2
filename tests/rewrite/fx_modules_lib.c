/* fx_modules_lib.c: one entry point that calls either of two functions of
 * the same frame size, both of which call one helper, for run_modules.sh.
 * The helper's frames under them share a CID, and the paths differ only
 * inside this library: a rewrite of the program alone cannot separate them,
 * a rewrite of both (icpp rewrite --lib) can.  And a frame whose size
 * FX_PAD sets once per run, as glibc's loader sizes its frame by the file
 * it maps: verify must not blame the rewrite of the program for it. */
#include <stdlib.h>

static __attribute__((noinline)) int fx_leaf(int x)
{
	return x * 3 + 1;
}

static __attribute__((noinline)) int fx_lib_a(int x)
{
	volatile char buf[32];
	buf[0] = (char)x;
	return fx_leaf(buf[0]) + 1;
}

static __attribute__((noinline)) int fx_lib_b(int x)
{
	volatile char buf[32];
	buf[0] = (char)x;
	return fx_leaf(buf[0]) + 2;
}

static __attribute__((noinline)) int fx_below(int x)
{
	return fx_leaf(x) + 3;
}

static __attribute__((noinline)) int fx_sized(int x)
{
	const char *pad = getenv("FX_PAD");
	volatile char *buf = __builtin_alloca(16 + (pad ? (size_t)atoi(pad) & 4095 : 0));
	buf[0] = (char)x;
	return fx_below(buf[0]);
}

__attribute__((noinline)) int fx_lib(int x)
{
	int r = x & 1 ? fx_lib_a(x) : fx_lib_b(x);
	return r + x + fx_sized(x);
}
