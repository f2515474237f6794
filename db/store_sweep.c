// SPDX-License-Identifier: MIT
/*
 * Saving a sweep: the fabric as it was found (nodes, ports, links), what
 * changed since the last save as events, the LIDs given out, in one
 * transaction.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sqlite3.h>

#include "db/store.h"
#include "db/store_int.h"

/* ---- saving a sweep ---- */

struct save {
	struct store *s;
	const struct fabric *f;
	const struct store_sweep *sw;
	int64_t id;		/* of the sweep row */
	int64_t now;		/* seen at: when the sweep started */
	int64_t finished;
	unsigned int events;
	bool *fresh;		/* by node idx: (re)appeared in this sweep */
	sqlite3_stmt *ev;
};

static int save_event(struct save *sv, const struct ev *e)
{
	sv->events++;
	return store_event_add(sv->s, sv->ev, sv->id, sv->now, e);
}

static const char *outcome_name(const struct store_sweep *sw)
{
	return sw->err ? "failed" : sw->up ? "up" : "not up";
}

static int save_sweep_row(struct save *sv)
{
	const struct store_sweep *sw = sv->sw;
	sqlite3_stmt *st;
	int r;

	r = store_prep(sv->s,
		 "INSERT INTO sweep (started, finished, seconds, outcome, error, nodes, switches,"
		 " cas, ports, links, lids, smps_sent, smps_timed_out, smps_retried, up,"
		 " sm_node_guid, sm_port_guid)"
		 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", &st);
	if (r < 0)
		return r;
	sqlite3_bind_int64(st, 1, sw->started);
	sqlite3_bind_int64(st, 2, sv->finished);
	sqlite3_bind_double(st, 3, sw->seconds);
	sqlite3_bind_text(st, 4, outcome_name(sw), -1, SQLITE_STATIC);
	sqlite3_bind_text(st, 5, sw->err ? strerror(-sw->err) : "", -1, SQLITE_TRANSIENT);
	sqlite3_bind_int(st, 6, (int)sw->nodes);
	sqlite3_bind_int(st, 7, (int)sw->switches);
	sqlite3_bind_int(st, 8, (int)sw->cas);
	sqlite3_bind_int(st, 9, (int)sw->ports);
	sqlite3_bind_int(st, 10, (int)sw->links);
	sqlite3_bind_int(st, 11, (int)sw->lids);
	sqlite3_bind_int64(st, 12, (sqlite3_int64)sw->smps_sent);
	sqlite3_bind_int64(st, 13, (sqlite3_int64)sw->smps_timed_out);
	sqlite3_bind_int64(st, 14, (sqlite3_int64)sw->smps_retried);
	sqlite3_bind_int(st, 15, sw->up && !sw->err);
	store_bind_guid(st, 16, sw->sm_node_guid);
	store_bind_guid(st, 17, sw->sm_port_guid);
	r = store_run(sv->s, st, "saving the sweep");
	sqlite3_finalize(st);
	sv->id = sqlite3_last_insert_rowid(sv->s->db);
	return r;
}

static int save_nodes(struct save *sv)
{
	const struct fabric *f = sv->f;
	sqlite3_stmt *get = NULL, *ins = NULL, *upd = NULL;
	int r;

	r = store_prep(sv->s, "SELECT description, present FROM node WHERE guid = ?", &get);
	if (!r)
		r = store_prep(sv->s,
			 "INSERT INTO node (guid, type, num_ports, description, sys_guid, vendor_id,"
			 " device_id, revision, present, first_seen, last_seen, last_sweep)"
			 " VALUES (?1, ?2, ?3, coalesce(?4, ''), ?5, ?6, ?7, ?8, 1, ?9, ?9, ?10)",
			 &ins);
	if (!r)
		r = store_prep(sv->s,
			 "UPDATE node SET type = ?2, num_ports = ?3,"
			 " description = coalesce(?4, description), sys_guid = ?5, vendor_id = ?6,"
			 " device_id = ?7, revision = ?8, present = 1, last_seen = ?9,"
			 " last_sweep = ?10 WHERE guid = ?1", &upd);
	for (size_t i = 0; !r && i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];
		char old[SMP_DATA_SIZE + 1] = "";
		sqlite3_stmt *st;
		bool known = false, present = false;
		int rc;

		store_bind_guid(get, 1, n->guid);
		rc = sqlite3_step(get);
		if (rc == SQLITE_ROW) {
			known = true;
			store_col_text(get, 0, old, sizeof(old));
			present = sqlite3_column_int(get, 1);
		} else if (rc != SQLITE_DONE) {
			r = store_fail(sv->s, rc, "reading a node");
		}
		sqlite3_reset(get);
		if (r)
			break;
		if (!present) {
			struct ev e = EV("node_appeared");

			e.node = n->guid;
			e.has_new = true;
			e.new_i = n->type;
			e.detail = n->desc_valid ? n->desc : old;
			sv->fresh[n->idx] = true;
			r = save_event(sv, &e);
		} else if (n->desc_valid && strcmp(old, n->desc)) {
			struct ev e = EV("node_renamed");

			e.node = n->guid;
			e.old_s = old;
			e.new_s = n->desc;
			r = save_event(sv, &e);
		}
		if (r)
			break;
		st = known ? upd : ins;
		store_bind_guid(st, 1, n->guid);
		sqlite3_bind_int(st, 2, n->type);
		sqlite3_bind_int(st, 3, n->num_ports);
		if (n->desc_valid)
			sqlite3_bind_text(st, 4, n->desc, -1, SQLITE_STATIC);
		else
			sqlite3_bind_null(st, 4);
		store_bind_guid(st, 5, n->ni.sys_guid);
		sqlite3_bind_int64(st, 6, n->ni.vendor_id);
		sqlite3_bind_int64(st, 7, n->ni.device_id);
		sqlite3_bind_int64(st, 8, n->ni.revision);
		sqlite3_bind_int64(st, 9, sv->now);
		sqlite3_bind_int64(st, 10, sv->id);
		r = store_run(sv->s, st, "saving a node");
	}
	sqlite3_finalize(get);
	sqlite3_finalize(ins);
	sqlite3_finalize(upd);
	return r;
}

