// SPDX-License-Identifier: MIT
/*
 * The SA server alone: requests are fed to sa_handle() and the answers it
 * would send are captured. Covers statuses for bad input, Get and GetTable
 * for every record type, PathRecord attributes checked against the true
 * cabling, RMPP segmentation with ACKs, STOP/ABORT, and a fuzz loop of
 * random and mutated requests (run under ASan/UBSan by the sanitizer build).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_codec.h"
#include "sa/sa.h"
#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/lid.h"
#include "topo/mc.h"
#include "topo/route.h"

static const char *net =
	"Hca 1 \"sm\"\n[1] \"s1\"[1]\n"
	"Switch 8 \"s1\"\n[1] \"sm\"[1]\n[2] \"s2\"[2]\n[3] \"s2\"[3]\n[5] \"h1\"[1]\n"
	"Switch 8 \"s2\"\n[2] \"s1\"[2]\n[3] \"s1\"[3]\n[4] \"s3\"[1]\n[5] \"h2\"[1]\n[6] \"h2\"[2]\n"
	"Switch 8 \"s3\"\n[1] \"s2\"[4]\n[2] \"h3\"[1]\n"
	"Hca 1 \"h1\"\n[1] \"s1\"[5]\n"
	"Hca 2 \"h2\"\n[1] \"s2\"[5]\n[2] \"s2\"[6]\n"
	"Hca 1 \"h3\"\n[1] \"s3\"[2]\n";

#define MAX_SENT 4096

static uint8_t sent[MAX_SENT][MAD_SIZE];
static unsigned int nsent;

static size_t sent_len[MAX_SENT];
static uint16_t sent_dlid[MAX_SENT];
static uint32_t sent_qpn[MAX_SENT];
static struct mad_addr sent_to[MAX_SENT];

static int fake_send(void *ctx, const uint8_t mad[MAD_SIZE], size_t len, const struct mad_addr *to)
{
	CHECK(len >= SA_HDR_SIZE && len <= MAD_SIZE);
	if (nsent < MAX_SENT) {
		/* What a receiver gets: the first len bytes, zeros after */
		memset(sent[nsent], 0, MAD_SIZE);
		memcpy(sent[nsent], mad, len);
		sent_dlid[nsent] = to->slid;
		sent_qpn[nsent] = to->qpn;
		sent_to[nsent] = *to;
		sent_len[nsent++] = len;
	}
	return 0;
}

static struct fakefab ff;
static struct fabric *fab;
static struct sa_env env = {
	.sm_guid = 0x1234, .sm_lid = 1, .act_count = 7, .sm_priority = 3,
	.subnet_prefix = UINT64_C(0xfe80000000000000), .packet_life_time = 18,
	.send = fake_send,
};
static const struct mad_addr client = { .slid = 5, .qpn = 1 };

static void setup(void)
{
	struct lid_stats ls;
	struct route_stats rs;

	CHECK_EQ(ff_parse(&ff, net), 0);
	CHECK_EQ(fabric_new(&fab), 0);
	CHECK_EQ(ff_discover(&ff, fab, NULL), 0);
	CHECK_EQ(lid_assign(fab, 0, NULL, NULL, &ls), 0);
	CHECK_EQ(route_compute(route_engine_find("minhop"), fab, NULL, &rs, NULL), 0);
	for (size_t i = 0; i < fab->nnodes; i++)
		for (unsigned int p = 0; p <= fab->nodes[i]->num_ports; p++) {
			struct fab_port *pp = &fab->nodes[i]->ports[p];

			/* What a sweep would have read: SDR 4x, 2048 MTU, default P_Key */
			pp->pi.link_width_active = 2;
			pp->pi.link_speed_active = 1;
			pp->pi.guid_cap = 8;
			if (fabric_is_endport(pp)) {
				static const uint16_t dflt[32] = { 0xffff };

				CHECK_EQ(fabric_port_set_pkeys(pp, dflt, 32), 0);
				pp->pkeys_valid = true;
			}
		}
}

#define IPOIB_MASK (MCR_CM_MGID | MCR_CM_PORT_GID | MCR_CM_PKEY | MCR_CM_JOIN_STATE)

static uint64_t req_sm_key;	/* the SM_Key requests carry */
static const struct mad_addr *req_from;	/* who sends them (NULL: client) */

static void request(struct sa *sa, uint8_t method, uint16_t attr, uint64_t mask,
		    const uint8_t *rec, size_t len, uint64_t tid)
{
	struct sa_mad m;
	uint8_t buf[MAD_SIZE];

	sa_mad_init(&m, method, attr, mask, tid);
	m.sm_key = req_sm_key;
	if (rec)
		memcpy(m.data, rec, len);
	sa_mad_encode(&m, buf);
	nsent = 0;
	sa_handle(sa, buf, MAD_SIZE, req_from ? req_from : &client);
}

static uint16_t last_status(void)
{
	struct sa_mad m;

	if (!nsent || sa_mad_decode(sent[nsent - 1], MAD_SIZE, &m) < 0)
		return 0xffff;
	return m.hdr.status;
}

/* An RMPP ACK/STOP/ABORT of a GetTable transfer, as its receiver sends it */
static void rmpp_ctl(struct sa *sa, uint64_t tid, uint8_t version, uint8_t type, uint8_t status,
		     uint32_t seg, uint32_t win)
{
	struct sa_mad m = { 0 };
	uint8_t buf[MAD_SIZE];

	m.hdr.base_version = 1;
	m.hdr.mgmt_class = MAD_CLASS_SA;
	m.hdr.class_version = SA_CLASS_VERSION;
	m.hdr.method = SA_METHOD_GET_TABLE;
	m.hdr.tid = tid;
	m.rmpp.version = version;
	m.rmpp.type = type;
	m.rmpp.flags = RMPP_FLAG_ACTIVE;
	m.rmpp.status = status;
	m.rmpp.data1 = seg;
	m.rmpp.data2 = win;
	sa_mad_encode(&m, buf);
	sa_handle(sa, buf, MAD_SIZE, req_from ? req_from : &client);
}

static void ack(struct sa *sa, uint64_t tid, uint8_t type, uint32_t seg, uint32_t win)
{
	rmpp_ctl(sa, tid, RMPP_VERSION, type, 0, seg, win);
}

/* The same with another method (GetMulti: a double-sided transfer's) */
static void rmpp_ctl_method(struct sa *sa, uint64_t tid, uint8_t method, uint8_t type,
			    uint8_t status, uint32_t seg, uint32_t win)
{
	struct sa_mad m = { 0 };
	uint8_t buf[MAD_SIZE];

	m.hdr.base_version = 1;
	m.hdr.mgmt_class = MAD_CLASS_SA;
	m.hdr.class_version = SA_CLASS_VERSION;
	m.hdr.method = method;
	m.hdr.attr_id = SA_ATTR_MULTIPATH_RECORD;
	m.hdr.tid = tid;
	m.rmpp.version = RMPP_VERSION;
	m.rmpp.type = type;
	m.rmpp.flags = RMPP_FLAG_ACTIVE;
	m.rmpp.status = status;
	m.rmpp.data1 = seg;
	m.rmpp.data2 = win;
	sa_mad_encode(&m, buf);
	sa_handle(sa, buf, MAD_SIZE, &client);
}

/* Drive an RMPP transfer to its end, ACKing like a receiver; returns records */
static size_t get_table(struct sa *sa, uint16_t attr, uint64_t mask, const uint8_t *rec,
			size_t len, uint8_t **out, size_t *rsize)
{
	static uint64_t tid = 100;
	uint8_t *data = NULL;
	size_t total = 0, paylen_last = 0;
	uint32_t expect = 1;
	bool done = false;
	struct sa_mad m;

	request(sa, SA_METHOD_GET_TABLE, attr, mask, rec, len, ++tid);
	*rsize = 0;
	while (!done && nsent) {
		unsigned int n = nsent;
		static uint8_t batch[MAX_SENT][MAD_SIZE];

		memcpy(batch, sent, (size_t)n * MAD_SIZE);
		nsent = 0;
		for (unsigned int i = 0; i < n && !done; i++) {
			CHECK_EQ(sa_mad_decode(batch[i], MAD_SIZE, &m), 0);
			CHECK_EQ(m.hdr.method, SA_METHOD_GET_TABLE_RESP);
			CHECK(m.rmpp.flags & RMPP_FLAG_ACTIVE);
			CHECK_EQ(m.rmpp.data1, expect);
			if (expect == 1)
				CHECK(m.rmpp.flags & RMPP_FLAG_FIRST);
			*rsize = m.attr_offset * 8u;
			data = realloc(data, total + SA_DATA_SIZE);
			memcpy(data + total, m.data, SA_DATA_SIZE);
			total += SA_DATA_SIZE;
			if (m.rmpp.flags & RMPP_FLAG_LAST) {
				paylen_last = m.rmpp.data2;
				done = true;
			}
			expect++;
		}
		/* One ACK per batch, opening a window of 4 more segments */
		ack(sa, tid, RMPP_TYPE_ACK, expect - 1, expect + 3);
	}
	CHECK(done);
	/* Last segment's PayloadLength: 20 bytes of SA header + what it carries */
	CHECK(paylen_last >= 20 && paylen_last <= RMPP_SEG_PAYLOAD);
	total -= RMPP_SEG_PAYLOAD - paylen_last;
	*out = data;
	return *rsize ? total / *rsize : 0;
}

static void test_status(void)
{
	struct sa *sa;
	uint8_t buf[MAD_SIZE];
	struct sa_mad m = { 0 };

	CHECK_EQ(sa_new(&env, &sa), 0);
	/* Not up yet: BUSY */
	request(sa, SA_METHOD_GET, SA_ATTR_NODE_RECORD, 0, NULL, 0, 1);
	CHECK_EQ(last_status(), MAD_STATUS_BUSY);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	/* Unknown attribute, unknown method, methods not for this attribute */
	request(sa, SA_METHOD_GET, 0x0099, 0, NULL, 0, 2);
	CHECK_EQ(last_status(), MAD_STATUS_METHOD_ATTR_UNSUPP);
	request(sa, 0x33, 0x0099, 0, NULL, 0, 3);
	CHECK_EQ(last_status(), MAD_STATUS_METHOD_UNSUPP);
	/*
	 * Methods the SA does not have, on records it serves: GetTraceTable
	 * (IBA 15.2.2), and one no class defines; each answered with its
	 * response method (13.4.5) and "method not supported" (13.4.7)
	 */
	{
		static const uint8_t unsupp[] = { SA_METHOD_GET_TRACE_TABLE, 0x20, 0x7f };

		for (size_t i = 0; i < sizeof(unsupp); i++) {
			request(sa, unsupp[i], SA_ATTR_PATH_RECORD, 0, NULL, 0, 30 + i);
			CHECK_EQ(nsent, 1);
			CHECK_EQ(last_status(), MAD_STATUS_METHOD_UNSUPP);
			CHECK_EQ(sent[0][3], unsupp[i] | MAD_METHOD_RESP_BIT);
			CHECK_EQ(wire_bits_get(sent[0], 64, 64), 30 + i);
		}
	}
	request(sa, SA_METHOD_SET, SA_ATTR_NODE_RECORD, 0, NULL, 0, 4);
	CHECK_EQ(last_status(), MAD_STATUS_METHOD_ATTR_UNSUPP);
	request(sa, SA_METHOD_DELETE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 5);
	CHECK_EQ(last_status(), MAD_STATUS_METHOD_ATTR_UNSUPP);
	/* A component mask naming fields a LinkRecord does not have */
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_LINK_RECORD, UINT64_C(1) << 40, NULL, 0, 6);
	CHECK_EQ(last_status(), SA_STATUS_REQ_INVALID);
	/* Get: no match, too many */
	uint8_t rec[128] = { 0 };

	rec[1] = 200;	/* LID 200: nobody */
	request(sa, SA_METHOD_GET, SA_ATTR_NODE_RECORD, 1, rec, sizeof(rec), 7);
	CHECK_EQ(last_status(), SA_STATUS_NO_RECORDS);
	request(sa, SA_METHOD_GET, SA_ATTR_NODE_RECORD, 0, NULL, 0, 8);
	CHECK_EQ(last_status(), SA_STATUS_TOO_MANY);
	/* Wrong class version */
	memset(&m, 0, sizeof(m));
	m.hdr.base_version = 1;
	m.hdr.mgmt_class = MAD_CLASS_SA;
	m.hdr.class_version = 1;
	m.hdr.method = SA_METHOD_GET;
	m.hdr.attr_id = SA_ATTR_NODE_RECORD;
	sa_mad_encode(&m, buf);
	nsent = 0;
	sa_handle(sa, buf, MAD_SIZE, &client);
	CHECK_EQ(last_status(), MAD_STATUS_BAD_VERSION);
	/* Truncated, garbage, a response: dropped, never answered */
	nsent = 0;
	sa_handle(sa, buf, 40, &client);
	sa_handle(sa, buf, 0, &client);
	buf[1] = 0x81;
	sa_handle(sa, buf, MAD_SIZE, &client);
	m.hdr.class_version = 2;
	m.hdr.method = SA_METHOD_GET_RESP;
	sa_mad_encode(&m, buf);
	sa_handle(sa, buf, MAD_SIZE, &client);
	CHECK_EQ(nsent, 0);
	CHECK(sa_stats(sa)->dropped >= 4);
	/* ClassPortInfo */
	request(sa, SA_METHOD_GET, SA_ATTR_CLASS_PORT_INFO, 0, NULL, 0, 9);
	CHECK_EQ(nsent, 1);
	CHECK_EQ(last_status(), 0);
	sa_free(sa);
}

static struct fab_port *port_of(const char *name, unsigned int port)
{
	return fabric_port(fabric_find(fab, ff.nodes[ff_find(&ff, name)].guid), port);
}

static void test_path_get(void)
{
	struct sa *sa;
	struct path_record pr = { 0 }, got;
	uint8_t rec[64];
	struct sa_mad m;
	struct fab_port *h1 = port_of("h1", 1), *h3 = port_of("h3", 1), *h2b = port_of("h2", 2);

	CHECK_EQ(sa_new(&env, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	pr.slid = h1->lid;
	pr.dlid = h3->lid;
	path_record_encode(&pr, rec);
	request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD, PR_CM_SLID | PR_CM_DLID, rec, 64, 10);
	CHECK_EQ(nsent, 1);
	CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
	CHECK_EQ(m.hdr.status, 0);
	CHECK_EQ(m.hdr.method, SA_METHOD_GET_RESP);
	CHECK_EQ(m.attr_offset, 8);
	path_record_decode(m.data, &got);
	CHECK_EQ(got.slid, h1->lid);
	CHECK_EQ(got.dlid, h3->lid);
	/* h1 - s1 - s2 - s3 - h3: 4 links, 3 switches -> PLT 18 + ceil(log2 3) */
	CHECK_EQ(got.packet_life_time, 20);
	CHECK_EQ(got.mtu, 4);
	CHECK_EQ(got.rate, 3);	/* 4x SDR: 10 Gb/s */
	CHECK_EQ(got.pkey, 0xffff);
	CHECK_EQ(got.reversible, 1);
	CHECK_EQ(got.sgid[15], (uint8_t)h1->guid);
	CHECK_EQ(got.dgid[15], (uint8_t)h3->guid);
	CHECK_EQ(got.sgid[0], 0xfe);

	/* By GID, to the second port of a dual-port HCA */
	memset(&pr, 0, sizeof(pr));
	for (int i = 0; i < 8; i++) {
		pr.sgid[i] = pr.dgid[i] = (uint8_t)(env.subnet_prefix >> (56 - 8 * i));
		pr.sgid[8 + i] = (uint8_t)(h1->guid >> (56 - 8 * i));
		pr.dgid[8 + i] = (uint8_t)(h2b->guid >> (56 - 8 * i));
	}
	path_record_encode(&pr, rec);
	request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD, PR_CM_SGID | PR_CM_DGID, rec, 64, 11);
	CHECK_EQ(last_status(), 0);
	CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
	path_record_decode(m.data, &got);
	CHECK_EQ(got.dlid, h2b->lid);
	/* An unknown GID */
	pr.dgid[15] ^= 0x55;
	path_record_encode(&pr, rec);
	request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD, PR_CM_SGID | PR_CM_DGID, rec, 64, 12);
	CHECK_EQ(last_status(), SA_STATUS_INVALID_GID);

	/* Selectors: MTU > 2048 cannot be had; MTU < 4096 gives 2048; rate = 40G no */
	memset(&pr, 0, sizeof(pr));
	pr.slid = h1->lid;
	pr.dlid = h3->lid;
	pr.mtu = 4;
	pr.mtu_selector = SA_SELECTOR_GT;
	path_record_encode(&pr, rec);
	request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD,
		PR_CM_SLID | PR_CM_DLID | PR_CM_MTU | PR_CM_MTU_SELECTOR, rec, 64, 13);
	CHECK_EQ(last_status(), SA_STATUS_NO_RECORDS);
	pr.mtu = 5;
	pr.mtu_selector = SA_SELECTOR_LT;
	path_record_encode(&pr, rec);
	request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD,
		PR_CM_SLID | PR_CM_DLID | PR_CM_MTU | PR_CM_MTU_SELECTOR, rec, 64, 14);
	CHECK_EQ(last_status(), 0);
	pr.rate = 7;
	pr.rate_selector = SA_SELECTOR_EQ;
	path_record_encode(&pr, rec);
	request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD,
		PR_CM_SLID | PR_CM_DLID | PR_CM_RATE | PR_CM_RATE_SELECTOR, rec, 64, 15);
	CHECK_EQ(last_status(), SA_STATUS_NO_RECORDS);
	/* Routes on one VL: any SL asked for is safe and given */
	pr.sl = 3;
	path_record_encode(&pr, rec);
	request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD, PR_CM_SLID | PR_CM_DLID | PR_CM_SL, rec,
		64, 16);
	CHECK_EQ(last_status(), 0);
	CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
	path_record_decode(m.data, &got);
	CHECK_EQ(got.sl, 3);

	/*
	 * What rdma_cm sends: ServiceID, QoSClass, TClass, FlowLabel, HopLimit,
	 * Reversible and NumbPath are all given back as asked
	 */
	memset(&pr, 0, sizeof(pr));
	pr.slid = h1->lid;
	pr.dlid = h3->lid;
	pr.service_id = 0x0000000001060000ull | 4791;
	pr.qos_class = 0x2a;
	pr.tclass = 0x60;
	pr.flow_label = 0xbeef;
	pr.hop_limit = 64;
	pr.reversible = 1;
	pr.numb_path = 1;
	path_record_encode(&pr, rec);
	request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD, PR_CM_SLID | PR_CM_DLID |
		PR_CM_SERVICE_ID | PR_CM_QOS_CLASS | PR_CM_TCLASS | PR_CM_FLOW_LABEL |
		PR_CM_HOP_LIMIT | PR_CM_REVERSIBLE | PR_CM_NUMB_PATH, rec, 64, 17);
	CHECK_EQ(last_status(), 0);
	CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
	path_record_decode(m.data, &got);
	CHECK(got.service_id == pr.service_id);
	CHECK_EQ(got.qos_class, 0x2a);
	CHECK_EQ(got.tclass, 0x60);
	CHECK_EQ(got.flow_label, 0xbeef);
	CHECK_EQ(got.hop_limit, 64);
	CHECK_EQ(got.reversible, 1);
	CHECK_EQ(got.preference, 0);
	CHECK_EQ(got.slid, h1->lid);
	/* A reversible path needs the way back: none when the LFTs lose it */
	{
		struct fab_node *s3 = fabric_find(fab, port_of("s2", 0)->guid);
		uint8_t keep;

		CHECK(s3 != NULL);
		keep = s3->lft[h1->lid];
		s3->lft[h1->lid] = LFT_PORT_NONE;
		CHECK_EQ(sa_update(sa, fab, NULL), 0);
		request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD, PR_CM_SLID | PR_CM_DLID |
			PR_CM_REVERSIBLE, rec, 64, 18);
		CHECK_EQ(last_status(), SA_STATUS_NO_RECORDS);
		/* Not asked to be reversible: the one way is a path */
		pr.slid = h3->lid;
		pr.dlid = h1->lid;
		path_record_encode(&pr, rec);
		request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD, PR_CM_SLID | PR_CM_DLID, rec, 64,
			19);
		CHECK_EQ(last_status(), SA_STATUS_NO_RECORDS);
		pr.slid = h1->lid;
		pr.dlid = h3->lid;
		path_record_encode(&pr, rec);
		request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD, PR_CM_SLID | PR_CM_DLID, rec, 64,
			20);
		CHECK_EQ(last_status(), 0);
		s3->lft[h1->lid] = keep;
		CHECK_EQ(sa_update(sa, fab, NULL), 0);
	}
	sa_free(sa);
}

static unsigned int count_endports(void)
{
	size_t ep;

	fabric_count_ports(fab, &ep, NULL);
	return (unsigned int)ep;
}

