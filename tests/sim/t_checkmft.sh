#!/bin/bash
# checkmft.py must catch what it claims to catch.  On a small fat-tree that
# the SM brings up (unicast only is needed: ibnetdiscover gives the fabric),
# a synthetic group and hand-made MFTs: a correct tree passes; a missing
# receiver, a cycle, a copy to a non-member, an uncabled port, a one-way
# link, a stale MLID each fail in their category (the uncabled case uses
# a port number beyond the switch's: every port of these fabrics is cabled); copies to send-only
# members are counted (failures only with --strict-sendonly); --fast gives
# the same verdicts.  No multicast support in the SM is needed.
. "$(dirname "$0")/mcast_lib.sh"
$GEN ft2 4 -o "$mc_tmp/net" 2>/dev/null
mc_sim_start "$mc_tmp/net"
mc_sm_start "$mc_tmp/net"
(cd "$mc_tmp" && sim_run ibnetdiscover) >"$mc_tmp/ibnd" 2>/dev/null
mc_sm_stop

# Build the cases from the discovered fabric: members = every CA but one
# (host-0007 stays out), host-0006 a SendOnlyFullMember; the correct tree
# uses one spine.
python3 - "$mc_tmp" "$here" <<'EOF'
import os, sys
d, here = sys.argv[1], sys.argv[2]
sys.path.insert(0, here)
import checkfabric
nodes, links, _ = checkfabric.parse_ibnetdiscover(open(os.path.join(d, "ibnd")).read())
by_desc = {n["desc"]: g for g, n in nodes.items()}
sws = sorted((n["desc"], g) for g, n in nodes.items() if n["kind"] == "sw")
lid = {g: nodes[g]["lid"][0][0] for _, g in sws}
leaves = [g for desc, g in sws if desc.startswith("leaf")]
spines = [g for desc, g in sws if desc.startswith("spine")]
cas = sorted((n["desc"], g) for g, n in nodes.items() if n["kind"] != "sw")
MGID, MLID = "ff12:e0c0::1", 0xc000
outsider, sendonly = "host-0007", "host-0006"

def gid(pg):
    return "fe80::%x:%x:%x:%x" % (pg >> 48, (pg >> 32) & 0xffff, (pg >> 16) & 0xffff, pg & 0xffff)

members = []
for desc, g in cas:
    if desc == outsider:
        continue
    pg = nodes[g]["portguid"][1]
    js = 8 if desc == sendonly else 1
    members.append("host=%s seq=1 op=join status=0x0000 req_mgid=%s req_pgid=%s req_js=0x%x "
                   "mgid=%s mlid=0x%04x" % (desc, MGID, gid(pg), js, MGID, MLID))
open(os.path.join(d, "members"), "w").write("\n".join(members) + "\n")

def port_to(sw, peer_guid, peer_port=None):
    for (g, p), (rg, rp) in links.items():
        if g == sw and rg == peer_guid and (peer_port is None or rp == peer_port):
            return p
    raise KeyError

def correct():
    m = {}
    spine = spines[0]
    for leaf in leaves:
        m.setdefault(leaf, set()).add(port_to(leaf, spine))
        m.setdefault(spine, set()).add(port_to(spine, leaf))
    for desc, g in cas:
        if desc == outsider:
            continue
        sw, p = links[(g, 1)]
        m.setdefault(sw, set()).add(p)
    return m

def write(name, m, extra=()):
    lines = []
    for sw, ports in m.items():
        mask = 0
        for p in ports:
            mask |= 1 << p
        h = "".join("%04x" % ((mask >> (16 * k)) & 0xffff) for k in range(2))
        lines.append("op=mft-entry lid=%d mlid=0x%04x mask=%s" % (lid[sw], MLID, h))
    lines += list(extra)
    open(os.path.join(d, "mft." + name), "w").write("\n".join(lines) + "\n")

write("ok", correct())
m = correct()                           # a receiver's port left out
host = by_desc["host-0001"]
sw, p = links[(host, 1)]
m[sw].discard(p)
write("delivery", m)
m = correct()                           # a second spine closes a cycle
for leaf in leaves[:2]:
    m[leaf].add(port_to(leaf, spines[1]))
    m.setdefault(spines[1], set()).add(port_to(spines[1], leaf))
write("loop", m)
m = correct()                           # the outsider gets copies
sw, p = links[(by_desc[outsider], 1)]
m[sw].add(p)
write("extra", m)
m = correct()                           # a port the switch does not have
m[leaves[0]].add(nodes[leaves[0]]["nports"] + 1)
write("uncabled", m)
m = correct()                           # spine forwards to leaf 1, not back
m[leaves[1]].discard(port_to(leaves[1], spines[0]))
write("delivery2", m)
write("stale", correct(), ["op=mft-entry lid=%d mlid=0xc005 mask=00060000" % lid[leaves[0]]])
EOF

run() {	# run NAME [checkmft args]: its verdict line and failure categories
	local name=$1
	shift
	(cd "$mc_tmp" && $CHECKMFT --ibnetdiscover "$mc_tmp/ibnd" --members "$mc_tmp/members" \
		--mft "$mc_tmp/mft.$name" "$@") >"$mc_tmp/out.$name" 2>&1
}
for fast in "" --fast; do
	check run ok $fast
	check grep -q 'sendonly_copies=[1-9]' "$mc_tmp/out.ok"
	check test "$(run ok --strict-sendonly $fast; echo $?)" -eq 1
	check grep -q '^FAIL sendonly' "$mc_tmp/out.ok"
	for bad in delivery loop extra uncabled delivery2 stale; do
		check test "$(run $bad $fast; echo $?)" -eq 1
		case $bad in delivery2) cat=delivery ;; *) cat=$bad ;; esac
		check grep -q "^FAIL $cat:" "$mc_tmp/out.$bad"
	done
done
finish
