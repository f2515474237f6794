// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/discover.h"

/* GUID -> pointer, open addressing; GUID 0 (never valid) marks an empty slot */
struct gmap {
	uint64_t *key;
	void **val;
	size_t size, n;
};

static size_t gmap_hash(uint64_t g, size_t size)
{
	g ^= g >> 33;
	g *= UINT64_C(0xff51afd7ed558ccd);
	g ^= g >> 33;
	return (size_t)g & (size - 1);
}

static void gmap_free(struct gmap *m)
{
	free(m->key);
	free(m->val);
	memset(m, 0, sizeof(*m));
}

static void *gmap_get(const struct gmap *m, uint64_t key)
{
	if (!m->size || !key)
		return NULL;
	for (size_t h = gmap_hash(key, m->size);; h = (h + 1) & (m->size - 1)) {
		if (m->key[h] == key)
			return m->val[h];
		if (!m->key[h])
			return NULL;
	}
}

static int gmap_put(struct gmap *m, uint64_t key, void *val)
{
	size_t h;

	if (!key)
		return -EINVAL;
	for (h = m->size ? gmap_hash(key, m->size) : 0; m->size && m->key[h];
	     h = (h + 1) & (m->size - 1))
		if (m->key[h] == key) {
			m->val[h] = val;	/* replacing never allocates */
			return 0;
		}
	if ((m->n + 1) * 2 > m->size) {
		struct gmap nm = { .size = m->size ? m->size * 2 : 256 };

		nm.key = calloc(nm.size, sizeof(*nm.key));
		nm.val = calloc(nm.size, sizeof(*nm.val));
		if (!nm.key || !nm.val) {
			gmap_free(&nm);
			return -ENOMEM;
		}
		for (size_t i = 0; i < m->size; i++) {
			if (!m->key[i])
				continue;
			h = gmap_hash(m->key[i], nm.size);
			while (nm.key[h])
				h = (h + 1) & (nm.size - 1);
			nm.key[h] = m->key[i];
			nm.val[h] = m->val[i];
		}
		nm.n = m->n;
		gmap_free(m);
		*m = nm;
	}
	for (h = gmap_hash(key, m->size); m->key[h]; h = (h + 1) & (m->size - 1))
		;
	m->n++;
	m->key[h] = key;
	m->val[h] = val;
	return 0;
}

struct disc {
	struct fabric *f;
	struct disc_probe *q;	/* FIFO ring: breadth-first order */
	size_t qcap, qhead, qlen;
	struct fab_node *local;
	uint8_t local_port;
	struct disc_stats stats;
	struct gmap ports;	/* port GUID -> its port: CA/router ports, switch port 0 */
	struct gmap banned;	/* node GUIDs whose places are left out */
	struct gmap seen_dup;	/* GUIDs already reported as duplicates: 1 node, 2 port */
	struct gmap pending;	/* port address -> the port: a cable to it being checked */
	struct gmap probing;	/* port -> port: a NodeInfo out of it through its node's
				 * own route is in flight (a probe or a check) */
	struct gmap via;	/* port -> what that NodeInfo reached: a model port, or
				 * VIA_FAIL, VIA_BAD, VIA_OTHER */
	struct gmap wait;	/* port -> the port of a cable that waits for that answer */
	struct disc_dup dups[DISC_DUPS_MAX];
	unsigned int ndups;
	const char *why;
};

int disc_new(struct fabric *f, struct disc **out)
{
	struct disc *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->f = f;
	d->why = "";
	*out = d;
	return 0;
}

struct disc *disc_free(struct disc *d)
{
	if (d) {
		free(d->q);
		gmap_free(&d->ports);
		gmap_free(&d->banned);
		gmap_free(&d->seen_dup);
		gmap_free(&d->pending);
		gmap_free(&d->probing);
		gmap_free(&d->via);
		gmap_free(&d->wait);
		free(d);
	}
	return NULL;
}

