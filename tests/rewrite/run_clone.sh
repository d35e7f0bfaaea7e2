#!/bin/bash
# Cloning on the thesis' Figure 5.5 (fx_order.cc): A-B-A-A-D and A-A-B-A-D
# reach D at one height, and only a clone separates them.
#
#   run_clone.sh ICPP GDB WORK PROG [clone|dispatch|cold|chain|chain_dispatch]
#
# In WORK: run PROG and train it (the two D paths must share a height); the
# solver's plan without clones leaves them together; with clones (icpp
# rewrite's default; icpp plan --binary plans the same file) the output is
# the same, also with the argument that
# makes D throw (the exceptions unwind through the clones and run their
# landing pads), icpp verify passes, the two D paths have heights of their
# own, and gdb's backtrace from the throw runs through the clones down to
# main.  GDB "" skips the last check.  With "dispatch" (PROG built with
# FX_INDIRECT: every call of the fixture indirect), every clone must take its
# frames by a dispatch at its function's entry, or by a promoted call's stub.
# With "cold" (PROG built with FX_COLD and gcc's hot/cold partitioning: fx_a
# calls fx_b from its .cold fragment, which jumps back into fx_a), the plan
# is written here, so that it clones the fragment's owner whatever the
# solver would choose: clone 0 of fx_a for its call of itself, the copy of
# its call of fx_d wrapped by 16 (which separates the D paths), and clone 1
# of fx_b for the copy of the fragment's call of fx_b in clone 0 (a chain
# out of a fragment's copy).  The clone copies the fragment: the rewritten
# program must run through the fragment's copy (training it shows the copy
# calling clone 1, inside clone 0's frame), and the exceptions through the
# copies' landing pads, one of them in the fragment's copy.  Training must
# put the fragment's frames under their owner's (fx_a jumps into fx_a.cold
# past its start, a nop before a landing pad, so no hook sees it entered).
# With "chain" (PROG as for clone), the plan is written here too: clone 0 as
# for "cold", and clone 1 of fx_d for the copy of fx_a's call of fx_d inside
# clone 0 (a chain, disambig.h section 2), no wrap: the D path that enters D
# from clone 0 (A-B-A-A-D) runs in clone 1, the other in fx_d, at one height.
# With "chain_dispatch" (PROG as for dispatch: A's one call is indirect, and
# D is reached through it by fx_d2's tail call), the same plan, the calls
# being A's indirect one: clone 0 of fx_a takes it by fx_a's dispatch, and
# clone 1 of fx_d its copy inside clone 0 by fx_d's dispatch on the copy's
# return address; icpp verify checks that the frames land where predicted.
set -u
icpp=$1 gdb=$2 work=$3 prog=$4 mode=${5:-clone}
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
fail=0
name=$(basename "$prog")
cp "$prog" "./$name"

# heights of the paths ending in D, one per line
d_heights() {
	"$icpp" paths "$1" | awk '/> fx_d\(long\)$/ { print $1 }'
}

"./$name" > orig.out 2>&1
"./$name" throw > orig.throw.out 2>&1
"$icpp" train -q -o map -- "./$name" > trained.out 2>&1
if [ "$(d_heights map | sort -u | wc -l)" != 1 ]; then
	echo "FAIL: the fixture's D paths do not share a height:"
	d_heights map
	fail=1
fi
"$icpp" rewrite "./$name" -m map -o noclone.rw --no-clone -q 2> noclone.err || fail=1
if [ "$(d_heights noclone.rw.icpp | sort -u | wc -l)" != 1 ]; then
	echo "FAIL: without clones the D paths were separated: the fixture tests nothing"
	fail=1
