// SPDX-License-Identifier: MIT
/*
 * Work spread over threads (util/par.c) computes what one thread does: the
 * loop itself, and each part of a sweep that uses it, compared between one
 * thread and several on the fabrics given as arguments (par_fabrics.sh).
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/lid.h"
#include "topo/path.h"
#include "topo/route.h"
#include "util/par.h"

/* ---- the loop ---- */

struct cover {
	atomic_uint *seen;		/* [n] times each item was done */
	atomic_uint calls;
	unsigned int workers;		/* par_workers() said */
	atomic_uint bad_worker;
	size_t chunk;
	atomic_uint bad_chunk;
};

static void cover_fn(void *arg, unsigned int worker, size_t begin, size_t end)
{
	struct cover *c = arg;

	atomic_fetch_add(&c->calls, 1);
	if (worker >= c->workers)
		atomic_fetch_add(&c->bad_worker, 1);
	if (end <= begin || end - begin > c->chunk || begin % c->chunk)
		atomic_fetch_add(&c->bad_chunk, 1);
	for (size_t i = begin; i < end; i++)
		atomic_fetch_add(&c->seen[i], 1);
}

static void test_par_for(void)
{
	static const size_t ns[] = { 0, 1, 7, 64, 1000 };
	static const size_t chunks[] = { 1, 3, 64, 5000 };
	static const unsigned int threads[] = { 1, 2, 5, PAR_MAX + 10 };

	for (size_t a = 0; a < sizeof(ns) / sizeof(ns[0]); a++)
		for (size_t b = 0; b < sizeof(chunks) / sizeof(chunks[0]); b++)
			for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
				size_t n = ns[a], chunk = chunks[b], bad = 0;
				struct cover c = { .chunk = chunk };

				par_set_threads(threads[t]);
				CHECK(par_threads() >= 1 && par_threads() <= PAR_MAX);
				c.workers = par_workers(n, chunk);
				CHECK(c.workers >= 1 && c.workers <= par_threads());
				CHECK(c.workers <= (n + chunk - 1) / chunk || c.workers == 1);
				c.seen = calloc(n + 1, sizeof(*c.seen));
				par_for(n, chunk, cover_fn, &c);
				for (size_t i = 0; i < n; i++)
					bad += atomic_load(&c.seen[i]) != 1;
				CHECK_MSG(bad == 0, "n %zu chunk %zu threads %u: %zu items not done "
					  "exactly once", n, chunk, threads[t], bad);
				CHECK_EQ(atomic_load(&c.calls), (n + chunk - 1) / chunk);
				CHECK_EQ(atomic_load(&c.bad_worker), 0);
				CHECK_EQ(atomic_load(&c.bad_chunk), 0);
				free(c.seen);
			}
	par_set_threads(0);
	CHECK(par_threads() >= 1);
}

/* ---- the SA's path table (topo/path.c) against a plain walk ---- */

static uint8_t mtu_cap(const struct fab_port *p)
{
	return p->pi.mtu_cap ? p->pi.mtu_cap : 5;
}

static bool owns(const struct fab_port *p, uint32_t lid)
{
	return p->lid && lid >= p->lid && lid < p->lid + (1u << p->lmc);
}

/*
 * The path from slid to dlid as the LFTs take it, link by link: the
 * smallest MTU, the slowest rate (the one nearest the destination among
 * equally slow ones), links counted; the way path_lookup documents it
 */
static int ref_path(const struct fabric *f, uint16_t slid, uint16_t dlid, struct path_attr *out)
{
	const struct fab_port *src = fabric_port_by_lid(f, slid), *dst = fabric_port_by_lid(f, dlid);
	const struct fab_node *sw;
	unsigned int links = 0;
	uint8_t mtu = UINT8_MAX, rate = 0;
	bool any = false;

	if (!src || !dst || dlid > f->max_lid)
		return -ENOENT;
	if (src == dst) {
		out->hops = 0;
		out->mtu = mtu_cap(src);
		out->rate = src->node->type == NODE_TYPE_SWITCH ? IBA_RATE_MAX :
			    path_link_rate(src);
		return 0;
	}
/* One element of the path: an MTU and a rate, later ones win equal rates */
#define TAKE(m, r) do {								\
	uint8_t m_ = (m), r_ = (r);						\
	if (m_ < mtu)								\
		mtu = m_;							\
	if (!any || iba_rate_to_dgbps(r_) <= iba_rate_to_dgbps(rate))		\
		rate = r_;							\
	any = true;								\
} while (0)
	if (src->node->type == NODE_TYPE_SWITCH) {
		sw = src->node;
		mtu = mtu_cap(src);
	} else {
		if (!fabric_port_linked(src))
			return -EHOSTUNREACH;
		TAKE(path_link_mtu(src), path_link_rate(src));
		links++;
		if (src->peer == dst) {
			out->hops = 1;
			out->mtu = mtu;
			out->rate = rate;
			return 0;
		}
		sw = src->peer->node;
		if (sw->type != NODE_TYPE_SWITCH)
			return -EHOSTUNREACH;
	}
	for (size_t steps = 0;; steps++) {
		uint8_t pn = dlid < sw->lft_len ? sw->lft[dlid] : LFT_PORT_NONE;
		const struct fab_port *o;

		if (pn == LFT_PORT_NONE || pn > sw->num_ports)
			return -EHOSTUNREACH;
		o = &sw->ports[pn];
		if (pn == 0) {
			if (!owns(o, dlid))
				return -EHOSTUNREACH;
			TAKE(mtu_cap(o), IBA_RATE_MAX);
			break;
		}
		if (!fabric_port_linked(o))
			return -EHOSTUNREACH;
		TAKE(path_link_mtu(o), path_link_rate(o));
		links++;
		if (o->peer->node->type != NODE_TYPE_SWITCH) {
			if (!owns(o->peer, dlid))
				return -EHOSTUNREACH;
			break;
		}
		sw = o->peer->node;
		if (steps >= f->nswitches)
			return -EHOSTUNREACH;	/* more switches than there are: a loop */
	}
