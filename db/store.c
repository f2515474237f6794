// SPDX-License-Identifier: MIT
/*
 * The SQLite store. GUIDs are kept as SQLite integers, i.e. the 64 bits
 * read as a signed value (0x8000... and above are negative); every query
 * binds and reads them as sqlite3_int64 and converts back to uint64_t.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "db/store.h"

#define STR_(x) #x
#define STR(x) STR_(x)

struct store {
	sqlite3 *db;
	sqlite3_stmt *lookup;
	char err[256];
	atomic_bool cancel;	/* store_interrupt(): no sweep is committed any more */
};

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

static int prep(struct store *s, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);

	return rc == SQLITE_OK ? 0 : store_fail(s, rc, "preparing a statement");
}

/* Run a statement that returns no rows; it is reset for the next use */
static int run(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE || rc == SQLITE_ROW ? 0 : store_fail(s, rc, what);
}

static int exec(struct store *s, const char *sql, const char *what)
{
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? 0 : store_fail(s, rc, what);
}

static void bind_guid(sqlite3_stmt *st, int i, uint64_t g)
{
	sqlite3_bind_int64(st, i, (sqlite3_int64)g);
}

static uint64_t col_guid(sqlite3_stmt *st, int i)
{
	return (uint64_t)sqlite3_column_int64(st, i);
}

static void col_text(sqlite3_stmt *st, int i, char *buf, size_t len)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	snprintf(buf, len, "%s", t ? (const char *)t : "");
}

/*
 * Rows, stated by their columns: a value for each parameter of a
 * statement (an integer of any width, which SQLite keeps as INTEGER, text,
 * a blob or NULL), bound in order as ?1, ?2, ...
 */
struct sql_val {
	enum { SQL_NULL, SQL_INT, SQL_TEXT, SQL_BLOB } type;
	int64_t i;
	const void *p;
	int len;
};

#define V_NULL		((struct sql_val){ .type = SQL_NULL })
#define V_INT(x)	((struct sql_val){ .type = SQL_INT, .i = (int64_t)(x) })
#define V_TEXT(t)	((struct sql_val){ .type = SQL_TEXT, .p = (t) })
#define V_BLOB(b, n)	((struct sql_val){ .type = SQL_BLOB, .p = (b), .len = (int)(n) })

/*
 * Bind v[0..n) to st. Text and blobs are not copied: every caller steps
 * the statement before its values go, and binds again before the next step.
 */
static void bind_vals(sqlite3_stmt *st, const struct sql_val *v, size_t n)
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

/* Write one row: st with v bound, run and reset */
static int put_row(struct store *s, sqlite3_stmt *st, const char *what,
		   const struct sql_val *v, size_t n)
{
	bind_vals(st, v, n);
	return run(s, st, what);
}

#define PUT_ROW(s, st, what, ...)						\
	put_row(s, st, what, (const struct sql_val[]){ __VA_ARGS__ },		\
		sizeof((const struct sql_val[]){ __VA_ARGS__ }) / sizeof(struct sql_val))

/*
 * A table written by keyed rows, each upserted or deleted: put_sql takes a
 * row's nput values, del_sql the first ndel of them (its key); row() gives
 * row i of rows (and now) and says whether it is present
 */
struct row_table {
	const char *put_sql, *del_sql;
	size_t nput, ndel;
	const char *what;
	bool (*row)(const void *rows, size_t i, int64_t now, struct sql_val *v);
};

#define ROW_VALS_MAX 8

