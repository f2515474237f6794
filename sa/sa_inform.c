// SPDX-License-Identifier: MIT
/*
 * Event subscriptions and Reports (IBA 13.4.8.3 InformInfo, 13.4.9 Report,
 * 15.2.5.12 InformInfoRecord). A port subscribes with Set(InformInfo),
 * Subscribe 1, and unsubscribes with the same InformInfo and Subscribe 0;
 * the SA answers GetResp(InformInfo). Each matching notice then goes to the
 * subscriber as Report(Notice), addressed as the subscription came (its
 * LID, SL, P_Key index and GRH: the subscriber's partition and path), to
 * the QP InformInfo names (the QP it came from when that is 0), resent
 * until a ReportResp comes back (at most REPORT_TRIES times, RespTimeValue
 * apart but never faster than REPORT_MIN_US). Each try has a TID of its
 * own (a kernel refuses a request whose TID is still outstanding:
 * user_mad.c, is_duplicate); a ReportResp to any of them answers it.
 *
 * Notices the SA issues (Type Subnet Management, producer Class Manager):
 *  - 64 and 65: a port GID came into service or went out of it, found by
 *    comparing the endports of two models (sa_update);
 *  - 66 and 67: a multicast group was created or deleted (smd/mcast.c);
 *  - 144 and 145 from a port's SMA, forwarded as they came (smd/trap.c).
 * A subscription matches on Type, TrapNumber and ProducerType (0xffff /
 * 0xffffff: any), IsGeneric, the issuer's LID (LIDRangeBegin 0xffff: any)
 * and, when non-zero, its GID: the GID a 64-67 notice is about, the
 * issuer's otherwise. A port hears only of ports and groups it shares a
 * partition with. Subscriptions of ports that leave the fabric go at the
 * sweep that sees them gone. InformInfoRecords show a requester its own
 * subscriptions, all of them to the trusted SM_Key.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "sa/sa_int.h"

#define SUBS_MAX	4096
#define SUBS_PER_PORT	64
#define REPORTS_MAX	4096		/* Reports waiting for their ReportResp */
#define REPORT_TRIES	8
#define REPORT_MIN_US	250000
#define REPORT_MAX_US	4000000

struct sub {
	uint64_t port_guid;		/* the subscriber */
	struct mad_addr to;		/* Reports go there: the subscription's address */
	uint16_t enumeration;		/* InformInfoRecord Enum */
	struct inform_info ii;
};

struct report {
	struct report *next;
	uint64_t port_guid;
	uint16_t enumeration;		/* of the subscription it is for */
	struct mad_addr to;
	uint32_t tid;			/* of the first try; try n has tid + n */
	uint64_t deadline, interval;
	unsigned int tries;
	struct sa_mad m;
};

struct sa_inform_db {
	struct sub *v;
	size_t n, cap;
	struct report *reports;
	unsigned int nreports;
	uint32_t next_tid;
	uint16_t next_enum;
	uint16_t count;			/* NoticeCount of the notices issued */
	struct sa_inform_stats st;
	/*
	 * The endports of the model last served, by GUID, with their P_Keys
	 * (who may hear that one went): traps 64/65
	 */
	struct sa_ep {
		uint64_t guid;
		uint16_t lid;
		uint16_t npkeys;	/* the first 32 of its P_Keys (fabric_port_pkeys) */
		uint16_t pkeys[32];
	} *eps;
	size_t neps;
	bool have_eps;
};

static struct sa_inform_db *idb(struct sa *sa)
{
	if (!sa->inf)
		sa->inf = calloc(1, sizeof(*sa->inf));
	return sa->inf;
}

void sa_inform_free(struct sa *sa)
{
	struct sa_inform_db *db = sa->inf;

	if (!db)
		return;
	while (db->reports) {
		struct report *r = db->reports;

		db->reports = r->next;
		free(r);
	}
	free(db->v);
	free(db->eps);
	free(db);
	sa->inf = NULL;
}

size_t sa_inform_count(const struct sa *sa)
{
	return sa->inf ? sa->inf->n : 0;
}

const struct sa_inform_stats *sa_inform_stats(const struct sa *sa)
{
	static const struct sa_inform_stats none;

	return sa->inf ? &sa->inf->st : &none;
}

