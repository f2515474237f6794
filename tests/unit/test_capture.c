// SPDX-License-Identifier: MIT
/*
 * The capture module: header encoders against hand-assembled bytes, both
 * CRCs against bit-serial references written from the spec's description
 * (not from the table-driven code), the variant/invariant split of IBA
 * 7.8, and the writer end to end (pcap/ERF bytes parsed here by hand,
 * filter, rotation, backpressure, flush).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mad/capture.h"
#include "unit.h"

/* ---- references ---------------------------------------------------------- */

/*
 * Bit-serial CRCs as the spec describes the shift register: the polynomial
 * in its normal (unreflected) form, each byte fed least significant bit
 * first, register seeded with ones; the result is the register bit-reversed
 * and complemented. Deliberately unlike capture.c's reflected tables.
 */
static uint32_t ref_crc32(const uint8_t *p, size_t len)
{
	uint32_t reg = 0xffffffffu, out = 0;

	for (size_t i = 0; i < len; i++) {
		for (int b = 0; b < 8; b++) {
			unsigned int in = (p[i] >> b) & 1;
			unsigned int fb = (reg >> 31) ^ in;

			reg <<= 1;
			if (fb)
				reg ^= 0x04c11db7u;
		}
	}
	for (int b = 0; b < 32; b++)
		out |= ((reg >> b) & 1u) << (31 - b);
	return ~out;
}

static uint16_t ref_crc16(const uint8_t *p, size_t len)
{
	uint16_t reg = 0xffff, out = 0;

	for (size_t i = 0; i < len; i++) {
		for (int b = 0; b < 8; b++) {
			unsigned int in = (p[i] >> b) & 1;
			unsigned int fb = ((reg >> 15) & 1) ^ in;

			reg = (uint16_t)(reg << 1);
			if (fb)
				reg ^= 0x100b;
		}
	}
	for (int b = 0; b < 16; b++)
		out |= (uint16_t)(((reg >> b) & 1u) << (15 - b));
	return (uint16_t)~out;
}

