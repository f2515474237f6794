// SPDX-License-Identifier: MIT
/* Fabric health in the daemon: judging, logging, isolating, smctl health (health.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db/store.h"
#include "sa/sa.h"
#include "smd/health.h"
#include "smd/perf.h"
#include "smd/smd.h"
#include "smd/status.h"
#include "topo/linkrate.h"
#include "util/ctl_proto.h"
#include "util/json.h"
#include "util/log.h"
#include "util/text.h"

/* Events waiting for the database at most (more are counted and dropped) */
#define HEALTH_EVENTS_QUEUE	100000
/* Trap 129: local link integrity threshold reached (IBA 14.2.5.1) */
#define TRAP_LINK_INTEGRITY	129

/* A link the rules asked out of service, by the port that broke a rule */
struct health_out {
	uint64_t guid;
	uint8_t port;
	time_t since;
	char rule[24];
	char reason[256];
	uint8_t verdict;		/* enum health_iso of the last heavy sweep; HEALTH_ISOS: none yet */
	uint64_t peer_guid;
	uint8_t peer_port;
};

struct health {
	struct health_cfg cfg;
	unsigned int action;		/* CONFIG_HEALTH_* */
	bool isolate_all;		/* switched to isolate: ports already unhealthy go too */
	struct health_out *out;
	size_t nout, ocap;
	struct store_perf_event *ev;	/* waiting for the database */
	size_t nev, evcap;
	struct store_isolated *dbw;
	size_t ndbw, dbwcap;
	uint64_t events_dropped;
	bool db_warned;
	uint64_t became[HEALTH_RULES];	/* ports that broke each rule, since start */
	uint64_t reports;		/* Reports of trap 129 sent */
	uint64_t links_seen_down;
};

static uint64_t now_s(void)
{
	return txn_now_us() / 1000000u;
}

static void cfg_from(struct health *h, const struct smd_config *c)
{
	h->cfg.window_s = c->health_window;
	h->cfg.threshold[HEALTH_SYMBOL_ERRORS] = c->health_symbol_errors;
	h->cfg.threshold[HEALTH_LINK_DOWNS] = c->health_link_downs;
	h->cfg.threshold[HEALTH_RCV_ERRORS] = c->health_rcv_errors;
	h->cfg.degraded = c->health_degraded;
	h->action = c->health_action;
}

static int load_cb(void *ctx, const struct store_isolated *v)
{
	struct health *h = ctx;
	struct health_out *o;

	if (h->nout == h->ocap) {
		size_t cap = h->ocap ? h->ocap * 2 : 16;

		o = realloc(h->out, cap * sizeof(*o));
		if (!o)
			return -ENOMEM;
		h->out = o;
		h->ocap = cap;
	}
	o = &h->out[h->nout++];
	memset(o, 0, sizeof(*o));
	o->guid = v->node_guid;
	o->port = v->port;
	o->since = (time_t)v->since;
	snprintf(o->rule, sizeof(o->rule), "%s", v->rule);
	snprintf(o->reason, sizeof(o->reason), "%s", v->reason);
	o->verdict = HEALTH_ISOS;
	return 0;
}

int health_init(struct smd *smd)
{
	struct health *h = calloc(1, sizeof(*h));
	int r;

	if (!h)
		return -ENOMEM;
	smd->health = h;
	cfg_from(h, &smd->cfg);
	if (!smd->store)
		return 0;
	r = store_foreach_isolated(smd->store, load_cb, h);
	if (r < 0)
		log_warn("health: the isolated links could not be read from the database (%s): "
			 "none is isolated until the rules ask again", store_errmsg(smd->store));
	else if (h->nout)
		log_info("health: %zu link%s to keep out of service (smctl health)", h->nout,
			 h->nout == 1 ? "" : "s");
	return 0;
}

void health_free(struct smd *smd)
{
	struct health *h = smd->health;

	if (!h)
		return;
	free(h->out);
	free(h->ev);
	free(h->dbw);
	free(h);
	smd->health = NULL;
}

