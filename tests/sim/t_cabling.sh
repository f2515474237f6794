#!/bin/bash
# Issue 21: the fabric held against its cabling plan, judged by the real
# tools through the simulator. The plan is what ibnetdiscover prints on a
# 3-level fat-tree (ft3 4) cabled right; netedit.py recables copies of it.
#  1. Plan equal to the fabric: no mismatch. Two switch cables crossed and
#     one removed: smctl -j cabling lists exactly those ports (the crossed
#     cables at both ends as miswired, the removed one as missing).
#  2. cabling_enforce = yes (by SIGHUP, then from the start): the crossed
#     links are not ACTIVE (smpquery portinfo), every other link is, and
#     every CA port reaches every LID (checkfabric.py, LFTs read back).
#  3. A link trained at 1x is degraded; a host on another leaf's port is
#     reported and stays ACTIVE.
#     The exporter's metrics and STATUS= count the same.
#  4. smctl topology --slurm puts every host under the leaf ibnetdiscover
#     shows (checkslurm.py parses it as Slurm does), --json the same tree.
#  5. Hostile plans by SIGHUP (binary, truncated, a line twice, 70 MiB) are
#     refused with an error, smd lives on with the plan in force; SIGHUP
#     reads a good new plan, and the log says a change once.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
tmp=$(mktemp -d)
lpid=
trap '[ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null; [ -n "$lpid" ] && kill "$lpid";
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"; sim_stop' EXIT
EDIT="python3 $here/netedit.py"
ctl() { "$SMCTL" --socket "$tmp/control" "$@"; }
# get FILE EXPR: a Python expression over the JSON object d of FILE
get() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# The mismatches of a smctl -j cabling answer: "kind desc port action", sorted
listing() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
for m in sorted((m["kind"], m["node_desc"], m["port"], m["action"]) for m in d["mismatches"]):
    print("%s %s %d %s" % m)' "$1"
}
# One sample of the metrics page smd serves the exporter (the control socket's metrics)
metric() {
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX)
s.connect(sys.argv[1])
s.sendall(b"metrics\n")
buf = b""
while not buf.endswith(b"\nOK\n") and b"\nERROR" not in buf:
    d = s.recv(65536)
    if not d:
        break
    buf += d
for line in buf.decode().split("\n"):
    if line.startswith(sys.argv[2] + " "):
        print(line.split()[1])' "$tmp/control" "$1"
}
# A switch's LID and GUID by its description, from ibnetdiscover's output
sw_lid() { sed -n "s/^Switch.*# \"$2\" .* lid \([0-9]*\) .*/\1/p" "$1"; }
# LinkState of a switch port, by LID, as smpquery prints it
link_state() { sim_run smpquery portinfo "$1" "$2" 2>/dev/null | sed -n 's/^LinkState:\.*//p'; }

$GEN ft3 4 -o "$tmp/good.net" 2>/dev/null
# Two switch-to-switch cables crossed (two ports of one pair; across pods), one removed
$EDIT "$tmp/good.net" "$tmp/bad1.net" cross p00-edge-00:3 p00-edge-01:3 \
	cross p01-agg-00:3 p02-agg-01:3 unlink p03-edge-01:4
# The same crossings, a link trained at 1x, host-0004 and host-0008 swapped across leaves
$EDIT "$tmp/good.net" "$tmp/bad2.net" cross p00-edge-00:3 p00-edge-01:3 \
	cross p01-agg-00:3 p02-agg-01:3 rate p02-edge-00:3 1xQDR cross p01-edge-00:1 p02-edge-00:1
crossed="p00-edge-00:3 p00-edge-01:3 p01-agg-00:3 p02-agg-01:3"
held_args=""
for e in $crossed; do held_args="$held_args --expect-inactive $e"; done

