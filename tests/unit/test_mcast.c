// SPDX-License-Identifier: MIT
/*
 * Multicast groups and trees (topo/mc_group.c, topo/mc_forest.c).
 *
 * The membership rules are checked against the statuses the SA must give
 * (IBA 15.2.5.17). The trees are judged by a checker written apart from
 * topo/: it floods a packet from every member over the TRUE cabling of the
 * fake fabric, switch by switch, with the masks the forest wants the
 * switches to hold (a switch sends a multicast packet out of every port of
 * its mask but the one it came in on), and counts what every port receives:
 * each receiving member exactly once, nobody else, no switch twice. It also
 * builds the channel dependency graph of the unicast routes (walked over the
 * true cabling) and of the floods, and looks for a cycle.
 * Extra arguments are topology files (tests/unit/mcast_fabrics.sh).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/lid.h"
#include "topo/mc.h"
#include "topo/path.h"
#include "topo/route.h"

#define NP	(FF_MAX_PORTS + 1)
#define IPOIB_MASK (MC_HAS_MGID | MC_HAS_PORT_GID | MC_HAS_PKEY | MC_HAS_JOIN_STATE)
#define CREATE_MASK (IPOIB_MASK | MC_HAS_QKEY | MC_HAS_SL | MC_HAS_FLOW_LABEL | MC_HAS_TCLASS)

static const uint16_t default_pkeys[] = { 0xffff };

static struct mc_port port_facts(uint64_t guid)
{
	return (struct mc_port){ .guid = guid, .pkeys = default_pkeys, .npkeys = 1,
				 .mtu = 4, .rate = 3 };
}

static struct mc_params ipoib_params(void)
{
	return (struct mc_params){ .qkey = 0x0b1b, .pkey = 0xffff, .mtu = 4, .rate = 3,
				   .sl = 0, .scope = 2 };
}

static struct mc_req join_req(const uint8_t mgid[16], uint64_t guid, uint8_t js, uint32_t has)
{
	struct mc_req r = { .has = has, .port_guid = guid, .join_state = js };

	if (mgid)
		memcpy(r.mgid, mgid, 16);
	r.p = ipoib_params();
	return r;
}

/* ---- membership rules ---- */

static void test_ipoib_join(void)
{
	struct mc_db *db;
	struct mc_group *g, *b;
	struct mc_params p = ipoib_params();
	struct mc_port port = port_facts(0x1001);
	uint8_t mgid[16], js;
	struct mc_req r;

	CHECK_EQ(mc_db_new(0xc3ff, &db), 0);
	mc_ipoib_mgid(0xffff, 2, mgid);
	CHECK_EQ(mgid[0], 0xff);
	CHECK_EQ(mgid[1], 0x12);
	CHECK_EQ(mgid[2], 0x40);
	CHECK_EQ(mgid[3], 0x1b);
	CHECK_EQ(mgid[4], 0xff);
	CHECK_EQ(mgid[5], 0xff);
	CHECK_EQ(mgid[15], 0xff);
	CHECK_EQ(mc_db_add_permanent(db, mgid, &p, &b), 0);
	CHECK_EQ(b->mlid, 0xc000);
	/* The kernel's join: MGID, PortGID, P_Key, JoinState, nothing else */
	r = join_req(mgid, port.guid, MC_JOIN_FULL, IPOIB_MASK);
	CHECK_EQ(mc_join(db, &r, &port, &g, &js), 0);
	CHECK(g == b);
	CHECK_EQ(js, MC_JOIN_FULL);
	CHECK_EQ(g->p.qkey, 0x0b1b);
	CHECK_EQ(g->nmembers, 1);
	/* Joining again with another bit adds it */
	r.join_state = MC_JOIN_SENDONLY_NON;
	CHECK_EQ(mc_join(db, &r, &port, &g, &js), 0);
	CHECK_EQ(js, MC_JOIN_FULL | MC_JOIN_SENDONLY_NON);
	CHECK_EQ(g->nmembers, 1);
	/* A leave of all members keeps a permanent group */
	{
		struct mc_group copy;
		bool gone;

		r.join_state = MC_JOIN_ALL;
		CHECK_EQ(mc_leave(db, &r, &copy, &js, &gone), 0);
		CHECK_EQ(js, 0);
		CHECK(!gone);
		CHECK_EQ(b->nmembers, 0);
		CHECK(mc_db_find(db, mgid) == b);
	}
	mc_db_free(db);
}

