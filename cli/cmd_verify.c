/* icpp verify OUT -- ARGS: train a program written by icpp rewrite and check
 * every observed call path against the height the rewrite predicted
 * (rewriter/rewriter.h section 3; training is train/train.h's). */
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "binary/binary.h"
#include "cli/cmds.h"
#include "pathmap/pathmap.h"
#include "rewriter/rewriter.h"
#include "train/train.h"

static const char usage_text[] =
	"usage: icpp verify OUT [-m MAP] [--exec PROG] [--allow-new] [--show N] [-q] -- [ARGS...]\n"
	"\n"
	"Run OUT, a program written by icpp rewrite, once with ARGS under icpp train, and\n"
	"check that every call path it takes has exactly the stack height the rewrite\n"
	"predicted (MAP).  Trampoline frames of wrapped callsites are removed first,\n"
	"OUT's and those of the libraries rewritten with it (icpp rewrite --lib) that\n"
	"the run loads.\n"
	"OUT's output, but not its exit status, is its own.  Exit status 0 when every\n"
	"observed path matches, 1 when some path has another height or (without\n"
	"--allow-new) is not in the prediction, or when OUT crashed (SIGSEGV, SIGILL,\n"
	"SIGTRAP, SIGBUS, SIGFPE, SIGABRT, SIGSYS; not a signal sent to stop it), 2 on\n"
	"a usage error.\n"
	"\n"
	"options:\n"
	"  -m, --map MAP   the predicted pathmap (default: OUT + .icpp)\n"
	"  --exec PROG     run PROG (a command) instead of OUT, for a rewritten shared\n"
	"                  object OUT that PROG loads (e.g. through LD_LIBRARY_PATH)\n"
	"  --allow-new     paths the prediction lacks are not a failure (ARGS differ from\n"
	"                  the training run's)\n"
	"  --show N        list up to N offending paths, wrong heights first (default 10)\n"
	"  -q, --quiet     only the verdict\n"
	"  -h, --help      show this help\n"
	"\n"
	"example:\n"
	"  icpp rewrite ./app -m app.icpp -o app.rw && icpp verify app.rw -- input.txt\n";

/* Each module's build-id as trained and its icpp note (rw_orig_id): from
 * the note when it was rewritten, else its own id and no note. */
struct orig_ids {
	struct rw_orig_id *v;
	struct rw_note *notes;
	uint32_t n;
};

static void orig_ids_free(struct orig_ids *o)
{
	for (uint32_t i = 0; o->v && i < o->n; i++)
		if (o->v[i].note)
			rw_note_free(&o->notes[i]);
	free(o->v);
	free(o->notes);
}

/* 0, or -1 when out of memory. */
static int orig_ids(const struct pathmap *obs, struct orig_ids *o)
{
	o->n = obs->nmodules;
	o->v = calloc(o->n + 1, sizeof(*o->v));
	o->notes = calloc(o->n + 1, sizeof(*o->notes));
	if (!o->v || !o->notes) {
		orig_ids_free(o);
		return -1;
	}
	for (uint32_t i = 0; i < o->n; i++) {
		const struct pm_module *md = &obs->modules[i];
		char err[256];
		if (rw_note_read(md->path, &o->notes[i], err, sizeof(err)) == 0) {
			memcpy(o->v[i].id, o->notes[i].orig_id, o->notes[i].orig_id_len);
			o->v[i].len = o->notes[i].orig_id_len;
			o->v[i].note = &o->notes[i];
		} else {
			memcpy(o->v[i].id, md->build_id, md->build_id_len);
			o->v[i].len = md->build_id_len;
		}
	}
	return 0;
}

/* The libraries icpp rewrite wrote with OUT (rewrite --lib): every module of
 * the run other than OUT (module m) that carries an icpp note and whose build
 * the prediction names.  Their trampoline frames are removed from *obs as
 * OUT's are, and rewritten[] marks them and OUT (their notes: orig, read by
 * orig_ids).  0, or -1 and one line. */