#undef TAKE
	if (links >= 0xfd)
		return -EHOSTUNREACH;
	out->hops = (uint8_t)links;
	out->mtu = mtu;
	out->rate = rate;
	return 0;
}

/* Every (slid, dlid) pair from the table, one thread and three, against ref_path */
static void check_paths(const struct fabric *f, const char *what)
{
	static const unsigned int threads[] = { 1, 3 };

	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		struct path_table *pt = NULL;
		unsigned long long pairs = 0, found = 0, bad = 0;

		par_set_threads(threads[t]);
		CHECK_EQ(path_table_build(f, &pt), 0);
		if (!pt)
			return;
		for (uint32_t s = 1; s <= f->max_lid + 1u; s++) {
			for (uint32_t d = 1; d <= f->max_lid + 1u; d++) {
				struct path_attr a = { 0 }, b = { 0 };
				int ra = path_lookup(pt, (uint16_t)s, (uint16_t)d, &a);
				int rb = ref_path(f, (uint16_t)s, (uint16_t)d, &b);

				pairs++;
				found += rb == 0;
				if (ra != rb || (ra == 0 && (a.hops != b.hops || a.mtu != b.mtu ||
							     a.rate != b.rate))) {
					if (bad++ < 3)
						fprintf(stderr, "  %s: %u -> %u: table %d %u/%u/%u, "
							"walk %d %u/%u/%u\n", what, s, d, ra, a.hops,
							a.mtu, a.rate, rb, b.hops, b.mtu, b.rate);
				}
			}
		}
		CHECK_MSG(bad == 0, "%s, %u threads: %llu of %llu paths differ from the walk",
			  what, threads[t], bad, pairs);
		CHECK(found > 0);
		fprintf(stderr, "  %-24s %u threads: %llu pairs, %llu with a path, %llu differ\n",
			what, threads[t], pairs, found, bad);
		path_table_free(pt);
	}
	par_set_threads(0);
}

/* LFT entries changed at random (loops, dead ends, ports out of range), links slower */
static void scramble(struct fabric *f, unsigned int seed)
{
	srand(seed);
	for (size_t k = 0; k < f->nswitches; k++) {
		struct fab_node *n = f->switches[k];

		for (uint32_t l = 0; l < n->lft_len; l++)
			if (rand() % 40 == 0)
				n->lft[l] = (uint8_t)(rand() % (n->num_ports + 3));
		if (k == 0)
			n->lft_len /= 2;
	}
	for (size_t k = 0; k < f->nnodes; k++) {
		struct fab_node *n = f->nodes[k];

		for (unsigned int p = 0; p <= n->num_ports; p++) {
			n->ports[p].pi.mtu_cap = (uint8_t)(rand() % 6);
			if (rand() % 4 == 0)
				n->ports[p].pi.link_width_active = 1;
		}
	}
}

/* ---- the route verifier (topo/route_check.c): LIDs spread over threads ---- */