static void test_bad_requests(void)
{
	struct mc_db *db;
	struct mc_group *g, copy;
	struct mc_params p = ipoib_params();
	struct mc_port port = port_facts(0x2001);
	uint8_t bc[16], other[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 1 }, js;
	struct mc_req r;
	bool gone;

	CHECK_EQ(mc_db_new(0xc3ff, &db), 0);
	mc_ipoib_mgid(0xffff, 2, bc);
	CHECK_EQ(mc_db_add_permanent(db, bc, &p, NULL), 0);
	/* A group that does not exist, without the create components */
	r = join_req(other, port.guid, MC_JOIN_FULL, IPOIB_MASK);
	CHECK_EQ(mc_join(db, &r, &port, &g, &js), -ENODATA);
	/* JoinState 0, and bits beyond the four */
	r = join_req(bc, port.guid, 0, IPOIB_MASK);
	CHECK_EQ(mc_join(db, &r, &port, &g, &js), -EINVAL);
	/* No PortGID or JoinState in the mask */
	r = join_req(bc, port.guid, MC_JOIN_FULL, MC_HAS_MGID | MC_HAS_JOIN_STATE);
	CHECK_EQ(mc_join(db, &r, &port, &g, &js), -ENODATA);
	/* A P_Key the port lacks */
	{
		static const uint16_t only_8001[] = { 0x8001 };
		struct mc_port lim = port;

		lim.pkeys = only_8001;
		r = join_req(bc, port.guid, MC_JOIN_FULL, IPOIB_MASK);
		CHECK_EQ(mc_join(db, &r, &lim, &g, &js), -EINVAL);
		r = join_req(other, port.guid, MC_JOIN_FULL, CREATE_MASK);
		CHECK_EQ(mc_join(db, &r, &lim, &g, &js), -EINVAL);
	}
	/* Parameters that differ from the group's */
	r = join_req(bc, port.guid, MC_JOIN_FULL, IPOIB_MASK | MC_HAS_QKEY);
	r.p.qkey = 0x1234;
	CHECK_EQ(mc_join(db, &r, &port, &g, &js), -EINVAL);
	/* An MTU the port's link cannot carry, exactly asked for */
	r = join_req(other, port.guid, MC_JOIN_FULL, CREATE_MASK | MC_HAS_MTU | MC_HAS_MTU_SEL);
	r.p.mtu = 5;
	r.mtu_sel = MC_SEL_EQ;
	CHECK_EQ(mc_join(db, &r, &port, &g, &js), -EINVAL);
	/* "More than 4096" is impossible everywhere */
	r.p.mtu = 5;
	r.mtu_sel = MC_SEL_GT;
	CHECK_EQ(mc_join(db, &r, &port, &g, &js), -EINVAL);
	/* "Less than 2048" on a 2048 link: 1024 */
	r.p.mtu = 4;
	r.mtu_sel = MC_SEL_LT;
	CHECK_EQ(mc_join(db, &r, &port, &g, &js), 0);
	CHECK_EQ(g->p.mtu, 3);
	/* A rate beyond the link (port 10 Gb/s, 40 Gb/s asked) */
	{
		uint8_t m2[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 2 };

		r = join_req(m2, port.guid, MC_JOIN_FULL, CREATE_MASK | MC_HAS_RATE);
		r.p.rate = 7;
		CHECK_EQ(mc_join(db, &r, &port, &g, &js), -EINVAL);
		/* Non-members cannot create */
		r = join_req(m2, port.guid, MC_JOIN_NON, CREATE_MASK);
		CHECK_EQ(mc_join(db, &r, &port, &g, &js), -EINVAL);
		/* Not a multicast GID */
		m2[0] = 0xfe;
		r = join_req(m2, port.guid, MC_JOIN_FULL, CREATE_MASK);
		CHECK_EQ(mc_join(db, &r, &port, &g, &js), -EINVAL);
	}
	/* The group joined at 1024 refuses a member asking for exactly 2048 */
	r = join_req(other, 0x2002, MC_JOIN_FULL, IPOIB_MASK | MC_HAS_MTU);
	r.p.mtu = 4;
	{
		struct mc_port p2 = port_facts(0x2002);

		CHECK_EQ(mc_join(db, &r, &p2, &g, &js), -EINVAL);
		/* and one whose link runs only 512 */
		p2.mtu = 2;
		r.has = IPOIB_MASK;
		CHECK_EQ(mc_join(db, &r, &p2, &g, &js), -EINVAL);
	}
	/* Leaves: of a group one is not in, of a group that does not exist */
	r = join_req(bc, 0x2003, MC_JOIN_FULL, IPOIB_MASK);
	CHECK_EQ(mc_leave(db, &r, &copy, &js, &gone), -EINVAL);
	{
		uint8_t none[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 9 };

		r = join_req(none, port.guid, MC_JOIN_FULL, IPOIB_MASK);
		CHECK_EQ(mc_leave(db, &r, &copy, &js, &gone), -EINVAL);
	}
	/* Leaving a bit one does not hold */
	r = join_req(other, port.guid, MC_JOIN_NON, IPOIB_MASK);
	CHECK_EQ(mc_leave(db, &r, &copy, &js, &gone), -EINVAL);
	CHECK_EQ(mc_db_count(db), 2);
	mc_db_free(db);
}

static void test_leave_bits(void)
{
	struct mc_db *db;
	struct mc_group *g, copy;
	struct mc_port a = port_facts(0x3001), b = port_facts(0x3002);
	uint8_t mgid[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 1 }, js;
	struct mc_req r;
	bool gone;
	uint16_t mlid;

	CHECK_EQ(mc_db_new(0xc3ff, &db), 0);
	r = join_req(mgid, a.guid, MC_JOIN_FULL | MC_JOIN_NON, CREATE_MASK);
	CHECK_EQ(mc_join(db, &r, &a, &g, &js), 0);
	mlid = g->mlid;
	r = join_req(mgid, b.guid, MC_JOIN_NON, IPOIB_MASK);
	CHECK_EQ(mc_join(db, &r, &b, &g, &js), 0);
	CHECK_EQ(g->nmembers, 2);
	CHECK_EQ(g->holders, 1);
	/* Leaving FullMember only leaves NonMember in place */
	r = join_req(mgid, a.guid, MC_JOIN_FULL, IPOIB_MASK);
	CHECK_EQ(mc_leave(db, &r, &copy, &js, &gone), 0);
	/* Nobody holds it now: the group goes, its non-members with it */
	CHECK(gone);
	CHECK_EQ(js, MC_JOIN_NON);
	CHECK_EQ(copy.mlid, mlid);
	CHECK(mc_db_find(db, mgid) == NULL);
	CHECK(mc_db_by_mlid(db, mlid) == NULL);
	CHECK_EQ(mc_db_count(db), 0);
	mc_db_free(db);
}

