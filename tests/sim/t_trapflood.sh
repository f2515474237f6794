#!/bin/bash
# A trap flood (issue 12): tests/sim/rogue on a host sends 300 LID-routed
# Trap MADs of every kind of number (link, error, capability, key, vendor,
# nonsense) to the SM's LID within 15 s, on a fabric where nothing
# changes. Before issue 12 that gave 20 heavy sweeps; now at most 2 (the
# acceptance bound), the host is reported as a flooder, and a real change
# afterwards (a cable cut, trap 128 from the switches) still brings a heavy
# sweep at once. With trap_flood_action = disable the switch port the
# flooding host hangs off is disabled, as smpquery reads it back.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
ROGUE=${ROGUE:-${top_builddir:-$top}/tests/sim/rogue}
[ -x "$ROGUE" ] || { echo "missing $ROGUE: make check builds it" >&2; exit 99; }
tmp=$(mktemp -d)
cleanup_smd() { [ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null; rm -rf "$tmp"; }
trap 'cleanup_smd; sim_stop' EXIT
cd "$tmp" || exit 1
$GEN ft2 4 -o net 2>/dev/null
ctl() { "$SMCTL" --socket "$tmp/control" "$@"; }
field() { sed -n "s/^$1: //p" "$2"; }
port_lid() { SIM_HOST=$1 sim_run smpquery -D portinfo 0 2>/dev/null | sed -n 's/^Lid:\.*//p'; }
heavy() { ctl status | sed -n 's/^sweeps: \([0-9]*\) heavy.*/\1/p'; }

sim_start net >/dev/null 2>&1
printf 'sweep_interval = 10\n' >conf
smd_start conf "$tmp/db" "$tmp/out"
check wait_for "$tmp/out" "subnet UP" 1
smlid=$(port_lid smhost)
flooder=$(port_lid host-0003)
h0=$(heavy)
check test "$h0" -ge 1

# 300 traps in 15 s from host-0003
SIM_HOST=host-0003 sim_run "$ROGUE" traps "$smlid" 300 15 >flood.out 2>&1
cat flood.out
check grep -q "^sent 300" flood.out
# One more round: a deferred sweep, if any were still due, runs now
ctl resweep >/dev/null 2>&1 || true
ctl status >st1
h1=$(field sweeps st1 | sed 's/ heavy.*//')
echo "heavy sweeps: $h0 before the flood, $h1 after"
check test "$((h1 - h0))" -le 2
# (the simulator may still carry the last few when smctl asks)
check test "$(field traps st1)" -ge 290
check grep -q "^trap_flooder: LID $flooder, host-0003 port 1" st1
check grep -q "trap flood: host-0003 port 1 (GUID 0x[0-9a-f]*) (LID $flooder) sent more than 30 traps in 10 s" out
check test "$(field subnet st1)" = up
check kill -0 "$smd_pid"

# A real change after the flood: still a heavy sweep at once
n=$(grep -c "heavy sweep: [0-9]* trap" out || true)
sim_console 'Unlink "leaf-00"[3]'
check wait_for "$tmp/out" "heavy sweep: [0-9]* trap" $((n + 1))
check smd_stop

# trap_flood_action = disable: the flooder's switch port goes Disabled
printf 'sweep_interval = 0\ntrap_flood_action = disable\n' >conf2
smd_start conf2 "$tmp/db" "$tmp/out2"
check wait_for "$tmp/out2" "subnet UP" 1
SIM_HOST=host-0005 sim_run "$ROGUE" traps "$smlid" 40 2 >flood2.out 2>&1
check grep -q "^sent 40" flood2.out
check wait_for "$tmp/out2" "trap flood: port [0-9]* of switch 0x[0-9a-f]* disabled" 1
sw=$(sed -n 's/.*trap flood: port \([0-9]*\) of switch 0x\([0-9a-f]*\) disabled.*/\2 \1/p' out2)
sw=$(echo "$sw" | sed "s/^0*//")
echo "smd disabled: switch port $sw"
# Where host-0005 is cabled, from the topology file: switch name and port
read -r leaf where < <(awk '/^Switch/ { sw = $0; sub(/^[^"]*"/, "", sw); sub(/".*/, "", sw) }
	/"host-0005"\[1\]/ && sw != "" { match($0, /^\[[0-9]+\]/)
	print sw, substr($0, 2, RLENGTH - 2) }' net)
sim_run ibnetdiscover >ibnd 2>/dev/null
line=$(grep "^Switch.*# \"$leaf\" " ibnd)
swlid=$(echo "$line" | sed 's/.* lid \([0-9]*\) .*/\1/')
check test "$sw" = "$(echo "$line" | sed 's/^Switch[^"]*"S-\([0-9a-f]*\)".*/\1/' |
	sed 's/^0*//') $where"
sim_run smpquery portinfo "$swlid" "$where" >pi 2>/dev/null || true
grep -E "LinkState|PhysLinkState" pi
check grep -q "^PhysLinkState:\.*Disabled" pi
check smd_stop
finish
