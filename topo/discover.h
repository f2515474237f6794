/* SPDX-License-Identifier: MIT */
/*
 * Directed-route discovery as a breadth-first search. This file decides
 * what to ask next and merges the answers into the fabric; smd/ carries the
 * probes over mad/ and feeds the decoded answers back. Nodes reached again
 * (loops, parallel links, the second port of an HCA) are recognised by GUID.
 *
 * No answer is trusted: each is checked against the IBA rules and what the
 * model already holds (NodeType, NumPorts, LocalPortNum, a cable's two ends
 * agreeing). A switch reached again over another cable is asked once more
 * through its own first route, so that a second switch claiming its GUID is
 * found out instead of merged. A GUID seen at two places is recorded and
 * both places are left out of the model (disc_finish).
 */
#ifndef SMD_TOPO_DISCOVER_H
#define SMD_TOPO_DISCOVER_H

#include "topo/fabric.h"

enum disc_kind {
	DISC_NODE_INFO,
	DISC_NODE_DESC,
	DISC_SWITCH_INFO,
	DISC_PORT_INFO,
	/*
	 * NodeInfo again, to check a cable that reached a switch already
	 * known: out of that switch's own route through the port the cable
	 * came in on, the answer must be the node and port it came from.
	 */
	DISC_VERIFY,
};

struct disc_probe {
	enum disc_kind kind;
	struct dr_path path;
	struct fab_node *node;		/* the node asked (all but NODE_INFO); VERIFY: the
					 * switch the cable reached */
	struct fab_port *from;		/* NODE_INFO, VERIFY: the port the cable starts at */
	uint8_t port;			/* PORT_INFO: attribute modifier; VERIFY: the port of
					 * node the cable reached */
};

struct disc_stats {
	unsigned int probes;
	unsigned int failed;		/* probes that never got an answer */
	unsigned int lost_peers;	/* link up, peer never answered */
	unsigned int rejected;		/* answers that contradict the model */
	unsigned int duplicates;	/* GUIDs seen at two places (all, recorded or not) */
	unsigned int left_out;		/* nodes disc_finish took out of the model */
};

/*
 * A GUID seen at two places: where it was first seen and where again (the
 * directed routes SMPs take to reach them). Both are left out of the model.
 */
struct disc_dup {
	uint64_t guid;
	bool port_guid;			/* a port GUID; else a node GUID */
	struct dr_path first, again;
};

#define DISC_DUPS_MAX	32		/* incidents recorded; the rest are only counted */

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
/*
 * The probe got no usable answer. Every disc_* answer function returns 0
 * (taken, or recorded as a duplicate), -EPROTO (rejected: disc_why says
 * why) or -ENOMEM; a rejected answer is then passed here too.
 */
void disc_failed(struct disc *d, const struct disc_probe *p, int err);
/* Why the last answer was rejected (static text) */
const char *disc_why(const struct disc *d);
/*
 * Once every probe is answered: takes the nodes at both places of every
 * duplicate GUID out of the model (never the SM's own node, which is
 * certain), with their cables. Returns how many.
 */
int disc_finish(struct disc *d);
/* The duplicates recorded (at most DISC_DUPS_MAX; stats.duplicates counts all) */
const struct disc_dup *disc_dups(const struct disc *d, unsigned int *n);
const struct disc_stats *disc_stats(const struct disc *d);
/* The SM's own node, once known */
struct fab_node *disc_local_node(const struct disc *d);
uint8_t disc_local_port(const struct disc *d);

#endif
