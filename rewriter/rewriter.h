/* rewriter: what `icpp rewrite` may change in an x86-64 ELF, and changing it.
 *
 * Read shared/design/method.md ("Ambiguity and its cures") and
 * shared/design/rewriting.md first.  The solver (disambig/) decides how much
 * height to add where; this module says what is possible (the capability),
 * applies a plan, predicts the rewritten binary's pathmap, and checks a
 * trained map of the rewritten binary against that prediction (icpp verify).
 *
 * ---------------------------------------------------------------------------
 * 1. Feasibility (analyze.c), per function and per call instruction
 *
 * rw_open() decodes every function the binary layer finds (symbols and FDEs)
 * with Capstone (x86_disasm_iter: and the AVX-512 mask instructions of
 * glibc's string functions, which Capstone 4.0.2 lacks) and follows its
 * stack pointer through its control flow: the
 * state at each instruction is k = CFA - SP (SP = CFA - k), whether the
 * frame's padding is below SP ("padded"), and whether rbp = CFA - 16.  Edges
 * are direct jumps and fall-throughs; landing pads (from the FDE's LSDA) start
 * with the SP of the calls they catch; jump-table targets start with the state
 * of the function's indirect jump.  A direct jump out of the function with a
 * frame still allocated must land on a fragment (gcc's .cold part: a function
 * entered without a call), which then shares this function's frame and its
 * analysis.  Where the CFI gives CFA = rsp + k, it must agree with k.
 *
 * Frame padding (activation record resizing) by D bytes, D a multiple of 16
 * (so every SP keeps its alignment), at the function's single frame
 * allocation A (`sub $N,%rsp`, `add $-N,%rsp` or `lea -N(%rsp),%rsp`):
 *  - frame-pointer functions (CFA = rbp + 16 in the body): A allocates N + D;
 *    the padding lies between the outgoing-argument area (rsp-relative) and
 *    the locals (rbp-relative), so only A and every deallocation that adds
 *    the allocation back (`add $M,%rsp` before the pops; leave, mov/lea from
 *    rbp need nothing) change.  Refused when an rsp-relative access reaches
 *    the locals or saved registers (the padding would split them).
 *  - frame-pointer-less functions: the padding lies between the saved
 *    registers and the locals: A, every deallocation, every rsp-relative
 *    memory operand or lea that addresses at or above the padding (saved
 *    registers, return address, incoming stack arguments, va_start), and
 *    every CFA offset of the function's FDEs (and its fragments') that is at
 *    or below the allocation grow by D.  An address computed (lea) between
 *    the locals and the CFA is refused: it is as likely the one-past-the-end
 *    pointer of the topmost local (which must not move) as a pointer to a
 *    saved register (which must).  The FDE is re-encoded in the merged
 *    .eh_frame.  gdb's view of CFA-based locals of such a frame moves by D.
 *  - either way: every call of the function (and its fragments) must happen
 *    inside the allocation, so that padding moves every frame called from it
 *    (the solver's model); immediates and displacements must fit their
 *    encoding (imm8/disp8 hold 127); the frame stays below 4 KiB (no
 *    stack-clash probing needed).  Refusals carry an rw_pad_why.
 * A padded function moves exactly the frames called from inside it by D
 * (disambig.h section 2, "ARR").
 *
 * Callsite wrapping by W bytes (W a multiple of 16, at least 16): a 5-byte
 * `call rel32` (or a longer call with prefixes, or `call *slot(%rip)`) is
 * replaced, at the same return address, by a call to a trampoline in a new
 * executable segment:
 *     lea -(W-8-K)(%rsp),%rsp; K/8 x pushq (W-8)(%rsp); call target;
 *     lea (W-8)(%rsp),%rsp; ret
 * K bytes of stack arguments are copied down (the callee finds them above its
 * return address as before).  K is bounded from the callee (reads above its
 * CFA, when it never takes their address and makes no tail call) and from the
 * caller (what lies between SP at the call and its saved registers/locals;
 * a push of a callee-saved register saves it only while the register holds
 * the caller's value, after a write it passes an argument, and the call's
 * CFI row must name the slot saved too);
 * the smaller known bound wins; W >= K + 8.  A call that leaves the binary
 * (PLT or GOT slot) has no callee here: rw_bound_imports() reads its bound
 * from the modules that define the name (imports.c).  Flags, %rax (varargs count) and
 * %r10 (static chain) are untouched.  Refused: indirect calls through a
 * register, returns-twice callees (setjmp, vfork, getcontext, ...), unknown or
 * too large stack arguments.  A wrapped callsite adds W to the height of the
 * frame it enters and of every frame below it (disambig.h, "Wrapping").
 *
 * Cloning (clone.c), clone k = (f, c): f is copied whole to f_k in the new
 * executable segment, and with it f's fragment g (.cold), if f has one, to
 * g_k at the next 16-byte boundary after f_k; the direct call c (`call
 * rel32`) calls f_k (through its trampoline when c is also wrapped: the
 * trampoline calls f_k).  Each copy keeps every instruction's length and
 * place relative to its range's start (x86_copy_insn, Capstone): jumps into
 * f or g go to f_k or g_k (f's jumps to its fragment land in g_k, g_k's
 * jumps back in f_k); calls and jumps out of f and g go to the originals, and
 * so does a call of f's entry (a copy never calls a clone of its own),
 * except the copies of wrapped calls, which call their own trampolines
 * (clone wraps; a copy without one is wrapped like its original), and the
 * copy of a direct call that a later clone takes (a chain, clone j = (h, e,
 * in k): the copy of e in f_k calls h_j, or its trampoline does when the
 * copy is wrapped; the note names that copy as h_j's site), unless h_j
 * takes it by a dispatch (below: the copy is no direct call of h, an
 * indirect call say); rip-relative operands
 * keep their addresses.  f_k's padding applies f's in-place edits (in f's
 * code and g's) to the copies.  Because the layout is the same, f_k's FDE
 * is a copy of f's with a new pc_begin (its CFA program edited for a no-fp
 * padding as in place), sharing f's CIE and LSDA (call-site and landing-pad
 * offsets count from the FDE's start), and g_k's a copy of g's the same way.
 * A function is cloneable (else clone_why says why) when it is no fragment
 * and has at most one, which no other function jumps into, its stack
 * analysis (of f and g as one frame) succeeded, its indirect jumps are tail
 * calls (no frame live, no code reached only through them; the copy of a
 * tail call jumps where the original's does) or all of them relative
 * switches' (below), and each of f and g takes no address of f's or g's
 * code, is covered exactly by one FDE of its
 * own with a pc-relative pc_begin, and that FDE's LSDA (if any) has no
 * LPStart, lands only in the FDE's range and is pointed at pc-relatively (or
 * absolutely in a non-PIE executable).  A call is redirectable when it is a
 * direct `call rel32` to a function start (not a returns-twice one), or a
 * bound call (below).  Clones
 * A switch of position-independent code jumps through a table of 32-bit
 * offsets from the table (gcc: `lea T(%rip),%rA ... movslq (%rA,%rI,4),%rC;
 * add %rA,%rC; jmp *%rC`), one of an executable that is no PIE through a
 * table of addresses (`jmp *T(,%rI,8)`); the entries name the original's
 * cases: the clone gets a copy of each table f or g names (rw_unit.tables:
 * the entries read from T while they land on f's or g's instructions, at
 * least two), each entry its case's copy (as an offset from the table's
 * copy, or its address), after the veneers' room, and the copy of the lea
 * (the jmp) names it.  The clone is refused when another indirect jump
 * shares f with a switch's, when an instruction other than the lea (the
 * jmp) names such a table, or when the entry after those read is a code
 * address all the same (the table may go on outside f) unless every jump
 * through the table is bounded to no more (RW_CLONE_SWITCH_UNBOUNDED).
 * A bound is found by a walk back from the jump along every path of f's
 * own control flow into it (analyze.c switch_bound; at most 64
 * instructions in all; a table entry or a landing pad ends it): the
 * index, traced through copies (mov, movzx, movsx, and reloads of the
 * same memory with no store to it between), meets an `and $N-1` of it,
 * or a `cmp $N-1` of it (or of what it is copied from before the cmp,
 * unchanged since) followed by a ja to the default (or the jbe taken to
 * the switch; jae, jb with $N); a cmp of its low 32 bits counts
 * when a forward dataflow over f says the upper half is 0 there, a cmp
 * of its low byte (word) when the write before it is a movzx from no
 * more than that.  A relative table's base register must hold the table
 * by a lea on every path (a forward dataflow over f: the lea may come
 * before a loop; a second round lets each switch the first bounded reach
 * only its own cases).  The relative triple itself may not be a
 * branch target: its add or jmp entered from elsewhere jumps to whatever
 * the register holds.
 * A rel8 jump out of f or g (a tail-call thunk's `jmp`: libtcl's
 * Tcl_FindHashEntry ends `xor %edx,%edx; jmp` into the function after it)
 * no longer reaches its target from the copy: it jumps to a veneer, a `jmp
 * rel32` to the target placed at the 16-byte boundary after the clone's
 * last copy (at most RW_MAX_VENEERS, each within the copy's rel8 reach),
 * with an FDE that repeats the clone's row at the jump and a local symbol
 * __icpp_veneer_COPY (COPY: the jump's copy) that icpp report and training
 * read as the clone's frame, no function of its own (bin_stub_caller,
 * bin_veneer).  Clones
 * get a local FUNC symbol __icpp_clone_K_NAME, the copy of a fragment
 * __icpp_clone_K_GNAME (g's name; NAME.cold when g has none), and are listed
 * in the note (the fragment's copy too: frag_addr, frag_size, frag_func).
 *
 * Tail chains (write.c redirect_tails), for a clone k = (f, e) whose `site`
 * e is the first of function g's direct tail jumps to f (rw_plan_clone.
 * tail; disambig.h section 2, "Tail calls"): every such jump of g (a jmp
 * or jcc rel32 in g's own code, rw_tail_jumps: g makes no other tail call
 * that could reach f) is pointed at f_k in place, so that every frame g
 * hands on to f by a tail call is f_k's; with `parent` J (a clone of g),
 * the copies of those jumps in clone J instead.  No dispatch: the frame's
 * return address stays the call's that entered g (or its copy).  A jump
 * of g through its own PLT entry whose slot the binary's own f fills (a
 * library's jump to its exported f: libstdc++'s string _M_create to
 * operator new, fx_xcall_lib's fx_fwd) goes to a bound call's thunk for
 * f_k instead (Bound calls, below); a jump to the PLT entry of a function
 * of a library rewritten after g's module, to the thunk of a checked call
 * of its clone there (Cross-module calls, below; rw_plan_xcall.tail).
 * Either thunk ends in a jump, so the frame stays the call's.
 * Indirect tail jumps (`jmp *OP`: sqlite3_mutex_enter's jmp *0x80(%rax)
 * to the mutex method, sqlite3MallocSize's to the allocator's) are
 * promoted as indirect calls are (Promoted calls, below): where g's only
 * indirect jumps are such tail calls and each can take a stub
 * (rw_func.tail_promotable: its instructions that make 5 bytes with it
 * move whole, as a promoted call's, or are its epilogue (pop, add to rsp,
 * leave), no branch lands among them, its FDE has no LSDA), and g's other
 * tail jumps to each function can be pointed elsewhere (any_route: no
 * fragment's jump), g's one route goes to any function of b, named by its
 * first indirect tail jump e (rw_tail_routes), and clone (f, e) points
 * g's direct jumps to f at f_k and makes each indirect one (or its copy in
 * clone J) `jmp S`, the rest int3:
 *     G: 16 x int3
 *     S: the displaced instructions, moved; per clone of f_i at e (the
 *        heaviest first): lea f_i(%rip),%r11; cmp %r11,OP; je f_i_k
 *        jmp *OP                               (moved: a rip-relative OP
 *                                               keeps its address)
 * a local FUNC symbol __icpp_promote_SITE (SITE: the jump's last byte), no
 * frame (its FDE repeats g's rows from the first displaced instruction to
 * the jump, as the stub moves them: eh_window_cfa), read as g's frame
 * (bin_stub_caller).  %r11 and the flags are scratch at f's entry.  Unlike a
 * promoted call's, the stub may begin at g's entry (after its endbr64):
 * nothing returns into g, and training's hook moves the stub's jmp; g
 * then takes no dispatch.  A pointer that holds another address of f (a
 * PLT entry) misses the clone: icpp verify finds f's frame where f_k's was
 * predicted.
 *
 * Dispatch (entry.c), for a clone k = (f, c) whose call c is not a direct
 * call of f (indirect, through the PLT when not bound (below), or a call of
 * a function that tail-calls f; or of another module: Tagged calls, below),
 * or a chain's clone k = (f, c in j) whose copy of c in clone j is not: f's
 * entry tests the return address instead.  The whole
 * instructions covering 5 bytes after f's endbr64 are displaced and replaced
 * by `jmp D` (as for an entry wrapper, below; a branch among them keeps its
 * target, past them in f; a ret or jmp may end them, and when that ends f
 * short of 5 bytes the jmp covers the alignment padding after f, which
 * training's hooks accept the same way; a direct call may end them too,
 * libtcl's Tcl_Alloc: `push %rbx; mov %edi,%ebx; call TclpAlloc@plt`, its
 * copy pushing the original return address, below):
 *     G: 16 x int3
 *     D: lea A(%rip),%r11; sub (%rsp),%r11      (%r11 = A - return address,
 *                                                A the end of the lea)
 *        a binary search over the keys A - R_k of f's dispatched clones:
 *          cmp $key,%r11; je f_k; jg upper half; lower half ...
 *        (runs of at most 4 keys compared one by one, the heaviest first;
 *        a node splits its keys by the weights of their clones, the
 *        entries training saw each take, so the hot ones come first)
 *        [the entry wrapper T when f is also padded that way]
 *     B: the displaced instructions; jmp f+N
 * The code from G on has a local FUNC symbol __icpp_dispatch_NAME (a
 * function without a name: __icpp_dispatch_0xADDR; __icpp_entry_... when
 * it holds an entry wrapper too), which icpp report decodes to place a
 * sample taken in it (report/entry.c).
 * R_k is c's return address (a chain's: that of c's copy in clone j), or
 * that of the call in its trampoline when it is wrapped (a trampoline
 * serves one callsite, or one copy).  %r11 and the flags are
 * scratch at a function's entry in the ABI.  A frame's return address is its
 * callsite's however it was entered, by c or by a tail call of c's callee,
 * so the dispatch takes exactly the frames (f, c) of the map; a copy of a
 * call in a clone returns elsewhere and keeps the original f, unless a
 * chain's test names that copy.  At most
 * RW_MAX_DISPATCH tests per function: every entry of f runs the search, about
 * 3 log2(K) instructions for K tests (bench/rewrite/dispatch.py).  A
 * function dispatches (rw_func.dispatch) when it is cloneable, its first
 * instructions can be displaced and no branch of its own (or of its
 * fragment's) lands among them: a function with a fragment takes no entry
 * wrapper, but may dispatch.
 *
 * Islands (analyze.c, entry.c): where a branch lands among the bytes the
 * jmp rel32 would cover (glibc's mempcpy jumps to memmove + 3, past its
 * first instruction; or f's own code jumps there), f's entry takes a jmp
 * rel8 instead, displacing the whole instructions that cover 2 bytes, to
 * an island: a jmp rel32 to the entry code, written over the alignment
 * padding before f (the rest of the padding instruction it cuts becomes
 * nops).  As for training's own islands (train/analysis.c), the padding
 * from the end of the code before f must decode as nops, so that code
 * falling through it (glibc's __memmove_chk into memmove) meets the island
 * on an instruction boundary and enters f's entry code as it entered f;
 * the island is the last boundary with room, within rel8 reach; no jump
 * of the binary may land inside it; and an earlier boundary must have
 * room for training's island, which training writes there when it hooks
 * f in OUT (it takes the jmp rel32 at the target of f's jmp rel8 for
 * padding: x86_padding_insn).  A function another one jumps into
 * (RW_PAD_ENTERED_INSIDE) dispatches when the instructions displaced lie
 * before every such target: by a jmp rel32 when its bytes do, else by an
 * island.  It takes no entry wrapper (the jumper runs its code in its own
 * frame, which padding f would move).
 * Training OUT sees f's entry (hooked), then f_k's at the same CFA, which
 * replaces it as a tail call would: rw_collapse drops the childless frame
 * (f, c) that this leaves beside (f_k, c), where frames of f_k beside it
 * were entered as often (a dispatch that missed leaves f's frame, which
 * icpp verify then finds where the prediction has f_k's).
 *
 * Tagged calls (write.c, entry.c), for a clone k = (f, c) whose call c is
 * in another module M (disambig.h section 2, "Dispatch"; both rewritten by
 * one plan, icpp rewrite --lib): f's module does not know where M is
 * loaded, so its dispatch cannot compare return addresses.  M marks c
 * instead: c returns to a place whose 17 bytes before the return address R
 * are
 *     nopl LO(%rax); nopl HI(%rax); [nop]; call ...   (the nop when the call
 *                                                      takes 5 bytes)
 * so that the tag's halves LO and HI lie at whatever the
 * call.  The tag is rw_tag(M's build-id as trained, c): both rewrites
 * compute it from the plan, and 2^-64 is the chance that other code has it
 * there (icpp rewrite tags no call of a module without a build-id: two such
 * modules could give two calls one tag).  The place is c's trampoline when c is wrapped, else a stub (a
 * local FUNC symbol __icpp_tag_SITE): c becomes `jmp S` (the rest int3),
 *     G: 16 x int3
 *     S: the tag; call c's target (or *slot, or the clone a redirect
 *        names); jmp c+len
 * The stub is no frame: it runs in c's caller's activation, with the
 * caller's SP, so heights do not change; its FDE (from G, which training
 * hooks and nothing runs) is a copy of the caller's with the CFA program
 * cut at the row of c (advances dropped; edited as the caller's padding
 * edits its own), so unwinders, training and icpp report see the caller's
 * frame there.  c's callee returns into the stub, so a C++ personality
 * looks the stub's address up in the FDE's LSDA: where the caller has one,
 * the stub's FDE points at an LSDA of its own, after the stub, that says of
 * the stub what the caller's says of c (its landing pad, in the caller or
 * the caller's copy in a clone, its action, the type table entries under
 * the same numbers; stub_lsda.c).  A call is taggable (rw_call.taggable)
 * when it could be wrapped but for its stack arguments (a direct call or
 * call *slot(%rip) of at least 5 bytes, no returns-twice callee, decodable
 * caller), its FDE has a CFA program that can be copied and, where it has
 * an LSDA, one a stub's can be made from (LPStart omitted, movable
 * pointers).  The return address of a tagged call never lies in the first
 * RW_TAG_SHIFT bytes of a page (the stub or trampoline moves).  f's
 * dispatch tests, after its return-address tests,
 *     mov (%rsp),%r11; test $0xfe0,%r11d; jz on
 *     cmpb $0x80,-18(%r11); jne on       (the first nopl's ModRM: a call
 *                                         without a tag leaves here)
 *     mov -17(%r11),%r11d
 *     a binary search over the tags' low halves (unsigned: cmp $LO,%r11d;
 *     je H_LO; ja upper half; ...; jmp on), then per low half:
 *     H_LO: mov (%rsp),%r11; per tag with that low half:
 *             cmpl $HI,-10(%r11); je f_k
 *           jmp on
 * reading below a return address only in its own page (a call instruction
 * ends there, so the page is mapped); a function training saw entered
 * without a return address (a thread root) never takes a tag test
 * (disambig's reads_tags).  M's note lists stubs with its trampolines (W
 * 0), f's module's note the clone's tag, so that rw_collapse can tell the
 * frame f's dispatch hands on.
 * The copy of c inside a clone J of M (a chain across modules: a clone of
 * f for that copy) is tagged the same way, by its own stub or its
 * trampoline (the copy's wrapper), with rw_tag(M's build-id,
 * rw_copy_key(c, J)): a clone's copies are laid out as the original, so
 * rw_collapse finds c and J from the copy's address in M's note.
 *
 * Bound calls (analyze.c, write.c): a shared library calls its own exported
 * functions through its PLT (or a GOT slot, -fno-plt), so that another
 * module's definition can interpose: libtcl's `call Tcl_Alloc@plt`,
 * libsqlite3's calls of its API.  Such a call c, whose slot's relocation
 * names a FUNC symbol that this module defines at a function's start f
 * (rw_call.bind), is redirectable to a clone f_k of f without a dispatch.
 * c, neither tagged nor wrapped, calls a thunk instead of the PLT entry or
 * the slot (`call rel32`, after nops where c was longer, so its return
 * address stays), in the new segment, shared by every such call of the
 * slot redirected to f_k:
 *     G: 16 x int3
 *     T: lea f(%rip),%r11; cmp slot(%rip),%r11; je f_k
 *        jmp *slot(%rip)
 * a local FUNC symbol __icpp_bindto_F_K from G (training's hook there never
 * runs), its FDE CFA = rsp + 8 throughout: it runs between the call and
 * f_k's entry with that entry's CFA, so f_k's frame is the direct call's and
 * a sample in the thunk is f_k's at its entry (icpp report).  Against the
 * PLT entry (endbr64; jmp *slot) it runs one more instruction a call.  A
 * tagged one becomes `jmp S` (the rest int3), a stub as a tagged call's (G,
 * its FDE the caller's row, a local FUNC symbol __icpp_bind_SITE, no frame:
 * the heights are the direct call's), and a wrapped one calls its
 * trampoline, whose call is
 *     lea f(%rip),%r11; cmp slot(%rip),%r11; jne F
 *     [tag] call f_k; jmp back (a trampoline: to its restoring lea)
 *  F: [tag] call as c does (*slot, or its PLT entry); jmp back
 * so that the clone runs only where the slot holds the module's own f, and
 * an interposed definition is called as before.  A copy of c in a clone
 * (a chain) is bound the same way.  %r11 and the flags are scratch at a
 * call.  A lazily bound slot holds the PLT's resolver entry until the first
 * call through it, whose frames would then be the original f's: the output
 * binds at load time (DT_FLAGS BIND_NOW: OR'd into DT_FLAGS, else DF_1_NOW
 * into DT_FLAGS_1, else written over the first of two trailing DT_NULLs;
 * no call is bound in a module with none of these; a module that names a
 * function no loaded object defines then fails to load, where lazily it
 * failed at the first call of it).  A call is bound when it
 * is taggable (above) and its callee is no returns-twice function; a tagged
 * bound call carries its tag before both calls, and both return addresses
 * stay out of a page's first RW_TAG_SHIFT bytes.
 *
 * Promoted calls (analyze.c, write.c): an indirect call c (`call *OP`, OP
 * a register or memory operand, not rip-relative, not using %r11) takes a
 * clone f_k of a function f of its module without f's dispatch, by a stub
 * that compares OP with f first (indirect-call promotion).  c and the whole
 * instructions before it that make 5 bytes with it (rw_call.promote_from;
 * at most RW_PROMOTE_MAX_BYTES) become `jmp S` (the rest int3):
 *     G: 16 x int3
 *     S: the displaced instructions (moved: x86_relocate_insn);
 *        per clone of the call (the heaviest first):
 *          lea f(%rip),%r11; cmp %r11,OP; je C_f
 *        call *OP; jmp c+len
 *   C_f: call f_k; jmp c+len
 * a local FUNC symbol __icpp_promote_SITE, no frame: its FDE is the
 * caller's row at c (as a tagged call's stub's), the note lists it with W 0,
 * and icpp report and training take a return address or sample in it as
 * the caller's at c (bin_stub_caller).  Every call through c runs the two
 * jumps and a test per clone; a dispatch of another function f at c (a
 * plan may mix them) tests the return address of the stub's `call *OP`,
 * and that of its `call g_k` where g may tail-call f (rw_may_tail_call: f's
 * frame then returns there).  A call
 * is promotable when the displaced instructions move whole (no branch,
 * push, pop or other write of rsp), no branch of its function (nor a tail
 * jump of another) lands among them or on c, nor may an indirect jump of
 * its function (a switch's table, a computed goto): such a jump goes only
 * to a code address that the binary's data, its relative relocations'
 * addends or its instructions name (an absolute table, an immediate, a
 * rip-relative address, or an entry of a table of offsets relative to
 * one), none of which may lie among them, nor may a landing pad of its
 * function's LSDA; they lie past the first 9 bytes of their code
 * (training's hook: an endbr64 and 5 bytes), and c's CFI row can be copied
 * and its LSDA, if any, give the stub's (as a tagged call's).  Padding edits among them move into the stub.  The
 * copy of c in a clone J (a chain) is promoted the same way, from the
 * copy's bytes.  The stub misses a frame of f that c's callee entered by a
 * tail call (g tail-calls f): the plan promotes c for f only where no
 * function training saw c enter may have tail-called f (rw_may_tail_call;
 * disambig.h section 2), and a clone line says `promote` (section 3).  (A
 * callee that training could not hook is not seen entered: should it
 * tail-call f, icpp verify finds f's frames where f_k's were predicted.)
 *
 * Cross-module calls (write.c, analyze.c find_marks), for a clone f_k of a
 * function f of module L for a call c of another module M through M's GOT
 * slot S whose symbol L defines at f (a FUNC, rw_export_func): a tag would
 * make f's entry test every call of it, from anywhere (Tagged calls); here
 * c calls f_k itself once it has checked that S holds f of the L rewritten
 * with M.  Both are rewritten by one plan, L first: M's plan says where L
 * put f_k (rw_plan_xcall).  L marks f's page: RW_XCALL_MARK_BYTES of its
 * alignment padding (rw_func.xcall_mark: the start of the first gap of the
 * page with room, where that leaves room for the islands that training or
 * the rewriter may write at the gap's end, else where the next function
 * needs none) become
 *     nopl LO(%rax); nopl HI(%rax)      (nops to a boundary of the padding)
 * code falling through it still running nops; LO:HI = rw_xcall_value(L's
 * output build-id, the page), so that the original L, another rewrite of it
 * (clones elsewhere) or another library holds it with chance 2^-64.  c
 * (neither tagged nor wrapped) calls a thunk instead of the PLT entry or the
 * slot, `call rel32` (after nops where c was longer, so its return address
 * stays), in M's new segment:
 *     G: 16 x int3
 *     T: mov S(%rip),%r11; sub $(f & 0xfff),%r11; test $0xfff,%r11d; jnz F
 *        cmpl $LO,m+3(%r11); jne F; cmpl $HI,m+10(%r11); jne F
 *        add $(f_k - page),%r11; jmp *%r11
 *     F: jmp *S(%rip)
 * (m: the marker's offset in its page), reading only the page of S's value
 * and only where its offset is f's: a local FUNC symbol __icpp_xcall_SITE
 * from G, its FDE CFA = rsp + 8 throughout, so f_k's frame is the direct
 * call's; icpp report charges a sample in it to the frames whose call goes
 * there, as a PLT entry's (bin_call_stub).  A tagged or wrapped c makes the
 * same check in its stub or trampoline before `[tag] call *%r11`, else
 * `[tag] call` as c does; a copy of c in a clone of M (a chain) the same.
 * M binds at load time (as for Bound calls).  With any other L, or an
 * interposed definition, the check fails and c calls through S as before:
 * the frames are then f's, where the prediction has f_k's.  A call is
 * xcallable (rw_call.xcallable) when it is taggable, not bound, reaches its
 * callee through a GOT slot, and M can bind at load time.
 * A forwarder h of L (`[endbr64;] jmp` through a GOT slot of L that L's own
 * FUNC g fills: rw_func.forward_to; cmake's sized operator delete) has g's
 * frames under the calls of h: a call whose slot holds h may take g's clone,
 * the thunk checking h's page's marker, then, %r11 = g, that L's slot holds
 * g (`cmp %r11,SLOT-g(%r11); jne F`: L is the one rewritten by then, and
 * binds at load time), before `add $(g_k - g),%r11`.
 * A forwarder h of L may instead jump on through a slot T of L that a third
 * module K fills with its g (rw_func.forward_symbol; libstdc++'s `operator
 * delete(void*)`, `jmp free@plt`, and the sized one forwarding to it): M's
 * call of h (or of a forwarder to h) may take g's clone in K.  The thunk
 * checks h's page's marker as above (and h's own forward), then loads T,
 * `mov T-h(%r11),%r11`, and checks its value as it checked S's, by g's
 * page's marker in K, before `add $(g_k - page(g)),%r11`.  L writes the
 * marker into h's page and binds at load time (plan line `mark`); K, M's
 * thunk's target, is written first, then L, then M (--lib order M, L, K).
 * Any other L or K (the original, another rewrite, an interposed g) fails
 * a check, and c calls through S as before.
 *
 * Callee-entry wrappers (entry.c), a second way to pad a function f by W
 * where in-place padding is refused: the whole instructions covering 5 bytes
 * after f's endbr64 are displaced and replaced by `jmp T` (the rest int3), T
 * in the new segment:
 *     G: 16 x int3
 *     T: lea -(W-8)(%rsp),%rsp; call B; lea (W-8)(%rsp),%rsp; ret
 *     B: the displaced instructions (x86_relocate_insn); jmp f+N
 * so f's body runs W bytes deeper, 16-aligned as before, with flags and every
 * register untouched.  Every frame called from f moves by W (for the solver
 * this is padding: the same pad_mask), and f's own frame too (uniformly for
 * every path ending in f, so uniqueness is the solver's; the prediction adds
 * it: section 3).  One FDE covers G..end: CFA = rsp+8 in G and T's first
 * instruction, rsp+W while T's call is live, then rsp+8; in B, rsp+k where k
 * is f's CFA-SP before each displaced instruction (register rules of pushes
 * among them are not described: an unwinder stopped there gets the caller's
 * saved registers wrong, not the CFA).  f's own FDE is unchanged: its body
 * computes its CFA from rsp/rbp, and the return address it finds is T's.
 * A direct call among the displaced instructions is their last: its copy
 * stores the original return address (computed rip-relative, every
 * register kept; two more CFA rows) and jumps to what the call calls in OUT
 * (its trampoline when wrapped, its clone when redirected; a tagged call's
 * jump to its stub is copied as a jump), so the callee returns into f past
 * the patch, and its frame, return address and CFA are the original call's:
 * libtcl's Tcl_Alloc (`push %rbx; mov %edi,%ebx; call TclpAlloc@plt`) takes
 * an entry wrapper and a dispatch.  B still ends with the jmp back (never
 * reached), where icpp report finds f.
 * The FDE and a local FUNC symbol __icpp_entry_NAME start at the guard G, not
 * at T: to the binary layer G is the function, so training (of OUT) hooks
 * only f's own entry, whose hook sees f's unwrapped height -- hooking T as
 * well would pop f's frame at T's entry (same CFA) and the collector would
 * then hang f's callees under an outer activation of a recursive f.
 * rw_collapse adds W to those frames.  Offered (pad_entry, entry_why) only
 * where in-place padding is refused for a reason of the allocation's shape
 * (no allocation, no room, shrink-wrapping, saved-register addresses, rsp
 * locals, a 4 KiB frame, an FDE that cannot be re-encoded), or is limited
 * by the room of the allocation's immediate (an imm8 holds 127: `sub $0x18,
 * %rsp` grows by 96 at most; 4,000 of cmake's 12,500 functions stop at 112
 * or less), and f calls something; such an f is padded in place up to that
 * room (pad_in_place) and through the wrapper beyond it (rw_pad_by_entry: a
 * plan's amount takes one or the other, never both); refused (enum rw_entry_why) when the stack analysis is not
 * complete, f is or has a fragment, reads or takes the address of its return
 * address or incoming stack arguments (no-fp: rsp-relative at or above CFA-8;
 * fp: rbp+8 and above; lea of them, va_start, varargs), runs past its end,
 * is a returns-twice function, its first instructions cannot be relocated (an
 * indirect call, a branch into them, a `call next`), or a branch of its own
 * code lands in [f, f+N).  A function that makes a tail call takes one
 * (entry_tail) only where training saw none taken: the callee would run in
 * B's place, W deeper than the frame the map has beside f's (at f's callsite
 * and height), so f is not padded where the map has such a frame of another
 * function (rw_visibility's tail_seen; from the same indirect call too: it
 * cannot tell).  A jump to f's entry from elsewhere goes through the
 * wrapper, as a call does.
 * A clone of f is a copy of the unwrapped code: it may not be padded beyond
 * pad_in_place (rw_plan_check; icpp rewrite drops a clone padding the solver
 * chose).
 *
 *
 * Masks use disambig's da_mask convention (bit k allows 16*k bytes, bit 0 is
 * "unchanged" and always set), so the solver's bridge copies them as they
 * are.
 *
 * ---------------------------------------------------------------------------
 * 2. The output (write.c), written with libelf, never over the input
 *
 * Every existing section keeps its index, address and file offset (only the
 * bytes of patched code change), so symbols, relocations and DWARF stay
 * valid.  Added after the old file contents, at addresses above every
 * existing segment and within +-2 GiB of the code:
 *  - an R+X PT_LOAD with .icpp.text (the trampolines, rip-relative only, so
 *    PIE needs no new relocation);
 *  - an R PT_LOAD with the merged .eh_frame (the old CIEs/FDEs with their
 *    pc-relative pointers re-encoded and no-FP FDEs edited, then one CIE and
 *    one FDE per trampoline, a row after each instruction that moves %rsp),
 *    a rebuilt sorted .eh_frame_hdr (datarel sdata4
 *    table) that PT_GNU_EH_FRAME points at, the notes, and, last, the new
 *    program header table (PT_PHDR).  The new segments sit at
 *    vaddr = first-load bias + file offset when that is above every segment
 *    (old kernels derive AT_PHDR that way) -- the file is padded up to 1 MiB
 *    for it -- otherwise just above the last segment (Linux >= 5.18 finds
 *    AT_PHDR through the PT_LOAD that holds it).
 * .icpp.text holds the clones first (each function's copy, then its
 * fragment's), the heaviest first (rw_plan_clone.weight: the code that runs
 * most shares cache lines with code that runs as much), a chain's clone
 * after its parent; then the trampolines, stubs, thunks and entry code.
 * Each piece goes to one of two streams by its heat (rw_plan.heat: how
 * often training's run entered its clone, its call or its function; a
 * thunk, shared by a slot's calls, at least its clone's): hot from
 * rw_plan.hot_entries on (icpp rewrite: DA_HOT_CODE_SHARE of all entries,
 * as the solver's hot code), the hot stream first, the cold one after it,
 * each in the order above.  So a hot loop's stubs and clones share cache
 * lines with each other rather than with code that never runs (sqlite3,
 * seed 1: first-level instruction misses 7.47M -> 6.86M, run time 1.119
 * -> 1.106 of the original's; docs/bench-disambig.md, session 54).  The
 * hot stream's size does not depend on where the cold one lies: a first
 * pass with the cold one HOT_MEASURE_ROOM away measures it.
 * The old .eh_frame/.eh_frame_hdr stay in place, renamed .icpp.old.*; .symtab
 * gets one local FUNC symbol per trampoline (__icpp_wrap_<callsite>), per
 * tagged call's stub (__icpp_tag_<callsite>) and per
 * clone (__icpp_clone_<K>_<name>, and its fragment's copy); a stripped input
 * gets a .symtab made of those, a local FUNC symbol per function that only
 * its separate debug file names (binary.h; OUT's new build-id finds no
 * debug file, so gdb, perf and training of OUT name them by these) and its
 * .dynsym.
 * The GNU build-id note is replaced by a new id (SHA-1 of the input, the plan,
 * the heat that lays its code out and the rewriter version: training keeps
 * its analysis of a module by build-id and size, so two outputs that differ
 * must not share one; an output of icpp 1 to 53 laid out anew with the same
 * plan did, and training hooked the old layout's entries in the new code), and a note "icpp" (type NT_ICPP_REWRITE) names
 * the original build-id, carries the plan, the trampoline table and the
 * clone table (rw_note_read; layout RW_NOTE_VERSION; fuzzed by
 * tests/rewrite/fuzz_note.c).  OUT is written to a temporary file beside it and renamed,
 * with the input's permission bits.
 * Refused inputs (one line, nothing written): not ELF / not x86-64, static
 * executables and static PIE, no .eh_frame_hdr, static relocations
 * (--emit-relocs), extended section numbering, bytes of a segment outside
 * every section and header.  Dynamic relocations (.rela.dyn, and DT_RELR's
 * packed ones, glibc's since 2.36) stay as they are: nothing they relocate
 * moves, and the added code and tables are position-independent.
 *
 * ---------------------------------------------------------------------------
 * 3. Prediction and verification (verify.c)
 *
 * OUT's pathmap is predicted by disambig (da_predict_pathmap, disambig.h
 * section 2): every node's height grows by
 *     delta(n) = delta(parent) + pad(inst(parent)) + wrap(exec(n));
 * then rw_place_clones() adds the entry wrappers' own-frame term, so that
 *     delta(n) = delta(parent) + pad(inst(parent)) + wrap(exec(n))
 *                + entry_pad(inst(n))
 * (pad includes entry_pad: both move the frames below; a clone is never
 * entry-wrapped);
 * functions and callsites keep their addresses, each rewritten module takes
 * its file's path and build-id (one file, or several by one plan: icpp
 * rewrite --lib; rw_verify then knows them all).  The prediction names a clone as a function of
 * its own: rw_place_clones() gives it its address in OUT (and the callsites
 * below it those of the copies), so that training OUT, which sees the clone
 * as a separate function at its new address, and sampling it, which finds
 * the clone's CID by its PC, both match the prediction without any mapping
 * back.
 * A trained map of OUT has trampoline frames between a wrapped caller and its
 * callee; rw_collapse() removes them (the callee takes the trampoline's
 * callsite) using the note's table, and adds W to the frames of entry-wrapped
 * functions that training recorded at their entry hook.
 * rw_verify() then matches every observed
 * node to the predicted node with the same callsite path and height.
 */
