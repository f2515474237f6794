// SPDX-License-Identifier: MIT
/*
 * topo/ alone: discovery against an in-memory fabric (loops, parallel
 * links, dual-port HCAs, silent nodes), LID assignment, and min-hop
 * routing checked by walking the true cabling, not smd's model.
 * Extra arguments are topology files (tests/gen/topogen.py) to check too.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/lid.h"
#include "topo/route.h"

static const char *small_net =
	"Hca 2 \"sm\"\n"
	"[1] \"s1\"[1]\n"
	"[2] \"s2\"[1]\n"			/* the SM's HCA is dual-ported */
	"Switch 8 \"s1\"\n"
	"[1] \"sm\"[1]\n"
	"[2] \"s2\"[2]\n"
	"[3] \"s2\"[3]\n"			/* parallel links s1-s2 */
	"[4] \"s3\"[1]\n"
	"[5] \"h1\"[1]\n"
	"[6] \"h2\"[1]\n"			/* h2: both ports on s1 */
	"[7] \"h2\"[2]\n"
	"Switch 8 \"s2\"\n"
	"[1] \"sm\"[2]\n"
	"[2] \"s1\"[2]\n"
	"[3] \"s1\"[3]\n"
	"[4] \"s3\"[2]\n"			/* a loop s1-s2-s3 */
	"[5] \"h3\"[1]\n"
	"Switch 8 \"s3\"\n"
	"[1] \"s1\"[4]\n"
	"[2] \"s2\"[4]\n"
	"[3] \"s4\"[1]\n"
	"[4] \"h3\"[2]\n"			/* h3: one port on s2, one on s3 */
	"Switch 8 \"s4\"\n"			/* a switch without hosts */
	"[1] \"s3\"[3]\n"
	"Hca 1 \"h1\"\n"
	"[1] \"s1\"[5]\n"
	"Hca 2 \"h2\"\n"
	"[1] \"s1\"[6]\n"
	"[2] \"s1\"[7]\n"
	"Hca 2 \"h3\"\n"
	"[1] \"s2\"[5]\n"
	"[2] \"s3\"[4]\n";

/* ---- an independent route checker over the true cabling ---- */

static struct fab_node *model_of(struct fabric *f, const struct fakefab *ff, int idx)
{
	return fabric_find(f, ff->nodes[idx].guid);
}

/* Which fake (node, port) owns LID lid, according to the model's LIDs */
static bool owns(struct fabric *f, const struct fakefab *ff, int idx, uint8_t port, uint16_t lid)
{
	struct fab_node *n = model_of(f, ff, idx);
	struct fab_port *p = n ? fabric_port(n, port) : NULL;

	return p && p->lid && lid >= p->lid && lid < p->lid + (1u << p->lmc);
}

/*
 * Walk from switch idx toward lid along the LFTs, over the fake cabling.
 * Returns hops, or -1 (dead end), -2 (loop).
 */
static int walk(struct fabric *f, const struct fakefab *ff, int idx, uint16_t lid)
{
	int hops = 0;

	for (int steps = 0; steps <= ff->n; steps++) {
		struct fab_node *n = model_of(f, ff, idx);
		const struct ff_node *fn = &ff->nodes[idx];
		uint8_t out;

		if (!n || n->type != NODE_TYPE_SWITCH || lid >= n->lft_len)
			return -1;
		out = n->lft[lid];
		if (out == 0)
			return owns(f, ff, idx, 0, lid) ? hops : -1;
		if (out > fn->nports || fn->peer[out] < 0)
			return -1;
		if (ff->nodes[fn->peer[out]].type != NODE_TYPE_SWITCH)
			return owns(f, ff, fn->peer[out], fn->peer_port[out], lid) ? hops + 1 : -1;
		idx = fn->peer[out];
		hops++;
	}
	return -2;
}

