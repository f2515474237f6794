// SPDX-License-Identifier: MIT
/*
 * Partitions (topo/part.c): the OpenSM partitions.conf syntax, every
 * refusal with its line, who is a member of what with which membership,
 * P_Key table layouts, and the IBA 10.9.3 sharing rule.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/part.h"

static const struct part_defaults dflt = { .mtu = 4, .rate = 3, .sl = 0, .ipoib = true };
static char err[512];

static struct part_conf *parse(const char *text)
{
	struct part_conf *c = NULL;

	err[0] = 0;
	if (part_parse(text, strlen(text), "p.conf", &dflt, &c, err, sizeof(err)) < 0)
		return NULL;
	return c;
}

/* The membership of guid (a CA port unless type says) in pkey: 'F', 'L' or '-' */
static char member(const struct part_conf *c, uint64_t self, uint64_t guid, uint8_t type,
		   uint16_t pkey)
{
	struct part_index *ix;
	uint16_t keys[64];
	unsigned int n, all;
	char m = '-';

	if (part_index_new(c, self, &ix) < 0)
		return '?';
	n = part_port_keys(ix, guid, type, keys, 64, &all);
	for (unsigned int i = 0; i < n; i++)
		if (PKEY_BASE(keys[i]) == pkey)
			m = keys[i] & PKEY_FULL ? 'F' : 'L';
	part_index_free(ix);
	return m;
}

/* OpenSM's own example (doc/partition-config.txt), as it ships */
static const char opensm_example[] =
	" Default=0x7fff : ALL, SELF=full ;\n"
	" Default=0x7fff : ALL, ALL_SWITCHES=full, SELF=full ;\n"
	"\n"
	" NewPartition , ipoib : 0x123456=full, 0x3456789034=limi, 0x2134af2306 ;\n"
	"\n"
	" YetAnotherOne = 0x300 : SELF=full ;\n"
	" YetAnotherOne = 0x300 : ALL=limited ;\n"
	"\n"
	" ShareIO = 0x80 , defmember=full : 0x123451, 0x123452;\n"
	" # 0x123453, 0x123454 will be limited\n"
	" ShareIO = 0x80 : 0x123453, 0x123454, 0x123455=full;\n"
	" # 0x123456, 0x123457 will be limited\n"
	" ShareIO = 0x80 , defmember=limited : 0x123456, 0x123457, 0x123458=full;\n"
	" ShareIO = 0x80 , defmember=full : 0x123459, 0x12345a;\n"
	" ShareIO = 0x80 , defmember=full : 0x12345b, 0x12345c=limited, 0x12345d;\n"
	"\n"
	" # multicast groups added to default\n"
	" Default=0x7fff,ipoib:\n"
	"        mgid=ff12:401b::0707,sl=1 # random IPv4 group\n"
	"        mgid=ff12:601b::16    # MLDv2-capable routers\n"
	"        mgid=ff12:401b::16    # IGMP\n"
	"        mgid=ff12:601b::2     # All routers\n"
	"        mgid=ff12::1,sl=1,Q_Key=0xDEADBEEF,rate=3,mtu=2 # random group\n"
	"        ALL=full;\n";

