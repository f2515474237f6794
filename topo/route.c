// SPDX-License-Identifier: MIT
/*
 * The routing front end: engine registry, route_compute (LFTs, stats and
 * the SL/VL result), ordered engine lists with verified fallback, and the
 * SL and SL-to-VL queries.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "topo/route_int.h"
#include "util/macros.h"
#include "util/par.h"

double route_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static const struct route_engine engines[] = {
	{ "dfree", true, "link-balanced, deadlock-free within the VL budget on any topology",
	  route_dfree_compute },
	{ "updn", true, "up*/down* from one root, 1 VL, any topology", route_updn_compute },
	{ "layered", true, "balanced min-hop spread over VLs (DFSSSP-like); fails when they do not fit",
	  route_layered_compute },
	{ "minhop", false, "min-hop, port-balanced; not deadlock-free on tori and irregular fabrics",
	  route_minhop_compute },
};

#define NENGINES (ARRAY_SIZE(engines))

const struct route_engine *route_engine_find(const char *name)
{
	for (size_t i = 0; i < NENGINES; i++)
		if (!strcmp(engines[i].name, name))
			return &engines[i];
	return NULL;
}

const struct route_engine *route_engine_at(unsigned int i)
{
	return i < NENGINES ? &engines[i] : NULL;
}

int route_alloc_lfts(struct fabric *f)
{
	uint32_t len = (uint32_t)f->max_lid + 1;

	for (size_t i = 0; i < f->nswitches; i++) {
		struct fab_node *sw = f->switches[i];

		if (sw->lft_len != len) {
			uint8_t *l = realloc(sw->lft, len);

			if (!l)
				return -ENOMEM;
			sw->lft = l;
			sw->lft_len = len;
		}
		memset(sw->lft, LFT_PORT_NONE, len);
		for (unsigned int p = 0; p <= sw->num_ports; p++)
			sw->ports[p].load = 0;
	}
	return 0;
}

struct fab_node *route_attach_switch(const struct fab_port *ep, uint8_t *sw_port)
{
	if (ep->node->type == NODE_TYPE_SWITCH) {
		*sw_port = 0;
		return ep->node;
	}
	if (!fabric_port_linked(ep) || ep->peer->node->type != NODE_TYPE_SWITCH)
		return NULL;
	*sw_port = ep->peer->num;
	return ep->peer->node;
}

static unsigned int cap_vls(uint8_t vl_cap)
{
	static const unsigned int n[] = { 0, 1, 2, 4, 8, 15 };

	return vl_cap < ARRAY_SIZE(n) ? n[vl_cap] : 0;
}

unsigned int route_fabric_vls(const struct fabric *f)
{
	unsigned int vls = ROUTE_MAX_VLS;
	bool known = false;

	for (size_t i = 0; i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];

		for (unsigned int p = 1; p <= n->num_ports; p++) {
			unsigned int c;

			if (!fabric_port_linked(&n->ports[p]))
				continue;
			c = cap_vls(n->ports[p].pi.vl_cap);
			if (!c)
				continue;
			known = true;
			if (c < vls)
				vls = c;
		}
	}
	return known ? vls : 1;
}

uint8_t route_op_vls(unsigned int nvls)
{
	if (nvls <= 1)
		return 1;
	if (nvls <= 2)
		return 2;
	if (nvls <= 4)
		return 3;
	if (nvls <= 8)
		return 4;
	return 5;
}

unsigned int route_vlarb_default(unsigned int nvls, uint8_t weight, struct route_vlarb *tab,
				 unsigned int n)
{
	unsigned int k = 0;

	if (nvls < 1)
		nvls = 1;
	if (nvls > ROUTE_MAX_VLS)
		nvls = ROUTE_MAX_VLS;
	for (unsigned int vl = 0; vl < nvls && k < n; vl++) {
		tab[k].vl = (uint8_t)vl;
		tab[k].weight = weight ? weight : 255;
		k++;
	}
	return k;
}

