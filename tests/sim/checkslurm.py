#!/usr/bin/env python3
"""Judge a Slurm topology.conf (topology/tree) against what ibnetdiscover saw.

Usage:  checkslurm.py TOPOLOGY_CONF IBNETDISCOVER_OUTPUT [--json SMCTL_JSON]

The file is read the way Slurm reads it: '#' starts a comment, each line is
blank-separated Key=Value pairs (keys in any case), SwitchName names a
switch, Nodes= and Switches= are hostlist expressions that expand
("h[1-3,7],x" is h1 h2 h3 h7 x; zero-padded bounds keep their width).

Checks, from ibnetdiscover's output only: every host (a CA's first
NodeDescription word) appears under exactly one switch, and that switch is
the leaf its first cabled port (CAs of one host in description order) goes
to; no name that is not a host; switch names unique, each line with Nodes=
or Switches= but not both; every child switch is cabled to its parent and
every leaf is a child of a switch that is not a leaf; with --json, the JSON
tree holds the same switches, nodes and children.  Exit 0 when all hold.

When Slurm's own scontrol is installed (slurm-client), every hostlist is
expanded by it too ("scontrol show hostnames", with a minimal slurm.conf of
its own) and must give exactly the names expand() gives: Slurm's hostlist
code is the judge of the syntax.
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile


def expand(expr):
    """Slurm hostlist expression -> list of names."""
    out = []
    i = 0
    while i < len(expr):
        j = i
        depth = 0
        while j < len(expr) and (expr[j] != "," or depth):
            depth += expr[j] == "["
            depth -= expr[j] == "]"
            j += 1
        item = expr[i:j]
        i = j + 1
        m = re.fullmatch(r"([^\[\]]*)\[([^\]]*)\]([^\[\]]*)", item)
        if not m:
            if "[" in item or "]" in item or not item:
                raise ValueError("bad hostlist item %r" % item)
            out.append(item)
            continue
        pre, ranges, suf = m.groups()
        for r in ranges.split(","):
            lo, _, hi = r.partition("-")
            hi = hi or lo
            if not lo.isdigit() or not hi.isdigit() or int(hi) < int(lo):
                raise ValueError("bad range %r in %r" % (r, item))
            for v in range(int(lo), int(hi) + 1):
                out.append("%s%0*d%s" % (pre, len(lo), v, suf))
    return out


class Scontrol:
    """Slurm's own hostlist expansion, when scontrol is there."""

    def __init__(self):
        self.exe = shutil.which("scontrol")
        self.dir = None
        self.checked = 0
        if self.exe:
            self.dir = tempfile.mkdtemp()
            with open(os.path.join(self.dir, "slurm.conf"), "w") as f:
                f.write("ClusterName=check\nSlurmctldHost=localhost\n"
                        "NodeName=x State=UNKNOWN\nPartitionName=p Nodes=x\n")

    def expand(self, expr):
        env = dict(os.environ, SLURM_CONF=os.path.join(self.dir, "slurm.conf"))
        out = subprocess.run([self.exe, "show", "hostnames", expr], env=env, check=True,
                             capture_output=True, text=True).stdout
        self.checked += 1
        return out.split()

    def close(self):
        if self.dir:
            shutil.rmtree(self.dir)


