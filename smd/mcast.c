// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include "util/log.h"
#include "smd/mcast.h"
#include "smd/smd.h"
#include "smd/sweep.h"
#include "topo/mc.h"
#include "topo/part.h"

/*
 * MFT SMPs a pump keeps submitted at once: the transaction window sends
 * them; more would only wait in memory.
 */
#define MCAST_INFLIGHT_MAX	256

/* MLIDs whose trees a sweep step computes before it looks at the clock */
#define MCAST_TREES_SLICE	16
/* ... and how long it may go on before it yields to the event loop */
#define MCAST_SLICE_US		10000

struct mcast {
	struct mc_db *db;
	struct mc_forest *fo;		/* over smd->fabric; NULL before the first sweep */
	uint64_t gen;			/* bumped when fo is replaced */
	bool pending;			/* joins or leaves since the last update */
	bool sweeping;			/* a heavy sweep runs: joins wait for its end */
	uint64_t saved_us;		/* when groups were last written to the database */
	unsigned int inflight;
	struct mcast_stats st;
	/* The sweep's multicast phase (mcast_sweep_*) */
	uint64_t todo[MLID_COUNT / 64 + 1];	/* MLIDs whose trees it has still to compute */
	uint16_t next;			/* the next MLID to look at; 0: trees done */
	uint64_t rd, wr;		/* block counters when it started */
};

static void persist(struct smd *smd, bool force);

struct mft_ctx {
	struct smd *smd;
	struct mc_forest *fo;		/* the forest the block belongs to */
	uint64_t gen;			/* 0: a sweep's forest, always current */
	struct mc_block b;
};

static int load_cb(void *ctx, const struct store_mcast *g)
{
	struct mc_db *db = ctx;

	/* A bad row is left out, not fatal: the group gets a fresh MLID */
	if (mc_db_remember(db, g->mgid, g->mlid) < 0)
		log_debug("multicast: ignoring a remembered MLID 0x%04x", g->mlid);
	return 0;
}

/* A group's parameters from the partitions file (IBA codes); scope from the MGID */
static struct mc_params group_params(const struct smd *smd, uint16_t pkey,
				     const struct part_mcparams *pp, const uint8_t mgid[16],
				     bool ipoib)
{
	uint8_t scope = mgid[1] & 0xf;

	return (struct mc_params){
		/* RFC 4391: the IPoIB Q_Key unless the file names one */
		.qkey = pp->qkey ? pp->qkey : ipoib ? 0x0b1b : 0,
		.pkey = (uint16_t)(pkey | PKEY_FULL), .mtu = pp->mtu, .rate = pp->rate,
		.sl = pp->sl, .tclass = pp->tclass, .flow_label = pp->flow_label,
		.scope = scope, .plt = (uint8_t)smd->cfg.packet_life_time,
		/* Beyond the link a GRH needs hops (as OpenSM sets it) */
		.hop_limit = scope == 2 ? 0 : 0xff,
	};
}

struct want_group {
	uint8_t mgid[16];
	struct mc_params p;
	bool ipoib;			/* a partition's broadcast group */
};

static int want_cmp(const void *x, const void *y)
{
	return memcmp(x, y, 16);
}

