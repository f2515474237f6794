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
#include "smd/json.h"
#include "smd/mcast.h"
#include "topo/mc.h"
#include "smd/light.h"
#include "smd/log.h"
#include "smd/mkey.h"
#include "smd/partitions.h"
#include "smd/smd.h"
#include "smd/sweep.h"
#include "smd/trap.h"

#define CONTROL_CLIENTS_MAX	16
#define CONTROL_OUT_MAX		(1u << 20)	/* an answer never gets near it */
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

/* Text from the fabric (node descriptions in messages) may hold anything */
static const char *printable(const char *s, char *buf, size_t len)
{
	size_t i;

	for (i = 0; s[i] && i + 1 < len; i++)
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[i] = 0;
	return buf;
}

static const char *fmt_when(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "%lld", (long long)t);
	return buf;
}

/* The problems a sweep counted, as "2 ports not ACTIVE, 1 LFT error"; "" when none */
static void problem_counts(const struct sweep_result *r, char *buf, size_t len)
{
	const struct {
		uint64_t n;
		const char *one, *many;
	} p[] = {
		{ r->dup_guids, "duplicate GUID", "duplicate GUIDs" },
		{ r->rejected, "discovery answer rejected", "discovery answers rejected" },
		{ r->lost_peers, "peer not answering", "peers not answering" },
		{ r->unconfigured, "port not configured", "ports not configured" },
		{ r->not_active, "port not ACTIVE", "ports not ACTIVE" },
		{ r->lft_errors, "LFT error", "LFT errors" },
		{ r->table_errors, "VL table error", "VL table errors" },
		{ r->pkey_errors, "P_Key table error", "P_Key table errors" },
		{ r->unrouted, "unrouted (switch, LID) pair", "unrouted (switch, LID) pairs" },
		{ r->failed, "SMP unanswered", "SMPs unanswered" },
	};
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]) && off < len; i++) {
		int n;

		if (!p[i].n)
			continue;
		n = snprintf(buf + off, len - off, "%s%" PRIu64 " %s", off ? ", " : "", p[i].n,
			     p[i].n == 1 ? p[i].one : p[i].many);
		if (n < 0)
			break;
		off += (size_t)n;
	}
}

static const char *sweep_outcome(const struct smd *smd, char *buf, size_t len)
{
	const struct sweep_result *r = smd->stats.last;

	if (!r)
		snprintf(buf, len, "none yet");
	else if (smd->stats.last_err)
		snprintf(buf, len, "failed (%s)", strerror(-smd->stats.last_err));
	else if (r->standby)
		snprintf(buf, len, "standby (discovery only)");
	else
		snprintf(buf, len, "%s", r->up ? "up" : "NOT up");
	return buf;
}

static void summary(const struct smd *smd, char *buf, size_t len);

/* Where the sweep running is: false when none runs */
static bool progress(const struct smd *smd, struct sweep_progress *p)
{
	if (smd->sweep)
		sweep_progress(smd->sweep, p);
	else if (smd->light)
		light_progress(smd->light, p);
	else
		return false;
	return true;
}

/* "; heavy sweep: lfts (8/14), 3.2 s, 120000 SMPs done, 4128 waiting" or "" */
static void progress_summary(const struct smd *smd, char *buf, size_t len)
{
	struct sweep_progress p;

	buf[0] = 0;
	if (!progress(smd, &p))
		return;
	snprintf(buf, len, "; %s sweep: %s (%u/%u%s), %.1f s, %" PRIu64 " SMPs done, %" PRIu64
		 " waiting", p.kind, p.phase, p.phase_no, p.phases, p.computing ? ", computing" : "",
		 p.seconds, p.smps_done, p.smps_waiting);
}

/*
 * The answer's status, what smctl's exit status comes from: "ok" (0), or
 * "down" (the subnet is not up, or this SM is not working) or "problems"
 * (the routes are not right) (1).
 */
#define STATUS_OK	"ok"
#define STATUS_DOWN	"down"
#define STATUS_PROBLEMS	"problems"

static const char *health(const struct smd *smd)
{
	const struct sweep_result *m = smd->stats.model;

	switch (smd->sm_state) {
	case SM_STANDBY:
		return STATUS_OK;	/* the master runs the subnet */
	case SM_NOT_ACTIVE:
		return STATUS_DOWN;	/* disabled by another SM: nobody may be */
	case SM_DISCOVERING:
	case SM_MASTER:
		break;
	}
	return m && m->up ? STATUS_OK : STATUS_DOWN;
}

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

