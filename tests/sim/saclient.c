/*
 * saclient.c - an SA client for tests, written from the IBA spec: the
 * records real clients use beyond multicast (issue 16). Every byte of the
 * MAD header (IBA 13.4.2), the RMPP header (13.6.2), the SA header
 * (15.2.1.1) and the records is laid out here from the spec's tables,
 * independently of smd's own encoders (mad/sa_codec.c), so that it judges them.
 * It runs as an ibsim client (LD_PRELOAD libumad2sim, SIM_HOST names the
 * node) or on a real port. One synchronous request at a time, each retried
 * on a timeout; multi-record answers are reassembled from RMPP here (ACK
 * per segment), and a GetMulti request longer than one MAD is sent as RMPP
 * DATA segments, each waiting for its ACK.
 *
 * --rmpp kernel receives RMPP as the Linux kernel's receiver does
 * (drivers/infiniband/core/mad_rmpp.c; its behaviour, written here from
 * the IBA's terms): segment 1 starts a transfer and is ACKed with
 * NewWindowLast 1 + W (W = --window, 64 as the kernel's default receive
 * queue of 512 gives); then the only ACKs are for the segment that makes
 * the segments held in order reach NewWindowLast (which then moves on by
 * W) and for the last one; a segment past NewWindowLast is dropped; one
 * held but not yet ACKed is dropped again, silently; one at or below the
 * last ACK, or any once the transfer is complete (for as long as this
 * process runs, as the kernel keeps a complete transfer 10 s), is ACKed
 * again with the current state; segments out of order are held until the
 * gap is filled; DATA of a transfer it does not know is dropped. Each
 * transfer prints a line "rmpp tid=.. segments=N unique=N acks=N
 * past_window=N dropped_held=N reacked=N complete=0|1 abort=STATUS ms=T" (T:
 * from the request to the end).
 * --stop-after N: no ACK once N segments are held in order (a receiver
 * that stops ACKing; with either mode), waiting for the sender's ABORT.
 *
 *   saclient [--issm] [--smkey K] [--timeout MS] [--not-sim] [--rmpp every|kernel]
 *            [--window W] [--stop-after N] VERB [key=value...] [\; ...]
 *
 * VERBs (one output line each, key=value pairs; status=0x.... on failure):
 *   cpi                       ClassPortInfo capability masks
 *   svc-set id= [gid=] [pkey=] [lease=] [key=] [name=] [d8=i:v] [d64=i:v]
 *   svc-del id= [gid=] [pkey=] [key=]
 *   svc-get [id=] [name=] [gid=]   (GetTable; one "svc" line per record)
 *   sub trap= [type=] [producer=] [gid=] [qpn=]  /  unsub (same keys)
 *   iir                       InformInfoRecord GetTable
 *   listen secs= [count=] [noresp=N]   Reports received (ReportResp sent
 *                             to all but the first N); until=FILE: stop
 *                             when FILE exists
 *   path [slid=] [dlid=] [sgid=] [dgid=] [numb=] [sid=] [tclass=] [flow=]
 *        [hop=] [qos=] [sl=] [rev=1] [get=1]
 *   mpath sgids=G,G.. dgids=G,G.. [numb=] [sid=] [rev=1] [tclass=] [pad=]
 *   gir-set lid= block= i=guid...  /  gir-del lid= block= i=0...
 *   gir lid= [block=] [get=1]  GUIDInfoRecords of a LID (GetTable, or Get)
 *   pir [lid=] [capmask=] [capmask2=]   PortInfoRecords (LID/port, capmask)
 *   nr portguid=              the NodeRecord of a port GUID (Get, no LID)
 *   vlarb lid= [port=] [block=] [get=1] / sl2vl lid= [in=] [out=] [get=1]
 *                             (GetTable; get=1: Get, one record, one MAD)
 *   table attr=ID             any GetTable, all records: one line per record
 *                             "rec i=N lost=0xWORDS hex=(its first 32 bytes)"
 *   raw method= attr= [mask=]  any method on any attribute, no data: the
 *                             answer's status and method (GetTraceTable 0x13)
 * --issm holds issm open: ibsim hands unsolicited MADs (Reports) only to
 * such a client (tests/sim/README.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/umad.h>

#define MAD_SIZE	256
#define SA_DATA_OFF	56	/* MAD 24 + RMPP 12 + SA 20 */
#define SA_DATA_LEN	200
#define CLASS_SA	0x03
#define M_GET		0x01
#define M_SET		0x02
#define M_REPORT	0x06
#define M_REPORT_RESP	0x86
#define M_GETTABLE	0x12
#define M_GETMULTI	0x14
#define M_DELETE	0x15
#define M_RESP		0x80
#define A_CPI		0x0001
#define A_NOTICE	0x0002
#define A_INFORM	0x0003
#define A_NR		0x0011
#define A_PIR		0x0012
#define A_SL2VL		0x0013
#define A_GIR		0x0030
#define A_SVC		0x0031
#define A_PR		0x0035
#define A_VLARB		0x0036
#define A_MPR		0x003a
#define A_IIR		0x00f3
#define RMPP_DATA	1
#define RMPP_ACK	2
#define RMPP_ACTIVE	1
#define RMPP_FIRST	2
#define RMPP_LAST	4
#define WINDOW		32

static void put16(uint8_t *p, unsigned v) { p[0] = (uint8_t)(v >> 8); p[1] = (uint8_t)v; }
static void put32(uint8_t *p, uint32_t v) { put16(p, v >> 16); put16(p + 2, v & 0xffff); }
static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}
static unsigned get16(const uint8_t *p) { return (unsigned)p[0] << 8 | p[1]; }
static uint32_t get32(const uint8_t *p) { return (uint32_t)get16(p) << 16 | get16(p + 2); }
static uint64_t get64(const uint8_t *p) { return (uint64_t)get32(p) << 32 | get32(p + 4); }

static struct {
	int portid, agent, issm;
	unsigned lid, sm_lid;
	uint64_t prefix, guid;
	uint32_t tid;
	uint64_t smkey;
	int timeout_ms;
	double sent_ms;		/* when the last request went out */
	bool kernel;		/* --rmpp kernel */
	uint32_t window;	/* its W */
	uint32_t stop_after;	/* --stop-after: no ACK once this many are held (0: none) */
} P = { .timeout_ms = 1000, .issm = -1, .window = 64 };

