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
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
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
	/* Issue 12: SQLite's defensive mode, the schema not trusted to run code */
	CHECK(store_defensive(s));
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
	CHECK(store_defensive(s));
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
	 * A port with LMC > 0 holds lid .. lid + 2^lmc - 1: a port remembered
	 * at a LID inside the range (CA4 at 17, inside CA3's 16..19) is
	 * forgotten too, not only one at exactly p->lid.
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
	 * A read-only open (smctl) checks the version too: a newer schema is
	 * -EPROTONOSUPPORT there as well.
	 */
	expect_refused(db, 1, -EPROTONOSUPPORT, "user_version 99, WAL");

	/*
	 * A newer database in rollback-journal mode is not switched to WAL
	 * (that would rewrite its header): the version is checked first.
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

/* ---- schema 2: migration, the fabric, events, history ---- */

static int sql_count(const char *path, const char *what)
{
	char sql[512];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM %s", what);
	return sql_int(path, sql);
}

/* Version 1 exactly as released: tables, then data as smd 1 wrote it */
static const char v1_db[] =
	"CREATE TABLE port_lid ("
	"  guid INTEGER PRIMARY KEY,"
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
	"  smps_retried INTEGER NOT NULL, up INTEGER NOT NULL);"
	"PRAGMA user_version = 1;"
	"INSERT INTO port_lid VALUES (-841588177236873024, -841588177236873024, 1, 0,"
	"  'sw1', 1600000000, 1600000100);"			/* SW1 */
	"INSERT INTO port_lid VALUES (783964675510833, 783964675510832, 2, 0, 'ca1 HCA-1',"
	"  1600000000, 1600000100);"				/* CA1P1 */
	"INSERT INTO port_lid VALUES (-15, -9223372036854775792, 49151, 0, 'ca2',"
	"  1600000000, 1600000000);"				/* CA2P1, CA2 */
	"INSERT INTO port_lid VALUES (257, 256, 16, 2, 'ca3', 1600000000, 1600000100);"
	"INSERT INTO sweep (started, seconds, nodes, switches, cas, ports, lids, smps_sent,"
	"  smps_timed_out, smps_retried, up) VALUES (1600000000, 2.5, 4, 1, 3, 12, 4, 100,"
	"  1, 1, 1);"
	"INSERT INTO sweep (started, seconds, nodes, switches, cas, ports, lids, smps_sent,"
	"  smps_timed_out, smps_retried, up) VALUES (1600000100, 1.25, 3, 1, 2, 11, 3, 90,"
	"  0, 0, 0);";

static void test_migrate_v1(void)
{
	const char *db = path_of("v1.db");
	struct store *s = NULL;
	struct store_sweep sw;
	struct rows rows = { 0 };
	struct fabric *f = fabric_one();

	CHECK_EQ(sql_exec(db, v1_db), SQLITE_OK);
	CHECK_EQ(sql_int(db, "PRAGMA user_version"), 1);
	/* smctl (read-only) does not migrate: it asks for smd */
	expect_refused(db, 1, -EPROTONOSUPPORT, "schema 1, read-only");

	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(sql_int(db, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	CHECK_EQ(sql_count(db, "sqlite_master WHERE type = 'table' AND name IN ('node', 'port',"
			   " 'link', 'switch', 'event', 'port_lid', 'sweep', 'mcast_group',"
			   " 'service')"), 9);
	CHECK_EQ(sql_count(db, "sqlite_master WHERE name = 'port_lid_by_lid'"), 1);
	/* Every LID survived, with its LMC, GUIDs >= 2^63 included */
	CHECK_EQ(lookup(s, SW1), 1);
	CHECK_EQ(lookup(s, CA1P1), 2);
	CHECK_EQ(lookup(s, CA2P1), LID_UCAST_MAX);
	CHECK_EQ(lookup(s, CA3P1), 16);
	CHECK_EQ(store_foreach_lid(s, collect, &rows), 0);
	CHECK_EQ(rows.n, 4);
	for (int i = 0; i < rows.n && i < 64; i++) {
		CHECK(!rows.l[i].present);	/* no fabric saved yet */
		if (rows.l[i].guid == CA3P1)
			CHECK_EQ(rows.l[i].lmc, 2);
		if (rows.l[i].guid == CA2P1)
			CHECK(rows.l[i].node_guid == CA2 && !strcmp(rows.l[i].desc, "ca2"));
	}
	/* The sweeps too, with an outcome and an end */
	memset(&sw, 0, sizeof(sw));
	CHECK_EQ(store_last_sweep(s, &sw), 0);
	CHECK_EQ(sw.started, 1600000100);
	CHECK_EQ(sw.finished, 1600000101);
	CHECK_EQ(sw.up, 0);
	CHECK_EQ(sw.err, 0);
	CHECK_EQ(sw.nodes, 3);
	CHECK_EQ(sw.smps_sent, 90);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM sweep WHERE outcome = 'up' AND up = 1"), 1);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM sweep WHERE outcome = 'not up'"), 1);

	/* and it works as a version 2 store: the next sweep continues the history */
	CHECK_EQ(store_save_sweep(s, f, &sweep_one), 0);
	CHECK_EQ(lookup(s, SW1), 1);
	CHECK_EQ(lookup(s, CA3P1), 16);		/* CA3 holds nothing: LID 16 stays remembered */
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM port_lid WHERE guid = 257 AND lid = 16"), 1);
	CHECK_EQ(sql_count(db, "sweep"), 3);
	CHECK_EQ(sql_int(db, "SELECT max(id) FROM sweep"), 3);
	/* Same LID as v1 remembered: no event; a new one: lid_assigned */
	CHECK_EQ(sql_count(db, "event WHERE kind = 'lid_assigned'"), 1);	/* CA1P2 */
	CHECK_EQ(sql_count(db, "event WHERE kind LIKE 'lid%'"), 1);
	store_close(s);
	CHECK_EQ(store_open(db, 1, &s), 0);
	store_close(s);
	fabric_free(f);
}

/* A port with a cable to another; width 4x, speed SDR */
static void cable(struct fabric *f, struct fab_node *a, unsigned int pa, struct fab_node *b,
		  unsigned int pb)
{
	struct fab_port *x = fabric_port(a, pa), *y = fabric_port(b, pb);

	if (!x || !y || !x->pi_valid || !y->pi_valid || fabric_link(f, x, y))
		abort();
	x->pi.link_width_active = y->pi.link_width_active = 2;
	x->pi.link_speed_active = y->pi.link_speed_active = 1;
}

static void port_down(struct fab_node *n, unsigned int num)
{
	set_port(n, num, 0, 0, 0);
	n->ports[num].pi.port_state = PORT_STATE_DOWN;
	n->ports[num].pi.phys_state = 2;
}

/*
 * t1: SW1 ports 1-4 cabled: CA1 (both ports), CA2, CA3.
 * t2: CA3 unplugged (SW1[4] down), CA2 moved to SW1[5], CA1 renamed and its
 *     port 2 renumbered to LID 7, CA4 new on SW1[6], SW1[3] down.
 */
static struct fabric *fabric_t(int which)
{
	struct fab_node *sw, *c1, *c2, *c3, *c4;
	struct fabric *f;

	if (fabric_new(&f))
		abort();
	sw = add_node(f, NODE_TYPE_SWITCH, SW1, 8, "sw1");
	set_port(sw, 0, 0, 1, 0);
	c1 = add_node(f, NODE_TYPE_CA, CA1, 2, which == 1 ? "ca1" : "ca1 renamed");
	set_port(c1, 1, CA1P1, 2, 0);
	set_port(c1, 2, CA1P2, which == 1 ? 3 : 7, 0);
	c2 = add_node(f, NODE_TYPE_CA, CA2, 1, "ca2");
	set_port(c2, 1, CA2P1, 4, 0);
	for (unsigned int pn = 1; pn <= 6; pn++)
		set_port(sw, pn, 0, 0, 0);
	cable(f, sw, 1, c1, 1);
	cable(f, sw, 2, c1, 2);
	if (which == 1) {
		c3 = add_node(f, NODE_TYPE_CA, CA3, 1, "ca3");
		set_port(c3, 1, CA3P1, 5, 0);
		cable(f, sw, 3, c2, 1);
		cable(f, sw, 4, c3, 1);
		port_down(sw, 5);
		port_down(sw, 6);
	} else {
		c4 = add_node(f, NODE_TYPE_CA, CA4, 1, "ca4");
		set_port(c4, 1, CA4P1, 6, 0);
		port_down(sw, 3);
		port_down(sw, 4);
		cable(f, sw, 5, c2, 1);
		cable(f, sw, 6, c4, 1);
	}
	return f;
}

static int events_of(const char *db, int64_t sweep, const char *kind)
{
	char sql[256];

	snprintf(sql, sizeof(sql),
		 "SELECT count(*) FROM event WHERE sweep_id = %lld AND kind = '%s'",
		 (long long)sweep, kind);
	return sql_int(db, sql);
}

struct svc_rows {
	struct store_service v[8];
	size_t n;
};

static int svc_collect(void *ctx, const struct store_service *v)
{
	struct svc_rows *r = ctx;

	if (r->n < 8)
		r->v[r->n] = *v;
	r->n++;
	return 0;
}

/* Issue 16: services are saved, replaced, deleted, and read back whole */
static void test_services(void)
{
	const char *db = path_of("services.db");
	struct store *s = NULL;
	struct store_service v[3] = { 0 };
	struct svc_rows rows = { 0 };

	CHECK_EQ(store_open(db, 0, &s), 0);
	for (int i = 0; i < 3; i++) {
		v[i].id = 0x8000000000000001ull + (uint64_t)i;	/* beyond INT64_MAX */
		v[i].gid[0] = 0xfe;
		v[i].gid[15] = (uint8_t)i;
		v[i].pkey = 0xffff;
		for (int k = 0; k < STORE_SERVICE_SIZE; k++)
			v[i].record[k] = (uint8_t)(k * 7 + i);
		v[i].expires = i ? 1700000000 + i : 0;
		v[i].present = 1;
	}
	CHECK_EQ(store_service_save(s, v, 3, 1600000000), 0);
	CHECK_EQ(store_foreach_service(s, svc_collect, &rows), 0);
	CHECK_EQ(rows.n, 3);
	CHECK(rows.v[0].id == v[0].id && rows.v[2].id == v[2].id);
	CHECK(!memcmp(rows.v[1].record, v[1].record, STORE_SERVICE_SIZE));
	CHECK(!memcmp(rows.v[2].gid, v[2].gid, 16));
	CHECK_EQ(rows.v[0].expires, 0);
	CHECK_EQ(rows.v[2].expires, 1700000002);
	CHECK_EQ(rows.v[1].pkey, 0xffff);
	/* The same key again replaces; present 0 deletes */
	v[1].record[0] ^= 0xff;
	v[2].present = 0;
	CHECK_EQ(store_service_save(s, &v[1], 2, 1600000001), 0);
	store_close(s);
	CHECK_EQ(store_open(db, 1, &s), 0);
	rows.n = 0;
	CHECK_EQ(store_foreach_service(s, svc_collect, &rows), 0);
	CHECK_EQ(rows.n, 2);
	CHECK_EQ(rows.v[1].record[0], v[1].record[0]);
	store_close(s);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM service"), 2);
}

struct mc_rows {
	struct store_mcast g[4];
	size_t n;
};

static int mc_collect(void *ctx, const struct store_mcast *g)
{
	struct mc_rows *r = ctx;

	if (r->n < 4)
		r->g[r->n] = *g;
	r->n++;
	return 0;
}

static int mc_stop(void *ctx, const struct store_mcast *g)
{
	mc_collect(ctx, g);
	return 7;
}

/* Multicast groups: kept by MGID, replaced and deleted, read back in MLID order */
/* Fabric health (schema 7): isolated links kept by port, and a bounded event history */
struct iso_rows {
	struct store_isolated v[8];
	int n;
};

static int iso_collect(void *ctx, const struct store_isolated *v)
{
	struct iso_rows *r = ctx;

	if (r->n < 8)
		r->v[r->n] = *v;
	r->n++;
	return 0;
}

struct pev_rows {
	struct store_perf_event first, last;
	int n;
};

static int pev_collect(void *ctx, const struct store_perf_event *v)
{
	struct pev_rows *r = ctx;

	if (!r->n)
		r->first = *v;
	r->last = *v;
	r->n++;
	return 0;
}

static void test_health(void)
{
	const char *db = path_of("health.db");
	struct store *s = NULL;
	struct store_isolated v[2] = { 0 };
	struct iso_rows rows = { 0 };
	struct store_perf_event ev[30];
	struct pev_rows pr = { 0 };

	CHECK_EQ(store_open(db, 0, &s), 0);
	v[0] = (struct store_isolated){ .node_guid = 0x8002c90300000001ull, .port = 3,
					 .since = 1700000000, .rule = "symbol_errors",
					 .reason = "5000 in 600 s", .present = 1 };
	v[1] = (struct store_isolated){ .node_guid = 0x0002c90300000002ull, .port = 254,
					 .since = 1700000100, .rule = "link_downs", .present = 1 };
	CHECK_EQ(store_isolated_save(s, v, 2, 1700000200), 0);
	CHECK_EQ(store_foreach_isolated(s, iso_collect, &rows), 0);
	CHECK_EQ(rows.n, 2);
	CHECK(rows.v[0].node_guid == v[0].node_guid && rows.v[0].port == 3);
	CHECK_EQ(rows.v[0].since, 1700000000);
	CHECK(!strcmp(rows.v[0].rule, "symbol_errors") && !strcmp(rows.v[0].reason, "5000 in 600 s"));
	CHECK_EQ(rows.v[1].port, 254);
	/* Saved again: the reason changes, since stays; present 0 deletes */
	snprintf(v[0].reason, sizeof(v[0].reason), "6000 in 600 s");
	v[0].since = 1800000000;
	v[1].present = 0;
	CHECK_EQ(store_isolated_save(s, v, 2, 1700000300), 0);
	rows.n = 0;
	CHECK_EQ(store_foreach_isolated(s, iso_collect, &rows), 0);
	CHECK_EQ(rows.n, 1);
	CHECK_EQ(rows.v[0].since, 1700000000);
	CHECK(!strcmp(rows.v[0].reason, "6000 in 600 s"));
	/* Port 0 or 255 is no port a link has */
	v[0].port = 0;
	CHECK_EQ(store_isolated_save(s, v, 1, 1700000300), -EINVAL);
	/* Events: added, then only the newest kept */
	for (int i = 0; i < 30; i++) {
		memset(&ev[i], 0, sizeof(ev[i]));
		ev[i].time = 1700000000 + i;
		ev[i].node_guid = 0xfffffffffffffff0ull + (uint64_t)(i % 4);
		ev[i].port = (uint8_t)(1 + i % 3);
		snprintf(ev[i].kind, sizeof(ev[i].kind), "symbol_errors");
		ev[i].count = (uint64_t)i;
		ev[i].total = 1000 + (uint64_t)i;
		snprintf(ev[i].detail, sizeof(ev[i].detail), "event %d", i);
	}
	CHECK_EQ(store_perf_events_add(s, ev, 20, 100), 0);
	CHECK_EQ(store_perf_events_add(s, ev + 20, 10, 12), 0);
	CHECK_EQ(store_foreach_perf_event(s, 1000, pev_collect, &pr), 0);
	CHECK_EQ(pr.n, 12);
	CHECK_EQ(pr.first.time, 1700000018);
	CHECK_EQ(pr.last.time, 1700000029);
	CHECK(pr.last.node_guid == ev[29].node_guid && pr.last.port == ev[29].port);
	CHECK_EQ(pr.last.total, 1029);
	CHECK(!strcmp(pr.last.detail, "event 29"));
	pr.n = 0;
	CHECK_EQ(store_foreach_perf_event(s, 3, pev_collect, &pr), 0);
	CHECK_EQ(pr.n, 3);
	CHECK_EQ(pr.first.time, 1700000027);
	store_close(s);
	/* Kept across a reopen */
	rows.n = 0;
	CHECK_EQ(store_open(db, 1, &s), 0);
	CHECK_EQ(store_foreach_isolated(s, iso_collect, &rows), 0);
	CHECK_EQ(rows.n, 1);
	store_close(s);
}

static void test_mcast_groups(void)
{
	const char *db = path_of("mcast.db");
	struct store *s = NULL;
	struct store_mcast g[3] = { 0 };
	struct mc_rows rows = { 0 };

	CHECK_EQ(store_open(db, 0, &s), 0);
	for (int i = 0; i < 3; i++) {
		g[i].mgid[0] = 0xff;
		g[i].mgid[1] = 0x12;
		g[i].mgid[15] = (uint8_t)i;
		g[i].mlid = (uint16_t)(0xc002 - i);
		g[i].present = 1;
	}
	CHECK_EQ(store_mcast_save(s, g, 3, 1600000000), 0);
	CHECK_EQ(store_foreach_mcast(s, mc_collect, &rows), 0);
	CHECK_EQ(rows.n, 3);
	CHECK(rows.g[0].mlid == 0xc000 && rows.g[0].mgid[15] == 2 && rows.g[2].mgid[15] == 0);
	CHECK(rows.g[1].present && !memcmp(rows.g[1].mgid, g[1].mgid, 16));
	/* Another MLID for group 0; group 1 deleted: created stays, last_seen moves */
	g[0].mlid = 0xc010;
	g[1].present = 0;
	CHECK_EQ(store_mcast_save(s, g, 2, 1600000100), 0);
	rows.n = 0;
	CHECK_EQ(store_foreach_mcast(s, mc_collect, &rows), 0);
	CHECK_EQ(rows.n, 2);
	CHECK(rows.g[0].mgid[15] == 2 && rows.g[1].mgid[15] == 0 && rows.g[1].mlid == 0xc010);
	/* A callback that stops: its value comes back, no more rows are read */
	rows.n = 0;
	CHECK_EQ(store_foreach_mcast(s, mc_stop, &rows), 7);
	CHECK_EQ(rows.n, 1);
	store_close(s);
	CHECK_EQ(sql_int(db, "SELECT created FROM mcast_group WHERE mlid = 49168"), 1600000000);
	CHECK_EQ(sql_int(db, "SELECT last_seen FROM mcast_group WHERE mlid = 49168"), 1600000100);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM mcast_group"), 2);
}

static void test_fabric_events(void)
{
	const char *db = path_of("events.db");
	struct fabric *t1 = fabric_t(1), *t2 = fabric_t(2), *g = NULL;
	struct store_sweep sw = sweep_one, got;
	struct store *s = NULL;
	struct rows rows = { 0 };

	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(store_save_sweep(s, t1, &sw), 0);
	/* A new fabric: nodes and LIDs, not each of their ports and cables */
	CHECK_EQ(events_of(db, 1, "node_appeared"), 4);
	CHECK_EQ(events_of(db, 1, "lid_assigned"), 5);
	CHECK_EQ(sql_count(db, "event"), 9);
	CHECK_EQ(sql_int(db, "SELECT events FROM sweep WHERE id = 1"), 9);
	CHECK_EQ(sql_count(db, "node WHERE present = 1"), 4);
	CHECK_EQ(sql_count(db, "port WHERE present = 1"), 7 + 2 + 1 + 1);
	CHECK_EQ(sql_count(db, "link"), 4);
	CHECK_EQ(sql_count(db, "switch"), 0);	/* no SwitchInfo in this model */
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM port WHERE node_guid = 256 AND num = 1"
			 " AND guid = 257 AND lid = 5 AND state = 4 AND width = 2 AND speed = 1"), 1);
	CHECK_EQ(sql_int(db, "PRAGMA foreign_key_check"), -1);	/* no rows */

	sw.started += 60;
	CHECK_EQ(store_save_sweep(s, t2, &sw), 0);
	CHECK_EQ(events_of(db, 2, "node_vanished"), 1);
	CHECK_EQ(events_of(db, 2, "node_appeared"), 1);
	CHECK_EQ(events_of(db, 2, "node_renamed"), 1);
	CHECK_EQ(events_of(db, 2, "port_state"), 4);	/* [3], [4] down, [5], [6] up */
	CHECK_EQ(events_of(db, 2, "port_appeared"), 0);	/* SW1[5], [6] were there, down */
	CHECK_EQ(events_of(db, 2, "port_vanished"), 0);	/* CA3's went with CA3 */
	CHECK_EQ(events_of(db, 2, "link_vanished"), 2);
	CHECK_EQ(events_of(db, 2, "link_appeared"), 2);
	CHECK_EQ(events_of(db, 2, "lid_changed"), 1);
	CHECK_EQ(events_of(db, 2, "lid_assigned"), 1);
	CHECK_EQ(events_of(db, 2, "lid_released"), 0);
	CHECK_EQ(sql_int(db, "SELECT events FROM sweep WHERE id = 2"), 13);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM event WHERE kind = 'lid_changed'"
			 " AND old_value = 3 AND new_value = 7 AND port_num = 2"), 1);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM event WHERE kind = 'port_state'"
			 " AND old_value = 4 AND new_value = 1 AND port_num IN (3, 4)"), 2);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM event WHERE kind = 'node_renamed'"
			 " AND old_value = 'ca1' AND new_value = 'ca1 renamed'"), 1);
	/* CA3 is absent, remembered: node, ports and LID stay, its cable goes */
	CHECK_EQ(sql_int(db, "SELECT last_seen FROM node WHERE guid = 256 AND present = 0"),
		 (int)sweep_one.started);
	CHECK_EQ(sql_count(db, "port WHERE node_guid = 256 AND present = 0"), 1);
	CHECK_EQ(sql_count(db, "link"), 4);
	CHECK_EQ(lookup(s, CA3P1), 5);
	CHECK_EQ(store_foreach_lid(s, collect, &rows), 0);
	for (int i = 0; i < rows.n && i < 64; i++)
		CHECK_EQ(rows.l[i].present, rows.l[i].guid != CA3P1);
	/* The loaded fabric is t2 */
	CHECK_EQ(store_load_fabric(s, &g, &got), 0);
	if (g) {
		struct fab_node *n = fabric_find(g, SW1);

		CHECK_EQ(got.id, 2);
		CHECK_EQ(g->nnodes, 4);
		CHECK(fabric_find(g, CA3) == NULL);
		CHECK(fabric_find(g, CA4) != NULL);
		CHECK(n && n->ports[5].peer && n->ports[5].peer->node->guid == CA2);
		CHECK(n && !n->ports[3].peer && n->ports[3].pi.port_state == PORT_STATE_DOWN);
		CHECK(n && n->ports[0].lid == 1 && n->ports[0].guid == SW1);
		CHECK(!strcmp(fabric_find(g, CA1)->desc, "ca1 renamed"));
		CHECK_EQ(fabric_find(g, CA1)->ports[2].lid, 7);
		fabric_free(g);
	}

	/* Nothing changed: nothing recorded */
	sw.started += 60;
	CHECK_EQ(store_save_sweep(s, t2, &sw), 0);
	CHECK_EQ(sql_int(db, "SELECT events FROM sweep WHERE id = 3"), 0);
	CHECK_EQ(sql_count(db, "event WHERE sweep_id = 3"), 0);

	/* CA3 back where it was, CA4 gone: its LID and remembered rows unchanged */
	sw.started += 60;
	CHECK_EQ(store_save_sweep(s, t1, &sw), 0);
	CHECK_EQ(events_of(db, 4, "node_appeared"), 1);
	CHECK_EQ(events_of(db, 4, "node_vanished"), 1);
	CHECK_EQ(events_of(db, 4, "lid_assigned"), 0);
	CHECK_EQ(events_of(db, 4, "lid_changed"), 1);	/* CA1P2 7 -> 3 */
	CHECK_EQ(sql_int(db, "SELECT first_seen FROM node WHERE guid = 256 AND present = 1"),
		 (int)sweep_one.started);
	CHECK_EQ(lookup(s, CA4P1), 6);
	CHECK_EQ(sql_int(db, "PRAGMA foreign_key_check"), -1);
	store_close(s);
	fabric_free(t1);
	fabric_free(t2);
}

