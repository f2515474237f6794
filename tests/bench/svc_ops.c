// SPDX-License-Identifier: MIT
/*
 * svc_ops N [K]: the cost of one ServiceRecord request while the SA holds
 * N services (restored, spread over 64 GUIDs). One port of the k=4
 * fat-tree sends K of each, through sa_handle() as a client would: Set
 * (new records up to its limit of 256, then refusals and replacements),
 * Get by ServiceID, Delete of a record it does not have, and GetTable of
 * every service. Prints microseconds per request; asserts no timing.
 * Built by tests/bench/svc_bench.sh, not by make.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/sa_codec.h"
#include "sa/sa.h"
#include "util/log.h"
#include "tests/unit/fakefab.h"
#include "topo/lid.h"
#include "topo/route.h"

static size_t nsent, nok;

static int count_send(void *ctx, const uint8_t mad[MAD_SIZE], size_t len,
		      const struct mad_addr *to)
{
	(void)ctx;
	(void)len;
	(void)to;
	nsent++;
	nok += !mad[4] && !mad[5];
	return 0;
}

static double secs(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* K requests of one kind from port p; prints the cost of one */
static void run(struct sa *sa, const struct fab_port *p, const char *what, uint8_t method,
		uint64_t mask, size_t k, uint64_t prefix)
{
	struct mad_addr from = { .slid = p->lid, .qpn = 1 };
	double t0;

	nsent = nok = 0;
	t0 = secs();
	for (size_t i = 0; i < k; i++) {
		struct service_record r = { .id = 0x100000 + i % 300, .pkey = 0xffff };
		struct sa_mad m;
		uint8_t mad[MAD_SIZE];

		sa_mad_init(&m, method, SA_ATTR_SERVICE_RECORD, mask, 0x1000 + i);
		gid_encode(prefix, p->guid, r.gid);
		service_record_encode(&r, m.data);
		sa_mad_encode(&m, mad);
		sa_handle(sa, mad, MAD_SIZE, &from);
	}
	printf("  %-40s %8.2f us each (%zu answers, %zu with status 0)\n", what,
	       (secs() - t0) * 1e6 / (double)k, nsent, nok);
}

int main(int argc, char **argv)
{
	struct sa_env env = { .sm_guid = 1, .sm_lid = 1, .packet_life_time = 18,
			      .subnet_prefix = UINT64_C(0xfe80000000000000), .send = count_send };
	size_t n = argc > 2 ? strtoul(argv[2], NULL, 0) : 16000;
	size_t k = argc > 3 ? strtoul(argv[3], NULL, 0) : 20000;
	const struct fab_port *p = NULL;
	struct fakefab ff = { 0 };
	struct route_stats rs;
	struct lid_stats ls;
	struct fabric *f;
	struct sa *sa;

	log_set_level(LOG_LVL_ERR);
	if (argc < 2 || ff_load(&ff, argv[1]) < 0 || fabric_new(&f) < 0 ||
	    ff_discover(&ff, f, NULL) < 0 || lid_assign(f, 0, NULL, NULL, &ls) < 0 ||
	    route_compute(route_engine_find("minhop"), f, NULL, &rs, NULL) < 0) {
		fprintf(stderr, "usage: svc_ops FABRIC [N [K]]\n");
		return 2;
	}
	/* Every endport a full member of the default partition; p: a CA port */
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int q = 0; q <= f->nodes[i]->num_ports; q++) {
			struct fab_port *pp = &f->nodes[i]->ports[q];
			static const uint16_t dflt[32] = { 0xffff };

			if (!fabric_is_endport(pp) || fabric_port_set_pkeys(pp, dflt, 32) < 0)
				continue;
			pp->pkeys_valid = true;
			if (!p && f->nodes[i]->type != NODE_TYPE_SWITCH)
				p = pp;
		}
	if (!p || sa_new(&env, &sa) < 0 || sa_update(sa, f, NULL) < 0)
		return 2;
	for (size_t i = 0; i < n; i++) {
		struct service_record r = { .id = i + 1, .pkey = 0xffff };
		uint8_t rec[SR_SIZE];

		gid_encode(env.subnet_prefix, 0x0002c9fe00000000ull + i % 64, r.gid);
		service_record_encode(&r, rec);
		if (sa_service_restore(sa, rec, 0xffffffff) < 0) {
			fprintf(stderr, "restore %zu refused (SVC_MAX?)\n", i);
			return 1;
		}
	}
	printf("%zu services, %zu requests of each kind from one port:\n", n, k);
	run(sa, p, "Set (256 new, then replaced or refused)", SA_METHOD_SET,
	    SR_CM_ID | SR_CM_GID | SR_CM_PKEY, k, env.subnet_prefix);
	run(sa, p, "Get by ServiceID", SA_METHOD_GET, SR_CM_ID, k, env.subnet_prefix);
	run(sa, p, "Delete (256, then none left)", SA_METHOD_DELETE,
	    SR_CM_ID | SR_CM_GID | SR_CM_PKEY, k, env.subnet_prefix);
	run(sa, p, "GetTable of all", SA_METHOD_GET_TABLE, 0, k / 100 ? k / 100 : 1,
	    env.subnet_prefix);
	sa_free(sa);
	fabric_free(f);
	ff_free(&ff);
	return 0;
}
