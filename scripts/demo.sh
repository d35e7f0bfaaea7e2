#!/usr/bin/env bash
# Install what icpp needs, build it, and train the bundled example: the
# pathmap's statistics show how often the context identifier (function,
# stack height) alone names the whole call path.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
build/cli/icpp train -o build/wordfreq.icpp -- build/examples/wordfreq README.md
build/cli/icpp stats build/wordfreq.icpp
