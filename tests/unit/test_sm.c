// SPDX-License-Identifier: MIT
/* The SM election rule and state names (smd/sm.h), IBA 14.4.1.1 */
#include <string.h>

#include "smd/sm.h"
#include "tests/unit/unit.h"

static void test_outranks(void)
{
	/* Higher priority wins, whatever the GUIDs */
	CHECK(sm_outranks(5, 0x20, 1, 0x10));
	CHECK(!sm_outranks(1, 0x10, 5, 0x20));
	CHECK(sm_outranks(15, UINT64_MAX, 0, 0));
	/* Equal priorities: the lower port GUID wins */
	CHECK(sm_outranks(3, 0x10, 3, 0x20));
	CHECK(!sm_outranks(3, 0x20, 3, 0x10));
	/* Nobody outranks itself: two SMs never both yield or both win */
	CHECK(!sm_outranks(7, 0x42, 7, 0x42));
	/* Exactly one of two distinct SMs outranks the other */
	for (unsigned int pa = 0; pa < 16; pa += 5)
		for (unsigned int pb = 0; pb < 16; pb += 5)
			for (uint64_t ga = 1; ga < 4; ga++)
				for (uint64_t gb = 1; gb < 4; gb++) {
					bool ab = sm_outranks(pa, ga, pb, gb);
					bool ba = sm_outranks(pb, gb, pa, ga);

					if (pa == pb && ga == gb)
						CHECK(!ab && !ba);
					else
						CHECK(ab != ba);
				}
}

static void test_names(void)
{
	/* The wire values of SMInfo.SMState (IBA 14.2.5.13) */
	CHECK_EQ(SM_NOT_ACTIVE, 0);
	CHECK_EQ(SM_DISCOVERING, 1);
	CHECK_EQ(SM_STANDBY, 2);
	CHECK_EQ(SM_MASTER, 3);
	CHECK(!strcmp(sm_state_name(SM_MASTER), "MASTER"));
	CHECK(!strcmp(sm_state_name(SM_STANDBY), "STANDBY"));
	CHECK(!strcmp(sm_state_name(SM_DISCOVERING), "DISCOVERING"));
	CHECK(!strcmp(sm_state_name(SM_NOT_ACTIVE), "NOT-ACTIVE"));
	CHECK(!strcmp(sm_state_name((enum sm_state)9), "UNKNOWN"));
}

