/* SPDX-License-Identifier: MIT */
/*
 * Persistent state in SQLite: the LID every port GUID was given, and a
 * record of each sweep. The schema is versioned with PRAGMA user_version
 * and migrated forward on open. Only this folder speaks SQL.
 */
#ifndef SMD_DB_STORE_H
#define SMD_DB_STORE_H

#include <stdint.h>

#include "topo/fabric.h"

#define STORE_SCHEMA_VERSION 1

struct store;

struct store_sweep {
	int64_t started;	/* unix seconds */
	double seconds;
	unsigned int nodes, switches, cas, ports, lids;
	uint64_t smps_sent, smps_timed_out, smps_retried;
	int up;			/* 1 when the subnet came up */
};

struct store_lid {
	uint64_t guid;
	uint64_t node_guid;
	uint16_t lid;
	uint8_t lmc;
	int64_t last_seen;
	char desc[SMP_DATA_SIZE + 1];
};

/*
 * Opens (creating it when missing) and migrates the database. -EBADMSG for
 * a file that is not a database or is corrupt, -EPROTONOSUPPORT for a
 * schema newer than this build: the file is left untouched in both cases.
 */
int store_open(const char *path, int readonly, struct store **out);
struct store *store_close(struct store *s);
/* Human-readable reason for the last failure, or "" */
const char *store_errmsg(const struct store *s);
int store_lid_lookup(struct store *s, uint64_t port_guid, uint16_t *lid);
/* Record the endports' LIDs and the sweep, in one transaction */
int store_save_sweep(struct store *s, const struct fabric *f, const struct store_sweep *sw);
int store_last_sweep(struct store *s, struct store_sweep *out);
/* Iterate remembered LIDs in LID order; cb returns non-zero to stop */
int store_foreach_lid(struct store *s, int (*cb)(void *ctx, const struct store_lid *l),
		      void *ctx);

#endif