/* Every endport reaches every LID; returns the number of failures */
static unsigned int check_routes(struct fabric *f, const struct fakefab *ff, unsigned int *pairs)
{
	unsigned int bad = 0;

	*pairs = 0;
	for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
		if (!f->by_lid[lid])
			continue;
		for (int i = 0; i < ff->n; i++) {
			const struct ff_node *fn = &ff->nodes[i];

			if (!model_of(f, ff, i))
				continue;	/* not reachable: left out on purpose */
			if (fn->type == NODE_TYPE_SWITCH) {
				int h = walk(f, ff, i, (uint16_t)lid);

				(*pairs)++;
				if (h < 0 && bad++ < 5)
					fprintf(stderr, "  %s -> LID %u: %s\n", fn->name, lid,
						h == -2 ? "loop" : "dead end");
				continue;
			}
			for (int p = 1; p <= fn->nports; p++) {
				int sw = fn->peer[p], h;

				if (sw < 0 || !owns(f, ff, i, (uint8_t)p, 1) ||
				    !model_of(f, ff, i)->ports[p].lid)
					continue;
				(*pairs)++;
				if (owns(f, ff, i, (uint8_t)p, (uint16_t)lid))
					continue;
				if (ff->nodes[sw].type != NODE_TYPE_SWITCH) {
					bad++;
					continue;
				}
				h = walk(f, ff, sw, (uint16_t)lid);
				if (h < 0 && bad++ < 5)
					fprintf(stderr, "  %s/%d -> LID %u: %s\n", fn->name, p, lid,
						h == -2 ? "loop" : "dead end");
			}
		}
	}
	return bad;
}

/* The LIDs of the model: unique, and every reachable endport has one */
static unsigned int check_lids(struct fabric *f)
{
	uint8_t *seen = calloc(LID_UCAST_MAX + 1, 1);
	unsigned int bad = 0;

	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 0; pn <= n->num_ports; pn++) {
			struct fab_port *p = &n->ports[pn];

			if (!fabric_is_endport(p) || !p->pi_valid)
				continue;
			if (!p->lid || p->lid > LID_UCAST_MAX || (p->lid & ((1u << p->lmc) - 1))) {
				bad++;
				continue;
			}
			for (unsigned int k = 0; k < (1u << p->lmc); k++)
				if (seen[p->lid + k]++)
					bad++;
		}
	}
	free(seen);
	return bad;
}

static int bring_up(const struct fakefab *ff, struct fabric **out, struct disc_stats *ds,
		    struct route_stats *rs, uint8_t lmc)
{
	struct lid_stats ls;
	struct fabric *f;
	int r;

	r = fabric_new(&f);
	if (r == 0)
		r = ff_discover(ff, f, ds);
	if (r == 0)
		r = lid_assign(f, lmc, NULL, NULL, &ls);
	if (r == 0)
		r = route_compute(route_engine_find("minhop"), f, NULL, rs, NULL);
	*out = f;
	return r;
}

static void test_discover_small(void)
{
	struct fakefab ff;
	struct fabric *f;
	struct disc_stats ds;
	struct route_stats rs;
	size_t ep, links;
	unsigned int pairs;

	CHECK_EQ(ff_parse(&ff, small_net), 0);
	CHECK_EQ(bring_up(&ff, &f, &ds, &rs, 0), 0);
	CHECK_EQ(f->nnodes, 8);
	CHECK_EQ(f->nswitches, 4);
	fabric_count_ports(f, &ep, &links);
	/* 4 switch port 0s + sm(2) + h1 + h2(2) + h3(2) */
	CHECK_EQ(ep, 11);
	CHECK_EQ(links, 12);
	CHECK_EQ(ds.failed, 0);
	/* Parallel links: both s1-s2 cables known, each to the right port */
	struct fab_node *s1 = fabric_find(f, ff.nodes[ff_find(&ff, "s1")].guid);
	struct fab_node *s2 = fabric_find(f, ff.nodes[ff_find(&ff, "s2")].guid);

	CHECK(s1 && s2);
	if (s1 && s2) {
		CHECK(s1->ports[2].peer == &s2->ports[2]);
		CHECK(s1->ports[3].peer == &s2->ports[3]);
		CHECK(s1->ports[8].peer == NULL);
	}
	/* The SM's second port is reached through the fabric and gets a path */
	struct fab_node *sm = fabric_find(f, ff.nodes[0].guid);

	CHECK(sm && sm->ports[2].has_path && sm->ports[2].path.hops == 3);
	CHECK(sm && sm->ports[1].has_path && sm->ports[1].path.hops == 0);
	CHECK_EQ(check_lids(f), 0);
	CHECK_EQ(check_routes(f, &ff, &pairs), 0);
	CHECK(pairs > 50);
	CHECK_EQ(rs.unreachable, 0);
	fabric_free(f);
	ff_free(&ff);
}