static volatile sig_atomic_t stop;
static void on_signal(int s) { (void)s; stop = 1; }

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int port_open(bool issm)
{
	umad_port_t p;
	char path[256];

	if (umad_init() < 0 || umad_get_port(NULL, 0, &p) < 0) {
		fprintf(stderr, "saclient: no umad port\n");
		return -1;
	}
	P.lid = p.base_lid;
	P.sm_lid = p.sm_lid;
	P.prefix = be64toh(p.gid_prefix);
	P.guid = be64toh(p.port_guid);
	if (issm && umad_get_issm_path(p.ca_name, p.portnum, path, sizeof(path)) == 0)
		P.issm = open(path, O_RDWR);
	umad_release_port(&p);
	if (issm && P.issm < 0) {
		fprintf(stderr, "saclient: cannot open issm\n");
		return -1;
	}
	P.portid = umad_open_port(NULL, 0);
	if (P.portid < 0)
		return -1;
	{
		/* Reports are requests to us: the method mask asks for them */
		long mask[16 / sizeof(long)] = { 0 };

		mask[0] = 1L << M_REPORT;
		P.agent = umad_register(P.portid, CLASS_SA, 2, 0, mask);
	}
	P.tid = (uint32_t)getpid() << 14;
	return P.agent < 0 ? -1 : 0;
}

static int send_mad(const uint8_t *mad, unsigned dlid, uint32_t qpn)
{
	uint8_t buf[1024] = { 0 };

	memcpy(umad_get_mad(buf), mad, MAD_SIZE);
	umad_set_addr(buf, (int)dlid, (int)qpn, 0, 0x80010000);
	return umad_send(P.portid, P.agent, buf, MAD_SIZE, 0, 0) < 0 ? -1 : 0;
}

static bool kr_done_reack(const uint8_t *mad);

/* One MAD, waiting at most ms; its source LID and QP; 0 or -1 */
static int recv_mad(uint8_t *mad, double ms, unsigned *slid, uint32_t *sqp)
{
	double end = now_ms() + ms;

	while (!stop) {
		uint8_t buf[1024];
		int len = MAD_SIZE, left = (int)(end - now_ms());

		if (left <= 0)
			return -1;
		memset(buf, 0, sizeof(buf));
		if (umad_recv(P.portid, buf, &len, left > 100 ? 100 : left) < 0)
			continue;
		if (umad_status(buf))
			continue;
		memcpy(mad, umad_get_mad(buf), MAD_SIZE);
		if (kr_done_reack(mad))
			continue;
		if (slid)
			*slid = ntohs(umad_get_mad_addr(buf)->lid);
		if (sqp)
			*sqp = ntohl(umad_get_mad_addr(buf)->qpn);
		return 0;
	}
	return -1;
}

/* IBA 13.4.2 + 15.2.1.1 */
static void header(uint8_t *m, unsigned method, unsigned attr, uint32_t tid, uint64_t mask)
{
	memset(m, 0, MAD_SIZE);
	m[0] = 1;
	m[1] = CLASS_SA;
	m[2] = 2;
	m[3] = (uint8_t)method;
	put64(m + 8, tid);
	put16(m + 16, attr);
	put64(m + 36, P.smkey);
	put64(m + 48, mask);
}

/* ---- Reports: answered wherever they come in (IBA 13.4.9) ---- */

static unsigned reports_seen;

static void report_print(const uint8_t *mad, unsigned slid, uint32_t sqp, bool resp)
{
	const uint8_t *n = mad + SA_DATA_OFF;
	char gid[64];

	inet_ntop(AF_INET6, n + 16, gid, sizeof(gid));
	reports_seen++;
	printf("report trap=%u type=%u producer=%u issuer_lid=%u gid=%s from=%u tid=0x%08x\n",
	       get16(n + 4), n[0] & 0x7f, (unsigned)(get32(n) & 0xffffff), get16(n + 6), gid,
	       slid, (uint32_t)get64(mad + 8));
	fflush(stdout);
	if (resp) {
		uint8_t r[MAD_SIZE];

		/* ReportResp: the Report's MAD, method 0x86 */
		memcpy(r, mad, MAD_SIZE);
		r[3] = M_REPORT_RESP;
		send_mad(r, slid, sqp);
	}
}

static bool is_report(const uint8_t *mad)
{
	return mad[1] == CLASS_SA && mad[3] == M_REPORT && get16(mad + 16) == A_NOTICE;
}

/*
 * One request and its answer: a single MAD, or an RMPP transfer
 * reassembled into *data (records of *rsize bytes). 0 and the MAD status,
 * -1 on no answer. Reports that come meanwhile are answered and printed.
 */
struct answer {
	unsigned status;
	uint8_t first[MAD_SIZE];
	uint8_t *data;
	size_t len, rsize;
};

static int last_abort;

static int rmpp_receive(const uint8_t *first, uint32_t tid, struct answer *a)
{
	uint8_t mad[MAD_SIZE];
	uint32_t expect = 1;
	double deadline;

	memcpy(mad, first, MAD_SIZE);
	for (;;) {
		uint32_t seg = get32(mad + 28);

		if (mad[25] == RMPP_DATA && seg == expect) {
			uint8_t ack[MAD_SIZE];

			a->data = realloc(a->data, a->len + SA_DATA_LEN);
			if (!a->data)
				exit(3);
			memcpy(a->data + a->len, mad + SA_DATA_OFF, SA_DATA_LEN);
			a->len += SA_DATA_LEN;
			/* IBA 13.6.3.2: the ACK repeats the DATA's headers, response bit off */
			memcpy(ack, mad, SA_DATA_OFF);
			memset(ack + SA_DATA_OFF, 0, SA_DATA_LEN);
			ack[3] &= (uint8_t)~M_RESP;
			put16(ack + 4, 0);
			ack[25] = RMPP_ACK;
			ack[26] = RMPP_ACTIVE;
			put32(ack + 28, seg);
			put32(ack + 32, seg + WINDOW);
			if (!P.stop_after || seg < P.stop_after)
				send_mad(ack, P.sm_lid, 1);
			if (mad[26] & RMPP_LAST) {
				uint32_t pay = get32(mad + 32);

				if (pay >= 20 && pay - 20 <= SA_DATA_LEN)
					a->len -= SA_DATA_LEN - (pay - 20);
				return 0;
			}
			expect++;
		} else if (mad[25] == 3 || mad[25] == 4) {
			last_abort = mad[27];
			return -1;	/* STOP, ABORT */
		}
		deadline = now_ms() + P.timeout_ms;
		for (;;) {
			if (recv_mad(mad, deadline - now_ms(), NULL, NULL) < 0)
				return -1;
			if (is_report(mad)) {
				report_print(mad, 0, 0, false);
				continue;
			}
			if ((uint32_t)get64(mad + 8) == tid && (mad[3] & M_RESP))
				break;
		}
	}
}

/* ---- RMPP as the Linux kernel receives it (--rmpp kernel) ---- */

