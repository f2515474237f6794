// SPDX-License-Identifier: MIT
/*
 * MultiPathRecord (IBA 15.2.5.20): GetMulti asks for up to NumbPath paths
 * between any of SGIDCount source GIDs and any of DGIDCount destination
 * GIDs, which follow the record's 24 fixed bytes. With more than 11 GIDs
 * the request is longer than one MAD and comes as RMPP DATA segments (IBA
 * 13.6.2, the request direction of a double-sided transfer): the SA ACKs
 * them, reassembles the request, ACKs the last one and answers with
 * GetMultiResp(PathRecord) through RMPP, as a GetTable.
 *
 * Paths are handed out round-robin over the (source, destination) pairs,
 * each pair's (SLID, DLID) combinations in the order that changes both
 * LIDs at every step (as PathRecord NumbPath does), so that with LMC > 0
 * and routes spread over links the paths are as independent as the
 * routes let them be, whatever IndependenceSelector says.
 * Limits: SA_RX_PER_PORT requests in reassembly per port, SA_RX_MAX in
 * all, SA_RX_SEGS segments each, SA_RX_LIFE_US to complete.
 *
 * The receiver takes what a Linux kernel sender (mad_rmpp.c) sends: segment
 * 1 alone (its window is 1 until our first ACK), then up to the
 * NewWindowLast we give, an ACK awaited at the window's end, the window
 * again from our last ACK after 2 s without one. Every segment in order is
 * ACKed (any sender takes that), the window never shrinks (a kernel sender
 * ignores an ACK whose window is below the last one, the final ACK too), a
 * repeated segment is answered with where we are, and segment 1 again
 * while we hold the request is such a repeat, not a new request.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "sa/sa_int.h"

#define SA_RX_MAX	64
#define SA_RX_PER_PORT	2
#define SA_RX_SEGS	48		/* 24 + 510 GIDs of 16 bytes: 41 segments */
#define SA_RX_LIFE_US	10000000
#define SA_RX_WINDOW	16
#define MPR_MAX_PATHS	4096		/* NumbPath is 7 bits; without it, one per pair */

struct sa_rx {
	struct sa_rx *next;
	struct mad_addr from;		/* the requester, as segment 1 came */
	uint32_t tid;
	struct sa_mad first;		/* segment 1's headers: the request */
	uint8_t *buf;
	size_t len;
	uint32_t expect;		/* the next segment in order */
	uint32_t wlast;			/* the NewWindowLast we gave */
	uint64_t born;
};

static void rx_free(struct sa_rx *x)
{
	free(x->buf);
	free(x);
}

static void rx_unlink(struct sa *sa, struct sa_rx *x)
{
	for (struct sa_rx **pp = &sa->rx; *pp; pp = &(*pp)->next)
		if (*pp == x) {
			*pp = x->next;
			sa->nrx--;
			return;
		}
}

void sa_multipath_free(struct sa *sa)
{
	while (sa->rx) {
		struct sa_rx *x = sa->rx;

		sa->rx = x->next;
		rx_free(x);
	}
	sa->nrx = 0;
}

void sa_multipath_tick(struct sa *sa)
{
	uint64_t now;

	if (!sa->rx)
		return;
	now = sa_clock(sa);
	for (struct sa_rx *x = sa->rx, *next; x; x = next) {
		next = x->next;
		if (now - x->born > SA_RX_LIFE_US) {
			log_debug("SA: GetMulti from LID %u TID 0x%x never completed", x->from.slid,
				  x->tid);
			rx_unlink(sa, x);
			rx_free(x);
		}
	}
}

