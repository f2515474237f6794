// SPDX-License-Identifier: MIT
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/txn.h"

#define SLOT_NONE	UINT32_MAX
#define TID_SLOT_BITS	16

struct txn_slot {
	struct smp req;
	uint8_t wire[MAD_SIZE];
	txn_cb cb;
	void *arg;
	uint64_t deadline;
	uint64_t give_up;	/* reported losses are retried until then */
	uint32_t tid;		/* low 32 bits: (generation << 16) | slot */
	uint32_t prev, next;	/* the in-flight list, oldest deadline first */
	uint16_t dlid;		/* LID-routed requests */
	uint16_t gen;
	uint8_t tries;
	uint8_t silent;		/* tries that timed out without a word */
	bool busy;
};

struct txn_pending {
	struct smp req;
	uint16_t dlid;
	txn_cb cb;
	void *arg;
};

struct txn {
	const struct txn_ops *ops;
	void *ctx;
	struct txn_cfg cfg;
	struct txn_slot *slots;
	uint32_t *free_slots;
	unsigned int nfree;
	uint32_t head, tail;	/* in-flight list */
	struct txn_pending *queue;	/* ring of requests waiting for a slot */
	size_t qcap, qhead, qlen;
	uint32_t tid_high;
	txn_unsolicited_cb unsolicited;
	void *unsolicited_arg;
	txn_mkey_cb mkey;
	void *mkey_arg;
	struct txn_stats stats;
	int err;		/* the transport failed for good (mad_port_fatal): -errno */
	bool in_dispatch;	/* a callback must not re-enter dispatch */
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
		return txn_free(t), -ENOMEM;
	for (unsigned int i = 0; i < cfg->window; i++)
		t->free_slots[t->nfree++] = cfg->window - 1 - i;
	t->head = t->tail = SLOT_NONE;
	t->tid_high = (uint32_t)txn_now_us() | 1;
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

static void list_unlink(struct txn *t, uint32_t i)
{
	struct txn_slot *s = &t->slots[i];

	if (s->prev != SLOT_NONE)
		t->slots[s->prev].next = s->next;
	else
		t->head = s->next;
	if (s->next != SLOT_NONE)
		t->slots[s->next].prev = s->prev;
	else
		t->tail = s->prev;
	s->prev = s->next = SLOT_NONE;
}

static void list_append(struct txn *t, uint32_t i)
{
	struct txn_slot *s = &t->slots[i];

	s->prev = t->tail;
	s->next = SLOT_NONE;
	if (t->tail != SLOT_NONE)
		t->slots[t->tail].next = i;
	else
		t->head = i;
	t->tail = i;
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
	s->deadline = txn_now_us() + (uint64_t)t->cfg.timeout_ms * 1000u;
	list_append(t, i);
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

	list_unlink(t, i);
	s->busy = false;
	t->free_slots[t->nfree++] = i;
	if (cb)
		cb(arg, status, &req, resp);
}

static void fill_window(struct txn *t)
{
	while (t->qlen && t->nfree) {
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
		s->busy = true;
		s->give_up = txn_now_us() +
			     (uint64_t)(t->cfg.retries + 1) * t->cfg.timeout_ms * 1000u;
		if (t->mkey)
			s->req.mkey = t->mkey(t->mkey_arg, &s->req, s->req.hdr.mgmt_class ==
					      MAD_CLASS_SMI_DR ? 0 : s->dlid);
		if (smp_encode(&s->req, s->wire) < 0) {
			/* Caller built an impossible SMP: fail it, never send it */
			s->tries = 1;
			list_append(t, i);
			t->stats.failed++;
			slot_complete(t, i, -EINVAL, NULL);
			continue;
		}
		slot_transmit(t, i);
	}
}

/*
 * A try that timed out silently uses one of cfg.retries, however late the
 * loop noticed it (a busy machine must not cost a request its retries). A
 * loss the transport reports (ibsim at once, a kernel after its send
 * timeout) is retried at once, up to TXN_LOSS_TRIES tries, as long as the
 * request is younger than (retries + 1) timeouts: on a lossy fabric many
 * cheap retries get every SMP through, while a request's time stays bounded.
 */
static void slot_expire(struct txn *t, uint32_t i, bool reported)
{
	struct txn_slot *s = &t->slots[i];
	bool again;

	t->stats.timeouts++;
	if (reported)
		again = txn_now_us() < s->give_up && s->tries < TXN_LOSS_TRIES;
	else
		again = ++s->silent <= t->cfg.retries;
	if (again) {
		list_unlink(t, i);
		t->stats.retries++;
		slot_transmit(t, i);
		return;
	}
	t->stats.failed++;
	slot_complete(t, i, -ETIMEDOUT, NULL);
}

static struct txn_slot *slot_lookup(struct txn *t, uint64_t tid, uint32_t *idx)
{
	uint32_t low = (uint32_t)tid, i = low & ((1u << TID_SLOT_BITS) - 1);

	if (i >= t->cfg.window || !t->slots[i].busy || t->slots[i].tid != low)
		return NULL;
	*idx = i;
	return &t->slots[i];
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
	if (send_status) {
		/*
		 * The transport gave our own request back: lost on the way. Only
		 * an SMP is ours here: the SA's Reports come back the same way
		 * when the kernel times them out, with TIDs of their own.
		 */
		if ((mclass == MAD_CLASS_SMI || mclass == MAD_CLASS_SMI_DR) &&
		    slot_lookup(t, tid, &i))
			slot_expire(t, i, true);
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
		t->stats.unmatched++;
		return;
	}
	t->stats.answered++;
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
		while (t->head != SLOT_NONE && t->slots[t->head].deadline <= now)
			slot_expire(t, t->head, false);
		fill_window(t);
	}
	t->in_dispatch = false;
	return r < 0 ? r : t->err;
}

int txn_next_timeout_ms(const struct txn *t)
{
	uint64_t now, d;

	if (t->head == SLOT_NONE)
		return t->qlen ? 0 : -1;
	now = txn_now_us();
	d = t->slots[t->head].deadline;
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
		while (t->head != SLOT_NONE) {
			t->stats.cancelled++;
			slot_complete(t, t->head, -ECANCELED, NULL);
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
