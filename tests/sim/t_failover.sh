#!/bin/bash
# SM election and failover (IBA 14.4), judged by the real tools: two smd on
# two hosts of one fabric settle on one master (the higher sm_priority) and
# one standby that programs nothing; sminfo shows MASTER and STANDBY. The
# master is killed (SIGKILL): the standby is master within 15 s (the bound
# the issue sets), every port keeps its LID and the fabric checks out.
# Then the old master comes back with its higher priority: it finds a
# master, goes standby, and the master hands over to it (SMInfo HANDOVER):
# one master again, the better one, and still the same LIDs. Then the same
# when the better SM's IsSM trap is lost (only its polls tell the master),
# and last, both started at the same moment settle the same way.
. "$(dirname "$0")/common.sh"
tmp=$(mktemp -d)
pids=
cleanup() {
	for p in $pids; do kill -KILL "$p" 2>/dev/null; done
	rm -rf "$tmp"
}
trap 'cleanup; sim_stop' EXIT
$GEN ft3 4 -o "$tmp/net" 2>/dev/null
sim_start "$tmp/net" >/dev/null 2>&1

# start_sm NAME HOST: smd in $tmp/NAME (its own cwd, config, database)
start_sm() {
	(cd "$tmp/$1" && exec env LD_PRELOAD="$SIM_PRELOAD" RUNTIME_DIRECTORY="$PWD" \
		SIM_HOST="$2" "$SMD" --config conf --db smd.db >>out 2>&1) &
	eval "pid_$1=$!"
	pids="$pids $!"
}
# port_lid HOST: the LID the port of HOST holds, read by directed route
port_lid() {
	SIM_HOST=$1 sim_run smpquery -D portinfo 0 2>/dev/null | sed -n 's/^Lid:\.*//p'
}
# sm_state HOST: what sminfo, from another host, says of the SM on HOST
sm_state() {
	SIM_HOST=host-0007 sim_run sminfo "$(port_lid "$1")" 2>&1
}

mkdir "$tmp/a" "$tmp/b"
# Short sweep intervals: the master's next sweep notices a new SM sooner
printf 'sm_priority = 5\nsweep_interval = 3\n' >"$tmp/a/conf"
printf 'sm_priority = 1\nsweep_interval = 3\n' >"$tmp/b/conf"
# A first: an SM that starts while the other has not yet opened its port
# finds nobody and becomes master too, until the handover settles it
start_sm a smhost
check wait_for "$tmp/a/out" "subnet UP" 1
start_sm b host-0009

# One master (A, the higher priority), one standby (B)
check wait_for "$tmp/b/out" "DISCOVERING -> STANDBY: SM 0x0002c90300000005 (priority 5) is master" 1
check python3 "$here/checkfabric.py" "$tmp/net"
sm_state smhost >"$tmp/sminfo.a"
sm_state host-0009 >"$tmp/sminfo.b"
cat "$tmp/sminfo.a" "$tmp/sminfo.b"
check grep -q "priority 5 state 3 SMINFO_MASTER" "$tmp/sminfo.a"
check grep -q "priority 1 state 2 SMINFO_STANDBY" "$tmp/sminfo.b"
# SIGHUP reads the standby's configuration but does not make it sweep
kill -HUP "$pid_b"
check wait_for "$tmp/b/out" "SIGHUP: STANDBY, not sweeping" 1
# The standby programmed nothing: no LIDs, no tables, no SA
check test "$(grep -c 'programmed:\|subnet UP\|SA: answering' "$tmp/b/out")" -eq 0
# ... and the master saw it as standby. The master reads other SMs' SMInfo
# in heavy sweeps only: the one B's arrival started may have found B still
# DISCOVERING (a loaded machine), so ask A for one now that B is STANDBY
"$SMCTL" --socket "$tmp/a/control" resweep --heavy >/dev/null
check wait_for "$tmp/a/out" "SM 0x0002c90300000029 (priority 1) is STANDBY" 1
# ... and its SA lists both SMs (SMInfoRecord: LID, GUID, priority, state),
# as of the end of the sweep that saw the standby
for _ in $(seq 50); do
	SIM_HOST=host-0007 sim_run "$SMCTL" sa sminfo >"$tmp/smir" 2>/dev/null || true
	grep -q "^$(port_lid host-0009) 0 0x0002c90300000029 0x0000000000000000 [0-9]* 1 2$" "$tmp/smir" && break
	sleep 0.2
done
cat "$tmp/smir"
check grep -q "^$(port_lid smhost) 0 0x0002c90300000005 0x0000000000000000 [0-9]* 5 3$" "$tmp/smir"
check grep -q "^$(port_lid host-0009) 0 0x0002c90300000029 0x0000000000000000 [0-9]* 1 2$" "$tmp/smir"
fabric_lids >"$tmp/lids.before"
check test "$(wc -l <"$tmp/lids.before")" -eq 36

