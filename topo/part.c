// SPDX-License-Identifier: MIT
/*
 * partitions.conf in OpenSM's syntax, membership of ports, and the layout
 * of P_Key tables (see part.h). Written from OpenSM's documentation
 * (doc/partition-config.txt, opensm(8)) and the IBA; where OpenSM reads a
 * mistake as something (an unknown flag ignored, an unknown membership
 * taken as limited), this parser refuses the file and says why.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>

#include "topo/part.h"
#include "util/macros.h"

#define DEF_MAX		1024	/* characters of a partition definition */
#define ITEM_MAX	1024	/* of a member or an mgid line */
#define QKEY_IPOIB	0x0b1b	/* RFC 4391: the IPoIB Q_Key */

struct parser {
	const char *s, *end;
	unsigned int line;
	const char *name;
	char *err;
	size_t errlen;
	struct part_conf *c;
	const struct part_defaults *d;
	uint32_t seq;			/* rules so far: later ones win */
	uint16_t counter;		/* generated P_Keys, as OpenSM numbers them */
};

static int perr(struct parser *ps, unsigned int line, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(ps->err, ps->errlen, "%s:%u: %s", ps->name, line, msg);
	return -EINVAL;
}

/* ---- values ---- */

/* IBA 15.2.5.16 rate codes and their Gb/s */
static const struct {
	uint8_t code;
	const char *gbps;
} rates[] = {
	{ 2, "2.5" }, { 3, "10" }, { 4, "30" }, { 5, "5" }, { 6, "20" }, { 7, "40" },
	{ 8, "60" }, { 9, "80" }, { 10, "120" }, { 11, "14" }, { 12, "56" }, { 13, "112" },
	{ 14, "168" }, { 15, "25" }, { 16, "100" }, { 17, "200" }, { 18, "300" }, { 19, "28" },
	{ 20, "50" }, { 21, "400" }, { 22, "600" }, { 23, "800" }, { 24, "1200" },
	{ 25, "1600" },
};

#define NRATES (ARRAY_SIZE(rates))

const char *part_rate_text(uint8_t code)
{
	for (size_t i = 0; i < NRATES; i++)
		if (rates[i].code == code)
			return rates[i].gbps;
	return "?";
}

/* An unsigned number in C notation (0x hex, decimal), the whole string */
static int parse_num(const char *s, unsigned long long max, unsigned long long *out)
{
	unsigned long long v;
	char *end;

	if (!*s || !isdigit((unsigned char)*s))
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || *end || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int part_parse_mtu(const char *s, uint8_t *code)
{
	unsigned long long v;

	if (parse_num(s, 65535, &v) < 0)
		return -EINVAL;
	if (v >= 1 && v <= 5) {
		*code = (uint8_t)v;
		return 0;
	}
	for (unsigned int c = 1; c <= 5; c++)
		if (v == 128u << c) {
			*code = (uint8_t)c;
			return 0;
		}
	return -EINVAL;
}

int part_parse_rate(const char *s, uint8_t *code)
{
	static const char *const units[] = { "gb/s", "gbps", "gb", "g" };
	char buf[16];
	size_t len = strlen(s);
	unsigned long long v;

	if (!len || len >= sizeof(buf))
		return -EINVAL;
	memcpy(buf, s, len + 1);
	for (size_t u = 0; u < ARRAY_SIZE(units); u++) {
		size_t ul = strlen(units[u]);

		if (len > ul && !strcasecmp(buf + len - ul, units[u])) {
			/* A value with its unit: Gb/s, never a code */
			buf[len - ul] = 0;
			for (size_t i = 0; i < NRATES; i++)
				if (!strcmp(buf, rates[i].gbps)) {
					*code = rates[i].code;
					return 0;
				}
			return -EINVAL;
		}
	}
	/*
	 * A number that is a code is the code, as OpenSM reads it: rate=10 is
	 * 120 Gb/s. OpenSM knows codes up to 24 (1200 Gb/s): a bare 25 stays
	 * 25 Gb/s, as such files meant it, and 1600 Gb/s is written 1600.
	 */
	if (parse_num(buf, 24, &v) == 0) {
		for (size_t i = 0; i < NRATES; i++)
			if (rates[i].code == v) {
				*code = rates[i].code;
				return 0;
			}
	}
	for (size_t i = 0; i < NRATES; i++)
		if (!strcmp(buf, rates[i].gbps)) {
			*code = rates[i].code;
			return 0;
		}
	return -EINVAL;
}

/* A prefix of one of full, limited, both (OpenSM: "limi"); 1 full, 0 limited, -1 none */
static int parse_membership(const char *s)
{
	size_t n = strlen(s);

	if (!n)
		return -1;
	if (!strncmp("full", s, n) || !strncmp("both", s, n))
		return 1;	/* both: full, as OpenSM without allow_both_pkeys */
	if (!strncmp("limited", s, n))
		return 0;
	return -1;
}

static char *trim(char *s)
{
	char *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strlen(s);
	while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
		*--e = 0;
	return s;
}

/* Split "name=value" at the first '=': *val NULL when there is none */
static void split_eq(char *s, char **name, char **val)
{
	char *eq = strchr(s, '=');

	*val = NULL;
	if (eq) {
		*eq = 0;
		*val = trim(eq + 1);
	}
	*name = trim(s);
}

/* ---- the model ---- */

static struct partition *find_pkey(struct part_conf *c, uint16_t pkey)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->parts[i].pkey == pkey)
			return &c->parts[i];
	return NULL;
}

