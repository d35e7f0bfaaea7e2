#!/bin/bash
# icpp verify's classes beyond "at the predicted height": a callee below a
# frame whose size varies (seen at several heights in training, at another
# now), a path with no frame of the rewritten program at another height (the
# rewrite cannot move it), and a real wrong height, listed first by --show.
#   run_verify.sh ICPP WORK PROG OTHER     (OTHER: another program)
set -u
icpp=$1 work=$2 prog=$3 other=$4
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work" && cp "$prog" "$work/prog" && cp "$other" "$work/other" &&
	cd "$work" || fail "setup"
run() { "$icpp" verify prog.rw -m prog.rw.icpp --exec /bin/sh --show 3 -- -c "$1" > /dev/null 2> "$2"; }

"$icpp" train -q -o map.icpp -- /bin/sh -c "./prog 1 2 && ./other 1" > /dev/null || fail "train"
"$icpp" rewrite ./prog -m map.icpp -o prog.rw --everything=32,16,0 > rewrite.log 2>&1 ||
	fail "rewrite: $(tail -1 rewrite.log)"

# leaf() below sized(3): a third height of a callsite path trained at two
run "./prog.rw 3 && ./other 1" varying.log || fail "a varying frame fails verify: $(tail -3 varying.log)"
grep -q "^icpp verify: [1-9][0-9]* call paths below a frame whose size varies" varying.log ||
	fail "no varying paths counted: $(grep observed varying.log)"

# other's leaf() at another height: no frame of prog.rw on its path
run "./prog.rw 1 && ./other 5" outside.log || fail "another program's variation fails verify: $(tail -3 outside.log)"
grep -q "^icpp verify: [1-9][0-9]* call paths with no frame of prog.rw" outside.log ||
	fail "no outside paths counted: $(grep observed outside.log)"

# a crash fails verify, whatever the paths before it (a rewrite that hit
# int3 under training passed with the 42 paths before it, session 54); a
# signal sent to stop the program does not
run './prog.rw 1 2 && ./other 1 && kill -TRAP $$' crash.log && fail "a crash passes verify"
grep -q "FAILED: the run crashed (Trace/breakpoint trap)" crash.log || fail "no crash said: $(tail -1 crash.log)"
# (sh's own kill is no path training saw: --allow-new)
"$icpp" verify prog.rw -m prog.rw.icpp --exec /bin/sh --allow-new -- -c './prog.rw 1 2 && kill -TERM $$' \
	> /dev/null 2> term.log || fail "a run stopped by SIGTERM fails verify: $(tail -2 term.log)"
grep -q "was killed by signal 15" term.log || fail "the stop is not said: $(tail -3 term.log)"

# trained at one height only: a new height of prog.rw's own path is wrong
"$icpp" train -q -o one.icpp -- ./prog 1 > /dev/null || fail "train (one size)"
"$icpp" rewrite ./prog -m one.icpp -o prog.rw --everything=32,16,0 > rewrite1.log 2>&1 || fail "rewrite (one size)"
run "./prog.rw 2; ./other 7" wrong.log && fail "a wrong height passes verify"
grep -q "FAILED: call paths at another height" wrong.log || fail "not failed for the height: $(tail -1 wrong.log)"
[ "$(grep -m1 -E '^  (wrong height|not predicted|under a)' wrong.log | cut -c3-14)" = "wrong height" ] ||
	fail "--show does not list the wrong height first: $(grep -m1 '^  ' wrong.log)"
echo ok
