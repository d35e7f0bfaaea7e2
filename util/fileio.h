/* fileio: how icpp writes outputs and reads inputs.
 *
 * Every output is written to a temporary file in the destination's directory
 * and renamed over the destination only when complete (af_commit), so a crash
 * or an error never leaves a half-written file; the input is never touched.
 * Errors are one line in the caller's buffer, saying what to do.
 */
#ifndef ICPP_FILEIO_H
#define ICPP_FILEIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

struct atomic_file {
	FILE *f;
	char tmp[4096];
	char path[4096];
};

/* Create a temporary file beside path, with mode bits `mode` (before umask). */
int af_open(struct atomic_file *af, const char *path, mode_t mode, char *err, size_t errlen);
/* Flush, fsync and rename over path.  On failure the temporary is removed. */
int af_commit(struct atomic_file *af, char *err, size_t errlen);
/* Give up: close and remove the temporary. */
void af_abort(struct atomic_file *af);

/* Read a whole regular file into a malloc'd buffer (*len bytes; a NUL follows
 * the data).  -1 with a message naming the file otherwise. */
int read_file(const char *path, void **buf, size_t *len, char *err, size_t errlen);

/* Whether paths a and b both exist and name one file (the same real path,
 * links resolved). */
bool same_file(const char *a, const char *b);

#endif
