#!/bin/bash
# Real programs under icpp train (tests/train/CMakeLists.txt):
#   run_real.sh bzip2|lua|sort PROG GTCHECK ICPP WORK LUA_SCRIPT
# Each step runs untrained and trained (the map accumulates with --append):
# stdout, exit status and output files must be identical; then the map must
# be non-trivial, include the named modules, and report coverage.
set -u
what=$1 prog=$2 gtcheck=$3 icpp=$4 work=$5 script=$6
rm -rf "$work" && mkdir -p "$work/plain" "$work/trained" || exit 1
fail=0
append=

# step NAME CMD...: runs CMD in WORK/plain and WORK/trained.
step() {
	local name=$1
	shift
	(cd "$work/plain" && "$@" > "$name.out" 2> "$name.err"; echo $? > "$name.rc")
	(cd "$work/trained" && "$icpp" train $append -o "$work/map" -- "$@" \
		> "$name.out" 2> "$name.err"; echo $? > "$name.rc")
	append=--append
	for f in "$name.out" "$name.rc"; do
		if ! cmp -s "$work/plain/$f" "$work/trained/$f"; then
			echo "FAIL: $name: $f differs untrained / trained"
			diff "$work/plain/$f" "$work/trained/$f" | head -10
			fail=1
		fi
	done
	if [ -s "$work/trained/$name.err" ]; then
		echo "--- stderr of trained $name:"
		head -30 "$work/trained/$name.err"
	fi
}

case $what in
bzip2)
	# About 300 KB of text with some repetition.
	awk 'BEGIN { for (i = 0; i < 12000; i++) printf "%d %d lorem ipsum %s\n", i, (i * i) % 977, (i % 7 ? "dolor" : "sit amet") }' \
		> "$work/plain/in.txt"
	cp "$work/plain/in.txt" "$work/trained/in.txt"
	step compress "$prog" -k -9 in.txt
	step decompress "$prog" -dc in.txt.bz2
	for f in in.txt.bz2 decompress.out; do
		cmp -s "$work/plain/$f" "$work/trained/$f" || { echo "FAIL: $f differs"; fail=1; }
	done
	cmp -s "$work/plain/in.txt" "$work/plain/decompress.out" || { echo "FAIL: round trip"; fail=1; }
	min_paths=50
	modules="bzip2 libbz2"
	;;
lua)
	step script "$prog" "$script" result.txt
	cmp -s "$work/plain/result.txt" "$work/trained/result.txt" || { echo "FAIL: result.txt differs"; fail=1; }
	min_paths=500
	modules="lua5.4"
	;;
sort)
	# 200,000 numbers in a scrambled order: GNU sort's mergesort calls
	# itself from two callsites at one height, a node per call before the
	# runtime kept one subtree per sibling group (docs/training.md)
	awk 'BEGIN { x = 1; for (i = 0; i < 200000; i++) { x = (x * 1103515245 + 12345) % 2147483648; print x % 1000003 } }' \
		> "$work/plain/in.txt"
	cp "$work/plain/in.txt" "$work/trained/in.txt"
	step sort "$prog" -n --parallel=2 -S 50M in.txt
	min_paths=100
	modules="sort libc"
	nodes=$("$icpp" stats "$work/map" 2>/dev/null | sed -n 's/.* \([0-9]*\) nodes$/\1/p')
	if [ -z "$nodes" ] || [ "$nodes" -gt 20000 ]; then
		echo "FAIL: sort's map has ${nodes:-no} nodes (a subtree per recursion's call?)"
		fail=1
	fi
	;;
*)
	echo "usage: run_real.sh bzip2|lua|sort PROG GTCHECK ICPP WORK LUA_SCRIPT" >&2
	exit 2
	;;
esac

if [ -f "$work/map" ]; then
	"$gtcheck" real "$work/map" $min_paths $modules || fail=1
	# icpp train's summary and icpp stats must report coverage per module.
	if ! grep -q 'coverage' "$work"/trained/*.err; then
		echo "FAIL: icpp train printed no coverage"
		fail=1
	fi
	if ! "$icpp" stats --json "$work/map" > "$work/stats.json"; then
		echo "FAIL: icpp stats failed"
		fail=1
	elif ! grep -q '"functions_hooked"' "$work/stats.json"; then
		echo "FAIL: icpp stats --json reports no coverage"
		fail=1
	fi
else
	echo "FAIL: icpp train wrote no map"
	fail=1
fi
[ $fail = 0 ] && echo "PASS: $what"
exit $fail
