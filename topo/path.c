// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/path.h"

#define HOPS_UNKNOWN	0xff
#define HOPS_BUSY	0xfe	/* on the walk being resolved: seeing it again is a loop */
#define HOPS_NONE	0xfd	/* no route */

struct path_table {
	const struct fabric *f;
	uint32_t stride;		/* max_lid + 1 */
	struct path_attr *sw;		/* [sw_idx * stride + lid] */
	uint32_t *stack;
};

uint8_t path_link_mtu(const struct fab_port *p)
{
	uint8_t a = p->pi.mtu_cap, b = p->peer ? p->peer->pi.mtu_cap : a;

	return a < b ? a : b;
}

uint8_t path_link_rate(const struct fab_port *p)
{
	return iba_rate_from_link(p->pi.link_width_active, fabric_port_speed(p));
}

/* The largest packet a port takes: its MTUCap, 4096 when it gave none */
static uint8_t port_mtu_cap(const struct fab_port *p)
{
	return p->pi.mtu_cap ? p->pi.mtu_cap : 5;
}

static void combine(struct path_attr *a, uint8_t mtu, uint8_t rate)
{
	if (mtu < a->mtu)
		a->mtu = mtu;
	if (iba_rate_to_dgbps(rate) < iba_rate_to_dgbps(a->rate))
		a->rate = rate;
}

static bool owns(const struct fab_port *p, uint32_t lid)
{
	return p->lid && lid >= p->lid && lid < p->lid + (1u << p->lmc);
}

/* One step from switch sw toward lid: 0 = resolved in *a, 1 = continue at *next */
static int step(const struct fabric *f, const struct fab_node *sw, uint32_t lid,
		struct path_attr *a, const struct fab_node **next)
{
	struct fab_port *out;
	uint8_t pn;

	if (lid >= sw->lft_len || (pn = sw->lft[lid]) == LFT_PORT_NONE || pn > sw->num_ports) {
		a->hops = HOPS_NONE;
		return 0;
	}
	out = &sw->ports[pn];
	if (pn == 0) {
		/*
		 * The switch itself: no link limits the rate, but port 0 takes
		 * no packet larger than its MTUCap (IBA 14.2.5.6)
		 */
		a->hops = owns(out, lid) ? 0 : HOPS_NONE;
		a->mtu = port_mtu_cap(out);
		a->rate = IBA_RATE_MAX;
		return 0;
	}
	if (!fabric_port_linked(out)) {
		a->hops = HOPS_NONE;
		return 0;
	}
	a->mtu = path_link_mtu(out);
	a->rate = path_link_rate(out);
	if (out->peer->node->type != NODE_TYPE_SWITCH) {
		a->hops = owns(out->peer, lid) ? 1 : HOPS_NONE;
		return 0;
	}
	*next = out->peer->node;
	return 1;
}

int path_table_build(const struct fabric *f, struct path_table **out)
{
	struct path_table *t = calloc(1, sizeof(*t));
	size_t S = f->nswitches;

	if (!t)
		return -ENOMEM;
	t->f = f;
	t->stride = (uint32_t)f->max_lid + 1;
	t->sw = malloc((S ? S : 1) * t->stride * sizeof(*t->sw));
	t->stack = malloc((S + 1) * sizeof(*t->stack));
	if (!t->sw || !t->stack) {
		path_table_free(t);
		return -ENOMEM;
	}
	for (size_t i = 0; i < S * t->stride; i++)
		t->sw[i].hops = HOPS_UNKNOWN;

	for (uint32_t lid = 1; lid < t->stride; lid++) {
		if (!f->by_lid[lid])
			continue;
		for (size_t s0 = 0; s0 < S; s0++) {
			const struct fab_node *cur = f->switches[s0];
			struct path_attr a;
			size_t depth = 0;

			/* Walk until a known entry, pushing the switches on the way */
			while (t->sw[cur->sw_idx * t->stride + lid].hops == HOPS_UNKNOWN) {
				const struct fab_node *next = NULL;
				struct path_attr *e = &t->sw[cur->sw_idx * t->stride + lid];

				memset(&a, 0, sizeof(a));
				if (!step(f, cur, lid, &a, &next)) {
					*e = a;
					break;
				}
				/* Keep the first link's limits while the rest resolves */
				*e = a;
				e->hops = HOPS_BUSY;
				t->stack[depth++] = cur->sw_idx;
				cur = next;
			}
			a = t->sw[cur->sw_idx * t->stride + lid];
			if (a.hops == HOPS_BUSY)
				a.hops = HOPS_NONE;	/* a loop */
			/* Unwind: each switch adds its own link */
			while (depth) {
				struct path_attr *e = &t->sw[t->stack[--depth] * t->stride + lid];

				if (a.hops >= HOPS_NONE || a.hops + 1 >= HOPS_NONE) {
					e->hops = HOPS_NONE;
				} else {
					combine(&a, e->mtu, e->rate);
					a.hops++;
					*e = a;
				}
				a = *e;
			}
		}
	}
	*out = t;
	return 0;
}

struct path_table *path_table_free(struct path_table *t)
{
	if (t) {
		free(t->sw);
		free(t->stack);
		free(t);
	}
	return NULL;
}

int path_lookup(const struct path_table *t, uint16_t slid, uint16_t dlid, struct path_attr *out)
{
	const struct fabric *f = t->f;
	struct fab_port *src, *dst;
	struct path_attr a;

	src = fabric_port_by_lid(f, slid);
	dst = fabric_port_by_lid(f, dlid);
	if (!src || !dst || dlid >= t->stride)
		return -ENOENT;
	if (src == dst) {
		/* To itself: the port's own limits */
		out->hops = 0;
		out->mtu = port_mtu_cap(src);
		out->rate = src->node->type == NODE_TYPE_SWITCH ? IBA_RATE_MAX :
			    path_link_rate(src);
		return 0;
	}
	if (src->node->type == NODE_TYPE_SWITCH) {
		/* From port 0: what it sends is bounded by its MTUCap too */
		a = t->sw[src->node->sw_idx * t->stride + dlid];
		if (a.hops < HOPS_NONE && port_mtu_cap(src) < a.mtu)
			a.mtu = port_mtu_cap(src);
	} else {
		if (!fabric_port_linked(src))
			return -EHOSTUNREACH;
		if (src->peer == dst) {
			/* Back to back, no switch */
			out->hops = 1;
			out->mtu = path_link_mtu(src);
			out->rate = path_link_rate(src);
			return 0;
		}
		if (src->peer->node->type != NODE_TYPE_SWITCH)
			return -EHOSTUNREACH;
		a = t->sw[src->peer->node->sw_idx * t->stride + dlid];
		if (a.hops < HOPS_NONE) {
			combine(&a, path_link_mtu(src), path_link_rate(src));
			a.hops++;
		}
	}
	if (a.hops >= HOPS_NONE)
		return -EHOSTUNREACH;
	*out = a;
	return 0;
}
