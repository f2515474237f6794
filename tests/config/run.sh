#!/bin/bash
# Golden config tests: `smd -nv -c X.conf` must print X.ok exactly, and the
# printed form must parse again to itself; every bad-*.conf must be refused
# with exit 2 and the message in bad-*.err (file:line: reason).
set -u
here=$(cd "$(dirname "$0")" && pwd)
SMD=${SMD:-$here/../../smd/smd}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
for conf in "$here"/good-*.conf; do
	name=$(basename "$conf" .conf)
	if "$SMD" -nv -c "$conf" >"$tmp/out" 2>"$tmp/err" && diff -u "$here/$name.ok" "$tmp/out" &&
	   "$SMD" -nv -c "$tmp/out" >"$tmp/again" && cmp -s "$tmp/out" "$tmp/again"; then
		pass=$((pass + 1))
	else
		echo "FAIL: $name"; cat "$tmp/err"
		fail=$((fail + 1))
	fi
done
for conf in "$here"/bad-*.conf; do
	name=$(basename "$conf" .conf)
	"$SMD" -n -c "$conf" >"$tmp/out" 2>"$tmp/err"
	rc=$?
	want=$(sed "s|@FILE@|$conf|" "$here/$name.err")
	if [ "$rc" -eq 2 ] && [ "$(cat "$tmp/err")" = "$want" ]; then
		pass=$((pass + 1))
	else
		echo "FAIL: $name: exit $rc, said: $(cat "$tmp/err"), wanted: $want"
		fail=$((fail + 1))
	fi
done
# A missing file named with -c is an error too
if "$SMD" -n -c "$tmp/nonexistent.conf" 2>/dev/null; then
	echo "FAIL: missing config accepted"; fail=$((fail + 1))
else
	pass=$((pass + 1))
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