#ifndef ICPP_REWRITER_H
#define ICPP_REWRITER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pathmap/pathmap.h"

#define RW_NONE UINT32_MAX
#define RW_ALIGN 16                /* every amount is a multiple of this */
#define RW_MAX_AMOUNT 1008         /* 63 * 16: what a mask can say */
#define RW_MAX_COPY 512            /* stack-argument bytes a trampoline copies at most */
#define RW_VERSION "icpp-rewrite 2" /* in the output's build-id: a new one for each
                                    * change of the code the rewriter writes for
                                    * a plan (2: the layout by heat, session 54) */
#define NT_ICPP_REWRITE 1          /* note type, owner "icpp" */
#define RW_MAX_DISPATCH 128        /* dispatched clones per function */
#define RW_MAX_TAIL_JUMPS 8        /* a function's tail jumps to one function
                                    * that a tail chain redirects (section 1) */
#define RW_PROMOTE_MAX_BYTES 32    /* a promotion stub's displaced bytes, its
                                    * call's included (section 1) */
#define RW_NOTE_VERSION 6          /* its layout (2: clone table, 3: entry wrappers,
                                    * 4: which clones dispatch, 5: the clones'
                                    * copies of fragments, 6: tags) */

/* Bit k allows 16*k bytes (disambig's da_mask). */
typedef uint64_t rw_mask;
rw_mask rw_mask_range(uint32_t lo, uint32_t hi);   /* bit 0 plus 16-multiples in [lo, hi] */
uint32_t rw_mask_max(rw_mask m);
bool rw_mask_allows(rw_mask m, uint32_t bytes);

