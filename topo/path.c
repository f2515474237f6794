// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/path.h"
#include "util/par.h"

#define HOPS_UNKNOWN	0xff
#define HOPS_BUSY	0xfe	/* on the walk being resolved: seeing it again is a loop */
#define HOPS_NONE	0xfd	/* no route */
#define ROW_NONE	UINT32_MAX
/* LIDs whose LFT entries are gathered from every switch at once */
#define PT_BLOCK	64

/*
 * Rows are kept for the switches CAs hang off (a PathRecord from a CA starts
 * there), LID-major: a[lid * nrows + row]. A path from a switch without
 * CAs (its port 0) is walked when asked for. The k=48 fat-tree (30.5k LIDs)
 * needs 106 MB for its 1152 edge switches where every switch's row took 264.
 */
struct path_table {
	const struct fabric *f;
	uint32_t stride;		/* max_lid + 1 */
	uint32_t nrows;
	uint32_t *row;			/* [S] row of switch sw_idx, or ROW_NONE */
	uint32_t *row_sw;		/* [nrows] the switch of each row */
	struct path_attr *a;
	/* What a step out of each switch port meets, flat: (s, p) at base[s] + p */
	uint32_t *base;			/* [S + 1] */
	struct pt_port *port;
};

/* pt_port.next besides a switch index */
#define PT_END		UINT32_MAX		/* an endport: delivered if it owns the LID */
#define PT_DEAD		(UINT32_MAX - 1)	/* not linked */

struct pt_port {
	uint32_t next;
	uint16_t lid;			/* PT_END: the endport's LIDs */
	uint8_t lmc;
	uint8_t mtu, rate;		/* the link's (port 0: the switch's own limits) */
	uint8_t hops;			/* PT_END: links to the endport (0: port 0) */
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

/* What a step out of switch port p meets, for pt_step */
static struct pt_port port_fact(const struct fab_port *p)
{
	struct pt_port x = { .next = PT_DEAD };

	if (p->num == 0) {
		/*
		 * The switch itself: no link limits the rate, but port 0 takes
		 * no packet larger than its MTUCap (IBA 14.2.5.6)
		 */
		x.next = PT_END;
		x.lid = p->lid;
		x.lmc = p->lmc;
		x.mtu = port_mtu_cap(p);
		x.rate = IBA_RATE_MAX;
		return x;
	}
	if (!fabric_port_linked(p))
		return x;
	x.mtu = path_link_mtu(p);
	x.rate = path_link_rate(p);
	if (p->peer->node->type != NODE_TYPE_SWITCH) {
		x.next = PT_END;
		x.lid = p->peer->lid;
		x.lmc = p->peer->lmc;
		x.hops = 1;
	} else {
		x.next = p->peer->node->sw_idx;
	}
	return x;
}

/*
 * One step from switch s, whose LFT says pn toward lid: 0 = resolved in
 * *a, 1 = continue at *next (*a: the limits of the link taken)
 */
static int pt_step(const struct path_table *t, uint32_t s, uint8_t pn, uint32_t lid,
		   struct path_attr *a, uint32_t *next)
{
	const struct pt_port *x;

	if (pn == LFT_PORT_NONE || pn > t->base[s + 1] - t->base[s] - 1) {
		a->hops = HOPS_NONE;
		return 0;
	}
	x = &t->port[t->base[s] + pn];
	if (x->next == PT_DEAD) {
		a->hops = HOPS_NONE;
		return 0;
	}
	a->mtu = x->mtu;
	a->rate = x->rate;
	if (x->next == PT_END) {
		bool own = x->lid && lid >= x->lid && lid < x->lid + (1u << x->lmc);

		a->hops = own ? x->hops : HOPS_NONE;
		return 0;
	}
	*next = x->next;
	return 1;
}

/* A worker's scratch: one block of LFT entries, LID-major, and one LID's walk */
struct pt_scratch {
	uint8_t *blk;			/* [PT_BLOCK * S] */
	struct path_attr *e;		/* [S] */
	uint32_t *stack;		/* [S + 1] */
};

struct pt_build {
	struct path_table *t;
	struct pt_scratch *ws;
};

/* Resolve switch s0's entry toward lid in e[] (row: the LID's LFT entries), memoised */
static void resolve(const struct path_table *t, const uint8_t *row, uint32_t lid,
		    struct pt_scratch *w, uint32_t s0)
{
	struct path_attr *e = w->e, a;
	uint32_t cur = s0, depth = 0;

