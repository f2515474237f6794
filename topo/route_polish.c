// SPDX-License-Identifier: MIT
/*
 * Local search on one-VL routes: move routes off the busiest link, one
 * switch's next hop toward one LID at a time, while the channel dependency
 * graph stays acyclic.
 *
 * The engines build trees greedily, one LID after the other: balance is
 * decided early, against loads that are not there yet, and one VL leaves
 * the later LIDs fewer ways. This pass starts from their finished routes
 * and works on the busiest link only. Among the LIDs whose routes cross it
 * (those with the most routes there first), a switch whose way to the LID
 * crosses it (those with the fewest routes first: the finest step) takes
 * another next hop, one whose way on does not cross it, where the turns
 * into and out of that switch fit; its routes (those of its subtree) move
 * with it. A move is kept when it leaves fewer links at the highest load,
 * or a lower highest load, and no link above the busiest host-to-host load
 * there was at the start, else undone. The pass stops when no route can
 * leave the busiest link, or after its work budget.
 *
 * Deadlock freedom: the turns of every route are kept in one graph,
 * acyclic at every step (Pearce-Kelly, route_cdg.c), or, for up/down
 * routes given their order, only turns that order allows are taken (no
 * down arc before an up arc), so the routes still obey it and route repair
 * can go on judging detours turn by turn. route_check verifies the result
 * independently.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/route_int.h"

/*
 * Arcs one acyclicity check may visit before the turn is refused: on the
 * k=24 fat-tree less 5% of its cables, 256 left the result as it was and
 * cut the time 5-fold, 32 still changed little (measured)
 */
#define PL_SEARCH_CAP	128
/* LIDs x switches up to which the routes through each switch are kept per LID (4 bytes each) */
#define PL_FLOW_CACHE	(16u << 20)

struct polish {
	const struct rt_graph *g;
	struct rt_loads *l;
	const uint32_t *rank;		/* up/down order to obey, or NULL: the graph c */
	struct rt_cdg c;
	bool c_ok;
	uint32_t S, hop_limit;
	uint32_t *nxt, *depth, *order, *scratch, *flow;
	uint32_t *acc;			/* [S] routes through each switch, of the LID at hand */
	uint32_t *ht;			/* [S] hops of its subtree beyond it */
	uint32_t *coff, *kids;		/* [S + 2], [S]: its children in the tree */
	uint8_t *cross;			/* [S] its way crosses the busiest arc */
	uint64_t *key, *key2;		/* sort keys: LIDs, switches */
	uint32_t *onpath, stamp;	/* [narcs] stamp: on the way from the switch at hand */
	uint32_t *failed, version;	/* [nturns] version when a turn last closed a cycle */
	const uint8_t *movable;		/* [lidlen * S] entries that may change, or NULL: all */
	uint32_t *fl;			/* [ndest * S] acc of every LID, or NULL (too big) */
	uint32_t *nat;			/* [natlen] arcs at each load (a histogram) */
	uint32_t natlen;
	uint32_t nover;			/* arcs above it (a trial move's, for a moment) */
	uint32_t peak;			/* the most path_load left on an arc since reset */
	uint32_t max_ca;		/* the busiest link's host-to-host routes at the start */
	bool ca_over;			/* path_load went above it since reset */
	uint64_t work;
};

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

/* Whether the turn a -> b is one the up/down order allows: not down then up */
static bool updn_ok(const struct polish *p, uint32_t a, uint32_t b)
{
	const struct rt_graph *g = p->g;

	return !(p->rank[g->to[a]] > p->rank[g->from[a]] && p->rank[g->to[b]] < p->rank[g->to[a]]);
}

static int turn_add(struct polish *p, uint32_t a, uint32_t b)
{
	size_t t;

	if (p->rank)
		return updn_ok(p, a, b) ? 0 : -ELOOP;
	/*
	 * A turn that closed a cycle since the last move was kept closes one
	 * still: only a kept move takes turns out for good (a trial puts back
	 * what it took). Its graph then held fewer turns than the committed
	 * one, so the cache errs only toward refusing: no search again.
	 */
	t = rt_turn(p->g, a, b);
	if (p->failed[t] == p->version)
		return -ELOOP;
	if (rt_cdg_add(&p->c, a, b) == 0)
		return 0;
	p->failed[t] = p->version;
	return -ELOOP;
}

