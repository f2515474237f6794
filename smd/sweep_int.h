/* SPDX-License-Identifier: MIT */
/*
 * A heavy sweep's insides, shared by the driver (sweep.c: sweep_phases[],
 * the one table to read to follow a sweep) and the files of its phases.
 * Every part of a phase is sweep_<phase>_<part>: enter, work (on the
 * worker thread), step, done (sweep.c says what each may do). Not an API.
 */
#ifndef SMD_SWEEP_INT_H
#define SMD_SWEEP_INT_H

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/log.h"
#include "smd/cabling.h"
#include "smd/health.h"
#include "smd/loop.h"
#include "smd/mcast.h"
#include "smd/mkey.h"
#include "smd/sweep.h"
#include "smd/vlread.h"
#include "topo/discover.h"
#include "topo/health.h"
#include "topo/lid.h"
#include "topo/mc.h"
#include "topo/part.h"
#include "topo/plan.h"
#include "topo/route.h"

struct sweep;

struct sweep_phase {
	const char *name;
	int (*enter)(struct sweep *sw);
	int (*work)(struct sweep *sw);		/* its return: sw->work_r */
	int (*step)(struct sweep *sw);
	int (*done)(struct sweep *sw);
	unsigned int flags;
};

/* sweep_phase.flags */
#define ALWAYS	1u	/* runs after an error or a stop too */
#define ELECT	2u	/* only when this SM takes part in elections */
#define MCAST	4u	/* only with multicast */
#define CABLE	8u	/* only with a cabling plan in force */
/*
 * Runs while the phase before it computes on the worker (that phase has no
 * step part; its done part runs once the work ended, between this phase's
 * parts, and returns 0 or -errno). Such a phase has no work part, and
 * neither reads nor writes what that work does.
 */
#define BESIDE	16u

/* What a step or a done part returns besides 0 (done) and -errno */
#define PHASE_WAIT	1	/* call again after the next answers */
#define PHASE_MORE	2	/* call again soon (time slice used), or: wait for more answers */
#define PHASE_STOP	3	/* done: the sweep ends here, successfully (standby) */

/* Where the driver is within a phase */
enum sweep_stage { ST_ENTER, ST_WORK, ST_STEP, ST_IDLE, ST_FINISH };

struct sweep {
	struct smd *smd;
	struct fabric *f;
	struct disc *disc;
	struct sweep_result *res;
	/* The driver */
	unsigned int phase;		/* index in sweep_phases[] */
	enum sweep_stage stage;
	size_t it;			/* a step's place (node index), 0 at each phase */
	int r;				/* the sweep's outcome so far: 0 or -errno */
	bool stop;			/* a phase ended the sweep early (standby) */
	bool abandoned;			/* sweep_abandon(): sweep_submit nothing more */
	atomic_bool cancel;		/* ... read by the worker: compute nothing more */
	bool computing;			/* a work part runs on the worker thread */
	bool ended;			/* sweep_end() ran: swapped in, or dropped */
	int work_r;			/* ... and what it returned */
	int (*job)(struct sweep *sw);	/* the work part on the worker (its phase may be past) */
	int job_r;			/* ... its return, written on the worker */
	unsigned int bg;		/* 1 + the phase whose work runs beside BESIDE phases, 0: none
					 * (its work's return stays in job_r until bg_finish) */
	uint64_t bg_t0;			/* ... when that phase started */
	uint64_t t0;			/* monotonic us: the sweep's start */
	uint64_t phase_t0;		/* ... the phase's */
	uint64_t step_t0;		/* ... this step call's (sweep_yield) */
	double phase_s[SWEEP_PHASES_MAX];	/* seconds each phase took; <0: skipped */
	time_t started;
	struct log_record problems;	/* warnings and errors of this sweep */
	/* What the phases hand on */
	struct fab_port *own;		/* the SM's own port in f */
	struct sm_election *elect;
	const struct plan *cab_plan;	/* the cabling plan compared with (smd/cabling.c) */
	bool enforce;			/* ... and enforced */
	struct plan_report *cabling;	/* what the comparison found, for sweep_end */
	int cabling_r;
	/* The health phase: links seen down since the last model, links to isolate */
	struct health_isolation *iso;
	size_t niso;
	uint64_t *down_guid;
	uint8_t *down_port;
	size_t ndown, down_cap;
	int health_r;
	struct lid_stats ls;
	bool resv_failed;		/* the database could not say which LIDs are reserved */
	struct route_stats rs;
	struct sweep_route {		/* the routing phase, on the worker */
		struct route_opts opts;
		char list[sizeof(((struct smd_config *)0)->routing_engine)];
		bool try_repair;
		int repair_r;		/* route_repair's return; 1: not tried */
		int verify_r;		/* the verifier on repaired routes */
		const char *why;
		struct route_repair_info info;
		struct route_attempt att[8];
		unsigned int tried;
		int used;
		struct route_check chk;
		double t_compute, t_verify, seconds;
		uint32_t base_max;	/* busiest link of the routes last computed afresh */
		bool compared;		/* repaired routes were unbalanced: computed afresh too */
		bool afresh_better;	/* ... and those are used */
		uint32_t repaired_max, afresh_max;	/* the busiest links compared */
	} route;
	struct route_result *routes;	/* SLs and SL-to-VL tables of this sweep's routes */
	char engine[32];		/* the engine the routes come from (repaired or not) */
	bool repairable;		/* deadlock-free: the next sweep may repair them */
	uint32_t base_max;		/* the next sweep's route.base_max */
	unsigned int vls;		/* data VLs the routes use */
	struct vl_plan {
		bool sl2vl;		/* program SL-to-VL tables */
		bool vlarb;		/* program VL arbitration tables */
		bool qos;		/* sl2vl comes from the configuration, not the routes */
		uint8_t map[16];	/* ... that table, on every port pair */
	} plan;
	struct vl_arb_entry vlarb[2][2 * VL_ARB_BLOCK_SIZE];	/* low, high: every port */
	struct mc_forest *forest;	/* multicast trees over this sweep's model */
	bool mc_acyclic;		/* the trees' verdict (mcast-check) */
	bool rereg;			/* set ClientReregister on the CA ports */
	uint64_t t_program;		/* monotonic us: programming started */
	struct store_sweep ss;		/* the record the save phase writes */
	struct store_partition *ss_parts;	/* ... its partitions */
	int save_r;
	bool saved;			/* the save committed (even if abandoned after) */
	struct part_index *pk_ix;	/* the partitions, during the pkeys phase */
	struct lft_ctx *lft;		/* [nswitches] the lfts phase's callbacks' argument */
	struct sa_index *sa_index;	/* the SA's index of the new model, built on the worker */
	int sa_index_r;
	int err;		/* a fatal error inside a callback (ENOMEM) */
};