/* Send-only full members create, join and leave: MLIDs never leak */
static void test_mlid_cycles(void)
{
	struct mc_db *db;
	struct mc_params p = ipoib_params();
	uint8_t bc[16];
	uint16_t high[2] = { 0, 0 };
	struct mc_event ev[64];
	size_t created = 0, deleted = 0, n;

	CHECK_EQ(mc_db_new(0xc3ff, &db), 0);
	mc_ipoib_mgid(0xffff, 2, bc);
	CHECK_EQ(mc_db_add_permanent(db, bc, &p, NULL), 0);
	CHECK_EQ(mc_db_take_events(db, ev, 64), 1);
	for (int round = 0; round < 2; round++)
		for (int i = 0; i < 1000; i++) {
			struct mc_port port = port_facts(0x4000 + (uint64_t)(i % 7));
			struct mc_req r = join_req(NULL, port.guid, MC_JOIN_SENDONLY_FULL,
						   CREATE_MASK);
			struct mc_group *g, copy;
			uint8_t js;
			bool gone;

			/* MGID 0: the SA assigns one */
			CHECK_EQ(mc_join(db, &r, &port, &g, &js), 0);
			CHECK_EQ(g->mgid[0], 0xff);
			CHECK_EQ(g->mgid[2], 0xa0);
			if (g->mlid > high[round])
				high[round] = g->mlid;
			memcpy(r.mgid, g->mgid, 16);
			r.has = IPOIB_MASK;
			CHECK_EQ(mc_leave(db, &r, &copy, &js, &gone), 0);
			CHECK(gone);
			while ((n = mc_db_take_events(db, ev, 64)) > 0)
				for (size_t k = 0; k < n; k++)
					ev[k].created ? created++ : deleted++;
		}
	CHECK_EQ(high[0], 0xc001);
	CHECK(high[1] <= high[0]);
	CHECK_EQ(mc_db_count(db), 1);
	CHECK_EQ(created, 2000);
	CHECK_EQ(deleted, 2000);
	mc_db_free(db);
}

/* Remembered MLIDs come back to their MGIDs, and others avoid them */
static void test_remember(void)
{
	struct mc_db *db;
	uint8_t a[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 0xa };
	uint8_t b[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 0xb };
	struct mc_port port = port_facts(0x5001);
	struct mc_group *g;
	struct mc_req r;
	uint8_t js;

	CHECK_EQ(mc_db_new(0xc002, &db), 0);
	CHECK_EQ(mc_db_remember(db, a, 0xc001), 0);
	CHECK_EQ(mc_db_remember(db, b, 0xc000), 0);
	CHECK_EQ(mc_db_remembered(db), 2);
	r = join_req(a, port.guid, MC_JOIN_FULL, CREATE_MASK);
	CHECK_EQ(mc_join(db, &r, &port, &g, &js), 0);
	CHECK_EQ(g->mlid, 0xc001);
	/* Another MGID takes the free one nobody remembers */
	{
		uint8_t c[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 0xc };
		uint8_t d[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 0xd };
		uint8_t e[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 0xe };

		r = join_req(c, port.guid, MC_JOIN_FULL, CREATE_MASK);
		CHECK_EQ(mc_join(db, &r, &port, &g, &js), 0);
		CHECK_EQ(g->mlid, 0xc002);
		/* Space runs out: b's MLID is taken after all */
		r = join_req(d, port.guid, MC_JOIN_FULL, CREATE_MASK);
		CHECK_EQ(mc_join(db, &r, &port, &g, &js), 0);
		CHECK_EQ(g->mlid, 0xc000);
		CHECK_EQ(mc_db_remembered(db), 0);
		/* Nothing left at all */
		r = join_req(e, port.guid, MC_JOIN_FULL, CREATE_MASK);
		CHECK_EQ(mc_join(db, &r, &port, &g, &js), -ENOSPC);
	}
	mc_db_free(db);
}

static bool alive_odd(void *ctx, uint64_t guid, uint16_t pkey)
{
	(void)ctx;
	(void)pkey;
	return guid & 1;
}

static void test_purge(void)
{
	struct mc_db *db;
	uint8_t m1[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 1 };
	uint8_t m2[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 2 };
	struct mc_group *g;
	struct mc_req r;
	uint8_t js;

	CHECK_EQ(mc_db_new(0xc3ff, &db), 0);
	for (uint64_t guid = 0x10; guid < 0x20; guid++) {
		struct mc_port port = port_facts(guid);

		r = join_req(m1, guid, MC_JOIN_FULL, CREATE_MASK);
		CHECK_EQ(mc_join(db, &r, &port, &g, &js), 0);
	}
	{
		struct mc_port port = port_facts(0x22);

		r = join_req(m2, 0x22, MC_JOIN_FULL, CREATE_MASK);
		CHECK_EQ(mc_join(db, &r, &port, &g, &js), 0);
	}
	/* Departed (even) ports go; m2 had only one, so m2 goes too */
	CHECK_EQ(mc_db_purge(db, alive_odd, NULL), 9);
	g = mc_db_find(db, m1);
	CHECK(g != NULL);
	CHECK_EQ(g ? g->nmembers : 0, 8);
	CHECK(mc_db_find(db, m2) == NULL);
	mc_db_free(db);
}

