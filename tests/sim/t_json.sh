#!/bin/bash
# smctl --json (issue 15): every answer is one JSON object whose first
# member is "status", smctl's exit status comes from it, and the numbers
# agree with what the real tools read from the fabric (ibnetdiscover,
# saquery). status, check-routes, resweep, sm-enable, lids, history, status
# --db and sa; the text answers carry the same "status:" line; a subnet that
# cannot come up (a switch drops its LFT SMPs) answers "down" with exit 1;
# no smd at all is {"status":"error"} with exit 1.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
tmp=$(mktemp -d)
trap '[ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"; sim_stop' EXIT
$GEN ft3 4 -o "$tmp/net" 2>/dev/null
sim_start "$tmp/net" >/dev/null 2>&1
printf 'sweep_interval = 0\n' >"$tmp/conf"
smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out"
check wait_for "$tmp/out" "SA: answering" 1
ctl() { "$SMCTL" --socket "$tmp/control" "$@"; }

# get FILE EXPR: a Python expression over the JSON object d of FILE
get() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }
# is_json FILE: one JSON object, "status" its first member
is_json() {
	python3 -c 'import json, sys
d = json.load(open(sys.argv[1]))
sys.exit(0 if isinstance(d, dict) and list(d)[0] == "status" else 1)' "$1"
}

# What the fabric holds, by the real tools
sim_run ibnetdiscover >"$tmp/ibnd" 2>/dev/null
nodes=$(grep -Ec '^(Switch|Ca)[[:space:]]' "$tmp/ibnd")
switches=$(grep -c '^Switch' "$tmp/ibnd")
lids=$(grep -Eo '(lid|base lid) [0-9]+' "$tmp/ibnd" | awk '$NF > 0 { print $NF }' | sort -un | wc -l)

rc=0; ctl --json status >"$tmp/st.json" || rc=$?
check test "$rc" -eq 0
check is_json "$tmp/st.json"
check test "$(get "$tmp/st.json" 'd["status"]')" = ok
check test "$(get "$tmp/st.json" 'd["state"]')" = MASTER
check test "$(get "$tmp/st.json" 'd["subnet"]')" = up
check test "$(get "$tmp/st.json" 'd["nodes"]')" -eq "$nodes"
check test "$(get "$tmp/st.json" 'd["switches"]')" -eq "$switches"
check test "$(get "$tmp/st.json" 'd["lids"]')" -eq "$lids"
check test "$(get "$tmp/st.json" 'd["sa"]')" = True
check test "$(get "$tmp/st.json" 'd["sweeps"]["heavy"]')" -ge 1
# The option after the command works too, and the text answer says the same
ctl status --json >"$tmp/st2.json"
check is_json "$tmp/st2.json"
ctl status >"$tmp/st.txt"
check grep -qx "status: ok" "$tmp/st.txt"
check grep -qx "nodes: $nodes" "$tmp/st.txt"

rc=0; ctl --json check-routes >"$tmp/cr.json" || rc=$?
check test "$rc" -eq 0
check is_json "$tmp/cr.json"
check test "$(get "$tmp/cr.json" 'd["status"]')" = ok
check test "$(get "$tmp/cr.json" 'd["deadlock_free"]')" = True
check test "$(get "$tmp/cr.json" 'd["unreachable"] + d["loops"] + d["bad_vl"]')" -eq 0
check test "$(get "$tmp/cr.json" 'd["routed"] == d["pairs"] - d["disconnected"]')" = True

rc=0; ctl --json resweep --heavy >"$tmp/rs.json" || rc=$?
check test "$rc" -eq 0
check test "$(get "$tmp/rs.json" 'd["status"], d["kind"], d["result"]')" = "('ok', 'heavy', 'up')"
check test "$(get "$tmp/rs.json" 'd["nodes"]')" -eq "$nodes"

# sm-enable on a master: smd refuses (an ERROR answer), as JSON
rc=0; ctl --json sm-enable >"$tmp/se.json" 2>/dev/null || rc=$?
check test "$rc" -eq 1
check test "$(get "$tmp/se.json" 'd["status"]')" = error
check grep -q "NOT-ACTIVE" "$tmp/se.json"

# The database: lids and history, status --db
rc=0; "$SMCTL" --json --db "$tmp/smd.db" lids >"$tmp/lids.json" || rc=$?
check test "$rc" -eq 0
check is_json "$tmp/lids.json"
check test "$(get "$tmp/lids.json" 'len(d["lids"])')" -eq "$lids"
# A CA port's LID, as ibnetdiscover shows it, is the one the database gives its GUID
ca_guid=$(awk '/^Ca/ { getline; while ($0 !~ /^\[/) getline; match($0, /\([0-9a-f]+\)/);
	print substr($0, RSTART + 1, RLENGTH - 2); exit }' "$tmp/ibnd")
