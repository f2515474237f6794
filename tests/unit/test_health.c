// SPDX-License-Identifier: MIT
/*
 * The health room's pure logic alone (issue 20): a port's counters
 * (topo/perf.c: totals from the first reading, deltas, saturation and the
 * counters a Set must clear, resets, 64-bit counters), the rules' windows
 * and thresholds (topo/health.c), degraded links (topo/linkrate.c) on
 * fabrics discovered from topology text, links that went down between two
 * sweeps, and isolation that keeps the fabric connected: judged by routing
 * the isolated fabric and walking every LFT (no entry into an isolated
 * link, every pair still arrives, the channel dependency graph acyclic),
 * also when route repair (the next sweep) moves the routes off it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/health.h"
#include "topo/lid.h"
#include "topo/linkrate.h"
#include "topo/perf.h"
#include "topo/route.h"

/* ---- counters ---- */

static void reading(struct perf_reading *r, uint16_t sym, uint8_t downed, uint16_t rcv,
		    uint32_t xdata)
{
	struct pma_port_counters pc = { 0 };

	pc.symbol_errors = sym;
	pc.link_downed = downed;
	pc.rcv_errors = rcv;
	pc.xmit_data = xdata;
	pc.xmit_wait = 7;
	perf_reading_make(&pc, NULL, true, r);
}

static void test_perf_totals(void)
{
	struct perf_state st = { 0 };
	struct perf_update u;
	struct perf_reading r;

	/* The first reading: totals are what the port holds (perfquery's numbers), no delta */
	reading(&r, 5000, 2, 10, 1000);
	perf_update(&st, &r, &u);
	CHECK_EQ(st.total[PERF_SYMBOL_ERRORS], 5000);
	CHECK_EQ(st.total[PERF_LINK_DOWNED], 2);
	CHECK_EQ(st.delta[PERF_SYMBOL_ERRORS], 0);
	CHECK_EQ(st.total[PERF_XMIT_WAIT], 7);
	CHECK_EQ(u.clear, 0);
	CHECK_EQ(u.went_back, 0);
	/* Then deltas */
	reading(&r, 5120, 3, 10, 1500);
	perf_update(&st, &r, &u);
	CHECK_EQ(st.delta[PERF_SYMBOL_ERRORS], 120);
	CHECK_EQ(st.delta[PERF_LINK_DOWNED], 1);
	CHECK_EQ(st.delta[PERF_RCV_ERRORS], 0);
	CHECK_EQ(st.delta[PERF_XMIT_DATA], 500);
	CHECK_EQ(st.total[PERF_SYMBOL_ERRORS], 5120);
	/* A reset port: lower than before, what it holds counts as new */
	reading(&r, 30, 0, 4, 100);
	perf_update(&st, &r, &u);
	CHECK(u.went_back & (1u << PERF_SYMBOL_ERRORS));
	CHECK(u.went_back & (1u << PERF_LINK_DOWNED));
	CHECK_EQ(st.delta[PERF_SYMBOL_ERRORS], 30);
	CHECK_EQ(st.total[PERF_SYMBOL_ERRORS], 5150);
	CHECK_EQ(st.total[PERF_RCV_ERRORS], 14);
	CHECK_EQ(st.resets, 1);
	CHECK_EQ(st.readings, 3);
}

