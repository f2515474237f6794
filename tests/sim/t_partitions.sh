#!/bin/bash
# Issue 13, the acceptance of partitions, judged with the real tools: a
# 2-level fat-tree of 17 hosts and smd's, an OpenSM partitions.conf with the
# default partition (limited for CAs), tenants A (8 hosts) and B (8 hosts),
# IPoIB on both, one host in neither.
#  0. smd --once on ibsim's switches as they are (no enforcement capability):
#     tables programmed, enforcement set nowhere; the daemon after it finds
#     every table right and writes none.
#  1. smpquery pkeys: every CA port holds exactly its partitions' P_Keys and
#     membership bits, Default at index 0; every switch port facing a host
#     the host's keys, those between switches nothing new (checkpkeys.py);
#     the switch ports facing hosts are set to enforce (pkey_shim.c makes the
#     switches report the capability, which ibsim lacks, and logs the Sets).
#  2. saquery: A to B no PathRecord, A to A one carrying A's P_Key; a
#     P_Key named in the request is honoured; the SA shows a tenant host the
#     nodes it shares a partition with only.
#  3. A host of A joins A's broadcast group as Linux IPoIB does; a host of B
#     asking for it is refused; each group has its own MTU, rate, SL, Q_Key.
#  4. host-0008 moves from A to B in the file, SIGHUP: after one sweep its
#     table and its switch port's follow, its PathRecords too, it is no
#     longer a member of A's group; the only Sets of that sweep are its two
#     P_Key blocks (no LFT, no other P_Key block, no PortInfo).
. "$(dirname "$0")/common.sh"
MCCLIENT=${MCCLIENT:-${top_builddir:+$top_builddir/tests/sim/mcclient}}
[ -n "$MCCLIENT" ] && [ -x "$MCCLIENT" ] || MCCLIENT=$top/tests/sim/mcclient
[ -x "$MCCLIENT" ] || { echo "missing $MCCLIENT: build first" >&2; exit 99; }
command -v saquery >/dev/null || { echo "missing saquery" >&2; exit 99; }
T=$(mktemp -d "${TMPDIR:-/tmp}/smdpart.XXXXXX")
trap 'smd_stop >/dev/null 2>&1; rm -rf "$T"' EXIT

$GEN ft2 6 -o "$T/net" 2>/dev/null
# try3 CMD...: CMD's output; a client that fails (umad2sim loses a MAD, a
# tool times out on a loaded machine) is run again, up to three times, so
# that an empty answer always means "no records", never "no answer"
try3() {
	local i out
	for i in 1 2 3; do
		out=$("$@") && { printf '%s\n' "$out"; return 0; }
		echo "try3: '$*' failed (try $i)" >&2
	done
	return 1
}
cc -shared -fPIC -O2 -o "$T/pkey_shim.so" "$here/pkey_shim.c" -ldl -lpthread ||
	{ bad "building the shim"; finish; }
