// SPDX-License-Identifier: MIT
/*
 * Hostile and buggy answers on the fake fabric: nodes that lie in their
 * discovery answers (tests/unit/fakefab.h, ff_tamper_fn). Whatever they say,
 * discovery keeps a model that is consistent, every routing engine routes
 * what is left without crashing, and the routes are judged by walking the
 * TRUE cabling of the fake fabric, not smd's model.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/lid.h"
#include "topo/route.h"

/* ---- judging routes over the true cabling ---- */

static struct fab_node *model_of(const struct fabric *f, const struct fakefab *ff, int idx)
{
	return fabric_find(f, ff->nodes[idx].guid);
}

/* Whether fake (idx, port) owns lid according to the model */
static bool owns(const struct fabric *f, const struct fakefab *ff, int idx, int port,
		 uint16_t lid)
{
	struct fab_node *n = model_of(f, ff, idx);
	struct fab_port *p = n ? fabric_port(n, (unsigned int)port) : NULL;

	return p && p->lid && lid >= p->lid && lid < p->lid + (1u << p->lmc);
}

/* From fake switch idx toward lid along the model's LFTs: 0 arrived, -1 dead end, -2 loop */
static int walk(const struct fabric *f, const struct fakefab *ff, int idx, uint16_t lid)
{
	for (int steps = 0; steps <= ff->n; steps++) {
		struct fab_node *n = model_of(f, ff, idx);
		const struct ff_node *fn = &ff->nodes[idx];
		uint8_t out;

		if (!n || n->type != NODE_TYPE_SWITCH || lid >= n->lft_len)
			return -1;
		out = n->lft[lid];
		if (out == 0)
			return owns(f, ff, idx, 0, lid) ? 0 : -1;
		if (out > fn->nports || fn->peer[out] < 0)
			return -1;
		if (ff->nodes[fn->peer[out]].type != NODE_TYPE_SWITCH)
			return owns(f, ff, fn->peer[out], fn->peer_port[out], lid) ? 0 : -1;
		idx = fn->peer[out];
	}
	return -2;
}

/* The model's components: comp[sw_idx], over the cables the model holds */
static uint32_t *components(const struct fabric *f)
{
	uint32_t *comp = malloc((f->nswitches + 1) * sizeof(*comp));
	uint32_t *queue = malloc((f->nswitches + 1) * sizeof(*queue));

	for (size_t s = 0; comp && s < f->nswitches; s++)
		comp[s] = UINT32_MAX;
	for (size_t s = 0; comp && queue && s < f->nswitches; s++) {
		size_t head = 0, tail = 0;

		if (comp[s] != UINT32_MAX)
			continue;
		comp[s] = (uint32_t)s;
		queue[tail++] = (uint32_t)s;
		while (head < tail) {
			const struct fab_node *sw = f->switches[queue[head++]];

			for (unsigned int p = 1; p <= sw->num_ports; p++) {
				const struct fab_port *pp = &sw->ports[p];
				uint32_t t;

				if (!fabric_port_linked(pp) ||
				    pp->peer->node->type != NODE_TYPE_SWITCH)
					continue;
				t = pp->peer->node->sw_idx;
				if (comp[t] == UINT32_MAX) {
					comp[t] = (uint32_t)s;
					queue[tail++] = t;
				}
			}
		}
	}
	free(queue);
	return comp;
}

/*
 * Every switch of the model reaches every LID of its own part of the model
 * over the true cabling; returns the pairs that do not (*pairs: how many
 * were walked). Fake nodes the model does not hold are never walked from.
 */
