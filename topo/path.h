/* SPDX-License-Identifier: MIT */
/*
 * Path attributes from the programmed routes, precomputed per destination:
 * for every (switch, destination LID), the hop count and the smallest MTU
 * and rate on the way, so that a PathRecord costs O(1), not a walk.
 */
#ifndef SMD_TOPO_PATH_H
#define SMD_TOPO_PATH_H

#include "topo/fabric.h"

struct path_attr {
	uint8_t hops;		/* links between the two endports */
	uint8_t mtu;		/* IBA MTU code, smallest on the path */
	uint8_t rate;		/* IBA rate code, slowest on the path */
};

struct path_table;

/* Build from f's LFTs (route_compute must have run); f must outlive the table */
int path_table_build(const struct fabric *f, struct path_table **out);
struct path_table *path_table_free(struct path_table *t);
/*
 * Attributes of the path from the endport owning slid to the one owning
 * dlid: 0, -ENOENT (a LID no endport holds) or -EHOSTUNREACH (no route,
 * or a loop in the tables).
 */
int path_lookup(const struct path_table *t, uint16_t slid, uint16_t dlid, struct path_attr *out);
/* Rate and MTU of one cable, as both ends can run it */
uint8_t path_link_mtu(const struct fab_port *p);
uint8_t path_link_rate(const struct fab_port *p);

#endif