/* The ICRC by the book: copy, set LRH.VL and BTH.Resv8a to ones, CRC-32 */
static uint32_t ref_icrc(const uint8_t *pkt, size_t len)
{
	uint8_t *copy = malloc(len);
	uint32_t crc;

	memcpy(copy, pkt, len);
	copy[0] |= 0xf0;	/* LRH bits 31:28 */
	copy[8 + 4] = 0xff;	/* BTH byte 4 */
	crc = ref_crc32(copy, len);
	free(copy);
	return crc;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint16_t le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t be24(const uint8_t *p)
{
	return (uint32_t)p[0] << 16 | (uint32_t)p[1] << 8 | p[2];
}

static uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static unsigned int rnd_state = 12345;

static uint8_t rnd8(void)
{
	rnd_state = rnd_state * 1103515245u + 12345u;
	return (uint8_t)(rnd_state >> 16);
}

static void make_mad(uint8_t mad[MAD_SIZE], uint8_t mclass, uint8_t method, uint16_t attr,
		     uint32_t tid)
{
	for (int i = 0; i < MAD_SIZE; i++)
		mad[i] = rnd8();
	mad[0] = 1;
	mad[1] = mclass;
	mad[2] = mclass == MAD_CLASS_SA ? 2 : 1;
	mad[3] = method;
	memset(mad + 8, 0, 8);
	mad[12] = (uint8_t)(tid >> 24);
	mad[13] = (uint8_t)(tid >> 16);
	mad[14] = (uint8_t)(tid >> 8);
	mad[15] = (uint8_t)tid;
	mad[16] = (uint8_t)(attr >> 8);
	mad[17] = (uint8_t)attr;
}

/* ---- CRCs ---------------------------------------------------------------- */

static void test_crc_check_values(void)
{
	static const uint8_t digits[] = "123456789";

	/* The catalogue check value of CRC-32 (IEEE 802.3): both agree with it */
	CHECK_EQ(ref_crc32(digits, 9), 0xcbf43926u);
	CHECK_EQ(capture_crc32(0, digits, 9), 0xcbf43926u);
	CHECK_EQ(capture_crc16(0, digits, 9), ref_crc16(digits, 9));
	CHECK_EQ(capture_crc32(0, NULL, 0), 0);
	CHECK_EQ(capture_crc16(0, NULL, 0), 0);
	/* Continuation: a CRC fed back in equals one pass */
	CHECK_EQ(capture_crc32(capture_crc32(0, digits, 4), digits + 4, 5), 0xcbf43926u);
	CHECK_EQ(capture_crc16(capture_crc16(0, digits, 3), digits + 3, 6),
		 capture_crc16(0, digits, 9));
}

static void test_crc_random(void)
{
	uint8_t buf[600];

	/* Every length 0..600 (all slicing remainders), random contents */
	for (size_t len = 0; len <= sizeof(buf); len++) {
		for (size_t i = 0; i < len; i++)
			buf[i] = rnd8();
		if (capture_crc32(0, buf, len) != ref_crc32(buf, len) ||
		    capture_crc16(0, buf, len) != ref_crc16(buf, len)) {
			CHECK(!"table CRC differs from the bit-serial reference");
			fprintf(stderr, "  at length %zu\n", len);
			return;
		}
	}
	CHECK(1);
}

/* ---- headers ------------------------------------------------------------- */

static void test_lrh(void)
{
	struct ib_lrh h = { .vl = 15, .lver = 0, .sl = 3, .lnh = 2, .dlid = 0x1234,
			    .pkt_len = 72, .slid = 0xffff }, d;
	static const uint8_t want[8] = { 0xf0, 0x32, 0x12, 0x34, 0x00, 0x48, 0xff, 0xff };
	uint8_t out[8];

	capture_lrh_encode(&h, out);
	CHECK(!memcmp(out, want, 8));
	capture_lrh_decode(out, &d);
	CHECK_EQ(d.vl, 15);
	CHECK_EQ(d.sl, 3);
	CHECK_EQ(d.lnh, 2);
	CHECK_EQ(d.dlid, 0x1234);
	CHECK_EQ(d.pkt_len, 72);
	CHECK_EQ(d.slid, 0xffff);
	/* Fields are cut to their widths: PktLen is 11 bits, LVer 4 */
	h.pkt_len = 0xffff;
	h.lver = 0x1f;
	h.lnh = 0x7;
	capture_lrh_encode(&h, out);
	CHECK_EQ(out[0], 0xff);
	CHECK_EQ(out[1], 0x33);
	CHECK_EQ(out[4], 0x07);
	CHECK_EQ(out[5], 0xff);
}

static void test_bth_deth(void)
{
	struct ib_bth b = { .opcode = IB_OPCODE_UD_SEND_ONLY, .se = true, .m = false,
			    .pad_cnt = 2, .tver = 0, .pkey = 0xffff, .resv8a = 0,
			    .dest_qp = 0x000001, .ack_req = true, .psn = 0xabcdef }, bd;
	static const uint8_t want_bth[12] = { 0x64, 0xa0, 0xff, 0xff, 0x00, 0x00, 0x00, 0x01,
					      0x80, 0xab, 0xcd, 0xef };
	struct ib_deth e = { .qkey = IB_QKEY_GSI, .src_qp = 0x123456 }, ed;
	static const uint8_t want_deth[8] = { 0x80, 0x01, 0x00, 0x00, 0x00, 0x12, 0x34, 0x56 };
	uint8_t out[12];

	capture_bth_encode(&b, out);
	CHECK(!memcmp(out, want_bth, 12));
	capture_bth_decode(out, &bd);
	CHECK_EQ(bd.opcode, 0x64);
	CHECK(bd.se && !bd.m && bd.ack_req);
	CHECK_EQ(bd.pad_cnt, 2);
	CHECK_EQ(bd.pkey, 0xffff);
	CHECK_EQ(bd.dest_qp, 1);
	CHECK_EQ(bd.psn, 0xabcdef);
	b.psn = 0x1abcdef;	/* 24 bits */
	capture_bth_encode(&b, out);
	CHECK_EQ(be24(out + 9), 0xabcdef);

	capture_deth_encode(&e, out);
	CHECK(!memcmp(out, want_deth, 8));
	capture_deth_decode(out, &ed);
	CHECK_EQ(ed.qkey, IB_QKEY_GSI);
	CHECK_EQ(ed.src_qp, 0x123456);
}

static void sample_frame(struct capture_frame *f)
{
	memset(f, 0, sizeof(*f));
	f->lrh = (struct ib_lrh){ .vl = 15, .sl = 0, .lnh = IB_LNH_IBA_LOCAL, .dlid = 0xffff,
				  .slid = 0xffff };
	f->bth = (struct ib_bth){ .opcode = IB_OPCODE_UD_SEND_ONLY, .pkey = 0xffff,
				  .dest_qp = 0, .psn = 7 };
	f->deth = (struct ib_deth){ .qkey = 0, .src_qp = 0 };
	make_mad(f->mad, MAD_CLASS_SMI_DR, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0x10001);
}

static void test_packet(void)
{
	uint8_t pkt[IB_MAD_PKT_SIZE];
	struct capture_frame f, g;
	const size_t icrc_at = IB_MAD_PKT_HDRS + MAD_SIZE;

	sample_frame(&f);
	capture_packet_build(&f, pkt);
	CHECK_EQ(IB_MAD_PKT_SIZE, 290);
	/* PktLen: LRH through ICRC in words = 288 / 4 */
	CHECK_EQ(be16(pkt + 4) & 0x7ff, 72);
	CHECK(!memcmp(pkt + IB_MAD_PKT_HDRS, f.mad, MAD_SIZE));
	/* Both CRCs by the independent references, least significant byte first */
	CHECK_EQ(le32(pkt + icrc_at), ref_icrc(pkt, icrc_at));
	CHECK_EQ(le16(pkt + icrc_at + 4), ref_crc16(pkt, icrc_at + 4));
	/*
	 * Residues: a CRC run over data followed by its own CRC (sent least
	 * significant byte first) ends on the polynomial's fixed residue:
	 * 0xdebb20e3 in the register for CRC-32, i.e. 0x2144df1c complemented.
	 */
	uint8_t *masked = malloc(IB_MAD_PKT_SIZE);

	memcpy(masked, pkt, IB_MAD_PKT_SIZE);
	masked[0] |= 0xf0;
	masked[12] = 0xff;
	CHECK_EQ(ref_crc32(masked, icrc_at + 4), 0x2144df1cu);
	free(masked);
	uint16_t res16 = ref_crc16(pkt, IB_MAD_PKT_SIZE);

	CHECK_EQ(capture_packet_parse(pkt, sizeof(pkt), &g), 0);
	CHECK(g.icrc_ok && g.vcrc_ok);
	CHECK_EQ(g.lrh.vl, 15);
	CHECK_EQ(g.lrh.pkt_len, 72);
	CHECK_EQ(g.bth.psn, 7);
	CHECK(!memcmp(g.mad, f.mad, MAD_SIZE));

	/* Another packet: the CRC-16 residue is the same constant */
	f.mad[40] ^= 0x5a;
	f.lrh.dlid = 3;
	capture_packet_build(&f, pkt);
	CHECK_EQ(ref_crc16(pkt, IB_MAD_PKT_SIZE), res16);

	CHECK_EQ(capture_packet_parse(pkt, sizeof(pkt) - 1, &g), -EBADMSG);
	pkt[1] = (uint8_t)((pkt[1] & ~3) | 3);	/* LNH = IBA global: not ours */
	CHECK_EQ(capture_packet_parse(pkt, sizeof(pkt), &g), -EBADMSG);
}

/* A switch may change VL and Resv8a: the ICRC stays, only the VCRC changes */
static void test_variant_fields(void)
{
	uint8_t a[IB_MAD_PKT_SIZE], b[IB_MAD_PKT_SIZE];
	struct capture_frame f, g;
	const size_t icrc_at = IB_MAD_PKT_HDRS + MAD_SIZE;

	sample_frame(&f);
	f.lrh.vl = 0;
	capture_packet_build(&f, a);

	f.lrh.vl = 7;
	f.bth.resv8a = 0x5c;
	capture_packet_build(&f, b);
	CHECK(a[0] != b[0] && a[12] != b[12]);
	CHECK_EQ(le32(a + icrc_at), le32(b + icrc_at));
	CHECK(le16(a + icrc_at + 4) != le16(b + icrc_at + 4));

	/* Edit a's variant fields in place, as a switch would, and fix the VCRC only */
	a[0] = (uint8_t)((a[0] & 0x0f) | 0x70);
	a[12] = 0x5c;
	CHECK_EQ(capture_packet_parse(a, sizeof(a), &g), 0);
	CHECK(g.icrc_ok);
	CHECK(!g.vcrc_ok);
	uint16_t v = ref_crc16(a, icrc_at + 4);

	a[icrc_at + 4] = (uint8_t)v;
	a[icrc_at + 5] = (uint8_t)(v >> 8);
	CHECK(!memcmp(a, b, sizeof(a)));

	/* Invariant fields: SL, LIDs, P_Key, QPs, PSN, Q_Key and the MAD change the ICRC */
	static const size_t inv[] = { 1, 2, 3, 6, 7, 8, 10, 11, 15, 19, 20, 27, 28, 100, 283 };

	for (size_t i = 0; i < sizeof(inv) / sizeof(inv[0]); i++) {
		memcpy(a, b, sizeof(a));
		a[inv[i]] ^= 0x10;
		if (capture_icrc(a, icrc_at) == capture_icrc(b, icrc_at)) {
			CHECK(!"an invariant field did not change the ICRC");
			fprintf(stderr, "  byte %zu\n", inv[i]);
		}
		CHECK_EQ(capture_icrc(a, icrc_at), ref_icrc(a, icrc_at));
	}
}

static void test_classes(void)
{
	unsigned int m = 0;
	char buf[64];
	uint8_t mad[MAD_SIZE];

	CHECK_EQ(capture_parse_classes("smp,sa,trap", &m), 0);
	CHECK_EQ(m, CAPTURE_CLASS_SMP | CAPTURE_CLASS_SA | CAPTURE_CLASS_TRAP);
	CHECK_EQ(capture_parse_classes(" trap , smp ", &m), 0);
	CHECK_EQ(m, CAPTURE_CLASS_SMP | CAPTURE_CLASS_TRAP);
	CHECK_EQ(capture_parse_classes("all", &m), 0);
	CHECK_EQ(m, CAPTURE_CLASS_ALL);
	capture_format_classes(CAPTURE_CLASS_TRAP | CAPTURE_CLASS_SA, buf, sizeof(buf));
	CHECK(!strcmp(buf, "sa,trap"));
	capture_format_classes(CAPTURE_CLASS_ALL, buf, sizeof(buf));
	CHECK(!strcmp(buf, "all"));
	m = 99;
	CHECK_EQ(capture_parse_classes("", &m), -EINVAL);
	CHECK_EQ(capture_parse_classes("smp,", &m), -EINVAL);
	CHECK_EQ(capture_parse_classes("smp,,sa", &m), -EINVAL);
	CHECK_EQ(capture_parse_classes("smpx", &m), -EINVAL);
	CHECK_EQ(capture_parse_classes("smp sa", &m), -EINVAL);
	CHECK_EQ(m, 99);

	make_mad(mad, MAD_CLASS_SMI_DR, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 1);
	CHECK_EQ(capture_class_of(mad), CAPTURE_CLASS_SMP);
	make_mad(mad, MAD_CLASS_SMI, MAD_METHOD_TRAP, SMP_ATTR_NOTICE, 1);
	CHECK_EQ(capture_class_of(mad), CAPTURE_CLASS_TRAP);
	make_mad(mad, MAD_CLASS_SMI, MAD_METHOD_TRAP_REPRESS, SMP_ATTR_NOTICE, 1);
	CHECK_EQ(capture_class_of(mad), CAPTURE_CLASS_TRAP);
	make_mad(mad, MAD_CLASS_SA, 0x92, 0x11, 1);
	CHECK_EQ(capture_class_of(mad), CAPTURE_CLASS_SA);
	make_mad(mad, 0x04, MAD_METHOD_GET, 0x12, 1);
	CHECK_EQ(capture_class_of(mad), CAPTURE_CLASS_OTHER);
}

/* ---- the writer ---------------------------------------------------------- */

static char tmpdir[] = "/tmp/test_capture.XXXXXX";

static void path_in_tmp(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tmpdir, name);
}

