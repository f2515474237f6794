// SPDX-License-Identifier: MIT
/*
 * smctl: the operator's view of smd. For now it reads the database smd
 * keeps (last sweep, LIDs); later it talks to the daemon's control socket.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "autoconfig.h"
#include "db/store.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: smctl [--db FILE] COMMAND\n"
		"Commands:\n"
		"  status   the last sweep: when, how long, what was found, whether the subnet is up\n"
		"  lids     every port GUID smd has given a LID, with the LID\n");
}

static int print_lid(void *ctx, const struct store_lid *l)
{
	printf("%-6u 0x%016" PRIx64 " 0x%016" PRIx64 " %u \"%s\"\n", l->lid, l->guid,
	       l->node_guid, l->lmc, l->desc);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	const char *db = "/var/lib/smd/smd.db", *cmd;
	struct store *s = NULL;
	int c, r, rc = 1;

	while ((c = getopt_long(argc, argv, "d:hV", opts, NULL)) != -1) {
		switch (c) {
		case 'd': db = optarg; break;
		case 'h': usage(stdout); return 0;
		case 'V': printf("smctl %s\n", PACKAGE_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		usage(stderr);
		return 2;
	}
	cmd = argv[optind];
	if (strcmp(cmd, "status") && strcmp(cmd, "lids")) {
		fprintf(stderr, "smctl: unknown command '%s'\n", cmd);
		usage(stderr);
		return 2;
	}
	r = store_open(db, 1, &s);
	if (r < 0) {
		fprintf(stderr, "smctl: %s: %s\n", db, store_errmsg(s));
		goto out;
	}
	if (!strcmp(cmd, "status")) {
		struct store_sweep sw;
		char when[64];
		struct tm tm;
		time_t t;

		r = store_last_sweep(s, &sw);
		if (r < 0) {
			fprintf(stderr, "smctl: %s\n", r == -ENOENT ? "no sweep recorded yet" :
				store_errmsg(s));
			goto out;
		}
		t = (time_t)sw.started;
		localtime_r(&t, &tm);
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
		printf("last sweep:  %s, %.2f s\n", when, sw.seconds);
		printf("subnet:      %s\n", sw.up ? "up" : "NOT up");
		printf("nodes:       %u (%u switches, %u CAs)\n", sw.nodes, sw.switches, sw.cas);
		printf("ports:       %u\n", sw.ports);
		printf("LIDs:        %u\n", sw.lids);
		printf("SMPs:        %" PRIu64 " sent, %" PRIu64 " timed out, %" PRIu64 " retried\n",
		       sw.smps_sent, sw.smps_timed_out, sw.smps_retried);
		rc = sw.up ? 0 : 1;
	} else {
		printf("%-6s %-18s %-18s %s %s\n", "LID", "PortGUID", "NodeGUID", "LMC", "NodeDesc");
		r = store_foreach_lid(s, print_lid, NULL);
		if (r < 0) {
			fprintf(stderr, "smctl: %s\n", store_errmsg(s));
			goto out;
		}
		rc = 0;
	}
out:
	store_close(s);
	return rc;
}
