// SPDX-License-Identifier: MIT
/* smctl commands that read smd's database: no daemon needed. */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "db/dump.h"
#include "db/guid2lid.h"
#include "db/store.h"
#include "util/json.h"
#include "ctl/smctl.h"

static int open_db(struct smctl_ctx *ctx, int readonly, struct store **s)
{
	int r;

	/* Read-write opens create a missing file: nothing to change in one */
	if (!readonly && access(ctx->db, F_OK) < 0) {
		fprintf(stderr, "smctl: %s: %s\n", ctx->db, strerror(errno));
		*s = NULL;
		return -errno;
	}
	r = store_open(ctx->db, readonly, s);
	if (r < 0) {
		fprintf(stderr, "smctl: %s: %s\n", ctx->db, store_errmsg(*s));
		*s = store_close(*s);
	}
	return r;
}

static const char *fmt_time(int64_t when, char *buf, size_t len)
{
	time_t t = (time_t)when;
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "%" PRId64, when);
	return buf;
}

static const char *outcome(const struct store_sweep *sw)
{
	return sw->err ? "failed" : sw->up ? "up" : "NOT up";
}

/* Parse a count option: 0 and *out, or -1 with a message */
static int parse_count(const char *cmd, const char *v, unsigned int *out)
{
	char *end;
	unsigned long x;

	errno = 0;
	x = strtoul(v, &end, 10);
	if (errno || *end || end == v || x > 1000000) {
		fprintf(stderr, "smctl %s: bad count '%s'\n", cmd, v);
		return -1;
	}
	*out = (unsigned int)x;
	return 0;
}

/* Print the JSON answer (and free it); 0, or 1 when it could not be built */
static int json_print(struct json *j)
{
	const char *t = json_text(j);

	if (t)
		printf("%s\n", t);
	else
		fprintf(stderr, "smctl: out of memory\n");
	json_free(j);
	return t ? 0 : 1;
}

/* With --json, a failure is a JSON answer too (and a message on stderr) */
static void json_fail(const struct smctl_ctx *ctx, const char *why)
{
	struct json j;

	if (!ctx->json)
		return;
	json_init(&j);
	json_obj_begin(&j, NULL);
	json_str(&j, "status", "error");
	json_str(&j, "error", why);
	json_obj_end(&j);
	json_print(&j);
}

int smctl_status_db(struct smctl_ctx *ctx, int argc, char **argv)
{
	struct store *s = NULL;
	struct store_sweep sw;
	char when[64];
	int r;

	r = smctl_parse_db_opt(ctx, argc, argv, "[--db FILE]");
	if (r)
		return r < 0 ? 2 : 0;
	if (open_db(ctx, 1, &s) < 0)
		return 1;
	r = store_last_sweep(s, &sw);
	if (r < 0) {
		fprintf(stderr, "smctl: %s\n", r == -ENOENT ? "no sweep recorded yet" :
			store_errmsg(s));
		json_fail(ctx, r == -ENOENT ? "no sweep recorded yet" : store_errmsg(s));
		store_close(s);
		return 1;
	}
	if (ctx->json) {
		struct json j;

		json_init(&j);
		json_obj_begin(&j, NULL);
		json_str(&j, "status", sw.up && !sw.err ? "ok" : "down");
		json_i64(&j, "sweep", sw.id);
		json_i64(&j, "started", sw.started);
		json_double(&j, "seconds", sw.seconds);
		json_str(&j, "subnet", sw.err ? "sweep failed" : sw.up ? "up" : "not up");
		if (sw.err)
			json_str(&j, "error", sw.error);
		json_u64(&j, "nodes", sw.nodes);
		json_u64(&j, "switches", sw.switches);
		json_u64(&j, "cas", sw.cas);
		json_u64(&j, "ports", sw.ports);
		json_u64(&j, "links", sw.links);
		json_u64(&j, "lids", sw.lids);
		json_u64(&j, "events", sw.events);
		json_obj_begin(&j, "smps");
		json_u64(&j, "sent", sw.smps_sent);
		json_u64(&j, "timed_out", sw.smps_timed_out);
		json_u64(&j, "retried", sw.smps_retried);
		json_obj_end(&j);
		json_obj_end(&j);
		store_close(s);
		return json_print(&j) ? 1 : sw.up && !sw.err ? 0 : 1;
	}
	printf("last sweep:  %s, %.2f s\n", fmt_time(sw.started, when, sizeof(when)), sw.seconds);
	if (sw.err)
		printf("subnet:      sweep failed (%s)\n", sw.error);
	else
		printf("subnet:      %s\n", sw.up ? "up" : "NOT up");
	printf("nodes:       %u (%u switches, %u CAs)\n", sw.nodes, sw.switches, sw.cas);
	printf("ports:       %u\n", sw.ports);
	printf("links:       %u\n", sw.links);
	printf("LIDs:        %u\n", sw.lids);
	printf("events:      %u\n", sw.events);
	printf("SMPs:        %" PRIu64 " sent, %" PRIu64 " timed out, %" PRIu64 " retried\n",
	       sw.smps_sent, sw.smps_timed_out, sw.smps_retried);
	store_close(s);
	return sw.up && !sw.err ? 0 : 1;
}

