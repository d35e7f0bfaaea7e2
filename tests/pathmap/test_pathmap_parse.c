/* The pathmap file format: round trips, and a parser that rejects every
 * truncation and corruption with one clean line or parses it to a consistent
 * map.  Built with AddressSanitizer and UBSan (tests/pathmap/CMakeLists.txt).
 *
 *   test_pathmap_parse              run the tests
 *   test_pathmap_parse --seeds DIR  write sample files (a fuzzing corpus) */
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/pathmap/pm_testutil.h"

static void encode(const struct pathmap *pm, uint8_t **buf, size_t *len)
{
	char err[256];
	void *b = NULL;
	if (pm_serialize(pm, &b, len, err, sizeof(err)) < 0) {
		fprintf(stderr, "pm_serialize: %s\n", err);
		exit(1);
	}
	*buf = b;
}

/* The sample map (pm_testutil.h) and its encoding, made once by main. */
static struct pathmap *pm;
static uint8_t *sample;
static size_t len;

/* Parse; a success must be a valid map that survives another round trip
 * unchanged, a failure one non-empty line.  Returns whether it parsed. */
static bool parse_checked(const uint8_t *buf, size_t n, char *err, size_t errlen)
{
	struct pathmap *got = NULL;
	err[0] = 0;
	int rc = pm_parse(buf, n, &got, err, errlen);
	if (rc < 0) {
		CHECK(got == NULL);
		CHECK(err[0] != 0);
		CHECK(strchr(err, '\n') == NULL);
		return false;
	}
	char why[256];
	CHECK_EQ_INT(pm_validate(got, why, sizeof(why)), 0);
	uint8_t *again;
	size_t againlen;
	encode(got, &again, &againlen);
	struct pathmap *back = NULL;
	CHECK_EQ_INT(pm_parse(again, againlen, &back, why, sizeof(why)), 0);
	CHECK(back && pmt_equal(got, back));
	/* Writing the re-read map gives the same bytes again. */
	uint8_t *third;
	size_t thirdlen;
	encode(back, &third, &thirdlen);
	CHECK(thirdlen == againlen && !memcmp(third, again, againlen));
	free(third);
	free(again);
	pm_free(back);
	pm_free(got);
	return true;
}

static void test_round_trip(void)
{
	struct pathmap *back;
	char err[256];
	CHECK_EQ_INT(pm_parse(sample, len, &back, err, sizeof(err)), 0);
	CHECK(pmt_equal(pm, back));
	/* Spot checks that pmt_equal compares what it should. */
	CHECK_EQ_STR(back->modules[2].path, "[vdso]");
	CHECK_EQ_INT(back->modules[1].build_id_len, PM_BUILD_ID_MAX);
	CHECK_EQ_INT(back->modules[1].build_id[63], 0xff - 63);
	CHECK_EQ_INT(back->modules[0].functions_hooked, 120);
	CHECK(back->funcs[2].name == NULL);
	CHECK_EQ_STR(back->funcs[4].name, "");
	CHECK(back->funcs[4].addr == 0xffffffffffff0000ull);
	CHECK(back->nodes[2].entries == UINT64_MAX);
	CHECK_EQ_INT(back->nodes[5].height, -16);
	CHECK_EQ_INT(back->nodes[5].cs_module, PM_NONE);
	CHECK_EQ_INT(back->nodes[4].cs_addr, 0x4a000);
	/* Strings are stored once: "main" twice, so the file is smaller than
	 * with two copies (header 56 + 3*80 + 5*24 + 6*40 + 4 = 660 bytes of
	 * records; strings "/usr/bin/prog", libc, "[vdso]", "main", the foo
	 * symbol, "" = 14+32+7+5+13+1 = 72). */
	CHECK_EQ_INT(len, 660 + 72);

	/* pm_write / pm_read through a file. */
	char dir[] = "/tmp/icpp-pm-XXXXXX", path[64];
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/map.icpp", dir);
	CHECK_EQ_INT(pm_write(pm, path, err, sizeof(err)), 0);
	struct pathmap *file;
	CHECK_EQ_INT(pm_read(path, &file, err, sizeof(err)), 0);
	CHECK(file && pmt_equal(pm, file));
	CHECK_EQ_STR(file ? file->source : NULL, path);
	struct stat st;
	CHECK(stat(path, &st) == 0 && (size_t)st.st_size == len);
	pm_free(file);

	/* Errors name the file. */
	char expect[256];
	FILE *f = fopen(path, "r+b");
	CHECK(f != NULL);
	if (f) {
		fseek(f, 100, SEEK_SET);
		fputc(sample[100] ^ 0x10, f);
		fclose(f);
	}
	CHECK_EQ_INT(pm_read(path, &file, err, sizeof(err)), -1);
	CHECK(file == NULL);
	snprintf(expect, sizeof(expect), "%s: checksum mismatch: file is corrupt, train again", path);
	CHECK_EQ_STR(err, expect);
	CHECK_EQ_INT(truncate(path, 300), 0);
	CHECK_EQ_INT(pm_read(path, &file, err, sizeof(err)), -1);
	snprintf(expect, sizeof(expect), "%s: truncated at byte 300 of %zu: file is incomplete, "
		 "train again", path, len);
	CHECK_EQ_STR(err, expect);
	f = fopen(path, "wb");
	if (f) {
		fputs("#!/bin/sh\necho hello\n", f);
		fclose(f);
	}
	CHECK_EQ_INT(pm_read(path, &file, err, sizeof(err)), -1);
	snprintf(expect, sizeof(expect), "%s: not an icpp pathmap", path);
	CHECK_EQ_STR(err, expect);
	unlink(path);
	CHECK_EQ_INT(pm_read(path, &file, err, sizeof(err)), -1);
	snprintf(expect, sizeof(expect), "cannot open %s: No such file or directory", path);
	CHECK_EQ_STR(err, expect);
	/* A directory that cannot take the temporary file. */
	snprintf(path, sizeof(path), "%s/missing/map.icpp", dir);
	CHECK_EQ_INT(pm_write(pm, path, err, sizeof(err)), -1);
	CHECK(strstr(err, "cannot create") != NULL);
	rmdir(dir);

	/* The empty map. */
	struct pathmap *empty = pm_new();
	uint8_t *eb;
	size_t elen;
	encode(empty, &eb, &elen);
	CHECK_EQ_INT(elen, 60);
	CHECK(parse_checked(eb, elen, err, sizeof(err)));
	free(eb);
	pm_free(empty);
	pm_free(back);
}

