/* fx_frames.S: functions with known answers for the rewriter's feasibility
 * analysis (test_rewrite.c checks each).  Every function has CFI, as gcc
 * would emit it.  fx_run (called by fx_main.c) runs the ones that can run, so
 * a rewritten fixture can be executed too. */
	.text

/* leaf: nothing to pad; callee-side stack arguments: none */
	.globl fx_leaf
	.type fx_leaf, @function
fx_leaf:
	.cfi_startproc
	mov %rdi, %rax
	ret
	.cfi_endproc
	.size fx_leaf, .-fx_leaf

/* fp, sub imm8 16, leave: pad <= 96 (imm8 holds 127) */
	.globl fx_fp_leave
	.type fx_fp_leave, @function
fx_fp_leave:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	sub $16, %rsp
	mov %rdi, -8(%rbp)
	call fx_leaf
	add -8(%rbp), %rax
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size fx_fp_leave, .-fx_fp_leave

/* fp with a saved register and an add epilogue: two edits, pad <= 112 */
	.globl fx_fp_add
	.type fx_fp_add, @function
fx_fp_add:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	push %rbx
	.cfi_offset %rbx, -24
	sub $8, %rsp
	mov %rdi, %rbx
	call fx_leaf
	add %rbx, %rax
	add $8, %rsp
	pop %rbx
	pop %rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size fx_fp_add, .-fx_fp_add

/* fp, sub imm32 0x100: pad up to the mask's limit */
	.globl fx_fp_imm32
	.type fx_fp_imm32, @function
fx_fp_imm32:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	sub $0x100, %rsp
	call fx_leaf
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size fx_fp_imm32, .-fx_fp_imm32

/* fp, sub $0x78: imm8 without room */
	.globl fx_fp_full
	.type fx_fp_full, @function
fx_fp_full:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	sub $0x78, %rsp
	call fx_leaf
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size fx_fp_full, .-fx_fp_full

/* no frame pointer: push, sub 16, reads its second stack argument at
 * 40(%rsp) (CFA + 8) and a local at 8(%rsp).  Edits: the sub, the add, the
 * disp 40 -> pad <= 80 (127 - 40), FDE offsets 32 -> 32 + D.  Callee-side
 * stack arguments: 16 bytes. */
	.globl fx_sp
	.type fx_sp, @function
fx_sp:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	sub $16, %rsp
	.cfi_def_cfa_offset 32
	mov 40(%rsp), %rbx
	mov %rdi, 8(%rsp)
	call fx_leaf
	add 8(%rsp), %rax
	add %rbx, %rax
	add $16, %rsp
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_sp, .-fx_sp

/* no frame pointer, an 8-byte load at 12(%rsp) spans the padding's place */
	.globl fx_sp_straddle
	.type fx_sp_straddle, @function
fx_sp_straddle:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	sub $16, %rsp
	.cfi_def_cfa_offset 32
	mov 12(%rsp), %rax
	call fx_leaf
	add $16, %rsp
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_sp_straddle, .-fx_sp_straddle

/* no frame pointer, the one-past-the-end address of the topmost local
 * (16(%rsp) at k = 32): it must not move with the padding, a pointer to a
 * saved register at the same place would have to -> refused */
	.globl fx_sp_endptr
	.type fx_sp_endptr, @function
fx_sp_endptr:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	sub $16, %rsp
	.cfi_def_cfa_offset 32
	lea 16(%rsp), %rax
	call fx_leaf
	add $16, %rsp
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_sp_endptr, .-fx_sp_endptr

/* no frame pointer, an incoming argument at disp8 120: no room */
	.globl fx_sp_dispfull
	.type fx_sp_dispfull, @function
fx_sp_dispfull:
	.cfi_startproc
	sub $24, %rsp
	.cfi_def_cfa_offset 32
	mov 120(%rsp), %rax
	call fx_leaf
	add $24, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_sp_dispfull, .-fx_sp_dispfull

/* frame made of pushes only */
	.globl fx_noalloc
	.type fx_noalloc, @function
fx_noalloc:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	call fx_leaf
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_noalloc, .-fx_noalloc

/* stack realignment */
	.globl fx_realign
	.type fx_realign, @function
