// SPDX-License-Identifier: MIT
/*
 * One heavy sweep, as the list of phases in sweep_phases[] below: read that
 * table to follow a sweep from discovery to the saved model.
 *
 * A sweep never waits. The event loop (smd/loop.c) calls sweep_advance()
 * whenever SMP answers came in, the worker thread finished, or a step asked
 * to go on; the driver runs each phase's parts in order, each as far as it
 * can without waiting:
 *   enter   on the loop: set up, may submit SMPs;
 *   work    on the worker thread: CPU-long computing over this sweep's own
 *           model (nobody else touches sw->f meanwhile), no I/O, no logging;
 *           what it finds goes into struct sweep for finish to report;
 *   step    on the loop, called again and again: submits the phase's SMPs
 *           node by node (sw->it is its place) until the transaction queue
 *           holds SWEEP_QUEUE_MAX or its time slice is used (sweep_yield),
 *           returns PHASE_WAIT / PHASE_MORE to be called again, 0 when done;
 *   finish  on the loop, once every SMP the phase sent was answered: checks,
 *           logs, may return PHASE_MORE to wait for more answers (a
 *           handover) or PHASE_STOP to end the sweep early (standby).
 * An error skips to the phases marked ALWAYS (saving the sweep's record).
 * The SA keeps answering from the last complete model (smd->fabric) until
 * sweep_end() swaps this one in.
 *
 * To add a phase: write its parts as above (a loop over nodes becomes a step
 * that starts at sw->it and returns sweep_yield()'s code when it says so),
 * and put one line in sweep_phases[] where it belongs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"
#include "smd/cabling.h"
#include "smd/health.h"
#include "smd/loop.h"
#include "smd/mcast.h"
#include "smd/mkey.h"
#include "smd/sweep.h"
#include "smd/vlread.h"
#include "topo/discover.h"
#include "topo/health.h"
#include "topo/lid.h"
#include "topo/mc.h"
#include "topo/part.h"
#include "topo/plan.h"
#include "topo/route.h"

struct sweep;

struct sweep_phase {
	const char *name;
	int (*enter)(struct sweep *sw);
	int (*work)(struct sweep *sw);		/* its return: sw->work_r */
	int (*step)(struct sweep *sw);
	int (*finish)(struct sweep *sw);
	unsigned int flags;
};

/* sweep_phase.flags */
#define ALWAYS	1u	/* runs after an error or a stop too */
#define ELECT	2u	/* only when this SM takes part in elections */
#define MCAST	4u	/* only with multicast */
#define CABLE	8u	/* only with a cabling plan in force */

/* What a step or a finish returns besides 0 (done) and -errno */
#define PHASE_WAIT	1	/* call again after the next answers */
#define PHASE_MORE	2	/* call again soon (time slice used), or: wait for more answers */
#define PHASE_STOP	3	/* finish: the sweep ends here, successfully (standby) */

/* Where the driver is within a phase */
enum sweep_stage { ST_ENTER, ST_WORK, ST_STEP, ST_IDLE, ST_FINISH };

