/* SPDX-License-Identifier: MIT */
/*
 * The Subnet Administrator: answers SA queries (class 0x03 on QP1) from
 * the model of the last complete sweep, which stays valid while the next
 * sweep runs. Multi-record answers go out with RMPP done here, in user
 * space (the simulator has no kernel RMPP; real kernels accept it).
 */
#ifndef SMD_SA_SA_H
#define SMD_SA_SA_H

#include <stdbool.h>
#include <stdint.h>

#include "mad/port.h"
#include "topo/fabric.h"

struct sa;

/* What the SA needs from its owner; the owner keeps it current */
/* Another SM the master knows of: its SMInfoRecord (IBA 15.2.5.10) */
struct sa_sm {
	uint16_t lid;
	struct sm_info si;
};

struct sa_env {
	uint64_t sm_guid;
	uint16_t sm_lid;
	uint32_t act_count;
	uint8_t sm_priority;
	const struct sa_sm *sms;	/* the other SMs on the subnet */
	size_t nsms;
	uint64_t subnet_prefix;
	unsigned int packet_life_time;	/* per-hop LifeTimeValue (IBA 14.2.5.4) */
	/*
	 * The owner is still reading tables the model does not know of its
	 * ports (SL-to-VL, VL arbitration): a query that would need one of
	 * them is answered BUSY (IBA 13.4.7), never with an SMP. NULL: never.
	 */
	bool (*tables_busy)(void *ctx);
	/*
	 * Multicast membership changed (a join, a leave): the owner updates
	 * the trees and MFTs soon, not from inside the call. NULL: nobody.
	 */
	void (*mcast_changed)(void *ctx);
	/*
	 * Requests carrying this SM_Key are trusted (ProxyJoin for another
	 * port, IBA 15.2.5.17); 0: nobody is. Others carrying a non-zero
	 * SM_Key are counted (sa_stats.bad_keys), never logged one by one.
	 */
	uint64_t trusted_key;
	/*
	 * Limits per requesting port and for all (0: the defaults of sa.c):
	 * open RMPP transfers, the bytes of their answers.
	 */
	unsigned int xfers_per_port;
	size_t bytes_per_port, bytes_max;
	/*
	 * Send one SMP by directed route to endport p (data: 64 bytes): done()
	 * runs once, later or inside the call, with 0 and the answer's data,
	 * or -errno. A call that returns -errno never calls done(). NULL: the
	 * SA writes nothing to the fabric (GUIDInfoRecord Set is refused).
	 */
	int (*smp)(void *ctx, const struct fab_port *p, uint8_t method, uint16_t attr,
		   uint32_t amod, const uint8_t data[64],
		   void (*done)(void *arg, int status, const uint8_t data[64]), void *arg);
	/*
	 * A ServiceRecord (176 bytes) was registered or replaced (present, with
	 * lease seconds left, 0xffffffff: no end) or went (deleted, expired):
	 * the owner keeps it across restarts (sa_service_restore). NULL: none.
	 */
	void (*service_changed)(void *ctx, const uint8_t rec[176], uint32_t lease, bool present);
	/* The monotonic clock in microseconds (NULL: the real one); tests set it */
	uint64_t (*now)(void *ctx);
	/*
	 * Send a request (a Report) on the SA agent to an address, expecting a
	 * response within timeout_ms (a kernel matches the response to it, and
	 * refuses another request with the same TID until then). NULL: sent
	 * with send().
	 */
	int (*send_req)(void *ctx, const uint8_t mad[MAD_SIZE], const struct mad_addr *to,
			int timeout_ms);
	/*
	 * Send one MAD (its first len bytes, the rest is zero) on the SA agent
	 * to an address: an answer goes to its request's mad_addr as it came
	 * (LID, QP, SL, P_Key index, GRH; mad/port.h)
	 */
	int (*send)(void *ctx, const uint8_t mad[MAD_SIZE], size_t len, const struct mad_addr *to);
	void *ctx;
};

struct sa_stats {
	uint64_t requests;	/* well-formed requests */
	uint64_t answered;	/* with records or an empty table */
	uint64_t errors;	/* answered with a non-zero status */
	uint64_t dropped;	/* malformed or truncated: no answer possible */
	uint64_t rmpp_started, rmpp_done, rmpp_aborted;
	uint64_t refused;	/* NO_RESOURCES: a client past its limits, or all clients' */
	uint64_t segments;
	uint64_t shed;		/* dropped as read: their port had too many waiting */
	uint64_t bad_keys;	/* requests with an SM_Key that is not the trusted one */
	uint16_t shed_lid;	/* ... the last of them from this LID */
};

