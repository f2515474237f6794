/* SPDX-License-Identifier: MIT */
/*
 * The fabric model: nodes, ports, links and the indexes over them (by GUID,
 * by LID). Pure data: no I/O, no logging. Attribute contents are the
 * host-order structs of iba/iba.h (mad/ decodes them).
 */
#ifndef SMD_TOPO_FABRIC_H
#define SMD_TOPO_FABRIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iba/iba.h"

struct fab_node;

struct fab_port {
	struct fab_node *node;
	struct fab_port *peer;		/* the other end of the cable, if known */
	struct port_info pi;		/* as last read from (or set on) the port */
	struct dr_path path;		/* CA ports: a route that enters the node here */
	uint64_t guid;			/* CA: port GUID; switch: node GUID */
	/*
	 * Partitions: the P_Key table smd keeps on the port (endports, and
	 * switch ports facing a CA or router port), pkey_tab[0..pkey_len) (the
	 * entries after it are 0), then its non-zero keys sorted by their low
	 * 15 bits, pkey_tab[pkey_len..pkey_len + pkey_nkeys), for lookups
	 * (fabric_port_pkeys). NULL: not known.
	 */
	uint16_t *pkey_tab;
	uint16_t pkey_len, pkey_nkeys;
	uint32_t load;			/* routing: LIDs forwarded out of this port */
	uint16_t lid;			/* endports: the LID smd assigned */
	uint8_t lmc;
	uint8_t num;
	bool pi_valid;
	bool pkeys_valid;		/* the port holds pkey_tab: written and answered, or read */
	bool pkey_enforce;		/* switch port: partition enforcement wanted on it */
	bool has_path;
	bool peer_lost;			/* link up but the peer never answered */
	/*
	 * The cabling plan refuses this link (topo/plan.h, cabling_enforce):
	 * it stays at INIT and nothing routes over it; set on both ends
	 */
	bool fenced;
};

struct fab_node {
	uint64_t guid;
	struct node_info ni;
	struct switch_info si;		/* switches: as read */
	char desc[SMP_DATA_SIZE + 1];
	struct dr_path path;		/* the route discovery first reached it by */
	struct fab_port *ports;		/* [0..num_ports]; port 0 only used by switches */
	uint8_t *lft;			/* switches: computed LFT, lft_len entries */
	uint32_t lft_len;
	uint32_t idx;			/* position in fabric.nodes */
	uint32_t sw_idx;		/* position in fabric.switches, switches only */
	uint8_t type;
	uint8_t num_ports;
	bool si_valid;
	bool desc_valid;
	/* Switches: the SM's last light sweep read PortStateChange here and cleared it */
	bool psc_cleared;
	/*
	 * Signatures of the SL-to-VL and VL arbitration tables the SM last
	 * programmed and read back on this node (0: not known), so that an
	 * unchanged, never-reset node is not read again every sweep.
	 */
	uint64_t sl2vl_sig;
	uint64_t vlarb_sig;
};

struct fabric {
	struct fab_node **nodes;
	size_t nnodes, cap;
	struct fab_node **switches;
	size_t nswitches;
	struct fab_node **by_guid;	/* open addressing, power-of-two size */
	size_t hash_size;
	struct fab_port **by_lid;	/* [0..LID_UCAST_MAX], endport owning the LID */
	uint16_t max_lid;
};

int fabric_new(struct fabric **out);
struct fabric *fabric_free(struct fabric *f);
struct fab_node *fabric_find(const struct fabric *f, uint64_t guid);
/* Adds the node described by ni, or -EEXIST with *out set to the known one */
int fabric_add_node(struct fabric *f, const struct node_info *ni, struct fab_node **out);
/* Connects two ports (never a port 0: -EINVAL); an old link of either end is undone first */
int fabric_link(struct fabric *f, struct fab_port *a, struct fab_port *b);
/*
 * Take the nodes drop() picks out of the model, with their cables (their
 * peers are left uncabled); the others keep their order. Returns how
 * many, or -ENOMEM (nothing removed).
 */
int fabric_remove_nodes(struct fabric *f, bool (*drop)(void *ctx, const struct fab_node *n),
			void *ctx);
struct fab_port *fabric_port(const struct fab_node *n, unsigned int num);
/* Endports hold LIDs: switch port 0, and CA/router ports */
bool fabric_is_endport(const struct fab_port *p);
/*
 * A cabled port whose link is up at both ends (PhysState LinkUp, known
 * peer that names it back, neither a port 0) and not fenced: what routing,
 * path records and activation may use; symmetric by construction
 */
bool fabric_port_linked(const struct fab_port *p);
/*
 * The directed route SMPs about port p take: the switch's route for any
 * switch port, the route entering through p for a CA or router port
 * (only SMPs arriving at a CA port may act on it); NULL when unknown.
 */
const struct dr_path *fabric_port_route(const struct fab_port *p);
/*
 * The port an SMP leaving port from by the exit ports port[1..hops] of a
 * directed route reaches over the model's cables (IBA 14.2.2: only
 * switches are crossed; exit port 0 of a switch is the switch itself): a
 * switch's port 0, which answers for the whole switch, or the CA port it
 * enters by. NULL where the model has no cable or the route is invalid.
 */
struct fab_port *fabric_walk(const struct fab_port *from, const uint8_t *port, unsigned int hops);
/* Rebuild by_lid/max_lid from the endports' lid/lmc; -EADDRINUSE on a clash */
int fabric_index_lids(struct fabric *f);
struct fab_port *fabric_port_by_lid(const struct fabric *f, uint16_t lid);
/*
 * LIDs switch n forwards out of each port per its LFT (per_port[0..num_ports]),
 * how many LIDs it routes and how many held LIDs it does not
 */
void fabric_count_routes(const struct fabric *f, const struct fab_node *n, uint32_t *per_port,
			 uint32_t *routed, uint32_t *unrouted);
size_t fabric_count_ports(const struct fabric *f, size_t *endports, size_t *links);
/*
 * Give port p the P_Key table tab[0..len) (IBA 14.2.5.7; trailing blocks
 * of zeros are not kept). 0 or -ENOMEM (the old table stays).
 */
int fabric_port_set_pkeys(struct fab_port *p, const uint16_t *tab, unsigned int len);
/*
 * The port's P_Keys, non-zero, sorted by their low 15 bits (one entry per
 * partition, the full member's when both are there). A port whose table is
 * not known holds the default partition, full member (0xffff).
 */
const uint16_t *fabric_port_pkeys(const struct fab_port *p, unsigned int *n);

#endif
