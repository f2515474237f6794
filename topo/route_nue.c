// SPDX-License-Identifier: MIT
/*
 * Routing inside acyclic channel dependency graphs, after the idea of Nue
 * (Domke, Hoefler, Matsuoka, HPDC 2016): deadlock-free within any number of
 * VLs, 1 included, because the routes are only ever chosen among turns that
 * keep the CDG of their VL acyclic.
 *
 * Each VL (layer) has its own CDG, kept acyclic incrementally (route_cdg.c).
 * Every layer starts with the turns of an escape tree (a BFS spanning tree
 * of the switches): any destination can be reached along the tree with those
 * turns alone, and tree paths never turn back, so they form no cycle.
 * Destinations are split over the layers by their switch (consecutive runs
 * of a BFS order, so a layer holds nearby destinations). A destination's
 * tree is grown outward from its switch like Dijkstra over link weights
 * (hop penalty plus routes already there): a switch u joins through a
 * settled neighbour v only if the turn from (u, v) into v's chosen link
 * keeps the layer acyclic; that turn is then added. When some switch cannot
 * be reached that way (or only by routes longer than the hop limit), the
 * destination is tried in the other layers, then without the limit, and as
 * a last resort routed along the escape tree. All of a destination's routes
 * use its layer's VL: one SL per destination. Rip-up-and-reroute passes take
 * each destination's routes and turns out and grow it again; since its old
 * tree still fits, it can only be replaced by one that the weights prefer.
 * The order of the destinations matters (early trees constrain later ones):
 * the caller may try the natural order and a shuffled one.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/route_int.h"

struct hent {
	uint64_t cost;
	uint32_t node, arc;
};

struct nue {
	const struct rt_graph *g;
	struct rt_loads *l;
	uint64_t H;
	uint64_t TP;			/* weight of a turn not yet in the layer's graph */
	uint32_t hop_limit;
	uint32_t *hops;			/* [S] switch-to-switch hops of a joined switch */
	uint32_t S;
	uint32_t *par;			/* [S] escape tree: arc to the parent (RT_NONE: root) */
	uint32_t *comp, *compsize;	/* component of a switch, and its size */
	uint8_t *tree_arc;		/* [narcs] on the escape tree (either direction) */
	uint32_t *nxt, *depth, *order, *scratch, *queue;
	uint64_t *cost;
	uint8_t *settled;
	struct hent *heap;
	size_t nheap, heapcap;
	uint32_t *added;		/* [2 * S] turns committed for the current destination */
	uint32_t nadded;
	struct rt_cdg layer[ROUTE_MAX_VLS];
	bool layer_ok[ROUTE_MAX_VLS];
};

static int heap_push(struct nue *n, uint64_t cost, uint32_t node, uint32_t arc)
{
	size_t i;

	if (n->nheap == n->heapcap) {
		size_t ncap = n->heapcap ? n->heapcap * 2 : 1024;
		struct hent *nh = realloc(n->heap, ncap * sizeof(*nh));

		if (!nh)
			return -ENOMEM;
		n->heap = nh;
		n->heapcap = ncap;
	}
	i = n->nheap++;
	while (i > 0) {
		size_t p = (i - 1) / 2;

		if (n->heap[p].cost <= cost)
			break;
		n->heap[i] = n->heap[p];
		i = p;
	}
	n->heap[i] = (struct hent){ cost, node, arc };
	return 0;
}

static struct hent heap_pop(struct nue *n)
{
	struct hent top = n->heap[0], x = n->heap[--n->nheap];
	size_t i = 0;

	for (;;) {
		size_t l = 2 * i + 1, m;

		if (l >= n->nheap)
			break;
		m = (l + 1 < n->nheap && n->heap[l + 1].cost < n->heap[l].cost) ? l + 1 : l;
		if (n->heap[m].cost >= x.cost)
			break;
		n->heap[i] = n->heap[m];
		i = m;
	}
	if (n->nheap)
		n->heap[i] = x;
	return top;
}

static void nue_free(struct nue *n)
{
	free(n->par);
	free(n->comp);
	free(n->compsize);
	free(n->tree_arc);
	free(n->nxt);
	free(n->depth);
	free(n->order);
	free(n->scratch);
	free(n->queue);
	free(n->cost);
	free(n->settled);
	free(n->heap);
	free(n->added);
	free(n->hops);
	for (unsigned int i = 0; i < ROUTE_MAX_VLS; i++)
		if (n->layer_ok[i])
			rt_cdg_free(&n->layer[i]);
}

/*
 * Escape trees by weight: the heaviest cables first (Prim, from the up/down
 * root of each component), so that the links routes need most keep every
 * turn
 */
