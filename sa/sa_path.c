// SPDX-License-Identifier: MIT
/*
 * PathRecord (IBA 15.2.5.16): the paths between the endports a request
 * names, their MTU, rate and packet lifetime by its selectors, the SL the
 * routes give, the P_Key the partitions allow.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_codec.h"
#include "sa/sa.h"
#include "sa/sa_int.h"
#include "topo/path.h"
#include "topo/route.h"

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

int sa_collect_paths(struct sa *sa, const struct sa_mad *req, struct records *r, int *status)
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