/* Ports 0x30.. hold P_Key 0x8001 only when odd: the others left the partition */
static bool keeps_8001(void *ctx, uint64_t guid, uint16_t pkey)
{
	(void)ctx;
	return (pkey & 0x7fff) != 0x0001 || (guid & 1);
}

/*
 * A partition's members that lose its P_Key leave its groups (the
 * others stay); a configured group no longer configured goes with its
 * last holder, and at once when nobody holds it
 */
static void test_purge_pkey(void)
{
	uint8_t ga[16], gd[16];
	struct mc_params pa = { .qkey = 0x0b1b, .pkey = 0x8001, .mtu = 4, .rate = 3, .scope = 2 };
	struct mc_params pd = pa;
	struct mc_group *g;
	struct mc_db *db;
	struct mc_req r;
	uint8_t js;

	pd.pkey = 0xffff;
	mc_ipoib_mgid(0x8001, 2, ga);
	mc_ipoib_mgid(0xffff, 2, gd);
	CHECK_EQ(mc_db_new(0xc3ff, &db), 0);
	CHECK_EQ(mc_db_add_permanent(db, ga, &pa, NULL), 0);
	CHECK_EQ(mc_db_add_permanent(db, gd, &pd, NULL), 0);
	for (uint64_t guid = 0x30; guid < 0x34; guid++) {
		static const uint16_t keys[] = { 0xffff, 0x8001 };
		struct mc_port port = port_facts(guid);

		port.pkeys = keys;
		port.npkeys = 2;
		r = join_req(ga, guid, MC_JOIN_FULL, IPOIB_MASK);
		r.p.pkey = 0x8001;
		CHECK_EQ(mc_join(db, &r, &port, &g, &js), 0);
		r = join_req(gd, guid, MC_JOIN_FULL, IPOIB_MASK);
		CHECK_EQ(mc_join(db, &r, &port, &g, &js), 0);
	}
	/* 0x30 and 0x32 left A: out of A's group, still in Default's */
	CHECK_EQ(mc_db_purge(db, keeps_8001, NULL), 2);
	g = mc_db_find(db, ga);
	CHECK(g && g->nmembers == 2 && mc_group_member(g, 0x31) && !mc_group_member(g, 0x30));
	g = mc_db_find(db, gd);
	CHECK(g && g->nmembers == 4);
	/* A is no longer configured: its group lives while 0x31 and 0x33 hold it */
	g = mc_db_find(db, ga);
	if (g)
		mc_db_unpin(db, g);
	g = mc_db_find(db, ga);
	CHECK(g && !g->permanent);
	{
		struct mc_group copy;
		bool gone = false;

		r = join_req(ga, 0x31, MC_JOIN_FULL, IPOIB_MASK);
		CHECK_EQ(mc_leave(db, &r, &copy, &js, &gone), 0);
		CHECK(!gone && mc_db_find(db, ga) != NULL);
		r = join_req(ga, 0x33, MC_JOIN_FULL, IPOIB_MASK);
		CHECK_EQ(mc_leave(db, &r, &copy, &js, &gone), 0);
		CHECK(gone);
	}
	CHECK(mc_db_find(db, ga) == NULL);
	/* Nobody in it: released at once */
	g = mc_db_find(db, gd);
	for (uint64_t guid = 0x30; guid < 0x34; guid++) {
		struct mc_group copy;
		bool gone;

		r = join_req(gd, guid, MC_JOIN_FULL, IPOIB_MASK);
		CHECK_EQ(mc_leave(db, &r, &copy, &js, &gone), 0);
		CHECK(!gone);	/* permanent: stays without members */
	}
	g = mc_db_find(db, gd);
	CHECK(g != NULL);
	if (g)
		mc_db_unpin(db, g);
	CHECK(mc_db_find(db, gd) == NULL);
	mc_db_free(db);
}

/* ---- the independent checker ---- */

struct judge {
	const struct fakefab *ff;
	const struct fabric *f;
	const struct mc_forest *fo;
	int *ffsw;			/* fabric switch index -> ff node */
	int *swof;			/* ff node -> fabric switch index, or -1 */
	/* turns of the floods, as (in arc, out arc) in ff (node * NP + port) ids */
	uint32_t (*turns)[2];
	size_t nturns, cap;
};

static int ff_by_guid(const struct fakefab *ff, uint64_t guid)
{
	for (int i = 0; i < ff->n; i++)
		if (ff->nodes[i].guid == guid)
			return i;
	return -1;
}

static bool in_mask(const struct judge *j, int ffn, unsigned int port, uint16_t mlid)
{
	int s = j->swof[ffn];

	return s >= 0 && (mc_forest_want(j->fo, (uint32_t)s, mlid, port / 16) & (1u << (port % 16)));
}

static void turn_add(struct judge *j, uint32_t a, uint32_t b)
{
	if (j->nturns == j->cap) {
		j->cap = j->cap ? 2 * j->cap : 1024;
		j->turns = realloc(j->turns, j->cap * sizeof(*j->turns));
	}
	j->turns[j->nturns][0] = a;
	j->turns[j->nturns][1] = b;
	j->nturns++;
}

/*
 * Flood mlid from CA port (node c, port cp): returns the switch visits
 * beyond the first (duplicates or loops); got[] counts deliveries per
 * (node, port).
 */
