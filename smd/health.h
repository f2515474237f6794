/* SPDX-License-Identifier: MIT */
/*
 * Fabric health in the daemon (issue 20): the rules (topo/health.h) judge
 * every port the performance manager reads (smd/perf.h) after each counter
 * sweep and after each heavy sweep; a port that breaks a rule is logged
 * at warning once per rule (and again only after it was healthy), counted,
 * shown by `smctl health`, and, for symbol and receive errors, reported to
 * InformInfo subscribers as trap 129 (local link integrity threshold
 * reached, IBA 14.2.5.1: the one IBA trap that says what these rules
 * measure; a link that flaps or trains below its width has none).
 *
 * With health_action = isolate, the link of a port that newly breaks a
 * rule is asked to be taken out of service: the request is kept in the
 * database (it survives restarts), a heavy sweep follows at once, and
 * every heavy sweep applies the requests to its model (its "health"
 * phase: isolated unless the switches would no longer be connected, and
 * the route phase puts it back when no deadlock-free routes are found
 * without it). Route repair then moves only the routes that crossed it.
 * `smctl port enable` ends the request, clears both ends' windows, and
 * the next heavy sweep routes afresh with the link. health_action = report
 * applies no request (they stay recorded).
 *
 * The database is written only between heavy sweeps (a sweep's worker
 * thread uses it): events and isolation changes wait in memory.
 */
#ifndef SMD_HEALTH_H
#define SMD_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topo/health.h"

struct smd;
struct json;
struct perf_port;
struct perf_update;
struct status_health;

int health_init(struct smd *smd);
void health_free(struct smd *smd);
/* SIGHUP: thresholds, window, action (isolate to report: the links come back) */
void health_reload(struct smd *smd);

/* A port was read: its last deltas into its window, its error events queued */
void health_counted(struct smd *smd, struct perf_port *pp, const struct perf_update *u);
/* Links a heavy sweep found gone down since the model before (node GUID, port each) */
void health_links_seen_down(struct smd *smd, const uint64_t *guid, const uint8_t *port, size_t n);
/* Judge every port now (after a counter sweep, after a heavy sweep's model came in) */
void health_judge_all(struct smd *smd, const char *why);

/*
 * A heavy sweep's health phase: the links to isolate in its model (a copy,
 * malloc'ed; NULL and 0 when none or health_action = report), and what
 * became of them once routed (each verdict logged when it changed)
 */
struct health_isolation *health_isolations_wanted(struct smd *smd, size_t *n);
void health_isolation_verdicts(struct smd *smd, const struct health_isolation *v, size_t n);

/* Write what waits for the database, unless a heavy sweep holds it */
void health_flush(struct smd *smd);

/*
 * smctl port enable: the link of port (guid, port) back into service.
 * 0 (msg says what was done), -ENOENT (no such port known; msg says so).
 */
int health_port_enable(struct smd *smd, uint64_t guid, uint8_t port, char *msg, size_t len);
/*
 * smctl health: the rules, the counters, every unhealthy or isolated
 * port with its reasons, counters and since when, one line each through
 * emit, or into j's open object. Returns the answer's status word.
 */
const char *health_show(const struct smd *smd, void (*emit)(void *ctx, const char *fmt, ...),
			void *ctx, struct json *j);
void health_status_fill(const struct smd *smd, struct status_health *s);
/* Whether port (guid, port)'s link is out of service in the model in force */
bool health_isolated(const struct smd *smd, uint64_t guid, uint8_t port);

#endif
