// SPDX-License-Identifier: MIT
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/txn.h"
#include "mad/slot_list.h"

#define TID_SLOT_BITS	16

enum loss {
	LOSS_SILENT,		/* its deadline passed without a word */
	LOSS_REPORTED,		/* the transport gave it back */
	LOSS_PRESUMED,		/* tries sent after it were answered */
};

struct txn_slot {
	struct smp req;
	uint8_t wire[MAD_SIZE];
	txn_cb cb;
	void *arg;
	uint64_t deadline;
	uint64_t give_up;	/* reported losses are retried until then */
	uint64_t sent_us;	/* this try's transmission */
	uint64_t seq;		/* its place among all transmissions, from 1 */
	uint32_t tid;		/* low 32 bits: (generation << 16) | slot */
	uint32_t prev, next;	/* in flight (oldest first) or waiting to be sent again */
	uint16_t dlid;		/* LID-routed requests */
	uint16_t gen;
	uint16_t inflight;	/* tries in flight when this one went, itself included */
	uint8_t tries;
	uint8_t silent;		/* tries that timed out without a word */
	uint8_t presumed;	/* tries presumed lost */
	bool signalled;		/* one of its losses already counted against the window */
	bool last_presumed;	/* the try before this one was presumed lost */
	bool waiting;		/* lost, on the resend list */
	bool busy;
};

struct txn_pending {
	struct smp req;
	uint16_t dlid;
	txn_cb cb;
	void *arg;
};

struct txn_list {
	uint32_t head, tail;
};

struct txn {
	const struct txn_ops *ops;
	void *ctx;
	struct txn_cfg cfg;
	struct txn_slot *slots;
	uint32_t *free_slots;
	unsigned int nfree;
	struct txn_list flight;	/* in flight, in the order sent: deadlines ascend */
	struct txn_list resend;	/* lost, waiting for room in the window (adaptive) */
	unsigned int nresend;
	struct txn_pending *queue;	/* ring of requests waiting for a slot */
	size_t qcap, qhead, qlen;
	uint32_t tid_high;
	txn_unsolicited_cb unsolicited;
	void *unsolicited_arg;
	txn_mkey_cb mkey;
	void *mkey_arg;
	txn_class_cb class_cb;
	void *class_arg;
	uint8_t class_id;
	struct txn_stats stats;
	int err;		/* the transport failed for good (mad_port_fatal): -errno */
	bool in_dispatch;	/* a callback must not re-enter dispatch */

	/* The window (fixed unless cfg.window_min < cfg.window) */
	bool adaptive;
	unsigned int cwnd;	/* tries allowed in flight */
	unsigned int ssthresh;	/* grow by one an answer up to here, probe above */
	unsigned int probe_rounds;	/* rounds at a size before the next probe */
	unsigned int rounds;	/* rounds completed at this size */
	uint64_t round_end;	/* a round ends when every try sent before this is done */
	bool limited;		/* the last fill left tries waiting for room */
	uint64_t seq;		/* transmissions so far */
	uint64_t recover_seq;	/* a loss of a try sent before this is the last shrink's */
	/* Loss by order: the latest sent try that was answered, and its round trip */
	uint64_t rack_seq, rack_rtt_us;
	uint64_t srtt_us;
	uint64_t reorder_us;
	struct txn_window win;	/* counters for txn_window_get */
};

uint64_t txn_now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