# ---- the plan: ibnetdiscover on the fabric cabled right ----
sim_start "$tmp/good.net" >/dev/null 2>&1
sim_run ibnetdiscover >"$tmp/plan.ibnd" 2>/dev/null
check grep -q '^Switch' "$tmp/plan.ibnd"
"$SMCTL" plan check "$tmp/plan.ibnd" >"$tmp/pc.out"
check grep -q "plan OK: .*36 nodes (20 switches, 16 CAs, 0 routers), 48 cables" "$tmp/pc.out"
"$SMCTL" --json plan check "$tmp/plan.ibnd" >"$tmp/pc.json"
check test "$(get "$tmp/pc.json" 'd["status"], d["cables"]')" = "('ok', 48)"
# A relative path: from smd.conf's directory
printf 'sweep_interval = 0\ncabling_plan = plan.ibnd\n' >"$tmp/conf"
check "$SMD" -n -c "$tmp/conf"
smd_start "$tmp/conf" "$tmp/good.db" "$tmp/out"
check wait_for "$tmp/out" "SA: answering" 1

# 1. Equal: nothing to list
rc=0; ctl --json cabling >"$tmp/c0.json" || rc=$?
check test "$rc" -eq 0
check test "$(get "$tmp/c0.json" 'd["status"], d["total"], len(d["mismatches"]), d["compared"]')" \
	= "('ok', 0, 0, True)"
check grep -q "cabling: the fabric matches the plan" "$tmp/out"
ctl --json status >"$tmp/st.json"
check test "$(get "$tmp/st.json" 'd["cabling"]["total"], d["cabling"]["nodes"]')" = "(0, 36)"
ctl status >"$tmp/st.txt"
check grep -q "^cabling: plan .*plan.ibnd (36 nodes, 48 cables), enforce no; sweep 1: 0 mismatches" \
	"$tmp/st.txt"

# 4. The scheduler's topology, parsed as Slurm parses it
"$SMCTL" topology --slurm --db "$tmp/good.db" >"$tmp/topology.conf"
"$SMCTL" topology --json --db "$tmp/good.db" >"$tmp/topology.json"
check grep -q '^SwitchName=p00-edge-00 Nodes=host-0001,smhost$' "$tmp/topology.conf"
check grep -q '^SwitchName=p00-edge-01 Nodes=host-\[0002-0003\]$' "$tmp/topology.conf"
check python3 "$here/checkslurm.py" "$tmp/topology.conf" "$tmp/plan.ibnd" --json "$tmp/topology.json"
check test "$(get "$tmp/topology.json" 'd["levels"], d["hosts"], len(d["switches"])')" = "(3, 16, 20)"
# The checker catches a host under the wrong leaf
sed 's/^SwitchName=p00-edge-00 Nodes=host-0001,smhost$/SwitchName=p00-edge-00 Nodes=host-0002,smhost/;
     s/^SwitchName=p00-edge-01 Nodes=host-\[0002-0003\]$/SwitchName=p00-edge-01 Nodes=host-0001,host-0003/' \
	"$tmp/topology.conf" >"$tmp/wrong.conf"
check test "$(python3 "$here/checkslurm.py" "$tmp/wrong.conf" "$tmp/plan.ibnd" | grep -c FAIL)" -eq 2