static void test_perf_saturation(void)
{
	struct perf_state st = { 0 };
	struct perf_update u;
	struct perf_reading r, after;
	uint16_t sel;
	uint8_t sel2;

	reading(&r, 100, 0, 0, 0);
	perf_update(&st, &r, &u);
	/* Below half its range: nothing to clear; at half or more: that counter only */
	reading(&r, 32767, 0, 0, 0);
	perf_update(&st, &r, &u);
	CHECK_EQ(u.clear, 0);
	reading(&r, 40000, 200, 0, 0x80000001u);
	perf_update(&st, &r, &u);
	CHECK_EQ(u.clear, (1u << PERF_SYMBOL_ERRORS) | (1u << PERF_LINK_DOWNED) |
		 (1u << PERF_XMIT_DATA));
	CHECK_EQ(u.saturated, 0);
	perf_clear_select(u.clear, &sel, &sel2);
	CHECK_EQ(sel, PMA_CS_SYMBOL_ERRORS | PMA_CS_LINK_DOWNED | PMA_CS_XMIT_DATA);
	CHECK_EQ(sel2, 0);
	perf_clear_select(1u << PERF_XMIT_WAIT, &sel, &sel2);
	CHECK_EQ(sel, 0);
	CHECK_EQ(sel2, PMA_CS2_XMIT_WAIT);
	/* The Set answered: the counters it cleared start again from its values, totals go on */
	reading(&after, 3, 0, 0, 10);
	perf_cleared(&st, (1u << PERF_SYMBOL_ERRORS) | (1u << PERF_XMIT_DATA), &after);
	CHECK_EQ(st.total[PERF_SYMBOL_ERRORS], 40000);
	reading(&r, 50, 200, 0, 20);
	perf_update(&st, &r, &u);
	CHECK_EQ(st.delta[PERF_SYMBOL_ERRORS], 47);
	CHECK_EQ(st.total[PERF_SYMBOL_ERRORS], 40047);
	CHECK_EQ(st.delta[PERF_XMIT_DATA], 10);
	CHECK_EQ(u.went_back, 0);
	CHECK_EQ(st.clears, 1);
	/* Saturated: counted, and cleared */
	reading(&r, 65535, 200, 0, 20);
	perf_update(&st, &r, &u);
	CHECK(u.saturated & (1u << PERF_SYMBOL_ERRORS));
	CHECK(u.clear & (1u << PERF_SYMBOL_ERRORS));
	CHECK_EQ(st.saturations, 1);
}

static void test_perf_ext(void)
{
	struct pma_port_counters pc = { 0 };
	struct pma_port_counters_ext pce = { 0 };
	struct perf_state st = { 0 };
	struct perf_reading r;
	struct perf_update u;

	/* 64-bit data counters: never cleared, the 32-bit ones ignored */
	pc.xmit_data = 0xffffffffu;
	pce.xmit_data = UINT64_C(0x123456789);
	pce.rcv_pkts = 42;
	perf_reading_make(&pc, &pce, false, &r);
	CHECK(r.ext);
	CHECK(r.v[PERF_XMIT_DATA] == UINT64_C(0x123456789));
	perf_update(&st, &r, &u);
	CHECK_EQ(u.clear, 0);
	CHECK_EQ(u.saturated, 0);
	CHECK(st.total[PERF_XMIT_DATA] == UINT64_C(0x123456789));
	pce.xmit_data += UINT64_C(0x100000000);
	perf_reading_make(&pc, &pce, false, &r);
	perf_update(&st, &r, &u);
	CHECK(st.delta[PERF_XMIT_DATA] == UINT64_C(0x100000000));
	/* Without PortXmitWait: nothing counted there */
	CHECK_EQ(st.total[PERF_XMIT_WAIT], 0);
	/* The PMA stops answering PortCountersExtended: the 32-bit counter is a new baseline */
	pc.xmit_data = 77;
	perf_reading_make(&pc, NULL, false, &r);
	perf_update(&st, &r, &u);
	CHECK_EQ(st.delta[PERF_XMIT_DATA], 0);
	CHECK_EQ(u.went_back, 0);
	CHECK(st.total[PERF_XMIT_DATA] == UINT64_C(0x223456789));
	/* A PMA that lies with huge values: the total stops at the top, never wraps */
	pce.xmit_data = UINT64_MAX - 5;
	perf_reading_make(&pc, &pce, false, &r);
	perf_update(&st, &r, &u);
	pce.xmit_data = 10;
	perf_reading_make(&pc, &pce, false, &r);
	perf_update(&st, &r, &u);
	pce.xmit_data = UINT64_MAX;
	perf_reading_make(&pc, &pce, false, &r);
	perf_update(&st, &r, &u);
	CHECK(st.total[PERF_XMIT_DATA] == UINT64_MAX);
}

/* ---- windows and rules ---- */

