#!/bin/bash
# Duplicate GUIDs (issue 12): host "evil" takes the node GUID of host
# "victim" (ibsim's console command Guid; its port GUID follows, node GUID +
# port, and only its SystemImageGUID still tells them apart). smd reports
# the GUID with both directed routes, leaves both hosts out (their ports
# never ACTIVE, no LFT entry for either, not even the victim's old LID),
# brings up the rest, and takes the victim back once the copy is gone.
# Judged with ibroute and smpquery. Before issue 12 the copy was merged
# into the victim and the victim's LID routed to the copy's cable.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
tmp=$(mktemp -d)
cleanup_smd() { [ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null; rm -rf "$tmp"; }
trap 'cleanup_smd; sim_stop' EXIT
cd "$tmp" || exit 1
victim_guid=0x0002c90300000100
cat >net <<'EOF'
caguid=0x0002c90300000004
Hca	1 "smhost"
[1]	"sw-01"[1]

switchguid=0x0011750000000001
Switch	8 "sw-01"
[1]	"smhost"[1]
[2]	"sw-02"[3]
[3]	"host-1"[1]
[4]	"victim"[1]

switchguid=0x0011750000000002
Switch	8 "sw-02"
[1]	"host-2"[1]
[3]	"sw-01"[2]
[5]	"evil"[1]

caguid=0x0002c90300000008
Hca	1 "host-1"
[1]	"sw-01"[3]

caguid=0x0002c9030000000c
Hca	1 "host-2"
[1]	"sw-02"[1]

caguid=0x0002c90300000100
Hca	1 "victim"
[1]	"sw-01"[4]

caguid=0x0002c90300000200
Hca	1 "evil"
[1]	"sw-02"[5]
EOF
ctl() { "$SMCTL" --socket "$tmp/control" "$@"; }
field() { sed -n "s/^$1: //p" "$2"; }
# portinfo HOST FIELD: a field of HOST's own PortInfo, by directed route "0"
portinfo() { SIM_HOST=$1 sim_run smpquery -D portinfo 0 2>/dev/null | sed -n "s/^$2:\.*//p"; }
# lft: every LFT entry of both switches, "LID PORT" (sw-01 first, then sw-02)
lft() {
	local path lid port rest

	for path in 0,1 0,1,2; do
		sim_run ibroute -D "$path" 2>/dev/null | grep '^0x' |
			while read -r lid port rest; do printf '%d %d\n' "$lid" "$((10#$port))"; done
	done
}
# reach FROM LID: the SystemImageGUID of the node LID LID leads to from FROM
reach() { SIM_HOST=$1 sim_run smpquery nodeinfo "$2" 2>/dev/null | sed -n 's/^SystemGuid:\.*//p'; }

# 1. The copy is there from the start: smd --once
sim_start net >/dev/null 2>&1
sim_console "Guid \"evil\" $victim_guid"
SIM_HOST=evil sim_run smpquery -D nodeinfo 0 >ni 2>/dev/null
check grep -q "^Guid:\.*$victim_guid" ni
sim_run "$SMD" --once --db "$tmp/db1" >once.log 2>&1 || true
cat once.log
check grep -q "subnet UP: 5 nodes" once.log
check grep -q "node GUID $victim_guid answers at path 0,1,4 and at path 0,1,2,5" once.log
check test "$(portinfo victim LinkState)" != Active
check test "$(portinfo evil LinkState)" != Active
lft >lft1
cat lft1
# 5 LIDs (smhost, host-1, host-2, two switches) on each switch, none toward
# a port facing either copy
check test "$(wc -l <lft1)" -eq 10
check test "$(sed -n 1,5p lft1 | awk '$2 == 4' | wc -l)" -eq 0
check test "$(sed -n 6,10p lft1 | awk '$2 == 5' | wc -l)" -eq 0
h2=$(portinfo host-2 Lid)
check test "$(reach host-1 "$h2")" = 0x0002c9030000000c
sim_stop

# 2. A daemon that knew the victim, then the copy is cabled in
sim_start net >/dev/null 2>&1
sim_console 'Unlink "evil"[1]'
printf 'sweep_interval = 0\ncontrol_socket = %s\n' "$tmp/control" >conf
smd_start conf "$tmp/db2" "$tmp/out"
check wait_for "$tmp/out" "subnet UP" 1
vlid=$(portinfo victim Lid)
check test "$vlid" -gt 0
check test "$(reach host-2 "$vlid")" = "$victim_guid"
check test "$(lft | awk -v l="$vlid" '$1 == l' | wc -l)" -eq 2
sim_console "Guid \"evil\" $victim_guid"
sim_console 'Link "evil"[1] "sw-02"[5]'
check ctl resweep --heavy
ctl status >st2
cat st2
check test "$(field duplicate_guids st2)" = 1
check grep -q "^duplicate_guid: node $victim_guid at path 0,1,4 and at path 0,1,2,5" st2
check grep -q "^problem_counts: 1 duplicate GUID" st2
check test "$(field sa st2)" = answering
check kill -0 "$smd_pid"
lft >lft2
# No switch forwards the victim's LID any more, to the copy or anywhere
check test "$(awk -v l="$vlid" '$1 == l' lft2 | wc -l)" -eq 0
check test "$(portinfo evil LinkState)" != Active
h2=$(portinfo host-2 Lid)
check test "$(reach host-1 "$h2")" = 0x0002c9030000000c
check test -z "$(reach host-1 "$vlid")"

# 3. The copy goes: the victim is back with its LID
sim_console 'Unlink "evil"[1]'
check ctl resweep --heavy
ctl status >st3
check test "$(field duplicate_guids st3)" = 0
check test "$(portinfo victim Lid)" = "$vlid"
check test "$(reach host-2 "$vlid")" = "$victim_guid"
check test "$(lft | awk -v l="$vlid" '$1 == l' | wc -l)" -eq 2
check smd_stop
finish
