// SPDX-License-Identifier: MIT
/*
 * smd: the InfiniBand subnet manager. main() parses the command line and
 * the config, opens the port and the database, then either runs one sweep
 * (--once) or stays in an sd-event loop that sweeps periodically and when
 * the fabric reports a change.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>

#include "autoconfig.h"
#include "smd/control.h"
#include "smd/light.h"
#include "smd/log.h"
#include "smd/smd.h"
#include "smd/sweep.h"
#include "smd/mcast.h"
#include "smd/sa_owner.h"
#include "smd/mkey.h"
#include "smd/partition.h"
#include "smd/trap.h"
#include "topo/route.h"
#include "mad/capture.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif

#define EXIT_NOT_UP	1
#define EXIT_USAGE	2

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: smd [OPTIONS]\n"
		"InfiniBand subnet manager.\n\n"
		"  -c, --config FILE   configuration file (default " SYSCONFDIR "/smd.conf)\n"
		"  -d, --db FILE       SQLite database (overrides 'db')\n"
		"  -p, --port SPEC     CA:PORT or port GUID (overrides 'port')\n"
		"      --capture FILE  write every MAD to FILE, pcap (overrides 'capture')\n"
		"  -o, --once          one sweep, then exit 0 if the subnet is up\n"
		"  -n, --check-config  check the configuration and exit; with -v print it\n"
		"  -v, --verbose       more logging (debug); with -n print the config\n"
		"  -h, --help          this text\n"
		"  -V, --version       print the version\n");
}

static void print_summary(const struct sweep_result *res)
{
	printf("smd: subnet %s: %u nodes (%u switches, %u CAs), %u ports, %u LIDs, "
	       "%" PRIu64 " SMPs (%" PRIu64 " timed out, %" PRIu64 " unanswered), %.2f s\n",
	       res->up ? "UP" : "NOT UP", res->nodes, res->switches, res->cas, res->ports,
	       res->lids, res->smps, res->timeouts, res->failed, res->seconds);
	fflush(stdout);
}

static int sa_send(void *ctx, const uint8_t mad[MAD_SIZE], size_t len, uint16_t dlid,
		   uint32_t qpn)
{
	struct smd *smd = ctx;

	return mad_port_send_len(smd->port, MAD_AGENT_SA, mad, len, dlid, qpn, 0);
}

struct sl2vl_ctx {
	void (*done)(void *arg, int status, const uint8_t vl[16]);
	void *arg;
};

static void sl2vl_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct sl2vl_ctx *c = arg;
	uint8_t vl[16] = { 0 };

	if (status == 0)
		sl2vl_table_decode(resp->data, vl);
	c->done(c->arg, status, vl);
	free(c);
}

/* The SA asks the fabric for an SL2VL table (IBA 14.2.5.8) by directed route */
static int sa_read_sl2vl(void *ctx, const struct fab_node *n, uint8_t in, uint8_t out,
			 void (*done)(void *arg, int status, const uint8_t vl[16]), void *arg)
{
	struct smd *smd = ctx;
	const struct dr_path *path;
	struct sl2vl_ctx *c;
	struct smp req;
	int r;

	/* A switch answers for all its ports; a CA port for itself */
	path = out <= n->num_ports ? fabric_port_route(&n->ports[out]) : NULL;
	if (!path)
		return -EINVAL;
	c = malloc(sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->done = done;
	c->arg = arg;
	smp_init_dr(&req, MAD_METHOD_GET, SMP_ATTR_SL2VL_TABLE,
		    n->type == NODE_TYPE_SWITCH ? (uint32_t)in << 8 | out : 0, path);
	r = txn_submit(smd->txn, &req, 0, sl2vl_cb, c);
	if (r < 0)
		free(c);
	return r;
}

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
		sa_handle(smd->sa, mad, len, from);
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

static int ensure_db_dir(const char *path)
{
	char *copy = strdup(path), *dir;
	int r = 0;

	if (!copy)
		return -ENOMEM;
	dir = dirname(copy);
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		r = -errno;
	free(copy);
	return r;
}

static int open_store(struct smd *smd)
{
	int r;

	r = ensure_db_dir(smd->cfg.db);
	if (r < 0)
		log_warn_errno(r, "cannot create the directory of %s", smd->cfg.db);
	r = store_open(smd->cfg.db, 0, &smd->store);
	if (r == -EBADMSG) {
		/*
		 * Corrupt or not a database: keep it for a post-mortem, start a new
		 * one. LIDs then come from what the ports hold (lid_assign keeps them).
		 */
		char aside[4096];
		int a = store_set_aside(smd->cfg.db, (int64_t)time(NULL), aside, sizeof(aside));

		if (a < 0) {
			log_error("database %s is unusable (%s) and cannot be moved aside (%s: %s); "
				  "running without persistence: LIDs will not be remembered",
				  smd->cfg.db, store_errmsg(smd->store), aside, strerror(-a));
			smd->store = store_close(smd->store);
			return 0;
		}
		log_error("database %s is unusable (%s): moved it aside to %s; starting a new "
			  "database, LIDs come from what the ports hold", smd->cfg.db,
			  store_errmsg(smd->store), aside);
		store_close(smd->store);
		r = store_open(smd->cfg.db, 0, &smd->store);
	}
	if (r < 0) {
		log_error("database %s unusable (%s)%s; running without persistence: "
			  "LIDs will not be remembered", smd->cfg.db, store_errmsg(smd->store),
			  r == -EPROTONOSUPPORT ? ", the file is left as it is" : "");
		smd->store = store_close(smd->store);
	}
	return 0;
}

/*
 * After every completed sweep the SA moves to the new model (the old one
 * is gone); it starts answering once a sweep has brought the subnet up.
 */
static void sa_serve(struct smd *smd, const struct sweep_result *res)
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
	r = sa_update(smd->sa, serving ? smd->fabric : NULL, smd->routes);
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
}

