/* SPDX-License-Identifier: MIT */
/*
 * The SA server's insides, shared by its files (sa.c: requests and
 * answers; sa_rmpp.c: transfers; sa_records.c: the fabric's records;
 * sa_path.c: PathRecords; sa_mcast.c: multicast groups; ...). Not an API.
 */
#ifndef SMD_SA_SA_INT_H
#define SMD_SA_SA_INT_H

#include "mad/sa_codec.h"
#include "sa/sa.h"

#define SA_MAX_RECORDS		(1u << 20)	/* records in one answer */

/* Records collected for one answer */
struct records {
	uint8_t *buf;
	size_t n, cap, size;	/* size: padded record size */
	size_t max_n;		/* more records than this: -E2BIG (0: SA_MAX_RECORDS) */
	size_t max_bytes;	/* more bytes than this: -E2BIG (0: no limit) */
};

struct sa_xfer;

struct sa {
	const struct sa_env *env;
	const struct fabric *f;
	const struct route_result *routes;	/* SLs of the paths; NULL: SL 0 */
	bool any_sl;			/* one-VL routes: every SL is safe on every path */
	struct path_table *pt;
	struct fab_port **by_guid;	/* endports by port GUID, open addressing */
	size_t guid_size;
	struct sa_xfer *xfers;
	unsigned int nxfers;
	size_t bytes;			/* payload of the transfers in flight */
	/* By requesting port (its base LID): transfers, their bytes */
	uint16_t *port_xfers;
	uint32_t *port_bytes;
	struct sa_stats stats;
	/* Multicast: the groups, and the trees of the model served (NULL: none) */
	struct mc_db *mc;
	const struct mc_forest *forest;
	struct sa_svc_db *svc;		/* registered services (sa_service.c) */
	struct sa_guid_db *gi;		/* alias GUIDs (sa_guid.c) */
	struct sa_inform_db *inf;	/* subscriptions and Reports (sa_inform.c) */
	struct sa_rx *rx;		/* GetMulti requests coming in by RMPP */
	struct sa_queue *queue;		/* MADs waiting for their turn (sa_queue.c) */
	unsigned int nrx;
	/* The request being answered: its port (NULL: unknown LID), trusted (SM_Key) */
	const struct fab_port *requester;
	bool req_trusted;
};

/* Add a record; -E2BIG past the SA's limit, -ENOMEM */
int sa_rec_add(struct records *r, const uint8_t *rec, size_t size);
/* Add cand if it matches the request on the masked fields */
int sa_rec_offer(struct records *r, const struct sa_mad *req, const uint8_t *cand);
/* The same on the fields of mask (the request's, some bits handled by the caller) */
int sa_rec_offer_mask(struct records *r, const struct sa_mad *req, uint64_t mask,
		      const uint8_t *cand);
/* The endport with port GUID guid in the model served, or NULL */
struct fab_port *sa_port_by_guid(const struct sa *sa, uint64_t guid);
/* ... with port GUID or alias GUID (GUIDInfo) guid */
struct fab_port *sa_port_by_any_guid(const struct sa *sa, uint64_t guid);
/* Is guid port p's GUID or one of its alias GUIDs? */
bool sa_port_owns_guid(const struct sa *sa, const struct fab_port *p, uint64_t guid);
/* The port that holds alias GUID guid (sa_guid.c), or 0 */
uint64_t sa_alias_owner(const struct sa *sa, uint64_t guid);
/* A request that carries the SM_Key smd trusts (0: none is trusted) */
bool sa_trusted(const struct sa *sa, const struct sa_mad *req);
/* The request about to be answered: sets req_trusted, counts a wrong SM_Key */
void sa_judge_key(struct sa *sa, const struct sa_mad *req);
/* The SA's clock, monotonic microseconds */
uint64_t sa_clock(const struct sa *sa);
/* The requesting port a LID stands for (its base LID), whose limits apply */
uint16_t sa_owner_of(const struct sa *sa, uint16_t slid);
void sa_queue_free(struct sa *sa);
/*
 * Partitions, from the P_Key tables the sweep read (fab_port.pkeys; a port
 * whose table is not known holds the default P_Key only): does p hold
 * pkey's partition (either membership), and may p talk in it to a port
 * that holds pkey as given (IBA 10.9.3: not both limited members)?
 */
bool sa_port_has_pkey(const struct fab_port *p, uint16_t pkey);
bool sa_pkey_shared(const struct fab_port *p, uint16_t pkey);

/* sa_mcast.c: MCMemberRecord Get/GetTable and MulticastForwardingTableRecord */
int sa_mcast_collect(struct sa *sa, const struct sa_mad *req, struct records *r);
int sa_mft_collect(struct sa *sa, const struct sa_mad *req, struct records *r);
/*
 * MCMemberRecord Set (join) or Delete (leave) from the port at from: the
 * status to answer with (0 or an SA/MAD status) and, when 0, the record.
 */
uint16_t sa_mcast_modify(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
			 uint8_t rec[MCR_SIZE]);

/* sa_service.c: ServiceRecord Get/GetTable (from: the requester), Set and Delete */
int sa_service_collect(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		       struct records *r);
uint16_t sa_service_modify(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
			   uint8_t rec[SR_SIZE]);
/* Leases that ended: their records go (cheap when none is due) */
void sa_service_expire(struct sa *sa);
/* The earliest lease end (sa_clock), 0: none */
uint64_t sa_service_next(const struct sa *sa);
void sa_service_free(struct sa *sa);

