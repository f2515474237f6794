// SPDX-License-Identifier: MIT
/*
 * SA server: decode a request, collect the matching records from the
 * model, answer with one MAD (Get) or an RMPP transfer (GetTable).
 * Statuses follow IBA 13.4.7 (MAD status) and 15.2.1.1 (SA status).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_codec.h"
#include "util/log.h"
#include "mad/txn.h"
#include "sa/sa.h"
#include "sa/sa_int.h"
#include "topo/path.h"
#include "topo/route.h"

/*
 * Limits: every client gets answers, none can take the SA for itself. A
 * GetTable that would pass them is refused with ERR_NO_RESOURCES before its
 * table is built further (the work and memory stop at the limit).
 */
#define SA_MAX_RECORDS		(1u << 20)	/* records in one answer */
#define SA_MAX_XFERS		1024		/* RMPP transfers in flight, all clients */
#define SA_XFERS_PER_PORT	16		/* ... for one requesting port */
#define SA_BYTES_MAX		(64u << 20)	/* answers in flight, all clients */
#define SA_BYTES_PER_PORT	(16u << 20)	/* ... for one requesting port */
#define SA_XFER_LIFE_US		30000000	/* a transfer ends after 30 s, ACKs or not */
/*
 * RMPP sender (IBA 13.6.3): the receiver's ACKs say how far it has the
 * answer (SegmentNumber) and how far it takes it (NewWindowLast); every
 * segment up to that goes out, none past it. A receiver may ACK only at
 * the end of its window and at the last segment (Linux's mad_rmpp.c does:
 * window 64), so nothing is resent on an ACK, only when the next one is
 * RMPP_TIMEOUT_US late, and then the whole window again from its last ACK
 * (a receiver holding later segments drops them, without an ACK, until the
 * gap is filled). RMPP_RETRIES timeouts without progress: ABORT.
 */
#define RMPP_TIMEOUT_US		500000
#define RMPP_RETRIES		10
#define RMPP_BURST		64	/* segments of one transfer sent in one go */

struct sa_xfer {
	struct sa_xfer *next;
	struct mad_addr to;	/* the request's address: every segment goes there as it came */
	uint64_t tid;
	struct sa_mad hdr;	/* the response header every segment carries */
	uint8_t *payload;
	size_t len;
	uint32_t nseg;
	uint32_t acked;		/* the receiver's last ACK: it holds 1..acked */
	uint32_t wlast;		/* its NewWindowLast: may send up to here */
	uint32_t sent;		/* sent in this pass (a timeout goes back to acked) */
	uint32_t top;		/* the highest segment ever sent: ACKs past it are bad */
	uint64_t deadline;	/* no progress by then: resend, or give up */
	uint64_t born;		/* when it started: SA_XFER_LIFE_US */
	uint16_t owner;		/* the requesting port's base LID: its limits */
	unsigned int retries;	/* timeouts since the last progress */
};

int sa_new(const struct sa_env *env, struct sa **out)
{
	struct sa *sa = calloc(1, sizeof(*sa));

	if (!sa)
		return -ENOMEM;
	sa->port_xfers = calloc(LID_UCAST_MAX + 1, sizeof(*sa->port_xfers));
	sa->port_bytes = calloc(LID_UCAST_MAX + 1, sizeof(*sa->port_bytes));
	if (!sa->port_xfers || !sa->port_bytes) {
		free(sa->port_xfers);
		free(sa->port_bytes);
		free(sa);
		return -ENOMEM;
	}
	sa->env = env;
	*out = sa;
	return 0;
}

static void xfer_free(struct sa_xfer *x)
{
	free(x->payload);
	free(x);
}

struct sa *sa_free(struct sa *sa)
{
	if (!sa)
		return NULL;
	while (sa->xfers) {
		struct sa_xfer *x = sa->xfers;

		sa->xfers = x->next;
		xfer_free(x);
	}
	path_table_free(sa->pt);
	sa_service_free(sa);
	sa_guid_free(sa);
	sa_inform_free(sa);
	sa_multipath_free(sa);
	sa_queue_free(sa);
	free(sa->by_guid);
	free(sa->port_xfers);
	free(sa->port_bytes);
	free(sa);
	return NULL;
}

static unsigned int lim_xfers(const struct sa *sa)
{
	return sa->env->xfers_per_port ? sa->env->xfers_per_port : SA_XFERS_PER_PORT;
}

static size_t lim_port_bytes(const struct sa *sa)
{
	return sa->env->bytes_per_port ? sa->env->bytes_per_port : SA_BYTES_PER_PORT;
}

static size_t lim_bytes(const struct sa *sa)
{
	return sa->env->bytes_max ? sa->env->bytes_max : SA_BYTES_MAX;
}

static uint64_t sa_now(const struct sa *sa)
{
	return sa->env->now ? sa->env->now(sa->env->ctx) : txn_now_us();
}

uint64_t sa_clock(const struct sa *sa)
{
	return sa_now(sa);
}

bool sa_trusted(const struct sa *sa, const struct sa_mad *req)
{
	return sa->env->trusted_key && req->sm_key == sa->env->trusted_key;
}

void sa_judge_key(struct sa *sa, const struct sa_mad *req)
{
	sa->req_trusted = sa_trusted(sa, req);
	/* A key shown to be trusted, but not the one: a guess, or a stale key */
	if (req->sm_key && !sa->req_trusted)
		sa->stats.bad_keys++;
}

/* The P_Keys p holds (fabric_port_pkeys: the default one when not known) */
static size_t port_pkeys(const struct fab_port *p, const uint16_t **out)
{
	unsigned int n;

	*out = fabric_port_pkeys(p, &n);
	return n;
}

bool sa_port_has_pkey(const struct fab_port *p, uint16_t pkey)
{
	const uint16_t *t;
	size_t n = port_pkeys(p, &t);

	if (!(pkey & 0x7fff))
		return false;	/* the invalid P_Key (IBA 10.9.1.2) */
	for (size_t i = 0; i < n; i++)
		if ((t[i] & 0x7fff) == (pkey & 0x7fff))
			return true;
	return false;
}

bool sa_pkey_shared(const struct fab_port *p, uint16_t pkey)
{
	const uint16_t *t;
	size_t n;

	if (!p || !(pkey & 0x7fff))
		return false;
	n = port_pkeys(p, &t);
	for (size_t i = 0; i < n; i++)
		if ((t[i] & 0x7fff) == (pkey & 0x7fff) && ((t[i] | pkey) & 0x8000))
			return true;
	return false;
}

/*
 * Whose limits a request counts against: its port, by base LID (a port
 * with LMC > 0 sends from several LIDs); LIDs the model does not know count
 * as themselves.
 */
uint16_t sa_owner_of(const struct sa *sa, uint16_t slid)
{
	const struct fab_port *p = sa->f && slid <= LID_UCAST_MAX ?
				   fabric_port_by_lid(sa->f, slid) : NULL;

	if (p && p->lid)
		return p->lid;
	return slid <= LID_UCAST_MAX ? slid : 0;
}

void sa_set_mcast(struct sa *sa, struct mc_db *db, const struct mc_forest *forest)
{
	sa->mc = db;
	sa->forest = forest;
}

const struct sa_stats *sa_stats(const struct sa *sa)
{
	return &sa->stats;
}

static size_t guid_hash(uint64_t g, size_t size)
{
	g ^= g >> 31;
	g *= UINT64_C(0x9e3779b97f4a7c15);
	return (size_t)(g >> 17) & (size - 1);
}

struct fab_port *sa_port_by_guid(const struct sa *sa, uint64_t guid)
{
	if (!sa->guid_size)
		return NULL;
	for (size_t h = guid_hash(guid, sa->guid_size);; h = (h + 1) & (sa->guid_size - 1)) {
		struct fab_port *p = sa->by_guid[h];

		if (!p || p->guid == guid)
			return p;
	}
}

struct fab_port *sa_port_by_any_guid(const struct sa *sa, uint64_t guid)
{
	struct fab_port *p = sa_port_by_guid(sa, guid);
	uint64_t owner;

	if (p)
		return p;
	owner = sa_alias_owner(sa, guid);
	return owner ? sa_port_by_guid(sa, owner) : NULL;
}

bool sa_port_owns_guid(const struct sa *sa, const struct fab_port *p, uint64_t guid)
{
	return p->guid == guid || (guid && sa_alias_owner(sa, guid) == p->guid);
}

/* What the SA answers from, built for one model: off the event loop when it is big */
struct sa_index {
	const struct fabric *f;
	struct path_table *pt;
	struct fab_port **by_guid;	/* endports by port GUID, open addressing */
	size_t guid_size;
};

