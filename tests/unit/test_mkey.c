// SPDX-License-Identifier: MIT
/*
 * M_Key (issue 12): the per-port key derivation against fixed vectors
 * (computed by tests/sim/rogue's own SipHash, which shares no code with
 * smd), the route -> GUID map, fabric_walk over a discovered model, and
 * which key smd's SMPs carry (smd/mkey.h): the model's port for a Get, this
 * sweep's NodeInfo answer for a Set, nothing for a route nobody knows.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/wire.h"
#include "smd/mkey.h"
#include "smd/smd.h"
#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/fabric.h"
#include "topo/lid.h"
#include "topo/pathmap.h"

static const char *const net =
	"caguid=0x0002c90300000004\n"
	"Hca 1 \"smhost\"\n"
	"[1] \"sw-01\"[1]\n"
	"switchguid=0x0011750000000001\n"
	"Switch 8 \"sw-01\"\n"
	"[1] \"smhost\"[1]\n"
	"[2] \"sw-02\"[3]\n"
	"switchguid=0x0011750000000002\n"
	"Switch 8 \"sw-02\"\n"
	"[1] \"host-0001\"[1]\n"
	"[3] \"sw-01\"[2]\n"
	"caguid=0x0002c90300000008\n"
	"Hca 1 \"host-0001\"\n"
	"[1] \"sw-02\"[1]\n";

static void test_derive(void)
{
	const uint64_t s = UINT64_C(0x1234567890abcdef);

	CHECK_EQ(mkey_derive(s, UINT64_C(0x0002c90300000005)), UINT64_C(0x9e58eb0aaf44fafe));
	CHECK_EQ(mkey_derive(s, UINT64_C(0x0011750000000001)), UINT64_C(0x9091d123ff4c8be3));
	CHECK_EQ(mkey_derive(s, 0), UINT64_C(0x38f35e37216c6ba4));
	CHECK_EQ(mkey_derive(s, UINT64_MAX), UINT64_C(0x44894583f7ed7f41));
	/* Another secret, even one bit away, gives unrelated keys */
	CHECK_EQ(mkey_derive(1, UINT64_C(0x0002c90300000005)), UINT64_C(0xc5c82760a5d74945));
	CHECK_EQ(mkey_derive(s - 1, UINT64_C(0x0002c90300000005)), UINT64_C(0x7531308a3024c33c));
	/* Never 0 (0 means no protection): over many GUIDs, none is */
	for (uint64_t g = 1; g < 100000; g++)
		if (!mkey_derive(s, g)) {
			CHECK(0);
			break;
		}
}

static void test_path_map(void)
{
	struct path_map *m;
	uint8_t a[SMP_MAX_HOPS + 2] = { 0, 1, 2, 3 }, b[SMP_MAX_HOPS + 2] = { 0, 1, 2, 4 };

	CHECK_EQ(path_map_new(&m), 0);
	CHECK_EQ(path_map_get(m, a, 3), 0);
	CHECK_EQ(path_map_put(m, a, 3, 0x11), 0);
	CHECK_EQ(path_map_put(m, b, 3, 0x22), 0);
	/* A route and its prefix, a route and one that differs in a hop: apart */
	CHECK_EQ(path_map_put(m, a, 2, 0x33), 0);
	CHECK_EQ(path_map_get(m, a, 3), 0x11);
	CHECK_EQ(path_map_get(m, b, 3), 0x22);
	CHECK_EQ(path_map_get(m, a, 2), 0x33);
	CHECK_EQ(path_map_get(m, a, 1), 0);
	CHECK_EQ(path_map_count(m), 3);
	/* A later answer replaces the earlier */
	CHECK_EQ(path_map_put(m, a, 3, 0x44), 0);
	CHECK_EQ(path_map_get(m, a, 3), 0x44);
	CHECK_EQ(path_map_count(m), 3);
	/* Past 63 hops, or GUID 0: refused; a lookup past 63 hops finds nothing */
	CHECK_EQ(path_map_put(m, a, SMP_MAX_HOPS + 1, 0x55), -EINVAL);
	CHECK_EQ(path_map_put(m, a, 1, 0), -EINVAL);
	CHECK_EQ(path_map_get(m, a, SMP_MAX_HOPS + 1), 0);
	/* Growth keeps every entry: 20000 routes of 4 hops */
	for (unsigned int i = 0; i < 20000; i++) {
		uint8_t p[6] = { 0, (uint8_t)(i % 36 + 1), (uint8_t)(i / 36 % 36 + 1),
				 (uint8_t)(i / 1296 + 1), 5 };

		if (path_map_put(m, p, 4, 0x1000 + i) < 0) {
			CHECK(0);
			break;
		}
	}
	CHECK_EQ(path_map_count(m), 20003);
	for (unsigned int i = 0; i < 20000; i += 997) {
		uint8_t p[6] = { 0, (uint8_t)(i % 36 + 1), (uint8_t)(i / 36 % 36 + 1),
				 (uint8_t)(i / 1296 + 1), 5 };

		CHECK_EQ(path_map_get(m, p, 4), 0x1000 + i);
	}
	path_map_clear(m);
	CHECK_EQ(path_map_count(m), 0);
	CHECK_EQ(path_map_get(m, b, 3), 0);
	path_map_free(m);
}