void route_result_free(struct route_result *r)
{
	if (!r)
		return;
	free(r->sl_dest);
	free(r->sl_pair);
	free(r->updn_rank);
	free(r);
}

int rt_result_sl_pair(struct route_result *r)
{
	if (!r->sl_pair) {
		r->sl_pair = calloc((size_t)r->nsw * ((size_t)r->max_lid + 1), 1);
		if (!r->sl_pair)
			return -ENOMEM;
	}
	return 0;
}

int rt_result_sl_dest(struct route_result *r)
{
	if (!r->sl_dest) {
		r->sl_dest = calloc((size_t)r->max_lid + 1, 1);
		if (!r->sl_dest)
			return -ENOMEM;
	}
	return 0;
}

int route_path_sl(const struct route_result *r, uint16_t slid, uint16_t dlid)
{
	const struct fab_port *ep;
	struct fab_node *sw;
	uint8_t port;

	if (!r || !slid || !dlid || slid > r->max_lid || dlid > r->max_lid)
		return -ENOENT;
	ep = r->f->by_lid[slid];
	if (!ep || !r->f->by_lid[dlid])
		return -ENOENT;
	sw = route_attach_switch(ep, &port);
	return rt_path_sl_sw(r, sw ? sw->sw_idx : RT_NONE, dlid);
}

unsigned int route_vls_used(const struct route_result *r)
{
	return r && r->vls_used ? r->vls_used : 1;
}

int route_sl2vl(const struct route_result *r, const struct fab_node *n, unsigned int in,
		unsigned int out, uint8_t vl[ROUTE_NUM_SLS])
{
	unsigned int vls = route_vls_used(r);

	if (!n || in > n->num_ports || out > n->num_ports ||
	    (n->type != NODE_TYPE_SWITCH && out == 0))
		return -EINVAL;
	for (unsigned int sl = 0; sl < ROUTE_NUM_SLS; sl++)
		vl[sl] = (uint8_t)(sl % vls);
	return 0;
}

int route_sl2vl_uniform(const struct route_result *r, const struct fab_node *n,
			uint8_t vl[ROUTE_NUM_SLS])
{
	/* The tables depend on the SL alone (route_sl2vl) */
	int ret = route_sl2vl(r, n, 0, n && n->type == NODE_TYPE_SWITCH ? 0 : 1, vl);

	return ret < 0 ? ret : 1;
}

/* One thread's share of rt_post_stats: its scratch and what it found */
struct post_part {
	uint32_t *nxt, *depth, *order, *scratch, *load;
	uint64_t unreachable;
	uint32_t max_hops;
};

struct post_job {
	const struct rt_graph *g;
	struct post_part *part;
};

static void post_dests(void *arg, unsigned int worker, size_t b, size_t e)
{
	struct post_job *job = arg;
	const struct rt_graph *g = job->g;
	struct post_part *pp = &job->part[worker];

	for (size_t i = b; i < e; i++) {
		uint32_t n;

		rt_tree_read(g, &g->dest[i], pp->nxt);
		n = rt_tree_order(g, &g->dest[i], pp->nxt, pp->depth, pp->order, pp->scratch);
		pp->unreachable += g->nsw - n;
		if (n && pp->depth[pp->order[0]] > pp->max_hops)
			pp->max_hops = pp->depth[pp->order[0]];
		rt_tree_load(g, pp->nxt, pp->order, n, pp->scratch, pp->load, 1);
	}
}

/*
 * Statistics every engine gets, from the LFTs it wrote. The destinations'
 * trees are walked on several threads (util/par.h), each summing into its
 * own loads; sums and maxima merge alike in any order.
 */
