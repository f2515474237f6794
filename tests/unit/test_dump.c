// SPDX-License-Identifier: MIT
/*
 * db/dump.c against golden files (tests/dump/), through the database:
 * each fabric is built in memory, saved with store_save_sweep(), loaded
 * back with store_load_fabric() and dumped in every format. The dump of
 * the loaded fabric must equal both the golden file and the dump of the
 * fabric as built (so the store loses nothing a dump shows).
 *   sim.*  a fabric ibsim can load (tests/sim/t_dump.sh loads sim.ibnd and
 *          checks that ibnetdiscover prints it back)
 *   odd.*  what a simulator cannot make: a router, a CA-to-CA cable,
 *          unknown widths and speeds, odd descriptions, a GUID >= 2^63
 * SMD_UPDATE_GOLDEN=1 rewrites the golden files instead of comparing.
 */
#include <dirent.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "db/dump.h"
#include "db/store.h"
#include "tests/unit/unit.h"

static char tmpdir[64];
static const char *golden_dir;
static bool update;

static void rm_tmpdir(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	char p[512];

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(p, sizeof(p), "%s/%s", tmpdir, e->d_name);
		unlink(p);
	}
	closedir(d);
}

/* ---- building fabrics ---- */

static struct fab_node *node(struct fabric *f, uint8_t type, uint64_t guid, uint8_t nports,
			     const char *desc)
{
	struct node_info ni = {
		.base_version = 1, .class_version = 1, .node_type = type, .num_ports = nports,
		.sys_guid = guid, .node_guid = guid, .port_guid = guid, .vendor_id = 0x2c9,
		.device_id = 0x1003, .revision = 0xa1, .local_port = 1,
	};
	struct fab_node *n;

	if (fabric_add_node(f, &ni, &n))
		abort();
	if (desc) {
		snprintf(n->desc, sizeof(n->desc), "%s", desc);
		n->desc_valid = true;
	}
	for (unsigned int pn = 1; type != NODE_TYPE_SWITCH && pn <= nports; pn++)
		n->ports[pn].guid = guid + pn;
	return n;
}

/* A port as PortInfo describes it; width and speed codes as on the wire */
static struct fab_port *port(struct fab_node *n, unsigned int num, uint16_t lid, uint8_t lmc,
			     uint8_t width, uint8_t speed, uint8_t ext)
{
	struct fab_port *p = fabric_port(n, num);
	struct port_info *pi = &p->pi;

	pi->lid = lid;
	pi->lmc = lmc;
	pi->local_port = (uint8_t)num;
	pi->port_state = PORT_STATE_ACTIVE;
	pi->phys_state = PHYS_STATE_LINKUP;
	pi->link_width_active = width;
	pi->link_speed_active = speed;
	pi->link_speed_ext_active = ext;
	pi->cap_mask = 0xc048;		/* with IsExtendedSpeedsSupported, as ibsim */
	pi->neighbor_mtu = 4;
	pi->mtu_cap = 5;
	pi->vl_cap = 4;
	pi->op_vls = 3;
	p->pi_valid = true;
	if (fabric_is_endport(p)) {
		p->lid = lid;
		p->lmc = lmc;
	}
	return p;
}

static void down(struct fab_node *n, unsigned int num)
{
	struct fab_port *p = port(n, num, 0, 0, 2, 1, 0);

	p->pi.port_state = PORT_STATE_DOWN;
	p->pi.phys_state = 2;	/* Polling */
}

static void cable(struct fabric *f, struct fab_port *a, struct fab_port *b)
{
	if (fabric_link(f, a, b))
		abort();
}

static void switch_info(struct fab_node *n, bool enhanced)
{
	n->si.lft_cap = 30720;
	n->si.lft_top = 14;
	n->si.enhanced_port0 = enhanced;
	n->si.life_time_value = 18;
	n->si_valid = true;
}

/* An LFT that sends every LID out of port (lid % num_ports) + 1, and the loads it makes */
static void lft(struct fabric *f, struct fab_node *n)
{
	n->lft_len = (uint32_t)f->max_lid + 1;
	n->lft = malloc(n->lft_len);
	memset(n->lft, LFT_PORT_NONE, n->lft_len);
	for (uint32_t lid = 1; lid < n->lft_len; lid++) {
		if (!f->by_lid[lid])
			continue;
		n->lft[lid] = f->by_lid[lid]->node == n ? 0 : (uint8_t)(lid % n->num_ports + 1);
		n->ports[n->lft[lid]].load++;
	}
}

