// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smd/log.h"
#include "smd/mcast.h"
#include "smd/mkey.h"
#include "smd/sweep.h"
#include "topo/discover.h"
#include "topo/lid.h"
#include "topo/mcast.h"
#include "topo/partition.h"
#include "topo/route.h"

struct sweep {
	struct smd *smd;
	struct fabric *f;
	struct disc *disc;
	struct sweep_result *res;
	struct route_result *routes;	/* SLs and SL-to-VL tables of this sweep's routes */
	char engine[32];		/* the engine the routes come from (repaired or not) */
	bool repairable;		/* deadlock-free: the next sweep may repair them */
	unsigned int vls;		/* data VLs the routes use */
	struct vl_plan {
		bool sl2vl;		/* program SL-to-VL tables */
		bool vlarb;		/* program VL arbitration tables */
		bool qos;		/* sl2vl comes from the configuration, not the routes */
		uint8_t map[16];	/* ... that table, on every port pair */
	} plan;
	struct vl_arb_entry vlarb[2][2 * VL_ARB_BLOCK_SIZE];	/* low, high: every port */
	struct mc_forest *forest;	/* multicast trees over this sweep's model */
	bool rereg;			/* set ClientReregister on the CA ports */
	int err;		/* a fatal error inside a callback (ENOMEM) */
};

struct probe_ctx {
	struct sweep *sw;
	struct disc_probe p;
};

struct set_ctx {
	struct sweep *sw;
	struct fab_port *port;	/* PortInfo */
	struct fab_node *node;	/* LFT, SwitchInfo */
	uint32_t block;
	uint8_t want_state;
};

/*
 * SMPs a phase may have waiting to be sent: it submits node by node and
 * lets the window work the queue down past this. Without a bound, the k=32
 * fat-tree queued 1.35 million SL-to-VL Sets at once (850 MB).
 */
#define SWEEP_QUEUE_MAX		4096

static int pace(struct sweep *sw)
{
	int r = txn_drain(sw->smd->txn, SWEEP_QUEUE_MAX);

	return r < 0 ? r : sw->err;
}

static double now_s(void)
{
	return (double)txn_now_us() / 1e6;
}

static const char *node_name(const struct fab_node *n)
{
	return n->desc_valid && n->desc[0] ? n->desc : "(no description)";
}

static const char *port_label(const struct fab_port *p, char *buf, size_t len)
{
	snprintf(buf, len, "%s port %u (GUID 0x%016" PRIx64 ")", node_name(p->node), p->num,
		 p->node->guid);
	return buf;
}

static int submit(struct sweep *sw, const struct smp *req, txn_cb cb, void *arg)
{
	int r = txn_submit(sw->smd->txn, req, 0, cb, arg);

	if (r < 0) {
		sw->err = r;
		free(arg);
	}
	return r;
}

/* ---- discovery ---- */

static void disc_cb(void *arg, int status, const struct smp *req, const struct smp *resp);

static void pump_probes(struct sweep *sw)
{
	struct disc_probe p;

	while (!sw->err && disc_next(sw->disc, &p)) {
		static const uint16_t attr[] = {
			[DISC_NODE_INFO] = SMP_ATTR_NODE_INFO,
			[DISC_NODE_DESC] = SMP_ATTR_NODE_DESC,
			[DISC_SWITCH_INFO] = SMP_ATTR_SWITCH_INFO,
			[DISC_PORT_INFO] = SMP_ATTR_PORT_INFO,
			[DISC_VERIFY] = SMP_ATTR_NODE_INFO,
		};
		struct probe_ctx *pc = malloc(sizeof(*pc));
		struct smp req;

		if (!pc) {
			sw->err = -ENOMEM;
			return;
		}
		pc->sw = sw;
		pc->p = p;
		smp_init_dr(&req, MAD_METHOD_GET, attr[p.kind],
			    p.kind == DISC_PORT_INFO ? p.port : 0, &p.path);
		submit(sw, &req, disc_cb, pc);
	}
}

static void disc_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct probe_ctx *pc = arg;
	struct sweep *sw = pc->sw;
	struct disc_probe *p = &pc->p;
	char path[256], lbl[160];
	int r = status;

	dr_path_format(&p->path, path, sizeof(path));
	if (r == 0) {
		switch (p->kind) {
		case DISC_NODE_INFO:
		case DISC_VERIFY: {
			struct node_info ni;

			r = node_info_decode(resp->data, &ni);
			if (!r)
				r = disc_node_info(sw->disc, p, &ni);
			if (!r)
				mkey_node_info(sw->smd, &p->path, &ni);
			break;
		}
		case DISC_NODE_DESC: {
			struct node_desc nd;

			r = node_desc_decode(resp->data, &nd);
			if (!r)
				r = disc_node_desc(sw->disc, p, &nd);
			break;
		}
		case DISC_SWITCH_INFO: {
			struct switch_info si;

			r = switch_info_decode(resp->data, &si);
			if (!r)
				r = disc_switch_info(sw->disc, p, &si);
			break;
		}
		case DISC_PORT_INFO: {
			struct port_info pi;

			r = port_info_decode(resp->data, &pi);
			if (!r)
				r = disc_port_info(sw->disc, p, &pi);
			if (!r && fabric_port(p->node, p->port))
				mkey_port_read(sw->smd, fabric_port(p->node, p->port), &pi);
			break;
		}
		}
		if (r == -ENOMEM)
			sw->err = r;
		else if (r == -EPROTO)
			log_warn("discovery: rejected answer to attribute 0x%04x at path %s: %s",
				 req->hdr.attr_id, path, disc_why(sw->disc));
		else if (r < 0)
			log_warn_errno(r, "discovery: rejected answer to attribute 0x%04x at "
				       "path %s", req->hdr.attr_id, path);
	} else if (p->kind == DISC_VERIFY) {
		log_warn("discovery: the cable from %s to switch 0x%016" PRIx64 " port %u cannot "
			 "be checked from that switch (path %s, %s); leaving it out",
			 port_label(p->from, lbl, sizeof(lbl)), p->node->guid, p->port, path,
			 strerror(-r));
	} else if (p->kind == DISC_NODE_INFO && p->from) {
		log_warn("discovery: %s has its link up but its peer does not answer "
			 "(path %s, %s); leaving it out",
			 port_label(p->from, lbl, sizeof(lbl)), path, strerror(-r));
	} else if (status == -EREMOTEIO) {
		log_warn("discovery: attribute 0x%04x at path %s answered with MAD status 0x%04x",
			 req->hdr.attr_id, path, resp->hdr.status);
	} else {
		log_warn_errno(r, "discovery: no answer for attribute 0x%04x at path %s",
			       req->hdr.attr_id, path);
	}
	if (r < 0)
		disc_failed(sw->disc, p, r);
	free(pc);
	pump_probes(sw);
}

