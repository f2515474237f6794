/* SPDX-License-Identifier: MIT */
/*
 * A writer of Prometheus's text exposition format (version 0.0.4), for
 * smd's `metrics` answer (smd/status_metrics.c) and smd_exporter's own
 * series: a family is its "# HELP" and "# TYPE" lines, written once, then
 * all its samples, one after the other. Label values may hold any bytes (a
 * node description comes off the wire): backslash, double quote and line
 * feed are escaped as the format says, other control characters become '?',
 * bytes that are not UTF-8 U+FFFD. Into a growing buffer like util/json.h;
 * out of memory is remembered and reported by metrics_text() (NULL).
 *
 * Names are the program's own. One the format refuses (a metric or label
 * name outside [a-zA-Z_:][a-zA-Z0-9_:]*, a label name starting "__"), a
 * counter not named "..._total", a family written twice, a sample outside
 * any family: each is left out and counted in `invalid`, so a test of the
 * renderer catches it instead of the scraper.
 */
#ifndef SMD_UTIL_METRICS_H
#define SMD_UTIL_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define METRICS_NAME_MAX	128
#define METRICS_FAMILIES_MAX	256	/* families one text may hold (repeats are found) */
#define METRICS_CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

enum metrics_type {
	METRICS_COUNTER,	/* only goes up (and to 0 when the program restarts) */
	METRICS_GAUGE,
};

struct metrics_label {
	const char *name;
	const char *value;
};

struct metrics {
	char *buf;
	size_t len, cap;
	bool oom;
	unsigned int invalid;		/* names refused, families repeated, stray samples */
	char family[METRICS_NAME_MAX + 1];	/* the family samples go to; "" none */
	uint64_t seen[METRICS_FAMILIES_MAX];	/* hashes of the families written */
	unsigned int nseen;
};

void metrics_init(struct metrics *m);
void metrics_free(struct metrics *m);
/* Start a family: its HELP (any text, escaped) and TYPE lines */
void metrics_family(struct metrics *m, const char *name, enum metrics_type type,
		    const char *help);
/* One sample of the current family, labels[0..n) (n 0: none) */
void metrics_u64(struct metrics *m, const struct metrics_label *labels, size_t n, uint64_t v);
/* ... a finite value with 15 significant digits; NaN and infinities as the format spells them */
void metrics_double(struct metrics *m, const struct metrics_label *labels, size_t n, double v);
/* A sample with one label */
void metrics_u64_1(struct metrics *m, const char *label, const char *value, uint64_t v);

/*
 * The labels of one port of the fabric, as every per-port series carries
 * them: node_guid="0x%016x", port="N", node_desc="..." (escaped when
 * written). Returns pl->l, METRICS_PORT_LABELS of them, valid while pl is.
 */
#define METRICS_PORT_LABELS	3
struct metrics_port_labels {
	char guid[19];
	char port[12];
	struct metrics_label l[METRICS_PORT_LABELS];
};
const struct metrics_label *metrics_port_labels(struct metrics_port_labels *pl,
						uint64_t node_guid, unsigned int port,
						const char *node_desc);

/*
 * Forget the text written so far (it was sent) but not the families: an
 * answer written in pieces goes on with the same rules (no family twice)
 */
void metrics_drop_text(struct metrics *m);
/* The text so far (NUL-terminated; "" when empty), or NULL after an allocation failure */
const char *metrics_text(const struct metrics *m);
size_t metrics_len(const struct metrics *m);

/* Whether name is a valid metric name (labels: a valid label name) of the format */
bool metrics_name_ok(const char *name);
bool metrics_label_name_ok(const char *name);

#endif
