/* The plan file parser (disambig/plan_file.c) against damaged input: every
 * truncation, every line deleted or doubled, every field replaced by hostile
 * words, and seeded random corruptions of a plan with every record kind.
 * Each is refused with one line naming the file, or is a plan that survives
 * write -> read -> write and that da_pm_plan_to and da_predict_pathmap take
 * or refuse cleanly (pst_check).  Built with AddressSanitizer and UBSan.
 *
 *   test_plan_parse              run the tests
 *   test_plan_parse --seeds DIR  write sample plans (a fuzzing corpus) */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/disambig/plan_sample.h"

static struct pathmap *pm;
static struct da_bridge br;
static char dir[] = "/tmp/icpp-plan-parse-XXXXXX", file[64];
static unsigned parsed, refused;

/* Check one text; `what` says which mutation it was. */
static int check_text(const char *text, size_t len, const char *what)
{
	char why[512];
	int rc = pst_check(pm, &br, file, text, len, why, sizeof(why));
	if (rc < 0) {
		fprintf(stderr, "%s: %s\n--- text ---\n%.*s\n---\n", what, why, (int)len, text);
		check_failures++;
	}
	parsed += rc == 1;
	refused += rc == 0;
	return rc;
}

/* Line starts of text; returns the count (at most max). */
static size_t lines_of(const char *text, size_t len, size_t *start, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < len && n < max; i++)
		if (i == 0 || text[i - 1] == '\n')
			start[n++] = i;
	return n;
}

/* The sample itself is a plan its consumers take whole: its tail clone
 * renames U's frame beside T's (from_pathmap.h, Tail calls). */
static void test_sample(const char *text, size_t len)
{
	CHECK_EQ_INT(check_text(text, len, "the sample"), 1);
	struct da_pm_plan pp;
	struct da_plan dp;
	struct pathmap *q = NULL;
	char err[256];
	CHECK(da_plan_parse("sample", text, len, pm, &pp, err, sizeof(err)) == 0);
	CHECK(da_pm_plan_to(&br, &pp, &dp, err, sizeof(err)) == 0);
	CHECK(da_predict_pathmap(pm, &pp, &q, err, sizeof(err)) == 0);
	uint32_t renamed = 0;
	for (uint32_t i = 0; q && i < q->nnodes; i++)
		renamed += !strcmp(q->funcs[q->nodes[i].func].name, "U.icpp_clone.3");
	CHECK_EQ_INT(renamed, 1);
	pm_free(q);
	da_plan_free(&dp);
	da_pm_plan_free(&pp);
}

static void test_truncations(const char *text, size_t len)
{
	for (size_t n = 0; n < len; n++) {
		char what[64];
		snprintf(what, sizeof(what), "truncated to %zu bytes", n);
		CHECK_EQ_INT(check_text(text, n, what), 0);
	}
}

/* Is the line a comment or a summary line (nothing depends on them)? */
static bool informational(const char *line)
{
	static const char *const keys[] = {"#", "seed ", "paths ", "precise-paths ", "weight ",
					   "precise-weight ", "growth ", "code-bytes ", "left "};
	for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
		if (!strncmp(line, keys[k], strlen(keys[k])))
			return true;
	return false;
}

/* Every line deleted, and every line written twice. */
static void test_lines(const char *text, size_t len)
{
	size_t st[64], n = lines_of(text, len, st, 64);
	char *buf = malloc(2 * len);
	for (size_t i = 0; i < n; i++) {
		size_t e = i + 1 < n ? st[i + 1] : len, l = e - st[i];
		memcpy(buf, text, st[i]);
		memcpy(buf + st[i], text + e, len - e);
		char what[64];
		snprintf(what, sizeof(what), "line %zu deleted", i + 1);
		int rc = check_text(buf, len - l, what);
		/* only a comment or an informational line may go */
		if (rc == 1)
			CHECK(informational(text + st[i]));
		memcpy(buf, text, e);
		memcpy(buf + e, text + st[i], len - st[i]);
		snprintf(what, sizeof(what), "line %zu doubled", i + 1);
		check_text(buf, len + l, what);
	}
	free(buf);
}

