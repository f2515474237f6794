// SPDX-License-Identifier: MIT
/*
 * The ports' settings: M_Keys first, P_Key tables (IBA 10.9, 14.2.5.7),
 * PortInfo (LIDs, MTU, VLs, timeouts), and every link brought to ACTIVE.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smd/sweep_int.h"

/* ---- partitions: P_Key tables (IBA 10.9, 14.2.5.7) ---- */

/*
 * One port's table: every endport (CA and router ports, switch port 0)
 * gets its partitions' P_Keys, the default partition (or the indx0 one)
 * at index 0; a switch port cabled to a CA or router port gets the same
 * keys, for partition enforcement (IBA 10.9.2). The table is read (unless
 * this smd wrote it before and the port was not reset since), laid out so
 * that no key the port holds moves, and only the 32-entry blocks that
 * differ are written.
 */
struct pk_ctx {
	struct sweep *sw;
	struct fab_port *port;
	unsigned int cap;		/* entries managed */
	unsigned int want_n, fits;	/* keys wanted; how many found room */
	unsigned int pending;		/* reads, then writes, in flight */
	bool idx0;			/* want[0] goes to index 0 (endports) */
	bool unread;			/* some block could not be read */
	bool failed;			/* some block was not written */
	uint16_t *have;			/* [cap] what the port holds (NULL: unknown) */
	uint16_t *tab;			/* [cap] what it should hold */
	uint16_t keys[];		/* want_n wanted keys */
};

struct pk_blk {
	struct pk_ctx *pc;
	uint32_t block;
};

static void pk_done(struct pk_ctx *pc)
{
	struct sweep *sw = pc->sw;
	struct fab_port *p = pc->port;
	char lbl[160];

	if (fabric_port_set_pkeys(p, pc->tab, pc->cap) < 0)
		sw->err = -ENOMEM;
	p->pkeys_valid = !pc->failed;
	if (pc->failed)
		sw->res->pkey_errors++;
	/* Enforcement only where the whole table is there (IBA 10.9.2) */
	p->pkey_enforce = p->node->type == NODE_TYPE_SWITCH && p->num && !pc->failed &&
			  pc->fits == pc->want_n;
	if (pc->fits < pc->want_n)
		log_warn("%s: %u partitions but room for %u P_Keys: %u left out%s",
			 sweep_port_label(p, lbl, sizeof(lbl)), pc->want_n, pc->fits,
			 pc->want_n - pc->fits, p->node->type == NODE_TYPE_SWITCH ?
			 ", no partition enforcement there" : "");
	free(pc->have);
	free(pc->tab);
	free(pc);
}

/*
 * Before any Set: ports holding a key smd knows but does not want get one
 * Set each with smd's (smd/mkey.c); the driver waits for their answers
 */
int sweep_mkey_enter(struct sweep *sw)
{
	return mkey_takeover(sw->smd, sw->f);
}

static void pk_set_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct pk_blk *b = arg;
	struct pk_ctx *pc = b->pc;
	char lbl[160];

	/* The answer carries the table as the port now holds it */
	if (status < 0 || memcmp(resp->data, req->data, SMP_DATA_SIZE)) {
		log_warn("P_Key block %u of %s was not programmed: %s", b->block,
			 sweep_port_label(pc->port, lbl, sizeof(lbl)),
			 status < 0 ? strerror(-status) : "the port holds other entries");
		pc->failed = true;
	}
	free(b);
	if (--pc->pending == 0)
		pk_done(pc);
}

static uint32_t pk_amod(const struct fab_port *p, uint32_t block)
{
	/* IBA 14.2.5.7: the block in bits 0-15; a switch names the port in bits 16-31 */
	return p->node->type == NODE_TYPE_SWITCH ? (uint32_t)p->num << 16 | block : block;
}

static const struct dr_path *pk_route(const struct fab_port *p)
{
	return p->node->type == NODE_TYPE_SWITCH ? &p->node->path : fabric_port_route(p);
}

