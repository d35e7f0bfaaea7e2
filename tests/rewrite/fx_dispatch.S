/* fx_dispatch.S: the two shapes where a dispatched clone meets another change
 * to the same code (run_dispatch_cases.sh plans them by hand).
 *
 *  - fx_dl_f tail-calls fx_dl_g, and main calls fx_dl_f directly at the
 *    callsite fx_dl_site_f (its return address is the label + 0): that one
 *    call instruction may take a direct clone of fx_dl_f (the call is pointed
 *    at it) and a clone of fx_dl_g by dispatch (fx_dl_g's entry tests the
 *    same return address);
 *  - fx_dl_g allocates its frame in its first instructions, the ones its
 *    dispatch displaces: padded in place, the padding must be applied to
 *    the displaced copy.  main also calls it indirectly at fx_dl_site_g;
 *  - sqlite3_mutex_enter's shape: fx_dl_enter begins with a branch and ends
 *    in a tail call through a pointer (jmp *8(%rax)) to fx_dl_lock, whose
 *    entry is a tail call itself (jmp fx_dl_leaf); fx_dl_popj makes that
 *    call in its epilogue (pop %rbx; jmp *%rax), main calls it directly.  Both are cloneable and
 *    dispatch (the displaced entry holds the branch, or is the jmp); main
 *    calls fx_dl_enter indirectly at fx_dl_site_e, and directly with 0 (the
 *    branch taken in the original);
 *  - fx_dl_size is 4 bytes (lea; ret), shorter than the jmp its dispatch
 *    writes at its entry, which runs into the alignment padding after it.
 *    main calls it indirectly at fx_dl_site_s and directly;
 *  - fx_dl_many calls fx_dl_leaf indirectly from 33 callsites: as many
 *    clones by dispatch as a function may take, and one more;
 *  - glibc's memmove shape: fx_dl_chk checks its arguments and falls
 *    through the nop padding after it into fx_dl_move, and fx_dl_pcpy
 *    jumps to fx_dl_move + 3, past its first instruction.  A jmp rel32 at
 *    fx_dl_move's entry would cover that target: its dispatch jumps by a
 *    jmp rel8 to an island in the padding.  main calls fx_dl_move
 *    indirectly at fx_dl_site_m, and fx_dl_chk at fx_dl_site_c.
 * Every function has CFI, as gcc would emit it. */
	.text

	.type fx_dl_leaf, @function
fx_dl_leaf:
	.cfi_startproc
	endbr64
	lea 1(%rdi), %rax
	ret
	.cfi_endproc
	.size fx_dl_leaf, .-fx_dl_leaf

/* frame allocated by the first instruction after endbr64 */
	.type fx_dl_g, @function
fx_dl_g:
	.cfi_startproc
	endbr64
	sub $24, %rsp
	.cfi_def_cfa_offset 32
	mov %rdi, 8(%rsp)
	call fx_dl_leaf
	add 8(%rsp), %rax
	add $24, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_dl_g, .-fx_dl_g

/* calls the leaf, then tail-calls fx_dl_g */
	.type fx_dl_f, @function
fx_dl_f:
	.cfi_startproc
	endbr64
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	mov %rdi, %rbx
	call fx_dl_leaf
	lea (%rax,%rbx), %rdi
	pop %rbx
	.cfi_def_cfa_offset 8
fx_dl_tail_g:                     /* a tail chain's jump (run_dispatch_cases.sh H, I) */
	{disp32} jmp fx_dl_g      /* rel32, as a call to another function: cloneable */
	.cfi_endproc
	.size fx_dl_f, .-fx_dl_f

/* its entry is a tail call */
	.type fx_dl_lock, @function
fx_dl_lock:
	.cfi_startproc
	endbr64
	{disp32} jmp fx_dl_leaf
	.cfi_endproc
	.size fx_dl_lock, .-fx_dl_lock

/* 0 for 0, else fx_dl_lock(x) through a method table */
	.type fx_dl_enter, @function
fx_dl_enter:
	.cfi_startproc
	endbr64
	test %rdi, %rdi
	je 1f
	lea fx_dl_methods(%rip), %rax
fx_dl_tail_lock:                  /* an indirect tail jump (run_dispatch_cases.sh K) */
	jmp *8(%rax)
1:	xor %eax, %eax
	ret
	.cfi_endproc
	.size fx_dl_enter, .-fx_dl_enter

/* shorter than a jmp rel32, padding after it */
	.type fx_dl_size, @function
fx_dl_size:
	.cfi_startproc
	lea 2(%rdi), %eax
	ret
	.cfi_endproc
	.size fx_dl_size, .-fx_dl_size
	.p2align 4

/* fx_dl_chk(d, s, n, size): fx_dl_move(d, s, n), after checking n <= size */
	.type fx_dl_chk, @function
