#!/bin/bash
# route_compare.sh [FABRIC...]
#
# Side by side, on the same fabrics: the most routes over any one switch-to-
# switch link with opensm's deadlock-free engines (dfsssp, lash, nue, ftree,
# updn, each run with -Q under a private ibsim) and with smd's engines
# (computed in memory by tests/bench/route_bench over the same topology file).
# Both sides write their LFTs in opensm's opensm-lfts.dump format and one
# counter, tests/bench/route_load.py, walks every (CA port, LID) route over the
# true cabling of the file and counts it on every link direction it crosses.
#
# A FABRIC is a quoted topogen.py argument list; the default is the
# acceptance set of issues 14 and 22 (opensm takes most of an hour on it:
# OSM_CACHE spares that on later runs):
#   tests/bench/route_compare.sh                      # all of them
#   tests/bench/route_compare.sh "torus3 4 4 4 2" "ft3 8"
#
# Environment:
#   OSM_ENGINES   opensm engines (default "dfsssp lash nue ftree updn"; "" = none)
#   OSM_CACHE     a directory where opensm's results are kept, by the fabric
#                 file's checksum and the engine, and taken from on later runs
#                 (opensm's routes do not change with smd's work)
#   SMD_ENGINES   smd engine:VLs pairs (default "dfree:1 dfree:8 updn:1
#                 minhop:1 repair:1"); repair:V routes the fabric before its
#                 cables or switches were removed (the same topogen arguments
#                 without --cut and --cut-switches) with dfree on V VLs and
#                 repairs those routes (route_repair) onto the degraded one:
#                 "-" on intact fabrics, "no" where repair declines (smd then
#                 routes afresh: the dfree cell), "unbal" after the cell where
#                 the repaired busiest link carries more than 3/2 of the
#                 intact routes' (route_repair_balanced: smd then computes
#                 afresh as well and uses the better)
#   ROUTE_BENCH   the route_bench binary (default: tests/bench/route_bench,
#                 brought up to date with make first)
#   KEEP=1        keep the work dir (fabrics, opensm logs and dumps)
#
# Every cell is "A/C": A = most routes over one link counting every (CA port,
# LID) pair, C = the same counting only pairs whose destination is a CA port
# (host-to-host traffic). An opensm cell ends in "fb" when the engine gave up
# and opensm fell back to another engine (not the one asked for); those do not
# count for "best", the lowest A and the lowest C over the other opensm
# engines. An smd cell is "A/C vN": N data VLs used; "!" marks a cyclic
# channel dependency graph (min-hop). At the end of a row: smd's first engine
# (dfree on one VL, the default) against "best", A and C (issue 14 asks for
# at most 1.25x on every fabric); then, on degraded fabrics, repair's A
# against "best".
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
OSM_ENGINES=${OSM_ENGINES-dfsssp lash nue ftree updn}
SMD_ENGINES=${SMD_ENGINES-dfree:1 dfree:8 updn:1 minhop:1 repair:1}
OSM_CACHE=${OSM_CACHE:-}
ROUTE_BENCH_GIVEN=${ROUTE_BENCH:-}
ROUTE_BENCH=${ROUTE_BENCH:-$root/tests/bench/route_bench}
if [ $# -eq 0 ]; then
	# Issue 14's set, then issue 22's: random fabrics of 100-200 switches
	# and fat-trees that lost 2% or 5% of their switch cables or two
	# switches (seeds as listed: the same fabrics every run)
	set -- "torus3 4 4 4 2" "torus2 8 8 2" "torus2 4 4 2" "ring 8 2" \
		"random --switches 24 --seed 1" "random --switches 24 --seed 2" \
		"random --switches 64 --seed 3" "ft3 4" "ft3 8" "ft3 16" \
		"random --switches 100 --seed 5" "random --switches 120 --seed 1" \
		"random --switches 140 --seed 6" "random --switches 160 --seed 7" \
		"random --switches 180 --seed 8" "random --switches 200 --seed 9" \
		"ft3 16 --cut 2" "ft3 16 --cut 5" "ft3 16 --cut-switches 2" \
		"ft3 24 --cut 2" "ft3 24 --cut 5" "ft3 24 --cut-switches 2" "ft3 24"
fi

# (re)built unless given: it is a check program, "make" alone leaves it stale
if [ -n "$SMD_ENGINES" ] && [ -z "${ROUTE_BENCH_GIVEN:-}" ]; then
	make -C "$root" -s tests/bench/route_bench >&2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/routecmp.XXXXXX")
cmp_cleanup() {
	if [ -n "${KEEP:-}" ]; then echo "route_compare: work dir kept: $work" >&2
	else rm -rf "$work"; fi
}
trap cmp_cleanup EXIT

# shellcheck source=../sim/simlib.sh
. "$root/tests/sim/simlib.sh"

# opensm_run NET ENGINE DIR: sets RES to "all ca2ca status". Runs in this
# shell, not in $(...): simlib's traps must not fire in a subshell.
opensm_run() {
	local net=$1 eng=$2 d=$3 status=ok rc=0 key=
	mkdir -p "$d"
	if [ -n "$OSM_CACHE" ]; then
		key="$OSM_CACHE/$(sha1sum <"$net" | cut -c1-16).$eng"
		if [ -s "$key" ]; then
			RES=$(cat "$key")
			return 0
		fi
	fi
	SIM_DIR="$d/sim"
	RES="- - fail"
	sim_start "$net" 2>>"$d/sim.log" || return 0
	OSM_CACHE_DIR="$d" OSM_TMP_DIR="$d" SIM_RUN_TIMEOUT=900 \
		sim_run opensm -o -Q -R "$eng" -D 0x43 -f "$d/opensm.log" -e \
		--dump_files_dir "$d" -F /dev/null >"$d/sm.out" 2>&1 || rc=$?
	sim_stop
	if [ "$rc" -ne 0 ] || [ ! -s "$d/opensm-lfts.dump" ]; then
		return 0
	fi
	# An engine that gives up leaves opensm on another engine's routes
	if grep -qE "cannot build (fwd tables|lid matrices)|falling back|fall back to" \
		"$d/opensm.log"; then
		status=fb
	fi
	RES="$(python3 "$here/route_load.py" "$net" "$d/opensm-lfts.dump" |
		awk '{ print $2, $6 }') $status"
	if [ -n "$key" ]; then
		mkdir -p "$OSM_CACHE"
		echo "$RES" >"$key"
	fi
}