static void test_tables(void)
{
	struct sa *sa;
	uint8_t *data, rec[128] = { 0 };
	size_t n, rsize, links;
	unsigned int eps = count_endports();

	CHECK_EQ(sa_new(&env, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	/* Every PathRecord from one source: one per endport */
	struct path_record pr = { .slid = port_of("h1", 1)->lid };

	path_record_encode(&pr, rec);
	n = get_table(sa, SA_ATTR_PATH_RECORD, PR_CM_SLID, rec, 64, &data, &rsize);
	CHECK_EQ(n, eps);
	CHECK_EQ(rsize, 64);
	for (size_t i = 0; i < n; i++) {
		struct path_record got;

		path_record_decode(data + i * rsize, &got);
		CHECK_EQ(got.slid, pr.slid);
		CHECK(fabric_port_by_lid(fab, got.dlid) != NULL);
	}
	free(data);
	/* All pairs */
	n = get_table(sa, SA_ATTR_PATH_RECORD, 0, NULL, 0, &data, &rsize);
	CHECK_EQ(n, (size_t)eps * eps);
	free(data);
	/* NodeRecords: one per endport */
	n = get_table(sa, SA_ATTR_NODE_RECORD, 0, NULL, 0, &data, &rsize);
	CHECK_EQ(n, eps);
	CHECK_EQ(rsize, 112);
	free(data);
	/* LinkRecords: both directions of every cable */
	fabric_count_ports(fab, NULL, &links);
	n = get_table(sa, SA_ATTR_LINK_RECORD, 0, NULL, 0, &data, &rsize);
	CHECK_EQ(n, 2 * links);
	free(data);
	/* SwitchInfo, SMInfo, LFT, PortInfo, P_Key, GUIDInfo records exist */
	n = get_table(sa, SA_ATTR_SWITCH_INFO_RECORD, 0, NULL, 0, &data, &rsize);
	CHECK_EQ(n, fab->nswitches);
	free(data);
	n = get_table(sa, SA_ATTR_SM_INFO_RECORD, 0, NULL, 0, &data, &rsize);
	CHECK_EQ(n, 1);
	CHECK_EQ(sa_record_field(SA_ATTR_SM_INFO_RECORD, data, 2), env.sm_guid);
	CHECK_EQ(sa_record_field(SA_ATTR_SM_INFO_RECORD, data, 6), SM_STATE_MASTER);
	free(data);
	n = get_table(sa, SA_ATTR_LFT_RECORD, 0, NULL, 0, &data, &rsize);
	CHECK_EQ(n, fab->nswitches);	/* max LID < 64: one block each */
	free(data);
	n = get_table(sa, SA_ATTR_PKEY_RECORD, 0, NULL, 0, &data, &rsize);
	CHECK_EQ(n, eps);
	free(data);
	/* A table of PartitionCap 64 is two blocks: the second, all zeros, a record too */
	{
		struct fab_port *h1 = port_of("h1", 1);
		uint16_t cap = h1->node->ni.partition_cap;
		uint8_t q[72] = { 0 };

		h1->node->ni.partition_cap = 64;
		n = get_table(sa, SA_ATTR_PKEY_RECORD, 0, NULL, 0, &data, &rsize);
		CHECK_EQ(n, eps + 1);
		free(data);
		q[0] = (uint8_t)(h1->lid >> 8);
		q[1] = (uint8_t)h1->lid;
		q[3] = 1;		/* BlockNum (component 1) */
		n = get_table(sa, SA_ATTR_PKEY_RECORD, 1 | 2, q, 72, &data, &rsize);
		CHECK_EQ(n, 1);
		if (n == 1) {
			CHECK_EQ(sa_record_field(SA_ATTR_PKEY_RECORD, data, 1), 1);
			for (unsigned int i = 0; i < 32; i++)
				CHECK_EQ(wire_bits_get(data, 64 + 16 * i, 16), 0);
		}
		free(data);
		h1->node->ni.partition_cap = cap;
	}
	n = get_table(sa, SA_ATTR_GUID_INFO_RECORD, 0, NULL, 0, &data, &rsize);
	CHECK_EQ(n, eps);
	free(data);
	n = get_table(sa, SA_ATTR_PORT_INFO_RECORD, 0, NULL, 0, &data, &rsize);
	CHECK(n > eps);
	free(data);
	CHECK(sa_stats(sa)->rmpp_done >= 10);
	sa_free(sa);
}

/*
 * PortInfoRecord with CapabilityMask (as srp_daemon asks for
 * IsDeviceManagementSupported): every port with at least those bits;
 * ClassPortInfo says so. VLArbitrationTableRecords of a CA port as tools
 * address it (port 0) and as its own number.
 */
static void test_capmask_vlarb(void)
{
	struct sa *sa;
	struct sa_env e2 = env;
	struct vl_arb_entry arb[2][VL_ARB_BLOCK_SIZE] = { { { 0 } } };
	struct fab_port *h3 = port_of("h3", 1), *h1 = port_of("h1", 1);
	uint8_t *data, rec[128] = { 0 };
	size_t n, rsize;
	struct sa_mad m;
	struct port_info pi = { 0 };
	uint32_t dm = 1u << 19, keep3 = h3->pi.cap_mask, keep1 = h1->pi.cap_mask;

	for (unsigned int i = 0; i < VL_ARB_BLOCK_SIZE; i++) {
		arb[0][i] = (struct vl_arb_entry){ .vl = (uint8_t)(i % 4), .weight = 7 };
		arb[1][i] = (struct vl_arb_entry){ .vl = 0, .weight = (uint8_t)i };
	}
	h3->pi.cap_mask = dm | 0x2;
	h1->pi.cap_mask = 0x2;
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);

	request(sa, SA_METHOD_GET, SA_ATTR_CLASS_PORT_INFO, 0, NULL, 0, 40);
	CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
	CHECK_EQ(wire_bits_get(m.data, 16, 16) & SA_CAP_PORTINFO_CAPMASK_MATCH,
		 SA_CAP_PORTINFO_CAPMASK_MATCH);
	/* What is not served is not claimed: no QoS (CapabilityMask2 bit 1) */
	CHECK_EQ(wire_bits_get(m.data, 32, 27) & (1u << 1), 0);

	pi.cap_mask = dm;
	sa_port_info_record_encode(0, 0, &pi, rec);
	n = get_table(sa, SA_ATTR_PORT_INFO_RECORD, UINT64_C(1) << PIR_FIELD_CAP_MASK, rec, 68,
		      &data, &rsize);
	CHECK_EQ(n, 1);
	CHECK_EQ(sa_record_field(SA_ATTR_PORT_INFO_RECORD, data, 0), h3->lid);
	free(data);
	/* Both bits: still h3; a bit nobody has: none */
	pi.cap_mask = dm | 0x2;
	sa_port_info_record_encode(0, 0, &pi, rec);
	n = get_table(sa, SA_ATTR_PORT_INFO_RECORD, UINT64_C(1) << PIR_FIELD_CAP_MASK, rec, 68,
		      &data, &rsize);
	CHECK_EQ(n, 1);
	free(data);
	pi.cap_mask = 1u << 30;
	sa_port_info_record_encode(0, 0, &pi, rec);
	n = get_table(sa, SA_ATTR_PORT_INFO_RECORD, UINT64_C(1) << PIR_FIELD_CAP_MASK, rec, 68,
		      &data, &rsize);
	CHECK_EQ(n, 0);
	free(data);
	/* CapabilityMask2 in the same way, with the LID: h3's port only */
	h3->pi.cap_mask2 = 0x5;
	pi.cap_mask2 = 0x4;
	sa_port_info_record_encode(h3->lid, 0, &pi, rec);
	n = get_table(sa, SA_ATTR_PORT_INFO_RECORD, 1 | UINT64_C(1) << PIR_FIELD_CAP_MASK2, rec,
		      68, &data, &rsize);
	CHECK_EQ(n, 1);
	CHECK_EQ(sa_record_field(SA_ATTR_PORT_INFO_RECORD, data, PIR_FIELD_CAP_MASK2), 5);
	free(data);
	h3->pi.cap_mask2 = 0;

	/* VL arbitration: the blocks the model says the port holds, none before */
	h3->pi.vl_arb_low_cap = 8;
	h3->pi.vl_arb_high_cap = 8;
	memset(rec, 0, sizeof(rec));
	rec[0] = (uint8_t)(h3->lid >> 8);
	rec[1] = (uint8_t)h3->lid;
	n = get_table(sa, SA_ATTR_VLARB_RECORD, 1, rec, 72, &data, &rsize);
	CHECK_EQ(n, 0);
	free(data);
	CHECK_EQ(fabric_vlarb_set(fab, h3, VL_ARB_LOW_0_31, arb[0]), 0);
	CHECK_EQ(fabric_vlarb_set(fab, h3, VL_ARB_HIGH_0_31, arb[1]), 0);
	/* A block past the port's caps is not served even when known */
	CHECK_EQ(fabric_vlarb_set(fab, h3, VL_ARB_LOW_32_63, arb[1]), 0);
	memset(rec, 0, sizeof(rec));
	rec[0] = (uint8_t)(h3->lid >> 8);
	rec[1] = (uint8_t)h3->lid;
	/* LID, port 0 (as saquery and smpquery address a CA), block 1 (low 0-31) */
	rec[2] = 0;
	rec[3] = VL_ARB_LOW_0_31;
	request(sa, SA_METHOD_GET, SA_ATTR_VLARB_RECORD, 1 | 2 | 4, rec, 72, 41);
	CHECK_EQ(last_status(), 0);
	CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
	CHECK_EQ(sa_record_field(SA_ATTR_VLARB_RECORD, m.data, 0), h3->lid);
	CHECK_EQ(sa_record_field(SA_ATTR_VLARB_RECORD, m.data, 1), 0);
	CHECK_EQ(sa_record_field(SA_ATTR_VLARB_RECORD, m.data, 2), VL_ARB_LOW_0_31);
	/* Entry 1 of the low table: VL 1, weight 7 */
	CHECK_EQ(m.data[8 + 2], 1);
	CHECK_EQ(m.data[8 + 3], 7);
	/* Its own port number works too, and says so */
	rec[2] = (uint8_t)h3->num;
	request(sa, SA_METHOD_GET, SA_ATTR_VLARB_RECORD, 1 | 2 | 4, rec, 72, 42);
	CHECK_EQ(last_status(), 0);
	CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
	CHECK_EQ(sa_record_field(SA_ATTR_VLARB_RECORD, m.data, 1), h3->num);
	/* Another number does not */
	rec[2] = 2;
	request(sa, SA_METHOD_GET, SA_ATTR_VLARB_RECORD, 1 | 2 | 4, rec, 72, 43);
	CHECK_EQ(last_status(), SA_STATUS_NO_RECORDS);
	/* The whole table of that LID: low and high, 2 blocks each (cap 8: 1 each) */
	n = get_table(sa, SA_ATTR_VLARB_RECORD, 1, rec, 72, &data, &rsize);
	CHECK_EQ(n, 2);
	if (n == 2) {
		/* Block 3 (high 0-31): entry 5 weight 5, VL 0 */
		CHECK_EQ(sa_record_field(SA_ATTR_VLARB_RECORD, data + rsize, 2), VL_ARB_HIGH_0_31);
		CHECK_EQ(data[rsize + 8 + 2 * 5], 0);
		CHECK_EQ(data[rsize + 8 + 2 * 5 + 1], 5);
	}
	free(data);
	for (unsigned int b = 1; b <= 4; b++)
		h3->vlarb[b - 1] = NULL;
	h3->pi.cap_mask = keep3;
	h1->pi.cap_mask = keep1;
	sa_free(sa);
}

/* The MAD sent i-th since nsent was 0, decoded */
static struct sa_mad sent_mad(unsigned int i)
{
	struct sa_mad m = { 0 };

	CHECK(i < nsent);
	if (i < nsent)
		CHECK_EQ(sa_mad_decode(sent[i], MAD_SIZE, &m), 0);
	return m;
}

/* The one MAD sent is an ABORT of transfer tid with this status (IBA 13.6.3.3) */
static void check_abort(uint64_t tid, uint8_t status)
{
	struct sa_mad m;

	CHECK_EQ(nsent, 1);
	m = sent_mad(0);
	CHECK_EQ(m.hdr.method, SA_METHOD_GET_TABLE_RESP);
	CHECK_EQ((uint32_t)m.hdr.tid, tid);
	CHECK_EQ(m.rmpp.version, RMPP_VERSION);
	CHECK_EQ(m.rmpp.type, RMPP_TYPE_ABORT);
	CHECK(m.rmpp.flags & RMPP_FLAG_ACTIVE);
	CHECK_EQ(m.rmpp.status, status);
	CHECK_EQ(sent_len[0], SA_HDR_SIZE);
}

/* Bad ACKs and the receiver's STOP/ABORT: each ends the transfer as the IBA says */
static void test_rmpp_control(void)
{
	struct sa *sa;
	struct sa_mad m;
	uint64_t aborted;

	CHECK_EQ(sa_new(&env, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	/* A big table: only segment 1 goes out until the receiver ACKs */
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 500);
	CHECK_EQ(nsent, 1);
	m = sent_mad(0);
	CHECK_EQ(m.rmpp.data1, 1);
	CHECK(m.rmpp.flags & RMPP_FLAG_FIRST);
	/* An ACK for a segment never sent: ABORT, SegmentNumber too big */
	nsent = 0;
	ack(sa, 500, RMPP_TYPE_ACK, 9, 20);
	check_abort(500, RMPP_STATUS_S2B);
	CHECK_EQ(sa_stats(sa)->rmpp_aborted, 1);
	/* ... and then there is no transfer left to ACK */
	nsent = 0;
	ack(sa, 500, RMPP_TYPE_ACK, 1, 5);
	CHECK_EQ(nsent, 0);
	/* Past what was sent, within the window given: S2B all the same */
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 501);
	ack(sa, 501, RMPP_TYPE_ACK, 1, 5);
	nsent = 0;
	ack(sa, 501, RMPP_TYPE_ACK, 6, 9);
	check_abort(501, RMPP_STATUS_S2B);
	/* NewWindowLast below the segment ACKed: W2S */
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 502);
	ack(sa, 502, RMPP_TYPE_ACK, 1, 5);
	nsent = 0;
	ack(sa, 502, RMPP_TYPE_ACK, 3, 2);
	check_abort(502, RMPP_STATUS_W2S);
	/* An ACK with a status, an RMPPType that does not exist, another version */
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 503);
	nsent = 0;
	rmpp_ctl(sa, 503, RMPP_VERSION, RMPP_TYPE_ACK, 5, 1, 4);
	check_abort(503, RMPP_STATUS_BAD_STATUS);
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 504);
	nsent = 0;
	rmpp_ctl(sa, 504, RMPP_VERSION, 7, 0, 1, 4);
	check_abort(504, RMPP_STATUS_BADT);
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 505);
	nsent = 0;
	rmpp_ctl(sa, 505, 2, RMPP_TYPE_ACK, 0, 1, 4);
	check_abort(505, RMPP_STATUS_UNV);
	/* STOP, resources exhausted: it ends, nothing is sent back */
	aborted = sa_stats(sa)->rmpp_aborted;
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 506);
	nsent = 0;
	rmpp_ctl(sa, 506, RMPP_VERSION, RMPP_TYPE_STOP, RMPP_STATUS_RESX, 1, 1);
	ack(sa, 506, RMPP_TYPE_ACK, 1, 5);
	CHECK_EQ(nsent, 0);
	CHECK_EQ(sa_stats(sa)->rmpp_aborted, aborted + 1);
	/* A STOP with another status is a bad one */
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 507);
	nsent = 0;
	rmpp_ctl(sa, 507, RMPP_VERSION, RMPP_TYPE_STOP, 0, 1, 1);
	check_abort(507, RMPP_STATUS_BAD_STATUS);
	/* The receiver's ABORT ends it quietly; one with a status no ABORT has does not */
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 508);
	nsent = 0;
	rmpp_ctl(sa, 508, RMPP_VERSION, RMPP_TYPE_ABORT, RMPP_STATUS_T2L, 0, 0);
	ack(sa, 508, RMPP_TYPE_ACK, 1, 5);
	CHECK_EQ(nsent, 0);
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 509);
	nsent = 0;
	rmpp_ctl(sa, 509, RMPP_VERSION, RMPP_TYPE_ABORT, 3, 0, 0);
	check_abort(509, RMPP_STATUS_BAD_STATUS);
	/* ACK(1, 5): segments 2..5 follow, and only those */
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 510);
	nsent = 0;
	ack(sa, 510, RMPP_TYPE_ACK, 1, 5);
	CHECK_EQ(nsent, 4);
	CHECK_EQ(sent_mad(0).rmpp.data1, 2);
	CHECK_EQ(sent_mad(3).rmpp.data1, 5);
	/*
	 * An old ACK (a smaller window, or an earlier segment), the same ACK
	 * again, the kernel's ACK of segment 0 for the response direction:
	 * nothing to send, nothing wrong
	 */
	nsent = 0;
	ack(sa, 510, RMPP_TYPE_ACK, 1, 3);
	ack(sa, 510, RMPP_TYPE_ACK, 1, 5);
	ack(sa, 510, RMPP_TYPE_ACK, 0, 1);
	CHECK_EQ(nsent, 0);
	ack(sa, 510, RMPP_TYPE_ACK, 3, 8);
	CHECK_EQ(nsent, 3);
	nsent = 0;
	ack(sa, 510, RMPP_TYPE_ACK, 2, 8);
	CHECK_EQ(nsent, 0);
	/* The request again, its answer under way: no new transfer, nothing sent */
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 510);
	CHECK_EQ(nsent, 0);
	ack(sa, 510, RMPP_TYPE_ACK, 8, 10);
	CHECK_EQ(nsent, 2);
	CHECK_EQ(sent_mad(0).rmpp.data1, 9);
	/* ...but before segment 1 was ACKed it starts again from segment 1 */
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 511);
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 511);
	CHECK_EQ(nsent, 1);
	CHECK_EQ(sent_mad(0).rmpp.data1, 1);
	sa_free(sa);	/* frees transfers in flight */
}

/* The SL-to-VL tables the model says the nodes hold: SL i -> VL (i + in + out) % 8 */
static size_t fill_sl2vl(struct fabric *f)
{
	size_t n = 0;

	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *nd = f->nodes[i];

		for (unsigned int in = 0; in <= nd->num_ports; in++)
			for (unsigned int out = 1; out <= nd->num_ports; out++) {
				uint8_t vl[16];

				if (!fabric_sl2vl_pair(nd, in, out))
					continue;
				for (int k = 0; k < 16; k++)
					vl[k] = (uint8_t)((k + in + out) % 8);
				CHECK_EQ(fabric_sl2vl_set(nd, in, out, sl2vl_pack(vl)), 0);
				n++;
			}
	}
	return n;
}

static unsigned int smps_asked;
static bool reading_tables;

static bool fake_busy(void *ctx)
{
	(void)ctx;
	return reading_tables;
}

static int count_smp(void *ctx, const struct fab_port *p, uint8_t method, uint16_t attr,
		     uint32_t amod, const uint8_t data[64],
		     void (*done)(void *arg, int status, const uint8_t data[64]), void *arg)
{
	(void)ctx, (void)p, (void)method, (void)attr, (void)amod, (void)data, (void)done;
	(void)arg;
	smps_asked++;
	return -EIO;
}

static void test_sl2vl(void)
{
	struct sa *sa;
	struct sa_env e2 = env;
	uint8_t *data, rec[16] = { 0 };
	size_t n, rsize, known;
	struct fab_port *s2 = port_of("s2", 0);

	e2.smp = count_smp;
	e2.tables_busy = fake_busy;
	smps_asked = 0;
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	/* Nothing known: no record, and no SMP to find one */
	n = get_table(sa, SA_ATTR_SL2VL_RECORD, 0, NULL, 0, &data, &rsize);
	CHECK_EQ(n, 0);
	free(data);
	/* ...BUSY while the owner still reads them: the client asks again */
	reading_tables = true;
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_SL2VL_RECORD, 0, NULL, 0, 699);
	CHECK_EQ(last_status(), MAD_STATUS_BUSY);
	known = fill_sl2vl(fab);
	CHECK(known > 20);
	/* One switch, one pair: one record with its table */
	rec[0] = (uint8_t)(s2->lid >> 8);
	rec[1] = (uint8_t)s2->lid;
	rec[2] = 2;
	rec[3] = 4;
	request(sa, SA_METHOD_GET, SA_ATTR_SL2VL_RECORD, 7, rec, sizeof(rec), 700);
	CHECK_EQ(last_status(), 0);
	{
		struct sa_mad m;

		CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
		CHECK_EQ(sa_record_field(SA_ATTR_SL2VL_RECORD, m.data, 1), 2);
		CHECK_EQ(sa_record_field(SA_ATTR_SL2VL_RECORD, m.data, 2), 4);
		/* SL1 -> (1 + 2 + 4) % 8 */
		CHECK_EQ(m.data[8] & 0xf, 7);
	}
	/* All pairs of all switches and every CA port, through RMPP */
	n = get_table(sa, SA_ATTR_SL2VL_RECORD, 0, NULL, 0, &data, &rsize);
	CHECK_EQ(n, known);
	CHECK_EQ(rsize, 16);
	free(data);
	/* A pair whose table is not known is left out, not answered with junk */
	fabric_sl2vl_forget(s2->node, 0, 4);
	rec[2] = 0;
	rec[3] = 4;
	request(sa, SA_METHOD_GET, SA_ATTR_SL2VL_RECORD, 7, rec, sizeof(rec), 701);
	CHECK_EQ(last_status(), MAD_STATUS_BUSY);	/* still reading */
	reading_tables = false;
	request(sa, SA_METHOD_GET, SA_ATTR_SL2VL_RECORD, 7, rec, sizeof(rec), 701);
	CHECK_EQ(last_status(), SA_STATUS_NO_RECORDS);
	n = get_table(sa, SA_ATTR_SL2VL_RECORD, 0, NULL, 0, &data, &rsize);
	CHECK_EQ(n, known - 1);
	free(data);
	/* While reading, another pair known is answered: only the unknown one waits */
	reading_tables = true;
	rec[2] = 2;
	request(sa, SA_METHOD_GET, SA_ATTR_SL2VL_RECORD, 7, rec, sizeof(rec), 703);
	CHECK_EQ(last_status(), 0);
	reading_tables = false;
	/* A CA port asked for as tools do (output port 0): its one table, port 0 back */
	{
		struct fab_port *h3 = port_of("h3", 1);
		struct sa_mad m;

		rec[0] = (uint8_t)(h3->lid >> 8);
		rec[1] = (uint8_t)h3->lid;
		rec[2] = 0;
		rec[3] = 0;
		request(sa, SA_METHOD_GET, SA_ATTR_SL2VL_RECORD, 7, rec, sizeof(rec), 702);
		CHECK_EQ(last_status(), 0);
		CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
		CHECK_EQ(sa_record_field(SA_ATTR_SL2VL_RECORD, m.data, 2), 0);
		/* in 0, out 1: SL0 -> VL 1 */
		CHECK_EQ(m.data[8] >> 4, 1);
	}
	CHECK_EQ(smps_asked, 0);
	sa_free(sa);
	for (size_t i = 0; i < fab->nnodes; i++) {
		free(fab->nodes[i]->sl2vl_known);
		free(fab->nodes[i]->sl2vl_tab);
		fab->nodes[i]->sl2vl_known = fab->nodes[i]->sl2vl_tab = NULL;
	}
}

static uint32_t rnd_state = 12345;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}


/* ---- multicast ---- */

static unsigned int mcast_calls;

static void count_changed(void *ctx)
{
	(void)ctx;
	mcast_calls++;
}

static void mcr_make(struct mc_member_record *r, const struct fab_port *p, const uint8_t *mgid)
{
	memset(r, 0, sizeof(*r));
	if (mgid)
		memcpy(r->mgid, mgid, 16);
	gid_encode(UINT64_C(0xfe80000000000000), p->guid, r->port_gid);
	r->pkey = 0xffff;
	r->join_state = MC_JOIN_FULL;
}

/* Send r with mask from port p; the answer's status, and its record in *out */
static uint16_t mcr_send(struct sa *sa, uint8_t method, const struct mc_member_record *r,
			 uint64_t mask, const struct fab_port *p, struct mc_member_record *out)
{
	static uint64_t tid = 5000;
	struct mad_addr from = { .slid = p->lid, .qpn = 1 };
	uint8_t rec[MCR_SIZE];
	struct sa_mad m;

	mc_member_record_encode(r, rec);
	req_from = &from;
	request(sa, method, SA_ATTR_MCMEMBER_RECORD, mask, rec, sizeof(rec), ++tid);
	req_from = NULL;
	CHECK_EQ(nsent, 1);
	if (!nsent || sa_mad_decode(sent[0], MAD_SIZE, &m) < 0)
		return 0xffff;
	CHECK_EQ(m.hdr.method, method == SA_METHOD_DELETE ? SA_METHOD_DELETE_RESP :
		 SA_METHOD_GET_RESP);
	CHECK_EQ(m.hdr.tid, tid);
	if (out)
		mc_member_record_decode(m.data, out);
	return m.hdr.status;
}

