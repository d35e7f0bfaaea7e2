#include "util/grow.h"

#include <stdlib.h>

bool grow_array(void **arr, uint64_t need, uint32_t *cap, size_t elem)
{
	if (need <= *cap)
		return true;
	if (need > UINT32_MAX - 1)
		return false;
	uint64_t nc = *cap ? *cap : 16;
	while (nc < need)
		nc *= 2;
	if (nc > UINT32_MAX - 1)
		nc = UINT32_MAX - 1;
	void *a = realloc(*arr, (size_t)nc * elem);
	if (!a)
		return false;
	*arr = a;
	*cap = (uint32_t)nc;
	return true;
}
