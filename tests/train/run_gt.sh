#!/bin/bash
# Driver of the ground-truth tests (tests/train/CMakeLists.txt).
#
#   run_gt.sh env   GTCHECK -    WORK PROG [ARGS...]
#       two untrained runs, one with an empty environment and one with an
#       extra 5000-byte variable: same stdout, exit status and ground truth.
#   run_gt.sh train GTCHECK ICPP WORK PROG [ARGS...]
#       one untrained run and one under `icpp train -o WORK/map`: same stdout,
#       exit status and ground truth; then the map against the ground truth,
#       and each function named in $GT_HOOKED was entered through its hook.
set -u
mode=$1 gtcheck=$2 icpp=$3 work=$4
shift 4
rm -rf "$work" && mkdir -p "$work" || exit 1
fail=0

# run NAME [ENV...] -- CMD...: stdout to WORK/NAME.out, ground truth to
# WORK/NAME.gt/, exit status to WORK/NAME.rc.
run() {
	local name=$1
	shift
	mkdir -p "$work/$name.gt"
	env "$@" > "$work/$name.out" 2> "$work/$name.err"
	echo $? > "$work/$name.rc"
}

same_output() {
	local a=$1 b=$2
	if ! cmp -s "$work/$a.out" "$work/$b.out"; then
		echo "FAIL: stdout of $a and $b differ:"
		diff "$work/$a.out" "$work/$b.out" | head -20
		fail=1
	fi
	if ! cmp -s "$work/$a.rc" "$work/$b.rc"; then
		echo "FAIL: exit status of $a is $(cat "$work/$a.rc"), of $b $(cat "$work/$b.rc")"
		fail=1
	fi
	for n in "$a" "$b"; do
		if [ -s "$work/$n.err" ]; then
			echo "--- stderr of $n:"
			head -30 "$work/$n.err"
		fi
	done
}

case $mode in
env)
	pad=$(printf '%05000d' 0)
	run small -i ICPP_GT="$work/small.gt" "$@"
	run big -i ICPP_GT="$work/big.gt" GT_PAD="$pad" "$@"
	same_output small big
	"$gtcheck" same "$work/small.gt" "$work/big.gt" || fail=1
	;;
train)
	run plain ICPP_GT="$work/plain.gt" "$@"
	run trained ICPP_GT="$work/trained.gt" "$icpp" train -o "$work/map" -- "$@"
	same_output plain trained
	"$gtcheck" same "$work/plain.gt" "$work/trained.gt" || fail=1
	if [ -f "$work/map" ]; then
		"$gtcheck" map "$work/map" "$work/trained.gt" || fail=1
		if [ -n "${GT_HOOKED:-}" ]; then
			"$gtcheck" hooked "$work/map" $GT_HOOKED || fail=1
		fi
	else
		echo "FAIL: icpp train wrote no map"
		fail=1
	fi
	;;
*)
	echo "usage: run_gt.sh env|train GTCHECK ICPP|- WORK PROG [ARGS...]" >&2
	exit 2
	;;
esac
[ $fail = 0 ] && echo "PASS ($mode): $*"
exit $fail