enum rw_frame {
	RW_FRAME_UNKNOWN,          /* not analysed (see pad_why) */
	RW_FRAME_NONE,             /* SP only moves by pushes, or not at all */
	RW_FRAME_FP,               /* rbp = CFA - 16 in the body */
	RW_FRAME_SP,               /* allocated, no frame pointer */
};

enum rw_pad_why {
	RW_PAD_OK,
	RW_PAD_FRAGMENT,           /* part of another function's frame (.cold) */
	RW_PAD_LEAF,               /* calls nothing: padding would move no frame */
	RW_PAD_NO_ALLOC,           /* no sub/add/lea immediate allocates the frame */
	RW_PAD_MULTI_ALLOC,        /* several allocations (shrink-wrapped paths) */
	RW_PAD_IMM_FULL,           /* an imm8/imm32 of the allocation has no room */
	RW_PAD_DISP_FULL,          /* an rsp-relative disp8 above the padding has no room */
	RW_PAD_STRADDLE,           /* an rsp-relative access spans the padding's place */
	RW_PAD_SAVED_ADDR,         /* an address computed in the saved-register area
	                            * (one past the end of a local?) */
	RW_PAD_LARGE_FRAME,        /* frame near or above 4 KiB (stack-clash probes) */
	RW_PAD_DYNAMIC,            /* dynamic stack allocation without a frame pointer */
	RW_PAD_REALIGN,            /* stack realignment (and $-N,%rsp) */
	RW_PAD_CALL_OUTSIDE,       /* a call before the allocation or after its release */
	RW_PAD_RSP_LOCALS,         /* fp function reaching its locals through rsp */
	RW_PAD_RBP_RESTORE,        /* rsp restored from rbp inside the allocation */
	RW_PAD_POP_RELEASE,        /* a pop releases the allocation (sub $8,%rsp
	                            * ... pop %rax): it would leave the padding */
	RW_PAD_UNDECODABLE,        /* data in text, undecodable bytes, jump into an insn */
	RW_PAD_NO_CFI,             /* no FDE, or a CFA rule that is not reg+offset */
	RW_PAD_CFI_MISMATCH,       /* the CFI disagrees with the code */
	RW_PAD_CFI_EDIT,           /* a no-fp FDE that cannot be re-encoded */
	RW_PAD_STACK_STATE,        /* inconsistent/unknown stack state, odd rsp write */
	RW_PAD_FRAGMENT_SHARED,    /* a fragment claimed by two functions */
	RW_PAD_ENTERED_INSIDE,     /* another function jumps into its code (glibc's
	                            * mempcpy into memmove): that path runs the
	                            * padded allocation without a frame of it */
	RW_PAD_N
};

