// SPDX-License-Identifier: MIT
/*
 * A discovered fabric against its cabling plan (topo/plan.h): match the
 * nodes, compare every port of every matched node, and, with enforcement,
 * fence the switch-to-switch links that are wired wrong while the fabric
 * stays in one piece.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/plan.h"

struct check {
	const struct plan *p;
	struct fabric *f;
	struct fab_node **pmap;		/* plan node -> fabric node, NULL: not found */
	uint32_t *fmap;			/* fabric node idx -> plan node, PLAN_NONE */
	struct plan_mismatch *list;
	struct fab_port **at;		/* [i]: the port list[i] is about (NULL: a node) */
	size_t n, cap;
	struct plan_report *r;
};

/* ---- matching nodes ---- */

static void map(struct check *c, uint32_t pi, struct fab_node *n)
{
	c->pmap[pi] = n;
	c->fmap[n->idx] = pi;
	c->r->matched++;
}

enum key_mode { KEY_DESC, KEY_HOST };

struct key {
	uint8_t type;
	char s[PLAN_DESC_LEN + 1];
};

/* The key of a description: all of it, or a CA's host name (its first word) */
static bool make_key(const char *desc, uint8_t type, enum key_mode mode, struct key *k)
{
	k->type = type;
	plan_desc_norm(desc, k->s);
	if (mode == KEY_HOST) {
		if (type != NODE_TYPE_CA)
			return false;
		k->s[strcspn(k->s, " ")] = 0;
	}
	return k->s[0] != 0;
}

static uint64_t key_hash(const struct key *k)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325) ^ k->type;

	for (const char *s = k->s; *s; s++) {
		h ^= (unsigned char)*s;
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

/* One side's keys: how many nodes have each, and the first of them */
struct keytab {
	struct kt_ent {
		uint64_t h;
		uint32_t first, count;
		struct key k;
	} *e;
	size_t size;
};

static int kt_init(struct keytab *t, size_t n)
{
	t->size = 16;
	while (t->size < n * 2)
		t->size *= 2;
	t->e = calloc(t->size, sizeof(*t->e));
	return t->e ? 0 : -ENOMEM;
}

static struct kt_ent *kt_find(const struct keytab *t, const struct key *k, uint64_t h)
{
	size_t i = (size_t)h & (t->size - 1);

	for (; t->e[i].count; i = (i + 1) & (t->size - 1))
		if (t->e[i].h == h && t->e[i].k.type == k->type && !strcmp(t->e[i].k.s, k->s))
			return &t->e[i];
	return &t->e[i];	/* the empty slot it would go to */
}

static void kt_add(struct keytab *t, const struct key *k, uint32_t idx)
{
	uint64_t h = key_hash(k);
	struct kt_ent *e = kt_find(t, k, h);

	if (!e->count) {
		e->h = h;
		e->k = *k;
		e->first = idx;
	}
	e->count++;
}

/* Match what is left by description (or host name): one node on each side */
static int match_by(struct check *c, enum key_mode mode)
{
	const struct plan *p = c->p;
	struct fabric *f = c->f;
	struct keytab ft = { 0 }, pt = { 0 };
	struct key k;
	int r = -ENOMEM;

	if (kt_init(&ft, f->nnodes) < 0 || kt_init(&pt, p->nnodes) < 0)
		goto out;
	for (size_t i = 0; i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];

		if (c->fmap[i] == PLAN_NONE && n->desc_valid && make_key(n->desc, n->type, mode, &k))
			kt_add(&ft, &k, (uint32_t)i);
	}
	for (size_t i = 0; i < p->nnodes; i++)
		if (!c->pmap[i] && make_key(p->nodes[i].desc, p->nodes[i].type, mode, &k))
			kt_add(&pt, &k, (uint32_t)i);
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct kt_ent *fe, *pe;
		uint64_t h;

		if (c->pmap[i] || !make_key(p->nodes[i].desc, p->nodes[i].type, mode, &k))
			continue;
		h = key_hash(&k);
		fe = kt_find(&ft, &k, h);
		pe = kt_find(&pt, &k, h);
		if (fe->count == 1 && pe->count == 1 && c->fmap[fe->first] == PLAN_NONE)
			map(c, (uint32_t)i, f->nodes[fe->first]);
	}
	r = 0;
out:
	free(ft.e);
	free(pt.e);
	return r;
}

