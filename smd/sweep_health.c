// SPDX-License-Identifier: MIT
/*
 * The health phase of a heavy sweep (issue 20): the links that went down
 * since the last model (for the link_downs rule), and the links the health
 * rules took out of service (health_action = isolate), isolated in this
 * model before it is routed: no route crosses them, they stay up so that
 * their counters can still be read (smd/health.h, topo/health.h).
 */
#include <errno.h>
#include <stdlib.h>

#include "smd/sweep_int.h"

int sweep_health_enter(struct sweep *sw)
{
	sw->iso = health_isolations_wanted(sw->smd, &sw->niso);
	return 0;
}

static void down_seen(void *ctx, const struct fab_port *p)
{
	struct sweep *sw = ctx;

	if (sw->ndown == sw->down_cap) {
		size_t cap = sw->down_cap ? sw->down_cap * 2 : 64;
		uint64_t *g = realloc(sw->down_guid, cap * sizeof(*g));
		uint8_t *n;

		/* Out of memory: this transition goes uncounted, nothing worse */
		if (!g)
			return;
		sw->down_guid = g;
		n = realloc(sw->down_port, cap * sizeof(*n));
		if (!n)
			return;
		sw->down_port = n;
		sw->down_cap = cap;
	}
	sw->down_guid[sw->ndown] = p->node->guid;
	sw->down_port[sw->ndown++] = p->num;
}

/* On the worker: the last model is read only (as route repair reads it) */
int sweep_health_work(struct sweep *sw)
{
	health_links_down(sw->smd->fabric, sw->f, down_seen, sw);
	sw->health_r = sw->niso ? health_isolate(sw->f, sw->iso, sw->niso) : 0;
	return 0;
}

int sweep_health_done(struct sweep *sw)
{
	if (sw->ndown)
		health_links_seen_down(sw->smd, sw->down_guid, sw->down_port, sw->ndown);
	if (sw->health_r < 0) {
		log_error_errno(sw->health_r, "health: no link isolated in this sweep");
		for (size_t i = 0; i < sw->niso; i++)
			sw->iso[i].verdict = HEALTH_ISOS;
	}
	return 0;
}

bool sweep_health_undo(struct sweep *sw)
{
	bool any = false;

	for (size_t i = 0; i < sw->niso; i++) {
		struct health_isolation *v = &sw->iso[i];
		struct fab_node *n;

		if (v->verdict != HEALTH_ISO_APPLIED)
			continue;
		n = fabric_find(sw->f, v->guid);
		if (n && v->port <= n->num_ports && n->ports[v->port].peer) {
			n->ports[v->port].isolated = false;
			n->ports[v->port].peer->isolated = false;
		}
		v->verdict = HEALTH_ISO_DEADLOCK;
		any = true;
	}
	return any;
}
