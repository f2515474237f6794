#!/bin/bash
# Issue 11, after a failover and after a restart: two smd share a 3-level
# fat-tree; the hosts join the IPoIB broadcast group and create groups of
# their own on the master. The master is killed: the standby, now master,
# sets ClientReregister on every CA port (the hosts look like real HCAs to
# it: rereg_shim.c makes their PortInfo advertise the capability and writes
# down each ClientReregister sent), and the hosts' joins succeed again on
# its SA, with MFTs that deliver (checkmft.py). Then that smd is restarted
# on its database: the groups joined again get the MLIDs they had. Last,
# the SA's MulticastForwardingTableRecords say what ibroute -M reads, and a
# host unplugged leaves its groups: the one it alone held is gone, its MLID
# free again.
MC_SM=smd
. "$(dirname "$0")/mcast_lib.sh"
$GEN ft3 4 -o "$mc_tmp/net" 2>/dev/null
mc_sim_start "$mc_tmp/net"
mc_hosts "$mc_tmp/net" | grep -v -x smhost >"$mc_tmp/hosts"
nhosts=$(wc -l <"$mc_tmp/hosts")
shim=$mc_tmp/rereg_shim.so
cc -shared -fPIC -O2 -o "$shim" "$here/rereg_shim.c" -ldl || { bad "building the shim"; finish; }

pids=
sm_run() {	# sm_run NAME HOST [PRELOAD_BEFORE]: smd in $mc_tmp/NAME
	mkdir -p "$mc_tmp/$1"
	(cd "$mc_tmp/$1" && exec env LD_PRELOAD="${3:+$3:}$SIM_PRELOAD" RUNTIME_DIRECTORY="$PWD" \
		REREG_LOG="$mc_tmp/$1/rereg" SIM_HOST="$2" "$SMD" --config conf --db smd.db \
		>>out 2>&1) &
	eval "pid_$1=$!"
	pids="$pids $!"
}
sm_cleanup() {
	for p in $pids; do
		{ kill -KILL "$p" && wait "$p"; } 2>/dev/null || true
	done
}
trap 'sm_cleanup; mc_cleanup' EXIT
wait_log() {	# wait_log FILE PATTERN COUNT
	for _ in $(seq 1800); do
		[ "$(grep -c "$2" "$1" 2>/dev/null || true)" -ge "$3" ] && return 0
		sleep 0.1
	done
	return 1
}
C="qkey=0x11 pkey=0xffff sl=0 flow=0 tclass=0"
join_all() {	# join_all OUT: every host joins the broadcast group; 4 of them two more
	mc_fanout "$mc_tmp/hosts" ipoib >"$1.bc" 2>/dev/null || true
	head -n 4 "$mc_tmp/hosts" >"$mc_tmp/hosts4"
	mc_fanout "$mc_tmp/hosts4" ipoib \; ipoib mgid=ff12:601b:ffff::1 \
		\; join mgid=ff12:e00f::77 $C >"$1.more" 2>/dev/null || true
	cat "$1.bc" "$1.more" >"$1"
}

mkdir -p "$mc_tmp/a" "$mc_tmp/b"
printf 'sm_priority = 5\nsweep_interval = 2\n' >"$mc_tmp/a/conf"
printf 'sm_priority = 1\nsweep_interval = 2\n' >"$mc_tmp/b/conf"
sm_run a smhost
check wait_log "$mc_tmp/a/out" "subnet UP" 1
sm_run b host-0009 "$shim"
check wait_log "$mc_tmp/b/out" "DISCOVERING -> STANDBY" 1
# A standby sets nothing
check test ! -s "$mc_tmp/b/rereg"

join_all "$mc_tmp/j1"
check test "$(mc_count "$mc_tmp/j1" ipoib 0x0000)" -eq $((nhosts + 8))
check test "$(mc_count "$mc_tmp/j1" join 0x0000)" -eq 4

# The master dies; the standby takes over and asks every CA port to reregister
{ kill -KILL "$pid_a" && wait "$pid_a"; } 2>/dev/null || true
check wait_log "$mc_tmp/b/out" "subnet UP" 1
check wait_log "$mc_tmp/b/out" "SA: answering" 1
cas=$(sim_run ibnetdiscover 2>/dev/null | grep -c '^Ca')
rereg=$(sort -u "$mc_tmp/b/rereg" | wc -l)
echo "ClientReregister sent to $rereg distinct CA ports of $cas"
check test "$cas" -ge "$((nhosts + 1))"
check test "$rereg" -eq "$cas"
# ... once: later sweeps of the same master do not ask again
kill -HUP "$pid_b"
check wait_log "$mc_tmp/b/out" "subnet UP" 2
check test "$(sort -u "$mc_tmp/b/rereg" | wc -l)" -eq "$rereg"
check test "$(wc -l <"$mc_tmp/b/rereg")" -eq "$(sort -u "$mc_tmp/b/rereg" | wc -l)"