#define SMHOST	UINT64_C(0x0002c90300000100)
#define SW1	UINT64_C(0x0008f10400400010)
#define SW2	UINT64_C(0x0008f10400400020)
#define HOSTB	UINT64_C(0x0002c90300000200)
#define HOSTC	UINT64_C(0x0002c90300000300)

static struct fabric *fabric_sim(void)
{
	struct fab_node *sm, *s1, *s2, *b, *c;
	struct fabric *f;

	if (fabric_new(&f))
		abort();
	sm = node(f, NODE_TYPE_CA, SMHOST, 2, "smhost mlx4_0");
	sm->ni.sys_guid = SMHOST + 3;
	s1 = node(f, NODE_TYPE_SWITCH, SW1, 12, "sw1 spine");
	s1->ni.vendor_id = 0x8f1;
	s1->ni.device_id = 0x5a40;
	switch_info(s1, true);
	s2 = node(f, NODE_TYPE_SWITCH, SW2, 8, "sw2 leaf");
	s2->ni.vendor_id = 0x8f1;
	s2->ni.device_id = 0x5a40;
	switch_info(s2, false);
	b = node(f, NODE_TYPE_CA, HOSTB, 2, "hostB mlx5_0");
	b->ni.device_id = 0x1017;
	c = node(f, NODE_TYPE_CA, HOSTC, 2, "hostC HCA-1");	/* port 2 not cabled */

	port(s1, 0, 8, 0, 2, 1, 0);
	port(s2, 0, 9, 0, 2, 1, 0);
	cable(f, port(sm, 1, 1, 0, 2, 4, 0), port(s1, 1, 0, 0, 2, 4, 0));	/* 4xQDR */
	cable(f, port(sm, 2, 4, 2, 2, 2, 0), port(s2, 1, 0, 0, 2, 2, 0));	/* 4xDDR, LMC 2 */
	cable(f, port(s1, 2, 0, 0, 8, 4, 1), port(s2, 2, 0, 0, 8, 4, 1));	/* 12xFDR */
	cable(f, port(s1, 3, 0, 0, 2, 4, 2), port(s2, 3, 0, 0, 2, 4, 2));	/* 4xEDR */
	cable(f, port(s1, 5, 0, 0, 1, 1, 0), port(b, 1, 12, 0, 1, 1, 0));	/* 1xSDR */
	cable(f, port(s2, 4, 0, 0, 2, 1, 0), port(b, 2, 13, 0, 2, 1, 0));	/* 4xSDR */
	cable(f, port(s1, 7, 0, 0, 4, 2, 0), port(c, 1, 14, 0, 4, 2, 0));	/* 8xDDR */
	for (unsigned int pn = 4; pn <= 12; pn++)
		if (pn != 5 && pn != 7)
			down(s1, pn);
	for (unsigned int pn = 5; pn <= 8; pn++)
		down(s2, pn);
	if (fabric_index_lids(f))
		abort();
	lft(f, s1);
	lft(f, s2);
	return f;
}

#define OSW	UINT64_C(0xf000000000000001)	/* negative as an SQLite integer */
#define ORT	UINT64_C(0x0006000000000001)
#define OCA	UINT64_C(0x0002c90300000a00)
#define OCB	UINT64_C(0x0002c90300000b00)
#define OCN	UINT64_C(0x0002c90300000c00)
#define OCX	UINT64_C(0x0002c90300000d00)

static struct fabric *fabric_odd(void)
{
	struct fab_node *sw, *rt, *a, *b, *n, *x;
	struct fab_port *xp, *sp;
	struct fabric *f;

