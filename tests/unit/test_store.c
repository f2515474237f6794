// SPDX-License-Identifier: MIT
/*
 * db/store.c in a scratch directory: creation and migration, saving a
 * sweep and looking LIDs up, persistence across reopen, LIDs that move,
 * atomic saves, and files that must be refused and left untouched (not a
 * database, truncated, a newer schema). The schema is inspected with the
 * sqlite3 API directly, not through the code under test.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "db/store.h"
#include "tests/unit/unit.h"

static char tmpdir[64];

static const char *path_of(const char *name)
{
	static char bufs[4][256];
	static int which;
	char *p = bufs[which++ % 4];

	snprintf(p, sizeof(bufs[0]), "%s/%s", tmpdir, name);
	return p;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *fp = fopen(path, "rb");
	uint8_t *buf;
	long n;

	*len = 0;
	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	buf = malloc(n > 0 ? (size_t)n : 1);
	if (!buf || fread(buf, 1, (size_t)n, fp) != (size_t)n)
		abort();
	fclose(fp);
	*len = (size_t)n;
	return buf;
}

static void spew(const char *path, const uint8_t *buf, size_t len)
{
	FILE *fp = fopen(path, "wb");

	if (!fp || fwrite(buf, 1, len, fp) != len || fclose(fp))
		abort();
}

/* Side files SQLite may leave next to a database */
static void unlink_db(const char *path)
{
	char side[300];

	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-journal", path);
	unlink(side);
}

static bool file_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

static bool same_bytes(const char *path, const uint8_t *want, size_t want_len)
{
	size_t len;
	uint8_t *got = slurp(path, &len);
	bool same = got && len == want_len && !memcmp(got, want, len);

	if (!same)
		fprintf(stderr, "  %s: %zu bytes, was %zu%s\n", path, len, want_len,
			got && len == want_len ? ", contents differ" : "");
	free(got);
	return same;
}

/* Through the sqlite3 API, independently of the store */
static int sql_int(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	int v = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return v;
}

static int sql_exec(const char *path, const char *sql)
{
	sqlite3 *db;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	sqlite3_close(db);
	return rc;
}

static void rm_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlink(path_of(e->d_name));
	closedir(d);
	if (rmdir(tmpdir))
		fprintf(stderr, "could not remove %s\n", tmpdir);
}

/* ---- a small fabric ---- */

static struct fab_node *add_node(struct fabric *f, uint8_t type, uint64_t guid, uint8_t nports,
				 const char *desc)
{
	struct node_info ni = {
		.base_version = 1, .class_version = 1, .node_type = type, .num_ports = nports,
		.sys_guid = guid, .node_guid = guid, .port_guid = guid,
		.local_port = type == NODE_TYPE_SWITCH ? 0 : 1,
	};
	struct fab_node *n;

	if (fabric_add_node(f, &ni, &n))
		abort();
	snprintf(n->desc, sizeof(n->desc), "%s", desc);
	n->desc_valid = true;
	return n;
}

static void set_port(struct fab_node *n, unsigned int num, uint64_t guid, uint16_t lid,
		     uint8_t lmc)
{
	struct fab_port *p = fabric_port(n, num);

	if (!p)
		abort();
	if (guid)
		p->guid = guid;
	p->lid = lid;
	p->lmc = lmc;
	p->pi.lid = lid;
	p->pi.lmc = lmc;
	p->pi.port_state = PORT_STATE_ACTIVE;
	p->pi.phys_state = PHYS_STATE_LINKUP;
	p->pi_valid = true;
}

#define SW1	UINT64_C(0xf452140300a0b0c0)
#define CA1	UINT64_C(0x0002c90300001230)
#define CA1P1	UINT64_C(0x0002c90300001231)
#define CA1P2	UINT64_C(0x0002c90300001232)
#define CA2	UINT64_C(0x8000000000000010)	/* negative as an SQLite integer */
#define CA2P1	UINT64_C(0xfffffffffffffff1)
#define CA3	UINT64_C(0x0000000000000100)
#define CA3P1	UINT64_C(0x0000000000000101)
#define CA4	UINT64_C(0x0000000000000200)
#define CA4P1	UINT64_C(0x0000000000000201)

