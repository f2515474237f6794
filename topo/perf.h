/* SPDX-License-Identifier: MIT */
/*
 * A port's counters as a performance manager keeps them (IBA 16.1): one
 * reading after the other (PortCounters, with the data and packet
 * counters from PortCountersExtended where the PMA has them), running
 * totals that survive clears and resets, the deltas of the last interval,
 * and which counters are to be cleared. Pure logic, unit-tested alone;
 * smd/perf.c asks the PMAs.
 *
 * PortCounters saturate: they stop at all ones and lose what comes after
 * (IBA 16.1.3.5). A counter read at half its range or more is cleared
 * (a PortCounters Set naming only it in CounterSelect) before it can get
 * there; the Set's answer is the new baseline and the total goes on from
 * it. PortCountersExtended's 64-bit counters are never cleared. A counter
 * lower than the last reading was reset (the port rebooted, someone
 * cleared it): what it holds now counts as new. The first reading of a
 * port sets its totals to what the port holds (so they equal what
 * perfquery reads until something is cleared) and its deltas to 0.
 */
#ifndef SMD_TOPO_PERF_H
#define SMD_TOPO_PERF_H

#include <stdbool.h>
#include <stdint.h>

#include "iba/iba.h"

enum perf_ctr {
	PERF_SYMBOL_ERRORS,
	PERF_LINK_ERROR_RECOVERY,
	PERF_LINK_DOWNED,
	PERF_RCV_ERRORS,
	PERF_RCV_REMOTE_PHYS_ERRORS,
	PERF_RCV_SWITCH_RELAY_ERRORS,
	PERF_XMIT_DISCARDS,
	PERF_XMIT_CONSTRAINT_ERRORS,
	PERF_RCV_CONSTRAINT_ERRORS,
	PERF_LOCAL_LINK_INTEGRITY_ERRORS,
	PERF_EXCESSIVE_BUFFER_OVERRUN_ERRORS,
	PERF_VL15_DROPPED,
	PERF_XMIT_WAIT,
	PERF_XMIT_DATA,		/* 4-byte words (IBA 16.1.3.5) */
	PERF_RCV_DATA,
	PERF_XMIT_PKTS,
	PERF_RCV_PKTS,
	PERF_COUNTERS
};

/* One counter: its IBA name, a key (logs, the database), its width in PortCounters */
struct perf_counter_def {
	const char *iba;		/* "SymbolErrorCounter" */
	const char *key;		/* "symbol_errors" */
	unsigned int bits;		/* in PortCounters */
	uint16_t select;		/* its PortCounters.CounterSelect bit (PMA_CS_*) */
	uint8_t select2;		/* ... or CounterSelect2's */
	bool error;			/* an error counter: each increment is an error event */
	bool ext;			/* PortCountersExtended has it in 64 bits */
};

extern const struct perf_counter_def perf_counters[PERF_COUNTERS];

/* What a port's PMA said in one interval */
struct perf_reading {
	uint64_t v[PERF_COUNTERS];
	bool ext;			/* data and packets are PortCountersExtended's */
	bool xmit_wait;			/* PortXmitWait is there (PMA_CAP_XMIT_WAIT) */
};

/* pce: NULL when the PMA has no PortCountersExtended (or it was not read) */
void perf_reading_make(const struct pma_port_counters *pc, const struct pma_port_counters_ext *pce,
		       bool xmit_wait, struct perf_reading *r);

struct perf_state {
	uint64_t total[PERF_COUNTERS];	/* running totals since smd first read the port */
	uint64_t delta[PERF_COUNTERS];	/* of the last reading */
	uint64_t last[PERF_COUNTERS];	/* the raw values last read (or the Set answered) */
	uint32_t last_ext;		/* bit per counter: last[] is a 64-bit counter */
	bool known;			/* last[] holds a reading */
	uint64_t readings, resets, saturations, clears;
};

/* What one reading found, bit (1 << enum perf_ctr) per counter */
struct perf_update {
	uint32_t went_back;		/* lower than before: reset */
	uint32_t saturated;		/* at its maximum: counts were lost */
	uint32_t clear;			/* at half its range or more: to be cleared now */
};

void perf_update(struct perf_state *st, const struct perf_reading *r, struct perf_update *u);
/*
 * A Set cleared the counters of mask, and r is what its answer says the
 * port holds now: the new baseline of those counters (their totals stay)
 */
void perf_cleared(struct perf_state *st, uint32_t mask, const struct perf_reading *r);
/* The PortCounters CounterSelect and CounterSelect2 of a Set that clears mask */
void perf_clear_select(uint32_t mask, uint16_t *select, uint8_t *select2);
/* The largest value a counter of that many bits holds */
static inline uint64_t perf_max(unsigned int bits)
{
	return bits >= 64 ? UINT64_MAX : (UINT64_C(1) << bits) - 1;
}

#endif