#define KR_MAX_SEGS	(1u << 17)	/* 26 MB: far more than any table here */
#define KR_DONE_MAX	16

/* last_abort: the RMPPStatus of the last ABORT (or STOP) received, -1: none */

/* Complete transfers: their DATA is ACKed again, as long as we run */
static struct {
	uint32_t tid, seg_num, newwin;
	bool used;
} kr_done[KR_DONE_MAX];
static unsigned kr_done_next;

/* The ACK of a DATA segment (IBA 13.6.3.2): its headers, response bit flipped */
static void kr_send_ack(const uint8_t *data, uint32_t seg, uint32_t win)
{
	uint8_t ack[MAD_SIZE];

	memset(ack, 0, sizeof(ack));
	memcpy(ack, data, SA_DATA_OFF);
	ack[3] ^= M_RESP;
	ack[25] = RMPP_ACK;
	ack[26] = (uint8_t)((ack[26] & 0xf8) | RMPP_ACTIVE);
	put32(ack + 28, seg);
	put32(ack + 32, win);
	send_mad(ack, P.sm_lid, 1);
}

static bool kr_done_reack(const uint8_t *mad)
{
	if (!P.kernel || mad[1] != CLASS_SA || !(mad[3] & M_RESP) || !(mad[26] & RMPP_ACTIVE) ||
	    mad[25] != RMPP_DATA)
		return false;
	for (unsigned i = 0; i < KR_DONE_MAX; i++)
		if (kr_done[i].used && kr_done[i].tid == (uint32_t)get64(mad + 8)) {
			if (!P.stop_after || kr_done[i].seg_num < P.stop_after)
				kr_send_ack(mad, kr_done[i].seg_num, kr_done[i].newwin);
			return true;
		}
	return false;
}

struct krx {
	uint32_t seg_num;		/* held in order: 1..seg_num */
	uint32_t newwin, last_ack, last_seg, last_pay;
	bool complete;
	uint8_t *held;
	uint32_t cap;			/* segments room is made for */
	unsigned segments, unique, acks, past_window, dropped_held, reacked;
};

/* A receiver that stopped ACKing (its window stays where the sender saw it last) */
static bool kr_muted(const struct krx *k)
{
	return P.stop_after && k->seg_num >= P.stop_after;
}

static void kr_ack(struct krx *k, const uint8_t *data)
{
	if (kr_muted(k))
		return;
	k->last_ack = k->seg_num;
	k->acks++;
	kr_send_ack(data, k->seg_num, k->newwin);
}

/* Segment n arrived: hold it (room for it in a->data and k->held); false: no room */
static bool kr_hold(struct krx *k, struct answer *a, uint32_t n, const uint8_t *mad)
{
	if (n > k->cap) {
		uint32_t cap = k->cap ? k->cap : 64;

		while (cap < n)
			cap *= 2;
		k->held = realloc(k->held, cap);
		a->data = realloc(a->data, (size_t)cap * SA_DATA_LEN);
		if (!k->held || !a->data)
			exit(3);
		memset(k->held + k->cap, 0, cap - k->cap);
		k->cap = cap;
	}
	k->held[n - 1] = 1;
	k->unique++;
	memcpy(a->data + (size_t)(n - 1) * SA_DATA_LEN, mad + SA_DATA_OFF, SA_DATA_LEN);
	if (mad[26] & RMPP_LAST) {
		k->last_seg = n;
		k->last_pay = get32(mad + 32);
	}
	return true;
}

static void kr_data(struct krx *k, struct answer *a, const uint8_t *mad)
{
	uint32_t n = get32(mad + 28);

	k->segments++;
	if (!k->seg_num) {
		/* Only segment 1, marked First, starts a transfer */
		if (n != 1 || !(mad[26] & RMPP_FIRST))
			return;
		kr_hold(k, a, 1, mad);
		k->seg_num = 1;
		k->newwin = 1;
		if (mad[26] & RMPP_LAST)
			k->complete = true;
		else
			k->newwin += P.window;
		kr_ack(k, mad);
		return;
	}
	if (n == 0 || n > KR_MAX_SEGS)
		return;
	if (n > k->newwin) {
		k->past_window++;
		return;
	}
	if (n <= k->last_ack || k->complete) {
		k->reacked++;
		kr_ack(k, mad);
		return;
	}
	if (n <= k->cap && k->held[n - 1]) {
		k->dropped_held++;
		return;
	}
	kr_hold(k, a, n, mad);
	if (n != k->seg_num + 1)
		return;
	while (k->seg_num < k->cap && k->held[k->seg_num])
		k->seg_num++;
	if (k->last_seg && k->seg_num == k->last_seg) {
		k->complete = true;
		kr_ack(k, mad);
	} else if (k->seg_num == k->newwin && !kr_muted(k)) {
		k->newwin += P.window;
		kr_ack(k, mad);
	}
}

static int rmpp_receive_kernel(const uint8_t *first, uint32_t tid, struct answer *a)
{
	struct krx k = { 0 };
	uint8_t mad[MAD_SIZE];
	int abort = -1;

	memcpy(mad, first, MAD_SIZE);
	for (;;) {
		double deadline;

		if (mad[25] == RMPP_DATA) {
			kr_data(&k, a, mad);
		} else if (mad[25] == 3 || mad[25] == 4) {
			abort = mad[27];	/* STOP, ABORT */
			break;
		}
		if (k.complete)
			break;
		deadline = now_ms() + P.timeout_ms;
		for (;;) {
			if (recv_mad(mad, deadline - now_ms(), NULL, NULL) < 0)
				goto out;
			if (is_report(mad)) {
				report_print(mad, 0, 0, false);
				continue;
			}
			if ((uint32_t)get64(mad + 8) == tid && (mad[3] & M_RESP) &&
			    (mad[26] & RMPP_ACTIVE))
				break;
		}
	}
out:
	last_abort = abort;
	if (k.complete) {
		uint32_t pay = k.last_pay;

		a->len = (size_t)k.seg_num * SA_DATA_LEN;
		if (pay >= 20 && pay - 20 <= SA_DATA_LEN)
			a->len -= SA_DATA_LEN - (pay - 20);
		kr_done[kr_done_next].tid = tid;
		kr_done[kr_done_next].seg_num = k.seg_num;
		kr_done[kr_done_next].newwin = k.newwin;
		kr_done[kr_done_next].used = true;
		kr_done_next = (kr_done_next + 1) % KR_DONE_MAX;
	}
	printf("rmpp tid=0x%08x segments=%u unique=%u acks=%u past_window=%u dropped_held=%u "
	       "reacked=%u held=%u complete=%d abort=%d ms=%.0f\n", tid, k.segments, k.unique,
	       k.acks, k.past_window, k.dropped_held, k.reacked, k.seg_num, k.complete, abort,
	       now_ms() - P.sent_ms);
	fflush(stdout);
	free(k.held);
	return k.complete ? 0 : -1;
}

