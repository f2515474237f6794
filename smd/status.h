/* SPDX-License-Identifier: MIT */
/*
 * What `smctl status` shows, as one model: the daemon fills a snapshot
 * (status_fill, status.c) once per request, and renderers show it, as text
 * (status_text.c), as JSON (status_json.c) and as Prometheus metrics
 * (status_metrics.c, the control socket's `metrics`); STATUS= for systemd
 * is one more, one line (status_summary). The renderers read only the
 * snapshot, never the daemon, so a test can render any snapshot it makes.
 *
 * The sweep's problem counters are listed once, in status_problems[]
 * (field, JSON key, words); the renderers (the key is the metrics' problem
 * label), the resweep answer and the test that checks man/smctl.8 go
 * through that table.
 */
#ifndef SMD_STATUS_H
#define SMD_STATUS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "mad/txn.h"
#include "smd/sweep.h"
#include "topo/health.h"
#include "topo/perf.h"
#include "topo/plan.h"
#include "util/log.h"

struct smd;
struct json;
struct metrics;

/* One problem counter of a sweep: its field in struct sweep_result, its names */
struct status_problem {
	size_t off;		/* of an unsigned int, or of a uint64_t when wide */
	bool wide;
	const char *key;	/* in JSON's problem_counts */
	const char *one, *many;	/* in text: "1 LFT error", "2 LFT errors" */
};

extern const struct status_problem status_problems[];
extern const size_t status_nproblems;

uint64_t status_problem_value(const struct sweep_result *r, const struct status_problem *p);
/* The problems r counted, as "2 ports not ACTIVE, 1 LFT error"; "" when none */
void status_problems_text(const struct sweep_result *r, char *buf, size_t len);
/* ... as the JSON object "problem_counts", every counter by its key */
void status_problems_json(struct json *j, const struct sweep_result *r);

/* Another SM that answers with another SM_Key (not in the election) */
struct status_foreign_sm {
	uint64_t guid;
	unsigned int priority;
	const char *state;
};

/* A port whose M_Key smd does not know (smd/mkey.c): it waits to take it back */
struct status_mkey_port {
	uint64_t guid;
	const char *name;
	bool never;		/* lease period 0: it cannot be taken back */
	uint64_t read_again_s;
};

struct status_mkey {
	bool set;
	unsigned int protect_bits, lease_period;
	bool tracking;		/* smd keeps per-port keys: the figures below mean something */
	uint64_t traps, traps_own, guards, taken, recovered;
	const char *last;	/* the last Bad M_Key trap, NULL: none */
	time_t last_when;
	const struct status_mkey_port *unknown;	/* owned by the snapshot */
	size_t nunknown;
};

struct status_flooder {
	uint16_t lid;
	const char *node;	/* "" when the LID is not in the model */
	unsigned int port;
	uint64_t guid;
};

#define STATUS_FLOODERS_MAX	8

/* The cabling plan (smd/cabling.c) */
struct status_cabling {
	bool configured;		/* cabling_plan names a file */
	const char *file;		/* the plan in force; "" when none is */
	const char *error;		/* the last reading that failed; "" when none did */
	size_t nodes, cables;		/* of the plan in force */
	bool enforce;
	bool compared;			/* the model in force was compared with it */
	uint64_t sweep;			/* ... in this heavy sweep */
	unsigned int count[PLAN_KINDS];	/* mismatches by kind */
	unsigned int total;
	unsigned int held, kept;	/* links fenced; links left up to keep the fabric whole */
};

/* Fabric health: the performance manager and the rules (smd/perf.c, smd/health.c) */
struct status_health {
	bool perf_enabled;		/* counter sweeps run (perf_interval, a PMA agent) */
	bool perf_running, perf_paused;
	unsigned int perf_interval;
	uint64_t perf_sweeps;
	double perf_last_seconds;
	time_t perf_last_end;		/* 0: none yet */
	unsigned int perf_last_ports, perf_last_read, perf_last_unanswered;
	uint64_t perf_last_gmps;
	uint64_t gmps_sent, gmps_timed_out, gmps_unanswered;
	uint64_t bad_answers, bad_status;	/* PMA answers dropped; with an error status */
	uint64_t clears, resets, saturations;
	const char *action;		/* "report" or "isolate" */
	unsigned int window;
	uint32_t threshold[HEALTH_RULES];
	bool degraded_rule;
	unsigned int unhealthy;		/* ports breaking a rule now */
	unsigned int broken[HEALTH_RULES];	/* ... by rule */
	uint64_t became[HEALTH_RULES];	/* ports that broke each rule, since start */
	unsigned int isolated;		/* links out of service in the model */
	unsigned int kept;		/* links asked out, kept in use (or not judged yet) */
	uint64_t reports;		/* trap 129 Reports sent to subscribers */
	uint64_t links_seen_down;
};

/* One port's figures, for the per-port metrics (status_fill_ports) */
struct status_port {
	uint64_t guid;
	uint8_t port;
	bool healthy, isolated;
	char desc[SMP_DATA_SIZE + 1];
	uint64_t total[PERF_COUNTERS];
};

