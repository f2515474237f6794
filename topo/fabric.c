// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "topo/fabric.h"

static size_t hash_guid(uint64_t g, size_t size)
{
	g ^= g >> 33;
	g *= UINT64_C(0xff51afd7ed558ccd);
	g ^= g >> 33;
	return (size_t)g & (size - 1);
}

int fabric_new(struct fabric **out)
{
	struct fabric *f = calloc(1, sizeof(*f));

	if (!f)
		return -ENOMEM;
	f->hash_size = 1024;
	f->by_guid = calloc(f->hash_size, sizeof(*f->by_guid));
	f->by_lid = calloc(LID_UCAST_MAX + 1, sizeof(*f->by_lid));
	if (!f->by_guid || !f->by_lid)
		return fabric_free(f), -ENOMEM;
	*out = f;
	return 0;
}

/*
 * VL arbitration blocks, each kept once per model: most ports hold the
 * same few (k=40 fat-tree: 96,000 ports, 4 blocks each, 25 MB otherwise)
 */
struct fab_pool {
	struct vl_arb_entry **slot;	/* open addressing, power-of-two size */
	size_t size, n;
};

static size_t block_hash(const struct vl_arb_entry *e, size_t size)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	const uint8_t *b = (const uint8_t *)e;

	for (size_t i = 0; i < VL_ARB_BLOCK_SIZE * sizeof(*e); i++)
		h = (h ^ b[i]) * UINT64_C(0x100000001b3);
	return (size_t)(h ^ (h >> 29)) & (size - 1);
}

static void pool_free(struct fab_pool *pl)
{
	if (!pl)
		return;
	for (size_t i = 0; i < pl->size; i++)
		free(pl->slot[i]);
	free(pl->slot);
	free(pl);
}

static int pool_grow(struct fab_pool *pl)
{
	size_t nsize = pl->size ? pl->size * 2 : 64;
	struct vl_arb_entry **ns = calloc(nsize, sizeof(*ns));

	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < pl->size; i++) {
		size_t h;

		if (!pl->slot[i])
			continue;
		for (h = block_hash(pl->slot[i], nsize); ns[h]; h = (h + 1) & (nsize - 1))
			;
		ns[h] = pl->slot[i];
	}
	free(pl->slot);
	pl->slot = ns;
	pl->size = nsize;
	return 0;
}

/* The model's copy of block e: found, or added */
static const struct vl_arb_entry *pool_intern(struct fabric *f, const struct vl_arb_entry *e)
{
	const size_t len = VL_ARB_BLOCK_SIZE * sizeof(*e);
	struct fab_pool *pl = f->pool;
	size_t h;

	if (!pl) {
		pl = f->pool = calloc(1, sizeof(*pl));
		if (!pl)
			return NULL;
	}
	if ((pl->n + 1) * 2 > pl->size && pool_grow(pl) < 0)
		return NULL;
	for (h = block_hash(e, pl->size); pl->slot[h]; h = (h + 1) & (pl->size - 1))
		if (!memcmp(pl->slot[h], e, len))
			return pl->slot[h];
	pl->slot[h] = malloc(len);
	if (!pl->slot[h])
		return NULL;
	memcpy(pl->slot[h], e, len);
	pl->n++;
	return pl->slot[h];
}

static void node_free(struct fab_node *n)
{
	for (unsigned int i = 0; i <= n->num_ports; i++)
		free(n->ports[i].pkey_tab);
	free(n->sl2vl_tab);
	free(n->sl2vl_known);
	free(n->ports);
	free(n->lft);
	free(n);
}

struct fabric *fabric_free(struct fabric *f)
{
	if (!f)
		return NULL;
	for (size_t i = 0; i < f->nnodes; i++)
		node_free(f->nodes[i]);
	free(f->nodes);
	free(f->switches);
	free(f->by_guid);
	free(f->by_lid);
	pool_free(f->pool);
	free(f);
	return NULL;
}

struct fab_node *fabric_find(const struct fabric *f, uint64_t guid)
{
	for (size_t h = hash_guid(guid, f->hash_size);; h = (h + 1) & (f->hash_size - 1)) {
		struct fab_node *n = f->by_guid[h];

		if (!n || n->guid == guid)
			return n;
	}
}

