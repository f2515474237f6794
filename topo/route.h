/* SPDX-License-Identifier: MIT */
/*
 * Routing engines fill every switch's linear forwarding table (node->lft,
 * indexed by LID, LFT_PORT_NONE where a LID is unreachable) and, in a
 * struct route_result, the service level of every path and the SL-to-VL
 * tables that keep the routes deadlock-free on the data VLs they may use.
 * Engines are pure computations over the fabric model.
 *
 * Engines:
 *   dfree   balanced over links and deadlock-free within the VL budget (1 to
 *           8) on any topology: the one to use by default (route_dfree.c)
 *   updn    up*\/down* from one root: deadlock-free on 1 VL, any topology
 *   layered balanced min-hop routes spread over VLs, DFSSSP-like: -ENOSPC
 *           when they need more VLs than the budget
 *   minhop  min-hop, port balanced; NOT deadlock-free on tori and irregular
 *           fabrics (the verifier says so)
 */
#ifndef SMD_TOPO_ROUTE_H
#define SMD_TOPO_ROUTE_H

#include "topo/fabric.h"

#define ROUTE_MAX_VLS	8	/* data VLs an engine may use */
#define ROUTE_NUM_SLS	16

struct route_opts {
	/*
	 * Data VLs every link may carry: 1..8. 0 = as many as every cabled
	 * port's VLCap allows (at most 8). A larger value is cut to the VLCap.
	 */
	unsigned int max_vls;
};

struct route_stats {
	unsigned int switches;
	unsigned int lids;
	unsigned int unreachable;	/* (switch, LID) pairs with no route */
	unsigned int max_hops;		/* switch-to-switch hops on the longest route */
	uint32_t max_port_load;		/* most LIDs routed out of one port */
	double mean_port_load;		/* over switch ports that carry any route */
	/* added by issue 4 */
	unsigned int vls_budget;	/* data VLs the engine was allowed */
	unsigned int vls_used;		/* data VLs the routes use (1..vls_budget) */
	bool deadlock_free;		/* the engine guarantees an acyclic CDG */
	const char *method;		/* how the engine got there (static text) */
	unsigned int escape_lids;	/* dfree: LIDs its Nue-like fallback routed on
					 * escape-tree paths (its last resort) */
	uint32_t max_link_routes;	/* engine's own count: most (CA port, LID) routes */
	double mean_link_routes;	/*   over one switch-to-switch link direction */
};

/*
 * What an engine computed besides the LFTs; owned by the caller, valid while
 * the fabric it was computed for is unchanged (it reads f->by_lid).
 */
struct route_result;

struct route_engine {
	const char *name;
	bool deadlock_free;		/* by construction, within the VL budget */
	const char *desc;
	int (*compute)(struct fabric *f, struct route_result *res, struct route_stats *st);
};

const struct route_engine *route_engine_find(const char *name);
/* Engines in the order they are listed in the documentation; NULL after the last */
const struct route_engine *route_engine_at(unsigned int i);

/*
 * Route f with engine e: fills the LFTs, stats and, when res is not NULL, a
 * new result (free it with route_result_free). opts may be NULL (defaults).
 * -ENOSPC: the engine cannot stay deadlock-free within the VL budget;
 * -EPROTO: the model is not a consistent graph; -ENOMEM; -EINVAL.
 */
int route_compute(const struct route_engine *e, struct fabric *f, const struct route_opts *opts,
		  struct route_stats *st, struct route_result **res);
void route_result_free(struct route_result *r);

/*
 * The SL of the path from endport LID slid to LID dlid (0..15), or -ENOENT
 * when either LID is unknown to the result (or r is NULL). SLs are stored per
 * destination LID when the engine allows, else per (source switch,
 * destination LID): all endports on one switch get the same SL toward a LID.
 * A path's VL is its SL on every hop (see route_sl2vl).
 */
int route_path_sl(const struct route_result *r, uint16_t slid, uint16_t dlid);
/* Data VLs the result uses (1..8); OperationalVLs must cover them */
unsigned int route_vls_used(const struct route_result *r);
/* The PortInfo OperationalVLs code (1: VL0, 2: VL0-1, 3: VL0-3, 4: VL0-7) for nvls data VLs */
uint8_t route_op_vls(unsigned int nvls);
/*
 * The SL-to-VL table of node n for packets entering at port in and leaving at
 * port out (switches; port 0 is the switch itself), or of CA/router port out
 * (in ignored): VL = SL for the SLs the routes use; the others map modulo
 * the VLs used (traffic on an SL that no PathRecord gave is outside the
 * deadlock analysis anyway). 0, or -EINVAL for a bad node or port.
 */
int route_sl2vl(const struct route_result *r, const struct fab_node *n, unsigned int in,
		unsigned int out, uint8_t vl[ROUTE_NUM_SLS]);
/*
 * Whether every SL-to-VL table of node n (every (input, output) pair of a
 * switch) is the same: 1 with that table in vl[], 0 when they differ (ask
 * route_sl2vl pair by pair), -EINVAL for a bad node. A switch that offers
 * OptimizedSLtoVLMappingProgramming takes such a table in one SMP.
 */
int route_sl2vl_uniform(const struct route_result *r, const struct fab_node *n,
			uint8_t vl[ROUTE_NUM_SLS]);
/*
 * A default VL arbitration table: each of the nvls data VLs in use once, with
 * weight weight (1..255; 0 means 255), round robin; VLs above nvls - 1 get
 * nothing. Fills up to n entries of tab (the VLArbitration low-priority table;
 * the high-priority one can stay empty) and returns how many.
 */
struct route_vlarb {
	uint8_t vl;
	uint8_t weight;
};

unsigned int route_vlarb_default(unsigned int nvls, uint8_t weight, struct route_vlarb *tab,
				 unsigned int n);