struct loop {
	struct smd *smd;
	sd_event *ev;
	sd_event_source *sweep_timer;
	sd_event_source *poll_timer;	/* only when the MAD fd cannot be watched */
	sd_event_source *sm_timer;	/* standby: the next poll of the master */
	sd_event_source *ready_timer;	/* READY=1 at the latest after ready_timeout */
	enum sm_state state;		/* the SM state the timers are set for */
	bool ready;			/* READY=1 sent */
	bool ready_timed_out;
	char status[512];		/* the last STATUS= sent */
	struct sweep_result last, model;	/* behind smd->stats.last and .model */
	struct light_result light;	/* behind smd->stats.light */
};

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

/* STATUS= after every sweep and SM state change, and READY=1 when due */
static void notify_status(struct loop *lp)
{
	char buf[sizeof(lp->status)];

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
	if (smd->resweep)
		return "the fabric changed";
	if (trap_due(smd->trapt) && txn_now_us() >= trap_due(smd->trapt))
		return "traps held back by their sources' hold-off";
	if (smd->last_sweep_down)
		return "the last sweep left the subnet not up";
	return NULL;
}

/*
 * A light sweep: true when the fabric changed (then the reason is in lr).
 * Idle ones log at debug only.
 */
static bool light_check(struct loop *lp, struct light_result *lr)
{
	struct smd *smd = lp->smd;
	int r;

	smd->light_sweeps++;
	r = light_sweep(smd, lr);
	lp->light = *lr;
	smd->stats.light = &lp->light;
	smd->stats.light_end = time(NULL);
	if (r < 0) {
		snprintf(lr->reason, sizeof(lr->reason), "light sweep failed (%s)", strerror(-r));
		return true;
	}
	log_debug("light sweep %" PRIu64 ": %u switches, %u PortStateChange, %u silent, %u reset; "
		  "%" PRIu64 " SMPs (%u Sets), %.3f s", smd->light_sweeps, lr->switches,
		  lr->changed, lr->silent, lr->differ, lr->smps, lr->sets, lr->seconds);
	return light_changed(lr);
}

