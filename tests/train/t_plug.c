/* t_plug: the shared object t_procs dlopens; it calls back into the program. */
#include "gt.h"

GT_FN static int plug_rec(int (*cb)(int), int n)
{
	GT_ENTER();
	if (n == 0)
		return cb(0);
	return plug_rec(cb, n - 1) + cb(n);
}

GT_FN int plug_run(int (*cb)(int), int n)
{
	GT_ENTER();
	return plug_rec(cb, n) + plug_rec(cb, 1);
}