	if (fabric_new(&f))
		abort();
	sw = node(f, NODE_TYPE_SWITCH, OSW, 4, "odd \"quoted\" \\ back\tslash \xc3\xa9t\xc3\xa9");
	sw->ni.sys_guid = 0;			/* no sysimgguid line */
	sw->ni.vendor_id = 0xabcdef;
	rt = node(f, NODE_TYPE_ROUTER, ORT, 2, "router-1");
	a = node(f, NODE_TYPE_CA, OCA, 2,
		 "a description of exactly sixty-four bytes, one more than shown!!");
	b = node(f, NODE_TYPE_CA, OCB, 1, "");
	n = node(f, NODE_TYPE_CA, OCN, 1, NULL);	/* NodeDescription never answered */
	port(sw, 0, 1, 0, 2, 1, 0)->pi.cap_mask = 0;	/* no extended speeds */
	/* QDR at the switch (no extended speeds), FDR at the router */
	cable(f, port(sw, 1, 0, 0, 2, 4, 1), port(rt, 1, 2, 0, 2, 4, 1));
	cable(f, port(sw, 2, 0, 0, 3, 8, 0), port(a, 2, 3, 0, 3, 8, 0));	/* ??x??? */
	cable(f, port(a, 1, 4, 0, 16, 4, 4), port(b, 1, 5, 0, 16, 4, 4));	/* CA-CA 2xHDR */
	cable(f, port(sw, 3, 0, 0, 2, 4, 8), port(n, 1, 6, 0, 2, 4, 8));	/* NDR, QDR at sw */
	port(rt, 2, 7, 0, 1, 4, 3)->pi.port_state = PORT_STATE_INIT;	/* speed ext 3: ??? */
	/*
	 * 8x: XDR at the CA (IBA 1.7 LinkSpeedExtActive2, valid by its
	 * CapabilityMask2), FDR10 at the switch, whose port 0 has no extended
	 * speeds and whose ExtendedPortInfo says FDR10
	 */
	x = node(f, NODE_TYPE_CA, OCX, 1, "xdr host");
	xp = port(x, 1, 8, 0, 4, 4, 8);
	xp->pi.cap_mask |= PORT_CAP_CAP_MASK2;
	xp->pi.cap_mask2 = PORT_CAP2_EXT_SPEEDS2 | PORT_CAP2_XDR;
	xp->pi.link_speed_ext_active2 = 1;
	sp = port(sw, 4, 0, 0, 4, 4, 8);
	sp->pi.link_speed_ext_active2 = 1;
	sp->fdr10 = true;
	cable(f, sp, xp);
	if (fabric_index_lids(f))
		abort();
	return f;
}

/* ---- comparing ---- */

static char *dump_to_string(const struct fabric *f, const struct dump_meta *m,
			    enum dump_format fmt)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	if (!out)
		abort();
	CHECK_EQ(dump_write(out, f, m, fmt), 0);
	fclose(out);
	return buf;
}

static char *slurp(const char *path)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long n;

	if (!fp)
		return NULL;
	fseek(fp, 0, SEEK_END);
	n = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	buf = calloc(1, (size_t)n + 1);
	if (!buf || fread(buf, 1, (size_t)n, fp) != (size_t)n)
		abort();
	fclose(fp);
	return buf;
}

/* The first differing line, for the log */
static void show_diff(const char *want, const char *got)
{
	unsigned int line = 1;
	const char *w = want, *g = got;

	while (*w && *w == *g) {
		if (*w == '\n') {
			line++;
			want = w + 1;
			got = g + 1;
		}
		w++;
		g++;
	}
	fprintf(stderr, "  line %u:\n  want: %.*s\n  got:  %.*s\n", line,
		(int)strcspn(want, "\n"), want, (int)strcspn(got, "\n"), got);
}

static void check_golden(const char *name, const char *got)
{
	char path[512];
	char *want;

	snprintf(path, sizeof(path), "%s/%s", golden_dir, name);
	if (update) {
		FILE *fp = fopen(path, "w");

		CHECK(fp && fputs(got, fp) >= 0 && fclose(fp) == 0);
		fprintf(stderr, "  wrote %s\n", path);
		return;
	}
	want = slurp(path);
	CHECK(want != NULL);
	if (!want) {
		fprintf(stderr, "  missing %s (SMD_UPDATE_GOLDEN=1 writes it)\n", path);
		return;
	}
	CHECK(!strcmp(want, got));
	if (strcmp(want, got)) {
		fprintf(stderr, "  %s differs\n", path);
		show_diff(want, got);
	}
	free(want);
}