/* A switch's PortGUID is that of port 0, the same for every port (IBA 14.2.5.3) */
static uint64_t port_guid_of(const struct fab_port *p)
{
	const struct fab_node *n = p->node;

	if (n->type == NODE_TYPE_SWITCH)
		return n->ni.port_guid ? n->ni.port_guid : n->guid;
	return p->guid;
}

/* A port row as saved before: whether present, its state */
struct old_port {
	uint64_t node;
	int num, present, state;
};

static int cmp_old_port(const void *a, const void *b)
{
	const struct old_port *x = a, *y = b;

	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return (x->num > y->num) - (x->num < y->num);
}

/* Every port row, by (node, port): one scan instead of a query per port */
static int old_ports(struct save *sv, struct old_port **out, size_t *n)
{
	struct old_port *v = NULL;
	size_t len = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_DONE, r;

	r = store_prep(sv->s, "SELECT node_guid, num, present, state FROM port", &st);
	while (!r && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			struct old_port *a = realloc(v, ncap * sizeof(*a));

			if (!a) {
				r = -ENOMEM;
				break;
			}
			v = a;
			cap = ncap;
		}
		v[len].node = store_col_guid(st, 0);
		v[len].num = sqlite3_column_int(st, 1);
		v[len].present = sqlite3_column_int(st, 2);
		v[len].state = sqlite3_column_int(st, 3);
		len++;
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(sv->s, rc, "reading ports");
	sqlite3_finalize(st);
	if (r) {
		free(v);
		return r;
	}
	if (v)
		qsort(v, len, sizeof(*v), cmp_old_port);
	*out = v;
	*n = len;
	return 0;
}

