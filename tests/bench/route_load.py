#!/usr/bin/env python3
"""Routes per link from a topology file and a dump of every switch's LFT.

    route_load.py NETFILE LFTDUMP [--label NAME]

NETFILE is the ibnetdiscover-format text tests/gen/topogen.py writes (GUIDs
given by switchguid=/caguid= lines; CA port GUID = node GUID + port).
LFTDUMP is in the format of opensm's opensm-lfts.dump (also written by
tests/bench/route_bench --dump-lfts):

    Unicast lids [0-192] of switch Lid 2 guid 0x0011750000000001 ('sw-0-0-0'):
    0x0001 007 # Channel Adapter portguid 0x0002c90300000005: 'smhost'
    0x0002 000 # Switch portguid 0x0011750000000001: 'sw-0-0-0'

The LID of every endport is taken from the comments (portguid). A route is a
pair (source CA port, destination LID), the destination being any LID of
another endport (CA ports and switch port 0); "CA->CA" counts only the pairs
whose destination is a CA port. Each route is walked from the source's switch
along the LFTs over the TRUE cabling of NETFILE, and counted on every
switch-to-switch link (one direction of a cable) it crosses. Printed, one
line: max and mean routes per directed switch-to-switch link (mean over all
such links), the same for CA->CA routes, and the number of routes that do not
arrive (dead end or loop).
"""

import argparse
import re
import sys


def parse_net(path):
    nodes = {}          # name -> dict(kind, guid, nports, peer{port: (name, rport)})
    guid = None
    cur = None
    with open(path) as f:
        for line in f:
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line.startswith("switchguid=") or line.startswith("caguid="):
                guid = int(line.split("=", 1)[1].split()[0], 0)
                continue
            m = re.match(r'(Switch|Hca|Ca)\s+(\d+)\s+"([^"]+)"', line)
            if m:
                kind = "sw" if m.group(1) == "Switch" else "ca"
                cur = m.group(3)
                nodes[cur] = {"kind": kind, "guid": guid, "nports": int(m.group(2)),
                              "peer": {}}
                guid = None
                continue
            m = re.match(r'\[(\d+)\]\s+"([^"]+)"\[(\d+)\]', line)
            if m and cur is not None:
                nodes[cur]["peer"][int(m.group(1))] = (m.group(2), int(m.group(3)))
    return nodes