static struct fabric *fabric_one(void)
{
	struct fabric *f;
	struct fab_node *n;

	if (fabric_new(&f))
		abort();
	n = add_node(f, NODE_TYPE_SWITCH, SW1, 8, "sw1 'quoted' \"too\"");
	set_port(n, 0, 0, 1, 0);
	set_port(n, 3, 0, 99, 0);	/* not an endport: never saved */
	n = add_node(f, NODE_TYPE_CA, CA1, 2, "ca1 HCA-1");
	set_port(n, 1, CA1P1, 2, 0);
	set_port(n, 2, CA1P2, 3, 0);
	n = add_node(f, NODE_TYPE_CA, CA2, 1, "");
	set_port(n, 1, CA2P1, LID_UCAST_MAX, 0);
	n = add_node(f, NODE_TYPE_CA, CA3, 1, "no lid yet");
	set_port(n, 1, CA3P1, 0, 0);
	return f;
}

static const struct store_sweep sweep_one = {
	.started = 1700000000, .seconds = 1.5, .nodes = 4, .switches = 1, .cas = 3,
	.ports = 12, .lids = 4, .smps_sent = (UINT64_C(1) << 40) + 5, .smps_timed_out = 3,
	.smps_retried = 2, .up = 1,
};

static bool sweep_eq(const struct store_sweep *a, const struct store_sweep *b)
{
	return a->started == b->started && a->seconds == b->seconds && a->nodes == b->nodes &&
	       a->switches == b->switches && a->cas == b->cas && a->ports == b->ports &&
	       a->lids == b->lids && a->smps_sent == b->smps_sent &&
	       a->smps_timed_out == b->smps_timed_out && a->smps_retried == b->smps_retried &&
	       a->up == b->up;
}

static int lookup(struct store *s, uint64_t guid)
{
	uint16_t lid = 0xeeee;
	int r = store_lid_lookup(s, guid, &lid);

	return r < 0 ? r : lid;
}

struct rows {
	int n, stop_after;
	struct store_lid l[64];
};

static int collect(void *ctx, const struct store_lid *l)
{
	struct rows *r = ctx;

	if (r->n < 64)
		r->l[r->n] = *l;
	r->n++;
	return r->stop_after && r->n >= r->stop_after ? 7 : 0;
}

/* ---- tests ---- */