void sa_index_free(struct sa_index *ix)
{
	if (!ix)
		return;
	path_table_free(ix->pt);
	free(ix->by_guid);
	free(ix);
}

int sa_index_build(const struct fabric *f, struct sa_index **out)
{
	struct sa_index *ix = calloc(1, sizeof(*ix));
	size_t n = 0, size;
	int r;

	*out = NULL;
	if (!ix)
		return -ENOMEM;
	ix->f = f;
	r = path_table_build(f, &ix->pt);
	if (r < 0) {
		sa_index_free(ix);
		return r;
	}
	for (size_t i = 0; i < f->nnodes; i++)
		n += (size_t)f->nodes[i]->num_ports + 1;
	for (size = 64; size < 2 * n; size *= 2)
		;
	ix->by_guid = calloc(size, sizeof(*ix->by_guid));
	if (!ix->by_guid) {
		sa_index_free(ix);
		return -ENOMEM;
	}
	ix->guid_size = size;
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *nd = f->nodes[i];

		for (unsigned int pn = 0; pn <= nd->num_ports; pn++) {
			struct fab_port *p = &nd->ports[pn];
			size_t h;

			if (!fabric_is_endport(p) || !p->lid)
				continue;
			for (h = guid_hash(p->guid, size); ix->by_guid[h];
			     h = (h + 1) & (size - 1))
				if (ix->by_guid[h]->guid == p->guid)
					break;
			if (!ix->by_guid[h])
				ix->by_guid[h] = p;
		}
	}
	*out = ix;
	return 0;
}

int sa_update_index(struct sa *sa, const struct fabric *f, const struct route_result *routes,
		    struct sa_index *ix)
{
	if (f && (!ix || ix->f != f)) {
		sa_index_free(ix);
		return -EINVAL;
	}
	path_table_free(sa->pt);
	free(sa->by_guid);
	sa->pt = ix ? ix->pt : NULL;
	sa->by_guid = ix ? ix->by_guid : NULL;
	sa->guid_size = ix ? ix->guid_size : 0;
	sa->f = f;
	sa->routes = f ? routes : NULL;
	sa->any_sl = !sa->routes || route_vls_used(sa->routes) <= 1;
	if (f) {
		sa_guid_prune(sa);
		/* Ports in and out of service since the last model (traps 64/65) */
		sa_inform_update(sa, f);
	}
	sa->requester = NULL;
	free(ix);
	return 0;
}

int sa_update(struct sa *sa, const struct fabric *f, const struct route_result *routes)
{
	struct sa_index *ix = NULL;
	int r;

	if (f) {
		r = sa_index_build(f, &ix);
		if (r < 0)
			return r;
	}
	return sa_update_index(sa, f, routes, ix);
}

/* ---- answers ---- */

static void respond_hdr(const struct sa_mad *req, struct sa_mad *resp, uint8_t method,
			uint16_t status)
{
	memset(resp, 0, sizeof(*resp));
	resp->hdr = req->hdr;
	resp->hdr.class_version = SA_CLASS_VERSION;
	resp->hdr.method = method;
	resp->hdr.status = status;
	resp->comp_mask = req->comp_mask;
}

/* Every answer goes out as its request came (mad/port.h, struct mad_addr) */
static void send_mad_len(struct sa *sa, const struct sa_mad *m, size_t len,
			 const struct mad_addr *to)
{
	uint8_t buf[MAD_SIZE];

	if (sa_mad_encode(m, buf) == 0)
		sa->env->send(sa->env->ctx, buf, len, to);
}

static void send_mad(struct sa *sa, const struct sa_mad *m, const struct mad_addr *to)
{
	send_mad_len(sa, m, MAD_SIZE, to);
}

static void respond_status(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
			   uint16_t status);

void sa_respond_status(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		       uint16_t status)
{
	respond_status(sa, req, from, status);
}

void sa_respond_record(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		       uint8_t method, const uint8_t *rec, size_t size)
{
	struct sa_mad resp;

	respond_hdr(req, &resp, method, 0);
	resp.attr_offset = (uint16_t)((size + 7) / 8);
	memcpy(resp.data, rec, size < SA_DATA_SIZE ? size : SA_DATA_SIZE);
	sa->stats.answered++;
	send_mad(sa, &resp, from);
}

static void respond_status(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
			   uint16_t status)
{
	struct sa_mad resp;
	/*
	 * IBA 13.4.5, 15.2.2: a method's response is the method with the
	 * response bit (GetTable 0x92, GetTraceTable 0x93, Delete 0x95, ...),
	 * but Set's is GetResp
	 */
	uint8_t method = req->hdr.method == SA_METHOD_SET ? SA_METHOD_GET_RESP :
			 req->hdr.method | MAD_METHOD_RESP_BIT;

	respond_hdr(req, &resp, method, status);
	sa->stats.errors++;
	send_mad(sa, &resp, from);
}

/* RMPP segment n (1-based) of x (IBA 13.6.2.3) */
static void xfer_send_seg(struct sa *sa, struct sa_xfer *x, uint32_t n)
{
	struct sa_mad m = x->hdr;
	size_t off = (size_t)(n - 1) * SA_DATA_SIZE;
	size_t chunk = x->len > off ? x->len - off : 0;
	uint32_t pad = (uint32_t)(x->nseg * SA_DATA_SIZE - x->len);

	if (chunk > SA_DATA_SIZE)
		chunk = SA_DATA_SIZE;
	m.rmpp.version = 1;
	m.rmpp.type = RMPP_TYPE_DATA;
	m.rmpp.flags = RMPP_FLAG_ACTIVE;
	m.rmpp.resp_time = 0x1f;	/* no time value: IBA 13.6.2.1 */
	m.rmpp.data1 = n;
	m.rmpp.data2 = 0;
	/*
	 * PayloadLength counts the SA header of every segment; the first
	 * segment gives the total, the last what it carries (as the Linux
	 * kernel's RMPP receiver reads it).
	 */
	if (n == 1) {
		m.rmpp.flags |= RMPP_FLAG_FIRST;
		m.rmpp.data2 = x->nseg * RMPP_SEG_PAYLOAD - pad;
	}
	if (n == x->nseg) {
		m.rmpp.flags |= RMPP_FLAG_LAST;
		m.rmpp.data2 = RMPP_SEG_PAYLOAD - pad;
	}
	memset(m.data, 0, SA_DATA_SIZE);
	if (chunk)
		memcpy(m.data, x->payload + off, chunk);
	sa->stats.segments++;
	/* The last segment ends after its last record (the rest is padding) */
	send_mad_len(sa, &m, n == x->nseg ? SA_HDR_SIZE + chunk : MAD_SIZE, &x->to);
}

/* The last segment the receiver's window lets out */
static uint32_t xfer_end(const struct sa_xfer *x)
{
	return x->wlast < x->nseg ? x->wlast : x->nseg;
}

/*
 * Send what the window allows and is not sent yet, RMPP_BURST at most now
 * (the rest at the next sa_tick: a receiver's huge window must neither stall
 * the loop nor flood the port). Sets the deadline when anything went out.
 */
static void xfer_pump(struct sa *sa, struct sa_xfer *x)
{
	uint32_t end = xfer_end(x), n = 0;

	for (; x->sent < end && n < RMPP_BURST; n++)
		xfer_send_seg(sa, x, ++x->sent);
	if (x->sent > x->top)
		x->top = x->sent;
	if (n)
		x->deadline = sa_now(sa) + RMPP_TIMEOUT_US;
}

/* IBA 13.6.3.3: the sender gives up, and says why */
static void xfer_abort(struct sa *sa, struct sa_xfer *x, uint8_t status)
{
	struct sa_mad m = x->hdr;

	m.rmpp.version = RMPP_VERSION;
	m.rmpp.type = RMPP_TYPE_ABORT;
	m.rmpp.flags = RMPP_FLAG_ACTIVE;
	m.rmpp.resp_time = RMPP_RESP_TIME_NONE;
	m.rmpp.status = status;
	m.rmpp.data1 = 0;
	m.rmpp.data2 = 0;
	memset(m.data, 0, SA_DATA_SIZE);
	send_mad_len(sa, &m, SA_HDR_SIZE, &x->to);
}

static void xfer_unlink(struct sa *sa, struct sa_xfer *x)
{
	for (struct sa_xfer **pp = &sa->xfers; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			sa->nxfers--;
			sa->bytes -= x->len;
			sa->port_xfers[x->owner]--;
			sa->port_bytes[x->owner] -= (uint32_t)x->len;
			return;
		}
}

/*
 * The transfer is over: done (the receiver ACKed the last segment) or not;
 * then an ABORT says why (IBA 13.6.3.3), unless status is 0 (the receiver
 * ended it, or shows no sign of being there)
 */