# 5. Hostile plans: refused, smd lives, the plan in force stays
cp "$tmp/plan.ibnd" "$tmp/plan.good"
n=0
hostile() {	# hostile WHAT: SIGHUP with plan.ibnd as it is now
	n=$((n + 1))
	kill -HUP "$smd_pid"
	if wait_for "$tmp/out" "cabling plan refused" "$n"; then ok "$1 refused"; else bad "$1 refused"; fi
	check kill -0 "$smd_pid"
	rc=0; ctl --json cabling >"$tmp/h.json" || rc=$?
	check test "$rc" -eq 1
	check test "$(get "$tmp/h.json" 'd["status"], d["error"] is not None, d["cables"]')" = \
		"('problems', True, 48)"
	check grep -q "^cabling_error: " <(ctl status)
}
head -c 8192 "$SMD" >"$tmp/plan.ibnd"
hostile "binary plan (an ELF header)"
check grep -q "plan.ibnd:1: binary data" "$tmp/out"
head -c "$(($(stat -c %s "$tmp/plan.good") / 2))" "$tmp/plan.good" >"$tmp/plan.ibnd"
hostile "truncated plan"
awk '{ print } /^\[3\]/ && !done { print; done = 1 }' "$tmp/plan.good" >"$tmp/plan.ibnd"
hostile "a port line twice"
check grep -q "listed twice (first on line" "$tmp/out"
truncate -s 70M "$tmp/plan.ibnd"
hostile "a 70 MiB plan"
check grep -q "larger than 64 MiB" "$tmp/out"
# smctl plan check says the same, with the line
rc=0; "$SMCTL" plan check "$tmp/plan.ibnd" 2>"$tmp/pc.err" || rc=$?
check test "$rc" -eq 1
check grep -q "larger than 64 MiB" "$tmp/pc.err"
# A good plan that differs from the fabric (topogen's own file, by names, two cables
# crossed): read on SIGHUP, and the log says it once, however often smd sweeps
$EDIT "$tmp/good.net" "$tmp/plan.ibnd" cross p03-agg-00:3 p03-agg-00:4
kill -HUP "$smd_pid"
check wait_for "$tmp/out" "cabling: 4 mismatches (4 miswired) against the plan" 1
check ctl resweep --heavy
check ctl resweep --heavy
ctl --json cabling >"$tmp/c1.json" || true
ctl --json status >"$tmp/st.json"
check test "$(get "$tmp/c1.json" 'd["total"], d["error"], d["sweep"]')" = \
	"(4, None, $(get "$tmp/st.json" 'd["sweeps"]["heavy"]'))"
check test "$(grep -c "cabling: 4 mismatches" "$tmp/out")" -eq 1
cp "$tmp/plan.good" "$tmp/plan.ibnd"
kill -HUP "$smd_pid"
check wait_for "$tmp/out" "cabling: the fabric matches the plan" 2
check smd_stop
sim_stop

# ---- 1. Two switch cables crossed, one removed: exactly those ports ----
sim_start "$tmp/bad1.net" >/dev/null 2>&1
printf 'sweep_interval = 0\ncabling_plan = %s\n' "$tmp/plan.good" >"$tmp/conf"
# STATUS= on a stand-in for systemd's notification socket
python3 "$here/notify_listen.py" "$tmp/notify" "$tmp/notes" &
lpid=$!
for _ in $(seq 100); do [ -S "$tmp/notify" ] && break; sleep 0.05; done
export NOTIFY_SOCKET="$tmp/notify"
smd_start "$tmp/conf" "$tmp/bad1.db" "$tmp/out"
unset NOTIFY_SOCKET
check wait_for "$tmp/out" "SA: answering" 1
check wait_for "$tmp/notes" "STATUS=.*; cabling: 10 mismatches" 1
rc=0; ctl --json cabling >"$tmp/c2.json" || rc=$?
check test "$rc" -eq 1
listing "$tmp/c2.json" >"$tmp/c2.list"
cat >"$tmp/c2.want" <<EOF
missing p03-agg-01 2 reported
missing p03-edge-01 4 reported
miswired core-000 2 reported
miswired core-002 3 reported
miswired p00-agg-00 1 reported
miswired p00-agg-00 2 reported
miswired p00-edge-00 3 reported
miswired p00-edge-01 3 reported
miswired p01-agg-00 3 reported
miswired p02-agg-01 3 reported
EOF
if diff -u "$tmp/c2.want" "$tmp/c2.list"; then ok "exactly the crossed and removed ports"; else
	bad "exactly the crossed and removed ports"; fi
# Their GUIDs are the ones ibnetdiscover shows for those switches
sim_run ibnetdiscover >"$tmp/bad1.ibnd" 2>/dev/null
guids_ok() {
	python3 -c 'import json, re, sys
d = json.load(open(sys.argv[1]))
g = dict((m.group(2), int(m.group(1), 16)) for m in re.finditer(
    r"switchguid=0x([0-9a-f]+).*\nSwitch\s.*#\s\"([^\"]+)\"", open(sys.argv[2]).read()))
sys.exit(0 if all(int(m["node_guid"], 16) == g[m["node_desc"]] for m in d["mismatches"]) else 1)' "$1" "$2"
}
check guids_ok "$tmp/c2.json" "$tmp/bad1.ibnd"
# The exporter's series say the same
check test "$(metric 'smd_cabling_mismatches{kind="miswired"}')" = 8
check test "$(metric 'smd_cabling_mismatches{kind="missing"}')" = 2
check test "$(metric smd_cabling_links_held)" = 0
# Without enforcement every link is up and routed
check python3 "$top/tests/sim/checkfabric.py" "$tmp/bad1.net"

