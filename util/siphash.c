// SPDX-License-Identifier: MIT
#include "util/siphash.h"

static inline uint64_t rotl(uint64_t x, unsigned int b)
{
	return x << b | x >> (64 - b);
}

#define SIPROUND(v0, v1, v2, v3) do {					\
	v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);	\
	v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);	\
} while (0)

/* The key and the message words are little-endian, as the paper has them */
static uint64_t le64(const uint8_t *p, size_t n)
{
	uint64_t v = 0;

	for (size_t i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

uint64_t siphash24(uint64_t k0, uint64_t k1, const uint8_t *data, size_t len)
{
	uint64_t v0 = k0 ^ UINT64_C(0x736f6d6570736575), v1 = k1 ^ UINT64_C(0x646f72616e646f6d);
	uint64_t v2 = k0 ^ UINT64_C(0x6c7967656e657261), v3 = k1 ^ UINT64_C(0x7465646279746573);
	size_t full = len - len % 8;
	uint64_t m;

	for (size_t i = 0; i < full; i += 8) {
		m = le64(data + i, 8);
		v3 ^= m;
		SIPROUND(v0, v1, v2, v3);
		SIPROUND(v0, v1, v2, v3);
		v0 ^= m;
	}
	/* The last block: the remaining bytes, and the length in the top byte */
	m = le64(data + full, len % 8) | (uint64_t)(len & 0xff) << 56;
	v3 ^= m;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= m;
	v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}
