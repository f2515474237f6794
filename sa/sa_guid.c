// SPDX-License-Identifier: MIT
/*
 * GUIDInfoRecord (IBA 15.2.5.18) and alias GUIDs. A port's GUIDInfo table
 * (IBA 14.2.5.5) holds its port GUID at index 0 and up to GUIDCap - 1 more
 * GUIDs the SM assigns: the GIDs of virtual functions (SR-IOV), which hosts
 * ask for with GUIDInfoRecord Set and give back with Delete.
 *  - the request names the port by LID and the block (8 GUIDs) by number;
 *    each GUID it sets is its own component (bit 4 + n);
 *  - a port sets its own table only (or the trusted SM_Key is shown);
 *  - index 0 is the port GUID and is never changed; an index at or past
 *    GUIDCap is refused with ERR_NO_RESOURCES (the table is full); a GUID
 *    any port or alias already has is refused with ERR_REQ_INVALID; a GUID
 *    of 0 asks the SA to pick one (unique on the subnet);
 *  - the block is written to the port with a GUIDInfo Set SMP and the
 *    answer is what the port then holds, as its SMA reports it; a port that
 *    refuses the Set leaves the table as it was (ERR_NO_RESOURCES);
 *  - a block this smd has not seen yet (it started after the port got its
 *    aliases, from an earlier smd or another SM) is read from the port
 *    first (GUIDInfo Get), so that the Set keeps the GUIDs already there;
 *  - the aliases of a port that leaves the fabric go at the next sweep.
 * GUIDInfoRecord Get/GetTable show every endport's table as smd holds it;
 * a query that names a port (LID) whose blocks smd has not seen reads them
 * from the port first, one Get at a time (a query of every port does not).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "sa/sa_int.h"

/* A port with aliases: its table (index 0 unused: the port GUID) */
struct alias_port {
	uint64_t guid;
	uint16_t cap;			/* entries, GUIDCap when it was set */
	uint32_t known;			/* blocks read from or written to the port */
	uint64_t *g;			/* [cap], 0: free */
};

struct gi_pending {
	struct gi_pending *next;
	struct sa *sa;
	struct sa_mad req;
	struct mad_addr from;
	uint64_t port_guid;
	uint8_t block;
	bool reading;			/* a Get of a block not seen yet, the Set after it */
	bool query;			/* Gets of the blocks not seen, then the records */
	bool one_block;			/* the query names a block: want_block */
	uint8_t want_block;
	uint64_t want[8];		/* the block to write */
};

struct sa_guid_db {
	struct alias_port *v;
	size_t n, cap;
	/* Reverse index: alias -> port GUID, open addressing (0: empty) */
	uint64_t (*idx)[2];
	size_t isize, count;
	struct gi_pending *pending;
	unsigned int npending;
};

#define GI_PENDING_MAX	64

static size_t hash64(uint64_t g, size_t size)
{
	g ^= g >> 29;
	g *= UINT64_C(0xbf58476d1ce4e5b9);
	return (size_t)(g >> 32) & (size - 1);
}

static struct sa_guid_db *gdb(struct sa *sa)
{
	if (!sa->gi)
		sa->gi = calloc(1, sizeof(*sa->gi));
	return sa->gi;
}

static int reindex(struct sa_guid_db *db)
{
	size_t count = 0, size = 16;
	uint64_t (*idx)[2];

	for (size_t i = 0; i < db->n; i++)
		for (unsigned int k = 1; k < db->v[i].cap; k++)
			count += db->v[i].g[k] != 0;
	while (size < 2 * count)
		size *= 2;
	idx = calloc(size, sizeof(*idx));
	if (!idx)
		return -ENOMEM;
	for (size_t i = 0; i < db->n; i++)
		for (unsigned int k = 1; k < db->v[i].cap; k++) {
			uint64_t a = db->v[i].g[k];
			size_t h;

			if (!a)
				continue;
			for (h = hash64(a, size); idx[h][0]; h = (h + 1) & (size - 1))
				;
			idx[h][0] = a;
			idx[h][1] = db->v[i].guid;
		}
	free(db->idx);
	db->idx = idx;
	db->isize = size;
	db->count = count;
	return 0;
}