/*
 * A GUID at two places: a copy (or a broken node) could draw the traffic of
 * the other. Both places are left out of the model until one goes: their
 * ports are not activated and no LID is routed to them.
 */
static void dups_report(struct sweep *sw)
{
	const struct disc_stats *ds = disc_stats(sw->disc);
	const struct disc_dup *dups;
	struct sweep_result *res = sw->res;
	unsigned int n;
	char a[256], b[256];

	dups = disc_dups(sw->disc, &n);
	for (unsigned int i = 0; i < n; i++) {
		dr_path_format(&dups[i].first, a, sizeof(a));
		dr_path_format(&dups[i].again, b, sizeof(b));
		log_error("discovery: %s GUID 0x%016" PRIx64 " answers at path %s and at path "
			  "%s: both places are left out until one goes",
			  dups[i].port_guid ? "port" : "node", dups[i].guid, a, b);
		if (i < SWEEP_DUPS_MAX)
			res->dups[res->ndups++] = dups[i];
	}
	if (ds->duplicates > n)
		log_error("discovery: %u more duplicate GUIDs not shown", ds->duplicates - n);
	res->dup_guids = ds->duplicates;
	res->left_out = ds->left_out;
	if (ds->left_out)
		log_warn("discovery: %u nodes left out of the subnet for duplicate GUIDs",
			 ds->left_out);
}

static int phase_discover(struct sweep *sw)
{
	int r;

	r = disc_new(sw->f, &sw->disc);
	if (r < 0)
		return r;
	r = disc_start(sw->disc);
	if (r < 0)
		return r;
	pump_probes(sw);
	r = txn_run(sw->smd->txn);
	if (r < 0)
		return r;
	if (sw->err)
		return sw->err;
	if (!disc_local_node(sw->disc)) {
		log_error("discovery: the SM's own port does not answer NodeInfo");
		return -EHOSTUNREACH;
	}
	r = disc_finish(sw->disc);
	if (r < 0)
		return r;
	dups_report(sw);
	sw->res->lost_peers = disc_stats(sw->disc)->lost_peers;
	sw->res->rejected = disc_stats(sw->disc)->rejected;
	return 0;
}

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
			 port_label(p, lbl, sizeof(lbl)), pc->want_n, pc->fits,
			 pc->want_n - pc->fits, p->node->type == NODE_TYPE_SWITCH ?
			 ", no partition enforcement there" : "");
	free(pc->have);
	free(pc->tab);
	free(pc);
}

static void pk_set_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct pk_blk *b = arg;
	struct pk_ctx *pc = b->pc;
	char lbl[160];

	/* The answer carries the table as the port now holds it */
	if (status < 0 || memcmp(resp->data, req->data, SMP_DATA_SIZE)) {
		log_warn("P_Key block %u of %s was not programmed: %s", b->block,
			 port_label(pc->port, lbl, sizeof(lbl)),
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
		if (submit(sw, &req, pk_set_cb, pb) < 0)
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

/* The port whose keys a port's table holds: itself, or for a switch port its CA peer */
static const struct fab_port *pk_owner(const struct fab_port *p)
{
	if (fabric_is_endport(p))
		return p;
	if (p->node->type == NODE_TYPE_SWITCH && fabric_port_linked(p) &&
	    p->peer->node->type != NODE_TYPE_SWITCH)
		return p->peer;
	return NULL;
}

static int pk_port(struct sweep *sw, struct part_index *ix, struct fab_port *p)
{
	const struct fab_port *o = pk_owner(p);
	const struct fab_node *n = p->node;
	uint16_t keys[PKEY_TABLE_MAX];
	unsigned int want_n, all, cap;
	struct pk_ctx *pc;
	char lbl[160];

	p->pkey_enforce = false;
	if (!o || !p->pi_valid || !pk_route(p))
		return 0;
	want_n = part_port_keys(ix, o->guid, o->node->type, keys, PKEY_TABLE_MAX, &all);
	/* IBA 14.2.5.3, 14.2.5.4: the table's size */
	if (n->type == NODE_TYPE_SWITCH && p->num)
		cap = n->si_valid ? n->si.partition_enf_cap : 0;
	else
		cap = n->ni.partition_cap;
	if (cap > PKEY_TABLE_MAX)
		cap = PKEY_TABLE_MAX;
	if (!cap) {
		/* The SA still goes by the port's partitions */
		if (fabric_is_endport(p)) {
			log_warn("%s has no P_Key table (PartitionCap 0)",
				 port_label(p, lbl, sizeof(lbl)));
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
			 port_label(o, lbl, sizeof(lbl)), all, PKEY_TABLE_MAX);
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
		if (submit(sw, &req, pk_get_cb, pb) < 0)
			pc->pending--;
	}
	if (--pc->pending == 0)
		pk_write(pc);
	return sw->err;
}

static int phase_pkeys(struct sweep *sw)
{
	struct smd *smd = sw->smd;
	struct sweep_result *res = sw->res;
	struct fabric *f = sw->f;
	struct part_index *ix = NULL;
	size_t absent;
	int r;

	r = part_index_new(smd->parts, smd->sa_env.sm_guid, &ix);
	if (r < 0)
		return r;
	for (size_t i = 0; i < f->nnodes && !r; i++) {
		struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 0; pn <= n->num_ports && !r; pn++)
			r = pk_port(sw, ix, &n->ports[pn]);
		if (!r)
			r = pace(sw);
	}
	if (!r)
		r = txn_run(smd->txn);
	if (!r)
		r = sw->err;
	absent = part_absent_guids(ix, f);
	part_index_free(ix);
	if (r < 0)
		return r;
	/* Enforcement where the switch can (phase_configure_ports sets it) */
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
		log_warn("%s did not take LID %u (holds %u)", port_label(p, lbl, sizeof(lbl)),
			 p->lid, p->pi.lid);
		sw->res->unconfigured++;
	} else if (want_state && p->pi.port_state < want_state) {
		log_warn("%s is in state %u after asking for %u", port_label(p, lbl, sizeof(lbl)),
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
			       port_label(sc->port, lbl, sizeof(lbl)));
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
		  port_label(p, lbl, sizeof(lbl)), strerror(-status));
	smp_init_dr(&get, MAD_METHOD_GET, SMP_ATTR_PORT_INFO, p->num, fabric_port_route(p));
	submit(sc->sw, &get, port_reread_cb, sc);
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
	return submit(sw, &req, port_set_cb, sc);
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
	pi->client_reregister = 0;
}

