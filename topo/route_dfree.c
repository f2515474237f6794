// SPDX-License-Identifier: MIT
/*
 * dfree: link-balanced routing that is deadlock-free on any topology within
 * the data VLs it is given (1 to 8).
 *
 * Balancing. Destination LIDs are routed one after the other (CA ports
 * first, then switches), each as a tree over a DAG of candidate next hops
 * (rt_dag_tree): from the destination outward every switch learns the least
 * weighted remainder of its candidate paths, a link's weight being the
 * routes already over it (host-to-host routes counted RT_ALPHA + 1 times);
 * then, from the farthest switches inward, each switch picks its next hop;
 * for a switch destination the flow of that destination already sent to a
 * neighbour adds to its cost, which spreads the destination's own routes
 * (one tree per LID would otherwise funnel all of them through the single
 * best path). The tree's routes are then added to the weights: the global
 * balancing of SSSP routing. Rip-up-and-reroute passes route each LID again
 * against everybody else's load; the best pass is kept.
 *
 * Candidates, all balanced that way:
 *   U  up*\/down* (route_updn.c): deadlock-free on 1 VL by construction; on
 *      fat-trees its host routes are minimal too;
 *   M  min-hop routes; when their channel dependency graph (CDG) is cyclic,
 *      the paths (source switch, LID) are spread over layers, one per VL
 *      (SL = VL = layer), each path to the lowest layer whose CDG stays
 *      acyclic with it (kept acyclic incrementally, route_cdg.c): DFSSSP's
 *      idea with a first-fit placement;
 *   W  least-weight (Dijkstra, hop-penalised) routes, layered the same way;
 *   N  Nue-like routing inside V acyclic CDGs (route_nue.c): fits any budget,
 *      tried with several hop penalties and two destination orders; on one
 *      VL and small fabrics also with escape paths over the cables min-hop
 *      routes load most.
 * One-VL candidates are then polished (route_polish.c): routes move, one
 * switch's next hop toward one LID at a time, off the busiest link while
 * the CDG stays acyclic (up/down routes: while they obey their order; then,
 * where that leaves them near min-hop's balance but not the bound, as on
 * fat-trees that lost cables, within an acyclic CDG off the order).
 * M and W only count when their layers fit the VL budget; U and N always
 * fit. Routes longer than the hop limit make a candidate lose to any other;
 * then the candidate with the fewest routes on its busiest link wins, then
 * on its busiest host-to-host link, then fewer VLs, then fewer hops in all.
 * N is tried on small fabrics, and on medium ones when neither M nor W fits,
 * unless up/down is about as good as min-hop (as on fat-trees). Big fabrics (arcs x LIDs above
 * DF_BIG_WORK, e.g. the k=32 fat-tree) get one pass of U and M, and M is
 * layered only when it beats U.
 *
 * Deadlock freedom does not depend on any of these heuristics: every
 * candidate is acyclic per VL by construction (U, N) or by an exact check
 * (M, W), and route_check verifies the result independently.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/route_int.h"
#include "util/macros.h"

/* Above this much work (arcs x destinations) a fabric is "big" */
#define DF_BIG_WORK		40000000ull
/*
 * Routes longer than this many switch-to-switch hops (or than the fabric's
 * diameter, if longer) count as worse than any shorter candidate: ibsim
 * drops LID-routed packets after 16 switches, and long detours cost latency.
 */
#define DF_HOP_LIMIT		15
/* Rip-up-and-reroute passes after the first, below DF_BIG_WORK */
#define DF_PASSES		3
/* Above this much work, Nue-like routing tries fewer variants */
#define DF_NUE_WORK		2000000ull
/*
 * A candidate this close to the lower bound of the busiest link ends the
 * search (percent); on big fabrics, where every further candidate costs
 * seconds, a looser bound does
 */
#define DF_CLOSE_PCT		2
#define DF_CLOSE_BIG_PCT	5
/*
 * Layering gives up after its graph searches visited this many times the
 * arcs (layering min-hop routes of the k=40 fat-tree over 4 VLs took 190 s,
 * for 3.5% off the busiest link)
 */
#define DF_LAYER_LIMIT		2048
/* The local search on one-VL routes stops after visiting this many times arcs x destinations */
#define DF_POLISH_WORK		64
/* Nue-like routing over the busiest cables: a new turn weighs this many hop penalties */
#define DF_NUE_TURN		10
/* Nue-like routing gives up after searching its CDGs this many times arcs x destinations */
#define DF_NUE_LIMIT		32
/* ... and is not tried when up/down's busiest link is within this many percent of min-hop's */
#define DF_NUE_SKIP_PCT		10
/*
 * Up/down routes are polished off their order (turns it forbids) when
 * their busiest link is within this many percent of min-hop's: the k=16
 * fat-tree less 5% of its cables 115% (then 94%), random fabrics 176% and
 * more (where Nue-like routing wins)
 */
#define DF_OFF_ORDER_PCT	150

enum df_mode {
	DF_MINIMAL,
	DF_SSSP,
	DF_UPDN,
};

struct dfree {
	struct rt_graph g;
	struct fabric *f;
	uint32_t S, lidlen;
	struct rt_loads l;		/* routes over each arc, and weights */
	struct rt_loads keep;		/* the best pass's */
	uint32_t *nxt;			/* [S] the tree being built */
	struct rt_dag dag;		/* min-hop candidates */
	uint64_t *cost, *fin;
	uint32_t *depth, *order, *scratch;
	uint32_t *heap, *hpos, nheap, *popped;
	uint64_t hop_penalty;
	uint64_t mean_minimal;		/* mean link load of min-hop routes */
	uint32_t max_minimal;		/* their busiest link */
	uint32_t max_updn;		/* up/down's */
	uint32_t *load_minimal;		/* [narcs] their loads, or NULL */
	uint32_t hop_limit;		/* longer routes only if nothing else will do */
	bool minimal_done;		/* M was routed (mean_minimal, max_minimal hold) */
	uint32_t known_hops;		/* longest route in the LFTs if known (trees over a DAG
					 * follow its shortest arcs), else RT_NONE */
	bool minimal_acyclic;		/* ... and needed no layers */
	struct rt_updn updn;
	bool updn_ok;
	uint8_t *sl;			/* [S * lidlen] SL per (source switch, LID) */
	struct rt_cdg layer[ROUTE_MAX_VLS];
	bool layer_ok[ROUTE_MAX_VLS];
};

