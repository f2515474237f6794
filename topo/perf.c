// SPDX-License-Identifier: MIT
/* A port's counters: readings, totals, deltas, what to clear (perf.h). */
#include <string.h>

#include "topo/perf.h"

const struct perf_counter_def perf_counters[PERF_COUNTERS] = {
	[PERF_SYMBOL_ERRORS] = { "SymbolErrorCounter", "symbol_errors", 16,
				 PMA_CS_SYMBOL_ERRORS, 0, true, false },
	[PERF_LINK_ERROR_RECOVERY] = { "LinkErrorRecoveryCounter", "link_error_recovery", 8,
				       PMA_CS_LINK_ERROR_RECOVERY, 0, true, false },
	[PERF_LINK_DOWNED] = { "LinkDownedCounter", "link_downed", 8, PMA_CS_LINK_DOWNED, 0,
			       true, false },
	[PERF_RCV_ERRORS] = { "PortRcvErrors", "rcv_errors", 16, PMA_CS_RCV_ERRORS, 0, true,
			      false },
	[PERF_RCV_REMOTE_PHYS_ERRORS] = { "PortRcvRemotePhysicalErrors", "rcv_remote_phys_errors",
					  16, PMA_CS_RCV_REMOTE_PHYS_ERRORS, 0, true, false },
	[PERF_RCV_SWITCH_RELAY_ERRORS] = { "PortRcvSwitchRelayErrors", "rcv_switch_relay_errors",
					   16, PMA_CS_RCV_SWITCH_RELAY_ERRORS, 0, true, false },
	[PERF_XMIT_DISCARDS] = { "PortXmitDiscards", "xmit_discards", 16, PMA_CS_XMIT_DISCARDS,
				 0, true, false },
	[PERF_XMIT_CONSTRAINT_ERRORS] = { "PortXmitConstraintErrors", "xmit_constraint_errors", 8,
					  PMA_CS_XMIT_CONSTRAINT_ERRORS, 0, true, false },
	[PERF_RCV_CONSTRAINT_ERRORS] = { "PortRcvConstraintErrors", "rcv_constraint_errors", 8,
					 PMA_CS_RCV_CONSTRAINT_ERRORS, 0, true, false },
	[PERF_LOCAL_LINK_INTEGRITY_ERRORS] = { "LocalLinkIntegrityErrors",
					       "local_link_integrity_errors", 4,
					       PMA_CS_LOCAL_LINK_INTEGRITY, 0, true, false },
	[PERF_EXCESSIVE_BUFFER_OVERRUN_ERRORS] = { "ExcessiveBufferOverrunErrors",
						   "excessive_buffer_overrun_errors", 4,
						   PMA_CS_EXCESSIVE_BUFFER_OVERRUN, 0, true, false },
	[PERF_VL15_DROPPED] = { "VL15Dropped", "vl15_dropped", 16, PMA_CS_VL15_DROPPED, 0, false,
				false },
	[PERF_XMIT_WAIT] = { "PortXmitWait", "xmit_wait", 32, 0, PMA_CS2_XMIT_WAIT, false, false },
	[PERF_XMIT_DATA] = { "PortXmitData", "xmit_data", 32, PMA_CS_XMIT_DATA, 0, false, true },
	[PERF_RCV_DATA] = { "PortRcvData", "rcv_data", 32, PMA_CS_RCV_DATA, 0, false, true },
	[PERF_XMIT_PKTS] = { "PortXmitPkts", "xmit_pkts", 32, PMA_CS_XMIT_PKTS, 0, false, true },
	[PERF_RCV_PKTS] = { "PortRcvPkts", "rcv_pkts", 32, PMA_CS_RCV_PKTS, 0, false, true },
};

