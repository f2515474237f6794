// SPDX-License-Identifier: MIT
/*
 * SA fuzzer (issue 12): the SA server fed what real clients sent it
 * (tests/fuzz/sa/clients.pcap: saquery, mcclient's IPoIB-like joins,
 * smctl's RMPP reads, captured by smd under the simulator), mutated, from
 * several requesting ports at once, with RMPP sessions driven by hostile
 * receivers: ACKs for segments never sent, windows that shrink, grow past
 * the table or wrap, repeated and stale ACKs, STOPs and ABORTs, requests
 * retransmitted mid-transfer, the clock jumping past every timer, the model
 * replaced under open transfers (a sweep ending), multicast trees
 * recomputed. The SA's registers are fuzzed too: services (Set, Delete,
 * leases running out), subscriptions (InformInfo Set) and the Reports they
 * bring when ports leave and come back or traps are forwarded (answered by
 * ReportResp or not), alias GUIDs (GUIDInfoRecord Set/Delete, the port's
 * SMP taking the block now, later or never), and MultiPathRecord requests
 * sent as chains of RMPP DATA segments, whole, cut short, repeated,
 * reordered or mutated. What the SA sends must stay well-formed and go
 * only to the port that asked (Reports: to a port that subscribed), no RMPP
 * segment past the windows its receiver gave, no ABORT without an ABORT
 * status; the
 * limits per port and for all must hold at every step; every transfer must
 * be gone once its lifetime has passed. The run counts what each of those
 * handlers answered with success, and fails when the corpus no longer
 * reaches one of them.
 *
 *   fuzz_sa [-n ITERATIONS] [-s SEED] FABRIC CORPUS.pcap...
 *
 * Deterministic: the same seed gives the same run. make check runs a
 * bounded number of iterations, under ASan and UBSan in the sanitizer build.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/capture.h"
#include "mad/sa_codec.h"
#include "sa/sa.h"
#include "util/log.h"
#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/lid.h"
#include "topo/mc.h"
#include "topo/route.h"

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * UINT64_C(0x2545f4914f6cdd1d);
}

static unsigned int below(unsigned int n)
{
	return n ? (unsigned int)(rnd() % n) : 0;
}

/* ---- the corpus ---- */

#define CORPUS_MAX 4096
static uint8_t corpus[CORPUS_MAX][MAD_SIZE];
static size_t ncorpus;

static uint64_t get_be(const uint8_t *p, unsigned int n)
{
	uint64_t v = 0;

	while (n--)
		v = v << 8 | *p++;
	return v;
}

/* A request sent as RMPP DATA segments: its first segment */
static bool chain_start(const uint8_t *mad)
{
	return mad[3] == SA_METHOD_GET_MULTI && mad[25] == RMPP_TYPE_DATA &&
	       (mad[26] & (RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST)) ==
	       (RMPP_FLAG_ACTIVE | RMPP_FLAG_FIRST);
}

static int corpus_load(const char *path)
{
	struct capture_reader *r;
	struct capture_frame f;
	bool ib;
	int k;

	if (capture_reader_open(path, &r) < 0) {
		fprintf(stderr, "fuzz_sa: %s: not a capture smd can read\n", path);
		return -EINVAL;
	}
	while ((k = capture_reader_next(r, &f, &ib)) == 1)
		if (ib && f.inbound && f.mad[1] == MAD_CLASS_SA && ncorpus < CORPUS_MAX)
			memcpy(corpus[ncorpus++], f.mad, MAD_SIZE);
	capture_reader_close(r);
	return k < 0 ? k : 0;
}

/* ---- the requesters and what the SA sends them ---- */

#define NCLIENTS 6
static struct mad_addr clients[NCLIENTS];

/* Transfers the SA has open, as a receiver sees them from the segments */
#define OPEN_MAX 256
struct seen_xfer {
	uint16_t dlid;
	uint32_t qpn;
	uint32_t tid;
	uint32_t last_seg;	/* highest DATA segment seen */
	bool last;		/* the LAST segment was seen */
};
static struct seen_xfer open_x[OPEN_MAX];
static size_t nopen;

/*
 * The highest NewWindowLast each transfer's receiver sent (any ACK it fed,
 * good or bad): the SA may send no segment past it, nor past segment 1
 * before any (IBA 13.6.3.1). Open addressing; when half full it starts
 * afresh and from then on a transfer it does not know is not judged.
 */
#define WIN_SLOTS 65536
static struct win_seen {
	bool used;
	uint16_t dlid;
	uint32_t qpn, tid, win;
} wins[WIN_SLOTS];
static size_t nwins;
static bool wins_reset;

static struct win_seen *win_slot(uint16_t dlid, uint32_t qpn, uint32_t tid, bool add)
{
	size_t h = ((size_t)tid * 2654435761u ^ (size_t)dlid * 40503u ^ qpn) % WIN_SLOTS;

	for (;; h = (h + 1) % WIN_SLOTS) {
		struct win_seen *w = &wins[h];

		if (w->used && w->dlid == dlid && w->qpn == qpn && w->tid == tid)
			return w;
		if (!w->used) {
			if (!add)
				return NULL;
			if (nwins >= WIN_SLOTS / 2) {
				memset(wins, 0, sizeof(wins));
				nwins = 0;
				wins_reset = true;
				return win_slot(dlid, qpn, tid, add);
			}
			*w = (struct win_seen){ .used = true, .dlid = dlid, .qpn = qpn, .tid = tid };
			nwins++;
			return w;
		}
	}
}

/* TIDs each client used (low 32 bits): the SA may answer a client only with its own */
#define TIDS_MAX 4096
static struct {
	uint16_t slid;
	uint32_t qpn, tid;
} asked[TIDS_MAX];
static size_t nasked;

static void asked_add(const struct mad_addr *from, uint32_t tid)
{
	if (nasked == TIDS_MAX)
		nasked = 0;	/* the oldest go: a TID is reused far later, if ever */
	asked[nasked].slid = from->slid;
	asked[nasked].qpn = from->qpn;
	asked[nasked].tid = tid;
	nasked++;
}

