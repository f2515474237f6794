// SPDX-License-Identifier: MIT
/*
 * Up*\/down* routing. The switches are put in a total order: hop distance
 * from a root, then GUID. An arc toward a lower switch is "up"; a legal
 * route takes up arcs only before down arcs, so no turn goes from a down arc
 * to an up arc and the channel dependency graph is acyclic on one VL (a
 * cycle would have to climb back). Every switch has an up arc (toward its
 * BFS parent) and the root has a down path to every switch, so every switch
 * reaches every other in its component.
 *
 * With LFTs a switch forwards to a LID the same way whatever arc a packet
 * came in on. So a switch that has an all-down path to the destination uses
 * it (then a packet that came down to it may continue), and only switches
 * without one go up, to the neighbour with the shortest legal remainder.
 * Among equally short choices the one with the least loaded links wins, and
 * the loads are updated after every LID (global balancing); a destination's
 * own routes are spread as in route_dfree.c.
 *
 * The root is the most central switch (least eccentricity); ties go to a
 * switch with hosts, then to the lowest GUID. On fat-trees this makes a leaf
 * the root, which keeps every host-to-host route minimal (a core root would
 * force all inter-pod traffic through itself).
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "topo/route_int.h"
#include "util/par.h"

void rt_updn_free(struct rt_updn *u)
{
	free(u->rank);
	free(u->bylevel);
	free(u->mid);
	free(u->upend);
	free(u->dir);
	free(u->dirto);
	free(u->dd);
	free(u->cost);
	free(u->fin);
	free(u->cnt);
	rt_dag_free(&u->dag);
	memset(u, 0, sizeof(*u));
}

struct rank_key {
	uint32_t dist;
	uint32_t comp;
	uint64_t guid;
	uint32_t sw;
};

static int cmp_key(const void *x, const void *y)
{
	const struct rank_key *a = x, *b = y;

	if (a->comp != b->comp)
		return a->comp < b->comp ? -1 : 1;
	if (a->dist != b->dist)
		return a->dist < b->dist ? -1 : 1;
	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	return 0;
}

/* The eccentricities of candidate roots, spread over threads (one BFS each) */
struct ecc_job {
	const struct rt_graph *g;
	const uint32_t *cand;		/* [n] */
	uint32_t *ecc;			/* [n] */
	uint32_t *scratch;		/* [workers][2 * (nsw + 1)]: dist, order */
};

static void ecc_part(void *arg, unsigned int worker, size_t b, size_t e)
{
	struct ecc_job *job = arg;
	size_t S1 = (size_t)job->g->nsw + 1;
	uint32_t *dist = job->scratch + 2 * S1 * worker, *order = dist + S1;

	for (size_t i = b; i < e; i++) {
		uint32_t m = rt_bfs(job->g, job->cand[i], dist, order);

		job->ecc[i] = dist[order[m - 1]];
	}
}

/*
 * The root of the component of s: least eccentricity, then hosts, then
 * GUID. 0 or -ENOMEM; comp_nodes gets the component.
 */
static int pick_root(const struct rt_graph *g, uint32_t s, uint32_t *dist, uint32_t *order,
		     uint32_t *comp_nodes, uint32_t *ncomp, uint32_t *root)
{
	uint32_t n = rt_bfs(g, s, dist, order), best = s, best_ecc = RT_INF, nc = 0;
	uint32_t step = 1, *cand, *ecc;
	struct ecc_job job = { .g = g };
	size_t chunk = 8;
	unsigned int nw;

	memcpy(comp_nodes, order, n * sizeof(*order));
	*ncomp = n;
	/* Every switch a candidate up to a few thousand; a sample beyond */
	if (n > 2048)
		step = n / 256;
	cand = malloc(((size_t)n + 1) * sizeof(*cand));
	ecc = malloc(((size_t)n + 1) * sizeof(*ecc));
	for (uint32_t i = 0; cand && i < n; i += step)
		cand[nc++] = comp_nodes[i];
	nw = par_workers(nc, chunk);
	job.scratch = malloc(2 * ((size_t)g->nsw + 1) * nw * sizeof(*job.scratch));
	if (!cand || !ecc || !job.scratch) {
		free(cand);
		free(ecc);
		free(job.scratch);
		return -ENOMEM;
	}
	job.cand = cand;
	job.ecc = ecc;
	par_for(nc, chunk, ecc_part, &job);
	for (uint32_t i = 0; i < nc; i++) {
		uint32_t c = cand[i];

		if (ecc[i] < best_ecc ||
		    (ecc[i] == best_ecc && (g->nsrc[c] > 0) > (g->nsrc[best] > 0)) ||
		    (ecc[i] == best_ecc && (g->nsrc[c] > 0) == (g->nsrc[best] > 0) &&
		     g->f->switches[c]->guid < g->f->switches[best]->guid)) {
			best = c;
			best_ecc = ecc[i];
		}
	}
	free(cand);
	free(ecc);
	free(job.scratch);
	*root = best;
	return 0;
}

