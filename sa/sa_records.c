// SPDX-License-Identifier: MIT
/*
 * The SA's records of the fabric: collected from the model served for a
 * request, matched on its component mask (NodeRecord, PortInfoRecord,
 * SwitchInfoRecord, LinkRecord, LinearForwardingTableRecord, SMInfoRecord,
 * SLtoVLMappingTableRecord, VLArbitrationTableRecord).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/sa_codec.h"
#include "sa/sa.h"
#include "sa/sa_int.h"
#include "topo/fabric.h"

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

int sa_collect_nodes(struct sa *sa, const struct sa_mad *req, struct records *r)
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
int sa_collect_port_infos(struct sa *sa, const struct sa_mad *req, struct records *r)
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

int sa_collect_switch_infos(struct sa *sa, const struct sa_mad *req, struct records *r)
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

int sa_collect_links(struct sa *sa, const struct sa_mad *req, struct records *r)
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

int sa_collect_lfts(struct sa *sa, const struct sa_mad *req, struct records *r)
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

int sa_collect_sm_infos(struct sa *sa, const struct sa_mad *req, struct records *r)
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

int sa_collect_sl2vls(struct sa *sa, const struct sa_mad *req, struct records *r)
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

int sa_collect_vlarbs(struct sa *sa, const struct sa_mad *req, struct records *r)
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
