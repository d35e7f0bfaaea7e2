/* disambig: choose paddings that make context identifiers (CIDs) unique at the
 * least stack cost.
 *
 * Read shared/design/method.md ("Ambiguity and its cures") first.  This module
 * knows nothing of ELF or of the pathmap file: it works on an abstract problem,
 * so that it can be tested with hand-made path sets and benchmarked on
 * synthetic ones.  from_pathmap.c turns a pathmap into a problem and a plan
 * back into pathmap terms (disambig/from_pathmap.h); the rewriter applies it.
 *
 * ---------------------------------------------------------------------------
 * 1. The problem
 *
 * A problem is a calling-context tree.  Every node is one call path (its chain
 * of parents up to a root, root first); the node's own frame is (func,
 * callsite): `callsite` is the call instruction that entered the frame, whose
 * return address - 1 names it.  A node carries the height of its last frame as
 * measured by training (base - CFA, bytes) and a weight (training entries, or
 * samples).  Nodes are in topological order: parent < own index.
 *
 * Functions say what the rewriter may do to them: the frame paddings it can
 * add (a mask of multiples of 16, below) and whether the function may be
 * cloned.  Callsites say which function contains them (`owner`, DA_NONE when
 * the call instruction is not in a function of the problem, e.g. in an
 * unhooked library), which wrap amounts they allow, and whether the call can be
 * redirected to a clone (a direct call, of its `target` only).  A node whose
 * callsite is unknown has callsite DA_NONE: it cannot be wrapped or
 * redirected.
 *
 * A CID is (function, height).  Two nodes collide when they have the same CID.
 * What counts as "the same path" is the problem's unit:
 *  - DA_UNIT_FUNCTIONS (default; the thesis and pm_stats): a path is the
 *    sequence of functions, callsites ignored.  Nodes with the same function
 *    sequence are one path (a "class"); a CID is ambiguous when nodes of two
 *    or more classes share it.
 *  - DA_UNIT_CALLSITES: every node is its own path; the solver then also
 *    separates the same functions reached through different callsites (only
 *    wrapping and cloning can do that).
 *
 * ---------------------------------------------------------------------------
 * 2. The cures, and exactly how they move heights
 *
 * All amounts are multiples of 16 bytes (the x86-64 ABI keeps SP 16-aligned at
 * calls, so every CFA stays aligned and every height keeps its residue).
 *
 * ARR, pad[f] = D: f's frame grows by D bytes (the `sub $N,%rsp` of its
 * prologue allocates N + D).  Every frame called from a frame of f has its CFA
 * D lower: a node's height grows by D for each ancestor frame (proper
 * ancestor, i.e. each NON-LAST occurrence of f on its path).  f's own height
 * does not change; its own extent (below) does.
 *
 * Wrapping, wrap[c] = W: the call instruction c is replaced by a call to a
 * trampoline that lowers SP by W - 8 bytes and calls the original target (the
 * trampoline's own `call` pushes the other 8).  W is the number of bytes added
 * to the height of the frame that c enters, hence to every frame below it:
 * a node's height grows by W for each frame on its path (the last frame
 * included) whose callsite is c.  W is a positive multiple of 16, so the
 * trampoline's adjustment D = W - 8 keeps D + 8 a multiple of 16 (rewriting.md).
 * Stack arguments copied by the trampoline sit inside W (the rewriter picks
 * D = W - 8 - copied bytes); a callsite that cannot fit them has a mask that
 * says so.
 *
 * Cloning, clone k = (f, c): the rewriter copies f to a new function f_k and
 * makes the original call instruction c call f_k instead of f.  In paths:
 *  - a frame (f, c) whose callsite executed the ORIGINAL instruction c
 *    becomes a frame of f_k: its CID is (f_k, height), a function of its own;
 *  - a frame entered from inside a frame of f_k, whose callsite e is owned by
 *    f, executed the COPY of e inside f_k, not e: the copy has its own wrap
 *    amount (da_clone_wrap; when none is listed it is wrapped like e) and it
 *    calls what e calls (the original functions), unless a chain redirects
 *    it (below);
 *  - f_k has its own frame padding, da_clone.pad.
 * So a clone moves nothing by itself except the CIDs of the frames it takes
 * over; combined with a wrapped copy it separates paths that use the same
 * edges in another order (thesis Figure 5.5: A-B-A-A-D vs A-A-B-A-D, clone A
 * for the A->A call and wrap the clone's call to B: a chain of A->A calls
 * then alternates A, A_k, A, A_k, because the copy of the A->A call inside A_k
 * calls the original A).  At most one clone per (f, c); f must be cloneable,
 * and c either a direct call of f (redirectable, its target f) or a callsite
 * of f's module when f takes a dispatch.
 *
 * Chains: a clone k = (g, e, parent j) takes the copy of e inside clone j
 * (e owned by clone j's function or its fragment) instead of an original
 * instruction: the rewriter points that copy at g_k, so a frame of g entered
 * from a frame of f_j (or of its fragment's copy) through e is a frame of
 * g_k.  A direct call of g is pointed at g_k (the copy's target is
 * rewritten); any other call of g's module (an indirect call, a call of a
 * function that tail-calls g) is taken by g's dispatch, which tests the
 * copy's own return address, and a call of another module by g's dispatch
 * testing a tag of the copy's own, when e is taggable (the rewriter of e's
 * module tags the copy as it tags an original call: tcl's allocator in
 * libtcl ends in libc's pthread_getspecific, which chains through clones of
 * the allocator's callers then follow).  At most one clone per (g, e, j).  A chain of clones is a
 * route copied whole: a helper reached by more paths than it has heights
 * gets, below each copy of a caller, a namespace of CIDs of its own (the
 * copies' callees would otherwise share the originals' CIDs), and paths that
 * use the same edges in another order whose adjacent pairs agree separate
 * where the chain starts.
 *
 * Dispatch: where c cannot be pointed at f_k (an indirect call, a call of
 * another function that tail-calls f, a call through the PLT that is not
 * bound: a library's call of its own exported function is pointed at f_k
 * by a stub that checks the GOT slot first, and is redirectable, rewriter.h
 * section 1, "Bound calls"; an indirect call that the rewriter can promote
 * is pointed at a clone of any function of its module it enters by a stub
 * that compares its operand with the function first, da_callsite.promoted,
 * except a function f that another function training saw it enter (or f
 * itself) may have entered by a tail call, whose frames the stub would
 * miss: da_problem.no_promote, rewriter.h section 1, "Promoted calls"),
 * f's entry can
 * test the return address instead: f begins with a jump to code that
 * compares it with c's (of f's own module, rip-relative) and jumps to f_k on
 * a match, else runs f's displaced first instructions and goes on in f.  A
 * call c of another module (libsqlite3's calls that end in libc's mutex
 * functions) is tested by a tag instead, when c is taggable and f
 * reads_tags: the rewriter of c's module makes c return to a place whose
 * preceding bytes hold a 64-bit tag of c, and f's dispatch compares them
 * (rewriter.h section 1, "Tagged calls").  Such a call through a GOT slot
 * that may hold f (the symbol's FUNC in f's module, or an implementation
 * of its IFUNC, or the function such a forwarder jumps on to, in its
 * module or a third one's: da_callsite.xcall) takes f_k without a
 * dispatch: it checks
 * the slot and a marker of f's page before calling f_k itself (rewriter.h
 * section 1, "Cross-module calls"), run time priced per call through it
 * (section 5), where a tag's dispatch runs at every entry of f (cmake,
 * seed 1: 33.4% of the entries ran tests, 15.1% with such calls; its
 * rewrite ran 1.112 times as long as the original, 1.040: docs/
 * bench-disambig.md, session 50).  The
 * return address of a frame is its callsite's, whether the frame was entered
 * by that call or by a tail call of its callee, so a dispatch takes exactly
 * the frames (f, c) the model says, and only those of the instruction it
 * tests (a copy in a clone returns elsewhere: a chain's dispatch tests the
 * copy's return address).  Every entry of f runs its dispatch, a binary
 * search over the tests, so a function takes at most DA_MAX_DISPATCH of
 * them (128: libc's pthread_getspecific under tcl's allocator takes a clone
 * for each copy of the allocator's call in the allocator's own clones, one
 * namespace of CIDs per route: tcl 94.3% of reducible paths at 32, 99.6% at
 * 128; sqlite3's mutex helpers needed more than 8); each costs
 * DA_DISPATCH_CODE_BYTES of code.
 *
 * Fragments: gcc moves the unlikely code of a function f into a part of its
 * own, f.cold (a "fragment"), which f enters by a jump, not a call: the
 * fragment runs in f's activation, with f's CFA.  Training shows it as a
 * child frame of f at f's height without a callsite; such a node is marked
 * `fragment`.  Its frame is its parent's: its height is its parent's under
 * every plan (f's padding lies below both), and what it calls moves with
 * f's padding, not its own (a fragment is never padded: da_problem_check
 * wants its pad masks empty).  A clone of f copies f's one fragment as well
 * (a function with two fragments cannot be cloned): below a frame of f_k,
 * the fragment's frame runs in the copy, a function of its own for CIDs
 * ("the fragment of clone k", inst nfuncs + nclones + k), and its calls are
 * copies, wrapped like the copies of f's own calls (clone wraps name them).
 *
 * Tail calls: a call c of g, where g ends in a jump to f (`jmp f`, the
 * caller's frame popped first), shows in training as f's frame at c beside
 * g's own, at g's height: no call of f is made, so a clone of f could take
 * that frame only by a dispatch at f's entry, which every entry of f pays
 * for.  Where g's only ways into f are direct jumps (the rewriter can point
 * them, and their copies in g's clones, at a clone of f; or, for f of a
 * library rewritten after g's module, jumps to f's PLT entry, pointed at
 * the thunk of a checked call: da_callsite.xcall), the bridge hangs such a
 * frame below g's frame instead (da_from_pathmap, a node marked `tail`):
 * its callsite is a callsite of its own for g's jumps to f (`tail`, owner
 * g, target f, never wrapped), so clone (f, e) takes every tail call of the
 * original g into f, and a chain (f, e, parent j), where clone j is a clone
 * of g, the calls of g that clone j takes: both without a dispatch
 * (tclsh8.6, seed 1: pthread_getspecific's 103 tag tests down to 2, the
 * rewrite's run time 1.133 -> 1.096 of the original's; docs/
 * bench-disambig.md, session 52).  Where g's jumps are indirect (through
 * a pointer) and each takes a stub that compares the pointer with the
 * clones' functions, one tail callsite (target DA_NONE) serves g's tail
 * nodes of every function of its module: a clone of any of them takes it,
 * and the stubs' tests, which every frame through it runs, are priced as a
 * dispatch of as many tests (libsqlite3's mutex and allocator methods;
 * session 53).
 * g's frame is gone when f runs: a tail node's height is its parent's under
 * every plan, without the parent's padding (its own frame and padding are
 * its own), and as a path it is its parent's parent's call of f: its class
 * and its function sequence skip the parent (da_path_parent).
 *
 * Formally, walking the tree from the roots, for node n with parent p:
 *   exec(n) = none                   if n is a fragment;
 *             copy (k, callsite(n))  if inst(p) is f_k or the fragment of
 *                                     clone k, and owner(callsite(n)) =
 *                                     func(p);
 *             callsite(n)            otherwise (the original instruction);
 *   inst(n) = the fragment of clone k  if n is a fragment and inst(p) = f_k;
 *             f_k  if exec(n) is the original c and clone k = (func(n), c),
 *                  or exec(n) is copy (j, c) and clone k = (func(n), c, j);
 *             func(n) otherwise;
 *   frame_pad(n) = frame_pad(p) if n is a fragment, else pad(inst(n));
 *   height'(n) = height(n) + delta(n),
 *   delta(root) = wrap(exec(root)),
 *   delta(n)    = delta(p)                    (n a fragment or a tail node),
 *                 delta(p) + frame_pad(p) + wrap(exec(n)) (otherwise);
 *   CID'(n) = (inst(n), height'(n)).
 * da_predict() computes exactly this; the solver keeps the same values
 * incrementally and the tests check that the two agree.
 *
 * ---------------------------------------------------------------------------
 * 3. Costs (reported in da_result, documented in docs/plan-format.md)
 *
 * Stack: the extent of a node is height' + pad(inst): the CFA of its frame
 * plus its own padding (the unpadded size of a last frame is unknown to the
 * problem and left out on both sides; a fragment's is its height': its
 * frame's padding counts at its parent).  For each thread root r, with its
 * subtree's nodes: old_max = max height (before, no padding), new_max = max
 * extent (after); growth(r) = new_max / old_max (a ratio; old_max below 16
 * counts as 16) and growth_bytes(r) = new_max - old_max.  Recursion multiplies
 * padding through the paths themselves: a node under 100 frames of f moves by
 * 100 * pad[f].  --max-stack-growth caps the ratio, per root.
 * Recursion: for a node x and its nearest ancestor y of the same function
 * (one level of a recursion training saw), the level's growth is
 * (height'(x) - height'(y)) / (height(x) - height(y)); the plan reports
 * the largest.  The cap holds for the recursion depths of training only: a
 * deeper recursion than training's takes up to that many times the stack
 * per extra level (sqlite3, seed 1: a 32-byte level of its expression
 * walker grows to 1040 bytes).  --max-recursion-growth X bounds it: each
 * level's allowance, (X - 1) times its bytes, is split evenly between the
 * paddings of its frames and the wraps of its calls that may change, and
 * their masks (a clone's paddings too) are narrowed to their share.
 * Code: a trampoline costs DA_WRAP_CODE_BYTES; wrapped callsites (originals
 * or copies in clones) that call one function (the one function all their
 * nodes enter) with one amount share a trampoline, any other wrapped callsite
 * (several callees: indirect) has its own; every clone costs its function's
 * code_bytes (or DA_CLONE_DEFAULT_BYTES when unknown), rounded up to 16,
 * a dispatched one DA_DISPATCH_CODE_BYTES more, and one that tests a tagged
 * call of another module DA_TAG_CODE_BYTES more (the call's stub), as one
 * that another module's call takes by its check (its thunk).
 * nwraps counts wrapped callsites, not trampolines.
 *
 * ---------------------------------------------------------------------------
 * 4. What can cure a collision (da_classify)
 *
 * For two colliding nodes a, b of different classes, only the frames below
 * their lowest common ancestor differ.  By structure (enum da_diff):
 *   DA_DIFF_FUNCS  the multisets of non-last functions differ: ARR can move
 *                  one against the other;
 *   DA_DIFF_EDGES  same functions, but the callsites (edges) differ: only
 *                  wrapping (or cloning) can;
 *   DA_DIFF_ORDER  same edges in another order: only cloning can: a clone
 *                  of the caller of an adjacent pair (callsite into f,
 *                  callsite owned by f) that occurs a different number of
 *                  times, with its copy wrapped; a clone of the last frame's
 *                  function, when the last frames were entered through
 *                  different callsites; or a chain ending at the last frame
 *                  that starts where the two paths' frames, counted from
 *                  the last, first differ (or above);
 *   DA_DIFF_NONE   the same frame sequence (possible only in
 *                  DA_UNIT_CALLSITES, nodes whose heights differ higher up):
 *                  nothing can.
 * Then the capability and the options decide the cure (enum da_cure: the
 * cheapest of ARR < wrapping < cloning that is possible) or, when none is, why
 * (enum da_left): BLOCKED (the functions and callsites that differ may not be
 * changed, chains included), DISABLED (only a mechanism switched off in the
 * options would do), IDENTICAL.  After solving, a collision with a cure that still remains is
 * UNSOLVED: the solver found no plan within the padding bounds and the stack
 * cap that separates it without losing more elsewhere; or CROWDED when
 * its function cannot hold all its paths apart.  The pigeonhole bound: a
 * node's height under any plan lies between its measured height and the
 * most that its ancestors' largest paddings and its frames' largest wraps
 * add, lowered so that no node below it passes the stack cap (deltas only
 * grow down the tree); a precise path holds the CID of its first node
 * alone; so the precise paths ending in f (per residue modulo 16) are at
 * most a maximum matching of those paths to the heights in their ranges,
 * less one when the matching leaves a path out (that path takes a height
 * too, and the heights of precise paths plus its own would be a larger
 * matching).
 * The paths beyond it, over all functions, are crowded_paths: a count that
 * no plan can beat (which paths are left is the plan's choice), not counting
 * the irreducible ones.  With cloning, a path whose first frame is entered
 * by a call a clone of its function may take is not bounded (the clone is
 * a function of its own); the rest are: a clone takes only frames entered
 * by a call that may be redirected to it (the original instruction, or its
 * copy in a clone: a chain) or that its function's dispatch may test, so a
 * frame entered through a call that neither applies to stays (f, h).
 * unsolved_elsewhere counts the unsolved and crowded pairs at a function
 * whose two frames were entered by calls from another module that no clone
 * may take (untagged: the calling module is not rewritten, or the call
 * cannot be tagged; libsqlite3's tail calls into libc's mutex functions
 * without --lib), or because the function takes no dispatch at all
 * (unsolved_no_dispatch: libc's memmove, which mempcpy enters at +3, so
 * its first instructions cannot be displaced): only paddings and wraps
 * above can move them, and those move whole sets of paths at once.
 * clone_bytes is the least code of a clone cure (the cheapest of the three
 * above, at section 3's costs); unsolved_priced counts the unsolved pairs
 * that only cloning cures and whose least clone costs more at code_weight
 * than all the paths at their CID are worth (their weight counted as the
 * objective counts it): the price left them, not the
 * search (python3.11: its pairs through the interpreter's recursion in
 * another order need chains through _PyEval_EvalFrameDefault, 56 KB).
 *
 * ---------------------------------------------------------------------------
 * 5. The solver (solve.c; bench/disambig compares it with the thesis search)
 *
 * State: the tree in DFS order, so that every move is a set of subtree ranges:
 * a variable (pad of a function instance, wrap of a callsite or copy) lists
 * the nodes it anchors, and changing it by d moves every node of the anchored
 * subtrees by d times the number of anchors above it.  Under DA_UNIT_FUNCTIONS
 * an edge group (every callsite by which f calls g, wrapped by one amount)
 * is a variable too: a path's callsite variants then move together.  A hash
 * of CIDs (per-class counts and a representative node each) tracks which
 * paths are precise; per root, the largest extent and how many nodes reach it
 * give the stack growth (a root is rescanned only when its last node at the
 * max moves down).  So a move is evaluated exactly and incrementally, in time
 * proportional to the nodes it moves, and undone the same way.  A clone
 * (or its undoing) changes the CIDs of the frames its call enters and of
 * the chains below them; what keeps its call, CID and height is not visited
 * further down (solve.c recompute).
 * Objective (maximised), with N paths, total weight W and total entries E
 * (da_node.entries: training's, also where the weights are samples):
 *     (precise paths) + hot_weight * N * (weight of nodes whose CID is
 *     unique) / W - stack_weight * sum over roots r of (distinct paths under
 *     r) * ln(growth(r)) - code_weight * (new code bytes) - hot_code_weight
 *     * (hot code bytes added: below) - dispatch_weight
 *     * N * (sum over functions f that take clones by dispatch of the
 *     entries of f's nodes * (1 + log2(f's tests)), and over callsites that
 *     take clones by a stub (a promoted call, indirect tail jumps) of the
 *     entries of their nodes * (1 + log2(their clones))) / E - wrap_weight * N *
 *     (entries of the nodes entered by a wrapped call, each times 1 + the
 *     bytes its trampoline copies / DA_COPY_RUN_BYTES, plus those of the
 *     nodes of functions padded by an entry wrapper, plus DA_BIND_RUN_SHARE
 *     times those of the nodes a clone takes through a bound call (not a
 *     stub's, priced above), plus
 *     DA_XCALL_RUN_SHARE times those through a cross-module call's check) / E -
 *     1e-4 per 16 bytes of padding (a tie-break towards small amounts).  Run time is
 *     paid per call: a plan weighted by samples (icpp plan --samples) still
 *     prices it by entries.
 * The dispatch term prices run time, which the other costs leave out: every
 * entry of such a function runs its tests (da_dispatch_share), so with
 * training's entries as weights a dispatch of one test in a function that
 * takes 10% of the calls costs dispatch_weight * 10% of the paths.  K tests
 * are a search of about log2(K) compares and branches, which mispredict in
 * proportion, so they cost 1 + log2(K) times that (solve.c
 * dispatch_depth; jq: 84 tests at jv_get_kind, a 3-instruction function
 * entered by 20% of the calls, ran 15 more instructions and mispredicted
 * one more branch per entry, 1.84 times the program's run time under
 * cachegrind, where one test at each of its hot functions costs 4
 * instructions; docs/bench-disambig.md, session 37).  Before session 37
 * the number of tests was not priced; the figures below are from then.
 * The trampoline term prices the other run time a plan adds: a wrapped
 * call runs four more instructions and a push for every 8 bytes of stack
 * arguments it copies (da_callsite.wrap_copy, up to RW_MAX_COPY), an entry
 * wrapper's padding about six (da_run_shares; a padding up to the
 * function's pad_in_place is made in place and runs none), a bound call's check one
 * (its thunk against the PLT entry it replaces, rewriter.h section 1:
 * jq's plan ran 242M more instructions in them, 9% of the program's, while
 * they were free: docs/bench-disambig.md, session 41).  jq's plan with it
 * free wrapped calls that 12.2% of the entries took, 10.5% of its
 * instructions; at 0.3 (the default until session 56), 4.5%, with
 * the same precision on jq, the real maps, the abstract maps and the
 * synthetic sets within a search's spread (docs/bench-disambig.md,
 * session 37).
 * The dispatch default is 0.1 since session 56, where the top-up (below)
 * starts; it was 0.05 from session 40 to 55, and 0.1 from session 34 to
 * 39, when a library's calls of its own API took their clones by dispatch
 * and tclsh's plan cost 1.07-1.1 times the original's run time.  From 0.1
 * to 0.05 in session 40, under the rewriter's capability, seeds 1-3, % of
 * reducible paths: python3 96.7 -> 98.8, lua
 * 97.3 -> 98.3, tcl 98.1 -> 98.7, sqlite3 99.0 -> 99.1, perl 97.7 -> 97.9;
 * run time (cachegrind estimate, seed 1, against the original) python3
 * 1.010 -> 1.028, sqlite3 1.038 -> 1.043, tcl 1.040 -> 1.038, jq 1.111 ->
 * 1.116 (docs/bench-disambig.md, session 40).  At 0.25 tcl fell to 75.8%
 * (session 34): its allocator's routes all end in pthread_getspecific, a
 * tenth of its calls.
 * The hot code term prices what clones cost the instruction cache: each
 * copy of a function (the original and every clone) holds its code
 * (da_func_bytes, da_clone_bytes) hot in proportion to its frames' entries
 * up to DA_HOT_CODE_SHARE of all entries, fully from there on
 * (da_hot_bytes); the term is the sum over all copies less the originals'
 * before.  Two copies that both run add a second copy of the code to what
 * the cache must hold, where a clone that takes a cold function's calls
 * adds nothing.  It is off by default (DA_DEFAULT_HOT_CODE_PER_PATH 0):
 * under the rewriter's capability (seed 1, cachegrind with its cache
 * simulation, against the original) the default plans run tclsh8.6 1.125
 * and sqlite3 1.108 times as long, mostly in instruction cache misses
 * (2.1-2.5 times the original's), and at 16 bytes of hot code a path
 * tclsh8.6 and sqlite3 keep 99.1% and 99.5% of their paths precise at
 * 1.096 and 1.091, python3.11 95.4% (97.9%) at 1.010 (1.027), but perl
 * falls from 99.8% to 97.2% at the same run time: the misses follow which
 * copies share the cache's sets more than how much code is hot
 * (docs/bench-disambig.md, session 46).
 * With the defaults, a path made precise is worth as much as 4/N of the
 * weight, and 1% of stack growth of a root costs about 0.25% of its paths:
 * precision is bought with stack, within the cap.  Moves never leave the
 * allowed masks and never exceed the stack cap (a compound move, a clone
 * with its siblings and the copies below it, by the state it ends in: a
 * clone can raise the stack, its calls leaving the clones below it for
 * the originals).  The default capability
 * lets every amount reach 1008 bytes (all a mask says; the rewriter keeps
 * frames below 4 KiB): a padding of a function high in the tree can then
 * lift all its subtree past the heights the same functions have elsewhere.
 * With amounts that large, stack_weight 0.1 bought the last tenths of a
 * point with up to 18% growth (lua, sqlite3: the real maps' geomean 1.089).
 * Over twelve seeds of the real maps and six of the large synthetic sets,
 * 0.2 left the real maps at 1.052, past the target, and 0.25 at 1.035 (the
 * synthetic sets 1.030 and 1.017) for the same precision pooled (98.76%
 * and 98.75% of reducible paths, synthetic 98.94% and 98.92%; perlbench
 * 99.14% and 98.99%): docs/bench-disambig.md, sessions 23 and 24.
 * Search, deterministic for a seed and a work budget (node moves):
 *  c. when cloning is allowed, first: clones for crowded functions.  Every
 *     (function, callsite) with two or more nodes at ambiguous CIDs (one
 *     path is moved more cheaply by a padding or a wrap than by a copy),
 *     most such nodes first, in a twentieth of the budget, is cloned for
 *     that callsite when the objective improves (the clone's code priced;
 *     only a call of the function itself can take it, da_redirects): a
 *     clone is a namespace of CIDs of its own, so the paths entering f
 *     through c then collide only among themselves.
 *     A helper reached by more paths than it has heights (python3: 2537
 *     paths in 1049 16-byte slots) is beyond any padding; its routes are
 *     not.  A clone renames only its own frames: its callees share their
 *     CIDs with the original's callees' (its copies call the originals)
 *     until a frame entered through a copy is cloned in turn for that copy
 *     (a chain): the call of a (function, call) here is the original
 *     instruction or its copy in a clone made before the pass, so each
 *     pass copies a crowded route one level further down to its helper
 *     (real maps, pooled: 92.9% of reducible paths without chains, 94.6%
 *     with).  A chain may continue through an indirect call (or a call
 *     of a function that tail-calls the next) by a dispatch on the copy's
 *     return address (twelve seeds, % of all paths: sqlite3 95.82 ->
 *     96.37, python3 95.12 -> 95.15), and into another module by a
 *     dispatch on the copy's tag (seeds 1-3, % of reducible paths: tcl
 *     89.3 -> 94.3, and 99.6 with 128 tests a function instead of 32).
 *     The pass runs again after the construction (until 0.3 of the
 *     budget), after each half of the annealing (1, until 0.4 and
 *     0.55), after the greedy paddings (2, until 0.72) and at 0.85 (c
 *     below), and greedy's clone moves come between:
 *     the moves between passes change which routes are crowded (real
 *     maps, three seeds: 94.1% of reducible paths with the passes at the
 *     start and at 0.85 only, 95.1% with all five).
 *     From the second pass on, and in greedy's clone moves, a clone that
 *     does not improve the objective alone is tried with its siblings:
 *     clones of the same function for the caller frame's other direct
 *     calls of it.  A path is precise only when all its nodes are, and a
 *     caller that makes the same call from two places (sqlite3Malloc and
 *     sqlite3StatusUp) gives each path two nodes: one of them renamed
 *     gains nothing (real maps, six seeds: 96.50% -> 96.99%).
 *     From the third pass on (0.4, 0.55, 0.72, 0.85), a clone of f also copies
 *     the chains below the frames it takes: their callees ran in clones
 *     entered through the original's calls (or the template clone's copies)
 *     and would fall back to the original functions' CIDs through f_k's
 *     copies.  Each clone below is copied for f_k's copy of its call, with
 *     its padding and wraps, and kept when the objective improves (by
 *     dispatch too, a test of the function's, since clones skip what they
 *     leave unchanged: real maps, six seeds, 97.85% -> 97.96%); within
 *     a quarter of a collision's allowance.  Without it, cloning a crowded
 *     helper for a route of 78 paths (perlbench) lost 688 paths below and
 *     was refused (six seeds: real maps 97.55% -> 97.73% of reducible
 *     paths, synthetic 96.90% -> 97.40%; from the second pass on: sqlite3
 *     99.1% -> 98.4%).
 *     A function's first clone by dispatch pays for the tests at every
 *     entry of it (dispatch_weight, section 5): at a hot function more than
 *     one route's paths are worth.  When that clone alone does not improve
 *     the objective, the pass clones the function for each of its crowded
 *     routes by dispatch in turn, most nodes first, and keeps the prefix
 *     that scores best (python3 under its capability, libc's memmove at
 *     5.9% of the entries: seeds 1-3, 94.4% -> 96.5% of paths, the share
 *     of entries through a dispatch 6.5% -> 19.6%);
 *  0. construction, until a quarter of the budget, functions with the most
 *     colliding paths first: a function's nodes have heights h0 + sum of
 *     coefficient * amount over the variables on their paths; the
 *     variables that split its colliding CIDs (most CIDs split first, then
 *     fewest nodes moved; at most 64) are fixed one at a time, each at the
 *     amount that maximises the objective plus the function's potential
 *     (its paths whose (height, coefficients of the variables not fixed
 *     yet) no other path shares: those that may still end alone), stack
 *     counted at 5 times the search's price; the whole change is kept when
 *     the objective, at that price, improves.  A perfect hash built level
 *     by level, where single moves scored one at a time spread n paths over
 *     m heights like random hashing (about n e^(-n/m) of them alone) and
 *     take no step that makes nothing precise at once;
 *  1. threshold annealing, until half the budget (with cloning, in two
 *     halves with the passes of c after each): a random ambiguous CID,
 *     a random variable that separates two of its paths (the one that
 *     moves fewer nodes of two drawn), a random allowed amount; kept unless
 *     it loses more than a threshold that falls from 1 path to 0; the best
 *     state is kept.  One move per draw, large variables too: from the
 *     construction it makes far more paths precise per node moved than
 *     the sweeps of 2, which try the cheapest variables, each amount
 *     smallest first, a move of everything below it per amount
 *     (python3.11: 6,100 paths for 4.4M node moves, the sweeps 126 for
 *     4.6M);
 *  2. spread moves (the thesis' move, but scored exactly): for a random
 *     ambiguous pair, pad the functions that differ by 16, 32, 48, ... more
 *     until the pair separates, kept when the objective improves; then
 *     greedy, single moves, paddings only (they cost no code and never split
 *     a path's callsite variants over several CIDs, as wrapping one callsite
 *     does): ambiguous CIDs in order (hot ones first, hottest first, then by
 *     value per node moved), each with a work allowance in proportion to its
 *     value; for each, the variables that separate its heaviest path from the
 *     others (from the frames below their common ancestor), cheapest first
 *     (nodes moved, a wrap counting 4 times a padding), each with its allowed
 *     amounts smallest first; the first move that improves the objective is
 *     kept; when cloning is allowed, clones for pairs that nothing cheaper
 *     separates, within the collision's allowance (before clones skipped
 *     what they leave unchanged, a clone high in the tree cost every node
 *     below it: one pair took 7M node moves of python3's 50M; twelve
 *     seeds, % of paths, 95.00 -> 96.17), and only those that treat the
 *     pair's two paths differently (the last frames' function when they
 *     were entered through different calls; a caller of an adjacent pair
 *     that occurs a different number of times in the two, counted below
 *     their common ancestor: python3.11 under its capability spent whole
 *     sweeps on clones that moved both paths of a pair no move could
 *     separate, 90.9% -> 94.6% of paths), and, in a CID of 8 paths or more
 *     whose variables found no move, a clone of the last frame's function
 *     for a pair entered through different calls (a helper whose other
 *     paths crowd the heights around: cmake's static constructors, 95.9%
 *     -> 97.6% of its reducible paths); sweeps repeat while they improve;
 *  c. clones for crowded functions, where the paddings moved paths into
 *     new collisions (six seeds: synthetic sets 97.77% -> 97.88%);
 *  3. greedy as 2 with every kind of move.  (Ejection chains, a move that
 *     made up to 4 other CIDs ambiguous followed by a repair of each, took
 *     most of these sweeps' work for little: python3, seed 1, 10.6M node
 *     moves for 58 chains kept, single moves 7.4M for 1173; without them,
 *     six seeds, real maps 97.08% -> 97.54% of reducible paths pooled,
 *     synthetic sets 94.94% -> 96.19%);
 *  c. clones for crowded functions again, where the search moved paths
 *     into new collisions;
 *  4. 3 again, until the tenth kept for 5 (an annealing as 1 before it
 *     made few paths precise for its work: dealII 26 for 3.8M node moves,
 *     python3 24 for 3.7M; in its place the sweeps, four searches, six
 *     seeds: dealII 98.94% -> 99.02% of reducible paths, perlbench 99.05%
 *     -> 99.10%, sjeng 97.72% -> 97.63%, the real maps the same);
 *  5. hot CIDs still colliding (their weight worth more than their paths),
 *     hottest first, in a tenth of the budget kept for them: the other
 *     paths moved away from the heaviest one by one, each by the move of a
 *     variable off the heavy path that loses least, kept when the whole
 *     improves (phases 1-4 take single moves, which may carry the
 *     heavy path into another collision or stop where every departure on
 *     its own costs; whether they solved a hot CID hinged on where their
 *     shares of the budget ended); one sweep of them (dealII: two more
 *     found one move for 2.9M node moves); what they leave of the tenth
 *     goes to one more sweep of 3;
 *  6. shrink: lower every nonzero amount while the objective does not drop;
 *  7. prune: drop every clone, latest first, whose removal improves the
 *     objective and leaves every precise path precise (the moves after a
 *     clone pass often hold its paths apart without it); a clone that a
 *     chain continues stays while the chain does.  Real maps, six seeds:
 *     the same precision (97.00% of reducible, 96.99% without) with 4-25%
 *     less new code (sqlite3 70 -> 60 KB, lua 16 -> 12 KB).
 * The construction commits to amounts before the search shows whether they
 * are needed, and shrink cannot undo them (each holds paths apart): when it
 * raised the stack penalty and the whole search took under a fifth of the
 * budget, the search runs again from a construction that raises no stack
 * penalty, and the plan with the better objective is kept.
 * Independent searches: da_solve runs `searches` (default 4) of the
 * search above, each on its own state with its own seed (the first with
 * o->seed itself, so more searches never keep a plan that scores worse),
 * as many at once as the process may use CPUs (`threads`), and keeps the
 * plan with the best objective, the earliest on a tie: the plan depends on
 * the seed and the number of searches, never on how many ran at once
 * (da_options.on_search hears of each as it ends, in that order: icpp plan
 * and icpp rewrite show it on a terminal).  The searches end far apart
 * (lua5.4 under its rewriter's capability, seeds 1-4: 97.0-98.8% of paths
 * precise), and more work in one search buys less than another start: one
 * search of four times the budget trades precision for stack and code the
 * objective prices (lua 97.3 -> 97.0%),
 * four of a quarter of it starve the phases of large maps (python3.11
 * 91% -> 85%); docs/bench-disambig.md, session 26.
 * Top-up to a target (precision_target, icpp plan --precision): where the
 * kept plan leaves fewer than that share of the reducible paths precise
 * (da_reducible_paths), the search goes on from it with the prices of run
 * time and code (code, hot code, dispatch, trampolines and checks) and the
 * stack's lowered by DA_TOPUP_FACTOR, a quarter of the budget per round:
 * clones for crowded functions, greedy sweeps, both again, then shrink and
 * prune at the lowered prices; up to DA_TOPUP_ROUNDS rounds, until the
 * target is met.  Going on from the plan the full prices chose buys only
 * what the lower prices make worth it, where a search at lower prices from
 * the start takes costlier routes all along: cmake under its capability,
 * seed 1, 98.9% -> 99.1% of reducible paths in two rounds at a run time
 * of 1.0380 -> 1.0383 of the original's, where --wrap-weight 0.2 from the
 * start reached 99.1% at 1.0599.  So the default prices are where the
 * descent starts, twice those chosen before it (dispatch 0.05, trampolines
 * 0.3, 128 bytes of code a path): the plans meet the target at less run
 * time, cmake at the same precision too, the maps far above it with less
 * to spare (under the capability, seeds 1-3, run time against the
 * original's, means, old prices -> these: sqlite3 1.096 -> 1.085, tclsh8.6
 * 1.081 -> 1.066, cmake 1.047 -> 1.032, python3.11 1.015 -> 1.012, lua
 * 1.007 -> 1.004, perl 1.006 -> 1.006; docs/bench-disambig.md, session 56).
 * The stack's price starts at twice too (0.5) and falls with the others, so
 * that a round only raises what a path made precise is worth: the same run
 * time over the three seeds (geomean 1.0333 and 1.0334), sjeng's stack
 * growth 1.116 -> 1.010 (its seed 3 at the cap while the stack alone kept
 * its price), sqlite3's and tclsh8.6's 1.01-1.04 -> 1.00-1.02.
 * A round is bought by its prices, not its budget (dealII, seed 1: eight
 * rounds at unchanged prices 98.44% of reducible paths, at 0.7x 99.23% in
 * seven; 96% of a sweep's node moves go to CIDs that end no better), and it
 * takes the time of a quarter search on one thread (dealII 1.4 s): where a
 * plan needs rounds the 10 s at 200k paths is not met
 * (docs/bench-disambig.md, session 57); da_options.on_round hears of each
 * as it ends, and icpp plan and icpp rewrite show it on a terminal.
 * The plan lists which collisions remain, with their kind and reason.
 */
