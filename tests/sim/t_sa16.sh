#!/bin/bash
# The SA at scale: on the k=16 fat-tree (1344 LIDs) smctl receives whole
# RMPP tables (every PathRecord from one source, every NodeRecord) and
# 20,000 random PathRecord Gets with 32 in flight are all answered right;
# one host's GetTable is right record by record, and so are its Gets.
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

# This host's paths to every LID: GetTables by SLID and SGID, each checked
# record by record (one per LID, all from this host), and the same records
# by single Gets (the two halves of tests/bench/sa_bench.sh)
read -r _ gid _ _ lid _ < <(sim_run ibaddr 2>/dev/null)
check test -n "$gid"
# (LIDs probed 1..max-lid: a NodeRecord table loses records under umad2sim)
sim_run "$SMCTL" sa bench --slid $((lid)) --sgid "$gid" --table --requests 3 \
	--max-lid $((nlids + 16)) >"$tmp/table" 2>&1 || true
cat "$tmp/table"
check grep -q "3 correct, 0 wrong, 0 unanswered, $nlids records each" "$tmp/table"
sim_run "$SMCTL" sa bench --sgid "$gid" --requests "$nlids" --max-lid $((nlids + 16)) \
	>"$tmp/one" 2>&1 || true
cat "$tmp/one"
check grep -q "$nlids correct, 0 wrong, 0 unanswered" "$tmp/one"

smd_stop || true
finish
