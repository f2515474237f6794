// SPDX-License-Identifier: MIT
/*
 * The status snapshot as text: "key: value" lines, what `smctl status`
 * prints (smctl(8) describes each line), and the one line of STATUS=; the
 * table of the sweep's problem counters. Reads the snapshot only.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "smd/status.h"
#include "topo/discover.h"
#include "util/text.h"

#define PROBLEM(field, key, one, many) \
	{ offsetof(struct sweep_result, field), false, key, one, many }
#define PROBLEM64(field, key, one, many) \
	{ offsetof(struct sweep_result, field), true, key, one, many }

const struct status_problem status_problems[] = {
	PROBLEM(dup_guids, "duplicate_guids", "duplicate GUID", "duplicate GUIDs"),
	PROBLEM(rejected, "answers_rejected", "discovery answer rejected",
		"discovery answers rejected"),
	PROBLEM(lost_peers, "peers_not_answering", "peer not answering", "peers not answering"),
	PROBLEM(unconfigured, "ports_not_configured", "port not configured",
		"ports not configured"),
	PROBLEM(not_active, "ports_not_active", "port not ACTIVE", "ports not ACTIVE"),
	PROBLEM(lft_errors, "lft_errors", "LFT error", "LFT errors"),
	PROBLEM(table_errors, "vl_table_errors", "VL table error", "VL table errors"),
	PROBLEM(pkey_errors, "pkey_table_errors", "P_Key table error", "P_Key table errors"),
	PROBLEM(unrouted, "unrouted_pairs", "unrouted (switch, LID) pair",
		"unrouted (switch, LID) pairs"),
	PROBLEM64(failed, "smps_unanswered", "SMP unanswered", "SMPs unanswered"),
};

const size_t status_nproblems = sizeof(status_problems) / sizeof(status_problems[0]);

uint64_t status_problem_value(const struct sweep_result *r, const struct status_problem *p)
{
	const char *base = (const char *)r + p->off;

	if (p->wide)
		return *(const uint64_t *)(const void *)base;
	return *(const unsigned int *)(const void *)base;
}

void status_problems_text(const struct sweep_result *r, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < status_nproblems && off < len; i++) {
		uint64_t v = status_problem_value(r, &status_problems[i]);
		int n;

		if (!v)
			continue;
		n = snprintf(buf + off, len - off, "%s%" PRIu64 " %s", off ? ", " : "", v,
			     v == 1 ? status_problems[i].one : status_problems[i].many);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

static const char *fmt_when(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "%lld", (long long)t);
	return buf;
}

/* What the worker does for the phase: ", computing", ", route computing beside it" or "" */
static const char *fmt_computing(const struct sweep_progress *p, char *buf, size_t len)
{
	if (p->beside)
		snprintf(buf, len, ", %s computing beside it", p->beside);
	else
		snprintf(buf, len, "%s", p->computing ? ", computing" : "");
	return buf;
}

static void text_progress(const struct status_snapshot *s, status_emit emit, void *ctx)
{
	const struct sweep_progress *p = &s->progress;
	char how[64];

	if (s->sweeping) {
		emit(ctx, "sweep_running: %s, phase %u of %u (%s%s), %.3f s, this phase %.3f s\n",
		     p->kind, p->phase_no, p->phases, p->phase, fmt_computing(p, how, sizeof(how)),
		     p->seconds, p->phase_seconds);
		emit(ctx, "sweep_smps: %" PRIu64 " sent, %" PRIu64 " done, %" PRIu64
		     " waiting (%u in flight)\n", p->smps_sent, p->smps_done, p->smps_waiting,
		     p->smps_inflight);
	} else {
		emit(ctx, "sweep_running: no\n");
	}
	emit(ctx, "event_loop: longest handler %.1f ms (%s), %" PRIu64 " over 100 ms\n",
	     s->loop_longest_ms, s->loop_longest_what, s->loop_slow);
}

