/* fx_tags_eh_lib.cc: the library of run_tags_eh.sh: one function that the
 * program calls from two callsites at one height, and that throws three
 * types by its argument; one with nine arguments (three on the stack, which
 * the caller pushes: DW_CFA_GNU_args_size) that throws one. */
#include <stdexcept>

__attribute__((noinline)) int fx_eh_leaf(int x)
{
	volatile int v = x;
	if (v % 7 == 0)
		throw 7;
	if (v % 5 == 0)
		throw std::out_of_range("five");
	if (v % 3 == 0)
		throw std::runtime_error("three");
	return v * 7 + 1;
}

__attribute__((noinline)) int fx_eh_wide(int a, int b, int c, int d, int e, int f, int g, int h,
					 int i)
{
	volatile int v = a + h + i;
	if (v % 4 == 0)
		throw std::runtime_error("four");
	return v + b + c + d + e + f + g;
}