int rt_updn_init(const struct rt_graph *g, struct rt_updn *u)
{
	uint32_t S = g->nsw, nc = 0, comp = 0;
	uint32_t *dist, *order, *members;
	struct rank_key *keys;
	int r = -ENOMEM;

	memset(u, 0, sizeof(*u));
	u->rank = malloc((S + 1) * sizeof(*u->rank));
	u->bylevel = malloc((S + 1) * sizeof(*u->bylevel));
	u->dd = malloc((S + 1) * sizeof(*u->dd));
	u->cost = malloc((S + 1) * sizeof(*u->cost));
	u->fin = malloc((S + 1) * sizeof(*u->fin));
	u->cnt = malloc((S + 2) * sizeof(*u->cnt));
	u->mid = malloc((S + 1) * sizeof(*u->mid));
	u->upend = malloc((S + 1) * sizeof(*u->upend));
	u->dir = malloc((g->narcs + 1) * sizeof(*u->dir));
	u->dirto = malloc((g->narcs + 1) * sizeof(*u->dirto));
	dist = malloc((S + 1) * sizeof(*dist));
	order = malloc((S + 1) * sizeof(*order));
	members = malloc((S + 1) * sizeof(*members));
	keys = malloc((S + 1) * sizeof(*keys));
	if (!u->rank || !u->bylevel || !u->dd || !u->cost || !u->fin || !u->cnt ||
	    !u->mid || !u->upend || !u->dir || !u->dirto || rt_dag_init(&u->dag, g) < 0 || !dist ||
	    !order || !members || !keys)
		goto out;
	for (uint32_t s = 0; s < S; s++)
		keys[s].comp = RT_INF;
	u->root = RT_NONE;
	for (uint32_t s = 0; s < S; s++) {
		uint32_t root, n;

		if (keys[s].comp != RT_INF)
			continue;
		r = pick_root(g, s, dist, order, members, &nc, &root);
		if (r < 0)
			goto out;
		r = -ENOMEM;
		if (u->root == RT_NONE)
			u->root = root;
		n = rt_bfs(g, root, dist, order);
		/*
		 * The root must reach its whole component, s included, and no
		 * switch of another: else the graph is not symmetric and the
		 * order would be partial. An error, never a guess.
		 */
		if (n != nc || dist[s] == RT_INF) {
			r = -EPROTO;
			goto out;
		}
		for (uint32_t i = 0; i < n; i++) {
			uint32_t t = order[i];

			if (keys[t].comp != RT_INF) {
				r = -EPROTO;
				goto out;
			}
			keys[t].comp = comp;
			keys[t].dist = dist[t];
			keys[t].guid = g->f->switches[t]->guid;
			keys[t].sw = t;
		}
		comp++;
	}
	qsort(keys, S, sizeof(*keys), cmp_key);
	for (uint32_t i = 0; i < S; i++) {
		u->bylevel[i] = keys[i].sw;
		u->rank[keys[i].sw] = i;
	}
	for (uint32_t v = 0; v < S; v++) {
		uint32_t k = g->off[v];

		for (int up = 0; up < 2; up++) {
			for (uint32_t a = g->off[v]; a < g->off[v + 1]; a++) {
				uint32_t x = g->to[a];

				if (up ? u->rank[x] < u->rank[v] : u->rank[x] > u->rank[v]) {
					u->dir[k] = a;
					u->dirto[k++] = x;
				}
			}
			if (!up)
				u->mid[v] = k;
		}
		u->upend[v] = k;
	}
	r = 0;
out:
	free(dist);
	free(order);
	free(members);
	free(keys);
	if (r < 0)
		rt_updn_free(u);
	return r;
}

