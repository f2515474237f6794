#!/bin/bash
# RMPP as the Linux kernel receives it (issue 26). On the 648-host fat-tree
# (ft2 36), a client that ACKs exactly as drivers/infiniband/core/mad_rmpp.c's
# receiver does (saclient --rmpp kernel: ACK of segment 1 with window 65,
# then only at the end of each 64-segment window and at the last segment;
# segments past the window or held but not ACKed dropped silently):
#  - gets whole NodeRecord, PortInfoRecord, LinkRecord and PathRecord (from
#    its own port) tables: as many records as ibnetdiscover finds endports,
#    ports, link ends and destinations; every record umad2sim left intact
#    is one of those, none twice;
#  - never gets a segment past the window it gave (its own count, and smd's
#    MAD capture: every DATA smd sent within the window of the last ACK it
#    had received).
# A kernel-style receiver that stops ACKing after 100 segments gets an
# ABORT with status 126 (too many retries): in the capture, after its last
# ACK (65, window 129) smd sends 66..129 and then that window again 10
# times, never a segment it had ACKed, then the ABORT, within the retry
# budget (10 x 500 ms after the last resend's timeout: 5.5 s; bound 12 s).
. "$(dirname "$0")/common.sh"
C=${SACLIENT:-${top_builddir:-$top}/tests/sim/saclient}
[ -x "$C" ] || { echo "missing $C: build first" >&2; exit 99; }
tmp=$(mktemp -d)
trap '[ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"; sim_stop' EXIT
[ -z "${KEEP:-}" ] || echo "t_rmpp: work dir $tmp (KEEP: not removed)"
$GEN ft2 36 -o "$tmp/net" 2>/dev/null
sim_start "$tmp/net" >/dev/null 2>&1
printf 'sweep_interval = 0\ncapture = %s\ncapture_classes = sa\n' "$tmp/c.pcap" >"$tmp/conf"
smd_start "$tmp/conf" "$tmp/smd.db" "$tmp/out"
check wait_for "$tmp/out" "SA: answering" 1
sim_run ibnetdiscover >"$tmp/ibnd" 2>/dev/null

