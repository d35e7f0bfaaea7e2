#!/bin/bash
# Dispatched clones meeting other changes to the same code, on fx_dispatch.S,
# by plans written here (the solver picks these shapes on real programs only):
#  A. one call instruction takes a direct clone of the function it calls
#     (fx_dl_f) and a dispatched clone of the function that one tail-calls
#     (fx_dl_g): the call is patched once, and both clones take their frames;
#  B. fx_dl_g padded in place while its dispatch displaces the instruction
#     that allocates its frame: the padding lands in the displaced copy;
#  C. clones by dispatch of fx_dl_enter, whose displaced entry holds a branch
#     and whose tail call goes through a pointer, and of fx_dl_lock, whose
#     displaced entry is its tail call;
#  D. a clone by dispatch of fx_dl_size, 4 bytes: the jmp at its entry covers
#     the padding after it, and training the rewritten program still hooks
#     it (icpp verify takes every predicted path);
#  E. A on the program stripped: the new symbols of a function without a
#     name (its clones', its dispatch's) name it by its address; with its
#     debug file installed, by the debug file's name, and the output's
#     .symtab names the functions too;
#  F. 32 clones by dispatch of one function (the most it may take), each
#     for its own call: every call enters its clone; a 33rd is refused;
#  G. clones by dispatch of fx_dl_move, which another function enters at +3
#     (glibc's mempcpy into memmove): its entry jumps by an island;
#  H. a tail clone of fx_dl_g: fx_dl_f's tail jump pointed at it (no
#     dispatch), icpp plan --evaluate taking the plan back with and without
#     the binary; a tail clone at an address that is no tail jump refused;
#  I. a tail chain: fx_dl_f cloned for main's call, fx_dl_g for that
#     clone's copy of the tail jump;
#  J. a tail clone of fx_dl_leaf at fx_dl_lock's jump, which fx_dl_lock's
#     dispatch (for a call that never enters it) displaces: the displaced
#     copy jumps to the clone;
#  K. a tail clone of fx_dl_lock at fx_dl_enter's indirect tail jump (jmp
#     *8(%rax)): a promotion stub compares the pointer with fx_dl_lock and
#     jumps to the clone (no dispatch), icpp plan --evaluate takes it back;
#     and as a chain, in a clone of fx_dl_enter (by dispatch), from its copy
#     of the jump; and fx_dl_popj's jmp *%rax, whose stub moves the pop
#     before it (and repeats its CFI rows), which --explain finds.
# Each rewrite must keep the output, take the frames into the clones, and
# pass icpp verify (every observed path at its predicted height).
# icpp plan --evaluate says A's dispatch is for a frame after a tail call.
# And icpp report on A: t_report_dispatch (tests/record) puts samples in
# fx_dl_g's dispatch and checks whose frames they are charged to.
#   run_dispatch_cases.sh ICPP WORK PROG T_REPORT_DISPATCH
set -u
icpp=$1 work=$2 prog=$3 t_report=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cp "$prog" "$work"/ && cd "$work" || fail "setup"
p=./$(basename "$prog")

"$p" > orig.out || fail "the program fails"
"$icpp" train -q -o map -- "$p" > /dev/null || fail "train"

# the plan header for PROG, then the changes given as lines
sym() { nm "$p" | awk -v s="$1" '$3 == s { print "0x" $1 }'; }
site() { printf '%#x' $(($(sym "$1") - 1)); }  # a callsite: its return address - 1
plan() {
	local out=$1
	shift
	{
		echo "icpp-plan 1"
		echo "unit functions"
		echo "module 0 $(readelf -n "$p" | awk '/Build ID/ { print $3 }') $PWD/${p#./}"
		printf '%s\n' "$@"
		echo "end $#"
	} > "$out"
}
# height of the path main > ... ending in FUNCS (a regex) in a pathmap
height() { "$icpp" paths "$1" | awk -v re="main > $2\$" '$0 ~ re { print $1 }' | sort -u; }
# predicted CASE PATH...: CASE's rewrite predicts each path main > ... PATH
predicted() {
	local c=$1 path
	shift
	for path; do
		[ -n "$(height "$c.rw.icpp" "$path")" ] || fail "$c: no path main > $path predicted"
	done
}
# evaluates CASE: icpp plan --evaluate takes CASE's plan back, with the
# binary and without, and says its tail clones take their jumps
evaluates() {
	local how
	for how in "--binary $p" --clone; do
		"$icpp" plan map $how --evaluate "$1.plan" > "$1.eval" 2>&1 ||
			fail "$1: plan --evaluate $how: $(tail -1 "$1.eval")"
		grep -q "% of the entries enter a clone by a tail jump pointed at it" "$1.eval" ||
			fail "$1: plan --evaluate $how does not say the tail jump takes the clone"
	done
}
rewrite() {
	"$icpp" rewrite "$p" -m map --plan "$1.plan" -o "$1.rw" > "$1.log" 2>&1 ||
		fail "$1: rewrite: $(tail -1 "$1.log")"
	grep -q "$2" "$1.log" || fail "$1: not '$2': $(grep 'functions padded' "$1.log")"
	"./$1.rw" > "$1.out" || fail "$1: the rewritten program fails"
	cmp -s orig.out "$1.out" || fail "$1: the output differs"
	"$icpp" verify "$1.rw" -- > /dev/null 2> "$1.verify" ||
		fail "$1: verify: $(tail -2 "$1.verify")"
	grep -q " 0 at another height, 0 not predicted" "$1.verify" ||
		fail "$1: verify: $(head -1 "$1.verify")"
}