static unsigned int bad_routes(const struct fabric *f, const struct fakefab *ff,
			       unsigned int *pairs)
{
	uint32_t *comp = components(f);
	unsigned int bad = 0;

	*pairs = 0;
	for (uint32_t lid = 1; comp && lid <= f->max_lid; lid++) {
		struct fab_node *dsw;
		uint8_t dport;

		if (!f->by_lid[lid] || !(dsw = route_attach_switch(f->by_lid[lid], &dport)))
			continue;
		for (int i = 0; i < ff->n; i++) {
			struct fab_node *m = model_of(f, ff, i);

			if (ff->nodes[i].type != NODE_TYPE_SWITCH || !m ||
			    comp[m->sw_idx] != comp[dsw->sw_idx])
				continue;
			(*pairs)++;
			if (walk(f, ff, i, (uint16_t)lid) < 0 && bad++ < 5)
				fprintf(stderr, "  %s -> LID %u: no route\n", ff->nodes[i].name,
					lid);
		}
	}
	free(comp);
	return comp ? bad : 1;
}

/*
 * LFT entries of the model's switches that send a LID out of a port whose
 * true peer is fake node idx (a place that must be left out)
 */
static unsigned int routes_toward(const struct fabric *f, const struct fakefab *ff, int idx)
{
	unsigned int n = 0;

	for (int i = 0; i < ff->n; i++) {
		const struct ff_node *fn = &ff->nodes[i];
		struct fab_node *m = model_of(f, ff, i);

		if (fn->type != NODE_TYPE_SWITCH || !m || m->type != NODE_TYPE_SWITCH)
			continue;
		for (uint32_t lid = 1; lid < m->lft_len; lid++) {
			uint8_t out = m->lft[lid];

			if (out >= 1 && out <= fn->nports && fn->peer[out] == idx)
				n++;
		}
	}
	return n;
}

/*
 * Every engine on f: no crash, and each either routes every LID over the
 * true cabling or fails with an error. Returns how many engines routed.
 */
static unsigned int all_engines(struct fabric *f, const struct fakefab *ff)
{
	const struct route_engine *e;
	unsigned int ok = 0;

	for (unsigned int i = 0; (e = route_engine_at(i)); i++) {
		struct route_result *res = NULL;
		struct route_stats st;
		struct route_check chk;
		unsigned int pairs = 0;
		int r = route_compute(e, f, NULL, &st, &res);

		if (r < 0) {
			/* layered may need more VLs than it has: an error, not a crash */
			CHECK(r == -ENOSPC || r == -EPROTO);
			continue;
		}
		CHECK_EQ(route_check(f, res, &chk), 0);
		CHECK_EQ(chk.unreachable + chk.loops, 0);
		CHECK_EQ(bad_routes(f, ff, &pairs), 0);
		CHECK(pairs > 0);
		route_result_free(res);
		ok++;
	}
	return ok;
}

static struct fabric *discover(const struct fakefab *ff, struct disc_stats *ds)
{
	struct lid_stats ls;
	struct fabric *f;

	if (fabric_new(&f) < 0)
		return NULL;
	if (ff_discover(ff, f, ds) < 0 || lid_assign(f, 0, NULL, NULL, &ls) < 0)
		return fabric_free(f);
	return f;
}

/* ---- the liars ---- */

struct liar {
	int node;			/* fake node index that lies */
	uint8_t local_port;		/* NodeInfo LocalPortNum it gives */
	uint8_t num_ports;		/* NodeInfo NumPorts it gives (0: the truth) */
};

static int lie_local_port(void *ctx, const struct disc_probe *p, int idx, uint8_t in,
			  struct ff_answers *a)
{
	const struct liar *l = ctx;

	(void)in;
	if (idx != l->node || p->kind != DISC_NODE_INFO)
		return 0;
	a->ni->local_port = l->local_port;
	if (l->num_ports)
		a->ni->num_ports = l->num_ports;
	return 0;
}

/*
 * The crash of issue 12: switch b is cabled to a on its port 5 but answers
 * NodeInfo with LocalPortNum 0 and NumPorts 4, so its own side of the cable
 * is never seen. The model used to hold a cable from a's port 2 to b's port
 * 0, a one-way arc in the switch graph, and up*\/down* wrote through an
 * uninitialised index. Now b's answer is rejected: b and the host behind it
 * are left out, the rest comes up and every engine routes it.
 */
