// SPDX-License-Identifier: MIT
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smd/json.h"

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

/* The length of the UTF-8 sequence at s (at most n bytes), 0 if it is not one */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	/* Overlong forms, surrogates and code points past U+10FFFF are not UTF-8 */
	if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

static void quoted(struct json *j, const char *s)
{
	const unsigned char *c = (const unsigned char *)s;
	size_t n = strlen(s);

	put(j, "\"", 1);
	while (n) {
		size_t k = utf8_len(c, n);
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
