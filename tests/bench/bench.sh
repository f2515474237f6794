#!/bin/bash
# bench.sh [TOPOLOGY ARGS]   (default: ft3 16)
#
# Generate a fabric with tests/gen/topogen.py, then for each subnet manager
# (smd and opensm) start a FRESH simulator, run the SM once, measure it, and
# (unless CHECK=0) verify the fabric it configured with checkfabric.py.
# Prints a table: wall seconds, SMPs sent, peak RSS, check result, and the
# smd/opensm ratios.
#
#   tests/bench/bench.sh                    # ft3 16: 320 switches, 1024 hosts
#   tests/bench/bench.sh ft2 36
#   RUNS=3 tests/bench/bench.sh random --switches 100 --seed 5
#   tests/bench/bench.sh --bringup          # the bring-up table (see below)
#
# --bringup: 3-level fat-trees side by side, smd and opensm at k = 16, 24,
# 32 and 40 (BRINGUP_BOTH), smd alone at k = 48 (BRINGUP_SMD); one table
# with wall seconds, peak RSS and SMPs of each, their ratio, smd's own
# phase times (its "sweep phases" log line: discover, route, the P_Key
# tables (sent while the worker routes), PortInfo, LFTs, activate, save)
# and its routing log line (compute, verifier), and the load average when
# each row started (the README's bring-up table comes from it).
#
# Environment:
#   SMD       smd binary (default: ./smd/smd under the repo root); run as
#             "$SMD --once --db <tmp>/smd.db".  Skipped if not built yet.
#   SMD_ARGS  extra smd arguments
#   OPENSM_ARGS extra opensm arguments (e.g. "-P partitions.conf")
#   SMS       which SMs to run (default "smd opensm")
#   RUNS      runs per SM (default 1); seconds = median, peak MB = max
#   CHECK     1 (default) = run checkfabric.py after each SM's last run
#   SM_TIMEOUT  seconds an SM may take (default 900)
#   BENCH_KEEP=1  keep the work dir (fabric, logs, counts)
#
# SMPs are counted by madcount.so (tests/bench/madcount.c, compiled here with
# cc), preloaded before libumad2sim.so; peak RSS comes from GNU time
# (/usr/bin/time -v, Debian package "time").
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SMD=${SMD:-$root/smd/smd}
SMS=${SMS:-smd opensm}
RUNS=${RUNS:-1}
CHECK=${CHECK:-1}
SM_TIMEOUT=${SM_TIMEOUT:-900}
BRINGUP=0
if [ "${1:-}" = --bringup ]; then
	BRINGUP=1
	shift
	BRINGUP_BOTH=${BRINGUP_BOTH-16 24 32 40}
	BRINGUP_SMD=${BRINGUP_SMD-48}