enum status_subnet {
	STATUS_SUBNET_UNKNOWN,	/* no sweep has completed */
	STATUS_SUBNET_MASTERS,	/* standby or not active: the master's */
	STATUS_SUBNET_KNOWN,	/* model below */
};

struct status_snapshot {
	const char *status;		/* the answer's word (util/ctl_proto.h) */
	const char *version;
	long pid;
	time_t started, now;
	const char *state;
	uint64_t sm_guid;
	unsigned int sm_priority;
	uint16_t sm_lid;

	bool sweeping;			/* progress below is a running sweep's */
	struct sweep_progress progress;
	double loop_longest_ms;
	const char *loop_longest_what;
	uint64_t loop_slow;

	bool standby;			/* master below is the one polled */
	bool not_active;		/* another SM disabled this one */
	uint64_t master_guid;
	unsigned int master_priority;

	enum status_subnet subnet;
	const struct sweep_result *model;	/* STATUS_SUBNET_KNOWN: the model's sweep */
	size_t partitions;
	const char *partition_file;	/* "" when none */
	struct status_cabling cabling;
	struct status_health health;
	const struct status_port *ports;	/* status_fill_ports; owned by the snapshot */
	size_t nports;

	bool sm_key;
	const struct status_foreign_sm *foreign;	/* owned by the snapshot */
	size_t nforeign;
	uint64_t sminfo_refused;
	struct status_mkey mkey;

	bool sa_serving;
	bool has_sa;
	uint64_t sa_received, sa_answered, sa_errors, sa_refused, sa_dropped;
	bool sa_key;			/* sa_key set: sm_key no longer makes SA requests trusted */
	uint64_t sa_bad_keys;		/* SA requests with an SM_Key not trusted */

	bool has_mcast;
	size_t mc_groups, mc_memberships;
	unsigned int mc_max_mlid;
	bool has_forest;
	unsigned int mc_trees, mc_unsafe;
	uint64_t mc_tree_switches;
	size_t mc_blocks_pending;
	uint64_t mc_created, mc_deleted, mc_blocks_read, mc_blocks_written, mc_blocks_failed;

	uint64_t heavy_sweeps, light_sweeps;
	bool has_light;
	time_t light_end;
	unsigned int light_switches;
	bool light_changed;

	const struct sweep_result *last;	/* the last heavy sweep, NULL: none */
	time_t last_end;
	const char *last_result;	/* "up", "NOT up", "failed (...)", ... */
	bool last_failed;		/* it did not complete: its counters mean nothing */

	uint64_t smps_sent, smps_timed_out, smps_lost;
	uint64_t smps_all;		/* every SMP sent since start: sweeps, SA, polls */
	bool has_window;		/* window below: the SMP window (mad/txn.h) */
	struct txn_window window;
	uint64_t window_shrink_ago_s;	/* since its last shrink, when it shrank */
	uint64_t traps;
	bool has_traps;
	uint64_t trap_swept, trap_held_back, trap_reported, trap_ignored, trap_unknown,
		 trap_flooding;
	struct status_flooder flooders[STATUS_FLOODERS_MAX];
	size_t nflooders;

	const char *resweep_pending;	/* "no", "yes", "heavy" */
	unsigned int problems;		/* warnings and errors of the last heavy sweep */
	const char *problem_list[LOG_RECORD_MAX];	/* the first of them */
	size_t nproblem_list;

	/* What status_fill allocated (status_release frees it) and its text buffers */
	void *owned[4];
	char result_buf[128];
};

/* The answer's word (util/ctl_proto.h): ok while the subnet is up or another SM runs it */
const char *status_word(const struct smd *smd);
/* Fill s from the daemon's state now; status_release frees what it took */
int status_fill(const struct smd *smd, struct status_snapshot *s);
/* ... and every port the performance manager has read, for the per-port metrics */
int status_fill_ports(const struct smd *smd, struct status_snapshot *s);
void status_release(struct status_snapshot *s);

/* The text answer, a line at a time (each with its newline), ending with "status: X" */
typedef void (*status_emit)(void *ctx, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void status_text(const struct status_snapshot *s, status_emit emit, void *ctx);
/* The JSON answer: one object whose first member is "status" */
void status_json(const struct status_snapshot *s, struct json *j);
/* The metrics answer: Prometheus's text format, one family after the other */
void status_metrics(const struct status_snapshot *s, struct metrics *m);
/*
 * The same in two parts, for an answer written as the reader takes it:
 * every family but the per-port ones, then the per-port families from
 * where cursor says, until the text holds max_bytes more (at least one
 * sample); true once every sample is written
 */
struct status_metrics_cursor {
	unsigned int family;
	size_t port;
};
void status_metrics_head(const struct status_snapshot *s, struct metrics *m);
bool status_metrics_ports(const struct status_snapshot *s, struct metrics *m,
			  struct status_metrics_cursor *c, size_t max_bytes);
/* {"sent":..,"timed_out":..,"unanswered":..} as member key */
void status_json_smps(struct json *j, const char *key, uint64_t sent, uint64_t timed_out,
		      uint64_t unanswered);
/* One line for systemd's STATUS=: the SM state, the subnet, the last sweep, problems */
void status_summary(const struct status_snapshot *s, char *buf, size_t len);

#endif
