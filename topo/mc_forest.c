// SPDX-License-Identifier: MIT
/*
 * Multicast forwarding: one tree per group over the switches, turned into
 * MulticastForwardingTable entries (IBA 14.2.5.12, 18.2.4.3.3).
 *
 * A group's tree is the union of the unicast routes from every switch with
 * a member toward one root switch: those routes form a tree already (one
 * next hop per switch toward a LID), verified loop-free. A switch forwards
 * a multicast packet out of every port in the MLID's mask but the one it
 * came in on, so a packet from any member reaches every switch of the tree
 * exactly once, and every receiving member's port once.
 *
 * Deadlock: multicast packets share VLs with unicast ones. At a tree switch
 * a packet in from one tree link leaves on all the others: a turn between
 * every pair of its tree links, in both directions. Those turns are added to
 * the channel dependency graph of the unicast routes on the group's VL and
 * must keep it acyclic (a Pearce-Kelly ordered CDG, route_cdg.c); a root
 * whose tree would close a cycle is not taken. On a fat-tree, a tree rooted
 * at a top switch has only up-to-up, up-to-down and down-to-down turns, which
 * up*-down* unicast routes allow: the root search prefers the switches with
 * the smallest eccentricity toward the members, which are the top ones.
 * Among equally good roots the one with the fewest trees wins, so groups
 * spread over the spine.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/mc.h"
#include "topo/route_int.h"

#define MAX_WALK		64	/* LFT hops before a walk is called a loop */
#define ROOT_TRIES		64	/* candidate roots tried against the CDG */
#define TREE_WORK_MAX		(UINT64_C(1) << 22)	/* CDG arcs searched per tree */
#define HOPS_NONE		255

/* The state of one (block, position) of one switch's MFT */
#define BS_KNOWN		0x1	/* have[] holds what the switch holds */
#define BS_QUEUED		0x2	/* waiting in the queue */
#define BS_INFLIGHT		0x4	/* handed out, not done yet */

struct mc_sw {
	struct fab_node *n;
	uint8_t npos;			/* 16-port positions: ports 0..num_ports */
	uint16_t nblk;			/* blocks allocated */
	uint16_t cap;			/* MFT entries it holds (MulticastFDBCap) */
	uint16_t *want, *have;		/* [nblk][npos][32] */
	uint8_t *state;			/* [nblk * npos] BS_* */
	uint32_t roots;			/* trees rooted here */
};

struct mc_tree {
	uint32_t root;			/* switch index, RT_NONE: no tree */
	uint8_t vl;
	bool in_cdg;			/* its turns are in cdg[vl] */
	bool unsafe;			/* no root kept the CDG acyclic */
	uint32_t *sw;			/* switches of the tree (and of members) */
	uint32_t *up;			/* [nsw of tree] arc to the parent, RT_NONE at root */
	uint32_t n;
	uint32_t *msw;			/* member switches, sorted */
	uint32_t nmsw;
	uint8_t *ecc;			/* [nsw] hops from the farthest member switch */
};

/* Endport by GUID: where its multicast traffic enters the switches */
struct mc_ep {
	uint64_t guid;
	uint32_t sw;			/* attach switch */
	uint8_t port;			/* port of the attach switch (0: the switch itself) */
};

struct mc_forest {
	struct fabric *f;
	const struct route_result *r;
	struct rt_graph g;
	struct mc_sw *sw;
	struct mc_tree *tree[MLID_COUNT];
	struct mc_ep *ep;		/* open addressing by GUID */
	size_t ep_size;
	struct rt_cdg cdg[ROUTE_MAX_VLS];
	uint8_t cdg_state[ROUTE_MAX_VLS];	/* 0 not built, 1 acyclic, 2 cyclic */
	uint32_t *queue;		/* (sw << 13 | blk << 4 | pos) entries, a ring */
	size_t qhead, qlen, qcap;
	uint16_t nblk;			/* blocks in use by groups */
	struct mc_forest_stats st;
	bool st_stale;			/* st needs counting again */
	/* scratch */
	uint32_t *mark, stamp;
	uint32_t *tmp;
};

static uint32_t q_pack(uint32_t sw, uint32_t blk, uint32_t pos)
{
	return sw << 13 | blk << 4 | pos;
}

static size_t ep_hash(uint64_t g, size_t size)
{
	g ^= g >> 29;
	g *= UINT64_C(0xbf58476d1ce4e5b9);
	return (size_t)(g >> 21) & (size - 1);
}

static const struct mc_ep *ep_find(const struct mc_forest *fo, uint64_t guid)
{
	if (!fo->ep_size)
		return NULL;
	for (size_t h = ep_hash(guid, fo->ep_size);; h = (h + 1) & (fo->ep_size - 1)) {
		if (!fo->ep[h].guid)
			return NULL;
		if (fo->ep[h].guid == guid)
			return &fo->ep[h];
	}
}

static int ep_index(struct mc_forest *fo)
{
	struct fabric *f = fo->f;
	size_t n = 0;

	for (size_t i = 0; i < f->nnodes; i++)
		n += (size_t)f->nodes[i]->num_ports + 1;
	for (fo->ep_size = 64; fo->ep_size < 2 * n; fo->ep_size *= 2)
		;
	fo->ep = calloc(fo->ep_size, sizeof(*fo->ep));
	if (!fo->ep)
		return -ENOMEM;
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *nd = f->nodes[i];

		for (unsigned int pn = 0; pn <= nd->num_ports; pn++) {
			struct fab_port *p = &nd->ports[pn];
			struct fab_node *sw;
			uint8_t port;
			size_t h;

			if (!fabric_is_endport(p) || !p->guid)
				continue;
			sw = route_attach_switch(p, &port);
			if (!sw)
				continue;
			for (h = ep_hash(p->guid, fo->ep_size); fo->ep[h].guid;
			     h = (h + 1) & (fo->ep_size - 1))
				if (fo->ep[h].guid == p->guid)
					break;
			/* A GUID seen twice keeps its first place */
			if (fo->ep[h].guid)
				continue;
			fo->ep[h] = (struct mc_ep){ .guid = p->guid, .sw = sw->sw_idx, .port = port };
		}
	}
	return 0;
}