static void test_local_port_zero(void)
{
	static const char *net =
		"Hca 1 \"sm\"\n[1] \"a\"[1]\n"
		"Switch 8 \"a\"\n[1] \"sm\"[1]\n[2] \"b\"[5]\n[3] \"h1\"[1]\n"
		"Switch 8 \"b\"\n[5] \"a\"[2]\n[1] \"h2\"[1]\n"
		"Hca 1 \"h1\"\n[1] \"a\"[3]\n"
		"Hca 1 \"h2\"\n[1] \"b\"[1]\n";
	struct fakefab ff;
	struct disc_stats ds;
	struct fabric *f;
	struct liar l;

	CHECK_EQ(ff_parse(&ff, net), 0);
	l = (struct liar){ .node = ff_find(&ff, "b"), .local_port = 0, .num_ports = 4 };
	ff.tamper = lie_local_port;
	ff.tamper_ctx = &l;
	f = discover(&ff, &ds);
	CHECK(f != NULL);
	if (!f)
		goto out;
	CHECK(ds.rejected >= 1);
	CHECK(model_of(f, &ff, l.node) == NULL);
	CHECK(model_of(f, &ff, ff_find(&ff, "h2")) == NULL);
	CHECK(model_of(f, &ff, ff_find(&ff, "h1")) != NULL);
	CHECK_EQ(f->nswitches, 1);
	CHECK_EQ(all_engines(f, &ff), 4);
	fabric_free(f);
out:
	ff_free(&ff);
}

/*
 * Whatever the model holds, no engine crashes: a cable poked in by hand
 * from a's port 2 to b's port 0, one way only, is no cable at all to the
 * engines; each routes the two halves it sees and the verifier agrees.
 */
static void test_oneway_model(void)
{
	static const char *net =
		"Hca 1 \"sm\"\n[1] \"a\"[1]\n"
		"Switch 8 \"a\"\n[1] \"sm\"[1]\n[2] \"b\"[5]\n[3] \"h1\"[1]\n"
		"Switch 8 \"b\"\n[5] \"a\"[2]\n[1] \"h2\"[1]\n"
		"Hca 1 \"h1\"\n[1] \"a\"[3]\n"
		"Hca 1 \"h2\"\n[1] \"b\"[1]\n";
	const struct route_engine *e;
	struct fakefab ff;
	struct disc_stats ds;
	struct fabric *f;
	struct fab_node *a, *b;

	CHECK_EQ(ff_parse(&ff, net), 0);
	f = discover(&ff, &ds);
	CHECK(f != NULL);
	if (!f)
		goto out;
	a = model_of(f, &ff, ff_find(&ff, "a"));
	b = model_of(f, &ff, ff_find(&ff, "b"));
	CHECK(a && b && a->ports[2].peer == &b->ports[5]);
	if (!a || !b)
		goto free;
	/* The API refuses a cable to a port 0 */
	CHECK_EQ(fabric_link(f, &a->ports[2], &b->ports[0]), -EINVAL);
	CHECK(a->ports[2].peer == &b->ports[5]);
	a->ports[2].peer = &b->ports[0];
	CHECK(!fabric_port_linked(&a->ports[2]));
	CHECK(!fabric_port_linked(&b->ports[5]));
	for (unsigned int i = 0; (e = route_engine_at(i)); i++) {
		struct route_result *res = NULL;
		struct route_stats st;
		struct route_check chk;
		int r = route_compute(e, f, NULL, &st, &res);

		CHECK(r == 0 || r == -ENOSPC);
		if (r < 0)
			continue;
		CHECK_EQ(route_check(f, res, &chk), 0);
		CHECK_EQ(chk.unreachable + chk.loops, 0);
		CHECK(chk.disconnected > 0);
		route_result_free(res);
	}
free:
	fabric_free(f);
out:
	ff_free(&ff);
}

/* ---- duplicate GUIDs ---- */

/* The model's LIDs from a first fabric, to bring a changed one up with them */
static int lid_of(void *ctx, uint64_t guid, uint16_t *lid)
{
	const struct fabric *f = ctx;

	for (uint32_t l = 1; l <= f->max_lid; l++)
		if (f->by_lid[l] && f->by_lid[l]->guid == guid) {
			*lid = (uint16_t)l;
			return 0;
		}
	return -ENOENT;
}

