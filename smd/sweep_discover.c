// SPDX-License-Identifier: MIT
/*
 * Discovery (directed-route BFS, topo/discover.c), the SM election, the
 * cabling plan compared, LIDs: the phases that build the new model.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smd/sweep_int.h"

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
		sweep_submit(sw, &req, disc_cb, pc);
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
			 sweep_port_label(p->from, lbl, sizeof(lbl)), p->node->guid, p->port, path,
			 strerror(-r));
	} else if (p->kind == DISC_NODE_INFO && p->from) {
		log_warn("discovery: %s has its link up but its peer does not answer "
			 "(path %s, %s); leaving it out",
			 sweep_port_label(p->from, lbl, sizeof(lbl)), path, strerror(-r));
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

int sweep_discover_enter(struct sweep *sw)
{
	int r;

	r = disc_new(sw->f, &sw->disc);
	if (r < 0)
		return r;
	r = disc_start(sw->disc);
	if (r < 0)
		return r;
	pump_probes(sw);
	return sw->err;
}

/* Every probe answered (or given up): the model is complete */
int sweep_discover_done(struct sweep *sw)
{
	const struct txn_stats *ts = txn_stats(sw->smd->txn);
	int r;

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
	sw->res->t_discover = (double)(txn_now_us() - sw->t0) / 1e6;
	log_info("discovered %zu nodes (%zu switches) in %.3f s with %" PRIu64 " SMPs",
		 sw->f->nnodes, sw->f->nswitches, sw->res->t_discover, ts->sent);
	sw->own = fabric_port(disc_local_node(sw->disc), disc_local_port(sw->disc));
	return 0;
}

/* ---- SM election (IBA 14.4): only the master goes on to program the fabric ---- */

int sweep_elect_enter(struct sweep *sw)
{
	return sm_elect_start(sw->smd, sw->f, sw->own, &sw->elect);
}

int sweep_elect_done(struct sweep *sw)
{
	int r = sm_elect_decide(sw->smd, sw->elect);

	if (r == SM_ELECT_AGAIN)
		return PHASE_MORE;	/* a HANDOVER is out: decide on its answer */
	if (r > 0) {
		sw->res->standby = true;
		return PHASE_STOP;
	}
	return r;
}

/*
 * ---- the cabling plan: compared before anything is programmed, so that
 * the links it fences (cabling_enforce) stay at INIT and no route uses them ----
 */

int sweep_cabling_enter(struct sweep *sw)
{
	sw->cab_plan = cabling_plan(sw->smd);
	sw->enforce = sw->smd->cfg.cabling_enforce;
	return 0;
}

/* On the worker: the plan stays while a sweep runs (SIGHUP waits), the model is ours */
int sweep_cabling_work(struct sweep *sw)
{
	sw->cabling_r = plan_check(sw->cab_plan, sw->f, sw->enforce, &sw->cabling);
	return 0;
}

int sweep_cabling_done(struct sweep *sw)
{
	const struct plan_report *r = sw->cabling;

	/* Out of memory for the comparison: the sweep goes on without it */
	if (sw->cabling_r < 0) {
		log_error_errno(sw->cabling_r, "cabling: the fabric could not be compared with the "
				"plan");
		return 0;
	}
	log_debug("cabling: %u mismatches, %u links fenced, %u kept", r->total, r->held, r->kept);
	return 0;
}

/* ---- LIDs ---- */

static int lookup_lid(void *ctx, uint64_t guid, uint16_t *lid)
{
	return store_lid_lookup(ctx, guid, lid);
}

/* On the worker: the database is the sweep's while it runs (mcast_sweep_begin) */
int sweep_lids_work(struct sweep *sw)
{
	struct smd *smd = sw->smd;
	/* LIDs remembered for absent ports stay theirs while space remains */
	struct lid_reservation *resv = NULL;
	size_t nresv = 0;
	int r;

	if (smd->store && store_lid_reservations(smd->store, &resv, &nresv) < 0)
		sw->resv_failed = true;
	r = lid_assign_reserved(sw->f, (uint8_t)smd->cfg.lmc, smd->store ? lookup_lid : NULL,
				smd->store, resv, nresv, &sw->ls);
	free(resv);
	return r;
}

int sweep_lids_done(struct sweep *sw)
{
	struct smd *smd = sw->smd;
	const struct lid_stats *ls = &sw->ls;

	if (sw->resv_failed)
		log_warn("LIDs of absent ports are not reserved in this sweep: %s",
			 store_errmsg(smd->store));
	if (sw->work_r < 0) {
		log_error_errno(sw->work_r, "LID assignment failed");
		return sw->work_r;
	}
	if (ls->reserved)
		log_info("LIDs: kept free for %u absent ports", ls->reserved);
	if (ls->reclaimed)
		log_warn("LIDs: no free LIDs left, %u new ports took LIDs remembered for absent "
			 "ports", ls->reclaimed);
	sw->res->lids = ls->endports;
	log_info("LIDs: %u endports, %u kept, %u remembered, %u new, %u conflicts resolved",
		 ls->endports, ls->kept, ls->remembered, ls->fresh, ls->conflicts);
	smd->sm_lid = sw->own ? sw->own->lid : 0;
	return 0;
}