enum rw_wrap_why {
	RW_WRAP_OK,
	RW_WRAP_INDIRECT,          /* through a register or non-rip memory */
	RW_WRAP_RETURNS_TWICE,     /* setjmp, vfork, getcontext, ... */
	RW_WRAP_ARGS_UNKNOWN,      /* stack arguments cannot be bounded */
	RW_WRAP_ARGS_LARGE,        /* more than RW_MAX_COPY bytes might be arguments */
	RW_WRAP_CALLER,            /* the calling code could not be analysed */
	RW_WRAP_N
};

enum rw_clone_why {
	RW_CLONE_OK,
	RW_CLONE_FRAGMENT,         /* is a fragment (.cold) sharing a frame, has more
	                            * than one, or one another function jumps into */
	RW_CLONE_ANALYSIS,         /* the stack analysis of its code failed (see pad_why) */
	RW_CLONE_UNDECODABLE,      /* bytes Capstone cannot decode */
	RW_CLONE_INDIRECT_JUMP,    /* an indirect jump neither a tail call nor a relative switch's (whose tables a clone copies) */
	RW_CLONE_CODE_ADDRESS,     /* a rip-relative operand addresses its own code or
	                            * its fragment's */
	RW_CLONE_SHORT_BRANCH,     /* a rel8 branch out that no veneer reaches */
	RW_CLONE_NO_FDE,           /* no FDE exactly covering it (or its fragment), or
	                            * not pc-relative */
	RW_CLONE_LSDA,             /* an LSDA a copy cannot share (LPStart, absolute in
	                            * PIE, a landing pad outside its FDE's range) */
	RW_CLONE_FAR,              /* a displacement out of reach from the copy */
	RW_CLONE_FALLS_OFF,        /* runs past its last byte into the code after it */
	RW_CLONE_SWITCH_UNBOUNDED, /* a switch table that runs on into other code,
	                            * its index bounded by no check the analysis
	                            * follows (analyze.c switch_bound) */
	RW_CLONE_N
};

