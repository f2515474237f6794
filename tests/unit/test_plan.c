// SPDX-License-Identifier: MIT
/*
 * The cabling plan (topo/plan.c, plan_check.c) and the scheduler's tree
 * (topo/sched.c), on in-memory fabrics: every format the plan comes in,
 * every refusal with its line, each kind of mismatch at both ends of a
 * cable and nowhere else, enforcement that fences what is wrong but keeps
 * the fabric in one piece (and routing that then avoids the fenced
 * links), hosts under their leaves, and hostlists that expand back to
 * exactly the names they were made of.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/lid.h"
#include "topo/plan.h"
#include "topo/route.h"
#include "topo/sched.h"

static char err[512];

static struct plan *parse(const char *text)
{
	struct plan *p = NULL;

	err[0] = 0;
	if (plan_parse(text, strlen(text), "plan", &p, err, sizeof(err)) < 0)
		return NULL;
	return p;
}

static const struct plan_node *pnode(const struct plan *p, const char *id)
{
	for (size_t i = 0; i < p->nnodes; i++)
		if (!strcmp(p->nodes[i].id, id))
			return &p->nodes[i];
	return NULL;
}

/* ---- the format ---- */

static void test_parse_ibnetdiscover(void)
{
	const char *srcdir = getenv("srcdir");
	char path[4096];
	char *text;
	struct plan *p;
	const struct plan_node *sw, *ca;

	/* What smctl dump writes, as ibnetdiscover prints it (tests/dump/) */
	snprintf(path, sizeof(path), "%s/tests/dump/sim.ibnd", srcdir ? srcdir : ".");
	text = unit_read_file(path, NULL);
	CHECK(text != NULL);
	if (!text)
		return;
	p = parse(text);
	CHECK_MSG(p != NULL, "sim.ibnd parses: %s", err);
	if (p) {
		CHECK_EQ(p->nnodes, 5);
		CHECK_EQ(p->nswitches, 2);
		/* 2 switch-switch, 2 + 2 + 1 to the CAs */
		CHECK_EQ(p->ncables, 7);
		sw = pnode(p, "S-0008f10400400010");
		CHECK(sw && sw->guid == 0x8f10400400010ull && !strcmp(sw->desc, "sw1 spine"));
		CHECK(sw && sw->nports == 12 && sw->type == NODE_TYPE_SWITCH);
		CHECK(sw && sw->ports[2].width == 12 && sw->ports[2].speed == LINK_SPEED_FDR);
		CHECK(sw && sw->ports[3].width == 4 && sw->ports[3].speed == LINK_SPEED_EDR);
		ca = pnode(p, "H-0002c90300000200");
		CHECK(ca && ca->type == NODE_TYPE_CA && !strcmp(ca->desc, "hostB mlx5_0"));
		CHECK(ca && ca->ports[1].width == 1 && ca->ports[1].speed == LINK_SPEED_SDR);
		CHECK(ca && ca->ports[1].peer != PLAN_NONE &&
		      p->nodes[ca->ports[1].peer].id == sw->id && ca->ports[1].peer_port == 5);
	}
	plan_free(p);
	free(text);

	/* Descriptions with quotes and back slashes, unknown rates ("?????"), a router */
	snprintf(path, sizeof(path), "%s/tests/dump/odd.ibnd", srcdir ? srcdir : ".");
	text = unit_read_file(path, NULL);
	p = text ? parse(text) : NULL;
	CHECK_MSG(p != NULL, "odd.ibnd parses: %s", err);
	if (p) {
		sw = pnode(p, "S-f000000000000001");
		CHECK(sw && !strcmp(sw->desc, "odd \"quoted\" \\ back slash   t  "));
		CHECK(sw && sw->ports[2].width == 0);
		ca = pnode(p, "R-0006000000000001");
		CHECK(ca && ca->type == NODE_TYPE_ROUTER && ca->guid == 0x6000000000001ull);
		CHECK(ca && ca->ports[1].width == 4 && ca->ports[1].speed == LINK_SPEED_FDR);
	}
	plan_free(p);
	free(text);
}

/* ibsim's own syntax, cables given from one end only, FDR10 */
static void test_parse_ibsim(void)
{
	struct plan *p = parse(
		"# a comment\n"
		"Switch\t8 \"Switch1\"\n"
		"[1]\t\"Hca1\"[1]\n"
		"[3] \"Switch2\" [3]\t\t# lid 2 4xFDR10\r\n"
		"\n"
		"Switch 8 \"Switch2\"\n"
		"Hca 2 \"Hca1\"\n");

	CHECK_MSG(p != NULL, "%s", err);
	if (!p)
		return;
	CHECK_EQ(p->nnodes, 3);
	CHECK_EQ(p->ncables, 2);
	CHECK(!strcmp(pnode(p, "Hca1")->desc, "Hca1"));
	CHECK_EQ(pnode(p, "Switch2")->ports[3].peer_port, 3);
	CHECK_EQ(pnode(p, "Switch2")->ports[3].speed, LINK_SPEED_QDR);
	CHECK(!pnode(p, "Switch2")->ports[3].stated);
	CHECK_EQ(pnode(p, "Hca1")->ports[1].peer_port, 1);
	plan_free(p);
}

