#!/usr/bin/env bash
# Installs the Debian (bookworm) packages icpp builds and tests with.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then SUDO=sudo; else SUDO=; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends \
  build-essential cmake pkg-config clang llvm libclang-rt-14-dev \
  libelf-dev libdw-dev libcapstone-dev uthash-dev zlib1g-dev libbpf-dev bpftool \
  libprotobuf-c-dev protobuf-c-compiler \
  gdb strace valgrind lua5.4 bzip2 libbz2-1.0 uftrace python3 sqlite3 jq >/dev/null
