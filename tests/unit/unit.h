/* SPDX-License-Identifier: MIT */
/*
 * A tiny unit-test harness: CHECK() records a failure with its location and
 * goes on; every test binary ends with "N passed, N failed" and exits
 * non-zero when anything failed.
 */
#ifndef SMD_TESTS_UNIT_H
#define SMD_TESTS_UNIT_H

#include <stdio.h>
#include <stdlib.h>

static unsigned int unit_passed, unit_failed;

#define CHECK(cond) do {							\
	if (cond) {								\
		unit_passed++;							\
	} else {								\
		unit_failed++;							\
		fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
	}									\
} while (0)

/* CHECK with a message that says what was checked, printed on failure */
#define CHECK_MSG(cond, ...) do {						\
	if (cond) {								\
		unit_passed++;							\
	} else {								\
		unit_failed++;							\
		fprintf(stderr, "%s:%d: CHECK failed: ", __FILE__, __LINE__);	\
		fprintf(stderr, __VA_ARGS__);					\
		fprintf(stderr, "\n");						\
	}									\
} while (0)

#define CHECK_EQ(a, b) do {							\
	long long _a = (long long)(a), _b = (long long)(b);			\
	if (_a == _b) {								\
		unit_passed++;							\
	} else {								\
		unit_failed++;							\
		fprintf(stderr, "%s:%d: CHECK_EQ failed: %s = %lld, %s = %lld\n",	\
			__FILE__, __LINE__, #a, _a, #b, _b);			\
	}									\
} while (0)

#define RUN(test) do {								\
	unsigned int _f = unit_failed;						\
	test();									\
	fprintf(stderr, "%s %s\n", unit_failed == _f ? "ok  " : "FAIL", #test); \
} while (0)

/*
 * A whole file, NUL-terminated (test inputs: man pages, fixtures, fuzz
 * seeds); NULL if it cannot be read. *len (when not NULL) gets its size.
 */
static inline char *unit_read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf;
	long n;

	if (!f)
		return NULL;
	if (fseek(f, 0, SEEK_END) < 0 || (n = ftell(f)) < 0) {
		fclose(f);
		return NULL;
	}
	rewind(f);
	buf = (char *)calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	if (len)
		*len = buf ? (size_t)n : 0;
	return buf;
}

static inline int unit_report(void)
{
	printf("%u passed, %u failed\n", unit_passed, unit_failed);
	return unit_failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