uint64_t sa_alias_owner(const struct sa *sa, uint64_t guid)
{
	const struct sa_guid_db *db = sa->gi;

	if (!db || !db->count || !guid)
		return 0;
	for (size_t h = hash64(guid, db->isize);; h = (h + 1) & (db->isize - 1)) {
		if (!db->idx[h][0])
			return 0;
		if (db->idx[h][0] == guid)
			return db->idx[h][1];
	}
}

static struct alias_port *aliases_of(const struct sa_guid_db *db, uint64_t guid)
{
	for (size_t i = 0; db && i < db->n; i++)
		if (db->v[i].guid == guid)
			return &db->v[i];
	return NULL;
}

size_t sa_alias_count(const struct sa *sa)
{
	return sa->gi ? sa->gi->count : 0;
}

void sa_guid_free(struct sa *sa)
{
	struct sa_guid_db *db = sa->gi;

	if (!db)
		return;
	for (size_t i = 0; i < db->n; i++)
		free(db->v[i].g);
	/* SMPs still out never call back: the owner stops them first */
	while (db->pending) {
		struct gi_pending *q = db->pending;

		db->pending = q->next;
		free(q);
	}
	free(db->v);
	free(db->idx);
	free(db);
	sa->gi = NULL;
}

/* Ports that left the model take their aliases with them */
void sa_guid_prune(struct sa *sa)
{
	struct sa_guid_db *db = sa->gi;
	size_t kept = 0, before;

	if (!db || !sa->f)
		return;
	before = db->n;
	for (size_t i = 0; i < db->n; i++) {
		if (sa_port_by_guid(sa, db->v[i].guid)) {
			db->v[kept++] = db->v[i];
			continue;
		}
		log_info("SA: port 0x%016llx left: its alias GUIDs are released",
			 (unsigned long long)db->v[i].guid);
		free(db->v[i].g);
	}
	db->n = kept;
	if (kept != before && reindex(db) < 0)
		log_error("SA: out of memory indexing alias GUIDs");
}

static int blocks_of(const struct fab_port *p)
{
	return p->pi.guid_cap > 8 ? (p->pi.guid_cap + 7) / 8 : 1;
}

/* Block b of port p's table as smd holds it */
static void block_of(const struct sa *sa, const struct fab_port *p, unsigned int b,
		     uint64_t g[8])
{
	const struct alias_port *ap = aliases_of(sa->gi, p->guid);

	memset(g, 0, 8 * sizeof(*g));
	for (unsigned int k = 0; k < 8; k++) {
		unsigned int i = b * 8 + k;

		if (i == 0)
			g[k] = p->guid;
		else if (ap && i < ap->cap)
			g[k] = ap->g[i];
	}
}

static int guid_records(struct sa *sa, const struct fab_port *p, const struct sa_mad *req,
			struct records *r)
{
	int e = 0;

	for (int b = 0; b < blocks_of(p) && !e; b++) {
		uint64_t g[8];
		uint8_t rec[72];

		block_of(sa, p, (unsigned int)b, g);
		sa_guid_info_record_encode(p->lid, (uint8_t)b, g, rec);
		e = sa_rec_offer(r, req, rec);
	}
	return e;
}

