#!/bin/bash
# MAD capture (smd.conf "capture", --capture): smd writes every MAD it sends
# and receives as an InfiniBand packet in a pcap/ERF file. Judged by tshark
# (every frame dissected as InfiniBand, nothing malformed, its LRH, BTH,
# DETH and MAD fields as expected), by a parser and CRC recomputation
# written here (zlib's CRC-32 for the ICRC, a CRC-16 table built bit by bit
# for the VCRC), and by smd's own counters:
#  1. a whole sweep of the k=16 fat-tree;
#  2. the daemon: SMInfo from another host, SA queries (when smd has an SA),
#     a trap after a cable is pulled;
#  3. lossy switches: timeouts and retries in the capture = smd's counters;
#  4. rotation at capture_max_mb, and the class filter.
# KEEP=1 keeps the work dir (captures, tshark output, smd's logs).
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
command -v tshark >/dev/null || { echo "missing tshark (Debian package tshark)" >&2; exit 99; }
[ -x "$SMCTL" ] || { echo "missing $SMCTL: build first" >&2; exit 99; }
tmp=$(mktemp -d)
[ -z "${KEEP:-}" ] || echo "t_capture: work dir $tmp (KEEP: not removed)"
cleanup_smd() { [ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$tmp"; }
trap 'cleanup_smd; sim_stop' EXIT

FIELDS="frame.protocols erf.flags.cap erf.flags.rxe infiniband.lrh.vl infiniband.lrh.lnh
infiniband.lrh.sl infiniband.lrh.dlid infiniband.lrh.slid infiniband.lrh.pktlen
infiniband.bth.opcode infiniband.bth.p_key infiniband.bth.destqp infiniband.bth.psn
infiniband.deth.q_key infiniband.deth.srcqp infiniband.mad.mgmtclass infiniband.mad.method
infiniband.mad.attributeid infiniband.mad.status infiniband.mad.transactionid
infiniband.invariant.crc infiniband.variant.crc"

# tshark_fields PCAP OUT: one line per frame, the fields above, tab separated
tshark_fields() {
	local args=() f
	for f in $FIELDS; do args+=(-e "$f"); done
	tshark -r "$1" -T fields -E separator=/t -E occurrence=f "${args[@]}" >"$2" 2>/dev/null
}

# no_malformed PCAP: tshark finds nothing malformed and no expert warning or error, but
# "ERF Rx Error" on the frames smd flags so (requests the transport gave back)
no_malformed() {
	local n
	n=$(tshark -r "$1" -Y '_ws.malformed || (_ws.expert.severity >= "Warning" &&
		_ws.expert.message != "ERF Rx Error")' 2>/dev/null | wc -l)
	[ "$n" -eq 0 ] || { echo "tshark: $n malformed or suspicious frames in $1" >&2; return 1; }
}

# check_capture OUT.json PCAP... -- TSV...: parse the files here, recompute both CRCs,
# compare every frame with tshark's reading; write counts as JSON. Exit 1 on any mismatch.
check_capture() {
	python3 - "$@" <<'EOF'
import json, struct, sys, zlib

out = sys.argv[1]
sep = sys.argv.index('--')
pcaps, tsvs = sys.argv[2:sep], sys.argv[sep + 1:]

# VCRC: CRC-16, polynomial 0x100B, reflected, seeded with ones, complemented
def crc16_table():
    tab = []
    for b in range(256):
        r = b
        for _ in range(8):
            r = (r >> 1) ^ (0xD008 if r & 1 else 0)   # 0xD008 = 0x100B bit-reversed
        tab.append(r)
    return tab
T16 = crc16_table()

def vcrc(data):
    r = 0xFFFF
    for b in data:
        r = (r >> 8) ^ T16[(r ^ b) & 0xFF]
    return r ^ 0xFFFF

def icrc(pkt):
    m = bytearray(pkt)
    m[0] |= 0xF0        # LRH.VL
    m[8 + 4] = 0xFF     # BTH.Resv8a
    return zlib.crc32(bytes(m)) & 0xFFFFFFFF

errors = []
def err(msg):
    if len(errors) < 20:
        print('check_capture: ' + msg, file=sys.stderr)
    errors.append(msg)

frames = []
for path in pcaps:
    data = open(path, 'rb').read()
    magic, vmaj, vmin, _, _, snap, link = struct.unpack_from('<IHHiIII', data, 0)
    if magic != 0xA1B2C3D4 or (vmaj, vmin) != (2, 4) or link != 197:
        err('%s: pcap header %x %d.%d link %d' % (path, magic, vmaj, vmin, link))
        continue
    off = 24
    while off < len(data):
        sec, usec, incl, orig = struct.unpack_from('<IIII', data, off)
        rec = data[off + 16:off + 16 + incl]
        off += 16 + incl
        if len(rec) != incl:
            err('%s: truncated record' % path)
            break
        ts = struct.unpack_from('<Q', rec, 0)[0]    # ERF: the timestamp is little endian,
        rtype, flags = rec[8], rec[9]                # the rest big endian
        rlen, lctr, wlen = struct.unpack_from('>HHH', rec, 10)
        pkt = rec[16:]
        f = {'file': path, 'type': rtype, 'flags': flags, 'rlen': rlen, 'wlen': wlen,
             'len': len(pkt), 'pcap_sec': sec, 'erf_sec': ts >> 32}
        if len(pkt) == 290:
            f.update(vl=pkt[0] >> 4, lver=pkt[0] & 15, sl=pkt[1] >> 4, lnh=pkt[1] & 3,
                     dlid=struct.unpack_from('>H', pkt, 2)[0],
                     pktlen=struct.unpack_from('>H', pkt, 4)[0] & 0x7FF,
                     slid=struct.unpack_from('>H', pkt, 6)[0], opcode=pkt[8], bth1=pkt[9],
                     pkey=struct.unpack_from('>H', pkt, 10)[0],
                     dqp=int.from_bytes(pkt[13:16], 'big'),
                     psn=int.from_bytes(pkt[17:20], 'big'),
                     qkey=struct.unpack_from('>I', pkt, 20)[0],
                     sqp=int.from_bytes(pkt[25:28], 'big'),
                     mclass=pkt[29], method=pkt[31],
                     status=struct.unpack_from('>H', pkt, 32)[0],
                     tid=struct.unpack_from('>Q', pkt, 36)[0],
                     attr=struct.unpack_from('>H', pkt, 44)[0],
                     icrc_le=int.from_bytes(pkt[284:288], 'little'),
                     vcrc_le=int.from_bytes(pkt[288:290], 'little'),
                     icrc_be=int.from_bytes(pkt[284:288], 'big'),
                     vcrc_be=int.from_bytes(pkt[288:290], 'big'),
                     icrc_ok=icrc(pkt[:284]) == int.from_bytes(pkt[284:288], 'little'),
                     vcrc_ok=vcrc(pkt[:288]) == int.from_bytes(pkt[288:290], 'little'))
        frames.append(f)

rows = []
for path in tsvs:
    for line in open(path):
        rows.append(line.rstrip('\n').split('\t'))
if len(rows) != len(frames):
    err('tshark read %d frames, the files hold %d' % (len(rows), len(frames)))

def num(s):
    return int(s, 0) if s else None

counts = {}
stats = dict(frames=len(frames), sent=0, received=0, lost=0, smp_req_sent=0,
             smp_resp_received=0, sa_req_received=0, sa_resp_sent=0, traps_received=0,
             sminfo_resp_sent=0)
psn_prev = None
for i, f in enumerate(frames):
    where = 'frame %d' % (i + 1)
    if f['type'] != 21 or f['rlen'] != 306 or f['wlen'] != 290 or f['len'] != 290:
        err('%s: ERF type %d rlen %d wlen %d len %d' % (where, f['type'], f['rlen'], f['wlen'],
                                                        f['len']))
        continue
    if f['pcap_sec'] != f['erf_sec']:
        err('%s: pcap and ERF timestamps differ' % where)
    inbound, lost = f['flags'] & 1, bool(f['flags'] & 0x10)
    smi = f['mclass'] in (0x01, 0x81)
    resp = bool(f['method'] & 0x80) or f['method'] == 0x07
    # What the packet must say, from what the MAD is and which way it went
    want = dict(vl=15 if smi else 0, lver=0, lnh=2, pktlen=72, opcode=0x64, pkey=0xFFFF)
    if f['mclass'] == 0x81:
        want.update(dlid=0xFFFF, slid=0xFFFF)
    if not inbound or lost:
        want['sqp'] = 0 if smi else 1
        if smi:
            want['dqp'] = 0
    else:
        want['dqp'] = 0 if smi else 1
        if smi:
            want['sqp'] = 0
    want['qkey'] = 0 if f['dqp'] == 0 else 0x80010000
    for k, v in want.items():
        if f[k] != v:
            err('%s: %s is %#x, expected %#x' % (where, k, f[k], v))
    if f['mclass'] != 0x81 and not (0 < f['dlid'] < 0xC000 and 0 < f['slid'] < 0xC000):
        err('%s: LID routed from %#x to %#x' % (where, f['slid'], f['dlid']))
    if not f['icrc_ok']:
        err('%s: ICRC %#x does not match the recomputed one' % (where, f['icrc_le']))
    if not f['vcrc_ok']:
        err('%s: VCRC %#x does not match the recomputed one' % (where, f['vcrc_le']))
    if psn_prev is not None and f['psn'] != (psn_prev + 1) & 0xFFFFFF:
        err('%s: PSN %d after %d' % (where, f['psn'], psn_prev))
    psn_prev = f['psn']
    # tshark's reading of the same frame
    if i < len(rows):
        r = rows[i]
        names = ['protocols', 'cap', 'rxe', 'vl', 'lnh', 'sl', 'dlid', 'slid', 'pktlen', 'opcode',
                 'pkey', 'dqp', 'psn', 'qkey', 'sqp', 'mclass', 'method', 'attr', 'status',
                 'tid', 'icrc_be', 'vcrc_be']
        t = dict(zip(names, r + [''] * (len(names) - len(r))))
        if t['protocols'] != 'erf:infiniband':
            err('%s: tshark protocols %r' % (where, t['protocols']))
        mine = dict(cap=inbound, rxe=int(lost), vl=f['vl'], lnh=f['lnh'], sl=f['sl'],
                    dlid=f['dlid'], slid=f['slid'], pktlen=f['pktlen'], opcode=f['opcode'],
                    pkey=f['pkey'], dqp=f['dqp'], psn=f['psn'], qkey=f['qkey'], sqp=f['sqp'],
                    mclass=f['mclass'], method=f['method'], attr=f['attr'], tid=f['tid'],
                    icrc_be=f['icrc_be'], vcrc_be=f['vcrc_be'])
        if f['mclass'] != 0x81:
            mine['status'] = f['status']
        if f['mclass'] == 0x03 and not t['icrc_be'] and not t['vcrc_be']:
            # Wireshark 4.0's SA dissector stops short of the end of some records
            # (NodeRecord) and then shows no CRCs: they were checked above
            del mine['icrc_be'], mine['vcrc_be']
            stats['sa_crc_not_shown'] = stats.get('sa_crc_not_shown', 0) + 1
        for k, v in mine.items():
            got = num(t[k])
            if got != v:
                err('%s: tshark says %s = %s, the bytes say %#x' % (where, k, t[k], v))
    key = '%02x %02x %04x %04x' % (f['mclass'], f['method'],
                                    f['attr'], f['status'] & (0x7FFF if f['mclass'] == 0x81 else 0xFFFF))
    if lost:
        stats['lost'] += 1
        continue
    d = 'received' if inbound else 'sent'
    stats[d] += 1
    counts.setdefault(key, {'sent': 0, 'received': 0})[d] += 1
    if smi and not inbound and not resp:
        stats['smp_req_sent'] += 1
    if smi and inbound and resp:
        stats['smp_resp_received'] += 1
    if f['mclass'] == 0x03 and inbound and not resp:
        stats['sa_req_received'] += 1
    if f['mclass'] == 0x03 and not inbound and resp:
        stats['sa_resp_sent'] += 1
    if inbound and f['method'] == 0x05:
        stats['traps_received'] += 1
        stats['trap_slid'] = f['slid']
        stats['trap_dlid'] = f['dlid']
    if not inbound and f['attr'] == 0x20 and f['method'] == 0x81:
        stats['sminfo_resp_sent'] += 1
stats['counts'] = counts
stats['errors'] = len(errors)
json.dump(stats, open(out, 'w'), indent=1, sort_keys=True)
print('check_capture: %d frames, %d errors' % (len(frames), len(errors)))
sys.exit(1 if errors else 0)
EOF
}

# jget FILE KEY: a number from the JSON check_capture wrote
jget() { python3 -c 'import json,sys; print(json.load(open(sys.argv[1])).get(sys.argv[2], -1))' "$1" "$2"; }

# same_table JSON STATS: smctl capture-stats's table = the counts check_capture made
same_table() {
	python3 - "$1" "$2" <<'EOF'
import json, sys
counts = json.load(open(sys.argv[1]))['counts']
want = {k: (v['sent'], v['received']) for k, v in counts.items()}
cls = {'SM-LID': 0x01, 'SM-DR': 0x81, 'SA': 0x03}
got = {}
rows = False
for line in open(sys.argv[2]):
    w = line.split()
    if w[:2] == ['class', 'method']:
        rows = True
        continue
    if rows and len(w) == 6:
        got[w[0], w[1], w[2], int(w[3], 16)] = (int(w[4]), int(w[5]))
# smctl prints names: compare totals per status and the number of rows
ok = sorted(want.values()) == sorted(got.values()) and len(want) == len(got)
if not ok:
    print('smctl table differs: want %s got %s' % (sorted(want.values()), sorted(got.values())),
          file=sys.stderr)
sys.exit(0 if ok else 1)
EOF
}

# -- 1. a whole sweep of the k=16 fat-tree ------------------------------------------------
$GEN ft3 16 -o "$tmp/ft16.net" 2>/dev/null
sim_start "$tmp/ft16.net" >/dev/null 2>&1
rc=0
(cd "$tmp" && sim_run "$SMD" --once --db "$tmp/a.db" --capture "$tmp/ft16.pcap") \
	>"$tmp/ft16.out" 2>&1 || rc=$?
sim_stop
check test "$rc" -eq 0
check grep -q "subnet UP: 1344 nodes" "$tmp/ft16.out"
smps=$(sed -n 's/.* \([0-9]*\) SMPs (.*/\1/p' "$tmp/ft16.out" | tail -n 1)
logged_frames=$(sed -n 's/^.*capture .*; \([0-9]*\) frames,.*/\1/p' "$tmp/ft16.out")
tshark_fields "$tmp/ft16.pcap" "$tmp/ft16.tsv"
check no_malformed "$tmp/ft16.pcap"
check check_capture "$tmp/ft16.json" "$tmp/ft16.pcap" -- "$tmp/ft16.tsv"
check test "$(jget "$tmp/ft16.json" frames)" -eq "$logged_frames"
# Every SMP smd counted is in the file, once, and so is its answer
check test "$(jget "$tmp/ft16.json" smp_req_sent)" -eq "$smps"
check test "$(jget "$tmp/ft16.json" smp_resp_received)" -eq "$smps"
check test "$(jget "$tmp/ft16.json" frames)" -eq $((2 * smps))
# The sweep's attributes: every DR Get and Set the sweep uses, each answered
check python3 -c '
import json, sys
c = json.load(open(sys.argv[1]))["counts"]
for attr in ("0010", "0011", "0012", "0015"):                 # NodeDesc, NodeInfo, SwitchInfo, PortInfo
    assert c["81 01 %s 0000" % attr]["sent"] > 0, attr
for attr in ("0012", "0015", "0019"):                         # SwitchInfo, PortInfo, LFT
    assert c["81 02 %s 0000" % attr]["sent"] > 0, attr
# Every Get and Set has its GetResp: per attribute, as many answers as requests
for k, v in c.items():
    cls, method, attr, st = k.split()
    if method == "81":
        req = sum(c.get("%s %s %s %s" % (cls, m, attr, st), {"sent": 0})["sent"]
                  for m in ("01", "02"))
        assert v["received"] == req, k
' "$tmp/ft16.json"
"$SMCTL" capture-stats "$tmp/ft16.pcap" >"$tmp/ft16.stats"
check grep -q "CRC errors: *0 ICRC, 0 VCRC" "$tmp/ft16.stats"
check grep -Eq "smd's requests: *$smps sent, $smps answered, 0 timed out, 0 retries" "$tmp/ft16.stats"
check same_table "$tmp/ft16.json" "$tmp/ft16.stats"
rm -f "$tmp/ft16.pcap" "$tmp/ft16.tsv"

# -- 2. the daemon: SMInfo, SA queries, a trap ---------------------------------------------
$GEN ft3 4 -o "$tmp/ft4.net" 2>/dev/null
sim_start "$tmp/ft4.net" >/dev/null 2>&1
printf 'sweep_interval = 0\ncapture = %s\n' "$tmp/d.pcap" >"$tmp/d.conf"
smd_start "$tmp/d.conf" "$tmp/d.db" "$tmp/d.out"
check wait_for "$tmp/d.out" "subnet UP" 1
SIM_HOST=host-0007 sim_run sminfo >"$tmp/sminfo" 2>&1
check grep -q "SMINFO_MASTER" "$tmp/sminfo"
sa=0 rmpp=0
if grep -q "SA: answering" "$tmp/d.out"; then
	sa=1
	SIM_HOST=host-0007 sim_run saquery -N >"$tmp/saq.nodes" 2>&1 || sa=2
	SIM_HOST=host-0007 sim_run saquery -p --src-to-dst 3:5 >"$tmp/saq.path" 2>&1 || sa=2
	# A client that ACKs: the whole NodeRecord table in RMPP segments
	if "$SMCTL" --help | grep -q "^  sa "; then
		rmpp=1
		SIM_HOST=host-0007 sim_run "$SMCTL" sa nodes --count >"$tmp/sa.count" 2>&1 || rmpp=2
	fi
fi
sim_console 'Unlink "core-001"[1]'
check wait_for "$tmp/d.out" "subnet UP" 2
smd_stop || true
sim_stop
check grep -Eq "capture .*: [1-9][0-9]* MADs sent" "$tmp/d.out"
tshark_fields "$tmp/d.pcap" "$tmp/d.tsv"
check no_malformed "$tmp/d.pcap"
check check_capture "$tmp/d.json" "$tmp/d.pcap" -- "$tmp/d.tsv"
check test "$(jget "$tmp/d.json" sminfo_resp_sent)" -ge 1
# The trap: LID routed from the switch's LID to ours (1), on VL15
check test "$(jget "$tmp/d.json" traps_received)" -ge 1
check test "$(jget "$tmp/d.json" trap_dlid)" -eq 1
check test "$(jget "$tmp/d.json" trap_slid)" -gt 1
if [ "$sa" -eq 0 ]; then
	echo "NOTE: smd does not answer SA queries (no SA in this build): SA capture not checked"
else
	check test "$sa" -eq 1
	check test "$(jget "$tmp/d.json" sa_req_received)" -ge 2
	check test "$(jget "$tmp/d.json" sa_resp_sent)" -ge 2
	"$SMCTL" capture-stats "$tmp/d.pcap" >"$tmp/d.stats"
	check grep -Eq "^SA +GetTable(Resp)? +NodeRecord" "$tmp/d.stats"
	check grep -Eq "^SA +(Get|GetTable)Resp +PathRecord" "$tmp/d.stats"
fi
if [ "$rmpp" -ne 0 ]; then
	check test "$rmpp" -eq 1
	check test "$(cat "$tmp/sa.count")" -eq 36
	# DATA segments out (numbered 1, 2, ...), ACKs in, all dissected as RMPP by tshark
	segs=$(tshark -r "$tmp/d.pcap" -Y 'infiniband.rmpp.rmpptype == 1 && erf.flags.cap == 0' \
		-T fields -e infiniband.rmpp.segmentnumber 2>/dev/null | sort -u | wc -l)
	acks=$(tshark -r "$tmp/d.pcap" -Y 'infiniband.rmpp.rmpptype == 2 && erf.flags.cap == 1' \
		2>/dev/null | wc -l)
	check test "$segs" -ge 10
	check test "$acks" -ge 1
fi

# -- 3. lossy switches: the capture shows smd's timeouts and retries -----------------------
sim_start "$tmp/ft4.net" >/dev/null 2>&1
for sw in $(awk '/^Switch/ && /agg/ { gsub(/"/, "", $3); print $3 }' "$tmp/ft4.net"); do
	sim_console "Error \"$sw\" 10"
done
printf 'smp_retries = 12\ncapture = %s\n' "$tmp/l.pcap" >"$tmp/l.conf"
rc=0
(cd "$tmp" && sim_run "$SMD" --once --config "$tmp/l.conf" --db "$tmp/l.db") \
	>"$tmp/l.out" 2>&1 || rc=$?
sim_stop
check test "$rc" -eq 0
smps=$(sed -n 's/.* \([0-9]*\) SMPs (\([0-9]*\) timed out.*/\1/p' "$tmp/l.out" | tail -n 1)
tmo=$(sed -n 's/.* SMPs (\([0-9]*\) timed out.*/\1/p' "$tmp/l.out" | tail -n 1)
retried=$(sed -n 's/.* SMPs timed out, \([0-9]*\) retried.*/\1/p' "$tmp/l.out" | tail -n 1)
check test "$tmo" -gt 0
tshark_fields "$tmp/l.pcap" "$tmp/l.tsv"
check no_malformed "$tmp/l.pcap"
check check_capture "$tmp/l.json" "$tmp/l.pcap" -- "$tmp/l.tsv"
# ibsim gives every lost SMP back at once: one RX-error frame per timeout
check test "$(jget "$tmp/l.json" lost)" -eq "$tmo"
check test "$(tshark -r "$tmp/l.pcap" -Y 'erf.flags.rxe == 1' 2>/dev/null | wc -l)" -eq "$tmo"
"$SMCTL" capture-stats "$tmp/l.pcap" >"$tmp/l.stats"
check grep -Eq "smd's requests: *$smps sent, $((smps - tmo)) answered, $tmo timed out, $retried retries" \
	"$tmp/l.stats"

# -- 4. rotation and the class filter ------------------------------------------------------
$GEN ft3 8 -o "$tmp/ft8.net" 2>/dev/null
sim_start "$tmp/ft8.net" >/dev/null 2>&1
printf 'capture = %s\ncapture_max_mb = 1\n' "$tmp/r.pcap" >"$tmp/r.conf"
(cd "$tmp" && sim_run "$SMD" --once --config "$tmp/r.conf" --db "$tmp/r.db") >"$tmp/r.out" 2>&1
rots=$(sed -n 's/^.*capture .* \([0-9]*\) rotations$/\1/p' "$tmp/r.out")
check test "$rots" -ge 2
files=()
for k in 3 2 1; do [ -e "$tmp/r.pcap.$k" ] && files+=("$tmp/r.pcap.$k"); done
files+=("$tmp/r.pcap")
tsvs=()
for f in "${files[@]}"; do
	check test "$(stat -c %s "$f")" -le 1048576
	check no_malformed "$f"
	tshark_fields "$f" "$f.tsv"
	tsvs+=("$f.tsv")
done
# Oldest first: the PSNs run on across the files, and no frame is lost at a boundary
check check_capture "$tmp/r.json" "${files[@]}" -- "${tsvs[@]}"
if [ "$rots" -le 3 ]; then
	check test "$(jget "$tmp/r.json" frames)" -eq \
		"$(sed -n 's/^.*capture .*; \([0-9]*\) frames,.*/\1/p' "$tmp/r.out")"
fi
# capture_classes = sa on a sweep: every SMP is filtered out, the file is an empty pcap
printf 'capture = %s\ncapture_classes = sa\n' "$tmp/f.pcap" >"$tmp/f.conf"
(cd "$tmp" && sim_run "$SMD" --once --config "$tmp/f.conf" --db "$tmp/f.db") >"$tmp/f.out" 2>&1
sim_stop
smps=$(sed -n 's/.* \([0-9]*\) SMPs (.*/\1/p' "$tmp/f.out" | tail -n 1)
filtered=$(sed -n 's/^.*capture .*: 0 MADs sent, 0 received .*, \([0-9]*\) filtered out.*/\1/p' \
	"$tmp/f.out")
# Each SMP and its answer, and whatever traps came in
check test "${filtered:-0}" -ge $((2 * smps))
check test "$(stat -c %s "$tmp/f.pcap")" -eq 24
check test "$(tshark -r "$tmp/f.pcap" 2>/dev/null | wc -l)" -eq 0
# A capture file that cannot be created: smd says so and runs without
sim_start "$tmp/ft4.net" >/dev/null 2>&1
(cd "$tmp" && sim_run "$SMD" --once --db "$tmp/n.db" --capture "$tmp/no/such/dir.pcap") \
	>"$tmp/n.out" 2>&1
sim_stop
check grep -q "cannot create capture file .*running without capture" "$tmp/n.out"
check grep -q "subnet UP" "$tmp/n.out"
finish