static int do_sweep(struct loop *lp)
{
	struct smd *smd = lp->smd;
	struct smd_stats *st = &smd->stats;
	struct sweep_result res;
	struct light_result lr;
	const char *why;
	char buf[64];
	int r;

	/* Only a master (or an SM about to elect one) sweeps */
	if (smd->sm_state != SM_MASTER && smd->sm_state != SM_DISCOVERING) {
		smd->resweep = smd->resweep_heavy = false;
		smd->traps = 0;
		return 0;
	}
	st->rounds++;
	why = heavy_reason(smd, buf, sizeof(buf));
	if (!why) {
		if (!light_check(lp, &lr)) {
			st->light_only = true;
			control_sweep_done(smd->control);
			notify_status(lp);
			return 0;
		}
		log_info("light sweep: %s: heavy sweep", lr.reason);
	} else {
		/*
		 * Clear PortStateChange on the known switches first, so that a
		 * change during the heavy sweep is still flagged afterwards.
		 */
		if (smd->fabric && smd->sm_state == SM_MASTER)
			light_check(lp, &lr);
		log_info("heavy sweep: %s", why);
	}
	/* Asked for (SIGHUP, smctl resweep --heavy): routes computed afresh too */
	smd->route_full = smd->resweep_heavy;
	smd->resweep = smd->resweep_heavy = false;
	smd->traps = 0;
	trap_sweep_started(smd->trapt);
	smd->heavy_sweeps++;
	/* The sweep's warnings and errors are what smctl status lists */
	log_record(&st->problems);
	r = sweep_run(smd, &res);
	if (r < 0)
		log_error_errno(r, "sweep failed");
	log_record(NULL);
	smd->last_sweep_down = r < 0 || (!res.standby && !res.up);
	st->light_only = false;
	st->last_end = time(NULL);
	st->last_err = r < 0 ? r : 0;
	st->smps_sent += res.smps;
	st->smps_timed_out += res.timeouts;
	st->smps_lost += res.failed;
	lp->last = res;
	st->last = &lp->last;
	if (r < 0) {
		/* the model (and what check-routes shows) stays the previous one */
	} else if (res.standby) {
		printf("smd: standby: master is SM 0x%016" PRIx64 " (priority %u)\n",
		       smd->master.guid, smd->master.priority);
		fflush(stdout);
	} else {
		lp->model = res;
		st->model = &lp->model;
		st->model_sweep = smd->heavy_sweeps;
		st->model_end = st->last_end;
		sa_serve(smd, &res);
		print_summary(&res);
	}
	control_sweep_done(smd->control);
	notify_status(lp);
	return 0;
}

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
 * Set the timers for the SM state (smd/sm.c changes it): a master or a
 * discovering SM sweeps, a standby polls its master, a NOT-ACTIVE SM only
 * answers SMInfo. Leaving MASTER also stops the SA.
 */
static void sm_sync(struct loop *lp)
{
	struct smd *smd = lp->smd;
	enum sm_state st = smd->sm_state;

	if (st == lp->state)
		return;
	if (lp->state == SM_MASTER && smd->sa_serving) {
		sa_update(smd->sa, NULL, NULL);
		smd->sa_serving = false;
		log_info("SA: not answering (this SM is no longer master)");
	}
	lp->state = st;
	switch (st) {
	case SM_STANDBY:
		sd_event_source_set_enabled(lp->sweep_timer, SD_EVENT_OFF);
		arm_sm_timer(lp);
		control_sweep_cancel(smd->control, "this SM became STANDBY");
		break;
	case SM_DISCOVERING:
		sd_event_source_set_enabled(lp->sm_timer, SD_EVENT_OFF);
		arm_timer(lp, 0);
		break;
	case SM_MASTER:
		sd_event_source_set_enabled(lp->sm_timer, SD_EVENT_OFF);
		if (smd->resweep)
			arm_timer(lp, 0);	/* a handover: sweep at once */
		break;
	case SM_NOT_ACTIVE:
		sd_event_source_set_enabled(lp->sweep_timer, SD_EVENT_OFF);
		sd_event_source_set_enabled(lp->sm_timer, SD_EVENT_OFF);
		control_sweep_cancel(smd->control, "this SM became NOT-ACTIVE");
		break;
	}
	notify_status(lp);
}

