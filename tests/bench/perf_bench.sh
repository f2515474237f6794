#!/bin/bash
# perf_bench.sh [K...]   (default: 16 32)
#
# The performance manager on 3-level fat-trees (tests/gen/topogen.py ft3 K)
# under the simulator (issue 20, acceptance 6): smd brings the fabric up,
# then reads every cabled port's counters every perf_interval seconds.
# Prints numbers only, no verdict: per K, the ports asked, the GMPs one
# counter sweep sends, how long the first sweep and the following ones
# took (median), the PMAs that did not answer; then the metrics answer
# (the per-port series of every port) asked over the control socket: its
# size, how long it took to arrive whole, and the longest event-loop
# handlers over 100 ms while it was served (it is written in pieces as
# the reader drains it: no handler renders it all), and the longest
# handler since smd started (the bring-up's included).
#
#   tests/bench/perf_bench.sh            # k=16 (6,144 cabled ports) and k=32 (49,152)
#   SWEEPS=5 tests/bench/perf_bench.sh 16
#
# Environment:
#   SMD, SMCTL   binaries (default: under the build directory or the repo root)
#   SWEEPS       counter sweeps timed after the first (default 3)
#   INTERVAL     perf_interval (default 2)
#   BENCH_KEEP=1 keep the work dir
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SMD=${SMD:-$root/smd/smd}
SMCTL=${SMCTL:-$root/ctl/smctl}
SWEEPS=${SWEEPS:-3}
INTERVAL=${INTERVAL:-2}
[ $# -gt 0 ] || set -- 16 32
[ -x "$SMD" ] && [ -x "$SMCTL" ] || { echo "perf_bench: build smd and smctl first" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/smdpbench.XXXXXX")
smd_pid=
bench_cleanup() {
	[ -z "$smd_pid" ] || { kill -TERM "$smd_pid" 2>/dev/null; wait "$smd_pid" 2>/dev/null; }
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "perf_bench: work dir kept: $work" >&2
	else
		rm -rf "$work"
	fi
}
trap bench_cleanup EXIT
# shellcheck source=../sim/simlib.sh
. "$root/tests/sim/simlib.sh"

health() { "$SMCTL" --socket "$work/control" --json health 2>/dev/null || true; }
field() { python3 -c 'import json, sys; d = json.load(sys.stdin); print(eval(sys.argv[1]))' "$1"; }

# The metrics answer over the control socket: bytes, seconds to the last byte
metrics_time() {
	python3 - "$work/control" <<'EOF'
import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
t0 = time.monotonic()
s.sendall(b"metrics\n")
n, tail = 0, b""
while True:
    d = s.recv(1 << 20)
    if not d:
        break
    n += len(d)
    tail = (tail + d)[-8:]
    if tail.endswith(b"\nOK\n"):
        break
print("%d %.3f" % (n, time.monotonic() - t0))
EOF
}

printf '%-4s %8s %8s %10s %10s %10s %10s %10s %10s %10s %10s\n' K ports GMPs first_s median_s \
	unanswered metrics_MB metrics_s samples slow_handlers longest_ms
for k in "$@"; do
	python3 "$root/tests/gen/topogen.py" ft3 "$k" -o "$work/net$k" >/dev/null 2>&1
	sim_start "$work/net$k" >/dev/null 2>&1
	printf 'sweep_interval = 0\nperf_interval = %s\n' "$INTERVAL" >"$work/conf"
	rm -f "$work/smd.db"*
	(cd "$work" && exec env LD_PRELOAD="$SIM_PRELOAD" RUNTIME_DIRECTORY="$work" \
		"$SMD" --config "$work/conf" --db "$work/smd.db" >"$work/out$k" 2>&1) &
	smd_pid=$!
	for _ in $(seq 6000); do
		[ "$(health | field 'd["counters"]["sweeps"]' 2>/dev/null || echo 0)" -ge 1 ] && break
		sleep 0.1
	done
	first=$(health | field 'd["counters"]["last_seconds"]')
	secs=
	for i in $(seq "$SWEEPS"); do
		for _ in $(seq 6000); do
			[ "$(health | field 'd["counters"]["sweeps"]')" -ge $((i + 1)) ] && break
			sleep 0.1
		done
		secs="$secs $(health | field 'd["counters"]["last_seconds"]')"
	done
	gmps=$("$SMCTL" --socket "$work/control" --json status | field 'd["health"]["counters"]["last_gmps"]')
	ports=$(health | field 'd["counters"]["ports"]')
	unans=$(health | field 'd["counters"]["unanswered"]')
	med=$(printf '%s\n' $secs | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }')
	slow0=$("$SMCTL" --socket "$work/control" --json status | field 'd["event_loop"]["over_100ms"]')
	read -r bytes msecs <<<"$(metrics_time)"
	slow1=$("$SMCTL" --socket "$work/control" --json status | field 'd["event_loop"]["over_100ms"]')
	longest=$("$SMCTL" --socket "$work/control" --json status | field 'd["event_loop"]["longest_handler_ms"]')
	printf '%-4s %8s %8s %10.3f %10.3f %10s %10.1f %10s %10s %10s %10.1f\n' "$k" "$ports" \
		"$gmps" "$first" "$med" "$unans" \
		"$(echo "$bytes" | awk '{ print $1 / 1048576 }')" "$msecs" "$((ports * 12))" \
		"$((slow1 - slow0))" "$longest"
	kill -TERM "$smd_pid" 2>/dev/null
	wait "$smd_pid" 2>/dev/null || true
	smd_pid=
	sim_stop
done