static unsigned long flood(struct judge *j, int c, unsigned int cp, uint16_t mlid, uint32_t *got)
{
	const struct fakefab *ff = j->ff;
	int *qn = malloc(sizeof(int) * (size_t)ff->n * NP);
	unsigned int *qp = malloc(sizeof(unsigned int) * (size_t)ff->n * NP);
	uint32_t *qarc = malloc(sizeof(uint32_t) * (size_t)ff->n * NP);
	unsigned int *seen = calloc((size_t)ff->n, sizeof(*seen));
	unsigned long extra = 0;
	size_t head = 0, tail = 0, budget = (size_t)ff->n * NP;
	int s = ff->nodes[c].peer[cp];

	if (s < 0 || ff->nodes[s].type != NODE_TYPE_SWITCH)
		goto out;
	qn[tail] = s;
	qp[tail] = ff->nodes[c].peer_port[cp];
	qarc[tail++] = UINT32_MAX;	/* from a CA: no arc of the CDG */
	while (head < tail) {
		int v = qn[head];
		unsigned int in = qp[head];
		uint32_t arc = qarc[head++];

		if (seen[v]++) {
			extra++;
			continue;
		}
		for (unsigned int y = 0; y <= ff->nodes[v].nports; y++) {
			int w;

			if (y == in || !in_mask(j, v, y, mlid))
				continue;
			w = y ? ff->nodes[v].peer[y] : -1;
			if (!y) {
				got[(size_t)v * NP]++;	/* the switch's own port 0 */
				continue;
			}
			if (w < 0)
				continue;
			if (ff->nodes[w].type != NODE_TYPE_SWITCH) {
				got[(size_t)w * NP + ff->nodes[v].peer_port[y]]++;
				continue;
			}
			if (arc != UINT32_MAX)
				turn_add(j, arc, (uint32_t)v * NP + y);
			if (tail < budget) {
				qn[tail] = w;
				qp[tail] = ff->nodes[v].peer_port[y];
				qarc[tail++] = (uint32_t)v * NP + y;
			} else {
				extra++;
			}
		}
	}
out:
	free(qn);
	free(qp);
	free(qarc);
	free(seen);
	return extra;
}

/* Unicast turns over the true cabling, from the LFTs */
static void unicast_turns(struct judge *j)
{
	const struct fakefab *ff = j->ff;
	const struct fabric *f = j->f;

	for (size_t s = 0; s < f->nswitches; s++) {
		const struct fab_node *n = f->switches[s];
		int u = j->ffsw[s];

		for (uint32_t lid = 1; lid < n->lft_len && lid <= f->max_lid; lid++) {
			unsigned int p = n->lft[lid];
			int v;
			const struct fab_node *vn;

			if (!p || p > ff->nodes[u].nports)
				continue;
			v = ff->nodes[u].peer[p];
			if (v < 0 || ff->nodes[v].type != NODE_TYPE_SWITCH || j->swof[v] < 0)
				continue;
			vn = f->switches[j->swof[v]];
			if (lid >= vn->lft_len || !vn->lft[lid] || vn->lft[lid] > ff->nodes[v].nports)
				continue;
			if (ff->nodes[v].peer[vn->lft[lid]] < 0 ||
			    ff->nodes[ff->nodes[v].peer[vn->lft[lid]]].type != NODE_TYPE_SWITCH)
				continue;
			turn_add(j, (uint32_t)u * NP + p, (uint32_t)v * NP + vn->lft[lid]);
		}
	}
}