static void test_open_migrate(void)
{
	const char *db = path_of("new.db");
	struct store *s = NULL;
	struct store_sweep sw;
	struct rows rows = { 0 };

	CHECK(!file_exists(db));
	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK(s != NULL);
	CHECK(file_exists(db));
	CHECK_EQ(strlen(store_errmsg(s)), 0);
	CHECK_EQ(sql_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
			 " AND name IN ('port_lid', 'sweep')"), 2);
	CHECK_EQ(store_last_sweep(s, &sw), -ENOENT);
	CHECK_EQ(lookup(s, CA1P1), -ENOENT);
	CHECK_EQ(store_foreach_lid(s, collect, &rows), 0);
	CHECK_EQ(rows.n, 0);
	s = store_close(s);
	CHECK(s == NULL);
	CHECK(store_close(NULL) == NULL);

	/* Reopening migrates nothing and keeps the version */
	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(sql_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	CHECK_EQ(store_last_sweep(s, &sw), -ENOENT);
	store_close(s);
	/* and so does a read-only open */
	CHECK_EQ(store_open(db, 1, &s), 0);
	CHECK_EQ(store_last_sweep(s, &sw), -ENOENT);
	store_close(s);

	/* An empty file is a new database */
	db = path_of("empty.db");
	spew(db, (const uint8_t *)"", 0);
	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(sql_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	store_close(s);
}

static void test_save_and_lookup(void)
{
	const char *db = path_of("lids.db");
	struct store *s = NULL;
	struct store_sweep sw;
	struct fabric *f = fabric_one();
	struct rows rows = { 0 };

	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(store_save_sweep(s, f, &sweep_one), 0);
	CHECK_EQ(lookup(s, SW1), 1);
	CHECK_EQ(lookup(s, CA1P1), 2);
	CHECK_EQ(lookup(s, CA1P2), 3);
	CHECK_EQ(lookup(s, CA2P1), LID_UCAST_MAX);
	CHECK_EQ(lookup(s, CA3P1), -ENOENT);	/* no LID */
	CHECK_EQ(lookup(s, CA1), -ENOENT);	/* a CA's node GUID is not a port GUID */
	CHECK_EQ(lookup(s, 0), -ENOENT);
	memset(&sw, 0, sizeof(sw));
	CHECK_EQ(store_last_sweep(s, &sw), 0);
	CHECK(sweep_eq(&sw, &sweep_one));

	CHECK_EQ(store_foreach_lid(s, collect, &rows), 0);
	CHECK_EQ(rows.n, 4);
	if (rows.n == 4) {
		/* In LID order, with everything saved */
		CHECK_EQ(rows.l[0].lid, 1);
		CHECK(rows.l[0].guid == SW1);
		CHECK(rows.l[0].node_guid == SW1);
		CHECK(!strcmp(rows.l[0].desc, "sw1 'quoted' \"too\""));
		CHECK_EQ(rows.l[1].lid, 2);
		CHECK(rows.l[1].guid == CA1P1);
		CHECK(rows.l[1].node_guid == CA1);
		CHECK(!strcmp(rows.l[1].desc, "ca1 HCA-1"));
		CHECK_EQ(rows.l[2].lid, 3);
		CHECK(rows.l[2].guid == CA1P2);
		CHECK_EQ(rows.l[3].lid, LID_UCAST_MAX);
		CHECK(rows.l[3].guid == CA2P1);
		CHECK(rows.l[3].node_guid == CA2);
		CHECK_EQ(rows.l[3].desc[0], 0);
		for (int i = 0; i < 4; i++) {
			CHECK_EQ(rows.l[i].last_seen, sweep_one.started);
			CHECK_EQ(rows.l[i].lmc, 0);
		}
	}
	/* The callback stops the walk with its own value */
	memset(&rows, 0, sizeof(rows));
	rows.stop_after = 2;
	CHECK_EQ(store_foreach_lid(s, collect, &rows), 7);
	CHECK_EQ(rows.n, 2);
	s = store_close(s);

	/* Reopened, read-write and read-only */
	for (int ro = 0; ro <= 1; ro++) {
		CHECK_EQ(store_open(db, ro, &s), 0);
		CHECK_EQ(lookup(s, SW1), 1);
		CHECK_EQ(lookup(s, CA1P1), 2);
		CHECK_EQ(lookup(s, CA1P2), 3);
		CHECK_EQ(lookup(s, CA2P1), LID_UCAST_MAX);
		CHECK_EQ(lookup(s, CA3P1), -ENOENT);
		memset(&sw, 0, sizeof(sw));
		CHECK_EQ(store_last_sweep(s, &sw), 0);
		CHECK(sweep_eq(&sw, &sweep_one));
		memset(&rows, 0, sizeof(rows));
		CHECK_EQ(store_foreach_lid(s, collect, &rows), 0);
		CHECK_EQ(rows.n, 4);
		s = store_close(s);
	}
	/* Independently: four rows, one sweep */
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM port_lid"), 4);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM sweep"), 1);
	fabric_free(f);
}

static bool lids_unique(struct store *s)
{
	struct rows rows = { 0 };

	if (store_foreach_lid(s, collect, &rows) != 0 || rows.n > 64)
		return false;
	for (int i = 1; i < rows.n; i++)
		if (rows.l[i].lid == rows.l[i - 1].lid)
			return false;
	return true;
}

