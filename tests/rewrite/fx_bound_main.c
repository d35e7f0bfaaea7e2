/* fx_bound_main.c: the program of run_bound.sh: both orders of the
 * library's two functions, each ending in its leaf. */
#include <stdio.h>

int fx_bound_a(int x, int depth);
int fx_bound_b(int x, int depth);

int main(void)
{
	long sum = 0;
	for (int i = 0; i < 1000; i++)
		sum += fx_bound_a(i, 1) + 2 * fx_bound_b(i, 1);
	printf("%ld\n", sum);
	return 0;
}