/* The same subscription: every field that says what is asked for, and by whom */
static bool same_sub(const struct sub *s, uint64_t guid, const struct inform_info *ii)
{
	return s->port_guid == guid && !memcmp(s->ii.gid, ii->gid, 16) &&
	       s->ii.lid_begin == ii->lid_begin && s->ii.lid_end == ii->lid_end &&
	       s->ii.generic == ii->generic && s->ii.type == ii->type &&
	       s->ii.trap_num == ii->trap_num && s->ii.producer == ii->producer &&
	       s->ii.qpn == ii->qpn;
}

/* The Reports still waiting for port guid's ReportResp (sub: for that subscription only) */
static void drop_reports_of(struct sa_inform_db *db, uint64_t guid, const struct sub *sub)
{
	for (struct report **pp = &db->reports; *pp;) {
		struct report *r = *pp;

		if (r->port_guid != guid || (sub && r->enumeration != sub->enumeration)) {
			pp = &r->next;
			continue;
		}
		*pp = r->next;
		db->nreports--;
		free(r);
	}
}

uint16_t sa_inform_set(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		       uint8_t out[INFORM_SIZE])
{
	const struct fab_port *who = fabric_port_by_lid(sa->f, from->slid);
	struct sa_inform_db *db = idb(sa);
	struct inform_info ii;
	size_t mine = 0;

	if (!db)
		return SA_STATUS_NO_RESOURCES;
	if (!who)
		return SA_STATUS_REQ_INVALID;
	inform_info_decode(req->data, &ii);
	if (ii.subscribe > 1 || ii.resp_time > 31)
		return SA_STATUS_REQ_INVALID;
	/* LIDRangeBegin 0xffff is every LID; otherwise a range of unicast LIDs */
	if (ii.lid_begin != 0xffff &&
	    (ii.lid_begin > ii.lid_end || ii.lid_end > LID_UCAST_MAX))
		return SA_STATUS_REQ_INVALID;
	for (size_t i = 0; i < db->n; i++) {
		if (!same_sub(&db->v[i], who->guid, &ii)) {
			mine += db->v[i].port_guid == who->guid;
			continue;
		}
		if (!ii.subscribe) {
			/* Unsubscribe: this one goes, and its Reports with it */
			drop_reports_of(db, who->guid, &db->v[i]);
			db->v[i] = db->v[--db->n];
			db->st.unsubscribed++;
			inform_info_encode(&ii, out);
			log_debug("SA: port 0x%016llx unsubscribed from trap %u",
				  (unsigned long long)who->guid, ii.trap_num);
			return 0;
		}
		/* Subscribed again: where Reports go may have moved */
		db->v[i].to = *from;
		db->v[i].to.qpn = ii.qpn ? ii.qpn : from->qpn;
		inform_info_encode(&ii, out);
		return 0;
	}
	if (!ii.subscribe)
		return SA_STATUS_REQ_INVALID;	/* nothing to unsubscribe from */
	if (db->n >= SUBS_MAX || mine >= SUBS_PER_PORT)
		return SA_STATUS_NO_RESOURCES;
	if (db->n == db->cap) {
		size_t ncap = db->cap ? 2 * db->cap : 16;
		struct sub *nv = realloc(db->v, ncap * sizeof(*nv));

		if (!nv)
			return SA_STATUS_NO_RESOURCES;
		db->v = nv;
		db->cap = ncap;
	}
	db->v[db->n] = (struct sub){
		.port_guid = who->guid, .to = *from, .enumeration = db->next_enum++, .ii = ii,
	};
	db->v[db->n].to.qpn = ii.qpn ? ii.qpn : from->qpn;
	db->n++;
	db->st.subscribed++;
	log_debug("SA: port 0x%016llx (LID %u QP %u) subscribed to trap %u type %u",
		  (unsigned long long)who->guid, from->slid, db->v[db->n - 1].to.qpn, ii.trap_num,
		  ii.type);
	inform_info_encode(&ii, out);
	return 0;
}

int sa_inform_collect(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		      struct records *r)
{
	const struct sa_inform_db *db = sa->inf;
	const struct fab_port *who = fabric_port_by_lid(sa->f, from->slid);
	bool trusted = sa_trusted(sa, req);
	int e = 0;

	for (size_t i = 0; db && i < db->n && !e; i++) {
		const struct sub *s = &db->v[i];
		uint8_t gid[16], rec[IIR_SIZE];

		if (!trusted && (!who || who->guid != s->port_guid))
			continue;
		gid_encode(sa->env->subnet_prefix, s->port_guid, gid);
		inform_info_record_encode(gid, s->enumeration, &s->ii, rec);
		e = sa_rec_offer(r, req, rec);
	}
	return e;
}

