/* fx_tags_main.c: thesis Figure 5.4 across modules, for run_tags.sh.
 * main > fx_a > fx_b > fx_tag_leaf and main > fx_b > fx_a > fx_tag_leaf
 * use the same functions in another order: the library's leaf is at one
 * height under both, and padding cannot move one against the other.
 * Without wrapping (--no-wrap) only a clone of the leaf for one of the
 * program's calls separates them, taken by a dispatch in the library that
 * tests the call's tag (rewriter.h section 1, Tagged calls).
 * main > fx_tag_far > fx_tag_mid, at a height of its own: fx_tag_mid
 * tail-calls fx_tag_tail, which tail-calls the leaf, so fx_tag_far's one
 * call can be taken by a clone of fx_tag_tail (the program's dispatch tests
 * the return address, in the tagged call's stub) and by a clone of the leaf
 * (the library's dispatch tests the tag). */
#include <stdio.h>

int fx_tag_leaf(int x);

__attribute__((noinline)) int fx_tag_tail(int x)
{
	return fx_tag_leaf(x + 3);
}

static __attribute__((noinline)) int fx_tag_mid(int x)
{
	return fx_tag_tail(x * 2);
}

static __attribute__((noinline)) int fx_tag_far(int x)
{
	volatile char buf[512];
	buf[0] = (char)x;
	return fx_tag_mid(buf[0]) + 5;
}

static __attribute__((noinline)) int fx_b(int x, int d);

static __attribute__((noinline)) int fx_a(int x, int d)
{
	volatile char buf[32];
	buf[0] = (char)x;
	return (d ? fx_b(buf[0], d - 1) : fx_tag_leaf(buf[0])) + 1;
}

static __attribute__((noinline)) int fx_b(int x, int d)
{
	volatile char buf[32];
	buf[0] = (char)x;
	return (d ? fx_a(buf[0], d - 1) : fx_tag_leaf(buf[0])) + 2;
}

int main(int argc, char **argv)
{
	(void)argv;
	int s = 0;
	for (int i = 0; i < 4; i++)
		s += fx_a(argc + i, 1) * fx_b(argc + i, 1) + fx_tag_far(i);
	printf("%d\n", s);
	return 0;
}