struct df_snap {
	bool valid;
	bool too_long;			/* some route longer than the hop limit */
	uint8_t *lft;			/* [lidlen * S], as g.lt */
	uint8_t *sl;			/* [S * lidlen] per pair, [lidlen] per LID, or NULL: SL 0 */
	bool sl_per_dest;
	unsigned int vls;
	uint32_t max_load, max_load_ca;
	uint64_t total_load;
	unsigned int escape;
	const char *method;
	bool updn;			/* up/down routes: legal under rank */
	const uint32_t *rank;		/* [S] that order (dc->updn's) */
};

static void df_free(struct dfree *dc)
{
	rt_loads_free(&dc->l);
	rt_loads_free(&dc->keep);
	free(dc->nxt);
	rt_dag_free(&dc->dag);
	free(dc->cost);
	free(dc->fin);
	free(dc->depth);
	free(dc->order);
	free(dc->scratch);
	free(dc->heap);
	free(dc->hpos);
	free(dc->popped);
	free(dc->sl);
	free(dc->load_minimal);
	for (unsigned int i = 0; i < ROUTE_MAX_VLS; i++)
		if (dc->layer_ok[i])
			rt_cdg_free(&dc->layer[i]);
	if (dc->updn_ok)
		rt_updn_free(&dc->updn);
	rt_graph_free(&dc->g);
}

static int df_init(struct dfree *dc, struct fabric *f)
{
	uint32_t S;
	int r;

	memset(dc, 0, sizeof(*dc));
	dc->known_hops = RT_NONE;
	r = rt_graph_build(f, &dc->g);
	if (r == 0)
		r = rt_lt_init(&dc->g, false);
	if (r < 0) {
		rt_graph_free(&dc->g);
		return r;
	}
	dc->f = f;
	S = dc->S = dc->g.nsw;
	dc->lidlen = (uint32_t)f->max_lid + 1;
	dc->nxt = malloc((S + 1) * sizeof(*dc->nxt));
	dc->cost = malloc((S + 1) * sizeof(*dc->cost));
	dc->fin = malloc((S + 1) * sizeof(*dc->fin));
	dc->depth = malloc((S + 1) * sizeof(*dc->depth));
	dc->order = malloc((S + 1) * sizeof(*dc->order));
	dc->scratch = malloc((S + 1) * sizeof(*dc->scratch));
	dc->heap = malloc((S + 1) * sizeof(*dc->heap));
	dc->hpos = malloc((S + 1) * sizeof(*dc->hpos));
	dc->popped = malloc((S + 1) * sizeof(*dc->popped));
	if (rt_loads_init(&dc->l, &dc->g, RT_ALPHA) < 0 || !dc->nxt ||
	    rt_dag_init(&dc->dag, &dc->g) < 0 ||
	    !dc->cost || !dc->fin || !dc->depth || !dc->order || !dc->scratch ||
	    !dc->heap || !dc->hpos || !dc->popped) {
		df_free(dc);
		return -ENOMEM;
	}
	return 0;
}

/* ---- balanced trees ---- */

static void heap_up(struct dfree *dc, uint32_t i)
{
	uint32_t *h = dc->heap, x = h[i];

	while (i > 0) {
		uint32_t p = (i - 1) / 2;

		if (dc->cost[h[p]] <= dc->cost[x])
			break;
		h[i] = h[p];
		dc->hpos[h[i]] = i;
		i = p;
	}
	h[i] = x;
	dc->hpos[x] = i;
}

static uint32_t heap_pop(struct dfree *dc)
{
	uint32_t *h = dc->heap, top = h[0], x, i = 0;

	x = h[--dc->nheap];
	dc->hpos[top] = RT_NONE;
	if (!dc->nheap)
		return top;
	for (;;) {
		uint32_t l = 2 * i + 1, m;

		if (l >= dc->nheap)
			break;
		m = (l + 1 < dc->nheap && dc->cost[h[l + 1]] < dc->cost[h[l]]) ? l + 1 : l;
		if (dc->cost[h[m]] >= dc->cost[x])
			break;
		h[i] = h[m];
		dc->hpos[h[i]] = i;
		i = m;
	}
	h[i] = x;
	dc->hpos[x] = i;
	return top;
}

/*
 * Least-weight tree toward d, an arc weighing the hop penalty plus its
 * weight (Dijkstra); then the same spreading pass as min-hop trees, among
 * the neighbours strictly closer in weight (so no loop can form).
 */
