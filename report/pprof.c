/* pprof: profile.proto, gzip-compressed (go tool pprof, Parca, Pyroscope). */
#include "report/report.h"

int rp_pprof(struct rp_ctx *c, FILE *out, char *err, size_t errlen)
{
	snprintf(err, errlen, "pprof output is not implemented yet");
	return -1;
}
