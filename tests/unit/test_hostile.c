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

/*
 * Every switch of the model reaches every LID of the model over the true
 * cabling; returns the pairs that do not (*pairs: how many were walked).
 * LIDs are judged only among nodes whose model is whole: a node left out
 * is not walked from.
 */
static unsigned int bad_routes(const struct fabric *f, const struct fakefab *ff,
			       unsigned int *pairs)
{
	unsigned int bad = 0;

	*pairs = 0;
	for (uint32_t lid = 1; lid <= f->max_lid; lid++) {
		if (!f->by_lid[lid])
			continue;
		for (int i = 0; i < ff->n; i++) {
			if (ff->nodes[i].type != NODE_TYPE_SWITCH || !model_of(f, ff, i))
				continue;
			(*pairs)++;
			if (walk(f, ff, i, (uint16_t)lid) < 0 && bad++ < 5)
				fprintf(stderr, "  %s -> LID %u: no route\n", ff->nodes[i].name,
					lid);
		}
	}
	return bad;
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

int main(void)
{
	RUN(test_local_port_zero);
	RUN(test_oneway_model);
	return unit_report();
}
