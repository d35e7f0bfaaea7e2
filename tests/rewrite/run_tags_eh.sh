#!/bin/bash
# Tagged and promoted calls from C++ functions with exception tables (rewriter.h
# section 1, Tagged calls): a tagged call's stub returns into its caller's
# frame, so its FDE takes an LSDA of its own that says of the stub what the
# caller's says of the call (rewriter/stub_lsda.c).  fx_tags_eh
# (fx_tags_eh_main.cc) is Figure 5.4 across modules with handlers of two
# types in fx_a, a cleanup in fx_b, and a third type caught in main; the
# library's leaf throws all three.  Promotion stubs take the same LSDAs.  Each check runs the pair (the output
# names the handlers and the destructors' order) and verifies it:
#  - rewrite --lib --no-wrap: a call of the leaf tagged;
#  - a hand-made plan with a clone of the leaf for each of the two calls:
#    both tagged, fx_a's stub with catch clauses (the type table's entries
#    keep their numbers), fx_b's with a cleanup;
#  - a chain: a clone of fx_a for fx_b's call and a clone of the leaf for
#    the copy of fx_a's call inside it, whose stub lands in the clone's copy
#    of fx_a's handlers;
#  - fx_wide's call, after pushing arguments (DW_CFA_GNU_args_size), tagged
#    (a hand-made plan): the stub's row keeps that size for the landing pad;
#  - fx_via's indirect call promoted to a clone (a hand-made plan): the
#    promotion stub's LSDA lands in fx_via's handler and cleanup;
#  - gdb (when installed) unwinds from the leaf's clone through the stub.
#   run_tags_eh.sh ICPP GDB WORK PROG LIB   (GDB may be empty)
set -u
icpp=$1 gdb=$2 work=$3 prog=$4 lib=$5
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/stub_checks.sh"
rm -rf "$work" && mkdir -p "$work" && cp "$prog" "$lib" "$work"/ && cd "$work" || fail "setup"
p=./$(basename "$prog") l=./$(basename "$lib")

"$p" > orig.out || fail "the program fails"
grep -q " -100 " orig.out && grep -q " -200 " orig.out && grep -q " -7 " orig.out ||
	fail "the fixture throws no exception of some type: $(head -3 orig.out)"
"$icpp" train -q -o map.icpp -- "$p" > /dev/null || fail "train"

# run_checked OUT: the pair OUT (+ OUT.libs) prints the original's output
# and verifies with every observed path at its predicted height
run_checked() {
	LD_LIBRARY_PATH=$1.libs ./$1 > $1.out 2> $1.err || fail "$1 fails: $(tail -1 $1.err)"
	cmp -s orig.out $1.out || fail "$1's output differs: $(diff orig.out $1.out | head -4)"
	LD_LIBRARY_PATH=$1.libs "$icpp" verify $1 > /dev/null 2> $1.verify ||
		fail "verify $1: $(tail -3 $1.verify)"
	grep -q " 0 at another height, 0 not predicted" $1.verify || fail "$1: $(grep observed $1.verify)"
}

"$icpp" rewrite "$p" -m map.icpp -o rw --lib "$l" --no-wrap > rewrite.log 2>&1 ||
	fail "rewrite: $(tail -1 rewrite.log)"
grep -q "^icpp rewrite: rw: .*, [1-9][0-9]* calls tagged," rewrite.log ||
	fail "no call of the program tagged: $(grep 'functions cloned' rewrite.log)"
run_checked rw

"$icpp" plan map.icpp --binary "$p" --binary "$l" --no-wrap -o tag.plan > plan.log 2>&1 ||
	fail "plan: $(tail -1 plan.log)"
pm=$(awk -v p="$PWD/${p#./}" '$1 == "module" && $4 == p { print $2 }' tag.plan)
lm=$(awk -v l="$PWD/${l#./}" '$1 == "module" && $4 == l { print $2 }' tag.plan)
pa=$(nm "$p" | awk '$3 == "_Z4fx_aii" { print "0x" $1 }')
pb=$(nm "$p" | awk '$3 == "_Z4fx_bii" { print "0x" $1 }')
leaf=$(nm "$l" | awk '$3 == "_Z10fx_eh_leafi" { print "0x" $1 }')
"$icpp" paths --callsites map.icpp > paths.txt || fail "paths"
a_leaf=$(sed -n 's/.* > fx_a(int, int)+\(0x[0-9a-f]*\) > fx_eh_leaf(int)$/\1/p' paths.txt | head -1)
b_leaf=$(sed -n 's/.* > fx_b(int, int)+\(0x[0-9a-f]*\) > fx_eh_leaf(int)$/\1/p' paths.txt | head -1)
b_a=$(sed -n 's/.* > fx_b(int, int)+\(0x[0-9a-f]*\) > fx_a(int, int)+0x[0-9a-f]* > fx_eh_leaf(int)$/\1/p' paths.txt | head -1)
[ -n "$pm" ] && [ -n "$lm" ] && [ -n "$pa" ] && [ -n "$pb" ] && [ -n "$leaf" ] && [ -n "$a_leaf" ] &&
	[ -n "$b_leaf" ] && [ -n "$b_a" ] || fail "no modules in tag.plan, symbols or calls in the map"
al=$(printf '%#x' $((pa + a_leaf))) bl=$(printf '%#x' $((pb + b_leaf))) ba=$(printf '%#x' $((pb + b_a)))
head_of() { awk '$1 == "clone" || $1 == "end" { exit } $1 != "pad" { print }' tag.plan; }

