// SPDX-License-Identifier: MIT
/*
 * The control socket (protocol in control.h, smctl(8)). Every client is a
 * non-blocking descriptor in the daemon's sd-event loop with a bounded
 * input line, one answer at a time (a client that does not read its answers
 * stops being read), an idle timeout and a cap on the number of clients: a
 * client can waste its own connection, never the daemon's time or memory.
 * Answers are written with MSG_NOSIGNAL, so a client that hangs up early
 * costs smd nothing but the answer.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>
#include <systemd/sd-event.h>

#include "autoconfig.h"
#include "mad/port.h"
#include "smd/control.h"
#include "util/json.h"
#include "util/metrics.h"
#include "util/text.h"
#include "smd/mcast.h"
#include "topo/mc.h"
#include "smd/cabling.h"
#include "smd/health.h"
#include "smd/light.h"
#include "util/log.h"
#include "smd/mkey.h"
#include "smd/partitions.h"
#include "smd/smd.h"
#include "smd/status.h"
#include "smd/sweep.h"
#include "smd/trap.h"

#define CONTROL_CLIENTS_MAX	16
#define CONTROL_OUT_MAX		(1u << 20)	/* an answer never gets near it */
/*
 * The metrics answer can be tens of MB (the per-port series of a k=32
 * fat-tree): it goes out in pieces of this much as the reader takes them,
 * and one client's turn of the loop renders for this long at most
 */
#define CONTROL_PIECE		(256u << 10)
#define CONTROL_PIECES_US	5000
#define CONTROL_IDLE_USEC	(30 * 1000000ull)

struct ctl_client {
	struct control *ctl;
	struct ctl_client *next;
	int fd;
	sd_event_source *io, *idle;
	char in[CONTROL_LINE_MAX];
	size_t inlen;
	char *out;			/* the answer being sent */
	size_t outlen, outoff, outcap;
	bool json;			/* this request wants its answer as one JSON object */
	/* The metrics answer being written in pieces: its snapshot, writer, place */
	struct status_snapshot *ms;
	struct metrics mw;
	struct status_metrics_cursor mc;
	char enabled[192];		/* port enable: what was done, said when its sweep ended */
	bool waiting;			/* for a sweep after wait_after to end */
	unsigned long wait_after;
	bool eof;			/* the client sent all it will send */
	bool closing;			/* close once the answer is out */
	bool broken;			/* drop it now */
	bool cred;			/* SO_PEERCRED gave uid, gid, pid */
	uid_t uid;
	gid_t gid;
	pid_t pid;
	gid_t groups[64];		/* supplementary groups (SO_PEERGROUPS) */
	unsigned int ngroups;
};

struct control {
	struct smd *smd;
	sd_event *ev;
	const struct control_ops *ops;
	void *ctx;
	int fd;
	sd_event_source *listen;
	char path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	dev_t dev;			/* the socket file we made, to remove only it */
	ino_t ino;
	struct ctl_client *clients;
	unsigned int nclients;
};

int control_socket_path(const char *cfg, char *buf, size_t len)
{
	const char *rt = getenv("RUNTIME_DIRECTORY");
	int n;

	if (cfg && !strcmp(cfg, "none"))
		return 1;
	if (cfg && *cfg) {
		n = snprintf(buf, len, "%s", cfg);
	} else if (rt && *rt) {
		/* systemd lists one directory per RuntimeDirectory= entry, ':' between */
		size_t dl = strcspn(rt, ":");

		n = snprintf(buf, len, "%.*s/control", (int)dl, rt);
	} else {
		n = snprintf(buf, len, "%s", CONTROL_DEFAULT_PATH);
	}
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

/* ---- formatting ---- */

static void out_vadd(struct ctl_client *cl, const char *fmt, va_list ap)
{
	va_list aq;
	int n;

	if (cl->broken)
		return;
	va_copy(aq, ap);
	n = vsnprintf(cl->out ? cl->out + cl->outlen : NULL,
		      cl->out ? cl->outcap - cl->outlen : 0, fmt, aq);
	va_end(aq);
	if (n < 0)
		goto broken;
	if (cl->outlen + (size_t)n + 1 > cl->outcap) {
		size_t cap = cl->outcap ? cl->outcap : 4096;
		char *p;

		while (cap < cl->outlen + (size_t)n + 1)
			cap *= 2;
		if (cap > CONTROL_OUT_MAX)
			goto broken;
		p = realloc(cl->out, cap);
		if (!p)
			goto broken;
		cl->out = p;
		cl->outcap = cap;
		vsnprintf(cl->out + cl->outlen, cl->outcap - cl->outlen, fmt, ap);
	}
	cl->outlen += (size_t)n;
	return;
broken:
	cl->broken = true;
}

static void __attribute__((format(printf, 2, 3))) out_add(struct ctl_client *cl,
							   const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_vadd(cl, fmt, ap);
	va_end(ap);
}

static void __attribute__((format(printf, 2, 3))) out_error(struct ctl_client *cl,
							     const char *fmt, ...)
{
	va_list ap;

	out_add(cl, "ERROR: ");
	va_start(ap, fmt);
	out_vadd(cl, fmt, ap);
	va_end(ap);
	out_add(cl, "\n");
}

static const char *fmt_when(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "%lld", (long long)t);
	return buf;
}