static struct fakefab ff;
static struct fabric *f;
static struct fab_port *own;

static const struct fab_port *walk(unsigned int hops, uint8_t p1, uint8_t p2, uint8_t p3,
				   uint8_t p4)
{
	uint8_t path[SMP_MAX_HOPS + 1] = { 0, p1, p2, p3, p4 };

	return fabric_walk(own, path, hops);
}

static const char *name_of(const struct fab_port *p)
{
	return p ? p->node->desc : "(none)";
}

static void test_walk(void)
{
	const struct fab_port *p;

	CHECK(walk(0, 0, 0, 0, 0) == own);
	p = walk(1, 1, 0, 0, 0);
	CHECK(p && p->num == 0 && !strcmp(name_of(p), "sw-01"));
	p = walk(2, 1, 2, 0, 0);
	CHECK(p && p->num == 0 && !strcmp(name_of(p), "sw-02"));
	p = walk(3, 1, 2, 1, 0);
	CHECK(p && p->num == 1 && !strcmp(name_of(p), "host-0001"));
	/* Exit port 0 of a switch is the switch itself */
	p = walk(2, 1, 0, 0, 0);
	CHECK(p && p->num == 0 && !strcmp(name_of(p), "sw-01"));
	/* Back over the cable it came by: sw-01 again */
	p = walk(3, 1, 2, 3, 0);
	CHECK(p && !strcmp(name_of(p), "sw-01"));
	/* No cable, no such port, through a CA: nowhere */
	CHECK(!walk(2, 1, 5, 0, 0));
	CHECK(!walk(2, 1, 200, 0, 0));
	CHECK(!walk(4, 1, 2, 1, 1));
	CHECK(!walk(1, 2, 0, 0, 0));
	CHECK(!fabric_walk(NULL, (uint8_t[SMP_MAX_HOPS + 1]){ 0 }, 0));
}

static uint64_t key_of(struct smd *smd, uint8_t method, unsigned int hops, uint8_t p1,
		       uint8_t p2, uint8_t p3)
{
	struct dr_path path = { .hops = (uint8_t)hops, .port = { 0, p1, p2, p3 } };
	struct smp req;

	smp_init_dr(&req, method, SMP_ATTR_NODE_INFO, 0, &path);
	return mkey_for_smp(smd, &req, 0);
}

