/* fx_tags_eh_main.cc: thesis Figure 5.4 across modules from C++ functions
 * with exception tables, for run_tags_eh.sh.
 * main > fx_a > fx_b > fx_eh_leaf and main > fx_b > fx_a > fx_eh_leaf use
 * the same functions in another order: under --no-wrap only a clone of the
 * library's leaf for one of the program's calls separates them, taken by a
 * tag on the call, whose stub returns into the caller's frame and so needs
 * an exception table of its own (rewriter.h section 1, Tagged calls).
 * The leaf throws three types: fx_a catches two in two handlers (its
 * landing pad tells them apart by the selector, the number of the type's
 * entry in the caller's type table), fx_b destroys a local on the way (a
 * cleanup, then the exception goes on), and main catches the third after
 * fx_a's handlers do not match.  fx_via calls through a pointer, a call
 * that a plan may promote; fx_wide pushes arguments for its call.  The output records which handler ran and the
 * destructors' order. */
#include <cstdio>
#include <stdexcept>

int fx_eh_leaf(int x);

static long trail;   /* ids of the destructors, in the order they ran */

struct mark {
	int id;
	~mark() { trail = (trail * 10 + id) % 1000000007; }
};

__attribute__((noinline, noclone)) int fx_b(int x, int d);

__attribute__((noinline, noclone)) int fx_a(int x, int d)
{
	volatile char buf[32];
	buf[0] = (char)x;
	try {
		return (d ? fx_b(buf[0], d - 1) : fx_eh_leaf(buf[0])) + 1;
	} catch (const std::out_of_range &) {
		return -200;
	} catch (const std::runtime_error &) {
		return -100;
	}
}

__attribute__((noinline, noclone)) int fx_b(int x, int d)
{
	volatile char buf[32];
	mark m{(x & 7) + 1};
	buf[0] = (char)x;
	return (d ? fx_a(buf[0], d - 1) : fx_eh_leaf(buf[0])) + 2;
}

/* an indirect call from a function with a handler and a cleanup, which a
 * plan promotes to a clone of fx_eh_hop (rewriter.h section 1, Promoted
 * calls): exceptions thrown below come back through the promotion stub */
__attribute__((noinline, noclone)) int fx_eh_hop(int x)
{
	return fx_eh_leaf(x) + 3;
}

int (*volatile fx_hop)(int) = fx_eh_hop;

__attribute__((noinline, noclone)) int fx_via(int x)
{
	volatile char buf[64];
	buf[x & 63] = (char)x;
	mark m{9};
	int (*f)(int) = fx_hop;
	try {
		return f(buf[x & 63]) * 2;
	} catch (const std::runtime_error &) {
		return -300;
	}
}

/* a call with arguments pushed on the stack (its row in the CFI has a
 * DW_CFA_GNU_args_size, which the landing pad's stack pointer takes off)
 * from a function with a handler and a cleanup */
int fx_eh_wide(int a, int b, int c, int d, int e, int f, int g, int h, int i);

__attribute__((noinline, noclone)) int fx_wide(int x)
{
	mark m{5};
	try {
		return fx_eh_wide(x, 1, 2, 3, 4, 5, 6, x + 7, x + 8) + 1;
	} catch (const std::runtime_error &) {
		return -500;
	}
}

int main(int argc, char **argv)
{
	(void)argv;
	for (int i = 0; i < 24; i++) {
		int a, b, v, w = fx_wide(argc + i);
		try {
			v = fx_via(argc + i);
		} catch (int e) {
			v = -e;
		} catch (const std::logic_error &) {
			v = -400;
		}
		try {
			a = fx_a(argc + i, 1);
		} catch (int e) {
			a = -e;
		}
		try {
			b = fx_b(argc + i, 1);
		} catch (int e) {
			b = -e;
		}
		printf("%d %d %d %d %d %ld\n", i, a, b, v, w, trail);
	}
	return 0;
}
