// fx_entry_main.cc: main calls fx_entry_x, _y and _z (fx_entry.S), which
// call fx_entry_d at one height; with an argument D throws on some inputs
// and main catches: the exceptions unwind through the entry wrappers.  With
// `tail` no D throws, and X's call of D with 5000 makes X call D again by a
// tail call.
#include <cstdio>
#include <cstring>

extern "C" long fx_entry_x(long);
extern "C" long fx_entry_y(long);
extern "C" long fx_entry_z(long);

static volatile long sink;
static bool throwing;

extern "C" __attribute__((noinline)) long fx_entry_d(long x)
{
	sink = x;
	if (throwing && x % 3 == 0)
		throw x;
	return x * 3 + 1;
}

int main(int argc, char **argv)
{
	bool tail = argc > 1 && !std::strcmp(argv[1], "tail");
	throwing = argc > 1 && !tail;
	long total = 0, thrown = 0;
	for (long i = 0; i < 12; i++) {
		try {
			total += i % 3 == 0 ? fx_entry_x(i) : i % 3 == 1 ? fx_entry_y(i) : fx_entry_z(i + 1);
		} catch (long v) {
			thrown += v;
		}
	}
	if (tail)
		total += fx_entry_x(5000);
	std::printf("total %ld thrown %ld\n", total, thrown);
	return 0;
}