static void test_window(void)
{
	struct health_window w = { 0 };
	uint64_t sums[HEALTH_COUNTS];
	uint32_t n[HEALTH_COUNTS] = { 0 };
	struct health_cfg cfg = { .window_s = 600 };

	/* Nothing to count: nothing kept */
	CHECK_EQ(health_window_add(&w, 10, 600, n), 0);
	CHECK(w.ev == NULL);
	n[HEALTH_N_SYMBOL] = 60;
	CHECK_EQ(health_window_add(&w, 100, 600, n), 0);
	n[HEALTH_N_SYMBOL] = 50;
	n[HEALTH_N_RCV] = 3;
	CHECK_EQ(health_window_add(&w, 400, 600, n), 0);
	health_window_sums(&w, 400, 600, sums);
	CHECK_EQ(sums[HEALTH_N_SYMBOL], 110);
	CHECK_EQ(sums[HEALTH_N_RCV], 3);
	/* 600 s after the first: it is out */
	health_window_sums(&w, 700, 600, sums);
	CHECK_EQ(sums[HEALTH_N_SYMBOL], 50);
	health_window_sums(&w, 699, 600, sums);
	CHECK_EQ(sums[HEALTH_N_SYMBOL], 110);
	/* Thresholds: above them, not at them; 0 is off */
	cfg.threshold[HEALTH_SYMBOL_ERRORS] = 100;
	cfg.threshold[HEALTH_RCV_ERRORS] = 3;
	cfg.threshold[HEALTH_LINK_DOWNS] = 0;
	health_window_sums(&w, 400, 600, sums);
	CHECK_EQ(health_judge(&cfg, sums, false), 1u << HEALTH_SYMBOL_ERRORS);
	cfg.threshold[HEALTH_SYMBOL_ERRORS] = 110;
	CHECK_EQ(health_judge(&cfg, sums, false), 0);
	cfg.threshold[HEALTH_RCV_ERRORS] = 2;
	CHECK_EQ(health_judge(&cfg, sums, false), 1u << HEALTH_RCV_ERRORS);
	/* Degraded only when the rule is on */
	CHECK_EQ(health_judge(&cfg, sums, true), 1u << HEALTH_RCV_ERRORS);
	cfg.degraded = true;
	CHECK_EQ(health_judge(&cfg, sums, true),
		 (1u << HEALTH_RCV_ERRORS) | (1u << HEALTH_DEGRADED));
	/* One flap seen both ways counts once: the larger of counter and transitions */
	memset(n, 0, sizeof(n));
	n[HEALTH_N_LINK_DOWNED] = 2;
	n[HEALTH_N_LINK_SEEN] = 3;
	CHECK_EQ(health_window_add(&w, 500, 600, n), 0);
	health_window_sums(&w, 500, 600, sums);
	CHECK_EQ(health_rule_count(HEALTH_LINK_DOWNS, sums), 3);
	cfg.threshold[HEALTH_LINK_DOWNS] = 2;
	CHECK(health_judge(&cfg, sums, false) & (1u << HEALTH_LINK_DOWNS));
	cfg.threshold[HEALTH_LINK_DOWNS] = 3;
	CHECK(!(health_judge(&cfg, sums, false) & (1u << HEALTH_LINK_DOWNS)));
	health_window_clear(&w);
	health_window_sums(&w, 500, 600, sums);
	CHECK_EQ(sums[HEALTH_N_SYMBOL] + sums[HEALTH_N_RCV] + sums[HEALTH_N_LINK_SEEN], 0);
}

/* More intervals than a window keeps: merged, nothing lost */
static void test_window_full(void)
{
	struct health_window w = { 0 };
	uint32_t n[HEALTH_COUNTS] = { 0 };
	uint64_t sums[HEALTH_COUNTS];

	n[HEALTH_N_RCV] = 1;
	for (unsigned int t = 1; t <= 3 * HEALTH_EVENTS_MAX; t++)
		CHECK_EQ(health_window_add(&w, t, 100000, n), 0);
	CHECK(w.n <= HEALTH_EVENTS_MAX);
	health_window_sums(&w, 3 * HEALTH_EVENTS_MAX, 100000, sums);
	CHECK_EQ(sums[HEALTH_N_RCV], 3 * HEALTH_EVENTS_MAX);
	health_window_clear(&w);
}

