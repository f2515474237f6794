#!/bin/bash
# SA starvation (issue 12): one host opens 1100 NodeRecord GetTables and
# tries to keep each transfer alive by ACKing its first segment, never more
# (sa_hog.c). smd gives that port 16 transfers and refuses the rest
# (ERR_NO_RESOURCES) or, when the hog outruns it, drops them as read;
# meanwhile other hosts' queries are answered (saquery, smctl sa) and smd's
# memory stays small; a repeated ACK is no progress, so smd ends each
# transfer after 10 timeouts (RMPP ABORT, too many retries, about 5.5 s),
# and once the hog has gone its slots are free again.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$GEN ft3 4 -o "$tmp/net" 2>/dev/null
sim_start "$tmp/net" >/dev/null 2>&1
hog=$tmp/sa_hog
cc -O2 -o "$hog" "$here/sa_hog.c" -libumad || { bad "building sa_hog"; finish; exit 1; }
printf 'sweep_interval = 0\n' >"$tmp/smd.conf"
smd_start "$tmp/smd.conf" "$tmp/smd.db" "$tmp/smd.out"
check wait_for "$tmp/smd.out" "SA: answering" 1
rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$smd_pid/status"; }
rss0=$(rss_kb)

(cd "$tmp" && SIM_HOST=host-0003 sim_run "$hog" 1100 8) >"$tmp/hog.out" 2>&1 &
hogpid=$!
# Wait until the hog holds its transfers (smd logs nothing per refusal: poll smctl)
for _ in $(seq 100); do
	SIM_HOST=host-0009 sim_run "$SMCTL" sa nodes --count >"$tmp/other" 2>/dev/null || true
	[ -s "$tmp/other" ] && break
done
sleep 2
rss1=$(rss_kb)
# Another host is served while the hog holds what it may
SIM_HOST=host-0009 sim_run "$SMCTL" sa nodes --count >"$tmp/other" 2>"$tmp/other.err" || true
cat "$tmp/other.err"
check test "$(cat "$tmp/other")" = 36
SIM_HOST=host-0012 sim_run saquery >"$tmp/saq" 2>&1 || true
check grep -q "NodeRecord dump" "$tmp/saq"
SIM_HOST=host-0012 sim_run "$SMCTL" sa path --slid 1 --dlid 2 --get --count >"$tmp/pr" 2>&1 || true
check test "$(cat "$tmp/pr")" = 1
wait "$hogpid" || true
cat "$tmp/hog.out"
echo "smd RSS: $rss0 kB before, $rss1 kB while hogged"
# What holds however fast smd keeps up with the hog (a busy machine makes
# smd drop some of its requests as read, its port's queue being full):
# every request was sent; none got another status; it never held more than
# its port's 16 transfers at once, and got at least those (its first 32
# requests always fit in the queue)
hogv() { sed -n "s/.*\b$1=\([0-9]*\).*/\1/p" "$tmp/hog.out"; }
check test "$(hogv sent)" = 1100
check test "$(hogv other_status)" = 0
check test "$(hogv most_alive)" -le 16
check test "$(hogv first_segments)" -ge 16
check test "$(hogv aborts)" -le "$(hogv first_segments)"
# smctl status counts them: each of the hog's requests answered with a
# transfer, refused, or dropped unanswered as read (no other client here
# sends anything malformed or fills its queue); the hog's full queue may
# also drop some of the ACKs it sends, never more than it sent
"$SMCTL" --socket "$tmp/control" --json status >"$tmp/st.json" 2>/dev/null || true
check python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["sa_requests"]
first, nores, acks = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
assert 1100 <= first + nores + r["dropped"] <= 1100 + acks, (first, nores, acks, r)
assert r["received"] + r["dropped"] >= 1100 and r["refused"] >= nores, r
assert r["answered"] >= first, r' "$tmp/st.json" "$(hogv first_segments)" "$(hogv no_resources)" \
	"$(hogv acks)"
"$SMCTL" --socket "$tmp/control" status 2>/dev/null | grep "^sa_requests:" || true
check test "$rss1" -lt 65536
# The hog is gone: its transfers have ended (ABORT after 10 timeouts),
# and its port's slots are free again
for _ in $(seq 40); do
	SIM_HOST=host-0003 sim_run "$SMCTL" sa nodes --count >"$tmp/after" 2>/dev/null || true
	[ "$(cat "$tmp/after")" = 36 ] && break
	sleep 0.5
done
check test "$(cat "$tmp/after")" -eq 36
check kill -0 "$smd_pid"
check smd_stop
finish
