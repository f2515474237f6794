#!/bin/bash
# run_sm_check.sh NETFILE SMCMD [ARGS...]
#
# Start a private ibsim on NETFILE, run the subnet manager command once as a
# simulator client (it must configure the fabric and exit), then verify the
# result with checkfabric.py, and stop the simulator.  Exit status 0 = pass.
#
#   tests/sim/run_sm_check.sh fabric.net opensm -o
#   tests/sim/run_sm_check.sh fabric.net ./smd/smd --once --db @TMP@/smd.db
#
# In SMCMD, "@TMP@" is replaced by a private scratch directory (inside the
# simulator's work dir, removed at the end unless SIM_KEEP=1).  When SMCMD is
# opensm, it is pointed at that directory for everything it would write
# (log, cache, dump files; OSM_CACHE_DIR/OSM_TMP_DIR) and reads no config
# from /etc (-F /dev/null).
#
# Environment: SM_TIMEOUT (seconds, default 600), CHECK_ARGS (extra
# checkfabric.py arguments, e.g. "-v --jobs 4"), SIM_KEEP=1 (keep the work
# dir with ibsim.log, the SM's output and the checker's tool outputs), and
# the simlib.sh variables (SIM_HOST, SIM_READY_TIMEOUT, ...).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
if [ $# -lt 2 ]; then
	sed -n '2,20s/^# \{0,1\}//p' "$0" >&2
	exit 2
fi
net=$1
shift
[ -r "$net" ] || { echo "run_sm_check: cannot read $net" >&2; exit 2; }

# shellcheck source=simlib.sh
. "$here/simlib.sh"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

sim_start "$net"
smdir="$SIM_DIR/sm"
mkdir -p "$smdir"

# Build the SM command line: @TMP@ substitution, private paths for opensm.
cmd=()
for arg in "$@"; do
	cmd+=("${arg//@TMP@/$smdir}")
done
if [ "$(basename "${cmd[0]}")" = opensm ]; then
	export OSM_CACHE_DIR="$smdir" OSM_TMP_DIR="$smdir"
	cmd+=(-f "$smdir/opensm.log" -e --dump_files_dir "$smdir" -F /dev/null)
fi

echo "run_sm_check: $(basename "$net"): running: ${cmd[*]}"
sm_rc=0
t0=$(now)
SIM_RUN_TIMEOUT=${SM_TIMEOUT:-600} sim_run "${cmd[@]}" >"$smdir/sm.out" 2>&1 || sm_rc=$?
sm_secs=$(elapsed "$t0")
echo "run_sm_check: SM exited with status $sm_rc after ${sm_secs}s"
if [ "$sm_rc" -ne 0 ]; then
	echo "run_sm_check: last lines of the SM's output:"
	tail -n 20 "$smdir/sm.out" | sed 's/^/  | /'
fi

check_rc=0
t0=$(now)
# shellcheck disable=SC2086
timeout -k 10 1800 python3 "$here/checkfabric.py" ${CHECK_ARGS:-} \
	${SIM_KEEP:+--keep "$SIM_DIR/check"} "$net" || check_rc=$?
echo "run_sm_check: checker finished in $(elapsed "$t0")s (status $check_rc)"
[ -n "${SIM_KEEP:-}" ] && echo "run_sm_check: work dir kept: $SIM_DIR"

if [ "$sm_rc" -eq 0 ] && [ "$check_rc" -eq 0 ]; then
	echo "run_sm_check: PASS $(basename "$net") (SM ${sm_secs}s)"
	exit 0
fi
echo "run_sm_check: FAIL $(basename "$net")"
exit 1
