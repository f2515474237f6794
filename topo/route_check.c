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
 *
 * Cost: O(switches x LIDs) steps, each kept to a few cache lines: the LFTs
 * are read in LID-major blocks, the cabling in flat per-switch-port arrays,
 * and the dependencies VL 0 -> VL 0 (all of them on one VL) in one bitset of
 * (switch, in port, out port), apart from the 8x8 VL words the other VLs
 * need (k=40 fat-tree: 8.7 s before, see route_bench).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/route_int.h"
#include "util/par.h"

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

/* nbr[] of a switch port that leads to no switch */
#define NB_NONE		UINT32_MAX	/* not cabled, or the link is down */
#define NB_END		(UINT32_MAX - 1)	/* a CA or router port */
/* LIDs whose LFT entries are transposed at once */
#define CK_BLOCK	64
/* Most threads checking LIDs (chunks of blocks, taken in turn) */
#define CK_WORKERS	16

struct checker {
	const struct fabric *f;
	const struct route_result *r;
	struct route_check *out;
	uint32_t *pbase;		/* [nnodes] global index of (node, port 0) */
	uint32_t nports;
	/* Switch ports, flat: (s, p) at swbase[s] + p */
	uint32_t *swbase;		/* [S + 1] */
	uint32_t nswp;
	uint32_t *nbr;			/* [nswp] peer switch, NB_END or NB_NONE */
	uint8_t *nbport;		/* [nswp] the peer's port number */
	uint32_t *gp;			/* [nswp] global port index of (s, p) */
	const struct fab_port **peer;	/* [nswp] the peer port, or NULL */
	uint8_t *nps;			/* [S] ports of each switch */
	const uint8_t **lft;		/* [S] each switch's LFT ... */
	uint32_t *lft_len;		/* ... and its length */
	uint8_t *blk;			/* [CK_BLOCK * S] LFT entries of a block of LIDs */
	const uint8_t *row;		/* the current LID's entries, row[s] */
	uint32_t *b00base;		/* [S + 1] bit index of (s, in 0, out 0) in b00 */
	uint64_t *b00;			/* dependencies VL 0 -> VL 0: bit (s, in, out) */
	uint16_t *fanc;			/* [16 * nswp] fan_out() cache, SL-major */
	struct src *src;
	size_t nsrc_all;
	uint32_t *grp_off, *grp;	/* sources by switch: grp[grp_off[s] .. grp_off[s + 1]) */
	uint64_t **bits;		/* [nswitches] [(in * np + out) * 1] 8x8 VL pairs other
					 * than VL 0 -> VL 0, allocated on first use */
	uint16_t *inj;			/* [nswitches * 16] VLs CA sources at s inject SL sl on */
	uint8_t *has_ca;		/* [nswitches] CA sources attached */
	uint8_t *inj_noted;		/* [nswitches * 16] inj[] used (counted at the end) */
	uint64_t *utab;			/* [nswitches] the table of a switch whose tables are all
					 * alike (route_sl2vl_uniform), 4 bits an SL */
	uint8_t *uni;			/* [nswitches] 0: not asked yet, 1: utab, 2: per pair */
	uint16_t *uhave;		/* [nswitches] SLs of utab used (noted) */
	uint64_t **tab;			/* [nswitches] SL-to-VL per (in, out), 4 bits an SL */
	uint32_t **have;		/* ... bits 0-15: SLs used (noted); TAB_READ: tab valid */
	uint32_t *comp;			/* [nswitches] component */
	uint8_t *state;			/* [nswitches] walk verdict for the current LID */
	uint32_t *hops;			/* [nswitches] links to the destination */
	uint32_t *stack;
	/*
	 * [nports] per SL, on first use: arrival seen, stamp << 4 | VL (one
	 * word: the lookup is a cache miss at k=40, and it was two)
	 */
	uint32_t *memo[ROUTE_NUM_SLS];
	uint32_t stamp;			/* < MEMO_STAMPS */
	uint32_t *nsrc;			/* [nswitches] CA sources attached */
	uint64_t *load;			/* [nports] routes out of a switch-to-switch port */
	uint32_t *acc, *order;
	struct dep_set deps;
	uint16_t vl_seen;
	unsigned int vls;
	uint64_t unattached;		/* sources that hang off no switch */
	int err;
};