static void test_writer_bytes(void)
{
	char path[256];
	struct capture_cfg cfg = { .path = path, .port_lid = 0 };
	uint16_t lid = 0;
	struct capture *c;
	uint8_t mad[4][MAD_SIZE];
	uint8_t *buf;
	size_t len;

	path_in_tmp(path, sizeof(path), "bytes.pcap");
	cfg.local_lid = &lid;
	cfg.port_lid = 9;
	CHECK_EQ(capture_open(&cfg, &c), 0);
	/* A DR Get out, its answer in, a LID-routed Set once our LID is known, an SA query in */
	make_mad(mad[0], MAD_CLASS_SMI_DR, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 0x11);
	make_mad(mad[1], MAD_CLASS_SMI_DR, MAD_METHOD_GET_RESP, SMP_ATTR_NODE_INFO, 0x11);
	make_mad(mad[2], MAD_CLASS_SMI, MAD_METHOD_SET, SMP_ATTR_PORT_INFO, 0x12);
	make_mad(mad[3], MAD_CLASS_SA, 0x12, 0x11, 0x13);
	capture_sent(c, mad[0], LID_PERMISSIVE, 0);
	capture_received(c, mad[1], MAD_SIZE, 0, 0, 0, 0);
	lid = 1;
	capture_sent(c, mad[2], 0x22, 0);
	capture_received(c, mad[3], MAD_SIZE, 0x33, 0x1, 4, 0);
	CHECK_EQ(capture_close(c), 0);

	buf = (uint8_t *)unit_read_file(path, &len);
	CHECK(buf != NULL);
	if (!buf)
		return;
	CHECK_EQ(len, 24 + 4 * (16 + 16 + 290));
	/* pcap header, little endian, link type ERF */
	CHECK_EQ(le32(buf), 0xa1b2c3d4u);
	CHECK_EQ(le16(buf + 4), 2);
	CHECK_EQ(le16(buf + 6), 4);
	CHECK_EQ(le32(buf + 20), 197);
	for (int i = 0; i < 4 && len >= 24 + 4 * 322u; i++) {
		const uint8_t *rec = buf + 24 + i * 322;
		const uint8_t *erf = rec + 16, *pkt = erf + 16;
		const uint8_t *lrh = pkt, *bth = pkt + 8, *deth = pkt + 20;
		bool in = i == 1 || i == 3;
		bool smi = i < 3;

		CHECK_EQ(le32(rec + 8), 306);	/* incl_len */
		CHECK_EQ(le32(rec + 12), 306);	/* orig_len */
		/* ERF: the pcap time and the ERF time agree to the microsecond */
		uint64_t ts = (uint64_t)le32(erf) | (uint64_t)le32(erf + 4) << 32;

		CHECK_EQ(ts >> 32, le32(rec));
		CHECK(llabs((long long)(((ts & 0xffffffffu) * 1000000u) >> 32) -
			    (long long)le32(rec + 4)) <= 1);
		CHECK_EQ(erf[8], 21);
		CHECK_EQ(erf[9], 0x04 | (in ? 0x01 : 0));
		CHECK_EQ(be16(erf + 10), 306);	/* rlen */
		CHECK_EQ(be16(erf + 14), 290);	/* wlen */
		/* LRH */
		CHECK_EQ(lrh[0] >> 4, smi ? 15 : 0);
		CHECK_EQ(lrh[1] & 3, 2);
		CHECK_EQ(be16(lrh + 4) & 0x7ff, 72);
		/* BTH: UD SEND Only, default P_Key, PSN counts frames */
		CHECK_EQ(bth[0], 0x64);
		CHECK_EQ(be16(bth + 2), 0xffff);
		CHECK_EQ(be24(bth + 9), (uint32_t)i);
		CHECK(!memcmp(pkt + 28, mad[i], MAD_SIZE));
		CHECK_EQ(le32(pkt + 284), ref_icrc(pkt, 284));
		CHECK_EQ(le16(pkt + 288), ref_crc16(pkt, 288));
		switch (i) {
		case 0:	/* DR out: permissive both ways, QP0 -> QP0, Q_Key 0 */
		case 1:
			CHECK_EQ(be16(lrh + 2), 0xffff);
			CHECK_EQ(be16(lrh + 6), 0xffff);
			CHECK_EQ(be24(bth + 5), 0);
			CHECK_EQ(be32(deth), 0);
			CHECK_EQ(be24(deth + 5), 0);
			break;
		case 2:	/* LID routed from our LID, read when sent */
			CHECK_EQ(be16(lrh + 2), 0x22);
			CHECK_EQ(be16(lrh + 6), 1);
			break;
		case 3:	/* SA request in: from the client's LID and QP to our QP1 */
			CHECK_EQ(be16(lrh + 2), 1);
			CHECK_EQ(be16(lrh + 6), 0x33);
			CHECK_EQ(lrh[1] >> 4, 4);
			CHECK_EQ(be24(bth + 5), 1);
			CHECK_EQ(be32(deth), 0x80010000u);
			CHECK_EQ(be24(deth + 5), 1);
			break;
		}
	}
	free(buf);
}

