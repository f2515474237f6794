// SPDX-License-Identifier: MIT
/*
 * The performance manager (perf.h): counter sweeps over the model in
 * force, through the GMP layer, paused while a heavy sweep runs.
 *
 * A counter sweep: the nodes whose PMA capabilities are not known yet are
 * asked ClassPortInfo first (once; again when a node comes back into the
 * model), then every cabled port gets PortCounters, and
 * PortCountersExtended where the node has it (IsExtendedWidthSupported),
 * both answers make one reading (topo/perf.h), and a counter at half its
 * range gets a Set that clears it. Requests are fed to the GMP layer a
 * window at a time from a list of targets made when the sweep starts
 * (LIDs and port numbers copied: a heavy sweep may swap the model while
 * the counter sweep runs).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mad/gmp.h"
#include "mad/pma.h"
#include "smd/health.h"
#include "smd/perf.h"
#include "smd/smd.h"
#include "util/log.h"

/* GMPs in flight at most; each try's time; tries after the first */
#define PERF_WINDOW		64
#define PERF_TIMEOUT_MS		500
#define PERF_RETRIES		1
/* A port out of the model this long (or the health window, when longer) is forgotten */
#define PERF_FORGET_US		(3600ull * 1000000)

enum node_caps { CAPS_UNKNOWN, CAPS_ASKING, CAPS_KNOWN };

/* What smd knows of a node's PMA */
struct perf_node {
	uint64_t guid;
	uint16_t cap_mask;		/* ClassPortInfo.CapabilityMask */
	uint8_t state;			/* enum node_caps */
	bool present;			/* in the last counter sweep's model */
	uint16_t lid;			/* where this sweep asks it */
};

/* One port of the counter sweep running */
struct perf_target {
	struct perf *pm;
	struct perf_port *pp;
	struct perf_node *node;
	uint16_t lid;
	uint8_t port;
	uint8_t pending;		/* answers awaited: counters, extended, a clear */
	bool got_pc, got_ext, failed;
	uint32_t clearing;		/* counters a Set clears */
	struct pma_port_counters pc;
	struct pma_port_counters_ext pce;
};

struct perf {
	struct smd *smd;
	struct gmp_txn *gmp;
	/* Ports, in the order first seen; an index by (GUID, port) */
	struct perf_port **ports;
	size_t nports, cap;
	uint32_t *ix;			/* open addressing, UINT32_MAX: empty */
	size_t ix_size;
	struct perf_node **nodes;
	size_t nnodes, ncap;
	uint32_t *nix;
	size_t nix_size;
	/* The counter sweep running */
	bool running;
	bool caps_phase;		/* asking ClassPortInfo before the counters */
	struct perf_target *t;
	size_t nt, next;		/* targets, the next to ask */
	struct perf_node **ask;		/* nodes to ask ClassPortInfo */
	size_t nask, next_ask;
	unsigned int pending;		/* requests of this sweep not answered */
	uint64_t t0, sent0;
	unsigned int read, unanswered;
	/* Figures */
	struct perf_stats st;
	uint64_t bad_answers;
};

/* ---- the tables ---- */

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= UINT64_C(0xff51afd7ed558ccd);
	x ^= x >> 33;
	x *= UINT64_C(0xc4ceb9fe1a85ec53);
	return x ^ (x >> 33);
}

static uint64_t port_key(uint64_t guid, uint8_t port)
{
	return mix(guid ^ ((uint64_t)port << 56 | port));
}

static int ix_grow(struct perf *pm)
{
	size_t size = pm->ix_size ? pm->ix_size * 2 : 1024;
	uint32_t *ix = malloc(size * sizeof(*ix));

	if (!ix)
		return -ENOMEM;
	memset(ix, 0xff, size * sizeof(*ix));
	for (size_t i = 0; i < pm->nports; i++) {
		size_t h = port_key(pm->ports[i]->guid, pm->ports[i]->port) & (size - 1);

		while (ix[h] != UINT32_MAX)
			h = (h + 1) & (size - 1);
		ix[h] = (uint32_t)i;
	}
	free(pm->ix);
	pm->ix = ix;
	pm->ix_size = size;
	return 0;
}

struct perf_port *perf_port_get(struct smd *smd, uint64_t guid, uint8_t port, bool create)
{
	struct perf *pm = smd->perf;
	struct perf_port *pp;
	size_t h;