/* The data VLs every cabled port's VLCap allows, at most ROUTE_MAX_VLS (1 if none known) */
unsigned int route_fabric_vls(const struct fabric *f);

/*
 * An ordered list of engines, "dfree,updn,minhop" (commas or blanks): each is
 * tried in turn and its result verified (route_check); the first engine that
 * succeeds and, when it claims deadlock freedom, passes the verifier, wins.
 * An engine that does not claim it (minhop) is accepted only when listed, and
 * reported through att[].acyclic. att[] (up to natt entries) says for each
 * engine tried what happened; *tried is how many were tried.
 * Returns the index of the engine used in att[] (its LFTs, stats, result and
 * verdict in chk are what the caller gets), or -errno: -ENOENT (an unknown
 * name, nothing routed), -EINVAL (empty list), or the last engine's error
 * when none succeeded (the LFTs are then the last attempt's: not to be used).
 * Never a silent fallback: every engine that did not make it has err and why.
 */
struct route_attempt {
	char name[32];
	const struct route_engine *engine;
	int err;			/* 0: used; -errno: why it was not */
	const char *why;		/* static text for err, "" when used */
	bool acyclic;			/* verifier: CDG over (link, VL) acyclic */
	double compute_s, verify_s;	/* monotonic seconds the engine and the verifier took */
};

struct route_check;
int route_compute_list(const char *list, struct fabric *f, const struct route_opts *opts,
		       struct route_stats *st, struct route_result **res, struct route_check *chk,
		       struct route_attempt *att, unsigned int natt, unsigned int *tried);
/* 0 when every name of list is a known engine; -ENOENT otherwise (*bad: first bad name) */
int route_list_valid(const char *list, char *bad, size_t badlen);

/*
 * The verifier: walks every (source endport, destination LID) pair along the
 * LFTs, checks it arrives without a loop, builds the channel dependency graph
 * over (directed link, VL) with the path SLs and SL-to-VL tables of r (all
 * SL 0 and VL 0 when r is NULL) and checks it is acyclic. Counts routes per
 * switch-to-switch link direction (sources: CA ports).
 */
struct route_check {
	uint64_t pairs;			/* (source endport, LID) pairs checked */
	uint64_t disconnected;		/* pairs in different components: not routable */
	uint64_t unreachable;		/* connected pairs that end nowhere */
	uint64_t loops;			/* pairs caught in a forwarding loop */
	uint64_t bad_vl;		/* SL-to-VL entries routes use that give a VL >= the
					 * VLs the result says it uses (each counted once; a
					 * switch whose tables are all alike as one table) */
	uint64_t dependencies;		/* distinct edges of the CDG */
	unsigned int vls_used;		/* distinct data VLs seen on any hop */
	unsigned int max_hops;		/* links on the longest path, CA links included */
	bool acyclic;
	/* One channel on a cycle when !acyclic: switch GUID, out port, VL */
	uint64_t cycle_guid;
	uint8_t cycle_port, cycle_vl;
	unsigned int cycle_len;		/* channels on that cycle */
	uint32_t max_link_routes;	/* (CA port, LID) routes over one link direction */
	double mean_link_routes;	/* over all switch-to-switch link directions */
};

int route_check(const struct fabric *f, const struct route_result *r, struct route_check *out);
/*
 * route_check and its verdict on routes an engine (or route_repair) made
 * with stats st: 0 when every connected pair arrives without a loop within
 * the VL budget and, if deadlock_free is claimed, the graph is acyclic;
 * else -ELOOP, -EHOSTUNREACH, -ENOSPC, -EDEADLK (or route_check's error)
 * and *why (static text).
 */
int route_verify(const struct fabric *f, const struct route_result *r,
		 const struct route_stats *st, bool deadlock_free, struct route_check *chk,
		 const char **why);

/*
 * Route repair (route_repair.c): when f is a part of the fabric old was
 * routed on (no switch, cable or LID added; cables, switches and endports
 * may be gone), keep every route of old's LFTs and old_res that still
 * arrives and re-route only the (switch, LID) pairs whose path crossed
 * what is gone, each in a VL layer whose channel dependency graph stays
 * acyclic. Fills f's LFTs, st and a new *res (SLs per source switch) like
 * route_compute. -ESTALE: not applicable (info->why says why); -ENOSPC: a
 * route fits no layer within 15 hops (info->why); -ENOMEM, -EINVAL. The
 * caller verifies the result (route_check) as it would an engine's.
 */
struct route_repair_info {
	const char *why;		/* static text when not repaired, else "" */
	uint32_t lids;			/* destination LIDs with re-routed switches */
	uint64_t rerouted;		/* (switch, LID) pairs re-routed */
	uint32_t ripped;		/* LIDs whose every route had to be placed anew */
	uint64_t changed;		/* LFT entries that differ from old's */
};

int route_repair(const struct fabric *old, const struct route_result *old_res,
		 struct fabric *f, const struct route_opts *opts, struct route_stats *st,
		 struct route_result **res, struct route_repair_info *info);
/*
 * Whether repaired routes whose busiest link carries max (CA port, LID)
 * routes keep the balance of the routes last computed afresh, whose busiest
 * link carried base (0: not known, taken as kept): at most 3/2 of it. When
 * not, the caller computes routes afresh as well and keeps the better.
 */
bool route_repair_balanced(uint32_t max, uint32_t base);

/* Monotonic clock in seconds, for timing what routing takes */
double route_now(void);

/* Helpers shared by engines */
int route_alloc_lfts(struct fabric *f);
/* The switch an endport hangs off (itself for port 0); NULL if none */
struct fab_node *route_attach_switch(const struct fab_port *ep, uint8_t *sw_port);

#endif