static void json_smps(struct json *j, const char *key, uint64_t sent, uint64_t timed_out,
		      uint64_t unanswered)
{
	json_obj_begin(j, key);
	json_u64(j, "sent", sent);
	json_u64(j, "timed_out", timed_out);
	json_u64(j, "unanswered", unanswered);
	json_obj_end(j);
}

/* The adaptive SMP window (mad/txn.c): its size now, what shrank it */
static void status_window(struct ctl_client *cl, const struct smd *smd)
{
	struct txn_window w;

	if (!smd->txn)
		return;
	txn_window_get(smd->txn, &w);
	if (w.min == w.max) {
		out_add(cl, "smp_window: %u (fixed)\n", w.size);
		return;
	}
	out_add(cl, "smp_window: %u (floor %u, ceiling %u, known good %u; round trip %.2f ms, "
		"reorder allowance %.2f ms)\n", w.size, w.min, w.max, w.safe, w.rtt_us / 1e3,
		w.reorder_us / 1e3);
	if (w.shrinks)
		out_add(cl, "smp_window_shrinks: %" PRIu64 ", the last %" PRIu64 " s ago\n",
			w.shrinks, (txn_now_us() - w.last_shrink_us) / 1000000u);
	else
		out_add(cl, "smp_window_shrinks: 0\n");
	out_add(cl, "smp_presumed_lost: %" PRIu64 " (%" PRIu64 " of them answered after all)\n",
		w.presumed, w.spurious);
}

static void json_window(struct json *j, const struct smd *smd)
{
	struct txn_window w;

	if (!smd->txn) {
		json_null(j, "smp_window");
		return;
	}
	txn_window_get(smd->txn, &w);
	json_obj_begin(j, "smp_window");
	json_u64(j, "size", w.size);
	json_u64(j, "min", w.min);
	json_u64(j, "max", w.max);
	json_bool(j, "fixed", w.min == w.max);
	json_u64(j, "known_good", w.safe);
	json_u64(j, "shrinks", w.shrinks);
	if (w.shrinks)
		json_u64(j, "last_shrink_ago", (txn_now_us() - w.last_shrink_us) / 1000000u);
	else
		json_null(j, "last_shrink_ago");
	json_u64(j, "presumed_lost", w.presumed);
	json_u64(j, "answered_late", w.spurious);
	json_u64(j, "rtt_us", w.rtt_us);
	json_u64(j, "reorder_us", w.reorder_us);
	json_obj_end(j);
}

/* The problem counters of a sweep, by name */
static void json_problem_counts(struct json *j, const struct sweep_result *r)
{
	json_obj_begin(j, "problem_counts");
	json_u64(j, "duplicate_guids", r->dup_guids);
	json_u64(j, "answers_rejected", r->rejected);
	json_u64(j, "peers_not_answering", r->lost_peers);
	json_u64(j, "ports_not_configured", r->unconfigured);
	json_u64(j, "ports_not_active", r->not_active);
	json_u64(j, "lft_errors", r->lft_errors);
	json_u64(j, "vl_table_errors", r->table_errors);
	json_u64(j, "unrouted_pairs", r->unrouted);
	json_u64(j, "smps_unanswered", r->failed);
	json_obj_end(j);
}

void control_summary(const struct smd *smd, char *buf, size_t len)
{
	char sweeping[160];
	size_t n0;

	progress_summary(smd, sweeping, sizeof(sweeping));
	summary(smd, buf, len);
	n0 = strlen(buf);
	if (sweeping[0] && n0 < len)
		snprintf(buf + n0, len - n0, "%s", sweeping);
}