/* Cut (or put back) the cable at fake node idx port p */
static void ff_cut(struct fakefab *ff, int idx, int p, int *peer, int *pport)
{
	*peer = ff->nodes[idx].peer[p];
	*pport = ff->nodes[idx].peer_port[p];
	ff->nodes[*peer].peer[*pport] = -1;
	ff->nodes[idx].peer[p] = -1;
}

static void ff_mend(struct fakefab *ff, int idx, int p, int peer, int pport)
{
	ff->nodes[idx].peer[p] = peer;
	ff->nodes[idx].peer_port[p] = (uint8_t)pport;
	ff->nodes[peer].peer[pport] = idx;
	ff->nodes[peer].peer_port[pport] = (uint8_t)p;
}

static const char *dup_ca_net =
	"Hca 1 \"sm\"\n[1] \"s1\"[1]\n"
	"Switch 8 \"s1\"\n[1] \"sm\"[1]\n[2] \"s2\"[1]\n[3] \"h1\"[1]\n[4] \"victim\"[1]\n"
	"Switch 8 \"s2\"\n[1] \"s1\"[2]\n[2] \"h2\"[1]\n[3] \"evil\"[1]\n"
	"caguid=0x7777000000000000\nHca 1 \"victim\"\n[1] \"s1\"[4]\n"
	"caguid=0x7777000000000000\nHca 1 \"evil\"\n[1] \"s2\"[3]\n"
	"Hca 1 \"h1\"\n[1] \"s1\"[3]\n"
	"Hca 1 \"h2\"\n[1] \"s2\"[2]\n";

/*
 * A host that repeats another's GUID (and so its port GUID): before this,
 * the two were merged and the victim's LID routed to the impostor's cable.
 * Now both places are left out: no LID, no cable, no LFT entry toward
 * either (not even the victim's old LID), and the rest comes up.
 */
static void test_dup_ca(void)
{
	const struct route_engine *e;
	struct fakefab ff;
	struct disc_stats ds;
	struct lid_stats ls;
	struct fabric *f0, *f;
	int victim, evil, peer, pport;
	uint16_t old_lid;

	CHECK_EQ(ff_parse(&ff, dup_ca_net), 0);
	victim = ff_find(&ff, "victim");
	evil = ff_find(&ff, "evil");
	/* First without the impostor: the victim gets a LID */
	ff_cut(&ff, evil, 1, &peer, &pport);
	f0 = discover(&ff, &ds);
	CHECK(f0 != NULL);
	if (!f0)
		goto out;
	CHECK_EQ(ds.duplicates, 0);
	old_lid = model_of(f0, &ff, victim)->ports[1].lid;
	CHECK(old_lid != 0);
	/* Then the impostor is cabled in */
	ff_mend(&ff, evil, 1, peer, pport);
	CHECK_EQ(fabric_new(&f), 0);
	CHECK_EQ(ff_discover(&ff, f, &ds), 0);
	CHECK_EQ(lid_assign(f, 0, lid_of, f0, &ls), 0);
	CHECK_EQ(ds.duplicates, 1);
	CHECK_EQ(ds.left_out, 1);
	CHECK(fabric_find(f, ff.nodes[victim].guid) == NULL);
	CHECK(fabric_port_by_lid(f, old_lid) == NULL);
	CHECK(model_of(f, &ff, ff_find(&ff, "h1")) != NULL);
	CHECK(model_of(f, &ff, ff_find(&ff, "h2")) != NULL);
	/* The switch ports facing both places hold no cable: never armed */
	CHECK(!fabric_port_linked(&model_of(f, &ff, ff_find(&ff, "s1"))->ports[4]));
	CHECK(!fabric_port_linked(&model_of(f, &ff, ff_find(&ff, "s2"))->ports[3]));
	for (unsigned int i = 0; (e = route_engine_at(i)); i++) {
		struct route_stats st;
		struct route_result *res = NULL;
		unsigned int pairs;

		if (route_compute(e, f, NULL, &st, &res) < 0)
			continue;
		CHECK_EQ(routes_toward(f, &ff, victim), 0);
		CHECK_EQ(routes_toward(f, &ff, evil), 0);
		for (size_t s = 0; s < f->nswitches; s++)
			CHECK(old_lid >= f->switches[s]->lft_len ||
			      f->switches[s]->lft[old_lid] == LFT_PORT_NONE);
		CHECK_EQ(bad_routes(f, &ff, &pairs), 0);
		CHECK(pairs >= 6);
		route_result_free(res);
	}
	fabric_free(f);
	/* The impostor gone again, the victim comes back with its LID */
	ff_cut(&ff, evil, 1, &peer, &pport);
	CHECK_EQ(fabric_new(&f), 0);
	CHECK_EQ(ff_discover(&ff, f, &ds), 0);
	CHECK_EQ(lid_assign(f, 0, lid_of, f0, &ls), 0);
	CHECK_EQ(ds.duplicates, 0);
	CHECK(fabric_find(f, ff.nodes[victim].guid) != NULL);
	CHECK(fabric_port_by_lid(f, old_lid) ==
	      &fabric_find(f, ff.nodes[victim].guid)->ports[1]);
	fabric_free(f);
	fabric_free(f0);
out:
	ff_free(&ff);
}

