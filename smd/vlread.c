// SPDX-License-Identifier: MIT
/*
 * The tables ports hold that the model does not know (issue 23). A sweep
 * puts into its model what smd wrote to a port (and the port confirmed) or
 * read to compare, and what a node that was not reset held at the end of
 * the last sweep (sweep.c, tbl_copy_old). What is left, the tables of a
 * new or reset node that smd does not program (one-VL routes, no QoS: the
 * usual case), is read here, after the sweep: its model is served, the
 * subnet is up, and a switch's SL-to-VL tables take one SMP per (input,
 * output) port pair (IBA 14.2.5.8: a Get names one pair), 81,920 on the
 * k=16 fat-tree's first sweep, which would double its time. Meanwhile the
 * SA answers a query about a table not read yet with BUSY (IBA 13.4.7:
 * ask again), never with an SMP of its own. At most VLREAD_WINDOW reads
 * are in flight: light sweeps, polls and the SA's GUIDInfo SMPs get the
 * rest of the transaction window.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/txn.h"
#include "mad/wire.h"
#include "smd/mkey.h"
#include "smd/vlread.h"
#include "topo/fabric.h"
#include "topo/part.h"
#include "util/log.h"

#define VLREAD_WINDOW	64

enum vr_kind { VR_SL2VL, VR_VLARB, VR_PKEY };

/* A P_Key table read block by block: stored when every block answered */
struct vr_pkeys {
	uint64_t gen;
	struct fab_port *port;
	unsigned int cap, pending;
	bool failed;
	uint16_t tab[];
};

struct vlread {
	uint64_t gen;		/* bumped when the model changes: older answers are dropped */
	bool busy;		/* reading into smd->fabric */
	bool stopping;		/* shutdown: submit nothing more */
	size_t node;		/* where the next table is looked for: node, */
	unsigned int kind, step;	/* ... kind of table, and which */
	unsigned int pending;	/* reads of this generation in flight */
	uint64_t t0;
	unsigned int sl2vl, vlarb, pkeys, failed;
};

struct vr_ctx {
	struct smd *smd;
	uint64_t gen;
	struct fab_node *node;
	enum vr_kind kind;
	unsigned int in, out;		/* SL-to-VL; VL arbitration and P_Key: out is the port */
	unsigned int block;
	struct vr_pkeys *pk;
};

/* The route SMPs about port p's tables take: a switch's for its ports */
static const struct dr_path *route_of(const struct fab_port *p)
{
	return p->node->type == NODE_TYPE_SWITCH ? &p->node->path : fabric_port_route(p);
}

static void vr_pump(struct smd *smd);

static void vr_pkeys_done(struct smd *smd, struct vr_pkeys *pk)
{
	if (!pk->failed && pk->gen == smd->vlread->gen &&
	    fabric_port_set_pkeys(pk->port, pk->tab, pk->cap) == 0)
		pk->port->pkeys_valid = true;
	free(pk);
}

static void vr_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct vr_ctx *c = arg;
	struct smd *smd = c->smd;
	struct vlread *vr = smd->vlread;
	bool current = c->gen == vr->gen;

	(void)req;
	if (current)
		vr->pending--;
	if (!current) {
		/* The model it was for is gone: nothing to record */
	} else if (status < 0) {
		vr->failed++;
		if (c->pk)
			c->pk->failed = true;
	} else if (c->kind == VR_SL2VL) {
		uint8_t vl[16];

		sl2vl_table_decode(resp->data, vl);
		fabric_sl2vl_set(c->node, c->in, c->out, sl2vl_pack(vl));
	} else if (c->kind == VR_VLARB) {
		struct vl_arb_entry e[VL_ARB_BLOCK_SIZE];

		vl_arb_block_decode(resp->data, e);
		fabric_vlarb_set(smd->fabric, &c->node->ports[c->out], c->block, e);
	} else {
		uint16_t blk[PKEY_BLOCK_SIZE];
		unsigned int k = c->pk->cap - c->block * PKEY_BLOCK_SIZE;

		pkey_block_decode(resp->data, blk);
		memcpy(c->pk->tab + c->block * PKEY_BLOCK_SIZE, blk,
		       (k > PKEY_BLOCK_SIZE ? PKEY_BLOCK_SIZE : k) * sizeof(*blk));
	}
	if (c->pk && --c->pk->pending == 0)
		vr_pkeys_done(smd, c->pk);
	free(c);
	if (status == -ECANCELED)
		vr->stopping = true;	/* shutdown: txn_cancel_all */
	if (current)
		vr_pump(smd);
}

