#!/bin/bash
# Tagged calls (rewriter.h section 1): a clone in the library takes the
# frames of a call in the program by a dispatch that tests the call's tag.
# fx_tags (fx_tags_main.c) calls the library's leaf in two orders of the
# same functions; with --no-wrap only such a clone separates them.
#  - rewrite --lib --no-wrap: one clone by dispatch in the library, one stub
#    in the program; the pair runs with the same output and verifies with
#    every path precise (training of the pair sees the stub as its caller's
#    frame, rw_collapse drops the frame the dispatch hands on);
#  - with --no-dispatch no clone takes the call, and the collision stays;
#  - gdb (when installed) unwinds from the clone through the stub to main;
#  - the same plan with the tagged call wrapped: the trampoline carries the
#    tag, and the pair verifies again;
#  - icpp report places samples in the stub and in the tag test
#    (t_report_tags, tests/record);
#  - one tagged call taken by two clones, one in each module: the
#    program's dispatch tests the return address in the tag's stub, the
#    library's the tag (a hand-made plan);
#  - ten tagged calls of one function, each taken by a clone of its own:
#    the library's dispatch searches ten tags (a hand-made plan);
#  - a chain across modules: the copy of a call inside a clone of the
#    program's function carries a tag of its own, by a stub or by its
#    trampoline, which a clone's dispatch in the library tests (hand-made),
#    and icpp report charges a sample in the copy's stub to the clone;
#  - the library rewritten without the program is refused (the call's
#    module must be rewritten too);
#  - a program without a build-id gets no tag (a tag names its module by
#    it), so the pair keeps the collision.
#   run_tags.sh ICPP GDB WORK PROG LIB T_REPORT_TAGS NOID_PROG   (GDB may be empty)
set -u
icpp=$1 gdb=$2 work=$3 prog=$4 lib=$5 t_report=$6 noid=$7
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/stub_checks.sh"
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
grep -q "^icpp rewrite: 1 function takes clones by dispatch: [0-9.]*% of the entries run its tests" rewrite.log ||
	fail "no share of the calls that run a dispatch: $(grep dispatch rewrite.log)"
grep -q "^icpp rewrite:   the heaviest: fx_tag_leaf [0-9.]*% (1 test, a tag)$" rewrite.log ||
	fail "the function that dispatches is not named: $(grep -A1 'by dispatch' rewrite.log)"
nm "rw.libs/$ln" | grep -q " t __icpp_dispatch_fx_tag_leaf$" || fail "no dispatch in the library"
LD_LIBRARY_PATH=rw.libs ./rw > rw.out || fail "the rewritten pair fails"
cmp -s orig.out rw.out || fail "the rewritten pair's output differs"
LD_LIBRARY_PATH=rw.libs "$icpp" verify rw > /dev/null 2> verify.log || fail "verify: $(tail -3 verify.log)"
grep -q " 0 at another height, 0 not predicted" verify.log || fail "$(grep observed verify.log)"
grep -q "precise paths: 100.0% predicted, 100.0% observed" verify.log || fail "$(grep precise verify.log)"

# without dispatch no clone takes another module's call: the pair stays
"$icpp" rewrite "$p" -m map.icpp -o rwnd --lib "$l" --no-wrap --no-dispatch > rwnd.log 2>&1 ||
	fail "rewrite --no-dispatch: $(tail -1 rwnd.log)"
grep "functions cloned" rwnd.log | grep -qv "(0 by dispatch)" && fail "--no-dispatch: $(grep cloned rwnd.log)"
grep -q "clones by dispatch:" rwnd.log && fail "--no-dispatch: $(grep 'by dispatch:' rwnd.log)"
grep -q "^icpp rewrite: precise paths .* -> 100.0% predicted" rwnd.log &&
	fail "--no-dispatch: every path precise: $(grep 'precise paths' rwnd.log)"

