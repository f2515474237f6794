// SPDX-License-Identifier: MIT
/*
 * A deterministic fuzzer for the SMP codecs: random buffers, and valid
 * encoded SMPs with bit flips, truncation and random attribute ids, fed to
 * every decoder and to smp_check_response(). Each input sits in a heap block
 * of exactly its length so that AddressSanitizer (./configure
 * --enable-sanitizers) catches any read past it. Checks that decoding is
 * idempotent and that node descriptions are always safe to print.
 *
 * Usage: fuzz_smp [iterations [seed]]
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mad/wire.h"
#include "tests/unit/unit.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

static void rnd_fill(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)rnd();
}

static const uint16_t attrs[] = {
	SMP_ATTR_NODE_DESC, SMP_ATTR_NODE_INFO, SMP_ATTR_SWITCH_INFO, SMP_ATTR_GUID_INFO,
	SMP_ATTR_PORT_INFO, SMP_ATTR_PKEY_TABLE, SMP_ATTR_SL2VL_TABLE, SMP_ATTR_VL_ARB_TABLE,
	SMP_ATTR_LFT, SMP_ATTR_SM_INFO, SMP_ATTR_NOTICE,
};

/* Failures are counted, but only the first few are printed */
static unsigned int reported;
/* How much of the input got how far, so that a silent fuzzer shows */
static unsigned long n_decoded, n_matched, n_ni_valid;

#define FUZZ_CHECK(cond, iter) do {						\
	if (cond) {								\
		unit_passed++;							\
	} else {								\
		unit_failed++;							\
		if (reported++ < 20)						\
			fprintf(stderr, "%s:%d: iteration %lu: CHECK failed: %s\n",	\
				__FILE__, __LINE__, (unsigned long)(iter), #cond);	\
	}									\
} while (0)

/* A plausible request, and a plausible answer to it */
static void make_pair(struct smp *req, struct smp *resp)
{
	struct dr_path p = { 0 };
	uint16_t attr = attrs[rnd() % (sizeof(attrs) / sizeof(attrs[0]))];

	if (rnd() & 1) {
		p.hops = (uint8_t)(rnd() % (SMP_MAX_HOPS + 1));
		for (unsigned int i = 1; i <= p.hops; i++)
			p.port[i] = (uint8_t)(1 + rnd() % 36);
		smp_init_dr(req, MAD_METHOD_GET, attr, (uint32_t)(rnd() % 256), &p);
	} else {
		smp_init_lid(req, rnd() & 1 ? MAD_METHOD_GET : MAD_METHOD_SET, attr,
			     (uint32_t)(rnd() % 256));
	}
	req->hdr.tid = rnd();
	req->mkey = rnd() & 1 ? 0 : rnd();
	*resp = *req;
	resp->hdr.method = MAD_METHOD_GET_RESP;
	resp->hdr.tid = (rnd() << 32) | (uint32_t)req->hdr.tid;
	if (req->hdr.mgmt_class == MAD_CLASS_SMI_DR) {
		resp->hdr.direction = true;
		resp->hdr.hop_ptr = req->hdr.hop_cnt;
		memcpy(resp->return_path, req->initial_path, sizeof(resp->return_path));
	}
	rnd_fill(resp->data, sizeof(resp->data));
}

static bool printable(const struct node_desc *nd)
{
	size_t n = strnlen(nd->desc, sizeof(nd->desc));

	if (n >= sizeof(nd->desc))
		return false;	/* not terminated */
	for (size_t i = 0; i < n; i++) {
		uint8_t c = (uint8_t)nd->desc[i];

		/* Bytes >= 0x80 are UTF-8; control characters must be gone */
		if (c < 0x20 || c == 0x7f)
			return false;
	}
	return true;
}

