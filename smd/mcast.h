/* SPDX-License-Identifier: MIT */
/*
 * Multicast in the daemon: the groups (topo/mc_group.c) live as long as smd,
 * the trees and MFTs (topo/mc_forest.c) as long as the model they were
 * computed on. A heavy sweep builds a new forest on its new model and
 * programs every switch; between sweeps, joins and leaves change only the
 * trees of their groups and the MFT blocks that differ, sent from the event
 * loop after the SA has answered.
 */
#ifndef SMD_MCAST_H
#define SMD_MCAST_H

#include <stdbool.h>

struct smd;
struct sweep_result;
struct fabric;
struct route_result;
struct mc_forest;

struct mcast_stats {
	uint64_t blocks_read, blocks_written, block_errors;
	uint64_t updates;		/* incremental updates run between sweeps */
	uint64_t created, deleted;	/* groups */
};

/*
 * The groups at start: MLIDs remembered in the database, and the groups the
 * partitions configure (smd->parts, loaded before)
 */
int mcast_init(struct smd *smd);
/*
 * The groups partitions c configures: every ipoib partition's broadcast
 * group (one per scope) and its mgid= groups, created or updated; groups
 * configured before and not in c are released (they go with their last
 * member). At start and after the partitions are read again.
 */
struct part_conf;
int mcast_partitions(struct smd *smd, const struct part_conf *c);
void mcast_fini(struct smd *smd);
/*
 * A heavy sweep (smd/sweep.c drives it): from its start joins and leaves
 * wait for its end (mcast_run does nothing meanwhile). Its multicast phase,
 * on its new model f: mcast_sweep_prepare on the loop (departed members go,
 * MFT capacity), mc_forest_new on the worker thread, then mcast_sweep_step
 * on the loop until it returns 0: every group's tree a slice at a time
 * (MCAST_STEP_MORE: call again soon), then every switch's MFT read and
 * written where it differs (MCAST_STEP_WAIT: call again after the next
 * answers); -errno on failure. mcast_sweep_report counts and warns after
 * mc_forest_check_cdg (check: its return, acyclic: its verdict).
 */
#define MCAST_STEP_MORE		1
#define MCAST_STEP_WAIT		2
void mcast_sweep_begin(struct smd *smd);
void mcast_sweep_prepare(struct smd *smd, struct fabric *f);
int mcast_sweep_step(struct smd *smd, struct mc_forest *fo);
void mcast_sweep_report(struct smd *smd, struct mc_forest *fo, int check, bool acyclic,
			struct sweep_result *res);
/* The sweep ended: fo replaces the forest (NULL: it failed, the old one stays) */
void mcast_sweep_end(struct smd *smd, struct mc_forest *fo);
/* Joins or leaves happened: update trees and MFTs soon (mcast_run) */
void mcast_changed(void *ctx);
/* From the event loop, outside sweeps: run a pending update */
void mcast_run(struct smd *smd);
const struct mcast_stats *mcast_stats(const struct smd *smd);
/* The groups, and the forest over the current model (NULL before a sweep) */
struct mc_db *mcast_db(const struct smd *smd);
struct mc_forest *mcast_forest(const struct smd *smd);

#endif