for x in rw "rw.libs/$ln"; do
	"$t_report" "$PWD/$x" "$PWD" > "report.$(basename "$x").log" 2>&1 ||
		fail "t_report_tags $x: $(tail -3 "report.$(basename "$x").log")"
done

[ -z "$gdb" ] || gdb_unwinds_through "$gdb" rw.libs ./rw __icpp_clone_0_fx_tag_leaf __icpp_tag_

# the tagged call wrapped too: its trampoline carries the tag
"$icpp" plan map.icpp --binary "$p" --binary "$l" --no-wrap -o tag.plan > plan.log 2>&1 ||
	fail "plan: $(tail -1 plan.log)"
grep -q "^  1 function takes clones by dispatch: [0-9.]*% of the entries run its tests" plan.log ||
	fail "plan: no share of the calls that run a dispatch: $(grep dispatch plan.log)"
grep -q "^    the heaviest: fx_tag_leaf [0-9.]*% (1 test, a tag)$" plan.log ||
	fail "plan: the function that dispatches is not named: $(grep -A1 'by dispatch' plan.log)"
read -r km site <<< "$(awk '$1 == "clone" && $3 != $5 {print $5, $6}' tag.plan)"
[ -n "$site" ] || fail "the plan has no clone for a call of another module: $(grep clone tag.plan)"
rewrite_wrapped tag.plan "$km" "$site" rw2 __icpp_tag_
LD_LIBRARY_PATH=rw2.libs "$icpp" verify rw2 > /dev/null 2> verify2.log || fail "verify (wrapped): $(tail -3 verify2.log)"
grep -q "precise paths: 100.0% predicted, 100.0% observed" verify2.log || fail "$(grep precise verify2.log)"

# one tagged call, two clones: fx_tag_far's call of fx_tag_mid ends in
# fx_tag_tail and then the leaf, by tail calls.  A clone of fx_tag_tail
# takes it by the program's dispatch, which must test the return address of
# the call in the tag's stub (the call jumps there), and a clone of the leaf
# by the library's, which tests the tag
ptail=$(nm "$p" | awk '$3 == "fx_tag_tail" { print "0x" $1 }')
lleaf=$(nm "$l" | awk '$3 == "fx_tag_leaf" { print "0x" $1 }')
far=$("$icpp" paths --callsites map.icpp | sed -n 's/.* > fx_tag_far+\(0x[0-9a-f]*\) > fx_tag_tail$/\1/p')
pm=$(awk -v p="$PWD/${p#./}" '$1 == "module" && $4 == p { print $2 }' tag.plan)
lm=$(awk -v l="$PWD/${l#./}" '$1 == "module" && $4 == l { print $2 }' tag.plan)
[ -n "$ptail" ] && [ -n "$lleaf" ] && [ -n "$far" ] && [ -n "$pm" ] && [ -n "$lm" ] ||
	fail "two clones: no fx_tag_tail, fx_tag_leaf, call in fx_tag_far or modules in tag.plan"
site2=$(printf '%#x' $(($(nm "$p" | awk '$3 == "fx_tag_far" { print "0x" $1 }') + far)))
{
	awk '$1 == "clone" || $1 == "end" { exit } { print }' tag.plan
	echo "clone 0 $pm $ptail $pm $site2 0"
	echo "clone 1 $lm $lleaf $pm $site2 0"
	echo "end 2"
} > two.plan
"$icpp" rewrite "$p" -m map.icpp -o rw4 --lib "$l" --plan two.plan > rewrite4.log 2>&1 ||
	fail "rewrite --plan (two clones): $(tail -1 rewrite4.log)"
grep -q "^icpp rewrite: rw4: .* 1 functions cloned (1 by dispatch), 1 calls tagged," rewrite4.log ||
	fail "two clones: $(grep 'functions cloned' rewrite4.log)"
LD_LIBRARY_PATH=rw4.libs ./rw4 > rw4.out && cmp -s orig.out rw4.out || fail "the two clones' output"
LD_LIBRARY_PATH=rw4.libs "$icpp" verify rw4 > /dev/null 2> verify4.log ||
	fail "verify (two clones): $(tail -3 verify4.log)"
