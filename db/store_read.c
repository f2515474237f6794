// SPDX-License-Identifier: MIT
/*
 * Reading the store back: the sweeps, events and LIDs for smctl, the saved
 * fabric, and the rows smd keeps across restarts (multicast groups,
 * services, partitions).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "db/store.h"
#include "db/store_int.h"

/* ---- reading ---- */

#define SWEEP_COLUMNS \
	"id, started, finished, seconds, outcome, error, nodes, switches, cas, ports, links," \
	" lids, events, smps_sent, smps_timed_out, smps_retried, up, sm_node_guid, sm_port_guid"

static void read_sweep(sqlite3_stmt *st, struct store_sweep *out)
{
	const char *outcome = (const char *)sqlite3_column_text(st, 4);

	memset(out, 0, sizeof(*out));
	out->id = sqlite3_column_int64(st, 0);
	out->started = sqlite3_column_int64(st, 1);
	out->finished = sqlite3_column_int64(st, 2);
	out->seconds = sqlite3_column_double(st, 3);
	store_col_text(st, 5, out->error, sizeof(out->error));
	out->nodes = (unsigned int)sqlite3_column_int(st, 6);
	out->switches = (unsigned int)sqlite3_column_int(st, 7);
	out->cas = (unsigned int)sqlite3_column_int(st, 8);
	out->ports = (unsigned int)sqlite3_column_int(st, 9);
	out->links = (unsigned int)sqlite3_column_int(st, 10);
	out->lids = (unsigned int)sqlite3_column_int(st, 11);
	out->events = (unsigned int)sqlite3_column_int(st, 12);
	out->smps_sent = (uint64_t)sqlite3_column_int64(st, 13);
	out->smps_timed_out = (uint64_t)sqlite3_column_int64(st, 14);
	out->smps_retried = (uint64_t)sqlite3_column_int64(st, 15);
	out->up = sqlite3_column_int(st, 16);
	out->sm_node_guid = store_col_guid(st, 17);
	out->sm_port_guid = store_col_guid(st, 18);
	if (outcome && !strcmp(outcome, "failed"))
		out->err = -EIO;	/* the text says what it was */
}

static int one_sweep(struct store *s, const char *sql, struct store_sweep *out)
{
	sqlite3_stmt *st;
	int rc, r;

	r = store_prep(s, sql, &st);
	if (r)
		return r;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW)
		read_sweep(st, out);
	sqlite3_finalize(st);
	if (rc == SQLITE_ROW)
		return 0;
	return rc == SQLITE_DONE ? -ENOENT : store_fail(s, rc, "reading sweeps");
}

int store_last_sweep(struct store *s, struct store_sweep *out)
{
	return one_sweep(s, "SELECT " SWEEP_COLUMNS " FROM sweep ORDER BY id DESC LIMIT 1", out);
}

int store_foreach_sweep(struct store *s, unsigned int limit,
			int (*cb)(void *ctx, const struct store_sweep *sw), void *ctx)
{
	sqlite3_stmt *st;
	int rc, r;

	r = store_prep(s, "SELECT * FROM (SELECT " SWEEP_COLUMNS " FROM sweep ORDER BY id DESC"
		 " LIMIT ?) ORDER BY id", &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, limit);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_sweep sw;

		read_sweep(st, &sw);
		r = cb(ctx, &sw);
		if (r)
			break;
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(s, rc, "reading sweeps");
	sqlite3_finalize(st);
	return r;
}

struct event_each {
	int (*cb)(void *ctx, const struct store_event *ev);
	void *ctx;
};