static void summary(const struct smd *smd, char *buf, size_t len)
{
	const struct smd_stats *st = &smd->stats;
	const struct sweep_result *m = st->model, *l = st->last;
	char probs[256], when[32], outc[128];
	struct tm tm;
	int n;

	switch (smd->sm_state) {
	case SM_NOT_ACTIVE:
		snprintf(buf, len, "not active: another SM disabled this one");
		return;
	case SM_STANDBY:
		snprintf(buf, len, "standby: master is SM 0x%016" PRIx64 " (priority %u)",
			 smd->master.guid, smd->master.priority);
		return;
	case SM_DISCOVERING:
	case SM_MASTER:
		break;
	}
	if (!l) {
		snprintf(buf, len, "discovering the subnet: no sweep has ended yet");
		return;
	}
	when[0] = 0;
	if (localtime_r(&st->last_end, &tm))
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	if (st->last_err || !m) {
		n = snprintf(buf, len, "%s: last sweep (%s, %.2f s) %s",
			     sm_state_name(smd->sm_state), when, l->seconds,
			     sweep_outcome(smd, outc, sizeof(outc)));
		if (m && n > 0 && (size_t)n < len)
			snprintf(buf + n, len - (size_t)n, "; the sweep before: %u nodes, %u LIDs, "
				 "subnet %s", m->nodes, m->lids, m->up ? "up" : "NOT up");
		return;
	}
	problem_counts(m, probs, sizeof(probs));
	snprintf(buf, len, "%s: subnet %s, %u nodes (%u switches, %u CAs), %u CA ports, %u LIDs; "
		 "last sweep %s, %.2f s%s%s", sm_state_name(smd->sm_state),
		 m->up ? "up" : "NOT up", m->nodes, m->switches, m->cas,
		 m->endports - m->switches, m->lids, when, m->seconds,
		 probs[0] ? "; problems: " : "", probs);
}

/* GUIDs the sweep found at two places: both left out until one goes */
static void status_dups(struct ctl_client *cl, const struct sweep_result *m)
{
	char a[256], b[256];

	out_add(cl, "duplicate_guids: %u\n", m->dup_guids);
	for (unsigned int i = 0; i < m->ndups; i++) {
		dr_path_format(&m->dups[i].first, a, sizeof(a));
		dr_path_format(&m->dups[i].again, b, sizeof(b));
		out_add(cl, "duplicate_guid: %s 0x%016" PRIx64 " at path %s and at path %s, "
			"both left out\n", m->dups[i].port_guid ? "port" : "node", m->dups[i].guid,
			a, b);
	}
}

/* What the traps said, and who floods (smd/trap.h) */
static void status_traps(struct ctl_client *cl)
{
	const struct smd *smd = cl->ctl->smd;
	const struct trap_stats *ts;
	uint16_t lids[8];
	unsigned int n;

	if (!smd->trapt)
		return;
	ts = trap_stats(smd->trapt);
	out_add(cl, "trap_verdicts: %" PRIu64 " swept, %" PRIu64 " held back, %" PRIu64
		" reported, %" PRIu64 " ignored, %" PRIu64 " from unknown LIDs, %" PRIu64
		" from flooders\n", ts->swept, ts->deferred, ts->reported, ts->ignored,
		ts->unknown, ts->flooding);
	n = trap_flooders(smd->trapt, txn_now_us(), lids, 8);
	for (unsigned int i = 0; i < n && i < 8; i++) {
		const struct fab_port *p = smd->fabric ? fabric_port_by_lid(smd->fabric, lids[i]) :
					   NULL;
		char buf[LOG_RECORD_LEN];

		out_add(cl, "trap_flooder: LID %u, %s port %u, GUID 0x%016" PRIx64 "\n", lids[i],
			p ? printable(p->node->desc, buf, sizeof(buf)) : "?", p ? p->num : 0,
			p ? p->guid : 0);
	}
}

/* The sweep running: its phase, how long, its SMPs; and how the event loop keeps up */
static void status_progress(struct ctl_client *cl)
{
	const struct smd *smd = cl->ctl->smd;
	const struct smd_stats *st = &smd->stats;
	struct sweep_progress p;

	if (progress(smd, &p)) {
		out_add(cl, "sweep_running: %s, phase %u of %u (%s%s), %.3f s, this phase %.3f s\n",
			p.kind, p.phase_no, p.phases, p.phase, p.computing ? ", computing" : "",
			p.seconds, p.phase_seconds);
		out_add(cl, "sweep_smps: %" PRIu64 " sent, %" PRIu64 " done, %" PRIu64
			" waiting (%u in flight)\n", p.smps_sent, p.smps_done, p.smps_waiting,
			p.smps_inflight);
	} else {
		out_add(cl, "sweep_running: no\n");
	}
	out_add(cl, "event_loop: longest handler %.1f ms (%s), %" PRIu64 " over 100 ms\n",
		(double)st->loop_max_us / 1000, st->loop_max_what ? st->loop_max_what : "none",
		st->loop_slow);
}

