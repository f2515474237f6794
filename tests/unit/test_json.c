// SPDX-License-Identifier: MIT
/*
 * The JSON writer smd and smctl answer with: nesting and commas, numbers,
 * and strings from the wire (node descriptions) made valid whatever their
 * bytes: quotes and backslashes escaped, control characters as \u00XX,
 * bytes that are not UTF-8 as U+FFFD, UTF-8 kept as it is.
 */
#include <math.h>
#include <string.h>

#include "util/json.h"
#include "tests/unit/unit.h"

static void expect(struct json *j, const char *want)
{
	const char *got = json_text(j);

	CHECK_MSG(got && !strcmp(got, want), "got %s, want %s", got ? got : "(null)", want);
	json_free(j);
}

static void test_shapes(void)
{
	struct json j;

	json_init(&j);
	json_obj_begin(&j, NULL);
	json_str(&j, "status", "ok");
	json_u64(&j, "n", 18446744073709551615u);
	json_i64(&j, "neg", -5);
	json_bool(&j, "yes", true);
	json_null(&j, "none");
	json_hex64(&j, "guid", 0x0002c90300000004);
	json_arr_begin(&j, "list");
	json_u64(&j, NULL, 1);
	json_obj_begin(&j, NULL);
	json_obj_end(&j);
	json_arr_begin(&j, NULL);
	json_arr_end(&j);
	json_arr_end(&j);
	json_double(&j, "half", 1.5);
	json_double(&j, "two", 2.0);
	json_double(&j, "nan", NAN);
	json_double(&j, "big", 1e300);
	json_obj_end(&j);
	expect(&j, "{\"status\":\"ok\",\"n\":18446744073709551615,\"neg\":-5,\"yes\":true,"
		   "\"none\":null,\"guid\":\"0x0002c90300000004\",\"list\":[1,{},[]],"
		   "\"half\":1.5,\"two\":2,\"nan\":null,\"big\":1.0000000000000001e+300}");
}

static void test_strings(void)
{
	struct json j;

	json_init(&j);
	json_str(&j, NULL, "a\"b\\c\n\x01\x7f");
	expect(&j, "\"a\\\"b\\\\c\\u000a\\u0001\\u007f\"");
	/* UTF-8 kept; a lone continuation byte, a cut sequence, an overlong form replaced */
	json_init(&j);
	json_str(&j, NULL, "h\xc3\xa9 \x80 \xe2\x82 \xc0\xaf \xed\xa0\x80 \xf0\x9f\x98\x80");
	expect(&j, "\"h\xc3\xa9 \\ufffd \\ufffd\\ufffd \\ufffd\\ufffd \\ufffd\\ufffd\\ufffd "
		   "\xf0\x9f\x98\x80\"");
	json_init(&j);
	json_strf(&j, NULL, "%d-%s", 7, "x");
	expect(&j, "\"7-x\"");
}

static void test_depth(void)
{
	struct json j;

	/* Deeper than the writer allows: an error, never a buffer overrun */
	json_init(&j);
	for (int i = 0; i < JSON_DEPTH_MAX + 2; i++)
		json_arr_begin(&j, NULL);
	CHECK(json_text(&j) == NULL);
	json_free(&j);
}

int main(void)
{
	RUN(test_shapes);
	RUN(test_strings);
	RUN(test_depth);
	return unit_report();
}
