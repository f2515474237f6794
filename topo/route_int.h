/* SPDX-License-Identifier: MIT */
/*
 * Internals shared by the routing engines (not part of the API): the switch
 * graph, destination trees, link loads and channel dependency graphs.
 *
 * Vocabulary: an arc is one direction of a switch-to-switch cable (a
 * channel); a turn is a pair of arcs a (into switch v) and b (out of v) that
 * a route takes one after the other: the edge a -> b of the channel
 * dependency graph (CDG). Links to CAs never lie on a CDG cycle (nothing
 * enters a CA link from a CA link), so only arcs and turns matter.
 * A destination tree gives for each switch the arc it forwards on toward one
 * LID (RT_NONE at the destination's own switch and where unreachable).
 */
#ifndef SMD_TOPO_ROUTE_INT_H
#define SMD_TOPO_ROUTE_INT_H

#include <stdint.h>

#include "topo/route.h"

#define RT_NONE		UINT32_MAX
#define RT_ALPHA	3		/* weight of host-to-host routes in balancing */
#define RT_INF		UINT32_MAX
/*
 * Weight of a destination's own flow when a tree spreads it (rt_dag_tree),
 * against the loads: measured on 3-level fat-trees, 1 left the routes
 * toward a switch LID bunched on one of its downlinks (k=32: busiest link
 * 1.42x the lower bound); 3 keeps k=16 to k=48 within 0.3% of the bound
 * (2: k=40 1.04x, k=48 1.12x)
 */
#define RT_SPREAD	3

struct rt_dest {
	uint16_t lid;
	uint8_t port;			/* LFT entry at the destination switch */
	bool ca;			/* a CA or router port, not a switch */
	uint32_t sw;			/* destination switch (sw_idx) */
};

struct rt_graph {
	struct fabric *f;
	uint32_t nsw, narcs;
	uint32_t *off;			/* [nsw + 1]: arcs out of s: off[s] .. off[s + 1] - 1 */
	uint32_t *to;			/* [narcs] head switch */
	uint32_t *from;			/* [narcs] tail switch */
	uint32_t *rev;			/* [narcs] the other direction of the cable */
	uint8_t *port;			/* [narcs] port at the tail */
	uint32_t *pbase;		/* [nsw] index of (s, port 0) in parc */
	uint32_t *parc;			/* arc leaving (s, port), or RT_NONE */
	uint8_t *nports;		/* [nsw] ports of s */
	uint32_t *nsrc;			/* [nsw] CA endports with a LID: route sources */
	size_t *tbase;			/* [nsw] turn (i, j) of s: tbase[s] + i * deg + j */
	size_t nturns;
	uint32_t ndest;
	struct rt_dest *dest;		/* every LID that has an endport attached to a switch, in
					 * routing order: CA ports first, by switch; then switches */
	unsigned int unattached;	/* LIDs whose endport hangs off no switch */
	/*
	 * Working LFTs, LID-major: lt[lid * nsw + s] (rt_lt_init), or NULL:
	 * trees are then read from and written to the switches' own LFTs.
	 * An engine works on one LID at a time over every switch; LID-major
	 * rows keep that in a few cache lines instead of one per switch
	 * (measured: half of the k=40 fat-tree's routing time went to those
	 * misses).
	 */
	uint8_t *lt;
	uint32_t lidlen;		/* max_lid + 1 */
	/*
	 * LMC > 0: the arcs the other LIDs of the port being routed take now,
	 * which its next hops avoid where a switch has another choice, so that
	 * the paths of one port's LIDs spread over different links. NULL when
	 * every endport has LMC 0.
	 */
	struct rt_sibs *sibs;
};

struct rt_sibs {
	/*
	 * [narcs] the port's other LIDs over each arc: their number in the
	 * low byte, in the high byte those of them that reach the arc's switch
	 * from a host or another switch (paths really pass there)
	 */
	uint16_t *cnt;
	uint8_t *entered;		/* [nsw] scratch of rt_sib_mark */
	uint8_t *hosts;			/* [nsw] 1: a CA is cabled to the switch */
	uint32_t *arcs;			/* the arcs counted, to clear them */
	uint32_t n;
	bool on;			/* cnt holds the siblings of the LID being routed */
};

