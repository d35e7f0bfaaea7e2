#!/bin/bash
# A Debian source package, rebuilt by the test, trained on its own test suite,
# rewritten with the solver's plan, verified, and run against that suite again
# with the rewritten file in place (tests/rewrite/CMakeLists.txt, label long).
#   run_debsrc.sh ICPP WORK PACKAGE FLAVOUR
# PACKAGE: a source package with a recipe below (bzip2, lua5.4, libzstd,
# libjsoncpp); its sources are fetched once into WORK/src.
# FLAVOUR: fp (-O2 -fno-omit-frame-pointer) or debian (dpkg-buildflags, what
# Debian ships).  Needs root the first time: it adds deb-src entries for the
# machine's own Debian sources and runs apt-get update.
set -u
icpp=$1 work=$2 pkg=$3 flavour=$4
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL ($pkg, $flavour): $*" >&2; exit 1; }

have_debsrc() { grep -rqs '^Types:.*deb-src' /etc/apt/sources.list.d/ || grep -qs '^deb-src' /etc/apt/sources.list; }
if ! have_debsrc; then
	[ "$(id -u)" = 0 ] || fail "no deb-src entries and not root to add them"
	sed 's/^Types: deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources \
		> /etc/apt/sources.list.d/icpp-deb-src.sources || fail "cannot add deb-src entries"
	apt-get update -qq || fail "apt-get update"
fi
command -v dpkg-source > /dev/null || apt-get install -y -qq dpkg-dev > /dev/null || fail "dpkg-dev"

src=$work/src/$pkg
if [ ! -d "$src" ]; then
	mkdir -p "$work/src" && (cd "$work/src" && apt-get source -qq "$pkg" > /dev/null 2>&1) &&
		mv "$(ls -d "$work/src/$pkg"-*/ | head -1)" "$src" || fail "apt-get source $pkg"
fi
case $flavour in
fp) cflags="-O2 -g -fno-omit-frame-pointer" cppflags= ldflags= ;;
debian)
	cflags=$(dpkg-buildflags --get CFLAGS) cppflags=$(dpkg-buildflags --get CPPFLAGS)
	ldflags=$(dpkg-buildflags --get LDFLAGS) ;;
*) fail "unknown flavour" ;;
esac
dir=$work/$pkg.$flavour
rm -rf "$dir" && cp -r "$src" "$dir" && cd "$dir" || fail "copy of the sources"

# Per package: how Debian builds the file to rewrite (prog), the package's
# test suite (suite: a command for sh, trained as a whole), and check: the
# run that icpp verify repeats (through vfy, with the rewritten file in place
# of prog): the suite itself where its heights are deterministic.
# --allow-new (allow=) where that run takes paths training did not see.
# Where the package has no test suite, suite is a workload whose output must
# equal the original's byte for byte (compare=1).
allow= compare=
vfy() { local cmd=$1; shift; "$icpp" verify "$prog.rw" -m "$prog.rw.icpp" $allow --exec "$cmd" -- "$@"; }
case $pkg in
bzip2)
	prog=bzip2
	build() { make -s CFLAGS="$cflags -D_FILE_OFFSET_BITS=64" bzip2; }
	suite='make -s test'
	# one of the suite's runs, as the suite runs it (its own libbz2 through LD_LIBRARY_PATH=.)
	check() { LD_LIBRARY_PATH=. vfy ./bzip2 -3 < sample3.ref > sample3.vb2; }
	;;
