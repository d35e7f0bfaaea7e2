/* cli_error, cli_bad_option: the one-line messages every subcommand prints. */
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

int cli_bad_option(const char *cmd, const char *arg)
{
	cli_error(cmd, "unknown option or missing value in '%s'; 'icpp %s --help' lists the options",
		  arg, cmd);
	return 2;
}