/* What route_compute hands an engine, and what the caller gets back */
struct route_result {
	struct fabric *f;
	unsigned int vls_budget;
	unsigned int vls_used;
	uint16_t max_lid;
	uint32_t nsw;
	uint8_t *sl_dest;		/* [max_lid + 1] SL by destination LID, or NULL */
	uint8_t *sl_pair;		/* [nsw * (max_lid + 1)] by (source switch, LID), or NULL */
	/*
	 * [nsw] an order of the switches (by sw_idx) under which every route
	 * takes up arcs (toward a lower rank) before down arcs, or NULL. Such
	 * routes are acyclic on one VL whatever they are, so route repair can
	 * judge a detour by its one new turn (no down arc before an up arc)
	 * instead of searching the channel dependency graph.
	 */
	uint32_t *updn_rank;
};

/*
 * Link loads, and the weights balancing sees: a CA destination weighs an arc
 * alpha * load_ca + load (host-to-host routes count alpha + 1 times), a switch
 * destination load alone. Weights are kept up to date with the loads so that
 * a lookup is one load.
 */
struct rt_loads {
	uint32_t narcs, alpha;
	uint32_t *load;			/* routes over each arc */
	uint32_t *load_ca;		/* those toward CA ports */
	uint64_t *w_ca;			/* weights for CA destinations */
	uint64_t *w_sw;			/* weights for switch destinations */
};

int rt_loads_init(struct rt_loads *l, const struct rt_graph *g, uint32_t alpha);
void rt_loads_free(struct rt_loads *l);
void rt_loads_reset(struct rt_loads *l);
void rt_loads_copy(struct rt_loads *dst, const struct rt_loads *src);

/* The weights destination d sees */
static inline const uint64_t *rt_wsel(const struct rt_loads *l, const struct rt_dest *d)
{
	return d->ca ? l->w_ca : l->w_sw;
}

/* What adding f routes of d to an arc adds to its weight for d */
static inline uint64_t rt_wflow(const struct rt_loads *l, const struct rt_dest *d, uint64_t f)
{
	return d->ca ? (l->alpha + 1u) * f : f;
}

/* f more (or, negative, fewer) routes of d over arc a */
static inline void rt_loads_arc(struct rt_loads *l, const struct rt_dest *d, uint32_t a, int64_t f)
{
	l->load[a] += (uint32_t)f;
	l->w_sw[a] += (uint64_t)f;
	if (d->ca) {
		l->load_ca[a] += (uint32_t)f;
		l->w_ca[a] += (uint64_t)f * (l->alpha + 1u);
	} else {
		l->w_ca[a] += (uint64_t)f;
	}
}

/*
 * Whether a tree toward d spreads its own routes: for switch destinations
 * only. (Host destinations, routed first on an empty fabric, come out better
 * balanced as single paths, d-mod-k-like: measured on fat-trees, tori and
 * random fabrics.)
 */
static inline bool rt_spread(const struct rt_dest *d)
{
	return !d->ca;
}

static inline uint32_t rt_deg(const struct rt_graph *g, uint32_t s)
{
	return g->off[s + 1] - g->off[s];
}

/* The turn a -> b; a must enter the switch b leaves */
static inline size_t rt_turn(const struct rt_graph *g, uint32_t a, uint32_t b)
{
	uint32_t v = g->from[b];

	return g->tbase[v] + (size_t)(g->rev[a] - g->off[v]) * rt_deg(g, v) + (b - g->off[v]);
}

/* -EPROTO when a cable has no way back (a model no engine can route) */
int rt_graph_build(struct fabric *f, struct rt_graph *g);
void rt_graph_free(struct rt_graph *g);
/*
 * Before routing d: count the arcs the port's other LIDs (LMC > 0) take in
 * the current LFTs into g->sibs; rt_sib_clear() after. O(switches x LIDs of
 * the port); nothing for LMC 0.
 */
void rt_sib_mark(const struct rt_graph *g, const struct rt_dest *d);
void rt_sib_clear(const struct rt_graph *g);
/* How many of the port's other LIDs leave over arc a (0 without LMC) */
static inline uint32_t rt_sib(const struct rt_graph *g, uint32_t a)
{
	return g->sibs && g->sibs->on ? g->sibs->cnt[a] & 0xff : 0;
}
/*
 * The order in which arcs are avoided: first by the other LIDs whose paths
 * pass the arc's switch (so that the paths of one source to the port's
 * LIDs part), then by all of them (so that every switch spreads them)
 */
