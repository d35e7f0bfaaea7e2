/* icpp: inferred call-path profiler.  Dispatches to one subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli/cmds.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
} commands[] = {
	{"train", cmd_train, "run a program with entry hooks and record every call path (pathmap)"},
	{"stats", cmd_stats, "precision and ambiguity of a pathmap"},
	{"paths", cmd_paths, "list the call paths of a pathmap"},
	{"record", cmd_record, "sample IP, SP and BP of a process, passively (no stack walk)"},
	{"report", cmd_report, "turn recorded samples into call paths with a pathmap"},
	{"plan", cmd_plan, "choose frame paddings, callsite wrappers and clones that make CIDs unique"},
	{"rewrite", cmd_rewrite, "write a program changed by a plan, and its predicted pathmap"},
	{"verify", cmd_verify, "train a rewritten program and check its heights against the prediction"},
};

static void usage(FILE *out)
{
	fprintf(out, "usage: icpp COMMAND [OPTIONS] [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'icpp COMMAND --help' describes one command.\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return 0;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	fprintf(stderr, "icpp: '%s' is not a command; 'icpp --help' lists them\n", argv[1]);
	return 2;
}