#define TAB_READ	(1u << 16)
#define MEMO_STAMPS	(1u << 28)

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
 * once, cached); each entry used is marked, and counted at the end
 * (count_noted: whichever thread used it first, each once).
 */
static uint64_t pack_tab(const uint8_t t[ROUTE_NUM_SLS])
{
	uint64_t packed = 0;

	for (unsigned int i = 0; i < ROUTE_NUM_SLS; i++)
		packed |= (uint64_t)(t[i] & 15) << (4 * i);
	return packed;
}

static uint8_t sw_vl(struct checker *c, uint32_t s, unsigned int in, unsigned int out, int sl)
{
	size_t np = (size_t)c->nps[s] + 1, k = in * np + out;
	uint32_t bit = 1u << (sl & 15), *have;

	if (c->uni[s] != 2) {
		/* One table for the whole switch: each of its entries noted once */
		if (!c->uni[s]) {
			uint8_t t[ROUTE_NUM_SLS];
			int u = route_sl2vl_uniform(c->r, c->f->switches[s], t);

			if (u < 0) {
				c->err = u;
				return 0;
			}
			c->uni[s] = u ? 1 : 2;
			c->utab[s] = pack_tab(t);
		}
		if (c->uni[s] == 1) {
			c->uhave[s] |= (uint16_t)bit;
			return (uint8_t)((c->utab[s] >> (4 * (sl & 15))) & 15);
		}
	}
	if (!c->tab[s]) {
		c->tab[s] = malloc(np * np * sizeof(**c->tab));
		c->have[s] = calloc(np * np, sizeof(**c->have));
		if (!c->tab[s] || !c->have[s]) {
			c->err = -ENOMEM;
			return 0;
		}
	}
	have = &c->have[s][k];
	if (!(*have & TAB_READ)) {
		uint8_t t[ROUTE_NUM_SLS];

		if (route_sl2vl(c->r, c->f->switches[s], in, out, t) < 0) {
			c->err = -EINVAL;
			return 0;
		}
		c->tab[s][k] = pack_tab(t);
		*have |= TAB_READ;
	}
	*have |= bit;
	return (uint8_t)((c->tab[s][k] >> (4 * (sl & 15))) & 15);
}

/*
 * The VLs the sources attached to switch s (entering at their own ports)
 * leave it on through port out with SL sl; each table entry noted once.
 */
static uint16_t fan_out(struct checker *c, uint32_t s, unsigned int out, int sl)
{
	uint16_t *m = &c->fanc[(size_t)(sl & 15) * c->nswp + c->swbase[s] + out];

	if (*m)
		return *m;
	for (uint32_t g = c->grp_off[s]; g < c->grp_off[s + 1]; g++) {
		uint8_t vl = sw_vl(c, s, c->src[c->grp[g]].in, out, sl);

		*m |= (uint16_t)(1u << (vl & 15));
	}
	return *m;
}

static void components(struct checker *c)
{
	uint32_t S = (uint32_t)c->f->nswitches, ncomp = 0;

	for (uint32_t i = 0; i < S; i++)
		c->comp[i] = UINT32_MAX;
	for (uint32_t i = 0; i < S; i++) {
		uint32_t sp = 0;

		if (c->comp[i] != UINT32_MAX)
			continue;
		c->comp[i] = ncomp;
		c->stack[sp++] = i;
		while (sp) {
			uint32_t v = c->stack[--sp];

			for (uint32_t x = c->swbase[v] + 1; x <= c->swbase[v] + c->nps[v]; x++) {
				uint32_t t = c->nbr[x];

				if (t < NB_END && c->comp[t] == UINT32_MAX) {
					c->comp[t] = ncomp;
					c->stack[sp++] = t;
				}
			}
		}
		ncomp++;
	}
}

/*
 * Where does the LFT walk from switch s toward the current LID end (dst:
 * its port, dsw: its switch when dst is a switch's port 0)? Memoised per LID
 */