static bool sweeping_state(const struct smd *smd)
{
	return smd->sm_state == SM_MASTER || smd->sm_state == SM_DISCOVERING;
}

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
		/* The partitions file is read again too: membership changes apply */
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
	int r = sm_enable(lp->smd, who);

	if (r == 0)
		sm_sync(lp);
	return r;
}

static const struct control_ops control_ops = {
	.resweep = control_resweep,
	.sm_enable = control_sm_enable,
};

/* Changes traps reported inside their sources' hold-off: a sweep when it ends */
static void arm_trap_due(struct loop *lp)
{
	uint64_t due = trap_due(lp->smd->trapt), now = txn_now_us();

	if (due && sweeping_state(lp->smd))
		arm_timer(lp, due > now ? due - now : 0);
}

static int on_sweep_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *lp = userdata;

	do_sweep(lp);
	mcast_run(lp->smd);
	if (!sweeping_state(lp->smd))
		;			/* a standby polls instead (sm_sync) */
	else if (lp->smd->resweep)
		arm_timer(lp, 100000);	/* a trap came in during the sweep */
	else if (lp->smd->cfg.sweep_interval)
		arm_timer(lp, (uint64_t)lp->smd->cfg.sweep_interval * 1000000u);
	arm_trap_due(lp);
	sm_sync(lp);
	return 0;
}

/* Standby: poll the master; take over after sm_poll_retries misses */
static int on_sm_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *lp = userdata;

	if (lp->smd->sm_state != SM_STANDBY)
		return 0;
	sm_poll_master(lp->smd);
	if (lp->smd->sm_state == SM_STANDBY)
		arm_sm_timer(lp);
	sm_sync(lp);
	return 0;
}

static int on_mad(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct loop *lp = userdata;

	txn_dispatch(lp->smd->txn);
	sa_tick(lp->smd->sa);
	/* Joins and leaves just answered: their trees and MFT blocks */
	mcast_run(lp->smd);
	sm_sync(lp);
	if (lp->smd->resweep && sweeping_state(lp->smd))
		arm_timer(lp, 100000);	/* coalesce a burst of traps */
	arm_trap_due(lp);
	return 0;
}

/*
 * libumad2sim (the simulator shim) hands out fake descriptors that epoll
 * refuses, and its poll() ignores every other descriptor. Then the loop
 * waits for MADs itself, in slices short enough for signals and timers.
 */
static int on_poll_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *lp = userdata;
	struct pollfd pfd = { .fd = mad_port_fd(lp->smd->port), .events = POLLIN };
	uint64_t now;

	/*
	 * umad2sim's poll() can miss a MAD that was queued before it started
	 * waiting: read whatever is there either way (reads never block).
	 */
	poll(&pfd, 1, 50);
	on_mad(NULL, pfd.fd, POLLIN, lp);
	sd_event_now(lp->ev, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(s, now);
	return sd_event_source_set_enabled(s, SD_EVENT_ON);
}

/*
 * Routes layered over several VLs are deadlock-free only for packets on
 * the SL their PathRecord names; MPI over UCX, NCCL and most RDMA programs
 * choose their SL themselves. An operator who opts in is told so.
 */