f=$(sym fx_dl_f) g=$(sym fx_dl_g)
[ -n "$f" ] && [ -n "$g" ] || fail "no fx_dl_f or fx_dl_g in $p"

# A: main's direct call of fx_dl_f takes clone 0 of fx_dl_f (the call is
# pointed at it) and clone 1 of fx_dl_g (by dispatch: fx_dl_f tail-calls it)
plan a.plan "clone 0 0 $f 0 $(site fx_dl_site_f) 0" "clone 1 0 $g 0 $(site fx_dl_site_f) 0"
rewrite a "2 functions cloned (1 by dispatch)"
predicted a "__icpp_clone_0_fx_dl_f > fx_dl_leaf" "__icpp_clone_1_fx_dl_g > fx_dl_leaf"
"$t_report" "$PWD/a.rw" "$PWD" > a.report 2>&1 || { cat a.report >&2; fail "a: t_report_dispatch"; }
# the plan's report says why fx_dl_g's clone dispatches: main's call calls fx_dl_f
"$icpp" plan map --binary "$p" --evaluate a.plan > a.eval 2>&1 || fail "a: plan --evaluate: $(tail -1 a.eval)"
grep -q "^    the heaviest: fx_dl_g [0-9.]*% (1 test, after a tail call)$" a.eval ||
	fail "a: the dispatch is not said to follow a tail call: $(grep heaviest a.eval)"

# B: fx_dl_g padded by 16 in place, and cloned for main's indirect call (by
# dispatch): the direct path through fx_dl_g to the leaf is 16 bytes deeper,
# the clone's is not
plan b.plan "pad 0 $g 16 fx_dl_g" "clone 0 0 $g 0 $(site fx_dl_site_g) 0"
rewrite b "1 functions padded (0 through entry wrappers), 0 callsites wrapped, 1 functions cloned (1 by dispatch)"
before=$(height map "fx_dl_g > fx_dl_leaf")
[ "$(height b.rw.icpp "fx_dl_g > fx_dl_leaf")" = $((before + 16)) ] ||
	fail "b: fx_dl_g's padding: $before -> $(height b.rw.icpp "fx_dl_g > fx_dl_leaf")"
[ "$(height b.rw.icpp "__icpp_clone_0_fx_dl_g > fx_dl_leaf")" = "$before" ] ||
	fail "b: the clone is padded too"

# C: main's indirect call of fx_dl_enter takes clone 0 of it and clone 1 of
# fx_dl_lock (its pointer's tail call), both by dispatch
e=$(sym fx_dl_enter) l=$(sym fx_dl_lock)
plan c.plan "clone 0 0 $e 0 $(site fx_dl_site_e) 0" "clone 1 0 $l 0 $(site fx_dl_site_e) 0"
rewrite c "2 functions cloned (2 by dispatch)"
predicted c "__icpp_clone_0_fx_dl_enter" "__icpp_clone_1_fx_dl_lock"

# D: main's indirect call of fx_dl_size takes clone 0 of it, by dispatch
z=$(sym fx_dl_size)
plan d.plan "clone 0 0 $z 0 $(site fx_dl_site_s) 0"
rewrite d "1 functions cloned (1 by dispatch)"
predicted d "__icpp_clone_0_fx_dl_size" "fx_dl_size"
grep -q " 0 predicted paths not taken" d.verify || fail "d: verify: $(head -1 d.verify)"
# G: glibc's memmove shape: fx_dl_move, which fx_dl_pcpy enters at +3 and
# fx_dl_chk falls into through the padding before it, takes clone 0 for
# main's indirect call and clone 1 for main's call of fx_dl_chk, both by a
# dispatch that its entry's jmp rel8 reaches through an island in that
# padding; training the rewritten program hooks it by an island of its
# own before the rewriter's (verify); the output shows that fx_dl_pcpy
# still runs its code from +3 on
m=$(sym fx_dl_move)
"$icpp" rewrite --explain "$p" > g.explain 2>&1 || fail "g: explain"
grep -q "dispatch by an island) fx_dl_move\$" g.explain ||
	fail "g: $(grep ' fx_dl_move$' g.explain)"