enum rw_entry_why {
	RW_ENTRY_OK,
	RW_ENTRY_IN_PLACE,         /* paddable in place (preferred) */
	RW_ENTRY_SHAPE,            /* refused in place for a reason an entry wrapper
	                            * does not cure (see pad_why) */
	RW_ENTRY_LEAF,             /* calls nothing */
	RW_ENTRY_FRAGMENT,         /* is, or has, a fragment (.cold) */
	RW_ENTRY_ARGS,             /* reads its return address or stack arguments,
	                            * or takes their address */
	RW_ENTRY_FALLS_OFF,        /* runs past its end into the next function */
	RW_ENTRY_RETURNS_TWICE,    /* setjmp, vfork, ... */
	RW_ENTRY_DISPLACE,         /* first instructions cannot be displaced */
	RW_ENTRY_BRANCH_TARGET,    /* its code jumps into its first bytes */
	RW_ENTRY_ENTERED_INSIDE,   /* another function jumps into its code */
	RW_ENTRY_N
};

const char *rw_pad_why_name(enum rw_pad_why w);
const char *rw_clone_why_name(enum rw_clone_why w);
const char *rw_wrap_why_name(enum rw_wrap_why w);
const char *rw_entry_why_name(enum rw_entry_why w);
const char *rw_frame_name(enum rw_frame f);

struct rw_func {
	uint64_t addr, size;
	const char *name;            /* NULL for an unnamed FDE */
	enum rw_frame frame;
	uint32_t alloc;              /* N of the allocation (0: none) */
	rw_mask pad_mask;            /* allowed paddings; 1 when refused */
	enum rw_pad_why pad_why;     /* in place: RW_PAD_OK when pad_mask > 1 and
	                              * not pad_entry */
	bool pad_entry;              /* padded through an entry wrapper (the
	                              * amounts above pad_in_place) */
	uint32_t pad_in_place;       /* with pad_entry: the largest padding made
	                              * in place (the room of its allocation's
	                              * immediate: imm8 holds 127), 0 when none
	                              * is (rw_pad_by_entry) */
	bool entry_tail;             /* pad_entry, and makes a tail call: the
	                              * wrapper would move the frame it enters, so
	                              * not where training saw one (rw_visibility
	                              * tail_seen; section 1, Callee-entry wrappers) */
	enum rw_entry_why entry_why; /* RW_ENTRY_OK when pad_entry */
	uint64_t why_at;             /* instruction that caused the refusal, or 0 */
	uint32_t parent;             /* a fragment: the function whose frame it shares */
	uint32_t ncalls;             /* call instructions (own code and fragments) */
	bool cloneable;              /* may be copied to a clone (section 1, Cloning) */
	enum rw_clone_why clone_why; /* RW_CLONE_OK when cloneable */
	bool dispatch;               /* cloneable, and its entry can dispatch
	                              * (section 1, Dispatch) */
	uint64_t xcall_mark;         /* where this module's rewrite marks the
	                              * function's page for another module's
	                              * checked calls of it (section 1,
	                              * Cross-module calls); 0: the page has no
	                              * room for the marker */
	uint8_t xcall_mark_len;      /* the bytes written there: the marker, nops
	                              * to a boundary of the padding */
	uint64_t forward_to;         /* a forwarder ([endbr64;] jmp through a GOT
	                              * slot of this module that its own FUNC
	                              * fills, the module bound at load time when
	                              * another module's check reads it): that
	                              * function, else 0 */
	uint64_t forward_slot;       /* ... and that slot; or, with
	                              * forward_symbol, the slot of it */
	const char *forward_symbol;  /* a forwarder through a GOT slot of this
	                              * module that another module's definition
	                              * of this symbol fills (libstdc++'s
	                              * operator delete: jmp free@plt), the
	                              * module bound at load time when another
	                              * module's check reads it, else NULL */
	bool tail_indirect;          /* makes a tail call through a register or
	                              * memory, or runs off its end: a frame
	                              * entered by a call of it may be any
	                              * function's (rw_may_tail_call) */
	bool tails_known;            /* its code was followed whole: its tail
	                              * calls are all known (rw_tail_jumps) */
	bool tail_promotable;        /* tail_indirect, and each of its indirect
	                              * tail jumps (its only indirect jumps) can
	                              * take a promotion stub (section 1, Tail
	                              * chains) */
	int32_t args_read;           /* incoming stack-argument bytes its code (and
					its direct tail callees') reads; -1 unknown
					(their address taken, an indirect tail call or
					one out of the binary, analysis failed) */
};

/* Is function f padded by `amount` through its entry wrapper (rather than
 * in place)?  And the paddings it makes in place (a clone's, which has no
 * entry wrapper; 1 for none). */
bool rw_pad_by_entry(const struct rw_func *f, uint32_t amount);
rw_mask rw_in_place_mask(const struct rw_func *f);

struct rw_call {
	uint64_t insn;               /* the call instruction */
	uint64_t site;               /* return address - 1: the pathmap's callsite */
	uint8_t len;                 /* instruction bytes */
	uint64_t target;             /* direct target, 0 when indirect */
	uint64_t slot;               /* call *slot(%rip): the pointer's address, else 0 */
	const char *target_name;     /* function, PLT or GOT symbol; NULL unknown */
	uint32_t func;               /* function whose frame makes the call */
	uint32_t stack_args;         /* bytes a trampoline copies (K) */
	int32_t args_stored;         /* caller's bound: bytes above SP at the call
					that may hold arguments; -1 unknown */
	rw_mask wrap_mask;           /* allowed wraps; 1 when refused */
	enum rw_wrap_why wrap_why;
	bool redirectable;           /* may call a clone: a direct call rel32, or
	                              * a bound call */
	bool taggable;               /* may be tagged for another module's dispatch
	                              * (section 1, Tagged calls) */
	uint64_t bind;               /* a bound call's callee, this module's own
	                              * function behind its GOT slot (section 1,
	                              * Bound calls); else 0 */
	uint64_t bind_slot;          /* ... and that slot */
	uint64_t got;                /* the GOT slot it reaches its callee through
	                              * (call *slot(%rip), or its PLT entry's), else 0 */
	bool xcallable;              /* through got, may call a clone of another
	                              * module by a checked thunk (section 1,
	                              * Cross-module calls): taggable, not bound,
	                              * and b can bind at load time */
	uint64_t promote_from;       /* an indirect call that may call clones
	                              * by a promotion stub (section 1, Promoted
	                              * calls): the first of the whole
	                              * instructions it displaces; else 0 */
};