static int want_add(struct want_group **v, size_t *n, size_t *cap, const uint8_t mgid[16],
		    const struct mc_params *p, bool ipoib)
{
	if (*n == *cap) {
		size_t ncap = *cap ? 2 * *cap : 16;
		struct want_group *nv = realloc(*v, ncap * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		*v = nv;
		*cap = ncap;
	}
	memcpy((*v)[*n].mgid, mgid, 16);
	(*v)[*n].p = *p;
	(*v)[*n].ipoib = ipoib;
	(*n)++;
	return 0;
}

/* Every group the partitions configure: MGID (scope set) and parameters */
static int groups_wanted(const struct smd *smd, const struct part_conf *c,
			 struct want_group **out, size_t *nout)
{
	struct want_group *v = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	for (size_t i = 0; i < c->n && !r; i++) {
		const struct partition *pt = &c->parts[i];

		for (size_t k = 0; k <= pt->ngroups && !r; k++) {
			const struct part_mcparams *pp = k ? &pt->groups[k - 1].p : &pt->bc;
			uint16_t scopes = pp->scopes ? pp->scopes : 1u << 2;
			uint8_t mgid[16];

			if (!k && !pt->ipoib)
				continue;
			for (unsigned int sc = 1; sc < 16 && !r; sc++) {
				struct mc_params mp;

				if (!(scopes & (1u << sc)))
					continue;
				if (k) {
					memcpy(mgid, pt->groups[k - 1].mgid, 16);
					mgid[1] = (uint8_t)((mgid[1] & 0xf0) | sc);
				} else {
					/* RFC 4391: the partition's IPv4 broadcast group */
					mc_ipoib_mgid(pt->pkey, (uint8_t)sc, mgid);
				}
				mp = group_params(smd, pt->pkey, pp, mgid, !k);
				r = want_add(&v, &n, &cap, mgid, &mp, !k);
			}
		}
	}
	if (r < 0) {
		free(v);
		return r;
	}
	qsort(v, n, sizeof(*v), want_cmp);
	*out = v;
	*nout = n;
	return 0;
}

static bool params_same(const struct mc_params *a, const struct mc_params *b)
{
	return a->qkey == b->qkey && (a->pkey & 0x7fff) == (b->pkey & 0x7fff) &&
	       a->mtu == b->mtu && a->rate == b->rate && a->sl == b->sl &&
	       a->tclass == b->tclass && a->flow_label == b->flow_label;
}

int mcast_partitions(struct smd *smd, const struct part_conf *c)
{
	struct mc_db *db = smd->mcast->db;
	struct want_group *v = NULL;
	size_t n = 0, gone = 0;
	struct mc_group *g;
	int r;

	r = groups_wanted(smd, c, &v, &n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		struct mc_group *old = mc_db_find(db, v[i].mgid);
		bool was = old && old->permanent, differ = old && !params_same(&old->p, &v[i].p);
		char txt[64];

		r = mc_db_add_permanent(db, v[i].mgid, &v[i].p, &g);
		if (r < 0) {
			inet_ntop(AF_INET6, v[i].mgid, txt, sizeof(txt));
			log_error("multicast: group %s of P_Key 0x%04x cannot be created: %s", txt,
				  v[i].p.pkey, strerror(-r));
			continue;
		}
		if (was && !differ)
			continue;
		inet_ntop(AF_INET6, v[i].mgid, txt, sizeof(txt));
		if (differ && old->nmembers)
			log_warn("multicast: group %s now has other parameters; its %u members keep "
				 "the old ones until they join again", txt, old->nmembers);
		log_info("multicast: %s %s of P_Key 0x%04x on MLID 0x%04x (MTU %u, %s Gb/s, SL %u, "
			 "Q_Key 0x%x)", v[i].ipoib ? "IPoIB broadcast group" : "group", txt,
			 v[i].p.pkey, g->mlid, mtu_to_bytes(v[i].p.mtu),
			 part_rate_text(v[i].p.rate), v[i].p.sl, v[i].p.qkey);
	}
	/* Configured before, not now: the group lives on while members hold it */
	for (g = mc_db_next(db, 0); g; ) {
		struct mc_group *next = mc_db_next(db, g->mlid);

		if (g->permanent && !bsearch(g->mgid, v, n, sizeof(*v), want_cmp)) {
			mc_db_unpin(db, g);
			gone++;
		}
		g = next;
	}
	if (gone)
		log_info("multicast: %zu groups no longer configured: they go with their last "
			 "member", gone);
	free(v);
	return 0;
}

int mcast_init(struct smd *smd)
{
	struct mcast *m = calloc(1, sizeof(*m));
	int r;

	if (!m)
		return -ENOMEM;
	r = mc_db_new(LID_MCAST_MAX, &m->db);
	if (r < 0) {
		free(m);
		return r;
	}
	mc_db_set_plt(m->db, (uint8_t)smd->cfg.packet_life_time);
	smd->mcast = m;
	if (smd->store) {
		r = store_foreach_mcast(smd->store, load_cb, m->db);
		if (r < 0)
			log_warn("multicast: the MLIDs of the groups before this start are not "
				 "known (%s); groups get new ones", store_errmsg(smd->store));
		else if (mc_db_remembered(m->db))
			log_info("multicast: %zu groups' MLIDs remembered from before",
				 mc_db_remembered(m->db));
	}
	/* The partitions' IPoIB broadcast groups and mgid= groups */
	r = mcast_partitions(smd, smd->parts);
	if (r < 0)
		return r;
	smd->sa_env.mcast_changed = mcast_changed;
	return 0;
}

void mcast_fini(struct smd *smd)
{
	struct mcast *m = smd->mcast;

	if (!m)
		return;
	persist(smd, true);
	mc_forest_free(m->fo);
	mc_db_free(m->db);
	free(m);
	smd->mcast = NULL;
}

const struct mcast_stats *mcast_stats(const struct smd *smd)
{
	return &smd->mcast->st;
}

struct mc_db *mcast_db(const struct smd *smd)
{
	return smd->mcast ? smd->mcast->db : NULL;
}

struct mc_forest *mcast_forest(const struct smd *smd)
{
	return smd->mcast ? smd->mcast->fo : NULL;
}

/*
 * Groups that appeared or went: their MLIDs in the database, in one
 * transaction. A join storm would pay a commit per batch of answers: unless
 * forced, what waits is written once 256 events are there or 200 ms passed.
 * A crash loses at most that: groups then get new MLIDs, nothing worse.
 */
#define PERSIST_EVENTS	256
#define PERSIST_US	200000

static void persist(struct smd *smd, bool force)
{
	struct mcast *m = smd->mcast;
	struct mc_event ev[256];
	struct store_mcast g[256];
	uint64_t now = txn_now_us();
	size_t n;

	if (!mc_db_events(m->db))
		return;
	if (!force && mc_db_events(m->db) < PERSIST_EVENTS && now - m->saved_us < PERSIST_US)
		return;
	m->saved_us = now;
	while ((n = mc_db_take_events(m->db, ev, 256)) > 0) {
		for (size_t i = 0; i < n; i++) {
			memcpy(g[i].mgid, ev[i].mgid, 16);
			g[i].mlid = ev[i].mlid;
			g[i].present = ev[i].created;
			if (ev[i].created)
				m->st.created++;
			else
				m->st.deleted++;
			/* Subscribers hear of it: traps 66 and 67 */
			if (smd->sa)
				sa_report_mcast(smd->sa, ev[i].mgid, ev[i].pkey, ev[i].created);
		}
		if (smd->store && store_mcast_save(smd->store, g, n, time(NULL)) < 0)
			log_warn("multicast: groups not saved to the database (%s); their MLIDs "
				 "may change after a restart", store_errmsg(smd->store));
	}
}

static int pump(struct smd *smd, struct mc_forest *fo, uint64_t gen);

static void mft_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct mft_ctx *c = arg;
	struct smd *smd = c->smd;
	struct mcast *m = smd->mcast;
	struct mft_block held;

	m->inflight--;
	/* A block of a forest replaced since: the new one reads it again */
	if (status == -ECANCELED || (c->gen && c->gen != m->gen)) {
		free(c);
		return;
	}
	if (status == 0) {
		mft_block_decode(resp->data, &held);
		if (c->b.read)
			m->st.blocks_read++;
		else
			m->st.blocks_written++;
		if (!c->b.read && memcmp(held.mask, c->b.mask, sizeof(held.mask)))
			log_warn("multicast: %s (GUID 0x%016" PRIx64 ") holds other MFT entries "
				 "than were written to block %u position %u",
				 c->b.node->desc_valid ? c->b.node->desc : "switch",
				 c->b.node->guid, c->b.block, c->b.pos);
	} else {
		m->st.block_errors++;
		log_warn("multicast: MFT block %u position %u of %s (GUID 0x%016" PRIx64
			 ") could not be %s: %s", c->b.block, c->b.pos,
			 c->b.node->desc_valid ? c->b.node->desc : "switch", c->b.node->guid,
			 c->b.read ? "read" : "written", strerror(-status));
	}
	if (mc_forest_done(c->fo, &c->b, status == 0 ? held.mask : NULL) < 0)
		log_error("multicast: out of memory queueing MFT blocks");
	if (c->gen && !m->sweeping)
		pump(smd, c->fo, c->gen);
	free(c);
}