static void tree_sssp(struct dfree *dc, const struct rt_dest *d, uint32_t rot)
{
	const struct rt_graph *g = &dc->g;
	const uint64_t *W = rt_wsel(&dc->l, d);
	uint64_t *cost = dc->cost, *fin = dc->fin, H = dc->hop_penalty;
	uint32_t n = 0;
	bool spread = rt_spread(d);

	for (uint32_t s = 0; s < dc->S; s++) {
		dc->nxt[s] = RT_NONE;
		cost[s] = UINT64_MAX;
		dc->hpos[s] = RT_NONE;
	}
	cost[d->sw] = 0;
	dc->nheap = 0;
	dc->heap[dc->nheap++] = d->sw;
	dc->hpos[d->sw] = 0;
	while (dc->nheap) {
		uint32_t v = heap_pop(dc);

		dc->popped[n++] = v;
		for (uint32_t b = g->off[v]; b < g->off[v + 1]; b++) {
			uint32_t u = g->to[b], a = g->rev[b];
			uint64_t c = cost[v] + H + W[a];

			if (c >= cost[u])
				continue;
			cost[u] = c;
			if (dc->hpos[u] == RT_NONE) {
				dc->heap[dc->nheap] = u;
				dc->hpos[u] = dc->nheap++;
			}
			heap_up(dc, dc->hpos[u]);
		}
	}
	for (uint32_t i = 0; i < n; i++)
		fin[dc->popped[i]] = g->nsrc[dc->popped[i]];
	for (uint32_t i = n; i-- > 1;) {
		uint32_t s = dc->popped[i], deg = rt_deg(g, s), best = RT_NONE, bs = 0;
		uint64_t bc = 0, bw = 0;

		for (uint32_t k = 0; k < deg; k++) {
			uint32_t a = g->off[s] + (k + rot) % deg, t = g->to[a], sb;
			uint64_t w, c;

			if (cost[t] >= cost[s])
				continue;
			w = H + W[a];
			c = cost[t] + w + (spread ? rt_wflow(&dc->l, d, fin[t]) : 0);
			/* Away from the arcs of the port's other LIDs first (LMC > 0) */
			sb = rt_sib_key(g, a);
			if (best == RT_NONE || sb < bs || (sb == bs && (c < bc || (c == bc && w < bw)))) {
				best = a;
				bs = sb;
				bc = c;
				bw = w;
			}
		}
		dc->nxt[s] = best;
		fin[g->to[best]] += fin[s];
	}
}

/*
 * Route destination i, adding its routes to the loads; updn: its up/down
 * DAG (made ahead, rt_updn_pipe), as rt_updn_tree would make it
 */
static void tree_build(struct dfree *dc, enum df_mode mode, uint32_t i, const struct rt_dag *updn)
{
	const struct rt_dest *d = &dc->g.dest[i];
	const struct rt_dag *dag = mode == DF_MINIMAL ? &dc->dag : updn;

	rt_sib_mark(&dc->g, d);
	if (mode == DF_MINIMAL) {
		rt_dag_minimal(&dc->dag, &dc->g, d->sw);
		rt_dag_tree(&dc->dag, &dc->g, d, &dc->l, true, i, dc->cost, dc->fin, dc->nxt);
	} else if (mode == DF_UPDN) {
		rt_dag_tree(updn, &dc->g, d, &dc->l, true, d->lid, dc->updn.cost, dc->updn.fin,
			    dc->nxt);
	}
	if (mode != DF_SSSP) {
		/* Every switch takes a DAG arc one hop nearer: its hops are the DAG's */
		uint32_t far = dag->n ? dag->hops[dag->order[dag->n - 1]] : 0;

		if (dc->known_hops == RT_NONE || far > dc->known_hops)
			dc->known_hops = far;
	} else {
		tree_sssp(dc, d, i);
		rt_loads_tree(&dc->l, &dc->g, d, dc->nxt, dc->depth, dc->order, dc->scratch, 1);
	}
	rt_sib_clear(&dc->g);
}

static void df_reset(struct dfree *dc)
{
	dc->known_hops = RT_NONE;
	rt_loads_reset(&dc->l);
	memset(dc->g.lt, LFT_PORT_NONE, (size_t)dc->S * dc->lidlen);
}

static void load_summary(const struct dfree *dc, uint32_t *max, uint32_t *max_ca,
			 uint64_t *total);

/*
 * Route every destination, then passes - 1 rounds of rip-up and reroute;
 * the LFTs and loads of the best round (busiest link, then busiest
 * host-to-host link, then total) are kept. 0 or -ENOMEM.
 */
static int route_all(struct dfree *dc, enum df_mode mode, unsigned int passes)
{
	size_t len = (size_t)dc->S * dc->lidlen;
	uint8_t *keep = NULL;
	uint32_t *roots = NULL, nroots = 0;
	uint32_t bm = 0, bmc = 0;
	uint64_t bt = 0;
	unsigned int best = 0;

	if (passes > 1) {
		if (!dc->keep.load && rt_loads_init(&dc->keep, &dc->g, RT_ALPHA) < 0)
			return -ENOMEM;
		keep = malloc(len ? len : 1);
		if (!keep)
			return -ENOMEM;
	}
	/* Up/down: the destinations' switches in turn, their DAGs made ahead */
	if (mode == DF_UPDN) {
		roots = malloc((dc->g.ndest + 1) * sizeof(*roots));
		if (!roots) {
			free(keep);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < dc->g.ndest; i++)
			if (!nroots || roots[nroots - 1] != dc->g.dest[i].sw)
				roots[nroots++] = dc->g.dest[i].sw;
	}
	df_reset(dc);
	for (unsigned int p = 0; p < passes; p++) {
		struct rt_updn_pipe *pipe = NULL;
		uint32_t m, mc, j = 0;
		uint64_t t;

		if (mode == DF_UPDN && rt_updn_pipe_new(&dc->g, &dc->updn, roots, nroots, &pipe) < 0) {
			free(roots);
			free(keep);
			return -ENOMEM;
		}
		for (uint32_t i = 0; i < dc->g.ndest; i++) {
			const struct rt_dest *d = &dc->g.dest[i];
			const struct rt_dag *updn = NULL;

			if (p > 0) {
				rt_tree_read(&dc->g, d, dc->nxt);
				rt_loads_tree(&dc->l, &dc->g, d, dc->nxt, dc->depth, dc->order,
					      dc->scratch, -1);
			}
			if (pipe) {
				if (roots[j] != d->sw)
					j++;
				updn = rt_updn_pipe_dag(pipe, j);
			}
			tree_build(dc, mode, i, updn);
			rt_tree_write(&dc->g, d, dc->nxt);
		}
		rt_updn_pipe_free(pipe);
		if (passes == 1)
			break;
		load_summary(dc, &m, &mc, &t);
		if (p == 0 || m < bm || (m == bm && (mc < bmc || (mc == bmc && t < bt)))) {
			bm = m;
			bmc = mc;
			bt = t;
			best = p;
			memcpy(keep, dc->g.lt, len);
			rt_loads_copy(&dc->keep, &dc->l);
		}
	}
	if (passes > 1 && best != passes - 1) {
		memcpy(dc->g.lt, keep, len);
		rt_loads_copy(&dc->l, &dc->keep);
	}
	free(keep);
	free(roots);
	if (mode == DF_SSSP)
		dc->known_hops = RT_NONE;
	return 0;
}