#ifndef ICPP_DISAMBIG_H
#define ICPP_DISAMBIG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DA_NONE UINT32_MAX
#define DA_ALIGN 16                 /* every amount is a multiple of this */
#define DA_MAX_STEPS 63             /* masks reach 63 * 16 = 1008 bytes */
#define DA_DEFAULT_BOUND 1008       /* default capability: every amount a mask says
                                     * (256 before session 23) */
#define DA_WRAP_CODE_BYTES 32       /* trampoline per wrapped callsite */
#define DA_CLONE_DEFAULT_BYTES 256  /* clone of a function of unknown size */
#define DA_DISPATCH_CODE_BYTES 32   /* a clone's test in its function's dispatch */
#define DA_TAG_CODE_BYTES 64        /* a tagged call's stub, beside its test */
#define DA_COPY_RUN_BYTES 32        /* stack-argument bytes whose copy (a push
                                     * each 8) runs as long as a trampoline's
                                     * own four instructions */
#define DA_BIND_RUN_SHARE 0.25      /* a bound call's check (one more
                                     * instruction a call) in trampolines'
                                     * worth (four) */
#define DA_XCALL_RUN_SHARE 1.5      /* a cross-module call's check
                                     * (da_callsite.xcall: eight more
                                     * instructions a call than its PLT
                                     * entry, where a trampoline runs five and
                                     * a call and return) */