static void test_mcast(void)
{
	struct sa_env e = env;
	struct sa *sa;
	struct mc_db *db;
	struct mc_params bp = { .qkey = 0x0b1b, .pkey = 0xffff, .mtu = 4, .rate = 3, .scope = 2 };
	struct mc_member_record r, got;
	struct fab_port *h1 = port_of("h1", 1), *h3 = port_of("h3", 1);
	uint8_t bc[16], other[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 1 };
	uint8_t *tab = NULL;
	size_t n, rsize;

	e.mcast_changed = count_changed;
	CHECK_EQ(sa_new(&e, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	/* Without groups to serve, joins are refused as unsupported */
	mcr_make(&r, h1, bc);
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK, h1, NULL),
		 MAD_STATUS_METHOD_ATTR_UNSUPP);
	CHECK_EQ(mc_db_new(0xc3ff, &db), 0);
	mc_ipoib_mgid(0xffff, 2, bc);
	CHECK_EQ(mc_db_add_permanent(db, bc, &bp, NULL), 0);
	sa_set_mcast(sa, db, NULL);
	/* ClassPortInfo now says so: UD multicast, send-only full members */
	request(sa, SA_METHOD_GET, SA_ATTR_CLASS_PORT_INFO, 0, NULL, 0, 77);
	{
		struct sa_mad m;

		CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
		CHECK(wire_bits_get(m.data, 16, 16) & SA_CAP_UD_MCAST);
		CHECK(wire_bits_get(m.data, 32, 27) & SA_CAP2_SENDONLY_FULL_MEMBER);
	}
	/* The Linux IPoIB join */
	mcr_make(&r, h1, bc);
	mcast_calls = 0;
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK, h1, &got), 0);
	CHECK_EQ(got.mlid, 0xc000);
	CHECK_EQ(got.qkey, 0x0b1b);
	CHECK_EQ(got.mtu, 4);
	CHECK_EQ(got.rate, 3);
	CHECK_EQ(got.join_state, MC_JOIN_FULL);
	CHECK(!memcmp(got.port_gid, r.port_gid, 16));
	CHECK_EQ(mcast_calls, 1);
	mcr_make(&r, h3, bc);
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK, h3, &got), 0);
	/* Someone else's PortGID: refused, unless trusted and a ProxyJoin */
	mcr_make(&r, h3, bc);
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK, h1, NULL), SA_STATUS_REQ_INVALID);
	r.proxy_join = 1;
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK | MCR_CM_PROXY_JOIN, h1, NULL),
		 SA_STATUS_REQ_INVALID);
	/* ... and leaves of it too */
	CHECK_EQ(mcr_send(sa, SA_METHOD_DELETE, &r, IPOIB_MASK, h1, NULL), SA_STATUS_REQ_INVALID);
	req_sm_key = 0x5eed;
	e.trusted_key = 0x5eed;
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK | MCR_CM_PROXY_JOIN, h1, &got), 0);
	CHECK_EQ(got.proxy_join, 1);
	req_sm_key = 0;
	e.trusted_key = 0;
	/* A GID of no port here; a prefix of another subnet */
	mcr_make(&r, h1, bc);
	r.port_gid[15] ^= 0x55;
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK, h1, NULL), SA_STATUS_INVALID_GID);
	mcr_make(&r, h1, bc);
	r.port_gid[0] = 0x20;
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK, h1, NULL), SA_STATUS_INVALID_GID);
	/* Bad requests and their statuses; nothing changes */
	mcr_make(&r, h1, bc);
	r.join_state = 0;
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK, h1, NULL), SA_STATUS_REQ_INVALID);
	mcr_make(&r, h1, other);
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK, h1, NULL), SA_STATUS_INSUFFICIENT);
	mcr_make(&r, h1, bc);
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, MCR_CM_MGID | MCR_CM_JOIN_STATE, h1, NULL),
		 SA_STATUS_INSUFFICIENT);
	mcr_make(&r, h1, bc);
	r.pkey = 0x8001;
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK, h1, NULL), SA_STATUS_REQ_INVALID);
	/* MTU 4096 exactly, on a 2048 link */
	mcr_make(&r, h1, other);
	r.mtu = 5;
	r.mtu_selector = MC_SEL_EQ;
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK | MCR_CM_QKEY | MCR_CM_SL |
			  MCR_CM_FLOW_LABEL | MCR_CM_TCLASS | MCR_CM_MTU | MCR_CM_MTU_SELECTOR,
			  h1, NULL), SA_STATUS_REQ_INVALID);
	CHECK_EQ(mc_db_count(db), 1);
	/* A group created by a join with the create components, MGID 0 */
	mcr_make(&r, h1, NULL);
	r.qkey = 0x1234;
	r.join_state = MC_JOIN_SENDONLY_FULL;
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK | MCR_CM_QKEY | MCR_CM_SL |
			  MCR_CM_FLOW_LABEL | MCR_CM_TCLASS, h1, &got), 0);
	CHECK_EQ(got.mgid[0], 0xff);
	CHECK_EQ(got.mlid, 0xc001);
	CHECK_EQ(got.qkey, 0x1234);
	CHECK_EQ(mc_db_count(db), 2);
	/* A table in one segment ends after its last record: saquery counts by length */
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_MCMEMBER_RECORD, 0, NULL, 0, 903);
	CHECK_EQ(nsent, 1);
	CHECK_EQ(sent_len[0], SA_HDR_SIZE + 2 * 56);
	ack(sa, 903, RMPP_TYPE_ACK, 1, 1);
	/* GetTable, untrusted: one record per group, nobody's membership shown */
	n = get_table(sa, SA_ATTR_MCMEMBER_RECORD, 0, NULL, 0, &tab, &rsize);
	CHECK_EQ(n, 2);
	CHECK_EQ(rsize, 56);
	for (size_t i = 0; i < n; i++) {
		mc_member_record_decode(tab + i * rsize, &got);
		CHECK_EQ(got.join_state, 0);
		CHECK_EQ(got.port_gid[15] | got.port_gid[0], 0);
	}
	free(tab);
	/* Trusted: every (group, member): h1 and h3 in the broadcast group, h1 in the new one */
	e.trusted_key = 0x5eed;
	req_sm_key = 0x5eed;
	n = get_table(sa, SA_ATTR_MCMEMBER_RECORD, 0, NULL, 0, &tab, &rsize);
	CHECK_EQ(n, 3);
	free(tab);
	/* A wrong key is no key */
	req_sm_key = 0x5eee;
	n = get_table(sa, SA_ATTR_MCMEMBER_RECORD, 0, NULL, 0, &tab, &rsize);
	CHECK_EQ(n, 2);
	free(tab);
	req_sm_key = 0x5eed;
	/* Get of one member by MGID and PortGID */
	mcr_make(&r, h3, bc);
	{
		uint8_t rec[MCR_SIZE];
		struct sa_mad m;

		mc_member_record_encode(&r, rec);
		request(sa, SA_METHOD_GET, SA_ATTR_MCMEMBER_RECORD, MCR_CM_MGID | MCR_CM_PORT_GID,
			rec, sizeof(rec), 901);
		CHECK_EQ(last_status(), 0);
		CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
		mc_member_record_decode(m.data, &got);
		CHECK_EQ(got.mlid, 0xc000);
		CHECK(!memcmp(got.port_gid, r.port_gid, 16));
	}
	req_sm_key = 0;
	e.trusted_key = 0;
	/* Leave: Delete, answered with DeleteResp; a leave of a group one is not in */
	memcpy(r.mgid, got.mgid, 16);
	mcr_make(&r, h1, other);
	CHECK_EQ(mcr_send(sa, SA_METHOD_DELETE, &r, IPOIB_MASK, h1, NULL), SA_STATUS_REQ_INVALID);
	mcr_make(&r, h1, NULL);
	{
		const struct mc_group *g = mc_db_by_mlid(db, 0xc001);

		CHECK(g != NULL);
		if (g)
			memcpy(r.mgid, g->mgid, 16);
	}
	r.join_state = MC_JOIN_SENDONLY_FULL;
	CHECK_EQ(mcr_send(sa, SA_METHOD_DELETE, &r, IPOIB_MASK, h1, &got), 0);
	CHECK_EQ(got.join_state, 0);
	CHECK_EQ(mc_db_count(db), 1);
	CHECK(mc_db_by_mlid(db, 0xc001) == NULL);
	/* MFT records: none without a forest */
	n = get_table(sa, SA_ATTR_MFT_RECORD, 0, NULL, 0, &tab, &rsize);
	CHECK_EQ(n, 0);
	free(tab);
	{
		struct mc_forest *fo;
		uint64_t dirty[MLID_COUNT / 64 + 1];
		struct sa_mad m;
		uint8_t rec[72] = { 0 };

		CHECK_EQ(mc_forest_new(fab, NULL, &fo), 0);
		mc_db_take_dirty(db, dirty);
		CHECK_EQ(mc_forest_update(fo, db, NULL), 0);
		sa_set_mcast(sa, db, fo);
		/* One block (MLIDs 0xc000-0xc01f) by one position per switch (9 ports) */
		n = get_table(sa, SA_ATTR_MFT_RECORD, 0, NULL, 0, &tab, &rsize);
		CHECK_EQ(n, 3);
		CHECK_EQ(rsize, 72);
		free(tab);
		/* s3: h3 on port 2, s2 on port 1: both in MLID 0xc000's mask */
		wire_bits_set(rec, 0, 16, port_of("s3", 0)->lid);
		request(sa, SA_METHOD_GET, SA_ATTR_MFT_RECORD, 1, rec, sizeof(rec), 902);
		CHECK_EQ(last_status(), 0);
		CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
		CHECK_EQ(wire_bits_get(m.data, 64, 16), (1u << 1) | (1u << 2));
		sa_set_mcast(sa, db, NULL);
		mc_forest_free(fo);
	}
	sa_free(sa);
	mc_db_free(db);
}

/* ---- limits ---- */

static uint64_t fake_us;

static uint64_t fake_now(void *ctx)
{
	(void)ctx;
	return fake_us;
}

/* A GetTable of every NodeRecord from one port, never ACKed; its status */
static uint16_t open_table(struct sa *sa, const struct mad_addr *from, uint64_t tid)
{
	struct sa_mad m;

	req_from = from;
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_NODE_RECORD, 0, NULL, 0, tid);
	req_from = NULL;
	if (!nsent || sa_mad_decode(sent[0], MAD_SIZE, &m) < 0)
		return 0xffff;
	return m.hdr.status;
}

/* ---- ServiceRecord (issue 16) ---- */

static unsigned int svc_changes, svc_present;
static uint32_t svc_last_lease;

static void svc_changed(void *ctx, const uint8_t rec[176], uint32_t lease, bool present)
{
	(void)ctx;
	(void)rec;
	svc_changes++;
	svc_present += present;
	svc_last_lease = lease;
}

static void sr_make(struct service_record *r, uint64_t id, const struct fab_port *p,
		    const char *name)
{
	memset(r, 0, sizeof(*r));
	r->id = id;
	gid_encode(env.subnet_prefix, p->guid, r->gid);
	r->pkey = 0xffff;
	snprintf((char *)r->name, sizeof(r->name), "%s", name);
	r->data32[2] = 0xdeadbeef;
}

static uint16_t sr_send(struct sa *sa, uint8_t method, const struct service_record *r,
			uint64_t mask, const struct fab_port *from, struct service_record *got)
{
	struct mad_addr a = { .slid = from->lid, .qpn = 1 };
	uint8_t rec[SR_SIZE];
	struct sa_mad m;

	service_record_encode(r, rec);
	req_from = &a;
	request(sa, method, SA_ATTR_SERVICE_RECORD, mask, rec, SR_SIZE, 900 + nsent);
	req_from = NULL;
	if (!nsent || sa_mad_decode(sent[nsent - 1], MAD_SIZE, &m) < 0)
		return 0xffff;
	if (got && !m.hdr.status)
		service_record_decode(m.data, got);
	return m.hdr.status;
}

#define SR_KEYMASK (SR_CM_ID | SR_CM_GID | SR_CM_PKEY)

/* Give port p the P_Keys a, b (0: none) in a one-block table, as a sweep would */
static void hold_keys(struct fab_port *p, uint16_t a, uint16_t b)
{
	uint16_t tab[32] = { a, b };

	CHECK_EQ(fabric_port_set_pkeys(p, tab, 32), 0);
	p->pkeys_valid = true;
}

static void test_services(void)
{
	struct sa_env e2 = env;
	struct sa *sa;
	struct service_record r, got;
	struct fab_port *h1 = port_of("h1", 1), *h3 = port_of("h3", 1), *h2 = port_of("h2", 1);
	uint64_t full = SR_KEYMASK | SR_CM_LEASE | SR_CM_KEY | SR_CM_NAME | SR_CM_DATA32(2);
	uint8_t *data;
	size_t n, rsize;

	e2.now = fake_now;
	e2.service_changed = svc_changed;
	e2.trusted_key = 0x5eed;
	fake_us = 1000000;
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);

	/* h1 registers for 10 s with a key; h3 finds it, without the key */
	sr_make(&r, 0x1000000000000042ull, h1, "smd.test.a");
	r.lease = 10;
	r.key[15] = 0x77;
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, full, h1, &got), 0);
	CHECK_EQ(got.lease, 10);
	CHECK_EQ(got.key[15], 0x77);
	CHECK_EQ(svc_changes, 1);
	CHECK_EQ(svc_present, 1);
	CHECK_EQ(svc_last_lease, 10);
	CHECK_EQ(sa_service_count(sa), 1);
	fake_us += 4000000;
	CHECK_EQ(sr_send(sa, SA_METHOD_GET, &r, SR_CM_ID, h3, &got), 0);
	CHECK_EQ(got.lease, 6);
	CHECK_EQ(got.key[15], 0);
	CHECK_EQ(got.data32[2], 0xdeadbeef);
	CHECK(!strcmp((char *)got.name, "smd.test.a"));
	/* By name, in a table */
	{
		uint8_t rec[SR_SIZE];
		struct mad_addr a = { .slid = h3->lid, .qpn = 1 };

		service_record_encode(&r, rec);
		req_from = &a;
		n = get_table(sa, SA_ATTR_SERVICE_RECORD, SR_CM_NAME, rec, SR_SIZE, &data, &rsize);
		req_from = NULL;
		CHECK_EQ(n, 1);
		CHECK_EQ(rsize, SR_SIZE);
		free(data);
	}
	/* Not its port's: refused, unless trusted */
	sr_make(&r, 0x99, h1, "smd.test.b");
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h3, NULL), SA_STATUS_DENIED);
	CHECK_EQ(sa_stats(sa)->bad_keys, 0);
	/* Another key (sm_key where sa_key is the trusted one, say): not trusted, counted */
	req_sm_key = 0x5eee;
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h3, NULL), SA_STATUS_DENIED);
	CHECK_EQ(sa_stats(sa)->bad_keys, 1);
	req_sm_key = 0x5eed;
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h3, &got), 0);
	CHECK_EQ(got.lease, SR_LEASE_INFINITE);
	CHECK_EQ(sa_stats(sa)->bad_keys, 1);
	req_sm_key = 0;
	/* Components missing; a GID nobody has */
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_CM_ID, h1, NULL), SA_STATUS_INSUFFICIENT);
	r.gid[15] ^= 0x5a;
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h1, NULL), SA_STATUS_INVALID_GID);
	/* The key guards replacement and deletion */
	sr_make(&r, 0x1000000000000042ull, h1, "smd.test.a2");
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, full, h1, NULL), SA_STATUS_DENIED);
	CHECK_EQ(sr_send(sa, SA_METHOD_DELETE, &r, SR_KEYMASK, h1, NULL), SA_STATUS_DENIED);
	r.key[15] = 0x77;
	r.lease = 10;
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, full, h1, &got), 0);
	CHECK(!strcmp((char *)got.name, "smd.test.a2"));
	CHECK_EQ(sa_service_count(sa), 2);
	/* The lease ends: the record goes, and the owner hears of it */
	svc_changes = svc_present = 0;
	fake_us += 10000001;
	sa_tick(sa);
	CHECK_EQ(svc_changes, 1);
	CHECK_EQ(svc_present, 0);
	CHECK_EQ(sr_send(sa, SA_METHOD_GET, &r, SR_CM_ID, h3, NULL), SA_STATUS_NO_RECORDS);
	CHECK_EQ(sa_service_count(sa), 1);
	/* Delete with the key components: DeleteResp with the record, then none */
	sr_make(&r, 0x99, h1, "");
	CHECK_EQ(sr_send(sa, SA_METHOD_DELETE, &r, SR_KEYMASK, h1, &got), 0);
	CHECK_EQ(sent[0][3], SA_METHOD_DELETE_RESP);
	CHECK(!strcmp((char *)got.name, "smd.test.b"));
	CHECK_EQ(sr_send(sa, SA_METHOD_DELETE, &r, SR_KEYMASK, h1, NULL), SA_STATUS_NO_RECORDS);
	CHECK_EQ(sa_service_count(sa), 0);

	/*
	 * Its own GUID under a byte-swapped subnet prefix: taken, stored and
	 * answered under the subnet's prefix, found by ServiceID and by the
	 * real GID, deleted with the swapped one again. Another port's GUID
	 * under that prefix: refused, even trusted.
	 */
	{
		uint64_t swapped = __builtin_bswap64(env.subnet_prefix), pfx, g;

		sr_make(&r, 0x5a5a, h1, "smd.test.swapped");
		gid_encode(swapped, h1->guid, r.gid);
		CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h1, &got), 0);
		gid_decode(got.gid, &pfx, &g);
		CHECK_EQ(pfx, env.subnet_prefix);
		CHECK_EQ(g, h1->guid);
		CHECK_EQ(sr_send(sa, SA_METHOD_GET, &r, SR_CM_ID, h3, &got), 0);
		gid_decode(got.gid, &pfx, &g);
		CHECK_EQ(pfx, env.subnet_prefix);
		CHECK(!strcmp((char *)got.name, "smd.test.swapped"));
		sr_make(&r, 0x5a5a, h1, "");
		CHECK_EQ(sr_send(sa, SA_METHOD_GET, &r, SR_CM_ID | SR_CM_GID, h3, NULL), 0);
		gid_encode(swapped, h1->guid, r.gid);
		CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h3, NULL),
			 SA_STATUS_INVALID_GID);
		req_sm_key = 0x5eed;
		CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h3, NULL),
			 SA_STATUS_INVALID_GID);
		req_sm_key = 0;
		CHECK_EQ(sr_send(sa, SA_METHOD_DELETE, &r, SR_KEYMASK, h1, &got), 0);
		CHECK(!strcmp((char *)got.name, "smd.test.swapped"));
		CHECK_EQ(sa_service_count(sa), 0);
	}

	/*
	 * Partitions: h1 and h3 in 0x8001 (h3 a limited member), h2 in the
	 * default partition only. A service in 0x8001 needs a port that holds
	 * it, and is seen by members that share it only.
	 */
	hold_keys(h1, 0xffff, 0x8001);
	hold_keys(h3, 0x0001, 0);
	sr_make(&r, 0x77, h2, "smd.test.p");
	r.pkey = 0x8001;
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h2, NULL), SA_STATUS_REQ_INVALID);
	sr_make(&r, 0x77, h1, "smd.test.p");
	r.pkey = 0x8001;
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h1, NULL), 0);
	CHECK_EQ(sr_send(sa, SA_METHOD_GET, &r, SR_CM_ID, h3, NULL), 0);
	CHECK_EQ(sr_send(sa, SA_METHOD_GET, &r, SR_CM_ID, h2, NULL), SA_STATUS_NO_RECORDS);
	/* A limited member's service is not for another limited member */
	sr_make(&r, 0x78, h3, "smd.test.q");
	r.pkey = 0x0001;
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h3, NULL), 0);
	hold_keys(h1, 0xffff, 0x0001);
	CHECK_EQ(sr_send(sa, SA_METHOD_GET, &r, SR_CM_ID, h1, NULL), SA_STATUS_NO_RECORDS);
	hold_keys(h1, 0xffff, 0x8001);
	CHECK_EQ(sr_send(sa, SA_METHOD_GET, &r, SR_CM_ID, h1, NULL), 0);
	/* h3 (no default P_Key now) sees none of the default partition's */
	sr_make(&r, 0x79, h2, "smd.test.r");
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h2, NULL), 0);
	CHECK_EQ(sr_send(sa, SA_METHOD_GET, &r, SR_CM_ID, h3, NULL), SA_STATUS_NO_RECORDS);
	CHECK_EQ(sr_send(sa, SA_METHOD_GET, &r, SR_CM_ID, h1, NULL), 0);
	hold_keys(h1, 0xffff, 0);
	hold_keys(h3, 0xffff, 0);

	/* One port may hold SVC_PER_PORT (256) services, no more */
	for (unsigned int i = 0; i < 300; i++) {
		uint16_t st;

		sr_make(&r, 0x10000 + i, h2, "many");
		st = sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h2, NULL);
		CHECK_EQ(st, i < 255 ? 0 : SA_STATUS_NO_RESOURCES);	/* 0x79 is h2's too */
	}
	sa_free(sa);

	/* What the owner kept comes back after a restart, with its lease */
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	sr_make(&r, 0x4242, h1, "restored");
	{
		uint8_t rec[SR_SIZE];

		service_record_encode(&r, rec);
		CHECK_EQ(sa_service_restore(sa, rec, 30), 0);
	}
	CHECK_EQ(sr_send(sa, SA_METHOD_GET, &r, SR_CM_ID, h3, &got), 0);
	CHECK_EQ(got.lease, 30);
	sa_free(sa);
}

/*
 * Many leases end at once (one tick): exactly those go, the owner hears of
 * each once, and the rest end on time later. Service i (ID 0x50000 + i) has
 * a lease of 5 s (i % 3 == 0), 10 s (1) or none (2). Before the tick, one
 * 5 s service is renewed for 100 s and one deleted: the earliest lease end
 * the SA knew is gone, and neither must confuse what expires when.
 */
#define EXP_N 3000

static uint32_t exp_lease(unsigned int i)
{
	return i % 3 == 0 ? 5 : i % 3 == 1 ? 10 : SR_LEASE_INFINITE;
}

/* Which services are there, by Get from h3; how many */
static unsigned int exp_present(struct sa *sa, bool there[EXP_N])
{
	struct fab_port *h3 = port_of("h3", 1);
	struct service_record r = { .pkey = 0xffff };
	unsigned int k = 0;

	for (unsigned int i = 0; i < EXP_N; i++) {
		r.id = 0x50000 + i;
		there[i] = sr_send(sa, SA_METHOD_GET, &r, SR_CM_ID, h3, NULL) == 0;
		k += there[i];
	}
	return k;
}