/* n rows of t in one transaction: all of them or none */
static int save_rows(struct store *s, const struct row_table *t, const void *rows, size_t n,
		     int64_t now)
{
	sqlite3_stmt *put = NULL, *del = NULL;
	int r;

	if (!n)
		return 0;
	r = exec(s, "BEGIN IMMEDIATE", "starting a transaction");
	if (r < 0)
		return r;
	r = prep(s, t->put_sql, &put);
	if (!r)
		r = prep(s, t->del_sql, &del);
	for (size_t i = 0; i < n && !r; i++) {
		struct sql_val v[ROW_VALS_MAX];
		bool present = t->row(rows, i, now, v);

		r = put_row(s, present ? put : del, t->what, v, present ? t->nput : t->ndel);
	}
	sqlite3_finalize(put);
	sqlite3_finalize(del);
	if (!r)
		r = exec(s, "COMMIT", "committing");
	if (r < 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

/*
 * Every row sql selects (its parameters v), handed to row() with arg until
 * one returns non-zero, which is returned
 */
static int each_row(struct store *s, const char *sql, const struct sql_val *v, size_t nv,
		    const char *what, int (*row)(sqlite3_stmt *st, void *arg), void *arg)
{
	sqlite3_stmt *st = NULL;
	int r = prep(s, sql, &st), rc = SQLITE_DONE;

	if (r)
		return r;
	bind_vals(st, v, nv);
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
		r = exec(s, "PRAGMA journal_mode = WAL", "switching to WAL");
		if (r < 0)
			return r;
		sqlite3_exec(s->db, "PRAGMA synchronous = NORMAL", NULL, NULL, NULL);
	}
	r = exec(s, "PRAGMA foreign_keys = ON", "enabling foreign keys");
	if (r < 0)
		return r;
	return prep(s, "SELECT lid FROM port_lid WHERE guid = ?", &s->lookup);
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
	bind_guid(s->lookup, 1, port_guid);
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
	r = prep(s, "SELECT guid, lid, lmc FROM port_lid ORDER BY lid", &st);
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
		v[len].guid = col_guid(st, 0);
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

struct ev {
	const char *kind;
	uint64_t node, port_guid, peer;		/* 0: none */
	int port, peer_port;			/* -1: none */
	bool has_old, has_new;
	int64_t old_i, new_i;
	const char *old_s, *new_s;		/* instead of old_i/new_i */
	const char *detail;
};

#define EV(k) (struct ev){ .kind = (k), .port = -1, .peer_port = -1 }

/* A value, or NULL when the event has none */
static struct sql_val v_opt(bool has, int64_t i)
{
	return has ? V_INT(i) : V_NULL;
}

static struct sql_val v_change(const char *str, bool has, int64_t i)
{
	return str ? V_TEXT(str) : v_opt(has, i);
}

static int event_add(struct store *s, sqlite3_stmt *st, int64_t sweep_id, int64_t now,
		     const struct ev *e)
{
	return PUT_ROW(s, st, "recording an event",
		       v_opt(sweep_id, sweep_id), V_INT(now), V_TEXT(e->kind),
		       v_opt(e->node, (int64_t)e->node), v_opt(e->port >= 0, e->port),
		       v_opt(e->port_guid, (int64_t)e->port_guid), v_opt(e->peer, (int64_t)e->peer),
		       v_opt(e->peer_port >= 0, e->peer_port),
		       v_change(e->old_s, e->has_old, e->old_i),
		       v_change(e->new_s, e->has_new, e->new_i),
		       V_TEXT(e->detail ? e->detail : ""));
}

static const char sql_event_insert[] =
	"INSERT INTO event (sweep_id, time, kind, node_guid, port_num, port_guid, peer_guid,"
	" peer_port, old_value, new_value, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)";

int store_lid_forget(struct store *s, uint64_t port_guid, int64_t now, uint16_t *lid)
{
	sqlite3_stmt *get = NULL, *del = NULL, *ev = NULL;
	uint64_t node = 0;
	char desc[SMP_DATA_SIZE + 1] = "";
	int rc, r;

	r = exec(s, "BEGIN IMMEDIATE", "starting a transaction");
	if (r < 0)
		return r;
	r = prep(s, "SELECT lid, node_guid, node_desc FROM port_lid WHERE guid = ?", &get);
	if (!r)
		r = prep(s, "DELETE FROM port_lid WHERE guid = ?", &del);
	if (!r)
		r = prep(s, sql_event_insert, &ev);
	if (!r) {
		bind_guid(get, 1, port_guid);
		rc = sqlite3_step(get);
		if (rc == SQLITE_ROW) {
			*lid = (uint16_t)sqlite3_column_int(get, 0);
			node = col_guid(get, 1);
			col_text(get, 2, desc, sizeof(desc));
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
		bind_guid(del, 1, port_guid);
		r = run(s, del, "forgetting a LID");
		if (!r)
			r = event_add(s, ev, 0, now, &e);
	}
	sqlite3_finalize(get);
	sqlite3_finalize(del);
	sqlite3_finalize(ev);
	if (!r)
		r = exec(s, "COMMIT", "committing");
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
	r = exec(s, "BEGIN IMMEDIATE", "starting a transaction");
	if (r < 0)
		return r;
	r = prep(s, "SELECT lid FROM port_lid WHERE guid = ?", &get);
	/* Blocks are LMC-aligned and at most 128 LIDs: one that overlaps starts near */
	if (!r)
		r = prep(s, "SELECT guid, lid, lmc FROM port_lid"
			 " WHERE lid BETWEEN ?1 - 127 AND ?1 + (1 << ?2) - 1"
			 " AND lid + (1 << lmc) - 1 >= ?1 LIMIT 1", &clash);
	if (!r)
		r = prep(s, "INSERT INTO port_lid (guid, node_guid, lid, lmc, node_desc, first_seen,"
			 " last_seen) VALUES (?1, 0, ?2, ?3, '', ?4, ?4)", &put);
	if (!r)
		r = prep(s, sql_event_insert, &ev);
	for (size_t i = 0; !r && i < n; i++) {
		struct ev e = EV("lid_imported");

		bind_guid(get, 1, v[i].guid);
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
				 (unsigned long long)col_guid(clash, 0), sqlite3_column_int(clash, 1),
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
		r = event_add(s, ev, 0, now, &e);
		st->imported += !r;
	}
	sqlite3_finalize(get);
	sqlite3_finalize(clash);
	sqlite3_finalize(put);
	sqlite3_finalize(ev);
	if (!r)
		r = exec(s, "COMMIT", "committing");
	if (r < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		st->imported = 0;
	}
	return r;
}

/* ---- saving a sweep ---- */

struct save {
	struct store *s;
	const struct fabric *f;
	const struct store_sweep *sw;
	int64_t id;		/* of the sweep row */
	int64_t now;		/* seen at: when the sweep started */
	int64_t finished;
	unsigned int events;
	bool *fresh;		/* by node idx: (re)appeared in this sweep */
	sqlite3_stmt *ev;
};

static int save_event(struct save *sv, const struct ev *e)
{
	sv->events++;
	return event_add(sv->s, sv->ev, sv->id, sv->now, e);
}

static const char *outcome_name(const struct store_sweep *sw)
{
	return sw->err ? "failed" : sw->up ? "up" : "not up";
}

static int save_sweep_row(struct save *sv)
{
	const struct store_sweep *sw = sv->sw;
	sqlite3_stmt *st;
	int r;

	r = prep(sv->s,
		 "INSERT INTO sweep (started, finished, seconds, outcome, error, nodes, switches,"
		 " cas, ports, links, lids, smps_sent, smps_timed_out, smps_retried, up,"
		 " sm_node_guid, sm_port_guid)"
		 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, sw->started);
	sqlite3_bind_int64(st, 2, sv->finished);
	sqlite3_bind_double(st, 3, sw->seconds);
	sqlite3_bind_text(st, 4, outcome_name(sw), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, sw->err ? strerror(-sw->err) : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 6, (int)sw->nodes);
	sqlite3_bind_int(st, 7, (int)sw->switches);
	sqlite3_bind_int(st, 8, (int)sw->cas);
	sqlite3_bind_int(st, 9, (int)sw->ports);
	sqlite3_bind_int(st, 10, (int)sw->links);
	sqlite3_bind_int(st, 11, (int)sw->lids);
	sqlite3_bind_int64(st, 12, (sqlite3_int64)sw->smps_sent);
	sqlite3_bind_int64(st, 13, (sqlite3_int64)sw->smps_timed_out);
	sqlite3_bind_int64(st, 14, (sqlite3_int64)sw->smps_retried);
	sqlite3_bind_int(st, 15, sw->up && !sw->err);
	bind_guid(st, 16, sw->sm_node_guid);
	bind_guid(st, 17, sw->sm_port_guid);
	r = run(sv->s, st, "saving the sweep");
	sqlite3_finalize(st);
	sv->id = sqlite3_last_insert_rowid(sv->s->db);
	return r;
}

static int save_nodes(struct save *sv)
{
	const struct fabric *f = sv->f;
	sqlite3_stmt *get = NULL, *ins = NULL, *upd = NULL;
	int r;

	r = prep(sv->s, "SELECT description, present FROM node WHERE guid = ?", &get);
	if (!r)
		r = prep(sv->s,
			 "INSERT INTO node (guid, type, num_ports, description, sys_guid, vendor_id,"
			 " device_id, revision, present, first_seen, last_seen, last_sweep)"
			 " VALUES (?1, ?2, ?3, coalesce(?4, ''), ?5, ?6, ?7, ?8, 1, ?9, ?9, ?10)",
			 &ins);
	if (!r)
		r = prep(sv->s,
			 "UPDATE node SET type = ?2, num_ports = ?3,"
			 " description = coalesce(?4, description), sys_guid = ?5, vendor_id = ?6,"
			 " device_id = ?7, revision = ?8, present = 1, last_seen = ?9,"
			 " last_sweep = ?10 WHERE guid = ?1", &upd);
	for (size_t i = 0; !r && i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];
		char old[SMP_DATA_SIZE + 1] = "";
		sqlite3_stmt *st;
		bool known = false, present = false;
		int rc;

		bind_guid(get, 1, n->guid);
		rc = sqlite3_step(get);
		if (rc == SQLITE_ROW) {
			known = true;
			col_text(get, 0, old, sizeof(old));
			present = sqlite3_column_int(get, 1);
		} else if (rc != SQLITE_DONE) {
			r = store_fail(sv->s, rc, "reading a node");
		}
		sqlite3_reset(get);
		if (r)
			break;
		if (!present) {
			struct ev e = EV("node_appeared");

			e.node = n->guid;
			e.has_new = true;
			e.new_i = n->type;
			e.detail = n->desc_valid ? n->desc : old;
			sv->fresh[n->idx] = true;
			r = save_event(sv, &e);
		} else if (n->desc_valid && strcmp(old, n->desc)) {
			struct ev e = EV("node_renamed");

			e.node = n->guid;
			e.old_s = old;
			e.new_s = n->desc;
			r = save_event(sv, &e);
		}
		if (r)
			break;
		st = known ? upd : ins;
		bind_guid(st, 1, n->guid);
		sqlite3_bind_int(st, 2, n->type);
		sqlite3_bind_int(st, 3, n->num_ports);
		if (n->desc_valid)
			sqlite3_bind_text(st, 4, n->desc, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 4);
		bind_guid(st, 5, n->ni.sys_guid);
		sqlite3_bind_int64(st, 6, n->ni.vendor_id);
		sqlite3_bind_int64(st, 7, n->ni.device_id);
		sqlite3_bind_int64(st, 8, n->ni.revision);
		sqlite3_bind_int64(st, 9, sv->now);
		sqlite3_bind_int64(st, 10, sv->id);
		r = run(sv->s, st, "saving a node");
	}
	sqlite3_finalize(get);
	sqlite3_finalize(ins);
	sqlite3_finalize(upd);
	return r;
}

/* A switch's PortGUID is that of port 0, the same for every port (IBA 14.2.5.3) */
static uint64_t port_guid_of(const struct fab_port *p)
{
	const struct fab_node *n = p->node;

	if (n->type == NODE_TYPE_SWITCH)
		return n->ni.port_guid ? n->ni.port_guid : n->guid;
	return p->guid;
}

static int save_ports(struct save *sv)
{
	const struct fabric *f = sv->f;
	sqlite3_stmt *get = NULL, *put = NULL, *swp = NULL;
	uint32_t *load;
	int r;

	load = calloc(256, sizeof(*load));
	if (!load)
		return -ENOMEM;
	r = prep(sv->s, "SELECT present, state FROM port WHERE node_guid = ? AND num = ?", &get);
	if (!r)
		r = prep(sv->s,
			 "INSERT INTO port (node_guid, num, guid, lid, lmc, state, phys_state,"
			 " width, speed, speed_ext, cap_mask, mtu, mtu_cap, vl_cap, op_vls,"
			 " lids_routed, present, first_seen, last_seen, last_sweep, cap_mask2,"
			 " speed_ext2, fdr10)"
			 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
			 " ?15, ?16, 1, ?17, ?17, ?18, ?19, ?20, ?21) ON CONFLICT (node_guid, num)"
			 " DO UPDATE SET guid = ?3, lid = ?4, lmc = ?5, state = ?6, phys_state = ?7,"
			 " width = ?8, speed = ?9, speed_ext = ?10, cap_mask = ?11, mtu = ?12,"
			 " mtu_cap = ?13, vl_cap = ?14, op_vls = ?15, lids_routed = ?16,"
			 " present = 1, last_seen = ?17, last_sweep = ?18, cap_mask2 = ?19,"
			 " speed_ext2 = ?20, fdr10 = ?21", &put);
	if (!r)
		r = prep(sv->s,
			 "INSERT INTO switch (node_guid, lft_cap, lft_top, enhanced_port0, life_time,"
			 " lids_routed, lids_unrouted, ports_used, max_port_lids, last_sweep)"
			 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
			 " ON CONFLICT (node_guid) DO UPDATE SET lft_cap = ?2, lft_top = ?3,"
			 " enhanced_port0 = ?4, life_time = ?5, lids_routed = ?6, lids_unrouted = ?7,"
			 " ports_used = ?8, max_port_lids = ?9, last_sweep = ?10", &swp);
	for (size_t i = 0; !r && i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];
		uint32_t routed = 0, unrouted = 0, used = 0, most = 0;

		if (n->type == NODE_TYPE_SWITCH)
			fabric_count_routes(f, n, load, &routed, &unrouted);
		for (unsigned int pn = 0; !r && pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];
			const struct port_info *pi = &p->pi;
			uint32_t lids = n->type == NODE_TYPE_SWITCH ? load[pn] : 0;
			bool present = false;
			int old_state = 0, rc;

			if (!p->pi_valid)
				continue;
			if (lids) {
				used++;
				most = lids > most ? lids : most;
			}
			sqlite3_bind_int64(get, 1, (sqlite3_int64)n->guid);
			sqlite3_bind_int(get, 2, (int)pn);
			rc = sqlite3_step(get);
			if (rc == SQLITE_ROW) {
				present = sqlite3_column_int(get, 0);
				old_state = sqlite3_column_int(get, 1);
			} else if (rc != SQLITE_DONE) {
				r = store_fail(sv->s, rc, "reading a port");
			}
			sqlite3_reset(get);
			if (r)
				break;
			if (!present && !sv->fresh[n->idx]) {
				struct ev e = EV("port_appeared");

				e.node = n->guid;
				e.port = (int)pn;
				e.port_guid = port_guid_of(p);
				e.has_new = true;
				e.new_i = pi->port_state;
				r = save_event(sv, &e);
			} else if (present && old_state != pi->port_state) {
				struct ev e = EV("port_state");

				e.node = n->guid;
				e.port = (int)pn;
				e.port_guid = port_guid_of(p);
				e.has_old = e.has_new = true;
				e.old_i = old_state;
				e.new_i = pi->port_state;
				r = save_event(sv, &e);
			}
			if (r)
				break;
			bind_guid(put, 1, n->guid);
			sqlite3_bind_int(put, 2, (int)pn);
			bind_guid(put, 3, port_guid_of(p));
			sqlite3_bind_int(put, 4, pi->lid);
			sqlite3_bind_int(put, 5, pi->lmc);
			sqlite3_bind_int(put, 6, pi->port_state);
			sqlite3_bind_int(put, 7, pi->phys_state);
			sqlite3_bind_int(put, 8, pi->link_width_active);
			sqlite3_bind_int(put, 9, pi->link_speed_active);
			sqlite3_bind_int(put, 10, pi->link_speed_ext_active);
			sqlite3_bind_int64(put, 11, pi->cap_mask);
			sqlite3_bind_int(put, 12, pi->neighbor_mtu);
			sqlite3_bind_int(put, 13, pi->mtu_cap);
			sqlite3_bind_int(put, 14, pi->vl_cap);
			sqlite3_bind_int(put, 15, pi->op_vls);
			sqlite3_bind_int64(put, 16, lids);
			sqlite3_bind_int64(put, 17, sv->now);
			sqlite3_bind_int64(put, 18, sv->id);
			sqlite3_bind_int(put, 19, pi->cap_mask2);
			sqlite3_bind_int(put, 20, pi->link_speed_ext_active2);
			sqlite3_bind_int(put, 21, p->fdr10);
			r = run(sv->s, put, "saving a port");
		}
		if (r || n->type != NODE_TYPE_SWITCH || !n->si_valid)
			continue;
		bind_guid(swp, 1, n->guid);
		sqlite3_bind_int(swp, 2, n->si.lft_cap);
		sqlite3_bind_int(swp, 3, n->si.lft_top);
		sqlite3_bind_int(swp, 4, n->si.enhanced_port0);
		sqlite3_bind_int(swp, 5, n->si.life_time_value);
		sqlite3_bind_int64(swp, 6, routed);
		sqlite3_bind_int64(swp, 7, unrouted);
		sqlite3_bind_int64(swp, 8, used);
		sqlite3_bind_int64(swp, 9, most);
		sqlite3_bind_int64(swp, 10, sv->id);
		r = run(sv->s, swp, "saving a switch");
	}
	free(load);
	sqlite3_finalize(get);
	sqlite3_finalize(put);
	sqlite3_finalize(swp);
	return r;
}

