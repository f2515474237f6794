#!/bin/bash
# Issue 11, bad input: requests the SA must refuse, each with its IBA status
# (SA statuses, IBA 15.2.1.1: 0x0200 ERR_REQ_INVALID, 0x0300 ERR_NO_RECORDS,
# 0x0600 ERR_REQ_INSUFFICIENT_COMPONENTS); nothing may change (the groups
# the SA knows and the requester's memberships are the same before and
# after) and the SM must still answer.  Rules, by the IBA compliance
# statements they come from (see /work/wt/notes/mcast-facts.md):
#   JoinState 0, or a create by a port that is not a (SendOnly)FullMember:
#     o15-0.2.4, o15-0.1.9 -> ERR_REQ_INVALID
#   a create without Q_Key, P_Key, SL, FlowLabel, TClass (o15-0.2.3), a Set
#     or Delete without MGID, PortGID, JoinState -> INSUFFICIENT_COMPONENTS
#   MTU/rate no link can carry, or a selector that can never hold; a P_Key
#     the port lacks; an invalid MGID (IBA 4.1.1, o15-0.1.5); components
#     that differ from the existing group's (o15-0.2.4 item 5) -> REQ_INVALID
#   a leave of a group the port is not in, or of JoinState bits it does not
#     hold, or of another port's membership (o15-0.1.14, o15-0.2.1)
#     -> ERR_REQ_INVALID; a Get that matches nothing -> ERR_NO_RECORDS
#   another port's PortGID from an untrusted requester (the issue's rule:
#     only trusted requesters may join for others) -> MC_EXPECT_FOREIGN
#     (default 0x0200; opensm 3.3.23 accepts such joins when both ports
#     share a partition)
# The SM is a parameter: MC_SM=smd (default) | opensm | custom (mcast_lib.sh).
. "$(dirname "$0")/mcast_lib.sh"
MC_EXPECT_FOREIGN=${MC_EXPECT_FOREIGN:-0x0200}
$GEN ft2 12 -o "$mc_tmp/net" 2>/dev/null
mc_sim_start "$mc_tmp/net"
mc_sm_start "$mc_tmp/net"
A=host-0005
B=host-0040
C="qkey=0x11 pkey=0xffff sl=0 flow=0 tclass=0"
BC=ff12:401b:ffff::ffff:ffff

# setup: A and B in the broadcast group; A creates ff12:e001::1
SIM_HOST=$B mc_client ipoib >"$mc_tmp/setupB.out" 2>/dev/null || true
SIM_HOST=$A mc_client ipoib \; join mgid=ff12:e001::1 $C >"$mc_tmp/setupA.out" 2>/dev/null || true
check test "$(mc_count "$mc_tmp/setupA.out" ipoib 0x0000)" -eq 1
check test "$(mc_count "$mc_tmp/setupA.out" join 0x0000)" -eq 1
check test "$(mc_count "$mc_tmp/setupB.out" ipoib 0x0000)" -eq 1
bg=$(SIM_HOST=$B mc_client info 2>/dev/null | sed -n 's/.* guid=0x\(....\)\(....\)\(....\)\(....\).*/fe80::\1:\2:\3:\4/p')
check test -n "$bg"

state() {	# what may not change: the groups, A's and B's memberships
	mc_client scan 2>/dev/null | grep -o ' mgid=[^ ]* ' | sort
	SIM_HOST=$A mc_client gettable pgid=self smkey="$MC_SMKEY" 2>/dev/null |
		grep ' rec=' | grep -o ' mgid=[^ ]* \| js=[^ ]*' | xargs -n 2 | sort
	SIM_HOST=$B mc_client gettable pgid=self smkey="$MC_SMKEY" 2>/dev/null |
		grep ' rec=' | grep -o ' mgid=[^ ]* \| js=[^ ]*' | xargs -n 2 | sort
}
state >"$mc_tmp/before"

