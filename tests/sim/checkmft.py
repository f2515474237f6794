#!/usr/bin/env python3
"""Check the multicast forwarding of an ibsim fabric, trusting only real tools.

Usage:  checkmft.py (--members FILE... | --from-sa) [--mft FILE] [--jobs N]
                    [--allow-extra] [--allow-stale] [--expect-groups N]
                    [--mcclient PATH] [--smkey N] [--summary FILE] [-v]

Run it while the simulator is up (IBSIM_SOCKNAME exported); the tools it runs
attach as simulator clients (LD_PRELOAD of libumad2sim.so is added).

Fabric: one ibnetdiscover gives the switches, their LIDs, the cables and
where each CA port is attached.  MFTs: one "ibroute -M -n LID" per switch
(--jobs at a time), or the "op=mft-entry" lines of mcclient's mft verb from
--mft FILE (what the benchmark polls with).

Membership: --members FILE (mcclient output: every successful join adds the
JoinState bits it asked for, every successful leave removes them; the MLID
comes from the answers and must be one per MGID), or --from-sa (mcclient
scans the MLIDs for the groups, then asks the SA, trusted, for every CA
port of the fabric in every group).

For every group and every member as sender (every JoinState may send) the
packet is flooded along the MFTs: a switch forwards it out of every port of
the MLID's mask except the one it came in on (IBA 18.2.4.3.3).  It must
reach every other receiving member (FullMember or NonMember: IBA 15.2.5.17;
SendOnlyNonMember and SendOnlyFullMember only send) exactly once, visit no
switch twice (that is a loop or a second path), use no uncabled port, and,
unless --allow-extra, reach no CA port that is not a member.  Copies that
reach send-only members are counted per group (sendonly_copies=): the spec
does not require them to receive, so they are waste, not errors (failures
with --strict-sendonly).
MLIDs with entries in some MFT but no live group are stale (a leak of the
SM's), failures unless --allow-stale.  Link usage per tree is reported:
how many trees use each inter-switch link and each switch without CA ports
(the spines of a fat-tree), to judge whether trees spread;
--min-top-switches N makes too little spread a failure.

Exit status 0 when everything holds, 1 on check failures, 2 on errors.
"""

import argparse
import collections
import concurrent.futures
import json
import os
import re
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import checkfabric  # noqa: E402  (parse_ibnetdiscover, Tools)

JS_FULL, JS_NON, JS_SONON, JS_SOFULL = 1, 2, 4, 8
RECEIVES = JS_FULL | JS_NON
MAX_REPORT = 12


def kv(line):
    out = {}
    for w in line.split():
        k, sep, v = w.partition("=")
        if sep:
            out[k] = v
    return out


def gid_guid(gid):
    """Low 64 bits (the port GUID) of a GID written as an IPv6 address."""
    import ipaddress
    return int(ipaddress.IPv6Address(gid)) & ((1 << 64) - 1)


def canon_gid(gid):
    import ipaddress
    return str(ipaddress.IPv6Address(gid))


# --------------------------------------------------------------- membership
def members_from_files(paths):
    """-> ({mgid: {port_guid: js}}, {mgid: mlid}, problems)"""
    members = collections.defaultdict(dict)
    mlids = {}
    problems = []
    for path in paths:
        with open(path) as f:
            for line in f:
                d = kv(line)
                op = d.get("op")
                if op not in ("join", "ipoib", "leave", "ipoib-leave"):
                    continue
                if d.get("status") != "0x0000":
                    continue
                mgid = canon_gid(d.get("mgid") or d["req_mgid"])
                guid = gid_guid(d["req_pgid"])
                js = int(d["req_js"], 0)
                if op in ("join", "ipoib"):
                    members[mgid][guid] = members[mgid].get(guid, 0) | js
                    mlid = int(d["mlid"], 0)
                    if mgid in mlids and mlids[mgid] != mlid:
                        problems.append("group %s answered with MLIDs %#x and %#x"
                                        % (mgid, mlids[mgid], mlid))
                    mlids.setdefault(mgid, mlid)
                else:
                    left = members[mgid].get(guid, 0) & ~js
                    if left:
                        members[mgid][guid] = left
                    else:
                        members[mgid].pop(guid, None)
    for mgid in [g for g, m in members.items() if not m]:
        del members[mgid]
        mlids.pop(mgid, None)
    return dict(members), mlids, problems


