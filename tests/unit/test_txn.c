// SPDX-License-Identifier: MIT
/*
 * mad/txn.c over a fake transport that records what is sent and lets the
 * test inject what is received: the window, TID matching, what is refused,
 * timeouts and retries, loss reports, bad MAD status, unsolicited MADs and
 * callbacks that submit more work. Nothing here asserts on elapsed time.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include "mad/txn.h"
#include "tests/unit/unit.h"

/* ---- the fake transport ---- */

#define FAKE_MAX_SENT	16384
#define FAKE_MAX_RX	256

struct sent_mad {
	uint8_t mad[MAD_SIZE];
	bool dr;
	uint16_t dlid;
	bool answered;		/* by the test */
};

struct rx_mad {
	uint8_t mad[MAD_SIZE];
	size_t len;
	int send_status;
	struct mad_addr from;
	bool held;		/* FAKE_SWITCH: holds a place in the switch until read */
};

enum fake_mode {
	FAKE_SILENT,		/* record only; the test answers */
	FAKE_ANSWER,		/* answer every request at once */
	FAKE_SLOW,		/* as SILENT, each send then stalls for slow_ms */
	FAKE_SWITCH,		/* a switch that holds `hold` SMPs: answers, drops the rest */
};

struct fake {
	int efd;
	enum fake_mode mode;
	struct sent_mad *sent;
	size_t nsent;
	struct rx_mad rx[FAKE_MAX_RX];
	size_t rx_head, rx_len;
	struct txn *t;		/* to look at the window from inside send() */
	unsigned int window;
	unsigned int max_outstanding;	/* seen at any send */
	int recv_calls;
	unsigned int slow_ms;
	unsigned int hold, held, max_held;	/* FAKE_SWITCH */
	size_t dropped;
	unsigned int min_window, max_window;	/* the adaptive window seen at sends */
	int send_err;		/* every send returns it (0: they succeed) */
	int recv_err;		/* every receive returns it (0: as queued) */
};

static void fake_init(struct fake *f, enum fake_mode mode)
{
	memset(f, 0, sizeof(*f));
	f->efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (f->efd < 0)
		abort();
	f->sent = calloc(FAKE_MAX_SENT, sizeof(*f->sent));
	if (!f->sent)
		abort();
	f->mode = mode;
}

static void fake_fini(struct fake *f)
{
	close(f->efd);
	free(f->sent);
}

static void fake_push(struct fake *f, const uint8_t *mad, size_t len, int send_status)
{
	struct rx_mad *m;
	uint64_t one = 1;

	if (f->rx_len == FAKE_MAX_RX)
		abort();
	m = &f->rx[(f->rx_head + f->rx_len++) % FAKE_MAX_RX];
	memset(m, 0, sizeof(*m));
	memcpy(m->mad, mad, len < MAD_SIZE ? len : MAD_SIZE);
	m->len = len;
	m->send_status = send_status;
	m->from.slid = 0x42;
	m->from.qpn = 0;
	if (write(f->efd, &one, sizeof(one)) != sizeof(one))
		abort();
}

/* The answer a well-behaved node would give; the high TID bits are rewritten */
static void make_answer(const uint8_t *req_mad, uint8_t *out, uint16_t status)
{
	struct smp s;

	if (smp_decode(req_mad, MAD_SIZE, &s) < 0)
		abort();
	s.hdr.method = MAD_METHOD_GET_RESP;
	s.hdr.status = status;
	s.hdr.tid ^= UINT64_C(0xa5a5a5a500000000);
	if (s.hdr.mgmt_class == MAD_CLASS_SMI_DR) {
		s.hdr.direction = true;
		s.hdr.hop_ptr = s.hdr.hop_cnt;
	}
	/* Some content, so the callback can tell answers apart */
	memcpy(s.data, &s.hdr.attr_mod, sizeof(s.hdr.attr_mod));
	if (smp_encode(&s, out) < 0)
		abort();
}

static void fake_answer(struct fake *f, size_t idx, uint16_t status)
{
	uint8_t out[MAD_SIZE];

	make_answer(f->sent[idx].mad, out, status);
	f->sent[idx].answered = true;
	fake_push(f, out, MAD_SIZE, 0);
}

static int fake_send(void *ctx, const uint8_t mad[MAD_SIZE], bool dr, uint16_t dlid,
		     int timeout_ms)
{
	struct fake *f = ctx;
	struct sent_mad *s;

	if (f->nsent == FAKE_MAX_SENT)
		abort();
	s = &f->sent[f->nsent++];
	memcpy(s->mad, mad, MAD_SIZE);
	s->dr = dr;
	s->dlid = dlid;
	s->answered = false;
	if (f->send_err)
		return f->send_err;
	if (f->t) {
		unsigned int o = txn_outstanding(f->t);
		struct txn_window w;

		if (o > f->max_outstanding)
			f->max_outstanding = o;
		txn_window_get(f->t, &w);
		if (!f->min_window || w.size < f->min_window)
			f->min_window = w.size;
		if (w.size > f->max_window)
			f->max_window = w.size;
	}
	if (f->mode == FAKE_ANSWER)
		fake_answer(f, f->nsent - 1, 0);
	if (f->mode == FAKE_SWITCH) {
		/* VL15 has no flow control: what does not fit vanishes */
		if (f->held >= f->hold) {
			f->dropped++;
			s->answered = true;
			return 0;
		}
		f->held++;
		if (f->held > f->max_held)
			f->max_held = f->held;
		fake_answer(f, f->nsent - 1, 0);
		f->rx[(f->rx_head + f->rx_len - 1) % FAKE_MAX_RX].held = true;
	}
	if (f->mode == FAKE_SLOW)
		usleep(f->slow_ms * 1000u);
	return 0;
}

static int fake_recv(void *ctx, uint8_t mad[MAD_SIZE], size_t *len, struct mad_addr *from,
		     int *send_status)
{
	struct fake *f = ctx;
	struct rx_mad *m;
	uint64_t v;

	f->recv_calls++;
	if (f->recv_err)
		return f->recv_err;
	if (!f->rx_len) {
		/* Drained: the fd stops being readable */
		if (read(f->efd, &v, sizeof(v)) < 0 && errno != EAGAIN)
			abort();
		return -EAGAIN;
	}
	m = &f->rx[f->rx_head];
	f->rx_head = (f->rx_head + 1) % FAKE_MAX_RX;
	f->rx_len--;
	if (m->held)
		f->held--;
	memcpy(mad, m->mad, MAD_SIZE);
	*len = m->len;
	*from = m->from;
	*send_status = m->send_status;
	return 0;
}

static int fake_fd(void *ctx)
{
	return ((struct fake *)ctx)->efd;
}

static const struct txn_ops fake_ops = {
	.send = fake_send,
	.recv = fake_recv,
	.fd = fake_fd,
};

static uint32_t sent_tid(const struct fake *f, size_t idx)
{
	return (uint32_t)wire_bits_get(f->sent[idx].mad, 64, 64);
}

static uint16_t sent_attr_id(const struct fake *f, size_t idx)
{
	return (uint16_t)wire_bits_get(f->sent[idx].mad, 128, 16);
}

static uint32_t sent_attr_mod(const struct fake *f, size_t idx)
{
	return (uint32_t)wire_bits_get(f->sent[idx].mad, 160, 32);
}

/* ---- completions ---- */

#define MAX_REQ 2048

struct result {
	int calls;
	int status;
	bool had_resp;
	uint16_t resp_status;
	uint32_t resp_attr_mod;
	uint32_t req_attr_mod;
	uint32_t req_tid, resp_tid;
	uint32_t data;
};

struct results {
	struct result r[MAX_REQ];
	int completed;
	int mismatched;		/* resp did not belong to req */
};

struct req_arg {
	struct results *res;
	unsigned int id;
};

static struct req_arg args[MAX_REQ];

static void on_done(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct req_arg *a = arg;
	struct result *r = &a->res->r[a->id];

	r->calls++;
	r->status = status;
	r->had_resp = resp != NULL;
	r->req_attr_mod = req->hdr.attr_mod;
	r->req_tid = (uint32_t)req->hdr.tid;
	if (resp) {
		r->resp_status = resp->hdr.status;
		r->resp_attr_mod = resp->hdr.attr_mod;
		r->resp_tid = (uint32_t)resp->hdr.tid;
		memcpy(&r->data, resp->data, sizeof(r->data));
		if (resp->hdr.attr_mod != req->hdr.attr_mod ||
		    (uint32_t)resp->hdr.tid != (uint32_t)req->hdr.tid ||
		    resp->hdr.attr_id != req->hdr.attr_id)
			a->res->mismatched++;
	}
	a->res->completed++;
}

static void dr_req(struct smp *s, uint16_t attr, uint32_t mod, uint8_t hops)
{
	struct dr_path p = { 0 };

	p.hops = hops;
	for (unsigned int i = 1; i <= hops; i++)
		p.port[i] = (uint8_t)i;
	if (smp_init_dr(s, MAD_METHOD_GET, attr, mod, &p) < 0)
		abort();
}

static int submit(struct txn *t, struct results *res, unsigned int id, uint16_t attr)
{
	struct smp s;

	dr_req(&s, attr, id, (uint8_t)(id % 5));
	args[id].res = res;
	args[id].id = id;
	return txn_submit(t, &s, 0, on_done, &args[id]);
}

