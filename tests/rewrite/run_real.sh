#!/bin/bash
# Real programs nobody here wrote (Debian's binaries, stripped, built with
# Debian's default flags, i.e. without frame pointers), rewritten twice: with
# the solver's plan and with --everything.  Each time the documented workload
# below must give byte-identical output, and icpp verify must find every
# observed path at its predicted height (--allow-new: paths that only the
# instrumented rewritten run takes, e.g. inside malloc, are listed, not
# failed).  Label "long".
#
#   run_real.sh ICPP WORK KIND [SRC]
#     lua       /usr/bin/lua5.4 on tests/train/real.lua (SRC: that file), and
#               under valgrind's memcheck
#     bzip2     /lib/.../libbz2.so.1.0 (a shared object, loaded through
#               LD_LIBRARY_PATH) under /usr/bin/bzip2: compress, test,
#               decompress 2.5 MB
#     zstd      /usr/bin/zstd: levels 3 and 19, decompress, list
#     cppcheck  /usr/bin/cppcheck (C++, exceptions on a syntax error) on two
#               small sources
#     sqlite3   /lib/.../libsqlite3.so.0 (the most crowded pathmap of
#               docs/bench-disambig.md) under /usr/bin/sqlite3: the
#               benchmark's SQL workload (SRC: bench/disambig/workloads/work.sql);
#               with libc.so.6 by the same plan (--lib; DT_RELR), loaded by
#               sqlite3 and sh through LD_LIBRARY_PATH
#     python3   /usr/bin/python3.11 (6.8 MB) on the benchmark's JSON workload,
#               a smaller input (SRC: bench/disambig/workloads/work.py); with
#               its _json module and libc.so.6 by the same plan (--lib), found
#               through PYTHONPATH and LD_LIBRARY_PATH (libc, as the plan
#               advises: most of what python3.11 alone leaves unsolved is at
#               libc's functions)
#     jq        /usr/bin/jq with libjq.so.1, libonig.so.5 and libc.so.6 by
#               the same plan (--lib): a call every 21 instructions, most of
#               them into tiny functions (jv_get_kind: 3 instructions), where
#               dispatches and trampolines cost the most run time
#               (docs/bench-disambig.md, session 37); filters, sorting,
#               grouping and regular expressions over 3,000 records
# A summary per run is appended to WORK/summary.txt.
set -u
icpp=$1 work=$2 kind=$3 src=${4:-}
rm -rf "$work" && mkdir -p "$work/bin" "$work/lib" "$work/planned/bin" "$work/planned/lib" &&
	cd "$work" || exit 1
fail=0
exec_prog=sh
libpath=
libs=                   # rewritten with the target by one plan (--lib)
case $kind in
lua)
	target=/usr/bin/lua5.4
	cp "$src" real.lua
	cat > wl.sh <<'EOF'
"$P" real.lua out.txt; echo "exit $?"; cat out.txt
EOF
	;;
bzip2)
	target=$(ldd /usr/bin/bzip2 | sed -n 's/.*libbz2.so.1.0 => \([^ ]*\).*/\1/p')
	head -c 2000000 /usr/bin/bzip2 /usr/bin/lua5.4 /usr/bin/zstd > data 2>/dev/null
	seq 1 50000 >> data
	cat > wl.sh <<'EOF'
bzip2 -9 -c data > data.bz2 && bzip2 -t data.bz2 && bzip2 -dc data.bz2 | cmp - data &&
	md5sum < data.bz2 && bzip2 -1 -c data | md5sum
EOF
	;;
zstd)
	target=/usr/bin/zstd
	head -c 2000000 /usr/bin/bzip2 /usr/bin/lua5.4 /usr/bin/zstd > data 2>/dev/null
	seq 1 50000 >> data
	cat > wl.sh <<'EOF'
"$P" -q -3 -c data > data.zst && "$P" -q -dc data.zst | cmp - data && md5sum < data.zst &&
	"$P" -q -19 -c data | md5sum && "$P" -q -t data.zst && echo ok
EOF
	;;
cppcheck)
	target=/usr/bin/cppcheck
	cat > a.c <<'EOF'
