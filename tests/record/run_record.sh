#!/usr/bin/env bash
# run_record.sh ICPP RT_PROG WORKDIR PPROF_FOLD MODE: the end-to-end tests of
# icpp record / icpp report on rt_prog (see rt_prog.c for its call trees).
#   train         train rt_prog once into WORKDIR/rt.icpp (fixture)
#   bpf | perf    launch rt_prog under that backend, report, check everything
#                 (bpf: also a tiny count map, whose drops must be reported)
#   attach_bpf | attach_perf   the same, attached to a running rt_prog (-p)
#   interrupt     Ctrl-C (SIGINT) ends recording with a complete file
#   unprivileged  the perf backend as an unprivileged user (created if root)
#   tls           worker threads of tls_prog and tls_prog_wide (next to
#                 RT_PROG): perf backend as root and unprivileged, and bpf
#   weights       icpp plan --samples: the plan weighs paths by a recording,
#                 as icpp report attributes its samples
#   wraps         rt_prog rewritten with callsite wrappers only: t_report_wrap
#                 (next to RT_PROG) charges a trampoline's samples to the caller
#   errors        bad files, usage errors, absent hardware events
set -u
ICPP=$1 PROG=$2 WORK=$3 PFOLD=$4 MODE=$5
MAP=$WORK/rt.icpp
mkdir -p "$WORK"
cd "$WORK" || exit 1

fail() { echo "FAIL ($MODE): $*" >&2; exit 1; }
note() { echo "  $*"; }

# Percentage (one decimal) of the folded samples whose stack ends with $2.
share() { awk -v suf="$2" '{ n = $NF; $NF = ""; sub(/ $/, ""); t += n;
	if (length($0) >= length(suf) && substr($0, length($0) - length(suf) + 1) == suf) s += n }
	END { printf "%.1f", t ? 100 * s / t : 0 }' "$1"; }
total() { awk '{ t += $NF } END { print t + 0 }' "$1"; }
between() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }
# The number in the class line of a --validate report ("  incorrect  0.0%  N").
vcount() { awk -v k="$2" '/^Validation against/ { v = 1 } v && index($0, "  " k " ") == 1 { print $NF; exit }' "$1"; }

# A share outside its range: what record and report said first, so that a
# failure shows where the samples went (dropped, lost, missing or another
# path), then the failure.  Record's stderr is SAMPLES.log when launched,
# TAG.log when attached.
share_fail() {
	local f
	for f in "$1.log" "$2.log"; do
		[ -f "$f" ] && { echo "--- record's log ($f):" >&2; cat "$f" >&2; }
	done
	echo "--- report's summary ($2.txt):" >&2
	sed -n '1,14p' "$2.txt" >&2
	fail "$3"
}

