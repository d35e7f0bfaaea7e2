#!/bin/bash
# Driver of the rewrite tests on the training test programs
# (tests/rewrite/CMakeLists.txt).
#
#   run_rewrite.sh ICPP GTCHECK GDB WORK BREAK PROG
#
# In WORK: run PROG; train it; then
#  1. --everything=32,16,1: pad every function, wrap every callsite and clone
#     every function (for one of its calls) the analysis allows (and
#     training saw): same stdout and exit status, also under valgrind's
#     memcheck, and icpp verify passes (every observed path at its predicted
#     height);
#  2. --everything=32,0,0 and 112,0,0 (padding only; 112 beyond the room of
#     imm8 allocations, by entry wrappers): the program's own ground truth
#     (gt.h: CFA and return address of every test-function frame) against the
#     predicted pathmap with gtcheck -- heights checked without icpp train;
#  3. the solver's plan (icpp rewrite without a plan, on a terminal: the
#     searches' progress): same output, verify;
#  4. gdb: a backtrace from BREAK in the rewritten program shows the same
#     frames of the program itself (its source files, and clones of its
#     functions) as in the original,
#     down to main, and gdb does not stop early.  (Library frames may differ:
#     gdb rebuilds tail-call frames from DWARF call-site data, which a
#     trampoline between caller and callee does not have.)
# BREAK "-" skips 4; GDB "" skips it too.
set -u
icpp=$1 gtcheck=$2 gdb=$3 work=$4 brk=$5 prog=$6
rm -rf "$work" && mkdir -p "$work" || exit 1
cd "$work" || exit 1
fail=0
name=$(basename "$prog")
dir=$(dirname "$prog")
# t_procs finds its plugin and t_exec beside itself
for f in "$dir"/t_plug-*.so "$dir"/t_exec-*; do
	[ -e "$f" ] && ln -sf "$f" .
done

# run NAME CMD...: stdout, stderr and exit status in NAME.{out,err,rc}
run() {
	local n=$1
	shift
	"$@" > "$n.out" 2> "$n.err"
	echo $? > "$n.rc"
}

same() {
	if ! cmp -s orig.out "$1.out" || ! cmp -s orig.rc "$1.rc"; then
		echo "FAIL: $1: stdout or exit status differ from the original"
		diff orig.out "$1.out" | head -10
		echo "exit status $(cat orig.rc) vs $(cat "$1.rc")"
		head -20 "$1.err"
		fail=1
	fi
}

verify() {
	local out=$1 strict=$2
	"$icpp" verify $strict "$out" -- > "verify.$out.out" 2> "verify.$out.err"
	local rc=$?
	if [ $rc -ne 0 ] || ! grep -q " 0 at another height" "verify.$out.err"; then
		echo "FAIL: icpp verify $out (exit $rc):"
		head -40 "verify.$out.err"
		fail=1
	else
		grep "call paths observed" "verify.$out.err"
	fi
}

run orig "$prog"
cp "$prog" "./$name"
run trained "$icpp" train -q -o map -- "./$name"
if ! cmp -s orig.out trained.out; then
	echo "FAIL: training changed the output"
	fail=1
fi

# single-threaded programs must take exactly the trained paths
strict=
case $name in t_threads*|t_procs*|t_fork*) strict=--allow-new ;; esac

# 1. everything the analysis allows
if "$icpp" rewrite "./$name" -m map -o all.rw --everything=32,16,1 2> rewrite.all.err; then
	grep -E "padded|wrapped" rewrite.all.err
	run all ./all.rw
	same all
	verify all.rw "$strict"
	# memcheck: a trampoline that copies too few stack arguments leaves its
	# callee reading uninitialised stack (docs/bench-rewrite.md, session 25)
	run allvg valgrind -q --error-exitcode=99 ./all.rw
	same allvg
else
	echo "FAIL: icpp rewrite --everything"
	cat rewrite.all.err
	fail=1
fi

# 2. padding only, against the program's own ground truth; by 112 bytes,
#    beyond the room of most imm8 allocations, through their functions'
#    entry wrappers (rw_func.pad_in_place)
for amount in 32 112; do
	pad=pad$amount
	if "$icpp" rewrite "./$name" -m map -o $pad.rw --everything=$amount,0,0 2> rewrite.$pad.err; then
		mkdir -p gt.$pad
		ICPP_GT="$PWD/gt.$pad" ./$pad.rw > $pad.out 2> $pad.err
		echo $? > $pad.rc
		same $pad
		if ! "$gtcheck" map $pad.rw.icpp gt.$pad > gtcheck.$pad.out 2>&1; then
			echo "FAIL: ground truth of $pad.rw against its predicted pathmap:"
			head -20 gtcheck.$pad.out
			fail=1
		fi
	else
		echo "FAIL: icpp rewrite --everything=$amount,0,0"
		cat rewrite.$pad.err
		fail=1
	fi
done
if ! grep -Eq "^ +[1-9][0-9]* of them beyond their allocation's room" rewrite.pad112.err ||
   ! grep -Eq "\(([1-9][0-9]*) through entry wrappers\)" rewrite.pad112.err; then
	echo "FAIL: --everything=112,0,0 pads no function beyond its allocation's room"
	grep -E "beyond|through entry" rewrite.pad112.err
	fail=1
fi

# 3. the solver's plan, on a terminal (script(1)), where icpp rewrite shows
#    each of the solver's searches as it ends
#    (its own input /dev/null: with none, script runs nothing)
if script -qec "$(printf '%q ' "$icpp" rewrite "./$name" -m map -o solved.rw)" /dev/null \
	< /dev/null > rewrite.solved.err 2>&1; then
	if ! grep -q "icpp rewrite: search 4 of 4 done after " rewrite.solved.err; then
		echo "FAIL: icpp rewrite on a terminal: no progress of the searches"
		cat rewrite.solved.err
		fail=1
	fi
	run solved ./solved.rw
	same solved
	verify solved.rw "$strict"
else
	echo "FAIL: icpp rewrite (solver)"
	cat rewrite.solved.err
	fail=1
fi

# 4. gdb backtraces through padded frames and trampolines
src=$(readlink -f "$(dirname "$0")/../train")/
bt() {
	"$gdb" -batch -nx -ex 'set debuginfod enabled off' -ex 'set pagination off' \
		-ex "break $brk" -ex run -ex bt "$1" < /dev/null > "$2.full" 2>&1
	# a clone has no line table: gdb names its symbol, __icpp_clone_K_NAME
	grep -E "^#.* at $src|^#.* in __icpp_clone_[0-9]+_" "$2.full" |
		sed -n 's/^#[0-9]* *\(0x[0-9a-f]* in \)\{0,1\}\([^ ]*\) .*/\2/p' |
		sed 's/^__icpp_clone_[0-9]*_//' | c++filt | sed 's/(.*//' > "$2"
}
if [ "$brk" != - ] && [ -n "$gdb" ]; then
	bt "./$name" bt.orig
	bt ./all.rw bt.all
	if grep -q "Backtrace stopped\|corrupt stack" bt.all.full; then
		echo "FAIL: gdb stops early in all.rw:"
		grep "Backtrace stopped\|corrupt stack" bt.all.full
		fail=1
	elif ! grep -qx main bt.orig || ! cmp -s bt.orig bt.all; then
		echo "FAIL: gdb backtrace from $brk differs:"
		diff bt.orig bt.all | head -20
		fail=1
	else
		echo "gdb: backtrace from $brk through $(wc -l < bt.all) frames matches"
	fi
fi
exit $fail
