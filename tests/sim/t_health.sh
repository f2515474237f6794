#!/bin/bash
# Fabric health (issue 20), judged with the real tools on a 3-level
# fat-tree (ft3 4) whose PMAs ibsim runs:
#  1. every cabled port's counters are in the exporter's /metrics, those
#     set with ibsim's console (PerformanceSet) equal to what perfquery
#     reads; promtool check metrics passes;
#  3. health_action = report: a switch-to-switch link with symbol errors
#     past health_symbol_errors and one that flaps (Unlink/Link) more than
#     health_link_downs times change no LFT entry (lftsnap.py) and are
#     listed by smctl -j health;
#  4. a degraded link (a 4x port that trained at 1x: tests/sim/lane_shim.c
#     in ibsim, which trains links at the widest width both ends enable)
#     is listed with both ends' widths and speeds as smpquery reads them;
#  2. health_action = isolate: the same faults take both links out of
#     service within two counter sweeps: ibroute (lftsnap.py) forwards no
#     LID into either link at either end, only routes that crossed them
#     moved, checkfabric.py walks every CA port to every LID, checkvls.py
#     finds the channel dependency graph acyclic on one VL,
#     smd_port_isolated is 1 at the four ends; the isolation survives a
#     restart of smd; smctl port enable brings both links back and the
#     forwarding tables are those of the start again.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
EXPORTER=${EXPORTER:-$top/exporter/smd_exporter}
[ -x "$EXPORTER" ] || { echo "missing $EXPORTER: build first" >&2; exit 99; }
tmp=$(mktemp -d)
exp_pid=
exp_stop() {
	[ -n "$exp_pid" ] || return 0
	kill -TERM "$exp_pid" 2>/dev/null
	wait "$exp_pid" 2>/dev/null
	exp_pid=
}
trap 'exp_stop; smd_stop || true; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
ctl() { "$SMCTL" --socket "$tmp/control" "$@"; }
snap() { python3 "$here/lftsnap.py" snap "$1" >/dev/null; }

# The fabric: one host cabled at 1x (ibsim: both ends enable 1x alone), its
# switch's end enabling SDR and DDR only, so that the two ends differ
$GEN ft3 4 -o "$tmp/net0" 2>/dev/null
python3 "$here/netedit.py" "$tmp/net0" "$tmp/net1" rate p00-edge-01:1 1xQDR
sed '/^Switch.*"p00-edge-01"/,/^$/s/^\(\[1\].*"host-0002"\[1\].*\)1xQDR/\11xDDR/' "$tmp/net1" >"$tmp/net"
grep -q '"host-0002"\[1\].*1xDDR' "$tmp/net" || { echo "cannot edit the fabric" >&2; exit 99; }
# The link with symbol errors, the link that flaps (both between switches)
L1=p01-agg-00:3 L1P=core-000:2
L2=p02-agg-01:4 L2P=core-003:3
guid_of() { awk -v n="\"$1\"" '/guid=/ { split($1, a, "="); g = a[2] } $3 == n { print g }' "$tmp/net"; }

# ibsim trains a link at the widest width both ends enable: the shim makes
# the 1x-only ports enable 4x as well, as a real port with a bad lane
cc -shared -fPIC -O2 -o "$tmp/lane_shim.so" "$here/lane_shim.c" -ldl ||
	{ echo "cannot build lane_shim.so" >&2; exit 99; }
export LANE_SHIM=1 LANE_SHIM_LOG="$tmp/lane.log"
SIM_IBSIM_PRELOAD="$tmp/lane_shim.so" sim_start "$tmp/net" >/dev/null 2>&1

