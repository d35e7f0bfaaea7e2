/* fx_modules_main.c: calls fx_modules_lib's entry point (run_modules.sh). */
#include <stdio.h>

int fx_lib(int x);

int main(int argc, char **argv)
{
	(void)argv;
	int s = 0;
	for (int i = 0; i < 4; i++)
		s += fx_lib(argc + i);
	printf("%d\n", s);
	return 0;
}
