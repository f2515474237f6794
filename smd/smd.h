/* SPDX-License-Identifier: MIT */
/* The daemon's context: one object that owns every resource smd holds. */
#ifndef SMD_SMD_H
#define SMD_SMD_H

#include <stdbool.h>

#include "db/store.h"
#include "mad/port.h"
#include "mad/txn.h"
#include "smd/config.h"
#include "smd/sa.h"
#include "topo/fabric.h"

struct route_result;

struct smd {
	struct smd_config cfg;
	const char *config_path;	/* to read again on SIGHUP; NULL: none */
	struct mad_port *port;
	struct txn *txn;
	struct store *store;		/* NULL: running without persistence */
	struct fabric *fabric;		/* the model of the last sweep */
	struct route_result *routes;	/* its routes' SLs and SL-to-VL tables */
	/* The VL arbitration tables it programmed: low, high */
	struct vl_arb_entry vlarb[2][2 * VL_ARB_BLOCK_SIZE];
	struct sa *sa;			/* answers from fabric once the subnet is up */
	struct sa_env sa_env;
	bool sa_serving;
	uint16_t sm_lid;
	uint32_t act_count;		/* SMInfo.ActCount: bumped every sweep */
	unsigned int traps;		/* traps received since the last sweep */
	bool resweep;			/* something changed: sweep again soon */
};

#endif
