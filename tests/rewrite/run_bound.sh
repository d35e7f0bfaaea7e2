#!/bin/bash
# Bound calls (rewriter.h section 1): a library's calls of its own exported
# functions go through its PLT; a clone takes such a call by a stub that
# checks the GOT slot, without a dispatch at the callee.  fx_bound
# (fx_bound_main.c) runs the library's two functions in both orders; with
# --no-wrap only a clone of the leaf separates them.
#  - icpp rewrite --explain counts the library's bound calls;
#  - rewrite --lib --no-wrap: one clone, no dispatch, the call calls a
#    thunk __icpp_bindto_CLONE (no stub), and the library binds at load
#    time (BIND_NOW); the pair runs with the same output and verifies with
#    every path precise;
#  - an interposed leaf (LD_PRELOAD) is called by the rewritten library as
#    by the original: the thunk jumps to the clone only where the slot
#    holds the library's own leaf;
#  - icpp report places a sample in the thunk in the clone's frame at its
#    entry (t_report_tags, tests/record);
#  - gdb (when installed) unwinds from the clone, which the thunk jumped
#    to, through its caller to main;
#  - the bound call wrapped too: its trampoline checks the slot, and the
#    pair verifies again;
#  - every cloneable function cloned for its first redirectable call, with
#    chains (--everything): the pair runs and verifies at every height;
#  - the library linked with a DT_FLAGS (-z origin) binds at load time by
#    DF_BIND_NOW there, one with a DT_FLAGS_1 only (-z nodelete) by
#    DF_1_NOW, one linked with -z now already did (its .dynamic kept): each
#    verifies;
#  - the library built with -fno-plt calls through GOT slots (`call
#    *slot(%rip)`, 6 bytes): the call becomes a nop and a call of the thunk,
#    whose other way is `jmp *slot`; it verifies, and calls the interposed
#    leaf.
#   run_bound.sh ICPP GDB WORK PROG LIB INTERPOSER T_REPORT_TAGS LIB_FLAGS LIB_FLAGS1 LIB_NOW
#                LIB_NOPLT
#   (GDB may be empty; LIB_FLAGS, LIB_FLAGS1, LIB_NOW and LIB_NOPLT: LIB built so)
set -u
icpp=$1 gdb=$2 work=$3 prog=$4 lib=$5 inter=$6 t_report=$7 lib_flags=$8 lib_flags1=$9 lib_now=${10}
lib_noplt=${11}
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/stub_checks.sh"
rm -rf "$work" && mkdir -p "$work" && cp "$prog" "$lib" "$inter" "$work"/ && cd "$work" || fail "setup"
p=./$(basename "$prog") l=./$(basename "$lib") ln=$(basename "$lib") in=$PWD/$(basename "$inter")

"$p" > orig.out || fail "the program fails"
LD_PRELOAD=$in "$p" > orig-inter.out || fail "the program fails with the interposer"
cmp -s orig.out orig-inter.out && fail "the interposer changes nothing"
"$icpp" train -q -o map.icpp -- "$p" > /dev/null || fail "train"

"$icpp" rewrite --explain "$l" > explain.log 2>&1 || fail "explain: $(tail -1 explain.log)"
grep -qE "call instructions: .* redirectable to a clone \([4-9][0-9]* of them bound calls\)" explain.log ||
	fail "the library's calls of its own functions are not bound: $(grep 'call instructions' explain.log)"

"$icpp" rewrite "$p" -m map.icpp -o rw --lib "$l" --no-wrap > rewrite.log 2>&1 ||
	fail "rewrite: $(tail -1 rewrite.log)"
grep -q "^icpp rewrite: rw.libs/$ln: .* 1 functions cloned (0 by dispatch; 1 through a bound call, bound at load time)" rewrite.log ||
	fail "no clone through a bound call: $(grep 'functions cloned' rewrite.log)"
grep -q "clones by dispatch" rewrite.log && fail "a dispatch: $(grep 'by dispatch' rewrite.log)"
nm "rw.libs/$ln" | grep -q " t __icpp_bindto_" || fail "no bound call's thunk in the library"
nm "rw.libs/$ln" | grep -q " t __icpp_bind_" && fail "a bound call's stub where a thunk would do"
nm "rw.libs/$ln" | grep -q "__icpp_dispatch_" && fail "a dispatch in the library"
readelf -d "$l" | grep -q BIND_NOW && fail "the input binds at load time already"
readelf -d "rw.libs/$ln" | grep -q "(FLAGS) *BIND_NOW" || fail "the output does not bind at load time"
LD_LIBRARY_PATH=rw.libs ./rw > rw.out || fail "the rewritten pair fails"
cmp -s orig.out rw.out || fail "the rewritten pair's output differs"
LD_LIBRARY_PATH=rw.libs "$icpp" verify rw > /dev/null 2> verify.log || fail "verify: $(tail -3 verify.log)"
grep -q " 0 at another height, 0 not predicted" verify.log || fail "$(grep observed verify.log)"
grep -q "precise paths: 100.0% predicted, 100.0% observed" verify.log || fail "$(grep precise verify.log)"

# another module's leaf, interposed: reached as before
LD_PRELOAD=$in LD_LIBRARY_PATH=rw.libs ./rw > rw-inter.out || fail "the rewritten pair fails with the interposer"
cmp -s orig-inter.out rw-inter.out || fail "the rewritten pair does not call the interposed leaf"