fi
# the callsite of fx_a's call of CALLEE (a demangled name, * for an indirect
# call), in fx_a or its .cold fragment (--explain names the code that holds
# it): return address - 1
site_in_fx_a() {
	"$icpp" rewrite "./$name" --explain -o explain.rw 2> /dev/null |
		awk -v callee="$1" '$1 == "call" && $3 == "in" && $4 ~ /^_ZL4fx_aPKcl(\.cold)?\+0x[0-9a-f]+$/ &&
			index($0, "-> " callee ":") { print $2; exit }'
}
# the plan of "cold" mode (docs/plan-format.md)
cold_plan() {
	local fx_a self d
	fx_a=0x$(nm "./$name" | awk '$3 == "_ZL4fx_aPKcl" { print $1 }')
	fx_d=0x$(nm "./$name" | awk '$3 == "_ZL4fx_dl" { print $1 }')
	fx_b=0x$(nm "./$name" | awk '$3 == "_ZL4fx_bPKcl" { print $1 }')
	b=$(site_in_fx_a "fx_b(char const*, long)")
	self=$(site_in_fx_a "fx_a(char const*, long)")
	d=$(site_in_fx_a "fx_d(long)")
	if [ "$mode" = chain_dispatch ]; then
		self=$(site_in_fx_a "*")
		d=$self
	fi
	[ -n "$self" ] && [ -n "$d" ] && { [ "$mode" != cold ] || [ -n "$b" ]; } || return 1
	{
		echo "icpp-plan 1"
		echo "unit functions"
		echo "module 0 $(readelf -n "./$name" | awk '/Build ID/ { print $3 }') $PWD/$name"
		echo "clone 0 0 $fx_a 0 $self 0"
		if [ "$mode" = chain ] || [ "$mode" = chain_dispatch ]; then
			echo "clone 1 0 $fx_d 0 $d 0 in 0"
			echo "end 2"
		else
			echo "clone 1 0 $fx_b 0 $b 0 in 0"
			echo "clone-wrap 0 0 $d 16"
			echo "end 3"
		fi
	} > $mode.plan
}
if [ "$mode" = cold ] || [ "$mode" = chain ] || [ "$mode" = chain_dispatch ]; then
	if ! cold_plan || ! "$icpp" rewrite "./$name" -m map --plan $mode.plan -o clone.rw 2> rewrite.err; then
		echo "FAIL: icpp rewrite with the plan of mode $mode"
		cat rewrite.err $mode.plan
		exit 1
	fi
elif ! "$icpp" rewrite "./$name" -m map -o clone.rw 2> rewrite.err; then
	echo "FAIL: icpp rewrite"
	cat rewrite.err
	exit 1
fi
grep "cloned" rewrite.err
if ! grep -Eq " [1-9][0-9]* functions cloned" rewrite.err; then
	echo "FAIL: the solver's plan has no clone"
	fail=1
fi
if [ "$mode" = chain ] && ! grep -q " 2 functions cloned (0 by dispatch; 1 in chains)" rewrite.err; then
	echo "FAIL: icpp rewrite does not count the chain"
	fail=1
fi
if [ "$mode" = chain_dispatch ] && ! grep -q " 2 functions cloned (2 by dispatch; 1 in chains)" rewrite.err; then
	echo "FAIL: icpp rewrite does not count the dispatched chain"
	fail=1
fi
# (fx_a's and fx_b's indirect calls, and their copies in clones, may be
# promoted: rewriter.h section 1, Promoted calls)
if [ "$mode" = dispatch ] && ! grep -E " [1-9][0-9]* functions cloned" rewrite.err |
	sed -E 's/.* ([0-9]+) functions cloned \(([0-9]+) by dispatch(; [0-9]+ in chains)?(; ([0-9]+) indirect calls promoted)?.*/\1 \2 \5/' |
	awk '{ exit !($1 == $2 + $3) }'; then
	echo "FAIL: not every clone of the indirect fixture is taken by dispatch or a promoted call"
	fail=1
fi
# icpp plan --binary plans what icpp rewrite solves: applied with --plan, the
# same file
if [ "$mode" = cold ] || [ "$mode" = chain ] || [ "$mode" = chain_dispatch ]; then
	:
