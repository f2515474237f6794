#!/bin/bash
# capture_bench.sh [TOPOLOGY ARGS]   (default: ft3 16)
#
# Sweep time of smd with the MAD capture off and on, on the same fabric:
# each run is a fresh simulator and one "smd --once"; the modes alternate
# run by run so that drift hits both alike. Prints, per mode, smd's own
# sweep time (the "N s" of its summary line: median, mean with its standard
# error, spread), the wall time of the whole smd process (mean, standard
# error), the median CPU time smd used (all its threads, user + system), the
# capture's size, and the ratios of the means to "off". smd prints its sweep
# time to 10 ms, about 3% of a k=16 sweep: a median moves in such steps, the
# mean of many runs resolves finer; under the simulator runs vary by +-30%,
# so use RUNS of 41 or more to see a few percent.
#
#   tests/bench/capture_bench.sh
#   RUNS=21 tests/bench/capture_bench.sh ft3 16
#   MODES="off on trap" tests/bench/capture_bench.sh ft2 8
#
# Environment: SMD (default ./smd/smd), RUNS (default 11 per mode), MODES
# (default "off on"; "trap" = capture_classes = trap: the hook runs for
# every MAD but records next to nothing; "base" = the binary SMD_BASE, e.g.
# smd built from an older commit, without capture), CAPTURE_DIR (where
# captures go, default the work dir), BENCH_KEEP=1 keeps the work dir.
# CPU times need GNU time (/usr/bin/time, Debian package "time").
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SMD=${SMD:-$root/smd/smd}
RUNS=${RUNS:-11}
MODES=${MODES:-off on}
[ $# -gt 0 ] || set -- ft3 16
[ -x "$SMD" ] || { echo "capture_bench: $SMD is not built" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/smdcapbench.XXXXXX")
CAPTURE_DIR=${CAPTURE_DIR:-$work}
bench_cleanup() {
	if [ -n "${BENCH_KEEP:-}" ]; then echo "capture_bench: kept $work" >&2; else rm -rf "$work"; fi
}
trap bench_cleanup EXIT

# shellcheck source=../sim/simlib.sh
. "$root/tests/sim/simlib.sh"

net="$work/fabric.net"
python3 "$root/tests/gen/topogen.py" "$@" -o "$net" 2>/dev/null

timer=()
[ -x /usr/bin/time ] && timer=(/usr/bin/time -f "%U %S" -o)

run_one() {
	local mode=$1 n=$2 d="$work/$1.$2" args=() smd=$SMD
	mkdir -p "$d"
	case $mode in
	off) ;;
	base) smd=${SMD_BASE:?MODES has base: set SMD_BASE} ;;
	on) args=(--capture "$CAPTURE_DIR/cap.$n.pcap") ;;
	trap)
		printf 'capture = %s\ncapture_classes = trap\n' "$CAPTURE_DIR/cap.$n.pcap" >"$d/conf"
		args=(--config "$d/conf") ;;
	*) echo "capture_bench: unknown mode $mode" >&2; exit 2 ;;
	esac
	SIM_DIR="$d/sim"
	sim_start "$net" 2>/dev/null
	date +%s.%N >"$d/t0"
	(cd "$d" && sim_run ${timer[@]+"${timer[@]}" "$d/time"} "$smd" --once --db "$d/smd.db" \
		"${args[@]}") >"$d/out" 2>&1 ||
		{ echo "capture_bench: smd failed ($mode run $n):" >&2; tail -n 5 "$d/out" >&2; }
	date +%s.%N >"$d/t1"
	sim_stop
	awk -v a="$(cat "$d/t0")" -v b="$(cat "$d/t1")" 'BEGIN { printf "%.6f\n", b - a }' >"$d/wall"
	# "..., 0.42 s" at the end of the summary line
	sed -n 's/^smd: subnet .* \([0-9.]*\) s$/\1/p' "$d/out" | tail -n 1 >"$d/secs"
	[ -f "$d/time" ] && awk 'NF == 2 { print $1 + $2 }' "$d/time" >"$d/cpu"
	if [ -f "$CAPTURE_DIR/cap.$n.pcap" ]; then
		stat -c %s "$CAPTURE_DIR/cap.$n.pcap" >"$d/bytes"
		rm -f "$CAPTURE_DIR/cap.$n.pcap"
	fi
}

echo "capture_bench: $(sed -n 2p "$net" | sed 's/^# //'), $RUNS runs per mode ($MODES)" >&2
for n in $(seq 1 "$RUNS"); do
	for mode in $MODES; do
		run_one "$mode" "$n"
	done
	printf '.' >&2
done
echo >&2

stats() {	# median min max mean standard-error of the numbers on stdin
	sort -g | awk '{ v[NR] = $1; s += $1; q += $1 * $1 } END {
		if (!NR) { print "- - - - -"; exit }
		m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
		mean = s / NR
		var = NR > 1 ? (q - NR * mean * mean) / (NR - 1) : 0
		printf "%.3f %.3f %.3f %.4f %.4f\n", m, v[1], v[NR], mean, sqrt(var > 0 ? var : 0) / sqrt(NR) }'
}

printf '%-5s | %-32s | %-16s | %8s | %7s\n' "" "sweep s: median mean+-se min-max" \
	"wall s: mean+-se" "CPU s" "capture"
declare -A mean se wmean wse cpu
for mode in $MODES; do
	read -r m lo hi mn e < <(cat "$work/$mode".*/secs | stats)
	read -r _ _ _ wm we < <(cat "$work/$mode".*/wall | stats)
	read -r c _ _ _ _ < <(cat "$work/$mode".*/cpu 2>/dev/null | stats)
	mean[$mode]=$mn se[$mode]=$e wmean[$mode]=$wm wse[$mode]=$we cpu[$mode]=$c
	mb=$(cat "$work/$mode".*/bytes 2>/dev/null | awk '{ s += $1; n++ } END {
		if (n) printf "%.1f MB", s / n / 1048576; else print "-" }')
	printf '%-5s | %5s %6s+-%-6s %5s-%-5s | %6s+-%-7s | %8s | %7s\n' "$mode" "$m" "$mn" "$e" \
		"$lo" "$hi" "$wm" "$we" "$c" "$mb"
done
for mode in $MODES; do
	[ "$mode" = off ] && continue
	[ -n "${mean[off]:-}" ] || break
	awk -v a="${mean[$mode]}" -v ea="${se[$mode]}" -v b="${mean[off]}" -v eb="${se[off]}" \
	    -v wa="${wmean[$mode]}" -v wea="${wse[$mode]}" -v wb="${wmean[off]}" -v web="${wse[off]}" \
	    -v ca="${cpu[$mode]}" -v cb="${cpu[off]}" -v m="$mode" '
	function rel(x, ex, y, ey,   r) {	# ratio - 1 in %, and its standard error
		r = x / y
		return sprintf("%+.1f%% +-%.1f", (r - 1) * 100, r * sqrt((ex / x) ^ 2 + (ey / y) ^ 2) * 100)
	}
	BEGIN {
		printf "%s vs off: sweep time %s, wall %s", m, rel(a, ea, b, eb), rel(wa, wea, wb, web)
		if (cb + 0 > 0) printf ", CPU (median) %+.1f%%", (ca / cb - 1) * 100
		printf "\n" }'
done