static void turn_put(struct polish *p, uint32_t a, uint32_t b)
{
	if (!p->rank)
		rt_cdg_put(&p->c, a, b);
}

/*
 * Seed the graph's order with a topological order of the turns the routes
 * use (Kahn), so that putting them in costs no search: 0, -EDEADLK when
 * they close a cycle, -ENOMEM
 */
static int topo_key(struct polish *p)
{
	const struct rt_graph *g = p->g;
	uint8_t *used = calloc(g->nturns + 1, 1);
	uint32_t *indeg = calloc((size_t)g->narcs + 1, sizeof(*indeg));
	uint32_t *queue = malloc(((size_t)g->narcs + 1) * sizeof(*queue));
	uint32_t *key = malloc(((size_t)g->narcs + 1) * sizeof(*key));
	uint32_t head = 0, tail = 0;
	int r = -ENOMEM;

	if (!used || !indeg || !queue || !key)
		goto out;
	for (uint32_t i = 0; i < g->ndest; i++) {
		const struct rt_dest *d = &g->dest[i];

		rt_tree_read(g, d, p->nxt);
		for (uint32_t s = 0; s < p->S; s++) {
			uint32_t a = p->nxt[s], b;
			size_t t;

			if (a == RT_NONE || g->to[a] == d->sw || (b = p->nxt[g->to[a]]) == RT_NONE)
				continue;
			t = rt_turn(g, a, b);
			if (!used[t]) {
				used[t] = 1;
				indeg[b]++;
			}
		}
	}
	for (uint32_t a = 0; a < g->narcs; a++)
		if (!indeg[a])
			queue[tail++] = a;
	while (head < tail) {
		uint32_t x = queue[head], v = g->to[x], deg = rt_deg(g, v);
		const uint8_t *u = used + g->tbase[v] + (size_t)(g->rev[x] - g->off[v]) * deg;

		key[x] = head++;
		for (uint32_t j = 0; j < deg; j++)
			if (u[j] && --indeg[g->off[v] + j] == 0)
				queue[tail++] = g->off[v] + j;
	}
	r = tail == g->narcs ? rt_cdg_seed(&p->c, key) : -EDEADLK;
out:
	free(used);
	free(indeg);
	free(queue);
	free(key);
	return r;
}

/* The load histogram: how many arcs carry each load */
static int hist_init(struct polish *p)
{
	uint32_t mx = 0;

	for (uint32_t a = 0; a < p->g->narcs; a++)
		if (p->l->load[a] > mx)
			mx = p->l->load[a];
	p->natlen = mx + 1;
	p->nat = calloc(p->natlen, sizeof(*p->nat));
	if (!p->nat)
		return -ENOMEM;
	for (uint32_t a = 0; a < p->g->narcs; a++)
		p->nat[p->l->load[a]]++;
	return 0;
}

/*
 * The highest load, at most top, and how many arcs carry it; UINT32_MAX
 * when some arc carries more than top (p->peak says whether)
 */
static uint32_t hist_max(const struct polish *p, uint32_t top, uint32_t *count)
{
	*count = 0;
	if (p->nover || p->peak > top)
		return UINT32_MAX;
	for (uint32_t m = top < p->natlen ? top : p->natlen - 1; m > 0; m--)
		if (p->nat[m]) {
			*count = p->nat[m];
			return m;
		}
	*count = p->nat[0];
	return 0;
}

/*
 * f routes more (sign > 0) or fewer over the way from s toward d in tree
 * nxt: loads and histogram (a load above its top is counted in nover)
 */
static void path_load(struct polish *p, const struct rt_dest *d, const uint32_t *nxt, uint32_t s,
		      uint32_t f, int sign)
{
	const struct rt_graph *g = p->g;

	for (uint32_t a; s != d->sw && (a = nxt[s]) != RT_NONE; s = g->to[a]) {
		uint32_t was = p->l->load[a];

		rt_loads_arc(p->l, d, a, sign > 0 ? (int64_t)f : -(int64_t)f);
		if (was < p->natlen)
			p->nat[was]--;
		else
			p->nover--;
		if (p->l->load[a] < p->natlen)
			p->nat[p->l->load[a]]++;
		else
			p->nover++;
		if (sign > 0 && p->l->load[a] > p->peak)
			p->peak = p->l->load[a];
		if (sign > 0 && p->l->load_ca[a] > p->max_ca)
			p->ca_over = true;
	}
}

