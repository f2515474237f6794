// SPDX-License-Identifier: MIT
/* OpenSM's guid2lid file: read and checked whole (db/guid2lid.h) */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "db/guid2lid.h"

/* A number as OpenSM writes it (0x hex) or decimal: digits only, no sign, no blanks */
static int parse_num(const char *t, uint64_t max, uint64_t *out)
{
	unsigned long long x;
	char *end;

	if (!isdigit((unsigned char)*t))
		return -EINVAL;
	errno = 0;
	x = strtoull(t, &end, 0);
	if (errno || *end || end == t)
		return -EINVAL;
	if (x > max)
		return -ERANGE;
	*out = x;
	return 0;
}

/* The lines of text f holds: no NUL, no control characters but blanks */
static bool is_text(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '\n' || c == '\r' || c == '\t' || (c >= 0x20 && c < 0x7f))
			continue;
		return false;
	}
	return true;
}

/* "LID 5" or "LIDs 8-11" */
static const char *lid_range(const struct lid_reservation *e, char *buf, size_t len)
{
	if (e->lmc)
		snprintf(buf, len, "LIDs %u-%u", e->lid, e->lid + (1u << e->lmc) - 1);
	else
		snprintf(buf, len, "LID %u", e->lid);
	return buf;
}

struct g2l_sort {
	uint64_t key;		/* GUID, or LID */
	size_t i;
};

