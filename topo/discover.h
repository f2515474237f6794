/* SPDX-License-Identifier: MIT */
/*
 * Directed-route discovery as a breadth-first search. This file decides
 * what to ask next and merges the answers into the fabric; smd/ carries the
 * probes over mad/ and feeds the decoded answers back. Nodes reached again
 * (loops, parallel links, the second port of an HCA) are recognised by GUID.
 */
#ifndef SMD_TOPO_DISCOVER_H
#define SMD_TOPO_DISCOVER_H

#include "topo/fabric.h"

enum disc_kind {
	DISC_NODE_INFO,
	DISC_NODE_DESC,
	DISC_SWITCH_INFO,
	DISC_PORT_INFO,
};

struct disc_probe {
	enum disc_kind kind;
	struct dr_path path;
	struct fab_node *node;		/* the node asked (all but NODE_INFO) */
	struct fab_port *from;		/* NODE_INFO: the port we left through, or NULL */
	uint8_t port;			/* PORT_INFO: attribute modifier */
};

struct disc_stats {
	unsigned int probes;
	unsigned int failed;		/* probes that never got an answer */
	unsigned int lost_peers;	/* link up, peer never answered */
	unsigned int rejected;		/* answers that contradict the model */
};

struct disc;

int disc_new(struct fabric *f, struct disc **out);
struct disc *disc_free(struct disc *d);
/* Queue the first probe: NodeInfo of the SM's own node (hop count 0) */
int disc_start(struct disc *d);
/* Pop the next probe to send; false when none is queued */
bool disc_next(struct disc *d, struct disc_probe *out);
int disc_node_info(struct disc *d, const struct disc_probe *p, const struct node_info *ni);
int disc_node_desc(struct disc *d, const struct disc_probe *p, const struct node_desc *nd);
int disc_switch_info(struct disc *d, const struct disc_probe *p, const struct switch_info *si);
int disc_port_info(struct disc *d, const struct disc_probe *p, const struct port_info *pi);
/* The probe got no usable answer */
void disc_failed(struct disc *d, const struct disc_probe *p, int err);
const struct disc_stats *disc_stats(const struct disc *d);
/* The SM's own node, once known */
struct fab_node *disc_local_node(const struct disc *d);
uint8_t disc_local_port(const struct disc *d);

#endif
