// SPDX-License-Identifier: MIT
/*
 * Multicast group membership: joining, creating and leaving groups with
 * MCMemberRecord Set and Delete (IBA 15.2.5.17). Every operation is O(log members)
 * or O(1) beside the MLID search, so a join storm costs little per join;
 * memory grows only with groups (bounded by the MLIDs) and their members
 * (bounded by the fabric's ports).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "topo/mc.h"

#define MGID_HASH_SIZE	4096	/* chains stay short up to the 16k MLIDs */
#define DIRTY_WORDS	((MLID_COUNT + 63) / 64)
#define EVENTS_MAX	4096	/* unread events beyond this are dropped (counted) */

struct mc_memo {
	uint8_t mgid[16];
	uint16_t mlid;
};

struct mc_db {
	struct mc_group *by_mlid[MLID_COUNT];
	uint64_t used[DIRTY_WORDS];	/* bit per MLID in use: scans skip empty words */
	struct mc_group *hash[MGID_HASH_SIZE];
	uint16_t top;			/* highest MLID to allocate */
	size_t ngroups;
	uint64_t dirty[DIRTY_WORDS];
	size_t ndirty;
	struct mc_memo *memo;		/* remembered MGID -> MLID, sorted by MLID */
	size_t nmemo, memo_cap;
	uint64_t assigned;		/* counter behind SA-assigned MGIDs */
	uint8_t plt;			/* PacketLifeTime of groups created without one */
	struct mc_event *ev;
	size_t nev;
	uint64_t ev_lost;
};

static unsigned int mgid_hash(const uint8_t mgid[16])
{
	uint64_t h = UINT64_C(0xcbf29ce484222325);

	for (int i = 0; i < 16; i++)
		h = (h ^ mgid[i]) * UINT64_C(0x100000001b3);
	return (unsigned int)(h >> 20) & (MGID_HASH_SIZE - 1);
}

static bool used_get(const struct mc_db *db, unsigned int i)
{
	return db->used[i / 64] & (UINT64_C(1) << (i % 64));
}

/* The first index >= from with bit set in words (MLID_COUNT bits), or MLID_COUNT */
static unsigned int bits_next(const uint64_t *words, unsigned int from)
{
	unsigned int w = from / 64;
	uint64_t v;

	if (from >= MLID_COUNT)
		return MLID_COUNT;
	v = words[w] & (~UINT64_C(0) << (from % 64));
	while (!v) {
		if (++w >= DIRTY_WORDS)
			return MLID_COUNT;
		v = words[w];
	}
	from = w * 64 + (unsigned int)__builtin_ctzll(v);
	return from < MLID_COUNT ? from : MLID_COUNT;
}

int mc_db_new(uint16_t mlid_top, struct mc_db **out)
{
	struct mc_db *db = calloc(1, sizeof(*db));

	if (!db)
		return -ENOMEM;
	db->ev = calloc(EVENTS_MAX, sizeof(*db->ev));
	if (!db->ev) {
		free(db);
		return -ENOMEM;
	}
	db->top = LID_MCAST_MAX;
	mc_db_set_top(db, mlid_top, NULL);
	*out = db;
	return 0;
}

static void group_free(struct mc_group *g)
{
	free(g->members);
	free(g);
}

struct mc_db *mc_db_free(struct mc_db *db)
{
	if (!db)
		return NULL;
	for (unsigned int i = bits_next(db->used, 0); i < MLID_COUNT; i = bits_next(db->used, i + 1))
		group_free(db->by_mlid[i]);
	free(db->memo);
	free(db->ev);
	free(db);
	return NULL;
}

void mc_db_set_top(struct mc_db *db, uint16_t mlid_top, unsigned int *over)
{
	unsigned int n = 0;

	if (mlid_top < LID_MCAST_MIN || mlid_top > LID_MCAST_MAX)
		mlid_top = mlid_top < LID_MCAST_MIN ? LID_MCAST_MIN : LID_MCAST_MAX;
	db->top = mlid_top;
	for (unsigned int i = bits_next(db->used, (unsigned int)(mlid_top - LID_MCAST_MIN) + 1);
	     i < MLID_COUNT; i = bits_next(db->used, i + 1))
		n++;
	if (over)
		*over = n;
}

