#!/bin/sh
# Train the real-program pathmaps of the disambiguation benchmark (docs/bench-disambig.md):
#   bench/disambig/train_maps.sh BUILD_DIR OUT_DIR
# Debian bookworm's lua5.4, perl, sqlite3, python3, tclsh8.6 and cmake (C++: static constructors,
# exceptions) on the workloads beside this script.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 2; }
icpp=$(cd "$1" && pwd)/cli/icpp
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$2"
cd "$2"
for prog in /usr/bin/lua5.4 /usr/bin/perl /usr/bin/sqlite3 /usr/bin/python3 /usr/bin/tclsh8.6 /usr/bin/cmake; do
    [ -x "$prog" ] || { echo "$0: $prog is missing: apt-get install lua5.4 perl sqlite3 python3 tcl8.6 cmake" >&2; exit 1; }
done
"$icpp" train -q -o lua.icpp -- /usr/bin/lua5.4 "$here/../train/bench.lua" >/dev/null
"$icpp" train -q -o perl.icpp -- /usr/bin/perl "$here/workloads/work.pl" >/dev/null
"$icpp" train -q -o sqlite3.icpp -- /usr/bin/sqlite3 :memory: ".read $here/workloads/work.sql" >/dev/null
"$icpp" train -q -o python3.icpp -- /usr/bin/python3 "$here/workloads/work.py" >/dev/null
"$icpp" train -q -o tcl.icpp -- /usr/bin/tclsh8.6 "$here/workloads/work.tcl" >/dev/null
"$icpp" train -q -o cmake.icpp -- /usr/bin/cmake -P "$here/workloads/work.cmake" >/dev/null
for m in lua perl sqlite3 python3 tcl cmake; do printf "%-14s" "$m.icpp"; "$icpp" stats "$m.icpp" | grep "^paths\|^precise paths" | tr -s " " | tr "\n" " "; echo; done