static inline uint32_t rt_sib_key(const struct rt_graph *g, uint32_t a)
{
	return g->sibs && g->sibs->on ? g->sibs->cnt[a] : 0;
}
/* Working LFTs: all LFT_PORT_NONE, or (load) a copy of the fabric's. 0 or -ENOMEM */
int rt_lt_init(struct rt_graph *g, bool load);
/* Write the working LFTs into the switches' LFTs (allocated by route_alloc_lfts) */
void rt_lt_flush(const struct rt_graph *g);
/*
 * Transpose between switch-major LFTs (lft[s][lid]) and a LID-major matrix
 * (lt[lid * nsw + s]) in cache-sized blocks; LIDs beyond a switch's lft_len
 * read as LFT_PORT_NONE.
 */
void rt_lt_from_fabric(const struct fabric *f, uint8_t *lt, uint32_t lidlen);
void rt_lt_to_fabric(struct fabric *f, const uint8_t *lt, uint32_t lidlen);
/* Hop distances from every switch to root and the switches in BFS order; returns how many */
uint32_t rt_bfs(const struct rt_graph *g, uint32_t root, uint32_t *dist, uint32_t *order);

/*
 * The candidate next hops toward one destination switch: a DAG of the arcs
 * on shortest (min-hop, or legal up*\/down*) paths, with the switches in
 * order of their hops to the root.
 */
struct rt_dag {
	uint32_t root;			/* RT_NONE: not built */
	uint32_t n;			/* switches that reach the root */
	uint32_t *order;		/* [nsw] by hops, order[0] = root */
	uint32_t *off;			/* [nsw + 1] order[i]'s: arcs[off[i]..off[i + 1]) */
	uint32_t *arcs;			/* [narcs] */
	uint32_t *to;			/* [narcs] g->to[arcs[k]], read without the detour */
	uint32_t *hops;			/* [nsw] hops to the root, RT_INF if none */
};

int rt_dag_init(struct rt_dag *dag, const struct rt_graph *g);
void rt_dag_free(struct rt_dag *dag);
/* Min-hop DAG toward root (kept when already built for root) */
void rt_dag_minimal(struct rt_dag *dag, const struct rt_graph *g, uint32_t root);
/*
 * The balanced tree toward d over dag (built for d->sw): a pass from the root
 * outward gives every switch the least weighted remainder (cost[]), a pass
 * from the farthest switches inward picks each one's next hop; for a switch
 * destination, the flow of d already sent to a candidate adds to its cost
 * (rt_spread). rot rotates the preference among ties. With account, the
 * tree's routes are added to l as it goes. cost and flow: nsw scratch.
 */
void rt_dag_tree(const struct rt_dag *dag, const struct rt_graph *g, const struct rt_dest *d,
		 struct rt_loads *l, bool account, uint32_t rot, uint64_t *cost, uint64_t *flow,
		 uint32_t *nxt);

/* LFT <-> tree for destination d */
void rt_tree_read(const struct rt_graph *g, const struct rt_dest *d, uint32_t *nxt);
void rt_tree_write(const struct rt_graph *g, const struct rt_dest *d, const uint32_t *nxt);
/*
 * Order the switches that reach d's switch through nxt children first
 * (deepest first); depth[] gets their hops (RT_INF: no route). Returns how
 * many; scratch needs nsw entries.
 */
uint32_t rt_tree_order(const struct rt_graph *g, const struct rt_dest *d, const uint32_t *nxt,
		       uint32_t *depth, uint32_t *order, uint32_t *scratch);
/* Add (sign > 0) or remove the routes of a tree to load[]: sources per switch, summed down */
void rt_tree_load(const struct rt_graph *g, const uint32_t *nxt, const uint32_t *order,
		  uint32_t n, uint32_t *acc, uint32_t *load, int sign);
/* The same into l, for destination d; depth, order, scratch: nsw each */
void rt_loads_tree(struct rt_loads *l, const struct rt_graph *g, const struct rt_dest *d,
		   const uint32_t *nxt, uint32_t *depth, uint32_t *order, uint32_t *scratch,
		   int sign);

/*
 * A channel dependency graph kept acyclic: the turns present, and a
 * topological order of the arcs maintained as turns are added
 * (Pearce-Kelly dynamic topological sort).
 */
struct rt_cdg {
	const struct rt_graph *g;
	uint32_t *cnt;			/* [nturns] paths using the turn (0: absent) */
	uint32_t *ord;			/* [narcs] position of an arc in the order */
	uint32_t *at;			/* [narcs] arc at a position */
	uint32_t *mark;			/* [narcs] visit stamps */
	uint32_t stamp;
	uint32_t *stack, *fwd, *bwd, *tmp;
	uint32_t nfwd, nbwd;
	uint64_t work;			/* arcs visited by searches so far */
	/*
	 * 0, or the arcs a search may visit: one that would visit more takes
	 * the turn for closing a cycle (it is refused, never wrongly let in)
	 */
	uint32_t search_cap;
};

