#!/bin/bash
# tests/bench/mc_bench.sh: multicast work of an SM's SA and MFT programming,
# the same client for every SM (tests/sim/mcclient), numbers only.
#
#  (a) on JOIN_TOPO (default ft2 36, 648 hosts): MCMemberRecord Sets and
#      Deletes per second with INFLIGHT (32) requests in flight from one
#      port: MC_GROUPS (400) creates from host A, then JOINERS (10) other hosts
#      each join all of them, then everyone leaves; ROUNDS (5) times.  Rates are operations /
#      (first request .. last answer) of each client, summed over clients.
#  (b) on MFT_TOPO (default ft3 16, 1024 hosts): every host joins 3 groups
#      the way Linux IPoIB does (broadcast, IPv4 all-hosts, IPv6 all-nodes;
#      MC_JOBS hosts at once, the simulator allows no more), then the MFTs
#      are read back from every switch (mcclient mft: SMPs, 32 in flight)
#      until checkmft.py --fast says every member reaches every other exactly
#      once.  Printed: the joins' wall time, the time from the last join's
#      answer to tables complete, and the sum.  The final tables are then
#      judged again with ibroute -M (not timed).
#
#   tests/bench/mc_bench.sh              # SMS="smd opensm"
#   SMS=opensm tests/bench/mc_bench.sh
# Environment: SMS, JOIN_TOPO, MFT_TOPO, MC_GROUPS, ROUNDS, JOINERS, INFLIGHT, MC_JOBS,
# SMD, MCCLIENT (default: the build tree's), BENCH_KEEP=1 (keep work dir).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SMS=${SMS:-smd opensm}
JOIN_TOPO=${JOIN_TOPO:-ft2 36}
MFT_TOPO=${MFT_TOPO:-ft3 16}
MC_GROUPS=${MC_GROUPS:-400}
ROUNDS=${ROUNDS:-5}
JOINERS=${JOINERS:-10}
INFLIGHT=${INFLIGHT:-32}
work=$(mktemp -d "${TMPDIR:-/tmp}/mcbench.XXXXXX")
bench_cleanup() { [ -n "${BENCH_KEEP:-}" ] && echo "kept $work" >&2 || rm -rf "$work"; }
trap bench_cleanup EXIT

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
# operations per second summed over mcclient --summary lines, and how many
# of the operations the SA answered with status 0
rates() {
	awk '/op=summary/ { for (i = 1; i <= NF; i++) { split($i, a, "=")
			if (a[1] == "ops") o += a[2]; if (a[1] == "seconds") s += a[2] } }
		/ status=0x0000 / { ok++ }
		END { if (s > 0) printf "%.0f/s (%d ops in %.3f s, %d answered 0)", o / s, o, s, ok
		      else print "-" }' "$@"
}

# run one part for one SM in a fresh simulator (a subshell: mcast_lib.sh
# installs its own traps and work dir)
part() {	# part a|b SM
	(
		trap - EXIT
		export MC_SM=$2 KEEP=
		# shellcheck source=../sim/mcast_lib.sh
		. "$root/tests/sim/mcast_lib.sh"
		"part_$1"
	)
}

part_a() {
	local d=$mc_tmp i h
	# shellcheck disable=SC2086
	$GEN $JOIN_TOPO -o "$d/net" 2>/dev/null
	mc_sim_start "$d/net"
	mc_sm_start "$d/net"
	mc_hosts "$d/net" | sed -n "2,$((JOINERS + 2))p" >"$d/hosts"
	for i in $(seq 1 "$MC_GROUPS"); do printf 'ff12:e0b0::%x\n' "$i"; done >"$d/mgids"
	awk '{ print "join mgid=" $1 " qkey=0x11 pkey=0xffff sl=0 flow=0 tclass=0" }' "$d/mgids" >"$d/create"
	awk '{ print "join mgid=" $1 }' "$d/mgids" >"$d/join"
	awk '{ print "leave mgid=" $1 }' "$d/mgids" >"$d/leave"
	for _ in $(seq "$ROUNDS"); do
		h=$(head -n 1 "$d/hosts")
		SIM_HOST=$h mc_client --summary --inflight "$INFLIGHT" --batch "$d/create" \
			>>"$d/create.out" 2>/dev/null || true
		for h in $(tail -n +2 "$d/hosts"); do
			SIM_HOST=$h mc_client --summary --inflight "$INFLIGHT" --batch "$d/join" \
				>>"$d/join.out" 2>/dev/null || true
		done
		for h in $(tail -n +2 "$d/hosts") $(head -n 1 "$d/hosts"); do
			SIM_HOST=$h mc_client --summary --inflight "$INFLIGHT" --batch "$d/leave" \
				>>"$d/leave.out" 2>/dev/null || true
		done
	done
	printf '%-7s %s: creates %s\n' "$MC_SM" "$JOIN_TOPO" "$(rates "$d/create.out")"
	printf '%-7s %s: joins   %s\n' "$MC_SM" "$JOIN_TOPO" "$(rates "$d/join.out")"
	printf '%-7s %s: leaves  %s\n' "$MC_SM" "$JOIN_TOPO" "$(rates "$d/leave.out")"
	printf '%-7s SM RSS after: %s kB\n' "$MC_SM" "$(mc_sm_rss_kb)"
	mc_sm_stop
}