static int json_lid(void *ctx, const struct store_lid *l)
{
	struct json *j = ctx;

	json_obj_begin(j, NULL);
	json_u64(j, "lid", l->lid);
	json_hex64(j, "port_guid", l->guid);
	json_hex64(j, "node_guid", l->node_guid);
	json_u64(j, "lmc", l->lmc);
	json_bool(j, "present", l->present);
	json_i64(j, "last_seen", (int64_t)l->last_seen);
	json_str(j, "node_description", l->desc);
	json_obj_end(j);
	return 0;
}

static int print_lid(void *ctx, const struct store_lid *l)
{
	time_t t = (time_t)l->last_seen;
	char when[64] = "?";
	struct tm tm;

	/* One word, for scripts: "2026-01-31T12:00:00" */
	if (!l->present && localtime_r(&t, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	printf("%-6u 0x%016" PRIx64 " 0x%016" PRIx64 " %-3u %-19s \"%s\"\n", l->lid, l->guid,
	       l->node_guid, l->lmc, l->present ? "present" : when, l->desc);
	return 0;
}

/* A GUID in hex, with or without 0x */
static int parse_guid(const char *v, uint64_t *out)
{
	const char *p = v;
	char *end;

	if (!strncmp(p, "0x", 2) || !strncmp(p, "0X", 2))
		p += 2;
	if (!*p || strlen(p) > 16 || p[strspn(p, "0123456789abcdefABCDEF")])
		return -1;
	errno = 0;
	*out = strtoull(p, &end, 16);
	return errno || *end ? -1 : 0;
}

int smctl_lids(struct smctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "forget", required_argument, NULL, 'f' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char use[] = "[--db FILE] [--json] [--forget PORT_GUID]";
	const char *forget = NULL;
	struct store *s = NULL;
	uint64_t guid = 0;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:f:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': ctx->db = optarg; break;
		case 'f': forget = optarg; break;
		case 'j': ctx->json = true; break;
		case 'h': printf("Usage: smctl lids %s\n", use); return 0;
		default: fprintf(stderr, "Usage: smctl lids %s\n", use); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "smctl lids: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (forget && parse_guid(forget, &guid) < 0) {
		fprintf(stderr, "smctl lids: bad port GUID '%s'\n", forget);
		return 2;
	}
	if (forget) {
		uint16_t lid = 0;

		if (open_db(ctx, 0, &s) < 0)
			return 1;
		r = store_lid_forget(s, guid, (int64_t)time(NULL), &lid);
		if (r < 0)
			fprintf(stderr, "smctl: %s\n", store_errmsg(s));
		else
			printf("forgot LID %u of port GUID 0x%016" PRIx64 "\n", lid, guid);
		store_close(s);
		return r < 0 ? 1 : 0;
	}
	if (open_db(ctx, 1, &s) < 0) {
		json_fail(ctx, "cannot open the database");
		return 1;
	}
	if (ctx->json) {
		struct json j;

		json_init(&j);
		json_obj_begin(&j, NULL);
		json_str(&j, "status", "ok");
		json_arr_begin(&j, "lids");
		r = store_foreach_lid(s, json_lid, &j);
		json_arr_end(&j);
		json_obj_end(&j);
		if (r < 0) {
			fprintf(stderr, "smctl: %s\n", store_errmsg(s));
			json_fail(ctx, store_errmsg(s));
			json_free(&j);
		}
		store_close(s);
		return r < 0 ? 1 : json_print(&j);
	}
	printf("%-6s %-18s %-18s %s %-19s %s\n", "LID", "PortGUID", "NodeGUID", "LMC", "LastSeen",
	       "NodeDesc");
	r = store_foreach_lid(s, print_lid, NULL);
	if (r < 0)
		fprintf(stderr, "smctl: %s\n", store_errmsg(s));
	store_close(s);
	return r < 0 ? 1 : 0;
}

struct mcast_list {
	struct store_mcast *g;
	size_t n, cap;
};

static int mcast_add(void *ctx, const struct store_mcast *g);

struct part_list {
	struct store_partition *p;
	size_t n, cap;
	struct store_port_pkey *k;
	size_t nk, kcap;
};

/* Append item (size bytes) to the array *v of *n, growing it by doubling */
static int push(void **v, size_t *n, size_t *cap, const void *item, size_t size)
{
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 64;
		void *nv = realloc(*v, ncap * size);

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	memcpy((char *)*v + (*n)++ * size, item, size);
	return 0;
}

static int part_add(void *ctx, const struct store_partition *p)
{
	struct part_list *l = ctx;

	return push((void **)&l->p, &l->n, &l->cap, p, sizeof(*p));
}

static int pkey_add(void *ctx, const struct store_port_pkey *k)
{
	struct part_list *l = ctx;

	return push((void **)&l->k, &l->nk, &l->kcap, k, sizeof(*k));
}

int smctl_dump(struct smctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "format", required_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char use[] = "[--db FILE] [--format ibnetdiscover|json|dot]";
	enum dump_format fmt = DUMP_IBNETDISCOVER;
	struct store *s = NULL;
	struct store_sweep sw;
	struct dump_meta m;
	struct mcast_list groups = { 0 };
	struct part_list parts = { 0 };
	struct fabric *f;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:f:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			ctx->db = optarg;
			break;
		case 'f':
			if (dump_format_parse(optarg, &fmt) < 0) {
				fprintf(stderr, "smctl dump: unknown format '%s' (ibnetdiscover, "
					"json, dot)\n", optarg);
				return 2;
			}
			break;
		case 'h':
			printf("Usage: smctl dump %s\n", use);
			return 0;
		default:
			fprintf(stderr, "Usage: smctl dump %s\n", use);
			return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "smctl dump: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (open_db(ctx, 1, &s) < 0)
		return 1;
	r = store_load_fabric(s, &f, &sw);
	if (!r)
		r = store_foreach_mcast(s, mcast_add, &groups);
	if (!r)
		r = store_foreach_partition(s, part_add, &parts);
	if (!r)
		r = store_foreach_port_pkey(s, pkey_add, &parts);
	if (r < 0) {
		fprintf(stderr, "smctl: %s: %s\n", ctx->db, r == -ENOMEM ? "out of memory" :
			store_errmsg(s));
		store_close(s);
		fabric_free(f);
		free(groups.g);
		free(parts.p);
		free(parts.k);
		return 1;
	}
	store_close(s);
	m = (struct dump_meta){
		.time = sw.started, .sweep_id = sw.id, .sm_node_guid = sw.sm_node_guid,
		.sm_port_guid = sw.sm_port_guid, .mcast = groups.g, .nmcast = groups.n,
		.parts = parts.p, .nparts = parts.n, .pkeys = parts.k, .npkeys = parts.nk,
	};
	r = dump_write(stdout, f, &m, fmt);
	fabric_free(f);
	free(groups.g);
	free(parts.p);
	free(parts.k);
	if (r < 0) {
		fprintf(stderr, "smctl dump: writing: %s\n", strerror(-r));
		return 1;
	}
	return 0;
}

static int mcast_add(void *ctx, const struct store_mcast *g)
{
	struct mcast_list *l = ctx;

	return push((void **)&l->g, &l->n, &l->cap, g, sizeof(*g));
}

static int json_sweep(void *ctx, const struct store_sweep *sw)
{
	struct json *j = ctx;

	json_obj_begin(j, NULL);
	json_i64(j, "sweep", sw->id);
	json_i64(j, "started", sw->started);
	json_double(j, "seconds", sw->seconds);
	json_str(j, "outcome", outcome(sw));
	if (sw->err)
		json_str(j, "error", sw->error);
	json_u64(j, "nodes", sw->nodes);
	json_u64(j, "switches", sw->switches);
	json_u64(j, "lids", sw->lids);
	json_u64(j, "links", sw->links);
	json_u64(j, "events", sw->events);
	json_u64(j, "smps", sw->smps_sent);
	json_obj_end(j);
	return 0;
}

static int json_event(void *ctx, const struct store_event *e)
{
	struct json *j = ctx;

	json_obj_begin(j, NULL);
	json_i64(j, "time", e->time);
	if (e->sweep_id)
		json_i64(j, "sweep", e->sweep_id);
	else
		json_null(j, "sweep");
	json_str(j, "event", e->kind);
	json_hex64(j, "node_guid", e->node_guid);
	json_i64(j, "port", e->port_num);
	json_hex64(j, "port_guid", e->port_guid);
	json_hex64(j, "peer_guid", e->peer_guid);
	json_i64(j, "peer_port", e->peer_port);
	json_str(j, "old", e->old_value);
	json_str(j, "new", e->new_value);
	json_str(j, "detail", e->detail);
	json_obj_end(j);
	return 0;
}

static int print_sweep(void *ctx, const struct store_sweep *sw)
{
	char when[64];

	printf("%-7" PRId64 " %s %8.2f  %-7s %6u %6u %6u %6u %7u %10" PRIu64 "%s%s\n", sw->id,
	       fmt_time(sw->started, when, sizeof(when)), sw->seconds, outcome(sw), sw->nodes,
	       sw->switches, sw->lids, sw->links, sw->events, sw->smps_sent,
	       sw->err ? "  " : "", sw->err ? sw->error : "");
	return 0;
}

static const char *state_str(const char *v)
{
	static const char *const names[] = { "NOP", "DOWN", "INIT", "ARMED", "ACTIVE" };
	char *end;
	long x = strtol(v, &end, 10);

	if (!*v || *end || x < 0 || x > 4)
		return v;
	return names[x];
}

static const char *type_str(const char *v)
{
	if (!strcmp(v, "1"))
		return "CA";
	if (!strcmp(v, "2"))
		return "switch";
	if (!strcmp(v, "3"))
		return "router";
	return v;
}

static int print_event(void *ctx, const struct store_event *e)
{
	char when[64], what[512], sweep[24];
	const char *k = e->kind;

	if (!strcmp(k, "node_appeared"))
		snprintf(what, sizeof(what), "%s 0x%016" PRIx64 " \"%s\"", type_str(e->new_value),
			 e->node_guid, e->detail);
	else if (!strcmp(k, "node_vanished"))
		snprintf(what, sizeof(what), "node 0x%016" PRIx64 " \"%s\"", e->node_guid,
			 e->detail);
	else if (!strcmp(k, "node_renamed"))
		snprintf(what, sizeof(what), "node 0x%016" PRIx64 " \"%s\" -> \"%s\"",
			 e->node_guid, e->old_value, e->new_value);
	else if (!strcmp(k, "port_appeared") || !strcmp(k, "port_vanished"))
		snprintf(what, sizeof(what), "0x%016" PRIx64 "[%d] (port GUID 0x%016" PRIx64 ") %s",
			 e->node_guid, e->port_num, e->port_guid,
			 state_str(k[5] == 'a' ? e->new_value : e->old_value));
	else if (!strcmp(k, "port_state"))
		snprintf(what, sizeof(what), "0x%016" PRIx64 "[%d] %s -> %s", e->node_guid,
			 e->port_num, state_str(e->old_value), state_str(e->new_value));
	else if (!strcmp(k, "link_appeared") || !strcmp(k, "link_vanished"))
		snprintf(what, sizeof(what), "0x%016" PRIx64 "[%d] -- 0x%016" PRIx64 "[%d]",
			 e->node_guid, e->port_num, e->peer_guid, e->peer_port);
	else if (!strcmp(k, "lid_assigned"))
		snprintf(what, sizeof(what), "port GUID 0x%016" PRIx64 " (0x%016" PRIx64 "[%d]): "
			 "LID %s", e->port_guid, e->node_guid, e->port_num, e->new_value);
	else if (!strcmp(k, "lid_changed"))
		snprintf(what, sizeof(what), "port GUID 0x%016" PRIx64 " (0x%016" PRIx64 "[%d]): "
			 "LID %s -> %s", e->port_guid, e->node_guid, e->port_num, e->old_value,
			 e->new_value);
	else if (!strcmp(k, "lid_released"))
		snprintf(what, sizeof(what), "port GUID 0x%016" PRIx64 ": LID %s now held by port "
			 "GUID 0x%016" PRIx64, e->port_guid, e->old_value, e->peer_guid);
	else if (!strcmp(k, "lid_imported"))
		snprintf(what, sizeof(what), "port GUID 0x%016" PRIx64 ": LID %s from %s",
			 e->port_guid, e->new_value, e->detail);
	else if (!strcmp(k, "lid_forgotten"))
		snprintf(what, sizeof(what), "port GUID 0x%016" PRIx64 ": LID %s (smctl) \"%s\"",
			 e->port_guid, e->old_value, e->detail);
	else
		snprintf(what, sizeof(what), "node 0x%016" PRIx64 " port %d: %s -> %s %s",
			 e->node_guid, e->port_num, e->old_value, e->new_value, e->detail);
	if (e->sweep_id)
		snprintf(sweep, sizeof(sweep), "%" PRId64, e->sweep_id);
	else
		snprintf(sweep, sizeof(sweep), "-");
	printf("%s %-7s %-14s %s\n", fmt_time(e->time, when, sizeof(when)), sweep, k, what);
	return 0;
}

int smctl_history(struct smctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "sweeps", required_argument, NULL, 'n' },
		{ "events", required_argument, NULL, 'e' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char use[] = "[--db FILE] [--json] [--sweeps N] [--events N]";
	unsigned int nsweeps = 10, nevents = 50;
	struct store *s = NULL;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:n:e:jh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': ctx->db = optarg; break;
		case 'j': ctx->json = true; break;
		case 'n': if (parse_count(argv[0], optarg, &nsweeps)) return 2; break;
		case 'e': if (parse_count(argv[0], optarg, &nevents)) return 2; break;
		case 'h': printf("Usage: smctl history %s\n", use); return 0;
		default: fprintf(stderr, "Usage: smctl history %s\n", use); return 2;
		}
	}
	if (optind != argc) {
		fprintf(stderr, "smctl history: unexpected argument '%s'\n", argv[optind]);
		return 2;
	}
	if (open_db(ctx, 1, &s) < 0) {
		json_fail(ctx, "cannot open the database");
		return 1;
	}
	r = 0;
	if (ctx->json) {
		struct json j;

		json_init(&j);
		json_obj_begin(&j, NULL);
		json_str(&j, "status", "ok");
		json_arr_begin(&j, "sweeps");
		if (nsweeps)
			r = store_foreach_sweep(s, nsweeps, json_sweep, &j);
		json_arr_end(&j);
		json_arr_begin(&j, "events");
		if (!r && nevents)
			r = store_foreach_event(s, nevents, json_event, &j);
		json_arr_end(&j);
		json_obj_end(&j);
		if (r < 0) {
			fprintf(stderr, "smctl: %s\n", store_errmsg(s));
			json_fail(ctx, store_errmsg(s));
			json_free(&j);
		}
		store_close(s);
		return r < 0 ? 1 : json_print(&j);
	}
	if (nsweeps) {
		printf("%-7s %-19s %8s  %-7s %6s %6s %6s %6s %7s %10s\n", "SWEEP", "STARTED",
		       "SECONDS", "OUTCOME", "NODES", "SWITCH", "LIDS", "LINKS", "EVENTS", "SMPS");
		r = store_foreach_sweep(s, nsweeps, print_sweep, NULL);
	}
	if (!r && nevents) {
		printf("%s%-19s %-7s %-14s %s\n", nsweeps ? "\n" : "", "TIME", "SWEEP", "EVENT",
		       "WHAT");
		r = store_foreach_event(s, nevents, print_event, NULL);
	}
	if (r < 0)
		fprintf(stderr, "smctl: %s\n", store_errmsg(s));
	store_close(s);
	return r < 0 ? 1 : 0;
}

