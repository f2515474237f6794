/* SPDX-License-Identifier: MIT */
/* The daemon's context: one object that owns every resource smd holds. */
#ifndef SMD_SMD_H
#define SMD_SMD_H

#include <stdbool.h>
#include <time.h>

#include "db/store.h"
#include "mad/port.h"
#include "mad/txn.h"
#include "smd/config.h"
#include "util/log.h"
#include "sa/sa.h"
#include "smd/sm.h"
#include "topo/fabric.h"

struct route_result;
struct sweep_result;
struct light_result;
struct loop;
struct sweep;
struct light;
struct control;
struct mcast;
struct trap_table;
struct mkey;
struct part_conf;
struct cabling;
struct vlread;
struct perf;
struct health;

/* What smctl status and check-routes show (smd/control.c); the loop keeps it */
struct smd_stats {
	time_t started;			/* wall clock: when the daemon started */
	unsigned long rounds;		/* sweep timer runs as master: light and/or heavy */
	uint64_t smps_sent, smps_timed_out, smps_lost;	/* over all heavy sweeps */
	uint64_t traps;			/* traps received since start, whatever they said */
	time_t last_end;		/* wall clock: when the last heavy sweep ended; 0: none */
	int last_err;			/* the last heavy sweep's -errno; 0: it completed */
	struct sweep_result *last;	/* the last heavy sweep (NULL before the first) */
	struct sweep_result *model;	/* the last completed one: what fabric holds */
	uint64_t model_sweep;		/* its number (heavy_sweeps then) */
	time_t model_end;
	struct light_result *light;	/* the last light sweep (NULL: none yet) */
	time_t light_end;
	bool light_only;		/* the last round was a light sweep that found no change */
	struct log_record problems;	/* warnings and errors of the last heavy sweep */
	/* The event loop: its longest handler (and which), handlers over 100 ms */
	uint64_t loop_max_us;
	const char *loop_max_what;
	uint64_t loop_slow;
};

/* Another SM found on the subnet, as its SMInfo last said */
struct sm_peer {
	uint64_t guid;
	uint64_t node_guid;		/* where discovery found it: node, port */
	uint8_t port_num;
	struct dr_path path;		/* how to reach it by directed route */
	uint32_t act_count;
	uint8_t priority;
	uint8_t state;			/* enum sm_state */
	bool foreign;			/* did not show the SM_Key: not a peer (sm_auth) */
};

#define SM_PEERS_MAX	32

/* Exit statuses beyond 0, 1 and 2 (smd(8), EXIT STATUS) */
#define SMD_EXIT_TRANSPORT	3	/* the port went away: systemd restarts smd */
#define SMD_EXIT_SM_BUSY	4	/* another SM holds the port's issm */
#define SMD_EXIT_NOT_SM_PORT	5	/* the port cannot be an SM's (IsSMDisabled, ...) */

struct smd {
	struct smd_config cfg;
	const char *config_path;	/* to read again on SIGHUP; NULL: none */
	bool once;			/* smd --once: one sweep, no daemon */
	struct loop *loop;		/* the event loop (smd/loop.c) */
	struct sweep *sweep;		/* the heavy sweep running, NULL: none */
	struct light *light;		/* the light sweep running, NULL: none */
	bool abandoned;			/* shutdown left the worker computing: free nothing it reads */
	/* Keys the command line set (-d, -p, -C): they win over the file's */
	const char *arg_db, *arg_port, *arg_capture;
	struct mad_port *port;
	int transport_err;		/* a send said the device is gone: the loop ends smd */
	int exit_status;		/* the loop decided how smd exits (0: as usual) */
	struct txn *txn;
	struct store *store;		/* NULL: running without persistence */
	struct fabric *fabric;		/* the model of the last sweep */
	struct route_result *routes;	/* its routes' SLs and SL-to-VL tables */
	bool routes_repairable;		/* they are deadlock-free: route_repair may start from them */
	char routes_engine[32];		/* the engine they come from */
	uint32_t routes_base_max;	/* busiest link of the routes last computed afresh (0: none) */
	bool route_full;		/* this sweep computes routes afresh (asked for) */
	struct sa *sa;			/* answers from fabric once the subnet is up */
	struct sa_env sa_env;
	bool sa_serving;
	uint16_t sm_lid;
	uint32_t act_count;		/* SMInfo.ActCount: bumped every sweep */
	unsigned int traps;		/* traps asking for a heavy sweep since the last one */
	bool resweep;			/* something changed: sweep again soon */
	bool resweep_heavy;		/* the next sweep rediscovers (SIGHUP, smctl) */
	bool last_sweep_down;		/* the last heavy sweep left the subnet not up */
	uint64_t light_sweeps, heavy_sweeps;	/* since start */
	uint64_t smps_base;		/* SMPs sent before the transaction counters last restarted */
	struct control *control;	/* smctl's socket; NULL: none */
	struct trap_table *trapt;	/* traps: sources, hold-offs, floods (smd/trap.h) */
	struct mkey *mkey;		/* M_Keys: which port holds which (smd/mkey.h) */
	struct vlread *vlread;		/* reading the tables ports hold (smd/vlread.h) */
	struct smd_stats stats;
	/* SM election (smd/sm.c); --once does not take part */
	bool elect;
	enum sm_state sm_state;
	const struct sm_actions *sm_actions;	/* entry actions of the states (loop.c) */
	struct sm_peer peers[SM_PEERS_MAX];	/* the other SMs the last election saw */
	size_t npeers;
	struct sm_peer master;		/* standby: the master it polls */
	unsigned int poll_misses;	/* polls in a row the master left unanswered */
	bool poll_busy;			/* a poll of the master is in flight */
	struct sa_sm sa_sms[SM_PEERS_MAX];	/* the peers as the SA reports them */
	struct mcast *mcast;		/* multicast groups and trees (smd/mcast.c) */
	struct part_conf *parts;	/* the partitions in force (smd/partitions.c) */
	struct cabling *cabling;	/* the cabling plan and the last report (smd/cabling.c) */
	struct perf *perf;		/* the performance manager (smd/perf.c) */
	struct health *health;		/* the health rules' verdicts and actions (smd/health.c) */
	bool health_resweep;		/* links to isolate or put back: a heavy sweep soon */
	bool rereg_done;		/* ClientReregister sent since this SM became master */
	/* SMInfo Sets not obeyed (wrong SM_Key, or not allowed): counted, logged sparingly */
	uint64_t sminfo_refused;
	uint64_t sminfo_refused_logged;	/* the count at the last log line */
	uint64_t sminfo_refused_when;	/* monotonic us of that line */
};

/*
 * Send on smd's port (mad_port_send_to); an error that says the device
 * has gone away is kept in transport_err, which ends the daemon
 */
static inline int smd_send(struct smd *smd, enum mad_agent agent, const uint8_t mad[MAD_SIZE],
			   size_t len, const struct mad_addr *to, int timeout_ms)
{
	int r = mad_port_send_to(smd->port, agent, mad, len, to, timeout_ms);

	if (r < 0 && mad_port_fatal(r) && !smd->transport_err)
		smd->transport_err = r;
	return r;
}

#endif
