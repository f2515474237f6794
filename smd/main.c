// SPDX-License-Identifier: MIT
/*
 * smd: the InfiniBand subnet manager. main() parses the command line and
 * the config, opens the port and the database, hands over to the event loop
 * (smd/loop.c: the daemon, or one sweep with --once), and tears down.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <systemd/sd-daemon.h>

#include "autoconfig.h"
#include "util/log.h"
#include "smd/loop.h"
#include "smd/smd.h"
#include "smd/sweep.h"
#include "smd/mcast.h"
#include "smd/sa_owner.h"
#include "smd/mkey.h"
#include "smd/cabling.h"
#include "smd/health.h"
#include "smd/perf.h"
#include "smd/partitions.h"
#include "smd/import_opensm.h"
#include "smd/trap.h"
#include "smd/vlread.h"
#include "topo/route.h"
#include "mad/capture.h"

#ifndef SYSCONFDIR
#define SYSCONFDIR "/etc"
#endif
/* The configuration lives in a directory of its own, with the partitions file */
#define SMD_CONF SYSCONFDIR "/smd/smd.conf"

#define EXIT_NOT_UP	1
#define EXIT_USAGE	2

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: smd [OPTIONS]\n"
		"InfiniBand subnet manager.\n\n"
		"  -c, --config FILE   configuration file (default " SMD_CONF ")\n"
		"  -d, --db FILE       SQLite database (overrides 'db')\n"
		"  -p, --port SPEC     CA:PORT or port GUID (overrides 'port')\n"
		"      --capture FILE  write every MAD to FILE, pcap (overrides 'capture')\n"
		"  -o, --once          one sweep, then exit 0 if the subnet is up\n"
		"  -n, --check-config  check the configuration and exit; with -v print it\n"
		"  -v, --verbose       more logging (debug); with -n print the config\n"
		"      --import-opensm FILE  print the smd.conf equivalent of OpenSM's opensm.conf\n"
		"  -h, --help          this text\n"
		"  -V, --version       print the version\n");
}

/* An SA answer, to its request's address */
static int sa_send(void *ctx, const uint8_t mad[MAD_SIZE], size_t len, const struct mad_addr *to)
{
	return smd_send(ctx, MAD_AGENT_SA, mad, len, to, 0);
}

/* Tables of the ports being read (smd/vlread.c): the SA answers BUSY for those */
static bool sa_tables_busy(void *ctx)
{
	return vlread_busy(ctx);
}

/*
 * The SM_Key that makes an SA request trusted (IBA 15.2.1.1): sa_key when
 * set, so that the hosts given it cannot also take the subnet over with
 * it; else the subnet's sm_key, as before sa_key existed
 */
static uint64_t sa_trusted_key(const struct smd_config *c)
{
	return c->sa_key ? c->sa_key : c->sm_key;
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
 * During a sweep the loop calls this when the sweep ends.
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
	if (c.sa_key != smd->cfg.sa_key)
		log_notice("SIGHUP: sa_key %s", c.sa_key ? "changed" : "removed");
	old = smd->cfg;
	config_reload(&smd->cfg, &c);
	log_set_level(c.log_level);
	smd->sa_env.sm_priority = (uint8_t)c.sm_priority;
	smd->sa_env.subnet_prefix = c.subnet_prefix;
	smd->sa_env.packet_life_time = c.packet_life_time;
	smd->sa_env.trusted_key = sa_trusted_key(&c);
	log_info("SIGHUP: configuration %s read again", smd->config_path);
	/* The partitions and their IPoIB groups follow (smd/partitions.c); the
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
	/* The cabling plan too: a plan refused leaves the one in force (smd/cabling.c) */
	cabling_reload(smd, "SIGHUP");
	/* Health thresholds, window, action; the counter timer follows perf_interval */
	health_reload(smd);
}

/*
 * The SM's port; on failure, why, said for the operator, and the exit
 * status (smd(8), EXIT STATUS): > 0. STATUS= too, for systemctl status.
 */
