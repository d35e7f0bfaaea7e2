/* pprof_fold: read an icpp pprof file (gzip'd profile.proto) with protobuf-c
 * and print it as folded stacks ("root;...;leaf count", sorted), checking
 * on the way what pprof readers rely on: string_table[0] == "", ids nonzero
 * and resolvable, one value per sample type.  A "[missing: WHY] LABEL"
 * function prints as the two frames report --format folded uses.
 * Exit 0, or 1 with a message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "profile.pb-c.h"

static int fail(const char *msg)
{
	fprintf(stderr, "pprof_fold: %s\n", msg);
	return 1;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv)
{
	if (argc != 2)
		return fail("usage: pprof_fold FILE.pb.gz");
	gzFile gz = gzopen(argv[1], "rb");
	if (!gz)
		return fail("cannot open the file");
	size_t cap = 1 << 20, len = 0;
	uint8_t *buf = malloc(cap);
	int n;
	while (buf && (n = gzread(gz, buf + len, (unsigned)(cap - len))) > 0) {
		len += (size_t)n;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	gzclose(gz);
	if (!buf)
		return fail("out of memory");
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, buf);
	if (!p)
		return fail("not a profile.proto message");
	if (!p->n_string_table || p->string_table[0][0])
		return fail("string_table[0] is not \"\"");
	if (!p->n_sample_type)
		return fail("no sample_type");
	char **lines = calloc(p->n_sample + 1, sizeof(char *));
	size_t nl = 0;
	for (size_t i = 0; i < p->n_sample; i++) {
		Perftools__Profiles__Sample *s = p->sample[i];
		if (s->n_value != p->n_sample_type)
			return fail("sample with the wrong number of values");
		char stack[65536] = "";
		for (size_t k = s->n_location_id; k-- > 0;) {
			uint64_t id = s->location_id[k];
			if (!id || id > p->n_location || p->location[id - 1]->id != id)
				return fail("bad location id");
			Perftools__Profiles__Location *l = p->location[id - 1];
			if (l->n_line != 1 || !l->line[0]->function_id || l->line[0]->function_id > p->n_function)
				return fail("bad line / function id");
			Perftools__Profiles__Function *f = p->function[l->line[0]->function_id - 1];
			if (f->name <= 0 || (size_t)f->name >= p->n_string_table)
				return fail("bad function name index");
			if (l->mapping_id > p->n_mapping)
				return fail("bad mapping id");
			const char *name = p->string_table[f->name];
			if (stack[0])
				strcat(stack, ";");
			if (!strncmp(name, "[missing: ", 10) && strstr(name, "] ")) {
				const char *cut = strstr(name, "] ");
				strncat(stack, name, (size_t)(cut - name) + 1);
				strcat(stack, ";");
				strcat(stack, cut + 2);
			} else {
				strncat(stack, name, sizeof(stack) - strlen(stack) - 1);
			}
		}
		char *line = malloc(strlen(stack) + 32);
		sprintf(line, "%s %lld", stack, (long long)s->value[0]);
		lines[nl++] = line;
	}
	qsort(lines, nl, sizeof(char *), cmp);
	for (size_t i = 0; i < nl; i++)
		printf("%s\n", lines[i]);
	perftools__profiles__profile__free_unpacked(p, NULL);
	return 0;
}