static int phase_configure_ports(struct sweep *sw)
{
	const struct smd_config *cfg = &sw->smd->cfg;
	struct fabric *f = sw->f;
	int r;

	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 0; pn <= n->num_ports; pn++) {
			struct fab_port *p = &n->ports[pn];
			struct port_info pi;
			bool change = false, linked = fabric_port_linked(p);
			uint8_t want = 0;

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
		r = pace(sw);
		if (r < 0)
			return r;
	}
	r = txn_run(sw->smd->txn);
	return r < 0 ? r : sw->err;
}

static int phase_activate(struct sweep *sw)
{
	struct fabric *f = sw->f;
	int r;

	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 1; pn <= n->num_ports; pn++) {
			struct fab_port *p = &n->ports[pn];
			struct port_info pi;

			if (!fabric_port_linked(p) || p->pi.port_state != PORT_STATE_ARMED)
				continue;
			pi = p->pi;
			port_info_nochange(&pi);
			pi.port_state = PORT_STATE_ACTIVE;
			r = send_port_set(sw, p, &pi, PORT_STATE_ACTIVE);
			if (r < 0)
				return r;
		}
		r = pace(sw);
		if (r < 0)
			return r;
	}
	r = txn_run(sw->smd->txn);
	return r < 0 ? r : sw->err;
}

/* ---- SL-to-VL and VL arbitration tables ---- */

/*
 * One table attribute of one node: read it (unless the node was never
 * programmed), compare the bytes that matter and write it when it differs.
 */
struct tbl_ctx {
	struct sweep *sw;
	struct fab_node *node;
	struct smp req;			/* the Set to send, data included */
	unsigned int cmp_len;		/* bytes of data that must match */
	unsigned int need_vls;		/* SL-to-VL read back: 0 every entry must match; N: only
					 * SLs 0..N-1, the others on some VL below N */
	uint64_t *sig;			/* node's signature: cleared on failure */
};

/*
 * Whether an SL-to-VL table a port holds serves layered routes over vls
 * VLs: the SLs they use (0..vls-1) map as wanted, the others to some data
 * VL in use (a VL beyond OperationalVLs would drop their packets).
 */
static bool sl2vl_serves(const uint8_t *have, const uint8_t *want, unsigned int vls)
{
	uint8_t h[16], w[16];

	sl2vl_table_decode(have, h);
	sl2vl_table_decode(want, w);
	for (unsigned int sl = 0; sl < 16; sl++)
		if (sl < vls ? h[sl] != w[sl] : h[sl] >= vls)
			return false;
	return true;
}

static const char *tbl_name(uint16_t attr)
{
	return attr == SMP_ATTR_SL2VL_TABLE ? "SL-to-VL table" : "VL arbitration table";
}

static void tbl_fail(struct tbl_ctx *tc, const char *why)
{
	log_warn("%s 0x%08x of %s (GUID 0x%016" PRIx64 ") was not programmed: %s",
		 tbl_name(tc->req.hdr.attr_id), tc->req.hdr.attr_mod, node_name(tc->node),
		 tc->node->guid, why);
	*tc->sig = 0;
	tc->sw->res->table_errors++;
}

static void tbl_set_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct tbl_ctx *tc = arg;

	if (status < 0)
		tbl_fail(tc, strerror(-status));
	else if (memcmp(resp->data, req->data, tc->cmp_len))
		tbl_fail(tc, "the port holds another table");
	free(tc);
}

static int tbl_send_set(struct tbl_ctx *tc)
{
	struct sweep *sw = tc->sw;
	int r;

	tc->req.hdr.method = MAD_METHOD_SET;
	sw->res->tables_sent++;
	r = txn_submit(sw->smd->txn, &tc->req, 0, tbl_set_cb, tc);
	if (r < 0) {
		sw->err = r;
		free(tc);
	}
	return r;
}

static void tbl_get_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct tbl_ctx *tc = arg;

	if (status == 0 && (tc->need_vls ? sl2vl_serves(resp->data, tc->req.data, tc->need_vls) :
			    !memcmp(resp->data, tc->req.data, tc->cmp_len))) {
		tc->sw->res->tables_kept++;
		free(tc);
		return;
	}
	/* Different, or unreadable: write it */
	tbl_send_set(tc);
}

/* Queue one table; fresh: the node was reset or never programmed, do not read first */
static int tbl_program(struct sweep *sw, struct fab_node *n, uint16_t attr, uint32_t amod,
		       const struct dr_path *path, const uint8_t *data, unsigned int cmp_len,
		       unsigned int need_vls, bool fresh, uint64_t *sig)
{
	struct tbl_ctx *tc = calloc(1, sizeof(*tc));
	struct smp get;
	int r;

	if (!tc)
		return -ENOMEM;
	tc->sw = sw;
	tc->node = n;
	tc->cmp_len = cmp_len;
	tc->need_vls = need_vls;
	tc->sig = sig;
	smp_init_dr(&tc->req, MAD_METHOD_SET, attr, amod, path);
	memcpy(tc->req.data, data, SMP_DATA_SIZE);
	if (fresh)
		return tbl_send_set(tc);
	smp_init_dr(&get, MAD_METHOD_GET, attr, amod, path);
	r = txn_submit(sw->smd->txn, &get, 0, tbl_get_cb, tc);
	if (r < 0) {
		sw->err = r;
		free(tc);
	}
	return r;
}

/* FNV-1a, to recognise a node's tables from one sweep to the next */
static uint64_t sig_add(uint64_t h, const void *data, size_t len)
{
	const uint8_t *p = data;

	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * UINT64_C(0x100000001b3);
	return h;
}