#define DA_MAX_DISPATCH 128         /* dispatched clones per function */
#define DA_MAX_XCALL 32             /* functions a GOT slot may hold (da_callsite.xcall) */
#define DA_DEFAULT_SEARCHES 4       /* independent searches (section 5) */
#define DA_DEFAULT_DISPATCH_WEIGHT 0.1      /* da_options.dispatch_weight (section 5;
                                     * 0.05 before the top-up) */
#define DA_DEFAULT_WRAP_WEIGHT 0.6          /* da_options.wrap_weight (section 5; 0.3
                                     * before the top-up) */
#define DA_DEFAULT_CODE_PER_PATH 64 /* da_options.code_weight is its inverse
                                     * (section 5; 128 before the top-up) */
#define DA_DEFAULT_STACK_WEIGHT 0.5 /* da_options.stack_weight (section 5; 0.25
                                     * before the top-up) */
#define DA_DEFAULT_HOT_CODE_PER_PATH 0  /* da_options.hot_code_weight is its
                                     * inverse (section 5; 0: free) */
#define DA_HOT_CODE_SHARE 1e-4      /* a function's copy whose frames take this
                                     * share of the entries is hot (section 5,
                                     * hot_code_weight) */
#define DA_DEFAULT_BUDGET_M 45      /* node moves per search, millions (section 5) */
#define DA_DEFAULT_PRECISION_PCT 99    /* icpp plan --precision (section 5):
                                        * the target */
