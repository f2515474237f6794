/* SPDX-License-Identifier: MIT */
/*
 * Multicast in the daemon: the groups (topo/mcast.c) live as long as smd,
 * the trees and MFTs (topo/mcast_tree.c) as long as the model they were
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
 * A heavy sweep, on its new model f with routes r: departed members go,
 * every tree is computed and every switch's MFT read and written where it
 * differs. *out: the forest to keep when the sweep succeeds.
 */
int mcast_sweep(struct smd *smd, struct fabric *f, const struct route_result *r,
		struct sweep_result *res, struct mc_forest **out);
/* The sweep succeeded: its forest replaces the old one */
void mcast_adopt(struct smd *smd, struct mc_forest *fo);
/* Joins or leaves happened: update trees and MFTs soon (mcast_run) */
void mcast_changed(void *ctx);
/* From the event loop, outside sweeps: run a pending update */
void mcast_run(struct smd *smd);
const struct mcast_stats *mcast_stats(const struct smd *smd);
/* The groups, and the forest over the current model (NULL before a sweep) */
struct mc_db *mcast_db(const struct smd *smd);
struct mc_forest *mcast_forest(const struct smd *smd);

#endif