static void test_dead_node(void)
{
	struct fakefab ff;
	struct fabric *f;
	struct disc_stats ds;
	struct route_stats rs;
	unsigned int pairs;

	CHECK_EQ(ff_parse(&ff, small_net), 0);
	ff.nodes[ff_find(&ff, "s3")].dead = true;
	CHECK_EQ(bring_up(&ff, &f, &ds, &rs, 0), 0);
	/* s3 and s4 (only behind s3) are gone; everything else is up */
	CHECK_EQ(f->nswitches, 2);
	CHECK_EQ(f->nnodes, 6);
	CHECK(ds.lost_peers >= 2);	/* s1[4] and s2[4] */
	CHECK(ds.failed >= 2);
	CHECK_EQ(check_lids(f), 0);
	CHECK_EQ(check_routes(f, &ff, &pairs), 0);
	CHECK_EQ(rs.unreachable, 0);
	fabric_free(f);
	ff_free(&ff);
}

static void test_lmc(void)
{
	struct fakefab ff;
	struct fabric *f;
	struct disc_stats ds;
	struct route_stats rs;
	unsigned int pairs;

	CHECK_EQ(ff_parse(&ff, small_net), 0);
	CHECK_EQ(bring_up(&ff, &f, &ds, &rs, 2), 0);
	CHECK_EQ(check_lids(f), 0);
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		for (unsigned int p = 1; n->type == NODE_TYPE_CA && p <= n->num_ports; p++)
			if (n->ports[p].pi_valid)
				CHECK(n->ports[p].lmc == 2 && n->ports[p].lid % 4 == 0);
		if (n->type == NODE_TYPE_SWITCH)
			CHECK_EQ(n->ports[0].lmc, 0);
	}
	CHECK_EQ(check_routes(f, &ff, &pairs), 0);
	fabric_free(f);
	ff_free(&ff);
}

struct remembered {
	uint64_t guid;
	uint16_t lid;
};

static int lookup(void *ctx, uint64_t guid, uint16_t *lid)
{
	for (struct remembered *r = ctx; r->guid; r++)
		if (r->guid == guid) {
			*lid = r->lid;
			return 0;
		}
	return -ENOENT;
}

static void test_lid_stability(void)
{
	struct fakefab ff;
	struct fabric *f;
	struct disc_stats ds;
	struct lid_stats ls;
	struct fab_node *h1, *s1, *s2;

	CHECK_EQ(ff_parse(&ff, small_net), 0);
	CHECK_EQ(fabric_new(&f), 0);
	CHECK_EQ(ff_discover(&ff, f, &ds), 0);
	h1 = fabric_find(f, ff.nodes[ff_find(&ff, "h1")].guid);
	s1 = fabric_find(f, ff.nodes[ff_find(&ff, "s1")].guid);
	s2 = fabric_find(f, ff.nodes[ff_find(&ff, "s2")].guid);
	/* h1 holds 77; s1 and s2 both claim 5; the database says s2 is 5 and h1 is 9 */
	h1->ports[1].pi.lid = 77;
	s1->ports[0].pi.lid = 5;
	s2->ports[0].pi.lid = 5;
	struct remembered rem[] = {
		{ s2->guid, 5 }, { h1->ports[1].guid, 9 }, { 0, 0 },
	};

	CHECK_EQ(lid_assign(f, 0, lookup, rem, &ls), 0);
	CHECK_EQ(h1->ports[1].lid, 77);		/* held wins over remembered */
	CHECK_EQ(s2->ports[0].lid, 5);		/* held + remembered wins a clash */
	CHECK(s1->ports[0].lid != 5 && s1->ports[0].lid != 0);
	CHECK_EQ(ls.conflicts, 1);
	CHECK_EQ(ls.kept, 2);
	CHECK_EQ(check_lids(f), 0);
	CHECK(fabric_port_by_lid(f, 77) == &h1->ports[1]);

	/* Invalid held LIDs (0xc000+, multicast range) are replaced */
	h1->ports[1].pi.lid = 0xc001;
	CHECK_EQ(lid_assign(f, 0, NULL, NULL, &ls), 0);
	CHECK(h1->ports[1].lid >= 1 && h1->ports[1].lid <= LID_UCAST_MAX);
	CHECK_EQ(check_lids(f), 0);

	/* Nothing held: the database decides, the rest are packed from 1 */
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int p = 0; p <= f->nodes[i]->num_ports; p++)
			f->nodes[i]->ports[p].pi.lid = 0;
	CHECK_EQ(lid_assign(f, 0, lookup, rem, &ls), 0);
	CHECK_EQ(h1->ports[1].lid, 9);
	CHECK_EQ(s2->ports[0].lid, 5);
	CHECK_EQ(ls.remembered, 2);
	CHECK_EQ(f->max_lid, 11);		/* 11 endports, 9 packed into the 1..11 holes */
	CHECK_EQ(check_lids(f), 0);
	fabric_free(f);
	ff_free(&ff);
}