void rt_dag_updn(struct rt_dag *dag, const struct rt_graph *g, struct rt_updn *u, uint32_t t)
{
	uint32_t S = g->nsw, *dd = u->dd, *hops = dag->hops, maxh = 0, *cnt = u->cnt, k = 0;

	if (dag->root == t)
		return;
	dag->root = t;
	for (uint32_t s = 0; s < S; s++) {
		dd[s] = RT_INF;
		hops[s] = RT_INF;
	}
	dd[t] = 0;
	hops[t] = 0;
	/*
	 * All-down paths: only switches ranked above t have one; a switch's
	 * down neighbours rank higher, so go from t's rank to the top
	 */
	for (uint32_t i = u->rank[t]; i-- > 0;) {
		uint32_t v = u->bylevel[i];

		for (uint32_t j = g->off[v]; j < u->mid[v]; j++) {
			uint32_t x = u->dirto[j];

			if (dd[x] != RT_INF && dd[x] + 1 < dd[v])
				dd[v] = dd[x] + 1;
		}
		hops[v] = dd[v];
	}
	/* The others go up, to the neighbour with the shortest remainder */
	for (uint32_t i = 0; i < S; i++) {
		uint32_t v = u->bylevel[i];

		if (v == t || dd[v] != RT_INF)
			continue;
		for (uint32_t j = u->mid[v]; j < u->upend[v]; j++) {
			uint32_t x = u->dirto[j];

			if (hops[x] != RT_INF && hops[x] + 1 < hops[v])
				hops[v] = hops[x] + 1;
		}
	}
	/* Order by hops, and the legal shortest next hops of each switch */
	for (uint32_t s = 0; s < S; s++)
		if (hops[s] != RT_INF && hops[s] > maxh)
			maxh = hops[s];
	memset(cnt, 0, (size_t)(maxh + 2) * sizeof(*cnt));
	for (uint32_t s = 0; s < S; s++)
		if (hops[s] != RT_INF)
			cnt[hops[s] + 1]++;
	for (uint32_t i = 1; i <= maxh + 1; i++)
		cnt[i] += cnt[i - 1];
	for (uint32_t s = 0; s < S; s++)
		if (hops[s] != RT_INF)
			dag->order[cnt[hops[s]]++] = s;
	dag->n = cnt[maxh];
	for (uint32_t i = 0; i < dag->n; i++) {
		uint32_t v = dag->order[i];
		bool down = dd[v] != RT_INF;
		uint32_t lo = down ? g->off[v] : u->mid[v], hi = down ? u->mid[v] : u->upend[v];
		const uint32_t *rem = down ? dd : hops;

		dag->off[i] = k;
		for (uint32_t j = lo; v != t && j < hi; j++) {
			uint32_t x = u->dirto[j];

			if (rem[x] + 1 == rem[v]) {
				dag->to[k] = x;
				dag->arcs[k++] = u->dir[j];
			}
		}
	}
	dag->off[dag->n] = k;
}

/*
 * The DAGs of a list of roots, made ahead on a thread of their own: a
 * destination's DAG depends on its switch alone, never on the loads the
 * trees before it added, so making it while those trees are balanced
 * changes nothing in the routes. RT_PIPE_DEPTH DAGs are kept at once.
 */
#define RT_PIPE_DEPTH	4

struct rt_updn_pipe {
	const struct rt_graph *g;
	struct rt_updn w;		/* rank and bylevel shared; dd and cnt its own */
	const uint32_t *roots;
	uint32_t n;
	struct rt_dag dag[RT_PIPE_DEPTH];
	pthread_t thread;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint32_t made;			/* roots[0 .. made) have their DAG */
	uint32_t used;			/* the caller holds roots[used]'s */
	uint32_t held;			/* the caller's last j (its thread only) */
	bool stop;
};

static void *pipe_main(void *arg)
{
	struct rt_updn_pipe *p = arg;

	for (uint32_t j = 0; j < p->n; j++) {
		struct rt_dag *dag = &p->dag[j % RT_PIPE_DEPTH];

		pthread_mutex_lock(&p->mu);
		while (!p->stop && j >= p->used + RT_PIPE_DEPTH)
			pthread_cond_wait(&p->cv, &p->mu);
		pthread_mutex_unlock(&p->mu);
		if (p->stop)
			break;
		dag->root = RT_NONE;
		rt_dag_updn(dag, p->g, &p->w, p->roots[j]);
		pthread_mutex_lock(&p->mu);
		p->made = j + 1;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
	}
	return NULL;
}

