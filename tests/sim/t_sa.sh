#!/bin/bash
# The SA, as real clients see it: saquery from a host other than the SM's
# gets NodeRecord, PortInfoRecord, SwitchInfoRecord, LinkRecord,
# SMInfoRecord, LFTRecord, P_KeyTableRecord and a
# PathRecord, each compared with what smpquery, sminfo, ibnetdiscover,
# ibroute and ibtracert read from the fabric itself: NodeRecords (a CA, two
# switches), PortInfoRecords (a CA port, switch port 0, switch ports to a
# host and to a switch), SwitchInfoRecords and the SMInfoRecord field by
# field (cmpfields.py), every LinkRecord against ibnetdiscover's links, the
# PathRecord's MTU, rate, P_Key and GIDs against the route ibtracert
# follows; smctl (which reassembles RMPP) gets whole tables; 20,000 random
# PathRecord Gets are all answered right. The SL2VLTableRecords and
# VLArbitrationTableRecords of every switch port and CA port equal what
# smpquery reads there, and asking for them costs smd no SMP (issue 23). (saquery has no RMPP under the
# simulator: only its first record is meaningful.)
. "$(dirname "$0")/common.sh"
tmp=$(mktemp -d)
trap '[ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"; sim_stop' EXIT
SMCTL=${SMCTL:-$top/ctl/smctl}
$GEN ft3 4 -o "$tmp/net" 2>/dev/null

sim_start "$tmp/net" >/dev/null 2>&1
printf 'sweep_interval = 0\n' >"$tmp/conf"
smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out"
for _ in $(seq 600); do grep -q "SA: answering" "$tmp/out" && break; sleep 0.1; done
check grep -q "SA: answering" "$tmp/out"
sm_lid=$(sim_run smpquery portinfo -D 0 1 2>/dev/null | awk -F. '/^Lid/ { print $NF }')
export SIM_HOST=host-0007
# smctl reads whole tables by RMPP from a host of its own: the last ACKs a
# client sends as it exits are often lost, and smd then resends the tail of
# the transfer for 5 s to whoever opens that port next; saquery, which
# takes the first MAD it reads for its answer, must never be that one
# (tests/sim/README.md)
ctl() { SIM_HOST=host-0011 sim_run "$SMCTL" "$@"; }

# field FILE NAME: the value saquery/smpquery printed for NAME (dots stripped)
field() {
	awk -v n="$2" '{ line = $0; sub(/^[ \t]+/, "", line); k = line; sub(/:?\.\.+.*/, "", k)
		if (k == n) { v = line; sub(/^[^.]*\.\.+/, "", v); print v; exit } }' "$1"
}

# NodeRecord of a host, against NodeInfo and NodeDescription read by SMP
sim_run saquery NR 5 >"$tmp/nr" 2>&1
sim_run smpquery nodeinfo 5 >"$tmp/ni" 2>&1
sim_run smpquery nodedesc 5 >"$tmp/nd" 2>&1
check test "$(field "$tmp/nr" node_guid)" = "$(field "$tmp/ni" Guid)"
check test "$(field "$tmp/nr" port_guid)" = "$(field "$tmp/ni" PortGuid)"
check test "$(field "$tmp/nr" num_ports)" = "$(field "$tmp/ni" NumPorts)"
check test "$(field "$tmp/nr" NodeDescription)" = "$(field "$tmp/nd" "Node Description")"

# PortInfoRecord of switch 17 port 1 against PortInfo
sim_run saquery PIR 17/1 >"$tmp/pir" 2>&1
sim_run smpquery portinfo 17 1 >"$tmp/pi" 2>&1
check test -n "$(field "$tmp/pir" LinkState)"
check test "$(field "$tmp/pir" LinkState)" = "$(field "$tmp/pi" LinkState)"
check test "$(field "$tmp/pir" LinkWidthActive)" = "$(field "$tmp/pi" LinkWidthActive)"
check test "$(field "$tmp/pir" MtuCap)" = "$(field "$tmp/pi" MtuCap)"

# SwitchInfoRecord against SwitchInfo
sim_run saquery SWIR 17 >"$tmp/swir" 2>&1
sim_run smpquery switchinfo 17 >"$tmp/si" 2>&1
check test -n "$(field "$tmp/si" LinearFdbTop)"
check test "$(($(field "$tmp/swir" LinearFDBTop)))" -eq "$(field "$tmp/si" LinearFdbTop)"