/* The routes of d through each switch (its sources and those upstream) into f[] */
static void pl_flows(struct polish *p, const struct rt_dest *d, uint32_t *f)
{
	const struct rt_graph *g = p->g;
	uint32_t n;

	rt_tree_read(g, d, p->nxt);
	n = rt_tree_order(g, d, p->nxt, p->depth, p->order, p->scratch);
	memset(f, 0, p->S * sizeof(*f));
	for (uint32_t k = 0; k < n; k++) {
		uint32_t x = p->order[k];

		f[x] += g->nsrc[x];
		if (p->nxt[x] != RT_NONE)
			f[g->to[p->nxt[x]]] += f[x];
	}
}

/*
 * Put in (sign > 0) or take out the turns of switch s of tree nxt toward d
 * when it goes out over arc x: those into s from its children, and the
 * one after s. 0, or -ELOOP (nothing changed) when one does not fit.
 */
static int hook_turns(struct polish *p, const struct rt_dest *d, uint32_t s, uint32_t x, int sign)
{
	const struct rt_graph *g = p->g;
	uint32_t v = g->to[x], k;

	if (sign < 0) {
		for (k = p->coff[s]; k < p->coff[s + 1]; k++)
			turn_put(p, p->nxt[p->kids[k]], x);
		if (v != d->sw)
			turn_put(p, x, p->nxt[v]);
		return 0;
	}
	if (v != d->sw && turn_add(p, x, p->nxt[v]) < 0)
		return -ELOOP;
	for (k = p->coff[s]; k < p->coff[s + 1]; k++)
		if (turn_add(p, p->nxt[p->kids[k]], x) < 0)
			break;
	if (k == p->coff[s + 1])
		return 0;
	while (k-- > p->coff[s])
		turn_put(p, p->nxt[p->kids[k]], x);
	if (v != d->sw)
		turn_put(p, x, p->nxt[v]);
	return -ELOOP;
}

/* Switch s goes out over b instead of a: 1 done (turns changed), 0 a turn does not fit */
static int rehook_turns(struct polish *p, const struct rt_dest *d, uint32_t s, uint32_t a,
			uint32_t b)
{
	hook_turns(p, d, s, a, -1);
	if (hook_turns(p, d, s, b, 1) == 0)
		return 1;
	hook_turns(p, d, s, a, 1);	/* fits: it was there */
	return 0;
}

/*
 * The tree toward d into p->nxt, with what rehooking needs: acc, ht,
 * children, and which switches' ways cross arc hot (their keys, fewest
 * routes first, into key2). Returns how many such switches carry routes.
 */
static uint32_t tree_scan(struct polish *p, const struct rt_dest *d, uint32_t hot)
{
	const struct rt_graph *g = p->g;
	uint32_t n, nc = 0;

	rt_tree_read(g, d, p->nxt);
	n = rt_tree_order(g, d, p->nxt, p->depth, p->order, p->scratch);
	memset(p->coff, 0, (p->S + 2) * sizeof(*p->coff));
	memset(p->cross, 0, p->S);
	for (uint32_t i = 0; i < n; i++) {
		p->acc[p->order[i]] = g->nsrc[p->order[i]];
		p->ht[p->order[i]] = 0;
	}
	for (uint32_t i = 0; i < n; i++) {
		uint32_t x = p->order[i], a = p->nxt[x];

		if (a == RT_NONE)
			continue;
		p->acc[g->to[a]] += p->acc[x];
		if (p->ht[x] + 1 > p->ht[g->to[a]])
			p->ht[g->to[a]] = p->ht[x] + 1;
		p->coff[g->to[a] + 2]++;
	}
	for (uint32_t x = 0; x < p->S; x++)
		p->coff[x + 2] += p->coff[x + 1];
	for (uint32_t i = 0; i < n; i++) {
		uint32_t x = p->order[i];

		if (p->nxt[x] != RT_NONE)
			p->kids[p->coff[g->to[p->nxt[x]] + 1]++] = x;
	}
	/* Nearest first: whether each way crosses hot */
	for (uint32_t i = n; i-- > 0;) {
		uint32_t x = p->order[i], a = p->nxt[x];

		p->cross[x] = a != RT_NONE && (a == hot || p->cross[g->to[a]]);
		if (p->cross[x] && p->acc[x] &&
		    (!p->movable || p->movable[(size_t)d->lid * p->S + x]))
			p->key2[nc++] = (uint64_t)p->acc[x] << 32 | x;
	}
	qsort(p->key2, nc, sizeof(*p->key2), cmp_u64);
	return nc;
}