static int disc_push(struct disc *d, const struct disc_probe *p)
{
	if (d->qlen == d->qcap) {
		size_t ncap = d->qcap ? d->qcap * 2 : 1024;
		struct disc_probe *nq = malloc(ncap * sizeof(*nq));

		if (!nq)
			return -ENOMEM;
		for (size_t i = 0; i < d->qlen; i++)
			nq[i] = d->q[(d->qhead + i) % d->qcap];
		free(d->q);
		d->q = nq;
		d->qcap = ncap;
		d->qhead = 0;
	}
	d->q[(d->qhead + d->qlen++) % d->qcap] = *p;
	d->stats.probes++;
	return 0;
}

static int push_simple(struct disc *d, enum disc_kind kind, struct fab_node *n,
		       const struct dr_path *path, uint8_t port)
{
	struct disc_probe p = { .kind = kind, .path = *path, .node = n, .port = port };

	return disc_push(d, &p);
}

int disc_start(struct disc *d)
{
	struct disc_probe p = { .kind = DISC_NODE_INFO };

	return disc_push(d, &p);
}

bool disc_next(struct disc *d, struct disc_probe *out)
{
	if (!d->qlen)
		return false;
	*out = d->q[d->qhead];
	d->qhead = (d->qhead + 1) % d->qcap;
	d->qlen--;
	return true;
}

/* What a NodeInfo out of a port reached, besides a port of the model */
static char via_fail, via_bad, via_other;
#define VIA_FAIL	((void *)&via_fail)	/* no answer */
#define VIA_BAD		((void *)&via_bad)	/* an answer that broke the rules */
#define VIA_OTHER	((void *)&via_other)	/* a node the model does not hold */

static uint64_t port_key(const struct fab_port *p)
{
	return (uint64_t)(uintptr_t)p;
}

static int reject(struct disc *d, const char *why)
{
	d->stats.rejected++;
	d->why = why;
	return -EPROTO;
}

/* Where SMPs reach port p: a CA port's own route, a switch's route */
static const struct dr_path *port_place(const struct fab_port *p)
{
	return p->has_path ? &p->path : &p->node->path;
}

/* The route that crosses the cable starting at port from */
static void cable_route(const struct fab_port *from, struct dr_path *out)
{
	if (dr_path_extend(&from->node->path, from->num, out) < 0)
		*out = from->node->path;
}

/*
 * Whether the cable from port from is how node n was first reached: then a
 * check of it that fails says n misstates the port it entered by, not that
 * a second node has n's GUID.
 */
static bool first_reached(const struct fab_node *n, const struct fab_port *from)
{
	struct dr_path r;

	cable_route(from, &r);
	return r.hops == n->path.hops && !memcmp(r.port + 1, n->path.port + 1, r.hops);
}

static int ban(struct disc *d, const struct fab_node *n)
{
	/* The SM's own node is reached at hop 0 and certain: the other place goes */
	if (!n || n == d->local)
		return 0;
	return gmap_put(&d->banned, n->guid, (void *)1);
}

/*
 * A GUID seen at two places: report it once, and leave the nodes at both
 * places out (a and b; NULL where the place never entered the model).
 */
static int record_dup(struct disc *d, uint64_t guid, bool port_guid, const struct dr_path *first,
		      const struct dr_path *again, const struct fab_node *a,
		      const struct fab_node *b)
{
	uintptr_t kind = port_guid ? 2 : 1, seen = (uintptr_t)gmap_get(&d->seen_dup, guid);
	int r;

	if (!(seen & kind)) {
		r = gmap_put(&d->seen_dup, guid, (void *)(seen | kind));
		if (r < 0)
			return r;
		d->stats.duplicates++;
		if (d->ndups < DISC_DUPS_MAX) {
			struct disc_dup *x = &d->dups[d->ndups++];

			x->guid = guid;
			x->port_guid = port_guid;
			x->first = *first;
			x->again = *again;
		}
	}
	r = ban(d, a);
	return r < 0 ? r : ban(d, b);
}