# Everything a report of rt_prog's samples must show.
check_report() {
	local S=$1 tag=$2
	"$ICPP" report -i "$S" -m "$MAP" --validate > "$tag.txt" || fail "report --validate of $S"
	"$ICPP" report -i "$S" -m "$MAP" --format folded -o "$tag.folded" || fail "report --format folded"
	local n; n=$(total "$tag.folded")
	[ "$n" -ge 150 ] || fail "only $n samples in $tag"
	# The expected hot paths, with their shares (each thread does a third).
	local t1 t2 g a b
	t1=$(share "$tag.folded" "t1_entry;delta;epsilon;spin")
	t2=$(share "$tag.folded" "t2_entry;rec;rec;rec;spin")
	g=$(share "$tag.folded" "main;gamma_;spin")
	a=$(share "$tag.folded" "main;alpha;spin [ambiguous]")
	b=$(share "$tag.folded" "main;beta;spin [ambiguous]")
	note "$tag: $n samples: t1 $t1%, t2 $t2%, gamma $g%, alpha? $a%, beta? $b%"
	between "$t1" 18 50 || share_fail "$S" "$tag" "$tag: t1_entry > delta > epsilon > spin has $t1%, expected about 33%"
	between "$t2" 18 50 || share_fail "$S" "$tag" "$tag: t2_entry > rec > rec > rec > spin has $t2%, expected about 33%"
	between "$g" 6 30 || share_fail "$S" "$tag" "$tag: main > gamma_ > spin has $g%, expected about 17%"
	between "$a" 2 20 || share_fail "$S" "$tag" "$tag: ambiguous share of main > alpha > spin is $a%, expected about 8%"
	between "$b" 2 20 || share_fail "$S" "$tag" "$tag: ambiguous share of main > beta > spin is $b%, expected about 8%"
	# The five hottest stacks are exactly those five paths.
	awk '{ n = $NF; $NF = ""; sub(/ $/, ""); print n "\t" $0 }' "$tag.folded" | sort -t"$(printf '\t')" -k1,1nr |
		head -5 | cut -f2- |
	while read -r st; do
		case "$st" in
		*"t1_entry;delta;epsilon;spin" | *"t2_entry;rec;rec;rec;spin" | *"main;gamma_;spin" | \
		*"main;alpha;spin [ambiguous]" | *"main;beta;spin [ambiguous]") ;;
		*) fail "$tag: unexpected hot stack '$st'" ;;
		esac
	done || exit 1
	# The text report: summary, the ambiguous CID with both candidates, validation.
	grep -q "Hot call paths" "$tag.txt" || fail "$tag: no hot paths section"
	grep -Eq "spin @ height [0-9]+: 2 candidate paths" "$tag.txt" || fail "$tag: ambiguous CID of spin not listed"
	grep -q "rt_prog.c:" "$tag.txt" || fail "$tag: no file:line in the text report"
	local inc prec amb miss
	inc=$(vcount "$tag.txt" incorrect)
	prec=$(vcount "$tag.txt" "precise (correct)")
	amb=$(vcount "$tag.txt" "ambiguous, contains the truth")
	miss=$(vcount "$tag.txt" missing)
	note "$tag: validation: precise $prec, ambiguous-with-truth $amb, incorrect $inc, missing $miss"
	[ "$inc" = 0 ] || { sed -n '/Incorrect samples/,$p' "$tag.txt" >&2; fail "$tag: --validate found $inc incorrect samples"; }
	[ "${prec:-0}" -gt 0 ] && [ "${amb:-0}" -gt 0 ] || fail "$tag: validation has no precise or no ambiguous samples"
	[ "$((miss * 100))" -le "$((n * 5))" ] || fail "$tag: $miss of $n samples missing (> 5%)"
	# SVG: well-formed, the paths drawn.
	"$ICPP" report -i "$S" -m "$MAP" --format svg -o "$tag.svg" || fail "report --format svg"
	if command -v xmllint >/dev/null; then xmllint --noout "$tag.svg" || fail "$tag.svg is not well-formed XML"; fi
	grep -q "epsilon" "$tag.svg" && grep -q "\[ambiguous\]" "$tag.svg" || fail "$tag.svg lacks the paths"
	# pprof: decodes with protobuf-c into the same stacks and total.
	if [ -n "$PFOLD" ]; then
		"$ICPP" report -i "$S" -m "$MAP" --format pprof -o "$tag.pb.gz" || fail "report --format pprof"
		"$PFOLD" "$tag.pb.gz" > "$tag.pprof.raw" || fail "$tag.pb.gz does not decode"
		awk '{ n = $NF; $NF = ""; sub(/ $/, ""); c[$0] += n } END { for (k in c) print k, c[k] }' \
			"$tag.pprof.raw" | sort > "$tag.pprof.folded"
		[ "$(total "$tag.pprof.folded")" = "$n" ] || fail "$tag: pprof has $(total "$tag.pprof.folded") samples, folded $n"
		diff <(awk '{ $NF = ""; print }' "$tag.pprof.folded" | sort) \
		     <(awk '{ $NF = ""; print }' "$tag.folded" | sort) >/dev/null ||
			fail "$tag: pprof and folded stacks differ"
	fi
}

record_launch() {   # BACKEND OUT [icpp record options...]
	local be=$1 out=$2; shift 2
	"$ICPP" record --backend "$be" --validate -o "$out" "$@" -- "$PROG" 2> "$out.log" ||
		{ cat "$out.log" >&2; fail "record --backend $be"; }
	grep -q "backend $be" "$out.log" || fail "record did not say it used backend $be"
}

