/* fx_xcall_fwd.c: the program of run_xcall.sh's forwarder: the two orders
 * of fx_tags_main.c, main > fx_a > fx_b and main > fx_b > fx_a, ending in
 * the library's fx_fwd, which jumps on to fx_tag_leaf: the leaf's frames at
 * one height under both, separated (with --no-wrap) only by a clone of the
 * leaf for one of the program's calls of fx_fwd, taken by the call's check
 * of its slot (fx_fwd), of the library's marker and of the library's own
 * slot of the leaf (rewriter.h section 1, Cross-module calls).
 * Built with FX_TAIL (fx_xcall_tail), the orders end in the program's fx_g
 * instead, which jumps on to the leaf through the PLT: fx_g's frames and
 * the leaf's beside them, separated only by fx_g's clone for one of its
 * calls and, for that clone's copy of the jump, the leaf's clone, which the
 * copy enters through the check's thunk (rewriter.h section 1, Tail chains;
 * no dispatch at the leaf).
 * Built with FX_HOP (fx_xcall_hop), fx_a's orders end in fx_hop of
 * fx_xcall_hop.so, which jumps on to fx_xcall_lib.so's leaf, fx_b's in
 * fx_hop_sized, which jumps on to fx_hop: forwarders to a third module
 * (libstdc++'s operator delete to libc's free), whose checks read the middle
 * library's slots (rewriter.h section 1, Cross-module calls). */
#include <stdio.h>

#if defined FX_TAIL
int fx_tag_leaf(int x);

volatile int fx_bias = 1;

__attribute__((noinline)) int fx_g(int x)
{
	return fx_tag_leaf(x * fx_bias + 3);
}
#define FX_END_A(x) fx_g(x)
#define FX_END_B(x) fx_g(x)
#elif defined FX_HOP
int fx_hop(int x);
int fx_hop_sized(int x, int size);
#define FX_END_A(x) fx_hop(x)
#define FX_END_B(x) fx_hop_sized(x, 4)
#else
int fx_fwd(int x);
#define FX_END_A(x) fx_fwd(x)
#define FX_END_B(x) fx_fwd(x)
#endif

static __attribute__((noinline)) int fx_b(int x, int d);

static __attribute__((noinline)) int fx_a(int x, int d)
{
	volatile char buf[32];
	buf[0] = (char)x;
	return (d ? fx_b(buf[0], d - 1) : FX_END_A(buf[0])) + 1;
}

static __attribute__((noinline)) int fx_b(int x, int d)
{
	volatile char buf[32];
	buf[0] = (char)x;
	return (d ? fx_a(buf[0], d - 1) : FX_END_B(buf[0])) + 2;
}

int main(int argc, char **argv)
{
	(void)argv;
	int s = 0;
	for (int i = 0; i < 4; i++)
		s += fx_a(argc + i, 1) * fx_b(argc + i, 1);
	printf("%d\n", s);
	return 0;
}