void health_reload(struct smd *smd)
{
	struct health *h = smd->health;
	unsigned int was = h->action;

	cfg_from(h, &smd->cfg);
	if (was == CONFIG_HEALTH_ISOLATE && h->action != CONFIG_HEALTH_ISOLATE && h->nout) {
		log_info("health: health_action is report now: %zu link%s back into the routes "
			 "(still recorded; smctl port enable forgets them)", h->nout,
			 h->nout == 1 ? "" : "s");
		smd->health_resweep = true;
	} else if (was != CONFIG_HEALTH_ISOLATE && h->action == CONFIG_HEALTH_ISOLATE) {
		/* Ports unhealthy already: isolated at the next judgement, recorded ones at once */
		h->isolate_all = true;
		if (h->nout)
			smd->health_resweep = true;
	}
}

/* ---- the database, between sweeps ---- */

static void event(struct health *h, time_t t, uint64_t guid, uint8_t port, const char *kind,
		  uint64_t count, uint64_t total, const char *detail)
{
	struct store_perf_event *e;

	if (h->nev == h->evcap) {
		size_t cap = h->evcap ? h->evcap * 2 : 256;

		if (h->evcap >= HEALTH_EVENTS_QUEUE) {
			h->events_dropped++;
			return;
		}
		e = realloc(h->ev, cap * sizeof(*e));
		if (!e) {
			h->events_dropped++;
			return;
		}
		h->ev = e;
		h->evcap = cap;
	}
	e = &h->ev[h->nev++];
	memset(e, 0, sizeof(*e));
	e->time = (int64_t)t;
	e->node_guid = guid;
	e->port = port;
	snprintf(e->kind, sizeof(e->kind), "%s", kind);
	e->count = count;
	e->total = total;
	snprintf(e->detail, sizeof(e->detail), "%s", detail ? detail : "");
}

static void db_isolated(struct health *h, const struct health_out *o, bool present)
{
	struct store_isolated *w;

	if (h->ndbw == h->dbwcap) {
		size_t cap = h->dbwcap ? h->dbwcap * 2 : 16;

		w = realloc(h->dbw, cap * sizeof(*w));
		if (!w)
			return;
		h->dbw = w;
		h->dbwcap = cap;
	}
	w = &h->dbw[h->ndbw++];
	memset(w, 0, sizeof(*w));
	w->node_guid = o->guid;
	w->port = o->port;
	w->since = (int64_t)o->since;
	snprintf(w->rule, sizeof(w->rule), "%s", o->rule);
	snprintf(w->reason, sizeof(w->reason), "%s", o->reason);
	w->present = present;
}

void health_flush(struct smd *smd)
{
	struct health *h = smd->health;
	int r = 0;

	if (!h || smd->sweep)
		return;
	if (!smd->store) {
		h->nev = h->ndbw = 0;
		return;
	}
	if (h->ndbw)
		r = store_isolated_save(smd->store, h->dbw, h->ndbw, (int64_t)time(NULL));
	if (r < 0 && !h->db_warned)
		log_warn("health: isolated links not saved (%s): they may not survive a restart",
			 store_errmsg(smd->store));
	if (r == 0 && h->nev)
		r = store_perf_events_add(smd->store, h->ev, h->nev, STORE_KEEP_PERF_EVENTS);
	if (r < 0 && !h->db_warned) {
		log_warn("health: events not saved in the database (%s); said once", store_errmsg(
			 smd->store));
		h->db_warned = true;
	}
	h->nev = h->ndbw = 0;
}

/* ---- counting ---- */

void health_counted(struct smd *smd, struct perf_port *pp, const struct perf_update *u)
{
	struct health *h = smd->health;
	const struct perf_state *st = &pp->st;
	uint32_t n[HEALTH_COUNTS] = { 0 };
	uint64_t sym = st->delta[PERF_SYMBOL_ERRORS] + st->delta[PERF_LINK_ERROR_RECOVERY];
	time_t t = time(NULL);

	n[HEALTH_N_SYMBOL] = sym > UINT32_MAX ? UINT32_MAX : (uint32_t)sym;
	n[HEALTH_N_LINK_DOWNED] = (uint32_t)(st->delta[PERF_LINK_DOWNED] > UINT32_MAX ? UINT32_MAX :
					     st->delta[PERF_LINK_DOWNED]);
	n[HEALTH_N_RCV] = (uint32_t)(st->delta[PERF_RCV_ERRORS] > UINT32_MAX ? UINT32_MAX :
				     st->delta[PERF_RCV_ERRORS]);
	if (health_window_add(&pp->win, now_s(), h->cfg.window_s, n) < 0)
		log_warn("health: out of memory counting errors");
	for (unsigned int c = 0; c < PERF_COUNTERS; c++)
		if (perf_counters[c].error && st->delta[c])
			event(h, t, pp->guid, pp->port, perf_counters[c].key, st->delta[c],
			      st->total[c], NULL);
	if (u->went_back) {
		char d[160] = "";
		size_t off = 0;

		for (unsigned int c = 0; c < PERF_COUNTERS && off < sizeof(d); c++)
			if (u->went_back & (1u << c))
				off += (size_t)snprintf(d + off, sizeof(d) - off, "%s%s", off ? "," : "",
							perf_counters[c].key);
		event(h, t, pp->guid, pp->port, "counters_reset", 1, 0, d);
	}
}

