#!/bin/bash
# M_Key (issue 12). ibsim 0.10 neither enforces nor stores M_Key, so ibsim
# runs with tests/sim/sma_shim.c preloaded: an SMA that keeps each port's
# M_Key, ProtectBits, LeasePeriod and violations and drops what a real SMA
# drops (tests/sim/README.md). On a line of two switches:
#  1. with m_key, every CA port and switch holds the key smd derived for it
#     (computed again here by tests/sim/rogue, which shares no code with
#     smd) and the configured ProtectBits and lease, read back with
#     smpquery -y KEY; smpquery without the key sees M_Key 0;
#  2. a PortInfo Set from another host without the key gets no answer, the
#     port is unchanged, smd reports the port's Bad M_Key trap with the
#     offender, and reads the port with its key (which stops the lease the
#     violation started: the shim logs it);
#  3. smd restarted with the same m_key raises ProtectBits to 2 (Gets need
#     the key too), and restarted again discovers and manages the whole
#     fabric at level 2 (its Gets carry the keys of the ports the database
#     knows), with no violation of its own;
#  4. a port given a foreign key (by a host that knew the old one) is
#     reported "M_Key unknown" and taken back once its lease ran out;
#  4b. a new m_key by SIGHUP moves every port to its new key, with no
#     violation, at ProtectBits 2; 4c. one with lease 0 is reported as
#     lost for good;
#  5. without m_key every SMP smd sends carries M_Key 0 and no port gets a
#     key.
. "$(dirname "$0")/common.sh"
SMCTL=${SMCTL:-$top/ctl/smctl}
ROGUE=${ROGUE:-${top_builddir:-$top}/tests/sim/rogue}
[ -x "$ROGUE" ] || { echo "missing $ROGUE: make check builds it" >&2; exit 99; }
command -v cc >/dev/null || { echo "missing cc: the SMA shim is built here" >&2; exit 99; }
tmp=$(mktemp -d)
cleanup() {
	[ -n "$smd_pid" ] && kill -KILL "$smd_pid" 2>/dev/null
	rm -rf "$tmp"
}
trap 'cleanup; sim_stop' EXIT
cd "$tmp" || exit 1
cc -shared -fPIC -O2 -o sma_shim.so "$here/sma_shim.c" -ldl || { bad "building the shim"; finish; }
$GEN line 2 -o net 2>/dev/null
export SMA_SHIM_NET=$tmp/net SMA_SHIM_LOG=$tmp/sma.log
ctl() { "$SMCTL" --socket "$tmp/control" "$@"; }
secret=0x5ec12e7000c0ffee
key_of() { "$ROGUE" mkey derive "$secret" "$1"; }
k_smhost=$(key_of 0x0002c90300000005)
k_host1=$(key_of 0x0002c90300000009)
k_sw1=$(key_of 0x0011750000000001)
k_sw2=$(key_of 0x0011750000000002)
# jget EXPR: a Python expression over d, smctl status --json
jget() {
	ctl --json status >st.json || true
	python3 -c 'import json, sys; d = json.load(open("st.json")); print(eval(sys.argv[1]))' "$1"
}
# pinfo HOST PATH PORT [KEY]: "M_Key ProtectBits LeasePeriod Violations State" by smpquery
pinfo() {
	SIM_HOST=$1 sim_run smpquery -K ${4:+-y "$4"} -D portinfo "$2" "$3" 2>/dev/null | awk -F'[.]+' '
		/^Mkey:/ { k = $2 } /^ProtectBits:/ { p = $2 } /^MkeyLeasePeriod:/ { l = $2 }
		/^MkeyViolations:/ { v = $2 } /^LinkState:/ { s = $2 }
		END { if (s != "") print k, p, l, v, s }'
}
# expect WHAT GOT WANT
expect() {
	if [ "$2" = "$3" ]; then ok "$1: $2"; else bad "$1: '$2', want '$3'"; fi
}
# Fields 1-3 (M_Key ProtectBits LeasePeriod) of pinfo
keyfields() { pinfo "$@" | cut -d' ' -f1-3; }

