#!/bin/bash
# The whole test suite from a fresh clone on Debian 12, as root: install
# the packages, build twice (plain, and with ASan+UBSan), run every test in
# both builds (unit, config, and integration tests on the ibsim simulator).
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
"$top/tools/setup-debian.sh"
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
	if ! make -C "$dir" -j"$(nproc)" check; then
		rc=1
		for log in "$dir"/tests/*/*.log; do
			grep -q "^FAIL\|^ERROR" "${log%.log}.trs" 2>/dev/null || continue
			echo "---- $log"
			tail -n 40 "$log"
		done
	fi
done
# One closing line over both builds, counted from automake's result files
count() { cat "$top"/build-*/tests/*/*.trs 2>/dev/null | grep -c "^:test-result: $1" || true; }
passed=$(count PASS)
failed=$(( $(count FAIL) + $(count ERROR) + $(count XPASS) ))
skipped=$(count SKIP)
[ "$rc" -eq 0 ] && [ "$failed" -gt 0 ] && rc=1
echo "test.sh: plain and ASan+UBSan builds"
echo "$passed passed, $failed failed, $skipped skipped"
exit "$rc"