# LinkRecord from switch 17 port 1: the peer ibnetdiscover finds there
sim_run saquery LR 17/1 >"$tmp/lr" 2>&1
sim_run ibnetdiscover >"$tmp/ibnd" 2>/dev/null
read -r want_port want_lid < <(awk '
	/^Switch/ { in17 = / lid 17 / }
	in17 && /^\[1\]/ { match($0, /"\[[0-9]+\]/); p = substr($0, RSTART + 2, RLENGTH - 3)
		match($0, /lid [0-9]+/); print p, substr($0, RSTART + 4, RLENGTH - 4); exit }' "$tmp/ibnd")
check test -n "$want_lid"
check test "$(field "$tmp/lr" ToLID)" = "$want_lid"
check test "$(field "$tmp/lr" ToPort)" = "$want_port"

# SMInfoRecord: the SM's own port, master
sim_run saquery SMIR >"$tmp/smir" 2>&1
check test "$(field "$tmp/smir" LID)" = "$sm_lid"
check test "$(field "$tmp/smir" SMState)" = 3

# LFTRecord block 0 of switch 17 against the table ibroute reads back
sim_run saquery LFTR 17/0 >"$tmp/lftr" 2>&1
sim_run ibroute 17 >"$tmp/ibroute" 2>&1
# (the first record only: the rest of the MAD is read as more records)
awk '/LFT Record dump/ { n++ } n == 1 && /^[ \t]*[0-9]+[ \t]+[0-9]+[ \t]*$/ { print $1, $2 }' \
	"$tmp/lftr" >"$tmp/sa_lft"
grep -E '^0x[0-9a-f]+ [0-9]+ :' "$tmp/ibroute" | while read -r l p _; do
	[ $((l)) -lt 64 ] && echo "$((l)) $((10#$p))"
done >"$tmp/hw_lft"
check test "$(wc -l <"$tmp/hw_lft")" -gt 10
check test -z "$(join <(sort "$tmp/hw_lft") <(sort "$tmp/sa_lft") | awk '$2 != $3')"
check test "$(join <(sort "$tmp/hw_lft") <(sort "$tmp/sa_lft") | wc -l)" -eq "$(wc -l <"$tmp/hw_lft")"
# smctl sa lft shows the same block as the egress port of each LID ("-":
# none); the LIDs ibroute lists, and only those, have a port there
ctl sa lft --lid 17 2>/dev/null | awk '$2 == 0 && NF == 67 {
	for (i = 4; i <= NF; i++) if ($i != "-") print i - 4, $i }' | sort >"$tmp/ctl_lft"
check test "$(wc -l <"$tmp/ctl_lft")" -gt 10
check cmp -s "$tmp/ctl_lft" <(sort "$tmp/hw_lft")
# ...and so for every switch (ft3 4: LIDs < 64, block 0 is the whole table;
# ibroute shows the entries that lead somewhere, the SA's others say 255)
lft_bad=0 lft_n=0
for l in $(sed -n 's/^Switch.* lid \([0-9]*\) .*/\1/p' "$tmp/ibnd"); do
	sim_run saquery LFTR "$l/0" 2>/dev/null | awk '/LFT Record dump/ { n++ }
		n == 1 && /^[ \t]*[0-9]+[ \t]+[0-9]+[ \t]*$/ && $2 != 255 { print $1, $2 }' |
		sort >"$tmp/sa_lft.$l"
	sim_run ibroute "$l" 2>/dev/null | grep -E '^0x[0-9a-f]+ [0-9]+ :' |
		while read -r x p _; do [ $((x)) -lt 64 ] && echo "$((x)) $((10#$p))"; done |
		sort >"$tmp/hw_lft.$l"
	if [ -s "$tmp/hw_lft.$l" ] && cmp -s "$tmp/sa_lft.$l" "$tmp/hw_lft.$l"; then
		lft_n=$((lft_n + 1))
	else
		lft_bad=$((lft_bad + 1)); echo "LFTRecord of switch $l differs from ibroute"
		diff "$tmp/sa_lft.$l" "$tmp/hw_lft.$l" | head -5
	fi
done
check test "$lft_n" -eq 20 -a "$lft_bad" -eq 0

# ---- SL2VL and VL arbitration tables, every port (issue 23) ----
# smd programs no VL table here (one-VL routes, no QoS): what the ports
# hold is read once, after the sweep (smd/vlread.c), and the SA answers
# from its model. Every switch port and CA port of the fabric: the SA's
# VLArbitrationTableRecords (every block within the port's caps) and
# SL2VLTableRecords (every (in, out) pair of a switch, a CA port's one, as
# the tools address it: port 0) against smpquery vlarb / sl2vl on the same
# port; saclient (tests/sim/saclient.c, written from the IBA tables) sends
# each as a Get, one MAD, so that no byte is lost to umad2sim. Not one of
# those queries makes smd send an SMP: its own counter (smps_all) stays,
# where a GUIDInfoRecord query for blocks smd has not seen does move it.
check wait_for "$tmp/out" "tables the ports hold: read" 1
SAC=${SACLIENT:-${top_builddir:-$top}/tests/sim/saclient}
smps_all() { "$SMCTL" --socket "$tmp/control" status 2>/dev/null | sed -n 's/^smps_all: \([0-9]*\) .*/\1/p'; }
sim_run ibnetdiscover -p 2>/dev/null | awk '$1 ~ /^(CA|SW)$/ && $8 ~ /^(CA|SW)$/ {
	print $1, $2, $3; print $8, $9, $10 }' | sort -u >"$tmp/vlports"