static int open_port(struct smd *smd)
{
	const char *spec = smd->cfg.port[0] ? smd->cfg.port : NULL;
	struct mad_port_failure why;
	char port[160], msg[1024];
	int r, rc = EXIT_FAILURE;

	r = mad_port_open_sm(spec, &smd->port, &why);
	if (r == 0)
		return 0;
	if (why.attr.ca_name[0])
		snprintf(port, sizeof(port), "%s:%d", why.attr.ca_name, why.attr.port_num);
	else
		snprintf(port, sizeof(port), "%s", spec ? spec : "(first with link up)");
	switch (why.stage) {
	case MAD_PORT_STAGE_ISSM_BUSY:
		snprintf(msg, sizeof(msg), "another SM owns port %s: %s is held open by another "
			 "process (opensm, or another smd); stop it, or give smd another port",
			 port, why.path);
		rc = SMD_EXIT_SM_BUSY;
		break;
	case MAD_PORT_STAGE_SM_DISABLED:
		snprintf(msg, sizeof(msg), "port %s cannot run an SM: its PortInfo says "
			 "IsSMDisabled (CapabilityMask 0x%08x; on a multi-plane HCA the SM "
			 "runs on the plane's SMI device)", port, why.attr.cap_mask);
		rc = SMD_EXIT_NOT_SM_PORT;
		break;
	case MAD_PORT_STAGE_SMI:
		snprintf(msg, sizeof(msg), "port %s cannot run an SM: libibumad finds no SMI "
			 "device (QP0) for it", port);
		rc = SMD_EXIT_NOT_SM_PORT;
		break;
	case MAD_PORT_STAGE_AGENT_SA:
		snprintf(msg, sizeof(msg), "port %s: the kernel refused smd's SA agent (%s): "
			 "another SA serves this port, or the umad module is too old; not "
			 "running an SM without its SA", port, strerror(-r));
		break;
	case MAD_PORT_STAGE_AGENT_SMI:
		snprintf(msg, sizeof(msg), "port %s: the kernel refused smd's SM agents (%s): "
			 "another SM serves this port", port, strerror(-r));
		break;
	case MAD_PORT_STAGE_ISSM:
		snprintf(msg, sizeof(msg), "port %s: cannot open %s: %s", port,
			 why.path[0] ? why.path : "its issm device", strerror(-r));
		break;
	default:
		snprintf(msg, sizeof(msg), "cannot open InfiniBand port %s: %s%s", port,
			 strerror(-r), r == -ENODEV ? " (no such port, or no port with its link up)" :
			 "");
		break;
	}
	log_error("%s", msg);
	sd_notifyf(0, "STATUS=%s", msg);
	return rc;
}

