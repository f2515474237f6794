#!/bin/bash
# LID stability when hosts come and go, on fresh copies of an irregular
# fabric with dual-port HCAs (every port's LID reset, as after a power
# cycle): with 5 hosts unplugged every remaining port gets the LID it had;
# 5 new hosts on the freed switch ports do not take the absent hosts'
# LIDs; with the original hosts back every port has its first LID again.
# The database tells the story (smctl lids, smctl history) and forgets an
# absent port on request (smctl lids --forget), freeing its LID.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1
$GEN random --switches 16 --seed 21 -o "$tmp/full.net" 2>/dev/null
db="$tmp/smd.db"

# Drop 5 hosts (dual-port ones first) and their cables: unplugged.net;
# replaced.net also cables 5 new hosts to the switch ports they used
python3 - "$tmp/full.net" <<'EOF'
import re, sys
src = open(sys.argv[1]).read()
blocks = src.split("\n\n")
hosts = []                                  # (name, nports, block index)
for i, b in enumerate(blocks):
    m = re.search(r'^Hca\t(\d+) "([^"]+)"', b, re.M)
    if m and m.group(2) != "smhost":
        cabled = len(re.findall(r'^\[\d+\]', b, re.M))
        hosts.append((cabled, m.group(2), i))
hosts.sort(key=lambda h: (-h[0], h[1]))
gone = [h[1] for h in hosts[:5]]
open("gone", "w").write("\n".join(gone) + "\n")
# their port GUIDs as fabric_lids prints them: node GUID + port number
with open("gone.guids", "w") as f:
    for h in hosts[:5]:
        b = blocks[h[2]]
        guid = int(re.search(r'^caguid=(0x[0-9a-f]+)', b, re.M).group(1), 16)
        nports = int(re.search(r'^Hca\t(\d+)', b, re.M).group(1))
        for p in range(1, nports + 1):
            f.write("0x%x\n" % (guid + p))

def without(replace):
    out, freed = [], []
    for i, b in enumerate(blocks):
        if any(i == h[2] for h in hosts[:5]):
            continue
        lines = []
        sw = re.search(r'^Switch\t\d+ "([^"]+)"', b, re.M)
        for l in b.split("\n"):
            m = re.match(r'^\[(\d+)\]\t"([^"]+)"\[(\d+)\]', l)
            if m and m.group(2) in gone:
                freed.append((sw.group(1), int(m.group(1))))
                continue
            lines.append(l)
        out.append("\n".join(lines))
    if replace:
        for k, (sw, port) in enumerate(freed[:5]):
            name, guid = "newhost-%d" % k, 0x0002c903a0000000 + 4 * k
            out.append('caguid=0x%016x\nHca\t1 "%s"\n[1]\t"%s"[%d]' % (guid, name, sw, port))
            for j, b in enumerate(out):
                if re.search(r'^Switch\t\d+ "%s"$' % re.escape(sw), b, re.M):
                    out[j] = b + '\n[%d]\t"%s"[1]' % (port, name)
    return "\n\n".join(out).rstrip("\n") + "\n"

open("unplugged.net", "w").write(without(False))
open("replaced.net", "w").write(without(True))
EOF
check test "$(wc -l <gone)" -eq 5

run_smd() {	# NET LOG: a fresh simulator (every LID reset), smd once, the LIDs
	sim_start "$1" >/dev/null 2>&1
	sim_run "$SMD" --once --db "$db" >"$2" 2>&1
	fabric_lids >"$2.lids"
	sim_stop
}

run_smd full.net run1
check grep -q "subnet UP" run1
check test "$(wc -l <gone.guids)" -ge 8
# LIDs of the absent hosts' ports, from the first run
grep -w -F -f gone.guids run1.lids | awk '{ print $2 }' | sort -n >gone.lids
check test "$(wc -l <gone.lids)" -ge 5

# 5 hosts unplugged: every remaining port keeps its LID
run_smd unplugged.net run2
check grep -q "subnet UP" run2
check grep -q "0 kept, [0-9]* remembered, 0 new" run2
check test -z "$(comm -13 run1.lids run2.lids)"
check test "$(($(wc -l <run1.lids) - $(wc -l <run2.lids)))" -eq "$(wc -l <gone.lids)"
"$SMCTL" --db "$db" history --sweeps 1 --events 1000 >hist2
check test "$(grep -c ' node_vanished ' hist2)" -eq 5
"$SMCTL" --db "$db" lids >lids2
check test "$(grep -c -v -e ' present ' -e '^LID' lids2)" -eq "$(wc -l <gone.lids)"

# 5 new hosts where they were: new LIDs, not the absent hosts'
run_smd replaced.net run3
check grep -q "subnet UP" run3
check grep -q "LIDs: kept free for $(wc -l <gone.lids) absent ports" run3
new_lids() { grep -v -w -F -f <(awk '{ print $1 }' run1.lids) run3.lids | awk '{ print $2 }'; }
check test "$(new_lids | wc -l)" -eq 5
check test -z "$(new_lids | grep -x -F -f gone.lids)"
check test -z "$(comm -13 run1.lids <(grep -w -F -f <(awk '{ print $1 }' run1.lids) run3.lids))"

# Everyone back (the new hosts unplugged again): the LIDs of the first run
run_smd full.net run4
check grep -q "subnet UP" run4
check cmp -s run1.lids run4.lids
"$SMCTL" --db "$db" lids >lids4

# Forgetting an absent port: it leaves the list, the history says so, and
# its LID is no longer kept free
run_smd unplugged.net run5
check cmp -s run2.lids run5.lids
g=$(printf '0x%016x' "$(head -1 gone.guids)")
lid=$(awk -v g="$g" '$2 == g { print $1 }' lids4)
check test -n "$lid"
check "$SMCTL" --db "$db" lids --forget "$g"
"$SMCTL" --db "$db" lids >lids5
check test "$(grep -c -F "$g" lids5)" -eq 0
check test "$(wc -l <lids5)" -eq "$(($(wc -l <lids4) - 1))"
rc=0; "$SMCTL" --db "$db" lids --forget "$g" >/dev/null 2>&1 || rc=$?
check test "$rc" -eq 1
rc=0; "$SMCTL" --db "$db" lids --forget nonsense >/dev/null 2>&1 || rc=$?
check test "$rc" -eq 2
"$SMCTL" --db "$db" history --sweeps 0 --events 1 >hist5
check grep -q "lid_forgotten.*$g" hist5
run_smd replaced.net run6
check grep -q "subnet UP" run6
kept_free() { grep -o "kept free for [0-9]*" "$1" | awk '{ print $4 }'; }
check test "$(kept_free run6)" -eq "$(($(kept_free run3) - 1))"
check test "$(awk '{ print $2 }' run6.lids | grep -c -x "$lid")" -eq 0
finish
