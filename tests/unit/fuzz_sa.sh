#!/bin/sh
# The SA fuzzer (issue 12) over its corpus (tests/fuzz/sa/clients.pcap,
# what real clients sent smd) on the k=4 fat-tree: a bounded,
# deterministic run for make check; the sanitizer build runs it under ASan
# and UBSan. FUZZ_SA_ITERS and FUZZ_SA_SEED make longer or other runs.
set -eu
srcdir=${srcdir:-.}
exec "${top_builddir:-.}/tests/unit/fuzz_sa" -n "${FUZZ_SA_ITERS:-20000}" \
	-s "${FUZZ_SA_SEED:-1}" "$srcdir"/tests/fuzz/sa/ft4.net "$srcdir"/tests/fuzz/sa/*.pcap