elif ! "$icpp" plan map --binary "./$name" -o binary.plan > plan.out 2> plan.err ||
   ! grep -q "^clone " binary.plan ||
   ! "$icpp" rewrite "./$name" -m map --plan binary.plan -o planned.rw -q 2>> plan.err ||
   ! cmp -s planned.rw clone.rw; then
	echo "FAIL: icpp plan --binary: no clone, or not the plan icpp rewrite applies:"
	cat plan.err
	grep "^plan:" plan.out
	fail=1
else
	grep "^plan:" plan.out
fi
# the fragment's copy runs: training the rewritten program sees it call
# clone 1 of fx_b (a chain from the copy of the fragment's call), inside the
# copy of fx_a
if [ "$mode" = cold ] && { ! "$icpp" train -q -o clone.map -- ./clone.rw > clone.train.out 2>&1 ||
   ! "$icpp" paths clone.map |
	grep -q "__icpp_clone_0__ZL4fx_aPKcl > __icpp_clone_0__ZL4fx_aPKcl\.cold > __icpp_clone_1__ZL4fx_bPKcl"; }; then
	echo "FAIL: training the rewritten program shows no call of clone 1 from the fragment's copy:"
	"$icpp" paths clone.map | grep fx_
	fail=1
fi
# training puts a fragment's frame under its owner's, which it runs in, also
# when its owner jumps in past its start (a nop before a landing pad there:
# no hook at its start)
if [ "$mode" = cold ] && "$icpp" paths --callsites map | grep -Eq "main\+0x[0-9a-f]+ > fx_a\(char const\*, long\) \[clone \.cold\]"; then
	echo "FAIL: training put the fragment's frame beside its owner's, under main:"
	"$icpp" paths --callsites map | grep fx_
	fail=1
fi
./clone.rw > clone.out 2>&1
./clone.rw throw > clone.throw.out 2>&1
if ! cmp -s orig.out clone.out || ! cmp -s orig.throw.out clone.throw.out; then
	echo "FAIL: the rewritten program's output differs"
	diff orig.out clone.out | head
	diff orig.throw.out clone.throw.out | head
	fail=1
fi
# the chain: a path into clone 1 from clone 0 and one into fx_d, each alone
chain_d=$("$icpp" paths clone.rw.icpp |
	awk '/> __icpp_clone_0__ZL4fx_aPKcl > __icpp_clone_1__ZL4fx_dl$/ { c++ } / > fx_d\(long\)$/ { d++ }
	     END { print c + 0, d + 0 }')
if { [ "$mode" = chain ] || [ "$mode" = chain_dispatch ]; } && [ "$chain_d" != "1 1" ]; then
	echo "FAIL: the chain does not take the D path of clone 0 alone (paths into it, into fx_d: $chain_d):"
	"$icpp" paths clone.rw.icpp | grep "fx_d"
	fail=1
fi
if [ "$(d_heights clone.rw.icpp | sort -u | wc -l)" != "$(d_heights clone.rw.icpp | wc -l)" ]; then
	echo "FAIL: the clone did not separate the D paths:"
	d_heights clone.rw.icpp
	fail=1
fi
"$icpp" verify clone.rw -- > verify.out 2> verify.err
rc=$?
if [ $rc -ne 0 ] || ! grep -q " 0 at another height" verify.err; then
	echo "FAIL: icpp verify clone.rw (exit $rc):"
	head -20 verify.err
	fail=1
else
	grep "call paths observed" verify.err
fi
if [ -n "$gdb" ]; then
	"$gdb" -batch -nx -ex 'set debuginfod enabled off' -ex 'set pagination off' \
		-ex 'break __cxa_throw' -ex 'run throw' -ex bt ./clone.rw < /dev/null > bt.full 2>&1
	if grep -q "Backtrace stopped\|corrupt stack" bt.full || ! grep -q "in main " bt.full ||
	   ! grep -q "__icpp_clone_" bt.full; then
		echo "FAIL: gdb's backtrace from the throw does not run through a clone to main:"
		grep "^#" bt.full
		fail=1
	else
		echo "gdb: backtrace from the throw through $(grep -c '^#' bt.full) frames, clones included"
	fi
fi
exit $fail
