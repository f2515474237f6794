// SPDX-License-Identifier: MIT
/*
 * The switch graph the engines work on (arcs, turns, destinations) and
 * destination trees: reading and writing them in the LFTs, ordering them,
 * adding their routes to the link loads.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/route_int.h"

static bool sw_link(const struct fab_port *p)
{
	return fabric_port_linked(p) && p->peer->node->type == NODE_TYPE_SWITCH &&
	       p->peer->node != p->node;
}

/* CA destinations first, those of one switch together; then the switches */
static int cmp_dest(const void *x, const void *y)
{
	const struct rt_dest *a = x, *b = y;

	if (a->ca != b->ca)
		return a->ca ? -1 : 1;
	if (a->sw != b->sw)
		return a->sw < b->sw ? -1 : 1;
	return a->lid < b->lid ? -1 : a->lid > b->lid;
}

void rt_graph_free(struct rt_graph *g)
{
	free(g->off);
	free(g->to);
	free(g->from);
	free(g->rev);
	free(g->port);
	free(g->pbase);
	free(g->parc);
	free(g->nports);
	free(g->nsrc);
	free(g->tbase);
	free(g->dest);
	free(g->lt);
	if (g->sibs) {
		free(g->sibs->cnt);
		free(g->sibs->arcs);
		free(g->sibs->entered);
		free(g->sibs->hosts);
		free(g->sibs);
	}
	memset(g, 0, sizeof(*g));
}

void rt_sib_mark(const struct rt_graph *g, const struct rt_dest *d)
{
	const struct fab_port *ep = d->lid < g->lidlen ? g->f->by_lid[d->lid] : NULL;
	struct rt_sibs *sb = g->sibs;
	uint32_t n;

	if (!sb)
		return;
	sb->on = false;
	if (!ep || !ep->lmc)
		return;
	n = 1u << ep->lmc;
	for (uint32_t k = 0; k < n; k++) {
		uint32_t lid = (uint32_t)ep->lid + k;

		if (lid == d->lid || lid >= g->lidlen)
			continue;
		/* The switches this LID's paths pass: hosts' and the next hops' */
		memcpy(sb->entered, sb->hosts, g->nsw);
		for (uint32_t pass = 0; pass < 2; pass++) {
			for (uint32_t s = 0; s < g->nsw; s++) {
				const struct fab_node *sw = g->f->switches[s];
				uint8_t p = g->lt ? g->lt[(size_t)lid * g->nsw + s] :
					    lid < sw->lft_len ? sw->lft[lid] : LFT_PORT_NONE;
				uint32_t a;

				if (s == d->sw || p < 1 || p > g->nports[s])
					continue;
				a = g->parc[g->pbase[s] + p];
				if (a == RT_NONE)
					continue;
				if (!pass) {
					sb->entered[g->to[a]] = 1;
					continue;
				}
				if (!sb->cnt[a])
					sb->arcs[sb->n++] = a;
				sb->cnt[a] = (uint16_t)(sb->cnt[a] + 1 +
							(sb->entered[s] ? 256 : 0));
			}
		}
	}
	sb->on = sb->n > 0;
}

void rt_sib_clear(const struct rt_graph *g)
{
	struct rt_sibs *sb = g->sibs;

	if (!sb)
		return;
	for (uint32_t i = 0; i < sb->n; i++)
		sb->cnt[sb->arcs[i]] = 0;
	sb->n = 0;
	sb->on = false;
}

/* LIDs per transposed block: 64 rows of a few thousand switches stay in L2 */
#define LT_BLOCK	64

void rt_lt_from_fabric(const struct fabric *f, uint8_t *lt, uint32_t lidlen)
{
	size_t S = f->nswitches;

	for (uint32_t lo = 0; lo < lidlen; lo += LT_BLOCK) {
		uint32_t hi = lo + LT_BLOCK < lidlen ? lo + LT_BLOCK : lidlen;

		for (size_t s = 0; s < S; s++) {
			const struct fab_node *sw = f->switches[s];

			for (uint32_t lid = lo; lid < hi; lid++)
				lt[(size_t)lid * S + s] = lid < sw->lft_len ? sw->lft[lid] :
							  LFT_PORT_NONE;
		}
	}
}

