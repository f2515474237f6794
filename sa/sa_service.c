// SPDX-License-Identifier: MIT
/*
 * ServiceRecord (IBA 15.2.5.14): Set registers a service for a lease,
 * Delete removes it, Get and GetTable find it. A record is known by
 * ServiceID, ServiceGID and ServiceP_Key. The rules smd keeps:
 *  - a port registers and deletes services of its own GID (its port GUID
 *    or an alias GUID of it); any GID only with the trusted SM_Key;
 *  - a request whose ServiceGID names the requesting port's own GUID (or
 *    alias) is taken whatever its subnet prefix (clients that write the
 *    prefix byte-swapped, or another subnet's, mean their own port: OpenSM
 *    takes them too) and the record keeps the subnet's prefix; any other
 *    GID must carry the subnet's prefix or the link-local one;
 *  - ServiceP_Key must be a P_Key the registering port holds; a requester
 *    sees only services in partitions it shares (one of the two a full
 *    member), so records are not handed out across partitions;
 *  - a record registered with a non-zero ServiceKey is replaced or deleted
 *    only by a request carrying that key (ERR_REQ_DENIED otherwise), and
 *    its key is shown only to its own port and to trusted requesters;
 *  - ServiceLease counts seconds from the Set (0xFFFFFFFF: no end; not in
 *    the component mask: no end); answers carry what is left of it;
 *  - the owner (smd/services.c) keeps every change in SQLite, so services
 *    survive a restart with the rest of their lease.
 * Limits: SVC_MAX records in all, SVC_PER_PORT registered by one port
 * (ERR_NO_RESOURCES past them). The port is the physical port ServiceGID
 * names: its port GUID and every alias GUID count together.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "util/log.h"
#include "sa/sa_int.h"

#ifndef SVC_MAX			/* tests/bench/svc_bench.sh raises it */
#define SVC_MAX		16384
#endif
#define SVC_PER_PORT	256

struct svc {
	uint8_t rec[SR_SIZE];		/* as registered; lease field as given */
	uint64_t id;
	uint8_t gid[16];
	uint16_t pkey;
	uint64_t guid;			/* the GUID ServiceGID names */
	uint64_t owner;			/* the physical port charged (its port GUID) */
	uint64_t expires_us;		/* monotonic; 0: never */
	uint32_t next_id, next_owner;	/* the index's chains: slot + 1, 0: end */
};

/*
 * The records and two indexes over them, chains of slots hashed by
 * ServiceID and by owning port, so that a Set, a Delete and a Get that
 * names the ServiceID cost O(1) however many services there are (a walk of
 * 16,000 records for each was 42 us per Set and 650 us per Get: a host
 * sending them could keep smd busy alone). The hash is keyed per SA: a
 * client cannot choose IDs that share one chain.
 */
struct sa_svc_db {
	struct svc *v;
	size_t n, cap;
	uint32_t *by_id, *by_owner;	/* chain heads (slot + 1), nbuckets each */
	size_t nbuckets;
	uint64_t seed;
	/*
	 * 0: no service has a lease end; else at most the earliest one. A Set
	 * only lowers it and a Delete leaves it (O(1) each); the expiry walk,
	 * O(n), makes it exact again, so one that is early costs one walk.
	 */
	uint64_t next_us;
};

static uint64_t now_us(const struct sa *sa)
{
	return sa_clock(sa);
}

static struct sa_svc_db *db_of(struct sa *sa)
{
	struct sa_svc_db *db = sa->svc;

	if (db)
		return db;
	db = calloc(1, sizeof(*db));
	if (!db)
		return NULL;
	if (getrandom(&db->seed, sizeof(db->seed), GRND_NONBLOCK) != sizeof(db->seed))
		db->seed = now_us(sa) ^ (uint64_t)(uintptr_t)db;
	sa->svc = db;
	return db;
}

void sa_service_free(struct sa *sa)
{
	if (!sa->svc)
		return;
	free(sa->svc->v);
	free(sa->svc->by_id);
	free(sa->svc->by_owner);
	free(sa->svc);
	sa->svc = NULL;
}

static size_t bucket(const struct sa_svc_db *db, uint64_t key)
{
	uint64_t h = (key ^ db->seed) * UINT64_C(0x9e3779b97f4a7c15);

	h ^= h >> 31;
	h *= UINT64_C(0xbf58476d1ce4e5b9);
	h ^= h >> 29;
	return (size_t)h & (db->nbuckets - 1);
}

