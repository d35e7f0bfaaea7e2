#!/bin/bash
# Callee-entry wrappers on fx_entry.S + fx_entry_main.cc: main -> X -> D,
# main -> Y -> D and main -> Z -> D reach D at one height, and X, Y and Z
# have no allocation to grow, so only an entry wrapper pads them (Z's
# displaces its call of D).
#
#   run_entry.sh ICPP GDB WORK PROG T_REPORT_ENTRY
#
# In WORK: run PROG and train it (the three D paths must share a height); the
# solver's plan without wrapping and cloning (padding only) must use entry
# wrappers and separate them; that plan, --everything=32,0,0 and --everything
# (Z's displaced call wrapped as well) give the same output, also with the
# argument that makes D throw (the exceptions unwind through the wrappers),
# icpp verify passes (every path at its predicted height: X, Y and Z
# themselves W deeper); X, which makes a tail call, takes a wrapper only
# where training did not see that call (`tail`: not); gdb's backtrace from
# the throw
# runs through the wrapper down to main.  GDB "" skips that check.  Last,
# T_REPORT_ENTRY (tests/record) checks icpp report's charge of samples in
# the --everything binary's wrapper of X.
set -u
icpp=$1 gdb=$2 work=$3 prog=$4 t_report=$5
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
fail=0
name=$(basename "$prog")
cp "$prog" "./$name"

# heights of the paths ending in D, one per line
d_heights() {
	"$icpp" paths "$1" | awk '/> fx_entry_d$/ { print $1 }'
}

"./$name" > orig.out 2>&1
"./$name" throw > orig.throw.out 2>&1
"$icpp" train -q -o map -- "./$name" > trained.out 2>&1
if [ "$(d_heights map | wc -l)" != 3 ] || [ "$(d_heights map | sort -u | wc -l)" != 1 ]; then
	echo "FAIL: the fixture's three D paths do not share a height:"
	d_heights map
	fail=1
fi
for how in solved everything full; do
	opts="--no-wrap --no-clone"
	[ $how = everything ] && opts=--everything=32,0,0
	[ $how = full ] && opts=--everything      # wrappers and clones too
	if ! "$icpp" rewrite "./$name" -m map -o $how.rw $opts 2> rewrite.$how.err; then
		echo "FAIL: icpp rewrite $opts"
		cat rewrite.$how.err
		exit 1
	fi
	grep "functions padded" rewrite.$how.err
	if ! grep -Eq "\(([1-9][0-9]*) through entry wrappers\)" rewrite.$how.err; then
		echo "FAIL: $how: no function padded through an entry wrapper"
		fail=1
	fi
	./$how.rw > $how.out 2>&1
	./$how.rw throw > $how.throw.out 2>&1
	if ! cmp -s orig.out $how.out || ! cmp -s orig.throw.out $how.throw.out; then
		echo "FAIL: $how: the rewritten program's output differs"
		diff orig.out $how.out | head
		diff orig.throw.out $how.throw.out | head
		fail=1
	fi
	"$icpp" verify $how.rw -- > verify.$how.out 2> verify.$how.err
	rc=$?
	if [ $rc -ne 0 ] || ! grep -q " 0 at another height" verify.$how.err; then
		echo "FAIL: icpp verify $how.rw (exit $rc):"
		head -20 verify.$how.err
		fail=1
	else
		grep "call paths observed" verify.$how.err
	fi
done
# X makes a tail call, which training did not see taken: it takes a wrapper
if ! nm everything.rw | grep -q " __icpp_entry_fx_entry_x$"; then
	echo "FAIL: --everything gave X (a tail call training did not see) no entry wrapper"
	fail=1
fi
# trained where X's tail call is taken (the map has D's frame beside X's):
# X takes no wrapper, which would move that frame, Y and Z do
"./$name" tail > orig.tail.out 2>&1
"$icpp" train -q -o map.tail -- "./$name" tail > /dev/null 2>&1
if ! "$icpp" rewrite "./$name" -m map.tail -o tail.rw --everything=32,0,0 2> rewrite.tail.err; then
	echo "FAIL: icpp rewrite -m map.tail --everything=32,0,0"
	cat rewrite.tail.err
	exit 1
fi
if nm tail.rw | grep -q " __icpp_entry_fx_entry_x$" || ! nm tail.rw | grep -q " __icpp_entry_fx_entry_y$"; then
	echo "FAIL: trained with X's tail call taken, X has an entry wrapper or Y none"
	nm tail.rw | grep __icpp_entry_
	fail=1
fi
./tail.rw tail > tail.out 2>&1
"$icpp" verify tail.rw -- tail > /dev/null 2> verify.tail.err
if ! cmp -s orig.tail.out tail.out || ! grep -q " 0 at another height" verify.tail.err; then
	echo "FAIL: tail.rw: another output or height"
	tail -3 verify.tail.err
	fail=1
fi
if ! nm everything.rw | grep -q " __icpp_entry_fx_entry_z$"; then
	echo "FAIL: --everything gave Z (its call displaced) no entry wrapper"
	fail=1
fi
# Z's displaced call is wrapped too: its copy jumps to the call's trampoline
if ! objdump -d full.rw | awk '/<__icpp_entry_fx_entry_z>:/,/^$/' | grep -q "jmp .*<__icpp_wrap_"; then
	echo "FAIL: --everything: the copy of Z's displaced call does not go through its wrapper"
	objdump -d full.rw | awk '/<__icpp_entry_fx_entry_z>:/,/^$/' | grep -v int3
	fail=1
fi
if [ "$(d_heights solved.rw.icpp | sort -u | wc -l)" != 3 ]; then
	echo "FAIL: the entry wrappers did not separate the D paths:"
	d_heights solved.rw.icpp
	fail=1
fi
if ! "$t_report" "$PWD/everything.rw" "$PWD" > report.out 2>&1; then
	echo "FAIL: t_report_entry:"
	cat report.out
	fail=1
fi
if [ -n "$gdb" ]; then
	"$gdb" -batch -nx -ex 'set debuginfod enabled off' -ex 'set pagination off' \
		-ex 'break __cxa_throw' -ex 'run throw' -ex bt ./everything.rw < /dev/null > bt.full 2>&1
	if grep -q "Backtrace stopped\|corrupt stack" bt.full || ! grep -q "in main " bt.full ||
	   ! grep -q "__icpp_entry_fx_entry_" bt.full || ! grep -q " fx_entry_[xy] " bt.full; then
		echo "FAIL: gdb's backtrace from the throw does not run through an entry wrapper to main:"
		grep "^#" bt.full
		fail=1
	else
		echo "gdb: backtrace from the throw through $(grep -c '^#' bt.full) frames, entry wrappers included"
	fi
fi
exit $fail
