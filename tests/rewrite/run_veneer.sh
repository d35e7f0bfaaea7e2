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
"$icpp" rewrite "$p" --explain -o x.rw 2> /dev/null > explain.txt || fail "icpp rewrite --explain"
grep -q " clone ok .* find_entry$" explain.txt || fail "find_entry may not be cloned: $(grep find_entry explain.txt)"
site=$(awk '$1 == "call" && $4 ~ /^caller_a\+/ && $6 == "find_entry:" { print $2; exit }' explain.txt)
[ -n "$site" ] || fail "no call of find_entry in caller_a: $(grep caller_a explain.txt)"
find_entry=0x$(nm "$p" | awk '$3 == "find_entry" { print $1 }')
build_id=$(readelf -n "$p" | awk '/Build ID/ { print $3 }')
printf 'icpp-plan 1\nunit functions\nmodule 0 %s %s\nclone 0 0 %s 0 %s 0\nend 1\n' \
	"$build_id" "$PWD/$(basename "$p")" "$find_entry" "$site" > veneer.plan
"$icpp" rewrite "$p" -m map.icpp -o rw --plan veneer.plan 2> rewrite.log ||
	fail "rewrite --plan: $(tail -1 rewrite.log)"
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
