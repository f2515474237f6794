// SPDX-License-Identifier: MIT
/*
 * Prometheus's text exposition format, version 0.0.4 (the rules are in
 * metrics.h): families, samples, label escaping.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/metrics.h"
#include "util/utf8.h"

void metrics_init(struct metrics *m)
{
	memset(m, 0, sizeof(*m));
}

void metrics_drop_text(struct metrics *m)
{
	m->len = 0;
	if (m->buf)
		m->buf[0] = 0;
}

void metrics_free(struct metrics *m)
{
	free(m->buf);
	metrics_init(m);
}

static void put(struct metrics *m, const char *s, size_t n)
{
	if (m->oom)
		return;
	if (m->len + n + 1 > m->cap) {
		size_t cap = m->cap ? m->cap : 4096;
		char *b;

		while (cap < m->len + n + 1)
			cap *= 2;
		b = realloc(m->buf, cap);
		if (!b) {
			m->oom = true;
			return;
		}
		m->buf = b;
		m->cap = cap;
	}
	memcpy(m->buf + m->len, s, n);
	m->len += n;
	m->buf[m->len] = 0;
}

static void puts_(struct metrics *m, const char *s)
{
	put(m, s, strlen(s));
}

static bool name_char(char c, bool first, bool colon)
{
	if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_')
		return true;
	if (c == ':')
		return colon;
	return !first && c >= '0' && c <= '9';
}

static bool name_ok(const char *name, bool colon)
{
	size_t n = name ? strlen(name) : 0;

	if (!n || n > METRICS_NAME_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!name_char(name[i], i == 0, colon))
			return false;
	return true;
}

bool metrics_name_ok(const char *name)
{
	return name_ok(name, true);
}

/* Names starting "__" are Prometheus's own */
bool metrics_label_name_ok(const char *name)
{
	return name_ok(name, false) && strncmp(name, "__", 2) != 0;
}

static uint64_t hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
	return h;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t n = strlen(s), t = strlen(tail);

	return n >= t && !strcmp(s + n - t, tail);
}

void metrics_family(struct metrics *m, const char *name, enum metrics_type type,
		    const char *help)
{
	uint64_t h;

	m->family[0] = 0;
	if (!metrics_name_ok(name) || (type == METRICS_COUNTER && !ends_with(name, "_total"))) {
		m->invalid++;
		return;
	}
	/* All of a family's samples are one group: a second start would split it */
	h = hash(name);
	for (unsigned int i = 0; i < m->nseen; i++)
		if (m->seen[i] == h) {
			m->invalid++;
			return;
		}
	if (m->nseen < METRICS_FAMILIES_MAX)
		m->seen[m->nseen++] = h;
	puts_(m, "# HELP ");
	puts_(m, name);
	put(m, " ", 1);
	/* HELP escapes backslash and line feed (not the double quote) */
	for (const char *c = help ? help : ""; *c; c++) {
		if (*c == '\\')
			puts_(m, "\\\\");
		else if (*c == '\n')
			puts_(m, "\\n");
		else
			put(m, c, 1);
	}
	puts_(m, "\n# TYPE ");
	puts_(m, name);
	puts_(m, type == METRICS_COUNTER ? " counter\n" : " gauge\n");
	snprintf(m->family, sizeof(m->family), "%s", name);
}

/* A label value: any bytes in, valid UTF-8 with the format's three escapes out */
static void put_value(struct metrics *m, const char *value)
{
	const uint8_t *c = (const uint8_t *)(value ? value : "");
	size_t n = strlen((const char *)c);

	while (n) {
		uint32_t cp;
		size_t k = utf8_len(c, n, &cp);

		if (!k) {
			puts_(m, "\xef\xbf\xbd");	/* U+FFFD */
			k = 1;
		} else if (*c == '\\') {
			puts_(m, "\\\\");
		} else if (*c == '"') {
			puts_(m, "\\\"");
		} else if (*c == '\n') {
			puts_(m, "\\n");
		} else if (*c < 0x20 || *c == 0x7f) {
			put(m, "?", 1);
		} else {
			put(m, (const char *)c, k);
		}
		c += k;
		n -= k;
	}
}

/* "name{a="x",b="y"} ", or false (nothing written) when a label name is refused */
static bool sample_start(struct metrics *m, const struct metrics_label *labels, size_t n)
{
	if (!m->family[0]) {
		m->invalid++;
		return false;
	}
	for (size_t i = 0; i < n; i++)
		if (!metrics_label_name_ok(labels[i].name)) {
			m->invalid++;
			return false;
		}
	puts_(m, m->family);
	for (size_t i = 0; i < n; i++) {
		put(m, i ? "," : "{", 1);
		puts_(m, labels[i].name);
		puts_(m, "=\"");
		put_value(m, labels[i].value);
		put(m, "\"", 1);
	}
	puts_(m, n ? "} " : " ");
	return true;
}

void metrics_u64(struct metrics *m, const struct metrics_label *labels, size_t n, uint64_t v)
{
	char buf[32];

	if (!sample_start(m, labels, n))
		return;
	snprintf(buf, sizeof(buf), "%" PRIu64 "\n", v);
	puts_(m, buf);
}

void metrics_double(struct metrics *m, const struct metrics_label *labels, size_t n, double v)
{
	char buf[40];

	if (!sample_start(m, labels, n))
		return;
	if (isnan(v))
		snprintf(buf, sizeof(buf), "NaN\n");
	else if (isinf(v))
		snprintf(buf, sizeof(buf), "%sInf\n", v > 0 ? "+" : "-");
	else
		snprintf(buf, sizeof(buf), "%.15g\n", v);
	puts_(m, buf);
}

void metrics_u64_1(struct metrics *m, const char *label, const char *value, uint64_t v)
{
	const struct metrics_label l = { label, value };

	metrics_u64(m, &l, 1, v);
}

const struct metrics_label *metrics_port_labels(struct metrics_port_labels *pl,
						uint64_t node_guid, unsigned int port,
						const char *node_desc)
{
	snprintf(pl->guid, sizeof(pl->guid), "0x%016" PRIx64, node_guid);
	snprintf(pl->port, sizeof(pl->port), "%u", port);
	pl->l[0] = (struct metrics_label){ "node_guid", pl->guid };
	pl->l[1] = (struct metrics_label){ "port", pl->port };
	pl->l[2] = (struct metrics_label){ "node_desc", node_desc ? node_desc : "" };
	return pl->l;
}

const char *metrics_text(const struct metrics *m)
{
	if (m->oom)
		return NULL;
	return m->buf ? m->buf : "";
}

size_t metrics_len(const struct metrics *m)
{
	return m->oom ? 0 : m->len;
}
