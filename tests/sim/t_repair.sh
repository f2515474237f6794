#!/bin/bash
# Route repair (routing_repair, issue #6: "re-route only what changed"): a
# switch-to-switch cable cut while smd runs moves only the routes that
# crossed it. Judged with the real tools alone (lftsnap.py: ibnetdiscover,
# ibroute, smpdump): every LFT entry whose old route did not cross the cut
# cable is unchanged, few entries move at all, and checkvls.py finds every
# pair routed with an acyclic channel dependency graph over the SLs the SA
# gives and the SL-to-VL tables the switches hold. An unplugged host is
# repaired the same way. Both put back, smd computes the routes afresh and
# the forwarding tables are exactly the ones of the start again. A lost
# aggregation switch, which repair alone balances badly, is routed afresh.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
tmp=$(mktemp -d)
trap 'smd_stop || true; rm -rf "$tmp"' EXIT
$GEN ft3 8 -o "$tmp/net" 2>/dev/null
snap() { python3 "$here/lftsnap.py" snap "$1"; }
# settle N: N heavy sweeps logged their routing, then one more sweep asked
# over the control socket has ended (a trap can bring a second heavy sweep)
settle() {
	wait_for "$tmp/out" "routing (" "$1" && "$SMCTL" --socket "$tmp/control" resweep >/dev/null
}

sim_start "$tmp/net" >/dev/null 2>&1
printf 'sweep_interval = 0\n' >"$tmp/conf"
smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out"
check wait_for "$tmp/out" "subnet UP" 1
check snap "$tmp/before.json"

# A core switch's cable to an aggregation switch is cut
n=$(grep -c "routing (" "$tmp/out")
sim_console 'Unlink "core-003"[2]'
check settle $((n + 1))
grep "routing (" "$tmp/out" | tail -n 1
check grep -q "routing (dfree, repaired): " "$tmp/out"
check snap "$tmp/cut.json"
check python3 "$here/lftsnap.py" diff "$tmp/before.json" "$tmp/cut.json" --cut core-003:2
python3 "$here/lftsnap.py" diff "$tmp/before.json" "$tmp/cut.json" >"$tmp/d1"
cat "$tmp/d1"
read -r compared changed <<<"$(sed -n 's/.*: \([0-9]*\) LFT entries compared, \([0-9]*\) changed.*/\1 \2/p' "$tmp/d1")"
# Something moved, and not much: under 5% of the entries
check test "${changed:-0}" -gt 0
check test "$((${changed:-0} * 20))" -lt "${compared:-0}"
if python3 "$here/checkvls.py" --smctl "$SMCTL" >"$tmp/check" 2>&1; then
	ok "after the cut: $(head -1 "$tmp/check")"
else
	bad "after the cut"; cat "$tmp/check"
fi

# A host unplugged: its LID is gone, nothing else moves
n=$(grep -c "routing (" "$tmp/out")
sim_console 'Unlink "host-0010"[1]'
check settle $((n + 1))
check snap "$tmp/host.json"
check python3 "$here/lftsnap.py" diff "$tmp/cut.json" "$tmp/host.json" --expect-same
check python3 "$here/checkfabric.py" --expect-unlinked core-003:2 --expect-missing host-0010 \
	"$tmp/net"

# Both back: something was added, the routes are computed afresh, and they
# are the ones the fabric started with
n=$(grep -c "routing (" "$tmp/out")
sim_console 'ReLink "core-003"' 'ReLink "host-0010"'
check settle $((n + 1))
check grep -q "routing: computing routes afresh: a cable was added or moved" "$tmp/out"
check snap "$tmp/after.json"
check python3 "$here/lftsnap.py" diff "$tmp/before.json" "$tmp/after.json" --expect-same

# smctl resweep --heavy recomputes even when repair would do
n=$(grep -c "routing (" "$tmp/out")
sim_console 'Unlink "core-003"[2]'
check settle $((n + 1))
n=$(grep -c "routing (dfree): " "$tmp/out")
check "$SMCTL" --socket "$tmp/control" resweep --heavy
check test "$(grep -c "routing (dfree): " "$tmp/out")" -eq $((n + 1))
check python3 "$here/checkfabric.py" --expect-unlinked core-003:2 "$tmp/net"

# An aggregation switch lost (all its cables): repaired routes would pile the
# detours onto a few links (about 360 routes on the busiest, against 212 of
# the routes just computed afresh: more than 3/2), so smd computes them
# afresh too (about 270), keeps those and says so in the log and the status
n=$(grep -c "routing (" "$tmp/out")
cmds=()
for p in 1 2 3 4 5 6 7 8; do cmds+=("Unlink \"p02-agg-01\"[$p]"); done
sim_console "${cmds[@]}"
check settle $((n + 1))
grep "routing: the repaired routes carry" "$tmp/out" | tail -n 1
grep "routing (" "$tmp/out" | tail -n 1
check grep -q "routing (dfree, afresh: repair unbalanced): " "$tmp/out"
# The status names the last sweep's routes: those, or a later sweep's (the
# traps of eight links can bring a second heavy sweep, which repairs nothing)
last=$(grep "routing (" "$tmp/out" | tail -n 1 | sed 's/.*routing (\([^)]*\)).*/\1/')
"$SMCTL" --socket "$tmp/control" status >"$tmp/status" 2>&1
check grep -qF "routing: $last" "$tmp/status"
if python3 "$here/checkvls.py" --smctl "$SMCTL" >"$tmp/check" 2>&1; then
	ok "after the switch loss: $(head -1 "$tmp/check")"
else
	bad "after the switch loss"; cat "$tmp/check"
fi
smd_stop || bad "smd exit status"
finish
