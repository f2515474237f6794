#!/usr/bin/env python3
"""Generate InfiniBand fabric topologies for the ibsim simulator.

The output is the ibnetdiscover-like text format that ibsim 0.10 reads:

    switchguid=0x0011750000000001
    Switch  8 "sw-01"
    [1]     "host-0001"[1]
    [2]     "sw-02"[3]

    caguid=0x0002c90300000004
    Hca     1 "host-0001"
    [1]     "sw-01"[1]

Notes on what ibsim accepts (checked against ibsim 0.10):
  * A record is a header line followed by "[port] "remote"[rport]" lines and
    ends at the first line that starts with neither '[' nor '@' (we use a
    blank line).  Every link must be listed from both ends, consistently.
  * "switchguid=X" / "caguid=X" lines set the GUID of the NEXT switch / CA.
    A CA's port GUIDs are node GUID + port number, so CA GUIDs are spaced 4
    apart here.  Switch port GUID == node GUID.  We always emit explicit
    GUIDs, so they are unique and stable for a given --seed.
  * Top-level lines that begin with "do", "include", "Switch", "Hca",
    "width", ... are interpreted, so every comment line starts with '#'.
  * Node ids are limited to 64 characters and lines to 255: keep names short.
  * Port lines without "# ... lid N 4xSDR" trailers make ibsim print the
    harmless warning "cannot parse remote lid and connection type".
  * The simulator attaches clients (SM, diags) at the FIRST port of the file
    unless SIM_HOST says otherwise, so the first record is always the SM's
    HCA, named "smhost".
  * LID-routed packets survive at most 16 switches (15 switch-to-switch hops):
    every generated fabric keeps its switch diameter <= 15 (checked).

Usage: topogen.py KIND [args] [-o FILE] [--seed S]
  line N                  N switches in a chain, one host each
  ft2 K                   2-level fat-tree of K-port switches (K leaves, K/2 spines)
  ft3 K                   3-level k-ary fat-tree (5K^2/4 switches, K^3/4 hosts)
  torus2 X Y H            2-D torus, H hosts per switch
  torus3 X Y Z H          3-D torus, H hosts per switch
  ring N H                N switches in a ring (a 1-D torus), H hosts per switch
  random --switches N     random irregular fabric (see gen_random)

Degraded fabrics (any kind; picked with --seed, the switches kept connected):
  --cut PCT               remove PCT percent of the switch-to-switch cables
  --cut-switches N        remove N switches that have no hosts (in a fat-tree:
                          aggregation or core switches), with their cables

A one-line summary (switches, hosts, CA ports, links) goes to stderr.
"""

import argparse
import collections
import random
import sys

SW_GUID_BASE = 0x0011750000000000   # switch i -> base + i + 1
CA_GUID_BASE = 0x0002c90300000000   # CA j -> base + 4 * (j + 1); ports +1, +2
MAX_SWITCH_HOPS = 15                # ibsim MAXHOPS (16 switches) minus one
SM_HOST = "smhost"


