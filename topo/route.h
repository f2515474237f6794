/* SPDX-License-Identifier: MIT */
/*
 * Routing engines fill every switch's linear forwarding table (node->lft,
 * indexed by LID, LFT_PORT_NONE where a LID is unreachable). Engines are
 * pure computations over the fabric model.
 */
#ifndef SMD_TOPO_ROUTE_H
#define SMD_TOPO_ROUTE_H

#include "topo/fabric.h"

struct route_stats {
	unsigned int switches;
	unsigned int lids;
	unsigned int unreachable;	/* (switch, LID) pairs with no route */
	unsigned int max_hops;		/* switch-to-switch hops on the longest route */
	uint32_t max_port_load;		/* most LIDs routed out of one port */
	double mean_port_load;		/* over switch ports that carry any route */
};

struct route_engine {
	const char *name;
	int (*compute)(struct fabric *f, struct route_stats *st);
};

const struct route_engine *route_engine_find(const char *name);
int route_compute(const struct route_engine *e, struct fabric *f, struct route_stats *st);

/* Helpers shared by engines */
int route_alloc_lfts(struct fabric *f);
/* The switch an endport hangs off (itself for port 0); NULL if none */
struct fab_node *route_attach_switch(const struct fab_port *ep, uint8_t *sw_port);

int route_minhop_compute(struct fabric *f, struct route_stats *st);

#endif
