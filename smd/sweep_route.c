// SPDX-License-Identifier: MIT
/*
 * Routes for the new model (on the worker), the switches' forwarding
 * tables and SwitchInfo, multicast trees and MFTs, the verdict of the sweep.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smd/sweep_int.h"

/* ---- forwarding tables ---- */

static void lft_block_want(const struct fab_node *n, uint32_t block, struct lft_block *b)
{
	for (uint32_t k = 0; k < LFT_BLOCK_SIZE; k++) {
		uint32_t lid = block * LFT_BLOCK_SIZE + k;

		b->port[k] = lid < n->lft_len ? n->lft[lid] : LFT_PORT_NONE;
	}
}

/*
 * The callbacks' argument is the switch's struct lft_ctx, the block is the
 * request's attribute modifier: no allocation per block (1.38 million of
 * them at k=48).
 */
static void lft_set_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct lft_ctx *lc = arg;

	if (status < 0 || memcmp(resp->data, req->data, LFT_BLOCK_SIZE)) {
		log_warn("LFT block %u of %s (GUID 0x%016" PRIx64 ") was not programmed: %s",
			 req->hdr.attr_mod, sweep_node_name(lc->node), lc->node->guid,
			 status < 0 ? strerror(-status) : "the switch holds other entries");
		lc->sw->res->lft_errors++;
	}
}

static int send_lft_set(struct lft_ctx *lc, uint32_t block)
{
	struct fab_node *n = lc->node;
	struct lft_block b;
	struct smp req;

	smp_init_dr(&req, MAD_METHOD_SET, SMP_ATTR_LFT, block, &n->path);
	lft_block_want(n, block, &b);
	lft_block_encode(&b, req.data);
	lc->sw->res->lft_blocks_sent++;
	return sweep_submit_kept(lc->sw, &req, lft_set_cb, lc);
}

static void lft_get_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct lft_ctx *lc = arg;
	struct sweep *sw = lc->sw;
	struct lft_block want, have;
	int r;

	lft_block_want(lc->node, req->hdr.attr_mod, &want);
	if (status == 0) {
		lft_block_decode(resp->data, &have);
		if (!memcmp(want.port, have.port, LFT_BLOCK_SIZE)) {
			sw->res->lft_blocks_kept++;
			return;
		}
	}
	/* Different, or unreadable: write it */
	r = send_lft_set(lc, req->hdr.attr_mod);
	if (r < 0)
		sw->err = r;
}

/* Each switch's context; those that cannot be programmed counted and skipped */
static int lfts_prepare(struct sweep *sw)
{
	struct fabric *f = sw->f;

	sw->lft = calloc(f->nswitches + 1, sizeof(*sw->lft));
	if (!sw->lft)
		return -ENOMEM;
	for (size_t i = 0; i < f->nswitches; i++) {
		struct lft_ctx *lc = &sw->lft[i];
		struct fab_node *n = f->switches[i];

		lc->sw = sw;
		lc->node = n;
		if (!n->si_valid) {
			sw->res->lft_errors++;
			lc->skip = true;
		} else if (f->max_lid >= n->si.lft_cap) {
			log_error("%s (GUID 0x%016" PRIx64 ") holds %u LFT entries, %u needed",
				  sweep_node_name(n), n->guid, n->si.lft_cap, f->max_lid + 1);
			sw->res->lft_errors++;
			lc->skip = true;
		}
	}
	return 0;
}

/*
 * Block by block across the switches (block 0 of every switch, then block
 * 1, ...): the SMPs in flight go to as many switches, never a window's
 * worth queued at one switch's management agent.
 */
int sweep_lfts_step(struct sweep *sw)
{
	struct fabric *f = sw->f;
	uint32_t nblocks = (uint32_t)f->max_lid / LFT_BLOCK_SIZE + 1;
	size_t S = f->nswitches, total = (size_t)nblocks * S;
	int r;

	if (!sw->lft) {
		r = lfts_prepare(sw);
		if (r < 0)
			return r;
	}
	for (; sw->it < total; sw->it++) {
		struct lft_ctx *lc = &sw->lft[sw->it % S];
		uint32_t b = (uint32_t)(sw->it / S);

		if (lc->skip)
			continue;
		r = sweep_yield(sw);
		if (r)
			return r;
		/*
		 * A switch with LinearFDBTop 0 was never programmed: write
		 * every block. Otherwise read first and write what differs.
		 */
		if (lc->node->si.lft_top == 0) {
			r = send_lft_set(lc, b);
		} else {
			struct smp req;

			smp_init_dr(&req, MAD_METHOD_GET, SMP_ATTR_LFT, b, &lc->node->path);
			r = sweep_submit_kept(sw, &req, lft_get_cb, lc);
		}
		if (r < 0)
			return r;
	}
	return 0;
}

