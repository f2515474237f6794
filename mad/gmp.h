/* SPDX-License-Identifier: MIT */
/*
 * GMP transactions (the performance manager's requests to PMAs): TIDs, a
 * fixed window of requests in flight, timeouts and retries owned here
 * (the simulator never reports a timeout), counters. The SMP layer
 * (txn.h) is not reused: its window adapts to VL15, which drops SMPs
 * without flow control, while GMPs ride the data VLs under credit flow
 * control; and a heavy sweep waits until every SMP is answered, which
 * GMPs must never make it do. Both share the port: txn_dispatch() hands
 * this layer the MADs of its class (txn_set_class_handler), and the
 * owner calls gmp_dispatch() in the same loop turn.
 *
 * Requests and answers are whole MADs as bytes: the caller encodes the
 * attribute (mad/pma.h) and decodes the answer; this layer matches an
 * answer by its header only (a GetResp of the request's class and class
 * version, attribute, modifier and TID).
 */
#ifndef SMD_MAD_GMP_H
#define SMD_MAD_GMP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/wire.h"

struct gmp_ops {
	/* One request to LID dlid, QP qpn; 0 or -errno (mad_port_fatal: the port is gone) */
	int (*send)(void *ctx, const uint8_t mad[MAD_SIZE], uint16_t dlid, uint32_t qpn,
		    int timeout_ms);
};

struct gmp_cfg {
	unsigned int window;		/* requests in flight at most, 1..GMP_WINDOW_MAX */
	unsigned int timeout_ms;	/* per try */
	unsigned int retries;		/* tries after the first, when one is lost */
};

#define GMP_WINDOW_MAX	4096

struct gmp_stats {
	uint64_t sent;		/* every transmission, retries included */
	uint64_t answered;	/* requests completed with an answer */
	uint64_t timeouts;	/* tries that expired or that the transport gave back */
	uint64_t retries;
	uint64_t failed;	/* requests that exhausted their tries */
	uint64_t bad_status;	/* answers with a non-zero MAD status */
	uint64_t malformed;	/* received MADs of the class that are no answer at all */
	uint64_t unmatched;	/* answers to nothing outstanding: late, unknown TID, another attribute */
	uint64_t cancelled;
};

/*
 * status: 0 (resp: an answer with MAD status 0), -EREMOTEIO (an answer
 * with a non-zero status), -ETIMEDOUT (no answer after the retries),
 * -ECANCELED (gmp_cancel_all), -EINVAL (not sent: not a request). resp is
 * NULL unless status is 0 or -EREMOTEIO; req is the request as last sent.
 * A callback may submit more requests, never call gmp_dispatch().
 */
typedef void (*gmp_cb)(void *arg, int status, const uint8_t *req, const uint8_t *resp);

struct gmp_txn;

int gmp_new(const struct gmp_ops *ops, void *ctx, const struct gmp_cfg *cfg,
	    struct gmp_txn **out);
/* Frees what is queued without callbacks: gmp_cancel_all() first when they matter */
struct gmp_txn *gmp_free(struct gmp_txn *t);
/* Queue a request (its TID is set per try); sent from gmp_dispatch, never from here */
int gmp_submit(struct gmp_txn *t, const uint8_t req[MAD_SIZE], uint16_t dlid, uint32_t qpn,
	       gmp_cb cb, void *arg);
/*
 * A MAD of this layer's class as received: an answer completes its
 * request; send_status non-zero means the transport gave a request of
 * ours back (lost), which is tried again. Anything else is counted and
 * dropped.
 */
void gmp_receive(struct gmp_txn *t, const uint8_t *mad, size_t len, int send_status);
/*
 * Expire what is late, fill the window. 0, or the transport's error once
 * a send said the port is gone (every later call returns it).
 */
int gmp_dispatch(struct gmp_txn *t);
/* Milliseconds until the next deadline (0: requests wait to be sent), -1: nothing outstanding */
int gmp_next_timeout_ms(const struct gmp_txn *t);
unsigned int gmp_outstanding(const struct gmp_txn *t);
size_t gmp_queued(const struct gmp_txn *t);
bool gmp_idle(const struct gmp_txn *t);
/* Fail every request, queued or in flight, with -ECANCELED (each callback once) */
int gmp_cancel_all(struct gmp_txn *t);
const struct gmp_stats *gmp_stats(const struct gmp_txn *t);

#endif
