// SPDX-License-Identifier: MIT
/*
 * SL-to-VL and VL arbitration tables where they mean something, sent only
 * where the port holds another; FDR10 read where a vendor attribute says it.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smd/sweep_int.h"

/* ---- SL-to-VL and VL arbitration tables ---- */

/*
 * One table attribute of one node: read it (unless the node was never
 * programmed), compare the bytes that matter and write it when it differs.
 */
struct tbl_ctx {
	struct sweep *sw;
	struct fab_node *node;
	/* Which table: SL-to-VL (in, out), all pairs at once; VL arbitration (port, block) */
	unsigned int in, out, port, block;
	bool all;
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

/*
 * The model keeps what the port holds (the SA answers from it): data, as
 * the port answered it, or NULL: not known any more
 */
static void tbl_record(struct tbl_ctx *tc, const uint8_t *data)
{
	struct fab_node *n = tc->node;
	struct sweep *sw = tc->sw;

	if (tc->req.hdr.attr_id == SMP_ATTR_VL_ARB_TABLE) {
		struct vl_arb_entry e[VL_ARB_BLOCK_SIZE];

		if (!data) {
			n->ports[tc->port].vlarb[tc->block - 1] = NULL;
			return;
		}
		vl_arb_block_decode(data, e);
		if (fabric_vlarb_set(sw->f, &n->ports[tc->port], tc->block, e) < 0)
			sw->err = -ENOMEM;
		return;
	}
	for (unsigned int in = 0; in <= n->num_ports; in++) {
		for (unsigned int out = 1; out <= n->num_ports; out++) {
			uint8_t vl[16];

			if (tc->all ? !fabric_sl2vl_pair(n, in, out) : in != tc->in || out != tc->out)
				continue;
			if (!data) {
				fabric_sl2vl_forget(n, in, out);
				continue;
			}
			sl2vl_table_decode(data, vl);
			if (fabric_sl2vl_set(n, in, out, sl2vl_pack(vl)) < 0)
				sw->err = -ENOMEM;
		}
	}
}

static void tbl_fail(struct tbl_ctx *tc, const char *why)
{
	log_warn("%s 0x%08x of %s (GUID 0x%016" PRIx64 ") was not programmed: %s",
		 tbl_name(tc->req.hdr.attr_id), tc->req.hdr.attr_mod, sweep_node_name(tc->node),
		 tc->node->guid, why);
	*tc->sig = 0;
	tc->sw->res->table_errors++;
	tbl_record(tc, NULL);	/* read once the model is served (smd/vlread.c) */
}

static void tbl_set_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct tbl_ctx *tc = arg;

	if (status < 0)
		tbl_fail(tc, strerror(-status));
	else if (memcmp(resp->data, req->data, tc->cmp_len))
		tbl_fail(tc, "the port holds another table");
	else
		tbl_record(tc, resp->data);
	free(tc);
}

static int tbl_send_set(struct tbl_ctx *tc)
{
	struct sweep *sw = tc->sw;
	int r;

	tc->req.hdr.method = MAD_METHOD_SET;
	sw->res->tables_sent++;
	r = sweep_submit(sw, &tc->req, tbl_set_cb, tc);
	return r;
}

static void tbl_get_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct tbl_ctx *tc = arg;

	if (status == 0 && (tc->need_vls ? sl2vl_serves(resp->data, tc->req.data, tc->need_vls) :
			    !memcmp(resp->data, tc->req.data, tc->cmp_len))) {
		tc->sw->res->tables_kept++;
		tbl_record(tc, resp->data);
		free(tc);
		return;
	}
	/* Different, or unreadable: write it */
	tbl_send_set(tc);
}

/*
 * Queue one table (which: in, out, port, block, all as in tbl_ctx); fresh:
 * the node was reset or never programmed, do not read first
 */