int mc_forest_new(struct fabric *f, const struct route_result *r, struct mc_forest **out)
{
	struct mc_forest *fo = calloc(1, sizeof(*fo));
	int e;

	if (!fo)
		return -ENOMEM;
	fo->f = f;
	fo->r = r;
	e = rt_graph_build(f, &fo->g);
	if (e < 0) {
		free(fo);
		return e;
	}
	fo->sw = calloc(f->nswitches ? f->nswitches : 1, sizeof(*fo->sw));
	fo->mark = calloc(f->nswitches ? f->nswitches : 1, sizeof(*fo->mark));
	fo->tmp = calloc(f->nswitches ? f->nswitches : 1, sizeof(*fo->tmp));
	if (!fo->sw || !fo->mark || !fo->tmp || ep_index(fo) < 0) {
		mc_forest_free(fo);
		return -ENOMEM;
	}
	for (size_t s = 0; s < f->nswitches; s++) {
		struct fab_node *n = f->switches[s];

		fo->sw[s].n = n;
		fo->sw[s].npos = (uint8_t)((n->num_ports + 1u + MFT_POSITION_PORTS - 1) /
					   MFT_POSITION_PORTS);
		fo->sw[s].cap = n->si_valid ? n->si.mft_cap : 0;
	}
	*out = fo;
	return 0;
}

static void tree_free(struct mc_tree *t)
{
	if (!t)
		return;
	free(t->sw);
	free(t->up);
	free(t->msw);
	free(t->ecc);
	free(t);
}

struct mc_forest *mc_forest_free(struct mc_forest *fo)
{
	if (!fo)
		return NULL;
	for (size_t i = 0; i < MLID_COUNT; i++)
		tree_free(fo->tree[i]);
	for (unsigned int v = 0; v < ROUTE_MAX_VLS; v++)
		if (fo->cdg_state[v])
			rt_cdg_free(&fo->cdg[v]);
	if (fo->sw)
		for (size_t s = 0; s < fo->g.nsw; s++) {
			free(fo->sw[s].want);
			free(fo->sw[s].have);
			free(fo->sw[s].state);
		}
	free(fo->sw);
	free(fo->ep);
	free(fo->queue);
	free(fo->mark);
	free(fo->tmp);
	rt_graph_free(&fo->g);
	free(fo);
	return NULL;
}


/* ---- MFT images ---- */

static size_t slot(const struct mc_sw *s, uint32_t blk, uint32_t pos)
{
	return ((size_t)blk * s->npos + pos) * MFT_BLOCK_SIZE;
}

static int sw_grow(struct mc_sw *s, uint16_t nblk)
{
	size_t old = (size_t)s->nblk * s->npos, n = (size_t)nblk * s->npos;
	uint16_t *w, *h;
	uint8_t *st;

	if (nblk <= s->nblk)
		return 0;
	w = realloc(s->want, n * MFT_BLOCK_SIZE * sizeof(*w));
	if (!w)
		return -ENOMEM;
	s->want = w;
	h = realloc(s->have, n * MFT_BLOCK_SIZE * sizeof(*h));
	if (!h)
		return -ENOMEM;
	s->have = h;
	st = realloc(s->state, n);
	if (!st)
		return -ENOMEM;
	s->state = st;
	memset(w + old * MFT_BLOCK_SIZE, 0, (n - old) * MFT_BLOCK_SIZE * sizeof(*w));
	memset(h + old * MFT_BLOCK_SIZE, 0, (n - old) * MFT_BLOCK_SIZE * sizeof(*h));
	memset(st + old, 0, n - old);
	s->nblk = nblk;
	return 0;
}

static int q_push(struct mc_forest *fo, uint32_t e)
{
	if (fo->qlen == fo->qcap) {
		size_t ncap = fo->qcap ? 2 * fo->qcap : 256;
		uint32_t *nq = malloc(ncap * sizeof(*nq));

		if (!nq)
			return -ENOMEM;
		for (size_t i = 0; i < fo->qlen; i++)
			nq[i] = fo->queue[(fo->qhead + i) % fo->qcap];
		free(fo->queue);
		fo->queue = nq;
		fo->qcap = ncap;
		fo->qhead = 0;
	}
	fo->queue[(fo->qhead + fo->qlen) % fo->qcap] = e;
	fo->qlen++;
	return 0;
}

/* Queue (sw, blk, pos) when the switch must be read or written there */
static int blk_check(struct mc_forest *fo, uint32_t s, uint32_t blk, uint32_t pos)
{
	struct mc_sw *w = &fo->sw[s];
	uint8_t *st = &w->state[(size_t)blk * w->npos + pos];
	size_t o = slot(w, blk, pos);

	if (*st & (BS_QUEUED | BS_INFLIGHT))
		return 0;
	if ((*st & BS_KNOWN) &&
	    !memcmp(w->want + o, w->have + o, MFT_BLOCK_SIZE * sizeof(*w->want)))
		return 0;
	*st |= BS_QUEUED;
	return q_push(fo, q_pack(s, blk, pos));
}

