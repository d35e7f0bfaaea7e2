/* Problem weights from a recording (cli/sample_weights.h). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cmds.h"
#include "cli/sample_weights.h"
#include "report/report.h"

int sample_weights(struct da_problem *p, const char *samples, const char *map, const char *cmd,
		   bool quiet)
{
	double *w;
	uint64_t counts[3];
	char err[1024];
	if (rp_node_samples(samples, map, &w, counts, err, sizeof(err)) < 0) {
		cli_error(cmd, "%s", err);
		return -1;
	}
	uint64_t on = counts[RP_PRECISE] + counts[RP_AMBIGUOUS];
	uint64_t all = on + counts[RP_MISSING];
	if (!on) {
		cli_error(cmd, "none of the %" PRIu64 " samples of %s falls on a path of %s: record "
			  "the program %s was trained on", all, samples, map, map);
		free(w);
		return -1;
	}
	for (uint32_t i = 0; i < p->nnodes; i++)
		p->nodes[i].weight = (uint64_t)llround(w[i] * SAMPLE_WEIGHT_SCALE);
	free(w);
	if (!quiet)
		fprintf(stderr, "icpp %s: weights: %" PRIu64 " samples of %s, %.1f%% of them on paths "
			"of %s, %.1f%% at a precise CID\n", cmd, all, samples, cli_pct(on, all, 0), map,
			cli_pct(counts[RP_PRECISE], all, 0));
	return 0;
}
