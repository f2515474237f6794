// SPDX-License-Identifier: MIT
/* GMP transactions (gmp.h): a fixed window, own TIDs, timeouts and retries. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "mad/gmp.h"
#include "mad/port.h"
#include "mad/slot_list.h"
#include "mad/txn.h"

#define TID_SLOT_BITS	16

struct gmp_slot {
	uint8_t wire[MAD_SIZE];
	gmp_cb cb;
	void *arg;
	uint64_t deadline;
	uint32_t tid;		/* low 32 bits: (generation << 16) | slot */
	uint32_t qpn;
	uint32_t prev, next;	/* in flight, oldest first; or on the resend list */
	uint16_t dlid;
	uint16_t gen;
	uint8_t tries;
	bool busy;
	bool resend;		/* the transport gave it back: sent again by gmp_dispatch */
};

struct gmp_pending {
	uint8_t wire[MAD_SIZE];
	uint16_t dlid;
	uint32_t qpn;
	gmp_cb cb;
	void *arg;
};

struct gmp_list {
	uint32_t head, tail;
};

struct gmp_txn {
	const struct gmp_ops *ops;
	void *ctx;
	struct gmp_cfg cfg;
	struct gmp_slot *slots;
	uint32_t *free_slots;
	unsigned int nfree;
	struct gmp_list flight;		/* in the order sent: deadlines ascend */
	struct gmp_list lost;		/* given back by the transport, to send again */
	struct gmp_pending *queue;	/* ring of requests waiting for a slot */
	size_t qcap, qhead, qlen;
	uint32_t tid_high;
	struct gmp_stats stats;
	int err;
	bool in_dispatch;
};

int gmp_new(const struct gmp_ops *ops, void *ctx, const struct gmp_cfg *cfg, struct gmp_txn **out)
{
	struct gmp_txn *t;

	if (!ops || !cfg || cfg->window < 1 || cfg->window > GMP_WINDOW_MAX ||
	    cfg->timeout_ms < 1 || cfg->retries > 100)
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
		return gmp_free(t), -ENOMEM;
	for (unsigned int i = 0; i < cfg->window; i++)
		t->free_slots[t->nfree++] = cfg->window - 1 - i;
	t->flight.head = t->flight.tail = SLOT_NONE;
	t->lost.head = t->lost.tail = SLOT_NONE;
	/* Another process's (or an earlier smd's) answers do not match ours */
	t->tid_high = (uint32_t)(txn_now_us() >> 3) | 0x80000000u;
	*out = t;
	return 0;
}

struct gmp_txn *gmp_free(struct gmp_txn *t)
{
	if (!t)
		return NULL;
	free(t->slots);
	free(t->free_slots);
	free(t->queue);
	free(t);
	return NULL;
}