static int vr_submit(struct smd *smd, struct fab_node *n, uint16_t attr, uint32_t amod,
		     const struct dr_path *path, const struct vr_ctx *what)
{
	struct vlread *vr = smd->vlread;
	struct vr_ctx *c;
	struct smp req;
	int r;

	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	*c = *what;
	c->smd = smd;
	c->gen = vr->gen;
	c->node = n;
	smp_init_dr(&req, MAD_METHOD_GET, attr, amod, path);
	r = txn_submit(smd->txn, &req, 0, vr_cb, c);
	if (r < 0) {
		free(c);
		return r;
	}
	vr->pending++;
	if (c->pk)
		c->pk->pending++;
	return 0;
}

/* Read port p's P_Key table, every block of it */
static int vr_pkeys(struct smd *smd, struct fab_port *p)
{
	unsigned int cap = part_table_cap(p);
	struct vr_pkeys *pk = calloc(1, sizeof(*pk) + cap * sizeof(*pk->tab));
	int r = 0;

	if (!pk)
		return -ENOMEM;
	pk->gen = smd->vlread->gen;
	pk->port = p;
	pk->cap = cap;
	pk->pending = 1;
	for (uint32_t b = 0; !r && b * PKEY_BLOCK_SIZE < cap; b++) {
		/* IBA 14.2.5.7: the block in bits 0-15; a switch names the port in 16-31 */
		uint32_t amod = p->node->type == NODE_TYPE_SWITCH ? (uint32_t)p->num << 16 | b : b;

		r = vr_submit(smd, p->node, SMP_ATTR_PKEY_TABLE, amod, route_of(p),
			      &(struct vr_ctx){ .kind = VR_PKEY, .out = p->num, .block = b,
						.pk = pk });
		smd->vlread->pkeys += !r;
	}
	if (r)
		pk->failed = true;
	if (--pk->pending == 0)
		vr_pkeys_done(smd, pk);
	return r;
}

/* A submit's -errno, or 1: one more read out */
static int one(int r)
{
	return r < 0 ? r : 1;
}

/*
 * The next table of node n, from (kind, step) on, that matters and is not
 * known: submitted, and (kind, step) moved past it. 1: one submitted, 0:
 * none left in n, -errno.
 */
static int vr_next_in_node(struct smd *smd, struct fab_node *n)
{
	struct vlread *vr = smd->vlread;
	bool is_sw = n->type == NODE_TYPE_SWITCH;
	unsigned int w = n->num_ports + 1u;
	uint64_t vl;

	for (; vr->kind <= VR_PKEY; vr->kind++, vr->step = 0) {
		unsigned int total = vr->kind == VR_SL2VL ? (is_sw ? w * w : w) :
				     vr->kind == VR_VLARB ? 4 * w : w;

		while (vr->step < total) {
			unsigned int k = vr->step++;

			if (vr->kind == VR_SL2VL) {
				unsigned int in = is_sw ? k / w : 0, out = is_sw ? k % w : k;
				const struct fab_port *via = &n->ports[is_sw ? 0 : out];

				if (!fabric_sl2vl_pair(n, in, out) ||
				    fabric_sl2vl_get(n, in, out, &vl) != -ENOENT ||
				    mkey_locked(smd, via))
					continue;
				/* IBA 14.2.5.8: a switch names the pair, a CA answers for its port */
				vr->sl2vl++;
				return one(vr_submit(smd, n, SMP_ATTR_SL2VL_TABLE,
						     is_sw ? sl2vl_amod(in, out, false, false) : 0,
						     fabric_port_route(via),
						     &(struct vr_ctx){ .kind = VR_SL2VL, .in = in,
								       .out = out }));
			}
			if (vr->kind == VR_VLARB) {
				struct fab_port *p = &n->ports[k / 4];
				unsigned int b = 1 + k % 4;

				if (!fabric_vlarb_port(p) || !fabric_vlarb_has_block(p, b) ||
				    fabric_vlarb_get(p, b) ||
				    mkey_locked(smd, is_sw ? &n->ports[0] : p))
					continue;
				/* IBA 14.2.5.9: the block in bits 16-31, a switch's port in 0-7 */
				vr->vlarb++;
				return one(vr_submit(smd, n, SMP_ATTR_VL_ARB_TABLE,
						     b << 16 | (is_sw ? p->num : 0u), route_of(p),
						     &(struct vr_ctx){ .kind = VR_VLARB, .out = p->num,
								       .block = b }));
			}
			{
				struct fab_port *p = &n->ports[k];

				/* A P_Key table nobody wrote or confirmed: a switch port
				 * between switches (the pkeys phase keeps those facing CAs),
				 * or one whose programming failed */
				if (p->pkeys_valid || !part_table_cap(p) || !route_of(p) ||
				    (k && !fabric_vlarb_port(p)) || (!k && !is_sw) ||
				    mkey_locked(smd, is_sw ? &n->ports[0] : p))
					continue;
				return one(vr_pkeys(smd, p));
			}
		}
	}
	return 0;
}