int txn_new(const struct txn_ops *ops, void *ctx, const struct txn_cfg *cfg, struct txn **out)
{
	struct txn *t;

	if (!ops || !cfg || cfg->window < 1 || cfg->window > TXN_WINDOW_MAX ||
	    cfg->window_min > cfg->window || cfg->timeout_ms < 1 || cfg->retries > 100)
		return -EINVAL;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->ops = ops;
	t->ctx = ctx;
	t->cfg = *cfg;
	t->slots = calloc(cfg->window, sizeof(*t->slots));
	t->free_slots = calloc(cfg->window, sizeof(*t->free_slots));
	if (!t->slots || !t->free_slots)
		return txn_free(t), -ENOMEM;
	for (unsigned int i = 0; i < cfg->window; i++)
		t->free_slots[t->nfree++] = cfg->window - 1 - i;
	t->flight.head = t->flight.tail = SLOT_NONE;
	t->resend.head = t->resend.tail = SLOT_NONE;
	t->tid_high = (uint32_t)txn_now_us() | 1;
	t->adaptive = cfg->window_min && cfg->window_min < cfg->window;
	if (!t->adaptive)
		t->cfg.window_min = cfg->window;
	/* From the floor, doubling each round trip until the first loss */
	t->cwnd = t->cfg.window_min;
	t->ssthresh = cfg->window;
	t->probe_rounds = 1;
	t->reorder_us = TXN_REORDER_MIN_US;
	*out = t;
	return 0;
}

struct txn *txn_free(struct txn *t)
{
	if (!t)
		return NULL;
	free(t->slots);
	free(t->free_slots);
	free(t->queue);
	free(t);
	return NULL;
}

void txn_set_unsolicited(struct txn *t, txn_unsolicited_cb cb, void *arg)
{
	t->unsolicited = cb;
	t->unsolicited_arg = arg;
}

void txn_set_class_handler(struct txn *t, uint8_t mclass, txn_class_cb cb, void *arg)
{
	t->class_id = mclass;
	t->class_cb = cb;
	t->class_arg = arg;
}

void txn_set_mkey(struct txn *t, txn_mkey_cb cb, void *arg)
{
	t->mkey = cb;
	t->mkey_arg = arg;
}

int txn_submit(struct txn *t, const struct smp *req, uint16_t dlid, txn_cb cb, void *arg)
{
	struct txn_pending *p;

	if (t->qlen == t->qcap) {
		size_t ncap = t->qcap ? t->qcap * 2 : 256;
		struct txn_pending *nq = malloc(ncap * sizeof(*nq));

		if (!nq)
			return -ENOMEM;
		for (size_t i = 0; i < t->qlen; i++)
			nq[i] = t->queue[(t->qhead + i) % t->qcap];
		free(t->queue);
		t->queue = nq;
		t->qcap = ncap;
		t->qhead = 0;
	}
	p = &t->queue[(t->qhead + t->qlen) % t->qcap];
	p->req = *req;
	p->dlid = dlid;
	p->cb = cb;
	p->arg = arg;
	t->qlen++;
	return 0;
}

SLOT_LIST_DEFINE(txn, txn_list)

/* Tries on the wire: held slots but those waiting to be sent again */
static unsigned int in_flight(const struct txn *t)
{
	return t->cfg.window - t->nfree - t->nresend;
}

static void slot_transmit(struct txn *t, uint32_t i)
{
	struct txn_slot *s = &t->slots[i];
	bool dr = s->req.hdr.mgmt_class == MAD_CLASS_SMI_DR;
	uint16_t dlid = dr ? LID_PERMISSIVE : s->dlid;
	int r;

	/*
	 * Every try gets its own TID so that a late answer, or a late loss
	 * report, for an earlier try cannot be mistaken for this one.
	 */
	s->gen++;
	s->tid = ((uint32_t)s->gen << TID_SLOT_BITS) | i;
	s->req.hdr.tid = ((uint64_t)t->tid_high << 32) | s->tid;
	wire_bits_set(s->wire, 64, 64, s->req.hdr.tid);
	s->tries++;
	s->sent_us = txn_now_us();
	s->seq = ++t->seq;
	s->deadline = s->sent_us + (uint64_t)t->cfg.timeout_ms * 1000u;
	list_append(t, &t->flight, i);
	s->inflight = (uint16_t)in_flight(t);
	t->stats.sent++;
	/*
	 * A failed send is retried like a lost one: the deadline covers it.
	 * One that says the device is gone ends the dispatching (txn_dispatch).
	 */
	r = t->ops->send(t->ctx, s->wire, dr, dlid, (int)t->cfg.timeout_ms);
	if (r < 0 && mad_port_fatal(r) && !t->err)
		t->err = r;
}

