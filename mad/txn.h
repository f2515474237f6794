/* SPDX-License-Identifier: MIT */
/*
 * SMP transactions: TIDs, a bounded window of requests in flight, timeouts
 * and retries owned in user space (the simulator, and some kernels, never
 * report a timeout), and counters. Callers submit requests with a callback;
 * txn_dispatch() does the I/O whenever the transport fd is readable or the
 * next deadline has passed, so it fits any event loop.
 */
#ifndef SMD_MAD_TXN_H
#define SMD_MAD_TXN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/wire.h"
#include "mad/port.h"

/* The transport under the transaction layer; a fake one in unit tests */
struct txn_ops {
	int (*send)(void *ctx, const uint8_t mad[MAD_SIZE], bool dr, uint16_t dlid,
		    int timeout_ms);
	/* 0 and one MAD, -EAGAIN when nothing is queued, else a lasting -errno */
	int (*recv)(void *ctx, uint8_t mad[MAD_SIZE], size_t *len, struct mad_addr *from,
		    int *send_status);
	int (*fd)(void *ctx);
};

struct txn_cfg {
	unsigned int window;		/* SMPs in flight at most, 1..TXN_WINDOW_MAX */
	/*
	 * The adaptive window's floor, 1..window: the window starts there,
	 * grows while answers come back and shrinks when SMPs are lost, never
	 * below it (see txn.c). 0, or window itself: a fixed window.
	 */
	unsigned int window_min;
	unsigned int timeout_ms;	/* per try */
	unsigned int retries;		/* extra tries after a silent timeout */
};

#define TXN_WINDOW_MAX		4096
/* Tries of one request whose losses the transport reports (see txn.c) */
#define TXN_LOSS_TRIES		64
/* Tries of one request presumed lost because later ones were answered */
#define TXN_PRESUME_TRIES	3
/* The adaptive window probes above its known-good size every 1..this rounds */
#define TXN_PROBE_ROUNDS_MAX	1024
/* An answer may come this much later than one sent after it (at first) */
#define TXN_REORDER_MIN_US	1000

struct txn_stats {
	uint64_t sent;		/* every transmission, retries included */
	uint64_t answered;	/* requests completed with a response */
	uint64_t timeouts;	/* tries that expired or were reported lost */
	uint64_t retries;	/* retransmissions */
	uint64_t failed;	/* requests that exhausted their retries */
	uint64_t bad_status;	/* responses with a non-zero MAD status */
	uint64_t malformed;	/* received MADs that failed to decode */
	uint64_t unmatched;	/* responses with no outstanding request (late, wrong TID) */
	uint64_t unsolicited;	/* requests and traps passed to the handler */
	uint64_t cancelled;	/* requests failed by txn_cancel_all() */
	uint64_t presumed;	/* tries presumed lost (in timeouts too): later ones answered */
	uint64_t passed;	/* MADs handed to the class handler (txn_set_class_handler) */
};

/* The adaptive window, for operators (txn_window_get); kept over txn_stats_reset() */
struct txn_window {
	unsigned int size;		/* SMPs it lets in flight now */
	unsigned int min, max;		/* its floor and ceiling; equal: a fixed window */
	unsigned int safe;		/* known (before a loss: taken) to be answered without
					 * loss: it grows back here at once, probes above */
	uint64_t shrinks;		/* losses that shrank it */
	uint64_t last_shrink_us;	/* txn_now_us() of the last, 0: never */
	uint64_t presumed;		/* tries presumed lost: later ones were answered */
	uint64_t spurious;		/* ... that were answered after all */
	unsigned int rtt_us;		/* smoothed round trip of answered tries */
	unsigned int reorder_us;	/* how late an answer may come before it is presumed lost */
};