/* Nodes and ports the sweep did not see: events, then present = 0 */
static int save_vanished(struct save *sv)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	r = prep(sv->s, "SELECT guid, description FROM node WHERE present = 1 AND last_sweep <> ?",
		 &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, sv->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !r) {
		struct ev e = EV("node_vanished");

		e.node = col_guid(st, 0);
		e.detail = (const char *)sqlite3_column_text(st, 1);
		r = save_event(sv, &e);
	}
	if (!r && rc != SQLITE_DONE && rc != SQLITE_ROW)
		r = store_fail(sv->s, rc, "reading nodes");
	sqlite3_finalize(st);
	if (r)
		return r;
	r = prep(sv->s, "UPDATE node SET present = 0 WHERE present = 1 AND last_sweep <> ?", &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, sv->id);
	r = run(sv->s, st, "marking nodes absent");
	sqlite3_finalize(st);
	if (r)
		return r;

	/* Ports of nodes still here; those of vanished nodes go without a word */
	r = prep(sv->s,
		 "SELECT p.node_guid, p.num, p.guid, p.state FROM port p JOIN node n"
		 " ON n.guid = p.node_guid WHERE p.present = 1 AND p.last_sweep <> ?1"
		 " AND n.present = 1", &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, sv->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !r) {
		struct ev e = EV("port_vanished");

		e.node = col_guid(st, 0);
		e.port = sqlite3_column_int(st, 1);
		e.port_guid = col_guid(st, 2);
		e.has_old = true;
		e.old_i = sqlite3_column_int(st, 3);
		r = save_event(sv, &e);
	}
	if (!r && rc != SQLITE_DONE && rc != SQLITE_ROW)
		r = store_fail(sv->s, rc, "reading ports");
	sqlite3_finalize(st);
	if (r)
		return r;
	r = prep(sv->s, "UPDATE port SET present = 0 WHERE present = 1 AND last_sweep <> ?", &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, sv->id);
	r = run(sv->s, st, "marking ports absent");
	sqlite3_finalize(st);
	return r;
}