void mc_db_set_plt(struct mc_db *db, uint8_t plt)
{
	db->plt = plt & 0x3f;
}

uint16_t mc_db_top(const struct mc_db *db)
{
	return db->top;
}

struct mc_group *mc_db_find(const struct mc_db *db, const uint8_t mgid[16])
{
	for (struct mc_group *g = db->hash[mgid_hash(mgid)]; g; g = g->hnext)
		if (!memcmp(g->mgid, mgid, 16))
			return g;
	return NULL;
}

struct mc_group *mc_db_by_mlid(const struct mc_db *db, uint16_t mlid)
{
	if (mlid < LID_MCAST_MIN || mlid > LID_MCAST_MAX)
		return NULL;
	return db->by_mlid[mlid - LID_MCAST_MIN];
}

size_t mc_db_count(const struct mc_db *db)
{
	return db->ngroups;
}

uint16_t mc_db_max_mlid(const struct mc_db *db)
{
	if (!db->ngroups)
		return 0;
	for (unsigned int w = DIRTY_WORDS; w-- > 0;)
		if (db->used[w])
			return (uint16_t)(LID_MCAST_MIN + w * 64 + 63 -
					  (unsigned int)__builtin_clzll(db->used[w]));
	return 0;
}

struct mc_group *mc_db_next(const struct mc_db *db, uint16_t prev)
{
	unsigned int i = prev < LID_MCAST_MIN ? 0 : (unsigned int)(prev - LID_MCAST_MIN) + 1;

	i = bits_next(db->used, i);
	return i < MLID_COUNT ? db->by_mlid[i] : NULL;
}

uint16_t mc_db_next_dirty(const uint64_t *dirty, uint16_t prev)
{
	unsigned int i = prev < LID_MCAST_MIN ? 0 : (unsigned int)(prev - LID_MCAST_MIN) + 1;

	i = bits_next(dirty, i);
	return i < MLID_COUNT ? (uint16_t)(LID_MCAST_MIN + i) : 0;
}

void mc_db_touch(struct mc_db *db, uint16_t mlid)
{
	unsigned int i;

	if (!mlid) {
		for (i = bits_next(db->used, 0); i < MLID_COUNT; i = bits_next(db->used, i + 1))
			mc_db_touch(db, (uint16_t)(LID_MCAST_MIN + i));
		return;
	}
	if (mlid < LID_MCAST_MIN || mlid > LID_MCAST_MAX)
		return;
	i = mlid - LID_MCAST_MIN;
	if (!(db->dirty[i / 64] & (UINT64_C(1) << (i % 64)))) {
		db->dirty[i / 64] |= UINT64_C(1) << (i % 64);
		db->ndirty++;
	}
}

size_t mc_db_take_dirty(struct mc_db *db, uint64_t *dirty)
{
	size_t n = db->ndirty;

	memcpy(dirty, db->dirty, sizeof(db->dirty));
	memset(db->dirty, 0, sizeof(db->dirty));
	db->ndirty = 0;
	return n;
}

static void event_add(struct mc_db *db, bool created, const struct mc_group *g)
{
	if (db->nev >= EVENTS_MAX) {
		db->ev_lost++;
		return;
	}
	db->ev[db->nev].created = created;
	memcpy(db->ev[db->nev].mgid, g->mgid, 16);
	db->ev[db->nev].mlid = g->mlid;
	db->ev[db->nev].pkey = g->p.pkey;
	db->nev++;
}

size_t mc_db_events(const struct mc_db *db)
{
	return db->nev;
}

size_t mc_db_take_events(struct mc_db *db, struct mc_event *ev, size_t n)
{
	size_t k = db->nev < n ? db->nev : n;

	memcpy(ev, db->ev, k * sizeof(*ev));
	memmove(db->ev, db->ev + k, (db->nev - k) * sizeof(*ev));
	db->nev -= k;
	return k;
}