static int hash_grow(struct fabric *f)
{
	size_t nsize = f->hash_size * 2;
	struct fab_node **nh = calloc(nsize, sizeof(*nh));

	if (!nh)
		return -ENOMEM;
	for (size_t i = 0; i < f->nnodes; i++) {
		size_t h = hash_guid(f->nodes[i]->guid, nsize);

		while (nh[h])
			h = (h + 1) & (nsize - 1);
		nh[h] = f->nodes[i];
	}
	free(f->by_guid);
	f->by_guid = nh;
	f->hash_size = nsize;
	return 0;
}

int fabric_add_node(struct fabric *f, const struct node_info *ni, struct fab_node **out)
{
	struct fab_node *n;
	size_t h;

	n = fabric_find(f, ni->node_guid);
	if (n) {
		*out = n;
		return -EEXIST;
	}
	if (!ni->num_ports)
		return -EINVAL;
	if ((f->nnodes + 1) * 2 > f->hash_size && hash_grow(f) < 0)
		return -ENOMEM;
	if (f->nnodes == f->cap) {
		size_t ncap = f->cap ? f->cap * 2 : 256;
		struct fab_node **nn = realloc(f->nodes, ncap * sizeof(*nn));
		struct fab_node **ns;

		if (!nn)
			return -ENOMEM;
		f->nodes = nn;
		ns = realloc(f->switches, ncap * sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		f->switches = ns;
		f->cap = ncap;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return -ENOMEM;
	n->ports = calloc((size_t)ni->num_ports + 1, sizeof(*n->ports));
	if (!n->ports) {
		free(n);
		return -ENOMEM;
	}
	n->guid = ni->node_guid;
	n->ni = *ni;
	n->type = ni->node_type;
	n->num_ports = ni->num_ports;
	for (unsigned int i = 0; i <= n->num_ports; i++) {
		n->ports[i].node = n;
		n->ports[i].num = (uint8_t)i;
		if (n->type == NODE_TYPE_SWITCH)
			n->ports[i].guid = n->guid;
	}
	n->idx = (uint32_t)f->nnodes;
	f->nodes[f->nnodes++] = n;
	if (n->type == NODE_TYPE_SWITCH) {
		n->sw_idx = (uint32_t)f->nswitches;
		f->switches[f->nswitches++] = n;
	}
	for (h = hash_guid(n->guid, f->hash_size); f->by_guid[h]; h = (h + 1) & (f->hash_size - 1))
		;
	f->by_guid[h] = n;
	*out = n;
	return 0;
}

int fabric_remove_nodes(struct fabric *f, bool (*drop)(void *ctx, const struct fab_node *n),
			void *ctx)
{
	size_t gone = 0, k = 0, ks = 0;
	bool *mark = calloc(f->nnodes ? f->nnodes : 1, sizeof(*mark));

	if (!mark)
		return -ENOMEM;
	/* Cut every cable of a node that goes before freeing any */
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		if (!drop(ctx, n))
			continue;
		mark[i] = true;
		gone++;
		for (unsigned int pn = 0; pn <= n->num_ports; pn++) {
			struct fab_port *p = &n->ports[pn];

			if (p->peer && p->peer->peer == p)
				p->peer->peer = NULL;
			p->peer = NULL;
		}
	}
	if (!gone) {
		free(mark);
		return 0;
	}
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		if (mark[i]) {
			node_free(n);
			continue;
		}
		n->idx = (uint32_t)k;
		f->nodes[k++] = n;
		if (n->type == NODE_TYPE_SWITCH) {
			n->sw_idx = (uint32_t)ks;
			f->switches[ks++] = n;
		}
	}
	f->nnodes = k;
	f->nswitches = ks;
	memset(f->by_guid, 0, f->hash_size * sizeof(*f->by_guid));
	for (size_t i = 0; i < f->nnodes; i++) {
		size_t h = hash_guid(f->nodes[i]->guid, f->hash_size);

		while (f->by_guid[h])
			h = (h + 1) & (f->hash_size - 1);
		f->by_guid[h] = f->nodes[i];
	}
	fabric_index_lids(f);
	free(mark);
	return (int)gone;
}

struct fab_port *fabric_port(const struct fab_node *n, unsigned int num)
{
	if (!n || num > n->num_ports)
		return NULL;
	return &n->ports[num];
}

int fabric_link(struct fabric *f, struct fab_port *a, struct fab_port *b)
{
	/* Port 0 is a switch's own management port: no cable ends there */
	if (!a || !b || a == b || a->num == 0 || b->num == 0)
		return -EINVAL;
	if (a->peer == b && b->peer == a)
		return 0;
	if (a->peer)
		a->peer->peer = NULL;
	if (b->peer)
		b->peer->peer = NULL;
	a->peer = b;
	b->peer = a;
	a->peer_lost = b->peer_lost = false;
	return 0;
}

