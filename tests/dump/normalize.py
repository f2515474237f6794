#!/usr/bin/env python3
"""Normalise an ibnetdiscover topology for comparison: drop the dated
"generated on" line and sort the node blocks (the header stays first).
Usage: normalize.py FILE  (or stdin)."""
import sys

text = open(sys.argv[1]).read() if len(sys.argv) > 1 else sys.stdin.read()
blocks = [b.strip("\n") for b in text.split("\n\n") if b.strip("\n")]
head, nodes = blocks[0], sorted(blocks[1:])
head = "\n".join(l for l in head.split("\n") if not l.startswith("# Topology file: generated on"))
sys.stdout.write(head + "\n\n" + "\n\n".join(nodes) + "\n")
