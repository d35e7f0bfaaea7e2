/* icpp train: run a program with frame-neutral entry hooks and write its
 * pathmap (train/train.h does the work). */
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "binary/binary.h"
#include "cli/cmds.h"
#include "pathmap/pathmap.h"
#include "train/train.h"
#include "util/fileio.h"

static void help(FILE *out)
{
	fprintf(out,
		"usage: icpp train [-o MAP] [--append] [-q] -- CMD [ARGS...]\n"
		"\n"
		"Run CMD once, unmodified, with every function entry of the program and its\n"
		"libraries hooked, and write every call path with its exact stack height to\n"
		"a pathmap.  CMD's output, exit status and signals are its own.\n"
		"\n"
		"  -o, --output MAP  pathmap to write (default: CMD's name + .icpp)\n"
		"  -a, --append      merge into MAP if it exists (same binaries only)\n"
		"  -q, --quiet       no summary on stderr\n"
		"  -h, --help        this help\n"
		"\n"
		"example: icpp train -o lua.icpp -- lua5.4 bench.lua\n");
}

/* The file execvp would run, to refuse static programs before running them. */
static bool resolve(const char *cmd, char *out, size_t len)
{
	if (strchr(cmd, '/'))
		return snprintf(out, len, "%s", cmd) < (int)len && access(out, X_OK) == 0;
	const char *path = getenv("PATH");
	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		if (snprintf(out, len, "%.*s/%s", (int)n, n ? p : ".", cmd) < (int)len &&
		    access(out, X_OK) == 0)
			return true;
		p += n + (p[n] == ':');
	}
	return false;
}

/* With --append, the map must describe this very build of the program:
 * refuse before running it rather than after. */
static int same_build(const struct pathmap *old, const char *map, const char *file,
		      const struct bin_module *m)
{
	char real[PATH_MAX];
	const uint8_t *id;
	size_t len = bin_build_id(m, &id);
	if (!old || !realpath(file, real))
		return 0;
	for (uint32_t i = 0; i < old->nmodules; i++) {
		const struct pm_module *pmm = &old->modules[i];
		if (strcmp(pmm->path, real) || (pmm->build_id_len == len && !memcmp(pmm->build_id, id, len)))
			continue;
		cli_error("train", "pathmap %s was trained on a different build of %s: "
			  "train again without --append", map, real);
		return -1;
	}
	return 0;
}

static int check_program(const char *cmd, const struct pathmap *old, const char *map)
{
	char file[PATH_MAX], err[512];
	if (!resolve(cmd, file, sizeof(file))) {
		cli_error("train", "cannot run '%s': not found or not executable", cmd);
		return -1;
	}
	struct bin_module *m = bin_open(file, err, sizeof(err));
	if (!m)
		return 0;                /* a script: its interpreter is what runs */
	int ret = 0;
	if (!bin_has_interp(m)) {
		cli_error("train", "%s is statically linked: icpp train needs a dynamically "
			  "linked program (it preloads its runtime)", file);
		ret = -1;
	} else {
		ret = same_build(old, map, file, m);
	}
	bin_close(m);
	return ret;
}

static void print_skips(const uint32_t *skipped)
{
	const char *sep = "                   not hooked: ";
	for (int k = 0; skipped && k < SKIP_NREASONS; k++) {
		if (!skipped[k])
			continue;
		fprintf(stderr, "%s%u %s", sep, skipped[k], train_skip_names[k]);
		sep = ", ";
	}
	if (sep[0] == ',')
		fputc('\n', stderr);
}

