#!/bin/bash
# Clones of functions with switch tables (rewriter.h section 1, Cloning):
# fx_switch's classify() jumps through gcc's table of offsets relative to
# the table.
#  - icpp rewrite --explain offers the clone;
#  - a plan cloning classify for caller_a's call, the clone padded by 32
#    (the original not): the clone's lea names a copy of the table whose
#    entries land in the clone (a case reached in the original would release
#    the original's frame and return into the wrong place); the output is the
#    original's, and icpp verify finds every path at its predicted height.
#   run_switch.sh ICPP WORK PROG
set -u
icpp=$1 work=$2 prog=$3
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/stub_checks.sh"
setup_trained "$work" "$prog" 100
rewrite_one_clone classify caller_a 32
./rw 100 > rw.out && cmp -s orig.out rw.out || fail "the rewritten program's output"
"$icpp" paths rw.icpp | grep -q "caller_a > __icpp_clone_0_classify > leaf$" ||
	fail "the prediction has no path through the clone: $("$icpp" paths rw.icpp | grep caller_a)"
"$icpp" verify rw -- 100 > /dev/null 2> verify.log && grep -q " 0 at another height, 0 not predicted" verify.log ||
	fail "icpp verify: $(tail -3 verify.log)"
grep "call paths observed" verify.log
echo "ok: the clone of classify jumps through its own table"