int rt_cdg_init(struct rt_cdg *c, const struct rt_graph *g);
void rt_cdg_free(struct rt_cdg *c);
/*
 * Start an empty graph's topological order from key[] (ascending, per arc)
 * instead of the arcs' numbering: turns that agree with it then cost no
 * search (route repair seeds it with the up/down order old routes obey).
 * 0, -EBUSY when the graph holds turns already, or -ENOMEM.
 */
int rt_cdg_seed(struct rt_cdg *c, const uint32_t *key);
/* Whether the turn a -> b can be added without closing a cycle (nothing changes) */
bool rt_cdg_can_add(struct rt_cdg *c, uint32_t a, uint32_t b);
/* Use turn a -> b once more: 0, or -ELOOP when it would close a cycle (nothing changes) */
int rt_cdg_add(struct rt_cdg *c, uint32_t a, uint32_t b);
/* One use less of turn a -> b */
void rt_cdg_put(struct rt_cdg *c, uint32_t a, uint32_t b);
/* Whether the turns marked non-zero in used[nturns] form an acyclic CDG */
bool rt_turns_acyclic(const struct rt_graph *g, const uint8_t *used);

/*
 * A grid (route_grid.c): the switches as a Cartesian product of paths and
 * cycles (meshes, tori, rings, hypercubes), with every switch's coordinates.
 */
#define RT_GRID_MAXD	12		/* dimensions at most (a 2^12 hypercube) */

struct rt_grid {
	uint32_t ndim;
	uint32_t size[RT_GRID_MAXD];	/* switches along each dimension */
	bool cycle[RT_GRID_MAXD];	/* a cycle (3 or more), else a path (or one cable) */
	uint32_t *coord;		/* [nsw * RT_GRID_MAXD] coordinates of each switch */
	uint32_t *at;			/* [nsw] the switch at each mixed-radix index */
};

/* 1 and gr filled when g's switches form a grid, 0 when not (gr empty), -ENOMEM */
int rt_grid_detect(const struct rt_graph *g, struct rt_grid *gr);
void rt_grid_free(struct rt_grid *gr);
/* Mixed-radix index of coordinates c (dimension 0 fastest), RT_NONE if out of range */
uint32_t rt_grid_index(const struct rt_grid *gr, const uint32_t *c);
/*
 * Dimension-ordered routes over the grid (order[]: a permutation of the
 * dimensions, the first corrected first), cycles broken once per line and
 * direction: acyclic on one VL. Every destination of g in turn, balanced
 * against the loads l (which it adds to), passes - 1 rounds of rip-up and
 * reroute; writes the trees (rt_tree_write). depth, ord, scratch: nsw each.
 * 0 or -ENOMEM.
 */
int rt_grid_route(const struct rt_graph *g, const struct rt_grid *gr, const uint32_t *order,
		  struct rt_loads *l, unsigned int passes, uint32_t *depth, uint32_t *ord,
		  uint32_t *scratch);

/* Engines */
int route_minhop_compute(struct fabric *f, struct route_result *res, struct route_stats *st);
int route_updn_compute(struct fabric *f, struct route_result *res, struct route_stats *st);
int route_dfree_compute(struct fabric *f, struct route_result *res, struct route_stats *st);
int route_layered_compute(struct fabric *f, struct route_result *res, struct route_stats *st);

/*
 * Up*\/down*: a total order of the switches (rank from a BFS from the root,
 * then GUID). An arc is "up" when it leads to a lower switch in the order.
 */
struct rt_updn {
	uint32_t root;
	uint32_t *rank;			/* [nsw] position in the order */
	uint32_t *bylevel;		/* [nsw] switches sorted by rank */
	/*
	 * Each switch's arcs by direction, in arc order: down (to a higher
	 * rank) in dir[g->off[s] .. mid[s]), up in dir[mid[s] .. upend[s]);
	 * dirto[] their far ends
	 */
	uint32_t *mid, *upend, *dir, *dirto;
	uint32_t *dd, *cnt;		/* scratch */
	uint64_t *cost, *fin;
	struct rt_dag dag;
};

/* -EPROTO when a BFS does not reach what it must: the graph is not symmetric */
int rt_updn_init(const struct rt_graph *g, struct rt_updn *u);
void rt_updn_free(struct rt_updn *u);
/*
 * The DAG of legal up*\/down* next hops toward root: a switch with an
 * all-down path to root keeps to those (so that packets coming down to it may
 * go on), the others go up; shortest paths in both cases.
 */
