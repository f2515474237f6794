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

#include "util/siphash.h"

/* The values are SMInfo.SMState on the wire (IBA 14.2.5.13) */
enum sm_state {
	SM_NOT_ACTIVE = 0,
	SM_DISCOVERING = 1,
	SM_STANDBY = 2,
	SM_MASTER = 3,
};
#define SM_STATES	4

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

/*
 * IBA 14.4.1 (table 181, figure 212): what an SMInfo Set with modifier
 * amod, sent by an SM in state sender, does to an SM in state me. Every
 * one of them comes from a master: HANDOVER makes a standby master,
 * ACKNOWLEDGE tells the old master the new one took over (no change),
 * DISABLE silences a standby (or a discovering SM), STANDBY and DISCOVER
 * wake a NOT-ACTIVE SM (smd goes DISCOVERING: its election then finds the
 * master to poll). Returns the new state, or -1 when the Set is not to be
 * obeyed (unknown modifier, a sender that is not master, or a state the
 * transition does not start from).
 */
static inline int sm_set_transition(enum sm_state me, uint8_t sender, uint32_t amod)
{
	if (sender != SM_MASTER)
		return -1;
	switch (amod) {
	case SM_AM_HANDOVER:
		return me == SM_STANDBY || me == SM_DISCOVERING ? SM_MASTER : -1;
	case SM_AM_ACKNOWLEDGE:
		return me == SM_STANDBY || me == SM_MASTER ? (int)me : -1;
	case SM_AM_DISABLE:
		return me == SM_STANDBY || me == SM_DISCOVERING ? SM_NOT_ACTIVE : -1;
	case SM_AM_STANDBY:
	case SM_AM_DISCOVER:
		return me == SM_NOT_ACTIVE ? SM_DISCOVERING : -1;
	}
	return -1;
}

/*
 * The SM_Key field between SMs that share sm_key K (not 0). IBA 14.2.5.13
 * carries SM_Key as it is and has the requester show it first, so every
 * host that opened issm and was asked for its SMInfo would learn it and
 * could then pose as a peer. smd sends K to nobody: a request from port
 * GUID a to port GUID b carries SipHash-2-4 keyed with K over 'q', the
 * sender's ActCount, a and b; the answer 'r', the answerer's ActCount, b
 * and a. A value holds for one direction between one pair of ports: the
 * only ones a rogue ever receives are addressed to itself and let it
 * answer or ask no one. Only an SM that shows such a value is a peer: its
 * Sets are obeyed, it takes part in the election, and the answers it gets
 * carry smd's own value (0 for anyone else). With sm_key, smd therefore
 * authenticates only with SMs that do the same (other smd).
 */
static inline uint64_t sm_auth(uint64_t key, bool answer, uint32_t act_count, uint64_t from,
			       uint64_t to)
{
	uint8_t m[21];

	m[0] = answer ? 'r' : 'q';
	for (int i = 0; i < 4; i++)
		m[1 + i] = (uint8_t)(act_count >> (24 - 8 * i));
	for (int i = 0; i < 8; i++) {
		m[5 + i] = (uint8_t)(from >> (56 - 8 * i));
		m[13 + i] = (uint8_t)(to >> (56 - 8 * i));
	}
	/* The second key word is fixed: smd's keys are 64 bits */
	return siphash24(key, UINT64_C(0x736d642d736d6b79), m, sizeof(m));
}

/* Whether an SMInfo from port GUID from to port GUID to shows key (always without one) */
static inline bool sm_auth_ok(uint64_t key, bool answer, uint32_t act_count, uint64_t from,
			      uint64_t to, uint64_t field)
{
	return !key || field == sm_auth(key, answer, act_count, from, to);
}

struct smd;
struct fabric;
struct fab_port;
struct mad_addr;

/*
 * What entering each state does (the timers, the SA: smd/loop.c), called by
 * sm_set_state() from the state change itself, whatever made it: an
 * election, a poll, another SM's SMInfo Set, smctl. from: the old state.
 */
struct sm_actions {
	void (*enter[SM_STATES])(struct smd *smd, enum sm_state from);
};

/* Enter a state: logs the change at notice level with the reason, runs its entry action */
void sm_set_state(struct smd *smd, enum sm_state st, const char *why);
/*
 * The election, after discovery, without waiting: sm_elect_start asks every
 * other port that says IsSM for its SMInfo (the answers come through the
 * transaction layer); once they are all in, sm_elect_decide decides: 1 when
 * this SM must be standby (the sweep stops before it programs anything), 0
 * when it is (or stays) master, SM_ELECT_AGAIN when it sent a HANDOVER to a
 * better standby (call it again once that is answered), -errno on failure.
 */
#define SM_ELECT_AGAIN	2
struct sm_election;
int sm_elect_start(struct smd *smd, const struct fabric *f, const struct fab_port *own,
		   struct sm_election **out);
int sm_elect_decide(struct smd *smd, struct sm_election *e);
/* Only once none of its SMPs is in flight (answered or cancelled); returns NULL */
struct sm_election *sm_election_free(struct sm_election *e);
/*
 * A standby's poll of its master, without waiting: when it has missed
 * sm_poll_retries polls in a row, the answer's handler moves the SM to
 * DISCOVERING (whose entry action sweeps to take over). -EALREADY while a
 * poll is out.
 */
int sm_poll_master(struct smd *smd);
/* smctl sm-enable: a NOT-ACTIVE SM looks for the master again; -EALREADY if not NOT-ACTIVE */
int sm_enable(struct smd *smd, const char *who);
/* SMInfo Get and Set addressed to this SM (from txn's unsolicited handler) */
void sm_handle_sminfo(struct smd *smd, const uint8_t *mad, size_t len,
		      const struct mad_addr *from);

#endif