static void slot_complete(struct txn *t, uint32_t i, int status, const struct smp *resp)
{
	struct txn_slot *s = &t->slots[i];
	struct smp req = s->req;
	txn_cb cb = s->cb;
	void *arg = s->arg;

	if (s->waiting) {
		list_unlink(t, &t->resend, i);
		t->nresend--;
		s->waiting = false;
	} else {
		list_unlink(t, &t->flight, i);
	}
	s->busy = false;
	t->free_slots[t->nfree++] = i;
	if (cb)
		cb(arg, status, &req, resp);
}

/*
 * The adaptive window. SMPs travel on VL15, which has no flow control: a
 * switch drops what its VL15 buffers cannot hold, silently, and every SMP
 * and its answer cross the SM's first switch. How many a fabric holds is
 * not advertised, so the window learns it, as TCP's congestion window does:
 *
 * - It starts at the floor and grows by one for each answer (doubling
 *   every round trip) up to ssthresh, the size known to be answered
 *   without loss; above that it probes: one more after probe_rounds
 *   rounds at a size (a round: every try sent since the last one is done,
 *   answered or found lost, so that a size is judged only once its
 *   losses could have been seen). A size that holds its rounds is known
 *   good; a probe that fails doubles probe_rounds (up to
 *   TXN_PROBE_ROUNDS_MAX), one that holds halves them: a fabric that
 *   holds N is asked for N + 1 more and more rarely, one that held less
 *   for a while (another SM sweeping) is soon used again. It grows only while
 *   it limits (the last time it was filled, requests were left waiting):
 *   answers that came while it was not full say nothing of its size.
 * - A loss shrinks it sharply, to half, never below the floor, and makes
 *   the known-good size less than the number of tries in flight when the
 *   lost one went (a switch that drops the ninth holds eight), but not
 *   below half the window (one loss may be no congestion: a dead port).
 *   It then grows back to the known-good size at once. Losses of tries
 *   sent before the shrink are the same event (one shrink per round
 *   trip), and their answers do not make it grow. Only a request's first
 *   loss counts:
 *   a dead port, whose tries are all lost, costs one shrink, not one a
 *   retry. A try lost with no more in flight than the floor says nothing
 *   about the window (the floor is taken to be safe): a dead port probed
 *   alone, random loss at low load.
 * - Silent drops cost a timeout (smp_timeout_ms), far longer than a round
 *   trip, so a try is presumed lost when a try sent after it has been
 *   answered and it is still unanswered reorder_us after the time that one
 *   took (SMPs to one destination keep their order; to different ones they
 *   may pass each other by the difference in their latency). A presumed
 *   loss counts and is retried like a reported one; an answer to a try
 *   presumed lost, late, doubles reorder_us (up to a quarter of the
 *   timeout). At most TXN_PRESUME_TRIES tries of a request are presumed
 *   lost; later ones wait for their deadline.
 * - Lost tries are sent again only when the window has room.
 *
 * A fixed window (floor = ceiling) does none of this: lost tries are sent
 * again at once and only deadlines and reports say what is lost.
 */