fx_realign:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	and $-32, %rsp
	sub $32, %rsp
	call fx_leaf
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size fx_realign, .-fx_realign

/* dynamic allocation with a frame pointer (a VLA): paddable, pad <= 96;
 * the call after it has no caller-side bound (fx_leaf's own bound, 0, wins) */
	.globl fx_fp_vla
	.type fx_fp_vla, @function
fx_fp_vla:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	sub $16, %rsp
	lea 15(%rdi), %rax
	and $-16, %rax
	sub %rax, %rsp
	call fx_leaf
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size fx_fp_vla, .-fx_fp_vla

/* dynamic allocation without a frame pointer */
	.globl fx_sp_dyn
	.type fx_sp_dyn, @function
fx_sp_dyn:
	.cfi_startproc
	sub $24, %rsp
	.cfi_def_cfa_offset 32
	sub %rdi, %rsp
	call fx_leaf
	ud2
	.cfi_endproc
	.size fx_sp_dyn, .-fx_sp_dyn

/* a call before the allocation (shrink-wrapped fast path) */
	.globl fx_call_outside
	.type fx_call_outside, @function
fx_call_outside:
	.cfi_startproc
	test %edi, %edi
	jne 1f
	jmp fx_leaf
1:	call fx_leaf
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	sub $16, %rsp
	call fx_leaf
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size fx_call_outside, .-fx_call_outside

/* fp function reaching an rbp-addressed local through rsp */
	.globl fx_fp_rsplocal
	.type fx_fp_rsplocal, @function
fx_fp_rsplocal:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	sub $16, %rsp
	movl $1, -4(%rbp)
	mov 12(%rsp), %eax
	call fx_leaf
	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size fx_fp_rsplocal, .-fx_fp_rsplocal

/* data in text: a jump over bytes that decode to nothing */
	.globl fx_data
	.type fx_data, @function
fx_data:
	.cfi_startproc
	sub $8, %rsp
	.cfi_def_cfa_offset 16
	call fx_leaf
	jmp 1f
	.byte 0xff, 0xff, 0xff, 0xff
1:	add $8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_data, .-fx_data

/* two allocations on two paths */
	.globl fx_multi
	.type fx_multi, @function
fx_multi:
	.cfi_startproc
	test %edi, %edi
	je 1f
	sub $16, %rsp
	.cfi_remember_state
	.cfi_def_cfa_offset 24
	call fx_leaf
	add $16, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_restore_state
1:	sub $32, %rsp
	.cfi_def_cfa_offset 40
	call fx_leaf
	add $32, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_multi, .-fx_multi

/* a loop at the entry: the displaced instructions would branch into
 * themselves (no entry wrapper) */
	.globl fx_loophead
	.type fx_loophead, @function
fx_loophead:
	.cfi_startproc
1:	sub $1, %edi
	jg 1b
	push %rbx
	.cfi_def_cfa_offset 16
	call fx_leaf
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_loophead, .-fx_loophead

/* A frameless function NAME with a jump table as gcc -fPIC emits one, its
 * table's address in %rdx by LOAD (an instruction naming NAME_table), its
 * index %rdi masked by MASK, or left as BOUND leaves it (which may jump to
 * 3f, the default); the table's entries lead to its two cases, then EXTRA
 * (.long expressions), if any. */
	.macro fx_switch_fn name, load, mask=1, extra, bound
	.globl \name
	.type \name, @function
\name:
	.cfi_startproc
	.ifb \bound
	and $\mask, %edi
	.else
	\bound
	.endif
	\load
	movslq (%rdx,%rdi,4), %rax
	add %rdx, %rax
	jmp *%rax
1:	mov $3, %eax
	ret
2:	mov $5, %eax
	ret
	.ifnb \bound
3:	xor %eax, %eax
	ret
	.endif
	.cfi_endproc
	.size \name, .-\name
	.section .rodata
	.align 4
\name\()_table:
	.long 1b - \name\()_table, 2b - \name\()_table
	.ifnb \extra
	.long \extra
	.endif
	.text
	.endm

/* by a lea: a clone copies the table */
	fx_switch_fn fx_switch, "lea fx_switch_table(%rip), %rdx"