#define DA_DEFAULT_PRECISION (DA_DEFAULT_PRECISION_PCT / 100.0)  /* da_options.precision_target */
#define DA_TOPUP_FACTOR 0.7         /* prices a top-up round keeps (section 5) */
#define DA_TOPUP_ROUNDS 8           /* top-up rounds at most: prices down to
                                     * 0.7^8 = 0.058 of the options' */
#define DA_DEFAULT_BUDGET (DA_DEFAULT_BUDGET_M * 1000000ULL)
#define DA_MAX_SEARCHES 64

/* Allowed amounts: bit k set allows 16*k bytes (k = 0..63).  Bit 0 (no
 * change) is always allowed; a mask of 1 (or 0) means "cannot be changed". */
typedef uint64_t da_mask;

/* Every multiple of 16 from 0 to `bytes` (rounded down to 16, at most 1008). */
da_mask da_mask_upto(uint32_t bytes);
/* Is `bytes` allowed by mask? */
bool da_mask_allows(da_mask m, uint32_t bytes);
/* The largest amount the mask allows (0 for none). */
uint32_t da_mask_max(da_mask m);

struct da_func {
	char *name;             /* for reports; may be NULL */
	uint64_t code_bytes;    /* size of its code (with its fragment's: a
	                         * clone copies both), for clone costs; 0 unknown */
	da_mask pad_mask;       /* allowed frame paddings */
	bool cloneable;         /* may be copied */
	da_mask clone_pad_mask; /* paddings a clone of it may take (da_add_func:
	                         * pad_mask; the rewriter pads a clone in place
	                         * only, so none for a function it pads through
	                         * an entry wrapper) */
	bool dispatch;          /* its clones may take calls by a dispatch at its
	                         * entry (section 2; da_add_func: false) */
	bool pad_runs;          /* a padding of it runs code at each entry (the
	                         * rewriter's entry wrapper; priced as a wrap,
	                         * section 5; da_add_func: false) */
	uint32_t pad_in_place;  /* with pad_runs: the paddings up to it run none
	                         * (made in place up to the room of the frame's
	                         * allocation, by the wrapper beyond; 0: every
	                         * padding runs code) */
	bool reads_tags;        /* with dispatch: it may also test tagged calls
	                         * of other modules: every frame of it was
	                         * entered by a call, so a return address is at
	                         * its entry (da_add_func: false) */
	uint32_t module;        /* the object it is in (da_add_func: 0) */
};

