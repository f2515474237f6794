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
#define SA_BYTES_MAX		(64u << 20)	/* answers in flight, all clients */
#define SA_BYTES_PER_PORT	(16u << 20)	/* ... for one requesting port */

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


struct sa *sa_free(struct sa *sa)
{
	if (!sa)
		return NULL;
	sa_xfers_free(sa);
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

void sa_respond_hdr(const struct sa_mad *req, struct sa_mad *resp, uint8_t method,
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
void sa_send_len(struct sa *sa, const struct sa_mad *m, size_t len, const struct mad_addr *to)
{
	uint8_t buf[MAD_SIZE];

	if (sa_mad_encode(m, buf) == 0)
		sa->env->send(sa->env->ctx, buf, len, to);
}

static void send_mad(struct sa *sa, const struct sa_mad *m, const struct mad_addr *to)
{
	sa_send_len(sa, m, MAD_SIZE, to);
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

	sa_respond_hdr(req, &resp, method, 0);
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

	sa_respond_hdr(req, &resp, method, status);
	sa->stats.errors++;
	send_mad(sa, &resp, from);
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
	sa_service_expire(sa);
	sa_report_tick(sa);
	sa_multipath_tick(sa);
	sa_xfers_tick(sa);
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

	sa_respond_hdr(req, &resp, SA_METHOD_GET_RESP, 0);
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
	sa_respond_hdr(req, &resp, req->hdr.method == SA_METHOD_DELETE ? SA_METHOD_DELETE_RESP :
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
		sa_rmpp_control(sa, &req, from);
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
	if (req.hdr.method == SA_METHOD_GET_TABLE && sa_xfer_underway(sa, &req, from))
		return;		/* its answer is on its way (sa_send_table) */
	if (req.hdr.method == SA_METHOD_GET_TABLE && sa_xfers_full(sa, &req, from)) {
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
	case SA_ATTR_NODE_RECORD: e = sa_collect_nodes(sa, &req, &recs); break;
	case SA_ATTR_PORT_INFO_RECORD: e = sa_collect_port_infos(sa, &req, &recs); break;
	case SA_ATTR_SWITCH_INFO_RECORD: e = sa_collect_switch_infos(sa, &req, &recs); break;
	case SA_ATTR_LINK_RECORD: e = sa_collect_links(sa, &req, &recs); break;
	case SA_ATTR_LFT_RECORD: e = sa_collect_lfts(sa, &req, &recs); break;
	case SA_ATTR_SM_INFO_RECORD: e = sa_collect_sm_infos(sa, &req, &recs); break;
	case SA_ATTR_PKEY_RECORD: e = sa_pkey_collect(sa, &req, &recs); break;
	case SA_ATTR_GUID_INFO_RECORD:
		if (sa_guid_query(sa, &req, from))
			return;		/* blocks not seen yet: read first */
		e = sa_guid_collect(sa, &req, &recs);
		break;
	case SA_ATTR_SERVICE_RECORD: e = sa_service_collect(sa, &req, from, &recs); break;
	case SA_ATTR_INFORM_INFO_RECORD: e = sa_inform_collect(sa, &req, from, &recs); break;
	case SA_ATTR_PATH_RECORD: e = sa_collect_paths(sa, &req, &recs, &status); break;
	case SA_ATTR_SL2VL_RECORD: e = sa_collect_sl2vls(sa, &req, &recs); break;
	case SA_ATTR_VLARB_RECORD: e = sa_collect_vlarbs(sa, &req, &recs); break;
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
		sa_respond_hdr(req, &resp, SA_METHOD_GET_RESP, 0);
		resp.attr_offset = (uint16_t)(recs->size / 8);
		memcpy(resp.data, recs->buf, sa_record_size(req->hdr.attr_id));
		free(recs->buf);
		sa->stats.answered++;
		send_mad(sa, &resp, from);
		return;
	}
	sa_send_table(sa, req, from, recs, SA_METHOD_GET_TABLE_RESP, req->hdr.attr_id);
	free(recs->buf);
}