/* by a lea, and read as data too (a copy would change what it reads): no
 * clone */
	fx_switch_fn fx_switch_read, "lea fx_switch_read_table(%rip), %rdx; mov fx_switch_read_table(%rip), %ecx"

/* four cases, the third in another function's code (python3.11's
 * PyToken_ThreeChars): the entries read stop before it, short of the
 * bound, so no clone (a copy of two entries would send index 2 and 3
 * past it) */
	fx_switch_fn fx_switch_out, "lea fx_switch_out_table(%rip), %rdx", 3, \
		"fx_leaf - fx_switch_out_table, fx_switch_out - fx_switch_out_table"

/* Bounds checked another way than by a mask, each table followed by a
 * code address (fx_leaf), so a clone needs the bound (analyze.c
 * switch_bound).  Bounded: by a cmp of the low byte, widened by a movzbl
 * nine instructions on (lua5.4's lua_yieldk); by a cmp of memory reloaded
 * past a store to other bytes; on each of two paths, a jbe taken and a
 * mask, its upper half cleared before either; by a cmp of the byte it was
 * copied from (perl's Perl_sv_setiv). */
	.macro fx_switch_bounded name, bound
	fx_switch_fn \name, "lea \name\()_table(%rip), %rdx", 1, "fx_leaf - \name\()_table", \
		"\bound"
	.endm
	fx_switch_bounded fx_switch_widened, "mov %edi, %eax; cmp $1, %al; ja 3f; \
		mov %rsi, %rcx; mov %rsi, %rcx; mov %rsi, %rcx; mov %rsi, %rcx; \
		mov %rsi, %rcx; mov %rsi, %rcx; mov %rsi, %rcx; mov %rsi, %rcx; movzbl %al, %edi"
	fx_switch_bounded fx_switch_memory, "cmpb $1, (%rsi); movb $0, 1(%rsi); ja 3f; \
		movzbl (%rsi), %edi"
	fx_switch_bounded fx_switch_paths, "mov %edi, %edi; test %esi, %esi; jz 4f; \
		cmp $1, %edi; jbe 5f; jmp 3f; 4: and $1, %edi; 5:"
	fx_switch_bounded fx_switch_copied, "mov %edi, %eax; movzbl %al, %edi; cmp $1, %al; ja 3f"
/* the table's lea before a loop: its register holds it on every path */
	fx_switch_fn fx_switch_hoisted, "", 1, "fx_leaf - fx_switch_hoisted_table", \
		"lea fx_switch_hoisted_table(%rip), %rdx; 4: sub $1, %esi; jg 4b; and $1, %edi"
/* Not bounded (no clone): the index changed after its cmp; its upper half
 * never cleared; the memory compared stored to before it is reloaded; one
 * path of two without a check; the value compared changed after the index
 * was copied from it. */
	fx_switch_bounded fx_switch_changed, "cmp $1, %edi; ja 3f; add %ecx, %edi"
	fx_switch_bounded fx_switch_upper, "cmp $1, %edi; ja 3f"
	fx_switch_bounded fx_switch_stored, "cmpb $1, (%rsi); movb $7, (%rsi); ja 3f; \
		movzbl (%rsi), %edi"
	fx_switch_bounded fx_switch_path, "mov %edi, %edi; test %esi, %esi; jz 5f; \
		cmp $1, %edi; ja 3f; 5:"
	fx_switch_bounded fx_switch_copied_changed, "mov %edi, %eax; movzbl %al, %edi; \
		add $5, %eax; cmp $1, %al; ja 3f"
/* ... on one path only: the table is not known */
	fx_switch_fn fx_switch_unhoisted, "", 1, "fx_leaf - fx_switch_unhoisted_table", \
		"test %esi, %esi; jz 4f; lea fx_switch_unhoisted_table(%rip), %rdx; 4: and $1, %edi"

/* Two switches, the second where the first's table register is reused:
 * a first round that lets either jump reach every case loses the first's
 * table at its loop (the second's state joins its cases); the second
 * round, with the second switch bounded to its own cases, knows it
 * (analyze.c switch_round). */
	.globl fx_switch_rounds
	.type fx_switch_rounds, @function
