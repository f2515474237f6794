// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/route.h"

static const struct route_engine engines[] = {
	{ "minhop", route_minhop_compute },
};

const struct route_engine *route_engine_find(const char *name)
{
	for (size_t i = 0; i < sizeof(engines) / sizeof(engines[0]); i++)
		if (!strcmp(engines[i].name, name))
			return &engines[i];
	return NULL;
}

int route_alloc_lfts(struct fabric *f)
{
	uint32_t len = (uint32_t)f->max_lid + 1;

	for (size_t i = 0; i < f->nswitches; i++) {
		struct fab_node *sw = f->switches[i];

		if (sw->lft_len != len) {
			uint8_t *l = realloc(sw->lft, len);

			if (!l)
				return -ENOMEM;
			sw->lft = l;
			sw->lft_len = len;
		}
		memset(sw->lft, LFT_PORT_NONE, len);
		for (unsigned int p = 0; p <= sw->num_ports; p++)
			sw->ports[p].load = 0;
	}
	return 0;
}

struct fab_node *route_attach_switch(const struct fab_port *ep, uint8_t *sw_port)
{
	if (ep->node->type == NODE_TYPE_SWITCH) {
		*sw_port = 0;
		return ep->node;
	}
	if (!fabric_port_linked(ep) || ep->peer->node->type != NODE_TYPE_SWITCH)
		return NULL;
	*sw_port = ep->peer->num;
	return ep->peer->node;
}

int route_compute(const struct route_engine *e, struct fabric *f, struct route_stats *st)
{
	uint64_t sum = 0;
	unsigned int used = 0;
	int r;

	memset(st, 0, sizeof(*st));
	r = route_alloc_lfts(f);
	if (r < 0)
		return r;
	r = e->compute(f, st);
	if (r < 0)
		return r;
	st->switches = (unsigned int)f->nswitches;
	for (size_t i = 0; i < f->nswitches; i++) {
		struct fab_node *sw = f->switches[i];

		for (unsigned int p = 1; p <= sw->num_ports; p++) {
			uint32_t l = sw->ports[p].load;

			if (!l)
				continue;
			sum += l;
			used++;
			if (l > st->max_port_load)
				st->max_port_load = l;
		}
	}
	st->mean_port_load = used ? (double)sum / used : 0;
	return 0;
}