/* ---- VL tables held ---- */

uint64_t sl2vl_pack(const uint8_t vl[16])
{
	uint64_t v = 0;

	for (unsigned int sl = 0; sl < 16; sl++)
		v |= (uint64_t)(vl[sl] & 0xf) << (60 - 4 * sl);
	return v;
}

void sl2vl_unpack(uint64_t packed, uint8_t vl[16])
{
	for (unsigned int sl = 0; sl < 16; sl++)
		vl[sl] = (uint8_t)(packed >> (60 - 4 * sl) & 0xf);
}

/* A table port: PortInfo known and the link up (a switch's port 0 always) */
static bool table_port(const struct fab_node *n, unsigned int pn)
{
	if (pn == 0)
		return n->type == NODE_TYPE_SWITCH;
	return n->ports[pn].pi_valid && fabric_port_up(&n->ports[pn]);
}

bool fabric_sl2vl_pair(const struct fab_node *n, unsigned int in, unsigned int out)
{
	if (out == 0 || out > n->num_ports || in > n->num_ports || !table_port(n, out))
		return false;
	if (n->type != NODE_TYPE_SWITCH)
		return in == 0;
	return in != out && table_port(n, in);
}

static size_t sl2vl_entries(const struct fab_node *n)
{
	size_t w = (size_t)n->num_ports + 1;

	return n->type == NODE_TYPE_SWITCH ? w * w : w;
}

/* The entry of (in, out), or -1 for a pair the node cannot have */
static ssize_t sl2vl_index(const struct fab_node *n, unsigned int in, unsigned int out)
{
	if (in > n->num_ports || out > n->num_ports)
		return -1;
	if (n->type != NODE_TYPE_SWITCH)
		return in ? -1 : (ssize_t)out;
	return (ssize_t)in * (n->num_ports + 1) + out;
}

int fabric_sl2vl_set(struct fab_node *n, unsigned int in, unsigned int out, uint64_t vl)
{
	ssize_t i = sl2vl_index(n, in, out);
	size_t len = sl2vl_entries(n);

	if (i < 0)
		return -EINVAL;
	if (!n->sl2vl_known) {
		n->sl2vl_known = calloc((len + 63) / 64, sizeof(*n->sl2vl_known));
		if (!n->sl2vl_known)
			return -ENOMEM;
		n->sl2vl_one = vl;
	} else if (!n->sl2vl_tab && vl != n->sl2vl_one) {
		/* The first that differs: one entry each from now on */
		n->sl2vl_tab = malloc(len * sizeof(*n->sl2vl_tab));
		if (!n->sl2vl_tab)
			return -ENOMEM;
		for (size_t k = 0; k < len; k++)
			n->sl2vl_tab[k] = n->sl2vl_one;
	}
	if (n->sl2vl_tab)
		n->sl2vl_tab[i] = vl;
	n->sl2vl_known[i / 64] |= UINT64_C(1) << (i % 64);
	return 0;
}

int fabric_sl2vl_get(const struct fab_node *n, unsigned int in, unsigned int out, uint64_t *vl)
{
	ssize_t i = sl2vl_index(n, in, out);

	if (i < 0)
		return -EINVAL;
	if (!n->sl2vl_known || !(n->sl2vl_known[i / 64] >> (i % 64) & 1))
		return -ENOENT;
	*vl = n->sl2vl_tab ? n->sl2vl_tab[i] : n->sl2vl_one;
	return 0;
}

void fabric_sl2vl_forget(struct fab_node *n, unsigned int in, unsigned int out)
{
	ssize_t i = sl2vl_index(n, in, out);

	if (i >= 0 && n->sl2vl_known)
		n->sl2vl_known[i / 64] &= ~(UINT64_C(1) << (i % 64));
}

bool fabric_vlarb_port(const struct fab_port *p)
{
	return p->num && table_port(p->node, p->num);
}

bool fabric_vlarb_has_block(const struct fab_port *p, unsigned int block)
{
	/* IBA 14.2.5.9: blocks 1-2 the low table, 3-4 the high, 32 entries each */
	unsigned int cap = block <= 2 ? p->pi.vl_arb_low_cap : p->pi.vl_arb_high_cap;

	return block >= 1 && block <= 4 && cap > ((block - 1) & 1) * VL_ARB_BLOCK_SIZE;
}

