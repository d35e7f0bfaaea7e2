/* fx_modules_lib.c: one entry point that calls either of two functions of
 * the same frame size, both of which call one helper, for run_modules.sh.
 * The helper's frames under them share a CID, and the paths differ only
 * inside this library: a rewrite of the program alone cannot separate them,
 * a rewrite of both (icpp rewrite --lib) can. */
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

__attribute__((noinline)) int fx_lib(int x)
{
	int r = x & 1 ? fx_lib_a(x) : fx_lib_b(x);
	return r + x;
}