/*
 * OpenSM's guid2lid into the database, before smd first runs on it: the
 * database and its directory are created when missing (mode 0700, as
 * systemd's StateDirectory= makes /var/lib/smd)
 */
int smctl_import_guid2lid(struct smctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char use[] = "[--db FILE] GUID2LID";
	struct store_import_stats st;
	struct store *s = NULL;
	struct guid2lid g;
	char err[512], *dir;
	const char *path;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		switch (c) {
		case 'd': ctx->db = optarg; break;
		case 'h': printf("Usage: smctl import-guid2lid %s\n", use); return 0;
		default: fprintf(stderr, "Usage: smctl import-guid2lid %s\n", use); return 2;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "Usage: smctl import-guid2lid %s\n", use);
		return 2;
	}
	path = argv[optind];
	/* The whole file is checked before the database is touched */
	r = guid2lid_load(path, &g, err, sizeof(err));
	if (r < 0) {
		fprintf(stderr, "smctl: %s; nothing imported\n", err);
		return 1;
	}
	dir = strdup(ctx->db);
	if (!dir || (mkdir(dirname(dir), 0700) < 0 && errno != EEXIST)) {
		fprintf(stderr, "smctl: cannot create the directory of %s: %s\n", ctx->db,
			strerror(dir ? errno : ENOMEM));
		free(dir);
		guid2lid_free(&g);
		return 1;
	}
	free(dir);
	r = store_open(ctx->db, 0, &s);
	if (r < 0) {
		fprintf(stderr, "smctl: %s: %s; nothing imported\n", ctx->db, store_errmsg(s));
		store_close(s);
		guid2lid_free(&g);
		return 1;
	}
	r = store_lid_import(s, g.e, g.n, path, (int64_t)time(NULL), &st);
	if (r == -EEXIST)
		fprintf(stderr, "smctl: %s:%u: %s; nothing imported\n", path, g.line[st.clash],
			store_errmsg(s));
	else if (r < 0)
		fprintf(stderr, "smctl: %s: %s; nothing imported\n", ctx->db, store_errmsg(s));
	else
		printf("imported %zu LIDs from %s into %s; %zu port GUIDs keep the LID the "
		       "database had for them (%zu of those differ from the file's)\n", st.imported,
		       path, ctx->db, st.known, st.differ);
	store_close(s);
	guid2lid_free(&g);
	return r < 0 ? 1 : 0;
}