/* Submit the forest's pending blocks, at most MCAST_INFLIGHT_MAX at once */
static int pump(struct smd *smd, struct mc_forest *fo, uint64_t gen)
{
	struct mcast *m = smd->mcast;

	while (m->inflight < MCAST_INFLIGHT_MAX) {
		struct mft_ctx *c = malloc(sizeof(*c));
		struct mft_block blk;
		struct smp req;
		int r;

		if (!c)
			return -ENOMEM;
		if (!mc_forest_next(fo, &c->b)) {
			free(c);
			return 0;
		}
		c->smd = smd;
		c->fo = fo;
		c->gen = gen;
		smp_init_dr(&req, c->b.read ? MAD_METHOD_GET : MAD_METHOD_SET, SMP_ATTR_MFT,
			    mft_amod(c->b.block, c->b.pos), &c->b.node->path);
		memcpy(blk.mask, c->b.mask, sizeof(blk.mask));
		if (!c->b.read)
			mft_block_encode(&blk, req.data);
		r = txn_submit(smd->txn, &req, 0, mft_cb, c);
		if (r < 0) {
			mc_forest_done(fo, &c->b, NULL);
			free(c);
			return r;
		}
		m->inflight++;
	}
	return 0;
}

/* The port of the model with port GUID guid (switches: their node GUID), or NULL */
static const struct fab_port *port_of(const struct fabric *f, uint64_t guid)
{
	for (size_t i = 0; i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];

		if (n->type == NODE_TYPE_SWITCH) {
			if (n->guid == guid)
				return &n->ports[0];
			continue;
		}
		for (unsigned int p = 1; p <= n->num_ports; p++)
			if (n->ports[p].guid == guid)
				return &n->ports[p];
	}
	return NULL;
}

