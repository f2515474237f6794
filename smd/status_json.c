// SPDX-License-Identifier: MIT
/*
 * The status snapshot as JSON: `smctl --json status`, one object whose
 * first member is "status" (smctl(8) documents every key). Reads the
 * snapshot only.
 */
#include <stdio.h>
#include <string.h>

#include "smd/status.h"
#include "topo/discover.h"
#include "util/json.h"
#include "util/text.h"

void status_problems_json(struct json *j, const struct sweep_result *r)
{
	json_obj_begin(j, "problem_counts");
	for (size_t i = 0; i < status_nproblems; i++)
		json_u64(j, status_problems[i].key, status_problem_value(r, &status_problems[i]));
	json_obj_end(j);
}

void status_json_smps(struct json *j, const char *key, uint64_t sent, uint64_t timed_out,
		      uint64_t unanswered)
{
	json_obj_begin(j, key);
	json_u64(j, "sent", sent);
	json_u64(j, "timed_out", timed_out);
	json_u64(j, "unanswered", unanswered);
	json_obj_end(j);
}

/* sweep_running (null between sweeps), sweep_smps, event_loop */
static void json_progress(const struct status_snapshot *s, struct json *j)
{
	const struct sweep_progress *p = &s->progress;

	if (s->sweeping) {
		json_obj_begin(j, "sweep_running");
		json_str(j, "kind", p->kind);
		json_str(j, "phase", p->phase);
		json_u64(j, "phase_no", p->phase_no);
		json_u64(j, "phases", p->phases);
		json_bool(j, "computing", p->computing);
		if (p->beside)
			json_str(j, "beside", p->beside);
		else
			json_null(j, "beside");
		json_double(j, "seconds", p->seconds);
		json_double(j, "phase_seconds", p->phase_seconds);
		json_obj_end(j);
		json_obj_begin(j, "sweep_smps");
		json_u64(j, "sent", p->smps_sent);
		json_u64(j, "done", p->smps_done);
		json_u64(j, "waiting", p->smps_waiting);
		json_u64(j, "in_flight", p->smps_inflight);
		json_obj_end(j);
	} else {
		json_null(j, "sweep_running");
	}
	json_obj_begin(j, "event_loop");
	json_double(j, "longest_handler_ms", s->loop_longest_ms);
	json_str(j, "longest_handler", s->loop_longest_what);
	json_u64(j, "over_100ms", s->loop_slow);
	json_obj_end(j);
}

