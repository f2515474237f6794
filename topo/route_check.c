// SPDX-License-Identifier: MIT
/*
 * The route verifier: what the engines computed, checked from the LFTs, the
 * path SLs and the SL-to-VL tables alone (no engine internals).
 *
 * For every destination LID, each switch's walk along the LFTs is resolved
 * once (delivered, dead end or loop; hops). Every source endport (CA ports,
 * switch port 0) then gets its verdict from the switch it hangs off; pairs
 * whose ends lie in different switch components are "disconnected", not
 * errors.
 * The channel dependency graph has a node per (directed link, VL): each
 * source's path is walked with its SL, the VL of every hop taken from the
 * SL-to-VL table of (node, in port, out port), and every pair of consecutive
 * channels is an edge. A walk stops where the rest of it is already known:
 * arriving on the same channel (and VL) with the same SL, everything after
 * is the same. Edges out of a CA's injection channel are not stored: nothing
 * depends on such a channel, so it is on no cycle (its VL is still checked).
 * The edges are kept per switch, a bitmap of (in port, VL) x (out port, VL)
 * for VLs 0-7 (any higher VL is an error and goes to a hash set). The graph
 * is then searched for a cycle (iterative depth-first search, three
 * colours). Sources are taken switch by switch: they share the walk's
 * verdict, the SL (route_path_sl() is per source switch) and, from the
 * switch's first out link on, the path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/route_int.h"

#define NVL		16
#define ST_UNKNOWN	0
#define ST_WALKING	1
#define ST_OK		2
#define ST_DEAD		3
#define ST_LOOP		4

struct dep_set {
	uint64_t *slot;
	size_t size, used;
};

static uint64_t mix(uint64_t k)
{
	k ^= k >> 31;
	k *= UINT64_C(0x9e3779b97f4a7c15);
	k ^= k >> 29;
	return k;
}

static int dep_grow(struct dep_set *d)
{
	size_t nsize = d->size ? d->size * 2 : 4096;
	uint64_t *ns = calloc(nsize, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < d->size; i++) {
		uint64_t k = d->slot[i];
		size_t h;

		if (!k)
			continue;
		for (h = mix(k) & (nsize - 1); ns[h]; h = (h + 1) & (nsize - 1))
			;
		ns[h] = k;
	}
	free(d->slot);
	d->slot = ns;
	d->size = nsize;
	return 0;
}

/* Keys are (from << 32 | to) + 1, never 0 */
static int dep_add(struct dep_set *d, uint32_t from, uint32_t to)
{
	uint64_t k = (((uint64_t)from << 32) | to) + 1;
	size_t h;

	if ((d->used + 1) * 2 > d->size && dep_grow(d) < 0)
		return -ENOMEM;
	for (h = mix(k) & (d->size - 1); d->slot[h]; h = (h + 1) & (d->size - 1))
		if (d->slot[h] == k)
			return 0;
	d->slot[h] = k;
	d->used++;
	return 0;
}

/* A source endport */
struct src {
	const struct fab_port *p;
	uint32_t sw;			/* the switch it hangs off, RT_NONE if none */
	uint8_t in;			/* the port it enters that switch at (0: the switch) */
	uint8_t tab[ROUTE_NUM_SLS];	/* CA ports: SL-to-VL of the injection link */
};

