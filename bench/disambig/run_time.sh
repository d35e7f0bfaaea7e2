#!/bin/bash
# The run time a plan adds, under the rewriter's capability (docs/bench-disambig.md,
# "Run time with the instruction cache"):
#   bench/disambig/run_time.sh BUILD_DIR MAPS_DIR OUT_DIR [icpp rewrite options...]
# MAPS_DIR as train_maps.sh makes it.  For each of lua5.4, perl, sqlite3, python3.11 (and
# its _json module), tclsh8.6 and cmake: rewrite it with its libraries by the plan of its map,
# run it on its workload
# (the output must be the original's), and count both runs under cachegrind: instructions
# + 15 x mispredicted branches + 10 x first-level misses + 100 x last-level misses, the
# rewrite's against the original's, and where the rewrite's went: the new code's dispatch
# tests (and entry wrappers), stubs, thunks and trampolines, and the rest (the original code
# and the clones, whose work moved between them: beyond the original's, the instruction
# cache's), as shares of the original's cycles; and how often a clone misses in the first-level
# instruction cache an entry, by how many entries the rewrite's map gives it (docs/bench-
# disambig.md, session 55: in sqlite3 a clone entered once a round misses at each entry, in
# python3 rarely).  PROGS="lua tcl" runs some.
set -eu
[ $# -ge 3 ] || { echo "usage: $0 BUILD_DIR MAPS_DIR OUT_DIR [rewrite options]" >&2; exit 2; }
icpp=$(cd "$1" && pwd)/cli/icpp
maps=$(cd "$2" && pwd)
mkdir -p "$3"
out=$(cd "$3" && pwd)
shift 3
here=$(cd "$(dirname "$0")" && pwd)
work=$here/workloads
L=/lib/x86_64-linux-gnu
command -v valgrind >/dev/null || { echo "$0: valgrind is missing: apt-get install valgrind" >&2; exit 1; }

# cachegrind's events by name (col) and the estimate of a line's counts (cost)
COST='/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i }
      function cost(c) { c = $col["Ir"] + 15 * ($col["Bcm"] + $col["Bim"])
                         c += 10 * ($col["I1mr"] + $col["D1mr"] + $col["D1mw"])
                         return c + 100 * ($col["ILmr"] + $col["DLmr"] + $col["DLmw"]) }'
cycles() {  # the estimate of a cachegrind output file
    awk "$COST"' /^summary:/ { printf "%.0f\n", cost() }' "$1"
}
by_kind() {  # by_kind RW ORIG: the rewrite's cycles by the kind of code that ran, % of ORIG's
    awk -v orig="$(cycles "$2")" "$COST"'
        /^fn=/ { k = "rest"
                 if ($0 ~ /^fn=__icpp_(dispatch|entry)_/) k = "dispatch"
                 else if ($0 ~ /^fn=__icpp_tag_/) k = "tag"
                 else if ($0 ~ /^fn=__icpp_(bind|bindto|promote)_/) k = "stub"
                 else if ($0 ~ /^fn=__icpp_xcall_/) k = "xcall"
                 else if ($0 ~ /^fn=__icpp_wrap_/) k = "wrap"
                 next }
        /^[0-9]/ { s[k] += cost() }
        END { printf "dispatch tests %.2f%%, tag stubs %.2f%%, bound/promoted stubs %.2f%%, ", \
                     100 * s["dispatch"] / orig, 100 * s["tag"] / orig, 100 * s["stub"] / orig
              printf "checked-call thunks %.2f%%, trampolines %.2f%%, ", 100 * s["xcall"] / orig, \
                     100 * s["wrap"] / orig
              printf "original code and clones %+.2f%%", 100 * (s["rest"] - orig) / orig }' "$1"
}
i1() {      # the first-level instruction cache misses of a cachegrind output file
    awk '/^events:/ { for (i = 2; i <= NF; i++) col[$i] = i } /^summary:/ { print $col["I1mr"] }' "$1"
}
clone_misses() {    # clone_misses MAP RW_CG: the clones' first-level instruction misses an
                    # entry, by the order of magnitude of their entries in the rewrite's map
    "$icpp" paths "$1" | awk -v cg="$2" '
        BEGIN { while ((getline l < cg) > 0)
                    if (l ~ /^events:/) { n = split(l, h, " "); for (i = 2; i <= n; i++) if (h[i] == "I1mr") c = i }
                    else if (l ~ /^fn=/) f = substr(l, 4)
                    else if (l ~ /^[0-9]/ && f ~ /^__icpp_clone_/) { split(l, v, " "); m[f] += v[c] } }
        { n = split($0, p, " > "); if (p[n] ~ /^__icpp_clone_/) e[p[n]] += $2 }
        END { for (f in e) { k = length(sprintf("%d", e[f])) - 1; cnt[k]++; ent[k] += e[f]; mis[k] += m[f] }
              for (k = 0; k < 12; k++)
                  if (cnt[k]) { printf "%s~1e%d: %d clones, %.3f", sep, k, cnt[k], mis[k] / ent[k]; sep = "; " } }'
}
cg() {      # cg OUT_FILE COMMAND...
    PYTHONHASHSEED=0 valgrind --tool=cachegrind --cache-sim=yes --branch-sim=yes \
        --cachegrind-out-file="$1" "${@:2}" >/dev/null 2>&1
}

for prog in ${PROGS:-lua perl sqlite3 python3 tcl}; do
    modules=
    case $prog in
    lua) bin=/usr/bin/lua5.4; libs="libc.so.6"; args=("$here/../train/bench.lua");;
    perl) bin=/usr/bin/perl; libs="libc.so.6 libm.so.6"; args=("$work/work.pl");;
    sqlite3) bin=/usr/bin/sqlite3; libs="libsqlite3.so.0 libc.so.6"; args=(":memory:" ".read $work/work.sql");;
    python3) bin=/usr/bin/python3.11; libs="libc.so.6 libm.so.6 libz.so.1 libexpat.so.1"; args=("$work/work.py")
        # its _json module (the workload's hottest ambiguous CIDs are there),
        # found through PYTHONPATH
        modules=$("$bin" -c 'import _json; print(_json.__file__)');;
    tcl) bin=/usr/bin/tclsh8.6; libs="libtcl8.6.so libc.so.6 libz.so.1 libm.so.6"; args=("$work/work.tcl");;
    cmake) bin=/usr/bin/cmake; libs="libstdc++.so.6 libc.so.6"; args=(-P "$work/work.cmake");;
    *) echo "$0: no program $prog" >&2; exit 2;;
    esac
    d=$out/$prog
    rm -rf "$d"
    mkdir -p "$d"
    lib=()
    for l in $libs; do lib+=(--lib "$L/$l"); done
    for m in $modules; do lib+=(--lib "$m"); done
    rw=$d/$prog.rw
    if [ $prog = cmake ]; then      # a rewritten cmake finds its modules from its path
        mkdir -p "$d/root/bin" "$d/root/share"
        ln -s /usr/share/cmake-3.25 "$d/root/share/cmake-3.25"
        rw=$d/root/bin/cmake
    fi
    "$icpp" rewrite "$bin" -m "$maps/$prog.icpp" -o "$rw" "${lib[@]}" "$@" >"$d/rewrite.log" 2>&1 ||
        { echo "$0: rewrite of $prog failed: $(tail -1 "$d/rewrite.log")" >&2; exit 1; }
    PYTHONHASHSEED=0 "$bin" "${args[@]}" >"$d/orig.out" 2>&1
    PYTHONHASHSEED=0 LD_LIBRARY_PATH="$rw.libs" PYTHONPATH="$rw.libs" "$rw" "${args[@]}" >"$d/rw.out" 2>&1
    cmp -s "$d/orig.out" "$d/rw.out" || { echo "$0: $prog rewritten gives another output" >&2; exit 1; }
    cg "$d/orig.cg" "$bin" "${args[@]}"
    LD_LIBRARY_PATH="$rw.libs" PYTHONPATH="$rw.libs" cg "$d/rw.cg" "$rw" "${args[@]}"
    precise=$(grep -o "precise paths [0-9.]*% -> [0-9.]*%" "$d/rewrite.log" | head -1)
    hot=$(grep -o "add [0-9.]* KB of hot code" "$d/rewrite.log" | grep -o "[0-9.]* KB" || echo "0 KB")
    echo "$prog: $precise predicted, hot code $hot; run time $(echo "$(cycles "$d/rw.cg") $(cycles "$d/orig.cg")" |
        awk '{ printf "%.4f", $1 / $2 }') of the original's (I1 misses $(i1 "$d/orig.cg") -> $(i1 "$d/rw.cg"))"
    echo "  $prog: $(by_kind "$d/rw.cg" "$d/orig.cg") of the original's cycles"
    echo "  $prog: the clones' first-level instruction misses an entry, by their entries: $(clone_misses "$rw.icpp" "$d/rw.cg")"
done