static void si_set_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct set_ctx *sc = arg;
	struct switch_info si;

	if (status < 0 || switch_info_decode(resp->data, &si) < 0 ||
	    si.lft_top != sc->node->lft_len - 1) {
		log_warn("SwitchInfo Set on %s (GUID 0x%016" PRIx64 ") failed: %s",
			 sweep_node_name(sc->node), sc->node->guid,
			 status < 0 ? strerror(-status) : "LinearFDBTop not taken");
		sc->sw->res->lft_errors++;
	} else {
		sc->node->si = si;
	}
	free(sc);
}

int sweep_switch_info_step(struct sweep *sw)
{
	const struct smd_config *cfg = &sw->smd->cfg;
	struct fabric *f = sw->f;
	int r;

	for (; sw->it < f->nswitches; sw->it++) {
		struct fab_node *n = f->switches[sw->it];
		struct switch_info si;
		struct set_ctx *sc;
		struct smp req;
		const struct fab_node *old;
		bool known;

		r = sweep_yield(sw);
		if (r)
			return r;
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
		r = sweep_submit(sw, &req, si_set_cb, sc);
		if (r < 0)
			return r;
	}
	return 0;
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
					 sweep_port_label(p, lbl, sizeof(lbl)));
				res->unconfigured++;
			}
			if (fabric_port_up(p) && p->pi.port_state != PORT_STATE_ACTIVE) {
				log_warn("%s is not ACTIVE (state %u)",
					 sweep_port_label(p, lbl, sizeof(lbl)), p->pi.port_state);
				res->not_active++;
			}
		}
	}
	res->up = res->not_active == 0 && res->unconfigured == 0 && res->lft_errors == 0 &&
		  res->unrouted == 0 && res->table_errors == 0 && res->pkey_errors == 0;
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
int sweep_route_enter(struct sweep *sw)
{
	struct smd *smd = sw->smd;
	struct sweep_route *rt = &sw->route;

	rt->opts.max_vls = smd->cfg.max_vls;
	snprintf(rt->list, sizeof(rt->list), "%s", smd->cfg.routing_engine);
	rt->try_repair = smd->cfg.routing_repair && smd->routes_repairable && !smd->route_full &&
			 smd->fabric && smd->routes;
	rt->repair_r = 1;
	rt->base_max = smd->routes_base_max;
	return 0;
}

/* The routes route_work has are deadlock-free: repaired and verified, or an engine's that is */
static bool routes_safe(const struct sweep_route *rt, const struct route_result *rres)
{
	if (!rres)
		return false;
	if (rt->repair_r == 0 && rt->verify_r == 0)
		return true;
	return rt->used >= 0 && rt->att[rt->used].engine->deadlock_free && rt->att[rt->used].acyclic;
}

/* LFT entries that differ from the last model's: what a repair wrote */
struct lft_diff {
	size_t n;
	uint32_t *sw;
	uint16_t *lid;
	uint8_t *port;
};

static uint8_t lft_was(const struct fab_node *o, uint32_t lid)
{
	return o && lid < o->lft_len ? o->lft[lid] : LFT_PORT_NONE;
}

static int lft_diff_save(const struct fabric *old, const struct fabric *f, struct lft_diff *d)
{
	size_t n = 0;

	memset(d, 0, sizeof(*d));
	for (size_t s = 0; s < f->nswitches; s++) {
		const struct fab_node *x = f->switches[s], *o = fabric_find(old, x->guid);

		for (uint32_t lid = 0; lid < x->lft_len; lid++)
			n += x->lft[lid] != lft_was(o, lid);
	}
	d->sw = malloc((n + 1) * sizeof(*d->sw));
	d->lid = malloc((n + 1) * sizeof(*d->lid));
	d->port = malloc(n + 1);
	if (!d->sw || !d->lid || !d->port)
		return -ENOMEM;
	for (size_t s = 0; s < f->nswitches; s++) {
		const struct fab_node *x = f->switches[s], *o = fabric_find(old, x->guid);

		for (uint32_t lid = 0; lid < x->lft_len; lid++) {
			if (x->lft[lid] == lft_was(o, lid))
				continue;
			d->sw[d->n] = (uint32_t)s;
			d->lid[d->n] = (uint16_t)lid;
			d->port[d->n++] = x->lft[lid];
		}
	}
	return 0;
}

