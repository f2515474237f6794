#!/bin/bash
# The control socket (issue 6): smctl status, resweep, check-routes against a
# running smd on a 2D torus; bad and misbehaving clients get errors and smd
# keeps serving; smctl fails clearly when smd is not there; a stale socket
# left by a dead smd is replaced.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
tmp=$(mktemp -d)
cleanup_smd() { [ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null; rm -rf "$tmp"; }
trap 'cleanup_smd; sim_stop' EXIT
# 4x4 torus, one host a switch: dfree needs more than one VL here
$GEN torus2 4 4 1 -o "$tmp/net" 2>/dev/null
sock=$tmp/control
ctl() { "$SMCTL" --socket "$sock" "$@"; }
# to FILE CMD...: CMD with its output in FILE (check's own line stays out)
to() { local f=$1; shift; "$@" >"$f"; }
# field NAME FILE: the value of "NAME: value" in an smctl answer
field() { sed -n "s/^$1: //p" "$2"; }

sim_start "$tmp/net" >/dev/null 2>&1
# Sweeps only on request: every sweep after the first is smctl's
printf 'sweep_interval = 0\n' >"$tmp/conf"
smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out"
check wait_for "$tmp/out" "subnet UP" 1
# smd_start sets RUNTIME_DIRECTORY, as systemd's RuntimeDirectory= does
check grep -q "control socket $sock" "$tmp/out"
check test -S "$sock"
check test "$(stat -c %a "$sock")" = 660

# status: counts as the fabric itself reports them
sim_run ibnetdiscover >"$tmp/ibnd" 2>/dev/null
switches=$(grep -c '^Switch' "$tmp/ibnd")
cas=$(grep -c '^Ca' "$tmp/ibnd")
ca_ports=$(awk '/^Ca/ { ca = 1; next } /^(Switch|$)/ { ca = 0 } ca && /^\[/ { n++ }
	END { print n }' "$tmp/ibnd")
check to "$tmp/st1" ctl status
cat "$tmp/st1"
check test "$(field state "$tmp/st1")" = MASTER
check test "$(field subnet "$tmp/st1")" = up
check test "$(field switches "$tmp/st1")" = "$switches"
check test "$(field cas "$tmp/st1")" = "$cas"
check test "$(field nodes "$tmp/st1")" = $((switches + cas))
check test "$(field ca_ports "$tmp/st1")" = "$ca_ports"
check test "$(field lids "$tmp/st1")" = $((switches + ca_ports))
# no trap on a fresh fabric: only smctl makes smd sweep again
check test "$(field sweeps "$tmp/st1")" = "1 heavy, 0 light"
n=1
check test "$(field traps "$tmp/st1")" = 0
check test "$(field last_sweep_result "$tmp/st1")" = up
check test "$(field problems "$tmp/st1")" = 0
check grep -q "^sa: answering" "$tmp/st1"
# The database view is still there with --db (no daemon needed)
check "$SMCTL" --db "$tmp/smd.db" status

# resweep: answered once the sweep ended. A light one first: nothing
# changed, so no heavy sweep follows
check to "$tmp/rs" ctl resweep
cat "$tmp/rs"
check grep -q "^kind: light, no change found (16 switches asked" "$tmp/rs"
check test "$(field sweep "$tmp/rs")" = $n
check test "$(field result "$tmp/rs")" = up
check grep -q "control: a sweep requested" "$tmp/out"
check test "$(grep -c "subnet UP" "$tmp/out")" -eq 1
# --heavy: a full sweep, which the log and the count show
check to "$tmp/rs2" ctl resweep --heavy
cat "$tmp/rs2"
check test "$(field kind "$tmp/rs2")" = heavy
check test "$(field sweep "$tmp/rs2")" = $((n + 1))
check test "$(field result "$tmp/rs2")" = up
check grep -q "control: a heavy sweep requested" "$tmp/out"
check grep -q "heavy sweep: requested" "$tmp/out"
check test "$(grep -c "subnet UP" "$tmp/out")" -eq 2
ctl status >"$tmp/st2"
check test "$(field sweeps "$tmp/st2" | cut -d" " -f1-2)" = "$((n + 1)) heavy,"
check test "$(field resweep_pending "$tmp/st2")" = no

# check-routes: the verifier's verdict on what smd programmed
check to "$tmp/cr" ctl check-routes
cat "$tmp/cr"
check test "$(field engine "$tmp/cr")" = dfree
check test "$(field unreachable "$tmp/cr")" = 0
check test "$(field loops "$tmp/cr")" = 0
check grep -q "^deadlock_free: yes" "$tmp/cr"
check test "$(field verdict "$tmp/cr")" = OK
pairs=$(field pairs "$tmp/cr" | cut -d' ' -f1)
# every (source port, LID) pair of the torus: each of the LIDs to the others
lids=$((switches + ca_ports))
check test "$pairs" = $((lids * (lids - 1)))
check test "$(field routed "$tmp/cr")" = "$pairs"
# independent judgement of the same routes by the real tools
check python3 "$here/checkfabric.py" "$tmp/net"

# Bad and misbehaving clients: errors for them, service for the others
check python3 "$here/ctl_abuse.py" "$sock"
rc=0; ctl status extra >"$tmp/e1" 2>&1 || rc=$?
check test "$rc" -eq 2
check kill -0 "$smd_pid"
check to "$tmp/st3" ctl status
check test "$(field state "$tmp/st3")" = MASTER
check to "$tmp/rs3" ctl resweep --heavy
check test "$(field result "$tmp/rs3")" = up

# smd gone: the socket goes with it, and smctl says smd is not running
rc=0
smd_stop || rc=$?
check test "$rc" -eq 0
check test ! -e "$sock"
rc=0; ctl status >"$tmp/e2" 2>&1 || rc=$?
cat "$tmp/e2"
check test "$rc" -eq 1
check grep -q "smd is not running: no control socket $sock" "$tmp/e2"
rc=0; ctl resweep >"$tmp/e3" 2>&1 || rc=$?
check test "$rc" -eq 1
check grep -q "smd is not running" "$tmp/e3"

# A stale socket (an smd that died without cleaning up): smctl says nobody
# answers; the next smd replaces it
python3 -c 'import socket, sys; s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1])' "$sock"
rc=0; ctl status >"$tmp/e4" 2>&1 || rc=$?
cat "$tmp/e4"
check test "$rc" -eq 1
check grep -q "smd is not running: nobody answers on $sock" "$tmp/e4"
smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out2"
check wait_for "$tmp/out2" "subnet UP" 1
check grep -q "control socket $sock" "$tmp/out2"
check to "$tmp/st4" ctl status
check test "$(field state "$tmp/st4")" = MASTER
check smd_stop
finish