# record_as_user PROG OUT [icpp record options...]: record PROG as the
# unprivileged user icpp-test when root (created if missing; PROG is copied to
# a folder of that user's, where report reads it later), else as the caller.
# stderr goes to OUT.log.
record_as_user() {
	local prog=$1 out=$2; shift 2
	if [ "$(id -u)" != 0 ]; then
		"$ICPP" record "$@" -o "$out" -- "$prog" 2> "$out.log" ||
			{ cat "$out.log" >&2; fail "record as $(id -un)"; }
		return
	fi
	local u=icpp-test d
	id "$u" >/dev/null 2>&1 || useradd -r -M -s /usr/sbin/nologin "$u" ||
		{ echo "SKIP: cannot create an unprivileged user"; exit 77; }
	d=$(mktemp -d /tmp/icpp-unpriv.XXXXXX)
	USER_DIRS="${USER_DIRS:-} $d"
	trap 'rm -rf $USER_DIRS' EXIT
	cp "$prog" "$d/" && chown -R "$u" "$d" && chmod 755 "$d"
	(cd "$d" && runuser -u "$u" -- "$ICPP" record "$@" -o out.samples -- "./${prog##*/}") 2> "$out.log" ||
		{ cat "$out.log" >&2; fail "record as $u"; }
	cp "$d/out.samples" "$out"
}

# check_tls TAG MAP: TAG.samples of tls_prog: every thread's samples on its
# own path (the workers' base is their thread pointer), none incorrect.
check_tls() {
	local tag=$1 map=$2
	"$ICPP" report -i "$tag.samples" -m "$map" --validate > "$tag.txt" || fail "report --validate of $tag"
	"$ICPP" report -i "$tag.samples" -m "$map" --format folded -o "$tag.folded" || fail "report --format folded of $tag"
	local n w1 w2 m inc miss
	n=$(awk '/^icpp report:/ { print $3; exit }' "$tag.txt")
	w1=$(share "$tag.folded" "w1_entry;w1_work;spin")
	w2=$(share "$tag.folded" "w2_entry;w2_outer;w2_inner;spin")
	m=$(share "$tag.folded" "main;m_work;spin")
	inc=$(vcount "$tag.txt" incorrect)
	miss=$(vcount "$tag.txt" missing)
	note "$tag: $n samples: worker 1 $w1%, worker 2 $w2%, main $m%; validation: incorrect $inc, missing $miss"
	[ "${n:-0}" -ge 100 ] || fail "$tag: only ${n:-0} samples"
	[ "$inc" = 0 ] || fail "$tag: --validate found $inc incorrect samples"
	# Missing samples may be ld.so's start-up (cpuid is slow in a VM), or
	# _start after it popped argc (its SP above the stack's base, the height
	# origin), never tls_prog's own functions.
	sed -n '/^Missing/,/^$/p' "$tag.txt" > "$tag.missing"
	! grep " (${map%.icpp}) " "$tag.missing" | grep -qv " _start (${map%.icpp}) .*SP off the thread's stack" ||
		{ cat "$tag.missing" >&2; fail "$tag: samples of ${map%.icpp} missing"; }
	# Shares are of CPU time: the same work takes more of it on a slower
	# CPU (this host's two differ up to twofold), so a thread's share moves
	# with where it ran (main 7.9% seen under ctest -j2, its work a fifth).
	between "$w1" 20 60 && between "$w2" 20 60 && between "$m" 3 45 ||
		fail "$tag: shares worker 1 $w1%, worker 2 $w2%, main $m%: expected about 40, 40, 20"
}

start_forever() {
	rm -f forever.out
	"$PROG" forever > forever.out &
	FPID=$!
	for _ in $(seq 100); do grep -q ready forever.out 2>/dev/null && return; sleep 0.05; done
	kill "$FPID"; fail "rt_prog forever did not start"
}

case "$MODE" in
train)
	rm -f "$MAP"
	"$ICPP" train -q -o "$MAP" -- "$PROG" || fail "icpp train"
	[ -s "$MAP" ] || fail "no pathmap"
	;;
