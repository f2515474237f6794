// SPDX-License-Identifier: MIT
/*
 * mad/gmp.c (the performance manager's GMP transactions) over a fake
 * transport that records what is sent; the test plays the PMAs: the
 * window, answers matched by TID and header, what is refused (wrong
 * size, class version, attribute, a flood of answers nobody asked for),
 * retries after silence and after the transport gave a request back,
 * callbacks that submit, cancellation. Timeouts are waited for, never
 * timed.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/gmp.h"
#include "mad/pma.h"
#include "tests/unit/unit.h"

#define SENT_MAX	4096

struct fake {
	uint8_t sent[SENT_MAX][MAD_SIZE];
	uint16_t dlid[SENT_MAX];
	uint32_t qpn[SENT_MAX];
	size_t nsent;
	struct gmp_txn *t;
	unsigned int max_outstanding;
	int send_err;
};

static int fake_send(void *ctx, const uint8_t mad[MAD_SIZE], uint16_t dlid, uint32_t qpn,
		     int timeout_ms)
{
	struct fake *f = ctx;

	(void)timeout_ms;
	if (f->nsent == SENT_MAX)
		abort();
	memcpy(f->sent[f->nsent], mad, MAD_SIZE);
	f->dlid[f->nsent] = dlid;
	f->qpn[f->nsent] = qpn;
	f->nsent++;
	if (f->t && gmp_outstanding(f->t) > f->max_outstanding)
		f->max_outstanding = gmp_outstanding(f->t);
	return f->send_err;
}

static const struct gmp_ops fake_ops = { .send = fake_send };

struct done {
	int calls, status, ok, bad;
	uint16_t select;	/* PortSelect of the last answer */
	uint32_t req_mod;
};

static void on_done(void *arg, int status, const uint8_t *req, const uint8_t *resp)
{
	struct done *d = arg;

	d->calls++;
	d->status = status;
	d->req_mod = (uint32_t)wire_bits_get(req, 160, 32);
	if (status == 0)
		d->ok++;
	if ((status == 0 || status == -EREMOTEIO) != (resp != NULL))
		d->bad++;
	if (resp)
		d->select = resp[PMA_DATA_OFF + 1];
}

static void request(uint8_t out[MAD_SIZE], uint16_t attr, uint8_t port)
{
	struct pma_mad m;

	pma_mad_init(&m, MAD_METHOD_GET, attr, 0);
	m.data[1] = port;
	if (pma_mad_encode(&m, out) < 0)
		abort();
}

/* The answer of a PMA to sent MAD i; the high TID bits are the MAD layer's */
static void answer(const struct fake *f, size_t i, uint8_t out[MAD_SIZE], uint16_t status)
{
	memcpy(out, f->sent[i], MAD_SIZE);
	out[3] = MAD_METHOD_GET_RESP;
	out[4] = (uint8_t)(status >> 8);
	out[5] = (uint8_t)status;
	out[8] ^= 0x5a;
}

static struct gmp_txn *new_gmp(struct fake *f, unsigned int window, unsigned int timeout_ms,
			       unsigned int retries)
{
	struct gmp_cfg cfg = { .window = window, .timeout_ms = timeout_ms, .retries = retries };
	struct gmp_txn *t = NULL;

	memset(f, 0, sizeof(*f));
	if (gmp_new(&fake_ops, f, &cfg, &t) < 0)
		abort();
	f->t = t;
	return t;
}

static void test_new_rejects(void)
{
	struct gmp_cfg cfg = { .window = 0, .timeout_ms = 100, .retries = 1 };
	struct gmp_txn *t = NULL;
	struct fake f;

	CHECK_EQ(gmp_new(&fake_ops, &f, &cfg, &t), -EINVAL);
	cfg.window = GMP_WINDOW_MAX + 1;
	CHECK_EQ(gmp_new(&fake_ops, &f, &cfg, &t), -EINVAL);
	cfg.window = 4;
	cfg.timeout_ms = 0;
	CHECK_EQ(gmp_new(&fake_ops, &f, &cfg, &t), -EINVAL);
	CHECK(t == NULL);
}