/* LIDs reserved for absent ports stay free while other space remains */
static void test_lid_reserved(void)
{
	struct fakefab ff;
	struct fabric *f;
	struct disc_stats ds;
	struct lid_stats ls;
	struct fab_node *h1, *h2;
	struct lid_reservation *all;
	size_t nall = 0;

	CHECK_EQ(ff_parse(&ff, small_net), 0);
	CHECK_EQ(fabric_new(&f), 0);
	CHECK_EQ(ff_discover(&ff, f, &ds), 0);
	h1 = fabric_find(f, ff.nodes[ff_find(&ff, "h1")].guid);
	h2 = fabric_find(f, ff.nodes[ff_find(&ff, "h2")].guid);
	struct remembered rem[] = { { h1->ports[1].guid, 3 }, { 0, 0 } };
	const struct lid_reservation res[] = {
		{ 0xabc1, 1, 0 },			/* absent ports */
		{ 0xabc2, 2, 0 },
		{ 0xabc3, 8, 2 },			/* 8..11 */
		{ h1->ports[1].guid, 3, 0 },		/* present: its own */
		{ h2->ports[2].guid, 4, 0 },		/* present, remembered elsewhere */
		{ 0xabc4, LID_UCAST_MAX + 1, 0 },	/* not a unicast LID: ignored */
		{ 0xabc5, 13, 1 },			/* misaligned: ignored */
		{ 0xabc6, 20, 9 },			/* LMC out of range: ignored */
	};

	/* Nothing held: the absent ports' LIDs stay free, h1 gets its own back */
	CHECK_EQ(lid_assign_reserved(f, 0, lookup, rem, res, sizeof(res) / sizeof(res[0]), &ls),
		 0);
	CHECK_EQ(ls.reserved, 3);
	CHECK_EQ(ls.reclaimed, 0);
	CHECK_EQ(ls.remembered, 1);
	CHECK_EQ(h1->ports[1].lid, 3);
	for (uint16_t lid = 1; lid <= 11; lid++)
		if (lid < 3 || lid > 7)
			CHECK(fabric_port_by_lid(f, lid) == NULL);
	CHECK_EQ(f->max_lid, 17);		/* 11 endports in 3..7 and 12..17 */
	CHECK_EQ(check_lids(f), 0);

	/* A held LID that is reserved for an absent port is given up */
	h2->ports[1].pi.lid = 2;
	CHECK_EQ(lid_assign_reserved(f, 0, NULL, NULL, res, 3, &ls), 0);
	CHECK(h2->ports[1].lid != 2);
	CHECK(fabric_port_by_lid(f, 2) == NULL);
	CHECK_EQ(ls.conflicts, 1);
	CHECK_EQ(check_lids(f), 0);

	/* Without reservations the same port keeps what it holds */
	CHECK_EQ(lid_assign_reserved(f, 0, NULL, NULL, NULL, 0, &ls), 0);
	CHECK_EQ(h2->ports[1].lid, 2);
	CHECK_EQ(ls.reserved, 0);

	/* Every LID reserved: new ports reclaim, lowest first, and stay unique */
	all = calloc(LID_UCAST_MAX, sizeof(*all));
	for (uint32_t lid = LID_UCAST_MIN; lid <= LID_UCAST_MAX; lid++)
		all[nall++] = (struct lid_reservation){ 0x100000 + lid, (uint16_t)lid, 0 };
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int p = 0; p <= f->nodes[i]->num_ports; p++)
			f->nodes[i]->ports[p].pi.lid = 0;
	CHECK_EQ(lid_assign_reserved(f, 1, NULL, NULL, all, nall, &ls), 0);
	CHECK_EQ(ls.reserved, LID_UCAST_MAX);
	CHECK_EQ(ls.reclaimed, 11);
	CHECK_EQ(ls.fresh, 11);
	CHECK_EQ(check_lids(f), 0);
	/* LMC 1 for CAs: 7 CA ports x 2 LIDs and 4 switches, packed from 1 */
	CHECK_EQ(f->max_lid, 19);
	free(all);
	fabric_free(f);
	ff_free(&ff);
}