/* The answer's RMPP transfer, received the way --rmpp says */
static int rmpp_recv_any(const uint8_t *first, uint32_t tid, struct answer *a)
{
	return P.kernel ? rmpp_receive_kernel(first, tid, a) : rmpp_receive(first, tid, a);
}

static int txn(uint8_t *req, struct answer *a)
{
	memset(a, 0, sizeof(*a));
	for (int tries = 0; tries < 3 && !stop; tries++) {
		uint32_t tid = ++P.tid;
		double deadline = now_ms() + P.timeout_ms;
		uint8_t mad[MAD_SIZE];

		put64(req + 8, tid);
		P.sent_ms = now_ms();
		send_mad(req, P.sm_lid, 1);
		while (recv_mad(mad, deadline - now_ms(), NULL, NULL) == 0) {
			if (is_report(mad)) {
				report_print(mad, 0, 0, false);
				continue;
			}
			if ((uint32_t)get64(mad + 8) != tid || !(mad[3] & M_RESP))
				continue;
			/* An RMPP ACK for our own request: not the answer */
			if ((mad[26] & RMPP_ACTIVE) && mad[25] == RMPP_ACK)
				continue;
			memcpy(a->first, mad, MAD_SIZE);
			a->status = get16(mad + 4);
			a->rsize = get16(mad + 44) * 8u;
			/* The kernel drops DATA of a transfer it has not seen begin */
			if (P.kernel && (mad[26] & RMPP_ACTIVE) && mad[25] == RMPP_DATA &&
			    (get32(mad + 28) != 1 || !(mad[26] & RMPP_FIRST)))
				continue;
			if (!a->status && (mad[26] & RMPP_ACTIVE))
				return rmpp_recv_any(mad, tid, a) < 0 ? -1 : 0;
			/* One MAD, one record (Get, Set and Delete answers) */
			a->data = malloc(SA_DATA_LEN);
			memcpy(a->data, mad + SA_DATA_OFF, SA_DATA_LEN);
			a->len = a->status ? 0 : a->rsize;
			return 0;
		}
	}
	return -1;
}

/* ---- arguments ---- */

struct kv {
	int n;
	char **k, **v;
};

static const char *kv(const struct kv *o, const char *key)
{
	for (int i = 0; i < o->n; i++)
		if (!strcmp(o->k[i], key))
			return o->v[i];
	return NULL;
}

static uint64_t num(const struct kv *o, const char *key, uint64_t dflt)
{
	const char *s = kv(o, key);

	return s ? strtoull(s, NULL, 0) : dflt;
}

static int gid_parse(const char *s, uint8_t g[16])
{
	/* A GID, or a bare port GUID under our own subnet prefix */
	if (strchr(s, ':'))
		return inet_pton(AF_INET6, s, g) == 1 ? 0 : -1;
	put64(g, P.prefix);
	put64(g + 8, strtoull(s, NULL, 0));
	return 0;
}

static void gid_str(const uint8_t g[16], char *out)
{
	inet_ntop(AF_INET6, g, out, 64);
}

static int fail(const char *verb, const struct answer *a, int r)
{
	if (r < 0)
		printf("%s timeout=1\n", verb);
	else
		printf("%s status=0x%04x\n", verb, a->status);
	fflush(stdout);
	free(a->data);
	return 1;
}

/* ---- verbs ---- */

static int v_cpi(void)
{
	uint8_t m[MAD_SIZE];
	struct answer a;
	int r;

	header(m, M_GET, A_CPI, 0, 0);
	r = txn(m, &a);
	if (r < 0 || a.status)
		return fail("cpi", &a, r);
	/* IBA 13.4.8.1: CapabilityMask bytes 2-3, CapabilityMask2 the next 27 bits */
	printf("cpi capmask=0x%04x capmask2=0x%07x resptime=%u\n", get16(a.data + 2),
	       get32(a.data + 4) >> 5, a.data[7] & 0x1f);
	free(a.data);
	return 0;
}

static int v_raw(const struct kv *o)
{
	uint8_t m[MAD_SIZE];
	struct answer a;
	int r;

	header(m, (unsigned)num(o, "method", M_GET), (unsigned)num(o, "attr", A_PR), 0,
	       num(o, "mask", 0));
	r = txn(m, &a);
	if (r < 0)
		return fail("raw", &a, r);
	printf("raw status=0x%04x method=0x%02x attr=0x%04x\n", a.status, a.first[3],
	       get16(a.first + 16));
	free(a.data);
	return 0;
}

/*
 * umad2sim 0.10 hands a reader only bytes 0-223 of every MAD (README):
 * SA data 168-199 of each RMPP segment is lost. A record overlapping that
 * window in an RMPP answer is marked: the fields it says that lie there are
 * not what the SA sent. Returns a bitmask of 8-byte words lost.
 */
static bool sim_lossy = true;

static unsigned lost_words(size_t off, size_t rsize)
{
	unsigned w = 0;

	for (size_t b = 0; sim_lossy && b < rsize; b++)
		if ((off + b) % SA_DATA_LEN >= 168)
			w |= 1u << (b / 8);
	return w;
}

/* ServiceRecord (IBA 15.2.5.14): byte offsets of the fields */
static void svc_print(const uint8_t *r, const char *verb)
{
	char gid[64], name[65] = { 0 };

	gid_str(r + 8, gid);
	memcpy(name, r + 48, 64);
	for (char *c = name; *c; c++)
		if (*c == ' ' || *c < 0x20 || *c > 0x7e)
			*c = '_';
	printf("%s id=0x%016" PRIx64 " gid=%s pkey=0x%04x lease=%u key=%02x%02x name=%s "
	       "d8_0=%u d32_3=0x%08x d64_0=0x%016" PRIx64 "\n", verb, get64(r), gid,
	       get16(r + 24), get32(r + 28), r[46], r[47], name, r[112], get32(r + 156),
	       get64(r + 160));
}

