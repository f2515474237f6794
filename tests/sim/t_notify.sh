#!/bin/bash
# systemd integration without systemd (issue 6): smd's sd_notify messages
# on a stand-in notification socket (notify_listen.py). READY=1 only once
# the subnet is up, with a STATUS= that counts it; WATCHDOG=1 from the loop
# when WATCHDOG_USEC is set for smd's pid, none when it is for another;
# READY=1 after ready_timeout with a STATUS= saying why when the subnet
# cannot come up; <N> priority prefixes when stderr is the journal's.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
tmp=$(mktemp -d)
lpid=
cleanup() {
	[ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null
	[ -n "$lpid" ] && kill "$lpid" 2>/dev/null
	rm -rf "$tmp"
}
trap 'cleanup; sim_stop' EXIT
$GEN torus2 4 4 1 -o "$tmp/net" 2>/dev/null
switches=$(grep -c '^Switch' "$tmp/net")
hosts=$(grep -Ec '^(Hca|Ca)' "$tmp/net")	# one port each

# run DIR CONF WDPID: smd in DIR, sd_notify to DIR/notify (a listener writes
# DIR/notes), stderr marked as the journal's; WDPID: "self" gives smd
# WATCHDOG_PID = its own pid, a number gives that one
run() {
	local dir=$1 conf=$2 wdpid=$3
	mkdir -p "$dir"
	python3 "$here/notify_listen.py" "$dir/notify" "$dir/notes" &
	lpid=$!
	for _ in $(seq 100); do [ -S "$dir/notify" ] && break; sleep 0.05; done
	: >"$dir/out"
	(cd "$dir" && exec env LD_PRELOAD="$SIM_PRELOAD" RUNTIME_DIRECTORY="$dir" \
		NOTIFY_SOCKET="$dir/notify" WATCHDOG_USEC=1000000 \
		JOURNAL_STREAM="$(stat -c %d:%i "$dir/out")" \
		sh -c 'if [ "$0" = self ]; then WATCHDOG_PID=$$; else WATCHDOG_PID=$0; fi
			export WATCHDOG_PID; exec "$@"' "$wdpid" \
		"$SMD" --config "$conf" --db "$dir/smd.db" >>"$dir/out" 2>&1) &
	smd_pid=$!
}
stop() {
	check smd_stop
	kill "$lpid" 2>/dev/null
	wait "$lpid" 2>/dev/null || true
	lpid=
}

# 1. The subnet comes up: READY=1 after it, with the counts
sim_start "$tmp/net" >/dev/null 2>&1
printf 'sweep_interval = 0\n' >"$tmp/a.conf"
run "$tmp/a" "$tmp/a.conf" self
check wait_for "$tmp/a/notes" "READY=1" 1
# smd prints the summary before it notifies: it is there already
check grep -q "subnet UP" "$tmp/a/out"
check grep -q "^STATUS=discovering the subnet" <(grep -m1 STATUS= "$tmp/a/notes")
want="STATUS=MASTER: subnet up, $((switches + hosts)) nodes ($switches switches, $hosts CAs), "
want+="$hosts CA ports, $((switches + hosts)) LIDs; last sweep "
check grep -qF "READY=1 | $want" "$tmp/a/notes"
# WATCHDOG_USEC 1 s: the loop pings every half second or so
check wait_for "$tmp/a/notes" "^WATCHDOG=1$" 3
# Priority prefixes, no time stamps: journald adds its own
check grep -q "^<5>SM state DISCOVERING -> MASTER" "$tmp/a/out"
check grep -q "^<6>control socket $tmp/a/control" "$tmp/a/out"
check test "$(grep -Ec '^[0-9:.]+ smd\[' "$tmp/a/out")" -eq 0
# A state change after a sweep shows in STATUS= too (a heavy sweep: a new
# sweep time, or the same line, which smd does not send twice)
"$SMCTL" --socket "$tmp/a/control" resweep --heavy >/dev/null
stop
check grep -q "^STOPPING=1" "$tmp/a/notes"
check test "$(grep -c "READY=1" "$tmp/a/notes")" -eq 1
cat "$tmp/a/notes" | sort | uniq -c | sort -rn | head -5
sim_stop

# 2. The subnet cannot come up (one switch drops every LinearForwardingTable
# SMP, attribute 25): READY=1 after ready_timeout, STATUS= says why; then
# the switch answers again and the next sweep brings the subnet up
sim_start "$tmp/net" >/dev/null 2>&1
sim_console 'Error "sw-1-1" 100 25'
printf 'sweep_interval = 1\nready_timeout = 2\n' >"$tmp/b.conf"
# WATCHDOG_PID names another process: smd must not ping
run "$tmp/b" "$tmp/b.conf" $$
check wait_for "$tmp/b/notes" "READY=1" 1
grep "READY=1" "$tmp/b/notes"
check grep -q "READY=1 | STATUS=subnet not up after 2 s: MASTER: subnet NOT up, .*LFT error" \
	"$tmp/b/notes"
check grep -q "^<4>the subnet is not up 2 s after start" "$tmp/b/out"
rc=0; "$SMCTL" --socket "$tmp/b/control" status >"$tmp/b/status" || rc=$?
check test "$rc" -eq 1
check grep -q "^subnet: NOT up" "$tmp/b/status"
check grep -qx "status: down" "$tmp/b/status"
check grep -q "^problem: LFT block 0 of sw-1-1" "$tmp/b/status"
sim_console 'Error "sw-1-1" 0 25'
check wait_for "$tmp/b/out" "subnet UP" 1
check wait_for "$tmp/b/notes" "^STATUS=MASTER: subnet up" 1
stop
check test "$(grep -c "READY=1" "$tmp/b/notes")" -eq 1
check test "$(grep -c "WATCHDOG=1" "$tmp/b/notes")" -eq 0
finish