static bool was_asked(uint16_t dlid, uint32_t qpn, uint32_t tid)
{
	for (size_t i = 0; i < TIDS_MAX; i++)
		if (asked[i].tid == tid && asked[i].slid == dlid && asked[i].qpn == qpn)
			return true;
	return false;
}

static struct {
	unsigned long mads, answers, segments, aborts_sent, bad, misdirected, requests, acks,
		stops, updates, jumps, refused_seen, rx_acks, chains, reports, report_resps,
		smps, ports_gone, checked, keys_seen, iirs_seen;
} st;

/*
 * What each request was (by TID, the latest wins), so that answers are
 * tallied by the handler that gave them: method, attribute, successes
 */
#define REQ_SLOTS 8192
static struct req_seen {
	uint32_t tid;
	uint8_t method;
	uint16_t attr;
	uint64_t mask;
	bool chain;		/* came as several RMPP DATA segments */
	bool reused;		/* an open transfer's TID: answers may be the old one's */
	uint16_t slid;		/* who asked */
	bool trusted;		/* with the SM_Key the SA trusts */
	bool answered;
} reqs[REQ_SLOTS];

static struct req_seen *req_slot(uint32_t tid)
{
	return &reqs[(tid * UINT32_C(2654435761)) >> 19];
}

/* Successful answers of the handlers the corpus must reach */
enum {
	OK_SVC_SET, OK_SVC_DEL, OK_SVC_GET, OK_INFORM_SET, OK_IIR, OK_MPR, OK_MPR_CHAIN,
	OK_GIR_SET, OK_GIR_DEL, OK_PIR_CAPMASK, OK_PR_NUMB, OK_PR_SID_TCLASS_REV, OK_N
};
static const char *const ok_name[OK_N] = {
	"ServiceRecord Set", "ServiceRecord Delete", "ServiceRecord Get/GetTable",
	"InformInfo Set", "InformInfoRecord", "MultiPathRecord GetMulti",
	"MultiPathRecord GetMulti in RMPP segments", "GUIDInfoRecord Set",
	"GUIDInfoRecord Delete", "PortInfoRecord by CapabilityMask", "PathRecord NumbPath",
	"PathRecord ServiceID+TClass+Reversible",
};
static unsigned long ok[OK_N];

/* The model the SA serves: who a requester is */
static const struct fabric *served;

#define TRUSTED_KEY	UINT64_C(0x5eed5eed5eed5eed)

/*
 * What a requester may see of others' registrations: a ServiceRecord's
 * ServiceKey (IBA 15.2.5.14, record bytes 32-47) only when it registered
 * the service (its port GUID is the ServiceGID's, bytes 16-23) or shows the
 * SM_Key; InformInfoRecords (15.2.5.12) only of its own subscriptions (the
 * SubscriberGID, bytes 0-15). data: the first answer's records.
 */
static void check_visible(const struct req_seen *q, const struct sa_mad *m)
{
	const struct fab_port *who = fabric_port_by_lid(served, q->slid);
	static const uint8_t zero[64];

	if (q->trusted || m->hdr.status || (q->method != SA_METHOD_GET &&
					     q->method != SA_METHOD_GET_TABLE))
		return;
	if (m->hdr.attr_id == SA_ATTR_SERVICE_RECORD && memcmp(m->data + 32, zero, 16)) {
		st.keys_seen++;
		CHECK_MSG(who && who->guid == get_be(m->data + 16, 8),
			  "the ServiceKey of port 0x%016" PRIx64 "'s service shown to LID %u",
			  get_be(m->data + 16, 8), q->slid);
	}
	if (m->hdr.attr_id == SA_ATTR_INFORM_INFO_RECORD)
		for (size_t off = 0; off + IIR_SIZE <= SA_DATA_SIZE; off += 64) {
			if (!memcmp(m->data + off, zero, 64))
				continue;
			st.iirs_seen++;
			CHECK_MSG(who && who->guid == get_be(m->data + off + 8, 8),
				  "the subscription of port 0x%016" PRIx64 " shown to LID %u",
				  get_be(m->data + off + 8, 8), q->slid);
		}
}

/*
 * The answer to a request of a method the SA class has: its response
 * method (IBA 15.4: Get and Set are answered by GetResp, the others by
 * their own response method), about the attribute asked for (GetMulti's
 * records are PathRecords)
 */
static void check_answer(const struct req_seen *q, const struct sa_mad *m)
{
	uint8_t want;

	switch (q->method) {
	case SA_METHOD_GET:
	case SA_METHOD_SET:
		want = SA_METHOD_GET_RESP;
		break;
	case SA_METHOD_GET_TABLE:
	case SA_METHOD_GET_MULTI:
	case SA_METHOD_DELETE:
		want = q->method | MAD_METHOD_RESP_BIT;
		break;
	default:
		return;
	}
	st.checked++;
	CHECK_MSG(m->hdr.method == want,
		  "method 0x%02x attribute 0x%04x answered with method 0x%02x, status 0x%04x",
		  q->method, q->attr, m->hdr.method, m->hdr.status);
	CHECK_MSG(m->hdr.attr_id == q->attr ||
		  (q->method == SA_METHOD_GET_MULTI && !m->hdr.status &&
		   m->hdr.attr_id == SA_ATTR_PATH_RECORD),
		  "method 0x%02x attribute 0x%04x answered about attribute 0x%04x", q->method,
		  q->attr, m->hdr.attr_id);
}