/* ---- Reports ---- */

static uint64_t interval_of(const struct sub *s)
{
	/* RespTimeValue: 4.096 us * 2^v (IBA 13.4.6.2), twice for the round trip */
	uint64_t us = s->ii.resp_time >= 20 ? REPORT_MAX_US :
		      (UINT64_C(8192) << s->ii.resp_time) / 1000;

	return us < REPORT_MIN_US ? REPORT_MIN_US : us > REPORT_MAX_US ? REPORT_MAX_US : us;
}

/* Try r->tries (from 0), with its own TID */
static void report_send(struct sa *sa, struct report *r)
{
	uint8_t buf[MAD_SIZE];

	r->m.hdr.tid = (uint32_t)(r->tid + r->tries);
	r->tries++;
	r->deadline = sa_clock(sa) + r->interval;
	sa->inf->st.reports_sent++;
	if (sa_mad_encode(&r->m, buf) < 0)
		return;
	if (sa->env->send_req)
		sa->env->send_req(sa->env->ctx, buf, &r->to, (int)(r->interval / 1000));
	else
		sa->env->send(sa->env->ctx, buf, MAD_SIZE, &r->to);
}

static void report_to(struct sa *sa, const struct sub *s, const uint8_t notice[NOTICE_SIZE],
		      uint16_t trap)
{
	struct sa_inform_db *db = sa->inf;
	struct report *r;

	if (db->nreports >= REPORTS_MAX) {
		db->st.reports_dropped++;
		return;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		db->st.reports_dropped++;
		return;
	}
	/* A TID for every try: REPORT_TRIES of them, in a row */
	r->tid = db->next_tid + 1;
	db->next_tid += REPORT_TRIES;
	sa_mad_init(&r->m, SA_METHOD_REPORT, SA_ATTR_NOTICE, 0, r->tid);
	r->m.attr_offset = NOTICE_SIZE / 8;
	memcpy(r->m.data, notice, NOTICE_SIZE);
	r->port_guid = s->port_guid;
	r->enumeration = s->enumeration;
	r->to = s->to;
	r->interval = interval_of(s);
	r->next = db->reports;
	db->reports = r;
	db->nreports++;
	log_debug("SA: Report of trap %u to LID %u QP %u (port 0x%016llx), TID 0x%08x",
		  trap, r->to.slid, r->to.qpn,
		  (unsigned long long)r->port_guid, r->tid);
	report_send(sa, r);
}

/* Does subscription s ask for notice n (about the port or group gid, or NULL)? */
static bool wants(const struct sub *s, const struct notice *n, const uint8_t *about)
{
	static const uint8_t zero[16];
	const struct inform_info *ii = &s->ii;

	if (ii->generic != n->generic)
		return false;
	if (ii->type != 0xffff && ii->type != n->type)
		return false;
	if (ii->trap_num != 0xffff && ii->trap_num != n->trap_num)
		return false;
	if (ii->producer != 0xffffff && ii->producer != n->producer)
		return false;
	if (ii->lid_begin != 0xffff &&
	    (n->issuer_lid < ii->lid_begin || n->issuer_lid > ii->lid_end))
		return false;
	if (memcmp(ii->gid, zero, 16) && memcmp(ii->gid, about ? about : n->issuer_gid, 16))
		return false;
	return true;
}

/*
 * Send notice n to every subscriber that wants it and may hear of it: one
 * that shares a partition with the port the notice is about (its P_Keys in
 * subject, NULL: it has none known, the default one), or with the group
 * whose partition is pkey (subject and pkey 0: about nobody's)
 */
struct about_port {
	const uint16_t *pkeys;
	size_t n;
};

static void notify(struct sa *sa, const struct notice *n, const uint8_t *about,
		   const struct about_port *subject, uint16_t pkey)
{
	struct sa_inform_db *db = sa->inf;
	uint8_t buf[NOTICE_SIZE];

	if (!db || !db->n)
		return;
	sa_notice_encode(n, buf);
	for (size_t i = 0; i < db->n; i++) {
		const struct sub *s = &db->v[i];
		const struct fab_port *p = sa_port_by_guid(sa, s->port_guid);

		if (!p || !wants(s, n, about))
			continue;
		if (subject) {
			bool shared = false;

			for (size_t k = 0; k < subject->n && !shared; k++)
				shared = sa_pkey_shared(p, subject->pkeys[k]);
			if (!shared)
				continue;
		} else if (pkey && !sa_pkey_shared(p, pkey)) {
			continue;
		}
		report_to(sa, s, buf, n->trap_num);
	}
}