/* ---- fabrics ---- */

static const char *ft2 =
	"Switch 6 \"leaf1\"\n[1] \"h1\"[1]\n[2] \"h2\"[1]\n[3] \"spine1\"[1]\n[4] \"spine2\"[1]\n"
	"[5] \"spine1\"[5]\n\n"
	"Switch 6 \"leaf2\"\n[1] \"h3\"[1]\n[2] \"h4\"[1]\n[3] \"spine1\"[2]\n[4] \"spine2\"[2]\n\n"
	"Switch 6 \"leaf3\"\n[1] \"h5\"[1]\n[3] \"spine1\"[3]\n[4] \"spine2\"[3]\n\n"
	"Switch 6 \"spine1\"\n[1] \"leaf1\"[3]\n[2] \"leaf2\"[3]\n[3] \"leaf3\"[3]\n"
	"[5] \"leaf1\"[5]\n\n"
	"Switch 6 \"spine2\"\n[1] \"leaf1\"[4]\n[2] \"leaf2\"[4]\n[3] \"leaf3\"[4]\n\n"
	"Hca 1 \"h1\"\n[1] \"leaf1\"[1]\n\n"
	"Hca 1 \"h2\"\n[1] \"leaf1\"[2]\n\n"
	"Hca 1 \"h3\"\n[1] \"leaf2\"[1]\n\n"
	"Hca 1 \"h4\"\n[1] \"leaf2\"[2]\n\n"
	"Hca 1 \"h5\"\n[1] \"leaf3\"[1]\n";

static struct fabric *bring_up(const struct fakefab *ff)
{
	struct fabric *f;
	struct disc_stats ds;
	struct lid_stats ls;

	if (fabric_new(&f) < 0)
		return NULL;
	if (ff_discover(ff, f, &ds) < 0 || lid_assign(f, 0, NULL, NULL, &ls) < 0)
		return fabric_free(f);
	return f;
}

static struct fab_port *port(const struct fakefab *ff, struct fabric *f, const char *node,
			     unsigned int num)
{
	int i = ff_find(ff, node);
	struct fab_node *n = i >= 0 ? fabric_find(f, ff->nodes[i].guid) : NULL;

	return n && num <= n->num_ports ? &n->ports[num] : NULL;
}

/* ibsim's "1x" link: both ends enable 1x|4x (the widths of the others), trained at 1x */
static void narrow(struct fab_port *p, uint8_t enabled, uint8_t active)
{
	p->pi.link_width_supported = 0x1f;
	p->pi.link_width_enabled = enabled;
	p->pi.link_width_active = active;
}

static void test_degraded(void)
{
	struct fakefab ff;
	struct fabric *f;
	struct fab_port *p, *q;
	struct link_rate a, b;
	unsigned int w, s;
	char txt[32];

	CHECK_EQ(ff_parse(&ff, ft2), 0);
	f = bring_up(&ff);
	CHECK(f != NULL);
	if (!f)
		return;
	p = port(&ff, f, "leaf2", 3);
	q = p ? p->peer : NULL;
	CHECK(q != NULL);
	if (!q)
		goto out;
	narrow(p, 3, 2);
	narrow(q, 3, 2);
	CHECK(!link_degraded(p, NULL, NULL));
	/* A 4x link up at 1x: degraded at both ends, each with both rates */
	narrow(p, 3, 1);
	narrow(q, 3, 1);
	CHECK(link_degraded(p, &a, &b));
	CHECK(link_degraded(q, NULL, NULL));
	CHECK_EQ(a.width, 1);
	link_rate_best(&a, &b, &w, &s);
	CHECK_EQ(w, 4);
	link_rate_text(txt, sizeof(txt), a.width, a.speed);
	CHECK(!strcmp(txt, "1xSDR"));
	link_widths_text(txt, sizeof(txt), b.widths);
	CHECK(!strcmp(txt, "1x,4x"));
	/* Enabled at 1x only at one end: what both enable is 1x, so not degraded */
	narrow(q, 1, 1);
	CHECK(!link_degraded(p, NULL, NULL));
	/* Speed: both ends allow QDR, the link runs SDR */
	narrow(q, 3, 2);
	narrow(p, 3, 2);
	p->pi.link_speed_supported = q->pi.link_speed_supported = 7;
	p->pi.link_speed_enabled = q->pi.link_speed_enabled = 7;
	p->pi.link_speed_active = q->pi.link_speed_active = 1;
	CHECK(link_degraded(p, &a, &b));
	link_speeds_text(txt, sizeof(txt), a.speeds);
	CHECK(!strcmp(txt, "SDR,DDR,QDR"));
	p->pi.link_speed_active = q->pi.link_speed_active = 4;
	CHECK(!link_degraded(p, NULL, NULL));
	/* A link down is not judged */
	p->pi.link_speed_active = 1;
	q->pi.phys_state = 2;
	CHECK(!link_degraded(p, NULL, NULL));
out:
	fabric_free(f);
	ff_free(&ff);
}

