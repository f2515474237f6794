// SPDX-License-Identifier: MIT
/* The cabling plan in the daemon: loading, the report in force, smctl cabling (cabling.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "smd/cabling.h"
#include "smd/smd.h"
#include "smd/status.h"
#include "util/ctl_proto.h"
#include "util/file.h"
#include "util/json.h"
#include "util/log.h"
#include "util/text.h"

/* A plan larger than this is refused: 16000 hosts in ibnetdiscover format take ~15 MiB */
#define CABLING_FILE_MAX	((size_t)64 << 20)
/* Mismatches the log lists when the list changes (smctl cabling shows them all) */
#define CABLING_LOG_MAX		20

struct cabling {
	struct plan *plan;		/* in force; NULL: none */
	char file[PATH_MAX];		/* where it was read from */
	time_t loaded;
	char error[512];		/* the last reading that failed; "" when none did */
	struct plan_report *report;	/* of the model in force; NULL: not compared */
	uint64_t sweep;			/* the heavy sweep it comes from */
	bool enforced;			/* that sweep enforced the plan */
	bool logged;			/* the log has said what report says (by its sig) */
	uint64_t logged_sig;
};

/* Read and parse the plan cfg names: 0 and *out (NULL: none configured), or -errno and err */
static int load(const struct smd_config *cfg, const char *conf_path, char *path, size_t plen,
		struct plan **out, char *err, size_t errlen)
{
	char *text = NULL;
	size_t len = 0;
	int r;

	*out = NULL;
	path[0] = 0;
	if (!cfg->cabling_plan[0])
		return 0;
	r = file_path_near(cfg->cabling_plan, conf_path, path, plen);
	if (r < 0) {
		snprintf(err, errlen, "cabling_plan %s: path too long", cfg->cabling_plan);
		return r;
	}
	r = file_read_all(path, CABLING_FILE_MAX, &text, &len, err, errlen);
	if (r < 0)
		return r;
	r = plan_parse(text, len, path, out, err, errlen);
	free(text);
	return r;
}

int cabling_check(const struct smd_config *cfg, const char *conf_path, size_t *nodes,
		  size_t *cables, char *err, size_t errlen)
{
	char path[PATH_MAX];
	struct plan *p = NULL;
	int r = load(cfg, conf_path, path, sizeof(path), &p, err, errlen);

	*nodes = p ? p->nnodes : 0;
	*cables = p ? p->ncables : 0;
	plan_free(p);
	return r;
}

/* Take the plan cfg names now, or keep the one in force and say why */
static void read_plan(struct smd *smd, const char *why)
{
	struct cabling *c = smd->cabling;
	char path[PATH_MAX], err[sizeof(c->error)];
	struct plan *p = NULL;
	int r;

	r = load(&smd->cfg, smd->config_path, path, sizeof(path), &p, err, sizeof(err));
	if (r < 0) {
		snprintf(c->error, sizeof(c->error), "%s", err);
		if (c->plan)
			log_error("%s: cabling plan refused: %s; the plan read from %s stays in "
				  "force", why, err, c->file);
		else
			log_error("%s: cabling plan refused: %s; running without one", why, err);
		return;
	}
	c->error[0] = 0;
	if (!p) {
		if (c->plan)
			log_info("%s: no cabling_plan any more: the fabric is not compared", why);
		c->plan = plan_free(c->plan);
		c->file[0] = 0;
	} else {
		log_info("%s: cabling plan %s: %zu nodes (%zu switches), %zu cables, enforce %s",
			 why, path, p->nnodes, p->nswitches, p->ncables,
			 smd->cfg.cabling_enforce ? "yes" : "no");
		plan_free(c->plan);
		c->plan = p;
		snprintf(c->file, sizeof(c->file), "%s", path);
		c->loaded = time(NULL);
	}
	/* What was compared with the old plan says nothing of the new one */
	c->report = plan_report_free(c->report);
	c->logged = false;
}

int cabling_init(struct smd *smd)
{
	smd->cabling = calloc(1, sizeof(*smd->cabling));
	if (!smd->cabling)
		return -ENOMEM;
	if (smd->cfg.cabling_plan[0])
		read_plan(smd, "start");
	return 0;
}