# js EXPR: EXPR holds on `smctl --json health` (d); until EXPR: within 60 s
js() {
	ctl --json health >"$tmp/h.json" 2>/dev/null || true
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); sys.exit(0 if eval(sys.argv[2]) else 1)' \
		"$tmp/h.json" "$1" 2>/dev/null
}
until_js() {
	for _ in $(seq 600); do
		js "$1" && return 0
		sleep 0.1
	done
	echo "not within 60 s: $1" >&2
	cat "$tmp/h.json" >&2
	return 1
}
# The entry of port NAME:P in the health answer (python expression)
entry() {
	local name=${1%:*} p=${1#*:}
	echo "[x for x in d['ports'] if x['node_desc'] == '$name' and x['port'] == $p]"
}
# The heavy sweeps so far, and: wait until more than N have ended and none runs
heavy() {
	ctl --json status | python3 -c 'import json, sys; print(json.load(sys.stdin)["sweeps"]["heavy"])'
}
settled_after() {
	for _ in $(seq 600); do
		ctl --json status >"$tmp/s.json" 2>/dev/null
		python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if d["sweeps"]["heavy"] > int(sys.argv[2]) and d["sweep_running"] is None else 1)' \
			"$tmp/s.json" "$1" && return 0
		sleep 0.1
	done
	return 1
}
# flap NAME:P PEER:Q: the cable down, seen down by a heavy sweep, back up and ACTIVE
# repaired_only OLD NEW LINK: the last routes computed are a repair
# that moved only the routes that crossed LINK; or, where the repaired
# routes lost the balance (route_repair_balanced), routes computed afresh
# that carry less over their busiest link, as the log says
repaired_only() {
	local eng
	# the last sweep that changed routes: a heavy sweep may follow it (the
	# traps of a flapping link) and repair nothing, "0 LFT entries changed"
	eng=$(grep "routing (" "$tmp/out" | grep -v ", repaired): .* 0 LFT entries changed" |
		tail -n 1 | sed 's/.*routing (\([^)]*\)).*/\1/')
	case $eng in
	*", repaired") python3 "$here/lftsnap.py" diff "$1" "$2" --cut "$3" ;;
	*"afresh: repair unbalanced")
		echo "routes computed afresh: $(grep "routing: the repaired routes carry" "$tmp/out" |
			tail -n 1)"
		grep "routing: the repaired routes carry" "$tmp/out" | tail -n 1 | grep -q "used instead"
		;;
	*) echo "routing ($eng): neither repaired nor a repair refused"; return 1 ;;
	esac
}
flap() {
	local n

	n=$(heavy)
	sim_console "Unlink \"${1%:*}\"[${1#*:}]"
	settled_after "$n" || return 1
	n=$(heavy)
	sim_console "Link \"${1%:*}\"[${1#*:}] \"${2%:*}\"[${2#*:}]"
	settled_after "$n"
}

# exp_start: the exporter on a port the kernel picks
exp_start() {
	: >"$tmp/exp.log"
	"$EXPORTER" --web.listen-address=127.0.0.1:0 --control-socket="$tmp/control" \
		--control-timeout=10 >"$tmp/exp.log" 2>&1 &
	exp_pid=$!
	wait_for "$tmp/exp.log" "listening on" 1 || return 1
	port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$tmp/exp.log" | head -1)
	[ -n "$port" ]
}
scrape() { curl -s -o "$1" -w '%{http_code}' --max-time 60 "http://127.0.0.1:$port/metrics"; }
# val FILE SERIES: the value of the one sample SERIES
val() { awk -v s="$2" '$1 == s { print $2; n++ } END { exit n != 1 }' "$1"; }
# lbl NAME:P: the labels of that port's series
lbl() { printf '{node_guid="0x%016x",port="%s",node_desc="%s"}' "$(guid_of "${1%:*}")" "${1#*:}" "${1%:*}"; }

# ---- report ----
printf 'sweep_interval = 0\nperf_interval = 1\nhealth_link_downs = 2\n' >"$tmp/conf"
smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out"
check wait_for "$tmp/out" "SA: answering" 1
check until_js 'd["counters"]["sweeps"] >= 1'
check snap "$tmp/s0.json"
check exp_start

