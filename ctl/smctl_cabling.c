// SPDX-License-Identifier: MIT
/*
 * smctl commands about the fabric's cabling (issue 21), no daemon needed:
 * plan check (a cabling plan before smd.conf names it) and topology (the
 * last sweep's fabric, from the database, as a Slurm topology.conf).
 *
 * topology reads the database, as dump does, rather than asking the
 * daemon: the database holds the model of the last completed sweep (what
 * smd routes by), it answers when smd is stopped, a standby or busy, and
 * a whole cluster's tree does not have to fit in a control-socket answer.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl/smctl.h"
#include "db/store.h"
#include "topo/plan.h"
#include "topo/sched.h"
#include "util/file.h"
#include "util/json.h"

/* As smd reads it (smd/cabling.c) */
#define PLAN_FILE_MAX	((size_t)64 << 20)

static int print_json(struct json *j)
{
	const char *t = json_text(j);

	if (t)
		printf("%s\n", t);
	else
		fprintf(stderr, "smctl: out of memory\n");
	json_free(j);
	return t ? 0 : 1;
}

static void json_failure(const char *why)
{
	struct json j;

	json_init(&j);
	json_obj_begin(&j, NULL);
	json_str(&j, "status", "error");
	json_str(&j, "error", why);
	json_obj_end(&j);
	print_json(&j);
}

/* smctl plan check FILE: what smd would say of it, line numbers and all */
int smctl_plan(struct smctl_ctx *ctx, int argc, char **argv)
{
	static const char use[] = "check [--json] FILE";
	char err[1024], *text = NULL;
	struct plan *p = NULL;
	size_t len = 0, cas = 0, routers = 0, rated = 0;
	int i = 1, r;

	for (; i < argc && argv[i][0] == '-'; i++) {
		if (!strcmp(argv[i], "--json") || !strcmp(argv[i], "-j")) {
			ctx->json = true;
		} else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf("Usage: smctl plan %s\n", use);
			return 0;
		} else {
			fprintf(stderr, "Usage: smctl plan %s\n", use);
			return 2;
		}
	}
	if (argc - i != 2 || strcmp(argv[i], "check")) {
		fprintf(stderr, "Usage: smctl plan %s\n", use);
		return 2;
	}
	r = file_read_all(argv[i + 1], PLAN_FILE_MAX, &text, &len, err, sizeof(err));
	if (r == 0)
		r = plan_parse(text, len, argv[i + 1], &p, err, sizeof(err));
	free(text);
	if (r < 0) {
		fprintf(stderr, "smctl: %s\n", err);
		if (ctx->json)
			json_failure(err);
		return 1;
	}
	for (size_t k = 0; k < p->nnodes; k++) {
		const struct plan_node *n = &p->nodes[k];

		cas += n->type == NODE_TYPE_CA;
		routers += n->type == NODE_TYPE_ROUTER;
		for (unsigned int q = 1; q <= n->nports; q++)
			rated += n->ports[q].peer != PLAN_NONE && n->ports[q].width;
	}
	if (ctx->json) {
		struct json j;

		json_init(&j);
		json_obj_begin(&j, NULL);
		json_str(&j, "status", "ok");
		json_str(&j, "file", argv[i + 1]);
		json_u64(&j, "nodes", p->nnodes);
		json_u64(&j, "switches", p->nswitches);
		json_u64(&j, "cas", cas);
		json_u64(&j, "routers", routers);
		json_u64(&j, "cables", p->ncables);
		json_u64(&j, "ends_with_rate", rated);
		json_obj_end(&j);
		r = print_json(&j);
	} else {
		printf("plan OK: %s: %zu nodes (%zu switches, %zu CAs, %zu routers), %zu cables, "
		       "%zu cable ends with a width and speed\n", argv[i + 1], p->nnodes,
		       p->nswitches, cas, routers, p->ncables, rated);
	}
	plan_free(p);
	return r;
}

/* One Slurm line: the switch, then Nodes= or Switches= as a hostlist */
static int slurm_line(const struct sched_tree *t, const struct sched_switch *s)
{
	const char **names;
	size_t n = s->level ? s->nbelow : s->nhosts;
	char *list;

	if (!n) {
		printf("SwitchName=%s\n", s->name);
		return 0;
	}
	names = malloc(n * sizeof(*names));
	if (!names)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++)
		names[i] = s->level ? t->sw[s->below[i]].name : t->hosts[s->hosts[i]].name;
	list = sched_hostlist(names, n);
	free(names);
	if (!list)
		return -ENOMEM;
	printf("SwitchName=%s %s=%s\n", s->name, s->level ? "Switches" : "Nodes", list);
	free(list);
	return 0;
}

