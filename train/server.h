/* server: the thread of `icpp train` that answers the runtime's analysis
 * requests (protocol.h) from an analysis cache. */
#ifndef ICPP_TRAIN_SERVER_H
#define ICPP_TRAIN_SERVER_H

#include <fcntl.h>
#include <pthread.h>

#include "train/analysis.h"

struct train_server {
	int listen_fd;
	int stop_pipe[2];
	pthread_t thread;
	char path[108];                  /* the socket, in the run's directory */
	struct analysis_cache *cache;
};

int server_start(struct train_server *s, const char *dir, struct analysis_cache *cache,
		 char *err, size_t errlen);
void server_stop(struct train_server *s);

#endif