/*
 * Issue 23: today's link speeds go into the model and come back: SW1[1] to
 * CA1[1] 4x XDR (IBA 1.7: valid by SW1 port 0's and CA1's capabilities),
 * SW1[3] to CA2 FDR10
 */
static void test_speeds(void)
{
	const char *db = path_of("speeds.db");
	struct fabric *f = fabric_t(1), *g = NULL;
	struct fab_node *sw = fabric_find(f, SW1), *c1 = fabric_find(f, CA1);
	struct fab_node *c2 = fabric_find(f, CA2);
	struct store_sweep sw1 = sweep_one, got;
	struct store *s = NULL;
	struct fab_port *xp[] = { &sw->ports[1], &c1->ports[1] };

	sw->ports[0].pi.cap_mask = c1->ports[1].pi.cap_mask = PORT_CAP_EXT_SPEEDS |
							      PORT_CAP_CAP_MASK2;
	sw->ports[0].pi.cap_mask2 = c1->ports[1].pi.cap_mask2 = PORT_CAP2_EXT_SPEEDS2 |
								PORT_CAP2_XDR;
	for (unsigned int i = 0; i < 2; i++) {
		xp[i]->pi.link_speed_active = 4;
		xp[i]->pi.link_speed_ext_active = 8;
		xp[i]->pi.link_speed_ext_active2 = 1;
	}
	sw->ports[3].pi.link_speed_active = c2->ports[1].pi.link_speed_active = 4;
	sw->ports[3].fdr10 = c2->ports[1].fdr10 = true;
	CHECK_EQ(fabric_port_speed(&sw->ports[1]), IBA_SPEED_XDR);
	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(store_save_sweep(s, f, &sw1), 0);
	CHECK_EQ(sql_count(db, "port WHERE speed_ext2 = 1"), 2);
	CHECK_EQ(sql_count(db, "port WHERE fdr10 = 1"), 2);
	CHECK_EQ(sql_count(db, "port WHERE cap_mask2 = 6144"), 2);
	CHECK_EQ(store_load_fabric(s, &g, &got), 0);
	if (g) {
		struct fab_node *gs = fabric_find(g, SW1), *g1 = fabric_find(g, CA1);
		struct fab_node *g2 = fabric_find(g, CA2);

		CHECK_EQ(fabric_port_speed(&gs->ports[1]), IBA_SPEED_XDR);
		CHECK_EQ(fabric_port_speed(&g1->ports[1]), IBA_SPEED_XDR);
		CHECK_EQ(fabric_port_speed(&gs->ports[3]), IBA_SPEED_FDR10);
		CHECK_EQ(fabric_port_speed(&g2->ports[1]), IBA_SPEED_FDR10);
		CHECK_EQ(fabric_port_speed(&gs->ports[2]), IBA_SPEED_SDR);
		fabric_free(g);
	}
	store_close(s);
	fabric_free(f);
}