/* Whether the turns of all routes in the LFTs form an acyclic CDG */
static int all_acyclic(struct dfree *dc, bool *acyclic)
{
	const struct rt_graph *g = &dc->g;
	uint8_t *used = calloc(g->nturns ? g->nturns : 1, 1);

	if (!used)
		return -ENOMEM;
	for (uint32_t i = 0; i < g->ndest; i++) {
		rt_tree_read(g, &g->dest[i], dc->nxt);
		for (uint32_t s = 0; s < dc->S; s++) {
			uint32_t a = dc->nxt[s], b;

			if (a == RT_NONE || (b = dc->nxt[g->to[a]]) == RT_NONE)
				continue;
			used[rt_turn(g, a, b)] = 1;
		}
	}
	*acyclic = rt_turns_acyclic(g, used);
	free(used);
	return 0;
}

/* ---- layers ---- */

static int layers_reset(struct dfree *dc, unsigned int n)
{
	for (unsigned int i = 0; i < ROUTE_MAX_VLS; i++)
		if (dc->layer_ok[i]) {
			rt_cdg_free(&dc->layer[i]);
			dc->layer_ok[i] = false;
		}
	for (unsigned int i = 0; i < n; i++) {
		int r = rt_cdg_init(&dc->layer[i], &dc->g);

		if (r < 0)
			return r;
		dc->layer_ok[i] = true;
	}
	return 0;
}

/* Take the first `turns` turns of the path from s out of layer c */
static void path_put(struct dfree *dc, struct rt_cdg *c, uint32_t s, uint32_t turns)
{
	const struct rt_graph *g = &dc->g;
	uint32_t a = dc->nxt[s];

	for (uint32_t k = 0; k < turns; k++) {
		uint32_t b = dc->nxt[g->to[a]];

		rt_cdg_put(c, a, b);
		a = b;
	}
}

/*
 * Put the path from s toward the tree's root in layer c: 0 or -ELOOP
 * (nothing added). With suffix_here, the path from s's next hop on is in
 * this layer already: only the first turn can close a cycle.
 */
static int path_add(struct dfree *dc, struct rt_cdg *c, uint32_t s, bool suffix_here)
{
	const struct rt_graph *g = &dc->g;
	uint32_t a = dc->nxt[s], k = 0;

	for (;;) {
		uint32_t b = dc->nxt[g->to[a]];

		if (b == RT_NONE)
			return 0;
		if (rt_cdg_add(c, a, b) < 0) {
			path_put(dc, c, s, k);
			return -ELOOP;
		}
		k++;
		if (suffix_here) {
			/* Count the suffix's turns once more: they are present */
			for (uint32_t x = b, y; (y = dc->nxt[g->to[x]]) != RT_NONE; x = y)
				rt_cdg_add(c, x, y);
			return 0;
		}
		a = b;
	}
}

/* Take out the paths of order[upto..n-1] again */
static void dest_unplace(struct dfree *dc, const struct rt_dest *d, uint32_t upto, uint32_t n)
{
	for (uint32_t k = n; k-- > upto;) {
		uint32_t s = dc->order[k];

		if (dc->depth[s] >= 2) {
			uint8_t L = dc->sl[(size_t)s * dc->lidlen + d->lid];

			path_put(dc, &dc->layer[L], s, dc->depth[s] - 1);
		}
	}
}

/*
 * Place every path of the tree in dc->nxt toward d in layers 0..nl-1, shortest
 * paths first, each in the lowest layer that stays acyclic. -ENOSPC when a
 * path fits nowhere: with undo, everything of d is taken out again.
 */
static int dest_place(struct dfree *dc, const struct rt_dest *d, unsigned int nl, bool undo,
		      unsigned int *maxl)
{
	const struct rt_graph *g = &dc->g;
	uint8_t *sl = dc->sl;
	uint32_t n = rt_tree_order(g, d, dc->nxt, dc->depth, dc->order, dc->scratch);

	/* order[] is deepest first; walk it from the end: shortest paths first */
	for (uint32_t k = n; k-- > 0;) {
		uint32_t s = dc->order[k], L;
		uint8_t *slot = &sl[(size_t)s * dc->lidlen + d->lid];
		int sfx;

		if (dc->depth[s] < 2) {
			*slot = 0;
			continue;
		}
		sfx = dc->depth[s] >= 3 ? sl[(size_t)g->to[dc->nxt[s]] * dc->lidlen + d->lid] : -1;
		for (L = 0; L < nl; L++)
			if (path_add(dc, &dc->layer[L], s, (int)L == sfx) == 0)
				break;
		if (L == nl) {
			if (undo)
				dest_unplace(dc, d, k + 1, n);
			return -ENOSPC;
		}
		*slot = (uint8_t)L;
		if (L + 1 > *maxl)
			*maxl = L + 1;
	}
	return 0;
}