SIM_IBSIM_PRELOAD=$tmp/sma_shim.so sim_start net >/dev/null 2>&1
check grep -q "^load nodes=4" sma.log

# 1. m_key set: each port holds its own key, ProtectBits 1, lease 3 s
printf 'sweep_interval = 0\nm_key = %s\nm_key_lease_period = 3\n' "$secret" >conf1
chmod 600 conf1
smd_start conf1 "$tmp/db" "$tmp/out1"
check wait_for "$tmp/out1" "subnet UP" 1
# Before any query here: smd never showed a port another port's key (the shim logs each key a port saw first)
n_seen=$(grep -c "^key-seen .*from=smhost" sma.log || true)
n_right=0
for pk in "sw-01 port=0 .* key=$k_sw1" "sw-02 port=0 .* key=$k_sw2" \
	  "smhost port=1 .* key=$k_smhost" "host-0001 port=1 .* key=$k_host1"; do
	grep -q "^key-seen node=$pk from=smhost" sma.log && n_right=$((n_right + 1))
done
expect "keys smd showed the ports (right ones)" "$n_seen ($n_right)" "4 (4)"

expect "smhost's CA port, read with its key" "$(keyfields smhost 0 1 "$k_smhost")" \
	"$k_smhost 1 3"
expect "sw-01 (port 0), read with its key" "$(keyfields smhost 0,1 0 "$k_sw1")" "$k_sw1 1 3"
expect "sw-02 (port 0), read with its key" "$(keyfields smhost 0,1,2 0 "$k_sw2")" "$k_sw2 1 3"
expect "host-0001's CA port, read with its key" "$(keyfields smhost 0,1,2,1 1 "$k_host1")" \
	"$k_host1 1 3"
# Each key is the port's own: no two ports share one
check test "$(printf '%s\n' "$k_smhost" "$k_host1" "$k_sw1" "$k_sw2" | sort -u | wc -l)" = 4
expect "sw-02 read without a key (level 1 hides it)" "$(keyfields host-0001 0,1 0)" "0x0000000000000000 1 3"
expect "host-0001 read by another host without a key" "$(keyfields smhost 0,1,2,1 1)" "0x0000000000000000 1 3"
check grep -q "^m_key: set, M_KeyProtectBits 1, M_KeyLeasePeriod 3 s" <(ctl status)
# 2. Another host's Set without the key: refused, reported, nothing changed
before=$(pinfo smhost 0,1 0 "$k_sw1")
SIM_HOST=host-0001 sim_run "$ROGUE" mkey set 0,1,3 0 0 0xbadbadbad 0 0 >rogue2 2>&1 || true
cat rogue2
check grep -q "^get: mkey 0x0000000000000000 protect 1 lease 3" rogue2
check grep -q "^set: no answer" rogue2
check grep -q "^violation node=sw-01 port=0 .* method=0x02 attr=0x0015 .*from=host-0001" sma.log
sw1="sw-01 port 0 (GUID 0x0011750000000001) (LID [0-9]*)"
h1="host-0001 port 1 (GUID 0x0002c90300000009)"
check wait_for "$tmp/out1" "Bad M_Key trap: $sw1 refused a Set of PortInfo (modifier 0x00000000)\
 from $h1, by directed route (2 hops) with no M_Key" 1
after=$(pinfo smhost 0,1 0 "$k_sw1")
expect "sw-01 after the refused Set: key, bits, lease, state" "$(echo "$after" | cut -d' ' -f1-3,5)" \
	"$(echo "$before" | cut -d' ' -f1-3,5)"
expect "sw-01's violations, after" "$(echo "$after" | cut -d' ' -f4)" \
	"$(($(echo "$before" | cut -d' ' -f4) + 1))"
# smd read sw-01 with its key at once: the lease the violation started is stopped
check wait_for sma.log "^lease-stopped node=sw-01 port=0" 1
ctl status >st2
check grep -q "^bad_mkey_traps: 1 (0 about smd's own SMPs), 1 ports read to stop a lease" st2
check grep -q "^bad_mkey_last: .* sw-01 port 0 .* from host-0001 port 1" st2
expect "smctl --json: m_key set, bits, lease, traps" \
	"$(jget '[d["m_key"][k] for k in ("set", "protect_bits", "lease_period", "bad_mkey_traps")]')" \
	"[True, 1, 3, 1]"