static void test_service_expiry(void)
{
	struct sa_env e2 = env;
	struct sa *sa;
	struct fab_port *h[3] = { port_of("h1", 1), port_of("h2", 1), port_of("h3", 1) };
	static bool there[EXP_N];
	struct service_record r;
	unsigned int i, renewed = 300, deleted = 0;

	e2.now = fake_now;
	e2.service_changed = svc_changed;
	fake_us = 7000000;
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	for (i = 0; i < EXP_N; i++) {
		uint8_t rec[SR_SIZE];

		sr_make(&r, 0x50000 + i, h[i % 7 % 3], "exp");
		service_record_encode(&r, rec);
		CHECK_EQ(sa_service_restore(sa, rec, exp_lease(i)), 0);
	}
	CHECK_EQ(exp_present(sa, there), EXP_N);
	/* Renew one 5 s service for 100 s, delete another */
	fake_us += 1000000;
	sr_make(&r, 0x50000 + renewed, h[renewed % 7 % 3], "renewed");
	r.lease = 100;
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK | SR_CM_LEASE, h[renewed % 7 % 3],
			 NULL), 0);
	sr_make(&r, 0x50000 + deleted, h[deleted % 7 % 3], "");
	CHECK_EQ(sr_send(sa, SA_METHOD_DELETE, &r, SR_KEYMASK, h[deleted % 7 % 3], NULL), 0);
	CHECK_EQ(sa_service_count(sa), EXP_N - 1);
	/* Just before 5 s: nothing goes */
	fake_us = 7000000 + 5000000 - 1;
	svc_changes = svc_present = 0;
	sa_tick(sa);
	CHECK_EQ(svc_changes, 0);
	CHECK_EQ(sa_service_count(sa), EXP_N - 1);
	/* 5 s: the 999 other 5 s leases end in one tick, nothing else */
	fake_us += 1;
	sa_tick(sa);
	CHECK_EQ(svc_changes, EXP_N / 3 - 2);
	CHECK_EQ(svc_present, 0);
	CHECK_EQ(exp_present(sa, there), EXP_N - EXP_N / 3 + 1);
	for (i = 0; i < EXP_N; i++)
		CHECK_EQ(there[i], i == renewed || exp_lease(i) != 5);
	sa_tick(sa);
	CHECK_EQ(svc_changes, EXP_N / 3 - 2);
	/* 10 s: the 10 s leases */
	fake_us = 7000000 + 10000000;
	sa_tick(sa);
	CHECK_EQ(svc_changes, EXP_N / 3 - 2 + EXP_N / 3);
	CHECK_EQ(exp_present(sa, there), EXP_N / 3 + 1);
	for (i = 0; i < EXP_N; i++)
		CHECK_EQ(there[i], i == renewed || exp_lease(i) == SR_LEASE_INFINITE);
	/* 101 s: the renewed one; the rest have no end */
	fake_us = 7000000 + 101000000;
	sa_tick(sa);
	CHECK_EQ(exp_present(sa, there), EXP_N / 3);
	for (i = 0; i < EXP_N; i++)
		CHECK_EQ(there[i], exp_lease(i) == SR_LEASE_INFINITE);
	fake_us += 1000000000000ull;
	sa_tick(sa);
	CHECK_EQ(sa_service_count(sa), EXP_N / 3);
	sa_free(sa);
}

/* ---- GUIDInfoRecord Set/Delete: alias GUIDs (issue 16) ---- */

static uint64_t smp_guids[8];
static unsigned int smp_sets, smp_gets;
static bool smp_fail;
/* What the ports hold: block 0 of up to 64 ports (index 0 is the port GUID) */
static struct {
	uint64_t guid;
	uint64_t g[8];
} held[64];

static uint64_t *held_block(const struct fab_port *p)
{
	for (unsigned int i = 0; i < 64; i++)
		if (held[i].guid == p->guid || !held[i].guid) {
			held[i].guid = p->guid;
			return held[i].g;
		}
	return NULL;
}

static int fake_smp(void *ctx, const struct fab_port *p, uint8_t method, uint16_t attr,
		    uint32_t amod, const uint8_t data[64],
		    void (*done)(void *arg, int status, const uint8_t data[64]), void *arg)
{
	uint64_t *h = p ? held_block(p) : NULL;
	uint8_t back[64] = { 0 };

	(void)ctx;
	CHECK(method == MAD_METHOD_SET || method == MAD_METHOD_GET);
	CHECK_EQ(attr, SMP_ATTR_GUID_INFO);
	CHECK(p && p->node->type != NODE_TYPE_SWITCH);
	if (!h) {
		done(arg, -EIO, back);	/* more ports than the fake keeps: one that fails */
		return 0;
	}
	if (method == MAD_METHOD_GET) {
		smp_gets++;
		for (unsigned int k = 0; h && amod == 0 && k < 8; k++)
			wire_bits_set(back, 64 * k, 64, h[k]);
	} else {
		smp_sets++;
		memcpy(back, data, 64);
		for (unsigned int k = 0; k < 8; k++) {
			smp_guids[k] = wire_bits_get(data, 64 * k, 64);
			if (h && amod == 0 && k && !smp_fail)
				h[k] = smp_guids[k];
		}
	}
	/* A real SMA answers with what it holds: GUID 0 stays the port's */
	if (amod == 0)
		wire_bits_set(back, 0, 64, p->guid);
	done(arg, smp_fail ? -EREMOTEIO : 0, back);
	return 0;
}

static uint16_t gir_send(struct sa *sa, uint8_t method, const struct fab_port *target,
			 uint8_t block, uint64_t mask, const uint64_t g[8],
			 const struct fab_port *from, uint64_t out[8])
{
	struct mad_addr a = { .slid = from->lid, .qpn = 1 };
	uint8_t rec[72];
	struct sa_mad m;

	sa_guid_info_record_encode(target->lid, block, g, rec);
	req_from = &a;
	request(sa, method, SA_ATTR_GUID_INFO_RECORD, mask | 3, rec, 72, 1200 + smp_sets);
	req_from = NULL;
	if (!nsent || sa_mad_decode(sent[nsent - 1], MAD_SIZE, &m) < 0)
		return 0xffff;
	for (unsigned int k = 0; out && k < 8 && !m.hdr.status; k++)
		out[k] = sa_record_field(SA_ATTR_GUID_INFO_RECORD, m.data, 4 + k);
	return m.hdr.status;
}

static void test_guidinfo(void)
{
	struct sa_env e2 = env;
	struct sa *sa;
	struct fab_port *h1 = port_of("h1", 1), *h3 = port_of("h3", 1);
	uint64_t g[8] = { 0 }, out[8];
	struct path_record pr = { 0 };
	uint8_t rec[SR_SIZE];

	e2.smp = fake_smp;
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	/* ClassPortInfo says alias GUIDs are handed out */
	request(sa, SA_METHOD_GET, SA_ATTR_CLASS_PORT_INFO, 0, NULL, 0, 1199);
	{
		struct sa_mad m;

		CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
		CHECK(wire_bits_get(m.data, 32, 27) & SA_CAP2_ADDITIONAL_GUIDS);
	}

	/* h3 sets alias GUID 1 of block 0; the SMP writes the whole block,
	 * read first (the SA has not seen it) */
	g[1] = 0x0002c9fe00001111ull;
	CHECK_EQ(gir_send(sa, SA_METHOD_SET, h3, 0, GIR_CM_GUID(1), g, h3, out), 0);
	CHECK_EQ(smp_sets, 1);
	CHECK_EQ(smp_gets, 1);
	CHECK(smp_guids[0] == h3->guid && smp_guids[1] == g[1]);
	CHECK(out[0] == h3->guid && out[1] == g[1]);
	CHECK_EQ(sa_alias_count(sa), 1);
	/* The table as Get shows it */
	{
		uint8_t r72[72] = { 0 };
		struct sa_mad m;

		r72[0] = (uint8_t)(h3->lid >> 8);
		r72[1] = (uint8_t)h3->lid;
		request(sa, SA_METHOD_GET, SA_ATTR_GUID_INFO_RECORD, 3, r72, 72, 1250);
		CHECK_EQ(last_status(), 0);
		CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
		CHECK(sa_record_field(SA_ATTR_GUID_INFO_RECORD, m.data, 5) == g[1]);
	}
	/* A PathRecord to the alias GID reaches h3, and names the alias */
	gid_encode(env.subnet_prefix, g[1], pr.dgid);
	pr.slid = h1->lid;
	path_record_encode(&pr, rec);
	request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD, PR_CM_SLID | PR_CM_DGID, rec, 64, 1251);
	CHECK_EQ(last_status(), 0);
	{
		struct sa_mad m;
		struct path_record got;

		CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
		path_record_decode(m.data, &got);
		CHECK_EQ(got.dlid, h3->lid);
		CHECK(!memcmp(got.dgid, pr.dgid, 16));
	}
	/* The alias is h3's for services too */
	{
		struct service_record sr = { .id = 5, .pkey = 0xffff };

		gid_encode(env.subnet_prefix, g[1], sr.gid);
		CHECK_EQ(sr_send(sa, SA_METHOD_SET, &sr, SR_KEYMASK, h3, NULL), 0);
		CHECK_EQ(sr_send(sa, SA_METHOD_SET, &sr, SR_KEYMASK, h1, NULL), SA_STATUS_DENIED);
	}
	/* Refused: index 0, past GUIDCap (8: block 1 is full), another's GUID, not its port */
	CHECK_EQ(gir_send(sa, SA_METHOD_SET, h3, 0, GIR_CM_GUID(0), g, h3, NULL),
		 SA_STATUS_REQ_INVALID);
	CHECK_EQ(gir_send(sa, SA_METHOD_SET, h3, 1, GIR_CM_GUID(1), g, h3, NULL),
		 SA_STATUS_NO_RESOURCES);
	g[2] = h1->guid;
	CHECK_EQ(gir_send(sa, SA_METHOD_SET, h3, 0, GIR_CM_GUID(2), g, h3, NULL),
		 SA_STATUS_REQ_INVALID);
	g[2] = g[1];
	CHECK_EQ(gir_send(sa, SA_METHOD_SET, h1, 0, GIR_CM_GUID(2), g, h1, NULL),
		 SA_STATUS_REQ_INVALID);
	g[2] = 0x0002c9fe00002222ull;
	CHECK_EQ(gir_send(sa, SA_METHOD_SET, h3, 0, GIR_CM_GUID(2), g, h1, NULL),
		 SA_STATUS_DENIED);
	CHECK_EQ(gir_send(sa, SA_METHOD_SET, h3, 0, 0, g, h3, NULL), SA_STATUS_INSUFFICIENT);
	CHECK_EQ(smp_sets, 1);
	/* GUID 0 asks the SA for one: unique, and not the others' */
	g[3] = 0;
	CHECK_EQ(gir_send(sa, SA_METHOD_SET, h3, 0, GIR_CM_GUID(3), g, h3, out), 0);
	CHECK(out[3] && out[3] != g[1] && out[3] != h3->guid && out[3] != h1->guid);
	CHECK(out[1] == g[1]);
	CHECK_EQ(sa_alias_count(sa), 2);
	/* A port that refuses the Set: refused, the table as it was */
	smp_fail = true;
	g[4] = 0x0002c9fe00004444ull;
	CHECK_EQ(gir_send(sa, SA_METHOD_SET, h3, 0, GIR_CM_GUID(4), g, h3, NULL),
		 SA_STATUS_NO_RESOURCES);
	smp_fail = false;
	CHECK_EQ(sa_alias_count(sa), 2);
	/* Delete gives GUID 1 back */
	CHECK_EQ(gir_send(sa, SA_METHOD_DELETE, h3, 0, GIR_CM_GUID(1), g, h3, out), 0);
	CHECK_EQ(sent[0][3], SA_METHOD_DELETE_RESP);
	CHECK(out[1] == 0 && out[3] != 0);
	CHECK_EQ(sa_alias_count(sa), 1);
	/* Another SA (smd restarted) knows nothing of h3's GUID 3: a Set of
	 * GUID 5 reads the block first and keeps it (the port's table, the
	 * SA's record) */
	sa_free(sa);
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	{
		uint64_t kept = out[3];
		unsigned int gets = smp_gets;

		g[5] = 0x0002c9fe00005555ull;
		CHECK_EQ(gir_send(sa, SA_METHOD_SET, h3, 0, GIR_CM_GUID(5), g, h3, out), 0);
		CHECK_EQ(smp_gets, gets + 1);
		CHECK(smp_guids[3] == kept && smp_guids[5] == g[5]);
		CHECK(out[3] == kept && out[5] == g[5] && out[0] == h3->guid);
		CHECK_EQ(sa_alias_count(sa), 2);
		/* ...once: the block is known now */
		g[6] = 0x0002c9fe00006666ull;
		CHECK_EQ(gir_send(sa, SA_METHOD_SET, h3, 0, GIR_CM_GUID(6), g, h3, out), 0);
		CHECK_EQ(smp_gets, gets + 1);
		CHECK(out[3] == kept && out[5] == g[5] && out[6] == g[6]);
		/* A port that cannot be read: refused, nothing written */
		smp_fail = true;
		gets = smp_sets;
		CHECK_EQ(gir_send(sa, SA_METHOD_SET, h1, 0, GIR_CM_GUID(1), g, h1, NULL),
			 SA_STATUS_NO_RESOURCES);
		CHECK_EQ(smp_sets, gets);
		smp_fail = false;
	}
	/* Yet another: a Get of h3's block 0 reads it first and shows the port's
	 * aliases; then it is known (no more reads) */
	sa_free(sa);
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	{
		uint8_t r72[72] = { 0 };
		unsigned int gets = smp_gets;
		struct sa_mad m;

		r72[0] = (uint8_t)(h3->lid >> 8);
		r72[1] = (uint8_t)h3->lid;
		for (int round = 0; round < 2; round++) {
			request(sa, SA_METHOD_GET, SA_ATTR_GUID_INFO_RECORD, 3, r72, 72,
				1260 + (unsigned int)round);
			CHECK_EQ(last_status(), 0);
			CHECK_EQ(smp_gets, gets + 1);
			CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
			CHECK(sa_record_field(SA_ATTR_GUID_INFO_RECORD, m.data, 4) == h3->guid);
			CHECK(sa_record_field(SA_ATTR_GUID_INFO_RECORD, m.data, 9) == g[5]);
			CHECK(sa_record_field(SA_ATTR_GUID_INFO_RECORD, m.data, 10) == g[6]);
		}
		/* A port whose table cannot be read: what smd knows, the port GUID */
		r72[0] = (uint8_t)(h1->lid >> 8);
		r72[1] = (uint8_t)h1->lid;
		smp_fail = true;
		request(sa, SA_METHOD_GET, SA_ATTR_GUID_INFO_RECORD, 3, r72, 72, 1262);
		smp_fail = false;
		CHECK_EQ(last_status(), 0);
		CHECK_EQ(smp_gets, gets + 2);
		CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
		CHECK(sa_record_field(SA_ATTR_GUID_INFO_RECORD, m.data, 4) == h1->guid);
		CHECK(sa_record_field(SA_ATTR_GUID_INFO_RECORD, m.data, 5) == 0);
	}
	/* Without an SMP path, Set is not supported */
	sa_free(sa);
	CHECK_EQ(sa_new(&env, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	CHECK_EQ(gir_send(sa, SA_METHOD_SET, h3, 0, GIR_CM_GUID(1), g, h3, NULL),
		 MAD_STATUS_METHOD_ATTR_UNSUPP);
	sa_free(sa);
}

/*
 * The per-port service limit counts every GID of the port: a port with
 * alias GUIDs gets SVC_PER_PORT (256) in all, not 256 per alias
 */
/*
 * The service index (chains by ServiceID and by port) against a plain
 * reference: 6000 random Sets, Deletes and lease ends over 40 IDs and
 * three ports, so that chains share buckets and every removal moves
 * another record into its slot. After each step the count matches; at
 * the end and every 500 steps every (ID, port) is found by Get exactly
 * when the reference holds it, a GetTable by ID returns its ports, and a
 * port's count decides its limit.
 */
#define IX_IDS	40
static void ix_compare(struct sa *sa, struct fab_port *h[3], const uint64_t until[IX_IDS][3])
{
	for (unsigned int id = 0; id < IX_IDS; id++) {
		unsigned int want = 0;
		struct service_record r, q;
		uint8_t rec[SR_SIZE], *data = NULL;
		size_t rsize, n;

		for (unsigned int k = 0; k < 3; k++) {
			bool there = until[id][k] > fake_us;

			want += there;
			sr_make(&r, 0x70000 + id, h[k], "");
			CHECK_EQ(sr_send(sa, SA_METHOD_GET, &r, SR_KEYMASK, h[k], &q),
				 there ? 0 : SA_STATUS_NO_RECORDS);
			if (there)
				CHECK(q.id == 0x70000 + id && !memcmp(q.gid, r.gid, 16));
		}
		sr_make(&r, 0x70000 + id, h[0], "");
		service_record_encode(&r, rec);
		n = get_table(sa, SA_ATTR_SERVICE_RECORD, SR_CM_ID, rec, SR_SIZE, &data, &rsize);
		CHECK_EQ(n, want);
		free(data);
	}
}

static void test_service_index(void)
{
	struct sa_env e2 = env;
	struct sa *sa;
	struct fab_port *h[3] = { port_of("h1", 1), port_of("h2", 1), port_of("h3", 1) };
	static uint64_t until[IX_IDS][3];	/* reference: lease end (us), 0: none */
	uint64_t rng = 42;
	unsigned int present = 0;

	e2.now = fake_now;
	fake_us = 1000000;
	memset(until, 0, sizeof(until));
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	for (unsigned int step = 0; step < 6000; step++) {
		struct service_record r;
		unsigned int id, k, op;

		rng = rng * 6364136223846793005ull + 1442695040888963407ull;
		id = (unsigned int)(rng >> 33) % IX_IDS;
		k = (unsigned int)(rng >> 45) % 3;
		op = (unsigned int)(rng >> 50) % 8;
		sr_make(&r, 0x70000 + id, h[k], "ix");
		if (op < 4) {
			/* Set with a lease of 1-4 s */
			r.lease = 1 + op;
			CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK | SR_CM_LEASE, h[k],
					 NULL), 0);
			until[id][k] = fake_us + (uint64_t)r.lease * 1000000;
		} else if (op < 6) {
			bool there = until[id][k] > fake_us;

			CHECK_EQ(sr_send(sa, SA_METHOD_DELETE, &r, SR_KEYMASK, h[k], NULL),
				 there ? 0 : SA_STATUS_NO_RECORDS);
			until[id][k] = 0;
		} else {
			/* Time passes: some leases end */
			fake_us += 150000 * (op - 5);
			sa_tick(sa);
		}
		present = 0;
		for (unsigned int i = 0; i < IX_IDS; i++)
			for (unsigned int j = 0; j < 3; j++)
				present += until[i][j] > fake_us;
		sa_tick(sa);
		CHECK_EQ(sa_service_count(sa), present);
		if (step % 500 == 499)
			ix_compare(sa, h, until);
	}
	ix_compare(sa, h, until);
	CHECK(present > 10);
	sa_free(sa);
}

static void test_service_alias_limit(void)
{
	struct sa_env e2 = env;
	struct sa *sa;
	struct fab_port *h1 = port_of("h1", 1), *h2 = port_of("h2", 1);
	uint64_t g[8] = { 0 }, gids[4];
	struct service_record r;
	unsigned int i;

	e2.smp = fake_smp;
	e2.trusted_key = 0x5eed;
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	/* h2 takes three alias GUIDs */
	gids[0] = h2->guid;
	for (i = 1; i < 4; i++) {
		g[i] = 0x0002c9fe0000a000ull + i;
		gids[i] = g[i];
		CHECK_EQ(gir_send(sa, SA_METHOD_SET, h2, 0, GIR_CM_GUID(i), g, h2, NULL), 0);
	}
	CHECK_EQ(sa_alias_count(sa), 3);
	/* 100 under the port GID, 100 under alias 1, 56 under alias 2: 256 */
	for (i = 0; i < 256; i++) {
		memset(&r, 0, sizeof(r));
		r.id = 0x20000 + i;
		r.pkey = 0xffff;
		gid_encode(env.subnet_prefix, gids[i < 100 ? 0 : i < 200 ? 1 : 2], r.gid);
		CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h2, NULL), 0);
	}
	CHECK_EQ(sa_service_count(sa), 256);
	/* The port is full, under every one of its GIDs, and with the SM_Key too */
	for (i = 0; i < 4; i++) {
		memset(&r, 0, sizeof(r));
		r.id = 0x30000 + i;
		r.pkey = 0xffff;
		gid_encode(env.subnet_prefix, gids[i], r.gid);
		CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h2, NULL),
			 SA_STATUS_NO_RESOURCES);
		req_sm_key = 0x5eed;
		CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h1, NULL),
			 SA_STATUS_NO_RESOURCES);
		req_sm_key = 0;
	}
	CHECK_EQ(sa_service_count(sa), 256);
	/* Replacing one it has is no new record: allowed */
	memset(&r, 0, sizeof(r));
	r.id = 0x20000 + 150;
	r.pkey = 0xffff;
	gid_encode(env.subnet_prefix, gids[1], r.gid);
	snprintf((char *)r.name, sizeof(r.name), "%s", "replaced");
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h2, NULL), 0);
	/* Another port is not held back by h2's */
	sr_make(&r, 0x30000, h1, "other");
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h1, NULL), 0);
	/* One deleted under alias 2 makes room for one under alias 3 */
	memset(&r, 0, sizeof(r));
	r.id = 0x20000 + 255;
	r.pkey = 0xffff;
	gid_encode(env.subnet_prefix, gids[2], r.gid);
	CHECK_EQ(sr_send(sa, SA_METHOD_DELETE, &r, SR_KEYMASK, h2, NULL), 0);
	r.id = 0x30003;
	gid_encode(env.subnet_prefix, gids[3], r.gid);
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h2, NULL), 0);
	r.id = 0x30004;
	CHECK_EQ(sr_send(sa, SA_METHOD_SET, &r, SR_KEYMASK, h2, NULL), SA_STATUS_NO_RESOURCES);
	CHECK_EQ(sa_service_count(sa), 257);
	sa_free(sa);
}

/*
 * Fair input (sa_queue.c): one port's 100 queued requests do not keep
 * another's waiting behind them; a port has 64 waiting at most, the rest
 * are dropped as they come; a drain with no time left still answers one.
 */
static void submit_get(struct sa *sa, const struct mad_addr *from, uint64_t tid, uint16_t lid)
{
	struct sa_mad m;
	uint8_t buf[MAD_SIZE];

	sa_mad_init(&m, SA_METHOD_GET, SA_ATTR_NODE_RECORD, 1 /* the LID */, tid);
	sa_record_set_field(SA_ATTR_NODE_RECORD, m.data, 0, lid);
	sa_mad_encode(&m, buf);
	sa_submit(sa, buf, MAD_SIZE, from);
}

