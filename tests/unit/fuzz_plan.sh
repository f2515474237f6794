#!/bin/sh
# The cabling plan fuzzer (issue 21) over its corpus: what ibnetdiscover
# printed on a simulated fat-tree (tests/fuzz/plan/), smctl dump's golden
# files and the golden configurations' plan. A bounded, deterministic run
# for make check; the sanitizer build runs it under ASan and UBSan.
# FUZZ_PLAN_ITERS and FUZZ_PLAN_SEED make longer or other runs.
set -eu
srcdir=${srcdir:-.}
exec "${top_builddir:-.}/tests/unit/fuzz_plan" -n "${FUZZ_PLAN_ITERS:-20000}" \
	-s "${FUZZ_PLAN_SEED:-21}" "$srcdir"/tests/fuzz/plan/* "$srcdir"/tests/dump/*.ibnd \
	"$srcdir"/tests/config/good-cabling.plan
