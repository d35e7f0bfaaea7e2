/* What every subcommand shares: its one-line messages and argument parsing
 * (cli/cmds.h). */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmds.h"
#include "binary/binary.h"
#include "disambig/disambig.h"
#include "pathmap/pathmap.h"

void cli_error(const char *cmd, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "icpp: %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int cli_bad_option(const char *cmd, const char *arg)
{
	cli_error(cmd, "unknown option or missing value in '%s'; 'icpp %s --help' lists the options",
		  arg, cmd);
	return 2;
}

bool cli_parse_u64(const char *s, uint64_t *v, uint64_t max)
{
	char *e;
	if (!*s || *s == '-')
		return false;
	unsigned long long x = strtoull(s, &e, 10);
	if (*e || x > max)
		return false;
	*v = x;
	return true;
}

bool cli_parse_code_per_path(const char *cmd, const char *opt, const char *arg, double *weight)
{
	uint64_t v;
	if (!cli_parse_u64(arg, &v, 1u << 20)) {
		cli_error(cmd, "%s wants bytes from 0 (code is free) to 1048576, not '%s'", opt, arg);
		return false;
	}
	*weight = v ? 1.0 / (double)v : 0;
	return true;
}

bool cli_parse_run_weight(const char *cmd, const char *opt, const char *arg, double *weight)
{
	char *end;
	double x = strtod(arg, &end);
	if (!*arg || *end || !(x >= 0 && x <= 1000)) {
		cli_error(cmd, "%s wants a number from 0 (run time is free) to 1000, not '%s'", opt,
			  arg);
		return false;
	}
	*weight = x;
	return true;
}

bool cli_parse_precision(const char *cmd, const char *arg, double *target)
{
	char *end;
	double x = strtod(arg, &end);
	if (!*arg || *end || !(x >= 0 && x <= 100)) {
		cli_error(cmd, "--precision wants a percentage of the reducible paths from 0 (the "
			  "prices as given) to 100, not '%s'", arg);
		return false;
	}
	*target = x / 100;
	return true;
}

void cli_print_topup(FILE *out, const char *prefix, const struct da_result *r, double target)
{
	if (!r->stats.topup_rounds)
		return;
	uint64_t reducible = da_reducible_paths(r);
	bool met = (double)r->after.precise_paths >= target * (double)reducible;
	fprintf(out, "%sthe prices of run time, code and stack were lowered to %.2fx of the options' in %"
		PRIu32 " round%s: %.2f%% of the reducible paths precise, %s --precision %g%s\n",
		prefix, r->stats.price_scale, r->stats.topup_rounds,
		r->stats.topup_rounds > 1 ? "s" : "", cli_pct(r->after.precise_paths, reducible, 100.0),
		met ? "as" : "short of", 100 * target, met ? " asks (0: the prices as given)" : "");
}

bool cli_parse_searches(const char *cmd, const char *arg, uint32_t *searches)
{
	uint64_t v;
	if (!cli_parse_u64(arg, &v, DA_MAX_SEARCHES) || !v) {
		cli_error(cmd, "--searches wants a count from 1 to %d, not '%s'", DA_MAX_SEARCHES, arg);
		return false;
	}
	*searches = (uint32_t)v;
	return true;
}

/* da_options.on_search: a line as each search ends; cmd: the command's name. */
static void search_progress(void *cmd, const struct da_search_done *d)
{
	fprintf(stderr, "icpp %s: search %" PRIu32 " of %" PRIu32 " done after %.1f s: %.1f%% of paths "
		"precise (the best plan so far: search %" PRIu32 ", %.1f%%)\n", (const char *)cmd,
		d->search + 1, d->searches, d->seconds, cli_pct(d->precise_paths, d->paths, 100.0),
		d->best + 1, cli_pct(d->best_precise_paths, d->paths, 100.0));
}

void cli_print_run_time(FILE *out, const char *prefix, const struct pathmap *pm,
			const struct da_problem *p, const struct da_result *r)
{
	const struct da_plan *plan = &r->plan;
	if (r->hot_code_bytes >= 1024)
		fprintf(out, "%sthe clones add %.1f KB of hot code, for the instruction cache to hold "
			"beside the program's own (--hot-code-per-path prices it)\n", prefix,
			(double)r->hot_code_bytes / 1024);
	double runs = 0, copies = 0, binds = 0, xcalls = 0;
	da_run_shares(p, plan, &runs, &copies, &binds, &xcalls);
	if (runs > 0)
		fprintf(out, "%s%.1f%% of the entries run a trampoline (a wrapped call or an entry "
			"wrapper: --wrap-weight prices them higher)\n", prefix, 100.0 * runs);
	if (copies >= 0.0005)
		fprintf(out, "%s  the stack arguments they copy (a push per 8 bytes) take as long "
			"as %.1f%% more of the entries through a trampoline would\n", prefix,
			100.0 * copies);
	if (binds > 0)
		fprintf(out, "%s%.1f%% of the entries enter a clone through a bound call's thunk or a "
			"promoted call's stub (a check of its GOT slot or its target: --wrap-weight "
			"prices them higher)\n", prefix, 100.0 * binds);
	if (xcalls > 0)
		fprintf(out, "%s%.1f%% of the entries enter a clone through another module's checked "
			"call (its GOT slot and the clone's module: --wrap-weight prices them "
			"higher)\n", prefix, 100.0 * xcalls);
	uint64_t tailed_in = 0, all = 0;
	for (uint32_t i = 0; i < p->nnodes; i++) {
		all += p->nodes[i].entries;
		tailed_in += p->nodes[i].tail && r->inst[i] >= p->nfuncs ? p->nodes[i].entries : 0;
	}
	if (tailed_in)
		fprintf(out, "%s%.1f%% of the entries enter a clone by a tail jump pointed at it (no "
			"test at its entry; --no-tail: by its dispatch)\n", prefix,
			100.0 * (double)tailed_in / (double)all);
	struct da_dispatch_fn top[3];
	double share;
	uint32_t n = da_dispatch_top(p, plan, top, 3, &share);
	if (!n)
		return;
	fprintf(out, "%s%" PRIu32 " function%s take%s clones by dispatch: %.1f%% of the entries "
		"run %s tests at entry (--dispatch-weight prices them higher, --no-dispatch: none)\n",
		prefix, n, n > 1 ? "s" : "", n > 1 ? "" : "s", 100.0 * share, n > 1 ? "their" : "its");
	fprintf(out, "%s  the heaviest:", prefix);
	bool tagged = false, tailed = false;
	for (uint32_t i = 0; i < n && i < 3; i++) {
		char label[256], tags[64] = "", tails[64] = "";
		if (top[i].tags == top[i].tests)
			snprintf(tags, sizeof(tags), top[i].tests > 1 ? ", all tags" : ", a tag");
		else if (top[i].tags)
			snprintf(tags, sizeof(tags), ", %" PRIu32 " of them tags", top[i].tags);
		if (top[i].tails == top[i].tests)
			snprintf(tails, sizeof(tails), top[i].tests > 1 ? ", all after tail calls" :
					 ", after a tail call");
		else if (top[i].tails)
			snprintf(tails, sizeof(tails), ", %" PRIu32 " after %s", top[i].tails,
				 top[i].tails > 1 ? "tail calls" : "a tail call");
		tagged = tagged || top[i].tags;
		tailed = tailed || top[i].tails;
		fprintf(out, "%s %s %.1f%% (%" PRIu32 " test%s%s%s)", i ? "," : "",
			pm_function_label(pm, top[i].func, bin_demangle, label, sizeof(label)),
			100.0 * top[i].share, top[i].tests, top[i].tests > 1 ? "s" : "", tags, tails);
	}
	fputc('\n', out);
	if (tagged)
		fprintf(out, "%s  (a tag: the clone is for a call of another module, which cannot "
			"call the clone itself: the function's entry tests the call's tag)\n", prefix);
	if (tailed)
		fprintf(out, "%s  (after a tail call: the call enters another function, which jumps "
			"on to this one by a jump that cannot be pointed at the clone, through a "
			"register or memory: the entry tests it)\n", prefix);
}

/* da_options.on_round: a line as each top-up round ends. */
static void round_progress(void *cmd, const struct da_round_done *d)
{
	fprintf(stderr, "icpp %s: top-up round %" PRIu32 " of at most %" PRIu32 " done after %.1f s: "
		"prices at %.2fx, %.2f%% of the reducible paths precise\n", (const char *)cmd,
		d->round, d->rounds, d->seconds, d->price_scale,
		cli_pct(d->precise_paths, d->reducible_paths, 100.0));
}

void cli_solve_progress(const char *cmd, const struct da_problem *p, struct da_options *o)
{
	fprintf(stderr, "icpp %s: %" PRIu32 " nodes, %" PRIu32 " functions, %" PRIu32
		" callsites: solving...\n", cmd, p->nnodes, p->nfuncs, p->ncallsites);
	o->on_search = search_progress;
	o->on_round = round_progress;
	o->on_search_ctx = (void *)cmd;
}

bool cli_parse_growth(const char *cmd, const char *opt, const char *arg, double *growth)
{
	char *end;
	double x = strtod(arg, &end);
	if (!*arg || *end || !(x == 0 || (x >= 1 && x <= 1e6))) {
		cli_error(cmd, "--%s wants a factor of at least 1 (at most 1e6), or 0 for no cap, not '%s'",
			  opt, arg);
		return false;
	}
	*growth = x;
	return true;
}

bool cli_parse_count(const char *s, uint64_t *v)
{
	static const char suffix[] = "KMG";
	size_t n = strlen(s);
	const char *at = n ? strchr(suffix, s[n - 1]) : NULL;
	uint64_t scale = 1;
	char digits[32];
	if (at) {
		for (const char *k = suffix; k <= at; k++)
			scale *= 1000;
		n--;
	}
	if (!n || n >= sizeof(digits))
		return false;
	memcpy(digits, s, n);
	digits[n] = 0;
	uint64_t x;
	if (!cli_parse_u64(digits, &x, UINT64_MAX / scale) || !x)
		return false;
	*v = x * scale;
	return true;
}

double cli_pct(uint64_t part, uint64_t whole, double if_empty)
{
	return whole ? 100.0 * (double)part / (double)whole : if_empty;
}