static struct txn *new_txn_min(struct fake *f, unsigned int window, unsigned int window_min,
			       unsigned int timeout_ms, unsigned int retries)
{
	struct txn_cfg cfg = { .window = window, .window_min = window_min,
			       .timeout_ms = timeout_ms, .retries = retries };
	struct txn *t = NULL;

	if (txn_new(&fake_ops, f, &cfg, &t) < 0 || !t)
		abort();
	f->t = t;
	f->window = window;
	return t;
}

static struct txn *new_txn(struct fake *f, unsigned int window, unsigned int timeout_ms,
			   unsigned int retries)
{
	return new_txn_min(f, window, 0, timeout_ms, retries);
}

/* Wait for the fd or the next deadline, then dispatch */
static int step(struct txn *t, struct fake *f)
{
	struct pollfd pfd = { .fd = f->efd, .events = POLLIN };
	int to = txn_next_timeout_ms(t);

	if (to != 0 && !f->rx_len)
		poll(&pfd, 1, to < 0 ? 1000 : to);
	return txn_dispatch(t);
}

/* ---- tests ---- */

static void test_new_rejects(void)
{
	struct fake f;
	struct txn_cfg cfg = { .window = 8, .timeout_ms = 100, .retries = 2 };
	struct txn *t = NULL;

	fake_init(&f, FAKE_SILENT);
	cfg.window = 0;
	CHECK_EQ(txn_new(&fake_ops, &f, &cfg, &t), -EINVAL);
	cfg.window = TXN_WINDOW_MAX + 1;
	CHECK_EQ(txn_new(&fake_ops, &f, &cfg, &t), -EINVAL);
	cfg.window = 8;
	cfg.window_min = 9;
	CHECK_EQ(txn_new(&fake_ops, &f, &cfg, &t), -EINVAL);
	cfg.window_min = 0;
	cfg.timeout_ms = 0;
	CHECK_EQ(txn_new(&fake_ops, &f, &cfg, &t), -EINVAL);
	cfg.timeout_ms = 100;
	CHECK_EQ(txn_new(NULL, &f, &cfg, &t), -EINVAL);
	CHECK_EQ(txn_new(&fake_ops, &f, NULL, &t), -EINVAL);
	CHECK(t == NULL);

	cfg.window = TXN_WINDOW_MAX;
	CHECK_EQ(txn_new(&fake_ops, &f, &cfg, &t), 0);
	CHECK(t != NULL);
	CHECK(txn_idle(t));
	CHECK_EQ(txn_outstanding(t), 0);
	CHECK_EQ(txn_next_timeout_ms(t), -1);
	t = txn_free(t);
	CHECK(t == NULL);
	cfg.window = 1;
	CHECK_EQ(txn_new(&fake_ops, &f, &cfg, &t), 0);
	txn_free(t);
	txn_free(NULL);
	fake_fini(&f);
}

static bool outstanding_tids_unique(const struct fake *f)
{
	for (size_t i = 0; i < f->nsent; i++) {
		if (f->sent[i].answered)
			continue;
		for (size_t j = i + 1; j < f->nsent; j++)
			if (!f->sent[j].answered && sent_tid(f, i) == sent_tid(f, j))
				return false;
	}
	return true;
}

static size_t unanswered(const struct fake *f)
{
	size_t n = 0;

	for (size_t i = 0; i < f->nsent; i++)
		n += !f->sent[i].answered;
	return n;
}

static void test_window(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;
	uint64_t rng = 12345;
	int rounds = 0;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 8, 60000, 0);

	for (unsigned int i = 0; i < 100; i++)
		CHECK_EQ(submit(t, &res, i, SMP_ATTR_NODE_INFO), 0);
	/* Nothing is sent from the caller's stack */
	CHECK_EQ(f.nsent, 0);
	CHECK(!txn_idle(t));
	CHECK_EQ(txn_next_timeout_ms(t), 0);

	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 8);
	CHECK_EQ(txn_outstanding(t), 8);
	CHECK(outstanding_tids_unique(&f));
	CHECK(txn_next_timeout_ms(t) > 0);
	/* In submission order, with the right transport addressing */
	for (size_t i = 0; i < f.nsent; i++) {
		CHECK_EQ(sent_attr_mod(&f, i), i);
		CHECK(f.sent[i].dr);
		CHECK_EQ(f.sent[i].dlid, LID_PERMISSIVE);
	}
	/* Dispatching again with nothing received sends nothing */
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 8);

	/* Answer in a scrambled order, a few at a time */
	while (res.completed < 100 && rounds++ < 1000) {
		size_t open[FAKE_MAX_SENT], n = 0;
		unsigned int k;

		for (size_t i = 0; i < f.nsent; i++)
			if (!f.sent[i].answered)
				open[n++] = i;
		if (!n)
			break;
		rng = rng * 6364136223846793005u + 1442695040888963407u;
		k = 1 + (unsigned int)((rng >> 33) % 3);
		for (unsigned int j = 0; j < k && n; j++) {
			size_t pick;

			rng = rng * 6364136223846793005u + 1442695040888963407u;
			pick = (size_t)((rng >> 33) % n);
			fake_answer(&f, open[pick], 0);
			open[pick] = open[--n];
		}
		CHECK_EQ(txn_dispatch(t), 0);
		if (txn_outstanding(t) > 8 || unanswered(&f) > 8 || !outstanding_tids_unique(&f)) {
			CHECK(!"window exceeded or TIDs reused among outstanding requests");
			break;
		}
	}
	CHECK_EQ(res.completed, 100);
	CHECK_EQ(res.mismatched, 0);
	CHECK_EQ(f.nsent, 100);
	CHECK(f.max_outstanding <= 8);
	for (unsigned int i = 0; i < 100; i++) {
		CHECK_EQ(res.r[i].calls, 1);
		CHECK_EQ(res.r[i].status, 0);
		CHECK(res.r[i].had_resp);
		CHECK_EQ(res.r[i].req_attr_mod, i);
		CHECK_EQ(res.r[i].resp_attr_mod, i);
		CHECK_EQ(res.r[i].data, i);
	}
	CHECK_EQ(txn_stats(t)->sent, 100);
	CHECK_EQ(txn_stats(t)->answered, 100);
	CHECK_EQ(txn_stats(t)->unmatched, 0);
	CHECK_EQ(txn_stats(t)->malformed, 0);
	CHECK_EQ(txn_stats(t)->timeouts, 0);
	CHECK(txn_idle(t));
	CHECK_EQ(txn_outstanding(t), 0);
	CHECK_EQ(txn_next_timeout_ms(t), -1);
	txn_stats_reset(t);
	CHECK_EQ(txn_stats(t)->sent, 0);
	CHECK_EQ(txn_stats(t)->answered, 0);
	txn_free(t);
	fake_fini(&f);
}

/* With the fake answering at once, txn_run() drives everything to the end */
static void test_run_window(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_ANSWER);
	t = new_txn(&f, 4, 60000, 0);
	for (unsigned int i = 0; i < 500; i++)
		submit(t, &res, i, i & 1 ? SMP_ATTR_PORT_INFO : SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_run(t), 0);
	CHECK_EQ(res.completed, 500);
	CHECK_EQ(res.mismatched, 0);
	CHECK_EQ(f.nsent, 500);
	CHECK(f.max_outstanding <= 4);
	CHECK_EQ(txn_stats(t)->answered, 500);
	CHECK(txn_idle(t));
	txn_free(t);
	fake_fini(&f);
}

/* txn_drain: the queue is worked down to the bound, the window kept full */
static void test_drain(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_ANSWER);
	t = new_txn(&f, 4, 60000, 0);
	for (unsigned int i = 0; i < 500; i++)
		submit(t, &res, i, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_queued(t), 500);
	CHECK_EQ(txn_drain(t, 1000), 0);
	CHECK_EQ(f.nsent, 0);			/* under the bound: nothing to do */
	CHECK_EQ(txn_drain(t, 100), 0);
	CHECK(txn_queued(t) <= 100);
	CHECK(txn_queued(t) >= 90);		/* not much further than asked */
	CHECK(res.completed >= 390);
	CHECK(f.max_outstanding <= 4);
	CHECK_EQ(txn_run(t), 0);
	CHECK_EQ(txn_queued(t), 0);
	CHECK_EQ(res.completed, 500);
	CHECK_EQ(res.mismatched, 0);
	txn_free(t);
	fake_fini(&f);
}

/* A mutable copy of the answer to sent[idx] */
static void answer_copy(const struct fake *f, size_t idx, uint8_t *out)
{
	make_answer(f->sent[idx].mad, out, 0);
}

static void test_refused(void)
{
	static struct results res;
	const struct txn_stats *st;
	uint8_t a[MAD_SIZE];
	struct fake f;
	struct txn *t;
	uint64_t junk;
	uint64_t before;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 4, 60000, 0);
	st = txn_stats(t);
	submit(t, &res, 0, SMP_ATTR_PORT_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 1);

