/* SPDX-License-Identifier: MIT */
/*
 * The store's insides, shared by its files (store.c: the schema, opening,
 * LIDs, events and the SQL helpers; store_sweep.c: saving a sweep;
 * store_read.c: reading back, loading the fabric, the rows smd keeps
 * across restarts; store_health.c: isolated links, health events). Not an
 * API.
 */
#ifndef SMD_DB_STORE_INT_H
#define SMD_DB_STORE_INT_H

#include <stdatomic.h>
#include <stdbool.h>
#include <sqlite3.h>

#include "db/store.h"

#define STR_(x) #x
#define STR(x) STR_(x)

struct store {
	sqlite3 *db;
	sqlite3_stmt *lookup;
	char err[256];
	atomic_bool cancel;	/* store_interrupt(): no sweep is committed any more */
};

/* The error of rc while doing what, kept for store_errmsg(): -errno */
int store_fail(struct store *s, int rc, const char *what);
int store_prep(struct store *s, const char *sql, sqlite3_stmt **st);
/* Run a statement that returns no rows; it is reset for the next use */
int store_run(struct store *s, sqlite3_stmt *st, const char *what);
int store_exec(struct store *s, const char *sql, const char *what);
void store_bind_guid(sqlite3_stmt *st, int i, uint64_t g);
uint64_t store_col_guid(sqlite3_stmt *st, int i);
void store_col_text(sqlite3_stmt *st, int i, char *buf, size_t len);

/*
 * Rows, stated by their columns: a value for each parameter of a
 * statement (an integer of any width, which SQLite keeps as INTEGER, text,
 * a blob or NULL), bound in order as ?1, ?2, ...
 */
struct sql_val {
	enum { SQL_NULL, SQL_INT, SQL_TEXT, SQL_BLOB } type;
	int64_t i;
	const void *p;
	int len;
};

#define V_NULL		((struct sql_val){ .type = SQL_NULL })
#define V_INT(x)	((struct sql_val){ .type = SQL_INT, .i = (int64_t)(x) })
#define V_TEXT(t)	((struct sql_val){ .type = SQL_TEXT, .p = (t) })
#define V_BLOB(b, n)	((struct sql_val){ .type = SQL_BLOB, .p = (b), .len = (int)(n) })

/*
 * Bind v[0..n) to st. Text and blobs are not copied: every caller steps
 * the statement before its values go, and binds again before the next step.
 */
void store_bind_vals(sqlite3_stmt *st, const struct sql_val *v, size_t n);
/* Write one row: st with v bound, run and reset */
int store_put_row(struct store *s, sqlite3_stmt *st, const char *what,
		  const struct sql_val *v, size_t n);

#define PUT_ROW(s, st, what, ...)						\
	store_put_row(s, st, what, (const struct sql_val[]){ __VA_ARGS__ },		\
		sizeof((const struct sql_val[]){ __VA_ARGS__ }) / sizeof(struct sql_val))

/*
 * A table written by keyed rows, each upserted or deleted: put_sql takes a
 * row's nput values, del_sql the first ndel of them (its key); row() gives
 * row i of rows (and now) and says whether it is present
 */
struct row_table {
	const char *put_sql, *del_sql;
	size_t nput, ndel;
	const char *what;
	bool (*row)(const void *rows, size_t i, int64_t now, struct sql_val *v);
};

#define ROW_VALS_MAX 8

/* n rows of t in one transaction: all of them or none */
int store_save_rows(struct store *s, const struct row_table *t, const void *rows, size_t n,
		    int64_t now);
/*
 * Every row sql selects (its parameters v), handed to row() with arg until
 * one returns non-zero, which is returned
 */
int store_each_row(struct store *s, const char *sql, const struct sql_val *v, size_t nv,
		   const char *what, int (*row)(sqlite3_stmt *st, void *arg), void *arg);

/* An event of the history (table event, man/smctl.8 SCHEMA) */
struct ev {
	const char *kind;
	uint64_t node, port_guid, peer;		/* 0: none */
	int port, peer_port;			/* -1: none */
	bool has_old, has_new;
	int64_t old_i, new_i;
	const char *old_s, *new_s;		/* instead of old_i/new_i */
	const char *detail;
};

#define EV(k) (struct ev){ .kind = (k), .port = -1, .peer_port = -1 }

/* A value, or NULL when the event has none; a change's old or new value */
struct sql_val store_v_opt(bool has, int64_t i);
struct sql_val store_v_change(const char *str, bool has, int64_t i);
int store_event_add(struct store *s, sqlite3_stmt *st, int64_t sweep_id, int64_t now,
		    const struct ev *e);
extern const char store_sql_event_insert[];

#endif