static int match_nodes(struct check *c)
{
	const struct plan *p = c->p;
	int r;

	for (size_t i = 0; i < p->nnodes; i++) {
		struct fab_node *n = p->nodes[i].guid ? fabric_find(c->f, p->nodes[i].guid) : NULL;

		if (n && c->fmap[n->idx] == PLAN_NONE)
			map(c, (uint32_t)i, n);
	}
	r = match_by(c, KEY_DESC);
	if (r == 0)
		r = match_by(c, KEY_HOST);
	return r;
}

/* ---- mismatches ---- */

static struct plan_mismatch *add(struct check *c, unsigned int kind, uint64_t guid,
				 const char *desc, unsigned int port, struct fab_port *at)
{
	struct plan_mismatch *m;

	if (c->n == c->cap) {
		size_t cap = c->cap ? c->cap * 2 : 64;
		struct plan_mismatch *l = realloc(c->list, cap * sizeof(*l));
		struct fab_port **a;

		if (!l)
			return NULL;
		c->list = l;
		a = realloc(c->at, cap * sizeof(*a));
		if (!a)
			return NULL;
		c->at = a;
		c->cap = cap;
	}
	m = &c->list[c->n];
	memset(m, 0, sizeof(*m));
	m->kind = (uint8_t)kind;
	m->node_guid = guid;
	plan_desc_norm(desc, m->node_desc);
	m->port = (uint8_t)port;
	c->at[c->n++] = at;
	c->r->count[kind]++;
	c->r->total++;
	return m;
}

static void end_text(char *buf, const char *desc, uint64_t guid, unsigned int port)
{
	char d[PLAN_DESC_LEN + 1];

	plan_desc_norm(desc, d);
	if (guid)
		snprintf(buf, PLAN_TEXT_LEN, "%s (0x%016" PRIx64 ") port %u", d, guid, port);
	else
		snprintf(buf, PLAN_TEXT_LEN, "%s port %u", d, port);
}

static const char *type_word(unsigned int type)
{
	return type == NODE_TYPE_SWITCH ? "switch" : type == NODE_TYPE_ROUTER ? "router" : "CA";
}

/* What the plan puts at the other end of a port, in words */
static void planned_text(const struct check *c, const struct plan_port *pp, char *buf)
{
	const struct plan_node *b = &c->p->nodes[pp->peer];
	const struct fab_node *fb = c->pmap[pp->peer];

	end_text(buf, b->desc, fb ? fb->guid : b->guid, pp->peer_port);
}

static void found_text(const struct fab_port *q, char *buf)
{
	const struct fab_node *n = q->node;

	end_text(buf, n->desc_valid ? n->desc : "", n->guid, q->num);
}

/* ---- width and speed (topo/linkrate.h) ---- */

static void rate_text(char *buf, unsigned int width, unsigned int speed)
{
	snprintf(buf, PLAN_TEXT_LEN, "%ux%s", width, link_speed_name(speed));
}

/*
 * A cable as planned: below the plan's width or speed, or below the best
 * both ends support and have enabled, it is degraded (a bad lane, a cable
 * that trains slow). Listed at this end; the other end lists its own.
 */
static int check_rate(struct check *c, const struct plan_port *pp, struct fab_port *fp)
{
	const struct fab_port *q = fp->peer;
	unsigned int w, s, want_w, want_s, best_w, best_s;
	struct link_rate a, b;
	struct plan_mismatch *m;

	if (!fp->pi_valid || !q->pi_valid || fp->pi.phys_state != PHYS_STATE_LINKUP ||
	    q->pi.phys_state != PHYS_STATE_LINKUP)
		return 0;
	link_rate_of(fp, &a);
	link_rate_of(q, &b);
	w = a.width;
	s = a.speed;
	if (!w || !s)
		return 0;
	link_rate_best(&a, &b, &best_w, &best_s);
	want_w = pp->width > best_w ? pp->width : best_w;
	want_s = pp->speed > best_s ? pp->speed : best_s;
	if (w >= want_w && s >= want_s)
		return 0;
	m = add(c, PLAN_DEGRADED, fp->node->guid, fp->node->desc_valid ? fp->node->desc : "",
		fp->num, fp);
	if (!m)
		return -ENOMEM;
	rate_text(m->expected, want_w > w ? want_w : w, want_s > s ? want_s : s);
	rate_text(m->found, w, s);
	return 0;
}

