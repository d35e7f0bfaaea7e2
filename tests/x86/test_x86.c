/* test_x86: x86_disasm_iter (x86/reloc.h).  Capstone 4.0.2 stops at the
 * AVX-512 mask instructions of glibc's string functions; x86_disasm_iter
 * takes their length itself when they address no memory through rsp, rbp
 * or rip and write no general register but a caller-saved one.  The
 * encodings are those objdump (binutils 2.40) prints for them.  And
 * x86_cmp_r11_of, the comparison of a promotion stub. */
#include <stdlib.h>

#include "tests/check.h"
#include "x86/reloc.h"

static csh cs;
static cs_insn *insn;

/* Decode hex at 0x1000 with 0x90s after it: the length taken, or 0. */
static size_t decode(const char *hex)
{
	uint8_t code[32];
	size_t n = strlen(hex) / 2;
	memset(code, 0x90, sizeof(code));
	for (size_t i = 0; i < n; i++)
		sscanf(hex + 2 * i, "%2hhx", &code[i]);
	const uint8_t *p = code;
	size_t left = sizeof(code);
	uint64_t addr = 0x1000;
	if (!x86_disasm_iter(cs, &p, &left, &addr, insn))
		return 0;
	CHECK_EQ_INT(addr, 0x1000 + insn->size);
	CHECK_EQ_INT(left, sizeof(code) - insn->size);
	CHECK(!memcmp(insn->bytes, code, insn->size));
	return insn->size;
}

/* The instruction Capstone cannot decode, taken with its length, and a
 * copy of it elsewhere is its bytes. */
static void check_taken(const char *hex)
{
	size_t n = strlen(hex) / 2;
	CHECK_EQ_INT(decode(hex), n);
	uint8_t out[X86_RELOC_MAX_INSN];
	const char *why = NULL;
	CHECK_EQ_INT(x86_relocate_insn(insn, 0x400000, out, &why), n);
	CHECK(!memcmp(out, insn->bytes, n));
	CHECK(!x86_branch_target(insn) && !x86_rip_target(insn) && !x86_is_terminator(insn));
	cs_regs rd, wr;
	uint8_t nrd, nwr;
	CHECK(cs_regs_access(cs, insn, rd, &nrd, wr, &nwr) == CS_ERR_OK && nwr == 0);
}

/* x86_cmp_r11_of of hex (at `at`, for `to`): Capstone reads back a cmp of
 * %r11 with the operand `op` (AT&T), rip-relative ones at the same address;
 * or -1 (want NULL). */
static void check_cmp(const char *hex, uint64_t at, uint64_t to, const char *op)
{
	uint8_t code[16], out[17];
	size_t n = strlen(hex) / 2;
	for (size_t i = 0; i < n; i++)
		sscanf(hex + 2 * i, "%2hhx", &code[i]);
	int len = x86_cmp_r11_of(code, n, at, to, out);
	if (!op) {
		CHECK_EQ_INT(len, -1);
		return;
	}
	CHECK(len > 0 && (size_t)len <= n + 1);
	const uint8_t *p = out;
	size_t left = (size_t)len;
	uint64_t addr = to;
	CHECK(x86_disasm_iter(cs, &p, &left, &addr, insn) && left == 0);
	CHECK_EQ_INT(insn->id, X86_INS_CMP);
	char want[64];
	snprintf(want, sizeof(want), "%s, r11", op);
	CHECK_EQ_STR(insn->op_str, want);
}

