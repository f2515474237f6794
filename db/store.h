/* SPDX-License-Identifier: MIT */
/*
 * Persistent state in SQLite: the fabric as the last sweep saw it (nodes,
 * ports, links, switches), the LID every port GUID was given (kept while
 * the port is absent), and a history of sweeps and of what changed between
 * them (events). The schema is versioned with PRAGMA user_version and
 * migrated forward on open; man/smctl.8 documents it for operators. Every
 * sweep is saved in one transaction. Only this folder speaks SQL.
 */
#ifndef SMD_DB_STORE_H
#define SMD_DB_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "topo/fabric.h"
#include "topo/lid.h"

#define STORE_SCHEMA_VERSION 7
/* How long a write waits for another process's lock before -EBUSY */
#define STORE_BUSY_TIMEOUT_MS 2000
/* History kept: the newest sweeps (with their events) and events */
#define STORE_KEEP_SWEEPS 20000
#define STORE_KEEP_EVENTS 200000
/* Health events the performance manager keeps by default (smd: health_events_kept) */
#define STORE_KEEP_PERF_EVENTS 100000

struct store;

/* A partition as the sweep that saved it knew it (its name from the partitions file) */
struct store_partition {
	uint16_t pkey;		/* the low 15 bits */
	bool ipoib;		/* it has an IPoIB broadcast group */
	char name[64];
};

/* One endport's membership of one partition */
struct store_port_pkey {
	uint64_t port_guid;	/* a switch: its node GUID (port 0) */
	uint16_t pkey;		/* the full bit set for full members */
};

struct store_sweep {
	int64_t id;		/* read back only */
	int64_t started;	/* unix seconds */
	int64_t finished;	/* unix seconds; 0 when saving: started + seconds */
	double seconds;
	unsigned int nodes, switches, cas, ports, lids;
	unsigned int links;
	unsigned int events;	/* read back only: events the sweep recorded */
	uint64_t smps_sent, smps_timed_out, smps_retried;
	uint64_t sm_node_guid, sm_port_guid;	/* where the SM ran from */
	int up;			/* 1 when the subnet came up */
	int err;		/* 0, or -errno when the sweep failed before the end */
	char error[96];		/* read back only: what err said */
	/* Saved with the fabric: the partitions, and every endport's P_Keys from it */
	const struct store_partition *partitions;
	size_t npartitions;
};

struct store_lid {
	uint64_t guid;
	uint64_t node_guid;
	uint16_t lid;
	uint8_t lmc;
	int64_t last_seen;
	bool present;		/* the port was in the last saved fabric */
	char desc[SMP_DATA_SIZE + 1];
};

/* One row of the event table, as text ready to print */
struct store_event {
	int64_t id;
	int64_t sweep_id;	/* 0: not from a sweep (smctl) */
	int64_t time;
	char kind[24];
	uint64_t node_guid;	/* 0 when none */
	int port_num;		/* -1 when none */
	uint64_t port_guid;	/* 0 when none */
	uint64_t peer_guid;	/* links: the other end; lid_released: the new holder */
	int peer_port;		/* -1 when none */
	char old_value[SMP_DATA_SIZE * 2];
	char new_value[SMP_DATA_SIZE * 2];
	char detail[SMP_DATA_SIZE * 2];
};

/*
 * Opens (creating it when missing) and migrates the database. -EBADMSG for
 * a file that is not a database or is corrupt, -EPROTONOSUPPORT for a
 * schema newer than this build: the file is left untouched in both cases.
 * -EBUSY when another process holds a lock longer than the busy timeout.
 */
int store_open(const char *path, int readonly, struct store **out);
struct store *store_close(struct store *s);
/* Human-readable reason for the last failure, or "" */
/* The connection runs in SQLite's defensive mode, with an untrusted schema */
bool store_defensive(const struct store *s);
const char *store_errmsg(const struct store *s);
/*
 * From any thread, for shutdown: a store_save_sweep() running now or later
 * commits nothing (-ECANCELED, rolled back) unless it is committing already.
 */
void store_interrupt(struct store *s);
/*
 * Moves a database that store_open() refused aside, with its -wal and -shm
 * files: path becomes aside = "path.corrupt-<unix time>" (written to
 * aside[len]). 0, or -errno from rename() (aside says which file failed).
 */
int store_set_aside(const char *path, int64_t now, char *aside, size_t len);
int store_lid_lookup(struct store *s, uint64_t port_guid, uint16_t *lid);
/*
 * Every remembered LID, for lid_assign_reserved(): *out is malloc'ed (free
 * it), *n entries; 0 or -errno.
 */
int store_lid_reservations(struct store *s, struct lid_reservation **out, size_t *n);
/*
 * LIDs given out by another SM (OpenSM's guid2lid: db/guid2lid.h) become
 * remembered LIDs, all in one transaction, each recorded as a lid_imported
 * event whose detail is source. A GUID the database remembers a LID for
 * keeps it (known; differ: how many of those the source gave another LID).
 * An entry whose LIDs the database remembers for another GUID refuses the
 * whole import: -EEXIST, *clash its index, store_errmsg() says whose.
 */