/* status_progress() as JSON: sweep_running (null between sweeps), sweep_smps, event_loop */
static void json_progress(struct json *j, const struct smd *smd)
{
	const struct smd_stats *st = &smd->stats;
	struct sweep_progress p;

	if (progress(smd, &p)) {
		json_obj_begin(j, "sweep_running");
		json_str(j, "kind", p.kind);
		json_str(j, "phase", p.phase);
		json_u64(j, "phase_no", p.phase_no);
		json_u64(j, "phases", p.phases);
		json_bool(j, "computing", p.computing);
		json_double(j, "seconds", p.seconds);
		json_double(j, "phase_seconds", p.phase_seconds);
		json_obj_end(j);
		json_obj_begin(j, "sweep_smps");
		json_u64(j, "sent", p.smps_sent);
		json_u64(j, "done", p.smps_done);
		json_u64(j, "waiting", p.smps_waiting);
		json_u64(j, "in_flight", p.smps_inflight);
		json_obj_end(j);
	} else {
		json_null(j, "sweep_running");
	}
	json_obj_begin(j, "event_loop");
	json_double(j, "longest_handler_ms", (double)st->loop_max_us / 1000);
	json_str(j, "longest_handler", st->loop_max_what ? st->loop_max_what : "none");
	json_u64(j, "over_100ms", st->loop_slow);
	json_obj_end(j);
}