void rt_lt_to_fabric(struct fabric *f, const uint8_t *lt, uint32_t lidlen)
{
	size_t S = f->nswitches;

	for (uint32_t lo = 0; lo < lidlen; lo += LT_BLOCK) {
		uint32_t hi = lo + LT_BLOCK < lidlen ? lo + LT_BLOCK : lidlen;

		for (size_t s = 0; s < S; s++) {
			struct fab_node *sw = f->switches[s];
			uint32_t top = hi < sw->lft_len ? hi : sw->lft_len;

			for (uint32_t lid = lo; lid < top; lid++)
				sw->lft[lid] = lt[(size_t)lid * S + s];
		}
	}
}

int rt_lt_init(struct rt_graph *g, bool load)
{
	size_t len = (size_t)g->lidlen * g->nsw;

	if (!g->lt) {
		g->lt = malloc(len ? len : 1);
		if (!g->lt)
			return -ENOMEM;
	}
	if (load)
		rt_lt_from_fabric(g->f, g->lt, g->lidlen);
	else
		memset(g->lt, LFT_PORT_NONE, len);
	return 0;
}

void rt_lt_flush(const struct rt_graph *g)
{
	if (g->lt)
		rt_lt_to_fabric(g->f, g->lt, g->lidlen);
}

int rt_graph_build(struct fabric *f, struct rt_graph *g)
{
	uint32_t S = (uint32_t)f->nswitches, na = 0, np = 0;

	memset(g, 0, sizeof(*g));
	g->f = f;
	g->nsw = S;
	g->lidlen = (uint32_t)f->max_lid + 1;
	for (uint32_t s = 0; s < S; s++) {
		struct fab_node *sw = f->switches[s];

		np += sw->num_ports + 1u;
		for (unsigned int p = 1; p <= sw->num_ports; p++)
			na += sw_link(&sw->ports[p]);
	}
	g->narcs = na;
	g->off = calloc(S + 1, sizeof(*g->off));
	g->to = malloc((na ? na : 1) * sizeof(*g->to));
	g->from = malloc((na ? na : 1) * sizeof(*g->from));
	g->rev = malloc((na ? na : 1) * sizeof(*g->rev));
	g->port = malloc(na ? na : 1);
	g->pbase = malloc((S ? S : 1) * sizeof(*g->pbase));
	g->parc = malloc((np ? np : 1) * sizeof(*g->parc));
	g->nports = malloc(S ? S : 1);
	g->nsrc = calloc(S ? S : 1, sizeof(*g->nsrc));
	g->tbase = malloc((S ? S : 1) * sizeof(*g->tbase));
	g->dest = malloc(((size_t)f->max_lid + 1) * sizeof(*g->dest));
	if (!g->off || !g->to || !g->from || !g->rev || !g->port || !g->pbase || !g->parc ||
	    !g->nports ||
	    !g->nsrc || !g->tbase || !g->dest) {
		rt_graph_free(g);
		return -ENOMEM;
	}
	na = np = 0;
	for (uint32_t s = 0; s < S; s++) {
		struct fab_node *sw = f->switches[s];

		g->off[s] = na;
		g->pbase[s] = np;
		g->nports[s] = sw->num_ports;
		g->parc[np++] = RT_NONE;
		for (unsigned int p = 1; p <= sw->num_ports; p++) {
			struct fab_port *pp = &sw->ports[p];

			if (!sw_link(pp)) {
				g->parc[np++] = RT_NONE;
				continue;
			}
			g->parc[np++] = na;
			g->from[na] = s;
			g->to[na] = pp->peer->node->sw_idx;
			g->port[na] = (uint8_t)p;
			na++;
		}
	}
	g->off[S] = na;
	for (uint32_t a = 0; a < na; a++) {
		const struct fab_port *pp = &f->switches[g->from[a]]->ports[g->port[a]];

		g->rev[a] = g->parc[g->pbase[g->to[a]] + pp->peer->num];
		/* Every engine takes cables as two arcs: a one-way one is a broken model */
		if (g->rev[a] == RT_NONE) {
			rt_graph_free(g);
			return -EPROTO;
		}
	}
	g->nturns = 0;
	for (uint32_t s = 0; s < S; s++) {
		g->tbase[s] = g->nturns;
		g->nturns += (size_t)rt_deg(g, s) * rt_deg(g, s);
	}
	/* Sources: CA and router ports with a LID, cabled to a switch */
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		if (n->type == NODE_TYPE_SWITCH)
			continue;
		for (unsigned int p = 1; p <= n->num_ports; p++) {
			struct fab_port *pp = &n->ports[p];

			if (pp->lid && fabric_port_linked(pp) &&
			    pp->peer->node->type == NODE_TYPE_SWITCH)
				g->nsrc[pp->peer->node->sw_idx]++;
		}
	}
	for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
		struct fab_port *ep = f->by_lid[lid];
		struct fab_node *sw;
		uint8_t port;

		if (!ep)
			continue;
		sw = route_attach_switch(ep, &port);
		if (!sw) {
			g->unattached++;
			continue;
		}
		g->dest[g->ndest].lid = (uint16_t)lid;
		g->dest[g->ndest].port = port;
		g->dest[g->ndest].sw = sw->sw_idx;
		g->dest[g->ndest].ca = ep->node->type != NODE_TYPE_SWITCH;
		g->ndest++;
	}
	qsort(g->dest, g->ndest, sizeof(*g->dest), cmp_dest);
	/* Ports with several LIDs: their routes are spread (rt_sib_mark) */
	for (uint32_t i = 0; i < g->ndest; i++) {
		const struct fab_port *ep = f->by_lid[g->dest[i].lid];

		if (ep->lmc && ep->lid != g->dest[i].lid) {
			g->sibs = calloc(1, sizeof(*g->sibs));
			if (g->sibs) {
				g->sibs->cnt = calloc(na ? na : 1, sizeof(*g->sibs->cnt));
				/* Every arc at most once: at most narcs entries */
				g->sibs->arcs = malloc((na ? na : 1) * sizeof(*g->sibs->arcs));
				g->sibs->entered = malloc(g->nsw ? g->nsw : 1);
				g->sibs->hosts = calloc(g->nsw ? g->nsw : 1, 1);
			}
			if (!g->sibs || !g->sibs->cnt || !g->sibs->arcs || !g->sibs->entered ||
			    !g->sibs->hosts) {
				rt_graph_free(g);
				return -ENOMEM;
			}
			for (uint32_t s = 0; s < g->nsw; s++) {
				const struct fab_node *sw = f->switches[s];

				for (unsigned int p = 1; p <= sw->num_ports; p++)
					if (sw->ports[p].peer &&
					    sw->ports[p].peer->node->type != NODE_TYPE_SWITCH)
						g->sibs->hosts[s] = 1;
			}
			break;
		}
	}
	return 0;
}

