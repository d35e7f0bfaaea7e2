/* fx_tags_eh_lib.cc: the library of run_tags_eh.sh: one function that the
 * program calls from two callsites at one height, and that throws three
 * types by its argument. */
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
