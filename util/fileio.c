#include "util/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int af_open(struct atomic_file *af, const char *path, mode_t mode, char *err, size_t errlen)
{
	memset(af, 0, sizeof(*af));
	if (snprintf(af->path, sizeof(af->path), "%s", path) >= (int)sizeof(af->path) ||
	    snprintf(af->tmp, sizeof(af->tmp), "%s.tmp.XXXXXX", path) >= (int)sizeof(af->tmp)) {
		snprintf(err, errlen, "%s: path too long", path);
		return -1;
	}
	int fd = mkstemp(af->tmp);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s (is the directory writable?)",
			 af->tmp, strerror(errno));
		return -1;
	}
	mode_t mask = umask(0);
	umask(mask);
	if (fchmod(fd, mode & ~mask) < 0 || !(af->f = fdopen(fd, "w"))) {
		snprintf(err, errlen, "cannot prepare %s: %s", af->tmp, strerror(errno));
		close(fd);
		unlink(af->tmp);
		return -1;
	}
	return 0;
}

int af_commit(struct atomic_file *af, char *err, size_t errlen)
{
	int bad = ferror(af->f) | fflush(af->f) | fsync(fileno(af->f));
	int saved = errno;
	if (fclose(af->f) != 0 && !bad) {
		bad = 1;
		saved = errno;
	}
	af->f = NULL;
	if (bad || rename(af->tmp, af->path) < 0) {
		if (!bad)
			saved = errno;
		snprintf(err, errlen, "cannot write %s: %s (check free space and permissions)",
			 af->path, strerror(saved));
		unlink(af->tmp);
		return -1;
	}
	return 0;
}

void af_abort(struct atomic_file *af)
{
	if (af->f)
		fclose(af->f);
	af->f = NULL;
	unlink(af->tmp);
}

int read_file(const char *path, void **buf, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot open %s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	char *data = malloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (data && got < (size_t)st.st_size) {
		ssize_t r = read(fd, data + got, (size_t)st.st_size - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (!data || got != (size_t)st.st_size) {
		snprintf(err, errlen, "cannot read %s: %s", path, data ? "short read" : "out of memory");
		free(data);
		return -1;
	}
	data[got] = 0;
	*buf = data;
	*len = got;
	return 0;
}

bool same_file(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];
	return realpath(a, ra) && realpath(b, rb) && !strcmp(ra, rb);
}