/* Index a port GUID: 1 when another port holds it (recorded as a duplicate) */
static int index_port(struct disc *d, uint64_t guid, struct fab_port *port,
		      const struct dr_path *where)
{
	struct fab_port *q = gmap_get(&d->ports, guid);
	int r;

	if (!q)
		return gmap_put(&d->ports, guid, port);
	if (q == port)
		return 0;
	r = record_dup(d, guid, true, port_place(q), where, q->node, port->node);
	return r < 0 ? r : 1;
}

/* Cable from to port, unless either end already has another cable */
static int cable(struct disc *d, struct fab_port *from, struct fab_port *port)
{
	if ((from->peer && from->peer != port) || (port->peer && port->peer != from))
		return reject(d, "the two ends of a cable name different peers");
	return fabric_link(d->f, from, port);
}

/* IBA 14.2.5.3 (NodeInfo), checked before anything is taken from it */
static const char *ni_check(const struct node_info *ni, const struct disc_probe *p)
{
	if (ni->node_type < NODE_TYPE_CA || ni->node_type > NODE_TYPE_ROUTER)
		return "unknown NodeType";
	/* Port 255 is reserved; a node has at least one port */
	if (ni->num_ports < 1 || ni->num_ports > 254)
		return "NumPorts out of range (1-254)";
	if (!ni->node_guid)
		return "NodeGUID 0";
	if (ni->node_type != NODE_TYPE_SWITCH && !ni->port_guid)
		return "PortGUID 0";
	/* LocalPortNum is the port the SMP entered by */
	if (ni->local_port > ni->num_ports)
		return "LocalPortNum beyond NumPorts";
	if (ni->local_port == 0 && (p->from || ni->node_type != NODE_TYPE_SWITCH))
		return "LocalPortNum 0 over a cable (only a switch's own port 0 is port 0)";
	return NULL;
}

/*
 * The check of a cable from port from to port (of a switch) is in: v is
 * what port's node reached by its own route out of port. 0, or -EPROTO
 * (rejected; disc_why says why).
 */
static int verify_result(struct disc *d, struct fab_port *port, struct fab_port *from, void *v)
{
	struct fab_node *n = port->node;
	const struct fab_port *vp = v;
	bool first = first_reached(n, from);
	struct dr_path again;

	gmap_put(&d->pending, port_key(port), NULL);
	if (gmap_get(&d->banned, n->guid))
		return 0;
	if (v == VIA_FAIL || v == VIA_BAD) {
		/* No usable answer: proof of a second switch only when that port is down */
		if (v == VIA_FAIL && !first && port->pi_valid &&
		    port->pi.phys_state != PHYS_STATE_LINKUP) {
			cable_route(from, &again);
			return record_dup(d, n->guid, false, &n->path, &again, n, NULL);
		}
		if (!from->peer && !from->peer_lost) {
			from->peer_lost = true;
			d->stats.lost_peers++;
		}
		return 0;
	}
	if (first && vp != from)
		return reject(d, "LocalPortNum is not the port the SMP entered by");
	if (v == VIA_OTHER || vp->node != from->node) {
		/* The switch's own port leads to another node: a second switch has its GUID */
		cable_route(from, &again);
		return record_dup(d, n->guid, false, &n->path, &again, n, NULL);
	}
	/* The right node, the wrong port: someone misstates LocalPortNum */
	if (vp != from)
		return reject(d, "the two ends of a cable name different ports");
	return cable(d, from, port);
}

/* A cable that waited for the answer out of port: decide it now */
static int resolve_wait(struct disc *d, struct fab_port *port)
{
	struct fab_port *from = gmap_get(&d->wait, port_key(port));
	void *v = gmap_get(&d->via, port_key(port));
	int r;

	if (!from)
		return 0;
	gmap_put(&d->wait, port_key(port), NULL);
	r = verify_result(d, port, from, v ? v : VIA_FAIL);
	return r == -ENOMEM ? r : 0;
}

/*
 * A cable from port from reached switch n at port num: before it enters
 * the model, n's own route out of that port must lead back to from (IBA
 * 14.2.5.3: LocalPortNum is the port the SMP entered by). This checks every
 * switch's LocalPortNum, and finds a second switch that answers with the
 * GUID of one already known. That NodeInfo is the very one discovery sends
 * to explore the port: when it went out already its answer decides, when
 * it is in flight the cable waits for it, and only otherwise a check goes.
 */
