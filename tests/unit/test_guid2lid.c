// SPDX-License-Identifier: MIT
/*
 * OpenSM's guid2lid into smd's database (db/guid2lid.c, store_lid_import):
 * every kind of bad file refused whole with its line number, the import
 * all or nothing against what the database already holds, and a fabric
 * whose ports hold no LID given exactly the file's LIDs by lid_assign.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db/guid2lid.h"
#include "db/store.h"
#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/lid.h"

static char tmpdir[64];

/* Parse text as a guid2lid file named "g2l": the return value, err and entries */
static int parse(const char *text, size_t len, struct guid2lid *g, char *err, size_t errlen)
{
	FILE *f = fmemopen((void *)text, len, "r");
	int r;

	err[0] = 0;
	if (!f)
		return -errno;
	r = guid2lid_read(f, "g2l", g, err, errlen);
	fclose(f);
	return r;
}

static void test_good(void)
{
	/* As OpenSM writes it (blank line after each entry), a comment, LMC blocks */
	static const char text[] =
		"0x0002c90300000021 0x000e 0x000e\n\n"
		"0x0011750000000001 0x0002 0x0002\n\n"
		"# a comment\n"
		"  0x0002c90300000005\t0x0008 0x000b\r\n"
		"0x0002c90300000009 0x0010 0x0011\n";
	struct guid2lid g;
	char err[256];

	CHECK_EQ(parse(text, strlen(text), &g, err, sizeof(err)), 0);
	CHECK_EQ(g.n, 4);
	if (g.n == 4) {
		CHECK(g.e[0].guid == 0x0002c90300000021ULL);
		CHECK_EQ(g.e[0].lid, 14);
		CHECK_EQ(g.e[0].lmc, 0);
		CHECK_EQ(g.line[0], 1);
		CHECK_EQ(g.e[2].lid, 8);
		CHECK_EQ(g.e[2].lmc, 2);
		CHECK_EQ(g.line[2], 6);
		CHECK_EQ(g.e[3].lid, 16);
		CHECK_EQ(g.e[3].lmc, 1);
	}
	guid2lid_free(&g);
}

/* Each bad file: refused, nothing returned, the message names the line */
static void test_bad(void)
{
	static const struct {
		const char *text;
		size_t len;		/* 0: strlen */
		const char *want;	/* in the message */
	} bad[] = {
		{ "0x1 0x5 0x5\n0x2 0x6 0x6\n0x1 0x7 0x7\n", 0,
		  "g2l:3: port GUID 0x0000000000000001 again (first on line 1)" },
		{ "0x1 0x5 0x5\n\n0x2 0x5 0x5\n", 0,
		  "g2l:3: LID 5 of port GUID 0x0000000000000002 overlaps LID 5 of port GUID "
		  "0x0000000000000001 (line 1)" },
		/* A block holding another's LID, whichever comes first */
		{ "0x1 0x9 0x9\n0x2 0x8 0xb\n", 0, "g2l:2: LIDs 8-11 of port GUID" },
		{ "0x2 0x8 0xb\n0x1 0xa 0xa\n", 0, "g2l:2: LID 10 of port GUID 0x0000000000000001 "
		  "overlaps LIDs 8-11" },
		{ "0x1 0x5 0x5\n0x2 0x0 0x0\n", 0, "g2l:2: LID 0 is not a unicast LID" },
		{ "0x1 0xc000 0xc000\n", 0, "g2l:1: LID 49152 is not a unicast LID" },
		{ "0x1 0xbfff 0xc000\n", 0, "g2l:1: LID 49152 is not a unicast LID" },
		{ "0x1 0x5 0x6\n", 0, "g2l:1: LIDs 5-6: base LID not aligned to LMC 1" },
		{ "0x1 0x4 0x6\n", 0, "g2l:1: LIDs 4-6: 3 LIDs, not 2^LMC" },
		{ "0x1 0x100 0x1ff\n", 0, "g2l:1: LIDs 256-511: 256 LIDs, not 2^LMC" },
		{ "0x1 0x6 0x5\n", 0, "g2l:1: last LID 5 below first LID 6" },
		{ "0x0 0x5 0x5\n", 0, "g2l:1: port GUID 0" },
		{ "0x1 0x5\n", 0, "g2l:1: 2 fields" },
		{ "0x1 0x5 0x5 0x5\n", 0, "g2l:1: more than 3 fields" },
		{ "0xzz 0x5 0x5\n", 0, "g2l:1: bad port GUID '0xzz'" },
		{ "0x1 -5 0x5\n", 0, "g2l:1: bad LID '-5'" },
		{ "0x1 0x5 0x10000\n", 0, "g2l:1: bad LID '0x10000'" },
		{ "0x1 0x5 0x5\n0x2 0x6\0 0x6\n", 24, "g2l:2: binary data" },
		{ "0x1 0x5 0x5\n\x7f\x45LF\x02\x01\n", 0, "g2l:2: binary data" },
		{ "", 0, "g2l: no entries" },
		{ "\n# nothing\n\n", 0, "g2l: no entries" },
	};
	char err[512];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		size_t len = bad[i].len ? bad[i].len : strlen(bad[i].text);
		struct guid2lid g = { .n = 99 };
		int r = parse(bad[i].text, len, &g, err, sizeof(err));

		CHECK_MSG(r < 0 && strstr(err, bad[i].want), "case %zu: %d '%s', wanted '%s'", i,
			  r, err, bad[i].want);
		CHECK_MSG(!g.n && !g.e, "case %zu: entries returned", i);
	}
	/* A line longer than OpenSM writes */
	{
		char *text = malloc(4000);
		struct guid2lid g;

		memset(text, ' ', 3000);
		memcpy(text + 3000, "0x1 0x5 0x5\n", 13);
		CHECK(parse(text, strlen(text), &g, err, sizeof(err)) == -EINVAL &&
		      strstr(err, "g2l:1: line longer than 1024 bytes"));
		free(text);
	}
}

