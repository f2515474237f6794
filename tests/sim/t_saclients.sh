#!/bin/bash
# The SA for the clients beyond the fabric tools (issue 16), judged by an SA
# client written from the IBA spec (tests/sim/saclient.c, none of smd's
# encoders) and by the real tools (smpquery, saquery, ibtracert):
#  - ClassPortInfo promises send-only full members, PortInfo CapabilityMask
#    matching and MultiPathRecord; PortInfoRecord CapabilityMask matching
#    answers exactly the ports whose PortInfo (smpquery) has those bits;
#  - a service registered from one host is found by another by ID and by
#    name, its ServiceKey guards it, it is gone after its lease, and a
#    service survives a daemon restart with the rest of its lease; a
#    ServiceGID with the requester's own GUID under a byte-swapped subnet
#    prefix is stored under the real prefix, another host's is refused;
#  - with sa_key set, a request carrying sm_key is not trusted (and is
#    counted in smctl status), one carrying sa_key is;
#  - a subscriber to traps 64/65 gets a Report (and answers it) when a host
#    is unplugged and one when it is plugged back, each in the sweep the
#    link change started, and none after it unsubscribed;
#  - PathRecord GetTable with ServiceID, TClass, Reversible and NumbPath=4
#    on LMC=2 gives 4 distinct LID pairs whose routes (ibtracert) leave the
#    source's leaf switch over different links; MultiPathRecord (GetMulti,
#    its request sent by RMPP over several segments) gives the same;
#  - a NodeRecord asked for by PortGUID alone is the one of the port
#    smpquery reads that GUID at;
#  - VLArbitrationTableRecord and SL2VLTableRecord of a CA port addressed as
#    the tools do (port 0) equal what smpquery reads from the port;
#  - GUIDInfoRecord Set of an alias GUID puts it into the port's GUIDInfo
#    table as smpquery reads it, Delete takes it out, the SA's records equal
#    the table block by block, the table filled to GUIDCap refuses one more
#    (ERR_NO_RESOURCES) and stays as it was; ibsim's own SMA refuses every
#    GUIDInfo Set, so ibsim runs with tests/sim/sma_shim.c, which gives each
#    endport the table IBA 14.2.5.5 describes.
# Under umad2sim every MAD a client reads loses bytes 224-255 (SA data
# 168-199 of each RMPP segment): saclient marks the records that overlap
# them ("lost rec=") and the checks use only the intact ones.
. "$(dirname "$0")/common.sh"
C=${SACLIENT:-${top_builddir:-$top}/tests/sim/saclient}
SMCTL=${SMCTL:-$top/ctl/smctl}
[ -x "$C" ] || { echo "missing $C: build first" >&2; exit 99; }
tmp=$(mktemp -d)
lpid=
cleanup() {
	touch "$tmp/stop"
	[ -n "$lpid" ] && wait "$lpid" 2>/dev/null
	[ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap 'cleanup; sim_stop' EXIT
$GEN ft3 4 -o "$tmp/net" 2>/dev/null
cc -shared -fPIC -O2 -o "$tmp/sma_shim.so" "$here/sma_shim.c" -ldl || { bad "building the shim"; finish; }
export SMA_SHIM_NET=$tmp/net SMA_SHIM_LOG=$tmp/sma.log

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
	SIM_HOST=$h sim_run "$C" "$@" 2>>"$tmp/err" | tee "$tmp/o.$h"
}
# val FILE PREFIX KEY: KEY's value on the first line of FILE starting with PREFIX
val() {
	awk -v p="$2" -v k="$3" 'index($0, p) == 1 {
		for (i = 1; i <= NF; i++) if (index($i, k "=") == 1) { print substr($i, length(k) + 2); exit } }' "$1"
}

