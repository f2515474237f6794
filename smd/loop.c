// SPDX-License-Identifier: MIT
/*
 * The daemon's flow: the event loop, the one place smd waits. Every input
 * is an sd-event source, and no handler computes for long:
 *  - MADs: the umad descriptor (epoll), or, under the simulator whose fake
 *    descriptor epoll refuses, an idle timer that polls it at most 50 ms at
 *    a time; the transaction layer's next deadline (txn_timer); and a kick
 *    for a sweep step that used its time slice. Each runs loop_pump():
 *    complete SMPs, serve SA requests and traps, move the running sweep on,
 *    send what it queued;
 *  - the worker thread's eventfd: a sweep's CPU-long part (routing, the
 *    multicast trees, saving, the SA's index of the new model) is done;
 *  - the control socket (smd/control.c), SIGTERM/SIGINT/SIGHUP, the
 *    watchdog, the sweep, SM-poll, readiness and progress timers.
 *
 * A port that goes away (HCA reset, driver reload: the kernel kills the
 * agents, poll says POLLERR and every read and write -EIO for ever) ends
 * the daemon at once, with a reason in the log and in STATUS= and exit
 * status 3, so that systemd starts it again on the port as it comes back:
 * loop_fatal(). Nothing here waits on a descriptor in error.
 *
 * One round of sweeping (the sweep timer: periodic, smctl resweep, traps):
 *   round_start -> [light sweep] -> light_done -> [heavy sweep] -> heavy_done
 *   -> round_end, each step started from the handler that saw the last one
 * end; the heavy sweep's phases are in smd/sweep.c. While a round runs,
 * the SA answers from the last complete model, smctl status shows the
 * progress, SIGHUP waits for the round's end, SIGTERM abandons it.
 *
 * SM state changes run the entry actions of sm_enter[] (below) from
 * sm_set_state() itself, whatever made them.
 */
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "smd/control.h"
#include "smd/light.h"
#include "util/log.h"
#include "smd/loop.h"
#include "smd/partitions.h"
#include "smd/mcast.h"
#include "smd/mkey.h"
#include "smd/health.h"
#include "smd/perf.h"
#include "smd/smd.h"
#include "smd/sweep.h"
#include "smd/trap.h"
#include "smd/vlread.h"
#include "topo/route.h"

/* Longest the simulator's MAD descriptor is polled at a time */
#define LOOP_POLL_MS		50
/* ... while the worker computes: the MADs' turn comes this often */
#define LOOP_POLL_WORK_MS	5
/* ... while SA requests keep coming: one quiet millisecond ends the slice */
#define LOOP_POLL_BUSY_MS	1
/* How long loop_pump may go on before the other sources get their turn */
#define LOOP_SLICE_US		20000
/* How long the SA answers waiting requests in one go (sa_drain) */
#define LOOP_SA_SLICE_US	10000
/* A handler that runs longer than this is counted (smctl status) */
#define LOOP_SLOW_US		100000
/* SIGTERM: how long the worker may take to finish before smd leaves without it */
#define LOOP_STOP_WAIT_MS	1000

enum round { ROUND_IDLE, ROUND_LIGHT, ROUND_HEAVY };

struct loop {
	struct smd *smd;
	uint64_t sa_shed_told, sa_shed_at;	/* SA requests dropped: told how many, when */
	const struct loop_ops *ops;
	sd_event *ev;
	sd_event_source *mad_io;	/* the MAD descriptor, when epoll takes it */
	sd_event_source *poll_timer;	/* else: polled from an idle timer */
	sd_event_source *txn_timer;	/* the next SMP deadline (with mad_io) */
	sd_event_source *sa_timer;	/* the SA's next timed step (with mad_io) */
	sd_event_source *kick;		/* go on with a sweep step that yielded */
	sd_event_source *work_io;	/* the worker's eventfd */
	sd_event_source *sweep_timer;
	sd_event_source *sm_timer;	/* standby: the next poll of the master */
	sd_event_source *ready_timer;	/* READY=1 at the latest after ready_timeout */
	sd_event_source *watchdog;	/* WATCHDOG=1 every quarter of WatchdogSec */
	sd_event_source *progress;	/* STATUS= every second while a round runs */
	sd_event_source *perf_timer;	/* the next counter sweep (perf_interval) */
	unsigned int perf_interval;	/* the interval it was armed with */
	sd_event_source *sig[3];
	uint64_t watchdog_usec;
	/* The worker: one job at a time */
	int work_fd;
	pthread_t worker;
	bool working;
	void (*work_fn)(void *arg);
	void (*work_done)(void *arg);
	void *work_arg;
	/* The round */
	enum round round;
	bool light_decides;		/* the light sweep decides whether a heavy one follows */
	bool again;			/* a round was asked for while one ran */
	bool reload;			/* SIGHUP came while a round ran */
	bool parts_reload;		/* resweep --heavy came while a round ran */
	int once_r;			/* --once: the sweep's outcome */
	/* What the loop looks like from outside */
	const char *what;		/* the handler running, for the slow-handler count */
	bool ready;			/* READY=1 sent */
	bool ready_timed_out;
	bool ending;			/* loop_fatal() ran: the loop is on its way out */
	char status[512];		/* the last STATUS= sent */
	struct sweep_result *once_res;	/* --once: where the result goes */
	struct sweep_result res;	/* the heavy sweep running */
	struct sweep_result last, model;	/* behind smd->stats.last and .model */
	struct light_result light;	/* behind smd->stats.light */
	struct light_result light_res;	/* the light sweep running */
	/* Left to a worker still computing at shutdown (loop_stop) */
	struct sweep *left_sweep;
	struct fabric *left_fabric;
	struct route_result *left_routes;
	struct store *left_store;
	struct mcast *left_mcast;
	struct cabling *left_cabling;
};

static void loop_pump(struct loop *lp);
static void round_end(struct loop *lp);

/*
 * The daemon cannot go on: say why once (the log, STATUS=), end the loop,
 * exit with status (smd(8), EXIT STATUS). Later calls change nothing.
 */
