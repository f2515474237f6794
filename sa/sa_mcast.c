// SPDX-License-Identifier: MIT
/*
 * The SA's multicast records: MCMemberRecord (IBA 15.2.5.17) Get, GetTable,
 * Set (join) and Delete (leave), and MulticastForwardingTableRecord (IBA
 * 15.2.5.8) from the tables smd programs. The membership rules live in
 * topo/mc_group.c; this file turns requests into its terms and its answers
 * into records and statuses (IBA 15.2.1.1, table 184).
 */
#include <errno.h>
#include <string.h>

#include "util/log.h"
#include "sa/sa_int.h"
#include "topo/mc.h"
#include "topo/path.h"

/* The mask bits of MCMemberRecord and MC_HAS_* name the same fields in the same order */
_Static_assert(MCR_CM_PROXY_JOIN == MC_HAS_PROXY_JOIN && MCR_CM_SCOPE == MC_HAS_SCOPE &&
	       MCR_CM_MGID == MC_HAS_MGID, "MCMemberRecord mask bits");

/* The record of group g as member (guid, state) sees it; guid 0: no member */
static void group_record(const struct sa *sa, const struct mc_group *g, uint64_t guid,
			 uint8_t state, bool proxy, uint8_t rec[MCR_SIZE])
{
	struct mc_member_record r = {
		.qkey = g->p.qkey, .mlid = g->mlid,
		.mtu_selector = MC_SEL_EQ, .mtu = g->p.mtu, .tclass = g->p.tclass,
		.pkey = g->p.pkey, .rate_selector = MC_SEL_EQ, .rate = g->p.rate,
		.plt_selector = MC_SEL_EQ, .packet_life_time = g->p.plt, .sl = g->p.sl,
		.flow_label = g->p.flow_label, .hop_limit = g->p.hop_limit,
		.scope = g->p.scope, .join_state = state, .proxy_join = proxy,
	};

	memcpy(r.mgid, g->mgid, 16);
	if (guid)
		gid_encode(sa->env->subnet_prefix, guid, r.port_gid);
	mc_member_record_encode(&r, rec);
}


/*
 * One record per (group, member) to a trusted requester. Others get one
 * record per group with PortGID, JoinState and ProxyJoin 0 (IBA 15.2.5.17):
 * who belongs to which group is not theirs to learn.
 */
static int group_records(struct sa *sa, const struct mc_group *g, const struct sa_mad *req,
			 struct records *r)
{
	uint8_t rec[MCR_SIZE];
	int e = 0;

	/* A group of a partition the requester is not in is not its business */
	if (!sa_part_group_visible(sa, g->p.pkey))
		return 0;
	if (!g->nmembers || !sa_trusted(sa, req)) {
		group_record(sa, g, 0, 0, false, rec);
		return sa_rec_offer(r, req, rec);
	}
	if (req->comp_mask & MCR_CM_PORT_GID) {
		/* One member asked for: a lookup, not a walk */
		struct mc_member_record w;
		const struct mc_member *m;
		uint64_t prefix, guid;

		mc_member_record_decode(req->data, &w);
		gid_decode(w.port_gid, &prefix, &guid);
		m = mc_group_member(g, guid);

		if (!m)
			return 0;
		group_record(sa, g, m->guid, m->join_state, m->proxy, rec);
		return sa_rec_offer(r, req, rec);
	}
	for (uint32_t i = 0; i < g->nmembers && !e; i++) {
		const struct mc_member *m = &g->members[i];

		group_record(sa, g, m->guid, m->join_state, m->proxy, rec);
		e = sa_rec_offer(r, req, rec);
	}
	return e;
}

int sa_mcast_collect(struct sa *sa, const struct sa_mad *req, struct records *r)
{
	struct mc_member_record want;
	const struct mc_group *g;
	int e = 0;

	if (!sa->mc)
		return 0;
	mc_member_record_decode(req->data, &want);
	if (req->comp_mask & MCR_CM_MGID) {
		g = mc_db_find(sa->mc, want.mgid);
		return g ? group_records(sa, g, req, r) : 0;
	}
	if (req->comp_mask & MCR_CM_MLID) {
		g = mc_db_by_mlid(sa->mc, want.mlid);
		return g ? group_records(sa, g, req, r) : 0;
	}
	for (g = mc_db_next(sa->mc, 0); g && !e; g = mc_db_next(sa->mc, g->mlid))
		e = group_records(sa, g, req, r);
	return e;
}

static uint16_t mc_status(int e)
{
	switch (e) {
	case -ENODATA: return SA_STATUS_INSUFFICIENT;
	case -EACCES: return SA_STATUS_DENIED;
	case -ENOSPC:
	case -ENOMEM: return SA_STATUS_NO_RESOURCES;
	default: return SA_STATUS_REQ_INVALID;
	}
}

