#!/bin/bash
# Veneers (rewriter.h section 1, Cloning): fx_veneer's find_entry leaves by
# two rel8 jumps (fx_veneer_thunk.S, a tail-call thunk as libtcl's); a clone
# of it for caller_a's call, far from their targets, reaches them through
# veneers.
#  - icpp rewrite --explain offers the clone;
#  - a plan cloning find_entry for caller_a's call: two veneers
#    __icpp_veneer_COPY, each a jmp to its branch's target; the output is the
#    original's; the prediction has caller_a's paths through the clone, and
#    icpp verify finds every path at its predicted height;
#  - icpp report places a sample in a veneer in the clone's frame
#    (t_report_tags, tests/record);
#  - gdb (when installed), stopped in a veneer, unwinds through caller_a to
#    main (the veneer's FDE repeats the clone's row at its jump).
#   run_veneer.sh ICPP GDB WORK PROG T_REPORT_TAGS   (GDB may be empty)
set -u
icpp=$1 gdb=$2 work=$3 prog=$4 t_report=$5
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/stub_checks.sh"
setup_trained "$work" "$prog" 100
rewrite_one_clone find_entry caller_a 0
[ "$(nm rw | grep -c " t __icpp_veneer_")" = 2 ] || fail "not two veneers: $(nm rw | grep icpp)"
for v in $(nm rw | awk '$3 ~ /^__icpp_veneer_/ { print $1 }'); do
	objdump -d rw --start-address=0x$v --stop-address=$((0x$v + 5)) |
		grep -qE "^ *[0-9a-f]+:	e9 .*jmp .*<(create_entry|negative)>" ||
		fail "the veneer at 0x$v is no jmp to a target of find_entry"
done
./rw 100 > rw.out && cmp -s orig.out rw.out || fail "the rewritten program's output"
"$icpp" paths rw.icpp | grep -q "caller_a > __icpp_clone_0_find_entry$" ||
	fail "the prediction has no path through the clone: $("$icpp" paths rw.icpp | grep caller_a)"
"$icpp" verify rw -- 100 > /dev/null 2> verify.log && grep -q " 0 at another height, 0 not predicted" verify.log ||
	fail "icpp verify: $(tail -3 verify.log)"
"$t_report" "$PWD/rw" "$PWD" > report.log 2>&1 || fail "t_report_tags: $(tail -3 report.log)"
jmp_veneer=$(nm rw | awk '$3 ~ /^__icpp_veneer_/ { print $3 }' | sort | tail -1)
[ -n "$gdb" ] && gdb_unwinds_through "$gdb" . ./rw "$jmp_veneer" "caller_a "
grep "call paths observed" verify.log
echo "ok: the clone of find_entry leaves through its veneers"
