#!/bin/bash
# The unit files as `make install` installs them pass `systemd-analyze
# verify` without a word: installed into a scratch root, verified there with
# --root, so their ExecStart binaries and the man pages of Documentation=
# must be installed too. A broken copy proves the check can fail. The
# sandboxes stay tight (`systemd-analyze security` exposure below 3 for smd,
# which has no network, and below 2 for smd_exporter, which serves HTTP).
set -u
command -v systemd-analyze >/dev/null ||
	{ echo "SKIP: systemd-analyze not installed (Debian: apt-get install systemd)"; exit 77; }
top_builddir=${top_builddir:-$(cd "$(dirname "$0")/../.." && pwd)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { if "$@"; then ok "$*"; else bad "$*"; fi; }

root=$tmp/root
if ! make -s -C "$top_builddir" install DESTDIR="$root" >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	echo "FAIL: make install"
	exit 1
fi
unit=$(find "$root" -name smd.service -path '*/systemd/system/*')
man=$(find "$root" -type d -path '*/share/man' | head -1)
sbin=$(find "$root" -type f -name smd -path '*/sbin/*')
check test -n "$unit"
check test -x "$sbin"
[ -n "$unit" ] || exit 1
cat "$unit"
# The units every service depends on (sysinit.target, ...) and /bin/kill
# (ExecReload=) are the host's
mkdir -p "$root/lib/systemd" "$root/bin"
cp -a /lib/systemd/system "$root/lib/systemd/"
cp /bin/kill "$root/bin/"

verify() { MANPATH=$man systemd-analyze verify --root="$root" "$1" >"$tmp/verify" 2>&1; }
check verify "$unit"
check test ! -s "$tmp/verify"
cat "$tmp/verify"
# configure's paths are in, none of the @...@ are left
check grep -qx "ExecStart=${sbin#"$root"} --config .*/smd.conf" "$unit"
check test "$(grep -Ec '@[a-z_]+@' "$unit")" -eq 0
for key in Type=notify WatchdogSec=60 StateDirectory=smd RuntimeDirectory=smd \
	   'ExecReload=/bin/kill -HUP $MAINPID' ProtectSystem=strict DevicePolicy=closed \
	   'DeviceAllow=char-infiniband_mad rw' CapabilityBoundingSet= NoNewPrivileges=yes \
	   RestrictAddressFamilies=AF_UNIX SystemCallFilter=@system-service MemoryMax=2G; do
	check grep -qxF "$key" "$unit"
done
# systemd-analyze security, offline: 0 is a perfect sandbox, 10 none
systemd-analyze security --offline=yes --root="$root" "$unit" >"$tmp/security" 2>&1
tail -1 "$tmp/security"
level=$(sed -n 's/.*Overall exposure level for smd.service: \([0-9.]*\).*/\1/p' "$tmp/security")
check test -n "$level"
check awk -v l="${level:-10}" 'BEGIN { exit !(l < 3.0) }'

# smd_exporter's unit: a user of its own, no capabilities, sockets for HTTP
# and for smd only
xunit=$(find "$root" -name smd_exporter.service -path '*/systemd/system/*')
xbin=$(find "$root" -type f -name smd_exporter -path '*/sbin/*')
check test -n "$xunit"
check test -x "$xbin"
if [ -n "$xunit" ]; then
	cat "$xunit"
	check verify "$xunit"
	check test ! -s "$tmp/verify"
	cat "$tmp/verify"
	check grep -qxF "ExecStart=${xbin#"$root"} \$SMD_EXPORTER_ARGS" "$xunit"
	check test "$(grep -Ec '@[a-z_]+@' "$xunit")" -eq 0
	for key in Type=exec DynamicUser=yes CapabilityBoundingSet= NoNewPrivileges=yes \
		   ProtectSystem=strict PrivateDevices=yes DevicePolicy=closed \
		   'RestrictAddressFamilies=AF_UNIX AF_INET AF_INET6' \
		   SystemCallFilter=@system-service MemoryMax=512M; do
		check grep -qxF "$key" "$xunit"
	done
	systemd-analyze security --offline=yes --root="$root" "$xunit" >"$tmp/xsecurity" 2>&1
	tail -1 "$tmp/xsecurity"
	level=$(sed -n 's/.*Overall exposure level for smd_exporter.service: \([0-9.]*\).*/\1/p' \
		"$tmp/xsecurity")
	check test -n "$level"
	check awk -v l="${level:-10}" 'BEGIN { exit !(l < 2.0) }'
fi

# The check is not blind: an unknown key and a missing binary are reported
sed 's/^DevicePolicy=/DevicePolcy=/' "$unit" >"$tmp/broken.service"
cp "$tmp/broken.service" "$(dirname "$unit")/smd-broken.service"
verify "$(dirname "$unit")/smd-broken.service"
check grep -q "Unknown key 'DevicePolcy'" "$tmp/verify"
mv "$sbin" "$sbin.away"
rc=0
verify "$unit" || rc=$?
check test "$rc" -ne 0
check grep -q "is not executable" "$tmp/verify"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