static void test_lid_moves(void)
{
	const char *db = path_of("moves.db");
	struct store_sweep sw, two = sweep_one;
	struct store *s = NULL;
	struct fabric *f = fabric_one(), *g;
	struct fab_node *n;
	struct rows rows = { 0 };

	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(store_save_sweep(s, f, &sweep_one), 0);

	/*
	 * Second sweep: CA1 is gone and a new CA4 took its port 1's LID 2;
	 * CA2 moved from the top LID to 10; CA1 port 2 (LID 3) is not seen but
	 * nobody took its LID.
	 */
	if (fabric_new(&g))
		abort();
	n = add_node(g, NODE_TYPE_SWITCH, SW1, 8, "sw1 renamed");
	set_port(n, 0, 0, 1, 0);
	n = add_node(g, NODE_TYPE_CA, CA4, 1, "ca4");
	set_port(n, 1, CA4P1, 2, 0);
	n = add_node(g, NODE_TYPE_CA, CA2, 1, "ca2");
	set_port(n, 1, CA2P1, 10, 0);
	two.started = sweep_one.started + 100;
	two.up = 0;
	two.nodes = 3;
	two.smps_sent = UINT64_MAX;	/* survives as a bit pattern */
	CHECK_EQ(store_save_sweep(s, g, &two), 0);

	CHECK_EQ(lookup(s, CA1P1), -ENOENT);	/* its LID went to CA4 */
	CHECK_EQ(lookup(s, CA4P1), 2);
	CHECK_EQ(lookup(s, CA1P2), 3);		/* still remembered */
	CHECK_EQ(lookup(s, CA2P1), 10);
	CHECK_EQ(lookup(s, SW1), 1);
	CHECK(lids_unique(s));
	CHECK_EQ(store_foreach_lid(s, collect, &rows), 0);
	CHECK_EQ(rows.n, 4);
	for (int i = 0; i < rows.n && i < 64; i++) {
		CHECK(rows.l[i].lid != LID_UCAST_MAX);
		if (rows.l[i].guid == CA1P2)
			CHECK_EQ(rows.l[i].last_seen, sweep_one.started);
		else
			CHECK_EQ(rows.l[i].last_seen, two.started);
		if (rows.l[i].guid == SW1)
			CHECK(!strcmp(rows.l[i].desc, "sw1 renamed"));
	}
	memset(&sw, 0, sizeof(sw));
	CHECK_EQ(store_last_sweep(s, &sw), 0);
	CHECK(sweep_eq(&sw, &two));
	CHECK(sw.smps_sent == UINT64_MAX);
	fabric_free(g);

	/* Two ports swap LIDs in one sweep: both are remembered, swapped */
	if (fabric_new(&g))
		abort();
	n = add_node(g, NODE_TYPE_CA, CA4, 1, "ca4");
	set_port(n, 1, CA4P1, 10, 0);
	n = add_node(g, NODE_TYPE_CA, CA2, 1, "ca2");
	set_port(n, 1, CA2P1, 2, 0);
	CHECK_EQ(store_save_sweep(s, g, &two), 0);
	CHECK_EQ(lookup(s, CA4P1), 10);
	CHECK_EQ(lookup(s, CA2P1), 2);
	CHECK(lids_unique(s));
	fabric_free(g);

	/* An LMC: the port's LID is stored with it */
	if (fabric_new(&g))
		abort();
	n = add_node(g, NODE_TYPE_CA, CA3, 1, "ca3");
	set_port(n, 1, CA3P1, 16, 2);
	CHECK_EQ(store_save_sweep(s, g, &two), 0);
	CHECK_EQ(lookup(s, CA3P1), 16);
	memset(&rows, 0, sizeof(rows));
	CHECK_EQ(store_foreach_lid(s, collect, &rows), 0);
	for (int i = 0; i < rows.n && i < 64; i++)
		if (rows.l[i].guid == CA3P1)
			CHECK_EQ(rows.l[i].lmc, 2);
	fabric_free(g);

	/*
	 * KNOWN BUG (arguable, see the report): a port with LMC > 0 holds
	 * lid .. lid + 2^lmc - 1, but store_save_sweep() only forgets other
	 * ports remembered at exactly p->lid, so a port remembered at a LID
	 * inside the range (CA4 at 17, inside CA3's 16..19) stays on record
	 * as if it still owned it.
	 */
	if (fabric_new(&g))
		abort();
	n = add_node(g, NODE_TYPE_CA, CA4, 1, "ca4");
	set_port(n, 1, CA4P1, 17, 0);
	CHECK_EQ(store_save_sweep(s, g, &two), 0);
	fabric_free(g);
	if (fabric_new(&g))
		abort();
	n = add_node(g, NODE_TYPE_CA, CA3, 1, "ca3");
	set_port(n, 1, CA3P1, 16, 2);
	CHECK_EQ(store_save_sweep(s, g, &two), 0);
	CHECK_EQ(lookup(s, CA4P1), -ENOENT);
	fabric_free(g);

	store_close(s);
	fabric_free(f);
}

