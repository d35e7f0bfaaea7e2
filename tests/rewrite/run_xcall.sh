#!/bin/bash
# Cross-module calls (rewriter.h section 1): the program's call of the
# library's leaf takes the leaf's clone in the library itself, through a
# thunk that checks its GOT slot and the marker the library's rewrite puts
# in the leaf's page, with no dispatch at the leaf.  fx_xcall is
# fx_tags_main.c (two orders of the same functions, separated only by a
# clone with --no-wrap) over fx_xcall_lib.so, whose leaf's page has room for
# the marker; fx_tags_lib.so has none, so run_tags.sh keeps its tags.
#  - rewrite --lib --no-wrap: the program's call checked, the library's
#    page marked, no dispatch; the pair runs with the same output and
#    verifies with every path precise;
#  - the rewritten program with the original library (no marker): the
#    check fails, the call goes through its slot, the output is the same
#    and training sees the original leaf, no clone;
#  - the same with the library rewritten by another plan (another build-id,
#    another marker, its clone elsewhere);
#  - icpp plan --binary writes the clone's line with `xcall` and prices the
#    checks; icpp rewrite --plan with it writes the same files;
#  - icpp report charges a sample in the thunk to the clone
#    (t_report_tags, tests/record);
#  - the checked call wrapped too: its trampoline checks, and the pair
#    verifies;
#  - a chain across modules: the copy of a call inside a clone of the
#    program's function checks for the library's clone, and verifies;
#  - --everything: every call of the leaf training saw, and its copies in
#    clones, takes a clone of it by its check; the pair verifies and enters
#    the clones;
#  - a plan whose clone is in a library not rewritten is refused, nothing
#    written.
#  - a forwarder: fx_xcall_fwd's calls reach the leaf through the library's
#    fx_fwd (jmp fx_tag_leaf@plt); with --no-tail the check also compares
#    the library's own slot, which the library binds at load time, and calls
#    the leaf's clone; without, fx_fwd's clone for the call has its copy of
#    the jump enter the leaf's clone through a bound call's thunk (a tail
#    chain through the library's own PLT entry); each pair verifies, and
#    runs the same with the original library.
#  - a tail chain across modules: fx_xcall_tail's fx_g (fx_xcall_fwd.c
#    built with FX_TAIL) jumps on to the leaf through the PLT; a clone of
#    fx_g for one of its calls has its copy of the jump enter the leaf's
#    clone through the check's thunk, with no dispatch at the leaf; the
#    plan's line says `tail`, the pair verifies with every path precise, and
#    runs the same with the original library.
#  - forwarders to a third module: fx_xcall_hop's calls reach the leaf
#    through the middle library's fx_hop (jmp fx_tag_leaf@plt, a slot the
#    leaf's library fills) or fx_hop_sized (jmp fx_hop@plt); the checks
#    read the middle library's slots and the leaf's page's marker: the
#    middle library marks fx_hop's page and binds at load time, takes no
#    clone and no dispatch; the triple verifies with every path precise, the
#    leaf's clone entered, and runs the same with either library original
#    (the check fails, the call goes through its slot); --everything takes
#    both routes; icpp rewrite --plan with icpp plan's plan writes the same
#    files.
#   run_xcall.sh ICPP WORK PROG LIB T_REPORT_TAGS FWD_PROG TAIL_PROG HOP_PROG HOP_LIB
set -u
icpp=$1 work=$2 prog=$3 lib=$4 t_report=$5 fwd=$6 tailprog=$7 hopprog=$8 hoplib=$9
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/stub_checks.sh"
# pair_verifies OUT WHAT: OUT with OUT.libs gives orig.out's output and
# verifies with every observed path at its predicted height
pair_verifies() {
	LD_LIBRARY_PATH=$1.libs "./$1" > "$1.out" && cmp -s orig.out "$1.out" || fail "$2: the output differs"
	LD_LIBRARY_PATH=$1.libs "$icpp" verify "$1" > /dev/null 2> "$1.verify" ||
		fail "$2: verify: $(tail -3 "$1.verify")"
	grep -q " 0 at another height, 0 not predicted" "$1.verify" || fail "$2: $(grep observed "$1.verify")"
}
rm -rf "$work" && mkdir -p "$work" && cp "$prog" "$lib" "$work"/ && cd "$work" || fail "setup"
p=./$(basename "$prog") l=./$(basename "$lib") ln=$(basename "$lib")