const struct partition *part_find(const struct part_conf *c, uint16_t pkey)
{
	return find_pkey((struct part_conf *)c, PKEY_BASE(pkey));
}

static struct partition *part_add(struct part_conf *c, const char *name, uint16_t pkey,
				  const struct part_defaults *d)
{
	struct partition *p;

	if (c->n == c->cap) {
		size_t ncap = c->cap ? 2 * c->cap : 8;
		struct partition *np = realloc(c->parts, ncap * sizeof(*np));

		if (!np)
			return NULL;
		c->parts = np;
		c->cap = ncap;
	}
	p = &c->parts[c->n++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->pkey = pkey;
	p->bc.mtu = d->mtu;
	p->bc.rate = d->rate;
	p->bc.sl = d->sl;
	return p;
}

static int member_add(struct partition *p, uint8_t who, uint64_t guid, bool full, uint32_t seq,
		      bool implicit)
{
	if (p->nmembers == p->cap) {
		size_t ncap = p->cap ? 2 * p->cap : 8;
		struct part_member *nm = realloc(p->members, ncap * sizeof(*nm));

		if (!nm)
			return -ENOMEM;
		p->members = nm;
		p->cap = ncap;
	}
	p->members[p->nmembers++] = (struct part_member){
		.guid = guid, .seq = seq, .who = who, .full = full, .implicit = implicit,
	};
	return 0;
}

struct part_conf *part_conf_free(struct part_conf *c)
{
	if (!c)
		return NULL;
	for (size_t i = 0; i < c->n; i++) {
		free(c->parts[i].members);
		free(c->parts[i].groups);
	}
	free(c->parts);
	free(c);
	return NULL;
}

int part_conf_default(const struct part_defaults *d, struct part_conf **out)
{
	struct part_conf *c = calloc(1, sizeof(*c));
	struct partition *p;

	if (!c)
		return -ENOMEM;
	p = part_add(c, "Default", PKEY_DEFAULT, d);
	if (!p || member_add(p, PART_ALL, 0, true, 0, true) < 0) {
		part_conf_free(c);
		return -ENOMEM;
	}
	p->ipoib = d->ipoib;
	*out = c;
	return 0;
}

/* ---- reading the text ---- */

static int peek(const struct parser *ps)
{
	return ps->s < ps->end ? (unsigned char)*ps->s : -1;
}

/*
 * Blanks, comments and backslash-newlines; newlines too when nl. A NUL
 * byte is no text at all: refused.
 */
static int skip_blank(struct parser *ps, bool nl)
{
	for (;;) {
		int c = peek(ps);

		if (c == ' ' || c == '\t' || c == '\r') {
			ps->s++;
		} else if (c == '#') {
			while (ps->s < ps->end && *ps->s != '\n')
				ps->s++;
		} else if (c == '\\' && ps->s + 1 < ps->end && ps->s[1] == '\n') {
			ps->s += 2;
			ps->line++;
		} else if (c == '\n' && nl) {
			ps->s++;
			ps->line++;
		} else if (c == 0) {
			return perr(ps, ps->line, "a NUL byte: this is not a text file");
		} else {
			return 0;
		}
	}
}

/*
 * Characters up to one of stops (not consumed), a newline when !nl, or
 * the end: comments dropped, newlines (nl) and backslash-newlines read as
 * blanks. *stop: the character that ended it, 0 at the end of the text.
 */
static int collect(struct parser *ps, char *buf, size_t len, const char *stops, bool nl,
		   int *stop, unsigned int line0, const char *what)
{
	size_t n = 0;

	for (;;) {
		int c = peek(ps);

		if (c < 0) {
			*stop = 0;
			break;
		}
		if (c == 0)
			return perr(ps, ps->line, "a NUL byte: this is not a text file");
		if (c == '#') {
			while (ps->s < ps->end && *ps->s != '\n')
				ps->s++;
			continue;
		}
		if (c == '\\' && ps->s + 1 < ps->end && ps->s[1] == '\n') {
			ps->s += 2;
			ps->line++;
			c = ' ';
		} else if (c == '\n' && nl) {
			ps->s++;
			ps->line++;
			c = ' ';
		} else if (c == '\n' || strchr(stops, c)) {
			*stop = c;
			break;
		} else {
			ps->s++;
		}
		if (c == '\r' || c == '\t')
			c = ' ';
		if (!isprint(c))
			return perr(ps, ps->line, "character 0x%02x in %s", c, what);
		if (n + 1 >= len)
			return perr(ps, line0, "%s longer than %zu characters", what, len - 1);
		buf[n++] = (char)c;
	}
	buf[n] = 0;
	return 0;
}

/* ---- statements ---- */

struct stmt {
	struct partition *p;
	struct part_mcparams g;		/* mtu, rate, ... of this statement */
	bool full;			/* defmember */
	unsigned int line;
};

/* A group flag (OpenSM's mgroup_flag): 1 taken, 0 not a group flag, <0 error */
static int group_flag(struct parser *ps, unsigned int line, const char *flag, const char *val,
		      struct part_mcparams *g)
{
	static const char *const names[] = {
		"mtu", "rate", "sl", "scope", "qkey", "q_key", "tclass", "flowlabel", "flow_label",
	};
	unsigned long long v;
	size_t k;

	for (k = 0; k < ARRAY_SIZE(names); k++)
		if (!strcasecmp(flag, names[k]))
			break;
	if (k == ARRAY_SIZE(names))
		return 0;
	if (!val || !*val)
		return perr(ps, line, "%s needs a value (%s=...)", flag, flag);
	switch (k) {
	case 0:
		if (part_parse_mtu(val, &g->mtu) < 0)
			return perr(ps, line, "bad mtu '%s' (IBA code 1-5, or bytes: 256, 512, "
				    "1024, 2048, 4096)", val);
		return 1;
	case 1:
		if (part_parse_rate(val, &g->rate) < 0)
			return perr(ps, line, "bad rate '%s' (IBA code 2-24, or Gb/s with a unit: "
				    "2.5G, 10G, 25G, 100G, ...)", val);
		return 1;
	case 2:
		if (parse_num(val, 15, &v) < 0)
			return perr(ps, line, "bad sl '%s' (0-15)", val);
		g->sl = (uint8_t)v;
		return 1;
	case 3:
		if (parse_num(val, 15, &v) < 0 || v == 0)
			return perr(ps, line, "bad scope '%s' (1-15, IBA 4.1.1)", val);
		g->scopes |= (uint16_t)(1u << v);
		return 1;
	case 4:
	case 5:
		if (parse_num(val, 0xffffffffull, &v) < 0)
			return perr(ps, line, "bad Q_Key '%s' (32 bits)", val);
		g->qkey = (uint32_t)v;
		return 1;
	case 6:
		if (parse_num(val, 255, &v) < 0)
			return perr(ps, line, "bad TClass '%s' (0-255)", val);
		g->tclass = (uint8_t)v;
		return 1;
	default:
		if (parse_num(val, 0xfffff, &v) < 0)
			return perr(ps, line, "bad FlowLabel '%s' (20 bits)", val);
		g->flow_label = (uint32_t)v;
		return 1;
	}
}

static int params_equal(const struct part_mcparams *a, const struct part_mcparams *b)
{
	return a->mtu == b->mtu && a->rate == b->rate && a->sl == b->sl &&
	       a->tclass == b->tclass && a->qkey == b->qkey && a->flow_label == b->flow_label &&
	       a->scopes == b->scopes;
}

/* "[Name][=PKey][,flag[=value]]..." */
static int parse_definition(struct parser *ps, char *def, unsigned int line, struct stmt *st)
{
	char *rest = def, *tok, *name, *id;
	struct partition *p = NULL;
	bool ipoib = false, indx0 = false;
	uint16_t pkey = 0;

	tok = strsep(&rest, ",");
	split_eq(tok, &name, &id);
	if (!id && isdigit((unsigned char)*name)) {
		/* "0x8001 : ..." names the P_Key alone (OpenSM) */
		id = name;
		name = "";
	}
	if (strlen(name) >= sizeof(p->name))
		return perr(ps, line, "partition name '%s' longer than %zu characters", name,
			    sizeof(p->name) - 1);
	if (strpbrk(name, " \t"))
		return perr(ps, line, "partition name '%s' has blanks in it", name);
	if (id) {
		unsigned long long v;

		if (parse_num(id, 0xffff, &v) < 0)
			return perr(ps, line, "bad P_Key '%s' (16 bits, 0x hex or decimal)", id);
		/* IBA 10.9.1.2: only the low 15 bits name the partition */
		if (!(v & 0x7fff))
			return perr(ps, line, "P_Key %s names no partition (its low 15 bits are 0)",
				    id);
		pkey = PKEY_BASE(v);
		p = find_pkey(ps->c, pkey);
	} else if (*name) {
		for (size_t i = 0; i < ps->c->n && !p; i++)
			if (!strcmp(ps->c->parts[i].name, name))
				p = &ps->c->parts[i];
	}
	if (!p && !pkey) {
		/* No P_Key given: the next free one, counted as OpenSM does */
		do
			pkey = ++ps->counter;
		while (pkey < PKEY_DEFAULT && find_pkey(ps->c, pkey));
		if (pkey >= PKEY_DEFAULT)
			return perr(ps, line, "no P_Key left to give partition '%s'", name);
	}
	if (!p) {
		p = part_add(ps->c, name, pkey, ps->d);
		if (!p)
			return -ENOMEM;
		p->line = line;
	} else if (!p->line) {
		p->line = line;		/* the implicit default, now in the file */
	}
	st->p = p;
	st->full = false;		/* defmember: limited unless said */
	st->g = (struct part_mcparams){ .mtu = ps->d->mtu, .rate = ps->d->rate, .sl = ps->d->sl };
	while ((tok = strsep(&rest, ","))) {
		char *flag, *val;
		int r;

		split_eq(tok, &flag, &val);
		if (!*flag)
			return perr(ps, line, "an empty flag in the definition of '%s'", name);
		r = group_flag(ps, line, flag, val, &st->g);
		if (r < 0)
			return r;
		if (r)
			continue;
		if (!strcmp(flag, "ipoib") || !strcmp(flag, "indx0")) {
			if (val)
				return perr(ps, line, "%s takes no value", flag);
			if (!strcmp(flag, "ipoib"))
				ipoib = true;
			else
				indx0 = true;
		} else if (!strcmp(flag, "defmember")) {
			int m = val ? parse_membership(val) : -1;

			if (m < 0)
				return perr(ps, line, "bad defmember '%s' (full, limited or both)",
					    val ? val : "");
			st->full = m;
		} else {
			return perr(ps, line, "unknown partition flag '%s' (ipoib, mtu, rate, sl, "
				    "scope, qkey, tclass, flowlabel, defmember, indx0)", flag);
		}
	}
	if (ipoib) {
		if (p->ipoib && !params_equal(&p->bc, &st->g))
			return perr(ps, line, "P_Key 0x%04x already has its IPoIB group (line %u) "
				    "with other mtu, rate, sl, scope, qkey, tclass or flowlabel",
				    p->pkey, p->line);
		p->ipoib = true;
		p->bc = st->g;
	}
	if (indx0) {
		p->indx0 = true;
		p->indx0_seq = ps->seq;
	}
	return 0;
}

/* "mgid=GID[,flag=value]...": a permanent group of the partition */
static int parse_mgid(struct parser *ps, char *text, unsigned int line, struct stmt *st)
{
	struct partition *p = st->p;
	char *rest = text, *tok, *name, *val;
	struct part_mgroup g = { .line = line };
	uint8_t *m = g.mgid;
	bool ip;

	tok = strsep(&rest, ",");
	split_eq(tok, &name, &val);
	if (!val || inet_pton(AF_INET6, val, m) != 1)
		return perr(ps, line, "bad mgid '%s' (a GID: ff12:401b::1, ...)", val ? val : "");
	if (m[0] != 0xff)
		return perr(ps, line, "mgid %s is not a multicast GID (IBA 4.1.1: ff...)", val);
	/* Inherited from the statement, TClass excepted (as OpenSM) */
	g.p = st->g;
	g.p.tclass = 0;
	g.p.scopes = 0;
	while ((tok = strsep(&rest, ","))) {
		char *flag, *fv;
		int r;

		split_eq(tok, &flag, &fv);
		if (!*flag)
			return perr(ps, line, "an empty flag after mgid %s", val);
		r = group_flag(ps, line, flag, fv, &g.p);
		if (r < 0)
			return r;
		if (!r)
			return perr(ps, line, "unknown multicast group flag '%s' (mtu, rate, sl, "
				    "scope, qkey, tclass, flowlabel)", flag);
	}
	if (!g.p.scopes)
		g.p.scopes = st->g.scopes;
	/* IPv4 (0x401b) and IPv6 (0x601b) groups of IPoIB (RFC 4391) */
	ip = m[2] == 0x40 && m[3] == 0x1b;
	ip = ip || (m[2] == 0x60 && m[3] == 0x1b);
	if (ip) {
		uint16_t mp = (uint16_t)(m[4] << 8 | m[5]), want = p->pkey | PKEY_FULL;

		if (mp && mp != want)
			return perr(ps, line, "mgid %s carries P_Key 0x%04x, not its partition's "
				    "0x%04x", val, mp, want);
		m[4] = (uint8_t)(want >> 8);
		m[5] = (uint8_t)want;
		if (g.p.mtu != st->g.mtu || g.p.rate != st->g.rate)
			return perr(ps, line, "IPoIB group %s must have the mtu and rate of its "
				    "partition's broadcast group", val);
		if (!g.p.qkey)
			g.p.qkey = QKEY_IPOIB;
	}
	if (p->ngroups == p->gcap) {
		size_t ncap = p->gcap ? 2 * p->gcap : 4;
		struct part_mgroup *ng = realloc(p->groups, ncap * sizeof(*ng));

		if (!ng)
			return -ENOMEM;
		p->groups = ng;
		p->gcap = ncap;
	}
	p->groups[p->ngroups++] = g;
	return 0;
}

/* A member: GUID or keyword, optionally "=full|limited|both" */
static int parse_member(struct parser *ps, char *item, unsigned int line, struct stmt *st)
{
	static const struct {
		const char *word;
		uint8_t who;
	} words[] = {
		{ "ALL", PART_ALL }, { "ALL_CAS", PART_ALL_CAS },
		{ "ALL_SWITCHES", PART_ALL_SWITCHES }, { "ALL_ROUTERS", PART_ALL_ROUTERS },
		{ "SELF", PART_SELF },
	};
	char *name, *val;
	uint8_t who = PART_GUID;
	uint64_t guid = 0;
	bool full = st->full;

	split_eq(item, &name, &val);
	if (val) {
		int m = parse_membership(val);

		if (m < 0)
			return perr(ps, line, "bad membership '%s' for %s (full, limited or both)",
				    val, *name ? name : "a member");
		full = m;
	}
	if (!*name)
		return perr(ps, line, "a membership without a port ('=%s')", val ? val : "");
	if (!strcmp(name, "NONE"))
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (!strcmp(name, words[i].word))
			who = words[i].who;
	if (who == PART_GUID) {
		unsigned long long v;

		if (parse_num(name, UINT64_MAX, &v) < 0 || !v)
			return perr(ps, line, "bad port GUID '%s' (0x hex or decimal; or ALL, "
				    "ALL_CAS, ALL_SWITCHES, ALL_ROUTERS, SELF, NONE)", name);
		guid = v;
	}
	return member_add(st->p, who, guid, full, ps->seq++, false);
}

/* The members after ':', up to ';' or the end of the text */
static int parse_members(struct parser *ps, struct stmt *st)
{
	char item[ITEM_MAX];
	int r, stop;

	for (;;) {
		unsigned int line;
		char *name, *val, *t;

		r = skip_blank(ps, false);
		if (r < 0)
			return r;
		switch (peek(ps)) {
		case -1:
			return 0;
		case ';':
			ps->s++;
			return 0;
		case ',':
			ps->s++;
			continue;
		case '\n':
			ps->s++;
			ps->line++;
			continue;
		}
		line = ps->line;
		r = collect(ps, item, sizeof(item), ",;", false, &stop, line, "a member");
		if (r < 0)
			return r;
		t = trim(item);
		if (!strncmp(t, "mgid", 4) && (t[4] == '=' || t[4] == ' ' || t[4] == '\t')) {
			size_t n = strlen(t);

			/* An mgid line runs to the end of the line, its flags included */
			memmove(item, t, n + 1);
			if (stop == ',') {
				item[n] = ',';
				ps->s++;
				r = collect(ps, item + n + 1, sizeof(item) - n - 1, ";", false,
					    &stop, line, "an mgid line");
				if (r < 0)
					return r;
			}
			r = parse_mgid(ps, item, line, st);
			if (r < 0)
				return r;
			continue;
		}
		if (strchr(t, ':')) {
			split_eq(t, &name, &val);
			return perr(ps, line, "unexpected ':' in the members of partition 0x%04x "
				    "('%s%s%s'): a statement is 'definition : members ;' and flags "
				    "such as defmember go before the ':'", st->p->pkey, name,
				    val ? "=" : "", val ? val : "");
		}
		r = parse_member(ps, t, line, st);
		if (r < 0)
			return r;
	}
}

static int parse_statement(struct parser *ps)
{
	char def[DEF_MAX];
	unsigned int line = ps->line;
	struct stmt st = { .line = line };
	int r, stop;

	r = collect(ps, def, sizeof(def), ":;", true, &stop, line, "a partition definition");
	if (r < 0)
		return r;
	if (stop != ':') {
		if (!*trim(def))
			return perr(ps, line, "an empty statement (a lone ';')");
		return perr(ps, line, "no ':' after the partition definition '%s' (a statement "
			    "is 'definition : members ;')", trim(def));
	}
	ps->s++;
	r = parse_definition(ps, trim(def), line, &st);
	if (r < 0)
		return r;
	return parse_members(ps, &st);
}

/* ---- after parsing: groups that clash ---- */

struct mg_ref {
	uint8_t mgid[16];
	const struct part_mcparams *p;
	uint32_t qkey;			/* as the group gets it */
	unsigned int line;
	uint16_t pkey;
};

static int mg_cmp(const void *x, const void *y)
{
	return memcmp(((const struct mg_ref *)x)->mgid, ((const struct mg_ref *)y)->mgid, 16);
}

static int mg_push(struct mg_ref **v, size_t *n, size_t *cap, const uint8_t mgid[16],
		   const struct part_mcparams *p, uint32_t qkey, unsigned int line, uint16_t pkey)
{
	uint16_t scopes = p->scopes ? p->scopes : 1u << 2;

	for (unsigned int s = 1; s < 16; s++) {
		if (!(scopes & (1u << s)))
			continue;
		if (*n == *cap) {
			size_t ncap = *cap ? 2 * *cap : 16;
			struct mg_ref *nv = realloc(*v, ncap * sizeof(*nv));

			if (!nv)
				return -ENOMEM;
			*v = nv;
			*cap = ncap;
		}
		memcpy((*v)[*n].mgid, mgid, 16);
		(*v)[*n].mgid[1] = (uint8_t)((mgid[1] & 0xf0) | s);
		(*v)[*n].p = p;
		(*v)[*n].qkey = qkey;
		(*v)[*n].line = line;
		(*v)[*n].pkey = pkey;
		(*n)++;
	}
	return 0;
}

/* One MGID, one group: the same MGID twice must say the same thing */
static int check_groups(struct parser *ps)
{
	struct mg_ref *v = NULL;
	size_t n = 0, cap = 0;
	int r = 0;

	for (size_t i = 0; i < ps->c->n && !r; i++) {
		const struct partition *p = &ps->c->parts[i];
		uint8_t bc[16] = { 0xff, 0x12, 0x40, 0x1b, (uint8_t)((p->pkey | PKEY_FULL) >> 8),
				   (uint8_t)p->pkey, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff };

		if (p->ipoib)
			r = mg_push(&v, &n, &cap, bc, &p->bc, p->bc.qkey ? p->bc.qkey : QKEY_IPOIB,
				    p->line, p->pkey);
		for (size_t k = 0; k < p->ngroups && !r; k++)
			r = mg_push(&v, &n, &cap, p->groups[k].mgid, &p->groups[k].p,
				    p->groups[k].p.qkey, p->groups[k].line, p->pkey);
	}
	if (!r && n > 1) {
		qsort(v, n, sizeof(*v), mg_cmp);
		for (size_t i = 1; i < n && !r; i++) {
			char txt[64];

			if (memcmp(v[i - 1].mgid, v[i].mgid, 16))
				continue;
			if (v[i - 1].pkey == v[i].pkey &&
			    v[i - 1].p->mtu == v[i].p->mtu && v[i - 1].p->rate == v[i].p->rate &&
			    v[i - 1].p->sl == v[i].p->sl && v[i - 1].qkey == v[i].qkey &&
			    v[i - 1].p->tclass == v[i].p->tclass &&
			    v[i - 1].p->flow_label == v[i].p->flow_label)
				continue;
			inet_ntop(AF_INET6, v[i].mgid, txt, sizeof(txt));
			r = perr(ps, v[i].line > v[i - 1].line ? v[i].line : v[i - 1].line,
				 "multicast group %s is configured twice (also at line %u) with "
				 "other parameters", txt,
				 v[i].line > v[i - 1].line ? v[i - 1].line : v[i].line);
		}
	}
	free(v);
	return r;
}

int part_parse(const char *text, size_t len, const char *name, const struct part_defaults *d,
	       struct part_conf **out, char *err, size_t errlen)
{
	struct parser ps = {
		.s = text, .end = text + len, .line = 1, .name = name, .err = err,
		.errlen = errlen, .d = d, .seq = 2,
	};
	struct partition *dp;
	int r;

	ps.c = calloc(1, sizeof(*ps.c));
	if (!ps.c)
		return -ENOMEM;
	ps.c->from_file = true;
	/*
	 * As OpenSM: whatever the file says, every endport starts as a
	 * limited member of the default partition, the SM's port a full one
	 */
	dp = part_add(ps.c, "Default", PKEY_DEFAULT, d);
	if (!dp || member_add(dp, PART_ALL, 0, false, 0, true) < 0 ||
	    member_add(dp, PART_SELF, 0, true, 1, true) < 0) {
		r = -ENOMEM;
		goto fail;
	}
	for (;;) {
		r = skip_blank(&ps, true);
		if (r < 0 || peek(&ps) < 0)
			break;
		r = parse_statement(&ps);
		if (r < 0)
			break;
	}
	if (!r)
		r = check_groups(&ps);
	if (r < 0)
		goto fail;
	*out = ps.c;
	return 0;
fail:
	if (r == -ENOMEM)
		snprintf(err, errlen, "%s: out of memory", name);
	part_conf_free(ps.c);
	return r;
}

/* ---- membership ---- */

struct ix_guid {
	uint64_t guid;
	uint32_t part;
	uint32_t seq;
	bool full;
};

struct ix_wide {
	uint32_t part;
	uint32_t seq;
	bool full;
};

/* Node types CA, switch, router: index 0, 1, 2 */
#define IX_TYPES	3

struct part_index {
	const struct part_conf *c;
	uint64_t self;
	struct ix_guid *g;		/* sorted by (guid, part), the latest rule each */
	size_t ng;
	struct ix_wide *w[IX_TYPES];	/* per node type, by part: the latest wide rule */
	size_t nw[IX_TYPES];
	uint32_t dflt;			/* the default partition's index */
};

static int type_index(uint8_t node_type)
{
	switch (node_type) {
	case NODE_TYPE_CA: return 0;
	case NODE_TYPE_SWITCH: return 1;
	case NODE_TYPE_ROUTER: return 2;
	default: return -1;
	}
}

static int ixg_cmp(const void *x, const void *y)
{
	const struct ix_guid *a = x, *b = y;

	if (a->guid != b->guid)
		return a->guid < b->guid ? -1 : 1;
	if (a->part != b->part)
		return a->part < b->part ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

struct part_index *part_index_free(struct part_index *ix)
{
	if (!ix)
		return NULL;
	free(ix->g);
	for (int t = 0; t < IX_TYPES; t++)
		free(ix->w[t]);
	free(ix);
	return NULL;
}

int part_index_new(const struct part_conf *c, uint64_t self, struct part_index **out)
{
	struct part_index *ix = calloc(1, sizeof(*ix));
	size_t ng = 0, k = 0;

	if (!ix)
		return -ENOMEM;
	ix->c = c;
	ix->self = self;
	ix->dflt = UINT32_MAX;
	for (size_t i = 0; i < c->n; i++)
		for (size_t m = 0; m < c->parts[i].nmembers; m++)
			ng += c->parts[i].members[m].who == PART_GUID ||
			      c->parts[i].members[m].who == PART_SELF;
	ix->g = malloc((ng ? ng : 1) * sizeof(*ix->g));
	for (int t = 0; t < IX_TYPES; t++)
		ix->w[t] = malloc((c->n ? c->n : 1) * sizeof(*ix->w[t]));
	if (!ix->g || !ix->w[0] || !ix->w[1] || !ix->w[2]) {
		part_index_free(ix);
		return -ENOMEM;
	}
	for (size_t i = 0; i < c->n; i++) {
		const struct partition *p = &c->parts[i];
		struct ix_wide best[IX_TYPES];
		bool have[IX_TYPES] = { false };

		if (p->pkey == PKEY_DEFAULT)
			ix->dflt = (uint32_t)i;
		for (size_t m = 0; m < p->nmembers; m++) {
			const struct part_member *pm = &p->members[m];
			struct ix_wide w = {
				.part = (uint32_t)i, .seq = pm->seq, .full = pm->full,
			};

			if (pm->who == PART_GUID || pm->who == PART_SELF) {
				ix->g[k++] = (struct ix_guid){
					.guid = pm->who == PART_SELF ? self : pm->guid,
					.part = (uint32_t)i, .seq = pm->seq, .full = pm->full,
				};
				continue;
			}
			for (int t = 0; t < IX_TYPES; t++) {
				bool applies = pm->who == PART_ALL ||
					       (t == 0 && pm->who == PART_ALL_CAS) ||
					       (t == 1 && pm->who == PART_ALL_SWITCHES) ||
					       (t == 2 && pm->who == PART_ALL_ROUTERS);

				if (applies && (!have[t] || pm->seq > best[t].seq)) {
					best[t] = w;
					have[t] = true;
				}
			}
		}
		for (int t = 0; t < IX_TYPES; t++)
			if (have[t])
				ix->w[t][ix->nw[t]++] = best[t];
	}
	/* Per (GUID, partition) the latest rule only (sorted by seq within) */
	qsort(ix->g, k, sizeof(*ix->g), ixg_cmp);
	ng = 0;
	for (size_t i = 0; i < k; i++) {
		if (ng && ix->g[ng - 1].guid == ix->g[i].guid &&
		    ix->g[ng - 1].part == ix->g[i].part)
			ix->g[ng - 1] = ix->g[i];
		else
			ix->g[ng++] = ix->g[i];
	}
	ix->ng = ng;
	*out = ix;
	return 0;
}

unsigned int part_port_keys(const struct part_index *ix, uint64_t guid, uint8_t node_type,
			    uint16_t *keys, unsigned int max, unsigned int *all)
{
	const struct part_conf *c = ix->c;
	int t = type_index(node_type);
	size_t lo = 0, hi = ix->ng, wi = 0;
	unsigned int n = 0, total = 0, first = UINT32_MAX;
	uint32_t idx0_seq = 0;
	bool idx0 = false;

	/* The GUID's rules: [lo, hi) of the sorted index */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ix->g[mid].guid < guid)
			lo = mid + 1;
		else
			hi = mid;
	}
	hi = lo;
	while (hi < ix->ng && ix->g[hi].guid == guid)
		hi++;
	/* Merge by partition: the latest of the wide rule and the GUID's */
	for (;;) {
		const struct ix_wide *w = t >= 0 && wi < ix->nw[t] ? &ix->w[t][wi] : NULL;
		const struct ix_guid *g = lo < hi ? &ix->g[lo] : NULL;
		uint32_t part;
		bool full;
		uint16_t key;

		if (!w && !g)
			break;
		if (w && (!g || w->part < g->part)) {
			part = w->part;
			full = w->full;
			wi++;
		} else if (g && (!w || g->part < w->part)) {
			part = g->part;
			full = g->full;
			lo++;
		} else {
			part = g->part;
			full = g->seq > w->seq ? g->full : w->full;
			wi++;
			lo++;
		}
		if (part == ix->dflt && guid == ix->self)
			full = true;	/* the SM talks to every member of Default */
		key = (uint16_t)(c->parts[part].pkey | (full ? PKEY_FULL : 0));
		total++;
		/* Index 0: the latest indx0 partition the port is in, else Default */
		if (c->parts[part].indx0 && (!idx0 || c->parts[part].indx0_seq >= idx0_seq)) {
			idx0 = true;
			idx0_seq = c->parts[part].indx0_seq;
			first = n < max ? n : first;
		} else if (part == ix->dflt && !idx0 && first == UINT32_MAX) {
			first = n < max ? n : first;
		}
		if (n < max)
			keys[n++] = key;
	}
	/* The index-0 key first, the others in the file's order */
	if (first != UINT32_MAX && first > 0) {
		uint16_t k0 = keys[first];

		memmove(keys + 1, keys, first * sizeof(*keys));
		keys[0] = k0;
	}
	if (all)
		*all = total;
	return n;
}

