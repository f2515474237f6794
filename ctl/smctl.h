/* SPDX-License-Identifier: MIT */
/*
 * smctl: one binary, one file per group of commands (smctl_db.c reads the
 * database, smctl_sa.c queries the SA, ...). Each command parses its own
 * options from argv[0] = the command name; it returns the exit status.
 */
#ifndef SMD_CTL_SMCTL_H
#define SMD_CTL_SMCTL_H

#include <stdbool.h>
#include <stdio.h>

struct smctl_ctx {
	const char *db;		/* --db, or the default database */
	bool db_given;		/* --db before the command */
	const char *socket;	/* --socket, or smd's default control socket */
	bool json;		/* -j/--json: one JSON object on stdout, "status" first */
};

struct smctl_cmd {
	const char *name;
	const char *synopsis;
	int (*run)(struct smctl_ctx *ctx, int argc, char **argv);
};

/* smctl_db.c */
int smctl_status_db(struct smctl_ctx *ctx, int argc, char **argv);
int smctl_lids(struct smctl_ctx *ctx, int argc, char **argv);
int smctl_dump(struct smctl_ctx *ctx, int argc, char **argv);
int smctl_history(struct smctl_ctx *ctx, int argc, char **argv);
int smctl_import_guid2lid(struct smctl_ctx *ctx, int argc, char **argv);

/* smctl_capture.c */
int smctl_capture_stats(struct smctl_ctx *ctx, int argc, char **argv);

/* smctl_ctl.c: commands answered by the running daemon over its control socket */
int smctl_status(struct smctl_ctx *ctx, int argc, char **argv);
int smctl_resweep(struct smctl_ctx *ctx, int argc, char **argv);
int smctl_check_routes(struct smctl_ctx *ctx, int argc, char **argv);
int smctl_sm_enable(struct smctl_ctx *ctx, int argc, char **argv);
int smctl_partitions(struct smctl_ctx *ctx, int argc, char **argv);
int smctl_cabling(struct smctl_ctx *ctx, int argc, char **argv);
int smctl_health(struct smctl_ctx *ctx, int argc, char **argv);
int smctl_port(struct smctl_ctx *ctx, int argc, char **argv);

/* smctl_cabling.c: a cabling plan checked, the fabric as Slurm's topology.conf */
int smctl_plan(struct smctl_ctx *ctx, int argc, char **argv);
int smctl_topology(struct smctl_ctx *ctx, int argc, char **argv);

/* smctl_sa.c */
int smctl_sa(struct smctl_ctx *ctx, int argc, char **argv);

/* Option parsing shared by commands: --db FILE anywhere after the command */
int smctl_parse_db_opt(struct smctl_ctx *ctx, int argc, char **argv, const char *usage);

#endif