static int tbl_program(struct sweep *sw, struct fab_node *n, const struct tbl_ctx *which,
		       uint16_t attr, uint32_t amod, const struct dr_path *path,
		       const uint8_t *data, unsigned int cmp_len, unsigned int need_vls, bool fresh,
		       uint64_t *sig)
{
	struct tbl_ctx *tc = calloc(1, sizeof(*tc));
	struct smp get;
	int r;

	if (!tc)
		return -ENOMEM;
	tc->in = which->in;
	tc->out = which->out;
	tc->port = which->port;
	tc->block = which->block;
	tc->all = which->all;
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
	r = sweep_submit(sw, &get, tbl_get_cb, tc);
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
 * Node n as the last model had it, when it still holds what it held then:
 * it was not reset since (a switch that was has LinearFDBTop 0 again, a CA
 * port that was comes back below ACTIVE; judged before this sweep sets
 * either). NULL: new, or reset.
 */
static const struct fab_node *tbl_old(const struct sweep *sw, const struct fab_node *n)
{
	const struct fab_node *old = sw->smd->fabric ? fabric_find(sw->smd->fabric, n->guid) :
				     NULL;

	if (!old || old->type != n->type || old->num_ports != n->num_ports)
		return NULL;
	if (n->type == NODE_TYPE_SWITCH)
		return n->si_valid && n->si.lft_top != 0 ? old : NULL;
	for (unsigned int pn = 1; pn <= n->num_ports; pn++) {
		const struct fab_port *p = &n->ports[pn];

		if (fabric_port_up(p) && p->pi.port_state != PORT_STATE_ACTIVE)
			return NULL;
	}
	return old;
}

/*
 * A node whose tables the previous sweep programmed to the same signature
 * and that was not reset since keeps them without a read. Everything else
 * is read, and written where it differs.
 */
static bool tbl_trusted(const struct sweep *sw, const struct fab_node *n, uint64_t want,
			bool vlarb)
{
	const struct fab_node *old = tbl_old(sw, n);

	return old && want && (vlarb ? old->vlarb_sig : old->sl2vl_sig) == want;
}

/* The ports of n whose tables matter: cabled ones, and a switch's port 0 */
static bool tbl_port(const struct fab_node *n, unsigned int pn)
{
	if (pn == 0)
		return n->type == NODE_TYPE_SWITCH;
	return fabric_port_up(&n->ports[pn]) && n->ports[pn].pi_valid;
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
			r = tbl_program(sw, n, &(struct tbl_ctx){ .all = true }, SMP_ATTR_SL2VL_TABLE,
					sl2vl_amod(0, 0, true, true), &n->path, data, 8, 0, true,
					&n->sl2vl_sig);
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
				r = tbl_program(sw, n, &(struct tbl_ctx){ .in = in, .out = out },
						SMP_ATTR_SL2VL_TABLE,
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
					r = tbl_program(sw, n, &(struct tbl_ctx){ .port = pn,
							.block = block }, SMP_ATTR_VL_ARB_TABLE,
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
 * The tables node n held at the end of the last sweep, when it still holds
 * them (tbl_old): the SL-to-VL and VL arbitration tables, and the P_Key
 * tables of the switch ports the pkeys phase leaves alone (between
 * switches)
 */
static int tbl_copy_old(struct sweep *sw, struct fab_node *n)
{
	const struct fab_node *old = tbl_old(sw, n);
	int r;

	if (!old)
		return 0;
	r = fabric_vl_tables_copy(sw->f, n, old);
	for (unsigned int pn = 1; !r && n->type == NODE_TYPE_SWITCH && pn <= n->num_ports; pn++) {
		struct fab_port *p = &n->ports[pn];
		const struct fab_port *op = &old->ports[pn];

		if (p->pkeys_valid || sweep_pk_owner(p) || !op->pkeys_valid || !op->pkey_tab)
			continue;
		r = fabric_port_set_pkeys(p, op->pkey_tab, op->pkey_len);
		p->pkeys_valid = !r;
	}
	if (!r)
		sw->res->nodes_known++;
	return r;
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
int sweep_vl_enter(struct sweep *sw)
{
	vl_plan_make(sw);
	vlarb_want(sw, false, sw->vlarb[0]);
	vlarb_want(sw, true, sw->vlarb[1]);
	return 0;
}

int sweep_vl_step(struct sweep *sw)
{
	struct fabric *f = sw->f;
	int r;

	for (; sw->it < f->nnodes; sw->it++) {
		struct fab_node *n = f->nodes[sw->it];

		r = sweep_yield(sw);
		if (r)
			return r;

		n->sl2vl_sig = n->vlarb_sig = 0;
		/* A switch that did not answer SwitchInfo is left alone (and reported) */
		if (n->type == NODE_TYPE_SWITCH && (!n->si_valid || !n->ports[0].pi_valid))
			continue;
		/*
		 * What it held and still holds the model keeps (for the SA) without
		 * a read: what smd programs below replaces it, the rest of what
		 * is not known is read once the model is served (smd/vlread.c)
		 */
		r = tbl_copy_old(sw, n);
		if (r < 0)
			return r;
		r = sw->plan.sl2vl ? sl2vl_node(sw, n) : 0;
		if (!r && sw->plan.vlarb)
			r = vlarb_node(sw, n);
		if (r < 0)
			return r;
	}
	return 0;
}

/* ---- FDR10: a QDR port may run it, and only its vendor attribute says so ---- */

/*
 * A port whose PortInfo says QDR (no extended speed) on a node that answers
 * Mellanox ExtendedPortInfo may run FDR10 (10 Gb/s a lane with 64b/66b
 * coding): its ExtendedPortInfo says. What the last sweep found stays
 * while the node was not reset (tbl_old: judged before this sweep brings
 * ports up); others are read, one SMP a port. The rate codes are QDR's
 * either way: smctl, the dumps and the database name the speed.
 */
static void fdr10_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct set_ctx *sc = arg;
	struct mlnx_ext_port_info e;

	(void)req;
	if (status == 0 && mlnx_ext_port_info_decode(resp->data, &e) == 0)
		sc->port->fdr10 = (e.link_speed_active & MLNX_EXT_SPEED_FDR10) != 0;
	free(sc);
}

int sweep_fdr10_step(struct sweep *sw)
{
	struct fabric *f = sw->f;
	int r;

	for (; sw->it < f->nnodes; sw->it++) {
		struct fab_node *n = f->nodes[sw->it];
		const struct fab_node *old;

		r = sweep_yield(sw);
		if (r)
			return r;
		if (!iba_has_mlnx_ext_port_info(n->ni.vendor_id, n->ni.device_id))
			continue;
		old = tbl_old(sw, n);
		for (unsigned int pn = 1; pn <= n->num_ports; pn++) {
			struct fab_port *p = &n->ports[pn];
			const struct dr_path *path = n->type == NODE_TYPE_SWITCH ? &n->path :
						    fabric_port_route(p);
			struct set_ctx *sc;
			struct smp req;

			if (!fabric_port_up(p) || !p->pi_valid ||
			    fabric_port_speed(p) != IBA_SPEED_QDR || !path)
				continue;
			if (old && fabric_port_up(&old->ports[pn]) &&
			    old->ports[pn].pi.link_speed_active == p->pi.link_speed_active &&
			    old->ports[pn].pi.link_width_active == p->pi.link_width_active) {
				p->fdr10 = old->ports[pn].fdr10;
				continue;
			}
			sc = calloc(1, sizeof(*sc));
			if (!sc)
				return -ENOMEM;
			sc->sw = sw;
			sc->port = p;
			smp_init_dr(&req, MAD_METHOD_GET, SMP_ATTR_MLNX_EXT_PORT_INFO, pn, path);
			if (sweep_submit(sw, &req, fdr10_cb, sc) < 0)
				return sw->err;
		}
	}
	return 0;
}