# Port GUID of a CA (ibsim: node GUID + port number)
nguid() { awk -v n="\"$1\"" '/^caguid=/ { g = $0; sub(/caguid=/, "", g) }
	$1 == "Hca" && $3 == n { print g }' "$T/net"; }
pguid() { printf '0x%016x\n' $(($(nguid "$1") + 1)); }
hosts_a=$(seq -f "host-%04g" 1 8)
hosts_b=$(seq -f "host-%04g" 9 16)
gen_conf() {	# gen_conf A_HOSTS... -- B_HOSTS...
	local h
	echo "# tenants A and B; host-0017 only in Default"
	echo "Default=0x7fff, ipoib : ALL_CAS=limited, ALL_SWITCHES=full, SELF=full ;"
	printf 'A = 0x8001, ipoib, mtu=2048, rate=10G, sl=1 :\n'
	for h in "$@"; do
		if [ "$h" = -- ]; then
			printf '\t;\nB = 0x8002, ipoib, mtu=1024, rate=2.5G, sl=2, qkey=0x12345 :\n'
			continue
		fi
		printf '\t%s=full,\n' "$(pguid "$h")"
	done
	printf '\t;\n'
}
# shellcheck disable=SC2086
gen_conf $hosts_a -- $hosts_b >"$T/partitions.conf"
# The expected tables: smhost full in Default, tenants limited there
gen_expect() {	# gen_expect HOST_OF_A_LIST -- HOST_OF_B_LIST
	local part=0x8001 h
	echo "@switches 0xffff"
	echo "smhost 0xffff"
	for h in "$@"; do
		[ "$h" = -- ] && { part=0x8002; continue; }
		echo "$h 0x7fff,$part"
	done
	echo "host-0017 0x7fff"
}
# shellcheck disable=SC2086
gen_expect $hosts_a -- $hosts_b >"$T/expect"
printf 'partition_config = partitions.conf\nsweep_interval = 0\nsm_key = 0x5eed\n' \
	>"$T/smd.conf"
chmod 600 "$T/smd.conf"
check "$SMD" -n -c "$T/smd.conf"

sim_start "$T/net" -M 2048
# First as ibsim's switches are (no Inbound/OutboundEnforcementCap): tables
# programmed, enforcement set nowhere
(cd "$T" && env LD_PRELOAD="$T/pkey_shim.so:$SIM_PRELOAD" PKEY_SHIM_LOG="$T/sets.once" \
	PKEY_SHIM_CAPS=0 "$SMD" --once --config "$T/smd.conf" --db "$T/once.db" >"$T/once" 2>&1) ||
	bad "smd --once"
grep "partitions:" "$T/once"
check grep -q "P_Key blocks: 34 written, .* 0 switch ports facing CAs enforce them, 18 cannot" \
	"$T/once"
check test "$(grep -c ' enf=1' "$T/sets.once" || true)" -eq 0
check python3 "$here/checkpkeys.py" "$T/expect"
: >"$T/out"
(cd "$T" && exec env LD_PRELOAD="$T/pkey_shim.so:$SIM_PRELOAD" RUNTIME_DIRECTORY="$T" \
	PKEY_SHIM_LOG="$T/sets" "$SMD" --config "$T/smd.conf" --db "$T/smd.db" >"$T/out" 2>&1) &
smd_pid=$!
check wait_for "$T/out" "subnet UP" 1
check wait_for "$T/out" "SA: answering" 1
grep "partitions:" "$T/out" | tail -n 2
# The tables were right already: read, none written
check grep -q "P_Key blocks: 0 written, 81 unchanged .* 18 switch ports facing CAs enforce them" \
	"$T/out"

# ---- 1. every table, read back
check python3 "$here/checkpkeys.py" "$T/expect"
try3 sim_run ibnetdiscover >"$T/ibnd" 2>/dev/null
lid_of() { awk -v n="\"$1\"" '$1 == "Ca" && $0 ~ n { getline; sub(/.*# lid /, ""); print $1; exit }' \
	"$T/ibnd"; }
sw_guid_of() {	# the node GUID of the leaf a host hangs on, as the shim logs it
	printf '0x%s\n' "$(awk -v n="\"$1\"" '$1 == "Ca" && $0 ~ n { getline;
		sub(/.*"S-/, ""); sub(/".*/, ""); print; exit }' "$T/ibnd")"
}
# Enforcement: set (in and out) on the 17 switch ports facing a CA, never elsewhere
enf_on=$(grep ' attr=0x0015 ' "$T/sets" | grep ' enf=1,1$' | awk '{ print $3, $4 }' |
	sort -u | wc -l)
check test "$enf_on" -eq 18
while read -r line; do
	case $line in *' attr=0x0015 '*' enf=1,1')
		sw=${line#*node=}; sw=${sw%% *}
		amod=${line#*amod=}; port=$((${amod%% *} & 255))
		peer=$(awk -v g="$(printf '%x' "$sw")" -v p="$port" '
			$1 == "Switch" { cur = ($3 ~ g); next } $1 == "Ca" { cur = 0 }
			cur && $1 == "[" p "]" { print $2 }' "$T/ibnd")
		case $peer in '"H-'*) ;; *) bad "enforcement set on switch $sw port $port (to $peer)" ;; esac
	esac
done <"$T/sets"

# smctl partitions: ports per partition, and one partition's members
parts=$("$SMCTL" --socket "$T/control" partitions)
echo "$parts"
check grep -q '^partition: 0x7fff "Default" 27 ports (10 full, 17 limited), ipoib' <<<"$parts"
check grep -q '^partition: 0x0001 "A" 8 ports (8 full, 0 limited), ipoib (MTU 2048, 10 Gb/s, SL 1, Q_Key 0xb1b)' <<<"$parts"
check grep -q '^partition: 0x0002 "B" 8 ports (8 full, 0 limited), ipoib (MTU 1024, 2.5 Gb/s, SL 2, Q_Key 0x12345)' <<<"$parts"
check test "$("$SMCTL" --socket "$T/control" partitions A | grep -c "^port: .* full \"host-000[1-8]\"")" -eq 8
check test "$("$SMCTL" --socket "$T/control" partitions 0x8002 | grep -c '^port: ')" -eq 8
check grep -q '^status: ok$' <<<"$parts"
# The same as JSON (smctl --json), and in smctl status --json
pj=$("$SMCTL" --socket "$T/control" partitions --json) || bad "smctl partitions --json: exit $?"
check python3 -c '
import json, sys
d = json.loads(sys.argv[1])
p = {x["name"]: x for x in d["partitions"]}
assert d["status"] == "ok" and d["file"] == "partitions.conf" and d["swept"], d
assert (p["Default"]["pkey"], p["Default"]["full"], p["Default"]["limited"]) == ("0x7fff", 10, 17)
assert (p["A"]["pkey"], p["A"]["full"], p["A"]["ipoib"]["mtu"], p["A"]["ipoib"]["sl"]) == \
    ("0x0001", 8, 2048, 1), p["A"]
