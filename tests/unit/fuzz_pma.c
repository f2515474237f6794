// SPDX-License-Identifier: MIT
/*
 * A deterministic fuzzer over the PMA answers smd takes in (issue 20,
 * acceptance 5): smd's own performance manager (smd/perf.c, with the
 * health rules of smd/health.c behind it) runs counter sweeps over an
 * in-memory fabric, and every request it sends is answered by a PMA that
 * lies: right answers, answers with bit flips, cut short or made long,
 * of another class version, attribute, modifier, TID or PortSelect, with
 * error statuses, answers given back by the transport, and floods of
 * answers nobody asked for; each MAD in a heap block of exactly its
 * length, so that AddressSanitizer (./configure --enable-sanitizers)
 * catches a read past it. Then the decoders alone on random bytes.
 * Checks: every counter sweep ends, a port's totals never go down, what
 * was dropped is counted, every port answered right is read.
 *
 * Usage: fuzz_pma [iterations [seed]]
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/gmp.h"
#include "mad/pma.h"
#include "smd/health.h"
#include "smd/perf.h"
#include "smd/smd.h"
#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/lid.h"

static uint64_t rng_state;

static uint64_t rnd(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * UINT64_C(0x2545f4914f6cdd1d);
}

static unsigned int reported;
static unsigned long n_sent, n_right, n_mangled, n_flood, n_back, n_sweeps;

#define FUZZ_CHECK(cond, iter) do {						\
	if (cond) {								\
		unit_passed++;							\
	} else {								\
		unit_failed++;							\
		if (reported++ < 20)						\
			fprintf(stderr, "%s:%d: iteration %lu: CHECK failed: %s\n",	\
				__FILE__, __LINE__, (unsigned long)(iter), #cond);	\
	}									\
} while (0)

static const char *net =
	"Switch 8 \"leaf1\"\n[1] \"h1\"[1]\n[2] \"h2\"[1]\n[3] \"spine1\"[1]\n[4] \"spine2\"[1]\n\n"
	"Switch 8 \"leaf2\"\n[1] \"h3\"[1]\n[2] \"h4\"[2]\n[3] \"spine1\"[2]\n[4] \"spine2\"[2]\n\n"
	"Switch 8 \"spine1\"\n[1] \"leaf1\"[3]\n[2] \"leaf2\"[3]\n\n"
	"Switch 8 \"spine2\"\n[1] \"leaf1\"[4]\n[2] \"leaf2\"[4]\n\n"
	"Hca 1 \"h1\"\n[1] \"leaf1\"[1]\n\n"
	"Hca 1 \"h2\"\n[1] \"leaf1\"[2]\n\n"
	"Hca 1 \"h3\"\n[1] \"leaf2\"[1]\n\n"
	"Hca 2 \"h4\"\n[2] \"leaf2\"[2]\n";

/* What smd sent, waiting for the test's answer */
#define SENT_MAX	4096

struct fake {
	uint8_t mad[SENT_MAX][MAD_SIZE];
	size_t n;
};

static struct fake fake;

static int fake_send(void *ctx, const uint8_t mad[MAD_SIZE], uint16_t dlid, uint32_t qpn,
		     int timeout_ms)
{
	(void)ctx, (void)dlid, (void)qpn, (void)timeout_ms;
	if (fake.n < SENT_MAX)
		memcpy(fake.mad[fake.n++], mad, MAD_SIZE);
	n_sent++;
	return 0;
}

static const struct gmp_ops fake_ops = { .send = fake_send };

/* Hand smd one MAD in a block of exactly len bytes */
static void deliver(struct smd *smd, const uint8_t *mad, size_t len, int status)
{
	uint8_t *buf = malloc(len ? len : 1);

	if (!buf)
		abort();
	memcpy(buf, mad, len);
	perf_receive(smd, buf, len, status);
	free(buf);
}

/* The right answer of a PMA to request req, with random counters */
static void answer_of(const uint8_t *req, uint8_t out[MAD_SIZE])
{
	struct pma_mad m;

	if (pma_mad_decode(req, MAD_SIZE, &m) < 0)
		abort();
	m.hdr.method = MAD_METHOD_GET_RESP;
	m.hdr.tid ^= UINT64_C(0x0123456700000000);	/* the MAD layer's bits */
	if (m.hdr.attr_id == PMA_ATTR_CLASS_PORT_INFO) {
		struct pma_class_port_info c = { .base_version = 1, .class_version = 1,
						 .cap_mask = (uint16_t)rnd(),
						 .resp_time_value = 18 };

		pma_cpi_encode(&c, m.data);
	} else if (m.hdr.attr_id == PMA_ATTR_PORT_COUNTERS) {
		struct pma_port_counters pc;
		uint8_t sel = m.data[1];

		pma_pc_decode(m.data, &pc);
		/* Small numbers mostly; now and then near or at saturation */
		pc.symbol_errors = (uint16_t)(rnd() % 8 ? rnd() % 200 : rnd());
		pc.link_downed = (uint8_t)(rnd() % 16 ? rnd() % 4 : rnd());
		pc.rcv_errors = (uint16_t)(rnd() % 8 ? rnd() % 200 : rnd());
		pc.xmit_data = (uint32_t)rnd();
		pc.xmit_wait = (uint32_t)rnd();
		pc.port_select = sel;
		pma_pc_encode(&pc, m.data);
	} else {
		struct pma_port_counters_ext pce = { .port_select = m.data[1] };

		pce.xmit_data = rnd();
		pce.rcv_pkts = rnd();
		pma_pce_encode(&pce, m.data);
	}
	if (pma_mad_encode(&m, out) < 0)
		abort();
}

