#!/bin/bash
# smd is valgrind-clean through a whole bring-up and a lossy re-sweep
# (the simulator shim's own errors are suppressed: tests/umad2sim.supp).
. "$(dirname "$0")/common.sh"
command -v valgrind >/dev/null || { echo "valgrind not installed"; exit 77; }
if grep -q __asan_init "$SMD"; then
	echo "SKIP: $SMD is an ASan build; valgrind runs on the plain build"
	exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$GEN random --switches 12 --seed 5 -o "$tmp/net" 2>/dev/null
vg=(valgrind -q --error-exitcode=42 --leak-check=full --errors-for-leak-kinds=definite,indirect
    --show-leak-kinds=definite,indirect --suppressions="$top/tests/umad2sim.supp")

sim_start "$tmp/net" >/dev/null 2>&1
rc=0
sim_run "${vg[@]}" "$SMD" --once --db "$tmp/smd.db" >"$tmp/run1" 2>&1 || rc=$?
check test "$rc" -eq 0
check grep -q "subnet UP" "$tmp/run1"
# A second sweep with loss: the retry and read-back paths run too
first=$(awk '/^Switch/ { gsub(/"/, "", $3); print $3; exit }' "$tmp/net")
sim_console "Error \"$first\" 20"
sleep 0.2
printf 'smp_retries = 10\nsmp_timeout_ms = 50\n' >"$tmp/conf"
rc=0
sim_run "${vg[@]}" "$SMD" --once --config "$tmp/conf" --db "$tmp/smd.db" >"$tmp/run2" 2>&1 || rc=$?
check test "$rc" -eq 0
check grep -q "subnet UP" "$tmp/run2"
# smctl too
rc=0
"${vg[@]}" "${SMCTL:-$top/smd/smctl}" --db "$tmp/smd.db" lids >"$tmp/lids" 2>&1 || rc=$?
check test "$rc" -eq 0
sim_stop
[ "$t_fail" -eq 0 ] || { cat "$tmp/run1" "$tmp/run2" | grep "==" | head -40; }
finish