/*
 * Two switches with one GUID. x2 is reached on port 5, which x1 (reached
 * first) does not use, or uses for another host: asked through x1's own
 * route, port 5 leads elsewhere, so the GUID is at two places. Both switches
 * are left out, with their cables; the hosts behind them are cut off, the
 * rest is routed.
 */
static void dup_switch_case(const char *name, bool x1_port5_used)
{
	char net[1024];
	struct fakefab ff;
	struct disc_stats ds;
	struct fabric *f;
	int x1, x2;

	snprintf(net, sizeof(net),
		 "Hca 1 \"sm\"\n[1] \"s1\"[1]\n"
		 "Switch 8 \"s1\"\n[1] \"sm\"[1]\n[2] \"x1\"[1]\n[3] \"s2\"[1]\n[4] \"h0\"[1]\n"
		 "switchguid=0x9999000000000000\nSwitch 8 \"x1\"\n[1] \"s1\"[2]\n[2] \"h1\"[1]\n%s"
		 "Switch 8 \"s2\"\n[1] \"s1\"[3]\n[2] \"x2\"[5]\n[3] \"h3\"[1]\n"
		 "switchguid=0x9999000000000000\nSwitch 8 \"x2\"\n[5] \"s2\"[2]\n[1] \"h2\"[1]\n"
		 "Hca 1 \"h0\"\n[1] \"s1\"[4]\n"
		 "Hca 1 \"h1\"\n[1] \"x1\"[2]\n"
		 "Hca 1 \"h2\"\n[1] \"x2\"[1]\n"
		 "Hca 1 \"h3\"\n[1] \"s2\"[3]\n%s",
		 x1_port5_used ? "[5] \"h4\"[1]\n" : "",
		 x1_port5_used ? "Hca 1 \"h4\"\n[1] \"x1\"[5]\n" : "");
	CHECK_EQ(ff_parse(&ff, net), 0);
	x1 = ff_find(&ff, "x1");
	x2 = ff_find(&ff, "x2");
	f = discover(&ff, &ds);
	CHECK(f != NULL);
	if (!f)
		goto out;
	fprintf(stderr, "  %s: %u duplicates, %u left out, %u rejected\n", name, ds.duplicates,
		ds.left_out, ds.rejected);
	CHECK_EQ(ds.duplicates, 1);
	CHECK_EQ(ds.left_out, 1);
	CHECK(fabric_find(f, ff.nodes[x1].guid) == NULL);
	CHECK(model_of(f, &ff, ff_find(&ff, "h2")) == NULL);
	CHECK(model_of(f, &ff, ff_find(&ff, "h3")) != NULL);
	CHECK_EQ(f->nswitches, 2);
	CHECK(all_engines(f, &ff) >= 3);
	CHECK_EQ(routes_toward(f, &ff, x1), 0);
	CHECK_EQ(routes_toward(f, &ff, x2), 0);
	fabric_free(f);
out:
	ff_free(&ff);
}