static void test_opensm_example(void)
{
	struct part_conf *c = parse(opensm_example);
	const struct partition *p;

	CHECK(c != NULL);
	if (!c) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	/* Default, NewPartition (P_Key generated: 1), YetAnotherOne, ShareIO */
	CHECK_EQ(c->n, 4);
	p = part_find(c, 0x7fff);
	CHECK(p && p->ipoib && p->ngroups == 5);
	p = part_find(c, 0x0001);
	CHECK(p && !strcmp(p->name, "NewPartition") && p->ipoib);
	CHECK_EQ(member(c, 1, 0x123456, NODE_TYPE_CA, 0x0001), 'F');
	CHECK_EQ(member(c, 1, 0x3456789034, NODE_TYPE_CA, 0x0001), 'L');	/* "limi" */
	CHECK_EQ(member(c, 1, 0x2134af2306, NODE_TYPE_CA, 0x0001), 'L');
	CHECK_EQ(member(c, 1, 0x999, NODE_TYPE_CA, 0x0001), '-');
	/* ShareIO: the defmember of each statement, a port's own flag over it */
	CHECK_EQ(member(c, 1, 0x123451, NODE_TYPE_CA, 0x80), 'F');
	CHECK_EQ(member(c, 1, 0x123453, NODE_TYPE_CA, 0x80), 'L');
	CHECK_EQ(member(c, 1, 0x123455, NODE_TYPE_CA, 0x80), 'F');
	CHECK_EQ(member(c, 1, 0x123457, NODE_TYPE_CA, 0x80), 'L');
	CHECK_EQ(member(c, 1, 0x123458, NODE_TYPE_CA, 0x80), 'F');
	CHECK_EQ(member(c, 1, 0x12345a, NODE_TYPE_CA, 0x80), 'F');
	CHECK_EQ(member(c, 1, 0x12345c, NODE_TYPE_CA, 0x80), 'L');
	CHECK_EQ(member(c, 1, 0x12345d, NODE_TYPE_CA, 0x80), 'F');
	/* YetAnotherOne: SELF full, then ALL limited (SELF is a port: limited too) */
	CHECK_EQ(member(c, 0x77, 0x77, NODE_TYPE_CA, 0x300), 'L');
	CHECK_EQ(member(c, 0x77, 0x123, NODE_TYPE_SWITCH, 0x300), 'L');
	/* Default: the last rule, ALL=full */
	CHECK_EQ(member(c, 0x77, 0x123, NODE_TYPE_CA, 0x7fff), 'F');
	/* The IPv4 group took the partition's P_Key and the IPoIB Q_Key */
	p = part_find(c, 0x7fff);
	if (p && p->ngroups == 5) {
		static const uint8_t v4[16] = { 0xff, 0x12, 0x40, 0x1b, 0xff, 0xff, [14] = 0x07,
						[15] = 0x07 };

		CHECK(!memcmp(p->groups[0].mgid, v4, 16));
		CHECK_EQ(p->groups[0].p.qkey, 0x0b1b);
		CHECK_EQ(p->groups[0].p.sl, 1);
		CHECK_EQ(p->groups[4].p.qkey, 0xdeadbeef);
		CHECK_EQ(p->groups[4].p.mtu, 2);
		CHECK_EQ(p->groups[4].mgid[4], 0);	/* not an IPoIB group: as written */
	}
	part_conf_free(c);
}

/* Every refusal names its line and says why */
static void test_refusals(void)
{
	static const struct {
		const char *text;
		const char *want;	/* "p.conf:LINE: ...substring" */
	} bad[] = {
		{ "A=1,ipob : ALL;", "p.conf:1: unknown partition flag 'ipob'" },
		{ "A=1 : 0x10=fulll;", "p.conf:1: bad membership 'fulll'" },
		{ "A=1 : 0x10=;", "p.conf:1: bad membership ''" },
		{ "\n\nA=1 ALL;", "p.conf:3: no ':' after the partition definition" },
		{ "A=1 : ALL;\n;", "p.conf:2: an empty statement" },
		{ "A=1 :\n ALL,\n 0xzz;", "p.conf:3: bad port GUID '0xzz'" },
		{ "A=1 : 0;", "p.conf:1: bad port GUID '0'" },
		{ "A=0x8000 : ALL;", "p.conf:1: P_Key 0x8000 names no partition" },
		{ "A=0x10000 : ALL;", "p.conf:1: bad P_Key '0x10000'" },
		{ "A=1 :\n mgid=fe80::1\n;", "p.conf:2: mgid fe80::1 is not a multicast GID" },
		{ "A=1 : mgid=ff12:401b:8002::1;", "carries P_Key 0x8002, not its partition's 0x8001" },
		{ "A=1,mtu=5 : mgid=ff12:401b::1,mtu=4;", "must have the mtu and rate" },
		{ "A=1,ipoib,mtu=4 : ;\nA=1,ipoib,mtu=5 : ;",
		  "p.conf:2: P_Key 0x0001 already has its IPoIB group" },
		{ "A=1 : mgid=ff12::9,sl=1;\nB=2 : mgid=ff12::9,sl=2;",
		  "p.conf:2: multicast group ff12::9 is configured twice (also at line 1)" },
		{ "S = 0x80 : defmember=limited : 0x1, 0x2;",
		  "p.conf:1: unexpected ':' in the members of partition 0x0080" },
		{ "A=1,mtu=0 : ;", "bad mtu '0'" },
		{ "A=1,mtu=8192 : ;", "bad mtu '8192'" },
		{ "A=1,rate=1 : ;", "bad rate '1'" },
		{ "A=1,rate=11G : ;", "bad rate '11G'" },
		{ "A=1,sl=16 : ;", "bad sl '16'" },
		{ "A=1,scope=0 : ;", "bad scope '0'" },
		{ "A=1,defmember=some : ;", "bad defmember 'some'" },
		{ "A=1,ipoib=yes : ;", "ipoib takes no value" },
		{ "A=1,mtu : ;", "mtu needs a value" },
		{ "A=1,,ipoib : ;", "an empty flag" },
		{ "My Part=1 : ;", "partition name 'My Part' has blanks" },
		{ "A=1 : mgid=ff12::1,foo=2;", "unknown multicast group flag 'foo'" },
		{ "# one\nA=1 : \\\n ALL,\n\n 0x5=maybe ;", "p.conf:5: bad membership 'maybe'" },
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct part_conf *c = parse(bad[i].text);

		CHECK(c == NULL);
		part_conf_free(c);
		if (!strstr(err, bad[i].want)) {
			fprintf(stderr, "case %zu: wanted '%s', got '%s'\n", i, bad[i].want, err);
			CHECK(0);
		}
	}
	/* A NUL byte is no text */
	{
		struct part_conf *c = NULL;
		static const char nul[] = "A=1 : A\0LL;";

		CHECK_EQ(part_parse(nul, sizeof(nul) - 1, "p.conf", &dflt, &c, err, sizeof(err)),
			 -EINVAL);
		CHECK(strstr(err, "NUL") != NULL);
	}
}