static int event_each_row(sqlite3_stmt *st, void *arg)
{
	const struct event_each *a = arg;
	struct store_event e;

	memset(&e, 0, sizeof(e));
	e.id = sqlite3_column_int64(st, 0);
	e.sweep_id = sqlite3_column_int64(st, 1);
	e.time = sqlite3_column_int64(st, 2);
	store_col_text(st, 3, e.kind, sizeof(e.kind));
	e.node_guid = store_col_guid(st, 4);
	e.port_num = sqlite3_column_type(st, 5) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 5);
	e.port_guid = store_col_guid(st, 6);
	e.peer_guid = store_col_guid(st, 7);
	e.peer_port = sqlite3_column_type(st, 8) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 8);
	store_col_text(st, 9, e.old_value, sizeof(e.old_value));
	store_col_text(st, 10, e.new_value, sizeof(e.new_value));
	store_col_text(st, 11, e.detail, sizeof(e.detail));
	return a->cb(a->ctx, &e);
}

int store_foreach_event(struct store *s, unsigned int limit,
			int (*cb)(void *ctx, const struct store_event *ev), void *ctx)
{
	struct event_each a = { cb, ctx };
	const struct sql_val lim = V_INT(limit);

	return store_each_row(s, "SELECT * FROM (SELECT id, sweep_id, time, kind, node_guid, port_num,"
			" port_guid, peer_guid, peer_port, old_value, new_value, detail FROM event"
			" ORDER BY id DESC LIMIT ?) ORDER BY id", &lim, 1, "reading events",
			event_each_row, &a);
}

struct lid_each {
	int (*cb)(void *ctx, const struct store_lid *l);
	void *ctx;
};

static int lid_each_row(sqlite3_stmt *st, void *arg)
{
	const struct lid_each *a = arg;
	struct store_lid l = { 0 };

	l.guid = store_col_guid(st, 0);
	l.node_guid = store_col_guid(st, 1);
	l.lid = (uint16_t)sqlite3_column_int(st, 2);
	l.lmc = (uint8_t)sqlite3_column_int(st, 3);
	l.last_seen = sqlite3_column_int64(st, 4);
	store_col_text(st, 5, l.desc, sizeof(l.desc));
	l.present = sqlite3_column_int(st, 6);
	return a->cb(a->ctx, &l);
}

int store_foreach_lid(struct store *s, int (*cb)(void *ctx, const struct store_lid *l),
		      void *ctx)
{
	struct lid_each a = { cb, ctx };

	return store_each_row(s, "SELECT l.guid, l.node_guid, l.lid, l.lmc, l.last_seen, l.node_desc,"
			" EXISTS (SELECT 1 FROM port p WHERE p.node_guid = l.node_guid"
			" AND p.present = 1"
			" AND (p.guid = l.guid OR (p.num = 0 AND l.guid = l.node_guid)))"
			" FROM port_lid l ORDER BY l.lid", NULL, 0, "reading LIDs",
			lid_each_row, &a);
}

/* ---- loading the saved fabric ---- */

static int load_nodes(struct store *s, struct fabric *f)
{
	sqlite3_stmt *st;
	int rc, r;

	/* A switch's NodeInfo.PortGUID is its port 0's */
	r = store_prep(s, "SELECT n.guid, n.type, n.num_ports, n.description, n.sys_guid, n.vendor_id,"
		 " n.device_id, n.revision, (SELECT p.guid FROM port p WHERE"
		 " p.node_guid = n.guid AND p.num = 0) FROM node n WHERE n.present = 1"
		 " ORDER BY n.guid", &st);
	if (r)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct node_info ni = {
			.base_version = 1, .class_version = 1,
			.node_guid = store_col_guid(st, 0),
			.node_type = (uint8_t)sqlite3_column_int(st, 1),
			.num_ports = (uint8_t)sqlite3_column_int(st, 2),
			.sys_guid = store_col_guid(st, 4),
			.vendor_id = (uint32_t)sqlite3_column_int64(st, 5),
			.device_id = (uint16_t)sqlite3_column_int64(st, 6),
			.revision = (uint32_t)sqlite3_column_int64(st, 7),
			.port_guid = store_col_guid(st, 8),
		};
		struct fab_node *n;

		r = fabric_add_node(f, &ni, &n);
		if (r)
			break;
		store_col_text(st, 3, n->desc, sizeof(n->desc));
		n->desc_valid = true;
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(s, rc, "reading nodes");
	sqlite3_finalize(st);
	return r;
}