static void text_subnet(const struct status_snapshot *s, status_emit emit, void *ctx)
{
	const struct sweep_result *m = s->model;
	char a[256], b[256];

	switch (s->subnet) {
	case STATUS_SUBNET_MASTERS:
		/* What it programmed as master before, if ever, is the master's now */
		emit(ctx, "subnet: the master's\n");
		return;
	case STATUS_SUBNET_UNKNOWN:
		emit(ctx, "subnet: unknown (no sweep has completed)\n");
		return;
	case STATUS_SUBNET_KNOWN:
		break;
	}
	emit(ctx, "subnet: %s\n", m->up ? "up" : "NOT up");
	emit(ctx, "nodes: %u\n", m->nodes);
	emit(ctx, "switches: %u\n", m->switches);
	emit(ctx, "cas: %u\n", m->cas);
	emit(ctx, "ca_ports: %u\n", m->endports - m->switches);
	emit(ctx, "links: %u\n", m->links);
	emit(ctx, "lids: %u\n", m->lids);
	emit(ctx, "routing: %s, %u of %u VLs\n", m->engine, m->vls, m->vls_budget);
	emit(ctx, "partitions: %zu (%s), %u switch ports enforcing\n", s->partitions,
	     s->partition_file[0] ? s->partition_file : "no file", m->pkey_enforced);
	/* GUIDs the sweep found at two places: both left out until one goes */
	emit(ctx, "duplicate_guids: %u\n", m->dup_guids);
	for (unsigned int i = 0; i < m->ndups && i < SWEEP_DUPS_MAX; i++) {
		dr_path_format(&m->dups[i].first, a, sizeof(a));
		dr_path_format(&m->dups[i].again, b, sizeof(b));
		emit(ctx, "duplicate_guid: %s 0x%016" PRIx64 " at path %s and at path %s, "
		     "both left out\n", m->dups[i].port_guid ? "port" : "node", m->dups[i].guid,
		     a, b);
	}
}

/* "6 mismatches (4 miswired, 2 missing)" */
static void cabling_counts(const struct status_cabling *c, char *buf, size_t len)
{
	size_t off = (size_t)snprintf(buf, len, "%u mismatch%s", c->total,
				      c->total == 1 ? "" : "es");

	for (unsigned int k = 0, first = 1; k < PLAN_KINDS && off < len; k++) {
		if (!c->count[k])
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%u %s", first ? " (" : ", ",
					c->count[k], plan_kind_name(k));
		first = 0;
	}
	if (c->total && off < len)
		snprintf(buf + off, len - off, ")");
}

static void text_cabling(const struct status_cabling *c, status_emit emit, void *ctx)
{
	char counts[256], buf[LOG_RECORD_LEN * 3];

	if (!c->configured) {
		emit(ctx, "cabling: no plan\n");
		return;
	}
	if (!c->file[0])
		emit(ctx, "cabling: no plan in force, enforce %s\n", c->enforce ? "yes" : "no");
	else if (!c->compared)
		emit(ctx, "cabling: plan %s (%zu nodes, %zu cables), enforce %s; not compared "
		     "yet\n", c->file, c->nodes, c->cables, c->enforce ? "yes" : "no");
	else {
		cabling_counts(c, counts, sizeof(counts));
		emit(ctx, "cabling: plan %s (%zu nodes, %zu cables), enforce %s; sweep %" PRIu64
		     ": %s, %u links held at INIT, %u left up to keep the fabric connected\n",
		     c->file, c->nodes, c->cables, c->enforce ? "yes" : "no", c->sweep, counts,
		     c->held, c->kept);
	}
	if (c->error[0])
		emit(ctx, "cabling_error: %s\n", text_printable(c->error, buf, sizeof(buf)));
}

static void text_health(const struct status_health *h, status_emit emit, void *ctx)
{
	char when[32];

	if (!h->action)
		return;
	emit(ctx, "health: action %s, %u unhealthy port%s, %u link%s out of service, %u kept in "
	     "use (smctl health)\n", h->action, h->unhealthy, h->unhealthy == 1 ? "" : "s",
	     h->isolated, h->isolated == 1 ? "" : "s", h->kept);
	if (!h->perf_enabled)
		emit(ctx, "counters: not read\n");
	else if (!h->perf_sweeps)
		emit(ctx, "counters: every %u s, none read yet%s\n", h->perf_interval,
		     h->perf_running ? " (a counter sweep runs)" : "");
	else
		emit(ctx, "counters: every %u s, %" PRIu64 " sweeps, the last %s: %u ports, %u "
		     "did not answer, %.3f s%s\n", h->perf_interval, h->perf_sweeps,
		     fmt_when(h->perf_last_end, when, sizeof(when)), h->perf_last_ports,
		     h->perf_last_unanswered, h->perf_last_seconds,
		     h->perf_paused ? "; paused for a heavy sweep" : "");
}

