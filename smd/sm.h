/* SPDX-License-Identifier: MIT */
/*
 * The SM state machine of IBA 14.4: DISCOVERING -> MASTER or STANDBY,
 * NOT-ACTIVE on request. The election rule and the state names are pure
 * (inline, unit-tested alone); the rest drives SMInfo MADs for smd.
 */
#ifndef SMD_SM_H
#define SMD_SM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The values are SMInfo.SMState on the wire (IBA 14.2.5.13) */
enum sm_state {
	SM_NOT_ACTIVE = 0,
	SM_DISCOVERING = 1,
	SM_STANDBY = 2,
	SM_MASTER = 3,
};

static inline const char *sm_state_name(enum sm_state s)
{
	switch (s) {
	case SM_NOT_ACTIVE: return "NOT-ACTIVE";
	case SM_DISCOVERING: return "DISCOVERING";
	case SM_STANDBY: return "STANDBY";
	case SM_MASTER: return "MASTER";
	}
	return "UNKNOWN";
}

/*
 * IBA 14.4.1.1: of two SMs the one with the higher priority is the
 * better master, and of equal priorities the one with the lower port GUID.
 * True when SM a outranks SM b (never for a == b).
 */
static inline bool sm_outranks(uint8_t prio_a, uint64_t guid_a, uint8_t prio_b, uint64_t guid_b)
{
	if (prio_a != prio_b)
		return prio_a > prio_b;
	return guid_a < guid_b;
}

/* SMInfo Set attribute modifiers (IBA 14.4.1, table 181) */
#define SM_AM_HANDOVER		1
#define SM_AM_ACKNOWLEDGE	2
#define SM_AM_DISABLE		3
#define SM_AM_STANDBY		4
#define SM_AM_DISCOVER		5

struct smd;
struct fabric;
struct fab_port;
struct mad_addr;

/* Enter a state; logs the change at notice level with the reason */
void sm_set_state(struct smd *smd, enum sm_state st, const char *why);
/*
 * After discovery: ask every other port that says IsSM for its SMInfo and
 * decide. Returns 1 when this SM must be standby (the sweep stops before it
 * programs anything), 0 when it is (or stays) master, -errno on failure.
 */
int sm_elect(struct smd *smd, const struct fabric *f, const struct fab_port *own);
/*
 * A standby's poll of its master. Returns 1 when the master has missed
 * sm_poll_retries polls in a row: the caller then sweeps to take over.
 */
int sm_poll_master(struct smd *smd);
/* SMInfo Get and Set addressed to this SM (from txn's unsolicited handler) */
void sm_handle_sminfo(struct smd *smd, const uint8_t *mad, size_t len,
		      const struct mad_addr *from);

#endif
