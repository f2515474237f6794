# shellcheck shell=bash
# simlib.sh - run a private ibsim fabric simulator for tests.  Source it:
#
#   . tests/sim/simlib.sh
#   sim_start fabric.net            # private ibsim, waits until it is ready
#   sim_run ibnetdiscover           # any libibumad program, as a sim client
#   SIM_HOST=host-0003 sim_run smpquery nodeinfo 1
#   sim_console 'Unlink "sw-02"[3]' # ibsim console command
#   sim_stop                        # also run automatically on EXIT
#
# Variables the caller may set (before sim_start):
#   SIM_DIR            work dir (default: a fresh mktemp -d, removed by sim_stop)
#   SIM_KEEP=1         keep SIM_DIR (ibsim.log, ...) after sim_stop
#   SIM_READY_TIMEOUT  seconds to wait for "Network simulator ready" (default 180)
#   SIM_RUN_TIMEOUT    seconds a sim_run command may take (default 300)
#   SIM_UMAD2SIM       path of libumad2sim.so
#   SIM_HOST           node name a sim_run client attaches to (default: first
#                      node of the file, i.e. the SM host of topogen fabrics)
#   SIM_PRELOAD_BEFORE libraries sim_run preloads BEFORE libumad2sim.so (shims
#                      that wrap open/write must come first, see madcount.c)
#   SIM_IBSIM_PRELOAD  a library preloaded into ibsim itself (sma_shim.c: an
#                      SMA that enforces M_Key, which ibsim does not)
# Exported by sim_start: IBSIM_SOCKNAME, SIM_DIR, SIM_LOG, SIM_PRELOAD.
# sim_start installs EXIT/INT/TERM traps that call sim_stop; an EXIT trap the
# caller set before is kept and run afterwards, and so is a function named
# sim_cleanup_hook if one is defined.
#
# Simulator quirks (ibsim 0.10 / umad2sim, Debian 12), checked while writing
# this (more, for SM authors, in tests/sim/README.md):
#  * ibsim's console reads stdin; at EOF it spins at 100% CPU.  We give it a
#    FIFO that a "sleep" process holds open for writing; console commands are
#    written into the same FIFO.  Both processes are killed by sim_stop.
#  * IBSIM_SOCKNAME names ibsim's abstract unix sockets; it must be set both
#    for ibsim and for every client.  Distinct names => independent fabrics.
#  * A client that starts before ibsim (or with a wrong IBSIM_SOCKNAME) does
#    not fail: umad2sim retries connect() every 2 s forever.  Hence the
#    timeout on every sim_run.
#  * At most 10 clients at a time (IBSIM_MAX_CLIENTS).  The 11th fails at
#    once ("sim_init: connect failed").  A slot is freed only when the client
#    exits normally (umad2sim's atexit handler disconnects): a client killed
#    by a signal it does not handle (SIGKILL, or timeout(1)'s SIGTERM on a
#    diag tool) leaks its slot for the life of that ibsim.
#  * umad2sim fakes /sys/class/infiniband* under "./sys-<pid>" in the
#    client's CURRENT directory (created on first use, removed at normal
#    exit).  The cwd must be writable, a client must not chdir() after its
#    first umad call, and killed clients leave sys-<pid> behind: sim_run
#    removes such leftovers of dead processes.
#  * A client that sends MADs much faster than it reads them can deadlock
#    with ibsim: umad2sim holds a global mutex while write() blocks on the
#    full socket to ibsim, its receiver thread needs that mutex, and ibsim
#    then spins at 100% CPU retrying the reply on EAGAIN forever.  Seen with
#    a 5000-MAD burst; 8-256 outstanding with concurrent reads was fine.
#  * Startup is fast (0.1-0.2 s for 1344 nodes, 1.6 s for 9472; sim_start
#    prints it), but the default limits (2048 nodes, 256 switches, 13312 ports,
#    LinearFDBCap 30720) make ibsim abort on larger files ("no more
#    switches"): sim_start raises -N/-S/-P/-L from the file's contents.
#  * Every port line of our files triggers a harmless "parse_port_connection_
#    data: cannot parse remote lid and connection type" warning in the log.

SIM_UMAD2SIM=${SIM_UMAD2SIM:-/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so}
_SIM_LIB_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SIM_READY_TIMEOUT=${SIM_READY_TIMEOUT:-180}
SIM_RUN_TIMEOUT=${SIM_RUN_TIMEOUT:-300}
_SIM_PID=
_SIM_SLEEPER_PID=
_SIM_OWN_DIR=
_SIM_CLIENT_PIDS=
_SIM_SYNC=0