/* A save that fails part-way leaves the previous state, and says why */
static void test_save_atomic(void)
{
	const char *db = path_of("atomic.db");
	struct store *s = NULL;
	struct store_sweep sw, bad = sweep_one;
	struct fabric *f = fabric_one(), *g;
	struct fab_node *n;

	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(store_save_sweep(s, f, &sweep_one), 0);
	CHECK_EQ(strlen(store_errmsg(s)), 0);

	if (fabric_new(&g))
		abort();
	n = add_node(g, NODE_TYPE_CA, CA4, 1, "ca4");
	set_port(n, 1, CA4P1, 2, 0);	/* would displace CA1 port 1 */
	n = add_node(g, NODE_TYPE_CA, CA3, 1, "ca3");
	set_port(n, 1, CA3P1, LID_UCAST_MAX + 1, 0);	/* not a unicast LID */
	bad.started += 1000;
	CHECK(store_save_sweep(s, g, &bad) < 0);
	CHECK(strlen(store_errmsg(s)) > 0);
	/* Nothing of it was kept */
	CHECK_EQ(lookup(s, CA1P1), 2);
	CHECK_EQ(lookup(s, CA4P1), -ENOENT);
	CHECK_EQ(lookup(s, CA3P1), -ENOENT);
	memset(&sw, 0, sizeof(sw));
	CHECK_EQ(store_last_sweep(s, &sw), 0);
	CHECK(sweep_eq(&sw, &sweep_one));
	/* and the store still works */
	CHECK_EQ(store_save_sweep(s, f, &sweep_one), 0);
	store_close(s);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM sweep"), 2);
	fabric_free(g);
	fabric_free(f);
}

/* Open must fail with err, leave the file as it was, and explain */
static void expect_refused(const char *db, int ro, int err, const char *what)
{
	struct store *s = NULL;
	size_t len;
	uint8_t *before = slurp(db, &len);
	int r;

	if (!before)
		abort();
	r = store_open(db, ro, &s);
	CHECK_EQ(r, err);
	if (r != err)
		fprintf(stderr, "  %s, %s (%s): '%s'\n", db, what, ro ? "read-only" : "read-write",
			s ? store_errmsg(s) : "");
	CHECK(s != NULL && strlen(store_errmsg(s)) > 0);
	store_close(s);
	CHECK(same_bytes(db, before, len));
	free(before);
}

static void test_corrupt(void)
{
	const char *db = path_of("noise.db"), *real = path_of("real.db"), *cut = path_of("cut.db");
	uint64_t x = 0x1234567;
	struct store *s = NULL;
	struct fabric *f;
	uint8_t *bytes;
	size_t len;

	/* Random bytes */
	bytes = malloc(8192);
	for (size_t i = 0; i < 8192; i++) {
		x = x * 6364136223846793005u + 1442695040888963407u;
		bytes[i] = (uint8_t)(x >> 56);
	}
	spew(db, bytes, 8192);
	expect_refused(db, 0, -EBADMSG, "random bytes");
	expect_refused(db, 1, -EBADMSG, "random bytes");
	free(bytes);
	/* Text */
	db = path_of("text.db");
	spew(db, (const uint8_t *)"not a database\n", 15);
	expect_refused(db, 0, -EBADMSG, "a text file");
	expect_refused(db, 1, -EBADMSG, "a text file");

	/* A real database of several pages, then cut short */
	if (fabric_new(&f))
		abort();
	for (unsigned int i = 0; i < 600; i++) {
		struct fab_node *n = add_node(f, NODE_TYPE_CA, 0x1000 + 2 * (uint64_t)i, 1,
					      "a host, described at length to fill pages");

		set_port(n, 1, 0x1001 + 2 * (uint64_t)i, (uint16_t)(100 + i), 0);
	}
	CHECK_EQ(store_open(real, 0, &s), 0);
	CHECK_EQ(store_save_sweep(s, f, &sweep_one), 0);
	store_close(s);
	fabric_free(f);
	bytes = slurp(real, &len);
	CHECK(bytes && len >= 8 * 4096);
	CHECK_EQ(sql_int(real, "SELECT count(*) FROM port_lid"), 600);
	if (bytes && len >= 8 * 4096) {
		/* At page boundaries, and short of the pages the header counts */
		const size_t cuts[] = {
			len / 2, len - 4096, 4096, 2 * 4096, 4096 + 100, 1024, 100, 50,
			/*
			 * Inside the last page: the header still counts every
			 * page, only the integrity check at open notices. (A
			 * 1-byte cut may hit unused space and lose nothing.)
			 */
			len - 100, len - 2048,
		};

		for (size_t i = 0; i < sizeof(cuts) / sizeof(cuts[0]); i++) {
			unlink_db(cut);
			spew(cut, bytes, cuts[i]);
			char what[64];

			snprintf(what, sizeof(what), "truncated to %zu of %zu bytes", cuts[i], len);
			expect_refused(cut, 0, -EBADMSG, what);
			expect_refused(cut, 1, -EBADMSG, what);
		}
	}
	free(bytes);
}