# A Bad M_Key trap is no reason to sweep
check grep -q "^sweeps: 1 heavy" st2
check smd_stop

# 3. Restarted with ProtectBits 2, then again: every port managed at level 2
printf 'sweep_interval = 0\nm_key = %s\nm_key_lease_period = 3\nm_key_protect_bits = 2\n' \
	"$secret" >conf3
chmod 600 conf3
smd_start conf3 "$tmp/db" "$tmp/out3"
check wait_for "$tmp/out3" "subnet UP" 1
check smd_stop
expect "sw-02 at level 2, read with its key" "$(keyfields host-0001 0,1 0 "$k_sw2")" "$k_sw2 2 3"
expect "sw-02 at level 2, read without a key" "$(pinfo host-0001 0,1 0)" ""
viol=$(grep -c "^violation" sma.log || true)
smd_start conf3 "$tmp/db" "$tmp/out3b"
check wait_for "$tmp/out3b" "subnet UP" 1
check grep -q "^nodes: 4" <(ctl status)
check grep -q "^mkey_unknown: 0" <(ctl status)
expect "violations by smd's restarts" "$(grep -c "^violation" sma.log)" "$viol"
# It still sets ports: host-0001's cable goes down and up, smd activates it again
sim_console 'Unlink "host-0001"[1]'
sim_console 'Link "host-0001"[1] "sw-02"[1]'
check wait_for "$tmp/out3b" "subnet UP" 2
for _ in $(seq 100); do
	[ "$(pinfo smhost 0,1,2,1 1 "$k_host1" | cut -d' ' -f5)" = Active ] && break
	sleep 0.1
done
expect "host-0001 after its cable came back" "$(pinfo smhost 0,1,2,1 1 "$k_host1" | cut -d' ' -f1,2,5)" \
	"$k_host1 2 Active"
expect "violations by smd after the relink" "$(grep -c "^violation" sma.log)" "$viol"

# 4. A foreign key with a 3 s lease: smd reports it and takes the port back
SIM_HOST=host-0001 sim_run "$ROGUE" mkey set 0,1 0 "$k_sw2" 0xf0f0f0f0 2 3 >rogue4 2>&1 || true
cat rogue4
check grep -q "^set: mkey 0x00000000f0f0f0f0 protect 2 lease 3" rogue4
ctl resweep >/dev/null
check wait_for "$tmp/out3b" "M_Key unknown: sw-02 port 0 (GUID 0x0011750000000002) does not take smd's M_Key" 1
check grep -q "^mkey_unknown: 1" <(ctl status)
expect "smctl --json: the port with an unknown key" \
	"$(jget '[(u["guid"], u["read_again_s"] is not None) for u in d["m_key"]["unknown"]]')" \
	"[('0x0011750000000002', True)]"
check wait_for "$tmp/out3b" "M_Key: took sw-02 port 0 (GUID 0x0011750000000002) back after its lease ran out" 1
check grep -q "^lease-expired node=sw-02 port=0" sma.log
expect "sw-02 taken back, read with smd's key" "$(keyfields host-0001 0,1 0 "$k_sw2")" \
	"$k_sw2 2 3"
# Back to the whole fabric, up (polled: the sweep the take-back asks for)
whole() { ctl status >st4 && grep -q "^nodes: 4" st4 && grep -q "^subnet: up" st4; }
for _ in $(seq 300); do whole && break; sleep 0.1; done
check whole
check grep -q "^mkey_unknown: 0" st4
# smd showed every port its key all along: it never sent M_Key 0 to a port holding one
expect "smd's SMPs refused for M_Key 0" "$(grep -c "^violation .*key=0x0000000000000000 from=smhost" sma.log)" 0
expect "ports whose keys smd got wrong" \
	"$(grep "^violation .*from=smhost" sma.log | grep -v "node=sw-02 port=0" | grep -c .)" 0
