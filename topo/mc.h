/* SPDX-License-Identifier: MIT */
/*
 * Multicast groups (IBA 15.2.5.17, 15.4): the groups the SA knows, their
 * member ports with JoinState bits, MLID allocation, and the rules of
 * joining, creating and leaving. Pure data: the SA decodes requests into
 * struct mc_req and encodes the answers; the forest (mc_forest.c) turns
 * groups into multicast forwarding tables.
 *
 * Errors map to SA statuses (IBA 15.2.1.1, table 184): -EINVAL
 * ERR_REQ_INVALID, -ENODATA ERR_REQ_INSUFFICIENT_COMPONENTS, -EACCES
 * ERR_REQ_DENIED, -ENOSPC and -ENOMEM ERR_NO_RESOURCES.
 */
#ifndef SMD_TOPO_MC_H
#define SMD_TOPO_MC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "topo/fabric.h"

/* JoinState bits (IBA 15.2.5.17.1; SendOnlyFullMember since IBA 1.3) */
#define MC_JOIN_FULL		0x1
#define MC_JOIN_NON		0x2
#define MC_JOIN_SENDONLY_NON	0x4
#define MC_JOIN_SENDONLY_FULL	0x8
#define MC_JOIN_ALL		0xf
/* Members that receive: the MFT delivers to their ports */
#define MC_JOIN_RECEIVES	(MC_JOIN_FULL | MC_JOIN_NON)
/* Members that hold a group in existence, and may create it */
#define MC_JOIN_HOLDS		(MC_JOIN_FULL | MC_JOIN_SENDONLY_FULL)

/* Which components of a request are given (the SA's component mask) */
#define MC_HAS_MGID		(1u << 0)
#define MC_HAS_PORT_GID		(1u << 1)
#define MC_HAS_QKEY		(1u << 2)
#define MC_HAS_MLID		(1u << 3)
#define MC_HAS_MTU_SEL		(1u << 4)
#define MC_HAS_MTU		(1u << 5)
#define MC_HAS_TCLASS		(1u << 6)
#define MC_HAS_PKEY		(1u << 7)
#define MC_HAS_RATE_SEL		(1u << 8)
#define MC_HAS_RATE		(1u << 9)
#define MC_HAS_PLT_SEL		(1u << 10)
#define MC_HAS_PLT		(1u << 11)
#define MC_HAS_SL		(1u << 12)
#define MC_HAS_FLOW_LABEL	(1u << 13)
#define MC_HAS_HOP_LIMIT	(1u << 14)
#define MC_HAS_SCOPE		(1u << 15)
#define MC_HAS_JOIN_STATE	(1u << 16)
#define MC_HAS_PROXY_JOIN	(1u << 17)
/*
 * What a join that creates a group must name (IBA o15-0.2.3; the Linux
 * IPoIB and rdma_cm send them): the MGID (0: the SA picks one) and these
 */
#define MC_CREATE_NEEDS		(MC_HAS_MGID | MC_HAS_QKEY | MC_HAS_PKEY | MC_HAS_SL | \
				 MC_HAS_FLOW_LABEL | MC_HAS_TCLASS)

/* Selectors (IBA 15.2.5.16): greater than, less than, exactly, largest */
#define MC_SEL_GT		0
#define MC_SEL_LT		1
#define MC_SEL_EQ		2
#define MC_SEL_BEST		3

/* A group's parameters: IBA codes for MTU, rate and PacketLifeTime */
struct mc_params {
	uint32_t qkey;
	uint16_t pkey;			/* the full-membership bit always set */
	uint8_t mtu;
	uint8_t rate;
	uint8_t plt;
	uint8_t sl;
	uint32_t flow_label;
	uint8_t tclass;
	uint8_t hop_limit;
	uint8_t scope;
};

struct mc_member {
	uint64_t guid;			/* port GUID */
	uint8_t join_state;
	bool proxy;			/* joined for it by another port */
};

struct mc_group {
	uint8_t mgid[16];
	uint16_t mlid;
	struct mc_params p;
	bool permanent;			/* configured: lives without members */
	struct mc_member *members;	/* sorted by GUID */
	uint32_t nmembers, cap;
	uint32_t holders;		/* members with MC_JOIN_HOLDS bits */
	uint64_t root_hint;		/* switch GUID its tree was last rooted at */
	struct mc_group *hnext;		/* MGID hash chain */
};

