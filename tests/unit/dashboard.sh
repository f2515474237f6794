#!/bin/bash
# etc/smd-dashboard.json, the Grafana dashboard: valid JSON, unique panel
# ids, every query filtered by the $instance variable and naming only
# series that exist: those the renderer writes (test_metrics --dump: the
# per-port ones and the performance manager's included) and the
# exporter's own. It plots the sweep times, the SA's
# request rates and the ports' error rates. With promtool, every query
# parses as PromQL. A copy with a misspelt series proves the check bites.
set -u
srcdir=${srcdir:-.}
top_builddir=${top_builddir:-.}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$top_builddir/tests/unit/test_metrics" --dump "$tmp" || { echo "FAIL: test_metrics --dump"; exit 1; }
cat "$tmp"/master.prom "$tmp"/starting.prom | sed -n 's/^# TYPE \([a-z_:]*\) .*/\1/p' | sort -u >"$tmp/known"
# The exporter's own
cat >>"$tmp/known" <<'NAMES'
smd_up
smd_exporter_scrape_duration_seconds
NAMES

cat >"$tmp/check.py" <<'PY'
import json, re, sys

dash, known, rules = sys.argv[1], set(open(sys.argv[2]).read().split()), sys.argv[3]
fails = []
d = json.load(open(dash))
ids = [p["id"] for p in d["panels"]]
if len(ids) != len(set(ids)):
    fails.append("panel ids repeat")
if d.get("uid") != "smd-subnet-manager" or not d.get("title"):
    fails.append("no uid or title")
exprs = []
for p in d["panels"]:
    if p["type"] == "row":
        continue
    if "gridPos" not in p or not p.get("targets"):
        fails.append("panel %r has no place or no query" % p.get("title"))
    for t in p.get("targets", []):
        e = t.get("expr", "")
        exprs.append(e)
        if 'instance=~"$instance"' not in e:
            fails.append("query not filtered by $instance: " + e)
        for name in re.findall(r"\bsmd_[a-z0-9_]+", e):
            if name not in known:
                fails.append("no such series: %s (in %s)" % (name, e))
plotted = " ".join(exprs)
for want in ("smd_sweep_duration_seconds", "rate(smd_sa_requests_total",
             "rate(smd_port_symbol_errors_total", "smd_port_link_downed_total"):
    if want not in plotted:
        fails.append("nothing plots " + want)
with open(rules, "w") as f:
    f.write("groups:\n- name: dashboard\n  rules:\n")
    for i, e in enumerate(exprs):
        e = e.replace("$__rate_interval", "5m").replace("$instance", ".*")
        f.write("  - record: dashboard:query%d\n    expr: %s\n" % (i, json.dumps(e)))
for f in fails:
    print("FAIL:", f)
print("%d queries in %d panels" % (len(exprs), len(ids)))
sys.exit(1 if fails else 0)
PY
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "PASS: $*"; }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
check() { if "$@"; then ok "$*"; else bad "$*"; fi; }

check python3 "$tmp/check.py" "$srcdir/etc/smd-dashboard.json" "$tmp/known" "$tmp/rules.yml"
if command -v promtool >/dev/null; then
	check promtool check rules "$tmp/rules.yml"
else
	echo "promtool not installed: the queries are not parsed"
fi
# Not blind: a misspelt series, a query without the filter, a broken file
sed 's/smd_sweep_duration_seconds/smd_sweep_durations_seconds/' "$srcdir/etc/smd-dashboard.json" >"$tmp/typo.json"
check test "$(python3 "$tmp/check.py" "$tmp/typo.json" "$tmp/known" /dev/null | grep -c 'no such series: smd_sweep_durations_seconds')" -ge 1
sed '0,/instance=~\\"$instance\\"/s///' "$srcdir/etc/smd-dashboard.json" >"$tmp/nofilter.json"
check test "$(python3 "$tmp/check.py" "$tmp/nofilter.json" "$tmp/known" /dev/null | grep -c 'not filtered')" -eq 1
head -c 500 "$srcdir/etc/smd-dashboard.json" >"$tmp/cut.json"
rc=0; python3 "$tmp/check.py" "$tmp/cut.json" "$tmp/known" /dev/null >/dev/null 2>&1 || rc=$?
check test "$rc" -ne 0
if command -v promtool >/dev/null; then
	printf 'groups:\n- name: x\n  rules:\n  - record: x:y\n    expr: "rate(smd_up[5m]"\n' >"$tmp/bad.yml"
	rc=0; promtool check rules "$tmp/bad.yml" >/dev/null 2>&1 || rc=$?
	check test "$rc" -ne 0
fi
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
