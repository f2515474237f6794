/* SPDX-License-Identifier: MIT */
/*
 * The SA server's insides, shared by its files (sa.c: requests, RMPP and
 * the fabric records; sa_mcast.c: multicast groups). Not an API.
 */
#ifndef SMD_SA_INT_H
#define SMD_SA_INT_H

#include "mad/sa.h"
#include "smd/sa.h"

/* Records collected for one answer */
struct records {
	uint8_t *buf;
	size_t n, cap, size;	/* size: padded record size */
	size_t max_n;		/* more records than this: -E2BIG (0: SA_MAX_RECORDS) */
	size_t max_bytes;	/* more bytes than this: -E2BIG (0: no limit) */
};

struct sa_pending;
struct sa_xfer;

struct sa {
	const struct sa_env *env;
	struct sa_pending *pending;
	const struct fabric *f;
	const struct route_result *routes;	/* SLs of the paths; NULL: SL 0 */
	struct path_table *pt;
	struct fab_port **by_guid;	/* endports by port GUID, open addressing */
	size_t guid_size;
	struct sa_xfer *xfers;
	unsigned int nxfers;
	size_t bytes;			/* payload of the transfers in flight */
	unsigned int npending;		/* SL2VL queries waiting for the fabric */
	/* By requesting port (its base LID): transfers, their bytes, pending queries */
	uint16_t *port_xfers;
	uint32_t *port_bytes;
	uint8_t *port_pending;
	struct sa_stats stats;
	/* Multicast: the groups, and the trees of the model served (NULL: none) */
	struct mc_db *mc;
	const struct mc_forest *forest;
	/* The request being answered: its port (NULL: unknown LID), trusted (SM_Key) */
	const struct fab_port *requester;
	bool req_trusted;
};

/* Add a record; -E2BIG past the SA's limit, -ENOMEM */
int sa_rec_add(struct records *r, const uint8_t *rec, size_t size);
/* Add cand if it matches the request on the masked fields */
int sa_rec_offer(struct records *r, const struct sa_mad *req, const uint8_t *cand);
/* The endport with port GUID guid in the model served, or NULL */
struct fab_port *sa_port_by_guid(const struct sa *sa, uint64_t guid);

/* sa_mcast.c: MCMemberRecord Get/GetTable and MulticastForwardingTableRecord */
int sa_mcast_collect(struct sa *sa, const struct sa_mad *req, struct records *r);
int sa_mft_collect(struct sa *sa, const struct sa_mad *req, struct records *r);
/*
 * MCMemberRecord Set (join) or Delete (leave) from the port at from: the
 * status to answer with (0 or an SA/MAD status) and, when 0, the record.
 */
uint16_t sa_mcast_modify(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
			 uint8_t rec[MCR_SIZE]);

/*
 * sa_part.c: partitions. What the requester of the request being answered
 * may see: records of port p (a switch: by its port 0); the P_Key a
 * PathRecord from src to dst carries (given: the request names want),
 * -1 when none; a multicast group of P_Key pkey. P_KeyTableRecords.
 */
bool sa_part_visible(const struct sa *sa, const struct fab_port *p);
int sa_part_path_pkey(const struct sa *sa, const struct fab_port *src, const struct fab_port *dst,
		      bool given, uint16_t want, uint16_t *pkey);
bool sa_part_group_visible(const struct sa *sa, uint16_t pkey);
int sa_pkey_collect(struct sa *sa, const struct sa_mad *req, struct records *r);

#endif