/* IBA 14.4.1, table 181: who may move an SM where with an SMInfo Set */
static void test_set_transition(void)
{
	static const enum sm_state all[] = { SM_NOT_ACTIVE, SM_DISCOVERING, SM_STANDBY, SM_MASTER };

	/* Only a master sends them: from any other state nothing is obeyed */
	for (size_t i = 0; i < 4; i++)
		for (size_t j = 0; j < 3; j++)
			for (uint32_t am = 0; am <= 6; am++)
				CHECK_EQ(sm_set_transition(all[i], all[j], am), -1);
	/* HANDOVER: a standby (or discovering) SM becomes master; never a master again */
	CHECK_EQ(sm_set_transition(SM_STANDBY, SM_MASTER, SM_AM_HANDOVER), SM_MASTER);
	CHECK_EQ(sm_set_transition(SM_DISCOVERING, SM_MASTER, SM_AM_HANDOVER), SM_MASTER);
	CHECK_EQ(sm_set_transition(SM_MASTER, SM_MASTER, SM_AM_HANDOVER), -1);
	CHECK_EQ(sm_set_transition(SM_NOT_ACTIVE, SM_MASTER, SM_AM_HANDOVER), -1);
	/* ACKNOWLEDGE moves nothing */
	CHECK_EQ(sm_set_transition(SM_STANDBY, SM_MASTER, SM_AM_ACKNOWLEDGE), SM_STANDBY);
	CHECK_EQ(sm_set_transition(SM_MASTER, SM_MASTER, SM_AM_ACKNOWLEDGE), SM_MASTER);
	CHECK_EQ(sm_set_transition(SM_NOT_ACTIVE, SM_MASTER, SM_AM_ACKNOWLEDGE), -1);
	/* DISABLE silences a standby or discovering SM, never a master */
	CHECK_EQ(sm_set_transition(SM_STANDBY, SM_MASTER, SM_AM_DISABLE), SM_NOT_ACTIVE);
	CHECK_EQ(sm_set_transition(SM_DISCOVERING, SM_MASTER, SM_AM_DISABLE), SM_NOT_ACTIVE);
	CHECK_EQ(sm_set_transition(SM_MASTER, SM_MASTER, SM_AM_DISABLE), -1);
	CHECK_EQ(sm_set_transition(SM_NOT_ACTIVE, SM_MASTER, SM_AM_DISABLE), -1);
	/* STANDBY and DISCOVER wake a NOT-ACTIVE SM only */
	for (uint32_t am = SM_AM_STANDBY; am <= SM_AM_DISCOVER; am++) {
		CHECK_EQ(sm_set_transition(SM_NOT_ACTIVE, SM_MASTER, am), SM_DISCOVERING);
		CHECK_EQ(sm_set_transition(SM_STANDBY, SM_MASTER, am), -1);
		CHECK_EQ(sm_set_transition(SM_MASTER, SM_MASTER, am), -1);
	}
	/* Unknown modifiers (sminfo -s sends 0) */
	CHECK_EQ(sm_set_transition(SM_STANDBY, SM_MASTER, 0), -1);
	CHECK_EQ(sm_set_transition(SM_STANDBY, SM_MASTER, 6), -1);
	CHECK_EQ(sm_set_transition(SM_STANDBY, SM_MASTER, 0xffffffffu), -1);
}

/* The paper's test vector: key 00..0f, message 00..0e (15 bytes) */
static void test_siphash(void)
{
	uint8_t m[64];

	for (int i = 0; i < 64; i++)
		m[i] = (uint8_t)i;
	CHECK(siphash24(UINT64_C(0x0706050403020100), UINT64_C(0x0f0e0d0c0b0a0908), m, 15) ==
	      UINT64_C(0xa129ca6149be45e5));
	/* Every length works and differs, block boundaries included */
	for (size_t n = 0; n < 63; n++)
		CHECK(siphash24(1, 2, m, n) != siphash24(1, 2, m, n + 1));
}

static void test_auth(void)
{
	const uint64_t k = 0x5ec12e7000c0ffeeULL, a = 0x0002c90300000005ULL;
	const uint64_t b = 0x0002c9030000000dULL;
	uint64_t q = sm_auth(k, false, 7, a, b);

	/* No key: anything goes, and nothing is checked */
	CHECK(sm_auth_ok(0, false, 7, a, b, 0));
	CHECK(sm_auth_ok(0, true, 7, a, b, 0x1234));
	/* The value is not the key, and binds key, direction, ActCount and both ports */
	CHECK(q != k && q != 0);
	CHECK(sm_auth_ok(k, false, 7, a, b, q));
	CHECK(!sm_auth_ok(k, false, 7, a, b, k));
	CHECK(!sm_auth_ok(k, false, 7, a, b, 0));
	CHECK(!sm_auth_ok(k ^ 1, false, 7, a, b, q));
	CHECK(!sm_auth_ok(k, true, 7, a, b, q));
	CHECK(!sm_auth_ok(k, false, 8, a, b, q));
	/* What a rogue b receives from a cannot be used as b's own request to a */
	CHECK(!sm_auth_ok(k, false, 7, b, a, q));
	CHECK(!sm_auth_ok(k, true, 7, b, a, q));
	CHECK(sm_auth(k, true, 7, b, a) != q);
}

int main(void)
{
	RUN(test_outranks);
	RUN(test_names);
	RUN(test_set_transition);
	RUN(test_siphash);
	RUN(test_auth);
	return unit_report();
}
