#!/bin/bash
# Issue 4's acceptance under the simulator: on a 3D torus, a 2D torus, a
# random irregular fabric (dual-port HCAs, parallel cables) and a 3-level
# fat-tree, smd (default engine list) routes every CA pair, and the channel
# dependency graph over (link, VL) built from the SLs its SA returns and the
# SL-to-VL tables read back from every port is acyclic, within 8 VLs
# (checkvls.py: real tools only). Then a second sweep of the running daemon
# leaves the tables alone, max_vls = 1 reprograms them to one VL, and
# min-hop routes (cyclic on a torus) make the checker fail.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/smd/smctl}
tmp=$(mktemp -d)
trap 'smd_stop || true; rm -rf "$tmp"' EXIT

# vlarb_same LID PORT BLOCK Low|High: the SA's record (block 1 or 3) and the
# port's table read by smpquery agree on the port's VLArbCap entries
vlarb_same() {
	sim_run saquery VLAR "$1/$2/$3" >"$tmp/vlar" 2>/dev/null || return 1
	sim_run smpquery vlarb "$1" "$2" >"$tmp/vlarb" 2>/dev/null || return 1
	python3 - "$tmp/vlar" "$tmp/vlarb" "$4" <<'PY'
import re, sys
sa = open(sys.argv[1]).read()
port = open(sys.argv[2]).read()
# saquery: "VL    : 0| 1|..." and "Weight:64|64|..." (two half-blocks of 16 each)
vl = [int(x) for l in re.findall(r"^\s*VL\s*:(.*)$", sa, re.M) for x in l.split("|") if x.strip()]
wt = [int(x) for l in re.findall(r"^\s*Weight:(.*)$", sa, re.M) for x in l.split("|") if x.strip()]
# smpquery: "# Low priority ..." then "VL    : |0x0 |..." and "WEIGHT: |0x40|..."
sect = port.split("# %s priority" % sys.argv[3])[1].split("#")[0]
pvl = [int(x, 16) for x in re.search(r"^VL\s*:(.*)$", sect, re.M).group(1).split("|") if x.strip()]
pwt = [int(x, 16) for x in re.search(r"^WEIGHT:(.*)$", sect, re.M).group(1).split("|") if x.strip()]
n = len(pvl)
print("SA:   VL %s weight %s\nport: VL %s weight %s" % (vl[:n], wt[:n], pvl, pwt))
sys.exit(0 if n and vl[:n] == pvl and wt[:n] == pwt and any(pwt) == (sys.argv[3] == "Low") else 1)
PY
}

# reconfigure: smd reads its configuration again (SIGHUP), then a heavy
# sweep that starts after that is asked for and waited for over the control
# socket: its answer comes once the sweep ended and the SA has the new model
reconfigure() {
	local n
	n=$(grep -c "configuration .* read again" "$log")
	kill -HUP "$smd_pid"
	wait_for "$log" "configuration .* read again" $((n + 1)) || return 1
	"$SMCTL" --socket "$tmp/control" resweep --heavy >"$tmp/resweep" 2>&1
}

# run_one SPEC MAX_VLS: start the fabric and smd, check, stop both
run_one() {
	local spec=$1 vls=$2 net log
	net="$tmp/$(echo "$spec" | tr -c 'a-z0-9\n' '_').net"
	log="$tmp/smd.log"
	# shellcheck disable=SC2086
	$GEN $spec -o "$net" 2>/dev/null
	sim_start "$net" >/dev/null 2>&1 || { bad "$spec: simulator did not start"; return; }
	printf 'sweep_interval = 0\nmax_vls = %s\n' "$vls" >"$tmp/smd.conf"
	rm -f "$tmp/smd.db"
	smd_start "$tmp/smd.conf" "$tmp/smd.db" "$log"
	if ! wait_for "$log" "SA: answering" 1; then
		bad "$spec: subnet not up"; tail -5 "$log"; smd_stop || true; sim_stop; return
	fi
	grep "routing (" "$log" | tail -1
	if python3 "$here/checkvls.py" --smctl "$SMCTL" --max-vls "${vls/#0/8}" >"$tmp/check" \
	   2>&1; then
		ok "$spec ($vls VLs at most): $(head -1 "$tmp/check")"
	else
		bad "$spec ($vls VLs at most)"; cat "$tmp/check"
	fi
	if [ "$spec" = "torus2 6 6 1" ]; then
		# VLArbitrationTableRecords (saquery) show what the ports hold (smpquery)
		local swlid
		swlid=$(sim_run ibnetdiscover 2>/dev/null | sed -n 's/^Switch.*base port 0 lid \([0-9]*\) .*/\1/p' |
			head -1)
		check vlarb_same "$swlid" 1 1 Low
		check vlarb_same "$swlid" 2 3 High
		# A second sweep finds every table as it left it and sends none
		check reconfigure
		check grep -q "VL tables: 0 sent, 0 unchanged, [1-9][0-9]* nodes trusted" \
			<(grep "VL tables:" "$log" | tail -1)
		# One VL: every table is rewritten to VL 0, and the fabric agrees
		sed -i 's/^max_vls = .*/max_vls = 1/' "$tmp/smd.conf"
		check reconfigure
		if python3 "$here/checkvls.py" --smctl "$SMCTL" --max-vls 1 >"$tmp/check" 2>&1 &&
		   grep -q "VLs used \[0\]" "$tmp/check"; then
			ok "$spec after max_vls = 1: $(head -1 "$tmp/check")"
		else
			bad "$spec after max_vls = 1"; cat "$tmp/check"
		fi
		# The checker can fail: min-hop routes on a torus have a credit loop
		printf 'sweep_interval = 0\nrouting_engine = minhop\n' >"$tmp/smd.conf"
		check reconfigure
		rc=0
		python3 "$here/checkvls.py" --smctl "$SMCTL" >"$tmp/check" 2>&1 || rc=$?
		check test "$rc" -eq 1
		check grep -q "FAIL deadlock" "$tmp/check"
	fi
	smd_stop || bad "$spec: smd exit status"
	sim_stop
}

run_one "torus2 6 6 1" 0
run_one "torus3 4 4 4 2" 0
run_one "random --switches 24 --seed 5" 0
run_one "ft3 6" 0
finish