int sa_guid_collect(struct sa *sa, const struct sa_mad *req, struct records *r)
{
	const struct fabric *f = sa->f;
	int e = 0;

	if (req->comp_mask & 1) {
		uint16_t lid = (uint16_t)sa_record_field(SA_ATTR_GUID_INFO_RECORD, req->data, 0);
		const struct fab_port *p = fabric_port_by_lid(f, lid);

		return p && p->lid == lid && sa_part_visible(sa, p) ?
		       guid_records(sa, p, req, r) : 0;
	}
	for (size_t i = 0; i < f->nnodes && !e; i++) {
		const struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 0; pn <= n->num_ports && !e; pn++) {
			const struct fab_port *p = &n->ports[pn];

			/* Partitions: only ports the requester shares one with */
			if (fabric_is_endport(p) && p->lid && sa_part_visible(sa, p))
				e = guid_records(sa, p, req, r);
		}
	}
	return e;
}

/* Is g free to become an alias of port owner (nobody else's GUID or alias)? */
static bool guid_free(const struct sa *sa, uint64_t g, uint64_t owner)
{
	uint64_t o = sa_alias_owner(sa, g);

	if (o && o != owner)
		return false;
	return !sa_port_by_guid(sa, g) && !fabric_find(sa->f, g);
}

/*
 * A GUID for index i of port p's table: the port's own top 40 bits, 0xfe,
 * and a counter, the first not in use (deterministic, unique on the subnet)
 */
static uint64_t pick_guid(const struct sa *sa, const struct fab_port *p, const uint64_t *taken,
			  unsigned int i)
{
	uint64_t base = (p->guid & UINT64_C(0xffffffffff000000)) | UINT64_C(0xfe0000);

	for (uint32_t k = 0; k < 0x10000; k++) {
		uint64_t g = base | ((k + i) & 0xffff);
		bool dup = false;

		for (unsigned int j = 0; j < 8; j++)
			dup |= taken[j] == g;
		if (!dup && g != p->guid && guid_free(sa, g, p->guid))
			return g;
	}
	return 0;
}

static void gi_unlink(struct sa_guid_db *db, struct gi_pending *q)
{
	for (struct gi_pending **pp = &db->pending; *pp; pp = &(*pp)->next)
		if (*pp == q) {
			*pp = q->next;
			db->npending--;
			return;
		}
}

