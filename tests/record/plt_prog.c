/* plt_prog: calls into libc through PLT stubs, directly (getenv) and by a
 * tail jump (next_char's `jmp fgetc@plt`).  t_report_plt reads its code; it
 * is never run. */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) int next_char(FILE *f)
{
	return fgetc(f);
}

int main(int argc, char **argv)
{
	const char *home = getenv(argc > 1 ? argv[1] : "HOME");
	return next_char(stdin) + (home != NULL);
}