static int cmp_turn(const void *x, const void *y)
{
	const uint32_t *a = x, *b = y;

	if (a[0] != b[0])
		return a[0] < b[0] ? -1 : 1;
	return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* Kahn over arcs (node * NP + port) with the collected turns */
static bool turns_acyclic(struct judge *j)
{
	size_t na = (size_t)j->ff->n * NP, k = 0, head = 0, tail = 0, done = 0;
	uint32_t *indeg = calloc(na, sizeof(*indeg)), *queue = malloc(na * sizeof(*queue));
	size_t *first = malloc((na + 1) * sizeof(*first));
	bool *used = calloc(na, sizeof(*used));
	bool ok;

	qsort(j->turns, j->nturns, sizeof(*j->turns), cmp_turn);
	for (size_t i = 0; i < j->nturns; i++)
		if (!i || cmp_turn(j->turns[i], j->turns[i - 1]))
			memcpy(j->turns[k++], j->turns[i], sizeof(j->turns[i]));
	j->nturns = k;
	for (size_t i = 0; i <= na; i++)
		first[i] = j->nturns;
	for (size_t i = j->nturns; i-- > 0;)
		first[j->turns[i][0]] = i;
	for (size_t a = na; a-- > 0;)
		if (first[a] > first[a + 1])
			first[a] = first[a + 1];
	for (size_t i = 0; i < j->nturns; i++) {
		indeg[j->turns[i][1]]++;
		used[j->turns[i][0]] = used[j->turns[i][1]] = true;
	}
	for (size_t a = 0; a < na; a++)
		if (used[a] && !indeg[a])
			queue[tail++] = (uint32_t)a;
	while (head < tail) {
		uint32_t a = queue[head++];

		done++;
		for (size_t i = first[a]; i < j->nturns && j->turns[i][0] == a; i++)
			if (--indeg[j->turns[i][1]] == 0)
				queue[tail++] = j->turns[i][1];
	}
	ok = true;
	for (size_t a = 0; a < na; a++)
		if (used[a] && indeg[a])
			ok = false;
	free(indeg);
	free(queue);
	free(first);
	free(used);
	return ok;
}

/* Every group of db: from each member, each receiver once, nobody else */
static unsigned long judge_groups(struct judge *j, struct mc_db *db, unsigned long *floods)
{
	const struct fakefab *ff = j->ff;
	uint32_t *got = malloc(sizeof(*got) * (size_t)ff->n * NP);
	unsigned long bad = 0;

	for (struct mc_group *g = mc_db_next(db, 0); g; g = mc_db_next(db, g->mlid)) {
		for (uint32_t m = 0; m < g->nmembers; m++) {
			uint64_t guid = g->members[m].guid;
			int c = -1;
			unsigned int cp = 0;

			for (int i = 0; i < ff->n && c < 0; i++)
				if (ff->nodes[i].type != NODE_TYPE_SWITCH &&
				    guid > ff->nodes[i].guid &&
				    guid <= ff->nodes[i].guid + ff->nodes[i].nports) {
					c = i;
					cp = (unsigned int)(guid - ff->nodes[i].guid);
				}
			if (c < 0)
				continue;
			memset(got, 0, sizeof(*got) * (size_t)ff->n * NP);
			bad += flood(j, c, cp, g->mlid, got);
			(*floods)++;
			for (int i = 0; i < ff->n; i++) {
				if (ff->nodes[i].type == NODE_TYPE_SWITCH)
					continue;
				for (unsigned int p = 1; p <= ff->nodes[i].nports; p++) {
					const struct mc_member *mm =
						mc_group_member(g, ff->nodes[i].guid + p);
					bool rx = mm && (mm->join_state & MC_JOIN_RECEIVES) &&
						  !(i == c && p == cp);
					uint32_t n = got[(size_t)i * NP + p];

					if (n != (rx ? 1u : 0u)) {
						if (bad < 5)
							fprintf(stderr, "  MLID 0x%x from %s[%u]: %s[%u] "
								"got %u\n", g->mlid,
								ff->nodes[c].name, cp,
								ff->nodes[i].name, p, n);
						bad++;
					}
				}
			}
		}
	}
	free(got);
	return bad;
}

/* Play the switches: reads find zeros, writes stick; returns blocks written */
static unsigned long program(struct mc_forest *fo, unsigned long *reads)
{
	static const uint16_t zero[MFT_BLOCK_SIZE];
	struct mc_block b;
	unsigned long writes = 0;

	while (mc_forest_next(fo, &b)) {
		if (b.read) {
			(*reads)++;
			CHECK_EQ(mc_forest_done(fo, &b, zero), 0);
		} else {
			writes++;
			CHECK_EQ(mc_forest_done(fo, &b, b.mask), 0);
		}
	}
	return writes;
}

/* Every switch's wanted masks for the first 64 MLIDs, [switch][mlid][pos] */
#define SNAP_MLIDS	64
static uint16_t *want_snapshot(const struct mc_forest *fo, const struct fabric *f,
			       const struct mc_db *db)
{
	uint16_t *w = calloc(f->nswitches * SNAP_MLIDS * MFT_MAX_POSITIONS, sizeof(*w));

	CHECK(mc_db_max_mlid(db) < LID_MCAST_MIN + SNAP_MLIDS);
	for (size_t s = 0; s < f->nswitches; s++)
		for (unsigned int m = 0; m < SNAP_MLIDS; m++)
			for (unsigned int p = 0; p < MFT_MAX_POSITIONS; p++)
				w[(s * SNAP_MLIDS + m) * MFT_MAX_POSITIONS + p] =
					mc_forest_want(fo, (uint32_t)s,
						       (uint16_t)(LID_MCAST_MIN + m), p);
	return w;
}

/* (switch, 32-MLID block, position) triples whose masks differ */
static unsigned long blocks_differ(const uint16_t *a, const uint16_t *b, const struct fabric *f)
{
	unsigned long n = 0;

	for (size_t s = 0; s < f->nswitches; s++)
		for (unsigned int blk = 0; blk < SNAP_MLIDS / MFT_BLOCK_SIZE; blk++)
			for (unsigned int p = 0; p < MFT_MAX_POSITIONS; p++) {
				bool d = false;

				for (unsigned int k = 0; k < MFT_BLOCK_SIZE; k++) {
					size_t i = (s * SNAP_MLIDS + blk * MFT_BLOCK_SIZE + k) *
						   MFT_MAX_POSITIONS + p;

					d |= a[i] != b[i];
				}
				n += d;
			}
	return n;
}

static uint32_t rnd_state = 12345;

static uint32_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 17;
	rnd_state ^= rnd_state << 5;
	return rnd_state;
}