static int u64_cmp(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;

	return a < b ? -1 : a > b;
}

size_t part_absent_guids(const struct part_index *ix, const struct fabric *f)
{
	uint64_t *have;
	size_t n = 0, absent = 0;

	for (size_t i = 0; i < f->nnodes; i++)
		n += f->nodes[i]->num_ports + 1u;
	have = malloc((n ? n : 1) * sizeof(*have));
	if (!have)
		return 0;
	n = 0;
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int p = 0; p <= f->nodes[i]->num_ports; p++)
			if (fabric_is_endport(&f->nodes[i]->ports[p]))
				have[n++] = f->nodes[i]->ports[p].guid;
	qsort(have, n, sizeof(*have), u64_cmp);
	for (size_t i = 0; i < ix->ng; i++) {
		if (i && ix->g[i].guid == ix->g[i - 1].guid)
			continue;
		if (ix->g[i].guid != ix->self &&
		    !bsearch(&ix->g[i].guid, have, n, sizeof(*have), u64_cmp))
			absent++;
	}
	free(have);
	return absent;
}

/* ---- tables ---- */

unsigned int part_table_layout(const uint16_t *want, unsigned int n, bool idx0,
			       const uint16_t *have, unsigned int hn, uint16_t *out,
			       unsigned int cap)
{
	unsigned int placed = 0, next = 0;
	uint8_t *done;

	memset(out, 0, cap * sizeof(*out));
	if (!cap)
		return 0;
	done = calloc(n ? n : 1, 1);
	if (!done)
		return 0;
	if (idx0 && n) {
		out[0] = want[0];
		done[0] = 1;
		placed++;
	}
	/* Keys the port holds already keep their index: nothing moves under a QP */
	for (unsigned int i = idx0 ? 1 : 0; have && i < hn && i < cap; i++) {
		if (!(have[i] & 0x7fff) || out[i])
			continue;
		for (unsigned int k = 0; k < n; k++)
			if (!done[k] && PKEY_BASE(want[k]) == PKEY_BASE(have[i])) {
				out[i] = want[k];
				done[k] = 1;
				placed++;
				break;
			}
	}
	for (unsigned int k = 0; k < n; k++) {
		if (done[k])
			continue;
		while (next < cap && (out[next] || (idx0 && next == 0)))
			next++;
		if (next == cap)
			break;
		out[next] = want[k];
		done[k] = 1;
		placed++;
	}
	free(done);
	return placed;
}