static void window_answered(struct txn *t, const struct txn_slot *s, uint64_t now)
{
	uint64_t rtt = now > s->sent_us ? now - s->sent_us : 0;

	if (!t->adaptive)
		return;
	if (s->seq > t->rack_seq) {
		t->rack_seq = s->seq;
		t->rack_rtt_us = rtt;
	}
	t->srtt_us = t->srtt_us ? t->srtt_us - t->srtt_us / 8 + rtt / 8 : rtt;
	/* Tries sent before the last shrink went into the congestion: no growth */
	if (!t->limited || s->seq < t->recover_seq)
		return;
	if (t->cwnd < t->ssthresh) {
		if (++t->cwnd == t->ssthresh)
			t->round_end = t->seq + 1 + t->cwnd;
		return;
	}
	/* The oldest try not done yet, this one aside, ends the round or not */
	for (uint32_t i = t->flight.head; i != SLOT_NONE; i = t->slots[i].next)
		if (&t->slots[i] != s) {
			if (t->slots[i].seq < t->round_end)
				return;
			break;
		}
	t->round_end = t->seq + 1 + t->cwnd;
	if (++t->rounds < t->probe_rounds)
		return;
	/* This size held its rounds without a loss: it is known good; one more */
	t->rounds = 0;
	if (t->cwnd > t->ssthresh) {
		/* A probe held: the fabric may hold more than it did */
		t->ssthresh = t->cwnd;
		if (t->probe_rounds > 1)
			t->probe_rounds /= 2;
	}
	if (t->cwnd < t->cfg.window)
		t->cwnd++;
}

static void window_lost(struct txn *t, struct txn_slot *s)
{
	unsigned int floor = t->cfg.window_min, cap, half = t->cwnd / 2, was = t->cwnd;

	if (!t->adaptive || s->signalled || s->seq < t->recover_seq || s->inflight <= floor)
		return;
	s->signalled = true;
	if (t->cwnd > t->ssthresh && t->probe_rounds < TXN_PROBE_ROUNDS_MAX)
		t->probe_rounds *= 2;	/* a probe failed */
	cap = s->inflight - 1u < t->cwnd - 1u ? s->inflight - 1u : t->cwnd - 1u;
	if (cap < half)
		cap = half;
	t->ssthresh = cap > floor ? cap : floor;
	t->cwnd = half > floor ? half : floor;
	t->rounds = 0;
	t->recover_seq = t->seq + 1;
	t->round_end = t->seq + 1 + t->cwnd;
	if (t->cwnd < was) {
		t->win.shrinks++;
		t->win.last_shrink_us = txn_now_us();
	}
}

static void fill_window(struct txn *t)
{
	/* Lost tries first: they are the oldest requests */
	while (t->resend.head != SLOT_NONE && in_flight(t) < t->cwnd) {
		uint32_t i = t->resend.head;

		list_unlink(t, &t->resend, i);
		t->nresend--;
		t->slots[i].waiting = false;
		slot_transmit(t, i);
	}
	while (t->qlen && t->nfree && in_flight(t) < t->cwnd) {
		struct txn_pending *p = &t->queue[t->qhead];
		uint32_t i = t->free_slots[--t->nfree];
		struct txn_slot *s = &t->slots[i];

		s->req = p->req;
		s->dlid = p->dlid;
		s->cb = p->cb;
		s->arg = p->arg;
		t->qhead = (t->qhead + 1) % t->qcap;
		t->qlen--;
		s->tries = 0;
		s->silent = 0;
		s->presumed = 0;
		s->signalled = false;
		s->last_presumed = false;
		s->busy = true;
		s->give_up = txn_now_us() +
			     (uint64_t)(t->cfg.retries + 1) * t->cfg.timeout_ms * 1000u;
		if (t->mkey)
			s->req.mkey = t->mkey(t->mkey_arg, &s->req, s->req.hdr.mgmt_class ==
					      MAD_CLASS_SMI_DR ? 0 : s->dlid);
		if (smp_encode(&s->req, s->wire) < 0) {
			/* Caller built an impossible SMP: fail it, never send it */
			s->tries = 1;
			list_append(t, &t->flight, i);
			t->stats.failed++;
			slot_complete(t, i, -EINVAL, NULL);
			continue;
		}
		slot_transmit(t, i);
	}
	t->limited = t->qlen || t->resend.head != SLOT_NONE;
}

/*
 * A try that timed out silently uses one of cfg.retries, however late the
 * loop noticed it (a busy machine must not cost a request its retries). A
 * loss the transport reports (ibsim at once, a kernel after its send
 * timeout), or that the answers to later tries show, is retried at once
 * (adaptive: as soon as the window has room), up to TXN_LOSS_TRIES tries,
 * as long as the request is younger than (retries + 1) timeouts: on a
 * lossy fabric many cheap retries get every SMP through, while a request's
 * time stays bounded.
 */
