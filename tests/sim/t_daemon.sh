#!/bin/bash
# Without --once smd stays up: it sweeps, answers a trap (a cable pulled
# in the simulator) with a new sweep that routes around the change, and
# exits cleanly on SIGTERM.
. "$(dirname "$0")/common.sh"
tmp=$(mktemp -d)
KEEP=${KEEP:-}
cleanup_smd() { [ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null; rm -rf "$tmp"; }
trap 'cleanup_smd; sim_stop' EXIT
$GEN ft3 4 -o "$tmp/net" 2>/dev/null

sim_start "$tmp/net" >/dev/null 2>&1
# Sweep only on events, so the second sweep can only come from the trap
printf 'sweep_interval = 0\n' >"$tmp/conf"
smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out"
check wait_for "$tmp/out" "subnet UP" 1
check python3 "$here/checkfabric.py" "$tmp/net"
# Another host asks who the master SM is
SIM_HOST=host-0007 sim_run sminfo >"$tmp/sminfo" 2>&1
check grep -q "sm lid 1 .* state 3 SMINFO_MASTER" "$tmp/sminfo"

sim_console 'Unlink "core-001"[1]'
check wait_for "$tmp/out" "subnet UP" 2
check python3 "$here/checkfabric.py" --expect-unlinked core-001:1 "$tmp/net"
# The trap was answered with TrapRepress (ibsim notes it and drops it)
check wait_for "$SIM_LOG" "trap repress" 1

# SIGHUP reads the configuration again (sm_priority 9 shows in SMInfo) and sweeps
printf 'sweep_interval = 0\nsm_priority = 9\n' >"$tmp/conf"
kill -HUP "$smd_pid"
check wait_for "$tmp/out" "configuration .* read again" 1
check wait_for "$tmp/out" "subnet UP" 3
SIM_HOST=host-0007 sim_run sminfo >"$tmp/sminfo2" 2>&1
check grep -q "priority 9 state 3" "$tmp/sminfo2"

rc=0
smd_stop || rc=$?
KEEP=${KEEP:-}
check test "$rc" -eq 0
check grep -q "shutting down" "$tmp/out"
finish