static void test_truncations(void)
{
	char err[256], expect[256];
	for (size_t n = 0; n < len; n++) {
		/* A copy of exactly n bytes, so ASan sees any read past it. */
		uint8_t *cut = malloc(n ? n : 1);
		memcpy(cut, sample, n);
		CHECK(!parse_checked(cut, n, err, sizeof(err)));
		if (n == 0)
			snprintf(expect, sizeof(expect), "not an icpp pathmap (the file is empty)");
		else if (n < 56)
			snprintf(expect, sizeof(expect), "truncated at byte %zu (in the 56-byte header): "
				 "file is incomplete, train again", n);
		else
			snprintf(expect, sizeof(expect), "truncated at byte %zu of %zu: file is "
				 "incomplete, train again", n, len);
		CHECK_EQ_STR(err, expect);
		free(cut);
	}
	/* One byte too many. */
	uint8_t *longer = malloc(len + 1);
	memcpy(longer, sample, len);
	longer[len] = 0;
	CHECK(!parse_checked(longer, len + 1, err, sizeof(err)));
	snprintf(expect, sizeof(expect), "corrupt pathmap: 1 bytes after its end at byte %zu; "
		 "train again", len);
	CHECK_EQ_STR(err, expect);
	free(longer);
}

/* Every byte, flipped three ways: always rejected (the checksums see it). */
static void test_single_bytes(void)
{
	char err[256];
	static const uint8_t flips[] = {0x01, 0x80, 0xff};
	for (size_t i = 0; i < len; i++) {
		for (size_t k = 0; k < sizeof(flips); k++) {
			sample[i] ^= flips[k];
			CHECK(!parse_checked(sample, len, err, sizeof(err)));
			if (i < 8)
				CHECK_EQ_STR(err, "not an icpp pathmap");
			else if (i < 12) /* the version: newer, or 0 (header checksum) */
				CHECK(!strncmp(err, "written by a newer icpp", 23) ||
				      !strcmp(err, "checksum mismatch: file is corrupt, train again"));
			else
				CHECK_EQ_STR(err, "checksum mismatch: file is corrupt, train again");
			sample[i] ^= flips[k];
		}
	}
}

/* Random multi-byte corruptions, first as they are (checksum mismatch), then
 * with the checksums recomputed so that the field checks see them. */