bpf|perf)
	[ "$MODE" = bpf ] && [ "$(id -u)" != 0 ] && { echo "SKIP: the bpf backend needs root"; exit 77; }
	record_launch "$MODE" "launch_$MODE.samples"
	check_report "launch_$MODE.samples" "launch_$MODE"
	if [ "$MODE" = bpf ]; then
		# A count map of 3 entries: the samples that do not fit are counted
		# and reported, and records + drops = samples.
		ICPP_RECORD_MAP_ENTRIES=3 "$ICPP" record -o small.samples -- "$PROG" 60 2> small.log ||
			{ cat small.log >&2; fail "record with a tiny map"; }
		grep -Eq "LOST [1-9][0-9]* \(map full [1-9]" small.log || { cat small.log >&2; fail "record did not report the drops"; }
		"$ICPP" report -i small.samples -m "$MAP" > small.txt || fail "report of the tiny-map file"
		grep -Eq "^LOST while recording: [1-9][0-9]* samples \([1-9][0-9]* count map full" small.txt ||
			fail "report does not show the drops"
		kept=$(awk '/^icpp report:/ { print $3; exit }' small.txt)
		lost=$(sed -n 's/^LOST while recording: \([0-9]*\) samples.*/\1/p' small.txt)
		note "tiny map: $kept samples kept, $lost dropped"
		[ "$kept" -gt 0 ] && [ "$lost" -gt 0 ] || fail "tiny map: $kept kept, $lost dropped"
	fi
	;;
attach_bpf|attach_perf)
	be=${MODE#attach_}
	[ "$be" = bpf ] && [ "$(id -u)" != 0 ] && { echo "SKIP: the bpf backend needs root"; exit 77; }
	start_forever
	"$ICPP" record --backend "$be" --validate -p "$FPID" --duration 1.5 -o "$MODE.samples" 2> "$MODE.log"
	rc=$?
	kill "$FPID"; wait "$FPID" 2>/dev/null
	[ $rc = 0 ] || { cat "$MODE.log" >&2; fail "record -p"; }
	grep -q "backend $be" "$MODE.log" || fail "record did not say it used backend $be"
	check_report "$MODE.samples" "$MODE"
	;;
interrupt)
	rm -f int.samples
	"$ICPP" record --validate -o int.samples -- "$PROG" forever > /dev/null 2> int.log &
	IPID=$!
	sleep 1.2
	kill -INT "$IPID"
	wait "$IPID"; rc=$?
	[ $rc = 0 ] || { cat int.log >&2; fail "record ended with $rc after SIGINT"; }
	grep -q "stopped by signal 2" int.log || fail "record did not say it was interrupted"
	pgrep -f "$PROG forever" >/dev/null && fail "rt_prog survived the interrupted recording"
	"$ICPP" report -i int.samples -m "$MAP" --validate > int.txt || fail "the interrupted file does not read"
	[ "$(vcount int.txt incorrect)" = 0 ] || fail "interrupted recording: incorrect samples"
	;;
unprivileged)
	record_as_user "$PROG" unpriv.samples --validate
	grep -q "backend perf (bpf needs root" unpriv.samples.log || { cat unpriv.samples.log >&2; fail "the automatic choice was not perf"; }
	"$ICPP" report -i unpriv.samples -m "$MAP" > unpriv.txt || fail "report"
	grep -q "time in the kernel was not sampled" unpriv.txt || fail "report does not say kernel time was excluded"
	check_report unpriv.samples unpriv
	;;