static int save_ports(struct save *sv)
{
	const struct fabric *f = sv->f;
	sqlite3_stmt *put = NULL, *swp = NULL;
	struct old_port *old = NULL;
	size_t nold = 0;
	uint32_t *load;
	int r;

	load = calloc(256, sizeof(*load));
	if (!load)
		return -ENOMEM;
	r = old_ports(sv, &old, &nold);
	if (!r)
		r = store_prep(sv->s,
			 "INSERT INTO port (node_guid, num, guid, lid, lmc, state, phys_state,"
			 " width, speed, speed_ext, cap_mask, mtu, mtu_cap, vl_cap, op_vls,"
			 " lids_routed, present, first_seen, last_seen, last_sweep, cap_mask2,"
			 " speed_ext2, fdr10)"
			 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
			 " ?15, ?16, 1, ?17, ?17, ?18, ?19, ?20, ?21) ON CONFLICT (node_guid, num)"
			 " DO UPDATE SET guid = ?3, lid = ?4, lmc = ?5, state = ?6, phys_state = ?7,"
			 " width = ?8, speed = ?9, speed_ext = ?10, cap_mask = ?11, mtu = ?12,"
			 " mtu_cap = ?13, vl_cap = ?14, op_vls = ?15, lids_routed = ?16,"
			 " present = 1, last_seen = ?17, last_sweep = ?18, cap_mask2 = ?19,"
			 " speed_ext2 = ?20, fdr10 = ?21", &put);
	if (!r)
		r = store_prep(sv->s,
			 "INSERT INTO switch (node_guid, lft_cap, lft_top, enhanced_port0, life_time,"
			 " lids_routed, lids_unrouted, ports_used, max_port_lids, last_sweep)"
			 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"
			 " ON CONFLICT (node_guid) DO UPDATE SET lft_cap = ?2, lft_top = ?3,"
			 " enhanced_port0 = ?4, life_time = ?5, lids_routed = ?6, lids_unrouted = ?7,"
			 " ports_used = ?8, max_port_lids = ?9, last_sweep = ?10", &swp);
	for (size_t i = 0; !r && i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];
		uint32_t routed = 0, unrouted = 0, used = 0, most = 0;

		if (n->type == NODE_TYPE_SWITCH)
			fabric_count_routes(f, n, load, &routed, &unrouted);
		for (unsigned int pn = 0; !r && pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];
			const struct port_info *pi = &p->pi;
			uint32_t lids = n->type == NODE_TYPE_SWITCH ? load[pn] : 0;
			struct old_port key = { .node = n->guid, .num = (int)pn }, *had;
			bool present = false;
			int old_state = 0;

			if (!p->pi_valid)
				continue;
			if (lids) {
				used++;
				most = lids > most ? lids : most;
			}
			had = old ? bsearch(&key, old, nold, sizeof(*old), cmp_old_port) : NULL;
			if (had) {
				present = had->present;
				old_state = had->state;
			}
			if (!present && !sv->fresh[n->idx]) {
				struct ev e = EV("port_appeared");

				e.node = n->guid;
				e.port = (int)pn;
				e.port_guid = port_guid_of(p);
				e.has_new = true;
				e.new_i = pi->port_state;
				r = save_event(sv, &e);
			} else if (present && old_state != pi->port_state) {
				struct ev e = EV("port_state");

				e.node = n->guid;
				e.port = (int)pn;
				e.port_guid = port_guid_of(p);
				e.has_old = e.has_new = true;
				e.old_i = old_state;
				e.new_i = pi->port_state;
				r = save_event(sv, &e);
			}
			if (r)
				break;
			store_bind_guid(put, 1, n->guid);
			sqlite3_bind_int(put, 2, (int)pn);
			store_bind_guid(put, 3, port_guid_of(p));
			sqlite3_bind_int(put, 4, pi->lid);
			sqlite3_bind_int(put, 5, pi->lmc);
			sqlite3_bind_int(put, 6, pi->port_state);
			sqlite3_bind_int(put, 7, pi->phys_state);
			sqlite3_bind_int(put, 8, pi->link_width_active);
			sqlite3_bind_int(put, 9, pi->link_speed_active);
			sqlite3_bind_int(put, 10, pi->link_speed_ext_active);
			sqlite3_bind_int64(put, 11, pi->cap_mask);
			sqlite3_bind_int(put, 12, pi->neighbor_mtu);
			sqlite3_bind_int(put, 13, pi->mtu_cap);
			sqlite3_bind_int(put, 14, pi->vl_cap);
			sqlite3_bind_int(put, 15, pi->op_vls);
			sqlite3_bind_int64(put, 16, lids);
			sqlite3_bind_int64(put, 17, sv->now);
			sqlite3_bind_int64(put, 18, sv->id);
			sqlite3_bind_int(put, 19, pi->cap_mask2);
			sqlite3_bind_int(put, 20, pi->link_speed_ext_active2);
			sqlite3_bind_int(put, 21, p->fdr10);
			r = store_run(sv->s, put, "saving a port");
		}
		if (r || n->type != NODE_TYPE_SWITCH || !n->si_valid)
			continue;
		store_bind_guid(swp, 1, n->guid);
		sqlite3_bind_int(swp, 2, n->si.lft_cap);
		sqlite3_bind_int(swp, 3, n->si.lft_top);
		sqlite3_bind_int(swp, 4, n->si.enhanced_port0);
		sqlite3_bind_int(swp, 5, n->si.life_time_value);
		sqlite3_bind_int64(swp, 6, routed);
		sqlite3_bind_int64(swp, 7, unrouted);
		sqlite3_bind_int64(swp, 8, used);
		sqlite3_bind_int64(swp, 9, most);
		sqlite3_bind_int64(swp, 10, sv->id);
		r = store_run(sv->s, swp, "saving a switch");
	}
	free(load);
	free(old);
	sqlite3_finalize(put);
	sqlite3_finalize(swp);
	return r;
}