struct store_import_stats {
	size_t imported, known, differ;
	size_t clash;
};
int store_lid_import(struct store *s, const struct lid_reservation *v, size_t n,
		     const char *source, int64_t now, struct store_import_stats *st);
/* Drop the LID remembered for a port GUID (*lid: what it was); -ENOENT if none */
int store_lid_forget(struct store *s, uint64_t port_guid, int64_t now, uint16_t *lid);
/*
 * Record the sweep and, when f is not NULL, the fabric it ended with: the
 * nodes, ports, links and switches, the endports' LIDs, and an event for
 * each difference from the fabric saved before. One transaction: all or
 * nothing. A failed sweep (sw->err) is saved with f NULL.
 */
int store_save_sweep(struct store *s, const struct fabric *f, const struct store_sweep *sw);
/* The newest sweep, whatever its outcome; -ENOENT when none */
int store_last_sweep(struct store *s, struct store_sweep *out);
/*
 * The fabric of the newest sweep that saved one, as a struct fabric (node
 * info, descriptions, switch info, PortInfo of every port seen, links,
 * endport LIDs; fab_port.load = LIDs a switch port forwards). *sweep gets
 * that sweep. -ENOENT when no fabric was saved yet.
 */
int store_load_fabric(struct store *s, struct fabric **out, struct store_sweep *sweep);
/* Iterate remembered LIDs in LID order; cb returns non-zero to stop */
int store_foreach_lid(struct store *s, int (*cb)(void *ctx, const struct store_lid *l),
		      void *ctx);
/* The newest `limit` sweeps / events, oldest first; cb returns non-zero to stop */
int store_foreach_sweep(struct store *s, unsigned int limit,
			int (*cb)(void *ctx, const struct store_sweep *sw), void *ctx);
int store_foreach_event(struct store *s, unsigned int limit,
			int (*cb)(void *ctx, const struct store_event *ev), void *ctx);

/*
 * Multicast groups: the MLID each live group's MGID holds, so that groups
 * rejoined after a restart get their MLIDs back. A group that appeared
 * (present) is written, one that went is deleted: all in one transaction.
 */
struct store_mcast {
	uint8_t mgid[16];
	uint16_t mlid;
	int present;
};

int store_mcast_save(struct store *s, const struct store_mcast *g, size_t n, int64_t now);
/*
 * The partitions of the newest sweep that saved a fabric, by P_Key, and
 * every endport's membership, by P_Key then port GUID
 */
int store_foreach_partition(struct store *s,
			    int (*cb)(void *ctx, const struct store_partition *p), void *ctx);
int store_foreach_port_pkey(struct store *s,
			    int (*cb)(void *ctx, const struct store_port_pkey *k), void *ctx);
int store_foreach_mcast(struct store *s, int (*cb)(void *ctx, const struct store_mcast *g),
			void *ctx);

/*
 * Registered services (SA ServiceRecords): the record's bytes as the SA
 * keeps them, keyed by ServiceID, ServiceGID and ServiceP_Key (which the
 * caller takes out of the record); expires: Unix time the lease ends, 0
 * never. present 0 deletes.
 */
#define STORE_SERVICE_SIZE	176
struct store_service {
	uint64_t id;
	uint8_t gid[16];
	uint16_t pkey;
	uint8_t record[STORE_SERVICE_SIZE];
	int64_t expires;
	int present;
};
int store_service_save(struct store *s, const struct store_service *v, size_t n, int64_t now);
int store_foreach_service(struct store *s, int (*cb)(void *ctx, const struct store_service *v),
			  void *ctx);

/*
 * Fabric health (issue 20). A link the health rules took out of service,
 * by the port that broke a rule (node GUID, port 1-254): since when (Unix
 * time), which rule, why. present 0 deletes the row (smctl port enable).
 */
struct store_isolated {
	uint64_t node_guid;
	uint8_t port;
	int64_t since;
	char rule[24];
	char reason[256];
	int present;
};
int store_isolated_save(struct store *s, const struct store_isolated *v, size_t n, int64_t now);
int store_foreach_isolated(struct store *s, int (*cb)(void *ctx, const struct store_isolated *v),
			   void *ctx);
/*
 * An error event: a counter's increments in one interval (kind: the
 * counter's key, count, total), a link seen down, a reset, a rule broken,
 * an isolation. Added in one transaction, then all but the newest keep
 * rows are pruned.
 */
struct store_perf_event {
	int64_t time;
	uint64_t node_guid;
	uint8_t port;
	char kind[32];
	uint64_t count;
	uint64_t total;
	char detail[160];
};
int store_perf_events_add(struct store *s, const struct store_perf_event *v, size_t n,
			  uint64_t keep);
/* The newest limit events, oldest first */
int store_foreach_perf_event(struct store *s, unsigned int limit,
			     int (*cb)(void *ctx, const struct store_perf_event *v), void *ctx);

#endif