/* A cable's ends in the order the link table keeps them */
static bool end_before(uint64_t ga, unsigned int pa, uint64_t gb, unsigned int pb)
{
	if (ga != gb)
		return (int64_t)ga < (int64_t)gb;
	return pa < pb;
}

/* Both ends were saved as ports (a link needs both rows) */
static bool cable_saved(const struct fab_port *p)
{
	return p->num > 0 && p->pi_valid && p->peer && p->peer->pi_valid && p->peer->num > 0;
}

struct old_link {
	uint64_t a, b;
	uint8_t pa, pb;
};

static int save_links(struct save *sv)
{
	const struct fabric *f = sv->f;
	sqlite3_stmt *sel = NULL, *del = NULL, *keep = NULL, *ins = NULL;
	struct old_link *old = NULL;
	size_t nold = 0, cap = 0;
	int rc, r;

	/* Links saved before: kept when the fabric still has that cable */
	r = prep(sv->s, "SELECT node_a, port_a, node_b, port_b FROM link", &sel);
	while (!r && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
		if (nold == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			struct old_link *n = realloc(old, ncap * sizeof(*n));

			if (!n) {
				r = -ENOMEM;
				break;
			}
			old = n;
			cap = ncap;
		}
		old[nold].a = col_guid(sel, 0);
		old[nold].pa = (uint8_t)sqlite3_column_int(sel, 1);
		old[nold].b = col_guid(sel, 2);
		old[nold].pb = (uint8_t)sqlite3_column_int(sel, 3);
		nold++;
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(sv->s, rc, "reading links");
	if (!r)
		r = prep(sv->s, "DELETE FROM link WHERE node_a = ? AND port_a = ?", &del);
	if (!r)
		r = prep(sv->s, "UPDATE link SET last_seen = ?3, last_sweep = ?4"
			 " WHERE node_a = ?1 AND port_a = ?2", &keep);
	if (!r)
		r = prep(sv->s, "INSERT INTO link (node_a, port_a, node_b, port_b, first_seen,"
			 " last_seen, last_sweep) VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)"
			 " ON CONFLICT (node_a, port_a) DO NOTHING", &ins);
	for (size_t i = 0; !r && i < nold; i++) {
		const struct fab_node *na = fabric_find(f, old[i].a), *nb = fabric_find(f, old[i].b);
		const struct fab_port *pa = fabric_port(na, old[i].pa);
		const struct fab_port *pb = fabric_port(nb, old[i].pb);
		sqlite3_stmt *st = keep;

		if (!pa || !pb || !cable_saved(pa) || pa->peer != pb) {
			st = del;
			if (na || nb) {
				struct ev e = EV("link_vanished");

				e.node = old[i].a;
				e.port = old[i].pa;
				e.peer = old[i].b;
				e.peer_port = old[i].pb;
				r = save_event(sv, &e);
			}
		} else {
			sqlite3_bind_int64(keep, 3, sv->now);
			sqlite3_bind_int64(keep, 4, sv->id);
		}
		bind_guid(st, 1, old[i].a);
		sqlite3_bind_int(st, 2, old[i].pa);
		if (!r)
			r = run(sv->s, st, "saving a link");
	}
	/* Cables not saved before: each once, from its lower end */
	for (size_t i = 0; !r && i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 1; !r && pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn], *q = p->peer;

			if (!cable_saved(p) || !end_before(n->guid, pn, q->node->guid, q->num))
				continue;
			bind_guid(ins, 1, n->guid);
			sqlite3_bind_int(ins, 2, (int)pn);
			bind_guid(ins, 3, q->node->guid);
			sqlite3_bind_int(ins, 4, q->num);
			sqlite3_bind_int64(ins, 5, sv->now);
			sqlite3_bind_int64(ins, 6, sv->id);
			r = run(sv->s, ins, "saving a link");
			/* No change: kept from before, its primary key is this end */
			if (r || !sqlite3_changes(sv->s->db))
				continue;
			if (!sv->fresh[n->idx] || !sv->fresh[q->node->idx]) {
				struct ev e = EV("link_appeared");

				e.node = n->guid;
				e.port = (int)pn;
				e.peer = q->node->guid;
				e.peer_port = q->num;
				r = save_event(sv, &e);
			}
		}
	}
	free(old);
	sqlite3_finalize(sel);
	sqlite3_finalize(del);
	sqlite3_finalize(keep);
	sqlite3_finalize(ins);
	return r;
}

struct ep_lid {
	uint64_t guid;
	uint16_t old;		/* remembered before this sweep, 0 if none */
	const struct fab_port *p;
};