#define SIG_INIT	UINT64_C(0xcbf29ce484222325)

/*
 * A node whose tables the previous sweep programmed to the same signature
 * and that was not reset since keeps them without a read: a switch that was
 * reset has LinearFDBTop 0 again, a CA port that was reset comes back below
 * ACTIVE. Everything else is read, and written where it differs.
 */
static bool tbl_trusted(const struct sweep *sw, const struct fab_node *n, uint64_t want,
			bool vlarb)
{
	const struct fab_node *old = sw->smd->fabric ? fabric_find(sw->smd->fabric, n->guid) :
				     NULL;

	if (!old || !want || (vlarb ? old->vlarb_sig : old->sl2vl_sig) != want)
		return false;
	if (n->type == NODE_TYPE_SWITCH)
		return n->si_valid && n->si.lft_top != 0;
	for (unsigned int pn = 1; pn <= n->num_ports; pn++) {
		const struct fab_port *p = &n->ports[pn];

		if (fabric_port_linked(p) && p->pi.port_state != PORT_STATE_ACTIVE)
			return false;
	}
	return true;
}

/* The ports of n whose tables matter: cabled ones, and a switch's port 0 */
static bool tbl_port(const struct fab_node *n, unsigned int pn)
{
	if (pn == 0)
		return n->type == NODE_TYPE_SWITCH;
	return fabric_port_linked(&n->ports[pn]) && n->ports[pn].pi_valid;
}

/* The SL-to-VL table of node n for (in, out) this sweep wants; -EINVAL for none */
static int sl2vl_want(const struct sweep *sw, const struct fab_node *n, unsigned int in,
		      unsigned int out, uint8_t vl[ROUTE_NUM_SLS])
{
	if (sw->plan.qos) {
		memcpy(vl, sw->plan.map, ROUTE_NUM_SLS);
		return 0;
	}
	return route_sl2vl(sw->routes, n, in, out, vl);
}

/*
 * The SL-to-VL tables of one node. A switch that takes
 * OptimizedSLtoVLMappingProgramming and wants the same table on every port
 * pair gets it in one Set for all of them; others one table per (input,
 * output) pair (the simulator, older switches), read first where the node
 * may hold it already. Layered routes need only their SLs mapped as they
 * say (and the rest on VLs in use); a QoS mapping is compared whole.
 */
static int sl2vl_node(struct sweep *sw, struct fab_node *n)
{
	bool is_sw = n->type == NODE_TYPE_SWITCH;
	uint64_t sig = sig_add(SIG_INIT, &sw->plan, sizeof(sw->plan));
	uint8_t vl[ROUTE_NUM_SLS], data[SMP_DATA_SIZE];
	bool fresh = is_sw && (!n->si_valid || n->si.lft_top == 0), one = false;
	unsigned int need = sw->plan.qos ? 0 : sw->vls;
	int r;

	sig = sig_add(sig, &sw->vls, sizeof(sw->vls));
	if (is_sw && n->si_valid && switch_info_opt_sl2vl(&n->si)) {
		if (sw->plan.qos) {
			memcpy(vl, sw->plan.map, sizeof(vl));
			one = true;
		} else {
			one = route_sl2vl_uniform(sw->routes, n, vl) == 1;
		}
	}
	/* Two passes: the signature first, then the tables if they are needed */
	for (int pass = 0; pass < 2; pass++) {
		if (one && pass == 0) {
			uint8_t key[2] = { 0xff, 0xff };

			sig = sig_add(sig, key, 2);
			sig = sig_add(sig, vl, sizeof(vl));
		} else if (one) {
			sl2vl_table_encode(vl, data);
			sw->res->tables_whole++;
			r = tbl_program(sw, n, SMP_ATTR_SL2VL_TABLE, sl2vl_amod(0, 0, true, true),
					&n->path, data, 8, 0, true, &n->sl2vl_sig);
			if (r < 0)
				return r;
		}
		for (unsigned int in = 0; !one && in <= (is_sw ? n->num_ports : 0u); in++) {
			if (is_sw && !tbl_port(n, in))
				continue;
			for (unsigned int out = is_sw ? 0 : 1; out <= n->num_ports; out++) {
				const struct dr_path *path;
				uint8_t key[2] = { (uint8_t)in, (uint8_t)out };

				if ((is_sw && in == out) || !tbl_port(n, out))
					continue;
				if (sl2vl_want(sw, n, in, out, vl) < 0)
					continue;
				if (pass == 0) {
					sig = sig_add(sig, key, 2);
					sig = sig_add(sig, vl, sizeof(vl));
					continue;
				}
				path = fabric_port_route(&n->ports[is_sw ? 0 : out]);
				if (!path)
					continue;
				sl2vl_table_encode(vl, data);
				/* IBA 14.2.5.8: switches take the input port in bits 8-15 */
				r = tbl_program(sw, n, SMP_ATTR_SL2VL_TABLE,
						is_sw ? sl2vl_amod(in, out, false, false) : 0, path,
						data, 8, need, fresh, &n->sl2vl_sig);
				if (r < 0)
					return r;
			}
		}
		if (pass == 0) {
			if (sig == 0)
				sig = 1;
			if (tbl_trusted(sw, n, sig, false)) {
				n->sl2vl_sig = sig;
				sw->res->tables_trusted++;
				return 0;
			}
			n->sl2vl_sig = sig;	/* cleared by any failure below */
		}
	}
	return 0;
}