static void sm_notice(const struct sa *sa, struct sa_inform_db *db, uint16_t trap,
		      const uint8_t gid[16], struct notice *n)
{
	memset(n, 0, sizeof(*n));
	n->generic = 1;
	n->type = NOTICE_TYPE_SM;
	n->producer = NOTICE_PRODUCER_CLASS_MGR;
	n->trap_num = trap;
	n->issuer_lid = sa->env->sm_lid;
	n->count = (uint16_t)(++db->count & 0x7fff);
	/* IBA 14.2.5.1 (traps 64-67): 6 reserved bytes, then the GID */
	memcpy(n->details + 6, gid, 16);
	gid_encode(sa->env->subnet_prefix, sa->env->sm_guid, n->issuer_gid);
}

void sa_report_mcast(struct sa *sa, const uint8_t mgid[16], uint16_t pkey, bool created)
{
	struct sa_inform_db *db = sa->inf;
	struct notice n;

	if (!db || !db->n || !sa->f)
		return;
	sm_notice(sa, db, created ? 66 : 67, mgid, &n);
	notify(sa, &n, mgid, NULL, pkey);
}

void sa_report_forward(struct sa *sa, const uint8_t *smp_notice, size_t len, uint16_t slid)
{
	struct sa_inform_db *db = sa->inf;
	const struct fab_port *src = sa->f ? fabric_port_by_lid(sa->f, slid) : NULL;
	uint8_t buf[NOTICE_SIZE] = { 0 };
	struct notice n;

	if (!db || !db->n || !src || len > NOTICE_SIZE)
		return;
	/* An SMP carries the Notice's first 64 bytes: the IssuerGID is the sender's */
	memcpy(buf, smp_notice, len);
	sa_notice_decode(buf, &n);
	if (!n.generic || (n.trap_num != 144 && n.trap_num != 145))
		return;
	n.issuer_lid = slid;
	gid_encode(sa->env->subnet_prefix, src->guid, n.issuer_gid);
	db->st.forwarded++;
	{
		unsigned int nk;
		const uint16_t *k = fabric_port_pkeys(src, &nk);
		struct about_port ab = { k, nk };

		notify(sa, &n, NULL, &ab, 0);
	}
}

size_t sa_report_port_trap(struct sa *sa, uint16_t trap, uint64_t node_guid, uint8_t port)
{
	struct sa_inform_db *db = sa->inf;
	const struct fab_node *nd = sa->f ? fabric_find(sa->f, node_guid) : NULL;
	const struct fab_port *p, *ep;
	struct about_port ab;
	struct notice n;
	unsigned int nk;
	uint64_t before;

	if (!db || !db->n || !nd || !port || port > nd->num_ports)
		return 0;
	p = &nd->ports[port];
	/* The endport that speaks for the port: a switch's port 0 */
	ep = nd->type == NODE_TYPE_SWITCH ? &nd->ports[0] : p;
	if (!ep->lid)
		return 0;
	memset(&n, 0, sizeof(n));
	n.generic = 1;
	n.type = NOTICE_TYPE_URGENT;
	n.producer = nd->type;		/* IBA 13.4.8.2: the node type of the issuer */
	n.trap_num = trap;
	n.issuer_lid = ep->lid;
	n.count = (uint16_t)(++db->count & 0x7fff);
	notice_details_port(n.details, ep->lid, port);
	gid_encode(sa->env->subnet_prefix, ep->guid, n.issuer_gid);
	ab.pkeys = fabric_port_pkeys(ep, &nk);
	ab.n = nk;
	before = db->st.reports_sent;
	notify(sa, &n, NULL, &ab, 0);
	db->st.port_traps++;
	return (size_t)(db->st.reports_sent - before);
}

/* A ReportResp for one of ours (from, the TID of any of its tries): it is done */
void sa_report_resp(struct sa *sa, const struct sa_mad *m, const struct mad_addr *from)
{
	struct sa_inform_db *db = sa->inf;

	for (struct report **pp = db ? &db->reports : NULL; pp && *pp; pp = &(*pp)->next) {
		struct report *r = *pp;

		if (r->to.slid != from->slid || (uint32_t)m->hdr.tid - r->tid >= r->tries)
			continue;
		*pp = r->next;
		db->nreports--;
		db->st.reports_answered++;
		free(r);
		return;
	}
}

