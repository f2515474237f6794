/* SPDX-License-Identifier: MIT */
/*
 * Topology dumps of a fabric model (usually store_load_fabric()'s):
 *  - ibnetdiscover: the text `ibnetdiscover` prints by default, byte for
 *    byte apart from the date in the header and the order of the node
 *    blocks (switches, then CAs, then routers, each by GUID); ibsim loads it
 *  - json: every node and port with its attributes, and the links
 *  - dot: a Graphviz graph, one vertex per node and one edge per cable
 * No I/O but the FILE given, no logging.
 */
#ifndef SMD_DB_DUMP_H
#define SMD_DB_DUMP_H

#include <stdint.h>
#include <stdio.h>

#include "db/store.h"
#include "topo/fabric.h"

enum dump_format {
	DUMP_IBNETDISCOVER,
	DUMP_JSON,
	DUMP_DOT,
};

struct dump_meta {
	int64_t time;			/* when the fabric was seen, unix seconds */
	int64_t sweep_id;		/* 0 when unknown */
	uint64_t sm_node_guid;		/* where the sweep ran from */
	uint64_t sm_port_guid;
	/* json: the live multicast groups (store_foreach_mcast), may be none */
	const struct store_mcast *mcast;
	size_t nmcast;
	/* json: the partitions, and the endports' P_Keys sorted by P_Key (may be none) */
	const struct store_partition *parts;
	size_t nparts;
	const struct store_port_pkey *pkeys;
	size_t npkeys;
};

/* "ibnetdiscover", "json" or "dot": 0, or -EINVAL */
int dump_format_parse(const char *name, enum dump_format *out);
/* 0, -ENOMEM, or -EIO when writing failed */
int dump_write(FILE *out, const struct fabric *f, const struct dump_meta *m,
	       enum dump_format fmt);

#endif
