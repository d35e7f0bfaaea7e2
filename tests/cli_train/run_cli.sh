#!/bin/bash
# Command-level tests of `icpp train` (tests/cli_train/CMakeLists.txt):
#   run_cli.sh ICPP RUNTIME PROGS PROGS_OTHER_BUILD PROGS_STATIC WORK
set -u
icpp=$1 runtime=$2 progs=$3 other=$4 static=$5 work=$6
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail=0
check() {   # check DESCRIPTION COMMAND...: the command must succeed
	local what=$1
	shift
	if ! "$@"; then
		echo "FAIL: $what"
		fail=1
	fi
}

# The runtime is preloaded into every target: no TLS (it would move every
# thread's stack, method.md) and nothing beyond libc, ld.so (for _r_debug)
# and Capstone.
check "runtime has no PT_TLS" bash -c "! readelf -lW '$runtime' | grep -q ' TLS '"
needed=$(readelf -dW "$runtime" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort | tr '\n' ' ')
check "runtime needs only libc, ld.so and Capstone (got: $needed)" \
	test "$needed" = "ld-linux-x86-64.so.2 libc.so.6 libcapstone.so.4 "

# Exit status and output are the program's own.
"$icpp" train -q -o exit.icpp -- "$progs" exit 42 > exit.out 2> exit.err
rc=$?
check "exit status passes through (got $rc)" test $rc -eq 42
check "a pathmap is written when the program fails" test -s exit.icpp

# Death by a signal: icpp dies by the same signal, after writing the map.
bash -c "'$icpp' train -q -o segv.icpp -- '$progs' segv; echo \$? > segv.rc" 2> segv.err
check "SIGSEGV passes through (got $(cat segv.rc))" test "$(cat segv.rc)" -eq $((128 + 11))
check "the map of a crashed program is written" test -s segv.icpp
check "the crashed program's path to work() is in the map" \
	bash -c "'$icpp' paths segv.icpp --function work | grep -q 'main > work'"

# A handler on a sigaltstack runs off the thread's stack: reported, not recorded.
"$icpp" train -o alt.icpp -- "$progs" altstack > alt.out 2> alt.err
check "altstack program output" grep -qx "handled 10" alt.out
check "entries off the stack are reported" grep -q "entries off the thread stack" alt.err
check "no path ends in the altstack handler's callee" \
	bash -c "! '$icpp' paths alt.icpp --function handler_work | grep -q handler_work"

# The pathmap does not depend on the environment's size: frames below one that
# realigns the stack (ld.so's lazy-binding resolver; this program binds lazily)
# are reported, not recorded, since their heights follow start_stack mod 64.
for pad in 8 72; do
	env -i PATH=/usr/bin:/bin PAD="$(printf "%0${pad}d" 0)" \
		"$icpp" train -o env$pad.icpp -- "$progs" print a > /dev/null 2> env$pad.err
	"$icpp" paths env$pad.icpp | awk '{ $2 = ""; print }' | sort > env$pad.paths
done
check "same paths and heights whatever the environment size" cmp -s env8.paths env72.paths
check "lazy binding under a realigned frame is reported" grep -q "realign the stack" env8.err

# A frame that grows (alloca) between two calls leaves the first callee on the
# shadow stack at the second call: the collector sees the callsite is in
# grower(), not in first(), and attaches second() to grower().
"$icpp" train -o grow.icpp -- "$progs" alloca > /dev/null 2> grow.err
check "second() is grower's child" \
	bash -c "'$icpp' paths grow.icpp --function second | grep -q 'grower > second\$'"
check "second() is not recorded under the returned first()" \
	bash -c "! '$icpp' paths grow.icpp --function second | grep -q 'first > second'"
check "the correction is reported" grep -q "past a returned frame" grow.err

# A library found through a relative LD_LIBRARY_PATH entry has a relative
# name ("./libcli_lib.so"): it is trained all the same.
libdir=$(dirname "$progs")
(cd "$libdir" && LD_LIBRARY_PATH=. "$icpp" train -q -o "$work/lib.icpp" -- "$progs" lib) > lib.out
check "library program output" grep -qx 6 lib.out
check "a library loaded by a relative name is trained" \
	bash -c "'$icpp' paths lib.icpp --function lib_work | grep -q 'main > lib_work\$'"
# stats --module finds it by the build-id of the file named, whatever name the
# loader used, and counts only the paths through it
check "stats --module by file" \
	bash -c "'$icpp' stats --top 0 --module '$libdir/libcli_lib.so' lib.icpp | grep -q '^only the paths with a frame of .*libcli_lib.so\$'"
check "stats --module counts fewer paths than the whole map" test \
	"$("$icpp" stats --json --top 0 --module "$libdir/libcli_lib.so" lib.icpp | grep -o '"paths": [0-9]*')" \
	!= "$("$icpp" stats --json --top 0 lib.icpp | grep -o '"paths": [0-9]*')"

# A handler on the thread's own stack: its heights depend on where the kernel
# aligned the signal frame, so it is reported and not recorded; the frames
# after it are recorded with the right parent.
"$icpp" train -o sig.icpp -- "$progs" signal > sig.out 2> sig.err
check "signal program output" grep -qx "handled 11" sig.out
check "entries in signal handlers are reported" grep -q "entries in signal handlers" sig.err
check "nothing under the handler is recorded" \
	bash -c "! '$icpp' paths sig.icpp | grep -q handler_work"
