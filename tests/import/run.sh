#!/bin/bash
# smd --import-opensm, golden files: each X.opensm (an opensm.conf: the
# one OpenSM 3.3.23's "opensm -c" writes, hand-written ones, one full of
# mistakes) must translate to exactly X.smd, report on stderr exactly X.err
# (none: no file) and exit 1 when it reports anything, else 0; the output
# must pass "smd -n", and "smd -nv" on it must print every line of
# X.values, written by hand from what the OpenSM options mean. @DIR@ is
# the directory the inputs are copied to. The one path of the default
# opensm.conf a machine may hold (/etc/opensm/partitions.conf) is pointed
# away from /etc, so that the result does not depend on the machine.
set -u
here=$(cd "$(dirname "$0")" && pwd)
SMD=${SMD:-$here/../../smd/smd}
umask 077
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

cp "$here"/*.partitions "$tmp/"
for orig in "$here"/*.opensm; do
	name=$(basename "$orig" .opensm)
	in=$tmp/$name.opensm
	sed 's|^partition_config_file /etc/opensm/partitions.conf$|partition_config_file @DIR@/absent/partitions.conf|' \
		"$orig" | sed "s|@DIR@|$tmp|g" >"$in"
	"$SMD" --import-opensm "$in" >"$tmp/$name.out" 2>"$tmp/$name.stderr"
	rc=$?
	want_rc=0
	[ -s "$here/$name.err" ] && want_rc=1
	[ "$rc" -eq "$want_rc" ] && ok || bad "$name: exit $rc, wanted $want_rc"
	if sed "s|@DIR@|$tmp|g" "$here/$name.smd" | diff -u - "$tmp/$name.out" >"$tmp/diff"; then
		ok
	else
		bad "$name: output differs from $name.smd:"; cat "$tmp/diff"
	fi
	if [ -e "$here/$name.err" ]; then
		want=$(sed "s|@DIR@|$tmp|g" "$here/$name.err")
	else
		want=
	fi
	[ "$(cat "$tmp/$name.stderr")" = "$want" ] && ok ||
		bad "$name: stderr: $(cat "$tmp/$name.stderr"), wanted: $want"
	# The translation is an smd.conf smd accepts, with the values meant
	cp "$tmp/$name.out" "$tmp/$name.conf"
	if "$SMD" -nv -c "$tmp/$name.conf" >"$tmp/$name.nv" 2>"$tmp/$name.nverr"; then
		ok
	else
		bad "$name: smd -n refuses the translation: $(cat "$tmp/$name.nverr")"
	fi
	if [ -e "$here/$name.values" ]; then
		while IFS= read -r line; do
			line=${line//@DIR@/$tmp}
			grep -qxF -- "$line" "$tmp/$name.nv" && ok ||
				bad "$name: smd -nv does not print '$line' (it prints: $(grep "^${line%% =*} =" "$tmp/$name.nv"))"
		done <"$here/$name.values"
	fi
done

# A file that cannot be read: exit 2, a message, nothing on stdout
"$SMD" --import-opensm "$tmp/nonexistent" >"$tmp/out" 2>"$tmp/err"
rc=$?
[ "$rc" -eq 2 ] && [ ! -s "$tmp/out" ] && grep -q "nonexistent: No such file" "$tmp/err" && ok ||
	bad "a missing file: exit $rc, said $(cat "$tmp/err")"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
