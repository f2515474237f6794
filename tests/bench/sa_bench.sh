#!/bin/bash
# tests/bench/sa_bench.sh [TOPOLOGY ARGS]: how fast smd's SA answers
# PathRecords, side by side with opensm's SA and with the simulator's
# ceiling, on the same simulated fabric (default ft3 16), with the same
# client (smctl sa bench: every answer checked). Prints numbers only.
#
# Three private fabrics run at once: one with smd, one with opensm, one
# where smd brought the subnet up and then tests/bench/sa_echo (an SA that
# answers every Get at once with a precomputed record, no model) took its
# place. Every measurement is taken ROUNDS times, the three interleaved
# (so that load from others hits all three alike); the medians come last.
#   get1, get32   PathRecord Gets for random LID pairs, 1 and 32 in flight
#   src1, src32   from one host (SLID and SGID of host-0001) to every LID,
#                 one Get each, 1 and 32 in flight: time per full set
#   table         one PathRecord GetTable of that host to every LID (RMPP,
#                 reassembled and checked by smctl): time per table
#
# Variables: SMD, SMCTL, SA_ECHO (binaries), ROUNDS (5), REQ1 (10000 Gets
# at 1 in flight), REQ32 (200000 at 32), SETS1 (5 and SETS32 (20) full sets
# of one source's Gets), TABLES (50 GetTables).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
top=$(cd "$here/.." && pwd)
SMD=${SMD:-$top/smd/smd}
SMCTL=${SMCTL:-$top/ctl/smctl}
SA_ECHO=${SA_ECHO:-$(dirname "$SMCTL")/../tests/bench/sa_echo}
ROUNDS=${ROUNDS:-5}
REQ1=${REQ1:-10000}
REQ32=${REQ32:-200000}
SETS1=${SETS1:-5}
SETS32=${SETS32:-20}
TABLES=${TABLES:-50}
spec=("$@")
[ ${#spec[@]} -gt 0 ] || spec=(ft3 16)
work=$(mktemp -d)
pids=()
cleanup() {
	touch "$work/stop"
	for p in "${pids[@]}"; do
		wait "$p" 2>/dev/null || true
	done
	rm -rf "$work"
}
trap cleanup EXIT
python3 "$top/tests/gen/topogen.py" "${spec[@]}" -o "$work/net" 2>/dev/null
nlids=$(grep -cE '^(Switch|Hca)' "$work/net" || true)

# fabric NAME: a private ibsim with its SA, kept up until $work/stop exists
fabric() {
	local name=$1 d=$work/$1 pid
	mkdir -p "$d"
	(
		trap - EXIT	# the parent's cleanup must not run when this ends
		# shellcheck source=../sim/simlib.sh
		. "$top/tests/sim/simlib.sh"
		SIM_DIR=$d/sim sim_start "$work/net" >/dev/null 2>&1
		cd "$d"
		case $name in
		opensm)
			mkdir -p osm
			# No periodic sweep, as smd runs here (sweep_interval = 0)
			OSM_CACHE_DIR=$d/osm OSM_TMP_DIR=$d/osm env LD_PRELOAD="$SIM_PRELOAD" \
				opensm -s 0 -F /dev/null -f "$d/osm/opensm.log" -e \
				--dump_files_dir "$d/osm" >"$d/sm.log" 2>&1 &
			;;
		*)
			printf 'sweep_interval = 0\n' >"$d/smd.conf"
			env LD_PRELOAD="$SIM_PRELOAD" "$SMD" --config "$d/smd.conf" \
				--db "$d/smd.db" >"$d/sm.log" 2>&1 &
			;;
		esac
		pid=$!
		# The SA is ready once it answers a single NodeRecord Get for LID 1
		ready() {
			for _ in $(seq 600); do
				sim_run "$SMCTL" sa nodes --lid 1 --get --count >/dev/null 2>&1 &&
					return 0
				sleep 0.2
			done
			return 1
		}
		if ready && [ "$name" = ceiling ]; then
			# The subnet stays as smd left it; sa_echo takes the SM's place
			kill -TERM "$pid"
			wait "$pid" 2>/dev/null || true
			env LD_PRELOAD="$SIM_PRELOAD" "$SA_ECHO" >"$d/echo.log" 2>&1 &
			pid=$!
			ready || true
		fi
		printf '%s\n' "$IBSIM_SOCKNAME" >"$d/sock"
		printf '%s\n' "$SIM_PRELOAD" >"$d/preload"
		SIM_HOST=host-0001 sim_run ibaddr >"$d/src" 2>/dev/null || true
		touch "$d/ready"
		while [ ! -e "$work/stop" ]; do
			sleep 0.2
		done
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		sim_stop
	) &
	pids+=($!)
}

# client NAME ARGS...: smctl as a client of fabric NAME
client() {
	local d=$work/$1
	shift
	(cd "$d" && IBSIM_SOCKNAME=$(cat "$d/sock") timeout -k 10 600 \
		env LD_PRELOAD="$(cat "$d/preload")" "$SMCTL" "$@" 2>/dev/null) || true
}