/*
 * The answer's status, what smctl's exit status comes from: ok, or down
 * (the subnet is not up, or this SM is not working) or problems (the
 * routes are not right)
 */
#define STATUS_OK	CONTROL_STATUS_OK
#define STATUS_DOWN	CONTROL_STATUS_DOWN
#define STATUS_PROBLEMS	CONTROL_STATUS_PROBLEMS

/* One JSON object as the answer's only data line, then OK */
static void out_json(struct ctl_client *cl, struct json *j)
{
	const char *t = json_text(j);

	if (t)
		out_add(cl, "%s\nOK\n", t);
	else
		out_error(cl, "out of memory");
	json_free(j);
}

static void __attribute__((format(printf, 2, 3))) emit_line(void *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_vadd(ctx, fmt, ap);
	va_end(ap);
}

void control_summary(const struct smd *smd, char *buf, size_t len)
{
	struct status_snapshot s;

	if (status_fill(smd, &s) < 0) {
		snprintf(buf, len, "%s", sm_state_name(smd->sm_state));
		return;
	}
	status_summary(&s, buf, len);
	status_release(&s);
}

/* status: one snapshot of the daemon, shown as text or JSON (smd/status.h) */
static void cmd_status(struct ctl_client *cl)
{
	struct status_snapshot s;

	if (status_fill(cl->ctl->smd, &s) < 0) {
		out_error(cl, "out of memory");
		return;
	}
	if (cl->json) {
		struct json j;

		json_init(&j);
		status_json(&s, &j);
		out_json(cl, &j);
	} else {
		status_text(&s, emit_line, cl);
		out_add(cl, "OK\n");
	}
	status_release(&s);
}

/*
 * metrics: the same snapshot in Prometheus's text format (smd_exporter
 * relays it), then the status line. Read-only, like status. The SM's
 * families go at once; the per-port ones (tens of MB on a big fabric)
 * are rendered from the snapshot a piece at a time as the reader drains
 * the socket (metrics_piece), never in one turn of the loop.
 */
static void cmd_metrics(struct ctl_client *cl)
{
	struct status_snapshot *s;
	const char *t;

	if (cl->json) {
		out_error(cl, "metrics has no JSON form");
		return;
	}
	s = calloc(1, sizeof(*s));
	if (!s || status_fill(cl->ctl->smd, s) < 0) {
		free(s);
		out_error(cl, "out of memory");
		return;
	}
	if (status_fill_ports(cl->ctl->smd, s) < 0) {
		status_release(s);
		free(s);
		out_error(cl, "out of memory");
		return;
	}
	metrics_init(&cl->mw);
	status_metrics_head(s, &cl->mw);
	t = metrics_text(&cl->mw);
	if (!t || metrics_len(&cl->mw) + 64 > CONTROL_OUT_MAX) {
		/* Said, not a connection dropped halfway (out_add would break it) */
		out_error(cl, "the metrics answer cannot be made (%s)", t ? "too long" :
			  "out of memory");
		metrics_free(&cl->mw);
		status_release(s);
		free(s);
		return;
	}
	out_add(cl, "%s", t);
	metrics_drop_text(&cl->mw);
	memset(&cl->mc, 0, sizeof(cl->mc));
	cl->ms = s;
}

static void metrics_end(struct ctl_client *cl)
{
	metrics_free(&cl->mw);
	if (cl->ms) {
		status_release(cl->ms);
		free(cl->ms);
		cl->ms = NULL;
	}
}

/* The next piece of the per-port series, or the end of the answer */
static void metrics_piece(struct ctl_client *cl)
{
	bool done = status_metrics_ports(cl->ms, &cl->mw, &cl->mc, CONTROL_PIECE);
	const char *t = metrics_text(&cl->mw);

	if (!t) {
		/* Out of memory halfway: the answer cannot end right, the reader sees it cut */
		cl->broken = true;
		metrics_end(cl);
		return;
	}
	out_add(cl, "%s", t);
	metrics_drop_text(&cl->mw);
	if (!done)
		return;
	if (cl->mw.invalid)
		log_warn("control: the metrics answer left out %u invalid names or samples",
			 cl->mw.invalid);
	out_add(cl, "status: %s\nOK\n", cl->ms->status);
	metrics_end(cl);
}

/*
 * Changing commands: root, the daemon's own user, or a member of
 * control_group (its primary group or a supplementary one)
 */
static bool may_change(const struct ctl_client *cl)
{
	const char *g = cl->ctl->smd->cfg.control_group;
	struct group gr, *res = NULL;
	char buf[4096];
	char *end;

	if (!cl->cred)
		return false;
	if (cl->uid == 0 || cl->uid == geteuid())
		return true;
	if (!*g)
		return false;
	if (isdigit((unsigned char)*g)) {
		unsigned long gid = strtoul(g, &end, 10);

		if (!*end)
			getgrgid_r((gid_t)gid, &gr, buf, sizeof(buf), &res);
	} else {
		getgrnam_r(g, &gr, buf, sizeof(buf), &res);
	}
	if (!res)
		return false;
	if (cl->gid == res->gr_gid)
		return true;
	for (unsigned int i = 0; i < cl->ngroups; i++)
		if (cl->groups[i] == res->gr_gid)
			return true;
	return false;
}

