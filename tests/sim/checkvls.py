#!/usr/bin/env python3
"""Check that the routes, SLs and SL-to-VL tables of a subnet are deadlock-free.

Usage:  checkvls.py --smctl SMCTL [--sample N] [--max-vls V] [--jobs N] [-v]
        checkvls.py --links [--jobs N] [-v]

Run it while an SM serves the simulator (IBSIM_SOCKNAME exported). Everything
it judges comes from the fabric and the SA, through the real tools, not from
the SM's own account:

  1. ibnetdiscover: nodes, cables, LIDs; directed routes to every switch.
  2. ibroute (by directed route): every switch's linear forwarding table.
  3. smpquery sl2vl: the SL-to-VL table of every (input, output) port pair of
     every switch and of every cabled CA port; smpquery portinfo: the
     OperationalVLs of every cabled port.
  4. The SA: the SL of the PathRecord of every (CA port, LID) pair, asked with
     "smctl sa path-sl" (one Get per pair, many in flight: saquery needs one
     process per query). A random sample of N pairs is asked again with
     saquery, and both answers must agree.
  5. Every pair is walked hop by hop: the destination is reached without a
     loop; each hop's VL (the SL through the table of the port pair it
     crosses) is a data VL below the transmitting port's OperationalVLs; at
     most V distinct VLs are used; and the channel dependency graph over
     (directed link, VL) is acyclic (Dally and Seitz: no credit loop).

With --links no SL is considered at all: every hop is taken to travel on
the same VL, so the graph is over directed links alone and only the
forwarding tables (steps 1, 2 and 5) are read. An acyclic graph then means
the routes are deadlock-free whatever SL, and so whatever VL, each packet
uses: what an application that picks its own SL needs.

Prints the most routes over one switch-to-switch link direction, the VLs used
and the size of the graph. Exit status 0 when everything holds, 1 on check
failures, 2 on tool errors.
"""

import argparse
import collections
import concurrent.futures
import os
import random
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkfabric import (Checker, ToolError, Tools, parse_ibnetdiscover,  # noqa: E402
                         parse_ibroute, parse_smpdump_block)

SL2VL_RE = re.compile(r"^ports: in\s+(\d+), out\s+(\d+):\s*\|(.*)\|\s*$", re.M)
OPVLS_RE = re.compile(r"^OperVLs:\.*VL0(?:-(\d+))?\s*$", re.M)
SAQ_SL_RE = re.compile(r"^\s*sl\.+(0x[0-9a-fA-F]+|\d+)\s*$", re.M)


def parse_sl2vl(text):
    """-> {(in, out): [16 VLs]}"""
    out = {}
    for m in SL2VL_RE.finditer(text):
        vls = [int(x) for x in m.group(3).split("|")]
        if len(vls) != 16:
            raise ToolError("unexpected smpquery sl2vl line: %r" % m.group(0))
        out[(int(m.group(1)), int(m.group(2)))] = vls
    if not out:
        raise ToolError("unexpected smpquery sl2vl output: %r" % text[:200])
    return out


def parse_opvls(text):
    m = OPVLS_RE.search(text)
    if not m:
        raise ToolError("no OperVLs in smpquery portinfo output: %r" % text[:200])
    return int(m.group(1)) + 1 if m.group(1) else 1


