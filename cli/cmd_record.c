/* icpp record: passive IP+SP+BP sampling of a process (collector/). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmds.h"
#include "collector/collector.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: icpp record [-e EVENT] [-F HZ | -c PERIOD] [-o FILE] [--backend bpf|perf]\n"
		"                   [--validate] [--duration SECS] [-q] (-p PID | -- CMD ARGS...)\n"
		"\n"
		"Sample a running process or a command: per sample only the user IP, SP and BP\n"
		"and the thread's stack base (no stack walk); 'icpp report' turns them into call\n"
		"paths with a pathmap from 'icpp train'.\n"
		"\n"
		"  -e EVENT         cpu-clock (default), cycles, l1d-miss (Intel PEBS\n"
		"                   mem_load_retired.l1_miss), ibs-op (AMD IBS)\n"
		"  -F HZ            samples per second per CPU (default 999)\n"
		"  -c PERIOD        one sample every PERIOD events instead\n"
		"  -o FILE          sample file (default icpp.samples)\n"
		"  -p PID           attach to a running process (and its later children)\n"
		"  --backend B      bpf (root) or perf (any user, own processes); default: bpf\n"
		"                   when it loads, else perf; the choice is printed\n"
		"  --validate       also record each sample's real user stack (frame pointers)\n"
		"                   so that 'icpp report --validate' can check the inference\n"
		"  --duration SECS  stop after SECS seconds (default: when the target ends, or Ctrl-C)\n"
		"  -q               no progress or summary on stderr\n"
		"  --bpf-stats      print the BPF program's run time per sample at the end\n"
		"\n"
		"example: icpp record -F 4999 -o app.samples -- ./app input.txt\n");
}

int cmd_record(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"backend", required_argument, NULL, 'B'},
		{"validate", no_argument, NULL, 'V'},
		{"duration", required_argument, NULL, 'D'},
		{"bpf-stats", no_argument, NULL, 'S'},
		{NULL, 0, NULL, 0},
	};
	struct rec_opts o;
	char err[1024];
	char *end;
	int c;

	memset(&o, 0, sizeof(o));
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+he:F:c:o:p:q", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'e':
			o.event = optarg;
			break;
		case 'F':
			o.freq = strtoull(optarg, &end, 10);
			if (*end || !o.freq) {
				cli_error("record", "-F wants a positive number of Hz, not '%s'", optarg);
				return 2;
			}
			break;
		case 'c':
			o.period = strtoull(optarg, &end, 10);
			if (*end || !o.period) {
				cli_error("record", "-c wants a positive period, not '%s'", optarg);
				return 2;
			}
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'p':
			o.pid = (pid_t)strtol(optarg, &end, 10);
			if (*end || o.pid <= 0) {
				cli_error("record", "-p wants a process id, not '%s'", optarg);
				return 2;
			}
			break;
		case 'q':
			o.quiet = true;
			break;
		case 'B':
			if (!strcmp(optarg, "bpf"))
				o.backend = REC_BACKEND_BPF;
			else if (!strcmp(optarg, "perf"))
				o.backend = REC_BACKEND_PERF;
			else {
				cli_error("record", "--backend is bpf or perf, not '%s'", optarg);
				return 2;
			}
			break;
		case 'V':
			o.validate = true;
			break;
		case 'D':
			o.duration = strtod(optarg, &end);
			if (*end || o.duration <= 0) {
				cli_error("record", "--duration wants seconds, not '%s'", optarg);
				return 2;
			}
			break;
		case 'S':
			o.bpf_stats = true;
			break;
		default:
			return cli_bad_option("record", argv[optind - 1]);
		}
	}
	if (o.freq && o.period) {
		cli_error("record", "-F and -c exclude each other; give one");
		return 2;
	}
	if (optind < argc)
		o.argv = argv + optind;
	if (!o.argv == !o.pid) {
		cli_error("record", "give either -p PID or -- CMD ARGS (see 'icpp record --help')");
		return 2;
	}
	if (rec_run(&o, err, sizeof(err))) {
		cli_error("record", "%s", err);
		return 1;
	}
	return 0;
}
