#!/bin/bash
# Installed programs end to end, run by hand (docs/bench-disambig.md, session 47):
#   bench/rewrite/survey.sh BUILD_DIR OUT_DIR [NAME...]
# For each program: train it on a small deterministic input, rewrite it with its libraries
# by the solver's plan (icpp rewrite --lib), run the rewrite, compare its output with the
# original's, and train it again (icpp verify --allow-new: a run may take paths training
# did not, where threads, the environment or the program's name differ).  One line per
# program; the exit status is 1 when an output differs or a path has another height than
# predicted.  A program that is not installed is skipped.  REWRITE_OPTS="--precision 99.9"
# passes options to each icpp rewrite.
set -u
[ $# -ge 2 ] || { echo "usage: $0 BUILD_DIR OUT_DIR [NAME...]" >&2; exit 2; }
icpp=$(cd "$1" && pwd)/cli/icpp
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$2"
out=$(cd "$2" && pwd)
shift 2
only=" $* "
L=/lib/x86_64-linux-gnu
bad=0

# inputs, in OUT_DIR so that every path is the same in both runs
cd "$out"
seq 1 200000 | awk '{ print $1 * 7919 % 100003, "line", $1 }' >data.txt
cat >script.sh <<'EOF'
f() { if (( $1 < 2 )); then echo $1; else echo $(( $(f $(($1 - 1))) + $(f $(($1 - 2))) )); fi; }
declare -A h; for i in $(seq 1 2000); do h[k$((i % 37))]+=x; done; echo ${#h[@]}
s=""; for i in {1..3000}; do s+="$((i * i % 1000)) "; done; echo ${#s}
f 12
EOF
printf 'SRCS := a.c b.c c.c d.c\nall: $(SRCS:.c=.o)\n\t@echo $(sort $^)\n%%.o: %%.c\n\t@echo cc $< -o $@\n' >Makefile
touch a.c b.c c.c d.c
echo '{"a":[1,2,3],"b":{"c":"d"},"e":[{"f":1},{"f":2}]}' >data.json
mkdir -p cmake-root/bin cmake-root/share     # a rewritten cmake finds its modules from its path
ln -sfn /usr/share/cmake-3.25 cmake-root/share/cmake-3.25

# survey NAME "LIBS" PROGRAM ARGS...
survey() {
    local name=$1 libs=$2 prog=$3
    shift 3
    [ "$only" = "  " ] || [[ "$only" == *" $name "* ]] || return 0
    [ -x "$prog" ] || { echo "$name: skipped, $prog is not installed"; return 0; }
    local d=$out/$name lib=() run=$out/$name/rw
    rm -rf "$d"
    mkdir -p "$d"
    for l in $libs; do lib+=(--lib "$L/$l"); done
    "$icpp" train -q -o "$d/map.icpp" -- "$prog" "$@" >/dev/null 2>"$d/train.err"
    [ -s "$d/map.icpp" ] || { echo "$name: training failed: $(tail -1 "$d/train.err")"; bad=1; return; }
    "$icpp" rewrite "$prog" -m "$d/map.icpp" -o "$d/rw" "${lib[@]}" ${REWRITE_OPTS:-} >"$d/rewrite.log" 2>&1 ||
        { echo "$name: rewrite failed: $(tail -1 "$d/rewrite.log")"; bad=1; return; }
    if [ "$name" = cmake ]; then
        cp "$d/rw" "$out/cmake-root/bin/cmake"
        run=$out/cmake-root/bin/cmake
    fi
    "$prog" "$@" >"$d/orig.out" 2>&1
    LD_LIBRARY_PATH="$d/rw.libs" "$run" "$@" >"$d/rw.out" 2>&1
    local same=same
    cmp -s "$d/orig.out" "$d/rw.out" || { same="OUTPUT DIFFERS"; bad=1; }
    LD_LIBRARY_PATH="$d/rw.libs" "$icpp" verify --allow-new -m "$d/rw.icpp" "$run" -- "$@" \
        >/dev/null 2>"$d/verify.err"
    local v=$?
    [ $v -eq 0 ] || bad=1
    echo "$name: $(grep -o 'precise paths [0-9.]*% -> [0-9.]*%' "$d/rewrite.log" | head -1) predicted," \
         "output $same, verify: $(grep -o '[0-9]* call paths observed: [0-9]* at their predicted height, [0-9]* at another height' "$d/verify.err" || tail -1 "$d/verify.err")"
}

survey grep "libpcre2-8.so.0 libc.so.6" /usr/bin/grep -E "[0-9]+7 line 1[0-9]*" data.txt
survey sed "libc.so.6" /usr/bin/sed -E 's/([0-9]+) line/\1-L/; /99/d' data.txt
survey awk "libc.so.6 libm.so.6" /usr/bin/awk '{ s[$1 % 97] += $3 } END { for (k in s) print k, s[k] }' data.txt
survey xz "liblzma.so.5 libc.so.6" /usr/bin/xz -c -6 data.txt
survey gzip "" /usr/bin/gzip -c -9 data.txt
survey bzip2 "libbz2.so.1.0 libc.so.6" /usr/bin/bzip2 -c data.txt
survey zstd "libc.so.6" /usr/bin/zstd -q -c -12 data.txt
survey sort "libc.so.6" /usr/bin/sort -n -k1,1 -k3,3 data.txt
survey diff "libc.so.6" /usr/bin/diff data.txt script.sh
survey tar "libc.so.6" /usr/bin/tar -cf - --sort=name --mtime=@0 --owner=0 --group=0 data.txt script.sh Makefile
survey find "libc.so.6" /usr/bin/find /usr/share/cmake-3.25/Modules -name "*.cmake" -size +20k -o -name "*.in" -print
survey od "libc.so.6" /usr/bin/od -A x -t x1z -N 200000 data.txt
survey md5sum "libc.so.6" /usr/bin/md5sum data.txt script.sh
survey file "libmagic.so.1 libc.so.6 libz.so.1" /usr/bin/file data.txt script.sh /usr/bin/file
survey openssl "libcrypto.so.3 libssl.so.3 libc.so.6" /usr/bin/openssl dgst -sha256 -sha512 data.txt
survey bash "libtinfo.so.6 libc.so.6" /usr/bin/bash script.sh
survey make "libc.so.6" /usr/bin/make -f Makefile -j1
survey jq "libjq.so.1 libonig.so.5 libc.so.6" /usr/bin/jq -c '[.. | numbers] | add' data.json
survey cmake "libstdc++.so.6 libc.so.6" /usr/bin/cmake -P "$here/../disambig/workloads/work.cmake"
exit $bad
