// SPDX-License-Identifier: MIT
/*
 * The status snapshot as Prometheus metrics: the answer to the control
 * socket's `metrics`, which smd_exporter relays at /metrics (smd_exporter(8)
 * lists every series). Reads the snapshot only, like the text and JSON
 * renderers, and writes through util/metrics.h, which keeps the format's
 * rules (HELP and TYPE once per family, escaping, names).
 *
 * Conventions: counters end in _total and count from smd's start; times
 * are seconds (durations) or seconds since the Unix epoch (*_time_seconds);
 * a series whose value smd does not know is left out, never written as 0
 * (the subnet's size on a standby, the last sweep before the first one).
 *
 * Per-port series (smd_port_*) go through the same writer, one family at a
 * time: metrics_family() once, then one sample per port with the labels of
 * metrics_port_labels() (node_guid, port, node_desc), so that all of a
 * family's samples stay one group as the format requires.
 */
#include <string.h>

#include "smd/sm.h"
#include "smd/status.h"
#include "util/metrics.h"

static void gauge(struct metrics *m, const char *name, const char *help, double v)
{
	metrics_family(m, name, METRICS_GAUGE, help);
	metrics_double(m, NULL, 0, v);
}

static void counter(struct metrics *m, const char *name, const char *help, uint64_t v)
{
	metrics_family(m, name, METRICS_COUNTER, help);
	metrics_u64(m, NULL, 0, v);
}

static void metrics_sm(const struct status_snapshot *s, struct metrics *m)
{
	metrics_family(m, "smd_build_info", METRICS_GAUGE,
		       "smd's version, as the label version; always 1");
	metrics_u64_1(m, "version", s->version, 1);
	gauge(m, "smd_start_time_seconds", "When smd started, in seconds since the Unix epoch",
	      (double)s->started);
	/* One series per state (an enum the Prometheus way): the one smd is in is 1 */
	metrics_family(m, "smd_sm_state", METRICS_GAUGE,
		       "The SM state of IBA 14.4: 1 for the state this SM is in, 0 for the others");
	for (int i = 0; i < SM_STATES; i++) {
		const char *name = sm_state_name((enum sm_state)i);

		metrics_u64_1(m, "state", name, s->state && !strcmp(s->state, name));
	}
	gauge(m, "smd_sm_priority", "This SM's priority in the election (SMInfo.Priority)",
	      s->sm_priority);
}

static void metrics_subnet(const struct status_snapshot *s, struct metrics *m)
{
	const struct sweep_result *r = s->model;

	/* A standby or NOT-ACTIVE SM does not know the master's subnet */
	if (s->subnet != STATUS_SUBNET_KNOWN || !r)
		return;
	gauge(m, "smd_subnet_up",
	      "1 when the model's sweep brought the subnet up (every port ACTIVE, routed)",
	      r->up);
	gauge(m, "smd_subnet_nodes", "Nodes (switches and CAs) in the model", r->nodes);
	gauge(m, "smd_subnet_switches", "Switches in the model", r->switches);
	gauge(m, "smd_subnet_cas", "Channel adapters (and routers) in the model", r->cas);
	gauge(m, "smd_subnet_ca_ports", "CA ports in the model (end ports but switch port 0)",
	      r->endports - r->switches);
	gauge(m, "smd_subnet_links", "Links between two ports of the model", r->links);
	gauge(m, "smd_subnet_lids", "LIDs given out", r->lids);
}

static void metrics_sweeps(const struct status_snapshot *s, struct metrics *m)
{
	const struct sweep_result *l = s->last;

	metrics_family(m, "smd_sweeps_total", METRICS_COUNTER,
		       "Sweeps started: heavy (full discovery) and light (SwitchInfo only)");
	metrics_u64_1(m, "kind", "heavy", s->heavy_sweeps);
	metrics_u64_1(m, "kind", "light", s->light_sweeps);
	gauge(m, "smd_sweep_running", "1 while a sweep (heavy or light) runs", s->sweeping);
	if (!l)
		return;
	gauge(m, "smd_sweep_duration_seconds", "How long the last heavy sweep took", l->seconds);
	gauge(m, "smd_sweep_end_time_seconds",
	      "When the last heavy sweep ended, in seconds since the Unix epoch",
	      (double)s->last_end);
	gauge(m, "smd_sweep_failed",
	      "1 when the last heavy sweep failed before it completed (its model was not taken)",
	      s->last_failed);
	gauge(m, "smd_sweep_logged_problems",
	      "Warnings and errors smd logged during the last heavy sweep", s->problems);
	if (s->last_failed)
		return;
	/* status_problems[], the one table of them (status.h): every key, zeros too */
	metrics_family(m, "smd_sweep_problems", METRICS_GAUGE,
		       "The last heavy sweep's problem counters, by the problem's key "
		       "(smctl status --json: problem_counts)");
	for (size_t i = 0; i < status_nproblems; i++)
		metrics_u64_1(m, "problem", status_problems[i].key,
			      status_problem_value(l, &status_problems[i]));
}