#define REFUSE(what, mad, len) do {						\
	before = st->unmatched + st->malformed;					\
	fake_push(&f, (mad), (len), 0);						\
	CHECK_EQ(txn_dispatch(t), 0);						\
	if (st->unmatched + st->malformed != before + 1)			\
		fprintf(stderr, "not counted: %s\n", what);			\
	CHECK_EQ(st->unmatched + st->malformed, before + 1);			\
	CHECK_EQ(res.completed, 0);						\
	CHECK_EQ(st->answered, 0);						\
	CHECK_EQ(f.nsent, 1);							\
} while (0)

	/* Wrong TID (low 32 bits) */
	answer_copy(&f, 0, a);
	wire_bits_set(a, 64, 64, wire_bits_get(a, 64, 64) + 1);
	REFUSE("wrong TID", a, MAD_SIZE);
	answer_copy(&f, 0, a);
	wire_bits_set(a, 64, 64, wire_bits_get(a, 64, 64) ^ 0x80000000u);
	REFUSE("wrong TID bit 31", a, MAD_SIZE);
	answer_copy(&f, 0, a);
	wire_bits_set(a, 64, 64, wire_bits_get(a, 64, 64) ^ 0x00010000u);
	REFUSE("wrong TID generation", a, MAD_SIZE);
	/* Wrong attribute */
	answer_copy(&f, 0, a);
	wire_bits_set(a, 128, 16, SMP_ATTR_NODE_INFO);
	REFUSE("wrong attribute id", a, MAD_SIZE);
	answer_copy(&f, 0, a);
	wire_bits_set(a, 160, 32, 99);
	REFUSE("wrong attribute modifier", a, MAD_SIZE);
	/* DR answer without the D bit, or with another hop count */
	answer_copy(&f, 0, a);
	a[4] &= 0x7f;
	REFUSE("no D bit", a, MAD_SIZE);
	answer_copy(&f, 0, a);
	a[7] = 7;
	REFUSE("wrong hop count", a, MAD_SIZE);
	/* The same answer as a LID-routed SMP */
	answer_copy(&f, 0, a);
	a[1] = MAD_CLASS_SMI;
	REFUSE("wrong class", a, MAD_SIZE);
	/* A Set response is not a GetResp */
	answer_copy(&f, 0, a);
	a[3] = 0x82;
	REFUSE("method 0x82", a, MAD_SIZE);
	/* Garbage with a response method and our TID */
	memset(a, 0xee, sizeof(a));
	a[1] = MAD_CLASS_SMI_DR;
	a[3] = MAD_METHOD_GET_RESP;
	wire_bits_set(a, 64, 64, wire_bits_get(f.sent[0].mad, 64, 64));
	REFUSE("garbage", a, MAD_SIZE);
	/* Wrong versions */
	answer_copy(&f, 0, a);
	a[0] = 2;
	REFUSE("base version 2", a, MAD_SIZE);
	answer_copy(&f, 0, a);
	a[2] = 2;
	REFUSE("class version 2", a, MAD_SIZE);
	/* Truncated, and too short to hold a header */
	answer_copy(&f, 0, a);
	REFUSE("truncated 255", a, MAD_SIZE - 1);
	REFUSE("truncated 100", a, 100);
	REFUSE("truncated 24", a, 24);
	REFUSE("truncated 10", a, 10);
	REFUSE("empty", a, 0);
	/* Not an SMP class: SA and PerfMgt answers with our TID */
	answer_copy(&f, 0, a);
	a[1] = MAD_CLASS_SA;
	a[2] = 2;
	REFUSE("SA class", a, MAD_SIZE);
	answer_copy(&f, 0, a);
	a[1] = 0x04;
	REFUSE("PerfMgt class", a, MAD_SIZE);

	/* All that did not disturb the request: the real answer completes it */
	answer_copy(&f, 0, a);
	junk = wire_bits_get(a, 64, 64);
	/* with other high TID bits than we sent */
	CHECK(junk >> 32 != wire_bits_get(f.sent[0].mad, 64, 64) >> 32);
	fake_push(&f, a, MAD_SIZE, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(res.completed, 1);
	CHECK_EQ(res.r[0].status, 0);
	CHECK_EQ(res.mismatched, 0);
	CHECK_EQ(st->answered, 1);
	/* A second copy of the same answer is late */
	before = st->unmatched;
	fake_push(&f, a, MAD_SIZE, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(st->unmatched, before + 1);
	CHECK_EQ(res.r[0].calls, 1);
	CHECK(txn_idle(t));
	txn_free(t);
	fake_fini(&f);
#undef REFUSE
}

static void test_tid_high_bits(void)
{
	static const uint32_t high[] = { 0, 0xffffffffu, 0x12345678u };
	static struct results res;
	uint8_t a[MAD_SIZE];
	struct fake f;
	struct txn *t;
	struct smp s;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 4, 60000, 0);
	/* LID routed: the transport gets the destination LID */
	for (unsigned int i = 0; i < 3; i++) {
		smp_init_lid(&s, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, i);
		args[i].res = &res;
		args[i].id = i;
		CHECK_EQ(txn_submit(t, &s, (uint16_t)(0x1234 + i), on_done, &args[i]), 0);
	}
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 3);
	for (unsigned int i = 0; i < 3; i++) {
		CHECK(!f.sent[i].dr);
		CHECK_EQ(f.sent[i].dlid, 0x1234 + i);
	}
	/* The kernel may hand back any high 32 bits; only the low 32 are ours */
	for (unsigned int i = 0; i < 3; i++) {
		answer_copy(&f, i, a);
		wire_bits_set(a, 64, 32, high[i]);
		fake_push(&f, a, MAD_SIZE, 0);
	}
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(res.completed, 3);
	CHECK_EQ(res.mismatched, 0);
	for (unsigned int i = 0; i < 3; i++) {
		CHECK_EQ(res.r[i].calls, 1);
		CHECK_EQ(res.r[i].status, 0);
		CHECK_EQ(res.r[i].resp_attr_mod, i);
		CHECK_EQ(res.r[i].resp_tid, sent_tid(&f, i));
	}
	CHECK_EQ(txn_stats(t)->answered, 3);
	CHECK_EQ(txn_stats(t)->unmatched, 0);
	txn_free(t);
	fake_fini(&f);
}

static void test_timeouts(void)
{
	static struct results res;
	const struct txn_stats *st;
	struct fake f;
	struct txn *t;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 4, 10, 2);
	st = txn_stats(t);
	for (unsigned int i = 0; i < 3; i++)
		submit(t, &res, i, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_run(t), 0);
	CHECK_EQ(res.completed, 3);
	for (unsigned int i = 0; i < 3; i++) {
		unsigned int sends = 0;
		uint32_t tids[8];

		CHECK_EQ(res.r[i].calls, 1);
		CHECK_EQ(res.r[i].status, -ETIMEDOUT);
		CHECK(!res.r[i].had_resp);
		/* Exactly 1 + retries tries, each with its own TID */
		for (size_t k = 0; k < f.nsent; k++)
			if (sent_attr_mod(&f, k) == i && sends < 8)
				tids[sends++] = sent_tid(&f, k);
		CHECK_EQ(sends, 3);
		for (unsigned int a = 0; a < sends; a++)
			for (unsigned int b = a + 1; b < sends; b++)
				CHECK(tids[a] != tids[b]);
	}
	CHECK_EQ(f.nsent, 9);
	CHECK_EQ(st->sent, 9);
	CHECK_EQ(st->timeouts, 9);
	CHECK_EQ(st->retries, 6);
	CHECK_EQ(st->failed, 3);
	CHECK_EQ(st->answered, 0);
	CHECK(txn_idle(t));
	txn_free(t);

	/* retries = 0: one try only */
	memset(&res, 0, sizeof(res));
	f.nsent = 0;
	t = new_txn(&f, 1, 5, 0);
	submit(t, &res, 0, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_run(t), 0);
	CHECK_EQ(res.r[0].status, -ETIMEDOUT);
	CHECK_EQ(f.nsent, 1);
	CHECK_EQ(txn_stats(t)->timeouts, 1);
	CHECK_EQ(txn_stats(t)->retries, 0);
	CHECK_EQ(txn_stats(t)->failed, 1);
	txn_free(t);
	fake_fini(&f);
}

/*
 * A machine too busy to look at its timers in time (every send here
 * stalls for 4 timeouts, past the whole request's time): a silent timeout
 * still gets every retry it is owed. Before, the first one noticed after
 * (retries + 1) timeouts failed the request after one try.
 */
static void test_busy_machine(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SLOW);
	f.slow_ms = 40;
	t = new_txn(&f, 1, 10, 2);
	submit(t, &res, 0, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_run(t), 0);
	CHECK_EQ(res.r[0].status, -ETIMEDOUT);
	CHECK_EQ(f.nsent, 3);
	CHECK_EQ(txn_stats(t)->retries, 2);
	CHECK_EQ(txn_stats(t)->failed, 1);
	txn_free(t);
	fake_fini(&f);
}

