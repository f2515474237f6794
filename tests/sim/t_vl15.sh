#!/bin/bash
# Issue 26, acceptance 6 in small: switches that drop SMPs beyond the few
# their VL15 buffers hold (tests/sim/vl15_shim.c, as real switches: VL15 has
# no flow control) and smd's SMP window, which adapts. On the 3-level
# fat-tree with k=8 (80 switches, 128 hosts), every switch holding 4 SMPs
# (smd's floor): the subnet comes up, checkfabric.py finds every port ACTIVE
# and every route right, the shim did drop SMPs (the window had to learn),
# no switch ever held more than 4, and smctl status shows the window, its
# shrinks and the SMPs presumed lost, in text and JSON alike. Nothing here
# is about time: tests/bench/window_bench.sh measures it at k=16.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
tmp=$(mktemp -d)
trap '[ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"; sim_stop' EXIT
depth=4
cc -shared -fPIC -O2 -o "$tmp/vl15_shim.so" "$here/vl15_shim.c" -ldl -lpthread ||
	{ bad "building the shim"; finish; }
$GEN ft3 8 -o "$tmp/net" 2>/dev/null
sim_start "$tmp/net" >/dev/null 2>&1
printf 'sweep_interval = 0\n' >"$tmp/conf"
SIM_PRELOAD="$tmp/vl15_shim.so:$SIM_PRELOAD" VL15_SHIM_NET="$tmp/net" VL15_SHIM_DEPTH=$depth \
	VL15_SHIM_LOG="$tmp/shim.log" smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out"
check wait_for "$tmp/out" "subnet UP" 1
grep "subnet UP" "$tmp/out"
ctl() { "$SMCTL" --socket "$tmp/control" "$@"; }
# get FILE EXPR: a Python expression over the JSON object d of FILE
get() { python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"; }

ctl status >"$tmp/st.txt" || true
ctl --json status >"$tmp/st.json" || true
grep '^smp_' "$tmp/st.txt"
check grep -qx "status: ok" "$tmp/st.txt"
# "smp_window: SIZE (floor 4, ceiling 64, known good K; ...)"
size=$(sed -n 's/^smp_window: \([0-9]*\) (floor 4, ceiling 64, known good \([0-9]*\);.*/\1/p' "$tmp/st.txt")
check test -n "$size"
check test "${size:-0}" -ge 4 -a "${size:-99}" -le 64
shrinks=$(sed -n 's/^smp_window_shrinks: \([0-9]*\).*/\1/p' "$tmp/st.txt")
check test "${shrinks:-0}" -ge 1
presumed=$(sed -n 's/^smp_presumed_lost: \([0-9]*\) .*/\1/p' "$tmp/st.txt")
check test "${presumed:-0}" -ge 1
# The JSON says the same (the window may have moved in between: not its size)
check test "$(get "$tmp/st.json" 'd["smp_window"]["min"], d["smp_window"]["max"], d["smp_window"]["fixed"]')" = "(4, 64, False)"
check test "$(get "$tmp/st.json" 'd["smp_window"]["shrinks"] >= 1')" = True
check test "$(get "$tmp/st.json" 'd["smp_window"]["last_shrink_ago"] >= 0')" = True
check test "$(get "$tmp/st.json" 'd["smp_window"]["presumed_lost"] >= '"${presumed:-1}")" = True
check test "$(get "$tmp/st.json" '4 <= d["smp_window"]["size"] <= d["smp_window"]["known_good"] + 1 <= 65')" = True
# Every SMP was answered in the end, and the loop saw losses
check grep -Eq "SMPs \([1-9][0-9]* timed out, 0 unanswered\)" "$tmp/out"
check smd_stop

# The shim's summary (written at smd's exit): it dropped, and held no more than it may
cat "$tmp/shim.log"
dropped=$(sed -n 's/^vl15-shim: .* dropped=\([0-9]*\) .*/\1/p' "$tmp/shim.log")
held=$(sed -n 's/^vl15-shim: .* max_held=\([0-9]*\) .*/\1/p' "$tmp/shim.log")
check test "${dropped:-0}" -ge 1
check test "${held:-99}" -le "$depth"

# The fabric as the real tools see it: every port ACTIVE, every route right
check python3 "$here/checkfabric.py" "$tmp/net"
sim_stop
finish