static void xfer_finish(struct sa *sa, struct sa_xfer *x, bool done, uint8_t status)
{
	if (!done)
		log_debug("SA: RMPP to LID %u TID 0x%x ends at %u/%u segments%s (status %u)",
			  x->to.slid, (uint32_t)x->tid, x->acked, x->nseg, status ? ", ABORT" : "",
			  status);
	if (status)
		xfer_abort(sa, x, status);
	xfer_unlink(sa, x);
	xfer_free(x);
	if (done)
		sa->stats.rmpp_done++;
	else
		sa->stats.rmpp_aborted++;
}

/*
 * The open transfer of this requester and TID, or NULL. Match on the low 32
 * TID bits: the high half belongs to whoever sent the MAD (the kernel's
 * agent, or the simulator) and may differ.
 */
static struct sa_xfer *xfer_of(const struct sa *sa, const struct sa_mad *req,
			       const struct mad_addr *from)
{
	for (struct sa_xfer *x = sa->xfers; x; x = x->next)
		if (x->to.slid == from->slid && x->to.qpn == from->qpn &&
		    (uint32_t)x->tid == (uint32_t)req->hdr.tid)
			return x;
	return NULL;
}

/*
 * The request repeats one whose answer the receiver has begun to take (it
 * ACKed): the requester's MAD layer timed out and sent it again (the Linux
 * kernel does, with the same TID, while its RMPP receiver keeps the
 * segments it has). The transfer goes on; starting it again would hand
 * that receiver a segment 1 it ACKs with its old state, an ACK past
 * anything sent (S2B).
 */
static bool xfer_underway(const struct sa *sa, const struct sa_mad *req,
			  const struct mad_addr *from)
{
	const struct sa_xfer *x = xfer_of(sa, req, from);

	return x && x->acked;
}

/*
 * No transfer slot left for this requester's answer (sa_send_table's
 * test), unless the request retransmits one of its open transfers, which
 * then starts again in its own slot
 */
static bool xfers_full(const struct sa *sa, const struct sa_mad *req, const struct mad_addr *from)
{
	return (sa->nxfers >= SA_MAX_XFERS ||
		sa->port_xfers[sa_owner_of(sa, from->slid)] >= lim_xfers(sa)) &&
	       !xfer_of(sa, req, from);
}

static void send_table(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		       struct records *recs)
{
	sa_send_table(sa, req, from, recs, SA_METHOD_GET_TABLE_RESP, req->hdr.attr_id);
}

/* Records through RMPP with this response method and attribute; recs->buf is taken */
void sa_send_table(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		   struct records *recs, uint8_t method, uint16_t attr)
{
	struct sa_xfer *x;

	uint16_t owner = sa_owner_of(sa, from->slid);

	if (xfer_underway(sa, req, from))
		return;
	/*
	 * A request repeated before segment 1 was ACKed (lost, or the ACK
	 * was) starts its transfer again: the old one counts as given up, so
	 * that started - done - aborted stays what is open
	 */
	x = xfer_of(sa, req, from);
	if (x)
		xfer_finish(sa, x, false, 0);
	if (sa->nxfers >= SA_MAX_XFERS || sa->port_xfers[owner] >= lim_xfers(sa)) {
		sa->stats.refused++;
		respond_status(sa, req, from, SA_STATUS_NO_RESOURCES);
		return;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		respond_status(sa, req, from, SA_STATUS_NO_RESOURCES);
		return;
	}
	respond_hdr(req, &x->hdr, method, 0);
	x->hdr.hdr.attr_id = attr;
	x->hdr.attr_offset = (uint16_t)(recs->size / 8);
	x->to = *from;
	x->tid = req->hdr.tid;
	x->payload = recs->buf;
	x->len = recs->n * recs->size;
	recs->buf = NULL;
	x->nseg = x->len ? (uint32_t)((x->len + SA_DATA_SIZE - 1) / SA_DATA_SIZE) : 1;
	/* IBA 13.6.3.1: the sender starts with a window of one segment */
	x->wlast = 1;
	x->born = sa_now(sa);
	x->owner = owner;
	x->next = sa->xfers;
	sa->xfers = x;
	sa->nxfers++;
	sa->bytes += x->len;
	sa->port_xfers[owner]++;
	sa->port_bytes[owner] += (uint32_t)x->len;
	sa->stats.rmpp_started++;
	log_debug("SA: RMPP to LID %u TID 0x%x: %zu records, %u segments", x->to.slid,
		  (uint32_t)x->tid, recs->n, x->nseg);
	sa->stats.answered++;
	xfer_pump(sa, x);
	/*
	 * One segment, sent: nothing is left to resend (a receiver that lost
	 * it asks again, with a new request), so its final ACK is not waited
	 * for. Receivers without RMPP never send one, and saquery-style
	 * clients asking in bursts would otherwise hold their port's slots.
	 */
	if (x->nseg == 1 && x->sent == 1)
		xfer_finish(sa, x, true, 0);
}

/*
 * An ACK (IBA 13.6.3.2): the receiver holds segments 1..seg and takes them
 * up to win. Bad ones end the transfer with the ABORT status the IBA gives
 * them; old ones (overtaken by a later ACK) change nothing; a repeated one
 * is no progress (a receiver that keeps ACKing the same segment, its window
 * closed, still runs out of retries).
 */
static void xfer_ack(struct sa *sa, struct sa_xfer *x, const struct sa_mad *m)
{
	uint32_t seg = m->rmpp.data1, win = m->rmpp.data2;

	if (m->rmpp.status != RMPP_STATUS_OK) {
		xfer_finish(sa, x, false, RMPP_STATUS_BAD_STATUS);
		return;
	}
	if (win < seg) {
		xfer_finish(sa, x, false, RMPP_STATUS_W2S);
		return;
	}
	/* Past the highest segment sent: past the window and the transfer too */
	if (seg > x->top) {
		xfer_finish(sa, x, false, RMPP_STATUS_S2B);
		return;
	}
	if (seg < x->acked || win < x->wlast)
		return;
	if (seg > x->acked) {
		x->acked = seg;
		x->retries = 0;
		x->deadline = sa_now(sa) + RMPP_TIMEOUT_US;
	}
	x->wlast = win;
	if (x->acked == x->nseg) {
		xfer_finish(sa, x, true, 0);
		return;
	}
	/* A receiver that has more than this pass resent: on from there */
	if (x->sent < x->acked)
		x->sent = x->acked;
	xfer_pump(sa, x);
}

static void rmpp_control(struct sa *sa, const struct sa_mad *m, const struct mad_addr *from)
{
	struct sa_xfer *x = xfer_of(sa, m, from);

	log_debug("SA: RMPP type %u status %u seg %u win %u from LID %u for TID 0x%x%s",
		  m->rmpp.type, m->rmpp.status, m->rmpp.data1, m->rmpp.data2, from->slid,
		  (uint32_t)m->hdr.tid, x ? "" : " (no such transfer)");
	if (!x) {
		/* Perhaps the sender of a request in segments gives up */
		sa_multipath_control(sa, m, from);
		return;
	}
	if (m->rmpp.version != RMPP_VERSION) {
		xfer_finish(sa, x, false, RMPP_STATUS_UNV);
		return;
	}
	switch (m->rmpp.type) {
	case RMPP_TYPE_ACK:
		xfer_ack(sa, x, m);
		break;
	case RMPP_TYPE_STOP:
		/* The receiver stops it: resources exhausted is a STOP's one status */
		xfer_finish(sa, x, false,
			    m->rmpp.status == RMPP_STATUS_RESX ? 0 : RMPP_STATUS_BAD_STATUS);
		break;
	case RMPP_TYPE_ABORT:
		xfer_finish(sa, x, false,
			    m->rmpp.status >= RMPP_STATUS_ABORT_MIN &&
			    m->rmpp.status <= RMPP_STATUS_ABORT_MAX ? 0 : RMPP_STATUS_BAD_STATUS);
		break;
	default:
		xfer_finish(sa, x, false, RMPP_STATUS_BADT);
		break;
	}
}

uint64_t sa_next_tick(const struct sa *sa)
{
	uint64_t next = sa_report_next(sa), svc = sa_service_next(sa);
	int ms = sa_next_timeout_ms(sa);

	if (svc && (!next || svc < next))
		next = svc;
	/* RMPP transfers: their deadlines, or now when segments wait to go out */
	if (ms >= 0) {
		uint64_t due = sa_now(sa) + (uint64_t)ms * 1000u;

		if (!next || due < next)
			next = due;
	}
	/* GetMulti reassembly: its deadlines are its own to keep */
	if (sa->rx) {
		uint64_t soon = sa_now(sa) + SA_TICK_BUSY_US;

		if (!next || soon < next)
			next = soon;
	}
	return next;
}

