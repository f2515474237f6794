#!/bin/bash
# smctl dump, from the database alone, against the real ibnetdiscover: on
# several fabrics (irregular ones with dual-port HCAs and parallel cables, a
# fat-tree, a torus, mixed widths and speeds) the normalised dump equals
# what ibnetdiscover prints, the JSON parses and agrees, the dot graph has
# every cable. Then dump -> ibsim -> smd: the simulator loads the dump as a
# fabric, ibnetdiscover prints the dump back, smd brings it up with the
# same LIDs. The golden tests/dump/sim.ibnd loads and prints back too.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
NORM="python3 $top/tests/dump/normalize.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# same A B: the two topology files are equal once normalised
same() {
	$NORM "$1" >"$tmp/a.n" && $NORM "$2" >"$tmp/b.n" && diff -u "$tmp/a.n" "$tmp/b.n" >"$tmp/diff" &&
		return 0
	head -20 "$tmp/diff"
	return 1
}

# The JSON has every node of the dump, every cable once, GUIDs and LIDs as in it
json_agrees() {
	python3 - "$1" "$2" <<'EOF'
import json, re, sys
d = json.load(open(sys.argv[1]))
ibnd = open(sys.argv[2]).read()
ids = set(re.findall(r'^(?:Switch|Ca|Rt)\t\d+ "[SHR]-([0-9a-f]{16})"', ibnd, re.M))
assert ids == {n["guid"][2:] for n in d["nodes"]}, "nodes differ"
cables = len(re.findall(r'^\[\d+\]', ibnd, re.M))
assert 2 * len(d["links"]) == cables, "links %d, port lines %d" % (len(d["links"]), cables)
for n in d["nodes"]:
    if n["type"] == "switch":
        assert re.search(r'"S-%s".*port 0 lid %d ' % (n["guid"][2:], n["lid"]), ibnd)
    for p in n["ports"]:
        if n["type"] != "switch" and p["remote"]:
            assert "[%d](%x) " % (p["num"], int(p["guid"], 16)) in ibnd
EOF
}

dot_agrees() {
	local edges cables
	edges=$(grep -c -- ' -- ' "$1")
	cables=$(grep -c '^\[' "$2")
	[ $((2 * edges)) -eq "$cables" ] || return 1
	if command -v dot >/dev/null; then dot -Tsvg "$1" >/dev/null || return 1; fi
	return 0
}

$GEN random --switches 8 --seed 3 -o "$tmp/random8.net" 2>/dev/null
$GEN random --switches 16 --seed 21 -o "$tmp/random16.net" 2>/dev/null
$GEN ft3 4 -o "$tmp/ft3.net" 2>/dev/null
$GEN torus2 2 3 1 -o "$tmp/torus.net" 2>/dev/null

for net in random8 random16 ft3 torus; do
	db="$tmp/$net.db"
	sim_start "$tmp/$net.net" >/dev/null 2>&1
	sim_run "$SMD" --once --db "$db" >"$tmp/$net.smd" 2>&1
	check grep -q "subnet UP" "$tmp/$net.smd"
	sim_run ibnetdiscover >"$tmp/$net.ibnd" 2>/dev/null
	sim_stop
	"$SMCTL" dump --db "$db" >"$tmp/$net.dump" 2>&1
	check same "$tmp/$net.ibnd" "$tmp/$net.dump"
	"$SMCTL" dump --db "$db" --format json >"$tmp/$net.json" 2>&1
	check json_agrees "$tmp/$net.json" "$tmp/$net.dump"
	"$SMCTL" dump --db "$db" --format=dot >"$tmp/$net.dot" 2>&1
	check dot_agrees "$tmp/$net.dot" "$tmp/$net.dump"
done

# Widths and speeds ibsim can show (1x..12x, SDR..EDR), LMC 2, enhanced
# port 0, vendor and device IDs: the golden file, attached at its SM host
golden="$top/tests/dump/sim.ibnd"
smhost=$(awk '/^# Initiated from node/ { print "H-" $5 }' "$golden")
sim_start "$golden" >/dev/null 2>&1
SIM_HOST=$smhost sim_run ibnetdiscover >"$tmp/golden.ibnd" 2>/dev/null
check same "$golden" "$tmp/golden.ibnd"
SIM_HOST=$smhost sim_run "$SMD" --once --db "$tmp/golden.db" >"$tmp/golden.smd" 2>&1
check grep -q "subnet UP" "$tmp/golden.smd"
check grep -q " 0 new," "$tmp/golden.smd"
SIM_HOST=$smhost sim_run ibnetdiscover >"$tmp/golden2.ibnd" 2>/dev/null
sim_stop
"$SMCTL" dump --db "$tmp/golden.db" >"$tmp/golden.dump"
check same "$tmp/golden2.ibnd" "$tmp/golden.dump"

# Round trip: the dump of the irregular fabric is a fabric for ibsim
net=random16
smhost=$(awk '/^# Initiated from node/ { print "H-" $5 }' "$tmp/$net.dump")
sim_start "$tmp/$net.dump" >/dev/null 2>&1
check test -n "$smhost"
SIM_HOST=$smhost sim_run ibnetdiscover >"$tmp/rt.ibnd" 2>/dev/null
check same "$tmp/$net.dump" "$tmp/rt.ibnd"
SIM_HOST=$smhost sim_run "$SMD" --once --db "$tmp/rt.db" >"$tmp/rt.smd" 2>&1
check grep -q "subnet UP" "$tmp/rt.smd"
check grep -q " 0 new, 0 conflicts" "$tmp/rt.smd"
sim_stop
"$SMCTL" dump --db "$tmp/rt.db" >"$tmp/rt.dump"
check same "$tmp/$net.dump" "$tmp/rt.dump"

# Errors: no database, an unknown format, a stray argument
rc=0; "$SMCTL" dump --db "$tmp/none.db" >"$tmp/e1" 2>&1 || rc=$?
check test "$rc" -eq 1
check test ! -e "$tmp/none.db"
rc=0; "$SMCTL" dump --db "$tmp/ft3.db" --format xml >"$tmp/e2" 2>&1 || rc=$?
check test "$rc" -eq 2
check grep -q "unknown format 'xml'" "$tmp/e2"
rc=0; "$SMCTL" dump --db "$tmp/ft3.db" extra >"$tmp/e3" 2>&1 || rc=$?
check test "$rc" -eq 2
finish
