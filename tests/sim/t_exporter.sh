#!/bin/bash
# smd_exporter (issue 20): smd on a small fat-tree, the exporter on a port
# the kernel picks, /metrics scraped over HTTP as Prometheus would. The
# figures are the fabric's as ibnetdiscover counts it and smd's as `smctl
# --json status` says; every problem counter of the sweep is a series with
# its key as label, equal to the JSON's; a resweep counts one heavy sweep
# more; `promtool check metrics` accepts the page; other paths are 404,
# other methods 405; with smd stopped the scrape still answers, smd_up 0.
# As root: an exporter run as another user cannot connect (smd_up 0, the
# reason logged) until an ACL opens the socket to its group, which smd then
# still refuses resweep (smd_exporter(8), ACCESS).
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
	local rc=$?
	exp_pid=
	return $rc
}
trap 'exp_stop; [ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"; sim_stop' EXIT
chmod 755 "$tmp"
$GEN ft3 4 -o "$tmp/net" 2>/dev/null
sim_start "$tmp/net" >/dev/null 2>&1
printf 'sweep_interval = 0\n' >"$tmp/conf"
smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out"
check wait_for "$tmp/out" "SA: answering" 1
ctl() { "$SMCTL" --socket "$tmp/control" "$@"; }

# exp_start LOG [RUNAS...]: the exporter on 127.0.0.1, a port the kernel
# picks; sets port from its "listening on" line. RUNAS must exec it (the
# pid is the exporter's): setpriv, not a shell function
exp_start() {
	local log=$1

	shift
	: >"$log"
	"$@" "$EXPORTER" --web.listen-address=127.0.0.1:0 --control-socket="$tmp/control" \
		--control-timeout=10 >"$log" 2>&1 &
	exp_pid=$!
	wait_for "$log" "listening on" 1 || return 1
	port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$log" | head -1)
	[ -n "$port" ]
}
# http METHOD PATH OUT: the status code on stdout, headers in OUT.h, body in OUT
http() {
	curl -s -o "$3" -D "$3.h" -w '%{http_code}' -X "$1" --max-time 60 \
		"http://127.0.0.1:$port$2"
}
# val FILE SERIES: the value of the sample SERIES (name with its labels, as written)
val() { awk -v s="$2" '$1 == s { print $2; n++ } END { exit n != 1 }' "$1"; }
get() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

# observe OUT: smctl --json status (st1.json), a scrape into OUT, smctl again
# (st2.json), until no sweep started between the two smctl answers (a trap
# may start one), so that the last sweep's figures are the scrape's too
observe() {
	for _ in $(seq 20); do
		ctl --json status >"$tmp/st1.json" || true
		[ "$(http GET /metrics "$1")" = 200 ] || return 1
		ctl --json status >"$tmp/st2.json" || true
		[ "$(get "$tmp/st1.json" 'd["sweeps"]')" = "$(get "$tmp/st2.json" 'd["sweeps"]')" ] &&
			return 0
	done
	return 1
}
check exp_start "$tmp/exp.log"
sim_run ibnetdiscover >"$tmp/ibnd" 2>/dev/null
nodes=$(grep -Ec '^(Switch|Ca)[[:space:]]' "$tmp/ibnd")
switches=$(grep -c '^Switch' "$tmp/ibnd")
ca_ports=$(grep -A100000 '^Ca' "$tmp/ibnd" | grep -c '^\[[0-9]*\]([0-9a-f]*)')
lids=$(grep -Eo '(lid|base lid) [0-9]+' "$tmp/ibnd" | awk '$NF > 0 { print $NF }' | sort -un | wc -l)

# Some SA traffic first, from another host: the SA counters are not all 0
SIM_HOST=host-0003 sim_run "$SMCTL" --json sa nodes >/dev/null
check observe "$tmp/m1"
check test "$(val "$tmp/m1" smd_sa_requests_total)" -gt 0
check grep -qi '^Content-Type: text/plain; version=0.0.4; charset=utf-8' "$tmp/m1.h"
check test "$(val "$tmp/m1" smd_up)" = 1
check test "$(val "$tmp/m1" 'smd_sm_state{state="MASTER"}')" = 1
check test "$(val "$tmp/m1" 'smd_sm_state{state="STANDBY"}')" = 0
check test "$(val "$tmp/m1" smd_subnet_up)" = 1
check test "$(val "$tmp/m1" smd_subnet_nodes)" = "$nodes"
check test "$(val "$tmp/m1" smd_subnet_switches)" = "$switches"
check test "$(val "$tmp/m1" smd_subnet_ca_ports)" = "$ca_ports"
check test "$(val "$tmp/m1" smd_subnet_lids)" = "$lids"
# The figures are smctl's: the sweeps and the last sweep's as it said them,
# the counters that move between sweeps within what it said before and after
within() {	# within VALUE KEY: JSON before <= VALUE <= JSON after
	[ "$(get "$tmp/st1.json" "$2")" -le "$1" ] && [ "$1" -le "$(get "$tmp/st2.json" "$2")" ]
}
check test "$(val "$tmp/m1" 'smd_sweeps_total{kind="heavy"}')" = "$(get "$tmp/st1.json" 'd["sweeps"]["heavy"]')"
check test "$(val "$tmp/m1" 'smd_sweeps_total{kind="light"}')" = "$(get "$tmp/st1.json" 'd["sweeps"]["light"]')"
check within "$(val "$tmp/m1" smd_smps_total)" 'd["smps"]["sent"]'
check within "$(val "$tmp/m1" smd_smps_unanswered_total)" 'd["smps"]["unanswered"]'
check within "$(val "$tmp/m1" smd_sa_requests_total)" 'd["sa_requests"]["received"]'
check within "$(val "$tmp/m1" smd_sa_requests_answered_total)" 'd["sa_requests"]["answered"]'
# The JSON rounds to 6 decimals
check test "$(get "$tmp/st1.json" 'abs(d["last_sweep"]["seconds"] - '"$(val "$tmp/m1" \
	smd_sweep_duration_seconds)"') < 1e-6')" = True