# both calls of the leaf tagged, each taken by a clone of its own
{ head_of; echo "clone 0 $lm $leaf $pm $al 0"; echo "clone 1 $lm $leaf $pm $bl 0"; echo "end 2"; } > both.plan
"$icpp" rewrite "$p" -m map.icpp -o rwb --lib "$l" --plan both.plan > rwb.log 2>&1 ||
	fail "rewrite --plan (both calls): $(tail -1 rwb.log)"
grep -q "^icpp rewrite: rwb: .* 2 calls tagged," rwb.log || fail "both calls: $(grep 'calls tagged' rwb.log)"
for s in $al $bl; do
	nm rwb | grep -q " t __icpp_tag_${s#0x}$" || fail "no stub for the call at $s"
done
run_checked rwb

# a chain: fx_a's clone for fx_b's call, the leaf's for the copy of fx_a's call in it
{ head_of; echo "clone 0 $pm $pa $pm $ba 0"; echo "clone 1 $lm $leaf $pm $al 0 in 0"; echo "end 2"; } > chain.plan
"$icpp" rewrite "$p" -m map.icpp -o rwc --lib "$l" --plan chain.plan > rwc.log 2>&1 ||
	fail "rewrite --plan (chain): $(tail -1 rwc.log)"
grep -q "^icpp rewrite: rwc: .* 1 functions cloned (0 by dispatch), 1 calls tagged," rwc.log ||
	fail "chain: $(grep 'functions cloned' rwc.log)"
stub=$(nm rwc | sed -n 's/.* t __icpp_tag_\([0-9a-f]*\)$/\1/p')
clone=$(nm -S rwc | awk '$4 == "__icpp_clone_0__Z4fx_aii" { print $1, $2 }')
[ -n "$stub" ] && [ -n "$clone" ] && [ $((0x$stub)) -ge $((0x${clone% *})) ] &&
	[ $((0x$stub)) -lt $((0x${clone% *} + 0x${clone#* })) ] ||
	fail "chain: the stub __icpp_tag_$stub names no call in fx_a's clone ($clone)"
run_checked rwc
"$icpp" paths rwc.icpp | grep -q "fx_b(int, int) > __icpp_clone_0__Z4fx_aii > __icpp_clone_0__Z10fx_eh_leafi$" ||
	fail "chain: the leaf's clone is not predicted below fx_a's"

# fx_wide's call of fx_eh_wide, after three pushes of its arguments, tagged
# for a clone of it: the stub's row repeats the caller's DW_CFA_GNU_args_size
readelf --debug-dump=frames "$p" | grep -q "DW_CFA_GNU_args_size: [1-9]" ||
	fail "the fixture pushes no argument (no DW_CFA_GNU_args_size in its CFI)"
wide=$(nm "$l" | awk '$3 == "_Z10fx_eh_wideiiiiiiiii" { print "0x" $1 }')
pw=$(nm "$p" | awk '$3 == "_Z7fx_widei" { print "0x" $1 }')
w_off=$(sed -n 's/.* > fx_wide(int)+\(0x[0-9a-f]*\) > fx_eh_wide(.*)$/\1/p' paths.txt | head -1)
[ -n "$wide" ] && [ -n "$pw" ] && [ -n "$w_off" ] || fail "no fx_eh_wide, fx_wide or its call"
ws=$(printf '%#x' $((pw + w_off)))
{ head_of; echo "clone 0 $lm $wide $pm $ws 0"; echo "end 1"; } > wide.plan
"$icpp" rewrite "$p" -m map.icpp -o rww --lib "$l" --plan wide.plan > rww.log 2>&1 ||
	fail "rewrite --plan (pushed arguments): $(tail -1 rww.log)"
nm rww | grep -q " t __icpp_tag_${ws#0x}$" || fail "no stub for fx_wide's call at $ws"
run_checked rww

# fx_via's indirect call promoted to a clone of fx_eh_hop: the promotion
# stub's LSDA lands in fx_via's handler and cleanup
vsite=$("$icpp" rewrite "$p" --explain -o x.rw 2> /dev/null |
	awk '$1 == "call" && $4 ~ /^_Z6fx_viai\+/ && / -> \*:/ && /promote ok/ { print $2; exit }')
hop=$(nm "$p" | awk '$3 == "_Z9fx_eh_hopi" { print "0x" $1 }')
[ -n "$vsite" ] && [ -n "$hop" ] || fail "fx_via's indirect call is not promotable"
{ head_of; echo "clone 0 $pm $hop $pm $vsite 0 promote"; echo "end 1"; } > promote.plan
"$icpp" rewrite "$p" -m map.icpp -o rwp --lib "$l" --plan promote.plan > rwp.log 2>&1 ||
	fail "rewrite --plan (promoted): $(tail -1 rwp.log)"
grep -q "^icpp rewrite: rwp: .* 1 functions cloned (0 by dispatch; 1 indirect calls promoted)" rwp.log ||
	fail "promoted: $(grep 'functions cloned' rwp.log)"
nm rwp | grep -q " t __icpp_promote_${vsite#0x}$" || fail "no promotion stub for the call at $vsite"
run_checked rwp

[ -z "$gdb" ] || gdb_unwinds_through "$gdb" rwb.libs ./rwb __icpp_clone_0__Z10fx_eh_leafi __icpp_tag_
echo "ok"