class Fabric:
    """Nodes and cables; knows nothing about the file format but write()."""

    def __init__(self, title):
        self.title = title
        self.nodes = []            # list of dicts: name, kind, nports, guid
        self.index = {}            # name -> node index
        self.links = []            # (node_a, port_a, node_b, port_b)
        self.peer = {}             # (node, port) -> (node, port)
        self.nsw = 0
        self.nca = 0

    def add_switch(self, name, nports):
        if not 1 <= nports <= 254:
            raise ValueError("switch %s: bad port count %d" % (name, nports))
        self.nsw += 1
        return self._add(name, "sw", nports, SW_GUID_BASE + self.nsw)

    def add_ca(self, name, nports=1):
        if nports not in (1, 2):
            raise ValueError("CA %s: 1 or 2 ports supported" % name)
        self.nca += 1
        return self._add(name, "ca", nports, CA_GUID_BASE + 4 * self.nca)

    def _add(self, name, kind, nports, guid):
        if name in self.index:
            raise ValueError("duplicate node name %s" % name)
        if len(name) > 60 or '"' in name or '#' in name or '@' in name:
            raise ValueError("bad node name %r" % name)
        self.index[name] = len(self.nodes)
        self.nodes.append({"name": name, "kind": kind, "nports": nports,
                           "guid": guid})
        return len(self.nodes) - 1

    def connect(self, a, pa, b, pb):
        for n, p in ((a, pa), (b, pb)):
            if not 1 <= p <= self.nodes[n]["nports"]:
                raise ValueError("%s has no port %d" % (self.nodes[n]["name"], p))
            if (n, p) in self.peer:
                raise ValueError("%s port %d already cabled" % (self.nodes[n]["name"], p))
        if a == b:
            raise ValueError("self loop on %s" % self.nodes[a]["name"])
        self.peer[(a, pa)] = (b, pb)
        self.peer[(b, pb)] = (a, pa)
        self.links.append((a, pa, b, pb))

    def free_port(self, n):
        """Lowest uncabled port of node n, or None."""
        for p in range(1, self.nodes[n]["nports"] + 1):
            if (n, p) not in self.peer:
                return p
        return None

    # ----- checks -------------------------------------------------------
    def switch_diameter(self):
        """Largest switch-to-switch hop count (BFS from every switch)."""
        adj = collections.defaultdict(set)
        for a, _, b, _ in self.links:
            if self.nodes[a]["kind"] == "sw" and self.nodes[b]["kind"] == "sw":
                adj[a].add(b)
                adj[b].add(a)
        sws = [i for i, n in enumerate(self.nodes) if n["kind"] == "sw"]
        worst = 0
        for s in sws:
            dist = {s: 0}
            dq = collections.deque([s])
            while dq:
                u = dq.popleft()
                for v in adj[u]:
                    if v not in dist:
                        dist[v] = dist[u] + 1
                        dq.append(v)
            if len(dist) != len(sws):
                raise ValueError("switches are not all connected")
            worst = max(worst, max(dist.values()))
        return worst

    def validate(self):
        if not self.nodes or self.nodes[0]["kind"] != "ca" or \
                self.nodes[0]["name"] != SM_HOST:
            raise ValueError("first node must be the SM host CA")
        if (0, 1) not in self.peer:
            raise ValueError("SM host port 1 must be cabled")
        for i, n in enumerate(self.nodes):
            if n["kind"] == "ca" and not any((i, p) in self.peer
                                              for p in range(1, n["nports"] + 1)):
                raise ValueError("CA %s is not cabled" % n["name"])
        d = self.switch_diameter()
        if d > MAX_SWITCH_HOPS:
            raise ValueError("switch diameter %d exceeds ibsim limit %d"
                             % (d, MAX_SWITCH_HOPS))
        return d

    # ----- output -------------------------------------------------------
    def summary(self):
        hosts = sum(1 for n in self.nodes if n["kind"] == "ca")
        caports = sum(1 for (n, _p) in self.peer if self.nodes[n]["kind"] == "ca")
        return "%s: %d switches, %d hosts, %d CA ports, %d links" % (
            self.title, self.nsw, hosts, caports, len(self.links))

    def write(self, out, command):
        out.write("# Generated by tests/gen/topogen.py %s\n" % command)
        out.write("# %s\n" % self.summary())
        out.write("# First node is the SM host (ibsim attaches clients there).\n\n")
        for i, n in enumerate(self.nodes):
            if n["kind"] == "sw":
                out.write("switchguid=0x%016x\n" % n["guid"])
                out.write('Switch\t%d "%s"\n' % (n["nports"], n["name"]))
            else:
                out.write("caguid=0x%016x\n" % n["guid"])
                out.write('Hca\t%d "%s"\n' % (n["nports"], n["name"]))
            for p in range(1, n["nports"] + 1):
                if (i, p) in self.peer:
                    rn, rp = self.peer[(i, p)]
                    out.write('[%d]\t"%s"[%d]\n' % (p, self.nodes[rn]["name"], rp))
            out.write("\n")


class HostNamer:
    """host-0001, host-0002, ...; the first host created is the SM host."""

    def __init__(self, fab):
        self.fab = fab
        self.count = 0

    def new(self, nports=1):
        self.count += 1
        name = SM_HOST if self.count == 1 else "host-%04d" % (self.count - 1)
        return self.fab.add_ca(name, nports)


def make_fabric(title):
    """New fabric whose node 0 is the SM host, plus a host() factory.

    Builders create switches first and hosts as they cable them; the first
    host() call returns the already created SM host (node 0), so the SM host
    is written first in the file yet sits at the first host position of the
    topology (e.g. leaf 0, port 1)."""
    fab = Fabric(title)
    hosts = HostNamer(fab)
    hosts.new()                 # node 0 = smhost, cabled by the builder
    first = [True]

    def host(nports=1):
        if first[0]:
            first[0] = False
            if nports != fab.nodes[0]["nports"]:
                fab.nodes[0]["nports"] = nports
            return 0
        return hosts.new(nports)
    return fab, host