# The hosts join again, as the driver does on that event: on the new SA
join_all "$mc_tmp/j2"
check test "$(mc_count "$mc_tmp/j2" ipoib 0x0000)" -eq $((nhosts + 8))
check test "$(mc_count "$mc_tmp/j2" join 0x0000)" -eq 4
check test "$(mc_values "$mc_tmp/j2" ipoib qkey)" = 0x00000b1b
cp "$mc_tmp/j2.bc" "$mc_tmp/members"
if mc_checkmft --members "$mc_tmp/j2" --expect-groups 3; then ok "checkmft after the failover"
else bad "checkmft after the failover"; cat "$mc_tmp/checkmft.out"; fi
# MLIDs as the new master gave them, by MGID
mlids() { awk '/ status=0x0000 / { for (i = 1; i <= NF; i++) { if ($i ~ /^mgid=/) g = $i;
	if ($i ~ /^mlid=/) m = $i } print g, m }' "$1" | sort -u; }
mlids "$mc_tmp/j2" >"$mc_tmp/mlids.before"
cat "$mc_tmp/mlids.before"
check test "$(wc -l <"$mc_tmp/mlids.before")" -eq 3

# Restart B on its database: the same groups joined again keep their MLIDs
kill -TERM "$pid_b"
wait "$pid_b" 2>/dev/null || true
: >"$mc_tmp/b/out"
sm_run b host-0009 "$shim"
check wait_log "$mc_tmp/b/out" "subnet UP" 1
check wait_log "$mc_tmp/b/out" "SA: answering" 1
check grep -q "groups' MLIDs remembered from before" "$mc_tmp/b/out"
# Joined in the other order: without the database the MLIDs would differ
tac "$mc_tmp/hosts4" >"$mc_tmp/hosts4r"
mc_fanout "$mc_tmp/hosts4r" join mgid=ff12:e00f::77 $C \; ipoib mgid=ff12:601b:ffff::1 \
	\; ipoib >"$mc_tmp/j3" 2>/dev/null || true
mlids "$mc_tmp/j3" >"$mc_tmp/mlids.after"
cat "$mc_tmp/mlids.after"
check cmp -s "$mc_tmp/mlids.before" "$mc_tmp/mlids.after"

# The SA's MFT records against the switches' tables, entry by entry: one
# Get per switch (its 5 ports make one position, its MLIDs one block: one
# record, whole in one MAD, which the simulator delivers intact)
SMCTL=${SMCTL:-$top/ctl/smctl}
: >"$mc_tmp/mftr"
: >"$mc_tmp/mft.ibroute"
for lid in $(sim_run ibswitches 2>/dev/null | sed -n 's/.* lid \([0-9]*\) .*/\1/p'); do
	(cd "$mc_tmp" && sim_run "$SMCTL" sa mft --lid "$lid" --get) 2>/dev/null |
		awk 'NR > 1' >>"$mc_tmp/mftr"
	# ibroute -M -n: MLID, then one mask per position, position 0 first
	sim_run ibroute -M -n "$lid" 2>/dev/null | python3 -c '
import sys
lid = int(sys.argv[1])
for l in sys.stdin:
    f = l.split()
    if not f or not f[0].lower().startswith("0xc"):
        continue
    ports = [16 * p + b for p, m in enumerate(f[1:]) for b in range(16) if int(m, 16) >> b & 1]
    if ports:
        print("%-5d 0x%04x ports %s" % (lid, int(f[0], 16), " ".join(map(str, ports))))
' "$lid" >>"$mc_tmp/mft.ibroute"
done
sort -o "$mc_tmp/mftr" "$mc_tmp/mftr"
sort -o "$mc_tmp/mft.ibroute" "$mc_tmp/mft.ibroute"
check test "$(wc -l <"$mc_tmp/mftr")" -ge 10
if cmp -s "$mc_tmp/mftr" "$mc_tmp/mft.ibroute"; then ok "MFT records = ibroute -M"
else bad "MFT records differ from ibroute -M"; diff "$mc_tmp/mftr" "$mc_tmp/mft.ibroute" | head; fi

# A host unplugged: a group only it held goes, and so does its MLID
lone=$(sed -n 5p "$mc_tmp/hosts")
SIM_HOST=$lone mc_client ipoib \; join mgid=ff12:e00f::99 $C >"$mc_tmp/lone" 2>/dev/null || true
check test "$(mc_count "$mc_tmp/lone" join 0x0000)" -eq 1
lone_mlid=$(mc_values "$mc_tmp/lone" join mlid)
mc_client get mgid=ff12:e00f::99 >"$mc_tmp/lone.get" 2>/dev/null || true
check test "$(mc_count "$mc_tmp/lone.get" get 0x0000)" -eq 1
sweeps=$(grep -c "subnet UP" "$mc_tmp/b/out")
sim_console "Unlink \"$lone\"[1]"
check wait_log "$mc_tmp/b/out" "subnet UP" $((sweeps + 1))
check grep -q "memberships of ports that left the fabric or the group.s partition dropped" "$mc_tmp/b/out"
mc_client get mgid=ff12:e00f::99 >"$mc_tmp/lone.get2" 2>/dev/null || true
check test "$(mc_count "$mc_tmp/lone.get2" get 0x0300)" -eq 1
# ... and its MLID is the next group's
SIM_HOST=$(sed -n 6p "$mc_tmp/hosts") mc_client join mgid=ff12:e00f::aa $C \
	>"$mc_tmp/next" 2>/dev/null || true
check test "$(mc_values "$mc_tmp/next" join mlid)" = "$lone_mlid"
finish