void sa_tick(struct sa *sa)
{
	uint64_t now;
	struct sa_xfer *x, *next;

	sa_service_expire(sa);
	sa_report_tick(sa);
	sa_multipath_tick(sa);
	if (!sa->xfers)
		return;
	now = sa_now(sa);
	for (x = sa->xfers; x; x = next) {
		next = x->next;
		/* However the receiver ACKs, a transfer has its time and no more */
		if (now - x->born > SA_XFER_LIFE_US) {
			xfer_finish(sa, x, false, RMPP_STATUS_T2L);
			continue;
		}
		/* The rest of a window wider than one burst */
		if (x->sent < xfer_end(x)) {
			xfer_pump(sa, x);
			continue;
		}
		if (x->deadline > now)
			continue;
		log_debug("SA: RMPP to LID %u TID 0x%x stalled at %u/%u, window %u (%u retries)",
			  x->to.slid, (uint32_t)x->tid, x->acked, x->nseg, x->wlast, x->retries);
		/*
		 * A receiver that never ACKed has no RMPP (a bare umad client,
		 * as every client is under the simulator): retransmitting, or an
		 * ABORT, would only land in whatever process next takes its QP.
		 * One that does speak RMPP and lost segment 1 (or its ACK) asks
		 * again with the same TID, and the transfer starts again.
		 */
		if (x->acked == 0) {
			xfer_finish(sa, x, false, 0);
			continue;
		}
		if (++x->retries > RMPP_RETRIES) {
			xfer_finish(sa, x, false, RMPP_STATUS_TMR);
			continue;
		}
		/* Go back: the window again from the last ACK, as far as it reaches */
		x->sent = x->acked;
		x->deadline = now + RMPP_TIMEOUT_US;
		xfer_pump(sa, x);
	}
}

int sa_next_timeout_ms(const struct sa *sa)
{
	uint64_t now, due = UINT64_MAX;

	if (!sa->xfers)
		return -1;
	now = sa_now(sa);
	for (const struct sa_xfer *x = sa->xfers; x; x = x->next) {
		uint64_t d = x->sent < xfer_end(x) ? now : x->deadline;

		if (x->born + SA_XFER_LIFE_US + 1 < d)
			d = x->born + SA_XFER_LIFE_US + 1;
		if (d < due)
			due = d;
	}
	return due <= now ? 0 : (int)((due - now + 999) / 1000);
}

/* ---- record collection ---- */

int sa_rec_add(struct records *r, const uint8_t *rec, size_t size)
{
	if (r->n >= (r->max_n ? r->max_n : SA_MAX_RECORDS) ||
	    (r->max_bytes && (r->n + 1) * r->size > r->max_bytes))
		return -E2BIG;
	if (r->n == r->cap) {
		/* A Get sees at most max_n (2) records: no room for 64 */
		size_t ncap = r->cap ? r->cap * 2 : r->max_n && r->max_n < 64 ? r->max_n : 64;
		uint8_t *nb = realloc(r->buf, ncap * r->size);

		if (!nb)
			return -ENOMEM;
		r->buf = nb;
		r->cap = ncap;
	}
	memset(r->buf + r->n * r->size, 0, r->size);
	memcpy(r->buf + r->n * r->size, rec, size);
	r->n++;
	return 0;
}

/* Add cand if it matches the request on the masked fields */
int sa_rec_offer(struct records *r, const struct sa_mad *req, const uint8_t *cand)
{
	return sa_rec_offer_mask(r, req, req->comp_mask, cand);
}

int sa_rec_offer_mask(struct records *r, const struct sa_mad *req, uint64_t mask,
		      const uint8_t *cand)
{
	uint16_t attr = req->hdr.attr_id;
	size_t size = sa_record_size(attr);

	if (!sa_record_match(attr, cand, req->data, mask))
		return 0;
	return sa_rec_add(r, cand, size);
}

/* When the request pins field 0 (a LID), only that LID's node can match */
static bool lid_filter(const struct sa_mad *req, uint16_t *lid)
{
	if (!(req->comp_mask & 1))
		return false;
	*lid = (uint16_t)sa_record_field(req->hdr.attr_id, req->data, 0);
	return true;
}

/*
 * Endport records (NodeRecord, P_KeyTableRecord, GUIDInfoRecord): one or
 * more per endport with a LID; a request that pins the LID visits one.
 */
typedef int (*endport_fn)(const struct fab_port *p, const struct sa_mad *req,
			  struct records *r);

static int for_each_endport(struct sa *sa, const struct sa_mad *req, struct records *r,
			    endport_fn fn)
{
	const struct fabric *f = sa->f;
	uint16_t want = 0;
	bool one = lid_filter(req, &want);
	int e = 0;

	if (one) {
		const struct fab_port *p = fabric_port_by_lid(f, want);

		return p && p->lid == want && sa_part_visible(sa, p) ? fn(p, req, r) : 0;
	}
	for (size_t i = 0; i < f->nnodes && !e; i++) {
		const struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 0; pn <= n->num_ports && !e; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (fabric_is_endport(p) && p->lid && sa_part_visible(sa, p))
				e = fn(p, req, r);
		}
	}
	return e;
}

static int node_record(const struct fab_port *p, const struct sa_mad *req, struct records *r)
{
	struct node_info ni = p->node->ni;
	struct node_desc nd;
	uint8_t rec[128];

	/* One NodeRecord per endport: its LID, its port GUID and number */
	memcpy(nd.desc, p->node->desc, sizeof(nd.desc));
	ni.port_guid = p->guid;
	ni.local_port = p->num;
	sa_node_record_encode(p->lid, &ni, &nd, rec);
	return sa_rec_offer(r, req, rec);
}

/* NodeRecord component 8 is PortGUID (IBA 15.2.5.2) */
#define NR_CM_PORT_GUID		(UINT64_C(1) << 8)

static int collect_nodes(struct sa *sa, const struct sa_mad *req, struct records *r)
{
	/*
	 * Asked by PortGUID without a LID (ibacm, srp_daemon, saquery -N
	 * GUID): its one endport, from the GUID index, not a walk of them all
	 * (950 us on 8,192 hosts)
	 */
	if ((req->comp_mask & NR_CM_PORT_GUID) && !(req->comp_mask & 1)) {
		const struct fab_port *p = sa_port_by_guid(sa, sa_record_field(SA_ATTR_NODE_RECORD,
									       req->data, 8));

		return p && p->lid && sa_part_visible(sa, p) ? node_record(p, req, r) : 0;
	}
	return for_each_endport(sa, req, r, node_record);
}

/*
 * PortInfoRecord: CapabilityMask and CapabilityMask2 in the mask match
 * every port that has at least the bits asked for (IBA 15.2.5.3, as
 * IsPortInfoCapMaskMatchSupported promises), the other fields exactly.
 */
static int collect_port_infos(struct sa *sa, const struct sa_mad *req, struct records *r)
{
	const struct fabric *f = sa->f;
	uint8_t rec[72];
	uint16_t want = 0;
	bool one = lid_filter(req, &want);
	uint64_t m = req->comp_mask;
	uint64_t cap = 0, cap2 = 0;
	bool by_cap = m & (UINT64_C(1) << PIR_FIELD_CAP_MASK);
	bool by_cap2 = m & (UINT64_C(1) << PIR_FIELD_CAP_MASK2);
	int e = 0;

	if (by_cap)
		cap = sa_record_field(SA_ATTR_PORT_INFO_RECORD, req->data, PIR_FIELD_CAP_MASK);
	if (by_cap2)
		cap2 = sa_record_field(SA_ATTR_PORT_INFO_RECORD, req->data, PIR_FIELD_CAP_MASK2);
	m &= ~((UINT64_C(1) << PIR_FIELD_CAP_MASK) | (UINT64_C(1) << PIR_FIELD_CAP_MASK2));

	for (size_t i = 0; i < f->nnodes && !e; i++) {
		const struct fab_node *n = f->nodes[i];
		uint16_t swlid = n->type == NODE_TYPE_SWITCH ? n->ports[0].lid : 0;

		for (unsigned int pn = 0; pn <= n->num_ports && !e; pn++) {
			const struct fab_port *p = &n->ports[pn];
			uint16_t lid = swlid ? swlid : p->lid;

			if (!p->pi_valid || !lid || (one && lid != want))
				continue;
			if ((!swlid && pn == 0) || !sa_part_visible(sa, p))
				continue;
			if ((by_cap && (p->pi.cap_mask & cap) != cap) ||
			    (by_cap2 && (p->pi.cap_mask2 & cap2) != cap2))
				continue;
			sa_port_info_record_encode(lid, (uint8_t)pn, &p->pi, rec);
			e = sa_rec_offer_mask(r, req, m, rec);
		}
	}
	return e;
}

