/* test_dispatch: the code of a dispatch (rw_emit_dispatch, rewriter/entry.c),
 * run.  A dispatch searches the return address at its entry among those of
 * its clones, and the tags below it among those of its tagged calls
 * (rewriter.h section 1).  Here every search of 1 to RW_MAX_DISPATCH return
 * addresses, of tags (some sharing a low half, which the search compares
 * first) and of both together is written into executable memory and
 * entered with each return address it tests (it must jump to that test's
 * clone) and with others (it must fall through); the same with weights,
 * where the heaviest test must be the first compared.  A clone is a stub that
 * returns its number; the fall-through returns 0. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "rewriter/internal.h"
#include "tests/check.h"

enum {
	MAP_BYTES = 1 << 20,
	STUBS = 0,                  /* clone k's stub at STUBS + 16 k */
	CODE = 0x1000,              /* the dispatch, then the fall-through stub */
	RETS = 0x10000,             /* fake return addresses, one per 256 bytes */
};

static uint8_t *mem;

/* Enter the code at `code` as a call that returns to `ret` would: with ret
 * at (%rsp), below it the real return address, which every stub pops to. */
static uint32_t enter(uint64_t code, uint64_t ret)
{
	uint32_t out;
	__asm__ volatile("sub $128, %%rsp\n\t"      /* past the red zone */
			 "lea 1f(%%rip), %%rax\n\t"
			 "push %%rax\n\t"
			 "push %[ret]\n\t"
			 "jmp *%[code]\n"
			 "1:\n\t"
			 "add $128, %%rsp"
			 : "=&a"(out)
			 : [ret] "r"(ret), [code] "r"(code)
			 : "r11", "memory", "cc");
	return out;
}

/* mov $v,%eax; pop %r11; ret */
static void stub(uint8_t *at, uint32_t v)
{
	at[0] = 0xb8;
	memcpy(at + 1, &v, 4);
	memcpy(at + 5, "\x41\x5b\xc3", 3);
}

/* A fake return address n (page offset >= 32: a dispatch reads a tag below
 * it), after a tagged call's two nopls, whose displacements are the tag's
 * halves; without the nopls (bare) only the halves. */
static uint64_t ret_at_as(uint32_t n, uint64_t tag, bool bare)
{
	uint8_t *r = mem + RETS + 256 * (size_t)n + 64;
	uint32_t lo = (uint32_t)tag, hi = (uint32_t)(tag >> 32);
	if (!bare) {
		memcpy(r + RW_TAG_LO - 3, "\x0f\x1f\x80", 3);
		memcpy(r + RW_TAG_HI - 3, "\x0f\x1f\x80", 3);
	}
	memcpy(r + RW_TAG_LO, &lo, 4);
	memcpy(r + RW_TAG_HI, &hi, 4);
	return (uint64_t)(uintptr_t)r;
}

static uint64_t ret_at(uint32_t n, uint64_t tag)
{
	return ret_at_as(n, tag, false);
}

/* Write the dispatch of tests[0..n) at CODE; 0, or -1 when it failed. */
static int write_dispatch(const struct rw_dispatch_test *tests, uint32_t n)
{
	struct rbuf text = {0};
	uint64_t at = (uint64_t)(uintptr_t)(mem + CODE);
	int rc = rw_emit_dispatch(&text, at, tests, n);
	if (rc == 0 && !text.oom && text.n + 16 < RETS - CODE) {
		memcpy(mem + CODE, text.p, text.n);
		stub(mem + CODE + text.n, 0);
	} else {
		rc = -1;
	}
	rb_free(&text);
	return rc;
}

/* Where the first compare of a search of return addresses jumps on a match:
 * lea (7 bytes), sub (4), cmp $key,%r11 (7), je rel32. */
static uint64_t first_addr_hit(void)
{
	const uint8_t *je = mem + CODE + 18;
	int32_t rel;
	memcpy(&rel, je + 2, 4);
	return je[0] == 0x0f && je[1] == 0x84 ? (uint64_t)(uintptr_t)(je + 6) + (uint64_t)(int64_t)rel
					      : 0;
}

/* The low half of a tag that a search of tags compares first: mov (4),
 * test $mask (7), jz rel32 (6), cmpb $0x80 (5), jne rel32 (6), mov (4),
 * cmp $lo,%r11d. */
static uint32_t first_tag_low(void)
{
	const uint8_t *cmp = mem + CODE + 32;
	uint32_t lo;
	memcpy(&lo, cmp + 3, 4);
	return cmp[0] == 0x41 && cmp[1] == 0x81 && cmp[2] == 0xfb ? lo : 0;
}

/* Each test's return address (for a tag: the fake one made for it, kept in
 * its unused ret) enters its clone's stub, every other one falls through. */
