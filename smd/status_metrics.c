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
#include <stdint.h>
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

/* The performance manager and the health rules (smd/perf.c, smd/health.c) */
static void metrics_health(const struct status_snapshot *s, struct metrics *m)
{
	const struct status_health *h = &s->health;

	if (!h->action)
		return;
	gauge(m, "smd_perf_enabled", "1 when counter sweeps run (perf_interval, a PMA agent)",
	      h->perf_enabled);
	counter(m, "smd_perf_sweeps_total", "Counter sweeps of the performance manager completed",
		h->perf_sweeps);
	if (h->perf_sweeps) {
		gauge(m, "smd_perf_sweep_duration_seconds", "How long the last counter sweep took",
		      h->perf_last_seconds);
		gauge(m, "smd_perf_sweep_end_time_seconds",
		      "When the last counter sweep ended, in seconds since the Unix epoch",
		      (double)h->perf_last_end);
		gauge(m, "smd_perf_ports", "Ports the last counter sweep asked", h->perf_last_ports);
		gauge(m, "smd_perf_ports_unanswered",
		      "Ports that did not answer the last counter sweep", h->perf_last_unanswered);
	}
	counter(m, "smd_perf_gmps_total", "PMA requests sent, retransmissions included",
		h->gmps_sent);
	counter(m, "smd_perf_gmp_timeouts_total", "PMA request tries lost or unanswered in time",
		h->gmps_timed_out);
	counter(m, "smd_perf_answers_dropped_total",
		"PMA answers dropped: malformed, unasked for, for another port", h->bad_answers);
	counter(m, "smd_perf_clears_total",
		"PortCounters Sets that cleared counters at half their range", h->clears);
	counter(m, "smd_perf_resets_total",
		"Readings that found counters lower than before (a reset port)", h->resets);
	metrics_family(m, "smd_health_unhealthy_ports", METRICS_GAUGE,
		       "Ports breaking a health rule now, by rule");
	for (unsigned int r = 0; r < HEALTH_RULES; r++)
		metrics_u64_1(m, "rule", health_rules[r].name, h->broken[r]);
	metrics_family(m, "smd_health_unhealthy_total", METRICS_COUNTER,
		       "Times a port broke a health rule, by rule");
	for (unsigned int r = 0; r < HEALTH_RULES; r++)
		metrics_u64_1(m, "rule", health_rules[r].name, h->became[r]);
	gauge(m, "smd_health_isolated_links",
	      "Links out of service (health_action = isolate): no route crosses them", h->isolated);
	gauge(m, "smd_health_kept_links",
	      "Links the rules asked out of service and kept in use (the fabric needs them)",
	      h->kept);
	counter(m, "smd_health_reports_total",
		"Reports of trap 129 (link integrity) sent to InformInfo subscribers", h->reports);
}

/*
 * Per-port series, one family after the other, every port a sample: the
 * counters' running totals (data in bytes: the IBA counts 4-byte words)
 * and the rules' verdict
 */
#define PORT_HEALTHY	(-1)
#define PORT_ISOLATED	(-2)

static const struct port_family {
	const char *name, *help;
	enum metrics_type type;
	int ctr;			/* enum perf_ctr, or PORT_HEALTHY, PORT_ISOLATED */
	unsigned int mul;
} port_families[] = {
	{ "smd_port_symbol_errors_total", "SymbolErrorCounter of the port, a running total",
	  METRICS_COUNTER, PERF_SYMBOL_ERRORS, 1 },
	{ "smd_port_link_error_recovery_total", "LinkErrorRecoveryCounter, a running total",
	  METRICS_COUNTER, PERF_LINK_ERROR_RECOVERY, 1 },
	{ "smd_port_link_downed_total", "LinkDownedCounter, a running total", METRICS_COUNTER,
	  PERF_LINK_DOWNED, 1 },
	{ "smd_port_rcv_errors_total", "PortRcvErrors, a running total", METRICS_COUNTER,
	  PERF_RCV_ERRORS, 1 },
	{ "smd_port_xmit_discards_total", "PortXmitDiscards, a running total", METRICS_COUNTER,
	  PERF_XMIT_DISCARDS, 1 },
	{ "smd_port_xmit_wait_total",
	  "PortXmitWait (ticks a packet waited to be sent), a running total", METRICS_COUNTER,
	  PERF_XMIT_WAIT, 1 },
	{ "smd_port_xmit_data_bytes_total", "Bytes sent (PortXmitData times 4), a running total",
	  METRICS_COUNTER, PERF_XMIT_DATA, 4 },
	{ "smd_port_rcv_data_bytes_total",
	  "Bytes received (PortRcvData times 4), a running total", METRICS_COUNTER,
	  PERF_RCV_DATA, 4 },
	{ "smd_port_xmit_packets_total", "Packets sent (PortXmitPkts), a running total",
	  METRICS_COUNTER, PERF_XMIT_PKTS, 1 },
	{ "smd_port_rcv_packets_total", "Packets received (PortRcvPkts), a running total",
	  METRICS_COUNTER, PERF_RCV_PKTS, 1 },
	{ "smd_port_healthy", "1 when the port breaks no health rule", METRICS_GAUGE,
	  PORT_HEALTHY, 1 },
	{ "smd_port_isolated",
	  "1 when the port's link is out of service (health_action = isolate)", METRICS_GAUGE,
	  PORT_ISOLATED, 1 },
};

#define NPORT_FAMILIES	(sizeof(port_families) / sizeof(port_families[0]))

static uint64_t port_value(const struct status_port *p, const struct port_family *f)
{
	if (f->ctr == PORT_HEALTHY)
		return p->healthy;
	if (f->ctr == PORT_ISOLATED)
		return p->isolated;
	return p->total[f->ctr] * f->mul;
}

bool status_metrics_ports(const struct status_snapshot *s, struct metrics *m,
			  struct status_metrics_cursor *c, size_t max_bytes)
{
	size_t start = metrics_len(m);
	bool wrote = false;

	/* A series smd does not know is left out: no family without a port */
	if (!s->nports)
		return true;
	for (; c->family < NPORT_FAMILIES; c->family++, c->port = 0) {
		const struct port_family *f = &port_families[c->family];

		if (!c->port)
			metrics_family(m, f->name, f->type, f->help);
		for (; c->port < s->nports; c->port++) {
			const struct status_port *p = &s->ports[c->port];
			struct metrics_port_labels pl;
			const struct metrics_label *l = metrics_port_labels(&pl, p->guid, p->port,
									    p->desc);

			/* A family's first sample follows its header in the same piece */
			if (c->port && wrote && metrics_len(m) - start >= max_bytes)
				return false;
			metrics_u64(m, l, METRICS_PORT_LABELS, port_value(p, f));
			wrote = true;
		}
	}
	return true;
}

void status_metrics_head(const struct status_snapshot *s, struct metrics *m)
{
	metrics_sm(s, m);
	metrics_subnet(s, m);
	metrics_sweeps(s, m);
	metrics_mads(s, m);
	metrics_cabling(s, m);
	metrics_health(s, m);
	metrics_other(s, m);
}

void status_metrics(const struct status_snapshot *s, struct metrics *m)
{
	struct status_metrics_cursor c = { 0 };

	status_metrics_head(s, m);
	status_metrics_ports(s, m, &c, SIZE_MAX);
}
