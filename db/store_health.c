// SPDX-License-Identifier: MIT
/*
 * Fabric health (issue 20): the links the health rules took out of service
 * (table isolated_port, kept across restarts) and the bounded history of
 * error events (table perf_event).
 */
#include <errno.h>
#include <stdint.h>
#include <sqlite3.h>

#include "db/store_int.h"

static bool isolated_row(const void *rows, size_t i, int64_t now, struct sql_val *v)
{
	const struct store_isolated *x = (const struct store_isolated *)rows + i;

	(void)now;
	v[0] = V_INT((int64_t)x->node_guid);
	v[1] = V_INT(x->port);
	v[2] = V_INT(x->since);
	v[3] = V_TEXT(x->rule);
	v[4] = V_TEXT(x->reason);
	return x->present;
}

static const struct row_table isolated_rows = {
	.put_sql = "INSERT INTO isolated_port (node_guid, port, since, rule, reason)"
		   " VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (node_guid, port) DO UPDATE SET"
		   " rule = excluded.rule, reason = excluded.reason",
	.del_sql = "DELETE FROM isolated_port WHERE node_guid = ?1 AND port = ?2",
	.nput = 5, .ndel = 2, .what = "saving an isolated port", .row = isolated_row,
};

int store_isolated_save(struct store *s, const struct store_isolated *v, size_t n, int64_t now)
{
	for (size_t i = 0; i < n; i++)
		if (!v[i].port || v[i].port > 254)
			return -EINVAL;
	return store_save_rows(s, &isolated_rows, v, n, now);
}

struct isolated_each {
	int (*cb)(void *ctx, const struct store_isolated *v);
	void *ctx;
};

static int isolated_each_row(sqlite3_stmt *st, void *arg)
{
	const struct isolated_each *a = arg;
	struct store_isolated v = { .present = 1 };
	int port = sqlite3_column_int(st, 1);

	/* A row the CHECKs let through with a port smd cannot name is skipped */
	if (port < 1 || port > 254)
		return 0;
	v.node_guid = store_col_guid(st, 0);
	v.port = (uint8_t)port;
	v.since = sqlite3_column_int64(st, 2);
	store_col_text(st, 3, v.rule, sizeof(v.rule));
	store_col_text(st, 4, v.reason, sizeof(v.reason));
	return a->cb(a->ctx, &v);
}

int store_foreach_isolated(struct store *s, int (*cb)(void *ctx, const struct store_isolated *v),
			   void *ctx)
{
	struct isolated_each a = { cb, ctx };

	return store_each_row(s, "SELECT node_guid, port, since, rule, reason FROM isolated_port"
			      " ORDER BY since, node_guid, port", NULL, 0, "reading isolated ports",
			      isolated_each_row, &a);
}

int store_perf_events_add(struct store *s, const struct store_perf_event *v, size_t n,
			  uint64_t keep)
{
	sqlite3_stmt *put = NULL, *prune = NULL;
	int r;

	if (!n)
		return 0;
	r = store_exec(s, "BEGIN IMMEDIATE", "starting a transaction");
	if (r < 0)
		return r;
	r = store_prep(s, "INSERT INTO perf_event (time, node_guid, port, kind, count, total, "
		       "detail) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", &put);
	for (size_t i = 0; i < n && !r; i++)
		r = PUT_ROW(s, put, "recording a health event", V_INT(v[i].time),
			    V_INT((int64_t)v[i].node_guid), V_INT(v[i].port), V_TEXT(v[i].kind),
			    V_INT((int64_t)(v[i].count > INT64_MAX ? INT64_MAX : v[i].count)),
			    V_INT((int64_t)(v[i].total > INT64_MAX ? INT64_MAX : v[i].total)),
			    V_TEXT(v[i].detail));
	/* Bounded: the newest keep rows stay */
	if (!r)
		r = store_prep(s, "DELETE FROM perf_event WHERE id <= "
			       "(SELECT max(id) FROM perf_event) - ?1", &prune);
	if (!r)
		r = PUT_ROW(s, prune, "pruning health events",
			    V_INT((int64_t)(keep > INT64_MAX ? INT64_MAX : keep)));
	sqlite3_finalize(put);
	sqlite3_finalize(prune);
	if (!r)
		r = store_exec(s, "COMMIT", "committing");
	if (r < 0)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return r;
}

struct perf_event_each {
	int (*cb)(void *ctx, const struct store_perf_event *v);
	void *ctx;
};

static int perf_event_each_row(sqlite3_stmt *st, void *arg)
{
	const struct perf_event_each *a = arg;
	struct store_perf_event v = { 0 };
	int port = sqlite3_column_int(st, 2);

	if (port < 0 || port > 254)
		return 0;
	v.time = sqlite3_column_int64(st, 0);
	v.node_guid = store_col_guid(st, 1);
	v.port = (uint8_t)port;
	store_col_text(st, 3, v.kind, sizeof(v.kind));
	v.count = (uint64_t)sqlite3_column_int64(st, 4);
	v.total = (uint64_t)sqlite3_column_int64(st, 5);
	store_col_text(st, 6, v.detail, sizeof(v.detail));
	return a->cb(a->ctx, &v);
}

int store_foreach_perf_event(struct store *s, unsigned int limit,
			     int (*cb)(void *ctx, const struct store_perf_event *v), void *ctx)
{
	struct perf_event_each a = { cb, ctx };

	return store_each_row(s, "SELECT time, node_guid, port, kind, count, total, detail FROM"
			      " (SELECT * FROM perf_event ORDER BY id DESC LIMIT ?1) ORDER BY id",
			      (const struct sql_val[]){ V_INT(limit) }, 1, "reading health events",
			      perf_event_each_row, &a);
}