	if (!pm)
		return NULL;
	if (pm->ix_size) {
		for (h = port_key(guid, port) & (pm->ix_size - 1); pm->ix[h] != UINT32_MAX;
		     h = (h + 1) & (pm->ix_size - 1)) {
			pp = pm->ports[pm->ix[h]];
			if (pp->guid == guid && pp->port == port)
				return pp;
		}
	}
	if (!create)
		return NULL;
	if ((pm->nports + 1) * 2 > pm->ix_size && ix_grow(pm) < 0)
		return NULL;
	if (pm->nports == pm->cap) {
		size_t cap = pm->cap ? pm->cap * 2 : 256;
		struct perf_port **p = realloc(pm->ports, cap * sizeof(*p));

		if (!p)
			return NULL;
		pm->ports = p;
		pm->cap = cap;
	}
	pp = calloc(1, sizeof(*pp));
	if (!pp)
		return NULL;
	pp->guid = guid;
	pp->port = port;
	pm->ports[pm->nports] = pp;
	for (h = port_key(guid, port) & (pm->ix_size - 1); pm->ix[h] != UINT32_MAX;
	     h = (h + 1) & (pm->ix_size - 1))
		;
	pm->ix[h] = (uint32_t)pm->nports++;
	return pp;
}

size_t perf_port_count(const struct smd *smd)
{
	return smd->perf ? smd->perf->nports : 0;
}

struct perf_port *perf_port_at(const struct smd *smd, size_t i)
{
	return smd->perf && i < smd->perf->nports ? smd->perf->ports[i] : NULL;
}

static struct perf_node *node_get(struct perf *pm, uint64_t guid)
{
	struct perf_node *n;
	size_t h;

	if ((pm->nnodes + 1) * 2 > pm->nix_size) {
		size_t size = pm->nix_size ? pm->nix_size * 2 : 256;
		uint32_t *ix = malloc(size * sizeof(*ix));

		if (!ix)
			return NULL;
		memset(ix, 0xff, size * sizeof(*ix));
		for (size_t i = 0; i < pm->nnodes; i++) {
			h = mix(pm->nodes[i]->guid) & (size - 1);
			while (ix[h] != UINT32_MAX)
				h = (h + 1) & (size - 1);
			ix[h] = (uint32_t)i;
		}
		free(pm->nix);
		pm->nix = ix;
		pm->nix_size = size;
	}
	for (h = mix(guid) & (pm->nix_size - 1); pm->nix[h] != UINT32_MAX;
	     h = (h + 1) & (pm->nix_size - 1))
		if (pm->nodes[pm->nix[h]]->guid == guid)
			return pm->nodes[pm->nix[h]];
	if (pm->nnodes == pm->ncap) {
		size_t cap = pm->ncap ? pm->ncap * 2 : 64;
		struct perf_node **p = realloc(pm->nodes, cap * sizeof(*p));

		if (!p)
			return NULL;
		pm->nodes = p;
		pm->ncap = cap;
	}
	n = calloc(1, sizeof(*n));
	if (!n)
		return NULL;
	n->guid = guid;
	pm->nodes[pm->nnodes] = n;
	pm->nix[h] = (uint32_t)pm->nnodes++;
	return n;
}

/* Ports long gone leave the table (and their windows go) */
static void forget_gone(struct perf *pm, uint64_t now)
{
	uint64_t keep = (uint64_t)pm->smd->cfg.health_window * 1000000u;
	size_t o = 0;

	if (keep < PERF_FORGET_US)
		keep = PERF_FORGET_US;
	for (size_t i = 0; i < pm->nports; i++) {
		struct perf_port *pp = pm->ports[i];

		if (pp->gone_us && now - pp->gone_us > keep) {
			health_window_clear(&pp->win);
			free(pp);
			continue;
		}
		pm->ports[o++] = pp;
	}
	if (o == pm->nports)
		return;
	pm->nports = o;
	free(pm->ix);
	pm->ix = NULL;
	pm->ix_size = 0;
	if (ix_grow(pm) < 0)
		log_warn("performance manager: out of memory");
}

/* ---- the transport ---- */

static int gmp_send(void *ctx, const uint8_t mad[MAD_SIZE], uint16_t dlid, uint32_t qpn,
		    int timeout_ms)
{
	struct smd *smd = ctx;
	struct mad_addr to = mad_addr_lid(dlid, qpn);

	return smd_send(smd, MAD_AGENT_PERF, mad, MAD_SIZE, &to, timeout_ms);
}