void health_links_seen_down(struct smd *smd, const uint64_t *guid, const uint8_t *port, size_t n)
{
	struct health *h = smd->health;
	uint32_t c[HEALTH_COUNTS] = { 0 };
	time_t t = time(NULL);

	c[HEALTH_N_LINK_SEEN] = 1;
	for (size_t i = 0; i < n; i++) {
		struct perf_port *pp = perf_port_get(smd, guid[i], port[i], true);

		if (!pp || health_window_add(&pp->win, now_s(), h->cfg.window_s, c) < 0) {
			log_warn("health: out of memory counting a link down");
			continue;
		}
		h->links_seen_down++;
		event(h, t, guid[i], port[i], "link_down_seen", 1, 0, NULL);
	}
}

/* ---- judging ---- */

static const char *port_label(const struct perf_port *pp, char *buf, size_t len)
{
	snprintf(buf, len, "%s port %u (GUID 0x%016" PRIx64 ")",
		 pp->desc[0] ? pp->desc : "(no description)", pp->port, pp->guid);
	return buf;
}

static const struct fab_port *model_port(const struct smd *smd, uint64_t guid, uint8_t port)
{
	const struct fab_node *n = smd->fabric ? fabric_find(smd->fabric, guid) : NULL;

	return n && port >= 1 && port <= n->num_ports ? &n->ports[port] : NULL;
}

bool health_isolated(const struct smd *smd, uint64_t guid, uint8_t port)
{
	const struct fab_port *p = model_port(smd, guid, port);

	return p && p->isolated;
}

/* "4xQDR ... both ends allow 4xQDR (this end: 1x,4x SDR,DDR,QDR; peer: ...)" */
static bool degraded_text(const struct fab_port *p, char *buf, size_t len)
{
	struct link_rate a, b;
	unsigned int w, s;
	char act[16], best[16], aw[32], as[48], bw[32], bs[48], pact[16];

	buf[0] = 0;
	if (!p || !link_degraded(p, &a, &b))
		return false;
	link_rate_best(&a, &b, &w, &s);
	link_rate_text(act, sizeof(act), a.width, a.speed);
	link_rate_text(pact, sizeof(pact), b.width, b.speed);
	link_rate_text(best, sizeof(best), w, s);
	link_widths_text(aw, sizeof(aw), a.widths);
	link_speeds_text(as, sizeof(as), a.speeds);
	link_widths_text(bw, sizeof(bw), b.widths);
	link_speeds_text(bs, sizeof(bs), b.speeds);
	snprintf(buf, len, "%s, both ends allow %s (this end: widths %.20s, speeds %.40s; %.40s "
		 "port %u: %s, widths %.20s, speeds %.40s)", act, best, aw, as,
		 p->peer->node->desc_valid ? p->peer->node->desc : "peer", p->peer->num, pact, bw,
		 bs);
	return true;
}

/* Why rule r is broken at pp: "symbol_errors: 5000 in 600 s (above 100)" */
static void reason_text(const struct health *h, const struct perf_port *pp, unsigned int r,
			char *buf, size_t len)
{
	if (r == HEALTH_DEGRADED)
		snprintf(buf, len, "degraded: %.383s", pp->degraded);
	else
		snprintf(buf, len, "%s: %" PRIu64 " in %u s (above %u; %s)", health_rules[r].name,
			 pp->counted[r], h->cfg.window_s, h->cfg.threshold[r], health_rules[r].what);
}