"$p" > orig.out || fail "the program fails"
"$icpp" train -q -o map.icpp -- "$p" > /dev/null || fail "train"
"$icpp" rewrite "$l" --explain 2> /dev/null > explain.txt || fail "rewrite --explain"
grep -q " marked at 0x[0-9a-f]* fx_tag_leaf$" explain.txt ||
	fail "the leaf's page has no marker: $(grep fx_tag_leaf explain.txt)"

"$icpp" rewrite "$p" -m map.icpp -o rw --lib "$l" --no-wrap > rewrite.log 2>&1 ||
	fail "rewrite: $(tail -1 rewrite.log)"
grep -q "^icpp rewrite: rw: .* 1 calls of another module's clones checked (bound at load time), 0 pages" rewrite.log ||
	fail "no checked call in the program: $(grep 'functions cloned' rewrite.log)"
grep -q "^icpp rewrite: rw.libs/$ln: .* 1 functions cloned (0 by dispatch), .* 1 pages marked" rewrite.log ||
	fail "no clone without dispatch in the library: $(grep 'functions cloned' rewrite.log)"
grep -qE "call instructions: .*, 1[0-9] may call another module's clones by a check;" rewrite.log ||
	fail "the program's checkable calls not counted: $(grep 'call instructions' rewrite.log)"
grep -qE "^icpp rewrite: [0-9]+ functions cloneable, [1-9][0-9]* of them also for another module's checked calls" rewrite.log ||
	fail "the library's marked functions not counted: $(grep 'functions cloneable' rewrite.log)"
grep -q "of the entries enter a clone through another module's checked call" rewrite.log ||
	fail "no share of the entries through the checks: $(grep entries rewrite.log)"
nm rw | grep -q " t __icpp_xcall_" || fail "no thunk in the program"
nm "rw.libs/$ln" | grep -q "__icpp_dispatch_" && fail "a dispatch in the library"
readelf -d rw | grep -q "BIND_NOW\|FLAGS_1.*NOW" || fail "the program does not bind at load time"
pair_verifies rw "the rewritten pair"
grep -q "precise paths: 100.0% predicted, 100.0% observed" rw.verify || fail "$(grep precise rw.verify)"

"$t_report" "$PWD/rw" "$PWD" > report.log 2>&1 || fail "t_report_tags: $(tail -3 report.log)"

# the original library: no marker, so the call goes through its slot
mkdir -p orig && cp "$l" orig/ || fail "setup orig"
LD_LIBRARY_PATH=orig ./rw > rwo.out && cmp -s orig.out rwo.out ||
	fail "the rewritten program with the original library"
LD_LIBRARY_PATH=orig "$icpp" train -q -o rwo.icpp -- ./rw > /dev/null || fail "train (original library)"
"$icpp" paths rwo.icpp > rwo.paths || fail "paths (original library)"
grep -q "> fx_tag_leaf$" rwo.paths || fail "the original leaf is not entered: $(cat rwo.paths)"
grep -q "__icpp_clone_" rwo.paths && fail "a clone entered with the original library"

# the library of another rewrite (its plan pads no more, but wraps): another
# build-id, so the marker differs and the call goes through its slot
"$icpp" rewrite "$p" -m map.icpp -o other --lib "$l" > other.log 2>&1 ||
	fail "rewrite (other): $(tail -1 other.log)"