static int cmp_sort(const void *a, const void *b)
{
	const struct g2l_sort *x = a, *y = b;

	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

/*
 * The whole file's rules: a GUID once, a LID once. 0, or -EEXIST with the
 * later line named in err.
 */
static int check_unique(const struct guid2lid *g, const char *name, char *err, size_t errlen)
{
	struct g2l_sort *v = calloc(g->n ? g->n : 1, sizeof(*v));
	int r = 0;

	if (!v) {
		snprintf(err, errlen, "%s: out of memory", name);
		return -ENOMEM;
	}
	for (size_t i = 0; i < g->n; i++)
		v[i] = (struct g2l_sort){ .key = g->e[i].guid, .i = i };
	qsort(v, g->n, sizeof(*v), cmp_sort);
	for (size_t i = 1; !r && i < g->n; i++) {
		if (v[i].key != v[i - 1].key)
			continue;
		snprintf(err, errlen, "%s:%u: port GUID 0x%016" PRIx64 " again (first on line %u)",
			 name, g->line[v[i].i], v[i].key, g->line[v[i - 1].i]);
		r = -EEXIST;
	}
	for (size_t i = 0; !r && i < g->n; i++)
		v[i] = (struct g2l_sort){ .key = g->e[i].lid, .i = i };
	qsort(v, g->n, sizeof(*v), cmp_sort);
	/*
	 * Blocks are aligned to their sizes: of two that overlap, one holds the
	 * other, and the block after it in LID order overlaps it too
	 */
	for (size_t i = 1; !r && i < g->n; i++) {
		size_t ia = v[i - 1].i, ib = v[i].i, t;
		char ra[24], rb[24];

		if (g->e[ib].lid > g->e[ia].lid + (1u << g->e[ia].lmc) - 1)
			continue;
		/* Name the entry that comes later in the file */
		if (g->line[ib] < g->line[ia]) {
			t = ia;
			ia = ib;
			ib = t;
		}
		snprintf(err, errlen, "%s:%u: %s of port GUID 0x%016" PRIx64 " overlap%s %s of "
			 "port GUID 0x%016" PRIx64 " (line %u)", name, g->line[ib],
			 lid_range(&g->e[ib], rb, sizeof(rb)), g->e[ib].guid,
			 g->e[ib].lmc ? "" : "s", lid_range(&g->e[ia], ra, sizeof(ra)),
			 g->e[ia].guid, g->line[ia]);
		r = -EEXIST;
	}
	free(v);
	return r;
}

/* One entry line: "GUID MINLID MAXLID"; 0, or -EINVAL with the reason in why */
static int parse_line(char *s, struct lid_reservation *e, char *why, size_t whylen)
{
	char *tok[4], *save = NULL;
	uint64_t guid, lo, hi, size;
	unsigned int n = 0, lmc = 0;

	for (char *t = strtok_r(s, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save)) {
		if (n == 3) {
			snprintf(why, whylen, "more than 3 fields (expected 0xPORTGUID 0xMINLID "
				 "0xMAXLID)");
			return -EINVAL;
		}
		tok[n++] = t;
	}
	if (n != 3) {
		snprintf(why, whylen, "%u field%s (expected 0xPORTGUID 0xMINLID 0xMAXLID)", n,
			 n == 1 ? "" : "s");
		return -EINVAL;
	}
	if (parse_num(tok[0], UINT64_MAX, &guid) < 0) {
		snprintf(why, whylen, "bad port GUID '%.40s'", tok[0]);
		return -EINVAL;
	}
	if (!guid) {
		snprintf(why, whylen, "port GUID 0");
		return -EINVAL;
	}
	if (parse_num(tok[1], UINT16_MAX, &lo) < 0 || parse_num(tok[2], UINT16_MAX, &hi) < 0) {
		snprintf(why, whylen, "bad LID '%.20s' (expected a number 0x0001-0xbfff)",
			 parse_num(tok[1], UINT16_MAX, &lo) < 0 ? tok[1] : tok[2]);
		return -EINVAL;
	}
	/* IBA 4.1.3: LID 0 is reserved, 0xc000 and above are multicast */
	if (lo < LID_UCAST_MIN || lo > LID_UCAST_MAX || hi > LID_UCAST_MAX) {
		snprintf(why, whylen, "LID %" PRIu64 " is not a unicast LID (1-%u)",
			 lo < LID_UCAST_MIN || lo > LID_UCAST_MAX ? lo : hi, LID_UCAST_MAX);
		return -EINVAL;
	}
	if (hi < lo) {
		snprintf(why, whylen, "last LID %" PRIu64 " below first LID %" PRIu64, hi, lo);
		return -EINVAL;
	}
	/* LMC (IBA 7.11.1): 2^LMC LIDs, the base LID's low LMC bits 0, LMC at most 7 */
	size = hi - lo + 1;
	while ((1u << lmc) < size)
		lmc++;
	if ((1u << lmc) != size || lmc > 7) {
		snprintf(why, whylen, "LIDs %" PRIu64 "-%" PRIu64 ": %" PRIu64 " LIDs, not 2^LMC "
			 "(1, 2, 4, ... 128)", lo, hi, size);
		return -EINVAL;
	}
	if (lo & (size - 1)) {
		snprintf(why, whylen, "LIDs %" PRIu64 "-%" PRIu64 ": base LID not aligned to LMC %u "
			 "(a multiple of %" PRIu64 ")", lo, hi, lmc, size);
		return -EINVAL;
	}
	e->guid = guid;
	e->lid = (uint16_t)lo;
	e->lmc = (uint8_t)lmc;
	return 0;
}

int guid2lid_read(FILE *f, const char *name, struct guid2lid *out, char *err, size_t errlen)
{
	struct guid2lid g = { 0 };
	char *line = NULL;
	size_t cap = 0, ncap = 0;
	unsigned int lineno = 0;
	ssize_t len;
	int r = 0;

	*out = (struct guid2lid){ 0 };
	while (!r && (len = getline(&line, &cap, f)) >= 0) {
		char why[160], *s;

		lineno++;
		if ((size_t)len > GUID2LID_MAX_LINE) {
			snprintf(err, errlen, "%s:%u: line longer than %d bytes: not an OpenSM "
				 "guid2lid file", name, lineno, GUID2LID_MAX_LINE);
			r = -EINVAL;
			break;
		}
		if (!is_text(line, (size_t)len)) {
			snprintf(err, errlen, "%s:%u: binary data (NUL or control bytes): not an "
				 "OpenSM guid2lid file", name, lineno);
			r = -EINVAL;
			break;
		}
		s = line + strspn(line, " \t\r\n");
		if (!*s || *s == '#')
			continue;
		if (g.n == GUID2LID_MAX_ENTRIES) {
			snprintf(err, errlen, "%s:%u: more than %d entries", name, lineno,
				 GUID2LID_MAX_ENTRIES);
			r = -E2BIG;
			break;
		}
		if (g.n == ncap) {
			size_t c = ncap ? ncap * 2 : 256;
			struct lid_reservation *ne = realloc(g.e, c * sizeof(*ne));
			unsigned int *nl = ne ? realloc(g.line, c * sizeof(*nl)) : NULL;

			if (ne)
				g.e = ne;
			if (!nl) {
				snprintf(err, errlen, "%s: out of memory", name);
				r = -ENOMEM;
				break;
			}
			g.line = nl;
			ncap = c;
		}
		if (parse_line(s, &g.e[g.n], why, sizeof(why)) < 0) {
			snprintf(err, errlen, "%s:%u: %s", name, lineno, why);
			r = -EINVAL;
			break;
		}
		g.line[g.n++] = lineno;
	}
	free(line);
	if (!r && ferror(f)) {
		snprintf(err, errlen, "%s: read error", name);
		r = -EIO;
	}
	if (!r && !g.n) {
		snprintf(err, errlen, "%s: no entries (an OpenSM guid2lid file has a "
			 "\"0xPORTGUID 0xMINLID 0xMAXLID\" line per port)", name);
		r = -ENODATA;
	}
	if (!r)
		r = check_unique(&g, name, err, errlen);
	if (r < 0) {
		guid2lid_free(&g);
		return r;
	}
	*out = g;
	return 0;
}

int guid2lid_load(const char *path, struct guid2lid *out, char *err, size_t errlen)
{
	FILE *f = fopen(path, "re");
	int r;

	*out = (struct guid2lid){ 0 };
	if (!f) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	r = guid2lid_read(f, path, out, err, errlen);
	fclose(f);
	return r;
}

void guid2lid_free(struct guid2lid *g)
{
	free(g->e);
	free(g->line);
	*g = (struct guid2lid){ 0 };
}
