// SPDX-License-Identifier: MIT
/*
 * Channel dependency graphs over arcs (switch-to-switch link directions),
 * kept acyclic while turns are added one by one: a topological order of
 * the arcs is maintained with the dynamic algorithm of Pearce and Kelly
 * (2006): a new edge a -> b that agrees with the order costs nothing;
 * otherwise only the arcs whose position lies between b and a are searched
 * (forward from b: reaching a means a cycle) and moved.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/route_int.h"

int rt_cdg_init(struct rt_cdg *c, const struct rt_graph *g)
{
	size_t na = g->narcs ? g->narcs : 1;

	memset(c, 0, sizeof(*c));
	c->g = g;
	c->cnt = calloc(g->nturns ? g->nturns : 1, sizeof(*c->cnt));
	c->ord = malloc(na * sizeof(*c->ord));
	c->at = malloc(na * sizeof(*c->at));
	c->mark = calloc(na, sizeof(*c->mark));
	c->stack = malloc(na * sizeof(*c->stack));
	c->fwd = malloc(na * sizeof(*c->fwd));
	c->bwd = malloc(na * sizeof(*c->bwd));
	c->tmp = malloc(na * sizeof(*c->tmp));
	if (!c->cnt || !c->ord || !c->at || !c->mark || !c->stack || !c->fwd || !c->bwd ||
	    !c->tmp) {
		rt_cdg_free(c);
		return -ENOMEM;
	}
	for (uint32_t a = 0; a < g->narcs; a++)
		c->ord[a] = c->at[a] = a;
	c->stamp = 0;
	return 0;
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

int rt_cdg_seed(struct rt_cdg *c, const uint32_t *key)
{
	const struct rt_graph *g = c->g;
	uint64_t *k;

	for (size_t t = 0; t < g->nturns; t++)
		if (c->cnt[t])
			return -EBUSY;
	k = malloc(((size_t)g->narcs + 1) * sizeof(*k));
	if (!k)
		return -ENOMEM;
	for (uint32_t a = 0; a < g->narcs; a++)
		k[a] = (uint64_t)key[a] << 32 | a;
	qsort(k, g->narcs, sizeof(*k), cmp_u64);
	for (uint32_t i = 0; i < g->narcs; i++) {
		c->at[i] = (uint32_t)k[i];
		c->ord[c->at[i]] = i;
	}
	free(k);
	return 0;
}

void rt_cdg_free(struct rt_cdg *c)
{
	free(c->cnt);
	free(c->ord);
	free(c->at);
	free(c->mark);
	free(c->stack);
	free(c->fwd);
	free(c->bwd);
	free(c->tmp);
	memset(c, 0, sizeof(*c));
}

static void next_stamp(struct rt_cdg *c)
{
	if (c->stamp >= UINT32_MAX - 2) {
		memset(c->mark, 0, c->g->narcs * sizeof(*c->mark));
		c->stamp = 0;
	}
	c->stamp += 2;
}

/* Forward search from b over arcs placed at or before ub; true when it reaches a */
static bool search_fwd(struct rt_cdg *c, uint32_t b, uint32_t a, uint32_t ub)
{
	const struct rt_graph *g = c->g;
	uint32_t sp = 0, m = c->stamp;

	c->nfwd = 0;
	c->mark[b] = m;
	c->stack[sp++] = b;
	while (sp) {
		uint32_t x = c->stack[--sp], v = g->to[x], deg = rt_deg(g, v);
		const uint32_t *cnt = c->cnt + g->tbase[v] + (size_t)(g->rev[x] - g->off[v]) * deg;

		c->fwd[c->nfwd++] = x;
		c->work++;
		/* Searched too far: taken for a cycle (refusing a turn is always safe) */
		if (c->search_cap && c->nfwd > c->search_cap)
			return true;
		for (uint32_t j = 0; j < deg; j++) {
			uint32_t y = g->off[v] + j;

			if (!cnt[j] || c->mark[y] == m)
				continue;
			if (y == a)
				return true;
			if (c->ord[y] > ub)
				continue;
			c->mark[y] = m;
			c->stack[sp++] = y;
		}
	}
	return false;
}