cmp -s "rw.libs/$ln" "other.libs/$ln" && fail "the other rewrite wrote the same library"
LD_LIBRARY_PATH=other.libs ./rw > rwx.out && cmp -s orig.out rwx.out ||
	fail "the rewritten program with another rewrite's library"

# the plan file route: the clone's line says xcall, the files are the same
"$icpp" plan map.icpp --binary "$p" --binary "$l" --no-wrap -o x.plan > plan.log 2>&1 ||
	fail "plan: $(tail -1 plan.log)"
grep -q "^clone 0 [0-9] 0x[0-9a-f]* [0-9] 0x[0-9a-f]* 0 xcall$" x.plan || fail "no xcall clone: $(grep clone x.plan)"
grep -q "of the entries enter a clone through another module's checked call" plan.log ||
	fail "plan: no share of the entries through the checks"
"$icpp" rewrite "$p" -m map.icpp -o rwp --lib "$l" --plan x.plan > rewritep.log 2>&1 ||
	fail "rewrite --plan: $(tail -1 rewritep.log)"
cmp -s rw rwp && cmp -s "rw.libs/$ln" "rwp.libs/$ln" || fail "the plan file's route writes other files"

# the checked call wrapped too: its trampoline makes the check
read -r km site <<< "$(awk '$1 == "clone" && $NF == "xcall" {print $5, $6}' x.plan)"
[ -n "$site" ] || fail "no callsite for the wrapped check"
rewrite_wrapped x.plan "$km" "$site" rw2 __icpp_xcall_
pair_verifies rw2 "wrapped"
grep -q "precise paths: 100.0% predicted, 100.0% observed" rw2.verify || fail "$(grep precise rw2.verify)"

# a chain across modules: a clone of fx_a in the program for fx_b's call,
# whose copy of fx_a's call of the leaf calls the leaf's clone in the library
# by its own check (hand-made: `in 0 xcall`)
read -r bo ao <<< "$("$icpp" paths --callsites map.icpp |
	sed -n 's/.* > fx_b+\(0x[0-9a-f]*\) > fx_a+\(0x[0-9a-f]*\) > fx_tag_leaf$/\1 \2/p' | head -1)"
pm=$(awk -v p="$PWD/${p#./}" '$1 == "module" && $4 == p { print $2 }' x.plan)
lm=$(awk -v l="$PWD/${l#./}" '$1 == "module" && $4 == l { print $2 }' x.plan)
fa=$(nm "$p" | awk '$3 == "fx_a" { print "0x" $1 }') fb=$(nm "$p" | awk '$3 == "fx_b" { print "0x" $1 }')
leaf=$(nm "$l" | awk '$3 == "fx_tag_leaf" { print "0x" $1 }')
[ -n "$bo" ] && [ -n "$pm" ] && [ -n "$lm" ] && [ -n "$fa" ] && [ -n "$leaf" ] ||
	fail "chain: no calls, modules or functions found"
{
	awk '$1 == "clone" || $1 == "end" { exit } { print }' x.plan
	printf 'clone 0 %s %s %s %#x 0\n' "$pm" "$fa" "$pm" $((fb + bo))
	printf 'clone 1 %s %s %s %#x 0 in 0 xcall\n' "$lm" "$leaf" "$pm" $((fa + ao))
	echo "end 2"
} > chain.plan
"$icpp" rewrite "$p" -m map.icpp -o rwc --lib "$l" --plan chain.plan > rewritec.log 2>&1 ||
	fail "rewrite --plan (chain): $(tail -1 rewritec.log)"
grep -q "^icpp rewrite: rwc: .* 1 calls of another module's clones checked" rewritec.log ||
	fail "chain: no checked copy: $(grep 'functions cloned' rewritec.log)"
pair_verifies rwc "chain"
"$icpp" paths rwc.icpp | grep -q "> __icpp_clone_0_fx_a > __icpp_clone_0_fx_tag_leaf$" ||
	fail "chain: the leaf's clone is not predicted under fx_a's"

