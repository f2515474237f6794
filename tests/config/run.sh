#!/bin/bash
# Golden config tests: `smd -nv -c X.conf` must print X.ok exactly, and the
# printed form must parse again to itself; every bad-*.conf must be refused
# with exit 2 and the message in bad-*.err (file:line: reason; @FILE@ is the
# conf, @DIR@ its directory). *.partitions files (partition_config),
# *.guid2lid files (opensm_guid2lid) and *.plan files (cabling_plan) are
# copied along; the partitions -nv prints (as comments) must parse again, as
# a partitions file, to the same partitions.
set -u
here=$(cd "$(dirname "$0")" && pwd)
SMD=${SMD:-$here/../../smd/smd}
umask 077
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
# Each file is tested as a copy of mode 0600 (a file with sm_key must not
# be readable by others, whatever the checkout's umask made it), but
# bad-*-mode.conf, which is 0644 on purpose
copy() {
	cp "$1" "$tmp/$(basename "$1")"
	case $1 in
	*-mode.conf) chmod 644 "$tmp/$(basename "$1")" ;;
	*) chmod 600 "$tmp/$(basename "$1")" ;;
	esac
	echo "$tmp/$(basename "$1")"
}
cp "$here"/*.partitions "$here"/*.guid2lid "$here"/*.plan "$tmp/"
# The partitions part of -nv output, uncommented: a partitions file again
parts_of() {
	sed -n '/^# partitions as smd reads them/,$p' "$1" | tail -n +2 | sed 's/^# //' | grep -v '^#'
}
for orig in "$here"/good-*.conf; do
	name=$(basename "$orig" .conf)
	conf=$(copy "$orig")
	if "$SMD" -nv -c "$conf" >"$tmp/out" 2>"$tmp/err" && diff -u "$here/$name.ok" "$tmp/out" &&
	   "$SMD" -nv -c "$tmp/out" >"$tmp/again" && cmp -s "$tmp/out" "$tmp/again" &&
	   parts_of "$tmp/out" >"$tmp/printed.partitions" &&
	   printf 'partition_config = printed.partitions\n' >"$tmp/printed.conf" &&
	   "$SMD" -nv -c "$tmp/printed.conf" >"$tmp/reparsed" 2>>"$tmp/err" &&
	   parts_of "$tmp/reparsed" | diff -u "$tmp/printed.partitions" - >>"$tmp/err"; then
		pass=$((pass + 1))
	else
		echo "FAIL: $name"; cat "$tmp/err"
		fail=$((fail + 1))
	fi
done
for orig in "$here"/bad-*.conf; do
	name=$(basename "$orig" .conf)
	conf=$(copy "$orig")
	"$SMD" -n -c "$conf" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	want=$(sed -e "s|@FILE@|$conf|g" -e "s|@DIR@|$tmp|g" "$here/$name.err")
	if [ "$rc" -eq 2 ] && [ "$(cat "$tmp/err")" = "$want" ]; then
		pass=$((pass + 1))
	else
		echo "FAIL: $name: exit $rc, said: $(cat "$tmp/err"), wanted: $want"
		fail=$((fail + 1))
	fi
done
# The installed etc/smd.conf lists every key, commented out, at its default:
# uncommented, it is exactly the defaults
etc=$here/../../etc/smd.conf
sed -n 's/^#\([a-z_0-9]* =.*\)/\1/p' "$etc" >"$tmp/etc.conf"
"$SMD" -nv -c /dev/null | grep -v '^#' >"$tmp/defaults"
if "$SMD" -nv -c "$tmp/etc.conf" | grep -v '^#' | diff -u "$tmp/defaults" - >"$tmp/err" &&
   diff <(sed 's/ =.*//' "$tmp/defaults" | sort) <(sed 's/ =.*//' "$tmp/etc.conf" | sort) \
	>>"$tmp/err"; then
	pass=$((pass + 1))
else
	echo "FAIL: etc/smd.conf: not every key at its default (keys, then values):"; cat "$tmp/err"
	fail=$((fail + 1))
fi
# A missing file named with -c is an error too
if "$SMD" -n -c "$tmp/nonexistent.conf" 2>/dev/null; then
	echo "FAIL: missing config accepted"; fail=$((fail + 1))
else
	pass=$((pass + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
