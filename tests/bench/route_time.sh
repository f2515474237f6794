#!/bin/bash
# route_time.sh [TOPOLOGY ARGS]   (default: ft3 32, 1280 switches, 8192 hosts)
#
# Time the routing engines in memory on one core: generate the fabric with
# tests/gen/topogen.py, then for each engine run tests/bench/route_bench
# (discovery and LIDs untimed; route_compute timed, best of RUNS) and print
# its line: wall and CPU seconds of routing, VLs used, busiest link, and the
# verifier's verdict and time.
#
#   tests/bench/route_time.sh
#   ENGINES="dfree updn" RUNS=1 tests/bench/route_time.sh torus3 8 8 8 2
#
# Environment: ENGINES (default "dfree updn minhop"), VLS (budget, default 8),
# RUNS (default 3), CHECK=0 to skip the verifier, ROUTE_BENCH (binary).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ROUTE_BENCH_GIVEN=${ROUTE_BENCH:-}
ROUTE_BENCH=${ROUTE_BENCH:-$root/tests/bench/route_bench}
ENGINES=${ENGINES:-dfree updn minhop}
VLS=${VLS:-8}
RUNS=${RUNS:-3}
[ $# -gt 0 ] || set -- ft3 32
[ -n "${ROUTE_BENCH_GIVEN:-}" ] || make -C "$root" -s tests/bench/route_bench >&2

work=$(mktemp -d "${TMPDIR:-/tmp}/routetime.XXXXXX")
trap 'rm -rf "$work"' EXIT
python3 "$root/tests/gen/topogen.py" "$@" -o "$work/fabric.net"
check=
[ "${CHECK:-1}" = 1 ] || check=--no-check
echo "fabric: $(sed -n 2p "$work/fabric.net" | sed 's/^# //'); $(nproc) CPUs here, one used"
for e in $ENGINES; do
	# taskset keeps it on one core when available
	runner=()
	command -v taskset >/dev/null && runner=(taskset -c 0)
	"${runner[@]}" "$ROUTE_BENCH" --engine "$e" --vls "$VLS" --repeat "$RUNS" $check \
		"$work/fabric.net"
done