/* Nodes and ports the sweep did not see: events, then present = 0 */
static int save_vanished(struct save *sv)
{
	sqlite3_stmt *st = NULL;
	int rc, r;

	r = store_prep(sv->s, "SELECT guid, description FROM node WHERE present = 1 AND last_sweep <> ?",
		 &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, sv->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !r) {
		struct ev e = EV("node_vanished");

		e.node = store_col_guid(st, 0);
		e.detail = (const char *)sqlite3_column_text(st, 1);
		r = save_event(sv, &e);
	}
	if (!r && rc != SQLITE_DONE && rc != SQLITE_ROW)
		r = store_fail(sv->s, rc, "reading nodes");
	sqlite3_finalize(st);
	if (r)
		return r;
	r = store_prep(sv->s, "UPDATE node SET present = 0 WHERE present = 1 AND last_sweep <> ?", &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, sv->id);
	r = store_run(sv->s, st, "marking nodes absent");
	sqlite3_finalize(st);
	if (r)
		return r;

	/* Ports of nodes still here; those of vanished nodes go without a word */
	r = store_prep(sv->s,
		 "SELECT p.node_guid, p.num, p.guid, p.state FROM port p JOIN node n"
		 " ON n.guid = p.node_guid WHERE p.present = 1 AND p.last_sweep <> ?1"
		 " AND n.present = 1", &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, sv->id);
	while ((rc = sqlite3_step(st)) == SQLITE_ROW && !r) {
		struct ev e = EV("port_vanished");

		e.node = store_col_guid(st, 0);
		e.port = sqlite3_column_int(st, 1);
		e.port_guid = store_col_guid(st, 2);
		e.has_old = true;
		e.old_i = sqlite3_column_int(st, 3);
		r = save_event(sv, &e);
	}
	if (!r && rc != SQLITE_DONE && rc != SQLITE_ROW)
		r = store_fail(sv->s, rc, "reading ports");
	sqlite3_finalize(st);
	if (r)
		return r;
	r = store_prep(sv->s, "UPDATE port SET present = 0 WHERE present = 1 AND last_sweep <> ?", &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, sv->id);
	r = store_run(sv->s, st, "marking ports absent");
	sqlite3_finalize(st);
	return r;
}

/* A cable's ends in the order the link table keeps them */
static bool end_before(uint64_t ga, unsigned int pa, uint64_t gb, unsigned int pb)
{
	if (ga != gb)
		return (int64_t)ga < (int64_t)gb;
	return pa < pb;
}

/* Both ends were saved as ports (a link needs both rows) */
static bool cable_saved(const struct fab_port *p)
{
	return p->num > 0 && p->pi_valid && p->peer && p->peer->pi_valid && p->peer->num > 0;
}

struct old_link {
	uint64_t a, b;
	uint8_t pa, pb;
};

