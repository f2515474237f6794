#!/bin/sh
# test_par on a few generated fabrics: a fat-tree, one that lost cables, a
# torus and a random irregular one with dual-port HCAs and parallel cables
set -eu
srcdir=${srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen() {
	name=$1
	shift
	python3 "$srcdir/tests/gen/topogen.py" "$@" -o "$tmp/$name.net" 2>/dev/null
}
gen ft3-8 ft3 8
gen ft3-8-cut ft3 8 --cut 5 --seed 2
gen torus3 torus3 4 4 4 2
gen random40 random --switches 40 --seed 11
exec ./tests/unit/test_par "$tmp"/*.net
