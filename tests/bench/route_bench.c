// SPDX-License-Identifier: MIT
/*
 * route_bench: route one topology file in memory and print what it costs.
 *
 *   route_bench [--engine NAME] [--vls N] [--repeat N] [--no-check]
 *               [--dump-lfts FILE] [--repair-from INTACT] NETFILE
 *
 * The fabric (ibnetdiscover format, tests/gen/topogen.py) is brought up the
 * way the unit tests do it: discovery against tests/unit/fakefab, LIDs from
 * topo/lid.c. Then route_compute runs --repeat times (default 1) and the
 * fastest run's wall and CPU seconds are printed, then the verifier's verdict
 * (route_check) and its time. --dump-lfts writes every switch's LFT in the
 * format of opensm's opensm-lfts.dump, for tests/bench/route_load.py.
 * One line of "key value" pairs goes to stdout.
 *
 * --repair-from INTACT: route the fabric INTACT (of which NETFILE is a
 * part: cables or switches gone, the same GUIDs) with the engine, bring
 * NETFILE up with INTACT's LIDs, and time route_repair of those routes
 * instead of the engine (engine "repair" in the output; "failed" with
 * route_repair's reason when it declines, as smd would then route afresh),
 * followed by "intact_max N balanced B": the busiest link of INTACT's
 * routes and whether the repaired ones stay within route_repair_balanced of
 * it (when not, smd computes routes afresh as well and keeps the better).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tests/unit/fakefab.h"
#include "topo/lid.h"
#include "topo/route.h"

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static int dump_lfts(const struct fabric *f, const char *path)
{
	FILE *out = fopen(path, "we");

	if (!out)
		return -errno;
	for (size_t i = 0; i < f->nswitches; i++) {
		const struct fab_node *sw = f->switches[i];
		unsigned int n = 0;

		fprintf(out, "Unicast lids [0-%u] of switch Lid %u guid 0x%016llx ('%s'):\n",
			f->max_lid, sw->ports[0].lid, (unsigned long long)sw->guid, sw->desc);
		for (uint32_t lid = 1; lid <= f->max_lid && lid < sw->lft_len; lid++) {
			const struct fab_port *ep = f->by_lid[lid];

			if (!ep || sw->lft[lid] == LFT_PORT_NONE)
				continue;
			fprintf(out, "0x%04x %03u # %s portguid 0x%016llx: '%s'\n", lid, sw->lft[lid],
				ep->node->type == NODE_TYPE_SWITCH ? "Switch" : "Channel Adapter",
				(unsigned long long)ep->guid, ep->node->desc);
			n++;
		}
		fprintf(out, "%u lids dumped\n", n);
	}
	return fclose(out) ? -errno : 0;
}

/* INTACT's LIDs, for bringing the degraded fabric up with the same */
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

