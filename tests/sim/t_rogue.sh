#!/bin/bash
# A rogue SM (issue 12): tests/sim/rogue on another host holds issm open,
# answers SMInfo as MASTER with priority 15 and sends SMInfo Set(DISABLE).
# Without sm_key the hijack works as the IBA lets it (smd warns at start):
# smd goes STANDBY, then NOT-ACTIVE, its SA stops; once the rogue is gone
# "smctl sm-enable" (logged) brings smd back as master. With sm_key the
# rogue, keyless or with the raw key, takes no part in the election, its
# DISABLE is refused (MAD status 0x001c, no key value in the answer), smd
# stays master and its SA keeps answering other hosts, and none of smd's
# own SMInfo requests ever showed the rogue the key itself. A rogue that
# computes smd's per-direction value from the right key but is not master
# may not DISABLE or HANDOVER either (IBA 14.4.1); as a master it is a
# peer: smd yields, and is disabled. A second smd with the same key
# settles as standby. Judged with sminfo and saquery from a third host, and
# the rogue's own view of the answers.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
ROGUE=${ROGUE:-${top_builddir:-$top}/tests/sim/rogue}
[ -x "$ROGUE" ] || { echo "missing $ROGUE: make check builds it" >&2; exit 99; }
tmp=$(mktemp -d)
rogue_pid=
holder_pid=
cleanup() {
	[ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null
	[ -n "$rogue_pid" ] && kill -TERM "$rogue_pid" 2>/dev/null
	[ -n "$holder_pid" ] && kill "$holder_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap 'cleanup; sim_stop' EXIT
cd "$tmp" || exit 1
$GEN ft2 4 -o net 2>/dev/null
ctl() { "$SMCTL" --socket "$tmp/control" "$@"; }
field() { sed -n "s/^$1: //p" "$2"; }
port_lid() { SIM_HOST=$1 sim_run smpquery -D portinfo 0 2>/dev/null | sed -n 's/^Lid:\.*//p'; }
# What sminfo, from a third host, says of smd
sm_said() { SIM_HOST=host-0007 sim_run sminfo "$(port_lid smhost)" 2>&1; }
# The SA answers a NodeRecord query from a third host
sa_answers() {
	SIM_HOST=host-0007 sim_run saquery >"$tmp/sa.out" 2>&1
	grep -q "NodeRecord dump" "$tmp/sa.out" || { cat "$tmp/sa.out"; return 1; }
}

# rogue_start ARGS...: the rogue on host-0002, commands through a FIFO
n_set=0
rogue_start() {
	rm -f "$tmp/rin" && mkfifo "$tmp/rin"
	sleep 100000 >"$tmp/rin" &
	holder_pid=$!
	: >"$tmp/rout"
	(exec env SIM_HOST=host-0002 LD_PRELOAD="$SIM_PRELOAD" "$ROGUE" sm "$@" \
		<"$tmp/rin" >"$tmp/rout" 2>&1) &
	rogue_pid=$!
	n_set=0
	wait_for "$tmp/rout" "^ready" 1
}
# rogue_set LID AMOD [GUID]: the rogue's SMInfo Set; prints its view of the answer
rogue_set() {
	echo "set $*" >"$tmp/rin"
	n_set=$((n_set + 1))
	wait_for "$tmp/rout" "^set:" "$n_set" && grep "^set:" "$tmp/rout" | tail -1
}
rogue_stop() {
	echo quit >"$tmp/rin"
	wait "$rogue_pid" 2>/dev/null || true
	kill "$holder_pid" 2>/dev/null || true
	wait "$holder_pid" 2>/dev/null || true
	rogue_pid= holder_pid=
}

sim_start net >/dev/null 2>&1
key=0x5ec12e7000c0ffee

# 1. No sm_key: the hijack works, and smd says at start that it would
printf 'sweep_interval = 0\n' >conf1
smd_start conf1 "$tmp/db" "$tmp/out1"
check wait_for "$tmp/out1" "subnet UP" 1
check grep -q "no sm_key in the configuration: any host that opens issm can make this SM" out1
smlid=$(port_lid smhost)
check rogue_start --priority 15
# The rogue shows up in the next election and wins it
ctl resweep --heavy >/dev/null 2>&1 || true
check wait_for "$tmp/out1" "DISCOVERING -> STANDBY\|MASTER -> STANDBY" 1
check grep -q "SM 0x[0-9a-f]* (priority 15) is master" out1
rogue_set "$smlid" 3 >set1
cat set1
check grep -q "^set: status 0x0000 state 0 " set1
check wait_for "$tmp/out1" "STANDBY -> NOT-ACTIVE: disabled by SM" 1
# NOT-ACTIVE: nobody runs the subnet on smd's side, smctl status says down (exit 1)
rc=0; ctl status >st1 || rc=$?
check test "$rc" -eq 1
check grep -qx "status: down" st1
check test "$(field state st1)" = NOT-ACTIVE
check test "$(field sa st1)" = "not answering"
check grep -q "^sm_key: none" st1
# A NOT-ACTIVE smd sweeps for nobody
rc=0; ctl resweep >/dev/null 2>&1 || rc=$?
check test "$rc" -eq 1
# The rogue goes; smctl brings smd back, and it says who asked
rogue_stop
n=$(grep -c "subnet UP" out1)
check ctl sm-enable
check wait_for "$tmp/out1" "NOT-ACTIVE -> DISCOVERING: enabled by smctl (uid [0-9]*, pid [0-9]*)" 1
check wait_for "$tmp/out1" "DISCOVERING -> MASTER" 1
check wait_for "$tmp/out1" "subnet UP" $((n + 1))
check grep -q "state 3 SMINFO_MASTER" <(sm_said)
check sa_answers
# sm-enable on a master: refused, nothing changes
rc=0; ctl sm-enable >/dev/null 2>&1 || rc=$?
check test "$rc" -eq 1
check smd_stop

# 2. sm_key set: the same rogue gets nowhere, and never sees the key
printf 'sweep_interval = 0\nsm_key = %s\n' "$key" >conf2
chmod 600 conf2
smd_start conf2 "$tmp/db" "$tmp/out2"
check wait_for "$tmp/out2" "subnet UP" 1
check test "$(grep -c "no sm_key in the configuration" out2)" -eq 0
smguid=$(SIM_HOST=smhost sim_run smpquery -D nodeinfo 0 2>/dev/null | sed -n 's/^PortGuid:\.*//p')
for rkey in 0 "$key"; do
	check rogue_start --priority 15 --key "$rkey"
	check ctl resweep --heavy
	check grep -q "SM 0x[0-9a-f]* (priority 15, MASTER) answers with another SM_Key: it takes no part in the election" out2
	ctl status >st2
	cat st2
	check test "$(field state st2)" = MASTER
	check grep -q "^sm_foreign: SM 0x[0-9a-f]* (priority 15, MASTER) answers with another SM_Key" st2
	# DISABLE refused, and the answer carries no key value
	rogue_set "$smlid" 3 >set2
	cat set2
	check grep -q "^set: status 0x001c state 3 key 0x0000000000000000" set2
	check grep -q "state 3 SMINFO_MASTER" <(sm_said)
	check sa_answers
	# What smd's requests showed the rogue: never the key itself
	echo keys >"$tmp/rin"
	rogue_set "$smlid" 0 >/dev/null
	grep "^seen key" "$tmp/rout" || true
	check grep -q "^seen key" "$tmp/rout"
	check test "$(grep -ci "^seen key 0*${key#0x}$" "$tmp/rout")" -eq 0
	rogue_stop
done
check grep -q "SMInfo Set(DISABLE) from SM 0x[0-9a-f]* (MASTER, LID [0-9]*) not obeyed: wrong SM_Key" out2
ctl status >st3
check test "$(field sminfo_refused st3)" -ge 2

# 3. smd's own key value for the right key from an SM that is not master:
# authenticated (the answer shows smd's value) but no DISABLE, no HANDOVER
check rogue_start --priority 0 --auth "$key" --state 2
rogue_set "$smlid" 3 "$smguid" >set3
rogue_set "$smlid" 1 "$smguid" >>set3
cat set3
check test "$(grep -c "^set: status 0x001c state 3 key 0x" set3)" -eq 2
check test "$(grep -c "key 0x0000000000000000" set3)" -eq 0
ctl status >st4
check test "$(field sminfo_refused st4)" -ge 4
check grep -q "state 3 SMINFO_MASTER" <(sm_said)
check sa_answers
rogue_stop

# 4. The same, as a master of priority 15: a peer. smd yields, and obeys DISABLE
check rogue_start --priority 15 --auth "$key"
ctl resweep --heavy >/dev/null 2>&1 || true
check wait_for "$tmp/out2" "MASTER -> STANDBY: SM 0x[0-9a-f]* (priority 15) is master" 1
ctl status >st5
check test "$(grep -c "^sm_foreign" st5)" -eq 0
rogue_set "$smlid" 3 "$smguid" >set4
cat set4
check grep -q "^set: status 0x0000 state 0 " set4
check wait_for "$tmp/out2" "STANDBY -> NOT-ACTIVE: disabled by SM" 1
rogue_stop
n=$(grep -c "subnet UP" out2)
check ctl sm-enable
check wait_for "$tmp/out2" "DISCOVERING -> MASTER" 1
check wait_for "$tmp/out2" "subnet UP" $((n + 1))
check sa_answers

# 5. A second smd with the same key is a peer: it settles as standby
mkdir b
printf 'sweep_interval = 0\nsm_key = %s\nsm_priority = 0\n' "$key" >b/conf
chmod 600 b/conf
(cd b && exec env LD_PRELOAD="$SIM_PRELOAD" RUNTIME_DIRECTORY="$PWD" SIM_HOST=host-0005 \
	"$SMD" --config conf --db smd.db >out 2>&1) &
b_pid=$!
check wait_for "$tmp/b/out" "DISCOVERING -> STANDBY: SM $smguid (priority 0) is master" 1
check ctl resweep --heavy
ctl status >st6
check test "$(grep -c "^sm_foreign" st6)" -eq 0
check test "$(field state st6)" = MASTER
kill -TERM "$b_pid"
wait "$b_pid" || true
check kill -0 "$smd_pid"
check smd_stop
finish
