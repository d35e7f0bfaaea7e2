/* fx_tags_lib.c: the library of run_tags.sh: one function that the
 * program calls from two callsites at one height. */
__attribute__((noinline)) int fx_tag_leaf(int x)
{
	volatile int v = x;
	return v * 7 + 1;
}