/* The function of this module that call c calls (and that a clone of
 * replaces), or 0 when it leaves the module or is indirect. */
static inline uint64_t rw_call_callee(const struct rw_call *c)
{
	return c->bind ? c->bind : c->slot ? 0 : c->target;
}

struct rw_binary;

/* Open and analyse an executable or shared object.  NULL with one line in
 * err (naming path) for what icpp cannot rewrite. */
struct rw_binary *rw_open(const char *path, char *err, size_t errlen);
void rw_close(struct rw_binary *b);

struct bin_module *rw_module(const struct rw_binary *b);
/* Sorted by address (the binary layer's functions, same order and count). */
const struct rw_func *rw_functions(const struct rw_binary *b, size_t *n);
/* Sorted by site. */
const struct rw_call *rw_calls(const struct rw_binary *b, size_t *n);
uint32_t rw_func_index(const struct rw_binary *b, uint64_t addr);    /* exact start */
uint32_t rw_func_at(const struct rw_binary *b, uint64_t addr);       /* [addr, addr + size) */
uint32_t rw_call_index(const struct rw_binary *b, uint64_t site);    /* exact site */
/* May a frame entered by a call of function fi be that of the function at
 * addr (0: of another module), which fi entered by a tail call?  True when
 * fi makes an indirect tail call (tail_indirect), a direct one to addr, or
 * one to anything but a function start of b (a PLT entry).  A promoted call
 * (section 1) misses such frames. */
bool rw_may_tail_call(const struct rw_binary *b, uint32_t fi, uint64_t addr);
/* May fi's frame be replaced by one of fi itself, entered by its own tail
 * call (an indirect one, or a direct one to its start)?  A clone of fi that
 * another module's call takes by its check (section 1, Cross-module calls)
 * would then hand that frame to the original fi, where a dispatch would
 * take it again.  A tail call through a PLT entry is taken to leave fi. */
bool rw_tail_calls_self(const struct rw_binary *b, uint32_t fi);
/* A direct tail call: the jump (jmp or jcc), its target, and where that is
 * a PLT stub, the stub's GOT slot (else 0); an indirect one (to 0): the
 * first of the whole instructions its promotion stub displaces with it
 * (from) and its bytes (section 1, Tail chains).  As a route
 * (rw_tail_routes): the first jump, the function (of b, or the PLT stub of
 * another module's; 0: any function of b, by indirect jumps), and the slot
 * of a jump through a PLT entry that b's own definition of the function
 * fills (a bound route: its jumps take a bound call's thunk). */
struct rw_tail_jump {
	uint64_t at, to, slot;
	uint64_t from;
	uint8_t len;
};
/* Function fi's tail jumps to the function at addr (directly, or through a
 * PLT entry whose slot b's own definition of it fills), or to the PLT stub
 * at addr, when those are the only ways its frames may become that
 * function's (or the stub's callee's: section 1, Tail chains): fi's code
 * was followed whole (tails_known), fi makes no tail call through a slot it
 * does not know, b binds at load time where they go through a slot, and
 * each of them is a jmp or jcc rel32 in fi's own code (not its
 * fragment's), pointed elsewhere in place (where an entry's jump displaces
 * it, in the displaced copy); for a function of b, fi's indirect tail
 * jumps too where each takes a promotion stub (tail_promotable; none may
 * reach a PLT stub: fi makes no indirect tail call then).  Up to max of
 * them into out, by address; how many, 0 when not so (or none). */
uint32_t rw_tail_jumps(const struct rw_binary *b, uint32_t fi, uint64_t addr,
		       struct rw_tail_jump *out, uint32_t max);
/* The tail route (rw_tail_routes) of the function holding `site` whose first
 * jump is at site, to function func of b (0: to a PLT stub), into *route,
 * and its jumps into jumps; how many (0: none).  A route to any function
 * (by indirect jumps) is named by its first indirect jump, and so are the
 * function's jumps to func: all of them. */
uint32_t rw_tail_route_at(const struct rw_binary *b, uint64_t site, uint64_t func,
			  struct rw_tail_jump *route, struct rw_tail_jump jumps[RW_MAX_TAIL_JUMPS]);
/* The functions (and PLT stubs) fi enters so (rw_tail_jumps), each with
 * its first jump (.at): at most max into out; how many.  A function whose
 * indirect tail jumps take stubs has one route, to any function of b (to
 * 0), named by its first indirect tail jump. */
uint32_t rw_tail_routes(const struct rw_binary *b, uint32_t fi, struct rw_tail_jump *out,
			uint32_t max);
/* Name of the symbol whose GOT slot is `slot` (PLT and -fno-plt calls). */
const char *rw_slot_symbol(const struct rw_binary *b, uint64_t slot);

/* Bound the stack arguments of calls that leave b (through the PLT or a GOT
 * slot) from their callees' code.  `mods` are the modules the program may
 * call into: the modules of its training map, b's own path among them or not.
 * Each module that exports a name b imports (a defined FUNC or IFUNC in its
 * .dynsym) is analysed as rw_open does (without rw_open's refusals, which are
 * about writing); the name's bound is the largest args_read over every
 * module that defines it (whichever one symbol lookup picks), an IFUNC's the
 * largest over the functions its resolver's code takes the address of.  A call
 * refused only for its stack arguments is reconsidered with that bound
 * (rw_call_bound_args).  If a module cannot be read, or does not match the
 * build-id `ids[i]` (ids NULL: not checked), nothing is changed: a definition
 * there could be the one called; one that no longer exists is skipped.  Returns the number of calls that became
 * wrappable, or -1 with one line in err. */
int rw_bound_imports(struct rw_binary *b, const char *const *mods, const uint8_t *const *ids,
		     const uint32_t *id_lens, size_t nmods, char *err, size_t errlen);

/* Capability summary, for reports. */
struct rw_summary {
	uint32_t funcs, paddable, pad_refused[RW_PAD_N];   /* in place */
	uint32_t entry_paddable, entry_refused[RW_ENTRY_N]; /* of those refused in place */
	uint32_t entry_beyond;       /* paddable in place up to their allocation's
	                              * room, through an entry wrapper beyond it */
	uint32_t fp, sp, frameless;
	uint32_t calls, wrappable, wrap_refused[RW_WRAP_N];
	uint32_t cloneable, clone_refused[RW_CLONE_N], redirectable;
	uint32_t bound;              /* of redirectable: bound calls (section 1) */
	uint32_t taggable;           /* calls that may be tagged */
	uint32_t xcallable;          /* calls that may check for another module's
	                              * clone (section 1, Cross-module calls) */
	uint32_t marked;             /* of cloneable: whose page takes a marker,
	                              * so that another module's calls may check
	                              * for their clones */
	uint32_t indirect;           /* calls through a register or memory
	                              * (not a GOT slot) */
	uint32_t promotable;         /* of those: promotable (section 1) */
};
void rw_summarize(const struct rw_binary *b, struct rw_summary *s);
/* One line per function and call (`icpp rewrite --explain`). */
void rw_explain(const struct rw_binary *b, FILE *out);

/* ------------------------------------------------------------------ plans
 * A plan says how much to pad which function and wrap which callsite, and
 * which functions to clone for which call.  Its text form (what the note
 * keeps):
 *     icpp-plan 1
 *     pad  0xFUNC BYTES     [# comment]
 *     wrap 0xSITE BYTES     (SITE = return address - 1)
 *     clone 0xFUNC 0xSITE PAD [in J]  clone K (K = 0, 1, ... in order);
 *                                   in J: takes the copy of SITE inside
 *                                   clone J < K, not SITE (a chain)
 *     clone 0xFUNC 0xSITE PAD promote [in J]  clone K for an indirect call
 *                                   that its promotion stub points at the
 *                                   clone (section 1, Promoted calls)
 *     clone 0xFUNC 0xSITE PAD tail [in J]  clone K for the tail jumps of
 *                                   SITE's function to FUNC, SITE the first
 *                                   (section 1, Tail chains)
 *     clone 0xFUNC 0xSITE PAD tag 0xTAG  clone K for a call of another
 *                                   module (at SITE there), tested by its
 *                                   tag (section 1, Tagged calls)
 *     clone-wrap K 0xSITE BYTES     the copy of SITE inside clone K
 *     tag 0xSITE 0xTAG [in K]       tag the call at SITE (in K: its copy
 *                                   inside clone K)
 *     clone 0xFUNC 0xSITE PAD xcall clone K for a call of another module
 *                                   that calls it by its check (section 1,
 *                                   Cross-module calls): FUNC's page marked
 *     clone 0xFUNC 0xSITE PAD xcall 0xFWD  the same, for a call whose slot
 *                                   holds FWD, a forwarder to FUNC: FWD's
 *                                   page marked
 *     xcall 0xSITE 0xFUNC 0xCLONE 0xMARK 0xVALUE [via 0xG 0xSLOT] [in K] [tail]
 *                                   the call at SITE (in K: its copy) checks
 *                                   that its GOT slot holds FUNC of the
 *                                   module whose page's marker at MARK holds
 *                                   VALUE (with via: and that FUNC's module's
 *                                   SLOT holds G, FUNC forwarding to G), then
 *                                   calls CLONE (addresses of that module);
 *                                   with tail, SITE is the first of its
 *                                   function's tail jumps to a PLT stub, and
 *                                   they (in K: their copies) jump to the
 *                                   check (section 1, Tail chains)
 *     xcall ... [via 0xG 0xSLOT] then 0xSLOT2 0xG2 0xMARK2 0xVALUE2 [in K]
 *                                   the same through a forwarder to a third
 *                                   module: FUNC (with via: G) jumps on
 *                                   through its module's SLOT2, which the
 *                                   check reads and checks as it checked
 *                                   the call's own slot, for G2 of the
 *                                   module whose marker at MARK2 holds
 *                                   VALUE2; CLONE is G2's clone there
 *     mark 0xFUNC                   another module's checked calls pass
 *                                   through FUNC, a forwarder to a third
 *                                   module (forward_symbol, or forward_to
 *                                   one): FUNC's page marked, the module
 *                                   bound at load time
 * '#' starts a comment; blank lines are ignored. */