/* Layer the routes in the LFTs: 0 and the layers used, or -ENOSPC when nl do not do */
static int layer_all(struct dfree *dc, unsigned int nl, unsigned int *used)
{
	int r;

	*used = 1;
	if (!dc->sl) {
		dc->sl = calloc((size_t)dc->S * dc->lidlen + 1, 1);
		if (!dc->sl)
			return -ENOMEM;
	}
	r = layers_reset(dc, nl);
	if (r < 0)
		return r;
	for (uint32_t i = 0; i < dc->g.ndest; i++) {
		uint64_t work = 0;

		rt_tree_read(&dc->g, &dc->g.dest[i], dc->nxt);
		r = dest_place(dc, &dc->g.dest[i], nl, false, used);
		if (r < 0)
			return r;
		for (unsigned int L = 0; L < nl; L++)
			work += dc->layer[L].work;
		if (work > (uint64_t)DF_LAYER_LIMIT * dc->g.narcs + 1000000)
			return -ENOSPC;
	}
	return 0;
}

/* ---- candidates ---- */

static void snap_free(struct df_snap *sn)
{
	free(sn->lft);
	free(sn->sl);
	memset(sn, 0, sizeof(*sn));
}

static void load_summary(const struct dfree *dc, uint32_t *max, uint32_t *max_ca, uint64_t *total)
{
	*max = *max_ca = 0;
	*total = 0;
	for (uint32_t a = 0; a < dc->g.narcs; a++) {
		*total += dc->l.load[a];
		if (dc->l.load[a] > *max)
			*max = dc->l.load[a];
		if (dc->l.load_ca[a] > *max_ca)
			*max_ca = dc->l.load_ca[a];
	}
}

/* The most switch-to-switch hops of any route in the LFTs */
static uint32_t lft_max_hops(struct dfree *dc)
{
	uint32_t h = 0;

	for (uint32_t i = 0; i < dc->g.ndest; i++) {
		uint32_t n;

		rt_tree_read(&dc->g, &dc->g.dest[i], dc->nxt);
		n = rt_tree_order(&dc->g, &dc->g.dest[i], dc->nxt, dc->depth, dc->order,
				  dc->scratch);
		if (n && dc->depth[dc->order[0]] > h)
			h = dc->depth[dc->order[0]];
	}
	return h;
}

/* Whether (too_long, m, mc, vls, tot) is better than the kept candidate */
static bool snap_better(const struct df_snap *b, bool too_long, uint32_t m, uint32_t mc,
			unsigned int vls, uint64_t tot)
{
	if (!b->valid)
		return true;
	if (too_long != b->too_long)
		return !too_long;
	if (m != b->max_load)
		return m < b->max_load;
	if (mc != b->max_load_ca)
		return mc < b->max_load_ca;
	if (vls != b->vls)
		return vls < b->vls;
	return tot < b->total_load;
}

/*
 * Keep the current LFTs and SLs (sl: per pair [S * lidlen], per destination
 * [lidlen] when per_dest, NULL: all 0) if they beat best. 0 or -ENOMEM.
 */
static int snap_offer(struct dfree *dc, struct df_snap *best, unsigned int vls,
		      const uint8_t *sl, bool per_dest, const char *method, unsigned int escaped)
{
	size_t len = (size_t)dc->S * dc->lidlen, sl_len = per_dest ? dc->lidlen : len;
	uint32_t mx, mc;
	uint64_t tot;
	bool too_long;

	load_summary(dc, &mx, &mc, &tot);
	/* Not better even within the hop limit: no need to walk every route */
	if (!snap_better(best, false, mx, mc, vls, tot))
		return 0;
	too_long = (dc->known_hops != RT_NONE ? dc->known_hops : lft_max_hops(dc)) > dc->hop_limit;
	dc->known_hops = RT_NONE;
	if (!snap_better(best, too_long, mx, mc, vls, tot))
		return 0;
	if (!best->lft) {
		best->lft = malloc(len ? len : 1);
		if (!best->lft)
			return -ENOMEM;
	}
	memcpy(best->lft, dc->g.lt, len);
	free(best->sl);
	best->sl = NULL;
	if (sl && vls > 1) {
		best->sl = malloc(sl_len ? sl_len : 1);
		if (!best->sl)
			return -ENOMEM;
		memcpy(best->sl, sl, sl_len);
	}
	best->sl_per_dest = per_dest;
	best->valid = true;
	best->too_long = too_long;
	best->vls = vls;
	best->max_load = mx;
	best->max_load_ca = mc;
	best->total_load = tot;
	best->method = method;
	best->escape = escaped;
	best->updn = false;
	best->rank = NULL;
	return 0;
}

static void snap_restore(struct dfree *dc, struct df_snap *sn, struct route_result *res,
			 struct route_stats *st)
{
	memcpy(dc->g.lt, sn->lft, (size_t)dc->S * dc->lidlen);
	rt_lt_flush(&dc->g);
	if (sn->updn && sn->rank) {
		res->updn_rank = malloc((dc->S + 1) * sizeof(*res->updn_rank));
		if (res->updn_rank)
			memcpy(res->updn_rank, sn->rank, dc->S * sizeof(*res->updn_rank));
	}
	res->vls_used = sn->vls;
	st->method = sn->method;
	st->escape_lids = sn->escape;
	/* Hand the SL table over */
	if (sn->sl_per_dest) {
		free(res->sl_dest);
		res->sl_dest = sn->sl;
	} else {
		free(res->sl_pair);
		res->sl_pair = sn->sl;
	}
	sn->sl = NULL;
}

/*
 * The most hops between two switches (BFS from each), or DF_HOP_LIMIT when
 * that is surely more: the eccentricity of one switch bounds the diameter
 * from above by twice itself, which spares the S BFS on big fat-trees.
 */