static void test_keys(void)
{
	const uint64_t s = UINT64_C(0x5ec12e7000c0ffee);
	static struct smd smd;
	const struct fab_node *sw2 = fabric_find(f, UINT64_C(0x0011750000000002));
	const struct fab_node *h1 = fabric_find(f, UINT64_C(0x0002c90300000008));
	struct node_info ni = { 0 };
	struct dr_path path = { .hops = 2, .port = { 0, 1, 2 } };
	struct port_info pi = { 0 };
	uint64_t key;

	CHECK(sw2 && h1);
	if (!sw2 || !h1)
		return;
	/* Without m_key every SMP carries 0, and every Set writes 0 */
	CHECK_EQ(mkey_new(&smd), 0);
	smd.fabric = f;
	mkey_model(&smd, own);
	CHECK_EQ(key_of(&smd, MAD_METHOD_GET, 2, 1, 2, 0), 0);
	CHECK_EQ(key_of(&smd, MAD_METHOD_SET, 2, 1, 2, 0), 0);
	CHECK_EQ(mkey_for_lid(&smd, h1->ports[1].lid, &key), 0);
	CHECK_EQ(key, 0);
	pi.mkey = 77;
	mkey_fill(&smd, &h1->ports[1], &pi);
	CHECK_EQ(pi.mkey, 0);
	mkey_free(&smd);

	smd.cfg.m_key = s;
	smd.cfg.m_key_protect_bits = 2;
	smd.cfg.m_key_lease_period = 60;
	CHECK_EQ(mkey_new(&smd), 0);
	smd.fabric = f;
	mkey_model(&smd, own);
	/* A Get: the model's port at the end of the route */
	CHECK_EQ(key_of(&smd, MAD_METHOD_GET, 2, 1, 2, 0), mkey_derive(s, sw2->ni.port_guid));
	CHECK_EQ(key_of(&smd, MAD_METHOD_GET, 3, 1, 2, 1), mkey_derive(s, h1->ports[1].guid));
	CHECK_EQ(key_of(&smd, MAD_METHOD_GET, 0, 0, 0, 0), mkey_derive(s, own->guid));
	/* A route to nowhere known: 0, which a new port (M_Key 0) takes */
	CHECK_EQ(key_of(&smd, MAD_METHOD_GET, 2, 1, 6, 0), 0);
	/* A Set: this sweep's NodeInfo answer on that route names the port */
	mkey_sweep_start(&smd);
	ni.port_guid = UINT64_C(0x0011750000000099);
	mkey_node_info(&smd, &path, &ni);
	CHECK_EQ(key_of(&smd, MAD_METHOD_SET, 2, 1, 2, 0),
		 mkey_derive(s, UINT64_C(0x0011750000000099)));
	/* ... but a Get still shows only the model's port its key */
	CHECK_EQ(key_of(&smd, MAD_METHOD_GET, 2, 1, 2, 0), mkey_derive(s, sw2->ni.port_guid));
	/* A route earlier sweeps answered on is remembered for Gets */
	path = (struct dr_path){ .hops = 2, .port = { 0, 1, 6 } };
	ni.port_guid = UINT64_C(0x0011750000000077);
	mkey_node_info(&smd, &path, &ni);
	mkey_sweep_start(&smd);
	CHECK_EQ(key_of(&smd, MAD_METHOD_GET, 2, 1, 6, 0),
		 mkey_derive(s, UINT64_C(0x0011750000000077)));
	/* TrapRepress by LID: the key of the port holding it; unknown LIDs: not sent */
	CHECK_EQ(mkey_for_lid(&smd, h1->ports[1].lid, &key), 0);
	CHECK_EQ(key, mkey_derive(s, h1->ports[1].guid));
	CHECK_EQ(mkey_for_lid(&smd, 999, &key), -ENOENT);
	/* Every port of a switch is written with the switch's key */
	pi = (struct port_info){ 0 };
	mkey_fill(&smd, &sw2->ports[3], &pi);
	CHECK_EQ(pi.mkey, mkey_derive(s, sw2->ni.port_guid));
	CHECK_EQ(pi.mkey_protect_bits, 2);
	CHECK_EQ(pi.mkey_lease_period, 60);
	mkey_free(&smd);
	CHECK(!smd.mkey);
}

int main(void)
{
	struct disc_stats ds;
	struct lid_stats ls;
	const struct fab_node *sm;

	if (ff_parse(&ff, net) < 0 || fabric_new(&f) < 0 || ff_discover(&ff, f, &ds) < 0 ||
	    lid_assign(f, 0, NULL, NULL, &ls) < 0)
		return 1;
	sm = fabric_find(f, UINT64_C(0x0002c90300000004));
	own = sm ? (struct fab_port *)&sm->ports[1] : NULL;
	RUN(test_derive);
	RUN(test_path_map);
	if (own) {
		RUN(test_walk);
		RUN(test_keys);
	} else {
		CHECK(own);
	}
	fabric_free(f);
	ff_free(&ff);
	return unit_report();
}