struct rw_plan_item {
	uint64_t addr;               /* function start, or callsite */
	uint32_t bytes;
};
struct rw_plan_clone {
	uint64_t func;               /* the function copied */
	uint64_t site;               /* the call instruction redirected to the copy */
	uint32_t pad;                /* the copy's frame padding */
	uint32_t parent;             /* RW_NONE: site itself; else the copy of
	                              * site in clone `parent` (a chain: a call
	                              * of func made in that clone, direct or
	                              * tested by func's dispatch) */
	uint64_t tag;                /* not 0: site is a call of another module
	                              * that carries this tag (no chain here;
	                              * rw_copy_key(c, J): the copy of c in that
	                              * module's clone J) */
	uint64_t weight;             /* the entries training saw it take (0:
	                              * unknown): func's dispatch finds the
	                              * heavier clones in fewer tests */
	bool promote;                /* site (or its copy) is an indirect call
	                              * that calls the clone by its promotion
	                              * stub (section 1, Promoted calls), not by
	                              * func's dispatch */
	bool xcall;                  /* site is a call of another module (its
	                              * key as a tag's) that calls the clone by
	                              * its checked thunk (section 1, Cross-module
	                              * calls), not by func's dispatch: this
	                              * module marks func's page */
	uint64_t xcall_from;         /* with xcall, not 0: the call's slot holds
	                              * this forwarder to func, whose page is
	                              * marked instead */
	bool tail;                   /* site is the first of a function's direct
	                              * tail jumps to func, all pointed at the
	                              * copy (section 1, Tail chains) */
};
struct rw_plan_xcall {
	uint64_t site;               /* a call of this binary through its GOT slot */
	uint32_t clone;              /* RW_NONE: the call; else its copy inside
	                              * this clone */
	uint64_t func;               /* in the callee's module: the function the
	                              * slot should hold */
	uint64_t dest;               /* ... its clone there, to call instead */
	uint64_t mark;               /* ... the marker of func's page there */
	uint64_t value;              /* ... and what the marker holds */
	uint64_t fwd, fwd_slot;      /* not 0: func is a forwarder to fwd through
	                              * its module's slot fwd_slot, which the check
	                              * compares with fwd; dest is fwd's clone */
	uint64_t hop_slot;           /* not 0: func (fwd, if any) is a forwarder
	                              * through its module's slot hop_slot to a
	                              * third module's hop_func, whose page's
	                              * marker at hop_mark holds hop_value there;
	                              * dest is hop_func's clone */
	uint64_t hop_func, hop_mark, hop_value;
	bool tail;                   /* site is no call but the first of its
	                              * function's tail jumps to a PLT stub, all
	                              * of them (or their copies) pointed at the
	                              * check's thunk (section 1, Tail chains) */
};
struct rw_plan_tag {
	uint64_t site;               /* a call of this binary */
	uint64_t tag;                /* rw_tag() of it (of rw_copy_key for a copy) */
	uint32_t clone;              /* RW_NONE: the call; else its copy inside
	                              * this clone */
};
struct rw_plan_clone_wrap {
	uint32_t clone;              /* index into clones */
	uint64_t site;               /* a callsite of the cloned function */
	uint32_t bytes;              /* wrap of its copy; 0: not wrapped although
	                              * the original is (a copy without an entry
	                              * is wrapped like its original) */
};
/* How often training's run enters code at key (section 2, the layout of new
 * code): the frames entered through a callsite, or rw_copy_key() of its
 * copy in a clone, or a function's frames (a start is never a site: a site
 * is a call's last byte). */
struct rw_plan_heat {
	uint64_t key;
	uint64_t entries;
};
struct rw_plan {
	struct rw_plan_item *pads, *wraps;   /* sorted by addr, no duplicates */
	uint32_t npads, nwraps;
	struct rw_plan_clone *clones;        /* in the order of their numbers */
	uint32_t nclones;
	struct rw_plan_clone_wrap *clone_wraps;
	uint32_t nclone_wraps;
	struct rw_plan_tag *tags;            /* sorted by (site, clone), no duplicates */
	uint32_t ntags;
	struct rw_plan_xcall *xcalls;        /* sorted by (site, clone), no duplicates */
	uint32_t nxcalls;
	uint64_t *marks;                     /* forwarders another module's checks
	                                      * pass to a third (`mark`): sorted,
	                                      * no duplicates */
	uint32_t nmarks;
	struct rw_plan_heat *heat;           /* sorted by key (none: unknown) */
	uint32_t nheat;
	uint64_t hot_entries;                /* new code that runs this often is
	                                      * laid out first (section 2); 0: all
	                                      * of it in the order it is made */
};
int rw_plan_parse(const char *text, size_t len, struct rw_plan *p, char *err, size_t errlen);
/* Canonical text (malloc'd), with names as comments when b is given. */
char *rw_plan_format(const struct rw_plan *p, const struct rw_binary *b);
/* Refuses an amount the capability does not allow (-1 and one line). */
int rw_plan_check(const struct rw_binary *b, const struct rw_plan *p, char *err, size_t errlen);
/* Does clone c take its calls by a dispatch at its function's entry (its
 * call, or a chain's copy of it, is no direct call of the function, or of
 * another module: section 1)? */
bool rw_plan_dispatched(const struct rw_binary *b, const struct rw_plan_clone *c);
int rw_plan_add(struct rw_plan *p, bool wrap, uint64_t addr, uint32_t bytes);
int rw_plan_add_clone(struct rw_plan *p, uint64_t func, uint64_t site, uint32_t pad,
		      uint32_t parent);
int rw_plan_add_clone_wrap(struct rw_plan *p, uint32_t clone, uint64_t site, uint32_t bytes);
int rw_plan_add_tag(struct rw_plan *p, uint64_t site, uint64_t tag, uint32_t clone);
int rw_plan_add_xcall(struct rw_plan *p, const struct rw_plan_xcall *x);
int rw_plan_add_mark(struct rw_plan *p, uint64_t func);
/* The cross-module call at site (clone RW_NONE), or its copy inside clone
 * `clone`, in a plan whose xcalls are sorted (rw_plan_sort), or NULL. */
const struct rw_plan_xcall *rw_plan_xcall_of(const struct rw_plan *p, uint64_t site,
					     uint32_t clone);
int rw_plan_add_heat(struct rw_plan *p, uint64_t key, uint64_t entries);
/* The entries at key (rw_plan_heat) in a plan whose heat is sorted, or 0. */
uint64_t rw_plan_heat_of(const struct rw_plan *p, uint64_t key);
/* Sort the tags, the xcalls and the heat; -1 and err when one call (or
 * copy) has two tags or checks, or one key two heats. */
int rw_plan_sort(struct rw_plan *p, char *err, size_t errlen);
/* The tag of the call at site (clone RW_NONE), or of its copy inside clone
 * `clone`, in a plan whose tags are sorted, or 0. */
uint64_t rw_plan_tag(const struct rw_plan *p, uint64_t site, uint32_t clone);
/* What the tag of the copy of the call at site inside clone k hashes in
 * place of a site (no address has bits 48 and up). */
static inline uint64_t rw_copy_key(uint64_t site, uint32_t k)
{
	return site | (uint64_t)(k + 1) << 48;
}
/* The tag of the call at site of the module with build-id id (of the file
 * as trained, before any rewrite): a 64-bit hash, never 0. */
uint64_t rw_tag(const uint8_t *id, uint32_t idlen, uint64_t site);
/* Cross-module calls (section 1): the marker's size, what the marker of page
 * `page` of a module whose output has build-id id holds, and the functions
 * that a GOT slot of `name` may hold when b defines it: the function starts
 * that b's .dynsym defines as the FUNC `name` and the implementations its
 * IFUNC `name` may return, over every version of it; how many into out (0
 * for none, or for more than max). */
#define RW_XCALL_MARK_BYTES 14
uint64_t rw_xcall_value(const uint8_t *id, uint32_t idlen, uint64_t page);
uint32_t rw_export_impls(const struct rw_binary *b, const char *name, uint64_t *out, uint32_t max);
void rw_plan_free(struct rw_plan *p);

/* ------------------------------------------------------------------ writing */
struct rw_write_stats {
	uint32_t pads, wraps, clones, patched_bytes;
	uint32_t tags;               /* tagged calls (section 1, Tagged calls) */
	uint32_t xcalls;             /* calls (and copies) of another module's
	                              * clones by a check (section 1, Cross-module
	                              * calls) */
	uint32_t marks;              /* pages marked for another module's checks */
	uint32_t entry_pads;         /* of pads: through entry wrappers */
	uint32_t dispatched;         /* of clones: taking their calls by dispatch */
	uint32_t chains;             /* of clones: taking a copy's call (a chain) */
	uint32_t tails;              /* of clones: taking tail jumps (section 1,
	                              * Tail chains) */
	uint32_t bound;              /* bound calls (and copies) taking a clone
	                              * (section 1, Bound calls) */
	uint32_t promoted;           /* indirect calls (and copies) with a
	                              * promotion stub (section 1, Promoted calls) */
	uint32_t tail_promoted;      /* indirect tail jumps (and copies) with
	                              * one (section 1, Tail chains) */
	bool bind_now;               /* the output binds at load time, the input
	                              * did not */
	uint64_t in_size, out_size;
	uint64_t tramp_bytes;
	uint64_t hot_bytes;          /* of tramp_bytes: the hot stream's, laid out
	                              * first (section 2; 0: one stream) */
	uint64_t new_vaddr;          /* where the added segments start */
	bool phdr_compact;           /* needs Linux >= 5.18 (see section 2) */
	uint8_t build_id[20];
	uint32_t build_id_len;
};
/* Apply p (checked with rw_plan_check) and write out atomically.  out must
 * not name the input. */
