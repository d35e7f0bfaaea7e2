#!/bin/bash
# Precision under the rewriter's capability (docs/bench-disambig.md): the plan icpp rewrite
# would apply to each real program and the libraries its workload spends most in, over seeds.
#   bench/disambig/capability.sh BUILD_DIR MAPS_DIR OUT_DIR [icpp plan options...]
# MAPS_DIR as train_maps.sh makes it.  SEEDS="1 2 3" (the default) names the seeds, PROGS="lua
# cmake" some of lua perl sqlite3 python3 tcl cmake.  Prints, per program, the % of paths and of
# reducible paths precise for each seed and their means; OUT_DIR/PROG.sSEED.{plan,log} keep
# each plan and icpp plan's report.  The libraries are those run_time.sh rewrites with the
# program, less libm, libz and libexpat, which hold few of the maps' paths (python3's libm: 12).
set -eu
[ $# -ge 3 ] || { echo "usage: $0 BUILD_DIR MAPS_DIR OUT_DIR [plan options]" >&2; exit 2; }
icpp=$(cd "$1" && pwd)/cli/icpp
maps=$(cd "$2" && pwd)
mkdir -p "$3"
out=$(cd "$3" && pwd)
shift 3
L=/lib/x86_64-linux-gnu

for prog in ${PROGS:-lua perl sqlite3 python3 tcl cmake}; do
    case $prog in
    lua) bins="/usr/bin/lua5.4 $L/libc.so.6";;
    perl) bins="/usr/bin/perl $L/libc.so.6";;
    sqlite3) bins="/usr/bin/sqlite3 $L/libsqlite3.so.0 $L/libc.so.6";;
    python3) bins="/usr/bin/python3.11 $L/libc.so.6 $(/usr/bin/python3.11 -c 'import _json; print(_json.__file__)')";;
    tcl) bins="/usr/bin/tclsh8.6 $L/libtcl8.6.so $L/libc.so.6";;
    cmake) bins="/usr/bin/cmake $L/libstdc++.so.6 $L/libc.so.6";;
    *) echo "$0: no program $prog" >&2; exit 2;;
    esac
    opt=()
    for b in $bins; do opt+=(--binary "$b"); done
    line="" sum=0 sumr=0 n=0
    for seed in ${SEEDS:-1 2 3}; do
        log=$out/$prog.s$seed.log
        "$icpp" plan "$maps/$prog.icpp" "${opt[@]}" --seed "$seed" -q -o "$out/$prog.s$seed.plan" "$@" \
            >"$log" 2>&1 || { echo "$0: icpp plan $prog (seed $seed): $(tail -1 "$log")" >&2; exit 1; }
        p=$(awk '/^precise paths/ { sub("%", "", $4); print $4 }' "$log")
        r=$(awk '/^  of the reducible paths/ { sub("%", "", $6); print $6 }' "$log")
        line="$line $p/$r"
        sum=$(echo "$sum $p" | awk '{ print $1 + $2 }')
        sumr=$(echo "$sumr $r" | awk '{ print $1 + $2 }')
        n=$((n + 1))
    done
    printf "%-8s paths/reducible %%, seeds %s:%s; mean %s / %s\n" "$prog" "${SEEDS:-1 2 3}" "$line" \
        "$(echo "$sum $n" | awk '{ printf "%.2f", $1 / $2 }')" "$(echo "$sumr $n" | awk '{ printf "%.2f", $1 / $2 }')"
done
