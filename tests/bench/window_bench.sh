#!/bin/bash
# window_bench.sh [TOPOLOGY ARGS]   (default: ft3 16)
#
# smd's bring-up (smd --once, a fresh simulator each run) on a fabric whose
# switches drop SMPs beyond the few their VL15 buffers hold
# (tests/sim/vl15_shim.c), next to the lossless fabric, with the adaptive SMP
# window (the default) and with a fixed window. Prints numbers only: no
# verdict on time (issue 26: the bring-up with the shim should stay within
# 2x of the lossless one, where a fixed window of 32 crawls on retries).
#
#   tests/bench/window_bench.sh                  # ft3 16: 320 switches, 1024 hosts
#   RUNS=5 DEPTH=8 tests/bench/window_bench.sh ft3 16
#
# Environment:
#   SMD     smd binary (default: ./smd/smd under the repo root)
#   DEPTH   SMPs a switch holds at once under the shim (default 4)
#   RUNS    runs per mode (default 3), every mode once a round: seconds
#           are the median
#   MODES   which runs, in order (default "lossless:adaptive
#           lossless:fixed32 shim:adaptive shim:fixed32 shim:fixed4"); a
#           mode is FABRIC:WINDOW, FABRIC lossless or shim, WINDOW
#           adaptive (the defaults), fixedN (min_outstanding_smps =
#           max_outstanding_smps = N: smd's window before it adapted, or
#           OpenSM's max_wire_smps) or adaptiveN (ceiling N)
#   CHECK   1 (default): checkfabric.py after the last run of each mode
#   SM_TIMEOUT  seconds one smd --once may take (default 900)
#   BENCH_KEEP=1  keep the work dir
#
# Columns: seconds (wall, median), sweep (smd's own "subnet UP ... s",
# median), SMPs sent, timed out (tries lost: timeouts, loss reports and
# presumed losses), unanswered (given up), dropped (by the shim), up (the
# subnet came up, last run), check (checkfabric.py, last run).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SMD=${SMD:-$root/smd/smd}
DEPTH=${DEPTH:-4}
RUNS=${RUNS:-3}
CHECK=${CHECK:-1}
SM_TIMEOUT=${SM_TIMEOUT:-900}
MODES=${MODES:-lossless:adaptive lossless:fixed32 shim:adaptive shim:fixed32 shim:fixed4}
[ $# -gt 0 ] || set -- ft3 16
[ -x "$SMD" ] || { echo "window_bench: $SMD is not built" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/smdwbench.XXXXXX")
bench_cleanup() {
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "window_bench: work dir kept: $work" >&2
	else
		rm -rf "$work"
	fi
}
trap bench_cleanup EXIT

# shellcheck source=../sim/simlib.sh
. "$root/tests/sim/simlib.sh"

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }

shim="$work/vl15_shim.so"
if ! cc -shared -fPIC -O2 -o "$shim" "$root/tests/sim/vl15_shim.c" -ldl -lpthread \
	2>"$work/cc.log"; then
	echo "window_bench: cannot build vl15_shim.so:" >&2
	cat "$work/cc.log" >&2
	exit 2
fi
net="$work/fabric.net"
python3 "$root/tests/gen/topogen.py" "$@" -o "$net"

# run_mode MODE RUN
run_mode() {
	local mode=$1 run=$2 fabric=${1%%:*} window=${1#*:} d rc=0 t0 t1 n
	d="$work/${mode/:/-}.$run"
	mkdir -p "$d"
	: >"$d/conf"
	case $window in
	adaptive) ;;
	adaptive[0-9]*) echo "max_outstanding_smps = ${window#adaptive}" >>"$d/conf" ;;
	fixed[0-9]*)
		n=${window#fixed}
		printf 'max_outstanding_smps = %s\nmin_outstanding_smps = %s\n' "$n" "$n" >>"$d/conf" ;;
	*) echo "window_bench: unknown window '$window'" >&2; exit 2 ;;
	esac
	SIM_DIR="$d/sim"
	sim_start "$net" 2>>"$work/sim.log"
	t0=$(now)
	if [ "$fabric" = shim ]; then
		SIM_PRELOAD_BEFORE="$shim" VL15_SHIM_NET="$net" VL15_SHIM_DEPTH="$DEPTH" \
			VL15_SHIM_LOG="$d/shim.log" SIM_RUN_TIMEOUT=$SM_TIMEOUT \
			sim_run "$SMD" --once --config "$d/conf" --db "$d/smd.db" >"$d/sm.out" 2>&1 ||
			rc=$?
	else
		SIM_RUN_TIMEOUT=$SM_TIMEOUT \
			sim_run "$SMD" --once --config "$d/conf" --db "$d/smd.db" >"$d/sm.out" 2>&1 ||
			rc=$?
	fi
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >"$d/secs"
	echo "$rc" >"$d/rc"
	# "smd: subnet UP: ... N SMPs (T timed out, U unanswered), S s"
	sed -n 's/^smd: subnet \(UP\|NOT UP\): .* \([0-9]*\) SMPs (\([0-9]*\) timed out, \([0-9]*\) unanswered), \([0-9.]*\) s$/\2 \3 \4 \5 \1/p' \
		"$d/sm.out" | tail -n 1 >"$d/sm"
	[ -s "$d/sm" ] || echo "- - - - no" >"$d/sm"
	sed -n 's/^vl15-shim: .* dropped=\([0-9]*\) .*/\1/p' "$d/shim.log" 2>/dev/null | tail -n 1 >"$d/dropped"
	[ -s "$d/dropped" ] || echo - >"$d/dropped"
	if [ "$CHECK" = 1 ] && [ "$run" = "$RUNS" ]; then
		if timeout -k 10 1800 python3 "$root/tests/sim/checkfabric.py" "$net" \
			>"$d/check.txt" 2>&1; then
			echo PASS >"$d/check"
		else
			echo FAIL >"$d/check"
		fi
	fi
	sim_stop
}