/* IBA 13.6.3.2: the receiver's ACK echoes the DATA header, response bit flipped */
static void rx_ack(struct sa *sa, const struct sa_mad *seg, const struct mad_addr *from,
		   uint32_t segnum, uint32_t wlast)
{
	struct sa_mad ack = *seg;
	uint8_t buf[MAD_SIZE];

	ack.hdr.method ^= MAD_METHOD_RESP_BIT;
	ack.hdr.status = 0;
	ack.rmpp.version = RMPP_VERSION;
	ack.rmpp.type = RMPP_TYPE_ACK;
	ack.rmpp.flags = RMPP_FLAG_ACTIVE;
	ack.rmpp.resp_time = RMPP_RESP_TIME_NONE;
	ack.rmpp.status = RMPP_STATUS_OK;
	ack.rmpp.data1 = segnum;
	ack.rmpp.data2 = wlast;
	memset(ack.data, 0, sizeof(ack.data));
	if (sa_mad_encode(&ack, buf) == 0)
		sa->env->send(sa->env->ctx, buf, SA_HDR_SIZE, from);
}

/* IBA 13.6.3.3: the receiver gives up on a sender's transfer, and says why */
static void rx_abort(struct sa *sa, const struct sa_mad *seg, const struct mad_addr *from,
		     uint8_t status)
{
	struct sa_mad m = *seg;

	m.hdr.method ^= MAD_METHOD_RESP_BIT;
	m.hdr.status = 0;
	sa_rmpp_send_abort(sa, &m, from, status);
}

/* The request in reassembly from this sender with this TID (low 32 bits), or NULL */
static struct sa_rx *rx_of(const struct sa *sa, const struct sa_mad *m, const struct mad_addr *from)
{
	for (struct sa_rx *x = sa->rx; x; x = x->next)
		if (x->from.slid == from->slid && x->from.qpn == from->qpn &&
		    x->tid == (uint32_t)m->hdr.tid)
			return x;
	return NULL;
}

void sa_multipath_control(struct sa *sa, const struct sa_mad *m, const struct mad_addr *from)
{
	struct sa_rx *x = rx_of(sa, m, from);

	/* The sender stops or gives up (IBA 13.6.3.3): so do we */
	if (x && (m->rmpp.type == RMPP_TYPE_STOP || m->rmpp.type == RMPP_TYPE_ABORT)) {
		log_debug("SA: GetMulti from LID %u TID 0x%x: the sender ends it (%u, status %u)",
			  x->from.slid, x->tid, m->rmpp.type, m->rmpp.status);
		rx_unlink(sa, x);
		rx_free(x);
	}
}

/* The PathRecord query the MultiPathRecord's fixed part asks for (component bits mapped) */
static void mpr_query(const struct multipath_record *mp, uint64_t m, struct pr_query *q)
{
	static const struct { uint64_t mpr, pr; } map[] = {
		{ MPR_CM_RAW_TRAFFIC, PR_CM_RAW_TRAFFIC }, { MPR_CM_FLOW_LABEL, PR_CM_FLOW_LABEL },
		{ MPR_CM_HOP_LIMIT, PR_CM_HOP_LIMIT }, { MPR_CM_TCLASS, PR_CM_TCLASS },
		{ MPR_CM_REVERSIBLE, PR_CM_REVERSIBLE }, { MPR_CM_PKEY, PR_CM_PKEY },
		{ MPR_CM_QOS_CLASS, PR_CM_QOS_CLASS }, { MPR_CM_SL, PR_CM_SL },
		{ MPR_CM_MTU_SELECTOR, PR_CM_MTU_SELECTOR }, { MPR_CM_MTU, PR_CM_MTU },
		{ MPR_CM_RATE_SELECTOR, PR_CM_RATE_SELECTOR }, { MPR_CM_RATE, PR_CM_RATE },
		{ MPR_CM_PLT_SELECTOR, PR_CM_PLT_SELECTOR }, { MPR_CM_PLT, PR_CM_PLT },
	};

	memset(q, 0, sizeof(*q));
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (m & map[i].mpr)
			q->mask |= map[i].pr;
	/* ServiceID: both of its parts, or none */
	if ((m & MPR_CM_SERVICE_ID) == MPR_CM_SERVICE_ID)
		q->mask |= PR_CM_SERVICE_ID;
	q->want = (struct path_record){
		.service_id = mp->service_id, .raw_traffic = mp->raw_traffic,
		.flow_label = mp->flow_label, .hop_limit = mp->hop_limit, .tclass = mp->tclass,
		.reversible = mp->reversible, .pkey = mp->pkey, .qos_class = mp->qos_class,
		.sl = mp->sl, .mtu_selector = mp->mtu_selector, .mtu = mp->mtu,
		.rate_selector = mp->rate_selector, .rate = mp->rate,
		.plt_selector = mp->plt_selector, .packet_life_time = mp->packet_life_time,
	};
	q->mask |= PR_CM_SGID | PR_CM_DGID;
}