uint64_t sa_report_next(const struct sa *sa)
{
	uint64_t next = 0;

	for (const struct report *r = sa->inf ? sa->inf->reports : NULL; r; r = r->next)
		if (!next || r->deadline < next)
			next = r->deadline;
	return next;
}

void sa_report_tick(struct sa *sa)
{
	struct sa_inform_db *db = sa->inf;
	uint64_t now;

	if (!db || !db->reports)
		return;
	now = sa_clock(sa);
	for (struct report **pp = &db->reports; *pp;) {
		struct report *r = *pp;

		if (r->deadline > now) {
			pp = &r->next;
			continue;
		}
		if (r->tries < REPORT_TRIES) {
			report_send(sa, r);
			pp = &r->next;
			continue;
		}
		log_debug("SA: no ReportResp from LID %u after %u tries: Report given up",
			  r->to.slid, r->tries);
		*pp = r->next;
		db->nreports--;
		db->st.reports_dropped++;
		free(r);
	}
}

/* ---- a new model: traps 64 and 65, subscribers that left ---- */

static int cmp_ep(const void *a, const void *b)
{
	uint64_t x = ((const struct sa_ep *)a)->guid, y = ((const struct sa_ep *)b)->guid;

	return x < y ? -1 : x > y;
}

void sa_inform_update(struct sa *sa, const struct fabric *f)
{
	struct sa_inform_db *db = idb(sa);
	struct sa_ep *eps;
	size_t n = 0, cap = 0, i, j, kept = 0;

	if (!db || !f)
		return;
	for (size_t k = 0; k < f->nnodes; k++)
		cap += (size_t)f->nodes[k]->num_ports + 1;
	eps = malloc((cap ? cap : 1) * sizeof(*eps));
	if (!eps) {
		log_error("SA: out of memory comparing models: no Reports of ports in and out "
			  "of service for this sweep");
		return;
	}
	for (size_t k = 0; k < f->nnodes; k++) {
		const struct fab_node *nd = f->nodes[k];

		for (unsigned int pn = 0; pn <= nd->num_ports; pn++) {
			const struct fab_port *p = &nd->ports[pn];

			if (!fabric_is_endport(p) || !p->lid)
				continue;
			unsigned int nk;
			const uint16_t *keys = fabric_port_pkeys(p, &nk);

			if (nk > 32)
				nk = 32;
			eps[n] = (struct sa_ep){ .guid = p->guid, .lid = p->lid,
						 .npkeys = (uint16_t)nk };
			memcpy(eps[n].pkeys, keys, nk * sizeof(keys[0]));
			n++;
		}
	}
	qsort(eps, n, sizeof(*eps), cmp_ep);
	/* Subscribers that left: their subscriptions and Reports go */
	for (size_t k = 0; k < db->n; k++) {
		struct sa_ep key = { .guid = db->v[k].port_guid };

		if (bsearch(&key, eps, n, sizeof(*eps), cmp_ep)) {
			db->v[kept++] = db->v[k];
			continue;
		}
		log_info("SA: port 0x%016llx left the fabric: its subscription to trap %u is "
			 "dropped", (unsigned long long)db->v[k].port_guid, db->v[k].ii.trap_num);
		db->st.dropped_subs++;
		drop_reports_of(db, db->v[k].port_guid, NULL);
	}
	db->n = kept;
	/* Ports gone (65) and come (64): a merge of the two sorted lists */
	for (i = 0, j = 0; db->have_eps && (i < db->neps || j < n);) {
		const struct sa_ep *ep;
		struct about_port ab;
		struct notice no;
		uint8_t gid[16];
		bool out = j == n || (i < db->neps && db->eps[i].guid < eps[j].guid);

		if (!out && i < db->neps && eps[j].guid == db->eps[i].guid) {
			i++;
			j++;
			continue;
		}
		/* Heard of where the port was (65) or is (64) a member */
		ep = out ? &db->eps[i++] : &eps[j++];
		ab.pkeys = ep->pkeys;
		ab.n = ep->npkeys;
		gid_encode(sa->env->subnet_prefix, ep->guid, gid);
		log_debug("SA: port 0x%016llx %s service (trap %u)", (unsigned long long)ep->guid,
			  out ? "out of" : "in", out ? 65 : 64);
		sm_notice(sa, db, out ? 65 : 64, gid, &no);
		notify(sa, &no, gid, &ab, 0);
		if (out)
			db->st.out_of_service++;
		else
			db->st.in_service++;
	}
	free(db->eps);
	db->eps = eps;
	db->neps = n;
	db->have_eps = true;
}