uint16_t sa_mcast_modify(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
			 uint8_t rec[MCR_SIZE])
{
	struct mc_member_record mr;
	struct mc_req q = { 0 };
	const struct fab_port *requester, *member;
	uint64_t prefix;
	bool join = req->hdr.method == SA_METHOD_SET;
	struct mc_group *g = NULL, copy;
	uint8_t state = 0;
	bool gone = false;
	int e;

	if (!sa->mc)
		return MAD_STATUS_METHOD_ATTR_UNSUPP;
	mc_member_record_decode(req->data, &mr);
	q.has = (uint32_t)(req->comp_mask & 0x3ffff);
	memcpy(q.mgid, mr.mgid, 16);
	gid_decode(mr.port_gid, &prefix, &q.port_guid);
	q.mlid = mr.mlid;
	q.mtu_sel = mr.mtu_selector;
	q.rate_sel = mr.rate_selector;
	q.plt_sel = mr.plt_selector;
	q.p = (struct mc_params){
		.qkey = mr.qkey, .pkey = mr.pkey, .mtu = mr.mtu, .rate = mr.rate,
		.plt = mr.packet_life_time, .sl = mr.sl, .flow_label = mr.flow_label,
		.tclass = mr.tclass, .hop_limit = mr.hop_limit, .scope = mr.scope,
	};
	q.join_state = mr.join_state;
	q.proxy = (q.has & MC_HAS_PROXY_JOIN) && mr.proxy_join;
	if (!(q.has & MC_HAS_PORT_GID))
		return SA_STATUS_INSUFFICIENT;
	/* The PortGID: this subnet's (or link-local) prefix and a port of the model */
	member = sa_port_by_guid(sa, q.port_guid);
	if (!member || (prefix != sa->env->subnet_prefix &&
			prefix != UINT64_C(0xfe80000000000000)))
		return SA_STATUS_INVALID_GID;
	/*
	 * A port joins and leaves for itself; for another port only with
	 * ProxyJoin and a trusted request (the SM_Key of the SA header):
	 * ERR_REQ_INVALID otherwise, as o15-0.2.1 has it for a record that
	 * exists, and for one that does not as well.
	 */
	requester = fabric_port_by_lid(sa->f, from->slid);
	if (requester != member && (!q.proxy || !sa_trusted(sa, req)))
		return SA_STATUS_REQ_INVALID;
	if (join) {
		struct mc_port port = {
			.guid = member->guid,
			.mtu = fabric_port_up(member) ? path_link_mtu(member) :
				member->pi.mtu_cap,
			.rate = path_link_rate(member),
		};

		/* The P_Keys smd gave the port (smd/sweep.c phase_pkeys) */
		if (member->pkey_tab)
			port.pkeys = fabric_port_pkeys(member, &port.npkeys);
		e = mc_join(sa->mc, &q, &port, &g, &state);
		if (e < 0)
			return mc_status(e);
		group_record(sa, g, member->guid, state, q.proxy, rec);
		log_debug("SA: port 0x%016llx joined MLID 0x%04x (JoinState 0x%x)",
			  (unsigned long long)member->guid, g->mlid, state);
		return 0;
	}
	e = mc_leave(sa->mc, &q, &copy, &state, &gone);
	if (e < 0)
		return mc_status(e);
	group_record(sa, &copy, member->guid, state, q.proxy, rec);
	log_debug("SA: port 0x%016llx left MLID 0x%04x (JoinState now 0x%x)%s",
		  (unsigned long long)member->guid, copy.mlid, state,
		  gone ? ": the group is gone" : "");
	return 0;
}

/*
 * MulticastForwardingTableRecord: one per (switch, block of 32 MLIDs,
 * position of 16 ports) in use, from the tables smd programs.
 */
int sa_mft_collect(struct sa *sa, const struct sa_mad *req, struct records *r)
{
	const struct fabric *f = sa->f;
	uint16_t top = sa->mc ? mc_db_max_mlid(sa->mc) : 0;
	uint32_t nblk;
	int e = 0;

	if (!sa->forest || !top)
		return 0;
	nblk = (uint32_t)(top - LID_MCAST_MIN) / MFT_BLOCK_SIZE + 1;
	for (size_t s = 0; s < f->nswitches && !e; s++) {
		const struct fab_node *n = f->switches[s];
		unsigned int npos = (n->num_ports + 1u + MFT_POSITION_PORTS - 1) /
				    MFT_POSITION_PORTS;
		uint8_t rec[72];

		if (!n->ports[0].lid || !n->si.mft_cap)
			continue;
		if ((req->comp_mask & 1) &&
		    sa_record_field(SA_ATTR_MFT_RECORD, req->data, 0) != n->ports[0].lid)
			continue;
		for (uint32_t b = 0; b < nblk && b * MFT_BLOCK_SIZE < n->si.mft_cap && !e; b++)
			for (unsigned int pos = 0; pos < npos && !e; pos++) {
				uint16_t mask[MFT_BLOCK_SIZE];

				for (unsigned int k = 0; k < MFT_BLOCK_SIZE; k++)
					mask[k] = mc_forest_want(sa->forest, (uint32_t)s,
								 (uint16_t)(LID_MCAST_MIN +
									    b * MFT_BLOCK_SIZE + k),
								 pos);
				sa_mft_record_encode(n->ports[0].lid, (uint8_t)pos, (uint16_t)b,
						     mask, rec);
				e = sa_rec_offer(r, req, rec);
			}
	}
	return e;
}