int fabric_vlarb_set(struct fabric *f, struct fab_port *p, unsigned int block,
		     const struct vl_arb_entry e[VL_ARB_BLOCK_SIZE])
{
	const struct vl_arb_entry *b;

	if (block < 1 || block > 4)
		return -EINVAL;
	b = pool_intern(f, e);
	if (!b)
		return -ENOMEM;
	p->vlarb[block - 1] = b;
	return 0;
}

const struct vl_arb_entry *fabric_vlarb_get(const struct fab_port *p, unsigned int block)
{
	return block >= 1 && block <= 4 ? p->vlarb[block - 1] : NULL;
}

int fabric_vl_tables_copy(struct fabric *f, struct fab_node *n, const struct fab_node *old)
{
	size_t len = sl2vl_entries(n), words = (len + 63) / 64;

	if (old->type != n->type || old->num_ports != n->num_ports)
		return -EINVAL;
	if (old->sl2vl_known) {
		uint64_t *known = malloc(words * sizeof(*known)), *tab = NULL;

		if (!known)
			return -ENOMEM;
		if (old->sl2vl_tab) {
			tab = malloc(len * sizeof(*tab));
			if (!tab) {
				free(known);
				return -ENOMEM;
			}
			memcpy(tab, old->sl2vl_tab, len * sizeof(*tab));
		}
		memcpy(known, old->sl2vl_known, words * sizeof(*known));
		free(n->sl2vl_known);
		free(n->sl2vl_tab);
		n->sl2vl_known = known;
		n->sl2vl_tab = tab;
		n->sl2vl_one = old->sl2vl_one;
	}
	for (unsigned int pn = 0; pn <= n->num_ports; pn++)
		for (unsigned int b = 1; b <= 4; b++)
			if (old->ports[pn].vlarb[b - 1] &&
			    fabric_vlarb_set(f, &n->ports[pn], b, old->ports[pn].vlarb[b - 1]) < 0)
				return -ENOMEM;
	return 0;
}

enum iba_speed fabric_port_speed(const struct fab_port *p)
{
	const struct fab_port *caps = p->node->type == NODE_TYPE_SWITCH ? &p->node->ports[0] : p;

	/* IBA 14.2.5.6: CapabilityMask is reserved on a switch's external ports */
	return iba_speed_active(&p->pi, caps->pi_valid ? &caps->pi : NULL, p->fdr10);
}

bool fabric_is_endport(const struct fab_port *p)
{
	if (p->node->type == NODE_TYPE_SWITCH)
		return p->num == 0;
	return p->num > 0;
}

bool fabric_port_up(const struct fab_port *p)
{
	return p->num > 0 && p->peer && p->peer->peer == p && p->peer->num > 0 &&
	       !p->fenced && !p->peer->fenced && p->pi_valid && p->peer->pi_valid &&
	       p->pi.phys_state == PHYS_STATE_LINKUP &&
	       p->peer->pi.phys_state == PHYS_STATE_LINKUP;
}

bool fabric_port_linked(const struct fab_port *p)
{
	return fabric_port_up(p) && !p->isolated && !p->peer->isolated;
}

const struct dr_path *fabric_port_route(const struct fab_port *p)
{
	if (p->node->type == NODE_TYPE_SWITCH)
		return &p->node->path;
	return p->has_path ? &p->path : NULL;
}

struct fab_port *fabric_walk(const struct fab_port *from, const uint8_t *port, unsigned int hops)
{
	struct fab_port *cur = (struct fab_port *)from;

	if (!from || hops > SMP_MAX_HOPS)
		return NULL;
	for (unsigned int i = 1; i <= hops; i++) {
		struct fab_node *n = cur->node;
		struct fab_port *out;

		if (n->type != NODE_TYPE_SWITCH && i > 1)
			return NULL;
		if (n->type == NODE_TYPE_SWITCH && port[i] == 0) {
			cur = &n->ports[0];
			continue;
		}
		out = fabric_port(n, port[i]);
		if (!out || !out->num || !out->peer)
			return NULL;
		cur = out->peer;
	}
	return cur->node->type == NODE_TYPE_SWITCH ? &cur->node->ports[0] : cur;
}