static int collect_switch_infos(struct sa *sa, const struct sa_mad *req, struct records *r)
{
	const struct fabric *f = sa->f;
	uint8_t rec[24];
	int e = 0;

	for (size_t i = 0; i < f->nswitches && !e; i++) {
		const struct fab_node *n = f->switches[i];

		if (!n->si_valid || !n->ports[0].lid || !sa_part_visible(sa, &n->ports[0]))
			continue;
		sa_switch_info_record_encode(n->ports[0].lid, &n->si, rec);
		e = sa_rec_offer(r, req, rec);
	}
	return e;
}

static int collect_links(struct sa *sa, const struct sa_mad *req, struct records *r)
{
	const struct fabric *f = sa->f;
	uint8_t rec[8];
	uint16_t want = 0;
	bool one = lid_filter(req, &want);
	int e = 0;

	for (size_t i = 0; i < f->nnodes && !e; i++) {
		const struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 1; pn <= n->num_ports && !e; pn++) {
			const struct fab_port *p = &n->ports[pn];
			uint16_t from, to;

			if (!fabric_port_up(p))
				continue;
			from = n->type == NODE_TYPE_SWITCH ? n->ports[0].lid : p->lid;
			to = p->peer->node->type == NODE_TYPE_SWITCH ? p->peer->node->ports[0].lid :
								      p->peer->lid;
			if (!from || !to || (one && from != want) || !sa_part_visible(sa, p) ||
			    !sa_part_visible(sa, p->peer))
				continue;
			sa_link_record_encode(from, (uint8_t)pn, p->peer->num, to, rec);
			e = sa_rec_offer(r, req, rec);
		}
	}
	return e;
}

static int collect_lfts(struct sa *sa, const struct sa_mad *req, struct records *r)
{
	const struct fabric *f = sa->f;
	uint8_t rec[72];
	uint16_t want = 0;
	bool one = lid_filter(req, &want);
	int e = 0;

	for (size_t i = 0; i < f->nswitches && !e; i++) {
		const struct fab_node *n = f->switches[i];

		if (!n->lft_len || !n->ports[0].lid || (one && n->ports[0].lid != want) ||
		    !sa_part_visible(sa, &n->ports[0]))
			continue;
		for (uint32_t b = 0; b * LFT_BLOCK_SIZE < n->lft_len && !e; b++) {
			struct lft_block blk;

			for (uint32_t k = 0; k < LFT_BLOCK_SIZE; k++) {
				uint32_t lid = b * LFT_BLOCK_SIZE + k;

				blk.port[k] = lid < n->lft_len ? n->lft[lid] : LFT_PORT_NONE;
			}
			sa_lft_record_encode(n->ports[0].lid, (uint16_t)b, &blk, rec);
			e = sa_rec_offer(r, req, rec);
		}
	}
	return e;
}

static int collect_sm_infos(struct sa *sa, const struct sa_mad *req, struct records *r)
{
	const struct sa_env *env = sa->env;
	struct sm_info si = {
		.guid = env->sm_guid, .act_count = env->act_count,
		.priority = env->sm_priority, .sm_state = SM_STATE_MASTER,
	};
	uint8_t rec[32];
	int e;

	sa_sm_info_record_encode(env->sm_lid, &si, rec);
	e = sa_rec_offer(r, req, rec);
	for (size_t i = 0; !e && i < env->nsms; i++) {
		sa_sm_info_record_encode(env->sms[i].lid, &env->sms[i].si, rec);
		e = sa_rec_offer(r, req, rec);
	}
	return e;
}

/*
 * Tools address a CA port's tables as port 0 (the SMP's attribute modifier
 * is ignored by a CA, IBA 14.2.5.8): a request for output port 0 at a CA
 * port's LID names that port, and its records say 0 back.
 */
static uint8_t ca_rec_port(const struct sa_mad *req, unsigned int field, uint8_t port)
{
	uint64_t bit = UINT64_C(1) << field;

	return (req->comp_mask & bit) && !sa_record_field(req->hdr.attr_id, req->data, field) ?
	       0 : port;
}

/*
 * VLArbitrationTableRecord (IBA 15.2.5.9) and SL2VLTableRecord (15.2.5.4):
 * the tables as the ports hold them, from the model (the sweep read what
 * smd did not write or know, smd/sweep.c vl-read): no SMP at query time.
 * Records name the output port: a switch's cabled ports under its LID, a
 * CA port under its own (port 0 when asked so, ca_rec_port).
 */
/* The owner still reads tables the model lacks (sa_env.tables_busy) */
static bool tables_busy(const struct sa *sa)
{
	return sa->env->tables_busy && sa->env->tables_busy(sa->env->ctx);
}

/*
 * A table the query asks for (fields a and b of the record, when in the
 * mask, are va and vb) is not known yet but being read: -EBUSY, the
 * client asks again (IBA 13.4.7); not being read: no record, 0
 */
static int table_unknown(const struct sa *sa, const struct sa_mad *req, unsigned int a,
			 uint64_t va, unsigned int b, uint64_t vb)
{
	uint64_t m = req->comp_mask;
	uint16_t attr = req->hdr.attr_id;

	if (((m >> a) & 1) && sa_record_field(attr, req->data, a) != va)
		return 0;
	if (((m >> b) & 1) && sa_record_field(attr, req->data, b) != vb)
		return 0;
	return tables_busy(sa) ? -EBUSY : 0;
}

static int vlarb_port(struct sa *sa, uint16_t lid, const struct fab_port *q,
		      const struct sa_mad *req, struct records *r)
{
	uint8_t rec[72], tab[SMP_DATA_SIZE];
	uint8_t rec_port = q->node->type == NODE_TYPE_SWITCH ? q->num :
			   ca_rec_port(req, 1, q->num);
	int e = 0;

	if (!fabric_vlarb_port(q))
		return 0;
	for (unsigned int b = VL_ARB_LOW_0_31; b <= VL_ARB_HIGH_32_63 && !e; b++) {
		const struct vl_arb_entry *ent = fabric_vlarb_get(q, b);

		if (!fabric_vlarb_has_block(q, b))
			continue;
		if (!ent) {
			e = table_unknown(sa, req, 1, rec_port, 2, b);
			continue;
		}
		vl_arb_block_encode(ent, tab);
		sa_vlarb_record_encode(lid, rec_port, (uint8_t)b, tab, rec);
		e = sa_rec_offer(r, req, rec);
	}
	return e;
}

/* A node's SL2VLTableRecords: every pair (switch) or port (CA) whose table is known */
static int sl2vl_node(struct sa *sa, const struct fab_node *n, bool one, uint16_t want,
		      const struct sa_mad *req, struct records *r)
{
	bool is_sw = n->type == NODE_TYPE_SWITCH;
	int e = 0;

	for (unsigned int in = 0; in <= (is_sw ? n->num_ports : 0u) && !e; in++) {
		for (unsigned int out = 1; out <= n->num_ports && !e; out++) {
			const struct fab_port *p = &n->ports[is_sw ? 0 : out];
			uint8_t rec[16], vl[16], rec_out = is_sw ? (uint8_t)out :
							      ca_rec_port(req, 2, out);
			uint64_t packed;

			if (!p->lid || (one && p->lid != want) || !fabric_sl2vl_pair(n, in, out) ||
			    !sa_part_visible(sa, p))
				continue;
			if (fabric_sl2vl_get(n, in, out, &packed) < 0) {
				e = table_unknown(sa, req, 1, in, 2, rec_out);
				continue;
			}
			sl2vl_unpack(packed, vl);
			sa_sl2vl_record_encode(p->lid, (uint8_t)in, rec_out, vl, rec);
			e = sa_rec_offer(r, req, rec);
		}
	}
	return e;
}

static int collect_sl2vls(struct sa *sa, const struct sa_mad *req, struct records *r)
{
	const struct fabric *f = sa->f;
	uint16_t want = 0;
	bool one = lid_filter(req, &want);
	int e = 0;

	if (one) {
		const struct fab_port *p = fabric_port_by_lid(f, want);

		return p && p->lid == want ? sl2vl_node(sa, p->node, one, want, req, r) : 0;
	}
	for (size_t i = 0; i < f->nnodes && !e; i++)
		e = sl2vl_node(sa, f->nodes[i], false, 0, req, r);
	return e;
}