static int load_ports(struct store *s, struct fabric *f)
{
	sqlite3_stmt *st;
	int rc, r;

	r = store_prep(s, "SELECT node_guid, num, guid, lid, lmc, state, phys_state, width, speed,"
		 " speed_ext, cap_mask, mtu, mtu_cap, vl_cap, op_vls, lids_routed, cap_mask2,"
		 " speed_ext2, fdr10 FROM port WHERE present = 1", &st);
	if (r)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct fab_node *n = fabric_find(f, store_col_guid(st, 0));
		struct fab_port *p = fabric_port(n, (unsigned int)sqlite3_column_int(st, 1));
		struct port_info *pi;

		if (!p)
			continue;	/* a port of an absent node */
		pi = &p->pi;
		p->guid = store_col_guid(st, 2);
		pi->lid = (uint16_t)sqlite3_column_int(st, 3);
		pi->lmc = (uint8_t)sqlite3_column_int(st, 4);
		pi->port_state = (uint8_t)sqlite3_column_int(st, 5);
		pi->phys_state = (uint8_t)sqlite3_column_int(st, 6);
		pi->link_width_active = (uint8_t)sqlite3_column_int(st, 7);
		pi->link_speed_active = (uint8_t)sqlite3_column_int(st, 8);
		pi->link_speed_ext_active = (uint8_t)sqlite3_column_int(st, 9);
		pi->cap_mask = (uint32_t)sqlite3_column_int64(st, 10);
		pi->neighbor_mtu = (uint8_t)sqlite3_column_int(st, 11);
		pi->mtu_cap = (uint8_t)sqlite3_column_int(st, 12);
		pi->vl_cap = (uint8_t)sqlite3_column_int(st, 13);
		pi->op_vls = (uint8_t)sqlite3_column_int(st, 14);
		pi->local_port = p->num;
		p->load = (uint32_t)sqlite3_column_int64(st, 15);
		pi->cap_mask2 = (uint16_t)sqlite3_column_int(st, 16);
		pi->link_speed_ext_active2 = (uint8_t)sqlite3_column_int(st, 17);
		p->fdr10 = sqlite3_column_int(st, 18) != 0;
		p->pi_valid = true;
		if (fabric_is_endport(p)) {
			p->lid = pi->lid;
			p->lmc = pi->lmc;
		}
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(s, rc, "reading ports");
	sqlite3_finalize(st);
	return r;
}

static int load_switches(struct store *s, struct fabric *f)
{
	sqlite3_stmt *st;
	int rc, r;

	r = store_prep(s, "SELECT node_guid, lft_cap, lft_top, enhanced_port0, life_time FROM switch",
		 &st);
	if (r)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct fab_node *n = fabric_find(f, store_col_guid(st, 0));

		if (!n || n->type != NODE_TYPE_SWITCH)
			continue;
		n->si.lft_cap = (uint16_t)sqlite3_column_int(st, 1);
		n->si.lft_top = (uint16_t)sqlite3_column_int(st, 2);
		n->si.enhanced_port0 = (uint8_t)sqlite3_column_int(st, 3);
		n->si.life_time_value = (uint8_t)sqlite3_column_int(st, 4);
		n->si_valid = true;
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(s, rc, "reading switches");
	sqlite3_finalize(st);
	return r;
}

static int load_links(struct store *s, struct fabric *f)
{
	sqlite3_stmt *st;
	int rc, r;

	r = store_prep(s, "SELECT node_a, port_a, node_b, port_b FROM link", &st);
	if (r)
		return r;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct fab_port *a = fabric_port(fabric_find(f, store_col_guid(st, 0)),
						 (unsigned int)sqlite3_column_int(st, 1));
		struct fab_port *b = fabric_port(fabric_find(f, store_col_guid(st, 2)),
						 (unsigned int)sqlite3_column_int(st, 3));

		if (a && b && a->pi_valid && b->pi_valid)
			fabric_link(f, a, b);
	}
	if (rc != SQLITE_DONE)
		r = store_fail(s, rc, "reading links");
	sqlite3_finalize(st);
	return r;
}