static void escape_tree_w(struct nue *n, const struct rt_updn *u, const uint32_t *w)
{
	const struct rt_graph *g = n->g;
	uint32_t ncomp = 0;
	uint64_t *best = n->cost;	/* [S] heaviest arc into the tree + 1, 0: none */
	uint32_t *via = n->nxt;

	for (uint32_t s = 0; s < n->S; s++) {
		n->comp[s] = RT_NONE;
		n->par[s] = RT_NONE;
	}
	for (uint32_t i = 0; i < n->S; i++) {
		uint32_t root = u->bylevel[i], cnt = 0, v = root;

		if (n->comp[root] != RT_NONE)
			continue;
		for (uint32_t s = 0; s < n->S; s++)
			best[s] = 0;
		while (v != RT_NONE) {
			n->comp[v] = ncomp;
			cnt++;
			for (uint32_t a = g->off[v]; a < g->off[v + 1]; a++) {
				uint32_t t = g->to[a];
				uint64_t x = (uint64_t)w[a] + w[g->rev[a]] + 1;

				if (n->comp[t] == RT_NONE && x > best[t]) {
					best[t] = x;
					via[t] = a;
				}
			}
			v = RT_NONE;
			for (uint32_t s = 0; s < n->S; s++)
				if (n->comp[s] == RT_NONE && best[s] &&
				    (v == RT_NONE || best[s] > best[v]))
					v = s;
			if (v != RT_NONE) {
				n->par[v] = g->rev[via[v]];
				n->tree_arc[via[v]] = n->tree_arc[g->rev[via[v]]] = 1;
			}
		}
		n->compsize[ncomp++] = cnt;
	}
}

/* Escape trees: BFS from the up/down root of each component */
static void escape_tree(struct nue *n, const struct rt_updn *u)
{
	const struct rt_graph *g = n->g;
	uint32_t ncomp = 0;

	for (uint32_t s = 0; s < n->S; s++) {
		n->comp[s] = RT_NONE;
		n->par[s] = RT_NONE;
	}
	for (uint32_t i = 0; i < n->S; i++) {
		/* bylevel starts each component with its root */
		uint32_t root = u->bylevel[i], head = 0, tail = 0;

		if (n->comp[root] != RT_NONE)
			continue;
		n->comp[root] = ncomp;
		n->queue[tail++] = root;
		while (head < tail) {
			uint32_t s = n->queue[head++];

			for (uint32_t a = g->off[s]; a < g->off[s + 1]; a++) {
				uint32_t t = g->to[a];

				if (n->comp[t] != RT_NONE)
					continue;
				n->comp[t] = ncomp;
				n->par[t] = g->rev[a];
				n->tree_arc[a] = n->tree_arc[g->rev[a]] = 1;
				n->queue[tail++] = t;
			}
		}
		n->compsize[ncomp++] = tail;
	}
}

/* Every layer starts with the turns of all escape-tree paths */
static int escape_turns(struct nue *n, struct rt_cdg *c)
{
	const struct rt_graph *g = n->g;

	for (uint32_t v = 0; v < n->S; v++)
		for (uint32_t i = g->off[v]; i < g->off[v + 1]; i++) {
			if (!n->tree_arc[i])
				continue;
			for (uint32_t j = g->off[v]; j < g->off[v + 1]; j++) {
				if (j == i || !n->tree_arc[j] || g->to[j] == g->to[i])
					continue;
				/* in over the cable of arc i, out over arc j */
				if (rt_cdg_add(c, g->rev[i], j) < 0)
					return -ELOOP;
			}
		}
	return 0;
}

/* The escape-tree routes toward d: BFS over tree arcs from d's switch */
static void escape_route(struct nue *n, const struct rt_dest *d)
{
	const struct rt_graph *g = n->g;
	uint32_t head = 0, tail = 0;

	for (uint32_t s = 0; s < n->S; s++) {
		n->nxt[s] = RT_NONE;
		n->settled[s] = 0;
	}
	n->settled[d->sw] = 1;
	n->queue[tail++] = d->sw;
	while (head < tail) {
		uint32_t v = n->queue[head++];

		for (uint32_t b = g->off[v]; b < g->off[v + 1]; b++) {
			uint32_t u = g->to[b];

			if (!n->tree_arc[b] || n->settled[u])
				continue;
			n->settled[u] = 1;
			n->nxt[u] = g->rev[b];
			n->queue[tail++] = u;
		}
	}
}

static void rollback(struct nue *n, struct rt_cdg *c)
{
	for (uint32_t k = 0; k < n->nadded; k++)
		rt_cdg_put(c, n->added[2 * k], n->added[2 * k + 1]);
	n->nadded = 0;
}

/* Whether switch u may join through arc a (u -> v, v settled) */
static bool joinable(struct nue *n, struct rt_cdg *c, const struct rt_dest *d, uint32_t a)
{
	uint32_t v = n->g->to[a];

	if (v == d->sw)
		return true;
	return n->hops[v] < n->hop_limit && rt_cdg_can_add(c, a, n->nxt[v]);
}