	/* Walk until a known entry, pushing the switches on the way */
	while (e[cur].hops == HOPS_UNKNOWN) {
		uint32_t next = 0;

		memset(&a, 0, sizeof(a));
		if (!pt_step(t, cur, row[cur], lid, &a, &next)) {
			e[cur] = a;
			break;
		}
		/* Keep the first link's limits while the rest resolves */
		e[cur] = a;
		e[cur].hops = HOPS_BUSY;
		w->stack[depth++] = cur;
		cur = next;
	}
	a = e[cur];
	if (a.hops == HOPS_BUSY)
		a.hops = HOPS_NONE;	/* a loop */
	/* Unwind: each switch adds its own link */
	while (depth) {
		struct path_attr *x = &e[w->stack[--depth]];

		if (a.hops >= HOPS_NONE || a.hops + 1 >= HOPS_NONE) {
			x->hops = HOPS_NONE;
		} else {
			combine(&a, x->mtu, x->rate);
			a.hops++;
			*x = a;
		}
		a = *x;
	}
}

static void build_blocks(void *arg, unsigned int worker, size_t begin, size_t end)
{
	struct pt_build *b = arg;
	struct path_table *t = b->t;
	const struct fabric *f = t->f;
	struct pt_scratch *w = &b->ws[worker];
	size_t S = f->nswitches;

	for (size_t blk = begin; blk < end; blk++) {
		uint32_t lo = (uint32_t)(blk * PT_BLOCK), hi = lo + PT_BLOCK;

		if (hi > t->stride)
			hi = t->stride;
		for (size_t s = 0; s < S; s++) {
			const struct fab_node *sw = f->switches[s];

			for (uint32_t l = lo; l < hi; l++)
				w->blk[(size_t)(l - lo) * S + s] =
					l < sw->lft_len ? sw->lft[l] : LFT_PORT_NONE;
		}
		for (uint32_t lid = lo > 0 ? lo : 1; lid < hi; lid++) {
			const uint8_t *row = w->blk + (size_t)(lid - lo) * S;
			struct path_attr *out = t->a + (size_t)lid * t->nrows;

			if (!f->by_lid[lid]) {
				for (uint32_t r = 0; r < t->nrows; r++)
					out[r].hops = HOPS_NONE;
				continue;
			}
			for (size_t s = 0; s < S; s++)
				w->e[s].hops = HOPS_UNKNOWN;
			for (uint32_t r = 0; r < t->nrows; r++) {
				resolve(t, row, lid, w, t->row_sw[r]);
				out[r] = w->e[t->row_sw[r]];
			}
		}
	}
}

/* Whether a CA (or router) hangs off switch n: PathRecords start there */
static bool has_ca(const struct fab_node *n)
{
	for (unsigned int p = 1; p <= n->num_ports; p++)
		if (fabric_port_linked(&n->ports[p]) &&
		    n->ports[p].peer->node->type != NODE_TYPE_SWITCH)
			return true;
	return false;
}

int path_table_build(const struct fabric *f, struct path_table **out)
{
	struct path_table *t = calloc(1, sizeof(*t));
	size_t S = f->nswitches, nblocks;
	struct pt_build b = { .t = t };
	unsigned int nw = 0;
	int r = -ENOMEM;

	if (!t)
		return -ENOMEM;
	t->f = f;
	t->stride = (uint32_t)f->max_lid + 1;
	t->row = malloc((S + 1) * sizeof(*t->row));
	t->row_sw = malloc((S + 1) * sizeof(*t->row_sw));
	t->base = malloc((S + 1) * sizeof(*t->base));
	if (!t->row || !t->row_sw || !t->base)
		goto out;
	t->base[0] = 0;
	for (size_t s = 0; s < S; s++)
		t->base[s + 1] = t->base[s] + f->switches[s]->num_ports + 1u;
	t->port = malloc(((size_t)t->base[S] + 1) * sizeof(*t->port));
	if (!t->port)
		goto out;
	for (size_t s = 0; s < S; s++)
		for (unsigned int p = 0; p <= f->switches[s]->num_ports; p++)
			t->port[t->base[s] + p] = port_fact(&f->switches[s]->ports[p]);
	for (size_t s = 0; s < S; s++) {
		t->row[s] = ROW_NONE;
		if (has_ca(f->switches[s])) {
			t->row[s] = t->nrows;
			t->row_sw[t->nrows++] = (uint32_t)s;
		}
	}
	/* Entries of LIDs no port holds stay unknown: path_lookup never reads them */
	t->a = malloc(((size_t)t->stride * t->nrows + 1) * sizeof(*t->a));
	if (!t->a)
		goto out;
	nblocks = (t->stride + PT_BLOCK - 1) / PT_BLOCK;
	nw = par_workers(t->nrows ? nblocks : 0, 1);
	b.ws = calloc(nw, sizeof(*b.ws));
	if (!b.ws)
		goto out;
	for (unsigned int i = 0; i < nw; i++) {
		b.ws[i].blk = malloc((size_t)PT_BLOCK * S + 1);
		b.ws[i].e = malloc((S + 1) * sizeof(*b.ws[i].e));
		b.ws[i].stack = malloc((S + 1) * sizeof(*b.ws[i].stack));
		if (!b.ws[i].blk || !b.ws[i].e || !b.ws[i].stack)
			goto out;
	}
	if (t->nrows)
		par_for(nblocks, 1, build_blocks, &b);
	r = 0;
out:
	for (unsigned int i = 0; b.ws && i < nw; i++) {
		free(b.ws[i].blk);
		free(b.ws[i].e);
		free(b.ws[i].stack);
	}
	free(b.ws);
	if (r < 0)
		t = path_table_free(t);
	*out = t;
	return r;
}

struct path_table *path_table_free(struct path_table *t)
{
	if (t) {
		free(t->a);
		free(t->row);
		free(t->row_sw);
		free(t->base);
		free(t->port);
		free(t);
	}
	return NULL;
}

/*
 * From a switch without a row: the walk, adding what resolve() would (the
 * slowest rate nearest the destination wins ties, as there)
 */
static struct path_attr walk(const struct path_table *t, uint32_t s, uint32_t lid)
{
	struct path_attr a;
	uint8_t mtu = UINT8_MAX, rate = IBA_RATE_MAX;
	unsigned int links = 0;