check test "$(wc -l <"$tmp/vlports")" -eq "$(grep -c '^\[' "$tmp/net")"
# The fabric side: each port's tables as smpquery reads them
: >"$tmp/smp_vl"
while read -r ty l p; do
	if [ "$ty" = SW ]; then
		{ echo "== vlarb $l $p"; sim_run smpquery vlarb "$l" "$p"
		  echo "== sl2vl $l $p"; sim_run smpquery sl2vl "$l" "$p"; } >>"$tmp/smp_vl" 2>&1
	else
		{ echo "== vlarb $l 0"; sim_run smpquery vlarb "$l"
		  echo "== sl2vl $l 0"; sim_run smpquery sl2vl "$l"; } >>"$tmp/smp_vl" 2>&1
	fi
done <"$tmp/vlports"
# The SA side: one Get per record the ports call for
python3 - "$tmp/vlports" "$tmp/smp_vl" >"$tmp/sa_vl_gets" <<'PY'
import re, sys
ports = [l.split() for l in open(sys.argv[1])]
linked = {}
for ty, l, p in ports:
    linked.setdefault((ty, l), []).append(int(p))
caps = {}
for m in re.finditer(r"Lid (\d+) port (\d+) LowCap (\d+) HighCap (\d+)", open(sys.argv[2]).read()):
    caps[(m.group(1), int(m.group(2)))] = (int(m.group(3)), int(m.group(4)))
verbs = []
for ty, l, p in ports:
    p = int(p) if ty == "SW" else 0
    low, high = caps[(l, p)]
    for b, cap, first in ((1, low, 0), (2, low, 32), (3, high, 0), (4, high, 32)):
        if cap > first:
            verbs.append("vlarb lid=%s port=%d block=%d get=1" % (l, p, b))
    if ty == "SW":
        for i in [0] + linked[(ty, l)]:
            if i != p:
                verbs.append("sl2vl lid=%s in=%d out=%d get=1" % (l, i, p))
    else:
        verbs.append("sl2vl lid=%s in=0 out=0 get=1" % l)