struct sweep {
	struct smd *smd;
	struct fabric *f;
	struct disc *disc;
	struct sweep_result *res;
	/* The driver */
	unsigned int phase;		/* index in sweep_phases[] */
	enum sweep_stage stage;
	size_t it;			/* a step's place (node index), 0 at each phase */
	int r;				/* the sweep's outcome so far: 0 or -errno */
	bool stop;			/* a phase ended the sweep early (standby) */
	bool abandoned;			/* sweep_abandon(): submit nothing more */
	atomic_bool cancel;		/* ... read by the worker: compute nothing more */
	bool computing;			/* a work part runs on the worker thread */
	bool ended;			/* sweep_end() ran: swapped in, or dropped */
	int work_r;			/* ... and what it returned */
	uint64_t t0;			/* monotonic us: the sweep's start */
	uint64_t phase_t0;		/* ... the phase's */
	uint64_t step_t0;		/* ... this step call's (sweep_yield) */
	double phase_s[SWEEP_PHASES_MAX];	/* seconds each phase took; <0: skipped */
	time_t started;
	struct log_record problems;	/* warnings and errors of this sweep */
	/* What the phases hand on */
	struct fab_port *own;		/* the SM's own port in f */
	struct sm_election *elect;
	const struct plan *cab_plan;	/* the cabling plan compared with (smd/cabling.c) */
	bool enforce;			/* ... and enforced */
	struct plan_report *cabling;	/* what the comparison found, for sweep_end */
	int cabling_r;
	/* The health phase: links seen down since the last model, links to isolate */
	struct health_isolation *iso;
	size_t niso;
	uint64_t *down_guid;
	uint8_t *down_port;
	size_t ndown, down_cap;
	int health_r;
	struct lid_stats ls;
	bool resv_failed;		/* the database could not say which LIDs are reserved */
	struct route_stats rs;
	struct sweep_route {		/* the routing phase, on the worker */
		struct route_opts opts;
		char list[sizeof(((struct smd_config *)0)->routing_engine)];
		bool try_repair;
		int repair_r;		/* route_repair's return; 1: not tried */
		int verify_r;		/* the verifier on repaired routes */
		const char *why;
		struct route_repair_info info;
		struct route_attempt att[8];
		unsigned int tried;
		int used;
		struct route_check chk;
		double t_compute, t_verify, seconds;
	} route;
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
	bool mc_acyclic;		/* the trees' verdict (mcast-check) */
	bool rereg;			/* set ClientReregister on the CA ports */
	uint64_t t_program;		/* monotonic us: programming started */
	struct store_sweep ss;		/* the record the save phase writes */
	struct store_partition *ss_parts;	/* ... its partitions */
	int save_r;
	bool saved;			/* the save committed (even if abandoned after) */
	struct part_index *pk_ix;	/* the partitions, during the pkeys phase */
	struct sa_index *sa_index;	/* the SA's index of the new model, built on the worker */
	int sa_index_r;
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
/* How long one step may compute before it lets the event loop run */
#define SWEEP_SLICE_US		10000

/*
 * Whether a step must stop here: PHASE_WAIT when the queue is full (the
 * answers bring the driver back), PHASE_MORE when its time slice is used,
 * an error a callback left, 0 to go on.
 */
static int sweep_yield(struct sweep *sw)
{
	if (sw->err)
		return sw->err;
	if (txn_queued(sw->smd->txn) > SWEEP_QUEUE_MAX)
		return PHASE_WAIT;
	if (txn_now_us() - sw->step_t0 > SWEEP_SLICE_US)
		return PHASE_MORE;
	return 0;
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

/* Queue an SMP for this sweep; arg is freed when it cannot be (or the sweep is abandoned) */
static int submit(struct sweep *sw, const struct smp *req, txn_cb cb, void *arg)
{
	int r = sw->abandoned ? -ECANCELED : txn_submit(sw->smd->txn, req, 0, cb, arg);

	if (r < 0) {
		if (!sw->err)
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
	return sw->err;
}

/* Every probe answered (or given up): the model is complete */
static int discovered(struct sweep *sw)
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

static int elect_enter(struct sweep *sw)
{
	return sm_elect_start(sw->smd, sw->f, sw->own, &sw->elect);
}

static int elect_done(struct sweep *sw)
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

static int cabling_enter(struct sweep *sw)
{
	sw->cab_plan = cabling_plan(sw->smd);
	sw->enforce = sw->smd->cfg.cabling_enforce;
	return 0;
}

/* On the worker: the plan stays while a sweep runs (SIGHUP waits), the model is ours */
static int cabling_work(struct sweep *sw)
{
	sw->cabling_r = plan_check(sw->cab_plan, sw->f, sw->enforce, &sw->cabling);
	return 0;
}

static int cabling_done(struct sweep *sw)
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

/*
 * ---- health (issue 20): links that went down since the last model, and
 * the links the rules took out of service, isolated in this model before
 * it is routed (no route crosses them; they stay up) ----
 */

static int health_enter(struct sweep *sw)
{
	sw->iso = health_isolations_wanted(sw->smd, &sw->niso);
	return 0;
}

static void down_seen(void *ctx, const struct fab_port *p)
{
	struct sweep *sw = ctx;

	if (sw->ndown == sw->down_cap) {
		size_t cap = sw->down_cap ? sw->down_cap * 2 : 64;
		uint64_t *g = realloc(sw->down_guid, cap * sizeof(*g));
		uint8_t *n;

		if (!g)
			return;
		sw->down_guid = g;
		n = realloc(sw->down_port, cap * sizeof(*n));
		if (!n)
			return;
		sw->down_port = n;
		sw->down_cap = cap;
	}
	sw->down_guid[sw->ndown] = p->node->guid;
	sw->down_port[sw->ndown++] = p->num;
}

/* On the worker: the last model is read only (as route repair reads it) */
static int health_work(struct sweep *sw)
{
	health_links_down(sw->smd->fabric, sw->f, down_seen, sw);
	sw->health_r = sw->niso ? health_isolate(sw->f, sw->iso, sw->niso) : 0;
	return 0;
}

static int health_done(struct sweep *sw)
{
	if (sw->ndown)
		health_links_seen_down(sw->smd, sw->down_guid, sw->down_port, sw->ndown);
	if (sw->health_r < 0) {
		log_error_errno(sw->health_r, "health: no link isolated in this sweep");
		for (size_t i = 0; i < sw->niso; i++)
			sw->iso[i].verdict = HEALTH_ISOS;
	}
	return 0;
}

/* ---- LIDs ---- */

static int lookup_lid(void *ctx, uint64_t guid, uint16_t *lid)
{
	return store_lid_lookup(ctx, guid, lid);
}

/* On the worker: the database is the sweep's while it runs (mcast_sweep_begin) */
static int lids_work(struct sweep *sw)
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

static int lids_done(struct sweep *sw)
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

/*
 * Before any Set: ports holding a key smd knows but does not want get one
 * Set each with smd's (smd/mkey.c); the driver waits for their answers
 */
static int mkey_enter(struct sweep *sw)
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
	if (p->node->type == NODE_TYPE_SWITCH && fabric_port_up(p) &&
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

/* The partitions' index for this sweep; the P_Key programming starts (IBA 14.2.5.7) */
static int pkeys_enter(struct sweep *sw)
{
	sw->t_program = txn_now_us();
	sw->rereg = sw->smd->cfg.client_reregister && !sw->smd->rereg_done;
	return part_index_new(sw->smd->parts, sw->smd->sa_env.sm_guid, &sw->pk_ix);
}

/* Every port's table read, then the blocks that differ written, node by node */
static int phase_pkeys(struct sweep *sw)
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

static int pkeys_done(struct sweep *sw)
{
	struct smd *smd = sw->smd;
	struct sweep_result *res = sw->res;
	struct fabric *f = sw->f;
	size_t absent = part_absent_guids(sw->pk_ix, f);

	part_index_free(sw->pk_ix);
	sw->pk_ix = NULL;
	if (sw->err < 0)
		return sw->err;
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
		 port_label(p, lbl, sizeof(lbl)));
	port_info_nochange(&pi);
	pi.port_state = PORT_STATE_DOWN;
	return send_port_set(sw, p, &pi, 0);
}

static int phase_configure_ports(struct sweep *sw)
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

static int phase_activate(struct sweep *sw)
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
		 tbl_name(tc->req.hdr.attr_id), tc->req.hdr.attr_mod, node_name(tc->node),
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
	r = submit(sw, &tc->req, tbl_set_cb, tc);
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
	r = submit(sw, &get, tbl_get_cb, tc);
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

		if (p->pkeys_valid || pk_owner(p) || !op->pkeys_valid || !op->pkey_tab)
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
static int vl_plan_enter(struct sweep *sw)
{
	vl_plan_make(sw);
	vlarb_want(sw, false, sw->vlarb[0]);
	vlarb_want(sw, true, sw->vlarb[1]);
	return 0;
}

static int phase_vl_tables(struct sweep *sw)
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

static int phase_fdr10(struct sweep *sw)
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
			if (submit(sw, &req, fdr10_cb, sc) < 0)
				return sw->err;
		}
	}
	return 0;
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

