/* The order of uint64_t keys (order.h). */
#include <stdint.h>

#include "util/order.h"

int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}
