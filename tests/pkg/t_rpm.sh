#!/bin/bash
# smd.spec builds with rpmbuild (Debian's rpm package) from a tarball of a
# clean copy of the tree (--nodeps: Debian's rpm database knows none of the
# BuildRequires; --nocheck: the suite runs the unit tests). The RPM holds
# the daemon, smctl, the unit, the man pages and /etc/smd/smd.conf as a
# %config file; its scriptlets are shell (no macro left unexpanded where
# the systemd macros do not exist); smd.spec, configure.ac and
# debian/changelog give one version. Once per test.sh run, like t_deb.sh.
set -u
top=$(cd "$(dirname "$0")/../.." && pwd)
top_builddir=${top_builddir:-$top}
if grep -q -- '-fsanitize=' "$top_builddir/Makefile" 2>/dev/null; then
	echo "SKIP: the package is built once, in the plain build's run"
	exit 77
fi
command -v git >/dev/null && git -C "$top" rev-parse --git-dir >/dev/null 2>&1 ||
	{ echo "SKIP: not a git checkout (the clean copy is what git holds)"; exit 77; }
if ! command -v rpmbuild >/dev/null; then
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
		echo "installing rpm"
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends rpm \
			>/dev/null 2>&1 || true
	fi
	command -v rpmbuild >/dev/null || { echo "SKIP: needs rpmbuild (as root: apt-get install rpm)"; exit 77; }
fi
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { if "$@"; then ok "$*"; else bad "$*"; fi; }
tmp=$(mktemp -d "${TMPDIR:-/tmp}/smdrpm.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

version=$(sed -n 's/^Version: *//p' "$top/smd.spec")
check test -n "$version"
check grep -q "^AC_INIT(\[smd\], \[$version\]" "$top/configure.ac"
check grep -q "^smd ($version)" "$top/debian/changelog"

mkdir -p "$tmp/SOURCES" "$tmp/smd-$version"
git -C "$top" ls-files -z --cached --others --exclude-standard |
	(cd "$top" && tar --null -T - -cf -) | tar -xf - -C "$tmp/smd-$version"
tar -C "$tmp" -czf "$tmp/SOURCES/smd-$version.tar.gz" "smd-$version"
if ! rpmbuild -bb --nodeps --nocheck --define "_topdir $tmp" --define "_smp_mflags -j$(nproc)" \
	"$top/smd.spec" >"$tmp/build.log" 2>&1; then
	tail -n 40 "$tmp/build.log"
	bad "rpmbuild -bb smd.spec"
	echo "$pass passed, $fail failed"
	exit 1
fi
ok "rpmbuild -bb smd.spec"
rpm=$(ls "$tmp"/RPMS/*/smd-"$version"-*.rpm 2>/dev/null | grep -v debug | head -1)
check test -n "$rpm"
[ -n "$rpm" ] || exit 1
rpm -qlp "$rpm" >"$tmp/files" 2>/dev/null
for f in /usr/sbin/smd /usr/bin/smctl /usr/lib/systemd/system/smd.service /etc/smd/smd.conf \
	/usr/sbin/smd_exporter /usr/lib/systemd/system/smd_exporter.service; do
	check grep -qx "$f" "$tmp/files"
done
for m in man8/smd.8 man8/smctl.8 man5/smd.conf.5 man8/smd_exporter.8; do
	check grep -q "^/usr/share/man/$m" "$tmp/files"
done
check test "$(rpm -qp --configfiles "$rpm" 2>/dev/null)" = /etc/smd/smd.conf
rpm -qp --scripts "$rpm" >"$tmp/scripts" 2>/dev/null
check grep -q "postinstall scriptlet" "$tmp/scripts"
check test -z "$(grep '%' "$tmp/scripts")"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