/* A member stays while its port has a LID and holds the group's P_Key */
static bool member_keeps(const struct fab_port *p, uint16_t pkey)
{
	const uint16_t *k;
	unsigned int n;

	if (!p || !p->lid)
		return false;
	k = fabric_port_pkeys(p, &n);
	return part_find_key(k, n, pkey) != 0;
}

static bool port_alive(void *ctx, uint64_t guid, uint16_t pkey)
{
	return member_keeps(port_of(ctx, guid), pkey);
}

struct alive_idx {
	const struct fab_port **ports;	/* sorted by GUID */
	size_t n;
};

static int cmp_port(const void *x, const void *y)
{
	uint64_t a = (*(const struct fab_port *const *)x)->guid;
	uint64_t b = (*(const struct fab_port *const *)y)->guid;

	return a < b ? -1 : a > b;
}

static int cmp_guid_port(const void *key, const void *y)
{
	uint64_t a = *(const uint64_t *)key, b = (*(const struct fab_port *const *)y)->guid;

	return a < b ? -1 : a > b;
}

static bool idx_alive(void *ctx, uint64_t guid, uint16_t pkey)
{
	const struct alive_idx *a = ctx;
	const struct fab_port *const *p = bsearch(&guid, a->ports, a->n, sizeof(*a->ports),
						   cmp_guid_port);

	return p && member_keeps(*p, pkey);
}

/*
 * Members whose port left the fabric or the group's partition go (sorted
 * GUIDs: O(members log ports)); -ENOMEM falls back to a walk
 */
static size_t purge(struct mc_db *db, const struct fabric *f)
{
	struct alive_idx a = { 0 };
	size_t n = 0, dropped;

	for (size_t i = 0; i < f->nnodes; i++)
		n += f->nodes[i]->num_ports + 1u;
	a.ports = malloc(n * sizeof(*a.ports));
	if (!a.ports)
		return mc_db_purge(db, port_alive, (void *)f);
	for (size_t i = 0; i < f->nnodes; i++) {
		const struct fab_node *nd = f->nodes[i];

		for (unsigned int p = 0; p <= nd->num_ports; p++)
			if (fabric_is_endport(&nd->ports[p]) && nd->ports[p].lid)
				a.ports[a.n++] = &nd->ports[p];
	}
	qsort(a.ports, a.n, sizeof(*a.ports), cmp_port);
	dropped = mc_db_purge(db, idx_alive, &a);
	free(a.ports);
	return dropped;
}

void mcast_sweep_begin(struct smd *smd)
{
	if (smd->mcast)
		smd->mcast->sweeping = true;
}

void mcast_sweep_prepare(struct smd *smd, struct fabric *f)
{
	struct mcast *m = smd->mcast;
	unsigned int cap = 0, over = 0;
	size_t dropped;

	/* MLIDs every switch's MFT can hold (MulticastFDBCap, IBA 14.2.5.4) */
	for (size_t s = 0; s < f->nswitches; s++) {
		const struct fab_node *n = f->switches[s];

		if (n->si_valid && n->si.mft_cap && (!cap || n->si.mft_cap < cap))
			cap = n->si.mft_cap;
	}
	if (cap) {
		mc_db_set_top(m->db, (uint16_t)(cap > MLID_COUNT ? LID_MCAST_MAX :
						LID_MCAST_MIN + cap - 1), &over);
		if (over)
			log_warn("multicast: %u groups have MLIDs beyond what some switch's MFT "
				 "holds (%u entries)", over, cap);
	}
	dropped = purge(m->db, f);
	if (dropped)
		log_info("multicast: %zu memberships of ports that left the fabric or the "
			 "group's partition dropped", dropped);
	persist(smd, true);
	/* Every group gets its tree on the new model: the dirty marks are all covered */
	mc_db_take_dirty(m->db, m->todo);
	memset(m->todo, 0, sizeof(m->todo));
	for (const struct mc_group *g = mc_db_next(m->db, 0); g; g = mc_db_next(m->db, g->mlid))
		m->todo[(g->mlid - LID_MCAST_MIN) / 64] |=
			UINT64_C(1) << ((g->mlid - LID_MCAST_MIN) % 64);
	m->next = LID_MCAST_MIN;
	m->rd = m->st.blocks_read;
	m->wr = m->st.blocks_written;
}