/* Lay the table out and write the blocks that differ from what the port holds */
static void pk_write(struct pk_ctx *pc)
{
	struct sweep *sw = pc->sw;
	uint32_t nblocks = (pc->cap + PKEY_BLOCK_SIZE - 1) / PKEY_BLOCK_SIZE;

	pc->fits = part_table_layout(pc->keys, pc->want_n, pc->idx0, pc->unread ? NULL : pc->have,
				     pc->cap, pc->tab, pc->cap);
	pc->pending = 1;
	for (uint32_t b = 0; b < nblocks && !sw->err; b++) {
		uint16_t blk[PKEY_BLOCK_SIZE] = { 0 };
		unsigned int n = pc->cap - b * PKEY_BLOCK_SIZE;
		struct pk_blk *pb;
		struct smp req;

		if (n > PKEY_BLOCK_SIZE)
			n = PKEY_BLOCK_SIZE;
		if (!pc->unread && !memcmp(pc->have + b * PKEY_BLOCK_SIZE,
					   pc->tab + b * PKEY_BLOCK_SIZE, n * sizeof(*blk))) {
			sw->res->pkey_blocks_kept++;
			continue;
		}
		pb = malloc(sizeof(*pb));
		if (!pb) {
			sw->err = -ENOMEM;
			break;
		}
		pb->pc = pc;
		pb->block = b;
		memcpy(blk, pc->tab + b * PKEY_BLOCK_SIZE, n * sizeof(*blk));
		smp_init_dr(&req, MAD_METHOD_SET, SMP_ATTR_PKEY_TABLE, pk_amod(pc->port, b),
			    pk_route(pc->port));
		pkey_block_encode(blk, req.data);
		pc->pending++;
		sw->res->pkey_blocks_sent++;
		if (sweep_submit(sw, &req, pk_set_cb, pb) < 0)
			pc->pending--;
	}
	if (--pc->pending == 0)
		pk_done(pc);
}

static void pk_get_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct pk_blk *b = arg;
	struct pk_ctx *pc = b->pc;

	if (status == 0) {
		uint16_t blk[PKEY_BLOCK_SIZE];
		unsigned int n = pc->cap - b->block * PKEY_BLOCK_SIZE;

		pkey_block_decode(resp->data, blk);
		memcpy(pc->have + b->block * PKEY_BLOCK_SIZE, blk,
		       (n > PKEY_BLOCK_SIZE ? PKEY_BLOCK_SIZE : n) * sizeof(*blk));
	} else {
		pc->unread = true;	/* every block gets written */
	}
	free(b);
	if (--pc->pending == 0)
		pk_write(pc);
}

/*
 * What the port holds without asking it: the table this smd wrote and the
 * port confirmed in the last sweep, when the port was not reset since (a
 * switch that was has LinearFDBTop 0, a CA port comes back below ACTIVE).
 * A sweep asked for (SIGHUP, smctl resweep --heavy) reads every table.
 */
static bool pk_known(const struct sweep *sw, const struct fab_port *p, uint16_t *have,
		     unsigned int cap)
{
	const struct smd *smd = sw->smd;
	const struct fab_node *old;
	const struct fab_port *op;

	if (smd->route_full || !smd->fabric)
		return false;
	old = fabric_find(smd->fabric, p->node->guid);
	if (!old || p->num > old->num_ports)
		return false;
	op = &old->ports[p->num];
	if (!op->pkeys_valid || !op->pkey_tab || op->pkey_len > cap)
		return false;
	if (p->node->type == NODE_TYPE_SWITCH ? !p->node->si_valid || !p->node->si.lft_top :
	    !p->pi_valid || p->pi.port_state != PORT_STATE_ACTIVE)
		return false;
	memset(have, 0, cap * sizeof(*have));
	memcpy(have, op->pkey_tab, op->pkey_len * sizeof(*have));
	return true;
}