_SIM_PREV_EXIT_TRAP=
_SIM_TRAPPED=

_sim_log() { printf 'simlib: %s\n' "$*" >&2; }

# Install our EXIT/INT/TERM traps once, keeping the caller's EXIT trap (if
# any) to run after sim_stop.
_sim_install_traps() {
	local prev
	[ -z "$_SIM_TRAPPED" ] || return 0
	prev=$(trap -p EXIT)		# "trap -- 'CMD' EXIT" or empty
	if [ -n "$prev" ]; then
		prev=${prev#"trap -- "}
		prev=${prev%" EXIT"}
		eval "_SIM_PREV_EXIT_TRAP=$prev"
	fi
	trap '_sim_on_exit' EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	_SIM_TRAPPED=1
}

# Print "-N n -S s -P p [-L l]" when NETFILE exceeds ibsim's default limits.
sim_limits() {
	awk '
	/^Switch[ \t]/ { n++; s++; p += $2 + 1; lids++ ; next }
	/^(Hca|Ca|Rt)[ \t]/ { n++; p += $2; lids += $2; next }
	END {
		out = ""
		if (n > 2048)   out = out sprintf(" -N %d", n + 64)
		if (s > 256)    out = out sprintf(" -S %d", s + 16)
		if (p > 13312)  out = out sprintf(" -P %d", p + 256)
		# LIDs must stay below LinearFDBCap; 49152 = 768 LFT blocks is the
		# most ibsim accepts (LinearForwardingTable attribute modifier <= 767).
		if (lids * 1.25 > 30720) out = out " -L 49152"
		print out
	}' "$1"
}

# sim_start NETFILE [extra ibsim args...]
sim_start() {
	local net=$1 t0 waited limits
	shift
	if [ -n "$_SIM_PID" ]; then
		_sim_log "sim_start: a simulator is already running (pid $_SIM_PID)"
		return 1
	fi
	[ -r "$net" ] || { _sim_log "sim_start: cannot read $net"; return 1; }
	[ -r "$SIM_UMAD2SIM" ] || { _sim_log "missing $SIM_UMAD2SIM (libumad2sim0)"; return 1; }
	command -v ibsim >/dev/null || { _sim_log "ibsim not installed (ibsim-utils)"; return 1; }

	if [ -z "${SIM_DIR:-}" ]; then
		SIM_DIR=$(mktemp -d "${TMPDIR:-/tmp}/smdsim.XXXXXX")
		_SIM_OWN_DIR=1
	else
		mkdir -p "$SIM_DIR"
	fi
	export SIM_DIR
	export SIM_LOG="$SIM_DIR/ibsim.log"
	export SIM_PRELOAD="$SIM_UMAD2SIM"
	# Every client gets umad2sim_guard.so first: without it a MAD that
	# reaches a client before it registers its agent kills it (see the file)
	if cc -shared -fPIC -O2 -o "$SIM_DIR/umad2sim_guard.so" "$_SIM_LIB_DIR/umad2sim_guard.c" -ldl \
		2>"$SIM_DIR/guard.err"; then
		SIM_PRELOAD="$SIM_DIR/umad2sim_guard.so:$SIM_UMAD2SIM"
	else
		_sim_log "sim_start: cannot build umad2sim_guard.so: clients may crash at start"
	fi
	export IBSIM_SOCKNAME="smdsim-$$-${RANDOM}${RANDOM}"

	_sim_install_traps

	rm -f "$SIM_DIR/console"
	mkfifo "$SIM_DIR/console"
	# The sleeper keeps the FIFO open for writing so ibsim never sees EOF.
	# (Its open() blocks until ibsim opens the read end, hence background.)
	sleep 2147483647 >"$SIM_DIR/console" &
	_SIM_SLEEPER_PID=$!

	limits=$(sim_limits "$net")
	t0=$(date +%s.%N)
	# shellcheck disable=SC2086
	env ${SIM_IBSIM_PRELOAD:+LD_PRELOAD="$SIM_IBSIM_PRELOAD"} ibsim -s $limits "$@" "$net" \
		<"$SIM_DIR/console" >"$SIM_LOG" 2>&1 &
	_SIM_PID=$!

	waited=0
	while ! grep -q "Network simulator ready" "$SIM_LOG" 2>/dev/null; do
		if ! kill -0 "$_SIM_PID" 2>/dev/null; then
			_sim_log "ibsim exited during startup; log tail:"
			tail -n 15 "$SIM_LOG" >&2
			_SIM_PID=
			sim_stop
			return 1
		fi
		if [ "$waited" -ge $((SIM_READY_TIMEOUT * 10)) ]; then
			_sim_log "ibsim not ready after ${SIM_READY_TIMEOUT}s"
			tail -n 15 "$SIM_LOG" >&2
			sim_stop
			return 1
		fi
		sleep 0.1
		waited=$((waited + 1))
	done
	_sim_log "ibsim pid $_SIM_PID ready in $(awk -v a="$t0" -v b="$(date +%s.%N)" \
		'BEGIN{printf "%.2f", b-a}')s (sock $IBSIM_SOCKNAME${limits:+, limits$limits})"
}

# Remove ./sys-<pid> trees that umad2sim left behind for dead processes.
_sim_clean_sysdirs() {
	local d pid
	for d in ./sys-[0-9]*; do
		[ -d "$d/class/infiniband_mad" ] || [ -d "$d/sys" ] || continue
		pid=${d#./sys-}
		kill -0 "$pid" 2>/dev/null || rm -rf "$d"
	done
}

# sim_run CMD [ARGS...]: run CMD as a simulator client, in the foreground,
# attached where SIM_HOST (exported, or given as a prefix assignment) says,
# with a timeout (SIM_RUN_TIMEOUT).  Returns CMD's status (124 on timeout).
sim_run() {
	local rc=0 pid
	[ -n "$_SIM_PID" ] || { _sim_log "sim_run: no simulator running"; return 1; }
	timeout -k 10 "$SIM_RUN_TIMEOUT" \
		env LD_PRELOAD="${SIM_PRELOAD_BEFORE:+$SIM_PRELOAD_BEFORE:}$SIM_PRELOAD${LD_PRELOAD:+:$LD_PRELOAD}" \
		"$@" &
	pid=$!
	_SIM_CLIENT_PIDS="$_SIM_CLIENT_PIDS $pid"
	wait "$pid" || rc=$?
	_SIM_CLIENT_PIDS=${_SIM_CLIENT_PIDS% "$pid"}
	[ "$rc" -eq 124 ] && _sim_log "sim_run: '$1' timed out after ${SIM_RUN_TIMEOUT}s"
	_sim_clean_sysdirs
	return "$rc"
}

# sim_console LINE...: send console command(s) to ibsim (output goes to
# SIM_LOG).  Returns once ibsim has executed them (1 after 30 s without).
sim_console() {
	local line
	[ -n "$_SIM_PID" ] || { _sim_log "sim_console: no simulator running"; return 1; }
	# ibsim runs console commands in order and names an unknown one in
	# its log: a unique unknown command after the others, once named,
	# says every command before it has taken effect
	_SIM_SYNC=$((_SIM_SYNC + 1))
	set -- "$@" "smd-sync-$$-$_SIM_SYNC"
	for line in "$@"; do
		timeout 10 sh -c 'printf "%s\n" "$1" >"$2"' sh "$line" "$SIM_DIR/console" ||
			{ _sim_log "sim_console: cannot write to console"; return 1; }
	done
	for _ in $(seq 600); do
		grep -q "command 'smd-sync-$$-$_SIM_SYNC' unknown" "$SIM_LOG" 2>/dev/null && return 0
		sleep 0.05
	done
	_sim_log "sim_console: the simulator did not take the commands in 30 s"
	return 1
}

# Kill one of our processes by pid, waiting (bounded) for it to go away.
_sim_kill() {
	local pid=$1 i
	[ -n "$pid" ] || return 0
	kill "$pid" 2>/dev/null || return 0
	for i in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -9 "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

sim_stop() {
	local p
	for p in $_SIM_CLIENT_PIDS; do _sim_kill "$p"; done
	_SIM_CLIENT_PIDS=
	_sim_kill "$_SIM_PID"
	_sim_kill "$_SIM_SLEEPER_PID"
	_SIM_PID=
	_SIM_SLEEPER_PID=
	_sim_clean_sysdirs
	if [ -n "$_SIM_OWN_DIR" ] && [ -z "${SIM_KEEP:-}" ] && [ -n "${SIM_DIR:-}" ]; then
		rm -rf "$SIM_DIR"
		SIM_DIR=
		_SIM_OWN_DIR=
	elif [ -n "${SIM_DIR:-}" ]; then
		rm -f "$SIM_DIR/console"
	fi
	return 0
}

_sim_on_exit() {
	local rc=$?
	sim_stop
	if declare -F sim_cleanup_hook >/dev/null; then sim_cleanup_hook || true; fi
	if [ -n "$_SIM_PREV_EXIT_TRAP" ]; then eval "$_SIM_PREV_EXIT_TRAP" || true; fi
	exit "$rc"
}
