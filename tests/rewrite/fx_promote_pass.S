/* pass_on(f, a, b, c, d, e, g) returns f(a, g), g being its stack
 * argument, loaded right before the indirect call: the instruction a
 * promotion stub displaces with the call (rewriter.h section 1, Promoted
 * calls), and one that padding pass_on's frame in place edits (g lies
 * above the allocation), so the stub must take the edit along. */
	.text
	.globl	pass_on
	.type	pass_on, @function
pass_on:
	.cfi_startproc
	push	%rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	sub	$16, %rsp
	.cfi_def_cfa_offset 32
	mov	%rdi, %rax
	mov	%rsi, %rdi
	mov	32(%rsp), %rsi
	call	*%rax
	add	$16, %rsp
	.cfi_def_cfa_offset 16
	pop	%rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size	pass_on, .-pass_on
	.section	.note.GNU-stack,"",@progbits