static void test_random_corruptions(void)
{
	char err[256];
	uint8_t *copy = malloc(len);
	unsigned parsed = 0, rejected = 0;
	for (int round = 0; round < 20000; round++) {
		memcpy(copy, sample, len);
		int nbytes = 1 + (int)(check_rng() % 8);
		for (int k = 0; k < nbytes; k++) {
			size_t at = check_rng() % len;
			/* Favour the values that stress checks: 0, 0xff, small. */
			uint64_t r = check_rng();
			copy[at] = r % 4 == 0 ? 0 : r % 4 == 1 ? 0xff : (uint8_t)(r >> 8);
		}
		if (memcmp(copy, sample, len)) {
			CHECK(!parse_checked(copy, len, err, sizeof(err)));
			if (memcmp(copy, sample, 8) && strcmp(err, "not an icpp pathmap"))
				CHECK_EQ_STR(err, "not an icpp pathmap");
		}
		pmt_fix_crcs(copy, len);
		if (parse_checked(copy, len, err, sizeof(err)))
			parsed++;
		else
			rejected++;
	}
	/* Both outcomes are common: the test exercises the field checks and
	 * the consistent-map path. */
	fprintf(stderr, "random corruptions with checksums fixed: %u parsed, %u rejected\n", parsed,
		rejected);
	CHECK(parsed > 1000);
	CHECK(rejected > 1000);
	free(copy);
}

/* Files a broken writer or an attacker could make, checksums correct. */
static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

struct patch {
	size_t off;
	uint32_t v;
};

/* The sample file with u32 values written at some offsets and its checksums
 * recomputed must be refused with exactly `expect`. */
static void expect_patched(const struct patch *p, size_t np, const char *expect)
{
	uint8_t *b = malloc(len);
	char err[256];
	memcpy(b, sample, len);
	for (size_t i = 0; i < np; i++)
		put32(b + p[i].off, p[i].v);
	pmt_fix_crcs(b, len);
	CHECK(!parse_checked(b, len, err, sizeof(err)));
	if (strcmp(err, expect))
		fprintf(stderr, "at offset %zu, value %u:\n", p[0].off, p[0].v);
	CHECK_EQ_STR(err, expect);
	free(b);
}

static void expect_crafted(size_t off, uint32_t v, const char *expect)
{
	struct patch p = {off, v};
	expect_patched(&p, 1, expect);
}