# --everything: every call training saw enter the library's leaf, and its
# copies in the clones of the function making it, takes an unpadded clone of
# the leaf by its check (in trampolines: every call is wrapped); the pair
# verifies, and the leaf's clones run under the program's clones
"$icpp" rewrite "$p" -m map.icpp -o rwe --lib "$l" --everything > rewritee.log 2>&1 ||
	fail "rewrite --everything: $(tail -1 rewritee.log)"
grep -q "^icpp rewrite: rwe: .* [1-9][0-9]* calls of another module's clones checked" rewritee.log ||
	fail "--everything: no checked call: $(grep 'functions cloned' rewritee.log)"
pair_verifies rwe "--everything"
LD_LIBRARY_PATH=rwe.libs "$icpp" train -q -o obse.icpp -- ./rwe > /dev/null || fail "train (--everything)"
"$icpp" paths obse.icpp | grep -q "__icpp_clone_[0-9]*_fx_tag_many > [^ ]* > __icpp_clone_[0-9]*_fx_tag_leaf$" ||
	fail "--everything: no clone of the leaf entered from a clone of the program"

# a forwarder: the leaf's frames under calls of fx_fwd, which jumps on
mkdir -p fwd && cp "$fwd" "$l" fwd/ && cd fwd || fail "setup fwd"
pf=./$(basename "$fwd")
"$pf" > orig.out || fail "the forwarder's program fails"
"$icpp" train -q -o map.icpp -- "$pf" > /dev/null || fail "train (forwarder)"
"$icpp" rewrite "$l" --explain 2> /dev/null | grep -q " forwards to 0x[0-9a-f]* fx_fwd$" ||
	fail "fx_fwd is no forwarder to the rewriter"
"$icpp" rewrite "$pf" -m map.icpp -o rw --lib "$l" --no-wrap --no-tail > rewrite.log 2>&1 ||
	fail "rewrite (forwarder): $(tail -1 rewrite.log)"
grep -q " 1 calls of another module's clones checked" rewrite.log ||
	fail "forwarder: no checked call: $(grep 'functions cloned' rewrite.log)"
readelf -d "rw.libs/$ln" | grep -q "BIND_NOW\|FLAGS_1.*NOW" || fail "the library does not bind at load time"
pair_verifies rw "forwarder"
grep -q "precise paths: 100.0% predicted, 100.0% observed" rw.verify || fail "forwarder: $(grep precise rw.verify)"
LD_LIBRARY_PATH=rw.libs "$icpp" train -q -o obs.icpp -- ./rw > /dev/null || fail "train (forwarder pair)"
"$icpp" paths obs.icpp | grep -q "> fx_[ab] > __icpp_clone_[0-9]*_fx_tag_leaf$" ||
	fail "forwarder: the leaf's clone is not entered: $("$icpp" paths obs.icpp | grep fx_tag_leaf)"
mkdir -p orig && cp "$l" orig/ && LD_LIBRARY_PATH=orig ./rw > rwo.out && cmp -s orig.out rwo.out ||
	fail "the forwarder's program with the original library"
"$icpp" rewrite "$pf" -m map.icpp -o rwt --lib "$l" --no-wrap > rewrite.tail.log 2>&1 ||
	fail "rewrite (forwarder, tail): $(tail -1 rewrite.tail.log)"
grep -q "^icpp rewrite: rwt.libs/$ln: .*; 1 after tail jumps; 1 through a bound call" rewrite.tail.log ||
	fail "forwarder: no tail chain through the library's PLT: $(grep 'functions cloned' rewrite.tail.log)"
pair_verifies rwt "forwarder, tail"
grep -q "precise paths: 100.0% predicted, 100.0% observed" rwt.verify ||
	fail "forwarder, tail: $(grep precise rwt.verify)"
LD_LIBRARY_PATH=orig ./rwt > rwto.out && cmp -s orig.out rwto.out ||
	fail "the forwarder's tail chain with the original library"