/* Set the mask of mlid on switch s (ports as a bitmap over positions) */
static int want_set(struct mc_forest *fo, uint32_t s, uint16_t mlid, const uint16_t *mask)
{
	struct mc_sw *w = &fo->sw[s];
	uint32_t i = mlid - LID_MCAST_MIN, blk = i / MFT_BLOCK_SIZE, k = i % MFT_BLOCK_SIZE;
	int e;

	if (i >= w->cap)
		return 0;	/* beyond its table: counted by the caller */
	e = sw_grow(w, (uint16_t)(blk + 1));
	if (e < 0)
		return e;
	for (uint32_t pos = 0; pos < w->npos; pos++) {
		uint16_t *cur = &w->want[slot(w, blk, pos) + k];

		if (*cur == mask[pos])
			continue;
		*cur = mask[pos];
		e = blk_check(fo, s, blk, pos);
		if (e < 0)
			return e;
	}
	return 0;
}

bool mc_forest_next(struct mc_forest *fo, struct mc_block *b)
{
	while (fo->qlen) {
		uint32_t e = fo->queue[fo->qhead];
		uint32_t s = e >> 13, blk = (e >> 4) & 0x1ff, pos = e & 0xf;
		struct mc_sw *w = &fo->sw[s];
		uint8_t *st = &w->state[(size_t)blk * w->npos + pos];

		fo->qhead = (fo->qhead + 1) % fo->qcap;
		fo->qlen--;
		*st &= (uint8_t)~BS_QUEUED;
		b->sw = s;
		b->node = w->n;
		b->block = (uint16_t)blk;
		b->pos = (uint8_t)pos;
		b->read = !(*st & BS_KNOWN);
		if (!b->read && !memcmp(w->want + slot(w, blk, pos), w->have + slot(w, blk, pos),
					MFT_BLOCK_SIZE * sizeof(*w->want)))
			continue;
		memcpy(b->mask, w->want + slot(w, blk, pos), sizeof(b->mask));
		*st |= BS_INFLIGHT;
		return true;
	}
	return false;
}

size_t mc_forest_pending(const struct mc_forest *fo)
{
	return fo->qlen;
}

int mc_forest_done(struct mc_forest *fo, const struct mc_block *b, const uint16_t *held)
{
	struct mc_sw *w = &fo->sw[b->sw];
	uint8_t *st = &w->state[(size_t)b->block * w->npos + b->pos];

	*st &= (uint8_t)~BS_INFLIGHT;
	if (!held) {
		/* Unknown again: the next update or sweep tries it once more */
		*st &= (uint8_t)~BS_KNOWN;
		fo->st.failed++;
		return 0;
	}
	memcpy(w->have + slot(w, b->block, b->pos), held, MFT_BLOCK_SIZE * sizeof(*held));
	*st |= BS_KNOWN;
	return blk_check(fo, b->sw, b->block, b->pos);
}

int mc_forest_retry(struct mc_forest *fo)
{
	for (uint32_t s = 0; s < fo->g.nsw; s++) {
		struct mc_sw *w = &fo->sw[s];

		for (uint32_t blk = 0; blk < w->nblk && blk < fo->nblk; blk++)
			for (uint32_t pos = 0; pos < w->npos; pos++) {
				int e = blk_check(fo, s, blk, pos);

				if (e < 0)
					return e;
			}
	}
	return 0;
}

uint16_t mc_forest_want(const struct mc_forest *fo, uint32_t sw, uint16_t mlid, unsigned int pos)
{
	const struct mc_sw *w = &fo->sw[sw];
	uint32_t i = mlid - LID_MCAST_MIN, blk = i / MFT_BLOCK_SIZE;

	if (mlid < LID_MCAST_MIN || blk >= w->nblk || pos >= w->npos)
		return 0;
	return w->want[slot(w, blk, pos) + i % MFT_BLOCK_SIZE];
}

/* ---- the unicast channel dependency graph ---- */

static uint8_t sl_vl(const struct mc_forest *fo, uint32_t s, unsigned int sl)
{
	uint8_t vl[ROUTE_NUM_SLS];
	const struct fab_node *n = fo->f->switches[s];

	if (!fo->r || route_vls_used(fo->r) <= 1)
		return 0;
	if (route_sl2vl(fo->r, n, 0, 1, vl) < 0)
		return 0;
	return vl[sl & 0xf] < ROUTE_MAX_VLS ? vl[sl & 0xf] : 0;
}

/* The arc switch s forwards lid on, RT_NONE when it leaves the switches there */
static uint32_t next_arc(const struct mc_forest *fo, uint32_t s, uint16_t lid)
{
	const struct fab_node *n = fo->f->switches[s];
	uint8_t port;

	if (fo->g.lt) {
		/* LID-major copy while cdg_build walks every (LID, switch) */
		if (lid >= fo->g.lidlen)
			return RT_NONE;
		port = fo->g.lt[(size_t)lid * fo->g.nsw + s];
		if (!port || port > n->num_ports)
			return RT_NONE;
		return fo->g.parc[fo->g.pbase[s] + port];
	}
	if (lid >= n->lft_len)
		return RT_NONE;
	port = n->lft[lid];
	if (!port || port > n->num_ports)
		return RT_NONE;
	return fo->g.parc[fo->g.pbase[s] + port];
}

/*
 * Build cdg[vl] from every unicast route on that VL: the turn a -> b is used
 * when some switch forwards a LID over a and the switch a leads to forwards
 * it on over b. Order it topologically (Kahn); a cycle means the unicast
 * routes are not deadlock-free on this VL (minhop on a torus): then nothing
 * is checked there.
 */