/* Every word of every line replaced by each hostile word. */
static char long_word[200];     /* longer than the reader's fields */

static void test_words(const char *text, size_t len)
{
	memset(long_word, '7', sizeof(long_word) - 1);
	const char *hostile[] = {
		"", "0", "1", "-1", "16", "24", "1008", "1024", "0x", "0x0", "0x10", "010", "0020",
		"+16", "1e3", "nan", "inf", "-inf", "1e308", "-0", "0.5", "-", "--", "#",
		"18446744073709551615", "18446744073709551616", "0xffffffffffffffff", "4095", "4096",
		"4294967295", "4294967296", "functions", "callsites", "module", "end", "pad",
		"12345678", "1234567", "123456789a", "\t", "a b", "\r", long_word,
	};
	char *buf = malloc(len + 256);
	for (size_t i = 0; i < len;) {
		/* a word: [i, j) */
		if (text[i] == ' ' || text[i] == '\n') {
			i++;
			continue;
		}
		size_t j = i;
		while (j < len && text[j] != ' ' && text[j] != '\n')
			j++;
		for (size_t h = 0; h < sizeof(hostile) / sizeof(hostile[0]); h++) {
			size_t hl = strlen(hostile[h]), n = 0;
			memcpy(buf, text, i);
			n = i;
			memcpy(buf + n, hostile[h], hl);
			n += hl;
			memcpy(buf + n, text + j, len - j);
			n += len - j;
			char what[96];
			snprintf(what, sizeof(what), "word at %zu replaced by \"%s\"", i, hostile[h]);
			check_text(buf, n, what);
		}
		i = j;
	}
	free(buf);
}

/* Seeded random corruptions: 1 to 4 bytes replaced, inserted or deleted,
 * the bytes drawn mostly from what plans are made of. */
static void test_random(const char *text, size_t len, unsigned rounds)
{
	static const char alphabet[] = "0123456789abcdefx -#\n\t\r\001\377";
	char *buf = malloc(len + 8);
	for (unsigned r = 0; r < rounds; r++) {
		size_t n = len;
		memcpy(buf, text, len);
		unsigned ops = 1 + (unsigned)(check_rng() % 4);
		for (unsigned k = 0; k < ops && n > 0; k++) {
			size_t at = (size_t)(check_rng() % n);
			char c = alphabet[check_rng() % (sizeof(alphabet) - 1)];
			switch (check_rng() % 3) {
			case 0:
				buf[at] = c;
				break;
			case 1:
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = c;
				n++;
				break;
			default:
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
			}
		}
		char what[64];
		snprintf(what, sizeof(what), "random corruption %u", r);
		check_text(buf, n, what);
	}
	free(buf);
}

static int write_seeds(const char *out)
{
	size_t len;
	char *text = pst_plan_text(&len);
	char path[4096];
	snprintf(path, sizeof(path), "%s/sample.plan", out);
	FILE *f = fopen(path, "w");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "cannot write %s\n", path);
		return 1;
	}
	free(text);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--seeds"))
		return write_seeds(argv[2]);
	if (!mkdtemp(dir))
		return 1;
	snprintf(file, sizeof(file), "%s/x.plan", dir);
	pm = pst_sample_tails();
	CHECK(pst_bridge(pm, &br) == 0);
	size_t len;
	char *text = pst_plan_text(&len);
	test_sample(text, len);
	test_truncations(text, len);
	test_lines(text, len);
	test_words(text, len);
	test_random(text, len, 20000);
	fprintf(stderr, "plan parse: %u texts parsed, %u refused\n", parsed, refused);
	free(text);
	da_bridge_free(&br);
	pm_free(pm);
	unlink(file);
	rmdir(dir);
	return check_exit();
}
