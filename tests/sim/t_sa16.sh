#!/bin/bash
# The SA at scale: on the k=16 fat-tree (1344 LIDs) smctl receives whole
# RMPP tables (every PathRecord from one source, every NodeRecord) and
# 20,000 random PathRecord Gets with 32 in flight are all answered right.
. "$(dirname "$0")/common.sh"
tmp=$(mktemp -d)
trap '[ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null; rm -rf "$tmp"; sim_stop' EXIT
SMCTL=${SMCTL:-$top/ctl/smctl}
$GEN ft3 16 -o "$tmp/net" 2>/dev/null
nlids=$(grep -cE '^(Switch|Hca)' "$tmp/net")

sim_start "$tmp/net" >/dev/null 2>&1
printf 'sweep_interval = 0\n' >"$tmp/conf"
smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out"
for _ in $(seq 1200); do grep -q "SA: answering" "$tmp/out" && break; sleep 0.1; done
check grep -q "SA: answering" "$tmp/out"
export SIM_HOST=host-0500

check test "$(sim_run "$SMCTL" sa path --slid 1 --count 2>/dev/null)" -eq "$nlids"
check test "$(sim_run "$SMCTL" sa path --dlid 700 --count 2>/dev/null)" -eq "$nlids"
check test "$(sim_run "$SMCTL" sa nodes --count 2>/dev/null)" -eq "$nlids"
sim_run "$SMCTL" sa bench --requests 20000 --inflight 32 >"$tmp/bench" 2>&1 || true
cat "$tmp/bench"
check grep -q "20000 correct, 0 wrong, 0 unanswered" "$tmp/bench"

smd_stop || true
finish