int fabric_index_lids(struct fabric *f)
{
	int r = 0;

	memset(f->by_lid, 0, (LID_UCAST_MAX + 1) * sizeof(*f->by_lid));
	f->max_lid = 0;
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 0; pn <= n->num_ports; pn++) {
			struct fab_port *p = &n->ports[pn];
			unsigned int count = 1u << p->lmc;

			if (!fabric_is_endport(p) || !p->lid)
				continue;
			for (unsigned int k = 0; k < count; k++) {
				unsigned int lid = p->lid + k;

				if (lid > LID_UCAST_MAX || (f->by_lid[lid] && f->by_lid[lid] != p)) {
					r = -EADDRINUSE;
					continue;
				}
				f->by_lid[lid] = p;
				if (lid > f->max_lid)
					f->max_lid = (uint16_t)lid;
			}
		}
	}
	return r;
}

struct fab_port *fabric_port_by_lid(const struct fabric *f, uint16_t lid)
{
	if (lid == 0 || lid > LID_UCAST_MAX)
		return NULL;
	return f->by_lid[lid];
}

size_t fabric_count_ports(const struct fabric *f, size_t *endports, size_t *links)
{
	size_t ports = 0, ep = 0, ln = 0;

	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 0; pn <= n->num_ports; pn++) {
			struct fab_port *p = &n->ports[pn];

			if (pn > 0 && p->pi_valid)
				ports++;
			if (fabric_is_endport(p) && (pn == 0 || p->pi_valid))
				ep++;
			/* count each cable once, from its lower end */
			if (p->peer && (p->node->guid < p->peer->node->guid ||
					(p->node == p->peer->node && p->num < p->peer->num)))
				ln++;
		}
	}
	if (endports)
		*endports = ep;
	if (links)
		*links = ln;
	return ports;
}

static int pkey_cmp(const void *x, const void *y)
{
	uint16_t a = *(const uint16_t *)x, b = *(const uint16_t *)y;

	/* By partition, the full member's entry first */
	if ((a & 0x7fff) != (b & 0x7fff))
		return (a & 0x7fff) < (b & 0x7fff) ? -1 : 1;
	return (b & 0x8000) - (a & 0x8000);
}

int fabric_port_set_pkeys(struct fab_port *p, const uint16_t *tab, unsigned int len)
{
	unsigned int used = 0, n = 0, keep;
	uint16_t *t;

	for (unsigned int i = 0; i < len; i++)
		if (tab[i] & 0x7fff)
			used = i + 1;
	/* Whole 32-entry blocks (IBA 14.2.5.7), at least the first */
	keep = (used + 31) / 32 * 32;
	if (keep < 32)
		keep = 32;
	if (keep > len)
		keep = len;
	t = malloc(((size_t)keep + used + 1) * sizeof(*t));
	if (!t)
		return -ENOMEM;
	memcpy(t, tab, keep * sizeof(*t));
	for (unsigned int i = 0; i < used; i++)
		if (tab[i] & 0x7fff)
			t[keep + n++] = tab[i];
	qsort(t + keep, n, sizeof(*t), pkey_cmp);
	/* One entry per partition: the first of its base, the full one if any */
	{
		unsigned int k = 0;

		for (unsigned int i = 0; i < n; i++)
			if (!k || (t[keep + k - 1] & 0x7fff) != (t[keep + i] & 0x7fff))
				t[keep + k++] = t[keep + i];
		n = k;
	}
	free(p->pkey_tab);
	p->pkey_tab = t;
	p->pkey_len = (uint16_t)keep;
	p->pkey_nkeys = (uint16_t)n;
	return 0;
}

const uint16_t *fabric_port_pkeys(const struct fab_port *p, unsigned int *n)
{
	static const uint16_t dflt = 0xffff;

	if (!p->pkey_tab) {
		*n = 1;
		return &dflt;
	}
	*n = p->pkey_nkeys;
	return p->pkey_tab + p->pkey_len;
}

void fabric_count_routes(const struct fabric *f, const struct fab_node *n, uint32_t *per_port,
			 uint32_t *routed, uint32_t *unrouted)
{
	memset(per_port, 0, ((size_t)n->num_ports + 1) * sizeof(*per_port));
	*routed = *unrouted = 0;
	for (uint32_t lid = LID_UCAST_MIN; lid <= f->max_lid; lid++) {
		uint8_t out = lid < n->lft_len ? n->lft[lid] : LFT_PORT_NONE;

		if (out <= n->num_ports) {
			per_port[out]++;
			(*routed)++;
		} else if (f->by_lid[lid]) {
			(*unrouted)++;
		}
	}
}
