// SPDX-License-Identifier: MIT
/*
 * sweep_bench: the CPU parts of a heavy sweep, in memory, each timed.
 *
 *   sweep_bench [--engines LIST] [--vls N] [--db FILE] [--saves N]
 *               [--no-index] [--repeat N] [--threads N] NETFILE
 *
 * The fabric (ibnetdiscover format, tests/gen/topogen.py) is discovered
 * against tests/unit/fakefab as smd would (untimed), then, as a sweep does
 * them: LIDs (lid_assign), routing and its verifier (route_compute_list,
 * as smd's defaults: "dfree,updn,minhop" on 1 VL), the SA's index of the
 * model (sa_index_build) and, with --db, the sweep saved --saves times
 * (default 2: the first save of a new fabric, then a later save of the
 * same one). --repeat N runs routing N times and keeps the fastest.
 * --threads N: threads the parallel parts use (default: the CPUs this
 * process may run on; util/par.h).
 * One line of "key value" pairs goes to stdout: wall and CPU seconds of
 * each part, and a digest of every LFT (FNV-1a over switches by GUID
 * order of discovery), which must not depend on how the work is spread.
 *
 * Under valgrind --tool=callgrind it gives repeatable instruction counts
 * of each part (--toggle-collect=sweep_bench_PART, see the functions).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/store.h"
#include "sa/sa.h"
#include "tests/unit/fakefab.h"
#include "topo/lid.h"
#include "topo/route.h"
#include "util/par.h"

static double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

struct timing {
	double wall, cpu;
};

static void t_start(struct timing *t)
{
	t->wall = now(CLOCK_MONOTONIC);
	t->cpu = now(CLOCK_PROCESS_CPUTIME_ID);
}

static void t_stop(struct timing *t)
{
	t->wall = now(CLOCK_MONOTONIC) - t->wall;
	t->cpu = now(CLOCK_PROCESS_CPUTIME_ID) - t->cpu;
}

/* The parts, as functions of their own for callgrind's --toggle-collect */
__attribute__((noinline)) static int sweep_bench_lids(struct fabric *f, struct lid_stats *ls)
{
	return lid_assign(f, 0, NULL, NULL, ls);
}

__attribute__((noinline)) static int sweep_bench_route(const char *list, struct fabric *f,
							 const struct route_opts *o,
							 struct route_stats *st,
							 struct route_result **res,
							 struct route_check *chk,
							 struct route_attempt *att, unsigned int *tried)
{
	return route_compute_list(list, f, o, st, res, chk, att, 8, tried);
}

__attribute__((noinline)) static int sweep_bench_index(const struct fabric *f,
							 struct sa_index **ix)
{
	return sa_index_build(f, ix);
}

__attribute__((noinline)) static int sweep_bench_save(struct store *s, const struct fabric *f,
							const struct store_sweep *sw)
{
	return store_save_sweep(s, f, sw);
}

static uint64_t lft_digest(const struct fabric *f)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (size_t i = 0; i < f->nswitches; i++) {
		const struct fab_node *n = f->switches[i];

		for (size_t k = 0; k < 8; k++) {
			h ^= (n->guid >> (8 * k)) & 0xff;
			h *= UINT64_C(0x100000001b3);
		}
		for (uint32_t lid = 0; lid < n->lft_len; lid++) {
			h ^= n->lft[lid];
			h *= UINT64_C(0x100000001b3);
		}
	}
	return h;
}

