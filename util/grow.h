/* grow: room in an array that is realloc'd as it fills, shared by the
 * modules that build such arrays (pathmaps, the solver's problems and
 * searches, the rewriter's plan state). */
#ifndef ICPP_GROW_H
#define ICPP_GROW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Make the array *arr of elem-byte elements, capacity *cap, hold at least
 * need of them, doubling the capacity (from 16).  false, the array
 * unchanged, when out of memory or when need passes UINT32_MAX - 1 (its
 * counts are uint32_t, and UINT32_MAX means none). */
bool grow_array(void **arr, uint64_t need, uint32_t *cap, size_t elem);

#endif
