// SPDX-License-Identifier: MIT
/*
 * The status snapshot: filled from the daemon's state (the one place that
 * reads it for status), the sweep's problem counters table, and STATUS=.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "autoconfig.h"
#include "mad/port.h"
#include "mad/txn.h"
#include "sa/sa.h"
#include "smd/cabling.h"
#include "smd/health.h"
#include "smd/light.h"
#include "smd/mcast.h"
#include "smd/mkey.h"
#include "smd/perf.h"
#include "smd/sm.h"
#include "smd/smd.h"
#include "smd/status.h"
#include "smd/trap.h"
#include "topo/mc.h"
#include "topo/part.h"
#include "util/ctl_proto.h"

const char *status_word(const struct smd *smd)
{
	const struct sweep_result *m = smd->stats.model;

	switch (smd->sm_state) {
	case SM_STANDBY:
		return CONTROL_STATUS_OK;	/* the master runs the subnet */
	case SM_NOT_ACTIVE:
		return CONTROL_STATUS_DOWN;	/* disabled by another SM: nobody may be */
	case SM_DISCOVERING:
	case SM_MASTER:
		break;
	}
	return m && m->up ? CONTROL_STATUS_OK : CONTROL_STATUS_DOWN;
}

static void fill_outcome(const struct smd *smd, struct status_snapshot *s)
{
	const struct sweep_result *r = smd->stats.last;

	if (!r)
		snprintf(s->result_buf, sizeof(s->result_buf), "none yet");
	else if (smd->stats.last_err)
		snprintf(s->result_buf, sizeof(s->result_buf), "failed (%s)",
			 strerror(-smd->stats.last_err));
	else if (r->standby)
		snprintf(s->result_buf, sizeof(s->result_buf), "standby (discovery only)");
	else
		snprintf(s->result_buf, sizeof(s->result_buf), "%s", r->up ? "up" : "NOT up");
	s->last_result = s->result_buf;
}

static int fill_foreign(const struct smd *smd, struct status_snapshot *s)
{
	struct status_foreign_sm *f;
	size_t n = 0;

	for (size_t i = 0; i < smd->npeers; i++)
		n += smd->peers[i].foreign;
	if (!n)
		return 0;
	f = calloc(n, sizeof(*f));
	if (!f)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < smd->npeers; i++) {
		if (!smd->peers[i].foreign)
			continue;
		f[n].guid = smd->peers[i].guid;
		f[n].priority = smd->peers[i].priority;
		f[n].state = sm_state_name(smd->peers[i].state);
		n++;
	}
	s->foreign = f;
	s->nforeign = n;
	s->owned[0] = f;
	return 0;
}

static void fill_mcast(const struct smd *smd, struct status_snapshot *s)
{
	const struct mcast_stats *ms;
	const struct mc_db *db;
	struct mc_forest *fo;

	if (!smd->mcast)
		return;
	ms = mcast_stats(smd);
	db = mcast_db(smd);
	fo = mcast_forest(smd);
	s->has_mcast = true;
	for (const struct mc_group *g = mc_db_next(db, 0); g; g = mc_db_next(db, g->mlid))
		s->mc_memberships += g->nmembers;
	s->mc_groups = mc_db_count(db);
	s->mc_max_mlid = mc_db_max_mlid(db);
	if (fo) {
		s->has_forest = true;
		s->mc_trees = mc_forest_stats(fo)->trees;
		s->mc_tree_switches = mc_forest_stats(fo)->switches;
		s->mc_unsafe = mc_forest_stats(fo)->unsafe;
		s->mc_blocks_pending = mc_forest_pending(fo);
	}
	s->mc_created = ms->created;
	s->mc_deleted = ms->deleted;
	s->mc_blocks_read = ms->blocks_read;
	s->mc_blocks_written = ms->blocks_written;
	s->mc_blocks_failed = ms->block_errors;
}

static void fill_traps(const struct smd *smd, struct status_snapshot *s)
{
	const struct trap_stats *ts;
	uint16_t lids[STATUS_FLOODERS_MAX];
	unsigned int n;

	if (!smd->trapt)
		return;
	ts = trap_stats(smd->trapt);
	s->has_traps = true;
	s->trap_swept = ts->swept;
	s->trap_held_back = ts->deferred;
	s->trap_reported = ts->reported;
	s->trap_ignored = ts->ignored;
	s->trap_unknown = ts->unknown;
	s->trap_flooding = ts->flooding;
	n = trap_flooders(smd->trapt, txn_now_us(), lids, STATUS_FLOODERS_MAX);
	for (unsigned int i = 0; i < n && i < STATUS_FLOODERS_MAX; i++) {
		const struct fab_port *p = smd->fabric ? fabric_port_by_lid(smd->fabric, lids[i]) :
					   NULL;
		struct status_flooder *f = &s->flooders[s->nflooders++];

		f->lid = lids[i];
		f->node = p ? p->node->desc : "";
		f->port = p ? p->num : 0;
		f->guid = p ? p->guid : 0;
	}
}

