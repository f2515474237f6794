// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "db/store.h"

struct store {
	sqlite3 *db;
	sqlite3_stmt *lookup;
	char err[256];
};

/* Each entry migrates from user_version i to i + 1 */
static const char *const migrations[] = {
	"CREATE TABLE port_lid ("
	"  guid INTEGER PRIMARY KEY,"		/* port GUID, as a signed 64-bit value */
	"  node_guid INTEGER NOT NULL,"
	"  lid INTEGER NOT NULL CHECK (lid BETWEEN 1 AND 49151),"
	"  lmc INTEGER NOT NULL DEFAULT 0,"
	"  node_desc TEXT NOT NULL DEFAULT '',"
	"  first_seen INTEGER NOT NULL,"
	"  last_seen INTEGER NOT NULL);"
	"CREATE TABLE sweep ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  started INTEGER NOT NULL, seconds REAL NOT NULL,"
	"  nodes INTEGER NOT NULL, switches INTEGER NOT NULL, cas INTEGER NOT NULL,"
	"  ports INTEGER NOT NULL, lids INTEGER NOT NULL,"
	"  smps_sent INTEGER NOT NULL, smps_timed_out INTEGER NOT NULL,"
	"  smps_retried INTEGER NOT NULL, up INTEGER NOT NULL);",
};

static int store_fail(struct store *s, int rc, const char *what)
{
	snprintf(s->err, sizeof(s->err), "%s: %s", what, s->db ? sqlite3_errmsg(s->db) :
		 sqlite3_errstr(rc));
	switch (rc & 0xff) {
	case SQLITE_NOTADB:
	case SQLITE_CORRUPT:
		return -EBADMSG;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	case SQLITE_READONLY:
	case SQLITE_PERM:
		return -EACCES;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_FULL:
		return -ENOSPC;
	default:
		return -EIO;
	}
}

static int store_quick_check(struct store *s)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(s->db, "PRAGMA quick_check", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return store_fail(s, rc, "checking");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *res = (const char *)sqlite3_column_text(st, 0);

		if (!res || strcmp(res, "ok")) {
			snprintf(s->err, sizeof(s->err), "integrity check failed: %s",
				 res ? res : "(no result)");
			sqlite3_finalize(st);
			return -EBADMSG;
		}
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_OK || rc == SQLITE_DONE ? 0 : store_fail(s, rc, "checking");
}