static int cdg_build(struct mc_forest *fo, unsigned int vl)
{
	const struct rt_graph *g = &fo->g;
	struct rt_cdg *c = &fo->cdg[vl];
	uint32_t *indeg, head = 0, tail = 0;
	bool per_src = fo->r && route_vls_used(fo->r) > 1;
	int e;

	e = rt_cdg_init(c, g);
	if (e < 0)
		return e;
	/*
	 * The LFTs LID-major for the walk over every (LID, switch): one LID's
	 * row in a few cache lines, not one line per switch (a k=40 fat-tree
	 * spent most of this in misses). Freed again: tree walks are few.
	 */
	e = rt_lt_init(&fo->g, true);
	if (e < 0) {
		rt_cdg_free(c);
		return e;
	}
	for (uint32_t d = 0; d < g->ndest; d++) {
		uint16_t lid = g->dest[d].lid;

		for (uint32_t s = 0; s < g->nsw; s++) {
			uint32_t a = next_arc(fo, s, lid), b;

			if (a == RT_NONE)
				continue;
			if (per_src) {
				/* Routes from s keep their SL (and VL) to the end */
				if (sl_vl(fo, s, (unsigned int)rt_path_sl_sw(fo->r, s, lid)) != vl)
					continue;
				for (unsigned int h = 0; h < MAX_WALK; h++) {
					b = next_arc(fo, g->to[a], lid);
					if (b == RT_NONE)
						break;
					c->cnt[rt_turn(g, a, b)] = 1;
					a = b;
				}
				continue;
			}
			b = next_arc(fo, g->to[a], lid);
			if (b != RT_NONE)
				c->cnt[rt_turn(g, a, b)] = 1;
		}
	}
	free(fo->g.lt);
	fo->g.lt = NULL;
	/* Kahn: the order rt_cdg keeps from now on */
	indeg = calloc(g->narcs ? g->narcs : 1, sizeof(*indeg));
	if (!indeg) {
		rt_cdg_free(c);
		return -ENOMEM;
	}
	for (uint32_t v = 0; v < g->nsw; v++) {
		uint32_t deg = rt_deg(g, v);

		for (uint32_t i = 0; i < deg; i++)
			for (uint32_t j = 0; j < deg; j++)
				if (c->cnt[g->tbase[v] + (size_t)i * deg + j])
					indeg[g->off[v] + j]++;
	}
	for (uint32_t a = 0; a < g->narcs; a++)
		if (!indeg[a])
			c->at[tail++] = a;
	while (head < tail) {
		uint32_t x = c->at[head++], v = g->to[x], deg = rt_deg(g, v);
		const uint32_t *cnt = c->cnt + g->tbase[v] + (size_t)(g->rev[x] - g->off[v]) * deg;

		for (uint32_t j = 0; j < deg; j++)
			if (cnt[j] && --indeg[g->off[v] + j] == 0)
				c->at[tail++] = g->off[v] + j;
	}
	free(indeg);
	if (tail != g->narcs) {
		fo->cdg_state[vl] = 2;
		return 0;
	}
	for (uint32_t i = 0; i < g->narcs; i++)
		c->ord[c->at[i]] = i;
	fo->cdg_state[vl] = 1;
	return 0;
}

/* ---- trees ---- */

/* Hops from switch s to switch t along the LFTs toward t's LID (HOPS_NONE: none) */
static unsigned int hops_to(const struct mc_forest *fo, uint32_t s, uint32_t t)
{
	uint16_t lid = fo->f->switches[t]->ports[0].lid;
	unsigned int h = 0;

	if (!lid)
		return HOPS_NONE;
	while (s != t) {
		uint32_t a = next_arc(fo, s, lid);

		if (a == RT_NONE || ++h >= MAX_WALK)
			return HOPS_NONE;
		s = fo->g.to[a];
	}
	return h;
}

/*
 * Tree t's links at each of its switches, as arcs out of the switch:
 * nb[off[i] .. off[i + 1]) for t->sw[i]. Uses fo->tmp (switch -> index).
 */
static int tree_adj(struct mc_forest *fo, const struct mc_tree *t, uint32_t **offp,
		    uint32_t **nbp)
{
	const struct rt_graph *g = &fo->g;
	uint32_t *off = calloc((size_t)t->n + 1, sizeof(*off));
	uint32_t *nb = malloc((t->n ? 2 * (size_t)t->n : 1) * sizeof(*nb));

	if (!off || !nb) {
		free(off);
		free(nb);
		return -ENOMEM;
	}
	for (uint32_t i = 0; i < t->n; i++)
		fo->tmp[t->sw[i]] = i;
	for (uint32_t i = 0; i < t->n; i++)
		if (t->up[i] != RT_NONE) {
			off[i + 1]++;
			off[fo->tmp[g->to[t->up[i]]] + 1]++;
		}
	for (uint32_t i = 0; i < t->n; i++)
		off[i + 1] += off[i];
	{
		uint32_t *fill = fo->mark;	/* borrowed: restamped before next use */

		for (uint32_t i = 0; i < t->n; i++)
			fill[i] = off[i];
		for (uint32_t i = 0; i < t->n; i++) {
			uint32_t a = t->up[i], p;

			if (a == RT_NONE)
				continue;
			nb[fill[i]++] = a;
			p = fo->tmp[g->to[a]];
			nb[fill[p]++] = g->rev[a];
		}
		memset(fill, 0, t->n * sizeof(*fill));
		fo->stamp = 0;
		memset(fo->mark, 0, g->nsw * sizeof(*fo->mark));
	}
	*offp = off;
	*nbp = nb;
	return 0;
}

/*
 * Add (or remove) the turns of tree t: at each switch, in over any tree
 * link, out over every other. An addition that would close a cycle takes
 * back what it added and returns -ELOOP.
 */