check "after() follows main once the handler returned" \
	bash -c "'$icpp' paths sig.icpp --function after | grep -q 'main > after\$'"

# --append merges runs of the same binary and refuses another build of it.
cp "$progs" ./progs
"$icpp" train -q -o once.icpp -- ./progs print a > /dev/null
"$icpp" train -q -o app.icpp -- ./progs print a > /dev/null
"$icpp" train -q -o app.icpp --append -- ./progs print b > /dev/null
check "--append of the same binary succeeds" test $? -eq 0
entries() { "$icpp" stats --json "$1" | grep -o '"entries": [0-9]*' | head -1 | grep -o '[0-9]*$'; }
check "--append adds entries ($(entries once.icpp) then $(entries app.icpp))" \
	test "$(entries app.icpp)" -gt "$(entries once.icpp)"
cp "$other" ./progs
before=$(md5sum app.icpp)
"$icpp" train -q -o app.icpp --append -- ./progs print c > /dev/null 2> other.err
rc=$?
check "--append of another build fails with 1 (got $rc)" test $rc -eq 1
check "the refusal says to train again" grep -q "different build" other.err
check "a refused --append leaves the map untouched" test "$before" = "$(md5sum app.icpp)"

# Programs icpp cannot train: one clear line, exit 1, nothing written.
"$icpp" train -o static.icpp -- "$static" exit 0 > /dev/null 2> static.err
rc=$?
check "static program refused with 1 (got $rc)" test $rc -eq 1
check "static refusal says why" grep -q "statically linked" static.err
check "no map for a static program" test ! -e static.icpp
"$icpp" train -o none.icpp -- ./no-such-program 2> none.err
rc=$?
check "missing program: exit 1 (got $rc)" test $rc -eq 1
check "missing program: one line" test "$(wc -l < none.err)" -eq 1
"$icpp" train > /dev/null 2>&1
check "no program: usage error 2" test $? -eq 2
check "no temporary files left" bash -c "! ls *.tmp.* 2>/dev/null | grep -q ."

# A stripped program takes its functions' names from its separate debug file
# where a -dbgsym package puts it (ICPP_DEBUGINFO_PATH stands for
# /usr/lib/debug): the same paths and heights, named.
objcopy --only-keep-debug "$progs" dbg.debug && strip -o dbg.stripped "$progs"
id=$(readelf -n "$progs" | sed -n 's/.*Build ID: *//p')
mkdir -p "debugroot/.build-id/${id:0:2}" && cp dbg.debug "debugroot/.build-id/${id:0:2}/${id:2}.debug"
ICPP_DEBUGINFO_PATH=/nonexistent "$icpp" train -q -o dbg-bare.icpp -- ./dbg.stripped exit 0
ICPP_DEBUGINFO_PATH="$work/debugroot" "$icpp" train -q -o dbg-named.icpp -- ./dbg.stripped exit 0
check "stripped, no debug file: work() has no name" \
	bash -c "! '$icpp' paths dbg-bare.icpp | grep -q 'main > work'"
check "stripped, with its debug file: main > work > work" \
	bash -c "'$icpp' paths dbg-named.icpp --function work | grep -q 'main > work > work'"
check "icpp stats says the stripped program's functions are unnamed, and why" \
	bash -c "ICPP_DEBUGINFO_PATH=/nonexistent '$icpp' stats dbg-bare.icpp |
		 grep -A2 'dbg.stripped\$' | grep -q 'functions in the map unnamed (stripped'"
check "icpp stats says nothing of it where its debug file is found" \
	bash -c "ICPP_DEBUGINFO_PATH='$work/debugroot' '$icpp' stats dbg-bare.icpp |
		 grep -A2 'dbg.stripped\$' | grep -q 'build-id' &&
		 ! ICPP_DEBUGINFO_PATH='$work/debugroot' '$icpp' stats dbg-bare.icpp |
		 grep -A2 'dbg.stripped\$' | grep -q unnamed"
check "the debug file changes no path or height" \
	bash -c "cmp <('$icpp' paths dbg-bare.icpp | awk '{print \$1, \$2}' | sort) \
		     <('$icpp' paths dbg-named.icpp | awk '{print \$1, \$2}' | sort)"

# The run directory of a session killed by SIGKILL (it keeps tmpfs memory)
# goes at the next session; one that a running session holds locked stays.
base=/dev/shm
[ -w $base ] || base=${TMPDIR:-/tmp}
stale=$(mktemp -d "$base/icpp-train.XXXXXX") live=$(mktemp -d "$base/icpp-train.XXXXXX")
echo records > "$stale/proc.1.0"
touch -d '5 minutes ago' "$stale" "$live"
flock "$live" sleep 30 > /dev/null 2>&1 &
holder=$!
sleep 0.2
"$icpp" train -q -o sweep.icpp -- "$progs" print a > /dev/null
check "a dead session's run directory is removed" test ! -e "$stale"
check "a running session's run directory stays" test -d "$live"
pkill -P $holder sleep
wait $holder 2> /dev/null
rmdir "$live"

if [ $fail -eq 0 ]; then echo "ok"; fi
exit $fail