void cabling_free(struct smd *smd)
{
	struct cabling *c = smd->cabling;

	if (!c)
		return;
	plan_free(c->plan);
	plan_report_free(c->report);
	free(c);
	smd->cabling = NULL;
}

void cabling_reload(struct smd *smd, const char *why)
{
	if (smd->cabling && (smd->cfg.cabling_plan[0] || smd->cabling->plan ||
			     smd->cabling->error[0]))
		read_plan(smd, why);
}

const struct plan *cabling_plan(const struct smd *smd)
{
	return smd->cabling ? smd->cabling->plan : NULL;
}

/* "6 mismatches (4 miswired, 2 missing)" */
static void counts_text(const struct plan_report *r, char *buf, size_t len)
{
	size_t off;

	off = (size_t)snprintf(buf, len, "%u mismatch%s", r->total, r->total == 1 ? "" : "es");
	for (unsigned int k = 0, first = 1; k < PLAN_KINDS && off < len; k++) {
		if (!r->count[k])
			continue;
		off += (size_t)snprintf(buf + off, len - off, "%s%u %s", first ? " (" : ", ",
					r->count[k], plan_kind_name(k));
		first = 0;
	}
	if (r->total && off < len)
		snprintf(buf + off, len - off, ")");
}

static void mismatch_line(const struct plan_mismatch *m, char *buf, size_t len)
{
	char d[PLAN_DESC_LEN + 1];

	text_printable(m->node_desc, d, sizeof(d));
	snprintf(buf, len, "%s 0x%016" PRIx64 " \"%s\" port %u: expected %s, found %s%s",
		 plan_kind_name(m->kind), m->node_guid, d, m->port,
		 m->expected[0] ? m->expected : "nothing", m->found[0] ? m->found : "nothing",
		 m->action == PLAN_HELD ? "; held at INIT" :
		 m->action == PLAN_KEPT ? "; left up: the fabric would split without it" : "");
}

void cabling_adopt(struct smd *smd, struct plan_report *r, uint64_t sweep, bool enforced)
{
	struct cabling *c = smd->cabling;
	char counts[256], line[512];

	if (!c || !r) {
		plan_report_free(r);
		return;
	}
	plan_report_free(c->report);
	c->report = r;
	c->sweep = sweep;
	c->enforced = enforced;
	/* Once per change: the same mismatches sweep after sweep say nothing new */
	if (c->logged && c->logged_sig == r->sig)
		return;
	c->logged = true;
	c->logged_sig = r->sig;
	if (!r->total) {
		log_info("cabling: the fabric matches the plan %s", c->file);
		return;
	}
	counts_text(r, counts, sizeof(counts));
	log_warn("cabling: %s against the plan %s%s", counts, c->file,
		 !enforced ? "" : r->held || r->kept ? "" : "; no link to hold at INIT");
	if (r->held || r->kept)
		log_warn("cabling: %u links held at INIT, %u wrong ones left up to keep the fabric "
			 "connected", r->held, r->kept);
	for (size_t i = 0; i < r->n && i < CABLING_LOG_MAX; i++) {
		mismatch_line(&r->list[i], line, sizeof(line));
		log_warn("cabling: %s", line);
	}
	if (r->total > CABLING_LOG_MAX)
		log_warn("cabling: %u more mismatches: smctl cabling lists them",
			 r->total - CABLING_LOG_MAX);
}

void cabling_status_fill(const struct smd *smd, struct status_cabling *s)
{
	const struct cabling *c = smd->cabling;

	memset(s, 0, sizeof(*s));
	s->file = "";
	s->error = "";
	s->configured = smd->cfg.cabling_plan[0] != 0;
	s->enforce = smd->cfg.cabling_enforce;
	if (!c)
		return;
	s->configured |= c->plan != NULL;
	s->file = c->file;
	s->error = c->error;
	if (c->plan) {
		s->nodes = c->plan->nnodes;
		s->cables = c->plan->ncables;
	}
	if (c->report) {
		s->compared = true;
		s->sweep = c->sweep;
		memcpy(s->count, c->report->count, sizeof(s->count));
		s->total = c->report->total;
		s->held = c->report->held;
		s->kept = c->report->kept;
	}
}

