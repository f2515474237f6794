#!/bin/bash
# Install what smd needs to build, run on the simulator and be tested, on
# Debian 12 (as root). Safe to run again.
set -euo pipefail
pkgs=(
	build-essential autoconf automake pkg-config groff-base
	libibumad-dev libibmad-dev libsqlite3-dev libsystemd-dev
	ibsim-utils infiniband-diags python3 sqlite3 valgrind
	tshark
	systemd
	# smd_exporter's HTTP server; curl scrapes it in the tests, setfacl
	# opens the control socket to it (t_exporter.sh), promtool checks the
	# pages and the dashboard's queries (prometheus: 19 MB, 96 MB installed;
	# on a host booted with systemd its postinst starts a Prometheus
	# server: systemctl disable --now prometheus if that is not wanted)
	libmicrohttpd-dev curl acl prometheus
	# scontrol: Slurm's own hostlist code judges smctl topology --slurm
	# (tests/sim/checkslurm.py; without it the test expands them alone)
	slurm-client
)
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