/* The low- or high-priority table every port gets, as configured */
static unsigned int vlarb_want(const struct sweep *sw, bool high, struct vl_arb_entry *tab)
{
	const struct config_vlarb *c = high ? &sw->smd->cfg.vlarb_high : &sw->smd->cfg.vlarb_low;
	unsigned int n = 0;

	memset(tab, 0, 2 * VL_ARB_BLOCK_SIZE * sizeof(*tab));
	if (c->automatic && sw->plan.qos) {
		/* Each data VL the QoS mapping uses once, weight 64 */
		uint16_t used = 0;

		for (unsigned int sl = 0; sl < 16; sl++)
			if (sw->plan.map[sl] < 15)
				used |= (uint16_t)(1u << sw->plan.map[sl]);
		for (unsigned int vl = 0; vl < 15; vl++)
			if (used & (1u << vl))
				tab[n++] = (struct vl_arb_entry){ .vl = (uint8_t)vl, .weight = 64 };
		return n;
	}
	if (c->automatic) {
		/* Each data VL in use once, 64 x 64 bytes a turn: one 4 KB packet */
		struct route_vlarb def[ROUTE_MAX_VLS];

		n = route_vlarb_default(sw->vls, 64, def, ROUTE_MAX_VLS);
		for (unsigned int i = 0; i < n; i++)
			tab[i] = (struct vl_arb_entry){ .vl = def[i].vl, .weight = def[i].weight };
		return n;
	}
	for (n = 0; n < c->n; n++)
		tab[n] = (struct vl_arb_entry){ .vl = c->e[n].vl, .weight = c->e[n].weight };
	return n;
}

static int vlarb_node(struct sweep *sw, struct fab_node *n)
{
	const struct vl_arb_entry (*want)[2 * VL_ARB_BLOCK_SIZE] = sw->vlarb;
	bool is_sw = n->type == NODE_TYPE_SWITCH;
	bool fresh = is_sw && (!n->si_valid || n->si.lft_top == 0);
	uint64_t sig = sig_add(SIG_INIT, sw->vlarb, sizeof(sw->vlarb));
	uint8_t data[SMP_DATA_SIZE];
	int r;

	for (int pass = 0; pass < 2; pass++) {
		/* A base switch port 0 has no VL arbitration (IBA 14.2.5.9) */
		for (unsigned int pn = 1; pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];
			const struct dr_path *path;

			if (!tbl_port(n, pn))
				continue;
			for (unsigned int high = 0; high < 2; high++) {
				unsigned int cap = high ? p->pi.vl_arb_high_cap : p->pi.vl_arb_low_cap;

				for (unsigned int b = 0; b < 2 && cap > b * VL_ARB_BLOCK_SIZE; b++) {
					unsigned int ents = cap - b * VL_ARB_BLOCK_SIZE;
					uint32_t block = (high ? VL_ARB_HIGH_0_31 : VL_ARB_LOW_0_31) + b;
					uint8_t key[3] = { (uint8_t)pn, (uint8_t)block,
							   (uint8_t)cap };

					if (ents > VL_ARB_BLOCK_SIZE)
						ents = VL_ARB_BLOCK_SIZE;
					if (pass == 0) {
						sig = sig_add(sig, key, sizeof(key));
						continue;
					}
					path = fabric_port_route(is_sw ? &n->ports[0] : p);
					if (!path)
						continue;
					vl_arb_block_encode(want[high] + b * VL_ARB_BLOCK_SIZE, data);
					r = tbl_program(sw, n, SMP_ATTR_VL_ARB_TABLE,
							block << 16 | (is_sw ? pn : 0), path, data,
							2 * ents, 0, fresh, &n->vlarb_sig);
					if (r < 0)
						return r;
				}
			}
		}
		if (pass == 0) {
			if (sig == 0)
				sig = 1;
			if (tbl_trusted(sw, n, sig, true)) {
				n->vlarb_sig = sig;
				sw->res->tables_trusted++;
				return 0;
			}
			n->vlarb_sig = sig;
		}
	}
	return 0;
}

/*
 * What the VL tables are for in this sweep. Routes on one VL are
 * deadlock-free whatever VL a packet takes on each hop: SL-to-VL tables
 * then mean nothing to routing and stay as the ports hold them (every VL
 * the port offers is operational), unless the configuration asks for a QoS
 * mapping (sl2vl) or arbitration tables (vlarb_*). Routes layered over
 * several VLs need every port's tables: their SLs are their deadlock
 * freedom.
 */
static void vl_plan_make(struct sweep *sw)
{
	const struct smd_config *cfg = &sw->smd->cfg;
	struct vl_plan *p = &sw->plan;

	memset(p, 0, sizeof(*p));
	if (sw->vls > 1) {
		p->sl2vl = p->vlarb = true;
		return;
	}
	if (cfg->sl2vl.set) {
		p->sl2vl = p->qos = true;
		memcpy(p->map, cfg->sl2vl.vl, sizeof(p->map));
	}
	p->vlarb = p->qos || !cfg->vlarb_low.automatic || cfg->vlarb_high.n;
}

/*
 * SL-to-VL tables on every switch (one Set per switch where it takes
 * OptimizedSLtoVLMappingProgramming, else each input/output port pair: the
 * simulator and older switches take one pair per MAD) and CA port, and VL
 * arbitration tables on every cabled port, where vl_plan_make says they
 * mean something. They go out before the ports become ACTIVE, so that no
 * data packet ever travels on a VL the deadlock analysis did not give it.
 */
static int phase_vl_tables(struct sweep *sw)
{
	struct fabric *f = sw->f;
	int r;

	vl_plan_make(sw);
	vlarb_want(sw, false, sw->vlarb[0]);
	vlarb_want(sw, true, sw->vlarb[1]);
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		n->sl2vl_sig = n->vlarb_sig = 0;
		/* A switch that did not answer SwitchInfo is left alone (and reported) */
		if (n->type == NODE_TYPE_SWITCH && (!n->si_valid || !n->ports[0].pi_valid))
			continue;
		r = sw->plan.sl2vl ? sl2vl_node(sw, n) : 0;
		if (!r && sw->plan.vlarb)
			r = vlarb_node(sw, n);
		if (!r)
			r = pace(sw);
		if (r < 0)
			return r;
	}
	r = txn_run(sw->smd->txn);
	return r < 0 ? r : sw->err;
}

/* ---- forwarding tables ---- */

static void lft_block_want(const struct fab_node *n, uint32_t block, struct lft_block *b)
{
	for (uint32_t k = 0; k < LFT_BLOCK_SIZE; k++) {
		uint32_t lid = block * LFT_BLOCK_SIZE + k;

		b->port[k] = lid < n->lft_len ? n->lft[lid] : LFT_PORT_NONE;
	}
}

static void lft_set_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct set_ctx *sc = arg;

	if (status < 0 || memcmp(resp->data, req->data, LFT_BLOCK_SIZE)) {
		log_warn("LFT block %u of %s (GUID 0x%016" PRIx64 ") was not programmed: %s",
			 sc->block, node_name(sc->node), sc->node->guid,
			 status < 0 ? strerror(-status) : "the switch holds other entries");
		sc->sw->res->lft_errors++;
	}
	free(sc);
}