static void check_verifier(const struct fabric *f, const struct route_result *res, const char *what)
{
	static const unsigned int threads[] = { 3, PAR_MAX };
	struct route_check one, many;

	par_set_threads(1);
	CHECK_EQ(route_check(f, res, &one), 0);
	CHECK_MSG(one.pairs > 0, "%s: the verifier checked no pair", what);
	for (size_t t = 0; t < sizeof(threads) / sizeof(threads[0]); t++) {
		par_set_threads(threads[t]);
		CHECK_EQ(route_check(f, res, &many), 0);
		CHECK_MSG(one.pairs == many.pairs && one.disconnected == many.disconnected &&
			  one.unreachable == many.unreachable && one.loops == many.loops &&
			  one.bad_vl == many.bad_vl && one.dependencies == many.dependencies &&
			  one.vls_used == many.vls_used && one.max_hops == many.max_hops &&
			  one.acyclic == many.acyclic && one.cycle_guid == many.cycle_guid &&
			  one.cycle_port == many.cycle_port && one.cycle_vl == many.cycle_vl &&
			  one.cycle_len == many.cycle_len &&
			  one.max_link_routes == many.max_link_routes &&
			  one.mean_link_routes == many.mean_link_routes,
			  "%s, %u threads: the verifier says otherwise than with one (pairs %llu/%llu, "
			  "unreachable %llu/%llu, loops %llu/%llu, edges %llu/%llu, hops %u/%u, "
			  "acyclic %d/%d, cycle %u/%u, busiest link %u/%u)", what, threads[t],
			  (unsigned long long)one.pairs, (unsigned long long)many.pairs,
			  (unsigned long long)one.unreachable, (unsigned long long)many.unreachable,
			  (unsigned long long)one.loops, (unsigned long long)many.loops,
			  (unsigned long long)one.dependencies, (unsigned long long)many.dependencies,
			  one.max_hops, many.max_hops, one.acyclic, many.acyclic, one.cycle_len,
			  many.cycle_len, one.max_link_routes, many.max_link_routes);
		printf("  %-30s verifier, %u threads: %llu pairs, %llu unreachable, %llu in loops, "
		       "%llu edges, %s, busiest link %u\n", what, threads[t],
		       (unsigned long long)many.pairs, (unsigned long long)many.unreachable,
		       (unsigned long long)many.loops, (unsigned long long)many.dependencies,
		       many.acyclic ? "acyclic" : "cyclic", many.max_link_routes);
	}
	par_set_threads(0);
}

/* FNV-1a over every switch's LFT */
static uint64_t lft_digest(const struct fabric *f)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t k = 0; k < f->nswitches; k++)
		for (uint32_t l = 0; l < f->switches[k]->lft_len; l++) {
			h ^= f->switches[k]->lft[l];
			h *= UINT64_C(0x100000001b3);
		}
	return h;
}

static void check_file(const char *path)
{
	const char *base = strrchr(path, '/');
	struct fakefab ff;
	struct fabric *f = NULL;
	struct disc_stats ds;
	struct lid_stats ls;
	struct route_stats st, st1;
	uint64_t digest;
	struct route_opts opts = { 0 };
	struct route_result *res = NULL;
	char what[96];

	base = base ? base + 1 : path;
	CHECK_EQ(ff_load(&ff, path), 0);
	CHECK_EQ(fabric_new(&f), 0);
	CHECK_EQ(ff_discover(&ff, f, &ds), 0);
	CHECK_EQ(lid_assign(f, 0, NULL, NULL, &ls), 0);
	/* Layered routes over 4 VLs where they fit: SLs, SL-to-VL tables, VLs above 0 */
	opts.max_vls = 4;
	if (route_compute(route_engine_find("layered"), f, &opts, &st, &res) == 0) {
		snprintf(what, sizeof(what), "%s layered over %u VLs", base, route_vls_used(res));
		check_verifier(f, res, what);
	}
	route_result_free(res);
	res = NULL;
	/* The engine's statistics (rt_post_stats) with one thread and several */
	par_set_threads(1);
	CHECK_EQ(route_compute(route_engine_find("dfree"), f, NULL, &st1, &res), 0);
	digest = lft_digest(f);
	route_result_free(res);
	res = NULL;
	par_set_threads(3);
	CHECK_EQ(route_compute(route_engine_find("dfree"), f, NULL, &st, &res), 0);
	par_set_threads(0);
	/* Up/down DAGs made ahead on a thread (rt_updn_pipe): the same routes */
	CHECK_MSG(lft_digest(f) == digest, "%s: the routes differ with 3 threads", base);
	CHECK_MSG(st.lids == st1.lids && st.unreachable == st1.unreachable &&
		  st.max_hops == st1.max_hops && st.max_port_load == st1.max_port_load &&
		  st.mean_port_load == st1.mean_port_load &&
		  st.max_link_routes == st1.max_link_routes &&
		  st.mean_link_routes == st1.mean_link_routes,
		  "%s: routing statistics differ with 3 threads (hops %u/%u, busiest link %u/%u, "
		  "unreachable %u/%u)", base, st1.max_hops, st.max_hops, st1.max_link_routes,
		  st.max_link_routes, st1.unreachable, st.unreachable);
	CHECK_MSG(st1.max_link_routes > 0 && st1.max_hops > 0, "%s: no routes counted", base);
	snprintf(what, sizeof(what), "%s routed", base);
	check_paths(f, what);
	check_verifier(f, res, what);
	scramble(f, 7);
	snprintf(what, sizeof(what), "%s scrambled", base);
	check_paths(f, what);
	check_verifier(f, res, what);
	route_result_free(res);
	fabric_free(f);
	ff_free(&ff);
}

int main(int argc, char **argv)
{
	RUN(test_par_for);
	for (int i = 1; i < argc; i++)
		check_file(argv[i]);
	return unit_report();
}