void perf_reading_make(const struct pma_port_counters *pc, const struct pma_port_counters_ext *pce,
		       bool xmit_wait, struct perf_reading *r)
{
	memset(r, 0, sizeof(*r));
	r->v[PERF_SYMBOL_ERRORS] = pc->symbol_errors;
	r->v[PERF_LINK_ERROR_RECOVERY] = pc->link_error_recovery;
	r->v[PERF_LINK_DOWNED] = pc->link_downed;
	r->v[PERF_RCV_ERRORS] = pc->rcv_errors;
	r->v[PERF_RCV_REMOTE_PHYS_ERRORS] = pc->rcv_remote_phys_errors;
	r->v[PERF_RCV_SWITCH_RELAY_ERRORS] = pc->rcv_switch_relay_errors;
	r->v[PERF_XMIT_DISCARDS] = pc->xmit_discards;
	r->v[PERF_XMIT_CONSTRAINT_ERRORS] = pc->xmit_constraint_errors;
	r->v[PERF_RCV_CONSTRAINT_ERRORS] = pc->rcv_constraint_errors;
	r->v[PERF_LOCAL_LINK_INTEGRITY_ERRORS] = pc->local_link_integrity_errors;
	r->v[PERF_EXCESSIVE_BUFFER_OVERRUN_ERRORS] = pc->excessive_buffer_overrun_errors;
	r->v[PERF_VL15_DROPPED] = pc->vl15_dropped;
	r->xmit_wait = xmit_wait;
	r->v[PERF_XMIT_WAIT] = xmit_wait ? pc->xmit_wait : 0;
	r->ext = pce != NULL;
	r->v[PERF_XMIT_DATA] = pce ? pce->xmit_data : pc->xmit_data;
	r->v[PERF_RCV_DATA] = pce ? pce->rcv_data : pc->rcv_data;
	r->v[PERF_XMIT_PKTS] = pce ? pce->xmit_pkts : pc->xmit_pkts;
	r->v[PERF_RCV_PKTS] = pce ? pce->rcv_pkts : pc->rcv_pkts;
}

/* The counter c of reading r is a 64-bit PortCountersExtended one */
static bool is_ext(const struct perf_reading *r, unsigned int c)
{
	return r->ext && perf_counters[c].ext;
}

static unsigned int bits_of(const struct perf_reading *r, unsigned int c)
{
	return is_ext(r, c) ? 64 : perf_counters[c].bits;
}

void perf_update(struct perf_state *st, const struct perf_reading *r, struct perf_update *u)
{
	memset(u, 0, sizeof(*u));
	for (unsigned int c = 0; c < PERF_COUNTERS; c++) {
		uint64_t v = r->v[c], max = perf_max(bits_of(r, c)), d = 0;
		bool ext = is_ext(r, c);

		if (v > max)
			v = max;	/* a decoder gives no more, a test may */
		if (c == PERF_XMIT_WAIT && !r->xmit_wait) {
			st->delta[c] = 0;
			continue;
		}
		if (!st->known || ext != !!(st->last_ext & (1u << c))) {
			/* The first reading, or another counter than the last (ext or not) */
			if (!st->known)
				st->total[c] = v;
		} else if (v >= st->last[c]) {
			d = v - st->last[c];
		} else {
			u->went_back |= 1u << c;
			d = v;
		}
		st->delta[c] = d;
		/* A total never goes down, nor wraps: it stops at the top (a lying PMA) */
		st->total[c] = st->total[c] > UINT64_MAX - d ? UINT64_MAX : st->total[c] + d;
		st->last[c] = v;
		if (ext)
			st->last_ext |= 1u << c;
		else
			st->last_ext &= ~(1u << c);
		if (ext)
			continue;
		if (v == max) {
			u->saturated |= 1u << c;
			st->saturations++;
		}
		/* Half its range: cleared before it can saturate between two readings */
		if (v > max / 2)
			u->clear |= 1u << c;
	}
	if (u->went_back)
		st->resets++;
	st->known = true;
	st->readings++;
}

void perf_cleared(struct perf_state *st, uint32_t mask, const struct perf_reading *r)
{
	for (unsigned int c = 0; c < PERF_COUNTERS; c++) {
		uint64_t max;

		if (!(mask & (1u << c)) || is_ext(r, c))
			continue;
		max = perf_max(perf_counters[c].bits);
		st->last[c] = r->v[c] > max ? max : r->v[c];
		st->last_ext &= ~(1u << c);
	}
	if (mask)
		st->clears++;
}

void perf_clear_select(uint32_t mask, uint16_t *select, uint8_t *select2)
{
	*select = 0;
	*select2 = 0;
	for (unsigned int c = 0; c < PERF_COUNTERS; c++) {
		if (!(mask & (1u << c)))
			continue;
		*select |= perf_counters[c].select;
		*select2 |= perf_counters[c].select2;
	}
}