static int v_svc(const char *verb, const struct kv *o)
{
	uint8_t m[MAD_SIZE], *r = m + SA_DATA_OFF;
	uint64_t mask = 0;
	unsigned method = !strcmp(verb, "svc-set") ? M_SET : !strcmp(verb, "svc-del") ?
			  M_DELETE : M_GETTABLE;
	struct answer a;
	const char *s;
	int rc;

	header(m, method, A_SVC, 0, 0);
	if ((s = kv(o, "id"))) {
		put64(r, strtoull(s, NULL, 0));
		mask |= 1u << 0;
	}
	if ((s = kv(o, "gid"))) {
		gid_parse(s, r + 8);
		mask |= 1u << 1;
	} else if (method != M_GETTABLE) {
		put64(r + 8, P.prefix);
		put64(r + 16, P.guid);
		mask |= 1u << 1;
	}
	if ((s = kv(o, "pkey"))) {
		put16(r + 24, (unsigned)strtoul(s, NULL, 0));
		mask |= 1u << 2;
	}
	if ((s = kv(o, "lease"))) {
		put32(r + 28, (uint32_t)strtoul(s, NULL, 0));
		mask |= 1u << 4;
	}
	if ((s = kv(o, "key"))) {
		/* A 128-bit key: the number in its last 8 bytes */
		put64(r + 40, strtoull(s, NULL, 0));
		mask |= 1u << 5;
	}
	if ((s = kv(o, "name"))) {
		strncpy((char *)r + 48, s, 64);
		mask |= 1u << 6;
	}
	if ((s = kv(o, "d8"))) {
		unsigned i = (unsigned)strtoul(s, NULL, 0) & 15;

		r[112 + i] = (uint8_t)strtoul(strchr(s, ':') ? strchr(s, ':') + 1 : "0", NULL, 0);
		mask |= 1ull << (7 + i);
	}
	if ((s = kv(o, "d32_3"))) {
		put32(r + 156, (uint32_t)strtoul(s, NULL, 0));
		mask |= 1ull << 34;
	}
	if ((s = kv(o, "d64_0"))) {
		put64(r + 160, strtoull(s, NULL, 0));
		mask |= 1ull << 35;
	}
	put64(m + 48, mask);
	rc = txn(m, &a);
	if (rc < 0 || a.status)
		return fail(verb, &a, rc);
	if (method == M_GETTABLE) {
		size_t n = a.rsize ? a.len / a.rsize : 0;

		for (size_t i = 0; i < n; i++) {
			unsigned w = lost_words(i * a.rsize, a.rsize);

			if (w)
				printf("lost rec=%zu words=0x%02x\n", i, w);
			svc_print(a.data + i * a.rsize, "svc");
		}
		printf("%s records=%zu\n", verb, n);
	} else {
		svc_print(a.data, verb);
	}
	free(a.data);
	return 0;
}

/* InformInfo (IBA 13.4.8.3) */
static int v_sub(const char *verb, const struct kv *o)
{
	uint8_t m[MAD_SIZE], *ii = m + SA_DATA_OFF;
	struct answer a;
	const char *s;
	int r;

	header(m, M_SET, A_INFORM, 0, 0);
	if ((s = kv(o, "gid")))
		gid_parse(s, ii);
	put16(ii + 16, (unsigned)num(o, "lid_begin", 0xffff));
	put16(ii + 18, (unsigned)num(o, "lid_end", 0));
	ii[22] = 1;				/* IsGeneric */
	ii[23] = !strcmp(verb, "sub");		/* Subscribe */
	put16(ii + 24, (unsigned)num(o, "type", 0xffff));
	put16(ii + 26, (unsigned)num(o, "trap", 0xffff));
	put32(ii + 28, (uint32_t)num(o, "qpn", 0) << 8 | (num(o, "resptime", 18) & 0x1f));
	put32(ii + 32, (uint32_t)num(o, "producer", 0xffffff) & 0xffffff);
	r = txn(m, &a);
	if (r < 0 || a.status)
		return fail(verb, &a, r);
	printf("%s trap=%u subscribe=%u method=0x%02x attr=0x%04x\n", verb, get16(a.data + 26),
	       a.data[23], a.first[3], get16(a.first + 16));
	free(a.data);
	return 0;
}

static int v_iir(void)
{
	uint8_t m[MAD_SIZE];
	struct answer a;
	int r;

	header(m, M_GETTABLE, A_IIR, 0, 0);
	r = txn(m, &a);
	if (r < 0 || a.status)
		return fail("iir", &a, r);
	for (size_t i = 0; a.rsize && i < a.len / a.rsize; i++) {
		const uint8_t *rec = a.data + i * a.rsize, *ii = rec + 24;
		unsigned w = lost_words(i * a.rsize, a.rsize);
		char gid[64], igid[64];

		if (w)
			printf("lost rec=%zu words=0x%02x\n", i, w);

		gid_str(rec, gid);
		gid_str(ii, igid);
		/* InformInfoRecord (IBA 15.2.5.12): SubscriberGID, Enum, InformInfo at 24 */
		printf("iir subscriber=%s enum=%u trap=%u type=%u producer=%u gid=%s lid_begin=%u "
		       "lid_end=%u generic=%u subscribe=%u qpn=%u resptime=%u\n", gid,
		       get16(rec + 16), get16(ii + 26), get16(ii + 24),
		       (unsigned)(get32(ii + 32) & 0xffffff), igid, get16(ii + 16),
		       get16(ii + 18), ii[22], ii[23], get32(ii + 28) >> 8, ii[31] & 0x1f);
	}
	printf("iir records=%zu\n", a.rsize ? a.len / a.rsize : 0);
	free(a.data);
	return 0;
}

static int v_listen(const struct kv *o)
{
	double end = now_ms() + 1000.0 * (double)num(o, "secs", 10);
	unsigned want = (unsigned)num(o, "count", 0), before = reports_seen;
	unsigned skip = (unsigned)num(o, "noresp", 0);
	const char *until = kv(o, "until");

	printf("listening lid=%u\n", P.lid);
	fflush(stdout);
	while (!stop && now_ms() < end && (!want || reports_seen - before < want)) {
		uint8_t mad[MAD_SIZE];
		unsigned slid;
		uint32_t sqp;

		if (until && access(until, F_OK) == 0)
			break;
		if (recv_mad(mad, until ? 200 : end - now_ms(), &slid, &sqp) < 0)
			continue;
		if (is_report(mad))
			report_print(mad, slid, sqp, reports_seen - before >= skip);
	}
	printf("listen reports=%u\n", reports_seen - before);
	return 0;
}

/* PathRecord (IBA 15.2.5.16): byte offsets */
static void path_print(const uint8_t *r, const char *verb)
{
	char s[64], d[64];

	gid_str(r + 24, s);
	gid_str(r + 8, d);
	printf("%s slid=%u dlid=%u sgid=%s dgid=%s sid=0x%016" PRIx64 " flow=0x%x hop=%u "
	       "tclass=0x%02x rev=%u pkey=0x%04x qos=0x%03x sl=%u mtu=%u rate=%u plt=%u pref=%u\n",
	       verb, get16(r + 42), get16(r + 40), s, d, get64(r),
	       (unsigned)(get32(r + 44) >> 8) & 0xfffff, r[47], r[48], r[49] >> 7, get16(r + 50),
	       get16(r + 52) >> 4, r[53] & 0xf, r[54] & 0x3f, r[55] & 0x3f, r[56] & 0x3f, r[57]);
}

