#!/bin/bash
# Promoted calls (rewriter.h section 1): an indirect call takes a clone by a
# stub that compares its operand with the clone's function, without a
# dispatch at the callee.  fx_promote's apply() calls add() and mul()
# through a pointer, moving an argument first; pass_on() (assembly) after
# loading its stack argument; interp() among its computed gotos.
#  - icpp rewrite --explain finds the three calls promotable (interp's
#    jumps go only to the labels its data names, none among the
#    instructions its call's stub moves);
#  - a plan cloning add() for apply's, pass_on's and interp's calls,
#    promoted, and padding pass_on by 32 (its load of
#    the stack argument, which the stub moves, is edited): one stub
#    __icpp_promote_SITE each, no dispatch; the output is the original's
#    (the stub loads the argument from where the padding moved it); the
#    rewritten program's paths run add's clones (and mul, as before) and
#    verify at every height;
#  - icpp report places a sample in the stub in apply's frame, at its
#    height (t_report_tags, tests/record; its hand-made samples need an
#    rsp-based CFA: the no-fp build only);
#  - gdb (when installed), stopped in leaf() under the clone, unwinds
#    through the stub (it repeats apply's CFI row at the call) to main;
#  - the same plan without `promote`: add's dispatch takes the call, and it
#    verifies;
#  - a plan that promotes a direct call is refused, and writes nothing.
#   run_promote.sh ICPP GDB WORK PROG T_REPORT_TAGS   (GDB, T_REPORT_TAGS may be empty)
set -u
icpp=$1 gdb=$2 work=$3 prog=$4 t_report=${5:-}
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/stub_checks.sh"
setup_trained "$work" "$prog" 100
site=$("$icpp" rewrite "$p" --explain -o x.rw 2> /dev/null |
	awk '$1 == "call" && $4 ~ /^apply\+/ && / -> \*:/ && /promote ok/ { print $2; exit }')
[ -n "$site" ] || fail "apply's indirect call is not promotable: $("$icpp" rewrite "$p" --explain -o x.rw 2> /dev/null | grep apply)"
psite=$("$icpp" rewrite "$p" --explain -o x.rw 2> /dev/null |
	awk '$1 == "call" && $4 ~ /^pass_on\+/ && / -> \*:/ && /promote ok/ { print $2; exit }')
[ -n "$psite" ] || fail "pass_on's indirect call is not promotable"
isite=$("$icpp" rewrite "$p" --explain -o x.rw 2> /dev/null |
	awk '$1 == "call" && $4 ~ /^interp\+/ && / -> \*:/ && /promote ok/ { print $2; exit }')
[ -n "$isite" ] || fail "interp's indirect call, among its computed gotos, is not promotable"
nclones=3
add=0x$(nm "$p" | awk '$3 == "add" { print $1 }')
apply=0x$(nm "$p" | awk '$3 == "apply" { print $1 }')
pass_on=0x$(nm "$p" | awk '$3 == "pass_on" { print $1 }')
build_id=$(readelf -n "$p" | awk '/Build ID/ { print $3 }')
plan() {   # plan FILE [promote]
	{
		printf 'icpp-plan 1\nunit functions\nmodule 0 %s %s\n' "$build_id" "$PWD/$(basename "$p")"
		printf 'pad 0 %s 32 pass_on\n' "$pass_on"
		printf 'clone 0 0 %s 0 %s 0%s\n' "$add" "$site" "${2:+ promote}"
		printf 'clone 1 0 %s 0 %s 0%s\n' "$add" "$psite" "${2:+ promote}"
		printf 'clone 2 0 %s 0 %s 0%s\n' "$add" "$isite" "${2:+ promote}"
		echo "end $((nclones + 1))"
	} > "$1"
}
plan promote.plan promote
"$icpp" rewrite "$p" -m map.icpp -o rw --plan promote.plan 2> rewrite.log ||
	fail "rewrite --plan (promoted): $(tail -1 rewrite.log)"
grep -q "$nclones functions cloned (0 by dispatch; $nclones indirect calls promoted)" rewrite.log ||
	fail "icpp rewrite does not count the promoted call: $(grep cloned rewrite.log)"
nm rw | grep -q " t __icpp_promote_${site#0x}$" || fail "no promotion stub for the call at $site"
nm rw | grep -q " t __icpp_promote_${psite#0x}$" || fail "no promotion stub for pass_on's call at $psite"
nm rw | grep -q " t __icpp_promote_${isite#0x}$" ||
	fail "no promotion stub for interp's call at $isite"
nm rw | grep -q "__icpp_dispatch_" && fail "a dispatch beside the promotion stub"
./rw 100 > rw.out && cmp -s orig.out rw.out || fail "the rewritten program's output"
"$icpp" paths rw.icpp | grep -q "apply > __icpp_clone_0_add > leaf$" &&
	"$icpp" paths rw.icpp | grep -q "apply > mul > leaf$" ||
	fail "the prediction has no path through add's clone beside mul: $("$icpp" paths rw.icpp | grep apply)"
"$icpp" paths rw.icpp | grep -q "pass_on > __icpp_clone_1_add > leaf$" ||
	fail "the prediction has no path through add's clone under pass_on: $("$icpp" paths rw.icpp | grep pass_on)"
"$icpp" paths rw.icpp | grep -q "interp > __icpp_clone_2_add > leaf$" ||
	fail "the prediction has no path through add's clone under interp: $("$icpp" paths rw.icpp | grep interp)"
"$icpp" verify rw -- 100 > /dev/null 2> verify.log && grep -q " 0 at another height" verify.log ||
	fail "icpp verify (promoted): $(tail -3 verify.log)"
[ -z "$t_report" ] || "$t_report" "$PWD/rw" "$PWD" > report.log 2>&1 ||
	fail "t_report_tags: $(tail -3 report.log)"
[ -n "$gdb" ] && gdb_unwinds_through "$gdb" . ./rw leaf "__icpp_promote_${site#0x} "
plan dispatch.plan
"$icpp" rewrite "$p" -m map.icpp -o rwd --plan dispatch.plan 2> rewrite_d.log ||
	fail "rewrite --plan (dispatched): $(tail -1 rewrite_d.log)"
grep -q "$nclones functions cloned ($nclones by dispatch)" rewrite_d.log ||
	fail "without promote the clone takes no dispatch: $(grep cloned rewrite_d.log)"
./rwd 100 > rwd.out && cmp -s orig.out rwd.out || fail "the dispatched program's output"
"$icpp" verify rwd -- 100 > /dev/null 2> verify_d.log && grep -q " 0 at another height" verify_d.log ||
	fail "icpp verify (dispatched): $(tail -3 verify_d.log)"
direct=$("$icpp" rewrite "$p" --explain -o x.rw 2> /dev/null |
	awk '$1 == "call" && $4 ~ /^main\+/ && / -> apply:/ { print $2; exit }')
printf 'icpp-plan 1\nunit functions\nmodule 0 %s %s\nclone 0 0 %s 0 %s 0 promote\nend 1\n' \
	"$build_id" "$PWD/$(basename "$p")" "$apply" "$direct" > bad.plan
"$icpp" rewrite "$p" -m map.icpp -o bad.rw --plan bad.plan 2> bad.log &&
	fail "a plan promoting the direct call at $direct was applied"
grep -q "no indirect call that can be promoted" bad.log || fail "the refusal says: $(cat bad.log)"
[ -e bad.rw ] && fail "a refused plan left an output"
grep "call paths observed" verify.log
echo "ok: the call at $site calls add's clone by its promotion stub"