assert (p["B"]["ipoib"]["qkey"], p["B"]["ipoib"]["rate_gbps"]) == ("0x12345", "2.5"), p["B"]
' "$pj"
mj=$("$SMCTL" --socket "$T/control" partitions --json A) || bad "smctl partitions --json A"
check python3 -c '
import json, sys
d = json.loads(sys.argv[1])
m = d["members"]
assert len(d["partitions"]) == 1 and d["members_not_shown"] == 0, d
assert sorted(x["node"] for x in m) == ["host-%04d" % i for i in range(1, 9)], m
assert all(x["membership"] == "full" and x["port"] == 1 for x in m), m
' "$mj"
check python3 -c '
import json, sys
p = json.loads(sys.argv[1])["partitions"]
assert (p["count"], p["file"], p["switch_ports_enforcing"]) == (3, "partitions.conf", 18), p
' "$("$SMCTL" --socket "$T/control" status --json)"

# ---- 2. PathRecords
A1=$(lid_of host-0001) A2=$(lid_of host-0002) B1=$(lid_of host-0009) N1=$(lid_of host-0017)
pr() {	# pr HOST SLID DLID [saquery options]: the P_Keys of the PathRecords HOST gets
	local h=$1 s=$2 d=$3
	shift 3
	local out
	out=$(cd "$T" && SIM_HOST=$h try3 sim_run saquery PR --slid "$s" --dlid "$d" "$@" \
		2>/dev/null) || { echo "saquery failed"; return; }
	sed -n 's/^[[:space:]]*pkey\.*\(0x[0-9A-Fa-f]*\).*/\1/p' <<<"$out" | tr 'A-F' 'a-f'
}
check test "$(pr host-0001 "$A1" "$A2")" = "0x8001"
check test -z "$(pr host-0001 "$A1" "$B1")"
check test -z "$(pr host-0009 "$B1" "$A1")"
check test "$(pr host-0009 "$B1" "$(lid_of host-0010)")" = "0x8002"
# host-0017 and a tenant host are both limited in Default: no path either way
check test -z "$(pr host-0017 "$N1" "$A1")"
check test "$(pr host-0017 "$N1" "$(lid_of smhost)")" = "0x7fff"
# Named P_Keys: A's honoured, Default's refused (limited and limited)
check test "$(pr host-0001 "$A1" "$A2" --pkey 0x8001)" = "0x8001"
check test -z "$(pr host-0001 "$A1" "$A2" --pkey 0x7fff)"
# A third port must be in the partition too: host-0009 asks for A1 -> A2
check test -z "$(pr host-0009 "$A1" "$A2")"
# The SM's port (full in Default) reaches every host in Default
check test "$(pr smhost "$(lid_of smhost)" "$B1")" = "0xffff"
# NodeRecords a requester may see: its partitions' ports (smctl reassembles RMPP)
nodes_seen() { (cd "$T" && SIM_HOST=$1 try3 sim_run "$SMCTL" sa nodes --count 2>/dev/null) || true; }
# smhost sees all 27 endports; host-0001: smhost, 9 switches, the 8 of A; host-0017: 11
check test "$(nodes_seen smhost)" -eq 27
check test "$(nodes_seen host-0001)" -eq 18
check test "$(nodes_seen host-0017)" -eq 11
# P_KeyTableRecords say what the ports hold (asked by host-0002, a member
# of A that ran no smctl: smd resends the tail of an RMPP table whose last
# ACKs were lost to the next client of that port, and saquery would take it
# for its answer; tests/sim/README.md)
pktr=$(cd "$T" && SIM_HOST=host-0002 try3 sim_run saquery PKTR "$A1" 2>/dev/null) || true
echo "$pktr"
check test "$(grep -c '0x8001' <<<"$pktr")" -ge 1
# ...entry by entry, block 0 (saquery's first record) as smpquery reads it
pkt_sa=$(awk '/PKey Table:/ { on = 1; next } on && /0x/ { for (i = 1; i <= NF; i++) print $i }
	on && !/0x/ { exit }' <<<"$pktr" | head -32 | tr 'A-F' 'a-f' | xargs)
pkt_hw=$(cd "$T" && try3 sim_run smpquery pkeys "$A1" 2>/dev/null |
	awk '/^ *[0-9]+:/ { for (i = 2; i <= NF; i++) print $i }' | head -32 | xargs) || true
check test "$(wc -w <<<"$pkt_sa")" -eq 32
check test "$pkt_sa" = "$pkt_hw"

# ---- 3. IPoIB per partition
mc() {	# mc HOST ARGS...: mcclient's verdict; again when it gave none (it crashed)
	local i out
	for i in 1 2 3; do
		out=$(cd "$T" && SIM_HOST=$1 sim_run "$MCCLIENT" --timeout 2000 "${@:2}" 2>/dev/null) ||
			true
		grep -q ' status=0x' <<<"$out" && break
		echo "mc: no verdict from mcclient ${*:2} (try $i)" >&2
	done
	printf '%s\n' "$out"
}
ja=$(mc host-0001 ipoib pkey=0x8001)
echo "$ja"
check grep -q 'op=ipoib status=0x0000 ' <<<"$ja"
check grep -q 'qkey=0x00000b1b ' <<<"$ja"
jb=$(mc host-0009 ipoib pkey=0x8001)
check grep -q 'op=ipoib status=0x0200 ' <<<"$jb"
jb=$(mc host-0009 ipoib pkey=0x8002)
check grep -q 'op=ipoib status=0x0000 ' <<<"$jb"
check grep -q 'qkey=0x00012345 ' <<<"$jb"
check grep -q ' mtu=3 ' <<<"$jb"
check grep -q ' rate=2 ' <<<"$jb"
check grep -q ' sl=2 ' <<<"$jb"
check grep -q ' mtu=4 ' <<<"$ja"
check grep -q ' sl=1 ' <<<"$ja"
# The limited tenants join Default's group too (ib0 on P_Key 0x7fff)
check grep -q 'op=ipoib status=0x0000 ' <<<"$(mc host-0017 ipoib pkey=0x7fff)"
check grep -q 'op=ipoib status=0x0000 ' <<<"$(mc host-0008 ipoib pkey=0x8001)"

# ---- 4. host-0008 moves from A to B
# What any heavy sweep sends on this fabric without a change (PortInfo Sets
# of SubnetTimeOut, which ibsim does not keep): the baseline, after one
# heavy sweep that lets the joins' MFT updates settle
heavy() { (cd "$T" && "$SMCTL" --socket "$T/control" resweep --heavy >/dev/null); }
check heavy
: >"$T/sets"
check heavy
check test "$(grep -c -v ' attr=0x0015 ' "$T/sets" || true)" -eq 0
sort "$T/sets" >"$T/baseline"
hosts_a7=$(seq -f "host-%04g" 1 7)
# shellcheck disable=SC2086
gen_conf $hosts_a7 -- $hosts_b host-0008 >"$T/partitions.conf"
# shellcheck disable=SC2086
gen_expect $hosts_a7 -- $hosts_b host-0008 >"$T/expect"
sweeps=$(grep -c "subnet UP" "$T/out")
: >"$T/sets"
kill -HUP "$smd_pid"
check wait_for "$T/out" "subnet UP" $((sweeps + 1))
check python3 "$here/checkpkeys.py" "$T/expect"
M=$(lid_of host-0008)
check test "$(pr host-0008 "$M" "$B1")" = "0x8002"
check test -z "$(pr host-0008 "$M" "$A1")"
# Left A's group (no longer a member: no record, where host-0001 still has
# one), may not join it again, joins B's
member_of() {	# member_of HOST MGID: the SA's record of HOST in MGID, asked with the SM_Key
	mc smhost get mgid="$2" pgid="fe80::$(pguid "$1" |
		sed 's/^0x\(....\)\(....\)\(....\)\(....\)/\1:\2:\3:\4/')" smkey=0x5eed
}
m8=$(member_of host-0008 ff12:401b:8001::ffff:ffff)
m1=$(member_of host-0001 ff12:401b:8001::ffff:ffff)
echo "$m8"
echo "$m1"
check grep -q 'op=get status=0x0300 ' <<<"$m8"
check grep -q 'op=get status=0x0000 .* js=0x1 ' <<<"$m1"
check grep -q 'op=ipoib status=0x0200 ' <<<"$(mc host-0008 ipoib pkey=0x8001)"
check grep -q 'op=ipoib status=0x0000 ' <<<"$(mc host-0008 ipoib pkey=0x8002)"
# Nothing else changed: two P_Key blocks (the host's, its switch port's), the
# MFT blocks of the group it left, and what any heavy sweep sends
cat "$T/sets"
check test "$(grep -c ' attr=0x0019 ' "$T/sets" || true)" -eq 0
check test "$(grep -c ' attr=0x0016 ' "$T/sets" || true)" -eq 2
grep -v -e ' attr=0x0016 ' -e ' attr=0x001b ' "$T/sets" | sort | diff - "$T/baseline" || true
check test "$(grep -v -e ' attr=0x0016 ' -e ' attr=0x001b ' "$T/sets" | sort)" = \
	"$(cat "$T/baseline")"