static int v_path(const struct kv *o)
{
	uint8_t m[MAD_SIZE], *r = m + SA_DATA_OFF;
	uint64_t mask = 0;
	bool get = num(o, "get", 0);
	struct answer a;
	const char *s;
	int rc;

	header(m, get ? M_GET : M_GETTABLE, A_PR, 0, 0);
	if ((s = kv(o, "sid"))) {
		put64(r, strtoull(s, NULL, 0));
		mask |= 3;
	}
	if ((s = kv(o, "dgid"))) {
		gid_parse(s, r + 8);
		mask |= 1u << 2;
	}
	if ((s = kv(o, "sgid"))) {
		gid_parse(s, r + 24);
		mask |= 1u << 3;
	}
	if ((s = kv(o, "dlid"))) {
		put16(r + 40, (unsigned)strtoul(s, NULL, 0));
		mask |= 1u << 4;
	}
	if ((s = kv(o, "slid"))) {
		put16(r + 42, (unsigned)strtoul(s, NULL, 0));
		mask |= 1u << 5;
	}
	if ((s = kv(o, "flow"))) {
		put32(r + 44, (uint32_t)(strtoul(s, NULL, 0) & 0xfffff) << 8);
		mask |= 1u << 8;
	}
	if ((s = kv(o, "hop"))) {
		r[47] = (uint8_t)strtoul(s, NULL, 0);
		mask |= 1u << 9;
	}
	if ((s = kv(o, "tclass"))) {
		r[48] = (uint8_t)strtoul(s, NULL, 0);
		mask |= 1u << 10;
	}
	if ((s = kv(o, "rev"))) {
		r[49] |= (uint8_t)(strtoul(s, NULL, 0) ? 0x80 : 0);
		mask |= 1u << 11;
	}
	if ((s = kv(o, "numb"))) {
		r[49] |= (uint8_t)(strtoul(s, NULL, 0) & 0x7f);
		mask |= 1u << 12;
	}
	if ((s = kv(o, "qos"))) {
		put16(r + 52, (unsigned)(strtoul(s, NULL, 0) & 0xfff) << 4);
		mask |= 1u << 14;
	}
	if ((s = kv(o, "sl"))) {
		r[53] |= (uint8_t)(strtoul(s, NULL, 0) & 0xf);
		mask |= 1u << 15;
	}
	put64(m + 48, mask);
	rc = txn(m, &a);
	if (rc < 0 || a.status)
		return fail("path", &a, rc);
	for (size_t i = 0; a.rsize && i < a.len / a.rsize; i++) {
		/* Multi-MAD answers: which words of this record came through */
		if (!get) {
			unsigned w = lost_words(i * a.rsize, a.rsize);

			if (w)
				printf("lost rec=%zu words=0x%02x\n", i, w);
		}
		path_print(a.data + i * a.rsize, "path");
	}
	printf("path records=%zu\n", a.rsize ? a.len / a.rsize : 0);
	free(a.data);
	return 0;
}

/* Send req (its data: len bytes) as RMPP DATA segments, each ACKed; 0 or -1 */
static int rmpp_send(uint8_t *req, const uint8_t *data, size_t len, uint32_t tid)
{
	uint32_t nseg = (uint32_t)((len + SA_DATA_LEN - 1) / SA_DATA_LEN);

	for (uint32_t n = 1; n <= nseg; n++) {
		size_t off = (size_t)(n - 1) * SA_DATA_LEN;
		size_t chunk = len - off < SA_DATA_LEN ? len - off : SA_DATA_LEN;
		double deadline = now_ms() + P.timeout_ms;
		uint8_t mad[MAD_SIZE];
		bool acked = false;

		/* IBA 13.6.2.3: PayloadLength in the first (all) and last (its own) */
		req[24] = 1;
		req[25] = RMPP_DATA;
		req[26] = (uint8_t)(0x1f << 3 | RMPP_ACTIVE | (n == 1 ? RMPP_FIRST : 0) |
				    (n == nseg ? RMPP_LAST : 0));
		put32(req + 28, n);
		put32(req + 32, n == 1 ? nseg * 220 - (uint32_t)(nseg * SA_DATA_LEN - len) :
				n == nseg ? (uint32_t)(20 + chunk) : 0);
		memset(req + SA_DATA_OFF, 0, SA_DATA_LEN);
		memcpy(req + SA_DATA_OFF, data + off, chunk);
		put64(req + 8, tid);
		send_mad(req, P.sm_lid, 1);
		while (!acked && recv_mad(mad, deadline - now_ms(), NULL, NULL) == 0)
			acked = (uint32_t)get64(mad + 8) == tid && mad[25] == RMPP_ACK &&
				get32(mad + 28) == n;
		if (!acked)
			return -1;
	}
	return 0;
}

static int gid_list(const char *s, uint8_t *out, unsigned max)
{
	char *copy = strdup(s ? s : ""), *save = NULL;
	unsigned n = 0;

	for (char *t = strtok_r(copy, ",", &save); t && n < max; t = strtok_r(NULL, ",", &save))
		if (gid_parse(t, out + 16 * n) == 0)
			n++;
	free(copy);
	return (int)n;
}