/* Never more than the window in flight; every answer completes its own request */
static void test_window_and_answers(void)
{
	static struct done d[200];
	uint8_t req[MAD_SIZE], a[MAD_SIZE];
	size_t answered = 0;
	struct fake *f = calloc(1, sizeof(*f));
	struct gmp_txn *t = new_gmp(f, 8, 60000, 1);

	memset(d, 0, sizeof(d));
	for (int i = 0; i < 200; i++) {
		request(req, PMA_ATTR_PORT_COUNTERS, (uint8_t)i);
		CHECK_EQ(gmp_submit(t, req, (uint16_t)(i + 1), 1, on_done, &d[i]), 0);
	}
	CHECK_EQ(gmp_queued(t), 200);
	CHECK_EQ(f->nsent, 0);		/* nothing from gmp_submit itself */
	CHECK_EQ(gmp_dispatch(t), 0);
	CHECK_EQ(f->nsent, 8);
	CHECK_EQ(gmp_outstanding(t), 8);
	CHECK_EQ(f->qpn[0], 1);
	CHECK_EQ(f->dlid[3], 4);
	/* Answered out of order, dispatched in between */
	while (answered < f->nsent) {
		size_t n = f->nsent;

		for (size_t i = n; i-- > answered;) {
			answer(f, i, a, 0);
			gmp_receive(t, a, MAD_SIZE, 0);
		}
		answered = n;
		CHECK_EQ(gmp_dispatch(t), 0);
	}
	CHECK_EQ(f->nsent, 200);
	CHECK(f->max_outstanding <= 8);
	for (int i = 0; i < 200; i++) {
		CHECK_EQ(d[i].calls, 1);
		CHECK_EQ(d[i].ok, 1);
		CHECK_EQ(d[i].select, (uint8_t)i);
		CHECK_EQ(d[i].bad, 0);
	}
	CHECK(gmp_idle(t));
	CHECK_EQ(gmp_next_timeout_ms(t), -1);
	CHECK_EQ(gmp_stats(t)->answered, 200);
	CHECK_EQ(gmp_stats(t)->sent, 200);
	gmp_free(t);
	free(f);
}

/* Bad answers are counted and dropped; the request waits on for a good one */
static void test_refused(void)
{
	struct done d = { 0 };
	uint8_t req[MAD_SIZE], a[MAD_SIZE];
	struct fake *f = calloc(1, sizeof(*f));
	struct gmp_txn *t = new_gmp(f, 4, 60000, 0);
	const struct gmp_stats *st = gmp_stats(t);

	request(req, PMA_ATTR_PORT_COUNTERS_EXT, 3);
	gmp_submit(t, req, 5, 1, on_done, &d);
	gmp_dispatch(t);
	/* Short, long: no GMP */
	answer(f, 0, a, 0);
	gmp_receive(t, a, MAD_SIZE - 1, 0);
	gmp_receive(t, a, 12, 0);
	CHECK_EQ(st->malformed, 2);
	/* Another class version, another attribute, another modifier, not a response */
	answer(f, 0, a, 0);
	a[2] = 2;
	gmp_receive(t, a, MAD_SIZE, 0);
	answer(f, 0, a, 0);
	a[17] ^= 1;
	gmp_receive(t, a, MAD_SIZE, 0);
	answer(f, 0, a, 0);
	a[23] ^= 1;
	gmp_receive(t, a, MAD_SIZE, 0);
	answer(f, 0, a, 0);
	a[3] = MAD_METHOD_GET;
	gmp_receive(t, a, MAD_SIZE, 0);
	CHECK_EQ(st->unmatched, 3);
	CHECK_EQ(st->malformed, 3);
	CHECK_EQ(d.calls, 0);
	/* A flood of answers nobody asked for: other TIDs */
	for (int i = 0; i < 10000; i++) {
		answer(f, 0, a, 0);
		a[12] = (uint8_t)(i >> 8);
		a[13] = (uint8_t)i;
		a[14] ^= 0x80;
		gmp_receive(t, a, MAD_SIZE, 0);
	}
	CHECK_EQ(st->unmatched, 10003);
	CHECK_EQ(d.calls, 0);
	/* Then the right one */
	answer(f, 0, a, 0);
	gmp_receive(t, a, MAD_SIZE, 0);
	CHECK_EQ(d.calls, 1);
	CHECK_EQ(d.ok, 1);
	/* Its duplicate is late: unmatched */
	gmp_receive(t, a, MAD_SIZE, 0);
	CHECK_EQ(st->unmatched, 10004);
	CHECK_EQ(d.calls, 1);
	/* A non-zero MAD status: the request completes with -EREMOTEIO and the answer */
	request(req, PMA_ATTR_PORT_COUNTERS, 9);
	gmp_submit(t, req, 5, 1, on_done, &d);
	gmp_dispatch(t);
	answer(f, 1, a, 0x000c);
	gmp_receive(t, a, MAD_SIZE, 0);
	CHECK_EQ(d.calls, 2);
	CHECK_EQ(d.status, -EREMOTEIO);
	CHECK_EQ(d.bad, 0);
	CHECK_EQ(st->bad_status, 1);
	/* An answer submitted as a request is never sent */
	a[3] = MAD_METHOD_GET_RESP;
	gmp_submit(t, a, 5, 1, on_done, &d);
	gmp_dispatch(t);
	CHECK_EQ(d.calls, 3);
	CHECK_EQ(d.status, -EINVAL);
	CHECK_EQ(f->nsent, 2);
	gmp_free(t);
	free(f);
}