static struct health_out *out_find(struct health *h, uint64_t guid, uint8_t port)
{
	for (size_t i = 0; i < h->nout; i++)
		if ((h->out[i].guid == guid && h->out[i].port == port) ||
		    (h->out[i].peer_guid == guid && h->out[i].peer_port == port &&
		     h->out[i].peer_guid))
			return &h->out[i];
	return NULL;
}

/*
 * pp broke rule r: ask its link out of service (a switch-to-switch link
 * only). 1: asked; 0: nothing to ask (a CA's link, asked already); -1: the
 * link is not up now (a flap seen down): asked when it is back
 */
static int ask_isolation(struct smd *smd, struct perf_port *pp, unsigned int r)
{
	struct health *h = smd->health;
	const struct fab_port *p = model_port(smd, pp->guid, pp->port);
	struct health_out *o;
	char lbl[160];

	if (!p || !p->peer || !fabric_port_up(p))
		return out_find(h, pp->guid, pp->port) ? 0 : -1;
	if (p->node->type != NODE_TYPE_SWITCH || p->peer->node->type != NODE_TYPE_SWITCH)
		return 0;
	if (out_find(h, pp->guid, pp->port) ||
	    out_find(h, p->peer->node->guid, p->peer->num))
		return 0;
	if (h->nout == h->ocap) {
		size_t cap = h->ocap ? h->ocap * 2 : 16;

		o = realloc(h->out, cap * sizeof(*o));
		if (!o)
			return -1;
		h->out = o;
		h->ocap = cap;
	}
	o = &h->out[h->nout++];
	memset(o, 0, sizeof(*o));
	o->guid = pp->guid;
	o->port = pp->port;
	o->since = time(NULL);
	o->verdict = HEALTH_ISOS;
	o->peer_guid = p->peer->node->guid;
	o->peer_port = p->peer->num;
	snprintf(o->rule, sizeof(o->rule), "%s", health_rules[r].name);
	reason_text(h, pp, r, o->reason, sizeof(o->reason));
	db_isolated(h, o, true);
	event(h, o->since, o->guid, o->port, "isolation_asked", 1, 0, o->reason);
	log_notice("health: taking the link of %s out of service: %s",
		   port_label(pp, lbl, sizeof(lbl)), o->reason);
	return 1;
}

void health_judge_all(struct smd *smd, const char *why)
{
	struct health *h = smd->health;
	bool isolate = h->action == CONFIG_HEALTH_ISOLATE, sweep = false;
	uint64_t now = now_s();
	time_t wall = time(NULL);
	size_t n = perf_port_count(smd);
	char lbl[160], rs[480];

	for (size_t i = 0; i < n; i++) {
		struct perf_port *pp = perf_port_at(smd, i);
		const struct fab_port *p = model_port(smd, pp->guid, pp->port);
		uint64_t sums[HEALTH_COUNTS];
		uint32_t broken = 0, fresh, healed;
		bool degraded;

		health_window_sums(&pp->win, now, h->cfg.window_s, sums);
		degraded = degraded_text(p, pp->degraded, sizeof(pp->degraded));
		for (unsigned int r = 0; r < HEALTH_RULES; r++)
			pp->counted[r] = r == HEALTH_DEGRADED ? degraded :
					 health_rule_count((enum health_rule)r, sums);
		/* A port out of the model is judged when it comes back */
		if (p)
			broken = health_judge(&h->cfg, sums, degraded);
		fresh = broken & ~pp->broken;
		healed = pp->broken & ~broken;
		for (unsigned int r = 0; r < HEALTH_RULES; r++) {
			uint32_t bit = 1u << r;

			if (healed & bit) {
				pp->since[r] = 0;
				pp->told &= ~bit;
				log_info("health: %s keeps %s again", port_label(pp, lbl, sizeof(lbl)),
					 health_rules[r].name);
			}
			if (!(fresh & bit))
				continue;
			pp->since[r] = wall;
			h->became[r]++;
			reason_text(h, pp, r, rs, sizeof(rs));
			event(h, wall, pp->guid, pp->port, "unhealthy", pp->counted[r], 0, rs);
			if (!(pp->told & bit)) {
				log_warn("health: %s is unhealthy (%s): %s",
					 port_label(pp, lbl, sizeof(lbl)), why, rs);
				pp->told |= bit;
				/* The one IBA trap for what these rules measure: link integrity */
				if ((r == HEALTH_SYMBOL_ERRORS || r == HEALTH_RCV_ERRORS) && smd->sa)
					h->reports += sa_report_port_trap(smd->sa, TRAP_LINK_INTEGRITY,
									  pp->guid, pp->port);
			}
		}
		pp->broken = broken;
		if (!broken)
			pp->iso_pending = false;
		/*
		 * The first rule broken anew asks the link out (isolate_all: any
		 * broken); a link down when it broke one (it flaps), once it is up
		 */
		if (isolate && (fresh || pp->iso_pending || (h->isolate_all && broken))) {
			uint32_t m = fresh ? fresh : broken;
			int a = ask_isolation(smd, pp, (unsigned int)__builtin_ctz(m));

			pp->iso_pending = a < 0;
			sweep |= a > 0;
		}
	}
	if (isolate)
		h->isolate_all = false;
	if (sweep)
		smd->health_resweep = true;
}