print(" ; ".join(verbs))
PY
before=$(smps_all)
# shellcheck disable=SC2046
sim_run "$SAC" $(cat "$tmp/sa_vl_gets") >"$tmp/sa_vl" 2>&1 || true
after=$(smps_all)
check test -n "$before" -a "$before" = "$after"
cmp_vl=$(python3 - "$tmp/sa_vl" "$tmp/smp_vl" "$tmp/sa_vl_gets" <<'PY'
import re, sys
sa, smp, gets = open(sys.argv[1]).read(), open(sys.argv[2]).read(), open(sys.argv[3]).read()
want = len(gets.split(" ; "))
# smpquery: per section, VL arbitration tables (Low, High) and SL2VL rows
fab_arb, fab_sl = {}, {}
for sec in smp.split("== ")[1:]:
    head, _, body = sec.partition("\n")
    kind, l, p = head.split()
    if kind == "vlarb":
        tabs = {}
        cur = None
        for line in body.splitlines():
            if "Low priority" in line: cur = "low"
            elif "High priority" in line: cur = "high"
            elif cur and line.startswith("VL"):
                vls = [int(x, 16) for x in line.split("|")[1:-1]]
            elif cur and line.startswith("WEIGHT"):
                ws = [int(x, 16) for x in line.split("|")[1:-1]]
                tabs[cur] = list(zip(vls, ws))
        fab_arb[(l, int(p))] = tabs
    else:
        for m in re.finditer(r"in\s+(\d+), out\s+(\d+):\s*\|(.*)\|", body):
            fab_sl[(l, int(m.group(1)), int(p))] = [int(x) for x in m.group(3).split("|")]
bad, n = [], 0
for m in re.finditer(r"^vlarb lid=(\d+) port=(\d+) block=(\d+) table=(\S+)$", sa, re.M):
    l, p, b = m.group(1), int(m.group(2)), int(m.group(3))
    ents = [tuple(int(v) for v in e.split(":")) for e in m.group(4).split(",")]
    tab = fab_arb.get((l, p), {}).get("low" if b <= 2 else "high", [])
    part = tab[(b - 1) % 2 * 32:(b - 1) % 2 * 32 + 32]
    n += 1
    if ents[:len(part)] != part:
        bad.append("vlarb %s/%d/%d: SA %s, port %s" % (l, p, b, ents[:len(part)], part))
for m in re.finditer(r"^sl2vl lid=(\d+) in=(\d+) out=(\d+) table=(\S+)$", sa, re.M):
    l, i, o = m.group(1), int(m.group(2)), int(m.group(3))
    vl = [int(x) for x in m.group(4).split(",")]
    n += 1
    if fab_sl.get((l, i, o)) != vl:
        bad.append("sl2vl %s %d->%d: SA %s, port %s" % (l, i, o, vl, fab_sl.get((l, i, o))))
errs = len(re.findall(r"status=|timeout=", sa))
print("%d of %d records equal to the ports' tables, %d differ, %d not answered" %
      (n - len(bad), want, len(bad), errs))
for b in bad[:10]:
    print(b)
sys.exit(0 if n == want and not bad and not errs else 1)
PY
) && ok "VL tables: $cmp_vl" || { bad "VL tables"; echo "$cmp_vl"; }
# The records a GetTable of every one gives, reassembled by smctl
check test "$(ctl sa sl2vl --count 2>/dev/null)" -eq "$(grep -o 'sl2vl ' "$tmp/sa_vl_gets" | wc -l)"
# The counter sees SMPs the SA sends: a GUIDInfoRecord of blocks not seen yet
before=$(smps_all)
sim_run "$SAC" gir lid=12 block=0 get=1 >"$tmp/gir12" 2>&1 || true
check grep -q "^gir lid=12 " "$tmp/gir12"
check test "$(smps_all)" -gt "$before"

# ---- Every field, record by record, against the fabric (issue 16) ----
CMP=$here/cmpfields.py
# cmp_rec WHAT SA_FILE FABRIC_FILE ARGS...: cmpfields.py, its verdict a check
cmp_rec() {
	local what=$1 out
	shift
	out=$(python3 "$CMP" "$@") && ok "$what: ${out##*$'\n'}" || { bad "$what"; echo "$out"; }
}
nr_map="base_version=BaseVers class_version=ClassVers node_type=NodeType num_ports=NumPorts
	sys_guid=SystemGuid node_guid=Guid port_guid=PortGuid partition_cap=PartCap
	device_id=DevId revision=Revision port_num=LocalPort vendor_id=VendorId"
