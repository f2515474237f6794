// SPDX-License-Identifier: MIT
/*
 * The cabling plan: its parser (plan.h says the format) and the comparison
 * of a discovered fabric with it. Every number and name comes from a file
 * an operator or a tool wrote: each is bounds-checked, and the first
 * thing wrong is refused with its line number.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/plan.h"

/* ---- names and numbers ---- */

const char *plan_kind_name(unsigned int kind)
{
	static const char *const names[PLAN_KINDS] = {
		[PLAN_MISWIRED] = "miswired", [PLAN_UNEXPECTED] = "unexpected",
		[PLAN_MISSING] = "missing", [PLAN_DEGRADED] = "degraded",
		[PLAN_UNKNOWN_NODE] = "unknown_node",
	};

	return kind < PLAN_KINDS ? names[kind] : "?";
}

const char *plan_action_name(unsigned int action)
{
	switch (action) {
	case PLAN_HELD: return "held_init";
	case PLAN_KEPT: return "kept_connected";
	default: return "reported";
	}
}

void plan_desc_norm(const char *d, char out[PLAN_DESC_LEN + 1])
{
	size_t i;

	for (i = 0; i < PLAN_DESC_LEN && d[i]; i++) {
		unsigned char c = (unsigned char)d[i];

		out[i] = c < 0x20 || c > 0x7e ? ' ' : (char)c;
	}
	out[i] = 0;
}

static const char *type_name(unsigned int type)
{
	switch (type) {
	case NODE_TYPE_SWITCH: return "switch";
	case NODE_TYPE_ROUTER: return "router";
	default: return "CA";
	}
}

static uint64_t hash_str(const char *s, size_t n, uint64_t h)
{
	for (size_t i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= UINT64_C(0x100000001b3);
	}
	return h;
}

#define HASH_SEED	UINT64_C(0xcbf29ce484222325)

/* ---- the parser ---- */

struct parser {
	struct plan *p;
	const char *name;
	uint32_t line;
	char *err;
	size_t errlen;
	uint64_t guid;			/* from the last *guid= line, for the next header */
	uint8_t guid_type;		/* NODE_TYPE_* that line was for */
	uint32_t guid_line;
	uint32_t cur;			/* the node whose port lines these are */
};