int main(void)
{
	CHECK(x86_open(&cs) && (insn = cs_malloc(cs)) != NULL);
	/* what Capstone decodes stays Capstone's */
	CHECK_EQ_INT(decode("4889f8"), 3);                      /* mov %rdi,%rax */
	CHECK_EQ_INT(insn->id, X86_INS_MOV);
	/* glibc's, which Capstone 4.0.2 does not decode */
	check_taken("c5fb93c0");                 /* kmovd %k0,%eax */
	check_taken("c4e1fb93c8");               /* kmovq %k0,%rcx */
	check_taken("c5fb92d1");                 /* kmovd %ecx,%k2 */
	check_taken("c4e1f998d1");               /* kortestd %k1,%k2 */
	check_taken("c4e1f44bc0");               /* kunpckdq %k0,%k1,%k0 */
	check_taken("c4e1f545c0");               /* kord %k0,%k1,%k0 */
	check_taken("62f37d203f0700");           /* vpcmpeqb (%rdi),%ymm16,%k0 */
	check_taken("62f37d203e0e04");           /* vpcmpnequb (%rsi),%ymm16,%k1 */
	check_taken("62b37d203f041700");         /* vpcmpeqb (%rdi,%r10,1),%ymm16,%k0 (SIB) */
	check_taken("62f27e20265701");           /* vptestnmb 0x20(%rdi),%ymm16,%k2 */
	check_taken("62e37520254417" "02de");    /* vpternlogd $0xde,0x40(%rdi,%rdx,1),... */
	check_taken("62f37d203f8700010000" "00"); /* vpcmpb $0,0x100(%rdi): disp32 */
	/* refused: a callee-saved or the stack's register written, memory
	 * through rsp, rbp or rip, an opcode not in the list, a mask
	 * instruction with memory where only registers may be */
	CHECK_EQ_INT(decode("c4e1fb93db"), 0);   /* kmovq %k3,%rbx */
	CHECK_EQ_INT(decode("c5fb93e0"), 0);     /* kmovd %k0,%esp */
	CHECK_EQ_INT(decode("c57b93e0"), 0);     /* kmovd %k0,%r12d */
	CHECK_EQ_INT(decode("c5fb93e8"), 0);     /* kmovd %k0,%ebp */
	CHECK_EQ_INT(decode("62f37d203f04240000"), 0);   /* (%rsp) */
	CHECK_EQ_INT(decode("62f37d203f450000"), 0);     /* 0(%rbp) */
	CHECK_EQ_INT(decode("62f37d203f050000000000"), 0);  /* rip-relative */
	CHECK_EQ_INT(decode("62f27d487818"), 0);         /* vpbroadcastb: not a mask insn */
	CHECK_EQ_INT(decode("c5fc4100"), 0);             /* k logic with memory */
	/* calls and jumps through registers and memory; a rip-relative
	 * operand where the cmp is (jmp *0x10(%rip) at 0x1000: 0x1016) */
	check_cmp("ffd0", 0, 0, "rax");                          /* call *%rax */
	check_cmp("41ffe0", 0, 0, "r8");                         /* jmp *%r8 */
	check_cmp("ff6038", 0, 0, "qword ptr [rax + 0x38]");     /* jmp *0x38(%rax) */
	check_cmp("ffa080000000", 0, 0, "qword ptr [rax + 0x80]");
	check_cmp("ffa0800000", 0, 0, NULL);                    /* a byte short */
	check_cmp("42ff24c500001000", 0, 0, "qword ptr [r8*8 + 0x100000]");
	check_cmp("ff2510000000", 0x1000, 0x2000, "qword ptr [rip - 0xff1]");
	CHECK_EQ_INT(x86_rip_target(insn), 0x1016);
	check_cmp("ff2510000000", 0, 0, NULL);                   /* rip, no address */
	check_cmp("ff2510000000", 0x1000, 0x100001000, NULL);    /* out of reach */
	check_cmp("41ffe3", 0, 0, NULL);                         /* jmp *%r11 */
	check_cmp("43ff24dc", 0, 0, NULL);                       /* (%r12,%r11,8) */
	check_cmp("e910000000", 0, 0, NULL);                     /* jmp rel32 */
	check_cmp("ff30", 0, 0, NULL);                           /* push (%rax) */
	cs_free(insn, 1);
	cs_close(&cs);
	return check_exit();
}