static void tally(const struct req_seen *q)
{
	bool get = q->method == SA_METHOD_GET || q->method == SA_METHOD_GET_TABLE;

	switch (q->attr) {
	case SA_ATTR_SERVICE_RECORD:
		ok[q->method == SA_METHOD_SET ? OK_SVC_SET : q->method == SA_METHOD_DELETE ?
		   OK_SVC_DEL : OK_SVC_GET]++;
		break;
	case SA_ATTR_INFORM_INFO:
		ok[OK_INFORM_SET]++;
		break;
	case SA_ATTR_INFORM_INFO_RECORD:
		ok[OK_IIR]++;
		break;
	case SA_ATTR_MULTIPATH_RECORD:
		ok[q->chain ? OK_MPR_CHAIN : OK_MPR]++;
		break;
	case SA_ATTR_GUID_INFO_RECORD:
		if (!get)
			ok[q->method == SA_METHOD_SET ? OK_GIR_SET : OK_GIR_DEL]++;
		break;
	case SA_ATTR_PORT_INFO_RECORD:
		/* CapabilityMask: component 7 (IBA 15.2.5.3, the PortInfo fields in order) */
		if (q->mask & (UINT64_C(1) << 7))
			ok[OK_PIR_CAPMASK]++;
		break;
	case SA_ATTR_PATH_RECORD:
		if (q->mask & PR_CM_NUMB_PATH)
			ok[OK_PR_NUMB]++;
		if ((q->mask & (PR_CM_SERVICE_ID | PR_CM_TCLASS | PR_CM_REVERSIBLE)) ==
		    (PR_CM_SERVICE_ID | PR_CM_TCLASS | PR_CM_REVERSIBLE))
			ok[OK_PR_SID_TCLASS_REV]++;
		break;
	default:
		break;
	}
}

static struct seen_xfer *open_find(uint16_t dlid, uint32_t qpn, uint32_t tid, bool add)
{
	for (size_t i = 0; i < nopen; i++)
		if (open_x[i].dlid == dlid && open_x[i].qpn == qpn && open_x[i].tid == tid)
			return &open_x[i];
	if (!add)
		return NULL;
	if (nopen == OPEN_MAX)
		nopen = 0;
	open_x[nopen] = (struct seen_xfer){ .dlid = dlid, .qpn = qpn, .tid = tid };
	return &open_x[nopen++];
}

/* Every MAD the SA sends is checked here, as it leaves */
static int fake_send(void *ctx, const uint8_t mad[MAD_SIZE], size_t len, const struct mad_addr *to)
{
	uint16_t dlid = to->slid;
	uint32_t qpn = to->qpn;
	uint8_t buf[MAD_SIZE] = { 0 };
	struct sa_mad m;

	(void)ctx;
	st.answers++;
	if (len < SA_HDR_SIZE || len > MAD_SIZE) {
		st.bad++;
		CHECK_MSG(0, "a MAD of %zu bytes", len);
		return 0;
	}
	memcpy(buf, mad, len);
	if (sa_mad_decode(buf, MAD_SIZE, &m) < 0 || !(m.hdr.method & MAD_METHOD_RESP_BIT) ||
	    m.hdr.mgmt_class != MAD_CLASS_SA || m.hdr.base_version != 1) {
		st.bad++;
		CHECK_MSG(0, "an answer that is not an SA response (method 0x%x)", buf[3]);
		return 0;
	}
	if (!was_asked(dlid, qpn, (uint32_t)m.hdr.tid)) {
		st.misdirected++;
		CHECK_MSG(0, "TID 0x%x sent to LID %u QP %u, who never used it", (uint32_t)m.hdr.tid,
			  dlid, qpn);
	}
	if ((m.rmpp.flags & RMPP_FLAG_ACTIVE) && m.rmpp.type == RMPP_TYPE_ACK) {
		/* The SA receiving a GetMulti request in segments ACKs them (IBA 13.6.3.2) */
		st.rx_acks++;
		CHECK_MSG(m.hdr.method == SA_METHOD_GET_MULTI_RESP && len == SA_HDR_SIZE &&
			  m.rmpp.data2 >= m.rmpp.data1 && m.rmpp.data1 >= 1,
			  "an ACK of method 0x%x, %zu bytes, segment %u, window %u", m.hdr.method,
			  len, m.rmpp.data1, m.rmpp.data2);
		return 0;
	}
	{
		/* The first answer to a request (segment 1 of a table) says how it went */
		struct req_seen *q = req_slot((uint32_t)m.hdr.tid);

		if (q->tid == (uint32_t)m.hdr.tid && !q->answered &&
		    (!(m.rmpp.flags & RMPP_FLAG_ACTIVE) || m.rmpp.data1 == 1)) {
			q->answered = true;
			if (!m.hdr.status)
				tally(q);
			if (!q->reused) {
				check_answer(q, &m);
				check_visible(q, &m);
			}
		}
	}
	if (!(m.rmpp.flags & RMPP_FLAG_ACTIVE))
		return 0;
	if (m.rmpp.type == RMPP_TYPE_ABORT) {
		st.aborts_sent++;
		CHECK_MSG(m.rmpp.status >= RMPP_STATUS_ABORT_MIN &&
			  m.rmpp.status <= RMPP_STATUS_ABORT_MAX && len == SA_HDR_SIZE,
			  "an ABORT with status %u, %zu bytes", m.rmpp.status, len);
		return 0;
	}
	CHECK_MSG(m.rmpp.type == RMPP_TYPE_DATA, "RMPP type %u from a sender", m.rmpp.type);
	st.segments++;
	CHECK_MSG(m.rmpp.data1 >= 1, "segment number 0");
	{
		const struct win_seen *w = win_slot(dlid, qpn, (uint32_t)m.hdr.tid, false);

		if (w || !wins_reset)
			CHECK_MSG(m.rmpp.data1 <= (w && w->win > 1 ? w->win : 1),
				  "segment %u to LID %u TID 0x%x past every window given (%u)",
				  m.rmpp.data1, dlid, (uint32_t)m.hdr.tid, w ? w->win : 1);
	}
	CHECK_MSG(!(m.rmpp.flags & RMPP_FLAG_FIRST) == (m.rmpp.data1 != 1),
		  "FIRST on segment %u", m.rmpp.data1);
	if (m.rmpp.flags & RMPP_FLAG_LAST)
		CHECK_MSG(m.rmpp.data2 >= 20 && m.rmpp.data2 <= RMPP_SEG_PAYLOAD,
			  "last PayloadLength %u", m.rmpp.data2);
	else if (m.rmpp.data1 == 1)
		CHECK_MSG(m.rmpp.data2 > RMPP_SEG_PAYLOAD && m.rmpp.data2 % 4 == 0,
			  "first PayloadLength %u", m.rmpp.data2);
	struct seen_xfer *x = open_find(dlid, qpn, (uint32_t)m.hdr.tid, true);

	if (m.rmpp.data1 > x->last_seg)
		x->last_seg = m.rmpp.data1;
	if (m.rmpp.flags & RMPP_FLAG_LAST)
		x->last = true;
	return 0;
}

