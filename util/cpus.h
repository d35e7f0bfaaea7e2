/* cpus: how many CPUs this process may run on, for the work icpp spreads
 * over threads (the solver's searches, training's analysis of a module). */
#ifndef ICPP_CPUS_H
#define ICPP_CPUS_H

#include <stdint.h>

/* CPUs this process may run on (taskset, cgroup cpusets), at least 1. */
uint32_t usable_cpus(void);

#endif
