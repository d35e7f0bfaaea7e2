/* fx_xcall_tail.c: run_xcall.sh's tail chain across modules: fx_g ends in a
 * tail call of the library's fx_tag_leaf through the PLT; the two orders of
 * fx_tags_main.c, main > fx_a > fx_b and main > fx_b > fx_a, end in fx_g,
 * so that fx_g's frames and the leaf's beside them share their heights
 * under both.  With --no-wrap only clones separate them: fx_g's for one of
 * its calls and, for that clone's copy of the jump, the leaf's, which the
 * copy enters through the check's thunk (rewriter.h section 1, Tail chains;
 * no dispatch at the leaf). */
#include <stdio.h>

int fx_tag_leaf(int x);

volatile int fx_bias = 1;

/* the jump lies past the bytes an entry's jump would displace */
__attribute__((noinline)) int fx_g(int x)
{
	return fx_tag_leaf(x * fx_bias + 3);
}

static __attribute__((noinline)) int fx_b(int x, int d);

static __attribute__((noinline)) int fx_a(int x, int d)
{
	volatile char buf[32];
	buf[0] = (char)x;
	return (d ? fx_b(buf[0], d - 1) : fx_g(buf[0])) + 1;
}

static __attribute__((noinline)) int fx_b(int x, int d)
{
	volatile char buf[32];
	buf[0] = (char)x;
	return (d ? fx_a(buf[0], d - 1) : fx_g(buf[0])) + 2;
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