int rt_post_stats(const struct rt_graph *g, struct fabric *f, struct route_stats *st)
{
	uint32_t S = g->nsw, *load;
	size_t chunk = 64;
	unsigned int nw = par_workers(g->ndest, chunk);
	struct post_part *part = calloc(nw, sizeof(*part));
	struct post_job job = { .g = g, .part = part };
	int r = -ENOMEM;

	if (!part)
		return -ENOMEM;
	for (unsigned int w = 0; w < nw; w++) {
		struct post_part *pp = &part[w];

		pp->nxt = malloc((S + 1) * sizeof(*pp->nxt));
		pp->depth = malloc((S + 1) * sizeof(*pp->depth));
		pp->order = malloc((S + 1) * sizeof(*pp->order));
		pp->scratch = malloc((S + 1) * sizeof(*pp->scratch));
		pp->load = calloc(g->narcs + 1, sizeof(*pp->load));
		if (!pp->nxt || !pp->depth || !pp->order || !pp->scratch || !pp->load)
			goto out;
	}
	st->switches = S;
	st->lids = g->ndest + g->unattached;
	st->unreachable = g->unattached * S;
	st->max_hops = 0;
	par_for(g->ndest, chunk, post_dests, &job);
	load = part[0].load;
	for (unsigned int w = 0; w < nw; w++) {
		st->unreachable += (unsigned int)part[w].unreachable;
		if (part[w].max_hops > st->max_hops)
			st->max_hops = part[w].max_hops;
		for (uint32_t a = 0; w && a < g->narcs; a++)
			load[a] += part[w].load[a];
	}
	rt_load_stats(g, load, st);
	st->max_port_load = 0;
	{
		uint64_t sum = 0;
		unsigned int used = 0;

		for (uint32_t s = 0; s < S; s++) {
			struct fab_node *sw = f->switches[s];

			for (unsigned int p = 0; p <= sw->num_ports; p++)
				sw->ports[p].load = 0;
			for (uint32_t lid = 1; lid < sw->lft_len; lid++) {
				uint8_t p = sw->lft[lid];

				if (p >= 1 && p <= sw->num_ports && f->by_lid[lid])
					sw->ports[p].load++;
			}
			for (unsigned int p = 1; p <= sw->num_ports; p++) {
				uint32_t l = sw->ports[p].load;

				if (!l)
					continue;
				sum += l;
				used++;
				if (l > st->max_port_load)
					st->max_port_load = l;
			}
		}
		st->mean_port_load = used ? (double)sum / used : 0;
	}
	r = 0;
out:
	for (unsigned int w = 0; w < nw; w++) {
		free(part[w].nxt);
		free(part[w].depth);
		free(part[w].order);
		free(part[w].scratch);
		free(part[w].load);
	}
	free(part);
	return r;
}

int route_compute(const struct route_engine *e, struct fabric *f, const struct route_opts *opts,
		  struct route_stats *st, struct route_result **res)
{
	struct route_result *rr;
	struct rt_graph g;
	unsigned int vls = route_fabric_vls(f);
	int r;

	memset(st, 0, sizeof(*st));
	if (res)
		*res = NULL;
	if (!e || !f)
		return -EINVAL;
	if (opts && opts->max_vls && opts->max_vls < vls)
		vls = opts->max_vls;
	rr = calloc(1, sizeof(*rr));
	if (!rr)
		return -ENOMEM;
	rr->f = f;
	rr->vls_budget = vls;
	rr->vls_used = 1;
	rr->max_lid = f->max_lid;
	rr->nsw = (uint32_t)f->nswitches;
	st->vls_budget = vls;
	st->deadlock_free = e->deadlock_free;
	r = route_alloc_lfts(f);
	if (r == 0)
		r = e->compute(f, rr, st);
	if (r == 0) {
		st->vls_used = rr->vls_used;
		r = rt_graph_build(f, &g);
		if (r == 0) {
			r = rt_lt_init(&g, true);
			if (r == 0)
				r = rt_post_stats(&g, f, st);
			rt_graph_free(&g);
		}
	}
	if (r < 0 || !res)
		route_result_free(rr);
	else
		*res = rr;
	return r;
}