struct downs {
	char seen[8][80];
	int n;
	const struct fakefab *ff;
};

static void on_down(void *ctx, const struct fab_port *p)
{
	struct downs *d = ctx;

	if (d->n < 8)
		snprintf(d->seen[d->n], sizeof(d->seen[0]), "%s:%u",
			 p->node->desc_valid ? p->node->desc : "?", p->num);
	d->n++;
}

static bool seen(const struct downs *d, const char *what)
{
	for (int i = 0; i < d->n && i < 8; i++)
		if (!strcmp(d->seen[i], what))
			return true;
	return false;
}

/* As a sweep leaves them: every linked port ACTIVE */
static void activate(struct fabric *f)
{
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int k = 1; k <= f->nodes[i]->num_ports; k++)
			if (fabric_port_up(&f->nodes[i]->ports[k]))
				f->nodes[i]->ports[k].pi.port_state = PORT_STATE_ACTIVE;
}

static void test_links_down(void)
{
	struct fakefab ff;
	struct fabric *old, *f;
	struct downs d = { .n = 0 };
	struct fab_port *p;

	CHECK_EQ(ff_parse(&ff, ft2), 0);
	old = bring_up(&ff);
	f = bring_up(&ff);
	CHECK(old && f);
	if (!old || !f)
		goto out;
	activate(old);
	activate(f);
	CHECK_EQ(health_links_down(old, f, on_down, &d), 0);
	/* One link came back at INIT (it flapped), one is down, one was not ACTIVE before */
	p = port(&ff, f, "spine1", 2);
	p->pi.port_state = PORT_STATE_INIT;
	p->peer->pi.port_state = PORT_STATE_INIT;
	p = port(&ff, f, "leaf3", 4);
	p->pi.phys_state = 2;
	p->pi.port_state = PORT_STATE_DOWN;
	p = port(&ff, old, "leaf1", 1);
	p->pi.port_state = PORT_STATE_INIT;
	p = port(&ff, f, "leaf1", 1);
	p->pi.port_state = PORT_STATE_INIT;
	CHECK_EQ(health_links_down(old, f, on_down, &d), 4);
	/* Both ends of each: the flapped one, the one down (its peer is no longer up with it) */
	CHECK(seen(&d, "spine1:2"));
	CHECK(seen(&d, "leaf2:3"));
	CHECK(seen(&d, "leaf3:4"));
	CHECK(seen(&d, "spine2:3"));
	CHECK(!seen(&d, "leaf1:1"));
	CHECK_EQ(health_links_down(NULL, f, on_down, &d), 0);
out:
	fabric_free(old);
	fabric_free(f);
	ff_free(&ff);
}

/* Every LFT entry of f that forwards into an isolated port */
static unsigned int routes_into_isolated(const struct fabric *f)
{
	unsigned int n = 0;

	for (size_t s = 0; s < f->nswitches; s++) {
		const struct fab_node *sw = f->switches[s];

		for (uint32_t lid = 1; lid < sw->lft_len; lid++) {
			uint8_t out = sw->lft[lid];

			if (out != LFT_PORT_NONE && out && out <= sw->num_ports &&
			    sw->ports[out].isolated)
				n++;
		}
	}
	return n;
}

