#!/usr/bin/env python3
"""Check every P_Key table of an ibsim fabric against what partitions say, with
the real tools only (ibnetdiscover, smpquery pkeys).

Usage:  checkpkeys.py EXPECT [--jobs N] [-v]

EXPECT has one line per node whose tables are judged:
    NODE_DESCRIPTION KEY[,KEY...]     a CA: port 1 holds exactly these keys
                                      (membership bit included), the first at
                                      index 0
    @switches KEY[,KEY...]            every switch's port 0, the same way
'#' starts a comment.  Also checked, from the cabling ibnetdiscover reports:
every switch port cabled to a CA holds exactly the CA's keys (any order: the
enforcement table of IBA 10.9.2), and every switch port cabled to a switch
holds what ibsim starts with (0xffff at index 0, nothing else): an SM has no
business there.  A CA the file does not name must not exist.

Run it while the simulator is up (IBSIM_SOCKNAME exported).  Exit 0 when
every table is right, 1 otherwise, 2 on usage or tool errors.
"""

import argparse
import concurrent.futures
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checkfabric import Tools, ToolError, parse_ibnetdiscover  # noqa: E402

ROW = re.compile(r'^\s*(\d+):((?:\s+0x[0-9a-fA-F]{4})+)\s*$')


def run3(tools, *args):
    """A tool's output; umad2sim now and then fails a tool's first MAD (or
    the tool crashes on a loaded machine): up to three tries"""
    for attempt in range(3):
        try:
            return tools.run(*args)
        except ToolError as e:
            if attempt == 2:
                raise
            sys.stderr.write("checkpkeys: %s; again\n" % e)


def read_table(tools, lid, port):
    """The table smpquery prints: a list, index -> key"""
    args = ["smpquery", "pkeys", str(lid)] + ([str(port)] if port is not None else [])
    out = run3(tools, *args)
    tab = []
    for line in out.splitlines():
        m = ROW.match(line)
        if not m:
            continue
        base = int(m.group(1))
        keys = [int(k, 16) for k in m.group(2).split()]
        if base != len(tab):
            raise ToolError("smpquery pkeys %s: rows out of order" % " ".join(args[2:]))
        tab.extend(keys)
    if not tab:
        raise ToolError("smpquery pkeys %s printed no table" % " ".join(args[2:]))
    return tab


def keys_of(tab):
    return [k for k in tab if k & 0x7fff]


def fmt(keys):
    return ",".join("0x%04x" % k for k in keys) or "(none)"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("expect")
    ap.add_argument("--jobs", type=int, default=3)
    ap.add_argument("--timeout", type=int, default=60)
    ap.add_argument("-v", "--verbose", action="count", default=0)
    a = ap.parse_args(argv)

    want, sw_want = {}, None
    with open(a.expect) as f:
        for lineno, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            name, keys = line.rsplit(None, 1)
            ks = [int(k, 0) for k in keys.split(",")]
            if name == "@switches":
                sw_want = ks
            else:
                want[name] = ks

    tools = Tools(a.timeout, a.verbose)
    problems = []
    try:
        nodes, links, _ = parse_ibnetdiscover(run3(tools, "ibnetdiscover"))
        jobs = []      # (what, lid, port or None, check(tab) -> problem or None)

        def exact(expected, label):
            def check(tab):
                got = keys_of(tab)
                if sorted(got) != sorted(expected) or len(set(got)) != len(got):
                    return "%s holds %s, not %s" % (label, fmt(got), fmt(expected))
                if tab[0] != expected[0]:
                    return "%s has 0x%04x at index 0, not 0x%04x" % (label, tab[0], expected[0])
                return None
            return check

        def same_set(expected, label):
            def check(tab):
                got = keys_of(tab)
                if sorted(got) != sorted(expected) or len(set(got)) != len(got):
                    return "%s holds %s, not its CA's %s" % (label, fmt(got), fmt(expected))
                return None
            return check

        seen = set()
        for g, n in nodes.items():
            if n["kind"] == "ca":
                if n["desc"] not in want:
                    problems.append("CA %s is not in %s" % (n["desc"], a.expect))
                    continue
                seen.add(n["desc"])
                lid = n["lid"].get(1, (0, 0))[0]
                jobs.append((lid, None, exact(want[n["desc"]], "%s port 1" % n["desc"])))
                continue
            if n["kind"] != "sw":
                continue
            lid = n["lid"].get(0, (0, 0))[0]
            if sw_want is not None:
                jobs.append((lid, 0, exact(sw_want, "switch %s port 0" % n["desc"])))
            for p in range(1, n["nports"] + 1):
                peer = links.get((g, p))
                if not peer:
                    continue
                pn = nodes.get(peer[0])
                label = "switch %s port %d" % (n["desc"], p)
                if pn and pn["kind"] == "ca" and pn["desc"] in want:
                    jobs.append((lid, p, same_set(want[pn["desc"]], label + " (to " +
                                                  pn["desc"] + ")")))
                elif pn and pn["kind"] == "sw":
                    jobs.append((lid, p, exact([0xffff], label + " (to a switch)")))
        for name in want:
            if name not in seen:
                problems.append("CA %s of %s not found" % (name, a.expect))

        def run(job):
            lid, port, check = job
            return check(read_table(tools, lid, port))

        with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
            for res in ex.map(run, jobs):
                if res:
                    problems.append(res)
        for p in problems:
            print("PROBLEM: " + p)
        print("checkpkeys: %d tables read with smpquery, %d problems" % (len(jobs), len(problems)))
        return 1 if problems else 0
    except ToolError as e:
        print("checkpkeys: %s" % e)
        return 2
    finally:
        tools.cleanup()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