static void test_fabric_basics(void)
{
	struct fabric *f;
	struct fab_node *a, *b, *c;
	struct node_info ni = { .node_type = NODE_TYPE_SWITCH, .num_ports = 4, .node_guid = 1 };

	CHECK_EQ(fabric_new(&f), 0);
	/* Growth of the GUID hash past its first size */
	for (uint64_t g = 1; g <= 5000; g++) {
		ni.node_guid = g * 7919;
		CHECK_EQ(fabric_add_node(f, &ni, &a), 0);
	}
	CHECK(fabric_find(f, 7919 * 4321) != NULL);
	CHECK(fabric_find(f, 3) == NULL);
	ni.node_guid = 7919;
	CHECK_EQ(fabric_add_node(f, &ni, &a), -EEXIST);
	b = fabric_find(f, 7919 * 2);
	c = fabric_find(f, 7919 * 3);
	CHECK_EQ(fabric_link(f, &a->ports[1], &b->ports[1]), 0);
	/* Re-cabling a->1 to c undoes the old link at b */
	CHECK_EQ(fabric_link(f, &a->ports[1], &c->ports[2]), 0);
	CHECK(b->ports[1].peer == NULL);
	CHECK(c->ports[2].peer == &a->ports[1]);
	CHECK_EQ(fabric_link(f, &a->ports[1], &a->ports[1]), -EINVAL);
	CHECK(fabric_port(a, 5) == NULL);
	CHECK(fabric_port_by_lid(f, 0) == NULL);
	CHECK(fabric_port_by_lid(f, 0xc000) == NULL);
	fabric_free(f);
}

/* A port with PortInfo, link up (both ends cabled make it linked) */
static void up(struct fab_port *p)
{
	p->pi_valid = true;
	p->pi.phys_state = PHYS_STATE_LINKUP;
	p->pi.port_state = PORT_STATE_ACTIVE;
	p->pi.vl_arb_low_cap = 8;
	p->pi.vl_arb_high_cap = 40;
}