static const struct gmp_ops perf_gmp_ops = { .send = gmp_send };

int perf_init_ops(struct smd *smd, const struct gmp_ops *ops, void *ctx, unsigned int timeout_ms)
{
	struct gmp_cfg cfg = { .window = PERF_WINDOW, .timeout_ms = timeout_ms,
			       .retries = PERF_RETRIES };
	struct perf *pm;

	pm = calloc(1, sizeof(*pm));
	if (!pm)
		return -ENOMEM;
	pm->smd = smd;
	smd->perf = pm;
	return ops ? gmp_new(ops, ctx, &cfg, &pm->gmp) : 0;
}

int perf_init(struct smd *smd)
{
	int r, agent = mad_port_agent(smd->port, MAD_AGENT_PERF);

	if (agent < 0) {
		log_warn("performance manager: the kernel refused an agent for class 0x04 (%s): "
			 "no port counters, no counted health rules", strerror(-agent));
		return perf_init_ops(smd, NULL, NULL, 0);
	}
	r = perf_init_ops(smd, &perf_gmp_ops, smd, PERF_TIMEOUT_MS);
	if (r < 0)
		return r;
	txn_set_class_handler(smd->txn, MAD_CLASS_PERF, perf_receive, smd);
	return 0;
}

void perf_free(struct smd *smd)
{
	struct perf *pm = smd->perf;

	if (!pm)
		return;
	if (pm->gmp)
		gmp_cancel_all(pm->gmp);
	gmp_free(pm->gmp);
	for (size_t i = 0; i < pm->nports; i++) {
		health_window_clear(&pm->ports[i]->win);
		free(pm->ports[i]);
	}
	for (size_t i = 0; i < pm->nnodes; i++)
		free(pm->nodes[i]);
	free(pm->ports);
	free(pm->ix);
	free(pm->nodes);
	free(pm->nix);
	free(pm->t);
	free(pm->ask);
	free(pm);
	smd->perf = NULL;
}

void perf_receive(void *arg, const uint8_t *mad, size_t len, int send_status)
{
	struct smd *smd = arg;

	if (smd->perf && smd->perf->gmp)
		gmp_receive(smd->perf->gmp, mad, len, send_status);
}

/* ---- a counter sweep ---- */

static const char *port_name(const struct perf_port *pp, char *buf, size_t len)
{
	snprintf(buf, len, "%s port %u (GUID 0x%016" PRIx64 ")",
		 pp->desc[0] ? pp->desc : "(no description)", pp->port, pp->guid);
	return buf;
}

static void request_done(struct perf *pm)
{
	if (pm->pending)
		pm->pending--;
}

/* Both answers of a port are in: one reading, the window, what to clear */
static void target_read(struct perf_target *t)
{
	struct perf *pm = t->pm;
	struct perf_port *pp = t->pp;
	bool xmit_wait = t->node->cap_mask & PMA_CAP_XMIT_WAIT;
	struct perf_reading r;
	struct perf_update u;

	perf_reading_make(&t->pc, t->got_ext ? &t->pce : NULL, xmit_wait, &r);
	perf_update(&pp->st, &r, &u);
	pp->answered = true;
	pp->last_read = time(NULL);
	pm->read++;
	if (u.went_back)
		pm->st.resets++;
	pm->st.saturations += (uint64_t)__builtin_popcount(u.saturated);
	health_counted(pm->smd, pp, &u);
	t->clearing = u.clear;
}

static void clear_cb(void *arg, int status, const uint8_t *req, const uint8_t *resp)
{
	struct perf_target *t = arg;
	struct perf *pm = t->pm;
	struct pma_port_counters pc;
	struct perf_reading r;
	struct pma_mad m;
	char lbl[160];

	(void)req;
	request_done(pm);
	if (status == -ECANCELED)
		return;
	if (status == 0 && pma_mad_decode(resp, MAD_SIZE, &m) == 0) {
		pma_pc_decode(m.data, &pc);
		if (pc.port_select == t->port) {
			perf_reading_make(&pc, NULL, t->node->cap_mask & PMA_CAP_XMIT_WAIT, &r);
			perf_cleared(&t->pp->st, t->clearing, &r);
			pm->st.clears++;
			return;
		}
		pm->bad_answers++;
	}
	log_debug("performance manager: %s: counters not cleared (%s)",
		  port_name(t->pp, lbl, sizeof(lbl)), status ? strerror(-status) : "bad answer");
}

