#!/bin/bash
# Deadlock freedom of the default configuration (one VL) on issue 22's
# large fabrics, judged with the real tools as t_vls.sh does: a random
# fabric of 100 switches (Nue-like routes, polished) and the k=16 fat-tree
# less 5% of its switch cables (up/down routes polished off their order).
# The forwarding tables read back with ibroute route every CA pair without
# a loop and their channel dependency graph over directed links is acyclic
# (checkvls.py --links); smd sent no SL-to-VL table, every VL the ports
# offer is operational and the SA hands out SL 0. (A test of its own: with
# t_vls.sh's fabrics it took 745 s of the suite's 900 s hang guard on a
# busy machine.)
. "$(dirname "$0")/common.sh"
. "$(dirname "$0")/vlslib.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
tmp=$(mktemp -d)
trap 'smd_stop || true; rm -rf "$tmp"' EXIT

one_vl "random --switches 100 --seed 5"
one_vl "ft3 16 --cut 5"
finish