/* Route f with dfree, 1 VL: every pair arrives, no loop, acyclic */
static bool routes_ok(struct fabric *f)
{
	struct route_opts o = { .max_vls = 1 };
	struct route_stats st;
	struct route_check chk;
	struct route_result *res = NULL;
	const char *why = "";
	bool ok;

	if (route_compute(route_engine_find("dfree"), f, &o, &st, &res) < 0)
		return false;
	ok = route_verify(f, res, &st, true, &chk, &why) == 0 && chk.acyclic &&
	     !chk.unreachable && !chk.loops && !chk.disconnected;
	if (!ok)
		fprintf(stderr, "  routes: %s\n", why);
	route_result_free(res);
	return ok;
}

static void test_isolate(void)
{
	struct fakefab ff;
	struct fabric *f;
	struct health_isolation v[6];
	struct fab_port *p;

	CHECK_EQ(ff_parse(&ff, ft2), 0);
	f = bring_up(&ff);
	CHECK(f != NULL);
	if (!f)
		return;
	CHECK(routes_ok(f));
	CHECK_EQ(routes_into_isolated(f), 0);
	/*
	 * leaf1-spine1 (port 3), both ends listed; leaf2-spine2 at spine2's
	 * end; leaf3's two up links (taken in order: the first one joins
	 * leaf3 to the rest and stays, the second goes); a host's link
	 */
	memset(v, 0, sizeof(v));
	v[0].guid = port(&ff, f, "leaf1", 3)->node->guid;
	v[0].port = 3;
	v[1].guid = port(&ff, f, "spine1", 1)->node->guid;
	v[1].port = 1;
	v[2].guid = port(&ff, f, "spine2", 2)->node->guid;
	v[2].port = 2;
	v[3].guid = port(&ff, f, "leaf3", 3)->node->guid;
	v[3].port = 3;
	v[4].guid = port(&ff, f, "leaf3", 4)->node->guid;
	v[4].port = 4;
	v[5].guid = port(&ff, f, "leaf2", 1)->node->guid;
	v[5].port = 1;
	CHECK_EQ(health_isolate(f, v, 6), 0);
	CHECK_EQ(v[0].verdict, HEALTH_ISO_APPLIED);
	CHECK_EQ(v[1].verdict, HEALTH_ISO_APPLIED);
	CHECK(v[0].peer_guid == v[1].guid && v[0].peer_port == 1);
	CHECK_EQ(v[2].verdict, HEALTH_ISO_APPLIED);
	CHECK_EQ(v[3].verdict, HEALTH_ISO_SPLIT);
	CHECK_EQ(v[4].verdict, HEALTH_ISO_APPLIED);
	CHECK_EQ(v[5].verdict, HEALTH_ISO_CA_LINK);
	p = port(&ff, f, "leaf1", 3);
	CHECK(p->isolated && p->peer->isolated);
	CHECK(fabric_port_up(p) && !fabric_port_linked(p));
	CHECK(port(&ff, f, "leaf3", 4)->isolated);
	CHECK(!port(&ff, f, "leaf3", 3)->isolated);
	CHECK(!port(&ff, f, "leaf1", 5)->isolated);
	CHECK(!port(&ff, f, "leaf2", 1)->isolated);
	/* Routed without them: every pair arrives, deadlock-free, no route into them */
	CHECK(routes_ok(f));
	CHECK_EQ(routes_into_isolated(f), 0);
	/*
	 * What is left is a tree: leaf1 joins spine2 to spine1, which holds
	 * leaf2 and leaf3. Any more goes nowhere: leaf1's parallel cable and
	 * its link to spine2 are each the only way now.
	 */
	memset(&v[0], 0, sizeof(v[0]));
	v[0].guid = port(&ff, f, "leaf1", 5)->node->guid;
	v[0].port = 5;
	CHECK_EQ(health_isolate(f, v, 1), 0);
	CHECK_EQ(v[0].verdict, HEALTH_ISO_SPLIT);
	v[0].guid = port(&ff, f, "leaf1", 4)->node->guid;
	v[0].port = 4;
	CHECK_EQ(health_isolate(f, v, 1), 0);
	CHECK_EQ(v[0].verdict, HEALTH_ISO_SPLIT);
	CHECK(!port(&ff, f, "leaf1", 4)->isolated);
	v[0].guid = 0x1234;
	CHECK_EQ(health_isolate(f, v, 1), 0);
	CHECK_EQ(v[0].verdict, HEALTH_ISO_NOT_UP);
	CHECK(routes_ok(f));
	CHECK_EQ(routes_into_isolated(f), 0);
	CHECK(!strcmp(health_iso_name(HEALTH_ISO_SPLIT), "fabric_would_split"));
	fabric_free(f);
	ff_free(&ff);
}