/*
 * An arc the port's other LIDs take (LMC > 0) weighs as much again per
 * such LID, plus one: an equal way elsewhere wins, a much longer one not.
 */
static uint64_t sib_pen(const struct nue *n, const uint64_t *W, uint32_t a)
{
	uint32_t k = rt_sib(n->g, a);

	return k ? k * (n->H + W[a] + 1) : 0;
}

/*
 * Grow d's tree in layer c. 0: every switch of d's component joined (the
 * turns stay in c); 1: some could not (nothing stays); -ENOMEM.
 */
static int grow(struct nue *n, struct rt_cdg *c, const struct rt_dest *d)
{
	const struct rt_graph *g = n->g;
	const uint64_t *W = rt_wsel(n->l, d);
	uint32_t joined = 1;

	for (uint32_t s = 0; s < n->S; s++) {
		n->nxt[s] = RT_NONE;
		n->settled[s] = 0;
		n->cost[s] = UINT64_MAX;
	}
	n->nadded = 0;
	n->nheap = 0;
	n->settled[d->sw] = 1;
	n->cost[d->sw] = 0;
	n->hops[d->sw] = 0;
	for (uint32_t b = g->off[d->sw]; b < g->off[d->sw + 1]; b++) {
		uint32_t a = g->rev[b];

		if (heap_push(n, n->H + W[a] + sib_pen(n, W, a), g->to[b], a) < 0)
			return -ENOMEM;
	}
	while (n->nheap) {
		struct hent e = heap_pop(n);
		uint32_t u = e.node, v;

		if (n->settled[u])
			continue;
		if (!joinable(n, c, d, e.arc)) {
			/* The best other way in now, if any; it comes back through the heap */
			uint32_t best = RT_NONE;
			uint64_t bc = UINT64_MAX;

			for (uint32_t a = g->off[u]; a < g->off[u + 1]; a++) {
				uint32_t x = g->to[a];
				uint64_t cc;

				if (a == e.arc || !n->settled[x])
					continue;
				cc = n->cost[x] + n->H + W[a] + sib_pen(n, W, a) +
				     (x != d->sw && !c->cnt[rt_turn(g, a, n->nxt[x])] ? n->TP : 0);
				if (cc < bc && joinable(n, c, d, a)) {
					best = a;
					bc = cc;
				}
			}
			if (best != RT_NONE && heap_push(n, bc, u, best) < 0)
				return -ENOMEM;
			continue;
		}
		v = g->to[e.arc];
		if (v != d->sw) {
			if (rt_cdg_add(c, e.arc, n->nxt[v]) < 0)
				continue;	/* cannot happen: just checked */
			n->added[2 * n->nadded] = e.arc;
			n->added[2 * n->nadded + 1] = n->nxt[v];
			n->nadded++;
		}
		n->nxt[u] = e.arc;
		n->cost[u] = e.cost;
		n->hops[u] = n->hops[v] + 1;
		n->settled[u] = 1;
		joined++;
		for (uint32_t b = g->off[u]; b < g->off[u + 1]; b++) {
			uint32_t x = g->to[b], a = g->rev[b];

			if (n->settled[x])
				continue;
			if (heap_push(n, e.cost + n->H + W[a] + sib_pen(n, W, a) +
				      (u != d->sw && !c->cnt[rt_turn(g, a, e.arc)] ? n->TP : 0), x, a) < 0)
				return -ENOMEM;
		}
	}
	if (joined == n->compsize[n->comp[d->sw]])
		return 0;
	rollback(n, c);
	return 1;
}

