/* x86: moving x86-64 instructions to another address (Capstone decodes).
 *
 * Training hooks displace a function's first instructions into a trampoline,
 * and the rewriter moves instructions into new code: both need the same
 * relocation.  An instruction keeps its meaning at the new address when:
 *  - a rip-relative memory operand gets its disp32 recomputed (it must still
 *    fit in int32);
 *  - a relative jmp/jcc is re-encoded with a rel32 to the same target;
 *  - a relative call becomes "push original return address; jmp target", so
 *    the callee and any unwinder see the original return address, never one
 *    inside the trampoline (computed rip-relative: the rewriter relocates at
 *    link-time addresses);
 *  - anything else is copied byte for byte.
 * loop/jrcxz (rel8 only) and instructions Capstone cannot decode are refused,
 * but for the AVX-512 mask instructions x86_disasm_iter decodes itself
 * (Capstone 4.0.2 lacks them; they are copied byte for byte).
 */
#ifndef ICPP_X86_RELOC_H
#define ICPP_X86_RELOC_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Worst-case output bytes for one relocated instruction. */
#define X86_RELOC_MAX_INSN 32
/* A relative call's copy is X86_RELOC_CALL_BYTES long; SP lies below the
 * call's by X86_RELOC_CALL_SP[i].sp bytes from its byte .at on (the return
 * address, then a register saved while it is computed): CFA rows. */
#define X86_RELOC_CALL_BYTES 24
struct x86_sp_step {
	uint8_t at, sp;
};
#define X86_RELOC_CALL_STEPS 3
extern const struct x86_sp_step X86_RELOC_CALL_SP[X86_RELOC_CALL_STEPS];

/* An x86-64 Capstone handle with detail on; false on failure. */
bool x86_open(csh *cs);

/* cs_disasm_iter (insn cs_malloc'd), and where Capstone 4.0.2 cannot
 * decode one of the AVX-512 mask instructions of glibc's string functions
 * (kmovd %k0,%eax; vpcmpub $4,(%rsi),%ymm16,%k1; vptestnmb; vpternlogd;
 * kortestd; kord; kunpckdq), that instruction: its length and bytes, with
 * an empty detail (no operand, no register read or written, no group), which
 * is exact for what icpp asks of it.  Only those that address no memory
 * through rsp, rbp or rip (nothing to relocate, no stack reference) and
 * write no general register but a caller-saved one (kmov to rax, rcx, rdx,
 * rsi, rdi, r8-r11) are taken: the stack analysis and a clone's copy need
 * nothing more of them. */
bool x86_disasm_iter(csh cs, const uint8_t **code, size_t *size, uint64_t *addr, cs_insn *insn);

/* The bytes an entry keeps in place: endbr64's 4 at code (len of them),
 * else 0. */
size_t x86_endbr64_len(const uint8_t *code, size_t len);

/* Why insn cannot be relocated, or NULL when it can (insn needs detail). */
const char *x86_unrelocatable(const cs_insn *insn);

/* The target of a direct relative branch/call, or 0 when insn is not one. */
uint64_t x86_branch_target(const cs_insn *insn);

/* The address a rip-relative memory operand of insn refers to, or 0. */
uint64_t x86_rip_target(const cs_insn *insn);

/* The absolute address of insn's memory operand without a base register (a
 * table indexed by one, in an executable that is no PIE), or 0; *disp_off
 * where its 32-bit displacement lies in insn (0 when it has no 4 bytes). */
uint64_t x86_abs_operand(const cs_insn *insn, uint8_t *disp_off);

/* Whether insn never falls through (ret, jmp, ud2, hlt). */
bool x86_is_terminator(const cs_insn *insn);

/* Relocate one decoded instruction (insn->address is where it ran) so that
 * it runs at `to`; writes at most X86_RELOC_MAX_INSN bytes to out.
 * Returns the number of bytes written, or -1 when impossible (see header
 * comment; *why says which). */
int x86_relocate_insn(const cs_insn *insn, uint64_t to, uint8_t *out, const char **why);

/* Re-encode insn (insn->address is where it ran) to run at `to` with the same
 * length and kind, for a copy of a whole function (a clone): a relative
 * branch or call goes to `target` (its own target when 0) -- a call stays a
 * call, so the callee returns into the copy -- and a rip-relative operand
 * keeps its absolute address.  Writes insn->size bytes to out; -1 with *why
 * when a displacement no longer fits (rel8 branches keep their reach). */
int x86_copy_insn(const cs_insn *insn, uint64_t to, uint64_t target, uint8_t *out,
		  const char **why);

/* Whether code[0..len), at addr, is alignment padding between functions:
 * nop instructions, int3 and one-byte nops (a run may end mid-way). */
bool x86_is_padding(csh cs, const uint8_t *code, size_t len, uint64_t addr);
/* The same, decoding into insn (cs_malloc'd, or with its own detail): no
 * allocation, for the training runtime, which stays off the program's heap;
 * and a jmp rel32 at `island` is padding too (below). */
bool x86_is_padding_in(csh cs, cs_insn *insn, const uint8_t *code, size_t len, uint64_t addr,
		       uint64_t island);
/* The length of the padding instruction at code (decoded into insn), or 0
 * when it is not one.  At `island` (not 0), a jmp rel32 counts as padding:
 * the island icpp rewrite writes into the padding before a function whose
 * entry jumps there by a jmp rel8 (rewriter.h section 1, Islands). */
size_t x86_padding_insn(csh cs, cs_insn *insn, const uint8_t *code, size_t len, uint64_t addr,
			uint64_t island);

/* For an indirect call or jump at `at` (insn[0..len): an optional REX
 * prefix, FF /2 `call *OP` or FF /4 `jmp *OP`, OP a register or memory
 * operand that does not use %r11), encode `cmp %r11,OP` for address `to`
 * into out (at most len + 1 bytes: the same operand bytes, REX.W and REX.R
 * added) and return its length; -1 for any other instruction.  A
 * rip-relative OP keeps its address (-1 when at is 0, or out of reach from
 * to).  A promotion compares OP with a function's address in %r11
 * (rewriter.h section 1, Promoted calls, Tail chains). */
int x86_cmp_r11_of(const uint8_t *insn, size_t len, uint64_t at, uint64_t to, uint8_t *out);

/* Encode "jmp target" at address `at` into out (5 bytes, rel32); -1 when the
 * distance does not fit in int32. */
int x86_encode_jmp(uint64_t at, uint64_t target, uint8_t *out);

#endif