# expected status | what | the request (from A)
cat >"$mc_tmp/cases" <<EOC
0x0200|JoinState 0 on an existing group|join mgid=$BC js=0
0x0200|JoinState 0 on a create|join mgid=ff12:e001::10 $C js=0
0x0200|a create by a NonMember|join mgid=ff12:e001::11 $C js=2
0x0200|a create by a SendOnlyNonMember|join mgid=ff12:e001::12 $C js=4
0x0200|MGID 0 create with JoinState 0|join mgid=0 $C js=0
0x0600|a create without Q_Key, P_Key, SL, FlowLabel, TClass|join mgid=ff12:e001::13
0x0600|a create without FlowLabel (MGID 0)|join mgid=0 qkey=0x11 pkey=0xffff sl=0 tclass=0
0x0600|the IPoIB join of a group nobody created|join mgid=ff12:401b:ffff::1234 pkey=0xffff mask=mgid,pgid,pkey,js
0x0600|a join without PortGID in the mask|join mgid=$BC mask=mgid,js
0x0600|a leave without JoinState in the mask|leave mgid=ff12:e001::1 mask=mgid,pgid
0x0200|a P_Key the port lacks (create, partition 0x0001)|join mgid=ff12:e001::14 qkey=0x11 pkey=0x8001 sl=0 flow=0 tclass=0
0x0600|the IPoIB join of the broadcast group of an unconfigured partition|ipoib pkey=0x8001
0x0200|MTU exactly 4096 on 2048-byte links|join mgid=ff12:e001::15 $C mtusel=2 mtu=5
0x0200|MTU greater than 4096|join mgid=ff12:e001::16 $C mtusel=0 mtu=5
0x0200|MTU less than 256|join mgid=ff12:e001::17 $C mtusel=1 mtu=1
0x0200|MTU code 7 (not an MTU)|join mgid=ff12:e001::18 $C mtusel=2 mtu=7
0x0200|rate exactly 40 Gb/s on 10 Gb/s links|join mgid=ff12:e001::19 $C ratesel=2 rate=7
0x0200|rate less than 2.5 Gb/s|join mgid=ff12:e001::1a $C ratesel=1 rate=2
0x0200|a join with an MTU the group does not have|join mgid=$BC mtusel=2 mtu=5
0x0200|a join with a Q_Key the group does not have|join mgid=$BC qkey=0x1234
0x0200|an MGID that is not multicast|join mgid=102::1 $C
0x0200|a leave of a group the port is not in|leave mgid=ff12:401b:ffff::ffff:fff0
0x0200|a leave of a group that does not exist|leave mgid=ff12:e001::99
0x0200|a leave of JoinState bits the port does not hold|leave mgid=ff12:e001::1 js=2
0x0200|a leave with JoinState 0|leave mgid=ff12:e001::1 js=0
0x0200|a leave of another port's membership|leave mgid=$BC pgid=$bg
0x0300|a Get of a group that does not exist|get mgid=ff12:e001::99
$MC_EXPECT_FOREIGN|a join of another port (untrusted requester)|join mgid=ff12:e001::1 pgid=$bg
$MC_EXPECT_FOREIGN|a ProxyJoin of another port (untrusted requester)|join mgid=ff12:e001::1 pgid=$bg proxy=1
$MC_EXPECT_FOREIGN|a create for another port (untrusted requester)|join mgid=ff12:e001::1b $C pgid=$bg
EOC
awk -F'|' '{ print $3 }' "$mc_tmp/cases" >"$mc_tmp/batch"
SIM_HOST=$A mc_client --inflight 1 --batch "$mc_tmp/batch" >"$mc_tmp/bad.out" 2>/dev/null || true
n=0
while IFS='|' read -r want what req; do
	n=$((n + 1))
	got=$(awk -v n="$n" '$2 == "seq=" n { for (i = 1; i <= NF; i++) if ($i ~ /^status=/) print substr($i, 8) }' \
		"$mc_tmp/bad.out")
	if [ "$got" = "$want" ]; then ok "$what: $got"; else bad "$what: got ${got:-nothing}, want $want ($req)"; fi
done <"$mc_tmp/cases"

# nothing changed, nothing crashed
state >"$mc_tmp/after"
if cmp -s "$mc_tmp/before" "$mc_tmp/after"; then ok "groups and memberships unchanged"
else bad "groups or memberships changed:"; diff "$mc_tmp/before" "$mc_tmp/after" | head -n 10; fi
check test "$(wc -l <"$mc_tmp/before")" -ge 3
check kill -0 "$mc_sm_pid"
SIM_HOST=$A mc_client get mgid=$BC >"$mc_tmp/alive.out" 2>/dev/null || true
check test "$(mc_count "$mc_tmp/alive.out" get 0x0000)" -eq 1
mc_sm_stop
finish