/* The whole request is here (len bytes of MultiPathRecord): answer it */
static void mpr_answer(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		       const uint8_t *rec, size_t len)
{
	struct multipath_record mp;
	const struct fab_port **ports = NULL;
	struct records recs = { .size = 64, .max_n = MPR_MAX_PATHS };
	struct pr_query q;
	unsigned int ng, ns, nd, want, got = 0;
	int status = 0, e = 0;
	uint64_t m = req->comp_mask;

	/* Partitions: the paths this requester may see (sa/sa_part.c) */
	sa->requester = fabric_port_by_lid(sa->f, from->slid);
	sa_judge_key(sa, req);
	multipath_record_decode(rec, &mp);
	ns = mp.sgid_count;
	nd = mp.dgid_count;
	ng = ns + nd;
	if ((m & (MPR_CM_SGID_COUNT | MPR_CM_DGID_COUNT)) !=
	    (MPR_CM_SGID_COUNT | MPR_CM_DGID_COUNT) || !ns || !nd) {
		sa_respond_status(sa, req, from, SA_STATUS_INSUFFICIENT);
		return;
	}
	if (MPR_FIXED_SIZE + 16 * (size_t)ng > len) {
		sa_respond_status(sa, req, from, SA_STATUS_REQ_INVALID);
		return;
	}
	ports = calloc(ng, sizeof(*ports));
	if (!ports) {
		sa_respond_status(sa, req, from, SA_STATUS_NO_RESOURCES);
		return;
	}
	for (unsigned int i = 0; i < ng; i++) {
		ports[i] = sa_gid_port(sa, rec + MPR_FIXED_SIZE + 16 * i, &status);
		if (!ports[i]) {
			free(ports);
			sa_respond_status(sa, req, from, SA_STATUS_INVALID_GID);
			return;
		}
	}
	mpr_query(&mp, m, &q);
	/* NumbPath paths in all; without it one per (source, destination) pair */
	want = (m & MPR_CM_NUMB_PATH) && mp.numb_path ? mp.numb_path : ns * nd;
	if (want > MPR_MAX_PATHS)
		want = MPR_MAX_PATHS;
	/* Round r takes combination r of every pair that still has one */
	for (unsigned int r = 0; got < want && !e; r++) {
		bool any = false;

		for (unsigned int s = 0; s < ns && got < want && !e; s++)
			for (unsigned int d = 0; d < nd && got < want && !e; d++) {
				const struct fab_port *src = ports[s], *dst = ports[ns + d];
				unsigned int sn = 1u << src->lmc, dn = 1u << dst->lmc;
				unsigned int i = r % sn, j = (i + r / sn) % dn;
				struct path_record pr;
				uint8_t out[64];

				if (r >= sn * dn)
					continue;
				any = true;
				memcpy(q.want.sgid, rec + MPR_FIXED_SIZE + 16 * s, 16);
				memcpy(q.want.dgid, rec + MPR_FIXED_SIZE + 16 * (ns + d), 16);
				if (sa_pr_build(sa, &q, src, (uint16_t)(src->lid + i), dst,
						(uint16_t)(dst->lid + j), &pr) < 0)
					continue;
				pr.preference = (uint8_t)(got < 255 ? got : 255);
				path_record_encode(&pr, out);
				e = sa_rec_add(&recs, out, 64);
				got += e == 0;
			}
		if (!any)
			break;
	}
	free(ports);
	if (e) {
		free(recs.buf);
		sa_respond_status(sa, req, from, SA_STATUS_NO_RESOURCES);
		return;
	}
	if (!recs.n) {
		free(recs.buf);
		sa_respond_status(sa, req, from, SA_STATUS_NO_RECORDS);
		return;
	}
	sa_send_table(sa, req, from, &recs, SA_METHOD_GET_MULTI_RESP, SA_ATTR_PATH_RECORD);
	free(recs.buf);
}

