/* plt_prog: calls into libc through PLT stubs, directly (getenv) and by a
 * tail jump (next_char's `jmp fgetc@plt`), and a function another one jumps
 * into past its first instruction (inside_jumper into inside_target, as
 * glibc's mempcpy into memmove).  t_report_plt reads its code; it is never
 * run. */
#include <stdio.h>
#include <stdlib.h>

int inside_target(int x);
int inside_jumper(int x);
__asm__(".text\n"
	".globl inside_target\n"
	".type inside_target, @function\n"
	"inside_target:\n"
	".cfi_startproc\n"
	"	mov %edi, %eax\n"
	"inside_body:\n"
	"	add $1, %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size inside_target, .-inside_target\n"
	".globl inside_jumper\n"
	".type inside_jumper, @function\n"
	"inside_jumper:\n"
	".cfi_startproc\n"
	"	lea 5(%rdi), %edi\n"
	"	jmp inside_body\n"
	".cfi_endproc\n"
	".size inside_jumper, .-inside_jumper\n");

__attribute__((noinline)) int next_char(FILE *f)
{
	return fgetc(f);
}

int main(int argc, char **argv)
{
	const char *home = getenv(argc > 1 ? argv[1] : "HOME");
	return next_char(stdin) + (home != NULL) + inside_target(argc) + inside_jumper(argc);
}
