# shellcheck shell=bash
# mcast_lib.sh - harness of the multicast tests (issue 11), independent of
# the subnet manager under test: the same scripts judge smd and opensm.
#
#   MC_SM=smd     (default) the daemon of this tree: $SMD --config C --db D
#   MC_SM=opensm  opensm as a daemon (-F /dev/null, private cache/log dirs)
#   MC_SM=custom  MC_SM_CMD, a shell command run in the SM's work dir
#   MC_SMKEY      SM_Key of trusted SA queries (default 1: opensm's default)
#   MCCLIENT      the client (default: tests/sim/mcclient of the build tree)
#   MC_SIM_ARGS   extra ibsim arguments (default "-M 2048", see below)
#   MC_JOBS       simulated hosts acting at once (default 4; ibsim serves
#                 10 clients: the SM, these, and 3 ibroute of checkmft.py)
#   MC_TMPDIR     work dirs (default /dev/shm when writable, see below)
#   KEEP=1        keep the work dir
#
# Why -M 2048: ibsim 0.10 stores MFT block b, position p at uint16 index
# (b * positions + p) * 64 of an array of MulticastFDBCap * positions
# entries, so with its default cap of 1024 the writes of blocks 16-31
# (MLIDs 0xC200-0xC3FF) land past the array.  With a cap of 2048 all 32
# blocks it really keeps fit; blocks 32 and up are ignored on Set and read
# as 0 (LASTBLOCK32 = 31), which checkmft.py would report as lost
# deliveries.  The tests keep far fewer groups alive than 512.
set -eu
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
top=$(cd "$here/../.." && pwd)
MC_SM=${MC_SM:-smd}
SMD=${SMD:-$top/smd/smd}
if [ -z "${MCCLIENT:-}" ]; then
	MCCLIENT=${top_builddir:+$top_builddir/tests/sim/mcclient}
	[ -n "$MCCLIENT" ] && [ -x "$MCCLIENT" ] || MCCLIENT=$top/tests/sim/mcclient
fi
MC_SMKEY=${MC_SMKEY:-1}
MC_SIM_ARGS=${MC_SIM_ARGS:--M 2048}
MC_JOBS=${MC_JOBS:-4}
# Every simulator client (tools, mcclient children) builds umad2sim's fake
# sysfs tree in its cwd: on tmpfs that is several times faster than on a
# disk-backed /tmp (648 hosts joining: ~1 s against 4-7 s here)
if [ -z "${MC_TMPDIR:-}" ] && [ -d /dev/shm ] && [ -w /dev/shm ]; then MC_TMPDIR=/dev/shm; fi
export TMPDIR=${MC_TMPDIR:-${TMPDIR:-/tmp}}
# shellcheck disable=SC2034 # used by the scripts that source this
GEN="python3 $top/tests/gen/topogen.py"
CHECKMFT="python3 $here/checkmft.py"
export ASAN_OPTIONS=${ASAN_OPTIONS:-verify_asan_link_order=0:detect_leaks=1:suppressions=$top/tests/asan.supp}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$top/tests/lsan.supp}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

for tool in ibsim ibnetdiscover ibroute saquery python3; do
	command -v "$tool" >/dev/null || { echo "missing $tool" >&2; exit 99; }
done
[ -x "$MCCLIENT" ] || { echo "missing $MCCLIENT: build first (make check builds it)" >&2; exit 99; }
case $MC_SM in
smd) [ -x "$SMD" ] || { echo "missing $SMD: build first" >&2; exit 99; } ;;
opensm) command -v opensm >/dev/null || { echo "opensm not installed" >&2; exit 77; } ;;
custom) [ -n "${MC_SM_CMD:-}" ] || { echo "MC_SM=custom needs MC_SM_CMD" >&2; exit 99; } ;;
*) echo "MC_SM must be smd, opensm or custom" >&2; exit 99 ;;
esac

# shellcheck source=simlib.sh
. "$here/simlib.sh"

t_pass=0
t_fail=0
ok() { t_pass=$((t_pass + 1)); echo "PASS: $*"; }
bad() { t_fail=$((t_fail + 1)); echo "FAIL: $*"; }
check() { if "$@"; then ok "$*"; else bad "$*"; fi; }
finish() {
	echo "$t_pass passed, $t_fail failed (SM: $MC_SM)"
	[ "$t_fail" -eq 0 ]
}

mc_tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcast.XXXXXX")
mc_sm_pid=
mc_cleanup() {
	mc_sm_stop || true
	sim_stop
	if [ -n "${KEEP:-}" ]; then echo "kept: $mc_tmp" >&2; else rm -rf "$mc_tmp"; fi
}
trap mc_cleanup EXIT

# mc_sim_start NETFILE
mc_sim_start() {
	# shellcheck disable=SC2086
	sim_start "$1" $MC_SIM_ARGS >"$mc_tmp/simlib.log" 2>&1 || { cat "$mc_tmp/simlib.log" >&2; return 1; }
}