static void test_writer_reader(void)
{
	char path[256];
	struct capture_cfg cfg = { .path = path, .port_lid = 5 };
	struct capture_reader *r;
	struct capture_stats st;
	struct capture_frame f;
	struct capture *c;
	uint8_t mad[MAD_SIZE];
	bool ib;
	int n = 0, got;
	const int total = 10000;	/* many batches: the caller waits for the writer */

	path_in_tmp(path, sizeof(path), "many.pcap");
	CHECK_EQ(capture_open(&cfg, &c), 0);
	for (int i = 0; i < total; i++) {
		make_mad(mad, MAD_CLASS_SMI, i % 2 ? MAD_METHOD_GET_RESP : MAD_METHOD_GET,
			 SMP_ATTR_PORT_INFO, (uint32_t)i);
		if (i % 2)
			capture_received(c, mad, MAD_SIZE, 7, 0, 0, i == 3 ? 110 : 0);
		else
			capture_sent(c, mad, 7, 0);
	}
	/* flush: everything so far is in the file while the capture stays open */
	CHECK_EQ(capture_flush(c), 0);
	CHECK_EQ(capture_reader_open(path, &r), 0);
	while ((got = capture_reader_next(r, &f, &ib)) == 1) {
		CHECK(ib);
		if (!ib)
			break;
		if (be32(f.mad + 12) != (uint32_t)n || f.bth.psn != (uint32_t)n ||
		    f.inbound != (n % 2) || f.lost != (n == 3) || !f.icrc_ok || !f.vcrc_ok) {
			CHECK(!"frame out of order or wrong");
			fprintf(stderr, "  frame %d\n", n);
			break;
		}
		n++;
	}
	CHECK_EQ(got, 0);
	CHECK_EQ(n, total);
	capture_reader_close(r);
	/* The returned request is addressed as sent: to LID 7 from our LID */
	capture_get_stats(c, &st);
	CHECK_EQ(st.sent, total / 2);
	CHECK_EQ(st.received, total / 2);
	CHECK_EQ(st.lost, 1);
	CHECK_EQ(st.frames, total);
	CHECK_EQ(st.dropped, 0);
	CHECK_EQ(st.bytes, 24 + (uint64_t)total * CAPTURE_FRAME_SIZE);
	CHECK_EQ(capture_close(c), 0);

	CHECK_EQ(capture_reader_open(path, &r), 0);
	for (int i = 0; i < 4; i++)
		capture_reader_next(r, &f, &ib);
	CHECK(f.lost && f.inbound);
	CHECK_EQ(f.lrh.dlid, 7);
	CHECK_EQ(f.lrh.slid, 5);
	capture_reader_close(r);
}