static void check_search(const char *what, const struct rw_dispatch_test *tests, uint32_t n,
			 const uint64_t *rets, uint32_t nret)
{
	uint64_t code = (uint64_t)(uintptr_t)(mem + CODE), stubs = (uint64_t)(uintptr_t)(mem + STUBS);
	uint32_t bad = 0;
	for (uint32_t i = 0; i < nret; i++) {
		uint32_t want = 0;
		for (uint32_t k = 0; k < n; k++)
			if (rets[i] == tests[k].ret)
				want = (uint32_t)(tests[k].dest - stubs) / 16 + 1;
		uint32_t got = enter(code, rets[i]);
		if (got != want && bad++ < 3)
			fprintf(stderr, "%s: return address %u enters %u, not %u\n", what, i, got, want);
	}
	CHECK(bad == 0);
}

int main(void)
{
	mem = mmap(NULL, MAP_BYTES, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		   -1, 0);
	CHECK(mem != MAP_FAILED);
	if (mem == MAP_FAILED)
		return check_exit();
	for (uint32_t k = 0; k < 2 * RW_MAX_DISPATCH; k++)
		stub(mem + STUBS + 16 * k, k + 1);
	struct rw_dispatch_test tests[2 * RW_MAX_DISPATCH];
	uint64_t rets[4 * RW_MAX_DISPATCH];
	uint64_t seed = 1;
	for (uint32_t n = 1; n <= RW_MAX_DISPATCH; n++) {
		/* return addresses: fake ones 0..2n-1, every other one tested, in
		 * a shuffled order */
		uint32_t nret = 0;
		for (uint32_t i = 0; i < 2 * n; i++)
			rets[nret++] = ret_at(i, 0);
		for (uint32_t k = 0; k < n; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			uint32_t j = (uint32_t)(seed >> 33) % (k + 1);
			tests[k] = tests[j];
			tests[j] = (struct rw_dispatch_test){rets[2 * k + 1],
							     (uint64_t)(uintptr_t)(mem + STUBS), 0, 0};
		}
		for (uint32_t k = 0; k < n; k++)
			tests[k].dest = (uint64_t)(uintptr_t)(mem + STUBS + 16 * k);
		char what[64];
		snprintf(what, sizeof(what), "%u return addresses", n);
		CHECK(write_dispatch(tests, n) == 0);
		check_search(what, tests, n, rets, nret);

		/* tags of n calls, the low half shared by pairs (2k, 2k+1);
		 * entered with each tag, with one that shares only a low half
		 * and with one without its nopls (misses) */
		struct rw_dispatch_test *tag = tests + n;
		uint32_t ntret = 0;
		uint64_t trets[2 * RW_MAX_DISPATCH];
		for (uint32_t k = 0; k < n; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			uint64_t lo = (k % 2 ? (uint32_t)tag[k - 1].tag : (uint32_t)(seed >> 16)) | 1;
			uint64_t t = lo | (seed & 0xffffffff00000000ULL);
			tag[k] = (struct rw_dispatch_test){ret_at(2 * RW_MAX_DISPATCH + k, t),
							   (uint64_t)(uintptr_t)(mem + STUBS + 16 * (n + k)), t, 0};
			trets[ntret++] = tag[k].ret;
		}
		trets[ntret++] = ret_at(3 * RW_MAX_DISPATCH, (uint32_t)tag[0].tag |
					(~tag[0].tag & 0xffffffff00000000ULL));
		/* a tag's halves without the nopls that hold them: no tagged call */
		trets[ntret++] = ret_at_as(3 * RW_MAX_DISPATCH + 1, tag[0].tag, true);
		snprintf(what, sizeof(what), "%u tags", n);
		CHECK(write_dispatch(tag, n) == 0);
		check_search(what, tag, n, trets, ntret);

		/* both: the tags' return addresses pass the first search, the
		 * others the second */
		for (uint32_t i = 0; i < ntret; i++)
			rets[nret++] = trets[i];
		snprintf(what, sizeof(what), "%u return addresses and %u tags", n, n);
		CHECK(write_dispatch(tests, 2 * n) == 0);
		check_search(what, tests, 2 * n, rets, nret);

		/* weighted: the searches split by weight, and a test heavier than
		 * all the others of its search is compared first */
		uint32_t heavy = n / 3;
		for (uint32_t k = 0; k < 2 * n; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			tests[k].weight = (seed >> 40) % 1000;
		}
		tests[heavy].weight = tests[n + heavy].weight = 1000 * (uint64_t)n;
		snprintf(what, sizeof(what), "%u return addresses and %u tags, weighted", n, n);
		CHECK(write_dispatch(tests, 2 * n) == 0);
		check_search(what, tests, 2 * n, rets, nret);
		CHECK(first_addr_hit() == tests[heavy].dest);
		CHECK(write_dispatch(tag, n) == 0);
		CHECK(first_tag_low() == (uint32_t)tag[heavy].tag);
	}
	munmap(mem, MAP_BYTES);
	return check_exit();
}