struct da_callsite {
	uint32_t owner;         /* function containing the call, or DA_NONE */
	da_mask wrap_mask;      /* allowed wrap amounts (bit 0 = not wrapped) */
	bool redirectable;      /* a direct (or bound) call that may be pointed
	                         * at a clone */
	uint32_t target;        /* the function it calls directly: only a clone
	                         * of it may take the call (a frame entered
	                         * through c may be of another function: c calls
	                         * g, g tail-calls f).  DA_NONE (da_add_callsite's
	                         * default, for hand-made problems): whatever
	                         * function its nodes enter */
	uint32_t module;        /* the object the call instruction is in: a
	                         * dispatch compares return addresses of its
	                         * function's own module, and tags of others'
	                         * calls (default 0) */
	bool dispatchable;      /* a dispatch may test its return address
	                         * (default true) */
	bool bound;             /* redirectable through a check of its GOT slot
	                         * that each call through it runs once it takes
	                         * a clone (a bound call, rewriter.h section 1):
	                         * priced as DA_BIND_RUN_SHARE of a trampoline
	                         * (section 5; default false) */
	bool taggable;          /* the rewriter can tag the call, so that a
	                         * dispatch in another module may test it
	                         * (section 2; default false) */
	uint32_t xcall, nxcall; /* a call of another module through a GOT slot
	                         * whose symbol that module defines: the functions
	                         * the slot may hold or that a forwarder there
	                         * jumps on to, da_problem.xcall_funcs[xcall]
	                         * and the nxcall after it (default none).  A clone
	                         * of one takes the call directly, by a check of the
	                         * slot and of the module (rewriter.h section 1,
	                         * Cross-module calls), not by a tag; priced as
	                         * DA_XCALL_RUN_SHARE of a trampoline (section 5) */
	bool promoted;          /* an indirect call, redirectable (target
	                         * DA_NONE) to a clone of any function of its
	                         * own module by a stub that compares its
	                         * operand with the function first (section
	                         * 2, "Dispatch"); bound too, its stub priced
	                         * as a dispatch (section 5) that every call
	                         * through it runs (default false) */
	uint32_t wrap_copy;     /* stack-argument bytes its trampoline copies
	                         * at every call (default 0): run time that
	                         * section 5 prices beside the trampoline's own */
	bool tail;              /* owner's direct tail jumps to target, not a
	                         * call (section 2, "Tail calls"): no wraps, no
	                         * dispatch, no tag; redirectable (default
	                         * false).  Target DA_NONE: its indirect tail
	                         * jumps, to any function of its module (a
	                         * stub compares each jump's operand with the
	                         * clones' functions) */
};