static int cmp_ep(const void *a, const void *b)
{
	const struct ep_lid *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

/* The endports' LIDs: remembered by port GUID, even while the port is absent */
static int save_lids(struct save *sv)
{
	const struct fabric *f = sv->f;
	sqlite3_stmt *clash = NULL, *drop = NULL, *up = NULL;
	struct ep_lid *eps;
	size_t n = 0, cap = 0;
	int rc = SQLITE_DONE, r = 0;

	for (size_t i = 0; i < f->nnodes; i++)
		cap += (size_t)f->nodes[i]->num_ports + 1;
	eps = calloc(cap ? cap : 1, sizeof(*eps));
	if (!eps)
		return -ENOMEM;
	for (size_t i = 0; !r && i < f->nnodes; i++) {
		const struct fab_node *nd = f->nodes[i];

		for (unsigned int pn = 0; !r && pn <= nd->num_ports; pn++) {
			const struct fab_port *p = &nd->ports[pn];

			if (!fabric_is_endport(p) || !p->lid)
				continue;
			eps[n].guid = p->guid;
			eps[n].p = p;
			r = store_lid_lookup(sv->s, p->guid, &eps[n].old);
			if (r == -ENOENT) {
				eps[n].old = 0;
				r = 0;
			}
			n++;
		}
	}
	qsort(eps, n, sizeof(*eps), cmp_ep);
	/* LIDs now held by another port are no longer remembered for the old one */
	if (!r)
		r = prep(sv->s,
			 "SELECT guid, node_guid, lid FROM port_lid WHERE guid <> ?2"
			 " AND lid BETWEEN ?1 - 127 AND ?1 + (1 << ?3) - 1"
			 " AND lid + (1 << lmc) - 1 >= ?1", &clash);
	if (!r)
		r = prep(sv->s, "DELETE FROM port_lid WHERE guid = ?", &drop);
	if (!r)
		r = prep(sv->s,
			 "INSERT INTO port_lid (guid, node_guid, lid, lmc, node_desc, first_seen,"
			 " last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
			 " ON CONFLICT (guid) DO UPDATE SET node_guid = ?2, lid = ?3, lmc = ?4,"
			 " node_desc = ?5, last_seen = ?6", &up);
	for (size_t i = 0; !r && i < n; i++) {
		const struct fab_port *p = eps[i].p;
		const struct fab_node *nd = p->node;
		size_t nothers;

		do {
			uint64_t others[16];

			nothers = 0;
			sqlite3_bind_int(clash, 1, p->lid);
			bind_guid(clash, 2, p->guid);
			sqlite3_bind_int(clash, 3, p->lmc);
			while (!r && nothers < 16 && (rc = sqlite3_step(clash)) == SQLITE_ROW) {
				struct ep_lid key = { .guid = col_guid(clash, 0) };
				struct ev e = EV("lid_released");

				others[nothers++] = key.guid;
				/* A port of this fabric gets its own event below */
				if (bsearch(&key, eps, n, sizeof(*eps), cmp_ep))
					continue;
				e.node = col_guid(clash, 1);
				e.port_guid = key.guid;
				e.has_old = true;
				e.old_i = sqlite3_column_int(clash, 2);
				e.peer = p->guid;
				r = save_event(sv, &e);
			}
			if (!r && nothers < 16 && rc != SQLITE_DONE)
				r = store_fail(sv->s, rc, "reading LIDs");
			sqlite3_reset(clash);
			for (size_t k = 0; !r && k < nothers; k++) {
				bind_guid(drop, 1, others[k]);
				r = run(sv->s, drop, "forgetting a LID");
			}
		} while (!r && nothers == 16);
		if (r)
			break;
		bind_guid(up, 1, p->guid);
		bind_guid(up, 2, nd->guid);
		sqlite3_bind_int(up, 3, p->lid);
		sqlite3_bind_int(up, 4, p->lmc);
		sqlite3_bind_text(up, 5, nd->desc, -1, SQLITE_STATIC);
		sqlite3_bind_int64(up, 6, sv->now);
		r = run(sv->s, up, "saving a LID");
		if (!r && eps[i].old != p->lid) {
			struct ev e = EV(eps[i].old ? "lid_changed" : "lid_assigned");

			e.node = nd->guid;
			e.port = p->num;
			e.port_guid = p->guid;
			e.has_old = eps[i].old != 0;
			e.old_i = eps[i].old;
			e.has_new = true;
			e.new_i = p->lid;
			r = save_event(sv, &e);
		}
	}
	free(eps);
	sqlite3_finalize(clash);
	sqlite3_finalize(drop);
	sqlite3_finalize(up);
	return r;
}

static int save_finish(struct save *sv)
{
	sqlite3_stmt *st;
	int r;

	r = prep(sv->s, "UPDATE sweep SET events = ? WHERE id = ?", &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, sv->events);
	sqlite3_bind_int64(st, 2, sv->id);
	r = run(sv->s, st, "saving the sweep");
	sqlite3_finalize(st);
	if (r)
		return r;
	/* Bounded history: old sweeps take their events along (ON DELETE CASCADE) */
	r = prep(sv->s, "DELETE FROM sweep WHERE id <= ? - " STR(STORE_KEEP_SWEEPS), &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, sv->id);
	r = run(sv->s, st, "pruning sweeps");
	sqlite3_finalize(st);
	if (r)
		return r;
	return exec(sv->s, "DELETE FROM event WHERE id <= (SELECT max(id) FROM event) - "
		    STR(STORE_KEEP_EVENTS), "pruning events");
}

/* SQLite's progress handler during a save: non-zero interrupts the statement running */
static int save_cancelled(void *arg)
{
	struct store *s = arg;

	return atomic_load(&s->cancel);
}

/* The partitions and the endports' memberships: replaced whole */
static int save_partitions(struct save *sv)
{
	const struct fabric *f = sv->f;
	sqlite3_stmt *pt = NULL, *pk = NULL;
	int r;

	r = exec(sv->s, "DELETE FROM partition; DELETE FROM port_pkey", "clearing partitions");
	if (!r)
		r = prep(sv->s, "INSERT OR REPLACE INTO partition (pkey, name, ipoib, last_sweep)"
			 " VALUES (?, ?, ?, ?)", &pt);
	if (!r)
		r = prep(sv->s, "INSERT OR REPLACE INTO port_pkey (port_guid, pkey, full)"
			 " VALUES (?, ?, ?)", &pk);
	for (size_t i = 0; !r && i < sv->sw->npartitions; i++) {
		const struct store_partition *p = &sv->sw->partitions[i];

		r = PUT_ROW(sv->s, pt, "saving a partition",
			    V_INT(p->pkey & 0x7fff), V_TEXT(p->name), V_INT(p->ipoib),
			    V_INT(sv->id));
	}
	for (size_t i = 0; !r && i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 0; !r && pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];
			const uint16_t *k;
			unsigned int nk;

			if (!fabric_is_endport(p) || !p->lid || !p->pkey_tab)
				continue;
			k = fabric_port_pkeys(p, &nk);
			for (unsigned int j = 0; !r && j < nk; j++)
				r = PUT_ROW(sv->s, pk, "saving a port's P_Keys", V_INT(p->guid),
					    V_INT(k[j] & 0x7fff), V_INT(!!(k[j] & 0x8000)));
		}
	}
	sqlite3_finalize(pt);
	sqlite3_finalize(pk);
	return r;
}

int store_save_sweep(struct store *s, const struct fabric *f, const struct store_sweep *sw)
{
	struct save sv = { .s = s, .f = f, .sw = sw };
	int r;

	s->err[0] = 0;
	sv.now = sw->started;
	sv.finished = sw->finished ? sw->finished : sw->started + (int64_t)sw->seconds;
	if (f) {
		sv.fresh = calloc(f->nnodes ? f->nnodes : 1, sizeof(*sv.fresh));
		if (!sv.fresh)
			return -ENOMEM;
	}
	r = exec(s, "BEGIN IMMEDIATE", "starting a transaction");
	if (r) {
		free(sv.fresh);
		return r;
	}
	/*
	 * sqlite3_interrupt() stops only the statement running when it is
	 * called; this stops every later one too, so that a save abandoned
	 * at shutdown ends within a few thousand VM steps
	 */
	sqlite3_progress_handler(s->db, 1000, save_cancelled, s);
	r = prep(s, sql_event_insert, &sv.ev);
	if (!r)
		r = save_sweep_row(&sv);
	if (!r && f)
		r = save_nodes(&sv);
	if (!r && f)
		r = save_ports(&sv);
	if (!r && f)
		r = save_vanished(&sv);
	if (!r && f)
		r = save_links(&sv);
	if (!r && f)
		r = save_lids(&sv);
	if (!r && f)
		r = save_partitions(&sv);
	if (!r)
		r = save_finish(&sv);
	sqlite3_finalize(sv.ev);
	free(sv.fresh);
	sqlite3_progress_handler(s->db, 0, NULL, NULL);
	if (atomic_load(&s->cancel)) {
		/* whether a statement was interrupted or all of them ran */
		snprintf(s->err, sizeof(s->err), "saving the sweep: interrupted");
		r = -ECANCELED;
	}
	if (!r)
		r = exec(s, "COMMIT", "committing the sweep");
	if (r) {
		if (!s->err[0])
			snprintf(s->err, sizeof(s->err), "saving the sweep: %s", strerror(-r));
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	}
	return r;
}

/* ---- reading ---- */

#define SWEEP_COLUMNS \
	"id, started, finished, seconds, outcome, error, nodes, switches, cas, ports, links," \
	" lids, events, smps_sent, smps_timed_out, smps_retried, up, sm_node_guid, sm_port_guid"