static void link_slot(struct sa_svc_db *db, size_t i)
{
	struct svc *v = &db->v[i];
	uint32_t *hi = &db->by_id[bucket(db, v->id)], *ho = &db->by_owner[bucket(db, v->owner)];

	v->next_id = *hi;
	*hi = (uint32_t)i + 1;
	v->next_owner = *ho;
	*ho = (uint32_t)i + 1;
}

/* Take slot i out of both chains */
static void unlink_slot(struct sa_svc_db *db, size_t i)
{
	struct svc *v = &db->v[i];
	uint32_t *l;

	for (l = &db->by_id[bucket(db, v->id)]; *l != i + 1; l = &db->v[*l - 1].next_id)
		;
	*l = v->next_id;
	for (l = &db->by_owner[bucket(db, v->owner)]; *l != i + 1; l = &db->v[*l - 1].next_owner)
		;
	*l = v->next_owner;
}

/* One bucket per slot of the array at least: rebuilt when the array grows */
static int reindex(struct sa_svc_db *db)
{
	size_t nb = 16;
	uint32_t *bi, *bo;

	while (nb < db->cap)
		nb *= 2;
	bi = calloc(nb, sizeof(*bi));
	bo = calloc(nb, sizeof(*bo));
	if (!bi || !bo) {
		free(bi);
		free(bo);
		return -ENOMEM;
	}
	free(db->by_id);
	free(db->by_owner);
	db->by_id = bi;
	db->by_owner = bo;
	db->nbuckets = nb;
	for (size_t i = 0; i < db->n; i++)
		link_slot(db, i);
	return 0;
}

size_t sa_service_count(const struct sa *sa)
{
	return sa->svc ? sa->svc->n : 0;
}

static struct svc *find(struct sa_svc_db *db, uint64_t id, const uint8_t gid[16], uint16_t pkey)
{
	if (!db || !db->n)
		return NULL;
	for (uint32_t k = db->by_id[bucket(db, id)]; k; k = db->v[k - 1].next_id) {
		struct svc *v = &db->v[k - 1];

		if (v->id == id && v->pkey == pkey && !memcmp(v->gid, gid, 16))
			return v;
	}
	return NULL;
}

/* The services charged to a physical port */
static size_t owned_by(const struct sa_svc_db *db, uint64_t owner)
{
	size_t n = 0;

	if (!db || !db->n)
		return 0;
	for (uint32_t k = db->by_owner[bucket(db, owner)]; k; k = db->v[k - 1].next_owner)
		n += db->v[k - 1].owner == owner;
	return n;
}

/* Seconds of lease left (rounded up), or SR_LEASE_INFINITE */
static uint32_t lease_left(const struct svc *v, uint64_t now)
{
	uint64_t left;

	if (!v->expires_us)
		return SR_LEASE_INFINITE;
	left = v->expires_us > now ? (v->expires_us - now + 999999) / 1000000 : 0;
	return left >= SR_LEASE_INFINITE ? SR_LEASE_INFINITE - 1 : (uint32_t)left;
}

/* ServiceName for the log: printable, at most 64 characters */
static const char *svc_name(const uint8_t rec[SR_SIZE], char out[65])
{
	size_t i;

	for (i = 0; i < 64 && rec[48 + i]; i++)
		out[i] = rec[48 + i] >= 0x20 && rec[48 + i] < 0x7f ? (char)rec[48 + i] : '?';
	out[i] = 0;
	return out;
}

static void changed(struct sa *sa, const struct svc *v, bool present)
{
	if (sa->env->service_changed)
		sa->env->service_changed(sa->env->ctx, v->rec, present ?
					 lease_left(v, now_us(sa)) : 0, present);
}

/* Lower next_us to t, a lease end (0: none, nothing to do) */
static void next_lower(struct sa_svc_db *db, uint64_t t)
{
	if (t && (!db->next_us || t < db->next_us))
		db->next_us = t;
}

/* Remove v[i]: the last record takes its place (O(1)); next_us stays a lower bound */
static void drop(struct sa *sa, size_t i, bool tell)
{
	struct sa_svc_db *db = sa->svc;
	struct svc gone = db->v[i];

	unlink_slot(db, i);
	if (i != db->n - 1) {
		/* The last record moves into slot i: its chains point there now */
		unlink_slot(db, db->n - 1);
		db->v[i] = db->v[db->n - 1];
		link_slot(db, i);
	}
	db->n--;
	if (tell)
		changed(sa, &gone, false);
}

/*
 * One walk, O(n) however many leases end: from the end down, so the record
 * a drop moves into slot i has been looked at already, and the survivors'
 * earliest lease end is next_us after it.
 */