/* Next name of a list: returns its length (0 at the end), *p moves past it */
static size_t next_name(const char **p, const char **name)
{
	const char *s = *p;
	size_t n = 0;

	while (*s && (*s == ',' || isspace((unsigned char)*s)))
		s++;
	*name = s;
	while (s[n] && s[n] != ',' && !isspace((unsigned char)s[n]))
		n++;
	*p = s + n;
	return n;
}

static const struct route_engine *find_n(const char *name, size_t n)
{
	char buf[32];

	if (n == 0 || n >= sizeof(buf))
		return NULL;
	memcpy(buf, name, n);
	buf[n] = 0;
	return route_engine_find(buf);
}

int route_list_valid(const char *list, char *bad, size_t badlen)
{
	const char *p = list, *name;
	size_t n;
	unsigned int count = 0;

	if (!list)
		return -EINVAL;
	while ((n = next_name(&p, &name)) > 0) {
		if (!find_n(name, n)) {
			if (bad && badlen) {
				size_t k = n < badlen - 1 ? n : badlen - 1;

				memcpy(bad, name, k);
				bad[k] = 0;
			}
			return -ENOENT;
		}
		count++;
	}
	return count ? 0 : -EINVAL;
}

int route_verify(const struct fabric *f, const struct route_result *r,
		 const struct route_stats *st, bool deadlock_free, struct route_check *chk,
		 const char **why)
{
	int ret = route_check(f, r, chk);

	*why = "";
	if (ret < 0) {
		*why = "verifier failed";
	} else if (chk->loops) {
		ret = -ELOOP;
		*why = "verifier: forwarding loops";
	} else if (chk->unreachable) {
		ret = -EHOSTUNREACH;
		*why = "verifier: connected endports left without a route";
	} else if (chk->vls_used > st->vls_budget) {
		ret = -ENOSPC;
		*why = "verifier: more VLs used than the budget";
	} else if (!chk->acyclic && deadlock_free) {
		ret = -EDEADLK;
		*why = "verifier: channel dependency graph has a cycle";
	}
	return ret;
}

int route_compute_list(const char *list, struct fabric *f, const struct route_opts *opts,
		       struct route_stats *st, struct route_result **res, struct route_check *chk,
		       struct route_attempt *att, unsigned int natt, unsigned int *tried)
{
	const char *p = list, *name;
	struct route_check local;
	size_t n;
	unsigned int k = 0;
	int last = -EINVAL;

	if (res)
		*res = NULL;
	if (tried)
		*tried = 0;
	if (!chk)
		chk = &local;
	last = route_list_valid(list, NULL, 0);
	if (last < 0)
		return last;
	while ((n = next_name(&p, &name)) > 0) {
		const struct route_engine *e = find_n(name, n);
		struct route_attempt a;
		struct route_result *rr = NULL;
		double t0;
		int r;

		memset(&a, 0, sizeof(a));
		memcpy(a.name, name, n < sizeof(a.name) ? n : sizeof(a.name) - 1);
		a.engine = e;
		a.why = "";
		t0 = route_now();
		r = route_compute(e, f, opts, st, &rr);
		a.compute_s = route_now() - t0;
		if (r < 0) {
			a.why = r == -ENOSPC ? "needs more VLs than the budget" :
				r == -ENOMEM ? "out of memory" : "engine failed";
		} else {
			t0 = route_now();
			r = route_verify(f, rr, st, e->deadlock_free, chk, &a.why);
			a.verify_s = route_now() - t0;
			a.acyclic = chk->acyclic;
		}
		a.err = r;
		if (att && k < natt)
			att[k] = a;
		k++;
		if (tried)
			*tried = k;
		if (r == 0) {
			if (res)
				*res = rr;
			else
				route_result_free(rr);
			return (int)(k - 1);
		}
		route_result_free(rr);
		last = r;
	}
	return last;
}
