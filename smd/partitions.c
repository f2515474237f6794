// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <arpa/inet.h>

#include "util/json.h"
#include "util/log.h"
#include "smd/mcast.h"
#include "smd/partitions.h"
#include "smd/smd.h"
#include "util/file.h"

/* A partitions file larger than this is refused (a mistake, or a hostile path) */
#define PART_FILE_MAX	(64u << 20)

int partitions_load(const struct smd_config *cfg, const char *conf_path, struct part_conf **out,
		    char *err, size_t errlen)
{
	struct part_defaults d = {
		.mtu = (uint8_t)cfg->ipoib_mtu, .rate = (uint8_t)cfg->ipoib_rate,
		.sl = (uint8_t)cfg->ipoib_sl, .ipoib = cfg->ipoib,
	};
	char path[PATH_MAX];
	char *text = NULL;
	size_t len = 0;
	int r;

	if (!cfg->partition_config[0]) {
		r = part_conf_default(&d, out);
		if (r < 0)
			snprintf(err, errlen, "partitions: out of memory");
		return r;
	}
	r = file_path_near(cfg->partition_config, conf_path, path, sizeof(path));
	if (r < 0) {
		snprintf(err, errlen, "partition_config %s: path too long", cfg->partition_config);
		return r;
	}
	r = file_read_all(path, PART_FILE_MAX, &text, &len, err, errlen);
	if (r < 0)
		return r;
	r = part_parse(text, len, path, &d, out, err, errlen);
	free(text);
	return r;
}

/* ---- printing ---- */

struct printer {
	FILE *out;
	const char *prefix;
	size_t col;			/* of the member line being filled */
};

/* Group flags; mtu and rate too unless the statement gives them */
static void flags_print(FILE *out, const struct part_mcparams *p, bool rates)
{
	if (rates)
		fprintf(out, ",mtu=%u,rate=%u", p->mtu, p->rate);
	fprintf(out, ",sl=%u", p->sl);
	for (unsigned int s = 1; s < 16; s++)
		if (p->scopes & (1u << s))
			fprintf(out, ",scope=%u", s);
	if (p->qkey)
		fprintf(out, ",qkey=0x%08x", p->qkey);
	if (p->tclass)
		fprintf(out, ",tclass=%u", p->tclass);
	if (p->flow_label)
		fprintf(out, ",flowlabel=0x%05x", p->flow_label);
}

static void member_print(struct printer *pr, const struct part_member *m, bool *first)
{
	static const char *const words[] = {
		[PART_ALL] = "ALL", [PART_ALL_CAS] = "ALL_CAS",
		[PART_ALL_SWITCHES] = "ALL_SWITCHES", [PART_ALL_ROUTERS] = "ALL_ROUTERS",
		[PART_SELF] = "SELF",
	};
	char item[64];
	int n;

	if (m->who == PART_GUID)
		n = snprintf(item, sizeof(item), "0x%016" PRIx64 "=%s", m->guid,
			     m->full ? "full" : "limited");
	else
		n = snprintf(item, sizeof(item), "%s=%s", words[m->who],
			     m->full ? "full" : "limited");
	if (!*first && pr->col + (size_t)n + 2 > 96) {
		fprintf(pr->out, ",\n%s\t", pr->prefix);
		pr->col = 8;
	} else if (!*first) {
		fprintf(pr->out, ", ");
		pr->col += 2;
	}
	fputs(item, pr->out);
	pr->col += (size_t)n;
	*first = false;
}

