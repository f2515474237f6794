#!/usr/bin/env python3
"""Verify a subnet manager's work on an ibsim fabric, trusting only real tools.

Usage:  checkfabric.py TOPOLOGY [--expect-missing NODE]... [--expect-unlinked NODE:PORT]...
                                [--expect-inactive NODE:PORT]...
                                [--jobs N] [--timeout S] [--keep DIR] [-v]

Run it while the simulator that was started from TOPOLOGY is up (IBSIM_SOCKNAME
exported); it attaches to the simulator as a client itself (LD_PRELOAD of
libumad2sim.so is added for the tools it runs if not already there; SIM_HOST
is honoured).  What it checks, from the tools' answers only:

  1. ibnetdiscover (one run, with --cache) sees every node of TOPOLOGY (by node
     description and, when the file gives them, GUID), no other node, and
     exactly the file's cables (port numbers included).
  2. iblinkinfo --load-cache (no extra MADs): both ends of every cable are
     LinkUp and Active.
  3. Every cabled CA port and every switch (port 0) has a nonzero LID, and the
     LID ranges (LID .. LID + 2^LMC - 1) are disjoint.
  4. Every switch's whole linear forwarding table (one "ibroute -a -n -D" per
     switch, plus "smpdump" of the last block when ibroute misses it: ibroute
     skips the block of LID LinearFDBTop when that LID is a multiple of 64),
     read by directed route so broken routing cannot hide the tables.
  5. From every CA port and every switch to every assigned LID, following the
     LFTs hop by hop over the discovered cables: the destination is reached,
     with no loop, no dead end (255/unset, beyond LinearFDBTop, out-of-range
     or uncabled port, delivery to the wrong CA), and through at most 16
     switches (ibsim drops LID-routed packets beyond that).

Exit status 0 when everything holds, 1 on check failures, 2 on usage or tool
errors.  --expect-missing NODE: NODE must NOT be discovered (made unreachable
on purpose); cables to it are not expected.  --expect-unlinked NODE:PORT: that
cable of the file was unlinked on purpose and must not be seen.
--expect-inactive NODE:PORT: that cable of the file is up (LinkUp) but held
short of Active on purpose (an SM fencing a miswired link): both ends must be
LinkUp and not Active, and no route may cross it (the walk of 5. fails any
pair whose route does).
"""

import argparse
import collections
import concurrent.futures
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

DEFAULT_PRELOAD = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
MAX_SWITCHES_ON_PATH = 16          # ibsim MAXHOPS
MAX_REPORT = 15                    # failures printed per category


class ToolError(Exception):
    pass


# --------------------------------------------------------------- topology file
def parse_topology(path):
    """Return (nodes, links) of an ibsim/ibnetdiscover style file.

    nodes: name -> {"kind": "sw"|"ca", "nports": n, "guid": int or None}
    links: dict (name, port) -> (name, port), both directions."""
    nodes, links = {}, {}
    pending_guid = {"sw": None, "ca": None}
    cur = None
    hdr = re.compile(r'^(Switch|Hca|Ca)\s+(\d+)\s+"([^"]+)"')
    port = re.compile(r'^\[(\d+)\](?:\([0-9a-fA-Fx]+\))?\s*"([^"]+)"\s*\[(\d+)\]')
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            m = hdr.match(line)
            if m:
                kind = "sw" if m.group(1) == "Switch" else "ca"
                name = m.group(3)
                if name in nodes:
                    raise ValueError("%s:%d: duplicate node %s" % (path, lineno, name))
                nodes[name] = {"kind": kind, "nports": int(m.group(2)),
                               "guid": pending_guid[kind]}
                pending_guid[kind] = None
                cur = name
                continue
            m = re.match(r'^(switchguid|caguid|hcaguids)\s*=\s*(0x[0-9a-fA-F]+|\d+)', line)
            if m:
                pending_guid["sw" if m.group(1) == "switchguid" else "ca"] = int(m.group(2), 0)
                continue
            m = port.match(line)
            if m and cur:
                links[(cur, int(m.group(1)))] = (m.group(2), int(m.group(3)))
                continue
            if line.startswith("#"):
                continue
            cur = None
    for (a, pa), (b, pb) in links.items():
        if b not in nodes:
            raise ValueError("%s: %s[%d] cabled to unknown node %s" % (path, a, pa, b))
        if links.get((b, pb)) != (a, pa):
            raise ValueError("%s: cable %s[%d] - %s[%d] not listed from both ends"
                             % (path, a, pa, b, pb))
    return nodes, links


