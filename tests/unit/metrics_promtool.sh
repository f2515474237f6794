#!/bin/bash
# Prometheus's own checker on the metrics pages: test_metrics --dump writes
# the renderer's page for a master, a standby, an SM before its first sweep
# and one whose last sweep failed, and a per-port family whose node_desc
# holds every byte that needs escaping; `promtool check metrics` must accept
# each, lint included. A page with a broken escape proves it can refuse.
set -u
top_builddir=${top_builddir:-.}
command -v promtool >/dev/null ||
	{ echo "SKIP: promtool not installed (Debian: prometheus; tools/setup-debian.sh)"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
"$top_builddir/tests/unit/test_metrics" --dump "$tmp" || { echo "FAIL: test_metrics --dump"; exit 1; }
for f in master standby starting failed hostile; do
	if [ -s "$tmp/$f.prom" ] && promtool check metrics <"$tmp/$f.prom" >"$tmp/$f.out" 2>&1; then
		pass=$((pass + 1))
		echo "PASS: promtool check metrics: $f"
	else
		fail=$((fail + 1))
		echo "FAIL: promtool check metrics: $f"
		cat "$tmp/$f.out"
	fi
done
# Not blind: the hostile page with one escape undone is refused
sed 's/\\"/"/' "$tmp/hostile.prom" >"$tmp/broken.prom"
if ! promtool check metrics <"$tmp/broken.prom" >/dev/null 2>&1; then
	pass=$((pass + 1))
	echo "PASS: promtool refuses a label value with a bare double quote"
else
	fail=$((fail + 1))
	echo "FAIL: promtool accepted a broken page"
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