	for (; sw->it < f->nswitches; sw->it++) {
		struct fab_node *n = f->switches[sw->it];

		r = sweep_yield(sw);
		if (r)
			return r;

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
		r = submit(sw, &req, si_set_cb, sc);
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
					 port_label(p, lbl, sizeof(lbl)));
				res->unconfigured++;
			}
			if (fabric_port_up(p) && p->pi.port_state != PORT_STATE_ACTIVE) {
				log_warn("%s is not ACTIVE (state %u)",
					 port_label(p, lbl, sizeof(lbl)), p->pi.port_state);
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
static int route_enter(struct sweep *sw)
{
	struct smd *smd = sw->smd;
	struct sweep_route *rt = &sw->route;

	rt->opts.max_vls = smd->cfg.max_vls;
	snprintf(rt->list, sizeof(rt->list), "%s", smd->cfg.routing_engine);
	rt->try_repair = smd->cfg.routing_repair && smd->routes_repairable && !smd->route_full &&
			 smd->fabric && smd->routes;
	rt->repair_r = 1;
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

/* The links this sweep isolated carry routes again; true when there were any */
static bool isolation_undo(struct sweep *sw)
{
	bool any = false;

	for (size_t i = 0; i < sw->niso; i++) {
		struct health_isolation *v = &sw->iso[i];
		struct fab_node *n;

		if (v->verdict != HEALTH_ISO_APPLIED)
			continue;
		n = fabric_find(sw->f, v->guid);
		if (n && v->port <= n->num_ports && n->ports[v->port].peer) {
			n->ports[v->port].isolated = false;
			n->ports[v->port].peer->isolated = false;
		}
		v->verdict = HEALTH_ISO_DEADLOCK;
		any = true;
	}
	return any;
}

/*
 * On the worker. It reads the last model too (repair), which only
 * sweep_end() replaces, on the loop, after this sweep's phases; the SA
 * meanwhile reads it as well, and nobody writes it.
 */
static int route_work(struct sweep *sw)
{
	struct smd *smd = sw->smd;
	struct sweep_route *rt = &sw->route;
	struct route_result *rres = NULL;
	double t1 = now_s(), t;

	if (rt->try_repair) {
		rt->repair_r = route_repair(smd->fabric, smd->routes, sw->f, &rt->opts, &sw->rs,
					    &rres, &rt->info);
		t = now_s();
		rt->t_compute = t - t1;
		if (rt->repair_r == 0) {
			rt->verify_r = route_verify(sw->f, rres, &sw->rs, true, &rt->chk, &rt->why);
			rt->t_verify = now_s() - t;
			if (rt->verify_r < 0) {
				route_result_free(rres);
				rres = NULL;
			}
		}
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
	if (sw->niso && !routes_safe(rt, rres) && isolation_undo(sw)) {
		route_result_free(rres);
		rres = NULL;
		rt->repair_r = 1;
		rt->used = route_compute_list(rt->list, sw->f, &rt->opts, &sw->rs, &rres, &rt->chk,
					      rt->att, 8, &rt->tried);
	}
	sw->routes = rres;
	rt->seconds = now_s() - t1;
	return 0;
}

static int route_done(struct sweep *sw)
{
	struct sweep_result *res = sw->res;
	struct sweep_route *rt = &sw->route;
	struct route_stats *rs = &sw->rs;
	struct route_check chk = rt->chk;
	double t_compute = rt->t_compute, t_verify = rt->t_verify;
	bool acyclic = true, repaired = rt->repair_r == 0 && rt->verify_r == 0;
	const char *engine = sw->smd->routes_engine;

	if (rt->repair_r == 0 && rt->verify_r < 0)
		log_warn("routing: repaired routes refused (%s); computing them afresh", rt->why);
	else if (rt->repair_r == -ESTALE || rt->repair_r == -ENOSPC)
		log_info("routing: computing routes afresh: %s", rt->info.why);
	else if (rt->repair_r < 0)
		log_warn("routing: repair failed (%s); computing routes afresh",
			 strerror(-rt->repair_r));
	if (repaired) {
		snprintf(sw->engine, sizeof(sw->engine), "%s", engine);
		snprintf(res->engine, sizeof(res->engine), "%s, repaired", engine);
		sw->repairable = true;
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
		snprintf(res->engine, sizeof(res->engine), "%s", rt->att[used].name);
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

static int mcast_enter(struct sweep *sw)
{
	mcast_sweep_prepare(sw->smd, sw->f);
	return 0;
}

static int mcast_work(struct sweep *sw)
{
	return mc_forest_new(sw->f, sw->routes, &sw->forest);
}

static int mcast_step(struct sweep *sw)
{
	int r;

	if (sw->work_r < 0)
		return sw->work_r;
	r = mcast_sweep_step(sw->smd, sw->forest);
	return r == MCAST_STEP_MORE ? PHASE_MORE : r == MCAST_STEP_WAIT ? PHASE_WAIT : r;
}

static int mcast_check(struct sweep *sw)
{
	return mc_forest_check_cdg(sw->forest, &sw->mc_acyclic);
}

static int mcast_report(struct sweep *sw)
{
	mcast_sweep_report(sw->smd, sw->forest, sw->work_r, sw->mc_acyclic, sw->res);
	return 0;
}

static int verify_done(struct sweep *sw)
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

/* ---- saving: the sweep's record (also of a failed one), then the SA's index ---- */

static int save_enter(struct sweep *sw)
{
	struct smd *smd = sw->smd;
	struct sweep_result *res = sw->res;
	const struct txn_stats *ts = txn_stats(smd->txn);
	const struct fab_node *ln = sw->disc ? disc_local_node(sw->disc) : NULL;
	const struct fab_port *lp = ln ? fabric_port(ln, disc_local_port(sw->disc)) : NULL;

	res->seconds = (double)(txn_now_us() - sw->t0) / 1e6;
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
	/* A failed sweep is recorded too, without its (partial) fabric */
	sw->ss = (struct store_sweep){
		.started = sw->started, .finished = time(NULL), .seconds = res->seconds,
		.nodes = res->nodes, .switches = res->switches, .cas = res->cas,
		.ports = res->ports, .links = res->links, .lids = res->lids,
		.smps_sent = ts->sent, .smps_timed_out = ts->timeouts,
		.smps_retried = ts->retries, .up = res->up, .err = sw->r,
		.sm_node_guid = ln ? ln->guid : 0, .sm_port_guid = lp ? lp->guid : 0,
	};
	/* The partitions in force, for the database and smctl (freed in save_done) */
	sw->ss_parts = calloc(smd->parts->n ? smd->parts->n : 1, sizeof(*sw->ss_parts));
	if (!sw->ss_parts)
		return -ENOMEM;
	sw->ss.partitions = sw->ss_parts;
	sw->ss.npartitions = smd->parts->n;
	for (size_t i = 0; i < smd->parts->n; i++) {
		struct store_partition *sp = &sw->ss_parts[i];

		sp->pkey = smd->parts->parts[i].pkey;
		sp->ipoib = smd->parts->parts[i].ipoib;
		snprintf(sp->name, sizeof(sp->name), "%s", smd->parts->parts[i].name);
	}
	return 0;
}

/* On the worker: the database is the sweep's (mcast_sweep_begin), the model its own */
static int save_work(struct sweep *sw)
{
	struct smd *smd = sw->smd;
	bool keep = sw->r == 0 && !sw->res->standby;

	if (smd->store && !sw->res->standby) {
		sw->save_r = store_save_sweep(smd->store, keep ? sw->f : NULL, &sw->ss);
		sw->saved = sw->save_r == 0;
	}
	/* Abandoned (shutdown) during the save: no SA will use the index */
	if (keep && !smd->once && !atomic_load(&sw->cancel))
		sw->sa_index_r = sa_index_build(sw->f, &sw->sa_index);
	return 0;
}

static int save_done(struct sweep *sw)
{
	struct smd *smd = sw->smd;

	free(sw->ss_parts);
	sw->ss_parts = NULL;
	sw->ss.partitions = NULL;

	if (sw->save_r < 0)
		log_error("saving the sweep to the database failed: %s; %s",
			  store_errmsg(smd->store), sw->r ? "the failure is not recorded" :
			  "LIDs and fabric of this sweep are not remembered");
	return 0;
}

/* ---- the sweep ---- */

/*
 * Every phase of a heavy sweep, in order. A newcomer follows one sweep here:
 * what each part does is above (enter, work on the worker thread, step, finish).
 */
static const struct sweep_phase sweep_phases[] = {
	/* name          enter           work         step                   finish        flags */
	{ "discover",    phase_discover, NULL,        NULL,                  discovered,   0 },
	{ "elect",       elect_enter,    NULL,        NULL,                  elect_done,   ELECT },
	{ "cabling",     cabling_enter,  cabling_work, NULL,                 cabling_done, CABLE },
	{ "health",      health_enter,   health_work, NULL,                  health_done,  0 },
	{ "lids",        NULL,           lids_work,   NULL,                  lids_done,    0 },
	{ "route",       route_enter,    route_work,  NULL,                  route_done,   0 },
	{ "mkey",        mkey_enter,     NULL,        NULL,                  NULL,         0 },
	{ "pkeys",       pkeys_enter,    NULL,        phase_pkeys,           pkeys_done,   0 },
	{ "vl-tables",   vl_plan_enter,  NULL,        phase_vl_tables,       NULL,         0 },
	{ "fdr10",       NULL,           NULL,        phase_fdr10,           NULL,         0 },
	{ "ports",       NULL,           NULL,        phase_configure_ports, NULL,         0 },
	{ "lfts",        NULL,           NULL,        phase_program_lfts,    NULL,         0 },
	{ "switch-info", NULL,           NULL,        phase_switch_info,     NULL,         0 },
	{ "activate",    NULL,           NULL,        phase_activate,        NULL,         0 },
	{ "mcast",       mcast_enter,    mcast_work,  mcast_step,            NULL,         MCAST },
	{ "mcast-check", NULL,           mcast_check, NULL,                  mcast_report, MCAST },
	{ "verify",      NULL,           NULL,        NULL,                  verify_done,  0 },
	{ "save",        save_enter,     save_work,   NULL,                  save_done,    ALWAYS },
};

#define NPHASES	(sizeof(sweep_phases) / sizeof(sweep_phases[0]))
_Static_assert(NPHASES <= SWEEP_PHASES_MAX, "SWEEP_PHASES_MAX too small");

static bool phase_skipped(const struct sweep *sw, const struct sweep_phase *ph)
{
	if ((sw->r < 0 || sw->stop) && !(ph->flags & ALWAYS))
		return true;
	if ((ph->flags & ELECT) && !sw->smd->elect)
		return true;
	if ((ph->flags & CABLE) && !cabling_plan(sw->smd))
		return true;
	return (ph->flags & MCAST) && !sw->smd->mcast;
}

static void sweep_fail(struct sweep *sw, int r)
{
	if (!sw->r)
		sw->r = r;
}

/* The worker thread runs the phase's work part; the loop then clears computing */
static void sweep_work(void *arg)
{
	struct sweep *sw = arg;

	sw->work_r = sweep_phases[sw->phase].work(sw);
}

static void sweep_work_done(void *arg)
{
	struct sweep *sw = arg;

	sw->computing = false;
}

static void log_phase_times(const struct sweep *sw)
{
	char buf[512];
	size_t off = 0;

	for (unsigned int i = 0; i < NPHASES && off < sizeof(buf); i++) {
		int n;

		if (sw->phase_s[i] < 0)
			continue;
		n = snprintf(buf + off, sizeof(buf) - off, "%s%s %.3f s", off ? ", " : "",
			     sweep_phases[i].name, sw->phase_s[i]);
		if (n < 0)
			break;
		off += (size_t)n;
	}
	log_info("sweep phases: %s; %.3f s in all", buf,
		 (double)(txn_now_us() - sw->t0) / 1e6);
}

/* The last phase is through: the new model replaces the last one, or is dropped */
static int sweep_end(struct sweep *sw)
{
	struct smd *smd = sw->smd;

	log_phase_times(sw);
	log_record(NULL);
	sw->ended = true;
	disc_free(sw->disc);
	sw->disc = NULL;
	sw->elect = sm_election_free(sw->elect);
	if (sw->r == 0 && !sw->res->standby) {
		route_result_free(smd->routes);
		fabric_free(smd->fabric);
		smd->fabric = sw->f;
		mkey_model(smd, sw->own);
		smd->routes = sw->routes;
		sw->f = NULL;
		sw->routes = NULL;
		smd->routes_repairable = sw->repairable;
		snprintf(smd->routes_engine, sizeof(smd->routes_engine), "%s", sw->engine);
		mcast_sweep_end(smd, sw->forest);
		sw->forest = NULL;
		/* What the model in force was compared with */
		cabling_adopt(smd, sw->cabling, smd->heavy_sweeps, sw->enforce);
		sw->cabling = NULL;
	} else {
		mcast_sweep_end(smd, NULL);
	}
	return sw->r;
}

int sweep_advance(struct sweep *sw)
{
	struct txn *txn = sw->smd->txn;
	bool moved = false;

	if (sw->abandoned)
		return SWEEP_WAITING;
	while (sw->phase < NPHASES) {
		const struct sweep_phase *ph = &sweep_phases[sw->phase];
		bool run = sw->r == 0 || (ph->flags & ALWAYS);
		size_t queued;
		int r;

		if (sw->computing)
			return moved ? SWEEP_MOVED : SWEEP_WAITING;
		switch (sw->stage) {
		case ST_ENTER:
			sw->phase_s[sw->phase] = -1;
			if (phase_skipped(sw, ph)) {
				sw->phase++;
				continue;
			}
			log_debug("sweep: phase %s", ph->name);
			sw->phase_t0 = txn_now_us();
			sw->it = 0;
			sw->work_r = 0;
			sw->stage = ST_WORK;
			moved = true;
			r = ph->enter ? ph->enter(sw) : 0;
			if (r < 0) {
				sweep_fail(sw, r);
				sw->stage = ST_IDLE;
			}
			break;
		case ST_WORK:
			sw->stage = ST_STEP;
			if (!ph->work || !run)
				break;
			r = loop_work(sw->smd->loop, sweep_work, sweep_work_done, sw);
			if (r < 0)
				sw->work_r = r;
			else
				sw->computing = true;
			break;
		case ST_STEP:
			if (sw->err)
				sweep_fail(sw, sw->err);
			if (!ph->step || !(sw->r == 0 || (ph->flags & ALWAYS))) {
				sw->stage = ST_IDLE;
				break;
			}
			queued = txn_queued(txn);
			sw->step_t0 = txn_now_us();
			r = ph->step(sw);
			moved |= txn_queued(txn) > queued;
			if (r == PHASE_WAIT)
				return moved ? SWEEP_MOVED : SWEEP_WAITING;
			if (r == PHASE_MORE) {
				/* Time is up, work is left: go on after the loop looked around */
				loop_kick(sw->smd->loop);
				return SWEEP_MOVED;
			}
			if (r < 0)
				sweep_fail(sw, r);
			sw->stage = ST_IDLE;
			break;
		case ST_IDLE:
			/* Every answer in: callbacks reference this sweep's model */
			if (!txn_idle(txn))
				return moved ? SWEEP_MOVED : SWEEP_WAITING;
			if (sw->err)
				sweep_fail(sw, sw->err);
			sw->stage = ST_FINISH;
			break;
		case ST_FINISH:
			r = 0;
			if (ph->finish && (sw->r == 0 || (ph->flags & ALWAYS))) {
				r = ph->finish(sw);
				moved = true;
				if (r == PHASE_MORE) {
					sw->stage = ST_IDLE;	/* more answers to wait for */
					break;
				}
			}
			if (r == PHASE_STOP)
				sw->stop = true;
			else if (r < 0)
				sweep_fail(sw, r);
			sw->phase_s[sw->phase] = (double)(txn_now_us() - sw->phase_t0) / 1e6;
			sw->phase++;
			sw->stage = ST_ENTER;
			break;
		}
	}
	return sweep_end(sw);
}

int sweep_start(struct smd *smd, struct sweep_result *res, struct sweep **out)
{
	struct sweep *sw;
	int r;

	*out = NULL;
	memset(res, 0, sizeof(*res));
	sw = calloc(1, sizeof(*sw));
	if (!sw)
		return -ENOMEM;
	sw->smd = smd;
	sw->res = res;
	sw->t0 = txn_now_us();
	sw->started = time(NULL);
	r = fabric_new(&sw->f);
	if (r < 0) {
		free(sw);
		return r;
	}
	smd->smps_base += txn_stats(smd->txn)->sent;
	txn_stats_reset(smd->txn);
	vlread_stop(smd);	/* its model is about to be replaced */
	smd->act_count++;
	mkey_sweep_start(smd);
	mcast_sweep_begin(smd);
	log_record(&sw->problems);
	*out = sw;
	return 0;
}

void sweep_abandon(struct sweep *sw)
{
	sw->abandoned = true;
	atomic_store(&sw->cancel, true);
	if (!sw->err)
		sw->err = -ECANCELED;
	/* A save on the worker commits nothing now: the database stays as it was */
	if (sw->computing && sweep_phases[sw->phase].work == save_work)
		store_interrupt(sw->smd->store);
}

bool sweep_computing(const struct sweep *sw)
{
	return sw->computing;
}

const struct log_record *sweep_problems(const struct sweep *sw)
{
	return &sw->problems;
}

struct sa_index *sweep_take_sa_index(struct sweep *sw, int *err)
{
	struct sa_index *ix = sw->sa_index;

	*err = sw->sa_index_r;
	sw->sa_index = NULL;
	return ix;
}

struct sweep *sweep_free(struct sweep *sw)
{
	if (!sw)
		return NULL;
	if (!sw->ended) {
		/* Abandoned: nothing swapped, nothing saved */
		log_record(NULL);
		mcast_sweep_end(sw->smd, NULL);
		/*
		 * ...unless the signal came while SQLite committed it (COMMIT
		 * cannot be interrupted): say so, the database holds it
		 */
		if (sw->saved)
			log_info("shutdown: the abandoned sweep had already been saved");
	}
	disc_free(sw->disc);
	sm_election_free(sw->elect);
	mc_forest_free(sw->forest);
	route_result_free(sw->routes);
	fabric_free(sw->f);
	sa_index_free(sw->sa_index);
	part_index_free(sw->pk_ix);
	plan_report_free(sw->cabling);
	free(sw->ss_parts);
	free(sw->iso);
	free(sw->down_guid);
	free(sw->down_port);
	free(sw);
	return NULL;
}

void sweep_progress(const struct sweep *sw, struct sweep_progress *p)
{
	const struct txn_stats *ts = txn_stats(sw->smd->txn);
	uint64_t now = txn_now_us();
	unsigned int i = sw->phase < NPHASES ? sw->phase : NPHASES - 1;

	memset(p, 0, sizeof(*p));
	p->kind = "heavy";
	p->phase = sweep_phases[i].name;
	p->phase_no = i + 1;
	p->phases = NPHASES;
	p->seconds = (double)(now - sw->t0) / 1e6;
	p->phase_seconds = (double)(now - sw->phase_t0) / 1e6;
	p->smps_sent = ts->sent;
	p->smps_done = ts->answered + ts->failed + ts->cancelled;
	p->smps_waiting = txn_queued(sw->smd->txn) + txn_outstanding(sw->smd->txn);
	p->smps_inflight = txn_outstanding(sw->smd->txn);
	p->computing = sw->computing;
}