static void test_fair_queue(void)
{
	struct sa *sa;
	const struct mad_addr a = { .slid = port_of("h1", 1)->lid, .qpn = 1 };
	const struct mad_addr b = { .slid = port_of("h3", 1)->lid, .qpn = 1 };
	unsigned int to_a = 0, to_b = 0, b_at = 0;

	CHECK_EQ(sa_new(&env, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	nsent = 0;
	for (unsigned int i = 0; i < 100; i++)
		submit_get(sa, &a, 5000 + i, b.slid);
	submit_get(sa, &b, 6000, a.slid);
	/* Nothing is answered before the drain */
	CHECK_EQ(nsent, 0);
	CHECK_EQ(sa_stats(sa)->shed, 100 - SA_QUEUE_PER_PORT_MAX);
	CHECK_EQ(sa_stats(sa)->shed_lid, a.slid);
	/* No time at all: one answered (A's first), 64 still waiting */
	CHECK_EQ(sa_drain(sa, 0), SA_QUEUE_PER_PORT_MAX);
	CHECK_EQ(nsent, 1);
	CHECK_EQ(sa_drain(sa, UINT64_MAX), 0);
	CHECK_EQ(nsent, SA_QUEUE_PER_PORT_MAX + 1);
	for (unsigned int i = 0; i < nsent; i++) {
		struct sa_mad m;

		CHECK_EQ(sa_mad_decode(sent[i], MAD_SIZE, &m), 0);
		CHECK_EQ(m.hdr.status, 0);
		if (sent_dlid[i] == b.slid) {
			to_b++;
			b_at = i;
			CHECK_EQ((uint32_t)m.hdr.tid, 6000);
		} else {
			/* A's answers keep A's order */
			CHECK_EQ((uint32_t)m.hdr.tid, 5000 + to_a);
			to_a++;
		}
	}
	CHECK_EQ(to_a, SA_QUEUE_PER_PORT_MAX);
	CHECK_EQ(to_b, 1);
	/* B waited for one of A's, not for 64 */
	CHECK_EQ(b_at, 1);
	sa_free(sa);
}

/* NodeRecord Get by PortGUID (the GUID index): every endport's own record */
static void test_node_by_guid(void)
{
	struct sa *sa;
	unsigned int found = 0, eps = 0;
	uint8_t rec[128] = { 0 };
	struct sa_mad m;

	CHECK_EQ(sa_new(&env, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	for (size_t i = 0; i < fab->nnodes; i++)
		for (unsigned int pn = 0; pn <= fab->nodes[i]->num_ports; pn++) {
			const struct fab_port *p = &fab->nodes[i]->ports[pn];

			if (!fabric_is_endport(p) || !p->lid)
				continue;
			eps++;
			memset(rec, 0, sizeof(rec));
			sa_record_set_field(SA_ATTR_NODE_RECORD, rec, 8, p->guid);
			request(sa, SA_METHOD_GET, SA_ATTR_NODE_RECORD, UINT64_C(1) << 8, rec,
				sizeof(rec), 70000 + eps);
			if (nsent == 1 && sa_mad_decode(sent[0], MAD_SIZE, &m) == 0 &&
			    !m.hdr.status && sa_record_field(SA_ATTR_NODE_RECORD, m.data, 0) == p->lid &&
			    sa_record_field(SA_ATTR_NODE_RECORD, m.data, 8) == p->guid &&
			    sa_record_field(SA_ATTR_NODE_RECORD, m.data, 7) == p->node->ni.node_guid)
				found++;
			/* ...and with a NodeType it does not have, none */
			sa_record_set_field(SA_ATTR_NODE_RECORD, rec, 4, p->node->ni.node_type ^ 3);
			request(sa, SA_METHOD_GET, SA_ATTR_NODE_RECORD, UINT64_C(1) << 8 | 1u << 4,
				rec, sizeof(rec), 80000 + eps);
			CHECK_EQ(last_status(), SA_STATUS_NO_RECORDS);
		}
	CHECK_MSG(eps >= 4, "%u endports", eps);
	CHECK_EQ(found, eps);
	memset(rec, 0, sizeof(rec));
	sa_record_set_field(SA_ATTR_NODE_RECORD, rec, 8, 0x1234567812345678ull);
	request(sa, SA_METHOD_GET, SA_ATTR_NODE_RECORD, UINT64_C(1) << 8, rec, sizeof(rec), 90000);
	CHECK_EQ(last_status(), SA_STATUS_NO_RECORDS);
	sa_free(sa);
}

static void test_limits(void)
{
	struct sa_env e = env;
	struct sa *sa;
	const struct mad_addr hog = { .slid = port_of("h1", 1)->lid, .qpn = 1 };
	const struct mad_addr other = { .slid = port_of("h3", 1)->lid, .qpn = 1 };
	struct sa_mad m;
	unsigned int refused = 0;
	uint64_t t0;

	e.now = fake_now;
	fake_us = 1000000;
	CHECK_EQ(sa_new(&e, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	/* One port opens 1100 transfers and keeps them open: 16 are its */
	for (unsigned int i = 0; i < 1100; i++)
		refused += open_table(sa, &hog, 10000 + i) == SA_STATUS_NO_RESOURCES;
	CHECK_EQ(refused, 1100 - 16);
	CHECK(sa_stats(sa)->refused >= 1100 - 16);
	/* A retransmission of one of its 16 starts again in that one's slot */
	CHECK_EQ(open_table(sa, &hog, 10005), 0);
	CHECK_EQ(open_table(sa, &hog, 12000), SA_STATUS_NO_RESOURCES);
	/* ... while another port is served */
	CHECK_EQ(open_table(sa, &other, 20000), 0);
	CHECK_EQ(nsent, 1);
	/*
	 * ACKs of the first segment with the window never opened (sa_hog.c)
	 * are no progress: the transfers end after RMPP_RETRIES timeouts of
	 * 500 ms, each with an ABORT, too many retries (IBA 13.6.3.3)
	 */
	req_from = &hog;
	for (unsigned int i = 0; i < 16; i++)
		ack(sa, 10000 + i, RMPP_TYPE_ACK, 1, 1);
	t0 = fake_us;
	for (unsigned int t = 1; t <= 21; t++) {
		fake_us = t0 + 250000 * t;
		for (unsigned int i = 0; i < 16; i++)
			ack(sa, 10000 + i, RMPP_TYPE_ACK, 1, 1);
	}
	req_from = NULL;
	CHECK_EQ(open_table(sa, &hog, 30000), SA_STATUS_NO_RESOURCES);
	fake_us = t0 + 5500000;
	nsent = 0;
	sa_tick(sa);
	CHECK_EQ(nsent, 16);
	for (unsigned int i = 0; i < nsent; i++) {
		m = sent_mad(i);
		CHECK_EQ(m.rmpp.type, RMPP_TYPE_ABORT);
		CHECK_EQ(m.rmpp.status, RMPP_STATUS_TMR);
		CHECK_EQ(sent_dlid[i], hog.slid);
	}
	CHECK_EQ(open_table(sa, &hog, 30001), 0);
	sa_free(sa);

	/* Bytes: a port may have 4 KB of answers in flight, all ports 6 KB */
	e.bytes_per_port = 4096;
	e.bytes_max = 6144;
	CHECK_EQ(sa_new(&e, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	{
		/* A NodeRecord table here: one 112-byte record per endport */
		unsigned int ok = 0, tab = 0;

		for (size_t i = 0; i < fab->nnodes; i++)
			for (unsigned int p = 0; p <= fab->nodes[i]->num_ports; p++)
				tab += fabric_is_endport(&fab->nodes[i]->ports[p]) &&
				       fab->nodes[i]->ports[p].lid ? 112 : 0;
		for (unsigned int i = 0; i < 10; i++)
			ok += open_table(sa, &hog, 40000 + i) == 0;
		CHECK_EQ(ok, 4096 / tab);
		ok = 0;
		for (unsigned int i = 0; i < 10; i++)
			ok += open_table(sa, &other, 50000 + i) == 0;
		CHECK_EQ(ok, (6144 - 4096 / tab * tab) / tab);
		/* A Get needs no room for a table: it is answered */
		request(sa, SA_METHOD_GET, SA_ATTR_NODE_RECORD, 0, NULL, 0, 60000);
		CHECK_EQ(last_status(), SA_STATUS_TOO_MANY);
	}
	sa_free(sa);
}

/* ---- RMPP against a receiver that ACKs as the Linux kernel's does (issue 26) ---- */

/*
 * A star of one switch and 31 hosts: a PathRecord table of every pair is
 * 1024 records, 328 segments, enough for several kernel windows
 */
static struct fabric *star_fabric(struct fakefab *sf)
{
	static char text[8192];
	size_t o = 0;
	struct fabric *f;
	struct lid_stats ls;
	struct route_stats rs;

	o += (size_t)snprintf(text + o, sizeof(text) - o, "Hca 1 \"c0\"\n[1] \"sw\"[1]\n");
	o += (size_t)snprintf(text + o, sizeof(text) - o, "Switch 31 \"sw\"\n");
	for (int i = 0; i < 31; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "[%d] \"c%d\"[1]\n", i + 1, i);
	for (int i = 1; i < 31; i++)
		o += (size_t)snprintf(text + o, sizeof(text) - o, "Hca 1 \"c%d\"\n[1] \"sw\"[%d]\n",
				      i, i + 1);
	CHECK(o < sizeof(text));
	CHECK_EQ(ff_parse(sf, text), 0);
	CHECK_EQ(fabric_new(&f), 0);
	CHECK_EQ(ff_discover(sf, f, NULL), 0);
	CHECK_EQ(lid_assign(f, 0, NULL, NULL, &ls), 0);
	CHECK_EQ(route_compute(route_engine_find("minhop"), f, NULL, &rs, NULL), 0);
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int p = 0; p <= f->nodes[i]->num_ports; p++) {
			struct fab_port *pp = &f->nodes[i]->ports[p];

			pp->pi.link_width_active = 2;
			pp->pi.link_speed_active = 1;
			if (fabric_is_endport(pp))
				hold_keys(pp, 0xffff, 0);
		}
	return f;
}

#define STAR_SEGS	328	/* 1024 PathRecords of 64 bytes, 200 bytes a segment */
#define KR_WINDOW	64	/* the kernel's: receive queue of 512 >> 3 */
#define KR_MAX		512

/*
 * The receiver of drivers/infiniband/core/mad_rmpp.c, as it behaves (not
 * its code): segment 1 starts it and is ACKed with NewWindowLast 1 + 64;
 * then an ACK only when the segments held in order reach NewWindowLast
 * (which moves on by 64) or the last one; a segment past NewWindowLast is
 * dropped; a segment held but not yet ACKed again is dropped; one at or
 * below its last ACK (or any, once complete) is ACKed again with its state.
 * Segments out of order are held until the gap is filled.
 */
struct krecv {
	uint64_t tid;
	bool started, complete;
	uint32_t seg_num;		/* held in order: 1..seg_num */
	uint32_t newwin, last_ack, last_seg;
	bool held[KR_MAX + 1];
	/* What the test does to it */
	uint32_t lose_seg;		/* lost on the way, once */
	unsigned int lose_acks;		/* the next ACKs are lost */
	uint32_t mute_after;		/* no ACK once this many are held (0: never mute) */
	/* What it saw */
	unsigned int data, past_window, dropped_held, acks, acks_lost;
	uint32_t max_seg;
	uint8_t abort_status;		/* an ABORT came, with this status */
	uint32_t below_ack;		/* segments resent at or below an ACK it had sent */
};

static void kr_ack(struct sa *sa, struct krecv *k)
{
	if (k->mute_after && k->seg_num >= k->mute_after)
		return;
	k->last_ack = k->seg_num;
	if (k->lose_acks) {
		k->lose_acks--;
		k->acks_lost++;
		return;
	}
	k->acks++;
	ack(sa, k->tid, RMPP_TYPE_ACK, k->seg_num, k->newwin);
}

static void kr_data(struct sa *sa, struct krecv *k, const struct sa_mad *m)
{
	uint32_t n = m->rmpp.data1;

	k->data++;
	if (n > k->max_seg)
		k->max_seg = n;
	if (n == k->lose_seg) {
		k->lose_seg = 0;
		return;
	}
	CHECK(n >= 1 && n <= KR_MAX);
	if (n < 1 || n > KR_MAX)
		return;
	if (!k->started) {
		if (n != 1 || !(m->rmpp.flags & RMPP_FLAG_FIRST))
			return;
		k->started = true;
		k->seg_num = 1;
		k->held[1] = true;
		k->newwin = 1;
		if (m->rmpp.flags & RMPP_FLAG_LAST)
			k->complete = true;
		else
			k->newwin += KR_WINDOW;
		kr_ack(sa, k);
		return;
	}
	if (n > k->newwin) {
		k->past_window++;
		return;
	}
	if (n <= k->last_ack || k->complete) {
		k->below_ack++;
		kr_ack(sa, k);
		return;
	}
	if (k->held[n]) {
		k->dropped_held++;
		return;
	}
	k->held[n] = true;
	if (m->rmpp.flags & RMPP_FLAG_LAST)
		k->last_seg = n;
	if (n != k->seg_num + 1)
		return;
	while (k->seg_num < KR_MAX && k->held[k->seg_num + 1])
		k->seg_num++;
	if (k->last_seg && k->seg_num == k->last_seg) {
		k->complete = true;
		kr_ack(sa, k);
	} else if (k->seg_num == k->newwin && !(k->mute_after && k->seg_num >= k->mute_after)) {
		k->newwin += KR_WINDOW;
		kr_ack(sa, k);
	}
}

/* Hand everything sent to the receiver, and its ACKs to the SA, until quiet */
static unsigned int kr_pump(struct sa *sa, struct krecv *k)
{
	static uint8_t batch[MAX_SENT][MAD_SIZE];
	unsigned int total = 0;

	while (nsent) {
		unsigned int n = nsent;

		memcpy(batch, sent, (size_t)n * MAD_SIZE);
		nsent = 0;
		total += n;
		for (unsigned int i = 0; i < n; i++) {
			struct sa_mad m;

			CHECK_EQ(sa_mad_decode(batch[i], MAD_SIZE, &m), 0);
			CHECK_EQ((uint32_t)m.hdr.tid, (uint32_t)k->tid);
			if (m.rmpp.type == RMPP_TYPE_ABORT)
				k->abort_status = m.rmpp.status;
			else if (m.rmpp.type == RMPP_TYPE_DATA)
				kr_data(sa, k, &m);
			else
				CHECK(!"neither DATA nor ABORT");
		}
	}
	return total;
}

static struct sa *star_sa(struct fabric *f, struct sa_env *e)
{
	struct sa *sa;

	*e = env;
	e->now = fake_now;
	fake_us = 1000000;
	CHECK_EQ(sa_new(e, &sa), 0);
	CHECK_EQ(sa_update(sa, f, NULL), 0);
	return sa;
}

/* Every pair's PathRecord, asked by a kernel-style receiver k */
static void kr_start(struct sa *sa, struct krecv *k, uint64_t tid)
{
	memset(k, 0, sizeof(*k));
	k->tid = tid;
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, tid);
}

/* The kernel's pattern, nothing lost: every window sent whole, no segment twice */
static void test_rmpp_kernel(void)
{
	struct fakefab sf;
	struct fabric *f = star_fabric(&sf);
	struct sa_env e;
	struct sa *sa = star_sa(f, &e);
	struct krecv k;
	struct sa_mad m;

	kr_start(sa, &k, 700);
	CHECK_EQ(nsent, 1);
	m = sent_mad(0);
	CHECK(m.rmpp.flags & RMPP_FLAG_FIRST);
	/* PayloadLength of segment 1: every segment's 220 bytes, less the padding */
	CHECK_EQ(m.rmpp.data2, STAR_SEGS * RMPP_SEG_PAYLOAD - (STAR_SEGS * SA_DATA_SIZE - 1024 * 64));
	/* Segment 1 alone; its ACK (1, 65) lets out 2..65, all of them at once */
	nsent = 0;
	kr_data(sa, &k, &m);
	CHECK_EQ(k.acks, 1);
	CHECK_EQ(nsent, KR_WINDOW);
	CHECK_EQ(sent_mad(0).rmpp.data1, 2);
	CHECK_EQ(sent_mad(KR_WINDOW - 1).rmpp.data1, KR_WINDOW + 1);
	/* On to the end: no timeout needed */
	kr_pump(sa, &k);
	CHECK(k.complete);
	CHECK_EQ(k.seg_num, STAR_SEGS);
	CHECK_EQ(k.data, STAR_SEGS);		/* each segment once */
	CHECK_EQ(k.past_window, 0);
	CHECK_EQ(k.dropped_held, 0);
	/* ACKs: segment 1, the end of every window, the last */
	CHECK_EQ(k.acks, 2 + (STAR_SEGS - 2) / KR_WINDOW);
	CHECK_EQ(sa_stats(sa)->rmpp_done, 1);
	CHECK_EQ(sa_stats(sa)->rmpp_aborted, 0);
	CHECK_EQ(sa_next_timeout_ms(sa), -1);	/* nothing left open */
	sa_free(sa);
	fabric_free(f);
	ff_free(&sf);
}

/* A segment lost in mid-window: after the timeout the window again, from the last ACK */
static void test_rmpp_lost_segment(void)
{
	struct fakefab sf;
	struct fabric *f = star_fabric(&sf);
	struct sa_env e;
	struct sa *sa = star_sa(f, &e);
	struct krecv k;
	unsigned int n;

	kr_start(sa, &k, 701);
	k.lose_seg = 30;
	kr_pump(sa, &k);
	/* 1..65 went out; 30 never arrived: no ACK, the receiver holds 31..65 */
	CHECK_EQ(k.max_seg, 65);
	CHECK_EQ(k.seg_num, 29);
	CHECK(!k.complete);
	/* Nothing is resent before the timeout */
	CHECK_EQ(sa_next_timeout_ms(sa), 500);
	fake_us += 499000;
	sa_tick(sa);
	CHECK_EQ(nsent, 0);
	fake_us += 1000;
	CHECK_EQ(sa_next_timeout_ms(sa), 0);
	sa_tick(sa);
	/* Go back to the last ACK (1): 2..65, as far as the window reaches */
	CHECK_EQ(nsent, 64);
	CHECK_EQ(sent_mad(0).rmpp.data1, 2);
	CHECK_EQ(sent_mad(63).rmpp.data1, 65);
	n = kr_pump(sa, &k);
	/*
	 * The receiver dropped 2..29 (held, not ACKed), took 30, ACKed 65 and
	 * then each of 31..65 again (at or below its last ACK): on to the end
	 */
	CHECK_EQ(k.dropped_held, 28);
	CHECK_EQ(k.below_ack, 35);
	CHECK(k.complete);
	CHECK_EQ(k.seg_num, STAR_SEGS);
	CHECK_EQ(n, 64 + STAR_SEGS - 65);
	CHECK_EQ(k.past_window, 0);
	CHECK_EQ(sa_stats(sa)->rmpp_done, 1);
	sa_free(sa);
	fabric_free(f);
	ff_free(&sf);
}

/* An ACK lost: the window again after the timeout; the receiver ACKs what it had */
static void test_rmpp_lost_ack(void)
{
	struct fakefab sf;
	struct fabric *f = star_fabric(&sf);
	struct sa_env e;
	struct sa *sa = star_sa(f, &e);
	struct krecv k;

	kr_start(sa, &k, 702);
	/* Segment 1's ACK gets through, the next one (65, 129) does not */
	{
		struct sa_mad m = sent_mad(0);

		nsent = 0;
		kr_data(sa, &k, &m);
	}
	CHECK_EQ(nsent, 64);
	k.lose_acks = 1;
	kr_pump(sa, &k);
	CHECK_EQ(k.acks_lost, 1);
	CHECK_EQ(k.seg_num, 65);
	CHECK_EQ(k.max_seg, 65);
	fake_us += 500000;
	sa_tick(sa);
	CHECK_EQ(nsent, 64);	/* 2..65 again */
	kr_pump(sa, &k);
	/* Each of them ACKed again (the receiver had ACKed 65); the first moved the SA on */
	CHECK_EQ(k.below_ack, 64);
	CHECK(k.complete);
	CHECK_EQ(k.seg_num, STAR_SEGS);
	/* 66..328 once each after the resent 64: nothing sent twice for the 63 repeated ACKs */
	CHECK_EQ(k.data, 1 + 64 + 64 + (STAR_SEGS - 65));
	CHECK_EQ(sa_stats(sa)->rmpp_done, 1);
	sa_free(sa);
	fabric_free(f);
	ff_free(&sf);
}

/*
 * A receiver that stops ACKing: the window resent at every timeout,
 * RMPP_RETRIES times, never an ACKed segment; then an ABORT, too many
 * retries. A receiver that never ACKed segment 1 gets neither.
 */
static void test_rmpp_stalled(void)
{
	struct fakefab sf;
	struct fabric *f = star_fabric(&sf);
	struct sa_env e;
	struct sa *sa = star_sa(f, &e);
	struct krecv k;
	unsigned int resent = 0, ticks = 0;

	kr_start(sa, &k, 703);
	k.mute_after = 100;
	kr_pump(sa, &k);
	/* ACKed 1 and 65; 66..129 sent, the ACK of 129 never comes */
	CHECK_EQ(k.acks, 2);
	CHECK_EQ(k.max_seg, 129);
	while (!k.abort_status && ticks < 100) {
		fake_us += 500000;
		ticks++;
		sa_tick(sa);
		for (unsigned int i = 0; i < nsent; i++) {
			struct sa_mad m = sent_mad(i);

			if (m.rmpp.type == RMPP_TYPE_DATA) {
				CHECK(m.rmpp.data1 > 65 && m.rmpp.data1 <= 129);
				resent++;
			}
		}
		kr_pump(sa, &k);
	}
	CHECK_EQ(k.abort_status, RMPP_STATUS_TMR);
	CHECK_EQ(ticks, 11);
	CHECK_EQ(resent, 10 * 64);
	CHECK_EQ(k.past_window, 0);
	CHECK_EQ(sa_stats(sa)->rmpp_aborted, 1);
	/* Nothing more after the ABORT */
	fake_us += 500000;
	sa_tick(sa);
	CHECK_EQ(nsent, 0);
	CHECK_EQ(sa_next_timeout_ms(sa), -1);

	/* Segment 1 never ACKed (a client without RMPP): one timeout, then silence */
	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 704);
	CHECK_EQ(nsent, 1);
	nsent = 0;
	fake_us += 500000;
	sa_tick(sa);
	CHECK_EQ(nsent, 0);
	CHECK_EQ(sa_stats(sa)->rmpp_aborted, 2);
	CHECK_EQ(sa_next_timeout_ms(sa), -1);
	sa_free(sa);
	fabric_free(f);
	ff_free(&sf);
}

/*
 * A receiver with a window wider than a burst gets all of it, a burst at a
 * time (sa_next_timeout_ms says 0 while one waits); a receiver that makes
 * progress keeps its transfer past the retries, but not past its lifetime.
 */
static void test_rmpp_window_and_time(void)
{
	struct fakefab sf;
	struct fabric *f = star_fabric(&sf);
	struct sa_env e;
	struct sa *sa = star_sa(f, &e);
	uint32_t top = 1;
	unsigned int steps = 0;

	request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 705);
	nsent = 0;
	ack(sa, 705, RMPP_TYPE_ACK, 1, 300);
	CHECK_EQ(nsent, 64);
	CHECK_EQ(sa_next_timeout_ms(sa), 0);
	while (nsent && steps++ < 10) {
		top = sent_mad(nsent - 1).rmpp.data1;
		nsent = 0;
		sa_tick(sa);
	}
	CHECK_EQ(top, 300);
	CHECK_EQ(steps, 5);	/* 64 + 64 + 64 + 64 + 43 */
	CHECK_EQ(sa_next_timeout_ms(sa), 500);
	/*
	 * One segment more ACKed every 4 s, sa_tick every 500 ms between (the
	 * window resent after each timeout, a burst a tick, never an ACKed
	 * segment): progress, so the transfer outlives RMPP_RETRIES timeouts
	 */
	for (uint32_t s = 2; s <= 8; s++) {
		for (int t = 0; t < 8; t++) {
			fake_us += 500000;
			nsent = 0;
			sa_tick(sa);
			CHECK(nsent > 0);
			for (unsigned int i = 0; i < nsent; i++) {
				CHECK_EQ(sent_mad(i).rmpp.type, RMPP_TYPE_DATA);
				CHECK(sent_mad(i).rmpp.data1 >= s);
			}
		}
		ack(sa, 705, RMPP_TYPE_ACK, s, 300);
	}
	/* 30 s after it started: still open; past that: ABORT, total time too long */
	fake_us = 1000000 + 30000000;
	sa_tick(sa);
	CHECK_EQ(sa_stats(sa)->rmpp_aborted, 0);
	fake_us++;
	nsent = 0;
	sa_tick(sa);
	check_abort(705, RMPP_STATUS_T2L);
	CHECK_EQ(sa_stats(sa)->rmpp_aborted, 1);
	sa_free(sa);
	fabric_free(f);
	ff_free(&sf);
}

/* Segment n of nseg of MultiPathRecord rec (len bytes), TID tid, as a sender sends it */
static void mpr_seg(struct sa *sa, uint64_t mask, const uint8_t *rec, size_t len, uint64_t tid,
		    uint32_t n, uint8_t flags)
{
	uint32_t nseg = (uint32_t)((len + SA_DATA_SIZE - 1) / SA_DATA_SIZE);
	size_t off = (size_t)(n - 1) * SA_DATA_SIZE;
	size_t chunk = len - off < SA_DATA_SIZE ? len - off : SA_DATA_SIZE;
	struct sa_mad m = { 0 };
	uint8_t buf[MAD_SIZE];

	m.hdr.base_version = 1;
	m.hdr.mgmt_class = MAD_CLASS_SA;
	m.hdr.class_version = SA_CLASS_VERSION;
	m.hdr.method = SA_METHOD_GET_MULTI;
	m.hdr.attr_id = SA_ATTR_MULTIPATH_RECORD;
	m.hdr.tid = tid;
	m.comp_mask = mask;
	m.rmpp.version = RMPP_VERSION;
	m.rmpp.type = RMPP_TYPE_DATA;
	m.rmpp.flags = RMPP_FLAG_ACTIVE | flags;
	if (!flags)
		m.rmpp.flags |= (n == 1 ? RMPP_FLAG_FIRST : 0) | (n == nseg ? RMPP_FLAG_LAST : 0);
	m.rmpp.data1 = n;
	m.rmpp.data2 = n == 1 ? (uint32_t)(nseg * RMPP_SEG_PAYLOAD - (nseg * SA_DATA_SIZE - len)) :
		       n == nseg ? (uint32_t)(20 + chunk) : 0;
	if (n <= nseg)
		memcpy(m.data, rec + off, chunk);
	sa_mad_encode(&m, buf);
	sa_handle(sa, buf, MAD_SIZE, &client);
}

/* The ACK among what was sent since nsent was 0, or one with type 0 */
static struct sa_mad ack_sent(void)
{
	for (unsigned int i = 0; i < nsent; i++) {
		struct sa_mad m = sent_mad(i);

		if (m.rmpp.type == RMPP_TYPE_ACK)
			return m;
	}
	return (struct sa_mad){ 0 };
}

/*
 * A MultiPathRecord request as a Linux kernel sender sends it (mad_rmpp.c):
 * segment 1 alone, then up to the window given, the window again from the
 * last ACK when one is late; and its DS ACK (segment 0) after our last ACK
 */
static void test_multipath_kernel_sender(void)
{
	struct sa *sa;
	struct fab_port *h1 = port_of("h1", 1), *h3 = port_of("h3", 1), *h2b = port_of("h2", 2);
	struct multipath_record mp = { .numb_path = 5, .sgid_count = 1, .dgid_count = 247 };
	uint64_t mask = MPR_CM_SGID_COUNT | MPR_CM_DGID_COUNT | MPR_CM_NUMB_PATH;
	static uint8_t rec[24 + 248 * 16];
	size_t len = sizeof(rec);	/* 3992 bytes: 20 segments */
	uint32_t win, lastwin;
	struct sa_mad a;

	CHECK_EQ(sa_new(&env, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	multipath_record_encode(&mp, rec);
	gid_encode(env.subnet_prefix, h3->guid, rec + 24);
	for (int i = 0; i < 247; i++)
		gid_encode(env.subnet_prefix, (i % 2 ? h1 : h2b)->guid, rec + 40 + 16 * i);
	/* Segment 1 alone: ACK (1, W) with room for more, but not all 20 */
	nsent = 0;
	mpr_seg(sa, mask, rec, len, 1800, 1, 0);
	CHECK_EQ(nsent, 1);
	a = ack_sent();
	CHECK_EQ(a.hdr.method, SA_METHOD_GET_MULTI_RESP);
	CHECK_EQ(a.rmpp.data1, 1);
	win = a.rmpp.data2;
	CHECK(win >= 3 && win < 19);
	/* Past the window given: dropped, no ACK (IBA 13.6.3.2) */
	nsent = 0;
	mpr_seg(sa, mask, rec, len, 1800, win + 1, 0);
	CHECK_EQ(nsent, 0);
	/* Segment 2; then 1 again (our ACK lost, the kernel went back): where we are */
	nsent = 0;
	mpr_seg(sa, mask, rec, len, 1800, 2, 0);
	a = ack_sent();
	CHECK_EQ(a.rmpp.data1, 2);
	lastwin = a.rmpp.data2;
	CHECK(lastwin >= win);
	nsent = 0;
	mpr_seg(sa, mask, rec, len, 1800, 1, 0);
	a = ack_sent();
	CHECK_EQ(a.rmpp.data1, 2);
	CHECK_EQ(a.rmpp.data2, lastwin);
	/* 3..10 in a row; every ACK's window at least the one before */
	for (uint32_t n = 3; n <= 10; n++) {
		nsent = 0;
		mpr_seg(sa, mask, rec, len, 1800, n, 0);
		a = ack_sent();
		CHECK_EQ(a.rmpp.data1, n);
		CHECK(a.rmpp.data2 >= lastwin);
		lastwin = a.rmpp.data2;
	}
	/* The window again from an older ACK: each answered with where we are */
	nsent = 0;
	mpr_seg(sa, mask, rec, len, 1800, 5, 0);
	a = ack_sent();
	CHECK_EQ(a.rmpp.data1, 10);
	CHECK_EQ(a.rmpp.data2, lastwin);
	/* The rest, and the last: its ACK's window no smaller than before */
	for (uint32_t n = 11; n <= 20; n++) {
		nsent = 0;
		mpr_seg(sa, mask, rec, len, 1800, n, 0);
		a = sent_mad(0);
		CHECK_EQ(a.rmpp.type, RMPP_TYPE_ACK);
		CHECK_EQ(a.rmpp.data1, n);
		CHECK(a.rmpp.data2 >= lastwin);
		lastwin = a.rmpp.data2;
	}
	CHECK(lastwin >= 20);
	/* ... and the answer's segment 1 (5 paths: one segment) */
	CHECK_EQ(nsent, 2);
	CHECK_EQ(sent_mad(1).hdr.method, SA_METHOD_GET_MULTI_RESP);
	CHECK_EQ(sent_mad(1).rmpp.type, RMPP_TYPE_DATA);
	CHECK_EQ(sent_mad(1).hdr.status, 0);
	CHECK_EQ(sent_mad(1).attr_offset, 8);
	/* The kernel's DS ACK (segment 0, window 1): nothing wrong, nothing sent */
	nsent = 0;
	rmpp_ctl_method(sa, 1800, SA_METHOD_GET_MULTI, RMPP_TYPE_ACK, 0, 0, 1);
	CHECK_EQ(nsent, 0);

	/* A sender that aborts: the request is dropped, its next segment finds nothing */
	nsent = 0;
	mpr_seg(sa, mask, rec, len, 1801, 1, 0);
	mpr_seg(sa, mask, rec, len, 1801, 2, 0);
	CHECK_EQ(nsent, 2);
	rmpp_ctl_method(sa, 1801, SA_METHOD_GET_MULTI, RMPP_TYPE_ABORT, RMPP_STATUS_T2L, 0, 0);
	nsent = 0;
	mpr_seg(sa, mask, rec, len, 1801, 3, 0);
	CHECK_EQ(nsent, 0);
	/* First set on a segment other than 1: ABORT, BAD_SEG */
	nsent = 0;
	mpr_seg(sa, mask, rec, len, 1802, 1, 0);
	mpr_seg(sa, mask, rec, len, 1802, 2, RMPP_FLAG_FIRST);
	CHECK_EQ(nsent, 2);
	a = sent_mad(1);
	CHECK_EQ(a.hdr.method, SA_METHOD_GET_MULTI_RESP);
	CHECK_EQ(a.rmpp.type, RMPP_TYPE_ABORT);
	CHECK_EQ(a.rmpp.status, RMPP_STATUS_BAD_SEG);
	/* Longer than the SA takes, by segment 1's PayloadLength: refused at once */
	{
		static uint8_t big[50 * SA_DATA_SIZE];

		memcpy(big, rec, len);
		nsent = 0;
		mpr_seg(sa, mask, big, sizeof(big), 1803, 1, 0);
		CHECK_EQ(last_status(), SA_STATUS_NO_RESOURCES);
	}
	sa_free(sa);
}

/* PathRecord.SL is the routing engine's SL for that pair (a ring needs two VLs) */
static void test_path_sl(void)
{
	static const char *ring =
		"Hca 1 \"h0\"\n[1] \"r0\"[3]\n"
		"Switch 4 \"r0\"\n[1] \"r1\"[2]\n[2] \"r4\"[1]\n[3] \"h0\"[1]\n"
		"Switch 4 \"r1\"\n[1] \"r2\"[2]\n[2] \"r0\"[1]\n[3] \"h1\"[1]\n"
		"Switch 4 \"r2\"\n[1] \"r3\"[2]\n[2] \"r1\"[1]\n[3] \"h2\"[1]\n"
		"Switch 4 \"r3\"\n[1] \"r4\"[2]\n[2] \"r2\"[1]\n[3] \"h3\"[1]\n"
		"Switch 4 \"r4\"\n[1] \"r0\"[2]\n[2] \"r3\"[1]\n[3] \"h4\"[1]\n"
		"Hca 1 \"h1\"\n[1] \"r1\"[3]\n"
		"Hca 1 \"h2\"\n[1] \"r2\"[3]\n"
		"Hca 1 \"h3\"\n[1] \"r3\"[3]\n"
		"Hca 1 \"h4\"\n[1] \"r4\"[3]\n";
	struct route_opts opts = { .max_vls = 8 };
	struct route_result *rr = NULL;
	struct fakefab rf = { 0 };
	struct fabric *f = NULL;
	struct route_stats rs;
	struct lid_stats ls;
	struct sa *sa;
	unsigned int nonzero = 0, checked = 0;

	CHECK_EQ(ff_parse(&rf, ring), 0);
	CHECK_EQ(fabric_new(&f), 0);
	CHECK_EQ(ff_discover(&rf, f, NULL), 0);
	CHECK_EQ(lid_assign(f, 0, NULL, NULL, &ls), 0);
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int p = 0; p <= f->nodes[i]->num_ports; p++) {
			f->nodes[i]->ports[p].pi.vl_cap = 4;	/* VL0-7 */
			f->nodes[i]->ports[p].pi.link_width_active = 2;
			f->nodes[i]->ports[p].pi.link_speed_active = 1;
		}
	CHECK_EQ(route_compute(route_engine_find("dfree"), f, &opts, &rs, &rr), 0);
	CHECK(route_vls_used(rr) >= 2);
	CHECK_EQ(sa_new(&env, &sa), 0);
	CHECK_EQ(sa_update(sa, f, rr), 0);
	for (uint16_t s = 1; s <= f->max_lid; s++) {
		for (uint16_t d = 1; d <= f->max_lid; d++) {
			struct path_record pr = { .slid = s, .dlid = d }, got;
			uint8_t rec[64];
			struct sa_mad m;
			int want = route_path_sl(rr, s, d);

			if (!f->by_lid[s] || !f->by_lid[d] || s == d ||
			    f->by_lid[s]->node->type == NODE_TYPE_SWITCH)
				continue;
			path_record_encode(&pr, rec);
			request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD, PR_CM_SLID | PR_CM_DLID,
				rec, 64, 100);
			CHECK_EQ(last_status(), 0);
			CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
			path_record_decode(m.data, &got);
			CHECK(want >= 0);
			CHECK_EQ(got.sl, want);
			nonzero += got.sl != 0;
			checked++;
			/* Asking for another SL finds no path */
			pr.sl = (uint8_t)(want + 1);
			path_record_encode(&pr, rec);
			request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD,
				PR_CM_SLID | PR_CM_DLID | PR_CM_SL, rec, 64, 101);
			CHECK_EQ(last_status(), SA_STATUS_NO_RECORDS);
		}
	}
	CHECK(checked >= 5 * 9);
	CHECK(nonzero > 0);
	sa_free(sa);
	route_result_free(rr);
	fabric_free(f);
	ff_free(&rf);
}

/* ---- InformInfo, Reports (issue 16) ---- */

static uint16_t ii_send(struct sa *sa, const struct inform_info *ii, const struct fab_port *from,
			uint32_t qpn)
{
	struct mad_addr a = { .slid = from->lid, .qpn = qpn };
	uint8_t rec[INFORM_SIZE];

	inform_info_encode(ii, rec);
	req_from = &a;
	request(sa, SA_METHOD_SET, SA_ATTR_INFORM_INFO, 0, rec, INFORM_SIZE, 1400 + nsent);
	req_from = NULL;
	return last_status();
}

/* Reports among what the SA sent: count, and the last one's notice */
static unsigned int reports(uint16_t trap, struct notice *last, uint16_t *dlid, uint32_t *tid)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nsent; i++) {
		struct sa_mad m;
		struct notice no;

		if (sa_mad_decode(sent[i], MAD_SIZE, &m) < 0 || m.hdr.method != SA_METHOD_REPORT)
			continue;
		CHECK_EQ(m.hdr.attr_id, SA_ATTR_NOTICE);
		sa_notice_decode(m.data, &no);
		if (no.trap_num != trap)
			continue;
		n++;
		if (last)
			*last = no;
		if (dlid)
			*dlid = sent_dlid[i];
		if (tid)
			*tid = (uint32_t)m.hdr.tid;
	}
	return n;
}

static void report_resp(struct sa *sa, uint32_t tid, uint16_t slid)
{
	struct sa_mad m = { 0 };
	struct mad_addr a = { .slid = slid, .qpn = 1 };
	uint8_t buf[MAD_SIZE];

	m.hdr.base_version = 1;
	m.hdr.mgmt_class = MAD_CLASS_SA;
	m.hdr.class_version = SA_CLASS_VERSION;
	m.hdr.method = SA_METHOD_REPORT_RESP;
	m.hdr.attr_id = SA_ATTR_NOTICE;
	m.hdr.tid = tid;
	sa_mad_encode(&m, buf);
	nsent = 0;
	sa_handle(sa, buf, MAD_SIZE, &a);
}

/* The test fabric with host h3 unplugged */
static struct fabric *fabric_without(const char *host)
{
	struct fakefab f2;
	struct fabric *f;
	struct lid_stats ls;
	struct route_stats rs;
	int at;

	CHECK_EQ(ff_parse(&f2, net), 0);
	at = ff_find(&f2, host);
	CHECK(at >= 0);
	f2.nodes[at].dead = true;
	CHECK_EQ(fabric_new(&f), 0);
	CHECK_EQ(ff_discover(&f2, f, NULL), 0);
	/* The same LIDs the others had: they are kept as the ports hold them */
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int p = 0; p <= f->nodes[i]->num_ports; p++) {
			struct fab_port *pp = &f->nodes[i]->ports[p];
			const struct fab_node *old = fabric_find(fab, f->nodes[i]->guid);

			if (old && fabric_is_endport(pp))
				pp->pi.lid = old->ports[p].lid;
			pp->pi.link_width_active = 2;
			pp->pi.link_speed_active = 1;
			if (fabric_is_endport(pp))
				hold_keys(pp, 0xffff, 0);
		}
	CHECK_EQ(lid_assign(f, 0, NULL, NULL, &ls), 0);
	CHECK_EQ(route_compute(route_engine_find("minhop"), f, NULL, &rs, NULL), 0);
	ff_free(&f2);
	return f;
}