plan g.plan "clone 0 0 $m 0 $(site fx_dl_site_m) 0" "clone 1 0 $m 0 $(site fx_dl_site_c) 0"
rewrite g "2 functions cloned (2 by dispatch)"
objdump -d --start-address=$m --stop-address=$((m + 2)) g.rw | grep -q "jmp " ||
	fail "g: fx_dl_move's entry is no jmp rel8"
predicted g "__icpp_clone_0_fx_dl_move" "__icpp_clone_1_fx_dl_move"
"$icpp" train -q -o g.obs -- ./g.rw > /dev/null || fail "g: train the rewritten program"
"$icpp" paths --callsites g.obs > g.paths || fail "g: paths"
main=$(sym main)
for want in "m __icpp_clone_0_fx_dl_move fx_dl_move" "c __icpp_clone_1_fx_dl_move fx_dl_chk fx_dl_move"; do
	off=$(printf '%#x' $(($(site fx_dl_site_${want%% *}) - main)))
	got=$(sed -n "s/.* > main+$off > \([^ ]*\)\$/\1/p" g.paths | LC_ALL=C sort | tr '\n' ' ')
	[ "${got% }" = "${want#* }" ] || fail "g: the call at main+$off enters '$got', not ${want#* }"
done

# F: 32 clones by dispatch of fx_dl_leaf, one for each of fx_dl_many's
# indirect calls but the last: the dispatch searches their return
# addresses, and training the rewritten program must see each call enter
# its own clone (after fx_dl_leaf's hooked entry, which verify's rw_collapse
# drops), the 33rd the original alone (run_dispatch_many.sh: 128, the most)
leaf=$(sym fx_dl_leaf) many=$(sym fx_dl_many)
clones=()
for k in $(seq 1 33); do
	clones+=("clone $((k - 1)) 0 $leaf 0 $(site fx_dl_many_$k) 0")
done
plan f.plan "${clones[@]:0:32}"
rewrite f "32 functions cloned (32 by dispatch)"
"$icpp" train -q -o f.obs -- ./f.rw > /dev/null || fail "f: train the rewritten program"
"$icpp" paths --callsites f.obs > f.paths || fail "f: paths"
for k in $(seq 1 33); do
	off=$(printf '%#x' $(($(site fx_dl_many_$k) - many)))
	want="fx_dl_leaf __icpp_clone_$((k - 1))_fx_dl_leaf"
	[ "$k" = 33 ] && want=fx_dl_leaf
	got=$(sed -n "s/.* > fx_dl_many+$off > \([^ ]*\)\$/\1/p" f.paths | sort -r | tr '\n' ' ')
	got=${got% }
	[ "$got" = "$want" ] || fail "f: the call at fx_dl_many+$off enters '$got', not $want"
done

# E: plan A on the program stripped: its new symbols name the functions
# without a name by their address (as the prediction does)
strip -o stripped "$p" || fail "strip"
"$icpp" rewrite ./stripped -m map --plan a.plan -o e.rw > e.log 2>&1 || fail "e: rewrite: $(tail -1 e.log)"
"./e.rw" > e.out && cmp -s orig.out e.out || fail "e: the output differs"
fa=$(printf '%#x' $f) ga=$(printf '%#x' $g)
for s in __icpp_clone_0_$fa __icpp_clone_1_$ga __icpp_dispatch_$ga; do
	nm e.rw | grep -q " $s\$" || fail "e: no symbol $s: $(nm e.rw | grep __icpp_ | tr '\n' ' ')"
done
# E2: the same with the stripped program's debug file where a -dbgsym
# package puts it: the output's own symbols name its functions by it (their
# clones' and dispatch's too), since the output's new build-id finds none
objcopy --only-keep-debug "$p" prog.debug || fail "objcopy"
id=$(readelf -n "$p" | sed -n 's/.*Build ID: *//p')
mkdir -p "dbg/.build-id/${id:0:2}" && cp prog.debug "dbg/.build-id/${id:0:2}/${id:2}.debug"
ICPP_DEBUGINFO_PATH="$PWD/dbg" "$icpp" rewrite ./stripped -m map --plan a.plan -o e2.rw \
	> e2.log 2>&1 || fail "e2: rewrite: $(tail -1 e2.log)"
"./e2.rw" > e2.out && cmp -s orig.out e2.out || fail "e2: the output differs"
for s in fx_dl_f fx_dl_g __icpp_clone_0_fx_dl_f __icpp_clone_1_fx_dl_g __icpp_dispatch_fx_dl_g; do
	nm e2.rw | grep -q " $s\$" || fail "e2: no symbol $s: $(nm e2.rw | tr '\n' ' ')"