tls)
	for variant in tls_prog tls_prog_wide; do
		prog=$(dirname "$PROG")/$variant
		"$ICPP" train -q -o "$variant.icpp" -- "$prog" 20 || fail "icpp train $variant"
		record_tls() {   # TAG BACKEND
			"$ICPP" record --backend "$2" --validate -o "$1.samples" -- "$prog" 2> "$1.samples.log" ||
				{ cat "$1.samples.log" >&2; fail "record --backend $2 of $variant"; }
		}
		record_tls "$variant.perf" perf
		check_tls "$variant.perf" "$variant.icpp"
		record_as_user "$prog" "$variant.user.samples" --backend perf --validate
		check_tls "$variant.user" "$variant.icpp"
		if [ "$(id -u)" = 0 ]; then
			record_tls "$variant.bpf" bpf
			check_tls "$variant.bpf" "$variant.icpp"
		fi
	done
	# Another tracer (strace) holds the threads, so their fs bases cannot be
	# read: record says so in one line, and report counts the workers'
	# samples as without a base, never with a CID from a guessed base.
	# (scripts/install-deps.sh installs strace; without it the test is a skip)
	command -v strace >/dev/null || { echo "SKIP: no strace for the refused case"; exit 77; }
	prog=$(dirname "$PROG")/tls_prog
	"$ICPP" record --backend perf -o traced.samples -- strace -f -qq -o /dev/null "$prog" 100 \
		2> traced.log || { cat traced.log >&2; fail "record of tls_prog under strace"; }
	[ "$(grep -c "cannot read its threads' fs bases" traced.log)" = 1 ] ||
		{ cat traced.log >&2; fail "record did not say once that it cannot read the fs bases"; }
	"$ICPP" report -i traced.samples -m tls_prog.icpp > traced.txt || fail "report of traced.samples"
	nobase=$(awk '/ spin \(tls_prog\) +\[thread base unknown\]/ { print $2 }' traced.txt)
	note "traced: ${nobase:-0} samples of spin without a base"
	[ "${nobase:-0}" -ge 50 ] || { cat traced.txt >&2; fail "traced: the workers' samples are not marked without a base"; }
	! grep -q "(tls_prog) @ height" traced.txt || { cat traced.txt >&2; fail "traced: a sample of tls_prog got a CID it should not have"; }
	;;
weights)
	"$ICPP" record -q --backend perf -o w.samples -- "$PROG" 40 > /dev/null || fail "record"
	"$ICPP" report -i w.samples -m "$MAP" > w.txt || fail "report"
	# report's counts: "  precise  P%  N", "  ambiguous ...", "  missing ..."
	count() { awk -v k="$1" '$1 == k && $2 ~ /%$/ { print $3; exit }' w.txt; }
	p=$(count precise) a=$(count ambiguous) m=$(count missing)
	[ -n "$p" ] && [ "$((p + a))" -gt 0 ] || { cat w.txt >&2; fail "no samples on paths"; }
	"$ICPP" plan "$MAP" --samples w.samples -o w.plan > w.plan.txt 2> w.plan.log ||
		{ cat w.plan.log >&2; fail "plan --samples"; }
	grep -q "weights: $((p + a + m)) samples of w.samples" w.plan.log || { cat w.plan.log >&2; fail "plan does not count the samples as report does"; }
	# the plan's "before" is report's precise share of the samples on paths
	# (to its one decimal: shares of ambiguous samples are rounded per node)
	want=$(awk -v p="$p" -v a="$a" 'BEGIN { printf "%.2f", 100 * p / (p + a) }')
	got=$(awk '/^precise, weighted by samples/ { sub(/%/, "", $5); print $5 }' w.plan.txt)
	note "samples precise before: plan $got%, report $want%"
	between "$got" "$(awk -v w="$want" 'BEGIN { print w - 0.06 }')" "$(awk -v w="$want" 'BEGIN { print w + 0.06 }')" ||
		{ cat w.plan.txt >&2; fail "plan --samples says $got% precise before, report $want%"; }
	# a recording of another program weighs nothing: rt_prog_static shares no
	# module with the map; sh shares libc, whose start-up paths are at the
	# same heights in every program (__libc_start_main > __cxa_atexit), but
	# report takes no path through a module sh never mapped (rt_prog)
	"$ICPP" record -q --backend perf -o static.samples -- "$(dirname "$PROG")/rt_prog_static" 40 > /dev/null ||
		fail "record rt_prog_static"
	"$ICPP" record -q --backend perf -o sh.samples -- sh -c 'i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done' ||
		fail "record sh"
	for other in static sh; do
		"$ICPP" plan "$MAP" --samples $other.samples -o other.plan > /dev/null 2> other.log &&
			fail "plan with another program's samples ($other)"
		grep -q "falls on a path of" other.log || { cat other.log >&2; fail "no clear error for another program's samples ($other)"; }
		[ -e other.plan ] && fail "a plan was written from another program's samples ($other)"
	done
	"$ICPP" rewrite "$PROG" -m "$MAP" --plan w.plan --samples w.samples -o rw > /dev/null 2>&1
	[ $? = 2 ] || fail "rewrite --plan --samples is not a usage error"
	;;