static int count_lids(void *ctx, const struct store_lid *l)
{
	(void)l;
	++*(int *)ctx;
	return 0;
}

static int lids_in(struct store *s)
{
	int n = 0;

	return store_foreach_lid(s, count_lids, &n) < 0 ? -1 : n;
}

static int lookup(struct store *s, uint64_t guid)
{
	uint16_t lid = 0;
	int r = store_lid_lookup(s, guid, &lid);

	return r < 0 ? r : lid;
}

static void test_import(void)
{
	char db[128], err[256];
	struct store_import_stats st;
	struct store *s = NULL;
	struct guid2lid g;
	const struct lid_reservation clash[] = {
		{ 0xa1, 40, 0 }, { 0xa2, 41, 0 }, { 0xa3, 40, 0 },
	};
	static const char first[] = "0x11 0x5 0x5\n0x12 0x8 0xb\n0x13 0x20 0x20\n";
	/* 0x11 kept as the database has it, 0x12 too (another LID in the file) */
	static const char second[] = "0x11 0x5 0x5\n0x12 0x30 0x33\n0x14 0x21 0x21\n";
	/* 0x15's LID is 0x13's in the database: refused whole, 0x16 not imported either */
	static const char third[] = "0x16 0x22 0x22\n0x15 0x20 0x20\n";
	/* A block over another GUID's LID: 9 is inside 0x12's 8-11 */
	static const char fourth[] = "0x17 0x9 0x9\n";

	snprintf(db, sizeof(db), "%s/import.db", tmpdir);
	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(parse(first, strlen(first), &g, err, sizeof(err)), 0);
	CHECK_EQ(store_lid_import(s, g.e, g.n, "first", 1000, &st), 0);
	CHECK_EQ(st.imported, 3);
	CHECK_EQ(st.known, 0);
	guid2lid_free(&g);
	CHECK_EQ(lookup(s, 0x11), 5);
	CHECK_EQ(lookup(s, 0x12), 8);
	CHECK_EQ(lookup(s, 0x13), 32);

	CHECK_EQ(parse(second, strlen(second), &g, err, sizeof(err)), 0);
	CHECK_EQ(store_lid_import(s, g.e, g.n, "second", 1001, &st), 0);
	CHECK_EQ(st.imported, 1);
	CHECK_EQ(st.known, 2);
	CHECK_EQ(st.differ, 1);
	guid2lid_free(&g);
	CHECK_EQ(lookup(s, 0x12), 8);
	CHECK_EQ(lookup(s, 0x14), 33);
	CHECK_EQ(lids_in(s), 4);

	CHECK_EQ(parse(third, strlen(third), &g, err, sizeof(err)), 0);
	CHECK_EQ(store_lid_import(s, g.e, g.n, "third", 1002, &st), -EEXIST);
	CHECK_EQ(st.clash, 1);
	CHECK_EQ(st.imported, 0);
	CHECK(strstr(store_errmsg(s), "0x0000000000000013") != NULL);
	guid2lid_free(&g);
	CHECK_EQ(lookup(s, 0x16), -ENOENT);
	CHECK_EQ(lids_in(s), 4);

	CHECK_EQ(parse(fourth, strlen(fourth), &g, err, sizeof(err)), 0);
	CHECK_EQ(store_lid_import(s, g.e, g.n, "fourth", 1003, &st), -EEXIST);
	guid2lid_free(&g);
	CHECK_EQ(lids_in(s), 4);

	/* Entries that clash among themselves (not from the parser): rolled back */
	CHECK_EQ(store_lid_import(s, clash, 3, "clash", 1004, &st), -EEXIST);
	CHECK_EQ(st.clash, 2);
	CHECK_EQ(lookup(s, 0xa1), -ENOENT);
	CHECK_EQ(lids_in(s), 4);
	store_close(s);
}