static int tree_turns(struct mc_forest *fo, struct mc_tree *t, bool add)
{
	const struct rt_graph *g = &fo->g;
	struct rt_cdg *c = &fo->cdg[t->vl];
	uint32_t *off, *nb;
	uint64_t done = 0;
	int e = tree_adj(fo, t, &off, &nb);

	if (e < 0)
		return e;
	for (uint32_t i = 0; i < t->n && !e; i++)
		for (uint32_t x = off[i]; x < off[i + 1] && !e; x++)
			for (uint32_t y = off[i]; y < off[i + 1]; y++) {
				if (x == y)
					continue;
				/* In over nb[x]'s reverse, out over nb[y] */
				if (!add) {
					rt_cdg_put(c, g->rev[nb[x]], nb[y]);
					continue;
				}
				e = rt_cdg_add(c, g->rev[nb[x]], nb[y]);
				if (e < 0)
					break;
				done++;
			}
	/* A cycle: take back, in the same order, what this tree added */
	for (uint32_t i = 0; e < 0 && i < t->n && done; i++)
		for (uint32_t x = off[i]; x < off[i + 1] && done; x++)
			for (uint32_t y = off[i]; y < off[i + 1] && done; y++)
				if (x != y) {
					rt_cdg_put(c, g->rev[nb[x]], nb[y]);
					done--;
				}
	free(off);
	free(nb);
	return e;
}

/*
 * The tree of member switches msw toward root: each member switch's LFT
 * route to the root's LID, until it meets the tree. -EHOSTUNREACH when a
 * member switch has no route there.
 */
static int tree_build(struct mc_forest *fo, struct mc_tree *t, uint32_t root)
{
	uint16_t lid = fo->f->switches[root]->ports[0].lid;
	uint32_t st = ++fo->stamp;

	if (st == UINT32_MAX) {
		memset(fo->mark, 0, fo->g.nsw * sizeof(*fo->mark));
		fo->stamp = st = 1;
	}
	t->n = 0;
	t->root = root;
	fo->mark[root] = st;
	t->sw[t->n] = root;
	t->up[t->n++] = RT_NONE;
	if (!lid && t->nmsw > 1)
		return -EHOSTUNREACH;
	for (uint32_t i = 0; i < t->nmsw; i++) {
		uint32_t s = t->msw[i];
		unsigned int h = 0;

		while (fo->mark[s] != st) {
			uint32_t a = next_arc(fo, s, lid);

			if (a == RT_NONE || ++h >= MAX_WALK)
				return -EHOSTUNREACH;
			fo->mark[s] = st;
			t->sw[t->n] = s;
			t->up[t->n++] = a;
			s = fo->g.to[a];
		}
	}
	return 0;
}

/*
 * When no tree of unicast routes fits the CDG: grow one from root, breadth
 * first, taking a link only when the turns it adds at the switch it hangs
 * from keep the CDG acyclic, until every member switch is in; then cut the
 * branches without members. Its turns stay in the CDG (t->in_cdg). -ELOOP
 * when some member switch cannot be reached that way.
 */
static int tree_grow(struct mc_forest *fo, struct mc_tree *t, uint32_t root)
{
	const struct rt_graph *g = &fo->g;
	struct rt_cdg *c = &fo->cdg[t->vl];
	uint32_t *nb = malloc((g->narcs ? g->narcs : 1) * sizeof(*nb));
	uint32_t *nbn = calloc(g->nsw ? g->nsw : 1, sizeof(*nbn));
	uint8_t *member = calloc(g->nsw ? g->nsw : 1, 1), *in = calloc(g->nsw ? g->nsw : 1, 1);
	uint32_t need = 0, head = 0, k;
	int e = 0;

	if (!nb || !nbn || !member || !in) {
		e = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < t->nmsw; i++)
		member[t->msw[i]] = 1;
	need = t->nmsw - member[root];
	in[root] = 1;
	t->n = 0;
	t->root = root;
	t->sw[t->n] = root;
	t->up[t->n++] = RT_NONE;
	while (head < t->n && need) {
		uint32_t v = t->sw[head++];

		for (uint32_t b = g->off[v]; b < g->off[v + 1] && need; b++) {
			uint32_t u = g->to[b], added = 0;
			bool ok = true;

			if (in[u])
				continue;
			for (k = 0; k < nbn[v] && ok; k++) {
				uint32_t a = nb[g->off[v] + k];

				if (rt_cdg_add(c, g->rev[a], b) < 0) {
					ok = false;
					break;
				}
				added++;
				if (rt_cdg_add(c, g->rev[b], a) < 0) {
					ok = false;
					break;
				}
				added++;
			}
			if (!ok) {
				/* Undo in the order of the additions: (a, b), (b, a), ... */
				for (k = 0; added; k++) {
					uint32_t a = nb[g->off[v] + k];

					rt_cdg_put(c, g->rev[a], b);
					added--;
					if (added) {
						rt_cdg_put(c, g->rev[b], a);
						added--;
					}
				}
				continue;
			}
			nb[g->off[v] + nbn[v]++] = b;
			nb[g->off[u] + nbn[u]++] = g->rev[b];
			in[u] = 1;
			t->sw[t->n] = u;
			t->up[t->n++] = g->rev[b];
			need -= member[u];
		}
	}
	if (need) {
		/* Take every turn back: each pair of a switch's tree links */
		for (uint32_t i = 0; i < t->n; i++) {
			uint32_t v = t->sw[i];

			for (uint32_t x = 0; x < nbn[v]; x++)
				for (uint32_t y = 0; y < nbn[v]; y++)
					if (x != y)
						rt_cdg_put(c, g->rev[nb[g->off[v] + x]],
							   nb[g->off[v] + y]);
		}
		t->n = 0;
		e = -ELOOP;
		goto out;
	}
	/* Cut leaves without members, children before parents (reverse BFS order) */
	for (uint32_t i = t->n; i-- > 1;) {
		uint32_t u = t->sw[i], up = t->up[i], v = g->to[up], eo = g->rev[up], j;

		if (member[u] || nbn[u] != 1)
			continue;
		for (j = 0; j < nbn[v]; j++) {
			uint32_t a = nb[g->off[v] + j];

			if (a == eo)
				continue;
			rt_cdg_put(c, g->rev[a], eo);
			rt_cdg_put(c, g->rev[eo], a);
		}
		for (j = 0; j < nbn[v] && nb[g->off[v] + j] != eo; j++)
			;
		nb[g->off[v] + j] = nb[g->off[v] + --nbn[v]];
		nbn[u] = 0;
		t->up[i] = RT_NONE;
		t->sw[i] = RT_NONE;
	}
	for (uint32_t i = k = 0; i < t->n; i++)
		if (t->sw[i] != RT_NONE) {
			t->sw[k] = t->sw[i];
			t->up[k++] = t->up[i];
		}
	t->n = k;
	t->in_cdg = true;
out:
	free(nb);
	free(nbn);
	free(member);
	free(in);
	return e;
}