/*
 * Route repair (the routing of a sweep after the first) on a model whose
 * link was isolated since the last: the routes that crossed it move, no
 * other LFT entry changes, every pair still arrives on one acyclic VL.
 */
static void test_isolate_repair(void)
{
	struct fakefab ff;
	struct fabric *old, *f;
	struct route_opts o = { .max_vls = 1 };
	struct route_stats st;
	struct route_check chk;
	struct route_result *ores = NULL, *res = NULL;
	struct route_repair_info info;
	struct health_isolation v;
	const char *why = "";
	unsigned int crossed = 0, moved = 0, other = 0;
	struct fab_node *l1, *s1;

	CHECK_EQ(ff_parse(&ff, ft2), 0);
	old = bring_up(&ff);
	f = bring_up(&ff);
	CHECK(old && f);
	if (!old || !f)
		goto out;
	activate(old);
	activate(f);
	CHECK_EQ(route_compute(route_engine_find("dfree"), old, &o, &st, &ores), 0);
	CHECK_EQ(route_verify(old, ores, &st, true, &chk, &why), 0);
	/*
	 * leaf1's first link to spine1 (spine1's port 1) carries routes both
	 * ways; leaf1 has a parallel cable and another spine
	 */
	l1 = port(&ff, old, "leaf1", 3)->node;
	s1 = port(&ff, old, "spine1", 1)->node;
	for (uint32_t lid = 1; lid < l1->lft_len; lid++)
		crossed += l1->lft[lid] == 3;
	for (uint32_t lid = 1; lid < s1->lft_len; lid++)
		crossed += s1->lft[lid] == 1;
	CHECK(crossed > 0);
	memset(&v, 0, sizeof(v));
	v.guid = l1->guid;
	v.port = 3;
	CHECK_EQ(health_isolate(f, &v, 1), 0);
	CHECK_EQ(v.verdict, HEALTH_ISO_APPLIED);
	CHECK_EQ(route_repair(old, ores, f, &o, &st, &res, &info), 0);
	if (!res)
		goto out;
	CHECK_EQ(route_verify(f, res, &st, true, &chk, &why), 0);
	CHECK(chk.acyclic && !chk.unreachable && !chk.loops && !chk.disconnected);
	CHECK_EQ(routes_into_isolated(f), 0);
	CHECK(info.rerouted > 0);
	/* Only the routes that crossed it moved: every other entry of every switch is as before */
	for (size_t s = 0; s < f->nswitches; s++) {
		const struct fab_node *nn = f->switches[s], *on = fabric_find(old, nn->guid);

		for (uint32_t lid = 1; on && lid < nn->lft_len && lid < on->lft_len; lid++) {
			bool through = (on == l1 && on->lft[lid] == 3) ||
				       (on == s1 && on->lft[lid] == 1);

			if (on->lft[lid] == nn->lft[lid])
				continue;
			if (through)
				moved++;
			else
				other++;
		}
	}
	CHECK_EQ(moved, crossed);
	CHECK_EQ(other, 0);
out:
	route_result_free(ores);
	route_result_free(res);
	fabric_free(old);
	fabric_free(f);
	ff_free(&ff);
}

int main(void)
{
	RUN(test_perf_totals);
	RUN(test_perf_saturation);
	RUN(test_perf_ext);
	RUN(test_window);
	RUN(test_window_full);
	RUN(test_degraded);
	RUN(test_links_down);
	RUN(test_isolate);
	RUN(test_isolate_repair);
	return unit_report();
}
