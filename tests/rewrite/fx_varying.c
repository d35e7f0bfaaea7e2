/* fx_varying.c: a frame whose size depends on the input (alloca), as glibc's
 * printf sizes its frame by what it prints, for run_verify.sh.  Built twice,
 * as two programs (FX_NAME differs, and so do their build-ids). */
#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static long leaf(const char *p, long n)
{
	long s = 0;
	for (long i = 0; i < n; i++)
		s += p[i];
	return s;
}

/* its frame is 64 * n bytes larger than with n = 0 */
__attribute__((noinline)) static long sized(long n)
{
	char *p = alloca((size_t)n * 64);
	memset(p, (int)n, (size_t)n * 64);
	return leaf(p, n * 64);
}

int main(int argc, char **argv)
{
	long t = 0;
	for (int i = 1; i < argc; i++)
		t += sized(atol(argv[i]));
	printf("%s %ld\n", FX_NAME, t);
	return 0;
}