/* A retry has a new TID; the late answer to the old one is not accepted */
static void test_late_answer(void)
{
	static struct results res;
	const struct txn_stats *st;
	struct fake f;
	struct txn *t;
	size_t last;
	int guard = 0;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 2, 10, 100);
	st = txn_stats(t);
	submit(t, &res, 7, SMP_ATTR_SWITCH_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 1);
	/* Let the first try expire */
	while (f.nsent < 2 && guard++ < 10000)
		step(t, &f);
	CHECK(f.nsent >= 2);
	CHECK_EQ(res.completed, 0);
	last = f.nsent - 1;
	CHECK(sent_tid(&f, 0) != sent_tid(&f, last));
	CHECK_EQ(sent_attr_id(&f, last), SMP_ATTR_SWITCH_INFO);
	/*
	 * Answers to every earlier try, then to the current one, all in one
	 * dispatch (which receives before it expires anything): only the
	 * last counts.
	 */
	for (size_t i = 0; i < last; i++)
		fake_answer(&f, i, 0);
	fake_answer(&f, last, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(st->unmatched, last);
	CHECK_EQ(res.completed, 1);
	CHECK_EQ(res.r[7].status, 0);
	CHECK_EQ(res.r[7].resp_tid, sent_tid(&f, last));
	CHECK_EQ(res.r[7].req_tid, sent_tid(&f, last));
	CHECK_EQ(st->answered, 1);
	CHECK_EQ(st->retries, last);
	/* And an answer to the first try after completion is also late */
	fake_answer(&f, 0, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(st->unmatched, last + 1);
	CHECK_EQ(res.r[7].calls, 1);

	/* A slot reused by a new request does not take the old request's answer */
	submit(t, &res, 8, SMP_ATTR_SWITCH_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	fake_answer(&f, last, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(res.r[8].calls, 0);
	fake_answer(&f, f.nsent - 1, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(res.r[8].calls, 1);
	CHECK_EQ(res.r[8].status, 0);
	txn_free(t);
	fake_fini(&f);
}

/* The transport gives our request back with a non-zero status: retry at once */
static void test_send_status(void)
{
	static struct results res;
	const struct txn_stats *st;
	struct fake f;
	struct txn *t;
	uint32_t tid0, tid1;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 1, 60000, 2);
	st = txn_stats(t);
	submit(t, &res, 3, SMP_ATTR_NODE_DESC);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 1);
	tid0 = sent_tid(&f, 0);

	fake_push(&f, f.sent[0].mad, MAD_SIZE, 110 /* ETIMEDOUT, as umad reports it */);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 2);	/* no waiting for the 60 s timeout */
	tid1 = sent_tid(&f, 1);
	CHECK(tid1 != tid0);
	CHECK_EQ(sent_attr_id(&f, 1), SMP_ATTR_NODE_DESC);
	CHECK_EQ(sent_attr_mod(&f, 1), 3);
	CHECK_EQ(st->timeouts, 1);
	CHECK_EQ(st->retries, 1);
	CHECK_EQ(res.completed, 0);

	/* A stale loss report for the first try changes nothing */
	fake_push(&f, f.sent[0].mad, MAD_SIZE, 1);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 2);
	CHECK_EQ(st->unmatched, 1);
	CHECK_EQ(st->timeouts, 1);

	/* Reported losses cost no timeout: retried up to TXN_LOSS_TRIES tries */
	for (unsigned int k = 1; k < TXN_LOSS_TRIES - 1; k++) {
		fake_push(&f, f.sent[k].mad, MAD_SIZE, 1);
		CHECK_EQ(txn_dispatch(t), 0);
		CHECK_EQ(f.nsent, k + 2);
		CHECK_EQ(res.completed, 0);
	}
	fake_push(&f, f.sent[TXN_LOSS_TRIES - 1].mad, MAD_SIZE, 1);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, TXN_LOSS_TRIES);
	CHECK_EQ(res.completed, 1);
	CHECK_EQ(res.r[3].status, -ETIMEDOUT);
	CHECK(!res.r[3].had_resp);
	CHECK_EQ(st->timeouts, TXN_LOSS_TRIES);
	CHECK_EQ(st->retries, TXN_LOSS_TRIES - 1);
	CHECK_EQ(st->failed, 1);
	CHECK(txn_idle(t));

	/* A loss report, then the answer to the retry */
	submit(t, &res, 4, SMP_ATTR_NODE_DESC);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, TXN_LOSS_TRIES + 1);
	fake_push(&f, f.sent[TXN_LOSS_TRIES].mad, MAD_SIZE, 1);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, TXN_LOSS_TRIES + 2);
	fake_answer(&f, TXN_LOSS_TRIES + 1, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(res.r[4].calls, 1);
	CHECK_EQ(res.r[4].status, 0);
	/* A truncated loss report is malformed, not a loss */
	fake_push(&f, f.sent[TXN_LOSS_TRIES + 1].mad, 10, 1);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(st->malformed, 1);
	CHECK_EQ(f.nsent, TXN_LOSS_TRIES + 2);
	txn_free(t);
	fake_fini(&f);

	/* Reported losses stop once (retries + 1) timeouts have passed */
	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 1, 2, 1);
	st = txn_stats(t);
	submit(t, &res, 5, SMP_ATTR_NODE_DESC);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 1);
	fake_push(&f, f.sent[0].mad, MAD_SIZE, 1);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 2);
	usleep(5000);
	fake_push(&f, f.sent[1].mad, MAD_SIZE, 1);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 2);
	CHECK_EQ(res.r[5].status, -ETIMEDOUT);
	CHECK_EQ(st->failed, 1);
	txn_free(t);
	fake_fini(&f);
}

static void test_bad_status(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;
	struct smp s;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 4, 60000, 3);
	submit(t, &res, 0, SMP_ATTR_PORT_INFO);
	smp_init_lid(&s, MAD_METHOD_SET, SMP_ATTR_PORT_INFO, 1);
	args[1].res = &res;
	args[1].id = 1;
	txn_submit(t, &s, 5, on_done, &args[1]);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 2);
	fake_answer(&f, 0, MAD_STATUS_INVALID_FIELD);
	fake_answer(&f, 1, MAD_STATUS_METHOD_ATTR_UNSUPP | 0x8000);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(res.completed, 2);
	CHECK_EQ(res.r[0].status, -EREMOTEIO);
	CHECK(res.r[0].had_resp);
	CHECK_EQ(res.r[0].resp_status, MAD_STATUS_INVALID_FIELD);
	CHECK_EQ(res.r[1].status, -EREMOTEIO);
	CHECK(res.r[1].had_resp);
	CHECK_EQ(res.r[1].resp_status, MAD_STATUS_METHOD_ATTR_UNSUPP | 0x8000);
	/* Not retried */
	CHECK_EQ(f.nsent, 2);
	CHECK_EQ(txn_stats(t)->bad_status, 2);
	CHECK_EQ(txn_stats(t)->answered, 2);
	CHECK_EQ(txn_stats(t)->retries, 0);
	txn_free(t);
	fake_fini(&f);
}

struct unsol {
	int calls;
	size_t len;
	uint8_t method;
	uint16_t attr_id;
	uint16_t slid;
};

static void on_unsolicited(void *arg, const uint8_t *mad, size_t len, const struct mad_addr *from)
{
	struct unsol *u = arg;

	u->calls++;
	u->len = len;
	u->method = mad[3];
	u->attr_id = (uint16_t)wire_bits_get(mad, 128, 16);
	u->slid = from->slid;
}

