/* The subcommands of icpp (shared/design/cli.md).  One file per command, as
 * cmd_NAME.c defining cmd_NAME(argc, argv) with argv[0] = "NAME".  Each returns
 * the process exit status: 0 ok, 1 failure (one line on stderr saying what to
 * do), 2 usage error. */
#ifndef ICPP_CMDS_H
#define ICPP_CMDS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* A macro's value as a string literal (defaults in help texts). */
#define STR_(x) #x
#define STR(x) STR_(x)

struct da_options;
struct pathmap;
struct da_problem;
struct da_plan;
struct da_result;

int cmd_train(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_paths(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_plan(int argc, char **argv);
int cmd_rewrite(int argc, char **argv);
int cmd_verify(int argc, char **argv);

/* Print "icpp: CMD: message" on stderr (printf-style). */
void cli_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The usage error for an option getopt refused (arg: the word it was at);
 * returns 2, the exit status of a usage error.  Commands set opterr = 0. */
int cli_bad_option(const char *cmd, const char *arg);
/* A decimal number in [0, max], the whole of s; false otherwise. */
bool cli_parse_u64(const char *s, uint64_t *v, uint64_t max);
/* A positive count, decimal, optionally with a suffix K, M or G (10^3, 10^6,
 * 10^9: "50M" as the help texts write defaults); false otherwise. */
bool cli_parse_count(const char *s, uint64_t *v);
/* --code-per-path BYTES or --hot-code-per-path BYTES (opt) of command cmd
 * into the solver's price per byte of new code or of hot code (0: free);
 * false after saying what is wrong. */
bool cli_parse_code_per_path(const char *cmd, const char *opt, const char *arg, double *weight);
/* --dispatch-weight X or --wrap-weight X (opt): the solver's price of the
 * run time of dispatches or trampolines (0 to 1000). */
bool cli_parse_run_weight(const char *cmd, const char *opt, const char *arg, double *weight);
/* --searches N of command cmd (1 to DA_MAX_SEARCHES); false after saying
 * what is wrong. */
bool cli_parse_searches(const char *cmd, const char *arg, uint32_t *searches);
/* --precision PCT of command cmd (0 to 100) into the solver's target share
 * of the reducible paths (disambig.h section 5, top-up); false after saying
 * what is wrong. */
bool cli_parse_precision(const char *cmd, const char *arg, double *target);
/* On out after prefix, where the solver lowered its prices to reach target
 * (r's top-up rounds): to what, and whether the target was met.  Nothing
 * when it ran no round. */
void cli_print_topup(FILE *out, const char *prefix, const struct da_result *r, double target);
/* Progress of solving p on stderr for command cmd ("plan"): a line now,
 * and one as each of the solver's searches and top-up rounds ends (o's
 * on_search and on_round). */
void cli_solve_progress(const char *cmd, const struct da_problem *p, struct da_options *o);
/* The run time r's plan adds, on out after prefix: a line when its clones
 * add 1 KB of hot code or more (da_result.hot_code_bytes); one when frames run
 * a trampoline, the share of training's entries that do (da_run_shares,
 * also when the weights are samples: run time is paid per call); two when
 * plan has clones by dispatch: how many functions take them and the share
 * of the entries that runs their tests, then the three heaviest, each with
 * its share and its number of tests (da_dispatch_top; p's functions are
 * pm's). */
void cli_print_run_time(FILE *out, const char *prefix, const struct pathmap *pm,
			const struct da_problem *p, const struct da_result *r);
/* A growth factor for option opt of command cmd (--max-stack-growth,
 * --max-recursion-growth): at least 1, or 0 for none; false after saying
 * what is wrong. */
bool cli_parse_growth(const char *cmd, const char *opt, const char *arg, double *growth);
/* part / whole as a percentage; if_empty when whole is 0. */
double cli_pct(uint64_t part, uint64_t whole, double if_empty);

#endif