/* ---- a heavy sweep's isolation ---- */

struct health_isolation *health_isolations_wanted(struct smd *smd, size_t *n)
{
	struct health *h = smd->health;
	struct health_isolation *v;

	*n = 0;
	if (!h || h->action != CONFIG_HEALTH_ISOLATE || !h->nout)
		return NULL;
	v = calloc(h->nout, sizeof(*v));
	if (!v)
		return NULL;
	/* Oldest first: when two cannot both go, the first asked goes */
	for (size_t i = 0; i < h->nout; i++) {
		v[i].guid = h->out[i].guid;
		v[i].port = h->out[i].port;
	}
	*n = h->nout;
	return v;
}

void health_isolation_verdicts(struct smd *smd, const struct health_isolation *v, size_t n)
{
	struct health *h = smd->health;
	struct perf_stats ps;
	char peer[96];

	for (size_t i = 0; i < n; i++) {
		struct health_out *o = NULL;
		struct perf_port *pp;
		char lbl[160];

		for (size_t k = 0; k < h->nout && !o; k++)
			if (h->out[k].guid == v[i].guid && h->out[k].port == v[i].port)
				o = &h->out[k];
		/* Enabled meanwhile (smctl port enable during the sweep) */
		if (!o)
			continue;
		if (v[i].peer_guid) {
			o->peer_guid = v[i].peer_guid;
			o->peer_port = v[i].peer_port;
		}
		if (o->verdict == v[i].verdict)
			continue;
		o->verdict = v[i].verdict;
		pp = perf_port_get(smd, o->guid, o->port, false);
		if (pp)
			port_label(pp, lbl, sizeof(lbl));
		else
			snprintf(lbl, sizeof(lbl), "port %u of 0x%016" PRIx64, o->port, o->guid);
		snprintf(peer, sizeof(peer), "0x%016" PRIx64 " port %u", o->peer_guid, o->peer_port);
		switch (o->verdict) {
		case HEALTH_ISO_APPLIED:
			perf_stats_get(smd, &ps);
			log_notice("health: the link of %s to %s is out of service: no route crosses "
				   "it (%s; after counter sweep %" PRIu64 ")", lbl, peer, o->reason,
				   ps.sweeps);
			break;
		case HEALTH_ISO_SPLIT:
			log_warn("health: the link of %s stays in use: the fabric would split "
				 "without it (%s)", lbl, o->reason);
			break;
		case HEALTH_ISO_DEADLOCK:
			log_warn("health: the link of %s stays in use: no deadlock-free routes "
				 "without it (%s)", lbl, o->reason);
			break;
		case HEALTH_ISO_CA_LINK:
			log_warn("health: the link of %s stays in use: a CA's only way in (%s)", lbl,
				 o->reason);
			break;
		default:
			log_info("health: the link of %s is not up: nothing to take out of service",
				 lbl);
			break;
		}
		event(h, time(NULL), o->guid, o->port, health_iso_name(o->verdict), 1, 0, NULL);
	}
}

/* ---- smctl port enable ---- */

