/* libFuzzer target for the sample file reader (configure with CC=clang
 * -DICPP_FUZZ=ON; seeds: t_samplefile CORPUS_DIR writes two). */
#include <stdint.h>
#include <stdlib.h>

#include "collector/samplefile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sample_set *s = NULL;
	char err[512];
	if (sf_parse(data, size, &s, err, sizeof(err)) == 0) {
		/* Whatever parses must serialise and parse again identically. */
		void *buf;
		size_t len;
		if (sf_serialize(s, &buf, &len, err, sizeof(err)) == 0) {
			struct sample_set *t = NULL;
			if (sf_parse(buf, len, &t, err, sizeof(err)))
				abort();
			if (t->nrecs != s->nrecs || sf_total(t) != sf_total(s))
				abort();
			sf_free(t);
			free(buf);
		}
	}
	sf_free(s);
	return 0;
}