static void check_fabric(const char *name, struct fabric *built, uint64_t sm_node,
			 uint64_t sm_port)
{
	static const struct { enum dump_format fmt; const char *ext; } formats[] = {
		{ DUMP_IBNETDISCOVER, "ibnd" }, { DUMP_JSON, "json" }, { DUMP_DOT, "dot" },
	};
	struct store_sweep sw = {
		.started = 1700000000, .seconds = 0.25, .nodes = (unsigned int)built->nnodes,
		.up = 1, .sm_node_guid = sm_node, .sm_port_guid = sm_port,
	}, got;
	char db[128];
	struct store *s = NULL;
	struct fabric *loaded = NULL;
	struct dump_meta m;

	snprintf(db, sizeof(db), "%s/%s.db", tmpdir, name);
	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(store_save_sweep(s, built, &sw), 0);
	store_close(s);
	CHECK_EQ(store_open(db, 1, &s), 0);
	CHECK_EQ(store_load_fabric(s, &loaded, &got), 0);
	store_close(s);
	if (!loaded)
		return;
	CHECK_EQ(got.started, sw.started);
	CHECK(got.sm_node_guid == sm_node && got.sm_port_guid == sm_port);
	CHECK_EQ(loaded->nnodes, built->nnodes);
	m = (struct dump_meta){
		.time = got.started, .sweep_id = got.id, .sm_node_guid = got.sm_node_guid,
		.sm_port_guid = got.sm_port_guid,
	};
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
		char file[64];
		char *a = dump_to_string(built, &m, formats[i].fmt);
		char *b = dump_to_string(loaded, &m, formats[i].fmt);

		CHECK(!strcmp(a, b));
		if (strcmp(a, b)) {
			fprintf(stderr, "  %s.%s: the loaded fabric dumps differently\n", name,
				formats[i].ext);
			show_diff(a, b);
		}
		snprintf(file, sizeof(file), "%s.%s", name, formats[i].ext);
		check_golden(file, b);
		free(a);
		free(b);
	}
	fabric_free(loaded);
	unlink(db);
}

static void test_sim(void)
{
	struct fabric *f = fabric_sim();

	check_fabric("sim", f, SMHOST, SMHOST + 1);
	fabric_free(f);
}

static void test_odd(void)
{
	struct fabric *f = fabric_odd();

	check_fabric("odd", f, OCA, OCA + 1);
	fabric_free(f);
}