static void test_dup_switch(void)
{
	dup_switch_case("x1 port 5 down", false);
	dup_switch_case("x1 port 5 to another host", true);
}

/* Rewrite the port GUID one node gives to another's */
struct port_guid_thief {
	int node;
	uint64_t guid;
};

static int steal_port_guid(void *ctx, const struct disc_probe *p, int idx, uint8_t in,
			   struct ff_answers *a)
{
	const struct port_guid_thief *t = ctx;

	(void)in;
	if (idx == t->node && (p->kind == DISC_NODE_INFO || p->kind == DISC_VERIFY))
		a->ni->port_guid = t->guid;
	return 0;
}

/* A host with a GUID of its own but another's port GUID: both hosts out */
static void test_dup_port_guid(void)
{
	struct port_guid_thief t;
	struct fakefab ff;
	struct disc_stats ds;
	struct fabric *f;
	int victim, evil;

	CHECK_EQ(ff_parse(&ff, dup_ca_net), 0);
	victim = ff_find(&ff, "victim");
	evil = ff_find(&ff, "evil");
	ff.nodes[evil].guid = 0x6666000000000000ull;
	t = (struct port_guid_thief){ evil, ff.nodes[victim].guid + 1 };
	ff.tamper = steal_port_guid;
	ff.tamper_ctx = &t;
	f = discover(&ff, &ds);
	CHECK(f != NULL);
	if (!f)
		goto out;
	CHECK_EQ(ds.duplicates, 1);
	CHECK_EQ(ds.left_out, 2);
	CHECK(model_of(f, &ff, victim) == NULL);
	CHECK(model_of(f, &ff, evil) == NULL);
	CHECK_EQ(all_engines(f, &ff), 4);
	CHECK_EQ(routes_toward(f, &ff, victim) + routes_toward(f, &ff, evil), 0);
	fabric_free(f);
out:
	ff_free(&ff);
}

/* An impostor of the SM's own HCA: the SM is certain of itself, the copy goes */
static void test_dup_sm_node(void)
{
	struct fakefab ff;
	struct disc_stats ds;
	struct fabric *f;
	int evil;

	CHECK_EQ(ff_parse(&ff, dup_ca_net), 0);
	evil = ff_find(&ff, "evil");
	ff.nodes[evil].guid = ff.nodes[0].guid;
	f = discover(&ff, &ds);
	CHECK(f != NULL);
	if (!f)
		goto out;
	CHECK_EQ(ds.duplicates, 1);
	CHECK_EQ(ds.left_out, 0);
	CHECK(fabric_find(f, ff.nodes[0].guid) != NULL);
	CHECK(!fabric_port_linked(&model_of(f, &ff, ff_find(&ff, "s2"))->ports[3]));
	CHECK_EQ(all_engines(f, &ff), 4);
	CHECK_EQ(routes_toward(f, &ff, evil), 0);
	fabric_free(f);
out:
	ff_free(&ff);
}

/* ---- answers that break the rules ---- */

enum lie {
	LIE_NODE_TYPE,			/* NodeType 7 */
	LIE_NUM_PORTS_0,
	LIE_NUM_PORTS_255,
	LIE_LOCAL_BEYOND,		/* LocalPortNum > NumPorts */
	LIE_NODE_GUID_0,
	LIE_LOCAL_OTHER,		/* a switch names a wrong (cabled) port it entered by */
	LIE_PORT_STATE,			/* PortState 9 */
	LIE_LFT_CAP,			/* LinearFDBCap 0xffff */
	LIE_MAX
};

static const char *const lie_names[] = {
	"NodeType 7", "NumPorts 0", "NumPorts 255", "LocalPortNum > NumPorts", "NodeGUID 0",
	"LocalPortNum of another cabled port", "PortState 9", "LinearFDBCap 0xffff",
};

struct liar2 {
	int node;
	enum lie lie;
};