static int send_lft_set(struct sweep *sw, struct fab_node *n, uint32_t block)
{
	struct set_ctx *sc = calloc(1, sizeof(*sc));
	struct lft_block b;
	struct smp req;

	if (!sc)
		return -ENOMEM;
	sc->sw = sw;
	sc->node = n;
	sc->block = block;
	smp_init_dr(&req, MAD_METHOD_SET, SMP_ATTR_LFT, block, &n->path);
	lft_block_want(n, block, &b);
	lft_block_encode(&b, req.data);
	sw->res->lft_blocks_sent++;
	return submit(sw, &req, lft_set_cb, sc);
}

static void lft_get_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct set_ctx *sc = arg;
	struct sweep *sw = sc->sw;
	struct lft_block want, have;
	int r;

	lft_block_want(sc->node, sc->block, &want);
	if (status == 0) {
		lft_block_decode(resp->data, &have);
		if (!memcmp(want.port, have.port, LFT_BLOCK_SIZE)) {
			sw->res->lft_blocks_kept++;
			free(sc);
			return;
		}
	}
	/* Different, or unreadable: write it */
	r = send_lft_set(sw, sc->node, sc->block);
	if (r < 0)
		sw->err = r;
	free(sc);
}

static int phase_program_lfts(struct sweep *sw)
{
	struct fabric *f = sw->f;
	uint32_t nblocks = (uint32_t)f->max_lid / LFT_BLOCK_SIZE + 1;
	int r;

	for (size_t i = 0; i < f->nswitches; i++) {
		struct fab_node *n = f->switches[i];

		if (!n->si_valid) {
			sw->res->lft_errors++;
			continue;
		}
		if (f->max_lid >= n->si.lft_cap) {
			log_error("%s (GUID 0x%016" PRIx64 ") holds %u LFT entries, %u needed",
				  node_name(n), n->guid, n->si.lft_cap, f->max_lid + 1);
			sw->res->lft_errors++;
			continue;
		}
		for (uint32_t b = 0; b < nblocks; b++) {
			/*
			 * A switch with LinearFDBTop 0 was never programmed: write
			 * every block. Otherwise read first and write what differs.
			 */
			if (n->si.lft_top == 0) {
				r = send_lft_set(sw, n, b);
			} else {
				struct set_ctx *sc = calloc(1, sizeof(*sc));
				struct smp req;

				if (!sc)
					return -ENOMEM;
				sc->sw = sw;
				sc->node = n;
				sc->block = b;
				smp_init_dr(&req, MAD_METHOD_GET, SMP_ATTR_LFT, b, &n->path);
				r = submit(sw, &req, lft_get_cb, sc);
			}
			if (r < 0)
				return r;
		}
		r = pace(sw);
		if (r < 0)
			return r;
	}
	r = txn_run(sw->smd->txn);
	return r < 0 ? r : sw->err;
}

static void si_set_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct set_ctx *sc = arg;
	struct switch_info si;

	if (status < 0 || switch_info_decode(resp->data, &si) < 0 ||
	    si.lft_top != sc->node->lft_len - 1) {
		log_warn("SwitchInfo Set on %s (GUID 0x%016" PRIx64 ") failed: %s",
			 node_name(sc->node), sc->node->guid,
			 status < 0 ? strerror(-status) : "LinearFDBTop not taken");
		sc->sw->res->lft_errors++;
	} else {
		sc->node->si = si;
	}
	free(sc);
}

static int phase_switch_info(struct sweep *sw)
{
	const struct smd_config *cfg = &sw->smd->cfg;
	struct fabric *f = sw->f;
	int r;

	for (size_t i = 0; i < f->nswitches; i++) {
		struct fab_node *n = f->switches[i];
		struct switch_info si;
		struct set_ctx *sc;
		struct smp req;
		const struct fab_node *old;
		bool known;

		if (!n->si_valid || !n->lft_len || f->max_lid >= n->si.lft_cap)
			continue;
		/*
		 * IBA 14.2.5.4: writing 1 to PortStateChange clears it. On a
		 * switch the light sweep before this sweep's discovery cleared
		 * it, a bit set since is a change this sweep may have missed,
		 * left for the next light sweep. Other switches (new ones, ones
		 * it could not reach) have it cleared here.
		 */
		old = sw->smd->fabric ? fabric_find(sw->smd->fabric, n->guid) : NULL;
		known = old && old->psc_cleared;
		si = n->si;
		if (si.lft_top == f->max_lid && si.life_time_value == cfg->packet_life_time &&
		    (known || !si.port_state_change))
			continue;
		si.lft_top = f->max_lid;
		si.life_time_value = (uint8_t)cfg->packet_life_time;
		si.port_state_change = !known;
		sc = calloc(1, sizeof(*sc));
		if (!sc)
			return -ENOMEM;
		sc->sw = sw;
		sc->node = n;
		smp_init_dr(&req, MAD_METHOD_SET, SMP_ATTR_SWITCH_INFO, 0, &n->path);
		switch_info_encode(&si, req.data);
		r = submit(sw, &req, si_set_cb, sc);
		if (r < 0)
			return r;
	}
	r = txn_run(sw->smd->txn);
	return r < 0 ? r : sw->err;
}

/* ---- verification and bookkeeping ---- */

static void phase_verify(struct sweep *sw)
{
	struct sweep_result *res = sw->res;
	struct fabric *f = sw->f;
	char lbl[160];
	size_t ep, links;

	res->nodes = (unsigned int)f->nnodes;
	res->switches = (unsigned int)f->nswitches;
	res->cas = res->nodes - res->switches;
	res->ports = (unsigned int)fabric_count_ports(f, &ep, &links);
	res->endports = (unsigned int)ep;
	res->links = (unsigned int)links;
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		if (n->type == NODE_TYPE_SWITCH && !n->si_valid)
			res->unconfigured++;
		for (unsigned int pn = 0; pn <= n->num_ports; pn++) {
			struct fab_port *p = &n->ports[pn];

			if (n->type != NODE_TYPE_SWITCH && p->has_path && !p->pi_valid) {
				log_warn("%s answered NodeInfo but not PortInfo",
					 port_label(p, lbl, sizeof(lbl)));
				res->unconfigured++;
			}
			if (fabric_port_linked(p) && p->pi.port_state != PORT_STATE_ACTIVE) {
				log_warn("%s is not ACTIVE (state %u)",
					 port_label(p, lbl, sizeof(lbl)), p->pi.port_state);
				res->not_active++;
			}
		}
	}
	res->up = res->not_active == 0 && res->unconfigured == 0 && res->lft_errors == 0 &&
		  res->unrouted == 0 && res->table_errors == 0 && res->pkey_errors == 0;
}