uint16_t part_common_key(const uint16_t *a, unsigned int na, const uint16_t *b, unsigned int nb)
{
	unsigned int i = 0, j = 0;

	while (i < na && j < nb) {
		uint16_t x = PKEY_BASE(a[i]), y = PKEY_BASE(b[j]);

		if (x < y) {
			i++;
		} else if (y < x) {
			j++;
		} else {
			if ((a[i] | b[j]) & PKEY_FULL)
				return a[i];
			i++;
			j++;
		}
	}
	return 0;
}

uint16_t part_find_key(const uint16_t *keys, unsigned int n, uint16_t pkey)
{
	unsigned int lo = 0, hi = n;

	while (lo < hi) {
		unsigned int mid = lo + (hi - lo) / 2;

		if (PKEY_BASE(keys[mid]) < PKEY_BASE(pkey))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && PKEY_BASE(keys[lo]) == PKEY_BASE(pkey) ? keys[lo] : 0;
}

unsigned int part_table_cap(const struct fab_port *p)
{
	const struct fab_node *n = p->node;
	unsigned int cap;

	if (n->type == NODE_TYPE_SWITCH && p->num)
		cap = n->si_valid ? n->si.partition_enf_cap : 0;
	else
		cap = n->ni.partition_cap;
	return cap > PKEY_TABLE_MAX ? PKEY_TABLE_MAX : cap;
}