static bool allowed(struct ctl_client *cl, const char *cmd)
{
	if (may_change(cl))
		return true;
	log_notice("control: %s refused to uid %u (pid %d): it changes the SM", cmd,
		   (unsigned int)cl->uid, (int)cl->pid);
	out_error(cl, "permission denied: %s changes the SM; it is for root%s%s", cmd,
		  cl->ctl->smd->cfg.control_group[0] ? " and group " : "",
		  cl->ctl->smd->cfg.control_group);
	return false;
}

static void sweep_report_json(struct ctl_client *cl, const struct status_snapshot *s)
{
	const struct smd *smd = cl->ctl->smd;
	const struct smd_stats *st = &smd->stats;
	const struct sweep_result *l = s->last;
	bool up;
	struct json j;

	json_init(&j);
	json_obj_begin(&j, NULL);
	if (st->light_only && st->light) {
		up = !smd->last_sweep_down;
		json_str(&j, "status", up ? STATUS_OK : STATUS_DOWN);
		json_str(&j, "kind", "light");
		json_bool(&j, "changed", false);
		json_u64(&j, "switches", st->light->switches);
		json_double(&j, "seconds", st->light->seconds);
		json_u64(&j, "sweep", smd->heavy_sweeps);
		json_str(&j, "result", up ? "up" : "not up");
	} else {
		up = l && !s->last_failed && !l->standby && l->up;
		json_str(&j, "status", up ? STATUS_OK : STATUS_DOWN);
		json_str(&j, "kind", "heavy");
		json_u64(&j, "sweep", smd->heavy_sweeps);
		json_str(&j, "result", s->last_result);
		if (l && !s->last_failed && !l->standby) {
			json_u64(&j, "nodes", l->nodes);
			json_u64(&j, "switches", l->switches);
			json_u64(&j, "cas", l->cas);
			json_u64(&j, "ca_ports", l->endports - l->switches);
			json_u64(&j, "lids", l->lids);
			status_problems_json(&j, l);
		}
		if (l) {
			json_double(&j, "seconds", l->seconds);
			status_json_smps(&j, "smps", l->smps, l->timeouts, l->failed);
		}
	}
	json_u64(&j, "problems", s->problems);
	json_obj_end(&j);
	out_json(cl, &j);
}

/* The answer to resweep, when its sweep has ended */
static void sweep_report(struct ctl_client *cl)
{
	const struct smd *smd = cl->ctl->smd;
	const struct smd_stats *st = &smd->stats;
	const struct sweep_result *l;
	struct status_snapshot s;
	char probs[512];

	if (status_fill(smd, &s) < 0) {
		out_error(cl, "out of memory");
		return;
	}
	l = s.last;
	if (cl->json) {
		sweep_report_json(cl, &s);
	} else if (st->light_only && st->light) {
		/* Nothing changed: the subnet is as the last heavy sweep left it */
		out_add(cl, "kind: light, no change found (%u switches asked, %.3f s)\n",
			st->light->switches, st->light->seconds);
		out_add(cl, "sweep: %" PRIu64 "\n", smd->heavy_sweeps);
		out_add(cl, "result: %s\n", smd->last_sweep_down ? "NOT up" : "up");
		out_add(cl, "status: %s\nOK\n", smd->last_sweep_down ? STATUS_DOWN : STATUS_OK);
	} else {
		out_add(cl, "kind: heavy\n");
		out_add(cl, "sweep: %" PRIu64 "\n", smd->heavy_sweeps);
		out_add(cl, "result: %s\n", s.last_result);
		if (l && !s.last_failed && !l->standby) {
			out_add(cl, "nodes: %u (%u switches, %u CAs), %u CA ports, %u LIDs\n",
				l->nodes, l->switches, l->cas, l->endports - l->switches, l->lids);
			status_problems_text(l, probs, sizeof(probs));
			if (probs[0])
				out_add(cl, "problem_counts: %s\n", probs);
		}
		if (l)
			out_add(cl, "seconds: %.3f\nsmps: %" PRIu64 " sent, %" PRIu64 " timed out, %"
				PRIu64 " unanswered\n", l->seconds, l->smps, l->timeouts, l->failed);
		out_add(cl, "problems: %u\n", s.problems);
		out_add(cl, "status: %s\nOK\n",
			l && !s.last_failed && !l->standby && l->up ? STATUS_OK : STATUS_DOWN);
	}
	status_release(&s);
}

/* The answer to port enable: what was done, and the sweep that routed with it */
static void enable_report(struct ctl_client *cl)
{
	const struct smd *smd = cl->ctl->smd;

	if (cl->json) {
		struct json j;

		json_init(&j);
		json_obj_begin(&j, NULL);
		json_str(&j, "status", STATUS_OK);
		json_str(&j, "result", cl->enabled);
		json_u64(&j, "sweep", smd->heavy_sweeps);
		json_obj_end(&j);
		out_json(cl, &j);
	} else {
		out_add(cl, "result: %s\nsweep: %" PRIu64 "\nstatus: %s\nOK\n", cl->enabled,
			smd->heavy_sweeps, STATUS_OK);
	}
	cl->enabled[0] = 0;
}