/* MultiPathRecord (IBA 15.2.5.20): 24 fixed bytes, then the GIDs */
static int v_mpath(const struct kv *o)
{
	static uint8_t rec[24 + 16 * 512];
	uint8_t m[MAD_SIZE];
	uint64_t mask = 1u << 19 | 1u << 20;
	int ns, nd;
	struct answer a = { 0 };
	uint32_t tid = ++P.tid;
	double deadline;
	const char *s;
	size_t len;

	memset(rec, 0, sizeof(rec));
	ns = gid_list(kv(o, "sgids"), rec + 24, 255);
	nd = gid_list(kv(o, "dgids"), rec + 24 + 16 * ns, 255);
	rec[15] = (uint8_t)ns;
	rec[16] = (uint8_t)nd;
	if ((s = kv(o, "numb"))) {
		rec[5] = (uint8_t)(strtoul(s, NULL, 0) & 0x7f);
		mask |= 1u << 6;
	}
	if ((s = kv(o, "rev"))) {
		rec[5] |= 0x80;
		mask |= 1u << 5;
	}
	if ((s = kv(o, "tclass"))) {
		rec[4] = (uint8_t)strtoul(s, NULL, 0);
		mask |= 1u << 4;
	}
	if ((s = kv(o, "sid"))) {
		uint64_t sid = strtoull(s, NULL, 0);

		rec[13] = (uint8_t)(sid >> 56);
		for (int i = 0; i < 7; i++)
			rec[17 + i] = (uint8_t)(sid >> (48 - 8 * i));
		mask |= 1u << 16 | 1u << 21;
	}
	len = 24 + 16 * (size_t)(ns + nd);
	/*
	 * pad=N: N bytes more after the GIDs, nothing the SA reads: a request
	 * of several RMPP segments whose GIDs all lie where umad2sim does not
	 * damage them (it loses bytes 168-199 of every segment's SA data)
	 */
	len += (size_t)num(o, "pad", 0);
	if (len > sizeof(rec))
		len = sizeof(rec);
	header(m, M_GETMULTI, A_MPR, tid, mask);
	/* The request direction of a double-sided RMPP transfer (IBA 13.6.2) */
	P.sent_ms = now_ms();
	if (rmpp_send(m, rec, len, tid) < 0) {
		printf("mpath request_not_acked=1\n");
		return 1;
	}
	deadline = now_ms() + P.timeout_ms;
	while (recv_mad(m, deadline - now_ms(), NULL, NULL) == 0) {
		if ((uint32_t)get64(m + 8) != tid || !(m[3] & M_RESP) || m[25] == RMPP_ACK)
			continue;
		a.status = get16(m + 4);
		if (a.status)
			return fail("mpath", &a, 0);
		printf("mpath method=0x%02x attr=0x%04x segs=%u\n", m[3], get16(m + 16),
		       (m[26] & RMPP_LAST) ? 1 : 0);
		a.rsize = get16(m + 44) * 8u;
		if (rmpp_recv_any(m, tid, &a) < 0)
			return fail("mpath", &a, -1);
		for (size_t i = 0; a.rsize && i < a.len / a.rsize; i++) {
			unsigned w = lost_words(i * a.rsize, a.rsize);

			if (w)
				printf("lost rec=%zu words=0x%02x\n", i, w);
			path_print(a.data + i * a.rsize, "mpath");
		}
		printf("mpath records=%zu\n", a.rsize ? a.len / a.rsize : 0);
		free(a.data);
		return 0;
	}
	printf("mpath timeout=1\n");
	return 1;
}

/* GUIDInfoRecord (IBA 15.2.5.18): LID, BlockNum, then GUID n at 8 + 8n, mask bit 4 + n */
static int v_gir(const char *verb, const struct kv *o)
{
	uint8_t m[MAD_SIZE], *r = m + SA_DATA_OFF;
	unsigned method = !strcmp(verb, "gir-set") ? M_SET : !strcmp(verb, "gir-del") ?
			  M_DELETE : num(o, "get", 0) ? M_GET : M_GETTABLE;
	uint64_t mask = 1;
	struct answer a;
	int rc;

	header(m, method, A_GIR, 0, 0);
	put16(r, (unsigned)num(o, "lid", P.lid));
	if (kv(o, "block") || method != M_GETTABLE) {
		r[2] = (uint8_t)num(o, "block", 0);
		mask |= 2;
	}
	for (unsigned n = 0; n < 8; n++) {
		char key[8];
		const char *s;

		snprintf(key, sizeof(key), "%u", n);
		if ((s = kv(o, key))) {
			put64(r + 8 + 8 * n, strtoull(s, NULL, 0));
			mask |= 1ull << (4 + n);
		}
	}
	put64(m + 48, mask);
	rc = txn(m, &a);
	if (rc < 0 || a.status)
		return fail(verb, &a, rc);
	for (size_t i = 0; a.rsize && i < a.len / a.rsize; i++) {
		const uint8_t *g = a.data + i * a.rsize;
		unsigned w = method == M_GETTABLE ? lost_words(i * a.rsize, a.rsize) : 0;

		if (w)
			printf("lost rec=%zu words=0x%02x\n", i, w);
		printf("%s lid=%u block=%u", verb, get16(g), g[2]);
		for (unsigned n = 0; n < 8; n++)
			printf(" g%u=0x%016" PRIx64, n, get64(g + 8 + 8 * n));
		printf("\n");
	}
	if (method == M_GETTABLE)
		printf("%s records=%zu\n", verb, a.rsize ? a.len / a.rsize : 0);
	free(a.data);
	return 0;
}

/*
 * NodeRecord (IBA 15.2.5.2): LID, reserved, NodeInfo (14.2.5.3: NodeType
 * at 2, NodeGUID at 12, PortGUID at 20), NodeDescription. Component 8 is
 * PortGUID.
 */
static int v_nr(const struct kv *o)
{
	uint8_t m[MAD_SIZE], *r = m + SA_DATA_OFF;
	struct answer a;
	int rc;

	header(m, M_GET, A_NR, 0, 0);
	put64(r + 4 + 20, strtoull(kv(o, "portguid") ? kv(o, "portguid") : "0", NULL, 0));
	put64(m + 48, 1u << 8);
	rc = txn(m, &a);
	if (rc < 0 || a.status)
		return fail("nr", &a, rc);
	if (a.len >= 4 + 28)
		printf("nr lid=%u type=%u node_guid=0x%016" PRIx64 " port_guid=0x%016" PRIx64 "\n",
		       get16(a.data), a.data[4 + 2], get64(a.data + 4 + 12), get64(a.data + 4 + 20));
	free(a.data);
	return 0;
}

/* PortInfoRecord (IBA 15.2.5.3): LID, PortNum, Options, PortInfo; CapabilityMask at 24 */
static int v_pir(const struct kv *o)
{
	uint8_t m[MAD_SIZE], *r = m + SA_DATA_OFF;
	uint64_t mask = 0;
	struct answer a;
	const char *s;
	int rc;

	header(m, M_GETTABLE, A_PIR, 0, 0);
	if ((s = kv(o, "lid"))) {
		put16(r, (unsigned)strtoul(s, NULL, 0));
		mask |= 1;
	}
	if ((s = kv(o, "capmask"))) {
		put32(r + 4 + 20, (uint32_t)strtoul(s, NULL, 0));
		mask |= 1u << 7;
	}
	put64(m + 48, mask);
	rc = txn(m, &a);
	if (rc < 0 || a.status)
		return fail("pir", &a, rc);
	for (size_t i = 0; a.rsize && i < a.len / a.rsize; i++) {
		const uint8_t *p = a.data + i * a.rsize;
		unsigned w = lost_words(i * a.rsize, a.rsize);

		if (w)
			printf("lost rec=%zu words=0x%02x\n", i, w);
		printf("pir lid=%u port=%u capmask=0x%08x\n", get16(p), p[2], get32(p + 24));
	}
	printf("pir records=%zu\n", a.rsize ? a.len / a.rsize : 0);
	free(a.data);
	return 0;
}