# ----------------------------------------------------------------- kinds
def gen_line(n):
    if not 1 <= n <= MAX_SWITCH_HOPS + 1:
        raise ValueError("line: N must be 1..%d" % (MAX_SWITCH_HOPS + 1))
    fab, host = make_fabric("line %d" % n)
    sws = [fab.add_switch("sw-%02d" % (i + 1), 8) for i in range(n)]
    for i, s in enumerate(sws):
        fab.connect(s, 1, host(), 1)
        if i + 1 < n:
            fab.connect(s, 2, sws[i + 1], 3)
    return fab


def gen_ft2(k):
    if k < 2 or k % 2:
        raise ValueError("ft2: K must be even and >= 2")
    half = k // 2
    fab, host = make_fabric("ft2 %d" % k)
    leaves = [fab.add_switch("leaf-%02d" % i, k) for i in range(k)]
    spines = [fab.add_switch("spine-%02d" % i, k) for i in range(half)]
    for li, leaf in enumerate(leaves):
        for p in range(1, half + 1):
            fab.connect(leaf, p, host(), 1)
        for si, spine in enumerate(spines):
            fab.connect(leaf, half + 1 + si, spine, li + 1)
    return fab


def gen_ft3(k):
    if k < 2 or k % 2:
        raise ValueError("ft3: K must be even and >= 2")
    half = k // 2
    fab, host = make_fabric("ft3 %d" % k)
    cores = [fab.add_switch("core-%03d" % c, k) for c in range(half * half)]
    for p in range(k):
        edges = [fab.add_switch("p%02d-edge-%02d" % (p, e), k) for e in range(half)]
        aggs = [fab.add_switch("p%02d-agg-%02d" % (p, a), k) for a in range(half)]
        for ei, edge in enumerate(edges):
            for hp in range(1, half + 1):
                fab.connect(edge, hp, host(), 1)
            for ai, agg in enumerate(aggs):
                fab.connect(edge, half + 1 + ai, agg, ei + 1)
        for ai, agg in enumerate(aggs):
            for j in range(half):
                fab.connect(agg, half + 1 + j, cores[ai * half + j], p + 1)
    return fab


def gen_torus(dims, h):
    """Torus with wrap-around links.  Port 2d+1 goes to +dim d, 2d+2 to -dim d,
    hosts use the ports after that.  A dimension of size 2 therefore gets TWO
    parallel cables between the same two switches (the "+" and the wrap-around
    link), explicitly; a dimension of size 1 gets no links."""
    if any(d < 1 for d in dims) or h < 0:
        raise ValueError("torus: sizes must be >= 1, H >= 0")
    title = "torus%d %s %d" % (len(dims), " ".join(map(str, dims)), h)
    fab, host = make_fabric(title)
    nd = len(dims)
    nports = 2 * nd + max(h, 1)       # room for the SM host when H == 0
    coords = [()]
    for d in dims:
        coords = [c + (i,) for c in coords for i in range(d)]
    sw = {}
    for c in coords:
        sw[c] = fab.add_switch("sw-" + "-".join(map(str, c)), nports)
    for c in coords:
        for d in range(nd):
            if dims[d] == 1:
                continue
            nxt = list(c)
            nxt[d] = (c[d] + 1) % dims[d]
            fab.connect(sw[c], 2 * d + 1, sw[tuple(nxt)], 2 * d + 2)
    first = True
    for c in coords:
        for i in range(h):
            fab.connect(sw[c], 2 * nd + 1 + i, host(), 1)
        if h == 0 and first:
            fab.connect(sw[c], 2 * nd + 1, host(), 1)   # the SM host at least
        first = False
    return fab


def gen_ring(n, h):
    """A 1-D torus: switch i cabled to i+1 and N-1 back to 0 (N=2: two parallel
    cables)."""
    if n < 2:
        raise ValueError("ring: N must be >= 2")
    fab = gen_torus([n], h)
    fab.title = "ring %d %d" % (n, h)
    return fab