/* PortCounters Set: CounterSelect names the counters to clear, their values 0 (IBA 16.1.3.5) */
static void send_clear(struct perf_target *t)
{
	struct pma_port_counters pc = { .port_select = t->port };
	uint8_t buf[MAD_SIZE];
	struct pma_mad m;

	perf_clear_select(t->clearing, &pc.counter_select, &pc.counter_select2);
	pma_mad_init(&m, MAD_METHOD_SET, PMA_ATTR_PORT_COUNTERS, 0);
	pma_pc_encode(&pc, m.data);
	if (pma_mad_encode(&m, buf) < 0 ||
	    gmp_submit(t->pm->gmp, buf, t->lid, 1, clear_cb, t) < 0)
		return;
	t->pm->pending++;
}

static void counters_cb(void *arg, int status, const uint8_t *req, const uint8_t *resp)
{
	struct perf_target *t = arg;
	struct perf *pm = t->pm;
	struct mad_summary q;
	uint16_t attr;
	struct pma_mad m;
	bool ok = false;

	mad_summarize(req, MAD_SIZE, &q);
	attr = q.attr_id;
	request_done(pm);
	if (status == -ECANCELED)
		return;
	if (status == 0 && pma_mad_decode(resp, MAD_SIZE, &m) == 0) {
		/* The port asked for, or the answer is someone else's */
		if (attr == PMA_ATTR_PORT_COUNTERS) {
			pma_pc_decode(m.data, &t->pc);
			ok = t->pc.port_select == t->port;
			t->got_pc = ok;
		} else {
			pma_pce_decode(m.data, &t->pce);
			ok = t->pce.port_select == t->port;
			t->got_ext = ok;
		}
		if (!ok)
			pm->bad_answers++;
	} else if (status == -EREMOTEIO) {
		/* PortCountersExtended refused: the node is asked its capabilities again */
		if (attr == PMA_ATTR_PORT_COUNTERS_EXT)
			t->node->state = CAPS_UNKNOWN;
	} else if (status == 0) {
		pm->bad_answers++;
	}
	/* Extended counters that fail cost the data counters only; PortCounters is the reading */
	if (!ok && attr == PMA_ATTR_PORT_COUNTERS)
		t->failed = true;
	if (--t->pending)
		return;
	if (t->failed) {
		t->pp->unanswered++;
		pm->unanswered++;
		return;
	}
	target_read(t);
	if (t->clearing)
		send_clear(t);
}

static int submit_get(struct perf_target *t, uint16_t attr)
{
	struct pma_port_counters pc = { .port_select = t->port };
	struct pma_port_counters_ext pce = { .port_select = t->port };
	uint8_t buf[MAD_SIZE];
	struct pma_mad m;
	int r;

	pma_mad_init(&m, MAD_METHOD_GET, attr, 0);
	if (attr == PMA_ATTR_PORT_COUNTERS)
		pma_pc_encode(&pc, m.data);
	else
		pma_pce_encode(&pce, m.data);
	r = pma_mad_encode(&m, buf);
	if (r == 0)
		r = gmp_submit(t->pm->gmp, buf, t->lid, 1, counters_cb, t);
	if (r == 0) {
		t->pending++;
		t->pm->pending++;
	}
	return r;
}

static void caps_cb(void *arg, int status, const uint8_t *req, const uint8_t *resp)
{
	struct perf_node *n = arg;
	struct pma_class_port_info cpi;
	struct pma_mad m;

	(void)req;
	if (status == -ECANCELED) {
		n->state = CAPS_UNKNOWN;
		return;
	}
	/* Known either way: a PMA that cannot say has PortCounters only (IBA 16.1.3.5 is mandatory) */
	n->state = CAPS_KNOWN;
	n->cap_mask = 0;
	if (status == 0 && pma_mad_decode(resp, MAD_SIZE, &m) == 0) {
		pma_cpi_decode(m.data, &cpi);
		n->cap_mask = cpi.cap_mask;
	}
}