grep -q " 0 at another height, 0 not predicted; 0 predicted paths not taken" verify4.log ||
	fail "two clones: $(grep observed verify4.log)"
"$icpp" paths rw4.icpp | grep -q "fx_tag_far > __icpp_clone_0_fx_tag_tail$" ||
	fail "two clones: no frame of fx_tag_tail's clone predicted"

# ten tagged calls, ten clones: fx_tag_many calls the leaf from ten
# callsites, each taken by a clone of its own; the library's dispatch
# searches the ten tags, and training the rewritten pair must see each call
# enter its own clone (after the leaf's hooked entry, which verify's
# rw_collapse drops)
many=$(nm "$p" | awk '$3 == "fx_tag_many" { print "0x" $1 }')
offs=$("$icpp" paths --callsites map.icpp | sed -n 's/.* > fx_tag_many+\(0x[0-9a-f]*\) > fx_tag_leaf$/\1/p' | sort -u)
[ -n "$many" ] && [ "$(echo "$offs" | wc -l)" = 10 ] || fail "ten tags: not ten calls in fx_tag_many: $offs"
{
	awk '$1 == "clone" || $1 == "end" { exit } { print }' tag.plan
	k=0
	for off in $offs; do
		echo "clone $k $lm $lleaf $pm $(printf '%#x' $((many + off))) 0"
		k=$((k + 1))
	done
	echo "end 10"
} > many.plan
"$icpp" rewrite "$p" -m map.icpp -o rw5 --lib "$l" --plan many.plan > rewrite5.log 2>&1 ||
	fail "rewrite --plan (ten tags): $(tail -1 rewrite5.log)"
grep -q "^icpp rewrite: rw5: .* 10 calls tagged," rewrite5.log &&
	grep -q "^icpp rewrite: rw5.libs/$ln: .* 10 functions cloned (10 by dispatch)" rewrite5.log ||
	fail "ten tags: $(grep 'functions cloned' rewrite5.log)"
