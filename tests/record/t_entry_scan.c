/* t_entry_scan: which clones' frames a sample in a dispatch may be in
 * (rp_entry_scan, report/entry.c), on hand-encoded entry code at 0x1000: a
 * search of three keys, the upper half behind a jg, then the function's
 * displaced first instructions (a push and a je into its body) and the
 * jump back:
 *     1000: 16 x int3
 *     1010: lea 0x0(%rip),%r11; sub (%rsp),%r11
 *     101b: cmp $0x20,%r11; je 0x5000 (clone 1); jg 1033
 *     1027: cmp $0x10,%r11; je 0x4000 (clone 0); jmp 103d
 *     1033: cmp $0x30,%r11; je 0x6000 (clone 2)
 *     103d: push %rbx; je 0x3020; jmp 0x3005 (the function at 0x3000)
 * A sample in the lower half cannot reach clone 2's test, which lies after
 * it: before session 37 every je at or after the sample counted. */
#include <string.h>

#include "report/report.h"
#include "tests/check.h"

static const uint8_t code[] = {
	0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc,
	0xcc, 0xcc, 0x4c, 0x8d, 0x1d, 0x00, 0x00, 0x00, 0x00, 0x4c, 0x2b, 0x1c, 0x24, 0x49,
	0x83, 0xfb, 0x20, 0x0f, 0x84, 0xdb, 0x3f, 0x00, 0x00, 0x7f, 0x0c, 0x49, 0x83, 0xfb,
	0x10, 0x0f, 0x84, 0xcf, 0x2f, 0x00, 0x00, 0xeb, 0x0a, 0x49, 0x83, 0xfb, 0x30, 0x0f,
	0x84, 0xc3, 0x4f, 0x00, 0x00, 0x53, 0x0f, 0x84, 0xdc, 0x1f, 0x00, 0x00, 0xe9, 0xbc,
	0x1f, 0x00, 0x00,
};

/* The clones a sample at vaddr may be in, as a string of their addresses in
 * code order ("5000 4000 6000 3020"). */
static const char *clones_at(uint64_t vaddr)
{
	static char buf[256];
	struct rp_entry_frames ef;
	uint64_t resume = 0;
	buf[0] = 0;
	CHECK(rp_entry_scan(code, sizeof(code), 0x1000, vaddr, &resume, &ef) == 0);
	CHECK(resume == 0x3005);
	CHECK(ef.func == 0 && ef.func_extra == 0);
	for (uint32_t i = 0; i < ef.nclones; i++) {
		size_t n = strlen(buf);
		snprintf(buf + n, sizeof(buf) - n, "%s%llx", i ? " " : "",
			 (unsigned long long)ef.clones[i]);
	}
	return buf;
}

int main(void)
{
	/* before the search: every test, and the displaced je (which
	 * rp_entry_frames drops: it lies in the function) */
	CHECK(!strcmp(clones_at(0x1010), "5000 4000 6000 3020"));
	CHECK(!strcmp(clones_at(0x101f), "5000 4000 6000 3020"));
	/* past the first test: its clone is ruled out */
	CHECK(!strcmp(clones_at(0x1025), "4000 6000 3020"));
	/* the lower half cannot reach the upper half's test, nor it the lower */
	CHECK(!strcmp(clones_at(0x1027), "4000 3020"));
	CHECK(!strcmp(clones_at(0x1031), "3020"));
	CHECK(!strcmp(clones_at(0x1033), "6000 3020"));
	/* in the displaced instructions: no test left */
	CHECK(!strcmp(clones_at(0x103d), "3020"));
	CHECK(!strcmp(clones_at(0x1044), ""));
	return check_exit();
}
