/* fx_veneer_thunk.S: a tail-call thunk as gcc emits libtcl's (xor
 * %edx,%edx; jmp to the function after it, a rel8 jump), with a rel8
 * conditional jump out as well.  A clone of find_entry, far from both
 * targets, reaches them through veneers (rewriter.h section 1, Cloning).
 * find_entry(x, k) = create_entry(|x|, k, 0) = vleaf(|x| + k). */
	.text
	.globl find_entry
	.type find_entry, @function
find_entry:
	.cfi_startproc
	test %rdi, %rdi
	js negative
	xor %edx, %edx
	jmp create_entry
	.cfi_endproc
	.size find_entry, .-find_entry

	.type negative, @function
negative:
	.cfi_startproc
	neg %rdi
	xor %edx, %edx
	jmp create_entry
	.cfi_endproc
	.size negative, .-negative

	.type create_entry, @function
create_entry:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	lea (%rdi,%rsi), %rbx
	lea (%rbx,%rdx), %rdi
	call vleaf
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size create_entry, .-create_entry
	.section .note.GNU-stack,"",@progbits