static void test_filter(void)
{
	char path[256];
	struct capture_cfg cfg = { .path = path, .classes = CAPTURE_CLASS_TRAP };
	struct capture_reader *r;
	struct capture_stats st;
	struct capture_frame f;
	struct capture *c;
	uint8_t mad[MAD_SIZE];
	bool ib;
	int n = 0;

	path_in_tmp(path, sizeof(path), "traps.pcap");
	CHECK_EQ(capture_open(&cfg, &c), 0);
	make_mad(mad, MAD_CLASS_SMI_DR, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 1);
	capture_sent(c, mad, 0xffff, 0);
	make_mad(mad, MAD_CLASS_SMI, MAD_METHOD_TRAP, SMP_ATTR_NOTICE, 2);
	capture_received(c, mad, MAD_SIZE, 4, 0, 0, 0);
	make_mad(mad, MAD_CLASS_SMI, MAD_METHOD_TRAP_REPRESS, SMP_ATTR_NOTICE, 2);
	capture_sent(c, mad, 4, 0);
	make_mad(mad, MAD_CLASS_SA, 0x12, 0x11, 3);
	capture_received(c, mad, MAD_SIZE, 4, 1, 0, 0);
	capture_get_stats(c, &st);
	CHECK_EQ(st.filtered, 2);
	CHECK_EQ(capture_close(c), 0);
	CHECK_EQ(capture_reader_open(path, &r), 0);
	while (capture_reader_next(r, &f, &ib) == 1) {
		CHECK(ib && capture_class_of(f.mad) == CAPTURE_CLASS_TRAP);
		n++;
	}
	CHECK_EQ(n, 2);
	capture_reader_close(r);
}