uint32_t rt_bfs(const struct rt_graph *g, uint32_t root, uint32_t *dist, uint32_t *order)
{
	uint32_t head = 0, tail = 0;

	for (uint32_t s = 0; s < g->nsw; s++)
		dist[s] = RT_INF;
	dist[root] = 0;
	order[tail++] = root;
	while (head < tail) {
		uint32_t s = order[head++];

		for (uint32_t a = g->off[s]; a < g->off[s + 1]; a++) {
			uint32_t t = g->to[a];

			if (dist[t] == RT_INF) {
				dist[t] = dist[s] + 1;
				order[tail++] = t;
			}
		}
	}
	return tail;
}

int rt_dag_init(struct rt_dag *dag, const struct rt_graph *g)
{
	uint32_t S = g->nsw;

	memset(dag, 0, sizeof(*dag));
	dag->root = RT_NONE;
	dag->order = malloc((S + 1) * sizeof(*dag->order));
	dag->off = malloc((S + 2) * sizeof(*dag->off));
	dag->arcs = malloc((g->narcs + 1) * sizeof(*dag->arcs));
	dag->to = malloc((g->narcs + 1) * sizeof(*dag->to));
	dag->hops = malloc((S + 1) * sizeof(*dag->hops));
	if (!dag->order || !dag->off || !dag->arcs || !dag->to || !dag->hops) {
		rt_dag_free(dag);
		return -ENOMEM;
	}
	return 0;
}

void rt_dag_free(struct rt_dag *dag)
{
	free(dag->order);
	free(dag->off);
	free(dag->arcs);
	free(dag->to);
	free(dag->hops);
	memset(dag, 0, sizeof(*dag));
	dag->root = RT_NONE;
}