struct checker {
	const struct fabric *f;
	const struct route_result *r;
	struct route_check *out;
	uint32_t *pbase;		/* [nnodes] global index of (node, port 0) */
	uint32_t nports;
	struct src *src;
	size_t nsrc_all;
	uint32_t *grp_off, *grp;	/* sources by switch: grp[grp_off[s] .. grp_off[s + 1]) */
	uint64_t **bits;		/* [nswitches] [(in * np + out) * 1] 8x8 VL pairs */
	uint16_t *inj;			/* [nswitches * 16] VLs CA sources at s inject SL sl on */
	uint16_t **fan;			/* [nswitches][out * 16 + sl]: VLs sources leave on */
	uint8_t *has_ca;		/* [nswitches] CA sources attached */
	uint8_t *inj_noted;		/* [nswitches * 16] inj[] counted in vl_seen/bad_vl */
	uint8_t **tab;			/* [nswitches] cached SL-to-VL per (in, out), lazily */
	uint16_t **have;		/* ... which SLs of it were used (noted) */
	uint32_t *comp;			/* [nswitches] component */
	uint8_t *state;			/* [nswitches] walk verdict for the current LID */
	uint32_t *hops;			/* [nswitches] links to the destination */
	uint32_t *stack;
	uint32_t *memo;			/* [nports * 16 SLs] arrival seen (stamp) */
	uint8_t *memo_vl;		/* ... on that VL */
	uint32_t stamp;
	uint32_t *nsrc;			/* [nswitches] CA sources attached */
	uint64_t *load;			/* [nports] routes out of a switch-to-switch port */
	uint32_t *acc, *order;
	struct dep_set deps;
	uint16_t vl_seen;
	unsigned int vls;
	int err;
};

static uint32_t gport(const struct checker *c, const struct fab_port *p)
{
	return c->pbase[p->node->idx] + p->num;
}

static bool sw_link(const struct fab_port *p)
{
	return fabric_port_linked(p) && p->peer->node->type == NODE_TYPE_SWITCH;
}

/* Channel node: (global port, VL) */
static uint32_t chan(uint32_t gp, uint8_t vl)
{
	return gp * NVL + vl;
}

static void note_vl(struct checker *c, uint8_t vl)
{
	c->vl_seen |= (uint16_t)(1u << (vl & 15));
	if (vl >= c->vls)
		c->out->bad_vl++;
}

/*
 * The VL of SL sl through switch s from port in to port out (tables read
 * once, cached); the first use of each entry is noted.
 */
static uint8_t sw_vl(struct checker *c, uint32_t s, unsigned int in, unsigned int out, int sl)
{
	const struct fab_node *sw = c->f->switches[s];
	size_t np = (size_t)sw->num_ports + 1, k = in * np + out;
	uint16_t bit = (uint16_t)(1u << (sl & 15));
	uint8_t vl;

	if (!c->tab[s]) {
		c->tab[s] = malloc(np * np * ROUTE_NUM_SLS);
		c->have[s] = calloc(np * np, sizeof(**c->have));
		if (!c->tab[s] || !c->have[s]) {
			c->err = -ENOMEM;
			return 0;
		}
	}
	if (!c->have[s][k] &&
	    route_sl2vl(c->r, sw, in, out, c->tab[s] + k * ROUTE_NUM_SLS) < 0) {
		c->err = -EINVAL;
		return 0;
	}
	vl = c->tab[s][k * ROUTE_NUM_SLS + (sl & 15)];
	if (!(c->have[s][k] & bit)) {
		c->have[s][k] |= bit;
		note_vl(c, vl);
	}
	return vl;
}

/*
 * The VLs the sources attached to switch s (entering at their own ports)
 * leave it on through port out with SL sl; each table entry noted once.
 */
static uint16_t fan_out(struct checker *c, uint32_t s, unsigned int out, int sl)
{
	const struct fab_node *sw = c->f->switches[s];
	size_t np = (size_t)sw->num_ports + 1, k = out * ROUTE_NUM_SLS + (size_t)(sl & 15);
	uint16_t m = 0;

	if (!c->fan[s]) {
		c->fan[s] = calloc(np * ROUTE_NUM_SLS, sizeof(**c->fan));
		if (!c->fan[s]) {
			c->err = -ENOMEM;
			return 0;
		}
	}
	if (c->fan[s][k])
		return c->fan[s][k];
	for (uint32_t g = c->grp_off[s]; g < c->grp_off[s + 1]; g++) {
		uint8_t vl = sw_vl(c, s, c->src[c->grp[g]].in, out, sl);

		m |= (uint16_t)(1u << (vl & 15));
	}
	c->fan[s][k] = m;
	return m;
}