struct cand {
	uint32_t sw;
	uint32_t key;			/* rotation among equals */
	uint8_t ecc;
	bool prev;
};

static int cmp_cand(const void *x, const void *y)
{
	const struct cand *a = x, *b = y;

	if (a->ecc != b->ecc)
		return a->ecc < b->ecc ? -1 : 1;
	if (a->prev != b->prev)
		return a->prev ? -1 : 1;
	return a->key < b->key ? -1 : a->key > b->key;
}

static int cmp_u32(const void *x, const void *y)
{
	uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;

	return a < b ? -1 : a > b;
}

/* Eccentricity of every switch toward the member switches; incremental when they only grew */
static int tree_ecc(struct mc_forest *fo, struct mc_tree *t, const uint32_t *old, uint32_t nold)
{
	uint32_t nsw = fo->g.nsw, i = 0, j = 0;
	bool grew = t->ecc != NULL;

	/* Did the set only grow? Both sorted */
	while (grew && i < nold) {
		if (j >= t->nmsw || t->msw[j] > old[i])
			grew = false;
		else if (t->msw[j] == old[i])
			i++, j++;
		else
			j++;
	}
	if (!t->ecc) {
		t->ecc = malloc(nsw);
		if (!t->ecc)
			return -ENOMEM;
	}
	if (!grew) {
		memset(t->ecc, 0, nsw);
		nold = 0;
	}
	for (i = j = 0; j < t->nmsw; j++) {
		uint32_t m = t->msw[j];

		while (i < nold && old[i] < m)
			i++;
		if (i < nold && old[i] == m)
			continue;	/* counted before */
		for (uint32_t s = 0; s < nsw; s++) {
			unsigned int h = t->ecc[s] == HOPS_NONE ? HOPS_NONE : hops_to(fo, m, s);

			if (h > t->ecc[s])
				t->ecc[s] = (uint8_t)h;
		}
	}
	return 0;
}

static void tree_clear_want(struct mc_forest *fo, struct mc_tree *t, uint16_t mlid, int *e)
{
	static const uint16_t zero[MFT_MAX_POSITIONS];

	for (uint32_t i = 0; i < t->n && !*e; i++)
		*e = want_set(fo, t->sw[i], mlid, zero);
}

/* Drop a tree's place: its turns, its root's count */
static void tree_unplace(struct mc_forest *fo, struct mc_tree *t)
{
	if (t->in_cdg)
		tree_turns(fo, t, false);
	if (t->root != RT_NONE && fo->sw[t->root].roots)
		fo->sw[t->root].roots--;
	t->in_cdg = t->unsafe = false;
	t->root = RT_NONE;
	t->n = 0;
}

/*
 * Recompute the tree of one MLID from its group (NULL: none any longer).
 * While its member switches stay the same (most joins and leaves), the
 * tree stays and only the member ports' bits change.
 */