void rt_dag_minimal(struct rt_dag *dag, const struct rt_graph *g, uint32_t root)
{
	uint32_t k = 0;

	if (dag->root == root)
		return;
	dag->root = root;
	dag->n = rt_bfs(g, root, dag->hops, dag->order);
	for (uint32_t i = 0; i < dag->n; i++) {
		uint32_t s = dag->order[i];

		dag->off[i] = k;
		for (uint32_t a = g->off[s]; a < g->off[s + 1]; a++)
			if (dag->hops[g->to[a]] + 1 == dag->hops[s]) {
				dag->to[k] = g->to[a];
				dag->arcs[k++] = a;
			}
	}
	dag->off[dag->n] = k;
}

/*
 * The least cost[to] + W over the DAG's arcs [lo, hi), ties to the lighter
 * arc, then to the first: the inner loop of every tree (most of routing's
 * time on big fabrics), so without the turn-around of the rotated start
 */
static inline void dag_min(const struct rt_dag *dag, const uint64_t *cost, const uint64_t *W,
			   uint32_t lo, uint32_t hi, uint32_t *best, uint64_t *bc, uint64_t *bw)
{
	uint32_t b = *best;
	uint64_t c0 = *bc, w0 = *bw;

	for (uint32_t k = lo; k < hi; k++) {
		uint32_t a = dag->arcs[k];
		uint64_t w = W[a], c = cost[dag->to[k]] + w;

		if (c < c0 || (c == c0 && w < w0)) {
			b = a;
			c0 = c;
			w0 = w;
		}
	}
	*best = b;
	*bc = c0;
	*bw = w0;
}

/* The same with the spreading term of a switch destination's own flow */
static inline void dag_min_spread(const struct rt_dag *dag, const uint64_t *cost,
				  const uint64_t *W, const uint64_t *flow,
				  const struct rt_loads *l, const struct rt_dest *d, uint32_t lo,
				  uint32_t hi, uint32_t *best, uint64_t *bc, uint64_t *bw)
{
	for (uint32_t k = lo; k < hi; k++) {
		uint32_t a = dag->arcs[k], t = dag->to[k];
		uint64_t w = W[a], c = cost[t] + w + RT_SPREAD * rt_wflow(l, d, flow[t]);

		if (*best == RT_NONE || c < *bc || (c == *bc && w < *bw)) {
			*best = a;
			*bc = c;
			*bw = w;
		}
	}
}

void rt_dag_tree(const struct rt_dag *dag, const struct rt_graph *g, const struct rt_dest *d,
		 struct rt_loads *l, bool account, uint32_t rot, uint64_t *cost, uint64_t *flow,
		 uint32_t *nxt)
{
	const uint64_t *W = rt_wsel(l, d);
	const uint16_t *sib = g->sibs && g->sibs->on ? g->sibs->cnt : NULL;
	bool spread = rt_spread(d);

	for (uint32_t s = 0; s < g->nsw; s++)
		nxt[s] = RT_NONE;
	cost[dag->root] = 0;
	/*
	 * Without spreading, the next hop is the arc that gives the cost (the
	 * first of equal ones from rot on, then the lighter): chosen in the same
	 * pass, which halves the work of host destinations
	 */
	for (uint32_t i = 1, pn = 0, pk = 0; i < dag->n; i++) {
		uint32_t lo = dag->off[i], n = dag->off[i + 1] - lo, k;
		uint32_t best = RT_NONE, bs = 0;
		uint64_t bc = UINT64_MAX, bw = 0;

		/* Switches of a level mostly have as many arcs: one division each run */
		if (n != pn) {
			pn = n;
			pk = n ? rot % n : 0;
		}
		k = pk;

		if (!sib && n) {
			uint32_t a = dag->arcs[lo + k];

			/* From rot on, round to the start: the first of equals wins */
			best = a;
			bw = W[a];
			bc = cost[dag->to[lo + k]] + bw;
			dag_min(dag, cost, W, lo + k + 1, lo + n, &best, &bc, &bw);
			dag_min(dag, cost, W, lo, lo + k, &best, &bc, &bw);
		}
		/* An arc the port's other LIDs take loses to any other (LMC > 0) */
		for (uint32_t j = 0; sib && j < n; j++, k = k + 1 == n ? 0 : k + 1) {
			uint32_t a = dag->arcs[lo + k], sb = sib[a];
			uint64_t c = cost[dag->to[lo + k]] + W[a];

			if (best == RT_NONE || sb < bs ||
			    (sb == bs && (c < bc || (c == bc && W[a] < bw)))) {
				best = a;
				bs = sb;
				bc = c;
				bw = W[a];
			}
		}
		cost[dag->order[i]] = bc;
		if (!spread)
			nxt[dag->order[i]] = best;
	}
	for (uint32_t i = 0; i < dag->n; i++)
		flow[dag->order[i]] = g->nsrc[dag->order[i]];
	for (uint32_t i = dag->n; i-- > 1;) {
		uint32_t s = dag->order[i], lo = dag->off[i], n = dag->off[i + 1] - lo;
		uint32_t best = nxt[s];
		uint64_t bc = 0, bw = 0;

		if (spread) {
			uint32_t k = n ? rot % n : 0;

			dag_min_spread(dag, cost, W, flow, l, d, lo + k, lo + n, &best, &bc, &bw);
			dag_min_spread(dag, cost, W, flow, l, d, lo, lo + k, &best, &bc, &bw);
		}
		nxt[s] = best;
		if (best == RT_NONE)
			continue;
		flow[g->to[best]] += flow[s];
		if (account && flow[s])
			rt_loads_arc(l, d, best, (int64_t)flow[s]);
	}
}

