// SPDX-License-Identifier: MIT
/*
 * smctl: the operator's tool for smd. Reads smd's database, queries the
 * subnet administrator, and talks to the daemon.
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "autoconfig.h"
#include "util/ctl_proto.h"
#include "ctl/smctl.h"

static const struct smctl_cmd commands[] = {
	{ "status", "[--socket PATH]: the running smd: SM state, subnet, last sweep, problems; "
	  "with --db FILE: the last sweep the database holds", smctl_status },
	{ "resweep", "[--heavy] [--socket PATH]: make smd sweep now and wait for the result",
	  smctl_resweep },
	{ "check-routes", "[--socket PATH]: the route verifier's verdict on smd's routes",
	  smctl_check_routes },
	{ "sm-enable", "[--socket PATH]: a NOT-ACTIVE smd (disabled by another SM) takes part "
	  "again", smctl_sm_enable },
	{ "partitions", "[--socket PATH] [P_KEY|NAME]: ports per partition, or one's members",
	  smctl_partitions },
	{ "cabling", "[--socket PATH]: the fabric against its cabling plan: every mismatch",
	  smctl_cabling },
	{ "health", "[--socket PATH]: the health rules, the counters, unhealthy and isolated "
	  "ports", smctl_health },
	{ "port", "enable GUID PORT [--socket PATH]: a link the health rules took out of "
	  "service back in; answers when it is routed again", smctl_port },
	{ "plan", "check FILE: a cabling plan as smd would read it, errors with line numbers",
	  smctl_plan },
	{ "topology", "--slurm|--json [--db FILE]: the last sweep's fabric as Slurm's "
	  "topology.conf", smctl_topology },
	{ "lids", "[--db FILE] [--forget GUID]: every port GUID with the LID smd gave it",
	  smctl_lids },
	{ "dump", "[--db FILE] [--format ibnetdiscover|json|dot]: the fabric of the last sweep",
	  smctl_dump },
	{ "history", "[--db FILE] [--sweeps N] [--events N]: recent sweeps and what changed",
	  smctl_history },
	{ "import-guid2lid", "[--db FILE] GUID2LID: OpenSM's LID cache becomes the LIDs smd "
	  "remembers (migration)", smctl_import_guid2lid },
	{ "sa", "KIND [...]: query the SA; smctl sa --help", smctl_sa },
	{ "capture-stats", "FILE...: MADs in a capture by class, method, attribute, status",
	  smctl_capture_stats },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out, "Usage: smctl [--json] [--db FILE] [--socket PATH] COMMAND [ARGS]\n"
		"  --json: status, resweep, check-routes, sm-enable, cabling, health, port, plan,\n"
		"          topology, lids, history and sa answer\n"
		"          with one JSON object whose first member is \"status\"\nCommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-13s %s\n", commands[i].name, commands[i].synopsis);
}

int smctl_parse_db_opt(struct smctl_ctx *ctx, int argc, char **argv, const char *use)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': ctx->db = optarg; break;
		case 'j': ctx->json = true; break;
		case 'h': printf("Usage: smctl %s %s\n", argv[0], use); return 1;
		default: fprintf(stderr, "Usage: smctl %s %s\n", argv[0], use); return -1;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "smctl %s: unexpected argument '%s'\n", argv[0], argv[optind]);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct smctl_ctx ctx = { .db = "/var/lib/smd/smd.db", .socket = CONTROL_DEFAULT_PATH };
	int i = 1;

	/* Global options before the command */
	while (i < argc && argv[i][0] == '-') {
		if ((!strcmp(argv[i], "--db") || !strcmp(argv[i], "-d")) && i + 1 < argc) {
			ctx.db = argv[i + 1];
			ctx.db_given = true;
			i += 2;
		} else if (!strncmp(argv[i], "--db=", 5)) {
			ctx.db = argv[i] + 5;
			ctx.db_given = true;
			i++;
		} else if ((!strcmp(argv[i], "--socket") || !strcmp(argv[i], "-s")) &&
			   i + 1 < argc) {
			ctx.socket = argv[i + 1];
			i += 2;
		} else if (!strncmp(argv[i], "--socket=", 9)) {
			ctx.socket = argv[i] + 9;
			i++;
		} else if (!strcmp(argv[i], "-j") || !strcmp(argv[i], "--json")) {
			ctx.json = true;
			i++;
		} else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			usage(stdout);
			return 0;
		} else if (!strcmp(argv[i], "-V") || !strcmp(argv[i], "--version")) {
			printf("smctl %s\n", PACKAGE_VERSION);
			return 0;
		} else {
			fprintf(stderr, "smctl: unknown option '%s'\n", argv[i]);
			usage(stderr);
			return 2;
		}
	}
	if (i >= argc) {
		usage(stderr);
		return 2;
	}
	for (size_t k = 0; k < NCOMMANDS; k++)
		if (!strcmp(argv[i], commands[k].name))
			return commands[k].run(&ctx, argc - i, argv + i);
	fprintf(stderr, "smctl: unknown command '%s'\n", argv[i]);
	usage(stderr);
	return 2;
}