static void summary(struct pathmap *pm, const struct train_result *res, const char *out)
{
	const struct train_totals *t = &res->totals;
	fprintf(stderr, "icpp: trained %llu process image(s), %llu thread(s)\n",
		(unsigned long long)t->processes, (unsigned long long)t->threads);
	fprintf(stderr, "icpp: coverage (functions hooked / found):\n");
	for (uint32_t i = 0; i < pm->nmodules; i++) {
		const struct pm_module *m = &pm->modules[i];
		if (!m->functions_found)
			continue;
		fprintf(stderr, "  %6u / %-6u %5.1f%%  %s\n", m->functions_hooked, m->functions_found,
			100.0 * m->functions_hooked / m->functions_found, m->path);
		print_skips(i < t->nskipped ? t->skipped[i] : NULL);
	}
	struct pm_stats st;
	if (pm_stats(pm, &st) == 0)
		fprintf(stderr, "icpp: %llu paths, %llu CIDs, %.1f%% of paths precise; wrote %s\n",
			(unsigned long long)st.paths, (unsigned long long)st.cids,
			st.paths ? 100.0 * st.precise_paths / st.paths : 0.0, out);
	if (t->in_signal)
		fprintf(stderr, "icpp: not recorded: %llu entries in signal handlers (their heights "
			"depend on where the kernel placed the signal frame)\n",
			(unsigned long long)t->in_signal);
	if (t->stale_frames || t->rebuilt_frames || t->unrebuilt)
		fprintf(stderr, "icpp: paths corrected at collection: %llu past a returned frame, "
			"%llu under a caller rebuilt from CFI (its entry was not seen); %llu dropped "
			"(caller not rebuildable)\n",
			(unsigned long long)t->stale_frames, (unsigned long long)t->rebuilt_frames,
			(unsigned long long)t->unrebuilt);
	if (t->in_realign)
		fprintf(stderr, "icpp: not recorded: %llu entries under frames that realign the stack "
			"(their heights depend on the stack's alignment; e.g. ld.so's lazy binding)\n",
			(unsigned long long)t->in_realign);
	if (t->off_stack || t->too_deep || t->nodes_full || t->invalid_nodes)
		fprintf(stderr, "icpp: not recorded: %llu entries off the thread stack "
			"(sigaltstack/coroutines), %llu too deep, %llu after the node log filled, "
			"%llu half-written nodes\n",
			(unsigned long long)t->off_stack, (unsigned long long)t->too_deep,
			(unsigned long long)t->nodes_full, (unsigned long long)t->invalid_nodes);
}

/* Exit the way the program did: same code, or the same signal. */
static int exit_like(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		signal(sig, SIG_DFL);
		raise(sig);
		return 128 + sig;
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int cmd_train(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"output", required_argument, NULL, 'o'},
		{"append", no_argument, NULL, 'a'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{0},
	};
	const char *out = NULL;
	bool append = false, quiet = false;
	int c;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+o:aqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'a': append = true; break;
		case 'q': quiet = true; break;
		case 'h': help(stdout); return 0;
		default: return cli_bad_option("train", argv[optind - 1]);
		}
	}
	if (optind >= argc) {
		cli_error("train", "no program given: icpp train [-o MAP] -- CMD [ARGS...]");
		return 2;
	}
	char **cmd = argv + optind;
	char default_out[PATH_MAX], runtime[PATH_MAX], err[1024] = "";
	if (!out) {
		const char *base = strrchr(cmd[0], '/');
		snprintf(default_out, sizeof(default_out), "%s.icpp", base ? base + 1 : cmd[0]);
		out = default_out;
	}
	struct pathmap *pm = NULL, *old = NULL;
	if (append && access(out, F_OK) == 0 && pm_read(out, &old, err, sizeof(err)) < 0) {
		cli_error("train", "%s", err);
		return 1;
	}
	if (check_program(cmd[0], old, out) < 0 || train_find_runtime(runtime, sizeof(runtime), err, sizeof(err)) < 0) {
		if (err[0])
			cli_error("train", "%s", err);
		pm_free(old);
		return 1;
	}
	struct train_result res = {0};
	int ret = 1;
	if (!(pm = pm_new())) {
		cli_error("train", "out of memory");
	} else if (train_run(cmd, runtime, pm, &res, err, sizeof(err)) < 0) {
		cli_error("train", "%s", err);
	} else if (old && pm_merge(old, pm, err, sizeof(err)) < 0) {
		cli_error("train", "%s", err);
	} else if (pm_write(old ? old : pm, out, err, sizeof(err)) < 0) {
		cli_error("train", "%s", err);
	} else {
		if (!quiet)
			summary(old ? old : pm, &res, out);
		ret = -1;
	}
	train_result_free(&res);
	pm_free(pm);
	pm_free(old);
	return ret == -1 ? exit_like(res.wait_status) : ret;
}