void rt_tree_read(const struct rt_graph *g, const struct rt_dest *d, uint32_t *nxt)
{
	if (g->lt) {
		const uint8_t *row = g->lt + (size_t)d->lid * g->nsw;

		for (uint32_t s = 0; s < g->nsw; s++) {
			uint8_t p = row[s];

			nxt[s] = RT_NONE;
			if (s != d->sw && p >= 1 && p <= g->nports[s])
				nxt[s] = g->parc[g->pbase[s] + p];
		}
		return;
	}
	for (uint32_t s = 0; s < g->nsw; s++) {
		const struct fab_node *sw = g->f->switches[s];
		uint8_t p = d->lid < sw->lft_len ? sw->lft[d->lid] : LFT_PORT_NONE;

		nxt[s] = RT_NONE;
		if (s != d->sw && p >= 1 && p <= sw->num_ports)
			nxt[s] = g->parc[g->pbase[s] + p];
	}
}

void rt_tree_write(const struct rt_graph *g, const struct rt_dest *d, const uint32_t *nxt)
{
	if (g->lt) {
		uint8_t *row = g->lt + (size_t)d->lid * g->nsw;

		for (uint32_t s = 0; s < g->nsw; s++)
			row[s] = s == d->sw ? d->port : nxt[s] != RT_NONE ? g->port[nxt[s]] :
				 LFT_PORT_NONE;
		return;
	}
	for (uint32_t s = 0; s < g->nsw; s++) {
		struct fab_node *sw = g->f->switches[s];

		if (s == d->sw)
			sw->lft[d->lid] = d->port;
		else if (nxt[s] != RT_NONE)
			sw->lft[d->lid] = g->port[nxt[s]];
		else
			sw->lft[d->lid] = LFT_PORT_NONE;
	}
}

#define DEPTH_UNKNOWN	(RT_INF - 1)
#define DEPTH_WALKING	(RT_INF - 2)

uint32_t rt_tree_order(const struct rt_graph *g, const struct rt_dest *d, const uint32_t *nxt,
		       uint32_t *depth, uint32_t *order, uint32_t *scratch)
{
	uint32_t S = g->nsw, maxd = 0, n = 0;

	for (uint32_t s = 0; s < S; s++)
		depth[s] = DEPTH_UNKNOWN;
	depth[d->sw] = 0;
	for (uint32_t s = 0; s < S; s++) {
		uint32_t k = 0, cur = s, base;

		while (depth[cur] == DEPTH_UNKNOWN) {
			depth[cur] = DEPTH_WALKING;
			scratch[k++] = cur;
			if (nxt[cur] == RT_NONE)
				break;
			cur = g->to[nxt[cur]];
		}
		base = depth[cur] < DEPTH_WALKING ? depth[cur] : RT_INF;
		for (uint32_t i = k; i-- > 0;) {
			if (base == RT_INF) {
				depth[scratch[i]] = RT_INF;
			} else {
				depth[scratch[i]] = base + (k - i);
				if (depth[scratch[i]] > maxd)
					maxd = depth[scratch[i]];
			}
		}
	}
	/* Counting sort, deepest first; maxd < S so scratch has room for the counts */
	memset(scratch, 0, (size_t)(maxd + 1) * sizeof(*scratch));
	for (uint32_t s = 0; s < S; s++)
		if (depth[s] != RT_INF)
			scratch[maxd - depth[s]]++;
	for (uint32_t i = 0, sum = 0; i <= maxd; i++) {
		uint32_t c = scratch[i];

		scratch[i] = sum;
		sum += c;
	}
	for (uint32_t s = 0; s < S; s++)
		if (depth[s] != RT_INF) {
			order[scratch[maxd - depth[s]]++] = s;
			n++;
		}
	return n;
}