static int collapse_libs(const struct pathmap *pred, uint32_t m, const struct rw_orig_id *orig,
			 bool *rewritten, struct pathmap **obs, char *err, size_t errlen)
{
	rewritten[m] = true;
	for (uint32_t i = 0; i < (*obs)->nmodules; i++) {
		const struct pm_module *md = &(*obs)->modules[i];
		struct pathmap *next;
		if (i == m || !md->build_id_len || !orig[i].note ||
		    pm_module_by_build_id(pred, md->build_id, md->build_id_len) == PM_NONE)
			continue;
		if (rw_collapse(*obs, i, orig[i].note, orig, &next, err, errlen) < 0)
			return -1;
		pm_free(*obs);
		*obs = next;
		rewritten[i] = true;
	}
	return 0;
}

/* A library the prediction has rewritten (OUT.libs/LIB, with its icpp note)
 * that the run loaded as its original instead (the same build-id as the
 * note's: LD_LIBRARY_PATH unset): its paths would all be "not predicted".
 * 0 when none, else -1 after one line naming it. */
static int check_libs_loaded(const struct pathmap *pred, const struct pathmap *trained)
{
	for (uint32_t i = 0; i < pred->nmodules; i++) {
		const struct pm_module *pmd = &pred->modules[i];
		struct rw_note note;
		char err[256];
		if (pm_module_by_build_id(trained, pmd->build_id, pmd->build_id_len) != PM_NONE ||
		    rw_note_read(pmd->path, &note, err, sizeof(err)) != 0)
			continue;
		uint32_t o = pm_module_by_build_id(trained, note.orig_id, note.orig_id_len);
		rw_note_free(&note);
		if (o == PM_NONE)
			continue;
		char dir[4096];
		snprintf(dir, sizeof(dir), "%s", pmd->path);
		char *slash = strrchr(dir, '/');
		if (slash)
			*slash = 0;
		cli_error("verify", "the run loaded %s, not its rewritten copy %s: run with "
			  "LD_LIBRARY_PATH=%s", trained->modules[o].path, pmd->path,
			  slash ? dir : ".");
		return -1;
	}
	return 0;
}

/* What the command line asks for: OUT, its options, the arguments after
 * "--" (argv[args] on). */
struct verify_args {
	const char *prog, *map, *exec_prog;
	bool allow_new, quiet;
	long show;
	int args;
	char mapbuf[4096];
};

