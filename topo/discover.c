// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/discover.h"

struct disc {
	struct fabric *f;
	struct disc_probe *q;	/* FIFO ring: breadth-first order */
	size_t qcap, qhead, qlen;
	struct fab_node *local;
	uint8_t local_port;
	struct disc_stats stats;
};

int disc_new(struct fabric *f, struct disc **out)
{
	struct disc *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->f = f;
	*out = d;
	return 0;
}

struct disc *disc_free(struct disc *d)
{
	if (d) {
		free(d->q);
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

int disc_node_info(struct disc *d, const struct disc_probe *p, const struct node_info *ni)
{
	struct fab_node *n;
	struct fab_port *port;
	int r;

	if (p->kind != DISC_NODE_INFO)
		return -EINVAL;
	/*
	 * IBA 14.2.5.3: LocalPortNum is the port the SMP entered by. An SMP
	 * that crossed a cable entered by a physical port, 1..NumPorts; only
	 * a switch asked at hop 0 (the SM on its port 0) may say 0.
	 */
	if (ni->local_port > ni->num_ports ||
	    (ni->local_port == 0 && (p->from || ni->node_type != NODE_TYPE_SWITCH))) {
		d->stats.rejected++;
		return -EPROTO;
	}
	r = fabric_add_node(d->f, ni, &n);
	if (r == -EEXIST) {
		/* Same GUID must mean the same kind of node, or the answer is bogus */
		if (n->type != ni->node_type || n->num_ports != ni->num_ports) {
			d->stats.rejected++;
			return -EPROTO;
		}
	} else if (r < 0) {
		return r;
	}
	port = fabric_port(n, ni->local_port);
	if (!port)
		return -EPROTO;

	if (r == 0) {
		n->path = p->path;
		if (!p->from) {
			d->local = n;
			d->local_port = ni->local_port;
		}
		r = push_simple(d, DISC_NODE_DESC, n, &p->path, 0);
		if (!r && n->type == NODE_TYPE_SWITCH)
			r = push_simple(d, DISC_SWITCH_INFO, n, &p->path, 0);
		if (r)
			return r;
		if (n->type == NODE_TYPE_SWITCH) {
			for (unsigned int i = 0; i <= n->num_ports; i++)
				if ((r = push_simple(d, DISC_PORT_INFO, n, &p->path, (uint8_t)i)))
					return r;
		}
	}
	if (n->type != NODE_TYPE_SWITCH && !port->has_path) {
		/* A CA or router port: only SMPs entering through it may Set it */
		port->path = p->path;
		port->has_path = true;
		port->guid = ni->port_guid;
		r = push_simple(d, DISC_PORT_INFO, n, &p->path, ni->local_port);
		if (r)
			return r;
	}
	if (p->from)
		return fabric_link(d->f, p->from, port);
	return 0;
}

int disc_node_desc(struct disc *d, const struct disc_probe *p, const struct node_desc *nd)
{
	if (p->kind != DISC_NODE_DESC || !p->node)
		return -EINVAL;
	memcpy(p->node->desc, nd->desc, sizeof(p->node->desc));
	p->node->desc_valid = true;
	return 0;
}

int disc_switch_info(struct disc *d, const struct disc_probe *p, const struct switch_info *si)
{
	if (p->kind != DISC_SWITCH_INFO || !p->node || p->node->type != NODE_TYPE_SWITCH)
		return -EINVAL;
	p->node->si = *si;
	p->node->si_valid = true;
	return 0;
}

int disc_port_info(struct disc *d, const struct disc_probe *p, const struct port_info *pi)
{
	struct fab_node *n = p->node;
	struct fab_port *port;
	struct disc_probe np;
	bool through;

	if (p->kind != DISC_PORT_INFO || !n)
		return -EINVAL;
	port = fabric_port(n, p->port);
	if (!port)
		return -EINVAL;
	port->pi = *pi;
	port->pi_valid = true;
	if (p->port == 0 || pi->phys_state != PHYS_STATE_LINKUP || port->peer)
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
	return disc_push(d, &np);
}

void disc_failed(struct disc *d, const struct disc_probe *p, int err)
{
	d->stats.failed++;
	if (p->kind == DISC_NODE_INFO && p->from) {
		p->from->peer_lost = true;
		d->stats.lost_peers++;
	}
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