struct da_node {
	uint32_t parent;        /* DA_NONE for a thread root */
	uint32_t func;
	uint32_t callsite;      /* DA_NONE when unknown */
	int64_t height;         /* measured height of this frame, bytes */
	uint64_t weight;        /* entries or samples */
	uint64_t entries;       /* training's entries, what the run-time prices
	                         * count (section 5) when weight is samples
	                         * (da_add_node: weight) */
	bool fragment;          /* its parent's frame, run in a fragment of the
	                         * parent's function (section 2): no callsite,
	                         * its parent's height, and its function has no
	                         * paddings and is not cloneable */
	bool tail;              /* entered by its parent's function's tail jump
	                         * (section 2, "Tail calls"): its callsite a
	                         * tail callsite of that function, its parent's
	                         * height */
};

enum da_unit { DA_UNIT_FUNCTIONS, DA_UNIT_CALLSITES };

struct da_problem {
	struct da_func *funcs;
	uint32_t nfuncs, cap_funcs;
	struct da_callsite *callsites;
	uint32_t ncallsites, cap_callsites;
	struct da_node *nodes;
	uint32_t nnodes, cap_nodes;
	enum da_unit unit;
	uint64_t *no_promote;   /* sorted da_pair(callsite, func): a promoted
	                         * call's callee whose frames there may have
	                         * been entered by a tail call (section 2,
	                         * "Dispatch"): its clone takes a dispatch.
	                         * malloc'd, freed with the problem */
	uint32_t nno_promote;
	uint32_t *xcall_funcs;  /* da_callsite.xcall's functions; malloc'd,
	                         * freed with the problem */
	uint32_t nxcall_funcs, cap_xcall_funcs;
};

/* Building.  Each add returns the new index, or DA_NONE when out of memory.
 * da_add_path adds the nodes of one path (frames root first, with the height
 * of each frame), reusing nodes equal in (parent, func, callsite, height), and
 * adds weight to its last node; it returns that node (linear search: meant for
 * tests and small problems). */
struct da_problem *da_problem_new(void);
void da_problem_free(struct da_problem *p);
uint32_t da_add_func(struct da_problem *p, const char *name, uint64_t code_bytes,
		     da_mask pad_mask, bool cloneable);
uint32_t da_add_callsite(struct da_problem *p, uint32_t owner, da_mask wrap_mask,
			 bool redirectable);
uint32_t da_add_node(struct da_problem *p, uint32_t parent, uint32_t func, uint32_t callsite,
		     int64_t height, uint64_t weight);
uint32_t da_add_path(struct da_problem *p, uint32_t nframes, const uint32_t *funcs,
		     const uint32_t *callsites, const int64_t *heights, uint64_t weight);
/* A fragment node (section 2) of function func below parent. */
uint32_t da_add_fragment(struct da_problem *p, uint32_t parent, uint32_t func, uint64_t weight);
/* A tail node (section 2, "Tail calls") of function func below parent,
 * entered through tail callsite `callsite` (da_add_tail_callsite). */
uint32_t da_add_tail(struct da_problem *p, uint32_t parent, uint32_t func, uint32_t callsite,
		     uint64_t weight);
/* A tail callsite: the direct tail jumps of function owner to target. */
uint32_t da_add_tail_callsite(struct da_problem *p, uint32_t owner, uint32_t target);
/* Callsite c, a call of another module, may take a clone of any of the n
 * functions directly through its check (da_callsite.xcall; n at most
 * DA_MAX_XCALL).  0, or -1 when out of memory. */
int da_set_xcall(struct da_problem *p, uint32_t c, const uint32_t *funcs, uint32_t n);
/* Indices in range, parent < own index, masks and owners sane; fragments as
 * section 2 wants them: below a parent that is no fragment, no callsite, the
 * parent's height, a function without paddings or clones; at most one
 * fragment below a node of a function that may be padded; and all fragments
 * below a cloneable function's nodes of one function; tail nodes below a
 * node of their callsite's owner that is no fragment, at its height, their
 * function the callsite's target.  0 or -1. */
int da_problem_check(const struct da_problem *p, char *err, size_t errlen);

/* ------------------------------------------------------------------ plan */

struct da_clone {
	uint32_t func;          /* the function copied */
	uint32_t callsite;      /* the call instruction redirected to it: the
	                         * original one, or its copy in clone `parent` */
	uint32_t pad;           /* the clone's frame padding, bytes */
	uint32_t parent;        /* DA_NONE: the original instruction; else a
	                         * clone of lower index (a chain, section 2) */
};