/*
 * GUIDInfo SMPs to ports: a Set taken now (the block as written), later, or
 * refused; a Get answered with the port's GUID at index 0 and, now and
 * then, an alias GUID smd never gave out
 */
struct smp_wait {
	void (*done)(void *arg, int status, const uint8_t data[64]);
	void *arg;
	uint8_t data[64];
};
#define SMP_WAIT_MAX 128
static struct smp_wait smp_waiting[SMP_WAIT_MAX];
static size_t nsmp_waiting;

static int fake_smp(void *ctx, const struct fab_port *p, uint8_t method, uint16_t attr,
		    uint32_t amod, const uint8_t data[64],
		    void (*done)(void *arg, int status, const uint8_t data[64]), void *arg)
{
	uint8_t held[64];

	(void)ctx;
	st.smps++;
	CHECK_MSG((method == MAD_METHOD_SET || method == MAD_METHOD_GET) &&
		  attr == SMP_ATTR_GUID_INFO,
		  "an SMP of method 0x%x attribute 0x%x from the SA", method, attr);
	if (method == MAD_METHOD_GET) {
		memset(held, 0, sizeof(held));
		for (int i = 0; amod == 0 && i < 8; i++)
			held[i] = (uint8_t)(p->guid >> (56 - 8 * i));
		if (!below(4))
			held[8 + below(56)] = (uint8_t)rnd();
	} else {
		memcpy(held, data, 64);
		if (!below(8))		/* a port that keeps one GUID of its own */
			held[below(64)] ^= 1;
	}
	switch (below(5)) {
	case 0:
		return -EIO;
	case 1:
		if (nsmp_waiting < SMP_WAIT_MAX) {
			smp_waiting[nsmp_waiting].done = done;
			smp_waiting[nsmp_waiting].arg = arg;
			memcpy(smp_waiting[nsmp_waiting++].data, held, 64);
			return 0;
		}
		/* fall through */
	default:
		done(arg, below(4) ? 0 : -ETIMEDOUT, held);
		return 0;
	}
}

static void smp_complete(void)
{
	size_t n = nsmp_waiting;

	nsmp_waiting = 0;
	for (size_t i = 0; i < n; i++)
		smp_waiting[i].done(smp_waiting[i].arg, below(3) ? 0 : -ETIMEDOUT,
				    smp_waiting[i].data);
}

/* Reports the SA sent, to be answered (or not) by their subscriber */
#define REPORTS_SEEN 64
static struct {
	uint16_t dlid;
	uint32_t qpn, tid;
} reported[REPORTS_SEEN];
static size_t nreported;

static int fake_send_req(void *ctx, const uint8_t mad[MAD_SIZE], const struct mad_addr *to,
			 int timeout_ms)
{
	uint16_t dlid = to->slid;
	uint32_t qpn = to->qpn;
	bool client = false;

	(void)ctx;
	st.reports++;
	CHECK_MSG(mad[0] == 1 && mad[1] == MAD_CLASS_SA && mad[3] == SA_METHOD_REPORT &&
		  get_be(mad + 16, 2) == SA_ATTR_NOTICE && timeout_ms > 0,
		  "a request of method 0x%x attribute 0x%x from the SA", mad[3],
		  (unsigned int)get_be(mad + 16, 2));
	/* Only the fabric's ports subscribe: the stranger (the last client) never can */
	for (int i = 0; i < NCLIENTS - 1; i++)
		client |= clients[i].slid == dlid;
	CHECK_MSG(client, "a Report to LID %u, who never subscribed", dlid);
	reported[nreported % REPORTS_SEEN].dlid = dlid;
	reported[nreported % REPORTS_SEEN].qpn = qpn;
	reported[nreported % REPORTS_SEEN].tid = (uint32_t)get_be(mad + 12, 4);
	nreported++;
	return 0;
}

static uint64_t fake_us = 1000000;

static uint64_t fake_now(void *ctx)
{
	(void)ctx;
	return fake_us;
}

/* Tables still being read, now and then: their queries are answered BUSY */
static bool fuzz_tables_busy(void *ctx)
{
	(void)ctx;
	return below(3) == 0;
}

/* ---- the model ---- */

static struct fakefab ff;

static struct fabric *model_build(uint8_t lmc)
{
	struct fabric *f;
	struct lid_stats ls;
	struct route_stats rs;

	if (fabric_new(&f) < 0)
		return NULL;
	if (ff_discover(&ff, f, NULL) < 0 || lid_assign(f, lmc, NULL, NULL, &ls) < 0 ||
	    route_compute(route_engine_find("minhop"), f, NULL, &rs, NULL) < 0) {
		fabric_free(f);
		return NULL;
	}
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int p = 0; p <= f->nodes[i]->num_ports; p++) {
			struct fab_port *pp = &f->nodes[i]->ports[p];

			pp->pi.link_width_active = 2;
			pp->pi.link_speed_active = 1;
			pp->pi.guid_cap = 8;
			pp->pi.vl_arb_low_cap = (uint8_t)(8 * below(9));
			pp->pi.vl_arb_high_cap = (uint8_t)(8 * below(9));
			/* The VL tables the sweep found, some of them (issue 23) */
			for (unsigned int b = 1; b <= 4; b++) {
				struct vl_arb_entry e[VL_ARB_BLOCK_SIZE];

				for (unsigned int k = 0; k < VL_ARB_BLOCK_SIZE; k++)
					e[k] = (struct vl_arb_entry){ .vl = (uint8_t)below(16),
								      .weight = (uint8_t)below(256) };
				if (below(4) && fabric_vlarb_set(f, pp, b, e) < 0) {
					fabric_free(f);
					return NULL;
				}
			}
			for (unsigned int in = 0; in <= f->nodes[i]->num_ports; in++) {
				uint8_t vl[16];

				for (unsigned int k = 0; k < 16; k++)
					vl[k] = (uint8_t)below(16);
				if (below(4) && fabric_sl2vl_pair(f->nodes[i], in, p) &&
				    fabric_sl2vl_set(f->nodes[i], in, p, sl2vl_pack(vl)) < 0) {
					fabric_free(f);
					return NULL;
				}
			}
			/* Every endport a full member of the default partition */
			if (fabric_is_endport(pp)) {
				static const uint16_t dflt[32] = { 0xffff };

				if (fabric_port_set_pkeys(pp, dflt, 32) < 0) {
					fabric_free(f);
					return NULL;
				}
				pp->pkeys_valid = true;
			}
		}
	return f;
}