row() { printf '%-22s %8s %8s %7s %9s %10s %7s %6s %5s\n' "$@"; }
: >"$work/table"
# Round by round, every mode in each: a shared machine's load falls on all alike
for run in $(seq 1 "$RUNS"); do
	for mode in $MODES; do
		echo "window_bench: $mode run $run/$RUNS" >&2
		run_mode "$mode" "$run"
	done
done
for mode in $MODES; do
	m=${mode/:/-}
	cat "$work/$m".*/secs | median >"$work/$m.median"
	sweep=$(awk '{ print $4 }' "$work/$m".*/sm | grep -v -- - | median)
	# SMPs, timed out, unanswered, sweep seconds, UP or NOT UP (last run)
	set -- $(cat "$work/$m.$RUNS/sm")
	row "$mode" "$(cat "$work/$m.median")" "$sweep" "$1" "$2" "$3" \
		"$(cat "$work/$m.$RUNS/dropped")" "${5:-}${6:+ $6}" \
		"$(cat "$work/$m.$RUNS/check" 2>/dev/null || echo -)" >>"$work/table"
done

echo
echo "fabric: $(sed -n 2p "$net" | sed 's/^# //')"
echo "shim: every switch holds $DEPTH SMPs at once, drops the rest (tests/sim/vl15_shim.c)"
echo "smd: adaptive = the default window ($("$SMD" -nv -c /dev/null |
	sed -n 's/^\(m[ai][xn]_outstanding_smps = [0-9]*\)$/\1/p' | paste -sd ' ' -)), $RUNS runs a mode, medians"
row mode seconds sweep SMPs "timed out" unanswered dropped up check
cat "$work/table"
base=$(cat "$work/lossless-adaptive.median" 2>/dev/null || true)
if [ -n "$base" ]; then
	for mode in $MODES; do
		[ "$mode" = lossless:adaptive ] && continue
		awk -v m="$mode" -v a="$(cat "$work/${mode/:/-}.median")" -v b="$base" \
			'BEGIN { if (b + 0 > 0) printf "%s / lossless:adaptive: %.2fx\n", m, a / b }'
	done
fi
