/* fx_bound_lib.c: the library of run_bound.sh.  Its exported functions call
 * each other through its PLT (a shared library's calls of its own exported
 * functions, which another module may interpose): fx_bound_a > fx_bound_b >
 * fx_bound_leaf and fx_bound_b > fx_bound_a > fx_bound_leaf use the same
 * functions in another order, the leaf at one height under both (thesis
 * Figure 5.4).  Without wrapping only a clone of the leaf for one of its
 * calls separates them, taken by a bound call (rewriter.h section 1). */
int fx_bound_a(int x, int depth);
int fx_bound_b(int x, int depth);

__attribute__((noinline)) int fx_bound_leaf(int x)
{
	volatile int v = x;
	return v * 7 + 1;
}

__attribute__((noinline)) int fx_bound_a(int x, int depth)
{
	volatile char buf[32];
	buf[0] = (char)x;
	return depth ? fx_bound_b(buf[0], depth - 1) + 1 : fx_bound_leaf(buf[0]) + 2;
}

__attribute__((noinline)) int fx_bound_b(int x, int depth)
{
	volatile char buf[32];
	buf[0] = (char)x;
	return depth ? fx_bound_a(buf[0], depth - 1) + 3 : fx_bound_leaf(buf[0]) + 4;
}
