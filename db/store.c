// SPDX-License-Identifier: MIT
/*
 * The SQLite store. GUIDs are kept as SQLite integers, i.e. the 64 bits
 * read as a signed value (0x8000... and above are negative); every query
 * binds and reads them as sqlite3_int64 and converts back to uint64_t.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "db/store.h"
#include "db/store_int.h"



/*
 * Each entry migrates from user_version i to i + 1. An entry is never
 * changed once released: a new schema is a new entry. man/smctl.8
 * (SCHEMA) describes the result for operators.
 */
static const char *const migrations[] = {
	/* 0 -> 1: LIDs and sweeps */
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

	/* 1 -> 2: the fabric (nodes, ports, links, switches), sweep outcomes, events */
	"ALTER TABLE sweep ADD COLUMN finished INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE sweep ADD COLUMN outcome TEXT NOT NULL DEFAULT 'not up'"
	"  CHECK (outcome IN ('up', 'not up', 'failed'));"
	"ALTER TABLE sweep ADD COLUMN error TEXT NOT NULL DEFAULT '';"
	"ALTER TABLE sweep ADD COLUMN links INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE sweep ADD COLUMN events INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE sweep ADD COLUMN sm_node_guid INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE sweep ADD COLUMN sm_port_guid INTEGER NOT NULL DEFAULT 0;"
	"UPDATE sweep SET finished = started + CAST(seconds AS INTEGER),"
	"  outcome = CASE WHEN up THEN 'up' ELSE 'not up' END;"
	"CREATE INDEX port_lid_by_lid ON port_lid (lid);"
	"CREATE TABLE node ("
	"  guid INTEGER PRIMARY KEY,"
	"  type INTEGER NOT NULL CHECK (type BETWEEN 1 AND 3),"
	"  num_ports INTEGER NOT NULL CHECK (num_ports BETWEEN 1 AND 255),"
	"  description TEXT NOT NULL DEFAULT '',"
	"  sys_guid INTEGER NOT NULL DEFAULT 0,"
	"  vendor_id INTEGER NOT NULL DEFAULT 0,"
	"  device_id INTEGER NOT NULL DEFAULT 0,"
	"  revision INTEGER NOT NULL DEFAULT 0,"
	"  present INTEGER NOT NULL DEFAULT 1 CHECK (present IN (0, 1)),"
	"  first_seen INTEGER NOT NULL,"
	"  last_seen INTEGER NOT NULL,"
	"  last_sweep INTEGER NOT NULL);"
	"CREATE TABLE port ("
	"  node_guid INTEGER NOT NULL REFERENCES node (guid) ON DELETE CASCADE,"
	"  num INTEGER NOT NULL CHECK (num BETWEEN 0 AND 255),"
	"  guid INTEGER NOT NULL,"
	"  lid INTEGER NOT NULL,"
	"  lmc INTEGER NOT NULL,"
	"  state INTEGER NOT NULL,"
	"  phys_state INTEGER NOT NULL,"
	"  width INTEGER NOT NULL,"
	"  speed INTEGER NOT NULL,"
	"  speed_ext INTEGER NOT NULL,"
	"  cap_mask INTEGER NOT NULL,"
	"  mtu INTEGER NOT NULL,"
	"  mtu_cap INTEGER NOT NULL,"
	"  vl_cap INTEGER NOT NULL,"
	"  op_vls INTEGER NOT NULL,"
	"  lids_routed INTEGER NOT NULL DEFAULT 0,"
	"  present INTEGER NOT NULL DEFAULT 1 CHECK (present IN (0, 1)),"
	"  first_seen INTEGER NOT NULL,"
	"  last_seen INTEGER NOT NULL,"
	"  last_sweep INTEGER NOT NULL,"
	"  PRIMARY KEY (node_guid, num)) WITHOUT ROWID;"
	"CREATE INDEX port_by_guid ON port (guid);"
	"CREATE TABLE link ("
	"  node_a INTEGER NOT NULL, port_a INTEGER NOT NULL,"
	"  node_b INTEGER NOT NULL, port_b INTEGER NOT NULL,"
	"  first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL,"
	"  last_sweep INTEGER NOT NULL,"
	"  PRIMARY KEY (node_a, port_a),"
	"  UNIQUE (node_b, port_b),"
	"  CHECK (node_a < node_b OR (node_a = node_b AND port_a < port_b)),"
	"  FOREIGN KEY (node_a, port_a) REFERENCES port (node_guid, num) ON DELETE CASCADE,"
	"  FOREIGN KEY (node_b, port_b) REFERENCES port (node_guid, num) ON DELETE CASCADE"
	") WITHOUT ROWID;"
	"CREATE TABLE switch ("
	"  node_guid INTEGER PRIMARY KEY REFERENCES node (guid) ON DELETE CASCADE,"
	"  lft_cap INTEGER NOT NULL,"
	"  lft_top INTEGER NOT NULL,"
	"  enhanced_port0 INTEGER NOT NULL,"
	"  life_time INTEGER NOT NULL,"
	"  lids_routed INTEGER NOT NULL,"
	"  lids_unrouted INTEGER NOT NULL,"
	"  ports_used INTEGER NOT NULL,"
	"  max_port_lids INTEGER NOT NULL,"
	"  last_sweep INTEGER NOT NULL);"
	"CREATE TABLE event ("
	"  id INTEGER PRIMARY KEY AUTOINCREMENT,"
	"  sweep_id INTEGER REFERENCES sweep (id) ON DELETE CASCADE,"
	"  time INTEGER NOT NULL,"
	"  kind TEXT NOT NULL,"
	"  node_guid INTEGER, port_num INTEGER, port_guid INTEGER,"
	"  peer_guid INTEGER, peer_port INTEGER,"
	"  old_value, new_value,"
	"  detail TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX event_by_sweep ON event (sweep_id);",

	/* 2 -> 3: the MLID of every live multicast group, by MGID */
	"CREATE TABLE mcast_group ("
	"  mgid BLOB PRIMARY KEY CHECK (length(mgid) = 16),"
	"  mlid INTEGER NOT NULL CHECK (mlid BETWEEN 49152 AND 65534),"
	"  created INTEGER NOT NULL,"
	"  last_seen INTEGER NOT NULL) WITHOUT ROWID;",

	/* 3 -> 4: partitions and every endport's P_Keys, as the last sweep gave them */
	"CREATE TABLE partition ("
	"  pkey INTEGER PRIMARY KEY CHECK (pkey BETWEEN 1 AND 32767),"
	"  name TEXT NOT NULL DEFAULT '',"
	"  ipoib INTEGER NOT NULL DEFAULT 0 CHECK (ipoib IN (0, 1)),"
	"  last_sweep INTEGER NOT NULL);"
	"CREATE TABLE port_pkey ("
	"  port_guid INTEGER NOT NULL,"
	"  pkey INTEGER NOT NULL CHECK (pkey BETWEEN 1 AND 32767),"
	"  full INTEGER NOT NULL CHECK (full IN (0, 1)),"
	"  PRIMARY KEY (pkey, port_guid)) WITHOUT ROWID;",

	/*
	 * 4 -> 5: registered services (SA ServiceRecords, IBA 15.2.5.14): the
	 * record as the SA keeps it, keyed by ServiceID, ServiceGID and
	 * ServiceP_Key; expires: when the lease ends (Unix time), 0 never
	 */
	"CREATE TABLE service ("
	"  id INTEGER NOT NULL,"
	"  gid BLOB NOT NULL CHECK (length(gid) = 16),"
	"  pkey INTEGER NOT NULL CHECK (pkey BETWEEN 0 AND 65535),"
	"  record BLOB NOT NULL CHECK (length(record) = 176),"
	"  expires INTEGER NOT NULL,"
	"  registered INTEGER NOT NULL,"
	"  PRIMARY KEY (id, gid, pkey)) WITHOUT ROWID;",

	/*
	 * 5 -> 6: the speeds of today's links: CapabilityMask2 (it says whether
	 * the IBA 1.7 field is valid), LinkSpeedExtActive2 (1: XDR) and FDR10
	 * (the port's Mellanox ExtendedPortInfo says it is active)
	 */
	"ALTER TABLE port ADD COLUMN cap_mask2 INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE port ADD COLUMN speed_ext2 INTEGER NOT NULL DEFAULT 0;"
	"ALTER TABLE port ADD COLUMN fdr10 INTEGER NOT NULL DEFAULT 0 CHECK (fdr10 IN (0, 1));",

	/*
	 * 6 -> 7: fabric health (issue 20): the links the health rules took
	 * out of service, by the port that broke a rule (they stay out across
	 * restarts until `smctl port enable`), and a bounded history of error
	 * events (counter increments, links seen down, resets, rules broken)
	 */
	"CREATE TABLE isolated_port ("
	"  node_guid INTEGER NOT NULL,"
	"  port INTEGER NOT NULL CHECK (port BETWEEN 1 AND 254),"
	"  since INTEGER NOT NULL,"
	"  rule TEXT NOT NULL DEFAULT '',"
	"  reason TEXT NOT NULL DEFAULT '',"
	"  PRIMARY KEY (node_guid, port)) WITHOUT ROWID;"
	"CREATE TABLE perf_event ("
	"  id INTEGER PRIMARY KEY,"
	"  time INTEGER NOT NULL,"
	"  node_guid INTEGER NOT NULL,"
	"  port INTEGER NOT NULL CHECK (port BETWEEN 0 AND 254),"
	"  kind TEXT NOT NULL,"
	"  count INTEGER NOT NULL DEFAULT 0,"
	"  total INTEGER NOT NULL DEFAULT 0,"
	"  detail TEXT NOT NULL DEFAULT '');"
	"CREATE INDEX perf_event_by_port ON perf_event (node_guid, port, time);",
};