# smd_run NET ENGINE VLS DIR [INTACT]: sets RES to "all ca2ca vls_used seconds
# status"; with INTACT, ENGINE's routes of INTACT repaired onto NET
smd_run() {
	local net=$1 eng=$2 vls=$3 d=$4 intact=${5:-} out used secs status
	local from=()
	mkdir -p "$d"
	RES="- - - - fail"
	[ -z "$intact" ] || from=(--repair-from "$intact")
	out=$("$ROUTE_BENCH" --engine "$eng" --vls "$vls" --dump-lfts "$d/lfts.dump" \
		"${from[@]}" "$net" 2>"$d/bench.err") || return 0
	echo "$out" >"$d/bench.out"
	used=$(echo "$out" | sed -n 's/.* vls_used \([0-9]*\) .*/\1/p')
	secs=$(echo "$out" | sed -n 's/.* seconds \([0-9.]*\) .*/\1/p')
	status=ok
	echo "$out" | grep -q ' acyclic 1 ' || status=cyclic
	if echo "$out" | grep -q '^intact_max .* balanced 0'; then
		status=unbal
	fi
	RES="$(python3 "$here/route_load.py" "$net" "$d/lfts.dump" |
		awk '{ print $2, $6 }') $used $secs $status"
}

hdr=$(printf '%-30s' fabric)
for e in $OSM_ENGINES; do hdr+=$(printf ' %12s' "$e"); done
hdr+=$(printf ' %11s' best)
for e in $SMD_ENGINES; do hdr+=$(printf ' %14s' "$e"); done
results=()
n=0
for fab in "$@"; do
	n=$((n + 1))
	net="$work/f$n.net"
	# shellcheck disable=SC2086
	python3 "$root/tests/gen/topogen.py" $fab -o "$net" 2>/dev/null
	# The same fabric before it lost cables or switches, for repair
	intact=
	case " $fab " in
	*" --cut"*)
		intact="$work/f$n.intact.net"
		# shellcheck disable=SC2046
		python3 "$root/tests/gen/topogen.py" $(echo " $fab " |
			sed -e 's/ --cut-switches [0-9]*//' -e 's/ --cut [0-9.]*//') \
			-o "$intact" 2>/dev/null ;;
	esac
	row=$(printf '%-30s' "$fab")
	best_a=
	best_c=
	for e in $OSM_ENGINES; do
		opensm_run "$net" "$e" "$work/f$n.osm.$e"
		read -r a c st <<<"$RES"
		case $st in
		ok)	cell="$a/$c"
			if [ -z "$best_a" ] || [ "$a" -lt "$best_a" ]; then best_a=$a; fi
			if [ -z "$best_c" ] || [ "$c" -lt "$best_c" ]; then best_c=$c; fi ;;
		fb)	cell="$a/$c fb" ;;
		*)	cell="-" ;;
		esac
		row+=$(printf ' %12s' "$cell")
		echo "route_compare: $fab: opensm $e: $cell" >&2
	done
	row+=$(printf ' %11s' "${best_a:--}/${best_c:--}")
	first=1
	verdict=
	for ev in $SMD_ENGINES; do
		e=${ev%%:*}
		v=${ev##*:}
		if [ "$e" = repair ]; then
			RES="- - - - none"
			[ -z "$intact" ] || smd_run "$net" dfree "$v" "$work/f$n.smd.$e.$v" "$intact"
		else
			smd_run "$net" "$e" "$v" "$work/f$n.smd.$e.$v"
		fi
		read -r a c used secs st <<<"$RES"
		if [ "$st" = none ]; then
			cell="-"
		elif [ "$st" = fail ] && [ "$e" = repair ]; then
			cell="no"
		elif [ "$st" = fail ]; then
			cell="-"
		else
			cell="$a/$c v$used"
			[ "$st" = unbal ] && cell="$cell unbal"
			[ "$st" = ok ] || [ "$st" = unbal ] || cell="$cell!"
		fi
		if [ -n "$first" ] && [ -n "$best_a" ] && [ "$st" = ok ]; then
			verdict=$(awk -v a="$a" -v c="$c" -v ba="$best_a" -v bc="$best_c" \
				'BEGIN { printf "%.2fx/%.2fx", a / ba, c / bc }')
		fi
		if [ "$e" = repair ] && [ -n "$best_a" ] && { [ "$st" = ok ] || [ "$st" = unbal ]; }; then
			verdict+=$(awk -v a="$a" -v ba="$best_a" \
				'BEGIN { printf " repair %.2fx", a / ba }')
			[ "$st" = ok ] || verdict+=" (unbalanced: smd also routes afresh)"
		fi
		first=
		row+=$(printf ' %14s' "$cell")
		echo "route_compare: $fab: smd $e with $v VLs: $cell (${secs}s)" >&2
	done
	results+=("$row ${verdict}")
done

echo
echo "Most routes over one switch-to-switch link direction, A/C: A = all (CA port, LID)"
echo "pairs, C = CA-to-CA pairs only; lower is better. opensm with -Q under ibsim;"
echo "fb = the engine gave up and opensm fell back. smd: vN = data VLs used."
echo "$hdr"
for r in "${results[@]}"; do echo "$r"; done