/* VLArbitrationTableRecord (15.2.5.9), SLtoVLMappingTableRecord (15.2.5.4) */
static int v_tables(const char *verb, const struct kv *o)
{
	uint8_t m[MAD_SIZE], *r = m + SA_DATA_OFF;
	bool arb = !strcmp(verb, "vlarb");
	uint64_t mask = 1;
	struct answer a;
	const char *s;
	int rc;

	header(m, num(o, "get", 0) ? M_GET : M_GETTABLE, arb ? A_VLARB : A_SL2VL, 0, 0);
	put16(r, (unsigned)num(o, "lid", P.lid));
	if ((s = kv(o, arb ? "port" : "in"))) {
		r[2] = (uint8_t)strtoul(s, NULL, 0);
		mask |= 2;
	}
	if ((s = kv(o, arb ? "block" : "out"))) {
		r[3] = (uint8_t)strtoul(s, NULL, 0);
		mask |= 4;
	}
	put64(m + 48, mask);
	rc = txn(m, &a);
	if (rc < 0 || a.status)
		return fail(verb, &a, rc);
	for (size_t i = 0; a.rsize && i < a.len / a.rsize; i++) {
		const uint8_t *t = a.data + i * a.rsize;
		unsigned w = lost_words(i * a.rsize, a.rsize);

		if (w)
			printf("lost rec=%zu words=0x%02x\n", i, w);

		printf("%s lid=%u %s=%u %s=%u table=", verb, get16(t), arb ? "port" : "in", t[2],
		       arb ? "block" : "out", t[3]);
		if (arb)
			for (unsigned k = 0; k < 32; k++)
				printf("%s%u:%u", k ? "," : "", t[8 + 2 * k] & 0xf, t[9 + 2 * k]);
		else
			for (unsigned sl = 0; sl < 16; sl++)
				printf("%s%u", sl ? "," : "",
				       sl % 2 ? t[8 + sl / 2] & 0xf : t[8 + sl / 2] >> 4);
		printf("\n");
	}
	printf("%s records=%zu\n", verb, a.rsize ? a.len / a.rsize : 0);
	free(a.data);
	return 0;
}

/* Any GetTable, every record: its first 32 bytes in hex, the words umad2sim lost */
static int v_table(const struct kv *o)
{
	uint8_t m[MAD_SIZE];
	unsigned attr = (unsigned)num(o, "attr", 0);
	struct answer a;
	size_t n;
	int rc;

	header(m, M_GETTABLE, attr, 0, 0);
	last_abort = -1;
	rc = txn(m, &a);
	if (rc < 0 && last_abort >= 0) {
		printf("table attr=0x%04x abort=%d\n", attr, last_abort);
		free(a.data);
		return 1;
	}
	if (rc < 0 || a.status)
		return fail("table", &a, rc);
	n = a.rsize ? a.len / a.rsize : 0;
	for (size_t i = 0; i < n; i++) {
		const uint8_t *r = a.data + i * a.rsize;

		printf("rec i=%zu lost=0x%04x hex=", i, lost_words(i * a.rsize, a.rsize));
		for (size_t b = 0; b < 32 && b < a.rsize; b++)
			printf("%02x", r[b]);
		printf("\n");
	}
	printf("table attr=0x%04x records=%zu\n", attr, n);
	free(a.data);
	return 0;
}

static int run(int argc, char **argv)
{
	const char *verb = argv[0];
	struct kv o = { 0 };
	int r;

	o.k = calloc((size_t)argc, sizeof(char *));
	o.v = calloc((size_t)argc, sizeof(char *));
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!eq) {
			fprintf(stderr, "saclient: %s: not key=value\n", argv[i]);
			return 2;
		}
		*eq = 0;
		o.k[o.n] = argv[i];
		o.v[o.n++] = eq + 1;
	}
	if (!strcmp(verb, "cpi"))
		r = v_cpi();
	else if (!strncmp(verb, "svc-", 4))
		r = v_svc(verb, &o);
	else if (!strcmp(verb, "sub") || !strcmp(verb, "unsub"))
		r = v_sub(verb, &o);
	else if (!strcmp(verb, "iir"))
		r = v_iir();
	else if (!strcmp(verb, "listen"))
		r = v_listen(&o);
	else if (!strcmp(verb, "path"))
		r = v_path(&o);
	else if (!strcmp(verb, "mpath"))
		r = v_mpath(&o);
	else if (!strncmp(verb, "gir", 3))
		r = v_gir(verb, &o);
	else if (!strcmp(verb, "pir"))
		r = v_pir(&o);
	else if (!strcmp(verb, "nr"))
		r = v_nr(&o);
	else if (!strcmp(verb, "vlarb") || !strcmp(verb, "sl2vl"))
		r = v_tables(verb, &o);
	else if (!strcmp(verb, "table"))
		r = v_table(&o);
	else if (!strcmp(verb, "raw"))
		r = v_raw(&o);
	else if (!strcmp(verb, "sleep"))
		r = (usleep((useconds_t)(num(&o, "ms", 100) * 1000)), 0);
	else {
		fprintf(stderr, "saclient: unknown verb %s\n", verb);
		r = 2;
	}
	fflush(stdout);
	free(o.k);
	free(o.v);
	return r;
}

int main(int argc, char **argv)
{
	bool issm = false;
	int i = 1, rc = 0;

	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	for (; i < argc && !strncmp(argv[i], "--", 2); i++) {
		if (!strcmp(argv[i], "--issm"))
			issm = true;
		else if (!strcmp(argv[i], "--smkey") && i + 1 < argc)
			P.smkey = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--not-sim"))
			sim_lossy = false;
		else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
			P.timeout_ms = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--rmpp") && i + 1 < argc)
			P.kernel = !strcmp(argv[++i], "kernel");
		else if (!strcmp(argv[i], "--window") && i + 1 < argc)
			P.window = (uint32_t)strtoul(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--stop-after") && i + 1 < argc)
			P.stop_after = (uint32_t)strtoul(argv[++i], NULL, 0);
		else {
			fprintf(stderr, "usage: see the comment at the top of saclient.c\n");
			return 2;
		}
	}
	if (i >= argc || port_open(issm) < 0)
		return 2;
	printf("port lid=%u guid=0x%016" PRIx64 " sm_lid=%u\n", P.lid, P.guid, P.sm_lid);
	/* Verbs separated by ";" run in order, in this one process */
	while (i < argc && !stop) {
		int j = i;

		while (j < argc && strcmp(argv[j], ";"))
			j++;
		if (j > i)
			rc |= run(j - i, argv + i);
		i = j + 1;
	}
	if (P.issm >= 0)
		close(P.issm);
	umad_close_port(P.portid);
	return rc;
}
