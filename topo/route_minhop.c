// SPDX-License-Identifier: MIT
/*
 * Min-hop routing with port balancing: for every destination LID, each
 * switch forwards through one of its ports on a shortest path, picking the
 * port that carries the fewest LIDs so far. Distances come from one BFS per
 * destination switch over the switch graph: O(S * (S + E)) time, S^2 bytes.
 * Not deadlock-free on every topology.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/route_int.h"

#define DIST_INF 0xff

struct sw_graph {
	uint32_t *adj_off;	/* CSR: neighbours of switch i at adj[adj_off[i]..] */
	uint32_t *adj;
	uint8_t *adj_port;	/* ... the port to it, in port order */
	uint32_t *load;		/* ... LIDs forwarded through that port so far */
	uint8_t *dist;		/* dist[d * S + s]: hops from switch s to switch d */
	size_t nsw;
};

static void graph_free(struct sw_graph *g)
{
	free(g->adj_off);
	free(g->adj);
	free(g->adj_port);
	free(g->load);
	free(g->dist);
}

static bool sw_link(const struct fab_port *p)
{
	return fabric_port_linked(p) && p->peer->node->type == NODE_TYPE_SWITCH;
}

static int graph_build(struct fabric *f, struct sw_graph *g)
{
	size_t S = f->nswitches, e = 0;
	uint32_t *queue;

	memset(g, 0, sizeof(*g));
	g->nsw = S;
	g->adj_off = calloc(S + 1, sizeof(*g->adj_off));
	for (size_t i = 0; i < S; i++)
		for (unsigned int p = 1; p <= f->switches[i]->num_ports; p++)
			e += sw_link(&f->switches[i]->ports[p]);
	g->adj = calloc(e ? e : 1, sizeof(*g->adj));
	g->adj_port = calloc(e ? e : 1, 1);
	g->load = calloc(e ? e : 1, sizeof(*g->load));
	g->dist = malloc(S ? S * S : 1);
	queue = malloc((S ? S : 1) * sizeof(*queue));
	if (!g->adj_off || !g->adj || !g->adj_port || !g->load || !g->dist || !queue) {
		free(queue);
		graph_free(g);
		return -ENOMEM;
	}
	e = 0;
	for (size_t i = 0; i < S; i++) {
		struct fab_node *sw = f->switches[i];

		g->adj_off[i] = (uint32_t)e;
		for (unsigned int p = 1; p <= sw->num_ports; p++) {
			if (!sw_link(&sw->ports[p]))
				continue;
			g->adj_port[e] = (uint8_t)p;
			g->adj[e++] = sw->ports[p].peer->node->sw_idx;
		}
	}
	g->adj_off[S] = (uint32_t)e;
	memset(g->dist, DIST_INF, S * S);
	/* Links are symmetric, so a BFS from d gives every switch's distance to d */
	for (size_t d = 0; d < S; d++) {
		uint8_t *dist = g->dist + d * S;
		size_t head = 0, tail = 0;

		dist[d] = 0;
		queue[tail++] = (uint32_t)d;
		while (head < tail) {
			uint32_t s = queue[head++];

			if (dist[s] >= DIST_INF - 1)
				continue;
			for (uint32_t k = g->adj_off[s]; k < g->adj_off[s + 1]; k++) {
				uint32_t n = g->adj[k];

				if (dist[n] == DIST_INF) {
					dist[n] = dist[s] + 1;
					queue[tail++] = n;
				}
			}
		}
	}
	free(queue);
	return 0;
}

int route_minhop_compute(struct fabric *f, struct route_result *res, struct route_stats *st)
{
	struct sw_graph g;
	size_t S = f->nswitches;
	int r;

	r = graph_build(f, &g);
	if (r < 0)
		return r;
	st->method = "min-hop";
	res->vls_used = 1;
	for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
		struct fab_port *ep = f->by_lid[lid];
		struct fab_node *dsw;
		uint8_t dport;

		if (!ep)
			continue;
		st->lids++;
		dsw = route_attach_switch(ep, &dport);
		if (!dsw) {
			st->unreachable += (unsigned int)S;
			continue;
		}
		const uint8_t *dist = g.dist + (size_t)dsw->sw_idx * S;

		for (size_t s = 0; s < S; s++) {
			struct fab_node *sw = f->switches[s];
			uint32_t best = UINT32_MAX;

			if (sw == dsw) {
				sw->lft[lid] = dport;
				continue;
			}
			if (dist[s] == DIST_INF) {
				st->unreachable++;
				continue;
			}
			if (dist[s] > st->max_hops)
				st->max_hops = dist[s];
			/* The first of the least loaded ports one hop nearer */
			for (uint32_t k = g.adj_off[s]; k < g.adj_off[s + 1]; k++) {
				if (dist[g.adj[k]] != dist[s] - 1)
					continue;
				if (best == UINT32_MAX || g.load[k] < g.load[best])
					best = k;
			}
			if (best == UINT32_MAX) {
				st->unreachable++;
				continue;
			}
			sw->lft[lid] = g.adj_port[best];
			g.load[best]++;
		}
	}
	/* (the ports' load fields: rt_post_stats counts them from the LFTs) */
	graph_free(&g);
	return 0;
}