# mc_client [mcclient args...]: as a simulator client on SIM_HOST (default:
# the SM's host); cwd is the work dir (umad2sim puts sys-<pid> there)
mc_client() {
	(cd "$mc_tmp" && sim_run "$MCCLIENT" "$@")
}

# mc_fanout HOSTFILE [mcclient args...]: the same operations from every host
mc_fanout() {
	local hosts=$1
	shift
	(cd "$mc_tmp" && sim_run "$MCCLIENT" --jobs "$MC_JOBS" --fanout "$hosts" "$@")
}

# The CA nodes of a topology file, one name a line
mc_hosts() { awk '/^(Hca|Ca)[ \t]/ { match($0, /"[^"]*"/); print substr($0, RSTART + 1, RLENGTH - 2) }' "$1"; }

# mc_sm_start: the SM under test, as a daemon on the simulator's first node;
# returns once its SA answers a NodeRecord query and the last host has a LID
mc_sm_start() {
	local d="$mc_tmp/sm" net=$1 last a b
	mkdir -p "$d"
	case $MC_SM in
	smd)
		# The SA trusts queries carrying the subnet's SM_Key (members shown)
		printf 'sweep_interval = 0\nsm_key = %s\n' "$MC_SMKEY" >"$d/smd.conf"
		chmod 600 "$d/smd.conf"
		(cd "$d" && exec env LD_PRELOAD="$SIM_PRELOAD" RUNTIME_DIRECTORY="$d" \
			"$SMD" --config "$d/smd.conf" --db "$d/smd.db" >"$d/out" 2>&1) &
		;;
	opensm)
		(cd "$d" && exec env LD_PRELOAD="$SIM_PRELOAD" OSM_CACHE_DIR="$d" OSM_TMP_DIR="$d" \
			opensm -F /dev/null -f "$d/opensm.log" -e --dump_files_dir "$d" \
			>"$d/out" 2>&1) &
		;;
	custom)
		(cd "$d" && LD_PRELOAD="$SIM_PRELOAD" exec sh -c "$MC_SM_CMD" >"$d/out" 2>&1) &
		;;
	esac
	mc_sm_pid=$!
	last=$(mc_hosts "$net" | tail -n 1)
	for _ in $(seq 600); do
		if ! kill -0 "$mc_sm_pid" 2>/dev/null; then
			echo "the SM ($MC_SM) exited; its output:" >&2
			tail -n 20 "$d/out" >&2
			return 1
		fi
		# (mcclient's exit status is not the point: under umad2sim a
		# big table has damaged records; callers may use pipefail)
		a=$(SIM_RUN_TIMEOUT=20 mc_client --timeout 300 --retries 0 --quiet-records \
			rawtable attr=0x11 2>/dev/null || true)
		b=$(SIM_HOST=$last SIM_RUN_TIMEOUT=20 mc_client info 2>/dev/null || true)
		case $a in *'op=rawtable status=0x0000 '*)
			case $b in *'op=info lid='[1-9]*) return 0 ;; esac ;;
		esac
		sleep 0.5
	done
	echo "the SM ($MC_SM) did not answer in 300 s" >&2
	return 1
}

# mc_sm_stop: SIGTERM, bounded wait (a killed client leaks its ibsim slot)
mc_sm_stop() {
	[ -n "$mc_sm_pid" ] || return 0
	kill -TERM "$mc_sm_pid" 2>/dev/null || true
	for _ in $(seq 300); do
		kill -0 "$mc_sm_pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$mc_sm_pid" 2>/dev/null || true
	wait "$mc_sm_pid" 2>/dev/null || true
	mc_sm_pid=
}

# mc_sm_rss_kb: the SM's resident set (VmRSS) in kB (the subshell exec'd it)
mc_sm_rss_kb() { awk '/^VmRSS:/ { print $2 }' "/proc/$mc_sm_pid/status" 2>/dev/null || echo 0; }

# mc_count FILE OP STATUS: lines of FILE with op=OP status=STATUS
mc_count() { grep -c " op=$2 status=$3 " "$1" || true; }

# mc_values FILE OP KEY: the distinct values of KEY in successful OP lines
mc_values() {
	awk -v op="$2" -v key="$3" '
		index($0, " op=" op " status=0x0000 ") {
			for (i = 1; i <= NF; i++) { n = index($i, "="); if (substr($i, 1, n - 1) == key) print substr($i, n + 1) }
		}' "$1" | sort -u
}

# mc_checkmft ARGS...: checkmft.py until it passes (the SM may still be
# programming the tables; bounded: 10 tries 3 s apart), output in $mc_tmp/checkmft.out
mc_checkmft() {
	local i
	for i in $(seq 10); do
		if (cd "$mc_tmp" && MCCLIENT=$MCCLIENT timeout -k 10 300 $CHECKMFT \
			--smkey "$MC_SMKEY" "$@") >"$mc_tmp/checkmft.out" 2>&1; then
			[ "$i" -gt 1 ] && echo "(checkmft passed at attempt $i)"
			return 0
		fi
		sleep 3
	done
	return 1
}