fi
[ $# -gt 0 ] || set -- ft3 16

work=$(mktemp -d "${TMPDIR:-/tmp}/smdbench.XXXXXX")
bench_cleanup() {
	if [ -n "${BENCH_KEEP:-}" ]; then
		echo "bench: work dir kept: $work" >&2
	else
		rm -rf "$work"
	fi
}
trap bench_cleanup EXIT

# shellcheck source=../sim/simlib.sh
. "$root/tests/sim/simlib.sh"

now() { date +%s.%N; }

# --- tools ------------------------------------------------------------------
mc_so="$work/madcount.so"
if ! cc -shared -fPIC -O2 -o "$mc_so" "$here/madcount.c" -ldl 2>"$work/cc.log"; then
	echo "bench: cannot build madcount.so (needs cc and libibumad-dev):" >&2
	cat "$work/cc.log" >&2
	exit 2
fi
timer=
if [ -x /usr/bin/time ] && /usr/bin/time -v true 2>/dev/null; then
	timer=/usr/bin/time
else
	echo "bench: /usr/bin/time (GNU time, Debian package 'time') missing: no peak RSS" >&2
fi

net="$work/fabric.net"
tag=
[ "$BRINGUP" = 1 ] || python3 "$root/tests/gen/topogen.py" "$@" -o "$net"

# --- one SM run -----------------------------------------------------------------
# run_sm NAME RUN: fresh simulator, run the SM, record secs/smps/rss/status
# in $work/$tag$NAME.$RUN.
run_sm() {
	local name=$1 run=$2 d rc=0 t0 t1 cmd=()
	d="$work/$tag$name.$run"
	mkdir -p "$d"
	case $name in
	smd)
		# shellcheck disable=SC2206
		cmd=("$SMD" --once --db "$d/smd.db" ${SMD_ARGS:-}) ;;
	opensm)
		export OSM_CACHE_DIR="$d" OSM_TMP_DIR="$d"
		# shellcheck disable=SC2206
		cmd=(opensm -o -f "$d/opensm.log" -e --dump_files_dir "$d" -F /dev/null
		     ${OPENSM_ARGS:-}) ;;
	esac
	[ -n "$timer" ] && cmd=("$timer" -v -o "$d/time.txt" "${cmd[@]}")

	SIM_DIR="$d/sim"
	sim_start "$net" 2>>"$work/sim.log"
	t0=$(now)
	SIM_PRELOAD_BEFORE="$mc_so" MADCOUNT_FILE="$d/madcount" \
		SIM_RUN_TIMEOUT=$SM_TIMEOUT sim_run "${cmd[@]}" >"$d/sm.out" 2>&1 || rc=$?
	t1=$(now)
	if [ "$rc" -ne 0 ]; then
		echo "bench: $name exited with status $rc; last lines:" >&2
		tail -n 10 "$d/sm.out" | sed 's/^/  | /' >&2
	fi
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >"$d/secs"
	echo "$rc" >"$d/rc"
	# SMPs: requests the SM sent (Get/Set/other), summed over its processes
	cat "$d"/madcount.* 2>/dev/null | tr ' ' '\n' | awk -F= '
		$1 == "smp_get" || $1 == "smp_set" || $1 == "smp_other_req" { n += $2 }
		END { print n + 0 }' >"$d/smps"
	if [ -n "$timer" ] && [ -f "$d/time.txt" ]; then
		awk -F': ' '/Maximum resident set size/ { printf "%.1f\n", $2 / 1024 }' \
			"$d/time.txt" >"$d/rss"
	else
		echo "-" >"$d/rss"
	fi
	if [ "$CHECK" = 1 ] && [ "$run" = "$RUNS" ]; then
		if timeout -k 10 1800 python3 "$root/tests/sim/checkfabric.py" "$net" \
			>"$d/check.txt" 2>&1; then
			echo PASS >"$d/check"
		else
			echo FAIL >"$d/check"
			grep -E "FAIL|ERROR|^  - " "$d/check.txt" | head -n 8 | sed 's/^/  | /' >&2
		fi
	fi
	sim_stop
}

median() { sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'; }

declare -A res_secs res_smps res_rss res_check
# run_all: every SM of $SMS, RUNS times each, on $net; results in res_*
run_all() {
for name in $SMS; do
	case $name in
	smd)
		if [ ! -x "$SMD" ]; then
			echo "bench: smd skipped: $SMD is not built yet"
			continue
		fi ;;
	opensm)
		command -v opensm >/dev/null || { echo "bench: opensm not installed, skipped"; continue; } ;;
	*)
		echo "bench: unknown SM '$name' (smd or opensm)" >&2
		exit 2 ;;
	esac
	for run in $(seq 1 "$RUNS"); do
		echo "bench: $name run $run/$RUNS on $(sed -n 2p "$net" | sed 's/^# //')" >&2
		run_sm "$name" "$run"
	done
	failed=0
	for run in $(seq 1 "$RUNS"); do
		[ "$(cat "$work/$tag$name.$run/rc")" = 0 ] || failed=1
	done
	res_secs[$name]=$(cat "$work/$tag$name".*/secs | median)
	res_smps[$name]=$(cat "$work/$tag$name.$RUNS/smps")
	res_rss[$name]=$(cat "$work/$tag$name".*/rss | sort -g | tail -n 1)
	res_check[$name]=$(cat "$work/$tag$name.$RUNS/check" 2>/dev/null || echo "-")
	[ "$failed" = 0 ] || res_check[$name]="${res_check[$name]}(exit!=0)"
done
}