static void text_mkey(const struct status_mkey *k, status_emit emit, void *ctx)
{
	char when[32];
	size_t shown = 0;

	if (k->set)
		emit(ctx, "m_key: set, M_KeyProtectBits %u, M_KeyLeasePeriod %u s\n",
		     k->protect_bits, k->lease_period);
	else
		emit(ctx, "m_key: none (any host can reprogram the ports)\n");
	if (!k->tracking)
		return;
	emit(ctx, "bad_mkey_traps: %" PRIu64 " (%" PRIu64 " about smd's own SMPs), %" PRIu64
	     " ports read to stop a lease; ports taken over: %" PRIu64 " (%" PRIu64
	     " after their lease ran out)\n", k->traps, k->traps_own, k->guards, k->taken,
	     k->recovered);
	if (k->last)
		emit(ctx, "bad_mkey_last: %s %s\n", fmt_when(k->last_when, when, sizeof(when)),
		     k->last);
	emit(ctx, "mkey_unknown: %zu\n", k->nunknown);
	/* The first 8 ports smd waits to take back */
	for (size_t i = 0; i < k->nunknown && shown < 8; i++, shown++) {
		const struct status_mkey_port *e = &k->unknown[i];

		if (e->never)
			emit(ctx, "mkey_unknown_port: %s, lease period 0: cannot be taken back\n",
			     e->name);
		else
			emit(ctx, "mkey_unknown_port: %s, read again in %" PRIu64 " s\n", e->name,
			     e->read_again_s);
	}
}

static void text_mcast(const struct status_snapshot *s, status_emit emit, void *ctx)
{
	if (!s->has_mcast)
		return;
	emit(ctx, "mcast_groups: %zu (%zu memberships), highest MLID 0x%04x\n", s->mc_groups,
	     s->mc_memberships, s->mc_max_mlid);
	if (s->has_forest)
		emit(ctx, "mcast_trees: %u over %" PRIu64 " switches, %u unsafe, %zu MFT blocks "
		     "pending\n", s->mc_trees, s->mc_tree_switches, s->mc_unsafe,
		     s->mc_blocks_pending);
	emit(ctx, "mcast_changes: %" PRIu64 " groups created, %" PRIu64 " deleted; MFT blocks %"
	     PRIu64 " read, %" PRIu64 " written, %" PRIu64 " failed\n", s->mc_created,
	     s->mc_deleted, s->mc_blocks_read, s->mc_blocks_written, s->mc_blocks_failed);
}

static void text_sweeps(const struct status_snapshot *s, status_emit emit, void *ctx)
{
	const struct sweep_result *l = s->last;
	char when[64];

	emit(ctx, "sweeps: %" PRIu64 " heavy, %" PRIu64 " light\n", s->heavy_sweeps,
	     s->light_sweeps);
	if (s->has_light)
		emit(ctx, "last_light_sweep: %s, %lld s ago, %u switches asked, %s\n",
		     fmt_when(s->light_end, when, sizeof(when)), (long long)(s->now - s->light_end),
		     s->light_switches, s->light_changed ? "a change found" : "no change");
	if (!l)
		return;
	emit(ctx, "last_sweep: %s, %lld s ago\n", fmt_when(s->last_end, when, sizeof(when)),
	     (long long)(s->now - s->last_end));
	emit(ctx, "last_sweep_seconds: %.3f\n", l->seconds);
	emit(ctx, "last_sweep_result: %s\n", s->last_result);
	emit(ctx, "last_sweep_smps: %" PRIu64 " sent, %" PRIu64 " timed out, %" PRIu64
	     " unanswered\n", l->smps, l->timeouts, l->failed);
}

