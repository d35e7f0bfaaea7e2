#!/bin/bash
# A Debian source package, rebuilt by the test, trained on its own test suite,
# rewritten with the solver's plan, and run against that suite again
# (tests/rewrite/CMakeLists.txt, label long).
#   run_debsrc.sh ICPP WORK PACKAGE FLAVOUR
# FLAVOUR: fp (-O2 -fno-omit-frame-pointer) or debian (dpkg-buildflags, what
# Debian ships).  Needs root the first time: it adds deb-src entries for the
# machine's own Debian sources and runs apt-get update.
set -u
icpp=$1 work=$2 pkg=$3 flavour=$4
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
fp) cflags="-O2 -g -fno-omit-frame-pointer" ;;
debian) cflags="$(dpkg-buildflags --get CFLAGS)" ;;
*) fail "unknown flavour" ;;
esac
dir=$work/$pkg.$flavour
rm -rf "$dir" && cp -r "$src" "$dir" && cd "$dir" || fail "copy of the sources"

# Per package: how to build the program, its test suite, and a verify run
# that repeats one of the suite's runs as the suite runs it (bzip2's suite
# uses the package's own libbz2 through LD_LIBRARY_PATH=.).
case $pkg in
bzip2)
	prog=bzip2
	build() { make -s CFLAGS="$cflags -D_FILE_OFFSET_BITS=64" bzip2 > build.log 2>&1; }
	suite() { make -s test; }
	verify() { LD_LIBRARY_PATH=. "$icpp" verify bzip2.rw -m bzip2.rw.icpp -- -3 < sample3.ref > sample3.vb2; }
	;;
*) fail "no recipe for $pkg" ;;
esac

build || fail "build (build.log)"
"$icpp" train -q -o train.icpp -- make -s test > train.out 2>&1 || fail "the test suite under icpp train"
"$icpp" rewrite "./$prog" -m train.icpp -o "$prog.rw" > rewrite.log 2>&1 || fail "icpp rewrite: $(tail -1 rewrite.log)"
grep -E "padded|precise" rewrite.log
verify 2> verify.log || fail "icpp verify: $(tail -2 verify.log)"
grep -q " 0 at another height" verify.log || fail "paths at another height than predicted: $(grep observed verify.log)"
grep observed verify.log
cp "$prog" "$prog.orig" && cp "$prog.rw" "$prog" && touch "$prog"
suite > suite.log 2>&1 || fail "the package's own test suite fails on the rewritten $prog (suite.log)"
cmp -s "$prog" "$prog.rw" || fail "the suite rebuilt $prog instead of testing the rewritten one"
echo "ok: $pkg ($flavour) rewritten, verified, and its own test suite passes"