struct da_clone_wrap {
	uint32_t clone;         /* index into clones */
	uint32_t callsite;      /* a callsite owned by the clone's function, or
	                         * by its fragment (section 2) */
	uint32_t amount;        /* wrap of its copy in the clone, bytes (may be 0) */
};

struct da_plan {
	uint32_t nfuncs, ncallsites;
	uint32_t *pad;          /* [nfuncs] bytes added to each function's frame */
	uint32_t *wrap;         /* [ncallsites] wrap amount of each callsite */
	struct da_clone *clones;
	uint32_t nclones;
	struct da_clone_wrap *clone_wraps;
	uint32_t nclone_wraps;
};

/* An empty plan (all zero) sized for p; 0 or -1 (out of memory). */
int da_plan_init(struct da_plan *plan, const struct da_problem *p);
void da_plan_free(struct da_plan *plan);
/* Refuses (-1, one line) a plan that uses a move the problem forbids: an
 * amount outside a mask, a clone of a non-cloneable function or through a
 * non-redirectable callsite, a clone wrap on a callsite that neither its
 * function nor that function's fragment owns, a duplicate clone or clone
 * wrap, an index out of range. */
int da_plan_check(const struct da_problem *p, const struct da_plan *plan, char *err,
		  size_t errlen);

/* The run-time side of clones by dispatch (section 2, "Dispatch"), which
 * section 3's costs leave out: every entry of a function that takes one
 * runs its tests.  The functions that do (*nfuncs) and the share of the
 * problem's entries (da_node.entries) that their nodes hold (0 to 1): the
 * share of the calls that run a dispatch (tclsh8.6 with
 * libtcl and libc: libc's pthread_getspecific alone takes 7.9%, and its 73
 * tag tests cost 5% of the rewritten program's time). */
double da_dispatch_share(const struct da_problem *p, const struct da_plan *plan, uint32_t *nfuncs);
/* The same, and the heaviest of those functions (at most ntop into top,
 * heaviest first): what a user weighs against --dispatch-weight.  Returns
 * how many functions dispatch; *share as da_dispatch_share's value. */
struct da_dispatch_fn {
	uint32_t func;
	uint32_t tests;             /* its dispatched clones */
	uint32_t tags;              /* of those, the ones that test a tag of
	                             * another module's call (da_tagged): a
	                             * call that cannot point at the clone
	                             * itself (docs/bench-disambig.md, session
	                             * 50: cmake's are most of its dispatches) */
	uint32_t tails;             /* of those, the ones for frames entered by
	                             * a tail call: their call calls another
	                             * function (da_callsite.target), which
	                             * jumps on to func, so it cannot point at
	                             * the clone (tclsh8.6's pthread_getspecific,
	                             * after libtcl's allocator cache lookup:
	                             * docs/bench-disambig.md, session 51) */
	double share;               /* of the problem's entries */
};
uint32_t da_dispatch_top(const struct da_problem *p, const struct da_plan *plan,
			 struct da_dispatch_fn *top, uint32_t ntop, double *share);
/* The other run-time side.  Into *runs the share of the problem's entries
 * (0 to 1) that run a trampoline, entering a frame by a wrapped call or a
 * function padded by an entry wrapper (da_func.pad_runs; a frame that does
 * both counts twice, as section 5 prices it: jq's default plan wrapped
 * calls that 10.5% of its instructions then ran in); into *copies what the
 * trampolines' copies of stack arguments add, in trampolines' worth (bytes
 * copied at each entry / DA_COPY_RUN_BYTES, over the entries); into *binds
 * the share of the entries into frames a clone takes through a bound call
 * (each runs the call's check), and into *xcalls those through a cross-module
 * call's check (da_callsite.xcall).  Section 5 prices wrap_weight * N * (runs
 * + copies + DA_BIND_RUN_SHARE * binds + DA_XCALL_RUN_SHARE * xcalls).  0, or
 * -1 when out of memory. */
int da_run_shares(const struct da_problem *p, const struct da_plan *plan, double *runs,
		  double *copies, double *binds, double *xcalls);

/* Heights and CIDs under a plan, from scratch (section 2): height[i] and
 * inst[i] for every node (inst: the function index, nfuncs + clone index, or
 * nfuncs + nclones + clone index for the fragment of a clone; the same in
 * da_result.inst and da_leftover.inst).  Either output may be NULL.  0, or -1
 * when out of memory. */
int da_predict(const struct da_problem *p, const struct da_plan *plan, int64_t *height,
	       uint32_t *inst);

/* ------------------------------------------------------------------ classification */

enum da_diff { DA_DIFF_NONE, DA_DIFF_FUNCS, DA_DIFF_EDGES, DA_DIFF_ORDER };
enum da_cure { DA_CURE_NONE, DA_CURE_ARR, DA_CURE_WRAP, DA_CURE_CLONE };
enum da_left {
	DA_LEFT_CURABLE,        /* (classification only) a cure exists */
	DA_LEFT_UNSOLVED,       /* a cure exists, the solver did not find it */
	DA_LEFT_BLOCKED,        /* the capability forbids every separating move */
	DA_LEFT_DISABLED,       /* only a mechanism switched off would separate */
	DA_LEFT_IDENTICAL,      /* the same frame sequence */
	DA_LEFT_CROWDED,        /* unsolved, at a function with more paths than
	                         * heights they can reach (section 4) */
	DA_LEFT_N
};
const char *da_diff_name(enum da_diff d);
const char *da_cure_name(enum da_cure c);
const char *da_left_name(enum da_left l);

/* ------------------------------------------------------------------ solving */

/* What da_solve says as each of its searches ends (da_options.on_search). */
struct da_search_done {
	uint32_t search, searches;  /* this search (0 = the seed's own), of how many */
	uint64_t precise_paths;     /* its plan's precise paths (of `paths`) */
	uint32_t best;              /* the search whose plan is the best so far */
	uint64_t best_precise_paths;
	uint64_t paths;
	double seconds;             /* since da_solve began */
};
typedef void (*da_search_fn)(void *ctx, const struct da_search_done *d);

/* What da_solve says as each round of its top-up ends (da_options.on_round). */
struct da_round_done {
	uint32_t round, rounds;     /* this round (1 = the first), of at most how many */
	double price_scale;         /* the prices now, as a share of the options' */
	uint64_t precise_paths;     /* the plan's precise paths now */
	uint64_t reducible_paths;   /* of these many (da_reducible_paths) */
	double seconds;             /* since da_solve began */
};
typedef void (*da_round_fn)(void *ctx, const struct da_round_done *d);

struct da_options {
	uint64_t seed;              /* annealing's random choices */
	double max_stack_growth;    /* cap on growth(r) for every root; <= 0: none */
	double max_recursion_growth;    /* cap on a recursion level's growth
	                             * (section 3), kept by narrowing the masks of
	                             * its frames and calls; <= 0: none */
	bool allow_arr, allow_wrap, allow_clone;
	double hot_weight;          /* weight of hotness against path count */
	double stack_weight;        /* per node per unit of ln(growth) */
	double code_weight;         /* per byte of new code (icpp plan
	                             * --code-per-path N: 1/N) */
	double dispatch_weight;     /* per share of the entries (da_node) of the
	                             * functions that take clones by dispatch
	                             * (they all run its tests), per test's
	                             * depth, in paths per path: section 5 */
	double wrap_weight;         /* per share of the entries that run a
	                             * trampoline (a wrapped call, an entry
	                             * wrapper's padding): section 5 */
	double hot_code_weight;     /* per byte of hot code the clones add
	                             * (icpp plan --hot-code-per-path N: 1/N):
	                             * section 5 */
	double precision_target;    /* share of the reducible paths the top-up
	                             * (section 5) lowers prices to reach; 0:
	                             * the prices as given */
	uint64_t budget;            /* work limit of each search in node moves
	                             * (and annealing draws); 0 = default */
	double time_limit_s;        /* per search; 0 = none (a limit makes
	                             * results depend on the machine; the
	                             * budget does not) */
	bool anneal;                /* run phase 1 */
	uint32_t searches;          /* independent searches, the best plan kept
	                             * (0 = DA_DEFAULT_SEARCHES; at most
	                             * DA_MAX_SEARCHES) */
	uint32_t threads;           /* searches run at once (0 = the CPUs this
	                             * process may use); the plan does not
	                             * depend on it */
	int verbose;                /* progress on stderr */
	da_search_fn on_search;     /* called as each search ends, in the
	                             * searches' order, by the thread that
	                             * called da_solve (NULL: none) */
	da_round_fn on_round;       /* called as each top-up round ends, by
	                             * that thread too (NULL: none) */
	void *on_search_ctx;        /* the first argument of both */
};
/* seed 1, cap 1.25, no recursion cap, ARR and wrapping on, cloning off,
 * hot_weight 0.25, stack_weight DA_DEFAULT_STACK_WEIGHT, code_weight
 * 1/DA_DEFAULT_CODE_PER_PATH,
 * dispatch_weight DA_DEFAULT_DISPATCH_WEIGHT, wrap_weight
 * DA_DEFAULT_WRAP_WEIGHT, precision_target DA_DEFAULT_PRECISION, budget 0 (= 45M node moves per search: about 10 s at 200k paths,
 * 25 s at 1.5M nodes, a few seconds on small maps), anneal on, searches 0
 * (= 4), threads 0 (= the CPUs this process may use). */
