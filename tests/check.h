/* check.h: the assertions unit tests use.  A failed CHECK prints where and
 * what, and the test exits non-zero at the end (check_exit); ctest reports it. */
#ifndef ICPP_TEST_CHECK_H
#define ICPP_TEST_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                                \
	do {                                                                       \
		if (!(cond)) {                                                     \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__,     \
				__LINE__, #cond);                                  \
			check_failures++;                                          \
		}                                                                  \
	} while (0)

#define CHECK_EQ_INT(a, b)                                                         \
	do {                                                                       \
		long long check_a_ = (long long)(a), check_b_ = (long long)(b);    \
		if (check_a_ != check_b_) {                                        \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s (%lld != %lld)\n", \
				__FILE__, __LINE__, #a, #b, check_a_, check_b_);   \
			check_failures++;                                          \
		}                                                                  \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                         \
	do {                                                                       \
		const char *check_a_ = (a), *check_b_ = (b);                       \
		if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_)) {        \
			fprintf(stderr, "%s:%d: CHECK failed: %s == %s (\"%s\" != \"%s\")\n", \
				__FILE__, __LINE__, #a, #b, check_a_ ? check_a_ : "(null)", \
				check_b_ ? check_b_ : "(null)");                   \
			check_failures++;                                          \
		}                                                                  \
	} while (0)

/* xorshift64*: the tests' deterministic random numbers, so that a failure
 * reproduces. */
static uint64_t check_rng_state = 0x9e3779b97f4a7c15ull;

static inline uint64_t check_rng(void)
{
	check_rng_state ^= check_rng_state >> 12;
	check_rng_state ^= check_rng_state << 25;
	check_rng_state ^= check_rng_state >> 27;
	return check_rng_state * 0x2545f4914f6cdd1dull;
}

static inline int check_exit(void)
{
	if (check_failures)
		fprintf(stderr, "%d check(s) failed\n", check_failures);
	return check_failures ? 1 : 0;
}

#endif