static void components(struct checker *c)
{
	const struct fabric *f = c->f;
	uint32_t ncomp = 0;

	for (size_t i = 0; i < f->nswitches; i++)
		c->comp[i] = UINT32_MAX;
	for (size_t i = 0; i < f->nswitches; i++) {
		uint32_t sp = 0;

		if (c->comp[i] != UINT32_MAX)
			continue;
		c->comp[i] = ncomp;
		c->stack[sp++] = (uint32_t)i;
		while (sp) {
			const struct fab_node *sw = f->switches[c->stack[--sp]];

			for (unsigned int p = 1; p <= sw->num_ports; p++) {
				const struct fab_port *pp = &sw->ports[p];
				uint32_t t;

				if (!sw_link(pp))
					continue;
				t = pp->peer->node->sw_idx;
				if (c->comp[t] == UINT32_MAX) {
					c->comp[t] = ncomp;
					c->stack[sp++] = t;
				}
			}
		}
		ncomp++;
	}
}

/* Where does the LFT walk from switch s toward lid end? Memoised per LID */
static uint8_t resolve(struct checker *c, uint32_t s, uint16_t lid, const struct fab_port *dst)
{
	const struct fabric *f = c->f;
	uint32_t sp = 0, cur = s, top_hops = 0;
	uint8_t verdict;

	for (;;) {
		const struct fab_node *sw = f->switches[cur];
		const struct fab_port *op;
		uint8_t out;

		if (c->state[cur] == ST_WALKING) {
			verdict = ST_LOOP;
			break;
		}
		if (c->state[cur] != ST_UNKNOWN) {
			/* cur is resolved; the walk so far ends in it */
			verdict = c->state[cur];
			top_hops = c->hops[cur] + 1;
			break;
		}
		c->state[cur] = ST_WALKING;
		c->stack[sp++] = cur;
		out = lid < sw->lft_len ? sw->lft[lid] : LFT_PORT_NONE;
		if (out == 0) {
			verdict = dst == &sw->ports[0] ? ST_OK : ST_DEAD;
			top_hops = 0;
			break;
		}
		if (out > sw->num_ports || !fabric_port_linked(&sw->ports[out])) {
			verdict = ST_DEAD;
			break;
		}
		op = sw->ports[out].peer;
		if (op == dst) {
			verdict = ST_OK;
			top_hops = 1;
			break;
		}
		if (op->node->type != NODE_TYPE_SWITCH) {
			verdict = ST_DEAD;
			break;
		}
		cur = op->node->sw_idx;
	}
	for (uint32_t i = sp; i-- > 0;) {
		c->state[c->stack[i]] = verdict;
		c->hops[c->stack[i]] = top_hops + (sp - 1 - i);
	}
	return c->state[s];
}

/*
 * The dependency from channel `from` (entering switch s at port in) to
 * (s, out) on VL vout: into s's bitmap, or the hash set for VLs above 7.
 */
static int dep_note(struct checker *c, uint32_t s, unsigned int in, uint32_t from,
		    unsigned int out, uint8_t vout, uint32_t to)
{
	const struct fab_node *sw = c->f->switches[s];
	size_t np = (size_t)sw->num_ports + 1;
	uint8_t vin = (uint8_t)(from % NVL);

	if (vin >= 8 || vout >= 8)
		return dep_add(&c->deps, from, to);
	if (!c->bits[s]) {
		c->bits[s] = calloc(np * np, sizeof(uint64_t));
		if (!c->bits[s])
			return -ENOMEM;
	}
	c->bits[s][in * np + out] |= 1ull << (vin * 8 + vout);
	return 0;
}

/*
 * Record the dependencies of the path from switch s (entered at port in over
 * channel from; RT_NONE: from the switch itself or a CA, not stored) toward
 * lid on SL sl, until its end or a known remainder. (resolve() said the walk
 * arrives.)
 */
