#!/bin/bash
# Crash safety: smd on a 1024-host fat-tree (ft3 16: 1344 nodes) killed
# with SIGKILL 100 times (40 in the ASan build, below) at random moments
# of its sweeps: half of them anywhere in the run, half just after it
# starts saving (the "programmed" log line, then 0-60 ms). After every
# kill the database opens (smctl runs the integrity check) and holds every
# port's LID unchanged; at the end one more smd brings the subnet up with
# exactly the first LIDs. A database locked by another process and a
# corrupt one come last. The simulator is restarted every 8 kills (a
# SIGKILLed client leaks one of its 10 slots), which also resets every LID
# on the fabric.
# KILLS=N runs another number of kills, KEEP=1 keeps the work directory.
#
# The ASan+UBSan build makes 40 kills: there every smd run costs 3-5 times
# as much, and each kill moment is drawn over the length of a run, so on a
# busy machine 100 of them outlasted the suite's 900 s hang guard (three
# suites beside stress-ng --cpu 8: 9.3 s a run). A SIGKILL runs none of
# smd's code for the sanitizers to watch; what they check, the opening and
# recovery of the database after a kill, every kill still exercises.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
kills_default=100
grep -q __asan_init "$SMD" && kills_default=40
KILLS=${KILLS:-$kills_default}
tmp=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill -KILL "$pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
$GEN ft3 16 -o net 2>/dev/null
db="$tmp/smd.db"

db_lids() { "$SMCTL" --db "$db" lids 2>&1 | awk 'NR > 1 { print $2, $1 } NR == 1 && $1 != "LID" { print }' | sort; }
now_ms() { date +%s%3N; }

sim_start net >sim.log 2>&1 || { cat sim.log; exit 1; }
sim_run "$SMD" --once --db "$db" >run0 2>&1 || true
check grep -q "subnet UP" run0
db_lids >lids0
check test "$(wc -l <lids0)" -eq 1344
fabric_lids >fabric0
t0=$(now_ms)
sim_run "$SMD" --once --db "$db" >run1 2>&1 || true
run_ms=$(($(now_ms) - t0))
check grep -q "subnet UP" run1

bad=0 finished=0 late=0 restarts=0
for i in $(seq 1 "$KILLS"); do
	if [ $((i % 8)) -eq 0 ]; then
		sim_stop
		sim_start net >sim.log 2>&1 || { cat sim.log; exit 1; }
		restarts=$((restarts + 1))
	fi
	env LD_PRELOAD="$SIM_PRELOAD" "$SMD" --once --db "$db" >out 2>&1 &
	pid=$!
	if [ $((i % 2)) -eq 1 ]; then
		# anywhere: discovery, LIDs, programming, the save, the exit
		ms=$((RANDOM % (run_ms + run_ms / 4 + 1)))
		sleep "$((ms / 1000)).$(printf '%03d' $((ms % 1000)))"
	else
		# in the save: it follows the "programmed" line
		for _ in $(seq 1000); do
			grep -q "programmed:" out && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.005
		done
		sleep "0.0$(printf '%02d' $((RANDOM % 60)))"
		late=$((late + 1))
	fi
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	pid=
	grep -q "subnet UP" out && finished=$((finished + 1))
	rm -rf ./sys-[0-9]*
	db_lids >lids
	if ! cmp -s lids0 lids; then
		bad=$((bad + 1))
		echo "kill $i: the database differs:"
		diff lids0 lids | head -5
	fi
done
echo "$KILLS kills ($late while saving, $finished runs finished first), $restarts simulator" \
	"restarts, a run takes ${run_ms} ms"
check test "$bad" -eq 0
check test "$finished" -lt "$KILLS"
check test "$(sqlite3 "$db" 'PRAGMA integrity_check')" = ok
check test -z "$(sqlite3 "$db" 'PRAGMA foreign_key_check')"

# A last sweep, on a fresh fabric: the same LIDs everywhere
sim_stop
sim_start net >sim.log 2>&1 || { cat sim.log; exit 1; }
sim_run "$SMD" --once --db "$db" >run2 2>&1 || true
check grep -q "subnet UP" run2
check grep -q "0 kept, 1344 remembered, 0 new" run2
fabric_lids >fabric2
check cmp -s fabric0 fabric2
check "$SMCTL" --db "$db" status >status.out

# Another process holds the write lock for as long as smd runs: smd says
# so and finishes anyway (a hang would be caught by the test's timeout).
# The holder prints "held" once BEGIN IMMEDIATE has taken the lock, and lets
# go only after smd has exited, so no wall-clock bound is needed.
mkfifo lockctl
sqlite3 "$db" <lockctl >lockout 2>&1 &
holder=$!
exec 7>lockctl
echo "BEGIN IMMEDIATE; SELECT 'held';" >&7
for _ in $(seq 600); do grep -q held lockout && break; sleep 0.1; done
check grep -q held lockout
sim_run "$SMD" --once --db "$db" >locked 2>&1 || true
check kill -0 "$holder"
echo "ROLLBACK;" >&7
exec 7>&-
wait "$holder"
check grep -q "subnet UP" locked
check grep -q "saving the sweep to the database failed: .*locked by another process" locked

# A corrupt database is moved aside, with a clear line; the LIDs come from
# what the ports hold, and the new database has them all
head -c 65536 /dev/urandom >junk.db
echo "a log" >junk.db-wal
cp junk.db junk.orig
sim_run "$SMD" --once --db "$tmp/junk.db" >junk 2>&1 || true
check grep -q "database $tmp/junk.db is unusable (.*): moved it aside to $tmp/junk.db.corrupt-[0-9]*;" junk
check grep -q "subnet UP" junk
check grep -q "LIDs: 1344 endports, 1344 kept, 0 remembered, 0 new" junk
aside=
for f in junk.db.corrupt-*; do
	case $f in *-wal | *-shm) ;; *) aside=$f ;; esac
done
check cmp -s junk.orig "$aside"
check grep -q "a log" "$aside-wal"
db=$tmp/junk.db
check cmp -s lids0 <(db_lids)
sim_stop
finish