int rt_nue_route(const struct rt_graph *g, struct rt_loads *l, uint64_t H, uint32_t hop_limit,
		 unsigned int V, unsigned int passes, bool shuffle, uint64_t work_limit,
		 const uint32_t *tree_w, unsigned int turn_weight, uint8_t *sl_dest,
		 unsigned int *used, unsigned int *escaped)
{
	struct nue n;
	struct rt_updn u;
	uint32_t S = g->nsw, *layer_of = NULL, *perm = NULL;
	uint8_t *escaped_dest = NULL;
	uint64_t rnd = UINT64_C(88172645463325252);
	int r;

	*used = 1;
	*escaped = 0;
	if (V < 1)
		V = 1;
	if (V > ROUTE_MAX_VLS)
		V = ROUTE_MAX_VLS;
	memset(&n, 0, sizeof(n));
	n.g = g;
	n.S = S;
	n.l = l;
	n.H = H;
	n.TP = turn_weight * (H + 1);
	n.hop_limit = hop_limit ? hop_limit : UINT32_MAX;
	r = rt_updn_init(g, &u);
	if (r < 0)
		return r;
	r = -ENOMEM;
	n.par = malloc((S + 1) * sizeof(*n.par));
	n.comp = malloc((S + 1) * sizeof(*n.comp));
	n.compsize = calloc(S + 1, sizeof(*n.compsize));
	n.tree_arc = calloc(g->narcs + 1, 1);
	n.nxt = malloc((S + 1) * sizeof(*n.nxt));
	n.depth = malloc((S + 1) * sizeof(*n.depth));
	n.order = malloc((S + 1) * sizeof(*n.order));
	n.scratch = malloc((S + 1) * sizeof(*n.scratch));
	n.queue = malloc((S + 1) * sizeof(*n.queue));
	n.cost = malloc((S + 1) * sizeof(*n.cost));
	n.settled = malloc(S + 1);
	n.hops = malloc((S + 1) * sizeof(*n.hops));
	n.added = malloc((2 * S + 2) * sizeof(*n.added));
	layer_of = malloc((S + 1) * sizeof(*layer_of));
	escaped_dest = calloc(g->ndest + 1, 1);
	perm = malloc((g->ndest + 1) * sizeof(*perm));
	if (!escaped_dest || !perm || !n.par || !n.comp || !n.compsize || !n.tree_arc || !n.nxt ||
	    !n.depth || !n.order || !n.scratch || !n.queue || !n.cost || !n.settled || !n.hops ||
	    !n.added || !layer_of)
		goto out;
	if (tree_w)
		escape_tree_w(&n, &u, tree_w);
	else
		escape_tree(&n, &u);
	for (unsigned int L = 0; L < V; L++) {
		r = rt_cdg_init(&n.layer[L], g);
		if (r < 0)
			goto out;
		n.layer_ok[L] = true;
		r = escape_turns(&n, &n.layer[L]);
		if (r < 0)
			goto out;
	}
	/* Layers by runs of the up/down order (BFS from the root, component by component) */
	for (uint32_t i = 0; i < S; i++)
		layer_of[u.bylevel[i]] = (uint32_t)(((uint64_t)i * V) / (S ? S : 1));
	/* The order: g's (host LIDs first, by switch), or a fixed pseudo-random one */
	for (uint32_t i = 0; i < g->ndest; i++)
		perm[i] = i;
	for (uint32_t i = g->ndest; shuffle && i > 1; i--) {
		uint32_t j, t;

		rnd ^= rnd << 13;
		rnd ^= rnd >> 7;
		rnd ^= rnd << 17;
		j = (uint32_t)(rnd % i);
		t = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	for (unsigned int p = 0; p < passes; p++)
		for (uint32_t q = 0; q < g->ndest; q++) {
			uint32_t i = perm[q];
			const struct rt_dest *d = &g->dest[i];
			uint32_t L0 = layer_of[d->sw], L = L0;
			bool done = false;

			if (p > 0) {
				/* Rip up: its routes, and the turns it added */
				rt_tree_read(g, d, n.nxt);
				rt_loads_tree(l, g, d, n.nxt, n.depth, n.order, n.scratch, -1);
				if (!escaped_dest[i])
					for (uint32_t x = 0; x < S; x++) {
						uint32_t a = n.nxt[x];

						if (a != RT_NONE && g->to[a] != d->sw)
							rt_cdg_put(&n.layer[sl_dest[d->lid]], a,
								   n.nxt[g->to[a]]);
					}
				if (escaped_dest[i])
					(*escaped)--;
				L0 = L = sl_dest[d->lid];
			}
			/* Every layer within the hop limit, then every layer without it */
			rt_sib_mark(g, d);
			for (unsigned int k = 0; k < 2 * V && !done; k++) {
				L = (L0 + k) % V;
				n.hop_limit = k < V && hop_limit ? hop_limit : UINT32_MAX;
				r = grow(&n, &n.layer[L], d);
				if (r < 0)
					break;
				done = r == 0;
			}
			rt_sib_clear(g);
			if (r < 0)
				goto out;
			escaped_dest[i] = !done;
			if (!done) {
				L = L0;
				escape_route(&n, d);
				(*escaped)++;
			}
			sl_dest[d->lid] = (uint8_t)L;
			rt_tree_write(g, d, n.nxt);
			rt_loads_tree(l, g, d, n.nxt, n.depth, n.order, n.scratch, 1);
			if (work_limit) {
				uint64_t w = 0;

				for (unsigned int k = 0; k < V; k++)
					w += n.layer[k].work;
				if (w > work_limit) {
					r = 1;
					goto out;
				}
			}
		}
	for (uint32_t i = 0; i < g->ndest; i++)
		if (sl_dest[g->dest[i].lid] + 1u > *used)
			*used = sl_dest[g->dest[i].lid] + 1u;
	r = 0;
out:
	free(layer_of);
	free(escaped_dest);
	free(perm);
	nue_free(&n);
	rt_updn_free(&u);
	return r;
}
