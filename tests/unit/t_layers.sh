#!/bin/sh
# The include rules README's Layout states, checked on every source file:
#   util/ includes nothing of the project but util/ (every program shares it)
#   iba/  util/ and iba/ only
#   mad/  util/, iba/ and mad/ only (never topo/, db/ or smd/)
#   topo/ util/, iba/ and topo/ only (never mad/: the IBA's vocabulary is enough)
#   db/   util/, iba/, topo/ and db/ only
#   sa/   util/, iba/, mad/, topo/ and sa/ (the SA server is a library the
#         daemon links: it never reaches into smd/)
#   ctl/  never sa/ (smctl is a client: it speaks to the SA over the wire)
#         nor smd/ (it shares with the daemon only what util/ holds)
#   smd/  never ctl/
#   exporter/ util/ only (smd_exporter shares with smd the protocol and the
#         metrics writer, nothing else)
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
rule util
rule iba util
rule mad util iba
rule topo util iba
rule db util iba topo
rule sa util iba mad topo
rule ctl util iba mad topo db
rule smd util iba mad topo db sa
rule exporter util
for f in topo/*.[ch] db/*.[ch] smd/*.[ch] sa/*.[ch] ctl/*.[ch] iba/*.[ch] util/*.[ch] \
	 exporter/*.[ch]; do
	if grep -nE '\bwire_bits_(get|set)\b|\b(GET|SET)\([a-z_]+, *[0-9]+|\b(hton|ntoh)[sl]\b|\bbe(16|32|64)toh\b|\bhtobe(16|32|64)\b' \
		"$f" >/dev/null; then
		echo "FAIL: $f reads or writes wire bits:"
		grep -nE '\bwire_bits_(get|set)\b|\b(GET|SET)\([a-z_]+, *[0-9]+|\b(hton|ntoh)[sl]\b|\bbe(16|32|64)toh\b|\bhtobe(16|32|64)\b' "$f" | head -3
		fail=$((fail + 1))
	fi
done
pass=$((pass + 1))

# README's Layout block names every source file: each .c, and each .h that
# has no .c of its own (directly, as name.[ch], or by a glob like route*.c).
layout=$(awk '/^## Layout/ { on = 1 } on && /^```/ { n++; next } on && n == 1' README.md)
globs=$(printf '%s\n' "$layout" | grep -oE '[a-z_]+\*\.c' | sort -u)
for f in util/*.[ch] iba/*.[ch] mad/*.[ch] topo/*.[ch] db/*.[ch] sa/*.[ch] smd/*.[ch] ctl/*.[ch] \
	 exporter/*.[ch]; do
	name=${f##*/}
	stem=${name%.?}
	case $name in *.h) [ -e "${f%.h}.c" ] && continue ;; esac
	case $layout in *"$name"* | *"$stem.[ch]"*) continue ;; esac
	found=0
	for g in $globs; do
		# shellcheck disable=SC2254
		case $name in $g) found=1 ;; esac
	done
	[ "$found" -eq 1 ] && continue
	echo "FAIL: README.md's Layout does not name $f"
	fail=$((fail + 1))
done
pass=$((pass + 1))
echo "$pass rules checked, $fail violations"
[ "$fail" -eq 0 ]
