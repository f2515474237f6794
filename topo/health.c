// SPDX-License-Identifier: MIT
/* Health rules, windows, links gone down, isolation that keeps the fabric whole (health.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/health.h"

const struct health_rule_def health_rules[HEALTH_RULES] = {
	[HEALTH_SYMBOL_ERRORS] = { "symbol_errors", "health_symbol_errors",
				   "SymbolErrorCounter + LinkErrorRecoveryCounter", true },
	[HEALTH_LINK_DOWNS] = { "link_downs", "health_link_downs",
				"LinkDownedCounter or down/up transitions seen", true },
	[HEALTH_RCV_ERRORS] = { "rcv_errors", "health_rcv_errors", "PortRcvErrors", true },
	[HEALTH_DEGRADED] = { "degraded", NULL,
			      "active width or speed below what both ends support and enable",
			      false },
};

static struct health_event *at(const struct health_window *w, unsigned int i)
{
	return &w->ev[(w->head + i) % HEALTH_EVENTS_MAX];
}

/* Intervals that ended at or before now - window_s are out of it */
static bool expired(const struct health_event *e, uint64_t now, unsigned int window_s)
{
	return e->t + window_s <= now;
}

int health_window_add(struct health_window *w, uint64_t now, unsigned int window_s,
		      const uint32_t n[HEALTH_COUNTS])
{
	struct health_event *e;
	bool any = false;

	for (unsigned int k = 0; k < HEALTH_COUNTS; k++)
		any |= n[k] != 0;
	while (w->n && expired(at(w, 0), now, window_s)) {
		w->head = (uint16_t)((w->head + 1) % HEALTH_EVENTS_MAX);
		w->n--;
	}
	if (!any)
		return 0;
	if (!w->ev) {
		w->ev = calloc(HEALTH_EVENTS_MAX, sizeof(*w->ev));
		if (!w->ev)
			return -ENOMEM;
		w->head = w->n = 0;
	}
	if (w->n == HEALTH_EVENTS_MAX) {
		/* Full: the oldest goes into the next, under the newer time (kept longer) */
		struct health_event *old = at(w, 0), *next = at(w, 1);

		for (unsigned int k = 0; k < HEALTH_COUNTS; k++) {
			uint64_t s = (uint64_t)old->n[k] + next->n[k];

			next->n[k] = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
		}
		w->head = (uint16_t)((w->head + 1) % HEALTH_EVENTS_MAX);
		w->n--;
	}
	e = at(w, w->n);
	e->t = now;
	memcpy(e->n, n, sizeof(e->n));
	w->n++;
	return 0;
}

void health_window_sums(const struct health_window *w, uint64_t now, unsigned int window_s,
			uint64_t sums[HEALTH_COUNTS])
{
	memset(sums, 0, HEALTH_COUNTS * sizeof(*sums));
	for (unsigned int i = 0; i < w->n; i++) {
		const struct health_event *e = at(w, i);

		if (expired(e, now, window_s) || e->t > now)
			continue;
		for (unsigned int k = 0; k < HEALTH_COUNTS; k++)
			sums[k] += e->n[k];
	}
}

void health_window_clear(struct health_window *w)
{
	free(w->ev);
	w->ev = NULL;
	w->head = w->n = 0;
}

uint64_t health_rule_count(enum health_rule r, const uint64_t sums[HEALTH_COUNTS])
{
	switch (r) {
	case HEALTH_SYMBOL_ERRORS:
		return sums[HEALTH_N_SYMBOL];
	case HEALTH_LINK_DOWNS:
		/* One flap shows in the counter and as a transition: the larger of the two */
		return sums[HEALTH_N_LINK_DOWNED] > sums[HEALTH_N_LINK_SEEN] ?
		       sums[HEALTH_N_LINK_DOWNED] : sums[HEALTH_N_LINK_SEEN];
	case HEALTH_RCV_ERRORS:
		return sums[HEALTH_N_RCV];
	default:
		return 0;
	}
}

uint32_t health_judge(const struct health_cfg *cfg, const uint64_t sums[HEALTH_COUNTS],
		      bool degraded)
{
	uint32_t broken = 0;

	for (unsigned int r = 0; r < HEALTH_RULES; r++) {
		if (!health_rules[r].counted)
			continue;
		if (cfg->threshold[r] && health_rule_count((enum health_rule)r, sums) >
		    cfg->threshold[r])
			broken |= 1u << r;
	}
	if (cfg->degraded && degraded)
		broken |= 1u << HEALTH_DEGRADED;
	return broken;
}

/* Up and ACTIVE: what a link the SM brought up looks like */
static bool active_link(const struct fab_port *p)
{
	return fabric_port_up(p) && p->pi.port_state == PORT_STATE_ACTIVE;
}