/* The counter sweep's end: figures, the rules, what goes to the database */
static void sweep_end(struct perf *pm)
{
	struct smd *smd = pm->smd;
	uint64_t now = txn_now_us();
	const struct gmp_stats *gs = gmp_stats(pm->gmp);
	char why[48];

	pm->running = false;
	pm->st.sweeps++;
	pm->st.last_seconds = (double)(now - pm->t0) / 1e6;
	pm->st.last_end = time(NULL);
	pm->st.last_ports = (unsigned int)pm->nt;
	pm->st.last_read = pm->read;
	pm->st.last_unanswered = pm->unanswered;
	pm->st.last_gmps = gs->sent - pm->sent0;
	log_debug("performance manager: counter sweep %" PRIu64 ": %zu ports, %u read, %u did not "
		  "answer, %.3f s (%" PRIu64 " GMPs sent since start)", pm->st.sweeps, pm->nt,
		  pm->read, pm->unanswered, pm->st.last_seconds, gs->sent);
	free(pm->t);
	pm->t = NULL;
	pm->nt = pm->next = 0;
	forget_gone(pm, now);
	/* Numbered: "within two counter sweeps" is judged from the log */
	snprintf(why, sizeof(why), "counter sweep %" PRIu64, pm->st.sweeps);
	health_judge_all(smd, why);
	health_flush(smd);
}

/* The targets of a new counter sweep: every cabled port of the model, by LID */
static int targets_make(struct perf *pm)
{
	const struct fabric *f = pm->smd->fabric;
	uint64_t now = txn_now_us();
	size_t n = 0, k = 0;

	for (size_t i = 0; i < pm->nnodes; i++)
		pm->nodes[i]->present = false;
	for (size_t i = 0; i < pm->nports; i++)
		pm->ports[i]->present = pm->ports[i]->answered = false;
	for (size_t i = 0; i < f->nnodes; i++)
		n += f->nodes[i]->num_ports;
	pm->t = calloc(n ? n : 1, sizeof(*pm->t));
	pm->ask = realloc(pm->ask, (f->nnodes ? f->nnodes : 1) * sizeof(*pm->ask));
	if (!pm->t || !pm->ask)
		return -ENOMEM;
	pm->nask = pm->next_ask = 0;
	for (size_t i = 0; i < f->nnodes; i++) {
		const struct fab_node *nd = f->nodes[i];
		struct perf_node *pn = NULL;

		for (unsigned int p = 1; p <= nd->num_ports; p++) {
			const struct fab_port *fp = &nd->ports[p];
			/* A switch's PMA answers at its LID (port 0's), a CA port's at its own */
			uint16_t lid = nd->type == NODE_TYPE_SWITCH ? nd->ports[0].lid : fp->lid;
			struct perf_target *t;
			struct perf_port *pp;

			if (!fp->peer || !fp->pi_valid || fp->pi.phys_state != PHYS_STATE_LINKUP ||
			    !lid)
				continue;
			if (!pn) {
				pn = node_get(pm, nd->guid);
				if (!pn)
					return -ENOMEM;
				/* Back after an absence (a reboot, a new card): asked again */
				if (!pn->present && pm->st.sweeps && pn->state == CAPS_KNOWN &&
				    pn->lid == 0)
					pn->state = CAPS_UNKNOWN;
				pn->present = true;
				pn->lid = lid;
				if (pn->state == CAPS_UNKNOWN)
					pm->ask[pm->nask++] = pn;
			}
			pp = perf_port_get(pm->smd, nd->guid, (uint8_t)p, true);
			if (!pp)
				return -ENOMEM;
			pp->present = true;
			pp->gone_us = 0;
			pp->node_type = nd->type;
			snprintf(pp->desc, sizeof(pp->desc), "%s", nd->desc_valid ? nd->desc : "");
			t = &pm->t[k++];
			t->pm = pm;
			t->pp = pp;
			t->node = pn;
			t->lid = lid;
			t->port = (uint8_t)p;
		}
	}
	/* Nodes not in this model: asked again when they come back */
	for (size_t i = 0; i < pm->nnodes; i++)
		if (!pm->nodes[i]->present)
			pm->nodes[i]->lid = 0;
	for (size_t i = 0; i < pm->nports; i++)
		if (!pm->ports[i]->present && !pm->ports[i]->gone_us)
			pm->ports[i]->gone_us = now;
	pm->nt = k;
	return 0;
}

bool perf_sweep_start(struct smd *smd)
{
	struct perf *pm = smd->perf;
	int r;

	if (!pm || !pm->gmp || pm->running || !smd->cfg.perf_interval || !smd->fabric ||
	    !smd->sa_serving || smd->sm_state != SM_MASTER)
		return false;
	r = targets_make(pm);
	if (r < 0) {
		log_warn("performance manager: no counter sweep: %s", strerror(-r));
		free(pm->t);
		pm->t = NULL;
		pm->nt = 0;
		return false;
	}
	pm->running = true;
	pm->caps_phase = pm->nask > 0;
	pm->next = 0;
	pm->pending = 0;
	pm->read = pm->unanswered = 0;
	pm->t0 = txn_now_us();
	pm->sent0 = gmp_stats(pm->gmp)->sent;
	return true;
}

