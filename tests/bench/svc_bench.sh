#!/bin/bash
# svc_bench.sh BUILD_DIR [N [K]]   (default 50000 services, all expiring at once)
#
# Times ServiceRecord lease expiry (tests/bench/svc_expire.c) and one
# port's Set, Get, Delete and GetTable requests while N services are held
# (tests/bench/svc_ops.c) against the libraries of BUILD_DIR, with
# sa_service.c compiled here so that SVC_MAX can be raised past the
# daemon's 16384 to N. Prints numbers; asserts no timing.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
build=$(cd "${1:?usage: svc_bench.sh BUILD_DIR [N [K]]}" && pwd)
n=${2:-50000}
k=${3:-$n}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
max=$(( n > 16384 ? n : 16384 ))
${CC:-cc} -O2 -std=gnu11 -I"$src" -I"$build" -DSVC_MAX="$max" -o "$tmp/svc_expire" \
	"$here/svc_expire.c" "$src/sa/sa_service.c" \
	"$build/sa/libsa.a" "$build/topo/libtopo.a" "$build/mad/libmad.a" \
	"$build/iba/libiba.a" "$build/util/libutil.a" $(pkg-config --libs libibumad 2>/dev/null || echo -libumad) -lm
"$tmp/svc_expire" "$n" "$k"
${CC:-cc} -O2 -std=gnu11 -I"$src" -I"$build" -DSVC_MAX="$max" -o "$tmp/svc_ops" \
	"$here/svc_ops.c" "$src/sa/sa_service.c" "$src/tests/unit/fakefab.c" \
	"$build/sa/libsa.a" "$build/topo/libtopo.a" "$build/mad/libmad.a" \
	"$build/iba/libiba.a" "$build/util/libutil.a" $(pkg-config --libs libibumad 2>/dev/null || echo -libumad) -lm
"$tmp/svc_ops" "$src/tests/fuzz/sa/ft4.net" "$n" 20000
