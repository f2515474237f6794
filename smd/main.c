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
#include "smd/log.h"
#include "smd/smd.h"
#include "smd/sweep.h"

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

/* Answer SMInfo Get (sminfo, other SMs): IBA 14.4.1 */
static void answer_sm_info(struct smd *smd, const uint8_t *mad, size_t len,
			   const struct mad_addr *from)
{
	struct sm_info si = {
		.guid = mad_port_attr(smd->port)->port_guid,
		.act_count = smd->act_count,
		.priority = (uint8_t)smd->cfg.sm_priority,
		.sm_state = SM_STATE_MASTER,
	};
	uint8_t buf[MAD_SIZE];
	struct smp smp;
	int r;

	if (smp_decode(mad, len, &smp) < 0 || smp.hdr.mgmt_class != MAD_CLASS_SMI)
		return;
	smp_make_response(&smp, 0);
	sm_info_encode(&si, smp.data);
	if (smp_encode(&smp, buf) < 0)
		return;
	r = mad_port_send(smd->port, MAD_AGENT_SMI, buf, from->slid, from->qpn, 0);
	if (r < 0)
		log_debug("SMInfo answer to LID %u failed: %s", from->slid, strerror(-r));
}

static void on_unsolicited(void *arg, const uint8_t *mad, size_t len, const struct mad_addr *from)
{
	struct smd *smd = arg;
	uint8_t mclass, method;

	if (mad_peek(mad, len, &mclass, &method, NULL) < 0)
		return;
	if (method == MAD_METHOD_GET && len == MAD_SIZE &&
	    wire_bits_get(mad, 128, 16) == SMP_ATTR_SM_INFO) {
		answer_sm_info(smd, mad, len, from);
		return;
	}
	if (method == MAD_METHOD_TRAP) {
		/* Trap 128 and friends: the fabric changed, look again (IBA 14.3.12) */
		smd->traps++;
		smd->resweep = true;
		log_debug("trap from LID %u: resweep requested", from->slid);
	}
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
		log_warn("cannot create the directory of %s: %s", smd->cfg.db, strerror(-r));
	r = store_open(smd->cfg.db, 0, &smd->store);
	if (r < 0) {
		log_error("database %s unusable (%s)%s; running without persistence: "
			  "LIDs will not be remembered", smd->cfg.db, store_errmsg(smd->store),
			  r == -EBADMSG ? ", the file is left as it is: move it aside" : "");
		smd->store = store_close(smd->store);
	}
	return 0;
}

struct loop {
	struct smd *smd;
	sd_event *ev;
	sd_event_source *sweep_timer;
	sd_event_source *poll_timer;	/* only when the MAD fd cannot be watched */
	bool ready;
};

static int do_sweep(struct loop *lp)
{
	struct sweep_result res;
	int r;

	lp->smd->resweep = false;
	lp->smd->traps = 0;
	r = sweep_run(lp->smd, &res);
	if (r < 0) {
		log_error("sweep failed: %s", strerror(-r));
	} else {
		print_summary(&res);
		sd_notifyf(0, "STATUS=subnet %s: %u nodes, %u LIDs", res.up ? "up" : "NOT up",
			   res.nodes, res.lids);
	}
	if (!lp->ready) {
		sd_notify(0, "READY=1");
		lp->ready = true;
	}
	return 0;
}