static int save_links(struct save *sv)
{
	const struct fabric *f = sv->f;
	sqlite3_stmt *sel = NULL, *del = NULL, *keep = NULL, *ins = NULL;
	struct old_link *old = NULL;
	size_t nold = 0, cap = 0;
	int rc, r;

	/* Links saved before: kept when the fabric still has that cable */
	r = store_prep(sv->s, "SELECT node_a, port_a, node_b, port_b FROM link", &sel);
	while (!r && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
		if (nold == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			struct old_link *n = realloc(old, ncap * sizeof(*n));

			if (!n) {
				r = -ENOMEM;
				break;
			}
			old = n;
			cap = ncap;
		}
		old[nold].a = store_col_guid(sel, 0);
		old[nold].pa = (uint8_t)sqlite3_column_int(sel, 1);
		old[nold].b = store_col_guid(sel, 2);
		old[nold].pb = (uint8_t)sqlite3_column_int(sel, 3);
		nold++;
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(sv->s, rc, "reading links");
	if (!r)
		r = store_prep(sv->s, "DELETE FROM link WHERE node_a = ? AND port_a = ?", &del);
	if (!r)
		r = store_prep(sv->s, "UPDATE link SET last_seen = ?3, last_sweep = ?4"
			 " WHERE node_a = ?1 AND port_a = ?2", &keep);
	if (!r)
		r = store_prep(sv->s, "INSERT INTO link (node_a, port_a, node_b, port_b, first_seen,"
			 " last_seen, last_sweep) VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)"
			 " ON CONFLICT (node_a, port_a) DO NOTHING", &ins);
	for (size_t i = 0; !r && i < nold; i++) {
		const struct fab_node *na = fabric_find(f, old[i].a), *nb = fabric_find(f, old[i].b);
		const struct fab_port *pa = fabric_port(na, old[i].pa);
		const struct fab_port *pb = fabric_port(nb, old[i].pb);
		sqlite3_stmt *st = keep;

		if (!pa || !pb || !cable_saved(pa) || pa->peer != pb) {
			st = del;
			if (na || nb) {
				struct ev e = EV("link_vanished");

				e.node = old[i].a;
				e.port = old[i].pa;
				e.peer = old[i].b;
				e.peer_port = old[i].pb;
				r = save_event(sv, &e);
			}
		} else {
			sqlite3_bind_int64(keep, 3, sv->now);
			sqlite3_bind_int64(keep, 4, sv->id);
		}
		store_bind_guid(st, 1, old[i].a);
		sqlite3_bind_int(st, 2, old[i].pa);
		if (!r)
			r = store_run(sv->s, st, "saving a link");
	}
	/* Cables not saved before: each once, from its lower end */
	for (size_t i = 0; !r && i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 1; !r && pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn], *q = p->peer;

			if (!cable_saved(p) || !end_before(n->guid, pn, q->node->guid, q->num))
				continue;
			store_bind_guid(ins, 1, n->guid);
			sqlite3_bind_int(ins, 2, (int)pn);
			store_bind_guid(ins, 3, q->node->guid);
			sqlite3_bind_int(ins, 4, q->num);
			sqlite3_bind_int64(ins, 5, sv->now);
			sqlite3_bind_int64(ins, 6, sv->id);
			r = store_run(sv->s, ins, "saving a link");
			/* No change: kept from before, its primary key is this end */
			if (r || !sqlite3_changes(sv->s->db))
				continue;
			if (!sv->fresh[n->idx] || !sv->fresh[q->node->idx]) {
				struct ev e = EV("link_appeared");

				e.node = n->guid;
				e.port = (int)pn;
				e.peer = q->node->guid;
				e.peer_port = q->num;
				r = save_event(sv, &e);
			}
		}
	}
	free(old);
	sqlite3_finalize(sel);
	sqlite3_finalize(del);
	sqlite3_finalize(keep);
	sqlite3_finalize(ins);
	return r;
}

struct ep_lid {
	uint64_t guid;
	uint16_t old;		/* remembered before this sweep, 0 if none */
	const struct fab_port *p;
};

static int cmp_ep(const void *a, const void *b)
{
	const struct ep_lid *x = a, *y = b;

	return x->guid < y->guid ? -1 : x->guid > y->guid;
}

/* A LID range some port held or holds: a remembered row, or a port of this sweep */
struct lid_span {
	int64_t lo, hi;
	uint64_t guid;
};