class VLChecker:
    def __init__(self, args):
        self.args = args
        self.failures = collections.OrderedDict()

    def fail(self, cat, msg):
        self.failures.setdefault(cat, []).append(msg)

    def log(self, msg):
        if self.args.verbose:
            sys.stderr.write("checkvls: %s\n" % msg)

    def run(self):
        tools = Tools(self.args.timeout, self.args.verbose)
        try:
            return self._run(tools)
        finally:
            tools.cleanup()

    def _run(self, tools):
        a = self.args
        dnodes, dlinks, local = parse_ibnetdiscover(tools.run("ibnetdiscover"))
        paths = Checker.dr_paths(dnodes, dlinks, local)
        sws = sorted(g for g, n in dnodes.items() if n["kind"] == "sw")
        missing = [g for g in sws if g not in paths]
        if missing:
            raise ToolError("no directed route to %d switches" % len(missing))
        lids = {}                               # lid -> (guid, port)
        base = {}                               # (guid, port) -> base LID
        for g, n in dnodes.items():
            for p, (lid, lmc) in n["lid"].items():
                base[(g, p)] = lid
                for l in range(lid, lid + (1 << lmc)):
                    lids[l] = (g, p)
        ca_ports = sorted(e for e in dlinks if dnodes[e[0]]["kind"] != "sw" and e in base)

        def ca_path(e):
            """Directed route to a CA port: through the switch it hangs off."""
            rg, rp = dlinks[e]
            if dnodes[rg]["kind"] != "sw":
                return None
            return "%s,%d" % (paths[rg], rp)

        local_port = None
        for p, pg in dnodes[local[0]]["portguid"].items():
            if pg == local[1]:
                local_port = (local[0], p)

        # ---- tables, all read in parallel ---------------------------------
        jobs = []                               # (kind, key, argv)
        for g in sws:
            jobs.append(("lft", g, ("ibroute", "-a", "-n", "-D", paths[g])))
            if a.links:
                continue
            outs = [0] + sorted(p for (gg, p) in dlinks if gg == g)
            for o in outs:
                jobs.append(("sl2vl", (g, o), ("smpquery", "-D", "sl2vl", paths[g], str(o))))
                if o:
                    jobs.append(("opvls", (g, o),
                                 ("smpquery", "-D", "portinfo", paths[g], str(o))))
        for e in ([] if a.links else ca_ports):
            path = "0" if e == local_port else ca_path(e)
            if path is None:
                continue
            jobs.append(("sl2vl", e, ("smpquery", "-D", "sl2vl", path)))
            jobs.append(("opvls", e, ("smpquery", "-D", "portinfo", path)))

        def do(job):
            kind, key, argv = job
            return kind, key, tools.run(*argv)

        lft, sl2vl, opvls = {}, {}, {}
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            for kind, key, out in ex.map(do, jobs):
                if kind == "lft":
                    top, t = parse_ibroute(out)
                    if top and top % 64 == 0:   # ibroute skips this block
                        blk = parse_smpdump_block(
                            tools.run("smpdump", "-D", paths[key], "0x19", str(top // 64)))
                        t[top] = blk[0]
                    lft[key] = (top, t)
                elif kind == "sl2vl":
                    tab = parse_sl2vl(out)
                    if dnodes[key[0]]["kind"] == "sw":
                        for (i, o), v in tab.items():
                            sl2vl[(key[0], i, o)] = v
                    else:
                        sl2vl[(key[0], 0, key[1])] = next(iter(tab.values()))
                else:
                    opvls[key] = parse_opvls(out)
        self.log("read %d LFTs, %d SL-to-VL tables, %d OperVLs with %d tool runs"
                 % (len(lft), len(sl2vl), len(opvls), tools.calls))

        # ---- SLs from the SA ------------------------------------------------
        pairs = [(base[s], d) for s in ca_ports for d in sorted(lids) if lids[d] != s]
        if a.links:
            # No SL considered: every hop on one VL, whatever the tables say
            sl = {pr: 0 for pr in pairs}
            for (g, p) in dlinks:
                opvls[(g, p)] = 1
                for q in range(dnodes[g]["nports"] + 1):
                    sl2vl[(g, q, p)] = [0] * 16
            return self._walk(dnodes, dlinks, lft, sl2vl, opvls, sl, lids, base, ca_ports,
                              tools)
        env = dict(tools.env)
        p = subprocess.run([a.smctl, "sa", "path-sl", "--inflight", "16"], cwd=tools.workdir,
                           env=env, input="".join("%d %d\n" % x for x in pairs),
                           capture_output=True, text=True, timeout=a.timeout)
        sl = {}
        for line in p.stdout.splitlines():
            f = line.split()
            if len(f) == 3:
                sl[(int(f[0]), int(f[1]))] = int(f[2])
            elif len(f) == 4:
                self.fail("SA", "no PathRecord for LID %s -> %s (%s)" % (f[0], f[1], f[3]))
        if len(sl) + len(self.failures.get("SA", [])) != len(pairs):
            raise ToolError("smctl sa path-sl answered %d of %d pairs: %s"
                            % (len(sl), len(pairs), p.stderr.strip()[-300:]))
        rng = random.Random(a.seed)
        sample = rng.sample(pairs, min(a.sample, len(pairs)))

        def saq(pair):
            out = tools.run("saquery", "PR", "--slid", str(pair[0]), "--dlid", str(pair[1]))
            m = SAQ_SL_RE.search(out)
            return pair, int(m.group(1), 0) if m else None
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            for pair, got in ex.map(saq, sample):
                if got != sl.get(pair):
                    self.fail("SA", "LID %d -> %d: saquery says SL %s, smctl %s"
                              % (pair + (got, sl.get(pair))))
        self.log("%d PathRecord SLs, %d checked again with saquery" % (len(sl), len(sample)))
        return self._walk(dnodes, dlinks, lft, sl2vl, opvls, sl, lids, base, ca_ports, tools)

    def _walk(self, dnodes, dlinks, lft, sl2vl, opvls, sl, lids, base, ca_ports, tools):
        a = self.args
        # ---- walk every pair ------------------------------------------------
        deps = collections.defaultdict(set)     # channel -> channels it waits for
        load = collections.Counter()            # (switch, out port) -> routes
        vls_used = set()
        broken = collections.Counter()
        example = {}

        def bad(cause, what):
            broken[cause] += 1
            example.setdefault(cause, what)

        for s in ca_ports:
            for d in sorted(lids):
                if lids[d] == s or (base[s], d) not in sl:
                    continue
                level = sl[(base[s], d)]
                what = "LID %d -> %d (SL %d)" % (base[s], d, level)
                tab = sl2vl.get((s[0], 0, s[1]))
                if tab is None:
                    bad("CA port without an SL-to-VL table", what)
                    continue
                vl = tab[level]
                chan = (s, vl)
                prev_port = s
                hops = 0
                while True:
                    if vl >= 15 or vl >= opvls.get(prev_port, 0):
                        bad("VL %d on a port with %d operational VLs"
                            % (vl, opvls.get(prev_port, 0)), what)
                        break
                    vls_used.add(vl)
                    nxt = dlinks.get(prev_port)
                    if nxt is None:
                        bad("forwarded to an uncabled port", what)
                        break
                    if dnodes[nxt[0]]["kind"] != "sw":
                        if nxt != lids[d]:
                            bad("delivered to the wrong CA", what)
                        break
                    g, inp = nxt
                    top, t = lft[g]
                    out = t.get(d, 255) if d <= top else 255
                    if out == 0:
                        if lids[d] != (g, 0):
                            bad("switch forwards to its own port 0", what)
                        break
                    if out > dnodes[g]["nports"] or (g, out) not in dlinks:
                        bad("no route", what)
                        break
                    hops += 1
                    if hops > 64:
                        bad("forwarding loop", what)
                        break
                    tab = sl2vl.get((g, inp, out))
                    if tab is None:
                        bad("no SL-to-VL table for a port pair in use", what)
                        break
                    vl = tab[level]
                    nchan = ((g, out), vl)
                    deps[chan].add(nchan)
                    if dnodes[dlinks[(g, out)][0]]["kind"] == "sw":
                        load[(g, out)] += 1
                    chan = nchan
                    prev_port = (g, out)
        for cause, n in broken.most_common():
            self.fail("routes", "%s [%d pair(s), e.g. %s]" % (cause, n, example[cause]))
        if len(vls_used) > a.max_vls:
            self.fail("VLs", "%d data VLs used, at most %d allowed" % (len(vls_used), a.max_vls))

        # ---- the channel dependency graph must be acyclic -------------------
        cycle = find_cycle(deps)
        if cycle:
            self.fail("deadlock", "cycle of %d channels in the dependency graph, e.g. %s"
                      % (len(cycle), " -> ".join(
                          "%s[%d] VL%d" % (dnodes[c[0][0]]["desc"], c[0][1], c[1])
                          for c in cycle[:6])))
        ndeps = sum(len(v) for v in deps.values())
        print("checkvls: %d CA ports, %d LIDs, %d pairs walked (%d broken), %s, "
              "%d dependencies, busiest switch-to-switch link %d routes, %d tool runs"
              % (len(ca_ports), len(lids), len(sl), sum(broken.values()),
                 "links only, no SL considered" if a.links else
                 "VLs used %s" % sorted(vls_used), ndeps,
                 max(load.values()) if load else 0, tools.calls))
        if not self.failures:
            print("checkvls: PASS")
            return 0
        for cat, msgs in self.failures.items():
            print("checkvls: FAIL %s: %d problem(s)" % (cat, len(msgs)))
            for m in msgs[:15]:
                print("  - " + m)
        return 1


def find_cycle(deps):
    """A cycle of the directed graph deps (node -> set of nodes), or None.
    Iterative depth-first search with three colours."""
    WHITE, GREY, BLACK = 0, 1, 2
    colour = collections.defaultdict(int)
    for root in list(deps):
        if colour[root] != WHITE:
            continue
        stack = [(root, iter(deps.get(root, ())))]
        colour[root] = GREY
        trail = [root]
        while stack:
            node, it = stack[-1]
            for nxt in it:
                if colour[nxt] == GREY:
                    return trail[trail.index(nxt):] + [nxt]
                if colour[nxt] == WHITE:
                    colour[nxt] = GREY
                    trail.append(nxt)
                    stack.append((nxt, iter(deps.get(nxt, ()))))
                    break
            else:
                colour[node] = BLACK
                stack.pop()
                trail.pop()
    return None


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--smctl", help="smctl binary (its 'sa path-sl'); not with --links")
    ap.add_argument("--links", action="store_true",
                    help="no SL considered: the graph over directed links alone")
    ap.add_argument("--sample", type=int, default=40,
                    help="pairs asked again with saquery (default 40)")
    ap.add_argument("--max-vls", type=int, default=8)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--jobs", type=int, default=min(8, (os.cpu_count() or 2) + 1))
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("-v", "--verbose", action="count", default=0)
    a = ap.parse_args(argv)
    if not a.links and not a.smctl:
        ap.error("--smctl is needed unless --links")
    if a.links:
        a.max_vls = 1
    try:
        return VLChecker(a).run()
    except (ToolError, OSError, subprocess.SubprocessError) as e:
        print("checkvls: ERROR %s" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