/* Keep block b of port guid as the port now holds it */
static int store_block(struct sa *sa, const struct fab_port *p, unsigned int b,
		       const uint64_t g[8])
{
	struct sa_guid_db *db = gdb(sa);
	struct alias_port *ap;
	unsigned int cap = p->pi.guid_cap ? p->pi.guid_cap : 1;

	if (!db)
		return -ENOMEM;
	ap = aliases_of(db, p->guid);
	if (!ap) {
		if (db->n == db->cap) {
			size_t ncap = db->cap ? 2 * db->cap : 8;
			struct alias_port *nv = realloc(db->v, ncap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			db->v = nv;
			db->cap = ncap;
		}
		ap = &db->v[db->n];
		ap->guid = p->guid;
		ap->cap = (uint16_t)cap;
		ap->known = 0;
		ap->g = calloc(cap, sizeof(*ap->g));
		if (!ap->g)
			return -ENOMEM;
		db->n++;
	}
	for (unsigned int k = 0; k < 8; k++) {
		unsigned int i = b * 8 + k;

		if (i && i < ap->cap)
			ap->g[i] = g[k];
	}
	if (b < 32)
		ap->known |= UINT32_C(1) << b;
	return reindex(db);
}

/* Has this smd read or written block b of port p since the port came? */
static bool block_known(const struct sa *sa, const struct fab_port *p, unsigned int b)
{
	const struct alias_port *ap = aliases_of(sa->gi, p->guid);

	return ap && b < 32 && (ap->known & (UINT32_C(1) << b));
}

/* A request waiting for port p's answer about block b; NULL when out of memory */
static struct gi_pending *gi_pending_new(struct sa *sa, const struct sa_mad *req,
					 const struct mad_addr *from, const struct fab_port *p,
					 unsigned int b)
{
	struct gi_pending *q = calloc(1, sizeof(*q));

	if (!q)
		return NULL;
	q->sa = sa;
	q->req = *req;
	q->from = *from;
	q->port_guid = p->guid;
	q->block = (uint8_t)b;
	return q;
}

/*
 * The block a port answered, kept as its table (IBA 14.2.5.5: what the port
 * holds is the table; index 0 is its port GUID): 0, or -errno when there is
 * none (the SMP failed, the port left, no memory)
 */
static int gi_take(struct gi_pending *q, int status, const uint8_t data[64],
		   const struct fab_port **port, uint64_t held[8])
{
	struct sa *sa = q->sa;
	const struct fab_port *p = sa->f ? sa_port_by_guid(sa, q->port_guid) : NULL;

	*port = p;
	if (status)
		return status < 0 ? status : -EIO;
	if (!p)
		return -ENODEV;
	guid_block_decode(data, held);
	if (q->block == 0)
		held[0] = p->guid;
	return store_block(sa, p, q->block, held);
}

/* A request that needed the port's answer and got none: refused, q freed */
static void gi_refuse(struct gi_pending *q, int err, const char *what)
{
	struct sa *sa = q->sa;

	log_warn("SA: port 0x%016llx did not %s GUIDInfo block %u (%s): alias GUIDs refused",
		 (unsigned long long)q->port_guid, what, q->block,
		 err == -ENODEV ? "it left the fabric" : strerror(-err));
	sa_respond_status(sa, &q->req, &q->from, SA_STATUS_NO_RESOURCES);
	free(q);
}

static void gi_done(void *arg, int status, const uint8_t data[64])
{
	struct gi_pending *q = arg;
	struct sa *sa = q->sa;
	const struct fab_port *p;
	uint64_t held[8];
	uint8_t rec[72];
	int r;

	gi_unlink(sa->gi, q);
	r = gi_take(q, status, data, &p, held);
	if (r < 0) {
		gi_refuse(q, r, "take");
		return;
	}
	if (memcmp(held + (q->block ? 0 : 1), q->want + (q->block ? 0 : 1),
		   (q->block ? 8 : 7) * sizeof(*held)))
		log_warn("SA: port 0x%016llx holds other GUIDs in GUIDInfo block %u than were "
			 "written", (unsigned long long)q->port_guid, q->block);
	log_debug("SA: GUIDInfo block %u of port 0x%016llx written", q->block,
		  (unsigned long long)q->port_guid);
	sa_guid_info_record_encode(p->lid, q->block, held, rec);
	sa_respond_record(sa, &q->req, &q->from, q->req.hdr.method == SA_METHOD_DELETE ?
			  SA_METHOD_DELETE_RESP : SA_METHOD_GET_RESP, rec, 72);
	free(q);
}

static void gi_read_done(void *arg, int status, const uint8_t data[64]);

/* Queue q (its request, port and block set) and send its SMP: 0, or the status to answer */
static uint16_t gi_send(struct sa *sa, struct gi_pending *q, const struct fab_port *p)
{
	struct sa_guid_db *db = sa->gi;
	uint8_t data[SMP_DATA_SIZE] = { 0 };

	q->next = db->pending;
	db->pending = q;
	db->npending++;
	if (!q->reading)
		guid_block_encode(q->want, data);
	/* IBA 14.2.5.5: the attribute modifier is the block number */
	if (sa->env->smp(sa->env->ctx, p, q->reading ? MAD_METHOD_GET : MAD_METHOD_SET,
			 SMP_ATTR_GUID_INFO, q->block, data, q->reading ? gi_read_done : gi_done,
			 q) < 0) {
		gi_unlink(db, q);
		free(q);
		return SA_STATUS_NO_RESOURCES;
	}
	return 0;	/* q may be gone already: the answer can come at once */
}

/* The block to write for req (block b of port p, as smd knows it), and its Set */
static uint16_t gi_write(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
			 const struct fab_port *p, unsigned int b)
{
	bool set = req->hdr.method == SA_METHOD_SET;
	uint64_t m = req->comp_mask, want[8];
	struct gi_pending *q;

	block_of(sa, p, b, want);
	for (unsigned int k = 0; k < 8; k++) {
		unsigned int i = b * 8 + k;
		uint64_t g = sa_record_field(SA_ATTR_GUID_INFO_RECORD, req->data, 4 + k);

		if (!(m & GIR_CM_GUID(k)))
			continue;
		if (i == 0)
			return SA_STATUS_REQ_INVALID;	/* the port GUID stays */
		if (i >= p->pi.guid_cap)
			return SA_STATUS_NO_RESOURCES;	/* past GUIDCap: the table is full */
		if (!set) {
			want[k] = 0;
			continue;
		}
		if (!g) {
			g = pick_guid(sa, p, want, i);
			if (!g)
				return SA_STATUS_NO_RESOURCES;
		} else if (g == p->guid || !guid_free(sa, g, p->guid)) {
			return SA_STATUS_REQ_INVALID;
		}
		for (unsigned int j = 0; j < 8; j++)
			if (j != k && want[j] == g)
				return SA_STATUS_REQ_INVALID;
		want[k] = g;
	}
	q = gi_pending_new(sa, req, from, p, b);
	if (!q)
		return SA_STATUS_NO_RESOURCES;
	memcpy(q->want, want, sizeof(want));
	return gi_send(sa, q, p);
}

/* The block as the port holds it, read before a Set: now the Set */
static void gi_read_done(void *arg, int status, const uint8_t data[64])
{
	struct gi_pending *q = arg;
	struct sa *sa = q->sa;
	const struct fab_port *p;
	uint64_t held[8];
	uint16_t st;
	int r;

	gi_unlink(sa->gi, q);
	r = gi_take(q, status, data, &p, held);
	if (r < 0) {
		gi_refuse(q, r, "answer a Get of");
		return;
	}
	st = gi_write(sa, &q->req, &q->from, p, q->block);
	if (st)
		sa_respond_status(sa, &q->req, &q->from, st);
	free(q);
}

uint16_t sa_guid_modify(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from)
{
	const struct fab_port *who = fabric_port_by_lid(sa->f, from->slid), *p;
	uint64_t m = req->comp_mask;
	struct sa_guid_db *db;
	struct gi_pending *q;
	uint16_t lid;
	unsigned int b;

	if (!sa->env->smp)
		return MAD_STATUS_METHOD_ATTR_UNSUPP;
	if ((m & 3) != 3 || !(m & (UINT64_C(0xff) << 4)))
		return SA_STATUS_INSUFFICIENT;
	lid = (uint16_t)sa_record_field(SA_ATTR_GUID_INFO_RECORD, req->data, 0);
	b = (unsigned int)sa_record_field(SA_ATTR_GUID_INFO_RECORD, req->data, 1);
	p = fabric_port_by_lid(sa->f, lid);
	if (!p || p->lid != lid)
		return SA_STATUS_NO_RECORDS;
	if (p->node->type == NODE_TYPE_SWITCH)
		return SA_STATUS_REQ_INVALID;
	/* A port keeps its own table; others only with the trusted SM_Key */
	if (p != who && !sa_trusted(sa, req))
		return SA_STATUS_DENIED;
	db = gdb(sa);
	if (!db)
		return SA_STATUS_NO_RESOURCES;
	if (db->npending >= GI_PENDING_MAX)
		return SA_STATUS_NO_RESOURCES;
	for (unsigned int k = 0; k < 8; k++) {
		unsigned int i = b * 8 + k;

		if (!(m & GIR_CM_GUID(k)))
			continue;
		if (i == 0)
			return SA_STATUS_REQ_INVALID;	/* the port GUID stays */
		if (i >= p->pi.guid_cap)
			return SA_STATUS_NO_RESOURCES;	/* past GUIDCap: the table is full */
	}
	if (block_known(sa, p, b))
		return gi_write(sa, req, from, p, b);
	/* Not seen yet: what the port holds first, so that the Set keeps it */
	q = gi_pending_new(sa, req, from, p, b);
	if (!q)
		return SA_STATUS_NO_RESOURCES;
	q->reading = true;
	return gi_send(sa, q, p);
}

/* ---- a query of one port: the blocks not seen yet read first ---- */

static void gi_query_next(struct gi_pending *q);

static void gi_query_done(void *arg, int status, const uint8_t data[64])
{
	struct gi_pending *q = arg;
	const struct fab_port *p;
	uint64_t held[8];

	/* A block the port does not give stays unknown: the answer says what smd knows */
	if (gi_take(q, status, data, &p, held) == -ENOMEM)
		log_error("SA: out of memory keeping a GUIDInfo block");
	q->block++;
	gi_query_next(q);
}

/* Send the Get of the next block not seen, or answer with the port's records */
static void gi_query_next(struct gi_pending *q)
{
	struct sa *sa = q->sa;
	const struct fab_port *p = sa->f ? sa_port_by_guid(sa, q->port_guid) : NULL;
	struct records recs = { .size = 72 };
	uint8_t data[SMP_DATA_SIZE] = { 0 };

	while (p && q->block < blocks_of(p) &&
	       ((q->one_block && q->block != q->want_block) || block_known(sa, p, q->block)))
		q->block++;
	if (p && q->block < blocks_of(p) && !(q->one_block && q->block > q->want_block)) {
		/* IBA 14.2.5.5: the attribute modifier is the block number */
		if (sa->env->smp(sa->env->ctx, p, MAD_METHOD_GET, SMP_ATTR_GUID_INFO, q->block,
				 data, gi_query_done, q) == 0)
			return;		/* q may be gone already */
		q->block = (uint8_t)blocks_of(p);
	}
	gi_unlink(sa->gi, q);
	if (!p) {
		sa_respond_status(sa, &q->req, &q->from, SA_STATUS_NO_RECORDS);
	} else {
		recs.max_n = q->req.hdr.method == SA_METHOD_GET ? 2 : 0;
		if (guid_records(sa, p, &q->req, &recs) < 0 &&
		    q->req.hdr.method != SA_METHOD_GET) {
			free(recs.buf);
			sa_respond_status(sa, &q->req, &q->from, SA_STATUS_NO_RESOURCES);
		} else {
			sa_respond_records(sa, &q->req, &q->from, &recs);
		}
	}
	free(q);
}

bool sa_guid_query(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from)
{
	const struct fab_port *p;
	struct sa_guid_db *db;
	struct gi_pending *q;
	bool one = req->comp_mask & 2, unseen = false;
	unsigned int b = 0;
	uint16_t lid;

	if (!sa->env->smp || !(req->comp_mask & 1))
		return false;
	lid = (uint16_t)sa_record_field(SA_ATTR_GUID_INFO_RECORD, req->data, 0);
	p = fabric_port_by_lid(sa->f, lid);
	/* Switch port 0 holds its GUID alone (no aliases): nothing to read */
	if (!p || p->lid != lid || p->node->type == NODE_TYPE_SWITCH || p->pi.guid_cap <= 1 ||
	    !sa_part_visible(sa, p))
		return false;
	if (one) {
		b = (unsigned int)sa_record_field(SA_ATTR_GUID_INFO_RECORD, req->data, 1);
		unseen = b < (unsigned int)blocks_of(p) && !block_known(sa, p, b);
	}
	for (int k = 0; !one && k < blocks_of(p); k++)
		unseen |= !block_known(sa, p, (unsigned int)k);
	db = gdb(sa);
	if (!unseen || !db || db->npending >= GI_PENDING_MAX)
		return false;	/* answered now, from what smd knows */
	q = gi_pending_new(sa, req, from, p, 0);
	if (!q)
		return false;
	q->query = true;
	q->one_block = one;
	q->want_block = (uint8_t)b;
	q->next = db->pending;
	db->pending = q;
	db->npending++;
	gi_query_next(q);
	return true;
}