static uint32_t diameter(struct dfree *dc)
{
	uint32_t d = 0, n;

	n = dc->S ? rt_bfs(&dc->g, 0, dc->depth, dc->order) : 0;
	if (n == dc->S && (!n || 2 * dc->depth[dc->order[n - 1]] <= DF_HOP_LIMIT))
		return DF_HOP_LIMIT;
	for (uint32_t s = 0; s < dc->S; s++) {
		n = rt_bfs(&dc->g, s, dc->depth, dc->order);
		if (n && dc->depth[dc->order[n - 1]] > d)
			d = dc->depth[dc->order[n - 1]];
	}
	return d;
}

/*
 * A lower bound of the busiest link of any routing (routes of CA sources
 * toward every LID): the routes leaving a switch's CA ports for LIDs
 * elsewhere share its links, so do those entering it for its LIDs, and the
 * busiest link carries at least the mean load of min-hop routes. 0 when the
 * switches are not all connected (then some pairs route nowhere).
 */
static uint64_t lower_bound(struct dfree *dc, bool cheap)
{
	const struct rt_graph *g = &dc->g;
	uint64_t lb = 0, srcs = 0, hopsum = 0;
	uint32_t *lids = calloc(dc->S + 1, sizeof(*lids));

	if (!lids || !g->narcs)
		goto out;
	for (uint32_t i = 0; i < g->ndest; i++)
		lids[g->dest[i].sw]++;
	for (uint32_t s = 0; s < dc->S; s++)
		srcs += g->nsrc[s];
	for (uint32_t s = 0; s < dc->S; s++) {
		uint32_t deg = rt_deg(g, s), n;
		uint64_t out = (uint64_t)g->nsrc[s] * (g->ndest - lids[s]);
		uint64_t in = (srcs - g->nsrc[s]) * lids[s];

		if (!lids[s])
			continue;
		/* Cheap: one BFS says whether all are connected, no mean load */
		n = cheap && lb ? dc->S : rt_bfs(g, s, dc->depth, dc->order);
		if (n != dc->S || !deg) {
			lb = 0;
			goto out;
		}
		for (uint32_t t = 0; !cheap && t < dc->S; t++)
			hopsum += (uint64_t)g->nsrc[t] * dc->depth[t] * lids[s];
		out = (out + deg - 1) / deg;
		in = (in + deg - 1) / deg;
		lb = out > lb ? out : lb;
		lb = in > lb ? in : lb;
	}
	if ((hopsum + g->narcs - 1) / g->narcs > lb)
		lb = (hopsum + g->narcs - 1) / g->narcs;
out:
	free(lids);
	return lb;
}

/* Whether the kept candidate is as good as any can be, near enough */
static bool close_enough(const struct df_snap *best, uint64_t lb, unsigned int pct)
{
	return best->valid && !best->too_long && lb &&
	       (uint64_t)best->max_load * 100 <= lb * (100 + pct);
}

/*
 * Polish the one-VL routes in the working LFTs (dc->l: their loads), those
 * of an up/down order rank within it (rank NULL: within an acyclic channel
 * dependency graph). 0 or -ENOMEM.
 */
static int df_polish(struct dfree *dc, const uint32_t *rank)
{
	uint32_t moved;
	int r;

	r = rt_polish(&dc->g, &dc->l, rank, NULL, dc->hop_limit,
		      DF_POLISH_WORK * (uint64_t)dc->g.narcs * dc->g.ndest, &moved);
	if (r == 0 && moved)
		dc->known_hops = RT_NONE;
	return r == -EDEADLK ? 0 : r;
}

/* The busiest link of the routes in the working LFTs */
static uint32_t polish_max(const struct dfree *dc)
{
	uint32_t mx, mc;
	uint64_t tot;

	load_summary(dc, &mx, &mc, &tot);
	return mx;
}

/*
 * The kept candidate's routes polished within an acyclic channel
 * dependency graph (no order kept), taken if that lowers their busiest
 * link. 0 or -ENOMEM.
 */
static int df_polish_snap(struct dfree *dc, struct df_snap *best)
{
	size_t len = (size_t)dc->S * dc->lidlen;
	int r;

	memcpy(dc->g.lt, best->lft, len);
	rt_loads_reset(&dc->l);
	for (uint32_t i = 0; i < dc->g.ndest; i++) {
		rt_tree_read(&dc->g, &dc->g.dest[i], dc->nxt);
		rt_loads_tree(&dc->l, &dc->g, &dc->g.dest[i], dc->nxt, dc->depth, dc->order,
			      dc->scratch, 1);
	}
	r = df_polish(dc, NULL);
	if (r < 0 || polish_max(dc) >= best->max_load)
		return r;
	best->valid = false;	/* replaced whatever its other figures */
	return snap_offer(dc, best, 1, NULL, false, "up/down balanced, then off the order", 0);
}

/*
 * U: balanced up*\/down*, 1 VL; then, unless close to the lower bound lb
 * already, polished (rt_polish) within the same order
 */
static int cand_updn(struct dfree *dc, struct df_snap *best, unsigned int passes, uint64_t lb,
		     unsigned int close_pct)
{
	const char *method;
	uint32_t mc;
	uint64_t tot;
	int r;

	if (!dc->updn_ok) {
		r = rt_updn_init(&dc->g, &dc->updn);
		if (r < 0)
			return r;
		dc->updn_ok = true;
	}
	r = route_all(dc, DF_UPDN, passes);
	if (r < 0)
		return r;
	/* (Unpolished: whether Nue-like routing is worth trying was measured on these) */
	load_summary(dc, &dc->max_updn, &mc, &tot);
	if (!lb || (uint64_t)dc->max_updn * 100 > lb * (100 + close_pct)) {
		r = df_polish(dc, dc->updn.rank);
		if (r < 0)
			return r;
	}
	method = best->method;
	r = snap_offer(dc, best, 1, NULL, false, "up/down balanced", 0);
	if (r == 0 && best->method != method) {
		best->updn = true;	/* taken */
		best->rank = dc->updn.rank;
	}
	return r;
}

