/* t_exec: the image t_procs's child execs (argv[1] = number of discs). */
#include "gt.h"

static long moves;

GT_FN static void hanoi(int n, int from, int to, int via)
{
	GT_ENTER();
	if (n == 0)
		return;
	hanoi(n - 1, from, via, to);
	moves++;
	hanoi(n - 1, via, to, from);
}

GT_FN int main(int argc, char **argv)
{
	GT_ENTER();
	int n = argc > 1 ? atoi(argv[1]) : 3;
	hanoi(n, 1, 3, 2);
	printf("exec hanoi %d: %ld moves\n", n, moves);
	return 0;
}