static void status_json(struct ctl_client *cl)
{
	const struct smd *smd = cl->ctl->smd;
	const struct smd_stats *st = &smd->stats;
	const struct sweep_result *m = st->model, *l = st->last;
	char outc[128], buf[LOG_RECORD_LEN];
	time_t now = time(NULL);
	struct json j;

	json_init(&j);
	json_obj_begin(&j, NULL);
	json_str(&j, "status", health(smd));
	json_str(&j, "version", PACKAGE_VERSION);
	json_i64(&j, "pid", (int64_t)getpid());
	json_i64(&j, "started", (int64_t)st->started);
	json_str(&j, "state", sm_state_name(smd->sm_state));
	json_hex64(&j, "sm_guid", smd->port ? mad_port_attr(smd->port)->port_guid : 0);
	json_u64(&j, "sm_priority", smd->cfg.sm_priority);
	json_u64(&j, "sm_lid", smd->sm_lid);
	json_progress(&j, smd);
	if (smd->sm_state == SM_STANDBY) {
		json_obj_begin(&j, "master");
		json_hex64(&j, "guid", smd->master.guid);
		json_u64(&j, "priority", smd->master.priority);
		json_obj_end(&j);
	}
	if (smd->sm_state == SM_STANDBY || smd->sm_state == SM_NOT_ACTIVE) {
		json_str(&j, "subnet", "the master's");
	} else if (m) {
		json_str(&j, "subnet", m->up ? "up" : "not up");
		json_u64(&j, "nodes", m->nodes);
		json_u64(&j, "switches", m->switches);
		json_u64(&j, "cas", m->cas);
		json_u64(&j, "ca_ports", m->endports - m->switches);
		json_u64(&j, "links", m->links);
		json_u64(&j, "lids", m->lids);
		json_obj_begin(&j, "routing");
		json_str(&j, "engine", m->engine);
		json_u64(&j, "vls", m->vls);
		json_u64(&j, "vls_budget", m->vls_budget);
		json_obj_end(&j);
		json_obj_begin(&j, "partitions");
		json_u64(&j, "count", smd->parts ? smd->parts->n : 0);
		json_str(&j, "file", smd->cfg.partition_config);
		json_u64(&j, "switch_ports_enforcing", m->pkey_enforced);
		json_obj_end(&j);
		json_u64(&j, "duplicate_guids", m->dup_guids);
		json_arr_begin(&j, "duplicates");
		for (unsigned int i = 0; i < m->ndups; i++) {
			char a[256], b[256];

			dr_path_format(&m->dups[i].first, a, sizeof(a));
			dr_path_format(&m->dups[i].again, b, sizeof(b));
			json_obj_begin(&j, NULL);
			json_str(&j, "kind", m->dups[i].port_guid ? "port" : "node");
			json_hex64(&j, "guid", m->dups[i].guid);
			json_str(&j, "path", a);
			json_str(&j, "again", b);
			json_obj_end(&j);
		}
		json_arr_end(&j);
	} else {
		json_str(&j, "subnet", "unknown");
	}
	json_bool(&j, "sm_key", smd->cfg.sm_key != 0);
	json_arr_begin(&j, "sm_foreign");
	for (size_t i = 0; i < smd->npeers; i++) {
		if (!smd->peers[i].foreign)
			continue;
		json_obj_begin(&j, NULL);
		json_hex64(&j, "guid", smd->peers[i].guid);
		json_u64(&j, "priority", smd->peers[i].priority);
		json_str(&j, "state", sm_state_name(smd->peers[i].state));
		json_obj_end(&j);
	}
	json_arr_end(&j);
	json_u64(&j, "sminfo_refused", smd->sminfo_refused);
	mkey_status_json(smd, &j);
	json_bool(&j, "sa", smd->sa_serving);
	if (smd->sa) {
		const struct sa_stats *ss = sa_stats(smd->sa);

		json_obj_begin(&j, "sa_requests");
		json_u64(&j, "received", ss->requests);
		json_u64(&j, "answered", ss->answered);
		json_u64(&j, "errors", ss->errors);
		json_u64(&j, "refused", ss->refused);
		json_u64(&j, "dropped", ss->dropped + ss->shed);
		json_obj_end(&j);
	}
	if (smd->mcast) {
		const struct mcast_stats *ms = mcast_stats(smd);
		const struct mc_db *db = mcast_db(smd);
		struct mc_forest *fo = mcast_forest(smd);
		size_t members = 0;

		for (const struct mc_group *g = mc_db_next(db, 0); g; g = mc_db_next(db, g->mlid))
			members += g->nmembers;
		json_obj_begin(&j, "mcast");
		json_u64(&j, "groups", mc_db_count(db));
		json_u64(&j, "memberships", members);
		json_u64(&j, "max_mlid", mc_db_max_mlid(db));
		if (fo) {
			json_u64(&j, "trees", mc_forest_stats(fo)->trees);
			json_u64(&j, "tree_switches", mc_forest_stats(fo)->switches);
			json_u64(&j, "unsafe", mc_forest_stats(fo)->unsafe);
			json_u64(&j, "mft_blocks_pending", mc_forest_pending(fo));
		}
		json_u64(&j, "created", ms->created);
		json_u64(&j, "deleted", ms->deleted);
		json_u64(&j, "mft_blocks_read", ms->blocks_read);
		json_u64(&j, "mft_blocks_written", ms->blocks_written);
		json_u64(&j, "mft_blocks_failed", ms->block_errors);
		json_obj_end(&j);
	}
	json_obj_begin(&j, "sweeps");
	json_u64(&j, "heavy", smd->heavy_sweeps);
	json_u64(&j, "light", smd->light_sweeps);
	json_obj_end(&j);
	if (st->light) {
		json_obj_begin(&j, "last_light_sweep");
		json_i64(&j, "ended", (int64_t)st->light_end);
		json_i64(&j, "ago", (int64_t)(now - st->light_end));
		json_u64(&j, "switches", st->light->switches);
		json_bool(&j, "changed", light_changed(st->light));
		json_obj_end(&j);
	}
	if (l) {
		json_obj_begin(&j, "last_sweep");
		json_i64(&j, "ended", (int64_t)st->last_end);
		json_i64(&j, "ago", (int64_t)(now - st->last_end));
		json_double(&j, "seconds", l->seconds);
		json_str(&j, "result", sweep_outcome(smd, outc, sizeof(outc)));
		json_smps(&j, "smps", l->smps, l->timeouts, l->failed);
		if (!st->last_err)
			json_problem_counts(&j, l);
		json_obj_end(&j);
	}
	json_smps(&j, "smps", st->smps_sent, st->smps_timed_out, st->smps_lost);
	json_window(&j, smd);
	json_u64(&j, "traps", st->traps);
	if (smd->trapt) {
		const struct trap_stats *ts = trap_stats(smd->trapt);
		uint16_t lids[8];
		unsigned int n = trap_flooders(smd->trapt, txn_now_us(), lids, 8);

		json_obj_begin(&j, "trap_verdicts");
		json_u64(&j, "swept", ts->swept);
		json_u64(&j, "held_back", ts->deferred);
		json_u64(&j, "reported", ts->reported);
		json_u64(&j, "ignored", ts->ignored);
		json_u64(&j, "unknown_lids", ts->unknown);
		json_u64(&j, "from_flooders", ts->flooding);
		json_obj_end(&j);
		json_arr_begin(&j, "trap_flooders");
		for (unsigned int i = 0; i < n && i < 8; i++) {
			const struct fab_port *p = smd->fabric ?
						   fabric_port_by_lid(smd->fabric, lids[i]) : NULL;

			json_obj_begin(&j, NULL);
			json_u64(&j, "lid", lids[i]);
			json_str(&j, "node", p ? p->node->desc : "");
			json_u64(&j, "port", p ? p->num : 0);
			json_hex64(&j, "guid", p ? p->guid : 0);
			json_obj_end(&j);
		}
		json_arr_end(&j);
	}
	json_str(&j, "resweep_pending", smd->resweep ? (smd->resweep_heavy ? "heavy" : "yes") :
		 "no");
	json_u64(&j, "problems", st->problems.total);
	json_arr_begin(&j, "problem_list");
	for (unsigned int i = 0; i < st->problems.n; i++)
		json_str(&j, NULL, printable(st->problems.msg[i], buf, sizeof(buf)));
	json_arr_end(&j);
	json_obj_end(&j);
	out_json(cl, &j);
}