# Every problem counter, by the key the JSON gives it, with the JSON's value
same_problems() {
	python3 - "$tmp/m1" "$tmp/st1.json" <<'EOF'
import json, re, sys
m = {}
for line in open(sys.argv[1]):
    g = re.match(r'smd_sweep_problems\{problem="([a-z_]+)"\} (\d+)$', line)
    if g:
        m[g.group(1)] = int(g.group(2))
j = json.load(open(sys.argv[2]))["last_sweep"]["problem_counts"]
print("metrics:", m)
print("json:   ", j)
sys.exit(0 if m == j and len(m) > 0 else 1)
EOF
}
check same_problems

check grep -q '^# HELP smd_sweeps_total ' "$tmp/m1"
if command -v promtool >/dev/null; then
	check promtool check metrics <"$tmp/m1"
else
	echo "promtool not installed (Debian: prometheus, tools/setup-debian.sh): not checked"
fi

# A resweep: one heavy sweep more (at least: a trap may add one), as smctl says
heavy=$(val "$tmp/m1" 'smd_sweeps_total{kind="heavy"}')
check ctl resweep --heavy
check observe "$tmp/m2"
check test "$(val "$tmp/m2" 'smd_sweeps_total{kind="heavy"}')" -ge $((heavy + 1))
check test "$(val "$tmp/m2" 'smd_sweeps_total{kind="heavy"}')" = "$(get "$tmp/st1.json" 'd["sweeps"]["heavy"]')"

# A problem shows: one edge switch drops its LFT SMPs, the next sweep counts it
edge=$(awk '/^Switch/ && /edge/ { match($0, /"[^"]*"$/); print substr($0, RSTART + 1, RLENGTH - 2); exit }' "$tmp/net")
sim_console "Error \"$edge\" 100 25"
ctl resweep --heavy >/dev/null 2>&1 || true
check observe "$tmp/m1"
check test "$(val "$tmp/m1" 'smd_sweep_problems{problem="lft_errors"}')" -ge 1
check test "$(val "$tmp/m1" smd_subnet_up)" = 0
check same_problems
sim_console "Error \"$edge\" 0 25"

# HEAD: the headers of a scrape, no body; the landing page; 404; 405
check test "$(curl -s -I -o "$tmp/head" -w '%{http_code}' --max-time 60 "http://127.0.0.1:$port/metrics")" = 200
check grep -qi '^Content-Type: text/plain; version=0.0.4' "$tmp/head"
check test "$(http GET / "$tmp/root")" = 200
check grep -q 'href="metrics"' "$tmp/root"
check test "$(http GET /nope "$tmp/nf")" = 404
check test "$(http GET /metrics/x "$tmp/nf")" = 404
check test "$(http POST /metrics "$tmp/na")" = 405
check grep -qi '^Allow: GET, HEAD' "$tmp/na.h"
# The control socket's own answer, as any client gets it: the same series
check test "$(printf 'metrics\n' | python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.sendall(sys.stdin.buffer.read())
b = b""
while not b.endswith(b"\nOK\n"):
    d = s.recv(65536)
    if not d: break
    b += d
print(b.decode().splitlines()[-2])' "$tmp/control")" = "status: down"

# smd stopped: the scrape still answers, smd_up 0, and the page is still valid
check smd_stop
check test "$(http GET /metrics "$tmp/m3")" = 200
check test "$(val "$tmp/m3" smd_up)" = 0
check test "$(grep -c '^smd_' "$tmp/m3")" -eq 2
check grep -q "cannot connect to smd on $tmp/control" "$tmp/exp.log"
if command -v promtool >/dev/null; then
	check promtool check metrics <"$tmp/m3"
fi
check exp_stop

# Access (as root), smd_exporter(8)'s read-only recipe: an exporter whose
# user is in a group of its own cannot connect to the 0660 socket until an
# ACL lets that group in; then it is served, and smd still refuses that
# group's user resweep (control_group is not set)
group=users
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null && command -v setfacl >/dev/null &&
	getent group "$group" >/dev/null; then
	gid=$(getent group "$group" | cut -d: -f3)
	as_exporter=(setpriv --reuid=65534 --regid=65534 --groups="$gid")
	smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out"
	check wait_for "$tmp/out" "SA: answering" 1
	check exp_start "$tmp/exp2.log" "${as_exporter[@]}"
	check test "$(http GET /metrics "$tmp/m4")" = 200
	check test "$(val "$tmp/m4" smd_up)" = 0
	check grep -q "Permission denied (see smd_exporter(8), ACCESS)" "$tmp/exp2.log"
	check setfacl -m "g:$group:rw" "$tmp/control"
	check test "$(http GET /metrics "$tmp/m5")" = 200
	check test "$(val "$tmp/m5" smd_up)" = 1
	check grep -q "smd answers on" "$tmp/exp2.log"
	rc=0; "${as_exporter[@]}" "$SMCTL" --socket "$tmp/control" resweep >"$tmp/rs" 2>&1 || rc=$?
	check test "$rc" -eq 1
	check grep -q "permission denied: resweep changes the SM" "$tmp/rs"
	check exp_stop
	check smd_stop
else
	echo "not root, or no setpriv, setfacl or group $group: the access check is skipped"
fi
finish