static int collect_vlarbs(struct sa *sa, const struct sa_mad *req, struct records *r)
{
	const struct fabric *f = sa->f;
	uint16_t want = 0;
	bool one = lid_filter(req, &want);
	int e = 0;

	for (size_t i = 0; i < f->nnodes && !e; i++) {
		const struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 0; pn <= n->num_ports && !e; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!fabric_is_endport(p) || !p->lid || (one && p->lid != want) ||
			    !sa_part_visible(sa, p))
				continue;
			if (n->type != NODE_TYPE_SWITCH) {
				e = vlarb_port(sa, p->lid, p, req, r);
				continue;
			}
			/* A base switch port 0 has no VL arbitration */
			for (unsigned int q = 1; q <= n->num_ports && !e; q++)
				e = vlarb_port(sa, p->lid, &n->ports[q], req, r);
		}
	}
	return e;
}

/* ---- PathRecord ---- */


static int mtu_select(uint8_t sel, uint8_t want, uint8_t have, uint8_t *out)
{
	switch (sel) {
	case SA_SELECTOR_GT: if (have <= want) return -1; *out = have; return 0;
	case SA_SELECTOR_LT:
		if (have < want) { *out = have; return 0; }
		if (want > 1) { *out = want - 1; return 0; }
		return -1;
	case SA_SELECTOR_EQ: if (have < want) return -1; *out = want; return 0;
	default: *out = have; return 0;
	}
}

static int rate_select(uint8_t sel, uint8_t want, uint8_t have, uint8_t *out)
{
	unsigned int w = iba_rate_to_dgbps(want), h = iba_rate_to_dgbps(have);

	switch (sel) {
	case SA_SELECTOR_GT: if (h <= w) return -1; *out = have; return 0;
	case SA_SELECTOR_LT: if (h >= w) return -1; *out = have; return 0;
	case SA_SELECTOR_EQ: if (h < w || !w) return -1; *out = want; return 0;
	default: *out = have; return 0;
	}
}

static int plt_select(uint8_t sel, uint8_t want, uint8_t have, uint8_t *out)
{
	switch (sel) {
	case SA_SELECTOR_GT: if (want >= 63) return -1; *out = have > want ? have : want + 1;
		return 0;
	case SA_SELECTOR_LT: if (have >= want) return -1; *out = have; return 0;
	case SA_SELECTOR_EQ: if (want < have) return -1; *out = want; return 0;
	default: *out = have; return 0;
	}
}

static unsigned int log2_ceil(unsigned int v)
{
	unsigned int l = 0;

	while ((1u << l) < v)
		l++;
	return l;
}

/* Build the record of the path slid -> dlid if it satisfies the query */
int sa_pr_build(struct sa *sa, const struct pr_query *q, const struct fab_port *src,
		    uint16_t slid, const struct fab_port *dst, uint16_t dlid, struct path_record *pr)
{
	const struct path_record *w = &q->want;
	uint64_t m = q->mask;
	struct path_attr a;
	uint8_t plt;
	int sl;

	if (path_lookup(sa->pt, slid, dlid, &a) < 0)
		return -1;
	memset(pr, 0, sizeof(*pr));
	pr->service_id = (m & PR_CM_SERVICE_ID) ? w->service_id : 0;
	gid_encode(sa->env->subnet_prefix, src->guid, pr->sgid);
	gid_encode(sa->env->subnet_prefix, dst->guid, pr->dgid);
	/* GIDs asked for are the path's (an alias GID names its port's paths) */
	if (m & PR_CM_SGID)
		memcpy(pr->sgid, w->sgid, 16);
	if (m & PR_CM_DGID)
		memcpy(pr->dgid, w->dgid, 16);
	pr->slid = slid;
	pr->dlid = dlid;
	pr->reversible = 1;
	pr->numb_path = 0;
	/* A partition both ends and the requester share (sa/sa_part.c) */
	if (sa_part_path_pkey(sa, src, dst, m & PR_CM_PKEY, w->pkey, &pr->pkey) < 0)
		return -1;
	/*
	 * The SL the routing engine gave this path: the SL-to-VL tables put it
	 * on the VL the deadlock analysis chose for every hop. Routes on one VL
	 * are deadlock-free whatever SL a packet carries: a requested SL is
	 * honoured then (IBA 15.2.5.16 lets the SA choose among valid SLs).
	 */
	sl = route_path_sl(sa->routes, slid, dlid);
	pr->sl = sl < 0 ? 0 : (uint8_t)sl;
	if ((m & PR_CM_SL) && w->sl != pr->sl) {
		if (!sa->any_sl)
			return -1;
		pr->sl = w->sl;
	}
	/*
	 * smd has no QoS policy: every QoSClass is carried on the path's SL,
	 * and the record names the class asked for (rdma_cm sets it from the
	 * socket's ToS). Raw packets take the same routes (smd never enables
	 * raw filtering); FlowLabel, TClass and HopLimit are the requester's
	 * own GRH fields, any of them valid on a path inside the subnet.
	 */
	pr->qos_class = (m & PR_CM_QOS_CLASS) ? w->qos_class : 0;
	pr->raw_traffic = (m & PR_CM_RAW_TRAFFIC) ? w->raw_traffic : 0;
	pr->flow_label = (m & PR_CM_FLOW_LABEL) ? w->flow_label : 0;
	pr->tclass = (m & PR_CM_TCLASS) ? w->tclass : 0;
	pr->hop_limit = (m & PR_CM_HOP_LIMIT) ? w->hop_limit : 0;
	if (m & PR_CM_MTU) {
		if (mtu_select((m & PR_CM_MTU_SELECTOR) ? w->mtu_selector : SA_SELECTOR_EQ, w->mtu,
			       a.mtu, &pr->mtu) < 0)
			return -1;
	} else {
		pr->mtu = a.mtu;
	}
	pr->mtu_selector = SA_SELECTOR_EQ;
	if (m & PR_CM_RATE) {
		if (rate_select((m & PR_CM_RATE_SELECTOR) ? w->rate_selector : SA_SELECTOR_EQ,
				w->rate, a.rate, &pr->rate) < 0)
			return -1;
	} else {
		pr->rate = a.rate;
	}
	pr->rate_selector = SA_SELECTOR_EQ;
	/*
	 * End to end, a packet may live as long as each switch on the way
	 * lets it (IBA 14.2.5.4): hops x 4.096 us x 2^LifeTimeValue.
	 */
	plt = (uint8_t)(sa->env->packet_life_time + log2_ceil(a.hops > 1 ? a.hops - 1 : 1));
	if (plt > 63)
		plt = 63;
	if (m & PR_CM_PLT) {
		if (plt_select((m & PR_CM_PLT_SELECTOR) ? w->plt_selector : SA_SELECTOR_EQ,
			       w->packet_life_time, plt, &pr->packet_life_time) < 0)
			return -1;
	} else {
		pr->packet_life_time = plt;
	}
	pr->plt_selector = SA_SELECTOR_EQ;
	pr->preference = 0;
	/* Reversible: the way back exists too (IBA 15.2.5.16), not only this one */
	if ((m & PR_CM_REVERSIBLE) && w->reversible) {
		struct path_attr back;

		if (path_lookup(sa->pt, dlid, slid, &back) < 0)
			return -1;
	}
	return 0;
}

const struct fab_port *sa_gid_port(struct sa *sa, const uint8_t gid[16], int *status)
{
	uint64_t prefix, guid;
	const struct fab_port *p;

	gid_decode(gid, &prefix, &guid);
	/* A port GUID, or an alias GUID a port holds (virtual functions) */
	p = sa_port_by_any_guid(sa, guid);
	if (!p || (prefix != sa->env->subnet_prefix && prefix != UINT64_C(0xfe80000000000000))) {
		*status = SA_STATUS_INVALID_GID;
		return NULL;
	}
	return p;
}

/* The endports a PathRecord side may be: one (LID or GID given) or all */
struct pr_side {
	const struct fab_port *port;	/* NULL: every endport */
	uint16_t lid;			/* a specific LID of port, or 0 for all of its LIDs */
};

static int pr_side(struct sa *sa, bool by_lid, uint16_t lid, bool by_gid, const uint8_t *gid,
		   struct pr_side *s, int *status)
{
	memset(s, 0, sizeof(*s));
	if (by_gid) {
		s->port = sa_gid_port(sa, gid, status);
		if (!s->port)
			return -1;
	}
	if (by_lid) {
		const struct fab_port *p = fabric_port_by_lid(sa->f, lid);

		if (!p || (s->port && s->port != p)) {
			*status = SA_STATUS_NO_RECORDS;
			return -1;
		}
		s->port = p;
		s->lid = lid;
	}
	return 0;
}