static void cmd_status(struct ctl_client *cl)
{
	if (cl->json) {
		status_json(cl);
		return;
	}
	const struct smd *smd = cl->ctl->smd;
	const struct smd_stats *st = &smd->stats;
	const struct sweep_result *m = st->model, *l = st->last;
	char when[64], buf[LOG_RECORD_LEN], outc[128];
	time_t now = time(NULL);

	out_add(cl, "smd: %s, pid %ld, running since %s\n", PACKAGE_VERSION, (long)getpid(),
		fmt_when(st->started, when, sizeof(when)));
	out_add(cl, "state: %s\n", sm_state_name(smd->sm_state));
	out_add(cl, "sm_guid: 0x%016" PRIx64 "\n",
		smd->port ? mad_port_attr(smd->port)->port_guid : 0);
	out_add(cl, "sm_priority: %u\n", smd->cfg.sm_priority);
	out_add(cl, "sm_lid: %u\n", smd->sm_lid);
	status_progress(cl);
	if (smd->sm_state == SM_STANDBY)
		out_add(cl, "master: SM 0x%016" PRIx64 " (priority %u)\n", smd->master.guid,
			smd->master.priority);
	if (smd->sm_state == SM_STANDBY || smd->sm_state == SM_NOT_ACTIVE) {
		/* What it programmed as master before, if ever, is the master's now */
		out_add(cl, "subnet: the master's\n");
	} else if (m) {
		out_add(cl, "subnet: %s\n", m->up ? "up" : "NOT up");
		out_add(cl, "nodes: %u\n", m->nodes);
		out_add(cl, "switches: %u\n", m->switches);
		out_add(cl, "cas: %u\n", m->cas);
		out_add(cl, "ca_ports: %u\n", m->endports - m->switches);
		out_add(cl, "links: %u\n", m->links);
		out_add(cl, "lids: %u\n", m->lids);
		out_add(cl, "routing: %s, %u of %u VLs\n", m->engine, m->vls, m->vls_budget);
		out_add(cl, "partitions: %zu (%s), %u switch ports enforcing\n",
			smd->parts ? smd->parts->n : 0,
			smd->cfg.partition_config[0] ? smd->cfg.partition_config : "no file",
			m->pkey_enforced);
		status_dups(cl, m);
	} else {
		out_add(cl, "subnet: unknown (no sweep has completed)\n");
	}
	out_add(cl, "sm_key: %s\n",
		smd->cfg.sm_key ? "set" : "none (any host can take the subnet over)");
	for (size_t i = 0; i < smd->npeers; i++)
		if (smd->peers[i].foreign)
			out_add(cl, "sm_foreign: SM 0x%016" PRIx64 " (priority %u, %s) answers "
				"with another SM_Key: not in the election\n", smd->peers[i].guid,
				smd->peers[i].priority, sm_state_name(smd->peers[i].state));
	out_add(cl, "sminfo_refused: %" PRIu64 "\n", smd->sminfo_refused);
	for (unsigned int i = 0; mkey_status_line(smd, i, buf, sizeof(buf)); i++)
		out_add(cl, "%s\n", buf);
	out_add(cl, "sa: %s\n", smd->sa_serving ? "answering" : "not answering");
	if (smd->sa) {
		const struct sa_stats *ss = sa_stats(smd->sa);

		out_add(cl, "sa_requests: %" PRIu64 " received, %" PRIu64 " answered with "
			"records, %" PRIu64 " with an error status (%" PRIu64 " of them refused "
			"at the limits), %" PRIu64 " dropped (malformed, or their port's queue "
			"full)\n", ss->requests, ss->answered, ss->errors, ss->refused,
			ss->dropped + ss->shed);
	}
	if (smd->mcast) {
		const struct mcast_stats *ms = mcast_stats(smd);
		const struct mc_db *db = mcast_db(smd);
		struct mc_forest *fo = mcast_forest(smd);
		size_t members = 0;

		for (const struct mc_group *g = mc_db_next(db, 0); g; g = mc_db_next(db, g->mlid))
			members += g->nmembers;
		out_add(cl, "mcast_groups: %zu (%zu memberships), highest MLID 0x%04x\n",
			mc_db_count(db), members, mc_db_max_mlid(db));
		if (fo)
			out_add(cl, "mcast_trees: %u over %" PRIu64 " switches, %u unsafe, "
				"%zu MFT blocks pending\n", mc_forest_stats(fo)->trees,
				mc_forest_stats(fo)->switches, mc_forest_stats(fo)->unsafe,
				mc_forest_pending(fo));
		out_add(cl, "mcast_changes: %" PRIu64 " groups created, %" PRIu64 " deleted; "
			"MFT blocks %" PRIu64 " read, %" PRIu64 " written, %" PRIu64 " failed\n",
			ms->created, ms->deleted, ms->blocks_read, ms->blocks_written,
			ms->block_errors);
	}
	out_add(cl, "sweeps: %" PRIu64 " heavy, %" PRIu64 " light\n", smd->heavy_sweeps,
		smd->light_sweeps);
	if (st->light) {
		const struct light_result *lr = st->light;

		out_add(cl, "last_light_sweep: %s, %lld s ago, %u switches asked, %s\n",
			fmt_when(st->light_end, when, sizeof(when)),
			(long long)(now - st->light_end), lr->switches,
			light_changed(lr) ? "a change found" : "no change");
	}
	if (l) {
		out_add(cl, "last_sweep: %s, %lld s ago\n",
			fmt_when(st->last_end, when, sizeof(when)),
			(long long)(now - st->last_end));
		out_add(cl, "last_sweep_seconds: %.3f\n", l->seconds);
		out_add(cl, "last_sweep_result: %s\n", sweep_outcome(smd, outc, sizeof(outc)));
		out_add(cl, "last_sweep_smps: %" PRIu64 " sent, %" PRIu64 " timed out, %" PRIu64
			" unanswered\n", l->smps, l->timeouts, l->failed);
	}
	out_add(cl, "smps: %" PRIu64 " sent, %" PRIu64 " timed out, %" PRIu64 " unanswered\n",
		st->smps_sent, st->smps_timed_out, st->smps_lost);
	status_window(cl, smd);
	out_add(cl, "traps: %" PRIu64 "\n", st->traps);
	status_traps(cl);
	out_add(cl, "resweep_pending: %s\n", smd->resweep ? (smd->resweep_heavy ? "heavy" : "yes") :
		"no");
	if (l && !st->last_err) {
		char probs[256];

		problem_counts(l, probs, sizeof(probs));
		if (probs[0])
			out_add(cl, "problem_counts: %s\n", probs);
	}
	out_add(cl, "problems: %u\n", st->problems.total);
	for (unsigned int i = 0; i < st->problems.n; i++)
		out_add(cl, "problem: %s\n", printable(st->problems.msg[i], buf, sizeof(buf)));
	if (st->problems.total > st->problems.n)
		out_add(cl, "problems_not_shown: %u\n", st->problems.total - st->problems.n);
	out_add(cl, "status: %s\nOK\n", health(smd));
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

static void sweep_report_json(struct ctl_client *cl)
{
	const struct smd *smd = cl->ctl->smd;
	const struct smd_stats *st = &smd->stats;
	const struct sweep_result *l = st->last;
	char outc[128];
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
		up = l && !st->last_err && !l->standby && l->up;
		json_str(&j, "status", up ? STATUS_OK : STATUS_DOWN);
		json_str(&j, "kind", "heavy");
		json_u64(&j, "sweep", smd->heavy_sweeps);
		json_str(&j, "result", sweep_outcome(smd, outc, sizeof(outc)));
		if (l && !st->last_err && !l->standby) {
			json_u64(&j, "nodes", l->nodes);
			json_u64(&j, "switches", l->switches);
			json_u64(&j, "cas", l->cas);
			json_u64(&j, "ca_ports", l->endports - l->switches);
			json_u64(&j, "lids", l->lids);
			json_problem_counts(&j, l);
		}
		if (l) {
			json_double(&j, "seconds", l->seconds);
			json_smps(&j, "smps", l->smps, l->timeouts, l->failed);
		}
	}
	json_u64(&j, "problems", st->problems.total);
	json_obj_end(&j);
	out_json(cl, &j);
}