fx_switch_rounds:
	.cfi_startproc
	lea fx_switch_rounds_t1(%rip), %r8
1:	and $1, %edi
	movslq (%r8,%rdi,4), %rax
	add %r8, %rax
	jmp *%rax
2:	sub $1, %esi
	jg 1b
	ret
3:	mov %rsi, %r8
	and $1, %edx
	lea fx_switch_rounds_t2(%rip), %rcx
	movslq (%rcx,%rdx,4), %rax
	add %rcx, %rax
	jmp *%rax
4:	mov $3, %eax
	ret
5:	mov $5, %eax
	ret
	.cfi_endproc
	.size fx_switch_rounds, .-fx_switch_rounds
	.section .rodata
	.align 4
fx_switch_rounds_t1:
	.long 2b - fx_switch_rounds_t1, 3b - fx_switch_rounds_t1, fx_leaf - fx_switch_rounds_t1
fx_switch_rounds_t2:
	.long 4b - fx_switch_rounds_t2, 5b - fx_switch_rounds_t2, fx_leaf - fx_switch_rounds_t2
	.text

/* loaded from data, not by a lea: no copy of the table could be named, so
 * no clone */
	fx_switch_fn fx_switch_loaded, "mov fx_switch_table_at(%rip), %rdx"
	.section .data.rel.ro,"aw"
	.align 8
fx_switch_table_at:
	.quad fx_switch_loaded_table
	.text

/* a jump table in a frame, one of whose targets releases the frame and
 * returns (lua5.4's 0x22416): only the first instruction of that run takes
 * the table's state, the rest follow from it.  Padded in place; fx_run
 * takes both targets.  Returns 10 for an even argument, else 20. */
	.globl fx_jtab_run
	.type fx_jtab_run, @function
fx_jtab_run:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	sub $16, %rsp
	.cfi_def_cfa_offset 32
	mov %rdi, %rbx
	call fx_leaf
	mov %rbx, %rdi
	and $1, %edi
	lea fx_jtab_run_table(%rip), %rdx
	movslq (%rdx,%rdi,4), %rax
	add %rdx, %rax
	jmp *%rax
1:	mov $10, %eax
	add $16, %rsp
	.cfi_remember_state
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_restore_state
2:	mov $20, %eax
	add $16, %rsp
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_jtab_run, .-fx_jtab_run
	.section .rodata
	.align 4
fx_jtab_run_table:
	.long 1b - fx_jtab_run_table, 2b - fx_jtab_run_table
	.text

/* a tail call through a pointer: cloneable */
	.globl fx_tailptr
	.type fx_tailptr, @function
fx_tailptr:
	.cfi_startproc
	jmp *8(%rdi)
	.cfi_endproc
	.size fx_tailptr, .-fx_tailptr

/* varargs-like callee: takes the address of its incoming stack arguments */
	.globl fx_va
	.type fx_va, @function
fx_va:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	lea 16(%rbp), %rax
	pop %rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size fx_va, .-fx_va

/* A caller of everything: an fp frame with 32 bytes allocated (caller-side
 * stack-argument bound 32).
 *   call fx_leaf   callee bound 0          -> wrap >= 16
 *   call fx_sp     callee bound 16         -> copies 16, wrap >= 32
 *   call fx_va     callee unknown, caller 32 -> copies 32, wrap >= 48
 *   call *%rax     indirect
 *   call _setjmp   returns twice
 * Runs only the first two (fx_run). */
	.globl fx_calls
	.type fx_calls, @function
fx_calls:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	sub $32, %rsp
	movq $5, 0(%rsp)
	movq $7, 8(%rsp)
	call fx_leaf
	call fx_sp
	test %edi, %edi
	jne 1f
	call fx_va
	lea fx_leaf(%rip), %rax
	call *%rax
	lea fx_jb(%rip), %rdi
	call _setjmp@PLT
1:	leave
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size fx_calls, .-fx_calls

/* A big no-fp frame calling outside the module: every byte of it might be a
 * stack argument -> too many to copy (more than RW_MAX_COPY, 512) */
	.globl fx_big
	.type fx_big, @function