def members_from_sa(tools, mcclient, smkey, gids):
    """Groups by an MLID scan (one record per group, untrusted), members by
    one trusted Get (MGID, PortGID) per CA port and group."""
    groups = {}
    for line in tools.run_ok(mcclient, "scan").splitlines():
        d = kv(line)
        if d.get("op") == "scan-rec":
            groups[canon_gid(d["mgid"])] = int(d["mlid"], 0)
    lines = ["get mgid=%s pgid=%s smkey=%d" % (mgid, gid, smkey)
             for mgid in groups for gid in gids]
    members = collections.defaultdict(dict)
    if lines:
        batch = tools.write("gets", "\n".join(lines) + "\n")
        for line in tools.run_ok(mcclient, "--batch", batch).splitlines():
            d = kv(line)
            if d.get("op") == "get" and d.get("status") == "0x0000":
                js = int(d["js"], 0)
                if js:
                    members[canon_gid(d["mgid"])][gid_guid(d["pgid"])] = js
    return dict(members), groups, []


# --------------------------------------------------------------- MFTs
MFT_LINE = re.compile(r"^0x([0-9a-f]{4})\s+([0-9a-f]+)\s*$")


def parse_ibroute_mft(text):
    """'ibroute -M -n' -> {mlid: port bitmask (int, bit p = port p)}"""
    out = {}
    for line in text.splitlines():
        m = MFT_LINE.match(line.strip())
        if not m:
            continue
        out[int(m.group(1), 16)] = hexmask(m.group(2))
    return out


