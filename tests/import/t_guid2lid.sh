#!/bin/bash
# smctl import-guid2lid refuses a corrupt OpenSM guid2lid whole: a LID
# twice, LID 0, a range not aligned to its LMC, binary junk, a LID the
# database gives another port. Each time: exit 1, the file and line named,
# "nothing imported", and the database exactly as before (smctl lids and
# history unchanged), even where the bad line comes after good ones. A good
# file imports, into a database smctl creates with its directory.
set -u
here=$(cd "$(dirname "$0")" && pwd)
SMCTL=${SMCTL:-$here/../../ctl/smctl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

db=$tmp/state/smd.db
printf '0x0002c90300000005 0x0004 0x0005\n\n0x0011750000000001 0x0002 0x0002\n\n' >"$tmp/good"
out=$("$SMCTL" --db "$db" import-guid2lid "$tmp/good" 2>&1)
rc=$?
[ "$rc" -eq 0 ] && [[ $out == "imported 2 LIDs from $tmp/good into $db;"* ]] && ok ||
	bad "a good file: exit $rc, $out"
[ "$(stat -c %a "$tmp/state")" = 700 ] && ok || bad "the database directory is not 0700"
"$SMCTL" --db "$db" lids >"$tmp/lids.before"
"$SMCTL" --db "$db" history >"$tmp/history.before"
grep -q "^4 .*0x0002c90300000005 .* 1 " "$tmp/lids.before" && ok ||
	bad "LID 4 (LMC 1) not remembered: $(cat "$tmp/lids.before")"

# refuse NAME WANT: the file $tmp/NAME must be refused with WANT in the message
refuse() {
	local out rc
	out=$("$SMCTL" --db "$db" import-guid2lid "$tmp/$1" 2>&1)
	rc=$?
	[ "$rc" -eq 1 ] && [[ $out == *"$tmp/$1:$2"*"; nothing imported" ]] && ok ||
		bad "$1: exit $rc, said: $out; wanted: $tmp/$1:$2"
	"$SMCTL" --db "$db" lids | cmp -s - "$tmp/lids.before" && ok ||
		bad "$1: the remembered LIDs changed"
	"$SMCTL" --db "$db" history | cmp -s - "$tmp/history.before" && ok ||
		bad "$1: the history changed"
}
ok_lines='0x0002c90300000101 0x0010 0x0010\n\n0x0002c90300000102 0x0011 0x0011\n\n'
printf "$ok_lines"'0x0002c90300000103 0x0010 0x0010\n' >"$tmp/dup-lid"
refuse dup-lid "5: LID 16 of port GUID 0x0002c90300000103 overlaps LID 16 of port GUID 0x0002c90300000101 (line 1)"
printf "$ok_lines"'0x0002c90300000101 0x0012 0x0012\n' >"$tmp/dup-guid"
refuse dup-guid "5: port GUID 0x0002c90300000101 again (first on line 1)"
printf "$ok_lines"'0x0002c90300000103 0x0000 0x0000\n' >"$tmp/lid0"
refuse lid0 "5: LID 0 is not a unicast LID"
printf "$ok_lines"'0x0002c90300000103 0x0013 0x0014\n' >"$tmp/unaligned"
refuse unaligned "5: LIDs 19-20: base LID not aligned to LMC 1"
printf "$ok_lines" >"$tmp/junk"
head -c 64 /dev/urandom | tr -d '\n' >>"$tmp/junk"
printf '\x00\x01\n' >>"$tmp/junk"
refuse junk "5: binary data"
# Valid alone, but LID 2 is remembered for 0x0011750000000001 already
printf "$ok_lines"'0x0002c90300000103 0x0002 0x0002\n' >"$tmp/clash"
refuse clash "5: LID 2 of port GUID 0x0002c90300000103 is remembered for port GUID 0x0011750000000001"
: >"$tmp/empty"
out=$("$SMCTL" --db "$db" import-guid2lid "$tmp/empty" 2>&1)
[ $? -eq 1 ] && [[ $out == *"$tmp/empty: no entries"* ]] && ok || bad "empty: $out"
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