static void usage(void)
{
	fprintf(stderr, "usage: sweep_bench [--engines LIST] [--vls N] [--db FILE] [--saves N] "
		"[--no-index] [--repeat N] [--threads N] NETFILE\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *list = "dfree,updn,minhop", *net = NULL, *db = NULL;
	unsigned int vls = 1, repeat = 1, saves = 2, tried = 0;
	bool index = true;
	struct route_opts opts;
	struct route_stats st;
	struct route_check chk;
	struct route_attempt att[8];
	struct route_result *res = NULL;
	struct lid_stats ls;
	struct disc_stats ds;
	struct fakefab ff;
	struct fabric *f;
	struct timing t_lids, t_route = { 1e30, 1e30 }, t_index = { 0, 0 };
	double compute_s = 1e30, verify_s = 1e30;
	int r, used = -1;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--engines") && i + 1 < argc)
			list = argv[++i];
		else if (!strcmp(argv[i], "--vls") && i + 1 < argc)
			vls = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--db") && i + 1 < argc)
			db = argv[++i];
		else if (!strcmp(argv[i], "--saves") && i + 1 < argc)
			saves = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--repeat") && i + 1 < argc)
			repeat = (unsigned int)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			par_set_threads((unsigned int)atoi(argv[++i]));
		else if (!strcmp(argv[i], "--no-index"))
			index = false;
		else if (argv[i][0] == '-' || net)
			usage();
		else
			net = argv[i];
	}
	if (!net || !repeat)
		usage();
	r = ff_load(&ff, net);
	if (r < 0) {
		fprintf(stderr, "sweep_bench: %s: %s\n", net, strerror(-r));
		return 1;
	}
	if (fabric_new(&f) < 0 || ff_discover(&ff, f, &ds) < 0) {
		fprintf(stderr, "sweep_bench: %s: cannot discover the fabric\n", net);
		return 1;
	}
	t_start(&t_lids);
	r = sweep_bench_lids(f, &ls);
	t_stop(&t_lids);
	if (r < 0) {
		fprintf(stderr, "sweep_bench: LIDs: %s\n", strerror(-r));
		return 1;
	}
	memset(&opts, 0, sizeof(opts));
	opts.max_vls = vls;
	for (unsigned int k = 0; k < repeat; k++) {
		struct timing t;

		route_result_free(res);
		res = NULL;
		t_start(&t);
		used = sweep_bench_route(list, f, &opts, &st, &res, &chk, att, &tried);
		t_stop(&t);
		if (used < 0) {
			fprintf(stderr, "sweep_bench: routing (%s): %s\n", list, strerror(-used));
			return 1;
		}
		if (t.wall < t_route.wall)
			t_route = t;
		if (att[used].compute_s < compute_s)
			compute_s = att[used].compute_s;
		if (att[used].verify_s < verify_s)
			verify_s = att[used].verify_s;
	}
	printf("threads %u fabric %s switches %zu lids %u lids_s %.3f engine %s route_s %.3f route_cpu %.3f "
	       "compute_s %.3f verify_s %.3f max_link %u acyclic %d lft_digest %016llx",
	       par_threads(), net, f->nswitches, st.lids, t_lids.wall, att[used].name, t_route.wall, t_route.cpu,
	       compute_s, verify_s, chk.max_link_routes, chk.acyclic,
	       (unsigned long long)lft_digest(f));
	if (index) {
		struct sa_index *ix = NULL;

		t_start(&t_index);
		r = sweep_bench_index(f, &ix);
		t_stop(&t_index);
		if (r < 0) {
			fprintf(stderr, "sweep_bench: SA index: %s\n", strerror(-r));
			return 1;
		}
		sa_index_free(ix);
		printf(" index_s %.3f index_cpu %.3f", t_index.wall, t_index.cpu);
	}
	if (db) {
		struct store *s = NULL;

		unlink(db);
		r = store_open(db, 0, &s);
		if (r < 0) {
			fprintf(stderr, "sweep_bench: %s: %s\n", db, strerror(-r));
			return 1;
		}
		for (unsigned int k = 0; k < saves; k++) {
			struct store_sweep sw = {
				.started = 1000000 + 60 * k, .seconds = 1, .nodes = (unsigned int)f->nnodes,
				.switches = (unsigned int)f->nswitches, .lids = st.lids, .up = 1,
			};
			struct timing t;

			t_start(&t);
			r = sweep_bench_save(s, f, &sw);
			t_stop(&t);
			if (r < 0) {
				fprintf(stderr, "sweep_bench: save %u: %s\n", k + 1, store_errmsg(s));
				return 1;
			}
			printf(" save%u_s %.3f save%u_cpu %.3f", k + 1, t.wall, k + 1, t.cpu);
		}
		store_close(s);
	}
	printf("\n");
	route_result_free(res);
	fabric_free(f);
	ff_free(&ff);
	return 0;
}