fx_dl_chk:
	.cfi_startproc
	cmp %rdx, %rcx
	jb fx_dl_leaf            /* __chk_fail's place: never taken */
	.cfi_endproc
	.size fx_dl_chk, .-fx_dl_chk
	.nops 39                 /* glibc's: 11 + 11 + 11 + 6 bytes, no FDE */

/* fx_dl_move(d, s, n): d + n */
	.type fx_dl_move, @function
fx_dl_move:
	.cfi_startproc
	mov %rdi, %rax
.Lfx_dl_move_start:
	add %rdx, %rax
	ret
	.cfi_endproc
	.size fx_dl_move, .-fx_dl_move
	.p2align 4

/* fx_dl_pcpy(d, s, n): d + 2 n, mempcpy's way into memmove */
	.type fx_dl_pcpy, @function
fx_dl_pcpy:
	.cfi_startproc
	mov %rdi, %rax
	add %rdx, %rax
	jmp .Lfx_dl_move_start
	.cfi_endproc
	.size fx_dl_pcpy, .-fx_dl_pcpy
	.p2align 4

/* fx_dl_many(x): fx_dl_leaf(x) summed over 33 indirect calls, each at a
 * callsite of its own (fx_dl_many_1 .. _33): one more than a dispatch takes */
	.type fx_dl_many, @function
fx_dl_many:
	.cfi_startproc
	endbr64
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	push %r12
	.cfi_def_cfa_offset 24
	.cfi_offset %r12, -24
	sub $8, %rsp
	.cfi_def_cfa_offset 32
	mov %rdi, %r12
	xor %ebx, %ebx
	.irp k, 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33
	mov %r12, %rdi
	lea fx_dl_leaf(%rip), %rax
	call *%rax
fx_dl_many_\k:
	add %rax, %rbx
	.endr
	mov %rbx, %rax
	add $8, %rsp
	.cfi_def_cfa_offset 24
	pop %r12
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_dl_many, .-fx_dl_many
	.p2align 4

/* main: prints fx_dl_f(1) + fx_dl_g(fx_dl_f(1)) + fx_dl_enter(5) +
 * fx_dl_enter(0) + fx_dl_size(3) + fx_dl_size(4) + fx_dl_move(6, 0, 7) +
 * fx_dl_chk(8, 0, 9, 20) + fx_dl_pcpy(10, 0, 11) + fx_dl_many(2) +
 * fx_dl_popj(12), the
 * second, third, fifth and seventh calls indirect */
	.globl main
	.type main, @function
main:
	.cfi_startproc
	endbr64
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	mov $1, %edi
	call fx_dl_f
fx_dl_site_f:
	mov %rax, %rbx
	mov %rax, %rdi
	lea fx_dl_g(%rip), %rax
	call *%rax
fx_dl_site_g:
	add %rax, %rbx
	mov $5, %edi
	lea fx_dl_enter(%rip), %rax
	call *%rax
fx_dl_site_e:
	add %rax, %rbx
	xor %edi, %edi
	call fx_dl_enter
	add %rax, %rbx
	mov $3, %edi
	lea fx_dl_size(%rip), %rax
	call *%rax
fx_dl_site_s:
	add %rax, %rbx
	mov $4, %edi
	call fx_dl_size
	add %rax, %rbx
	mov $6, %edi
	mov $7, %edx
	lea fx_dl_move(%rip), %rax
	call *%rax
fx_dl_site_m:
	add %rax, %rbx
	mov $8, %edi
	mov $9, %edx
	mov $20, %ecx
	call fx_dl_chk
fx_dl_site_c:
	add %rax, %rbx
	mov $10, %edi
	mov $11, %edx
	call fx_dl_pcpy
	add %rax, %rbx
	mov $2, %edi
	call fx_dl_many
	add %rax, %rbx
	mov $12, %edi
	call fx_dl_popj
	lea (%rax,%rbx), %rsi
	lea fx_dl_fmt(%rip), %rdi
	xor %eax, %eax
	call printf@PLT
	xor %eax, %eax
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size main, .-main

/* fx_dl_leaf(x) + fx_dl_lock(x) through the method table, that call in
 * its epilogue: pop %rbx; jmp *%rax (a stub for the jump moves the pop) */
	.type fx_dl_popj, @function
fx_dl_popj:
	.cfi_startproc
	endbr64
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	mov %rdi, %rbx
	call fx_dl_leaf
	add %rax, %rbx
	mov %rbx, %rdi
	lea fx_dl_methods(%rip), %rax
	mov 8(%rax), %rax
	pop %rbx
	.cfi_def_cfa_offset 8
fx_dl_tail_popj:                  /* run_dispatch_cases.sh K */
	jmp *%rax
	.cfi_endproc
	.size fx_dl_popj, .-fx_dl_popj

	.section .data.rel.ro, "aw"
	.align 8
fx_dl_methods:
	.quad 0, fx_dl_lock
	.section .rodata
fx_dl_fmt:
	.string "%ld\n"
	.section .note.GNU-stack, "", @progbits
