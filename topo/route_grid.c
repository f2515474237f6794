// SPDX-License-Identifier: MIT
/*
 * Grids: switch graphs that are Cartesian products of paths and cycles
 * (meshes, tori, rings, hypercubes), recognised from the cabling alone, and
 * dimension-ordered routes on them that are deadlock-free on one VL.
 *
 * Recognition. In a product of paths and cycles (a cycle of 4 being the
 * product of two single cables, so that a 4x4x4 torus is a 6-cube), two
 * cables at a switch that belong to different factors span exactly one
 * square, and two of the same factor none. So: cables at a switch that span
 * no square are put in one class; the opposite sides of every square too
 * (union-find). Each class is a dimension; the components of its cables
 * are its lines, all paths or all cycles of one length. Coordinates come
 * from the line through one switch, carried to every other switch along the
 * cables of the other dimensions. Nothing is assumed: the result is checked
 * (every switch one coordinate tuple, every cable a unit step in its own
 * dimension, every expected neighbour there), and any fabric that fails it,
 * a torus with a missing cable for one, is simply not a grid.
 *
 * Routes. Toward each LID a packet corrects its coordinates one dimension
 * after the other, in a fixed order. On a line that is a cycle it may go
 * either way; one switch per line and direction is a break, through which
 * no route goes straight on (the two breaks of a line sit side by side,
 * which measured best on rings). Then every dependency goes from a
 * dimension to a later one, or along a line in one direction away from its
 * break: the channel dependency graph is acyclic on one VL. Which way each
 * switch of a line goes toward a LID is chosen, LID by LID, to keep the
 * busiest link of the line low given the routes already placed (the flow
 * entering a line at each switch is known beforehand: it depends on the
 * order of the dimensions only); parallel cables take turns. The engine
 * compares a few dimension orders.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/route_int.h"

static uint32_t uf_find(uint32_t *p, uint32_t x)
{
	while (p[x] != x) {
		p[x] = p[p[x]];
		x = p[x];
	}
	return x;
}

static void uf_union(uint32_t *p, uint32_t a, uint32_t b)
{
	a = uf_find(p, a);
	b = uf_find(p, b);
	if (a != b)
		p[a < b ? b : a] = a < b ? a : b;
}

void rt_grid_free(struct rt_grid *gr)
{
	free(gr->coord);
	free(gr->at);
	memset(gr, 0, sizeof(*gr));
}

/* Simple graph of the switches: unique neighbours, sorted, and their edge ids */
struct sgraph {
	uint32_t *off, *nbr, *eid;	/* [S + 1], [nnb], [nnb] */
	uint32_t ne;
	uint32_t *ea, *eb;		/* [ne] the two ends of an edge */
};