/* Every attribute decoder on 64 bytes in a heap block of exactly 64 */
static void fuzz_attrs(const uint8_t *src, unsigned long iter)
{
	uint8_t *d = malloc(SMP_DATA_SIZE), out[SMP_DATA_SIZE];
	struct node_info ni, ni2;
	struct node_desc nd, nd2;
	struct switch_info si, si2;
	struct port_info pi, pi2;
	struct lft_block lb, lb2;
	int r;

	if (!d)
		abort();
	memcpy(d, src, SMP_DATA_SIZE);

	memset(&ni, 0, sizeof(ni));
	r = node_info_decode(d, &ni);
	FUZZ_CHECK(r == 0 || r == -EBADMSG, iter);
	n_ni_valid += r == 0;
	node_info_encode(&ni, out);
	memset(&ni2, 0, sizeof(ni2));
	FUZZ_CHECK(node_info_decode(out, &ni2) == r, iter);
	FUZZ_CHECK(!memcmp(&ni, &ni2, sizeof(ni)), iter);
	if (r == 0) {
		FUZZ_CHECK(ni.node_type >= NODE_TYPE_CA && ni.node_type <= NODE_TYPE_ROUTER, iter);
		FUZZ_CHECK(ni.num_ports > 0 && ni.local_port <= ni.num_ports, iter);
		FUZZ_CHECK(ni.node_guid != 0, iter);
	}

	memset(&nd, 0x55, sizeof(nd));
	FUZZ_CHECK(node_desc_decode(d, &nd) == 0, iter);
	FUZZ_CHECK(printable(&nd), iter);
	node_desc_encode(&nd, out);
	memset(&nd2, 0x55, sizeof(nd2));
	FUZZ_CHECK(node_desc_decode(out, &nd2) == 0, iter);
	FUZZ_CHECK(!strcmp(nd.desc, nd2.desc), iter);

	memset(&si, 0, sizeof(si));
	FUZZ_CHECK(switch_info_decode(d, &si) == 0, iter);
	switch_info_encode(&si, out);
	memset(&si2, 0, sizeof(si2));
	FUZZ_CHECK(switch_info_decode(out, &si2) == 0, iter);
	FUZZ_CHECK(!memcmp(&si, &si2, sizeof(si)), iter);

	memset(&pi, 0, sizeof(pi));
	FUZZ_CHECK(port_info_decode(d, &pi) == 0, iter);
	port_info_encode(&pi, out);
	memset(&pi2, 0, sizeof(pi2));
	FUZZ_CHECK(port_info_decode(out, &pi2) == 0, iter);
	FUZZ_CHECK(!memcmp(&pi, &pi2, sizeof(pi)), iter);
	/* Every field fits the width it has on the wire */
	FUZZ_CHECK(pi.lmc <= 7 && pi.port_state <= 15 && pi.mkey_protect_bits <= 3, iter);
	FUZZ_CHECK(pi.link_round_trip_latency <= 0xffffff && pi.hoq_life <= 31, iter);
	FUZZ_CHECK(pi.link_speed_ext_enabled <= 31 && pi.vl_stall_count <= 7, iter);
	FUZZ_CHECK(mtu_to_bytes(pi.mtu_cap) <= 4096 && vl_cap_to_count(pi.vl_cap) <= 15, iter);

	lft_block_decode(d, &lb);
	lft_block_encode(&lb, out);
	FUZZ_CHECK(!memcmp(out, d, SMP_DATA_SIZE), iter);
	lft_block_decode(out, &lb2);
	FUZZ_CHECK(!memcmp(&lb, &lb2, sizeof(lb)), iter);

	free(d);
}

