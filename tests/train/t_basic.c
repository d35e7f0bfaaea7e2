/* t_basic: direct and mutual recursion, tail calls, function pointers, a qsort
 * callback through libc, setjmp/longjmp, a variable-sized frame, deep
 * recursion, calls from a .cold fragment, an entry a jump lands inside. */
#include "gt.h"

#include <setjmp.h>

static volatile int sink;

/* The store after each call keeps gcc -O2 from turning the recursion into a
 * loop (tail recursion with an accumulator), as it does with fib's second
 * call. */
GT_FN static long fact(int n)
{
	GT_ENTER();
	if (n <= 1)
		return 1;
	long r = fact(n - 1);
	sink = (int)r;
	return n * r;
}

/* Two call sites of itself: two callsites per height. */
GT_FN static int fib(int n)
{
	GT_ENTER();
	if (n < 2)
		return n;
	return fib(n - 1) + fib(n - 2);
}

/* Mutual recursion; at -O2 both calls are tail calls (jmp). */
GT_FN static int is_odd(unsigned n);
GT_FN static int is_even(unsigned n)
{
	GT_ENTER();
	if (n == 0)
		return 1;
	return is_odd(n - 1);
}
GT_FN static int is_odd(unsigned n)
{
	GT_ENTER();
	if (n == 0)
		return 0;
	return is_even(n - 1);
}

/* A chain of tail calls: each callee enters at its caller's CFA. */
GT_FN static int tail_c(int x)
{
	GT_ENTER();
	sink = x;
	return x * 3;
}
GT_FN static int tail_b(int x)
{
	GT_ENTER();
	sink = x;
	return tail_c(x + 1);
}
GT_FN static int tail_a(int x)
{
	GT_ENTER();
	sink = x;
	return tail_b(x * 2);
}

/* Function pointers. */
GT_FN static int op_add(int a, int b)
{
	GT_ENTER();
	return a + b;
}
GT_FN static int op_mul(int a, int b)
{
	GT_ENTER();
	return a * b;
}
GT_FN static int op_sub(int a, int b)
{
	GT_ENTER();
	return a - b;
}
static int (*const ops[])(int, int) = {op_add, op_mul, op_sub};

GT_FN static int apply(int (*op)(int, int), int a, int b)
{
	GT_ENTER();
	return op(a, b) + 0 * sink;
}
GT_FN static int fold(int n)
{
	GT_ENTER();
	int acc = 1;
	for (int i = 0; i < n; i++)
		acc = apply(ops[i % 3], acc, i + 1);
	return acc;
}

/* qsort: the comparator is called from libc's msort. */
GT_FN static int key_of(const int *p)
{
	GT_ENTER();
	return *p % 100;
}
GT_FN static int cmp_int(const void *a, const void *b)
{
	GT_ENTER();
	int ka = key_of(a), kb = key_of(b);
	return ka != kb ? (ka > kb) - (ka < kb) : (*(const int *)a > *(const int *)b) -
							(*(const int *)a < *(const int *)b);
}
GT_FN static long sort_some(void)
{
	GT_ENTER();
	int v[40];
	unsigned s = 12345;
	for (int i = 0; i < 40; i++) {
		s = s * 1103515245 + 12345;
		v[i] = (int)(s >> 16) % 1000;
	}
	qsort(v, 40, sizeof v[0], cmp_int);
	long h = 0;
	for (int i = 0; i < 40; i++)
		h = h * 31 + v[i];
	return h;
}

/* setjmp/longjmp: dive deep, jump out, then call again at lower heights. */
static jmp_buf jb;
GT_FN static void dive(int depth)
{
	GT_ENTER();
	if (depth > 0)
		dive(depth - 1);
	else if (sink >= 0)
		longjmp(jb, 7);
	sink = depth;
}
GT_FN static int after_jump(int v)
{
	GT_ENTER();
	return v + is_even(3);
}
GT_FN static int jump_root(void)
{
	GT_ENTER();
	volatile int r = setjmp(jb);
	if (r == 0)
		dive(9);
	return after_jump(r);
}

