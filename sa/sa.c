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
#include "smd/log.h"
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
#define SA_PENDING_PER_PORT	2		/* SL2VL queries waiting for the fabric */
#define SA_PENDING_MAX		32
#define RMPP_TIMEOUT_US		500000
#define RMPP_RETRIES		10
#define RMPP_WINDOW_MAX		16

struct sa_xfer {
	struct sa_xfer *next;
	struct mad_addr to;	/* the request's address: every segment goes there as it came */
	uint64_t tid;
	struct sa_mad hdr;	/* the response header every segment carries */
	uint8_t *payload;
	size_t len;
	uint32_t nseg;
	uint32_t acked;		/* segments the receiver confirmed */
	uint32_t wlast;		/* the receiver's window: may send up to here */
	uint32_t sent;		/* highest segment sent */
	uint64_t deadline;
	uint64_t born;		/* when it started: SA_XFER_LIFE_US */
	uint16_t owner;		/* the requesting port's base LID: its limits */
	unsigned int retries;
};

/* An SL2VL query waiting for the tables it asked the fabric for */
struct sl2vl_item {
	uint16_t lid;
	uint8_t in, out;
	uint8_t rec_out;	/* OutputPortNum in the record: a CA port asked for as 0 */
	uint8_t vl[16];
	bool ok;
};

struct sa_pending {
	struct sa_pending *next;
	struct sa *sa;
	struct sa_mad req;
	struct mad_addr from;
	struct sl2vl_item *items;
	size_t n;
	unsigned int outstanding;
	uint16_t owner;		/* the requesting port: its limits */
};