static int tell_lie(void *ctx, const struct disc_probe *p, int idx, uint8_t in,
		    struct ff_answers *a)
{
	const struct liar2 *l = ctx;
	bool ni = p->kind == DISC_NODE_INFO || p->kind == DISC_VERIFY;

	if (idx != l->node)
		return 0;
	switch (l->lie) {
	case LIE_NODE_TYPE: if (ni) a->ni->node_type = 7; break;
	case LIE_NUM_PORTS_0: if (ni) a->ni->num_ports = 0; break;
	case LIE_NUM_PORTS_255: if (ni) a->ni->num_ports = 255; break;
	case LIE_LOCAL_BEYOND: if (ni) a->ni->local_port = a->ni->num_ports + 1; break;
	case LIE_NODE_GUID_0: if (ni) a->ni->node_guid = 0; break;
	case LIE_LOCAL_OTHER: if (ni && in == 5) a->ni->local_port = 3; break;
	case LIE_PORT_STATE: if (p->kind == DISC_PORT_INFO) a->pi->port_state = 9; break;
	case LIE_LFT_CAP: if (p->kind == DISC_SWITCH_INFO) a->si->lft_cap = 0xffff; break;
	case LIE_MAX: break;
	}
	return 0;
}

/*
 * Switch b lies in one way or another: its answers are rejected (and
 * counted), nobody honest is taken for a copy, the model holds only cables
 * both ends agree on, and every engine routes what is left.
 */
static void test_liars(void)
{
	static const char *net =
		"Hca 1 \"sm\"\n[1] \"a\"[1]\n"
		"Switch 8 \"a\"\n[1] \"sm\"[1]\n[2] \"b\"[5]\n[3] \"h1\"[1]\n[4] \"c\"[1]\n"
		"Switch 8 \"b\"\n[5] \"a\"[2]\n[1] \"h2\"[1]\n[3] \"c\"[2]\n"
		"Switch 8 \"c\"\n[1] \"a\"[4]\n[2] \"b\"[3]\n[3] \"h3\"[1]\n"
		"Hca 1 \"h1\"\n[1] \"a\"[3]\n"
		"Hca 1 \"h2\"\n[1] \"b\"[1]\n"
		"Hca 1 \"h3\"\n[1] \"c\"[3]\n";
	struct fakefab ff;

	CHECK_EQ(ff_parse(&ff, net), 0);
	for (int lie = 0; lie < LIE_MAX; lie++) {
		struct liar2 l = { ff_find(&ff, "b"), (enum lie)lie };
		struct disc_stats ds;
		struct fabric *f;
		struct fab_node *b;

		ff.tamper = tell_lie;
		ff.tamper_ctx = &l;
		f = discover(&ff, &ds);
		CHECK(f != NULL);
		if (!f)
			continue;
		fprintf(stderr, "  b says %s: %u answers rejected, %zu nodes\n", lie_names[lie],
			ds.rejected, f->nnodes);
		CHECK(ds.rejected >= 1);
		CHECK_EQ(ds.duplicates, 0);
		CHECK(model_of(f, &ff, ff_find(&ff, "a")) != NULL);
		CHECK(model_of(f, &ff, ff_find(&ff, "c")) != NULL);
		CHECK(model_of(f, &ff, ff_find(&ff, "h3")) != NULL);
		/* The cable a[2]-b[5] is known right or not at all */
		b = model_of(f, &ff, l.node);
		if (b && b->num_ports >= 5)
			for (unsigned int p = 1; p <= b->num_ports; p++)
				if (p != 5 && b->ports[p].peer)
					CHECK(b->ports[p].peer->node->guid !=
					      ff.nodes[ff_find(&ff, "a")].guid);
		CHECK(all_engines(f, &ff) >= 3);
		fabric_free(f);
	}
	ff_free(&ff);
}

int main(void)
{
	RUN(test_local_port_zero);
	RUN(test_oneway_model);
	RUN(test_dup_ca);
	RUN(test_dup_switch);
	RUN(test_dup_port_guid);
	RUN(test_dup_sm_node);
	RUN(test_liars);
	return unit_report();
}