done
for s in fx_dl_f fx_dl_g; do
	[ "$(nm e2.rw | awk -v s=$s '$3 == s { print $1 }')" = "$(nm "$p" | awk -v s=$s '$3 == s { print $1 }')" ] ||
		fail "e2: $s is not where the input has it"
done
# H: fx_dl_f's tail jump takes clone 0 of fx_dl_g: the frame after it is
# the clone's, without a dispatch; main's indirect call of fx_dl_g is not
tj=$(sym fx_dl_tail_g)
plan h.plan "clone 0 0 $g 0 $tj 0 tail"
rewrite h "1 functions cloned (0 by dispatch; 1 after tail jumps)"
predicted h "__icpp_clone_0_fx_dl_g > fx_dl_leaf" "fx_dl_g > fx_dl_leaf"
nm h.rw | grep -q " __icpp_dispatch_" && fail "h: a dispatch was made"
evaluates h
plan h2.plan "clone 0 0 $g 0 $(sym fx_dl_f) 0 tail"
"$icpp" rewrite "$p" -m map --plan h2.plan -o h2.rw > h2.log 2>&1 &&
	fail "h2: a tail clone at fx_dl_f's entry was taken"
grep -q "is not the first of its function's tail jumps" h2.log || fail "h2: $(tail -1 h2.log)"

# I: main's call of fx_dl_f takes clone 0 of it, and that clone's copy of
# the tail jump clone 1 of fx_dl_g (a chain): both without a dispatch
plan i.plan "clone 0 0 $f 0 $(site fx_dl_site_f) 0" "clone 1 0 $g 0 $tj 0 in 0 tail"
rewrite i "2 functions cloned (0 by dispatch; 1 in chains; 1 after tail jumps)"
predicted i "__icpp_clone_0_fx_dl_f > fx_dl_leaf" "__icpp_clone_1_fx_dl_g > fx_dl_leaf"

# J: fx_dl_lock dispatches (a clone for main's call of fx_dl_g, which
# never enters it), so its jump to the leaf runs as the displaced copy in
# its entry code, which the leaf's tail clone must take along
leaf=$(sym fx_dl_leaf)
plan j.plan "clone 0 0 $l 0 $(site fx_dl_site_g) 0" "clone 1 0 $leaf 0 $(printf '%#x' $((l + 4))) 0 tail"
rewrite j "2 functions cloned (1 by dispatch; 1 after tail jumps)"
predicted j "__icpp_clone_1_fx_dl_leaf"

# K: fx_dl_enter's jump through its method table takes clone 0 of
# fx_dl_lock by a stub that compares the pointer (no dispatch); then as a
# chain, the copy of the jump in fx_dl_enter's clone for main's indirect call
tl=$(sym fx_dl_tail_lock)
plan k.plan "clone 0 0 $l 0 $tl 0 tail"
rewrite k "1 functions cloned (0 by dispatch; 1 after tail jumps; 1 indirect tail jumps promoted)"
predicted k "__icpp_clone_0_fx_dl_lock"
nm k.rw | grep -q " __icpp_promote_" || fail "k: no promotion stub for the jump at $tl"
nm k.rw | grep -q " __icpp_dispatch_" && fail "k: a dispatch was made"
evaluates k
plan k2.plan "clone 0 0 $e 0 $(site fx_dl_site_e) 0" "clone 1 0 $l 0 $tl 0 in 0 tail"
rewrite k2 "2 functions cloned (1 by dispatch; 1 in chains; 1 after tail jumps; 1 indirect tail jumps promoted)"
predicted k2 "__icpp_clone_0_fx_dl_enter" "__icpp_clone_1_fx_dl_lock"
tp=$(sym fx_dl_tail_popj)
"$icpp" rewrite "$p" -m map --explain -o k3.rw 2> /dev/null |
	grep -q "1 indirect tail jumps promotable fx_dl_popj$" ||
	fail "k3: --explain: fx_dl_popj's jump through %rax after its pop is not promotable"
plan k3.plan "clone 0 0 $l 0 $tp 0 tail"
rewrite k3 "1 functions cloned (0 by dispatch; 1 after tail jumps; 1 indirect tail jumps promoted)"
predicted k3 "__icpp_clone_0_fx_dl_lock"
evaluates k3

echo "ok: a direct and a dispatched clone at one callsite; a padding in the displaced entry;" \
	"dispatch of a branch and a tail call at the entry, a tail call through a pointer," \
	"of a function shorter than the jmp; symbols of functions without a name;" \
	"32 clones by dispatch of one function; a dispatch by an island; a tail clone, a" \
	"tail chain, a tail jump in a displaced entry, indirect tail jumps by their stubs"