const struct fab_port *sweep_pk_owner(const struct fab_port *p)
{
	if (fabric_is_endport(p))
		return p;
	if (p->node->type == NODE_TYPE_SWITCH && fabric_port_up(p) &&
	    p->peer->node->type != NODE_TYPE_SWITCH)
		return p->peer;
	return NULL;
}

static int pk_port(struct sweep *sw, struct part_index *ix, struct fab_port *p)
{
	const struct fab_port *o = sweep_pk_owner(p);
	uint16_t keys[PKEY_TABLE_MAX];
	unsigned int want_n, all, cap;
	struct pk_ctx *pc;
	char lbl[160];

	p->pkey_enforce = false;
	if (!o || !p->pi_valid || !pk_route(p))
		return 0;
	want_n = part_port_keys(ix, o->guid, o->node->type, keys, PKEY_TABLE_MAX, &all);
	cap = part_table_cap(p);
	if (!cap) {
		/* The SA still goes by the port's partitions */
		if (fabric_is_endport(p)) {
			log_warn("%s has no P_Key table (PartitionCap 0)",
				 sweep_port_label(p, lbl, sizeof(lbl)));
			if (fabric_port_set_pkeys(p, keys, want_n) < 0)
				return -ENOMEM;
		}
		return 0;
	}
	pc = calloc(1, sizeof(*pc) + want_n * sizeof(*keys));
	if (!pc)
		return -ENOMEM;
	pc->have = calloc(cap, sizeof(*pc->have));
	pc->tab = calloc(cap, sizeof(*pc->tab));
	if (!pc->have || !pc->tab) {
		free(pc->have);
		free(pc->tab);
		free(pc);
		return -ENOMEM;
	}
	pc->sw = sw;
	pc->port = p;
	pc->cap = cap;
	pc->want_n = want_n;
	pc->idx0 = fabric_is_endport(p);
	memcpy(pc->keys, keys, want_n * sizeof(*keys));
	if (all > want_n)
		log_warn("%s: in %u partitions, smd keeps at most %u",
			 sweep_port_label(o, lbl, sizeof(lbl)), all, PKEY_TABLE_MAX);
	if (pk_known(sw, p, pc->have, cap)) {
		sw->res->pkey_ports_trusted++;
		pk_write(pc);
		return sw->err;
	}
	pc->pending = 1;
	for (uint32_t b = 0; b * PKEY_BLOCK_SIZE < cap && !sw->err; b++) {
		struct pk_blk *pb = malloc(sizeof(*pb));
		struct smp req;

		if (!pb) {
			sw->err = -ENOMEM;
			break;
		}
		pb->pc = pc;
		pb->block = b;
		smp_init_dr(&req, MAD_METHOD_GET, SMP_ATTR_PKEY_TABLE, pk_amod(p, b), pk_route(p));
		pc->pending++;
		if (sweep_submit(sw, &req, pk_get_cb, pb) < 0)
			pc->pending--;
	}
	if (--pc->pending == 0)
		pk_write(pc);
	return sw->err;
}

/* The partitions' index for this sweep; the P_Key programming starts (IBA 14.2.5.7) */
int sweep_pkeys_enter(struct sweep *sw)
{
	sw->t_program = txn_now_us();
	sw->rereg = sw->smd->cfg.client_reregister && !sw->smd->rereg_done;
	return part_index_new(sw->smd->parts, sw->smd->sa_env.sm_guid, &sw->pk_ix);
}