static void loop_fatal(struct loop *lp, int status, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void loop_fatal(struct loop *lp, int status, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	if (lp->ending)
		return;
	lp->ending = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log_error("%s", msg);
	if (!lp->smd->once)
		sd_notifyf(0, "STOPPING=1\nSTATUS=%s", msg);
	lp->smd->exit_status = status;
	sd_event_exit(lp->ev, status);
}

/*
 * The port's transport failed for good (mad_port_fatal, any receive error,
 * or the descriptor in error): how, and the error when there is one
 */
static void transport_failed(struct loop *lp, int r, const char *how)
{
	const struct mad_port_attr *a = mad_port_attr(lp->smd->port);

	loop_fatal(lp, SMD_EXIT_TRANSPORT, "InfiniBand port %s:%d is gone (%s%s%s); exiting so "
		   "that smd starts again on it", a->ca_name, a->port_num, how, r < 0 ? ": " : "",
		   r < 0 ? strerror(-r) : "");
}

/*
 * r: what txn_dispatch() said (0: nothing); with a send that said the
 * device is gone (smd->transport_err), false, and the loop ends
 */
static bool port_ok(struct loop *lp, int r)
{
	if (lp->ending)
		return false;
	if (r == 0 || r == -EBUSY)
		r = lp->smd->transport_err;
	if (r < 0) {
		transport_failed(lp, r, lp->smd->transport_err ? "a send failed" :
			       "reading MADs failed");
		return false;
	}
	return true;
}

/*
 * Receive and send what is due (the SMPs, and the performance manager's
 * GMPs, whose answers the receive handed over); false when the transport
 * has failed
 */
static bool dispatch(struct loop *lp)
{
	return !lp->ending && port_ok(lp, txn_dispatch(lp->smd->txn)) &&
	       port_ok(lp, perf_pump(lp->smd));
}

/* The next MAD deadline of either layer, in ms; -1: none */
static int next_mad_timeout_ms(const struct loop *lp)
{
	int a = txn_next_timeout_ms(lp->smd->txn), b = perf_next_timeout_ms(lp->smd);

	if (a < 0)
		return b;
	return b < 0 || a < b ? a : b;
}

/* What the transaction layer has taken in: answers, losses, requests */
static uint64_t txn_events(const struct txn *t)
{
	const struct txn_stats *st = txn_stats(t);

	return st->answered + st->timeouts + st->unmatched + st->unsolicited + st->malformed;
}

static bool sweeping_state(const struct smd *smd)
{
	return smd->sm_state == SM_MASTER || smd->sm_state == SM_DISCOVERING;
}

static void print_summary(const struct sweep_result *res)
{
	printf("smd: subnet %s: %u nodes (%u switches, %u CAs), %u ports, %u LIDs, "
	       "%" PRIu64 " SMPs (%" PRIu64 " timed out, %" PRIu64 " unanswered), %.2f s\n",
	       res->up ? "UP" : "NOT UP", res->nodes, res->switches, res->cas, res->ports,
	       res->lids, res->smps, res->timeouts, res->failed, res->seconds);
	fflush(stdout);
}

/* ---- readiness, STATUS=, watchdog ---- */

/*
 * READY=1 once the first sweep brought the subnet up, or this SM is not
 * the one to bring it up (standby, not active), or ready_timeout passed
 * (STATUS= then says what is wrong); with ready_timeout 0, after the first
 * sweep whatever its outcome. Until then systemd holds back the units
 * ordered after smd.
 */
static bool ready_now(const struct loop *lp)
{
	const struct smd *smd = lp->smd;
	const struct smd_stats *st = &smd->stats;

	if (smd->sm_state == SM_STANDBY || smd->sm_state == SM_NOT_ACTIVE)
		return true;
	if (!st->last)
		return false;
	if (!st->last_err && st->last->up)
		return true;
	return lp->ready_timed_out || !smd->cfg.ready_timeout;
}

/* STATUS= after every sweep, SM state change and second of a round; READY=1 when due */
static void notify_status(struct loop *lp)
{
	char buf[sizeof(lp->status)];

	if (lp->smd->once)
		return;
	control_summary(lp->smd, buf, sizeof(buf));
	if (!lp->ready && ready_now(lp)) {
		lp->ready = true;
		sd_notifyf(0, "READY=1\nSTATUS=%s", buf);
	} else if (strcmp(buf, lp->status)) {
		sd_notifyf(0, "STATUS=%s", buf);
	}
	memcpy(lp->status, buf, sizeof(buf));
}

static int on_ready_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *lp = userdata;
	char buf[sizeof(lp->status)];

	lp->what = "readiness timer";
	lp->ready_timed_out = true;
	if (lp->ready)
		return 0;
	control_summary(lp->smd, buf, sizeof(buf));
	log_warn("the subnet is not up %u s after start; telling systemd smd is ready anyway: %s",
		 lp->smd->cfg.ready_timeout, buf);
	lp->ready = true;
	sd_notifyf(0, "READY=1\nSTATUS=subnet not up after %u s: %s", lp->smd->cfg.ready_timeout,
		   buf);
	memcpy(lp->status, buf, sizeof(buf));
	return 0;
}

/*
 * WATCHDOG=1 every quarter of WatchdogSec (WATCHDOG_USEC, when it is for
 * this process): a loop that answers within 100 ms always makes it in half
 * the period. sd-event's own watchdog pings between 1/2 and 3/4 of it.
 */
static int on_watchdog(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *lp = userdata;

	lp->what = "watchdog";
	sd_notify(0, "WATCHDOG=1");
	sd_event_source_set_time(s, usec + lp->watchdog_usec);
	return sd_event_source_set_enabled(s, SD_EVENT_ON);
}

static int on_progress(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *lp = userdata;

	lp->what = "progress timer";
	notify_status(lp);
	sd_event_source_set_time(s, usec + 1000000);
	return sd_event_source_set_enabled(s, SD_EVENT_ON);
}

/* ---- timers ---- */

/* Sweep in usec from now, unless a sweep is already due sooner */
static int arm_timer(struct loop *lp, uint64_t usec)
{
	uint64_t now, due;
	int enabled = SD_EVENT_OFF;

	sd_event_now(lp->ev, CLOCK_MONOTONIC, &now);
	sd_event_source_get_enabled(lp->sweep_timer, &enabled);
	if (enabled != SD_EVENT_OFF && sd_event_source_get_time(lp->sweep_timer, &due) >= 0 &&
	    due <= now + usec)
		return 0;
	sd_event_source_set_time(lp->sweep_timer, now + usec);
	return sd_event_source_set_enabled(lp->sweep_timer, SD_EVENT_ONESHOT);
}