static int store_migrate(struct store *s, int readonly)
{
	sqlite3_stmt *st;
	int version, rc;
	char sql[64];

	rc = sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return store_fail(s, rc, "reading schema version");
	rc = sqlite3_step(st);
	version = rc == SQLITE_ROW ? sqlite3_column_int(st, 0) : -1;
	sqlite3_finalize(st);
	if (version < 0)
		return store_fail(s, rc, "reading schema version");
	if (version > STORE_SCHEMA_VERSION) {
		snprintf(s->err, sizeof(s->err), "schema version %d is newer than %d", version,
			 STORE_SCHEMA_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (readonly) {
		if (version < STORE_SCHEMA_VERSION) {
			snprintf(s->err, sizeof(s->err), "schema version %d is older than %d: "
				 "run smd once to migrate it", version, STORE_SCHEMA_VERSION);
			return -EPROTONOSUPPORT;
		}
		return 0;
	}
	for (int v = version; v < STORE_SCHEMA_VERSION; v++) {
		rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(s->db, migrations[v], NULL, NULL, NULL);
		snprintf(sql, sizeof(sql), "PRAGMA user_version = %d", v + 1);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
		if (rc == SQLITE_OK)
			rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
		if (rc != SQLITE_OK) {
			int r = store_fail(s, rc, "migrating schema");

			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return r;
		}
	}
	return 0;
}

int store_open(const char *path, int readonly, struct store **out)
{
	struct store *s = calloc(1, sizeof(*s));
	int flags = readonly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	int rc, r;

	if (!s)
		return -ENOMEM;
	*out = s;	/* so that the caller can read store_errmsg() on failure */
	rc = sqlite3_open_v2(path, &s->db, flags | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK)
		return store_fail(s, rc, "opening");
	sqlite3_busy_timeout(s->db, 5000);
	/*
	 * quick_check reads every page: a foreign, truncated or corrupt file
	 * is refused here, before anything could write to it.
	 */
	r = store_quick_check(s);
	if (r < 0)
		return r;
	r = store_migrate(s, readonly);
	if (r < 0)
		return r;
	if (!readonly) {
		sqlite3_exec(s->db, "PRAGMA journal_mode = WAL", NULL, NULL, NULL);
		sqlite3_exec(s->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
	}
	rc = sqlite3_prepare_v2(s->db, "SELECT lid FROM port_lid WHERE guid = ?", -1,
				&s->lookup, NULL);
	if (rc != SQLITE_OK)
		return store_fail(s, rc, "preparing");
	return 0;
}

struct store *store_close(struct store *s)
{
	if (!s)
		return NULL;
	sqlite3_finalize(s->lookup);
	sqlite3_close(s->db);
	free(s);
	return NULL;
}

const char *store_errmsg(const struct store *s)
{
	return s ? s->err : "out of memory";
}

int store_lid_lookup(struct store *s, uint64_t port_guid, uint16_t *lid)
{
	int rc, r = -ENOENT;

	sqlite3_reset(s->lookup);
	sqlite3_bind_int64(s->lookup, 1, (sqlite3_int64)port_guid);
	rc = sqlite3_step(s->lookup);
	if (rc == SQLITE_ROW) {
		sqlite3_int64 v = sqlite3_column_int64(s->lookup, 0);

		if (v >= LID_UCAST_MIN && v <= LID_UCAST_MAX) {
			*lid = (uint16_t)v;
			r = 0;
		}
	} else if (rc != SQLITE_DONE) {
		r = store_fail(s, rc, "looking up a LID");
	}
	sqlite3_reset(s->lookup);
	return r;
}

int store_save_sweep(struct store *s, const struct fabric *f, const struct store_sweep *sw)
{
	sqlite3_stmt *up = NULL, *ins = NULL;
	int rc;

	rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return store_fail(s, rc, "starting a transaction");
	/* LIDs now held by another port are no longer remembered for the old one */
	rc = sqlite3_prepare_v2(s->db,
		"INSERT INTO port_lid (guid, node_guid, lid, lmc, node_desc, first_seen, last_seen)"
		" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
		" ON CONFLICT (guid) DO UPDATE SET node_guid = ?2, lid = ?3, lmc = ?4,"
		" node_desc = ?5, last_seen = ?6", -1, &up, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(s->db,
			"DELETE FROM port_lid WHERE guid <> ?2 AND lid <= ?1 + (1 << ?3) - 1"
			" AND lid + (1 << lmc) - 1 >= ?1", -1, &ins, NULL);
	for (size_t i = 0; rc == SQLITE_OK && i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 0; rc == SQLITE_OK && pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];

			if (!fabric_is_endport(p) || !p->lid)
				continue;
			sqlite3_reset(ins);
			sqlite3_bind_int(ins, 1, p->lid);
			sqlite3_bind_int64(ins, 2, (sqlite3_int64)p->guid);
			sqlite3_bind_int(ins, 3, p->lmc);
			rc = sqlite3_step(ins);
			if (rc != SQLITE_DONE)
				break;
			sqlite3_reset(up);
			sqlite3_bind_int64(up, 1, (sqlite3_int64)p->guid);
			sqlite3_bind_int64(up, 2, (sqlite3_int64)n->guid);
			sqlite3_bind_int(up, 3, p->lid);
			sqlite3_bind_int(up, 4, p->lmc);
			sqlite3_bind_text(up, 5, n->desc, -1, SQLITE_STATIC);
			sqlite3_bind_int64(up, 6, sw->started);
			rc = sqlite3_step(up);
			rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
		}
	}
	sqlite3_finalize(up);
	sqlite3_finalize(ins);
	if (rc == SQLITE_OK) {
		sqlite3_stmt *st;
		rc = sqlite3_prepare_v2(s->db,
			"INSERT INTO sweep (started, seconds, nodes, switches, cas, ports, lids,"
			" smps_sent, smps_timed_out, smps_retried, up)"
			" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", -1, &st, NULL);
		if (rc == SQLITE_OK) {
			sqlite3_bind_int64(st, 1, sw->started);
			sqlite3_bind_double(st, 2, sw->seconds);
			sqlite3_bind_int(st, 3, (int)sw->nodes);
			sqlite3_bind_int(st, 4, (int)sw->switches);
			sqlite3_bind_int(st, 5, (int)sw->cas);
			sqlite3_bind_int(st, 6, (int)sw->ports);
			sqlite3_bind_int(st, 7, (int)sw->lids);
			sqlite3_bind_int64(st, 8, (sqlite3_int64)sw->smps_sent);
			sqlite3_bind_int64(st, 9, (sqlite3_int64)sw->smps_timed_out);
			sqlite3_bind_int64(st, 10, (sqlite3_int64)sw->smps_retried);
			sqlite3_bind_int(st, 11, sw->up);
			rc = sqlite3_step(st);
			rc = rc == SQLITE_DONE ? SQLITE_OK : rc;
			sqlite3_finalize(st);
		}
	}
	if (rc != SQLITE_OK) {
		int r = store_fail(s, rc, "saving the sweep");

		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return r;
	}
	rc = sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		int r = store_fail(s, rc, "committing the sweep");

		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return r;
	}
	return 0;
}

int store_last_sweep(struct store *s, struct store_sweep *out)
{
	sqlite3_stmt *st;
	int rc;

	rc = sqlite3_prepare_v2(s->db,
		"SELECT started, seconds, nodes, switches, cas, ports, lids, smps_sent,"
		" smps_timed_out, smps_retried, up FROM sweep ORDER BY id DESC LIMIT 1",
		-1, &st, NULL);
	if (rc != SQLITE_OK)
		return store_fail(s, rc, "reading sweeps");
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		out->started = sqlite3_column_int64(st, 0);
		out->seconds = sqlite3_column_double(st, 1);
		out->nodes = (unsigned int)sqlite3_column_int(st, 2);
		out->switches = (unsigned int)sqlite3_column_int(st, 3);
		out->cas = (unsigned int)sqlite3_column_int(st, 4);
		out->ports = (unsigned int)sqlite3_column_int(st, 5);
		out->lids = (unsigned int)sqlite3_column_int(st, 6);
		out->smps_sent = (uint64_t)sqlite3_column_int64(st, 7);
		out->smps_timed_out = (uint64_t)sqlite3_column_int64(st, 8);
		out->smps_retried = (uint64_t)sqlite3_column_int64(st, 9);
		out->up = sqlite3_column_int(st, 10);
	}
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? -ENOENT : store_fail(s, rc, "reading sweeps");
}

int store_foreach_lid(struct store *s, int (*cb)(void *ctx, const struct store_lid *l),
		      void *ctx)
{
	sqlite3_stmt *st;
	int rc, r = 0;

	rc = sqlite3_prepare_v2(s->db,
		"SELECT guid, node_guid, lid, lmc, last_seen, node_desc FROM port_lid"
		" ORDER BY lid", -1, &st, NULL);
	if (rc != SQLITE_OK)
		return store_fail(s, rc, "reading LIDs");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_lid l = { 0 };
		const unsigned char *d = sqlite3_column_text(st, 5);

		l.guid = (uint64_t)sqlite3_column_int64(st, 0);
		l.node_guid = (uint64_t)sqlite3_column_int64(st, 1);
		l.lid = (uint16_t)sqlite3_column_int(st, 2);
		l.lmc = (uint8_t)sqlite3_column_int(st, 3);
		l.last_seen = sqlite3_column_int64(st, 4);
		snprintf(l.desc, sizeof(l.desc), "%s", d ? (const char *)d : "");
		r = cb(ctx, &l);
		if (r)
			break;
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(s, rc, "reading LIDs");
	sqlite3_finalize(st);
	return r;
}
