#!/usr/bin/env python3
"""Recable an ibsim topology file (topogen.py's format) the way a technician might.

Usage:  netedit.py IN OUT OP [OP ...]

  cross A:P B:Q      the cables at A[P] and B[Q] swap their far ends:
                     A[P]-X[x], B[Q]-Y[y] become A[P]-Y[y], B[Q]-X[x]
  unlink A:P         the cable at A[P] is removed (both ends' lines)
  rate A:P 1xQDR     the cable at A[P] trains at that width and speed (both
                     ends' lines end in "# lid 0 1xQDR", as ibsim reads it)

Node names are the quoted ids of the file.  Every operation checks that the
ports it names are cabled, so a test cannot silently edit nothing.
"""

import re
import sys

PORT = re.compile(r'^\[(\d+)\](\s*)"([^"]+)"\[(\d+)\](.*)$')
HDR = re.compile(r'^(Switch|Hca|Ca|Rt)\s+(\d+)\s+"([^"]+)"')


def load(path):
    lines = open(path).read().split("\n")
    cables = {}
    cur = None
    where = {}
    for i, line in enumerate(lines):
        m = HDR.match(line)
        if m:
            cur = m.group(3)
            continue
        m = PORT.match(line)
        if m and cur is not None:
            end = (cur, int(m.group(1)))
            cables[end] = (m.group(3), int(m.group(4)))
            where[end] = i
    return lines, cables, where


def end_of(text):
    name, port = text.rsplit(":", 1)
    return (name, int(port))


def main(argv):
    if len(argv) < 4:
        sys.stderr.write(__doc__)
        return 2
    lines, cables, where = load(argv[1])
    rates = {}
    ops = argv[3:]
    i = 0
    while i < len(ops):
        op = ops[i]
        if op == "cross":
            a, b = end_of(ops[i + 1]), end_of(ops[i + 2])
            i += 3
            for e in (a, b):
                if e not in cables:
                    sys.exit("netedit: %s[%d] is not cabled" % e)
            x, y = cables[a], cables[b]
            for e in (a, b, x, y):
                cables.pop(e, None)
            cables[a], cables[y] = y, a
            cables[b], cables[x] = x, b
        elif op == "unlink":
            a = end_of(ops[i + 1])
            i += 2
            if a not in cables:
                sys.exit("netedit: %s[%d] is not cabled" % a)
            x = cables.pop(a)
            cables.pop(x, None)
        elif op == "rate":
            a, rate = end_of(ops[i + 1]), ops[i + 2]
            i += 3
            if a not in cables:
                sys.exit("netedit: %s[%d] is not cabled" % a)
            rates[a] = rates[cables[a]] = rate
        else:
            sys.exit("netedit: unknown operation %s" % op)
    # Write the file again: every node's port lines from the cables now
    out = []
    cur = None
    for line in lines:
        m = HDR.match(line)
        if m:
            cur = m.group(3)
            out.append(line)
            nports = int(m.group(2))
            for p in range(1, nports + 1):
                far = cables.get((cur, p))
                if far is None:
                    continue
                extra = "\t\t# lid 0 %s" % rates[(cur, p)] if (cur, p) in rates else ""
                out.append('[%d]\t"%s"[%d]%s' % (p, far[0], far[1], extra))
            continue
        if PORT.match(line) and cur is not None:
            continue
        out.append(line)
    with open(argv[2], "w") as f:
        f.write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