static void arm_sm_timer(struct loop *lp)
{
	uint64_t now;

	sd_event_now(lp->ev, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(lp->sm_timer,
				 now + (uint64_t)lp->smd->cfg.sm_poll_interval * 1000000u);
	sd_event_source_set_enabled(lp->sm_timer, SD_EVENT_ONESHOT);
}

/*
 * The next counter sweep perf_interval seconds from now (none when it is
 * 0); again when SIGHUP changed the interval
 */
static void arm_perf_timer(struct loop *lp, bool changed_only)
{
	unsigned int iv = lp->smd->cfg.perf_interval;

	if (!lp->perf_timer || (changed_only && iv == lp->perf_interval))
		return;
	lp->perf_interval = iv;
	if (!iv) {
		sd_event_source_set_enabled(lp->perf_timer, SD_EVENT_OFF);
		return;
	}
	sd_event_source_set_time_relative(lp->perf_timer, (uint64_t)iv * 1000000u);
	sd_event_source_set_enabled(lp->perf_timer, SD_EVENT_ONESHOT);
}

/* Changes traps reported inside their sources' hold-off: a sweep when it ends */
static void arm_trap_due(struct loop *lp)
{
	uint64_t due = trap_due(lp->smd->trapt), now = txn_now_us();

	if (due && sweeping_state(lp->smd) && lp->round == ROUND_IDLE)
		arm_timer(lp, due > now ? due - now : 0);
}

/* The transaction layer's next deadline, when no poll timer looks anyway */
static void arm_txn_timer(struct loop *lp)
{
	int ms;
	uint64_t now;

	if (!lp->txn_timer)
		return;
	ms = next_mad_timeout_ms(lp);
	if (ms < 0) {
		sd_event_source_set_enabled(lp->txn_timer, SD_EVENT_OFF);
		return;
	}
	sd_event_now(lp->ev, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(lp->txn_timer, now + (uint64_t)ms * 1000u);
	sd_event_source_set_enabled(lp->txn_timer, SD_EVENT_ONESHOT);
}

/*
 * The SA's next timed step (a Report to resend, an RMPP transfer to watch,
 * a lease to end), when no poll timer looks anyway: on a real port the
 * loop may sleep for as long as nothing arrives
 */
static void arm_sa_timer(struct loop *lp)
{
	uint64_t due, t, now;

	if (!lp->sa_timer)
		return;
	due = sa_next_tick(lp->smd->sa);
	if (!due) {
		sd_event_source_set_enabled(lp->sa_timer, SD_EVENT_OFF);
		return;
	}
	t = txn_now_us();
	sd_event_now(lp->ev, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(lp->sa_timer, now + (due > t ? due - t : 0));
	sd_event_source_set_enabled(lp->sa_timer, SD_EVENT_ONESHOT);
}

void loop_kick(struct loop *lp)
{
	sd_event_source_set_enabled(lp->kick, SD_EVENT_ONESHOT);
}

static void kick_arg(void *arg)
{
	loop_kick(arg);
}

/* ---- the worker thread ---- */

static void *worker_main(void *arg)
{
	struct loop *lp = arg;
	uint64_t one = 1;

	lp->work_fn(lp->work_arg);
	/* The loop joins the thread when it sees this */
	while (write(lp->work_fd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
	return NULL;
}

int loop_work(struct loop *lp, void (*fn)(void *arg), void (*done)(void *arg), void *arg)
{
	int r;

	if (lp->working)
		return -EBUSY;
	lp->work_fn = fn;
	lp->work_done = done;
	lp->work_arg = arg;
	/* It inherits this thread's signal mask: the signals stay the loop's */
	r = pthread_create(&lp->worker, NULL, worker_main, lp);
	if (r)
		return -r;
	lp->working = true;
	return 0;
}

/* The worker finished: join it (it is about to return) */
static bool work_reap(struct loop *lp)
{
	uint64_t v;

	if (read(lp->work_fd, &v, sizeof(v)) < 0 || !lp->working)
		return false;
	pthread_join(lp->worker, NULL);
	lp->working = false;
	return true;
}

static int on_work_done(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct loop *lp = userdata;

	lp->what = "worker done";
	if (work_reap(lp)) {
		lp->work_done(lp->work_arg);
		loop_pump(lp);
	}
	return 0;
}

/* Shutdown: wait up to ms for the worker; false when it is still computing */
static bool work_wait(struct loop *lp, int ms)
{
	struct pollfd pfd = { .fd = lp->work_fd, .events = POLLIN };

	if (!lp->working)
		return true;
	if (poll(&pfd, 1, ms) <= 0)
		return false;
	return work_reap(lp);
}

/* ---- the SA, between sweeps ---- */

/*
 * After every completed sweep the SA moves to the new model (the old one
 * is gone); it starts answering once a sweep has brought the subnet up.
 * ix: the new model's index, built on the worker (NULL: build it here).
 */
static void sa_serve(struct smd *smd, const struct sweep_result *res, struct sa_index *ix,
		     int ix_err)
{
	struct sa_env *env = &smd->sa_env;
	bool serving = smd->sa_serving || res->up;
	int r;

	env->sm_lid = smd->sm_lid;
	env->act_count = smd->act_count;
	/* The other SMs the election saw, with the LIDs this sweep gave them */
	env->nsms = 0;
	for (size_t i = 0; i < smd->npeers && smd->fabric; i++) {
		const struct sm_peer *p = &smd->peers[i];
		const struct fab_node *n = fabric_find(smd->fabric, p->node_guid);
		const struct fab_port *fp = n ? fabric_port(n, p->port_num) : NULL;

		if (p->foreign)
			continue;	/* not an SM of this subnet */
		smd->sa_sms[env->nsms++] = (struct sa_sm){
			.lid = fp ? fp->lid : 0,
			.si = { .guid = p->guid, .act_count = p->act_count,
				.priority = p->priority, .sm_state = p->state },
		};
	}
	env->sms = smd->sa_sms;
	if (!serving) {
		sa_index_free(ix);
		r = sa_update(smd->sa, NULL, smd->routes);
	} else if (ix) {
		r = sa_update_index(smd->sa, smd->fabric, smd->routes, ix);
	} else {
		r = ix_err < 0 ? ix_err : sa_update(smd->sa, smd->fabric, smd->routes);
	}
	if (r >= 0 && smd->mcast)
		sa_set_mcast(smd->sa, mcast_db(smd), serving ? mcast_forest(smd) : NULL);
	if (r < 0) {
		log_error("SA: cannot index the new model (%s); not answering", strerror(-r));
		sa_update(smd->sa, NULL, NULL);
		serving = false;
	}
	if (serving && !smd->sa_serving)
		log_info("SA: answering queries");
	smd->sa_serving = serving;
	/* What the model does not know of the tables ports hold, for the SA */
	if (serving && vlread_start(smd) < 0)
		log_warn("cannot read the tables of the ports: the SA answers without them");
}

/* Unsolicited MADs, from the transaction layer: SA requests, SMInfo, traps */
static void on_unsolicited(void *arg, const uint8_t *mad, size_t len, const struct mad_addr *from)
{
	struct smd *smd = arg;
	struct mad_summary ms;
	uint8_t mclass, method;

	if (mad_summarize(mad, len, &ms) < 0)
		return;
	mclass = ms.mgmt_class;
	method = ms.method;
	if (mclass == MAD_CLASS_SA) {
		/* Answered in turn with other ports' (loop_pump, sa_answer) */
		sa_submit(smd->sa, mad, len, from);
		return;
	}
	if ((method == MAD_METHOD_GET || method == MAD_METHOD_SET) && len == MAD_SIZE &&
	    ms.attr_id == SMP_ATTR_SM_INFO) {
		/* Another SM, or sminfo: election and handover (IBA 14.4.1) */
		sm_handle_sminfo(smd, mad, len, from);
		return;
	}
	/* Which traps make smd look again, from whom, how often: smd/trap.h */
	if (method == MAD_METHOD_TRAP)
		trap_handle(smd, mad, len, from);
}

/* ---- SM state entry actions (IBA 14.4), run by sm_set_state() ---- */

/* Leaving MASTER stops the SA: the subnet is another SM's now */
static void leave_master(struct loop *lp, enum sm_state from)
{
	struct smd *smd = lp->smd;

	if (from != SM_MASTER || !smd->sa_serving)
		return;
	sa_update(smd->sa, NULL, NULL);
	smd->sa_serving = false;
	vlread_stop(smd);
	log_info("SA: not answering (this SM is no longer master)");
}

/* A round that runs sets the sweep timer itself when it ends */
static void sweep_soon(struct loop *lp)
{
	if (lp->round == ROUND_IDLE)
		arm_timer(lp, 0);
}

static void enter_not_active(struct smd *smd, enum sm_state from)
{
	struct loop *lp = smd->loop;

	leave_master(lp, from);
	sd_event_source_set_enabled(lp->sweep_timer, SD_EVENT_OFF);
	sd_event_source_set_enabled(lp->sm_timer, SD_EVENT_OFF);
	control_sweep_cancel(smd->control, "this SM became NOT-ACTIVE");
	notify_status(lp);
}

static void enter_discovering(struct smd *smd, enum sm_state from)
{
	struct loop *lp = smd->loop;

	leave_master(lp, from);
	sd_event_source_set_enabled(lp->sm_timer, SD_EVENT_OFF);
	sweep_soon(lp);
	notify_status(lp);
}

static void enter_standby(struct smd *smd, enum sm_state from)
{
	struct loop *lp = smd->loop;

	leave_master(lp, from);
	sd_event_source_set_enabled(lp->sweep_timer, SD_EVENT_OFF);
	arm_sm_timer(lp);
	control_sweep_cancel(smd->control, "this SM became STANDBY");
	notify_status(lp);
}

static void enter_master(struct smd *smd, enum sm_state from)
{
	struct loop *lp = smd->loop;

	sd_event_source_set_enabled(lp->sm_timer, SD_EVENT_OFF);
	if (smd->resweep)
		sweep_soon(lp);		/* a handover: the subnet is this SM's now */
	notify_status(lp);
}

static const struct sm_actions sm_enter = {
	.enter = {
		[SM_NOT_ACTIVE] = enter_not_active,
		[SM_DISCOVERING] = enter_discovering,
		[SM_STANDBY] = enter_standby,
		[SM_MASTER] = enter_master,
	},
};

/* ---- one round: a light sweep, a heavy sweep, or both ---- */

/*
 * What the next sweep must be: heavy (rediscover, route, program) after a
 * trap, a request, or before the first model; otherwise a light sweep
 * decides. Returns the reason for a heavy sweep, NULL for a light one.
 */
static const char *heavy_reason(const struct smd *smd, char *buf, size_t len)
{
	if (!smd->fabric)
		return "no model of the fabric yet";
	if (smd->sm_state != SM_MASTER)
		return "SM election";
	if (smd->traps) {
		snprintf(buf, len, "%u trap%s", smd->traps, smd->traps == 1 ? "" : "s");
		return buf;
	}
	if (smd->resweep_heavy)
		return "requested";
	if (smd->health_resweep)
		return "health: links to take out of service or to put back";
	if (smd->resweep)
		return "the fabric changed";
	if (trap_due(smd->trapt) && txn_now_us() >= trap_due(smd->trapt))
		return "traps held back by their sources' hold-off";
	if (smd->last_sweep_down)
		return "the last sweep left the subnet not up";
	return NULL;
}

static void heavy_done(struct loop *lp, int r);

static void heavy_start(struct loop *lp)
{
	struct smd *smd = lp->smd;
	int r;

	/* Asked for (SIGHUP, smctl resweep --heavy): routes computed afresh too */
	smd->route_full = smd->resweep_heavy;
	smd->resweep = smd->resweep_heavy = false;
	smd->health_resweep = false;
	smd->traps = 0;
	trap_sweep_started(smd->trapt);
	smd->heavy_sweeps++;
	lp->round = ROUND_HEAVY;
	r = sweep_start(smd, &lp->res, &smd->sweep);
	if (r < 0) {
		memset(&lp->res, 0, sizeof(lp->res));
		heavy_done(lp, r);
	}
}

static void heavy_done(struct loop *lp, int r)
{
	struct smd *smd = lp->smd;
	struct smd_stats *st = &smd->stats;
	struct sweep_result *res = &lp->res;
	struct sa_index *ix = NULL;
	int ix_err = 0;

	if (smd->sweep) {
		/* The sweep's warnings and errors are what smctl status lists */
		st->problems = *sweep_problems(smd->sweep);
		ix = sweep_take_sa_index(smd->sweep, &ix_err);
		smd->sweep = sweep_free(smd->sweep);
	}
	if (r < 0)
		log_error_errno(r, "sweep failed");
	smd->last_sweep_down = r < 0 || (!res->standby && !res->up);
	st->light_only = false;
	st->last_end = time(NULL);
	st->last_err = r < 0 ? r : 0;
	st->smps_sent += res->smps;
	st->smps_timed_out += res->timeouts;
	st->smps_lost += res->failed;
	lp->last = *res;
	st->last = &lp->last;
	if (smd->once) {
		lp->once_r = r;
		*lp->once_res = *res;
		if (r == 0)
			print_summary(res);
	} else if (r < 0) {
		/* the model (and what check-routes shows) stays the previous one */
		if (smd->sa_serving && vlread_start(smd) < 0)
			log_warn("cannot read the tables of the ports: the SA answers without them");
	} else if (res->standby) {
		printf("smd: standby: master is SM 0x%016" PRIx64 " (priority %u)\n",
		       smd->master.guid, smd->master.priority);
		fflush(stdout);
	} else {
		lp->model = *res;
		st->model = &lp->model;
		st->model_sweep = smd->heavy_sweeps;
		st->model_end = st->last_end;
		sa_serve(smd, res, ix, ix_err);
		ix = NULL;
		print_summary(res);
		/* The new model: links seen down, links degraded, isolations it applied */
		health_judge_all(smd, "heavy sweep");
	}
	sa_index_free(ix);
	round_end(lp);
}

/* The light sweep's answers are all in: the subnet unchanged, or a heavy sweep */
static void light_finished(struct loop *lp)
{
	struct smd *smd = lp->smd;
	struct light_result *lr = &lp->light_res;
	bool changed;
	int r;

	r = light_end(smd->light);
	smd->light = NULL;
	lp->light = *lr;
	smd->stats.light = &lp->light;
	smd->stats.light_end = time(NULL);
	if (r < 0) {
		snprintf(lr->reason, sizeof(lr->reason), "light sweep failed (%s)", strerror(-r));
		changed = true;
	} else {
		/* Idle ones log at debug only */
		log_debug("light sweep %" PRIu64 ": %u switches, %u PortStateChange, %u silent, "
			  "%u reset; %" PRIu64 " SMPs (%u Sets), %.3f s", smd->light_sweeps,
			  lr->switches, lr->changed, lr->silent, lr->differ, lr->smps, lr->sets,
			  lr->seconds);
		changed = light_changed(lr);
	}
	if (!lp->light_decides) {
		heavy_start(lp);
	} else if (changed) {
		log_info("light sweep: %s: heavy sweep", lr->reason);
		heavy_start(lp);
	} else {
		smd->stats.light_only = true;
		round_end(lp);
	}
}

/*
 * A light sweep. decides: it says whether a heavy sweep follows; else it
 * only clears PortStateChange on the known switches before a heavy sweep,
 * so that a change during that sweep is still flagged afterwards.
 */
static void light_begin(struct loop *lp, bool decides)
{
	struct smd *smd = lp->smd;
	int r;

	smd->light_sweeps++;
	lp->round = ROUND_LIGHT;
	lp->light_decides = decides;
	r = light_start(smd, &lp->light_res, &smd->light);
	if (r < 0) {
		log_warn("light sweep failed (%s): heavy sweep", strerror(-r));
		heavy_start(lp);
	}
}

static void round_start(struct loop *lp)
{
	struct smd *smd = lp->smd;
	const char *why;
	char buf[64];

	/* Only a master (or an SM about to elect one) sweeps */
	if (!sweeping_state(smd)) {
		smd->resweep = smd->resweep_heavy = false;
		smd->traps = 0;
		return;
	}
	smd->stats.rounds++;
	lp->again = false;
	sd_event_source_set_time_relative(lp->progress, 1000000);
	sd_event_source_set_enabled(lp->progress, SD_EVENT_ON);
	why = heavy_reason(smd, buf, sizeof(buf));
	if (!why) {
		light_begin(lp, true);
	} else {
		log_info("heavy sweep: %s", why);
		if (smd->fabric && smd->sm_state == SM_MASTER)
			light_begin(lp, false);
		else
			heavy_start(lp);
	}
	loop_pump(lp);
}

static void round_end(struct loop *lp)
{
	struct smd *smd = lp->smd;

	lp->round = ROUND_IDLE;
	sd_event_source_set_enabled(lp->progress, SD_EVENT_OFF);
	if (smd->once) {
		sd_event_exit(lp->ev, 0);
		return;
	}
	control_sweep_done(smd->control);
	notify_status(lp);
	/* Joins and leaves that waited for the sweep */
	mcast_run(smd);
	/* The database is the loop's again: what health left waiting */
	health_flush(smd);
	if (lp->parts_reload) {
		lp->parts_reload = false;
		partitions_reload(smd, "smctl resweep --heavy");
	}
	if (lp->reload) {
		/* SIGHUP during the round: the new configuration, and a sweep with it */
		lp->reload = false;
		lp->ops->reload(smd);
		arm_perf_timer(lp, true);
		smd->resweep_heavy = true;
		lp->again = true;
	}
	if (!sweeping_state(smd))
		;			/* a standby polls instead (enter_standby) */
	else if (lp->again)
		arm_timer(lp, 0);	/* asked for while this round ran */
	else if (smd->resweep || smd->health_resweep)
		arm_timer(lp, 100000);	/* a trap came in during the sweep */
	else if (smd->cfg.sweep_interval)
		arm_timer(lp, (uint64_t)smd->cfg.sweep_interval * 1000000u);
	arm_trap_due(lp);
}

/* Whatever moved the round on: true when the transaction layer has work to send */
static bool round_advance(struct loop *lp)
{
	struct smd *smd = lp->smd;
	int r;

	switch (lp->round) {
	case ROUND_LIGHT:
		if (!light_done(smd->light))
			return false;
		light_finished(lp);
		return true;
	case ROUND_HEAVY:
		r = sweep_advance(smd->sweep);
		if (r == SWEEP_WAITING)
			return false;
		if (r != SWEEP_MOVED)
			heavy_done(lp, r);
		return true;
	case ROUND_IDLE:
		break;
	}
	return false;
}

/*
 * SA requests wait in the SA's queue as they are read (on_unsolicited):
 * answer them, one per requesting port in turn, for LOOP_SA_SLICE_US at
 * most; the rest on the next turn of the loop. Say once a minute at most
 * that a client sends faster than its turn comes (its excess is dropped).
 */
static void sa_answer(struct loop *lp)
{
	const struct sa_stats *st = sa_stats(lp->smd->sa);
	uint64_t now;

	if (sa_drain(lp->smd->sa, LOOP_SA_SLICE_US))
		loop_kick(lp);
	if (st->shed == lp->sa_shed_told)
		return;
	now = txn_now_us();
	if (lp->sa_shed_at && now - lp->sa_shed_at < 60000000)
		return;
	log_notice("SA: %" PRIu64 " requests dropped unanswered, from ports with %u waiting "
		   "(the last from LID %u): a client sends faster than its turn comes",
		   st->shed - lp->sa_shed_told, SA_QUEUE_PER_PORT_MAX, st->shed_lid);
	lp->sa_shed_told = st->shed;
	lp->sa_shed_at = now;
}

/*
 * MADs came in, a deadline passed, work finished, or a step asked to go on:
 * receive and complete what is there (SA requests and traps included), move
 * the round on, send what it queued; again while the round moves, for at
 * most LOOP_SLICE_US (then the other sources get their turn first).
 */
static void loop_pump(struct loop *lp)
{
	struct smd *smd = lp->smd;
	uint64_t t0 = txn_now_us();

	for (;;) {
		if (!dispatch(lp))
			return;
		sa_answer(lp);
		sa_tick(smd->sa);
		/* RMPP segments a receiver's window lets out, past one burst */
		if (sa_next_timeout_ms(smd->sa) == 0)
			loop_kick(lp);
		if (!round_advance(lp))
			break;
		if (txn_now_us() - t0 > LOOP_SLICE_US) {
			if (!dispatch(lp))
				return;
			sa_answer(lp);
			loop_kick(lp);
			break;
		}
	}
	/* Joins and leaves just answered: their trees and MFT blocks (not during a sweep) */
	mcast_run(smd);
	if (txn_queued(smd->txn)) {
		uint64_t seen = txn_events(smd->txn);

		if (!dispatch(lp))
			return;
		sa_answer(lp);
		/*
		 * What came in with it (the last answer of a sweep step, of
		 * a multicast update) is looked at in the next turn: on a
		 * real port nothing else may wake the loop for it
		 */
		if (txn_events(smd->txn) != seen)
			loop_kick(lp);
	}
	/* The SA's answers and Reports went out meanwhile: did the port take them? */
	if (!port_ok(lp, 0))
		return;
	if ((smd->resweep || smd->health_resweep) && sweeping_state(smd) &&
	    lp->round == ROUND_IDLE)
		arm_timer(lp, 100000);	/* coalesce a burst of traps */
	arm_trap_due(lp);
	arm_txn_timer(lp);
	arm_sa_timer(lp);
}

/* ---- event handlers ---- */

static int on_sweep_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *lp = userdata;

	lp->what = "sweep timer";
	if (lp->round != ROUND_IDLE) {
		lp->again = true;	/* one more round when this one ends */
		return 0;
	}
	round_start(lp);
	return 0;
}

/* Standby: poll the master; after sm_poll_retries misses the answer's handler takes over */
static int on_sm_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *lp = userdata;
	int r;

	lp->what = "SM poll timer";
	if (lp->smd->sm_state != SM_STANDBY)
		return 0;
	r = sm_poll_master(lp->smd);
	if (r < 0 && r != -EALREADY)
		log_warn_errno(r, "cannot poll the master SM");
	arm_sm_timer(lp);
	loop_pump(lp);
	return 0;
}

static int on_mad(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct loop *lp = userdata;

	lp->what = "MADs";
	/*
	 * The kernel says EPOLLERR for ever once the device is gone (its
	 * agents are dead: user_mad.c); level-triggered, it would wake the
	 * loop at once every time. HUP: the descriptor has no other end.
	 */
	if (revents & (EPOLLERR | EPOLLHUP)) {
		sd_event_source_set_enabled(s, SD_EVENT_OFF);
		transport_failed(lp, 0, revents & EPOLLERR ? "the umad device reports EPOLLERR" :
				 "the umad device reports EPOLLHUP");
		return 0;
	}
	loop_pump(lp);
	return 0;
}

static int on_txn_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *lp = userdata;

	lp->what = "SMP or SA deadline";
	loop_pump(lp);
	return 0;
}

static int on_sa_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *lp = userdata;

	lp->what = "SA timer";
	loop_pump(lp);
	return 0;
}

static int on_kick(sd_event_source *s, void *userdata)
{
	struct loop *lp = userdata;

	lp->what = "sweep step";
	loop_pump(lp);
	return 0;
}

/*
 * libumad2sim (the simulator shim) hands out fake descriptors that epoll
 * refuses, and its poll() ignores every other descriptor. Then the loop
 * waits for MADs itself, in slices short enough for the other sources: at
 * most LOOP_POLL_MS when idle, LOOP_POLL_WORK_MS while the worker computes,
 * and while SMPs are out or SA requests keep coming it goes on polling and
 * pumping for LOOP_SLICE_US (one pass of the event loop per answer would
 * cost more than the answer: three system calls to re-arm and fire the
 * timer, where a request costs one write).
 */
static int on_poll_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *lp = userdata;
	struct txn *txn = lp->smd->txn;
	struct pollfd pfd = { .fd = mad_port_fd(lp->smd->port), .events = POLLIN };
	struct pollfd wfd = { .fd = lp->work_fd, .events = POLLIN };
	uint64_t t0 = txn_now_us(), now, seen = txn_stats(txn)->unsolicited;
	bool requests = false;

	lp->what = "MAD poll";
	do {
		int to = next_mad_timeout_ms(lp);

		if (to < 0 || to > LOOP_POLL_MS)
			to = LOOP_POLL_MS;
		if (requests && to > LOOP_POLL_BUSY_MS)
			to = LOOP_POLL_BUSY_MS;
		/* A metrics answer going out in pieces: its next piece comes first */
		if (control_streaming(lp->smd->control))
			to = 0;
		if (lp->working && !txn_outstanding(txn) && to > LOOP_POLL_WORK_MS) {
			/*
			 * The worker computes and no answer is awaited (a phase
			 * beside it may have SMPs out): wait for its end (a real
			 * descriptor), then look at the MADs
			 */
			poll(&wfd, 1, LOOP_POLL_WORK_MS);
			to = 0;
		}
		/*
		 * umad2sim's poll() can miss a MAD that was queued before it
		 * started waiting: read whatever is there either way (reads
		 * never block).
		 */
		pfd.revents = 0;
		if (poll(&pfd, 1, to) > 0 && (pfd.revents & (POLLERR | POLLHUP | POLLNVAL))) {
			transport_failed(lp, 0, pfd.revents & POLLNVAL ?
					 "the umad descriptor is not open (POLLNVAL)" :
					 pfd.revents & POLLERR ? "the umad device reports POLLERR" :
					 "the umad device reports POLLHUP");
			return 0;
		}
		loop_pump(lp);
		if (lp->ending)
			return 0;
		/* SA requests and traps, which the transaction layer passes on */
		requests = txn_stats(txn)->unsolicited != seen;
		seen = txn_stats(txn)->unsolicited;
	} while ((txn_outstanding(txn) || perf_outstanding(lp->smd) || requests) &&
		 txn_now_us() - t0 < LOOP_SLICE_US);
	sd_event_now(lp->ev, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(s, now);
	return sd_event_source_set_enabled(s, SD_EVENT_ON);
}

/* A counter sweep is due: it runs if this SM is master of a subnet it serves */
static int on_perf_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *lp = userdata;

	lp->what = "counter timer";
	if (!perf_sweep_start(lp->smd))
		log_debug("performance manager: no counter sweep now (one runs, or no model "
			  "served as master)");
	arm_perf_timer(lp, false);
	loop_pump(lp);
	return 0;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct loop *lp = userdata;

	lp->what = "signal";
	if (si->ssi_signo == SIGHUP) {
		if (lp->round != ROUND_IDLE) {
			/* A sweep reads the configuration: the new one applies after it */
			log_info("SIGHUP: the configuration is read again when this sweep ends");
			lp->reload = true;
			return 0;
		}
		lp->ops->reload(lp->smd);
		arm_perf_timer(lp, true);
		lp->smd->resweep_heavy = true;
		if (sweeping_state(lp->smd)) {
			log_info("SIGHUP: sweeping now");
			arm_timer(lp, 0);
		} else {
			log_info("SIGHUP: %s, not sweeping", sm_state_name(lp->smd->sm_state));
		}
		return 0;
	}
	log_info("signal %u: shutting down%s", si->ssi_signo,
		 lp->round == ROUND_HEAVY ? ", abandoning the sweep" : "");
	sd_notify(0, "STOPPING=1");
	return sd_event_exit(lp->ev, 0);
}