/* ---- mutations ---- */

static const uint16_t attrs[] = {
	SA_ATTR_CLASS_PORT_INFO, SA_ATTR_NODE_RECORD, SA_ATTR_PORT_INFO_RECORD,
	SA_ATTR_SL2VL_RECORD, SA_ATTR_SWITCH_INFO_RECORD, SA_ATTR_LFT_RECORD,
	SA_ATTR_SM_INFO_RECORD, SA_ATTR_LINK_RECORD, SA_ATTR_GUID_INFO_RECORD,
	SA_ATTR_PKEY_RECORD, SA_ATTR_PATH_RECORD, SA_ATTR_VLARB_RECORD,
	SA_ATTR_MCMEMBER_RECORD, SA_ATTR_MFT_RECORD, SA_ATTR_SERVICE_RECORD,
	SA_ATTR_INFORM_INFO, SA_ATTR_INFORM_INFO_RECORD, SA_ATTR_MULTIPATH_RECORD,
	SA_ATTR_NOTICE, 0x0038, 0xffff,
};

static void mutate(uint8_t mad[MAD_SIZE])
{
	for (unsigned int k = 1 + below(3); k > 0; k--) {
		switch (below(10)) {
		case 0:		/* bit flips anywhere */
			for (unsigned int i = below(6); i > 0; i--)
				mad[below(MAD_SIZE)] ^= (uint8_t)(1u << below(8));
			break;
		case 1:		/* the method, sometimes one a client never sends */
			mad[3] = below(3) ? (uint8_t[]){ 0x01, 0x02, 0x12, 0x15, 0x14 }[below(5)] :
					    (uint8_t)rnd();
			break;
		case 2:		/* the attribute */
			mad[16] = (uint8_t)(attrs[below(sizeof(attrs) / sizeof(attrs[0]))] >> 8);
			mad[17] = (uint8_t)attrs[below(sizeof(attrs) / sizeof(attrs[0]))];
			break;
		case 3:		/* the component mask (SA header, IBA 15.2.1.1) */
			for (int i = 0; i < 8; i++)
				mad[48 + i] = below(2) ? (uint8_t)rnd() : 0;
			break;
		case 4:		/* the record: small LIDs, so masks select real records */
			for (int i = 56; i < MAD_SIZE; i++)
				mad[i] = below(4) ? mad[i] : (uint8_t)below(3) ? (uint8_t)below(40) :
									 (uint8_t)rnd();
			break;
		case 5:		/* the RMPP header of a request: none, or any */
			mad[24] = (uint8_t)below(3);
			mad[25] = (uint8_t)below(6);
			mad[26] = below(2) ? 0 : (uint8_t)rnd();
			mad[27] = (uint8_t)(rnd() & 7);
			for (int i = 28; i < 36; i++)
				mad[i] = below(2) ? 0 : (uint8_t)rnd();
			break;
		case 6:		/* the versions */
			mad[0] = below(4) ? 1 : (uint8_t)rnd();
			mad[2] = below(4) ? 2 : (uint8_t)rnd();
			break;
		case 7:		/* AttributeOffset, the SM_Key */
			mad[46] = (uint8_t)rnd();
			mad[47] = (uint8_t)rnd();
			/* SM_Key: none, a wrong one, or the trusted one (ProxyJoin and the like) */
			if (below(2)) {
				uint64_t key = below(3) ? (below(2) ? 0 : rnd()) : TRUSTED_KEY;

				for (int i = 0; i < 8; i++)
					mad[36 + i] = (uint8_t)(key >> (56 - 8 * i));
			}
			break;
		case 8:		/* the status of a request (should be 0) */
			mad[4] = (uint8_t)rnd();
			mad[5] = (uint8_t)rnd();
			break;
		default:	/* splice another corpus MAD's record in */
			memcpy(mad + 56, corpus[below((unsigned int)ncorpus)] + 56, MAD_SIZE - 56);
			break;
		}
	}
}

static void feed(struct sa *sa, uint8_t mad[MAD_SIZE], size_t len, const struct mad_addr *from)
{
	uint32_t tid = (uint32_t)mad[12] << 24 | (uint32_t)mad[13] << 16 | (uint32_t)mad[14] << 8 |
		       mad[15];

	asked_add(from, tid);
	st.mads++;
	if (len > 35 && (mad[26] & RMPP_FLAG_ACTIVE) && mad[25] == RMPP_TYPE_ACK) {
		/* A receiver's window, as far as the SA could read it */
		struct win_seen *w = win_slot(from->slid, from->qpn, tid, true);
		uint32_t win = (uint32_t)get_be(mad + 32, 4);

		if (win > w->win)
			w->win = win;
	}
	/* As smd does (through the fair queue), or straight in */
	if (below(2)) {
		sa_submit(sa, mad, len, from);
		sa_drain(sa, UINT64_MAX);
	} else {
		sa_handle(sa, mad, len, from);
	}
}

