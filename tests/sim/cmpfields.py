#!/usr/bin/env python3
"""cmpfields.py SA_OUT FABRIC_OUT [sa=fabric ...] [-name ...] [+name ...]

Compares the fields of one SA record as saquery prints it ("name....value")
with the same fields as a fabric tool (smpquery) prints them, value by value:
numbers as numbers (0x40 = 64), anything else as text. Only the first
record of SA_OUT is read (saquery under the simulator: the rest of the MAD
is not meaningful). Arguments:
  sa=fabric   the field is named sa in SA_OUT and fabric in FABRIC_OUT
  -name       a field (SA name) that is not compared (say why in the test)
  +name       a field (SA name) that must be there (default: every mapped
              field and every field whose name both outputs share)
Prints one "DIFF name: sa=... fabric=..." line per difference and
"compared N"; exits 1 on a difference or a missing field.
"""
import re
import sys


def fields(path, first_only):
    out, header = {}, None
    for line in open(path, errors="replace"):
        t = line.strip()
        if t.endswith("dump:") or t.endswith("ClassPortInfo:"):
            if header is None:
                header = t
            elif t == header and first_only:
                break		# the next record
        m = re.match(r"^\s*([A-Za-z_][A-Za-z0-9_/ ]*?):?\.{2,}:?(.*)$", line.rstrip("\n"))
        if m and m.group(1).strip() not in out:
            out[m.group(1).strip()] = m.group(2).strip()
    return out


def norm(v):
    try:
        return int(v, 0)
    except ValueError:
        return v


def main():
    sa, fab = fields(sys.argv[1], True), fields(sys.argv[2], False)
    mapping, skip, need = {}, set(), set()
    for a in sys.argv[3:]:
        if a.startswith("-"):
            skip.add(a[1:])
        elif a.startswith("+"):
            need.add(a[1:])
        elif "=" in a:
            s, f = a.split("=", 1)
            mapping[s] = f
            need.add(s)
    for k in sa:
        if k in fab and k not in mapping:
            mapping[k] = k
    bad = n = 0
    for s in sorted(need - skip):
        if s not in sa or mapping.get(s, s) not in fab:
            print("MISSING %s (sa %s, fabric %s)" % (s, s in sa, mapping.get(s, s) in fab))
            bad += 1
    for s, f in sorted(mapping.items()):
        if s in skip or s not in sa or f not in fab:
            continue
        n += 1
        if norm(sa[s]) != norm(fab[f]):
            print("DIFF %s: sa=%s fabric=%s" % (s, sa[s], fab[f]))
            bad += 1
    print("compared %d" % n)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