int health_port_enable(struct smd *smd, uint64_t guid, uint8_t port, char *msg, size_t len)
{
	struct health *h = smd->health;
	const struct fab_port *p = model_port(smd, guid, port);
	uint64_t ends[2][2] = { { guid, port }, { 0, 0 } };
	unsigned int removed = 0;
	size_t o = 0;

	if (p && p->peer) {
		ends[1][0] = p->peer->node->guid;
		ends[1][1] = p->peer->num;
	}
	for (size_t i = 0; i < h->nout; i++) {
		struct health_out *x = &h->out[i];
		bool match = false;

		for (unsigned int e = 0; e < 2; e++)
			match |= ends[e][0] && ((x->guid == ends[e][0] && x->port == ends[e][1]) ||
						(x->peer_guid == ends[e][0] &&
						 x->peer_port == ends[e][1]));
		if (match) {
			db_isolated(h, x, false);
			event(h, time(NULL), x->guid, x->port, "enabled", 1, 0, NULL);
			removed++;
			continue;
		}
		h->out[o++] = *x;
	}
	h->nout = o;
	if (!p && !removed) {
		snprintf(msg, len, "no port %u on a node with GUID 0x%016" PRIx64 " in the model",
			 port, guid);
		return -ENOENT;
	}
	/* Both ends start counting afresh; a rule still broken (degraded) isolates nothing anew */
	for (unsigned int e = 0; e < 2; e++) {
		struct perf_port *pp = ends[e][0] ? perf_port_get(smd, ends[e][0],
								   (uint8_t)ends[e][1], false) : NULL;

		if (!pp)
			continue;
		health_window_clear(&pp->win);
		pp->broken &= 1u << HEALTH_DEGRADED;
		pp->told &= 1u << HEALTH_DEGRADED;
		pp->iso_pending = false;
		for (unsigned int r = 0; r < HEALTH_RULES; r++)
			if (!(pp->broken & (1u << r)))
				pp->since[r] = 0;
	}
	if (removed)
		smd->health_resweep = true;
	log_notice("health: port %u of 0x%016" PRIx64 " enabled by smctl: %s", port, guid,
		   removed ? "its link goes back into the routes" : "its window cleared (it was "
		   "not out of service)");
	snprintf(msg, len, "%s", removed ? "the link is back in service: the next heavy sweep "
		 "routes over it" : "not out of service; its window is cleared");
	health_flush(smd);
	return 0;
}

/* ---- smctl health, status ---- */

static const char *fmt_when(time_t t, char *buf, size_t len)
{
	struct tm tm;

	if (!t || !localtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "%lld", (long long)t);
	return buf;
}

void health_status_fill(const struct smd *smd, struct status_health *s)
{
	const struct health *h = smd->health;
	struct perf_stats ps;
	size_t n = perf_port_count(smd);

	memset(s, 0, sizeof(*s));
	if (!h)
		return;
	perf_stats_get(smd, &ps);
	s->perf_enabled = ps.enabled;
	s->perf_running = ps.running;
	s->perf_paused = ps.paused;
	s->perf_interval = ps.interval;
	s->perf_sweeps = ps.sweeps;
	s->perf_last_seconds = ps.last_seconds;
	s->perf_last_end = ps.last_end;
	s->perf_last_ports = ps.last_ports;
	s->perf_last_read = ps.last_read;
	s->perf_last_unanswered = ps.last_unanswered;
	s->perf_last_gmps = ps.last_gmps;
	s->gmps_sent = ps.gmps_sent;
	s->gmps_timed_out = ps.gmps_timed_out;
	s->gmps_unanswered = ps.gmps_unanswered;
	s->bad_answers = ps.bad_answers;
	s->bad_status = ps.bad_status;
	s->clears = ps.clears;
	s->resets = ps.resets;
	s->saturations = ps.saturations;
	s->action = h->action == CONFIG_HEALTH_ISOLATE ? "isolate" : "report";
	s->window = h->cfg.window_s;
	for (unsigned int r = 0; r < HEALTH_RULES; r++) {
		s->threshold[r] = h->cfg.threshold[r];
		s->became[r] = h->became[r];
	}
	s->degraded_rule = h->cfg.degraded;
	for (size_t i = 0; i < n; i++) {
		const struct perf_port *pp = perf_port_at(smd, i);

		if (!pp->broken)
			continue;
		s->unhealthy++;
		for (unsigned int r = 0; r < HEALTH_RULES; r++)
			s->broken[r] += !!(pp->broken & (1u << r));
	}
	for (size_t i = 0; i < h->nout; i++) {
		if (health_isolated(smd, h->out[i].guid, h->out[i].port))
			s->isolated++;
		else
			s->kept++;
	}
	s->reports = h->reports;
	s->links_seen_down = h->links_seen_down;
}