# Nodes: a CA, a core switch, and the edge switch host-0007 hangs off
sim_run smpquery -D portinfo 0,1 0 >"$tmp/edgepi" 2>&1
elid=$(field "$tmp/edgepi" Lid)
check test -n "$elid"
for lid in 5 "$sm_lid" 17 "$elid"; do
	sim_run saquery NR "$lid" >"$tmp/nr.$lid" 2>&1
	sim_run smpquery nodeinfo "$lid" >"$tmp/ni.$lid" 2>&1
	sim_run smpquery nodedesc "$lid" | sed 's/^Node Description:/NodeDescription/' \
		>>"$tmp/ni.$lid" 2>&1
	# shellcheck disable=SC2086
	cmp_rec "NodeRecord $lid = NodeInfo, NodeDescription" "$tmp/nr.$lid" "$tmp/ni.$lid" \
		$nr_map +NodeDescription
done
# PortInfoRecords: a CA port, a switch's port 0 and its ports to a host and
# to a switch. LocalPort is the port the reading SMP came in by (IBA
# 14.2.5.6): smd's and smpquery's differ on a switch; Mkey is not shown.
pir_cmp() {
	sim_run saquery PIR "$1/$2" >"$tmp/pir.$1.$2" 2>&1
	sim_run smpquery portinfo "$1" "$2" >"$tmp/pi.$1.$2" 2>&1
	cmp_rec "PortInfoRecord $1/$2 = PortInfo" "$tmp/pir.$1.$2" "$tmp/pi.$1.$2" -Mkey ${3:-} \
		+Lid +LinkState +NeighborMTU +CapMask +GuidCap +OperVLs +SubnetTimeout
}
pir_cmp 5 1
pir_cmp "$sm_lid" 1
pir_cmp 17 0 -LocalPort
pir_cmp 17 1 -LocalPort
pir_cmp "$elid" 1 -LocalPort
pir_cmp "$elid" 3 -LocalPort
# SwitchInfoRecord: saquery prints two bytes whole (IBA 14.2.5.4 bit order)
for lid in 17 "$elid"; do
	sim_run saquery SWIR "$lid" >"$tmp/swir.$lid" 2>&1
	sim_run smpquery switchinfo "$lid" >"$tmp/si.$lid" 2>&1
	awk -F'[.]+' '{ v[$1] = $NF; print }
		END { lt = v["LifeTime:"] * 8 + v["StateChange:"] * 4 + v["OptSLtoVLMapping:"]
			fl = v["InboundPartEnf:"] * 128 + v["OutboundPartEnf:"] * 64
			fl += v["FilterRawInbound:"] * 32 + v["FilterRawOutbound:"] * 16
			fl += v["EnhancedPort0:"] * 8
			printf "LifeTimeValue/PortStateChange/OpSL2VL...%d\nflags...%d\n", lt, fl
		}' "$tmp/si.$lid" >"$tmp/si2.$lid"
	cmp_rec "SwitchInfoRecord $lid = SwitchInfo" "$tmp/swir.$lid" "$tmp/si2.$lid" \
		LinearFDBCap=LinearFdbCap RandomFDBCap=RandomFdbCap MulticastFDBCap=McastFdbCap \
		LinearFDBTop=LinearFdbTop DefaultPort=DefPort \
		DefaultMulticastPrimaryPort=DefMcastPrimPort \
		DefaultMulticastNotPrimaryPort=DefMcastNotPrimPort LIDsPerPort=LidsPerPort \
		PartitionEnforcementCap=PartEnforceCap +LifeTimeValue/PortStateChange/OpSL2VL +flags
done
# SMInfoRecord against sminfo (the SM's SMInfo read by SMP)
sim_run sminfo >"$tmp/sminfo" 2>&1
read -r s_lid s_guid s_act s_pri s_state < <(sed -n \
	's/.*sm lid \([0-9]*\) sm guid \(0x[0-9a-f]*\), activity count \([0-9]*\) priority \([0-9]*\) state \([0-9]*\).*/\1 \2 \3 \4 \5/p' \
	"$tmp/sminfo")
