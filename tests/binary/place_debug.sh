#!/bin/sh
# place_debug.sh BINARY DEBUG ROOT STAMP: install DEBUG as the separate debug
# file of BINARY under ROOT, where a -dbgsym package puts it
# (ROOT/.build-id/xx/yyyy.debug, by BINARY's build-id), then touch STAMP.
set -eu
id=$(readelf -n "$1" | sed -n 's/.*Build ID: *//p')
[ -n "$id" ] || { echo "place_debug.sh: $1 has no build-id" >&2; exit 1; }
dir=$3/.build-id/$(echo "$id" | cut -c1-2)
mkdir -p "$dir"
cp "$2" "$dir/$(echo "$id" | cut -c3-).debug"
touch "$4"