/*
 * Move some of d's routes off arc hot (load m, on cnt arcs): 1 moved (the
 * loads, turns and LFT row are the new ones), 0 not (nothing changed)
 */
static int pl_rehook(struct polish *p, const struct rt_dest *d, uint32_t hot, uint32_t m,
		     uint32_t cnt)
{
	const struct rt_graph *g = p->g;
	uint32_t nc = tree_scan(p, d, hot), m2, c2;

	for (uint32_t k = 0; k < nc; k++) {
		uint32_t s = (uint32_t)p->key2[k], f = p->acc[s], a = p->nxt[s];

		/* The arcs of its way now: a new way that joins it adds nothing there */
		p->stamp++;
		for (uint32_t x = s, y; x != d->sw && (y = p->nxt[x]) != RT_NONE; x = g->to[y])
			p->onpath[y] = p->stamp;
		for (uint32_t b = g->off[s]; b < g->off[s + 1]; b++) {
			uint32_t w = g->to[b], x, y;

			p->work++;
			/*
			 * Toward a way that does not cross hot (so not into s's own
			 * subtree either: no loop), within the hop limit, onto an
			 * arc that stays below the busiest load
			 */
			if (b == a || (w != d->sw && (p->nxt[w] == RT_NONE || p->cross[w])) ||
			    p->depth[w] + 1 + p->ht[s] > p->hop_limit || p->l->load[b] + f >= m)
				continue;
			/* Nowhere as busy as the busiest arc (cheap: before the turns) */
			for (x = w; x != d->sw && (y = p->nxt[x]) != RT_NONE; x = g->to[y])
				if (p->onpath[y] != p->stamp && p->l->load[y] + f >= m)
					break;
			if (x != d->sw)
				continue;
			if (!rehook_turns(p, d, s, a, b))
				continue;
			path_load(p, d, p->nxt, s, f, -1);
			p->nxt[s] = b;
			p->peak = 0;
			p->ca_over = false;
			path_load(p, d, p->nxt, s, f, 1);
			m2 = hist_max(p, m, &c2);
			/* Never at the cost of the busiest host-to-host link */
			if (!p->ca_over && (m2 < m || (m2 == m && c2 < cnt))) {
				rt_tree_write(g, d, p->nxt);
				return 1;
			}
			path_load(p, d, p->nxt, s, f, -1);
			p->nxt[s] = a;
			path_load(p, d, p->nxt, s, f, 1);
			rehook_turns(p, d, s, b, a);
		}
	}
	return 0;
}

static void pl_free(struct polish *p)
{
	if (p->c_ok)
		rt_cdg_free(&p->c);
	free(p->nxt);
	free(p->depth);
	free(p->order);
	free(p->scratch);
	free(p->flow);
	free(p->acc);
	free(p->ht);
	free(p->coff);
	free(p->kids);
	free(p->cross);
	free(p->key);
	free(p->key2);
	free(p->onpath);
	free(p->failed);
	free(p->fl);
	free(p->nat);
}

/* Put every route's turns in the graph: 0, -EDEADLK when they are not acyclic, -ENOMEM */
static int pl_graph(struct polish *p)
{
	const struct rt_graph *g = p->g;
	int r = rt_cdg_init(&p->c, g);

	if (r < 0)
		return r;
	p->c_ok = true;
	p->c.search_cap = PL_SEARCH_CAP;
	p->failed = calloc(g->nturns + 1, sizeof(*p->failed));
	p->version = 1;
	if (!p->failed)
		return -ENOMEM;
	r = topo_key(p);
	for (uint32_t i = 0; r == 0 && i < g->ndest; i++) {
		const struct rt_dest *d = &g->dest[i];

		rt_tree_read(g, d, p->nxt);
		for (uint32_t s = 0; r == 0 && s < p->S; s++) {
			uint32_t a = p->nxt[s], b;

			if (a != RT_NONE && g->to[a] != d->sw && (b = p->nxt[g->to[a]]) != RT_NONE &&
			    rt_cdg_add(&p->c, a, b) < 0)
				r = -EDEADLK;
		}
	}
	p->c.work = 0;
	return r;
}