wraps)
	"$ICPP" rewrite "$PROG" -m "$MAP" -o rt_wrapped --everything=0,16,0 > wraps.log 2>&1 ||
		{ cat wraps.log >&2; fail "rewrite with wrappers"; }
	"$(dirname "$PROG")/t_report_wrap" "$WORK/rt_wrapped" "$WORK" || fail "t_report_wrap"
	;;
errors)
	S=launch_perf.samples
	[ -s "$S" ] || "$ICPP" record -q --backend perf -o "$S" -- "$PROG" 10 || fail "record"
	expect() {   # STATUS PATTERN CMD...: exit status and one stderr line matching
		local want=$1 pat=$2; shift 2
		"$@" > /dev/null 2> err.txt; local rc=$?
		[ "$rc" = "$want" ] || { cat err.txt >&2; fail "'$*' exited $rc, expected $want"; }
		grep -q -- "$pat" err.txt || { cat err.txt >&2; fail "'$*': no '$pat' on stderr"; }
		[ "$want" = 2 ] || [ "$(wc -l < err.txt)" = 1 ] || { cat err.txt >&2; fail "'$*': more than one line"; }
	}
	len=$(stat -c %s "$S")
	cp "$S" corrupt.samples
	# the middle byte flipped (a fixed byte would change nothing where it
	# was that byte already: 1 recording in 256)
	mid=$(od -An -tu1 -j $((len / 2)) -N1 "$S")
	printf "\\x$(printf %02x $((mid ^ 0xff)))" |
		dd of=corrupt.samples bs=1 seek=$((len / 2)) conv=notrunc status=none
	expect 1 "checksum mismatch" "$ICPP" report -i corrupt.samples -m "$MAP"
	head -c $((len / 2)) "$S" > trunc.samples
	expect 1 "truncated sample file: $((len / 2)) of $len bytes" "$ICPP" report -i trunc.samples -m "$MAP"
	expect 1 "not an icpp sample file: it is an ELF file" "$ICPP" report -i "$PROG" -m "$MAP"
	expect 1 "a pathmap? pass it with -m" "$ICPP" report -i "$MAP" -m "$MAP"
	: > empty.samples
	expect 1 "empty file" "$ICPP" report -i empty.samples -m "$MAP"
	expect 1 "no such file\|No such file" "$ICPP" report -i /nonexistent.samples -m "$MAP"
	"$ICPP" record -q --backend perf -o plain.samples -- "$PROG" 10 || fail "record"
	expect 1 "record again with 'icpp record --validate'" "$ICPP" report -i plain.samples -m "$MAP" --validate
	expect 2 "give the pathmap with -m" "$ICPP" report -i "$S"
	expect 2 "--format is text, folded, svg or pprof" "$ICPP" report -i "$S" -m "$MAP" --format xml
	expect 2 "give either -p PID or -- CMD" "$ICPP" record
	expect 2 "-F and -c exclude each other" "$ICPP" record -F 99 -c 1000 -- true
	expect 2 "-F wants a positive number" "$ICPP" record -F 0 -- true
	expect 1 "cannot run /nonexistent/cmd" "$ICPP" record -q -o x.samples -- /nonexistent/cmd
	expect 1 "unknown event 'bogus'" "$ICPP" record -e bogus -- true
	if [ ! -e /sys/bus/event_source/devices/cpu ] && [ ! -e /sys/bus/event_source/devices/cpu_core ]; then
		expect 1 "no hardware PMU.*use -e cpu-clock" "$ICPP" record -e cycles -- true
		expect 1 "use -e cpu-clock" "$ICPP" record -e l1d-miss -- true
	else
		note "this machine has a PMU: the absent-PMU message is not exercised"
	fi
	expect 1 "no process" "$ICPP" record -p 999999 --duration 1
	;;
*)
	fail "unknown mode"
	;;
esac
echo "ok ($MODE)"