static int count_frames(const char *path, uint32_t *first_psn)
{
	struct capture_reader *r;
	struct capture_frame f;
	bool ib;
	int n = 0;

	if (capture_reader_open(path, &r) < 0)
		return -1;
	while (capture_reader_next(r, &f, &ib) == 1) {
		if (!n)
			*first_psn = f.bth.psn;
		n++;
	}
	capture_reader_close(r);
	return n;
}

static void test_rotation(void)
{
	char path[256], name[300];
	const uint64_t max = 24 + 3 * CAPTURE_FRAME_SIZE;	/* three frames per file */
	struct capture_cfg cfg = { .path = path, .max_bytes = max };
	struct capture_stats st;
	struct capture *c;
	uint8_t mad[MAD_SIZE];
	struct stat sb;
	uint32_t psn = 0;

	path_in_tmp(path, sizeof(path), "rot.pcap");
	CHECK_EQ(capture_open(&cfg, &c), 0);
	for (int i = 0; i < 20; i++) {
		make_mad(mad, MAD_CLASS_SMI_DR, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, (uint32_t)i);
		capture_sent(c, mad, 0xffff, 0);
	}
	CHECK_EQ(capture_close(c), 0);
	/* 20 frames, 3 per file: 7 files written, the newest 4 kept */
	CHECK_EQ(count_frames(path, &psn), 2);
	CHECK_EQ(psn, 18);
	for (int k = 1; k <= CAPTURE_KEEP; k++) {
		snprintf(name, sizeof(name), "%s.%d", path, k);
		CHECK_EQ(stat(name, &sb), 0);
		CHECK((uint64_t)sb.st_size <= max);
		CHECK_EQ(count_frames(name, &psn), 3);
		CHECK_EQ(psn, (uint32_t)(18 - 3 * k));
	}
	snprintf(name, sizeof(name), "%s.%d", path, CAPTURE_KEEP + 1);
	CHECK(stat(name, &sb) < 0);

	/* The counters */
	path_in_tmp(path, sizeof(path), "rot2.pcap");
	CHECK_EQ(capture_open(&cfg, &c), 0);
	for (int i = 0; i < 7; i++)
		capture_sent(c, mad, 0xffff, 0);
	CHECK_EQ(capture_flush(c), 0);
	capture_get_stats(c, &st);
	CHECK_EQ(st.rotations, 2);
	CHECK_EQ(st.frames, 7);
	CHECK_EQ(st.bytes, 3 * 24 + 7 * (uint64_t)CAPTURE_FRAME_SIZE);
	CHECK_EQ(capture_close(c), 0);
}