static void test_values(void)
{
	static const struct {
		const char *s;
		int code;	/* -1: refused */
	} mtus[] = {
		{ "1", 1 }, { "5", 5 }, { "256", 1 }, { "2048", 4 }, { "4096", 5 }, { "0x4", 4 },
		{ "6", -1 }, { "3000", -1 }, { "", -1 }, { "-4", -1 },
	}, rates[] = {
		/* A number that is a code is the code (OpenSM): 10 is 120 Gb/s */
		{ "3", 3 }, { "7", 7 }, { "10", 10 }, { "22", 22 }, { "10G", 3 },
		{ "10Gb/s", 3 }, { "100", 16 }, { "100g", 16 }, { "2.5", 2 }, { "2.5G", 2 },
		{ "25", 15 }, { "600", 22 }, { "1", -1 }, { "23", 23 }, { "26", -1 }, { "11G", -1 },
		{ "24", 24 }, { "1600", 25 }, { "1600G", 25 }, { "800G", 23 },
		{ "7G", -1 }, { "G", -1 },
	};

	for (size_t i = 0; i < sizeof(mtus) / sizeof(mtus[0]); i++) {
		uint8_t code = 0;
		int r = part_parse_mtu(mtus[i].s, &code);

		CHECK_EQ(r < 0 ? -1 : code, mtus[i].code);
	}
	for (size_t i = 0; i < sizeof(rates) / sizeof(rates[0]); i++) {
		uint8_t code = 0;
		int r = part_parse_rate(rates[i].s, &code);

		if ((r < 0 ? -1 : code) != rates[i].code)
			fprintf(stderr, "rate '%s': %d\n", rates[i].s, r < 0 ? -1 : code);
		CHECK_EQ(r < 0 ? -1 : code, rates[i].code);
	}
	CHECK(!strcmp(part_rate_text(16), "100"));
	CHECK(!strcmp(part_rate_text(1), "?"));
}