/* A request as the SA decoded it (Set = join, Delete = leave) */
struct mc_req {
	uint32_t has;			/* MC_HAS_* */
	uint8_t mgid[16];
	uint64_t port_guid;		/* PortGID's interface ID */
	uint16_t mlid;
	uint8_t mtu_sel, rate_sel, plt_sel;
	struct mc_params p;		/* the values given (pkey as given) */
	uint8_t join_state;
	bool proxy;
};

/* What the model knows of the member port a join is for */
struct mc_port {
	uint64_t guid;
	const uint16_t *pkeys;		/* its P_Key table as read (may be NULL) */
	unsigned int npkeys;
	uint8_t mtu;			/* MTU and rate its link runs (IBA codes) */
	uint8_t rate;
};

/* A group that appeared or went (for the database and for Reports) */
struct mc_event {
	bool created;
	uint8_t mgid[16];
	uint16_t mlid;
	uint16_t pkey;			/* the group's partition (who may hear of it) */
};

struct mc_db;

/* Groups on MLIDs LID_MCAST_MIN .. mlid_top (at most LID_MCAST_MAX) */
int mc_db_new(uint16_t mlid_top, struct mc_db **out);
struct mc_db *mc_db_free(struct mc_db *db);
/*
 * The highest usable MLID (the switches' MulticastFDBCap allows no more).
 * Groups above it stay but their MFTs cannot be programmed: *over says how many.
 */
void mc_db_set_top(struct mc_db *db, uint16_t mlid_top, unsigned int *over);
uint16_t mc_db_top(const struct mc_db *db);
/* PacketLifeTime of the groups joins create without naming one */
void mc_db_set_plt(struct mc_db *db, uint8_t plt);

struct mc_group *mc_db_find(const struct mc_db *db, const uint8_t mgid[16]);
struct mc_group *mc_db_by_mlid(const struct mc_db *db, uint16_t mlid);
size_t mc_db_count(const struct mc_db *db);
/* The highest MLID in use (0 when none) */
uint16_t mc_db_max_mlid(const struct mc_db *db);
/* Next group after MLID prev (0: the first), in MLID order; NULL at the end */
struct mc_group *mc_db_next(const struct mc_db *db, uint16_t prev);
const struct mc_member *mc_group_member(const struct mc_group *g, uint64_t guid);

/*
 * A configured group that exists without members (the IPoIB broadcast
 * group): created now, or its parameters updated when it exists.
 */
int mc_db_add_permanent(struct mc_db *db, const uint8_t mgid[16], const struct mc_params *p,
			struct mc_group **out);
/* A configured group that no longer is: it stays while members hold it */
void mc_db_unpin(struct mc_db *db, struct mc_group *g);
/*
 * MLIDs remembered for MGIDs (from the database): a group created again
 * with one of these MGIDs gets its MLID back when free, and other groups
 * take them only when nothing else is left.
 */
int mc_db_remember(struct mc_db *db, const uint8_t mgid[16], uint16_t mlid);
size_t mc_db_remembered(const struct mc_db *db);

/*
 * Join (SA Set): port is the member port, as the model knows it. Creates the
 * group when it does not exist (the request must carry MC_CREATE_NEEDS and
 * a JoinState that holds it; no MGID or MGID 0: the SA assigns one, with
 * scope and P_Key from the request). *out: the group, *state: the port's
 * JoinState after the join.
 */
int mc_join(struct mc_db *db, const struct mc_req *req, const struct mc_port *port,
	    struct mc_group **out, uint8_t *state);
/*
 * Leave (SA Delete): clears the JoinState bits the request names; the port
 * stops being a member when none are left, and a group that no member holds
 * any longer (and is not permanent) is deleted with its MLID freed. *out
 * gets a copy of the group as it was (for the answer), *state the port's
 * remaining JoinState; *deleted whether the group went.
 */
int mc_leave(struct mc_db *db, const struct mc_req *req, struct mc_group *out,
	     uint8_t *state, bool *deleted);
/*
 * Drop every member port for which keep() is false, asked with the
 * group's P_Key (ports that left the fabric, or left the partition); groups
 * no member holds any longer go. Returns the members dropped.
 */
size_t mc_db_purge(struct mc_db *db, bool (*keep)(void *ctx, uint64_t guid, uint16_t pkey),
		   void *ctx);