static void fuzz_one(unsigned long iter)
{
	uint8_t good[MAD_SIZE], *buf, out[MAD_SIZE], out2[MAD_SIZE];
	struct smp req, resp, s, s2;
	uint8_t mclass, method;
	uint64_t tid;
	size_t len;
	int r, mode = (int)(rnd() % 8);

	make_pair(&req, &resp);
	if (smp_encode(&resp, good) < 0)
		abort();
	len = MAD_SIZE;

	switch (mode) {
	case 0:		/* noise of any length */
		len = (size_t)(rnd() % (MAD_SIZE + 64));
		rnd_fill(good, sizeof(good));
		break;
	case 1:		/* noise with an SMP header, so that it gets past the first checks */
		rnd_fill(good, sizeof(good));
		good[0] = 1;
		good[1] = rnd() & 1 ? MAD_CLASS_SMI : MAD_CLASS_SMI_DR;
		good[2] = 1;
		break;
	case 2:		/* a valid answer truncated, or one byte too long */
		len = rnd() & 1 ? (size_t)(rnd() % MAD_SIZE) : MAD_SIZE + 1;
		break;
	case 3:		/* a random attribute id */
		good[16] = (uint8_t)rnd();
		good[17] = (uint8_t)rnd();
		break;
	case 4:		/* a random hop count and pointer */
		good[6] = (uint8_t)rnd();
		good[7] = (uint8_t)rnd();
		break;
	default: {	/* 1..8 bit flips, anywhere or in the header */
		int flips = 1 + (int)(rnd() % 8);
		size_t span = rnd() & 1 ? 64 : MAD_SIZE;

		for (int i = 0; i < flips; i++) {
			size_t bit = (size_t)(rnd() % (span * 8));

			good[bit / 8] ^= (uint8_t)(0x80 >> (bit % 8));
		}
		if (rnd() % 4 == 0)
			len = (size_t)(rnd() % (MAD_SIZE + 1));
		break;
	}
	}

	/* Exactly len bytes, so any over-read is caught */
	buf = malloc(len ? len : 1);
	if (!buf)
		abort();
	memcpy(buf, good, len < MAD_SIZE ? len : MAD_SIZE);
	if (len > MAD_SIZE)
		rnd_fill(buf + MAD_SIZE, len - MAD_SIZE);

	r = mad_peek(buf, len, &mclass, &method, &tid);
	FUZZ_CHECK(len >= 24 ? r == 0 : r == -EBADMSG, iter);
	if (r == 0)
		FUZZ_CHECK(mclass == buf[1] && method == buf[3], iter);

	memset(&s, 0x77, sizeof(s));
	r = smp_decode(buf, len, &s);
	FUZZ_CHECK(r == 0 || r == -EBADMSG, iter);
	if (len != MAD_SIZE)
		FUZZ_CHECK(r == -EBADMSG, iter);
	if (r == 0) {
		n_decoded++;
		FUZZ_CHECK(s.hdr.base_version == 1 && s.hdr.class_version == 1, iter);
		FUZZ_CHECK(s.hdr.mgmt_class == MAD_CLASS_SMI ||
			   s.hdr.mgmt_class == MAD_CLASS_SMI_DR, iter);
		FUZZ_CHECK(s.hdr.hop_cnt <= SMP_MAX_HOPS, iter);
		/* Idempotent: what decodes re-encodes, and decodes to the same */
		FUZZ_CHECK(smp_encode(&s, out) == 0, iter);
		memset(&s2, 0x33, sizeof(s2));
		FUZZ_CHECK(smp_decode(out, MAD_SIZE, &s2) == 0, iter);
		FUZZ_CHECK(!memcmp(&s, &s2, sizeof(s)), iter);
		FUZZ_CHECK(smp_encode(&s2, out2) == 0, iter);
		FUZZ_CHECK(!memcmp(out, out2, MAD_SIZE), iter);
		/* Only what the decoder ignores may differ from the input */
		FUZZ_CHECK(!memcmp(out, buf, 6) && !memcmp(out + 8, buf + 8, 10), iter);
		FUZZ_CHECK(!memcmp(out + 20, buf + 20, 12), iter);
		FUZZ_CHECK(!memcmp(out + 64, buf + 64, 64), iter);
		if (s.hdr.mgmt_class == MAD_CLASS_SMI_DR) {
			FUZZ_CHECK(out[6] == buf[6] && out[7] == buf[7], iter);
			FUZZ_CHECK(!memcmp(out + 32, buf + 32, 4), iter);
			FUZZ_CHECK(!memcmp(out + 128, buf + 128, 128), iter);
		}

		r = smp_check_response(&req, &s);
		FUZZ_CHECK(r == 0 || r == -EPROTO, iter);
		if (r == 0) {
			n_matched++;
			FUZZ_CHECK(s.hdr.method == MAD_METHOD_GET_RESP, iter);
			FUZZ_CHECK(s.hdr.attr_id == req.hdr.attr_id, iter);
			FUZZ_CHECK(s.hdr.attr_mod == req.hdr.attr_mod, iter);
			FUZZ_CHECK((uint32_t)s.hdr.tid == (uint32_t)req.hdr.tid, iter);
		}
		/* A request never answers itself */
		FUZZ_CHECK(smp_check_response(&s, &s) == -EPROTO ||
			   s.hdr.method == MAD_METHOD_GET_RESP, iter);
		fuzz_attrs(s.data, iter);
	} else {
		if (len >= MAD_SIZE)
			fuzz_attrs(buf + 64, iter);
	}
	/* The untouched answer always matches */
	if (mode != 0 && mode != 1)
		FUZZ_CHECK(smp_check_response(&req, &resp) == 0, iter);
	free(buf);
}

int main(int argc, char **argv)
{
	unsigned long iters = argc > 1 ? strtoul(argv[1], NULL, 0) : 200000;

	rng_state = argc > 2 ? strtoull(argv[2], NULL, 0) : UINT64_C(0x5eed5eed12345678);
	if (!rng_state)
		rng_state = 1;
	for (unsigned long i = 0; i < iters; i++)
		fuzz_one(i);
	fprintf(stderr, "%lu iterations: %lu decoded, %lu matched their request, "
		"%lu valid NodeInfo\n", iters, n_decoded, n_matched, n_ni_valid);
	/* The mutations must leave enough valid input to reach the deep checks */
	CHECK(n_decoded > iters / 4);
	CHECK(n_matched > iters / 10);
	return unit_report();
}
