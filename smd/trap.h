/* SPDX-License-Identifier: MIT */
/*
 * Traps (IBA 13.4.9, 14.2.5.1): which ones make smd look at the fabric
 * again, from whom, and how often. A trap is trusted no further than this:
 *  - only generic traps that mean the fabric changed start a heavy sweep:
 *    128 (a switch's port went up or down; from a switch only), 144 (a
 *    port's CapabilityMask, NodeDescription or enabled link widths/speeds
 *    changed: an SM may have come or gone) and 145 (SystemImageGUID);
 *    129-131 (link integrity, buffer overrun, flow control watchdog) and
 *    256-259 (bad M_Key, P_Key, Q_Key) are reported, not swept for: a
 *    sweep mends neither, and a link that fails sends 128 too; the rest
 *    (vendor traps, numbers an SMA does not send) are counted only;
 *  - only from a LID of the current model, whose port it names in logs;
 *  - one heavy sweep per source per TRAP_HOLDOFF_S: a change a source
 *    reports inside its hold-off is looked at when the hold-off ends (one
 *    deferred sweep for all), not at once;
 *  - a source that sends more than TRAP_FLOOD_COUNT traps within
 *    TRAP_FLOOD_WINDOW_S floods: it is reported once and its traps are
 *    ignored (still repressed) until it has been quiet for TRAP_QUIET_S;
 *    trap_flood_action = disable also disables the switch port it hangs
 *    off (a switch that floods is only reported).
 * Every trap is answered with TrapRepress (IBA 13.4.9), which tells an SMA
 * to stop repeating it.
 */
#ifndef SMD_TRAP_H
#define SMD_TRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRAP_HOLDOFF_S		10
#define TRAP_FLOOD_COUNT	30
#define TRAP_FLOOD_WINDOW_S	10
#define TRAP_QUIET_S		60

enum trap_kind {
	TRAP_CHANGE,			/* the fabric changed: worth a heavy sweep */
	TRAP_ERROR,			/* a port counts errors: reported */
	TRAP_SECURITY,			/* a bad key was seen: reported */
	TRAP_OTHER,			/* counted only */
};

/* What a trap means, by its number, IsGeneric bit and source (IBA 14.2.5.1) */
static inline enum trap_kind trap_kind(bool generic, uint16_t num, bool from_switch)
{
	if (!generic)
		return TRAP_OTHER;
	switch (num) {
	case 128:
		return from_switch ? TRAP_CHANGE : TRAP_OTHER;
	case 144:
	case 145:
		return TRAP_CHANGE;
	case 129:
	case 130:
	case 131:
		return TRAP_ERROR;
	case 256:
	case 257:
	case 258:
	case 259:
		return TRAP_SECURITY;
	}
	return TRAP_OTHER;
}

enum trap_verdict {
	TRAP_SWEEP,			/* heavy sweep now */
	TRAP_DEFER,			/* a change inside its source's hold-off: later */
	TRAP_REPORT,			/* an error or security trap: log it */
	TRAP_IGNORE,			/* counted only */
	TRAP_UNKNOWN,			/* the source LID is not in the model */
	TRAP_FLOOD_START,		/* this trap makes its source a flooder */
	TRAP_FLOODING,			/* from a flooder: ignored */
};

struct trap_stats {
	uint64_t total, swept, deferred, reported, ignored, unknown, flooding;
	unsigned int flood_starts;
};

struct fabric;
struct fab_port;
struct trap_table;

int trap_table_new(struct trap_table **out);
void trap_table_free(struct trap_table *t);
/*
 * Judge one trap from LID slid at monotonic time now_us against model f
 * (NULL: none yet, every trap is UNKNOWN). *src: the endport that sent it.
 */
enum trap_verdict trap_judge(struct trap_table *t, const struct fabric *f, uint16_t slid,
			     bool generic, uint16_t num, uint64_t now_us,
			     const struct fab_port **src);
/* A heavy sweep starts: it looks at every deferred change */
void trap_sweep_started(struct trap_table *t);
/* When deferred changes are due (monotonic us), 0 when there are none */
uint64_t trap_due(const struct trap_table *t);
const struct trap_stats *trap_stats(const struct trap_table *t);
/* The LIDs flooding at now_us, up to n; returns how many there are */
unsigned int trap_flooders(const struct trap_table *t, uint64_t now_us, uint16_t *lids,
			   unsigned int n);

struct smd;
struct mad_addr;
/* A Trap MAD that came to this SM: repress it, judge it, act (smd/main.c) */
void trap_handle(struct smd *smd, const uint8_t *mad, size_t len, const struct mad_addr *from);

#endif