static void slot_expire(struct txn *t, uint32_t i, enum loss why)
{
	struct txn_slot *s = &t->slots[i];
	bool again;

	t->stats.timeouts++;
	window_lost(t, s);
	if (why == LOSS_SILENT)
		again = ++s->silent <= t->cfg.retries;
	else
		again = txn_now_us() < s->give_up && s->tries < TXN_LOSS_TRIES;
	s->last_presumed = why == LOSS_PRESUMED;
	if (!again) {
		t->stats.failed++;
		slot_complete(t, i, -ETIMEDOUT, NULL);
		return;
	}
	list_unlink(t, &t->flight, i);
	t->stats.retries++;
	if (!t->adaptive) {
		slot_transmit(t, i);
		return;
	}
	list_append(t, &t->resend, i);
	t->nresend++;
	s->waiting = true;
}

static uint64_t reorder_window(const struct txn *t)
{
	return t->srtt_us > t->reorder_us ? t->srtt_us : t->reorder_us;
}

/*
 * The first try in flight that the answers to later ones will have shown
 * lost at its due time: a try sent before the latest sent try that was
 * answered, not presumed lost too often already (SLOT_NONE: none)
 */
static uint32_t next_presumable(const struct txn *t, uint64_t *due)
{
	uint64_t wait = t->rack_rtt_us + reorder_window(t);

	if (!t->adaptive)
		return SLOT_NONE;
	for (uint32_t i = t->flight.head; i != SLOT_NONE; i = t->slots[i].next) {
		const struct txn_slot *s = &t->slots[i];

		if (s->seq >= t->rack_seq)
			break;
		if (s->presumed >= TXN_PRESUME_TRIES)
			continue;
		*due = s->sent_us + wait;
		return i;
	}
	return SLOT_NONE;
}

static void presume_losses(struct txn *t, uint64_t now)
{
	uint64_t due;
	uint32_t i;

	/* The list is in the order sent: the first one not due ends it */
	while ((i = next_presumable(t, &due)) != SLOT_NONE && due <= now) {
		t->slots[i].presumed++;
		t->stats.presumed++;
		t->win.presumed++;
		slot_expire(t, i, LOSS_PRESUMED);
	}
}

static struct txn_slot *slot_lookup(struct txn *t, uint64_t tid, uint32_t *idx)
{
	uint32_t low = (uint32_t)tid, i = low & ((1u << TID_SLOT_BITS) - 1);

	if (i >= t->cfg.window || !t->slots[i].busy || t->slots[i].tid != low)
		return NULL;
	*idx = i;
	return &t->slots[i];
}

/* An answer came after its try was presumed lost: allow for more reordering */
static void reorder_late(struct txn *t)
{
	t->win.spurious++;
	if (t->reorder_us * 2 <= (uint64_t)t->cfg.timeout_ms * 250u)
		t->reorder_us *= 2;
}

/* A late answer to the try before the current one of a request presumed lost */
static void check_spurious(struct txn *t, const struct smp *resp)
{
	uint32_t low = (uint32_t)resp->hdr.tid, i = low & ((1u << TID_SLOT_BITS) - 1);
	const struct txn_slot *s;

	if (!t->adaptive || i >= t->cfg.window)
		return;
	s = &t->slots[i];
	if (!s->busy || !s->last_presumed ||
	    (uint16_t)(low >> TID_SLOT_BITS) != (uint16_t)(s->gen - 1) ||
	    resp->hdr.mgmt_class != s->req.hdr.mgmt_class ||
	    resp->hdr.attr_id != s->req.hdr.attr_id || resp->hdr.attr_mod != s->req.hdr.attr_mod)
		return;
	reorder_late(t);
}