static void set_tid(uint8_t mad[MAD_SIZE], uint32_t tid)
{
	mad[12] = (uint8_t)(tid >> 24);
	mad[13] = (uint8_t)(tid >> 16);
	mad[14] = (uint8_t)(tid >> 8);
	mad[15] = (uint8_t)tid;
}

/*
 * A register's request as its own port sends it: the ServiceRecord's
 * ServiceGID (IBA 15.2.5.14, record bytes 8-23) or the GUIDInfoRecord's
 * LID (15.2.5.18, bytes 0-1) names the requester, as the SA insists for
 * anyone without the SM_Key. The corpus was sent from other ports.
 */
static void as_own_port(uint8_t mad[MAD_SIZE], const struct fabric *f, uint16_t slid)
{
	const struct fab_port *p = fabric_port_by_lid(f, slid);
	uint16_t attr = (uint16_t)get_be(mad + 16, 2);

	if (!p)
		return;
	if (attr == SA_ATTR_SERVICE_RECORD) {
		for (int i = 0; i < 8; i++) {
			mad[56 + 8 + i] = (uint8_t)(UINT64_C(0xfe80000000000000) >> (56 - 8 * i));
			mad[56 + 16 + i] = (uint8_t)(p->guid >> (56 - 8 * i));
		}
	} else if (attr == SA_ATTR_GUID_INFO_RECORD) {
		mad[56] = (uint8_t)(p->lid >> 8);
		mad[57] = (uint8_t)p->lid;
	}
}

/* A request (its TID set), remembered so that its answer is tallied */
static void feed_req(struct sa *sa, uint8_t mad[MAD_SIZE], size_t len,
		     const struct mad_addr *from, bool chain, bool reused)
{
	uint32_t tid = (uint32_t)get_be(mad + 12, 4);
	struct req_seen *q = req_slot(tid);

	if (!chain || q->tid != tid)
		*q = (struct req_seen){ .tid = tid, .method = mad[3],
					.attr = (uint16_t)get_be(mad + 16, 2),
					.mask = get_be(mad + 48, 8), .chain = chain,
					.reused = reused, .slid = from->slid,
					.trusted = get_be(mad + 36, 8) == TRUSTED_KEY };
	else
		q->reused |= reused;
	feed(sa, mad, len, from);
}

/*
 * A GetMulti request sent as RMPP DATA segments (the corpus chain that
 * starts at k, one TID), as a receiver may get it: whole, or with a
 * segment lost, repeated, out of order, mutated, or cut short
 */
static void chain(struct sa *sa, size_t k)
{
	uint32_t otid = (uint32_t)get_be(corpus[k] + 12, 4), tid = (uint32_t)rnd();
	const struct mad_addr *from = &clients[below(NCLIENTS)];
	size_t seg[64], n = 0, upto;

	for (size_t j = k; j < ncorpus && n < 64; j++)
		if (corpus[j][3] == SA_METHOD_GET_MULTI && corpus[j][25] == RMPP_TYPE_DATA &&
		    (uint32_t)get_be(corpus[j] + 12, 4) == otid)
			seg[n++] = j;
	st.chains++;
	/* Some requests are abandoned half-way: they hold the SA's slots until they expire */
	upto = below(4) ? n : below((unsigned int)n + 1);
	for (size_t i = 0; i < upto; i++) {
		uint8_t mad[MAD_SIZE];
		size_t at = seg[i];
		bool mutated;

		switch (below(24)) {
		case 0:		/* lost */
			continue;
		case 1:		/* out of order */
			at = seg[below((unsigned int)n)];
			break;
		case 2:		/* cut short */
			return;
		default:
			break;
		}
		memcpy(mad, corpus[at], MAD_SIZE);
		mutated = !below(16);
		if (mutated)
			mutate(mad);
		set_tid(mad, tid);
		/* A mutated segment may be another request of this TID: whose answer? */
		feed_req(sa, mad, MAD_SIZE, from, true, mutated);
		if (!below(16))		/* sent again */
			feed_req(sa, mad, MAD_SIZE, from, true, mutated);
	}
}

/* A subscriber answers a Report with ReportResp (IBA 13.4.9), or a stranger does */
static void report_resp(struct sa *sa)
{
	size_t i = below((unsigned int)(nreported < REPORTS_SEEN ? nreported : REPORTS_SEEN));
	struct mad_addr from = { .slid = reported[i].dlid, .qpn = reported[i].qpn };
	uint8_t mad[MAD_SIZE] = { 1, MAD_CLASS_SA, SA_CLASS_VERSION, SA_METHOD_REPORT_RESP };

	mad[16] = SA_ATTR_NOTICE >> 8;
	mad[17] = SA_ATTR_NOTICE & 0xff;
	set_tid(mad, below(8) ? reported[i].tid : (uint32_t)rnd());
	if (!below(8))
		from = clients[below(NCLIENTS)];
	st.report_resps++;
	sa_handle(sa, mad, below(8) ? MAD_SIZE : below(MAD_SIZE + 1), &from);
}

/* Traps the owner hands the SA: an SMA's 144/145 (or anything), groups created or deleted */
static void traps(struct sa *sa)
{
	uint8_t notice[NOTICE_SIZE + 16];

	for (size_t i = 0; i < sizeof(notice); i++)
		notice[i] = (uint8_t)rnd();
	if (below(2)) {
		notice[0] = 0x80 | (uint8_t)below(8);	/* IsGeneric, Type */
		notice[4] = 0;
		notice[5] = below(2) ? 144 : 145;
	}
	if (below(2))
		sa_report_forward(sa, notice, below(10) ? 64 : below(sizeof(notice) + 1),
				  below(8) ? clients[below(NCLIENTS)].slid : (uint16_t)rnd());
	else
		sa_report_mcast(sa, notice, below(2) ? 0xffff : (uint16_t)rnd(), below(2));
}