static void metrics_mads(const struct status_snapshot *s, struct metrics *m)
{
	counter(m, "smd_smps_total", "SMPs the heavy sweeps sent, retransmissions included",
		s->smps_sent);
	counter(m, "smd_smp_timeouts_total", "SMP transmissions of heavy sweeps that timed out",
		s->smps_timed_out);
	counter(m, "smd_smps_unanswered_total",
		"SMPs of heavy sweeps left unanswered after every retry", s->smps_lost);
	counter(m, "smd_smps_all_total",
		"Every SMP smd sent since it started: sweeps, the SA's own, SM polls", s->smps_all);
	if (s->has_window) {
		gauge(m, "smd_smp_window", "SMPs the adaptive window lets in flight now",
		      s->window.size);
		counter(m, "smd_smp_window_shrinks_total",
			"Losses that shrank the SMP window (a fabric that sheds SMPs)",
			s->window.shrinks);
		counter(m, "smd_smps_presumed_lost_total",
			"SMP tries presumed lost because later ones were answered",
			s->window.presumed);
	}
	counter(m, "smd_traps_total", "Traps (notices) received from the fabric", s->traps);
	/*
	 * SA requests: separate counters, not one family with an outcome
	 * label, because the outcomes overlap (refused are errors too) and
	 * dropped MADs were never counted as requests: sum() over a label
	 * would count some twice.
	 */
	gauge(m, "smd_sa_serving", "1 while the SA answers requests", s->sa_serving);
	gauge(m, "smd_sa_key_set", "1 when sa_key is set: sm_key makes no SA request trusted",
	      s->sa_key);
	if (!s->has_sa)
		return;
	counter(m, "smd_sa_requests_total", "Well-formed SA requests received", s->sa_received);
	counter(m, "smd_sa_requests_answered_total",
		"SA requests answered with records or an empty table", s->sa_answered);
	counter(m, "smd_sa_requests_errors_total",
		"SA requests answered with an error status (refused ones included)", s->sa_errors);
	counter(m, "smd_sa_requests_refused_total",
		"SA requests refused with NO_RESOURCES: a client past its limits", s->sa_refused);
	counter(m, "smd_sa_requests_dropped_total",
		"SA MADs dropped unanswered: malformed, or their port had too many waiting",
		s->sa_dropped);
	counter(m, "smd_sa_requests_bad_key_total",
		"SA requests carrying an SM_Key other than the trusted one (answered untrusted)",
		s->sa_bad_keys);
}

/* The cabling plan (smd/cabling.c): only when one is configured */
static void metrics_cabling(const struct status_snapshot *s, struct metrics *m)
{
	const struct status_cabling *c = &s->cabling;

	if (!c->configured)
		return;
	gauge(m, "smd_cabling_plan_loaded", "1 when a cabling plan is in force (cabling_plan)",
	      c->file && c->file[0]);
	gauge(m, "smd_cabling_plan_error",
	      "1 when the last reading of the cabling plan failed (a plan in force stays)",
	      c->error && c->error[0]);
	/* Compared with the model in force: not before, nor on a standby */
	if (!c->compared)
		return;
	metrics_family(m, "smd_cabling_mismatches", METRICS_GAUGE,
		       "Mismatches between the model's fabric and the cabling plan, by kind "
		       "(smctl cabling)");
	for (unsigned int k = 0; k < PLAN_KINDS; k++)
		metrics_u64_1(m, "kind", plan_kind_name(k), c->count[k]);
	gauge(m, "smd_cabling_links_held",
	      "Links the cabling plan refuses, held at INIT (cabling_enforce)", c->held);
	gauge(m, "smd_cabling_links_kept",
	      "Links the cabling plan refuses, left up: the fabric would split without them",
	      c->kept);
}

static void metrics_other(const struct status_snapshot *s, struct metrics *m)
{
	if (s->has_mcast) {
		gauge(m, "smd_mcast_groups", "Multicast groups", (double)s->mc_groups);
		gauge(m, "smd_mcast_memberships", "Ports' memberships of multicast groups",
		      (double)s->mc_memberships);
	}
	gauge(m, "smd_event_loop_longest_handler_seconds",
	      "The longest any event loop handler has run since smd started",
	      s->loop_longest_ms / 1000);
	counter(m, "smd_event_loop_slow_handlers_total",
		"Event loop handlers that ran over 100 ms", s->loop_slow);
}

void status_metrics(const struct status_snapshot *s, struct metrics *m)
{
	metrics_sm(s, m);
	metrics_subnet(s, m);
	metrics_sweeps(s, m);
	metrics_mads(s, m);
	metrics_cabling(s, m);
	metrics_other(s, m);
}