int gmp_submit(struct gmp_txn *t, const uint8_t req[MAD_SIZE], uint16_t dlid, uint32_t qpn,
	       gmp_cb cb, void *arg)
{
	struct gmp_pending *p;

	if (t->qlen == t->qcap) {
		size_t ncap = t->qcap ? t->qcap * 2 : 64;
		struct gmp_pending *nq = malloc(ncap * sizeof(*nq));

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
	memcpy(p->wire, req, MAD_SIZE);
	p->dlid = dlid;
	p->qpn = qpn;
	p->cb = cb;
	p->arg = arg;
	t->qlen++;
	return 0;
}

SLOT_LIST_DEFINE(gmp_txn, gmp_list)

static void slot_transmit(struct gmp_txn *t, uint32_t i)
{
	struct gmp_slot *s = &t->slots[i];
	uint64_t tid;
	int r;

	/* A TID per try: a late answer to an earlier try is not taken for this one */
	s->gen++;
	s->tid = ((uint32_t)s->gen << TID_SLOT_BITS) | i;
	tid = (uint64_t)t->tid_high << 32 | s->tid;
	wire_bits_set(s->wire, 64, 64, tid);
	s->tries++;
	s->deadline = txn_now_us() + (uint64_t)t->cfg.timeout_ms * 1000u;
	list_append(t, &t->flight, i);
	t->stats.sent++;
	/* A failed send is a lost try: its deadline brings the retry */
	r = t->ops->send(t->ctx, s->wire, s->dlid, s->qpn, (int)t->cfg.timeout_ms);
	if (r < 0 && mad_port_fatal(r) && !t->err)
		t->err = r;
}

static void slot_complete(struct gmp_txn *t, uint32_t i, int status, const uint8_t *resp)
{
	struct gmp_slot *s = &t->slots[i];
	uint8_t req[MAD_SIZE];
	gmp_cb cb = s->cb;
	void *arg = s->arg;

	if (s->resend)
		list_unlink(t, &t->lost, i);
	else
		list_unlink(t, &t->flight, i);
	s->resend = false;
	s->busy = false;
	memcpy(req, s->wire, MAD_SIZE);
	t->free_slots[t->nfree++] = i;
	if (cb)
		cb(arg, status, req, resp);
}

/* A try is lost (its deadline passed, or the transport gave it back): again, or give up */
static void slot_lost(struct gmp_txn *t, uint32_t i, bool reported)
{
	struct gmp_slot *s = &t->slots[i];

	t->stats.timeouts++;
	if (s->tries > t->cfg.retries) {
		t->stats.failed++;
		slot_complete(t, i, -ETIMEDOUT, NULL);
		return;
	}
	t->stats.retries++;
	list_unlink(t, &t->flight, i);
	if (reported) {
		/* Sent again from gmp_dispatch, not from inside the receive path */
		s->resend = true;
		list_append(t, &t->lost, i);
		return;
	}
	slot_transmit(t, i);
}

static struct gmp_slot *slot_lookup(struct gmp_txn *t, uint64_t tid, uint32_t *idx)
{
	uint32_t low = (uint32_t)tid, i = low & ((1u << TID_SLOT_BITS) - 1);

	if (i >= t->cfg.window || !t->slots[i].busy || t->slots[i].resend ||
	    t->slots[i].tid != low)
		return NULL;
	*idx = i;
	return &t->slots[i];
}

void gmp_receive(struct gmp_txn *t, const uint8_t *mad, size_t len, int send_status)
{
	struct mad_summary m, q;
	struct gmp_slot *s;
	uint32_t i = 0;

	if (mad_summarize(mad, len, &m) < 0) {
		t->stats.malformed++;
		return;
	}
	s = slot_lookup(t, m.tid, &i);
	if (s)
		mad_summarize(s->wire, MAD_SIZE, &q);
	if (send_status) {
		/*
		 * Our own request, given back undelivered (ibsim at once, a
		 * kernel after its timeout): the MAD layer owns the TID's high
		 * bits, the rest is as sent
		 */
		if (s && m.method == q.method && m.mgmt_class == q.mgmt_class &&
		    m.attr_id == q.attr_id && m.attr_mod == q.attr_mod)
			slot_lost(t, i, true);
		else
			t->stats.unmatched++;
		return;
	}
	/* A GMP is a whole MAD; a GetResp, of the request's class version (IBA 13.4.5) */
	if (len != MAD_SIZE || mad[0] != 1 || !(m.method & MAD_METHOD_RESP_BIT)) {
		t->stats.malformed++;
		return;
	}
	if (!s) {
		t->stats.unmatched++;
		return;
	}
	if (m.method != MAD_METHOD_GET_RESP || m.mgmt_class != q.mgmt_class ||
	    mad[2] != s->wire[2] || m.attr_id != q.attr_id || m.attr_mod != q.attr_mod) {
		/* The TID is ours, the rest is not: dropped, the request waits on */
		t->stats.unmatched++;
		return;
	}
	t->stats.answered++;
	if (m.status) {
		t->stats.bad_status++;
		slot_complete(t, i, -EREMOTEIO, mad);
	} else {
		slot_complete(t, i, 0, mad);
	}
}

int gmp_dispatch(struct gmp_txn *t)
{
	uint64_t now;

	if (t->in_dispatch)
		return -EBUSY;
	if (t->err)
		return t->err;
	t->in_dispatch = true;
	now = txn_now_us();
	while (t->flight.head != SLOT_NONE && t->slots[t->flight.head].deadline <= now)
		slot_lost(t, t->flight.head, false);
	while (t->lost.head != SLOT_NONE) {
		uint32_t i = t->lost.head;

		list_unlink(t, &t->lost, i);
		t->slots[i].resend = false;
		slot_transmit(t, i);
	}
	while (t->qlen && t->nfree) {
		struct gmp_pending *p = &t->queue[t->qhead];
		uint32_t i = t->free_slots[--t->nfree];
		struct gmp_slot *s = &t->slots[i];

		memcpy(s->wire, p->wire, MAD_SIZE);
		s->dlid = p->dlid;
		s->qpn = p->qpn;
		s->cb = p->cb;
		s->arg = p->arg;
		s->tries = 0;
		s->busy = true;
		s->resend = false;
		t->qhead = (t->qhead + 1) % t->qcap;
		t->qlen--;
		/* A response is no request: never sent */
		if (s->wire[3] & MAD_METHOD_RESP_BIT) {
			list_append(t, &t->flight, i);
			t->stats.failed++;
			slot_complete(t, i, -EINVAL, NULL);
			continue;
		}
		slot_transmit(t, i);
	}
	t->in_dispatch = false;
	return t->err;
}

int gmp_next_timeout_ms(const struct gmp_txn *t)
{
	uint64_t now, d;

	if (t->lost.head != SLOT_NONE || (t->qlen && t->nfree))
		return 0;
	if (t->flight.head == SLOT_NONE)
		return -1;
	now = txn_now_us();
	d = t->slots[t->flight.head].deadline;
	return d <= now ? 0 : (int)((d - now + 999) / 1000);
}

unsigned int gmp_outstanding(const struct gmp_txn *t)
{
	return t->cfg.window - t->nfree;
}

size_t gmp_queued(const struct gmp_txn *t)
{
	return t->qlen;
}

bool gmp_idle(const struct gmp_txn *t)
{
	return !t->qlen && t->nfree == t->cfg.window;
}

int gmp_cancel_all(struct gmp_txn *t)
{
	if (t->in_dispatch)
		return -EBUSY;
	t->in_dispatch = true;
	/* Callbacks that submit again are cancelled too, a bounded number of rounds */
	for (unsigned int round = 0; round < 8 && !gmp_idle(t); round++) {
		size_t waiting = t->qlen;

		while (t->flight.head != SLOT_NONE || t->lost.head != SLOT_NONE) {
			t->stats.cancelled++;
			slot_complete(t, t->flight.head != SLOT_NONE ? t->flight.head :
				      t->lost.head, -ECANCELED, NULL);
		}
		for (; waiting; waiting--) {
			struct gmp_pending p = t->queue[t->qhead];

			t->qhead = (t->qhead + 1) % t->qcap;
			t->qlen--;
			t->stats.cancelled++;
			if (p.cb)
				p.cb(p.arg, -ECANCELED, p.wire, NULL);
		}
	}
	t->stats.cancelled += t->qlen;
	t->qhead = t->qlen = 0;
	t->in_dispatch = false;
	return 0;
}

const struct gmp_stats *gmp_stats(const struct gmp_txn *t)
{
	return &t->stats;
}