#include <stdlib.h>
#include <string.h>
struct s { int a[10]; char *p; };
static int f(int n) { int a[10]; a[n] = 1; return a[10]; }
char *g(void) { char *p = malloc(10); strcpy(p, "0123456789abc"); return p; }
int h(struct s *x) { if (x == NULL) return x->a[0]; free(x->p); free(x->p); return 0; }
int main(void) { int u; return f(u) + h(0) + (g() != 0); }
EOF
	cat > b.cpp <<'EOF'
template<class T> struct A { T x; void f() { x.g(); } };
class B { public: B(int) {} virtual ~B(); };
int main() { int *p = new int[3]; delete p; for (int i = 0; i < 3; i++ { } }
EOF
	cat > wl.sh <<'EOF'
"$P" --enable=all --inconclusive --std=c11 --suppress=missingIncludeSystem -q a.c 2>&1
"$P" --enable=all -q b.cpp 2>&1
"$P" --enable=style --template='{file}:{line}:{severity}:{id}' -q a.c b.cpp 2>&1
echo done
EOF
	;;
sqlite3)
	target=$(ldd /usr/bin/sqlite3 | sed -n 's/.*libsqlite3.so.0 => \([^ ]*\).*/\1/p')
	libs=$(ldd /usr/bin/sqlite3 | sed -n 's/.*libc.so.6 => \([^ ]*\).*/\1/p')
	cp "$src" work.sql
	cat > wl.sh <<'EOF'
sqlite3 :memory: '.read work.sql'; echo "exit $?"
EOF
	;;
python3)
	target=$(readlink -f /usr/bin/python3)
	libs="$("$target" -c 'import _json; print(_json.__file__)') $(ldd "$target" |
		sed -n 's/.*libc.so.6 => \([^ ]*\).*/\1/p')"
	sed 's/range(20000)/range(2000)/' "$src" > work.py
	grep -q 'range(2000)' work.py || { echo "FAIL: $src no longer has range(20000) to shrink"; exit 1; }
	cat > wl.sh <<'EOF'
"$P" work.py; echo "exit $?"
EOF
	;;
jq)
	target=/usr/bin/jq
	[ -e "$target" ] || { echo "SKIP: $target missing (apt-get install it)"; exit 77; }
	libs=$(ldd "$target" | sed -n 's/.*\(libjq.so.1\|libonig.so.5\|libc.so.6\) => \([^ ]*\).*/\2/p')
	"$target" -nc '[range(3000) | {id: ., name: "n\(.)", tags: [range(5) as $k | (. * 7 + $k) % 10],
		v: (. / 3)}]' > data.json
	cat > wl.sh <<'EOF'
"$P" -c '[.[] | select(.id % 7 == 0) | {id, s: (.tags | add)}] | sort_by(.s) | .[0:20]' data.json &&
	"$P" -c 'group_by(.tags[0]) | map({k: .[0].tags[0], n: length, v: (map(.v) | add)})' data.json &&
	"$P" -r '.[] | select(.name | test("^n1[0-9]*7$")) | "\(.id) \(.name | ascii_upcase)"' data.json |
	md5sum && "$P" -c 'map(.tags | join("-")) | unique | length' data.json; echo "exit $?"
EOF
	;;
*)
	echo "unknown kind $kind"
	exit 2
	;;
esac
[ -e "$target" ] || { echo "SKIP: $target missing (apt-get install it)"; exit 77; }
name=$(basename "$target")
if [ "$kind" = bzip2 ] || [ "$kind" = sqlite3 ]; then
	out=lib/$name
	libpath=$PWD/lib
else
	out=bin/$name
fi

if [ "$kind" = lua ]; then
	command -v valgrind >/dev/null ||
		{ echo "FAIL: valgrind missing (scripts/install-deps.sh installs it)"; exit 1; }
	printf '#!/bin/sh\nexec valgrind -q --error-exitcode=99 "$VG_PROG" "$@"\n' > vg.sh
	chmod +x vg.sh
fi
P=$target sh wl.sh > orig.out 2>&1
echo $? > orig.rc
if ! P=$target "$icpp" train -q -o map -- sh wl.sh > trained.out 2>&1 ||
   ! cmp -s orig.out trained.out; then
	echo "FAIL: training changed the workload's output"
	fail=1
