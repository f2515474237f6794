# Helpers of the VL tests (t_vls.sh, t_vls_big.sh), sourced after
# common.sh; they use $tmp (the test's work directory) and SMCTL.

# ibsim's SL-to-VL table before any SM writes one (sim_net.c default_sl2vl)
SIM_SL2VL="0|1|2|3|4|5|6|7|8|9|10|11|12|13|14|7"

# first_switch: LID of a switch, from ibnetdiscover
first_switch() {
	sim_run ibnetdiscover 2>/dev/null | sed -n 's/^Switch.*base port 0 lid \([0-9]*\) .*/\1/p' |
		head -1
}

# tables_are LID TABLE: every SL-to-VL table of switch LID's ports 1-3, and
# the SM port's, hold TABLE ("0|1|..."), and its cabled ports operate VL0-7
# (all they offer)
tables_are() {
	local lid=$1 want=$2 bad=0 out
	for o in 1 2 3; do
		out=$(sim_run smpquery sl2vl "$lid" "$o" 2>/dev/null | tr -d ' ') || return 1
		echo "$out" | grep -q "^ports:in" || return 1
		# (in = out: no packet takes that pair, no table is written)
		if echo "$out" | grep "^ports:in" | grep -v "^ports:in$o,out$o:" |
		   grep -vq "|$want|"; then
			echo "switch $lid out $o: $(echo "$out" | grep "^ports:in" | head -2)"
			bad=1
		fi
		sim_run smpquery portinfo "$lid" "$o" 2>/dev/null | grep -q "^OperVLs:\.*VL0-7$" ||
			{ echo "switch $lid port $o: not VL0-7"; bad=1; }
	done
	sim_run smpquery -D sl2vl 0 2>/dev/null | tr -d ' ' | grep -q "|$want|" ||
		{ echo "SM port"; bad=1; }
	return $bad
}

# sl0: a few PathRecords, all on SL 0
sl0() {
	local lids
	lids=$(sim_run ibnetdiscover 2>/dev/null | sed -n 's/.* lid \([0-9]*\) .*/\1/p' | sort -un |
		head -5)
	for l in $lids; do
		sim_run saquery PR --dlid "$l" 2>/dev/null | grep -Eq "^\s*sl\.+(0x0|0)$" ||
			return 1
	done
}

start() {
	local spec=$1 conf=$2
	net="$tmp/$(echo "$spec" | tr -c 'a-z0-9\n' '_').net"
	log="$tmp/smd.log"
	# shellcheck disable=SC2086
	$GEN $spec -o "$net" 2>/dev/null
	sim_start "$net" >/dev/null 2>&1 || { bad "$spec: simulator did not start"; return 1; }
	printf 'sweep_interval = 0\n%s' "$conf" >"$tmp/smd.conf"
	rm -f "$tmp/smd.db"
	smd_start "$tmp/smd.conf" "$tmp/smd.db" "$log"
	if ! wait_for "$log" "SA: answering" 1; then
		bad "$spec: subnet not up"; tail -5 "$log"; smd_stop || true; sim_stop; return 1
	fi
	grep "routing (" "$log" | tail -1
}

stop() {
	smd_stop || bad "$spec: smd exit status"
	sim_stop
}

# links: checkvls --links passes (or, with "fail", fails on a cycle)
links() {
	local rc=0
	python3 "$here/checkvls.py" --links >"$tmp/check" 2>&1 || rc=$?
	if [ "${1:-}" = fail ]; then
		[ "$rc" -eq 1 ] && grep -q "FAIL deadlock" "$tmp/check"
	else
		[ "$rc" -eq 0 ] || { cat "$tmp/check"; return 1; }
		head -1 "$tmp/check"
	fi
}

# one_vl SPEC: the default configuration (one VL) on fabric SPEC, judged
# with ibroute (checkvls --links), smpquery and saquery
one_vl() {
	spec=$1
	start "$spec" "" || return
	check links
	grep -q "VL tables: 0 sent" <(grep "VL tables:" "$log" | tail -1) ||
		bad "$spec: smd says it sent VL tables"
	check tables_are "$(first_switch)" "$SIM_SL2VL"
	check sl0
	stop
}