# port_guid HOST: a CA's port 1 GUID (node GUID + 1, topogen.py)
port_guid() {
	local g
	g=$(awk -v h="\"$1\"" '/^caguid=/ { split($1, a, "="); g = a[2] }
		$1 == "Hca" && $3 == h { print g }' "$tmp/net")
	printf '0x%016x\n' $((g + 1))
}

# The four tables, one client process (the last ACK a client sends as it
# exits is often lost under the simulator: it waits a little at the end)
t0=$(date +%s.%N)
(cd "$tmp" && SIM_HOST=host-0005 sim_run "$C" --rmpp kernel table attr=0x11 \; table attr=0x12 \
	\; table attr=0x20 \; path sgid="$(port_guid host-0005)" \; sleep ms=300) \
	>"$tmp/k.out" 2>"$tmp/k.err" || true
t1=$(date +%s.%N)
grep -E '^(rmpp|table|path records)' "$tmp/k.out" || cat "$tmp/k.err"
echo "four tables, kernel-style receiver: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s for the client process"

# Each table against ibnetdiscover's fabric; the receiver's own counts
check python3 - "$tmp/ibnd" "$tmp/k.out" <<'PY'
import re, sys
ibnd, out = open(sys.argv[1]).read().splitlines(), open(sys.argv[2]).read().splitlines()
endports, ports, links = set(), set(), set()
node = None
for line in ibnd:
    m = re.match(r'Switch\s+(\d+)\s+"S-([0-9a-f]+)".*\blid (\d+)\b', line)
    if m:
        n, guid, lid = int(m.group(1)), int(m.group(2), 16), int(m.group(3))
        node = ('sw', lid)
        endports.add((guid, lid))
        ports.update((lid, p) for p in range(n + 1))
        continue
    if re.match(r'Ca\s', line):
        node = ('ca', None)
        continue
    m = re.match(r'\[(\d+)\](\(([0-9a-f]+)\))?\s+"[^"]*"\[(\d+)\].*#(.*)$', line)
    if not m or not node:
        continue
    p, q, lids = int(m.group(1)), int(m.group(4)), [int(x) for x in re.findall(r'\blid (\d+)', m.group(5))]
    if node[0] == 'sw':
        links.add((node[1], p, q, lids[-1]))
    else:
        lid = lids[0]
        endports.add((int(m.group(3), 16), lid))
        ports.add((lid, p))
        links.add((lid, p, q, lids[-1]))
want = {0x11: endports, 0x12: ports, 0x20: links}
print('ibnetdiscover: %d endports, %d ports, %d link ends' % (len(endports), len(ports), len(links)))
bad = 0
def judge(name, keys, total, expect):
    global bad
    intact = [k for k in keys if k is not None]
    wrong = [k for k in intact if k not in expect]
    dup = len(intact) - len(set(intact))
    ok = total == len(expect) and not wrong and not dup and len(intact) * 2 > total
    print('%s: %d records (fabric: %d), %d intact, %d unknown, %d twice: %s'
          % (name, total, len(expect), len(intact), len(wrong), dup, 'ok' if ok else 'WRONG'))
    bad += not ok
recs, table_n, paths, lost = [], {}, [], set()
slid = None
for line in out:
    f = dict(kv.split('=', 1) for kv in line.split()[1:] if '=' in kv)
    if line.startswith('port '):
        slid = int(f['lid'])
    elif line.startswith('rec '):
        recs.append((int(f['lost'], 16), bytes.fromhex(f['hex'])))
    elif line.startswith('table ') and 'records' in f:
        table_n[int(f['attr'], 16)] = (int(f['records']), recs)
        recs = []
    elif line.startswith('lost rec='):
        lost.add(int(f['rec']))
    elif line.startswith('path ') and 'slid' in f:
        paths.append(None if len(paths) in lost else (int(f['slid']), int(f['dlid'])))
    elif line.startswith('path records='):
        paths_n = int(f['records'])
    elif line.startswith('rmpp '):
        if f['complete'] != '1' or f['past_window'] != '0':
            print('transfer %s: complete=%s past_window=%s' % (f['tid'], f['complete'], f['past_window']))
            bad += 1
def key(attr, lostw, b):
    # NodeRecord: LID (word 0), PortGUID (word 3); PortInfoRecord: LID, port;
    # LinkRecord: FromLID, FromPort, ToPort, ToLID (word 0)
    if attr == 0x11:
        return None if lostw & 0b1001 else (int.from_bytes(b[24:32], 'big'), int.from_bytes(b[0:2], 'big'))
    if lostw & 1:
        return None
    if attr == 0x12:
        return (int.from_bytes(b[0:2], 'big'), b[2])
    return (int.from_bytes(b[0:2], 'big'), b[2], b[3], int.from_bytes(b[4:6], 'big'))
for attr, name in ((0x11, 'NodeRecord'), (0x12, 'PortInfoRecord'), (0x20, 'LinkRecord')):
    n, rs = table_n.get(attr, (-1, []))
    judge(name, [key(attr, lw, b) for lw, b in rs], n, want[attr])
judge('PathRecord', paths, paths_n if paths else -1, {(slid, lid) for _, lid in endports})
sys.exit(1 if bad else 0)
PY

# A receiver that stops ACKing once it holds 100 segments
(cd "$tmp" && SIM_HOST=host-0009 sim_run "$C" --rmpp kernel --stop-after 100 table attr=0x11) \
	>"$tmp/s.out" 2>"$tmp/s.err" || true
grep -E '^(rmpp|table)' "$tmp/s.out" || cat "$tmp/s.err"
check grep -q '^table attr=0x0011 abort=126$' "$tmp/s.out"
# It held 129 (ACKed 1 and 65, then got 66..129) and got 66..129 ten times more
check grep -Eq '^rmpp .* segments=769 unique=129 acks=2 past_window=0 .* held=129 complete=0 abort=126 ' \
	"$tmp/s.out"
lid_k=$(awk '/^port / { sub(/lid=/, "", $2); print $2 }' "$tmp/k.out")
lid_s=$(awk '/^port / { sub(/lid=/, "", $2); print $2 }' "$tmp/s.out")
check smd_stop

# smd's side, from its MAD capture: the windows it was given, what it sent
check python3 - "$tmp/c.pcap" "$lid_k" "$lid_s" <<'PY'
import struct, sys
data = open(sys.argv[1], 'rb').read()
lid_k, lid_s = int(sys.argv[2]), int(sys.argv[3])
off, frames = 24, []
while off < len(data):
    _, _, incl, _ = struct.unpack_from('<IIII', data, off)
    rec = data[off + 16:off + 16 + incl]
    off += 16 + incl
    ts = struct.unpack_from('<Q', rec, 0)[0]
    pkt, inbound = rec[16:], rec[9] & 1
    mad = pkt[28:]
    if mad[1] != 0x03 or not mad[26] & 1:
        continue            # SA, RMPP active only
    frames.append(dict(t=(ts >> 32) + (ts & 0xffffffff) / 2**32, inbound=inbound,
                       peer=struct.unpack_from('>H', pkt, 6 if inbound else 2)[0],
                       tid=struct.unpack_from('>I', mad, 12)[0], type=mad[25], status=mad[27],
                       seg=struct.unpack_from('>I', mad, 28)[0],
                       win=struct.unpack_from('>I', mad, 32)[0]))
bad = 0
# Every DATA within the window of the last ACK received for its transfer (1 before any)
win, sent = {}, {}
for f in frames:
    k = (f['peer'], f['tid'])
    if f['inbound'] and f['type'] == 2:
        win[k] = max(win.get(k, 1), f['win'])
    elif not f['inbound'] and f['type'] == 1:
        sent[k] = sent.get(k, 0) + 1
        if f['seg'] > win.get(k, 1):
            print('segment %d to LID %d past its window %d' % (f['seg'], k[0], win.get(k, 1)))
            bad += 1
kernel = [k for k in sent if k[0] == lid_k]
print('kernel-style receiver: %d transfers, %d segments sent' % (len(kernel), sum(sent[k] for k in kernel)))
bad += len(kernel) != 4
# The receiver that stopped: its last ACK, the resends after it, the ABORT
fs = [f for f in frames if f['peer'] == lid_s]
acks = [i for i, f in enumerate(fs) if f['inbound'] and f['type'] == 2]
last = fs[acks[-1]] if acks else None
after = fs[acks[-1] + 1:] if acks else []
data_after = [f['seg'] for f in after if not f['inbound'] and f['type'] == 1]
aborts = [f for f in after if not f['inbound'] and f['type'] == 4]
print('stopped receiver: last ACK (%s, %s), %d segments after it (%s..%s), ABORTs %s'
      % (last and last['seg'], last and last['win'], len(data_after),
         min(data_after, default=None), max(data_after, default=None),
         [(a['status'], round(a['t'] - last['t'], 2)) for a in aborts]))
ok = (last is not None and (last['seg'], last['win']) == (65, 129) and
      len(data_after) == 11 * 64 and set(data_after) == set(range(66, 130)) and
      len(aborts) == 1 and aborts[0]['status'] == 126 and after[-1] is aborts[0] and
      5.0 <= aborts[0]['t'] - last['t'] <= 12.0)
bad += not ok
sys.exit(1 if bad else 0)
PY
finish