static int lookup_lid(void *ctx, uint64_t guid, uint16_t *lid)
{
	return store_lid_lookup(ctx, guid, lid);
}

/*
 * Routes for the new model. When the fabric only lost cables, switches or
 * endports since the last model, its routes are repaired (route_repair):
 * only the routes that crossed what is gone move, instead of a global
 * rebalance that would disturb every flow of the cluster. Otherwise, or
 * when asked to (SIGHUP, smctl resweep --heavy), or when repair fits no
 * VL, the engine list computes them afresh, falling back in order. Every
 * result is verified, and every step not taken is logged. The engine may
 * use the data VLs every cabled port offers, or max_vls; the SL-to-VL
 * tables make its SLs real.
 */
static int phase_route(struct sweep *sw, struct route_stats *rs)
{
	struct smd *smd = sw->smd;
	struct sweep_result *res = sw->res;
	struct route_opts ropts = { .max_vls = smd->cfg.max_vls };
	struct route_attempt att[8];
	struct route_repair_info info;
	struct route_result *rres = NULL;
	struct route_check chk;
	unsigned int tried = 0;
	const char *why;
	double t1 = now_s(), t_compute = 0, t_verify = 0, t;
	bool acyclic = true, repaired;
	int used, r;

	if (smd->cfg.routing_repair && smd->routes_repairable && !smd->route_full &&
	    smd->fabric && smd->routes) {
		r = route_repair(smd->fabric, smd->routes, sw->f, &ropts, rs, &rres, &info);
		t = now_s();
		t_compute = t - t1;
		if (r == 0) {
			r = route_verify(sw->f, rres, rs, true, &chk, &why);
			t_verify = now_s() - t;
			if (r < 0) {
				log_warn("routing: repaired routes refused (%s); computing them afresh",
					 why);
				route_result_free(rres);
				rres = NULL;
			}
		} else if (r == -ESTALE || r == -ENOSPC) {
			log_info("routing: computing routes afresh: %s", info.why);
		} else {
			log_warn("routing: repair failed (%s); computing routes afresh",
				 strerror(-r));
		}
	}
	repaired = rres != NULL;
	if (repaired) {
		snprintf(sw->engine, sizeof(sw->engine), "%s", smd->routes_engine);
		snprintf(res->engine, sizeof(res->engine), "%s, repaired", smd->routes_engine);
		sw->repairable = true;
	} else {
		used = route_compute_list(smd->cfg.routing_engine, sw->f, &ropts, rs, &rres, &chk,
					  att, 8, &tried);
		for (unsigned int i = 0; i < tried && i < 8; i++)
			if (att[i].err)
				log_warn("routing: %s not used: %s", att[i].name, att[i].why);
		if (used < 0) {
			sw->routes = rres;
			log_error_errno(used, "routing (%s) failed", smd->cfg.routing_engine);
			return used;
		}
		snprintf(sw->engine, sizeof(sw->engine), "%s", att[used].name);
		snprintf(res->engine, sizeof(res->engine), "%s", att[used].name);
		t_compute = att[used].compute_s;
		t_verify = att[used].verify_s;
		acyclic = att[used].acyclic;
		sw->repairable = att[used].engine->deadlock_free && acyclic;
	}
	sw->routes = rres;
	sw->vls = route_vls_used(rres);
	res->t_route = now_s() - t1;
	res->unrouted = rs->unreachable;
	res->vls = sw->vls;
	res->vls_budget = rs->vls_budget;
	res->chk = chk;
	if (!repaired)
		log_info("routing (%s): %u LIDs over %u switches in %.3f s (verified in %.3f s), "
			 "%u of %u VLs, max %u hops, routes per link max %u mean %.1f%s",
			 res->engine, rs->lids, rs->switches, t_compute, t_verify, sw->vls,
			 rs->vls_budget,
			 chk.max_hops, chk.max_link_routes, chk.mean_link_routes,
			 rs->unreachable ? ", SOME LIDS UNREACHABLE" : "");
	else
		log_info("routing (%s): %u of %u LIDs had routes through what is gone: %" PRIu64
			 " (switch, LID) routes moved%s, %" PRIu64 " LFT entries changed, in %.3f s "
			 "(verified in %.3f s); %u of %u VLs, max %u hops, routes per link max %u "
			 "mean %.1f%s", res->engine, info.lids, rs->lids, info.rerouted,
			 info.ripped ? " (some LIDs placed anew)" : "", info.changed,
			 t_compute, t_verify, sw->vls, rs->vls_budget, chk.max_hops,
			 chk.max_link_routes, chk.mean_link_routes,
			 rs->unreachable ? ", SOME LIDS UNREACHABLE" : "");
	if (!acyclic)
		log_warn("routing: %s routes are NOT deadlock-free: the channel dependency "
			 "graph has a cycle (%u channels)", res->engine, chk.cycle_len);
	return 0;
}

