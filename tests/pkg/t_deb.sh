#!/bin/bash
# The Debian package (debian/), built as a distribution would: a clean copy
# of the tree (the files git has, no build output), "dpkg-buildpackage -us
# -uc -b" there (unit tests off: the suite runs them), then
#  - dpkg -c: the daemon, smctl, smd_exporter, both units, the man pages,
#    the Grafana dashboard and
#    /etc/smd/smd.conf, a conffile, the same file as etc/smd.conf (every key
#    commented out at its default: tests/config/run.sh checks that);
#  - the unit as packaged: /usr/sbin/smd reading /etc/smd/smd.conf, its
#    state and runtime directories its own (StateDirectory=,
#    RuntimeDirectory=);
#  - lintian: no error (and no warning);
#  - the postinst, run with stand-ins for deb-systemd-helper/-invoke that
#    log their calls, in a PID namespace of its own (so that the opensm a
#    test next door runs is not seen): with no other SM it enables smd;
#    with opensm enabled (a .wants link under $DPKG_ROOT) or running (a
#    process named opensm) it neither enables nor starts smd and says why;
#    an upgrade enables nothing.
# The package is built once per test.sh run: the ASan build's run skips it.
# Build tools missing: installed with apt-get when root, else skipped.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
top_builddir=${top_builddir:-$top}
if grep -q -- '-fsanitize=' "$top_builddir/Makefile" 2>/dev/null; then
	echo "SKIP: the package is built once, in the plain build's run"
	exit 77
fi
command -v git >/dev/null && git -C "$top" rev-parse --git-dir >/dev/null 2>&1 ||
	{ echo "SKIP: not a git checkout (the clean copy is what git holds)"; exit 77; }
