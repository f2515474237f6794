#!/bin/bash
# Faults: a switch that never answers is left out with a warning and the
# rest of the fabric still comes up; lossy switches are handled by retries,
# which smd reports.
. "$(dirname "$0")/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$GEN ft3 4 -o "$tmp/net" 2>/dev/null

# A core switch drops every SMP addressed to it
sim_start "$tmp/net" >/dev/null 2>&1
sim_console 'Error "core-001" 100'
rc=0
sim_run "$SMD" --once --db "$tmp/a.db" >"$tmp/silent" 2>&1 || rc=$?
check test "$rc" -eq 0
check grep -q "subnet UP: 35 nodes" "$tmp/silent"
check grep -q "peer does not answer" "$tmp/silent"
check grep -q "never answered" "$tmp/silent"
check python3 "$here/checkfabric.py" --expect-missing core-001 "$tmp/net"
sim_stop

# Every aggregation switch loses 10% of the SMPs through it (each way)
sim_start "$tmp/net" >/dev/null 2>&1
for sw in $(awk '/^Switch/ && /agg/ { gsub(/"/, "", $3); print $3 }' "$tmp/net"); do
	sim_console "Error \"$sw\" 10"
done
printf 'smp_retries = 12\n' >"$tmp/lossy.conf"
rc=0
sim_run "$SMD" --once --config "$tmp/lossy.conf" --db "$tmp/b.db" >"$tmp/lossy" 2>&1 || rc=$?
check test "$rc" -eq 0
check grep -q "subnet UP: 36 nodes" "$tmp/lossy"
check grep -Eq "SMPs \([1-9][0-9]* timed out, 0 unanswered\)" "$tmp/lossy"
# The diagnostic tools do not retry: judge the fabric with the loss switched off
for sw in $(awk '/^Switch/ && /agg/ { gsub(/"/, "", $3); print $3 }' "$tmp/net"); do
	sim_console "Error \"$sw\" 0"
done
check python3 "$here/checkfabric.py" "$tmp/net"
sim_stop
finish
