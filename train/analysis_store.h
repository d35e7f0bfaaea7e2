/* analysis_store: the analysis of a module kept on disk between runs of icpp
 * (analysis.h), keyed by the module's build-id, size and modification time
 * and by icpp's own build-id.  Best effort: a file that cannot be read or written means an
 * analysis from scratch, never an error.  The format is in analysis_store.c. */
#ifndef ICPP_TRAIN_ANALYSIS_STORE_H
#define ICPP_TRAIN_ANALYSIS_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "train/analysis.h"

struct analysis_store {
	char dir[4096];
	uint8_t self_id[64];        /* icpp's own build-id */
	size_t self_len;            /* 0: no store */
};

/* A module: its build-id, file size and modification time (a file changed
 * in place keeps the other two: icpp rewrite's outputs of one plan laid
 * out two ways shared an id before session 54, and training hooked the
 * entries of one in the other). */
struct store_key {
	const uint8_t *id;
	size_t idlen;
	uint64_t size;
	int64_t mtime_ns;
};

/* The folder: $ICPP_CACHE_DIR (empty: none), else $XDG_CACHE_HOME/icpp,
 * else $HOME/.cache/icpp.  0, or -1 when there is none. */
int analysis_store_dir(char *dir, size_t len);
/* Fill am's reply, sites and fragments from the store: 0, or -1 (am
 * unchanged) when it holds no valid analysis of that module by this icpp. */
int analysis_store_load(const struct analysis_store *s, const struct store_key *k,
			struct analysed_module *am);
/* Keep a successful analysis (written atomically; errors ignored). */
void analysis_store_save(const struct analysis_store *s, const struct store_key *k,
			 const struct analysed_module *am);

#endif
