/* SPDX-License-Identifier: MIT */
/*
 * SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
 * 2012): a keyed hash for authenticating short messages, here the SMInfo
 * SM_Key field (smd/sm.c). Written from the paper; checked against its
 * test vector in tests/unit/test_sm.c.
 */
#ifndef SMD_UTIL_SIPHASH_H
#define SMD_UTIL_SIPHASH_H

#include <stddef.h>
#include <stdint.h>

uint64_t siphash24(uint64_t k0, uint64_t k1, const uint8_t *data, size_t len);

#endif
