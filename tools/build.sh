#!/bin/bash
# tools/build.sh DIR [configure args...]: out-of-tree build in DIR.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dir=$1
shift
[ -x "$top/configure" ] || (cd "$top" && autoreconf -fi)
mkdir -p "$dir"
cd "$dir"
[ -f Makefile ] || "$top/configure" -q "$@"
make -j"$(nproc)" >/dev/null