# smd's phase times (last run): "discover D, route R (compute C + verify V), ..."
smd_phases() {
	local out="$work/${tag}smd.$RUNS/sm.out"

	[ -f "$out" ] || { echo "-"; return; }
	awk '
	/routing \(.*\): .* in [0-9.]+ s \(verified in/ {
		for (i = 1; i <= NF; i++) {
			if ($i == "in" && $(i + 2) == "s" && c == "") c = $(i + 1)
			if ($i == "(verified") { v = $(i + 2) }
		}
	}
	/sweep phases:/ {
		sub(/.*sweep phases: /, ""); sub(/;.*/, "")
		n = split($0, ph, ", ")
		for (i = 1; i <= n; i++) { split(ph[i], kv, " "); t[kv[1]] = kv[2] }
	}
	END {
		# (pkeys runs while the worker routes: its time lies inside the route time)
		printf "discover %.2f, route %.2f (%s + verify %s), pkeys %.2f, ports %.2f, " \
		       "lfts %.2f, activate %.2f, save %.2f", t["discover"], t["route"], c, v,
		       t["pkeys"], t["ports"], t["lfts"], t["activate"], t["save"]
	}' "$out"
}

if [ "$BRINGUP" = 1 ]; then
	rows="$work/rows"
	: >"$rows"
	for k in $BRINGUP_BOTH $BRINGUP_SMD; do
		tag="k$k."
		net="$work/ft3_$k.net"
		python3 "$root/tests/gen/topogen.py" ft3 "$k" -o "$net" >/dev/null
		load=$(cut -d' ' -f1 /proc/loadavg)
		both=0
		for b in $BRINGUP_BOTH; do [ "$b" = "$k" ] && both=1; done
		res_secs=() res_smps=() res_rss=() res_check=()
		if [ "$both" = 1 ]; then SMS="smd opensm" run_all; else SMS=smd run_all; fi
		awk -v k="$k" -v load="$load" -v s1="${res_secs[smd]:--}" \
		    -v m1="${res_smps[smd]:--}" -v r1="${res_rss[smd]:--}" \
		    -v c1="${res_check[smd]:--}" -v s2="${res_secs[opensm]:--}" \
		    -v m2="${res_smps[opensm]:--}" -v r2="${res_rss[opensm]:--}" \
		    -v c2="${res_check[opensm]:--}" -v ph="$(smd_phases)" '
		function sm(s, m, r, c) {
			if (s == "-") return "-"
			return sprintf("%.2f s, %.0fk SMPs, %.0f MB%s", s, m / 1000, r,
				       c == "PASS" || c == "-" ? "" : ", check " c)
		}
		BEGIN {
			printf "| k=%s, %d switches, %d hosts | %s | %s | %s | %s | %s |\n",
			       k, 5 * k * k / 4, k * k * k / 4, sm(s1, m1, r1, c1), sm(s2, m2, r2, c2),
			       (s2 != "-" && s2 + 0 > 0) ? sprintf("%.2fx", s1 / s2) : "-", ph, load
		}' >>"$rows"
		tail -n 1 "$rows" >&2
	done
	echo
	echo "| 3-level fat-tree | smd | opensm | smd/opensm | smd phases (s) | load |"
	echo "| --- | --- | --- | --- | --- | --- |"
	cat "$rows"
	exit 0
fi
run_all

echo
echo "fabric: $(sed -n 2p "$net" | sed 's/^# //')"
printf '%-8s %9s %9s %9s  %s\n' SM seconds SMPs "peak MB" check
for name in $SMS; do
	[ -n "${res_secs[$name]:-}" ] || continue
	printf '%-8s %9s %9s %9s  %s\n' "$name" "${res_secs[$name]}" \
		"${res_smps[$name]}" "${res_rss[$name]}" "${res_check[$name]}"
done
if [ -n "${res_secs[smd]:-}" ] && [ -n "${res_secs[opensm]:-}" ]; then
	awk -v s1="${res_secs[smd]}" -v s2="${res_secs[opensm]}" \
	    -v m1="${res_smps[smd]}" -v m2="${res_smps[opensm]}" \
	    -v r1="${res_rss[smd]}" -v r2="${res_rss[opensm]}" '
	function ratio(a, b) { return (b + 0 > 0 && a != "-") ? sprintf("%.2fx", a / b) : "-" }
	BEGIN { printf "smd/opensm: time %s, SMPs %s, peak RSS %s\n",
		ratio(s1, s2), ratio(m1, m2), ratio(r1, r2) }'
fi