int store_load_fabric(struct store *s, struct fabric **out, struct store_sweep *sweep)
{
	struct fabric *f = NULL;
	int r;

	*out = NULL;
	/* One read transaction: a consistent snapshot while smd may be saving */
	r = store_exec(s, "BEGIN", "reading the fabric");
	if (r)
		return r;
	r = one_sweep(s, "SELECT " SWEEP_COLUMNS " FROM sweep WHERE outcome <> 'failed'"
		      " AND EXISTS (SELECT 1 FROM node WHERE last_sweep = sweep.id)"
		      " ORDER BY id DESC LIMIT 1", sweep);
	if (r == -ENOENT)
		snprintf(s->err, sizeof(s->err), "no fabric saved yet");
	if (!r)
		r = fabric_new(&f);
	if (!r)
		r = load_nodes(s, f);
	if (!r)
		r = load_ports(s, f);
	if (!r)
		r = load_switches(s, f);
	if (!r)
		r = load_links(s, f);
	sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL);
	if (r) {
		fabric_free(f);
		return r;
	}
	fabric_index_lids(f);	/* a clash only means the ports said so */
	*out = f;
	return 0;
}

static bool mcast_row(const void *rows, size_t i, int64_t now, struct sql_val *v)
{
	const struct store_mcast *g = (const struct store_mcast *)rows + i;

	v[0] = V_BLOB(g->mgid, 16);
	v[1] = V_INT(g->mlid);
	v[2] = V_INT(now);		/* created */
	v[3] = V_INT(now);		/* last_seen */
	return g->present;
}

static const struct row_table mcast_rows = {
	.put_sql = "INSERT INTO mcast_group (mgid, mlid, created, last_seen) VALUES (?, ?, ?, ?)"
		   " ON CONFLICT (mgid) DO UPDATE SET mlid = excluded.mlid,"
		   " last_seen = excluded.last_seen",
	.del_sql = "DELETE FROM mcast_group WHERE mgid = ?",
	.nput = 4, .ndel = 1, .what = "saving a multicast group", .row = mcast_row,
};

int store_mcast_save(struct store *s, const struct store_mcast *g, size_t n, int64_t now)
{
	return store_save_rows(s, &mcast_rows, g, n, now);
}

struct mcast_each {
	int (*cb)(void *ctx, const struct store_mcast *g);
	void *ctx;
};

static int mcast_each_row(sqlite3_stmt *st, void *arg)
{
	const struct mcast_each *a = arg;
	struct store_mcast g = { .present = 1 };

	/* A row the CHECKs let through but that is not 16 bytes is skipped */
	if (sqlite3_column_bytes(st, 0) != 16)
		return 0;
	memcpy(g.mgid, sqlite3_column_blob(st, 0), 16);
	g.mlid = (uint16_t)sqlite3_column_int(st, 1);
	return a->cb(a->ctx, &g);
}

int store_foreach_mcast(struct store *s, int (*cb)(void *ctx, const struct store_mcast *g),
			void *ctx)
{
	struct mcast_each a = { cb, ctx };

	return store_each_row(s, "SELECT mgid, mlid FROM mcast_group ORDER BY mlid", NULL, 0,
			"reading multicast groups", mcast_each_row, &a);
}

static bool service_row(const void *rows, size_t i, int64_t now, struct sql_val *v)
{
	const struct store_service *x = (const struct store_service *)rows + i;

	/* ServiceIDs use all 64 bits: stored as the same bits, signed */
	v[0] = V_INT((int64_t)x->id);
	v[1] = V_BLOB(x->gid, 16);
	v[2] = V_INT(x->pkey);
	v[3] = V_BLOB(x->record, STORE_SERVICE_SIZE);
	v[4] = V_INT(x->expires);
	v[5] = V_INT(now);		/* registered */
	return x->present;
}