static const struct loop_ops loop_ops = {
	.reload = reload_config,
};

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
		{ "import-opensm", required_argument, NULL, 'O' },
		{ NULL, 0, NULL, 0 },
	};
	const char *capture_path = NULL, *import_path = NULL;
	struct capture *cap = NULL;
	const char *config_path = NULL, *db = NULL, *port = NULL;
	bool once = false, check = false;
	int verbose = 0, c, r, rc = EXIT_FAILURE;
	struct smd smd = { 0 };
	struct txn_cfg tc = { 0 };
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
		case 'O': import_path = optarg; break;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "smd: unexpected argument '%s'\n", argv[optind]);
		usage(stderr);
		return EXIT_USAGE;
	}
	/* 0, 1 when some lines were not understood, 2 when the file cannot be read */
	if (import_path) {
		r = import_opensm_conf(import_path, stdout, stderr);
		return r < 0 ? EXIT_USAGE : r;
	}

	config_defaults(&smd.cfg);
	if (config_path || access(SMD_CONF, F_OK) == 0) {
		const char *path = config_path ? config_path : SMD_CONF;

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
	/* SIGHUP applies them again over the file (config_args) */
	smd.arg_db = db;
	smd.arg_port = port;
	smd.arg_capture = capture_path;
	/* The partitions file: refused whole, with file:line, before anything runs */
	r = partitions_load(&smd.cfg, smd.config_path, &smd.parts, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "smd: %s\n", err);
		return EXIT_USAGE;
	}
	if (check) {
		size_t pn = 0, pc = 0;

		r = import_guid2lid_check(&smd.cfg, smd.config_path, err, sizeof(err));
		/* A plan the daemon would refuse (and run without) is an error here */
		if (r == 0)
			r = cabling_check(&smd.cfg, smd.config_path, &pn, &pc, err, sizeof(err));
		if (r < 0) {
			fprintf(stderr, "smd: %s\n", err);
			part_conf_free(smd.parts);
			return EXIT_USAGE;
		}
		if (verbose) {
			config_print(&smd.cfg, stdout);
			if (smd.cfg.cabling_plan[0])
				printf("# cabling plan as smd reads it: %zu nodes, %zu cables\n", pn,
				       pc);
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
	if (cabling_init(&smd) < 0) {
		log_error("out of memory");
		part_conf_free(smd.parts);
		return EXIT_FAILURE;
	}
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

	r = open_port(&smd);
	if (r > 0) {
		cabling_free(&smd);
		part_conf_free(smd.parts);
		return r;
	}
	const struct mad_port_attr *pa = mad_port_attr(smd.port);

	log_info("using %s port %d, GUID 0x%016" PRIx64, pa->ca_name, pa->port_num,
		 pa->port_guid);
	cap = open_capture(&smd);
	tc.window = smd.cfg.max_outstanding_smps;
	/* A floor above the ceiling is the ceiling: a fixed window */
	tc.window_min = smd.cfg.min_outstanding_smps < tc.window ? smd.cfg.min_outstanding_smps :
			tc.window;
	if (smd.cfg.min_outstanding_smps > tc.window)
		log_warn("min_outstanding_smps %u is above max_outstanding_smps %u: the SMP "
			 "window is fixed at %u", smd.cfg.min_outstanding_smps, tc.window,
			 tc.window);
	tc.timeout_ms = smd.cfg.smp_timeout_ms;
	tc.retries = smd.cfg.smp_retries;
	r = txn_new(&txn_port_ops, smd.port, &tc, &smd.txn);
	if (r < 0) {
		log_error_errno(r, "cannot set up transactions");
		goto out;
	}
	r = trap_table_new(&smd.trapt);
	if (r < 0) {
		log_error_errno(r, "cannot set up trap handling");
		goto out;
	}
	smd.sa_env = (struct sa_env){
		.sm_guid = pa->port_guid, .sm_priority = (uint8_t)smd.cfg.sm_priority,
		.subnet_prefix = smd.cfg.subnet_prefix,
		.packet_life_time = smd.cfg.packet_life_time,
		.send = sa_send, .ctx = &smd, .trusted_key = sa_trusted_key(&smd.cfg),
		.tables_busy = sa_tables_busy,
	};
	r = sa_new(&smd.sa_env, &smd.sa);
	if (r < 0) {
		log_error_errno(r, "cannot set up the SA");
		goto out;
	}
	open_store(&smd);
	/* opensm_guid2lid: refused, smd must not renumber the fabric */
	if (import_guid2lid_start(&smd) < 0) {
		rc = EXIT_USAGE;
		goto out;
	}
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
	/* Counters and health (issue 20): isolated links from the database */
	r = perf_init(&smd);
	if (r == 0)
		r = health_init(&smd);
	if (r < 0) {
		log_error_errno(r, "cannot set up the performance manager");
		goto out;
	}

	/* The daemon elects a master (IBA 14.4); --once just sweeps, as master */
	smd.once = once;
	smd.elect = !once;
	smd.sm_state = once ? SM_MASTER : SM_DISCOVERING;
	{
		struct sweep_result res;

		/* The loop logs a failed sweep (or its own failure, or the port's) */
		r = loop_run(&smd, &loop_ops, &res);
		if (smd.exit_status)
			rc = smd.exit_status;
		else if (r < 0)
			rc = EXIT_FAILURE;
		else
			rc = once && !res.up ? EXIT_NOT_UP : 0;
	}
out:
	trap_table_free(smd.trapt);
	mkey_free(&smd);
	/* Before the store: what waits for the database (no sweep runs now) */
	if (!smd.abandoned && smd.health)
		health_flush(&smd);
	/* NULL: multicast leaves at exit tell no subscriber (mcast_fini below) */
	smd.sa = sa_free(smd.sa);
	if (!smd.abandoned) {
		/* else the worker may still read them: smd exits without freeing them */
		mcast_fini(&smd);
		route_result_free(smd.routes);
		fabric_free(smd.fabric);
		store_close(smd.store);
		cabling_free(&smd);
	}
	/* The worker never reads the partitions (the pkeys phase runs on the loop) */
	part_conf_free(smd.parts);
	perf_free(&smd);	/* its callbacks use the ports' table, health's the model */
	health_free(&smd);
	txn_free(smd.txn);
	vlread_free(&smd);	/* after the transactions: their callbacks use it */
	close_capture(&smd, cap);
	mad_port_close(smd.port);
	return rc;
}
