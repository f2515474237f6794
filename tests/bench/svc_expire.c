// SPDX-License-Identifier: MIT
/*
 * svc_expire N [K]: time the SA's ServiceRecord lease expiry. N services
 * are restored (K of them, spread evenly, with a 10 s lease, the rest with
 * 20 s), the clock jumps 10 s and one sa_tick() expires the K. Prints the
 * seconds taken by the restores and by the tick; checks exactly the K went.
 * Built by tests/bench/svc_bench.sh (which may raise SVC_MAX), not by make.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/sa_codec.h"
#include "sa/sa.h"

static uint64_t fake_us = 1000000;
static size_t gone;

static uint64_t fake_now(void *ctx)
{
	(void)ctx;
	return fake_us;
}

static void changed(void *ctx, const uint8_t rec[176], uint32_t lease, bool present)
{
	(void)ctx;
	(void)rec;
	(void)lease;
	gone += !present;
}

static double secs(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	struct sa_env env = { .subnet_prefix = UINT64_C(0xfe80000000000000), .now = fake_now,
			      .service_changed = changed };
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 50000;
	size_t k = argc > 2 ? strtoul(argv[2], NULL, 0) : n;
	struct sa *sa;
	double t0, t1, t2;

	if (!n || k > n || sa_new(&env, &sa) < 0)
		return 2;
	t0 = secs();
	for (size_t i = 0; i < n; i++) {
		struct service_record r = { .id = i + 1, .pkey = 0xffff };
		uint8_t rec[SR_SIZE];

		gid_encode(env.subnet_prefix, 0x0002c9fe00000000ull + i % 64, r.gid);
		service_record_encode(&r, rec);
		if (sa_service_restore(sa, rec, i * k / n != (i + 1) * k / n ? 10 : 20) < 0) {
			fprintf(stderr, "restore %zu refused (SVC_MAX?)\n", i);
			return 1;
		}
	}
	t1 = secs();
	fake_us += 10000000;
	sa_tick(sa);
	t2 = secs();
	printf("n %zu expired %zu: restore %.3f s, expiry tick %.3f ms\n", n, gone, t1 - t0,
	       (t2 - t1) * 1e3);
	if (gone != k || sa_service_count(sa) != n - k) {
		fprintf(stderr, "expected %zu gone, %zu left; got %zu, %zu\n", k, n - k, gone,
			sa_service_count(sa));
		return 1;
	}
	sa_free(sa);
	return 0;
}