static void test_syntax(void)
{
	struct part_conf *c;
	const struct partition *p;

	/* P_Keys generated as OpenSM numbers them; a name seen before merges */
	c = parse("A : 0x10 ; B : 0x11 ; A : 0x12 ; 0x3 : 0x13 ; C : 0x14");
	CHECK(c != NULL);
	if (c) {
		CHECK_EQ(c->n, 5);
		p = part_find(c, 1);
		CHECK(p && !strcmp(p->name, "A") && p->nmembers == 2);
		CHECK(part_find(c, 3) && !strcmp(part_find(c, 3)->name, ""));
		/* 3 was taken when C came: the counter goes on to 4 */
		CHECK(part_find(c, 4) && !strcmp(part_find(c, 4)->name, "C"));
		part_conf_free(c);
	}
	/* Several statements on a line, a statement on several, NONE, odd blanks */
	c = parse("X=0x8005,ipoib,mtu=4096,rate=100G,sl=3,scope=2,scope=5,qkey=0x11,"
		  "tclass=4,flowlabel=0x12345:\n\tNONE,\n\n  0x20 = both ,, ALL_ROUTERS=limited\n;"
		  "Y=6:;");
	CHECK(c != NULL);
	if (!c)
		fprintf(stderr, "%s\n", err);
	if (c) {
		p = part_find(c, 5);
		CHECK(p && p->ipoib && p->bc.mtu == 5 && p->bc.rate == 16 && p->bc.sl == 3);
		CHECK(p && p->bc.scopes == ((1u << 2) | (1u << 5)) && p->bc.qkey == 0x11);
		CHECK(p && p->bc.tclass == 4 && p->bc.flow_label == 0x12345);
		CHECK_EQ(member(c, 1, 0x20, NODE_TYPE_CA, 5), 'F');	/* both: full */
		CHECK_EQ(member(c, 1, 0x21, NODE_TYPE_ROUTER, 5), 'L');
		CHECK_EQ(member(c, 1, 0x21, NODE_TYPE_CA, 5), '-');
		CHECK(part_find(c, 6) != NULL);
		part_conf_free(c);
	}
	/* The same group twice with the same parameters is one group */
	c = parse("A=1,ipoib : mgid=ff12:401b::ffff:ffff ;");
	CHECK(c != NULL);
	part_conf_free(c);
	/* Without a file: OpenSM's default, IPoIB as smd.conf says */
	CHECK_EQ(part_conf_default(&dflt, &c), 0);
	CHECK(c && c->n == 1 && c->parts[0].pkey == 0x7fff && c->parts[0].ipoib);
	CHECK_EQ(member(c, 1, 0x33, NODE_TYPE_SWITCH, 0x7fff), 'F');
	part_conf_free(c);
}

static void test_membership(void)
{
	struct part_conf *c;
	struct part_index *ix;
	uint16_t keys[8];
	unsigned int n, all;

	/* The latest rule for a port wins, wide or by GUID */
	c = parse("A=1 : ALL=full, 0x10=limited ;\n"
		  "B=2 : 0x10=limited, ALL_CAS=full ;\n"
		  "C=3 : ALL_SWITCHES=full, 0x10=full ;\n"
		  "Default=0x7fff : ALL_CAS=limited ;\n"
		  "D=4,indx0 : 0x11=full ;\n");
	CHECK(c != NULL);
	if (!c)
		return;
	CHECK_EQ(member(c, 0x99, 0x10, NODE_TYPE_CA, 1), 'L');
	CHECK_EQ(member(c, 0x99, 0x11, NODE_TYPE_CA, 1), 'F');
	CHECK_EQ(member(c, 0x99, 0x10, NODE_TYPE_CA, 2), 'F');
	CHECK_EQ(member(c, 0x99, 0x10, NODE_TYPE_CA, 3), 'F');
	CHECK_EQ(member(c, 0x99, 0x11, NODE_TYPE_CA, 3), '-');
	CHECK_EQ(member(c, 0x99, 0x12, NODE_TYPE_SWITCH, 3), 'F');
	/* Everybody stays in Default; a switch limited (implicit rule), the SM full */
	CHECK_EQ(member(c, 0x99, 0x12, NODE_TYPE_SWITCH, 0x7fff), 'L');
	CHECK_EQ(member(c, 0x99, 0x10, NODE_TYPE_CA, 0x7fff), 'L');
	CHECK_EQ(member(c, 0x99, 0x99, NODE_TYPE_CA, 0x7fff), 'F');
	CHECK_EQ(part_index_new(c, 0x99, &ix), 0);
	/* Default at index 0, the others in the file's order */
	n = part_port_keys(ix, 0x10, NODE_TYPE_CA, keys, 8, &all);
	CHECK_EQ(n, 4);
	CHECK_EQ(keys[0], 0x7fff);
	CHECK_EQ(keys[1], 0x0001);
	CHECK_EQ(keys[2], 0x8002);
	CHECK_EQ(keys[3], 0x8003);
	/* indx0: D's P_Key first on its members, Default after it */
	n = part_port_keys(ix, 0x11, NODE_TYPE_CA, keys, 8, &all);
	CHECK_EQ(n, 4);
	CHECK_EQ(keys[0], 0x8004);
	CHECK_EQ(keys[1], 0x7fff);
	/* A table too small: the count, and what fits */
	n = part_port_keys(ix, 0x10, NODE_TYPE_CA, keys, 2, &all);
	CHECK_EQ(n, 2);
	CHECK_EQ(all, 4);
	part_index_free(ix);
	part_conf_free(c);
}

