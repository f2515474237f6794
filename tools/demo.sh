#!/bin/bash
# From a fresh clone on Debian 12, as root: install the packages, build,
# start the bundled simulated fabric (tests/fabrics/demo.net: a 3-level
# fat-tree of 20 switches and 16 hosts) with ibsim, bring it up with
# `smd --once`, and show what the real diagnostic tools see.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
"$top/tools/setup-debian.sh" >/dev/null
if [ -x "$top/smd/smd" ] && [ -f "$top/config.status" ]; then
	bin="$top"		# already built in place by a developer
else
	"$top/tools/build.sh" "$top/build-plain"
	bin="$top/build-plain"
fi
net=${1:-$top/tests/fabrics/demo.net}
work=$(mktemp -d)
cd "$work"
# shellcheck source=../tests/sim/simlib.sh
. "$top/tests/sim/simlib.sh"
trap 'sim_stop; rm -rf "$work"' EXIT

echo "== starting the simulated fabric $(basename "$net")"
sim_start "$net"
echo
echo "== before smd: the SM's own port"
sim_run smpquery portinfo -D 0 1 2>/dev/null | grep -E "^(Lid|LinkState)"
echo
echo "== smd --once"
sim_run "$bin/smd/smd" --once --db "$work/smd.db"
echo
echo "== LIDs smd gave out (smctl lids)"
"$bin/ctl/smctl" --db "$work/smd.db" lids
echo
echo "== what ibnetdiscover sees (switches with their LIDs)"
sim_run ibnetdiscover 2>/dev/null | grep -E "^Switch" | sed 's/^/  /'
echo
echo "== a route, traced by ibtracert from the SM's host to host-0015"
lid=$("$bin/ctl/smctl" --db "$work/smd.db" lids | awk '/host-0015/ { print $1 }')
sim_run ibtracert 1 "$lid" 2>/dev/null || true
echo
echo "== route check: every CA port reaches every LID, read back from every switch"
python3 "$top/tests/sim/checkfabric.py" "$net"