static int verify_cable(struct disc *d, struct fab_node *n, uint8_t num, struct fab_port *from)
{
	struct fab_port *port = &n->ports[num], *w;
	struct disc_probe v;
	void *via = gmap_get(&d->via, port_key(port));
	int r;

	if (via)
		return verify_result(d, port, from, via);
	r = gmap_put(&d->pending, port_key(port), port);
	if (r < 0)
		return r;
	w = gmap_get(&d->wait, port_key(port));
	if (gmap_get(&d->probing, port_key(port)) && (!w || w == from))
		return gmap_put(&d->wait, port_key(port), from);
	memset(&v, 0, sizeof(v));
	v.kind = DISC_VERIFY;
	v.node = n;
	v.port = num;
	v.from = from;
	if (dr_path_extend(&n->path, num, &v.path) < 0)
		return reject(d, "a cable to a switch cannot be checked (route too long)");
	r = gmap_put(&d->probing, port_key(port), port);
	return r < 0 ? r : disc_push(d, &v);
}

/* What NodeInfo answer ni says a route reached */
static void *reached(const struct disc *d, const struct node_info *ni)
{
	struct fab_node *m = fabric_find(d->f, ni->node_guid);

	if (!m)
		return VIA_OTHER;
	return ni->local_port <= m->num_ports ? &m->ports[ni->local_port] : VIA_BAD;
}

/* A node reached for the first time */
static int new_node(struct disc *d, const struct disc_probe *p, const struct node_info *ni,
		    struct fab_node *n)
{
	struct fab_port *port = &n->ports[ni->local_port];
	int r;

	n->path = p->path;
	if (!p->from) {
		d->local = n;
		d->local_port = ni->local_port;
	}
	if (n->type == NODE_TYPE_SWITCH) {
		/* First, so that the cable is known before its ports are read */
		r = p->from ? verify_cable(d, n, ni->local_port, p->from) : 0;
		if (!r)
			r = push_simple(d, DISC_NODE_DESC, n, &p->path, 0);
		if (!r)
			r = push_simple(d, DISC_SWITCH_INFO, n, &p->path, 0);
		for (unsigned int i = 0; !r && i <= n->num_ports; i++)
			r = push_simple(d, DISC_PORT_INFO, n, &p->path, (uint8_t)i);
		if (!r)
			r = index_port(d, n->guid, &n->ports[0], &p->path);
		return r < 0 ? r : 0;
	}
	/* A CA or router port: only SMPs entering through it may Set it */
	port->path = p->path;
	port->has_path = true;
	port->guid = ni->port_guid;
	r = push_simple(d, DISC_NODE_DESC, n, &p->path, 0);
	if (!r)
		r = index_port(d, ni->port_guid, port, &p->path);
	if (!r)
		r = push_simple(d, DISC_PORT_INFO, n, &p->path, ni->local_port);
	if (r)
		return r < 0 ? r : 0;
	return p->from ? cable(d, p->from, port) : 0;
}

/* A node whose GUID the model holds, reached over another cable */
static int known_node(struct disc *d, const struct disc_probe *p, const struct node_info *ni,
		      struct fab_node *n)
{
	struct fab_port *port = &n->ports[ni->local_port];
	int r;