static void cmd_resweep(struct ctl_client *cl, int argc, char **argv)
{
	struct control *c = cl->ctl;
	bool heavy = false;
	int r;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--heavy")) {
			heavy = true;
		} else {
			char buf[40];

			out_error(cl, "resweep: unknown argument '%s' (resweep [--heavy])",
				  text_printable(argv[i], buf, sizeof(buf)));
			return;
		}
	}
	if (!allowed(cl, "resweep"))
		return;
	r = c->ops->resweep(c->ctx, heavy);
	if (r < 0) {
		out_error(cl, "this SM is %s: %s", sm_state_name(c->smd->sm_state),
			  r == -EBUSY ? "only the master sweeps" : strerror(-r));
		return;
	}
	log_info("control: %s sweep requested", heavy ? "a heavy" : "a");
	/* The answer goes out when the sweep has ended */
	cl->waiting = true;
	cl->wait_after = c->smd->stats.rounds;
}

static void cmd_check_routes(struct ctl_client *cl)
{
	const struct smd *smd = cl->ctl->smd;
	const struct sweep_result *m = smd->stats.model;
	const struct route_check *k;
	char when[64];
	uint64_t routed;
	bool ok;

	if (smd->sm_state != SM_MASTER) {
		out_error(cl, "this SM is %s: the master routes the subnet",
			  sm_state_name(smd->sm_state));
		return;
	}
	if (!m || !m->engine[0]) {
		out_error(cl, "no sweep has routed the subnet yet");
		return;
	}
	k = &m->chk;
	routed = k->pairs - k->disconnected - k->unreachable - k->loops;
	ok = !k->unreachable && !k->loops && !k->bad_vl && k->acyclic;
	if (cl->json) {
		struct json j;

		json_init(&j);
		json_obj_begin(&j, NULL);
		json_str(&j, "status", ok ? STATUS_OK : STATUS_PROBLEMS);
		json_u64(&j, "sweep", smd->stats.model_sweep);
		json_i64(&j, "ended", (int64_t)smd->stats.model_end);
		json_str(&j, "engine", m->engine);
		json_u64(&j, "vls", m->vls);
		json_u64(&j, "vls_budget", m->vls_budget);
		json_u64(&j, "pairs", k->pairs);
		json_u64(&j, "routed", routed);
		json_u64(&j, "unreachable", k->unreachable);
		json_u64(&j, "disconnected", k->disconnected);
		json_u64(&j, "loops", k->loops);
		json_u64(&j, "bad_vl", k->bad_vl);
		json_bool(&j, "deadlock_free", k->acyclic);
		json_u64(&j, "dependencies", k->dependencies);
		if (!k->acyclic) {
			json_obj_begin(&j, "cycle");
			json_u64(&j, "channels", k->cycle_len);
			json_hex64(&j, "switch", k->cycle_guid);
			json_u64(&j, "port", k->cycle_port);
			json_u64(&j, "vl", k->cycle_vl);
			json_obj_end(&j);
		}
		json_u64(&j, "max_link_routes", k->max_link_routes);
		json_double(&j, "mean_link_routes", k->mean_link_routes);
		json_u64(&j, "max_hops", k->max_hops);
		json_obj_end(&j);
		out_json(cl, &j);
		return;
	}
	out_add(cl, "sweep: %" PRIu64 ", ended %s\n", smd->stats.model_sweep,
		fmt_when(smd->stats.model_end, when, sizeof(when)));
	out_add(cl, "engine: %s\n", m->engine);
	out_add(cl, "vls: %u used of %u\n", m->vls, m->vls_budget);
	out_add(cl, "pairs: %" PRIu64 " (source port, destination LID) pairs checked\n", k->pairs);
	out_add(cl, "routed: %" PRIu64 "\n", routed);
	out_add(cl, "unreachable: %" PRIu64 "\n", k->unreachable);
	out_add(cl, "disconnected: %" PRIu64 " (in another part of a split fabric)\n",
		k->disconnected);
	out_add(cl, "loops: %" PRIu64 "\n", k->loops);
	out_add(cl, "bad_vl: %" PRIu64 "\n", k->bad_vl);
	if (k->acyclic)
		out_add(cl, "deadlock_free: yes, the channel dependency graph over (link, VL) is "
			"acyclic (%" PRIu64 " dependencies)\n", k->dependencies);
	else
		out_add(cl, "deadlock_free: NO, the channel dependency graph over (link, VL) has "
			"a cycle of %u channels, through switch 0x%016" PRIx64 " port %u VL %u\n",
			k->cycle_len, k->cycle_guid, k->cycle_port, k->cycle_vl);
	out_add(cl, "routes_per_link: max %" PRIu32 ", mean %.1f\n", k->max_link_routes,
		k->mean_link_routes);
	out_add(cl, "max_hops: %u\n", k->max_hops);
	out_add(cl, "verdict: %s\n", ok ? "OK" : "PROBLEMS");
	out_add(cl, "status: %s\nOK\n", ok ? STATUS_OK : STATUS_PROBLEMS);
}