fx_big:
	.cfi_startproc
	sub $600, %rsp
	.cfi_def_cfa_offset 608
	call getpid@PLT
	add $600, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_big, .-fx_big

/* An owner with a .cold fragment, as gcc -freorder-blocks-and-partition
 * splits one: fx_owner(x, y, z, u, v, w, s) allocates its frame (local x at
 * 8(%rsp)) and for x < 0 jumps to fx_owner.cold in .text.unlikely, which runs
 * in its frame (its own FDE starts at CFA = rsp + 32), calls fx_leaf, reads
 * the stack argument s at 32(%rsp) (a padding edit in the fragment) and
 * jumps back.  Returns 2x for x >= 0, s - x else.  Cloneable with its
 * fragment, pad <= 80 (disp 32); the fragment itself is not cloneable. */
	.globl fx_owner
	.type fx_owner, @function
fx_owner:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	sub $16, %rsp
	.cfi_def_cfa_offset 32
	mov %rdi, 8(%rsp)
	test %rdi, %rdi
	js fx_owner.cold
	call fx_leaf
.Lfx_owner_back:
	add 8(%rsp), %rax
	add $16, %rsp
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_owner, .-fx_owner

	.section .text.unlikely,"ax",@progbits
	.type fx_owner.cold, @function
fx_owner.cold:
	.cfi_startproc
	.cfi_def_cfa_offset 32
	.cfi_offset %rbx, -16
	neg %rdi
	call fx_leaf
	add %rax, %rax
	add 32(%rsp), %rax
	jmp .Lfx_owner_back
	.cfi_endproc
	.size fx_owner.cold, .-fx_owner.cold
	.text

/* An owner with two fragments: not cloneable, nor are they. */
	.globl fx_two_frags
	.type fx_two_frags, @function
fx_two_frags:
	.cfi_startproc
	sub $8, %rsp
	.cfi_def_cfa_offset 16
	test %edi, %edi
	js fx_two_frags.cold
	je fx_two_frags.cold.1
	call fx_leaf
.Lfx_two_frags_back:
	add $8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_two_frags, .-fx_two_frags

	.section .text.unlikely
	.type fx_two_frags.cold, @function
fx_two_frags.cold:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	call fx_leaf
	jmp .Lfx_two_frags_back
	.cfi_endproc
	.size fx_two_frags.cold, .-fx_two_frags.cold

	.type fx_two_frags.cold.1, @function
fx_two_frags.cold.1:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	call fx_leaf
	jmp .Lfx_two_frags_back
	.cfi_endproc
	.size fx_two_frags.cold.1, .-fx_two_frags.cold.1
	.text

/* Two functions jumping into one fragment: neither is cloneable (the first
 * owns it, the second cannot share it). */
	.globl fx_shares_a
	.type fx_shares_a, @function
fx_shares_a:
	.cfi_startproc
	sub $8, %rsp
	.cfi_def_cfa_offset 16
	test %edi, %edi
	js fx_shared.cold
	call fx_leaf
	add $8, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_shares_a, .-fx_shares_a

	.globl fx_shares_b
	.type fx_shares_b, @function
fx_shares_b:
	.cfi_startproc
	sub $8, %rsp
	.cfi_def_cfa_offset 16
	jmp fx_shared.cold
	.cfi_endproc
	.size fx_shares_b, .-fx_shares_b

	.section .text.unlikely
	.type fx_shared.cold, @function
fx_shared.cold:
	.cfi_startproc
	.cfi_def_cfa_offset 16
	call fx_leaf
	ud2
	.cfi_endproc
	.size fx_shared.cold, .-fx_shared.cold
	.text

/* fx_run(x): runs the functions that can run, returns a checksum. */
	.globl fx_run
	.type fx_run, @function