/*
 * M or W: route, then 1 VL if acyclic, else layers if they fit (*fit says
 * whether either). With only_if_better, layering is skipped when the routes
 * cannot beat best. 0 or -errno (not fitting is no error).
 */
static int cand_layered(struct dfree *dc, struct df_snap *best, enum df_mode mode,
			unsigned int V, unsigned int passes, bool only_if_better, bool *fit)
{
	bool minimal = mode == DF_MINIMAL, acyclic;
	uint32_t mx, mc;
	uint64_t tot;
	unsigned int used;
	int r;

	r = route_all(dc, mode, passes);
	if (r < 0)
		return r;
	load_summary(dc, &mx, &mc, &tot);
	if (minimal) {
		dc->mean_minimal = dc->g.narcs ? tot / dc->g.narcs : 0;
		dc->max_minimal = mx;
		dc->minimal_done = true;
		free(dc->load_minimal);
		dc->load_minimal = malloc(((size_t)dc->g.narcs + 1) * sizeof(*dc->load_minimal));
		if (!dc->load_minimal)
			return -ENOMEM;
		memcpy(dc->load_minimal, dc->l.load, (size_t)dc->g.narcs * sizeof(*dc->l.load));
	}
	if (only_if_better && !snap_better(best, false, mx, mc, 1, tot))
		return 0;
	r = all_acyclic(dc, &acyclic);
	if (r < 0)
		return r;
	if (minimal)
		dc->minimal_acyclic = acyclic;
	if (acyclic) {
		*fit = true;
		r = df_polish(dc, NULL);
		if (r < 0)
			return r;
		return snap_offer(dc, best, 1, NULL, false, minimal ? "min-hop balanced, acyclic" :
				  "least-weight balanced, acyclic", 0);
	}
	if (V < 2 || !snap_better(best, false, mx, mc, 2, tot))
		return 0;
	r = layer_all(dc, V, &used);
	if (r == -ENOSPC)
		return 0;
	if (r < 0)
		return r;
	*fit = true;
	return snap_offer(dc, best, used, dc->sl, false, minimal ? "min-hop balanced, layered" :
			  "least-weight balanced, layered", 0);
}

/*
 * T: dimension order on a grid (torus, mesh, ring, hypercube), 1 VL
 * (route_grid.c), in every order of up to 3 dimensions, else two. Offered
 * only if its routes are acyclic (they are by construction).
 */
static int cand_grid(struct dfree *dc, struct df_snap *best, unsigned int passes)
{
	static const uint32_t perm3[6][3] = {
		{ 0, 1, 2 }, { 1, 0, 2 }, { 0, 2, 1 }, { 2, 0, 1 }, { 1, 2, 0 }, { 2, 1, 0 },
	};
	struct rt_grid gr;
	uint32_t order[RT_GRID_MAXD];
	unsigned int norders;
	bool acyclic;
	int r = rt_grid_detect(&dc->g, &gr);

	if (r <= 0)
		return r;
	r = 0;
	norders = gr.ndim == 1 ? 1 : gr.ndim == 2 ? 2 : gr.ndim == 3 ? 6 : 2;
	for (unsigned int o = 0; r == 0 && o < norders; o++) {
		for (uint32_t k = 0; k < gr.ndim; k++)
			order[k] = gr.ndim == 3 ? perm3[o][k] : o ? gr.ndim - 1 - k : k;
		df_reset(dc);
		r = rt_grid_route(&dc->g, &gr, order, &dc->l, passes, dc->depth, dc->order,
				  dc->scratch);
		if (r == 0)
			r = all_acyclic(dc, &acyclic);
		if (r == 0 && acyclic)
			r = snap_offer(dc, best, 1, NULL, false, "dimension-ordered on a grid", 0);
	}
	rt_grid_free(&gr);
	return r;
}

/*
 * N: Nue-like, V acyclic CDGs, SL per destination; escape paths over a
 * BFS tree, or (heavy) one of the cables min-hop routes load most with new
 * turns weighing more. One-VL routes are then polished (rt_polish).
 */
static int cand_nue(struct dfree *dc, struct df_snap *best, unsigned int V, unsigned int passes,
		    bool shuffle, bool heavy)
{
	uint8_t *sl_dest = calloc(dc->lidlen, 1);
	unsigned int used, esc;
	int r;

	if (!sl_dest)
		return -ENOMEM;
	df_reset(dc);
	r = rt_nue_route(&dc->g, &dc->l, dc->hop_penalty, dc->hop_limit, V, passes, shuffle,
			 DF_NUE_LIMIT * (uint64_t)dc->g.narcs * dc->g.ndest + 100000,
			 heavy ? dc->load_minimal : NULL, heavy ? DF_NUE_TURN : 0, sl_dest,
			 &used, &esc);
	if (r == 1) {
		r = 0;		/* gave up: no candidate */
	} else if (r == 0) {
		/* Not if its routes are too long or its busiest link far behind the best */
		if (used == 1 && (!best->valid || (uint64_t)polish_max(dc) <= 2ull * best->max_load) &&
		    lft_max_hops(dc) <= dc->hop_limit)
			r = df_polish(dc, NULL);
		if (r == 0)
			r = snap_offer(dc, best, used, sl_dest, true, heavy ?
				       "restricted in acyclic layers, escape over busy cables" :
				       "restricted in acyclic layers", esc);
	}
	free(sl_dest);
	return r;
}

