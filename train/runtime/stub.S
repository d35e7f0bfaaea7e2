/* icpp_common: called from every per-function stub with
 *   [rsp] = return address into the stub, [rsp+8] = the stub's saved r11,
 *   r11 = the function's struct fn_meta, and the function's entry SP = rsp+16.
 * It preserves every general register (the stub restores r11) and the flags
 * are dead at a function entry.  It calls icpp_enter(fn, entry SP, rbp);
 * icpp_enter is built with
 * -mgeneral-regs-only, so vector registers are untouched. */
	.text
	.globl icpp_common
	.hidden icpp_common
	.type icpp_common, @function
icpp_common:
	.cfi_startproc
	push %rax
	.cfi_adjust_cfa_offset 8
	push %rcx
	.cfi_adjust_cfa_offset 8
	push %rdx
	.cfi_adjust_cfa_offset 8
	push %rsi
	.cfi_adjust_cfa_offset 8
	push %rdi
	.cfi_adjust_cfa_offset 8
	push %r8
	.cfi_adjust_cfa_offset 8
	push %r9
	.cfi_adjust_cfa_offset 8
	push %r10
	.cfi_adjust_cfa_offset 8
	push %rbx
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbx, -80
	mov %rsp, %rbx
	.cfi_def_cfa_register %rbx
	lea 88(%rsp), %rsi
	mov %r11, %rdi
	mov %rbp, %rdx
	and $-16, %rsp
	call icpp_enter
	mov %rbx, %rsp
	.cfi_def_cfa_register %rsp
	pop %rbx
	.cfi_adjust_cfa_offset -8
	pop %r10
	.cfi_adjust_cfa_offset -8
	pop %r9
	.cfi_adjust_cfa_offset -8
	pop %r8
	.cfi_adjust_cfa_offset -8
	pop %rdi
	.cfi_adjust_cfa_offset -8
	pop %rsi
	.cfi_adjust_cfa_offset -8
	pop %rdx
	.cfi_adjust_cfa_offset -8
	pop %rcx
	.cfi_adjust_cfa_offset -8
	pop %rax
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size icpp_common, .-icpp_common

/* icpp_rescan_saving_fpu: rt_rescan runs Capstone and libc, which may use any
 * vector register, while the interrupted function's arguments may live in
 * them: save the whole extended state (xsave, all components) around it. */
	.globl icpp_rescan_saving_fpu
	.hidden icpp_rescan_saving_fpu
	.type icpp_rescan_saving_fpu, @function
icpp_rescan_saving_fpu:
	.cfi_startproc
	push %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	mov rt_xsave_size(%rip), %eax
	sub %rax, %rsp
	and $-64, %rsp
	xor %eax, %eax
	mov %rax, 512(%rsp)
	mov %rax, 520(%rsp)
	mov %rax, 528(%rsp)
	mov %rax, 536(%rsp)
	mov %rax, 544(%rsp)
	mov %rax, 552(%rsp)
	mov %rax, 560(%rsp)
	mov %rax, 568(%rsp)
	mov $-1, %eax
	mov $-1, %edx
	xsave64 (%rsp)
	call rt_rescan
	mov $-1, %eax
	mov $-1, %edx
	xrstor64 (%rsp)
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size icpp_rescan_saving_fpu, .-icpp_rescan_saving_fpu

/* long rt_syscall6(nr, a, b, c, d, e, f) */
	.globl rt_syscall6
	.hidden rt_syscall6
	.type rt_syscall6, @function
rt_syscall6:
	.cfi_startproc
	mov %rdi, %rax
	mov %rsi, %rdi
	mov %rdx, %rsi
	mov %rcx, %rdx
	mov %r8, %r10
	mov %r9, %r8
	mov 8(%rsp), %r9
	syscall
	ret
	.cfi_endproc
	.size rt_syscall6, .-rt_syscall6

	.section .note.GNU-stack,"",@progbits
