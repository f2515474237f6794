#!/bin/bash
# smd_exporter against a stand-in for smd that answers badly (fake_smd.py):
# garbage, an ERROR, no status line, the exporter's own series, a hang-up,
# silence, a drip that never ends, an answer without end. Every scrape still
# gets 200 with smd_up 0 (and the reason logged), within its timeout (the
# whole answer's, not a read's: the drip sends a byte every 0.2 s), and
# the exporter lives on; good answers, even in pieces, are relayed with
# smd_up 1. Idle HTTP clients and a request that is not HTTP cost it
# nothing. Its flags: --help, --version, bad values (exit 2), an address it
# cannot listen on (exit 1).
set -u
top_builddir=${top_builddir:-.}
srcdir=${srcdir:-.}
EXPORTER=${EXPORTER:-$top_builddir/exporter/smd_exporter}
command -v curl >/dev/null || { echo "SKIP: no curl"; exit 77; }
tmp=$(mktemp -d)
fake_pid= exp_pid= fake2_pid= exp2_pid=
trap 'kill $exp_pid $fake_pid $exp2_pid $fake2_pid 2>/dev/null; wait 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { if "$@"; then ok "$*"; else bad "$*"; fi; }
# wait_for FILE PATTERN: until PATTERN is in FILE (bounded, only against a hang)
wait_for() {
	for _ in $(seq 600); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# The flags
check "$EXPORTER" --help >"$tmp/help"
check grep -q -- '--web.listen-address=HOST:PORT' "$tmp/help"
check grep -q -- '--control-socket=PATH' "$tmp/help"
check test "$("$EXPORTER" --version)" = "smd_exporter $(sed -n 's/^AC_INIT(\[smd\], \[\([^]]*\)\].*/\1/p' "$srcdir/configure.ac")"
for args in "--control-timeout=0" "--control-timeout=abc" "--log.level=loud" "--bogus" "extra" \
	    "--control-socket=$(printf 'x%.0s' $(seq 120))"; do
	rc=0; "$EXPORTER" $args >/dev/null 2>&1 || rc=$?
	check test "$rc" -eq 2
done
for addr in "192.0.2.1:80" "127.0.0.1:99999" "127.0.0.1" "::1:80"; do
	rc=0; "$EXPORTER" --web.listen-address="$addr" >"$tmp/addr.log" 2>&1 || rc=$?
	check test "$rc" -eq 1
	check grep -q "$addr" "$tmp/addr.log"
done

modes="good garbage error nostatus own close silent drip split good"
python3 "$srcdir/tests/unit/fake_smd.py" "$tmp/control" $modes >"$tmp/fake.log" 2>&1 &
fake_pid=$!
check wait_for "$tmp/fake.log" ready
"$EXPORTER" --web.listen-address=127.0.0.1:0 --control-socket="$tmp/control" \
	--control-timeout=2 >"$tmp/exp.log" 2>&1 &
exp_pid=$!
check wait_for "$tmp/exp.log" "listening on"
port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$tmp/exp.log")
# scrape OUT: the status code; the body in OUT. smd's answer may take 2 s
# (--control-timeout); the bound, far above, fails a scrape that waits on a
# silent smd (300 s) or a drip (one byte every 0.2 s for 300 s)
scrape() { curl -s -o "$1" -w '%{http_code}' --max-time 30 "http://127.0.0.1:$port/metrics"; }
val() { awk -v s="$2" '$1 == s { print $2; n++ } END { exit n != 1 }' "$1"; }
i=0
for mode in $modes; do
	i=$((i + 1))
	check test "$(scrape "$tmp/s$i")" = 200
	case $mode in
	good | split)
		check test "$(val "$tmp/s$i" smd_up)" = 1
		check test "$(val "$tmp/s$i" smd_fake_total)" = 42
		;;
	*)
		check test "$(val "$tmp/s$i" smd_up)" = 0
		check test "$(grep -c '^smd_' "$tmp/s$i")" -eq 2
		;;
	esac
	check grep -q "conn $((i - 1)) $mode" "$tmp/fake.log"
	if command -v promtool >/dev/null; then
		check promtool check metrics <"$tmp/s$i"
	fi
done
# Each failure said why, once it changed
check grep -q "holds a NUL byte" "$tmp/exp.log"
check grep -q "smd: out of memory" "$tmp/exp.log"
check grep -q "no status line" "$tmp/exp.log"
check grep -q "the exporter's own series" "$tmp/exp.log"
check grep -q "closed the connection" "$tmp/exp.log"
check grep -q "no whole answer from smd within 2000 ms" "$tmp/exp.log"
check kill -0 "$exp_pid"

# An answer without end: the size bound stops it, not the clock. Its own
# exporter waits the longest --control-timeout allowed, so that a slow
# machine (the sanitizer build beside a busy CI) reaches the bound first.
python3 "$srcdir/tests/unit/fake_smd.py" "$tmp/control2" huge >"$tmp/fake2.log" 2>&1 &
fake2_pid=$!
check wait_for "$tmp/fake2.log" ready
"$EXPORTER" --web.listen-address=127.0.0.1:0 --control-socket="$tmp/control2" \
	--control-timeout=60 >"$tmp/exp2.log" 2>&1 &
exp2_pid=$!
check wait_for "$tmp/exp2.log" "listening on"
port2=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$tmp/exp2.log")
code=$(curl -s -o "$tmp/huge" -w '%{http_code}' --max-time 120 "http://127.0.0.1:$port2/metrics")
check test "$code" = 200
check test "$(val "$tmp/huge" smd_up)" = 0
check grep -q "conn 0 huge" "$tmp/fake2.log"
check grep -q "answer is over 268435456 bytes" "$tmp/exp2.log"
kill "$exp2_pid" "$fake2_pid" 2>/dev/null
wait "$exp2_pid" "$fake2_pid" 2>/dev/null
exp2_pid= fake2_pid=

# Idle HTTP clients, bytes that are not HTTP, a bad header: a scrape still goes through
python3 - "$port" >"$tmp/idle.log" 2>&1 <<'EOF' &
import socket, sys, time
socks = []
for _ in range(8):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
    socks.append(s)
# Not HTTP: held until MHD's timeout, like an idle client
z = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
z.sendall(b"\x00\xff GARBAGE \r\n\r\n")
# A header line without a colon: refused
g = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
g.sendall(b"GET /metrics HTTP/1.1\r\nBad header\r\n\r\n")
g.settimeout(10)
try:
    print("garbage answer:", g.recv(100)[:12])
except OSError as e:
    print("garbage:", e)
print("idle clients open", flush=True)
time.sleep(15)
EOF
idle_pid=$!
check wait_for "$tmp/idle.log" "idle clients open"
check test "$(scrape "$tmp/after")" = 200
check test "$(val "$tmp/after" smd_up)" = 1
check grep -q "garbage answer: b'HTTP/1.1 400" "$tmp/idle.log"
kill "$idle_pid" 2>/dev/null
wait "$idle_pid" 2>/dev/null

# SIGTERM: a clean stop
kill -TERM "$exp_pid"
rc=0; wait "$exp_pid" || rc=$?
exp_pid=
check test "$rc" -eq 0
check grep -q "stopping (signal 15)" "$tmp/exp.log"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
