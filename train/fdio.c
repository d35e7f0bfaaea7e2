/* Whole reads and writes on the analysis socket, for both sides of
 * protocol.h.  Only libc: the runtime links this too. */
#include "train/protocol.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

int train_write_full(int fd, const void *buf, size_t len)
{
	for (size_t put = 0; put < len;) {
		ssize_t r = write(fd, (const char *)buf + put, len - put);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -1;
		put += (size_t)r;
	}
	return 0;
}

int train_read_full(int fd, void *buf, size_t len, int timeout_ms)
{
	for (size_t got = 0; got < len;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		int ready = poll(&p, 1, timeout_ms);
		if (ready < 0 && errno == EINTR)
			continue;
		if (ready <= 0)
			return -1;
		ssize_t r = read(fd, (char *)buf + got, len - got);
		if (r < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (r <= 0)
			return -1;
		got += (size_t)r;
	}
	return 0;
}