cd .. || fail "cd"

# a tail chain across modules: fx_g's jump to the leaf's PLT entry, copied
# into fx_g's clone, enters the leaf's clone through the check's thunk
mkdir -p tail && cp "$tailprog" "$l" tail/ && cd tail || fail "setup tail"
pt=./$(basename "$tailprog")
"$pt" > orig.out || fail "the tail program fails"
"$icpp" train -q -o map.icpp -- "$pt" > /dev/null || fail "train (tail)"
"$icpp" plan map.icpp --binary "$pt" --binary "$l" --no-wrap -q -o tail.plan > plan.log 2>&1 ||
	fail "plan (tail): $(tail -1 plan.log)"
grep -qE "^clone [0-9]+ 1 0x[0-9a-f]+ 0 0x[0-9a-f]+ 0 in [0-9]+ tail$" tail.plan ||
	fail "no tail chain into the library in the plan: $(grep '^clone' tail.plan)"
"$icpp" rewrite "$pt" -m map.icpp -o rw --lib "$l" --no-wrap > rewrite.log 2>&1 ||
	fail "rewrite (tail): $(tail -1 rewrite.log)"
nm "rw.libs/$ln" | grep -q "__icpp_dispatch_" && fail "tail: a dispatch in the library"
nm rw | grep -q " t __icpp_xcall_" || fail "tail: no thunk in the program"
pair_verifies rw "tail chain"
grep -q "precise paths: 100.0% predicted, 100.0% observed" rw.verify || fail "tail: $(grep precise rw.verify)"
mkdir -p orig && cp "$l" orig/ && LD_LIBRARY_PATH=orig ./rw > rwo.out && cmp -s orig.out rwo.out ||
	fail "the tail program with the original library"
cd .. || fail "cd"

# forwarders to a third module: the program's calls of the middle
# library's forwarders take the leaf's clone in the leaf's library
mkdir -p hop && cp "$hopprog" "$hoplib" "$l" hop/ && cd hop || fail "setup hop"
ph=./$(basename "$hopprog") hl=./$(basename "$hoplib") hn=$(basename "$hoplib")
"$ph" > orig.out || fail "the hop program fails"
"$icpp" train -q -o map.icpp -- "$ph" > /dev/null || fail "train (hop)"
"$icpp" rewrite "$hl" --explain 2> /dev/null > explain.txt || fail "rewrite --explain (hop)"
grep -q " marked at 0x[0-9a-f]* forwards to fx_tag_leaf of another module fx_hop$" explain.txt ||
	fail "fx_hop is no forwarder to another module: $(grep fx_hop explain.txt)"
grep -q " forwards to 0x[0-9a-f]* fx_hop_sized$" explain.txt || fail "fx_hop_sized is no forwarder"
"$icpp" rewrite "$ph" -m map.icpp -o rw --lib "$hl" --lib "$l" --no-wrap --no-tail > rewrite.log 2>&1 ||
	fail "rewrite (hop): $(tail -1 rewrite.log)"
grep -q "^icpp rewrite: rw: .* 1 calls of another module's clones checked (bound at load time)" rewrite.log ||
	fail "hop: no checked call: $(grep 'functions cloned' rewrite.log)"
grep -q "^icpp rewrite: rw.libs/$hn: .* 0 calls of another module's clones checked, 1 pages marked" rewrite.log ||
	fail "hop: the middle library's page not marked: $(grep 'functions cloned' rewrite.log)"
grep -q "^icpp rewrite: rw.libs/$ln: .* 1 functions cloned (0 by dispatch), .* 1 pages marked" rewrite.log ||
	fail "hop: no clone without dispatch in the leaf's library: $(grep 'functions cloned' rewrite.log)"