need=()
command -v dpkg-buildpackage >/dev/null || need+=(dpkg-dev)
command -v dh >/dev/null || need+=(debhelper)
command -v lintian >/dev/null || need+=(lintian)
if [ ${#need[@]} -gt 0 ]; then
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
		echo "installing ${need[*]}"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends \
			"${need[@]}" >/dev/null 2>&1 || true
	fi
	command -v dpkg-buildpackage >/dev/null && command -v dh >/dev/null &&
		command -v lintian >/dev/null ||
		{ echo "SKIP: needs ${need[*]} (as root: apt-get install ${need[*]})"; exit 77; }
fi
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { if "$@"; then ok "$*"; else bad "$*"; fi; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/smdpkg.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# ---- build from a clean copy
mkdir "$tmp/src"
git -C "$top" ls-files -z --cached --others --exclude-standard |
	(cd "$top" && tar --null -T - -cf -) | tar -xf - -C "$tmp/src"
check test -e "$tmp/src/debian/rules" -a ! -e "$tmp/src/configure"
if ! (cd "$tmp/src" && DEB_BUILD_OPTIONS="nocheck parallel=$(nproc)" \
	dpkg-buildpackage -us -uc -b >"$tmp/build.log" 2>&1); then
	tail -n 40 "$tmp/build.log"
	bad "dpkg-buildpackage -us -uc -b"
	echo "$pass passed, $fail failed"
	exit 1
fi
ok "dpkg-buildpackage -us -uc -b"
deb=$(ls "$tmp"/smd_*.deb 2>/dev/null | head -1)
check test -n "$deb"
[ -n "$deb" ] || exit 1

# ---- what it holds
dpkg -c "$deb" | awk '{ print $NF }' | sed 's|^\./|/|' >"$tmp/files"
unitdir=$(grep -E '^(/usr)?/lib/systemd/system/smd.service$' "$tmp/files" | head -1)
for f in /usr/sbin/smd /usr/bin/smctl /etc/smd/smd.conf /usr/share/man/man8/smd.8.gz \
	/usr/share/man/man8/smctl.8.gz /usr/share/man/man5/smd.conf.5.gz /usr/sbin/smd_exporter \
	/usr/share/man/man8/smd_exporter.8.gz /usr/share/smd/smd-dashboard.json; do
	check grep -qx "$f" "$tmp/files"
done
check test -n "$unitdir"
check grep -qx "${unitdir%/smd.service}/smd_exporter.service" "$tmp/files"
dpkg-deb -e "$deb" "$tmp/ctl"
dpkg-deb -x "$deb" "$tmp/root-pkg"
check grep -qx /etc/smd/smd.conf "$tmp/ctl/conffiles"
check cmp "$tmp/root-pkg/etc/smd/smd.conf" "$top/etc/smd.conf"
unit=$tmp/root-pkg$unitdir
check grep -qx 'ExecStart=/usr/sbin/smd --config /etc/smd/smd.conf' "$unit"
check grep -qx 'StateDirectory=smd' "$unit"
check grep -qx 'RuntimeDirectory=smd' "$unit"
# Both may be installed: no package-level conflict with opensm
check test -z "$(dpkg-deb -f "$deb" Conflicts Breaks)"

# ---- lintian
lintian --fail-on error "$deb" >"$tmp/lintian" 2>&1
rc=$?
cat "$tmp/lintian"
check test "$rc" -eq 0
check test -z "$(grep -E '^[EW]: ' "$tmp/lintian")"

# ---- the postinst
mkdir -p "$tmp/stubs"
for tool in deb-systemd-helper deb-systemd-invoke systemctl; do
	# was-enabled and debian-installed: no (a first install); the rest works
	cat >"$tmp/stubs/$tool" <<EOF
#!/bin/sh
echo "$tool \$*" >>"$tmp/calls"
case "\$*" in *was-enabled*|*debian-installed*) exit 1 ;; esac
exit 0
EOF
	chmod +x "$tmp/stubs/$tool"
done
postinst() {	# postinst ROOT ARGS...: run it; calls in $tmp/calls, stderr in $tmp/said
	local root=$1
	shift
	: >"$tmp/calls"
	env DPKG_ROOT="$root" PATH="$tmp/stubs:$PATH" \
		unshare -pf --mount-proc sh "$tmp/ctl/postinst" "$@" 2>"$tmp/said"
}
if ! unshare -pf --mount-proc true 2>/dev/null; then
	echo "NOTE: no PID namespace here (unshare -p): the postinst is not checked"
else
	mkdir -p "$tmp/none" "$tmp/enabled/etc/systemd/system/network-online.target.wants"
	ln -s /lib/systemd/system/opensm.service \
		"$tmp/enabled/etc/systemd/system/network-online.target.wants/opensm.service"
	check postinst "$tmp/none" configure ""
	check grep -qx "deb-systemd-helper enable smd.service" "$tmp/calls"
	check test ! -s "$tmp/said"
	check postinst "$tmp/enabled" configure ""
	check test -z "$(grep -E ' (enable|start) smd' "$tmp/calls")"
	check grep -q "smd is installed but neither" "$tmp/said"
	# A process named opensm in the namespace (once it has exec'ed), nothing enabled
	cp "$(command -v sleep)" "$tmp/opensm"
	: >"$tmp/calls"
	env DPKG_ROOT="$tmp/none" PATH="$tmp/stubs:$PATH" unshare -pf --mount-proc sh -c '
		"$1" 60 & n=0
		until [ "$(cat /proc/$!/comm 2>/dev/null)" = opensm ] || [ $n -ge 600 ]; do
			sleep 0.05; n=$((n + 1))
		done
		sh "$2" configure ""; rc=$?; kill $!; exit $rc' sh \
		"$tmp/opensm" "$tmp/ctl/postinst" 2>"$tmp/said"
	check test "$?" -eq 0
	check test -z "$(grep -E ' (enable|start) smd' "$tmp/calls")"
	check grep -q "smd is installed but neither" "$tmp/said"
	# An upgrade keeps the administrator's choice (here: not enabled)
	check postinst "$tmp/none" configure 0.0.9
	check test -z "$(grep -E ' (enable|start) smd' "$tmp/calls")"
	check test ! -s "$tmp/said"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
