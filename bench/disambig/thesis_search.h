/* The thesis' random ARR search, the baseline of bench/disambig. */
#ifndef ICPP_BENCH_THESIS_SEARCH_H
#define ICPP_BENCH_THESIS_SEARCH_H

#include "disambig/disambig.h"

struct thesis_params {
	uint64_t seed;
	double target;          /* stop at this share of unique CIDs (0.97) */
	uint64_t max_fruitless; /* stop after this many iterations without progress (2000) */
	uint64_t escape;        /* keep a change anyway after this many (100) */
	double time_limit_s;    /* 0: none */
};

struct thesis_stats {
	uint64_t iterations, accepted, forced;
	bool timed_out;
};

/* The result has the same fields as da_solve's (stats.seconds: search time). */
int thesis_search(const struct da_problem *p, const struct thesis_params *tp,
		  struct da_result *r, struct thesis_stats *st, char *err, size_t errlen);

#endif