def gen_random(nsw, seed):
    """Random connected irregular fabric.

    * switch radix drawn from 8/12/18/24/36, port numbers used in a shuffled
      order so numbering is irregular;
    * a random spanning tree of depth <= 7 (diameter <= 14), plus extra random
      switch-switch cables, plus a few deliberately parallel cables;
    * at least one switch without hosts;
    * host kinds: 2-port HCAs with port 1 cabled only, single-port HCAs,
      2-port HCAs with both ports on the same switch and 2-port HCAs with
      ports on two different switches (at least two of each where possible).
    """
    if nsw < 2:
        raise ValueError("random: need at least 2 switches")
    rng = random.Random(seed)
    fab, host = make_fabric("random --switches %d --seed %d" % (nsw, seed))
    radix = [rng.choice((8, 12, 18, 24, 36)) for _ in range(nsw)]
    sws = [fab.add_switch("rsw-%03d" % i, radix[i]) for i in range(nsw)]
    order = {}
    for s in sws:
        ports = list(range(1, fab.nodes[s]["nports"] + 1))
        rng.shuffle(ports)
        order[s] = ports

    def take(s):
        while order[s]:
            p = order[s].pop()
            if (s, p) not in fab.peer:
                return p
        return None

    def nfree(s):
        return sum(1 for p in order[s] if (s, p) not in fab.peer)

    # spanning tree with bounded depth
    depth = {sws[0]: 0}
    for s in sws[1:]:
        cand = [t for t in depth if depth[t] < 7 and nfree(t) > 2]
        parent = rng.choice(cand)
        fab.connect(s, take(s), parent, take(parent))
        depth[s] = depth[parent] + 1
    # extra random cables between distinct switches
    for _ in range(max(1, nsw // 2)):
        a, b = rng.sample(sws, 2)
        if nfree(a) > 3 and nfree(b) > 3:
            fab.connect(a, take(a), b, take(b))
    # a few parallel cables: repeat existing switch-switch pairs
    swlinks = [(a, b) for a, _, b, _ in fab.links]
    rng.shuffle(swlinks)
    want = max(2, nsw // 6)
    for a, b in swlinks:
        if want and nfree(a) > 2 and nfree(b) > 2:
            fab.connect(a, take(a), b, take(b))
            want -= 1

    # hosts: switch sws[-1] (and maybe one more) get none
    hostless = {sws[-1]}
    if nsw > 6:
        hostless.add(rng.choice(sws[1:-1]))
    hosted = [s for s in sws if s not in hostless]
    # SM host: plain 2-port HCA, port 1 on the first hosted switch
    sm = host(2)
    fab.connect(sm, 1, hosted[0], take(hosted[0]))
    kinds = ["half", "single", "same", "diff"] * 2      # guaranteed mix
    for s in hosted:
        for _ in range(rng.randint(1, 4)):
            kind = kinds.pop(0) if kinds else rng.choice(
                ("half", "half", "half", "single", "same", "diff"))
            if nfree(s) < 2:
                break
            if kind == "single":
                fab.connect(host(1), 1, s, take(s))
            elif kind == "half":
                fab.connect(host(2), 1, s, take(s))
            elif kind == "same":
                c = host(2)
                fab.connect(c, 1, s, take(s))
                fab.connect(c, 2, s, take(s))
            else:
                others = [t for t in hosted if t != s and nfree(t) > 1]
                if not others:
                    fab.connect(host(2), 1, s, take(s))
                    continue
                t = rng.choice(others)
                c = host(2)
                fab.connect(c, 1, s, take(s))
                fab.connect(c, 2, t, take(t))
    return fab


def degrade(fab, pct, nsw, seed):
    """Remove nsw host-less switches, then pct percent of the switch-to-switch
    cables (of those left), both picked at random with seed, skipping any whose
    loss would split the switches; the title says what went."""
    rng = random.Random("degrade-%d" % seed)
    sw = lambda n: fab.nodes[n]["kind"] == "sw"

    def connected(gone_sw, gone_links):
        adj = collections.defaultdict(list)
        for i, (a, _, b, _) in enumerate(fab.links):
            if i not in gone_links and sw(a) and sw(b) and \
                    a not in gone_sw and b not in gone_sw:
                adj[a].append(b)
                adj[b].append(a)
        left = [n for n in range(len(fab.nodes)) if sw(n) and n not in gone_sw]
        seen, todo = {left[0]}, [left[0]]
        while todo:
            for y in adj[todo.pop()]:
                if y not in seen:
                    seen.add(y)
                    todo.append(y)
        return len(seen) == len(left)

    hosted = {a for a, _, b, _ in fab.links if sw(a) and not sw(b)} | \
        {b for a, _, b, _ in fab.links if sw(b) and not sw(a)}
    cand = [n for n in range(len(fab.nodes)) if sw(n) and n not in hosted]
    rng.shuffle(cand)
    gone_sw, gone = set(), set()
    for n in cand:
        if len(gone_sw) >= nsw:
            break
        if connected(gone_sw | {n}, gone):
            gone_sw.add(n)
    if len(gone_sw) < nsw:
        raise ValueError("cannot remove %d host-less switches and stay connected" % nsw)
    links = [i for i, (a, _, b, _) in enumerate(fab.links)
             if sw(a) and sw(b) and a not in gone_sw and b not in gone_sw]
    want = int(len(links) * pct / 100.0)
    rng.shuffle(links)
    for i in links:
        if len(gone) >= want:
            break
        if connected(gone_sw, gone | {i}):
            gone.add(i)
    if len(gone) < want:
        raise ValueError("cannot remove %d cables and stay connected" % want)
    keep = [l for i, l in enumerate(fab.links)
            if i not in gone and l[0] not in gone_sw and l[2] not in gone_sw]
    fab.links = keep
    fab.peer = {}
    for a, pa, b, pb in keep:
        fab.peer[(a, pa)] = (b, pb)
        fab.peer[(b, pb)] = (a, pa)
    # The removed switches' records go; GUIDs of the others stay as they were
    remap, nodes = {}, []
    for i, n in enumerate(fab.nodes):
        if i not in gone_sw:
            remap[i] = len(nodes)
            nodes.append(n)
    fab.nodes = nodes
    fab.index = {n["name"]: i for i, n in enumerate(nodes)}
    fab.links = [(remap[a], pa, remap[b], pb) for a, pa, b, pb in fab.links]
    fab.peer = {(remap[a], pa): (remap[b], pb) for (a, pa), (b, pb) in fab.peer.items()}
    fab.nsw -= len(gone_sw)
    fab.title += " less %d of %d switch cables%s" % (
        len(gone), len(links), ", %d switches" % len(gone_sw) if gone_sw else "")


def main(argv):
    ap = argparse.ArgumentParser(
        description="Generate ibsim topology files (see module docstring).")
    ap.add_argument("kind", choices=("line", "ft2", "ft3", "torus2", "torus3", "ring",
                                     "random"))
    ap.add_argument("params", nargs="*", type=int)
    ap.add_argument("--switches", type=int, help="random: number of switches")
    ap.add_argument("--seed", type=int, default=1, help="random and --cut: seed (default 1)")
    ap.add_argument("--cut", type=float, default=0,
                    help="remove this percentage of switch-to-switch cables")
    ap.add_argument("--cut-switches", type=int, default=0,
                    help="remove this many switches without hosts")
    ap.add_argument("-o", "--output", help="output file (default stdout)")
    a = ap.parse_args(argv)

    want = {"line": 1, "ft2": 1, "ft3": 1, "torus2": 3, "torus3": 4, "ring": 2, "random": 0}
    if len(a.params) != want[a.kind]:
        ap.error("%s takes %d numeric argument(s)" % (a.kind, want[a.kind]))
    try:
        if a.kind == "line":
            fab = gen_line(*a.params)
        elif a.kind == "ft2":
            fab = gen_ft2(*a.params)
        elif a.kind == "ft3":
            fab = gen_ft3(*a.params)
        elif a.kind == "torus2":
            fab = gen_torus(a.params[:2], a.params[2])
        elif a.kind == "torus3":
            fab = gen_torus(a.params[:3], a.params[3])
        elif a.kind == "ring":
            fab = gen_ring(*a.params)
        else:
            if not a.switches:
                ap.error("random needs --switches N")
            fab = gen_random(a.switches, a.seed)
        if a.cut < 0 or a.cut >= 100 or a.cut_switches < 0:
            raise ValueError("--cut takes 0 to 100 (percent), --cut-switches 0 or more")
        if a.cut or a.cut_switches:
            degrade(fab, a.cut, a.cut_switches, a.seed)
        diameter = fab.validate()
    except ValueError as e:
        sys.stderr.write("topogen: %s\n" % e)
        return 2

    cmd = " ".join([a.kind] + [str(x) for x in a.params] +
                   (["--switches", str(a.switches), "--seed", str(a.seed)]
                    if a.kind == "random" else []) +
                   (["--cut", "%g" % a.cut] if a.cut else []) +
                   (["--cut-switches", str(a.cut_switches)] if a.cut_switches else []) +
                   (["--seed", str(a.seed)] if a.kind != "random" and
                    (a.cut or a.cut_switches) else []))
    if a.output:
        with open(a.output, "w") as f:
            fab.write(f, cmd)
    else:
        fab.write(sys.stdout, cmd)
    sys.stderr.write("%s (switch diameter %d)\n" % (fab.summary(), diameter))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
