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
	/*
	 * The health rules took this link out of service (topo/health.h,
	 * health_action = isolate): it stays ACTIVE, so that its counters
	 * can still be read, but no route crosses it; set on both ends
	 */
	bool isolated;
	bool fdr10;			/* FDR10 active: its vendor ExtendedPortInfo says so */
	/*
	 * VL arbitration table as the port holds it (IBA 14.2.5.9): blocks
	 * 1-4 (low 0-31, low 32-63, high 0-31, high 32-63) at [0..3], shared
	 * with every port of the model that holds the same block
	 * (fabric_vlarb_set); NULL: not known
	 */
	const struct vl_arb_entry *vlarb[4];
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
	/*
	 * SL-to-VL tables as the node holds them (fabric_sl2vl_get): one value
	 * for every known entry while they agree (sl2vl_tab NULL), an array
	 * of them once they differ; sl2vl_known: a bit per entry, NULL: none
	 */
	uint64_t *sl2vl_tab;
	uint64_t sl2vl_one;
	uint64_t *sl2vl_known;
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
	struct fab_pool *pool;		/* the VL arbitration blocks its ports hold */
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
/*
 * The speed port p's link runs at (iba_speed_active): a switch's external
 * ports go by the CapabilityMask of its port 0
 */
enum iba_speed fabric_port_speed(const struct fab_port *p);
/* Endports hold LIDs: switch port 0, and CA/router ports */
bool fabric_is_endport(const struct fab_port *p);
/*
 * A cabled port whose link is up at both ends (PhysState LinkUp, known
 * peer that names it back, neither a port 0) and not fenced: what
 * activation, port configuration, VL tables and LinkRecords go by;
 * symmetric by construction
 */
bool fabric_port_up(const struct fab_port *p);
/*
 * ... and not isolated either: what routing (engines, repair, the
 * verifier) and path records may use
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
 * The VL tables ports hold, as the sweep found (or wrote) them, for the
 * SA. An SL-to-VL table (IBA 14.2.5.8) is 16 VLs of 4 bits, SL 0 in the
 * top nibble (as the attribute's first 8 bytes, read big-endian): a
 * switch has one per (input, output) port pair, a CA port one (input 0).
 * Which ones matter: a switch's pairs of port 0 or a linked port in and
 * another linked port out; a CA's linked ports. -EINVAL for a pair the
 * node cannot have, -ENOENT: not known.
 */
bool fabric_sl2vl_pair(const struct fab_node *n, unsigned int in, unsigned int out);
int fabric_sl2vl_set(struct fab_node *n, unsigned int in, unsigned int out, uint64_t vl);
int fabric_sl2vl_get(const struct fab_node *n, unsigned int in, unsigned int out, uint64_t *vl);
void fabric_sl2vl_forget(struct fab_node *n, unsigned int in, unsigned int out);
/*
 * VL arbitration blocks (IBA 14.2.5.9) 1-4 of port p: a linked port with
 * PortInfo, not a switch's port 0 (fabric_vlarb_port); those within its
 * VLArbLowCap/VLArbHighCap (fabric_vlarb_has_block). get: NULL when not
 * known; set: 0, -EINVAL, -ENOMEM.
 */
bool fabric_vlarb_port(const struct fab_port *p);
bool fabric_vlarb_has_block(const struct fab_port *p, unsigned int block);
int fabric_vlarb_set(struct fabric *f, struct fab_port *p, unsigned int block,
		     const struct vl_arb_entry e[VL_ARB_BLOCK_SIZE]);
const struct vl_arb_entry *fabric_vlarb_get(const struct fab_port *p, unsigned int block);
/*
 * Node n of model f takes the VL tables old (the same node in another
 * model, as many ports) holds: 0, -EINVAL, -ENOMEM
 */
int fabric_vl_tables_copy(struct fabric *f, struct fab_node *n, const struct fab_node *old);
/* An SL-to-VL table's 16 VLs, packed as above, and back */
uint64_t sl2vl_pack(const uint8_t vl[16]);
void sl2vl_unpack(uint64_t packed, uint8_t vl[16]);

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