static const struct row_table service_rows = {
	.put_sql = "INSERT INTO service (id, gid, pkey, record, expires, registered)"
		   " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (id, gid, pkey) DO UPDATE SET"
		   " record = excluded.record, expires = excluded.expires",
	.del_sql = "DELETE FROM service WHERE id = ?1 AND gid = ?2 AND pkey = ?3",
	.nput = 6, .ndel = 3, .what = "saving a service", .row = service_row,
};

int store_service_save(struct store *s, const struct store_service *v, size_t n, int64_t now)
{
	return store_save_rows(s, &service_rows, v, n, now);
}

struct service_each {
	int (*cb)(void *ctx, const struct store_service *v);
	void *ctx;
};

static int service_each_row(sqlite3_stmt *st, void *arg)
{
	const struct service_each *a = arg;
	struct store_service v = { .present = 1 };

	/* Rows the CHECKs let through with other sizes are skipped */
	if (sqlite3_column_bytes(st, 1) != 16 ||
	    sqlite3_column_bytes(st, 3) != STORE_SERVICE_SIZE)
		return 0;
	v.id = (uint64_t)sqlite3_column_int64(st, 0);
	memcpy(v.gid, sqlite3_column_blob(st, 1), 16);
	v.pkey = (uint16_t)sqlite3_column_int(st, 2);
	memcpy(v.record, sqlite3_column_blob(st, 3), STORE_SERVICE_SIZE);
	v.expires = sqlite3_column_int64(st, 4);
	return a->cb(a->ctx, &v);
}

int store_foreach_service(struct store *s, int (*cb)(void *ctx, const struct store_service *v),
			  void *ctx)
{
	struct service_each a = { cb, ctx };

	return store_each_row(s, "SELECT id, gid, pkey, record, expires FROM service"
			" ORDER BY id, gid, pkey", NULL, 0, "reading services",
			service_each_row, &a);
}

struct partition_each {
	int (*cb)(void *ctx, const struct store_partition *p);
	void *ctx;
};

static int partition_each_row(sqlite3_stmt *st, void *arg)
{
	const struct partition_each *a = arg;
	struct store_partition p = {
		.pkey = (uint16_t)(sqlite3_column_int(st, 0) & 0x7fff),
		.ipoib = sqlite3_column_int(st, 2) != 0,
	};

	store_col_text(st, 1, p.name, sizeof(p.name));
	return a->cb(a->ctx, &p);
}

int store_foreach_partition(struct store *s,
			    int (*cb)(void *ctx, const struct store_partition *p), void *ctx)
{
	struct partition_each a = { cb, ctx };

	return store_each_row(s, "SELECT pkey, name, ipoib FROM partition ORDER BY pkey", NULL, 0,
			"reading partitions", partition_each_row, &a);
}

struct port_pkey_each {
	int (*cb)(void *ctx, const struct store_port_pkey *k);
	void *ctx;
};

static int port_pkey_each_row(sqlite3_stmt *st, void *arg)
{
	const struct port_pkey_each *a = arg;
	struct store_port_pkey k = {
		.port_guid = store_col_guid(st, 0),
		.pkey = (uint16_t)((sqlite3_column_int(st, 1) & 0x7fff) |
				   (sqlite3_column_int(st, 2) ? 0x8000 : 0)),
	};

	return a->cb(a->ctx, &k);
}

int store_foreach_port_pkey(struct store *s,
			    int (*cb)(void *ctx, const struct store_port_pkey *k), void *ctx)
{
	struct port_pkey_each a = { cb, ctx };

	return store_each_row(s, "SELECT port_guid, pkey, full FROM port_pkey ORDER BY pkey, port_guid",
			NULL, 0, "reading P_Keys", port_pkey_each_row, &a);
}
