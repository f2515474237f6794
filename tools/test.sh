#!/bin/bash
# The whole test suite from a fresh clone on Debian 12, as root: install
# the packages, build twice (plain, and with ASan+UBSan), run every test in
# both builds (unit, config, and integration tests on the ibsim simulator).
#
#   tools/test.sh [--stress]
#
# --stress runs the same suite on an oversubscribed machine (stress-ng: four
# busy workers a core, for as long as the suite runs), as a busy CI machine
# may be: a test that passes only on a quiet machine depends on timing, and
# this finds it before CI does.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
stress=
case "${1:-}" in
--stress) stress=1 ;;
"") ;;
*) echo "usage: tools/test.sh [--stress]" >&2; exit 2 ;;
esac
"$top/tools/setup-debian.sh"
if [ -n "$stress" ]; then
	command -v stress-ng >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
		--no-install-recommends stress-ng >/dev/null
	stress-ng --cpu $((4 * $(nproc))) --quiet &
	stress_pid=$!
	trap 'kill "$stress_pid" 2>/dev/null; wait "$stress_pid" 2>/dev/null || true' EXIT
	echo "== stress: stress-ng --cpu $((4 * $(nproc))) (pid $stress_pid) runs beside the suite"
fi
if [ -f "$top/config.status" ]; then
	echo "test.sh: the source tree is configured in place; run 'make distclean' first" >&2
	exit 2
fi
rc=0
for variant in plain sanitizers; do
	dir="$top/build-$variant"
	args=()
	[ "$variant" = sanitizers ] && args=(--enable-sanitizers)
	echo "== build ($variant)"
	"$top/tools/build.sh" "$dir" "${args[@]}"
	echo "== test ($variant)"
	make -C "$dir" -j"$(nproc)" check || rc=1
done
# What failed, at the end where a truncated CI log still shows it: the
# test's own failed checks, then the tail of its log (automake's .trs
# files say ":test-result: FAIL")
for trs in "$top"/build-*/tests/*/*.trs; do
	grep -q "^:test-result: \(FAIL\|ERROR\|XPASS\)" "$trs" 2>/dev/null || continue
	log=${trs%.trs}.log
	echo "---- ${log#"$top"/}"
	grep -E "^(FAIL|not ok)" "$log" | head -n 20
	echo "-- last lines:"
	tail -n 30 "$log"
done
# One closing line over both builds, counted from automake's result files
count() { cat "$top"/build-*/tests/*/*.trs 2>/dev/null | grep -c "^:test-result: $1" || true; }
passed=$(count PASS)
failed=$(( $(count FAIL) + $(count ERROR) + $(count XPASS) ))
skipped=$(count SKIP)
[ "$rc" -eq 0 ] && [ "$failed" -gt 0 ] && rc=1
echo "test.sh: plain and ASan+UBSan builds${stress:+, machine oversubscribed by stress-ng}"
echo "$passed passed, $failed failed, $skipped skipped"
exit "$rc"