/* ---- the control socket ---- */

/*
 * smctl resweep: a sweep as soon as the loop gets to it; a light one (that
 * turns heavy when it finds a change) unless heavy is asked for.
 */
static int control_resweep(void *ctx, bool heavy)
{
	struct loop *lp = ctx;
	int r;

	if (!sweeping_state(lp->smd))
		return -EBUSY;
	if (heavy) {
		/*
		 * The partitions file is read again too (membership changes
		 * apply); a running sweep reads the partitions: after it ends
		 */
		if (lp->round != ROUND_IDLE)
			lp->parts_reload = true;
		else
			partitions_reload(lp->smd, "smctl resweep --heavy");
		lp->smd->resweep_heavy = true;
	}
	r = arm_timer(lp, 0);
	return r < 0 ? r : 0;
}

/* smctl sm-enable: a NOT-ACTIVE SM (disabled by another) looks for the master again */
static int control_sm_enable(void *ctx, const char *who)
{
	struct loop *lp = ctx;

	return sm_enable(lp->smd, who);
}

/* smctl port enable: a heavy sweep routes with the link again */
static int control_health_sweep(void *ctx)
{
	struct loop *lp = ctx;
	int r;

	if (!sweeping_state(lp->smd))
		return -EBUSY;
	r = arm_timer(lp, 0);
	return r < 0 ? r : 0;
}