static void test_inform(void)
{
	struct sa_env e2 = env;
	struct sa *sa;
	struct fab_port *h1 = port_of("h1", 1), *h3 = port_of("h3", 1), *h2 = port_of("h2", 1);
	struct inform_info ii = { .lid_begin = 0xffff, .generic = 1, .subscribe = 1,
				  .type = NOTICE_TYPE_SM, .trap_num = 65,
				  .producer = NOTICE_PRODUCER_CLASS_MGR };
	struct fabric *gone = fabric_without("h3");
	uint64_t h3guid = h3->guid;
	struct notice no;
	uint16_t dlid = 0;
	uint32_t tid = 0;
	uint8_t gid[16];
	uint8_t *data;
	size_t n, rsize;

	e2.now = fake_now;
	e2.trusted_key = 0x5eed;
	e2.sm_lid = 1;
	fake_us = 5000000;
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	/* Get of InformInfo, Notice: not methods the SA has */
	request(sa, SA_METHOD_GET, SA_ATTR_INFORM_INFO, 0, NULL, 0, 1300);
	CHECK_EQ(last_status(), MAD_STATUS_METHOD_ATTR_UNSUPP);
	/* srp_daemon's subscription: 65 (and 64 below), from its own UD QP */
	CHECK_EQ(ii_send(sa, &ii, h1, 0x1234), 0);
	CHECK_EQ(sent[0][3], SA_METHOD_GET_RESP);
	CHECK_EQ(wire_bits_get(sent[0], 16 * 8, 16), SA_ATTR_INFORM_INFO);
	ii.trap_num = 64;
	CHECK_EQ(ii_send(sa, &ii, h1, 0x1234), 0);
	/* h2 subscribes to everything, twice: the second is the same subscription */
	{
		struct inform_info all = { .lid_begin = 0xffff, .generic = 1, .subscribe = 1,
					   .type = 0xffff, .trap_num = 0xffff,
					   .producer = 0xffffff };

		CHECK_EQ(ii_send(sa, &all, h2, 1), 0);
		CHECK_EQ(ii_send(sa, &all, h2, 1), 0);
	}
	CHECK_EQ(sa_inform_count(sa), 3);
	/* Unsubscribing from something never subscribed: refused */
	ii.trap_num = 99;
	ii.subscribe = 0;
	CHECK_EQ(ii_send(sa, &ii, h1, 0x1234), SA_STATUS_REQ_INVALID);
	ii.subscribe = 1;
	/* InformInfoRecords: one's own, or all with the SM_Key */
	{
		struct mad_addr a = { .slid = h1->lid, .qpn = 1 };

		req_from = &a;
		n = get_table(sa, SA_ATTR_INFORM_INFO_RECORD, 0, NULL, 0, &data, &rsize);
		CHECK_EQ(n, 2);
		CHECK_EQ(rsize, 64);
		gid_encode(env.subnet_prefix, h1->guid, gid);
		CHECK(!memcmp(data, gid, 16));
		free(data);
		req_sm_key = 0x5eed;
		n = get_table(sa, SA_ATTR_INFORM_INFO_RECORD, 0, NULL, 0, &data, &rsize);
		CHECK_EQ(n, 3);
		free(data);
		req_sm_key = 0;
		req_from = NULL;
	}

	/* h3 unplugged: a Report of trap 65 to h1's QP, and h2; h1 answers, h2 not */
	nsent = 0;
	CHECK_EQ(sa_update(sa, gone, NULL), 0);
	CHECK_EQ(reports(65, &no, &dlid, &tid), 2);
	CHECK_EQ(reports(64, NULL, NULL, NULL), 0);
	gid_encode(env.subnet_prefix, h3guid, gid);
	CHECK(!memcmp(no.details + 6, gid, 16));
	CHECK_EQ(no.type, NOTICE_TYPE_SM);
	CHECK_EQ(no.producer, NOTICE_PRODUCER_CLASS_MGR);
	CHECK_EQ(no.issuer_lid, 1);
	CHECK_EQ(sa_inform_stats(sa)->out_of_service, 1);
	{
		uint32_t tid_h1 = 0, tid_h2 = 0;

		for (unsigned int i = 0; i < nsent; i++) {
			struct sa_mad m;

			CHECK_EQ(sa_mad_decode(sent[i], MAD_SIZE, &m), 0);
			if (sent_dlid[i] == h1->lid) {
				CHECK_EQ(sent_qpn[i], 0x1234);
				tid_h1 = (uint32_t)m.hdr.tid;
			} else {
				CHECK_EQ(sent_dlid[i], h2->lid);
				tid_h2 = (uint32_t)m.hdr.tid;
			}
		}
		CHECK(tid_h1 && tid_h2);
		report_resp(sa, tid_h1, h1->lid);
		/* A ReportResp from someone else, or another TID, settles nothing */
		report_resp(sa, tid_h2, h1->lid);
		CHECK_EQ(sa_inform_stats(sa)->reports_answered, 1);
		/* h2's is resent until answered, at most 8 times in all */
		for (int k = 0; k < 20; k++) {
			fake_us += 1000000;
			nsent = 0;
			sa_tick(sa);
			for (unsigned int i = 0; i < nsent; i++)
				CHECK_EQ(sent_dlid[i], h2->lid);
		}
		CHECK_EQ(sa_inform_stats(sa)->reports_sent, 9);
		CHECK_EQ(sa_inform_stats(sa)->reports_dropped, 1);
	}

	/* Plugged back: trap 64 */
	nsent = 0;
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	CHECK_EQ(reports(64, &no, &dlid, &tid), 2);
	CHECK(!memcmp(no.details + 6, gid, 16));
	CHECK_EQ(reports(65, NULL, NULL, NULL), 0);
	/* No sweep changes anything: no Reports */
	nsent = 0;
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	CHECK_EQ(nsent, 0);

	/* A group created and deleted: 66 and 67 to h2 (it asked for everything) */
	{
		uint8_t mgid[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff };

		nsent = 0;
		sa_report_mcast(sa, mgid, 0xffff, true);
		CHECK_EQ(reports(66, &no, &dlid, NULL), 1);
		CHECK_EQ(dlid, h2->lid);
		CHECK(!memcmp(no.details + 6, mgid, 16));
		nsent = 0;
		sa_report_mcast(sa, mgid, 0xffff, false);
		CHECK_EQ(reports(67, NULL, NULL, NULL), 1);
		/* Of a partition h2 is not in: not to h2 */
		nsent = 0;
		sa_report_mcast(sa, mgid, 0x8005, true);
		CHECK_EQ(reports(66, NULL, NULL, NULL), 0);
	}

	/* Trap 144 from h3's SMA (IsDeviceManagementSupported now set) goes on as it came */
	{
		struct notice t = { .generic = 1, .type = NOTICE_TYPE_INFO, .producer = 1,
				    .trap_num = 144, .issuer_lid = h3->lid };
		uint8_t d[NOTICE_SIZE];

		wire_bits_set(t.details, 16, 16, h3->lid);
		wire_bits_set(t.details, 48, 32, 1u << 19);
		sa_notice_encode(&t, d);
		nsent = 0;
		sa_report_forward(sa, d, SMP_DATA_SIZE, h3->lid);
		CHECK_EQ(reports(144, &no, &dlid, NULL), 1);
		CHECK_EQ(dlid, h2->lid);
		CHECK_EQ(wire_bits_get(no.details, 48, 32), 1u << 19);
		gid_encode(env.subnet_prefix, h3->guid, gid);
		CHECK(!memcmp(no.issuer_gid, gid, 16));
		/* Other traps are not forwarded */
		t.trap_num = 128;
		sa_notice_encode(&t, d);
		nsent = 0;
		sa_report_forward(sa, d, SMP_DATA_SIZE, h3->lid);
		CHECK_EQ(nsent, 0);
	}

	/*
	 * Trap 129 (local link integrity threshold reached, IBA 14.2.5.1) for
	 * an unhealthy port, as the port's node issues it: urgent, producer
	 * the node's type, issuer its LID, LIDADDR and PORTNO in the details
	 */
	{
		struct fab_port *sw = h3->peer, *ep = &sw->node->ports[0];

		nsent = 0;
		CHECK_EQ(sa_report_port_trap(sa, 129, sw->node->guid, sw->num), 1);
		CHECK_EQ(reports(129, &no, &dlid, NULL), 1);
		CHECK_EQ(dlid, h2->lid);
		CHECK_EQ(no.type, NOTICE_TYPE_URGENT);
		CHECK_EQ(no.producer, NODE_TYPE_SWITCH);
		CHECK_EQ(no.issuer_lid, ep->lid);
		CHECK_EQ(wire_bits_get(no.details, 16, 16), ep->lid);
		CHECK_EQ(wire_bits_get(no.details, 32, 8), sw->num);
		gid_encode(env.subnet_prefix, ep->guid, gid);
		CHECK(!memcmp(no.issuer_gid, gid, 16));
		/* A CA port: its own LID */
		nsent = 0;
		CHECK_EQ(sa_report_port_trap(sa, 129, h3->node->guid, h3->num), 1);
		CHECK_EQ(reports(129, &no, NULL, NULL), 1);
		CHECK_EQ(no.issuer_lid, h3->lid);
		CHECK_EQ(no.producer, NODE_TYPE_CA);
		/* A port smd does not know: nothing */
		nsent = 0;
		CHECK_EQ(sa_report_port_trap(sa, 129, 0x1234, 1), 0);
		CHECK_EQ(sa_report_port_trap(sa, 129, sw->node->guid, 0), 0);
		CHECK_EQ(nsent, 0);
		CHECK_EQ(sa_inform_stats(sa)->port_traps, 2);
	}

	/* Unsubscribed: no more Reports to h1 */
	ii.subscribe = 0;
	ii.trap_num = 65;
	CHECK_EQ(ii_send(sa, &ii, h1, 0x1234), 0);
	nsent = 0;
	CHECK_EQ(sa_update(sa, gone, NULL), 0);
	CHECK_EQ(reports(65, NULL, &dlid, NULL), 1);
	CHECK_EQ(dlid, h2->lid);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);

	/* h2 leaves the fabric: its subscription goes, nothing is sent to it */
	{
		struct fabric *no_h2 = fabric_without("h2");

		nsent = 0;
		CHECK_EQ(sa_update(sa, no_h2, NULL), 0);
		CHECK_EQ(sa_inform_stats(sa)->dropped_subs, 1);
		for (unsigned int i = 0; i < nsent; i++)
			CHECK(sent_dlid[i] != h2->lid);
		CHECK_EQ(sa_inform_count(sa), 1);	/* h1's 64 is left */
		CHECK_EQ(sa_update(sa, fab, NULL), 0);
		fabric_free(no_h2);
	}
	sa_free(sa);
	fabric_free(gone);
}