static int group_update(struct mc_forest *fo, struct mc_group *g, uint16_t mlid)
{
	struct mc_tree *t = fo->tree[mlid - LID_MCAST_MIN];
	uint32_t nsw = fo->g.nsw, *msw = NULL, nmsw = 0;
	uint16_t *mask = NULL;
	struct cand *cand = NULL;
	uint32_t ncand = 0, chosen = RT_NONE;
	uint64_t w0;
	bool same;
	int e = 0;

	if (t)
		tree_clear_want(fo, t, mlid, &e);
	if (e < 0)
		return e;
	if (!g || !g->nmembers) {
		if (t) {
			tree_unplace(fo, t);
			tree_free(t);
			fo->tree[mlid - LID_MCAST_MIN] = NULL;
		}
		return 0;
	}
	if (!t) {
		t = calloc(1, sizeof(*t));
		if (!t)
			return -ENOMEM;
		t->root = RT_NONE;
		fo->tree[mlid - LID_MCAST_MIN] = t;
	}
	if (!t->sw) {
		t->sw = malloc(nsw * sizeof(*t->sw));
		t->up = malloc(nsw * sizeof(*t->up));
		t->msw = malloc(nsw * sizeof(*t->msw));
		if (!t->sw || !t->up || !t->msw)
			return -ENOMEM;
	}
	/* Member switches, sorted and unique */
	msw = malloc(nsw * sizeof(*msw));
	if (!msw)
		return -ENOMEM;
	fo->stamp++;
	for (uint32_t i = 0; i < g->nmembers; i++) {
		const struct mc_ep *ep = ep_find(fo, g->members[i].guid);

		if (ep && fo->mark[ep->sw] != fo->stamp) {
			fo->mark[ep->sw] = fo->stamp;
			msw[nmsw++] = ep->sw;
		}
	}
	qsort(msw, nmsw, sizeof(*msw), cmp_u32);
	same = t->root != RT_NONE && nmsw == t->nmsw &&
	       !memcmp(msw, t->msw, nmsw * sizeof(*msw));
	if (same) {
		chosen = t->root;
		goto want;
	}
	tree_unplace(fo, t);
	{
		/* The new set in t->msw, the previous one in msw (for tree_ecc) */
		uint32_t *x = t->msw, nx = t->nmsw;

		t->msw = msw;
		t->nmsw = nmsw;
		msw = x;
		nmsw = nx;
	}
	if (!t->nmsw)
		goto out;
	t->vl = sl_vl(fo, t->msw[0], g->p.sl);
	if (t->nmsw == 1) {
		/* Every member on one switch: no link carries the group */
		chosen = t->msw[0];
		e = tree_build(fo, t, chosen);
		goto place;
	}
	e = tree_ecc(fo, t, msw, nmsw);
	if (e < 0)
		goto out;
	cand = malloc(nsw * sizeof(*cand));
	if (!cand) {
		e = -ENOMEM;
		goto out;
	}
	for (uint32_t s = 0; s < nsw; s++) {
		if (t->ecc[s] == HOPS_NONE || fo->sw[s].cap <= (uint32_t)(mlid - LID_MCAST_MIN))
			continue;
		cand[ncand++] = (struct cand){
			.sw = s, .ecc = t->ecc[s],
			.prev = fo->f->switches[s]->guid == g->root_hint,
			/* fewest trees first, then a rotation by MLID among equals */
			.key = fo->sw[s].roots << 16 |
			       (uint32_t)((s + (uint32_t)mlid * 7919u) % nsw) % 65536u,
		};
	}
	qsort(cand, ncand, sizeof(*cand), cmp_cand);
	if (!fo->cdg_state[t->vl]) {
		e = cdg_build(fo, t->vl);
		if (e < 0)
			goto out;
	}
	w0 = fo->cdg[t->vl].work;
	for (uint32_t k = 0; k < ncand && k < ROOT_TRIES; k++) {
		if (tree_build(fo, t, cand[k].sw) < 0)
			continue;
		if (chosen == RT_NONE)
			chosen = cand[k].sw;
		if (fo->cdg_state[t->vl] != 1)
			break;	/* unicast already cyclic here: nothing to keep */
		if (tree_turns(fo, t, true) == 0) {
			t->in_cdg = true;
			chosen = cand[k].sw;
			break;
		}
		if (fo->cdg[t->vl].work - w0 > TREE_WORK_MAX)
			break;
	}
	/* No tree of unicast routes fits: grow one link by link */
	for (uint32_t k = 0; !t->in_cdg && fo->cdg_state[t->vl] == 1 && k < ncand &&
	     k < ROOT_TRIES && fo->cdg[t->vl].work - w0 <= TREE_WORK_MAX; k++) {
		e = tree_grow(fo, t, cand[k].sw);
		if (e == -ENOMEM)
			goto out;
		if (e == 0)
			chosen = cand[k].sw;
		e = 0;
	}
	if (chosen == RT_NONE) {
		fo->st.unroutable++;
		goto out;
	}
	if (!t->in_cdg) {
		e = tree_build(fo, t, chosen);
		if (e < 0)
			goto out;
		t->unsafe = fo->cdg_state[t->vl] == 1;
	}
place:
	if (e < 0)
		goto out;
	t->root = chosen;
	fo->sw[chosen].roots++;
	g->root_hint = fo->f->switches[chosen]->guid;
want:
	/* Masks: tree links at each switch, and the receiving members' ports */
	mask = calloc((size_t)t->n * MFT_MAX_POSITIONS, sizeof(*mask));
	if (!mask) {
		e = -ENOMEM;
		goto out;
	}
	for (uint32_t i = 0; i < t->n; i++)
		fo->tmp[t->sw[i]] = i;
	for (uint32_t i = 0; i < t->n; i++) {
		uint32_t a = t->up[i];

		if (a == RT_NONE)
			continue;
		mask[(size_t)i * MFT_MAX_POSITIONS + fo->g.port[a] / 16] |=
			(uint16_t)(1u << (fo->g.port[a] % 16));
		/* The parent's side of the same cable */
		{
			uint32_t pi = fo->tmp[fo->g.to[a]], pp = fo->g.port[fo->g.rev[a]];

			mask[(size_t)pi * MFT_MAX_POSITIONS + pp / 16] |= (uint16_t)(1u << (pp % 16));
		}
	}
	for (uint32_t i = 0; i < g->nmembers; i++) {
		const struct mc_ep *ep = ep_find(fo, g->members[i].guid);
		uint32_t ti;

		if (!ep || !(g->members[i].join_state & MC_JOIN_RECEIVES))
			continue;
		ti = fo->tmp[ep->sw];
		if (ti >= t->n || t->sw[ti] != ep->sw)
			continue;
		mask[(size_t)ti * MFT_MAX_POSITIONS + ep->port / 16] |=
			(uint16_t)(1u << (ep->port % 16));
	}
	for (uint32_t i = 0; i < t->n && !e; i++)
		e = want_set(fo, t->sw[i], mlid, mask + (size_t)i * MFT_MAX_POSITIONS);
out:
	free(msw);
	free(cand);
	free(mask);
	return e;
}