static const struct control_ops control_ops = {
	.resweep = control_resweep,
	.sm_enable = control_sm_enable,
	.health_sweep = control_health_sweep,
};

/* smctl's socket; without one smd still runs, only smctl cannot reach it */
static void open_control(struct loop *lp)
{
	struct smd *smd = lp->smd;
	char path[sizeof(smd->cfg.control_socket) + 16];
	int r;

	r = control_socket_path(smd->cfg.control_socket, path, sizeof(path));
	if (r == 1) {
		log_info("no control socket (control_socket = none)");
		return;
	}
	if (r == 0)
		r = control_open(smd, lp->ev, path, &control_ops, lp, &smd->control);
	if (r < 0)
		log_warn("control socket %s: %s; smctl cannot reach this smd", path,
			 r == -EADDRINUSE ? "another smd answers on it" :
			 r == -EEXIST ? "a file that is not a socket is in the way" :
			 strerror(-r));
	else
		log_info("control socket %s", path);
}

/* ---- setup, the loop, teardown ---- */

static int setup_failed(const char *what, int r)
{
	return log_error_errno(r, "cannot %s", what);
}

static int add_sources(struct loop *lp)
{
	struct smd *smd = lp->smd;
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP };
	int r;

	lp->work_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	r = lp->work_fd < 0 ? -errno : sd_event_add_io(lp->ev, &lp->work_io, lp->work_fd, EPOLLIN,
						      on_work_done, lp);
	if (r < 0)
		return setup_failed("create the worker's eventfd", r);
	r = sd_event_add_io(lp->ev, &lp->mad_io, mad_port_fd(smd->port), EPOLLIN, on_mad, lp);
	if (r >= 0)
		log_debug("MADs: waiting on the umad descriptor (epoll)");
	if (r == -EBADF || r == -EPERM) {
		log_debug("MAD port fd cannot be watched (%s): polling it", strerror(-r));
		/* accuracy 1 us: sd-event's default (0) lets a timer slip 250 ms */
		r = sd_event_add_time(lp->ev, &lp->poll_timer, CLOCK_MONOTONIC, 0, 1,
				      on_poll_timer, lp);
		if (r >= 0)
			r = sd_event_source_set_priority(lp->poll_timer, SD_EVENT_PRIORITY_IDLE);
	} else if (r >= 0) {
		r = sd_event_add_time(lp->ev, &lp->txn_timer, CLOCK_MONOTONIC, 0, 1,
				      on_txn_timer, lp);
		if (r >= 0)
			r = sd_event_source_set_enabled(lp->txn_timer, SD_EVENT_OFF);
		if (r >= 0)
			r = sd_event_add_time(lp->ev, &lp->sa_timer, CLOCK_MONOTONIC, 0, 1000,
					      on_sa_timer, lp);
		if (r >= 0)
			r = sd_event_source_set_enabled(lp->sa_timer, SD_EVENT_OFF);
	}
	if (r < 0)
		return setup_failed("watch the MAD port", r);
	/* The kick waits, like the poll, for what is more urgent (control, signals) */
	r = sd_event_add_defer(lp->ev, &lp->kick, on_kick, lp);
	if (r >= 0)
		r = sd_event_source_set_priority(lp->kick, SD_EVENT_PRIORITY_IDLE);
	if (r >= 0)
		r = sd_event_source_set_enabled(lp->kick, SD_EVENT_OFF);
	if (r < 0)
		return setup_failed("create the sweep's kick", r);
	r = sd_event_add_time(lp->ev, &lp->sweep_timer, CLOCK_MONOTONIC, 0, 1000, on_sweep_timer,
			      lp);
	if (r < 0)
		return setup_failed("create the sweep timer", r);
	r = sd_event_add_time(lp->ev, &lp->progress, CLOCK_MONOTONIC, 0, 10000, on_progress, lp);
	if (r >= 0)
		r = sd_event_source_set_enabled(lp->progress, SD_EVENT_OFF);
	if (r < 0)
		return setup_failed("create the progress timer", r);
	if (smd->once)
		return 0;
	for (unsigned int i = 0; i < 3; i++) {
		r = sd_event_add_signal(lp->ev, &lp->sig[i], sigs[i], on_signal, lp);
		if (r < 0)
			return setup_failed("take the signals", r);
	}
	r = mkey_attach(smd, lp->ev, kick_arg, lp);
	if (r < 0)
		return setup_failed("create the M_Key timer", r);
	/* Counter sweeps: the first perf_interval seconds after start */
	r = sd_event_add_time(lp->ev, &lp->perf_timer, CLOCK_MONOTONIC, 0, 10000, on_perf_timer,
			      lp);
	if (r >= 0)
		r = sd_event_source_set_enabled(lp->perf_timer, SD_EVENT_OFF);
	if (r < 0)
		return setup_failed("create the counter timer", r);
	arm_perf_timer(lp, false);
	r = sd_event_add_time(lp->ev, &lp->sm_timer, CLOCK_MONOTONIC, 0, 1000, on_sm_timer, lp);
	if (r >= 0)
		r = sd_event_source_set_enabled(lp->sm_timer, SD_EVENT_OFF);
	if (r < 0)
		return setup_failed("create the SM poll timer", r);
	if (smd->cfg.ready_timeout) {
		r = sd_event_add_time_relative(lp->ev, &lp->ready_timer, CLOCK_MONOTONIC,
					       (uint64_t)smd->cfg.ready_timeout * 1000000u, 1000,
					       on_ready_timer, lp);
		if (r < 0)
			return setup_failed("create the readiness timer", r);
	}
	/* WATCHDOG=1 from the loop itself when the unit sets WatchdogSec= (for this pid) */
	if (sd_watchdog_enabled(false, &lp->watchdog_usec) > 0 && lp->watchdog_usec) {
		lp->watchdog_usec /= 4;
		r = sd_event_add_time_relative(lp->ev, &lp->watchdog, CLOCK_MONOTONIC, 0, 1000,
					       on_watchdog, lp);
		if (r < 0)
			return setup_failed("create the watchdog timer", r);
	}
	return 0;
}