static void sweep_report(struct ctl_client *cl)
{
	const struct smd *smd = cl->ctl->smd;
	const struct smd_stats *st = &smd->stats;
	const struct sweep_result *l = st->last;
	char outc[128], probs[256];

	if (cl->json) {
		sweep_report_json(cl);
		return;
	}
	if (st->light_only && st->light) {
		/* Nothing changed: the subnet is as the last heavy sweep left it */
		out_add(cl, "kind: light, no change found (%u switches asked, %.3f s)\n",
			st->light->switches, st->light->seconds);
		out_add(cl, "sweep: %" PRIu64 "\n", smd->heavy_sweeps);
		out_add(cl, "result: %s\n", smd->last_sweep_down ? "NOT up" : "up");
		out_add(cl, "status: %s\nOK\n", smd->last_sweep_down ? STATUS_DOWN : STATUS_OK);
		return;
	}
	out_add(cl, "kind: heavy\n");
	out_add(cl, "sweep: %" PRIu64 "\n", smd->heavy_sweeps);
	out_add(cl, "result: %s\n", sweep_outcome(smd, outc, sizeof(outc)));
	if (l && !st->last_err && !l->standby) {
		out_add(cl, "nodes: %u (%u switches, %u CAs), %u CA ports, %u LIDs\n", l->nodes,
			l->switches, l->cas, l->endports - l->switches, l->lids);
		problem_counts(l, probs, sizeof(probs));
		if (probs[0])
			out_add(cl, "problem_counts: %s\n", probs);
	}
	if (l)
		out_add(cl, "seconds: %.3f\nsmps: %" PRIu64 " sent, %" PRIu64 " timed out, %"
			PRIu64 " unanswered\n", l->seconds, l->smps, l->timeouts, l->failed);
	out_add(cl, "problems: %u\n", st->problems.total);
	out_add(cl, "status: %s\nOK\n",
		l && !st->last_err && !l->standby && l->up ? STATUS_OK : STATUS_DOWN);
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
				  printable(argv[i], buf, sizeof(buf)));
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