static uint16_t g_lid[64];
static uint64_t g_guid[64];
static size_t g_n;

static int lookup_store(void *ctx, uint64_t guid, uint16_t *lid)
{
	return store_lid_lookup(ctx, guid, lid);
}

/* A fabric that lost its LIDs gets the file's back, LMC blocks and switches alike */
static void test_assign(void)
{
	static const char topo[] =
		"Hca 1 \"sm\"\n[1] \"s1\"[1]\n"
		"Switch 8 \"s1\"\n[1] \"sm\"[1]\n[2] \"s2\"[1]\n[3] \"h1\"[1]\n[4] \"h2\"[1]\n"
		"Switch 8 \"s2\"\n[1] \"s1\"[2]\n[2] \"h3\"[1]\n[3] \"h4\"[1]\n"
		"Hca 1 \"h1\"\n[1] \"s1\"[3]\n"
		"Hca 1 \"h2\"\n[1] \"s1\"[4]\n"
		"Hca 1 \"h3\"\n[1] \"s2\"[2]\n"
		"Hca 1 \"h4\"\n[1] \"s2\"[3]\n";
	struct fakefab ff = { 0 };
	struct fabric *f = NULL;
	struct lid_stats ls;
	struct store *s = NULL;
	struct guid2lid g;
	char db[128], text[4096], err[256];
	size_t n = 0;
	uint16_t next = 0x200;

	CHECK_EQ(ff_parse(&ff, topo), 0);
	CHECK_EQ(fabric_new(&f), 0);
	CHECK_EQ(ff_discover(&ff, f, NULL), 0);
	/* OpenSM's LIDs: far from what smd would pick, switches one LID, CAs 4 (LMC 2) */
	g_n = 0;
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *nd = f->nodes[i];

		for (unsigned int pn = 0; pn <= nd->num_ports; pn++) {
			struct fab_port *p = &nd->ports[pn];

			if (!fabric_is_endport(p) || g_n == 64)
				continue;
			g_guid[g_n] = p->guid;
			g_lid[g_n] = next;
			n += (size_t)snprintf(text + n, sizeof(text) - n, "0x%016llx 0x%04x 0x%04x\n\n",
					      (unsigned long long)p->guid, next,
					      next + (nd->type == NODE_TYPE_SWITCH ? 0 : 3));
			next -= 0x10;
			g_n++;
		}
	}
	CHECK_EQ(g_n, 7);
	snprintf(db, sizeof(db), "%s/assign.db", tmpdir);
	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(parse(text, n, &g, err, sizeof(err)), 0);
	{
		struct store_import_stats st;

		CHECK_EQ(store_lid_import(s, g.e, g.n, "g2l", 1, &st), 0);
		CHECK_EQ(st.imported, 7);
	}
	guid2lid_free(&g);
	CHECK_EQ(lid_assign(f, 2, lookup_store, s, &ls), 0);
	CHECK_EQ(ls.remembered, 7);
	CHECK_EQ(ls.fresh, 0);
	for (size_t k = 0; k < g_n; k++) {
		bool found = false;

		for (size_t i = 0; i < f->nnodes; i++)
			for (unsigned int pn = 0; pn <= f->nodes[i]->num_ports; pn++) {
				struct fab_port *p = &f->nodes[i]->ports[pn];

				if (fabric_is_endport(p) && p->guid == g_guid[k]) {
					found = true;
					CHECK_MSG(p->lid == g_lid[k], "port 0x%llx: LID %u, file %u",
						  (unsigned long long)p->guid, p->lid, g_lid[k]);
				}
			}
		CHECK(found);
	}
	store_close(s);
	fabric_free(f);
	ff_free(&ff);
}

int main(void)
{
	snprintf(tmpdir, sizeof(tmpdir), "%s", "/tmp/smd-test-g2l-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	RUN(test_good);
	RUN(test_bad);
	RUN(test_import);
	RUN(test_assign);
	{
		char cmd[128];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd) != 0)
			fprintf(stderr, "could not remove %s\n", tmpdir);
	}
	return unit_report();
}