# intact FILE VERB [WORDS]: VERB's record lines of FILE whose 8-byte words in
# the mask WORDS (default: all) umad2sim left whole ("lost rec=" lines say
# which were not), as the values of their key=value fields
intact() {
	python3 - "$@" <<'PY'
import sys
path, verb = sys.argv[1], sys.argv[2]
need = int(sys.argv[3], 0) if len(sys.argv) > 3 else ~0
lost = 0
for line in open(path):
    f = line.split()
    if f and f[0] == "lost":
        lost = int(f[2].split("=")[1], 0)
        continue
    if len(f) > 1 and f[0] == verb and "=" in f[1] and f[1].split("=")[0] not in ("records", "method"):
        if not lost & need:
            print(" ".join(x.split("=", 1)[1] for x in f[1:]))
        lost = 0
PY
}

SIM_IBSIM_PRELOAD=$tmp/sma_shim.so sim_start "$tmp/net" >/dev/null 2>&1
check grep -q "^load nodes=" "$tmp/sma.log"
# LMC 2 (4 LIDs a port); a QoS mapping so that smd programs the VL tables;
# light sweeps every second (ibsim sends no trap when a cable is put back)
printf 'sweep_interval = 1\nlog_level = debug\nlmc = 2\nsl2vl = 0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,15\n' >"$tmp/conf"
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
done < <(intact "$tmp/pir" pir >"$tmp/pir.ok"; head -6 "$tmp/pir.ok")
check test "$bad_cap" -eq 0
# Bit 20 (IsCapabilityMaskNoticeSupported... as ibsim sets it) only CA ports
# have, switch port 0 not: one record per CA
sac $a pir capmask=0x100000 >/dev/null
check test "$(val "$tmp/o.$a" "pir records" records)" -eq "$(grep -c '^Hca' "$tmp/net")"
# ...and a bit no port has: no record
sac $a pir capmask=0x10000 >/dev/null
check grep -q "^pir records=0$" "$tmp/o.$a"

# ---- NodeRecord by PortGUID alone (the SA's GUID index) ----
# Two CA ports and a switch: the record the SA finds by the PortGUID
# smpquery reads at a LID is that LID's, with that node's GUID
nr_ok=0
for lid in "$(lid_of $b)" "$(lid_of $v)" \
	"$(SIM_HOST=$a sim_run smpquery -D portinfo 0,1 0 2>/dev/null | awk -F. '/^Lid/ { print $NF }')"; do
	SIM_HOST=$a sim_run smpquery nodeinfo "$lid" >"$tmp/ni" 2>/dev/null
	pg=$(awk -F. '/^PortGuid/ { print $NF }' "$tmp/ni")
	ng=$(awk -F. '/^Guid/ { print $NF }' "$tmp/ni")
	sac $a nr portguid="$pg" >/dev/null
	if [ -n "$pg" ] && [ "$(val "$tmp/o.$a" nr lid)" = "$lid" ] &&
	   [ "$(($(val "$tmp/o.$a" nr port_guid)))" = "$((pg))" ] &&
	   [ "$(($(val "$tmp/o.$a" nr node_guid)))" = "$((ng))" ]; then
		nr_ok=$((nr_ok + 1))
	else
		echo "NodeRecord by PortGUID $pg (LID $lid):"; cat "$tmp/o.$a"
	fi
done
check test "$nr_ok" -eq 3
# ...and none for a GUID no port has (ERR_NO_RECORDS, IBA 15.2.1.3)
sac $a nr portguid=0x1234567812345678 >/dev/null
check grep -q "^nr status=0x0300" "$tmp/o.$a"


