/* The analysis server: answers each runtime's train_request on a unix socket
 * (protocol.h) from a thread of the `icpp train` process. */
#include "train/server.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* A runtime that stalls mid-request must not stall training. */
#define ANSWER_TIMEOUT_MS 10000

static void answer(struct train_server *s, int fd)
{
	struct train_request req;
	char path[TRAIN_PATH_MAX];
	if (train_read_full(fd, &req, sizeof(req), ANSWER_TIMEOUT_MS) < 0 || req.magic != TRAIN_REQ_MAGIC ||
	    req.path_len == 0 || req.path_len >= sizeof(path) || train_read_full(fd, path, req.path_len, ANSWER_TIMEOUT_MS) < 0)
		return;
	path[req.path_len] = 0;
	const struct analysed_module *am = analysis_get(s->cache, path);
	struct train_reply rep = {.status = -1};
	if (am)
		rep = am->reply;
	else
		snprintf(rep.error, sizeof(rep.error), "out of memory analysing %.200s", path);
	if (train_write_full(fd, &rep, sizeof(rep)) == 0 && rep.status == 0)
		train_write_full(fd, am->sites, rep.nsites * sizeof(*am->sites));
}

static void *serve(void *arg)
{
	struct train_server *s = arg;
	for (;;) {
		struct pollfd p[2] = {{.fd = s->listen_fd, .events = POLLIN},
				      {.fd = s->stop_pipe[0], .events = POLLIN}};
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		if (!(p[0].revents & POLLIN))
			continue;
		int fd = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		answer(s, fd);
		close(fd);
	}
	return NULL;
}

int server_start(struct train_server *s, const char *dir, struct analysis_cache *cache,
		 char *err, size_t errlen)
{
	struct sockaddr_un addr = {.sun_family = AF_UNIX};
	s->cache = cache;
	s->listen_fd = -1;
	if (snprintf(addr.sun_path, sizeof(addr.sun_path), "%s/analysis.sock", dir) >=
	    (int)sizeof(addr.sun_path)) {
		snprintf(err, errlen, "temporary directory path too long: %s (set TMPDIR shorter)", dir);
		return -1;
	}
	memcpy(s->path, addr.sun_path, sizeof(s->path));
	s->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s->listen_fd < 0 || bind(s->listen_fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(s->listen_fd, 64) < 0 || pipe2(s->stop_pipe, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot listen on %s: %s", addr.sun_path, strerror(errno));
		if (s->listen_fd >= 0)
			close(s->listen_fd);
		return -1;
	}
	if ((errno = pthread_create(&s->thread, NULL, serve, s)) != 0) {
		snprintf(err, errlen, "cannot start the analysis thread: %s", strerror(errno));
		close(s->listen_fd);
		close(s->stop_pipe[0]);
		close(s->stop_pipe[1]);
		return -1;
	}
	return 0;
}

void server_stop(struct train_server *s)
{
	if (write(s->stop_pipe[1], "x", 1) == 1)
		pthread_join(s->thread, NULL);
	close(s->stop_pipe[0]);
	close(s->stop_pipe[1]);
	close(s->listen_fd);
	unlink(s->path);
}
