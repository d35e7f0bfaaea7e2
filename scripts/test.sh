#!/usr/bin/env bash
# Install what icpp needs, build it, and run every test (ctest).  Tests
# labelled "long" (Debian source packages and their suites) run only with
# ICPP_LONG_TESTS=1.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j"$(nproc)"
cd build
if [ "${ICPP_LONG_TESTS:-0}" = 1 ]; then
  ctest --output-on-failure -j2
else
  ctest --output-on-failure -j2 -LE long
fi
