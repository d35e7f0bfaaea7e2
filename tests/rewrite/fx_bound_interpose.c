/* fx_bound_interpose.c: another definition of the library's leaf, which
 * LD_PRELOAD puts before the library's own: the library's calls of it must
 * reach this one, rewritten or not (run_bound.sh). */
__attribute__((noinline)) int fx_bound_leaf(int x)
{
	volatile int v = x;
	return v * 5 - 1;
}