/* The adaptive SMP window (mad/txn.c): its size now, what shrank it */
static void text_window(const struct status_snapshot *s, status_emit emit, void *ctx)
{
	const struct txn_window *w = &s->window;

	if (!s->has_window)
		return;
	if (w->min == w->max) {
		emit(ctx, "smp_window: %u (fixed)\n", w->size);
		return;
	}
	emit(ctx, "smp_window: %u (floor %u, ceiling %u, known good %u; round trip %.2f ms, "
	     "reorder allowance %.2f ms)\n", w->size, w->min, w->max, w->safe, w->rtt_us / 1e3,
	     w->reorder_us / 1e3);
	if (w->shrinks)
		emit(ctx, "smp_window_shrinks: %" PRIu64 ", the last %" PRIu64 " s ago\n",
		     w->shrinks, s->window_shrink_ago_s);
	else
		emit(ctx, "smp_window_shrinks: 0\n");
	emit(ctx, "smp_presumed_lost: %" PRIu64 " (%" PRIu64 " of them answered after all)\n",
	     w->presumed, w->spurious);
}

static void text_traps(const struct status_snapshot *s, status_emit emit, void *ctx)
{
	char buf[LOG_RECORD_LEN];

	emit(ctx, "traps: %" PRIu64 "\n", s->traps);
	if (!s->has_traps)
		return;
	emit(ctx, "trap_verdicts: %" PRIu64 " swept, %" PRIu64 " held back, %" PRIu64
	     " reported, %" PRIu64 " ignored, %" PRIu64 " from unknown LIDs, %" PRIu64
	     " from flooders\n", s->trap_swept, s->trap_held_back, s->trap_reported,
	     s->trap_ignored, s->trap_unknown, s->trap_flooding);
	for (size_t i = 0; i < s->nflooders; i++) {
		const struct status_flooder *f = &s->flooders[i];

		emit(ctx, "trap_flooder: LID %u, %s port %u, GUID 0x%016" PRIx64 "\n", f->lid,
		     f->node[0] ? text_printable(f->node, buf, sizeof(buf)) : "?", f->port, f->guid);
	}
}

void status_text(const struct status_snapshot *s, status_emit emit, void *ctx)
{
	char when[64], buf[LOG_RECORD_LEN];

	emit(ctx, "smd: %s, pid %ld, running since %s\n", s->version, s->pid,
	     fmt_when(s->started, when, sizeof(when)));
	emit(ctx, "state: %s\n", s->state);
	emit(ctx, "sm_guid: 0x%016" PRIx64 "\n", s->sm_guid);
	emit(ctx, "sm_priority: %u\n", s->sm_priority);
	emit(ctx, "sm_lid: %u\n", s->sm_lid);
	text_progress(s, emit, ctx);
	if (s->standby)
		emit(ctx, "master: SM 0x%016" PRIx64 " (priority %u)\n", s->master_guid,
		     s->master_priority);
	text_subnet(s, emit, ctx);
	text_cabling(&s->cabling, emit, ctx);
	text_health(&s->health, emit, ctx);
	emit(ctx, "sm_key: %s\n", s->sm_key ? "set" : "none (any host can take the subnet over)");
	for (size_t i = 0; i < s->nforeign; i++)
		emit(ctx, "sm_foreign: SM 0x%016" PRIx64 " (priority %u, %s) answers with another "
		     "SM_Key: not in the election\n", s->foreign[i].guid, s->foreign[i].priority,
		     s->foreign[i].state);
	emit(ctx, "sminfo_refused: %" PRIu64 "\n", s->sminfo_refused);
	text_mkey(&s->mkey, emit, ctx);
	emit(ctx, "sa: %s\n", s->sa_serving ? "answering" : "not answering");
	emit(ctx, "sa_key: %s\n", s->sa_key ? "set (sm_key does not make SA requests trusted)" :
	     "none (sm_key makes SA requests trusted)");
	if (s->has_sa)
		emit(ctx, "sa_requests: %" PRIu64 " received, %" PRIu64 " answered with records, %"
		     PRIu64 " with an error status (%" PRIu64 " of them refused at the limits), %"
		     PRIu64 " dropped (malformed, or their port's queue full), %" PRIu64
		     " with an SM_Key not trusted\n", s->sa_received, s->sa_answered, s->sa_errors,
		     s->sa_refused, s->sa_dropped, s->sa_bad_keys);
	text_mcast(s, emit, ctx);
	text_sweeps(s, emit, ctx);
	emit(ctx, "smps: %" PRIu64 " sent, %" PRIu64 " timed out, %" PRIu64 " unanswered\n",
	     s->smps_sent, s->smps_timed_out, s->smps_lost);
	emit(ctx, "smps_all: %" PRIu64 " sent since start (sweeps, SA, SM polls)\n", s->smps_all);
	text_window(s, emit, ctx);
	text_traps(s, emit, ctx);
	emit(ctx, "resweep_pending: %s\n", s->resweep_pending);
	if (s->last && !s->last_failed) {
		char probs[512];

		status_problems_text(s->last, probs, sizeof(probs));
		if (probs[0])
			emit(ctx, "problem_counts: %s\n", probs);
	}
	emit(ctx, "problems: %u\n", s->problems);
	for (size_t i = 0; i < s->nproblem_list; i++)
		emit(ctx, "problem: %s\n", text_printable(s->problem_list[i], buf, sizeof(buf)));
	if (s->problems > s->nproblem_list)
		emit(ctx, "problems_not_shown: %zu\n", s->problems - s->nproblem_list);
	emit(ctx, "status: %s\n", s->status);
}

