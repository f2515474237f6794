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
 *           what it finds goes into struct sweep for done to report;
 *   step    on the loop, called again and again: submits the phase's SMPs
 *           node by node (sw->it is its place) until the transaction queue
 *           holds SWEEP_QUEUE_MAX or its time slice is used (sweep_yield),
 *           returns PHASE_WAIT / PHASE_MORE to be called again, 0 when done;
 *   done    on the loop, once every SMP the phase sent was answered: checks,
 *           logs, may return PHASE_MORE to wait for more answers (a
 *           handover) or PHASE_STOP to end the sweep early (standby).
 * An error skips to the phases marked ALWAYS (saving the sweep's record).
 * A phase marked BESIDE runs while the work part before it computes (the
 * P_Key tables while the worker routes): the working phase's done part
 * waits for the work, and the first phase not marked BESIDE for both.
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

#include "smd/sweep_int.h"

int sweep_yield(struct sweep *sw)
{
	if (sw->err)
		return sw->err;
	if (txn_queued(sw->smd->txn) > SWEEP_QUEUE_MAX)
		return PHASE_WAIT;
	if (txn_now_us() - sw->step_t0 > SWEEP_SLICE_US)
		return PHASE_MORE;
	return 0;
}

double sweep_now_s(void)
{
	return (double)txn_now_us() / 1e6;
}

const char *sweep_node_name(const struct fab_node *n)
{
	return n->desc_valid && n->desc[0] ? n->desc : "(no description)";
}

const char *sweep_port_label(const struct fab_port *p, char *buf, size_t len)
{
	snprintf(buf, len, "%s port %u (GUID 0x%016" PRIx64 ")", sweep_node_name(p->node), p->num,
		 p->node->guid);
	return buf;
}

int sweep_submit_kept(struct sweep *sw, const struct smp *req, txn_cb cb, void *arg)
{
	int r = sw->abandoned ? -ECANCELED : txn_submit(sw->smd->txn, req, 0, cb, arg);

	if (r < 0 && !sw->err)
		sw->err = r;
	return r;
}

int sweep_submit(struct sweep *sw, const struct smp *req, txn_cb cb, void *arg)
{
	int r = sweep_submit_kept(sw, req, cb, arg);

	if (r < 0)
		free(arg);
	return r;
}

/* ---- the sweep ---- */

/*
 * Every phase of a heavy sweep, in order. A newcomer follows one sweep here:
 * each part is sweep_<phase>_<part> in the phase's file (sweep_int.h says
 * which); what each kind of part may do is at the top of this file.
 */
static const struct sweep_phase sweep_phases[] = {
	{ "discover", .enter = sweep_discover_enter, .done = sweep_discover_done },
	{ "elect", .enter = sweep_elect_enter, .done = sweep_elect_done, .flags = ELECT },
	{ "cabling", .enter = sweep_cabling_enter, .work = sweep_cabling_work,
	  .done = sweep_cabling_done, .flags = CABLE },
	{ "health", .enter = sweep_health_enter, .work = sweep_health_work,
	  .done = sweep_health_done },
	{ "lids", .work = sweep_lids_work, .done = sweep_lids_done },
	{ "mkey", .enter = sweep_mkey_enter },
	/* The P_Key tables go out while the worker routes (P_Keys are no input of routing) */
	{ "route", .enter = sweep_route_enter, .work = sweep_route_work,
	  .done = sweep_route_done },
	{ "pkeys", .enter = sweep_pkeys_enter, .step = sweep_pkeys_step,
	  .done = sweep_pkeys_done, .flags = BESIDE },
	{ "vl-tables", .enter = sweep_vl_enter, .step = sweep_vl_step },
	{ "fdr10", .step = sweep_fdr10_step },
	{ "ports", .step = sweep_ports_step },
	{ "lfts", .step = sweep_lfts_step },
	{ "switch-info", .step = sweep_switch_info_step },
	{ "activate", .step = sweep_activate_step },
	{ "mcast", .enter = sweep_mcast_enter, .work = sweep_mcast_work, .step = sweep_mcast_step,
	  .flags = MCAST },
	{ "mcast-check", .work = sweep_mcast_check_work, .done = sweep_mcast_check_done,
	  .flags = MCAST },
	{ "verify", .done = sweep_verify_done },
	{ "save", .enter = sweep_save_enter, .work = sweep_save_work, .done = sweep_save_done,
	  .flags = ALWAYS },
	{ "sa-index", .work = sweep_sa_index_work },
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

/*
 * The worker thread runs the work part (sw->job: the driver may have moved
 * on to BESIDE phases); the loop then hands its return on and clears computing
 */
static void sweep_work(void *arg)
{
	struct sweep *sw = arg;

	sw->job_r = sw->job(sw);
}

static void sweep_work_done(void *arg)
{
	struct sweep *sw = arg;

	if (!sw->bg)
		sw->work_r = sw->job_r;
	sw->computing = false;
}

/* The work that ran beside the BESIDE phases ended: its phase's done part */
static void bg_finish(struct sweep *sw)
{
	unsigned int i = sw->bg - 1;
	const struct sweep_phase *ph = &sweep_phases[i];
	int work_r = sw->work_r, r = 0;

	sw->bg = 0;
	sw->work_r = sw->job_r;
	if (ph->done && (sw->r == 0 || (ph->flags & ALWAYS)))
		r = ph->done(sw);
	sw->work_r = work_r;
	if (r == PHASE_STOP)
		sw->stop = true;
	else if (r < 0)
		sweep_fail(sw, r);
	sw->phase_s[i] = (double)(txn_now_us() - sw->bg_t0) / 1e6;
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
		smd->routes_base_max = sw->base_max;
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

		if (sw->bg && !sw->computing) {
			bg_finish(sw);
			moved = true;
			continue;
		}
		if (sw->computing && !(sw->bg && (ph->flags & BESIDE)))
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
			sw->job = ph->work;
			r = loop_work(sw->smd->loop, sweep_work, sweep_work_done, sw);
			if (r < 0) {
				sw->work_r = r;
				break;
			}
			sw->computing = true;
			if (!ph->step && sw->phase + 1 < NPHASES &&
			    (sweep_phases[sw->phase + 1].flags & BESIDE)) {
				/* The next phases go on; this one's done part waits */
				sw->bg = sw->phase + 1;
				sw->bg_t0 = sw->phase_t0;
				sw->phase++;
				sw->stage = ST_ENTER;
			}
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
			if (ph->done && (sw->r == 0 || (ph->flags & ALWAYS))) {
				r = ph->done(sw);
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
	if (sw->computing)
		return moved ? SWEEP_MOVED : SWEEP_WAITING;
	if (sw->bg)
		bg_finish(sw);
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
	if (sw->computing && sw->job == sweep_save_work)
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
	free(sw->lft);
	free(sw);
	return NULL;
}

void sweep_progress(const struct sweep *sw, struct sweep_progress *p)
{
	const struct txn_stats *ts = txn_stats(sw->smd->txn);
	uint64_t now = txn_now_us();
	unsigned int i = sw->phase < NPHASES ? sw->phase : NPHASES - 1;
	uint64_t t0 = sw->phase_t0;

	memset(p, 0, sizeof(*p));
	p->computing = sw->computing;
	if (sw->bg && (sw->phase >= NPHASES || !(sweep_phases[i].flags & BESIDE))) {
		/* Past the BESIDE phases: waiting for the work beside them */
		i = sw->bg - 1;
		t0 = sw->bg_t0;
	} else if (sw->bg) {
		p->beside = sweep_phases[sw->bg - 1].name;
		p->computing = false;
	}
	p->kind = "heavy";
	p->phase = sweep_phases[i].name;
	p->phase_no = i + 1;
	p->phases = NPHASES;
	p->seconds = (double)(now - sw->t0) / 1e6;
	p->phase_seconds = (double)(now - t0) / 1e6;
	p->smps_sent = ts->sent;
	p->smps_done = ts->answered + ts->failed + ts->cancelled;
	p->smps_waiting = txn_queued(sw->smd->txn) + txn_outstanding(sw->smd->txn);
	p->smps_inflight = txn_outstanding(sw->smd->txn);
}