static void read_sweep(sqlite3_stmt *st, struct store_sweep *out)
{
	const char *outcome = (const char *)sqlite3_column_text(st, 4);

	memset(out, 0, sizeof(*out));
	out->id = sqlite3_column_int64(st, 0);
	out->started = sqlite3_column_int64(st, 1);
	out->finished = sqlite3_column_int64(st, 2);
	out->seconds = sqlite3_column_double(st, 3);
	col_text(st, 5, out->error, sizeof(out->error));
	out->nodes = (unsigned int)sqlite3_column_int(st, 6);
	out->switches = (unsigned int)sqlite3_column_int(st, 7);
	out->cas = (unsigned int)sqlite3_column_int(st, 8);
	out->ports = (unsigned int)sqlite3_column_int(st, 9);
	out->links = (unsigned int)sqlite3_column_int(st, 10);
	out->lids = (unsigned int)sqlite3_column_int(st, 11);
	out->events = (unsigned int)sqlite3_column_int(st, 12);
	out->smps_sent = (uint64_t)sqlite3_column_int64(st, 13);
	out->smps_timed_out = (uint64_t)sqlite3_column_int64(st, 14);
	out->smps_retried = (uint64_t)sqlite3_column_int64(st, 15);
	out->up = sqlite3_column_int(st, 16);
	out->sm_node_guid = col_guid(st, 17);
	out->sm_port_guid = col_guid(st, 18);
	if (outcome && !strcmp(outcome, "failed"))
		out->err = -EIO;	/* the text says what it was */
}

static int one_sweep(struct store *s, const char *sql, struct store_sweep *out)
{
	sqlite3_stmt *st;
	int rc, r;

	r = prep(s, sql, &st);
	if (r)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		read_sweep(st, out);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? -ENOENT : store_fail(s, rc, "reading sweeps");
}

int store_last_sweep(struct store *s, struct store_sweep *out)
{
	return one_sweep(s, "SELECT " SWEEP_COLUMNS " FROM sweep ORDER BY id DESC LIMIT 1", out);
}

int store_foreach_sweep(struct store *s, unsigned int limit,
			int (*cb)(void *ctx, const struct store_sweep *sw), void *ctx)
{
	sqlite3_stmt *st;
	int rc, r;

	r = prep(s, "SELECT * FROM (SELECT " SWEEP_COLUMNS " FROM sweep ORDER BY id DESC"
		 " LIMIT ?) ORDER BY id", &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_sweep sw;

		read_sweep(st, &sw);
		r = cb(ctx, &sw);
		if (r)
			break;
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(s, rc, "reading sweeps");
	sqlite3_finalize(st);
	return r;
}

struct event_each {
	int (*cb)(void *ctx, const struct store_event *ev);
	void *ctx;
};

static int event_each_row(sqlite3_stmt *st, void *arg)
{
	const struct event_each *a = arg;
	struct store_event e;

	memset(&e, 0, sizeof(e));
	e.id = sqlite3_column_int64(st, 0);
	e.sweep_id = sqlite3_column_int64(st, 1);
	e.time = sqlite3_column_int64(st, 2);
	col_text(st, 3, e.kind, sizeof(e.kind));
	e.node_guid = col_guid(st, 4);
	e.port_num = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 5);
	e.port_guid = col_guid(st, 6);
	e.peer_guid = col_guid(st, 7);
	e.peer_port = sqlite3_column_type(st, 8) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 8);
	col_text(st, 9, e.old_value, sizeof(e.old_value));
	col_text(st, 10, e.new_value, sizeof(e.new_value));
	col_text(st, 11, e.detail, sizeof(e.detail));
	return a->cb(a->ctx, &e);
}

int store_foreach_event(struct store *s, unsigned int limit,
			int (*cb)(void *ctx, const struct store_event *ev), void *ctx)
{
	struct event_each a = { cb, ctx };
	const struct sql_val lim = V_INT(limit);

	return each_row(s, "SELECT * FROM (SELECT id, sweep_id, time, kind, node_guid, port_num,"
			" port_guid, peer_guid, peer_port, old_value, new_value, detail FROM event"
			" ORDER BY id DESC LIMIT ?) ORDER BY id", &lim, 1, "reading events",
			event_each_row, &a);
}

struct lid_each {
	int (*cb)(void *ctx, const struct store_lid *l);
	void *ctx;
};

static int lid_each_row(sqlite3_stmt *st, void *arg)
{
	const struct lid_each *a = arg;
	struct store_lid l = { 0 };

	l.guid = col_guid(st, 0);
	l.node_guid = col_guid(st, 1);
	l.lid = (uint16_t)sqlite3_column_int(st, 2);
	l.lmc = (uint8_t)sqlite3_column_int(st, 3);
	l.last_seen = sqlite3_column_int64(st, 4);
	col_text(st, 5, l.desc, sizeof(l.desc));
	l.present = sqlite3_column_int(st, 6);
	return a->cb(a->ctx, &l);
}

int store_foreach_lid(struct store *s, int (*cb)(void *ctx, const struct store_lid *l),
		      void *ctx)
{
	struct lid_each a = { cb, ctx };

	return each_row(s, "SELECT l.guid, l.node_guid, l.lid, l.lmc, l.last_seen, l.node_desc,"
			" EXISTS (SELECT 1 FROM port p WHERE p.node_guid = l.node_guid"
			" AND p.present = 1"
			" AND (p.guid = l.guid OR (p.num = 0 AND l.guid = l.node_guid)))"
			" FROM port_lid l ORDER BY l.lid", NULL, 0, "reading LIDs",
			lid_each_row, &a);
}

/* ---- loading the saved fabric ---- */

static int load_nodes(struct store *s, struct fabric *f)
{
	sqlite3_stmt *st;
	int rc, r;

	/* A switch's NodeInfo.PortGUID is its port 0's */
	r = prep(s, "SELECT n.guid, n.type, n.num_ports, n.description, n.sys_guid, n.vendor_id,"
		 " n.device_id, n.revision, (SELECT p.guid FROM port p WHERE"
		 " p.node_guid = n.guid AND p.num = 0) FROM node n WHERE n.present = 1"
		 " ORDER BY n.guid", &st);
	if (r)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct node_info ni = {
			.base_version = 1, .class_version = 1,
			.node_guid = col_guid(st, 0),
			.node_type = (uint8_t)sqlite3_column_int(st, 1),
			.num_ports = (uint8_t)sqlite3_column_int(st, 2),
			.sys_guid = col_guid(st, 4),
			.vendor_id = (uint32_t)sqlite3_column_int64(st, 5),
			.device_id = (uint16_t)sqlite3_column_int64(st, 6),
			.revision = (uint32_t)sqlite3_column_int64(st, 7),
			.port_guid = col_guid(st, 8),
		};
		struct fab_node *n;

		r = fabric_add_node(f, &ni, &n);
		if (r)
			break;
		col_text(st, 3, n->desc, sizeof(n->desc));
		n->desc_valid = true;
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(s, rc, "reading nodes");
	sqlite3_finalize(st);
	return r;
}

static int load_ports(struct store *s, struct fabric *f)
{
	sqlite3_stmt *st;
	int rc, r;

	r = prep(s, "SELECT node_guid, num, guid, lid, lmc, state, phys_state, width, speed,"
		 " speed_ext, cap_mask, mtu, mtu_cap, vl_cap, op_vls, lids_routed, cap_mask2,"
		 " speed_ext2, fdr10 FROM port WHERE present = 1", &st);
	if (r)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct fab_node *n = fabric_find(f, col_guid(st, 0));
		struct fab_port *p = fabric_port(n, (unsigned int)sqlite3_column_int(st, 1));
		struct port_info *pi;

		if (!p)
			continue;	/* a port of an absent node */
		pi = &p->pi;
		p->guid = col_guid(st, 2);
		pi->lid = (uint16_t)sqlite3_column_int(st, 3);
		pi->lmc = (uint8_t)sqlite3_column_int(st, 4);
		pi->port_state = (uint8_t)sqlite3_column_int(st, 5);
		pi->phys_state = (uint8_t)sqlite3_column_int(st, 6);
		pi->link_width_active = (uint8_t)sqlite3_column_int(st, 7);
		pi->link_speed_active = (uint8_t)sqlite3_column_int(st, 8);
		pi->link_speed_ext_active = (uint8_t)sqlite3_column_int(st, 9);
		pi->cap_mask = (uint32_t)sqlite3_column_int64(st, 10);
		pi->neighbor_mtu = (uint8_t)sqlite3_column_int(st, 11);
		pi->mtu_cap = (uint8_t)sqlite3_column_int(st, 12);
		pi->vl_cap = (uint8_t)sqlite3_column_int(st, 13);
		pi->op_vls = (uint8_t)sqlite3_column_int(st, 14);
		pi->local_port = p->num;
		p->load = (uint32_t)sqlite3_column_int64(st, 15);
		pi->cap_mask2 = (uint16_t)sqlite3_column_int(st, 16);
		pi->link_speed_ext_active2 = (uint8_t)sqlite3_column_int(st, 17);
		p->fdr10 = sqlite3_column_int(st, 18) != 0;
		p->pi_valid = true;
		if (fabric_is_endport(p)) {
			p->lid = pi->lid;
			p->lmc = pi->lmc;
		}
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(s, rc, "reading ports");
	sqlite3_finalize(st);
	return r;
}

