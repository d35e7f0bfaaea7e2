/* icpp report: samples + pathmap -> call paths (report/). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cmds.h"
#include "report/report.h"
#include "rewriter/rewriter.h"

/* a sample in a dispatch may be in the frame of any of its clones */
_Static_assert(RP_MAX_DISPATCH == RW_MAX_DISPATCH, "dispatch limits differ");

static void usage(FILE *out)
{
	fprintf(out,
		"usage: icpp report [-i SAMPLES] -m PATHMAP [--format text|folded|svg|pprof]\n"
		"                   [--top N] [-o OUT] [--validate] [--title T]\n"
		"\n"
		"Turn the samples of 'icpp record' into call paths: each sample's CID (function,\n"
		"height from the CFI at its IP) is looked up in the pathmap of 'icpp train'.\n"
		"Ambiguous CIDs are split among all their candidate paths by training entries and\n"
		"marked; samples without a path are listed as missing, with their function.\n"
		"\n"
		"  -i SAMPLES       sample file (default icpp.samples)\n"
		"  -m PATHMAP       pathmap of the same binaries (required)\n"
		"  --format F       text (default): summary, hot paths, ambiguous and missing CIDs;\n"
		"                   folded: stacks for flamegraph.pl / inferno;\n"
		"                   svg: a flame graph; pprof: profile.proto, gzip (go tool pprof)\n"
		"  --top N          rows per text section (default 20)\n"
		"  -o OUT           output file (default stdout; pprof: profile.pb.gz)\n"
		"  --validate       compare each inferred path with the real stack recorded by\n"
		"                   'icpp record --validate': precise / ambiguous-contains-truth /\n"
		"                   incorrect / missing (on stderr for formats other than text)\n"
		"  --title T        title of the SVG\n"
		"\n"
		"example: icpp report -i app.samples -m app.icpp --format svg -o app.svg\n");
}

int cmd_report(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		{"format", required_argument, NULL, 'f'},
		{"top", required_argument, NULL, 't'},
		{"validate", no_argument, NULL, 'V'},
		{"title", required_argument, NULL, 'T'},
		{NULL, 0, NULL, 0},
	};
	struct rp_opts o;
	char err[1024], *end;
	int c;

	memset(&o, 0, sizeof(o));
	o.top = 20;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "hi:m:o:", longopts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'i':
			o.samples = optarg;
			break;
		case 'm':
			o.pathmap = optarg;
			break;
		case 'o':
			o.output = optarg;
			break;
		case 'f':
			if (!strcmp(optarg, "text"))
				o.format = RP_TEXT;
			else if (!strcmp(optarg, "folded"))
				o.format = RP_FOLDED;
			else if (!strcmp(optarg, "svg"))
				o.format = RP_SVG;
			else if (!strcmp(optarg, "pprof"))
				o.format = RP_PPROF;
			else {
				cli_error("report", "--format is text, folded, svg or pprof, not '%s'", optarg);
				return 2;
			}
			break;
		case 't':
			o.top = (int)strtol(optarg, &end, 10);
			if (*end || o.top <= 0) {
				cli_error("report", "--top wants a positive number, not '%s'", optarg);
				return 2;
			}
			break;
		case 'V':
			o.validate = true;
			break;
		case 'T':
			o.title = optarg;
			break;
		default:
			return cli_bad_option("report", argv[optind - 1]);
		}
	}
	if (optind < argc) {
		cli_error("report", "unexpected argument '%s' (see 'icpp report --help')", argv[optind]);
		return 2;
	}
	if (!o.pathmap) {
		cli_error("report", "give the pathmap with -m PATHMAP (from 'icpp train')");
		return 2;
	}
	if (rp_run(&o, err, sizeof(err))) {
		cli_error("report", "%s", err);
		return 1;
	}
	return 0;
}
