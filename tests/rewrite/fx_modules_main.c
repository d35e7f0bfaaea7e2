/* fx_modules_main.c: calls fx_modules_lib's entry point (run_modules.sh),
 * from a frame whose size FX_MAIN_PAD sets once per run (glibc's loader
 * sizes its frame by the path of the library it maps, and calls into libc). */
#include <stdio.h>
#include <stdlib.h>

int fx_lib(int x);

int main(int argc, char **argv)
{
	(void)argv;
	const char *pad = getenv("FX_MAIN_PAD");
	volatile char *buf = __builtin_alloca(16 + (pad ? (size_t)atoi(pad) & 4095 : 0));
	buf[0] = (char)argc;
	int s = buf[0] - argc;
	for (int i = 0; i < 4; i++)
		s += fx_lib(argc + i);
	printf("%d\n", s);
	return 0;
}