fx_run:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	push %rbx
	.cfi_offset %rbx, -24
	sub $24, %rsp
	mov %rdi, %rbx
	call fx_fp_leave
	mov %rax, -24(%rbp)
	mov %rbx, %rdi
	call fx_fp_add
	add %rax, -24(%rbp)
	mov %rbx, %rdi
	call fx_fp_imm32
	add %rax, -24(%rbp)
	mov $1, %edi
	call fx_calls
	add %rax, -24(%rbp)
	movq $100, (%rsp)
	mov %rbx, %rdi
	call fx_owner
	add %rax, -24(%rbp)
	movq $100, (%rsp)
	mov %rbx, %rdi
	neg %rdi
	call fx_owner            /* through its fragment */
	add %rax, -24(%rbp)
	mov %rbx, %rdi
	call fx_pop_release
	add %rax, -24(%rbp)
	mov %rbx, %rdi
	neg %rdi
	call fx_pop_release      /* its tail call, after the pop (adds 0) */
	add %rax, -24(%rbp)
	mov %rbx, %rdi
	call fx_lock_skip        /* adds 0 */
	add %rax, -24(%rbp)
	mov %rbx, %rdi
	call fx_noret_cfi        /* adds 0, in its frame */
	add %rax, -24(%rbp)
	mov %rbx, %rdi
	neg %rdi
	call fx_noret_cfi        /* adds 0, at entry depth */
	add %rax, -24(%rbp)
	mov %rbx, %rdi
	call fx_mask
	add %rax, -24(%rbp)
	mov %rbx, %rdi
	call fx_jtab_run         /* its odd target */
	add %rax, -24(%rbp)
	lea 1(%rbx), %rdi
	call fx_jtab_run         /* its even one */
	add %rax, -24(%rbp)
	mov -24(%rbp), %rax
	add $24, %rsp
	pop %rbx
	pop %rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size fx_run, .-fx_run

/* an 8-byte allocation that a pop releases on the path of a tail call, as
 * gcc emits python3.11's subtype_dealloc: no padding in place (it would
 * stay allocated), the rest of the analysis sound: its call may be wrapped,
 * it may be cloned.  Returns its argument either way. */
	.globl fx_pop_release
	.type fx_pop_release, @function
fx_pop_release:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	sub $8, %rsp
	.cfi_def_cfa_offset 24
	mov %rdi, %rbx
	call fx_leaf
	test %rbx, %rbx
	js 1f
	add $8, %rsp
	.cfi_remember_state
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
1:	.cfi_restore_state
	mov %rbx, %rdi
	pop %rax
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	.cfi_restore %rbx
	jmp fx_leaf
	.cfi_endproc
	.size fx_pop_release, .-fx_pop_release

/* glibc's _int_malloc: a call of a static helper that does not return
 * (malloc_printerr; no name says so), then the code at entry depth that a
 * jump before the allocation reaches.  The CFI row after the call (past the
 * alignment nops) says rsp+8 where the call left rsp+32: the call does not
 * return, and the function is padded in place.  Returns 0. */
	.type fx_noret_helper, @function
fx_noret_helper:
	.cfi_startproc
	ud2
	.cfi_endproc
	.size fx_noret_helper, .-fx_noret_helper

	.globl fx_noret_cfi
	.type fx_noret_cfi, @function
fx_noret_cfi:
	.cfi_startproc
	test %rdi, %rdi
	js 2f
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	sub $16, %rsp
	.cfi_def_cfa_offset 32
	mov %rdi, %rbx
	call fx_leaf
	cmp %rax, %rbx
	jne 1f
	add $16, %rsp
	.cfi_remember_state
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	.cfi_restore %rbx
	xor %eax, %eax
	ret
	.cfi_restore_state
1:	call fx_noret_helper
	.p2align 4
	.cfi_def_cfa_offset 8
	.cfi_restore %rbx
2:	xor %eax, %eax
	ret
	.cfi_endproc
	.size fx_noret_cfi, .-fx_noret_cfi

/* glibc's catomic_* in malloc: a jump over a lock prefix into the
 * instruction it prefixes (cmpl $0,%fs:0x18; je 1f; lock; 1: cmpxchg).
 * The jump lands on the same instruction without the prefix: analysed,
 * padded in place and cloned like any other.  Returns 0. */
	.globl fx_lock_skip
	.type fx_lock_skip, @function
fx_lock_skip:
	.cfi_startproc
	sub $24, %rsp
	.cfi_def_cfa_offset 32
	call fx_leaf
	mov %rax, %rcx
	xor %eax, %eax
	cmpl $0, fx_lock_word(%rip)
	je 1f
	lock