static void test_unsolicited(void)
{
	static struct results res;
	struct unsol u = { 0 };
	uint8_t m[MAD_SIZE];
	struct fake f;
	struct txn *t;
	struct smp s;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 4, 60000, 0);
	submit(t, &res, 0, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), 0);

	/* Without a handler: dropped, completes nothing */
	smp_init_lid(&s, MAD_METHOD_TRAP, SMP_ATTR_NOTICE, 0);
	s.hdr.tid = wire_bits_get(f.sent[0].mad, 64, 64);	/* even with our TID */
	smp_encode(&s, m);
	fake_push(&f, m, MAD_SIZE, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(u.calls, 0);
	CHECK_EQ(res.completed, 0);
	CHECK_EQ(txn_stats(t)->answered, 0);

	txn_set_unsolicited(t, on_unsolicited, &u);
	fake_push(&f, m, MAD_SIZE, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(u.calls, 1);
	CHECK_EQ(u.len, MAD_SIZE);
	CHECK_EQ(u.method, MAD_METHOD_TRAP);
	CHECK_EQ(u.attr_id, SMP_ATTR_NOTICE);
	CHECK_EQ(u.slid, 0x42);
	CHECK_EQ(txn_stats(t)->unsolicited, 1);
	CHECK_EQ(res.completed, 0);

	/* Another SM's Get(SMInfo), directed route */
	struct dr_path p = { .hops = 1, .port = { 0, 1 } };

	smp_init_dr(&s, MAD_METHOD_GET, SMP_ATTR_SM_INFO, 0, &p);
	smp_encode(&s, m);
	fake_push(&f, m, MAD_SIZE, 0);
	/* and a TrapRepress */
	smp_init_lid(&s, MAD_METHOD_TRAP_REPRESS, SMP_ATTR_NOTICE, 0);
	smp_encode(&s, m);
	fake_push(&f, m, MAD_SIZE, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(u.calls, 3);
	CHECK_EQ(u.method, MAD_METHOD_TRAP_REPRESS);
	CHECK_EQ(txn_stats(t)->unsolicited, 3);
	CHECK_EQ(res.completed, 0);

	/* The outstanding request still completes normally */
	fake_answer(&f, 0, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(res.completed, 1);
	CHECK_EQ(res.r[0].status, 0);
	CHECK_EQ(u.calls, 3);
	txn_free(t);
	fake_fini(&f);
}

/* Another layer's class (GMPs of the performance manager): all of it goes to its handler */
struct class_rx {
	int calls, last_status;
	uint8_t last_class, last_method;
};

static void on_class(void *arg, const uint8_t *mad, size_t len, int send_status)
{
	struct class_rx *c = arg;

	c->calls++;
	c->last_status = send_status;
	c->last_class = len >= 2 ? mad[1] : 0;
	c->last_method = len >= 4 ? mad[3] : 0;
}

static void test_class_handler(void)
{
	static struct results res;
	struct class_rx c = { 0 };
	struct unsol u = { 0 };
	uint8_t m[MAD_SIZE] = { 0 };
	struct fake f;
	struct txn *t;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 4, 60000, 0);
	txn_set_unsolicited(t, on_unsolicited, &u);
	txn_set_class_handler(t, MAD_CLASS_PERF, on_class, &c);
	submit(t, &res, 0, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	/* A PMA's answer, with our SMP's TID even: the class decides */
	m[0] = 1;
	m[1] = MAD_CLASS_PERF;
	m[2] = 1;
	m[3] = MAD_METHOD_GET_RESP;
	memcpy(m + 8, f.sent[0].mad + 8, 8);
	fake_push(&f, m, MAD_SIZE, 0);
	/* A request of that class given back by the transport */
	m[3] = MAD_METHOD_GET;
	fake_push(&f, m, MAD_SIZE, 110);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(c.calls, 2);
	CHECK_EQ(c.last_status, 110);
	CHECK_EQ(c.last_class, MAD_CLASS_PERF);
	CHECK_EQ(u.calls, 0);
	CHECK_EQ(txn_stats(t)->passed, 2);
	CHECK_EQ(txn_stats(t)->unmatched, 0);
	CHECK_EQ(res.completed, 0);
	/* Other classes as before: an SA request is unsolicited, the SMP answer completes */
	m[1] = MAD_CLASS_SA;
	m[2] = 2;
	fake_push(&f, m, MAD_SIZE, 0);
	fake_answer(&f, 0, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(u.calls, 1);
	CHECK_EQ(c.calls, 2);
	CHECK_EQ(res.completed, 1);
	txn_free(t);
	fake_fini(&f);
}

/* ---- re-entrancy: callbacks that submit ---- */

struct chain {
	struct txn *t;
	struct fake *f;
	int done, limit, status_bad;
	int fanout_submitted;
	bool sent_from_cb;	/* a send happened inside a callback */
};

static struct chain chain;

static void on_chain(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct chain *c = &chain;
	size_t before = c->f->nsent;
	struct smp s;

	(void)arg;
	if (status)
		c->status_bad++;
	c->done++;
	if (c->fanout_submitted < c->limit) {
		/* Two more per completion: a growing tree of work */
		for (int k = 0; k < 2 && c->fanout_submitted < c->limit; k++) {
			dr_req(&s, SMP_ATTR_NODE_INFO, (uint32_t)c->fanout_submitted, 2);
			if (txn_submit(c->t, &s, 0, on_chain, NULL) == 0)
				c->fanout_submitted++;
		}
	}
	if (c->f->nsent != before)
		c->sent_from_cb = true;
}

static void test_reentrancy(void)
{
	struct fake f;
	struct smp s;

	fake_init(&f, FAKE_ANSWER);
	memset(&chain, 0, sizeof(chain));
	chain.f = &f;
	chain.t = new_txn(&f, 3, 60000, 0);
	chain.limit = 300;
	dr_req(&s, SMP_ATTR_NODE_INFO, 0, 1);
	CHECK_EQ(txn_submit(chain.t, &s, 0, on_chain, NULL), 0);
	chain.fanout_submitted = 1;
	CHECK_EQ(txn_run(chain.t), 0);
	CHECK_EQ(chain.done, 300);
	CHECK_EQ(chain.status_bad, 0);
	CHECK_EQ(f.nsent, 300);
	CHECK(!chain.sent_from_cb);
	CHECK(f.max_outstanding <= 3);
	CHECK_EQ(txn_stats(chain.t)->answered, 300);
	CHECK(txn_idle(chain.t));
	txn_free(chain.t);
	fake_fini(&f);

	/* The same after timeouts: a callback for a failed request submits more */
	fake_init(&f, FAKE_SILENT);
	memset(&chain, 0, sizeof(chain));
	chain.f = &f;
	chain.t = new_txn(&f, 2, 5, 0);
	chain.limit = 5;
	dr_req(&s, SMP_ATTR_NODE_INFO, 0, 1);
	CHECK_EQ(txn_submit(chain.t, &s, 0, on_chain, NULL), 0);
	chain.fanout_submitted = 1;
	CHECK_EQ(txn_run(chain.t), 0);
	CHECK_EQ(chain.done, 5);
	CHECK_EQ(chain.status_bad, 5);
	CHECK_EQ(f.nsent, 5);
	CHECK(!chain.sent_from_cb);
	CHECK_EQ(txn_stats(chain.t)->failed, 5);
	txn_free(chain.t);
	fake_fini(&f);
}

/* An SMP that cannot be encoded fails without being sent, and without stalling the rest */
static void test_unencodable(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;
	struct smp s;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_ANSWER);
	t = new_txn(&f, 2, 60000, 0);
	dr_req(&s, SMP_ATTR_NODE_INFO, 0, 1);
	s.hdr.hop_cnt = SMP_MAX_HOPS + 1;
	args[0].res = &res;
	args[0].id = 0;
	CHECK_EQ(txn_submit(t, &s, 0, on_done, &args[0]), 0);
	s.hdr.hop_cnt = 1;
	s.hdr.mgmt_class = MAD_CLASS_SA;
	args[1].res = &res;
	args[1].id = 1;
	CHECK_EQ(txn_submit(t, &s, 0, on_done, &args[1]), 0);
	submit(t, &res, 2, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_run(t), 0);
	CHECK_EQ(res.completed, 3);
	CHECK(res.r[0].status < 0);
	CHECK(!res.r[0].had_resp);
	CHECK(res.r[1].status < 0);
	CHECK(!res.r[1].had_resp);
	CHECK_EQ(res.r[2].status, 0);
	CHECK_EQ(f.nsent, 1);
	CHECK(txn_idle(t));
	txn_free(t);
	fake_fini(&f);
}

/* Cancelling: every request's callback once with -ECANCELED, late answers dropped */
static struct txn *cancel_t;
static int cancel_inner = 1, cancel_resubmits;

static void on_cancel_resubmit(void *arg, int status, const struct smp *req,
			       const struct smp *resp)
{
	struct smp s;

	(void)arg;
	(void)resp;
	cancel_inner = txn_cancel_all(cancel_t);
	if (status == -ECANCELED) {
		/* A careless owner that submits again: cancelled too, then dropped */
		s = *req;
		if (txn_submit(cancel_t, &s, 0, on_cancel_resubmit, NULL) == 0)
			cancel_resubmits++;
	}
}

static void test_cancel(void)
{
	static struct results res;
	uint8_t late[MAD_SIZE];
	struct fake f;
	struct txn *t;
	struct smp s;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 4, 60000, 3);
	for (unsigned int i = 0; i < 10; i++)
		submit(t, &res, i, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 4);
	CHECK_EQ(txn_outstanding(t), 4);
	CHECK_EQ(txn_queued(t), 6);
	make_answer(f.sent[0].mad, late, 0);
	CHECK_EQ(txn_cancel_all(t), 0);
	CHECK(txn_idle(t));
	CHECK_EQ(res.completed, 10);
	for (unsigned int i = 0; i < 10; i++) {
		CHECK_EQ(res.r[i].calls, 1);
		CHECK_EQ(res.r[i].status, -ECANCELED);
		CHECK(!res.r[i].had_resp);
	}
	CHECK_EQ(txn_stats(t)->cancelled, 10);
	CHECK_EQ(txn_stats(t)->failed, 0);
	/* The answer to a cancelled request finds nobody; nothing is sent again */
	fake_push(&f, late, MAD_SIZE, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(txn_stats(t)->unmatched, 1);
	CHECK_EQ(res.completed, 10);
	CHECK_EQ(f.nsent, 4);
	/* The layer works on afterwards */
	submit(t, &res, 10, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 5);
	fake_answer(&f, 4, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(res.r[10].status, 0);
	CHECK(txn_idle(t));

	/* Callbacks that submit again: cancelled round after round, then dropped */
	cancel_t = t;
	dr_req(&s, SMP_ATTR_NODE_INFO, 1, 1);
	CHECK_EQ(txn_submit(t, &s, 0, on_cancel_resubmit, NULL), 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(txn_cancel_all(t), 0);
	CHECK(txn_idle(t));
	CHECK_EQ(cancel_resubmits, TXN_CANCEL_ROUNDS);
	/* ... and a callback cannot cancel from inside */
	CHECK_EQ(cancel_inner, -EBUSY);
	txn_free(t);
	fake_fini(&f);
}

/* The M_Key callback: asked as each request enters the window, its key on the wire */
struct mkey_seen {
	unsigned int calls;
	uint16_t dlid[8];
};

static uint64_t mkey_of(void *arg, const struct smp *req, uint16_t dlid)
{
	struct mkey_seen *m = arg;

	if (m->calls < 8)
		m->dlid[m->calls] = dlid;
	m->calls++;
	/* A key per request, from what the request says: its attribute modifier */
	return UINT64_C(0x6d6b657900000000) | req->hdr.attr_mod;
}

static void test_mkey(void)
{
	static struct results res;
	struct mkey_seen m = { 0 };
	struct fake f;
	struct txn *t;
	struct smp s;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 2, 60000, 1);
	/* Without a callback the caller's key goes out as it is */
	dr_req(&s, SMP_ATTR_PORT_INFO, 7, 2);
	s.mkey = 0x1234;
	args[0] = (struct req_arg){ &res, 0 };
	CHECK_EQ(txn_submit(t, &s, 0, on_done, &args[0]), 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 1);
	CHECK_EQ(wire_bits_get(f.sent[0].mad, 192, 64), 0x1234);
	fake_answer(&f, 0, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(res.completed, 1);

	txn_set_mkey(t, mkey_of, &m);
	for (unsigned int i = 1; i <= 3; i++) {
		dr_req(&s, SMP_ATTR_PORT_INFO, i, 2);
		args[i] = (struct req_arg){ &res, i };
		CHECK_EQ(txn_submit(t, &s, 0, on_done, &args[i]), 0);
	}
	smp_init_lid(&s, MAD_METHOD_GET, SMP_ATTR_NODE_INFO, 4);
	args[4] = (struct req_arg){ &res, 4 };
	CHECK_EQ(txn_submit(t, &s, 0x37, on_done, &args[4]), 0);
	/* Submitting asks nothing: the key is chosen when a request enters the window */
	CHECK_EQ(m.calls, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(m.calls, 2);
	CHECK_EQ(f.nsent, 3);
	CHECK_EQ(wire_bits_get(f.sent[1].mad, 192, 64), UINT64_C(0x6d6b657900000001));
	CHECK_EQ(wire_bits_get(f.sent[2].mad, 192, 64), UINT64_C(0x6d6b657900000002));
	/* A retry (the transport gave the request back) carries the same key */
	fake_push(&f, f.sent[1].mad, MAD_SIZE, 110);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 4);
	CHECK_EQ(m.calls, 2);
	CHECK_EQ(sent_attr_mod(&f, 3), 1);
	CHECK_EQ(wire_bits_get(f.sent[3].mad, 192, 64), UINT64_C(0x6d6b657900000001));
	fake_answer(&f, 3, 0);
	fake_answer(&f, 2, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(m.calls, 4);
	CHECK_EQ(f.nsent, 6);
	fake_answer(&f, 4, 0);
	fake_answer(&f, 5, 0);
	CHECK_EQ(txn_run(t), 0);
	CHECK_EQ(m.dlid[0], 0);
	CHECK_EQ(m.dlid[3], 0x37);
	for (size_t i = 1; i < f.nsent; i++)
		CHECK_EQ(wire_bits_get(f.sent[i].mad, 192, 64),
			 UINT64_C(0x6d6b657900000000) | sent_attr_mod(&f, i));
	CHECK_EQ(res.completed, 5);
	txn_free(t);
	fake_fini(&f);
}

/* ---- the adaptive window ---- */

static struct txn_window window_of(const struct txn *t)
{
	struct txn_window w;

	txn_window_get(t, &w);
	return w;
}

/* Answer every try in flight, oldest first, then dispatch once */
static void answer_all(struct txn *t, struct fake *f)
{
	for (size_t i = 0; i < f->nsent; i++)
		if (!f->sent[i].answered)
			fake_answer(f, i, 0);
	CHECK_EQ(txn_dispatch(t), 0);
}

/* Where the try of request id went last, or SIZE_MAX */
static size_t last_try(const struct fake *f, unsigned int id)
{
	size_t at = SIZE_MAX;

	for (size_t i = 0; i < f->nsent; i++)
		if (sent_attr_mod(f, i) == id)
			at = i;
	return at;
}

/* From the floor it doubles each round trip while answers come, up to the ceiling */
static void test_window_grow(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;
	size_t before;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn_min(&f, 32, 4, 60000, 3);
	CHECK_EQ(window_of(t).size, 4);
	CHECK_EQ(window_of(t).min, 4);
	CHECK_EQ(window_of(t).max, 32);
	for (unsigned int i = 0; i < 300; i++)
		submit(t, &res, i, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 4);
	CHECK_EQ(txn_outstanding(t), 4);
	/* Each answer while the window is full lets one more go */
	for (unsigned int want = 8; want <= 32; want *= 2) {
		before = f.nsent;
		answer_all(t, &f);
		CHECK_EQ(window_of(t).size, want);
		CHECK_EQ(f.nsent - before, want);
		CHECK_EQ(txn_outstanding(t), want);
	}
	/* Never above the ceiling however many answers come */
	for (int round = 0; round < 4; round++) {
		answer_all(t, &f);
		CHECK_EQ(window_of(t).size, 32);
		CHECK(txn_outstanding(t) <= 32);
	}
	CHECK_EQ(window_of(t).shrinks, 0);
	CHECK(f.max_outstanding <= 32);
	CHECK_EQ(txn_cancel_all(t), 0);
	txn_free(t);

	/* Answers that come while the window is not full say nothing of its size */
	memset(&res, 0, sizeof(res));
	f.nsent = 0;
	t = new_txn_min(&f, 32, 4, 60000, 3);
	for (unsigned int round = 0; round < 20; round++) {
		submit(t, &res, round, SMP_ATTR_NODE_INFO);
		submit(t, &res, 100 + round, SMP_ATTR_NODE_INFO);
		CHECK_EQ(txn_dispatch(t), 0);
		answer_all(t, &f);
	}
	CHECK_EQ(res.completed, 40);
	CHECK_EQ(window_of(t).size, 4);
	txn_free(t);

	/* A fixed window: all of it at once, and it stays */
	memset(&res, 0, sizeof(res));
	f.nsent = 0;
	t = new_txn_min(&f, 8, 8, 60000, 3);
	for (unsigned int i = 0; i < 20; i++)
		submit(t, &res, i, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 8);
	CHECK_EQ(window_of(t).size, 8);
	CHECK_EQ(window_of(t).min, 8);
	CHECK_EQ(txn_cancel_all(t), 0);
	txn_free(t);
	fake_fini(&f);
}

/* A lossless fabric: the window reaches the ceiling and stays there */
static void test_window_lossless(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_ANSWER);
	t = new_txn_min(&f, 64, 2, 60000, 3);
	for (unsigned int i = 0; i < MAX_REQ; i++)
		submit(t, &res, i, SMP_ATTR_PORT_INFO);
	CHECK_EQ(txn_run(t), 0);
	CHECK_EQ(res.completed, MAX_REQ);
	CHECK_EQ(res.mismatched, 0);
	CHECK_EQ(f.nsent, MAX_REQ);
	CHECK_EQ(window_of(t).size, 64);
	CHECK_EQ(f.max_outstanding, 64);
	CHECK_EQ(f.max_window, 64);
	CHECK_EQ(window_of(t).shrinks, 0);
	CHECK_EQ(txn_stats(t)->timeouts, 0);
	txn_free(t);
	fake_fini(&f);
}

/* A loss presumed, or a deadline passed instead (its timeout counted past n) */
static bool presumed_or_timeout(const struct txn *t, uint64_t n)
{
	return txn_stats(t)->presumed > 0 || txn_stats(t)->timeouts > n;
}

/*
 * Step until pred holds (each step waits for the next deadline); false after
 * 2000. The tests that wait for a presumed loss (due a millisecond or so
 * after the answers that show it) give their tries a 5 s timeout, so that
 * they fail in seconds, not minutes, when nothing is presumed.
 */
#define STEP_UNTIL(t, f, pred) ({						\
	int _n = 0;								\
	while (!(pred) && _n++ < 2000)						\
		step(t, f);							\
	(pred);									\
})

/*
 * Silence: every try in flight times out. One shrink for all of them, to
 * half, and the lost tries go again only as the window has room; silence
 * again halves it again, down to the floor and no further.
 */
static void test_window_shrink_timeout(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;
	size_t before;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn_min(&f, 32, 4, 20, 10);
	for (unsigned int i = 0; i < 100; i++)
		submit(t, &res, i, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	for (int round = 0; round < 3; round++)
		answer_all(t, &f);
	CHECK_EQ(window_of(t).size, 32);
	CHECK_EQ(txn_outstanding(t), 32);
	before = f.nsent;
	/* Nothing answered: the 32 expire, and half as many go again */
	CHECK(STEP_UNTIL(t, &f, f.nsent > before));
	CHECK_EQ(window_of(t).size, 16);
	CHECK_EQ(window_of(t).safe, 16);
	CHECK_EQ(window_of(t).shrinks, 1);
	CHECK(window_of(t).last_shrink_us > 0);
	CHECK_EQ(f.nsent - before, 16);
	CHECK_EQ(txn_stats(t)->timeouts, 32);
	CHECK_EQ(txn_stats(t)->retries, 32);
	/* The tries sent again are the oldest lost ones */
	for (size_t i = before; i < f.nsent; i++)
		CHECK_EQ(sent_attr_mod(&f, i), 28 + (i - before));
	/* Still silence: 8, then the floor, where it stays */
	for (unsigned int want = 8; want >= 4; want /= 2) {
		before = f.nsent;
		CHECK(STEP_UNTIL(t, &f, f.nsent > before));
		CHECK_EQ(window_of(t).size, want);
		CHECK_EQ(f.nsent - before, want);
	}
	for (int round = 0; round < 3; round++) {
		before = f.nsent;
		CHECK(STEP_UNTIL(t, &f, f.nsent > before));
		CHECK_EQ(window_of(t).size, 4);
		CHECK_EQ(f.nsent - before, 4);
	}
	CHECK_EQ(window_of(t).shrinks, 3);
	/* Everything completes after all */
	while (res.completed < 100 && STEP_UNTIL(t, &f, unanswered(&f) > 0))
		answer_all(t, &f);
	CHECK_EQ(res.completed, 100);
	for (unsigned int i = 0; i < 100; i++)
		CHECK_EQ(res.r[i].status, 0);
	CHECK(f.max_outstanding <= 32);
	txn_free(t);
	fake_fini(&f);
}

/*
 * A loss the transport reports, and one the answers to later tries show:
 * half the window, and the size known good below the tries in flight
 * when the lost one went (but not below half: one loss may be no
 * congestion at all)
 */
static void test_window_shrink_loss(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;
	size_t lost, before;
	unsigned int w0;
	uint64_t timeouts0;
	uint32_t tid;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn_min(&f, 32, 4, 5000, 3);
	for (unsigned int i = 0; i < 400; i++)
		submit(t, &res, i, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	for (int round = 0; round < 3; round++)
		answer_all(t, &f);
	CHECK_EQ(window_of(t).size, 32);
	/* The burst after the last round went out with 1..32 in flight: the 21st */
	lost = f.nsent - 32 + 20;
	fake_push(&f, f.sent[lost].mad, MAD_SIZE, 110);
	f.sent[lost].answered = true;
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(window_of(t).size, 16);
	CHECK_EQ(window_of(t).safe, 20);
	CHECK_EQ(window_of(t).shrinks, 1);
	CHECK_EQ(txn_stats(t)->timeouts, 1);
	/* 31 in flight and the window of 16: the lost one waits, nothing goes */
	CHECK_EQ(f.nsent, lost + 12);
	CHECK_EQ(txn_outstanding(t), 32);
	/* A loss of a try sent before the shrink is the same event */
	fake_push(&f, f.sent[lost + 1].mad, MAD_SIZE, 110);
	f.sent[lost + 1].answered = true;
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(window_of(t).size, 16);
	CHECK_EQ(window_of(t).shrinks, 1);
	/* As answers come, the lost ones go again first */
	before = f.nsent;
	for (size_t i = 0; i < before && f.nsent == before; i++)
		if (!f.sent[i].answered) {
			fake_answer(&f, i, 0);
			CHECK_EQ(txn_dispatch(t), 0);
		}
	/* 15 of the 30 answered (no growth: they went before the shrink), one went again */
	CHECK_EQ(f.nsent, before + 1);
	CHECK_EQ(window_of(t).size, 16);
	CHECK_EQ(txn_outstanding(t), 17);	/* 16 in flight, one waiting */
	CHECK_EQ(sent_attr_mod(&f, before), sent_attr_mod(&f, lost));
	answer_all(t, &f);
	answer_all(t, &f);
	CHECK_EQ(txn_stats(t)->timeouts, 2);
	/* Back up to the size known good at once */
	CHECK(window_of(t).size >= 20);

	/*
	 * Loss by order: answer every try in flight but the 10th of the last
	 * burst (it went with 10 in flight); it is presumed lost and sent again
	 * without waiting for its minute
	 */
	w0 = window_of(t).size;
	CHECK_EQ(txn_outstanding(t), w0);
	before = f.nsent;
	lost = before - w0 + 9;
	tid = sent_tid(&f, lost);
	for (size_t i = before - w0; i < before; i++)
		if (i != lost)
			fake_answer(&f, i, 0);
	f.sent[lost].answered = true;	/* it never will be */
	CHECK_EQ(txn_dispatch(t), 0);
	timeouts0 = txn_stats(t)->timeouts;
	CHECK(STEP_UNTIL(t, &f, presumed_or_timeout(t, timeouts0)));
	CHECK_EQ(txn_stats(t)->presumed, 1);
	CHECK_EQ(txn_stats(t)->timeouts, 3);
	CHECK_EQ(window_of(t).shrinks, 2);
	/* Half, and 9 (what went before it) were it more than half */
	CHECK_EQ(window_of(t).size, w0 / 2);
	CHECK_EQ(window_of(t).safe, w0 / 2 > 9 ? w0 / 2 : 9);
	/* It goes again once the tries in flight leave it room */
	CHECK_EQ(last_try(&f, sent_attr_mod(&f, lost)), lost);
	answer_all(t, &f);
	CHECK(last_try(&f, sent_attr_mod(&f, lost)) > lost);
	CHECK(sent_tid(&f, last_try(&f, sent_attr_mod(&f, lost))) != tid);
	/* Its answer completes it */
	fake_answer(&f, last_try(&f, sent_attr_mod(&f, lost)), 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(res.r[sent_attr_mod(&f, lost)].status, 0);
	CHECK_EQ(res.r[sent_attr_mod(&f, lost)].calls, 1);
	CHECK_EQ(txn_cancel_all(t), 0);
	txn_free(t);
	fake_fini(&f);
}

/*
 * The floor: loss after loss never takes it lower, and a try lost with no
 * more than the floor in flight does not shrink it (a dead port asked
 * alone, random loss at low load)
 */
static void test_window_floor(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;
	size_t lost;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn_min(&f, 32, 3, 60000, 3);
	for (unsigned int i = 0; i < 800; i++)
		submit(t, &res, i, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	for (int round = 0; round < 4; round++)
		answer_all(t, &f);
	CHECK_EQ(window_of(t).size, 32);
	for (int event = 0; event < 8; event++) {
		unsigned int was;

		/*
		 * Every try answered, a new burst goes out with 1, 2, ... in
		 * flight: the 4th is lost. A switch that holds 3: half the
		 * window each time, down to the floor and no further.
		 */
		answer_all(t, &f);
		was = window_of(t).size;
		CHECK_EQ(txn_outstanding(t), was);
		if (was < 4)
			continue;
		lost = f.nsent - was + 3;
		fake_push(&f, f.sent[lost].mad, MAD_SIZE, 110);
		f.sent[lost].answered = true;
		CHECK_EQ(txn_dispatch(t), 0);
		CHECK_EQ(window_of(t).size, was / 2 > 3 ? was / 2 : 3);
	}
	CHECK_EQ(window_of(t).size, 3);
	CHECK_EQ(f.min_window, 3);
	/* 32, 16, 8, 4, 3; then probes to 4 that fail */
	CHECK(window_of(t).shrinks >= 4);
	CHECK_EQ(txn_cancel_all(t), 0);
	txn_free(t);

	/* Lost with 1..floor in flight: no shrink at all */
	memset(&res, 0, sizeof(res));
	f.nsent = 0;
	t = new_txn_min(&f, 32, 4, 60000, 3);
	for (unsigned int i = 0; i < 4; i++)
		submit(t, &res, i, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 4);
	for (size_t i = 0; i < 4; i++) {
		fake_push(&f, f.sent[i].mad, MAD_SIZE, 110);
		f.sent[i].answered = true;
	}
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(txn_stats(t)->timeouts, 4);
	CHECK_EQ(window_of(t).shrinks, 0);
	CHECK_EQ(window_of(t).safe, 32);
	CHECK_EQ(txn_cancel_all(t), 0);
	txn_free(t);
	fake_fini(&f);
}

/*
 * A dead port: every try of one request is lost (reported at once, as
 * ibsim does). It shrinks the window once, not once a try, and the
 * window is back at the ceiling after the next answers.
 */
static void test_window_dead_port(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;
	unsigned int dead = 40;
	int guard = 0;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn_min(&f, 32, 4, 60000, 3);
	for (unsigned int i = 0; i < 2000; i++)
		submit(t, &res, i, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	while (res.completed < 2000 && guard++ < 5000) {
		for (size_t i = 0; i < f.nsent; i++) {
			if (f.sent[i].answered)
				continue;
			if (sent_attr_mod(&f, i) == dead) {
				fake_push(&f, f.sent[i].mad, MAD_SIZE, 110);
				f.sent[i].answered = true;
			} else {
				fake_answer(&f, i, 0);
			}
		}
		CHECK_EQ(txn_dispatch(t), 0);
	}
	CHECK_EQ(res.completed, 2000);
	CHECK_EQ(res.r[dead].status, -ETIMEDOUT);
	CHECK_EQ(txn_stats(t)->failed, 1);
	CHECK_EQ(txn_stats(t)->timeouts, TXN_LOSS_TRIES);
	CHECK_EQ(window_of(t).shrinks, 1);
	CHECK_EQ(window_of(t).size, 32);
	txn_free(t);
	fake_fini(&f);
}

/*
 * A switch that holds 8 SMPs and drops the rest without a word (the
 * simulator's vl15_shim.c in small): every request is answered, the
 * window settles near what the switch holds and asks for more only more
 * and more rarely, so that few SMPs are lost. A fixed window of 32 loses
 * three quarters of what it sends here.
 */
static void test_window_droptail(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;
	struct txn_window w;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SWITCH);
	f.hold = 8;
	t = new_txn_min(&f, 32, 2, 500, 3);
	for (unsigned int round = 0; round < 8; round++) {
		memset(&res, 0, sizeof(res));
		for (unsigned int i = 0; i < 1024; i++)
			submit(t, &res, i, SMP_ATTR_NODE_INFO);
		CHECK_EQ(txn_run(t), 0);
		CHECK_EQ(res.completed, 1024);
		for (unsigned int i = 0; i < 1024; i++)
			CHECK_EQ(res.r[i].status, 0);
	}
	w = window_of(t);
	fprintf(stderr, "  switch holding 8: %zu sent, %zu dropped, window %u (safe %u, "
		"%" PRIu64 " shrinks, %" PRIu64 " presumed lost)\n", f.nsent, f.dropped,
		w.size, w.safe, w.shrinks, txn_stats(t)->presumed);
	CHECK_EQ(f.max_held, 8);
	CHECK(f.max_window <= 32);
	CHECK(f.min_window >= 2);
	/* What the switch dropped is what the window sent past it: under 2% */
	CHECK_MSG(f.dropped * 50 < f.nsent, "%zu dropped of %zu sent", f.dropped, f.nsent);
	CHECK(w.safe >= 4 && w.safe <= 9);
	CHECK_EQ(txn_stats(t)->failed, 0);
	txn_free(t);
	fake_fini(&f);
}

/* Keep at least 64 requests waiting, so that the window always limits */
static void top_up(struct txn *t, struct results *res, unsigned int *next)
{
	while (txn_queued(t) < 64) {
		submit(t, res, *next % MAX_REQ, SMP_ATTR_NODE_INFO);
		(*next)++;
	}
}

/*
 * A fabric that held 4 for a while (another SM sweeping, say) and holds
 * more again: the window, which learnt to ask for more only rarely, is
 * soon back up, as each probe that holds halves the wait before the next.
 * Rounds are driven by hand (every try in flight answered at once, a loss
 * reported at once), so that what happens does not depend on the clock.
 */
static void test_window_recovers(void)
{
	static struct results res;
	unsigned int next = 0, rounds, probes_failed = 0;
	struct fake f;
	struct txn *t;
	size_t lost;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn_min(&f, 32, 2, 60000, 3);
	top_up(t, &res, &next);
	CHECK_EQ(txn_dispatch(t), 0);
	/* Holding 4: the fifth try of every burst is lost, down to 4 and probes failing */
	for (rounds = 0; rounds < 400 && probes_failed < 6; rounds++) {
		unsigned int size, safe;

		top_up(t, &res, &next);
		answer_all(t, &f);
		size = window_of(t).size;
		safe = window_of(t).safe;
		if (size < 5)
			continue;
		lost = f.nsent - size + 4;
		fake_push(&f, f.sent[lost].mad, MAD_SIZE, 110);
		f.sent[lost].answered = true;
		CHECK_EQ(txn_dispatch(t), 0);
		probes_failed += size == safe + 1 && safe == 4;
	}
	CHECK_EQ(probes_failed, 6);
	CHECK_EQ(window_of(t).safe, 4);
	/* Holding more: every try answered; each probe that holds shortens the wait */
	for (rounds = 0; rounds < 1000 && window_of(t).safe < 12; rounds++) {
		top_up(t, &res, &next);
		answer_all(t, &f);
	}
	fprintf(stderr, "  a fabric holding 4, then more: from 4 to 12 in %u rounds\n", rounds);
	/* 187 rounds here; 570 when each probe waits as long as the last */
	CHECK_MSG(rounds < 300, "%u rounds from 4 to 12 after 6 failed probes", rounds);
	CHECK_EQ(window_of(t).safe, 12);
	CHECK_EQ(txn_stats(t)->failed, 0);
	CHECK_EQ(txn_cancel_all(t), 0);
	txn_free(t);
	fake_fini(&f);
}

/*
 * A try presumed lost that is answered after all: the answer is taken when
 * it comes before the try went again; either way the fabric reorders more
 * than allowed for, and the allowance doubles
 */
static void test_window_spurious(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;
	size_t lost, before;
	unsigned int reo, id;
	uint64_t timeouts0;

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn_min(&f, 32, 4, 5000, 3);
	for (unsigned int i = 0; i < 200; i++)
		submit(t, &res, i, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	for (int round = 0; round < 3; round++)
		answer_all(t, &f);
	reo = window_of(t).reorder_us;
	CHECK(reo >= TXN_REORDER_MIN_US);
	/* Answer all but the 30th of the last 32; it goes again once presumed lost */
	before = f.nsent;
	lost = before - 32 + 29;
	id = sent_attr_mod(&f, lost);
	for (size_t i = before - 32; i < before; i++)
		if (i != lost)
			fake_answer(&f, i, 0);
	f.sent[lost].answered = true;	/* not yet */
	CHECK_EQ(txn_dispatch(t), 0);
	timeouts0 = txn_stats(t)->timeouts;
	CHECK(STEP_UNTIL(t, &f, presumed_or_timeout(t, timeouts0)));
	CHECK_EQ(txn_stats(t)->presumed, 1);
	/* Room in the window: it goes again */
	answer_all(t, &f);
	CHECK(last_try(&f, id) > lost);
	/* The late answer to the first try: not taken, but noted */
	fake_answer(&f, lost, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(res.r[id].calls, 0);
	CHECK_EQ(window_of(t).spurious, 1);
	CHECK(window_of(t).reorder_us >= 2 * TXN_REORDER_MIN_US);
	fake_answer(&f, last_try(&f, id), 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(res.r[id].status, 0);
	CHECK_EQ(txn_cancel_all(t), 0);
	txn_free(t);

	/* Presumed lost while the window is full: the answer comes before it goes again */
	memset(&res, 0, sizeof(res));
	f.nsent = 0;
	t = new_txn_min(&f, 32, 4, 5000, 3);
	for (unsigned int i = 0; i < 200; i++)
		submit(t, &res, i, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), 0);
	for (int round = 0; round < 3; round++)
		answer_all(t, &f);
	before = f.nsent;
	/* Only the newest is answered: the 31 before it will be presumed lost */
	fake_answer(&f, before - 1, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	timeouts0 = txn_stats(t)->timeouts;
	CHECK(STEP_UNTIL(t, &f, presumed_or_timeout(t, timeouts0)));
	/* The first went with 1 in flight: not the window's fault; the 5th was */
	CHECK_EQ(window_of(t).shrinks, 1);
	CHECK_EQ(window_of(t).size, 16);
	/* Tries presumed lost that could not go again yet are answered now */
	id = sent_attr_mod(&f, before - 2);
	CHECK_EQ(last_try(&f, id), before - 2);
	fake_answer(&f, before - 2, 0);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(res.r[id].calls, 1);
	CHECK_EQ(res.r[id].status, 0);
	CHECK(window_of(t).spurious >= 1);
	CHECK_EQ(txn_cancel_all(t), 0);
	txn_free(t);
	fake_fini(&f);
}

/*
 * The transport failing for good (issue 26): a receive error (the kernel
 * says EIO once the device is gone, and keeps a MAD it could not hand over),
 * or a send that says the device is gone, is returned by every dispatch
 * from then on; other send errors (EINVAL: the kernel's duplicate TID) are
 * retried like losses. A loss report of a class other than the SMPs' (a
 * Report the kernel timed out) is never taken for an SMP's.
 */
static void test_transport_errors(void)
{
	static struct results res;
	struct fake f;
	struct txn *t;
	uint8_t other[MAD_SIZE];

	memset(&res, 0, sizeof(res));
	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 4, 60000, 2);
	submit(t, &res, 1, SMP_ATTR_NODE_INFO);
	f.send_err = -EINVAL;
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 1);
	f.send_err = 0;
	/* An SA Report's loss report with the SMP's TID: not the SMP's */
	memcpy(other, f.sent[0].mad, MAD_SIZE);
	other[1] = MAD_CLASS_SA;
	fake_push(&f, other, MAD_SIZE, 110);
	CHECK_EQ(txn_dispatch(t), 0);
	CHECK_EQ(f.nsent, 1);
	CHECK_EQ(txn_stats(t)->timeouts, 0);
	/* The device goes away: every dispatch says so */
	f.recv_err = -EIO;
	CHECK_EQ(txn_dispatch(t), -EIO);
	f.recv_err = 0;
	CHECK_EQ(txn_dispatch(t), -EIO);
	txn_free(t);
	fake_fini(&f);

	fake_init(&f, FAKE_SILENT);
	t = new_txn(&f, 4, 60000, 2);
	f.send_err = -ENODEV;
	submit(t, &res, 2, SMP_ATTR_NODE_INFO);
	CHECK_EQ(txn_dispatch(t), -ENODEV);
	CHECK_EQ(txn_dispatch(t), -ENODEV);
	/* Still cancelled at shutdown: every callback once */
	CHECK_EQ(txn_cancel_all(t), 0);
	CHECK_EQ(res.r[2].calls, 1);
	txn_free(t);
	fake_fini(&f);
}

int main(void)
{
	RUN(test_new_rejects);
	RUN(test_window);
	RUN(test_run_window);
	RUN(test_drain);
	RUN(test_refused);
	RUN(test_tid_high_bits);
	RUN(test_timeouts);
	RUN(test_busy_machine);
	RUN(test_late_answer);
	RUN(test_send_status);
	RUN(test_bad_status);
	RUN(test_unsolicited);
	RUN(test_class_handler);
	RUN(test_reentrancy);
	RUN(test_unencodable);
	RUN(test_cancel);
	RUN(test_mkey);
	RUN(test_window_grow);
	RUN(test_window_lossless);
	RUN(test_window_shrink_timeout);
	RUN(test_window_shrink_loss);
	RUN(test_window_floor);
	RUN(test_window_dead_port);
	RUN(test_window_droptail);
	RUN(test_window_recovers);
	RUN(test_window_spurious);
	RUN(test_transport_errors);
	return unit_report();
}