uint64_t sa_service_next(const struct sa *sa)
{
	return sa->svc ? sa->svc->next_us : 0;
}

void sa_service_expire(struct sa *sa)
{
	struct sa_svc_db *db = sa->svc;
	uint64_t now;

	if (!db || !db->next_us)
		return;
	now = now_us(sa);
	if (now < db->next_us)
		return;
	db->next_us = 0;
	for (size_t i = db->n; i-- > 0;) {
		if (db->v[i].expires_us && db->v[i].expires_us <= now) {
			char name[65];

			log_debug("SA: the lease of service 0x%016" PRIx64 " \"%s\" ended",
				  db->v[i].id, svc_name(db->v[i].rec, name));
			drop(sa, i, true);
		} else {
			next_lower(db, db->v[i].expires_us);
		}
	}
}

/*
 * Add or replace; the caller checked the rules. owner: the physical port
 * the record is charged to (SVC_PER_PORT).
 */
static struct svc *put(struct sa *sa, const uint8_t rec[SR_SIZE], uint64_t guid,
		       uint64_t owner, uint32_t lease)
{
	struct sa_svc_db *db = db_of(sa);
	struct service_record r;
	struct svc *v;
	size_t i;

	if (!db)
		return NULL;
	service_record_decode(rec, &r);
	v = find(db, r.id, r.gid, r.pkey);
	if (v) {
		i = (size_t)(v - db->v);
		unlink_slot(db, i);
	} else {
		if (db->n == db->cap) {
			size_t ncap = db->cap ? 2 * db->cap : 16;
			struct svc *nv = realloc(db->v, ncap * sizeof(*nv));

			if (!nv)
				return NULL;
			db->v = nv;
			db->cap = ncap;
			if (reindex(db) < 0)
				return NULL;
		}
		i = db->n++;
	}
	v = &db->v[i];
	memset(v, 0, sizeof(*v));
	memcpy(v->rec, rec, SR_SIZE);
	v->id = r.id;
	memcpy(v->gid, r.gid, 16);
	v->pkey = r.pkey;
	v->guid = guid;
	v->owner = owner;
	v->expires_us = lease == SR_LEASE_INFINITE ? 0 :
			now_us(sa) + (uint64_t)lease * 1000000 + (lease ? 0 : 1);
	link_slot(db, i);
	next_lower(db, v->expires_us);
	return v;
}

int sa_service_restore(struct sa *sa, const uint8_t rec[SR_SIZE], uint32_t lease)
{
	struct service_record r;
	uint64_t prefix, guid, owner;

	if (sa->svc && sa->svc->n >= SVC_MAX)
		return -ENOSPC;
	service_record_decode(rec, &r);
	gid_decode(r.gid, &prefix, &guid);
	/* Charged to the port an alias belongs to when that is known yet */
	owner = sa_alias_owner(sa, guid);
	return put(sa, rec, guid, owner ? owner : guid, lease) ? 0 : -ENOMEM;
}

/* What a requester sees of v: the lease left, the key only if it may */
static void answer_form(const struct sa *sa, const struct svc *v, bool see_key, uint64_t now,
			uint8_t out[SR_SIZE])
{
	memcpy(out, v->rec, SR_SIZE);
	sa_record_set_field(SA_ATTR_SERVICE_RECORD, out, SR_FIELD_LEASE, lease_left(v, now));
	if (!see_key)
		memset(out + 32, 0, 16);
}

static bool key_set(const uint8_t rec[SR_SIZE])
{
	static const uint8_t zero[16];

	return memcmp(rec + 32, zero, 16) != 0;
}

/*
 * Offer v if the requester may see it and it matches: the fields a
 * requester sees as stored are compared first (cheap), the answer's form
 * (lease left, ServiceKey hidden) is made for those that pass
 */
static int offer(struct sa *sa, const struct sa_mad *req, const struct fab_port *who,
		 bool trusted, uint64_t now, const struct svc *v, struct records *r)
{
	uint64_t m = req->comp_mask & ~(SR_CM_LEASE | SR_CM_KEY);
	uint8_t rec[SR_SIZE];

	if (!trusted && !sa_pkey_shared(who, v->pkey))
		return 0;
	if (m && !sa_record_match(SA_ATTR_SERVICE_RECORD, v->rec, req->data, m))
		return 0;
	answer_form(sa, v, trusted || (who && sa_port_owns_guid(sa, who, v->guid)), now, rec);
	return sa_rec_offer(r, req, rec);
}