# 1. Every cabled port; the console's values as perfquery reads them
sim_run ibnetdiscover >"$tmp/ibnd" 2>/dev/null
cabled=$(grep -c '^\[[0-9]*\]' "$tmp/ibnd")
lid_of() {	# the LID of node NAME (a switch: port 0's; a CA: its port's)
	awk -v n="\"$1\"" '
		/^Switch/ && $0 ~ "# " n " " { match($0, /lid [0-9]+/); print substr($0, RSTART + 4, RLENGTH - 4); exit }
		/^Ca/ { ca = ($0 ~ "# " n "$") }
		ca && /^\[/ { match($0, /# lid [0-9]+/); print substr($0, RSTART + 6, RLENGTH - 6); exit }' "$tmp/ibnd"
}
sim_console 'PerformanceSet "p03-edge-01"[2] PortCounters.SymbolErrorCounter=61' \
	'PerformanceSet "p03-edge-01"[2] PortCounters.LinkDownedCounter=7' \
	'PerformanceSet "p03-edge-01"[2] PortCounters.PortRcvErrors=42' \
	'PerformanceSet "p03-edge-01"[2] PortCounters.PortXmitDiscards=13' \
	'PerformanceSet "p03-edge-01"[2] PortCounters.LinkErrorRecoveryCounter=3' \
	'PerformanceSet "host-0007"[1] PortCounters.SymbolErrorCounter=33' \
	'PerformanceSet "host-0007"[1] PortCounters.PortRcvErrors=9'
n=$(ctl --json health | python3 -c 'import json, sys; print(json.load(sys.stdin)["counters"]["sweeps"])')
check until_js "d['counters']['sweeps'] >= $n + 2"
check test "$(scrape "$tmp/m1")" = 200
check test "$(grep -c '^smd_port_symbol_errors_total{' "$tmp/m1")" = "$cabled"
check test "$(grep -c '^smd_port_rcv_data_bytes_total{' "$tmp/m1")" = "$cabled"
check test "$(grep -c '^smd_port_healthy{' "$tmp/m1")" = "$cabled"
# same NAME:P SERIES FIELD: the series equals perfquery's field
same() {
	local name=${1%:*} p=${1#*:} want got

	want=$(sim_run perfquery "$(lid_of "$name")" "$p" 2>/dev/null |
		sed -n "s/^$3:\\.*\\([0-9]*\\)$/\\1/p")
	got=$(val "$tmp/m1" "$2$(lbl "$1")")
	echo "  $1 $3: perfquery $want, /metrics $got"
	[ -n "$want" ] && [ "$want" = "$got" ]
}
check same p03-edge-01:2 smd_port_symbol_errors_total SymbolErrorCounter
check same p03-edge-01:2 smd_port_link_downed_total LinkDownedCounter
check same p03-edge-01:2 smd_port_rcv_errors_total PortRcvErrors
check same p03-edge-01:2 smd_port_xmit_discards_total PortXmitDiscards
check same p03-edge-01:2 smd_port_link_error_recovery_total LinkErrorRecoveryCounter
check same host-0007:1 smd_port_symbol_errors_total SymbolErrorCounter
check same host-0007:1 smd_port_rcv_errors_total PortRcvErrors
check test "$(val "$tmp/m1" "smd_port_symbol_errors_total$(lbl p00-edge-00:1)")" = 0
if command -v promtool >/dev/null; then
	check promtool check metrics <"$tmp/m1"
else
	echo "promtool not installed (Debian: prometheus, tools/setup-debian.sh): not checked"
fi

# 4. The degraded link, at both ends, with both ends' values as smpquery reads them
# rate NAME:P: "active WxS, widths ..., speeds ..." from smpquery portinfo
rate() {
	sim_run smpquery portinfo "$(lid_of "${1%:*}")" "${1#*:}" 2>/dev/null | python3 -c '
import re, sys
f = {}
for line in sys.stdin:
    m = re.match(r"(\w+):\.+(.*)$", line.strip())
    if m:
        f[m.group(1)] = m.group(2)
sp = {"2.5 Gbps": "SDR", "5.0 Gbps": "DDR", "10.0 Gbps": "QDR"}
w = lambda s: ",".join(x.strip().lower() for x in s.split(" or "))
act = f["LinkWidthActive"].lower() + sp[f["LinkSpeedActive"]]
print("%s|%s|%s" % (act, w(f["LinkWidthEnabled"]), ",".join(sp[x.strip()] for x in f["LinkSpeedEnabled"].split(" or "))))'
}
deg_a=$(rate p00-edge-01:1)
deg_b=$(rate host-0002:1)
echo "  smpquery: p00-edge-01:1 $deg_a, host-0002:1 $deg_b"
check until_js "any(r['rule'] == 'degraded' for x in $(entry p00-edge-01:1) for r in x['rules'])"
check until_js "any(r['rule'] == 'degraded' for x in $(entry host-0002:1) for r in x['rules'])"
# The reason at p00-edge-01 port 1: its own values, then the other end's
degraded_reason() {
	python3 - "$tmp/h.json" "$1" "$2" "$3" "$4" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
name, p = sys.argv[2].rsplit(":", 1)
peer, q = sys.argv[3].rsplit(":", 1)
a, b = sys.argv[4].split("|"), sys.argv[5].split("|")
r = [r["reason"] for x in d["ports"] if x["node_desc"] == name and x["port"] == int(p)
     for r in x["rules"] if r["rule"] == "degraded"][0]
want = ("degraded: %s, both ends allow 4x%s (this end: widths %s, speeds %s; %s port %s: %s, "
        "widths %s, speeds %s)" % (a[0], a[0][2:], a[1], a[2], peer, q, b[0], b[1], b[2]))
print("  smctl health: %s\n  from smpquery: %s" % (r, want))
sys.exit(0 if r == want else 1)
EOF
}
js True
check degraded_reason p00-edge-01:1 host-0002:1 "$deg_a" "$deg_b"
check degraded_reason host-0002:1 p00-edge-01:1 "$deg_b" "$deg_a"
check grep -q "lane-shim:" "$tmp/lane.log"

# 3. The faults, reported: listed, no LFT entry changed
sim_console "PerformanceSet \"${L1%:*}\"[${L1#*:}] PortCounters.SymbolErrorCounter=5000"
check until_js "any(r['rule'] == 'symbol_errors' for x in $(entry "$L1") for r in x['rules'])"
for i in 1 2 3; do
	check flap "$L2" "$L2P"
done
check until_js "any(r['rule'] == 'link_downs' and r['count'] == 3 for x in $(entry "$L2") for r in x['rules'])"
check until_js "any(r['rule'] == 'link_downs' for x in $(entry "$L2P") for r in x['rules'])"
check js "d['action'] == 'report' and d['isolated'] == 0 and d['status'] == 'problems'"
check js "all(not x['isolated'] and x['isolation'] is None for x in d['ports'])"
check snap "$tmp/s1.json"
check python3 "$here/lftsnap.py" diff "$tmp/s0.json" "$tmp/s1.json" --expect-same
check grep -q "health: p01-agg-00 port 3 (GUID 0x[0-9a-f]*) is unhealthy" "$tmp/out"
exp_stop
smd_stop || bad "smd exit status (report)"

# no_route_into SNAP NAME:P...: no LFT entry of those switches forwards into those ports
no_route_into() {
	local s=$1

	shift
	python3 - "$s" "$@" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
bad = 0
for end in sys.argv[2:]:
    name, p = end.rsplit(":", 1)
    g = [g for g, d in doc["descs"].items() if d == name][0]
    n = sum(1 for lid, port in doc["lfts"][g].items() if port == int(p))
    print("  %s: %d LIDs forwarded into it" % (end, n))
    bad += n
sys.exit(1 if bad else 0)
EOF
}

# ---- isolate ----
printf 'sweep_interval = 0\nperf_interval = 1\nhealth_link_downs = 2\nhealth_action = isolate\n' \
	>"$tmp/conf"
smd_start "$tmp/conf" "$tmp/smd2.db" "$tmp/out"
check wait_for "$tmp/out" "SA: answering" 1
check until_js 'd["counters"]["sweeps"] >= 1'
# The counters this smd found (the console's) are where its totals start: nothing new
check js "d['unhealthy'] == 2"		# the degraded host link's ends: a CA's, never isolated
check snap "$tmp/s0.json"
check exp_start
# The flapping link: out once its third flap is seen and it is up again
for i in 1 2 3; do
	check flap "$L2" "$L2P"
done
check until_js "d['isolated'] == 1"
settled_after "$(($(heavy) - 1))" >/dev/null
check snap "$tmp/s1a.json"
check no_route_into "$tmp/s1a.json" "$L2" "$L2P"
# Route repair moved only the routes that crossed it
check repaired_only "$tmp/s0.json" "$tmp/s1a.json" "$L2"
# The link with symbol errors: out within two counter sweeps
sim_console "PerformanceSet \"${L1%:*}\"[${L1#*:}] PortCounters.SymbolErrorCounter=6000"
check until_js "d['isolated'] == 2"
# Counted from smd's log, not from when this script looked: the counter
# sweep that found the rule broken, and the one the isolation came after
l1=$(printf '%s port %s' "${L1%:*}" "${L1#*:}")
broke=$(sed -n "s/.*health: $l1 (GUID 0x[0-9a-f]*) is unhealthy (counter sweep \([0-9]*\)).*/\1/p" \
	"$tmp/out" | tail -n 1)
outof=$(sed -n "s/.*health: the link of $l1 (GUID .* is out of service: .*; after counter sweep \([0-9]*\)).*/\1/p" \
	"$tmp/out" | tail -n 1)
check test -n "$broke" -a -n "$outof"
check test "${outof:-999}" -le "$((${broke:-0} + 2))"
check js "all(x['isolation']['verdict'] == 'isolated' for e in ($(entry "$L1"), $(entry "$L2"), $(entry "$L1P"), $(entry "$L2P")) for x in e)"
check js "all(x['isolation']['peer_port'] in (${L2#*:}, ${L2P#*:}) for x in $(entry "$L2"))"
settled_after "$(($(heavy) - 1))" >/dev/null
check snap "$tmp/s1.json"
check no_route_into "$tmp/s1.json" "$L1" "$L1P" "$L2" "$L2P"
check repaired_only "$tmp/s1a.json" "$tmp/s1.json" "$L1"
check python3 "$here/checkfabric.py" "$tmp/net"
if python3 "$here/checkvls.py" --links >"$tmp/vls" 2>&1; then
	ok "checkvls --links: $(head -1 "$tmp/vls")"
else
	bad "checkvls --links"; cat "$tmp/vls"
fi
check test "$(scrape "$tmp/m2")" = 200
for e in "$L1" "$L1P" "$L2" "$L2P"; do
	check test "$(val "$tmp/m2" "smd_port_isolated$(lbl "$e")")" = 1
done
check test "$(val "$tmp/m2" "smd_port_isolated$(lbl p00-edge-00:3)")" = 0
check test "$(val "$tmp/m2" smd_health_isolated_links)" = 2
check test "$(val "$tmp/m2" 'smd_health_unhealthy_ports{rule="link_downs"}')" = 2
exp_stop

# Across a restart: out of service again from the first sweep, with no new error
smd_stop || bad "smd exit status (isolate)"
smd_start "$tmp/conf" "$tmp/smd2.db" "$tmp/out"
check wait_for "$tmp/out" "SA: answering" 1
check wait_for "$tmp/out" "health: 2 links to keep out of service" 1
check until_js "d['isolated'] == 2"
check snap "$tmp/s2.json"
check no_route_into "$tmp/s2.json" "$L1" "$L1P" "$L2" "$L2P"
check python3 "$here/checkfabric.py" "$tmp/net"

# smctl port enable (either end): back in the routes, the tables of the start
check ctl port enable "$(guid_of "${L1%:*}")" "${L1#*:}"
check ctl port enable "$(guid_of "${L2P%:*}")" "${L2P#*:}"
check js "d['isolated'] == 0 and d['kept'] == 0"
settled_after "$(($(heavy) - 1))" >/dev/null
check snap "$tmp/s3.json"
check python3 "$here/lftsnap.py" diff "$tmp/s0.json" "$tmp/s3.json" --expect-same
# Refused to who may not change the SM; a port smd does not know
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	chmod 755 "$tmp"
	chmod 666 "$tmp/control"
	rc=0
	setpriv --reuid=65534 --regid=65534 --clear-groups "$SMCTL" --socket "$tmp/control" \
		port enable "$(guid_of "${L1%:*}")" "${L1#*:}" >"$tmp/denied" 2>&1 || rc=$?
	check test "$rc" -ne 0
	check grep -q "permission denied" "$tmp/denied"
fi
rc=0
ctl port enable 0x1234 3 >"$tmp/unknown" 2>&1 || rc=$?
check test "$rc" -ne 0
check grep -q "no port 3 on a node with GUID" "$tmp/unknown"
smd_stop || bad "smd exit status"
finish