/* Silence: a retry with a new TID, then -ETIMEDOUT; a late answer to the first try is refused */
static void test_timeouts(void)
{
	struct done d = { 0 };
	uint8_t req[MAD_SIZE], a[MAD_SIZE];
	struct fake *f = calloc(1, sizeof(*f));
	struct gmp_txn *t = new_gmp(f, 4, 1, 1);

	request(req, PMA_ATTR_PORT_COUNTERS, 1);
	gmp_submit(t, req, 7, 1, on_done, &d);
	gmp_dispatch(t);
	CHECK_EQ(f->nsent, 1);
	for (int i = 0; i < 10000 && f->nsent < 2; i++) {
		usleep(200);
		gmp_dispatch(t);
	}
	CHECK_EQ(f->nsent, 2);
	CHECK(memcmp(f->sent[0] + 8, f->sent[1] + 8, 8) != 0);	/* a TID of its own */
	answer(f, 0, a, 0);
	gmp_receive(t, a, MAD_SIZE, 0);
	CHECK_EQ(d.calls, 0);
	CHECK_EQ(gmp_stats(t)->unmatched, 1);
	for (int i = 0; i < 10000 && !d.calls; i++) {
		usleep(200);
		gmp_dispatch(t);
	}
	CHECK_EQ(d.calls, 1);
	CHECK_EQ(d.status, -ETIMEDOUT);
	CHECK_EQ(gmp_stats(t)->failed, 1);
	CHECK_EQ(gmp_stats(t)->timeouts, 2);
	CHECK(gmp_idle(t));
	gmp_free(t);
	free(f);
}

/* The transport gives a request back (ibsim: an undeliverable MAD, status 110) */
static void test_given_back(void)
{
	struct done d = { 0 };
	uint8_t req[MAD_SIZE], back[MAD_SIZE], a[MAD_SIZE];
	struct fake *f = calloc(1, sizeof(*f));
	struct gmp_txn *t = new_gmp(f, 4, 60000, 2);

	request(req, PMA_ATTR_PORT_COUNTERS, 2);
	gmp_submit(t, req, 9, 1, on_done, &d);
	gmp_dispatch(t);
	memcpy(back, f->sent[0], MAD_SIZE);
	back[9] ^= 0x11;		/* the MAD layer's own TID bits */
	gmp_receive(t, back, MAD_SIZE, 110);
	CHECK_EQ(f->nsent, 1);		/* not from inside the receive path */
	CHECK_EQ(gmp_next_timeout_ms(t), 0);
	gmp_dispatch(t);
	CHECK_EQ(f->nsent, 2);
	/* The first try's return again: no longer outstanding */
	gmp_receive(t, back, MAD_SIZE, 110);
	CHECK_EQ(gmp_stats(t)->unmatched, 1);
	answer(f, 1, a, 0);
	gmp_receive(t, a, MAD_SIZE, 0);
	CHECK_EQ(d.ok, 1);
	/* Given back every time: failed after 1 + retries tries */
	request(req, PMA_ATTR_PORT_COUNTERS, 3);
	gmp_submit(t, req, 9, 1, on_done, &d);
	for (int i = 0; i < 10 && d.calls < 2; i++) {
		gmp_dispatch(t);
		memcpy(back, f->sent[f->nsent - 1], MAD_SIZE);
		gmp_receive(t, back, MAD_SIZE, 110);
	}
	CHECK_EQ(d.calls, 2);
	CHECK_EQ(d.status, -ETIMEDOUT);
	CHECK_EQ(f->nsent, 5);
	gmp_free(t);
	free(f);
}

