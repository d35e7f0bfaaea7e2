/* cli_run.h: for tests that call a subcommand's cmd_NAME() in-process.
 * cli_run runs it with argv = NAME and the given arguments, and captures what
 * it printed: stdout in cli_out, stderr in cli_err.  With cli_err_tty set,
 * stderr is a terminal (a pseudo-terminal), as a user's is, where commands
 * show their progress. */
#ifndef ICPP_TEST_CLI_RUN_H
#define ICPP_TEST_CLI_RUN_H

#include <fcntl.h>
#include <pty.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"

static char cli_out[1 << 16], cli_err[8192];
static bool cli_err_tty;

/* What waits at a terminal's master side (a few lines fit its buffer, so
 * the command writing them never blocked). */
static void cli_slurp_tty(int fd, char *buf, size_t len)
{
	fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	size_t n = 0;
	for (ssize_t k; n + 1 < len && (k = read(fd, buf + n, len - 1 - n)) > 0;)
		n += (size_t)k;
	buf[n] = 0;
	close(fd);
}

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
	int fo = mkstemp(o), fe, master = -1;
	unlink(o);
	if (cli_err_tty) {
		if (openpty(&master, &fe, NULL, NULL, NULL) < 0) {
			perror("openpty");
			exit(1);
		}
	} else {
		fe = mkstemp(e);
		unlink(e);
	}
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
	if (cli_err_tty) {
		close(fe);
		cli_slurp_tty(master, cli_err, sizeof(cli_err));
	} else {
		cli_slurp(fe, cli_err, sizeof(cli_err));
	}
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
