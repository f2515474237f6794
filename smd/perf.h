/* SPDX-License-Identifier: MIT */
/*
 * The performance manager (IBA 16.1, issue 20): every perf_interval
 * seconds, while this SM is master and the subnet's model is served, a
 * counter sweep reads PortCounters (and PortCountersExtended where a
 * node's ClassPortInfo says it has them) of every cabled port of every
 * node in the model, by LID, as LID-routed GMPs to QP1 through the GMP
 * layer (mad/gmp.h): many in flight, never waited for by anything else.
 * A heavy sweep pauses it (no new request goes out until the sweep ends),
 * so that SMPs have the port to themselves. A counter at half its range
 * is cleared by a Set naming only it (topo/perf.h keeps the totals). A
 * port that does not answer is counted and skipped; a node that leaves
 * the model keeps its totals for a while (they go on when it comes back).
 * At the end of every counter sweep the health rules judge every port
 * (smd/health.h).
 *
 * The ports' table lives here and is what smd/health.c judges and the
 * status snapshot renders (smd_port_* series).
 */
#ifndef SMD_PERF_H
#define SMD_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include "iba/iba.h"
#include "topo/health.h"
#include "topo/perf.h"

struct smd;

/* One port smd reads, by node GUID and port number */
struct perf_port {
	uint64_t guid;
	uint8_t port;
	uint8_t node_type;
	bool present;			/* cabled in the model the last counter sweep read */
	bool answered;			/* ... and that sweep read it */
	char desc[SMP_DATA_SIZE + 1];
	struct perf_state st;		/* counters (topo/perf.h) */
	struct health_window win;	/* what the rules count (topo/health.h) */
	uint64_t unanswered;		/* counter sweeps it did not answer */
	time_t last_read;		/* wall clock; 0: never */
	uint64_t gone_us;		/* monotonic: when it left the model; 0: present */
	/* The health rules' verdict, kept by smd/health.c */
	uint32_t broken;		/* rules broken at the last judgement */
	uint32_t told;			/* ... that the log (and subscribers) heard of */
	bool iso_pending;		/* isolation to ask once its link is up again */
	time_t since[HEALTH_RULES];	/* when each broken rule became broken */
	uint64_t counted[HEALTH_RULES];	/* what each rule counted at the last judgement */
	char degraded[384];		/* both ends' rates, when the link is degraded */
};

/* The performance manager's figures (the status snapshot) */
struct perf_stats {
	bool enabled;			/* perf_interval and a PMA agent: counter sweeps run */
	bool running;			/* a counter sweep runs now */
	bool paused;			/* ... and waits for a heavy sweep to end */
	unsigned int interval;
	uint64_t sweeps;		/* counter sweeps completed */
	double last_seconds;		/* how long the last one took */
	time_t last_end;		/* wall clock; 0: none yet */
	unsigned int last_ports;	/* ports it asked */
	unsigned int last_read;		/* ... that answered */
	unsigned int last_unanswered;	/* ... that did not */
	uint64_t last_gmps;		/* GMPs it sent, retries and clears included */
	size_t ports;			/* ports in the table */
	uint64_t gmps_sent, gmps_timed_out, gmps_unanswered;	/* since start */
	uint64_t bad_answers;		/* answers dropped: malformed, unmatched, wrong PortSelect */
	uint64_t bad_status;		/* answers with an error status */
	uint64_t clears, resets, saturations;
};

/* At start: the GMP layer on smd's port (the agent refused: counters are off, logged) */
int perf_init(struct smd *smd);
/*
 * ... over another transport, each try timeout_ms long (tests, the
 * fuzzer: MADs come in by perf_receive); ops NULL: counters off
 */
struct gmp_ops;
int perf_init_ops(struct smd *smd, const struct gmp_ops *ops, void *ctx, unsigned int timeout_ms);
void perf_free(struct smd *smd);
/* A MAD of class MAD_CLASS_PERF from the port (txn's class handler) */
void perf_receive(void *smd, const uint8_t *mad, size_t len, int send_status);
/*
 * From the event loop, every turn: move the counter sweep on (send what
 * the window takes, unless a heavy sweep runs), expire what is late, end
 * it when every answer is in. 0, or the port's error when it is gone.
 */
int perf_pump(struct smd *smd);
/* Start a counter sweep when one is due and may run (the perf timer); true when it started */
bool perf_sweep_start(struct smd *smd);
/* Requests in flight, and ms until the next GMP deadline (-1: none) */
unsigned int perf_outstanding(const struct smd *smd);
int perf_next_timeout_ms(const struct smd *smd);
/* Shutdown: every request fails (-ECANCELED), the counter sweep ends */
void perf_cancel(struct smd *smd);
void perf_stats_get(const struct smd *smd, struct perf_stats *st);

/* The ports' table: find (create: make one) a port, walk them in the order first seen */
struct perf_port *perf_port_get(struct smd *smd, uint64_t guid, uint8_t port, bool create);
size_t perf_port_count(const struct smd *smd);
struct perf_port *perf_port_at(const struct smd *smd, size_t i);

#endif