/*
 * status: 0 (resp valid, MAD status 0), -EREMOTEIO (resp valid, MAD status
 * non-zero: see resp->hdr.status), -ETIMEDOUT (no answer after retries; resp
 * is NULL), -EINVAL (the request cannot be encoded; never sent). Callbacks
 * may submit new requests but must not call txn_dispatch() or txn_run().
 */
typedef void (*txn_cb)(void *arg, int status, const struct smp *req, const struct smp *resp);
typedef void (*txn_unsolicited_cb)(void *arg, const uint8_t *mad, size_t len,
				   const struct mad_addr *from);

struct txn;

int txn_new(const struct txn_ops *ops, void *ctx, const struct txn_cfg *cfg, struct txn **out);
struct txn *txn_free(struct txn *t);
/* Bind the transaction layer to a umad port */
extern const struct txn_ops txn_port_ops;

void txn_set_unsolicited(struct txn *t, txn_unsolicited_cb cb, void *arg);
/*
 * Every MAD of class mclass that comes in (answers, and requests the
 * transport gave back: send_status non-zero) goes to cb instead of the
 * unsolicited handler: another transaction layer's on the same port
 * (mad/gmp.h, the performance manager's). Counted in txn_stats.passed.
 */
typedef void (*txn_class_cb)(void *arg, const uint8_t *mad, size_t len, int send_status);
void txn_set_class_handler(struct txn *t, uint8_t mclass, txn_class_cb cb, void *arg);
/*
 * The M_Key a request must carry (IBA 14.2.4): asked for each request as
 * it enters the window, just before it is encoded (its retries carry the
 * same), so that it is the key known then: a NodeInfo answered while the
 * request waited may have named the port. dlid: a LID-routed request's
 * destination, 0 for a directed route. Without a callback requests go out
 * with the M_Key their caller set (smp_init_* sets 0).
 */
typedef uint64_t (*txn_mkey_cb)(void *arg, const struct smp *req, uint16_t dlid);
void txn_set_mkey(struct txn *t, txn_mkey_cb cb, void *arg);
/*
 * Queue a request (dlid: destination of a LID-routed SMP, ignored for DR).
 * Each transmission gets its own TID, so a retry never accepts a late
 * answer to an earlier try. Never sends from the caller's stack.
 */
int txn_submit(struct txn *t, const struct smp *req, uint16_t dlid, txn_cb cb, void *arg);
/*
 * Receive what is queued, expire what is late, fill the window. 0, or the
 * transport's error once it has failed for good (a receive error, or a
 * send that says the device is gone: mad_port_fatal): from then on every
 * call returns it at once, and the owner must stop using the port.
 */
int txn_dispatch(struct txn *t);
/* Milliseconds until the next deadline, -1 when nothing is outstanding */
int txn_next_timeout_ms(const struct txn *t);
bool txn_idle(const struct txn *t);
unsigned int txn_outstanding(const struct txn *t);
/* Run dispatch + poll until every submitted request has completed */
int txn_run(struct txn *t);
/* Requests submitted and not sent yet */
size_t txn_queued(const struct txn *t);
/*
 * Run dispatch + poll until at most max requests wait to be sent (the
 * window stays full): a caller that submits a great many requests paces
 * itself with this, so that what waits in memory stays bounded.
 */
int txn_drain(struct txn *t, size_t max);
/*
 * Fail every request, queued or in flight, with -ECANCELED: each callback
 * runs once with a NULL resp, so that its owner frees what it holds, and an
 * answer that comes later is dropped as unmatched. For abandoning work
 * (shutdown): what callbacks submit meanwhile is cancelled too, up to
 * TXN_CANCEL_ROUNDS rounds; past them it is dropped without a callback.
 * -EBUSY from inside a callback.
 */
#define TXN_CANCEL_ROUNDS	8
int txn_cancel_all(struct txn *t);
const struct txn_stats *txn_stats(const struct txn *t);
void txn_window_get(const struct txn *t, struct txn_window *w);
void txn_stats_reset(struct txn *t);
uint64_t txn_now_us(void);

#endif
