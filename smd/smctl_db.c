// SPDX-License-Identifier: MIT
/* smctl commands that read smd's database: no daemon needed. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "db/store.h"
#include "smd/smctl.h"

static int open_db(struct smctl_ctx *ctx, struct store **s)
{
	int r = store_open(ctx->db, 1, s);

	if (r < 0) {
		fprintf(stderr, "smctl: %s: %s\n", ctx->db, store_errmsg(*s));
		*s = store_close(*s);
	}
	return r;
}

int smctl_status(struct smctl_ctx *ctx, int argc, char **argv)
{
	struct store *s = NULL;
	struct store_sweep sw;
	char when[64];
	struct tm tm;
	time_t t;
	int r;

	r = smctl_parse_db_opt(ctx, argc, argv, "[--db FILE]");
	if (r)
		return r < 0 ? 2 : 0;
	if (open_db(ctx, &s) < 0)
		return 1;
	r = store_last_sweep(s, &sw);
	if (r < 0) {
		fprintf(stderr, "smctl: %s\n", r == -ENOENT ? "no sweep recorded yet" :
			store_errmsg(s));
		store_close(s);
		return 1;
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
	store_close(s);
	return sw.up ? 0 : 1;
}

static int print_lid(void *ctx, const struct store_lid *l)
{
	printf("%-6u 0x%016" PRIx64 " 0x%016" PRIx64 " %u \"%s\"\n", l->lid, l->guid,
	       l->node_guid, l->lmc, l->desc);
	return 0;
}

int smctl_lids(struct smctl_ctx *ctx, int argc, char **argv)
{
	struct store *s = NULL;
	int r;

	r = smctl_parse_db_opt(ctx, argc, argv, "[--db FILE]");
	if (r)
		return r < 0 ? 2 : 0;
	if (open_db(ctx, &s) < 0)
		return 1;
	printf("%-6s %-18s %-18s %s %s\n", "LID", "PortGUID", "NodeGUID", "LMC", "NodeDesc");
	r = store_foreach_lid(s, print_lid, NULL);
	if (r < 0)
		fprintf(stderr, "smctl: %s\n", store_errmsg(s));
	store_close(s);
	return r < 0 ? 1 : 0;
}