/* -1 to go on; else the exit status (0 after --help, 2 after one line). */
static int parse_args(int argc, char **argv, struct verify_args *a)
{
	static const struct option opts[] = {
		{"map", required_argument, NULL, 'm'},
		{"allow-new", no_argument, NULL, 'a'},
		{"exec", required_argument, NULL, 'e'},
		{"show", required_argument, NULL, 's'},
		{"quiet", no_argument, NULL, 'q'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	char *end;
	int c;
	/* options anywhere before "--"; the program's arguments after it */
	int dashes = argc;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			dashes = i;
			break;
		}
	optind = 0;
	opterr = 0;
	while ((c = getopt_long(dashes, argv, "m:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'm':
			a->map = optarg;
			break;
		case 'a':
			a->allow_new = true;
			break;
		case 'e':
			a->exec_prog = optarg;
			break;
		case 's':
			a->show = strtol(optarg, &end, 10);
			if (!*optarg || *end || a->show < 0 || a->show > 100000) {
				cli_error("verify", "--show wants a count, not '%s'", optarg);
				return 2;
			}
			break;
		case 'q':
			a->quiet = true;
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			return cli_bad_option("verify", argv[optind - 1]);
		}
	}
	if (optind >= dashes) {
		cli_error("verify", "expected a program; usage: icpp verify OUT [-m MAP] -- ARGS");
		return 2;
	}
	a->prog = argv[optind++];
	if (optind < dashes) {
		cli_error("verify", "put the program's arguments after '--': icpp verify %s -- ARGS",
			  a->prog);
		return 2;
	}
	a->args = dashes < argc ? dashes + 1 : argc;
	if (!a->map) {
		snprintf(a->mapbuf, sizeof(a->mapbuf), "%s.icpp", a->prog);
		a->map = a->mapbuf;
	}
	return -1;
}

/* What runs: --exec's program, or OUT as a file (not a command to look up
 * in PATH). */
static void run_name(const struct verify_args *a, char *buf, size_t len)
{
	if (a->exec_prog)
		snprintf(buf, len, "%s", a->exec_prog);
	else
		snprintf(buf, len, "%s%s", strchr(a->prog, '/') ? "" : "./", a->prog);
}

/* OUT (or --exec's program) run under training with the arguments: what it
 * called, into trained.  0, or -1 after one line. */
static int run_trained(const struct verify_args *a, int argc, char **argv, struct pathmap *trained,
		       struct train_result *res)
{
	char err[1024], runtime[4096], exe[4096];
	if (train_find_runtime(runtime, sizeof(runtime), err, sizeof(err)) < 0) {
		cli_error("verify", "%s", err);
		return -1;
	}
	char **targv = calloc((size_t)(argc - a->args) + 2, sizeof(*targv));
	if (!targv) {
		cli_error("verify", "out of memory");
		return -1;
	}
	run_name(a, exe, sizeof(exe));
	targv[0] = exe;
	for (int i = a->args; i < argc; i++)
		targv[i - a->args + 1] = argv[i];
	int rc = train_run(targv, runtime, trained, res, err, sizeof(err));
	if (rc < 0)
		cli_error("verify", "training %s failed: %s", a->prog, err);
	free(targv);
	return rc;
}

/* The observed pathmap in the original program's terms (obs), and which
 * modules were rewritten, from the run's pathmap (OUT its module m).  0, or
 * -1 after one line. */
static int observed(const struct pathmap *pred, struct pathmap *trained, uint32_t m,
		    const struct rw_note *note, struct pathmap **obs, bool **rewritten)
{
	char err[1024];
	struct orig_ids orig = {0};
	*rewritten = calloc(trained->nmodules, sizeof(**rewritten));
	if (!*rewritten || orig_ids(trained, &orig) < 0) {
		cli_error("verify", "out of memory");
		return -1;
	}
	int rc = rw_collapse(trained, m, note, orig.v, obs, err, sizeof(err));
	if (rc == 0)
		rc = collapse_libs(pred, m, orig.v, *rewritten, obs, err, sizeof(err));
	if (rc < 0)
		cli_error("verify", "%s", err);
	orig_ids_free(&orig);
	return rc;
}

/* Did the run end by a signal of its own fault?  Then nothing after it was
 * checked, and a rewrite that crashes where the original does not is broken:
 * verify fails.  A signal sent from outside (SIGINT, SIGTERM, ...) is how a
 * server stops, and fails nothing. */
static bool crashed(int wait_status)
{
	if (!WIFSIGNALED(wait_status))
		return false;
	switch (WTERMSIG(wait_status)) {
	case SIGSEGV: case SIGBUS: case SIGILL: case SIGTRAP: case SIGFPE: case SIGABRT: case SIGSYS:
		return true;
	default:
		return false;
	}
}

static void print_result(const char *prog, int wait_status, const struct rw_verify_result *vr)
{
	if (WIFEXITED(wait_status))
		fprintf(stderr, "icpp verify: %s exited with status %d\n", prog, WEXITSTATUS(wait_status));
	else if (WIFSIGNALED(wait_status))
		fprintf(stderr, "icpp verify: %s was killed by signal %d\n", prog, WTERMSIG(wait_status));
	fprintf(stderr, "icpp verify: %" PRIu64 " call paths observed: %" PRIu64 " at their "
		"predicted height, %" PRIu64 " at another height, %" PRIu64 " not predicted; %"
		PRIu64 " predicted paths not taken\n", vr->observed, vr->matched, vr->mismatched,
		vr->unpredicted, vr->unobserved);
	if (vr->varying)
		fprintf(stderr, "icpp verify: %" PRIu64 " call paths below a frame whose size "
			"varies (training saw its calls at several heights, or it is of a module "
			"not rewritten, and this run has them at another): checked by callsite "
			"path alone\n", vr->varying);
	if (vr->outside)
		fprintf(stderr, "icpp verify: %" PRIu64 " call paths with no frame of %s at "
			"another height than trained: the rewrite cannot move them (they vary "
			"between runs)\n", vr->outside, prog);
	if (vr->hidden)
		fprintf(stderr, "icpp verify: %" PRIu64 " call paths under a frame training "
			"reconstructed (stale or rebuilt parent, landing pad), checked by function, "
			"callsite and height alone: %" PRIu64 " predicted, %" PRIu64 " at another "
			"height (or not trained)\n",
			vr->hidden, vr->hidden_matched, vr->hidden_mismatched);
	fprintf(stderr, "icpp verify: precise paths: %.1f%% predicted, %.1f%% observed\n",
		vr->precise_predicted, vr->precise_observed);
}

int cmd_verify(int argc, char **argv)
{
	struct verify_args a = {.show = 10};
	int rc = parse_args(argc, argv, &a);
	if (rc >= 0)
		return rc;
	const char *prog = a.prog;
	char err[1024];
	struct rw_note note = {0};
	struct pathmap *pred = NULL, *trained = NULL, *obs = NULL;
	struct train_result res = {0};
	struct bin_module *bm = NULL;
	bool *rewritten = NULL;
	rc = 1;
	int nr = rw_note_read(prog, &note, err, sizeof(err));
	if (nr < 0) {
		cli_error("verify", "%s", err);
		return 1;
	}
	if (nr > 0) {
		cli_error("verify", "%s was not written by icpp rewrite (it has no icpp note)", prog);
		return 1;
	}
	if (pm_read(a.map, &pred, err, sizeof(err)) < 0 || !(bm = bin_open(prog, err, sizeof(err)))) {
		cli_error("verify", "%s", err);
		goto out;
	}
	if (!(trained = pm_new())) {
		cli_error("verify", "out of memory");
		goto out;
	}
	if (run_trained(&a, argc, argv, trained, &res) < 0)
		goto out;
	const uint8_t *id;
	size_t idlen = bin_build_id(bm, &id);
	uint32_t m = idlen ? pm_module_by_build_id(trained, id, (uint32_t)idlen) : PM_NONE;
	if (m == PM_NONE) {
		char ran[4096];
		run_name(&a, ran, sizeof(ran));
		cli_error("verify", "%s ran, but training recorded no call of %s", ran, prog);
		goto out;
	}
	if (check_libs_loaded(pred, trained) < 0 ||
	    observed(pred, trained, m, &note, &obs, &rewritten) < 0)
		goto out;
	struct rw_verify_result vr;
	if (rw_verify(pred, obs, rewritten, a.quiet ? NULL : stderr, (unsigned)a.show, &vr, err,
		      sizeof(err)) < 0) {
		cli_error("verify", "%s", err);
		goto out;
	}
	bool crash = crashed(res.wait_status);
	bool ok = !crash && !vr.mismatched && (a.allow_new || !vr.unpredicted);
	if (!a.quiet)
		print_result(prog, res.wait_status, &vr);
	if (crash)
		fprintf(stderr, "%s: FAILED: the run crashed (%s): nothing after it was checked; run the "
			"original with the same arguments, and if it does not crash too, the rewrite "
			"is broken\n", prog, strsignal(WTERMSIG(res.wait_status)));
	else
		fprintf(stderr, "%s: %s\n", prog,
			ok ? "ok: every observed call path has its predicted height"
			   : vr.mismatched ? "FAILED: call paths at another height than predicted"
					   : "FAILED: call paths the prediction lacks: this run went where "
					     "training never did (another input, environment, program "
					     "name or thread timing; --allow-new accepts them)");
	rc = ok ? 0 : 1;
out:
	free(rewritten);
	train_result_free(&res);
	rw_note_free(&note);
	pm_free(pred);
	pm_free(trained);
	pm_free(obs);
	if (bm)
		bin_close(bm);
	return rc;
}