check grep -Eq "^bad_mkey_traps: .*ports taken over: [1-9][0-9]* \([1-9][0-9]* after their lease ran out\)" st4

# 4b. A new m_key by SIGHUP: every port moves from its old key to its new one, at level 2
secret2=0x0ddba11c0ffee000
printf 'sweep_interval = 0\nm_key = %s\nm_key_lease_period = 3\nm_key_protect_bits = 2\n' \
	"$secret2" >conf3
viol=$(grep -c "^violation .*from=smhost" sma.log || true)
kill -HUP "$smd_pid"
check wait_for "$tmp/out3b" "M_Key: m_key changed: 4 ports move from the old keys to their new ones" 1
check wait_for "$tmp/out3b" "M_Key: .* held the previous m_key's key: it holds smd's key now" 4
k2() { "$ROGUE" mkey derive "$secret2" "$1"; }
expect "smhost after SIGHUP" "$(keyfields smhost 0 1 "$(k2 0x0002c90300000005)")" \
	"$(k2 0x0002c90300000005) 2 3"
expect "sw-01 after SIGHUP" "$(keyfields host-0001 0,1,3 0 "$(k2 0x0011750000000001)")" \
	"$(k2 0x0011750000000001) 2 3"
expect "sw-02 after SIGHUP" "$(keyfields host-0001 0,1 0 "$(k2 0x0011750000000002)")" \
	"$(k2 0x0011750000000002) 2 3"
expect "host-0001 after SIGHUP" "$(keyfields smhost 0,1,2,1 1 "$(k2 0x0002c90300000009)")" \
	"$(k2 0x0002c90300000009) 2 3"
expect "sw-02 read with its old key" "$(pinfo host-0001 0,1 0 "$k_sw2")" ""
for _ in $(seq 300); do whole && break; sleep 0.1; done
check whole
expect "violations by smd while moving to the new keys" \
	"$(grep -c "^violation .*from=smhost" sma.log)" "$viol"

# 4c. A foreign key with lease 0: smd says it cannot take the port back
SIM_HOST=host-0001 sim_run "$ROGUE" mkey set 0 1 "$(k2 0x0002c90300000009)" 0xdead 1 0 \
	>rogue4c 2>&1 || true
check grep -q "^set: mkey 0x000000000000dead protect 1 lease 0" rogue4c
# (a light sweep reads switches only: a CA port's new key shows in a heavy one)
ctl resweep --heavy >/dev/null
check wait_for "$tmp/out3b" "M_Key unknown: $h1 .* M_KeyLeasePeriod is 0: smd cannot take it back" 1
check grep -q "^mkey_unknown_port: $h1, lease period 0: cannot be taken back" <(ctl status)
expect "smctl --json: lease 0, never read again" \
	"$(jget '[(u["guid"], u["read_again_s"]) for u in d["m_key"]["unknown"]]')" \
	"[('0x0002c90300000009', None)]"
expect "host-0001 keeps the foreign key" "$(keyfields host-0001 0 1 0xdead)" "0x000000000000dead 1 0"
check smd_stop

# 5. No m_key: M_Key 0 on every SMP, the ports' keys cleared where smd can see them
sim_stop
rm -f sma.log db
SIM_IBSIM_PRELOAD=$tmp/sma_shim.so sim_start net >/dev/null 2>&1
printf 'sweep_interval = 0\n' >conf5
smd_start conf5 "$tmp/db" "$tmp/out5"
check wait_for "$tmp/out5" "subnet UP" 1
check grep -q "^m_key: none" <(ctl status)
expect "smctl --json without m_key" "$(jget 'd["m_key"]["set"], d["m_key"]["unknown"]')" \
	"(False, [])"
check smd_stop
expect "SMPs that carried an M_Key" "$(grep -c "^key-seen" sma.log)" 0
expect "Sets that wrote an M_Key field" "$(grep -c "^set " sma.log)" 0
expect "sw-02 without m_key" "$(keyfields host-0001 0,1 0)" "0x0000000000000000 0 0"
finish
