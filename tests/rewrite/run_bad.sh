#!/bin/bash
# Bad inputs to icpp rewrite, icpp verify and icpp plan --binary: exit 1 (2
# for usage), one line on stderr, nothing written.
#
#   run_bad.sh ICPP CC WORK FIXTURE
set -u
icpp=$1 cc=$2 work=$3 fx=$4
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
fail=0
printf 'int main(void){return 0;}\n' > m.c
"$cc" -static m.c -o static 2>/dev/null
"$cc" -static-pie m.c -o static-pie 2>/dev/null
printf '#!/bin/sh\necho hi\n' > script && chmod +x script

# expect RC WHAT ARGS...: exit status RC, exactly one line on stderr
# containing WHAT, and no out.rw
expect() {
	local rc=$1 what=$2
	shift 2
	rm -f out.rw out.rw.icpp
	"$icpp" "$@" > bad.out 2> bad.err
	local got=$?
	if [ $got -ne "$rc" ] || [ "$(wc -l < bad.err)" -ne 1 ] || ! grep -q -- "$what" bad.err ||
	   [ -e out.rw ]; then
		echo "FAIL: icpp $*: exit $got (want $rc), stderr:"
		cat bad.err
		fail=1
	else
		echo "ok: icpp $*: $(cat bad.err)"
	fi
}

expect 1 "No such file" rewrite /nonexistent/prog -o out.rw
expect 1 "not an ELF" rewrite script -o out.rw
expect 1 "statically linked" rewrite static -o out.rw
[ -e static-pie ] && expect 1 "static PIE" rewrite static-pie -o out.rw
expect 1 "train first" rewrite "$fx" -m missing.icpp -o out.rw
expect 2 "expected one program" rewrite
expect 2 "unknown option" rewrite --bogus "$fx"
expect 2 "--searches wants a count from 1 to 64" rewrite --searches 0 "$fx"
expect 2 "--precision wants a percentage of the reducible paths from 0 (the prices as given) to 100, not '-1'" rewrite --precision -1 "$fx"
libs=() bins=()
for i in $(seq 64); do libs+=(--lib "$fx"); bins+=(--binary "$fx"); done
expect 2 "at most 63 --lib: name the libraries whose paths matter" rewrite "$fx" "${libs[@]}" -o out.rw
expect 2 "at most 64 --binary" plan "${bins[@]}" --binary "$fx" -o out.rw x.icpp
cp "$fx" fx
expect 1 "never modifies its input" rewrite fx -m x.icpp -o fx
# the program's dynamic loader: the kernel maps it, not LD_LIBRARY_PATH
loader=$(readelf -l "$fx" | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
[ -n "$loader" ] || { echo "FAIL: no PT_INTERP in $fx"; fail=1; }
expect 1 "dynamic loader, which the kernel loads" rewrite fx -m x.icpp -o out.rw --lib "$loader"
[ -e out.rw.libs ] && { echo "FAIL: out.rw.libs written after the refusal"; fail=1; }
expect 1 "not written by icpp rewrite" verify fx -- 
expect 2 "expected a program" verify
# a map of another program
"$cc" m.c -o dyn
"$icpp" train -q -o fx.icpp -- ./fx > /dev/null 2>&1
expect 1 "no module with the build-id" rewrite dyn -m fx.icpp -o out.rw
expect 1 "not an icpp pathmap" rewrite fx -m m.c -o out.rw
# icpp plan --binary: the same refusals, and no plan written
expect 1 "no module with the build-id" plan --binary dyn -o out.rw fx.icpp
expect 1 "not an ELF" plan --binary script -o out.rw fx.icpp
expect 1 "No such file" plan --binary /nonexistent/prog -o out.rw fx.icpp
expect 2 "exclude each other" plan --binary fx --clone -o out.rw fx.icpp

# Corrupt copies of the program, one to four bytes changed (in the ELF and
# program headers, the section headers, or anywhere; a fixed seed), read by
# --explain and rewritten by --everything under its map: exit 0, or 1 with
# the error as the last line (after the progress a late refusal printed)
# and nothing written; never a signal, never a hang.
RANDOM=1
size=$(stat -c %s fx)
shoff=$(od -An -t u8 -j 40 -N 8 fx | tr -d ' ')
ok=0 refused=0
for i in $(seq 60); do
	cp fx mut
	case $((RANDOM % 3)) in
	0) lo=0 span=$((64 + 56 * 13)) ;;
	1) lo=$shoff span=$((size - shoff)) ;;
	*) lo=0 span=$size ;;
	esac
	n=$((1 + RANDOM % 4))           # RANDOM in the parent: it is reseeded in subshells
	for k in $(seq $n); do
		pos=$((lo + (RANDOM * 32768 + RANDOM) % span)) byte=$((RANDOM % 256))
		printf "\\$(printf %03o $byte)" | dd of=mut bs=1 seek=$pos conv=notrunc status=none
	done
	for args in "--explain" "-m fx.icpp --everything -o out.rw"; do
		rm -f out.rw out.rw.icpp
		timeout 60 "$icpp" rewrite mut $args > mut.out 2> mut.err
		rc=$?
		if [ $rc -eq 0 ]; then
			ok=$((ok + 1))
		elif [ $rc -eq 1 ] && tail -n 1 mut.err | grep -q '^icpp' && [ ! -e out.rw ]; then
			refused=$((refused + 1))
		else
			cp mut corrupt-$i
			echo "FAIL: icpp rewrite corrupt-$i $args: exit $rc, stderr:"
			tail -n 3 mut.err
			fail=1
		fi
	done
done
echo "corrupt copies: 120 runs, $ok exit 0, $refused refused"
[ $ok -gt 0 ] && [ $refused -gt 0 ] || { echo "FAIL: the corruptions test one outcome only"; fail=1; }
exit $fail