/* Every refusal names the line and says why */
static void test_parse_errors(void)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "[1] \"a\"[1]\n", "plan:1: a port line before any node header" },
		{ "Switch 0 \"a\"\n", "plan:1: Switch: the number of ports must be 1-255" },
		{ "Switch 256 \"a\"\n", "plan:1: Switch: the number of ports" },
		{ "Switch 4 a\n", "plan:1: Switch: expected a node name in double quotes" },
		{ "Switch 4 \"\"\n", "plan:1: Switch: expected a node name" },
		{ "Switch 4 \"a\" x\n", "plan:1: unexpected text after the node name" },
		{ "Switch 4 \"a\"\nSwitch 4 \"a\"\n", "plan:2: node \"a\" again (first on line 1)" },
		{ "Switch 4 \"a\"\n[5] \"b\"[1]\nSwitch 4 \"b\"\n",
		  "plan:2: port 5: \"a\" has ports 1-4" },
		{ "Switch 4 \"a\"\n[1] \"b\"[1]\n[1] \"b\"[2]\nSwitch 4 \"b\"\n",
		  "plan:3: \"a\" port 1 listed twice (first on line 2)" },
		{ "Switch 4 \"a\"\n[1] \"b\"[1]\n\nSwitch 4 \"b\"\n[1] \"c\"[1]\nSwitch 4 \"c\"\n",
		  "port cabled twice: \"b\" port 1 to \"c\" port 1 (line 5) and to \"a\" port 1 "
		  "(line 2)" },
		{ "Switch 4 \"a\"\n[1] \"b\"[1]\nSwitch 4 \"c\"\n[1] \"b\"[1]\nSwitch 4 \"b\"\n",
		  "port cabled twice" },
		{ "Switch 4 \"a\"\n[1] \"nowhere\"[1]\n",
		  "plan:2: node \"nowhere\" is cabled to but has no header" },
		{ "Switch 4 \"a\"\n[1] \"b\"[9]\nSwitch 4 \"b\"\n",
		  "plan:2: \"a\" port 1: \"b\" has ports 1-4" },
		{ "Switch 4 \"a\"\n[1] \"a\"[1]\n", "plan:2: \"a\" port 1 cabled to itself" },
		{ "Switch 4 \"a\"\n[1] \"b\"[1] # lid 3 4xQQR\n",
		  "plan:2: unknown link speed 'QQR'" },
		{ "Switch 4 \"a\"\n[1] \"b\"[1] # lid 3 3xQDR\n", "plan:2: link width 3x" },
		{ "Switch 4 \"a\"\n[x] \"b\"[1]\n", "plan:2: expected [port number]" },
		{ "Switch 4 \"a\"\n[1] \"b\"[0]\n", "plan:2: port 1: expected [remote port number]" },
		{ "Switch 4 \"a\"\n[1] \"b\"[1] junk\n",
		  "plan:2: port 1: unexpected text after the remote port" },
		{ "Switch 4 \"a\"\n[1](zz) \"b\"[1]\n", "plan:2: port 1: malformed (GUID)" },
		{ "colour=blue\n", "plan:1: unknown key 'colour'" },
		{ "switchguid=0xfoo\n", "plan:1: switchguid: unexpected text after the GUID" },
		{ "switchguid=zz\n", "plan:1: switchguid: not a GUID in hex" },
		{ "switchguid=0x0\n", "plan:1: switchguid: GUID 0" },
		{ "switchguid=0x12345678901234567\n", "plan:1: switchguid: not a GUID" },
		{ "switchguid=0x1\nswitchguid=0x2\n", "plan:2: switchguid: a second GUID line" },
		{ "caguid=0x1\nSwitch 4 \"a\"\n", "plan:2: a CA GUID line before a switch" },
		{ "switchguid=0x1\nSwitch 4 \"a\"\nswitchguid=0x1\nSwitch 4 \"b\"\n",
		  "plan:4: GUID 0x0000000000000001 again (first on line 2)" },
		{ "Switch 4 \"a\"\nswitchguid=0x1\n",
		  "plan:2: a GUID line, and the file ends before its node" },
		{ "", "plan:1: no nodes: an empty plan" },
		{ "# only\n\n", "plan:2: no nodes" },
		{ "Switch 4 \"a\"\n\x7f" "ELF\x01\x02\n", "plan:2: binary data (byte 0x01)" },
		{ "include other.net\n", "plan:1: ibsim's include and do lines" },
		{ "hello\n", "plan:1: expected a node header" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct plan *p = parse(cases[i].text);

		CHECK_MSG(!p && strstr(err, cases[i].want), "case %zu: want \"%s\", got \"%s\"",
			  i, cases[i].want, p ? "(accepted)" : err);
		plan_free(p);
	}
	/* A NUL inside, which strlen would hide: the length given counts */
	{
		static const char nul[] = "Switch 4 \"a\"\n[1] \"b\0\"[1]\nSwitch 4 \"b\"\n";
		struct plan *p = NULL;

		CHECK(plan_parse(nul, sizeof(nul) - 1, "plan", &p, err, sizeof(err)) < 0);
		CHECK_MSG(strstr(err, "plan:2: binary data (byte 0x00)"), "%s", err);
	}
	/* A line past the limit */
	{
		size_t n = PLAN_LINE_MAX + 10;
		char *big = malloc(n + 16);
		struct plan *p = NULL;

		memcpy(big, "Switch 4 \"a\"\n#", 14);
		memset(big + 14, 'x', n);
		big[14 + n] = '\n';
		CHECK(plan_parse(big, 15 + n, "plan", &p, err, sizeof(err)) < 0);
		CHECK_MSG(strstr(err, "plan:2: line longer than"), "%s", err);
		free(big);
	}
}

/* ---- comparing ---- */

/*
 * A two-level tree: leaf0 (smhost, h1) and leaf1 (h2, h3), four spines;
 * each leaf has a cable to each spine at ports 3 to 6.
 */