/* Backward search from a over arcs placed at or after lb */
static void search_bwd(struct rt_cdg *c, uint32_t a, uint32_t lb)
{
	const struct rt_graph *g = c->g;
	uint32_t sp = 0, m = c->stamp + 1;

	c->nbwd = 0;
	c->mark[a] = m;
	c->stack[sp++] = a;
	while (sp) {
		uint32_t x = c->stack[--sp], u = g->from[x], deg = rt_deg(g, u);
		const uint32_t *cnt = c->cnt + g->tbase[u] + (x - g->off[u]);

		c->bwd[c->nbwd++] = x;
		c->work++;
		for (uint32_t i = 0; i < deg; i++) {
			uint32_t w = g->rev[g->off[u] + i];

			if (!cnt[(size_t)i * deg] || c->mark[w] == m || c->ord[w] < lb)
				continue;
			c->mark[w] = m;
			c->stack[sp++] = w;
		}
	}
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* Give the backward set the first of the positions both sets hold, in their old order */
static void reorder(struct rt_cdg *c)
{
	uint32_t nb = c->nbwd, nf = c->nfwd, i = 0, j = 0, k = 0;
	uint32_t *pos = c->stack;	/* free now: nb + nf <= narcs */

	for (uint32_t x = 0; x < nb; x++)
		c->bwd[x] = c->ord[c->bwd[x]];
	for (uint32_t x = 0; x < nf; x++)
		c->fwd[x] = c->ord[c->fwd[x]];
	qsort(c->bwd, nb, sizeof(*c->bwd), cmp_u32);
	qsort(c->fwd, nf, sizeof(*c->fwd), cmp_u32);
	while (i < nb || j < nf)
		pos[k++] = (j >= nf || (i < nb && c->bwd[i] < c->fwd[j])) ? c->bwd[i++] : c->fwd[j++];
	/* bwd/fwd hold positions: map them to arcs before at[] changes */
	for (uint32_t x = 0; x < nb; x++)
		c->tmp[x] = c->at[c->bwd[x]];
	for (uint32_t x = 0; x < nf; x++)
		c->tmp[nb + x] = c->at[c->fwd[x]];
	for (uint32_t x = 0; x < k; x++) {
		c->ord[c->tmp[x]] = pos[x];
		c->at[pos[x]] = c->tmp[x];
	}
}

bool rt_cdg_can_add(struct rt_cdg *c, uint32_t a, uint32_t b)
{
	if (c->cnt[rt_turn(c->g, a, b)] || c->ord[a] < c->ord[b])
		return true;
	next_stamp(c);
	return !search_fwd(c, b, a, c->ord[a]);
}

int rt_cdg_add(struct rt_cdg *c, uint32_t a, uint32_t b)
{
	size_t t = rt_turn(c->g, a, b);

	if (c->cnt[t] || c->ord[a] < c->ord[b]) {
		c->cnt[t]++;
		return 0;
	}
	next_stamp(c);
	if (search_fwd(c, b, a, c->ord[a]))
		return -ELOOP;
	search_bwd(c, a, c->ord[b]);
	reorder(c);
	c->cnt[t] = 1;
	return 0;
}

void rt_cdg_put(struct rt_cdg *c, uint32_t a, uint32_t b)
{
	size_t t = rt_turn(c->g, a, b);

	if (c->cnt[t])
		c->cnt[t]--;
}

bool rt_turns_acyclic(const struct rt_graph *g, const uint8_t *used)
{
	uint32_t na = g->narcs, head = 0, tail = 0;
	uint32_t *indeg = calloc(na ? na : 1, sizeof(*indeg));
	uint32_t *queue = malloc((na ? na : 1) * sizeof(*queue));
	bool ok;

	if (!indeg || !queue) {
		free(indeg);
		free(queue);
		return false;
	}
	for (uint32_t v = 0; v < g->nsw; v++) {
		uint32_t deg = rt_deg(g, v);
		const uint8_t *u = used + g->tbase[v];

		for (uint32_t i = 0; i < deg; i++)
			for (uint32_t j = 0; j < deg; j++)
				if (u[(size_t)i * deg + j])
					indeg[g->off[v] + j]++;
	}
	for (uint32_t a = 0; a < na; a++)
		if (!indeg[a])
			queue[tail++] = a;
	while (head < tail) {
		uint32_t x = queue[head++], v = g->to[x], deg = rt_deg(g, v);
		const uint8_t *u = used + g->tbase[v] + (size_t)(g->rev[x] - g->off[v]) * deg;

		for (uint32_t j = 0; j < deg; j++)
			if (u[j] && --indeg[g->off[v] + j] == 0)
				queue[tail++] = g->off[v] + j;
	}
	ok = tail == na;
	free(indeg);
	free(queue);
	return ok;
}