static void warn_layered(const struct smd_config *c)
{
	if (c->max_vls == 1)
		return;
	log_warn("max_vls = %u: routes may be spread over %s VLs to stay deadlock-free; then "
		 "only traffic on the SL the SA gives (PathRecord) is safe, and an application "
		 "that picks its own SL (UCX_IB_SL, NCCL_IB_SL, ...) can deadlock the fabric",
		 c->max_vls, c->max_vls ? "up to max_vls" : "all the ports'");
}

/* The command line's keys over the file's */
static int config_args(const struct smd *smd, struct smd_config *c, char *err, size_t errlen)
{
	if (smd->arg_db && config_set(c, "db", smd->arg_db, err, errlen) < 0)
		return -EINVAL;
	if (smd->arg_port && config_set(c, "port", smd->arg_port, err, errlen) < 0)
		return -EINVAL;
	if (smd->arg_capture && config_set(c, "capture", smd->arg_capture, err, errlen) < 0)
		return -EINVAL;
	return 0;
}

/*
 * SIGHUP: read the configuration again. Keys that shape the running
 * daemon take effect at once; the port, the database, the capture and the
 * SMP window keep their values until a restart, and smd says so (the key
 * table in config.c decides which is which). The partitions file is read
 * again; when it is refused, it and the ipoib keys stay as they were.
 */