part_b() {
	local d=$mc_tmp t0 t1 t2 lo hi n ok='' polls
	# shellcheck disable=SC2086
	$GEN $MFT_TOPO -o "$d/net" 2>/dev/null
	mc_sim_start "$d/net"
	mc_sm_start "$d/net"
	mc_hosts "$d/net" >"$d/hosts"
	(cd "$d" && sim_run ibnetdiscover) >"$d/ibnd" 2>/dev/null
	awk '/^Switch/ { match($0, /lid [0-9]+/); print "mft lid=" substr($0, RSTART + 4, RLENGTH - 4) }' \
		"$d/ibnd" >"$d/switches"
	t0=$(now)
	mc_fanout "$d/hosts" ipoib \; ipoib mgid=ff12:401b:ffff::1 \; ipoib mgid=ff12:601b:ffff::1 \
		>"$d/joins.out" 2>/dev/null || true
	t1=$(now)
	n=$(mc_count "$d/joins.out" ipoib 0x0000)
	if [ "$n" -ne $((3 * $(wc -l <"$d/hosts"))) ]; then
		printf '%-7s %s: %d of %d joins answered 0: no MFT timing\n' "$MC_SM" "$MFT_TOPO" \
			"$n" $((3 * $(wc -l <"$d/hosts")))
		mc_sm_stop
		return 0
	fi
	lo=$(mc_values "$d/joins.out" ipoib mlid | sort | head -n 1)
	hi=$(mc_values "$d/joins.out" ipoib mlid | sort | tail -n 1)
	sed -i "s/\$/ from=$lo to=$hi/" "$d/switches"
	polls=0
	for _ in $(seq 600); do
		polls=$((polls + 1))
		mc_client --batch "$d/switches" >"$d/mft.out" 2>/dev/null || true
		if (cd "$d" && MCCLIENT=$MCCLIENT python3 "$root/tests/sim/checkmft.py" --fast \
			--mft "$d/mft.out" --ibnetdiscover "$d/ibnd" --members "$d/joins.out" --expect-groups 3 \
			>"$d/check.out" 2>&1); then
			ok=1
			break
		fi
	done
	t2=$(now)
	if [ -n "$ok" ]; then
		printf '%-7s %s: %d hosts x 3 groups: joins %s s, last join -> MFTs complete %s s' \
			"$MC_SM" "$MFT_TOPO" "$(wc -l <"$d/hosts")" "$(secs "$t0" "$t1")" "$(secs "$t1" "$t2")"
		printf ' (%d polls of %s s), total %s s\n' "$polls" \
			"$(awk -v a="$t1" -v b="$t2" -v n="$polls" 'BEGIN { printf "%.2f", (b - a) / n }')" \
			"$(secs "$t0" "$t2")"
		if mc_checkmft --members "$d/joins.out" --expect-groups 3; then
			printf '%-7s %s: final MFTs judged with ibroute -M: %s\n' "$MC_SM" "$MFT_TOPO" \
				"$(grep 'checkmft: PASS' "$mc_tmp/checkmft.out")"
		else
			printf '%-7s %s: final MFTs judged with ibroute -M: FAIL\n' "$MC_SM" "$MFT_TOPO"
		fi
		grep 'trees per top' "$mc_tmp/checkmft.out" | cut -c1-160 || true
	else
		printf '%-7s %s: MFTs not complete 10 min after the joins\n' "$MC_SM" "$MFT_TOPO"
		tail -n 5 "$d/check.out"
	fi
	mc_sm_stop
}

echo "mc_bench: (a) $JOIN_TOPO, $ROUNDS x $MC_GROUPS groups, $JOINERS joiners, $INFLIGHT in flight;" \
	"(b) $MFT_TOPO, 3 IPoIB groups per host"
for sm in $SMS; do
	part a "$sm" || echo "$sm: part a failed"
	part b "$sm" || echo "$sm: part b failed"
done
