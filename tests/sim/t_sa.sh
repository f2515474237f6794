#!/bin/bash
# The SA, as real clients see it: saquery from a host other than the SM's
# gets NodeRecord, PortInfoRecord, SwitchInfoRecord, LinkRecord,
# SMInfoRecord, LFTRecord and a PathRecord, each compared with what
# smpquery, ibnetdiscover and ibroute read from the fabric itself; smctl
# (which reassembles RMPP) gets whole tables; 20,000 random PathRecord Gets
# are all answered right. (saquery has no RMPP under the simulator: only
# its first record is meaningful.)
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

# SL2VLTableRecords: a switch's (in, out) pair and a CA port, read by the SA
# from the fabric when asked, against smpquery sl2vl
sl2vl_sa() { awk '/VL:/ { sub(/.*VL:/, ""); gsub(/[ |]+/, " "); print; exit }' "$1"; }
sl2vl_smp() { awk -v k="$2" 'index($0, k) { sub(/.*: \|/, ""); gsub(/[ |]+/, " "); print; exit }' "$1"; }
sim_run saquery SL2VL 17/1/2 >"$tmp/sl2vl_sa" 2>&1
sim_run smpquery sl2vl 17 2 >"$tmp/sl2vl_smp" 2>&1	# every in port, out port 2
check test -n "$(sl2vl_sa "$tmp/sl2vl_sa")"
check test "$(sl2vl_sa "$tmp/sl2vl_sa" | xargs)" = "$(sl2vl_smp "$tmp/sl2vl_smp" "in  1, out  2" | xargs)"
sim_run saquery SL2VL 5 >"$tmp/sl2vl_ca" 2>&1
sim_run smpquery sl2vl 5 >"$tmp/sl2vl_casmp" 2>&1
check test "$(sl2vl_sa "$tmp/sl2vl_ca" | xargs)" = "$(sl2vl_smp "$tmp/sl2vl_casmp" "in  0, out  0" | xargs)"
# every (in, out) pair of the 20 switches and every CA port, read and sent whole
check test "$(sim_run "$SMCTL" sa sl2vl --count 2>/dev/null)" -gt 300

# A single PathRecord, host to host
sim_run saquery PR --slid 5 --dlid 12 >"$tmp/pr" 2>&1
check test "$(field "$tmp/pr" slid)" = 5
check test "$(field "$tmp/pr" dlid)" = 12
check test "$(field "$tmp/pr" mtu)" = 0x84	# exactly 2048
check test "$(field "$tmp/pr" rate)" = 0x83	# exactly 10 Gb/s (4x SDR)

# Whole tables through smctl's own RMPP: every NodeRecord, every path
nlids=$(grep -cE '^(Switch|Hca)' "$tmp/net")
check test "$(sim_run "$SMCTL" sa nodes --count 2>/dev/null)" -eq "$nlids"
check test "$(sim_run "$SMCTL" sa path --slid 5 --count 2>/dev/null)" -eq "$nlids"
check test "$(sim_run "$SMCTL" sa path --count 2>/dev/null)" -eq $((nlids * nlids))

# 20,000 random PathRecord Gets, every answer checked by the client
sim_run "$SMCTL" sa bench --requests 20000 --inflight 32 >"$tmp/bench" 2>&1 || true
cat "$tmp/bench"
check grep -q "20000 correct, 0 wrong, 0 unanswered" "$tmp/bench"

smd_stop || true
finish