static void test_newer_schema(void)
{
	const char *db = path_of("future.db");
	struct store *s = NULL;

	/* A store of ours, from a later version */
	CHECK_EQ(store_open(db, 0, &s), 0);
	store_close(s);
	CHECK_EQ(sql_exec(db, "PRAGMA user_version = 99"), SQLITE_OK);
	CHECK_EQ(sql_int(db, "PRAGMA user_version"), 99);
	expect_refused(db, 0, -EPROTONOSUPPORT, "user_version 99, WAL");
	CHECK_EQ(sql_int(db, "PRAGMA user_version"), 99);

	/*
	 * KNOWN BUG: store_open(readonly) never reads user_version, so a read
	 * only open (smctl) of a newer schema succeeds instead of giving
	 * -EPROTONOSUPPORT (db/store.c: store_migrate() is only called when
	 * !readonly).
	 */
	expect_refused(db, 1, -EPROTONOSUPPORT, "user_version 99, WAL");

	/*
	 * KNOWN BUG: a newer database in rollback-journal mode is switched to
	 * WAL ("PRAGMA journal_mode = WAL" runs before the version check),
	 * which rewrites its header: the file is not left untouched.
	 */
	db = path_of("future-rollback.db");
	CHECK_EQ(sql_exec(db, "CREATE TABLE port_lid (guid INTEGER PRIMARY KEY, lid INTEGER);"
			  "PRAGMA user_version = 99"), SQLITE_OK);
	{
		size_t n;
		uint8_t *hdr = slurp(db, &n);

		/* File format bytes 18..19: 1 = rollback journal, 2 = WAL */
		CHECK(hdr && n > 100 && hdr[18] == 1 && hdr[19] == 1);
		free(hdr);
	}
	expect_refused(db, 0, -EPROTONOSUPPORT, "user_version 99, rollback journal");
}

static void test_missing(void)
{
	const char *db = path_of("missing.db");
	struct store *s = NULL;
	int r;

	r = store_open(db, 1, &s);
	CHECK(r < 0);
	CHECK_EQ(r, -ENOENT);
	CHECK(s != NULL && strlen(store_errmsg(s)) > 0);
	store_close(s);
	CHECK(!file_exists(db));

	/* A directory that does not exist */
	s = NULL;
	r = store_open(path_of("no/such/dir.db"), 0, &s);
	CHECK(r < 0);
	CHECK(s != NULL && strlen(store_errmsg(s)) > 0);
	store_close(s);

	/* A directory where the file should be */
	db = path_of("adir.db");
	CHECK_EQ(mkdir(db, 0700), 0);
	s = NULL;
	r = store_open(db, 0, &s);
	CHECK(r < 0);
	CHECK(s != NULL && strlen(store_errmsg(s)) > 0);
	store_close(s);
	rmdir(db);

	CHECK(strlen(store_errmsg(NULL)) > 0);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s", "/tmp/smd-test-store-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	RUN(test_open_migrate);
	RUN(test_save_and_lookup);
	RUN(test_lid_moves);
	RUN(test_save_atomic);
	RUN(test_corrupt);
	RUN(test_newer_schema);
	RUN(test_missing);
	rm_tmpdir();
	return unit_report();
}