# The seconds of the last line of smctl sa bench, or "-" when not all were right
secs() {
	awk '/PathRecord/ && / 0 wrong, 0 unanswered/ && !/^PathRecord GetTables: 0 correct/ {
		for (i = 1; i <= NF; i++) if ($(i + 1) == "s,") s = $i } END { print s ? s : "-" }'
}

names=(smd)
if command -v opensm >/dev/null; then
	names+=(opensm)
else
	echo "opensm not installed: its column stays empty"
fi
if [ -x "$SA_ECHO" ]; then
	names+=(ceiling)
else
	echo "no $SA_ECHO (make check builds it): no ceiling"
fi
for n in "${names[@]}"; do
	fabric "$n"
done
for n in "${names[@]}"; do
	for _ in $(seq 3000); do
		[ ! -e "$work/$n/ready" ] || break
		sleep 0.2
	done
	[ -e "$work/$n/ready" ] || { echo "sa_bench: the $n fabric did not come up" >&2; exit 1; }
done

echo "fabric: ${spec[*]} ($nlids nodes), $ROUNDS rounds, the SAs interleaved," \
	"load average $(cut -d' ' -f1-3 /proc/loadavg) at start"
# rate N SECONDS: per second; ms_each K SECONDS: milliseconds each of K
rate() {
	[ "$2" = - ] && echo - || awk -v n="$1" -v s="$2" 'BEGIN { printf "%.0f", n / s }'
}
ms_each() {
	[ "$2" = - ] && echo - || awk -v k="$1" -v s="$2" 'BEGIN { printf "%.1f", s * 1000 / k }'
}
# measure NAME TEST: one measurement, as a number or "-"
measure() {
	local n=$1 t=$2 lid gid
	local common=(sa bench --max-lid $((nlids + 16)))
	read -r _ gid _ _ lid _ <"$work/$n/src" || true
	local src=(--slid $((lid)) --sgid "$gid")
	case $t in
	get1) rate "$REQ1" "$(client "$n" "${common[@]}" --requests "$REQ1" --inflight 1 | secs)" ;;
	get32) rate "$REQ32" "$(client "$n" "${common[@]}" --requests "$REQ32" --inflight 32 |
		secs)" ;;
	src1) ms_each "$SETS1" "$(client "$n" "${common[@]}" "${src[@]}" --inflight 1 \
		--requests $((SETS1 * nlids)) | secs)" ;;
	src32) ms_each "$SETS32" "$(client "$n" "${common[@]}" "${src[@]}" --inflight 32 \
		--requests $((SETS32 * nlids)) | secs)" ;;
	table) ms_each "$TABLES" "$(client "$n" "${common[@]}" "${src[@]}" --table \
		--requests "$TABLES" | secs)" ;;
	esac
}

tests=(get1 get32 src1 src32 table)
declare -A res
for r in $(seq "$ROUNDS"); do
	line="round $r:"
	for t in "${tests[@]}"; do
		for n in "${names[@]}"; do
			# sa_echo answers Gets only; opensm's tables need kernel RMPP
			if [ "$t" = table ] && [ "$n" != smd ]; then
				v=-
			else
				v=$(measure "$n" "$t")
			fi
			res[$n.$t]="${res[$n.$t]:-} $v"
			line="$line $n.$t=$v"
		done
	done
	echo "$line"
done

median() {
	tr ' ' '\n' | { grep -v '^-\?$' || true; } | sort -g |
		awk '{ v[NR] = $1 } END {
			if (!NR) print "-"
			else if (NR % 2) print v[(NR + 1) / 2]
			else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}
ratio() {
	awk -v a="$1" -v b="$2" -v inv="${3:-0}" 'BEGIN {
		if (a == "-" || b == "-" || a == 0 || b == 0) print "-";
		else printf "%.2f", inv ? b / a : a / b }'
}
printf '%-38s %10s %10s %10s %11s %12s\n' "median of $ROUNDS" smd opensm ceiling \
	smd/opensm smd/ceiling
label() {
	case $1 in
	get1) echo "Gets/s, random pairs, 1 in flight" ;;
	get32) echo "Gets/s, random pairs, 32 in flight" ;;
	src1) echo "ms, $nlids Gets of one source, 1 in fl." ;;
	src32) echo "ms, $nlids Gets of one source, 32 in fl." ;;
	table) echo "ms, one GetTable of $nlids records" ;;
	esac
}
for t in "${tests[@]}"; do
	declare -A med=()
	for n in smd opensm ceiling; do
		med[$n]=$(printf '%s\n' "${res[$n.$t]:--}" | median)
	done
	inv=0
	case $t in src* | table) inv=1 ;; esac	# times: the ratio of speeds
	printf '%-38s %10s %10s %10s %11s %12s\n' "$(label "$t")" "${med[smd]}" "${med[opensm]}" \
		"${med[ceiling]}" "$(ratio "${med[smd]}" "${med[opensm]}" "$inv")" \
		"$(ratio "${med[smd]}" "${med[ceiling]}" "$inv")"
done
# The table against the same records one Get at a time, both smd's
printf '%-38s %10s\n' "smd: $nlids Gets (32 in flight) / table" \
	"$(ratio "$(printf '%s\n' "${res[smd.src32]}" | median)" \
		"$(printf '%s\n' "${res[smd.table]}" | median)")"