static const char fabric_ok[] =
	"caguid=0x0000000000000a00\nHca 1 \"smhost\"\n[1] \"leaf0\"[1]\n"
	"caguid=0x0000000000000b00\nHca 1 \"h1\"\n[1] \"leaf0\"[2]\n"
	"caguid=0x0000000000000c00\nHca 1 \"h2\"\n[1] \"leaf1\"[1]\n"
	"caguid=0x0000000000000d00\nHca 1 \"h3\"\n[1] \"leaf1\"[2]\n"
	"switchguid=0x0000000000000010\nSwitch 6 \"leaf0\"\n"
	"[1] \"smhost\"[1]\n[2] \"h1\"[1]\n[3] \"spine0\"[1]\n[4] \"spine1\"[1]\n[5] \"spine2\"[1]\n"
	"[6] \"spine3\"[1]\n"
	"switchguid=0x0000000000000011\nSwitch 6 \"leaf1\"\n"
	"[1] \"h2\"[1]\n[2] \"h3\"[1]\n[3] \"spine0\"[2]\n[4] \"spine1\"[2]\n[5] \"spine2\"[2]\n"
	"[6] \"spine3\"[2]\n"
	"switchguid=0x0000000000000020\nSwitch 4 \"spine0\"\n[1] \"leaf0\"[3]\n[2] \"leaf1\"[3]\n"
	"switchguid=0x0000000000000021\nSwitch 4 \"spine1\"\n[1] \"leaf0\"[4]\n[2] \"leaf1\"[4]\n"
	"switchguid=0x0000000000000022\nSwitch 4 \"spine2\"\n[1] \"leaf0\"[5]\n[2] \"leaf1\"[5]\n"
	"switchguid=0x0000000000000023\nSwitch 4 \"spine3\"\n[1] \"leaf0\"[6]\n[2] \"leaf1\"[6]\n";

/*
 * The same, cabled wrong: leaf0's uplinks to spine0 and spine1 crossed,
 * h2 and h3 swapped, and the cable leaf1[5] - spine2[2] removed.
 */
static const char fabric_bad[] =
	"caguid=0x0000000000000a00\nHca 1 \"smhost\"\n[1] \"leaf0\"[1]\n"
	"caguid=0x0000000000000b00\nHca 1 \"h1\"\n[1] \"leaf0\"[2]\n"
	"caguid=0x0000000000000c00\nHca 1 \"h2\"\n[1] \"leaf1\"[2]\n"
	"caguid=0x0000000000000d00\nHca 1 \"h3\"\n[1] \"leaf1\"[1]\n"
	"switchguid=0x0000000000000010\nSwitch 6 \"leaf0\"\n"
	"[1] \"smhost\"[1]\n[2] \"h1\"[1]\n[3] \"spine1\"[1]\n[4] \"spine0\"[1]\n[5] \"spine2\"[1]\n"
	"[6] \"spine3\"[1]\n"
	"switchguid=0x0000000000000011\nSwitch 6 \"leaf1\"\n"
	"[1] \"h3\"[1]\n[2] \"h2\"[1]\n[3] \"spine0\"[2]\n[4] \"spine1\"[2]\n[6] \"spine3\"[2]\n"
	"switchguid=0x0000000000000020\nSwitch 4 \"spine0\"\n[1] \"leaf0\"[4]\n[2] \"leaf1\"[3]\n"
	"switchguid=0x0000000000000021\nSwitch 4 \"spine1\"\n[1] \"leaf0\"[3]\n[2] \"leaf1\"[4]\n"
	"switchguid=0x0000000000000022\nSwitch 4 \"spine2\"\n[1] \"leaf0\"[5]\n"
	"switchguid=0x0000000000000023\nSwitch 4 \"spine3\"\n[1] \"leaf0\"[6]\n[2] \"leaf1\"[6]\n";

static struct fabric *bring_up(const char *text)
{
	struct fakefab ff;
	struct fabric *f = NULL;
	struct lid_stats ls;

	if (ff_parse(&ff, text) < 0)
		return NULL;
	if (fabric_new(&f) < 0 || ff_discover(&ff, f, NULL) < 0 ||
	    lid_assign(f, 0, NULL, NULL, &ls) < 0)
		f = fabric_free(f);
	ff_free(&ff);
	return f;
}

static unsigned int count(const struct plan_report *r, unsigned int kind, uint64_t guid,
			  unsigned int port)
{
	unsigned int n = 0;

	for (size_t i = 0; i < r->n; i++)
		n += r->list[i].kind == kind && r->list[i].node_guid == guid &&
		     r->list[i].port == port;
	return n;
}

static const struct plan_mismatch *entry(const struct plan_report *r, unsigned int kind,
					 uint64_t guid, unsigned int port)
{
	for (size_t i = 0; i < r->n; i++)
		if (r->list[i].kind == kind && r->list[i].node_guid == guid &&
		    r->list[i].port == port)
			return &r->list[i];
	return NULL;
}

/* The entry exists and says expected / found */
static bool says(const struct plan_report *r, unsigned int kind, uint64_t guid, unsigned int port,
		 const char *expected, const char *found)
{
	const struct plan_mismatch *m = r ? entry(r, kind, guid, port) : NULL;

	if (m && (strcmp(m->expected, expected) || strcmp(m->found, found)))
		fprintf(stderr, "  %s 0x%" PRIx64 " port %u: \"%s\" / \"%s\"\n",
			plan_kind_name(kind), guid, port, m->expected, m->found);
	return m && !strcmp(m->expected, expected) && !strcmp(m->found, found);
}

static unsigned int action_of(const struct plan_report *r, unsigned int kind, uint64_t guid,
			      unsigned int port)
{
	const struct plan_mismatch *m = r ? entry(r, kind, guid, port) : NULL;

	return m ? m->action : 99;
}

static struct fab_port *port_of(const struct fabric *f, uint64_t guid, unsigned int port)
{
	struct fab_node *n = fabric_find(f, guid);

	return n && port <= n->num_ports ? &n->ports[port] : NULL;
}

static void test_equal(void)
{
	struct plan *p = parse(fabric_ok);
	struct fabric *f = bring_up(fabric_ok);
	struct plan_report *r = NULL;

	CHECK(p && f);
	if (!p || !f)
		goto out;
	CHECK_EQ(plan_check(p, f, true, &r), 0);
	CHECK(r && r->total == 0 && r->n == 0 && r->matched == 10 && r->held == 0);
out:
	plan_report_free(r);
	fabric_free(f);
	plan_free(p);
}