int rt_polish(const struct rt_graph *g, struct rt_loads *l, const uint32_t *rank,
	      const uint8_t *movable, uint32_t hop_limit, uint64_t work_limit, uint32_t *moved)
{
	struct polish p;
	uint32_t S = g->nsw;
	int r = -ENOMEM;

	*moved = 0;
	/*
	 * Ports with several LIDs (LMC > 0) keep them on different links
	 * (rt_sib_mark): moves that know nothing of it are not made
	 */
	if (!g->lt || !g->narcs || !g->ndest || g->sibs)
		return 0;
	memset(&p, 0, sizeof(p));
	p.g = g;
	p.l = l;
	p.rank = rank;
	p.movable = movable;
	p.S = S;
	p.hop_limit = hop_limit ? hop_limit : UINT32_MAX;
	p.nxt = malloc((S + 1) * sizeof(*p.nxt));
	p.depth = malloc((S + 1) * sizeof(*p.depth));
	p.order = malloc((S + 1) * sizeof(*p.order));
	p.scratch = malloc((S + 1) * sizeof(*p.scratch));
	p.flow = malloc((S + 1) * sizeof(*p.flow));
	p.acc = malloc((S + 1) * sizeof(*p.acc));
	p.ht = malloc((S + 1) * sizeof(*p.ht));
	p.coff = malloc((S + 2) * sizeof(*p.coff));
	p.kids = malloc((S + 1) * sizeof(*p.kids));
	p.cross = malloc(S + 1);
	p.key = malloc(((size_t)g->ndest + 1) * sizeof(*p.key));
	p.key2 = malloc(((size_t)S + 1) * sizeof(*p.key2));
	p.onpath = calloc((size_t)g->narcs + 1, sizeof(*p.onpath));
	if (!p.nxt || !p.depth || !p.order || !p.scratch || !p.flow || !p.acc || !p.ht ||
	    !p.coff || !p.kids || !p.cross || !p.key || !p.key2 || !p.onpath)
		goto out;
	if (!rank && (r = pl_graph(&p)) < 0)
		goto out;
	r = hist_init(&p);
	if (r < 0)
		goto out;
	for (uint32_t a = 0; a < g->narcs; a++)
		if (l->load_ca[a] > p.max_ca)
			p.max_ca = l->load_ca[a];
	if ((uint64_t)g->ndest * S <= PL_FLOW_CACHE) {
		p.fl = malloc((size_t)g->ndest * S * sizeof(*p.fl) + 1);
		for (uint32_t i = 0; p.fl && i < g->ndest; i++)
			pl_flows(&p, &g->dest[i], p.fl + (size_t)i * S);
	}
	for (uint32_t top = p.natlen - 1;;) {
		uint32_t cnt, m, hot = RT_NONE, nc = 0;
		bool done = false;

		p.peak = 0;		/* what the last trial left is gone again */
		m = top = hist_max(&p, top, &cnt);

		/* A round's own scans count too */
		p.work += g->narcs + g->ndest;
		if (!m || p.work + (p.c_ok ? p.c.work : 0) > work_limit)
			break;
		/* The busiest arc (the first of them), and the LIDs over it, most routes first */
		for (uint32_t a = 0; a < g->narcs && hot == RT_NONE; a++)
			if (l->load[a] == m)
				hot = a;
		for (uint32_t i = 0; i < g->ndest; i++) {
			const struct rt_dest *d = &g->dest[i];
			uint32_t s = g->from[hot], f;

			if (g->lt[(size_t)d->lid * S + s] != g->port[hot] || s == d->sw)
				continue;
			if (p.fl) {
				f = p.fl[(size_t)i * S + s];
			} else {
				pl_flows(&p, d, p.flow);
				f = p.flow[s];
			}
			if (f)
				p.key[nc++] = (uint64_t)(UINT32_MAX - f) << 32 | i;
		}
		qsort(p.key, nc, sizeof(*p.key), cmp_u64);
		for (uint32_t k = 0; k < nc && !done; k++) {
			uint32_t i = (uint32_t)p.key[k];

			done = pl_rehook(&p, &g->dest[i], hot, m, cnt);
			if (done && p.fl)
				pl_flows(&p, &g->dest[i], p.fl + (size_t)i * S);
			if (done)
				p.version++;
			if (p.work + (p.c_ok ? p.c.work : 0) > work_limit)
				break;
		}
		if (!done)
			break;
		(*moved)++;
	}
	r = 0;
out:
	pl_free(&p);
	return r;
}
