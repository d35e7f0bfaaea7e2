/* fx_entry.S: three functions that only an entry wrapper can pad (frames
 * of pushes only: no allocation to grow), with frames of one size, so that
 * main -> fx_entry_x -> fx_entry_d, main -> fx_entry_y -> fx_entry_d and
 * main -> fx_entry_z -> fx_entry_d reach D at one height (run_entry.sh).
 * X calls D again by a tail call when D returns more than 1000 (main's
 * `tail` mode only): its wrapper would move that frame of D, which the map
 * has beside X's, so X takes one only where training saw no such call.
 * Their first bytes are what the wrapper displaces: X's two pushes and a
 * mov, Y's compare and a branch (taken for inputs below 4: into Y's code
 * past them), Z's three pushes and its call of D (libtcl's Tcl_Alloc:
 * `push %rbx; mov %edi,%ebx; call TclpAlloc@plt`); D may throw through
 * them. */
	.text
	.globl fx_entry_x
	.type fx_entry_x, @function
fx_entry_x:
	.cfi_startproc
	endbr64
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	push %r12
	.cfi_def_cfa_offset 24
	.cfi_offset %r12, -24
	mov %rdi, %rbx
	push %rax                        /* keep rsp 16-aligned at the call */
	.cfi_def_cfa_offset 32
	call fx_entry_d
	cmp $1000, %rax
	ja 3f
	add %rbx, %rax
	.cfi_remember_state
	pop %rdx
	.cfi_def_cfa_offset 24
	pop %r12
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_restore_state
3:	pop %rdx                         /* a large D: D again, by a tail call */
	.cfi_def_cfa_offset 24
	pop %r12
	.cfi_def_cfa_offset 16
	lea 1(%rbx), %rdi
	pop %rbx
	.cfi_def_cfa_offset 8
	jmp fx_entry_d
	.cfi_endproc
	.size fx_entry_x, .-fx_entry_x

	.globl fx_entry_y
	.type fx_entry_y, @function
fx_entry_y:
	.cfi_startproc
	cmp $4, %rdi
	jl 2f
1:	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	push %r12
	.cfi_def_cfa_offset 24
	.cfi_offset %r12, -24
	lea 1(%rdi), %rbx
	push %rax
	.cfi_def_cfa_offset 32
	mov %rbx, %rdi
	call fx_entry_d
	sub %rbx, %rax
	pop %rdx
	.cfi_def_cfa_offset 24
	pop %r12
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
2:	add $100, %rdi
	jmp 1b
	.cfi_endproc
	.size fx_entry_y, .-fx_entry_y

	.globl fx_entry_z
	.type fx_entry_z, @function
fx_entry_z:
	.cfi_startproc
	endbr64
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	push %r12
	.cfi_def_cfa_offset 24
	.cfi_offset %r12, -24
	push %rax
	.cfi_def_cfa_offset 32
	call fx_entry_d
	add $7, %rax
	pop %rdx
	.cfi_def_cfa_offset 24
	pop %r12
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_entry_z, .-fx_entry_z

	.section .note.GNU-stack,"",@progbits