# --------------------------------------------------------------- tools
class Tools:
    def __init__(self, timeout, verbose):
        self.timeout = timeout
        self.verbose = verbose
        self.calls = 0
        self.workdir = tempfile.mkdtemp(prefix="checkfabric.")
        env = dict(os.environ)
        preload = env.get("LD_PRELOAD", "")
        if "umad2sim" not in preload:
            lib = env.get("SIM_PRELOAD") or DEFAULT_PRELOAD
            env["LD_PRELOAD"] = lib + (":" + preload if preload else "")
        self.env = env
        if "IBSIM_SOCKNAME" not in env:
            sys.stderr.write("checkfabric: warning: IBSIM_SOCKNAME is not set "
                             "(attaching to the default simulator)\n")

    def run(self, *args):
        """Run a diag tool as a sim client (cwd = private dir: umad2sim makes
        ./sys-<pid> there); return stdout, raise ToolError on failure."""
        self.calls += 1
        t0 = time.time()
        try:
            p = subprocess.run(args, cwd=self.workdir, env=self.env,
                               stdin=subprocess.DEVNULL, capture_output=True,
                               text=True, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            raise ToolError("%s timed out after %ss" % (" ".join(args), self.timeout))
        if self.verbose > 1:
            sys.stderr.write("  [%.2fs] %s\n" % (time.time() - t0, " ".join(args)))
        if p.returncode != 0:
            err = "\n".join(l for l in p.stderr.splitlines()
                            if "attached as client" not in l)
            raise ToolError("%s failed (status %d): %s"
                            % (" ".join(args), p.returncode, err.strip()[-500:]))
        return p.stdout

    def cleanup(self):
        shutil.rmtree(self.workdir, ignore_errors=True)


# --------------------------------------------------------------- discovery
def parse_ibnetdiscover(text):
    """-> (nodes by guid, links, local (guid, port)).

    node: {"guid", "kind", "nports", "desc", "portguid": {port: guid},
           "lid": {port (0 for a switch): (lid, lmc)}}
    links: (guid, port) -> (guid, port)"""
    nodes, links = {}, {}
    local = None
    m = re.search(r"Initiated from node ([0-9a-f]+) port ([0-9a-f]+)", text)
    if m:
        local = (int(m.group(1), 16), int(m.group(2), 16))
    hdr = re.compile(r'^(Switch|Ca|Rt)\s+(\d+)\s+"[SHR]-([0-9a-f]+)"\s+#\s+"(.*?)"(.*)$')
    prt = re.compile(r'^\[(\d+)\](?:\(([0-9a-f]+)\))?\s+"[SHR]-([0-9a-f]+)"\[(\d+)\]'
                     r'(?:\(([0-9a-f]+)\))?\s*#\s*(.*)$')
    lidlmc = re.compile(r'^\s*(?:(?:base|enhanced) port 0 )?lid (\d+) lmc (\d+)')
    cur = None
    for line in text.splitlines():
        m = hdr.match(line)
        if m:
            g = int(m.group(3), 16)
            cur = nodes.setdefault(g, {"guid": g, "portguid": {}, "lid": {}})
            cur.update(kind={"Switch": "sw", "Ca": "ca", "Rt": "rt"}[m.group(1)],
                       nports=int(m.group(2)), desc=m.group(4))
            mm = lidlmc.match(m.group(5))
            if cur["kind"] == "sw" and mm:     # "base port 0 lid N lmc M"
                cur["lid"][0] = (int(mm.group(1)), int(mm.group(2)))
            continue
        m = prt.match(line)
        if m and cur is not None:
            p, rg, rp = int(m.group(1)), int(m.group(3), 16), int(m.group(4))
            links[(cur["guid"], p)] = (rg, rp)
            if m.group(2):                     # CA port: "[1](portguid) ... # lid N lmc M"
                cur["portguid"][p] = int(m.group(2), 16)
                mm = lidlmc.match(m.group(6))
                if mm:
                    cur["lid"][p] = (int(mm.group(1)), int(mm.group(2)))
            continue
        if not line.strip():
            cur = None
    return nodes, links, local


LINK_RE = re.compile(r'^0x([0-9a-f]+)\s+"\s*(.*?)"\s+(\d+)\s+(\d+)\[[^\]]*\]\s+==\((.*?)\)==>')


def parse_iblinkinfo(text):
    """-> {(guid as printed: node guid for switches, port guid for CAs, port):
           (lid, logical state, physical state)}"""
    out = {}
    for line in text.splitlines():
        m = LINK_RE.match(line)
        if not m:
            continue
        guid, lid, port = int(m.group(1), 16), int(m.group(3)), int(m.group(4))
        st = m.group(5)
        if "/" in st:
            left, phys = st.rsplit("/", 1)
            logical = left.split()[-1] if left.split() else "?"
        else:
            logical, phys = "?", st
        out[(guid, port)] = (lid, logical.strip(), phys.strip())
    return out


def parse_ibroute(text):
    """-> (top, {lid: port}) from 'ibroute -a -n' output."""
    m = re.search(r"Unicast lids \[0x([0-9a-f]+)-0x([0-9a-f]+)\]", text)
    if not m:
        raise ToolError("unexpected ibroute output: %r" % text[:200])
    top = int(m.group(2), 16)
    lft = {}
    for mm in re.finditer(r"^0x([0-9a-f]+) (\d+)", text, re.M):
        lft[int(mm.group(1), 16)] = int(mm.group(2))
    return top, lft


def parse_smpdump_block(text):
    """64 LFT bytes from smpdump's hex dump (first 4 lines of 16 bytes)."""
    data = []
    for line in text.splitlines():
        words = line.split()
        if len(words) == 8 and all(re.fullmatch(r"[0-9a-f]{4}", w) for w in words):
            for w in words:
                data += [int(w[:2], 16), int(w[2:], 16)]
        if len(data) >= 64:
            break
    if len(data) < 64:
        raise ToolError("unexpected smpdump output: %r" % text[:200])
    return data[:64]


# --------------------------------------------------------------- checker
class Checker:
    def __init__(self, args):
        self.args = args
        self.failures = collections.OrderedDict()
        self.inactive = {}                 # (guid, port) -> state, both ends
        self.held = set()                  # (name, port): --expect-inactive, both ends

    def fail(self, category, msg):
        self.failures.setdefault(category, []).append(msg)

    def log(self, msg):
        if self.args.verbose:
            sys.stderr.write("checkfabric: %s\n" % msg)

    def run(self):
        a = self.args
        t_start = time.time()
        fnodes, flinks = parse_topology(a.topology)
        missing = set(a.expect_missing)
        for n in missing:
            if n not in fnodes:
                raise ValueError("--expect-missing %s: no such node in %s" % (n, a.topology))
        unlinked = set()
        for spec in a.expect_unlinked:
            m = re.fullmatch(r"(.+?)[:\[](\d+)\]?", spec)
            if not m or (m.group(1), int(m.group(2))) not in flinks:
                raise ValueError("--expect-unlinked %s: no such cable end in the file" % spec)
            end = (m.group(1), int(m.group(2)))
            unlinked.add(end)
            unlinked.add(flinks[end])
        for spec in a.expect_inactive:
            m = re.fullmatch(r"(.+?)[:\[](\d+)\]?", spec)
            if not m or (m.group(1), int(m.group(2))) not in flinks:
                raise ValueError("--expect-inactive %s: no such cable end in the file" % spec)
            end = (m.group(1), int(m.group(2)))
            self.held.add(end)
            self.held.add(flinks[end])

        tools = Tools(a.timeout, a.verbose)
        try:
            return self._run(tools, fnodes, flinks, missing, unlinked, t_start)
        finally:
            if a.keep:
                os.makedirs(a.keep, exist_ok=True)
                for fn in os.listdir(tools.workdir):
                    src = os.path.join(tools.workdir, fn)
                    if os.path.isfile(src):
                        shutil.copy(src, a.keep)
            tools.cleanup()

    def _run(self, tools, fnodes, flinks, missing, unlinked, t_start):
        a = self.args
        cache = os.path.join(tools.workdir, "fabric.cache")
        # ---- 1. discovery -------------------------------------------------
        t0 = time.time()
        disc = tools.run("ibnetdiscover", "--cache", cache)
        with open(os.path.join(tools.workdir, "ibnetdiscover.txt"), "w") as f:
            f.write(disc)
        dnodes, dlinks, local = parse_ibnetdiscover(disc)
        linkinfo = parse_iblinkinfo(tools.run("iblinkinfo", "--load-cache", cache, "-l"))
        self.log("discovery: %d nodes in %.2fs" % (len(dnodes), time.time() - t0))

        by_desc = {}
        for g, n in dnodes.items():
            if n["desc"] in by_desc:
                self.fail("discovery", "two discovered nodes named %r (GUIDs %#x, %#x)"
                          % (n["desc"], by_desc[n["desc"]], g))
            by_desc[n["desc"]] = g
        name_of = {}                       # guid -> file name
        for name, fn in fnodes.items():
            g = by_desc.get(name)
            if name in missing:
                if g is not None:
                    self.fail("discovery", "node %s was expected to be unreachable "
                              "but was discovered" % name)
                continue
            if g is None:
                self.fail("discovery", "node %s of the topology was not discovered" % name)
                continue
            dn = dnodes[g]
            if dn["kind"] != fn["kind"]:
                self.fail("discovery", "node %s: discovered as %s, file says %s"
                          % (name, dn["kind"], fn["kind"]))
            if fn["guid"] is not None and fn["guid"] != g:
                self.fail("discovery", "node %s: GUID %#x, file says %#x" % (name, g, fn["guid"]))
            if dn["nports"] != fn["nports"]:
                self.fail("discovery", "node %s: %d ports, file says %d"
                          % (name, dn["nports"], fn["nports"]))
            name_of[g] = name
        for g, dn in dnodes.items():
            if g not in name_of and dn["desc"] not in missing:
                self.fail("discovery", "unexpected node %r (GUID %#x)" % (dn["desc"], g))

        # cables: file (minus missing/unlinked) must equal discovery
        def dname(end):
            g, p = end
            return (name_of.get(g, "?%#x" % g), p)
        seen = {dname(e): dname(r) for e, r in dlinks.items()}
        for end, rem in flinks.items():
            if end[0] in missing or rem[0] in missing or end in unlinked:
                continue
            got = seen.get(end)
            if got is None:
                if end <= rem:             # report each cable once
                    self.fail("cables", "cable %s[%d] - %s[%d] not discovered" % (end + rem))
            elif got != rem:
                self.fail("cables", "%s[%d] goes to %s[%d], file says %s[%d]"
                          % (end + got + rem))
        for end, rem in seen.items():
            if end > rem:
                continue
            if end in unlinked:
                self.fail("cables", "cable %s[%d] - %s[%d] was expected to be unlinked"
                          % (end + rem))
            elif end not in flinks:
                self.fail("cables", "unexpected cable %s[%d] - %s[%d]" % (end + rem))

        # ---- 2. port states / 3. LIDs ----------------------------------------
        def port_key(g, p):
            n = dnodes[g]
            if n["kind"] == "sw":
                return (g, p)
            return (n["portguid"].get(p, g + p), p)

        for (g, p), (rg, rp) in dlinks.items():
            info = linkinfo.get(port_key(g, p))
            nm = "%s[%d]" % dname((g, p))
            if info is None:
                self.fail("link state", "%s: not reported by iblinkinfo" % nm)
                continue
            lid, logical, phys = info
            if dname((g, p)) in self.held:
                if phys != "LinkUp" or logical == "Active":
                    self.fail("link state", "%s (to %s[%d]): %s/%s, want LinkUp and not Active "
                              "(held)" % ((nm,) + dname((rg, rp)) + (logical, phys)))
                self.inactive[(g, p)] = self.inactive[(rg, rp)] = "%s/%s (held)" % (logical,
                                                                                  phys)
                continue
            if phys != "LinkUp" or logical != "Active":
                self.fail("link state", "%s (to %s[%d]): %s/%s, want Active/LinkUp"
                          % ((nm,) + dname((rg, rp)) + (logical, phys)))
                self.inactive[(g, p)] = self.inactive[(rg, rp)] = "%s/%s" % (logical, phys)
        lids = {}                          # lid -> (guid, port); port 0 for switch
        for g, n in sorted(dnodes.items()):
            ports = [0] if n["kind"] == "sw" else sorted(
                p for (gg, p) in dlinks if gg == g)
            for p in ports:
                owner = (g, p)
                lid, lmc = n["lid"].get(p, (0, 0))
                if not lid:
                    self.fail("LIDs", "%s has no LID" % self.port_name(dnodes, name_of, owner))
                    continue
                if lid + (1 << lmc) - 1 > 0xBFFF:
                    self.fail("LIDs", "%s: LID %d (LMC %d) outside the unicast range"
                              % (self.port_name(dnodes, name_of, owner), lid, lmc))
                for l in range(lid, lid + (1 << lmc)):
                    if l in lids:
                        self.fail("LIDs", "LID %d is used by %s and %s" % (
                            l, self.port_name(dnodes, name_of, lids[l]),
                            self.port_name(dnodes, name_of, owner)))
                    else:
                        lids[l] = owner
                if n["kind"] != "sw":
                    info = linkinfo.get(port_key(g, p))
                    if info and info[0] != lid:
                        self.fail("LIDs", "%s: iblinkinfo says LID %d, ibnetdiscover %d"
                                  % (self.port_name(dnodes, name_of, owner), info[0], lid))

        # Routing is checked even after failures above: a walk through a
        # half-configured fabric still tells which destinations are affected.
        # ---- 4. LFTs ------------------------------------------------------
        t0 = time.time()
        paths = self.dr_paths(dnodes, dlinks, local)
        lfts = {}
        switches = [g for g, n in dnodes.items() if n["kind"] == "sw"]
        for g in switches:
            if g not in paths:
                self.fail("LFT", "no directed route to switch %s" % name_of.get(g, hex(g)))

        def read_lft(g):
            path = paths[g]
            out = tools.run("ibroute", "-a", "-n", "-D", path)
            top, lft = parse_ibroute(out)
            if top and top % 64 == 0:     # ibroute never reads this block
                blk = parse_smpdump_block(
                    tools.run("smpdump", "-D", path, "0x19", str(top // 64)))
                lft[top] = blk[0]
            return g, top, lft
        todo = [g for g in switches if g in paths]
        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            for g, top, lft in ex.map(read_lft, todo):
                lfts[g] = (top, lft)
        self.log("LFTs: %d switches in %.2fs" % (len(lfts), time.time() - t0))

        # ---- 5. walk --------------------------------------------------------
        t0 = time.time()
        stats = self.walk(dnodes, dlinks, name_of, lids, lfts)
        self.log("walk: %.2fs" % (time.time() - t0))
        return self.report(tools, dnodes, lids, stats, t_start)

    @staticmethod
    def port_name(dnodes, name_of, owner):
        g, p = owner
        nm = name_of.get(g, dnodes[g].get("desc", hex(g)))
        return nm if dnodes[g]["kind"] == "sw" else "%s[%d]" % (nm, p)

    @staticmethod
    def dr_paths(dnodes, dlinks, local):
        """Directed-route path strings ("0,1,5") from the local port to every
        switch, breadth first over discovered switch-to-switch cables."""
        if local is None:
            raise ToolError("ibnetdiscover did not report the local port")
        lg, lpg = local
        paths = {}
        dq = collections.deque()
        if dnodes.get(lg, {}).get("kind") == "sw":
            paths[lg] = "0"
            dq.append(lg)
        else:
            lp = None
            for p, pg in dnodes[lg]["portguid"].items():
                if pg == lpg:
                    lp = p
            if lp is None or (lg, lp) not in dlinks:
                raise ToolError("local port %#x is not cabled" % lpg)
            rg, _ = dlinks[(lg, lp)]
            if dnodes[rg]["kind"] != "sw":
                return paths
            paths[rg] = "0,%d" % lp
            dq.append(rg)
        out = collections.defaultdict(list)
        for (g, p), (rg, _rp) in sorted(dlinks.items()):
            out[g].append((p, rg))
        while dq:
            g = dq.popleft()
            for p, rg in out[g]:
                if dnodes[rg]["kind"] == "sw" and rg not in paths:
                    paths[rg] = "%s,%d" % (paths[g], p)
                    dq.append(rg)
        return paths

    def walk(self, dnodes, dlinks, name_of, lids, lfts):
        """Follow the LFTs from every switch to every LID, memoized per
        destination (each switch is resolved once per LID), then derive the
        CA ports' results from their neighbour switch.  Failures are reported
        once per cause, with the number of (source, LID) pairs it breaks."""
        sws = list(lfts)
        nports = {g: dnodes[g]["nports"] for g in sws}
        swname = {g: name_of.get(g, hex(g)) for g in sws}
        ca_ports = sorted((g, p) for (g, p) in dlinks if dnodes[g]["kind"] != "sw")
        pname = lambda o: self.port_name(dnodes, name_of, o)
        causes = collections.Counter()     # failure cause -> broken pairs
        example = {}                       # failure cause -> one broken pair
        pairs = max_links = 0
        max_desc = ""

        def broken(cause, src, dlid):
            causes[cause] += 1
            example.setdefault(cause, "%s -> LID %d (%s)" % (src, dlid, pname(lids[dlid])))

        for dlid in sorted(lids):
            owner = lids[dlid]
            # hops[g]: switches crossed from switch g to the destination port,
            # g included; None while g is being resolved (loop detection);
            # a string = why the destination cannot be reached from g.
            hops = {}
            for start in sws:
                trail = []
                g = start
                while True:
                    if g in hops:
                        result = hops[g]
                        if result is None:
                            cyc = trail[trail.index(g):] + [g]
                            result = "routing loop for LID %d: %s" % (
                                dlid, " -> ".join(swname[x] for x in cyc))
                        break
                    hops[g] = None
                    trail.append(g)
                    top, lft = lfts[g]
                    out = lft.get(dlid, 255) if dlid <= top else 255
                    if out == 0:
                        result = 0 if owner == (g, 0) else \
                            "%s forwards LID %d to its own port 0" % (swname[g], dlid)
                        break
                    if out > nports[g]:
                        result = "%s has no route to LID %d (%s)" % (
                            swname[g], dlid, "beyond LinearFDBTop %d" % top
                            if dlid > top else "entry %d" % out)
                        break
                    nxt = dlinks.get((g, out))
                    if nxt is None:
                        result = "%s forwards LID %d to uncabled port %d" % (
                            swname[g], dlid, out)
                        break
                    if (g, out) in self.inactive:
                        result = "%s forwards LID %d to port %d whose link is %s" % (
                            swname[g], dlid, out, self.inactive[(g, out)])
                        break
                    if dnodes[nxt[0]]["kind"] != "sw":
                        result = 0 if nxt == owner else \
                            "%s delivers LID %d to %s instead of %s" % (
                                swname[g], dlid, pname(nxt), pname(owner))
                        break
                    g = nxt[0]
                # unwind: each switch on the trail is one more switch away
                for i, x in enumerate(reversed(trail)):
                    hops[x] = result if isinstance(result, str) else result + i + 1
            for g in sws:
                pairs += 1
                h = hops[g]
                if isinstance(h, str):
                    broken(h, swname[g], dlid)
                    continue
                if h > MAX_SWITCHES_ON_PATH:
                    broken("paths crossing more than %d switches (ibsim drops them)"
                           % MAX_SWITCHES_ON_PATH, swname[g], dlid)
                links = h - 1 + (0 if owner[1] == 0 else 1)
                if links > max_links:
                    max_links, max_desc = links, "%s -> LID %d" % (swname[g], dlid)
            for src in ca_ports:
                if src == owner:
                    continue
                pairs += 1
                nb = dlinks[src]
                if src in self.inactive:
                    broken("%s: link is %s" % (pname(src), self.inactive[src]),
                           pname(src), dlid)
                    continue
                if dnodes[nb[0]]["kind"] != "sw":
                    if nb != owner:
                        broken("%s is cabled to a CA, not a switch" % pname(src),
                               pname(src), dlid)
                    continue
                h = hops[nb[0]]
                if isinstance(h, str):
                    broken(h, pname(src), dlid)
                    continue
                if h > MAX_SWITCHES_ON_PATH:
                    broken("paths crossing more than %d switches (ibsim drops them)"
                           % MAX_SWITCHES_ON_PATH, pname(src), dlid)
                links = h + (0 if owner[1] == 0 else 1)
                if links > max_links:
                    max_links, max_desc = links, "%s -> LID %d" % (pname(src), dlid)
        for cause, n in causes.most_common():
            self.fail("routing", "%s [%d pair(s), e.g. %s]" % (cause, n, example[cause]))
        return {"pairs": pairs, "broken": sum(causes.values()),
                "max_links": max_links, "max_desc": max_desc}

    def report(self, tools, dnodes, lids, stats, t_start):
        nsw = sum(1 for n in dnodes.values() if n["kind"] == "sw")
        nca = len(dnodes) - nsw
        line = "checkfabric: %d nodes (%d switches, %d CAs), %d LIDs" % (
            len(dnodes), nsw, nca, len(lids))
        if stats:
            line += ", %d source/LID pairs walked (%d broken), max path %d links (%s)" % (
                stats["pairs"], stats["broken"], stats["max_links"], stats["max_desc"])
        line += ", %d tool runs, %.1fs" % (tools.calls, time.time() - t_start)
        print(line)
        if not self.failures:
            print("checkfabric: PASS")
            return 0
        for cat, msgs in self.failures.items():
            print("checkfabric: FAIL %s: %d problem(s)" % (cat, len(msgs)))
            for m in msgs[:MAX_REPORT]:
                print("  - " + m)
            if len(msgs) > MAX_REPORT:
                print("  ... and %d more" % (len(msgs) - MAX_REPORT))
        return 1


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("topology")
    ap.add_argument("--expect-missing", action="append", default=[], metavar="NODE",
                    help="node that must not be discovered (repeatable)")
    ap.add_argument("--expect-unlinked", action="append", default=[], metavar="NODE:PORT",
                    help="cable (either end) unlinked on purpose (repeatable)")
    ap.add_argument("--expect-inactive", action="append", default=[], metavar="NODE:PORT",
                    help="cable (either end) held up but not Active on purpose (repeatable)")
    ap.add_argument("--jobs", type=int, default=min(8, (os.cpu_count() or 2) + 1),
                    help="parallel ibroute clients (default: CPUs + 1; at most 8, "
                    "ibsim takes 10 clients; process start-up dominates)")
    ap.add_argument("--timeout", type=float, default=300,
                    help="seconds per tool run (default 300)")
    ap.add_argument("--keep", metavar="DIR", help="copy tool outputs to DIR")
    ap.add_argument("-v", "--verbose", action="count", default=0)
    a = ap.parse_args(argv)
    a.jobs = max(1, min(a.jobs, 8))
    try:
        return Checker(a).run()
    except (ToolError, ValueError, OSError) as e:
        print("checkfabric: ERROR: %s" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