readelf -d "rw.libs/$hn" | grep -q "BIND_NOW\|FLAGS_1.*NOW" || fail "hop: the middle library does not bind at load time"
nm "rw.libs/$hn" "rw.libs/$ln" | grep -q "__icpp_dispatch_" && fail "hop: a dispatch in a library"
pair_verifies rw "hop"
# (predicted: the original's lazy binding, which ld.so runs under fx_a, fx_b)
grep -q "precise paths: .* predicted, 100.0% observed" rw.verify || fail "hop: $(grep precise rw.verify)"
LD_LIBRARY_PATH=rw.libs "$icpp" train -q -o obs.icpp -- ./rw > /dev/null || fail "train (hop triple)"
"$icpp" paths obs.icpp | grep -q "> fx_[ab] > __icpp_clone_[0-9]*_fx_tag_leaf$" ||
	fail "hop: the leaf's clone is not entered: $("$icpp" paths obs.icpp | grep fx_tag_leaf)"
# either library original: a check fails, the call goes through its slot
for orig in "$hl" "$l"; do
	rm -rf mixed && cp -r rw.libs mixed && cp "$orig" mixed/ || fail "setup mixed"
	LD_LIBRARY_PATH=mixed ./rw > rwm.out && cmp -s orig.out rwm.out ||
		fail "hop: the rewritten program with the original $orig"
	LD_LIBRARY_PATH=mixed "$icpp" train -q -o rwm.icpp -- ./rw > /dev/null || fail "train (hop, original $orig)"
	"$icpp" paths rwm.icpp | grep -q "__icpp_clone_[0-9]*_fx_tag_leaf$" &&
		fail "hop: the leaf's clone entered with the original $orig"
done
"$icpp" rewrite "$ph" -m map.icpp -o rwe --lib "$hl" --lib "$l" --everything > rewritee.log 2>&1 ||
	fail "rewrite --everything (hop): $(tail -1 rewritee.log)"
pair_verifies rwe "hop, --everything"
LD_LIBRARY_PATH=rwe.libs "$icpp" train -q -o obse.icpp -- ./rwe > /dev/null || fail "train (hop, --everything)"
[ "$("$icpp" paths obse.icpp | grep -c "__icpp_clone_[0-9]*_fx_[ab] > [^ ]* > __icpp_clone_[0-9]*_fx_tag_leaf$")" = 2 ] ||
	fail "hop, --everything: not both routes enter the leaf's clones: $("$icpp" paths obse.icpp | grep leaf)"
"$icpp" plan map.icpp --binary "$ph" --binary "$hl" --binary "$l" --no-wrap --no-tail -o x.plan > plan.log 2>&1 ||
	fail "plan (hop): $(tail -1 plan.log)"
"$icpp" rewrite "$ph" -m map.icpp -o rwp --lib "$hl" --lib "$l" --no-tail --plan x.plan > rewritep.log 2>&1 ||
	fail "rewrite --plan (hop): $(tail -1 rewritep.log)"
cmp -s rw rwp && cmp -s "rw.libs/$hn" "rwp.libs/$hn" && cmp -s "rw.libs/$ln" "rwp.libs/$ln" ||
	fail "hop: the plan file's route writes other files"
# the leaf's library before the middle one: refused, nothing written
"$icpp" rewrite "$ph" -m map.icpp -o rwo --lib "$l" --lib "$hl" --no-tail --plan x.plan > rewriteo.log 2>&1 &&
	fail "hop: a plan whose check reads a library written after it was applied"
grep -q "order of --lib" rewriteo.log || fail "hop: refusal unclear: $(tail -1 rewriteo.log)"
[ -e rwo ] && fail "rwo written although refused"
cd .. || fail "cd"

# the clone's module not rewritten: refused, and nothing written
"$icpp" rewrite "$p" -m map.icpp -o rw3 --plan x.plan > rewrite3.log 2>&1 &&
	fail "a plan cloning in a library not rewritten was applied"
grep -q "not rewritten\|--lib" rewrite3.log || fail "refusal unclear: $(tail -1 rewrite3.log)"
[ -e rw3 ] && fail "rw3 written although refused"
echo ok