static void json_subnet(const struct status_snapshot *s, struct json *j)
{
	const struct sweep_result *m = s->model;

	switch (s->subnet) {
	case STATUS_SUBNET_MASTERS:
		json_str(j, "subnet", "the master's");
		return;
	case STATUS_SUBNET_UNKNOWN:
		json_str(j, "subnet", "unknown");
		return;
	case STATUS_SUBNET_KNOWN:
		break;
	}
	json_str(j, "subnet", m->up ? "up" : "not up");
	json_u64(j, "nodes", m->nodes);
	json_u64(j, "switches", m->switches);
	json_u64(j, "cas", m->cas);
	json_u64(j, "ca_ports", m->endports - m->switches);
	json_u64(j, "links", m->links);
	json_u64(j, "lids", m->lids);
	json_obj_begin(j, "routing");
	json_str(j, "engine", m->engine);
	json_u64(j, "vls", m->vls);
	json_u64(j, "vls_budget", m->vls_budget);
	json_obj_end(j);
	json_obj_begin(j, "partitions");
	json_u64(j, "count", s->partitions);
	json_str(j, "file", s->partition_file);
	json_u64(j, "switch_ports_enforcing", m->pkey_enforced);
	json_obj_end(j);
	json_u64(j, "duplicate_guids", m->dup_guids);
	json_arr_begin(j, "duplicates");
	for (unsigned int i = 0; i < m->ndups && i < SWEEP_DUPS_MAX; i++) {
		char a[256], b[256];

		dr_path_format(&m->dups[i].first, a, sizeof(a));
		dr_path_format(&m->dups[i].again, b, sizeof(b));
		json_obj_begin(j, NULL);
		json_str(j, "kind", m->dups[i].port_guid ? "port" : "node");
		json_hex64(j, "guid", m->dups[i].guid);
		json_str(j, "path", a);
		json_str(j, "again", b);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* null without a plan */
static void json_cabling(const struct status_cabling *c, struct json *j)
{
	if (!c->configured) {
		json_null(j, "cabling");
		return;
	}
	json_obj_begin(j, "cabling");
	if (c->file[0])
		json_str(j, "file", c->file);
	else
		json_null(j, "file");
	if (c->error[0])
		json_str(j, "error", c->error);
	else
		json_null(j, "error");
	json_u64(j, "nodes", c->nodes);
	json_u64(j, "cables", c->cables);
	json_bool(j, "enforce", c->enforce);
	json_bool(j, "compared", c->compared);
	if (c->compared) {
		json_u64(j, "sweep", c->sweep);
		json_u64(j, "total", c->total);
		json_obj_begin(j, "counts");
		for (unsigned int k = 0; k < PLAN_KINDS; k++)
			json_u64(j, plan_kind_name(k), c->count[k]);
		json_obj_end(j);
		json_u64(j, "links_held", c->held);
		json_u64(j, "links_kept", c->kept);
	}
	json_obj_end(j);
}

static void json_mkey(const struct status_mkey *k, struct json *j)
{
	json_obj_begin(j, "m_key");
	json_bool(j, "set", k->set);
	json_u64(j, "protect_bits", k->protect_bits);
	json_u64(j, "lease_period", k->lease_period);
	if (k->tracking) {
		json_u64(j, "bad_mkey_traps", k->traps);
		json_u64(j, "bad_mkey_traps_own", k->traps_own);
		json_u64(j, "lease_stopping_reads", k->guards);
		json_u64(j, "taken_over", k->taken);
		json_u64(j, "recovered", k->recovered);
		if (k->last) {
			json_obj_begin(j, "bad_mkey_last");
			json_i64(j, "time", (int64_t)k->last_when);
			json_str(j, "text", k->last);
			json_obj_end(j);
		}
		json_arr_begin(j, "unknown");
		for (size_t i = 0; i < k->nunknown; i++) {
			const struct status_mkey_port *e = &k->unknown[i];

			json_obj_begin(j, NULL);
			json_hex64(j, "guid", e->guid);
			json_str(j, "port", e->name);
			if (e->never)
				json_null(j, "read_again_s");
			else
				json_u64(j, "read_again_s", e->read_again_s);
			json_obj_end(j);
		}
		json_arr_end(j);
	}
	json_obj_end(j);
}

static void json_mcast(const struct status_snapshot *s, struct json *j)
{
	if (!s->has_mcast)
		return;
	json_obj_begin(j, "mcast");
	json_u64(j, "groups", s->mc_groups);
	json_u64(j, "memberships", s->mc_memberships);
	json_u64(j, "max_mlid", s->mc_max_mlid);
	if (s->has_forest) {
		json_u64(j, "trees", s->mc_trees);
		json_u64(j, "tree_switches", s->mc_tree_switches);
		json_u64(j, "unsafe", s->mc_unsafe);
		json_u64(j, "mft_blocks_pending", s->mc_blocks_pending);
	}
	json_u64(j, "created", s->mc_created);
	json_u64(j, "deleted", s->mc_deleted);
	json_u64(j, "mft_blocks_read", s->mc_blocks_read);
	json_u64(j, "mft_blocks_written", s->mc_blocks_written);
	json_u64(j, "mft_blocks_failed", s->mc_blocks_failed);
	json_obj_end(j);
}

static void json_sweeps(const struct status_snapshot *s, struct json *j)
{
	const struct sweep_result *l = s->last;

	json_obj_begin(j, "sweeps");
	json_u64(j, "heavy", s->heavy_sweeps);
	json_u64(j, "light", s->light_sweeps);
	json_obj_end(j);
	if (s->has_light) {
		json_obj_begin(j, "last_light_sweep");
		json_i64(j, "ended", (int64_t)s->light_end);
		json_i64(j, "ago", (int64_t)(s->now - s->light_end));
		json_u64(j, "switches", s->light_switches);
		json_bool(j, "changed", s->light_changed);
		json_obj_end(j);
	}
	if (!l)
		return;
	json_obj_begin(j, "last_sweep");
	json_i64(j, "ended", (int64_t)s->last_end);
	json_i64(j, "ago", (int64_t)(s->now - s->last_end));
	json_double(j, "seconds", l->seconds);
	json_str(j, "result", s->last_result);
	status_json_smps(j, "smps", l->smps, l->timeouts, l->failed);
	if (!s->last_failed)
		status_problems_json(j, l);
	json_obj_end(j);
}

static void json_window(const struct status_snapshot *s, struct json *j)
{
	const struct txn_window *w = &s->window;

	if (!s->has_window) {
		json_null(j, "smp_window");
		return;
	}
	json_obj_begin(j, "smp_window");
	json_u64(j, "size", w->size);
	json_u64(j, "min", w->min);
	json_u64(j, "max", w->max);
	json_bool(j, "fixed", w->min == w->max);
	json_u64(j, "known_good", w->safe);
	json_u64(j, "shrinks", w->shrinks);
	if (w->shrinks)
		json_u64(j, "last_shrink_ago", s->window_shrink_ago_s);
	else
		json_null(j, "last_shrink_ago");
	json_u64(j, "presumed_lost", w->presumed);
	json_u64(j, "answered_late", w->spurious);
	json_u64(j, "rtt_us", w->rtt_us);
	json_u64(j, "reorder_us", w->reorder_us);
	json_obj_end(j);
}

static void json_traps(const struct status_snapshot *s, struct json *j)
{
	json_u64(j, "traps", s->traps);
	if (!s->has_traps)
		return;
	json_obj_begin(j, "trap_verdicts");
	json_u64(j, "swept", s->trap_swept);
	json_u64(j, "held_back", s->trap_held_back);
	json_u64(j, "reported", s->trap_reported);
	json_u64(j, "ignored", s->trap_ignored);
	json_u64(j, "unknown_lids", s->trap_unknown);
	json_u64(j, "from_flooders", s->trap_flooding);
	json_obj_end(j);
	json_arr_begin(j, "trap_flooders");
	for (size_t i = 0; i < s->nflooders; i++) {
		json_obj_begin(j, NULL);
		json_u64(j, "lid", s->flooders[i].lid);
		json_str(j, "node", s->flooders[i].node);
		json_u64(j, "port", s->flooders[i].port);
		json_hex64(j, "guid", s->flooders[i].guid);
		json_obj_end(j);
	}
	json_arr_end(j);
}

/* The performance manager and the health rules: null without them */
static void json_health(const struct status_health *h, struct json *j)
{
	if (!h->action) {
		json_null(j, "health");
		return;
	}
	json_obj_begin(j, "health");
	json_str(j, "action", h->action);
	json_u64(j, "window", h->window);
	json_u64(j, "unhealthy", h->unhealthy);
	json_obj_begin(j, "unhealthy_by_rule");
	for (unsigned int r = 0; r < HEALTH_RULES; r++)
		json_u64(j, health_rules[r].name, h->broken[r]);
	json_obj_end(j);
	json_obj_begin(j, "became_unhealthy");
	for (unsigned int r = 0; r < HEALTH_RULES; r++)
		json_u64(j, health_rules[r].name, h->became[r]);
	json_obj_end(j);
	json_u64(j, "isolated", h->isolated);
	json_u64(j, "kept", h->kept);
	json_u64(j, "reports", h->reports);
	json_u64(j, "links_seen_down", h->links_seen_down);
	json_obj_begin(j, "counters");
	json_bool(j, "enabled", h->perf_enabled);
	json_bool(j, "running", h->perf_running);
	json_bool(j, "paused", h->perf_paused);
	json_u64(j, "interval", h->perf_interval);
	json_u64(j, "sweeps", h->perf_sweeps);
	json_double(j, "last_seconds", h->perf_last_seconds);
	json_i64(j, "last_end", (int64_t)h->perf_last_end);
	json_u64(j, "ports", h->perf_last_ports);
	json_u64(j, "read", h->perf_last_read);
	json_u64(j, "unanswered", h->perf_last_unanswered);
	json_u64(j, "last_gmps", h->perf_last_gmps);
	json_u64(j, "gmps_sent", h->gmps_sent);
	json_u64(j, "gmp_timeouts", h->gmps_timed_out);
	json_u64(j, "gmps_unanswered", h->gmps_unanswered);
	json_u64(j, "answers_dropped", h->bad_answers);
	json_u64(j, "error_status", h->bad_status);
	json_u64(j, "clears", h->clears);
	json_u64(j, "resets", h->resets);
	json_u64(j, "saturations", h->saturations);
	json_obj_end(j);
	json_obj_end(j);
}

void status_json(const struct status_snapshot *s, struct json *j)
{
	char buf[LOG_RECORD_LEN];

	json_obj_begin(j, NULL);
	json_str(j, "status", s->status);
	json_str(j, "version", s->version);
	json_i64(j, "pid", (int64_t)s->pid);
	json_i64(j, "started", (int64_t)s->started);
	json_str(j, "state", s->state);
	json_hex64(j, "sm_guid", s->sm_guid);
	json_u64(j, "sm_priority", s->sm_priority);
	json_u64(j, "sm_lid", s->sm_lid);
	json_progress(s, j);
	if (s->standby) {
		json_obj_begin(j, "master");
		json_hex64(j, "guid", s->master_guid);
		json_u64(j, "priority", s->master_priority);
		json_obj_end(j);
	}
	json_subnet(s, j);
	json_cabling(&s->cabling, j);
	json_health(&s->health, j);
	json_bool(j, "sm_key", s->sm_key);
	json_arr_begin(j, "sm_foreign");
	for (size_t i = 0; i < s->nforeign; i++) {
		json_obj_begin(j, NULL);
		json_hex64(j, "guid", s->foreign[i].guid);
		json_u64(j, "priority", s->foreign[i].priority);
		json_str(j, "state", s->foreign[i].state);
		json_obj_end(j);
	}
	json_arr_end(j);
	json_u64(j, "sminfo_refused", s->sminfo_refused);
	json_mkey(&s->mkey, j);
	json_bool(j, "sa", s->sa_serving);
	json_bool(j, "sa_key", s->sa_key);
	if (s->has_sa) {
		json_obj_begin(j, "sa_requests");
		json_u64(j, "received", s->sa_received);
		json_u64(j, "answered", s->sa_answered);
		json_u64(j, "errors", s->sa_errors);
		json_u64(j, "refused", s->sa_refused);
		json_u64(j, "dropped", s->sa_dropped);
		json_u64(j, "bad_keys", s->sa_bad_keys);
		json_obj_end(j);
	}
	json_mcast(s, j);
	json_sweeps(s, j);
	status_json_smps(j, "smps", s->smps_sent, s->smps_timed_out, s->smps_lost);
	json_u64(j, "smps_all", s->smps_all);
	json_window(s, j);
	json_traps(s, j);
	json_str(j, "resweep_pending", s->resweep_pending);
	json_u64(j, "problems", s->problems);
	json_arr_begin(j, "problem_list");
	for (size_t i = 0; i < s->nproblem_list; i++)
		json_str(j, NULL, text_printable(s->problem_list[i], buf, sizeof(buf)));
	json_arr_end(j);
	json_obj_end(j);
}