static void handle_mad(struct txn *t, const uint8_t *buf, size_t len, const struct mad_addr *from,
		       int send_status)
{
	uint8_t mclass, method;
	uint64_t tid;
	struct smp resp;
	uint32_t i;

	if (mad_peek(buf, len, &mclass, &method, &tid) < 0) {
		t->stats.malformed++;
		return;
	}
	/* Another layer's class (the performance manager's GMPs): all of it goes there */
	if (t->class_cb && mclass == t->class_id && mclass != MAD_CLASS_SMI &&
	    mclass != MAD_CLASS_SMI_DR) {
		t->stats.passed++;
		t->class_cb(t->class_arg, buf, len, send_status);
		return;
	}
	if (send_status) {
		/*
		 * The transport gave our own request back: lost on the way. Only
		 * an SMP is ours here: the SA's Reports come back the same way
		 * when the kernel times them out, with TIDs of their own.
		 */
		if ((mclass == MAD_CLASS_SMI || mclass == MAD_CLASS_SMI_DR) &&
		    slot_lookup(t, tid, &i) && !t->slots[i].waiting)
			slot_expire(t, i, LOSS_REPORTED);
		else
			t->stats.unmatched++;
		return;
	}
	/*
	 * Not an SMP: requests, and responses to what others sent (an SA
	 * client's ReportResp to the SA's Report) go to the unsolicited handler
	 */
	if (!(method & MAD_METHOD_RESP_BIT) ||
	    (mclass != MAD_CLASS_SMI && mclass != MAD_CLASS_SMI_DR && t->unsolicited)) {
		if (t->unsolicited) {
			t->stats.unsolicited++;
			t->unsolicited(t->unsolicited_arg, buf, len, from);
		} else {
			t->stats.unmatched++;
		}
		return;
	}
	if (mclass != MAD_CLASS_SMI && mclass != MAD_CLASS_SMI_DR) {
		t->stats.unmatched++;
		return;
	}
	if (smp_decode(buf, len, &resp) < 0) {
		t->stats.malformed++;
		return;
	}
	if (!slot_lookup(t, tid, &i) || smp_check_response(&t->slots[i].req, &resp) < 0) {
		check_spurious(t, &resp);
		t->stats.unmatched++;
		return;
	}
	/* Presumed lost, and answered before it went again: take it */
	if (t->slots[i].waiting)
		reorder_late(t);
	t->stats.answered++;
	window_answered(t, &t->slots[i], txn_now_us());
	if (resp.hdr.status) {
		t->stats.bad_status++;
		slot_complete(t, i, -EREMOTEIO, &resp);
	} else {
		slot_complete(t, i, 0, &resp);
	}
}

int txn_dispatch(struct txn *t)
{
	uint8_t buf[MAD_SIZE];
	struct mad_addr from;
	uint64_t now;
	size_t len;
	int st, r = 0, n = 0;

	if (t->in_dispatch)
		return -EBUSY;
	if (t->err)
		return t->err;
	t->in_dispatch = true;

	/*
	 * Bounded per call so one flood cannot starve the timers. A receive
	 * error other than "nothing queued" is the transport's for good: the
	 * kernel keeps a MAD it could not hand over, and a device gone says
	 * -EIO to every read.
	 */
	while (n++ < 4096) {
		r = t->ops->recv(t->ctx, buf, &len, &from, &st);
		if (r == -EAGAIN || r == -EINTR) {
			r = 0;
			break;
		}
		if (r < 0) {
			t->err = r;
			break;
		}
		handle_mad(t, buf, len, &from, st);
	}
	if (r == 0) {
		now = txn_now_us();
		presume_losses(t, now);
		while (t->flight.head != SLOT_NONE && t->slots[t->flight.head].deadline <= now)
			slot_expire(t, t->flight.head, LOSS_SILENT);
		fill_window(t);
	}
	t->in_dispatch = false;
	return r < 0 ? r : t->err;
}

int txn_next_timeout_ms(const struct txn *t)
{
	uint64_t now, d, due;

	if (t->flight.head == SLOT_NONE)
		return t->qlen || t->nresend ? 0 : -1;
	now = txn_now_us();
	d = t->slots[t->flight.head].deadline;
	if (next_presumable(t, &due) != SLOT_NONE && due < d)
		d = due;
	return d <= now ? 0 : (int)((d - now + 999) / 1000);
}