int mc_forest_update(struct mc_forest *fo, struct mc_db *db, const uint64_t *dirty)
{
	uint16_t top = mc_db_max_mlid(db);
	uint16_t nblk = top ? (uint16_t)((top - LID_MCAST_MIN) / MFT_BLOCK_SIZE + 1) : 0;
	int e;

	/* Blocks newly in use must be read (or written) everywhere */
	if (nblk > fo->nblk) {
		for (uint32_t s = 0; s < fo->g.nsw; s++) {
			struct mc_sw *w = &fo->sw[s];
			uint16_t n = w->cap ? (uint16_t)((w->cap - 1u) / MFT_BLOCK_SIZE + 1) : 0;

			if (n > nblk)
				n = nblk;
			e = sw_grow(w, n);
			if (e < 0)
				return e;
			for (uint32_t blk = fo->nblk; blk < n; blk++)
				for (uint32_t pos = 0; pos < w->npos; pos++) {
					e = blk_check(fo, s, blk, pos);
					if (e < 0)
						return e;
				}
		}
		fo->nblk = nblk;
	}
	if (dirty) {
		for (uint16_t m = mc_db_next_dirty(dirty, 0); m; m = mc_db_next_dirty(dirty, m)) {
			e = group_update(fo, mc_db_by_mlid(db, m), m);
			if (e < 0)
				return e;
		}
	} else {
		/* Every group, and every tree whose group is gone */
		for (uint32_t i = 0; i < MLID_COUNT; i++) {
			uint16_t mlid = (uint16_t)(LID_MCAST_MIN + i);
			struct mc_group *g = mc_db_by_mlid(db, mlid);

			if (!g && !fo->tree[i])
				continue;
			e = group_update(fo, g, mlid);
			if (e < 0)
				return e;
		}
	}
	fo->st_stale = true;
	return 0;
}

const struct mc_forest_stats *mc_forest_stats(struct mc_forest *fo)
{
	if (!fo->st_stale)
		return &fo->st;
	/* Statistics over all trees, when asked for (not after every join) */
	fo->st.trees = fo->st.unsafe = fo->st.unchecked = 0;
	fo->st.switches = 0;
	fo->st.max_roots = fo->st.over_cap = 0;
	for (uint32_t i = 0; i < MLID_COUNT; i++) {
		const struct mc_tree *t = fo->tree[i];

		if (!t || t->root == RT_NONE)
			continue;
		fo->st.trees++;
		fo->st.switches += t->n;
		for (uint32_t k = 0; k < t->n; k++)
			if (fo->sw[t->sw[k]].cap <= i)
				fo->st.over_cap++;
		if (t->unsafe)
			fo->st.unsafe++;
		else if (t->n > 1 && fo->cdg_state[t->vl] == 2)
			fo->st.unchecked++;
	}
	for (uint32_t s = 0; s < fo->g.nsw; s++)
		if (fo->sw[s].roots > fo->st.max_roots)
			fo->st.max_roots = fo->sw[s].roots;
	fo->st_stale = false;
	return &fo->st;
}

uint32_t mc_forest_root(const struct mc_forest *fo, uint16_t mlid)
{
	const struct mc_tree *t;

	if (mlid < LID_MCAST_MIN || mlid > LID_MCAST_MAX)
		return RT_NONE;
	t = fo->tree[mlid - LID_MCAST_MIN];
	return t ? t->root : RT_NONE;
}

/*
 * The verifier's view, from the MFTs smd wants the switches to hold and
 * the LFTs alone: a switch u whose mask for an MLID holds a port cabled to
 * switch v sends the group's packets to v, which sends them on over every
 * other port of its own mask. Those turns and the unicast routes' turns
 * must form an acyclic graph per VL.
 */
int mc_forest_check_cdg(const struct mc_forest *fo, bool *acyclic)
{
	const struct rt_graph *g = &fo->g;
	uint8_t *used = malloc(g->nturns ? g->nturns : 1);

	if (!used)
		return -ENOMEM;
	*acyclic = true;
	for (unsigned int vl = 0; vl < ROUTE_MAX_VLS && *acyclic; vl++) {
		bool any = false;

		for (uint32_t i = 0; i < MLID_COUNT && !any; i++)
			any = fo->tree[i] && fo->tree[i]->n > 1 && fo->tree[i]->vl == vl;
		if (!any || fo->cdg_state[vl] != 1)
			continue;
		memset(used, 0, g->nturns);
		/* Unicast: the turns cdg_build found (never removed: count >= 1) */
		for (size_t t = 0; t < g->nturns; t++)
			used[t] = fo->cdg[vl].cnt[t] != 0;
		for (uint32_t i = 0; i < MLID_COUNT; i++) {
			uint16_t mlid = (uint16_t)(LID_MCAST_MIN + i);

			if (!fo->tree[i] || fo->tree[i]->vl != vl)
				continue;
			for (uint32_t a = 0; a < g->narcs; a++) {
				uint32_t u = g->from[a], v = g->to[a];
				uint8_t pu = g->port[a], pv = g->port[g->rev[a]];

				if (!(mc_forest_want(fo, u, mlid, pu / 16) & (1u << (pu % 16))))
					continue;
				for (uint32_t b = g->off[v]; b < g->off[v + 1]; b++) {
					uint8_t q = g->port[b];

					if (q != pv &&
					    (mc_forest_want(fo, v, mlid, q / 16) & (1u << (q % 16))))
						used[rt_turn(g, a, b)] = 1;
				}
			}
		}
		*acyclic = rt_turns_acyclic(g, used);
	}
	free(used);
	return 0;
}
