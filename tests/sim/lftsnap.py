#!/usr/bin/env python3
"""Forwarding tables of a simulated fabric, read with the real tools, and
what changed between two readings.

Usage:
  lftsnap.py snap FILE.json        read ibnetdiscover and every switch's LFT
                                   (ibroute, smpdump for the last block)
  lftsnap.py diff OLD NEW [--cut NAME:PORT ...] [--expect-same]

diff counts the LFT entries that differ between OLD and NEW, for switches and
LIDs present in both. With --cut
(one end of each cable that went away, by node description and port number)
it also walks each (switch, LID) route of OLD over OLD's cabling: a route
that crossed none of the cut cables (nor a switch or host that is gone) must
have the same entry in NEW, or it counts as "moved without cause" and diff
fails (status 1). --expect-same: any difference fails. Run it as a simulator
client (IBSIM_SOCKNAME exported), like checkfabric.py.
"""

import argparse
import concurrent.futures
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkfabric import (Checker, ToolError, Tools, parse_ibnetdiscover,  # noqa: E402
                         parse_ibroute, parse_smpdump_block)


def snap(path, jobs):
    tools = Tools(300, 0)
    try:
        dnodes, dlinks, local = parse_ibnetdiscover(tools.run("ibnetdiscover"))
        paths = Checker.dr_paths(dnodes, dlinks, local)
        sws = [g for g, n in dnodes.items() if n["kind"] == "sw" and g in paths]

        def read(g):
            out = tools.run("ibroute", "-a", "-n", "-D", paths[g])
            top, lft = parse_ibroute(out)
            if top and top % 64 == 0:          # ibroute never reads this block
                blk = parse_smpdump_block(
                    tools.run("smpdump", "-D", paths[g], "0x19", str(top // 64)))
                lft[top] = blk[0]
            return g, lft
        lfts = {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
            for g, lft in ex.map(read, sws):
                lfts["%x" % g] = {str(k): v for k, v in lft.items()}
        lids = {}                              # lid -> [guid, port]
        for g, n in dnodes.items():
            for p, (lid, lmc) in n["lid"].items():
                for k in range(1 << lmc):
                    lids[str(lid + k)] = ["%x" % g, p]
        doc = {
            "kinds": {"%x" % g: n["kind"] for g, n in dnodes.items()},
            "descs": {"%x" % g: n["desc"] for g, n in dnodes.items()},
            "links": ["%x:%d:%x:%d" % (a[0], a[1], b[0], b[1]) for a, b in dlinks.items()],
            "lids": lids,
            "lfts": lfts,
        }
        with open(path, "w") as f:
            json.dump(doc, f)
        print("lftsnap: %d switches, %d LIDs" % (len(lfts), len(lids)))
    finally:
        tools.cleanup()


def load(path):
    with open(path) as f:
        doc = json.load(f)
    links = {}
    for s in doc["links"]:
        a, ap, b, bp = s.split(":")
        links[(a, int(ap))] = (b, int(bp))
    return doc, links


def diff(args):
    old, olinks = load(args.old)
    new, _ = load(args.new)
    cut = set()
    for c in args.cut or []:
        name, p = c.rsplit(":", 1)
        ends = [(g, int(p)) for g, d in old["descs"].items() if d == name]
        if len(ends) != 1 or ends[0] not in olinks:
            raise ValueError("--cut %s: no such cabled port in %s" % (c, args.old))
        cut.add(ends[0])
        cut.add(olinks[ends[0]])
    changed = same = moved = 0
    example = None
    for g, nl in new["lfts"].items():
        ol = old["lfts"].get(g)
        if ol is None:
            continue
        for lid in new["lids"]:
            if lid not in old["lids"] or old["lids"][lid] != new["lids"][lid]:
                continue
            o, n = ol.get(lid), nl.get(lid)
            if o == n:
                same += 1
                continue
            changed += 1
            if args.cut is not None and not crossed(old, olinks, new, g, lid, cut):
                moved += 1
                example = example or "switch %s LID %s: port %s -> %s" % (g, lid, o, n)
    print("lftsnap: %d LFT entries compared, %d changed, %d moved without cause"
          % (same + changed, changed, moved))
    if example:
        print("lftsnap: for example %s" % example)
    if moved or (args.expect_same and changed):
        return 1
    return 0


def crossed(old, links, new, g, lid, cut):
    """Whether OLD's route from switch g to lid crossed a cut cable, or a
    switch or host that NEW no longer has."""
    dst = old["lids"][lid]
    cur = g
    for _ in range(64):
        if cur not in new["kinds"]:
            return True
        if cur == dst[0]:
            return False
        port = old["lfts"].get(cur, {}).get(lid)
        if port is None or port == 255 or (cur, port) in cut:
            return True
        peer = links.get((cur, port))
        if peer is None:
            return True
        if old["kinds"].get(peer[0]) != "sw":
            return peer[0] not in new["kinds"]
        cur = peer[0]
    return True


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snap")
    s.add_argument("file")
    s.add_argument("--jobs", type=int, default=8)
    d = sub.add_parser("diff")
    d.add_argument("old")
    d.add_argument("new")
    d.add_argument("--cut", nargs="*")
    d.add_argument("--expect-same", action="store_true")
    a = ap.parse_args()
    try:
        if a.cmd == "snap":
            snap(a.file, a.jobs)
            return 0
        return diff(a)
    except (ToolError, OSError, ValueError) as e:
        print("lftsnap: ERROR %s" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main())