static uint8_t resolve(struct checker *c, uint32_t s, const struct fab_port *dst, uint32_t dsw)
{
	uint32_t sp = 0, cur = s, top_hops = 0;
	uint8_t verdict;

	for (;;) {
		uint32_t x;
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
		out = c->row[cur];
		if (out == 0) {
			verdict = cur == dsw ? ST_OK : ST_DEAD;
			top_hops = 0;
			break;
		}
		if (out > c->nps[cur] || c->nbr[x = c->swbase[cur] + out] == NB_NONE) {
			verdict = ST_DEAD;
			break;
		}
		if (c->peer[x] == dst) {
			verdict = ST_OK;
			top_hops = 1;
			break;
		}
		if (c->nbr[x] == NB_END) {
			verdict = ST_DEAD;
			break;
		}
		cur = c->nbr[x];
	}
	for (uint32_t i = sp; i-- > 0;) {
		c->state[c->stack[i]] = verdict;
		c->hops[c->stack[i]] = top_hops + (sp - 1 - i);
	}
	return c->state[s];
}

/*
 * The dependency from channel `from` (entering switch s at port in) to
 * (s, out) on VL vout: into the VL 0 bitset, s's bitmap, or the hash set
 * for VLs above 7.
 */
static int dep_note(struct checker *c, uint32_t s, unsigned int in, uint32_t from,
		    unsigned int out, uint8_t vout, uint32_t to)
{
	size_t np = (size_t)c->nps[s] + 1;
	uint8_t vin = (uint8_t)(from % NVL);

	if (vin == 0 && vout == 0) {
		uint64_t b = c->b00base[s] + in * np + out;

		c->b00[b / 64] |= 1ull << (b % 64);
		return 0;
	}
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
 * channel from) toward the current LID on SL sl, until its end or a known
 * remainder. (resolve() said the walk arrives.)
 */
static int walk_deps(struct checker *c, uint32_t s, unsigned int in, uint32_t from, int sl)
{
	uint32_t *memo = c->memo[sl & 15];

	if (!memo) {
		memo = c->memo[sl & 15] = calloc((size_t)c->nports + 1, sizeof(*memo));
		if (!memo)
			return -ENOMEM;
	}

	for (size_t guard = 0; guard <= c->f->nswitches; guard++) {
		uint8_t out = c->row[s], vout;
		uint32_t x, to, seen = c->stamp << 4 | from % NVL;

		if (out == 0)
			return 0;
		/* Arrived on this channel with this SL before: the rest is known */
		if (memo[from / NVL] == seen)
			return 0;
		memo[from / NVL] = seen;
		vout = sw_vl(c, s, in, out, sl);
		if (c->err)
			return c->err;
		x = c->swbase[s] + out;
		to = chan(c->gp[x], vout);
		if (dep_note(c, s, in, from, out, vout, to) < 0)
			return -ENOMEM;
		if (c->nbr[x] >= NB_END)
			return 0;
		in = c->nbport[x];
		s = c->nbr[x];
		from = to;
	}
	return 0;
}