static void test_mismatches(void)
{
	struct plan *p = parse(fabric_ok);
	struct fabric *f = bring_up(fabric_bad);
	struct plan_report *r = NULL, *r2 = NULL;
	const struct plan_mismatch *m;

	CHECK(p && f);
	if (!p || !f)
		goto out;
	CHECK_EQ(plan_check(p, f, false, &r), 0);
	if (!r)
		goto out;
	/* Crossed uplinks: four ends; swapped hosts: four ends; the removed cable: two */
	CHECK_EQ(r->count[PLAN_MISWIRED], 8);
	CHECK_EQ(r->count[PLAN_MISSING], 2);
	CHECK_EQ(r->total, 10);
	CHECK_EQ(r->n, 10);
	CHECK_EQ(count(r, PLAN_MISWIRED, 0x10, 3), 1);
	CHECK_EQ(count(r, PLAN_MISWIRED, 0x10, 4), 1);
	CHECK_EQ(count(r, PLAN_MISWIRED, 0x20, 1), 1);
	CHECK_EQ(count(r, PLAN_MISWIRED, 0x21, 1), 1);
	CHECK_EQ(count(r, PLAN_MISWIRED, 0x11, 1), 1);
	CHECK_EQ(count(r, PLAN_MISWIRED, 0x11, 2), 1);
	CHECK_EQ(count(r, PLAN_MISWIRED, 0xc00, 1), 1);
	CHECK_EQ(count(r, PLAN_MISWIRED, 0xd00, 1), 1);
	CHECK_EQ(count(r, PLAN_MISSING, 0x11, 5), 1);
	CHECK_EQ(count(r, PLAN_MISSING, 0x22, 2), 1);
	m = entry(r, PLAN_MISWIRED, 0x10, 3);
	CHECK(m && !strcmp(m->node_desc, "leaf0"));
	CHECK(says(r, PLAN_MISWIRED, 0x10, 3, "spine0 (0x0000000000000020) port 1",
		   "spine1 (0x0000000000000021) port 1"));
	CHECK(says(r, PLAN_MISSING, 0x22, 2, "leaf1 (0x0000000000000011) port 5", ""));
	/* Sorted by kind, GUID, port; nothing enforced */
	for (size_t i = 1; i < r->n; i++)
		CHECK(r->list[i - 1].kind < r->list[i].kind ||
		      (r->list[i - 1].kind == r->list[i].kind &&
		       r->list[i - 1].node_guid <= r->list[i].node_guid));
	for (size_t i = 0; i < r->n; i++)
		CHECK_EQ(r->list[i].action, PLAN_REPORTED);
	CHECK_EQ(r->held, 0);
	/* The same again: the same signature */
	CHECK_EQ(plan_check(p, f, false, &r2), 0);
	CHECK(r2 && r2->sig == r->sig && r->sig != 0);
out:
	plan_report_free(r);
	plan_report_free(r2);
	fabric_free(f);
	plan_free(p);
}

/* The crossed uplinks are fenced, the hosts not; routes then avoid the fenced links */
static void test_enforce(void)
{
	struct plan *p = parse(fabric_ok);
	struct fabric *f = bring_up(fabric_bad);
	struct plan_report *r = NULL;
	struct route_stats st;
	struct route_result *res = NULL;
	unsigned int crossing = 0;

	CHECK(p && f);
	if (!p || !f)
		goto out;
	CHECK_EQ(plan_check(p, f, true, &r), 0);
	if (!r)
		goto out;
	CHECK_EQ(r->held, 2);
	CHECK_EQ(r->kept, 0);
	CHECK(port_of(f, 0x10, 3)->fenced && port_of(f, 0x21, 1)->fenced);
	CHECK(port_of(f, 0x10, 4)->fenced && port_of(f, 0x20, 1)->fenced);
	CHECK(!fabric_port_linked(port_of(f, 0x10, 3)));
	CHECK(!port_of(f, 0x11, 1)->fenced && !port_of(f, 0xc00, 1)->fenced);
	CHECK(fabric_port_linked(port_of(f, 0x11, 1)));
	CHECK_EQ(action_of(r, PLAN_MISWIRED, 0x10, 3), PLAN_HELD);
	CHECK_EQ(action_of(r, PLAN_MISWIRED, 0x21, 1), PLAN_HELD);
	CHECK_EQ(action_of(r, PLAN_MISWIRED, 0x11, 1), PLAN_REPORTED);
	CHECK_EQ(action_of(r, PLAN_MISSING, 0x11, 5), PLAN_REPORTED);
	/* Every engine routes every LID, none out of a fenced port */
	for (unsigned int e = 0; e < 3; e++) {
		static const char *const engines[] = { "dfree", "updn", "minhop" };
		const struct route_engine *eng = route_engine_find(engines[e]);
		int rr = route_compute(eng, f, NULL, &st, &res);

		CHECK_MSG(rr == 0 && st.unreachable == 0, "%s: %d, %u unreachable", eng->name,
			  rr, st.unreachable);
		for (size_t i = 0; i < f->nswitches; i++) {
			const struct fab_node *n = f->switches[i];

			for (uint32_t lid = 1; lid < n->lft_len; lid++)
				if (n->lft[lid] && n->lft[lid] <= n->num_ports &&
				    n->ports[n->lft[lid]].fenced)
					crossing++;
		}
		route_result_free(res);
		res = NULL;
	}
	CHECK_EQ(crossing, 0);
	/* A check without enforcement takes the fences down */
	plan_report_free(r);
	r = NULL;
	CHECK_EQ(plan_check(p, f, false, &r), 0);
	CHECK(!port_of(f, 0x10, 3)->fenced && fabric_port_linked(port_of(f, 0x10, 3)));
out:
	plan_report_free(r);
	fabric_free(f);
	plan_free(p);
}