/* The repaired LFTs again, over whatever an engine wrote since */
static void lft_diff_restore(const struct fabric *old, struct fabric *f, const struct lft_diff *d)
{
	for (size_t s = 0; s < f->nswitches; s++) {
		struct fab_node *x = f->switches[s];
		const struct fab_node *o = fabric_find(old, x->guid);

		for (uint32_t lid = 0; lid < x->lft_len; lid++)
			x->lft[lid] = lft_was(o, lid);
	}
	for (size_t i = 0; i < d->n; i++) {
		struct fab_node *x = f->switches[d->sw[i]];

		if (d->lid[i] < x->lft_len)
			x->lft[d->lid[i]] = d->port[i];
	}
}

static void lft_diff_free(struct lft_diff *d)
{
	free(d->sw);
	free(d->lid);
	free(d->port);
}

/*
 * Repaired routes that lost the balance (route_repair_balanced): routes
 * computed afresh as well, on the worker, and the ones with the less busy
 * busiest link kept (the repaired ones on a tie: they move fewer flows).
 * The afresh ones must be deadlock-free by their engine and the verifier,
 * as the repaired ones are. Returns the routes kept.
 */
static struct route_result *route_balance(struct sweep *sw, struct route_result *rres)
{
	struct sweep_route *rt = &sw->route;
	struct route_stats rs = sw->rs;
	struct route_check chk = rt->chk;
	struct route_result *fresh = NULL;
	struct lft_diff d;

	if (lft_diff_save(sw->smd->fabric, sw->f, &d) < 0) {
		lft_diff_free(&d);
		return rres;
	}
	rt->compared = true;
	rt->repaired_max = chk.max_link_routes;
	rt->used = route_compute_list(rt->list, sw->f, &rt->opts, &sw->rs, &fresh, &rt->chk,
				      rt->att, 8, &rt->tried);
	rt->afresh_max = rt->used >= 0 ? rt->chk.max_link_routes : 0;
	if (rt->used >= 0 && rt->att[rt->used].engine->deadlock_free &&
	    rt->att[rt->used].acyclic && rt->afresh_max < rt->repaired_max) {
		rt->afresh_better = true;
		route_result_free(rres);
		rres = fresh;
	} else {
		route_result_free(fresh);
		lft_diff_restore(sw->smd->fabric, sw->f, &d);
		sw->rs = rs;
		rt->chk = chk;
	}
	lft_diff_free(&d);
	return rres;
}

/*
 * On the worker. It reads the last model too (repair), which only
 * sweep_end() replaces, on the loop, after this sweep's phases; the SA
 * meanwhile reads it as well, and nobody writes it.
 */
int sweep_route_work(struct sweep *sw)
{
	struct smd *smd = sw->smd;
	struct sweep_route *rt = &sw->route;
	struct route_result *rres = NULL;
	double t1 = sweep_now_s(), t;

	if (rt->try_repair) {
		rt->repair_r = route_repair(smd->fabric, smd->routes, sw->f, &rt->opts, &sw->rs,
					    &rres, &rt->info);
		t = sweep_now_s();
		rt->t_compute = t - t1;
		if (rt->repair_r == 0) {
			rt->verify_r = route_verify(sw->f, rres, &sw->rs, true, &rt->chk, &rt->why);
			rt->t_verify = sweep_now_s() - t;
			if (rt->verify_r < 0) {
				route_result_free(rres);
				rres = NULL;
			}
		}
		if (rres && !route_repair_balanced(rt->chk.max_link_routes, rt->base_max))
			rres = route_balance(sw, rres);
	}
	if (!rres)
		rt->used = route_compute_list(rt->list, sw->f, &rt->opts, &sw->rs, &rres, &rt->chk,
					      rt->att, 8, &rt->tried);
	/*
	 * Links the health rules took out are kept out only while the routes
	 * stay deadlock-free without them (the fabric's connectivity was
	 * checked before): else they carry routes again, and the verdict says
	 * why
	 */
	if (sw->niso && !routes_safe(rt, rres) && sweep_health_undo(sw)) {
		route_result_free(rres);
		rres = NULL;
		rt->repair_r = 1;
		rt->used = route_compute_list(rt->list, sw->f, &rt->opts, &sw->rs, &rres, &rt->chk,
					      rt->att, 8, &rt->tried);
	}
	sw->routes = rres;
	rt->seconds = sweep_now_s() - t1;
	return 0;
}