int status_fill(const struct smd *smd, struct status_snapshot *s)
{
	const struct smd_stats *st = &smd->stats;
	int r;

	memset(s, 0, sizeof(*s));
	s->status = status_word(smd);
	s->version = PACKAGE_VERSION;
	s->pid = (long)getpid();
	s->started = st->started;
	s->now = time(NULL);
	s->state = sm_state_name(smd->sm_state);
	s->sm_guid = smd->port ? mad_port_attr(smd->port)->port_guid : 0;
	s->sm_priority = smd->cfg.sm_priority;
	s->sm_lid = smd->sm_lid;

	if (smd->sweep) {
		sweep_progress(smd->sweep, &s->progress);
		s->sweeping = true;
	} else if (smd->light) {
		light_progress(smd->light, &s->progress);
		s->sweeping = true;
	}
	s->loop_longest_ms = (double)st->loop_max_us / 1000;
	s->loop_longest_what = st->loop_max_what ? st->loop_max_what : "none";
	s->loop_slow = st->loop_slow;

	s->standby = smd->sm_state == SM_STANDBY;
	s->not_active = smd->sm_state == SM_NOT_ACTIVE;
	s->master_guid = smd->master.guid;
	s->master_priority = smd->master.priority;
	if (smd->sm_state == SM_STANDBY || smd->sm_state == SM_NOT_ACTIVE)
		s->subnet = STATUS_SUBNET_MASTERS;
	else if (st->model)
		s->subnet = STATUS_SUBNET_KNOWN;
	s->model = st->model;
	s->partitions = smd->parts ? smd->parts->n : 0;
	s->partition_file = smd->cfg.partition_config;
	cabling_status_fill(smd, &s->cabling);
	health_status_fill(smd, &s->health);

	s->sm_key = smd->cfg.sm_key != 0;
	r = fill_foreign(smd, s);
	if (r == 0)
		r = mkey_status_fill(smd, &s->mkey, &s->owned[1]);
	if (r < 0) {
		status_release(s);
		return r;
	}
	s->sminfo_refused = smd->sminfo_refused;

	s->sa_serving = smd->sa_serving;
	s->sa_key = smd->cfg.sa_key != 0;
	if (smd->sa) {
		const struct sa_stats *ss = sa_stats(smd->sa);

		s->has_sa = true;
		s->sa_received = ss->requests;
		s->sa_answered = ss->answered;
		s->sa_errors = ss->errors;
		s->sa_refused = ss->refused;
		s->sa_dropped = ss->dropped + ss->shed;
		s->sa_bad_keys = ss->bad_keys;
	}
	fill_mcast(smd, s);

	s->heavy_sweeps = smd->heavy_sweeps;
	s->light_sweeps = smd->light_sweeps;
	if (st->light) {
		s->has_light = true;
		s->light_end = st->light_end;
		s->light_switches = st->light->switches;
		s->light_changed = light_changed(st->light);
	}
	s->last = st->last;
	s->last_end = st->last_end;
	s->last_failed = st->last_err != 0;
	fill_outcome(smd, s);

	s->smps_sent = st->smps_sent;
	s->smps_timed_out = st->smps_timed_out;
	s->smps_lost = st->smps_lost;
	s->smps_all = smd->smps_base + (smd->txn ? txn_stats(smd->txn)->sent : 0);
	if (smd->txn) {
		s->has_window = true;
		txn_window_get(smd->txn, &s->window);
		if (s->window.shrinks)
			s->window_shrink_ago_s = (txn_now_us() - s->window.last_shrink_us) / 1000000u;
	}
	s->traps = st->traps;
	fill_traps(smd, s);
	s->resweep_pending = smd->resweep ? (smd->resweep_heavy ? "heavy" : "yes") : "no";
	s->problems = st->problems.total;
	for (unsigned int i = 0; i < st->problems.n && i < LOG_RECORD_MAX; i++)
		s->problem_list[s->nproblem_list++] = st->problems.msg[i];
	return 0;
}

int status_fill_ports(const struct smd *smd, struct status_snapshot *s)
{
	size_t n = perf_port_count(smd), k = 0;
	struct status_port *v;

	s->ports = NULL;
	s->nports = 0;
	if (!n)
		return 0;
	v = malloc(n * sizeof(*v));
	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct perf_port *pp = perf_port_at(smd, i);
		struct status_port *sp;

		/* Ports in the model that smd has read: a series smd does not know is left out */
		if (!pp->present || !pp->st.known)
			continue;
		sp = &v[k++];
		sp->guid = pp->guid;
		sp->port = pp->port;
		sp->healthy = !pp->broken;
		sp->isolated = health_isolated(smd, pp->guid, pp->port);
		memcpy(sp->desc, pp->desc, sizeof(sp->desc));
		memcpy(sp->total, pp->st.total, sizeof(sp->total));
	}
	s->owned[3] = v;
	s->ports = v;
	s->nports = k;
	return 0;
}

void status_release(struct status_snapshot *s)
{
	for (size_t i = 0; i < sizeof(s->owned) / sizeof(s->owned[0]); i++) {
		free(s->owned[i]);
		s->owned[i] = NULL;
	}
	s->foreign = NULL;
	s->nforeign = 0;
	s->ports = NULL;
	s->nports = 0;
	s->mkey.unknown = NULL;
	s->mkey.nunknown = 0;
}