static int load_switches(struct store *s, struct fabric *f)
{
	sqlite3_stmt *st;
	int rc, r;

	r = prep(s, "SELECT node_guid, lft_cap, lft_top, enhanced_port0, life_time FROM switch",
		 &st);
	if (r)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct fab_node *n = fabric_find(f, col_guid(st, 0));

		if (!n || n->type != NODE_TYPE_SWITCH)
			continue;
		n->si.lft_cap = (uint16_t)sqlite3_column_int(st, 1);
		n->si.lft_top = (uint16_t)sqlite3_column_int(st, 2);
		n->si.enhanced_port0 = (uint8_t)sqlite3_column_int(st, 3);
		n->si.life_time_value = (uint8_t)sqlite3_column_int(st, 4);
		n->si_valid = true;
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(s, rc, "reading switches");
	sqlite3_finalize(st);
	return r;
}

static int load_links(struct store *s, struct fabric *f)
{
	sqlite3_stmt *st;
	int rc, r;

	r = prep(s, "SELECT node_a, port_a, node_b, port_b FROM link", &st);
	if (r)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct fab_port *a = fabric_port(fabric_find(f, col_guid(st, 0)),
						 (unsigned int)sqlite3_column_int(st, 1));
		struct fab_port *b = fabric_port(fabric_find(f, col_guid(st, 2)),
						 (unsigned int)sqlite3_column_int(st, 3));

		if (a && b && a->pi_valid && b->pi_valid)
			fabric_link(f, a, b);
	}
	if (rc != SQLITE_DONE)
		r = store_fail(s, rc, "reading links");
	sqlite3_finalize(st);
	return r;
}

int store_load_fabric(struct store *s, struct fabric **out, struct store_sweep *sweep)
{
	struct fabric *f = NULL;
	int r;

	*out = NULL;
	/* One read transaction: a consistent snapshot while smd may be saving */
	r = exec(s, "BEGIN", "reading the fabric");
	if (r)
		return r;
	r = one_sweep(s, "SELECT " SWEEP_COLUMNS " FROM sweep WHERE outcome <> 'failed'"
		      " AND EXISTS (SELECT 1 FROM node WHERE last_sweep = sweep.id)"
		      " ORDER BY id DESC LIMIT 1", sweep);
	if (r == -ENOENT)
		snprintf(s->err, sizeof(s->err), "no fabric saved yet");
	if (!r)
		r = fabric_new(&f);
	if (!r)
		r = load_nodes(s, f);
	if (!r)
		r = load_ports(s, f);
	if (!r)
		r = load_switches(s, f);
	if (!r)
		r = load_links(s, f);
	sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (r) {
		fabric_free(f);
		return r;
	}
	fabric_index_lids(f);	/* a clash only means the ports said so */
	*out = f;
	return 0;
}

static bool mcast_row(const void *rows, size_t i, int64_t now, struct sql_val *v)
{
	const struct store_mcast *g = (const struct store_mcast *)rows + i;

	v[0] = V_BLOB(g->mgid, 16);
	v[1] = V_INT(g->mlid);
	v[2] = V_INT(now);		/* created */
	v[3] = V_INT(now);		/* last_seen */
	return g->present;
}

static const struct row_table mcast_rows = {
	.put_sql = "INSERT INTO mcast_group (mgid, mlid, created, last_seen) VALUES (?, ?, ?, ?)"
		   " ON CONFLICT (mgid) DO UPDATE SET mlid = excluded.mlid,"
		   " last_seen = excluded.last_seen",
	.del_sql = "DELETE FROM mcast_group WHERE mgid = ?",
	.nput = 4, .ndel = 1, .what = "saving a multicast group", .row = mcast_row,
};

int store_mcast_save(struct store *s, const struct store_mcast *g, size_t n, int64_t now)
{
	return save_rows(s, &mcast_rows, g, n, now);
}

struct mcast_each {
	int (*cb)(void *ctx, const struct store_mcast *g);
	void *ctx;
};

static int mcast_each_row(sqlite3_stmt *st, void *arg)
{
	const struct mcast_each *a = arg;
	struct store_mcast g = { .present = 1 };

	/* A row the CHECKs let through but that is not 16 bytes is skipped */
	if (sqlite3_column_bytes(st, 0) != 16)
		return 0;
	memcpy(g.mgid, sqlite3_column_blob(st, 0), 16);
	g.mlid = (uint16_t)sqlite3_column_int(st, 1);
	return a->cb(a->ctx, &g);
}

int store_foreach_mcast(struct store *s, int (*cb)(void *ctx, const struct store_mcast *g),
			void *ctx)
{
	struct mcast_each a = { cb, ctx };

	return each_row(s, "SELECT mgid, mlid FROM mcast_group ORDER BY mlid", NULL, 0,
			"reading multicast groups", mcast_each_row, &a);
}

static bool service_row(const void *rows, size_t i, int64_t now, struct sql_val *v)
{
	const struct store_service *x = (const struct store_service *)rows + i;

	/* ServiceIDs use all 64 bits: stored as the same bits, signed */
	v[0] = V_INT((int64_t)x->id);
	v[1] = V_BLOB(x->gid, 16);
	v[2] = V_INT(x->pkey);
	v[3] = V_BLOB(x->record, STORE_SERVICE_SIZE);
	v[4] = V_INT(x->expires);
	v[5] = V_INT(now);		/* registered */
	return x->present;
}

static const struct row_table service_rows = {
	.put_sql = "INSERT INTO service (id, gid, pkey, record, expires, registered)"
		   " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (id, gid, pkey) DO UPDATE SET"
		   " record = excluded.record, expires = excluded.expires",
	.del_sql = "DELETE FROM service WHERE id = ?1 AND gid = ?2 AND pkey = ?3",
	.nput = 6, .ndel = 3, .what = "saving a service", .row = service_row,
};

int store_service_save(struct store *s, const struct store_service *v, size_t n, int64_t now)
{
	return save_rows(s, &service_rows, v, n, now);
}

struct service_each {
	int (*cb)(void *ctx, const struct store_service *v);
	void *ctx;
};

static int service_each_row(sqlite3_stmt *st, void *arg)
{
	const struct service_each *a = arg;
	struct store_service v = { .present = 1 };

	/* Rows the CHECKs let through with other sizes are skipped */
	if (sqlite3_column_bytes(st, 1) != 16 ||
	    sqlite3_column_bytes(st, 3) != STORE_SERVICE_SIZE)
		return 0;
	v.id = (uint64_t)sqlite3_column_int64(st, 0);
	memcpy(v.gid, sqlite3_column_blob(st, 1), 16);
	v.pkey = (uint16_t)sqlite3_column_int(st, 2);
	memcpy(v.record, sqlite3_column_blob(st, 3), STORE_SERVICE_SIZE);
	v.expires = sqlite3_column_int64(st, 4);
	return a->cb(a->ctx, &v);
}