int sweep_route_done(struct sweep *sw)
{
	struct sweep_result *res = sw->res;
	struct sweep_route *rt = &sw->route;
	struct route_stats *rs = &sw->rs;
	struct route_check chk = rt->chk;
	double t_compute = rt->t_compute, t_verify = rt->t_verify;
	bool acyclic = true;
	bool repaired = rt->repair_r == 0 && rt->verify_r == 0 && !rt->afresh_better;
	const char *engine = sw->smd->routes_engine;

	if (rt->repair_r == 0 && rt->verify_r < 0)
		log_warn("routing: repaired routes refused (%s); computing them afresh", rt->why);
	else if (rt->repair_r == -ESTALE || rt->repair_r == -ENOSPC)
		log_info("routing: computing routes afresh: %s", rt->info.why);
	else if (rt->repair_r < 0)
		log_warn("routing: repair failed (%s); computing routes afresh",
			 strerror(-rt->repair_r));
	if (rt->compared)
		log_info("routing: the repaired routes carry up to %u routes over one link, more "
			 "than 3/2 of the %u of the routes last computed afresh; routes computed "
			 "afresh carry up to %u%s: %s", rt->repaired_max, rt->base_max,
			 rt->afresh_max, rt->used < 0 ? " (failed)" : "",
			 rt->afresh_better ? "used instead" : "the repaired ones kept");
	if (repaired) {
		snprintf(sw->engine, sizeof(sw->engine), "%s", engine);
		snprintf(res->engine, sizeof(res->engine), "%s, repaired", engine);
		sw->repairable = true;
		sw->base_max = rt->base_max;
	} else {
		int used = rt->used;

		for (unsigned int i = 0; i < rt->tried && i < 8; i++)
			if (rt->att[i].err)
				log_warn("routing: %s not used: %s", rt->att[i].name, rt->att[i].why);
		if (used < 0) {
			log_error_errno(used, "routing (%s) failed", rt->list);
			return used;
		}
		snprintf(sw->engine, sizeof(sw->engine), "%s", rt->att[used].name);
		snprintf(res->engine, sizeof(res->engine), "%s%s", rt->att[used].name,
			 rt->afresh_better ? ", afresh: repair unbalanced" : "");
		sw->base_max = chk.max_link_routes;
		t_compute = rt->att[used].compute_s;
		t_verify = rt->att[used].verify_s;
		acyclic = rt->att[used].acyclic;
		sw->repairable = rt->att[used].engine->deadlock_free && acyclic;
	}
	sw->vls = route_vls_used(sw->routes);
	res->t_route = rt->seconds;
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
			 "mean %.1f%s", res->engine, rt->info.lids, rs->lids, rt->info.rerouted,
			 rt->info.ripped ? " (some LIDs placed anew)" : "", rt->info.changed,
			 t_compute, t_verify, sw->vls, rs->vls_budget, chk.max_hops,
			 chk.max_link_routes, chk.mean_link_routes,
			 rs->unreachable ? ", SOME LIDS UNREACHABLE" : "");
	if (!acyclic)
		log_warn("routing: %s routes are NOT deadlock-free: the channel dependency "
			 "graph has a cycle (%u channels)", res->engine, chk.cycle_len);
	/* What became of the links the health rules asked out (smd/health.h) */
	if (sw->niso)
		health_isolation_verdicts(sw->smd, sw->iso, sw->niso);
	if (rs->unreachable)
		log_warn("routing: %u (switch, LID) pairs have no route", rs->unreachable);
	return 0;
}

/* ---- multicast: trees on the worker, then every switch's MFT (smd/mcast.c) ---- */

int sweep_mcast_enter(struct sweep *sw)
{
	mcast_sweep_prepare(sw->smd, sw->f);
	return 0;
}

int sweep_mcast_work(struct sweep *sw)
{
	return mc_forest_new(sw->f, sw->routes, &sw->forest);
}

int sweep_mcast_step(struct sweep *sw)
{
	int r;

	if (sw->work_r < 0)
		return sw->work_r;
	r = mcast_sweep_step(sw->smd, sw->forest);
	return r == MCAST_STEP_MORE ? PHASE_MORE : r == MCAST_STEP_WAIT ? PHASE_WAIT : r;
}

int sweep_mcast_check_work(struct sweep *sw)
{
	return mc_forest_check_cdg(sw->forest, &sw->mc_acyclic);
}

int sweep_mcast_check_done(struct sweep *sw)
{
	mcast_sweep_report(sw->smd, sw->forest, sw->work_r, sw->mc_acyclic, sw->res);
	return 0;
}

int sweep_verify_done(struct sweep *sw)
{
	struct sweep_result *res = sw->res;

	if (sw->rereg)
		sw->smd->rereg_done = true;
	res->t_program = (double)(txn_now_us() - sw->t_program) / 1e6;
	phase_verify(sw);
	log_info("programmed: %u PortInfo sets, %u LFT blocks sent, %u unchanged; "
		 "VL tables: %u sent (%u for whole switches), %u unchanged, %u nodes trusted "
		 "unread", res->port_sets, res->lft_blocks_sent, res->lft_blocks_kept,
		 res->tables_sent, res->tables_whole, res->tables_kept, res->tables_trusted);
	return 0;
}
