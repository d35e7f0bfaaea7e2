#!/bin/bash
# Calls into a library through the PLT, bounded by the callees' own code
# (rewriter/imports.c): what the analysis says with and without the training
# map, a rewrite that wraps them (stack arguments copied), its output and
# verify, gdb's backtrace through the trampoline that copies 352 bytes, a map
# naming a deleted program, and a library that is not the trained build.
#   run_imports.sh ICPP WORK PROG LIB [GDB]   (PROG finds LIB beside it: $ORIGIN)
set -u
icpp=$1 work=$2 prog=$3 lib=$4 gdb=${5:-}
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cp "$prog" "$lib" "$work"/ && cd "$work" || fail "setup"
p=./$(basename "$prog") l=./$(basename "$lib")

"$p" hello world > orig.out || fail "the program fails"
"$icpp" train -q -o map.icpp -- "$p" hello world > /dev/null || fail "train"

call() { grep -E "in work\+0x[0-9a-f]+ -> $1:" "$2" || fail "no call of $1 in $2"; }
"$icpp" rewrite --explain "$p" > alone.txt 2>&1 || fail "explain"
for f in sum10 sum50 sum2 pick; do
	call $f alone.txt | grep -q "refused (.*stack-argument" || fail "$f: bounded without the map?"
done
"$icpp" rewrite --explain "$p" -m map.icpp > map.txt 2>&1 || fail "explain -m"
call sum10 map.txt | grep -q "copies 32)" || fail "sum10 reads 4 stack arguments: $(call sum10 map.txt)"
call sum50 map.txt | grep -q "copies 352)" || fail "sum50 reads 44 stack arguments: $(call sum50 map.txt)"
call sum2 map.txt | grep -q "copies 0)" || fail "sum2 reads none: $(call sum2 map.txt)"
call pick map.txt | grep -q "copies 0)" || fail "pick (IFUNC) reads none: $(call pick map.txt)"
call vsum map.txt | grep -q "refused" || fail "vsum (va_start) cannot be bounded: $(call vsum map.txt)"

"$icpp" rewrite "$p" -m map.icpp -o rw --everything=0,16,0 > rewrite.log 2>&1 ||
	fail "rewrite: $(tail -1 rewrite.log)"
grep -q "calls into other modules bounded" rewrite.log || fail "no bounded calls in rewrite.log"
./rw hello world > rw.out || fail "the rewritten program fails"
cmp -s orig.out rw.out || fail "the rewritten program's output differs"
"$icpp" verify rw -m rw.icpp -- hello world > /dev/null 2> verify.log || fail "verify: $(tail -2 verify.log)"
if [ -n "$gdb" ]; then    # the trampoline's CFI, past its 44 pushes
	"$gdb" -batch -nx -ex 'set debuginfod enabled off' -ex 'set pagination off' \
		-ex 'set breakpoint pending on' -ex 'break sum50' -ex 'run hello' -ex bt \
		./rw < /dev/null > bt.full 2>&1
	grep -q "__icpp_wrap_" bt.full && grep -q " main " bt.full &&
		! grep -q "Backtrace stopped\|corrupt stack" bt.full ||
		fail "gdb's backtrace from sum50 does not run through its trampoline to main: $(grep '^#' bt.full)"
fi

# a program the training run built and deleted defines nothing: no warning
"$icpp" train -q -o gone.icpp -- sh -c "cp /bin/true gone && ./gone && rm gone && $p hello" > /dev/null ||
	fail "train (a deleted program)"
"$icpp" rewrite --explain "$p" -m gone.icpp > gone.txt 2>&1 || fail "explain -m (a deleted program)"
grep -q "keep their caller's" gone.txt && fail "a deleted module stops the bounds: $(grep "keep their" gone.txt)"
call sum10 gone.txt | grep -q "copies 32)" || fail "sum10 with a deleted module in the map: $(call sum10 gone.txt)"
# most of that map is sh's: rewrite states the program's own share apart
"$icpp" rewrite "$p" -m gone.icpp -o rw2 > rewrite2.log 2>&1 || fail "rewrite (map of sh): $(tail -1 rewrite2.log)"
grep -q "^icpp rewrite: the [0-9]* paths through $p: precise" rewrite2.log ||
	fail "no line for the paths through $p: $(grep precise rewrite2.log)"

# a library that is not the trained build: nothing is bounded from it
objcopy --remove-section .note.gnu.build-id "$l" || fail "objcopy"
"$icpp" rewrite --explain "$p" -m map.icpp > other.txt 2>&1 || fail "explain -m (other build)"
grep -q "keep their caller's stack-argument bounds: .*not the build that was trained" other.txt ||
	fail "no warning for a library of another build"
call sum2 other.txt | grep -q "refused" || fail "sum2 bounded from another build"
echo "ok"
