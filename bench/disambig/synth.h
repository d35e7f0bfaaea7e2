/* Synthetic disambiguation problems for bench/disambig (see synth.c). */
#ifndef ICPP_BENCH_SYNTH_H
#define ICPP_BENCH_SYNTH_H

#include <stdio.h>

#include "disambig/disambig.h"

struct synth_params {
	uint32_t nodes;         /* call paths (tree nodes) wanted */
	uint32_t nfuncs;
	double fanout;          /* mean callees per function */
	double shared;          /* share of calls that go to popular helpers */
	double recursive;       /* share of functions that recurse */
	uint32_t levels;        /* call graph layers (default 14) */
	uint32_t max_depth;     /* frames per path (default 400) */
	uint32_t threads;       /* thread roots besides main */
	uint32_t deep;          /* depth bias: draws per step, deepest wins (2) */
	double fixed_frac;      /* share of functions (and half as many callsites)
	                         * that may not change */
	uint32_t pad_bound;     /* largest padding and wrap (0: DA_DEFAULT_BOUND) */
	uint64_t seed;
};

struct synth_profile {
	const char *name;
	struct synth_params params;
};

extern const struct synth_profile synth_profiles[];

void synth_defaults(struct synth_params *sp);
struct da_problem *synth_problem(const struct synth_params *sp);

#endif