static void vr_done(struct smd *smd)
{
	struct vlread *vr = smd->vlread;

	vr->busy = false;
	if (!vr->sl2vl && !vr->vlarb && !vr->pkeys)
		return;
	log_info("tables the ports hold: read %u SL-to-VL tables, %u VL arbitration blocks, %u "
		 "P_Key blocks in %.3f s%s", vr->sl2vl, vr->vlarb, vr->pkeys,
		 (double)(txn_now_us() - vr->t0) / 1e6,
		 vr->failed ? "; SOME DID NOT ANSWER (the SA has no record of them)" : "");
	if (vr->failed)
		log_warn("%u table reads got no answer: the SA has no record of those tables",
			 vr->failed);
}

/* Keep VLREAD_WINDOW reads in flight while tables are left to read */
static void vr_pump(struct smd *smd)
{
	struct vlread *vr = smd->vlread;
	struct fabric *f = smd->fabric;

	while (vr->busy && !vr->stopping && f && vr->pending < VLREAD_WINDOW &&
	       vr->node < f->nnodes) {
		struct fab_node *n = f->nodes[vr->node];
		int r = 0;

		/* A switch that did not answer SwitchInfo is left alone */
		if (n->type != NODE_TYPE_SWITCH || (n->si_valid && n->ports[0].pi_valid))
			r = vr_next_in_node(smd, n);
		if (r < 0) {
			log_warn_errno(r, "reading the tables of the ports stopped");
			vr->stopping = true;
			break;
		}
		if (r == 0) {
			vr->node++;
			vr->kind = VR_SL2VL;
			vr->step = 0;
		}
	}
	if (vr->busy && vr->pending == 0 && (vr->stopping || !f || vr->node >= f->nnodes))
		vr_done(smd);
}

int vlread_start(struct smd *smd)
{
	struct vlread *vr = smd->vlread;

	if (!vr) {
		vr = smd->vlread = calloc(1, sizeof(*vr));
		if (!vr)
			return -ENOMEM;
	}
	vr->gen++;
	vr->busy = true;
	vr->stopping = false;
	vr->node = 0;
	vr->kind = VR_SL2VL;
	vr->step = 0;
	vr->pending = 0;
	vr->sl2vl = vr->vlarb = vr->pkeys = vr->failed = 0;
	vr->t0 = txn_now_us();
	vr_pump(smd);
	return 0;
}

void vlread_stop(struct smd *smd)
{
	if (!smd->vlread)
		return;
	smd->vlread->gen++;
	smd->vlread->busy = false;
	smd->vlread->pending = 0;
}

bool vlread_busy(const struct smd *smd)
{
	return smd->vlread && smd->vlread->busy;
}

void vlread_free(struct smd *smd)
{
	free(smd->vlread);
	smd->vlread = NULL;
}
