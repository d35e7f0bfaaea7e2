/* train_run: one training session (see train.h). */
#include "train/train.h"

#include <errno.h>
#include <dirent.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "train/analysis.h"
#include "train/collect.h"
#include "train/server.h"

extern char **environ;

int train_find_runtime(char *out, size_t len, char *err, size_t errlen)
{
	const char *env = getenv("ICPP_RUNTIME");
	if (env) {
		if (access(env, R_OK) == 0 && snprintf(out, len, "%s", env) < (int)len)
			return 0;
		snprintf(err, errlen, "ICPP_RUNTIME=%s is not readable", env);
		return -1;
	}
	char exe[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		const char *dir = dirname(exe);
		const char *places[] = {"%s/" ICPP_RUNTIME_NAME, "%s/../lib/icpp/" ICPP_RUNTIME_NAME};
		for (size_t i = 0; i < sizeof(places) / sizeof(places[0]); i++) {
			char cand[PATH_MAX];
			snprintf(cand, sizeof(cand), places[i], dir);
			if (access(cand, R_OK) == 0 && realpath(cand, out) && strlen(out) < len)
				return 0;
		}
	}
	snprintf(err, errlen, "cannot find %s beside the icpp executable (reinstall icpp, "
		 "or set ICPP_RUNTIME to its path)", ICPP_RUNTIME_NAME);
	return -1;
}

static void remove_run_dir(const char *dir);

/* The run directories of sessions that ended without removing theirs (icpp
 * train killed by SIGKILL; the record files keep the memory of tmpfs until
 * they go): a session holds a lock on its directory for as long as it runs,
 * so one that can be locked is nobody's.  Only this user's, and none made
 * in the last minute (between its mkdtemp and its lock a directory is
 * unlocked). */
static void sweep_stale(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "icpp-train.", 11))
			continue;
		char path[PATH_MAX];
		struct stat st;
		snprintf(path, sizeof(path), "%s/%s", base, e->d_name);
		int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (fstat(fd, &st) == 0 && st.st_uid == geteuid() && st.st_mtime < time(NULL) - 60 &&
		    flock(fd, LOCK_EX | LOCK_NB) == 0)
			remove_run_dir(path);
		close(fd);
	}
	if (d)
		closedir(d);
}

/* A private directory for the socket and the record files: tmpfs if there
 * is one, since the record files are shared mappings written on every new
 * path; locked (*lock_fd) while the session runs. */
static int make_run_dir(char *dir, size_t len, int *lock_fd, char *err, size_t errlen)
{
	const char *bases[] = {"/dev/shm", getenv("TMPDIR"), "/tmp"};
	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		if (!bases[i] || access(bases[i], W_OK) != 0)
			continue;
		sweep_stale(bases[i]);
		if (snprintf(dir, len, "%.3000s/icpp-train.XXXXXX", bases[i]) >= (int)len || !mkdtemp(dir))
			continue;
		*lock_fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (*lock_fd >= 0 && flock(*lock_fd, LOCK_EX | LOCK_NB) == 0)
			return 0;
		snprintf(err, errlen, "cannot lock %s: %s", dir, strerror(errno));
		if (*lock_fd >= 0)
			close(*lock_fd);
		rmdir(dir);
		return -1;
	}
	snprintf(err, errlen, "cannot create a temporary directory (is /tmp writable?)");
	return -1;
}

static void remove_run_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			unlinkat(dirfd(d), e->d_name, 0);
	if (d)
		closedir(d);
	rmdir(dir);
}

/* The program's environment: ours plus the runtime and where to reach us. */
static char **program_env(const char *runtime, const char *dir, const char *sock)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **env = calloc(n + 4, sizeof(*env));
	if (!env)
		return NULL;
	const char *old = getenv("LD_PRELOAD");
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (strncmp(environ[i], "LD_PRELOAD=", 11) && strncmp(environ[i], ICPP_ENV_DIR "=", strlen(ICPP_ENV_DIR) + 1) &&
		    strncmp(environ[i], ICPP_ENV_SOCKET "=", strlen(ICPP_ENV_SOCKET) + 1))
			env[k++] = environ[i];
	if (asprintf(&env[k++], "LD_PRELOAD=%s%s%s", runtime, old && *old ? ":" : "", old ? old : "") < 0 ||
	    asprintf(&env[k++], ICPP_ENV_DIR "=%s", dir) < 0 ||
	    asprintf(&env[k++], ICPP_ENV_SOCKET "=%s", sock) < 0) {
		free(env);
		return NULL;
	}
	return env;
}

