#!/bin/bash
# Issue 27, a move from OpenSM that keeps every LID, with OpenSM's own files:
#  1. "opensm -c" output imports (smd --import-opensm) into an smd.conf that
#     smd -n accepts; the same file hand-edited (non-default priority,
#     SM_Key, LMC, sweep interval, partitions file) shows those values in
#     smd -nv.
#  2. OpenSM, run with that hand-edited file, brings a 2-level fat-tree up
#     and writes its guid2lid. Its cache is seeded with LIDs far from the
#     ones smd would pick (reversed, from 0x80 down, LMC 1), so that a LID
#     smd gives by itself cannot pass for OpenSM's.
#  3. A fresh simulator of the same fabric (every port without a LID): smctl
#     import-guid2lid, then smd --once with the imported smd.conf: every
#     port's LID and LMC, read with ibnetdiscover, are OpenSM's. The same
#     with opensm_guid2lid in smd.conf at smd's first start; a later start
#     does not read it again.
#  4. A corrupt guid2lid (a LID twice) in opensm_guid2lid: smd does not
#     start (status 2, the file and line named) and the database holds no
#     LID; smctl's refusals of every kind are tests/import/t_guid2lid.sh.
#  5. Without the import, smd on a fresh simulator gives other LIDs: the
#     import is what brought OpenSM's back.
# opensm comes from Debian's package (installed here when missing, as root).
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
[ -x "$SMCTL" ] || { echo "missing $SMCTL: build first" >&2; exit 99; }
if ! command -v opensm >/dev/null; then
	if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 --no-install-recommends opensm \
			>/dev/null 2>&1 || true
	fi
	command -v opensm >/dev/null || { echo "SKIP: opensm is not installed (as root: apt-get install opensm)"; exit 77; }
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/smdmigrate.XXXXXX")
trap 'rm -rf "$T"' EXIT
umask 077
cd "$T"

# ---- 1. opensm.conf, OpenSM's own, into smd.conf
check opensm -c "$T/opensm.conf"
check grep -q '^sm_priority 0$' "$T/opensm.conf"
rc=0
"$SMD" --import-opensm "$T/opensm.conf" >"$T/default.smd" 2>"$T/default.err" || rc=$?
check test "$rc" -eq 0 -a ! -s "$T/default.err"
check "$SMD" -n -c "$T/default.smd"
printf 'Default=0x7fff, ipoib : ALL=full ;\nhosts=0x0101 : ALL_CAS=full ;\n' >"$T/partitions.conf"
sed -e 's/^sm_priority 0$/sm_priority 9/' -e 's/^sm_key .*/sm_key 0x00000000c0ffee00/' \
	-e 's/^lmc 0$/lmc 1/' -e 's/^sweep_interval 10$/sweep_interval 25/' \
	-e "s|^partition_config_file .*|partition_config_file $T/partitions.conf|" \
	"$T/opensm.conf" >"$T/hand.conf"
# Each edit took (OpenSM's file is as this test expects)
check test "$(diff "$T/opensm.conf" "$T/hand.conf" | grep -c '^>')" -eq 5
rc=0
"$SMD" --import-opensm "$T/hand.conf" >"$T/hand.smd" 2>"$T/hand.err" || rc=$?
check test "$rc" -eq 0 -a ! -s "$T/hand.err"
check "$SMD" -n -c "$T/hand.smd"
"$SMD" -nv -c "$T/hand.smd" >"$T/hand.nv"
for want in "sm_priority = 9" "sm_key = 0x00000000c0ffee00" "lmc = 1" "sweep_interval = 25" \
	"partition_config = \"$T/partitions.conf\""; do
	check grep -qxF "$want" "$T/hand.nv"
done

# ---- 2. OpenSM brings the fabric up, with a seeded cache
$GEN ft2 4 -o "$T/net" 2>/dev/null
mkdir -p "$T/osm"
awk '/^caguid=/ { sub(/caguid=/, ""); print "ca", $0 }
	/^switchguid=/ { sub(/switchguid=/, ""); print "sw", $0 }' "$T/net" |
	python3 -c '
import sys
lid = 0x80
for kind, guid in reversed([l.split() for l in sys.stdin]):
	g = int(guid, 16)
	if kind == "ca":	# port 1: node GUID + 1; LMC 1, two LIDs
		print("0x%016x 0x%04x 0x%04x\n" % (g + 1, lid, lid + 1))
	else:
		print("0x%016x 0x%04x 0x%04x\n" % (g, lid, lid))
	lid -= 4' >"$T/osm/guid2lid"
cp "$T/osm/guid2lid" "$T/seeded"