	for (size_t n = 0; n <= t->f->nswitches; n++) {
		const struct fab_node *sw = t->f->switches[s];
		uint32_t next = 0;

		memset(&a, 0, sizeof(a));
		if (!pt_step(t, s, lid < sw->lft_len ? sw->lft[lid] : LFT_PORT_NONE, lid, &a, &next)) {
			if (a.hops >= HOPS_NONE || a.hops + links >= HOPS_NONE)
				break;
			if (mtu < a.mtu)
				a.mtu = mtu;
			if (links && iba_rate_to_dgbps(rate) < iba_rate_to_dgbps(a.rate))
				a.rate = rate;
			a.hops = (uint8_t)(a.hops + links);
			return a;
		}
		if (a.mtu < mtu)
			mtu = a.mtu;
		if (!links || iba_rate_to_dgbps(a.rate) <= iba_rate_to_dgbps(rate))
			rate = a.rate;
		links++;
		s = next;
	}
	/* A loop, too long, or no way */
	a.hops = HOPS_NONE;
	return a;
}

int path_lookup(const struct path_table *t, uint16_t slid, uint16_t dlid, struct path_attr *out)
{
	const struct fabric *f = t->f;
	const struct fab_node *sw;
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
		sw = src->node;
		a = t->row[sw->sw_idx] != ROW_NONE ?
		    t->a[(size_t)dlid * t->nrows + t->row[sw->sw_idx]] : walk(t, sw->sw_idx, dlid);
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
		sw = src->peer->node;
		if (sw->type != NODE_TYPE_SWITCH)
			return -EHOSTUNREACH;
		/* A CA hangs off sw: it has a row */
		a = t->a[(size_t)dlid * t->nrows + t->row[sw->sw_idx]];
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
