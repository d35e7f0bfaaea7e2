#!/bin/sh
# The solver's walk fetches each node's buckets and table slots ahead
# (disambig/solve.c, move_prefetch).  A helper that only prefetches looks
# free of side effects to gcc, which then deletes its calls without a word:
# sessions 14 to 28 measured a walk that had none.  This looks for them in
# the compiled walk: the first look-ahead (2) and the per-node one (3).
# usage: prefetch_check.sh LIBRARY
set -eu
lib=$1
most=$(objdump -d --no-show-raw-insn "$lib" | awk '
	/^[0-9a-f]+ <.*>:$/ { fn = $2; next }
	fn ~ /^<set_var_ex/ && /prefetch/ { n[fn]++ }
	END { m = 0; for (f in n) if (n[f] > m) m = n[f]; print m }')
if [ "$most" -lt 5 ]; then
	echo "prefetch_check: set_var_ex has $most prefetch instructions, want 5: was move_prefetch inlined?" >&2
	exit 1
fi
echo "prefetch_check: $most prefetch instructions in the walk"
