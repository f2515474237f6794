// SPDX-License-Identifier: MIT
/*
 * Partitions in the SA: who may learn what (IBA 10.9.3; the rule OpenSM
 * applies to its records). A requester, the port a query comes from (by its
 * source LID), sees the records of a port only when the two share a
 * partition: both hold its P_Key and at least one as a full member. A port
 * always sees its own. A PathRecord exists only between ports that share a
 * partition the requester is a member of too, and carries that P_Key.
 * Requests that show the SM_Key smd trusts (sm_key, 15.2.1.1) see
 * everything: that is the operator's view (smctl sa --sm-key).
 */
#include <string.h>

#include "sa/sa_int.h"
#include "topo/part.h"

/* The port records about a node are judged by: a switch's port 0, a CA's own */
static const struct fab_port *judged(const struct fab_port *p)
{
	return p->node->type == NODE_TYPE_SWITCH ? &p->node->ports[0] : p;
}

bool sa_part_visible(const struct sa *sa, const struct fab_port *p)
{
	const struct fab_port *r = sa->requester;
	const uint16_t *a, *b;
	unsigned int na, nb;

	if (sa->req_trusted)
		return true;
	if (!r)
		return false;	/* a LID the model does not know: a port of no partition */
	p = judged(p);
	if (r == p)
		return true;
	a = fabric_port_pkeys(r, &na);
	b = fabric_port_pkeys(p, &nb);
	return part_common_key(a, na, b, nb) != 0;
}

/* The requester may use P_Key pkey: it is a member (or smd trusts it) */
static bool requester_holds(const struct sa *sa, uint16_t pkey)
{
	const uint16_t *k;
	unsigned int n;

	if (sa->req_trusted)
		return true;
	if (!sa->requester)
		return false;
	k = fabric_port_pkeys(sa->requester, &n);
	return part_find_key(k, n, pkey) != 0;
}

int sa_part_path_pkey(const struct sa *sa, const struct fab_port *src, const struct fab_port *dst,
		      bool given, uint16_t want, uint16_t *pkey)
{
	const uint16_t *ks, *kd;
	unsigned int ns, nd, i = 0, j = 0;

	ks = fabric_port_pkeys(src, &ns);
	kd = fabric_port_pkeys(dst, &nd);
	if (given) {
		uint16_t a = part_find_key(ks, ns, want), b = part_find_key(kd, nd, want);

		if (!a || !b || !((a | b) & PKEY_FULL) || !requester_holds(sa, want))
			return -1;
		*pkey = a;
		return 0;
	}
	/* The lowest P_Key both ends may talk in (as OpenSM picks it) */
	while (i < ns && j < nd) {
		uint16_t x = PKEY_BASE(ks[i]), y = PKEY_BASE(kd[j]);

		if (x < y) {
			i++;
			continue;
		}
		if (y < x) {
			j++;
			continue;
		}
		if (((ks[i] | kd[j]) & PKEY_FULL) && requester_holds(sa, ks[i])) {
			*pkey = ks[i];
			return 0;
		}
		i++;
		j++;
	}
	return -1;
}

bool sa_part_group_visible(const struct sa *sa, uint16_t pkey)
{
	return requester_holds(sa, pkey);
}

/*
 * P_KeyTableRecord (IBA 15.2.5.11): the tables as the ports hold them
 * (programmed by smd, or read: switch ports between switches), one record
 * per 32-entry block; the endports' under their LIDs, a switch's external
 * ports under the switch's LID.
 */
/*
 * The port's table is PartitionCap entries long (a switch's external port:
 * PartitionEnforcementCap; IBA 14.2.5.3, 14.2.5.4): every block of it is
 * a record, those past the keys smd keeps all zeros, as the port holds them
 */
static unsigned int pkey_table_len(const struct fab_port *p)
{
	unsigned int cap = part_table_cap(p);

	return cap > p->pkey_len ? cap : p->pkey_len;
}

static int pkey_port(struct sa *sa, uint16_t lid, const struct fab_port *p,
		     const struct sa_mad *req, struct records *r)
{
	unsigned int len;
	uint8_t rec[72];
	int e = 0;

	if (!p->pkeys_valid || !p->pkey_tab)
		return 0;
	len = pkey_table_len(p);
	for (unsigned int b = 0; b * PKEY_BLOCK_SIZE < len && !e; b++) {
		uint16_t blk[PKEY_BLOCK_SIZE] = { 0 };
		unsigned int n = b * PKEY_BLOCK_SIZE < p->pkey_len ?
				 p->pkey_len - b * PKEY_BLOCK_SIZE : 0;

		if (n)
			memcpy(blk, p->pkey_tab + b * PKEY_BLOCK_SIZE,
			       (n > PKEY_BLOCK_SIZE ? PKEY_BLOCK_SIZE : n) * sizeof(*blk));
		sa_pkey_record_encode(lid, (uint16_t)b, p->num, blk, rec);
		e = sa_rec_offer(r, req, rec);
	}
	return e;
}

static int pkey_node(struct sa *sa, const struct fab_node *n, bool one, uint16_t want,
		     const struct sa_mad *req, struct records *r)
{
	bool sw = n->type == NODE_TYPE_SWITCH;
	int e = 0;

	for (unsigned int pn = 0; pn <= n->num_ports && !e; pn++) {
		const struct fab_port *p = &n->ports[pn];
		uint16_t lid = sw ? n->ports[0].lid : p->lid;

		if (!lid || (one && lid != want) || (!sw && !fabric_is_endport(p)))
			continue;
		if (sa_part_visible(sa, p))
			e = pkey_port(sa, lid, p, req, r);
	}
	return e;
}

int sa_pkey_collect(struct sa *sa, const struct sa_mad *req, struct records *r)
{
	const struct fabric *f = sa->f;
	int e = 0;

	/* Component 0 names the LID: that node only */
	if (req->comp_mask & 1) {
		uint16_t lid = (uint16_t)sa_record_field(SA_ATTR_PKEY_RECORD, req->data, 0);
		const struct fab_port *p = fabric_port_by_lid(f, lid);

		return p ? pkey_node(sa, p->node, true, lid, req, r) : 0;
	}
	for (size_t i = 0; i < f->nnodes && !e; i++)
		e = pkey_node(sa, f->nodes[i], false, 0, req, r);
	return e;
}