/* partitions [P_KEY|NAME]: ports per partition, or the members of one */
static void cmd_partitions(struct ctl_client *cl, int argc, char **argv)
{
	const struct smd *smd = cl->ctl->smd;
	char buf[40];
	int r;

	if (argc > 2) {
		out_error(cl, "partitions takes at most one argument (a P_Key or a name)");
		return;
	}
	if (!smd->parts) {
		out_error(cl, "no partitions loaded");
		return;
	}
	if (cl->json) {
		struct json j;

		json_init(&j);
		json_obj_begin(&j, NULL);
		json_str(&j, "status", status_word(smd));
		r = partitions_show(smd, argc == 2 ? argv[1] : NULL, NULL, NULL, &j);
		json_obj_end(&j);
		if (r < 0)
			json_free(&j);
		else
			out_json(cl, &j);
	} else {
		r = partitions_show(smd, argc == 2 ? argv[1] : NULL, emit_line, cl, NULL);
		if (!r)
			out_add(cl, "status: %s\nOK\n", status_word(smd));
	}
	if (r == -ENOENT)
		out_error(cl, "no partition '%s'", text_printable(argv[1], buf, sizeof(buf)));
	else if (r < 0)
		out_error(cl, "partitions: %s", strerror(-r));
}

/* cabling: the plan, the last comparison and its mismatches (smd/cabling.c) */
static void cmd_cabling(struct ctl_client *cl)
{
	const struct smd *smd = cl->ctl->smd;
	const char *word;

	if (!smd->cfg.cabling_plan[0] && !cabling_plan(smd)) {
		out_error(cl, "no cabling plan: cabling_plan in smd.conf names none");
		return;
	}
	if (cl->json) {
		struct json j;

		json_init(&j);
		json_obj_begin(&j, NULL);
		cabling_show(smd, NULL, NULL, &j);
		json_obj_end(&j);
		out_json(cl, &j);
		return;
	}
	word = cabling_show(smd, emit_line, cl, NULL);
	out_add(cl, "status: %s\nOK\n", word);
}

/* health: the rules, the counters, every unhealthy or isolated port (smd/health.c) */
static void cmd_health(struct ctl_client *cl)
{
	const struct smd *smd = cl->ctl->smd;
	const char *word;

	if (cl->json) {
		struct json j;

		json_init(&j);
		json_obj_begin(&j, NULL);
		health_show(smd, NULL, NULL, &j);
		json_obj_end(&j);
		out_json(cl, &j);
		return;
	}
	word = health_show(smd, emit_line, cl, NULL);
	(void)word;
	out_add(cl, "OK\n");
}

/* port enable GUID PORT: a link back into service; the answer when its sweep has ended */
static void cmd_port(struct ctl_client *cl, int argc, char **argv)
{
	struct control *c = cl->ctl;
	unsigned long long guid;
	unsigned long port;
	char msg[192], buf[40], *end;
	int r;

	if (argc != 4 || strcmp(argv[1], "enable")) {
		out_error(cl, "port: expected 'port enable GUID PORT'");
		return;
	}
	errno = 0;
	guid = strtoull(argv[2], &end, 0);
	if (errno || *end || end == argv[2] || !guid) {
		out_error(cl, "port enable: bad GUID '%s'", text_printable(argv[2], buf,
			  sizeof(buf)));
		return;
	}
	errno = 0;
	port = strtoul(argv[3], &end, 0);
	if (errno || *end || end == argv[3] || port < 1 || port > 254) {
		out_error(cl, "port enable: bad port '%s' (1-254)", text_printable(argv[3], buf,
			  sizeof(buf)));
		return;
	}
	if (!allowed(cl, "port enable"))
		return;
	r = health_port_enable(c->smd, guid, (uint8_t)port, msg, sizeof(msg));
	if (r < 0) {
		out_error(cl, "port enable: %s", msg);
		return;
	}
	snprintf(cl->enabled, sizeof(cl->enabled), "%s", msg);
	/* Routed with the link again when a sweep has run (a standby: nothing to wait for) */
	if (c->smd->health_resweep && c->ops->health_sweep && c->ops->health_sweep(c->ctx) == 0) {
		cl->waiting = true;
		cl->wait_after = c->smd->stats.rounds;
		return;
	}
	enable_report(cl);
}

static void cmd_help(struct ctl_client *cl)
{
	out_add(cl, "command: status: the SM, the subnet, the last sweep and its problems\n"
		"command: resweep [--heavy]: sweep now, light (heavy if it finds a change) or "
		"heavy (full re-discovery); answer when it ended\n"
		"command: check-routes: the route verifier's verdict on the current routes\n"
		"command: metrics: status as Prometheus metrics (text format 0.0.4), what "
		"smd_exporter serves\n"
		"command: sm-enable: a NOT-ACTIVE SM (disabled by another) takes part again\n"
		"command: partitions [P_KEY|NAME]: ports per partition, or one's members\n"
		"command: cabling: the fabric against its cabling plan: every mismatch\n"
		"command: health: the health rules, the counters, unhealthy and isolated ports\n"
		"command: port enable GUID PORT: a link the health rules isolated back in "
		"service\n"
		"command: help: this list\n"
		"option: --json: the answer as one JSON object, its first member \"status\"\n"
		"status: ok\n"
		"OK\n");
}