# The master dies: B takes over within 15 s, keeping every LID
kill -KILL "$pid_a"
t0=$(date +%s%N)
check wait_for "$tmp/b/out" "subnet UP" 1
took=$((($(date +%s%N) - t0) / 1000000))
echo "standby was master and the subnet up ${took} ms after the kill"
check test "$took" -le 15000
check grep -q "STANDBY -> DISCOVERING" "$tmp/b/out"
check grep -q "DISCOVERING -> MASTER" "$tmp/b/out"
check grep -q "36 kept, 0 remembered, 0 new" "$tmp/b/out"
sm_state host-0009 >"$tmp/sminfo.b2"
cat "$tmp/sminfo.b2"
check grep -q "state 3 SMINFO_MASTER" "$tmp/sminfo.b2"
fabric_lids >"$tmp/lids.after"
check diff "$tmp/lids.before" "$tmp/lids.after"
check python3 "$here/checkfabric.py" "$tmp/net"
# The ports now send their traps to the new master
check test "$(SIM_HOST=host-0007 sim_run smpquery -D portinfo 0 |
	sed -n 's/^SMLid:\.*//p')" = "$(port_lid host-0009)"

# A comes back, outranking the master: it goes standby, then B hands over
start_sm a smhost
check wait_for "$tmp/a/out" "DISCOVERING -> STANDBY: SM 0x0002c90300000029 (priority 1) is master" 1
check wait_for "$tmp/a/out" "STANDBY -> MASTER: SM 0x0002c90300000029 handed mastership over" 1
check wait_for "$tmp/b/out" "MASTER -> STANDBY" 1
check wait_for "$tmp/a/out" "subnet UP" 2
check wait_for "$tmp/b/out" "acknowledged the handover" 1
sm_state smhost >"$tmp/sminfo.a3"
sm_state host-0009 >"$tmp/sminfo.b3"
cat "$tmp/sminfo.a3" "$tmp/sminfo.b3"
check grep -q "priority 5 state 3 SMINFO_MASTER" "$tmp/sminfo.a3"
check grep -q "priority 1 state 2 SMINFO_STANDBY" "$tmp/sminfo.b3"
fabric_lids >"$tmp/lids.end"
check diff "$tmp/lids.before" "$tmp/lids.end"
check python3 "$here/checkfabric.py" "$tmp/net"

# An SMInfo Set with an attribute modifier that means nothing (sminfo -s
# sends 0) is refused and changes nothing
SIM_HOST=host-0007 sim_run sminfo -s 2 "$(port_lid smhost)" >/dev/null 2>&1 || true
check grep -q "priority 5 state 3 SMINFO_MASTER" <(sm_state smhost)

stop_both() {
	for p in a b; do
		kill -TERM "$(eval echo "\$pid_$p")"
		rc=0
		wait "$(eval echo "\$pid_$p")" || rc=$?
		check test "$rc" -eq 0
	done
	pids=
}
stop_both

# A standby whose IsSM trap went nowhere (its port's SMLid points at no SM)
# is still found: its polls carry its SMInfo, and the master it outranks
# hands over. B alone first, with no light sweeps to stumble on A.
printf 'sm_priority = 1\nsweep_interval = 0\n' >"$tmp/b/conf"
n=$(grep -c "subnet UP" "$tmp/b/out")
start_sm b host-0009
check wait_for "$tmp/b/out" "subnet UP" $((n + 1))
SIM_HOST=smhost sim_run ibportstate -D 0 1 smlid 999 >/dev/null 2>&1
check test "$(SIM_HOST=smhost sim_run smpquery -D portinfo 0 | sed -n 's/^SMLid:\.*//p')" = 999
start_sm a smhost
check wait_for "$tmp/b/out" "SM 0x0002c90300000005 (priority 5) polls this master and outranks it" 1
check wait_for "$tmp/a/out" "STANDBY -> MASTER: SM 0x0002c90300000029 handed mastership over" 2
check test "$(grep -c "DISCOVERING -> STANDBY: SM 0x0002c90300000029 (priority 1) is master" \
	"$tmp/a/out")" -eq 2
check grep -q "priority 5 state 3 SMINFO_MASTER" <(sm_state smhost)
stop_both
printf 'sm_priority = 1\nsweep_interval = 3\n' >"$tmp/b/conf"

# Both at once: whoever wins the race, they settle on A master, B standby
start_sm a smhost
start_sm b host-0009
settled=
for _ in $(seq 60); do
	if sm_state smhost | grep -q "state 3 SMINFO_MASTER" &&
	   sm_state host-0009 | grep -q "state 2 SMINFO_STANDBY"; then
		settled=1
		break
	fi
	sleep 0.5
done
check test -n "$settled"
[ -n "$settled" ] || { sm_state smhost; sm_state host-0009; tail -n 15 "$tmp/a/out" "$tmp/b/out"; }
fabric_lids >"$tmp/lids.last"
check diff "$tmp/lids.before" "$tmp/lids.last"
stop_both
finish