static void reload_config(struct smd *smd)
{
	struct smd_config c, old;
	char err[512];
	int r;

	if (!smd->config_path)
		return;
	config_defaults(&c);
	r = config_load(&c, smd->config_path, err, sizeof(err));
	if (r >= 0)
		r = config_args(smd, &c, err, sizeof(err));
	if (r < 0) {
		log_error("SIGHUP: %s; keeping the running configuration", err);
		return;
	}
	if (c.max_vls != smd->cfg.max_vls)
		warn_layered(&c);
	if (c.sm_key != smd->cfg.sm_key)
		log_notice("SIGHUP: sm_key %s", c.sm_key ? "changed" : "removed");
	old = smd->cfg;
	config_reload(&smd->cfg, &c);
	log_set_level(c.log_level);
	smd->sa_env.sm_priority = (uint8_t)c.sm_priority;
	smd->sa_env.subnet_prefix = c.subnet_prefix;
	smd->sa_env.packet_life_time = c.packet_life_time;
	/* The SA trusts requests that carry the subnet's SM_Key (IBA 15.2.1.1) */
	smd->sa_env.trusted_key = c.sm_key;
	log_info("SIGHUP: configuration %s read again", smd->config_path);
	/* The partitions and their IPoIB groups follow (smd/partition.c); the
	 * keys they come from change only with them, so that status and
	 * smctl partitions name the file in force */
	if (partitions_reload(smd, "SIGHUP") < 0) {
		smd->cfg.ipoib = old.ipoib;
		smd->cfg.ipoib_mtu = old.ipoib_mtu;
		smd->cfg.ipoib_rate = old.ipoib_rate;
		smd->cfg.ipoib_sl = old.ipoib_sl;
		memcpy(smd->cfg.partition_config, old.partition_config,
		       sizeof(old.partition_config));
	}
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct loop *lp = userdata;

	if (si->ssi_signo == SIGHUP) {
		reload_config(lp->smd);
		lp->smd->resweep_heavy = true;
		if (sweeping_state(lp->smd)) {
			log_info("SIGHUP: sweeping now");
			arm_timer(lp, 0);
		} else {
			log_info("SIGHUP: %s, not sweeping", sm_state_name(lp->smd->sm_state));
		}
		return 0;
	}
	log_info("signal %u: shutting down", si->ssi_signo);
	sd_notify(0, "STOPPING=1");
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

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

static int run_daemon(struct smd *smd)
{
	struct loop lp = { .smd = smd, .state = smd->sm_state };
	int r;

	smd->stats.started = time(NULL);
	if (!smd->cfg.sm_key)
		log_warn("no sm_key in the configuration: any host that opens issm can make this "
			 "SM standby or NOT-ACTIVE and take the subnet over (smd.conf(5), sm_key)");
	r = sd_event_default(&lp.ev);
	if (r < 0)
		return r;
	/* WATCHDOG=1 from the loop itself when the unit sets WatchdogSec= */
	sd_event_set_watchdog(lp.ev, true);
	sd_event_add_signal(lp.ev, NULL, SIGTERM, on_signal, &lp);
	sd_event_add_signal(lp.ev, NULL, SIGINT, on_signal, &lp);
	sd_event_add_signal(lp.ev, NULL, SIGHUP, on_signal, &lp);
	r = sd_event_add_io(lp.ev, NULL, mad_port_fd(smd->port), EPOLLIN, on_mad, &lp);
	if (r == -EBADF || r == -EPERM) {
		log_debug("MAD port fd cannot be watched (%s): polling it", strerror(-r));
		/* accuracy 1 us: sd-event's default (0) lets a timer slip 250 ms */
		r = sd_event_add_time(lp.ev, &lp.poll_timer, CLOCK_MONOTONIC, 0, 1,
				      on_poll_timer, &lp);
		if (r >= 0)
			r = sd_event_source_set_priority(lp.poll_timer, SD_EVENT_PRIORITY_IDLE);
	}
	if (r < 0) {
		log_error_errno(r, "cannot watch the MAD port");
		goto out;
	}
	r = sd_event_add_time(lp.ev, &lp.sweep_timer, CLOCK_MONOTONIC, 0, 1000, on_sweep_timer, &lp);
	if (r < 0) {
		log_error_errno(r, "cannot create the sweep timer");
		goto out;
	}
	r = sd_event_add_time(lp.ev, &lp.sm_timer, CLOCK_MONOTONIC, 0, 1000, on_sm_timer, &lp);
	if (r >= 0)
		r = sd_event_source_set_enabled(lp.sm_timer, SD_EVENT_OFF);
	if (r < 0) {
		log_error_errno(r, "cannot create the SM poll timer");
		goto out;
	}
	if (smd->cfg.ready_timeout) {
		r = sd_event_add_time_relative(lp.ev, &lp.ready_timer, CLOCK_MONOTONIC,
					       (uint64_t)smd->cfg.ready_timeout * 1000000u, 1000,
					       on_ready_timer, &lp);
		if (r < 0) {
			log_error_errno(r, "cannot create the readiness timer");
			goto out;
		}
	}
	r = mkey_attach(smd, lp.ev);
	if (r < 0) {
		log_error_errno(r, "cannot create the M_Key timer");
		goto out;
	}
	open_control(&lp);
	notify_status(&lp);
	r = sd_event_loop(lp.ev);
	if (r < 0)
		log_error_errno(r, "event loop failed");
out:
	smd->control = control_close(smd->control);
	sd_event_source_unref(lp.sweep_timer);
	sd_event_source_unref(lp.poll_timer);
	sd_event_source_unref(lp.sm_timer);
	sd_event_source_unref(lp.ready_timer);
	sd_event_unref(lp.ev);
	smd->stats.last = smd->stats.model = NULL;
	smd->stats.light = NULL;
	return r;
}

/*
 * capture = FILE (or --capture): every MAD sent and received, as IB packets
 * in a pcap file. A file that cannot be created is not fatal: smd runs
 * without capture. LIDs in the frames: ours as the last sweep gave it.
 */
static struct capture *open_capture(struct smd *smd)
{
	const struct smd_config *cfg = &smd->cfg;
	struct capture_cfg cc = {
		.path = cfg->capture, .max_bytes = (uint64_t)cfg->capture_max_mb << 20,
		.classes = cfg->capture_classes, .local_lid = &smd->sm_lid,
		.port_lid = mad_port_attr(smd->port)->lid,
	};
	struct capture *cap;
	char classes[64];
	int r;

	if (!cfg->capture[0])
		return NULL;
	r = capture_open(&cc, &cap);
	if (r < 0) {
		log_error("cannot create capture file %s: %s; running without capture",
			  cfg->capture, strerror(-r));
		return NULL;
	}
	capture_format_classes(cfg->capture_classes, classes, sizeof(classes));
	log_info("capturing MADs (%s) to %s", classes, cfg->capture);
	mad_port_set_capture(smd->port, cap);
	return cap;
}

static void close_capture(struct smd *smd, struct capture *cap)
{
	struct capture_stats st;
	int r;

	if (!cap)
		return;
	mad_port_set_capture(smd->port, NULL);
	capture_flush(cap);
	capture_get_stats(cap, &st);
	r = capture_close(cap);
	log_info("capture %s: %" PRIu64 " MADs sent, %" PRIu64 " received (%" PRIu64
		 " given back by the transport), %" PRIu64 " filtered out; %" PRIu64
		 " frames, %" PRIu64 " bytes, %" PRIu64 " rotations", smd->cfg.capture, st.sent,
		 st.received, st.lost, st.filtered, st.frames, st.bytes, st.rotations);
	if (r < 0)
		log_error("capture %s: writing failed (%s): the last %" PRIu64 " MADs are missing",
			  smd->cfg.capture, strerror(-r), st.dropped);
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "db", required_argument, NULL, 'd' },
		{ "port", required_argument, NULL, 'p' },
		{ "once", no_argument, NULL, 'o' },
		{ "check-config", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "capture", required_argument, NULL, 'C' },
		{ NULL, 0, NULL, 0 },
	};
	const char *capture_path = NULL;
	struct capture *cap = NULL;
	const char *config_path = NULL, *db = NULL, *port = NULL;
	bool once = false, check = false;
	int verbose = 0, c, r, rc = EXIT_FAILURE;
	struct smd smd = { 0 };
	struct txn_cfg tc;
	char err[512];

	log_init("smd", LOG_LVL_INFO);
	while ((c = getopt_long(argc, argv, "c:d:p:onvhV", opts, NULL)) != -1) {
		switch (c) {
		case 'c': config_path = optarg; break;
		case 'd': db = optarg; break;
		case 'p': port = optarg; break;
		case 'o': once = true; break;
		case 'n': check = true; break;
		case 'v': verbose++; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("smd %s\n", PACKAGE_VERSION); return 0;
		case 'C': capture_path = optarg; break;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "smd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}

	config_defaults(&smd.cfg);
	if (config_path || access(SYSCONFDIR "/smd.conf", F_OK) == 0) {
		const char *path = config_path ? config_path : SYSCONFDIR "/smd.conf";

		r = config_load(&smd.cfg, path, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "smd: %s\n", err);
			return EXIT_USAGE;
		}
		smd.config_path = path;
	}
	if ((db && config_set(&smd.cfg, "db", db, err, sizeof(err)) < 0) ||
	    (port && config_set(&smd.cfg, "port", port, err, sizeof(err)) < 0)) {
		fprintf(stderr, "smd: %s\n", err);
		return EXIT_USAGE;
	}
	if (capture_path && config_set(&smd.cfg, "capture", capture_path, err, sizeof(err)) < 0) {
		fprintf(stderr, "smd: %s\n", err);
		return EXIT_USAGE;
	}
	/* The partitions file: refused whole, with file:line, before anything runs */
	r = partitions_load(&smd.cfg, smd.config_path, &smd.parts, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "smd: %s\n", err);
		return EXIT_USAGE;
	}
	if (check) {
		if (verbose) {
			config_print(&smd.cfg, stdout);
			printf("# partitions as smd reads them (OpenSM partitions.conf syntax):\n");
			partitions_print(smd.parts, stdout, "# ");
		} else {
			printf("configuration OK\n");
		}
		part_conf_free(smd.parts);
		return 0;
	}
	log_set_level(verbose ? LOG_LVL_DEBUG : smd.cfg.log_level);
	warn_layered(&smd.cfg);
	if (!once) {
		/*
		 * The daemon takes its signals through sd-event; block them before
		 * any library starts a thread (umad2sim does), or the default action
		 * would hit that thread and kill the process.
		 */
		sigset_t mask;

		sigemptyset(&mask);
		sigaddset(&mask, SIGTERM);
		sigaddset(&mask, SIGINT);
		sigaddset(&mask, SIGHUP);
		pthread_sigmask(SIG_BLOCK, &mask, NULL);
	}

	r = mad_port_open(smd.cfg.port[0] ? smd.cfg.port : NULL, &smd.port);
	if (r < 0) {
		log_error("cannot open InfiniBand port %s: %s%s", smd.cfg.port[0] ? smd.cfg.port :
			  "(first with link up)", strerror(-r),
			  r == -ENODEV ? " (no such port, or no port with its link up)" : "");
		return EXIT_FAILURE;
	}
	const struct mad_port_attr *pa = mad_port_attr(smd.port);

	log_info("using %s port %d, GUID 0x%016" PRIx64, pa->ca_name, pa->port_num,
		 pa->port_guid);
	cap = open_capture(&smd);
	tc.window = smd.cfg.max_outstanding_smps;
	tc.timeout_ms = smd.cfg.smp_timeout_ms;
	tc.retries = smd.cfg.smp_retries;
	r = txn_new(&txn_port_ops, smd.port, &tc, &smd.txn);
	if (r < 0) {
		log_error_errno(r, "cannot set up transactions");
		goto out;
	}
	txn_set_unsolicited(smd.txn, on_unsolicited, &smd);
	r = trap_table_new(&smd.trapt);
	if (r < 0) {
		log_error_errno(r, "cannot set up trap handling");
		goto out;
	}
	smd.sa_env = (struct sa_env){
		.sm_guid = pa->port_guid, .sm_priority = (uint8_t)smd.cfg.sm_priority,
		.subnet_prefix = smd.cfg.subnet_prefix,
		.packet_life_time = smd.cfg.packet_life_time,
		.send = sa_send, .read_sl2vl = sa_read_sl2vl, .ctx = &smd,
		.vlarb = &smd.vlarb[0][0], .trusted_key = smd.cfg.sm_key,
	};
	r = sa_new(&smd.sa_env, &smd.sa);
	if (r < 0) {
		log_error_errno(r, "cannot set up the SA");
		goto out;
	}
	open_store(&smd);
	sa_owner_init(&smd);
	/* Every SMP carries the M_Key of the port it goes to (smd/mkey.h) */
	r = mkey_new(&smd);
	if (r < 0) {
		log_error_errno(r, "cannot set up M_Keys");
		goto out;
	}
	txn_set_mkey(smd.txn, mkey_for_smp, &smd);
	r = mcast_init(&smd);
	if (r < 0) {
		log_error_errno(r, "cannot set up multicast");
		goto out;
	}

	/* The daemon elects a master (IBA 14.4); --once just sweeps, as master */
	smd.elect = !once;
	smd.sm_state = once ? SM_MASTER : SM_DISCOVERING;
	if (once) {
		struct sweep_result res;

		r = sweep_run(&smd, &res);
		if (r < 0) {
			log_error_errno(r, "sweep failed");
			goto out;
		}
		print_summary(&res);
		rc = res.up ? 0 : EXIT_NOT_UP;
	} else {
		r = run_daemon(&smd);
		rc = r < 0 ? EXIT_FAILURE : 0;
	}
out:
	trap_table_free(smd.trapt);
	mkey_free(&smd);
	sa_free(smd.sa);
	mcast_fini(&smd);
	part_conf_free(smd.parts);
	route_result_free(smd.routes);
	fabric_free(smd.fabric);
	store_close(smd.store);
	txn_free(smd.txn);
	close_capture(&smd, cap);
	mad_port_close(smd.port);
	return rc;
}