/* An RMPP ACK, STOP or ABORT for a transfer the receiver saw, or for none */
static void control(struct sa *sa)
{
	struct sa_mad m = { 0 };
	uint8_t buf[MAD_SIZE];
	struct mad_addr from = clients[below(NCLIENTS)];
	uint32_t tid = (uint32_t)rnd(), seg = below(8), win = below(16);

	if (nopen && below(8)) {
		struct seen_xfer *x = &open_x[below((unsigned int)nopen)];

		if (below(10)) {
			from.slid = x->dlid;
			from.qpn = x->qpn;
		}
		tid = x->tid;
		switch (below(6)) {
		case 0:		/* beyond what was sent */
			seg = x->last_seg + 1 + below(4);
			break;
		case 1:		/* stale */
			seg = x->last_seg ? below(x->last_seg) : 0;
			break;
		default:
			seg = x->last_seg;
		}
		switch (below(6)) {
		case 0:		/* a window that wraps or is absurd */
			win = (uint32_t)rnd();
			break;
		case 1:		/* one that shrinks */
			win = seg ? seg - 1 : 0;
			break;
		default:
			win = seg + 1 + below(64);
		}
	}
	m.hdr.base_version = 1;
	m.hdr.mgmt_class = MAD_CLASS_SA;
	m.hdr.class_version = SA_CLASS_VERSION;
	m.hdr.method = below(8) ? SA_METHOD_GET_TABLE : (uint8_t)rnd();
	m.hdr.attr_id = attrs[below(sizeof(attrs) / sizeof(attrs[0]))];
	m.hdr.tid = tid;
	m.rmpp.version = below(8) ? 1 : (uint8_t)below(4);
	m.rmpp.type = below(6) ? RMPP_TYPE_ACK : below(2) ? RMPP_TYPE_STOP : RMPP_TYPE_ABORT;
	if (m.rmpp.type != RMPP_TYPE_ACK)
		st.stops++;
	else
		st.acks++;
	m.rmpp.flags = below(10) ? RMPP_FLAG_ACTIVE : (uint8_t)below(8);
	m.rmpp.data1 = seg;
	m.rmpp.data2 = win;
	sa_mad_encode(&m, buf);
	/* The owner's receiver may answer with the request's own TID width */
	set_tid(buf, tid);
	feed(sa, buf, below(10) ? MAD_SIZE : SA_HDR_SIZE + below(MAD_SIZE - SA_HDR_SIZE + 1), &from);
}

static unsigned long open_count(const struct sa *sa)
{
	const struct sa_stats *s = sa_stats(sa);

	return (unsigned long)(s->rmpp_started - s->rmpp_done - s->rmpp_aborted);
}