void partitions_print(const struct part_conf *c, FILE *out, const char *prefix)
{
	struct printer pr = { .out = out, .prefix = prefix };

	if (!c->from_file)
		fprintf(out, "%s# no partition_config: every port a full member of the default "
			"partition, as OpenSM without a file\n", prefix);
	else
		fprintf(out, "%s# every port is a limited member of Default (0x7fff), the SM's "
			"port a full one, before the rules below (as OpenSM)\n", prefix);
	for (size_t i = 0; i < c->n; i++) {
		const struct partition *p = &c->parts[i];
		bool first = true;

		fprintf(out, "%s%s=0x%04x", prefix, p->name, p->pkey);
		if (p->ipoib) {
			fprintf(out, ",ipoib");
			flags_print(out, &p->bc, true);
		}
		if (p->indx0)
			fprintf(out, ",indx0");
		fprintf(out, " :\n%s\t", prefix);
		pr.col = 8;
		for (size_t m = 0; m < p->nmembers; m++)
			if (!p->members[m].implicit || !c->from_file)
				member_print(&pr, &p->members[m], &first);
		fprintf(out, "%s;\n", first ? "" : " ");
		for (size_t k = 0; k < p->ngroups; k++) {
			const struct part_mgroup *g = &p->groups[k];
			char txt[64];

			inet_ntop(AF_INET6, g->mgid, txt, sizeof(txt));
			/* Each group its own statement: the mtu and rate it must match */
			fprintf(out, "%s%s=0x%04x,mtu=%u,rate=%u : mgid=%s", prefix, p->name,
				p->pkey, g->p.mtu, g->p.rate, txt);
			flags_print(out, &g->p, false);
			fprintf(out, " ;\n");
		}
	}
}

/* ---- in the daemon ---- */

int partitions_reload(struct smd *smd, const char *why)
{
	struct part_conf *c = NULL;
	char err[512];
	int r;

	r = partitions_load(&smd->cfg, smd->config_path, &c, err, sizeof(err));
	if (r < 0) {
		log_error("%s: %s; the partitions in force stay", why, err);
		return r;
	}
	if (smd->mcast) {
		r = mcast_partitions(smd, c);
		if (r < 0) {
			log_error("%s: the partitions' multicast groups: %s; the partitions in "
				  "force stay", why, strerror(-r));
			part_conf_free(c);
			return r;
		}
	}
	part_conf_free(smd->parts);
	smd->parts = c;
	log_info("%s: %zu partitions from %s, in force from the next sweep", why, c->n,
		 smd->cfg.partition_config[0] ? smd->cfg.partition_config :
		 "the defaults (no partition_config)");
	return 0;
}

/* Partition index by P_Key, for counting ports (UINT32_MAX: none) */
static uint32_t *pkey_map(const struct part_conf *c)
{
	uint32_t *map = malloc(32768 * sizeof(*map));

	if (!map)
		return NULL;
	memset(map, 0xff, 32768 * sizeof(*map));
	for (size_t i = 0; i < c->n; i++)
		map[c->parts[i].pkey] = (uint32_t)i;
	return map;
}

#define SHOW_MEMBERS_MAX	10000

/* The members of p, one line each, or one object each into j's open array: how many not shown */
static size_t show_members(const struct smd *smd, const struct partition *p,
			   void (*emit)(void *ctx, const char *fmt, ...), void *ctx,
			   struct json *j)
{
	const struct fabric *f = smd->fabric;
	size_t shown = 0, more = 0;

	for (size_t i = 0; f && i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 0; pn <= n->num_ports; pn++) {
			const struct fab_port *q = &n->ports[pn];
			const uint16_t *k;
			unsigned int nk;
			uint16_t key;

			if (!fabric_is_endport(q) || !q->lid)
				continue;
			k = fabric_port_pkeys(q, &nk);
			key = part_find_key(k, nk, p->pkey);
			if (!key)
				continue;
			if (shown == SHOW_MEMBERS_MAX) {
				more++;
				continue;
			}
			shown++;
			if (j) {
				json_obj_begin(j, NULL);
				json_hex64(j, "guid", q->guid);
				json_u64(j, "lid", q->lid);
				json_str(j, "membership", key & PKEY_FULL ? "full" : "limited");
				json_str(j, "node", n->desc_valid ? n->desc : "");
				json_u64(j, "port", q->num);
				json_obj_end(j);
				continue;
			}
			emit(ctx, "port: 0x%016" PRIx64 " LID %u %s \"%s\" port %u\n", q->guid,
			     q->lid, key & PKEY_FULL ? "full" : "limited",
			     n->desc_valid ? n->desc : "", q->num);
		}
	}
	if (more && !j)
		emit(ctx, "more: %zu ports not shown (smctl dump --format json lists them)\n",
		     more);
	return more;
}