/* One port of a matched node against the plan */
static int check_port(struct check *c, const struct plan_node *pn, struct fab_node *n,
		      unsigned int k)
{
	const struct plan_port *pp = k <= pn->nports ? &pn->ports[k] : NULL;
	struct fab_port *fp = k <= n->num_ports ? &n->ports[k] : NULL;
	const struct fab_port *q = fp ? fp->peer : NULL;
	bool planned = pp && pp->peer != PLAN_NONE;
	const char *desc = n->desc_valid ? n->desc : "";
	struct plan_mismatch *m;

	/* Cabled to a port that never answered: the sweep reports that; nothing to compare */
	if (fp && !q && fp->peer_lost) {
		if (planned)
			return 0;
		m = add(c, PLAN_UNEXPECTED, n->guid, desc, k, fp);
		if (!m)
			return -ENOMEM;
		snprintf(m->found, PLAN_TEXT_LEN, "a port that does not answer");
		return 0;
	}
	if (!planned && !q)
		return 0;
	if (!planned) {
		m = add(c, PLAN_UNEXPECTED, n->guid, desc, k, fp);
		if (!m)
			return -ENOMEM;
		found_text(q, m->found);
		return 0;
	}
	if (!q) {
		m = add(c, PLAN_MISSING, n->guid, desc, k, fp);
		if (!m)
			return -ENOMEM;
		planned_text(c, pp, m->expected);
		return 0;
	}
	if (q->node == c->pmap[pp->peer] && q->num == pp->peer_port)
		return check_rate(c, pp, fp);
	m = add(c, PLAN_MISWIRED, n->guid, desc, k, fp);
	if (!m)
		return -ENOMEM;
	planned_text(c, pp, m->expected);
	found_text(q, m->found);
	return 0;
}

static int compare(struct check *c)
{
	const struct plan *p = c->p;
	struct fabric *f = c->f;
	struct plan_mismatch *m;

	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		if (c->fmap[i] != PLAN_NONE)
			continue;
		m = add(c, PLAN_UNKNOWN_NODE, n->guid, n->desc_valid ? n->desc : "", 0, NULL);
		if (!m)
			return -ENOMEM;
		snprintf(m->found, PLAN_TEXT_LEN, "%s, %u ports", type_word(n->type),
			 n->num_ports);
	}
	for (size_t i = 0; i < p->nnodes; i++) {
		const struct plan_node *pn = &p->nodes[i];
		struct fab_node *n = c->pmap[i];
		unsigned int ports;

		if (!n) {
			m = add(c, PLAN_MISSING, pn->guid, pn->desc, 0, NULL);
			if (!m)
				return -ENOMEM;
			snprintf(m->expected, PLAN_TEXT_LEN, "%s, %u ports", type_word(pn->type),
				 pn->nports);
			continue;
		}
		ports = n->num_ports > pn->nports ? n->num_ports : pn->nports;
		for (unsigned int k = 1; k <= ports; k++) {
			int r = check_port(c, pn, n, k);

			if (r < 0)
				return r;
		}
	}
	return 0;
}

/* ---- enforcement ---- */

static uint32_t uf_find(uint32_t *up, uint32_t x)
{
	while (up[x] != x) {
		up[x] = up[up[x]];
		x = up[x];
	}
	return x;
}

/* A link enforcement would fence: wired wrong, up, between two switches */
static bool fenceable(const struct plan_mismatch *m, const struct fab_port *p)
{
	const struct fab_port *q = p ? p->peer : NULL;

	return (m->kind == PLAN_MISWIRED || m->kind == PLAN_UNEXPECTED) && q &&
	       p->node->type == NODE_TYPE_SWITCH && q->node->type == NODE_TYPE_SWITCH &&
	       fabric_port_linked(p);
}

/* p's link is decided at p: the other end is not listed, or comes later */
static bool decides(const struct check *c, const struct fab_port *p)
{
	const struct fab_port *q = p->peer;

	if (c->fmap[q->node->idx] == PLAN_NONE)
		return true;
	if (p->node != q->node)
		return p->node->idx < q->node->idx;
	return p->num < q->num;
}

/*
 * Kruskal's way: join what every other link joins, then take the wrong
 * links in order; one that joins two parts the fabric would otherwise lose
 * stays up, the others are fenced. The fewest wrong links stay. Both ends
 * of a wrong link between matched switches are listed (the plan is
 * symmetric: an end that is wrong makes the other one wrong), and the link
 * is decided once, at its first end.
 */