static void test_errors(void)
{
	char path[256];
	struct capture_cfg cfg = { .path = path };
	struct capture_reader *r;
	struct capture *c = NULL;
	struct capture_frame f;
	uint8_t junk[64] = { 1, 2, 3 };
	bool ib;
	FILE *fp;

	/* No directory; a device is not a capture file */
	path_in_tmp(path, sizeof(path), "no/such/dir.pcap");
	CHECK_EQ(capture_open(&cfg, &c), -ENOENT);
	if (access("/dev/full", W_OK) == 0) {
		snprintf(path, sizeof(path), "/dev/full");
		CHECK_EQ(capture_open(&cfg, &c), -EINVAL);
	}
	cfg.path = "";
	CHECK_EQ(capture_open(&cfg, &c), -EINVAL);

	/* Reader: not pcap, pcap of another link type, truncated */
	path_in_tmp(path, sizeof(path), "junk");
	fp = fopen(path, "wb");
	fwrite(junk, 1, sizeof(junk), fp);
	fclose(fp);
	CHECK_EQ(capture_reader_open(path, &r), -EBADMSG);
	junk[0] = 0xd4;
	junk[1] = 0xc3;
	junk[2] = 0xb2;
	junk[3] = 0xa1;
	junk[20] = 1;	/* Ethernet */
	fp = fopen(path, "wb");
	fwrite(junk, 1, 24, fp);
	fclose(fp);
	CHECK_EQ(capture_reader_open(path, &r), -EPROTONOSUPPORT);
	junk[20] = 197;
	junk[24 + 8] = 100;	/* a record that claims 100 bytes and has 8 */
	fp = fopen(path, "wb");
	fwrite(junk, 1, 24 + 16 + 8, fp);
	fclose(fp);
	CHECK_EQ(capture_reader_open(path, &r), 0);
	CHECK_EQ(capture_reader_next(r, &f, &ib), -EBADMSG);
	capture_reader_close(r);
}

