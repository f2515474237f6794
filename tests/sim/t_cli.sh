#!/bin/bash
# Port selection and command-line errors: CA:PORT and a port GUID pick the
# port; a port that does not exist, a bad spec or a bad option is refused
# with a clear message and the right exit code, touching nothing.
. "$(dirname "$0")/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"; sim_stop' EXIT
$GEN line 2 -o "$tmp/net" 2>/dev/null
sim_start "$tmp/net" >/dev/null 2>&1
guid=$(sim_run smpquery nodeinfo -D 0 2>/dev/null | awk -F. '/^PortGuid/ { print $NF }')

sim_run "$SMD" --once --port ibsim0:1 --db "$tmp/a.db" >"$tmp/ca" 2>&1
check grep -q "using ibsim0 port 1" "$tmp/ca"
check grep -q "subnet UP" "$tmp/ca"
sim_run "$SMD" --once --port "$guid" --db "$tmp/a.db" >"$tmp/guid" 2>&1
check grep -q "GUID $guid" "$tmp/guid"

rc=0; sim_run "$SMD" --once --port ibsim0:2 --db "$tmp/b.db" >"$tmp/e1" 2>&1 || rc=$?
check test "$rc" -eq 1
check grep -q "cannot open InfiniBand port ibsim0:2" "$tmp/e1"
check test ! -e "$tmp/b.db"
rc=0; sim_run "$SMD" --once --port 0x1234 --db "$tmp/b.db" >"$tmp/e2" 2>&1 || rc=$?
check test "$rc" -eq 1
rc=0; sim_run "$SMD" --once --port "mlx5_0:x" --db "$tmp/b.db" >"$tmp/e3" 2>&1 || rc=$?
check test "$rc" -eq 2
check grep -q "bad value 'mlx5_0:x' for port" "$tmp/e3"
rc=0; "$SMD" --bogus >"$tmp/e4" 2>&1 || rc=$?
check test "$rc" -eq 2
rc=0; "$SMD" extra-arg >"$tmp/e5" 2>&1 || rc=$?
check test "$rc" -eq 2
# A database that is not SQLite: moved aside intact, a fresh one started
head -c 4096 /dev/urandom >"$tmp/junk.db"
cp "$tmp/junk.db" "$tmp/junk.orig"
sim_run "$SMD" --once --db "$tmp/junk.db" >"$tmp/junk" 2>&1
check grep -q "moved it aside to $tmp/junk.db.corrupt-" "$tmp/junk"
check grep -q "subnet UP" "$tmp/junk"
check cmp -s "$tmp/junk.orig" "$(ls "$tmp"/junk.db.corrupt-* | grep -v -e '-wal$' -e '-shm$')"
finish