static int enforce(struct check *c)
{
	struct fabric *f = c->f;
	uint32_t *up = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*up));
	bool *wrong = calloc(c->n ? c->n : 1, sizeof(*wrong));

	if (!up || !wrong) {
		free(up);
		free(wrong);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->n; i++)
		wrong[i] = fenceable(&c->list[i], c->at[i]);
	/* The parts the right links make: fenced for a moment, the wrong ones do not count */
	for (size_t i = 0; i < c->n; i++)
		if (wrong[i])
			c->at[i]->fenced = true;
	for (size_t i = 0; i < f->nnodes; i++)
		up[i] = (uint32_t)i;
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		for (unsigned int k = 1; k <= n->num_ports; k++) {
			struct fab_port *p = &n->ports[k];

			if (fabric_port_linked(p))
				up[uf_find(up, n->idx)] = uf_find(up, p->peer->node->idx);
		}
	}
	for (size_t i = 0; i < c->n; i++)
		if (wrong[i])
			c->at[i]->fenced = false;
	for (size_t i = 0; i < c->n; i++) {
		struct fab_port *p = c->at[i], *q;
		uint32_t a, b;

		if (!wrong[i] || !decides(c, p))
			continue;
		q = p->peer;
		a = uf_find(up, p->node->idx);
		b = uf_find(up, q->node->idx);
		if (a != b) {
			up[a] = b;
			c->r->kept++;
			continue;
		}
		p->fenced = q->fenced = true;
		c->r->held++;
	}
	for (size_t i = 0; i < c->n; i++)
		if (wrong[i])
			c->list[i].action = c->at[i]->fenced ? PLAN_HELD : PLAN_KEPT;
	free(up);
	free(wrong);
	return 0;
}

/* ---- the report ---- */

static int cmp_mismatch(const void *a, const void *b)
{
	const struct plan_mismatch *x = a, *y = b;

	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->node_guid != y->node_guid)
		return x->node_guid < y->node_guid ? -1 : 1;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return strcmp(x->node_desc, y->node_desc);
}

/* The same mismatches give the same sum, whatever their order */
static uint64_t mismatch_sig(const struct plan_mismatch *m)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);
	const char *parts[3] = { m->node_desc, m->expected, m->found };
	uint64_t nums[4] = { m->node_guid, m->port, m->kind, m->action };

	for (size_t i = 0; i < 4; i++)
		for (unsigned int b = 0; b < 64; b += 8) {
			h ^= (nums[i] >> b) & 0xff;
			h *= UINT64_C(0x100000001b3);
		}
	for (size_t i = 0; i < 3; i++)
		for (const char *s = parts[i]; ; s++) {
			h ^= (unsigned char)*s;
			h *= UINT64_C(0x100000001b3);
			if (!*s)
				break;
		}
	h ^= h >> 29;
	h *= UINT64_C(0xbf58476d1ce4e5b9);
	return h ^ (h >> 32);
}

/* Each check starts from a fabric without fences: they are its verdict */
static void unfence(struct fabric *f)
{
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int k = 0; k <= f->nodes[i]->num_ports; k++)
			f->nodes[i]->ports[k].fenced = false;
}

int plan_check(const struct plan *p, struct fabric *f, bool enforce_it, struct plan_report **out)
{
	struct check c = { .p = p, .f = f };
	int r = -ENOMEM;

	*out = NULL;
	c.r = calloc(1, sizeof(*c.r));
	c.pmap = calloc(p->nnodes ? p->nnodes : 1, sizeof(*c.pmap));
	c.fmap = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*c.fmap));
	if (!c.r || !c.pmap || !c.fmap)
		goto fail;
	memset(c.fmap, 0xff, (f->nnodes ? f->nnodes : 1) * sizeof(*c.fmap));
	unfence(f);
	r = match_nodes(&c);
	if (r == 0)
		r = compare(&c);
	if (r == 0 && enforce_it)
		r = enforce(&c);
	if (r < 0)
		goto fail;
	for (size_t i = 0; i < c.n; i++)
		c.r->sig += mismatch_sig(&c.list[i]);
	if (c.n)
		qsort(c.list, c.n, sizeof(*c.list), cmp_mismatch);
	if (c.n > PLAN_LIST_MAX) {
		struct plan_mismatch *l = realloc(c.list, PLAN_LIST_MAX * sizeof(*l));

		if (l)
			c.list = l;
		c.n = PLAN_LIST_MAX;
	}
	c.r->list = c.list;
	c.r->n = c.n;
	free(c.at);
	free(c.pmap);
	free(c.fmap);
	*out = c.r;
	return 0;
fail:
	unfence(f);
	free(c.list);
	free(c.at);
	free(c.pmap);
	free(c.fmap);
	free(c.r);
	return -ENOMEM;
}

struct plan_report *plan_report_free(struct plan_report *r)
{
	if (r) {
		free(r->list);
		free(r);
	}
	return NULL;
}