static void cmd_sm_enable(struct ctl_client *cl)
{
	struct control *c = cl->ctl;
	char who[64];
	int r;

	if (!allowed(cl, "sm-enable"))
		return;
	snprintf(who, sizeof(who), "smctl (uid %u, pid %d)", (unsigned int)cl->uid, (int)cl->pid);
	r = c->ops->sm_enable ? c->ops->sm_enable(c->ctx, who) : -EOPNOTSUPP;
	if (r == -EALREADY) {
		out_error(cl, "this SM is %s, not NOT-ACTIVE: nothing to enable",
			  sm_state_name(c->smd->sm_state));
		return;
	}
	if (r < 0) {
		out_error(cl, "sm-enable: %s", strerror(-r));
		return;
	}
	if (cl->json) {
		struct json j;

		json_init(&j);
		json_obj_begin(&j, NULL);
		json_str(&j, "status", STATUS_OK);
		json_str(&j, "state", sm_state_name(c->smd->sm_state));
		json_obj_end(&j);
		out_json(cl, &j);
		return;
	}
	out_add(cl, "state: %s\nstatus: %s\nOK\n", sm_state_name(c->smd->sm_state), STATUS_OK);
}

#define ARGS_MAX 8

/* line: len bytes and a NUL */
static void handle_line(struct ctl_client *cl, char *line, size_t len)
{
	char *argv[ARGS_MAX], *save = NULL, *tok, buf[40];
	int argc = 0;

	if (len && line[len - 1] == '\r')
		line[--len] = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)line[i];

		if ((ch < 0x20 && ch != '\t') || ch >= 0x7f) {	/* NUL included */
			out_error(cl, "the request is not a line of text");
			return;
		}
	}
	for (tok = strtok_r(line, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save)) {
		if (argc == ARGS_MAX) {
			out_error(cl, "too many arguments");
			return;
		}
		argv[argc++] = tok;
	}
	/* --json anywhere after the command: this answer as one JSON object */
	cl->json = false;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--json")) {
			cl->json = true;
			memmove(&argv[i], &argv[i + 1], (size_t)(argc - i - 1) * sizeof(argv[0]));
			argc--;
			i--;
		}
	if (!argc)
		out_error(cl, "empty request (try help)");
	else if (!strcmp(argv[0], "status") && argc == 1)
		cmd_status(cl);
	else if (!strcmp(argv[0], "resweep"))
		cmd_resweep(cl, argc, argv);
	else if (!strcmp(argv[0], "check-routes") && argc == 1)
		cmd_check_routes(cl);
	else if (!strcmp(argv[0], "metrics") && argc == 1)
		cmd_metrics(cl);
	else if (!strcmp(argv[0], "help") && argc == 1)
		cmd_help(cl);
	else if (!strcmp(argv[0], "sm-enable") && argc == 1)
		cmd_sm_enable(cl);
	else if (!strcmp(argv[0], "partitions"))
		cmd_partitions(cl, argc, argv);
	else if (!strcmp(argv[0], "cabling") && argc == 1)
		cmd_cabling(cl);
	else if (!strcmp(argv[0], "health") && argc == 1)
		cmd_health(cl);
	else if (!strcmp(argv[0], "port"))
		cmd_port(cl, argc, argv);
	else if (!strcmp(argv[0], "status") || !strcmp(argv[0], "check-routes") ||
		 !strcmp(argv[0], "help") || !strcmp(argv[0], "sm-enable") ||
		 !strcmp(argv[0], "metrics") || !strcmp(argv[0], "health") ||
		 !strcmp(argv[0], "cabling"))
		out_error(cl, "%s takes no arguments", argv[0]);
	else
		out_error(cl, "unknown command '%s' (try help)",
			  text_printable(argv[0], buf, sizeof(buf)));
}

/* ---- clients ---- */

static void client_free(struct ctl_client *cl)
{
	struct control *c = cl->ctl;

	for (struct ctl_client **pp = &c->clients; *pp; pp = &(*pp)->next)
		if (*pp == cl) {
			*pp = cl->next;
			break;
		}
	c->nclients--;
	sd_event_source_disable_unref(cl->io);
	sd_event_source_disable_unref(cl->idle);
	close(cl->fd);
	metrics_end(cl);
	free(cl->out);
	free(cl);
}

static bool pending(const struct ctl_client *cl)
{
	return cl->outoff < cl->outlen;
}

/* Send what the socket takes; false when the client is gone */
static bool client_flush(struct ctl_client *cl)
{
	while (pending(cl)) {
		ssize_t n = send(cl->fd, cl->out + cl->outoff, cl->outlen - cl->outoff,
				 MSG_NOSIGNAL | MSG_DONTWAIT);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return errno == EAGAIN || errno == EWOULDBLOCK;
		}
		cl->outoff += (size_t)n;
	}
	cl->outoff = cl->outlen = 0;
	return true;
}

