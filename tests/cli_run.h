/* cli_run.h: for tests that call a subcommand's cmd_NAME() in-process.
 * cli_run runs it with argv = NAME and the given arguments, and captures what
 * it printed: stdout in cli_out, stderr in cli_err. */
#ifndef ICPP_TEST_CLI_RUN_H
#define ICPP_TEST_CLI_RUN_H

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"

static char cli_out[1 << 16], cli_err[8192];

static void cli_slurp(int fd, char *buf, size_t len)
{
	lseek(fd, 0, SEEK_SET);
	ssize_t n = read(fd, buf, len - 1);
	buf[n > 0 ? n : 0] = 0;
	close(fd);
}

/* cmd(NAME, args...); the arguments end with NULL.  Returns its status. */
static int cli_run(int (*cmd)(int, char **), const char *name, ...)
{
	char *argv[32];
	int argc = 0;
	va_list ap;
	va_start(ap, name);
	argv[argc++] = (char *)name;
	for (const char *a; (a = va_arg(ap, const char *)) && argc < 31;)
		argv[argc++] = (char *)a;
	va_end(ap);
	argv[argc] = NULL;
	char o[] = "/tmp/icpp-cli-XXXXXX", e[] = "/tmp/icpp-cli-XXXXXX";
	int fo = mkstemp(o), fe = mkstemp(e);
	unlink(o);
	unlink(e);
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	dup2(fo, 1);
	dup2(fe, 2);
	int rc = cmd(argc, argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	cli_slurp(fo, cli_out, sizeof(cli_out));
	cli_slurp(fe, cli_err, sizeof(cli_err));
	return rc;
}

#define CONTAINS(hay, needle)                                                            \
	do {                                                                            \
		if (!strstr(hay, needle)) {                                             \
			fprintf(stderr, "%s:%d: missing \"%s\" in:\n%s\n", __FILE__, __LINE__, \
				needle, hay);                                           \
			check_failures++;                                               \
		}                                                                       \
	} while (0)

#endif
