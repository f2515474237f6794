#!/bin/bash
# The acceptance fabric: a 3-level fat-tree with k=16 (320 switches, 1024
# hosts), brought up by one smd --once and checked end to end.
. "$(dirname "$0")/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
$GEN ft3 16 -o "$tmp/ft3-16.net" 2>/dev/null
check bash "$here/run_sm_check.sh" "$tmp/ft3-16.net" "$SMD" --once --db @TMP@/smd.db
finish
