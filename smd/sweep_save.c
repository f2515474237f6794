// SPDX-License-Identifier: MIT
/*
 * The end of a sweep: its record saved (a failed one too), then the SA's
 * index of the new model built on the worker.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smd/sweep_int.h"

/* ---- saving: the sweep's record (also of a failed one) ---- */

int sweep_save_enter(struct sweep *sw)
{
	struct smd *smd = sw->smd;
	struct sweep_result *res = sw->res;
	const struct txn_stats *ts = txn_stats(smd->txn);
	const struct fab_node *ln = sw->disc ? disc_local_node(sw->disc) : NULL;
	const struct fab_port *lp = ln ? fabric_port(ln, disc_local_port(sw->disc)) : NULL;

	res->seconds = (double)(txn_now_us() - sw->t0) / 1e6;
	res->smps = ts->sent;
	res->timeouts = ts->timeouts;
	res->retries = ts->retries;
	res->failed = ts->failed;
	if (ts->timeouts)
		log_warn("%" PRIu64 " SMPs timed out, %" PRIu64 " retried, %" PRIu64
			 " never answered", ts->timeouts, ts->retries, ts->failed);
	if (ts->malformed || ts->unmatched)
		log_warn("dropped %" PRIu64 " malformed and %" PRIu64 " unmatched MADs",
			 ts->malformed, ts->unmatched);
	/* A failed sweep is recorded too, without its (partial) fabric */
	sw->ss = (struct store_sweep){
		.started = sw->started, .finished = time(NULL), .seconds = res->seconds,
		.nodes = res->nodes, .switches = res->switches, .cas = res->cas,
		.ports = res->ports, .links = res->links, .lids = res->lids,
		.smps_sent = ts->sent, .smps_timed_out = ts->timeouts,
		.smps_retried = ts->retries, .up = res->up, .err = sw->r,
		.sm_node_guid = ln ? ln->guid : 0, .sm_port_guid = lp ? lp->guid : 0,
	};
	/* The partitions in force, for the database and smctl (freed in save_done) */
	sw->ss_parts = calloc(smd->parts->n ? smd->parts->n : 1, sizeof(*sw->ss_parts));
	if (!sw->ss_parts)
		return -ENOMEM;
	sw->ss.partitions = sw->ss_parts;
	sw->ss.npartitions = smd->parts->n;
	for (size_t i = 0; i < smd->parts->n; i++) {
		struct store_partition *sp = &sw->ss_parts[i];

		sp->pkey = smd->parts->parts[i].pkey;
		sp->ipoib = smd->parts->parts[i].ipoib;
		snprintf(sp->name, sizeof(sp->name), "%s", smd->parts->parts[i].name);
	}
	return 0;
}

/* On the worker: the database is the sweep's (mcast_sweep_begin), the model its own */
int sweep_save_work(struct sweep *sw)
{
	struct smd *smd = sw->smd;
	bool keep = sw->r == 0 && !sw->res->standby;

	if (smd->store && !sw->res->standby) {
		sw->save_r = store_save_sweep(smd->store, keep ? sw->f : NULL, &sw->ss);
		sw->saved = sw->save_r == 0;
	}
	return 0;
}

/*
 * On the worker: the SA's index of the new model (PathRecords per
 * destination, ports by GUID), so that the model is served the moment it
 * is swapped in. Not for --once (no SA), nor when abandoned (shutdown).
 */
int sweep_sa_index_work(struct sweep *sw)
{
	struct smd *smd = sw->smd;

	if (sw->r == 0 && !sw->res->standby && !smd->once && !atomic_load(&sw->cancel))
		sw->sa_index_r = sa_index_build(sw->f, &sw->sa_index);
	return 0;
}

int sweep_save_done(struct sweep *sw)
{
	struct smd *smd = sw->smd;

	free(sw->ss_parts);
	sw->ss_parts = NULL;
	sw->ss.partitions = NULL;

	if (sw->save_r < 0)
		log_error("saving the sweep to the database failed: %s; %s",
			  store_errmsg(smd->store), sw->r ? "the failure is not recorded" :
			  "LIDs and fabric of this sweep are not remembered");
	return 0;
}