	if (n->type != ni->node_type || n->num_ports != ni->num_ports)
		return record_dup(d, n->guid, false, &n->path, &p->path, n, NULL);
	if (!p->from)
		return reject(d, "the SM's own node answered twice");
	if (port->peer == p->from) {
		/* The same cable, seen from both ends */
		if (n->type != NODE_TYPE_SWITCH && port->guid != ni->port_guid)
			return reject(d, "a port answered with another PortGUID");
		return 0;
	}
	if (p->from->peer)
		return reject(d, "the two ends of a cable name different peers");
	/* One CA port, two cables: two nodes answer with one GUID */
	if (port->peer && n->type != NODE_TYPE_SWITCH)
		return record_dup(d, n->guid, false, port_place(port), &p->path, n, NULL);
	if (n->type != NODE_TYPE_SWITCH) {
		/*
		 * Another port of a known CA. A CA is not crossed by directed
		 * routes (IBA 14.2.2), so this cannot be checked from the
		 * first place: a copy is found when its port GUID, or a port
		 * the original uses, gives it away.
		 */
		if (port->has_path)
			return port->guid == ni->port_guid ? cable(d, p->from, port) :
			       reject(d, "a port answered with another PortGUID");
		port->path = p->path;
		port->has_path = true;
		port->guid = ni->port_guid;
		r = index_port(d, ni->port_guid, port, &p->path);
		if (r == 0)
			r = push_simple(d, DISC_PORT_INFO, n, &p->path, ni->local_port);
		if (r)
			return r < 0 ? r : 0;
		return cable(d, p->from, port);
	}
	/*
	 * A switch: ask through its own first route where that port leads.
	 * Also when the port has a cable already: a liar about its own
	 * LocalPortNum must not get an honest neighbour taken for a copy.
	 */
	return verify_cable(d, n, ni->local_port, p->from);
}

/* The answer from the other end of a cable that reached switch p->node */
static int verify_answer(struct disc *d, const struct disc_probe *p, const struct node_info *ni)
{
	struct fab_port *port = fabric_port(p->node, p->port);
	const char *why;
	void *v;
	int r, w;

	if (!port || !p->from)
		return -EINVAL;
	gmap_put(&d->probing, port_key(port), NULL);
	why = ni_check(ni, p);
	v = why ? VIA_BAD : reached(d, ni);
	r = gmap_put(&d->via, port_key(port), v);
	if (r == 0)
		r = verify_result(d, port, p->from, v);
	/* Another cable that waited for this answer is decided whatever this one was */
	w = resolve_wait(d, port);
	if (r == -ENOMEM || w == -ENOMEM)
		return -ENOMEM;
	return r == 0 && why ? reject(d, why) : r;
}

int disc_node_info(struct disc *d, const struct disc_probe *p, const struct node_info *ni)
{
	struct fab_node *n;
	const char *why;
	int r, w;

	if (p->kind == DISC_VERIFY)
		return verify_answer(d, p, ni);
	if (p->kind != DISC_NODE_INFO)
		return -EINVAL;
	if (p->from)
		gmap_put(&d->probing, port_key(p->from), NULL);
	why = ni_check(ni, p);
	if (why) {
		r = reject(d, why);
		if (p->from && gmap_put(&d->via, port_key(p->from), VIA_BAD) == 0)
			resolve_wait(d, p->from);
		return r;
	}
	if (gmap_get(&d->banned, ni->node_guid)) {
		/* A GUID already found at two places: any further place is left out too */
		r = 0;
	} else {
		r = fabric_add_node(d->f, ni, &n);
		if (r == -EEXIST || r == 0) {
			/* What the route out of p->from reached, for a check of that cable */
			if (p->from)
				w = gmap_put(&d->via, port_key(p->from), reached(d, ni));
			else
				w = 0;
			r = w < 0 ? w : r == 0 ? new_node(d, p, ni, n) : known_node(d, p, ni, n);
		}
	}
	if (p->from && !gmap_get(&d->via, port_key(p->from)))
		gmap_put(&d->via, port_key(p->from), reached(d, ni));
	w = p->from ? resolve_wait(d, p->from) : 0;
	return r < 0 ? r : w;
}

int disc_node_desc(struct disc *d, const struct disc_probe *p, const struct node_desc *nd)
{
	if (p->kind != DISC_NODE_DESC || !p->node)
		return -EINVAL;
	memcpy(p->node->desc, nd->desc, sizeof(p->node->desc));
	p->node->desc[sizeof(p->node->desc) - 1] = 0;
	p->node->desc_valid = true;
	return 0;
}