void rt_dag_updn(struct rt_dag *dag, const struct rt_graph *g, struct rt_updn *u, uint32_t root);
/*
 * The DAGs of roots[0..n) in turn, made ahead on a thread of their own when
 * par_threads() allows (the same DAGs as rt_dag_updn's). rt_updn_pipe_dag(j)
 * waits for roots[j]'s and holds it until it asks for a later one; j only
 * grows. u must outlive the pipe (its order is shared).
 */
struct rt_updn_pipe;
int rt_updn_pipe_new(const struct rt_graph *g, const struct rt_updn *u, const uint32_t *roots,
		     uint32_t n, struct rt_updn_pipe **out);
const struct rt_dag *rt_updn_pipe_dag(struct rt_updn_pipe *p, uint32_t j);
void rt_updn_pipe_free(struct rt_updn_pipe *p);
/* Balanced up*\/down* tree toward d (rt_dag_tree over u's DAG) */
void rt_updn_tree(const struct rt_graph *g, struct rt_updn *u, const struct rt_dest *d,
		  struct rt_loads *l, bool account, uint32_t *nxt);

/*
 * Nue-like routing (route_nue.c) of every destination in g, within V
 * acyclic layers: writes the LFTs, adds the routes to l (empty at start),
 * sets sl_dest[lid] (the layer), the layers used and how many LIDs went on
 * escape paths. H: hop penalty of the link weights; no route gets longer
 * than hop_limit switch-to-switch hops (0: no limit) but escape-tree routes
 * (a destination's last resort); shuffle: destinations in a fixed
 * pseudo-random order instead of g's; passes - 1 rounds of rip-up and
 * reroute follow the first. tree_w: NULL for escape paths over a BFS tree
 * from the up/down root, else over a spanning tree of the cables with the
 * most weight (tree_w per arc, both directions summed); a turn not yet in
 * its layer's graph weighs turn_weight hop penalties more (0: nothing).
 * Returns 0, 1 when the searches in the CDGs visited more than work_limit
 * arcs (0: no limit; the LFTs are then incomplete), or -ENOMEM.
 */
int rt_nue_route(const struct rt_graph *g, struct rt_loads *l, uint64_t H, uint32_t hop_limit,
		 unsigned int V, unsigned int passes, bool shuffle, uint64_t work_limit,
		 const uint32_t *tree_w, unsigned int turn_weight, uint8_t *sl_dest,
		 unsigned int *used, unsigned int *escaped);

/*
 * Local search on one-VL routes (route_polish.c): while it lowers the
 * busiest load or the number of links carrying it, one switch's next hop
 * toward one LID at a time moves (with the routes that pass the switch)
 * from a way over the busiest link to one that avoids it, keeping the
 * channel dependency graph acyclic, or, given rank (an up/down order the
 * routes obey), keeping to that order. Works on g->lt and l (the loads of
 * those routes, kept up to date); no route gets longer than hop_limit hops
 * (0: no limit); stops after about work_limit steps. *moved: moves made
 * (none when a port has several LIDs: they keep apart as the engine put
 * them). movable (LID-major like g->lt, or NULL: all): the only entries
 * that may change. 0, -EDEADLK when the routes are not acyclic on one VL
 * (nothing changed), -ENOMEM.
 */
int rt_polish(const struct rt_graph *g, struct rt_loads *l, const uint32_t *rank,
	      const uint8_t *movable, uint32_t hop_limit, uint64_t work_limit, uint32_t *moved);

/*
 * The SL of the paths from the endports attached to switch sw_idx toward
 * dlid, as route_path_sl() answers for them (r may be NULL: SL 0)
 */
static inline int rt_path_sl_sw(const struct route_result *r, uint32_t sw_idx, uint16_t dlid)
{
	if (!r || dlid > r->max_lid)
		return 0;
	if (r->sl_pair)
		return sw_idx < r->nsw ?
		       r->sl_pair[(size_t)sw_idx * ((size_t)r->max_lid + 1) + dlid] : 0;
	if (r->sl_dest)
		return r->sl_dest[dlid];
	return 0;
}

/* Result helpers */
int rt_result_sl_pair(struct route_result *r);
int rt_result_sl_dest(struct route_result *r);
/* The statistics route_compute gives every engine, from the LFTs of f */
int rt_post_stats(const struct rt_graph *g, struct fabric *f, struct route_stats *st);
/* Max and mean of load[] over arcs */
void rt_load_stats(const struct rt_graph *g, const uint32_t *load, struct route_stats *st);

#endif