/*
 * Unsubscribing ends the Reports of that subscription still waiting for a
 * ReportResp; those of the port's other subscriptions go on being resent
 * (found by review while extending the SA fuzzer: the retries went on)
 */
static void test_inform_unsubscribe_reports(void)
{
	struct sa_env e2 = env;
	struct sa *sa;
	struct fab_port *h1 = port_of("h1", 1);
	struct inform_info ii = { .lid_begin = 0xffff, .generic = 1, .subscribe = 1,
				  .type = NOTICE_TYPE_SM, .trap_num = 66,
				  .producer = NOTICE_PRODUCER_CLASS_MGR };
	uint8_t mgid[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7 };
	unsigned int r66 = 0, r67 = 0;

	e2.now = fake_now;
	fake_us = 5000000;
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	CHECK_EQ(ii_send(sa, &ii, h1, 1), 0);
	ii.trap_num = 67;
	CHECK_EQ(ii_send(sa, &ii, h1, 1), 0);
	/* A group created and deleted: one Report each, neither answered */
	nsent = 0;
	sa_report_mcast(sa, mgid, 0xffff, true);
	sa_report_mcast(sa, mgid, 0xffff, false);
	CHECK_EQ(reports(66, NULL, NULL, NULL), 1);
	CHECK_EQ(reports(67, NULL, NULL, NULL), 1);
	/* Unsubscribed from 66 */
	ii.trap_num = 66;
	ii.subscribe = 0;
	CHECK_EQ(ii_send(sa, &ii, h1, 1), 0);
	CHECK_EQ(sa_inform_count(sa), 1);
	for (int k = 0; k < 20; k++) {
		fake_us += 1000000;
		nsent = 0;
		sa_tick(sa);
		r66 += reports(66, NULL, NULL, NULL);
		r67 += reports(67, NULL, NULL, NULL);
	}
	CHECK_EQ(r66, 0);
	CHECK_EQ(r67, 7);	/* 8 tries in all */
	CHECK_EQ(sa_inform_stats(sa)->reports_dropped, 1);
	sa_free(sa);
}

/* ---- Answers addressed as their requests came (issue 26) ---- */

static bool same_addr(const struct mad_addr *a, const struct mad_addr *b)
{
	return a->slid == b->slid && a->qpn == b->qpn && a->sl == b->sl &&
	       a->pkey_index == b->pkey_index && a->grh == b->grh &&
	       (!a->grh || (a->gid_index == b->gid_index && a->hop_limit == b->hop_limit &&
			    a->traffic_class == b->traffic_class &&
			    a->flow_label == b->flow_label && !memcmp(a->gid, b->gid, 16)));
}

/* Every MAD sent since nsent was cleared went to *to, as it is */
static unsigned int all_sent_to(const struct mad_addr *to)
{
	for (unsigned int i = 0; i < nsent; i++)
		CHECK_MSG(same_addr(&sent_to[i], to), "MAD %u of %u went to LID %u SL %u P_Key "
			  "index %u GRH %u, not as the request came", i, nsent, sent_to[i].slid,
			  sent_to[i].sl, sent_to[i].pkey_index, sent_to[i].grh);
	return nsent;
}

/*
 * IBA 13.5.4: a response goes back with its request's P_Key index and SL,
 * and with a GRH when the request had one (the requester's kernel drops it
 * otherwise): every kind of answer, status or records, one MAD or RMPP
 */
static void test_addressing(void)
{
	struct fab_port *h1 = port_of("h1", 1);
	struct mad_addr with = { .slid = h1->lid, .qpn = 0x42, .sl = 5, .pkey_index = 3,
				 .grh = true, .gid_index = 1, .hop_limit = 0xff,
				 .traffic_class = 0x28, .flow_label = 0x12345 };
	const struct mad_addr without = { .slid = h1->lid, .qpn = 1, .sl = 9, .pkey_index = 2 };
	const struct mad_addr *both[] = { &with, &without };
	uint8_t rec[128] = { 0 };
	struct sa *sa;

	gid_encode(env.subnet_prefix, h1->guid, with.gid);
	CHECK_EQ(sa_new(&env, &sa), 0);
	for (int k = 0; k < 2; k++) {
		req_from = both[k];
		/* Not up yet: BUSY, as the request came */
		request(sa, SA_METHOD_GET, SA_ATTR_NODE_RECORD, 0, NULL, 0, 900);
		CHECK_EQ(last_status(), MAD_STATUS_BUSY);
		CHECK_EQ(all_sent_to(both[k]), 1);
	}
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	for (int k = 0; k < 2; k++) {
		req_from = both[k];
		/* A record */
		rec[0] = (uint8_t)(h1->lid >> 8);
		rec[1] = (uint8_t)h1->lid;
		request(sa, SA_METHOD_GET, SA_ATTR_NODE_RECORD, 1, rec, sizeof(rec), 901);
		CHECK_EQ(last_status(), 0);
		CHECK_EQ(all_sent_to(both[k]), 1);
		/* ClassPortInfo, an error status, a method the SA lacks */
		request(sa, SA_METHOD_GET, SA_ATTR_CLASS_PORT_INFO, 0, NULL, 0, 902);
		CHECK_EQ(all_sent_to(both[k]), 1);
		request(sa, SA_METHOD_GET, 0x0099, 0, NULL, 0, 903);
		CHECK_EQ(last_status(), MAD_STATUS_METHOD_ATTR_UNSUPP);
		CHECK_EQ(all_sent_to(both[k]), 1);
		request(sa, SA_METHOD_GET_TRACE_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 904);
		CHECK_EQ(all_sent_to(both[k]), 1);
		/* RMPP: the first segment, and those an ACK from the requester opens */
		request(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, 0, NULL, 0, 905 + k);
		CHECK_EQ(all_sent_to(both[k]), 1);
		nsent = 0;
		ack(sa, 905 + k, RMPP_TYPE_ACK, 1, 4);
		CHECK_EQ(all_sent_to(both[k]), 3);
		nsent = 0;
		ack(sa, 905 + k, RMPP_TYPE_STOP, 1, 1);
	}
	req_from = NULL;
	sa_free(sa);
}

/*
 * A subscriber's Reports go out as its subscription came (its partition's
 * P_Key index, its SL, its GRH) to the QP InformInfo names; every retry has
 * a TID of its own (the kernel refuses a request whose TID is outstanding,
 * user_mad.c is_duplicate), and a ReportResp to any of them answers it
 */
static void test_report_addressing(void)
{
	struct sa_env e2 = env;
	struct fab_port *h1 = port_of("h1", 1);
	struct mad_addr sub = { .slid = h1->lid, .qpn = 1, .sl = 3, .pkey_index = 4, .grh = true,
				.gid_index = 0, .hop_limit = 0xff, .traffic_class = 0x10,
				.flow_label = 0xabcde };
	struct inform_info ii = { .lid_begin = 0xffff, .generic = 1, .subscribe = 1,
				  .type = NOTICE_TYPE_SM, .trap_num = 66, .qpn = 0x4321,
				  .producer = NOTICE_PRODUCER_CLASS_MGR };
	uint8_t mgid[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 0, 0, 9 };
	uint8_t rec[INFORM_SIZE];
	uint32_t tids[8];
	struct mad_addr want;
	unsigned int n = 0;
	struct sa *sa;

	gid_encode(env.subnet_prefix, h1->guid, sub.gid);
	e2.now = fake_now;
	fake_us = 5000000;
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	inform_info_encode(&ii, rec);
	req_from = &sub;
	request(sa, SA_METHOD_SET, SA_ATTR_INFORM_INFO, 0, rec, INFORM_SIZE, 950);
	req_from = NULL;
	CHECK_EQ(last_status(), 0);
	want = sub;
	want.qpn = 0x4321;
	/* A group created: the Report, then three retries, each with a new TID */
	nsent = 0;
	sa_report_mcast(sa, mgid, 0xffff, true);
	for (int k = 0; k < 4; k++) {
		CHECK_EQ(reports(66, NULL, NULL, &tids[n]), 1);
		CHECK_EQ(all_sent_to(&want), 1);
		for (unsigned int j = 0; j < n; j++)
			CHECK_MSG(tids[j] != tids[n], "try %u reuses the TID 0x%x of try %u", n,
				  tids[n], j);
		n++;
		fake_us += 4000000;
		nsent = 0;
		sa_tick(sa);
	}
	/* A ReportResp to the second try answers the Report: no more tries */
	report_resp(sa, tids[1], h1->lid);
	CHECK_EQ(sa_inform_stats(sa)->reports_answered, 1);
	for (int k = 0; k < 10; k++) {
		fake_us += 4000000;
		nsent = 0;
		sa_tick(sa);
		CHECK_EQ(reports(66, NULL, NULL, NULL), 0);
	}
	sa_free(sa);
}

/* ---- MultiPathRecord, RMPP in the request direction (issue 16) ---- */

/* Send MultiPathRecord rec (len bytes) as RMPP DATA segments; ACKs checked */
static void mpr_send_rmpp(struct sa *sa, uint64_t mask, const uint8_t *rec, size_t len,
			  uint64_t tid)
{
	uint32_t nseg = (uint32_t)((len + SA_DATA_SIZE - 1) / SA_DATA_SIZE);

	for (uint32_t n = 1; n <= nseg; n++) {
		struct sa_mad m = { 0 }, a;
		uint8_t buf[MAD_SIZE];
		size_t off = (size_t)(n - 1) * SA_DATA_SIZE;
		size_t chunk = len - off < SA_DATA_SIZE ? len - off : SA_DATA_SIZE;

		m.hdr.base_version = 1;
		m.hdr.mgmt_class = MAD_CLASS_SA;
		m.hdr.class_version = SA_CLASS_VERSION;
		m.hdr.method = SA_METHOD_GET_MULTI;
		m.hdr.attr_id = SA_ATTR_MULTIPATH_RECORD;
		m.hdr.tid = tid;
		m.comp_mask = mask;
		m.rmpp.version = 1;
		m.rmpp.type = RMPP_TYPE_DATA;
		m.rmpp.flags = RMPP_FLAG_ACTIVE | (n == 1 ? RMPP_FLAG_FIRST : 0) |
			       (n == nseg ? RMPP_FLAG_LAST : 0);
		m.rmpp.data1 = n;
		m.rmpp.data2 = n == 1 ? (uint32_t)(nseg * RMPP_SEG_PAYLOAD -
						   (nseg * SA_DATA_SIZE - len)) :
			       n == nseg ? (uint32_t)(20 + chunk) : 0;
		memcpy(m.data, rec + off, chunk);
		sa_mad_encode(&m, buf);
		nsent = 0;
		sa_handle(sa, buf, MAD_SIZE, &client);
		/* Every segment ACKed; after the last, the answer's first segment */
		CHECK(nsent >= 1);
		CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &a), 0);
		CHECK_EQ(a.hdr.method, SA_METHOD_GET_MULTI_RESP);
		CHECK_EQ(a.rmpp.type, RMPP_TYPE_ACK);
		CHECK_EQ(a.rmpp.data1, n);
	}
}

/* The GetMultiResp transfer that follows: its PathRecords (ACKing every segment) */
static size_t mpr_receive(struct sa *sa, unsigned int first, uint64_t tid, struct path_record *out,
			  size_t max, uint16_t *status)
{
	size_t n = 0, total = 0;
	uint32_t expect = 1;
	bool done = false;
	static uint8_t all[64 * SA_DATA_SIZE];

	*status = 0xffff;
	while (!done && nsent > first) {
		struct sa_mad m;
		unsigned int k = nsent;
		static uint8_t batch[MAX_SENT][MAD_SIZE];

		memcpy(batch, sent, (size_t)k * MAD_SIZE);
		for (unsigned int i = first; i < k && !done; i++) {
			CHECK_EQ(sa_mad_decode(batch[i], MAD_SIZE, &m), 0);
			*status = m.hdr.status;
			if (m.hdr.status)
				return 0;
			CHECK_EQ(m.hdr.method, SA_METHOD_GET_MULTI_RESP);
			CHECK_EQ(m.hdr.attr_id, SA_ATTR_PATH_RECORD);
			CHECK_EQ(m.rmpp.type, RMPP_TYPE_DATA);
			CHECK_EQ(m.rmpp.data1, expect);
			CHECK_EQ(m.attr_offset, 8);
			if (total + SA_DATA_SIZE <= sizeof(all)) {
				memcpy(all + total, m.data, SA_DATA_SIZE);
				total += SA_DATA_SIZE;
			}
			done = m.rmpp.flags & RMPP_FLAG_LAST;
			if (done)
				total -= RMPP_SEG_PAYLOAD - m.rmpp.data2;
			expect++;
		}
		first = 0;
		nsent = 0;
		if (!done) {
			/* ACK as a kernel receiver does: the request method */
			struct sa_mad a = m;
			uint8_t buf[MAD_SIZE];

			a.hdr.method = SA_METHOD_GET_MULTI;
			a.hdr.tid = tid;
			a.rmpp.type = RMPP_TYPE_ACK;
			a.rmpp.data1 = expect - 1;
			a.rmpp.data2 = expect + 8;
			sa_mad_encode(&a, buf);
			sa_handle(sa, buf, MAD_SIZE, &client);
		}
	}
	for (size_t off = 0; off + 64 <= total && n < max; off += 64)
		path_record_decode(all + off, &out[n++]);
	return n;
}