/* One way of lying, picked at random; sometimes the truth */
static void answer(struct smd *smd, const uint8_t *req)
{
	uint8_t a[MAD_SIZE + 64];
	size_t len = MAD_SIZE;
	unsigned int how = (unsigned int)(rnd() % 16);

	answer_of(req, a);
	memset(a + MAD_SIZE, 0xee, 64);
	switch (how) {
	case 0:		/* bit flips anywhere */
		for (unsigned int k = 1 + (unsigned int)(rnd() % 8); k--;)
			a[rnd() % MAD_SIZE] ^= (uint8_t)(1u << (rnd() % 8));
		break;
	case 1:		/* cut short, or longer than a MAD */
		len = (size_t)(rnd() % (MAD_SIZE + 64));
		break;
	case 2:		/* another class version, base version, class */
		a[rnd() % 3] ^= (uint8_t)(1 + rnd() % 255);
		break;
	case 3:		/* another attribute or modifier */
		a[16 + rnd() % 8] ^= (uint8_t)(1 + rnd() % 255);
		break;
	case 4:		/* another PortSelect */
		a[PMA_DATA_OFF + 1] ^= (uint8_t)(1 + rnd() % 255);
		break;
	case 5:		/* an error status */
		a[4] = (uint8_t)rnd();
		a[5] = (uint8_t)(rnd() | 1);
		break;
	case 6:		/* the transport gives the request back */
		deliver(smd, req, MAD_SIZE, 110);
		n_back++;
		return;
	case 7:		/* a flood of answers to nothing, then the right one */
		for (unsigned int k = 0; k < 20; k++) {
			uint8_t junk[MAD_SIZE];

			memcpy(junk, a, MAD_SIZE);
			junk[12 + rnd() % 4] ^= (uint8_t)(1 + rnd() % 255);
			deliver(smd, junk, MAD_SIZE, (int)(rnd() % 2));
			n_flood++;
		}
		n_right++;
		break;
	case 8:		/* the right one twice */
		deliver(smd, a, MAD_SIZE, 0);
		n_right++;
		break;
	default:
		n_right++;
		break;
	}
	if (how <= 5)
		n_mangled++;
	deliver(smd, a, len, 0);
}

static struct fabric *bring_up(const struct fakefab *ff)
{
	struct fabric *f;
	struct disc_stats ds;
	struct lid_stats ls;

	if (fabric_new(&f) < 0)
		return NULL;
	if (ff_discover(ff, f, &ds) < 0 || lid_assign(f, 0, NULL, NULL, &ls) < 0)
		return fabric_free(f);
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int k = 0; k <= f->nodes[i]->num_ports; k++)
			if (fabric_port_up(&f->nodes[i]->ports[k]))
				f->nodes[i]->ports[k].pi.port_state = PORT_STATE_ACTIVE;
	return f;
}

