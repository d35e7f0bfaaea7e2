#!/bin/bash
# Tagged calls (rewriter.h section 1): a clone in the library takes the
# frames of a call in the program by a dispatch that tests the call's tag.
# fx_tags (fx_tags_main.c) calls the library's leaf in two orders of the
# same functions; with --no-wrap only such a clone separates them.
#  - rewrite --lib --no-wrap: one clone by dispatch in the library, one stub
#    in the program; the pair runs with the same output and verifies with
#    every path precise (training of the pair sees the stub as its caller's
#    frame, rw_collapse drops the frame the dispatch hands on);
#  - gdb (when installed) unwinds from the clone through the stub to main;
#  - the same plan with the tagged call wrapped: the trampoline carries the
#    tag, and the pair verifies again;
#  - icpp report places samples in the stub and in the tag test
#    (t_report_tags, tests/record);
#  - the library rewritten without the program is refused (the call's
#    module must be rewritten too);
#  - a program without a build-id gets no tag (a tag names its module by
#    it), so the pair keeps the collision.
#   run_tags.sh ICPP GDB WORK PROG LIB T_REPORT_TAGS NOID_PROG   (GDB may be empty)
set -u
icpp=$1 gdb=$2 work=$3 prog=$4 lib=$5 t_report=$6 noid=$7
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cp "$prog" "$lib" "$noid" "$work"/ && cd "$work" || fail "setup"
p=./$(basename "$prog") l=./$(basename "$lib") ln=$(basename "$lib")

"$p" > orig.out || fail "the program fails"
"$icpp" train -q -o map.icpp -- "$p" > /dev/null || fail "train"

"$icpp" rewrite "$p" -m map.icpp -o rw --lib "$l" --no-wrap > rewrite.log 2>&1 ||
	fail "rewrite: $(tail -1 rewrite.log)"
grep -q "^icpp rewrite: rw.libs/$ln: .* 1 functions cloned (1 by dispatch" rewrite.log ||
	fail "no clone by dispatch in the library: $(grep 'functions cloned' rewrite.log)"
grep -q "^icpp rewrite: rw: .*, 1 calls tagged," rewrite.log ||
	fail "no call of the program tagged: $(grep 'functions cloned' rewrite.log)"
nm rw | grep -q " t __icpp_tag_" || fail "no stub in the program"
nm "rw.libs/$ln" | grep -q " t __icpp_dispatch_fx_tag_leaf$" || fail "no dispatch in the library"
LD_LIBRARY_PATH=rw.libs ./rw > rw.out || fail "the rewritten pair fails"
cmp -s orig.out rw.out || fail "the rewritten pair's output differs"
LD_LIBRARY_PATH=rw.libs "$icpp" verify rw > /dev/null 2> verify.log || fail "verify: $(tail -3 verify.log)"
grep -q " 0 at another height, 0 not predicted" verify.log || fail "$(grep observed verify.log)"
grep -q "precise paths: 100.0% predicted, 100.0% observed" verify.log || fail "$(grep precise verify.log)"

for x in rw "rw.libs/$ln"; do
	"$t_report" "$PWD/$x" "$PWD" > "report.$(basename "$x").log" 2>&1 ||
		fail "t_report_tags $x: $(tail -3 "report.$(basename "$x").log")"
done

if [ -n "$gdb" ]; then
	LD_LIBRARY_PATH=rw.libs "$gdb" -q -batch -ex 'set breakpoint pending on' \
		-ex 'break __icpp_clone_0_fx_tag_leaf' -ex run -ex bt ./rw > gdb.log 2>&1
	grep -q "^#[0-9].* in __icpp_tag_" gdb.log && grep -q "^#[0-9].* in main " gdb.log ||
		fail "gdb does not unwind from the clone through the stub: $(grep '^#' gdb.log)"
fi

# the tagged call wrapped too: its trampoline carries the tag
"$icpp" plan map.icpp --binary "$p" --binary "$l" --no-wrap -o tag.plan > plan.log 2>&1 ||
	fail "plan: $(tail -1 plan.log)"
read -r km site <<< "$(awk '$1 == "clone" && $3 != $5 {print $5, $6}' tag.plan)"
[ -n "$site" ] || fail "the plan has no clone for a call of another module: $(grep clone tag.plan)"
awk -v km="$km" -v site="$site" '$1 == "end" {print "wrap", km, site, 64; print "end", $2 + 1; next} {print}' \
	tag.plan > wrap.plan
"$icpp" rewrite "$p" -m map.icpp -o rw2 --lib "$l" --plan wrap.plan > rewrite2.log 2>&1 ||
	fail "rewrite --plan (wrapped): $(tail -1 rewrite2.log)"
nm rw2 | grep -q " t __icpp_wrap_${site#0x}$" || fail "the tagged call is not wrapped"
nm rw2 | grep -q " t __icpp_tag_" && fail "a stub beside the trampoline"
LD_LIBRARY_PATH=rw2.libs ./rw2 > rw2.out && cmp -s orig.out rw2.out || fail "the wrapped pair's output"
LD_LIBRARY_PATH=rw2.libs "$icpp" verify rw2 > /dev/null 2> verify2.log || fail "verify (wrapped): $(tail -3 verify2.log)"
grep -q "precise paths: 100.0% predicted, 100.0% observed" verify2.log || fail "$(grep precise verify2.log)"

# the library alone cannot tag the program's call
"$icpp" rewrite "$l" -m map.icpp -o lib3.so --plan tag.plan > alone.log 2>&1 && fail "the library rewritten alone"
grep -q "tags callsite $site in .*$(basename "$prog"), which is not rewritten here" alone.log ||
	fail "$(tail -1 alone.log)"
[ -e lib3.so ] && fail "lib3.so written after the refusal"

n=./$(basename "$noid")
"$icpp" train -q -o noid.icpp -- "$n" > /dev/null || fail "train (no build-id)"
"$icpp" rewrite "$n" -m noid.icpp -o noid.rw --lib "$l" --no-wrap > noid.log 2>&1 ||
	fail "rewrite (no build-id): $(tail -1 noid.log)"
grep -q "calls tagged" noid.log && fail "a call of a module without a build-id tagged"
grep -q "^icpp rewrite: precise paths .* -> 100.0% predicted" noid.log &&
	fail "every path precise without a tag: $(grep 'precise paths' noid.log)"
echo "ok"
