/* SPDX-License-Identifier: MIT */
/*
 * One heavy sweep as a list of phases (sweep_phases[] in sweep.c): discover,
 * elect, assign LIDs, route, read P_Keys, VL tables, FDR10, configure ports
 * (LIDs, MTU, VLs; INIT -> ARMED), program LFTs and SwitchInfo, activate
 * (ARMED -> ACTIVE), multicast, verify, save. It never waits: the event loop moves it
 * on (sweep_advance) and its CPU-long parts run on the worker thread.
 */
#ifndef SMD_SWEEP_H
#define SMD_SWEEP_H

#include <stdbool.h>
#include <stdint.h>

#include "smd/smd.h"
#include "topo/discover.h"
#include "topo/route.h"

#define SWEEP_DUPS_MAX	16	/* duplicate GUIDs a sweep keeps for smctl status */

struct sweep_result {
	unsigned int nodes, switches, cas, ports, endports, links, lids;
	unsigned int lost_peers;	/* cabled ports whose peer never answered */
	unsigned int unconfigured;	/* discovered ports smd could not read or set */
	unsigned int not_active;	/* linked ports left short of ACTIVE */
	unsigned int lft_errors;	/* switches whose LFT could not be programmed */
	unsigned int unrouted;		/* (switch, LID) pairs without a route */
	unsigned int lft_blocks_sent, lft_blocks_kept, port_sets;
	unsigned int tables_sent;	/* SL-to-VL and VL arbitration tables written */
	unsigned int tables_whole;	/* ... of them SL-to-VL Sets for a whole switch */
	unsigned int tables_kept;	/* read and found right */
	unsigned int tables_trusted;	/* nodes whose tables were not read (unchanged) */
	unsigned int table_errors;	/* tables that could not be programmed */
	unsigned int nodes_known;	/* nodes whose tables the last sweep's model gave */
	unsigned int vls;		/* data VLs the routes use */
	unsigned int vls_budget;	/* data VLs the engine was allowed */
	char engine[48];		/* the routing engine used ("dfree, repaired") */
	struct route_check chk;		/* the verifier's verdict on the routes */
	unsigned int mcast_groups, mcast_trees;	/* multicast groups, and trees over the fabric */
	unsigned int mcast_unsafe;	/* trees that close a cycle in the routes' CDG */
	unsigned int mft_blocks_read, mft_blocks_sent;
	unsigned int rereg;		/* CA ports asked to reregister (ClientReregister) */
	/* Partitions: P_Key table blocks written, found right; ports not read */
	unsigned int pkey_blocks_sent, pkey_blocks_kept, pkey_ports_trusted;
	unsigned int pkey_errors;	/* ports whose table could not be programmed */
	unsigned int pkey_enforced;	/* switch ports with partition enforcement */
	unsigned int pkey_unenforced;	/* ... that would have it, but the switch cannot */
	uint64_t smps, timeouts, retries, failed;
	double seconds, t_discover, t_route, t_program;
	bool up;
	bool standby;			/* the election made this SM standby: nothing programmed */
	unsigned int rejected;		/* discovery answers that broke the rules */
	unsigned int dup_guids;		/* GUIDs seen at two places (both left out) */
	unsigned int left_out;		/* nodes taken out of the model for them */
	unsigned int ndups;		/* of dups[] */
	struct disc_dup dups[SWEEP_DUPS_MAX];
};

#define SWEEP_PHASES_MAX	24

/* Where a running sweep is, for smctl status and STATUS= */
struct sweep_progress {
	const char *kind;		/* "heavy" or "light" */
	const char *phase;		/* the phase running */
	unsigned int phase_no, phases;	/* its place in the list (from 1), the list's length */
	double seconds, phase_seconds;	/* since the sweep, the phase started */
	uint64_t smps_sent;		/* transmissions so far, retries included */
	uint64_t smps_done;		/* requests answered or given up */
	uint64_t smps_waiting;		/* requests submitted and not done: queued + in flight */
	unsigned int smps_inflight;	/* ... of them sent, waiting for an answer */
	bool computing;			/* the phase computes on the worker thread */
	const char *beside;		/* a phase computing on the worker beside it, or NULL */
};

/*
 * Start a heavy sweep into res (its phases run from sweep_advance). The
 * transaction layer's counters restart with it.
 */
int sweep_start(struct smd *smd, struct sweep_result *res, struct sweep **out);
/*
 * Move the sweep on, from the event loop, whenever SMPs were answered, its
 * work finished on the worker thread, or a step asked to go on (loop_kick):
 * SWEEP_WAITING (nothing to do before the next event), SWEEP_MOVED (it
 * queued SMPs or changed phase: dispatch, then call again), or, once it has
 * ended, its outcome: 0 (res says how) or -errno. The new model then is
 * smd->fabric, or the last one stays (failure, standby).
 */
#define SWEEP_WAITING	1
#define SWEEP_MOVED	2
int sweep_advance(struct sweep *sw);
/*
 * Abandon it (shutdown): nothing more is submitted or swapped in, and a save
 * running on the worker commits nothing. Then cancel its SMPs
 * (txn_cancel_all), wait until sweep_computing() is false, and free it.
 */
void sweep_abandon(struct sweep *sw);
bool sweep_computing(const struct sweep *sw);
/* The warnings and errors logged while it ran (smctl status lists them) */
const struct log_record *sweep_problems(const struct sweep *sw);
/* The SA's index of the new model, built on the worker (NULL: none; *err says why) */
struct sa_index;
struct sa_index *sweep_take_sa_index(struct sweep *sw, int *err);
/* Returns NULL; never while its work runs on the worker thread */
struct sweep *sweep_free(struct sweep *sw);
void sweep_progress(const struct sweep *sw, struct sweep_progress *p);

#endif