check test -n "$s_state"
check test "$(field "$tmp/smir" LID)" = "$s_lid"
check test "$(($(field "$tmp/smir" GUID)))" = "$((s_guid))"
check test "$(field "$tmp/smir" Priority)" = "$s_pri"
check test "$(field "$tmp/smir" SMState)" = "$s_state"
check test "$(field "$tmp/smir" ActCount)" = "$s_act"
check test "$(($(field "$tmp/smir" SM_Key)))" -eq 0	# not shown to an untrusted requester
# P_KeyTableRecord block 0 of a CA port and of the edge switch's port to
# host-0007 against smpquery pkeys (entries 0-31)
pk_sa() { awk '/PKey Table:/ { on = 1; next } on && /0x/ { for (i = 1; i <= NF; i++) print $i }
	on && !/0x/ { exit }' "$1" | head -32 | tr 'A-F' 'a-f' | xargs; }
pk_smp() { awk '/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) print $i }' "$1" | head -32 | xargs; }
sim_run saquery PKTR 5 >"$tmp/pktr5" 2>&1
sim_run smpquery pkeys 5 >"$tmp/pk5" 2>&1
check test "$(pk_sa "$tmp/pktr5" | wc -w)" -eq 32
check test "$(pk_sa "$tmp/pktr5")" = "$(pk_smp "$tmp/pk5")"
check test "$(field "$tmp/pktr5" Port)" = 1
# block 1 too (entries 32-63: the table is PartitionCap 64 long, all 0 here)
pk_smp1() { awk '/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) print $i }' "$1" | sed -n 33,64p | xargs; }
sim_run saquery PKTR 5/1/1 >"$tmp/pktr5b" 2>&1
# (saquery prints BlockNum as it lies in memory: 256 for block 1 here)
check test "$(field "$tmp/pktr5b" Block)" = 1 -o "$(field "$tmp/pktr5b" Block)" = 256
check test "$(pk_sa "$tmp/pktr5b")" = "$(pk_smp1 "$tmp/pk5")"
sim_run saquery PKTR "$elid/1" >"$tmp/pktre" 2>&1
sim_run smpquery pkeys "$elid" 1 >"$tmp/pke" 2>&1
check test "$(pk_sa "$tmp/pktre" | wc -w)" -eq 32
check test "$(pk_sa "$tmp/pktre")" = "$(pk_smp "$tmp/pke")"

# Every LinkRecord (smctl reassembles the table) against every link
# ibnetdiscover -p finds, both directions
sim_run ibnetdiscover -p 2>/dev/null | awk '$1 ~ /^(CA|SW)$/ && $8 ~ /^(CA|SW)$/ {
	print $2, $3, $9, $10; print $9, $10, $2, $3 }' | sort -u >"$tmp/hw_links"
# (umad2sim loses SA data bytes 168-199 of every RMPP segment: records 21-24
# of each 25 are not what smd sent, the others must be links of the fabric)
ctl sa links 2>/dev/null | awk 'NR > 1 && NF >= 4 { print $1, $2, $4, $3 }' \
	>"$tmp/sa_links"
check test "$(wc -l <"$tmp/hw_links")" -gt 90
check test "$(wc -l <"$tmp/sa_links")" -eq "$(wc -l <"$tmp/hw_links")"
awk '(NR - 1) % 25 < 21' "$tmp/sa_links" | sort >"$tmp/sa_links_ok"
check test "$(wc -l <"$tmp/sa_links_ok")" -gt 70
check test -z "$(comm -23 "$tmp/sa_links_ok" "$tmp/hw_links")"
check test -z "$(uniq -d "$tmp/sa_links_ok")"
export SIM_HOST=host-0007