static void client_touch(struct ctl_client *cl)
{
	uint64_t now;

	sd_event_now(cl->ctl->ev, CLOCK_MONOTONIC, &now);
	sd_event_source_set_time(cl->idle, now + CONTROL_IDLE_USEC);
	sd_event_source_set_enabled(cl->idle, SD_EVENT_ONESHOT);
}

/* Handle every complete request the client sent, one answer at a time */
static void client_run(struct ctl_client *cl)
{
	uint64_t t0 = txn_now_us();
	uint32_t events;

	for (;;) {
		char *nl;

		if (cl->broken || !client_flush(cl)) {
			client_free(cl);
			return;
		}
		if (pending(cl) || cl->waiting || cl->closing)
			break;
		/* A metrics answer in pieces: the next, while the socket takes them and time is left */
		if (cl->ms) {
			if (txn_now_us() - t0 > CONTROL_PIECES_US)
				break;
			metrics_piece(cl);
			continue;
		}
		nl = memchr(cl->in, '\n', cl->inlen);
		if (nl) {
			size_t used = (size_t)(nl - cl->in) + 1;

			*nl = 0;
			handle_line(cl, cl->in, used - 1);
			memmove(cl->in, cl->in + used, cl->inlen - used);
			cl->inlen -= used;
		} else if (cl->inlen == sizeof(cl->in)) {
			out_error(cl, "request too long (at most %u bytes with the newline)",
				  CONTROL_LINE_MAX);
			cl->closing = true;	/* no way to find the next line */
		} else if (cl->eof && cl->inlen) {
			/* The last request, without its newline */
			size_t len = cl->inlen;

			cl->in[len] = 0;
			cl->inlen = 0;
			handle_line(cl, cl->in, len);
		} else if (cl->eof) {
			cl->closing = true;
		} else {
			break;
		}
	}
	if (cl->closing && !pending(cl)) {
		client_free(cl);
		return;
	}
	/* Read no more requests until this answer is out (all its pieces) */
	events = pending(cl) || cl->ms ? EPOLLOUT : cl->waiting || cl->eof ? 0 : EPOLLIN;
	sd_event_source_set_io_events(cl->io, events);
}

static int on_client_io(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct ctl_client *cl = userdata;

	if (revents & (EPOLLERR | EPOLLHUP)) {
		/* Gone for good: nobody is left to read an answer */
		client_free(cl);
		return 0;
	}
	if ((revents & EPOLLIN) && !cl->eof && cl->inlen < sizeof(cl->in)) {
		ssize_t n = recv(fd, cl->in + cl->inlen, sizeof(cl->in) - cl->inlen, MSG_DONTWAIT);

		if (n == 0)
			cl->eof = true;
		else if (n > 0)
			cl->inlen += (size_t)n;
		else if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			cl->broken = true;
	}
	client_touch(cl);
	client_run(cl);
	return 0;
}

static int on_client_idle(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct ctl_client *cl = userdata;

	if (cl->waiting) {
		client_touch(cl);	/* a sweep takes what it takes */
		return 0;
	}
	log_debug("control: closing a client idle for %llu s",
		  (unsigned long long)(CONTROL_IDLE_USEC / 1000000));
	client_free(cl);
	return 0;
}

/* Who is at the other end: the kernel says, the client cannot lie about it */
static void client_cred(struct ctl_client *cl)
{
	struct ucred uc;
	socklen_t len = sizeof(uc);

	if (getsockopt(cl->fd, SOL_SOCKET, SO_PEERCRED, &uc, &len) == 0 && len == sizeof(uc)) {
		cl->cred = true;
		cl->uid = uc.uid;
		cl->gid = uc.gid;
		cl->pid = uc.pid;
	}
#ifdef SO_PEERGROUPS
	len = sizeof(cl->groups);
	if (getsockopt(cl->fd, SOL_SOCKET, SO_PEERGROUPS, cl->groups, &len) == 0)
		cl->ngroups = len / sizeof(cl->groups[0]);
#endif
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata)
{
	struct control *c = userdata;

	for (;;) {
		struct ctl_client *cl;
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
			    errno != ECONNABORTED)
				log_warn_errno(errno, "control: accept failed");
			return 0;
		}
		if (c->nclients >= CONTROL_CLIENTS_MAX) {
			static const char busy[] = "ERROR: too many clients, try again\n";

			if (send(cfd, busy, sizeof(busy) - 1, MSG_NOSIGNAL | MSG_DONTWAIT) < 0)
				log_debug("control: cannot tell a client it is one too many");
			close(cfd);
			continue;
		}
		cl = calloc(1, sizeof(*cl));
		if (!cl) {
			close(cfd);
			continue;
		}
		cl->ctl = c;
		cl->fd = cfd;
		client_cred(cl);
		if (sd_event_add_io(c->ev, &cl->io, cfd, EPOLLIN, on_client_io, cl) < 0 ||
		    sd_event_add_time(c->ev, &cl->idle, CLOCK_MONOTONIC, 0, 1000000,
				      on_client_idle, cl) < 0) {
			sd_event_source_disable_unref(cl->io);
			close(cfd);
			free(cl);
			continue;
		}
		cl->next = c->clients;
		c->clients = cl;
		c->nclients++;
		client_touch(cl);
	}
}

