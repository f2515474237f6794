// SPDX-License-Identifier: MIT
/*
 * Trap policy (smd/trap.h) on an in-memory fabric, with time given by the
 * test: which numbers from which sources start sweeps, the per-source
 * hold-off and its deferred sweep, flood detection and its end, and the
 * issue's acceptance pattern (300 traps of any number from one host in
 * 15 s) counted as the daemon would count heavy sweeps.
 */
#include <errno.h>
#include <string.h>

#include "smd/trap.h"
#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/lid.h"

#define S	1000000ull

static const char *net =
	"Hca 1 \"sm\"\n[1] \"s1\"[1]\n"
	"Switch 8 \"s1\"\n[1] \"sm\"[1]\n[2] \"s2\"[1]\n[3] \"h1\"[1]\n"
	"Switch 8 \"s2\"\n[1] \"s1\"[2]\n[2] \"h2\"[1]\n"
	"Hca 1 \"h1\"\n[1] \"s1\"[3]\n"
	"Hca 1 \"h2\"\n[1] \"s2\"[2]\n";

static struct fakefab ff;
static struct fabric *f;

static uint16_t lid_of(const char *name)
{
	struct fab_node *n = fabric_find(f, ff.nodes[ff_find(&ff, name)].guid);

	return n->type == NODE_TYPE_SWITCH ? n->ports[0].lid : n->ports[1].lid;
}

static enum trap_verdict judge(struct trap_table *t, uint16_t lid, uint16_t num, uint64_t now)
{
	const struct fab_port *src;
	enum trap_verdict v = trap_judge(t, f, lid, true, num, now, &src);

	if (v != TRAP_UNKNOWN)
		CHECK(src != NULL && src->lid == lid);
	return v;
}

static void test_kind(void)
{
	CHECK_EQ(trap_kind(true, 128, true), TRAP_CHANGE);
	/* Only switches have links to report */
	CHECK_EQ(trap_kind(true, 128, false), TRAP_OTHER);
	CHECK_EQ(trap_kind(true, 144, false), TRAP_CHANGE);
	CHECK_EQ(trap_kind(true, 145, true), TRAP_CHANGE);
	for (uint16_t n = 129; n <= 131; n++)
		CHECK_EQ(trap_kind(true, n, true), TRAP_ERROR);
	for (uint16_t n = 256; n <= 259; n++)
		CHECK_EQ(trap_kind(true, n, false), TRAP_SECURITY);
	CHECK_EQ(trap_kind(false, 128, true), TRAP_OTHER);	/* a vendor trap */
	/* The SA's notices, not an SMA's */
	CHECK_EQ(trap_kind(true, 64, false), TRAP_OTHER);
	CHECK_EQ(trap_kind(true, 0, false), TRAP_OTHER);
	CHECK_EQ(trap_kind(true, 65535, true), TRAP_OTHER);
}

static void test_sources(void)
{
	struct trap_table *t;
	const struct fab_port *src;
	uint16_t s1 = lid_of("s1"), h1 = lid_of("h1");

	CHECK_EQ(trap_table_new(&t), 0);
	/* No model yet, or a LID it does not hold: nothing */
	CHECK_EQ(trap_judge(t, NULL, s1, true, 128, 1 * S, &src), TRAP_UNKNOWN);
	CHECK_EQ(judge(t, (uint16_t)(f->max_lid + 1), 128, 1 * S), TRAP_UNKNOWN);
	CHECK_EQ(judge(t, 0, 128, 1 * S), TRAP_UNKNOWN);
	/* Numbers by source */
	CHECK_EQ(judge(t, h1, 128, 2 * S), TRAP_IGNORE);
	CHECK_EQ(judge(t, h1, 129, 2 * S), TRAP_REPORT);
	CHECK_EQ(judge(t, h1, 256, 2 * S), TRAP_REPORT);
	CHECK_EQ(judge(t, h1, 1000, 2 * S), TRAP_IGNORE);
	CHECK_EQ(judge(t, h1, 144, 2 * S), TRAP_SWEEP);
	CHECK_EQ(judge(t, s1, 128, 2 * S), TRAP_SWEEP);
	CHECK_EQ(trap_judge(t, f, s1, false, 128, 2 * S, &src), TRAP_IGNORE);
	/* Inside the hold-off a change waits; one deferred sweep, due when it ends */
	CHECK_EQ(judge(t, s1, 128, 5 * S), TRAP_DEFER);
	CHECK_EQ(judge(t, s1, 128, 6 * S), TRAP_DEFER);
	CHECK_EQ(judge(t, h1, 145, 7 * S), TRAP_DEFER);
	CHECK_EQ(trap_due(t), (2 + TRAP_HOLDOFF_S) * S);
	trap_sweep_started(t);
	CHECK_EQ(trap_due(t), 0);
	/* After the hold-off: at once again */
	CHECK_EQ(judge(t, s1, 128, (2 + TRAP_HOLDOFF_S) * S), TRAP_SWEEP);
	CHECK_EQ(trap_stats(t)->total, 14);
	CHECK_EQ(trap_stats(t)->swept, 3);
	CHECK_EQ(trap_stats(t)->deferred, 3);
	CHECK_EQ(trap_stats(t)->unknown, 3);
	trap_table_free(t);
}

