#!/bin/sh
# The smd.conf fuzzer (issue 12) over the golden configurations: a bounded,
# deterministic run for make check (FUZZ_CONFIG_ITERS, FUZZ_CONFIG_SEED for
# other runs).
set -eu
srcdir=${srcdir:-.}
exec "${top_builddir:-.}/tests/unit/fuzz_config" -n "${FUZZ_CONFIG_ITERS:-3000}" \
	-s "${FUZZ_CONFIG_SEED:-5}" "$srcdir"/tests/config/*.conf