/* One port of smctl health: unhealthy now, or asked out of service */
static void show_port(const struct smd *smd, const struct perf_port *pp,
		      const struct health_out *o, uint64_t guid, uint8_t port,
		      void (*emit)(void *ctx, const char *fmt, ...), void *ctx, struct json *j)
{
	const struct health *h = smd->health;
	bool isolated = health_isolated(smd, guid, port);
	char lbl[160], when[64], rs[480], desc[SMP_DATA_SIZE * 4 + 1];

	if (j) {
		json_obj_begin(j, NULL);
		json_hex64(j, "node_guid", guid);
		json_u64(j, "port", port);
		json_str(j, "node_desc", pp ? pp->desc : "");
		json_bool(j, "healthy", !pp || !pp->broken);
		json_arr_begin(j, "rules");
		for (unsigned int r = 0; pp && r < HEALTH_RULES; r++) {
			if (!(pp->broken & (1u << r)))
				continue;
			json_obj_begin(j, NULL);
			json_str(j, "rule", health_rules[r].name);
			json_u64(j, "count", pp->counted[r]);
			if (health_rules[r].counted)
				json_u64(j, "threshold", h->cfg.threshold[r]);
			json_i64(j, "since", (int64_t)pp->since[r]);
			reason_text(h, pp, r, rs, sizeof(rs));
			json_str(j, "reason", rs);
			json_obj_end(j);
		}
		json_arr_end(j);
		json_bool(j, "isolated", isolated);
		if (o) {
			json_obj_begin(j, "isolation");
			json_str(j, "verdict", o->verdict < HEALTH_ISOS ?
				 health_iso_name(o->verdict) : "pending");
			json_bool(j, "applied", isolated);
			json_i64(j, "since", (int64_t)o->since);
			json_str(j, "rule", o->rule);
			json_str(j, "reason", o->reason);
			if (o->peer_guid) {
				json_hex64(j, "peer_guid", o->peer_guid);
				json_u64(j, "peer_port", o->peer_port);
			}
			json_obj_end(j);
		} else {
			json_null(j, "isolation");
		}
		if (pp && pp->st.known) {
			json_obj_begin(j, "counters");
			for (unsigned int c = 0; c < PERF_COUNTERS; c++)
				json_u64(j, perf_counters[c].key, pp->st.total[c]);
			json_obj_end(j);
			json_i64(j, "last_read", (int64_t)pp->last_read);
		} else {
			json_null(j, "counters");
		}
		json_obj_end(j);
		return;
	}
	if (pp)
		snprintf(lbl, sizeof(lbl), "%s port %u (GUID 0x%016" PRIx64 ")",
			 text_printable(pp->desc[0] ? pp->desc : "(no description)", desc,
					sizeof(desc)), port, guid);
	else
		snprintf(lbl, sizeof(lbl), "port %u (GUID 0x%016" PRIx64 ")", port, guid);
	emit(ctx, "port: %s: %s%s\n", lbl, pp && pp->broken ? "unhealthy" : "healthy",
	     isolated ? ", out of service (isolated)" : "");
	for (unsigned int r = 0; pp && r < HEALTH_RULES; r++) {
		if (!(pp->broken & (1u << r)))
			continue;
		reason_text(h, pp, r, rs, sizeof(rs));
		emit(ctx, "  rule: %s, since %s\n", rs, fmt_when(pp->since[r], when, sizeof(when)));
	}
	if (o) {
		const char *v = o->verdict < HEALTH_ISOS ? health_iso_name(o->verdict) :
				"pending (the next heavy sweep decides)";

		if (h->action != CONFIG_HEALTH_ISOLATE)
			v = "recorded, not applied (health_action = report)";
		emit(ctx, "  isolation: %s, asked %s for %s", v, fmt_when(o->since, when,
		     sizeof(when)), o->reason);
		if (o->peer_guid)
			emit(ctx, "; link to 0x%016" PRIx64 " port %u", o->peer_guid, o->peer_port);
		emit(ctx, "\n");
	}
	if (pp && pp->st.known) {
		const uint64_t *t = pp->st.total;

		emit(ctx, "  counters: symbol_errors %" PRIu64 ", link_error_recovery %" PRIu64
		     ", link_downed %" PRIu64 ", rcv_errors %" PRIu64 ", xmit_discards %" PRIu64
		     ", xmit_wait %" PRIu64 ", read %s\n", t[PERF_SYMBOL_ERRORS],
		     t[PERF_LINK_ERROR_RECOVERY], t[PERF_LINK_DOWNED], t[PERF_RCV_ERRORS],
		     t[PERF_XMIT_DISCARDS], t[PERF_XMIT_WAIT],
		     fmt_when(pp->last_read, when, sizeof(when)));
	}
}