/* A failed sweep is history, not a fabric */
static void test_failed_sweep(void)
{
	const char *db = path_of("failed.db");
	struct store_sweep sw = sweep_one, got;
	struct fabric *f = fabric_t(1), *g = NULL;
	struct store *s = NULL;

	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(store_save_sweep(s, f, &sw), 0);
	sw.started += 10;
	sw.err = -EHOSTUNREACH;
	CHECK_EQ(store_save_sweep(s, NULL, &sw), 0);
	memset(&got, 0, sizeof(got));
	CHECK_EQ(store_last_sweep(s, &got), 0);
	CHECK(got.err != 0);
	CHECK(!strcmp(got.error, strerror(EHOSTUNREACH)));
	CHECK_EQ(got.up, 0);
	CHECK_EQ(got.id, 2);
	CHECK_EQ(sql_count(db, "sweep WHERE outcome = 'failed'"), 1);
	/* The fabric is still the one of sweep 1, all present */
	CHECK_EQ(store_load_fabric(s, &g, &got), 0);
	CHECK_EQ(got.id, 1);
	CHECK(g && g->nnodes == 4);
	CHECK_EQ(sql_count(db, "node WHERE present = 1"), 4);
	fabric_free(g);
	store_close(s);
	fabric_free(f);
}

static int count_sweep(void *ctx, const struct store_sweep *sw)
{
	int64_t *last = ctx;

	CHECK(sw->id > *last);		/* oldest first */
	*last = sw->id;
	return 0;
}