static pid_t program;

static void forward_signal(int sig)
{
	if (program > 0)
		kill(program, sig);
}

/* Start argv; the child reports a failed exec through a close-on-exec pipe. */
static pid_t spawn(char *const argv[], char **env, char *err, size_t errlen)
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) < 0) {
		snprintf(err, errlen, "cannot create a pipe: %s", strerror(errno));
		return -1;
	}
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		execvpe(argv[0], argv, env);
		int e = errno;
		if (write(p[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(p[1]);
	int e = 0;
	ssize_t r = pid > 0 ? read(p[0], &e, sizeof(e)) : -1;
	close(p[0]);
	if (pid < 0 || r > 0) {
		snprintf(err, errlen, "cannot run '%s': %s", argv[0], strerror(pid < 0 ? errno : e));
		if (pid > 0)
			waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

/* Wait for the program, then for every process it left (we are their
 * subreaper): their record files are complete only when they are gone. */
static int wait_all(pid_t pid)
{
	int status = 0, st;
	pid_t w;
	while ((w = waitpid(-1, &st, 0)) != -1 || errno == EINTR)
		if (w == pid)
			status = st;
	return status;
}

void train_result_free(struct train_result *res)
{
	free(res->totals.skipped);
	res->totals.skipped = NULL;
	res->totals.nskipped = 0;
}

int train_run(char *const argv[], const char *runtime_path, struct pathmap *pm,
	      struct train_result *res, char *err, size_t errlen)
{
	char dir[PATH_MAX];
	int lock_fd = -1;
	memset(res, 0, sizeof(*res));
	if (make_run_dir(dir, sizeof(dir), &lock_fd, err, errlen) < 0)
		return -1;
	struct analysis_cache *cache = analysis_cache_new();
	struct train_server server;
	int ret = -1;
	if (!cache) {
		snprintf(err, errlen, "out of memory");
		goto out_dir;
	}
	if (server_start(&server, dir, cache, err, errlen) < 0)
		goto out_cache;
	char **env = program_env(runtime_path, dir, server.path);
	if (!env) {
		snprintf(err, errlen, "out of memory");
		goto out_server;
	}
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	struct sigaction ign = {.sa_handler = SIG_IGN}, fwd = {.sa_handler = forward_signal}, old[4];
	program = spawn(argv, env, err, errlen);
	if (program > 0) {
		/* Like system(): the terminal's ^C and ^\ reach the program; we
		 * stay to collect what it recorded.  TERM and HUP are passed on. */
		sigaction(SIGINT, &ign, &old[0]);
		sigaction(SIGQUIT, &ign, &old[1]);
		sigaction(SIGTERM, &fwd, &old[2]);
		sigaction(SIGHUP, &fwd, &old[3]);
		res->wait_status = wait_all(program);
		sigaction(SIGINT, &old[0], NULL);
		sigaction(SIGQUIT, &old[1], NULL);
		sigaction(SIGTERM, &old[2], NULL);
		sigaction(SIGHUP, &old[3], NULL);
		ret = 0;
	}
	for (size_t i = 0; env[i]; i++)
		if (!strncmp(env[i], "LD_PRELOAD=", 11) || !strncmp(env[i], "ICPP_TRAIN_", 11))
			free(env[i]);
	free(env);
out_server:
	server_stop(&server);
	if (ret == 0)
		ret = collect_records(dir, cache, pm, &res->totals, err, errlen);
	if (ret == 0 && res->totals.processes == 0) {
		snprintf(err, errlen, "'%s' ran but no process was trained: a statically linked or "
			 "setuid program ignores LD_PRELOAD", argv[0]);
		ret = -1;
	}
out_cache:
	analysis_cache_free(cache);
out_dir:
	remove_run_dir(dir);
	close(lock_fd);
	return ret;
}