int sweep_run(struct smd *smd, struct sweep_result *res)
{
	struct sweep sw = { .smd = smd, .res = res };
	const struct txn_stats *ts = txn_stats(smd->txn);
	struct route_stats rs;
	struct lid_stats ls;
	struct fab_port *own = NULL;
	double t0 = now_s(), t1;
	time_t started = time(NULL);
	int r;

	memset(res, 0, sizeof(*res));
	txn_stats_reset(smd->txn);
	smd->act_count++;
	r = fabric_new(&sw.f);
	if (r < 0)
		return r;
	mkey_sweep_start(smd);

	r = phase_discover(&sw);
	if (r < 0)
		goto out;
	t1 = now_s();
	res->t_discover = t1 - t0;
	log_info("discovered %zu nodes (%zu switches) in %.3f s with %" PRIu64 " SMPs",
		 sw.f->nnodes, sw.f->nswitches, res->t_discover, ts->sent);
	if (smd->elect) {
		/* IBA 14.4: only the master goes on to program the fabric */
		own = fabric_port(disc_local_node(sw.disc), disc_local_port(sw.disc));
		r = sm_elect(smd, sw.f, own);
		if (r != 0) {
			res->standby = r > 0;
			r = r > 0 ? 0 : r;
			goto out;
		}
	}

	{
		/* LIDs remembered for absent ports stay theirs while space remains */
		struct lid_reservation *resv = NULL;
		size_t nresv = 0;

		if (smd->store && store_lid_reservations(smd->store, &resv, &nresv) < 0)
			log_warn("LIDs of absent ports are not reserved in this sweep: %s",
				 store_errmsg(smd->store));
		r = lid_assign_reserved(sw.f, (uint8_t)smd->cfg.lmc,
					smd->store ? lookup_lid : NULL, smd->store, resv, nresv,
					&ls);
		free(resv);
	}
	if (r < 0) {
		log_error_errno(r, "LID assignment failed");
		goto out;
	}
	if (ls.reserved)
		log_info("LIDs: kept free for %u absent ports", ls.reserved);
	if (ls.reclaimed)
		log_warn("LIDs: no free LIDs left, %u new ports took LIDs remembered for absent "
			 "ports", ls.reclaimed);
	res->lids = ls.endports;
	log_info("LIDs: %u endports, %u kept, %u remembered, %u new, %u conflicts resolved",
		 ls.endports, ls.kept, ls.remembered, ls.fresh, ls.conflicts);
	own = fabric_port(disc_local_node(sw.disc), disc_local_port(sw.disc));
	smd->sm_lid = own ? own->lid : 0;

	r = phase_route(&sw, &rs);
	if (r < 0)
		goto out;
	if (rs.unreachable)
		log_warn("routing: %u (switch, LID) pairs have no route", rs.unreachable);

	t1 = now_s();
	sw.rereg = smd->cfg.client_reregister && !smd->rereg_done;
	/* Before any Set: ports holding a key smd knows get smd's with it */
	r = mkey_takeover(smd, sw.f);
	if (!r)
		r = phase_pkeys(&sw);
	if (!r)
		r = phase_vl_tables(&sw);
	if (!r)
		r = phase_configure_ports(&sw);
	if (!r)
		r = phase_program_lfts(&sw);
	if (!r)
		r = phase_switch_info(&sw);
	if (!r)
		r = phase_activate(&sw);
	if (!r && smd->mcast)
		r = mcast_sweep(smd, sw.f, sw.routes, res, &sw.forest);
	if (r < 0)
		goto out;
	if (sw.rereg)
		smd->rereg_done = true;
	res->t_program = now_s() - t1;
	phase_verify(&sw);
	log_info("programmed: %u PortInfo sets, %u LFT blocks sent, %u unchanged; "
		 "VL tables: %u sent (%u for whole switches), %u unchanged, %u nodes trusted "
		 "unread", res->port_sets, res->lft_blocks_sent, res->lft_blocks_kept,
		 res->tables_sent, res->tables_whole, res->tables_kept, res->tables_trusted);

out:
	res->seconds = now_s() - t0;
	res->smps = ts->sent;
	res->timeouts = ts->timeouts;
	res->retries = ts->retries;
	res->failed = ts->failed;
	if (ts->timeouts)
		log_warn("%" PRIu64 " SMPs timed out, %" PRIu64 " retried, %" PRIu64
			 " never answered", ts->timeouts, ts->retries, ts->failed);
	if (ts->malformed || ts->unmatched)
		log_warn("dropped %" PRIu64 " malformed and %" PRIu64 " unmatched MADs",
			 ts->malformed, ts->unmatched);
	if (smd->store && !res->standby) {
		/* A failed sweep is recorded too, without its (partial) fabric */
		const struct fab_node *ln = sw.disc ? disc_local_node(sw.disc) : NULL;
		const struct fab_port *lp = ln ? fabric_port(ln, disc_local_port(sw.disc)) : NULL;
		struct store_partition *sp = calloc(smd->parts->n, sizeof(*sp));
		struct store_sweep ss = {
			.started = started, .finished = time(NULL), .seconds = res->seconds,
			.nodes = res->nodes, .switches = res->switches, .cas = res->cas,
			.ports = res->ports, .links = res->links, .lids = res->lids,
			.smps_sent = ts->sent, .smps_timed_out = ts->timeouts,
			.smps_retried = ts->retries, .up = res->up, .err = r,
			.sm_node_guid = ln ? ln->guid : 0, .sm_port_guid = lp ? lp->guid : 0,
			.partitions = sp, .npartitions = sp ? smd->parts->n : 0,
		};
		int s;

		for (size_t i = 0; sp && i < smd->parts->n; i++) {
			sp[i].pkey = smd->parts->parts[i].pkey;
			sp[i].ipoib = smd->parts->parts[i].ipoib;
			snprintf(sp[i].name, sizeof(sp[i].name), "%s", smd->parts->parts[i].name);
		}
		s = store_save_sweep(smd->store, r == 0 ? sw.f : NULL, &ss);
		free(sp);

		if (s < 0)
			log_error("saving the sweep to the database failed: %s; %s",
				  store_errmsg(smd->store), r ? "the failure is not recorded" :
				  "LIDs and fabric of this sweep are not remembered");
	}
	/* Drain anything a failed phase left in flight before freeing the model */
	txn_run(smd->txn);
	disc_free(sw.disc);
	if (r == 0 && !res->standby) {
		route_result_free(smd->routes);
		fabric_free(smd->fabric);
		smd->fabric = sw.f;
		mkey_model(smd, own);
		smd->routes = sw.routes;
		smd->routes_repairable = sw.repairable;
		snprintf(smd->routes_engine, sizeof(smd->routes_engine), "%s", sw.engine);
		memcpy(smd->vlarb, sw.vlarb, sizeof(smd->vlarb));
		if (smd->mcast)
			mcast_adopt(smd, sw.forest);
	} else {
		mc_forest_free(sw.forest);
		route_result_free(sw.routes);
		fabric_free(sw.f);
	}
	return r;
}