/*
 * Groups whose membership or existence changed since the last call: the
 * MLIDs are marked in dirty[] (MLID_COUNT bits, bit mlid - LID_MCAST_MIN),
 * which this clears in the database. Returns how many.
 */
size_t mc_db_take_dirty(struct mc_db *db, uint64_t *dirty);
/* The next MLID after prev (0: the first) marked in dirty, 0 at the end */
uint16_t mc_db_next_dirty(const uint64_t *dirty, uint16_t prev);
/* Mark one MLID (or all with mlid 0) changed */
void mc_db_touch(struct mc_db *db, uint16_t mlid);
/* Created/deleted groups waiting to be taken */
size_t mc_db_events(const struct mc_db *db);
/* Created/deleted groups since the last call: up to n into ev, returns how many taken */
size_t mc_db_take_events(struct mc_db *db, struct mc_event *ev, size_t n);

/* The IPoIB broadcast MGID of a partition (RFC 4391: ff1S:401b:PPPP::ffff:ffff) */
void mc_ipoib_mgid(uint16_t pkey, uint8_t scope, uint8_t mgid[16]);
/* Does port hold P_Key pkey (any membership)? */
bool mc_port_has_pkey(const struct mc_port *port, uint16_t pkey);

/*
 * The forest: every group's tree over one fabric model and the MFTs that
 * follow, with what each switch is known to hold, so that only blocks that
 * differ are written (mc_forest.c). The fabric's LFTs must be routed and
 * stay unchanged while the forest lives; r may be NULL (one VL).
 */
struct route_result;
struct mc_forest;

struct mc_forest_stats {
	uint32_t trees;			/* groups with members on the fabric */
	uint64_t switches;		/* (tree, switch) pairs */
	uint32_t unsafe;		/* trees no root kept deadlock-free (CDG cycle) */
	uint32_t unchecked;		/* trees on a VL whose unicast CDG is cyclic already */
	uint32_t unroutable;		/* trees with no root every member switch reaches */
	uint32_t max_roots;		/* most trees rooted at one switch */
	uint32_t over_cap;		/* (tree, switch) pairs beyond the switch's MFT */
	uint64_t failed;		/* blocks that could not be read or written */
};

/* One MFT block to read (read: what the switch holds is unknown) or write */
struct mc_block {
	uint32_t sw;			/* index in fabric.switches */
	struct fab_node *node;
	uint16_t block;
	uint8_t pos;
	bool read;
	uint16_t mask[MFT_BLOCK_SIZE];	/* what it should hold */
};

int mc_forest_new(struct fabric *f, const struct route_result *r, struct mc_forest **out);
struct mc_forest *mc_forest_free(struct mc_forest *fo);
/*
 * Recompute the trees of the MLIDs marked in dirty (mc_db_take_dirty), or
 * of every group (dirty NULL), and the MFT entries that follow; blocks that
 * now differ from what the switches hold (or whose content is unknown) are
 * queued for mc_forest_next.
 */
int mc_forest_update(struct mc_forest *fo, struct mc_db *db, const uint64_t *dirty);
/* The next block to read or write; it stays in flight until mc_forest_done */
bool mc_forest_next(struct mc_forest *fo, struct mc_block *b);
/*
 * b was read or written: held is what the switch holds now (NULL: failed,
 * its content unknown until the next update or sweep). Queues it again when
 * it still differs.
 */
int mc_forest_done(struct mc_forest *fo, const struct mc_block *b, const uint16_t *held);
/* Queue every block whose content is unknown or differs (after failures) */
int mc_forest_retry(struct mc_forest *fo);
size_t mc_forest_pending(const struct mc_forest *fo);
/* The mask switch sw (fabric.switches index) should hold for mlid, ports 16 * pos .. + 15 */
uint16_t mc_forest_want(const struct mc_forest *fo, uint32_t sw, uint16_t mlid, unsigned int pos);
/* The root switch (fabric.switches index) of mlid's tree, UINT32_MAX when none */
uint32_t mc_forest_root(const struct mc_forest *fo, uint16_t mlid);
/* Counted over all trees when asked for */
const struct mc_forest_stats *mc_forest_stats(struct mc_forest *fo);
/* The verifier: unicast and multicast turns together acyclic on every VL? */
int mc_forest_check_cdg(const struct mc_forest *fo, bool *acyclic);

#endif
