/* fx_main.c: the fixture program around fx_frames.S.  With an argument N it
 * prints fx_run(N) = 8N + 109, so a rewritten fixture can be run and checked. */
#include <stdio.h>
#include <stdlib.h>

long fx_run(long x);

int main(int argc, char **argv)
{
	if (argc > 1)
		printf("%ld\n", fx_run(atol(argv[1])));
	return 0;
}