/* One partition as a JSON object (smctl partitions --json) */
static void part_json(struct json *j, const struct partition *p, unsigned int full,
		      unsigned int lim)
{
	json_obj_begin(j, NULL);
	json_strf(j, "pkey", "0x%04x", p->pkey);
	json_str(j, "name", p->name);
	json_u64(j, "ports", full + lim);
	json_u64(j, "full", full);
	json_u64(j, "limited", lim);
	if (p->ipoib) {
		json_obj_begin(j, "ipoib");
		json_u64(j, "mtu", mtu_to_bytes(p->bc.mtu));
		json_str(j, "rate_gbps", part_rate_text(p->bc.rate));
		json_u64(j, "sl", p->bc.sl);
		json_strf(j, "qkey", "0x%x", p->bc.qkey ? p->bc.qkey : 0x0b1b);
		json_obj_end(j);
	} else {
		json_null(j, "ipoib");
	}
	json_u64(j, "multicast_groups", p->ngroups);
	json_bool(j, "indx0", p->indx0);
	json_obj_end(j);
}

int partitions_show(const struct smd *smd, const char *which,
		    void (*emit)(void *ctx, const char *fmt, ...), void *ctx, struct json *j)
{
	const struct part_conf *c = smd->parts;
	const struct fabric *f = smd->fabric;
	const struct partition *one = NULL;
	unsigned int *full, *lim;
	uint32_t *map;

	if (which) {
		char *end;
		unsigned long v = strtoul(which, &end, 0);

		if (*which && !*end && v <= 0xffff)
			one = part_find(c, (uint16_t)v);
		for (size_t i = 0; i < c->n && !one; i++)
			if (!strcmp(c->parts[i].name, which))
				one = &c->parts[i];
		if (!one)
			return -ENOENT;
	}
	if (j) {
		json_str(j, "file", smd->cfg.partition_config);
		json_bool(j, "swept", f != NULL);
	} else {
		emit(ctx, "file: %s\n", smd->cfg.partition_config[0] ?
		     smd->cfg.partition_config : "(none: every port a full member of Default)");
		if (!f)
			emit(ctx, "ports: no sweep yet\n");
	}
	map = pkey_map(c);
	full = calloc(c->n ? c->n : 1, sizeof(*full));
	lim = calloc(c->n ? c->n : 1, sizeof(*lim));
	if (!map || !full || !lim) {
		free(map);
		free(full);
		free(lim);
		return -ENOMEM;
	}
	/* Ports per partition, from the tables smd gave them */
	for (size_t i = 0; f && i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 0; pn <= n->num_ports; pn++) {
			const struct fab_port *q = &n->ports[pn];
			const uint16_t *k;
			unsigned int nk;

			if (!fabric_is_endport(q) || !q->lid)
				continue;
			k = fabric_port_pkeys(q, &nk);
			for (unsigned int e = 0; e < nk; e++) {
				uint32_t x = map[PKEY_BASE(k[e])];

				if (x == UINT32_MAX)
					continue;
				if (k[e] & PKEY_FULL)
					full[x]++;
				else
					lim[x]++;
			}
		}
	}
	if (j)
		json_arr_begin(j, "partitions");
	for (size_t i = 0; i < c->n; i++) {
		const struct partition *p = &c->parts[i];

		if (one && p != one)
			continue;
		if (j) {
			part_json(j, p, full[i], lim[i]);
			continue;
		}
		emit(ctx, "partition: 0x%04x \"%s\" %u ports (%u full, %u limited)", p->pkey,
		     p->name, full[i] + lim[i], full[i], lim[i]);
		if (p->ipoib)
			emit(ctx, ", ipoib (MTU %u, %s Gb/s, SL %u, Q_Key 0x%x)",
			     mtu_to_bytes(p->bc.mtu), part_rate_text(p->bc.rate), p->bc.sl,
			     p->bc.qkey ? p->bc.qkey : 0x0b1b);
		if (p->ngroups)
			emit(ctx, ", %zu multicast groups", p->ngroups);
		emit(ctx, "%s\n", p->indx0 ? ", indx0" : "");
	}
	if (j)
		json_arr_end(j);
	free(map);
	free(full);
	free(lim);
	if (one && j) {
		size_t more;

		json_arr_begin(j, "members");
		more = show_members(smd, one, emit, ctx, j);
		json_arr_end(j);
		json_u64(j, "members_not_shown", more);
	} else if (one) {
		show_members(smd, one, emit, ctx, NULL);
	}
	return 0;
}