static int walk_deps(struct checker *c, uint32_t s, unsigned int in, uint32_t from,
		     uint16_t lid, int sl)
{
	const struct fabric *f = c->f;

	for (unsigned int guard = 0; guard <= f->nswitches; guard++) {
		const struct fab_node *sw = f->switches[s];
		uint8_t out = sw->lft[lid], vout;
		const struct fab_port *op;
		uint32_t to;

		if (out == 0)
			return 0;
		if (from != RT_NONE) {
			/* Arrived on this channel with this SL before: the rest is known */
			size_t m = (size_t)(from / NVL) * ROUTE_NUM_SLS + (size_t)(sl & 15);

			if (c->memo[m] == c->stamp && c->memo_vl[m] == from % NVL)
				return 0;
			c->memo[m] = c->stamp;
			c->memo_vl[m] = (uint8_t)(from % NVL);
		}
		vout = sw_vl(c, s, in, out, sl);
		if (c->err)
			return c->err;
		to = chan(gport(c, &sw->ports[out]), vout);
		if (from != RT_NONE && dep_note(c, s, in, from, out, vout, to) < 0)
			return -ENOMEM;
		op = sw->ports[out].peer;
		if (op->node->type != NODE_TYPE_SWITCH)
			return 0;
		s = op->node->sw_idx;
		in = op->num;
		from = to;
	}
	return 0;
}

/* Count the routes of CA sources toward the current LID on every switch link */
static void count_loads(struct checker *c, uint16_t lid)
{
	const struct fabric *f = c->f;
	uint32_t S = (uint32_t)f->nswitches, maxh = 0, n, *cnt = c->acc;

	for (uint32_t s = 0; s < S; s++)
		if (c->state[s] == ST_OK && c->hops[s] > maxh)
			maxh = c->hops[s];
	/* counting sort by hops, farthest first */
	memset(cnt, 0, (size_t)(maxh + 2) * sizeof(*cnt));
	for (uint32_t s = 0; s < S; s++)
		if (c->state[s] == ST_OK)
			cnt[maxh - c->hops[s] + 1]++;
	for (uint32_t i = 1; i <= maxh + 1; i++)
		cnt[i] += cnt[i - 1];
	for (uint32_t s = 0; s < S; s++)
		if (c->state[s] == ST_OK)
			c->order[cnt[maxh - c->hops[s]]++] = s;
	n = cnt[maxh];
	for (uint32_t i = 0; i < n; i++)
		c->acc[c->order[i]] = c->nsrc[c->order[i]];
	for (uint32_t i = 0; i < n; i++) {
		uint32_t s = c->order[i];
		const struct fab_node *sw = f->switches[s];
		uint8_t out = sw->lft[lid];
		const struct fab_port *op;

		if (!c->acc[s] || out == 0)
			continue;
		op = sw->ports[out].peer;
		if (op->node->type != NODE_TYPE_SWITCH)
			continue;
		c->load[gport(c, &sw->ports[out])] += c->acc[s];
		c->acc[op->node->sw_idx] += c->acc[s];
	}
}

