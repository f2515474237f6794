/* SPDX-License-Identifier: MIT */
/*
 * One sweep as a pipeline of phases: discover, assign LIDs, route,
 * configure ports (LIDs, MTU, VLs; INIT -> ARMED), program LFTs and
 * SwitchInfo, activate (ARMED -> ACTIVE), verify, save.
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

int sweep_run(struct smd *smd, struct sweep_result *res);

#endif