/* One per switch: what an LFT block's callback needs besides the block (attr_mod) */
struct lft_ctx {
	struct sweep *sw;
	struct fab_node *node;
	bool skip;		/* no SwitchInfo, or too small a table: counted once */
};

struct probe_ctx {
	struct sweep *sw;
	struct disc_probe p;
};

struct set_ctx {
	struct sweep *sw;
	struct fab_port *port;	/* PortInfo */
	struct fab_node *node;	/* LFT, SwitchInfo */
	uint32_t block;
	uint8_t want_state;
};

/*
 * SMPs a phase may have waiting to be sent: it submits node by node and
 * lets the window work the queue down past this. Without a bound, the k=32
 * fat-tree queued 1.35 million SL-to-VL Sets at once (850 MB).
 */
#define SWEEP_QUEUE_MAX		4096
/* How long one step may compute before it lets the event loop run */
#define SWEEP_SLICE_US		10000

/*
 * Whether a step must stop here: PHASE_WAIT when the queue is full (the
 * answers bring the driver back), PHASE_MORE when its time slice is used,
 * an error a callback left, 0 to go on.
 */
int sweep_yield(struct sweep *sw);
double sweep_now_s(void);
const char *sweep_node_name(const struct fab_node *n);
/* "NAME port N (GUID 0x...)" in buf */
const char *sweep_port_label(const struct fab_port *p, char *buf, size_t len);
/* Queue an SMP for this sweep; arg is freed when it cannot be (or the sweep is abandoned) */
int sweep_submit(struct sweep *sw, const struct smp *req, txn_cb cb, void *arg);
/* ... arg is the caller's, never freed here (it outlives the sweep's SMPs) */
int sweep_submit_kept(struct sweep *sw, const struct smp *req, txn_cb cb, void *arg);

/* sweep_discover.c: discovery, the election, the cabling plan, LIDs */
int sweep_discover_enter(struct sweep *sw);
int sweep_discover_done(struct sweep *sw);
int sweep_elect_enter(struct sweep *sw);
int sweep_elect_done(struct sweep *sw);
int sweep_cabling_enter(struct sweep *sw);
int sweep_cabling_work(struct sweep *sw);
int sweep_cabling_done(struct sweep *sw);
int sweep_lids_work(struct sweep *sw);
int sweep_lids_done(struct sweep *sw);

/* sweep_health.c: links seen down, links the health rules take out of service */
int sweep_health_enter(struct sweep *sw);
int sweep_health_work(struct sweep *sw);
int sweep_health_done(struct sweep *sw);
/* After routing: the links isolated carry routes again; true when there were any */
bool sweep_health_undo(struct sweep *sw);

/* sweep_ports.c: M_Keys, P_Key tables, PortInfo, activation */
/* The port whose keys a port's table holds: itself, or for a switch port its CA peer */
const struct fab_port *sweep_pk_owner(const struct fab_port *p);
int sweep_mkey_enter(struct sweep *sw);
int sweep_pkeys_enter(struct sweep *sw);
int sweep_pkeys_step(struct sweep *sw);
int sweep_pkeys_done(struct sweep *sw);
int sweep_ports_step(struct sweep *sw);
int sweep_activate_step(struct sweep *sw);

/* sweep_vl.c: SL-to-VL and VL arbitration tables, FDR10 */
int sweep_vl_enter(struct sweep *sw);
int sweep_vl_step(struct sweep *sw);
int sweep_fdr10_step(struct sweep *sw);

/* sweep_route.c: routes, LFTs, SwitchInfo, multicast, verification */
int sweep_route_enter(struct sweep *sw);
int sweep_route_work(struct sweep *sw);
int sweep_route_done(struct sweep *sw);
int sweep_lfts_step(struct sweep *sw);
int sweep_switch_info_step(struct sweep *sw);
int sweep_mcast_enter(struct sweep *sw);
int sweep_mcast_work(struct sweep *sw);
int sweep_mcast_step(struct sweep *sw);
int sweep_mcast_check_work(struct sweep *sw);
int sweep_mcast_check_done(struct sweep *sw);
int sweep_verify_done(struct sweep *sw);

/* sweep_save.c: the sweep's record, the SA's index of the new model */
int sweep_save_enter(struct sweep *sw);
int sweep_save_work(struct sweep *sw);
int sweep_save_done(struct sweep *sw);
int sweep_sa_index_work(struct sweep *sw);

#endif