check grep -q "attr=0x0016 amod=0x00000000 node=$(printf '0x%016x' "$(nguid host-0008)") pkeys=0:0x7fff,1:0x8002\$" "$T/sets"
check grep -q "attr=0x0016 amod=0x000.0000 node=$(sw_guid_of host-0008) pkeys=0:0x7fff,1:0x8002\$" \
	"$T/sets"

# The JSON dump of the database: the partitions with their members
members() {	# members PKEY: how many ports the dump lists in that partition
	"$SMCTL" dump --db "$T/smd.db" --format json | python3 -c '
import json, sys
d = json.load(sys.stdin)
print(sum(len(p["members"]) for p in d["partitions"] if p["pkey"] == sys.argv[1]))' "$1"
}
check test "$(members 0x0001)" -eq 7
check test "$(members 0x0002)" -eq 9
check test "$(members 0x7fff)" -eq 27

# smctl resweep --heavy reads the file again too: host-0008 back to A
# shellcheck disable=SC2086
gen_conf $hosts_a -- $hosts_b >"$T/partitions.conf"
# shellcheck disable=SC2086
gen_expect $hosts_a -- $hosts_b >"$T/expect"
check heavy
check python3 "$here/checkpkeys.py" "$T/expect"
# A file with an error changes nothing: the partitions in force stay
printf 'A = 0x8001, ipoib, mut=5 : ALL ;\n' >"$T/partitions.conf"
check heavy
check grep -q "partitions.conf:1: unknown partition flag 'mut'.*the partitions in force stay" "$T/out"
check python3 "$here/checkpkeys.py" "$T/expect"
# So does SIGHUP with smd.conf naming a broken file: the file in force is
# still the one smctl names
gen_conf $hosts_a -- $hosts_b >"$T/partitions.conf"
cp "$T/partitions.conf" "$T/broken.conf"
printf 'B = 0x8002, ipoib, rate=9G : ALL ;\n' >>"$T/broken.conf"
cp "$T/smd.conf" "$T/smd.conf.good"
sed -i 's/^partition_config = .*/partition_config = broken.conf/' "$T/smd.conf"
n=$(grep -c "SIGHUP: configuration" "$T/out")
kill -HUP "$smd_pid"
check wait_for "$T/out" "SIGHUP: configuration" $((n + 1))
check wait_for "$T/out" "broken.conf:.*the partitions in force stay" 1
check grep -q '^file: partitions.conf$' <<<"$("$SMCTL" --socket "$T/control" partitions)"
check grep -q '^partitions: 3 (partitions.conf)' <<<"$("$SMCTL" --socket "$T/control" status)"
cp "$T/smd.conf.good" "$T/smd.conf"

# A heavy sweep that a trap starts (a host unplugged): the tables this smd
# wrote and that were not reset are not read again, and stay right
cable=$(awk '/^Switch/ { cur = $3 } /^Hca/ { cur = "" }
	cur != "" && $2 ~ /^"host-0017"/ { print cur $1 }' "$T/net")	# "leaf-05"[3]
n=$(grep -c "subnet UP" "$T/out")
sim_console "Unlink $cable"
check wait_for "$T/out" "subnet UP" $((n + 1))
grep "partitions:" "$T/out" | tail -n 1
check test "$(grep "partitions:" "$T/out" | tail -n 1 |
	sed 's/.*(\([0-9]*\) ports not read.*/\1/')" -ge 40
grep -v host-0017 "$T/expect" >"$T/expect16"
check python3 "$here/checkpkeys.py" "$T/expect16"

check smd_stop
# What smd said of multicast and what went wrong, for a failure's report
[ "$t_fail" -eq 0 ] || grep -E 'multicast:|warn|error' "$T/out" | tail -n 40
finish
