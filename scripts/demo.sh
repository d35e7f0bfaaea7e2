#!/usr/bin/env bash
# Install what icpp needs, build it, and run the whole pipeline on the bundled
# example (examples/wordfreq counting the words of this repository's docs):
# train -> stats -> rewrite (the solver's plan) -> verify -> record -> report.
# Training sees a small input; the profile is taken on a ten times larger one.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
icpp=build/cli/icpp work=build/demo
mkdir -p "$work"
for _ in $(seq 40); do cat README.md docs/*.md; done > "$work/input.txt"
for _ in $(seq 10); do cat "$work/input.txt"; done > "$work/large.txt"
set -x
"$icpp" train -o "$work/wordfreq.icpp" -- build/examples/wordfreq "$work/input.txt"
"$icpp" stats --top 3 "$work/wordfreq.icpp"
"$icpp" rewrite build/examples/wordfreq -m "$work/wordfreq.icpp" -o "$work/wordfreq.rw"
# --allow-new: where malloc grows its heap depends on where ASLR put it, so a
# run may take a path inside malloc that training did not; heights still count
"$icpp" verify --allow-new "$work/wordfreq.rw" -m "$work/wordfreq.rw.icpp" -- "$work/input.txt"
"$icpp" record -o "$work/wordfreq.samples" -- "$work/wordfreq.rw" "$work/large.txt"
"$icpp" report -i "$work/wordfreq.samples" -m "$work/wordfreq.rw.icpp" --top 8
