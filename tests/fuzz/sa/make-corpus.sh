#!/bin/bash
# Regenerates tests/fuzz/sa/clients.pcap, the SA fuzzer's corpus: what real
# SA clients sent smd on a simulated 3-level fat-tree (k=4), captured by smd
# itself (capture_classes = sa): saquery's queries of every record type it
# knows, PathRecords by LIDs and by GIDs, multicast joins, leaves and
# lookups from mcclient (IPoIB's join among them), and smctl's RMPP table
# reads with their ACKs. Run from a built tree:
#
#   tests/fuzz/sa/make-corpus.sh [BUILDDIR]
#
# The file is committed: the fuzzer needs no simulator.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
build=${1:-$top}
SMD=$build/smd/smd
SMCTL=$build/ctl/smctl
MCCLIENT=$build/tests/sim/mcclient
. "$top/tests/sim/simlib.sh"
tmp=$(mktemp -d)
smd_pid=
trap '[ -n "$smd_pid" ] && kill -TERM "$smd_pid" 2>/dev/null; wait; sim_stop; rm -rf "$tmp"' EXIT
python3 "$top/tests/gen/topogen.py" ft3 4 -o "$tmp/net" 2>/dev/null
sim_start "$tmp/net" >/dev/null 2>&1
printf 'sweep_interval = 0\ncapture = %s\ncapture_classes = sa\n' "$tmp/sa.pcap" >"$tmp/conf"
(cd "$tmp" && exec env LD_PRELOAD="$SIM_PRELOAD" RUNTIME_DIRECTORY="$tmp" \
	"$SMD" --config "$tmp/conf" --db "$tmp/db" >"$tmp/out" 2>&1) &
smd_pid=$!
for _ in $(seq 600); do grep -q "SA: answering" "$tmp/out" && break; sleep 0.1; done
grep -q "SA: answering" "$tmp/out" || { cat "$tmp/out"; exit 1; }

export SIM_HOST=host-0003
q() { (cd "$tmp" && sim_run saquery "$@" >/dev/null 2>&1) || true; }
q CPI
q NR
q NR 5
q PIR
q PIR 17/1
q SL2VL 5
q PKTR 5
q VLAR 5
q IIR
q LR 17/1
q SR
q PR
q MCMR
q LFTR 17/0
q MFTR
q GIR 5
q SWIR 17
q SMIR
q -s
q -g
q -x
q --src-to-dst 5:7
q -p --slid 5 --dlid 9
q --sgid-to-dgid fe80::2:c903:0:3-fe80::2:c903:0:5
(cd "$tmp" && sim_run "$MCCLIENT" ipoib \; join mgid=ff12:601b:ffff::1:ff00:1 \
	\; get mgid=ff12:401b:ffff::1 \; gettable \; leave mgid=ff12:601b:ffff::1:ff00:1 \
	\; cpi \; ipoib-leave >/dev/null 2>&1) || true
for t in nodes ports switches links lft sminfo pkeys guids sl2vl vlarb path mcast mft; do
	(cd "$tmp" && sim_run "$SMCTL" sa "$t" >/dev/null 2>&1) || true
done
kill -TERM "$smd_pid"
wait "$smd_pid" || true
smd_pid=
# Only what the clients sent, each MAD once (TIDs aside), at most 8 of a
# kind (attribute, method, RMPP type): the answers are smd's own, and a
# table's hundreds of ACKs differ only in their segment numbers
python3 - "$tmp/sa.pcap" "$here/clients.pcap" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
out, seen, kinds, off = [d[:24]], set(), {}, 24
while off + 16 <= len(d):
    incl = struct.unpack('<I', d[off + 8:off + 12])[0]
    rec = d[off:off + 16 + incl]
    off += 16 + incl
    erf = rec[16:]
    mad = erf[16 + 28:16 + 28 + 256]
    if not erf[9] & 1 or len(mad) < 256:
        continue
    key, kind = mad[:8] + mad[16:], (mad[3], mad[16:18], mad[25])
    if key not in seen and kinds.get(kind, 0) < 8:
        seen.add(key)
        kinds[kind] = kinds.get(kind, 0) + 1
        out.append(rec)
open(sys.argv[2], 'wb').write(b''.join(out))
print(len(out) - 1, 'requests')
PY
echo "$here/clients.pcap: $(stat -c %s "$here/clients.pcap") bytes"