# "GUID LID LMC" of every CA port and switch, as ibnetdiscover shows them
lids_lmc() {
	sim_run ibnetdiscover 2>/dev/null | python3 -c '
import re, sys
for line in sys.stdin:
	m = re.match(r"switchguid=0x([0-9a-f]+)", line)
	if m:
		sw = int(m.group(1), 16)
	m = re.match(r"Switch\s.*# .* lid (\d+) lmc (\d+)", line)
	if m:
		print("0x%016x %s %s" % (sw, m.group(1), m.group(2)))
	m = re.match(r"\[\d+\]\(([0-9a-f]+)\)\s.*# lid (\d+) lmc (\d+)", line)
	if m:
		print("0x%016x %s %s" % (int(m.group(1), 16), m.group(2), m.group(3)))
' | sort -u
}
# The same from a guid2lid file: the base LID, LMC from the range's size
g2l_lmc() {
	python3 -c '
import sys
for line in open(sys.argv[1]):
	f = line.split()
	if len(f) == 3:
		lo, hi = int(f[1], 0), int(f[2], 0)
		print("0x%016x %d %d" % (int(f[0], 16), lo, (hi - lo + 1).bit_length() - 1))
' "$1" | sort -u
}

sim_start "$T/net"
OSM_CACHE_DIR=$T/osm OSM_TMP_DIR=$T/osm sim_run opensm -o -F "$T/hand.conf" -f "$T/osm/log" \
	-e --dump_files_dir "$T/osm" >"$T/osm/out" 2>&1 || true
lids_lmc >"$T/opensm.lids"
g2l_lmc "$T/osm/guid2lid" >"$T/opensm.g2l"
check test "$(wc -l <"$T/opensm.lids")" -eq 14
check test "$(wc -l <"$T/opensm.g2l")" -eq 14
# OpenSM's guid2lid says what the fabric holds, and OpenSM took the seeded LIDs
check diff "$T/opensm.lids" "$T/opensm.g2l"
check diff "$T/opensm.g2l" <(g2l_lmc "$T/seeded")
sim_stop

# ---- 3. a fresh fabric: smctl import-guid2lid, then smd
sim_start "$T/net"
check test "$(lids_lmc | awk '$2 != 0' | wc -l)" -eq 0
check "$SMCTL" --db "$T/a.db" import-guid2lid "$T/osm/guid2lid"
rc=0
sim_run "$SMD" --once -c "$T/hand.smd" --db "$T/a.db" >"$T/a.out" 2>&1 || rc=$?
check test "$rc" -eq 0
lids_lmc >"$T/a.lids"
check diff "$T/opensm.lids" "$T/a.lids"
sim_stop

# ... and with opensm_guid2lid at smd's first start; a corrupt file first
# The second entry given the first one's LIDs
awk 'NF == 3 && ++n == 1 { lo = $2; hi = $3 } NF == 3 && n == 2 { print $1, lo, hi; next }
	{ print }' "$T/osm/guid2lid" >"$T/corrupt"
{ cat "$T/hand.smd"; echo "opensm_guid2lid = $T/corrupt"; } >"$T/corrupt.smd"
{ cat "$T/hand.smd"; echo "opensm_guid2lid = $T/osm/guid2lid"; } >"$T/key.smd"
sim_start "$T/net"
rc=0
sim_run "$SMD" --once -c "$T/corrupt.smd" --db "$T/b.db" >"$T/corrupt.out" 2>&1 || rc=$?
check test "$rc" -eq 2
check grep -q "opensm_guid2lid: $T/corrupt:3: .* overlap" "$T/corrupt.out"
check test "$("$SMCTL" --db "$T/b.db" lids | wc -l)" -eq 1
rc=0
"$SMD" -n -c "$T/corrupt.smd" >"$T/corrupt.n" 2>&1 || rc=$?
check test "$rc" -eq 2
check grep -q "$T/corrupt:3: " "$T/corrupt.n"
rc=0
sim_run "$SMD" --once -c "$T/key.smd" --db "$T/b.db" >"$T/b.out" 2>&1 || rc=$?
check test "$rc" -eq 0
check grep -q "opensm_guid2lid: imported 14 LIDs" "$T/b.out"
lids_lmc >"$T/b.lids"
check diff "$T/opensm.lids" "$T/b.lids"
# The database has swept: the key is not read again
sim_run "$SMD" --once -c "$T/key.smd" --db "$T/b.db" >"$T/b2.out" 2>&1 || true
check grep -q "opensm_guid2lid $T/osm/guid2lid: not read" "$T/b2.out"
sim_stop

# ---- 5. without the import, smd's own LIDs are not OpenSM's
sim_start "$T/net"
rc=0
sim_run "$SMD" --once -c "$T/hand.smd" --db "$T/c.db" >"$T/c.out" 2>&1 || rc=$?
check test "$rc" -eq 0
lids_lmc >"$T/c.lids"
check test "$(wc -l <"$T/c.lids")" -eq 14
check test "$(comm -12 "$T/opensm.lids" "$T/c.lids" | wc -l)" -lt 14
sim_stop
finish