static int arm_timer(struct loop *lp, uint64_t usec)
{
	uint64_t now;

	sd_event_now(lp->ev, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(lp->sweep_timer, now + usec);
	return sd_event_source_set_enabled(lp->sweep_timer, SD_EVENT_ONESHOT);
}

static int on_sweep_timer(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct loop *lp = userdata;

	do_sweep(lp);
	if (lp->smd->resweep)
		arm_timer(lp, 100000);	/* a trap came in during the sweep */
	else if (lp->smd->cfg.sweep_interval)
		arm_timer(lp, (uint64_t)lp->smd->cfg.sweep_interval * 1000000u);
	return 0;
}

static int on_mad(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct loop *lp = userdata;

	txn_dispatch(lp->smd->txn);
	if (lp->smd->resweep)
		arm_timer(lp, 100000);	/* coalesce a burst of traps */
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

	if (poll(&pfd, 1, 50) > 0)
		on_mad(NULL, pfd.fd, pfd.revents, lp);
	sd_event_now(lp->ev, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(s, now);
	return sd_event_source_set_enabled(s, SD_EVENT_ON);
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata)
{
	struct loop *lp = userdata;

	if (si->ssi_signo == SIGHUP) {
		log_info("SIGHUP: sweeping now");
		arm_timer(lp, 0);
		return 0;
	}
	log_info("signal %u: shutting down", si->ssi_signo);
	sd_notify(0, "STOPPING=1");
	return sd_event_exit(sd_event_source_get_event(s), 0);
}

static int run_daemon(struct smd *smd)
{
	struct loop lp = { .smd = smd };
	int r;

	r = sd_event_default(&lp.ev);
	if (r < 0)
		return r;
	sd_event_add_signal(lp.ev, NULL, SIGTERM, on_signal, &lp);
	sd_event_add_signal(lp.ev, NULL, SIGINT, on_signal, &lp);
	sd_event_add_signal(lp.ev, NULL, SIGHUP, on_signal, &lp);
	r = sd_event_add_io(lp.ev, NULL, mad_port_fd(smd->port), EPOLLIN, on_mad, &lp);
	if (r == -EBADF || r == -EPERM) {
		log_debug("MAD port fd cannot be watched (%s): polling it", strerror(-r));
		r = sd_event_add_time(lp.ev, &lp.poll_timer, CLOCK_MONOTONIC, 0, 0,
				      on_poll_timer, &lp);
		if (r >= 0)
			r = sd_event_source_set_priority(lp.poll_timer, SD_EVENT_PRIORITY_IDLE);
	}
	if (r < 0) {
		log_error("cannot watch the MAD port: %s", strerror(-r));
		goto out;
	}
	r = sd_event_add_time(lp.ev, &lp.sweep_timer, CLOCK_MONOTONIC, 0, 0, on_sweep_timer, &lp);
	if (r < 0) {
		log_error("cannot create the sweep timer: %s", strerror(-r));
		goto out;
	}
	r = sd_event_loop(lp.ev);
	if (r < 0)
		log_error("event loop failed: %s", strerror(-r));
out:
	sd_event_source_unref(lp.sweep_timer);
	sd_event_source_unref(lp.poll_timer);
	sd_event_unref(lp.ev);
	return r;
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
		{ NULL, 0, NULL, 0 },
	};
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
	}
	if ((db && config_set(&smd.cfg, "db", db, err, sizeof(err)) < 0) ||
	    (port && config_set(&smd.cfg, "port", port, err, sizeof(err)) < 0)) {
		fprintf(stderr, "smd: %s\n", err);
		return EXIT_USAGE;
	}
	if (check) {
		if (verbose)
			config_print(&smd.cfg, stdout);
		else
			printf("configuration OK\n");
		return 0;
	}
	log_set_level(verbose ? LOG_LVL_DEBUG : smd.cfg.log_level);
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
	tc.window = smd.cfg.max_outstanding_smps;
	tc.timeout_ms = smd.cfg.smp_timeout_ms;
	tc.retries = smd.cfg.smp_retries;
	r = txn_new(&txn_port_ops, smd.port, &tc, &smd.txn);
	if (r < 0) {
		log_error("cannot set up transactions: %s", strerror(-r));
		goto out;
	}
	txn_set_unsolicited(smd.txn, on_unsolicited, &smd);
	open_store(&smd);

	if (once) {
		struct sweep_result res;

		r = sweep_run(&smd, &res);
		if (r < 0) {
			log_error("sweep failed: %s", strerror(-r));
			goto out;
		}
		print_summary(&res);
		rc = res.up ? 0 : EXIT_NOT_UP;
	} else {
		r = run_daemon(&smd);
		rc = r < 0 ? EXIT_FAILURE : 0;
	}
out:
	fabric_free(smd.fabric);
	store_close(smd.store);
	txn_free(smd.txn);
	mad_port_close(smd.port);
	return rc;
}