/*
 * Every (SLID, DLID) pair of two ports, in an order that changes both LIDs
 * from one path to the next: (0,0), (1,1), ... then (0,1), (1,2), ... With
 * LMC > 0 each LID of a port is routed over other links, so the first
 * NumbPath paths of a pair are as disjoint as the routes allow.
 */
static int pr_emit(struct sa *sa, const struct pr_query *q, const struct fab_port *src,
		   const struct pr_side *ss, const struct fab_port *dst, const struct pr_side *ds,
		   struct records *r, unsigned int *limit)
{
	unsigned int sn = ss->lid ? 1 : 1u << src->lmc, dn = ds->lid ? 1 : 1u << dst->lmc;
	unsigned int pref = 0;

	for (unsigned int k = 0; k < sn * dn; k++) {
		unsigned int i = k % sn, j = (i + k / sn) % dn;
		uint16_t slid = ss->lid ? ss->lid : (uint16_t)(src->lid + i);
		uint16_t dlid = ds->lid ? ds->lid : (uint16_t)(dst->lid + j);
		struct path_record pr;
		uint8_t rec[64];
		int e;

		if (*limit == 0)
			return 0;
		if (sa_pr_build(sa, q, src, slid, dst, dlid, &pr) < 0)
			continue;
		/* 0 is the most preferred path of the pair (IBA 15.2.5.16) */
		pr.preference = (uint8_t)(pref < 255 ? pref++ : 255);
		path_record_encode(&pr, rec);
		e = sa_rec_add(r, rec, 64);
		if (e)
			return e;
		(*limit)--;
	}
	return 0;
}

/* The paths from one source to the destination side (one port or every endport) */
static int pr_from(struct sa *sa, const struct pr_query *q, const struct fab_port *src,
		   const struct pr_side *ss, const struct pr_side *ds, struct records *r)
{
	const struct fabric *f = sa->f;
	/* NumbPath caps the paths per source/destination pair (IBA 15.2.5.16) */
	unsigned int per_pair = (q->mask & PR_CM_NUMB_PATH) && q->want.numb_path ?
				q->want.numb_path : UINT32_MAX;
	unsigned int limit = per_pair;
	int e = 0;

	if (ds->port)
		return pr_emit(sa, q, src, ss, ds->port, ds, r, &limit);
	for (uint32_t lid = 1; lid <= f->max_lid && !e; lid++) {
		const struct fab_port *dst = f->by_lid[lid];

		if (!dst || dst->lid != lid)
			continue;	/* each endport once, at its base LID */
		limit = per_pair;
		e = pr_emit(sa, q, src, ss, dst, ds, r, &limit);
	}
	return e;
}

static int collect_paths(struct sa *sa, const struct sa_mad *req, struct records *r, int *status)
{
	struct pr_query q;
	struct pr_side ss, ds;
	const struct fabric *f = sa->f;
	int e = 0;

	path_record_decode(req->data, &q.want);
	q.mask = req->comp_mask;
	if (pr_side(sa, q.mask & PR_CM_SLID, q.want.slid, q.mask & PR_CM_SGID, q.want.sgid, &ss,
		    status) < 0 ||
	    pr_side(sa, q.mask & PR_CM_DLID, q.want.dlid, q.mask & PR_CM_DGID, q.want.dgid, &ds,
		    status) < 0)
		return 0;
	/* A source given (the usual query): no walk over every port of the fabric */
	if (ss.port)
		return pr_from(sa, &q, ss.port, &ss, &ds, r);
	for (size_t i = 0; i < f->nnodes && !e; i++) {
		for (unsigned int sp = 0; sp <= f->nodes[i]->num_ports && !e; sp++) {
			const struct fab_port *src = &f->nodes[i]->ports[sp];

			if (fabric_is_endport(src) && src->lid)
				e = pr_from(sa, &q, src, &ss, &ds, r);
		}
	}
	return e;
}

static void answer_class_port_info(struct sa *sa, const struct sa_mad *req,
				   const struct mad_addr *from)
{
	struct class_port_info c = {
		.base_version = 1, .class_version = SA_CLASS_VERSION,
		/* RespTimeValue 18: 4.096 us * 2^18 is about 1 s */
		.resp_time_value = 18,
	};

	/*
	 * Exactly what is served (IBA 15.2.1.2): PortInfoRecord CapabilityMask
	 * and CapabilityMask2 matching, rate codes of the extended speeds;
	 * multicast groups and send-only full members among them; the rest as
	 * its records are served.
	 */
	c.cap_mask = SA_CAP_PORTINFO_CAPMASK_MATCH | SA_CAP_MULTIPATH;
	c.cap_mask2 = SA_CAP2_EXTENDED_SPEEDS | SA_CAP2_PORTINFO_CAPMASK2_MATCH;
	if (sa->mc) {
		c.cap_mask |= SA_CAP_UD_MCAST;
		c.cap_mask2 |= SA_CAP2_SENDONLY_FULL_MEMBER;
	}
	if (sa->env->smp)
		c.cap_mask2 |= SA_CAP2_ADDITIONAL_GUIDS;
	struct sa_mad resp;
	uint8_t d[72];

	respond_hdr(req, &resp, SA_METHOD_GET_RESP, 0);
	class_port_info_encode(&c, d);
	memcpy(resp.data, d, sizeof(d));
	sa->stats.answered++;
	send_mad(sa, &resp, from);
}

static void answer_records(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
			   struct records *recs);

/*
 * Join or leave (IBA 15.2.5.17): Set is answered with GetResp, Delete with
 * DeleteResp, each carrying the group's record as it now stands for the port.
 */
static void answer_modify(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from)
{
	struct sa_mad resp;
	uint8_t rec[MCR_SIZE];
	uint16_t status;

	if (req->hdr.attr_id == SA_ATTR_SERVICE_RECORD) {
		uint8_t srec[SR_SIZE];

		status = sa_service_modify(sa, req, from, srec);
		if (status)
			respond_status(sa, req, from, status);
		else
			sa_respond_record(sa, req, from, req->hdr.method == SA_METHOD_DELETE ?
					  SA_METHOD_DELETE_RESP : SA_METHOD_GET_RESP, srec,
					  SR_SIZE);
		return;
	}
	if (req->hdr.attr_id == SA_ATTR_INFORM_INFO) {
		uint8_t ii[INFORM_SIZE];

		status = sa_inform_set(sa, req, from, ii);
		if (status)
			respond_status(sa, req, from, status);
		else
			sa_respond_record(sa, req, from, SA_METHOD_GET_RESP, ii, INFORM_SIZE);
		return;
	}
	if (req->hdr.attr_id == SA_ATTR_GUID_INFO_RECORD) {
		/* 0: the answer comes when the port has taken the block */
		status = sa_guid_modify(sa, req, from);
		if (status)
			respond_status(sa, req, from, status);
		return;
	}
	status = sa_mcast_modify(sa, req, from, rec);

	if (status) {
		respond_status(sa, req, from, status);
		return;
	}
	respond_hdr(req, &resp, req->hdr.method == SA_METHOD_DELETE ? SA_METHOD_DELETE_RESP :
		    SA_METHOD_GET_RESP, 0);
	resp.attr_offset = (MCR_SIZE + 7) / 8;
	memcpy(resp.data, rec, MCR_SIZE);
	sa->stats.answered++;
	send_mad(sa, &resp, from);
	if (sa->env->mcast_changed)
		sa->env->mcast_changed(sa->env->ctx);
}