void rt_updn_pipe_free(struct rt_updn_pipe *p)
{
	if (!p)
		return;
	if (p->started) {
		pthread_mutex_lock(&p->mu);
		p->stop = true;
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		pthread_join(p->thread, NULL);
	}
	pthread_mutex_destroy(&p->mu);
	pthread_cond_destroy(&p->cv);
	for (unsigned int i = 0; i < RT_PIPE_DEPTH; i++)
		rt_dag_free(&p->dag[i]);
	free(p->w.dd);
	free(p->w.cnt);
	free(p);
}

int rt_updn_pipe_new(const struct rt_graph *g, const struct rt_updn *u, const uint32_t *roots,
		     uint32_t n, struct rt_updn_pipe **out)
{
	struct rt_updn_pipe *p = calloc(1, sizeof(*p));
	bool ok;

	*out = NULL;
	if (!p)
		return -ENOMEM;
	p->g = g;
	p->w = *u;
	p->w.dd = malloc(((size_t)g->nsw + 1) * sizeof(*p->w.dd));
	p->w.cnt = malloc(((size_t)g->nsw + 2) * sizeof(*p->w.cnt));
	p->roots = roots;
	p->n = n;
	p->held = RT_NONE;
	pthread_mutex_init(&p->mu, NULL);
	pthread_cond_init(&p->cv, NULL);
	ok = p->w.dd && p->w.cnt;
	for (unsigned int i = 0; ok && i < RT_PIPE_DEPTH; i++)
		ok = rt_dag_init(&p->dag[i], g) == 0;
	if (!ok) {
		rt_updn_pipe_free(p);
		return -ENOMEM;
	}
	/* One thread only: each DAG is made when asked for */
	if (par_threads() > 1 && n > 1)
		p->started = pthread_create(&p->thread, NULL, pipe_main, p) == 0;
	*out = p;
	return 0;
}

const struct rt_dag *rt_updn_pipe_dag(struct rt_updn_pipe *p, uint32_t j)
{
	struct rt_dag *dag = &p->dag[j % RT_PIPE_DEPTH];

	if (!p->started) {
		if (dag->root != p->roots[j] || p->made <= j) {
			dag->root = RT_NONE;
			rt_dag_updn(dag, p->g, &p->w, p->roots[j]);
			p->made = j + 1;
		}
		return dag;
	}
	if (j == p->held)
		return dag;
	p->held = j;
	pthread_mutex_lock(&p->mu);
	p->used = j;
	pthread_cond_broadcast(&p->cv);
	while (p->made <= j)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	return dag;
}

void rt_updn_tree(const struct rt_graph *g, struct rt_updn *u, const struct rt_dest *d,
		  struct rt_loads *l, bool account, uint32_t *nxt)
{
	rt_dag_updn(&u->dag, g, u, d->sw);
	rt_dag_tree(&u->dag, g, d, l, account, d->lid, u->cost, u->fin, nxt);
}

int route_updn_compute(struct fabric *f, struct route_result *res, struct route_stats *st)
{
	struct rt_graph g;
	struct rt_updn u;
	struct rt_loads l;
	uint32_t *nxt;
	int r;

	r = rt_graph_build(f, &g);
	if (r < 0)
		return r;
	r = rt_updn_init(&g, &u);
	if (r < 0) {
		rt_graph_free(&g);
		return r;
	}
	r = rt_loads_init(&l, &g, RT_ALPHA);
	nxt = malloc((g.nsw + 1) * sizeof(*nxt));
	if (r == 0 && !nxt)
		r = -ENOMEM;
	for (uint32_t i = 0; r == 0 && i < g.ndest; i++) {
		rt_sib_mark(&g, &g.dest[i]);
		rt_updn_tree(&g, &u, &g.dest[i], &l, true, nxt);
		rt_sib_clear(&g);
		rt_tree_write(&g, &g.dest[i], nxt);
	}
	if (r == 0) {
		res->vls_used = 1;
		st->method = "up/down";
	}
	free(nxt);
	rt_loads_free(&l);
	rt_updn_free(&u);
	rt_graph_free(&g);
	return r;
}
