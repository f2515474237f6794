#!/bin/bash
# LIDs are stable: a second sweep changes nothing (no LFT block written,
# every LID kept), and a fresh fabric gets the LIDs the database remembers.
. "$(dirname "$0")/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$GEN random --switches 20 --seed 11 -o "$tmp/net" 2>/dev/null
db="$tmp/smd.db"

sim_start "$tmp/net" >/dev/null 2>&1
sim_run "$SMD" --once --db "$db" >"$tmp/run1" 2>&1
check grep -q "subnet UP" "$tmp/run1"
fabric_lids >"$tmp/lids1"
check test "$(wc -l <"$tmp/lids1")" -gt 40
sim_run "$SMD" --once --db "$db" >"$tmp/run2" 2>&1
check grep -q "subnet UP" "$tmp/run2"
check grep -q "0 LFT blocks sent" "$tmp/run2"
check grep -q " 0 new, 0 conflicts" "$tmp/run2"
fabric_lids >"$tmp/lids2"
check cmp -s "$tmp/lids1" "$tmp/lids2"
sim_stop

# A new simulator: every port starts without a LID; the DB gives them back
sim_start "$tmp/net" >/dev/null 2>&1
sim_run "$SMD" --once --db "$db" >"$tmp/run3" 2>&1
check grep -q "subnet UP" "$tmp/run3"
check grep -q "0 kept, [0-9]* remembered, 0 new" "$tmp/run3"
fabric_lids >"$tmp/lids3"
check cmp -s "$tmp/lids1" "$tmp/lids3"
# smctl reads the same LIDs back from the database
"${SMCTL:-$top/ctl/smctl}" --db "$db" lids >"$tmp/smctl" 2>&1
check test "$(($(wc -l <"$tmp/smctl") - 1))" -eq "$(wc -l <"$tmp/lids1")"
check "${SMCTL:-$top/ctl/smctl}" --db "$db" status
sim_stop
finish