const char *health_show(const struct smd *smd, void (*emit)(void *ctx, const char *fmt, ...),
			void *ctx, struct json *j)
{
	const struct health *h = smd->health;
	struct status_health s;
	size_t n = perf_port_count(smd);
	const char *word;
	char when[64];

	health_status_fill(smd, &s);
	word = s.unhealthy || s.isolated || s.kept ? CONTROL_STATUS_PROBLEMS : CONTROL_STATUS_OK;
	if (j) {
		json_str(j, "status", word);
		json_str(j, "action", s.action);
		json_u64(j, "window", s.window);
		json_obj_begin(j, "thresholds");
		for (unsigned int r = 0; r < HEALTH_RULES; r++)
			if (health_rules[r].counted)
				json_u64(j, health_rules[r].name, s.threshold[r]);
		json_obj_end(j);
		json_bool(j, "degraded_rule", s.degraded_rule);
		json_obj_begin(j, "counters");
		json_bool(j, "enabled", s.perf_enabled);
		json_u64(j, "interval", s.perf_interval);
		json_u64(j, "sweeps", s.perf_sweeps);
		json_double(j, "last_seconds", s.perf_last_seconds);
		json_i64(j, "last_end", (int64_t)s.perf_last_end);
		json_u64(j, "ports", s.perf_last_ports);
		json_u64(j, "unanswered", s.perf_last_unanswered);
		json_obj_end(j);
		json_u64(j, "unhealthy", s.unhealthy);
		json_u64(j, "isolated", s.isolated);
		json_u64(j, "kept", s.kept);
		json_arr_begin(j, "ports");
	} else {
		emit(ctx, "action: %s, window %u s, thresholds: symbol_errors %u, link_downs %u, "
		     "rcv_errors %u (0: off), degraded %s\n", s.action, s.window,
		     s.threshold[HEALTH_SYMBOL_ERRORS], s.threshold[HEALTH_LINK_DOWNS],
		     s.threshold[HEALTH_RCV_ERRORS], s.degraded_rule ? "on" : "off");
		if (!s.perf_enabled)
			emit(ctx, "counters: not read (perf_interval = 0, or no PMA agent)\n");
		else if (!s.perf_sweeps)
			emit(ctx, "counters: every %u s, none read yet\n", s.perf_interval);
		else
			emit(ctx, "counters: every %u s, last sweep %s: %u ports, %u did not answer, "
			     "%.3f s\n", s.perf_interval, fmt_when(s.perf_last_end, when,
			     sizeof(when)), s.perf_last_ports, s.perf_last_unanswered,
			     s.perf_last_seconds);
		emit(ctx, "unhealthy: %u ports; out of service: %u links; kept in use: %u\n",
		     s.unhealthy, s.isolated, s.kept);
	}
	/* Every unhealthy port, with the isolation of its link (asked at either end) */
	for (size_t i = 0; i < n; i++) {
		const struct perf_port *pp = perf_port_at(smd, i);

		if (!pp->broken)
			continue;
		show_port(smd, pp, out_find((struct health *)h, pp->guid, pp->port), pp->guid,
			  pp->port, emit, ctx, j);
	}
	/* Links asked out whose ends are healthy now (or not read) */
	for (size_t k = 0; k < h->nout; k++) {
		const struct health_out *o = &h->out[k];
		const struct perf_port *pp = perf_port_get((struct smd *)smd, o->guid, o->port,
							   false);
		const struct perf_port *pq = o->peer_guid ?
			perf_port_get((struct smd *)smd, o->peer_guid, o->peer_port, false) : NULL;

		if ((pp && pp->broken) || (pq && pq->broken))
			continue;
		show_port(smd, pp, o, o->guid, o->port, emit, ctx, j);
	}
	if (j)
		json_arr_end(j);
	else
		emit(ctx, "status: %s\n", word);
	return word;
}