unsigned int txn_outstanding(const struct txn *t)
{
	return t->cfg.window - t->nfree;
}

bool txn_idle(const struct txn *t)
{
	return t->qlen == 0 && t->nfree == t->cfg.window;
}

size_t txn_queued(const struct txn *t)
{
	return t->qlen;
}

/* Dispatch and poll while requests are outstanding and more than max wait */
static int run_while(struct txn *t, size_t max)
{
	struct pollfd pfd = { .fd = t->ops->fd(t->ctx), .events = POLLIN };
	int r;

	r = txn_dispatch(t);
	while (r == 0 && !txn_idle(t) && (max == SIZE_MAX || t->qlen > max)) {
		int to = txn_next_timeout_ms(t);

		r = poll(&pfd, 1, to);
		if (r < 0 && errno != EINTR)
			return -errno;
		r = txn_dispatch(t);
	}
	return r;
}

int txn_run(struct txn *t)
{
	return run_while(t, SIZE_MAX);
}

int txn_drain(struct txn *t, size_t max)
{
	return t->qlen > max ? run_while(t, max) : 0;
}

int txn_cancel_all(struct txn *t)
{
	if (t->in_dispatch)
		return -EBUSY;
	t->in_dispatch = true;	/* a callback must not dispatch meanwhile */
	for (unsigned int round = 0; !txn_idle(t); round++) {
		/* Only what waits now: what the callbacks queue is the next round's */
		size_t waiting = t->qlen;

		if (round == TXN_CANCEL_ROUNDS) {
			/* Callbacks that keep submitting: drop the rest, unseen */
			t->stats.cancelled += t->qlen;
			t->qhead = t->qlen = 0;
			break;
		}
		while (t->flight.head != SLOT_NONE || t->resend.head != SLOT_NONE) {
			t->stats.cancelled++;
			slot_complete(t, t->flight.head != SLOT_NONE ? t->flight.head :
				      t->resend.head, -ECANCELED, NULL);
		}
		for (; waiting; waiting--) {
			struct txn_pending p = t->queue[t->qhead];

			t->qhead = (t->qhead + 1) % t->qcap;
			t->qlen--;
			t->stats.cancelled++;
			if (p.cb)
				p.cb(p.arg, -ECANCELED, &p.req, NULL);
		}
	}
	t->in_dispatch = false;
	return 0;
}

const struct txn_stats *txn_stats(const struct txn *t)
{
	return &t->stats;
}

void txn_stats_reset(struct txn *t)
{
	memset(&t->stats, 0, sizeof(t->stats));
}

void txn_window_get(const struct txn *t, struct txn_window *w)
{
	*w = t->win;
	w->size = t->cwnd;
	w->min = t->cfg.window_min;
	w->max = t->cfg.window;
	w->safe = t->ssthresh;
	w->rtt_us = t->srtt_us > UINT32_MAX ? UINT32_MAX : (unsigned int)t->srtt_us;
	w->reorder_us = (unsigned int)reorder_window(t);
}

static int port_ops_send(void *ctx, const uint8_t mad[MAD_SIZE], bool dr, uint16_t dlid,
			 int timeout_ms)
{
	return mad_port_send(ctx, dr ? MAD_AGENT_SMI_DR : MAD_AGENT_SMI, mad, dlid, 0,
			     timeout_ms);
}

static int port_ops_recv(void *ctx, uint8_t mad[MAD_SIZE], size_t *len, struct mad_addr *from,
			 int *send_status)
{
	return mad_port_recv(ctx, mad, len, from, send_status);
}

static int port_ops_fd(void *ctx)
{
	return mad_port_fd(ctx);
}

const struct txn_ops txn_port_ops = {
	.send = port_ops_send,
	.recv = port_ops_recv,
	.fd = port_ops_fd,
};