bool control_streaming(const struct control *c)
{
	for (const struct ctl_client *cl = c ? c->clients : NULL; cl; cl = cl->next)
		if (cl->ms)
			return true;
	return false;
}

void control_sweep_done(struct control *c)
{
	struct ctl_client *cl, *next;

	if (!c)
		return;
	for (cl = c->clients; cl; cl = next) {
		next = cl->next;
		if (!cl->waiting || c->smd->stats.rounds <= cl->wait_after)
			continue;
		cl->waiting = false;
		if (cl->enabled[0])
			enable_report(cl);
		else
			sweep_report(cl);
		client_run(cl);
	}
}

void control_sweep_cancel(struct control *c, const char *why)
{
	struct ctl_client *cl, *next;

	if (!c)
		return;
	for (cl = c->clients; cl; cl = next) {
		next = cl->next;
		if (!cl->waiting)
			continue;
		cl->waiting = false;
		if (cl->enabled[0])
			enable_report(cl);
		else
			out_error(cl, "no sweep: %s", why);
		client_run(cl);
	}
}

/* ---- the listening socket ---- */

static int make_dir(const char *path)
{
	char *copy = strdup(path);
	int r = 0;

	if (!copy)
		return -ENOMEM;
	if (mkdir(dirname(copy), 0755) < 0 && errno != EEXIST)
		r = -errno;
	free(copy);
	return r;
}

/* EADDRINUSE from bind(): replace the socket only when nobody answers on it */
static int take_over_stale(const struct sockaddr_un *sa)
{
	struct stat st;
	int fd, r;

	if (lstat(sa->sun_path, &st) < 0)
		return -errno;
	if (!S_ISSOCK(st.st_mode))
		return -EEXIST;
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	r = connect(fd, (const struct sockaddr *)sa, sizeof(*sa));
	close(fd);
	if (r == 0)
		return -EADDRINUSE;
	if (errno != ECONNREFUSED)
		return -errno;
	return unlink(sa->sun_path) < 0 ? -errno : 0;
}

int control_open(struct smd *smd, sd_event *ev, const char *path,
		 const struct control_ops *ops, void *ctx, struct control **out)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct control *c;
	struct stat st;
	mode_t old;
	int r;

	*out = NULL;
	if (strlen(path) >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->smd = smd;
	c->ev = sd_event_ref(ev);
	c->ops = ops;
	c->ctx = ctx;
	memcpy(c->path, sa.sun_path, sizeof(c->path));
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		r = -errno;
		goto fail;
	}
	r = make_dir(path);
	if (r < 0)
		goto fail;
	/*
	 * Only root (and root's group) may talk to smd: it can make smd
	 * sweep. The mask applies to the file bind() creates.
	 */
	old = umask(0117);
	r = bind(c->fd, (struct sockaddr *)&sa, sizeof(sa));
	if (r < 0 && errno == EADDRINUSE) {
		r = take_over_stale(&sa);
		if (r == 0)
			r = bind(c->fd, (struct sockaddr *)&sa, sizeof(sa));
		else
			errno = -r;
	}
	umask(old);
	if (r < 0) {
		r = -errno;
		goto fail;
	}
	if (stat(path, &st) == 0) {
		c->dev = st.st_dev;
		c->ino = st.st_ino;
	}
	/* control_group members may connect (and use the changing commands) */
	if (smd->cfg.control_group[0]) {
		struct group gr, *res = NULL;
		char buf[4096];

		if (isdigit((unsigned char)smd->cfg.control_group[0]))
			getgrgid_r((gid_t)strtoul(smd->cfg.control_group, NULL, 10), &gr, buf,
				   sizeof(buf), &res);
		else
			getgrnam_r(smd->cfg.control_group, &gr, buf, sizeof(buf), &res);
		if (!res || lchown(path, (uid_t)-1, res->gr_gid) < 0)
			log_warn("control: the socket cannot be given to group %s: %s",
				 smd->cfg.control_group, res ? strerror(errno) : "no such group");
	}
	if (listen(c->fd, 16) < 0) {
		r = -errno;
		goto fail;
	}
	r = sd_event_add_io(ev, &c->listen, c->fd, EPOLLIN, on_accept, c);
	if (r < 0)
		goto fail;
	*out = c;
	return 0;
fail:
	control_close(c);
	return r;
}

struct control *control_close(struct control *c)
{
	struct stat st;

	if (!c)
		return NULL;
	while (c->clients)
		client_free(c->clients);
	sd_event_source_disable_unref(c->listen);
	if (c->fd >= 0) {
		/* Remove the socket file only if it is still the one this smd made */
		if (c->ino && stat(c->path, &st) == 0 && st.st_dev == c->dev &&
		    st.st_ino == c->ino)
			unlink(c->path);
		close(c->fd);
	}
	sd_event_unref(c->ev);
	free(c);
	return NULL;
}