int rw_write(struct rw_binary *b, const struct rw_plan *p, const char *out,
	     struct rw_write_stats *st, char *err, size_t errlen);

/* ------------------------------------------------------------------ notes */
struct rw_note_wrap {
	uint64_t tramp;              /* trampoline start */
	uint32_t size;
	uint32_t bytes;              /* W; 0: a tagged or bound call's stub, no
	                              * frame */
	uint64_t site;               /* the callsite it serves: an original one,
	                              * or the copy of one inside a clone */
};
struct rw_note_clone {
	uint64_t addr;               /* the copy's start */
	uint64_t size;
	uint64_t func;               /* the original function */
	uint64_t site;               /* the call redirected to it (a chain's: the
	                              * copy in its parent), or tested by its
	                              * function's dispatch */
	bool dispatched;             /* taken by the dispatch (rw_plan_dispatched) */
	uint64_t frag_addr;          /* the copy of its function's fragment (.cold) */
	uint64_t frag_size;          /* ... its size (the fragment's) */
	uint64_t frag_func;          /* ... the original fragment; all three 0: the
	                              * function has no fragment */
	uint64_t tag;                /* not 0: site is a call of another module,
	                              * tested by this tag (site rw_copy_key(c,
	                              * J): c's copy in that module's clone J) */
};
struct rw_note_entry {
	uint64_t func;               /* the function entry-wrapped */
	uint64_t tramp;              /* its wrapper (the guard G) */
	uint32_t size;
	uint32_t bytes;              /* W */
};
struct rw_note {
	uint8_t orig_id[PM_BUILD_ID_MAX];
	uint32_t orig_id_len;
	char *plan;                  /* plan text */
	struct rw_note_wrap *wraps;  /* sorted by tramp */
	uint32_t nwraps;
	struct rw_note_clone *clones;   /* in the plan's order */
	uint32_t nclones;
	struct rw_note_entry *entries;  /* sorted by func */
	uint32_t nentries;
};
/* 0 and the note (its wraps sorted by tramp); 1 when path has no icpp note
 * (not rewritten); -1 and err (also for a note of another layout: rewritten
 * by another icpp). */
int rw_note_read(const char *path, struct rw_note *n, char *err, size_t errlen);
void rw_note_free(struct rw_note *n);
/* The note's desc (n bytes) into *out: 0; the layout number of a note of
 * another layout; -1 when corrupt (then rw_note_free what it holds). */
int rw_note_parse(const uint8_t *d, size_t n, struct rw_note *out);

/* ------------------------------------------------------------------ pathmaps
 * The predicted pathmap of OUT is disambig's da_predict_pathmap() with the
 * rewritten module renamed to OUT and given OUT's build-id
 * (rw_rename_module). */

/* The module of pm that is b's file: same build-id, else same real path.
 * PM_NONE when none. */
uint32_t rw_find_module(const struct pathmap *pm, const struct rw_binary *b);
/* Give module `module` of pm the path and build-id of another file. */
int rw_rename_module(struct pathmap *pm, uint32_t module, const char *path, const uint8_t *id,
		     uint32_t idlen);
/* Frames training did not see.  A node whose callsite lies outside its
 * parent's function P either has a stale parent -- the callsite lies in an
 * ancestor A above P: P had returned, but entry-only training pops a frame
 * only when an entry comes at or above its SP, and the call was made deeper;
 * then the frames between A and the node are not padded and the calls into
 * them not wrapped -- or was called from a function U training did not hook
 * (a hidden frame).  A frame training rebuilt from the CFI (no entry of it
 * was seen), or a landing pad in a fragment, has no callsite: no call into
 * that function (the fragment's owner) is wrapped.  Padding U or P, or
 * wrapping a call
 * into U (or the call into P), would move the node without the pathmap
 * showing why, so the prediction would be wrong: those changes are left out.
 * Functions never seen in the map that call a hidden function are taken to
 * be hidden too (transitively).  When U is in another module, the calls of P
 * and of P's caller into other modules are not wrapped.  The calls of a
 * recursion's sibling group (pm_sibling_groups: training does not say which
 * of them led to a callee) are not wrapped, and their function not cloned.
 *   no_pad[f]    function f (index into rw_functions) may not be padded
 *   no_wrap[c]   call c (index into rw_calls) may not be wrapped
 *   no_clone[f]  f may not be cloned
 *   in_map[f]    f is a function of the pathmap (training saw it run)
 *   tail_seen[f] the map has a frame of another function beside one of f's
 *                (same parent, callsite and height): f made a tail call (or
 *                the call is indirect), so f takes no entry wrapper, which
 *                would move that frame (rw_func.entry_tail)
 * malloc'd; rw_visibility_free releases them. */
struct rw_visibility {
	bool *no_pad, *no_wrap, *no_clone, *in_map, *tail_seen;
	uint32_t hidden_nodes;       /* nodes showing a hidden frame above them */
	uint32_t hidden_funcs;       /* functions of the module taken as hidden */
};
int rw_visibility(const struct rw_binary *b, const struct pathmap *pm, uint32_t module,
		  struct rw_visibility *v);
void rw_visibility_free(struct rw_visibility *v);
/* Every function and callsite the capability allows (with v, only those
 * training saw), each with the largest allowed amount <= pad (resp. the
 * smallest allowed >= wrap, else none), and with clone one clone of every
 * cloneable function, padded like it, for its first redirectable call, in
 * each such clone a chain for the copy of its function's first such call,
 * and a tag on every taggable call and on each of its copies in the clones:
 * the stress plan of the tests (`icpp rewrite --everything`). */
int rw_plan_everything_seen(const struct rw_binary *b, const struct rw_visibility *v, uint32_t pad,
			    uint32_t wrap, bool clone, struct rw_plan *p);

/* A copy of a trained map of OUT without trampoline frames: nodes of
 * trampolines (module `module`, addresses in the note's table) disappear,
 * their children hang from the trampoline's parent, and a callsite inside a
 * trampoline becomes the callsite the trampoline serves.  A frame of an
 * entry-wrapped function entered through a call (with a callsite) lies W
 * deeper than training recorded it at its entry hook, before the wrapper
 * ran; a frame training rebuilt from the CFI (no callsite) has its true
 * height already. */
/* A frame that a dispatch handed to a clone for a tagged call of another
 * module is recognised by the tag, computed from that module's build-id as
 * trained and the call's site (through its stub or trampoline): orig[i] is
 * module i's build-id before any rewrite and its note (NULL: not
 * rewritten), for every module of trained (orig NULL: no frame is taken for
 * such a clone). */
struct rw_orig_id {
	uint8_t id[PM_BUILD_ID_MAX];
	uint32_t len;
	const struct rw_note *note;
};
int rw_collapse(const struct pathmap *trained, uint32_t module, const struct rw_note *n,
		const struct rw_orig_id *orig, struct pathmap **out, char *err, size_t errlen);

/* disambig's prediction names clone k as a function of a made-up module
 * (from_pathmap.h, DA_CLONES_MODULE) at address 16 (k+1), the copy of clone
 * k's fragment (frames of the fragment under the clone) at 16 (k+1) + 8, and
 * keeps the original callsites below them.  Each rewritten file (one
 * rw_placement: its module in the prediction, its note) holds the clones
 * first .. first + note->nclones - 1 (the plan lists each module's clones
 * together), its clone k - first.  The copies with their place in the
 * files: each function of that module is mapped by its address (not its
 * order), clone k to the function of the placement's module at the note's
 * addr and size, named like its symbol (__icpp_clone_L_NAME, L = k - first),
 * the fragment's copy to the note's frag_addr and frag_size, named
 * __icpp_clone_L_FRAGNAME (FRAGNAME the name the prediction gives the
 * original fragment; 0xADDR for either when the original has none); a frame
 * called from either copy through a callsite of the original function or
 * fragment takes the callsite of the copy.  Training the rewritten files
 * sees exactly these.  And an entry-wrapped function's own frame lies W
 * deeper than disambig's rule says (section 3): its nodes get W.  Same node
 * indices.  -1 and one line for a function of that module no note has a
 * copy for. */
struct rw_placement {
	uint32_t module;
	const struct rw_note *note;
	uint32_t first;
};
int rw_place_clones(const struct pathmap *pred, const struct rw_placement *pl, uint32_t npl,
		    struct pathmap **out, char *err, size_t errlen);

struct rw_verify_result {
	uint64_t observed;           /* nodes of the collapsed trained map */
	uint64_t matched;            /* same callsite path, same height */
	uint64_t mismatched;         /* same callsite path, other height(s) */
	uint64_t varying;            /* ... under a frame whose size varies (the
	                              * prediction has one of its callees' callsite
	                              * paths at several heights: glibc's printf
	                              * sizes its frame by what it prints; or the
	                              * frame and its callee are of modules not
	                              * rewritten): checked by callsite path
	                              * alone, with its subtree */
	uint64_t outside;            /* ... on a path with no frame of a
	                              * rewritten module, which the rewrite cannot
	                              * move: variation between runs, with its
	                              * subtree */
	uint64_t unpredicted;        /* callsite path the prediction lacks */
	uint64_t unobserved;         /* predicted nodes training did not see */
	uint64_t hidden;             /* observed under a stale parent (the callsite
	                              * lies in an ancestor above the parent: the
	                              * parent is a guess of entry-only training);
	                              * checked by (function, callsite, height)
	                              * alone: */
	uint64_t hidden_matched;     /* ... some predicted node has all three */
	uint64_t hidden_mismatched;  /* ... (function, callsite) predicted, never
	                              * at this height */
	double precise_predicted, precise_observed;   /* % of paths (pm_stats) */
};
/* Compare observed (collapsed) with predicted; modules match by build-id,
 * else path; rewritten[m] says whether module m of observed was rewritten
 * (NULL: treat every path as passing through a rewritten module).  Every observed node is hidden, or
 * matched, varying, outside, mismatched or unpredicted.  Prints up to `show`
 * offending paths to out (may be NULL): wrong heights first, then those under
 * reconstructed frames, then unpredicted ones. */
int rw_verify(struct pathmap *predicted, struct pathmap *observed, const bool *rewritten, FILE *out,
	      unsigned show, struct rw_verify_result *r, char *err, size_t errlen);

#endif
