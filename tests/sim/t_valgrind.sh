#!/bin/bash
# smd is valgrind-clean through a whole bring-up, a lossy re-sweep, and as
# a daemon through standby polling, a failover, a route repair and counter
# sweeps of the performance manager, and stopped by SIGTERM in the middle
# of a sweep (the simulator shim's own errors are suppressed:
# tests/umad2sim.supp).
. "$(dirname "$0")/common.sh"
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 77; }
if grep -q __asan_init "$SMD"; then
	echo "SKIP: $SMD is an ASan build; valgrind runs on the plain build"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$GEN random --switches 12 --seed 5 -o "$tmp/net" 2>/dev/null
vg=(valgrind -q --error-exitcode=42 --leak-check=full --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect --suppressions="$top/tests/umad2sim.supp")

sim_start "$tmp/net" >/dev/null 2>&1
rc=0
sim_run "${vg[@]}" "$SMD" --once --db "$tmp/smd.db" >"$tmp/run1" 2>&1 || rc=$?
check test "$rc" -eq 0
check grep -q "subnet UP" "$tmp/run1"
# A second sweep with loss: the retry and read-back paths run too
first=$(awk '/^Switch/ { gsub(/"/, "", $3); print $3; exit }' "$tmp/net")
sim_console "Error \"$first\" 20"
printf 'smp_retries = 10\nsmp_timeout_ms = 50\n' >"$tmp/conf"
rc=0
sim_run "${vg[@]}" "$SMD" --once --config "$tmp/conf" --db "$tmp/smd.db" >"$tmp/run2" 2>&1 || rc=$?
check test "$rc" -eq 0
check grep -q "subnet UP" "$tmp/run2"
# The daemon as a standby, then master after a failover (smd/sm.c)
sim_console "Error \"$first\" 0"
printf 'sm_priority = 9\nsweep_interval = 0\n' >"$tmp/conf.m"
# The standby, once master, also reads the ports' counters (smd/perf.c, mad/gmp.c, smd/health.c)
printf 'sweep_interval = 0\nsm_poll_interval = 1\nperf_interval = 1\n' >"$tmp/conf.s"
mkdir "$tmp/m" "$tmp/s"
(cd "$tmp/m" && exec env LD_PRELOAD="$SIM_PRELOAD" RUNTIME_DIRECTORY="$PWD" "$SMD" \
	--config ../conf.m --db m.db >out 2>&1) &
mpid=$!
check wait_for "$tmp/m/out" "subnet UP" 1
(cd "$tmp/s" && exec env LD_PRELOAD="$SIM_PRELOAD" RUNTIME_DIRECTORY="$PWD" SIM_HOST=host-0002 \
	"${vg[@]}" "$SMD" --config ../conf.s --db s.db >out 2>&1) &
spid=$!
check wait_for "$tmp/s/out" "DISCOVERING -> STANDBY" 1
to() { local f=$1; shift; "$@" >"$f"; }
# Its control socket: status, a refused resweep, a bad request (smd/control.c)
ctl=(env -u LD_PRELOAD "${vg[@]}" "${SMCTL:-$top/ctl/smctl}" --socket "$tmp/s/control")
check to "$tmp/st1" "${ctl[@]}" status
check grep -q "^state: STANDBY" "$tmp/st1"
rc=0
"${ctl[@]}" resweep >"$tmp/rs1" 2>&1 || rc=$?
check test "$rc" -eq 1
check grep -q "only the master sweeps" "$tmp/rs1"
printf 'bogus\n%%4000s' x | python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.stdin.buffer.read())
print(s.recv(4096).decode())' "$tmp/s/control" >"$tmp/bad1"
check grep -q "ERROR: unknown command" "$tmp/bad1"
kill -TERM "$mpid"
wait "$mpid" || true
check wait_for "$tmp/s/out" "subnet UP" 1
# A cable cut: the new master repairs its routes (topo/route_repair.c)
sim_console 'Unlink "rsw-001"[1]'
check wait_for "$tmp/s/out" "routing (dfree, repaired)" 1
check to "$tmp/rs2" "${ctl[@]}" resweep
check to "$tmp/cr" "${ctl[@]}" check-routes
# Two counter sweeps done as master (the performance manager, the health rules)
perf_sweeps() {
	env -u LD_PRELOAD "${SMCTL:-$top/ctl/smctl}" --socket "$tmp/s/control" --json health |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["counters"]["sweeps"])'
}
for _ in $(seq 600); do
	[ "$(perf_sweeps 2>/dev/null || echo 0)" -ge 2 ] && break
	sleep 0.1
done
check test "$(perf_sweeps)" -ge 2
kill -TERM "$spid"
rc=0
wait "$spid" || rc=$?
check test "$rc" -eq 0
# smctl too
rc=0
"${vg[@]}" "${SMCTL:-$top/ctl/smctl}" --db "$tmp/smd.db" lids >"$tmp/lids" 2>&1 || rc=$?
check test "$rc" -eq 0
# SIGTERM in the middle of a sweep: abandoned, its SMPs cancelled (smd/loop.c)
mkdir "$tmp/v"
(cd "$tmp/v" && exec env LD_PRELOAD="$SIM_PRELOAD" RUNTIME_DIRECTORY="$PWD" "${vg[@]}" "$SMD" \
	--config ../conf.m --db v.db >out 2>&1) &
vpid=$!
ctl=(env -u LD_PRELOAD "${SMCTL:-$top/ctl/smctl}" --socket "$tmp/v/control")
# Caught past discovery (SMPs out, or the worker computing); a sweep that
# ended first is followed by another one asked for (smctl resweep --heavy)
caught=0
for _ in $(seq 1200); do
	"${ctl[@]}" status >"$tmp/vst" 2>/dev/null || true
	if grep -q "^sweep_running: heavy, phase \([2-9]\|1[0-9]\) of" "$tmp/vst"; then
		caught=1
		break
	fi
	if grep -q "^sweep_running: no" "$tmp/vst" && grep -q "subnet UP" "$tmp/v/out"; then
		"${ctl[@]}" resweep --heavy >/dev/null 2>&1 &
	fi
	sleep 0.05
done
check test "$caught" -eq 1
echo "SIGTERM under valgrind during: $(sed -n 's/^sweep_running: //p' "$tmp/vst")"
kill -TERM "$vpid"
rc=0
wait "$vpid" || rc=$?
check test "$rc" -eq 0
check grep -q "abandoning the sweep" "$tmp/v/out"
sim_stop
[ "$t_fail" -eq 0 ] || tail -20 "$tmp/s/out"
[ "$t_fail" -eq 0 ] || tail -20 "$tmp/v/out"
[ "$t_fail" -eq 0 ] || { cat "$tmp/run1" "$tmp/run2" "$tmp/s/out" | grep "==" | head -40; }
finish