/* An empty fabric still makes well-formed output; formats by name */
static void test_empty_and_names(void)
{
	struct fabric *f;
	struct dump_meta m = { .time = 1700000000 };
	enum dump_format fmt;
	char *s;

	CHECK_EQ(dump_format_parse("ibnetdiscover", &fmt), 0);
	CHECK_EQ(fmt, DUMP_IBNETDISCOVER);
	CHECK_EQ(dump_format_parse("json", &fmt), 0);
	CHECK_EQ(fmt, DUMP_JSON);
	CHECK_EQ(dump_format_parse("dot", &fmt), 0);
	CHECK_EQ(fmt, DUMP_DOT);
	CHECK_EQ(dump_format_parse("xml", &fmt), -EINVAL);
	CHECK_EQ(dump_format_parse("", &fmt), -EINVAL);
	if (fabric_new(&f))
		abort();
	s = dump_to_string(f, &m, DUMP_JSON);
	CHECK(!strcmp(s, "{\n  \"format\": \"smd-fabric\", \"version\": 1,\n"
		      "  \"time\": 1700000000, \"sweep\": 0,\n"
		      "  \"sm\": { \"node_guid\": \"0x0000000000000000\","
		      " \"port_guid\": \"0x0000000000000000\" },\n"
		      "  \"nodes\": [],\n  \"links\": [],\n  \"mcast_groups\": [],\n"
		      "  \"partitions\": []\n}\n"));
	free(s);
	{
		/* The live multicast groups, as the database holds them */
		struct store_mcast g[2] = {
			{ .mgid = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, [12] = 0xff, 0xff, 0xff,
				    0xff }, .mlid = 0xc000, .present = 1 },
			{ .mgid = { 0xff, 0x12, 0x60, 0x1b, 0xff, 0xff, [15] = 1 }, .mlid = 0xc001,
			  .present = 1 },
		};
		struct dump_meta mm = m;

		mm.mcast = g;
		mm.nmcast = 2;
		s = dump_to_string(f, &mm, DUMP_JSON);
		CHECK(strstr(s, "  \"mcast_groups\": [\n"
			     "    { \"mgid\": \"ff12:401b:ffff::ffff:ffff\", \"mlid\": \"0xc000\" },\n"
			     "    { \"mgid\": \"ff12:601b:ffff::1\", \"mlid\": \"0xc001\" }\n  ],\n"));
		free(s);
	}
	{
		/* Partitions with their members (sorted by P_Key: one pass) */
		struct store_partition p[3] = {
			{ .pkey = 0x0001, .ipoib = true, .name = "A \"x\"" },
			{ .pkey = 0x0002, .name = "" },
			{ .pkey = 0x7fff, .ipoib = true, .name = "Default" },
		};
		struct store_port_pkey k[3] = {
			{ .port_guid = 0x11, .pkey = 0x8001 },
			{ .port_guid = 0x12, .pkey = 0x0001 },
			{ .port_guid = 0x11, .pkey = 0xffff },
		};
		struct dump_meta mm = m;

		mm.parts = p;
		mm.nparts = 3;
		mm.pkeys = k;
		mm.npkeys = 3;
		s = dump_to_string(f, &mm, DUMP_JSON);
		CHECK(strstr(s, "  \"partitions\": [\n"
			     "    { \"pkey\": \"0x0001\", \"name\": \"A \\\"x\\\"\", \"ipoib\": true, "
			     "\"members\": [\n"
			     "        { \"guid\": \"0x0000000000000011\", \"membership\": \"full\" },\n"
			     "        { \"guid\": \"0x0000000000000012\", \"membership\": \"limited\" }\n"
			     "      ] },\n"
			     "    { \"pkey\": \"0x0002\", \"name\": \"\", \"ipoib\": false, "
			     "\"members\": [] },\n"
			     "    { \"pkey\": \"0x7fff\", \"name\": \"Default\", \"ipoib\": true, "
			     "\"members\": [\n"
			     "        { \"guid\": \"0x0000000000000011\", \"membership\": \"full\" }\n"
			     "      ] }\n  ]\n}\n") != NULL);
		free(s);
	}
	s = dump_to_string(f, &m, DUMP_IBNETDISCOVER);
	CHECK(!strcmp(s, "#\n# Topology file: generated on Tue Nov 14 22:13:20 2023\n#\n"
		      "# Initiated from node 0000000000000000 port 0000000000000000\n"));
	free(s);
	s = dump_to_string(f, &m, DUMP_DOT);
	CHECK(strstr(s, "graph fabric {") == s && strstr(s, "}\n"));
	free(s);
	fabric_free(f);
}

/* A DB without a saved fabric, or only a failed sweep, has nothing to dump */
static void test_nothing_saved(void)
{
	struct store_sweep sw = { .started = 1700000000, .err = -EHOSTUNREACH }, got;
	struct fabric *f = (struct fabric *)1;
	struct store *s = NULL;
	char db[128];

	snprintf(db, sizeof(db), "%s/none.db", tmpdir);
	CHECK_EQ(store_open(db, 0, &s), 0);
	CHECK_EQ(store_load_fabric(s, &f, &got), -ENOENT);
	CHECK(f == NULL);
	CHECK(strlen(store_errmsg(s)) > 0);
	CHECK_EQ(store_save_sweep(s, NULL, &sw), 0);
	CHECK_EQ(store_load_fabric(s, &f, &got), -ENOENT);
	store_close(s);
	unlink(db);
}

int main(void)
{
	const char *srcdir = getenv("srcdir");
	static char dir[512];

	/* The ibnetdiscover header shows local time */
	setenv("TZ", "UTC", 1);
	tzset();
	snprintf(dir, sizeof(dir), "%s/tests/dump", srcdir ? srcdir : ".");
	golden_dir = dir;
	update = getenv("SMD_UPDATE_GOLDEN") && *getenv("SMD_UPDATE_GOLDEN") == '1';
	snprintf(tmpdir, sizeof(tmpdir), "%s", "/tmp/smd-test-dump-XXXXXX");
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return EXIT_FAILURE;
	}
	RUN(test_sim);
	RUN(test_odd);
	RUN(test_empty_and_names);
	RUN(test_nothing_saved);
	rm_tmpdir();
	if (rmdir(tmpdir))
		fprintf(stderr, "could not remove %s\n", tmpdir);
	return unit_report();
}