int sa_new(const struct sa_env *env, struct sa **out);
struct sa *sa_free(struct sa *sa);
/*
 * Serve from f from now on (NULL: not ready, requests get BUSY), with the
 * SLs of routes (route_path_sl; NULL: SL 0). Both must stay unchanged until
 * the next sa_update.
 */
struct route_result;
int sa_update(struct sa *sa, const struct fabric *f, const struct route_result *routes);
/*
 * sa_update in two steps, so that a big model's index (PathRecords per
 * destination, ports by GUID) is built off the event loop: sa_index_build
 * only reads f and may run on any thread; sa_update_index serves f with it
 * (and takes it, also on failure; -EINVAL when it was built for another f).
 */
struct sa_index;
int sa_index_build(const struct fabric *f, struct sa_index **out);
void sa_index_free(struct sa_index *ix);
int sa_update_index(struct sa *sa, const struct fabric *f, const struct route_result *routes,
		    struct sa_index *ix);
/*
 * The multicast groups to serve and join (NULL: no multicast, joins are
 * refused), and the forest of the model served (MFT records; NULL: none).
 */
struct mc_db;
struct mc_forest;
void sa_set_mcast(struct sa *sa, struct mc_db *db, const struct mc_forest *forest);
/*
 * A service registered before (the database): lease seconds left
 * (0xffffffff: no end). 0, -ENOSPC past the SA's limit, -ENOMEM.
 */
int sa_service_restore(struct sa *sa, const uint8_t rec[176], uint32_t lease);
size_t sa_service_count(const struct sa *sa);
/* Alias GUIDs the SA has given out (GUIDInfoRecord Set) */
size_t sa_alias_count(const struct sa *sa);

/* Subscriptions (InformInfo) and the Reports sent for them */
struct sa_inform_stats {
	uint64_t subscribed, unsubscribed, dropped_subs;	/* dropped: the port left */
	uint64_t in_service, out_of_service;			/* traps 64, 65 issued */
	uint64_t forwarded;					/* 144/145 from SMAs */
	uint64_t port_traps;					/* 129 for unhealthy ports */
	uint64_t reports_sent, reports_answered, reports_dropped;	/* sent: tries too */
};
size_t sa_inform_count(const struct sa *sa);
const struct sa_inform_stats *sa_inform_stats(const struct sa *sa);
/* A multicast group of partition pkey was created or deleted: traps 66, 67 */
void sa_report_mcast(struct sa *sa, const uint8_t mgid[16], uint16_t pkey, bool created);
/*
 * A Trap's Notice as an SMP brought it from LID slid (its data, len bytes):
 * 144 and 145 go on to their subscribers
 */
void sa_report_forward(struct sa *sa, const uint8_t *notice, size_t len, uint16_t slid);
/*
 * A port the health rules found unhealthy where the IBA has a trap for it
 * (129, local link integrity threshold reached: symbol and receive errors),
 * issued for the port's node as its SMA would (producer the node's type,
 * issuer its LID): to the subscribers that share a partition with it.
 * Returns how many Reports went out.
 */
size_t sa_report_port_trap(struct sa *sa, uint16_t trap, uint64_t node_guid, uint8_t port);
/* One request (or RMPP ACK/STOP/ABORT) received on the SA agent */
void sa_handle(struct sa *sa, const uint8_t *mad, size_t len, const struct mad_addr *from);
/* Retransmit or give up stalled RMPP transfers; cheap when there are none */
void sa_tick(struct sa *sa);
/*
 * When sa_tick has RMPP work next: in ms (0: segments wait to go out now),
 * -1 when no transfer is open.
 */
int sa_next_timeout_ms(const struct sa *sa);
/*
 * When sa_tick() has something to do next (the SA's clock, monotonic us:
 * env->now, else txn_now_us()): a Report to resend, a lease to end, an
 * RMPP transfer's deadline or segments waiting to go out (sa_next_timeout_ms),
 * a request in segments to watch (SA_TICK_BUSY_US from now while any is
 * open); 0: nothing waits. An owner whose loop may sleep longer arms a
 * timer for it.
 */
#define SA_TICK_BUSY_US	10000
uint64_t sa_next_tick(const struct sa *sa);
const struct sa_stats *sa_stats(const struct sa *sa);
/*
 * Fair input (sa_queue.c): sa_submit() queues one MAD as it is read
 * (-ENOBUFS: dropped, its port has too many waiting); sa_drain() answers
 * waiting MADs, one per port in turn, until none is left or slice_us has
 * passed (one at least), and returns how many still wait.
 */
#define SA_QUEUE_PER_PORT_MAX	64	/* MADs of one port waiting; more are dropped */
int sa_submit(struct sa *sa, const uint8_t *mad, size_t len, const struct mad_addr *from);
size_t sa_drain(struct sa *sa, uint64_t slice_us);

#endif