size_t health_links_down(const struct fabric *old, const struct fabric *f,
			 void (*cb)(void *ctx, const struct fab_port *p), void *ctx)
{
	size_t n = 0;

	if (!old || !f)
		return 0;
	for (size_t i = 0; i < f->nnodes; i++) {
		const struct fab_node *nn = f->nodes[i];
		const struct fab_node *on = fabric_find(old, nn->guid);

		if (!on)
			continue;
		for (unsigned int k = 1; k <= nn->num_ports && k <= on->num_ports; k++) {
			const struct fab_port *op = &on->ports[k], *np = &nn->ports[k];

			if (!active_link(op) || active_link(np))
				continue;
			n++;
			if (cb)
				cb(ctx, np);
		}
	}
	return n;
}

const char *health_iso_name(unsigned int v)
{
	static const char *const names[HEALTH_ISOS] = {
		[HEALTH_ISO_APPLIED] = "isolated", [HEALTH_ISO_NOT_UP] = "link_not_up",
		[HEALTH_ISO_CA_LINK] = "ca_link", [HEALTH_ISO_SPLIT] = "fabric_would_split",
		[HEALTH_ISO_DEADLOCK] = "no_deadlock_free_routes",
	};

	return v < HEALTH_ISOS ? names[v] : "?";
}

static uint32_t uf_find(uint32_t *up, uint32_t x)
{
	while (up[x] != x) {
		up[x] = up[up[x]];
		x = up[x];
	}
	return x;
}

static struct fab_port *port_of(const struct fabric *f, uint64_t guid, unsigned int num)
{
	struct fab_node *n = fabric_find(f, guid);

	return n && num >= 1 && num <= n->num_ports ? &n->ports[num] : NULL;
}

int health_isolate(struct fabric *f, struct health_isolation *v, size_t n)
{
	uint32_t *up = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*up));
	struct fab_port **at = calloc(n ? n : 1, sizeof(*at));

	if (!up || !at) {
		free(up);
		free(at);
		return -ENOMEM;
	}
	/* Which link each asks for, and the ones that cannot be candidates */
	for (size_t i = 0; i < n; i++) {
		struct fab_port *p = port_of(f, v[i].guid, v[i].port);

		v[i].peer_guid = 0;
		v[i].peer_port = 0;
		if (!p || !fabric_port_linked(p)) {
			v[i].verdict = HEALTH_ISO_NOT_UP;
			continue;
		}
		v[i].peer_guid = p->peer->node->guid;
		v[i].peer_port = p->peer->num;
		if (p->node->type != NODE_TYPE_SWITCH || p->peer->node->type != NODE_TYPE_SWITCH) {
			v[i].verdict = HEALTH_ISO_CA_LINK;
			continue;
		}
		at[i] = p;
		v[i].verdict = HEALTH_ISO_APPLIED;
	}
	/* The parts every other routable link makes: candidates out for a moment */
	for (size_t i = 0; i < n; i++)
		if (at[i])
			at[i]->isolated = at[i]->peer->isolated = true;
	for (size_t i = 0; i < f->nnodes; i++)
		up[i] = (uint32_t)i;
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *nd = f->nodes[i];

		for (unsigned int k = 1; k <= nd->num_ports; k++) {
			struct fab_port *p = &nd->ports[k];

			if (fabric_port_linked(p))
				up[uf_find(up, nd->idx)] = uf_find(up, p->peer->node->idx);
		}
	}
	for (size_t i = 0; i < n; i++)
		if (at[i])
			at[i]->isolated = at[i]->peer->isolated = false;
	/* In order: a link that joins two parts stays, the others go out */
	for (size_t i = 0; i < n; i++) {
		struct fab_port *p = at[i], *q;
		uint32_t a, b;

		if (!p)
			continue;
		q = p->peer;
		if (p->isolated) {
			/* The other end was listed first: its verdict */
			for (size_t j = 0; j < i; j++)
				if (at[j] == q || at[j] == p)
					v[i].verdict = v[j].verdict;
			continue;
		}
		a = uf_find(up, p->node->idx);
		b = uf_find(up, q->node->idx);
		if (a != b) {
			up[a] = b;
			v[i].verdict = HEALTH_ISO_SPLIT;
			/* The other end, if listed later, is kept too */
			for (size_t j = i + 1; j < n; j++)
				if (at[j] == q || at[j] == p) {
					at[j] = NULL;
					v[j].verdict = HEALTH_ISO_SPLIT;
				}
			continue;
		}
		p->isolated = q->isolated = true;
	}
	free(up);
	free(at);
	return 0;
}
