/* icpp plan and icpp rewrite --samples FILE: weigh the solver's problem by
 * where a recording of the trained program spent its samples instead of by
 * training entries, so that the hot CIDs the solver favours are the ones a
 * profile of the rewritten program will hit (a memcpy of long strings has
 * few entries and many samples). */
#ifndef ICPP_CLI_SAMPLE_WEIGHTS_H
#define ICPP_CLI_SAMPLE_WEIGHTS_H

#include <stdbool.h>

#include "disambig/disambig.h"

/* Each weight is a thousand times the samples that icpp report attributes
 * to the node (rp_node_samples; shares of ambiguous samples included).
 * p is the problem of the pathmap MAP (problem node i = pathmap node i).
 * Says on stderr how many samples fell on the map's paths, unless quiet.
 * 0, or -1 after one line as icpp CMD (unreadable file, or no sample on a
 * path of MAP: a recording of another program). */
#define SAMPLE_WEIGHT_SCALE 1000
int sample_weights(struct da_problem *p, const char *samples, const char *map, const char *cmd,
		   bool quiet);

#endif
