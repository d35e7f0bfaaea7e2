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

/* ten calls of the leaf at one height, each a callsite of its own: each
 * taken by a clone of its own, the library's dispatch searches ten tags */
static __attribute__((noinline)) int fx_tag_many(int x)
{
	volatile char buf[1024];
	buf[0] = (char)x;
	int s = fx_tag_leaf(buf[0]);
	s += fx_tag_leaf(s) * 3;
	s += fx_tag_leaf(s) * 5;
	s += fx_tag_leaf(s) * 7;
	s += fx_tag_leaf(s) * 11;
	s += fx_tag_leaf(s) * 13;
	s += fx_tag_leaf(s) * 17;
	s += fx_tag_leaf(s) * 19;
	s += fx_tag_leaf(s) * 23;
	return s + fx_tag_leaf(s) * 29;
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
	printf("%d\n", s + fx_tag_many(argc));
	return 0;
}