def parse_lfts(path):
    """{switch guid: {lid: port}}, {lid: port guid}"""
    lfts = {}
    lid_guid = {}
    cur = None
    hdr = re.compile(r"Unicast lids .* guid (0x[0-9a-fA-F]+)")
    ent = re.compile(r"(0x[0-9a-fA-F]+)\s+(\d+)(?:\s+#.*portguid (0x[0-9a-fA-F]+))?")
    with open(path) as f:
        for line in f:
            m = hdr.match(line)
            if m:
                cur = lfts.setdefault(int(m.group(1), 16), {})
                continue
            m = ent.match(line)
            if m and cur is not None:
                lid = int(m.group(1), 16)
                cur[lid] = int(m.group(2))
                if m.group(3):
                    lid_guid[lid] = int(m.group(3), 16)
    return lfts, lid_guid


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("net")
    ap.add_argument("lfts")
    ap.add_argument("--label", default="")
    ap.add_argument("--top", type=int, default=0,
                    help="also print the N busiest link directions, one a line")
    a = ap.parse_args(argv)
    nodes = parse_net(a.net)
    lfts, lid_guid = parse_lfts(a.lfts)

    names = sorted(nodes)
    idx = {n: i for i, n in enumerate(names)}
    sw = [i for i, n in enumerate(names) if nodes[n]["kind"] == "sw"]
    by_guid = {nodes[n]["guid"]: idx[n] for n in names}
    # endport GUID -> (node index, port)
    port_of = {}
    for n in names:
        d = nodes[n]
        if d["kind"] == "sw":
            port_of[d["guid"]] = (idx[n], 0)
        else:
            for p in d["peer"]:
                port_of[d["guid"] + p] = (idx[n], p)
    lid_ep = {}
    for lid, g in lid_guid.items():
        if g in port_of:
            lid_ep[lid] = port_of[g]
    ep_lid = {v: k for k, v in lid_ep.items()}

    # sources: cabled CA ports with a LID, grouped by the switch they hang off
    src_at = {s: 0 for s in sw}
    nsrc = 0
    for n in names:
        d = nodes[n]
        if d["kind"] != "ca":
            continue
        for p, (rn, _rp) in d["peer"].items():
            if (idx[n], p) in ep_lid and nodes[rn]["kind"] == "sw":
                src_at[idx[rn]] += 1
                nsrc += 1

    lft_of = {}
    for s in sw:
        lft_of[s] = lfts.get(nodes[names[s]]["guid"], {})
    load = {}               # (switch, out port) -> routes
    load_ca = {}
    for s in sw:
        for p, (rn, _rp) in nodes[names[s]]["peer"].items():
            if nodes[rn]["kind"] == "sw":
                load[(s, p)] = 0
                load_ca[(s, p)] = 0
    bad = 0
    pairs = 0
    for lid, (dn, dp) in sorted(lid_ep.items()):
        dest_is_ca = nodes[names[dn]]["kind"] == "ca"
        # state per switch: None unknown, next switch index, -1 delivered, -2 dead
        nxt = {}
        for s in sw:
            port = lft_of[s].get(lid, 255)
            if port == 0:
                nxt[s] = -1 if (s, 0) == (dn, dp) else -2
                continue
            peer = nodes[names[s]]["peer"].get(port)
            if peer is None:
                nxt[s] = -2
                continue
            r = idx[peer[0]]
            if (r, peer[1]) == (dn, dp):
                nxt[s] = -1
            elif nodes[peer[0]]["kind"] == "sw":
                nxt[s] = (r, port)
            else:
                nxt[s] = -2
        # resolve each switch: delivered or not, and depth for ordering
        ok = {}
        depth = {}
        for s in sw:
            path = []
            cur = s
            while cur not in ok:
                if cur in depth:        # revisited in this walk: loop
                    break
                depth[cur] = -1
                path.append(cur)
                v = nxt[cur]
                if v == -1:
                    ok[cur] = True
                    depth[cur] = 0
                    path.pop()
                    break
                if v == -2:
                    ok[cur] = False
                    depth[cur] = 0
                    path.pop()
                    break
                cur = v[0]
            end_ok = ok.get(cur, False) if cur in ok else False
            d0 = depth.get(cur, 0) if cur in ok else 0
            for k, t in enumerate(reversed(path)):
                ok[t] = end_ok
                depth[t] = d0 + k + 1
        # sources per switch for this destination (the destination port itself excluded)
        srcs = dict(src_at)
        if dest_is_ca and nodes[names[dn]]["peer"].get(dp):
            rn = nodes[names[dn]]["peer"][dp][0]
            srcs[idx[rn]] -= 1
        for s in sw:
            pairs += srcs[s]
            if not ok[s]:
                bad += srcs[s]
        # accumulate subtree sums from the deepest switches up
        acc = dict(srcs)
        for s in sorted(sw, key=lambda t: -depth[t]):
            v = nxt[s]
            if not ok[s] or v == -1 or v == -2 or acc[s] == 0:
                continue
            r, port = v
            load[(s, port)] += acc[s]
            if dest_is_ca:
                load_ca[(s, port)] += acc[s]
            acc[r] += acc[s]

    def stats(ld):
        vals = list(ld.values())
        if not vals:
            return 0, 0.0
        return max(vals), sum(vals) / len(vals)

    mx, mean = stats(load)
    mxc, meanc = stats(load_ca)
    print("%s max %d mean %.1f ca2ca_max %d ca2ca_mean %.1f routes %d bad %d" %
          (a.label + (" " if a.label else ""), mx, mean, mxc, meanc, pairs, bad))
    for (s, p), n in sorted(load.items(), key=lambda x: -x[1])[:a.top]:
        rn, rp = nodes[names[s]]["peer"][p]
        print("  %6d (%d CA->CA) %s[%d] -> %s[%d]" % (n, load_ca[(s, p)], names[s], p, rn, rp))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