/* Callbacks that submit; cancel fails everything once */
struct chain {
	struct gmp_txn *t;
	int done, submitted, limit;
};

static void on_chain(void *arg, int status, const uint8_t *req, const uint8_t *resp)
{
	struct chain *c = arg;
	uint8_t r[MAD_SIZE];

	(void)status, (void)req, (void)resp;
	c->done++;
	if (c->submitted < c->limit) {
		request(r, PMA_ATTR_PORT_COUNTERS, 1);
		if (gmp_submit(c->t, r, 1, 1, on_chain, c) == 0)
			c->submitted++;
	}
}

static void test_chain_and_cancel(void)
{
	struct chain c = { .limit = 50 };
	uint8_t req[MAD_SIZE], a[MAD_SIZE];
	struct fake *f = calloc(1, sizeof(*f));
	struct gmp_txn *t = new_gmp(f, 2, 60000, 0);
	size_t answered = 0;

	c.t = t;
	request(req, PMA_ATTR_PORT_COUNTERS, 1);
	gmp_submit(t, req, 1, 1, on_chain, &c);
	c.submitted = 1;
	gmp_dispatch(t);
	while (answered < f->nsent) {
		answer(f, answered++, a, 0);
		gmp_receive(t, a, MAD_SIZE, 0);
		gmp_dispatch(t);
	}
	/* Each completion submitted the next, up to the limit: all of them done */
	CHECK_EQ(c.done, 50);
	CHECK_EQ(c.submitted, 50);
	CHECK_EQ(f->nsent, 50);
	CHECK(gmp_idle(t));
	/* Cancel: queued and in flight, each callback once, even those that submit */
	c.done = 0;
	c.submitted = 0;
	c.limit = 1000;
	for (int i = 0; i < 5; i++) {
		request(req, PMA_ATTR_PORT_COUNTERS, 1);
		gmp_submit(t, req, 1, 1, on_chain, &c);
	}
	gmp_dispatch(t);
	CHECK_EQ(gmp_cancel_all(t), 0);
	CHECK(gmp_idle(t));
	CHECK(c.done >= 5);
	CHECK(gmp_stats(t)->cancelled >= 5);
	gmp_free(t);
	free(f);
}

/* A send that says the port is gone ends the dispatching */
static void test_fatal_send(void)
{
	struct done d = { 0 };
	uint8_t req[MAD_SIZE];
	struct fake *f = calloc(1, sizeof(*f));
	struct gmp_txn *t = new_gmp(f, 4, 60000, 0);

	f->send_err = -EIO;
	request(req, PMA_ATTR_PORT_COUNTERS, 1);
	gmp_submit(t, req, 1, 1, on_done, &d);
	CHECK_EQ(gmp_dispatch(t), -EIO);
	CHECK_EQ(gmp_dispatch(t), -EIO);
	f->send_err = -EAGAIN;	/* not fatal: the deadline brings the retry */
	gmp_cancel_all(t);
	gmp_free(t);
	free(f);
}

int main(void)
{
	RUN(test_new_rejects);
	RUN(test_window_and_answers);
	RUN(test_refused);
	RUN(test_timeouts);
	RUN(test_given_back);
	RUN(test_chain_and_cancel);
	RUN(test_fatal_send);
	return unit_report();
}