static void tree_json(const struct sched_tree *t, const struct store_sweep *sw)
{
	struct json j;

	json_init(&j);
	json_obj_begin(&j, NULL);
	json_str(&j, "status", "ok");
	json_i64(&j, "sweep", sw->id);
	json_i64(&j, "time", sw->finished);
	json_u64(&j, "levels", t->levels);
	json_u64(&j, "hosts", t->nhosts);
	json_u64(&j, "cas_without_name", t->unnamed);
	json_u64(&j, "hosts_not_on_a_switch", t->unplaced);
	json_u64(&j, "switches_without_hosts_below", t->unleveled);
	json_u64(&j, "names_changed", t->renamed);
	json_arr_begin(&j, "switches");
	for (size_t i = 0; i < t->nsw; i++) {
		const struct sched_switch *s = &t->sw[i];

		json_obj_begin(&j, NULL);
		json_str(&j, "name", s->name);
		json_hex64(&j, "guid", s->node->guid);
		json_u64(&j, "level", s->level);
		json_arr_begin(&j, "nodes");
		for (size_t k = 0; k < s->nhosts; k++)
			json_str(&j, NULL, t->hosts[s->hosts[k]].name);
		json_arr_end(&j);
		json_arr_begin(&j, "switches");
		for (size_t k = 0; k < s->nbelow; k++)
			json_str(&j, NULL, t->sw[s->below[k]].name);
		json_arr_end(&j);
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_obj_end(&j);
	print_json(&j);
}

/* smctl topology --slurm|--json: the last sweep's fabric as the scheduler needs it */
int smctl_topology(struct smctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' },
		{ "slurm", no_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char use[] = "--slurm|--json [--db FILE]";
	struct store *s = NULL;
	struct store_sweep sw;
	struct fabric *f = NULL;
	struct sched_tree *t = NULL;
	bool slurm = false;
	char when[64];
	struct tm tm;
	time_t tt;
	int c, r;

	optind = 1;
	while ((c = getopt_long(argc, argv, "d:sjh", opts, NULL)) != -1) {
		switch (c) {
		case 'd': ctx->db = optarg; break;
		case 's': slurm = true; break;
		case 'j': ctx->json = true; break;
		case 'h': printf("Usage: smctl topology %s\n", use); return 0;
		default: fprintf(stderr, "Usage: smctl topology %s\n", use); return 2;
		}
	}
	if (optind != argc || slurm == ctx->json) {
		fprintf(stderr, "Usage: smctl topology %s\n", use);
		return 2;
	}
	r = store_open(ctx->db, 1, &s);
	if (r == 0)
		r = store_load_fabric(s, &f, &sw);
	if (r < 0) {
		char why[512];

		snprintf(why, sizeof(why), "%s: %s", ctx->db, r == -ENOENT ? "no fabric saved yet" :
			 r == -ENOMEM ? "out of memory" : store_errmsg(s));
		fprintf(stderr, "smctl: %s\n", why);
		if (ctx->json)
			json_failure(why);
		store_close(s);
		return 1;
	}
	store_close(s);
	r = sched_tree_build(f, &t);
	if (r < 0) {
		fprintf(stderr, "smctl: out of memory\n");
		fabric_free(f);
		return 1;
	}
	if (ctx->json) {
		tree_json(t, &sw);
		goto out;
	}
	tt = (time_t)sw.finished;
	if (!localtime_r(&tt, &tm) || !strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(when, sizeof(when), "%" PRId64, sw.finished);
	printf("# Slurm topology.conf (topology/tree) from smd's sweep %" PRId64 " of %s\n"
	       "# %zu switches in %u levels, %zu hosts; leaves list Nodes=, the switches above "
	       "them Switches=\n", sw.id, when, t->nsw, t->levels, t->nhosts);
	if (t->unnamed)
		printf("# %zu CAs without a host name (NodeDescription) left out\n", t->unnamed);
	if (t->unplaced)
		printf("# %zu hosts with no port cabled to a switch left out\n", t->unplaced);
	if (t->unleveled)
		printf("# %zu switches with no host below them left out\n", t->unleveled);
	if (t->renamed)
		printf("# %zu names changed to what Slurm accepts (letters, digits, - _ .)\n",
		       t->renamed);
	for (size_t i = 0; i < t->nsw && r == 0; i++)
		r = slurm_line(t, &t->sw[i]);
	if (r < 0)
		fprintf(stderr, "smctl: out of memory\n");
out:
	sched_tree_free(t);
	fabric_free(f);
	return r < 0 ? 1 : 0;
}