# ---- ServiceRecord: register, find from another host, keys, lease ----
sid=0x10000ce100415254
sac $a svc-set id=$sid lease=600 key=0x5eed name=srp.target d8=0:7 d64_0=0x1122334455667788 >/dev/null
check grep -q "^svc-set id=$(printf '0x%016x' $sid) .* lease=600 key=5eed name=srp.target d8_0=7" "$tmp/o.$a"
# Another host finds it by ID and by name; it is not its owner: no key shown
sac $b svc-get id=$sid \; svc-get name=srp.target >/dev/null
want="^svc id=$(printf '0x%016x' $sid) gid=$(gid_of "$ga") pkey=0xffff lease=[0-9]* key=0000"
want+=" name=srp.target d8_0=7 .*d64_0=0x1122334455667788"
check test "$(grep -c "$want" "$tmp/o.$b")" -eq 2
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
# One with a lease to outlive the restart
sac $a svc-set id=0x3 lease=3600 name=hour >/dev/null
check grep -q "^svc-set id=0x0000000000000003 .* lease=3600 " "$tmp/o.$a"
# ServiceGID with the subnet prefix byte-swapped (fe80:: as 0:0:0:80fe)
# and the requester's own GUID: stored under the subnet's prefix, found by
# ServiceID from another host with it; the swapped prefix with another
# host's GUID is still refused (ERR_REQ_INVALID_GID), and so is an unknown
# prefix there
swap_gid() {
	python3 -c 'import ipaddress, sys; print(ipaddress.IPv6Address((0x80fe << 64) | int(sys.argv[1], 0)))' "$1"
}
sac $a svc-set id=0x5a5a gid="$(swap_gid "$ga")" name=swapped >/dev/null
check grep -q "^svc-set id=0x0000000000005a5a gid=$(gid_of "$ga") .*name=swapped" "$tmp/o.$a"
sac $b svc-get id=0x5a5a >/dev/null
check grep -q "^svc id=0x0000000000005a5a gid=$(gid_of "$ga") .*name=swapped" "$tmp/o.$b"
check grep -q "^svc-get records=1$" "$tmp/o.$b"
sac $a svc-set id=0x5a5b gid="$(swap_gid "$gb")" name=other >/dev/null || true
check grep -q "^svc-set status=0x0500$" "$tmp/o.$a"
sac $a svc-get id=0x5a5b >/dev/null
check grep -q "^svc-get records=0$" "$tmp/o.$a"
sac $a svc-del id=0x5a5a gid="$(swap_gid "$ga")" >/dev/null
check grep -q "^svc-del id=0x0000000000005a5a gid=$(gid_of "$ga") .*name=swapped" "$tmp/o.$a"

# ---- PathRecord in full on LMC 2: NumbPath 4, spread over links ----
sac $a path sgid=$ga dgid=$gb numb=4 sid=$sid tclass=0x20 rev=1 >"$tmp/paths"
check grep -q "^path records=4$" "$tmp/paths"
intact "$tmp/paths" path 0x20 >"$tmp/pairs"	# word 5: DLID, SLID
# the records whose LIDs came through: distinct pairs of the two ports'
# LIDs; those wholly intact: the ServiceID, TClass and Reversible asked for
check test "$(awk '{ print $1, $2 }' "$tmp/pairs" | sort -u | wc -l)" -eq "$(wc -l <"$tmp/pairs")"
check test "$(wc -l <"$tmp/pairs")" -ge 3
check test -z "$(awk -v a="$la" -v b="$lb" '$1 < a || $1 > a + 3 || $2 < b || $2 > b + 3' "$tmp/pairs")"
check test "$(intact "$tmp/paths" path | wc -l)" -ge 1
check test -z "$(intact "$tmp/paths" path | awk -v sid="$(printf '0x%016x' $sid)" \
	'$5 != sid || $8 != "0x20" || $9 != 1')"
# The routes of those pairs as the switches' LFTs send them (ibtracert):
# all different (ft3 4 has 4 shortest paths between pods), and the
# source's leaf switch sends them up different links
: >"$tmp/routes"
while read -r sl dl _; do
	SIM_HOST=$a sim_run ibtracert "$sl" "$dl" 2>/dev/null |
		awk '/^\[[0-9]+\] ->/ { printf "%s ", $0 } END { print "" }' >>"$tmp/routes"