static int __attribute__((format(printf, 2, 3))) fail(struct parser *ps, const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(ps->err, ps->errlen, "%s:%u: ", ps->name, ps->line);
	if (n >= 0 && (size_t)n < ps->errlen) {
		va_start(ap, fmt);
		vsnprintf(ps->err + n, ps->errlen - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static int fail_nomem(struct parser *ps)
{
	snprintf(ps->err, ps->errlen, "%s: out of memory", ps->name);
	return -ENOMEM;
}

static int id_grow(struct plan *p)
{
	size_t size = p->id_size ? p->id_size * 2 : 1024;
	uint32_t *t = malloc(size * sizeof(*t));

	if (!t)
		return -ENOMEM;
	memset(t, 0xff, size * sizeof(*t));
	for (size_t i = 0; i < p->nnodes; i++) {
		const char *id = p->nodes[i].id;
		size_t h = (size_t)hash_str(id, strlen(id), HASH_SEED) & (size - 1);

		while (t[h] != PLAN_NONE)
			h = (h + 1) & (size - 1);
		t[h] = (uint32_t)i;
	}
	free(p->by_id);
	p->by_id = t;
	p->id_size = size;
	return 0;
}

/*
 * The node named id (n bytes): found, or added undeclared. PLAN_NONE on
 * running out of memory or of room (PLAN_NODES_MAX: *full).
 */
static uint32_t node_of(struct plan *p, const char *id, size_t n, bool *full)
{
	size_t h;
	struct plan_node *nd;

	*full = false;
	if (p->id_size) {
		h = (size_t)hash_str(id, n, HASH_SEED) & (p->id_size - 1);
		for (; p->by_id[h] != PLAN_NONE; h = (h + 1) & (p->id_size - 1)) {
			const char *k = p->nodes[p->by_id[h]].id;

			if (!strncmp(k, id, n) && !k[n])
				return p->by_id[h];
		}
	}
	if (p->nnodes >= PLAN_NODES_MAX) {
		*full = true;
		return PLAN_NONE;
	}
	if ((p->nnodes + 1) * 2 > p->id_size && id_grow(p) < 0)
		return PLAN_NONE;
	if (p->nnodes == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 256;
		struct plan_node *v = realloc(p->nodes, cap * sizeof(*v));

		if (!v)
			return PLAN_NONE;
		p->nodes = v;
		p->cap = cap;
	}
	nd = &p->nodes[p->nnodes];
	memset(nd, 0, sizeof(*nd));
	nd->id = malloc(n + 1);
	if (!nd->id)
		return PLAN_NONE;
	memcpy(nd->id, id, n);
	nd->id[n] = 0;
	h = (size_t)hash_str(id, n, HASH_SEED) & (p->id_size - 1);
	while (p->by_id[h] != PLAN_NONE)
		h = (h + 1) & (p->id_size - 1);
	p->by_id[h] = (uint32_t)p->nnodes;
	return (uint32_t)p->nnodes++;
}

static const char *skip_blank(const char *s, const char *e)
{
	while (s < e && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* A decimal number of at most max at *s: 0 and *v, -1 when there is none or it is too big */
static int number(const char **s, const char *e, unsigned long max, unsigned long *v)
{
	const char *q = *s;
	unsigned long x = 0;

	if (q >= e || *q < '0' || *q > '9')
		return -1;
	for (; q < e && *q >= '0' && *q <= '9'; q++) {
		x = x * 10 + (unsigned long)(*q - '0');
		if (x > max)
			return -1;
	}
	*s = q;
	*v = x;
	return 0;
}

/* Hex digits (at most 16) at *s: 0 and *v, -1 when none */
static int hex64(const char **s, const char *e, uint64_t *v)
{
	const char *q = *s;
	uint64_t x = 0;
	unsigned int n = 0;

	for (; q < e; q++, n++) {
		unsigned int d;

		if (*q >= '0' && *q <= '9')
			d = (unsigned int)(*q - '0');
		else if (*q >= 'a' && *q <= 'f')
			d = (unsigned int)(*q - 'a' + 10);
		else if (*q >= 'A' && *q <= 'F')
			d = (unsigned int)(*q - 'A' + 10);
		else
			break;
		if (n == 16)
			return -1;
		x = x << 4 | d;
	}
	if (!n)
		return -1;
	*s = q;
	*v = x;
	return 0;
}

/* "(hex)" at *s, skipped: 0, 1 when there is none, -1 when malformed */
static int skip_guid(const char **s, const char *e)
{
	const char *q = *s;
	uint64_t g;

	if (q >= e || *q != '(')
		return 1;
	q++;
	if (q + 1 < e && q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
		q += 2;
	if (hex64(&q, e, &g) < 0 || q >= e || *q != ')')
		return -1;
	*s = q + 1;
	return 0;
}

/* A quoted string at *s: its bytes [*b, *b + *n), *s after the closing quote */
static int quoted(const char **s, const char *e, const char **b, size_t *n)
{
	const char *q = *s, *c;

	if (q >= e || *q != '"')
		return -1;
	c = memchr(q + 1, '"', (size_t)(e - q - 1));
	if (!c)
		return -1;
	*b = q + 1;
	*n = (size_t)(c - q - 1);
	*s = c + 1;
	return 0;
}

/* key=value lines: the next node's GUID, or what a plan does not need */
static int parse_key(struct parser *ps, const char *s, const char *e)
{
	static const struct {
		const char *key;
		uint8_t type;		/* 0: read and ignored */
	} keys[] = {
		{ "switchguid", NODE_TYPE_SWITCH }, { "caguid", NODE_TYPE_CA },
		{ "rtguid", NODE_TYPE_ROUTER }, { "sysimgguid", 0 }, { "vendid", 0 },
		{ "devid", 0 },
	};
	const char *eq = memchr(s, '=', (size_t)(e - s)), *v;
	size_t klen;
	uint64_t g;

	klen = (size_t)(eq - s);
	while (klen && (s[klen - 1] == ' ' || s[klen - 1] == '\t'))
		klen--;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		if (strlen(keys[i].key) != klen || memcmp(keys[i].key, s, klen))
			continue;
		v = skip_blank(eq + 1, e);
		if (!keys[i].type)
			return 0;
		if (v + 1 < e && v[0] == '0' && (v[1] == 'x' || v[1] == 'X'))
			v += 2;
		if (hex64(&v, e, &g) < 0)
			return fail(ps, "%s: not a GUID in hex", keys[i].key);
		if (skip_guid(&v, e) < 0 || skip_blank(v, e) != e)
			return fail(ps, "%s: unexpected text after the GUID", keys[i].key);
		if (!g)
			return fail(ps, "%s: GUID 0", keys[i].key);
		if (ps->guid)
			return fail(ps, "%s: a second GUID line before its node", keys[i].key);
		ps->guid = g;
		ps->guid_type = keys[i].type;
		ps->guid_line = ps->line;
		return 0;
	}
	return fail(ps, "unknown key '%.*s' (switchguid, caguid, rtguid, sysimgguid, vendid, "
		    "devid)", (int)(klen > 40 ? 40 : klen), s);
}

/* The comment of a header: its first quoted string, to the last quote */
static void header_desc(struct plan_node *nd, const char *c, const char *e)
{
	const char *q1 = memchr(c, '"', (size_t)(e - c)), *q2 = NULL;
	char buf[SMP_DATA_SIZE * 4];
	size_t n;

	for (const char *x = e; q1 && x > q1 + 1; x--)
		if (x[-1] == '"') {
			q2 = x - 1;
			break;
		}
	if (!q1 || !q2)
		return;
	n = (size_t)(q2 - q1 - 1);
	if (n >= sizeof(buf))
		n = sizeof(buf) - 1;
	memcpy(buf, q1 + 1, n);
	buf[n] = 0;
	plan_desc_norm(buf, nd->desc);
}

static int parse_header(struct parser *ps, const char *s, const char *e, uint8_t type,
			size_t kwlen)
{
	struct plan *p = ps->p;
	struct plan_node *nd;
	const char *q = skip_blank(s + kwlen, e), *id;
	unsigned long nports;
	size_t idlen;
	uint32_t i;
	bool full;

	if (number(&q, e, 255, &nports) < 0 || nports == 0)
		return fail(ps, "%.*s: the number of ports must be 1-255", (int)kwlen, s);
	q = skip_blank(q, e);
	if (quoted(&q, e, &id, &idlen) < 0 || !idlen)
		return fail(ps, "%.*s: expected a node name in double quotes", (int)kwlen, s);
	q = skip_blank(q, e);
	if (q < e && *q != '#')
		return fail(ps, "unexpected text after the node name (a comment starts with #)");
	i = node_of(p, id, idlen, &full);
	if (i == PLAN_NONE)
		return full ? fail(ps, "more than %u nodes", PLAN_NODES_MAX) : fail_nomem(ps);
	nd = &p->nodes[i];
	if (nd->declared)
		return fail(ps, "node \"%s\" again (first on line %u)", nd->id, nd->line);
	if (ps->guid && ps->guid_type != type)
		return fail(ps, "a %s GUID line before a %s", type_name(ps->guid_type),
			    type_name(type));
	nd->ports = calloc(nports + 1, sizeof(*nd->ports));
	if (!nd->ports)
		return fail_nomem(ps);
	for (unsigned long k = 0; k <= nports; k++)
		nd->ports[k].peer = PLAN_NONE;
	nd->declared = true;
	nd->type = type;
	nd->nports = (uint8_t)nports;
	nd->line = ps->line;
	nd->guid = ps->guid;
	ps->guid = 0;
	ps->guid_type = 0;
	if (q < e)
		header_desc(nd, q + 1, e);
	if (!nd->desc[0]) {
		char buf[SMP_DATA_SIZE * 4];

		snprintf(buf, sizeof(buf), "%s", nd->id);
		plan_desc_norm(buf, nd->desc);
	}
	if (type == NODE_TYPE_SWITCH)
		p->nswitches++;
	ps->cur = i;
	return 0;
}

/* "4xQDR" as the comment's last word: lanes and speed; 0 when it is not there */
static int link_rate(struct parser *ps, const char *c, const char *e, uint8_t *width,
		     uint8_t *speed)
{
	static const struct {
		const char *name;
		uint8_t speed;
	} speeds[] = {
		{ "SDR", LINK_SPEED_SDR }, { "DDR", LINK_SPEED_DDR }, { "QDR", LINK_SPEED_QDR },
		{ "FDR10", LINK_SPEED_QDR }, { "FDR", LINK_SPEED_FDR }, { "EDR", LINK_SPEED_EDR },
		{ "HDR", LINK_SPEED_HDR }, { "NDR", LINK_SPEED_NDR }, { "XDR", LINK_SPEED_XDR },
	};
	const char *w = e, *q;
	unsigned long lanes;
	size_t n;

	while (e > c && (e[-1] == ' ' || e[-1] == '\t'))
		e--;
	w = e;
	while (w > c && w[-1] != ' ' && w[-1] != '\t' && w[-1] != '"')
		w--;
	q = w;
	if (number(&q, e, 99, &lanes) < 0 || q >= e || *q != 'x')
		return 0;
	q++;
	n = (size_t)(e - q);
	if (!n || *q < 'A' || *q > 'Z')
		return 0;
	if (lanes != 1 && lanes != 2 && lanes != 4 && lanes != 8 && lanes != 12)
		return fail(ps, "link width %lux: not 1x, 2x, 4x, 8x or 12x", lanes);
	for (size_t i = 0; i < sizeof(speeds) / sizeof(speeds[0]); i++)
		if (strlen(speeds[i].name) == n && !memcmp(speeds[i].name, q, n)) {
			*width = (uint8_t)lanes;
			*speed = speeds[i].speed;
			return 0;
		}
	return fail(ps, "unknown link speed '%.*s' (SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, "
		    "XDR)", (int)(n > 16 ? 16 : n), q);
}

static int parse_port(struct parser *ps, const char *s, const char *e)
{
	struct plan *p = ps->p;
	struct plan_node *nd;
	struct plan_port *pp;
	const char *q = s + 1, *id;
	unsigned long port, rport;
	uint8_t width = 0, speed = 0;
	size_t idlen;
	uint32_t peer;
	bool full;
	int r;

	if (ps->cur == PLAN_NONE)
		return fail(ps, "a port line before any node header");
	nd = &p->nodes[ps->cur];
	if (number(&q, e, 255, &port) < 0 || q >= e || *q != ']')
		return fail(ps, "expected [port number]");
	q++;
	if (port < 1 || port > nd->nports)
		return fail(ps, "port %lu: \"%s\" has ports 1-%u", port, nd->id, nd->nports);
	if (skip_guid(&q, e) < 0)
		return fail(ps, "port %lu: malformed (GUID)", port);
	q = skip_blank(q, e);
	if (quoted(&q, e, &id, &idlen) < 0 || !idlen)
		return fail(ps, "port %lu: expected the remote node's name in double quotes", port);
	q = skip_blank(q, e);
	if (q >= e || *q != '[')
		return fail(ps, "port %lu: expected [remote port number]", port);
	q++;
	if (number(&q, e, 255, &rport) < 0 || q >= e || *q != ']' || rport < 1)
		return fail(ps, "port %lu: expected [remote port number] of 1-255", port);
	q = skip_blank(q + 1, e);
	if (skip_guid(&q, e) < 0)
		return fail(ps, "port %lu: malformed (GUID) of the remote port", port);
	q = skip_blank(q, e);
	if (q < e && *q != '#')
		return fail(ps, "port %lu: unexpected text after the remote port", port);
	if (q < e) {
		r = link_rate(ps, q + 1, e, &width, &speed);
		if (r < 0)
			return r;
	}
	pp = &nd->ports[port];
	if (pp->stated)
		return fail(ps, "\"%s\" port %lu listed twice (first on line %u)", nd->id, port,
			    pp->line);
	peer = node_of(p, id, idlen, &full);
	if (peer == PLAN_NONE)
		return full ? fail(ps, "more than %u nodes", PLAN_NODES_MAX) : fail_nomem(ps);
	nd = &p->nodes[ps->cur];	/* node_of may have moved the array */
	pp = &nd->ports[port];
	if (!p->nodes[peer].line)
		p->nodes[peer].line = ps->line;
	pp->peer = peer;
	pp->peer_port = (uint8_t)rport;
	pp->width = width;
	pp->speed = speed;
	pp->stated = true;
	pp->line = ps->line;
	return 0;
}

static int parse_line(struct parser *ps, const char *s, const char *e)
{
	static const struct {
		const char *kw;
		uint8_t type;
	} headers[] = {
		{ "Switch", NODE_TYPE_SWITCH }, { "Hca", NODE_TYPE_CA }, { "Ca", NODE_TYPE_CA },
		{ "Rt", NODE_TYPE_ROUTER },
	};

	if (e > s && e[-1] == '\r')
		e--;
	for (const char *c = s; c < e; c++)
		if ((unsigned char)*c < 0x20 && *c != '\t')
			return fail(ps, "binary data (byte 0x%02x): not a plan in text",
				    (unsigned char)*c);
	s = skip_blank(s, e);
	if (s == e || *s == '#')
		return 0;
	if (*s == '[')
		return parse_port(ps, s, e);
	for (size_t i = 0; i < sizeof(headers) / sizeof(headers[0]); i++) {
		size_t n = strlen(headers[i].kw);

		if ((size_t)(e - s) > n && !memcmp(s, headers[i].kw, n) &&
		    (s[n] == ' ' || s[n] == '\t'))
			return parse_header(ps, s, e, headers[i].type, n);
	}
	{
		const char *eq = memchr(s, '=', (size_t)(e - s)), *k = s;

		while (k < e && ((*k >= 'a' && *k <= 'z') || *k == '_'))
			k++;
		if (eq && skip_blank(k, e) == eq && k > s)
			return parse_key(ps, s, e);
	}
	if ((size_t)(e - s) >= 7 && (!memcmp(s, "include", 7) || !memcmp(s, "do ", 3)))
		return fail(ps, "ibsim's include and do lines have no place in a plan");
	return fail(ps, "expected a node header (Switch, Ca, Hca, Rt), a [port] line or "
		    "key=value");
}

/* Every cable from both ends: the other end names it back, or learns it */
static int link_ends(struct parser *ps)
{
	struct plan *p = ps->p;

	for (uint32_t i = 0; i < p->nnodes; i++) {
		struct plan_node *a = &p->nodes[i];

		ps->line = a->line;
		if (!a->declared)
			return fail(ps, "node \"%s\" is cabled to but has no header", a->id);
	}
	for (uint32_t i = 0; i < p->nnodes; i++) {
		struct plan_node *a = &p->nodes[i];

		for (unsigned int k = 1; k <= a->nports; k++) {
			struct plan_port *pa = &a->ports[k], *pb;
			struct plan_node *b;

			if (!pa->stated)
				continue;
			b = &p->nodes[pa->peer];
			ps->line = pa->line;
			if (pa->peer_port > b->nports)
				return fail(ps, "\"%s\" port %u: \"%s\" has ports 1-%u", a->id, k,
					    b->id, b->nports);
			if (b == a && pa->peer_port == k)
				return fail(ps, "\"%s\" port %u cabled to itself", a->id, k);
			pb = &b->ports[pa->peer_port];
			if (pb->peer == PLAN_NONE) {
				*pb = (struct plan_port){
					.peer = i, .peer_port = (uint8_t)k, .width = pa->width,
					.speed = pa->speed, .line = pa->line,
				};
				continue;
			}
			if (pb->peer != i || pb->peer_port != k) {
				const struct plan_node *c = &p->nodes[pb->peer];

				return fail(ps, "port cabled twice: \"%s\" port %u to \"%s\" port %u "
					    "(line %u) and to \"%s\" port %u (line %u)", b->id,
					    pa->peer_port, c->id, pb->peer_port, pb->line, a->id, k,
					    pa->line);
			}
			/*
			 * Each end keeps the rate its own line gives: ibnetdiscover
			 * prints each end's view, and an end that cannot show
			 * extended speeds says QDR where the other says FDR
			 */
			if (pb->stated && !pa->width) {
				pa->width = pb->width;
				pa->speed = pb->speed;
			}
		}
	}
	p->ncables = 0;
	for (uint32_t i = 0; i < p->nnodes; i++)
		for (unsigned int k = 1; k <= p->nodes[i].nports; k++)
			p->ncables += p->nodes[i].ports[k].peer != PLAN_NONE;
	p->ncables /= 2;
	return 0;
}

/* Two nodes with one GUID: the plan cannot mean both */
static int unique_guids(struct parser *ps)
{
	struct plan *p = ps->p;
	size_t size = 64;
	uint32_t *t;

	while (size < p->nnodes * 2)
		size *= 2;
	t = malloc(size * sizeof(*t));
	if (!t)
		return fail_nomem(ps);
	memset(t, 0xff, size * sizeof(*t));
	for (uint32_t i = 0; i < p->nnodes; i++) {
		uint64_t g = p->nodes[i].guid;
		size_t h;

		if (!g)
			continue;
		h = (size_t)((g * UINT64_C(0x9e3779b97f4a7c15)) >> 20) & (size - 1);
		for (; t[h] != PLAN_NONE; h = (h + 1) & (size - 1))
			if (p->nodes[t[h]].guid == g) {
				uint32_t first = p->nodes[t[h]].line;

				ps->line = p->nodes[i].line;
				free(t);
				return fail(ps, "GUID 0x%016" PRIx64 " again (first on line %u)", g,
					    first);
			}
		t[h] = i;
	}
	free(t);
	return 0;
}

int plan_parse(const char *text, size_t len, const char *name, struct plan **out, char *err,
	       size_t errlen)
{
	struct parser ps = {
		.name = name, .err = err, .errlen = errlen, .cur = PLAN_NONE,
	};
	const char *s = text, *end = text + len;
	int r = 0;

	*out = NULL;
	ps.p = calloc(1, sizeof(*ps.p));
	if (!ps.p)
		return fail_nomem(&ps);
	while (s < end) {
		const char *nl = memchr(s, '\n', (size_t)(end - s));
		const char *e = nl ? nl : end;

		ps.line++;
		if ((size_t)(e - s) + 1 > PLAN_LINE_MAX) {
			r = fail(&ps, "line longer than %u bytes", PLAN_LINE_MAX - 1);
			break;
		}
		r = parse_line(&ps, s, e);
		if (r < 0)
			break;
		s = nl ? nl + 1 : end;
	}
	if (!r && ps.guid) {
		ps.line = ps.guid_line;
		r = fail(&ps, "a GUID line, and the file ends before its node");
	}
	if (!r && !ps.p->nnodes) {
		ps.line = ps.line ? ps.line : 1;
		r = fail(&ps, "no nodes: an empty plan");
	}
	if (!r)
		r = link_ends(&ps);
	if (!r)
		r = unique_guids(&ps);
	if (r < 0) {
		plan_free(ps.p);
		return r;
	}
	*out = ps.p;
	return 0;
}

struct plan *plan_free(struct plan *p)
{
	if (!p)
		return NULL;
	for (size_t i = 0; i < p->nnodes; i++) {
		free(p->nodes[i].id);
		free(p->nodes[i].ports);
	}
	free(p->nodes);
	free(p->by_id);
	free(p);
	return NULL;
}