/*
 * Issue 12: the capture holds every MAD, keys included. Never written
 * through a symlink someone planted, never into a FIFO (which would block
 * the open), always mode 0600, even over a file that was there before.
 */
static void test_file_safety(void)
{
	char path[256], target[256];
	struct capture_cfg cfg = { .path = path };
	struct capture *c = NULL;
	struct stat sb;
	FILE *fp;

	path_in_tmp(target, sizeof(target), "victim");
	fp = fopen(target, "w");
	fputs("precious", fp);
	fclose(fp);
	path_in_tmp(path, sizeof(path), "link.pcap");
	CHECK_EQ(symlink(target, path), 0);
	CHECK_EQ(capture_open(&cfg, &c), -ELOOP);
	CHECK_EQ(stat(target, &sb), 0);
	CHECK_EQ(sb.st_size, 8);
	path_in_tmp(path, sizeof(path), "fifo.pcap");
	CHECK_EQ(mkfifo(path, 0644), 0);
	/* No reader: refused at once (ENXIO); with one it would be "not a file" */
	CHECK_EQ(capture_open(&cfg, &c), -ENXIO);
	path_in_tmp(path, sizeof(path), "old.pcap");
	fp = fopen(path, "w");
	fclose(fp);
	CHECK_EQ(chmod(path, 0644), 0);
	CHECK_EQ(capture_open(&cfg, &c), 0);
	CHECK_EQ(stat(path, &sb), 0);
	CHECK_EQ(sb.st_mode & 07777, 0600);
	CHECK_EQ(capture_close(c), 0);
}

static void cleanup(void)
{
	char cmd[128];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", tmpdir);
}

int main(void)
{
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	RUN(test_crc_check_values);
	RUN(test_crc_random);
	RUN(test_lrh);
	RUN(test_bth_deth);
	RUN(test_packet);
	RUN(test_variant_fields);
	RUN(test_classes);
	RUN(test_writer_bytes);
	RUN(test_writer_reader);
	RUN(test_filter);
	RUN(test_rotation);
	RUN(test_errors);
	RUN(test_file_safety);
	cleanup();
	return unit_report();
}
