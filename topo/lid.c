// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/lid.h"

enum { LID_FREE, LID_TAKEN, LID_RESERVED };

struct lid_ctx {
	uint8_t *used;		/* [0..LID_UCAST_MAX]: LID_FREE, LID_TAKEN or LID_RESERVED */
	unsigned int cursor;	/* every LID below it is taken or reserved */
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
	memset(c->used + lid, LID_TAKEN, 1u << lmc);
}

/* Last resort: an aligned block that no port of this fabric took, reserved or not */
static int block_reclaim(struct lid_ctx *c, uint8_t lmc, uint16_t *out)
{
	unsigned int count = 1u << lmc;

	for (unsigned int lid = count; lid + count - 1 <= LID_UCAST_MAX; lid += count) {
		unsigned int k = 0;

		while (k < count && c->used[lid + k] != LID_TAKEN)
			k++;
		if (k == count) {
			*out = (uint16_t)lid;
			return 0;
		}
	}
	return -ENOSPC;
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

static int cmp_guid_key(const void *key, const void *elem)
{
	uint64_t g = *(const uint64_t *)key;
	const struct fab_port *p = *(struct fab_port *const *)elem;

	return g < p->guid ? -1 : g > p->guid;
}

/* Mark the blocks of absent ports; eps[0..n) is sorted by GUID */
static void reserve(struct lid_ctx *c, struct fab_port **eps, size_t n,
		    const struct lid_reservation *res, size_t nres, struct lid_stats *st)
{
	for (size_t i = 0; i < nres; i++) {
		const struct lid_reservation *r = &res[i];
		unsigned int count;

		if (r->lmc > 7)
			continue;
		count = 1u << r->lmc;
		if (r->lid < LID_UCAST_MIN || r->lid + count - 1 > LID_UCAST_MAX ||
		    (r->lid & (count - 1)))
			continue;
		if (n && bsearch(&r->guid, eps, n, sizeof(*eps), cmp_guid_key))
			continue;	/* present: passes 1 and 3 give it back to its port */
		memset(c->used + r->lid, LID_RESERVED, count);
		st->reserved++;
	}
}

int lid_assign(struct fabric *f, uint8_t lmc, lid_lookup_fn lookup, void *ctx,
	       struct lid_stats *st)
{
	return lid_assign_reserved(f, lmc, lookup, ctx, NULL, 0, st);
}

int lid_assign_reserved(struct fabric *f, uint8_t lmc, lid_lookup_fn lookup, void *ctx,
			const struct lid_reservation *res, size_t nres, struct lid_stats *st)
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
	reserve(&c, eps, n, res, nres, st);

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
		if (r == -ENOSPC && st->reserved) {
			r = block_reclaim(&c, p->lmc, &p->lid);
			if (!r)
				st->reclaimed++;
		}
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