/*
 * The loop of sd_event_loop(), with each dispatch timed: a handler that
 * kept the loop longer than LOOP_SLOW_US is counted and named (smctl status)
 */
static int run(struct loop *lp)
{
	struct smd_stats *st = &lp->smd->stats;
	int r;

	while (sd_event_get_state(lp->ev) != SD_EVENT_FINISHED) {
		uint64_t t0, dt;

		r = sd_event_prepare(lp->ev);
		if (r == 0)
			r = sd_event_wait(lp->ev, UINT64_MAX);
		if (r < 0)
			return r;
		if (r == 0)
			continue;
		lp->what = NULL;
		t0 = txn_now_us();
		r = sd_event_dispatch(lp->ev);
		if (r < 0)
			return r;
		dt = txn_now_us() - t0;
		if (dt > st->loop_max_us) {
			st->loop_max_us = dt;
			st->loop_max_what = lp->what ? lp->what : "control or other";
		}
		if (dt > LOOP_SLOW_US) {
			st->loop_slow++;
			log_debug("event loop: a handler (%s) took %" PRIu64 " ms",
				  lp->what ? lp->what : "control or other", dt / 1000);
		}
	}
	return 0;
}

/*
 * After the loop: abandon what runs (nothing swapped in, nothing saved, every
 * SMP dropped), wait for the worker a little. Returns false when the worker
 * is still computing (routing a big fabric): what it may read (the sweep,
 * the last model, the database, the multicast groups) is then left alone,
 * reachable from here, and smd exits without it.
 */
