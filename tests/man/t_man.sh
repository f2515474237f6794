#!/bin/bash
# The man pages render without a single groff warning (groff -man -ww),
# smd.conf(5) documents every key `smd -nv` prints, names in RELOADING
# exactly the keys SIGHUP does not apply (smd's key table, through
# test_config --keys), and smctl(8) documents every command `smctl --help`
# lists.
set -u
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
SMD=${SMD:-$top/smd/smd}
SMCTL=${SMCTL:-$top/ctl/smctl}
TEST_CONFIG=${top_builddir:-$top}/tests/unit/test_config
command -v groff >/dev/null || { echo "missing groff (groff-base)"; exit 99; }
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

for page in "$top"/man/*.[1-8]; do
	out=$(groff -man -ww -z -Tutf8 "$page" 2>&1)
	if [ -z "$out" ]; then ok "groff -ww $(basename "$page")"; else bad "$page: $out"; fi
done

# The tags of a page's .TP entries: the first word after each .TP, with
# font macros, quotes and groff's \- taken off
tags() {
	awk '/^\.TP/ { getline; print }' "$1" |
		sed -e 's/^\.[BI]*R* *//' -e 's/"//g' -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' |
		awk '{ print $1 }' | sort -u
}
tags "$top/man/smd.conf.5" >"${TMPDIR:-/tmp}/smd-man-keys.$$"
tags "$top/man/smctl.8" >"${TMPDIR:-/tmp}/smd-man-cmds.$$"
trap 'rm -f "${TMPDIR:-/tmp}"/smd-man-*.$$' EXIT

# Every key of the effective configuration has its entry in smd.conf(5)
keys=$("$SMD" -nv -c /dev/null | sed -n 's/^\([a-z_0-9]*\) = .*/\1/p')
[ -n "$keys" ] || bad "smd -nv printed no keys"
for k in $keys; do
	if grep -qx "$k" "${TMPDIR:-/tmp}/smd-man-keys.$$"; then
		ok "smd.conf.5 documents $k"
	else
		bad "smd.conf.5 has no entry for $k"
	fi
done

# RELOADING lists the keys that need a restart, and only those
want=$("$TEST_CONFIG" --keys | awk '$2 == "restart" { print $1 }' | sort)
got=$(sed -n '/^\.SH RELOADING/,/^\.SH /p' "$top/man/smd.conf.5" |
	sed -n 's/^\.BR* \([a-z_0-9]*\).*/\1/p' | grep -vx smd | sort)
if [ -n "$want" ] && [ "$want" = "$got" ]; then
	ok "smd.conf.5 RELOADING lists the keys SIGHUP does not apply"
else
	bad "smd.conf.5 RELOADING lists: $(echo $got); the key table: $(echo $want)"
fi

# Every command smctl --help lists has its entry in smctl(8)
cmds=$("$SMCTL" --help 2>&1 | sed -n 's/^  \([a-z][a-z0-9-]*\) .*/\1/p')
[ -n "$cmds" ] || bad "smctl --help listed no commands"
for c in $cmds; do
	if grep -qx -- "$c" "${TMPDIR:-/tmp}/smd-man-cmds.$$"; then
		ok "smctl.8 documents $c"
	else
		bad "smctl.8 has no entry for $c"
	fi
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