static void test_layout(void)
{
	uint16_t want[] = { 0xffff, 0x8001, 0x0002, 0x8003 }, out[8], have[8] = { 0 };

	/* Unknown table: packed in order */
	CHECK_EQ(part_table_layout(want, 4, true, NULL, 0, out, 8), 4);
	CHECK(out[0] == 0xffff && out[1] == 0x8001 && out[2] == 0x0002 && out[3] == 0x8003);
	CHECK(out[4] == 0);
	/* Keys the port holds keep their index (membership may change), stale ones go */
	have[0] = 0xffff;
	have[2] = 0x8003;
	have[3] = 0x8009;
	have[5] = 0x8002;
	CHECK_EQ(part_table_layout(want, 4, true, have, 8, out, 8), 4);
	CHECK_EQ(out[0], 0xffff);
	CHECK_EQ(out[2], 0x8003);
	CHECK_EQ(out[5], 0x0002);
	CHECK_EQ(out[1], 0x8001);	/* the lowest free index */
	CHECK_EQ(out[3], 0);
	/* Index 0 is the first key's even when the port holds it elsewhere */
	memset(have, 0, sizeof(have));
	have[0] = 0x8001;
	have[4] = 0xffff;
	CHECK_EQ(part_table_layout(want, 4, true, have, 8, out, 8), 4);
	CHECK_EQ(out[0], 0xffff);
	CHECK_EQ(out[4], 0);
	/* Too small: what fits */
	CHECK_EQ(part_table_layout(want, 4, true, NULL, 0, out, 3), 3);
	CHECK_EQ(part_table_layout(want, 4, false, NULL, 0, out, 0), 0);
}

static void test_sharing(void)
{
	static const uint16_t a[] = { 0x0001, 0x8002, 0x0003, 0xffff };
	static const uint16_t b[] = { 0x0001, 0x0002, 0x8003, 0x7fff };
	static const uint16_t c[] = { 0x0001, 0x7fff };

	/* Limited and limited do not talk (IBA 10.9.3): 0x0001 is skipped */
	CHECK_EQ(part_common_key(a, 4, b, 4), 0x8002);
	CHECK_EQ(part_common_key(b, 4, a, 4), 0x0002);
	CHECK_EQ(part_common_key(b, 4, c, 2), 0);
	CHECK_EQ(part_common_key(a, 4, c, 2), 0xffff);
	CHECK_EQ(part_find_key(a, 4, 0x8003), 0x0003);
	CHECK_EQ(part_find_key(a, 4, 0x0004), 0);
}

static void test_port_tables(void)
{
	struct fakefab ff = { 0 };
	struct fabric *f;
	struct part_conf *c;
	struct part_index *ix;
	uint16_t tab[64] = { 0xffff, 0x8001, 0, 0x0001, [40] = 0x8005 };
	const uint16_t *k;
	unsigned int n;
	struct fab_port *p;

	CHECK_EQ(ff_parse(&ff, "Hca 1 \"h0\"\n[1] \"s\"[1]\nSwitch 2 \"s\"\n[1] \"h0\"[1]\n"
			  "[2] \"h1\"[1]\nHca 1 \"h1\"\n[1] \"s\"[2]\n"), 0);
	CHECK_EQ(fabric_new(&f), 0);
	CHECK_EQ(ff_discover(&ff, f, NULL), 0);
	CHECK_EQ(f->nnodes, 3);
	p = &f->nodes[0]->ports[1];
	/* No table known: the default partition, full */
	k = fabric_port_pkeys(p, &n);
	CHECK(n == 1 && k[0] == 0xffff);
	/* Two blocks kept (index 40 is in the second); keys sorted, one per partition */
	CHECK_EQ(fabric_port_set_pkeys(p, tab, 64), 0);
	CHECK_EQ(p->pkey_len, 64);
	k = fabric_port_pkeys(p, &n);
	CHECK_EQ(n, 3);
	CHECK(n == 3 && k[0] == 0x8001 && k[1] == 0x8005 && k[2] == 0xffff);
	tab[40] = 0;
	CHECK_EQ(fabric_port_set_pkeys(p, tab, 64), 0);
	CHECK_EQ(p->pkey_len, 32);
	/* GUIDs the rules name that no port has */
	c = parse("A=1 : 0x1234=full, 0x4321, SELF=full;");
	CHECK(c != NULL);
	if (c) {
		CHECK_EQ(part_index_new(c, f->nodes[0]->ports[1].guid, &ix), 0);
		CHECK_EQ(part_absent_guids(ix, f), 2);
		part_index_free(ix);
		part_conf_free(c);
	}
	fabric_free(f);
	ff_free(&ff);
}