static struct loop *abandoned;

/*
 * Answers to SMPs just cancelled are still on their way: read them and let
 * them go, until none came for LOOP_DRAIN_QUIET_MS (at most LOOP_DRAIN_MS in
 * all). A kernel would drop them once the port is closed; libumad2sim (the
 * simulator's shim) hands a MAD that arrives while the process exits to its
 * receiver thread, which can then wait for ever on a lock the exiting
 * thread holds while that thread joins it (smd hung after SIGTERM once in
 * t_async beside stress-ng), or look up a descriptor already closed.
 */
#define LOOP_DRAIN_QUIET_MS	20
#define LOOP_DRAIN_MS		500

static void drain_port(struct loop *lp)
{
	struct pollfd pfd = { .fd = mad_port_fd(lp->smd->port), .events = POLLIN };
	uint64_t t0 = txn_now_us();
	uint8_t mad[MAD_SIZE];
	size_t len;

	while (txn_now_us() - t0 < LOOP_DRAIN_MS * 1000u) {
		int n = 0;

		pfd.revents = 0;
		if (poll(&pfd, 1, LOOP_DRAIN_QUIET_MS) < 0 ||
		    (pfd.revents & (POLLERR | POLLHUP | POLLNVAL)))
			return;
		/* (umad2sim's poll can miss a MAD queued before it waited: read either way) */
		while (n < 4096 && mad_port_recv(lp->smd->port, mad, &len, NULL, NULL) == 0)
			n++;
		if (!n && !pfd.revents)
			return;
	}
}