/* A variable-sized frame. */
GT_FN static int vla_user(int n)
{
	GT_ENTER();
	volatile char buf[n];
	for (int i = 0; i < n; i++)
		buf[i] = (char)i;
	return buf[n - 1] + op_add(n, 1);
}

/* Deep recursion: thousands of frames on the stack at once. */
GT_FN static int deep(int n)
{
	GT_ENTER();
	if (n == 0)
		return 0;
	int r = deep(n - 1);
	sink = r;
	return r + 1;
}

/* Calls from a .cold fragment (gcc -O2 puts the calls of a cold function
 * there): the outermost activation jumps to the fragment's start (a hooked
 * entry), the innermost into its middle (no entry), so the nearest frame of
 * the fragment is an outer activation's (python3's imports, where training
 * once took it for the caller and lost the frames between). */
static unsigned char cold_at[8];
GT_FN __attribute__((cold)) static int cold_leaf(int x)
{
	GT_ENTER();
	sink = x;
	return x + 1;
}
GT_FN static int cold_owner(int n)
{
	GT_ENTER();
	int r = n;
	if (__builtin_expect(cold_at[n] & 1, 0))
		r += cold_leaf(n) * 3;
	if (n > 0)
		r += cold_owner(n - 1);
	if (__builtin_expect(cold_at[n] & 2, 0))
		r += cold_leaf(-n) * 5;
	return r;
}

/* An entry that a jump lands inside, 6 bytes in (glibc's mempcpy jumps into
 * memmove so): the hook's 5-byte jmp cannot go there, a 2-byte jmp to an
 * island in the padding before it can (train/analysis.c).  island_entry(x)
 * is island_leaf(x) + 1; island_jumper(x) jumps past its first instruction
 * with x + 100; island_fallthrough(x) runs into it through the padding, where
 * the island is, with x + 200.  run_gt.sh checks island_entry is hooked. */
GT_FN int island_leaf(int x)
{
	GT_ENTER();
	sink = x;
	return x * 2;
}
int island_entry(int x);
int island_jumper(int x);
int island_fallthrough(int x);
__asm__(".text\n"
	".p2align 4\n"
	".globl island_fallthrough\n"
	".type island_fallthrough, @function\n"
	"island_fallthrough:\n"
	".cfi_startproc\n"
	"	endbr64\n"
	"	lea 200(%rdi), %edi\n"
	".cfi_endproc\n"
	".size island_fallthrough, .-island_fallthrough\n"
	".fill 24, 1, 0x90\n"
	".globl island_entry\n"
	".type island_entry, @function\n"
	"island_entry:\n"
	".cfi_startproc\n"
	"	endbr64\n"
	"	mov %edi, %eax\n"
	"island_entry_body:\n"
	"	sub $8, %rsp\n"
	".cfi_adjust_cfa_offset 8\n"
	"	mov %eax, %edi\n"
	"	call island_leaf\n"
	"	add $8, %rsp\n"
	".cfi_adjust_cfa_offset -8\n"
	"	add $1, %eax\n"
	"	ret\n"
	".cfi_endproc\n"
	".size island_entry, .-island_entry\n"
	".globl island_jumper\n"
	".type island_jumper, @function\n"
	"island_jumper:\n"
	".cfi_startproc\n"
	"	endbr64\n"
	"	lea 100(%rdi), %eax\n"
	"	jmp island_entry_body\n"
	".cfi_endproc\n"
	".size island_jumper, .-island_jumper\n");

GT_FN int main(void)
{
	GT_ENTER();
	printf("fact %ld\n", fact(12));
	printf("fib %d\n", fib(14));
	printf("even %d %d\n", is_even(17), is_even(24));
	printf("tail %d\n", tail_a(5));
	printf("fold %d\n", fold(10));
	printf("sort %ld\n", sort_some());
	printf("jump %d\n", jump_root());
	printf("vla %d %d\n", vla_user(100), vla_user(3000));
	printf("deep %d\n", deep(3000));
	cold_at[3] = 1;
	cold_at[0] = 2;
	printf("cold %d\n", cold_owner(3));
	printf("island %d %d %d\n", island_entry(7), island_jumper(7), island_fallthrough(7));
	return 3;   /* a non-zero exit status the test compares */
}