/* Feed the window: ClassPortInfo first where unknown, then the ports */
static void feed(struct perf *pm)
{
	size_t room = PERF_WINDOW * 2;

	while (pm->caps_phase && pm->next_ask < pm->nask && gmp_queued(pm->gmp) < room) {
		struct perf_node *n = pm->ask[pm->next_ask++];
		uint8_t buf[MAD_SIZE];
		struct pma_mad m;

		pma_mad_init(&m, MAD_METHOD_GET, PMA_ATTR_CLASS_PORT_INFO, 0);
		if (pma_mad_encode(&m, buf) == 0 && gmp_submit(pm->gmp, buf, n->lid, 1, caps_cb,
							       n) == 0)
			n->state = CAPS_ASKING;
	}
	if (pm->caps_phase) {
		/* Every node's answer (or silence) before the ports: which attributes to ask */
		if (pm->next_ask < pm->nask || !gmp_idle(pm->gmp))
			return;
		pm->caps_phase = false;
	}
	while (pm->next < pm->nt && gmp_queued(pm->gmp) < room) {
		struct perf_target *t = &pm->t[pm->next++];

		t->pending = 1;		/* held until both are submitted */
		if (submit_get(t, PMA_ATTR_PORT_COUNTERS) < 0)
			t->failed = true;
		if (!t->failed && (t->node->cap_mask & PMA_CAP_EXT_WIDTH) &&
		    submit_get(t, PMA_ATTR_PORT_COUNTERS_EXT) < 0)
			t->failed = true;
		if (--t->pending == 0) {
			/* Nothing went out: the port counts as unanswered */
			t->pp->unanswered++;
			pm->unanswered++;
		}
	}
}

int perf_pump(struct smd *smd)
{
	struct perf *pm = smd->perf;
	int r;

	if (!pm || !pm->gmp)
		return 0;
	pm->st.paused = pm->running && smd->sweep != NULL;
	/* A heavy sweep has the port: what is in flight completes, nothing new goes out */
	if (pm->running && !smd->sweep)
		feed(pm);
	r = gmp_dispatch(pm->gmp);
	if (r < 0)
		return r;
	if (pm->running && !pm->caps_phase && pm->next == pm->nt && !pm->pending &&
	    gmp_idle(pm->gmp))
		sweep_end(pm);
	return 0;
}

unsigned int perf_outstanding(const struct smd *smd)
{
	return smd->perf && smd->perf->gmp ? gmp_outstanding(smd->perf->gmp) : 0;
}

int perf_next_timeout_ms(const struct smd *smd)
{
	const struct perf *pm = smd->perf;

	if (!pm || !pm->gmp)
		return -1;
	/* Requests to feed: as soon as the loop may */
	if (pm->running && !smd->sweep && (pm->next < pm->nt || pm->caps_phase))
		return gmp_outstanding(pm->gmp) < PERF_WINDOW ? 0 : gmp_next_timeout_ms(pm->gmp);
	return gmp_next_timeout_ms(pm->gmp);
}

void perf_cancel(struct smd *smd)
{
	struct perf *pm = smd->perf;

	if (!pm || !pm->gmp)
		return;
	gmp_cancel_all(pm->gmp);
	pm->running = false;
	free(pm->t);
	pm->t = NULL;
	pm->nt = pm->next = 0;
	pm->pending = 0;
}

void perf_stats_get(const struct smd *smd, struct perf_stats *st)
{
	const struct perf *pm = smd->perf;

	memset(st, 0, sizeof(*st));
	if (!pm)
		return;
	*st = pm->st;
	st->enabled = pm->gmp && smd->cfg.perf_interval;
	st->running = pm->running;
	st->interval = smd->cfg.perf_interval;
	st->ports = pm->nports;
	st->bad_answers = pm->bad_answers;
	if (pm->gmp) {
		const struct gmp_stats *gs = gmp_stats(pm->gmp);

		st->gmps_sent = gs->sent;
		st->gmps_timed_out = gs->timeouts;
		st->gmps_unanswered = gs->failed;
		st->bad_answers += gs->malformed + gs->unmatched;
		st->bad_status = gs->bad_status;
	}
}
