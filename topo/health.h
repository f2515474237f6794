/* SPDX-License-Identifier: MIT */
/*
 * Fabric health as rules over ports (issue 20): one table of rules, each
 * with a threshold in smd.conf, counted within a window of time; a port
 * that breaks a rule is unhealthy. Also which unhealthy links can be
 * taken out of service (isolated: no route crosses them) without
 * splitting the fabric, and which links a new sweep found gone down since
 * the last one. Pure logic, no I/O and no clock: the caller passes the
 * time (seconds, any monotonic origin). smd/health.c decides and logs.
 *
 * The rules (health_rules[]):
 *   symbol_errors  SymbolErrorCounter + LinkErrorRecoveryCounter increments
 *   link_downs     LinkDownedCounter increments, or the down/up transitions
 *                  the SM saw (a link ACTIVE in one sweep, down or back
 *                  below ACTIVE in the next), whichever is more: the same
 *                  flap seen both ways counts once
 *   rcv_errors     PortRcvErrors increments
 *   degraded       the link's active width or speed is below the best both
 *                  ends support and enable (topo/linkrate.h)
 * A counted rule is broken when its count within the window is above its
 * threshold; a threshold of 0 turns the rule off.
 */
#ifndef SMD_TOPO_HEALTH_H
#define SMD_TOPO_HEALTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topo/fabric.h"

enum health_rule {
	HEALTH_SYMBOL_ERRORS,
	HEALTH_LINK_DOWNS,
	HEALTH_RCV_ERRORS,
	HEALTH_DEGRADED,
	HEALTH_RULES
};

/* What a port's window counts, per interval */
enum health_count {
	HEALTH_N_SYMBOL,		/* SymbolErrorCounter + LinkErrorRecoveryCounter */
	HEALTH_N_LINK_DOWNED,		/* LinkDownedCounter */
	HEALTH_N_LINK_SEEN,		/* down/up transitions the SM saw */
	HEALTH_N_RCV,			/* PortRcvErrors */
	HEALTH_COUNTS
};

struct health_rule_def {
	const char *name;		/* "symbol_errors": logs, smctl, metrics */
	const char *key;		/* its smd.conf threshold key */
	const char *what;		/* what it counts, for the reason */
	bool counted;			/* counted in the window (else judged on the model) */
};

extern const struct health_rule_def health_rules[HEALTH_RULES];

struct health_cfg {
	unsigned int window_s;			/* seconds counted */
	uint32_t threshold[HEALTH_RULES];	/* above it: broken; 0: the rule is off */
	bool degraded;				/* the degraded rule is on */
};

/* One interval's counts of a port */
struct health_event {
	uint64_t t;
	uint32_t n[HEALTH_COUNTS];
};

/* Intervals a port keeps; more are merged into the oldest kept */
#define HEALTH_EVENTS_MAX	64

/* A port's window: intervals with something to count, oldest first (a ring) */
struct health_window {
	struct health_event *ev;	/* NULL until the first event: most ports have none */
	uint16_t head, n;
};

/* Count n[] at time now; intervals past the window go. 0, or -ENOMEM (nothing counted) */
int health_window_add(struct health_window *w, uint64_t now, unsigned int window_s,
		      const uint32_t n[HEALTH_COUNTS]);
/* The counts within the window (now - window_s, now] */
void health_window_sums(const struct health_window *w, uint64_t now, unsigned int window_s,
			uint64_t sums[HEALTH_COUNTS]);
/* What a rule counted: link_downs takes the larger of the counter and the transitions */
uint64_t health_rule_count(enum health_rule r, const uint64_t sums[HEALTH_COUNTS]);
void health_window_clear(struct health_window *w);
/* The rules the sums (and degraded) break, bit (1 << enum health_rule) each */
uint32_t health_judge(const struct health_cfg *cfg, const uint64_t sums[HEALTH_COUNTS],
		      bool degraded);

/*
 * Links the SM saw go down since the last sweep: a port of f whose node
 * old also holds, that was up and ACTIVE in old (fabric_port_up) and is
 * not now, down or back below ACTIVE (a link that flapped between two
 * sweeps comes back at INIT). cb once per such port of f; how many.
 */
size_t health_links_down(const struct fabric *old, const struct fabric *f,
			 void (*cb)(void *ctx, const struct fab_port *p), void *ctx);

/* Taking links out of service */
enum health_iso {
	HEALTH_ISO_APPLIED,		/* isolated: no route crosses it */
	HEALTH_ISO_NOT_UP,		/* the link is not up: nothing to take out */
	HEALTH_ISO_CA_LINK,		/* kept: a CA's link (its port would be cut off) */
	HEALTH_ISO_SPLIT,		/* kept: the fabric would split without it */
	HEALTH_ISO_DEADLOCK,		/* kept: no deadlock-free routes without it (the caller's) */
	HEALTH_ISOS
};

/* "isolated", "link_not_up", "ca_link", "fabric_would_split", "no_deadlock_free_routes" */
const char *health_iso_name(unsigned int v);

struct health_isolation {
	uint64_t guid;			/* the port asked to be isolated (either end of the link) */
	uint8_t port;
	uint8_t verdict;		/* out: enum health_iso */
	uint64_t peer_guid;		/* out: the other end, when the link is up */
	uint8_t peer_port;
};

/*
 * Isolate the links of v[0..n) in f (fab_port.isolated on both ends) in
 * that order, each unless it is not up, a CA's link, or the switches it
 * joins would no longer be connected without it (union-find, as the
 * cabling plan's enforcement does: what every other routable link joins
 * first, then the candidates in order; one that joins two parts stays).
 * Both ends of one link may be listed: they get one verdict. 0, or
 * -ENOMEM (nothing isolated).
 */
int health_isolate(struct fabric *f, struct health_isolation *v, size_t n);

#endif