"$t_report" "$PWD/rw.libs/$ln" "$PWD" > report.log 2>&1 || fail "t_report_tags: $(tail -3 report.log)"

[ -z "$gdb" ] || gdb_unwinds_through "$gdb" rw.libs ./rw __icpp_clone_0_fx_bound_leaf "fx_bound_[ab] "

# the bound call wrapped too: its trampoline checks the slot
"$icpp" plan map.icpp --binary "$p" --binary "$l" --no-wrap -o bound.plan > plan.log 2>&1 ||
	fail "plan: $(tail -1 plan.log)"
read -r km site <<< "$(awk '$1 == "clone" {print $5, $6}' bound.plan)"
[ -n "$site" ] || fail "the plan has no clone: $(grep clone bound.plan)"
rewrite_wrapped bound.plan "$km" "$site" "rw2.libs/$ln" __icpp_bind
LD_PRELOAD=$in LD_LIBRARY_PATH=rw2.libs ./rw2 > rw2-inter.out && cmp -s orig-inter.out rw2-inter.out ||
	fail "the wrapped pair does not call the interposed leaf"
LD_LIBRARY_PATH=rw2.libs "$icpp" verify rw2 > /dev/null 2> verify2.log || fail "verify (wrapped): $(tail -3 verify2.log)"
grep -q "precise paths: 100.0% predicted, 100.0% observed" verify2.log || fail "$(grep precise verify2.log)"

# every cloneable function cloned, chains through the copies' bound calls
"$icpp" rewrite "$l" -m map.icpp -o all.so --everything > everything.log 2>&1 ||
	fail "rewrite --everything: $(tail -1 everything.log)"
grep -qE "functions cloned \(0 by dispatch; [0-9]+ in chains; [0-9]+ through a bound call" everything.log ||
	fail "--everything: no chain through bound calls: $(grep 'functions cloned' everything.log)"
mkdir -p all && cp all.so "all/$ln" || fail "copy"
LD_LIBRARY_PATH=all "$p" > all.out && cmp -s orig.out all.out || fail "--everything: the output differs"
LD_PRELOAD=$in LD_LIBRARY_PATH=all "$p" > all-inter.out && cmp -s orig-inter.out all-inter.out ||
	fail "--everything: the interposed leaf is not called"
LD_LIBRARY_PATH=all "$icpp" verify all.so --exec "$p" > /dev/null 2> verify-all.log ||
	fail "verify --everything: $(tail -3 verify-all.log)"
grep -q " 0 at another height" verify-all.log || fail "--everything: $(grep observed verify-all.log)"

# the flag the output gets, by the input's .dynamic
for v in flags flags1 now noplt; do
	case $v in
	flags) src=$lib_flags want="(FLAGS) *ORIGIN BIND_NOW" made="1 through a bound call, bound at load time)" ;;
	flags1) src=$lib_flags1 want="(FLAGS_1) *Flags: NOW NODELETE" made="1 through a bound call, bound at load time)" ;;
	now) src=$lib_now want="(FLAGS) *BIND_NOW" made="1 through a bound call)" ;;
	noplt) src=$lib_noplt want="(FLAGS) *BIND_NOW" made="1 through a bound call, bound at load time)" ;;
	esac
	mkdir -p $v && cp "$prog" "$v/" && cp "$src" "$v/$ln" || fail "$v: setup"
	(
		cd $v || exit 1
		"$icpp" train -q -o map.icpp -- "$p" > /dev/null || fail "$v: train"
		"$icpp" rewrite "$p" -m map.icpp -o rw --lib "$l" --no-wrap > rewrite.log 2>&1 ||
			fail "$v: rewrite: $(tail -1 rewrite.log)"
		grep -qF "$made" rewrite.log || fail "$v: $(grep 'functions cloned' rewrite.log)"
		readelf -d "rw.libs/$ln" | grep -q "$want" ||
			fail "$v: $(readelf -d "rw.libs/$ln" | grep -i flags)"
		LD_LIBRARY_PATH=rw.libs "$icpp" verify rw > /dev/null 2> verify.log || fail "$v: verify: $(tail -3 verify.log)"
		grep -q "precise paths: 100.0% predicted, 100.0% observed" verify.log ||
			fail "$v: $(grep precise verify.log)"
		[ $v = noplt ] || exit 0
		objdump -d "$ln" | grep -q "call  *\*-\?0x[0-9a-f]*(%rip)" ||
			fail "noplt: the library does not call its leaf through a GOT slot"
		objdump -d "rw.libs/$ln" | grep -A1 -E "^ *[0-9a-f]+:	90 +	nop" |
			grep -q "call .*<__icpp_bindto_" || fail "noplt: no nop and call of the thunk"
		objdump -d "rw.libs/$ln" | grep -A24 "<__icpp_bindto_.*>:" | grep -q "jmp  *\*-\?0x[0-9a-f]*(%rip)" ||
			fail "noplt: the thunk does not fall back through the slot"
		LD_PRELOAD=$in LD_LIBRARY_PATH=rw.libs ./rw > rw-inter.out && cmp -s ../orig-inter.out rw-inter.out ||
			fail "noplt: the interposed leaf is not called"
	) || exit 1
done
echo ok
