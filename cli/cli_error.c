/* cli_error: the one-line failure message every subcommand prints. */
#include <stdarg.h>
#include <stdio.h>

#include "cli/cmds.h"

void cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "icpp: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}