/*
 * The trees of the groups the sweep found, MCAST_TREES_SLICE MLIDs at a
 * time: 1 while some are left, 0 when done, -errno. A group joined or left
 * meanwhile is marked dirty and updated again when the sweep ends.
 */
static int sweep_trees(struct mcast *m, struct mc_forest *fo, uint64_t t0)
{
	uint64_t chunk[MLID_COUNT / 64 + 1];

	while (m->next) {
		unsigned int n = 0;
		uint32_t i;
		int e;

		memset(chunk, 0, sizeof(chunk));
		for (i = m->next - LID_MCAST_MIN; i < MLID_COUNT && n < MCAST_TREES_SLICE; i++) {
			uint64_t bit = UINT64_C(1) << (i % 64);

			if (!(m->todo[i / 64] & bit))
				continue;
			chunk[i / 64] |= bit;
			n++;
		}
		m->next = i < MLID_COUNT ? (uint16_t)(LID_MCAST_MIN + i) : 0;
		if (n) {
			e = mc_forest_update(fo, m->db, chunk);
			if (e < 0)
				return e;
		}
		if (m->next && txn_now_us() - t0 > MCAST_SLICE_US)
			return 1;
	}
	return 0;
}

int mcast_sweep_step(struct smd *smd, struct mc_forest *fo)
{
	struct mcast *m = smd->mcast;
	int e;

	e = sweep_trees(m, fo, txn_now_us());
	if (e)
		return e < 0 ? e : MCAST_STEP_MORE;
	e = pump(smd, fo, 0);
	if (e < 0)
		return e;
	return mc_forest_pending(fo) || m->inflight ? MCAST_STEP_WAIT : 0;
}

void mcast_sweep_report(struct smd *smd, struct mc_forest *fo, int check, bool acyclic,
			struct sweep_result *res)
{
	struct mcast *m = smd->mcast;
	const struct mc_forest_stats *fs = mc_forest_stats(fo);

	res->mcast_groups = (unsigned int)mc_db_count(m->db);
	res->mcast_trees = fs->trees;
	res->mft_blocks_read = (unsigned int)(m->st.blocks_read - m->rd);
	res->mft_blocks_sent = (unsigned int)(m->st.blocks_written - m->wr);
	if (check == 0 && !acyclic)
		log_warn("multicast: the trees and the unicast routes together have a cyclic "
			 "channel dependency graph: multicast traffic can deadlock");
	if (fs->unsafe)
		log_warn("multicast: %u groups' trees close a cycle in the channel dependency "
			 "graph of the routes on their VL (no root avoided it)", fs->unsafe);
	if (fs->unroutable)
		log_warn("multicast: %u groups have members no root reaches", fs->unroutable);
	if (fs->over_cap)
		log_warn("multicast: %u (group, switch) pairs beyond the switch's MFT capacity",
			 fs->over_cap);
	res->mcast_unsafe = fs->unsafe;
}

void mcast_sweep_end(struct smd *smd, struct mc_forest *fo)
{
	struct mcast *m = smd->mcast;

	if (!m)
		return;
	m->sweeping = false;
	m->next = 0;
	if (!fo)
		return;		/* the sweep failed: the forest over the old model stays */
	mc_forest_free(m->fo);
	m->fo = fo;
	m->gen++;
	/* Joins during the sweep: update the new trees for them */
	if (m->pending)
		mcast_run(smd);
}

void mcast_changed(void *ctx)
{
	struct smd *smd = ctx;

	smd->mcast->pending = true;
}

void mcast_run(struct smd *smd)
{
	struct mcast *m = smd->mcast;
	uint64_t dirty[MLID_COUNT / 64 + 1];
	int e;

	if (!m || m->sweeping)
		return;
	persist(smd, false);
	if (!m->pending || !m->fo || smd->sm_state != SM_MASTER)
		return;
	m->pending = false;
	if (!mc_db_take_dirty(m->db, dirty))
		return;
	m->st.updates++;
	e = mc_forest_update(m->fo, m->db, dirty);
	if (e == 0)
		e = pump(smd, m->fo, m->gen);
	if (e < 0)
		log_error_errno(e, "multicast: updating the forwarding tables failed");
}