void rt_tree_load(const struct rt_graph *g, const uint32_t *nxt, const uint32_t *order,
		  uint32_t n, uint32_t *acc, uint32_t *load, int sign)
{
	for (uint32_t i = 0; i < n; i++)
		acc[order[i]] = g->nsrc[order[i]];
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = order[i], a = nxt[s];

		if (a == RT_NONE || !acc[s])
			continue;
		if (sign > 0)
			load[a] += acc[s];
		else
			load[a] -= acc[s];
		acc[g->to[a]] += acc[s];
	}
}

int rt_loads_init(struct rt_loads *l, const struct rt_graph *g, uint32_t alpha)
{
	size_t n = (size_t)g->narcs + 1;

	memset(l, 0, sizeof(*l));
	l->narcs = g->narcs;
	l->alpha = alpha;
	l->load = calloc(n, sizeof(*l->load));
	l->load_ca = calloc(n, sizeof(*l->load_ca));
	l->w_ca = calloc(n, sizeof(*l->w_ca));
	l->w_sw = calloc(n, sizeof(*l->w_sw));
	if (!l->load || !l->load_ca || !l->w_ca || !l->w_sw) {
		rt_loads_free(l);
		return -ENOMEM;
	}
	return 0;
}

void rt_loads_free(struct rt_loads *l)
{
	free(l->load);
	free(l->load_ca);
	free(l->w_ca);
	free(l->w_sw);
	memset(l, 0, sizeof(*l));
}

void rt_loads_reset(struct rt_loads *l)
{
	memset(l->load, 0, l->narcs * sizeof(*l->load));
	memset(l->load_ca, 0, l->narcs * sizeof(*l->load_ca));
	memset(l->w_ca, 0, l->narcs * sizeof(*l->w_ca));
	memset(l->w_sw, 0, l->narcs * sizeof(*l->w_sw));
}

void rt_loads_copy(struct rt_loads *dst, const struct rt_loads *src)
{
	memcpy(dst->load, src->load, src->narcs * sizeof(*src->load));
	memcpy(dst->load_ca, src->load_ca, src->narcs * sizeof(*src->load_ca));
	memcpy(dst->w_ca, src->w_ca, src->narcs * sizeof(*src->w_ca));
	memcpy(dst->w_sw, src->w_sw, src->narcs * sizeof(*src->w_sw));
}

void rt_loads_tree(struct rt_loads *l, const struct rt_graph *g, const struct rt_dest *d,
		   const uint32_t *nxt, uint32_t *depth, uint32_t *order, uint32_t *scratch,
		   int sign)
{
	uint32_t n = rt_tree_order(g, d, nxt, depth, order, scratch), *acc = scratch;

	for (uint32_t i = 0; i < n; i++)
		acc[order[i]] = g->nsrc[order[i]];
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = order[i], a = nxt[s];

		if (a == RT_NONE || !acc[s])
			continue;
		rt_loads_arc(l, d, a, sign > 0 ? (int64_t)acc[s] : -(int64_t)acc[s]);
		acc[g->to[a]] += acc[s];
	}
}

void rt_load_stats(const struct rt_graph *g, const uint32_t *load, struct route_stats *st)
{
	uint64_t sum = 0;

	st->max_link_routes = 0;
	for (uint32_t a = 0; a < g->narcs; a++) {
		sum += load[a];
		if (load[a] > st->max_link_routes)
			st->max_link_routes = load[a];
	}
	st->mean_link_routes = g->narcs ? (double)sum / g->narcs : 0;
}