LD_LIBRARY_PATH=rw5.libs ./rw5 > rw5.out && cmp -s orig.out rw5.out || fail "the ten tags' output"
LD_LIBRARY_PATH=rw5.libs "$icpp" train -q -o many.obs -- ./rw5 > /dev/null || fail "ten tags: train"
"$icpp" paths --callsites many.obs > many.paths || fail "ten tags: paths"
k=0
for off in $offs; do
	# the call runs in its stub __icpp_tag_SITE: the frames entered from there
	stub=$(nm -S rw5 | awk -v s="__icpp_tag_$(printf '%x' $((many + off)))" '$4 == s { print $1, $2 }')
	[ -n "$stub" ] || fail "ten tags: no stub for fx_tag_many+$off"
	lo=$((0x${stub% *})) hi=$((0x${stub% *} + 0x${stub#* }))
	got=$(sed -n 's/.* > fx_tag_many \[rw5+\(0x[0-9a-f]*\)\] > \(.*\)$/\1 \2/p' many.paths |
		while read -r a fn; do
			[ $((a)) -ge $lo ] && [ $((a)) -lt $hi ] && echo "$fn"
		done | sort -r | tr '\n' ' ')
	want="fx_tag_leaf __icpp_clone_${k}_fx_tag_leaf "
	[ "$got" = "$want" ] || fail "ten tags: the call at fx_tag_many+$off enters '$got', not $want"
	k=$((k + 1))
done

# a chain across modules: a clone of fx_a for fx_b's call, and a clone of
# the leaf for the copy, inside fx_a's clone, of fx_a's call of the leaf.
# The program tags the copy (its own stub, or its trampoline when the copy
# is wrapped) and the library's dispatch tests that tag
pa=$(nm "$p" | awk '$3 == "fx_a" { print "0x" $1 }')
pb=$(nm "$p" | awk '$3 == "fx_b" { print "0x" $1 }')
read -r boff aoff <<< "$("$icpp" paths --callsites map.icpp |
	sed -n 's/.* > fx_b+\(0x[0-9a-f]*\) > fx_a+\(0x[0-9a-f]*\) > fx_tag_leaf$/\1 \2/p' | head -1)"
[ -n "$pa" ] && [ -n "$pb" ] && [ -n "$aoff" ] || fail "chain across modules: no fx_b > fx_a > leaf in the map"
ba=$(printf '%#x' $((pb + boff))) al=$(printf '%#x' $((pa + aoff)))
# big: the program with a large section that is not loaded, so that its
# new code lands above the address the first pass of the rewrite assumed
# (the stub's name, which gives training its caller, must have the final one)
head -c 200000 /dev/zero > pad.bin
objcopy --add-section .icpp_test_pad=pad.bin --set-section-flags .icpp_test_pad=noload,readonly \
	"$p" big || fail "objcopy"
for v in 0 64 big; do
	wrapped=${v/big/0} in=$p
	[ $v = big ] && in=./big
	{
		awk '$1 == "clone" || $1 == "end" { exit } { print }' tag.plan
		echo "clone 0 $pm $pa $pm $ba 0"
		echo "clone 1 $lm $lleaf $pm $al 0 in 0"
		[ $wrapped = 0 ] && echo "end 2" || { echo "clone-wrap 0 $pm $al $wrapped"; echo "end 3"; }
	} > cross$v.plan
	o=rwx$v
	"$icpp" rewrite "$in" -m map.icpp -o $o --lib "$l" --plan cross$v.plan > $o.log 2>&1 ||
		fail "rewrite --plan (chain across modules, $v): $(tail -1 $o.log)"
	grep -q "^icpp rewrite: $o: .* 1 functions cloned (0 by dispatch), 1 calls tagged," $o.log &&
		grep -q "^icpp rewrite: $o.libs/$ln: .* 1 functions cloned (1 by dispatch)" $o.log ||
		fail "chain across modules, $v: $(grep 'functions cloned' $o.log)"
	stub=$(nm $o | sed -n 's/.* t __icpp_tag_\([0-9a-f]*\)$/\1/p')
	clone=$(nm -S $o | awk '$4 == "__icpp_clone_0_fx_a" { print $1, $2 }')
	if [ $wrapped = 0 ]; then
		[ -n "$stub" ] && [ $((0x$stub)) -ge $((0x${clone% *})) ] &&
			[ $((0x$stub)) -lt $((0x${clone% *} + 0x${clone#* })) ] ||
			fail "chain across modules, $v: the stub __icpp_tag_$stub names no call in fx_a's clone ($clone)"
	else
		[ -z "$stub" ] || fail "chain across modules, $v: a stub beside the trampoline"
	fi
	LD_LIBRARY_PATH=$o.libs ./$o > $o.out && cmp -s orig.out $o.out ||
		fail "chain across modules, $v: the output"
	LD_LIBRARY_PATH=$o.libs "$icpp" verify $o > /dev/null 2> $o.verify ||
		fail "verify (chain across modules, $v): $(tail -3 $o.verify)"
	grep -q " 0 at another height, 0 not predicted; 0 predicted paths not taken" $o.verify ||
		fail "chain across modules, $v: $(grep observed $o.verify)"
	"$icpp" paths $o.icpp | grep -q "fx_b > __icpp_clone_0_fx_a > __icpp_clone_0_fx_tag_leaf$" ||
		fail "chain across modules, $v: the leaf's clone is not predicted below fx_a's"
	# icpp report charges a sample in the copy's stub to fx_a's clone
	if [ $wrapped = 0 ]; then
		"$t_report" "$PWD/$o" "$PWD" > report.$o.log 2>&1 ||
			fail "t_report_tags $o: $(tail -3 report.$o.log)"
	fi
done

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