int sa_new(const struct sa_env *env, struct sa **out)
{
	struct sa *sa = calloc(1, sizeof(*sa));

	if (!sa)
		return -ENOMEM;
	sa->port_xfers = calloc(LID_UCAST_MAX + 1, sizeof(*sa->port_xfers));
	sa->port_bytes = calloc(LID_UCAST_MAX + 1, sizeof(*sa->port_bytes));
	sa->port_pending = calloc(LID_UCAST_MAX + 1, sizeof(*sa->port_pending));
	if (!sa->port_xfers || !sa->port_bytes || !sa->port_pending) {
		free(sa->port_xfers);
		free(sa->port_bytes);
		free(sa->port_pending);
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
	/* Reads still out will never call back: the owner frees them first */
	while (sa->pending) {
		struct sa_pending *q = sa->pending;

		sa->pending = q->next;
		free(q->items);
		free(q);
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
	free(sa->port_pending);
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

static void xfer_pump(struct sa *sa, struct sa_xfer *x)
{
	while (x->sent < x->wlast && x->sent < x->nseg)
		xfer_send_seg(sa, x, ++x->sent);
	x->deadline = sa_now(sa) + RMPP_TIMEOUT_US;
}

/* IBA 13.6.3.3: the sender gives up, and says why */
static void xfer_abort(struct sa *sa, struct sa_xfer *x, uint8_t status)
{
	struct sa_mad m = x->hdr;

	m.rmpp.version = 1;
	m.rmpp.type = RMPP_TYPE_ABORT;
	m.rmpp.flags = RMPP_FLAG_ACTIVE;
	m.rmpp.status = status;
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

/* The open transfer this request retransmits (same requester and TID), or NULL */
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

	/*
	 * A retransmitted request restarts its transfer: the old one counts
	 * as given up, so that started - done - aborted stays what is open
	 */
	x = xfer_of(sa, req, from);
	if (x) {
		xfer_unlink(sa, x);
		xfer_free(x);
		sa->stats.rmpp_aborted++;
	}
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
	if (x->nseg == 1 && x->sent == 1) {
		xfer_unlink(sa, x);
		xfer_free(x);
		sa->stats.rmpp_done++;
	}
}

static void rmpp_control(struct sa *sa, const struct sa_mad *m, const struct mad_addr *from)
{
	struct sa_xfer *x;

	/*
	 * Match on the low 32 TID bits: the high half belongs to whoever
	 * sent the MAD (the kernel's agent, or the simulator) and may differ.
	 */
	for (x = sa->xfers; x; x = x->next)
		if (x->to.slid == from->slid && x->to.qpn == from->qpn &&
		    (uint32_t)x->tid == (uint32_t)m->hdr.tid)
			break;
	log_debug("SA: RMPP type %u seg %u win %u from LID %u for TID 0x%x%s", m->rmpp.type,
		  m->rmpp.data1, m->rmpp.data2, from->slid, (uint32_t)m->hdr.tid,
		  x ? "" : " (no such transfer)");
	if (!x)
		return;
	if (m->rmpp.type != RMPP_TYPE_ACK) {
		/* STOP or ABORT from the receiver: give up (IBA 13.6.3.3) */
		xfer_unlink(sa, x);
		xfer_free(x);
		sa->stats.rmpp_aborted++;
		return;
	}
	if (m->rmpp.data1 > x->nseg || m->rmpp.data1 > x->sent) {
		/* An ACK for a segment never sent: the transfer is confused */
		xfer_unlink(sa, x);
		xfer_free(x);
		sa->stats.rmpp_aborted++;
		return;
	}
	if (m->rmpp.data1 >= x->acked) {
		x->acked = m->rmpp.data1;
		if (m->rmpp.data2 > x->wlast)
			x->wlast = m->rmpp.data2 < x->acked + RMPP_WINDOW_MAX ?
				   m->rmpp.data2 : x->acked + RMPP_WINDOW_MAX;
		x->retries = 0;
	}
	if (x->acked == x->nseg) {
		xfer_unlink(sa, x);
		xfer_free(x);
		sa->stats.rmpp_done++;
		return;
	}
	xfer_pump(sa, x);
}

uint64_t sa_next_tick(const struct sa *sa)
{
	uint64_t next = sa_report_next(sa), svc = sa_service_next(sa);

	if (svc && (!next || svc < next))
		next = svc;
	/* Transfers and GetMulti reassembly: their deadlines are theirs to keep */
	if (sa->xfers || sa->rx) {
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
			log_debug("SA: RMPP to LID %u TID 0x%x: %u/%u segments after %u s, ending it",
				  x->to.slid, (uint32_t)x->tid, x->acked, x->nseg,
				  SA_XFER_LIFE_US / 1000000);
			xfer_abort(sa, x, RMPP_STATUS_T2L);
			xfer_unlink(sa, x);
			xfer_free(x);
			sa->stats.rmpp_aborted++;
			continue;
		}
		if (x->deadline > now)
			continue;
		/*
		 * A receiver that never ACKed has no RMPP (a bare umad client,
		 * as every client is under the simulator): retransmitting would
		 * only land in whatever process next takes its QP. If it does
		 * speak RMPP and segment 1 was lost, it asks again.
		 */
		log_debug("SA: RMPP to LID %u TID 0x%x stalled at %u/%u (%u retries)", x->to.slid,
			  (uint32_t)x->tid, x->acked, x->nseg, x->retries);
		if (++x->retries > RMPP_RETRIES || x->acked == 0) {
			xfer_unlink(sa, x);
			xfer_free(x);
			sa->stats.rmpp_aborted++;
			continue;
		}
		/* Resend the unacknowledged part of the window */
		x->sent = x->acked;
		xfer_pump(sa, x);
	}
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

			if (!fabric_port_linked(p))
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
 * VLArbitrationTableRecord (IBA 15.2.5.9): the tables smd programmed, on
 * the ports of the nodes where programming (and the read-back) succeeded.
 * Records name the output port: a switch's cabled ports under its LID, a CA
 * port under its own.
 */
static int vlarb_port(struct sa *sa, uint16_t lid, const struct fab_port *q,
		      const struct sa_mad *req, struct records *r)
{
	uint8_t rec[72], tab[SMP_DATA_SIZE];
	uint8_t rec_port = q->node->type == NODE_TYPE_SWITCH ? q->num :
			   ca_rec_port(req, 1, q->num);
	int e = 0;

	if (!q->pi_valid || !fabric_port_linked(q))
		return 0;
	for (unsigned int high = 0; high < 2 && !e; high++) {
		unsigned int cap = high ? q->pi.vl_arb_high_cap : q->pi.vl_arb_low_cap;

		for (unsigned int b = 0; b < 2 && cap > b * VL_ARB_BLOCK_SIZE && !e; b++) {
			struct vl_arb_entry ent[VL_ARB_BLOCK_SIZE] = { { 0 } };
			unsigned int n = cap - b * VL_ARB_BLOCK_SIZE;

			if (n > VL_ARB_BLOCK_SIZE)
				n = VL_ARB_BLOCK_SIZE;
			memcpy(ent, sa->env->vlarb + high * 2 * VL_ARB_BLOCK_SIZE +
			       b * VL_ARB_BLOCK_SIZE, n * sizeof(ent[0]));
			vl_arb_block_encode(ent, tab);
			sa_vlarb_record_encode(lid, rec_port, (uint8_t)((high ? VL_ARB_HIGH_0_31 :
							       VL_ARB_LOW_0_31) + b), tab, rec);
			e = sa_rec_offer(r, req, rec);
		}
	}
	return e;
}

static int collect_vlarbs(struct sa *sa, const struct sa_mad *req, struct records *r)
{
	const struct fabric *f = sa->f;
	uint16_t want = 0;
	bool one = lid_filter(req, &want);
	int e = 0;

	if (!sa->env->vlarb)
		return 0;
	for (size_t i = 0; i < f->nnodes && !e; i++) {
		const struct fab_node *n = f->nodes[i];

		if (!n->vlarb_sig)
			continue;
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

/* ---- SL2VLTableRecord: read from the fabric when asked ---- */

#define SL2VL_MAX_READS	4096

static void answer_records(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
			   struct records *recs);

static void sl2vl_finish(struct sa_pending *q)
{
	struct sa *sa = q->sa;
	struct records recs = { .size = 16 };
	int e = 0;

	for (struct sa_pending **pp = &sa->pending; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			break;
		}
	sa->npending--;
	sa->port_pending[q->owner]--;
	for (size_t i = 0; i < q->n && !e; i++) {
		uint8_t rec[16];

		if (!q->items[i].ok)
			continue;
		sa_sl2vl_record_encode(q->items[i].lid, q->items[i].in, q->items[i].rec_out,
				       q->items[i].vl, rec);
		e = sa_rec_offer(&recs, &q->req, rec);
	}
	if (e) {
		free(recs.buf);
		respond_status(sa, &q->req, &q->from, SA_STATUS_NO_RESOURCES);
	} else {
		answer_records(sa, &q->req, &q->from, &recs);
	}
	free(q->items);
	free(q);
}

struct sl2vl_read {
	struct sa_pending *q;
	size_t i;
};

static void sl2vl_done(void *arg, int status, const uint8_t vl[16])
{
	struct sl2vl_read *rd = arg;
	struct sa_pending *q = rd->q;

	if (status == 0) {
		memcpy(q->items[rd->i].vl, vl, 16);
		q->items[rd->i].ok = true;
	}
	free(rd);
	if (--q->outstanding == 0)
		sl2vl_finish(q);
}

static int sl2vl_add(struct sa_pending *q, uint16_t lid, uint8_t in, uint8_t out, bool ca,
		     size_t *cap)
{
	uint64_t m = q->req.comp_mask;
	uint8_t rec_out = ca ? ca_rec_port(&q->req, 2, out) : out;

	/* Fields 1 and 2 (IBA 15.2.5.4) narrow what must be read */
	if (((m & 2) && sa_record_field(SA_ATTR_SL2VL_RECORD, q->req.data, 1) != in) ||
	    ((m & 4) && sa_record_field(SA_ATTR_SL2VL_RECORD, q->req.data, 2) != rec_out))
		return 0;
	if (q->n >= SL2VL_MAX_READS)
		return -E2BIG;
	if (q->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 32;
		struct sl2vl_item *ni = realloc(q->items, ncap * sizeof(*ni));

		if (!ni)
			return -ENOMEM;
		q->items = ni;
		*cap = ncap;
	}
	memset(&q->items[q->n], 0, sizeof(q->items[q->n]));
	q->items[q->n].lid = lid;
	q->items[q->n].in = in;
	q->items[q->n].out = out;
	q->items[q->n].rec_out = rec_out;
	q->n++;
	return 0;
}

static void sl2vl_query(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from)
{
	const struct fabric *f = sa->f;
	struct sa_pending *q;
	uint16_t want = 0;
	bool one = lid_filter(req, &want);
	size_t cap = 0;
	int e = 0;

	uint16_t owner = sa_owner_of(sa, from->slid);

	if (!sa->env->read_sl2vl) {
		respond_status(sa, req, from, SA_STATUS_NO_RECORDS);
		return;
	}
	/* Each query reads up to SL2VL_MAX_READS tables: a few at a time */
	if (sa->npending >= SA_PENDING_MAX || sa->port_pending[owner] >= SA_PENDING_PER_PORT) {
		sa->stats.refused++;
		respond_status(sa, req, from, SA_STATUS_NO_RESOURCES);
		return;
	}
	q = calloc(1, sizeof(*q));
	if (!q) {
		respond_status(sa, req, from, SA_STATUS_NO_RESOURCES);
		return;
	}
	q->sa = sa;
	q->owner = owner;
	q->req = *req;
	q->from = *from;
	for (size_t i = 0; i < f->nnodes && !e; i++) {
		const struct fab_node *n = f->nodes[i];

		if (n->type == NODE_TYPE_SWITCH) {
			uint16_t lid = n->ports[0].lid;

			if (!lid || (one && lid != want) || !sa_part_visible(sa, &n->ports[0]))
				continue;
			/* Every (in, out) pair a packet can take: port 0 or a linked port in */
			for (unsigned int in = 0; in <= n->num_ports && !e; in++) {
				if (in && !fabric_port_linked(&n->ports[in]))
					continue;
				for (unsigned int out = 1; out <= n->num_ports && !e; out++)
					if (out != in && fabric_port_linked(&n->ports[out]))
						e = sl2vl_add(q, lid, (uint8_t)in, (uint8_t)out,
							      false, &cap);
			}
			continue;
		}
		for (unsigned int pn = 1; pn <= n->num_ports && !e; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!p->lid || !p->has_path || (one && p->lid != want) ||
			    !sa_part_visible(sa, p))
				continue;
			e = sl2vl_add(q, p->lid, 0, (uint8_t)pn, true, &cap);
		}
	}
	if (e) {
		free(q->items);
		free(q);
		respond_status(sa, req, from, SA_STATUS_NO_RESOURCES);
		return;
	}
	q->next = sa->pending;
	sa->pending = q;
	sa->npending++;
	sa->port_pending[owner]++;
	/* Count them all first: a read may complete before the loop ends */
	q->outstanding = (unsigned int)q->n + 1;
	for (size_t i = 0; i < q->n; i++) {
		struct sl2vl_read *rd = malloc(sizeof(*rd));
		const struct fab_port *p = fabric_port_by_lid(f, q->items[i].lid);

		if (rd) {
			/* Filled before the call: the answer may come back inside it */
			rd->q = q;
			rd->i = i;
		}
		if (!rd || !p || sa->env->read_sl2vl(sa->env->ctx, p->node, q->items[i].in,
						       q->items[i].out, sl2vl_done, rd) < 0) {
			free(rd);
			q->outstanding--;
		}
	}
	if (--q->outstanding == 0)
		sl2vl_finish(q);
}

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
	sa->req_trusted = sa->env->trusted_key && req.sm_key == sa->env->trusted_key;
	if (modify) {
		answer_modify(sa, &req, from);
		return;
	}
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
	case SA_ATTR_SL2VL_RECORD:
		sl2vl_query(sa, &req, from);
		return;
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