static int count_event(void *ctx, const struct store_event *e)
{
	int *n = ctx;

	if (!strcmp(e->kind, "lid_forgotten")) {
		CHECK_EQ(e->sweep_id, 0);
		CHECK(e->port_guid == CA3P1);
		CHECK(!strcmp(e->old_value, "5"));
		CHECK(!strcmp(e->detail, "ca3"));
		CHECK_EQ(e->port_num, -1);
	}
	(*n)++;
	return 0;
}

/* After store_interrupt (shutdown) no sweep is committed: the database stays as it was */
static void test_interrupt(void)
{
	const char *db = path_of("interrupt.db");
	struct store_sweep sw = sweep_one, last;
	struct fabric *t1 = fabric_t(1), *t2 = fabric_t(2);
	struct store *s = NULL;

	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(store_save_sweep(s, t1, &sw), 0);
	store_interrupt(s);
	sw.started += 60;
	CHECK_EQ(store_save_sweep(s, t2, &sw), -ECANCELED);
	CHECK(strstr(store_errmsg(s), "interrupted") != NULL);
	CHECK_EQ(store_save_sweep(s, NULL, &sw), -ECANCELED);
	memset(&last, 0, sizeof(last));
	CHECK_EQ(store_last_sweep(s, &last), 0);
	CHECK(sweep_eq(&last, &sweep_one));
	CHECK_EQ(lookup(s, CA3P1), 5);
	store_interrupt(NULL);
	store_close(s);
	CHECK_EQ(sql_int(db, "SELECT count(*) FROM sweep"), 1);
	fabric_free(t1);
	fabric_free(t2);
}