# A single PathRecord, host to host
sim_run saquery PR --slid 5 --dlid 12 >"$tmp/pr" 2>&1
check test "$(field "$tmp/pr" slid)" = 5
check test "$(field "$tmp/pr" dlid)" = 12
check test "$(field "$tmp/pr" mtu)" = 0x84	# exactly 2048
check test "$(field "$tmp/pr" rate)" = 0x83	# exactly 10 Gb/s (4x SDR)
# ...against the route ibtracert follows: the MTU and rate are the least of
# its links' (NeighborMTU, LinkWidthActive x LinkSpeedActive of every
# egress port), the P_Key one both ends hold, the GIDs the ports'
# route_links SLID DLID: each egress port of the route ibtracert follows as
# "NeighborMTU Gb/s" in $tmp/links
route_links() {
	sim_run ibtracert "$1" "$2" >"$tmp/trace" 2>&1
	awk '/^From/ { match($0, /lid [0-9]+/); l = substr($0, RSTART + 4, RLENGTH - 4); p = $5 }
		/^\[[0-9]+\] ->/ { gsub(/[][]/, "", $1); print l, $1
			match($0, /lid [0-9]+/); l = substr($0, RSTART + 4, RLENGTH - 4) }' \
		"$tmp/trace" >"$tmp/hops"
	: >"$tmp/links"
	while read -r l p; do
		sim_run smpquery portinfo "$l" "$p" 2>/dev/null | awk '{ v = $0; sub(/^[^:]*:\.+/, "", v) }
			/^NeighborMTU/ { m = v } /^LinkWidthActive/ { w = v + 0 }
			/^LinkSpeedActive/ { s = v + 0 } END { print m, w * s }' >>"$tmp/links"
	done <"$tmp/hops"
}
route_links 5 12
check test "$(wc -l <"$tmp/hops")" -ge 2
want_mtu=$(sort -n "$tmp/links" | awk 'NR == 1 { print $1 }')
want_gbps=$(sort -k2 -g "$tmp/links" | awk 'NR == 1 { print $2 }')
mtu_code() { case $1 in 256) echo 1 ;; 512) echo 2 ;; 1024) echo 3 ;; 2048) echo 4 ;; 4096) echo 5 ;; esac; }
rate_code() { case $1 in 2.5) echo 2 ;; 10) echo 3 ;; 30) echo 4 ;; 5) echo 5 ;; 20) echo 6 ;;
	40) echo 7 ;; 60) echo 8 ;; 80) echo 9 ;; 120) echo 10 ;; esac; }	# IBA table 205
check test -n "$(mtu_code "$want_mtu")" -a -n "$(rate_code "$want_gbps")"
check test $(($(field "$tmp/pr" mtu) & 63)) -eq "$(mtu_code "$want_mtu")"
check test $(($(field "$tmp/pr" rate) & 63)) -eq "$(rate_code "$want_gbps")"
# To a switch (port 0): the least of the links' MTUs and of port 0's MTUCap
# (ibsim's switches take 1024 there)
sim_run saquery PR --slid 5 --dlid 17 >"$tmp/pr17" 2>&1
route_links 5 17
check test "$(wc -l <"$tmp/hops")" -ge 1
sim_run smpquery portinfo 17 0 2>/dev/null | awk '{ v = $0; sub(/^[^:]*:\.+/, "", v) }
	/^MtuCap/ { print v }' >>"$tmp/links"
want_mtu=$(sort -n "$tmp/links" | awk 'NR == 1 { print $1 }')
check test -n "$(mtu_code "$want_mtu")"
check test $(($(field "$tmp/pr17" mtu) & 63)) -eq "$(mtu_code "$want_mtu")"
sim_run smpquery pkeys 12 >"$tmp/pk12" 2>&1
pk=$(field "$tmp/pr" pkey | tr 'A-F' 'a-f')
check grep -qw "$pk" <(pk_smp "$tmp/pk5")
check grep -qw "$pk" <(pk_smp "$tmp/pk12")
sim_run smpquery nodeinfo 12 >"$tmp/ni.12" 2>&1
gid_tail() { python3 -c 'import ipaddress, sys; print("0x%016x" % (int(ipaddress.IPv6Address(sys.argv[1])) & (2**64 - 1)))' "$1"; }
check test "$(gid_tail "$(field "$tmp/pr" sgid)")" = "$(field "$tmp/ni.5" PortGuid)"
check test "$(gid_tail "$(field "$tmp/pr" dgid)")" = "$(field "$tmp/ni.12" PortGuid)"

# Whole tables through smctl's own RMPP: every NodeRecord, every path
nlids=$(grep -cE '^(Switch|Hca)' "$tmp/net")
check test "$(ctl sa nodes --count 2>/dev/null)" -eq "$nlids"
check test "$(ctl sa path --slid 5 --count 2>/dev/null)" -eq "$nlids"
check test "$(ctl sa path --count 2>/dev/null)" -eq $((nlids * nlids))

# 20,000 random PathRecord Gets, every answer checked by the client
ctl sa bench --requests 20000 --inflight 32 >"$tmp/bench" 2>&1 || true
cat "$tmp/bench"
check grep -q "20000 correct, 0 wrong, 0 unanswered" "$tmp/bench"

smd_stop || true
finish