_Static_assert(sizeof(migrations) / sizeof(migrations[0]) == STORE_SCHEMA_VERSION,
	       "one migration per schema version");

int store_fail(struct store *s, int rc, const char *what)
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
		snprintf(s->err, sizeof(s->err), "%s: the database is locked by another process "
			 "(waited %d ms)", what, STORE_BUSY_TIMEOUT_MS);
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_FULL:
		return -ENOSPC;
	default:
		return -EIO;
	}
}

int store_prep(struct store *s, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);

	return rc == SQLITE_OK ? 0 : store_fail(s, rc, "preparing a statement");
}

int store_run(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : store_fail(s, rc, what);
}

int store_exec(struct store *s, const char *sql, const char *what)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : store_fail(s, rc, what);
}

void store_bind_guid(sqlite3_stmt *st, int i, uint64_t g)
{
	sqlite3_bind_int64(st, i, (sqlite3_int64)g);
}

uint64_t store_col_guid(sqlite3_stmt *st, int i)
{
	return (uint64_t)sqlite3_column_int64(st, i);
}

void store_col_text(sqlite3_stmt *st, int i, char *buf, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(buf, len, "%s", t ? (const char *)t : "");
}


void store_bind_vals(sqlite3_stmt *st, const struct sql_val *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int k = (int)i + 1;

		switch (v[i].type) {
		case SQL_INT:
			sqlite3_bind_int64(st, k, v[i].i);
			break;
		case SQL_TEXT:
			sqlite3_bind_text(st, k, v[i].p, -1, SQLITE_STATIC);
			break;
		case SQL_BLOB:
			sqlite3_bind_blob(st, k, v[i].p, v[i].len, SQLITE_STATIC);
			break;
		default:
			sqlite3_bind_null(st, k);
			break;
		}
	}
}