def hexmask(h):
    """'%04x' per 16-port position, position 0 first -> int bitmask"""
    mask = 0
    for pos in range(len(h) // 4):
        mask |= int(h[4 * pos:4 * pos + 4], 16) << (16 * pos)
    return mask


def mfts_from_file(path):
    mfts = collections.defaultdict(dict)
    with open(path) as f:
        for line in f:
            d = kv(line)
            if d.get("op") == "mft-entry":
                mfts[int(d["lid"])][int(d["mlid"], 0)] = hexmask(d["mask"])
    return mfts


# --------------------------------------------------------------- the check
class Check:
    def __init__(self, args):
        self.a = args
        self.failures = collections.OrderedDict()

    def fail(self, cat, msg):
        self.failures.setdefault(cat, []).append(msg)

    def log(self, msg):
        if self.a.verbose:
            sys.stderr.write("checkmft: %s\n" % msg)

    def run(self):
        t0 = time.time()
        tools = Tools(self.a.timeout, self.a.verbose)
        try:
            return self._run(tools, t0)
        finally:
            tools.cleanup()

    def _run(self, tools, t0):
        a = self.a
        if a.ibnetdiscover:
            with open(a.ibnetdiscover) as f:
                disc = f.read()
        else:
            disc = tools.run_ok("ibnetdiscover")
        dnodes, dlinks, _ = checkfabric.parse_ibnetdiscover(disc)
        switches = {g: n for g, n in dnodes.items() if n["kind"] == "sw"}
        ca_of_guid = {}                 # port guid -> (node guid, port)
        for g, n in dnodes.items():
            if n["kind"] != "sw":
                for p, pg in n["portguid"].items():
                    ca_of_guid[pg] = (g, p)
        self.log("fabric: %d switches, %d CA ports (%.2fs)"
                 % (len(switches), len(ca_of_guid), time.time() - t0))

        # membership
        if a.from_sa:
            prefix = a.gid_prefix
            gids = ["%s:%x:%x:%x:%x" % (prefix, pg >> 48, (pg >> 32) & 0xffff,
                                        (pg >> 16) & 0xffff, pg & 0xffff)
                    for pg in sorted(ca_of_guid)]
            members, mlids, problems = members_from_sa(tools, a.mcclient, a.smkey, gids)
        else:
            members, mlids, problems = members_from_files(a.members)
        for p in problems:
            self.fail("membership", p)
        if a.expect_groups is not None and len(members) != a.expect_groups:
            self.fail("membership", "%d live groups, expected %d"
                      % (len(members), a.expect_groups))

        # MFTs
        t1 = time.time()
        if a.mft:
            by_lid = mfts_from_file(a.mft)
        else:
            by_lid = {}
            lids = sorted(n["lid"][0][0] for n in switches.values() if 0 in n["lid"])
            with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
                futs = {ex.submit(tools.run_ok, "ibroute", "-M", "-n", str(lid)): lid
                        for lid in lids}
                for fut, lid in futs.items():
                    by_lid[lid] = parse_ibroute_mft(fut.result())
        mft = {}                         # switch guid -> {mlid: mask}
        for g, n in switches.items():
            lid = n["lid"].get(0, (None,))[0]
            mft[g] = by_lid.get(lid, {})
        self.log("MFTs of %d switches read in %.2fs" % (len(mft), time.time() - t1))

        stats = self.check(dnodes, dlinks, switches, ca_of_guid, members, mlids, mft)
        stats["seconds"] = round(time.time() - t0, 2)
        return self.report(stats)

    def check(self, dnodes, dlinks, switches, ca_of_guid, members, mlids, mft):
        a = self.a
        name = {g: n["desc"] for g, n in dnodes.items()}
        has_ca = {g for g in switches
                  if any(dlinks.get((g, p), (None,))[0] in dnodes and
                         dnodes[dlinks[(g, p)][0]]["kind"] != "sw"
                         for p in range(1, switches[g]["nports"] + 1))}
        link_use = collections.Counter()     # frozenset of two ends -> trees
        switch_use = collections.Counter()   # switch guid -> trees
        groups_out = []
        floods = 0
        live_mlids = set()
        for mgid in sorted(members):
            mem = members[mgid]
            mlid = mlids.get(mgid)
            if mlid is None:
                self.fail("membership", "group %s: no MLID known" % mgid)
                continue
            live_mlids.add(mlid)
            unknown = [pg for pg in mem if pg not in ca_of_guid]
            for pg in unknown:
                self.fail("membership", "group %s: member port GUID %#x is not in the "
                          "fabric" % (mgid, pg))
            receivers = {ca_of_guid[pg] for pg, js in mem.items()
                         if js & RECEIVES and pg in ca_of_guid}
            sendonly = {ca_of_guid[pg] for pg, js in mem.items()
                        if not js & RECEIVES and pg in ca_of_guid}
            senders = [ca_of_guid[pg] for pg in mem if pg in ca_of_guid]
            tree_links, tree_switches = set(), set()
            bad = so_copies = 0
            fast = (a.fast and not a.strict_sendonly and
                    self.tree_ok(mlid, mft, dlinks, dnodes, receivers, sendonly, senders))
            if fast:
                tree_links, tree_switches, so_copies = fast
            for src in ([] if fast else senders):
                floods += 1
                got, used_links, used_sw, problems = self.flood(src, mlid, dlinks, dnodes,
                                                                mft, receivers - {src})
                tree_links |= used_links
                tree_switches |= used_sw
                for p in problems:
                    bad += 1
                    self.fail(p[0], "group %s mlid %#x from %s: %s"
                              % (mgid, mlid, self.pname(src, name), p[1]))
                for r in receivers:
                    if r == src:
                        continue
                    n = got.get(r, 0)
                    if n != 1:
                        bad += 1
                        self.fail("delivery", "group %s mlid %#x from %s: %s received %d "
                                  "copies" % (mgid, mlid, self.pname(src, name),
                                              self.pname(r, name), n))
                for end, n in got.items():
                    if end in receivers or end == src:
                        continue
                    if end in sendonly:
                        # IBA 15.2.5.17: send-only members need not
                        # receive; a copy to one is waste, not an error
                        so_copies += n
                        if a.strict_sendonly:
                            bad += 1
                            self.fail("sendonly", "group %s mlid %#x from %s: reaches "
                                      "send-only member %s" % (mgid, mlid,
                                                               self.pname(src, name),
                                                               self.pname(end, name)))
                        continue
                    if end[1] == 0 and end[0] in switches:
                        what = "switch %s port 0" % name.get(end[0], hex(end[0]))
                    else:
                        what = self.pname(end, name)
                    if not a.allow_extra:
                        bad += 1
                        self.fail("extra", "group %s mlid %#x from %s: reaches %s, not a "
                                  "receiving member (%d copies)"
                                  % (mgid, mlid, self.pname(src, name), what, n))
            for l in tree_links:
                link_use[l] += 1
            for s in tree_switches:
                switch_use[s] += 1
            top = sorted(name.get(s, hex(s)) for s in tree_switches if s not in has_ca)
            groups_out.append({"mgid": mgid, "mlid": "%#x" % mlid, "members": len(mem),
                               "receivers": len(receivers), "senders": len(senders),
                               "sendonly_copies": so_copies,
                               "switches": len(tree_switches), "links": len(tree_links),
                               "top": top, "ok": bad == 0})
            self.log("group %s mlid %#x: %d members, %d switches, %d links, top %s%s"
                     % (mgid, mlid, len(mem), len(tree_switches), len(tree_links),
                        ",".join(top) or "-", "" if bad == 0 else " FAIL"))
        # stale entries: MLIDs programmed somewhere with no live group
        stale = collections.Counter()
        for g, entries in mft.items():
            for mlid, mask in entries.items():
                if mask and mlid not in live_mlids:
                    stale[mlid] += 1
        for mlid, n in sorted(stale.items()):
            if not a.allow_stale:
                self.fail("stale", "MLID %#x has entries in %d switches but no live group"
                          % (mlid, n))
        tops = collections.Counter({name.get(s, hex(s)): switch_use[s]
                                    for s in switches if s not in has_ca})
        used_tops = sum(1 for n in tops.values() if n)
        if a.min_top_switches and used_tops < a.min_top_switches:
            self.fail("spread", "the trees use %d switches without CA ports, want at least %d"
                      % (used_tops, a.min_top_switches))
        loads = sorted(link_use.values())
        return {"groups": groups_out, "floods": floods, "stale_mlids": len(stale),
                "top_switch_trees": dict(sorted(tops.items())),
                "isl_used": len(loads), "isl_max_trees": loads[-1] if loads else 0,
                "isl_mean_trees": round(sum(loads) / len(loads), 2) if loads else 0}

    @staticmethod
    def pname(end, name):
        return "%s[%d]" % (name.get(end[0], hex(end[0])), end[1])

    @staticmethod
    def tree_ok(mlid, mft, dlinks, dnodes, receivers, sendonly, senders):
        """--fast: when the masked links form a tree over the switches with
        an MFT entry (every link masked at both ends, connected, one link
        fewer than switches), when exactly the receivers' and send-only
        members' ports are masked, and every sender's switch is in the tree,
        then a flood from any member reaches every other receiver exactly
        once: one pass per group instead of one per sender.  -> (links,
        switches, send-only copies), or None to flood sender by sender."""
        S = {sw for sw, t in mft.items() if t.get(mlid, 0)}
        links, ends = set(), set()
        for sw in S:
            mask, port = mft[sw][mlid], 0
            while mask:
                if mask & 1:
                    peer = dlinks.get((sw, port)) if port else None
                    if port == 0 or peer is None:
                        return None
                    if dnodes[peer[0]]["kind"] == "sw":
                        if not (mft.get(peer[0], {}).get(mlid, 0) >> peer[1]) & 1:
                            return None
                        links.add(frozenset(((sw, port), peer)))
                    else:
                        ends.add(peer)
                mask >>= 1
                port += 1
        if ends != receivers | (ends & sendonly) or not receivers <= ends:
            return None
        if len(receivers) > 1 or (receivers and set(senders) - receivers):
            if len(links) != len(S) - 1 or any(dlinks[src][0] not in S for src in senders):
                return None
            # connected?
            adj = collections.defaultdict(list)
            for l in links:
                x, y = tuple(l)
                adj[x[0]].append(y[0])
                adj[y[0]].append(x[0])
            start = next(iter(S))
            seen, todo = {start}, [start]
            while todo:
                for nb in adj[todo.pop()]:
                    if nb not in seen:
                        seen.add(nb)
                        todo.append(nb)
            if seen != S:
                return None
        so = len(ends & sendonly)
        # every sender's copy reaches every masked send-only port but its own
        copies = sum(so - (1 if src in ends & sendonly else 0) for src in senders)
        return links, S, copies

    def flood(self, src, mlid, dlinks, dnodes, mft, want):
        """Flood one packet from CA port src; -> (deliveries {end: n},
        inter-switch links used, switches used, [(category, text)])"""
        got = collections.Counter()
        used_links, used_sw, problems = set(), set(), []
        first = dlinks.get(src)
        if first is None:
            return got, used_links, used_sw, [("fabric", "sender port not cabled")]
        queue = collections.deque([first])
        seen = set()
        while queue:
            sw, inport = queue.popleft()
            if sw in seen:
                problems.append(("loop", "switch %s reached twice (again via port %d)"
                                 % (dnodes[sw]["desc"], inport)))
                continue
            seen.add(sw)
            used_sw.add(sw)
            mask = mft.get(sw, {}).get(mlid, 0)
            if not mask and (sw, inport) == first and want:
                problems.append(("delivery", "the sender's switch %s has no MFT entry"
                                 % dnodes[sw]["desc"]))
            port = 0
            while mask:
                if mask & 1 and port != inport:
                    if port == 0:
                        got[(sw, 0)] += 1
                    else:
                        peer = dlinks.get((sw, port))
                        if peer is None:
                            problems.append(("uncabled", "switch %s forwards to uncabled "
                                             "port %d" % (dnodes[sw]["desc"], port)))
                        elif dnodes[peer[0]]["kind"] == "sw":
                            used_links.add(frozenset(((sw, port), peer)))
                            queue.append(peer)
                        else:
                            got[peer] += 1
                mask >>= 1
                port += 1
        return got, used_links, used_sw, problems

    def report(self, stats):
        a = self.a
        for g in stats["groups"]:
            print("checkmft: group mgid=%s mlid=%s members=%d receivers=%d switches=%d "
                  "links=%d top=%s sendonly_copies=%d %s"
                  % (g["mgid"], g["mlid"], g["members"], g["receivers"], g["switches"],
                     g["links"], ",".join(g["top"]) or "-", g["sendonly_copies"],
                     "ok" if g["ok"] else "FAIL"))
        tops = stats["top_switch_trees"]
        if tops:
            print("checkmft: trees per top switch (no CA ports): %s"
                  % " ".join("%s=%d" % kvp for kvp in tops.items()))
        print("checkmft: inter-switch links used %d, trees per used link max %d mean %s"
              % (stats["isl_used"], stats["isl_max_trees"], stats["isl_mean_trees"]))
        if a.summary:
            with open(a.summary, "w") as f:
                json.dump({"stats": stats, "failures": self.failures}, f, indent=1)
        nfail = sum(len(v) for v in self.failures.values())
        for cat, msgs in self.failures.items():
            print("FAIL %s: %d" % (cat, len(msgs)))
            for m in msgs[:MAX_REPORT]:
                print("  %s" % m)
            if len(msgs) > MAX_REPORT:
                print("  ... %d more" % (len(msgs) - MAX_REPORT))
        verdict = "PASS" if not nfail else "FAIL"
        print("checkmft: %s: %d groups, %d floods, %d stale MLIDs, %d failures (%.2fs)"
              % (verdict, len(stats["groups"]), stats["floods"], stats["stale_mlids"], nfail,
                 stats["seconds"]))
        return 0 if not nfail else 1


class Tools(checkfabric.Tools):
    """checkfabric's tool runner, plus files in its work dir."""

    def run_ok(self, *args):
        return self.run(*args)

    def write(self, name, text):
        path = os.path.join(self.workdir, name)
        with open(path, "w") as f:
            f.write(text)
        return path


def main(argv):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--members", action="append", default=[], metavar="FILE",
                    help="mcclient output with the joins and leaves of the test")
    ap.add_argument("--from-sa", action="store_true",
                    help="ask the SA for the groups and their members")
    ap.add_argument("--smkey", type=lambda x: int(x, 0), default=1,
                    help="SM_Key for the trusted member queries (opensm's default: 1)")
    ap.add_argument("--gid-prefix", default="fe80::",
                    help="subnet prefix of the port GIDs (--from-sa)")
    ap.add_argument("--mcclient", default=os.environ.get("MCCLIENT",
                                                         os.path.join(here, "mcclient")))
    ap.add_argument("--mft", metavar="FILE", help="MFTs from mcclient mft lines, not ibroute")
    ap.add_argument("--ibnetdiscover", metavar="FILE",
                    help="the fabric from this saved ibnetdiscover output (for polling)")
    ap.add_argument("--jobs", type=int, default=3, help="ibroute processes at once (3)")
    ap.add_argument("--fast", action="store_true",
                    help="one structural pass per group when its links form a tree "
                    "(floods sender by sender otherwise)")
    ap.add_argument("--allow-extra", action="store_true",
                    help="deliveries to non-receiving CA ports are not failures")
    ap.add_argument("--strict-sendonly", action="store_true",
                    help="copies to send-only members are failures (default: counted)")
    ap.add_argument("--allow-stale", action="store_true",
                    help="MFT entries of MLIDs without a group are not failures")
    ap.add_argument("--expect-groups", type=int, help="number of live groups expected")
    ap.add_argument("--min-top-switches", type=int, default=0, metavar="N",
                    help="fail unless the trees together use N switches without CA ports "
                    "(the spines of a fat-tree): do they spread?")
    ap.add_argument("--summary", metavar="FILE", help="write a JSON summary")
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("-v", "--verbose", action="count", default=0)
    a = ap.parse_args(argv)
    if not a.members and not a.from_sa:
        ap.error("give --members FILE or --from-sa")
    try:
        return Check(a).run()
    except (checkfabric.ToolError, OSError, KeyError, ValueError) as e:
        sys.stderr.write("checkmft: error: %s\n" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