/* Wrong links that hold the fabric together stay up: the fewest of them */
static void test_enforce_connected(void)
{
	/* spine0's two cables swapped: both wrong, and spine0 has no other */
	static const char bad[] =
		"caguid=0x0000000000000a00\nHca 1 \"smhost\"\n[1] \"leaf0\"[1]\n"
		"switchguid=0x0000000000000010\nSwitch 5 \"leaf0\"\n"
		"[1] \"smhost\"[1]\n[3] \"spine0\"[2]\n[4] \"spine1\"[1]\n"
		"switchguid=0x0000000000000011\nSwitch 5 \"leaf1\"\n"
		"[3] \"spine0\"[1]\n[4] \"spine1\"[2]\n"
		"switchguid=0x0000000000000020\nSwitch 4 \"spine0\"\n[2] \"leaf0\"[3]\n"
		"[1] \"leaf1\"[3]\n"
		"switchguid=0x0000000000000021\nSwitch 4 \"spine1\"\n[1] \"leaf0\"[4]\n"
		"[2] \"leaf1\"[4]\n";
	static const char plan_text[] =
		"caguid=0x0000000000000a00\nHca 1 \"smhost\"\n[1] \"leaf0\"[1]\n"
		"switchguid=0x0000000000000010\nSwitch 5 \"leaf0\"\n"
		"[3] \"spine0\"[1]\n[4] \"spine1\"[1]\n"
		"switchguid=0x0000000000000011\nSwitch 5 \"leaf1\"\n"
		"[3] \"spine0\"[2]\n[4] \"spine1\"[2]\n"
		"switchguid=0x0000000000000020\nSwitch 4 \"spine0\"\n"
		"switchguid=0x0000000000000021\nSwitch 4 \"spine1\"\n";
	struct plan *p = parse(plan_text);
	struct fabric *f = bring_up(bad);
	struct plan_report *r = NULL;
	unsigned int held = 0, kept = 0;

	CHECK_MSG(p && f, "%s", err);
	if (!p || !f)
		goto out;
	CHECK_EQ(plan_check(p, f, true, &r), 0);
	if (!r)
		goto out;
	CHECK_EQ(r->count[PLAN_MISWIRED], 4);
	CHECK_EQ(r->held, 1);
	CHECK_EQ(r->kept, 1);
	for (size_t i = 0; i < r->n; i++) {
		held += r->list[i].action == PLAN_HELD;
		kept += r->list[i].action == PLAN_KEPT;
	}
	CHECK_EQ(held, 2);
	CHECK_EQ(kept, 2);
	/* spine0 is still reached: exactly one of its ports is fenced */
	CHECK(port_of(f, 0x20, 1)->fenced != port_of(f, 0x20, 2)->fenced);
out:
	plan_report_free(r);
	fabric_free(f);
	plan_free(p);
}

/* Nodes the plan does not know, and nodes it has that are not there */
static void test_nodes(void)
{
	/* The fabric has h9 on leaf0 port 3 instead of the planned h8 */
	static const char plan_text[] =
		"caguid=0x0000000000000a00\nHca 1 \"smhost\"\n[1] \"leaf0\"[1]\n"
		"caguid=0x0000000000000800\nHca 1 \"h8\"\n[1] \"leaf0\"[3]\n"
		"switchguid=0x0000000000000010\nSwitch 4 \"leaf0\"\n";
	static const char fab[] =
		"caguid=0x0000000000000a00\nHca 1 \"smhost\"\n[1] \"leaf0\"[1]\n"
		"caguid=0x0000000000000900\nHca 1 \"h9\"\n[1] \"leaf0\"[4]\n"
		"switchguid=0x0000000000000010\nSwitch 4 \"leaf0\"\n"
		"[1] \"smhost\"[1]\n[4] \"h9\"[1]\n";
	struct plan *p = parse(plan_text);
	struct fabric *f = bring_up(fab);
	struct plan_report *r = NULL;

	CHECK(p && f);
	if (!p || !f)
		goto out;
	CHECK_EQ(plan_check(p, f, true, &r), 0);
	if (!r)
		goto out;
	CHECK_EQ(r->total, 4);
	CHECK_EQ(count(r, PLAN_UNKNOWN_NODE, 0x900, 0), 1);
	CHECK(says(r, PLAN_UNKNOWN_NODE, 0x900, 0, "", "CA, 1 ports"));
	CHECK(says(r, PLAN_MISSING, 0x800, 0, "CA, 1 ports", ""));
	CHECK(says(r, PLAN_MISSING, 0x10, 3, "h8 (0x0000000000000800) port 1", ""));
	CHECK(says(r, PLAN_UNEXPECTED, 0x10, 4, "", "h9 (0x0000000000000900) port 1"));
out:
	plan_report_free(r);
	fabric_free(f);
	plan_free(p);
}