int route_dfree_compute(struct fabric *f, struct route_result *res, struct route_stats *st)
{
	/* Nue's hop penalties to try, in eighths of the mean min-hop link load */
	static const unsigned int nue_h[] = { 0, 2, 8, 32 };
	struct dfree dc;
	struct df_snap best;
	unsigned int V = res->vls_budget ? res->vls_budget : 1, passes;
	uint64_t work, lb;
	unsigned int close_pct;
	bool big, fit = false;
	int r;

	if (V > ROUTE_MAX_VLS)
		V = ROUTE_MAX_VLS;
	memset(&best, 0, sizeof(best));
	r = df_init(&dc, f);
	if (r < 0)
		return r;
	work = (uint64_t)dc.g.narcs * dc.g.ndest;
	big = work > DF_BIG_WORK;
	passes = big ? 1 : 1 + DF_PASSES;
	dc.hop_limit = diameter(&dc);
	if (dc.hop_limit < DF_HOP_LIMIT)
		dc.hop_limit = DF_HOP_LIMIT;

	lb = lower_bound(&dc, big);
	close_pct = big ? DF_CLOSE_BIG_PCT : DF_CLOSE_PCT;
	r = cand_updn(&dc, &best, passes, lb, close_pct);
	if (r == 0)
		r = cand_grid(&dc, &best, passes);
	/* Up/down on a fat-tree, dimension order on a hypercube: nothing does better */
	if (close_enough(&best, lb, close_pct))
		goto done;
	/* One VL: min-hop routes would have to be acyclic as they are, never so on big fabrics */
	if (r == 0 && !(big && V == 1))
		r = cand_layered(&dc, &best, DF_MINIMAL, V, passes, big, &fit);
	/* ... and least-weight ones, more roundabout, neither where min-hop ones are not */
	if (r == 0 && !big && (V > 1 || !dc.minimal_done || dc.minimal_acyclic)) {
		dc.hop_penalty = dc.mean_minimal + 1;
		r = cand_layered(&dc, &best, DF_SSSP, V, passes, false, &fit);
	}
	/*
	 * Up/down routes still far from the bound, but not from min-hop ones:
	 * turns the order forbids (down then up) where the graph stays
	 * acyclic. On fat-trees that lost cables, routes toward the switches of
	 * a group a leaf lost its cable to would otherwise climb through the
	 * root leaf. (Where up/down is far behind min-hop, as on random
	 * fabrics, Nue-like routing does better.)
	 */
	if (r == 0 && best.updn && !close_enough(&best, lb, close_pct) &&
	    (!dc.minimal_done ||
	     (uint64_t)best.max_load * 100 <= (uint64_t)dc.max_minimal * DF_OFF_ORDER_PCT))
		r = df_polish_snap(&dc, &best);
	if (close_enough(&best, lb, close_pct))
		goto done;
	/*
	 * On small fabrics always, on medium ones only when no layering fits
	 * (the budget is tight); never when up/down is about as good as min-hop
	 * (as on fat-trees)
	 */
	if (work <= DF_NUE_WORK)
		fit = false;
	if ((uint64_t)dc.max_updn * 100 <= (uint64_t)dc.max_minimal * (100 + DF_NUE_SKIP_PCT))
		fit = true;
	/* ... nor on medium ones when polished routes are (fat-trees that lost cables) */
	if (work > DF_NUE_WORK && best.valid &&
	    (uint64_t)best.max_load * 100 <= (uint64_t)dc.max_minimal * (100 + DF_NUE_SKIP_PCT))
		fit = true;
	for (unsigned int i = 0; r == 0 && !big && !fit && i < ARRAY_SIZE(nue_h);
	     i++) {
		/* Medium fabrics try the two middle penalties only */
		if (work > DF_NUE_WORK && (i == 0 || i == 3))
			continue;
		dc.hop_penalty = dc.mean_minimal * nue_h[i] / 8 + 1;
		r = cand_nue(&dc, &best, V, work > DF_NUE_WORK ? 2 : 3, false, false);
		if (r == 0)
			r = cand_nue(&dc, &best, V, work > DF_NUE_WORK ? 2 : 3, true, false);
		/*
		 * One VL on small fabrics: escape paths over the busiest
		 * cables too (measured on random fabrics of 100-200 switches:
		 * the best of both is up to 17% below either alone), with
		 * the higher penalties (the lower ones make long routes)
		 */
		if (r == 0 && V == 1 && work <= DF_NUE_WORK && i >= 2 && dc.load_minimal)
			r = cand_nue(&dc, &best, V, 3, false, true);
		if (r == 0 && V == 1 && work <= DF_NUE_WORK && i >= 2 && dc.load_minimal)
			r = cand_nue(&dc, &best, V, 3, true, true);
	}
done:
	if (r == 0)
		snap_restore(&dc, &best, res, st);
	snap_free(&best);
	df_free(&dc);
	return r;
}

/*
 * layered: the min-hop candidate alone, DFSSSP-like: balanced min-hop routes
 * spread over layers, -ENOSPC when the budget does not hold them.
 */
int route_layered_compute(struct fabric *f, struct route_result *res, struct route_stats *st)
{
	struct dfree dc;
	struct df_snap best;
	unsigned int V = res->vls_budget ? res->vls_budget : 1;
	bool fit = false, big;
	int r;

	if (V > ROUTE_MAX_VLS)
		V = ROUTE_MAX_VLS;
	memset(&best, 0, sizeof(best));
	r = df_init(&dc, f);
	if (r < 0)
		return r;
	big = (uint64_t)dc.g.narcs * dc.g.ndest > DF_BIG_WORK;
	dc.hop_limit = UINT32_MAX;
	r = cand_layered(&dc, &best, DF_MINIMAL, V, big ? 1 : 1 + DF_PASSES, false, &fit);
	if (r == 0 && !fit)
		r = -ENOSPC;
	if (r == 0)
		snap_restore(&dc, &best, res, st);
	snap_free(&best);
	df_free(&dc);
	return r;
}
