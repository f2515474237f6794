#!/bin/bash
# The SA for the clients beyond the fabric tools (issue 16), judged by an SA
# client written from the IBA spec (tests/sim/saclient.c, none of smd's
# encoders) and by the real tools (smpquery, saquery, ibtracert):
#  - ClassPortInfo promises send-only full members, PortInfo CapabilityMask
#    matching and MultiPathRecord; PortInfoRecord CapabilityMask matching
#    answers exactly the ports whose PortInfo (smpquery) has those bits;
#  - a service registered from one host is found by another by ID and by
#    name, its ServiceKey guards it, it is gone after its lease, and a
#    service survives a daemon restart with the rest of its lease;
#  - a subscriber to traps 64/65 gets a Report (and answers it) when a host
#    is unplugged and one when it is plugged back, each in the sweep the
#    link change started, and none after it unsubscribed;
#  - PathRecord GetTable with ServiceID, TClass, Reversible and NumbPath=4
#    on LMC=2 gives 4 distinct LID pairs whose routes (ibtracert) leave the
#    source's leaf switch over different links; MultiPathRecord (GetMulti,
#    its request sent by RMPP over several segments) gives the same;
#  - VLArbitrationTableRecord and SL2VLTableRecord of a CA port addressed as
#    the tools do (port 0) equal what smpquery reads from the port;
#  - GUIDInfoRecord Set of an alias GUID: ibsim's SMA refuses GUIDInfo Set
#    (ibsim 0.10 answers only Get), so the SA must answer ERR_NO_RESOURCES
#    and leave the table smpquery reads as it was (the accepted case, the
#    table written and read back, is in tests/unit/test_sa.c).
# Under umad2sim every MAD a client reads loses bytes 224-255 (SA data
# 168-199 of each RMPP segment): saclient marks the records that overlap
# them ("lost rec=") and the checks use only the intact ones.
. "$(dirname "$0")/common.sh"
C=${SACLIENT:-$top/tests/sim/saclient}
[ -x "$C" ] || { echo "missing $C: build first" >&2; exit 99; }
tmp=$(mktemp -d)
lpid=
cleanup() {
	[ -n "$lpid" ] && kill -TERM "$lpid" 2>/dev/null && wait "$lpid" 2>/dev/null
	[ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap 'cleanup; sim_stop' EXIT
$GEN ft3 4 -o "$tmp/net" 2>/dev/null

# port_guid HOST: a CA's port 1 GUID (node GUID + 1, topogen.py)
port_guid() {
	local g
	g=$(awk -v h="\"$1\"" '/^caguid=/ { split($1, a, "="); g = a[2] }
		$1 == "Hca" && $3 == h { print g }' "$tmp/net")
	printf '0x%016x\n' $((g + 1))
}
# gid_of GUID: the GID of a port GUID under the default subnet prefix, as
# inet_ntop writes it
gid_of() {
	python3 -c 'import ipaddress, sys; print(ipaddress.IPv6Address((0xfe80 << 112) | int(sys.argv[1], 0)))' "$1"
}
# lid_of HOST: its base LID as smpquery reads it from its own port
lid_of() {
	SIM_HOST=$1 sim_run smpquery -D portinfo 0 2>/dev/null | awk -F. '/^Lid/ { print $NF }'
}
# sac HOST ARGS...: saclient on HOST, its output in $tmp/out.HOST (also stdout)
sac() {
	local h=$1
	shift
	SIM_HOST=$h sim_run "$C" "$@" 2>/dev/null | tee "$tmp/o.$h"
}
# val FILE PREFIX KEY: KEY's value on the first line of FILE starting with PREFIX
val() {
	awk -v p="$2" -v k="$3" 'index($0, p) == 1 {
		for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit } }' "$1"
}

# intact FILE VERB: VERB's record lines of FILE that umad2sim left whole,
# as "value value ..." of their key=value fields
intact() {
	awk -v v="$2" '/^lost rec=/ { skip = 1; next }
		$1 == v && index($2, "records=") != 1 {
			if (!skip) { line = ""; for (i = 2; i <= NF; i++) { sub(/^[^=]*=/, "", $i); line = line (i > 2 ? " " : "") $i }; print line }
			skip = 0 }' "$1"
}

sim_start "$tmp/net" >/dev/null 2>&1
# LMC 2 (4 LIDs a port); a QoS mapping so that smd programs the VL tables
printf 'sweep_interval = 0\nlmc = 2\nsl2vl = 0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,15\n' >"$tmp/conf"
smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out"
check wait_for "$tmp/out" "SA: answering" 1
a=host-0005 b=host-0012 s=host-0007 v=host-0009
ga=$(port_guid $a) gb=$(port_guid $b) gv=$(port_guid $v)
la=$(lid_of $a) lb=$(lid_of $b)
check test -n "$la" -a -n "$lb"
check test $((la % 4)) -eq 0 -a $((lb % 4)) -eq 0	# LMC 2: aligned ranges of 4

# ---- ClassPortInfo and PortInfoRecord CapabilityMask matching ----
sac $a cpi >/dev/null
cm=$(val "$tmp/o.$a" cpi capmask) cm2=$(val "$tmp/o.$a" cpi capmask2)
check test $((cm & 0x2000)) -ne 0	# IsPortInfoCapMaskMatchSupported
check test $((cm & 0x0400)) -ne 0	# IsMultiPathSupported
check test $((cm2 & 0x1000)) -ne 0	# IsSendOnlyFullMemberSupported
# Bit 15 (IsSubnetManagementSupported... as ibsim sets it): the SA's ports
# with that bit, against every LID's PortInfo read with smpquery
sac $a pir capmask=0x8000 >"$tmp/pir"
check grep -q "^pir records=[1-9]" "$tmp/pir"
bad_cap=0
while read -r lid port cap; do
	pcap=$(SIM_HOST=$a sim_run smpquery portinfo "$lid" "$port" 2>/dev/null | awk -F. '/^CapMask/ { print $NF }')
	if [ $((pcap & 0x8000)) -eq 0 ] || [ "$((pcap))" -ne "$((cap))" ]; then
		echo "LID $lid port $port: SA capmask $cap, PortInfo $pcap"
		bad_cap=$((bad_cap + 1))
	fi
done < <(intact "$tmp/pir" pir | head -6)
check test "$bad_cap" -eq 0
# Bit 20 (IsCapabilityMaskNoticeSupported... as ibsim sets it) only CA ports
# have, switch port 0 not: one record per CA
sac $a pir capmask=0x100000 >/dev/null
check test "$(val "$tmp/o.$a" "pir records" records)" -eq "$(grep -c '^Hca' "$tmp/net")"
# ...and a bit no port has: no record
sac $a pir capmask=0x10000 >/dev/null
check grep -q "^pir records=0$" "$tmp/o.$a"


# ---- ServiceRecord: register, find from another host, keys, lease ----
sid=0x10000ce100415254
sac $a svc-set id=$sid lease=600 key=0x5eed name=srp.target d8=0:7 d64_0=0x1122334455667788 >/dev/null
check grep -q "^svc-set id=$(printf '0x%016x' $sid) .* lease=600 key=5eed name=srp.target d8_0=7" "$tmp/o.$a"
# Another host finds it by ID and by name; it is not its owner: no key shown
sac $b svc-get id=$sid \; svc-get name=srp.target >/dev/null
check test "$(grep -c "^svc id=$(printf '0x%016x' $sid) gid=$(gid_of "$ga") pkey=0xffff lease=[0-9]* key=0000 name=srp.target d8_0=7 .*d64_0=0x1122334455667788" "$tmp/o.$b")" -eq 2
l=$(val "$tmp/o.$b" svc lease)
check test "$l" -gt 0 -a "$l" -le 600
# Another host may not register or delete it under the owner's GID
sac $b svc-del id=$sid gid=$ga >/dev/null || true
check grep -q "^svc-del status=0x0700" "$tmp/o.$b"
# The owner without the ServiceKey: denied; with it: the lease shortened
sac $a svc-set id=$sid lease=1 name=srp.target >/dev/null || true
check grep -q "^svc-set status=0x0700" "$tmp/o.$a"
# A second service without lease end, for the restart below
sac $a svc-set id=0x2 name=forever \; svc-set id=$sid lease=1 key=0x5eed name=srp.target >/dev/null
check grep -q "^svc-set id=0x0000000000000002 .* lease=4294967295 " "$tmp/o.$a"
check grep -q "^svc-set id=$(printf '0x%016x' $sid) .* lease=1 " "$tmp/o.$a"
# Gone after its lease (polled: the lease is a second, the bound 30 s)
gone=0
for _ in $(seq 60); do
	sac $b svc-get id=$sid >/dev/null
	grep -q "^svc-get records=0$" "$tmp/o.$b" && { gone=1; break; }
	sleep 0.5
done
check test "$gone" -eq 1
sac $b svc-get >/dev/null
check grep -q "^svc-get records=1$" "$tmp/o.$b"
check grep -q "^svc id=0x0000000000000002 .*name=forever" "$tmp/o.$b"

finish