/* Without GUIDs: by description; CAs also by host name; never on a tie */
static void test_match_by_name(void)
{
	static const char plan_text[] =
		"Hca 1 \"smhost\"\n[1] \"leaf0\"[1]\n"
		"Hca 1 \"node7\"\n[1] \"leaf0\"[2]\n"
		"Switch 4 \"leaf0\"\n";
	static const char fab[] =
		"caguid=0x0000000000000a00\nHca 1 \"smhost\"\n[1] \"leaf0\"[1]\n"
		"caguid=0x0000000000000700\nHca 1 \"node7 mlx5_0\"\n[1] \"leaf0\"[2]\n"
		"switchguid=0x0000000000000010\nSwitch 4 \"leaf0\"\n"
		"[1] \"smhost\"[1]\n[2] \"node7 mlx5_0\"[1]\n";
	static const char twins[] =
		"caguid=0x0000000000000a00\nHca 1 \"smhost\"\n[1] \"leaf0\"[1]\n"
		"caguid=0x0000000000000700\nHca 1 \"node7 mlx5_0\"\n[1] \"leaf0\"[2]\n"
		"caguid=0x0000000000000701\nHca 1 \"node7 mlx5_1\"\n[1] \"leaf0\"[3]\n"
		"switchguid=0x0000000000000010\nSwitch 4 \"leaf0\"\n"
		"[1] \"smhost\"[1]\n[2] \"node7 mlx5_0\"[1]\n[3] \"node7 mlx5_1\"[1]\n";
	struct plan *p = parse(plan_text);
	struct fabric *f = bring_up(fab), *g = bring_up(twins);
	struct plan_report *r = NULL;

	CHECK(p && f && g);
	if (!p || !f || !g)
		goto out;
	CHECK_EQ(plan_check(p, f, false, &r), 0);
	CHECK(r && r->total == 0 && r->matched == 3);
	r = plan_report_free(r);
	/* node7 has two HCAs: its host name fits both, so neither is taken for it */
	CHECK_EQ(plan_check(p, g, false, &r), 0);
	CHECK(r && r->matched == 2);
	CHECK(r && count(r, PLAN_UNKNOWN_NODE, 0x700, 0) == 1 &&
	      count(r, PLAN_UNKNOWN_NODE, 0x701, 0) == 1);
	CHECK(r && count(r, PLAN_MISWIRED, 0x10, 2) == 1 && count(r, PLAN_UNEXPECTED, 0x10, 3) == 1);
out:
	plan_report_free(r);
	fabric_free(f);
	fabric_free(g);
	plan_free(p);
}

/* Below the plan's rate, and below what both ends could run: both ends listed */
static void test_degraded(void)
{
	static const char plan_text[] =
		"caguid=0x0000000000000a00\nHca 1 \"smhost\"\n[1] \"leaf0\"[1] # lid 1\n"
		"caguid=0x0000000000000b00\nHca 1 \"h1\"\n[1] \"leaf0\"[2] # lid 2 4xQDR\n"
		"switchguid=0x0000000000000010\nSwitch 4 \"leaf0\"\n";
	static const char fab[] =
		"caguid=0x0000000000000a00\nHca 1 \"smhost\"\n[1] \"leaf0\"[1]\n"
		"caguid=0x0000000000000b00\nHca 1 \"h1\"\n[1] \"leaf0\"[2]\n"
		"switchguid=0x0000000000000010\nSwitch 4 \"leaf0\"\n"
		"[1] \"smhost\"[1]\n[2] \"h1\"[1]\n";
	struct plan *p = parse(plan_text);
	struct fabric *f = bring_up(fab);
	struct plan_report *r = NULL;
	struct fab_port *a, *b;

	CHECK(p && f);
	if (!p || !f)
		goto out;
	/* fakefab's links are 4x SDR: h1's is slower than planned */
	CHECK_EQ(plan_check(p, f, false, &r), 0);
	CHECK(r && r->total == 2);
	CHECK(says(r, PLAN_DEGRADED, 0xb00, 1, "4xQDR", "4xSDR"));
	CHECK(says(r, PLAN_DEGRADED, 0x10, 2, "4xQDR", "4xSDR"));
	r = plan_report_free(r);
	/* smhost's link trained 1x where both ends support and enable 1x and 4x */
	a = port_of(f, 0xa00, 1);
	b = port_of(f, 0x10, 1);
	a->pi.link_width_supported = b->pi.link_width_supported = 3;
	a->pi.link_width_enabled = b->pi.link_width_enabled = 3;
	a->pi.link_width_active = b->pi.link_width_active = 1;
	CHECK_EQ(plan_check(p, f, false, &r), 0);
	CHECK(says(r, PLAN_DEGRADED, 0xa00, 1, "4xSDR", "1xSDR"));
	CHECK(says(r, PLAN_DEGRADED, 0x10, 1, "4xSDR", "1xSDR"));
	r = plan_report_free(r);
	/* An end enabled for 1x only: 1x is all the link can do, not degraded */
	b->pi.link_width_enabled = 1;
	CHECK_EQ(plan_check(p, f, false, &r), 0);
	CHECK(r && count(r, PLAN_DEGRADED, 0xa00, 1) == 0);
	r = plan_report_free(r);
	/* Extended speeds: both ends EDR-capable, running FDR */
	b->pi.link_width_enabled = 3;
	a->pi.link_width_active = b->pi.link_width_active = 2;
	a->pi.cap_mask |= PORT_CAP_EXT_SPEEDS;
	fabric_find(f, 0x10)->ports[0].pi.cap_mask |= PORT_CAP_EXT_SPEEDS;
	a->pi.link_speed_ext_supported = b->pi.link_speed_ext_supported = 3;
	a->pi.link_speed_ext_enabled = b->pi.link_speed_ext_enabled = 3;
	a->pi.link_speed_ext_active = b->pi.link_speed_ext_active = 1;
	CHECK_EQ(plan_check(p, f, false, &r), 0);
	CHECK(says(r, PLAN_DEGRADED, 0xa00, 1, "4xEDR", "4xFDR"));
	r = plan_report_free(r);
	/*
	 * IBA 1.7: both ends XDR-capable (LinkSpeedExtSupported2/Enabled2,
	 * valid by CapabilityMask2) but running NDR: degraded; running XDR
	 * (LinkSpeedExtActive2): not
	 */
	a->pi.cap_mask |= PORT_CAP_CAP_MASK2;
	a->pi.cap_mask2 = PORT_CAP2_EXT_SPEEDS2;
	fabric_find(f, 0x10)->ports[0].pi.cap_mask |= PORT_CAP_CAP_MASK2;
	fabric_find(f, 0x10)->ports[0].pi.cap_mask2 = PORT_CAP2_EXT_SPEEDS2;
	a->pi.link_speed_ext_supported = b->pi.link_speed_ext_supported = 15;
	a->pi.link_speed_ext_enabled = b->pi.link_speed_ext_enabled = 15;
	a->pi.link_speed_ext_supported2 = b->pi.link_speed_ext_supported2 = 1;
	a->pi.link_speed_ext_enabled2 = b->pi.link_speed_ext_enabled2 = 1;
	a->pi.link_speed_ext_active = b->pi.link_speed_ext_active = 8;
	CHECK_EQ(plan_check(p, f, false, &r), 0);
	CHECK(says(r, PLAN_DEGRADED, 0xa00, 1, "4xXDR", "4xNDR"));
	r = plan_report_free(r);
	a->pi.link_speed_ext_active2 = b->pi.link_speed_ext_active2 = 1;
	CHECK_EQ(plan_check(p, f, false, &r), 0);
	CHECK(r && count(r, PLAN_DEGRADED, 0xa00, 1) == 0);
out:
	plan_report_free(r);
	fabric_free(f);
	plan_free(p);
}

