# Checks that run_tags.sh, run_bound.sh, run_promote.sh and run_veneer.sh
# share (sourced; they define fail).
# A call's stub (__icpp_tag_SITE, __icpp_bind_SITE) is no frame of its own:
# its FDE repeats its caller's row at the call; a bound call's thunk
# (__icpp_bindto_CLONE) runs at its clone's entry CFA (rewriter.h section 1).

# gdb_unwinds_through GDB LIBDIR PROG CLONE FRAME: gdb, stopped in CLONE,
# unwinds through a frame whose name matches FRAME (a stub's prefix, or the
# caller) to main.
gdb_unwinds_through() {
	LD_LIBRARY_PATH=$2 "$1" -q -batch -ex 'set breakpoint pending on' \
		-ex "break $4" -ex run -ex bt "$3" > gdb.log 2>&1
	grep -q "^#[0-9].* in $5" gdb.log && grep -q "^#[0-9].* in main " gdb.log ||
		fail "gdb does not unwind from the clone through $5 to main: $(grep '^#' gdb.log)"
}

# rewrite_wrapped PLAN MODULE SITE FILE STUB_PREFIX: PLAN with the callsite
# SITE of module MODULE wrapped by 64 bytes as well, applied to $p and $l
# (the caller's) as rw2: FILE (rw2 or its library) holds the callsite's
# trampoline and no stub named STUB_PREFIX..., and the pair's output is the
# original's (orig.out).
rewrite_wrapped() {
	awk -v km="$2" -v site="$3" \
		'$1 == "end" {print "wrap", km, site, 64; print "end", $2 + 1; next} {print}' "$1" > wrap.plan
	"$icpp" rewrite "$p" -m map.icpp -o rw2 --lib "$l" --plan wrap.plan > rewrite2.log 2>&1 ||
		fail "rewrite --plan (wrapped): $(tail -1 rewrite2.log)"
	nm "$4" | grep -q " t __icpp_wrap_${3#0x}$" || fail "the call at $3 is not wrapped"
	nm "$4" | grep -q " t $5" && fail "a stub beside the trampoline"
	LD_LIBRARY_PATH=rw2.libs ./rw2 > rw2.out && cmp -s orig.out rw2.out || fail "the wrapped pair's output"
}

# setup_trained WORK PROG ARG: a fresh WORK with a copy of PROG ($p), its
# output with ARG (orig.out) and its training (map.icpp); the shell is in WORK.
setup_trained() {
	rm -rf "$1" && mkdir -p "$1" && cp "$2" "$1"/ && cd "$1" || fail "setup"
	p=./$(basename "$2")
	"$p" "$3" > orig.out || fail "the fixture does not run"
	"$icpp" train -q -o map.icpp -- "$p" "$3" > /dev/null || fail "icpp train"
}

# rewrite_one_clone FUNC CALLER PAD: $p rewritten to rw (and rw.icpp) by a
# plan cloning FUNC, padded by PAD, for CALLER's call of it, after icpp
# rewrite --explain offers both (explain.txt).
rewrite_one_clone() {
	"$icpp" rewrite "$p" --explain -o x.rw 2> /dev/null > explain.txt || fail "icpp rewrite --explain"
	grep -q " clone ok .* $1$" explain.txt || fail "$1 may not be cloned: $(grep "$1" explain.txt)"
	local site func build_id
	site=$(awk -v f="$1:" -v c="^$2\\+" '$1 == "call" && $4 ~ c && $6 == f { print $2; exit }' explain.txt)
	[ -n "$site" ] || fail "no call of $1 in $2: $(grep "$2" explain.txt)"
	func=0x$(nm "$p" | awk -v f="$1" '$3 == f { print $1 }')
	build_id=$(readelf -n "$p" | awk '/Build ID/ { print $3 }')
	printf 'icpp-plan 1\nunit functions\nmodule 0 %s %s\nclone 0 0 %s 0 %s %s\nend 1\n' \
		"$build_id" "$PWD/$(basename "$p")" "$func" "$site" "$3" > one_clone.plan
	"$icpp" rewrite "$p" -m map.icpp -o rw --plan one_clone.plan 2> rewrite.log ||
		fail "rewrite --plan: $(tail -1 rewrite.log)"
}
