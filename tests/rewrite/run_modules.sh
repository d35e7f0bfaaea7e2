#!/bin/bash
# A program and a library rewritten by one plan (icpp plan --binary twice,
# icpp rewrite --lib): paths that differ only inside the library are blocked
# for a rewrite of the program alone and precise for both; the rewritten pair
# runs and verifies (trampolines of both removed), the program with the
# original library does not; a plan that changes the library needs --lib;
# outputs never overwrite inputs; a frame of the library (not rewritten)
# whose size differs from training's is no error of a rewrite of the program,
# nor one of the program (not rewritten) of a rewrite of the library.
#   run_modules.sh ICPP WORK PROG LIB     (PROG finds LIB beside it: $ORIGIN)
set -u
icpp=$1 work=$2 prog=$3 lib=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cp "$prog" "$lib" "$work"/ && cd "$work" || fail "setup"
p=./$(basename "$prog") l=./$(basename "$lib")

"$p" > orig.out || fail "the program fails"
"$icpp" train -q -o map.icpp -- "$p" > /dev/null || fail "train"
precise_after() { grep -E "^ +1 " "$1" | awk '{print $6}'; }

"$icpp" plan map.icpp --binary "$p" -o solo.plan > solo.txt 2>&1 || fail "plan --binary PROG: $(tail -1 solo.txt)"
grep -qE "^  blocked +[1-9]" solo.txt || fail "the library's paths are not blocked for PROG alone: $(grep -A3 '^collisions' solo.txt)"
[ "$(precise_after solo.txt)" != 100.0 ] || fail "PROG alone made every path precise"
grep -q "differ in .*$(basename "$lib"), which is not rewritten here: add --binary .*$(basename "$lib")" solo.txt ||
	fail "plan does not name the library to add: $(tail -2 solo.txt)"
"$icpp" plan map.icpp --binary "$p" --binary "$l" -o both.plan > both.txt 2>&1 ||
	fail "plan --binary PROG --binary LIB: $(tail -1 both.txt)"
[ "$(precise_after both.txt)" = 100.0 ] || fail "PROG and LIB: $(grep -E '^ +1 ' both.txt)"
lm=$(awk -v l="$(basename "$lib")" '$1 == "module" && $4 ~ l"$" {print $2}' both.plan)
[ -n "$lm" ] && grep -qE "^(pad|wrap|clone) $lm " both.plan ||
	fail "the plan changes nothing in the library: $(grep -E '^(module|pad|wrap|clone)' both.plan)"

"$icpp" rewrite "$p" -m map.icpp -o rw --lib "$l" > rewrite.log 2>&1 || fail "rewrite --lib: $(tail -1 rewrite.log)"
lo=rw.libs/$(basename "$lib")
[ -f "$lo" ] || fail "no $lo"
cmp -s "$l" "$(basename "$lib")" && cmp -s "$p" "$prog" || fail "an input changed"
grep -q "LD_LIBRARY_PATH=rw.libs" rewrite.log || fail "rewrite does not say how to load the library"
LD_LIBRARY_PATH=rw.libs ./rw > rw.out || fail "the rewritten pair fails"
cmp -s orig.out rw.out || fail "the rewritten pair's output differs"
LD_LIBRARY_PATH=rw.libs "$icpp" verify rw > /dev/null 2> verify.log || fail "verify: $(tail -3 verify.log)"
grep -q "precise paths: 100.0% predicted, 100.0% observed" verify.log || fail "$(grep precise verify.log)"
# with the original library the prediction does not hold
"$icpp" verify rw > /dev/null 2> verify-orig.log && fail "verify passes with the original library"
grep -q "^icpp: verify: the run loaded .*, not its rewritten copy .*rw.libs/.*: run with LD_LIBRARY_PATH=.*rw.libs$" \
	verify-orig.log || fail "verify does not say the run loaded the original library: $(cat verify-orig.log)"

# the plan of both, applied
"$icpp" rewrite "$p" -m map.icpp -o rw2 --plan both.plan > plan-alone.log 2>&1 && fail "a plan for the library applied without --lib"
grep -q "not rewritten here (add --lib .*$(basename "$lib"))" plan-alone.log || fail "$(tail -1 plan-alone.log)"
[ -e rw2 ] && fail "rw2 written after the refusal"
"$icpp" rewrite "$p" -m map.icpp -o rw3 --lib "$l=lib3.so" --plan both.plan > plan.log 2>&1 ||
	fail "rewrite --plan --lib: $(tail -1 plan.log)"
mkdir -p l3 && cp lib3.so "l3/$(basename "$lib")" || fail "copy"
LD_LIBRARY_PATH=l3 "$icpp" verify rw3 > /dev/null 2> verify3.log || fail "verify (plan): $(tail -3 verify3.log)"

# the program alone, verified with the library's frame sized otherwise
"$icpp" rewrite "$p" -m map.icpp -o solo > solo.log 2>&1 || fail "rewrite PROG alone: $(tail -1 solo.log)"
grep -q "^icpp rewrite: .* blocked collisions .*: add --lib .*$(basename "$lib")" solo.log ||
	fail "rewrite does not name the library to add: $(grep blocked solo.log)"
# (getenv finding FX_PAD takes paths training did not: --allow-new)
FX_PAD=64 "$icpp" verify --allow-new solo > /dev/null 2> solo-verify.log ||
	fail "verify (FX_PAD): $(tail -3 solo-verify.log)"
grep -q " 0 at another height" solo-verify.log || fail "$(grep observed solo-verify.log)"
grep -qE "^icpp verify: [1-9][0-9]* call paths below a frame whose size varies" solo-verify.log ||
	fail "no varying paths: $(grep observed solo-verify.log)"

# the library alone, verified with the program's frame (not rewritten) sized
# otherwise: its calls into the library are at other heights, no error
"$icpp" rewrite "$l" -m map.icpp -o l4.so > lib-alone.log 2>&1 || fail "rewrite LIB alone: $(tail -1 lib-alone.log)"
mkdir -p l4 && cp l4.so "l4/$(basename "$lib")" && cp l4.so.icpp "l4/$(basename "$lib").icpp" || fail "copy"
FX_MAIN_PAD=64 LD_LIBRARY_PATH=l4 "$icpp" verify --allow-new "l4/$(basename "$lib")" --exec "$p" \
	> /dev/null 2> lib-verify.log || fail "verify (FX_MAIN_PAD): $(tail -3 lib-verify.log)"
grep -q " 0 at another height" lib-verify.log || fail "$(grep observed lib-verify.log)"
grep -qE "^icpp verify: [1-9][0-9]* call paths below a frame whose size varies" lib-verify.log ||
	fail "no varying paths (FX_MAIN_PAD): $(grep observed lib-verify.log)"

# outputs over inputs, a library not in the map
"$icpp" rewrite "$p" -m map.icpp -o rw4 --lib "$l=$l" > over.log 2>&1 && fail "--lib over its input"
grep -q "never modifies its input" over.log || fail "$(tail -1 over.log)"
cmp -s "$l" "$lib" || fail "the library was modified"
"$icpp" rewrite "$p" -m map.icpp -o rw5 --lib /bin/true > other.log 2>&1 && fail "--lib of a module not in the map"
grep -q "has no module with the build-id of /bin/true" other.log || fail "$(tail -1 other.log)"
echo "ok"