ca_lid=$(awk '/^Ca/ { getline; while ($0 !~ /^\[/) getline; match($0, /lid [0-9]+/);
	print substr($0, RSTART + 4, RLENGTH - 4); exit }' "$tmp/ibnd")
check test -n "$ca_lid"
check test "$(get "$tmp/lids.json" '[x["lid"] for x in d["lids"] if int(x["port_guid"], 16) == 0x'"$ca_guid"'][0]')" -eq "$ca_lid"
rc=0; "$SMCTL" --db "$tmp/smd.db" history --json --sweeps 5 --events 20 >"$tmp/hist.json" || rc=$?
check test "$rc" -eq 0
check test "$(get "$tmp/hist.json" 'd["sweeps"][0]["outcome"]')" = up
check test "$(get "$tmp/hist.json" 'd["sweeps"][0]["nodes"]')" -eq "$nodes"
check test "$(get "$tmp/hist.json" 'len(d["events"]) > 0')" = True
rc=0; "$SMCTL" --db "$tmp/smd.db" status --json >"$tmp/stdb.json" || rc=$?
check test "$rc" -eq 0
check test "$(get "$tmp/stdb.json" 'd["status"], d["lids"]')" = "('ok', $lids)"

# The SA, as another host sees it: the NodeRecord table has one record a
# node; a switch's NodeRecord (one MAD: the simulator cuts every MAD it
# delivers after 232 bytes, so RMPP tables are checked by count only)
# against ibnetdiscover
rc=0; SIM_HOST=host-0003 sim_run "$SMCTL" --json sa nodes >"$tmp/nr.json" || rc=$?
check test "$rc" -eq 0
check is_json "$tmp/nr.json"
check test "$(get "$tmp/nr.json" 'd["count"]')" -eq "$nodes"
read -r sw_guid sw_lid < <(awk '/^Switch/ { match($0, /"S-[0-9a-f]+"/); g = substr($0, RSTART + 3, RLENGTH - 4)
	match($0, /lid [0-9]+/); print g, substr($0, RSTART + 4, RLENGTH - 4); exit }' "$tmp/ibnd")
rc=0; SIM_HOST=host-0003 sim_run "$SMCTL" --json sa nodes --get --lid "$sw_lid" >"$tmp/nr1.json" || rc=$?
check test "$rc" -eq 0
check test "$(get "$tmp/nr1.json" 'd["records"][0]["node_type"], int(d["records"][0]["node_guid"], 16) == 0x'"$sw_guid"'')" = "(2, True)"
rc=0; SIM_HOST=host-0003 sim_run "$SMCTL" sa path --json --slid "$ca_lid" --dlid "$ca_lid" --count \
	>"$tmp/pr.json" || rc=$?
check test "$rc" -eq 0
check test "$(get "$tmp/pr.json" 'd["count"]')" -ge 1

# A subnet that cannot come up: one switch drops every LFT SMP
edge=$(awk '/^Switch/ && /edge/ { match($0, /"[^"]*"$/); print substr($0, RSTART + 1, RLENGTH - 2); exit }' "$tmp/net")
check test -n "$edge"
sim_console "Error \"$edge\" 100 25"
rc=0; ctl --json resweep --heavy >"$tmp/rs2.json" || rc=$?
check test "$rc" -eq 1
check test "$(get "$tmp/rs2.json" 'd["status"]')" = down
rc=0; ctl --json status >"$tmp/st3.json" || rc=$?
check test "$rc" -eq 1
check test "$(get "$tmp/st3.json" 'd["status"], d["subnet"]')" = "('down', 'not up')"
check test "$(get "$tmp/st3.json" 'd["last_sweep"]["problem_counts"]["lft_errors"]')" -ge 1
rc=0; ctl status >"$tmp/st3.txt" || rc=$?
check test "$rc" -eq 1
check grep -qx "status: down" "$tmp/st3.txt"
sim_console "Error \"$edge\" 0 25"
rc=0; ctl --json resweep --heavy >"$tmp/rs3.json" || rc=$?
check test "$rc" -eq 0

# No smd: an error, as JSON, exit 1
check smd_stop
rc=0; ctl --json status >"$tmp/none.json" 2>/dev/null || rc=$?
check test "$rc" -eq 1
check test "$(get "$tmp/none.json" 'd["status"]')" = error
check grep -q "not running" "$tmp/none.json"
finish
