#!/bin/sh
# Generate the fabrics of issue 4 (tori, rings, fat-trees, random irregular
# fabrics with dual-port HCAs and parallel links, and some of them with failed
# links) and check every routing engine on each with VL budgets 1, 2, 4 and 8
# (test_route judges the routes by walking the true cabling); then some of
# issue 22's, the default engine on one VL.
set -eu
srcdir=${srcdir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
gen() {
	name=$1
	shift
	python3 "$srcdir/tests/gen/topogen.py" "$@" -o "$tmp/$name.net" 2>/dev/null
}
# cut NAME SEED FRACTION: NAME-cut.net, NAME.net without that fraction of its
# switch-to-switch cables (both ends' lines), picked at random but keeping
# the switches connected
cut() {
	python3 - "$tmp/$1.net" "$tmp/$1-cut.net" "$2" "$3" <<'PY'
import random, re, sys
src, dst, seed, frac = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
lines = open(src).read().split("\n")
kind, owner, cables = {}, [None] * len(lines), {}
cur = None
for i, l in enumerate(lines):
    m = re.match(r'(Switch|Hca|Ca)\s+\d+\s+"([^"]+)"', l)
    if m:
        cur = m.group(2)
        kind[cur] = m.group(1)
        continue
    m = re.match(r'\[(\d+)\]\s+"([^"]+)"\[(\d+)\]', l)
    if m and cur:
        owner[i] = (cur, int(m.group(1)), m.group(2), int(m.group(3)))
ends = {}
for i, o in enumerate(owner):
    if o:
        ends[(o[0], o[1])] = i
sw = [n for n, k in kind.items() if k == "Switch"]
links = []
for i, o in enumerate(owner):
    if o and kind[o[0]] == "Switch" and kind.get(o[2]) == "Switch" and (o[0], o[1]) < (o[2], o[3]):
        links.append((o[0], o[1], o[2], o[3]))
rng = random.Random(seed)
rng.shuffle(links)
def connected(ls):
    adj = {n: [] for n in sw}
    for a, _, b, _ in ls:
        adj[a].append(b)
        adj[b].append(a)
    seen, todo = {sw[0]}, [sw[0]]
    while todo:
        for y in adj[todo.pop()]:
            if y not in seen:
                seen.add(y)
                todo.append(y)
    return len(seen) == len(sw)
keep, drop, want = list(links), set(), int(len(links) * frac)
for l in links:
    if len(drop) >= want:
        break
    rest = [x for x in keep if x != l]
    if connected(rest):
        keep = rest
        drop.add(ends[(l[0], l[1])])
        drop.add(ends[(l[2], l[3])])
open(dst, "w").write("\n".join(l for i, l in enumerate(lines) if i not in drop))
PY
}
gen torus3-4x4x4 torus3 4 4 4 2
gen torus2-4x4 torus2 4 4 2
gen torus2-8x8 torus2 8 8 2
gen torus2-6x3 torus2 6 3 1
gen ring8 ring 8 2
gen ring5 ring 5 1
gen line6 line 6
gen ft2-8 ft2 8
gen ft3-4 ft3 4
gen ft3-8 ft3 8
gen ft3-16 ft3 16
for s in 1 2 3; do
	gen random24-$s random --switches 24 --seed $s
done
gen random48-4 random --switches 48 --seed 4
cut torus3-4x4x4 1 0.1
cut torus2-8x8 2 0.15
cut random24-2 3 0.2
cut ft3-8 4 0.1
# Issue 22's acceptance fabrics small enough to route in a second or two:
# the default engine on one VL only (random fabrics of 100 and 120 switches,
# the k=16 fat-tree less 2% and 5% of its switch cables, less two switches)
mkdir "$tmp/one-vl"
for spec in "random --switches 100 --seed 5" "random --switches 120 --seed 1" \
	"ft3 16 --cut 2" "ft3 16 --cut 5" "ft3 16 --cut-switches 2"; do
	# shellcheck disable=SC2086
	gen "one-vl/$(echo "$spec" | tr -c 'a-z0-9\n-' '_')" $spec
done
# The degraded k=16 fat-trees once more, their routes repaired from the
# intact fabric's: at most opensm's best busiest link on each (route_compare.sh,
# opensm 3.3: dfsssp on --cut 2 and 5, nue on --cut-switches 2)
mkdir "$tmp/intact"
gen intact/ft3-16 ft3 16
set --
for cb in "--cut 2:2184" "--cut 5:2376" "--cut-switches 2:2024"; do
	spec="ft3 16 ${cb%%:*}"
	set -- "$@" --repair "$tmp/intact/ft3-16.net" \
		"$tmp/one-vl/$(echo "$spec" | tr -c 'a-z0-9\n-' '_').net" "${cb##*:}"
done
exec ./tests/unit/test_route "$tmp"/*.net --one-vl "$tmp"/one-vl/*.net "$@"
