# shellcheck shell=bash
# Shared setup of the integration tests: they run smd (built in this tree)
# on a private ibsim fabric and judge the result with the real diagnostic
# tools only (checkfabric.py: ibnetdiscover, ibroute, smpquery).
set -eu
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
SMD=${SMD:-$top/smd/smd}
GEN="python3 $top/tests/gen/topogen.py"
# An ASan build of smd runs behind libumad2sim.so in LD_PRELOAD
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=1:suppressions=$top/tests/asan.supp}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$top/tests/lsan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

for tool in ibsim ibnetdiscover ibroute smpquery python3; do
	command -v "$tool" >/dev/null || { echo "missing $tool: run .ci/run or see README" >&2; exit 99; }
done
[ -x "$SMD" ] || { echo "missing $SMD: build first" >&2; exit 99; }

# shellcheck source=simlib.sh
. "$here/simlib.sh"

t_pass=0
t_fail=0
ok() { t_pass=$((t_pass + 1)); echo "PASS: $*"; }
bad() { t_fail=$((t_fail + 1)); echo "FAIL: $*"; }
check() { if "$@"; then ok "$*"; else bad "$*"; fi; }
finish() {
	echo "$t_pass passed, $t_fail failed"
	[ "$t_fail" -eq 0 ]
}

# wait_for FILE PATTERN COUNT: until PATTERN occurs COUNT times.  The bound
# (180 s) only keeps a broken smd from eating the test's time: an ASan build
# on a loaded 2-core machine must never come near it.
wait_for() {
	for _ in $(seq 1800); do
		[ "$(grep -c "$2" "$1" 2>/dev/null || true)" -ge "$3" ] 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# smd_start CONF DB OUT: smd as a daemon on the simulator, in the background
# (cwd: the directory of OUT, where umad2sim puts its sys-<pid>, and where
# its control socket goes, as under systemd's RuntimeDirectory=); sets smd_pid
smd_pid=
smd_start() {
	# Emptied here, not by the subshell's redirection: a wait_for that
	# follows must never see the previous run's lines
	: >"$3"
	(cd "$(dirname "$3")" && exec env LD_PRELOAD="$SIM_PRELOAD" RUNTIME_DIRECTORY="$PWD" \
		"$SMD" --config "$1" --db "$2" >"$3" 2>&1) &
	smd_pid=$!
}

# smd_stop: SIGTERM and wait; returns smd's exit status.  An smd that has
# not exited after 30 s (stuck, say, in a write to a deadlocked simulator)
# is killed and reported, so a test fails instead of hanging.
smd_stop() {
	local rc=0

	[ -n "$smd_pid" ] || return 0
	kill -TERM "$smd_pid" 2>/dev/null || true
	for _ in $(seq 300); do
		kill -0 "$smd_pid" 2>/dev/null || break
		sleep 0.1
	done
	if kill -0 "$smd_pid" 2>/dev/null; then
		echo "smd_stop: smd (pid $smd_pid) still runs 30 s after SIGTERM: killed" >&2
		kill -KILL "$smd_pid" 2>/dev/null || true
		wait "$smd_pid" 2>/dev/null || true
		smd_pid=
		return 124
	fi
	wait "$smd_pid" || rc=$?
	smd_pid=
	return "$rc"
}

# LIDs as the fabric reports them: "GUID LID" per CA port and switch, sorted
fabric_lids() {
	sim_run ibnetdiscover 2>/dev/null | awk '
		/^switchguid=/ { split($1, a, "="); sw = a[2] }
		/^Switch/ { match($0, /lid [0-9]+/); print sw, substr($0, RSTART + 4, RLENGTH - 4) }
		/^\[[0-9]+\]\([0-9a-f]+\)/ {
			match($0, /\(([0-9a-f]+)\)/); g = substr($0, RSTART + 1, RLENGTH - 2)
			match($0, /# lid [0-9]+/); print "0x" g, substr($0, RSTART + 6, RLENGTH - 6)
		}' | sort
}
