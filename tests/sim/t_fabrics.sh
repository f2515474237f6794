#!/bin/bash
# smd --once brings up fabrics of every shape; the real tools confirm
# unique LIDs, ACTIVE links, and that every CA port reaches every LID.
. "$(dirname "$0")/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fabrics=(
	"line 4"
	"ft2 8"
	"ft3 4"
	"torus2 4 4 2"
	"torus3 3 3 3 1"
	"random --switches 16 --seed 1"
	"random --switches 32 --seed 2"
	"random --switches 48 --seed 3"
)
for spec in "${fabrics[@]}"; do
	net="$tmp/$(echo "$spec" | tr -c 'a-z0-9\n' '_').net"
	# shellcheck disable=SC2086
	$GEN $spec -o "$net" 2>/dev/null
	check bash "$here/run_sm_check.sh" "$net" "$SMD" --once --db @TMP@/smd.db
done
finish
