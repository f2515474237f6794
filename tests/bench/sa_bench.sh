#!/bin/bash
# tests/bench/sa_bench.sh [TOPOLOGY ARGS]: PathRecord Gets per second of
# smd's SA and of opensm's SA on the same simulated fabric (default ft3 16),
# with the same client (smctl sa bench: random SLID/DLID pairs, every
# answer checked), 1 and 32 requests in flight. Prints numbers only.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$here/.." && pwd)
SMD=${SMD:-$top/smd/smd}
SMCTL=${SMCTL:-$top/ctl/smctl}
REQUESTS=${REQUESTS:-20000}
spec=("$@")
[ ${#spec[@]} -gt 0 ] || spec=(ft3 16)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 "$top/tests/gen/topogen.py" "${spec[@]}" -o "$work/net" 2>/dev/null
nlids=$(grep -cE '^(Switch|Hca)' "$work/net" || true)

run_one() {	# name, SM command...
	local name=$1 pid
	shift
	(
		trap - EXIT	# the parent's cleanup must not run when this ends
		# shellcheck source=../sim/simlib.sh
		. "$top/tests/sim/simlib.sh"
		sim_start "$work/net" >/dev/null 2>&1
		cd "$work"
		env LD_PRELOAD="$SIM_PRELOAD" "$@" >"$work/$name.log" 2>&1 &
		pid=$!
		# The SA is ready once it answers a single NodeRecord Get for LID 1
		for _ in $(seq 600); do
			sim_run "$SMCTL" sa nodes --lid 1 --get --count >/dev/null 2>&1 && break
			sleep 0.2
		done
		for k in 1 32; do
			printf '%-7s ' "$name"
			sim_run "$SMCTL" sa bench --requests "$REQUESTS" --inflight "$k" \
				--max-lid $((nlids + 16)) 2>&1 | tail -1
		done
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		sim_stop
	)
}

echo "fabric: ${spec[*]} ($nlids nodes), $REQUESTS PathRecord Gets per run"
printf 'sweep_interval = 0\n' >"$work/smd.conf"
run_one smd "$SMD" --config "$work/smd.conf" --db "$work/smd.db"
if command -v opensm >/dev/null; then
	mkdir -p "$work/osm"
	OSM_CACHE_DIR="$work/osm" OSM_TMP_DIR="$work/osm" run_one opensm opensm -F /dev/null \
		-f "$work/osm/opensm.log" -e --dump_files_dir "$work/osm"
else
	echo "opensm not installed: skipped"
fi