/* Iterative DFS over the dependency graph; a cycle found is noted in c->out */
static int find_cycle(struct checker *c, bool *acyclic)
{
	struct dep_set *d = &c->deps;
	uint32_t nn = c->nports * NVL, *off, *adj, *it, *stk, sp;
	uint8_t *color;
	int r = -ENOMEM;

	uint64_t nedges = d->used;

	*acyclic = true;
	for (size_t s = 0; s < c->f->nswitches; s++) {
		size_t np = (size_t)c->f->switches[s]->num_ports + 1;

		for (size_t k = 0; c->bits[s] && k < np * np; k++)
			nedges += (uint64_t)__builtin_popcountll(c->bits[s][k]);
	}
	c->out->dependencies = nedges;
	off = calloc((size_t)nn + 1, sizeof(*off));
	adj = malloc((nedges ? nedges : 1) * sizeof(*adj));
	it = malloc(((size_t)nn + 1) * sizeof(*it));
	stk = malloc(((size_t)nn + 1) * sizeof(*stk));
	color = calloc((size_t)nn + 1, 1);
	if (!off || !adj || !it || !stk || !color)
		goto out;
	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < d->size; i++)
			if (d->slot[i]) {
				uint64_t key = d->slot[i] - 1;

				if (pass)
					adj[it[key >> 32]++] = (uint32_t)key;
				else
					off[(key >> 32) + 1]++;
			}
		for (size_t s = 0; s < c->f->nswitches; s++) {
			const struct fab_node *sw = c->f->switches[s];
			size_t np = (size_t)sw->num_ports + 1;

			for (size_t k = 0; c->bits[s] && k < np * np; k++) {
				uint64_t b = c->bits[s][k];
				const struct fab_port *ip = &sw->ports[k / np];
				uint32_t gin, gout;

				if (!b)
					continue;
				gin = gport(c, ip->peer);
				gout = gport(c, &sw->ports[k % np]);
				for (; b; b &= b - 1) {
					unsigned int bit = (unsigned int)__builtin_ctzll(b);
					uint32_t from = chan(gin, (uint8_t)(bit / 8));

					if (pass)
						adj[it[from]++] = chan(gout, (uint8_t)(bit % 8));
					else
						off[from + 1]++;
				}
			}
		}
		if (!pass) {
			for (uint32_t v = 0; v < nn; v++)
				off[v + 1] += off[v];
			memcpy(it, off, (size_t)nn * sizeof(*it));
		}
	}
	for (uint32_t root = 0; root < nn && *acyclic; root++) {
		if (color[root] || off[root] == off[root + 1])
			continue;
		sp = 0;
		stk[sp++] = root;
		color[root] = 1;
		it[root] = off[root];
		while (sp) {
			uint32_t v = stk[sp - 1], w;

			if (it[v] == off[v + 1]) {
				color[v] = 2;
				sp--;
				continue;
			}
			w = adj[it[v]++];
			if (color[w] == 1) {
				/* w is on the stack: the cycle runs from w to v */
				uint32_t len = 1, gp = w / NVL;

				while (len < sp && stk[sp - len] != w)
					len++;
				c->out->cycle_len = len;
				c->out->cycle_vl = (uint8_t)(w % NVL);
				for (size_t i = 0; i < c->f->nnodes; i++) {
					const struct fab_node *n = c->f->nodes[i];

					if (gp >= c->pbase[i] && gp <= c->pbase[i] + n->num_ports) {
						c->out->cycle_guid = n->guid;
						c->out->cycle_port = (uint8_t)(gp - c->pbase[i]);
						break;
					}
				}
				*acyclic = false;
				break;
			}
			if (!color[w]) {
				color[w] = 1;
				it[w] = off[w];
				stk[sp++] = w;
			}
		}
	}
	r = 0;
out:
	free(off);
	free(adj);
	free(it);
	free(stk);
	free(color);
	return r;
}

static void checker_free(struct checker *c)
{
	for (size_t s = 0; c->tab && s < c->f->nswitches; s++) {
		free(c->tab[s]);
		free(c->have[s]);
		free(c->bits ? c->bits[s] : NULL);
		free(c->fan ? c->fan[s] : NULL);
	}
	free(c->bits);
	free(c->fan);
	free(c->inj);
	free(c->has_ca);
	free(c->inj_noted);
	free(c->grp_off);
	free(c->grp);
	free(c->tab);
	free(c->have);
	free(c->src);
	free(c->pbase);
	free(c->comp);
	free(c->state);
	free(c->hops);
	free(c->stack);
	free(c->memo);
	free(c->memo_vl);
	free(c->nsrc);
	free(c->load);
	free(c->acc);
	free(c->order);
	free(c->deps.slot);
}

