/* fx_main.c: the fixture program around fx_frames.S.  With an argument N it
 * prints fx_run(N) = 8N + 109, with two, A and B, fx_argpush(A, B) = A + B
 * (passed on the stack), so a rewritten fixture can be run and checked. */
#include <stdio.h>
#include <stdlib.h>

long fx_run(long x);
long fx_argpush(long a, long b);

int main(int argc, char **argv)
{
	if (argc > 2)
		printf("%ld\n", fx_argpush(atol(argv[1]), atol(argv[2])));
	else if (argc > 1)
		printf("%ld\n", fx_run(atol(argv[1])));
	return 0;
}