static void __attribute__((format(printf, 2, 3))) emit_line(void *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	out_vadd(ctx, fmt, ap);
	va_end(ap);
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
		json_str(&j, "status", health(smd));
		r = partitions_show(smd, argc == 2 ? argv[1] : NULL, NULL, NULL, &j);
		json_obj_end(&j);
		if (r < 0)
			json_free(&j);
		else
			out_json(cl, &j);
	} else {
		r = partitions_show(smd, argc == 2 ? argv[1] : NULL, emit_line, cl, NULL);
		if (!r)
			out_add(cl, "status: %s\nOK\n", health(smd));
	}
	if (r == -ENOENT)
		out_error(cl, "no partition '%s'", printable(argv[1], buf, sizeof(buf)));
	else if (r < 0)
		out_error(cl, "partitions: %s", strerror(-r));
}

static void cmd_help(struct ctl_client *cl)
{
	out_add(cl, "command: status: the SM, the subnet, the last sweep and its problems\n"
		"command: resweep [--heavy]: sweep now, light (heavy if it finds a change) or "
		"heavy (full re-discovery); answer when it ended\n"
		"command: check-routes: the route verifier's verdict on the current routes\n"
		"command: sm-enable: a NOT-ACTIVE SM (disabled by another) takes part again\n"
		"command: partitions [P_KEY|NAME]: ports per partition, or one's members\n"
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
	else if (!strcmp(argv[0], "help") && argc == 1)
		cmd_help(cl);
	else if (!strcmp(argv[0], "sm-enable") && argc == 1)
		cmd_sm_enable(cl);
	else if (!strcmp(argv[0], "partitions"))
		cmd_partitions(cl, argc, argv);
	else if (!strcmp(argv[0], "status") || !strcmp(argv[0], "check-routes") ||
		 !strcmp(argv[0], "help") || !strcmp(argv[0], "sm-enable"))
		out_error(cl, "%s takes no arguments", argv[0]);
	else
		out_error(cl, "unknown command '%s' (try help)",
			  printable(argv[0], buf, sizeof(buf)));
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
	uint32_t events;

	for (;;) {
		char *nl;

		if (cl->broken || !client_flush(cl)) {
			client_free(cl);
			return;
		}
		if (pending(cl) || cl->waiting || cl->closing)
			break;
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
	/* Read no more requests until this answer is out */
	events = pending(cl) ? EPOLLOUT : cl->waiting || cl->eof ? 0 : EPOLLIN;
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
