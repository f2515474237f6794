#!/bin/sh
# The discovery fuzzer (issue 12) over its corpus (tests/fuzz/disc/*.net)
# and random fabrics: a bounded, deterministic run for make check; the
# sanitizer build runs it under ASan and UBSan. FUZZ_DISC_ITERS and
# FUZZ_DISC_SEED make longer or other runs.
set -eu
srcdir=${srcdir:-.}
exec "${top_builddir:-.}/tests/unit/fuzz_disc" -n "${FUZZ_DISC_ITERS:-300}" \
	-s "${FUZZ_DISC_SEED:-12}" "$srcdir"/tests/fuzz/disc/*.net