/* smctl lids --forget, reservations, history */
static void test_forget_and_history(void)
{
	const char *db = path_of("forget.db");
	struct store_sweep sw = sweep_one;
	struct fabric *t1 = fabric_t(1), *t2 = fabric_t(2);
	struct lid_reservation *res = NULL;
	struct store *s = NULL;
	size_t n = 0;
	uint16_t lid = 0;
	int64_t last = 0;
	int nev = 0;

	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(store_save_sweep(s, t1, &sw), 0);
	sw.started += 60;
	CHECK_EQ(store_save_sweep(s, t2, &sw), 0);
	CHECK_EQ(store_lid_reservations(s, &res, &n), 0);
	CHECK_EQ(n, 6);		/* SW1, CA1 x2, CA2, CA3 (absent), CA4 */
	for (size_t i = 0; i < n; i++) {
		CHECK(i == 0 || res[i].lid > res[i - 1].lid);
		if (res[i].guid == CA3P1)
			CHECK_EQ(res[i].lid, 5);
	}
	free(res);
	CHECK_EQ(store_lid_forget(s, CA3P1, 1700000999, &lid), 0);
	CHECK_EQ(lid, 5);
	CHECK_EQ(lookup(s, CA3P1), -ENOENT);
	CHECK_EQ(store_lid_forget(s, CA3P1, 1700000999, &lid), -ENOENT);
	CHECK(strstr(store_errmsg(s), "no LID") != NULL);
	CHECK_EQ(store_lid_reservations(s, &res, &n), 0);
	CHECK_EQ(n, 5);
	free(res);
	CHECK_EQ(store_foreach_sweep(s, 10, count_sweep, &last), 0);
	CHECK_EQ(last, 2);
	CHECK_EQ(store_foreach_event(s, 1000, count_event, &nev), 0);
	CHECK_EQ(nev, sql_count(db, "event"));
	nev = 0;
	CHECK_EQ(store_foreach_event(s, 3, count_event, &nev), 0);
	CHECK_EQ(nev, 3);
	store_close(s);
	fabric_free(t1);
	fabric_free(t2);
}