static bool loop_stop(struct loop *lp)
{
	struct smd *smd = lp->smd;
	bool out = txn_outstanding(smd->txn) || perf_outstanding(smd);

	if (smd->sweep)
		sweep_abandon(smd->sweep);
	/* Every callback runs once more, with -ECANCELED, and frees what it holds */
	txn_cancel_all(smd->txn);
	perf_cancel(smd);
	if (out && smd->port)
		drain_port(lp);
	if (!work_wait(lp, LOOP_STOP_WAIT_MS)) {
		log_warn("shutdown: the worker thread is still computing; leaving without it");
		lp->left_sweep = smd->sweep;
		lp->left_fabric = smd->fabric;
		lp->left_routes = smd->routes;
		lp->left_store = smd->store;
		lp->left_mcast = smd->mcast;
		lp->left_cabling = smd->cabling;
		smd->sweep = NULL;
		abandoned = lp;
		return false;
	}
	if (smd->sweep)
		smd->sweep = sweep_free(smd->sweep);
	if (smd->light) {
		light_end(smd->light);
		smd->light = NULL;
	}
	return true;
}

int loop_run(struct smd *smd, const struct loop_ops *ops, struct sweep_result *res)
{
	struct loop *lp = calloc(1, sizeof(*lp));
	int r;

	if (!lp)
		return -ENOMEM;
	lp->smd = smd;
	lp->ops = ops;
	lp->work_fd = -1;
	lp->once_res = res;
	smd->loop = lp;
	smd->stats.started = time(NULL);
	txn_set_unsolicited(smd->txn, on_unsolicited, smd);
	if (!smd->once) {
		smd->sm_actions = &sm_enter;
		if (!smd->cfg.sm_key)
			log_warn("no sm_key in the configuration: any host that opens issm can make "
				 "this SM standby or NOT-ACTIVE and take the subnet over "
				 "(smd.conf(5), sm_key)");
	}
	r = sd_event_new(&lp->ev);
	if (r < 0)
		goto out;
	r = add_sources(lp);
	if (r < 0)
		goto out;
	if (smd->once) {
		/* One heavy sweep, as master; the loop ends with it */
		sd_event_source_set_enabled(lp->sweep_timer, SD_EVENT_OFF);
		heavy_start(lp);
		loop_pump(lp);
	} else {
		open_control(lp);
		notify_status(lp);
	}
	if (sd_event_get_state(lp->ev) != SD_EVENT_FINISHED)
		r = run(lp);
	if (r < 0)
		log_error_errno(r, "event loop failed");
	else if (smd->once)
		r = lp->once_r;
out:
	if (!loop_stop(lp))
		smd->abandoned = true;
	smd->control = control_close(smd->control);
	smd->sm_actions = NULL;
	for (unsigned int i = 0; i < 3; i++)
		sd_event_source_unref(lp->sig[i]);
	sd_event_source_unref(lp->mad_io);
	sd_event_source_unref(lp->poll_timer);
	sd_event_source_unref(lp->txn_timer);
	sd_event_source_unref(lp->sa_timer);
	sd_event_source_unref(lp->kick);
	sd_event_source_unref(lp->work_io);
	sd_event_source_unref(lp->sweep_timer);
	sd_event_source_unref(lp->sm_timer);
	sd_event_source_unref(lp->ready_timer);
	sd_event_source_unref(lp->watchdog);
	sd_event_source_unref(lp->progress);
	sd_event_source_unref(lp->perf_timer);
	sd_event_unref(lp->ev);
	if (!smd->abandoned) {
		if (lp->work_fd >= 0)
			close(lp->work_fd);
		free(lp);
		smd->loop = NULL;
	}
	smd->stats.last = smd->stats.model = NULL;
	smd->stats.light = NULL;
	return r;
}
