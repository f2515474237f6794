// SPDX-License-Identifier: MIT
/*
 * The SA's answers of more than one MAD: RMPP transfers as the sender
 * (IBA 13.6.3), with their limits per requesting port and for all, and the
 * receiver's ACKs, STOPs and ABORTs.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_codec.h"
#include "sa/sa.h"
#include "sa/sa_int.h"
#include "util/log.h"

#define SA_MAX_XFERS		1024		/* RMPP transfers in flight, all clients */
#define SA_XFERS_PER_PORT	16		/* ... for one requesting port */
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

static void xfer_free(struct sa_xfer *x)
{
	free(x->payload);
	free(x);
}

static unsigned int lim_xfers(const struct sa *sa)
{
	return sa->env->xfers_per_port ? sa->env->xfers_per_port : SA_XFERS_PER_PORT;
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
	sa_send_len(sa, &m, n == x->nseg ? SA_HDR_SIZE + chunk : MAD_SIZE, &x->to);
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
		x->deadline = sa_clock(sa) + RMPP_TIMEOUT_US;
}

/* IBA 13.6.3.3: an ABORT with this status, on the headers of m, to a sender or receiver */
void sa_rmpp_send_abort(struct sa *sa, const struct sa_mad *m, const struct mad_addr *to,
			uint8_t status)
{
	struct sa_mad a = *m;

	a.rmpp.version = RMPP_VERSION;
	a.rmpp.type = RMPP_TYPE_ABORT;
	a.rmpp.flags = RMPP_FLAG_ACTIVE;
	a.rmpp.resp_time = RMPP_RESP_TIME_NONE;
	a.rmpp.status = status;
	a.rmpp.data1 = 0;
	a.rmpp.data2 = 0;
	memset(a.data, 0, SA_DATA_SIZE);
	sa_send_len(sa, &a, SA_HDR_SIZE, to);
}

/* The sender gives up, and says why */
static void xfer_abort(struct sa *sa, struct sa_xfer *x, uint8_t status)
{
	sa_rmpp_send_abort(sa, &x->hdr, &x->to, status);
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
bool sa_xfer_underway(const struct sa *sa, const struct sa_mad *req,
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
bool sa_xfers_full(const struct sa *sa, const struct sa_mad *req, const struct mad_addr *from)
{
	return (sa->nxfers >= SA_MAX_XFERS ||
		sa->port_xfers[sa_owner_of(sa, from->slid)] >= lim_xfers(sa)) &&
	       !xfer_of(sa, req, from);
}

/* Records through RMPP with this response method and attribute; recs->buf is taken */
void sa_send_table(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		   struct records *recs, uint8_t method, uint16_t attr)
{
	struct sa_xfer *x;

	uint16_t owner = sa_owner_of(sa, from->slid);

	if (sa_xfer_underway(sa, req, from))
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
		sa_respond_status(sa, req, from, SA_STATUS_NO_RESOURCES);
		return;
	}
	x = calloc(1, sizeof(*x));
	if (!x) {
		sa_respond_status(sa, req, from, SA_STATUS_NO_RESOURCES);
		return;
	}
	sa_respond_hdr(req, &x->hdr, method, 0);
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
	x->born = sa_clock(sa);
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
		x->deadline = sa_clock(sa) + RMPP_TIMEOUT_US;
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

void sa_rmpp_control(struct sa *sa, const struct sa_mad *m, const struct mad_addr *from)
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

/* Transfers past their time, stalled, or with segments their window lets out */
void sa_xfers_tick(struct sa *sa)
{
	uint64_t now;
	struct sa_xfer *x, *next;

	if (!sa->xfers)
		return;
	now = sa_clock(sa);
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
	now = sa_clock(sa);
	for (const struct sa_xfer *x = sa->xfers; x; x = x->next) {
		uint64_t d = x->sent < xfer_end(x) ? now : x->deadline;

		if (x->born + SA_XFER_LIFE_US + 1 < d)
			d = x->born + SA_XFER_LIFE_US + 1;
		if (d < due)
			due = d;
	}
	return due <= now ? 0 : (int)((due - now + 999) / 1000);
}

void sa_xfers_free(struct sa *sa)
{
	while (sa->xfers) {
		struct sa_xfer *x = sa->xfers;

		sa->xfers = x->next;
		xfer_free(x);
	}
}