/* Issue 23: the VL tables ports hold, kept in the model for the SA */
static void test_vl_tables(void)
{
	struct fabric *f, *g;
	struct fab_node *sw, *ca, *sw2, *ca2;
	struct node_info ni = { .node_type = NODE_TYPE_SWITCH, .num_ports = 4, .node_guid = 10 };
	struct vl_arb_entry e[VL_ARB_BLOCK_SIZE] = { { 0 } }, e2[VL_ARB_BLOCK_SIZE];
	uint8_t vl[16], back[16];
	uint64_t v;
	unsigned int pairs = 0;

	CHECK_EQ(fabric_new(&f), 0);
	CHECK_EQ(fabric_add_node(f, &ni, &sw), 0);
	ni = (struct node_info){ .node_type = NODE_TYPE_CA, .num_ports = 2, .node_guid = 20 };
	CHECK_EQ(fabric_add_node(f, &ni, &ca), 0);
	/* sw 1 - ca 1, sw 3 - ca 2; sw port 2 and 4 down */
	for (unsigned int p = 0; p <= 4; p++)
		sw->ports[p].pi_valid = true;
	up(&sw->ports[1]), up(&sw->ports[3]), up(&ca->ports[1]), up(&ca->ports[2]);
	CHECK_EQ(fabric_link(f, &sw->ports[1], &ca->ports[1]), 0);
	CHECK_EQ(fabric_link(f, &sw->ports[3], &ca->ports[2]), 0);
	/* Pairs: port 0, 1, 3 in; 1, 3 out; never in == out; a CA: in 0, linked out */
	for (unsigned int in = 0; in <= 4; in++)
		for (unsigned int out = 0; out <= 4; out++)
			pairs += fabric_sl2vl_pair(sw, in, out);
	CHECK_EQ(pairs, 4);		/* (0,1) (0,3) (1,3) (3,1) */
	CHECK(fabric_sl2vl_pair(sw, 1, 3) && !fabric_sl2vl_pair(sw, 2, 3));
	CHECK(!fabric_sl2vl_pair(sw, 1, 1) && !fabric_sl2vl_pair(sw, 1, 0));
	CHECK(fabric_sl2vl_pair(ca, 0, 2) && !fabric_sl2vl_pair(ca, 1, 2));
	CHECK(!fabric_sl2vl_pair(sw, 0, 5) && !fabric_sl2vl_pair(sw, 9, 1));
	/* Packing: SL 0 in the top nibble, as the attribute's first byte */
	for (int i = 0; i < 16; i++)
		vl[i] = (uint8_t)(15 - i);
	CHECK_EQ(sl2vl_pack(vl), UINT64_C(0xfedcba9876543210));
	sl2vl_unpack(UINT64_C(0xfedcba9876543210), back);
	CHECK(!memcmp(vl, back, 16));
	/* Not known until set; one value while they agree, each its own after */
	CHECK_EQ(fabric_sl2vl_get(sw, 1, 3, &v), -ENOENT);
	CHECK_EQ(fabric_sl2vl_get(sw, 5, 3, &v), -EINVAL);
	CHECK_EQ(fabric_sl2vl_set(ca, 1, 1, 7), -EINVAL);
	CHECK_EQ(fabric_sl2vl_set(sw, 1, 3, 0x1111), 0);
	CHECK_EQ(fabric_sl2vl_set(sw, 3, 1, 0x1111), 0);
	CHECK(sw->sl2vl_tab == NULL);
	CHECK_EQ(fabric_sl2vl_get(sw, 3, 1, &v), 0);
	CHECK_EQ(v, 0x1111);
	CHECK_EQ(fabric_sl2vl_get(sw, 0, 1, &v), -ENOENT);
	CHECK_EQ(fabric_sl2vl_set(sw, 0, 1, 0x2222), 0);
	CHECK(sw->sl2vl_tab != NULL);
	CHECK_EQ(fabric_sl2vl_get(sw, 0, 1, &v), 0);
	CHECK_EQ(v, 0x2222);
	CHECK_EQ(fabric_sl2vl_get(sw, 1, 3, &v), 0);
	CHECK_EQ(v, 0x1111);
	fabric_sl2vl_forget(sw, 1, 3);
	CHECK_EQ(fabric_sl2vl_get(sw, 1, 3, &v), -ENOENT);
	CHECK_EQ(fabric_sl2vl_set(ca, 0, 2, 0x3333), 0);
	/* VL arbitration: blocks within the caps (low 8: block 1; high 40: 3, 4) */
	CHECK(fabric_vlarb_port(&sw->ports[1]) && !fabric_vlarb_port(&sw->ports[0]));
	CHECK(!fabric_vlarb_port(&sw->ports[2]) && fabric_vlarb_port(&ca->ports[2]));
	CHECK(fabric_vlarb_has_block(&sw->ports[1], 1) && !fabric_vlarb_has_block(&sw->ports[1], 2));
	CHECK(fabric_vlarb_has_block(&sw->ports[1], 3) && fabric_vlarb_has_block(&sw->ports[1], 4));
	CHECK(!fabric_vlarb_has_block(&sw->ports[1], 0) && !fabric_vlarb_has_block(&sw->ports[1], 5));
	CHECK(fabric_vlarb_get(&sw->ports[1], 1) == NULL);
	e[3] = (struct vl_arb_entry){ .vl = 2, .weight = 64 };
	memcpy(e2, e, sizeof(e));
	CHECK_EQ(fabric_vlarb_set(f, &sw->ports[1], 1, e), 0);
	CHECK_EQ(fabric_vlarb_set(f, &sw->ports[3], 1, e2), 0);
	CHECK_EQ(fabric_vlarb_set(f, &sw->ports[3], 5, e2), -EINVAL);
	/* The same block is kept once */
	CHECK(fabric_vlarb_get(&sw->ports[1], 1) == fabric_vlarb_get(&sw->ports[3], 1));
	CHECK_EQ(fabric_vlarb_get(&sw->ports[3], 1)[3].weight, 64);
	e2[3].weight = 65;
	CHECK_EQ(fabric_vlarb_set(f, &ca->ports[1], 3, e2), 0);
	CHECK(fabric_vlarb_get(&ca->ports[1], 3) != fabric_vlarb_get(&sw->ports[1], 1));
	for (unsigned int k = 0; k < 300; k++) {
		e2[0].weight = (uint8_t)k;
		e2[1].vl = (uint8_t)(k >> 8);
		CHECK_EQ(fabric_vlarb_set(f, &ca->ports[2], 4, e2), 0);	/* the pool grows */
	}
	CHECK_EQ(fabric_vlarb_get(&ca->ports[2], 4)[0].weight, 299 & 0xff);
	/* Another model's same node takes them all, its own copies */
	CHECK_EQ(fabric_new(&g), 0);
	ni = (struct node_info){ .node_type = NODE_TYPE_SWITCH, .num_ports = 4, .node_guid = 10 };
	CHECK_EQ(fabric_add_node(g, &ni, &sw2), 0);
	ni = (struct node_info){ .node_type = NODE_TYPE_CA, .num_ports = 2, .node_guid = 20 };
	CHECK_EQ(fabric_add_node(g, &ni, &ca2), 0);
	CHECK_EQ(fabric_vl_tables_copy(g, sw2, ca), -EINVAL);
	CHECK_EQ(fabric_vl_tables_copy(g, sw2, sw), 0);
	CHECK_EQ(fabric_vl_tables_copy(g, ca2, ca), 0);
	fabric_free(f);
	CHECK_EQ(fabric_sl2vl_get(sw2, 0, 1, &v), 0);
	CHECK_EQ(v, 0x2222);
	CHECK_EQ(fabric_sl2vl_get(sw2, 3, 1, &v), 0);
	CHECK_EQ(v, 0x1111);
	CHECK_EQ(fabric_sl2vl_get(sw2, 1, 3, &v), -ENOENT);
	CHECK_EQ(fabric_sl2vl_get(ca2, 0, 2, &v), 0);
	CHECK_EQ(v, 0x3333);
	CHECK(fabric_vlarb_get(&sw2->ports[3], 1) != NULL);
	CHECK_EQ(fabric_vlarb_get(&sw2->ports[3], 1)[3].weight, 64);
	CHECK_EQ(fabric_vlarb_get(&ca2->ports[1], 3)[3].weight, 65);
	CHECK(fabric_vlarb_get(&sw2->ports[2], 1) == NULL);
	fabric_free(g);
}