def parse_conf(path, scontrol=None):
    switches = {}
    for lineno, line in enumerate(open(path), 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        kv = {}
        for tok in line.split():
            k, eq, v = tok.partition("=")
            if not eq:
                raise ValueError("%s:%d: %r is not Key=Value" % (path, lineno, tok))
            kv[k.lower()] = v
        name = kv.get("switchname")
        if not name:
            raise ValueError("%s:%d: no SwitchName" % (path, lineno))
        if name in switches:
            raise ValueError("%s:%d: switch %s twice" % (path, lineno, name))
        for key in ("nodes", "switches"):
            if key in kv and scontrol and scontrol.exe and \
               scontrol.expand(kv[key]) != expand(kv[key]):
                raise ValueError("%s:%d: Slurm expands %s=%s otherwise" % (path, lineno, key,
                                                                          kv[key]))
        switches[name] = {"nodes": expand(kv["nodes"]) if "nodes" in kv else [],
                          "switches": expand(kv["switches"]) if "switches" in kv else [],
                          "both": "nodes" in kv and "switches" in kv}
    return switches


def parse_ibnd(path):
    """nodes: guid -> (type, desc, nports); cables: (guid, port) -> (guid, port)."""
    nodes, cables = {}, {}
    guid = cur = None
    hdr = re.compile(r'^(Switch|Ca|Hca)\s+(\d+)\s+"([^"]+)"\s*#\s*"(.*?)"')
    port = re.compile(r'^\[(\d+)\](?:\([0-9a-f]+\))?\s*"([^"]+)"\[(\d+)\]')
    ids = {}
    for line in open(path):
        m = re.match(r"^(switchguid|caguid)=0x([0-9a-f]+)", line)
        if m:
            guid = int(m.group(2), 16)
            continue
        m = hdr.match(line)
        if m:
            cur = guid
            nodes[cur] = ("sw" if m.group(1) == "Switch" else "ca", m.group(4), int(m.group(2)))
            ids[m.group(3)] = cur
            continue
        m = port.match(line)
        if m and cur is not None:
            cables[(cur, int(m.group(1)))] = (m.group(2), int(m.group(3)))
    cables = {end: (ids[far[0]], far[1]) for end, far in cables.items()}
    return nodes, cables


def main(argv):
    if len(argv) not in (2, 4):
        sys.stderr.write(__doc__)
        return 2
    conf, ibnd = argv[0], argv[1]
    fails = []
    scontrol = Scontrol()
    try:
        switches = parse_conf(conf, scontrol)
    finally:
        scontrol.close()
    nodes, cables = parse_ibnd(ibnd)
    by_desc = {n[1]: g for g, n in nodes.items() if n[0] == "sw"}
    # Where each host must be: the leaf of its first CA's first port on a switch
    hosts = {}
    for g, (kind, desc, nports) in sorted(nodes.items(), key=lambda x: (x[1][1], x[0])):
        if kind != "ca" or not desc.split():
            continue
        host = desc.split()[0]
        if host in hosts:
            continue
        for p in range(1, nports + 1):
            far = cables.get((g, p))
            if far and nodes[far[0]][0] == "sw":
                hosts[host] = nodes[far[0]][1]
                break
    seen = {}
    for name, s in switches.items():
        if s["both"]:
            fails.append("%s has both Nodes= and Switches=" % name)
        if name not in by_desc:
            fails.append("SwitchName=%s is no switch ibnetdiscover saw" % name)
        for h in s["nodes"]:
            if h in seen:
                fails.append("host %s under %s and under %s" % (h, seen[h], name))
            seen[h] = name
            if h not in hosts:
                fails.append("%s lists %s, not a host ibnetdiscover saw" % (name, h))
            elif hosts[h] != name:
                fails.append("%s is under %s, ibnetdiscover shows it on %s" % (h, name, hosts[h]))
    for h in hosts:
        if h not in seen:
            fails.append("host %s is under no switch" % h)

    def cabled(a, b):
        ga, gb = by_desc.get(a), by_desc.get(b)
        return any(e[0] == ga and far[0] == gb for e, far in cables.items())
    parents = {}
    for name, s in switches.items():
        for c in s["switches"]:
            if c not in switches:
                fails.append("%s lists switch %s, which has no line" % (name, c))
                continue
            if not cabled(name, c):
                fails.append("%s lists %s, but no cable joins them" % (name, c))
            if s["nodes"]:
                fails.append("%s, a leaf, lists switches" % name)
            parents.setdefault(c, []).append(name)
    leaves = [n for n, s in switches.items() if s["nodes"]]
    for leaf in leaves:
        ups = [p for p in parents.get(leaf, []) if not switches[p]["nodes"]]
        if not ups:
            fails.append("leaf %s is under no switch of the level above" % leaf)
    if len(argv) == 4:
        j = json.load(open(argv[3]))
        js = {s["name"]: s for s in j["switches"]}
        if set(js) != set(switches):
            fails.append("JSON switches differ: %s" % sorted(set(js) ^ set(switches)))
        for name in set(js) & set(switches):
            if sorted(js[name]["nodes"]) != sorted(switches[name]["nodes"]):
                fails.append("JSON %s: other nodes" % name)
            if sorted(js[name]["switches"]) != sorted(switches[name]["switches"]):
                fails.append("JSON %s: other switches" % name)
    print("checkslurm: %d switches (%d leaves), %d hosts placed of %d; %s" % (
        len(switches), len(leaves), len(seen), len(hosts),
        "%d hostlists expanded alike by scontrol" % scontrol.checked if scontrol.exe else
        "no scontrol to compare the hostlists with"))
    for f in fails[:20]:
        print("checkslurm: FAIL %s" % f)
    if not fails:
        print("checkslurm: PASS")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