done <"$tmp/pairs"
cat "$tmp/routes"
check test "$(sort -u "$tmp/routes" | wc -l)" -eq "$(wc -l <"$tmp/pairs")"
# the leaf's egress: the second hop's "[port] ->"
check test "$(while read -r r; do grep -o '\[[0-9]*\] ->' <<<"$r" | sed -n 2p; done \
	<"$tmp/routes" | sort -u | wc -l)" -ge 2
# MultiPathRecord: the same question by GetMulti, the request sent as 3
# RMPP segments (the GIDs in the first, where umad2sim keeps every byte)
sac $a mpath sgids=$ga dgids=$gb numb=4 rev=1 pad=400 >"$tmp/mpaths"
check grep -q "^mpath method=0x94 attr=0x0035" "$tmp/mpaths"	# GetMultiResp of PathRecords
check grep -q "^mpath records=4$" "$tmp/mpaths"
check test "$(intact "$tmp/mpaths" mpath 0x20 | awk '{ print $1, $2 }' | sort -u | wc -l)" -ge 3
check test -z "$(intact "$tmp/mpaths" mpath 0x20 | awk -v a="$la" -v b="$lb" \
	'$1 < a || $1 > a + 3 || $2 < b || $2 > b + 3 || $9 != 1')"

# ---- VL tables of a CA port, addressed as the tools do (port 0) ----
sac $a vlarb lid=$la port=0 block=1 \; sl2vl lid=$la in=0 out=0 >"$tmp/catab"
SIM_HOST=$a sim_run smpquery vlarb "$la" >"$tmp/smpvlarb" 2>/dev/null
SIM_HOST=$a sim_run smpquery sl2vl "$la" >"$tmp/smpsl2vl" 2>/dev/null
# smpquery: "# Low priority" then "VL    : |0x0 |..." and "WEIGHT: |0x40|..."
want=$(awk '/Low priority/ { on = 1; next } /^#/ { on = 0 }
	on && /^VL/ { gsub(/[^|]*:|[ ]/, ""); nv = split($0, v, "|") }
	on && /^WEIGHT/ { gsub(/[^|]*:|[ ]/, ""); split($0, w, "|") }
	END { for (i = 2; i < nv; i++) printf "%s%s:%s", (i > 2 ? "," : ""), v[i], w[i] }' \
	"$tmp/smpvlarb" | python3 -c 'import sys
print(",".join("%d:%d" % tuple(int(x, 16) for x in p.split(":")) for p in sys.stdin.read().split(",")))')
check grep -q "^vlarb lid=$la port=0 block=1 table=" "$tmp/catab"
check test -n "$want"
check test "$(sed -n 's/^vlarb .*table=//p' "$tmp/catab" | cut -d, -f1-8)" = "$want"
want=$(awk '/in  0, out  0/ { sub(/.*: \|/, ""); gsub(/ /, ""); gsub(/\|/, ",")
	sub(/,$/, ""); print }' "$tmp/smpsl2vl")
check test -n "$want"
check grep -q "^sl2vl lid=$la in=0 out=0 table=$want$" "$tmp/catab"

# ---- InformInfo: Reports of traps 65 and 64, retried until ReportResp ----
# The subscriber holds issm: ibsim hands Reports only to such a client.
# It leaves the first Report unanswered: smd must send it again.
peer=$(awk -v h="\"$v\"" '$1 == "Switch" { sw = $3; gsub(/"/, "", sw) }
	index($2, h "[") == 1 { gsub(/[][]/, "", $1); print sw, $1; exit }' "$tmp/net")
vsw=${peer% *} vport=${peer#* }
check test -n "$vsw" -a -n "$vport"
SIM_HOST=$s sim_run "$C" --issm sub trap=64 \; sub trap=65 \; iir \; \
	listen secs=120 count=3 noresp=1 \; sleep ms=1500 >"$tmp/listen" 2>>"$tmp/err" &
lpid=$!
check wait_for "$tmp/listen" "^listening" 1
check grep -q "^sub trap=65 subscribe=1 method=0x81 attr=0x0003" "$tmp/listen"
check test "$(grep -c "^iir subscriber=$(gid_of "$(port_guid $s)") .* trap=6[45] " "$tmp/listen")" -eq 2
# every field of the InformInfo as the subscriber sent it (saclient's defaults:
# no GID, all LIDs, generic, any type and producer, QPN 0, RespTimeValue 18)
for t in 64 65; do
	check grep -q "^iir subscriber=$(gid_of "$(port_guid $s)") enum=[0-9]* trap=$t type=65535 producer=16777215 gid=:: lid_begin=65535 lid_end=0 generic=1 subscribe=1 qpn=0 resptime=18$" "$tmp/listen"
done
check test "$(sed -n 's/^iir .* enum=\([0-9]*\) .*/\1/p' "$tmp/listen" | sort -u | wc -l)" -eq 2
# "within one sweep": when the Report is there, one sweep has found the
# fabric without the host (N - 1 nodes), one with it back (N nodes)
nodes=$(grep -cE '^(Switch|Hca)' "$tmp/net")
sweeps_of() { grep -c "discovered $1 nodes" "$tmp/out" || true; }
sim_console "Unlink \"$v\"[1]"
check wait_for "$tmp/listen" "^report trap=65 .*gid=$(gid_of "$gv") " 1
check test "$(sweeps_of $((nodes - 1)))" -eq 1
check wait_for "$tmp/listen" "^report trap=65 .*gid=$(gid_of "$gv") " 2
# the same Report twice (the first was not answered), each try with a TID
# of its own: a kernel refuses a request whose TID is still outstanding
check test "$(grep "^report trap=65" "$tmp/listen" | sed 's/.*tid=//' | sort -u | wc -l)" -eq 2
c0=$(sweeps_of "$nodes")
sim_console "Link \"$vsw\"[$vport] \"$v\"[1]"
check wait_for "$tmp/listen" "^report trap=64 .*gid=$(gid_of "$gv") " 1
check test $(($(sweeps_of "$nodes") - c0)) -eq 1
wait "$lpid" || true
lpid=
check grep -q "^listen reports=3$" "$tmp/listen"
# Unsubscribed: no Report for the next unplugging, none of the old ones again
SIM_HOST=$s sim_run "$C" --issm unsub trap=64 \; unsub trap=65 \; iir \; \
	listen secs=120 until="$tmp/stop" >"$tmp/listen2" 2>>"$tmp/err" &
lpid=$!
check wait_for "$tmp/listen2" "^listening" 1
check grep -q "^iir records=0$" "$tmp/listen2"
c1=$(sweeps_of $((nodes - 1)))
sim_console "Unlink \"$v\"[1]"
check wait_for "$tmp/out" "discovered $((nodes - 1)) nodes" $((c1 + 1))
check wait_for "$tmp/out" "port $gv out of service" 2
sleep 3		# Reports would have come at once (the first retry is due within 1 s)
touch "$tmp/stop"
wait "$lpid" || true
lpid=
check grep -q "^listen reports=0$" "$tmp/listen2"
sim_console "Link \"$vsw\"[$vport] \"$v\"[1]"

# ---- Services survive a restart, with the rest of their lease ----
# (the restart adds an sm_key and an sa_key: tested below)
check smd_stop
cp "$tmp/out" "$tmp/out.1"
smk=0x00000000005eed00 sak=0x0000000000c0ffee
{ cat "$tmp/conf"; printf 'sm_key = %s\nsa_key = %s\n' $smk $sak; } >"$tmp/conf.keys"
chmod 600 "$tmp/conf.keys"
smd_start "$tmp/conf.keys" "$tmp/smd.db" "$tmp/out"
check wait_for "$tmp/out" "SA: answering" 1
sac $b svc-get >/dev/null
check grep -q "^svc-get records=2$" "$tmp/o.$b"
check grep -q "^svc .*lease=4294967295 .*name=forever" "$tmp/o.$b"
l=$(grep "^svc .*name=hour " "$tmp/o.$b" | sed 's/.* lease=\([0-9]*\) .*/\1/')
check test "$l" -gt 3000 -a "$l" -le 3600

# ---- sa_key: the SA trusts it, and no longer sm_key ----
# A service for another host's GID needs a trusted request: sm_key is
# refused (ERR_REQ_DENIED) and counted, sa_key registers it (and deletes it)
keylines=$(grep -ciE 'sm_key|sa_key' "$tmp/out" || true)
sac $b --smkey $smk svc-set id=0x7777 gid="$(gid_of "$ga")" name=trustme >/dev/null || true
check grep -q "^svc-set status=0x0700$" "$tmp/o.$b"
sac $b --smkey $sak svc-set id=0x7777 gid="$(gid_of "$ga")" name=trustme >/dev/null
check grep -q "^svc-set id=0x0000000000007777 gid=$(gid_of "$ga") .*name=trustme" "$tmp/o.$b"
sac $b --smkey $sak svc-del id=0x7777 gid="$(gid_of "$ga")" >/dev/null
check grep -q "^svc-del id=0x0000000000007777 .*name=trustme" "$tmp/o.$b"
"$SMCTL" --socket "$tmp/control" --json status >"$tmp/st.json" 2>/dev/null || true
jget() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
check test "$(jget "$tmp/st.json" 'd["sa_key"]')" = True
check test "$(jget "$tmp/st.json" 'd["sa_requests"]["bad_keys"]')" -eq 1
check test "$(grep -ciE 'sm_key|sa_key' "$tmp/out" || true)" -eq "$keylines"	# never logged one by one
# smctl (its own RMPP) shows them too, and an rdma_cm-style PathRecord
SIM_HOST=$b sim_run "$SMCTL" sa services >"$tmp/smctl_svc" 2>/dev/null || true
check grep -q '"forever"' "$tmp/smctl_svc"
check grep -q '"hour"' "$tmp/smctl_svc"
SIM_HOST=$b sim_run "$SMCTL" sa path --sgid "$(gid_of "$gb")" --dgid "$(gid_of "$ga")" \
	--numb-path 4 --service-id 0x1234 --reversible --count >"$tmp/smctl_pr" 2>/dev/null || true
check test "$(cat "$tmp/smctl_pr")" = 4

# ---- GUIDInfoRecord Set/Delete: alias GUIDs in the port's GUIDInfo table ----
# gtab LID: the table smpquery reads from the port ("index guid", nonzero ones)
gtab() {
	SIM_HOST=$a sim_run smpquery guidinfo "$1" 2>/dev/null |
		awk '/^ *[0-9]+:/ { i = $1 + 0; if ($2 !~ /^0x0+$/) print i, $2
			if ($3 !~ /^0x0+$/) print i + 1, $3 }'
}
# gblock LID BLOCK: the 8 GUIDs of block BLOCK as smpquery reads them (it
# shows the last block up to GUIDCap only: the rest are 0)
gblock() {
	SIM_HOST=$a sim_run smpquery guidinfo "$1" 2>/dev/null | awk -v b="$2" '
		/^ *[0-9]+:/ { i = $1 + 0; if (int(i / 8) == b) { g[i % 8] = $2; g[i % 8 + 1] = $3 } }
		END { for (k = 0; k < 8; k++) printf "%s ", (k in g) ? g[k] : "0x0000000000000000" }' |
		xargs
}
# girline FILE VERB: the g0..g7 values of the first VERB record line of FILE
girline() { grep -m1 "^$2 lid=" "$1" | grep -o 'g[0-7]=0x[0-9a-f]*' | cut -d= -f2 | xargs; }
fmt() { printf '0x%016x' "$1"; }
al1=$(fmt 0x0002c9030000aa01)
gtab "$la" >"$tmp/g0"
check test "$(cat "$tmp/g0")" = "0 $(fmt "$ga")"	# the port GUID alone
SIM_HOST=$a sim_run smpquery guidinfo "$la" 2>/dev/null | grep -q "^32 guids capacity" ||
	bad "GUIDCap of $a is not 32"
# Set index 1: the answer, the table and the SA's Get all show it
sac $a gir-set block=0 1="$al1" >/dev/null || true
check test "$(girline "$tmp/o.$a" gir-set)" = "$(fmt "$ga") $al1 $(printf '0x%016x ' 0 0 0 0 0 0 | xargs)"
gtab "$la" >"$tmp/g1"
check test "$(cat "$tmp/g1" | xargs)" = "0 $(fmt "$ga") 1 $al1"
check grep -q "^guidinfo-set node=$a port=1 .*block=0$" "$tmp/sma.log"
sac $a gir lid="$la" block=0 get=1 >/dev/null
check test "$(girline "$tmp/o.$a" gir)" = "$(gblock "$la" 0)"
# Another host may not write it, nor take the alias for itself
sac $b gir-set lid="$la" block=0 2=0x0002c9030000aa02 >/dev/null || true
check grep -q "^gir-set status=0x0700$" "$tmp/o.$b"		# ERR_REQ_DENIED
sac $b gir-set block=0 1="$al1" >/dev/null || true
check grep -q "^gir-set status=0x0200$" "$tmp/o.$b"		# ERR_REQ_INVALID
check test "$(gtab "$lb" | xargs)" = "0 $(fmt "$gb")"
# GUID 0: the SA picks one; into index 31, the table's last
sac $a gir-set block=3 7=0 >/dev/null || true
picked=$(girline "$tmp/o.$a" gir-set | awk '{ print $8 }')
check test -n "$picked" -a "$picked" != "$(fmt 0)"
check grep -qx "31 $picked" <(gtab "$la")
# Fill the table to GUIDCap (31 aliases), then one more is refused
args=
for blk in 0 1 2 3; do
	set --
	for k in 0 1 2 3 4 5 6 7; do
		i=$((blk * 8 + k))
		[ "$i" -eq 0 ] || [ "$i" -eq 31 ] || set -- "$@" "$k=$(fmt $((0x0002c9030000b000 + i)))"
	done
	args="$args gir-set block=$blk $* ;"
done
# shellcheck disable=SC2086
sac $a ${args%;} >/dev/null || true
check test "$(grep -c "^gir-set lid=$la " "$tmp/o.$a")" -eq 4
gtab "$la" >"$tmp/gfull"
check test "$(wc -l <"$tmp/gfull")" -eq 32
check test "$(awk 'NR > 1 && NR < 32 && $2 != sprintf("0x0002c9030000b%03x", $1)' "$tmp/gfull")" = ""
sac $a gir-set block=4 0=0x0002c9030000c000 >/dev/null || true
check grep -q "^gir-set status=0x0100$" "$tmp/o.$a"		# ERR_NO_RESOURCES
gtab "$la" >"$tmp/gfull2"
check cmp -s "$tmp/gfull" "$tmp/gfull2"
# Past GUIDCap the port itself refuses the block (IBA 13.4.7: 0x1c)
SIM_HOST=$a sim_run smpdump -D 0 0x14 3 >"$tmp/dump3" 2>&1 || true
SIM_HOST=$a sim_run smpdump -D 0 0x14 4 >"$tmp/dump4" 2>&1 || true
check grep -q "^SMP status: 0x8000$" "$tmp/dump3"
check grep -q "^SMP status: 0x801c$" "$tmp/dump4"
# The SA's records, block by block, against the table (intact words only)
sac $a gir lid="$la" >"$tmp/girall"
check grep -q "^gir records=4$" "$tmp/girall"
n_cmp=0
while read -r l blk g; do
	[ "$(gblock "$la" "$blk")" = "$g" ] || bad "GUIDInfoRecord block $blk: SA '$g'"
	n_cmp=$((n_cmp + 1))
done < <(intact "$tmp/girall" gir)
check test "$n_cmp" -ge 3
# Delete index 1: gone from the table; the alias is free again
sac $a gir-del block=0 1=0 >/dev/null || true
check test "$(girline "$tmp/o.$a" gir-del | awk '{ print $2 }')" = "$(fmt 0)"
check test "$(gtab "$la" | awk '$1 == 1' | wc -l)" -eq 0
check test "$(gtab "$la" | wc -l)" -eq 31
sac $b gir-set block=0 1="$al1" >/dev/null || true
check test "$(gtab "$lb" | xargs)" = "0 $(fmt "$gb") 1 $al1"
# A switch has no alias GUIDs; the port GUID (index 0) is never replaced
swl=$(SIM_HOST=$a sim_run smpquery -D portinfo 0,1 0 2>/dev/null | awk -F. '/^Lid/ { print $NF }')
check test -n "$swl"
gtab "$swl" >"$tmp/gsw0"
sac $a gir-set lid="$swl" block=0 1=0x0002c9030000aa02 \; \
	gir-set block=0 0=0x0002c9030000aa03 >/dev/null || true
check test "$(grep -c "^gir-set status=0x0200$" "$tmp/o.$a")" -eq 2	# ERR_REQ_INVALID
check test "$(gtab "$swl")" = "$(cat "$tmp/gsw0")"
# ...its port 0's table (GUIDCap 1: the switch GUID) is the SA's record
sac $a gir lid="$swl" block=0 get=1 >/dev/null
check grep -q "^gir lid=$swl block=0 " "$tmp/o.$a"
check test "$(girline "$tmp/o.$a" gir)" = "$(gblock "$swl" 0)"
check test "$(gtab "$la" | awk '$1 == 0 { print $2 }')" = "$(fmt "$ga")"
# A restarted smd has not seen the aliases the port holds: a Set into
# block 0 reads the block first and keeps its other 6 aliases (the SA's
# answer: the block as the port holds it)
check smd_stop
smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out"
check wait_for "$tmp/out" "SA: answering" 1
gtab "$la" >"$tmp/gr0"
check test "$(wc -l <"$tmp/gr0")" -eq 31
sac $a gir-set block=0 1=0x0002c9030000aa04 >/dev/null || true
check test "$(girline "$tmp/o.$a" gir-set)" = "$(gblock "$la" 0)"
gtab "$la" >"$tmp/gr1"
check test "$(wc -l <"$tmp/gr1")" -eq 32
check test "$(grep -v '^1 ' "$tmp/gr1")" = "$(cat "$tmp/gr0")"
check grep -qx "1 $(fmt 0x0002c9030000aa04)" "$tmp/gr1"
# ...and a query of the port reads the blocks it has not seen: the SA's
# records are the port's table again (block 2 by Get, then all by GetTable)
sac $a gir lid="$la" block=2 get=1 >/dev/null
check test "$(girline "$tmp/o.$a" gir)" = "$(gblock "$la" 2)"
check test "$(girline "$tmp/o.$a" gir | wc -w)" -eq 8
sac $a gir lid="$la" >"$tmp/girall2"
check grep -q "^gir records=4$" "$tmp/girall2"
n_cmp=0
while read -r l blk g; do
	[ "$(gblock "$la" "$blk")" = "$g" ] || bad "GUIDInfoRecord block $blk after the restart: SA '$g'"
	n_cmp=$((n_cmp + 1))
done < <(intact "$tmp/girall2" gir)
check test "$n_cmp" -ge 3

check smd_stop
finish