static void forest_fabric(const char *path, const char *engine, unsigned int vls)
{
	struct fakefab ff = { 0 };
	struct fabric *f = NULL;
	struct disc_stats ds;
	struct lid_stats ls;
	struct route_opts o = { .max_vls = vls };
	struct route_stats st;
	struct route_result *res = NULL;
	struct mc_db *db = NULL;
	struct mc_forest *fo = NULL;
	struct judge j = { 0 };
	struct mc_params p = ipoib_params();
	uint8_t bc[16];
	uint64_t *cas = NULL, dirty[MLID_COUNT / 64 + 1];
	size_t ncas = 0;
	unsigned long floods = 0, reads = 0, writes, extra;
	uint16_t mft_cap = 0xffff;
	bool acyclic;

	if (ff_load(&ff, path) < 0 || fabric_new(&f) < 0) {
		CHECK(false);
		goto out;
	}
	CHECK_EQ(ff_discover(&ff, f, &ds), 0);
	CHECK_EQ(lid_assign(f, 0, NULL, NULL, &ls), 0);
	CHECK_EQ(route_compute(route_engine_find(engine), f, &o, &st, &res), 0);
	for (size_t s = 0; s < f->nswitches; s++)
		if (f->switches[s]->si.mft_cap && f->switches[s]->si.mft_cap < mft_cap)
			mft_cap = f->switches[s]->si.mft_cap;
	if (mft_cap == 0xffff)
		mft_cap = 1024;
	CHECK_EQ(mc_db_new((uint16_t)(LID_MCAST_MIN + mft_cap - 1), &db), 0);
	mc_ipoib_mgid(0xffff, 2, bc);
	CHECK_EQ(mc_db_add_permanent(db, bc, &p, NULL), 0);
	/* Every CA port joins the broadcast group the IPoIB way */
	cas = malloc(sizeof(*cas) * (f->nnodes * 2 + 1));
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		if (n->type == NODE_TYPE_SWITCH)
			continue;
		for (unsigned int pn = 1; pn <= n->num_ports; pn++) {
			struct fab_port *pt = &n->ports[pn];
			struct mc_port facts;
			struct mc_req r;
			struct mc_group *g;
			uint8_t js;

			if (!pt->lid || !fabric_port_linked(pt))
				continue;
			facts = (struct mc_port){ .guid = pt->guid, .mtu = path_link_mtu(pt),
						  .rate = path_link_rate(pt) };
			r = join_req(bc, pt->guid, MC_JOIN_FULL, IPOIB_MASK);
			/* Links the group's 2048/10 Gb/s do not fit are refused; none here */
			CHECK_EQ(mc_join(db, &r, &facts, &g, &js), 0);
			cas[ncas++] = pt->guid;
		}
	}
	/* Groups of random members with every kind of JoinState */
	for (int gi = 0; gi < 24 && ncas; gi++) {
		uint8_t mgid[16] = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, 0, 0, 0, 0, 0, 0,
				     0, 0, (uint8_t)(gi >> 8), (uint8_t)gi };
		size_t nm = 1 + rnd() % (gi % 3 == 0 ? ncas : (ncas < 6 ? ncas : 6));

		for (size_t k = 0; k < nm; k++) {
			uint64_t guid = cas[rnd() % ncas];
			struct mc_port facts = { .guid = guid, .mtu = 1, .rate = 2 };
			static const uint8_t states[] = { MC_JOIN_FULL, MC_JOIN_NON,
							  MC_JOIN_SENDONLY_NON,
							  MC_JOIN_SENDONLY_FULL };
			struct mc_req r = join_req(mgid, guid, k ? states[rnd() % 4] :
						   MC_JOIN_FULL, CREATE_MASK | MC_HAS_MTU |
						   MC_HAS_RATE);
			struct mc_group *g;
			uint8_t js;

			r.p.mtu = 1;
			r.p.rate = 2;
			CHECK_EQ(mc_join(db, &r, &facts, &g, &js), 0);
		}
	}
	CHECK_EQ(mc_forest_new(f, res, &fo), 0);
	mc_db_take_dirty(db, dirty);
	CHECK_EQ(mc_forest_update(fo, db, NULL), 0);
	writes = program(fo, &reads);
	CHECK(writes > 0);
	CHECK_EQ(mc_forest_pending(fo), 0);
	/* Judge */
	j.ff = &ff;
	j.f = f;
	j.fo = fo;
	j.ffsw = malloc(sizeof(int) * (f->nswitches + 1));
	j.swof = malloc(sizeof(int) * (size_t)ff.n);
	for (int i = 0; i < ff.n; i++)
		j.swof[i] = -1;
	for (size_t s = 0; s < f->nswitches; s++) {
		j.ffsw[s] = ff_by_guid(&ff, f->switches[s]->guid);
		if (j.ffsw[s] >= 0)
			j.swof[j.ffsw[s]] = (int)s;
	}
	extra = judge_groups(&j, db, &floods);
	CHECK_EQ(extra, 0);
	CHECK(floods >= ncas);
	CHECK_EQ(mc_forest_stats(fo)->unroutable, 0);
	CHECK_EQ(mc_forest_check_cdg(fo, &acyclic), 0);
	unicast_turns(&j);
	/*
	 * dfree on one VL is deadlock-free: multicast must keep it so, by the
	 * forest's own verifier and by the independent one. With several VLs
	 * each layer is packed full and a tree may find no room: then the
	 * forest must say so (unsafe trees), and its verifier agree.
	 */
	if (!strcmp(engine, "dfree") && vls == 1) {
		CHECK_EQ(mc_forest_stats(fo)->unsafe, 0);
		CHECK(acyclic);
		CHECK(turns_acyclic(&j));
	} else if (!strcmp(engine, "dfree")) {
		CHECK_EQ(mc_forest_stats(fo)->unsafe == 0, acyclic);
	}
	fprintf(stderr, "  %s (%s, %u VLs): %zu CA ports, %zu groups, %u trees over %lu "
		"switches (%u unsafe), at most %u rooted at one switch; %lu floods; %lu "
		"blocks read, %lu written\n", path, engine, vls, ncas, mc_db_count(db),
		mc_forest_stats(fo)->trees, (unsigned long)mc_forest_stats(fo)->switches,
		mc_forest_stats(fo)->unsafe, mc_forest_stats(fo)->max_roots, floods, reads,
		writes);

	/* A change: a few members leave, one joins; only what changed is sent */
	{
		struct mc_group *g = mc_db_find(db, bc);
		struct mc_group copy;
		uint8_t js;
		bool gone;
		unsigned long w2, r2 = 0;

		for (size_t k = 0; k < 3 && k < ncas; k++) {
			struct mc_req r = join_req(bc, cas[k], MC_JOIN_FULL, IPOIB_MASK);

			CHECK_EQ(mc_leave(db, &r, &copy, &js, &gone), 0);
		}
		CHECK(g && g->nmembers == ncas - (ncas < 3 ? ncas : 3));
		uint16_t *before = want_snapshot(fo, f, db);
		uint16_t *after;

		mc_db_take_dirty(db, dirty);
		CHECK_EQ(mc_forest_update(fo, db, dirty), 0);
		w2 = program(fo, &r2);
		CHECK_EQ(r2, 0);
		after = want_snapshot(fo, f, db);
		/* Exactly the blocks whose entries changed were written */
		CHECK_EQ(w2, blocks_differ(before, after, f));
		free(before);
		free(after);
		memset(&floods, 0, sizeof(floods));
		j.nturns = 0;
		CHECK_EQ(judge_groups(&j, db, &floods), 0);
		/* Nothing changed: nothing to send */
		mc_db_take_dirty(db, dirty);
		CHECK_EQ(mc_forest_update(fo, db, dirty), 0);
		CHECK_EQ(mc_forest_pending(fo), 0);
		/* Everything marked changed without a real change: nothing to send */
		CHECK_EQ(mc_forest_update(fo, db, NULL), 0);
		CHECK_EQ(program(fo, &r2), 0);
	}
