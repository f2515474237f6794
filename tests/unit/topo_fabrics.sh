#!/bin/sh
# Generate fabrics of every kind and check discovery, LIDs and routing on
# each in memory (test_topo walks the true cabling, not smd's model).
set -eu
srcdir=${srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen="python3 $srcdir/tests/gen/topogen.py"
$gen line 6 -o "$tmp/line6.net" 2>/dev/null
$gen ft2 8 -o "$tmp/ft2-8.net" 2>/dev/null
$gen ft3 4 -o "$tmp/ft3-4.net" 2>/dev/null
$gen ft3 8 -o "$tmp/ft3-8.net" 2>/dev/null
$gen ft3 16 -o "$tmp/ft3-16.net" 2>/dev/null
$gen torus2 4 4 2 -o "$tmp/torus2.net" 2>/dev/null
$gen torus3 4 4 4 2 -o "$tmp/torus3.net" 2>/dev/null
for s in 1 2 3 4 5; do
	$gen random --switches 24 --seed $s -o "$tmp/random$s.net" 2>/dev/null
done
exec ./tests/unit/test_topo "$tmp"/*.net