static void check_file(const char *path)
{
	struct fakefab ff;
	struct fabric *f = NULL;
	struct disc_stats ds;
	struct route_stats rs;
	unsigned int pairs = 0, bad;
	int r;

	r = ff_load(&ff, path);
	CHECK_EQ(r, 0);
	if (r)
		return;
	CHECK_EQ(bring_up(&ff, &f, &ds, &rs, 0), 0);
	CHECK_EQ(f->nnodes, (size_t)ff.n);
	CHECK_EQ(ds.failed, 0);
	CHECK_EQ(check_lids(f), 0);
	bad = check_routes(f, &ff, &pairs);
	CHECK_EQ(bad, 0);
	CHECK_EQ(rs.unreachable, 0);
	fprintf(stderr, "%s %s: %zu nodes, %zu switches, %u LIDs, %u pairs checked, max %u hops, "
		"port load max %u mean %.1f\n", bad ? "FAIL" : "ok  ", path, f->nnodes,
		f->nswitches, rs.lids, pairs, rs.max_hops, rs.max_port_load, rs.mean_port_load);
	fabric_free(f);
	ff_free(&ff);
}

int main(int argc, char **argv)
{
	RUN(test_fabric_basics);
	RUN(test_vl_tables);
	RUN(test_discover_small);
	RUN(test_dead_node);
	RUN(test_lmc);
	RUN(test_lid_stability);
	RUN(test_lid_reserved);
	for (int i = 1; i < argc; i++)
		check_file(argv[i]);
	return unit_report();
}