out:
	free(j.ffsw);
	free(j.swof);
	free(j.turns);
	free(cas);
	mc_forest_free(fo);
	mc_db_free(db);
	route_result_free(res);
	fabric_free(f);
	ff_free(&ff);
}

/* On a 2-level fat-tree, groups spread over the spines */
static void test_spread(const char *path)
{
	struct fakefab ff = { 0 };
	struct fabric *f = NULL;
	struct disc_stats ds;
	struct lid_stats ls;
	struct route_stats st;
	struct route_result *res = NULL;
	struct mc_db *db = NULL;
	struct mc_forest *fo = NULL;
	uint64_t first = 0, last = 0;
	unsigned int groups = 0, spines = 0;

	if (ff_load(&ff, path) < 0 || fabric_new(&f) < 0) {
		CHECK(false);
		goto out;
	}
	CHECK_EQ(ff_discover(&ff, f, &ds), 0);
	CHECK_EQ(lid_assign(f, 0, NULL, NULL, &ls), 0);
	CHECK_EQ(route_compute(route_engine_find("dfree"), f, NULL, &st, &res), 0);
	CHECK_EQ(mc_db_new(0xc3ff, &db), 0);
	/* Groups of the first and the last CA port (on two different leaves) */
	for (size_t i = 0; i < f->nnodes; i++)
		if (f->nodes[i]->type != NODE_TYPE_SWITCH && f->nodes[i]->ports[1].lid) {
			if (!first)
				first = f->nodes[i]->ports[1].guid;
			last = f->nodes[i]->ports[1].guid;
		}
	for (size_t s = 0; s < f->nswitches; s++) {
		struct fab_node *n = f->switches[s];
		bool host = false;

		for (unsigned int pn = 1; pn <= n->num_ports; pn++)
			host |= fabric_port_linked(&n->ports[pn]) &&
				n->ports[pn].peer->node->type != NODE_TYPE_SWITCH;
		spines += !host;
	}
	for (groups = 0; groups < 3 * spines; groups++) {
		uint8_t mgid[16] = { 0xff, 0x15, 0x60, 0x1b, [14] = (uint8_t)(groups >> 8),
				     [15] = (uint8_t)groups };
		uint64_t who[2] = { first, last };

		for (int k = 0; k < 2; k++) {
			struct mc_port facts = { .guid = who[k], .mtu = 4, .rate = 3 };
			struct mc_req r = join_req(mgid, who[k], MC_JOIN_FULL, CREATE_MASK);
			struct mc_group *g;
			uint8_t js;

			CHECK_EQ(mc_join(db, &r, &facts, &g, &js), 0);
		}
	}
	CHECK_EQ(mc_forest_new(f, res, &fo), 0);
	CHECK_EQ(mc_forest_update(fo, db, NULL), 0);
	CHECK_EQ(mc_forest_stats(fo)->trees, groups);
	/* 3 groups per spine, and no spine with more than 3 roots */
	CHECK(spines > 1);
	CHECK_EQ(mc_forest_stats(fo)->max_roots, 3);
	fprintf(stderr, "  %s: %u groups over %u spines, at most %u rooted at one\n", path,
		groups, spines, mc_forest_stats(fo)->max_roots);
out:
	mc_forest_free(fo);
	mc_db_free(db);
	route_result_free(res);
	fabric_free(f);
	ff_free(&ff);
}

int main(int argc, char **argv)
{
	RUN(test_ipoib_join);
	RUN(test_bad_requests);
	RUN(test_leave_bits);
	RUN(test_mlid_cycles);
	RUN(test_remember);
	RUN(test_purge);
	RUN(test_purge_pkey);
	for (int i = 1; i < argc; i++) {
		if (!strncmp(argv[i], "spread:", 7)) {
			test_spread(argv[i] + 7);
			continue;
		}
		forest_fabric(argv[i], "dfree", 1);
		forest_fabric(argv[i], "dfree", 8);
		forest_fabric(argv[i], "minhop", 1);
	}
	return unit_report();
}