static void sg_free(struct sgraph *sg)
{
	free(sg->off);
	free(sg->nbr);
	free(sg->eid);
	free(sg->ea);
	free(sg->eb);
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

static uint32_t sg_edge(const struct sgraph *sg, uint32_t a, uint32_t b)
{
	const uint32_t *lo = sg->nbr + sg->off[a], *hi = sg->nbr + sg->off[a + 1];

	while (lo < hi) {
		const uint32_t *m = lo + (hi - lo) / 2;

		if (*m == b)
			return sg->eid[m - sg->nbr];
		if (*m < b)
			lo = m + 1;
		else
			hi = m;
	}
	return RT_NONE;
}

static int sg_build(const struct rt_graph *g, struct sgraph *sg)
{
	uint32_t S = g->nsw, n = 0;

	memset(sg, 0, sizeof(*sg));
	sg->off = calloc(S + 1, sizeof(*sg->off));
	sg->nbr = malloc((g->narcs + 1) * sizeof(*sg->nbr));
	sg->eid = malloc((g->narcs + 1) * sizeof(*sg->eid));
	sg->ea = malloc((g->narcs + 1) * sizeof(*sg->ea));
	sg->eb = malloc((g->narcs + 1) * sizeof(*sg->eb));
	if (!sg->off || !sg->nbr || !sg->eid || !sg->ea || !sg->eb)
		return -ENOMEM;
	for (uint32_t s = 0; s < S; s++) {
		uint32_t start = n;

		sg->off[s] = n;
		for (uint32_t a = g->off[s]; a < g->off[s + 1]; a++)
			if (g->to[a] != s)
				sg->nbr[n++] = g->to[a];
		qsort(sg->nbr + start, n - start, sizeof(*sg->nbr), cmp_u32);
		/* unique */
		if (n > start) {
			uint32_t k = start + 1;

			for (uint32_t i = start + 1; i < n; i++)
				if (sg->nbr[i] != sg->nbr[k - 1])
					sg->nbr[k++] = sg->nbr[i];
			n = k;
		}
	}
	sg->off[S] = n;
	/* Edge ids: from the lower end, looked up from the higher */
	for (uint32_t s = 0; s < S; s++)
		for (uint32_t i = sg->off[s]; i < sg->off[s + 1]; i++)
			if (s < sg->nbr[i]) {
				sg->ea[sg->ne] = s;
				sg->eb[sg->ne] = sg->nbr[i];
				sg->eid[i] = sg->ne++;
			}
	for (uint32_t s = 0; s < S; s++)
		for (uint32_t i = sg->off[s]; i < sg->off[s + 1]; i++)
			if (s > sg->nbr[i])
				sg->eid[i] = sg_edge(sg, sg->nbr[i], s);
	return 0;
}

/* sg_square() when a and b have no common neighbour but v, or several */
#define SQ_NONE		UINT32_MAX
#define SQ_MANY		(UINT32_MAX - 1)

/* The common neighbour of a and b other than v, if exactly one */
static uint32_t sg_square(const struct sgraph *sg, uint32_t v, uint32_t a, uint32_t b)
{
	uint32_t i = sg->off[a], j = sg->off[b], found = SQ_NONE;

	while (i < sg->off[a + 1] && j < sg->off[b + 1]) {
		uint32_t x = sg->nbr[i], y = sg->nbr[j];

		if (x < y) {
			i++;
		} else if (y < x) {
			j++;
		} else {
			if (x != v) {
				if (found != SQ_NONE)
					return SQ_MANY;
				found = x;
			}
			i++;
			j++;
		}
	}
	return found;
}

/*
 * The line of dimension d through switch s: its switches in order into
 * line[], from one end (a path) or from s on (a cycle); returns its length,
 * 0 when it is neither a path nor a cycle.
 */
static uint32_t walk_line(const struct sgraph *sg, const uint32_t *cls, uint32_t d, uint32_t s,
			  uint32_t *line, uint32_t max, bool *cycle)
{
	uint32_t prev = RT_NONE, cur = s, n = 0, end = s;

	/* Back to an end of a path, or all the way around a cycle */
	for (uint32_t steps = 0; steps <= max; steps++) {
		uint32_t nx = RT_NONE, deg = 0;

		for (uint32_t i = sg->off[cur]; i < sg->off[cur + 1]; i++) {
			if (cls[sg->eid[i]] != d)
				continue;
			deg++;
			if (sg->nbr[i] != prev && nx == RT_NONE)
				nx = sg->nbr[i];
		}
		if (deg > 2)
			return 0;
		if (nx == RT_NONE || (deg == 1 && prev != RT_NONE)) {
			end = cur;	/* an end of a path */
			break;
		}
		if (nx == s) {
			end = s;	/* around a cycle */
			break;
		}
		prev = cur;
		cur = nx;
	}
	prev = RT_NONE;
	cur = end;
	*cycle = false;
	while (n < max) {
		uint32_t nx = RT_NONE;

		line[n++] = cur;
		for (uint32_t i = sg->off[cur]; i < sg->off[cur + 1]; i++)
			if (cls[sg->eid[i]] == d && sg->nbr[i] != prev && sg->nbr[i] != cur) {
				nx = sg->nbr[i];
				break;
			}
		if (nx == RT_NONE)
			return n;
		if (nx == end) {
			*cycle = n >= 3;
			return n;
		}
		/* a line that turns back on itself is no path or cycle */
		for (uint32_t k = 0; k + 1 < n; k++)
			if (line[k] == nx)
				return 0;
		prev = cur;
		cur = nx;
	}
	return 0;
}

int rt_grid_detect(const struct rt_graph *g, struct rt_grid *gr)
{
	uint32_t S = g->nsw, *uf = NULL, *cls = NULL, *line = NULL, *stack = NULL, nd = 0;
	uint64_t total = 1;
	struct sgraph sg;
	int r = -ENOMEM, ok = 0;

	memset(gr, 0, sizeof(*gr));
	if (S < 2)
		return 0;
	if (sg_build(g, &sg) < 0)
		goto out;
	uf = malloc((sg.ne + 1) * sizeof(*uf));
	cls = malloc((sg.ne + 1) * sizeof(*cls));
	line = malloc((S + 1) * sizeof(*line));
	stack = malloc((S + 1) * sizeof(*stack));
	gr->coord = malloc((size_t)S * RT_GRID_MAXD * sizeof(*gr->coord));
	gr->at = malloc((S + 1) * sizeof(*gr->at));
	if (!uf || !cls || !line || !stack || !gr->coord || !gr->at)
		goto out;
	r = 0;
	for (uint32_t e = 0; e < sg.ne; e++)
		uf[e] = e;
	/* Cables at a switch: one square between them, or none (same dimension) */
	for (uint32_t v = 0; v < S; v++)
		for (uint32_t i = sg.off[v]; i < sg.off[v + 1]; i++)
			for (uint32_t j = i + 1; j < sg.off[v + 1]; j++) {
				uint32_t a = sg.nbr[i], b = sg.nbr[j], c = sg_square(&sg, v, a, b);

				/* two squares: not a product of paths and cycles */
				if (c == SQ_MANY)
					goto out;
				if (c == SQ_NONE) {
					uf_union(uf, sg.eid[i], sg.eid[j]);
					continue;
				}
				uf_union(uf, sg.eid[i], sg_edge(&sg, b, c));
				uf_union(uf, sg.eid[j], sg_edge(&sg, a, c));
			}
	/* Dimensions, in the order of their first cable */
	for (uint32_t e = 0; e < sg.ne; e++)
		cls[e] = RT_NONE;
	for (uint32_t e = 0; e < sg.ne; e++) {
		uint32_t root = uf_find(uf, e);

		if (cls[root] == RT_NONE) {
			if (nd == RT_GRID_MAXD)
				goto out;
			cls[root] = nd++;
		}
		cls[e] = cls[root];
	}
	if (!nd)
		goto out;
	gr->ndim = nd;
	/* Each dimension's line through switch 0 gives its size and its coordinates */
	for (uint32_t d = 0; d < nd; d++) {
		bool cyc;
		uint32_t n = walk_line(&sg, cls, d, 0, line, S, &cyc);

		if (n < 2)
			goto out;
		gr->size[d] = n;
		gr->cycle[d] = cyc;
		total *= n;
		if (total > S)
			goto out;
		/* Coordinate d of every switch: flood from the line along other dimensions */
		for (uint32_t s = 0; s < S; s++)
			gr->coord[(size_t)s * RT_GRID_MAXD + d] = RT_NONE;
		for (uint32_t k = 0; k < n; k++) {
			uint32_t sp = 0;

			if (gr->coord[(size_t)line[k] * RT_GRID_MAXD + d] != RT_NONE)
				goto out;
			gr->coord[(size_t)line[k] * RT_GRID_MAXD + d] = k;
			stack[sp++] = line[k];
			while (sp) {
				uint32_t v = stack[--sp];

				for (uint32_t i = sg.off[v]; i < sg.off[v + 1]; i++) {
					uint32_t w = sg.nbr[i];
					uint32_t *cw = &gr->coord[(size_t)w * RT_GRID_MAXD + d];

					if (cls[sg.eid[i]] == d)
						continue;
					if (*cw == k)
						continue;
					if (*cw != RT_NONE)
						goto out;
					*cw = k;
					stack[sp++] = w;
				}
			}
		}
	}
	if (total != S)
		goto out;
	/* Every switch a distinct tuple; the switch at each tuple */
	for (uint32_t s = 0; s < S; s++)
		gr->at[s] = RT_NONE;
	for (uint32_t s = 0; s < S; s++) {
		uint32_t idx = rt_grid_index(gr, gr->coord + (size_t)s * RT_GRID_MAXD);

		if (idx >= S || gr->at[idx] != RT_NONE)
			goto out;
		gr->at[idx] = s;
	}
	/* Every cable a unit step along its own dimension; every neighbour present */
	for (uint32_t v = 0; v < S; v++) {
		uint32_t seen[RT_GRID_MAXD] = { 0 };
		const uint32_t *cv = gr->coord + (size_t)v * RT_GRID_MAXD;

		for (uint32_t i = sg.off[v]; i < sg.off[v + 1]; i++) {
			const uint32_t *cw = gr->coord + (size_t)sg.nbr[i] * RT_GRID_MAXD;
			uint32_t d = cls[sg.eid[i]], n = gr->size[d], step;

			for (uint32_t x = 0; x < nd; x++)
				if (x != d && cv[x] != cw[x])
					goto out;
			step = (cw[d] + n - cv[d]) % n;
			if (!(step == 1 || step == n - 1) ||
			    (!gr->cycle[d] && (cw[d] > cv[d] ? cw[d] - cv[d] : cv[d] - cw[d]) != 1))
				goto out;
			seen[d]++;
		}
		for (uint32_t d = 0; d < nd; d++) {
			uint32_t want = gr->cycle[d] ? 2 :
					(cv[d] == 0 || cv[d] == gr->size[d] - 1) ? 1 : 2;

			if (gr->size[d] == 2)
				want = 1;
			if (seen[d] != want)
				goto out;
		}
	}
	ok = 1;
out:
	free(uf);
	free(cls);
	free(line);
	free(stack);
	sg_free(&sg);
	if (!ok)
		rt_grid_free(gr);
	return r < 0 ? r : ok;
}

uint32_t rt_grid_index(const struct rt_grid *gr, const uint32_t *c)
{
	uint32_t idx = 0;

	for (uint32_t d = gr->ndim; d-- > 0;) {
		if (c[d] >= gr->size[d])
			return RT_NONE;
		idx = idx * gr->size[d] + c[d];
	}
	return idx;
}

/* ---- routes ---- */

struct grid_rt {
	const struct rt_graph *g;
	const struct rt_grid *gr;
	struct rt_loads *l;
	uint32_t S;
	const uint32_t *order;		/* dimensions, first corrected first */
	uint64_t *flow;			/* [ndim * S] flow entering phase k's line at a switch */
	uint32_t *nxt;
	uint32_t *fib;			/* a line's switches, by position */
	uint64_t *add;			/* scratch per line position */
};

/* The arcs from s to t (parallel cables); the least loaded for d */
static uint32_t best_arc(const struct grid_rt *gt, const struct rt_dest *d, uint32_t s,
			 uint32_t t)
{
	const struct rt_graph *g = gt->g;
	const uint64_t *W = rt_wsel(gt->l, d);
	uint32_t best = RT_NONE;

	for (uint32_t a = g->off[s]; a < g->off[s + 1]; a++)
		if (g->to[a] == t && (best == RT_NONE || W[a] < W[best]))
			best = a;
	return best;
}

/*
 * Route the line fib[0..n-1] of dimension dim (positions = coordinates)
 * toward position t: each other switch's next hop along the line.
 */
static void route_line(struct grid_rt *gt, const struct rt_dest *d, uint32_t k, uint32_t dim,
		       uint32_t t)
{
	const struct rt_grid *gr = gt->gr;
	const uint32_t n = gr->size[dim], *fib = gt->fib;
	const uint64_t *W = rt_wsel(gt->l, d), *f = gt->flow + (size_t)k * gt->S;
	uint32_t bp, bm, lo, hi, best = 0;
	uint64_t bmax = UINT64_MAX, bsum = UINT64_MAX;

	if (!gr->cycle[dim]) {
		for (uint32_t p = 0; p < n; p++)
			if (p != t)
				gt->nxt[fib[p]] = best_arc(gt, d, fib[p],
							   fib[p < t ? p + 1 : p - 1]);
		return;
	}
	/*
	 * Breaks: no route goes straight on through position bp going up, nor
	 * through bm = bp + 1 going down. The line's other coordinates stagger
	 * them, so that the lines' short links do not all sit side by side.
	 */
	bp = 0;
	for (uint32_t x = 0; x < gr->ndim; x++)
		if (x != dim)
			bp += gr->coord[(size_t)fib[0] * RT_GRID_MAXD + x];
	bp %= n;
	bm = (bp + 1) % n;
	/* j switches go up (those at t - 1 .. t - j), the n - 1 - j others down */
	lo = 0;
	hi = n - 1;
	if (t != bp)
		hi = (t + n - bp) % n < hi ? (t + n - bp) % n : hi;
	if (t != bm) {
		uint32_t down = (bm + n - t) % n;

		lo = n - 1 - down > lo ? n - 1 - down : lo;
	}
	for (uint32_t j = lo; j <= hi; j++) {
		uint64_t mx = 0, sum = 0, acc = 0;

		/* up: arc from t - i to t - i + 1 carries the flow of t - i .. t - j */
		for (uint32_t i = j; i >= 1; i--) {
			uint32_t s = fib[(t + n - i) % n], a;
			uint64_t w;

			acc += f[s];
			a = best_arc(gt, d, s, fib[(t + n - i + 1) % n]);
			w = W[a] + rt_wflow(gt->l, d, acc);
			mx = w > mx ? w : mx;
			sum += w * w;
		}
		acc = 0;
		for (uint32_t i = n - 1 - j; i >= 1; i--) {
			uint32_t s = fib[(t + i) % n], a;
			uint64_t w;

			acc += f[s];
			a = best_arc(gt, d, s, fib[(t + i - 1) % n]);
			w = W[a] + rt_wflow(gt->l, d, acc);
			mx = w > mx ? w : mx;
			sum += w * w;
		}
		if (mx < bmax || (mx == bmax && sum < bsum)) {
			bmax = mx;
			bsum = sum;
			best = j;
		}
	}
	for (uint32_t i = 1; i < n; i++) {
		uint32_t s = fib[(t + n - i) % n];

		gt->nxt[s] = i <= best ? best_arc(gt, d, s, fib[(t + n - i + 1) % n]) :
				 best_arc(gt, d, s, fib[(t + n - i + 1 + n - 2) % n]);
	}
}

/* The tree toward d: every line of every phase routed to d's coordinate */
static void grid_tree(struct grid_rt *gt, const struct rt_dest *d)
{
	const struct rt_grid *gr = gt->gr;
	const uint32_t *cd = gr->coord + (size_t)d->sw * RT_GRID_MAXD;

	for (uint32_t s = 0; s < gt->S; s++)
		gt->nxt[s] = RT_NONE;
	for (uint32_t k = 0; k < gr->ndim; k++) {
		uint32_t dim = gt->order[k], c[RT_GRID_MAXD];

		/*
		 * Anchors: d's coordinates in order[0..k], any in the later
		 * dimensions (an odometer over those); each anchor's line along
		 * dim holds the switches that correct dim in this phase
		 */
		memcpy(c, cd, sizeof(c));
		for (uint32_t m = k + 1; m < gr->ndim; m++)
			c[gt->order[m]] = 0;
		for (;;) {
			uint32_t m;

			for (uint32_t p = 0; p < gr->size[dim]; p++) {
				c[dim] = p;
				gt->fib[p] = gr->at[rt_grid_index(gr, c)];
			}
			c[dim] = cd[dim];
			route_line(gt, d, k, dim, cd[dim]);
			for (m = k + 1; m < gr->ndim; m++) {
				uint32_t x = gt->order[m];

				if (++c[x] < gr->size[x])
					break;
				c[x] = 0;
			}
			if (m == gr->ndim)
				break;
		}
	}
}

int rt_grid_route(const struct rt_graph *g, const struct rt_grid *gr, const uint32_t *order,
		  struct rt_loads *l, unsigned int passes, uint32_t *depth, uint32_t *ord,
		  uint32_t *scratch)
{
	struct grid_rt gt = { .g = g, .gr = gr, .l = l, .S = g->nsw, .order = order };
	uint32_t maxn = 0;

	for (uint32_t d = 0; d < gr->ndim; d++)
		maxn = gr->size[d] > maxn ? gr->size[d] : maxn;
	gt.flow = malloc((size_t)gr->ndim * g->nsw * sizeof(*gt.flow) + 1);
	gt.nxt = malloc((g->nsw + 1) * sizeof(*gt.nxt));
	gt.fib = malloc((maxn + 1) * sizeof(*gt.fib));
	if (!gt.flow || !gt.nxt || !gt.fib) {
		free(gt.flow);
		free(gt.nxt);
		free(gt.fib);
		return -ENOMEM;
	}
	/* Phase k's flow at s: the sources of every switch equal to s from order[k] on */
	for (uint32_t s = 0; s < g->nsw; s++)
		gt.flow[s] = g->nsrc[s];
	for (uint32_t k = 1; k < gr->ndim; k++) {
		uint32_t dim = order[k - 1];
		uint64_t *prev = gt.flow + (size_t)(k - 1) * g->nsw, *cur = prev + g->nsw;

		for (uint32_t s = 0; s < g->nsw; s++) {
			uint32_t c[RT_GRID_MAXD];

			memcpy(c, gr->coord + (size_t)s * RT_GRID_MAXD, sizeof(c));
			cur[s] = 0;
			for (uint32_t p = 0; p < gr->size[dim]; p++) {
				c[dim] = p;
				cur[s] += prev[gr->at[rt_grid_index(gr, c)]];
			}
		}
	}
	for (unsigned int pass = 0; pass < passes; pass++)
		for (uint32_t i = 0; i < g->ndest; i++) {
			const struct rt_dest *d = &g->dest[i];

			if (pass) {
				rt_tree_read(g, d, gt.nxt);
				rt_loads_tree(l, g, d, gt.nxt, depth, ord, scratch, -1);
			}
			grid_tree(&gt, d);
			rt_tree_write(g, d, gt.nxt);
			rt_loads_tree(l, g, d, gt.nxt, depth, ord, scratch, 1);
		}
	free(gt.flow);
	free(gt.nxt);
	free(gt.fib);
	return 0;
}