1:	cmpxchg %rcx, fx_lock_word(%rip)
	xor %eax, %eax
	add $24, %rsp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_lock_skip, .-fx_lock_skip

/* glibc's AVX-512 string functions: mask instructions Capstone 4.0.2
 * cannot decode (x86_disasm_iter decodes them), on a branch that fx_run
 * never takes (its argument is not negative; this host need not have
 * AVX-512): analysed and cloned like any other, the copies copied byte for
 * byte.  Returns its argument + 1. */
	.globl fx_mask
	.type fx_mask, @function
fx_mask:
	.cfi_startproc
	test %rdi, %rdi
	jns 1f
	kmovd %k0, %eax
	vpcmpub $4, (%rsi), %ymm16, %k1
	vptestnmb 32(%rdi), %ymm16, %k2
	kortestd %k1, %k2
	vpternlogd $0xde, 64(%rdi,%rdx), %ymm17, %ymm16
	kmovq %k2, %rcx
	ret
1:	lea 1(%rdi), %rax
	ret
	.cfi_endproc
	.size fx_mask, .-fx_mask

/* a call with one 8-byte stack argument: the callee reads 8(%rsp) at its
 * entry, the caller stores 16 -> copies 8, wrap >= 16 (a trampoline that
 * starts with a 4-byte push; never run) */
	.globl fx_arg8
	.type fx_arg8, @function
fx_arg8:
	.cfi_startproc
	mov 8(%rsp), %rax
	ret
	.cfi_endproc
	.size fx_arg8, .-fx_arg8

	.globl fx_arg8_caller
	.type fx_arg8_caller, @function
fx_arg8_caller:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	sub $16, %rsp
	.cfi_def_cfa_offset 32
	mov %rdi, (%rsp)
	call fx_arg8
	add $16, %rsp
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_arg8_caller, .-fx_arg8_caller

	.bss
	.align 16
fx_jb:	.zero 256

	.text
/* stack arguments pushed from callee-saved registers after the prologue
 * saved them (lua5.4's code generator): the pushes of %rbx and %r14 that
 * pass arguments save nothing, so the caller stores 24 bytes (the two and
 * an alignment slot) and the callee reads 16 -> copies 16.  Counted as
 * saves, they bounded the call at 0 bytes.  `fx A B` prints A + B. */
	.globl fx_argpush_callee
	.type fx_argpush_callee, @function
fx_argpush_callee:
	.cfi_startproc
	mov 8(%rsp), %rax
	add 16(%rsp), %rax
	ret
	.cfi_endproc
	.size fx_argpush_callee, .-fx_argpush_callee

	.globl fx_argpush
	.type fx_argpush, @function
fx_argpush:
	.cfi_startproc
	push %r14
	.cfi_def_cfa_offset 16
	.cfi_offset %r14, -16
	push %rbx
	.cfi_def_cfa_offset 24
	.cfi_offset %rbx, -24
	push %rax
	.cfi_def_cfa_offset 32
	mov %rdi, %rbx
	mov %rsi, %r14
	push %rbx
	.cfi_def_cfa_offset 40
	push %r14
	.cfi_def_cfa_offset 48
	call fx_argpush_callee
	add $24, %rsp
	.cfi_def_cfa_offset 24
	pop %rbx
	.cfi_def_cfa_offset 16
	pop %r14
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_argpush, .-fx_argpush

/* the CFI as the second witness of the saved registers: %r12, never
 * written, pushed as fx_arg8's stack argument (a save to the pushes alone,
 * which would bound the call at 0 bytes); the CFI names only %rbx saved, so
 * the caller stores 8 -> copies 8 (never run) */
	.globl fx_cfi_witness
	.type fx_cfi_witness, @function
fx_cfi_witness:
	.cfi_startproc
	push %rbx
	.cfi_def_cfa_offset 16
	.cfi_offset %rbx, -16
	push %r12
	.cfi_def_cfa_offset 24
	call fx_arg8
	add $8, %rsp
	.cfi_def_cfa_offset 16
	pop %rbx
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size fx_cfi_witness, .-fx_cfi_witness

	.data
	.align 8
fx_lock_word:
	.quad 0

	.section .note.GNU-stack,"",@progbits
