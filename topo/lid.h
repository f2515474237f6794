/* SPDX-License-Identifier: MIT */
/*
 * LID assignment: every endport (CA/router port, switch port 0) gets a
 * unique, LMC-aligned block of unicast LIDs. Stability first: a LID the
 * port already holds is kept when valid and unique; otherwise the LID the
 * database remembers for its GUID; otherwise the lowest free block.
 * LIDs remembered for ports that are absent can be reserved: no other port
 * takes them while a free block remains.
 */
#ifndef SMD_TOPO_LID_H
#define SMD_TOPO_LID_H

#include "topo/fabric.h"

/* Look up the remembered LID of a port GUID: 0 and *lid, or -ENOENT */
typedef int (*lid_lookup_fn)(void *ctx, uint64_t port_guid, uint16_t *lid);

struct lid_stats {
	unsigned int endports;
	unsigned int kept;		/* already held by the port */
	unsigned int remembered;	/* restored from the database */
	unsigned int fresh;		/* newly allocated */
	unsigned int conflicts;		/* held LIDs given up (duplicate, misaligned) */
	unsigned int changed;		/* endports whose LID differs from what they hold */
	unsigned int reserved;		/* blocks held back for absent ports */
	unsigned int reclaimed;		/* reserved blocks given away: no other space left */
};

/* A block of LIDs remembered for a port GUID */
struct lid_reservation {
	uint64_t guid;
	uint16_t lid;
	uint8_t lmc;
};

/* lmc applies to CA ports; switch port 0 always gets LMC 0 (base port 0) */
int lid_assign(struct fabric *f, uint8_t lmc, lid_lookup_fn lookup, void *ctx,
	       struct lid_stats *st);
/*
 * The same, keeping the blocks of res[0..nres) free: an entry whose GUID is
 * an endport of f is that port's own and ignored, the others are kept away
 * from every other port (held LIDs too). Only when no unreserved block is
 * left does a new port get a reserved one (st->reclaimed).
 */
int lid_assign_reserved(struct fabric *f, uint8_t lmc, lid_lookup_fn lookup, void *ctx,
			const struct lid_reservation *res, size_t nres, struct lid_stats *st);

#endif
