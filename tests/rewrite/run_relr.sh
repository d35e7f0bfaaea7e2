#!/bin/bash
# A program with DT_RELR relocations rewritten with everything the analysis
# allows: it runs, calls through its relocated pointers, and verifies.  Then
# the C library the program loads (glibc packs its own since 2.36), rewritten
# the same way: the program runs on it and verifies.  Exit 77 (skipped)
# where the linker cannot pack.
#   run_relr.sh ICPP CC WORK SOURCE
set -u
icpp=$1 cc=$2 work=$3 src=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || fail "setup"
"$cc" -O2 -Wl,-z,pack-relative-relocs "$src" -o relr 2>/dev/null || { echo "skip: no -z pack-relative-relocs"; exit 77; }
readelf -d relr | grep -q RELR || { echo "skip: the linker did not pack"; exit 77; }
./relr 40 > orig.out || fail "the program fails"
"$icpp" train -q -o relr.icpp -- ./relr 40 > /dev/null || fail "train"
"$icpp" rewrite relr -m relr.icpp -o rw --everything > rewrite.log 2>&1 || fail "rewrite: $(tail -1 rewrite.log)"
grep -qE "^icpp rewrite: [1-9][0-9]* functions padded" rewrite.log || fail "nothing padded: $(grep padded rewrite.log)"
readelf -SW rw | grep -q "\.relr\.dyn" || fail "rw lost .relr.dyn"
./rw 40 > rw.out || fail "the rewritten program fails"
cmp -s orig.out rw.out || fail "the rewritten program's output differs"
"$icpp" verify rw -- 40 > /dev/null 2> verify.log || fail "verify: $(tail -2 verify.log)"

libc=$(ldd ./relr | awk '/libc\.so/ {print $3}')
[ -f "$libc" ] || fail "no libc in ldd ./relr"
mkdir -p lib && "$icpp" rewrite "$libc" -m relr.icpp -o lib/$(basename "$libc") --everything > libc.log 2>&1 ||
	fail "rewrite $libc: $(tail -1 libc.log)"
LD_LIBRARY_PATH=lib ./relr 40 > libc.out || fail "the program fails on the rewritten libc"
cmp -s orig.out libc.out || fail "the program's output differs on the rewritten libc"
LD_LIBRARY_PATH=lib "$icpp" verify lib/$(basename "$libc") --exec ./relr -- 40 > /dev/null 2> libc-verify.log ||
	fail "verify the libc: $(tail -2 libc-verify.log)"
echo "ok"