# ---- 2. Enforced by SIGHUP: the crossed links go down to INIT, routes go around ----
printf 'sweep_interval = 0\ncabling_plan = %s\ncabling_enforce = yes\n' "$tmp/plan.good" \
	>"$tmp/conf"
kill -HUP "$smd_pid"
check wait_for "$tmp/out" "taking its link down to INIT" 4
ctl resweep --heavy >/dev/null || true
ctl --json cabling >"$tmp/c3.json" || true
check test "$(get "$tmp/c3.json" 'd["links_held"], d["links_kept"], d["enforced"]')" = "(4, 0, True)"
check test "$(listing "$tmp/c3.json" | grep -c '^miswired .* held_init$')" -eq 8
check test "$(listing "$tmp/c3.json" | grep -c '^missing .* reported$')" -eq 2
check test "$(metric smd_cabling_links_held)" = 4
for e in $crossed; do
	sw=${e%:*}
	port=${e#*:}
	lid=$(sw_lid "$tmp/bad1.ibnd" "$sw")
	check test "$(link_state "$lid" "$port")" = Initialize
done
check test "$(link_state "$(sw_lid "$tmp/bad1.ibnd" p00-edge-00)" 4)" = Active
# shellcheck disable=SC2086
check python3 "$top/tests/sim/checkfabric.py" "$tmp/bad1.net" $held_args
check smd_stop
sim_stop

# ---- 2, 3. Enforced from the start; a degraded link; a host on another leaf ----
sim_start "$tmp/bad2.net" >/dev/null 2>&1
smd_start "$tmp/conf" "$tmp/bad2.db" "$tmp/out"
check wait_for "$tmp/out" "SA: answering" 1
ctl resweep --heavy >/dev/null || true
ctl --json cabling >"$tmp/c4.json" || true
listing "$tmp/c4.json" >"$tmp/c4.list"
check grep -qx "degraded p02-edge-00 3 reported" "$tmp/c4.list"
check grep -qx "degraded p02-agg-00 1 reported" "$tmp/c4.list"
check test "$(get "$tmp/c4.json" '[m["expected"] + "/" + m["found"] for m in d["mismatches"]
	if m["kind"] == "degraded"]')" = "['4xQDR/1xQDR', '4xQDR/1xQDR']"
check grep -qx "miswired host-0004 1 reported" "$tmp/c4.list"
check grep -qx "miswired host-0008 1 reported" "$tmp/c4.list"
check grep -qx "miswired p01-edge-00 1 reported" "$tmp/c4.list"
check grep -qx "miswired p02-edge-00 1 reported" "$tmp/c4.list"
check test "$(grep -c ' held_init$' "$tmp/c4.list")" -eq 8
check test "$(get "$tmp/c4.json" 'd["total"], d["links_held"]')" = "(14, 4)"
# Never brought up: nothing to take down
check test "$(grep -c "taking its link down" "$tmp/out")" -eq 0
sim_run ibnetdiscover >"$tmp/bad2.ibnd" 2>/dev/null
check test "$(link_state "$(sw_lid "$tmp/bad2.ibnd" p01-edge-00)" 1)" = Active
check test "$(link_state "$(sw_lid "$tmp/bad2.ibnd" p02-edge-00)" 1)" = Active
check test "$(link_state "$(sw_lid "$tmp/bad2.ibnd" p00-edge-00)" 3)" = Initialize
# shellcheck disable=SC2086
check python3 "$top/tests/sim/checkfabric.py" "$tmp/bad2.net" $held_args
check smd_stop
finish
