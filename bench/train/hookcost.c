/* hookcost: one callsite calling one tiny function N million times: the
 * training benchmark's measure of the bare cost of a hooked call (one path,
 * so no time goes to new nodes or to collection). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static long leaf(long i)
{
	return i ^ (i >> 3);
}

int main(int argc, char **argv)
{
	long n = (argc > 1 ? atol(argv[1]) : 20) * 1000000L, acc = 0;
	for (long i = 0; i < n; i++)
		acc += leaf(i);
	printf("%ld\n", acc);
	return 0;
}