void sa_multipath_handle(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from)
{
	struct sa_rx *x;
	unsigned int mine = 0;
	uint32_t seg = req->rmpp.data1;
	bool first = req->rmpp.flags & RMPP_FLAG_FIRST;

	if (!(req->rmpp.flags & RMPP_FLAG_ACTIVE)) {
		/* All of it in one MAD, no RMPP */
		mpr_answer(sa, req, from, req->data, SA_DATA_SIZE);
		return;
	}
	x = rx_of(sa, req, from);
	if (req->rmpp.version != RMPP_VERSION || first != (seg == 1)) {
		/* IBA 13.6.3.3: UNV; First set exactly on segment 1, else BAD_SEG */
		rx_abort(sa, req, from, req->rmpp.version != RMPP_VERSION ? RMPP_STATUS_UNV :
				       RMPP_STATUS_BAD_SEG);
		if (x) {
			rx_unlink(sa, x);
			rx_free(x);
		}
		return;
	}
	if (!x && seg == 1) {
		/* A new request; longer than we take (PayloadLength: all segments' bytes)? */
		for (struct sa_rx *o = sa->rx; o; o = o->next)
			mine += o->from.slid == from->slid;
		if (sa->nrx >= SA_RX_MAX || mine >= SA_RX_PER_PORT ||
		    req->rmpp.data2 > SA_RX_SEGS * RMPP_SEG_PAYLOAD) {
			sa->stats.refused++;
			sa_respond_status(sa, req, from, SA_STATUS_NO_RESOURCES);
			return;
		}
		x = calloc(1, sizeof(*x));
		if (x)
			x->buf = malloc(SA_RX_SEGS * SA_DATA_SIZE);
		if (!x || !x->buf) {
			if (x)
				rx_free(x);
			sa_respond_status(sa, req, from, SA_STATUS_NO_RESOURCES);
			return;
		}
		x->from = *from;
		x->tid = (uint32_t)req->hdr.tid;
		x->first = *req;
		x->expect = 1;
		x->wlast = 1;		/* a sender's window before our first ACK */
		x->born = sa_clock(sa);
		x->next = sa->rx;
		sa->rx = x;
		sa->nrx++;
	}
	if (!x)
		return;		/* a segment of nothing we know: dropped */
	if (seg > x->wlast)
		return;		/* past the window we gave: dropped, as IBA 13.6.3.2 lets us */
	if (seg != x->expect) {
		/* Repeated (the sender went back: an ACK was lost) or a gap: where we are */
		if (x->expect > 1)
			rx_ack(sa, req, from, x->expect - 1, x->wlast);
		return;
	}
	if (x->expect > SA_RX_SEGS) {
		rx_unlink(sa, x);
		rx_free(x);
		sa_respond_status(sa, req, from, SA_STATUS_NO_RESOURCES);
		return;
	}
	memcpy(x->buf + x->len, req->data, SA_DATA_SIZE);
	x->len += SA_DATA_SIZE;
	if (req->rmpp.flags & RMPP_FLAG_LAST) {
		/* PayloadLength of the last segment: its SA header and what it carries */
		uint32_t last = req->rmpp.data2 >= 20 ? req->rmpp.data2 - 20 : SA_DATA_SIZE;

		if (last < SA_DATA_SIZE)
			x->len -= SA_DATA_SIZE - last;
		rx_ack(sa, req, from, x->expect, x->wlast > x->expect ? x->wlast : x->expect);
		rx_unlink(sa, x);
		mpr_answer(sa, &x->first, from, x->buf, x->len);
		rx_free(x);
		return;
	}
	if (x->expect + SA_RX_WINDOW > x->wlast)
		x->wlast = x->expect + SA_RX_WINDOW;
	rx_ack(sa, req, from, x->expect, x->wlast);
	x->expect++;
}