static void test_multipath(void)
{
	struct sa *sa;
	struct fab_port *h1 = port_of("h1", 1), *h3 = port_of("h3", 1), *h2b = port_of("h2", 2);
	struct multipath_record mp = { .numb_path = 2, .sgid_count = 1, .dgid_count = 2,
				       .reversible = 1, .tclass = 0x20 };
	uint64_t mask = MPR_CM_SGID_COUNT | MPR_CM_DGID_COUNT | MPR_CM_NUMB_PATH |
			MPR_CM_REVERSIBLE | MPR_CM_TCLASS;
	uint8_t rec[24 + 16 * 16] = { 0 };
	struct path_record got[32];
	uint16_t status;
	size_t n;

	CHECK_EQ(sa_new(&env, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	request(sa, SA_METHOD_GET, SA_ATTR_CLASS_PORT_INFO, 0, NULL, 0, 1600);
	{
		struct sa_mad m;

		CHECK_EQ(sa_mad_decode(sent[0], MAD_SIZE, &m), 0);
		CHECK(wire_bits_get(m.data, 16, 16) & SA_CAP_MULTIPATH);
	}
	/* One MAD, no RMPP: h1 to h3 and to h2's second port, 2 paths */
	multipath_record_encode(&mp, rec);
	gid_encode(env.subnet_prefix, h1->guid, rec + 24);
	gid_encode(env.subnet_prefix, h3->guid, rec + 40);
	gid_encode(env.subnet_prefix, h2b->guid, rec + 56);
	request(sa, SA_METHOD_GET_MULTI, SA_ATTR_MULTIPATH_RECORD, mask, rec, 72, 1601);
	n = mpr_receive(sa, 0, 1601, got, 32, &status);
	CHECK_EQ(status, 0);
	CHECK_EQ(n, 2);
	CHECK_EQ(got[0].slid, h1->lid);
	CHECK(got[0].dlid != got[1].dlid);
	CHECK(got[0].dlid == h3->lid || got[0].dlid == h2b->lid);
	CHECK_EQ(got[0].tclass, 0x20);
	CHECK(!memcmp(got[1].sgid, rec + 24, 16));

	/* 12 GIDs: 216 bytes, two RMPP segments in the request direction */
	mp.sgid_count = 1;
	mp.dgid_count = 11;
	mp.numb_path = 20;
	multipath_record_encode(&mp, rec);
	gid_encode(env.subnet_prefix, h3->guid, rec + 24);
	for (int i = 0; i < 11; i++)
		gid_encode(env.subnet_prefix, (i % 2 ? h1 : h2b)->guid, rec + 40 + 16 * i);
	mpr_send_rmpp(sa, mask, rec, 24 + 12 * 16, 1602);
	/* The last segment's ACK, then the answer's first segment */
	CHECK(nsent >= 2);
	n = mpr_receive(sa, 1, 1602, got, 32, &status);
	CHECK_EQ(status, 0);
	CHECK_EQ(n, 11);	/* LMC 0: one path per pair, fewer than NumbPath */
	for (size_t i = 0; i < n; i++)
		CHECK_EQ(got[i].slid, h3->lid);
	CHECK(!memcmp(got[10].dgid, rec + 40 + 16 * 10, 16));
	CHECK_EQ(sa_stats(sa)->refused, 0);

	/* Without the counts; a GID nobody has; another attribute */
	request(sa, SA_METHOD_GET_MULTI, SA_ATTR_MULTIPATH_RECORD, MPR_CM_NUMB_PATH, rec, 200,
		1603);
	CHECK_EQ(last_status(), SA_STATUS_INSUFFICIENT);
	mp.dgid_count = 2;
	multipath_record_encode(&mp, rec);
	rec[40 + 15] ^= 0x33;
	request(sa, SA_METHOD_GET_MULTI, SA_ATTR_MULTIPATH_RECORD, mask, rec, 200, 1604);
	CHECK_EQ(last_status(), SA_STATUS_INVALID_GID);
	request(sa, SA_METHOD_GET_MULTI, SA_ATTR_PATH_RECORD, 0, NULL, 0, 1605);
	CHECK_EQ(last_status(), MAD_STATUS_METHOD_ATTR_UNSUPP);
	/* Counts longer than the request */
	mp.dgid_count = 200;
	multipath_record_encode(&mp, rec);
	request(sa, SA_METHOD_GET_MULTI, SA_ATTR_MULTIPATH_RECORD, mask, rec, 200, 1606);
	CHECK_EQ(last_status(), SA_STATUS_REQ_INVALID);
	/*
	 * Each refusal came as GetMultiResp, the answer a GetMulti waits for,
	 * not GetResp (found by the SA fuzzer, fuzz_sa's check_answer)
	 */
	CHECK_EQ(nsent, 1);
	CHECK_EQ(sent[0][3], SA_METHOD_GET_MULTI_RESP);
	request(sa, SA_METHOD_GET_MULTI, SA_ATTR_PATH_RECORD, 0, NULL, 0, 1607);
	CHECK_EQ(sent[0][3], SA_METHOD_GET_MULTI_RESP);
	sa_free(sa);
}

/*
 * LMC 2: NumbPath 4 gives four paths of a pair, each with another SLID and
 * another DLID (PathRecord GetTable and MultiPathRecord alike)
 */
static void test_lmc_paths(void)
{
	struct fabric *f;
	struct lid_stats ls;
	struct route_stats rs;
	struct sa *sa;
	struct fab_port *a, *b;
	struct path_record pr = { 0 }, got[32];
	uint8_t rec[200] = { 0 }, *data;
	size_t n, rsize;
	uint16_t status;

	CHECK_EQ(fabric_new(&f), 0);
	CHECK_EQ(ff_discover(&ff, f, NULL), 0);
	CHECK_EQ(lid_assign(f, 2, NULL, NULL, &ls), 0);
	CHECK_EQ(route_compute(route_engine_find("dfree"), f, NULL, &rs, NULL), 0);
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int p = 0; p <= f->nodes[i]->num_ports; p++) {
			f->nodes[i]->ports[p].pi.link_width_active = 2;
			f->nodes[i]->ports[p].pi.link_speed_active = 1;
		}
	a = fabric_port(fabric_find(f, ff.nodes[ff_find(&ff, "h1")].guid), 1);
	b = fabric_port(fabric_find(f, ff.nodes[ff_find(&ff, "h3")].guid), 1);
	CHECK(a && b && a->lmc == 2 && b->lmc == 2);
	CHECK_EQ(sa_new(&env, &sa), 0);
	CHECK_EQ(sa_update(sa, f, NULL), 0);
	gid_encode(env.subnet_prefix, a->guid, pr.sgid);
	gid_encode(env.subnet_prefix, b->guid, pr.dgid);
	pr.numb_path = 4;
	pr.reversible = 1;
	pr.tclass = 0;
	pr.service_id = 0x10000000000001ull;
	path_record_encode(&pr, rec);
	n = get_table(sa, SA_ATTR_PATH_RECORD, PR_CM_SGID | PR_CM_DGID | PR_CM_NUMB_PATH |
		      PR_CM_REVERSIBLE | PR_CM_TCLASS | PR_CM_SERVICE_ID, rec, 64, &data, &rsize);
	CHECK_EQ(n, 4);
	for (size_t i = 0; i < n; i++) {
		path_record_decode(data + 64 * i, &got[i]);
		CHECK(got[i].slid >= a->lid && got[i].slid < a->lid + 4);
		CHECK(got[i].dlid >= b->lid && got[i].dlid < b->lid + 4);
		CHECK(got[i].service_id == pr.service_id);
		CHECK_EQ(got[i].preference, i);
		for (size_t j = 0; j < i; j++)
			CHECK(got[i].slid != got[j].slid && got[i].dlid != got[j].dlid);
	}
	free(data);
	/* Without NumbPath: all 16 */
	n = get_table(sa, SA_ATTR_PATH_RECORD, PR_CM_SGID | PR_CM_DGID, rec, 64, &data, &rsize);
	CHECK_EQ(n, 16);
	free(data);
	/* MultiPathRecord: the same four */
	{
		struct multipath_record mp = { .numb_path = 4, .sgid_count = 1,
					       .dgid_count = 1 };

		multipath_record_encode(&mp, rec);
		gid_encode(env.subnet_prefix, a->guid, rec + 24);
		gid_encode(env.subnet_prefix, b->guid, rec + 40);
		request(sa, SA_METHOD_GET_MULTI, SA_ATTR_MULTIPATH_RECORD,
			MPR_CM_SGID_COUNT | MPR_CM_DGID_COUNT | MPR_CM_NUMB_PATH, rec, 56, 1700);
		n = mpr_receive(sa, 0, 1700, got, 32, &status);
		CHECK_EQ(status, 0);
		CHECK_EQ(n, 4);
		for (size_t i = 0; i < n; i++)
			for (size_t j = 0; j < i; j++)
				CHECK(got[i].slid != got[j].slid && got[i].dlid != got[j].dlid);
	}
	sa_free(sa);
	fabric_free(f);
}

static void test_fuzz(void)
{
	static const uint16_t attrs[] = {
		SA_ATTR_CLASS_PORT_INFO, SA_ATTR_NODE_RECORD, SA_ATTR_PORT_INFO_RECORD,
		SA_ATTR_SL2VL_RECORD, SA_ATTR_SWITCH_INFO_RECORD, SA_ATTR_LFT_RECORD,
		SA_ATTR_SM_INFO_RECORD, SA_ATTR_LINK_RECORD, SA_ATTR_GUID_INFO_RECORD,
		SA_ATTR_PKEY_RECORD, SA_ATTR_PATH_RECORD, SA_ATTR_VLARB_RECORD, 0x1234,
		SA_ATTR_MCMEMBER_RECORD, SA_ATTR_MCMEMBER_RECORD, SA_ATTR_MFT_RECORD,
		SA_ATTR_SERVICE_RECORD, SA_ATTR_SERVICE_RECORD, SA_ATTR_INFORM_INFO,
		SA_ATTR_INFORM_INFO_RECORD, SA_ATTR_MULTIPATH_RECORD, SA_ATTR_NOTICE,
	};
	struct sa_env e2 = env;
	struct sa *sa;
	struct mc_db *db;
	struct mc_forest *fo;
	unsigned int answered = 0;
	uint8_t bc[16];
	struct mc_params bp = { .qkey = 0x0b1b, .pkey = 0xffff, .mtu = 4, .rate = 3 };

	/* Services, alias GUIDs: the owner's callbacks are there */
	e2.smp = fake_smp;
	e2.now = fake_now;
	e2.service_changed = svc_changed;
	CHECK_EQ(sa_new(&e2, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	/* Multicast too: joins, leaves and creations of random groups */
	CHECK_EQ(mc_db_new(0xc3ff, &db), 0);
	mc_ipoib_mgid(0xffff, 2, bc);
	CHECK_EQ(mc_db_add_permanent(db, bc, &bp, NULL), 0);
	CHECK_EQ(mc_forest_new(fab, NULL, &fo), 0);
	sa_set_mcast(sa, db, fo);
	for (int it = 0; it < 20000; it++) {
		uint8_t buf[MAD_SIZE];
		size_t len = MAD_SIZE;
		struct sa_mad m = { 0 };

		m.hdr.base_version = 1;
		m.hdr.mgmt_class = MAD_CLASS_SA;
		m.hdr.class_version = (rnd() % 8) ? 2 : (uint8_t)rnd();
		m.hdr.method = (rnd() % 4) ? (rnd() % 2 ? SA_METHOD_GET : SA_METHOD_GET_TABLE) :
			       (rnd() % 2) ? (rnd() % 2 ? SA_METHOD_SET : SA_METHOD_DELETE) :
					     (uint8_t)rnd();
		m.hdr.attr_id = attrs[rnd() % (sizeof(attrs) / sizeof(attrs[0]))];
		m.hdr.tid = rnd();
		m.comp_mask = (rnd() % 3) ? (uint64_t)rnd() & ((rnd() % 2) ? 0x3f : 0xffffff) :
					    (uint64_t)rnd() << 32 | rnd();
		for (size_t i = 0; i < SA_DATA_SIZE; i++)
			m.data[i] = (rnd() % 4) ? 0 : (uint8_t)rnd();
		/* Small LIDs so that masks select real records now and then */
		m.data[0] = 0;
		m.data[1] = (uint8_t)(rnd() % 16);
		if (m.hdr.attr_id == SA_ATTR_MCMEMBER_RECORD && rnd() % 2) {
			/*
			 * Half of them plausible: joins and leaves of a few MGIDs
			 * (the broadcast group among them) from the client's own
			 * port, with the create components, so that groups come
			 * and go; then perhaps damaged like the rest.
			 */
			struct mc_member_record r = { .qkey = rnd(), .pkey = 0xffff,
						      .sl = (uint8_t)(rnd() % 16),
						      .join_state = (uint8_t)(rnd() % 16) };

			if (rnd() % 4) {
				memcpy(r.mgid, bc, 16);
				r.mgid[2] = 0x60;
				r.mgid[15] = (uint8_t)(rnd() % 8);
			} else {
				memcpy(r.mgid, bc, 16);
			}
			gid_encode(UINT64_C(0xfe80000000000000),
				   fabric_port_by_lid(fab, client.slid)->guid, r.port_gid);
			mc_member_record_encode(&r, m.data);
			m.hdr.class_version = 2;
			m.hdr.method = rnd() % 2 ? SA_METHOD_SET : SA_METHOD_DELETE;
			m.comp_mask = IPOIB_MASK | MCR_CM_QKEY | MCR_CM_SL | MCR_CM_FLOW_LABEL |
				      MCR_CM_TCLASS | (rnd() % 4 ? 0 : rnd() & 0x3ffff);
		}
		if (m.hdr.attr_id == SA_ATTR_SERVICE_RECORD && rnd() % 2) {
			/* Plausible registrations of the client's own port, a few IDs */
			struct service_record r = { .id = rnd() % 8, .pkey = 0xffff,
						    .lease = rnd() % 4 };

			gid_encode(env.subnet_prefix, fabric_port_by_lid(fab, client.slid)->guid,
				   r.gid);
			r.key[0] = (uint8_t)(rnd() % 2);
			service_record_encode(&r, m.data);
			m.comp_mask = SR_CM_ID | SR_CM_GID | (rnd() % 2 ? (uint64_t)rnd() : 0);
		}
		if (rnd() % 5 == 0) {
			m.rmpp.flags = RMPP_FLAG_ACTIVE;
			m.rmpp.type = (uint8_t)(rnd() % 6);
			m.rmpp.data1 = rnd() % 8;
			m.rmpp.data2 = rnd() % 40;
		}
		sa_mad_encode(&m, buf);
		for (int f = rnd() % 4; f > 0; f--)
			buf[rnd() % MAD_SIZE] ^= (uint8_t)(1u << (rnd() % 8));
		if (rnd() % 10 == 0)
			len = rnd() % (MAD_SIZE + 1);
		nsent = 0;
		sa_handle(sa, buf, len, &client);
		answered += nsent > 0;
		for (unsigned int i = 0; i < nsent; i++) {
			struct sa_mad r;

			CHECK_EQ(sa_mad_decode(sent[i], MAD_SIZE, &r), 0);
			CHECK(r.hdr.method & MAD_METHOD_RESP_BIT);
		}
		if (it % 1000 == 0) {
			fake_us += 2000000;
			sa_tick(sa);
		}
		if (it % 500 == 0) {
			uint64_t dirty[MLID_COUNT / 64 + 1];

			mc_db_take_dirty(db, dirty);
			CHECK_EQ(mc_forest_update(fo, db, dirty), 0);
		}
	}
	CHECK(mc_db_count(db) >= 1);
	{
		struct mc_event ev[64];
		size_t k, created = 0;

		while ((k = mc_db_take_events(db, ev, 64)) > 0)
			for (size_t i = 0; i < k; i++)
				created += ev[i].created;
		/* The fuzzer must reach the joins that create groups, not only refusals */
		CHECK(created > 10);
		fprintf(stderr, "  fuzz: %zu multicast groups created, %zu left\n", created,
			mc_db_count(db));
	}
	sa_set_mcast(sa, NULL, NULL);
	mc_forest_free(fo);
	mc_db_free(db);
	/* The fuzzer must reach the answering paths, not only the decoder */
	CHECK(answered > 5000);
	sa_free(sa);
}

/* Give port p the keys k (a one-block table), as a sweep would have programmed it */
static void set_keys(struct fab_port *p, const uint16_t *k, unsigned int n)
{
	uint16_t tab[32] = { 0 };

	memcpy(tab, k, n * sizeof(*k));
	CHECK_EQ(fabric_port_set_pkeys(p, tab, 32), 0);
	p->pkeys_valid = true;
}

/* A PathRecord Get from port `from` (NULL: a LID the model does not know) */
static uint16_t path_get(struct sa *sa, const struct fab_port *from, const struct fab_port *s,
			 const struct fab_port *d, int pkey, uint16_t *got_pkey)
{
	static uint64_t tid = 9000;
	struct mad_addr a = { .slid = from ? from->lid : 0x999, .qpn = 1 };
	struct path_record pr = { .slid = s->lid, .dlid = d->lid }, got;
	uint8_t rec[64];
	struct sa_mad m;

	pr.pkey = (uint16_t)(pkey < 0 ? 0 : pkey);
	path_record_encode(&pr, rec);
	req_from = &a;
	request(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD,
		PR_CM_SLID | PR_CM_DLID | (pkey < 0 ? 0 : PR_CM_PKEY), rec, 64, ++tid);
	req_from = NULL;
	if (!nsent || sa_mad_decode(sent[0], MAD_SIZE, &m) < 0)
		return 0xffff;
	path_record_decode(m.data, &got);
	*got_pkey = m.hdr.status ? 0 : got.pkey;
	return m.hdr.status;
}

/* Records of a GetTable of attr from port `from` (NULL: an unknown LID) */
static size_t table_from(struct sa *sa, const struct fab_port *from, uint16_t attr)
{
	struct mad_addr a = { .slid = from ? from->lid : 0x999, .qpn = 1 };
	uint8_t *tab = NULL;
	size_t n, rsize;

	req_from = &a;
	n = get_table(sa, attr, 0, NULL, 0, &tab, &rsize);
	req_from = NULL;
	free(tab);
	return n;
}

/*
 * Partitions (sa/sa_part.c): h1 and h3 full members of A (0x0001), h2's
 * first port of B (0x0002), its second a limited member of A, every CA port
 * limited in Default, the SM's port and the switches full there.
 */
static void test_partitions(void)
{
	static const uint16_t full_dflt[] = { 0xffff }, a_full[] = { 0x7fff, 0x8001 },
		b_full[] = { 0x7fff, 0x8002 }, a_lim[] = { 0x7fff, 0x0001 };
	struct fab_port *sm = port_of("sm", 1), *h1 = port_of("h1", 1), *h3 = port_of("h3", 1);
	struct fab_port *h2a = port_of("h2", 1), *h2b = port_of("h2", 2);
	struct fab_port *s1 = port_of("s1", 0), *s1h1 = port_of("s1", 5);
	struct mc_params ap = { .qkey = 0x0b1b, .pkey = 0x8001, .mtu = 4, .rate = 3, .scope = 2 };
	struct mc_member_record r;
	struct sa_env e = env;
	struct mc_db *db;
	struct sa *sa;
	uint8_t bc[16];
	uint16_t k;

	set_keys(h1, a_full, 2);
	set_keys(h3, a_full, 2);
	set_keys(h2a, b_full, 2);
	set_keys(h2b, a_lim, 2);
	/* The switch port facing h1 holds h1's keys: its enforcement table */
	set_keys(s1h1, a_full, 2);
	e.trusted_key = 0x5eed;
	CHECK_EQ(sa_new(&e, &sa), 0);
	CHECK_EQ(sa_update(sa, fab, NULL), 0);
	/* A to A carries A's P_Key; a limited member of A pairs with a full one */
	CHECK_EQ(path_get(sa, h1, h1, h3, -1, &k), 0);
	CHECK_EQ(k, 0x8001);
	CHECK_EQ(path_get(sa, h1, h1, h2b, -1, &k), 0);
	CHECK_EQ(k, 0x8001);
	CHECK_EQ(path_get(sa, h2b, h2b, h1, -1, &k), 0);
	CHECK_EQ(k, 0x0001);	/* the source's own entry: limited */
	/* A to B: none, whoever asks */
	CHECK_EQ(path_get(sa, h1, h1, h2a, -1, &k), SA_STATUS_NO_RECORDS);
	CHECK_EQ(path_get(sa, h2a, h2a, h1, -1, &k), SA_STATUS_NO_RECORDS);
	/* Default between two limited members: none; with the SM (full): Default */
	CHECK_EQ(path_get(sa, h1, h1, h3, 0x7fff, &k), SA_STATUS_NO_RECORDS);
	CHECK_EQ(path_get(sa, h1, h1, sm, -1, &k), 0);
	CHECK_EQ(k, 0x7fff);
	CHECK_EQ(path_get(sa, h1, h1, h3, 0x8001, &k), 0);
	CHECK_EQ(path_get(sa, h1, h1, h3, 0x0002, &k), SA_STATUS_NO_RECORDS);
	/* A third port must be in A too: h2's B port is not, the SM's is not */
	CHECK_EQ(path_get(sa, h2a, h1, h3, -1, &k), SA_STATUS_NO_RECORDS);
	CHECK_EQ(path_get(sa, sm, h1, h3, -1, &k), SA_STATUS_NO_RECORDS);
	CHECK_EQ(path_get(sa, h2b, h1, h3, -1, &k), 0);
	/* Unless it shows the SM_Key smd trusts; an unknown LID gets nothing */
	req_sm_key = 0x5eed;
	CHECK_EQ(path_get(sa, sm, h1, h3, -1, &k), 0);
	CHECK_EQ(k, 0x8001);
	req_sm_key = 0;
	CHECK_EQ(path_get(sa, NULL, sm, sm, -1, &k), SA_STATUS_NO_RECORDS);
	/*
	 * NodeRecords: 8 endports. h1 sees the SM and 3 switches (Default, full
	 * there), itself, h3 and h2's A port: 7; h2's B port the 4 and itself
	 */
	CHECK_EQ(table_from(sa, sm, SA_ATTR_NODE_RECORD), 8);
	CHECK_EQ(table_from(sa, h1, SA_ATTR_NODE_RECORD), 7);
	CHECK_EQ(table_from(sa, h2a, SA_ATTR_NODE_RECORD), 5);
	CHECK_EQ(table_from(sa, NULL, SA_ATTR_NODE_RECORD), 0);
	/* PortInfoRecords of h2's B port: not for h1 (a switch's all go by port 0) */
	CHECK(table_from(sa, h1, SA_ATTR_PORT_INFO_RECORD) <
	      table_from(sa, sm, SA_ATTR_PORT_INFO_RECORD));
	/* P_KeyTableRecords: 8 endports and the switch port facing h1 */
	CHECK_EQ(table_from(sa, sm, SA_ATTR_PKEY_RECORD), 9);
	{
		struct records_probe { uint8_t rec[72]; } q = { { 0 } };
		uint8_t *tab = NULL;
		size_t rsize, n;

		/* Component 0 (LID) and 2 (PortNum): s1's port 5 holds h1's keys */
		q.rec[0] = (uint8_t)(s1->lid >> 8);
		q.rec[1] = (uint8_t)s1->lid;
		q.rec[4] = 5;
		n = get_table(sa, SA_ATTR_PKEY_RECORD, 1 | 4, q.rec, 72, &tab, &rsize);
		CHECK_EQ(n, 1);
		if (n == 1) {
			CHECK_EQ(wire_bits_get(tab, 64, 16), 0x7fff);
			CHECK_EQ(wire_bits_get(tab, 80, 16), 0x8001);
		}
		free(tab);
	}
	/* Multicast: a host of B may not join A's group, nor see it */
	CHECK_EQ(mc_db_new(0xc3ff, &db), 0);
	mc_ipoib_mgid(0x8001, 2, bc);
	CHECK_EQ(mc_db_add_permanent(db, bc, &ap, NULL), 0);
	sa_set_mcast(sa, db, NULL);
	mcr_make(&r, h2a, bc);
	r.pkey = 0x8001;
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK, h2a, NULL), SA_STATUS_REQ_INVALID);
	mcr_make(&r, h3, bc);
	r.pkey = 0x8001;
	CHECK_EQ(mcr_send(sa, SA_METHOD_SET, &r, IPOIB_MASK, h3, NULL), 0);
	CHECK_EQ(table_from(sa, h1, SA_ATTR_MCMEMBER_RECORD), 1);
	CHECK_EQ(table_from(sa, h2a, SA_ATTR_MCMEMBER_RECORD), 0);
	sa_free(sa);
	mc_db_free(db);
	/* Back to one partition for the tests after this one */
	for (size_t i = 0; i < fab->nnodes; i++)
		for (unsigned int p = 0; p <= fab->nodes[i]->num_ports; p++) {
			struct fab_port *pp = &fab->nodes[i]->ports[p];

			free(pp->pkey_tab);
			pp->pkey_tab = NULL;
			pp->pkey_len = pp->pkey_nkeys = 0;
			if (fabric_is_endport(pp))
				set_keys(pp, full_dflt, 1);
		}
}

/* Every record type smd serves names each of its fields, once (smctl --json) */
static void test_field_names(void)
{
	static const uint16_t attrs[] = {
		SA_ATTR_NODE_RECORD, SA_ATTR_PORT_INFO_RECORD, SA_ATTR_SWITCH_INFO_RECORD,
		SA_ATTR_LINK_RECORD, SA_ATTR_LFT_RECORD, SA_ATTR_SM_INFO_RECORD,
		SA_ATTR_SL2VL_RECORD, SA_ATTR_VLARB_RECORD, SA_ATTR_PKEY_RECORD,
		SA_ATTR_GUID_INFO_RECORD, SA_ATTR_PATH_RECORD, SA_ATTR_MFT_RECORD,
		SA_ATTR_MCMEMBER_RECORD, SA_ATTR_SERVICE_RECORD, SA_ATTR_INFORM_INFO,
		SA_ATTR_INFORM_INFO_RECORD, SA_ATTR_MULTIPATH_RECORD,
	};

	for (size_t a = 0; a < sizeof(attrs) / sizeof(attrs[0]); a++) {
		unsigned int n = sa_record_nfields(attrs[a]), end = 0;

		CHECK(n > 0);
		for (unsigned int i = 0; i < n; i++) {
			const char *name, *other;
			unsigned int off, w;

			CHECK_EQ(sa_record_field_info(attrs[a], i, &name, &off, &w), 0);
			CHECK_MSG(name != NULL, "attribute 0x%04x field %u has a name", attrs[a], i);
			/* Fields follow each other without gap or overlap */
			CHECK_MSG(off == end, "attribute 0x%04x field %u at bit %u, not %u", attrs[a],
				  i, off, end);
			end = off + w;
			for (unsigned int k = 0; name && k < i; k++) {
				sa_record_field_info(attrs[a], k, &other, &off, &w);
				CHECK_MSG(!other || strcmp(name, other), "attribute 0x%04x: %s twice",
					  attrs[a], name);
			}
		}
		CHECK_MSG(end <= 8 * sa_record_size(attrs[a]), "attribute 0x%04x: %u bits of %zu",
			  attrs[a], end, 8 * sa_record_size(attrs[a]));
	}
	CHECK_EQ(sa_record_field_info(0x1234, 0, &(const char *){ NULL }, &(unsigned int){ 0 },
				      &(unsigned int){ 0 }), -EINVAL);
}

int main(void)
{
	setup();
	RUN(test_field_names);
	RUN(test_status);
	RUN(test_path_get);
	RUN(test_tables);
	RUN(test_capmask_vlarb);
	RUN(test_rmpp_control);
	RUN(test_sl2vl);
	RUN(test_path_sl);
	RUN(test_mcast);
	RUN(test_limits);
	RUN(test_rmpp_kernel);
	RUN(test_rmpp_lost_segment);
	RUN(test_rmpp_lost_ack);
	RUN(test_rmpp_stalled);
	RUN(test_rmpp_window_and_time);
	RUN(test_node_by_guid);
	RUN(test_fair_queue);
	RUN(test_services);
	RUN(test_guidinfo);
	RUN(test_service_alias_limit);
	RUN(test_service_index);
	RUN(test_service_expiry);
	RUN(test_inform);
	RUN(test_inform_unsubscribe_reports);
	RUN(test_addressing);
	RUN(test_report_addressing);
	RUN(test_multipath);
	RUN(test_multipath_kernel_sender);
	RUN(test_lmc_paths);
	RUN(test_partitions);
	RUN(test_fuzz);
	fabric_free(fab);
	ff_free(&ff);
	return unit_report();
}