static void test_flood(void)
{
	struct trap_table *t;
	uint16_t h2 = lid_of("h2"), s2 = lid_of("s2"), lids[4];
	uint64_t now = 100 * S;
	unsigned int n;

	CHECK_EQ(trap_table_new(&t), 0);
	CHECK_EQ(judge(t, h2, 144, now), TRAP_SWEEP);
	CHECK_EQ(judge(t, h2, 144, now + 1), TRAP_DEFER);
	CHECK(trap_due(t) != 0);
	for (unsigned int i = 2; i < TRAP_FLOOD_COUNT; i++)
		CHECK(judge(t, h2, 1, now + i) == TRAP_IGNORE);
	/* One more in the window: a flood; its deferred change is dropped */
	CHECK_EQ(judge(t, h2, 144, now + 100), TRAP_FLOOD_START);
	CHECK_EQ(trap_due(t), 0);
	CHECK_EQ(judge(t, h2, 144, now + 200), TRAP_FLOODING);
	CHECK_EQ(judge(t, h2, 128, now + 20 * S), TRAP_FLOODING);
	/* Another source is not affected */
	CHECK_EQ(judge(t, s2, 128, now + 20 * S), TRAP_SWEEP);
	n = trap_flooders(t, now + 21 * S, lids, 4);
	CHECK_EQ(n, 1);
	CHECK_EQ(lids[0], h2);
	/* Quiet for TRAP_QUIET_S: no longer a flooder, and heard again */
	now += (20 + TRAP_QUIET_S) * S;
	CHECK_EQ(trap_flooders(t, now, lids, 4), 0);
	CHECK_EQ(judge(t, h2, 144, now), TRAP_SWEEP);
	CHECK_EQ(trap_stats(t)->flood_starts, 1);
	trap_table_free(t);
}

/*
 * The acceptance pattern: 300 traps, numbers cycling through everything an
 * attacker might send, from one host, evenly over 15 s, on an unchanged
 * fabric. Heavy sweeps: one per SWEEP verdict (the loop coalesces those
 * within 100 ms) plus one when deferred changes fall due.
 */
static void test_acceptance(void)
{
	static const uint16_t nums[] = { 128, 129, 130, 131, 144, 145, 256, 257, 258, 259, 64, 65,
					 1, 2, 1000, 65535 };
	struct trap_table *t;
	uint16_t h1 = lid_of("h1");
	unsigned int sweeps = 0;
	uint64_t last_sweep = 0;

	CHECK_EQ(trap_table_new(&t), 0);
	for (unsigned int i = 0; i < 300; i++) {
		uint64_t now = 1000 * S + (uint64_t)i * 50000;
		enum trap_verdict v = judge(t, h1, nums[i % 16], now);

		if (trap_due(t) && now >= trap_due(t)) {
			trap_sweep_started(t);
			sweeps++;
			last_sweep = now;
		}
		if (v == TRAP_SWEEP && (!last_sweep || now - last_sweep > 100000)) {
			trap_sweep_started(t);
			sweeps++;
			last_sweep = now;
		}
	}
	if (trap_due(t)) {
		trap_sweep_started(t);
		sweeps++;
	}
	fprintf(stderr, "  300 traps in 15 s from one host: %u heavy sweeps, %u flood reports\n",
		sweeps, trap_stats(t)->flood_starts);
	CHECK(sweeps >= 1 && sweeps <= 2);
	CHECK_EQ(trap_stats(t)->flood_starts, 1);
	trap_table_free(t);
}

int main(void)
{
	struct disc_stats ds;
	struct lid_stats ls;

	if (ff_parse(&ff, net) < 0 || fabric_new(&f) < 0 || ff_discover(&ff, f, &ds) < 0 ||
	    lid_assign(f, 0, NULL, NULL, &ls) < 0)
		return 1;
	RUN(test_kind);
	RUN(test_sources);
	RUN(test_flood);
	RUN(test_acceptance);
	fabric_free(f);
	ff_free(&ff);
	return unit_report();
}
