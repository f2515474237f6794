// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/lid.h"

struct lid_ctx {
	uint8_t *used;		/* [0..LID_UCAST_MAX] */
	unsigned int cursor;	/* every LID below it is used */
};

static bool block_ok(const struct lid_ctx *c, unsigned int lid, uint8_t lmc)
{
	unsigned int count = 1u << lmc;

	if (lid < LID_UCAST_MIN || lid + count - 1 > LID_UCAST_MAX || (lid & (count - 1)))
		return false;
	for (unsigned int k = 0; k < count; k++)
		if (c->used[lid + k])
			return false;
	return true;
}

static void block_take(struct lid_ctx *c, unsigned int lid, uint8_t lmc)
{
	memset(c->used + lid, 1, 1u << lmc);
}

static int block_find(struct lid_ctx *c, uint8_t lmc, uint16_t *out)
{
	unsigned int count = 1u << lmc;

	while (c->cursor <= LID_UCAST_MAX && c->used[c->cursor])
		c->cursor++;
	/* Aligned blocks from the first free LID on: O(LIDs) over a whole run */
	for (unsigned int lid = (c->cursor + count - 1) & ~(count - 1); lid <= LID_UCAST_MAX;
	     lid += count) {
		if (block_ok(c, lid, lmc)) {
			*out = (uint16_t)lid;
			return 0;
		}
	}
	return -ENOSPC;
}

static int cmp_port_guid(const void *a, const void *b)
{
	const struct fab_port *pa = *(struct fab_port *const *)a;
	const struct fab_port *pb = *(struct fab_port *const *)b;

	if (pa->guid != pb->guid)
		return pa->guid < pb->guid ? -1 : 1;
	return (int)pa->num - (int)pb->num;
}

int lid_assign(struct fabric *f, uint8_t lmc, lid_lookup_fn lookup, void *ctx,
	       struct lid_stats *st)
{
	struct lid_ctx c = { .cursor = LID_UCAST_MIN };
	struct fab_port **eps;
	uint16_t *want;
	size_t n = 0, cap = 0;
	int r = 0;

	if (lmc > 7)
		return -EINVAL;
	memset(st, 0, sizeof(*st));
	for (size_t i = 0; i < f->nnodes; i++)
		cap += (size_t)f->nodes[i]->num_ports + 1;
	eps = calloc(cap ? cap : 1, sizeof(*eps));
	want = calloc(cap ? cap : 1, sizeof(*want));
	c.used = calloc(LID_UCAST_MAX + 1, 1);
	if (!eps || !want || !c.used) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *nd = f->nodes[i];

		for (unsigned int pn = 0; pn <= nd->num_ports; pn++) {
			struct fab_port *p = &nd->ports[pn];

			if (!fabric_is_endport(p) || !p->pi_valid)
				continue;
			p->lmc = nd->type == NODE_TYPE_SWITCH ? 0 : lmc;
			p->lid = 0;
			eps[n++] = p;
		}
	}
	/* A deterministic order makes the result independent of discovery order */
	qsort(eps, n, sizeof(*eps), cmp_port_guid);
	st->endports = (unsigned int)n;

	/* Pass 1: held LIDs that the database agrees with win any clash */
	for (size_t i = 0; i < n; i++) {
		uint16_t rem;

		want[i] = 0;
		if (lookup && lookup(ctx, eps[i]->guid, &rem) == 0)
			want[i] = rem;
		if (want[i] && eps[i]->pi.lid == want[i] && block_ok(&c, want[i], eps[i]->lmc)) {
			eps[i]->lid = want[i];
			block_take(&c, want[i], eps[i]->lmc);
			st->kept++;
		}
	}
	/* Pass 2: other held LIDs, if valid and still free */
	for (size_t i = 0; i < n; i++) {
		struct fab_port *p = eps[i];

		if (p->lid || !p->pi.lid)
			continue;
		if (block_ok(&c, p->pi.lid, p->lmc)) {
			p->lid = p->pi.lid;
			block_take(&c, p->lid, p->lmc);
			st->kept++;
		} else {
			st->conflicts++;
		}
	}
	/* Pass 3: remembered LIDs */
	for (size_t i = 0; i < n; i++) {
		struct fab_port *p = eps[i];

		if (p->lid || !want[i] || !block_ok(&c, want[i], p->lmc))
			continue;
		p->lid = want[i];
		block_take(&c, p->lid, p->lmc);
		st->remembered++;
	}
	/* Pass 4: fresh blocks, lowest first */
	for (size_t i = 0; i < n; i++) {
		struct fab_port *p = eps[i];

		if (p->lid)
			continue;
		r = block_find(&c, p->lmc, &p->lid);
		if (r < 0)
			goto out;
		block_take(&c, p->lid, p->lmc);
		st->fresh++;
	}
	for (size_t i = 0; i < n; i++)
		if (eps[i]->lid != eps[i]->pi.lid || eps[i]->lmc != eps[i]->pi.lmc)
			st->changed++;
	r = fabric_index_lids(f);
out:
	free(eps);
	free(want);
	free(c.used);
	return r;
}