void sa_handle(struct sa *sa, const uint8_t *mad, size_t len, const struct mad_addr *from)
{
	struct records recs = { 0 };
	struct sa_mad req;
	uint16_t attr;
	size_t size;
	bool modify;
	int e = 0, status = 0;

	sa_tick(sa);
	if (sa_mad_decode(mad, len, &req) < 0) {
		sa->stats.dropped++;
		return;
	}
	if (req.hdr.method == SA_METHOD_REPORT_RESP && req.hdr.attr_id == SA_ATTR_NOTICE) {
		/* A subscriber got its Report (IBA 13.4.9) */
		sa_report_resp(sa, &req, from);
		return;
	}
	if (req.hdr.method & MAD_METHOD_RESP_BIT) {
		sa->stats.dropped++;
		return;
	}
	/* RMPP control from a receiver: ACK, STOP, ABORT (IBA 13.6.3) */
	if ((req.rmpp.flags & RMPP_FLAG_ACTIVE) && req.rmpp.type != RMPP_TYPE_DATA) {
		rmpp_control(sa, &req, from);
		return;
	}
	sa->stats.requests++;
	if (req.hdr.class_version != SA_CLASS_VERSION) {
		respond_status(sa, &req, from, MAD_STATUS_BAD_VERSION);
		return;
	}
	/*
	 * What the SA does not do at all (GetTraceTable, and every method the
	 * SA class does not have) is said so (IBA 13.4.7, status code 2):
	 * the port's agent takes every request method (mad/port.c) so that
	 * none goes unanswered
	 */
	switch (req.hdr.method) {
	case SA_METHOD_GET:
	case SA_METHOD_SET:
	case SA_METHOD_GET_TABLE:
	case SA_METHOD_GET_MULTI:
	case SA_METHOD_DELETE:
		break;
	default:
		respond_status(sa, &req, from, MAD_STATUS_METHOD_UNSUPP);
		return;
	}
	attr = req.hdr.attr_id;
	if (req.hdr.method == SA_METHOD_GET_MULTI) {
		/* MultiPathRecord only, its request perhaps in RMPP segments */
		if (attr != SA_ATTR_MULTIPATH_RECORD)
			respond_status(sa, &req, from, MAD_STATUS_METHOD_ATTR_UNSUPP);
		else if (sa_record_nfields(attr) < 64 &&
			 (req.comp_mask >> sa_record_nfields(attr)))
			respond_status(sa, &req, from, SA_STATUS_REQ_INVALID);
		else if (!sa->f)
			respond_status(sa, &req, from, MAD_STATUS_BUSY);
		else
			sa_multipath_handle(sa, &req, from);
		return;
	}
	if (attr == SA_ATTR_CLASS_PORT_INFO) {
		if (req.hdr.method != SA_METHOD_GET)
			respond_status(sa, &req, from, MAD_STATUS_METHOD_ATTR_UNSUPP);
		else
			answer_class_port_info(sa, &req, from);
		return;
	}
	size = sa_record_size(attr);
	/*
	 * Set and Delete: multicast joins and leaves, services, alias GUIDs;
	 * Set of InformInfo (subscriptions)
	 */
	modify = ((req.hdr.method == SA_METHOD_SET || req.hdr.method == SA_METHOD_DELETE) &&
		  (attr == SA_ATTR_MCMEMBER_RECORD || attr == SA_ATTR_SERVICE_RECORD ||
		   attr == SA_ATTR_GUID_INFO_RECORD)) ||
		 (req.hdr.method == SA_METHOD_SET && attr == SA_ATTR_INFORM_INFO);
	/* InformInfo is only ever Set; Notice is what Reports carry */
	if ((attr == SA_ATTR_INFORM_INFO && !modify) || attr == SA_ATTR_NOTICE) {
		respond_status(sa, &req, from, MAD_STATUS_METHOD_ATTR_UNSUPP);
		return;
	}
	if (req.hdr.method != SA_METHOD_GET && req.hdr.method != SA_METHOD_GET_TABLE && !modify) {
		respond_status(sa, &req, from, size ? MAD_STATUS_METHOD_ATTR_UNSUPP :
				 MAD_STATUS_METHOD_UNSUPP);
		return;
	}
	if (!size) {
		respond_status(sa, &req, from, MAD_STATUS_METHOD_ATTR_UNSUPP);
		return;
	}
	/* Mask bits past the record's last field name nothing */
	if (sa_record_nfields(attr) < 64 && (req.comp_mask >> sa_record_nfields(attr))) {
		respond_status(sa, &req, from, SA_STATUS_REQ_INVALID);
		return;
	}
	if (!sa->f) {
		/* Not up yet: the client is told to come back (IBA 13.4.7) */
		respond_status(sa, &req, from, MAD_STATUS_BUSY);
		return;
	}
	/* Partitions: what this requester may see (sa/sa_part.c) */
	sa->requester = fabric_port_by_lid(sa->f, from->slid);
	sa_judge_key(sa, &req);
	if (modify) {
		answer_modify(sa, &req, from);
		return;
	}
	if (req.hdr.method == SA_METHOD_GET_TABLE && xfer_underway(sa, &req, from))
		return;		/* its answer is on its way (sa_send_table) */
	if (req.hdr.method == SA_METHOD_GET_TABLE && xfers_full(sa, &req, from)) {
		/* Refused now, not after the table is built (sa_send_table would) */
		sa->stats.refused++;
		respond_status(sa, &req, from, SA_STATUS_NO_RESOURCES);
		return;
	}
	recs.size = (size + 7) & ~(size_t)7;
	{
		/*
		 * What this answer may take: a Get needs to see no more than two
		 * records; a GetTable what its port and all ports have left.
		 */
		uint16_t owner = sa_owner_of(sa, from->slid);
		size_t port_left = lim_port_bytes(sa) > sa->port_bytes[owner] ?
				   lim_port_bytes(sa) - sa->port_bytes[owner] : 0;
		size_t all_left = lim_bytes(sa) > sa->bytes ? lim_bytes(sa) - sa->bytes : 0;

		recs.max_n = req.hdr.method == SA_METHOD_GET ? 2 : SA_MAX_RECORDS;
		recs.max_bytes = port_left < all_left ? port_left : all_left;
		if (!recs.max_bytes)
			recs.max_bytes = 1;	/* nothing left: the first record is refused */
	}
	switch (attr) {
	case SA_ATTR_NODE_RECORD: e = collect_nodes(sa, &req, &recs); break;
	case SA_ATTR_PORT_INFO_RECORD: e = collect_port_infos(sa, &req, &recs); break;
	case SA_ATTR_SWITCH_INFO_RECORD: e = collect_switch_infos(sa, &req, &recs); break;
	case SA_ATTR_LINK_RECORD: e = collect_links(sa, &req, &recs); break;
	case SA_ATTR_LFT_RECORD: e = collect_lfts(sa, &req, &recs); break;
	case SA_ATTR_SM_INFO_RECORD: e = collect_sm_infos(sa, &req, &recs); break;
	case SA_ATTR_PKEY_RECORD: e = sa_pkey_collect(sa, &req, &recs); break;
	case SA_ATTR_GUID_INFO_RECORD:
		if (sa_guid_query(sa, &req, from))
			return;		/* blocks not seen yet: read first */
		e = sa_guid_collect(sa, &req, &recs);
		break;
	case SA_ATTR_SERVICE_RECORD: e = sa_service_collect(sa, &req, from, &recs); break;
	case SA_ATTR_INFORM_INFO_RECORD: e = sa_inform_collect(sa, &req, from, &recs); break;
	case SA_ATTR_PATH_RECORD: e = collect_paths(sa, &req, &recs, &status); break;
	case SA_ATTR_SL2VL_RECORD: e = collect_sl2vls(sa, &req, &recs); break;
	case SA_ATTR_VLARB_RECORD: e = collect_vlarbs(sa, &req, &recs); break;
	case SA_ATTR_MCMEMBER_RECORD: e = sa_mcast_collect(sa, &req, &recs); break;
	case SA_ATTR_MFT_RECORD: e = sa_mft_collect(sa, &req, &recs); break;
	default:
		break;
	}
	if (e == -E2BIG && req.hdr.method == SA_METHOD_GET && recs.n >= 2) {
		free(recs.buf);
		respond_status(sa, &req, from, SA_STATUS_TOO_MANY);
		return;
	}
	if (e == -EBUSY) {
		/* Tables not read yet: come back (IBA 13.4.7), no SMP now */
		free(recs.buf);
		respond_status(sa, &req, from, MAD_STATUS_BUSY);
		return;
	}
	if (e) {
		free(recs.buf);
		sa->stats.refused++;
		respond_status(sa, &req, from, SA_STATUS_NO_RESOURCES);
		return;
	}
	if (status && req.hdr.method == SA_METHOD_GET) {
		free(recs.buf);
		respond_status(sa, &req, from, (uint16_t)status);
		return;
	}
	answer_records(sa, &req, from, &recs);
}

void sa_respond_records(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
			struct records *recs)
{
	answer_records(sa, req, from, recs);
}

/* Get: exactly one record; GetTable: all of them through RMPP. Frees recs. */
static void answer_records(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
			   struct records *recs)
{
	if (req->hdr.method == SA_METHOD_GET) {
		struct sa_mad resp;

		if (recs->n != 1) {
			free(recs->buf);
			respond_status(sa, req, from, recs->n ? SA_STATUS_TOO_MANY :
					 SA_STATUS_NO_RECORDS);
			return;
		}
		respond_hdr(req, &resp, SA_METHOD_GET_RESP, 0);
		resp.attr_offset = (uint16_t)(recs->size / 8);
		memcpy(resp.data, recs->buf, sa_record_size(req->hdr.attr_id));
		free(recs->buf);
		sa->stats.answered++;
		send_mad(sa, &resp, from);
		return;
	}
	send_table(sa, req, from, recs);
	free(recs->buf);
}
