/* dispatch.S: the run-time cost of clones by dispatch (bench/rewrite/dispatch.py).
 *
 *   dispatch N     calls bench_work N times from the hot callsite, then once
 *                  from each of the cold callsites bench_site_1 .. _129 (the
 *                  129th: one more than a dispatch may test, for
 *                  tests/rewrite/run_dispatch_many.sh)
 *
 * Every call is indirect, as the calls a dispatch serves are.  The plans of
 * dispatch.py clone bench_work for K of the cold callsites: its entry then
 * searches K return addresses on every call, and the hot call, which none of
 * them names, runs the search to its end (always one path through it: its
 * branches are predicted, so this measures instructions, not mispredicted
 * branches).  bench_work is small (a frame and one call), so the cost per
 * call is the dispatch's own, not hidden in long work.
 *
 * Built twice more for tagged calls (rewriter.h section 1): with BENCH_LIB,
 * a library of bench_work alone; with BENCH_MAIN, the program without it,
 * whose cold calls go through bench_work's GOT slot (call *slot(%rip), a
 * call that can be tagged).  A clone of bench_work in the library for K
 * cold calls of the program searches K tags on every call. */
	.text
#ifndef BENCH_MAIN
	.type bench_leaf, @function
bench_leaf:
	.cfi_startproc
	endbr64
	lea 1(%rdi), %rax
	ret
	.cfi_endproc
	.size bench_leaf, .-bench_leaf

	.type bench_work, @function
bench_work:
	.cfi_startproc
	endbr64
	sub $24, %rsp
	.cfi_def_cfa_offset 32
	mov %rdi, 8(%rsp)
	call bench_leaf
	add 8(%rsp), %rax
	add $24, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size bench_work, .-bench_work
#ifdef BENCH_LIB
	.globl bench_work
#endif
#endif

#ifndef BENCH_LIB
/* one cold call of bench_work through %rbx, its return address named */
.macro cold_site k
	mov %r12, %rdi
#ifdef BENCH_MAIN
	call *bench_work@GOTPCREL(%rip)
#else
	call *%rbx
#endif
bench_site_\k:
	add %rax, %r12
.endm

	.globl main
	.type main, @function
main:
	.cfi_startproc
	endbr64
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	push %r12
	.cfi_def_cfa_offset 24
	.cfi_offset %r12, -24
	push %r13
	.cfi_def_cfa_offset 32
	.cfi_offset %r13, -32
	xor %r13d, %r13d
	cmp $2, %edi
	jl 1f
	mov 8(%rsi), %rdi
	xor %esi, %esi
	mov $10, %edx
	call strtol@PLT
	mov %rax, %r13
#ifdef BENCH_MAIN
1:	mov bench_work@GOTPCREL(%rip), %rbx
#else
1:	lea bench_work(%rip), %rbx
#endif
	xor %r12d, %r12d
	test %r13, %r13
	jz 3f
2:	mov %r13, %rdi
	call *%rbx
	add %rax, %r12
	dec %r13
	jnz 2b
3:	.irp k, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33,34,35,36,37,38,39,40,41,42,43,44,45,46,47,48,49,50,51,52,53,54,55,56,57,58,59,60,61,62,63,64
	cold_site \k
	.endr
	.irp k, 65,66,67,68,69,70,71,72,73,74,75,76,77,78,79,80,81,82,83,84,85,86,87,88,89,90,91,92,93,94,95,96,97,98,99,100,101,102,103,104,105,106,107,108,109,110,111,112,113,114,115,116,117,118,119,120,121,122,123,124,125,126,127,128,129
	cold_site \k
	.endr
	mov %r12, %rsi
	lea bench_fmt(%rip), %rdi
	xor %eax, %eax
	call printf@PLT
	xor %eax, %eax
	pop %r13
	.cfi_def_cfa_offset 24
	pop %r12
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size main, .-main

	.section .rodata
bench_fmt:
	.string "%ld\n"
#endif
	.section .note.GNU-stack, "", @progbits
