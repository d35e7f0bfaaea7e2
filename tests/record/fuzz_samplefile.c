/* libFuzzer target for the sample file reader (configure with CC=clang
 * -DICPP_FUZZ=ON; seeds: t_samplefile CORPUS_DIR writes two).  Each input is
 * parsed as it is, and once more with its header size and checksum made
 * right, so that mutations reach the field checks behind the checksum. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "collector/samplefile.h"

static void one(const uint8_t *data, size_t size)
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
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	one(data, size);
	if (size >= 36 && size < (1u << 24)) {
		uint8_t *c = malloc(size);
		if (!c)
			return 0;
		memcpy(c, data, size);
		uint64_t sz = size;
		memcpy(c + 16, &sz, 8);
		uint32_t crc = (uint32_t)crc32(0L, c, (uInt)(size - 4));
		memcpy(c + size - 4, &crc, 4);
		one(c, size);
		free(c);
	}
	return 0;
}