static void counts_json(struct json *j, const unsigned int *count)
{
	json_obj_begin(j, "counts");
	for (unsigned int k = 0; k < PLAN_KINDS; k++)
		json_u64(j, plan_kind_name(k), count[k]);
	json_obj_end(j);
}

const char *cabling_show(const struct smd *smd, void (*emit)(void *ctx, const char *fmt, ...),
			 void *ctx, struct json *j)
{
	const struct cabling *c = smd->cabling;
	const struct plan_report *r = c ? c->report : NULL;
	const char *word;
	char line[512], counts[256];

	if (c && (c->error[0] || (r && r->total)))
		word = CONTROL_STATUS_PROBLEMS;
	else if (r)
		word = CONTROL_STATUS_OK;
	else
		word = status_word(smd);
	if (j) {
		json_str(j, "status", word);
		if (c && c->plan)
			json_str(j, "file", c->file);
		else
			json_null(j, "file");
		if (c && c->error[0])
			json_str(j, "error", c->error);
		else
			json_null(j, "error");
		json_u64(j, "nodes", c && c->plan ? c->plan->nnodes : 0);
		json_u64(j, "cables", c && c->plan ? c->plan->ncables : 0);
		json_bool(j, "enforce", smd->cfg.cabling_enforce);
		json_bool(j, "compared", r != NULL);
		if (r) {
			json_u64(j, "sweep", c->sweep);
			json_bool(j, "enforced", c->enforced);
			json_u64(j, "total", r->total);
			counts_json(j, r->count);
			json_u64(j, "links_held", r->held);
			json_u64(j, "links_kept", r->kept);
		}
		json_arr_begin(j, "mismatches");
		for (size_t i = 0; r && i < r->n; i++) {
			const struct plan_mismatch *m = &r->list[i];

			json_obj_begin(j, NULL);
			json_str(j, "kind", plan_kind_name(m->kind));
			json_hex64(j, "node_guid", m->node_guid);
			json_str(j, "node_desc", m->node_desc);
			json_u64(j, "port", m->port);
			if (m->expected[0])
				json_str(j, "expected", m->expected);
			else
				json_null(j, "expected");
			if (m->found[0])
				json_str(j, "found", m->found);
			else
				json_null(j, "found");
			json_str(j, "action", plan_action_name(m->action));
			json_obj_end(j);
		}
		json_arr_end(j);
		json_u64(j, "not_shown", r ? r->total - r->n : 0);
		return word;
	}
	if (c && c->plan)
		emit(ctx, "plan: %s, %zu nodes (%zu switches), %zu cables\n", c->file,
		     c->plan->nnodes, c->plan->nswitches, c->plan->ncables);
	else
		emit(ctx, "plan: none in force\n");
	if (c && c->error[0])
		emit(ctx, "plan_error: %s\n", text_printable(c->error, line, sizeof(line)));
	emit(ctx, "enforce: %s\n", smd->cfg.cabling_enforce ? "yes" : "no");
	if (!r) {
		emit(ctx, "compared: no (no heavy sweep as master since the plan was read)\n");
	} else {
		counts_text(r, counts, sizeof(counts));
		emit(ctx, "compared: sweep %" PRIu64 "%s\n", c->sweep,
		     c->enforced ? ", enforced" : "");
		emit(ctx, "mismatches: %s\n", counts);
		emit(ctx, "links_held_init: %u\n", r->held);
		emit(ctx, "links_kept_up: %u\n", r->kept);
		for (size_t i = 0; i < r->n; i++) {
			mismatch_line(&r->list[i], line, sizeof(line));
			emit(ctx, "mismatch: %s\n", line);
		}
		if (r->total > r->n)
			emit(ctx, "mismatches_not_shown: %u\n", r->total - (unsigned int)r->n);
	}
	return word;
}