void da_options_default(struct da_options *o);
/* The seed of search j of a solve with seed `seed` (section 5): seed itself
 * for j = 0, and for the others seeds that no other seed's searches take
 * (the benchmark runs them one by one with it). */
uint64_t da_search_seed(uint64_t seed, uint32_t j);
/* What classify and the solver may use: options and capability together. */
struct da_classification {
	enum da_diff diff;
	enum da_cure cure;          /* DA_CURE_NONE when none */
	enum da_left left;          /* DA_LEFT_CURABLE when cure != NONE */
	bool arr_possible, wrap_possible, clone_possible;  /* by capability alone */
	uint64_t clone_bytes;       /* the least new code of a clone cure the
	                             * options allow (section 3's costs: a clone
	                             * of the last frame's function, one with its
	                             * copy of a call wrapped, or a whole chain);
	                             * 0 when there is none */
};
/* Classify the collision of nodes a and b (section 4), whatever their heights.
 * Under DA_UNIT_FUNCTIONS two nodes of one class are never a collision:
 * diff NONE, left IDENTICAL.  0, or -1 when out of memory. */
int da_classify(const struct da_problem *p, const struct da_options *o, uint32_t a,
		uint32_t b, struct da_classification *out);

/* Metrics as pm_stats defines them (method.md "Metrics"), for the problem's
 * unit: a path is precise when every CID it occurs at holds it alone; a CID's
 * degree is the number of paths there, a path's degree its worst CID's; the
 * weight of a node counts as precise when its own CID has degree 1. */
#define DA_DEGREE_BUCKETS 11        /* degree 1..10, and >10 in the last */
struct da_metrics {
	uint64_t nodes, paths, cids, unique_cids;
	uint64_t precise_paths;
	uint64_t weight, precise_weight;
	uint64_t degree_paths[DA_DEGREE_BUCKETS];
	uint64_t degree_weight[DA_DEGREE_BUCKETS];
	uint32_t max_degree;
};
/* Metrics of heights/inst (as da_predict gives; inst NULL = node functions). */
int da_metrics_of(const struct da_problem *p, const int64_t *height, const uint32_t *inst,
		  struct da_metrics *m);

struct da_root_cost {
	uint32_t node;              /* the root */
	uint32_t nodes;             /* nodes under it, itself included */
	int64_t old_max, new_max;   /* section 3 */
	double growth;              /* new_max / max(old_max, 16) */
};

/* One ambiguous CID left by the plan, represented by its heaviest path
 * against another one (one entry per other path at the CID). */
struct da_leftover {
	uint32_t inst;              /* CID after the plan */
	int64_t height;
	uint32_t degree;            /* paths at the CID */
	uint32_t a, b;              /* node of the heaviest path, of the other */
	uint64_t weight;            /* weight of the nodes at the CID */
	struct da_classification why;   /* left: UNSOLVED or the irreducible reason */
};

struct da_solve_stats {
	double seconds;
	uint64_t evaluations;       /* moves tried */
	uint64_t accepted;
	uint64_t node_moves;        /* work, what the budget counts */
	uint32_t sweeps;            /* greedy sweeps */
	uint32_t mirrors;           /* copies of the clones below a new clone,
	                             * made with a clone the search kept
	                             * (section 5, c) */
	double objective;           /* the kept plan's objective (section 5) */
	double run_share;           /* the share of the weight that runs a
	                             * trampoline, as the search kept it
	                             * (da_run_shares recomputes it) */
	double copy_share;          /* what their copies of stack arguments add
	                             * (da_run_shares recomputes it) */
	double bind_share;          /* the share of the weight entered through a
	                             * bound call's check (da_run_shares) */
	double xcall_share;         /* ... through a cross-module call's check */
	double hot_bytes;           /* the hot code the plan adds, as the search
	                             * kept it with hot_code_weight > 0 (else 0;
	                             * da_result.hot_code_bytes recomputes it) */
	uint32_t searches;          /* independent searches run */
	uint32_t best_search;       /* the one whose plan was kept (0: the seed's own) */
	bool budget_exhausted;      /* the last phase ran out of work */
	uint32_t phases_cut;        /* phases (section 5) that stopped at their
	                             * share of the budget: more might find more */
	uint32_t topup_rounds;      /* top-up rounds run (section 5) */
	double price_scale;         /* what the prices (run time, code, stack) were
	                             * lowered to: DA_TOPUP_FACTOR^topup_rounds
	                             * (1 for da_evaluate's plan) */
};

struct da_result {
	struct da_plan plan;
	int64_t *height;            /* [nnodes] predicted heights */
	uint32_t *inst;             /* [nnodes] predicted CID functions */
	struct da_metrics before, after;
	struct da_root_cost *roots;
	uint32_t nroots;
	double max_growth, geomean_growth;      /* over roots */
	int64_t max_growth_bytes;
	/* recursion (section 3): the largest per-level growth of a recursion
	 * training saw, its node (DA_NONE: none grows) and its bytes a level */
	double recursion_growth;
	uint32_t recursion_node;
	int64_t recursion_old, recursion_new;
	uint64_t code_bytes;
	int64_t hot_code_bytes;     /* the hot code the plan adds (section 5,
	                             * hot_code_weight; less than 0 where clones
	                             * leave originals colder) */
	uint32_t nwraps;            /* wrapped callsites and copies (not trampolines) */
	struct da_leftover *left;   /* heaviest first */
	uint32_t nleft;
	uint64_t left_by[DA_LEFT_N][4];         /* pairs by reason and da_diff */
	uint64_t irreducible_paths; /* paths of the pairs no plan separates */
	uint64_t crowded_paths;     /* other paths that no plan within the masks
	                             * and the cap makes precise (section 4) */
	uint64_t unsolved_elsewhere;    /* unsolved or crowded pairs at an original
	                             * function whose two frames are entered by
	                             * calls from another module that no clone of
	                             * it may take (section 2, Dispatch) */
	uint64_t unsolved_no_dispatch;  /* of those, at a function that may not
	                             * take a clone by a dispatch at all (not
	                             * cloneable, or its entry cannot test its
	                             * callers: libc's memmove, entered at +3) */
	uint64_t unsolved_priced;   /* unsolved pairs that only cloning cures,
	                             * whose least clone (clone_bytes) costs more
	                             * at code_weight than the paths at their CID
	                             * and their weight (hot_weight) are worth
	                             * (one clone may serve several) */
	uint64_t priced_least_bytes;    /* the least clone_bytes among them */
	struct da_solve_stats stats;
};

/* Solve p.  0 with a result (free with da_result_free), or -1 and one line. */
int da_solve(const struct da_problem *p, const struct da_options *o, struct da_result *r,
	     char *err, size_t errlen);
/* Fill r for a given plan (checked with da_plan_check): heights, metrics,
 * costs, leftovers; the plan is copied.  What icpp plan uses to re-read a plan
 * and what the benchmark uses for the baseline. */
int da_evaluate(const struct da_problem *p, const struct da_options *o,
		const struct da_plan *plan, struct da_result *r, char *err, size_t errlen);
void da_result_free(struct da_result *r);
/* The paths that some plan within the masks and the cap could make precise
 * (section 4): the after paths less the irreducible and crowded ones. */
uint64_t da_reducible_paths(const struct da_result *r);

#endif
