#!/bin/bash
# Deadlock freedom under the simulator, judged with the real tools only
# (checkvls.py).
#
# Default configuration (issues 4 and 14; issue 22's large fabrics are in
# t_vls_big.sh): on a 3D torus, a 2D torus, a random irregular fabric
# (dual-port HCAs, parallel cables) and a 3-level fat-tree, the tables read
# back with ibroute alone route every CA pair without a loop and their
# channel dependency graph over directed links is acyclic with every hop on
# one VL, no SL considered (checkvls.py --links): deadlock-free whatever SL
# an application sends on. smd sent no
# SL-to-VL table (the switches still hold the simulator's default), made
# every VL the ports offer operational, and the SA hands out SL 0. A QoS
# mapping (sl2vl) is written to every port pair and arbitrated.
#
# Opt-in layered routes (max_vls = 0: as many VLs as the ports offer): on
# the random fabric and a 2D torus, where layering balances better than one
# VL (a 4x4x4 torus does not: it is a 6-cube, whose dimension-ordered routes
# load every link alike on one VL), the graph over (link, VL) built from the SLs
# the SA returns and the SL-to-VL tables read back from every port is
# acyclic within 8 VLs (checkvls.py). Then a second sweep of the running
# daemon leaves the tables alone, max_vls = 1 gives routes that need no VL
# at all, and min-hop routes (cyclic on a torus) make both checks fail.
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/vlslib.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
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

# ---- the default configuration: one VL -------------------------------------
one_vl "torus3 4 4 4 2"
one_vl "torus2 8 8 2"
one_vl "random --switches 24 --seed 5"
one_vl "ft3 6"
# (Issue 22's large fabrics: t_vls_big.sh)

# A QoS mapping with one-VL routes: written to every port pair, the routes
# still deadlock-free on their own, each VL of the mapping arbitrated
spec="ft3 6"
if start "$spec" "sl2vl = 0,1,2,3,0,1,2,3,0,1,2,3,0,1,2,15
"; then
	check links
	swlid=$(first_switch)
	check tables_are "$swlid" "0|1|2|3|0|1|2|3|0|1|2|3|0|1|2|15"
	check vlarb_same "$swlid" 1 1 Low
	check grep -Eq "^\s*VL\s*:\s*0\|\s*1\|\s*2\|\s*3\|" "$tmp/vlar"
	stop
fi

# ---- opt-in layered routes --------------------------------------------------
spec="random --switches 24 --seed 5"
if start "$spec" "max_vls = 0
"; then
	grep -q "max_vls = 0: routes may be spread over" "$log" || bad "$spec: no warning"
	if python3 "$here/checkvls.py" --smctl "$SMCTL" --max-vls 8 >"$tmp/check" 2>&1 &&
	   grep -q "VLs used \[0, 1" "$tmp/check"; then
		ok "$spec (layered): $(head -1 "$tmp/check")"
	else
		bad "$spec (layered)"; cat "$tmp/check"
	fi
	stop
fi

spec="torus2 6 6 1"
if start "$spec" "max_vls = 0
"; then
	if python3 "$here/checkvls.py" --smctl "$SMCTL" --max-vls 8 >"$tmp/check" 2>&1; then
		ok "$spec (layered): $(head -1 "$tmp/check")"
	else
		bad "$spec (layered)"; cat "$tmp/check"
	fi
	# VLArbitrationTableRecords (saquery) show what the ports hold (smpquery)
	swlid=$(first_switch)
	check vlarb_same "$swlid" 1 1 Low
	check vlarb_same "$swlid" 2 3 High
	# A second sweep finds every table as it left it and sends none
	check reconfigure
	check grep -q "VL tables: 0 sent.*, 0 unchanged, [1-9][0-9]* nodes trusted" \
		<(grep "VL tables:" "$log" | tail -1)
	# One VL: the routes need no table, none is sent, every SL the SA gives is 0
	sed -i 's/^max_vls = .*/max_vls = 1/' "$tmp/smd.conf"
	check reconfigure
	check grep -q "VL tables: 0 sent" <(grep "VL tables:" "$log" | tail -1)
	if python3 "$here/checkvls.py" --smctl "$SMCTL" --max-vls 1 >"$tmp/check" 2>&1 &&
	   grep -q "VLs used \[0\]" "$tmp/check"; then
		ok "$spec after max_vls = 1: $(head -1 "$tmp/check")"
	else
		bad "$spec after max_vls = 1"; cat "$tmp/check"
	fi
	check links
	# The checkers can fail: min-hop routes on a torus have a credit loop
	printf 'sweep_interval = 0\nrouting_engine = minhop\n' >"$tmp/smd.conf"
	check reconfigure
	rc=0
	python3 "$here/checkvls.py" --smctl "$SMCTL" >"$tmp/check" 2>&1 || rc=$?
	check test "$rc" -eq 1
	check grep -q "FAIL deadlock" "$tmp/check"
	check links fail
	stop
fi
finish
