#!/bin/bash
# The most clones by dispatch a function takes (RW_MAX_DISPATCH, 128), on
# bench/rewrite/dispatch.S: bench_work called once from each of 129
# indirect callsites (and N times from a hot one).
#  - K clones of bench_work, one per cold callsite (hand-made plans): K=30
#    put, in rw_write's first pass, a clone FDE's pc-relative pointer on its
#    own field (refused as a null pointer) before that pass kept the tables
#    apart from the code; K=128 searches 128 return addresses.  Each runs
#    with the original's output and verifies with every path precise;
#  - a 129th clone is refused, nothing written;
#  - bench_work in a library, cloned there for the program's 128 tagged
#    calls: its dispatch searches 128 tags, and the pair verifies.
#   run_dispatch_many.sh ICPP CC WORK DISPATCH_S
set -u
icpp=$1 cc=$2 work=$3 src=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || fail "setup"
"$cc" -O2 "$src" -o dispatch || fail "build"
"$cc" -O2 -shared -fPIC -DBENCH_LIB "$src" -o libbenchwork.so || fail "build the library"
"$cc" -O2 -DBENCH_MAIN "$src" -L. -lbenchwork -Wl,-rpath,'$ORIGIN' -o dispatch2 || fail "build"
./dispatch 1000 > orig.out || fail "the program fails"

# plan K MODULE-OF-bench_work PROG [LIB]: clones of bench_work for the first
# K cold callsites of PROG (a callsite is its return address - 1)
plan() {
	local k=$1 prog=$2 lib=${3:-}
	local work_at site m=0
	[ -n "$lib" ] && m=1
	work_at=$(nm "${lib:-$prog}" | awk '$3 == "bench_work" { print "0x" $1 }')
	echo "icpp-plan 1"
	echo "unit functions"
	echo "module 0 $(readelf -n "$prog" | awk '/Build ID/ { print $3 }') $PWD/${prog#./}"
	[ -n "$lib" ] && echo "module 1 $(readelf -n "$lib" | awk '/Build ID/ { print $3 }') $PWD/${lib#./}"
	for c in $(seq 0 $((k - 1))); do
		site=$(nm "$prog" | awk -v s="bench_site_$((c + 1))" '$3 == s { print "0x" $1 }')
		echo "clone $c $m $work_at 0 $(printf '%#x' $((site - 1))) 0"
	done
	echo "end $k"
}

"$icpp" train -q -o map.icpp -- ./dispatch 1000 > /dev/null || fail "train"
for k in 30 128 129; do
	plan $k ./dispatch > k$k.plan
	if [ $k = 129 ]; then
		"$icpp" rewrite ./dispatch -m map.icpp -o k$k --plan k$k.plan > k$k.log 2>&1 &&
			fail "129 clones by dispatch accepted"
		grep -q "more than 128 dispatched clones" k$k.log || fail "K=129: $(tail -1 k$k.log)"
		[ -e k$k ] && fail "K=129: written after the refusal"
		continue
	fi
	"$icpp" rewrite ./dispatch -m map.icpp -o k$k --plan k$k.plan > k$k.log 2>&1 ||
		fail "rewrite K=$k: $(tail -1 k$k.log)"
	grep -q "$k functions cloned ($k by dispatch)" k$k.log || fail "K=$k: $(grep cloned k$k.log)"
	./k$k 1000 > k$k.out && cmp -s orig.out k$k.out || fail "K=$k: the output differs"
	"$icpp" verify k$k -- 1000 > /dev/null 2> k$k.verify || fail "verify K=$k: $(tail -2 k$k.verify)"
	grep -q " 0 at another height, 0 not predicted; 0 predicted paths not taken" k$k.verify ||
		fail "K=$k: $(grep observed k$k.verify)"
done

"$icpp" train -q -o map2.icpp -- ./dispatch2 1000 > /dev/null || fail "train (two modules)"
plan 128 ./dispatch2 ./libbenchwork.so > t128.plan
"$icpp" rewrite ./dispatch2 -m map2.icpp -o t128 --lib ./libbenchwork.so --plan t128.plan > t128.log 2>&1 ||
	fail "rewrite 128 tags: $(tail -1 t128.log)"
grep -q "^icpp rewrite: t128: .* 128 calls tagged," t128.log &&
	grep -q "128 functions cloned (128 by dispatch)" t128.log || fail "128 tags: $(grep cloned t128.log)"
LD_LIBRARY_PATH=t128.libs ./t128 1000 > t128.out && cmp -s orig.out t128.out || fail "128 tags: the output"
LD_LIBRARY_PATH=t128.libs "$icpp" verify t128 -- 1000 > /dev/null 2> t128.verify ||
	fail "verify 128 tags: $(tail -2 t128.verify)"
grep -q " 0 at another height, 0 not predicted; 0 predicted paths not taken" t128.verify ||
	fail "128 tags: $(grep observed t128.verify)"
echo ok