lua5.4)
	# Debian links the interpreter with liblua statically (libtool -static);
	# the same objects, without libtool and readline (only its interactive
	# prompt uses readline).  Its `make test` only prints the
	# version: the workload is tests/train/real.lua (closures, coroutines,
	# errors, string library) and its result file.
	prog=src/lua5.4
	build() {
		printf '#define DEB_HOST_MULTIARCH "%s"\n' "$(dpkg-architecture -qDEB_HOST_MULTIARCH)" \
			> src/lua5.4-deb-multiarch.h &&
		(cd src && gcc -std=gnu99 $cflags $cppflags -DLUA_COMPAT_5_3 -DLUA_USE_LINUX $ldflags \
			-o lua5.4 $(ls l*.c | grep -vx luac.c) -Wl,-E -lm -ldl)
	}
	cp "$here/../train/real.lua" . || fail "real.lua"
	suite='src/lua5.4 -v; src/lua5.4 real.lua out.txt; echo "exit $?"; cat out.txt'
	check() { vfy sh -c "$suite"; }
	# strings are hashed with a seed taken from addresses (ASLR): which
	# collisions call memcmp varies
	allow=--allow-new compare=1
	;;
libzstd)
	# the zstd CLI, with the library compiled in, as Debian's make build has
	# it; upstream's `make check` (playTests.sh without its long-data tests),
	# run directly: its make target would rebuild zstd with -g
	prog=programs/zstd
	build() { CFLAGS=$cflags CPPFLAGS=$cppflags LDFLAGS=$ldflags make -C programs zstd-release &&
		make -C tests datagen; }
	suite='cd tests && ZSTD_BIN=../programs/zstd DATAGEN_BIN=./datagen ./playTests.sh'
	# the whole suite again under verify: its timings (zstd -v, ZSTD_TRACE,
	# dd) make printf's frames vary, which verify counts apart
	check() { vfy sh -c "$suite"; }
	allow=--allow-new
	;;
libjsoncpp)
	# the shared library libjsoncpp (Debian: cmake, no static or object
	# libraries); ctest runs its unit tests (exceptions thrown and caught
	# through the library) and the reader/writer tests through python
	prog=build/lib/libjsoncpp.so.1.9.5
	build() {
		cmake -S . -B build -DCMAKE_BUILD_TYPE=None -DCMAKE_CXX_FLAGS="$cflags $cppflags" \
			-DCMAKE_SHARED_LINKER_FLAGS="$ldflags" -DCMAKE_EXE_LINKER_FLAGS="$ldflags" \
			-DBUILD_STATIC_LIBS=OFF -DBUILD_OBJECT_LIBS=OFF -DJSONCPP_WITH_POST_BUILD_UNITTEST=OFF &&
			cmake --build build -j2
	}
	suite='cd build && ctest --output-on-failure'
	check() { vfy sh -c "$suite"; }
	# python's paths (hash randomization, its allocator)
	allow=--allow-new
	;;
*) fail "no recipe for $pkg" ;;
esac

build > build.log 2>&1 || fail "build (build.log)"
[ -z "$compare" ] || sh -c "$suite" > suite.orig 2>&1 || fail "the workload on the original"
"$icpp" train -q -o train.icpp -- sh -c "$suite" > train.out 2>&1 || fail "the test suite under icpp train"
"$icpp" rewrite "$prog" -m train.icpp -o "$prog.rw" > rewrite.log 2>&1 || fail "icpp rewrite: $(tail -1 rewrite.log)"
grep -E "padded|precise" rewrite.log
# the precision of the paths through the rewritten file (the suite runs sh,
# make, python...: the whole map hides it), before and as predicted
"$icpp" stats --top 0 --module "$prog" train.icpp | sed -n 's/^precise paths/trained: precise paths/p'
"$icpp" stats --top 0 --module "$prog.rw" "$prog.rw.icpp" | sed -n 's/^precise paths/predicted: precise paths/p'
cp "$prog" "$prog.orig" && cp "$prog.rw" "$prog" || fail "cannot put the rewritten $prog in place"
check > verify.out 2> verify.log ||
	fail "icpp verify: $(grep -v '^ ' verify.log | tail -3)"
grep observed verify.log
sh -c "$suite" > suite.log 2>&1 || fail "the package's own test suite fails on the rewritten $prog (suite.log)"
[ -z "$compare" ] || cmp suite.orig suite.log || fail "the workload's output differs from the original's"
cmp -s "$prog" "$prog.rw" || fail "the suite rebuilt $prog instead of testing the rewritten one"
echo "ok: $pkg ($flavour) rewritten, verified, and its own test suite passes"