/* Every port's table read, then the blocks that differ written, node by node */
int sweep_pkeys_step(struct sweep *sw)
{
	struct fabric *f = sw->f;
	int r;

	for (; sw->it < f->nnodes; sw->it++) {
		struct fab_node *n = f->nodes[sw->it];

		r = sweep_yield(sw);
		if (r)
			return r;
		for (unsigned int pn = 0; pn <= n->num_ports; pn++) {
			r = pk_port(sw, sw->pk_ix, &n->ports[pn]);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int sweep_pkeys_done(struct sweep *sw)
{
	struct smd *smd = sw->smd;
	struct sweep_result *res = sw->res;
	struct fabric *f = sw->f;
	size_t absent = part_absent_guids(sw->pk_ix, f);

	part_index_free(sw->pk_ix);
	sw->pk_ix = NULL;
	if (sw->err < 0)
		return sw->err;
	/* Enforcement where the switch can (sweep_ports_step sets it) */
	for (size_t i = 0; i < f->nswitches; i++) {
		const struct fab_node *n = f->switches[i];

		for (unsigned int pn = 1; pn <= n->num_ports; pn++) {
			if (!n->ports[pn].pkey_enforce)
				continue;
			if (n->si.inbound_enf_cap || n->si.outbound_enf_cap)
				res->pkey_enforced++;
			else
				res->pkey_unenforced++;
		}
	}
	log_info("partitions: %zu, P_Key blocks: %u written, %u unchanged (%u ports not read: "
		 "known); %u switch ports facing CAs enforce them, %u cannot (their switch "
		 "has no Inbound/OutboundEnforcementCap)%s", smd->parts->n, res->pkey_blocks_sent,
		 res->pkey_blocks_kept, res->pkey_ports_trusted, res->pkey_enforced,
		 res->pkey_unenforced, res->pkey_errors ? "; SOME TABLES NOT PROGRAMMED" : "");
	if (absent)
		log_info("partitions: %zu port GUIDs the partitions name are not in the fabric",
			 absent);
	return 0;
}

/* ---- port configuration ---- */

static void port_check(struct sweep *sw, struct fab_port *p, uint8_t want_state)
{
	char lbl[160];

	if (fabric_is_endport(p) && p->pi.lid != p->lid) {
		log_warn("%s did not take LID %u (holds %u)", sweep_port_label(p, lbl, sizeof(lbl)),
			 p->lid, p->pi.lid);
		sw->res->unconfigured++;
	} else if (want_state && p->pi.port_state < want_state) {
		log_warn("%s is in state %u after asking for %u", sweep_port_label(p, lbl, sizeof(lbl)),
			 p->pi.port_state, want_state);
	}
}

static void port_reread_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct set_ctx *sc = arg;
	struct port_info pi;
	char lbl[160];

	if (status == 0 && port_info_decode(resp->data, &pi) == 0) {
		/* Refused for its M_Key? (before pi: the count of violations tells) */
		mkey_set_refused(sc->sw->smd, sc->port, &pi);
		sc->port->pi = pi;
		port_check(sc->sw, sc->port, sc->want_state);
	} else {
		log_warn_errno(status ? status : -EBADMSG,
			       "PortInfo of %s unreadable after a failed Set",
			       sweep_port_label(sc->port, lbl, sizeof(lbl)));
		sc->sw->res->unconfigured++;
	}
	free(sc);
}

static void port_set_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct set_ctx *sc = arg;
	struct fab_port *p = sc->port;
	struct port_info pi;
	struct smp get;
	char lbl[160];

	if (status == 0 && port_info_decode(resp->data, &pi) == 0) {
		mkey_port_read(sc->sw->smd, p, &pi);
		p->pi = pi;
		port_check(sc->sw, p, sc->want_state);
		free(sc);
		return;
	}
	/*
	 * A state change is not idempotent: when the answer to a Set that
	 * took effect is lost, the retry is refused (ARMED -> ARMED). Read
	 * the port back and judge by what it holds.
	 */
	log_debug("PortInfo Set on %s failed (%s): reading it back",
		  sweep_port_label(p, lbl, sizeof(lbl)), strerror(-status));
	smp_init_dr(&get, MAD_METHOD_GET, SMP_ATTR_PORT_INFO, p->num, fabric_port_route(p));
	sweep_submit(sc->sw, &get, port_reread_cb, sc);
}

static int send_port_set(struct sweep *sw, struct fab_port *p, const struct port_info *pi,
			 uint8_t want_state)
{
	struct set_ctx *sc;
	struct smp req;
	struct port_info set = *pi;
	const struct dr_path *route = fabric_port_route(p);

	/* A port that refuses smd's M_Key is left alone until smd has it back */
	if (!route || mkey_locked(sw->smd, p))
		return 0;
	mkey_fill(sw->smd, p, &set);
	sc = calloc(1, sizeof(*sc));
	if (!sc)
		return -ENOMEM;
	sc->sw = sw;
	sc->port = p;
	sc->want_state = want_state;
	smp_init_dr(&req, MAD_METHOD_SET, SMP_ATTR_PORT_INFO, p->num, route);
	port_info_encode(&set, req.data);
	sw->res->port_sets++;
	return sweep_submit(sw, &req, port_set_cb, sc);
}

/* Fields written as zero mean "no change" in a PortInfo Set (IBA 14.2.5.6) */
static void port_info_nochange(struct port_info *pi)
{
	pi->port_state = PORT_STATE_NOP;
	pi->phys_state = 0;
	pi->link_down_default_state = 0;
	pi->link_width_enabled = 0;
	pi->link_speed_enabled = 0;
	pi->link_speed_ext_enabled = 0;
	pi->link_speed_ext_enabled2 = 0;	/* as written before IBA 1.7: no change */
	pi->client_reregister = 0;
}

/*
 * A fenced link (the cabling plan refuses it) that is up past INIT: one
 * end is told PortState Down (IBA 14.2.5.6), which takes the link down;
 * it trains again to INIT, where it stays. One end does it for both: the
 * first, unless only the other is past INIT.
 */
static bool fence_down(const struct fab_port *p)
{
	const struct fab_port *q = p->peer;

	if (!p->fenced || !p->num || !q || !p->pi_valid || p->pi.port_state <= PORT_STATE_INIT)
		return false;
	if (!q->pi_valid || q->pi.port_state <= PORT_STATE_INIT)
		return true;
	return p->node->idx < q->node->idx || (p->node == q->node && p->num < q->num);
}

static int send_fence(struct sweep *sw, struct fab_port *p)
{
	struct port_info pi = p->pi;
	char lbl[160];

	log_info("cabling: %s is cabled against the plan: taking its link down to INIT",
		 sweep_port_label(p, lbl, sizeof(lbl)));
	port_info_nochange(&pi);
	pi.port_state = PORT_STATE_DOWN;
	return send_port_set(sw, p, &pi, 0);
}

int sweep_ports_step(struct sweep *sw)
{
	const struct smd_config *cfg = &sw->smd->cfg;
	struct fabric *f = sw->f;
	int r;

	for (; sw->it < f->nnodes; sw->it++) {
		struct fab_node *n = f->nodes[sw->it];

		r = sweep_yield(sw);
		if (r)
			return r;

		for (unsigned int pn = 0; pn <= n->num_ports; pn++) {
			struct fab_port *p = &n->ports[pn];
			struct port_info pi;
			bool change = false, linked = fabric_port_up(p);
			uint8_t want = 0;

			if (fence_down(p)) {
				r = send_fence(sw, p);
				if (r < 0)
					return r;
				continue;
			}
			if (!p->pi_valid || (!linked && !fabric_is_endport(p)))
				continue;
			pi = p->pi;
			if (fabric_is_endport(p)) {
				pi.lid = p->lid;
				pi.lmc = p->lmc;
				pi.master_sm_lid = sw->smd->sm_lid;
				pi.master_sm_sl = 0;
				pi.gid_prefix = cfg->subnet_prefix;
				pi.subnet_timeout = (uint8_t)cfg->subnet_timeout;
			}
			if (linked) {
				const struct port_info *q = &p->peer->pi;
				uint8_t mtu = p->pi.mtu_cap < q->mtu_cap ? p->pi.mtu_cap : q->mtu_cap;
				uint8_t vls = p->pi.vl_cap < q->vl_cap ? p->pi.vl_cap : q->vl_cap;

				pi.neighbor_mtu = mtu;
				/*
				 * Layered routes: OperationalVLs covers the data VLs they
				 * use, no more (every extra VL takes a share of the link's
				 * buffers, IBA 14.2.5.6, 7.6.1). Routes on one VL: every VL
				 * both ends offer, so that whatever VL a port's SL-to-VL
				 * table gives an SL is operational (a packet mapped to
				 * a VL the link does not run could not be sent).
				 */
				if (vls)
					pi.op_vls = sw->vls > 1 && route_op_vls(sw->vls) < vls ?
						    route_op_vls(sw->vls) : vls;
				pi.vl_high_limit = (uint8_t)cfg->vlarb_high_limit;
			}
			/*
			 * IBA 10.9.2, 14.2.5.6: a switch port facing a CA checks
			 * P_Keys in and out when the switch can (SwitchInfo
			 * Inbound/OutboundEnforcementCap) and its table holds the
			 * CA's keys (phase_pkeys); other ports do not.
			 */
			if (n->type == NODE_TYPE_SWITCH && pn) {
				pi.pkey_enf_inbound = p->pkey_enforce && n->si.inbound_enf_cap;
				pi.pkey_enf_outbound = p->pkey_enforce && n->si.outbound_enf_cap;
			}
			change = pi.lid != p->pi.lid || pi.lmc != p->pi.lmc ||
				 pi.master_sm_lid != p->pi.master_sm_lid ||
				 pi.gid_prefix != p->pi.gid_prefix ||
				 pi.subnet_timeout != p->pi.subnet_timeout ||
				 pi.neighbor_mtu != p->pi.neighbor_mtu || pi.op_vls != p->pi.op_vls ||
				 pi.vl_high_limit != p->pi.vl_high_limit ||
				 pi.pkey_enf_inbound != p->pi.pkey_enf_inbound ||
				 pi.pkey_enf_outbound != p->pi.pkey_enf_outbound ||
				 mkey_port_differs(sw->smd, p);
			port_info_nochange(&pi);
			/*
			 * A new master asks every host to register again (IBA
			 * 14.2.5.6 ClientReregister): its IPoIB and rdma_cm join
			 * their multicast groups anew, on this SM's SA.
			 */
			if (sw->rereg && n->type != NODE_TYPE_SWITCH && fabric_is_endport(p) &&
			    (p->pi.cap_mask & PORT_CAP_CLIENT_REREG)) {
				pi.client_reregister = 1;
				change = true;
				sw->res->rereg++;
			}
			/* IBA 14.2.5.6: INIT -> ARMED needs the neighbour at least in INIT */
			if (linked && p->pi.port_state == PORT_STATE_INIT) {
				pi.port_state = PORT_STATE_ARMED;
				want = PORT_STATE_ARMED;
				change = true;
			}
			if (!change)
				continue;
			r = send_port_set(sw, p, &pi, want);
			if (r < 0)
				return r;
		}
	}
	return 0;
}

int sweep_activate_step(struct sweep *sw)
{
	struct fabric *f = sw->f;
	int r;

	for (; sw->it < f->nnodes; sw->it++) {
		struct fab_node *n = f->nodes[sw->it];

		r = sweep_yield(sw);
		if (r)
			return r;

		for (unsigned int pn = 1; pn <= n->num_ports; pn++) {
			struct fab_port *p = &n->ports[pn];
			struct port_info pi;

			if (!fabric_port_up(p) || p->pi.port_state != PORT_STATE_ARMED)
				continue;
			pi = p->pi;
			port_info_nochange(&pi);
			pi.port_state = PORT_STATE_ACTIVE;
			r = send_port_set(sw, p, &pi, PORT_STATE_ACTIVE);
			if (r < 0)
				return r;
		}
	}
	return 0;
}