static int cmp_span(const void *a, const void *b)
{
	const struct lid_span *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static int64_t span_hi(int64_t lid, int64_t lmc)
{
	return lid + (int64_t)(UINT64_C(1) << (lmc < 0 ? 0 : lmc > 62 ? 62 : lmc)) - 1;
}

/*
 * The LIDs remembered before this save (one scan), as spans by LID; the
 * sweep's own ports' spans are added by the caller. *rows gets the
 * remembered ones by GUID (guid, old LID) for the lookups.
 */
static int lid_spans(struct save *sv, struct lid_span **out, size_t *n, size_t extra,
		     struct ep_lid **rows, size_t *nrows)
{
	struct lid_span *sp = NULL;
	struct ep_lid *rw = NULL;
	size_t len = 0, cap = 0;
	sqlite3_stmt *st = NULL;
	int rc = SQLITE_DONE, r;

	*out = NULL;
	*rows = NULL;
	*n = *nrows = 0;
	r = store_prep(sv->s, "SELECT guid, lid, lmc FROM port_lid", &st);
	while (!r && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (len == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			struct lid_span *a = realloc(sp, (ncap + extra) * sizeof(*a));
			struct ep_lid *b = a ? realloc(rw, ncap * sizeof(*b)) : NULL;

			if (a)
				sp = a;
			if (!a || !b) {
				r = -ENOMEM;
				break;
			}
			rw = b;
			cap = ncap;
		}
		sp[len].guid = store_col_guid(st, 0);
		sp[len].lo = sqlite3_column_int64(st, 1);
		sp[len].hi = span_hi(sp[len].lo, sqlite3_column_int64(st, 2));
		rw[len].guid = sp[len].guid;
		rw[len].old = sp[len].lo >= LID_UCAST_MIN && sp[len].lo <= LID_UCAST_MAX ?
			      (uint16_t)sp[len].lo : 0;
		len++;
	}
	if (!r && rc != SQLITE_DONE)
		r = store_fail(sv->s, rc, "reading LIDs");
	sqlite3_finalize(st);
	if (!r && !sp) {
		sp = malloc((extra + 1) * sizeof(*sp));
		if (!sp)
			r = -ENOMEM;
	}
	if (r) {
		free(sp);
		free(rw);
		return r;
	}
	if (rw)
		qsort(rw, len, sizeof(*rw), cmp_ep);
	*out = sp;
	*n = len;
	*rows = rw;
	*nrows = len;
	return 0;
}

/*
 * Whether some span of another port overlaps [lo, hi] in the same terms as
 * the clash query of save_lids (a span starting at most 127 below lo). The
 * table when a port is saved holds only remembered rows and ports of this
 * sweep saved before it: when no span does, the query would find nothing.
 */
static bool span_clash(const struct lid_span *sp, size_t n, int64_t lo, int64_t hi, uint64_t guid)
{
	size_t a = 0, b = n;

	while (a < b) {
		size_t m = a + (b - a) / 2;

		if (sp[m].lo < lo - 127)
			a = m + 1;
		else
			b = m;
	}
	for (; a < n && sp[a].lo <= hi; a++)
		if (sp[a].hi >= lo && sp[a].guid != guid)
			return true;
	return false;
}

/*
 * The endports' LIDs: remembered by port GUID, even while the port is
 * absent. The rows remembered are read once: what each port had, and
 * whether any LID it takes now was another port's (only then the table is
 * searched for those ports, to forget them).
 */
static int save_lids(struct save *sv)
{
	const struct fabric *f = sv->f;
	sqlite3_stmt *clash = NULL, *drop = NULL, *up = NULL;
	struct ep_lid *eps, *rows = NULL;
	struct lid_span *spans = NULL;
	size_t n = 0, cap = 0, nspans = 0, nrows = 0;
	int rc = SQLITE_DONE, r = 0;

	for (size_t i = 0; i < f->nnodes; i++)
		cap += (size_t)f->nodes[i]->num_ports + 1;
	eps = calloc(cap ? cap : 1, sizeof(*eps));
	if (!eps)
		return -ENOMEM;
	r = lid_spans(sv, &spans, &nspans, cap, &rows, &nrows);
	for (size_t i = 0; !r && i < f->nnodes; i++) {
		const struct fab_node *nd = f->nodes[i];

		for (unsigned int pn = 0; pn <= nd->num_ports; pn++) {
			const struct fab_port *p = &nd->ports[pn];
			struct ep_lid key = { .guid = p->guid }, *had;

			if (!fabric_is_endport(p) || !p->lid)
				continue;
			eps[n].guid = p->guid;
			eps[n].p = p;
			had = rows ? bsearch(&key, rows, nrows, sizeof(*rows), cmp_ep) : NULL;
			eps[n].old = had ? had->old : 0;
			spans[nspans].lo = p->lid;
			spans[nspans].hi = span_hi(p->lid, p->lmc);
			spans[nspans].guid = p->guid;
			nspans++;
			n++;
		}
	}
	free(rows);
	qsort(eps, n, sizeof(*eps), cmp_ep);
	if (spans)
		qsort(spans, nspans, sizeof(*spans), cmp_span);
	/* LIDs now held by another port are no longer remembered for the old one */
	if (!r)
		r = store_prep(sv->s,
			 "SELECT guid, node_guid, lid FROM port_lid WHERE guid <> ?2"
			 " AND lid BETWEEN ?1 - 127 AND ?1 + (1 << ?3) - 1"
			 " AND lid + (1 << lmc) - 1 >= ?1", &clash);
	if (!r)
		r = store_prep(sv->s, "DELETE FROM port_lid WHERE guid = ?", &drop);
	if (!r)
		r = store_prep(sv->s,
			 "INSERT INTO port_lid (guid, node_guid, lid, lmc, node_desc, first_seen,"
			 " last_seen) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
			 " ON CONFLICT (guid) DO UPDATE SET node_guid = ?2, lid = ?3, lmc = ?4,"
			 " node_desc = ?5, last_seen = ?6", &up);
	for (size_t i = 0; !r && i < n; i++) {
		const struct fab_port *p = eps[i].p;
		const struct fab_node *nd = p->node;
		size_t nothers;

		do {
			uint64_t others[16];

			nothers = 0;
			if (!span_clash(spans, nspans, p->lid, span_hi(p->lid, p->lmc), p->guid))
				break;
			sqlite3_bind_int(clash, 1, p->lid);
			store_bind_guid(clash, 2, p->guid);
			sqlite3_bind_int(clash, 3, p->lmc);
			while (!r && nothers < 16 && (rc = sqlite3_step(clash)) == SQLITE_ROW) {
				struct ep_lid key = { .guid = store_col_guid(clash, 0) };
				struct ev e = EV("lid_released");

				others[nothers++] = key.guid;
				/* A port of this fabric gets its own event below */
				if (bsearch(&key, eps, n, sizeof(*eps), cmp_ep))
					continue;
				e.node = store_col_guid(clash, 1);
				e.port_guid = key.guid;
				e.has_old = true;
				e.old_i = sqlite3_column_int(clash, 2);
				e.peer = p->guid;
				r = save_event(sv, &e);
			}
			if (!r && nothers < 16 && rc != SQLITE_DONE)
				r = store_fail(sv->s, rc, "reading LIDs");
			sqlite3_reset(clash);
			for (size_t k = 0; !r && k < nothers; k++) {
				store_bind_guid(drop, 1, others[k]);
				r = store_run(sv->s, drop, "forgetting a LID");
			}
		} while (!r && nothers == 16);
		if (r)
			break;
		store_bind_guid(up, 1, p->guid);
		store_bind_guid(up, 2, nd->guid);
		sqlite3_bind_int(up, 3, p->lid);
		sqlite3_bind_int(up, 4, p->lmc);
		sqlite3_bind_text(up, 5, nd->desc, -1, SQLITE_STATIC);
		sqlite3_bind_int64(up, 6, sv->now);
		r = store_run(sv->s, up, "saving a LID");
		if (!r && eps[i].old != p->lid) {
			struct ev e = EV(eps[i].old ? "lid_changed" : "lid_assigned");

			e.node = nd->guid;
			e.port = p->num;
			e.port_guid = p->guid;
			e.has_old = eps[i].old != 0;
			e.old_i = eps[i].old;
			e.has_new = true;
			e.new_i = p->lid;
			r = save_event(sv, &e);
		}
	}
	free(eps);
	free(spans);
	sqlite3_finalize(clash);
	sqlite3_finalize(drop);
	sqlite3_finalize(up);
	return r;
}

static int save_finish(struct save *sv)
{
	sqlite3_stmt *st;
	int r;

	r = store_prep(sv->s, "UPDATE sweep SET events = ? WHERE id = ?", &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, sv->events);
	sqlite3_bind_int64(st, 2, sv->id);
	r = store_run(sv->s, st, "saving the sweep");
	sqlite3_finalize(st);
	if (r)
		return r;
	/* Bounded history: old sweeps take their events along (ON DELETE CASCADE) */
	r = store_prep(sv->s, "DELETE FROM sweep WHERE id <= ? - " STR(STORE_KEEP_SWEEPS), &st);
	if (r)
		return r;
	sqlite3_bind_int64(st, 1, sv->id);
	r = store_run(sv->s, st, "pruning sweeps");
	sqlite3_finalize(st);
	if (r)
		return r;
	return store_exec(sv->s, "DELETE FROM event WHERE id <= (SELECT max(id) FROM event) - "
		    STR(STORE_KEEP_EVENTS), "pruning events");
}

/* SQLite's progress handler during a save: non-zero interrupts the statement running */
static int save_cancelled(void *arg)
{
	struct store *s = arg;

	return atomic_load(&s->cancel);
}

/* The partitions and the endports' memberships: replaced whole */
static int save_partitions(struct save *sv)
{
	const struct fabric *f = sv->f;
	sqlite3_stmt *pt = NULL, *pk = NULL;
	int r;

	r = store_exec(sv->s, "DELETE FROM partition; DELETE FROM port_pkey", "clearing partitions");
	if (!r)
		r = store_prep(sv->s, "INSERT OR REPLACE INTO partition (pkey, name, ipoib, last_sweep)"
			 " VALUES (?, ?, ?, ?)", &pt);
	if (!r)
		r = store_prep(sv->s, "INSERT OR REPLACE INTO port_pkey (port_guid, pkey, full)"
			 " VALUES (?, ?, ?)", &pk);
	for (size_t i = 0; !r && i < sv->sw->npartitions; i++) {
		const struct store_partition *p = &sv->sw->partitions[i];

		r = PUT_ROW(sv->s, pt, "saving a partition",
			    V_INT(p->pkey & 0x7fff), V_TEXT(p->name), V_INT(p->ipoib),
			    V_INT(sv->id));
	}
	for (size_t i = 0; !r && i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];

		for (unsigned int pn = 0; !r && pn <= n->num_ports; pn++) {
			const struct fab_port *p = &n->ports[pn];
			const uint16_t *k;
			unsigned int nk;

			if (!fabric_is_endport(p) || !p->lid || !p->pkey_tab)
				continue;
			k = fabric_port_pkeys(p, &nk);
			for (unsigned int j = 0; !r && j < nk; j++)
				r = PUT_ROW(sv->s, pk, "saving a port's P_Keys", V_INT(p->guid),
					    V_INT(k[j] & 0x7fff), V_INT(!!(k[j] & 0x8000)));
		}
	}
	sqlite3_finalize(pt);
	sqlite3_finalize(pk);
	return r;
}