/* ---- the scheduler's tree ---- */

static const struct sched_switch *sw_named(const struct sched_tree *t, const char *name)
{
	for (size_t i = 0; i < t->nsw; i++)
		if (!strcmp(t->sw[i].name, name))
			return &t->sw[i];
	return NULL;
}

static bool has_host(const struct sched_tree *t, const struct sched_switch *s, const char *h)
{
	for (size_t i = 0; s && i < s->nhosts; i++)
		if (!strcmp(t->hosts[s->hosts[i]].name, h))
			return true;
	return false;
}

static bool has_below(const struct sched_tree *t, const struct sched_switch *s, const char *n)
{
	for (size_t i = 0; s && i < s->nbelow; i++)
		if (!strcmp(t->sw[s->below[i]].name, n))
			return true;
	return false;
}

static void test_tree(void)
{
	/*
	 * core above two spines above two leaves; host "db" has two HCAs
	 * (mlx5_1 first in the file, on leaf1), "gpu" two ports (port 1 on
	 * leaf1); one CA has no description.
	 */
	static const char fab[] =
		"Hca 1 \"smhost\"\n[1] \"leaf 0\"[1]\n"
		"Hca 1 \"db mlx5_1\"\n[1] \"leaf1\"[3]\n"
		"Hca 1 \"db mlx5_0\"\n[1] \"leaf 0\"[2]\n"
		"Hca 2 \"gpu\"\n[2] \"leaf 0\"[3]\n[1] \"leaf1\"[2]\n"
		"Hca 1 \"\"\n[1] \"leaf1\"[4]\n"
		"Hca 1 \"h,1\"\n[1] \"leaf1\"[1]\n"
		"Switch 6 \"leaf 0\"\n[1] \"smhost\"[1]\n[2] \"db mlx5_0\"[1]\n[3] \"gpu\"[2]\n"
		"[5] \"spineA\"[1]\n[6] \"spineB\"[1]\n"
		"Switch 6 \"leaf1\"\n[1] \"h,1\"[1]\n[2] \"gpu\"[1]\n[3] \"db mlx5_1\"[1]\n"
		"[4] \"\"[1]\n[5] \"spineA\"[2]\n[6] \"spineB\"[2]\n"
		"Switch 4 \"spineA\"\n[1] \"leaf 0\"[5]\n[2] \"leaf1\"[5]\n[3] \"core\"[1]\n"
		"Switch 4 \"spineB\"\n[1] \"leaf 0\"[6]\n[2] \"leaf1\"[6]\n[3] \"core\"[2]\n"
		"Switch 4 \"core\"\n[1] \"spineA\"[3]\n[2] \"spineB\"[3]\n";
	struct fakefab ff;
	struct fabric *f = NULL;
	struct sched_tree *t = NULL;
	const struct sched_switch *l0, *l1, *a, *c;

	CHECK_EQ(ff_parse(&ff, fab), 0);
	CHECK(fabric_new(&f) == 0 && ff_discover(&ff, f, NULL) == 0);
	ff_free(&ff);
	CHECK_EQ(sched_tree_build(f, &t), 0);
	if (!t)
		goto out;
	CHECK_EQ(t->levels, 3);
	CHECK_EQ(t->nsw, 5);
	CHECK_EQ(t->unleveled, 0);
	CHECK_EQ(t->unnamed, 1);
	CHECK_EQ(t->nhosts, 4);		/* smhost, db, gpu, h_1 */
	l0 = sw_named(t, "leaf_0");
	l1 = sw_named(t, "leaf1");
	a = sw_named(t, "spineA");
	c = sw_named(t, "core");
	CHECK(l0 && l1 && a && c);
	CHECK(l0 && l0->level == 0 && l0->nhosts == 2 && has_host(t, l0, "smhost") &&
	      has_host(t, l0, "db"));
	CHECK(l1 && l1->nhosts == 2 && has_host(t, l1, "gpu") && has_host(t, l1, "h_1"));
	CHECK(a && a->level == 1 && a->nbelow == 2 && has_below(t, a, "leaf_0") &&
	      has_below(t, a, "leaf1"));
	CHECK(c && c->level == 2 && c->nbelow == 2 && has_below(t, c, "spineA") &&
	      has_below(t, c, "spineB"));
	CHECK(t->renamed >= 2);
	for (size_t i = 1; i < t->nsw; i++)
		CHECK(t->sw[i - 1].level <= t->sw[i].level);
out:
	sched_tree_free(t);
	fabric_free(f);
}