int store_foreach_service(struct store *s, int (*cb)(void *ctx, const struct store_service *v),
			  void *ctx)
{
	struct service_each a = { cb, ctx };

	return each_row(s, "SELECT id, gid, pkey, record, expires FROM service"
			" ORDER BY id, gid, pkey", NULL, 0, "reading services",
			service_each_row, &a);
}

struct partition_each {
	int (*cb)(void *ctx, const struct store_partition *p);
	void *ctx;
};

static int partition_each_row(sqlite3_stmt *st, void *arg)
{
	const struct partition_each *a = arg;
	struct store_partition p = {
		.pkey = (uint16_t)(sqlite3_column_int(st, 0) & 0x7fff),
		.ipoib = sqlite3_column_int(st, 2) != 0,
	};

	col_text(st, 1, p.name, sizeof(p.name));
	return a->cb(a->ctx, &p);
}

int store_foreach_partition(struct store *s,
			    int (*cb)(void *ctx, const struct store_partition *p), void *ctx)
{
	struct partition_each a = { cb, ctx };

	return each_row(s, "SELECT pkey, name, ipoib FROM partition ORDER BY pkey", NULL, 0,
			"reading partitions", partition_each_row, &a);
}

struct port_pkey_each {
	int (*cb)(void *ctx, const struct store_port_pkey *k);
	void *ctx;
};

static int port_pkey_each_row(sqlite3_stmt *st, void *arg)
{
	const struct port_pkey_each *a = arg;
	struct store_port_pkey k = {
		.port_guid = col_guid(st, 0),
		.pkey = (uint16_t)((sqlite3_column_int(st, 1) & 0x7fff) |
				   (sqlite3_column_int(st, 2) ? 0x8000 : 0)),
	};

	return a->cb(a->ctx, &k);
}

int store_foreach_port_pkey(struct store *s,
			    int (*cb)(void *ctx, const struct store_port_pkey *k), void *ctx)
{
	struct port_pkey_each a = { cb, ctx };

	return each_row(s, "SELECT port_guid, pkey, full FROM port_pkey ORDER BY pkey, port_guid",
			NULL, 0, "reading P_Keys", port_pkey_each_row, &a);
}

/* ---- fabric health (issue 20) ---- */

static bool isolated_row(const void *rows, size_t i, int64_t now, struct sql_val *v)
{
	const struct store_isolated *x = (const struct store_isolated *)rows + i;

	(void)now;
	v[0] = V_INT((int64_t)x->node_guid);
	v[1] = V_INT(x->port);
	v[2] = V_INT(x->since);
	v[3] = V_TEXT(x->rule);
	v[4] = V_TEXT(x->reason);
	return x->present;
}

static const struct row_table isolated_rows = {
	.put_sql = "INSERT INTO isolated_port (node_guid, port, since, rule, reason)"
		   " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (node_guid, port) DO UPDATE SET"
		   " rule = excluded.rule, reason = excluded.reason",
	.del_sql = "DELETE FROM isolated_port WHERE node_guid = ?1 AND port = ?2",
	.nput = 5, .ndel = 2, .what = "saving an isolated port", .row = isolated_row,
};

int store_isolated_save(struct store *s, const struct store_isolated *v, size_t n, int64_t now)
{
	for (size_t i = 0; i < n; i++)
		if (!v[i].port || v[i].port > 254)
			return -EINVAL;
	return save_rows(s, &isolated_rows, v, n, now);
}

struct isolated_each {
	int (*cb)(void *ctx, const struct store_isolated *v);
	void *ctx;
};

static int isolated_each_row(sqlite3_stmt *st, void *arg)
{
	const struct isolated_each *a = arg;
	struct store_isolated v = { .present = 1 };
	int port = sqlite3_column_int(st, 1);

	/* A row the CHECKs let through with a port smd cannot name is skipped */
	if (port < 1 || port > 254)
		return 0;
	v.node_guid = col_guid(st, 0);
	v.port = (uint8_t)port;
	v.since = sqlite3_column_int64(st, 2);
	col_text(st, 3, v.rule, sizeof(v.rule));
	col_text(st, 4, v.reason, sizeof(v.reason));
	return a->cb(a->ctx, &v);
}

int store_foreach_isolated(struct store *s, int (*cb)(void *ctx, const struct store_isolated *v),
			   void *ctx)
{
	struct isolated_each a = { cb, ctx };

	return each_row(s, "SELECT node_guid, port, since, rule, reason FROM isolated_port"
			" ORDER BY since, node_guid, port", NULL, 0, "reading isolated ports",
			isolated_each_row, &a);
}

int store_perf_events_add(struct store *s, const struct store_perf_event *v, size_t n,
			  uint64_t keep)
{
	sqlite3_stmt *put = NULL, *prune = NULL;
	int r;

	if (!n)
		return 0;
	r = exec(s, "BEGIN IMMEDIATE", "starting a transaction");
	if (r < 0)
		return r;
	r = prep(s, "INSERT INTO perf_event (time, node_guid, port, kind, count, total, detail)"
		 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", &put);
	for (size_t i = 0; i < n && !r; i++)
		r = PUT_ROW(s, put, "recording a health event", V_INT(v[i].time),
			    V_INT((int64_t)v[i].node_guid), V_INT(v[i].port), V_TEXT(v[i].kind),
			    V_INT((int64_t)(v[i].count > INT64_MAX ? INT64_MAX : v[i].count)),
			    V_INT((int64_t)(v[i].total > INT64_MAX ? INT64_MAX : v[i].total)),
			    V_TEXT(v[i].detail));
	/* Bounded: the newest keep rows stay */
	if (!r)
		r = prep(s, "DELETE FROM perf_event WHERE id <= (SELECT max(id) FROM perf_event) - ?1",
			 &prune);
	if (!r)
		r = PUT_ROW(s, prune, "pruning health events",
			    V_INT((int64_t)(keep > INT64_MAX ? INT64_MAX : keep)));
	sqlite3_finalize(put);
	sqlite3_finalize(prune);
	if (!r)
		r = exec(s, "COMMIT", "committing");
	if (r < 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

struct perf_event_each {
	int (*cb)(void *ctx, const struct store_perf_event *v);
	void *ctx;
};

static int perf_event_each_row(sqlite3_stmt *st, void *arg)
{
	const struct perf_event_each *a = arg;
	struct store_perf_event v = { 0 };
	int port = sqlite3_column_int(st, 2);

	if (port < 0 || port > 254)
		return 0;
	v.time = sqlite3_column_int64(st, 0);
	v.node_guid = col_guid(st, 1);
	v.port = (uint8_t)port;
	col_text(st, 3, v.kind, sizeof(v.kind));
	v.count = (uint64_t)sqlite3_column_int64(st, 4);
	v.total = (uint64_t)sqlite3_column_int64(st, 5);
	col_text(st, 6, v.detail, sizeof(v.detail));
	return a->cb(a->ctx, &v);
}

int store_foreach_perf_event(struct store *s, unsigned int limit,
			     int (*cb)(void *ctx, const struct store_perf_event *v), void *ctx)
{
	struct perf_event_each a = { cb, ctx };

	return each_row(s, "SELECT time, node_guid, port, kind, count, total, detail FROM"
			" (SELECT * FROM perf_event ORDER BY id DESC LIMIT ?1) ORDER BY id",
			(const struct sql_val[]){ V_INT(limit) }, 1, "reading health events",
			perf_event_each_row, &a);
}
