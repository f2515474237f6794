#!/bin/sh
# The include rules README's Layout states, checked on every source file:
#   iba/  includes nothing of the project but iba/
#   mad/  iba/ and mad/ only (never topo/, db/ or smd/)
#   topo/ iba/ and topo/ only (never mad/: the IBA's vocabulary is enough)
#   db/   iba/, topo/ and db/ only
# and nothing outside mad/ reads or writes wire bits (wire_bits_get/set,
# the GET/SET bit macros, htons and friends); GID layout lives in iba/.
set -u
srcdir=${srcdir:-.}
cd "$srcdir" || exit 99
fail=0
pass=0
rule() {	# rule DIR ALLOWED...: DIR's files include only DIR and ALLOWED
	dir=$1
	shift
	allowed="$dir $*"
	for f in "$dir"/*.[ch]; do
		[ -e "$f" ] || continue
		for inc in $(sed -n 's|^#include "\([a-z]*\)/.*"|\1|p' "$f" | sort -u); do
			case " $allowed " in
			*" $inc "*) ;;
			*) echo "FAIL: $f includes $inc/ ($dir/ may include only: $allowed)"
			   fail=$((fail + 1)) ;;
			esac
		done
	done
	pass=$((pass + 1))
}
rule iba
rule mad iba
rule topo iba
rule db iba topo
for f in topo/*.[ch] db/*.[ch] smd/*.[ch] iba/*.[ch]; do
	if grep -nE '\bwire_bits_(get|set)\b|\b(GET|SET)\([a-z_]+, *[0-9]+|\b(hton|ntoh)[sl]\b|\bbe(16|32|64)toh\b|\bhtobe(16|32|64)\b' \
		"$f" >/dev/null; then
		echo "FAIL: $f reads or writes wire bits:"
		grep -nE '\bwire_bits_(get|set)\b|\b(GET|SET)\([a-z_]+, *[0-9]+|\b(hton|ntoh)[sl]\b|\bbe(16|32|64)toh\b|\bhtobe(16|32|64)\b' "$f" | head -3
		fail=$((fail + 1))
	fi
done
pass=$((pass + 1))
echo "$pass rules checked, $fail violations"
[ "$fail" -eq 0 ]
