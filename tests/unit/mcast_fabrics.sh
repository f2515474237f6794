#!/bin/sh
# Multicast trees (topo/mc_forest.c) on generated fabrics: a 2-level and a
# 3-level fat-tree, 2D and 3D tori, a random irregular fabric with dual-port
# HCAs; test_mcast floods every group from every member over the true
# cabling and checks deliveries and deadlock freedom.
set -eu
srcdir=${srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen() {
	name=$1
	shift
	python3 "$srcdir/tests/gen/topogen.py" "$@" -o "$tmp/$name.net" 2>/dev/null
}
gen ft2 ft2 8
gen ft3 ft3 4
gen t2 torus2 4 4 1
gen t3 torus3 3 3 3 1
gen rnd random --switches 16 --seed 3
exec ./tests/unit/test_mcast "$tmp/ft2.net" "$tmp/ft3.net" "$tmp/t2.net" "$tmp/t3.net" \
	"$tmp/rnd.net" "spread:$tmp/ft2.net"