/* Count the routes of CA sources toward the current LID on every switch link */
static void count_loads(struct checker *c)
{
	uint32_t S = (uint32_t)c->f->nswitches, maxh = 0, n, *cnt = c->acc;

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
		uint32_t s = c->order[i], x;
		uint8_t out = c->row[s];

		if (!c->acc[s] || out == 0)
			continue;
		x = c->swbase[s] + out;
		if (c->nbr[x] >= NB_END)
			continue;
		c->load[c->gp[x]] += c->acc[s];
		c->acc[c->nbr[x]] += c->acc[s];
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Every dependency edge: f(ctx, from, to) for each. Those of the hash set
 * in key order: where they were put depends on the order threads merged
 * them, and the cycle found (c->out) must not. 0 or -ENOMEM.
 */
static int each_dep(struct checker *c, void (*fn)(struct checker *c, uint32_t from, uint32_t to,
						   void *ctx), void *ctx)
{
	struct dep_set *d = &c->deps;
	uint64_t *keys = malloc((d->used + 1) * sizeof(*keys));
	size_t n = 0;

	if (!keys)
		return -ENOMEM;
	for (size_t i = 0; i < d->size; i++)
		if (d->slot[i])
			keys[n++] = d->slot[i] - 1;
	qsort(keys, n, sizeof(*keys), cmp_u64);
	for (size_t i = 0; i < n; i++)
		fn(c, (uint32_t)(keys[i] >> 32), (uint32_t)keys[i], ctx);
	free(keys);
	for (size_t s = 0; s < c->f->nswitches; s++) {
		size_t np = (size_t)c->nps[s] + 1;

		for (size_t k = 0; k < np * np; k++) {
			uint64_t b = c->bits[s] ? c->bits[s][k] : 0, bb = c->b00base[s] + k;
			uint32_t xin = c->swbase[s] + (uint32_t)(k / np);
			uint32_t gin, gout;

			if (c->b00[bb / 64] & (1ull << (bb % 64)))
				b |= 1;
			if (!b)
				continue;
			/* the channel into s at port k / np is the peer's */
			gin = c->pbase[c->peer[xin]->node->idx] + c->peer[xin]->num;
			gout = c->gp[c->swbase[s] + k % np];
			for (; b; b &= b - 1) {
				unsigned int bit = (unsigned int)__builtin_ctzll(b);

				fn(c, chan(gin, (uint8_t)(bit / 8)), chan(gout, (uint8_t)(bit % 8)),
				   ctx);
			}
		}
	}
	return 0;
}

struct csr {
	uint32_t *off, *adj, *it;
	int pass;
};

static void csr_edge(struct checker *c, uint32_t from, uint32_t to, void *ctx)
{
	struct csr *g = ctx;

	(void)c;
	if (g->pass)
		g->adj[g->it[from]++] = to;
	else
		g->off[from + 1]++;
}

/* Iterative DFS over the dependency graph; a cycle found is noted in c->out */
static int find_cycle(struct checker *c, bool *acyclic)
{
	uint32_t nn = c->nports * NVL, *stk, sp;
	uint64_t nedges = c->deps.used;
	struct csr g = { 0 };
	uint8_t *color;
	int r = -ENOMEM;

	*acyclic = true;
	for (size_t s = 0; s < c->f->nswitches; s++) {
		size_t np = (size_t)c->nps[s] + 1;

		for (size_t k = 0; c->bits[s] && k < np * np; k++)
			nedges += (uint64_t)__builtin_popcountll(c->bits[s][k]);
	}
	for (size_t w = 0; w < (c->b00base[c->f->nswitches] + 63) / 64; w++)
		nedges += (uint64_t)__builtin_popcountll(c->b00[w]);
	/* a VL 0 -> VL 0 edge may also sit in bits[] (never: dep_note puts it in b00) */
	c->out->dependencies = nedges;
	g.off = calloc((size_t)nn + 1, sizeof(*g.off));
	g.adj = malloc((nedges ? nedges : 1) * sizeof(*g.adj));
	g.it = malloc(((size_t)nn + 1) * sizeof(*g.it));
	stk = malloc(((size_t)nn + 1) * sizeof(*stk));
	color = calloc((size_t)nn + 1, 1);
	if (!g.off || !g.adj || !g.it || !stk || !color)
		goto out;
	if (each_dep(c, csr_edge, &g) < 0)
		goto out;
	for (uint32_t v = 0; v < nn; v++)
		g.off[v + 1] += g.off[v];
	memcpy(g.it, g.off, (size_t)nn * sizeof(*g.it));
	g.pass = 1;
	if (each_dep(c, csr_edge, &g) < 0)
		goto out;
	for (uint32_t root = 0; root < nn && *acyclic; root++) {
		if (color[root] || g.off[root] == g.off[root + 1])
			continue;
		sp = 0;
		stk[sp++] = root;
		color[root] = 1;
		g.it[root] = g.off[root];
		while (sp) {
			uint32_t v = stk[sp - 1], w;

			if (g.it[v] == g.off[v + 1]) {
				color[v] = 2;
				sp--;
				continue;
			}
			w = g.adj[g.it[v]++];
			if (color[w] == 1) {
				/* w is on the stack: the cycle runs from w to v */
				uint32_t len = 1, gpi = w / NVL;

				while (len < sp && stk[sp - len] != w)
					len++;
				c->out->cycle_len = len;
				c->out->cycle_vl = (uint8_t)(w % NVL);
				for (size_t i = 0; i < c->f->nnodes; i++) {
					const struct fab_node *n = c->f->nodes[i];

					if (gpi >= c->pbase[i] &&
					    gpi <= c->pbase[i] + n->num_ports) {
						c->out->cycle_guid = n->guid;
						c->out->cycle_port = (uint8_t)(gpi - c->pbase[i]);
						break;
					}
				}
				*acyclic = false;
				break;
			}
			if (!color[w]) {
				color[w] = 1;
				g.it[w] = g.off[w];
				stk[sp++] = w;
			}
		}
	}
	r = 0;
out:
	free(g.off);
	free(g.adj);
	free(g.it);
	free(stk);
	free(color);
	return r;
}

/* What each thread checking LIDs has of its own: scratch, caches, findings */
static int thread_alloc(struct checker *c)
{
	size_t S = c->f->nswitches;

	c->blk = malloc((size_t)CK_BLOCK * S + 1);
	c->b00 = calloc(c->b00base[S] / 64 + 1, sizeof(*c->b00));
	c->fanc = calloc((size_t)ROUTE_NUM_SLS * c->nswp + 1, sizeof(*c->fanc));
	c->bits = calloc(S + 1, sizeof(*c->bits));
	c->tab = calloc(S + 1, sizeof(*c->tab));
	c->have = calloc(S + 1, sizeof(*c->have));
	c->utab = calloc(S + 1, sizeof(*c->utab));
	c->uni = calloc(S + 1, 1);
	c->uhave = calloc(S + 1, sizeof(*c->uhave));
	c->inj_noted = calloc((S + 1) * ROUTE_NUM_SLS, 1);
	c->state = malloc(S + 1);
	c->hops = malloc((S + 1) * sizeof(*c->hops));
	c->stack = malloc((S + 1) * sizeof(*c->stack));
	c->load = calloc((size_t)c->nports + 1, sizeof(*c->load));
	c->acc = malloc((S + 2) * sizeof(*c->acc));
	c->order = malloc((S + 1) * sizeof(*c->order));
	memset(c->memo, 0, sizeof(c->memo));
	memset(&c->deps, 0, sizeof(c->deps));
	c->stamp = 0;
	c->err = 0;
	if (!c->blk || !c->b00 || !c->fanc || !c->bits || !c->tab || !c->have || !c->utab ||
	    !c->uni || !c->uhave || !c->inj_noted || !c->state || !c->hops || !c->stack ||
	    !c->load || !c->acc || !c->order)
		return -ENOMEM;
	return 0;
}

static void thread_free(struct checker *c)
{
	for (size_t s = 0; s < c->f->nswitches; s++) {
		free(c->tab ? c->tab[s] : NULL);
		free(c->have ? c->have[s] : NULL);
		free(c->bits ? c->bits[s] : NULL);
	}
	for (unsigned int sl = 0; sl < ROUTE_NUM_SLS; sl++) {
		free(c->memo[sl]);
	}
	free(c->blk);
	free(c->b00);
	free(c->fanc);
	free(c->bits);
	free(c->tab);
	free(c->have);
	free(c->utab);
	free(c->uni);
	free(c->uhave);
	free(c->inj_noted);
	free(c->state);
	free(c->hops);
	free(c->stack);
	free(c->load);
	free(c->acc);
	free(c->order);
	free(c->deps.slot);
}

static void checker_free(struct checker *c)
{
	thread_free(c);
	free(c->inj);
	free(c->has_ca);
	free(c->grp_off);
	free(c->grp);
	free(c->src);
	free(c->pbase);
	free(c->swbase);
	free(c->nbr);
	free(c->nbport);
	free(c->gp);
	free(c->peer);
	free(c->nps);
	free(c->lft);
	free(c->lft_len);
	free(c->b00base);
	free(c->comp);
	free(c->nsrc);
}

/* The switch ports, flat: neighbours, peer ports, global indexes; the VL 0 bitset */
static int index_switches(struct checker *c)
{
	const struct fabric *f = c->f;
	size_t S = f->nswitches;
	uint64_t nb = 0;

	c->swbase = malloc((S + 1) * sizeof(*c->swbase));
	c->b00base = malloc((S + 1) * sizeof(*c->b00base));
	c->nps = malloc(S + 1);
	c->lft = malloc((S + 1) * sizeof(*c->lft));
	c->lft_len = malloc((S + 1) * sizeof(*c->lft_len));
	if (!c->swbase || !c->b00base || !c->nps || !c->lft || !c->lft_len)
		return -ENOMEM;
	c->nswp = 0;
	for (size_t s = 0; s < S; s++) {
		unsigned int np = f->switches[s]->num_ports + 1u;

		c->swbase[s] = c->nswp;
		c->b00base[s] = (uint32_t)nb;
		c->nps[s] = f->switches[s]->num_ports;
		c->lft[s] = f->switches[s]->lft;
		c->lft_len[s] = f->switches[s]->lft_len;
		c->nswp += np;
		nb += (uint64_t)np * np;
	}
	c->swbase[S] = c->nswp;
	c->b00base[S] = (uint32_t)nb;
	c->nbr = malloc((c->nswp + 1) * sizeof(*c->nbr));
	c->nbport = malloc(c->nswp + 1);
	c->gp = malloc((c->nswp + 1) * sizeof(*c->gp));
	c->peer = calloc(c->nswp + 1, sizeof(*c->peer));
	if (!c->nbr || !c->nbport || !c->gp || !c->peer)
		return -ENOMEM;
	for (size_t s = 0; s < S; s++) {
		const struct fab_node *sw = f->switches[s];

		for (unsigned int p = 0; p <= sw->num_ports; p++) {
			const struct fab_port *pp = &sw->ports[p];
			uint32_t x = c->swbase[s] + p;

			c->gp[x] = gport(c, pp);
			c->nbr[x] = NB_NONE;
			c->nbport[x] = 0;
			if (p == 0 || !fabric_port_linked(pp))
				continue;
			c->peer[x] = pp->peer;
			c->nbport[x] = pp->peer->num;
			c->nbr[x] = sw_link(pp) ? pp->peer->node->sw_idx : NB_END;
		}
	}
	return 0;
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

/*
 * The LFT entries of LIDs [lid, hi), LID-major: row (l - lid) is LID l's.
 * Each switch gives one cache line, a miss each at k=40 (36 MB of LFTs):
 * the lines a few switches ahead are asked for early.
 */
#define CK_PREFETCH	8

static void fill_block(struct checker *c, uint32_t lid, uint32_t hi)
{
	size_t S = c->f->nswitches;
	uint8_t *blk = c->blk;

	for (size_t s = 0; s < S; s++) {
		const uint8_t *lft = c->lft[s];
		uint32_t len = c->lft_len[s];
		uint8_t *d = blk + s;

		if (s + CK_PREFETCH < S && lid < c->lft_len[s + CK_PREFETCH])
			__builtin_prefetch(c->lft[s + CK_PREFETCH] + lid);
		for (uint32_t l = lid; l < hi; l++, d += S)
			*d = l < len ? lft[l] : LFT_PORT_NONE;
	}
}

/* Every source's walk toward lid (its row of entries in c->row): verdicts, CDG edges, loads */
static int check_lid(struct checker *c, uint32_t lid)
{
	const struct fabric *f = c->f;
	const struct fab_port *dst = f->by_lid[lid];
	struct route_check *out = c->out;
	size_t S = f->nswitches;
	const struct fab_node *dsw;
	uint32_t dsi, own;
	uint8_t dport;
	int ret;

	if (!dst)
		return 0;
	dsw = route_attach_switch(dst, &dport);
	dsi = dsw ? dsw->sw_idx : RT_NONE;
	/* dst is a source too: of its own switch, or of none */
	own = dsw ? dsi : RT_NONE;
	memset(c->state, ST_UNKNOWN, S);
	if (++c->stamp == MEMO_STAMPS) {
		for (unsigned int sl = 0; sl < ROUTE_NUM_SLS; sl++)
			if (c->memo[sl])
				memset(c->memo[sl], 0, (size_t)c->nports * sizeof(*c->memo[sl]));
		c->stamp = 1;
	}
	/* Sources that hang off no switch reach nothing */
	out->pairs += c->unattached - (own == RT_NONE);
	out->disconnected += c->unattached - (own == RT_NONE);
	for (uint32_t sw = 0; sw < S; sw++) {
		uint32_t n = c->grp_off[sw + 1] - c->grp_off[sw], x;
		uint16_t vls;
		uint8_t st, out_port;
		int sl;

		if (!n)
			continue;
		n -= sw == own;
		out->pairs += n;
		if (dsi == RT_NONE || c->comp[sw] != c->comp[dsi]) {
			out->disconnected += n;	/* nothing to route */
			continue;
		}
		st = resolve(c, sw, dst, dst->num == 0 ? dsi : RT_NONE);
		if (st != ST_OK) {
			if (st == ST_LOOP)
				out->loops += n;
			else
				out->unreachable += n;
			continue;
		}
		/* route_path_sl(), knowing the sources' switch */
		sl = rt_path_sl_sw(c->r, sw, (uint16_t)lid);
		if (c->hops[sw] + c->has_ca[sw] > out->max_hops)
			out->max_hops = c->hops[sw] + c->has_ca[sw];
		c->inj_noted[(size_t)sw * ROUTE_NUM_SLS + sl] = 1;
		out_port = c->row[sw];
		if (out_port == 0)
			continue;
		vls = fan_out(c, sw, out_port, sl);
		if (c->err)
			return c->err;
		x = c->swbase[sw] + out_port;
		if (c->nbr[x] >= NB_END)
			continue;
		/* From the first link on, sources that took it on one VL share the path */
		for (uint32_t m = vls; m; m &= m - 1) {
			uint8_t v = (uint8_t)__builtin_ctz(m);

			ret = walk_deps(c, c->nbr[x], c->nbport[x], chan(c->gp[x], v), sl);
			if (ret < 0)
				return ret;
		}
	}
	if (dsw)
		count_loads(c);
	return 0;
}

/* par_for: the LIDs of blocks [b, e) of CK_BLOCK, by the worker's own checker */
static void check_blocks(void *arg, unsigned int worker, size_t b, size_t e)
{
	struct checker *c = (struct checker *)arg + worker;
	uint32_t top = (uint32_t)c->f->max_lid + 1;

	for (size_t k = b; k < e && !c->err; k++) {
		uint32_t lid = 1 + (uint32_t)k * CK_BLOCK, hi = lid + CK_BLOCK < top ? lid + CK_BLOCK : top;

		fill_block(c, lid, hi);
		for (uint32_t l = lid; l < hi && !c->err; l++) {
			int r;

			c->row = c->blk + (size_t)(l - lid) * c->f->nswitches;
			r = check_lid(c, l);
			if (r < 0)
				c->err = r;
		}
	}
}

/* A helper's findings into the first checker's: sums, maxima and unions, order-free */
static int merge(struct checker *m, const struct checker *w)
{
	size_t S = m->f->nswitches;
	struct dep_set *d = (struct dep_set *)&w->deps;

	if (w->err)
		return w->err;
	m->out->pairs += w->out->pairs;
	m->out->disconnected += w->out->disconnected;
	m->out->unreachable += w->out->unreachable;
	m->out->loops += w->out->loops;
	if (w->out->max_hops > m->out->max_hops)
		m->out->max_hops = w->out->max_hops;
	for (uint32_t x = 0; x < m->nports; x++)
		m->load[x] += w->load[x];
	for (uint32_t i = 0; i <= m->b00base[S] / 64; i++)
		m->b00[i] |= w->b00[i];
	for (size_t i = 0; i < (S + 1) * ROUTE_NUM_SLS; i++)
		m->inj_noted[i] |= w->inj_noted[i];
	for (size_t s = 0; s < S; s++) {
		size_t np = (size_t)m->nps[s] + 1;

		if (w->bits[s]) {
			if (!m->bits[s]) {
				m->bits[s] = calloc(np * np, sizeof(uint64_t));
				if (!m->bits[s])
					return -ENOMEM;
			}
			for (size_t k = 0; k < np * np; k++)
				m->bits[s][k] |= w->bits[s][k];
		}
		if (w->uni[s] && !m->uni[s]) {
			m->uni[s] = w->uni[s];
			m->utab[s] = w->utab[s];
		}
		m->uhave[s] |= w->uhave[s];
		if (!w->tab[s])
			continue;
		if (!m->tab[s]) {
			m->tab[s] = malloc(np * np * sizeof(**m->tab));
			m->have[s] = calloc(np * np, sizeof(**m->have));
			if (!m->tab[s] || !m->have[s])
				return -ENOMEM;
		}
		for (size_t k = 0; k < np * np; k++) {
			if ((w->have[s][k] & TAB_READ) && !(m->have[s][k] & TAB_READ))
				m->tab[s][k] = w->tab[s][k];
			m->have[s][k] |= w->have[s][k];
		}
	}
	for (size_t i = 0; i < d->size; i++) {
		uint64_t key = d->slot[i] - 1;

		if (d->slot[i] && dep_add(&m->deps, (uint32_t)(key >> 32), (uint32_t)key) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Every table entry the routes used, each once: the VLs seen, those beyond the budget */
static void count_noted(struct checker *c)
{
	for (size_t s = 0; s < c->f->nswitches; s++) {
		size_t np = (size_t)c->nps[s] + 1;

		for (unsigned int sl = 0; c->uni[s] == 1 && sl < ROUTE_NUM_SLS; sl++)
			if (c->uhave[s] & (1u << sl))
				note_vl(c, (uint8_t)((c->utab[s] >> (4 * sl)) & 15));
		for (size_t k = 0; c->tab[s] && k < np * np; k++)
			for (unsigned int sl = 0; sl < ROUTE_NUM_SLS; sl++)
				if (c->have[s][k] & (1u << sl))
					note_vl(c, (uint8_t)((c->tab[s][k] >> (4 * sl)) & 15));
		for (unsigned int sl = 0; sl < ROUTE_NUM_SLS; sl++) {
			uint16_t m = c->inj[s * ROUTE_NUM_SLS + sl];

			if (!c->inj_noted[s * ROUTE_NUM_SLS + sl])
				continue;
			for (uint8_t v = 0; v < NVL; v++)
				if (m & (1u << v))
					note_vl(c, v);
		}
	}
}

/*
 * The LIDs are checked in blocks of CK_BLOCK spread over threads (util/par.h),
 * each with its own checker (a copy of the first one's shared, read-only
 * part); their findings are merged in the end. Nothing a thread finds
 * depends on which LIDs it took: the verdict is the same with one thread or many.
 */
int route_check(const struct fabric *f, const struct route_result *r, struct route_check *out)
{
	struct checker c, *w = NULL;
	struct route_check *wout = NULL;
	size_t S = f->nswitches, nblocks = ((size_t)f->max_lid + CK_BLOCK - 1) / CK_BLOCK, chunk;
	uint64_t sum = 0;
	uint32_t links = 0;
	unsigned int nw = 1;
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
	c.comp = malloc((S + 1) * sizeof(*c.comp));
	c.nsrc = calloc(S + 1, sizeof(*c.nsrc));
	c.inj = calloc((S + 1) * ROUTE_NUM_SLS, sizeof(*c.inj));
	c.has_ca = calloc(S + 1, 1);
	if (!c.comp || !c.nsrc || !c.inj || !c.has_ca)
		goto out;
	ret = index_switches(&c);
	if (ret == 0)
		ret = thread_alloc(&c);
	if (ret == 0)
		ret = list_sources(&c);
	if (ret < 0)
		goto out;
	ret = -ENOMEM;
	components(&c);
	for (size_t i = 0; i < c.nsrc_all; i++)
		c.unattached += c.src[i].sw == RT_NONE;
	/* At most CK_WORKERS threads: each holds a few MB of its own at k=48 */
	chunk = (nblocks + CK_WORKERS - 1) / CK_WORKERS;
	chunk = chunk ? chunk : 1;
	nw = par_workers(nblocks, chunk);
	w = calloc(nw, sizeof(*w));
	wout = calloc(nw, sizeof(*wout));
	if (!w || !wout)
		goto out;
	w[0] = c;
	for (unsigned int i = 1; i < nw; i++) {
		w[i] = c;
		w[i].out = &wout[i];
		if (thread_alloc(&w[i]) < 0) {
			thread_free(&w[i]);
			nw = i;
			goto out;
		}
	}
	par_for(nblocks, chunk, check_blocks, w);
	c = w[0];
	ret = c.err;
	for (unsigned int i = 1; ret == 0 && i < nw; i++)
		ret = merge(&c, &w[i]);
	if (ret < 0)
		goto out;
	count_noted(&c);
	ret = find_cycle(&c, &out->acyclic);
	if (ret < 0)
		goto out;
	for (uint16_t v = c.vl_seen; v; v &= (uint16_t)(v - 1))
		out->vls_used++;
	for (size_t s = 0; s < S; s++) {
		for (uint32_t x = c.swbase[s] + 1; x <= c.swbase[s] + c.nps[s]; x++) {
			uint64_t l;

			if (c.nbr[x] >= NB_END)
				continue;
			l = c.load[c.gp[x]];
			links++;
			sum += l;
			if (l > out->max_link_routes)
				out->max_link_routes = (uint32_t)l;
		}
	}
	out->mean_link_routes = links ? (double)sum / links : 0;
	ret = 0;
out:
	for (unsigned int i = 1; w && i < nw; i++)
		thread_free(&w[i]);
	free(w);
	free(wout);
	checker_free(&c);
	return ret;
}
