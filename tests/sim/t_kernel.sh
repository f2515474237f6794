#!/bin/bash
# Issue 26: smd against a umad device that behaves as the Linux kernel's
# (tests/sim/kernel_shim.c, written from user_mad.c and user_mad.rst), where
# the simulator's umad2sim hides it:
#  1. a real, pollable descriptor: smd waits on it with epoll (the path a
#     real port takes); every request comes with an SL, a P_Key index and,
#     for the SA, a GRH or none, as a kernel hands them over: every answer
#     (SA records, statuses, each RMPP segment, SMInfo, TrapRepress) goes
#     back with the request's, and a subscriber's Reports with its
#     subscription's; a subscriber that leaves a Report unanswered gets a
#     retry with a TID of its own, and the kernel's duplicate-TID rule
#     (which the shim enforces, and which a client of our own trips to show
#     that it works) never fires; GetTraceTable and an unknown method get
#     "method not supported"; then the device goes away: smd exits with
#     status 3 within 5 s, saying why in the log and in STATUS=;
#  2. the same end on the simulator's own descriptor (smd's poll timer);
#  3. issm held by another SM (EAGAIN, EBUSY, EPERM under O_NONBLOCK; a
#     blocking open would hang for ever): exit status 4 within a second,
#     "another SM owns port";
#  4. a port whose PortInfo says IsSMDisabled: exit status 5.
. "$(dirname "$0")/common.sh"
C=${SACLIENT:-${top_builddir:-$top}/tests/sim/saclient}
[ -x "$C" ] || { echo "missing $C: build first" >&2; exit 99; }
tmp=$(mktemp -d)
lpid=
rc=
npid=
cleanup() {
	# the listener ends at the file (a kill would reach its shell only)
	touch "$tmp/stop"
	[ -n "$lpid" ] && wait "$lpid" 2>/dev/null
	[ -n "$npid" ] && kill "$npid" 2>/dev/null
	[ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null
	[ -n "${KEEP:-}" ] || rm -rf "$tmp"
}
trap 'cleanup; sim_stop' EXIT
$GEN ft3 4 -o "$tmp/net" 2>/dev/null
cc -shared -fPIC -O2 -o "$tmp/kshim.so" "$here/kernel_shim.c" -ldl -lpthread ||
	{ bad "building the shim"; finish; }
sim_start "$tmp/net" >/dev/null 2>&1
printf 'sweep_interval = 0\nlog_level = debug\n' >"$tmp/conf"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# ksmd DIR ENV...: smd under the shim in DIR (its sd_notify in DIR/notes)
ksmd() {
	local dir=$1
	shift
	mkdir -p "$dir"
	: >"$dir/out"
	python3 "$here/notify_listen.py" "$dir/notify" "$dir/notes" &
	npid=$!
	for _ in $(seq 100); do [ -S "$dir/notify" ] && break; sleep 0.05; done
	(cd "$dir" && exec env LD_PRELOAD="$tmp/kshim.so:$SIM_PRELOAD" KSHIM_LOG="$dir/klog" \
		RUNTIME_DIRECTORY="$dir" NOTIFY_SOCKET="$dir/notify" "$@" \
		"$SMD" --config "$tmp/conf" --db "$dir/smd.db" >>"$dir/out" 2>&1) &
	smd_pid=$!
}
# ended SECONDS: smd has exited within SECONDS, its status in $rc (else it
# is killed, rc is empty, and ended fails)
ended() {
	local t0 in_time=0
	t0=$(now)
	while kill -0 "$smd_pid" 2>/dev/null; do
		[ "$(awk -v e="$(elapsed "$t0")" -v m="$1" 'BEGIN { print (e > m) }')" = 1 ] && break
		sleep 0.02
	done
	kill -0 "$smd_pid" 2>/dev/null || in_time=1
	[ "$in_time" = 1 ] || kill -KILL "$smd_pid" 2>/dev/null
	rc=0
	wait "$smd_pid" || rc=$?
	[ "$in_time" = 1 ] || rc=
	smd_pid=
	kill "$npid" 2>/dev/null
	wait "$npid" 2>/dev/null || true
	npid=
	[ "$in_time" = 1 ]
}
# sac HOST VERBS...: saclient there; a verb that fails is the checks' to judge
sac() { local h=$1; shift; SIM_HOST=$h sim_run "$C" "$@" 2>>"$tmp/err" || true; }
port_guid() {
	local g
	g=$(awk -v h="\"$1\"" '/^caguid=/ { split($1, a, "="); g = a[2] }
		$1 == "Hca" && $3 == h { print g }' "$tmp/net")
	printf '0x%016x\n' $((g + 1))
}

# ---- the shim's duplicate-TID rule works: a client of our own trips it ----
# Two requests with one TID while the first waits for its answer: the
# second fails with EINVAL (user_mad.c, is_duplicate); a third with a new
# TID goes. The client speaks libibumad through ctypes, under the shim.
cat >"$tmp/dup.py" <<'PY'
import ctypes, os
u = ctypes.CDLL("libibumad.so.3", use_errno=True)
u.umad_get_mad.restype = ctypes.c_void_p
assert u.umad_init() == 0
fd = u.umad_open_port(None, 0)
mask = (ctypes.c_long * 2)(0, 0)
agent = u.umad_register(fd, 3, 2, 0, mask)
assert fd >= 0 and agent >= 0, (fd, agent)
buf = ctypes.create_string_buffer(1024)
def send(tid):
    mad = bytearray(256)
    mad[0:4] = bytes([1, 3, 2, 1])               # Get, SA class version 2
    mad[8:16] = tid.to_bytes(8, "big")
    mad[16:18] = (1).to_bytes(2, "big")          # ClassPortInfo
    ctypes.memmove(u.umad_get_mad(buf), bytes(mad), 256)
    u.umad_set_addr(buf, 1, 1, 0, 0x80010000)
    r = u.umad_send(fd, agent, buf, 256, 2000, 0)
    return "ok" if r == 0 else os.strerror(ctypes.get_errno())
print("first", send(0x1234), "again", send(0x1234), "new", send(0x1235))
PY
SIM_HOST=host-0003 sim_run env KSHIM_LOG="$tmp/dup.log" \
	LD_PRELOAD="$tmp/kshim.so:$SIM_PRELOAD" python3 "$tmp/dup.py" >"$tmp/dup.out" 2>&1 || true
check grep -q "^first ok again Invalid argument new ok$" "$tmp/dup.out"
check test "$(grep -c '^dup-refused class=0x03 method=0x01 attr=0x0001 tid=0x00001234' "$tmp/dup.log")" -eq 1

# ---- 1. the epoll path, answers as requested, Report retries, the device gone ----
d=$tmp/a
ksmd "$d" KSHIM_POLLABLE=1 KSHIM_MARK=1 KSHIM_GONE="$d/gone"
check wait_for "$d/out" "SA: answering" 1
check grep -q "^pollable fd=" "$d/klog"
check grep -q "MADs: waiting on the umad descriptor (epoll)" "$d/out"
a=host-0005 s=host-0007 v=host-0009
# A subscriber to trap 65 that leaves the first Report unanswered
SIM_HOST=$s sim_run "$C" --issm sub trap=65 \; listen secs=60 count=2 noresp=1 \
	until="$tmp/stop" >"$tmp/listen" 2>>"$tmp/err" &
lpid=$!
check wait_for "$tmp/listen" "^listening" 1
# Requests of every kind from another host: records (Get), RMPP tables,
# statuses, methods the SA lacks; 24 transactions, about half with a GRH
sac $a cpi \; pir \; nr portguid="$(port_guid $v)" \; raw method=0x13 attr=0x35 \; \
	raw method=0x20 attr=0x11 \; path dlid=3 \; raw method=0x01 attr=0x99 \; \
	cpi \; cpi \; cpi \; cpi \; cpi \; cpi \; cpi \; cpi \; cpi \; cpi \; cpi \; cpi \; \
	cpi \; cpi \; cpi \; cpi \; svc-get >"$tmp/client"
check grep -q "^raw status=0x0008 method=0x93 attr=0x0035$" "$tmp/client"	# GetTraceTable
check grep -q "^raw status=0x0008 method=0xa0 attr=0x0011$" "$tmp/client"	# no such method
check grep -q "^raw status=0x000c method=0x81 attr=0x0099$" "$tmp/client"	# no such attribute
check grep -q "^pir records=[1-9]" "$tmp/client"
check test "$(grep -c "^cpi capmask=" "$tmp/client")" -eq 17
# SMInfo, LID routed to the SM
SIM_HOST=$a sim_run sminfo >"$tmp/sminfo" 2>&1 || true
check grep -q "SMINFO_MASTER" "$tmp/sminfo"
# A host unplugged: traps 128 (TrapRepress), a sweep, a Report of trap 65
sim_console "Unlink \"$v\"[1]"
check wait_for "$tmp/listen" "^report trap=65 " 2
wait "$lpid" || true
lpid=
rc=
# The retry is a new transaction: a TID of its own
check test "$(sed -n 's/^report trap=65 .*tid=//p' "$tmp/listen" | sort -u | wc -l)" -eq 2
check test "$(grep -c '^dup-refused' "$d/klog")" -eq 0
check test "$(grep -c ' res=EINVAL' "$d/klog")" -eq 0
# Every answer as its request came; counts of what was judged
python3 - "$d/klog" >"$tmp/judged" <<'PY' || bad "answers not addressed as their requests came"
import re, sys
def fields(line):
    return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
PATH = ("sl", "pkey", "grh", "gid", "tclass", "flow", "hop", "gidx")
req, subs, n, grh, bad = {}, {}, {}, {0: set(), 1: set()}, 0
for line in open(sys.argv[1]):
    kind = line.split(" ", 1)[0]
    f = fields(line)
    if kind == "recv":
        key = (f["class"], f["tid"], f["slid"])
        path = tuple(f.get(k) for k in PATH)
        if req.setdefault(key, path) != path:
            print("the shim gave one transaction two paths:", line.strip()); bad += 1
        req.setdefault((f["class"], f["tid"], "dr"), path)
        if f["class"] == "0x03" and f["method"] == "0x02" and f["attr"] == "0x0003":
            subs[f["slid"]] = path
    elif kind == "send":
        m = int(f["method"], 16)
        path = tuple(f.get(k) for k in PATH)
        if m == 0x06:				# a Report: the subscription's path
            what, want = "report", subs.get(f["dlid"])
        elif m & 0x80 or m == 0x07:		# an answer: its request's
            what = {0x07: "traprepress", 0x92: "rmpp"}.get(m, "answer")
            if f["class"] == "0x03" and f["rmpp"] == "1":
                what = "rmpp"
            if f["class"] in ("0x01", "0x81") and m == 0x81:
                what = "sminfo"
            want = req.get((f["class"], f["tid"], "dr" if f["dlid"] == "65535" else f["dlid"]))
        else:
            continue
        if want is None:
            print("no request for:", line.strip()); bad += 1; continue
        if want != path:
            print("not as requested:", line.strip(), "wanted", want); bad += 1; continue
        n[what] = n.get(what, 0) + 1
        grh[int(f["grh"])].add((f["class"], f["tid"], f["dlid"]))
print(" ".join("%s=%d" % kv for kv in sorted(n.items())),
      "grh=%d nogrh=%d bad=%d" % (len(grh[1]), len(grh[0]), bad))
sys.exit(1 if bad else 0)
PY
cat "$tmp/judged"
jv() { sed -n "s/.*\<$1=\([0-9]*\).*/\1/p" "$tmp/judged"; }
check test "$(jv bad)" = 0
check test "$(jv answer)" -ge 20		# Get answers and statuses
check test "$(jv rmpp)" -ge 5		# RMPP segments of the tables
check test "$(jv report)" -ge 2		# the Report and its retry
check test "$(jv sminfo)" -ge 1
check test "$(jv traprepress)" -ge 1
# Transactions answered with a GRH, and without (of some 30; each about half)
check test "$(jv grh)" -ge 3
check test "$(jv nogrh)" -ge 3
# The device goes away: exit 3 within 5 s, why in the log and STATUS=
t0=$(now)
touch "$d/gone"
check ended 5
echo "smd ended $(elapsed "$t0") s after the device went away (epoll path)"
check test "$rc" = 3
check grep -q "InfiniBand port ibsim0:1 is gone (the umad device reports EPOLLERR)" "$d/out"
check test "$(grep -c "InfiniBand port .* is gone" "$d/out")" -eq 1	# once
check grep -q "^STOPPING=1 | STATUS=InfiniBand port .* is gone" "$d/notes"

# ---- 2. the same on the simulator's descriptor (the poll timer) ----
d=$tmp/b
ksmd "$d" KSHIM_GONE="$d/gone"
check wait_for "$d/out" "subnet UP" 1
check grep -q "MAD port fd cannot be watched" "$d/out"
t0=$(now)
touch "$d/gone"
check ended 5
echo "smd ended $(elapsed "$t0") s after the device went away (poll timer)"
check test "$rc" = 3
# poll() says POLLERR, or a read EIO first, whichever the loop meets first
check grep -Eq "InfiniBand port ibsim0:1 is gone \((the umad device reports POLLERR|reading MADs failed: Input/output error)\)" "$d/out"
check test "$(grep -c "InfiniBand port .* is gone" "$d/out")" -eq 1

# ---- 3. issm held by another SM: status 4 within a second ----
for e in eagain ebusy eperm; do
	d=$tmp/issm-$e
	t0=$(now)
	ksmd "$d" KSHIM_ISSM=$e
	check ended 1
	echo "smd ended $(elapsed "$t0") s after its start (issm: $e)"
	check test "$rc" = 4
	check grep -q "another SM owns port ibsim0:1: /dev/infiniband/issm0 is held open" "$d/out"
	check grep -q "^STATUS=another SM owns port ibsim0:1" "$d/notes"
	check grep -q "^issm-refused" "$d/klog"
	check test "$(grep -c "^issm-blocked" "$d/klog")" -eq 0
done

# ---- 4. IsSMDisabled: status 5 ----
d=$tmp/smdis
ksmd "$d" KSHIM_SMDISABLED=1
check ended 5
check test "$rc" = 5
check grep -q "port ibsim0:1 cannot run an SM: its PortInfo says IsSMDisabled" "$d/out"
check grep -q "^smdisabled path=" "$d/klog"
finish