/* Every endport with a LID, where it enters the switches */
static int list_sources(struct checker *c)
{
	const struct fabric *f = c->f;
	size_t n = 0;

	for (int pass = 0; pass < 2; pass++) {
		for (size_t i = 0; i < f->nnodes; i++) {
			const struct fab_node *nd = f->nodes[i];

			for (unsigned int p = 0; p <= nd->num_ports; p++) {
				const struct fab_port *ep = &nd->ports[p];
				struct fab_node *sw;
				struct src *s;
				uint8_t in;

				if (!fabric_is_endport(ep) || !ep->lid)
					continue;
				if (!pass) {
					n++;
					continue;
				}
				s = &c->src[c->nsrc_all++];
				s->p = ep;
				sw = route_attach_switch(ep, &in);
				s->sw = sw ? sw->sw_idx : RT_NONE;
				s->in = in;
				if (nd->type != NODE_TYPE_SWITCH) {
					if (route_sl2vl(c->r, nd, 0, p, s->tab) < 0)
						return -EINVAL;
					if (sw) {
						c->nsrc[sw->sw_idx]++;
						c->has_ca[sw->sw_idx] = 1;
						for (int sl = 0; sl < ROUTE_NUM_SLS; sl++)
							c->inj[(size_t)sw->sw_idx *
							       ROUTE_NUM_SLS + sl] |=
								(uint16_t)(1u << (s->tab[sl] & 15));
					}
				}
			}
		}
		if (!pass) {
			c->src = calloc(n + 1, sizeof(*c->src));
			if (!c->src)
				return -ENOMEM;
		}
	}
	/* By switch */
	c->grp_off = calloc(f->nswitches + 2, sizeof(*c->grp_off));
	c->grp = malloc((c->nsrc_all + 1) * sizeof(*c->grp));
	if (!c->grp_off || !c->grp)
		return -ENOMEM;
	for (size_t i = 0; i < c->nsrc_all; i++)
		if (c->src[i].sw != RT_NONE)
			c->grp_off[c->src[i].sw + 2]++;
	for (size_t s = 0; s < f->nswitches; s++)
		c->grp_off[s + 2] += c->grp_off[s + 1];
	for (size_t i = 0; i < c->nsrc_all; i++)
		if (c->src[i].sw != RT_NONE)
			c->grp[c->grp_off[c->src[i].sw + 1]++] = (uint32_t)i;
	return 0;
}

