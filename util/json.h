/* SPDX-License-Identifier: MIT */
/*
 * A JSON writer into a growing buffer, for the answers smd gives smctl and
 * for smctl's own --json output: objects and arrays nest, commas and
 * escaping are the writer's business. Strings are escaped so that any
 * bytes (a node description comes off the wire) give valid JSON: control
 * characters as \u00XX, bytes that are not UTF-8 as U+FFFD. Out of memory
 * is remembered and reported by json_text() (NULL), never half-written.
 */
#ifndef SMD_UTIL_JSON_H
#define SMD_UTIL_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define JSON_DEPTH_MAX	16

struct json {
	char *buf;
	size_t len, cap;
	unsigned int depth;
	bool first[JSON_DEPTH_MAX + 1];	/* nothing written yet at this depth */
	bool oom;
};

void json_init(struct json *j);
void json_free(struct json *j);
/* key: the member's name inside an object, NULL inside an array or at the top */
void json_obj_begin(struct json *j, const char *key);
void json_obj_end(struct json *j);
void json_arr_begin(struct json *j, const char *key);
void json_arr_end(struct json *j);
void json_str(struct json *j, const char *key, const char *val);
void json_strf(struct json *j, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
void json_u64(struct json *j, const char *key, uint64_t v);
void json_i64(struct json *j, const char *key, int64_t v);
/* A finite number with up to 6 decimals; NaN and infinities are written as null */
void json_double(struct json *j, const char *key, double v);
void json_bool(struct json *j, const char *key, bool v);
void json_null(struct json *j, const char *key);
/* A GUID or other 64-bit identifier, as the string "0x%016x" */
void json_hex64(struct json *j, const char *key, uint64_t v);
/* The text so far (NUL-terminated), or NULL after an allocation failure */
const char *json_text(const struct json *j);

#endif