/*
 * sa_guid.c: GUIDInfoRecord Get/GetTable; Set and Delete of alias GUIDs:
 * a status to answer with now, or 0 when the answer follows the SMP that
 * writes the block to the port
 */
int sa_guid_collect(struct sa *sa, const struct sa_mad *req, struct records *r);
uint16_t sa_guid_modify(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from);
/* A Get/GetTable of one port's blocks smd has not seen: true when it reads them and answers */
bool sa_guid_query(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from);
/* A new model: the aliases of ports that left go */
void sa_guid_prune(struct sa *sa);
void sa_guid_free(struct sa *sa);

/*
 * sa_inform.c: Set(InformInfo) (a status, or 0 with the InformInfo to
 * answer), InformInfoRecord Get/GetTable, ReportResp, retries; a new model
 * (f): traps 64/65 and subscribers that left
 */
uint16_t sa_inform_set(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		       uint8_t out[INFORM_SIZE]);
int sa_inform_collect(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		      struct records *r);
void sa_report_resp(struct sa *sa, const struct sa_mad *m, const struct mad_addr *from);
void sa_report_tick(struct sa *sa);
/* The next Report due again (sa_clock), 0: none waits */
uint64_t sa_report_next(const struct sa *sa);
void sa_inform_update(struct sa *sa, const struct fabric *f);
void sa_inform_free(struct sa *sa);

/* A PathRecord query: the record asked for and the components given */
struct pr_query {
	struct path_record want;
	uint64_t mask;
};
/* The record of the path slid -> dlid (of ports src, dst) if it satisfies q: 0 or -1 */
int sa_pr_build(struct sa *sa, const struct pr_query *q, const struct fab_port *src,
		uint16_t slid, const struct fab_port *dst, uint16_t dlid, struct path_record *pr);
/* The port of a GID (port or alias GUID of this subnet), or NULL and the SA status */
const struct fab_port *sa_gid_port(struct sa *sa, const uint8_t gid[16], int *status);
/*
 * sa_rmpp.c: records through RMPP with this response method and attribute
 * (takes recs->buf); the receiver's ACK, STOP or ABORT; a GetTable whose
 * answer is on its way already, or that no transfer slot is left for;
 * the transfers' timed steps; all of them freed
 */
void sa_send_table(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		   struct records *recs, uint8_t method, uint16_t attr);
void sa_rmpp_control(struct sa *sa, const struct sa_mad *m, const struct mad_addr *from);
/* An RMPP ABORT with this status (IBA 13.6.3.3) on the headers of m, to to */
void sa_rmpp_send_abort(struct sa *sa, const struct sa_mad *m, const struct mad_addr *to,
			uint8_t status);
bool sa_xfer_underway(const struct sa *sa, const struct sa_mad *req, const struct mad_addr *from);
bool sa_xfers_full(const struct sa *sa, const struct sa_mad *req, const struct mad_addr *from);
void sa_xfers_tick(struct sa *sa);
void sa_xfers_free(struct sa *sa);

/*
 * sa_records.c: the fabric's records a request matches, collected into r
 * (-E2BIG past the answer's limits, -EBUSY: tables not read yet)
 */
int sa_collect_nodes(struct sa *sa, const struct sa_mad *req, struct records *r);
int sa_collect_port_infos(struct sa *sa, const struct sa_mad *req, struct records *r);
int sa_collect_switch_infos(struct sa *sa, const struct sa_mad *req, struct records *r);
int sa_collect_links(struct sa *sa, const struct sa_mad *req, struct records *r);
int sa_collect_lfts(struct sa *sa, const struct sa_mad *req, struct records *r);
int sa_collect_sm_infos(struct sa *sa, const struct sa_mad *req, struct records *r);
int sa_collect_sl2vls(struct sa *sa, const struct sa_mad *req, struct records *r);
int sa_collect_vlarbs(struct sa *sa, const struct sa_mad *req, struct records *r);
/* sa_path.c: PathRecords; *status: the SA status a Get answers with when none fits */
int sa_collect_paths(struct sa *sa, const struct sa_mad *req, struct records *r, int *status);
/*
 * sa_multipath.c: GetMulti(MultiPathRecord), one MAD or RMPP DATA segments
 * in the request direction (reassembled, ACKed); answered with
 * GetMultiResp(PathRecord) through RMPP. Limits and stale transfers in tick.
 */
void sa_multipath_handle(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from);
/* RMPP STOP/ABORT (or ACK) for no answer of ours: a request in segments may end */
void sa_multipath_control(struct sa *sa, const struct sa_mad *m, const struct mad_addr *from);
void sa_multipath_tick(struct sa *sa);
void sa_multipath_free(struct sa *sa);

/* An answer's header from its request's; one MAD out as its request came */
void sa_respond_hdr(const struct sa_mad *req, struct sa_mad *resp, uint8_t method,
		    uint16_t status);
void sa_send_len(struct sa *sa, const struct sa_mad *m, size_t len, const struct mad_addr *to);
/* Answers for requests finished later: a status, or one record */
void sa_respond_status(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		       uint16_t status);
void sa_respond_record(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		       uint8_t method, const uint8_t *rec, size_t size);
/* ...or the records collected (Get: exactly one; GetTable: RMPP). Frees recs. */
void sa_respond_records(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
			struct records *recs);
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