int route_check(const struct fabric *f, const struct route_result *r, struct route_check *out)
{
	struct checker c;
	size_t S = f->nswitches;
	uint64_t sum = 0;
	uint32_t links = 0;
	int ret = -ENOMEM;

	memset(out, 0, sizeof(*out));
	memset(&c, 0, sizeof(c));
	c.f = f;
	c.r = r;
	c.out = out;
	c.vls = route_vls_used(r);
	c.pbase = malloc((f->nnodes + 1) * sizeof(*c.pbase));
	if (!c.pbase)
		goto out;
	for (size_t i = 0; i < f->nnodes; i++) {
		c.pbase[i] = c.nports;
		c.nports += f->nodes[i]->num_ports + 1u;
	}
	c.tab = calloc(S + 1, sizeof(*c.tab));
	c.have = calloc(S + 1, sizeof(*c.have));
	c.comp = malloc((S + 1) * sizeof(*c.comp));
	c.state = malloc(S + 1);
	c.hops = malloc((S + 1) * sizeof(*c.hops));
	c.stack = malloc((S + 1) * sizeof(*c.stack));
	c.memo = calloc((size_t)c.nports * ROUTE_NUM_SLS, sizeof(*c.memo));
	c.memo_vl = calloc((size_t)c.nports * ROUTE_NUM_SLS, 1);
	c.nsrc = calloc(S + 1, sizeof(*c.nsrc));
	c.load = calloc(c.nports, sizeof(*c.load));
	c.acc = malloc((S + 2) * sizeof(*c.acc));
	c.order = malloc((S + 1) * sizeof(*c.order));
	c.bits = calloc(S + 1, sizeof(*c.bits));
	c.fan = calloc(S + 1, sizeof(*c.fan));
	c.inj = calloc((S + 1) * ROUTE_NUM_SLS, sizeof(*c.inj));
	c.inj_noted = calloc((S + 1) * ROUTE_NUM_SLS, 1);
	c.has_ca = calloc(S + 1, 1);
	if (!c.bits || !c.fan || !c.inj || !c.inj_noted || !c.has_ca || !c.tab || !c.have ||
	    !c.comp || !c.state || !c.hops || !c.stack || !c.memo || !c.memo_vl || !c.nsrc ||
	    !c.load || !c.acc || !c.order)
		goto out;
	ret = list_sources(&c);
	if (ret < 0)
		goto out;
	components(&c);
	for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
		const struct fab_port *dst = f->by_lid[lid];
		const struct fab_node *dsw;
		uint8_t dport;

		if (!dst)
			continue;
		dsw = route_attach_switch(dst, &dport);
		memset(c.state, ST_UNKNOWN, S);
		if (++c.stamp == 0) {
			memset(c.memo, 0, (size_t)c.nports * ROUTE_NUM_SLS * sizeof(*c.memo));
			c.stamp = 1;
		}
		/* Sources that hang off no switch reach nothing */
		for (size_t i = 0; i < c.nsrc_all; i++)
			if (c.src[i].sw == RT_NONE && c.src[i].p != dst) {
				out->pairs++;
				out->disconnected++;
			}
		for (uint32_t sw = 0; sw < S; sw++) {
			uint32_t lo = c.grp_off[sw], hi = c.grp_off[sw + 1], n = hi - lo;
			const struct fab_node *node = f->switches[sw];
			const struct fab_port *op;
			uint16_t vls;
			uint8_t st, out_port;
			int sl;

			if (!n)
				continue;
			for (uint32_t k = lo; k < hi; k++)
				n -= c.src[c.grp[k]].p == dst;
			out->pairs += n;
			if (!dsw || c.comp[sw] != c.comp[dsw->sw_idx]) {
				out->disconnected += n;	/* nothing to route */
				continue;
			}
			st = resolve(&c, sw, (uint16_t)lid, dst);
			if (st != ST_OK) {
				if (st == ST_LOOP)
					out->loops += n;
				else
					out->unreachable += n;
				continue;
			}
			/* route_path_sl(), knowing the sources' switch */
			sl = rt_path_sl_sw(r, sw, (uint16_t)lid);
			if (c.hops[sw] + c.has_ca[sw] > out->max_hops)
				out->max_hops = c.hops[sw] + c.has_ca[sw];
			if (!c.inj_noted[(size_t)sw * ROUTE_NUM_SLS + sl]) {
				uint16_t m = c.inj[(size_t)sw * ROUTE_NUM_SLS + sl];

				c.inj_noted[(size_t)sw * ROUTE_NUM_SLS + sl] = 1;
				for (uint8_t v = 0; v < NVL; v++)
					if (m & (1u << v))
						note_vl(&c, v);
			}
			out_port = node->lft[lid];
			if (out_port == 0)
				continue;
			op = node->ports[out_port].peer;
			vls = fan_out(&c, sw, out_port, sl);
			if (c.err) {
				ret = c.err;
				goto out;
			}
			if (op->node->type != NODE_TYPE_SWITCH)
				continue;
			/* From the first link on, sources that took it on one VL share the path */
			for (uint8_t v = 0; v < NVL; v++) {
				if (!(vls & (1u << v)))
					continue;
				ret = walk_deps(&c, op->node->sw_idx, op->num,
						chan(gport(&c, &node->ports[out_port]), v),
						(uint16_t)lid, sl);
				if (ret < 0)
					goto out;
			}
		}
		if (dsw)
			count_loads(&c, (uint16_t)lid);
	}
	ret = find_cycle(&c, &out->acyclic);
	if (ret < 0)
		goto out;
	for (uint16_t v = c.vl_seen; v; v &= (uint16_t)(v - 1))
		out->vls_used++;
	for (size_t s = 0; s < S; s++) {
		const struct fab_node *sw = f->switches[s];

		for (unsigned int p = 1; p <= sw->num_ports; p++) {
			uint64_t l;

			if (!sw_link(&sw->ports[p]))
				continue;
			l = c.load[c.pbase[sw->idx] + p];
			links++;
			sum += l;
			if (l > out->max_link_routes)
				out->max_link_routes = (uint32_t)l;
		}
	}
	out->mean_link_routes = links ? (double)sum / links : 0;
	ret = 0;
out:
	checker_free(&c);
	return ret;
}