/* Counter sweeps over a fabric whose PMAs lie */
static void fuzz_sweeps(unsigned long iters)
{
	static struct smd smd;
	static uint64_t before[256][PERF_COUNTERS];
	struct fakefab ff;
	struct perf_stats st;

	memset(&smd, 0, sizeof(smd));
	if (ff_parse(&ff, net) < 0)
		abort();
	smd.fabric = bring_up(&ff);
	if (!smd.fabric)
		abort();
	smd.sa_serving = true;
	smd.sm_state = SM_MASTER;
	smd.cfg.perf_interval = 1;
	smd.cfg.health_window = 600;
	smd.cfg.health_symbol_errors = 100;
	smd.cfg.health_link_downs = 3;
	smd.cfg.health_rcv_errors = 100;
	smd.cfg.health_degraded = true;
	smd.cfg.health_action = CONFIG_HEALTH_ISOLATE;
	if (health_init(&smd) < 0 || perf_init_ops(&smd, &fake_ops, NULL, 1) < 0)
		abort();
	for (unsigned long it = 0; it < iters; it++) {
		unsigned int rounds = 0;

		FUZZ_CHECK(perf_sweep_start(&smd), it);
		/* Every request answered (some lies), until the sweep ends */
		for (;;) {
			size_t n;

			fake.n = 0;
			FUZZ_CHECK(perf_pump(&smd) == 0, it);
			perf_stats_get(&smd, &st);
			if (!st.running)
				break;
			n = fake.n;
			for (size_t i = 0; i < n; i++)
				answer(&smd, fake.mad[i]);
			/* Nothing new went out: the lost ones wait for their deadline (1 ms) */
			if (!n)
				usleep(1000);
			if (++rounds > 100000) {
				FUZZ_CHECK(!"the counter sweep ends", it);
				break;
			}
		}
		n_sweeps++;
		perf_stats_get(&smd, &st);
		FUZZ_CHECK(st.last_read + st.last_unanswered <= st.last_ports, it);
		FUZZ_CHECK(perf_outstanding(&smd) == 0, it);
		/* Totals never go down: reset or cleared, they go on from where they were */
		for (size_t i = 0; i < perf_port_count(&smd) && i < 256; i++) {
			const struct perf_port *pp = perf_port_at(&smd, i);

			for (unsigned int c = 0; c < PERF_COUNTERS; c++) {
				FUZZ_CHECK(pp->st.total[c] >= before[i][c], it);
				before[i][c] = pp->st.total[c];
			}
		}
	}
	perf_stats_get(&smd, &st);
	/* The lies were seen for what they are: counted, dropped */
	CHECK(st.bad_answers > 0);
	CHECK(st.sweeps == iters);
	CHECK(st.clears > 0);
	fprintf(stderr, "fuzz_pma: %lu sweeps, %lu GMPs, %lu answered right, %lu mangled, %lu "
		"given back, %lu unasked; %llu answers dropped, %llu with an error status, %llu "
		"counters cleared, %llu resets\n", n_sweeps, n_sent, n_right, n_mangled, n_back,
		n_flood, (unsigned long long)st.bad_answers, (unsigned long long)st.bad_status,
		(unsigned long long)st.clears, (unsigned long long)st.resets);
	perf_free(&smd);
	health_free(&smd);
	fabric_free(smd.fabric);
	ff_free(&ff);
}

/* The decoders alone: random bytes of random lengths, each in a block of its own size */
static void fuzz_decoders(unsigned long iters)
{
	unsigned long decoded = 0;

	for (unsigned long it = 0; it < iters; it++) {
		size_t len = (size_t)(rnd() % 8 ? MAD_SIZE : rnd() % (2 * MAD_SIZE));
		uint8_t *buf = malloc(len ? len : 1), again[MAD_SIZE];
		struct pma_mad m, m2;

		if (!buf)
			abort();
		for (size_t i = 0; i < len; i++)
			buf[i] = (uint8_t)rnd();
		if (len >= 3 && rnd() % 2) {
			buf[0] = 1;
			buf[1] = MAD_CLASS_PERF;
			buf[2] = 1;
		}
		if (pma_mad_decode(buf, len, &m) == 0) {
			struct pma_port_counters pc, pc2;
			struct pma_port_counters_ext pce;
			struct pma_class_port_info cpi;

			decoded++;
			FUZZ_CHECK(len == MAD_SIZE, it);
			memset(&pc, 0, sizeof(pc));
			memset(&pc2, 0, sizeof(pc2));
			pma_pc_decode(m.data, &pc);
			pma_pce_decode(m.data, &pce);
			pma_cpi_decode(m.data, &cpi);
			/* Decoding is a projection: encode and decode again, the same fields */
			pma_pc_encode(&pc, m2.data);
			pma_pc_decode(m2.data, &pc2);
			FUZZ_CHECK(!memcmp(&pc, &pc2, sizeof(pc)), it);
			FUZZ_CHECK(pma_mad_encode(&m, again) == 0, it);
			/*
			 * The header's fields (not ClassSpecific, bytes 6-7, nor the
			 * reserved 18-19), and the data, as they were
			 */
			FUZZ_CHECK(!memcmp(again, buf, 6) && !memcmp(again + 8, buf + 8, 10) &&
				   !memcmp(again + 20, buf + 20, 4) &&
				   !memcmp(again + PMA_DATA_OFF, buf + PMA_DATA_OFF, PMA_DATA_SIZE), it);
		}
		free(buf);
	}
	CHECK(decoded > 0);
}

int main(int argc, char **argv)
{
	unsigned long iters = argc > 1 ? strtoul(argv[1], NULL, 0) : 300;

	rng_state = argc > 2 ? strtoull(argv[2], NULL, 0) : UINT64_C(0x20c0ffee);
	if (!rng_state)
		rng_state = 1;
	/* The rules' warnings would flood the output: errors only */
	log_set_level(LOG_LVL_ERR);
	fuzz_sweeps(iters);
	fuzz_decoders(iters * 100);
	return unit_report();
}