fi

# the libraries' outputs are in $out.libs: the loader finds linked ones
# through LD_LIBRARY_PATH, python its modules through PYTHONPATH
libopt=
for l in $libs; do libopt="$libopt --lib $l"; done
[ "$kind" = python3 ] && export PYTHONPATH=$PWD/$out.libs
[ -n "$libs" ] && libpath=${libpath:+$libpath:}$PWD/$out.libs
for mode in solved everything; do
	opt=
	[ $mode = everything ] && opt=--everything
	if ! "$icpp" rewrite "$target" -m map -o "$out" $opt $libopt 2> "rewrite.$mode.err"; then
		echo "FAIL: icpp rewrite $opt"
		cat "rewrite.$mode.err"
		fail=1
		continue
	fi
	# new code by heat (rewriter.h section 2): these libraries' plans hold
	# pieces training's run hardly entered, laid out after the hot ones
	if [ $mode = solved ] && { [ "$kind" = sqlite3 ] || [ "$kind" = python3 ]; } &&
	   ! grep -q "bytes of new code ([0-9]* of them hot, laid out first)" "rewrite.$mode.err"; then
		echo "FAIL: no new code laid out by heat"
		fail=1
	fi
	# icpp plan --binary writes the plan icpp rewrite solves: applied from
	# the file, the same bytes (a pad's long C++ name, the dispatches' test
	# order: two bugs of session 49)
	if [ $mode = solved ]; then
		binopt="--binary $target"
		for l in $libs; do binopt="$binopt --binary $l"; done
		if ! "$icpp" plan map $binopt -q -o solved.plan > plan.out 2> plan.err ||
		   ! "$icpp" rewrite "$target" -m map -o "planned/$out" $libopt --plan solved.plan \
			-q 2>> plan.err; then
			echo "FAIL: icpp rewrite --plan of icpp plan's plan"
			tail -3 plan.err
			fail=1
		else
			for f in "$name" $(cd "$out.libs" 2>/dev/null && ls); do
				[ "$f" = "$name" ] && a=$out || a=$out.libs/$f
				cmp -s "$a" "planned/$a" ||
					{ echo "FAIL: $f: the plan file's rewrite differs from the solver's"; fail=1; }
			done
		fi
	fi
	P=$PWD/$out LD_LIBRARY_PATH=$libpath sh wl.sh > "$mode.out" 2>&1
	echo $? > "$mode.rc"
	if ! cmp -s orig.out "$mode.out" || ! cmp -s orig.rc "$mode.rc"; then
		echo "FAIL: $mode: the workload's output differs"
		diff orig.out "$mode.out" | head
		fail=1
	fi
	# memcheck (lua's workload takes seconds under it): a trampoline that
	# copies too few stack arguments leaves its callee reading the
	# trampoline's uninitialised padding, which crashes or not by what lay
	# there (docs/bench-rewrite.md, session 25)
	if [ "$kind" = lua ]; then
		P=$PWD/vg.sh VG_PROG=$PWD/$out sh wl.sh > "$mode.vg.out" 2> "$mode.vg.err"
		if ! cmp -s orig.out "$mode.vg.out"; then
			echo "FAIL: $mode: the workload under valgrind (memcheck)"
			grep -v '^==[0-9]*== *$' "$mode.vg.err" | head -12
			diff orig.out "$mode.vg.out" | head -4
			fail=1
		fi
	fi
	P=$PWD/$out LD_LIBRARY_PATH=$libpath "$icpp" verify "$out" --allow-new --exec $exec_prog \
		-- wl.sh > "verify.$mode.out" 2> "verify.$mode.err"
	if ! grep -q " 0 at another height" "verify.$mode.err"; then
		echo "FAIL: $mode: icpp verify"
		grep -v "^ " "verify.$mode.err" | head
		grep -A1 "wrong height" "verify.$mode.err" | head -6
		fail=1
	fi
	{
		echo "== $kind ($target), $mode"
		grep -v "^icpp rewrite: wrote" "rewrite.$mode.err"
		grep "^icpp verify:" "verify.$mode.err"
	} | tee -a summary.txt
done
exit $fail