static int bring_up(struct fakefab *ff, const char *net, struct fabric **f,
		    const struct fabric *lids_of)
{
	struct disc_stats ds;
	struct lid_stats ls;
	int r = ff_load(ff, net);

	if (r < 0) {
		fprintf(stderr, "route_bench: %s: %s\n", net, strerror(-r));
		return r;
	}
	if (fabric_new(f) < 0 || ff_discover(ff, *f, &ds) < 0 ||
	    lid_assign(*f, 0, lids_of ? lid_of : NULL, (void *)lids_of, &ls) < 0) {
		fprintf(stderr, "route_bench: %s: cannot bring the fabric up\n", net);
		return -EIO;
	}
	return 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: route_bench [--engine NAME] [--vls N] [--repeat N] [--no-check] "
		"[--dump-lfts FILE] [--repair-from INTACT] NETFILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *engine = "dfree", *dump = NULL, *net = NULL, *intact = NULL;
	unsigned int vls = 0, repeat = 1;
	bool check = true;
	struct route_opts opts;
	struct route_stats st;
	struct route_check chk;
	struct route_result *res = NULL, *res0 = NULL;
	struct route_repair_info info;
	struct fakefab ff, ff0;
	struct fabric *f, *f0 = NULL;
	const struct route_engine *e;
	double best_wall = 1e30, best_cpu = 1e30, t0, c0, check_s = 0, check_cpu = 0;
	int r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--engine") && i + 1 < argc)
			engine = argv[++i];
		else if (!strcmp(argv[i], "--vls") && i + 1 < argc)
			vls = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--dump-lfts") && i + 1 < argc)
			dump = argv[++i];
		else if (!strcmp(argv[i], "--repair-from") && i + 1 < argc)
			intact = argv[++i];
		else if (!strcmp(argv[i], "--no-check"))
			check = false;
		else if (argv[i][0] == '-' || net)
			usage();
		else
			net = argv[i];
	}
	if (!net || !repeat)
		usage();
	e = route_engine_find(engine);
	if (!e) {
		fprintf(stderr, "route_bench: no engine %s\n", engine);
		return 2;
	}
	memset(&opts, 0, sizeof(opts));
	opts.max_vls = vls;
	if (intact) {
		if (bring_up(&ff0, intact, &f0, NULL) < 0)
			return 1;
		r = route_compute(e, f0, &opts, &st, &res0);
		if (r < 0) {
			fprintf(stderr, "route_bench: %s on %s: %s\n", engine, intact, strerror(-r));
			return 1;
		}
	}
	if (bring_up(&ff, net, &f, f0) < 0)
		return 1;
	for (unsigned int k = 0; k < repeat; k++) {
		route_result_free(res);
		res = NULL;
		t0 = now(CLOCK_MONOTONIC);
		c0 = now(CLOCK_PROCESS_CPUTIME_ID);
		if (intact)
			r = route_repair(f0, res0, f, &opts, &st, &res, &info);
		else
			r = route_compute(e, f, &opts, &st, &res);
		c0 = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
		t0 = now(CLOCK_MONOTONIC) - t0;
		if (r < 0) {
			fprintf(stderr, "route_bench: %s: %s%s%s\n", intact ? "repair" : engine,
				strerror(-r), intact ? ": " : "", intact ? info.why : "");
			printf("engine %s vls_budget %u failed %d\n", intact ? "repair" : engine,
			       vls, r);
			return 1;
		}
		if (t0 < best_wall)
			best_wall = t0;
		if (c0 < best_cpu)
			best_cpu = c0;
	}
	memset(&chk, 0, sizeof(chk));
	if (check) {
		t0 = now(CLOCK_MONOTONIC);
		c0 = now(CLOCK_PROCESS_CPUTIME_ID);
		r = route_check(f, res, &chk);
		check_cpu = now(CLOCK_PROCESS_CPUTIME_ID) - c0;
		check_s = now(CLOCK_MONOTONIC) - t0;
		if (r < 0)
			fprintf(stderr, "route_bench: route_check: %s\n", strerror(-r));
	}
	printf("engine %s switches %zu lids %u vls_budget %u vls_used %u seconds %.3f cpu %.3f "
	       "max_link %u mean_link %.1f unreachable %u max_hops %u check_seconds %.3f "
	       "check_cpu %.3f acyclic %d loops %llu unrouted %llu check_vls %u deps %llu escape %u method \"%s\"\n",
	       intact ? "repair" : engine, f->nswitches, st.lids, st.vls_budget, st.vls_used, best_wall, best_cpu,
	       st.max_link_routes, st.mean_link_routes, st.unreachable, st.max_hops, check_s, check_cpu,
	       check ? chk.acyclic : -1, (unsigned long long)chk.loops,
	       (unsigned long long)chk.unreachable, chk.vls_used,
	       (unsigned long long)chk.dependencies, st.escape_lids, st.method ? st.method : "");
	if (intact) {
		struct route_check chk0;

		memset(&chk0, 0, sizeof(chk0));
		r = route_check(f0, res0, &chk0);
		printf("intact_max %u balanced %d\n", chk0.max_link_routes,
		       r == 0 && route_repair_balanced(st.max_link_routes, chk0.max_link_routes));
	}
	if (dump && (r = dump_lfts(f, dump)) < 0)
		fprintf(stderr, "route_bench: %s: %s\n", dump, strerror(-r));
	route_result_free(res);
	fabric_free(f);
	ff_free(&ff);
	if (intact) {
		route_result_free(res0);
		fabric_free(f0);
		ff_free(&ff0);
	}
	return 0;
}
