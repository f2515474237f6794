#!/bin/bash
# smd --import-opensm on mangled opensm.conf files (OpenSM's own, with bytes
# flipped, lines cut, duplicated and swapped, values replaced by junk, NUL
# and control bytes, very long lines, and numbers OpenSM takes but smd's
# keys may not, aimed at the options smd has keys for; seeded, so a
# failure repeats): it always exits 0 or 1 (never crashes: the ASan build's
# run catches memory errors), says on stderr which lines it did not
# understand exactly when it exits 1, and what it prints always passes
# smd -n.
set -u
here=$(cd "$(dirname "$0")" && pwd)
SMD=${SMD:-$here/../../smd/smd}
ROUNDS=${ROUNDS:-200}
umask 077
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
pass=0
fail=0
python3 - "$here/opensm-3.3.23.opensm" "$tmp" "$ROUNDS" <<'EOF'
import random, sys
src, out, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3])
lines = open(src, 'rb').read().split(b'\n')
junk = [b'', b'TRUE', b'FALSE', b'-1', b'0x', b'99999999999999999999', b'(null)', b'0:0,1:',
        b'\x00', b'\x01\x02', b'\xff\xfe', b'#', b'a' * 3000, b'0x' + b'f' * 70, b'ftree,,updn',
        b'  ', b'15', b'16', b'255', b'256', b'0,1,2', b'/nonexistent',
        # numbers OpenSM takes and smd's keys may not
        b'4', b'8', b'9', b'20', b'0x14', b'32', b'4097', b'86401', b'65535', b'4294967295']
counterparts = set(b'sm_priority lmc packet_life_time subnet_timeout sweep_interval guid '
                   b'm_key m_key_protection_level m_key_lease_period sm_key subnet_prefix '
                   b'max_wire_smps transaction_timeout transaction_retries polling_retry_number '
                   b'sminfo_polling_timeout qos qos_high_limit qos_sl2vl qos_vlarb_high '
                   b'qos_vlarb_low log_flags routing_engine partition_config_file'.split())
for n in range(rounds):
    r = random.Random(n)
    ls = list(lines)
    for _ in range(r.randint(1, 12)):
        k = r.randrange(8)
        # Mostly the option lines (two thirds of the file is comments)
        opt = [j for j, l in enumerate(ls) if l and not l.startswith(b'#')]
        # and among them the options smd has keys for (their values reach smd's key table)
        keyed = [j for j in opt if ls[j].split(b' ')[0] in counterparts]
        i = r.choice(keyed) if keyed and k >= 6 else \
            r.choice(opt) if opt and r.randrange(4) else r.randrange(len(ls))
        if k == 0 and ls[i]:            # flip a byte
            b = bytearray(ls[i]); j = r.randrange(len(b)); b[j] = r.randrange(256); ls[i] = bytes(b)
        elif k == 1:                    # cut a line
            ls[i] = ls[i][:r.randrange(len(ls[i]) + 1)]
        elif k == 2:                    # a line twice
            ls.insert(r.randrange(len(ls)), ls[i])
        elif k == 3:                    # swap two lines
            j = r.randrange(len(ls)); ls[i], ls[j] = ls[j], ls[i]
        elif k >= 4 and ls[i] and not ls[i].startswith(b'#'):   # a junk value
            if k >= 6 and ls[i].startswith(b'qos '):
                ls[i] = b'qos TRUE'
                continue
            ls[i] = ls[i].split(b' ')[0] + b' ' + r.choice(junk)
        else:                           # a junk line
            ls.insert(i, r.choice(junk))
    data = b'\n'.join(ls)
    if r.randrange(4) == 0:
        data = data[:r.randrange(len(data))]
    open('%s/f%d.conf' % (out, n), 'wb').write(data)
EOF
for ((n = 0; n < ROUNDS; n++)); do
	f=$tmp/f$n.conf
	rc=0
	"$SMD" --import-opensm "$f" >"$tmp/out" 2>"$tmp/err" || rc=$?
	if [ "$rc" -eq 0 ] && [ -s "$tmp/err" ] || [ "$rc" -eq 1 ] && ! grep -q "^smd: $f:[0-9]*: " "$tmp/err" ||
	   [ "$rc" -gt 1 ] || grep -qE "Sanitizer|runtime error" "$tmp/err"; then
		echo "FAIL: round $n: exit $rc, stderr: $(head -c 400 "$tmp/err")"
		fail=$((fail + 1))
		continue
	fi
	if ! "$SMD" -n -c "$tmp/out" >/dev/null 2>"$tmp/nerr"; then
		echo "FAIL: round $n: smd -n refuses the output: $(cat "$tmp/nerr")"
		fail=$((fail + 1))
		continue
	fi
	pass=$((pass + 1))
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ] && [ "$pass" -eq "$ROUNDS" ]
