// SPDX-License-Identifier: MIT
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/json.h"
#include "util/utf8.h"

void json_init(struct json *j)
{
	memset(j, 0, sizeof(*j));
	j->first[0] = true;
}

void json_free(struct json *j)
{
	free(j->buf);
	json_init(j);
}

static void put(struct json *j, const char *s, size_t n)
{
	if (j->oom)
		return;
	if (j->len + n + 1 > j->cap) {
		size_t cap = j->cap ? j->cap : 256;
		char *b;

		while (j->len + n + 1 > cap)
			cap *= 2;
		b = realloc(j->buf, cap);
		if (!b) {
			j->oom = true;
			return;
		}
		j->buf = b;
		j->cap = cap;
	}
	memcpy(j->buf + j->len, s, n);
	j->len += n;
	j->buf[j->len] = 0;
}

static void puts_(struct json *j, const char *s)
{
	put(j, s, strlen(s));
}

static void quoted(struct json *j, const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t n = strlen(s);

	put(j, "\"", 1);
	while (n) {
		uint32_t cp;
		size_t k = utf8_len(c, n, &cp);
		char esc[8];

		if (!k) {
			puts_(j, "\\ufffd");
			k = 1;
		} else if (*c == '"' || *c == '\\') {
			esc[0] = '\\';
			esc[1] = (char)*c;
			put(j, esc, 2);
		} else if (*c < 0x20 || *c == 0x7f) {
			snprintf(esc, sizeof(esc), "\\u%04x", *c);
			puts_(j, esc);
		} else {
			put(j, (const char *)c, k);
		}
		c += k;
		n -= k;
	}
	put(j, "\"", 1);
}

/* The comma and the key before a value at the current depth */
static void member(struct json *j, const char *key)
{
	if (!j->first[j->depth])
		put(j, ",", 1);
	j->first[j->depth] = false;
	if (key) {
		quoted(j, key);
		put(j, ":", 1);
	}
}

static void open_(struct json *j, const char *key, const char *brace)
{
	member(j, key);
	put(j, brace, 1);
	if (j->depth < JSON_DEPTH_MAX)
		j->depth++;
	else
		j->oom = true;	/* a bug of the caller: make it visible */
	j->first[j->depth] = true;
}

static void close_(struct json *j, const char *brace)
{
	put(j, brace, 1);
	if (j->depth)
		j->depth--;
}

void json_obj_begin(struct json *j, const char *key)
{
	open_(j, key, "{");
}

void json_obj_end(struct json *j)
{
	close_(j, "}");
}

void json_arr_begin(struct json *j, const char *key)
{
	open_(j, key, "[");
}

void json_arr_end(struct json *j)
{
	close_(j, "]");
}

void json_str(struct json *j, const char *key, const char *val)
{
	member(j, key);
	quoted(j, val ? val : "");
}

void json_strf(struct json *j, const char *key, const char *fmt, ...)
{
	char buf[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	json_str(j, key, buf);
}

void json_u64(struct json *j, const char *key, uint64_t v)
{
	char buf[32];

	member(j, key);
	snprintf(buf, sizeof(buf), "%" PRIu64, v);
	puts_(j, buf);
}

void json_i64(struct json *j, const char *key, int64_t v)
{
	char buf[32];

	member(j, key);
	snprintf(buf, sizeof(buf), "%" PRId64, v);
	puts_(j, buf);
}

void json_double(struct json *j, const char *key, double v)
{
	char buf[64];

	member(j, key);
	if (!isfinite(v)) {
		puts_(j, "null");
		return;
	}
	if (fabs(v) >= 1e15) {
		snprintf(buf, sizeof(buf), "%.17g", v);
		puts_(j, buf);
		return;
	}
	snprintf(buf, sizeof(buf), "%.6f", v);
	/* 1.500000 -> 1.5, 2.000000 -> 2 */
	for (size_t n = strlen(buf); n > 1 && buf[n - 1] == '0'; n--)
		buf[n - 1] = 0;
	if (buf[strlen(buf) - 1] == '.')
		buf[strlen(buf) - 1] = 0;
	puts_(j, buf);
}

void json_bool(struct json *j, const char *key, bool v)
{
	member(j, key);
	puts_(j, v ? "true" : "false");
}

void json_null(struct json *j, const char *key)
{
	member(j, key);
	puts_(j, "null");
}

void json_hex64(struct json *j, const char *key, uint64_t v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%016" PRIx64, v);
	json_str(j, key, buf);
}

const char *json_text(const struct json *j)
{
	if (j->oom)
		return NULL;
	return j->buf ? j->buf : "";
}