int disc_switch_info(struct disc *d, const struct disc_probe *p, const struct switch_info *si)
{
	if (p->kind != DISC_SWITCH_INFO || !p->node || p->node->type != NODE_TYPE_SWITCH)
		return -EINVAL;
	/* IBA 14.2.5.4: an LFT holds unicast LIDs only */
	if (si->lft_cap > LID_UCAST_MAX + 1)
		return reject(d, "LinearFDBCap beyond the unicast LIDs");
	p->node->si = *si;
	p->node->si_valid = true;
	return 0;
}

int disc_port_info(struct disc *d, const struct disc_probe *p, const struct port_info *pi)
{
	struct fab_node *n = p->node;
	struct fab_port *port;
	struct disc_probe np;
	int r;
	bool through;

	if (p->kind != DISC_PORT_INFO || !n)
		return -EINVAL;
	port = fabric_port(n, p->port);
	if (!port)
		return -EINVAL;
	/* IBA 14.2.5.6: PortState 5-15 and PortPhysicalState 8-15 are reserved */
	if (pi->port_state > PORT_STATE_ACTIVE || pi->phys_state > 7)
		return reject(d, "PortInfo with a reserved PortState or PortPhysicalState");
	port->pi = *pi;
	port->pi_valid = true;
	if (p->port == 0 || pi->phys_state != PHYS_STATE_LINKUP || port->peer ||
	    gmap_get(&d->pending, port_key(port)))
		return 0;
	/*
	 * IBA 14.2.2: a directed route may leave a CA only at its first hop,
	 * so the walk goes on through switches and through the SM's own port.
	 */
	through = n->type == NODE_TYPE_SWITCH || (n == d->local && p->port == d->local_port);
	if (!through || p->path.hops >= SMP_MAX_HOPS)
		return 0;
	memset(&np, 0, sizeof(np));
	np.kind = DISC_NODE_INFO;
	np.from = port;
	dr_path_extend(&p->path, p->port, &np.path);
	r = gmap_put(&d->probing, port_key(port), port);
	return r < 0 ? r : disc_push(d, &np);
}

void disc_failed(struct disc *d, const struct disc_probe *p, int err)
{
	struct fab_port *port;

	d->stats.failed++;
	if (p->kind == DISC_VERIFY && p->node && p->from) {
		port = fabric_port(p->node, p->port);
		if (!port)
			return;
		gmap_put(&d->probing, port_key(port), NULL);
		/* A rejected answer set via already: keep what it said */
		if (!gmap_get(&d->via, port_key(port))) {
			gmap_put(&d->via, port_key(port), VIA_FAIL);
			verify_result(d, port, p->from, VIA_FAIL);
		}
		resolve_wait(d, port);
		return;
	}
	if (p->kind != DISC_NODE_INFO || !p->from)
		return;
	gmap_put(&d->probing, port_key(p->from), NULL);
	if (!gmap_get(&d->via, port_key(p->from)))
		gmap_put(&d->via, port_key(p->from), VIA_FAIL);
	if (!p->from->peer && !p->from->peer_lost) {
		p->from->peer_lost = true;
		d->stats.lost_peers++;
	}
	resolve_wait(d, p->from);
}

const char *disc_why(const struct disc *d)
{
	return d->why;
}

static bool drop_banned(void *ctx, const struct fab_node *n)
{
	const struct disc *d = ctx;

	return n != d->local && gmap_get(&d->banned, n->guid);
}

int disc_finish(struct disc *d)
{
	int r;

	/* Probes still queued hold pointers into nodes that may go */
	d->qlen = 0;
	if (!d->banned.n)
		return 0;
	r = fabric_remove_nodes(d->f, drop_banned, d);
	if (r > 0)
		d->stats.left_out += (unsigned int)r;
	return r;
}

const struct disc_dup *disc_dups(const struct disc *d, unsigned int *n)
{
	*n = d->ndups;
	return d->dups;
}

const struct disc_stats *disc_stats(const struct disc *d)
{
	return &d->stats;
}

struct fab_node *disc_local_node(const struct disc *d)
{
	return d->local;
}

uint8_t disc_local_port(const struct disc *d)
{
	return d->local_port;
}
