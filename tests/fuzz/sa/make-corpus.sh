#!/bin/bash
# Regenerates tests/fuzz/sa/clients.pcap, the SA fuzzer's corpus: what real
# SA clients sent smd on a simulated 3-level fat-tree (k=4), captured by smd
# itself (capture_classes = sa): saquery's queries of every record type it
# knows, PathRecords by LIDs and by GIDs, multicast joins, leaves and
# lookups from mcclient (IPoIB's join among them), smctl's RMPP table
# reads with their ACKs, and what saclient (tests/sim/saclient.c, the
# spec-written client of t_saclients.sh) sends: ServiceRecord Set, Get,
# GetTable and Delete (with and without the ServiceKey, another port's
# GID), InformInfo Set (subscribe, unsubscribe) and InformInfoRecord,
# MultiPathRecord GetMulti in one MAD and as RMPP DATA segments, GUIDInfoRecord
# Set and Delete, PortInfoRecord CapabilityMask matching, PathRecord with
# ServiceID, TClass, Reversible and NumbPath. Run from a built tree:
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
SACLIENT=$build/tests/sim/saclient
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
# port_guid HOST: a CA's port 1 GUID (node GUID + 1, topogen.py)
port_guid() {
	local g
	g=$(awk -v h="\"$1\"" '/^caguid=/ { split($1, a, "="); g = a[2] }
		$1 == "Hca" && $3 == h { print g }' "$tmp/net")
	printf '0x%016x\n' $((g + 1))
}
sac() { (cd "$tmp" && SIM_HOST=$1 sim_run "$SACLIENT" "${@:2}" >/dev/null 2>&1) || true; }
ga=$(port_guid host-0003) gb=$(port_guid host-0012) gc=$(port_guid host-0007)
sid=0x10000ce100415254
sac host-0003 cpi \; pir capmask=0x8000 \; pir capmask=0x100000 \; pir lid=5 capmask=0x10000 \
	\; svc-set id=$sid lease=600 key=0x5eed name=srp.target d8=0:7 d64_0=0x1122334455667788 \
	\; svc-set id=0x2 name=forever d32_3=0x77 \; svc-set id=0x3 lease=1 pkey=0xffff name=short \
	\; svc-get id=$sid \; svc-get name=srp.target \; svc-get gid=$gb \; svc-get \
	\; svc-set id=$sid lease=1 name=srp.target \; svc-del id=0x2 \
	\; svc-del id=$sid key=0x5eed name=srp.target
sac host-0012 svc-get id=$sid \; svc-del id=$sid gid=$ga \; svc-set id=0x4 gid=$ga name=theirs
sac host-0007 sub trap=64 \; sub trap=65 \; sub trap=144 type=1 producer=0x000066 \
	\; sub trap=66 gid=$gc \; iir \; unsub trap=64 \; unsub trap=65 \; iir
sac host-0003 path sgid=$ga dgid=$gb numb=4 sid=$sid tclass=0x20 rev=1 \
	\; path slid=5 dlid=9 sid=0x1234 rev=1 get=1 \; path sgid=$ga dgid=$gc numb=2 tclass=0x10 \
	\; mpath sgids=$ga dgids=$gb numb=4 rev=1 \; mpath sgids=$ga dgids=$gb,$gc numb=2 sid=0x77 pad=400 \
	\; mpath sgids=$ga,$gc dgids=$gb numb=4 rev=1 tclass=0x20 pad=200
sac host-0003 gir \; gir-set block=0 1=0x0002c9030000aa01 \; gir-del block=0 1=0 \
	\; gir-set block=0 0=0x0002c9030000aa03 \; gir-set lid=1 block=0 2=0x0002c9030000aa02
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