int store_put_row(struct store *s, sqlite3_stmt *st, const char *what,
		   const struct sql_val *v, size_t n)
{
	store_bind_vals(st, v, n);
	return store_run(s, st, what);
}



int store_save_rows(struct store *s, const struct row_table *t, const void *rows, size_t n,
		     int64_t now)
{
	sqlite3_stmt *put = NULL, *del = NULL;
	int r;

	if (!n)
		return 0;
	r = store_exec(s, "BEGIN IMMEDIATE", "starting a transaction");
	if (r < 0)
		return r;
	r = store_prep(s, t->put_sql, &put);
	if (!r)
		r = store_prep(s, t->del_sql, &del);
	for (size_t i = 0; i < n && !r; i++) {
		struct sql_val v[ROW_VALS_MAX];
		bool present = t->row(rows, i, now, v);

		r = store_put_row(s, present ? put : del, t->what, v, present ? t->nput : t->ndel);
	}
	sqlite3_finalize(put);
	sqlite3_finalize(del);
	if (!r)
		r = store_exec(s, "COMMIT", "committing");
	if (r < 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

int store_each_row(struct store *s, const char *sql, const struct sql_val *v, size_t nv,
		    const char *what, int (*row)(sqlite3_stmt *st, void *arg), void *arg)
{
	sqlite3_stmt *st = NULL;
	int r = store_prep(s, sql, &st), rc = SQLITE_DONE;

	if (r)
		return r;
	store_bind_vals(st, v, nv);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		r = row(st, arg);
		if (r)
			break;
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(s, rc, what);
	sqlite3_finalize(st);
	return r;
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
	/*
	 * Defensive: no SQL can corrupt the file (writable_schema, raw page
	 * writes), and nothing in the schema runs with side effects: a
	 * database someone else wrote is data, never code.
	 */
	rc = sqlite3_db_config(s->db, SQLITE_DBCONFIG_DEFENSIVE, 1, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_db_config(s->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, 0, NULL);
	if (rc != SQLITE_OK)
		return store_fail(s, rc, "setting defensive mode");
	sqlite3_busy_timeout(s->db, STORE_BUSY_TIMEOUT_MS);
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
		/*
		 * WAL: a save is one append to the log, readers (smctl) never
		 * block it, and a process killed at any point leaves the last
		 * committed state. NORMAL is durable across process crashes.
		 */
		r = store_exec(s, "PRAGMA journal_mode = WAL", "switching to WAL");
		if (r < 0)
			return r;
		sqlite3_exec(s->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
	}
	r = store_exec(s, "PRAGMA foreign_keys = ON", "enabling foreign keys");
	if (r < 0)
		return r;
	return store_prep(s, "SELECT lid FROM port_lid WHERE guid = ?", &s->lookup);
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

bool store_defensive(const struct store *s)
{
	int on = 0, trusted = 1;

	sqlite3_db_config(s->db, SQLITE_DBCONFIG_DEFENSIVE, -1, &on);
	sqlite3_db_config(s->db, SQLITE_DBCONFIG_TRUSTED_SCHEMA, -1, &trusted);
	return on && !trusted;
}

void store_interrupt(struct store *s)
{
	if (!s)
		return;
	atomic_store(&s->cancel, true);
	sqlite3_interrupt(s->db);
}

const char *store_errmsg(const struct store *s)
{
	return s ? s->err : "out of memory";
}

int store_set_aside(const char *path, int64_t now, char *aside, size_t len)
{
	static const char *const side[] = { "-wal", "-shm", "-journal" };
	char from[4096], to[4096];

	if ((size_t)snprintf(aside, len, "%s.corrupt-%lld", path, (long long)now) >= len)
		return -ENAMETOOLONG;
	/* The side files first: a main file without its log is what we would open */
	for (size_t i = 0; i < sizeof(side) / sizeof(side[0]); i++) {
		if ((size_t)snprintf(from, sizeof(from), "%s%s", path, side[i]) >= sizeof(from) ||
		    (size_t)snprintf(to, sizeof(to), "%s%s", aside, side[i]) >= sizeof(to))
			return -ENAMETOOLONG;
		if (rename(from, to) < 0 && errno != ENOENT) {
			int r = -errno;

			snprintf(aside, len, "%s", from);
			return r;
		}
	}
	if (rename(path, aside) < 0) {
		int r = -errno;

		snprintf(aside, len, "%s", path);
		return r;
	}
	return 0;
}

int store_lid_lookup(struct store *s, uint64_t port_guid, uint16_t *lid)
{
	int rc, r = -ENOENT;

	sqlite3_reset(s->lookup);
	store_bind_guid(s->lookup, 1, port_guid);
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

int store_lid_reservations(struct store *s, struct lid_reservation **out, size_t *n)
{
	struct lid_reservation *v = NULL;
	size_t len = 0, cap = 0;
	sqlite3_stmt *st;
	int rc, r;

	*out = NULL;
	*n = 0;
	r = store_prep(s, "SELECT guid, lid, lmc FROM port_lid ORDER BY lid", &st);
	if (r < 0)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 256;
			struct lid_reservation *nv = realloc(v, ncap * sizeof(*nv));

			if (!nv) {
				sqlite3_finalize(st);
				free(v);
				return -ENOMEM;
			}
			v = nv;
			cap = ncap;
		}
		v[len].guid = store_col_guid(st, 0);
		v[len].lid = (uint16_t)sqlite3_column_int(st, 1);
		v[len].lmc = (uint8_t)sqlite3_column_int(st, 2);
		len++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		free(v);
		return store_fail(s, rc, "reading LIDs");
	}
	*out = v;
	*n = len;
	return 0;
}

/* ---- events ---- */


struct sql_val store_v_opt(bool has, int64_t i)
{
	return has ? V_INT(i) : V_NULL;
}

struct sql_val store_v_change(const char *str, bool has, int64_t i)
{
	return str ? V_TEXT(str) : store_v_opt(has, i);
}

int store_event_add(struct store *s, sqlite3_stmt *st, int64_t sweep_id, int64_t now,
		     const struct ev *e)
{
	return PUT_ROW(s, st, "recording an event",
		       store_v_opt(sweep_id, sweep_id), V_INT(now), V_TEXT(e->kind),
		       store_v_opt(e->node, (int64_t)e->node), store_v_opt(e->port >= 0, e->port),
		       store_v_opt(e->port_guid, (int64_t)e->port_guid), store_v_opt(e->peer, (int64_t)e->peer),
		       store_v_opt(e->peer_port >= 0, e->peer_port),
		       store_v_change(e->old_s, e->has_old, e->old_i),
		       store_v_change(e->new_s, e->has_new, e->new_i),
		       V_TEXT(e->detail ? e->detail : ""));
}


const char store_sql_event_insert[] =
	"INSERT INTO event (sweep_id, time, kind, node_guid, port_num, port_guid, peer_guid,"
	" peer_port, old_value, new_value, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

int store_lid_forget(struct store *s, uint64_t port_guid, int64_t now, uint16_t *lid)
{
	sqlite3_stmt *get = NULL, *del = NULL, *ev = NULL;
	uint64_t node = 0;
	char desc[SMP_DATA_SIZE + 1] = "";
	int rc, r;

	r = store_exec(s, "BEGIN IMMEDIATE", "starting a transaction");
	if (r < 0)
		return r;
	r = store_prep(s, "SELECT lid, node_guid, node_desc FROM port_lid WHERE guid = ?", &get);
	if (!r)
		r = store_prep(s, "DELETE FROM port_lid WHERE guid = ?", &del);
	if (!r)
		r = store_prep(s, store_sql_event_insert, &ev);
	if (!r) {
		store_bind_guid(get, 1, port_guid);
		rc = sqlite3_step(get);
		if (rc == SQLITE_ROW) {
			*lid = (uint16_t)sqlite3_column_int(get, 0);
			node = store_col_guid(get, 1);
			store_col_text(get, 2, desc, sizeof(desc));
		} else if (rc == SQLITE_DONE) {
			snprintf(s->err, sizeof(s->err), "no LID remembered for port GUID 0x%016llx",
				 (unsigned long long)port_guid);
			r = -ENOENT;
		} else {
			r = store_fail(s, rc, "reading a LID");
		}
	}
	if (!r) {
		struct ev e = EV("lid_forgotten");

		e.node = node;
		e.port_guid = port_guid;
		e.has_old = true;
		e.old_i = *lid;
		e.detail = desc;
		store_bind_guid(del, 1, port_guid);
		r = store_run(s, del, "forgetting a LID");
		if (!r)
			r = store_event_add(s, ev, 0, now, &e);
	}
	sqlite3_finalize(get);
	sqlite3_finalize(del);
	sqlite3_finalize(ev);
	if (!r)
		r = store_exec(s, "COMMIT", "committing");
	if (r < 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

int store_lid_import(struct store *s, const struct lid_reservation *v, size_t n,
		     const char *source, int64_t now, struct store_import_stats *st)
{
	sqlite3_stmt *get = NULL, *clash = NULL, *put = NULL, *ev = NULL;
	int rc, r;

	*st = (struct store_import_stats){ 0 };
	r = store_exec(s, "BEGIN IMMEDIATE", "starting a transaction");
	if (r < 0)
		return r;
	r = store_prep(s, "SELECT lid FROM port_lid WHERE guid = ?", &get);
	/* Blocks are LMC-aligned and at most 128 LIDs: one that overlaps starts near */
	if (!r)
		r = store_prep(s, "SELECT guid, lid, lmc FROM port_lid"
			 " WHERE lid BETWEEN ?1 - 127 AND ?1 + (1 << ?2) - 1"
			 " AND lid + (1 << lmc) - 1 >= ?1 LIMIT 1", &clash);
	if (!r)
		r = store_prep(s, "INSERT INTO port_lid (guid, node_guid, lid, lmc, node_desc, first_seen,"
			 " last_seen) VALUES (?1, 0, ?2, ?3, '', ?4, ?4)", &put);
	if (!r)
		r = store_prep(s, store_sql_event_insert, &ev);
	for (size_t i = 0; !r && i < n; i++) {
		struct ev e = EV("lid_imported");

		store_bind_guid(get, 1, v[i].guid);
		rc = sqlite3_step(get);
		if (rc == SQLITE_ROW) {
			st->known++;
			st->differ += sqlite3_column_int(get, 0) != v[i].lid;
			sqlite3_reset(get);
			continue;
		}
		sqlite3_reset(get);
		if (rc != SQLITE_DONE) {
			r = store_fail(s, rc, "reading a LID");
			break;
		}
		/* Rows imported above count too: the import is checked against itself */
		sqlite3_bind_int(clash, 1, v[i].lid);
		sqlite3_bind_int(clash, 2, v[i].lmc);
		rc = sqlite3_step(clash);
		if (rc == SQLITE_ROW) {
			snprintf(s->err, sizeof(s->err), "LID %u of port GUID 0x%016llx is remembered "
				 "for port GUID 0x%016llx (LID %d, LMC %d): smctl lids --forget that "
				 "GUID first if it is gone", v[i].lid, (unsigned long long)v[i].guid,
				 (unsigned long long)store_col_guid(clash, 0), sqlite3_column_int(clash, 1),
				 sqlite3_column_int(clash, 2));
			st->clash = i;
			r = -EEXIST;
		} else if (rc != SQLITE_DONE) {
			r = store_fail(s, rc, "reading LIDs");
		}
		sqlite3_reset(clash);
		if (r)
			break;
		r = PUT_ROW(s, put, "saving a LID", V_INT((int64_t)v[i].guid), V_INT(v[i].lid),
			    V_INT(v[i].lmc), V_INT(now));
		if (r)
			break;
		e.port_guid = v[i].guid;
		e.has_new = true;
		e.new_i = v[i].lid;
		e.detail = source;
		r = store_event_add(s, ev, 0, now, &e);
		st->imported += !r;
	}
	sqlite3_finalize(get);
	sqlite3_finalize(clash);
	sqlite3_finalize(put);
	sqlite3_finalize(ev);
	if (!r)
		r = store_exec(s, "COMMIT", "committing");
	if (r < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		st->imported = 0;
	}
	return r;
}