/* ---- remembered MLIDs ---- */

static struct mc_memo *memo_by_mgid(const struct mc_db *db, const uint8_t mgid[16])
{
	for (size_t i = 0; i < db->nmemo; i++)
		if (!memcmp(db->memo[i].mgid, mgid, 16))
			return &db->memo[i];
	return NULL;
}

static bool memo_holds(const struct mc_db *db, uint16_t mlid)
{
	size_t lo = 0, hi = db->nmemo;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (db->memo[mid].mlid < mlid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < db->nmemo && db->memo[lo].mlid == mlid;
}

static void memo_drop(struct mc_db *db, struct mc_memo *m)
{
	size_t i = (size_t)(m - db->memo);

	memmove(&db->memo[i], &db->memo[i + 1], (db->nmemo - i - 1) * sizeof(*m));
	db->nmemo--;
}

int mc_db_remember(struct mc_db *db, const uint8_t mgid[16], uint16_t mlid)
{
	struct mc_memo *m;
	uint8_t flags, scope;
	uint16_t sig;
	size_t i;

	if (mlid < LID_MCAST_MIN || mlid > LID_MCAST_MAX ||
	    iba_mgid_parse(mgid, &flags, &scope, &sig) < 0)
		return -EINVAL;
	m = memo_by_mgid(db, mgid);
	if (m)
		memo_drop(db, m);
	if (db->nmemo == db->memo_cap) {
		size_t ncap = db->memo_cap ? 2 * db->memo_cap : 64;
		struct mc_memo *nm = realloc(db->memo, ncap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		db->memo = nm;
		db->memo_cap = ncap;
	}
	for (i = db->nmemo; i > 0 && db->memo[i - 1].mlid > mlid; i--)
		db->memo[i] = db->memo[i - 1];
	memcpy(db->memo[i].mgid, mgid, 16);
	db->memo[i].mlid = mlid;
	db->nmemo++;
	return 0;
}

size_t mc_db_remembered(const struct mc_db *db)
{
	return db->nmemo;
}

/*
 * The MLID for a new group: its remembered one when free; else the lowest
 * free one nobody remembers; else the lowest free one (its memory lost).
 * Lowest first keeps MLIDs dense: MFT blocks in use stay few.
 */
static uint16_t mlid_alloc(struct mc_db *db, const uint8_t mgid[16])
{
	struct mc_memo *m = memo_by_mgid(db, mgid);
	unsigned int first_free = 0;

	if (m) {
		uint16_t mlid = m->mlid;

		memo_drop(db, m);
		if (mlid <= db->top && !db->by_mlid[mlid - LID_MCAST_MIN])
			return mlid;
	}
	for (unsigned int w = 0; w < DIRTY_WORDS && !first_free; w++) {
		uint64_t freebits = ~db->used[w];

		/* Lowest free first; a word full of groups costs one test */
		while (freebits) {
			unsigned int i = w * 64 + (unsigned int)__builtin_ctzll(freebits);
			uint16_t mlid = (uint16_t)(LID_MCAST_MIN + i);

			freebits &= freebits - 1;
			if (i >= MLID_COUNT || mlid > db->top)
				break;
			if (!memo_holds(db, mlid))
				return mlid;
			if (!first_free)
				first_free = mlid;
		}
	}
	/* Every free one below the top is remembered: look past the first word */
	for (unsigned int mlid = first_free ? first_free + 1u : LID_MCAST_MAX + 1u;
	     mlid <= db->top; mlid++)
		if (!used_get(db, mlid - LID_MCAST_MIN) && !memo_holds(db, (uint16_t)mlid))
			return (uint16_t)mlid;
	if (first_free) {
		for (size_t i = 0; i < db->nmemo; i++)
			if (db->memo[i].mlid == first_free) {
				memo_drop(db, &db->memo[i]);
				break;
			}
		return (uint16_t)first_free;
	}
	return 0;
}

/* ---- groups and members ---- */

static int group_new(struct mc_db *db, const uint8_t mgid[16], const struct mc_params *p,
		     struct mc_group **out)
{
	struct mc_group *g;
	uint16_t mlid = mlid_alloc(db, mgid);
	unsigned int h;

	if (!mlid)
		return -ENOSPC;
	g = calloc(1, sizeof(*g));
	if (!g)
		return -ENOMEM;
	memcpy(g->mgid, mgid, 16);
	g->mlid = mlid;
	g->p = *p;
	g->p.pkey |= 0x8000;
	h = mgid_hash(mgid);
	g->hnext = db->hash[h];
	db->hash[h] = g;
	db->by_mlid[mlid - LID_MCAST_MIN] = g;
	db->used[(mlid - LID_MCAST_MIN) / 64] |= UINT64_C(1) << ((mlid - LID_MCAST_MIN) % 64);
	db->ngroups++;
	mc_db_touch(db, mlid);
	event_add(db, true, g);
	*out = g;
	return 0;
}

static void group_delete(struct mc_db *db, struct mc_group *g)
{
	for (struct mc_group **pp = &db->hash[mgid_hash(g->mgid)]; *pp; pp = &(*pp)->hnext)
		if (*pp == g) {
			*pp = g->hnext;
			break;
		}
	db->by_mlid[g->mlid - LID_MCAST_MIN] = NULL;
	db->used[(g->mlid - LID_MCAST_MIN) / 64] &= ~(UINT64_C(1) << ((g->mlid - LID_MCAST_MIN) % 64));
	db->ngroups--;
	mc_db_touch(db, g->mlid);
	event_add(db, false, g);
	group_free(g);
}

/* Index of guid in g's members, or where it would go (*found false) */
static uint32_t member_pos(const struct mc_group *g, uint64_t guid, bool *found)
{
	uint32_t lo = 0, hi = g->nmembers;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (g->members[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	*found = lo < g->nmembers && g->members[lo].guid == guid;
	return lo;
}

const struct mc_member *mc_group_member(const struct mc_group *g, uint64_t guid)
{
	bool found;
	uint32_t i = member_pos(g, guid, &found);

	return found ? &g->members[i] : NULL;
}

static int member_set(struct mc_group *g, uint64_t guid, uint8_t state, bool proxy)
{
	bool found;
	uint32_t i = member_pos(g, guid, &found);
	bool held;

	if (found) {
		held = g->members[i].join_state & MC_JOIN_HOLDS;
		g->members[i].join_state = state;
		g->members[i].proxy = proxy;
	} else {
		if (g->nmembers == g->cap) {
			uint32_t ncap = g->cap ? 2 * g->cap : 4;
			struct mc_member *nm = realloc(g->members, ncap * sizeof(*nm));

			if (!nm)
				return -ENOMEM;
			g->members = nm;
			g->cap = ncap;
		}
		memmove(&g->members[i + 1], &g->members[i],
			(g->nmembers - i) * sizeof(g->members[0]));
		g->members[i] = (struct mc_member){ .guid = guid, .join_state = state,
						    .proxy = proxy };
		g->nmembers++;
		held = false;
	}
	if (held && !(state & MC_JOIN_HOLDS))
		g->holders--;
	else if (!held && (state & MC_JOIN_HOLDS))
		g->holders++;
	if (!state) {
		memmove(&g->members[i], &g->members[i + 1],
			(g->nmembers - i - 1) * sizeof(g->members[0]));
		g->nmembers--;
	}
	return 0;
}

int mc_db_add_permanent(struct mc_db *db, const uint8_t mgid[16], const struct mc_params *p,
			struct mc_group **out)
{
	struct mc_group *g = mc_db_find(db, mgid);
	int r;

	if (g) {
		g->p = *p;
		g->p.pkey |= 0x8000;
		g->permanent = true;
		mc_db_touch(db, g->mlid);
	} else {
		r = group_new(db, mgid, p, &g);
		if (r < 0)
			return r;
		g->permanent = true;
	}
	if (out)
		*out = g;
	return 0;
}

void mc_db_unpin(struct mc_db *db, struct mc_group *g)
{
	g->permanent = false;
	/* Nobody holds it: non-members go with it, as with a leave */
	if (!g->holders)
		group_delete(db, g);
}

/* ---- the rules ---- */

bool mc_port_has_pkey(const struct mc_port *port, uint16_t pkey)
{
	if (!port->pkeys)
		return (pkey & 0x7fff) == 0x7fff;	/* unknown table: the default only */
	for (unsigned int i = 0; i < port->npkeys; i++)
		if ((port->pkeys[i] & 0x7fff) && (port->pkeys[i] & 0x7fff) == (pkey & 0x7fff))
			return true;
	return false;
}

void mc_ipoib_mgid(uint16_t pkey, uint8_t scope, uint8_t mgid[16])
{
	/* Transient (flag 1), IPv4 over IB, the partition, group ID ::ffff:ffff */
	iba_mgid_make(1, scope, 0x401b, pkey | 0x8000, UINT64_C(0xffffffff), mgid);
}

static bool mgid_zero(const uint8_t mgid[16])
{
	for (int i = 0; i < 16; i++)
		if (mgid[i])
			return false;
	return true;
}

/* Compare by value: MTU codes are ordered, rate codes are not (IBA 15.2.5.16) */
static unsigned int mtu_val(uint8_t code)
{
	return code >= 1 && code <= 5 ? 128u << code : 0;
}

static unsigned int rate_val(uint8_t code)
{
	return iba_rate_to_dgbps(code);
}

/* Does a group value have satisfy selector sel against want? */
static bool sel_ok(uint8_t sel, unsigned int want, unsigned int have)
{
	switch (sel) {
	case MC_SEL_GT: return have > want;
	case MC_SEL_LT: return have < want;
	case MC_SEL_EQ: return have == want;
	default: return true;
	}
}

/*
 * The value a new group takes for a component the port can carry up to
 * max: the largest one the selector allows (0: none). Codes 1..63 are
 * searched so that rates, whose codes are not in order, work too.
 */
static uint8_t sel_pick(uint8_t sel, uint8_t want, uint8_t max, unsigned int (*val)(uint8_t))
{
	uint8_t best = 0;

	if (sel == MC_SEL_EQ)
		return val(want) && val(want) <= val(max) ? want : 0;
	for (unsigned int c = 1; c < 64; c++) {
		unsigned int v = val((uint8_t)c);

		if (!v || v > val(max) || !sel_ok(sel, val(want), v))
			continue;
		if (!best || v > val(best))
			best = (uint8_t)c;
	}
	return best;
}

/* The request's values that must equal the group's (IBA 15.2.5.17) */
static bool params_match(const struct mc_req *req, const struct mc_group *g)
{
	const struct mc_params *w = &req->p, *p = &g->p;
	uint32_t h = req->has;

	if ((h & MC_HAS_QKEY) && w->qkey != p->qkey)
		return false;
	if ((h & MC_HAS_MLID) && req->mlid != g->mlid)
		return false;
	if ((h & MC_HAS_PKEY) && (w->pkey & 0x7fff) != (p->pkey & 0x7fff))
		return false;
	if ((h & MC_HAS_SL) && w->sl != p->sl)
		return false;
	if ((h & MC_HAS_FLOW_LABEL) && w->flow_label != p->flow_label)
		return false;
	if ((h & MC_HAS_TCLASS) && w->tclass != p->tclass)
		return false;
	if ((h & MC_HAS_HOP_LIMIT) && w->hop_limit != p->hop_limit)
		return false;
	if ((h & MC_HAS_SCOPE) && w->scope != p->scope)
		return false;
	/* A value without its selector is asked for exactly */
	if ((h & MC_HAS_MTU) &&
	    !sel_ok((h & MC_HAS_MTU_SEL) ? req->mtu_sel : MC_SEL_EQ, mtu_val(w->mtu),
		    mtu_val(p->mtu)))
		return false;
	if ((h & MC_HAS_RATE) &&
	    !sel_ok((h & MC_HAS_RATE_SEL) ? req->rate_sel : MC_SEL_EQ, rate_val(w->rate),
		    rate_val(p->rate)))
		return false;
	if ((h & MC_HAS_PLT) &&
	    !sel_ok((h & MC_HAS_PLT_SEL) ? req->plt_sel : MC_SEL_EQ, w->plt, p->plt))
		return false;
	return true;
}

/*
 * An SA-assigned MGID: ff1S:a01b:PPPP:0000 and a value unique here (the
 * signature 0xa01b marks MGIDs an SA made; S the scope, PPPP the P_Key)
 */
static void mgid_assign(struct mc_db *db, uint8_t scope, uint16_t pkey, uint8_t mgid[16])
{
	do {
		iba_mgid_make(1, scope, 0xa01b, pkey | 0x8000, ++db->assigned, mgid);
	} while (mc_db_find(db, mgid) || memo_by_mgid(db, mgid));
}

static int group_create(struct mc_db *db, const struct mc_req *req, const struct mc_port *port,
			struct mc_group **out)
{
	struct mc_params p = req->p;
	uint8_t mgid[16];
	bool assign = mgid_zero(req->mgid);

	if ((req->has & MC_CREATE_NEEDS) != MC_CREATE_NEEDS)
		return -ENODATA;
	/* Only a full member (or a send-only full member) may create */
	if (!(req->join_state & MC_JOIN_HOLDS))
		return -EINVAL;
	if (assign) {
		p.scope = (req->has & MC_HAS_SCOPE) ? req->p.scope : 2;
		mgid_assign(db, p.scope, p.pkey, mgid);
	} else {
		uint8_t flags, scope;
		uint16_t sig;

		/*
		 * A multicast GID (IBA 4.1.1): 0xff, flags 0 (permanent) or 1
		 * (transient), a scope; the SA's own signature 0xa01b is not for
		 * requesters to pick (o15-0.1.5)
		 */
		if (iba_mgid_parse(req->mgid, &flags, &scope, &sig) < 0 || flags > 1 ||
		    sig == 0xa01b)
			return -EINVAL;
		memcpy(mgid, req->mgid, 16);
		p.scope = scope;
		if ((req->has & MC_HAS_SCOPE) && req->p.scope != p.scope)
			return -EINVAL;
	}
	/* Realizable: the creator's link carries the MTU and rate chosen */
	if (req->has & MC_HAS_MTU)
		p.mtu = sel_pick((req->has & MC_HAS_MTU_SEL) ? req->mtu_sel : MC_SEL_EQ,
				 req->p.mtu, port->mtu, mtu_val);
	else
		p.mtu = port->mtu;
	if (req->has & MC_HAS_RATE)
		p.rate = sel_pick((req->has & MC_HAS_RATE_SEL) ? req->rate_sel : MC_SEL_EQ,
				  req->p.rate, port->rate, rate_val);
	else
		p.rate = port->rate;
	if (!p.mtu || !p.rate)
		return -EINVAL;
	if (!(req->has & MC_HAS_PLT))
		p.plt = db->plt;
	else if ((req->has & MC_HAS_PLT_SEL) && req->plt_sel != MC_SEL_EQ)
		return -EINVAL;	/* no path to judge it by yet: exact values only */
	if (!(req->has & MC_HAS_HOP_LIMIT))
		p.hop_limit = 0;
	return group_new(db, mgid, &p, out);
}

int mc_join(struct mc_db *db, const struct mc_req *req, const struct mc_port *port,
	    struct mc_group **out, uint8_t *state)
{
	struct mc_group *g = NULL;
	const struct mc_member *m;
	uint8_t js;
	int r;

	if ((req->has & (MC_HAS_PORT_GID | MC_HAS_JOIN_STATE)) !=
	    (MC_HAS_PORT_GID | MC_HAS_JOIN_STATE))
		return -ENODATA;
	if (!req->join_state || (req->join_state & ~MC_JOIN_ALL))
		return -EINVAL;
	if ((req->has & MC_HAS_MGID) && !mgid_zero(req->mgid))
		g = mc_db_find(db, req->mgid);
	if (!g && (req->has & MC_HAS_MLID) && !((req->has & MC_HAS_MGID) &&
						  !mgid_zero(req->mgid)))
		g = mc_db_by_mlid(db, req->mlid);
	if (g) {
		if (!params_match(req, g))
			return -EINVAL;
		/* Realizable for this member too: its link carries the group */
		if (mtu_val(g->p.mtu) > mtu_val(port->mtu) ||
		    rate_val(g->p.rate) > rate_val(port->rate))
			return -EINVAL;
		if (!mc_port_has_pkey(port, g->p.pkey))
			return -EINVAL;
	} else {
		/* A group that does not exist: can the request create it at all? */
		if ((req->has & MC_CREATE_NEEDS) != MC_CREATE_NEEDS)
			return -ENODATA;
		if (!mc_port_has_pkey(port, req->p.pkey))
			return -EINVAL;
		r = group_create(db, req, port, &g);
		if (r < 0)
			return r;
	}
	m = mc_group_member(g, port->guid);
	js = (uint8_t)((m ? m->join_state : 0) | req->join_state);
	r = member_set(g, port->guid, js, req->proxy);
	if (r < 0) {
		if (!g->nmembers && !g->permanent)
			group_delete(db, g);
		return r;
	}
	if (!m || m->join_state != js)
		mc_db_touch(db, g->mlid);
	*out = g;
	*state = js;
	return 0;
}

int mc_leave(struct mc_db *db, const struct mc_req *req, struct mc_group *out,
	     uint8_t *state, bool *deleted)
{
	struct mc_group *g = NULL;
	const struct mc_member *m;
	uint8_t bits, js;
	int r;

	*deleted = false;
	if ((req->has & (MC_HAS_PORT_GID | MC_HAS_JOIN_STATE)) !=
	    (MC_HAS_PORT_GID | MC_HAS_JOIN_STATE))
		return -ENODATA;
	if ((req->has & MC_HAS_MGID) && !mgid_zero(req->mgid))
		g = mc_db_find(db, req->mgid);
	else if (req->has & MC_HAS_MLID)
		g = mc_db_by_mlid(db, req->mlid);
	else
		return -ENODATA;
	if (!g)
		return -EINVAL;
	m = mc_group_member(g, req->port_guid);
	bits = m ? (uint8_t)(m->join_state & req->join_state) : 0;
	/* A leave of a group one is not in, or of bits one does not hold */
	if (!bits)
		return -EINVAL;
	js = (uint8_t)(m->join_state & ~bits);
	r = member_set(g, req->port_guid, js, m->proxy);
	if (r < 0)
		return r;
	mc_db_touch(db, g->mlid);
	*out = *g;
	out->members = NULL;
	out->nmembers = out->cap = 0;
	out->hnext = NULL;
	*state = js;
	if (!g->holders && !g->permanent) {
		/* Nobody holds it: non-members and send-only non-members go with it */
		group_delete(db, g);
		*deleted = true;
	}
	return 0;
}

size_t mc_db_purge(struct mc_db *db, bool (*keep)(void *ctx, uint64_t guid, uint16_t pkey),
		   void *ctx)
{
	size_t dropped = 0;

	for (unsigned int i = bits_next(db->used, 0); i < MLID_COUNT; i = bits_next(db->used, i + 1)) {
		struct mc_group *g = db->by_mlid[i];
		uint32_t k = 0;

		for (uint32_t j = 0; j < g->nmembers; j++) {
			if (keep(ctx, g->members[j].guid, g->p.pkey)) {
				g->members[k++] = g->members[j];
				continue;
			}
			if (g->members[j].join_state & MC_JOIN_HOLDS)
				g->holders--;
			dropped++;
		}
		if (k == g->nmembers)
			continue;
		g->nmembers = k;
		mc_db_touch(db, g->mlid);
		if (!g->holders && !g->permanent)
			group_delete(db, g);
	}
	return dropped;
}