int sa_service_collect(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
		       struct records *r)
{
	const struct sa_svc_db *db = sa->svc;
	const struct fab_port *who = fabric_port_by_lid(sa->f, from->slid);
	bool trusted = sa_trusted(sa, req);
	uint64_t now = now_us(sa);
	int e = 0;

	if (!db || !db->n || (!who && !trusted))
		return 0;
	if (req->comp_mask & SR_CM_ID) {
		/* The ServiceID is named: its chain holds every candidate */
		uint64_t id = sa_record_field(SA_ATTR_SERVICE_RECORD, req->data, 0);

		for (uint32_t k = db->by_id[bucket(db, id)]; k && !e; k = db->v[k - 1].next_id)
			if (db->v[k - 1].id == id)
				e = offer(sa, req, who, trusted, now, &db->v[k - 1], r);
		return e;
	}
	for (size_t i = 0; i < db->n && !e; i++)
		e = offer(sa, req, who, trusted, now, &db->v[i], r);
	return e;
}

uint16_t sa_service_modify(struct sa *sa, const struct sa_mad *req, const struct mad_addr *from,
			   uint8_t out[SR_SIZE])
{
	const struct fab_port *who = fabric_port_by_lid(sa->f, from->slid), *port;
	bool trusted = sa_trusted(sa, req), set = req->hdr.method == SA_METHOD_SET;
	uint64_t m = req->comp_mask, prefix, guid;
	struct sa_svc_db *db = sa->svc;
	uint8_t rec[SR_SIZE];
	struct service_record r;
	struct svc *v;
	uint32_t lease;
	char name[65];

	if ((m & (SR_CM_ID | SR_CM_GID)) != (SR_CM_ID | SR_CM_GID))
		return SA_STATUS_INSUFFICIENT;
	memcpy(rec, req->data, SR_SIZE);
	service_record_decode(rec, &r);
	gid_decode(r.gid, &prefix, &guid);
	port = sa_port_by_any_guid(sa, guid);
	if (port && port == who && prefix != sa->env->subnet_prefix) {
		/* The requester's own GUID: its port, stored under the subnet's prefix */
		prefix = sa->env->subnet_prefix;
		gid_encode(prefix, guid, r.gid);
		memcpy(rec + 8, r.gid, 16);
	} else if (!port || (prefix != sa->env->subnet_prefix &&
			     prefix != UINT64_C(0xfe80000000000000))) {
		return SA_STATUS_INVALID_GID;
	}
	/* A port registers and deletes its own services only (or the SM_Key is shown) */
	if (!trusted && who != port)
		return SA_STATUS_DENIED;
	if (!(m & SR_CM_PKEY)) {
		r.pkey = 0xffff;
		sa_record_set_field(SA_ATTR_SERVICE_RECORD, rec, SR_FIELD_PKEY, r.pkey);
	}
	v = find(db, r.id, r.gid, r.pkey);
	/* IBA 15.2.5.14: a ServiceKey guards its record */
	if (v && key_set(v->rec) && memcmp(v->rec + 32, rec + 32, 16))
		return SA_STATUS_DENIED;
	if (!set) {
		if (!v)
			return SA_STATUS_NO_RECORDS;
		answer_form(sa, v, true, now_us(sa), out);
		log_debug("SA: service 0x%016" PRIx64 " \"%s\" of port 0x%016" PRIx64 " deleted",
			  v->id, svc_name(v->rec, name), v->guid);
		drop(sa, (size_t)(v - db->v), true);
		return 0;
	}
	/* The partition the service is offered in: one its port holds */
	if (!sa_port_has_pkey(port, r.pkey))
		return SA_STATUS_REQ_INVALID;
	lease = (m & SR_CM_LEASE) ? r.lease : SR_LEASE_INFINITE;
	sa_record_set_field(SA_ATTR_SERVICE_RECORD, rec, SR_FIELD_LEASE, lease);
	/* Per port, not per GID: aliases (up to 31) share the port's */
	if (!v && ((db && db->n >= SVC_MAX) || owned_by(db, port->guid) >= SVC_PER_PORT))
		return SA_STATUS_NO_RESOURCES;
	v = put(sa, rec, guid, port->guid, lease);
	if (!v)
		return SA_STATUS_NO_RESOURCES;
	answer_form(sa, v, true, now_us(sa), out);
	log_debug("SA: service 0x%016" PRIx64 " \"%s\" registered for port 0x%016" PRIx64
		  ", P_Key 0x%04x, lease %u s", v->id, svc_name(v->rec, name), guid, r.pkey, lease);
	changed(sa, v, true);
	return 0;
}