static void test_tree_names(void)
{
	/* Two switches whose descriptions sanitize to one name; hosts without names */
	static const char fab[] =
		"Hca 1 \"smhost\"\n[1] \"core sw\"[1]\n"
		"switchguid=0x0000000000000010\nSwitch 4 \"core sw\"\n[1] \"smhost\"[1]\n"
		"[2] \"core,sw\"[2]\n"
		"switchguid=0x0000000000000011\nSwitch 4 \"core,sw\"\n[2] \"core sw\"[2]\n"
		"[1] \"h\"[1]\n"
		"Hca 1 \"h\"\n[1] \"core,sw\"[1]\n";
	struct fakefab ff;
	struct fabric *f = NULL;
	struct sched_tree *t = NULL;

	CHECK_EQ(ff_parse(&ff, fab), 0);
	CHECK(fabric_new(&f) == 0 && ff_discover(&ff, f, NULL) == 0);
	CHECK_EQ(sched_tree_build(f, &t), 0);
	CHECK(t && t->nsw == 2 && sw_named(t, "core_sw_0000000000000010") &&
	      sw_named(t, "core_sw_0000000000000011"));
	t = sched_tree_free(t);
	/* No host names: no leaves, so no switch has a level */
	for (size_t i = 0; i < f->nnodes; i++)
		if (f->nodes[i]->type == NODE_TYPE_CA)
			f->nodes[i]->desc[0] = 0;
	CHECK_EQ(sched_tree_build(f, &t), 0);
	CHECK(t && t->nsw == 0 && t->nhosts == 0 && t->unnamed == 2 && t->unleveled == 2);
	sched_tree_free(t);
	ff_free(&ff);
	fabric_free(f);
}

/* ---- hostlists ---- */

/* An expander written from Slurm's documented syntax: prefix[a-b,c]suffix */
static size_t expand(const char *list, char out[][300], size_t max)
{
	size_t n = 0;
	const char *s = list;

	while (*s && n < max) {
		const char *e = s, *br;
		char item[256];
		size_t len;

		while (*e && *e != ',' && *e != '[')
			e++;
		if (*e == '[') {
			br = strchr(e, ']');
			if (!br)
				return 0;
			e = br + 1;
		}
		len = (size_t)(e - s);
		if (len >= sizeof(item))
			return 0;
		memcpy(item, s, len);
		item[len] = 0;
		s = *e ? e + 1 : e;
		br = strchr(item, '[');
		if (!br) {
			snprintf(out[n++], 300, "%s", item);
			continue;
		}
		{
			char *r = (char *)br + 1;

			*(char *)br = 0;
			item[len - 1] = 0;	/* the ']' */
			for (char *tok = strtok(r, ","); tok && n < max; tok = strtok(NULL, ",")) {
				char *dash = strchr(tok, '-');
				int w = (int)(dash ? (size_t)(dash - tok) : strlen(tok));
				unsigned long lo = strtoul(tok, NULL, 10);
				unsigned long hi = dash ? strtoul(dash + 1, NULL, 10) : lo;

				for (unsigned long v = lo; v <= hi && n < max; v++)
					snprintf(out[n++], 300, "%s%0*lu", item, w, v);
			}
		}
	}
	return n;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(a, b);
}

static void check_roundtrip(const char *const *names, size_t n, const char *want)
{
	static char got[512][300], in[512][300];
	char *hl = sched_hostlist(names, n);
	size_t m;

	CHECK(hl != NULL);
	if (!hl)
		return;
	if (want)
		CHECK_MSG(!strcmp(hl, want), "hostlist \"%s\", want \"%s\"", hl, want);
	m = expand(hl, got, 512);
	CHECK_MSG(m == n, "\"%s\" expands to %zu names, not %zu", hl, m, n);
	for (size_t i = 0; i < n; i++)
		snprintf(in[i], 300, "%s", names[i]);
	qsort(in, n, 300, cmp_str);
	qsort(got, m, 300, cmp_str);
	for (size_t i = 0; i < n && i < m; i++)
		CHECK_MSG(!strcmp(in[i], got[i]), "\"%s\": %s != %s", hl, in[i], got[i]);
	free(hl);
}

static void test_hostlist(void)
{
	const char *run[18];
	char buf[18][16];
	static const char *const padded[] = { "n010", "n001", "n002" };
	static const char *const mixed[] = { "login", "a3", "a1", "x9", "x10", "n08", "n09",
					     "n10", "b" };
	static const char *const one[] = { "node17" };

	for (int i = 0; i < 18; i++) {
		snprintf(buf[i], sizeof(buf[i]), "h2_%d", 17 - i);
		run[i] = buf[i];
	}
	check_roundtrip(run, 18, "h2_[0-17]");
	check_roundtrip(padded, 3, "n[001-002,010]");
	check_roundtrip(mixed, 9, "a[1,3],b,login,n10,n[08-09],x[9-10]");
	check_roundtrip(one, 1, "node17");
	check_roundtrip(NULL, 0, "");
	/* Random sets of names: whatever the compression, they come back exactly */
	{
		static char names[300][40];
		const char *ptr[300];
		uint64_t x = 88172645463325252ull;

		for (int round = 0; round < 200; round++) {
			size_t n = 0;

			for (int i = 0; i < 300 && n < 300; i++) {
				static const char *const pre[] = { "h", "h2_", "rack1-n", "gpu" };
				unsigned int num, style;
				bool dup = false;

				x ^= x << 13;
				x ^= x >> 7;
				x ^= x << 17;
				if (x % 3)
					continue;
				num = (unsigned int)((x >> 8) % 120);
				style = (unsigned int)((x >> 20) % 3);
				snprintf(names[n], 40, style == 0 ? "%s%u" : style == 1 ? "%s%03u" :
					 "%s", pre[(x >> 30) % 4], num);
				for (size_t k = 0; k < n && !dup; k++)
					dup = !strcmp(names[k], names[n]);
				if (!dup) {
					ptr[n] = names[n];
					n++;
				}
			}
			check_roundtrip(ptr, n, NULL);
		}
	}
}

int main(void)
{
	RUN(test_parse_ibnetdiscover);
	RUN(test_parse_ibsim);
	RUN(test_parse_errors);
	RUN(test_equal);
	RUN(test_mismatches);
	RUN(test_enforce);
	RUN(test_enforce_connected);
	RUN(test_nodes);
	RUN(test_match_by_name);
	RUN(test_degraded);
	RUN(test_tree);
	RUN(test_tree_names);
	RUN(test_hostlist);
	return unit_report();
}