/* ---- locks and crashes ---- */

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/*
 * Another process holds the write lock: a save fails with -EBUSY after the
 * busy timeout instead of hanging, reads go on, and once the lock is gone
 * the store works again. A migration that cannot take the lock fails too,
 * leaving the old schema.
 */
static void test_locked(void)
{
	const char *db = path_of("locked.db"), *old = path_of("locked-v1.db");
	struct store *s = NULL, *ro = NULL;
	struct fabric *f = fabric_one();
	int ready[2], go[2], status = -1;
	double t0, dt;
	pid_t pid;
	char c = 0;

	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(store_save_sweep(s, f, &sweep_one), 0);
	store_close(s);
	CHECK_EQ(sql_exec(old, v1_db), SQLITE_OK);
	if (pipe(ready) || pipe(go))
		abort();
	/*
	 * The child inherits the heap but uses none of it: what it holds no
	 * pointer to at its _exit is a leak to valgrind (--leak-check=full
	 * --error-exitcode, as tests/sim/t_valgrind.sh runs it), which then
	 * changes the child's exit status. So nothing is allocated across the
	 * fork: the parent makes its fabric again afterwards.
	 */
	fabric_free(f);
	pid = fork();
	if (pid == 0) {
		sqlite3 *h1, *h2;

		close(ready[0]);
		close(go[1]);
		if (sqlite3_open(db, &h1) != SQLITE_OK || sqlite3_open(old, &h2) != SQLITE_OK ||
		    sqlite3_exec(h1, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK ||
		    sqlite3_exec(h2, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
			_exit(1);
		if (write(ready[1], "x", 1) != 1 || read(go[0], &c, 1) < 0)
			_exit(1);
		sqlite3_exec(h1, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_exec(h2, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(h1);
		sqlite3_close(h2);
		_exit(0);
	}
	close(ready[1]);
	close(go[0]);
	f = fabric_one();
	CHECK_EQ(read(ready[0], &c, 1), 1);

	/* Opening needs no write (WAL, current schema), reading neither */
	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(lookup(s, CA1P1), 2);
	t0 = now_s();
	CHECK_EQ(store_save_sweep(s, f, &sweep_one), -EBUSY);
	dt = now_s() - t0;
	CHECK(strstr(store_errmsg(s), "locked by another process") != NULL);
	CHECK(dt >= STORE_BUSY_TIMEOUT_MS / 1000.0 * 0.9 && dt < STORE_BUSY_TIMEOUT_MS / 1000.0 + 2);
	CHECK_EQ(store_open(db, 1, &ro), 0);
	CHECK_EQ(lookup(ro, CA1P1), 2);
	store_close(ro);
	/* A migration waits as long, then gives up and changes nothing */
	ro = NULL;
	CHECK_EQ(store_open(old, 0, &ro), -EBUSY);
	CHECK(ro && strstr(store_errmsg(ro), "locked") != NULL);
	store_close(ro);

	CHECK_EQ(write(go[1], "x", 1), 1);
	close(go[1]);
	close(ready[0]);
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	CHECK_EQ(sql_int(old, "PRAGMA user_version"), 1);
	CHECK_EQ(store_save_sweep(s, f, &sweep_one), 0);
	CHECK_EQ(sql_count(db, "sweep"), 2);
	store_close(s);
	fabric_free(f);
}

#define BIG_CAS		150
#define BIG_SWITCHES	10

/*
 * which 1: switches and CAs 0..149; which 2: CAs 0..19 unplugged, CAs
 * 150..169 new. Every port has its own LID in both.
 */
static struct fabric *fabric_big(int which)
{
	struct fab_node *sw[BIG_SWITCHES];
	struct fabric *f;

	if (fabric_new(&f))
		abort();
	for (unsigned int i = 0; i < BIG_SWITCHES; i++) {
		sw[i] = add_node(f, NODE_TYPE_SWITCH, 0xe000000000000000u + i, 36,
				 "a switch with a long description to fill the pages");
		set_port(sw[i], 0, 0, (uint16_t)(1 + i), 0);
		for (unsigned int pn = 1; pn <= 36; pn++)
			set_port(sw[i], pn, 0, 0, 0);
	}
	for (unsigned int i = which == 1 ? 0 : 20; i < BIG_CAS + (which == 1 ? 0 : 20); i++) {
		uint64_t g = 0x0002c90300100000u + 4 * (uint64_t)i;
		struct fab_node *n = add_node(f, NODE_TYPE_CA, g, 1, "a host");

		set_port(n, 1, g + 1, (uint16_t)(100 + i), 0);
		cable(f, sw[i % BIG_SWITCHES], 1 + i / BIG_SWITCHES + (which == 1 ? 0 : 17), n, 1);
	}
	return f;
}

/* Saves a and b in turn, forever */
static void __attribute__((noreturn)) save_forever(const char *db, struct fabric *a,
						   struct fabric *b, int64_t t)
{
	struct store *s = NULL;
	struct store_sweep sw = sweep_one;

	if (store_open(db, 0, &s) < 0)
		_exit(3);
	for (unsigned int k = 0;; k++) {
		sw.started = t + k;
		store_save_sweep(s, k & 1 ? b : a, &sw);
	}
}

/*
 * kill -9 at random moments of saves (and of creating the database): it
 * always opens, passes the integrity and foreign key checks, and every
 * port of the first fabric keeps its LID.
 */
static void test_kill9(void)
{
	const char *db = path_of("crash.db"), *fresh = path_of("crash-new.db");
	struct fabric *a = fabric_big(1), *b = fabric_big(2);
	struct store *s = NULL;
	unsigned int seed = 12345, lost = 0, unopened = 0, fresh_saved = 0;
	int kills = 100;

	double t0 = now_s();
	long span_us;

	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(store_save_sweep(s, a, &sweep_one), 0);
	store_close(s);
	/* Kills within about four saves (creating the file included) of the start */
	span_us = (long)((now_s() - t0) * 4e6) + 2000;
	for (int it = 0; it < kills; it++) {
		bool new_db = it % 10 == 9;
		const char *path = new_db ? fresh : db;
		long us = (long)(rand_r(&seed) % (unsigned int)span_us);
		struct timespec d = { us / 1000000, (us % 1000000) * 1000 };
		pid_t pid;
		int r;

		if (new_db)
			unlink_db(fresh);
		pid = fork();
		if (pid == 0)
			save_forever(path, a, b, 1800000000 + it * 1000);
		/*
		 * Some kills wait for one more commit first, so that the checks
		 * below never depend on how fast this machine is: a new file
		 * every other time, the old one every fifth time.
		 */
		if ((new_db && (it / 10) % 2) || (!new_db && it % 5 == 0)) {
			int before = new_db ? 0 : sql_count(path, "sweep");

			for (int w = 0; w < 60000 && sql_count(path, "sweep") <= before; w++) {
				struct timespec ms = { 0, 1000000 };

				nanosleep(&ms, NULL);
			}
		}
		nanosleep(&d, NULL);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);

		s = NULL;
		r = store_open(path, 0, &s);
		if (r < 0) {
			unopened++;
			fprintf(stderr, "  kill %d: %s does not open: %s\n", it, path,
				store_errmsg(s));
			store_close(s);
			continue;
		}
		if (sql_int(path, "PRAGMA foreign_key_check") != -1 ||
		    sql_int(path, "SELECT count(*) FROM link l WHERE NOT EXISTS (SELECT 1 FROM port p"
			    " WHERE p.node_guid = l.node_a AND p.num = l.port_a)") != 0)
			lost++;
		if (new_db && sql_count(path, "sweep") > 0)
			fresh_saved++;
		if (!new_db || sql_count(path, "sweep") > 0) {
			for (unsigned int i = 0; i < BIG_CAS + 20; i++) {
				uint64_t g = 0x0002c90300100000u + 4 * (uint64_t)i + 1;
				int lid = lookup(s, g);

				/* Every save has the first fabric's ports; B's may not be there */
				if (lid != 100 + (int)i && !(lid == -ENOENT && i >= BIG_CAS))
					lost++;
			}
		}
		store_close(s);
	}
	CHECK_EQ(unopened, 0);
	CHECK_EQ(lost, 0);
	CHECK(fresh_saved > 0);		/* some kills came after a first commit */
	CHECK(sql_count(db, "sweep") > 10);
	fprintf(stderr, "  %d kills, %d sweeps committed\n", kills, sql_count(db, "sweep"));
	fabric_free(a);
	fabric_free(b);
}

struct part_rows {
	struct store_partition p[8];
	struct store_port_pkey k[16];
	size_t np, nk;
};

static int part_row(void *ctx, const struct store_partition *p)
{
	struct part_rows *r = ctx;

	if (r->np < 8)
		r->p[r->np] = *p;
	r->np++;
	return 0;
}

static int pkey_row(void *ctx, const struct store_port_pkey *k)
{
	struct part_rows *r = ctx;

	if (r->nk < 16)
		r->k[r->nk] = *k;
	r->nk++;
	return 0;
}

/* Partitions and memberships: saved with the fabric, replaced by the next */
static void test_partitions(void)
{
	const char *db = path_of("parts.db");
	struct store *s = NULL;
	struct fabric *f = fabric_one();
	struct store_partition parts[2] = {
		{ .pkey = 0x7fff, .ipoib = true, .name = "Default" },
		{ .pkey = 0x0001, .name = "A" },
	};
	struct store_sweep sw = sweep_one;
	static const uint16_t t1[32] = { 0x7fff, 0x8001 }, t2[32] = { 0xffff };
	struct part_rows r = { 0 };
	struct fab_node *ca1 = fabric_find(f, CA1), *sw1 = fabric_find(f, SW1);

	CHECK(ca1 && sw1);
	if (!ca1 || !sw1)
		return;
	CHECK_EQ(fabric_port_set_pkeys(&ca1->ports[1], t1, 32), 0);
	CHECK_EQ(fabric_port_set_pkeys(&sw1->ports[0], t2, 32), 0);
	sw.partitions = parts;
	sw.npartitions = 2;
	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(store_save_sweep(s, f, &sw), 0);
	CHECK_EQ(store_foreach_partition(s, part_row, &r), 0);
	CHECK_EQ(store_foreach_port_pkey(s, pkey_row, &r), 0);
	CHECK_EQ(r.np, 2);
	CHECK(r.p[0].pkey == 0x0001 && !strcmp(r.p[0].name, "A") && !r.p[0].ipoib);
	CHECK(r.p[1].pkey == 0x7fff && !strcmp(r.p[1].name, "Default") && r.p[1].ipoib);
	/* Sorted by P_Key: CA1's A (full), then Default: CA1 limited, SW1 full */
	CHECK_EQ(r.nk, 3);
	CHECK(r.k[0].port_guid == CA1P1 && r.k[0].pkey == 0x8001);
	CHECK(r.k[1].pkey == 0x7fff || r.k[1].pkey == 0xffff);
	CHECK(r.k[2].pkey == 0x7fff || r.k[2].pkey == 0xffff);
	CHECK(r.k[1].port_guid != r.k[2].port_guid);
	/* The next sweep's fabric replaces them; a failed sweep keeps them */
	sw.npartitions = 1;
	CHECK_EQ(fabric_port_set_pkeys(&ca1->ports[1], t2, 32), 0);
	{
		struct store_sweep failed = sweep_one;

		failed.err = -EIO;
		CHECK_EQ(store_save_sweep(s, NULL, &failed), 0);
		memset(&r, 0, sizeof(r));
		CHECK_EQ(store_foreach_partition(s, part_row, &r), 0);
		CHECK_EQ(r.np, 2);
	}
	CHECK_EQ(store_save_sweep(s, f, &sw), 0);
	memset(&r, 0, sizeof(r));
	CHECK_EQ(store_foreach_partition(s, part_row, &r), 0);
	CHECK_EQ(store_foreach_port_pkey(s, pkey_row, &r), 0);
	CHECK_EQ(r.np, 1);
	CHECK_EQ(r.nk, 2);
	CHECK(r.nk == 2 && r.k[0].pkey == 0xffff && r.k[1].pkey == 0xffff);
	store_close(s);
	fabric_free(f);
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
	RUN(test_migrate_v1);
	RUN(test_fabric_events);
	RUN(test_speeds);
	RUN(test_failed_sweep);
	RUN(test_interrupt);
	RUN(test_forget_and_history);
	RUN(test_locked);
	RUN(test_kill9);
	RUN(test_services);
	RUN(test_mcast_groups);
	RUN(test_partitions);
	RUN(test_health);
	rm_tmpdir();
	return unit_report();
}