int main(int argc, char **argv)
{
	unsigned long iters = 2000, seed = 1;
	struct fabric *fab[2] = { NULL, NULL };
	struct mc_db *db;
	struct mc_forest *fo = NULL;
	struct sa *sa;
	int opt, cur = 0, dead_node = -1;

	while ((opt = getopt(argc, argv, "n:s:")) != -1) {
		switch (opt) {
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: fuzz_sa [-n ITERATIONS] [-s SEED] FABRIC PCAP...\n");
			return 2;
		}
	}
	if (argc - optind < 2) {
		fprintf(stderr, "usage: fuzz_sa [-n ITERATIONS] [-s SEED] FABRIC PCAP...\n");
		return 2;
	}
	rng = seed * UINT64_C(0x9e3779b97f4a7c15) + 1;
	/* What the fuzzed clients make the SA log is noise here; errors stay */
	log_set_level(LOG_LVL_ERR);
	if (ff_load(&ff, argv[optind]) < 0)
		return 2;
	for (int i = optind + 1; i < argc; i++)
		if (corpus_load(argv[i]) < 0)
			return 2;
	CHECK_MSG(ncorpus >= 50, "the corpus holds %zu SA requests", ncorpus);
	if (!ncorpus)
		return unit_report();

	fab[0] = model_build(0);
	CHECK_MSG(fab[0] != NULL, "the fabric of %s routes", argv[optind]);
	if (!fab[0])
		return unit_report();
	/* Requesters: five ports of the fabric (CA ports and switches), one stranger */
	for (int i = 0, k = 0; i < NCLIENTS - 1; k++) {
		const struct fab_node *n = fab[0]->nodes[(size_t)k % fab[0]->nnodes];

		if (k > 10 * (int)fab[0]->nnodes)
			break;
		if (below(3))
			continue;
		clients[i].slid = n->ports[n->type == NODE_TYPE_SWITCH ? 0 : 1].lid;
		clients[i].qpn = 1;
		i++;
	}
	clients[NCLIENTS - 1] = (struct mad_addr){ .slid = 0xbfff, .qpn = 0x1234 };

	static struct sa_env env = {
		.sm_guid = 0x1234, .sm_lid = 1, .act_count = 1, .sm_priority = 1,
		.subnet_prefix = UINT64_C(0xfe80000000000000), .packet_life_time = 18,
		.send = fake_send, .now = fake_now, .tables_busy = fuzz_tables_busy,
		.smp = fake_smp, .send_req = fake_send_req,
		/* Small limits, so that the fuzzer reaches them */
		.xfers_per_port = 4, .bytes_per_port = 64 << 10, .bytes_max = 160 << 10,
		.trusted_key = TRUSTED_KEY,
	};
	CHECK_EQ(sa_new(&env, &sa), 0);
	CHECK_EQ(sa_update(sa, fab[0], NULL), 0);
	served = fab[0];
	CHECK_EQ(mc_db_new(0xc3ff, &db), 0);
	{
		struct mc_params bp = { .qkey = 0x0b1b, .pkey = 0xffff, .mtu = 4, .rate = 3 };
		uint8_t bc[16];

		mc_ipoib_mgid(0xffff, 2, bc);
		CHECK_EQ(mc_db_add_permanent(db, bc, &bp, NULL), 0);
	}
	CHECK_EQ(mc_forest_new(fab[0], NULL, &fo), 0);
	sa_set_mcast(sa, db, fo);

	unsigned long max_open = 0;

	for (unsigned long it = 0; it < iters; it++) {
		unsigned int what = below(100);
		uint8_t mad[MAD_SIZE];

		if (what < 45) {
			/* A client's request, as sent or mutated, from any requester */
			const struct mad_addr *from = &clients[below(NCLIENTS)];
			size_t len = MAD_SIZE, k = below((unsigned int)ncorpus);
			bool reused;

			if (chain_start(corpus[k]) && below(2)) {
				/* ...or the whole of a request sent in segments */
				chain(sa, k);
			} else {
				memcpy(mad, corpus[k], MAD_SIZE);
				if (below(2))
					as_own_port(mad, fab[cur], from->slid);
				if (below(3))
					mutate(mad);
				/* A retransmission reuses an open transfer's TID */
				reused = nopen && !below(10);
				if (reused)
					set_tid(mad, open_x[below((unsigned int)nopen)].tid);
				else
					set_tid(mad, (uint32_t)rnd());
				if (!below(12))
					len = below(MAD_SIZE + 1);
				st.requests++;
				feed_req(sa, mad, len, from, false, reused);
			}
		} else if (what < 82) {
			control(sa);
		} else if (what < 84) {
			if (nreported)
				report_resp(sa);
		} else if (what < 85) {
			traps(sa);
		} else if (what < 92) {
			/* Time passes: a little, or past every timer */
			fake_us += below(10) ? below(3000000) : 40000000 + below(1000000);
			st.jumps++;
			sa_tick(sa);
		} else if (what < 95) {
			smp_complete();
		} else if (what < 98) {
			uint64_t dirty[MLID_COUNT / 64 + 1];

			mc_db_take_dirty(db, dirty);
			CHECK_EQ(mc_forest_update(fo, db, dirty), 0);
		} else {
			/*
			 * A sweep ended: the SA serves a new model, the old one is
			 * freed as smd frees it (open transfers must not point
			 * into it), and the multicast forest follows.
			 */
			int next = !cur;

			/* A host unplugged or back: traps 64 and 65, subscribers that left */
			if (dead_node >= 0) {
				ff.nodes[dead_node].dead = false;
				dead_node = -1;
			} else if (below(2)) {
				int k = (int)below((unsigned int)ff.n);

				if (ff.nodes[k].type == NODE_TYPE_CA && k != ff.sm_node) {
					ff.nodes[k].dead = true;
					dead_node = k;
					st.ports_gone++;
				}
			}
			fab[next] = model_build((uint8_t)below(2));
			if (fab[next]) {
				struct mc_forest *nfo = NULL;

				/* SL-to-VL reads still out complete later, on the new model */
				CHECK_EQ(sa_update(sa, fab[next], NULL), 0);
				served = fab[next];
				if (mc_forest_new(fab[next], NULL, &nfo) == 0) {
					sa_set_mcast(sa, db, nfo);
					mc_forest_free(fo);
					fo = nfo;
				}
				fabric_free(fab[cur]);
				fab[cur] = NULL;
				cur = next;
				st.updates++;
			}
		}
		/* The limits hold at every step */
		unsigned long open = open_count(sa);

		if (open > max_open)
			max_open = open;
		CHECK_MSG(open <= (unsigned long)NCLIENTS * env.xfers_per_port,
			  "%lu transfers open after step %lu", open, it);
	}
	/* Every transfer has its time and no more, whatever the receivers did */
	smp_complete();
	fake_us += 120000000;
	sa_tick(sa);
	CHECK_MSG(open_count(sa) == 0, "%lu transfers still open after their lifetime",
		  open_count(sa));

	const struct sa_stats *s = sa_stats(sa);

	st.refused_seen = (unsigned long)s->refused;
	fprintf(stderr,
		"fuzz_sa: %lu iterations, seed %lu, corpus %zu: %lu MADs in (%lu requests, "
		"%lu ACKs, %lu STOP/ABORT), %lu out (%lu segments, %lu ABORTs); %" PRIu64
		" transfers started, %" PRIu64 " done, %" PRIu64 " given up, %lu refused, at "
		"most %lu open; %lu model changes, %lu clock jumps; %lu malformed, %lu "
		"misdirected\n",
		iters, seed, ncorpus, st.mads, st.requests, st.acks, st.stops, st.answers,
		st.segments, st.aborts_sent, s->rmpp_started, s->rmpp_done, s->rmpp_aborted,
		st.refused_seen, max_open, st.updates, st.jumps, st.bad, st.misdirected);
	fprintf(stderr, "fuzz_sa: %lu GetMulti segment chains (%lu ACKs of segments), %lu "
		"GUIDInfo SMPs, %lu Reports sent (%lu ReportResps in), %lu hosts unplugged\n",
		st.chains, st.rx_acks, st.smps, st.reports, st.report_resps, st.ports_gone);
	fprintf(stderr, "fuzz_sa: %lu answers checked for their method and attribute; %lu "
		"ServiceKeys and %lu InformInfoRecords shown, each to its owner\n", st.checked,
		st.keys_seen, st.iirs_seen);
	fprintf(stderr, "fuzz_sa: answered with success:");
	for (int i = 0; i < OK_N; i++)
		fprintf(stderr, "%s %s %lu", i ? "," : "", ok_name[i], ok[i]);
	fprintf(stderr, "\n");
	/* The corpus must reach every handler, not only their refusals */
	for (int i = 0; i < OK_N; i++)
		CHECK_MSG(iters < 1000 || ok[i] > 0, "no %s answered with success", ok_name[i]);
	CHECK_MSG(iters < 1000 || st.reports > 0, "no Report was sent");
	/* The fuzzer must reach the transfers and the limits, not only the decoder */
	CHECK_MSG(iters < 1000 || s->rmpp_started > iters / 50, "RMPP transfers were started");
	CHECK_MSG(iters < 1000 || s->rmpp_done > 0, "some transfers completed");
	CHECK_MSG(iters < 1000 || s->refused > 0, "the limits were reached");
	sa_set_mcast(sa, NULL, NULL);
	sa_free(sa);
	mc_forest_free(fo);
	mc_db_free(db);
	fabric_free(fab[cur]);
	ff_free(&ff);
	return unit_report();
}