/* The subnet and the last sweep, in one line */
static void summary_subnet(const struct status_snapshot *s, char *buf, size_t len)
{
	const struct sweep_result *m = s->model, *l = s->last;
	char probs[256], when[32];
	struct tm tm;
	int n;

	if (s->not_active) {
		snprintf(buf, len, "not active: another SM disabled this one");
		return;
	}
	if (s->standby) {
		snprintf(buf, len, "standby: master is SM 0x%016" PRIx64 " (priority %u)",
			 s->master_guid, s->master_priority);
		return;
	}
	if (!l) {
		snprintf(buf, len, "discovering the subnet: no sweep has ended yet");
		return;
	}
	when[0] = 0;
	if (localtime_r(&s->last_end, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	if (s->last_failed || !m) {
		n = snprintf(buf, len, "%s: last sweep (%s, %.2f s) %s", s->state, when,
			     l->seconds, s->last_result);
		if (m && n > 0 && (size_t)n < len)
			snprintf(buf + n, len - (size_t)n, "; the sweep before: %u nodes, %u LIDs, "
				 "subnet %s", m->nodes, m->lids, m->up ? "up" : "NOT up");
		return;
	}
	status_problems_text(m, probs, sizeof(probs));
	snprintf(buf, len, "%s: subnet %s, %u nodes (%u switches, %u CAs), %u CA ports, %u LIDs; "
		 "last sweep %s, %.2f s%s%s", s->state, m->up ? "up" : "NOT up", m->nodes,
		 m->switches, m->cas, m->endports - m->switches, m->lids, when, m->seconds,
		 probs[0] ? "; problems: " : "", probs);
}

void status_summary(const struct status_snapshot *s, char *buf, size_t len)
{
	const struct sweep_progress *p = &s->progress;
	char how[64];
	size_t n;

	summary_subnet(s, buf, len);
	n = strlen(buf);
	/* "; cabling: 3 mismatches" */
	if (s->cabling.configured && n < len) {
		if (s->cabling.compared)
			snprintf(buf + n, len - n, "; cabling: %u mismatch%s", s->cabling.total,
				 s->cabling.total == 1 ? "" : "es");
		else if (s->cabling.error[0])
			snprintf(buf + n, len - n, "; cabling: plan refused");
		n = strlen(buf);
	}
	/* "; health: 2 unhealthy, 1 isolated" */
	if ((s->health.unhealthy || s->health.isolated) && n < len) {
		snprintf(buf + n, len - n, "; health: %u unhealthy, %u isolated", s->health.unhealthy,
			 s->health.isolated);
		n = strlen(buf);
	}
	if (!s->sweeping || n >= len)
		return;
	/* "; heavy sweep: lfts (8/14), 3.2 s, 120000 SMPs done, 4128 waiting" */
	snprintf(buf + n, len - n, "; %s sweep: %s (%u/%u%s), %.1f s, %" PRIu64 " SMPs done, %"
		 PRIu64 " waiting", p->kind, p->phase, p->phase_no, p->phases,
		 fmt_computing(p, how, sizeof(how)), p->seconds, p->smps_done, p->smps_waiting);
}