static void test_crafted(void)
{
	const size_t mods = 56, funcs = mods + 3 * 80, nodes = funcs + 5 * 24, tab = nodes + 6 * 40;
	const uint32_t tablen = (uint32_t)(len - 4 - tab);
	expect_crafted(8, 2, "written by a newer icpp (format version 2; this icpp reads "
		       "version 1): upgrade icpp or train again");
	expect_crafted(8, 0, "corrupt pathmap: format version 0 does not exist; "
		       "train again");
	expect_crafted(12, 4, "written by a newer icpp (unknown flags 0x4): upgrade icpp "
		       "or train again");
	expect_crafted(28, 1, "corrupt pathmap: reserved header fields are not zero; "
		       "train again");
	expect_crafted(16, UINT32_MAX, "corrupt pathmap: a count of 4294967295 entries; "
		       "train again");
	/* Huge counts with a consistent size field: truncated, never allocated. */
	{
		uint8_t b[64] = {0};
		memcpy(b, sample, 56);
		put32(b + 24, 0xfffffff0u);
		uint64_t size = 56 + 3 * 80 + 5 * 24 + 40ull * 0xfffffff0u + tablen + 4;
		put32(b + 40, (uint32_t)size);
		put32(b + 44, (uint32_t)(size >> 32));
		pmt_fix_crcs(b, sizeof(b));
		char err[256], expect[256];
		CHECK(!parse_checked(b, sizeof(b), err, sizeof(err)));
		snprintf(expect, sizeof(expect), "truncated at byte 64 of %llu: file is incomplete, "
			 "train again", (unsigned long long)size);
		CHECK_EQ_STR(err, expect);
	}
	expect_crafted(24, 7, "corrupt pathmap: the header's sizes disagree; train again");
	expect_crafted(32, UINT32_MAX, "corrupt pathmap: the header's sizes disagree; "
		       "train again");
	/* Modules. */
	expect_crafted(mods, tablen, "corrupt pathmap: module 0 has a path outside the "
		       "string table; train again");
	expect_crafted(mods + 4, 65, "corrupt pathmap: module 0 has a bad build-id; "
		       "train again");
	expect_crafted(mods + 8 + 20, 1, "corrupt pathmap: module 0 has a bad build-id; "
		       "train again");
	expect_crafted(mods + 76, 131, "corrupt pathmap: module 0 has 131 functions "
		       "hooked of 130 found; train again");
	expect_crafted(mods + 80, 13, "corrupt pathmap: module 1 has no path; train again");
	/* Functions. */
	expect_crafted(funcs, 3, "corrupt pathmap: function 0 has module 3 of 3; "
		       "train again");
	expect_crafted(funcs + 24 + 4, tablen + 1000, "corrupt pathmap: function 1 has "
		       "a name outside the string table; train again");
	expect_crafted(funcs + 24 + 8, 0x401126, "corrupt pathmap: function 1 duplicates "
		       "function 0; train again");
	expect_crafted(funcs + 4 * 24 + 16, 0x10000, "corrupt pathmap: function 4 at "
		       "0xffffffffffff0000 has size 0x10000 past the end of the address space; "
		       "train again");
	/* A string that runs off the end of the table: the last string is "",
	 * the table's last byte; make it 'x'. */
	struct patch runs_off = {len - 8, (uint32_t)sample[len - 8] | (uint32_t)sample[len - 7] << 8 |
					      (uint32_t)sample[len - 6] << 16 | (uint32_t)'x' << 24};
	expect_patched(&runs_off, 1, "corrupt pathmap: function 4 has a name outside the "
		       "string table; train again");
	/* Nodes. */
	expect_crafted(nodes, 0, "corrupt pathmap: node 0 has parent 0 (must be below "
		       "its own index); train again");
	expect_crafted(nodes + 40, 5, "corrupt pathmap: node 1 has parent 5 (must be "
		       "below its own index); train again");
	expect_crafted(nodes + 40 + 4, 5, "corrupt pathmap: node 1 has function 5 of 5; "
		       "train again");
	expect_crafted(nodes + 40 + 8, 3, "corrupt pathmap: node 1 has callsite module 3 "
		       "of 3 (address 0x40113c); train again");
	expect_crafted(nodes + 40 + 12, 1, "corrupt pathmap: node 1 has a reserved field "
		       "that is not zero; train again");
	/* Node 3 made equal to node 1. */
	const struct patch dup[] = {{nodes + 3 * 40 + 4, 1}, {nodes + 3 * 40 + 16, 0x40113c}};
	expect_patched(dup, 2, "corrupt pathmap: node 3 duplicates node 1; train again");
}

/* pmt_sample with clones as icpp rewrite names them (pm_clone_original):
 * of a named function, of one without a name, of a name two modules have. */
static struct pathmap *sample_with_clones(void)
{
	struct pathmap *pm = pmt_sample();
	uint32_t foo = pm_add_function(pm, 0, 0x402000, 0x20, "__icpp_clone_1__ZN2ns3fooEi");
	uint32_t anon = pm_add_function(pm, 0, 0x402100, 0x20, "__icpp_clone_2_0x4011a0");
	uint32_t dup = pm_add_function(pm, 0, 0x402200, 0x20, "__icpp_clone_3_main");
	uint32_t a = pm_add_node(pm, 0, foo, 0, 0x401140, 96, 2);
	(void)pm_add_node(pm, a, anon, 0, 0x402010, 160, 2);
	(void)pm_add_node(pm, 0, dup, 0, 0x401144, 96, 1);
	return pm;
}

static int write_seeds(const char *dir)
{
	struct pathmap *maps[] = {pmt_sample(), pm_new(), sample_with_clones()};
	for (int i = 0; i < 3; i++) {
		char path[4096], err[256];
		snprintf(path, sizeof(path), "%s/seed%d.icpp", dir, i);
		if (pm_write(maps[i], path, err, sizeof(err)) < 0) {
			fprintf(stderr, "%s\n", err);
			return 1;
		}
		pm_free(maps[i]);
	}
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--seeds"))
		return write_seeds(argv[2]);
	pm = pmt_sample();
	encode(pm, &sample, &len);
	test_round_trip();
	test_truncations();
	test_single_bytes();
	test_random_corruptions();
	test_crafted();
	free(sample);
	pm_free(pm);
	return check_exit();
}