int store_save_sweep(struct store *s, const struct fabric *f, const struct store_sweep *sw)
{
	struct save sv = { .s = s, .f = f, .sw = sw };
	int r;

	s->err[0] = 0;
	sv.now = sw->started;
	sv.finished = sw->finished ? sw->finished : sw->started + (int64_t)sw->seconds;
	if (f) {
		sv.fresh = calloc(f->nnodes ? f->nnodes : 1, sizeof(*sv.fresh));
		if (!sv.fresh)
			return -ENOMEM;
	}
	r = store_exec(s, "BEGIN IMMEDIATE", "starting a transaction");
	if (r) {
		free(sv.fresh);
		return r;
	}
	/*
	 * sqlite3_interrupt() stops only the statement running when it is
	 * called; this stops every later one too, so that a save abandoned
	 * at shutdown ends within a few thousand VM steps
	 */
	sqlite3_progress_handler(s->db, 1000, save_cancelled, s);
	r = store_prep(s, store_sql_event_insert, &sv.ev);
	if (!r)
		r = save_sweep_row(&sv);
	if (!r && f)
		r = save_nodes(&sv);
	if (!r && f)
		r = save_ports(&sv);
	if (!r && f)
		r = save_vanished(&sv);
	if (!r && f)
		r = save_links(&sv);
	if (!r && f)
		r = save_lids(&sv);
	if (!r && f)
		r = save_partitions(&sv);
	if (!r)
		r = save_finish(&sv);
	sqlite3_finalize(sv.ev);
	free(sv.fresh);
	sqlite3_progress_handler(s->db, 0, NULL, NULL);
	if (atomic_load(&s->cancel)) {
		/* whether a statement was interrupted or all of them ran */
		snprintf(s->err, sizeof(s->err), "saving the sweep: interrupted");
		r = -ECANCELED;
	}
	if (!r)
		r = store_exec(s, "COMMIT", "committing the sweep");
	if (r) {
		if (!s->err[0])
			snprintf(s->err, sizeof(s->err), "saving the sweep: %s", strerror(-r));
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	}
	return r;
}