/* A file of the kind sites write: tenants, storage, continuations, groups */
static const char tenants[] =
	"Default=0x7fff, ipoib, rate=7 :\n"
	"\tALL_CAS=limited, ALL_SWITCHES=full, SELF=full ;\n"
	"TenantA = 0x8001, ipoib, mtu=2048, rate=100G, sl=2, qkey=0x12345678 :\n"
	"\t0x0002c90300000008=full, 0x0002c9030000000c = full, # two hosts\n"
	"\t0x0002c90300000010 ;\n"
	"TenantB=0x0002,ipoib,scope=2,scope=5,defmember=both:0x0002c90300000014\\\n"
	"\t, 0x0002c9030000001c=limi ;\n"
	"Storage = 0x10, indx0, defmember=full :\n"
	"\tmgid=ff12:1234::1,qkey=0x99,sl=3,tclass=8,flowlabel=0x777\n"
	"\tmgid=ff12:401b::1234\n"
	"\tALL_ROUTERS, NONE, 0x0002c90300000020\n";

static uint32_t rnd(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

/*
 * Mutated files (bytes changed, deleted, inserted; syntax characters and
 * NULs among them), each handed over without a terminating NUL: every one
 * is accepted and indexes, or refused with "m.conf:LINE: " and a line of
 * the file, never a crash or a read past the buffer (ASan in the sanitizer
 * build).
 */
static void test_mutations(void)
{
	static const char syntax[] = ":;,=#\\\n \t0xfFALSEmgid";
	const char *const seeds[] = { opensm_example, tenants };
	unsigned int accepted = 0, refused = 0;
	uint32_t seed = 0x13572468;

	for (unsigned int i = 0; i < 4000; i++) {
		const char *src = seeds[i % 2];
		size_t len = strlen(src), cap = len + 16, lines = 1;
		unsigned int nmut = 1 + rnd(&seed) % 4;
		struct part_conf *c = NULL;
		char *buf = malloc(cap), *exact;
		int r;

		if (!buf)
			break;
		memcpy(buf, src, len);
		for (unsigned int k = 0; k < nmut && len > 1; k++) {
			size_t at = rnd(&seed) % len;
			char ch = rnd(&seed) % 3 ? syntax[rnd(&seed) % (sizeof(syntax) - 1)] :
						   (char)rnd(&seed);

			switch (rnd(&seed) % 3) {
			case 0:
				buf[at] = ch;
				break;
			case 1:
				memmove(buf + at, buf + at + 1, len - at - 1);
				len--;
				break;
			default:
				if (len + 1 >= cap)
					break;
				memmove(buf + at + 1, buf + at, len - at);
				buf[at] = ch;
				len++;
			}
		}
		exact = malloc(len);
		if (!exact) {
			free(buf);
			break;
		}
		memcpy(exact, buf, len);
		for (size_t k = 0; k < len; k++)
			lines += exact[k] == '\n';
		err[0] = 0;
		r = part_parse(exact, len, "m.conf", &dflt, &c, err, sizeof(err));
		if (r == 0) {
			struct part_index *ix;
			uint16_t keys[64];
			unsigned int all;

			accepted++;
			CHECK(c != NULL);
			CHECK_EQ(part_index_new(c, 0x2c90300000004ull, &ix), 0);
			for (uint64_t g = 0x2c90300000004ull; g < 0x2c90300000024ull; g += 4)
				CHECK(part_port_keys(ix, g, NODE_TYPE_CA, keys, 64, &all) >= 1);
			part_index_free(ix);
			part_conf_free(c);
		} else {
			unsigned long line = 0;
			char *end = NULL;

			refused++;
			CHECK_EQ(r, -EINVAL);
			CHECK(!strncmp(err, "m.conf:", 7));
			if (!strncmp(err, "m.conf:", 7))
				line = strtoul(err + 7, &end, 10);
			CHECK(line >= 1 && line <= lines);
			CHECK(end && !strncmp(end, ": ", 2));
		}
		free(exact);
		free(buf);
	}
	/* Both outcomes happen: the mutations reach past the first check */
	CHECK(accepted >= 100);
	CHECK(refused >= 100);
}

int main(void)
{
	RUN(test_opensm_example);
	RUN(test_refusals);
	RUN(test_values);
	RUN(test_syntax);
	RUN(test_membership);
	RUN(test_layout);
	RUN(test_sharing);
	RUN(test_port_tables);
	RUN(test_mutations);
	return unit_report();
}
