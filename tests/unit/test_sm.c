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

int main(void)
{
	RUN(test_outranks);
	RUN(test_names);
	return unit_report();
}
