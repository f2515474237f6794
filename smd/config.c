// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <stddef.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "smd/config.h"
#include "util/log.h"
#include "mad/capture.h"
#include "mad/port.h"
#include "topo/route.h"
#include "util/macros.h"

void config_defaults(struct smd_config *c)
{
	memset(c, 0, sizeof(*c));
	/* Fixed, not under the install prefix: the state outlives reinstalls */
	snprintf(c->db, sizeof(c->db), "/var/lib/smd/smd.db");
	/* Measured under ibsim (tests/bench): throughput is flat from 16 up */
	c->max_outstanding_smps = 64;
	/* OpenSM's max_wire_smps: what real fabrics are known to hold */
	c->min_outstanding_smps = 4;
	c->smp_timeout_ms = 200;
	c->smp_retries = 3;
	c->lmc = 0;
	c->subnet_prefix = UINT64_C(0xfe80000000000000);
	c->packet_life_time = 18;
	c->subnet_timeout = 18;
	snprintf(c->routing_engine, sizeof(c->routing_engine), "dfree,updn,minhop");
	c->routing_repair = true;
	/* Deadlock-free whatever SL an application sends on (issue 14) */
	c->max_vls = 1;
	c->vlarb_low.automatic = true;
	c->log_level = LOG_LVL_INFO;
	c->sweep_interval = 10;
	/* A standby notices a dead master within 3 polls 2 s apart */
	c->sm_poll_interval = 2;
	c->sm_poll_retries = 3;
	c->capture_classes = CAPTURE_CLASS_ALL;
	/* Below systemd's default start timeout (90 s) */
	c->ready_timeout = 60;
	/* As OpenSM's default partition: 2048 bytes, 10 Gb/s, SL 0 */
	c->ipoib = true;
	c->ipoib_mtu = 4;
	c->ipoib_rate = 3;
	c->client_reregister = true;
	/*
	 * With m_key: Sets need the key, Gets (diagnostics) do not, and the
	 * key is not shown to them (IBA 14.2.4.1, level 1). A port whose key
	 * smd cannot know (another SM's, an old m_key) is taken back one
	 * lease after smd's first refused Set: a minute, while smd answers
	 * an intruder's violation within milliseconds (its Bad M_Key trap
	 * makes smd read the port with the key, which stops the lease).
	 */
	c->m_key_protect_bits = 1;
	c->m_key_lease_period = 60;
	/*
	 * Counters every 10 s (a sweep of the k=16 fat-tree's 7,000 ports
	 * takes a fraction of a second); the rules count over 10 minutes
	 */
	c->perf_interval = 10;
	c->health_window = 600;
	c->health_symbol_errors = 100;
	c->health_link_downs = 3;
	c->health_rcv_errors = 100;
	c->health_degraded = true;
	c->health_action = CONFIG_HEALTH_REPORT;
}

/* IBA MTU codes (14.2.5.6) and rate codes (15.2.5.16) by their values */
struct code_name {
	const char *text;
	unsigned int code;
};

static const struct code_name mtus[] = {
	{ "256", 1 }, { "512", 2 }, { "1024", 3 }, { "2048", 4 }, { "4096", 5 }, { NULL, 0 },
};

static const struct code_name rates[] = {
	{ "2.5", 2 }, { "5", 5 }, { "10", 3 }, { "14", 11 }, { "20", 6 }, { "25", 15 },
	{ "28", 19 }, { "30", 4 }, { "40", 7 }, { "50", 20 }, { "56", 12 }, { "60", 8 },
	{ "80", 9 }, { "100", 16 }, { "112", 13 }, { "120", 10 }, { "168", 14 }, { "200", 17 },
	{ "300", 18 }, { "400", 21 }, { "600", 22 }, { "800", 23 }, { "1200", 24 },
	{ "1600", 25 }, { NULL, 0 },
};

static int parse_code(const struct code_name *t, const char *v, unsigned int *out)
{
	for (; t->text; t++)
		if (!strcmp(t->text, v)) {
			*out = t->code;
			return 0;
		}
	return -1;
}

static const char *code_text(const struct code_name *t, unsigned int code)
{
	for (; t->text; t++)
		if (t->code == code)
			return t->text;
	return "?";
}

static int parse_uint(const char *v, unsigned long min, unsigned long max, unsigned int *out)
{
	unsigned long x;
	char *end;

	if (!*v || *v == '-')
		return -EINVAL;
	errno = 0;
	x = strtoul(v, &end, 0);
	if (errno || *end || x < min || x > max)
		return -ERANGE;
	*out = (unsigned int)x;
	return 0;
}

/* A 64-bit key: decimal or 0x hex */
static int parse_u64(const char *v, uint64_t *out)
{
	unsigned long long x;
	char *end;

	if (!*v || *v == '-' || *v == '+' || isspace((unsigned char)*v))
		return -EINVAL;
	errno = 0;
	x = strtoull(v, &end, 0);
	if (errno || *end)
		return errno == ERANGE ? -ERANGE : -EINVAL;
	*out = x;
	return 0;
}

/* A group that exists, by name or number; "" for none */
static int parse_group(const char *v, char *out, size_t len)
{
	struct group gr, *res = NULL;
	char buf[4096];
	char *end;

	if (strlen(v) >= len)
		return -EINVAL;
	if (*v) {
		unsigned long gid;

		errno = 0;
		gid = strtoul(v, &end, 10);
		if (isdigit((unsigned char)*v) && !*end && !errno && gid < (gid_t)-1)
			getgrgid_r((gid_t)gid, &gr, buf, sizeof(buf), &res);
		else
			getgrnam_r(v, &gr, buf, sizeof(buf), &res);
		if (!res)
			return -ESRCH;
	}
	snprintf(out, len, "%s", v);
	return 0;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return -EPROTO;
	return 0;
}

static int parse_prefix(const char *v, uint64_t *out)
{
	char buf[64], *slash;
	struct in6_addr a;
	uint64_t hi = 0, lo = 0;

	/* A 64-bit number, or an IPv6 prefix "fe80::" / "fe80::/64" */
	if (!strncmp(v, "0x", 2)) {
		char *end;

		errno = 0;
		*out = strtoull(v, &end, 16);
		return errno || *end || end == v + 2 ? -EINVAL : 0;
	}
	if (strlen(v) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", v);
	slash = strchr(buf, '/');
	if (slash) {
		if (strcmp(slash, "/64"))
			return -EINVAL;
		*slash = 0;
	}
	if (inet_pton(AF_INET6, buf, &a) != 1)
		return -EINVAL;
	for (int i = 0; i < 8; i++) {
		hi = hi << 8 | a.s6_addr[i];
		lo = lo << 8 | a.s6_addr[i + 8];
	}
	if (lo)
		return -EINVAL;	/* the interface half belongs to the port GUID */
	*out = hi;
	return 0;
}

/* "auto" (when allowed), "" (empty) or "VL:WEIGHT" entries separated by commas or blanks */
static int parse_vlarb(const char *v, bool allow_auto, struct config_vlarb *out)
{
	struct config_vlarb t = { .automatic = false };
	const char *s = v;

	if (allow_auto && !strcmp(v, "auto")) {
		*out = (struct config_vlarb){ .automatic = true };
		return 0;
	}
	while (*s) {
		unsigned long vl, w;
		char *end;

		if (*s == ',' || isspace((unsigned char)*s)) {
			s++;
			continue;
		}
		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		vl = strtoul(s, &end, 10);
		if (*end != ':' || !isdigit((unsigned char)end[1]))
			return -EINVAL;
		w = strtoul(end + 1, &end, 10);
		/* Data VLs 0-14; VL15 carries SMPs only and is never arbitrated */
		if (vl > 14 || w > 255 || t.n == CONFIG_VLARB_MAX)
			return -ERANGE;
		if (*end && *end != ',' && !isspace((unsigned char)*end))
			return -EINVAL;
		t.e[t.n].vl = (uint8_t)vl;
		t.e[t.n].weight = (uint8_t)w;
		t.n++;
		s = end;
	}
	*out = t;
	return 0;
}

/* "" (no table) or 16 VLs 0-15 separated by commas or blanks, SL 0 first */
static int parse_sl2vl(const char *v, bool *set, uint8_t vl[16])
{
	uint8_t t[16];
	unsigned int n = 0;
	const char *s = v;

	while (*s) {
		unsigned long x;
		char *end;

		if (*s == ',' || isspace((unsigned char)*s)) {
			s++;
			continue;
		}
		if (!isdigit((unsigned char)*s) || n == 16)
			return -EINVAL;
		x = strtoul(s, &end, 10);
		if (x > 15)
			return -EINVAL;
		if (*end && *end != ',' && !isspace((unsigned char)*end))
			return -EINVAL;
		t[n++] = (uint8_t)x;
		s = end;
	}
	if (n != 0 && n != 16)
		return -EINVAL;
	*set = n == 16;
	if (n)
		memcpy(vl, t, sizeof(t));
	return 0;
}

/*
 * One table of keys drives parsing, `smd -nv`, SIGHUP and the man-page
 * test. A parser returns 0 or -errno and, when it has something to add to
 * "bad value 'x' for key", a reason in why; a printer prints the value in
 * a form its parser reads back.
 */
struct config_key;
typedef int config_parse_fn(const struct config_key *k, const char *v, void *field,
			    char *why, size_t whylen);
typedef void config_print_fn(const struct config_key *k, const void *field, FILE *out);

/* What SIGHUP does with a key */
enum config_reload {
	CONFIG_LIVE,		/* the new value applies from the next sweep on */
	CONFIG_RESTART,		/* the running value stays; smd says a restart applies it */
};

struct config_key {
	const char *name;
	config_parse_fn *parse;
	config_print_fn *print;
	size_t offset, size;
	unsigned long min, max;		/* numbers: the range */
	const void *aux;		/* the parser's table, if it has one */
	enum config_reload reload;
	const char *restart_why;	/* CONFIG_RESTART: why, when not obvious */
};

static int key_uint(const struct config_key *k, const char *v, void *field, char *why,
		    size_t whylen)
{
	int r = parse_uint(v, k->min, k->max, field);

	if (r == -ERANGE)
		snprintf(why, whylen, "out of range");
	return r;
}

static void print_uint(const struct config_key *k, const void *field, FILE *out)
{
	(void)k;
	fprintf(out, "%u", *(const unsigned int *)field);
}

static int key_bool(const struct config_key *k, const char *v, void *field, char *why,
		    size_t whylen)
{
	(void)k;
	if (parse_bool(v, field) < 0) {
		snprintf(why, whylen, "yes or no");
		return -EINVAL;
	}
	return 0;
}

static void print_bool(const struct config_key *k, const void *field, FILE *out)
{
	(void)k;
	fprintf(out, "%s", *(const bool *)field ? "yes" : "no");
}

/* A string that fits its field; aux, if set, is the reason a too long one gets */
static int key_string(const struct config_key *k, const char *v, void *field, char *why,
		      size_t whylen)
{
	if (strlen(v) >= k->size) {
		if (k->aux)
			snprintf(why, whylen, "%s", (const char *)k->aux);
		return -ENAMETOOLONG;
	}
	/* Whole, so that SIGHUP may compare fields byte by byte */
	memset(field, 0, k->size);
	snprintf(field, k->size, "%s", v);
	return 0;
}

static void print_quoted(const struct config_key *k, const void *field, FILE *out)
{
	(void)k;
	fprintf(out, "\"%s\"", (const char *)field);
}

static int key_port(const struct config_key *k, const char *v, void *field, char *why,
		    size_t whylen)
{
	char ca[64];
	uint64_t guid;
	int pn;

	if (mad_port_parse_spec(v, ca, sizeof(ca), &pn, &guid) < 0)
		return -EINVAL;
	return key_string(k, v, field, why, whylen);
}

static int key_path(const struct config_key *k, const char *v, void *field, char *why,
		    size_t whylen)
{
	if (!*v)
		return -EINVAL;
	return key_string(k, v, field, why, whylen);
}

static int key_engines(const struct config_key *k, const char *v, void *field, char *why,
		       size_t whylen)
{
	char bad[64];

	if (strlen(v) >= k->size || route_list_valid(v, bad, sizeof(bad)) < 0) {
		snprintf(why, whylen, "no such routing engine");
		return -ENOENT;
	}
	memset(field, 0, k->size);
	snprintf(field, k->size, "%s", v);
	return 0;
}

static void print_plain(const struct config_key *k, const void *field, FILE *out)
{
	(void)k;
	fprintf(out, "%s", (const char *)field);
}

static int key_u64(const struct config_key *k, const char *v, void *field, char *why,
		   size_t whylen)
{
	(void)k, (void)why, (void)whylen;
	return parse_u64(v, field);
}

static void print_hex64(const struct config_key *k, const void *field, FILE *out)
{
	(void)k;
	fprintf(out, "0x%016" PRIx64, *(const uint64_t *)field);
}

static int key_prefix(const struct config_key *k, const char *v, void *field, char *why,
		      size_t whylen)
{
	(void)k, (void)why, (void)whylen;
	return parse_prefix(v, field);
}

static void print_prefix(const struct config_key *k, const void *field, FILE *out)
{
	uint64_t prefix = *(const uint64_t *)field;
	struct in6_addr a = { 0 };
	char txt[INET6_ADDRSTRLEN] = "";

	(void)k;
	for (int i = 0; i < 8; i++)
		a.s6_addr[i] = (uint8_t)(prefix >> (56 - 8 * i));
	inet_ntop(AF_INET6, &a, txt, sizeof(txt));
	fprintf(out, "%s/64", txt);
}

static int key_sl2vl(const struct config_key *k, const char *v, void *field, char *why,
		     size_t whylen)
{
	struct config_sl2vl *t = field;

	(void)k;
	if (parse_sl2vl(v, &t->set, t->vl) < 0) {
		snprintf(why, whylen, "16 VLs 0-15, SL 0 first, or nothing");
		return -EINVAL;
	}
	return 0;
}

static void print_sl2vl(const struct config_key *k, const void *field, FILE *out)
{
	const struct config_sl2vl *t = field;

	(void)k;
	if (!t->set)
		fprintf(out, "\"\"");
	for (unsigned int i = 0; t->set && i < 16; i++)
		fprintf(out, "%s%u", i ? "," : "", t->vl[i]);
}

/* vlarb_low may be "auto" (aux non-NULL), vlarb_high may not */
static int key_vlarb(const struct config_key *k, const char *v, void *field, char *why,
		     size_t whylen)
{
	int r = parse_vlarb(v, k->aux != NULL, field);

	if (r == -EINVAL)
		snprintf(why, whylen, "VL:WEIGHT entries, VL 0-14, weight 0-255, at most 64");
	else if (r == -ERANGE)
		snprintf(why, whylen, "out of range");
	return r;
}

static void print_vlarb(const struct config_key *k, const void *field, FILE *out)
{
	const struct config_vlarb *t = field;

	(void)k;
	if (t->automatic)
		fprintf(out, "auto");
	else if (!t->n)
		fprintf(out, "\"\"");
	for (unsigned int i = 0; i < t->n; i++)
		fprintf(out, "%s%u:%u", i ? "," : "", t->e[i].vl, t->e[i].weight);
}

static int key_log_level(const struct config_key *k, const char *v, void *field, char *why,
			 size_t whylen)
{
	int l = log_parse_level(v);

	(void)k, (void)why, (void)whylen;
	if (l < 0)
		return -EINVAL;
	*(int *)field = l;
	return 0;
}

static void print_log_level(const struct config_key *k, const void *field, FILE *out)
{
	(void)k;
	fprintf(out, "%s", log_level_name(*(const int *)field));
}

static int key_classes(const struct config_key *k, const char *v, void *field, char *why,
		       size_t whylen)
{
	(void)k;
	if (capture_parse_classes(v, field) < 0) {
		snprintf(why, whylen, "a list of smp, sa, trap, other, or all");
		return -EINVAL;
	}
	return 0;
}

static void print_classes(const struct config_key *k, const void *field, FILE *out)
{
	char classes[64];

	(void)k;
	capture_format_classes(*(const unsigned int *)field, classes, sizeof(classes));
	fprintf(out, "%s", classes);
}

/* A word from a list (aux), the unit its values are in, if any */
struct code_words {
	const char *unit;
	const struct code_name *names;
};

static const struct code_name floods[] = {
	{ "report", CONFIG_TRAP_FLOOD_REPORT }, { "disable", CONFIG_TRAP_FLOOD_DISABLE },
	{ NULL, 0 },
};

static const struct code_name health_actions[] = {
	{ "report", CONFIG_HEALTH_REPORT }, { "isolate", CONFIG_HEALTH_ISOLATE }, { NULL, 0 },
};

static const struct code_words mtu_words = { "bytes", mtus };
static const struct code_words health_words = { NULL, health_actions };
static const struct code_words rate_words = { "Gb/s", rates };
static const struct code_words flood_words = { NULL, floods };

static int key_code(const struct config_key *k, const char *v, void *field, char *why,
		    size_t whylen)
{
	const struct code_words *w = k->aux;
	size_t n = 0;

	if (!parse_code(w->names, v, field))
		return 0;
	/* The reason lists the words: "unit: a, b or c" */
	if (w->unit)
		n = (size_t)snprintf(why, whylen, "%s: ", w->unit);
	for (const struct code_name *t = w->names; t->text && n < whylen; t++)
		n += (size_t)snprintf(why + n, whylen - n, "%s%s", t->text,
				      !t[1].text ? "" : !t[2].text ? " or " : ", ");
	return -EINVAL;
}

static void print_code(const struct config_key *k, const void *field, FILE *out)
{
	const struct code_words *w = k->aux;

	fprintf(out, "%s", code_text(w->names, *(const unsigned int *)field));
}

static int key_group(const struct config_key *k, const char *v, void *field, char *why,
		     size_t whylen)
{
	char name[sizeof(((struct smd_config *)0)->control_group)] = "";
	int r = parse_group(v, name, sizeof(name));

	if (!r)
		memcpy(field, name, k->size);
	if (r == -ESRCH)
		snprintf(why, whylen, "no such group");
	return r;
}

#define FIELD(f)	offsetof(struct smd_config, f), sizeof(((struct smd_config *)0)->f)
#define UINT(name, lo, hi, reload)						\
	{ #name, key_uint, print_uint, FIELD(name), lo, hi, NULL, reload, NULL }
#define BOOL(name, reload)							\
	{ #name, key_bool, print_bool, FIELD(name), 0, 0, NULL, reload, NULL }

/* The keys, in the order `smd -nv` prints them */
static const struct config_key keys[] = {
	{ "port", key_port, print_quoted, FIELD(port), 0, 0, NULL, CONFIG_RESTART, NULL },
	{ "db", key_path, print_quoted, FIELD(db), 0, 0, NULL, CONFIG_RESTART, NULL },
	UINT(max_outstanding_smps, 1, 4096, CONFIG_RESTART),
	UINT(min_outstanding_smps, 1, 4096, CONFIG_RESTART),
	UINT(smp_timeout_ms, 1, 60000, CONFIG_RESTART),
	UINT(smp_retries, 0, 100, CONFIG_RESTART),
	UINT(lmc, 0, 7, CONFIG_LIVE),
	{ "subnet_prefix", key_prefix, print_prefix, FIELD(subnet_prefix), 0, 0, NULL,
	  CONFIG_LIVE, NULL },
	UINT(packet_life_time, 0, 19, CONFIG_LIVE),
	UINT(subnet_timeout, 0, 31, CONFIG_LIVE),
	UINT(sm_priority, 0, 15, CONFIG_LIVE),
	UINT(sm_poll_interval, 1, 3600, CONFIG_LIVE),
	UINT(sm_poll_retries, 1, 100, CONFIG_LIVE),
	{ "routing_engine", key_engines, print_plain, FIELD(routing_engine), 0, 0, NULL,
	  CONFIG_LIVE, NULL },
	BOOL(routing_repair, CONFIG_LIVE),
	UINT(max_vls, 0, 8, CONFIG_LIVE),
	{ "sl2vl", key_sl2vl, print_sl2vl, FIELD(sl2vl), 0, 0, NULL, CONFIG_LIVE, NULL },
	{ "vlarb_low", key_vlarb, print_vlarb, FIELD(vlarb_low), 0, 0, "auto", CONFIG_LIVE,
	  NULL },
	{ "vlarb_high", key_vlarb, print_vlarb, FIELD(vlarb_high), 0, 0, NULL, CONFIG_LIVE,
	  NULL },
	UINT(vlarb_high_limit, 0, 255, CONFIG_LIVE),
	{ "log_level", key_log_level, print_log_level, FIELD(log_level), 0, 0, NULL,
	  CONFIG_LIVE, NULL },
	UINT(sweep_interval, 0, 86400, CONFIG_LIVE),
	{ "capture", key_string, print_quoted, FIELD(capture), 0, 0, NULL, CONFIG_RESTART,
	  NULL },
	UINT(capture_max_mb, 0, 1048576, CONFIG_RESTART),
	{ "capture_classes", key_classes, print_classes, FIELD(capture_classes), 0, 0, NULL,
	  CONFIG_RESTART, NULL },
	{ "control_socket", key_string, print_quoted, FIELD(control_socket), 0, 0,
	  "a socket path has at most 107 bytes", CONFIG_RESTART, NULL },
	UINT(ready_timeout, 0, 3600, CONFIG_RESTART),
	/*
	 * Live with the partitions file they are the defaults of: SIGHUP reads
	 * the file again and main.c puts these back when the file is refused
	 * (a group's members keep its old parameters until they join again)
	 */
	{ "ipoib", key_bool, print_bool, FIELD(ipoib), 0, 0, NULL, CONFIG_LIVE, NULL },
	{ "ipoib_mtu", key_code, print_code, FIELD(ipoib_mtu), 0, 0, &mtu_words, CONFIG_LIVE,
	  NULL },
	{ "ipoib_rate", key_code, print_code, FIELD(ipoib_rate), 0, 0, &rate_words,
	  CONFIG_LIVE, NULL },
	{ "ipoib_sl", key_uint, print_uint, FIELD(ipoib_sl), 0, 15, NULL, CONFIG_LIVE, NULL },
	BOOL(client_reregister, CONFIG_LIVE),
	{ "partition_config", key_string, print_quoted, FIELD(partition_config), 0, 0, NULL,
	  CONFIG_LIVE, NULL },
	{ "opensm_guid2lid", key_string, print_quoted, FIELD(opensm_guid2lid), 0, 0, NULL,
	  CONFIG_RESTART, "read only when smd starts on a database that has recorded no sweep" },
	/* SIGHUP reads the plan again; a plan refused leaves the one in force (smd/cabling.c) */
	{ "cabling_plan", key_string, print_quoted, FIELD(cabling_plan), 0, 0, NULL, CONFIG_LIVE,
	  NULL },
	BOOL(cabling_enforce, CONFIG_LIVE),
	{ "sm_key", key_u64, print_hex64, FIELD(sm_key), 0, 0, NULL, CONFIG_LIVE, NULL },
	{ "sa_key", key_u64, print_hex64, FIELD(sa_key), 0, 0, NULL, CONFIG_LIVE, NULL },
	{ "m_key", key_u64, print_hex64, FIELD(m_key), 0, 0, NULL, CONFIG_LIVE, NULL },
	UINT(m_key_protect_bits, 0, 3, CONFIG_LIVE),
	UINT(m_key_lease_period, 0, 65535, CONFIG_LIVE),
	{ "trap_flood_action", key_code, print_code, FIELD(trap_flood_action), 0, 0,
	  &flood_words, CONFIG_LIVE, NULL },
	{ "control_group", key_group, print_quoted, FIELD(control_group), 0, 0, NULL,
	  CONFIG_LIVE, NULL },
	UINT(perf_interval, 0, 86400, CONFIG_LIVE),
	UINT(health_window, 1, 604800, CONFIG_LIVE),
	UINT(health_symbol_errors, 0, 1000000000, CONFIG_LIVE),
	UINT(health_link_downs, 0, 1000000000, CONFIG_LIVE),
	UINT(health_rcv_errors, 0, 1000000000, CONFIG_LIVE),
	BOOL(health_degraded, CONFIG_LIVE),
	{ "health_action", key_code, print_code, FIELD(health_action), 0, 0, &health_words,
	  CONFIG_LIVE, NULL },
};

static const struct config_key *key_find(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++)
		if (!strcmp(keys[i].name, name))
			return &keys[i];
	return NULL;
}

int config_set(struct smd_config *c, const char *key, const char *v, char *err, size_t errlen)
{
	const struct config_key *k = key_find(key);
	char why[256] = "";
	int r;

	if (!k) {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -ENOKEY;
	}
	r = k->parse(k, v, (char *)c + k->offset, why, sizeof(why));
	if (r < 0)
		snprintf(err, errlen, "bad value '%s' for %s%s%s%s", v, key, *why ? " (" : "", why,
			 *why ? ")" : "");
	return r;
}

static char *trim(char *s)
{
	char *e;

	while (isspace((unsigned char)*s))
		s++;
	e = s + strlen(s);
	while (e > s && isspace((unsigned char)e[-1]))
		*--e = 0;
	return s;
}

int config_load(struct smd_config *c, const char *path, char *err, size_t errlen)
{
	char line[1024], msg[256];
	unsigned int lineno = 0;
	FILE *f;
	int r = 0;

	f = fopen(path, "re");
	if (!f) {
		r = -errno;
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return r;
	}
	while (fgets(line, sizeof(line), f)) {
		char *s, *eq, *key, *val, *hash;

		lineno++;
		if (!strchr(line, '\n') && !feof(f)) {
			snprintf(err, errlen, "%s:%u: line too long", path, lineno);
			r = -EINVAL;
			break;
		}
		hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		s = trim(line);
		if (!*s)
			continue;
		eq = strchr(s, '=');
		if (!eq) {
			snprintf(err, errlen, "%s:%u: expected 'key = value'", path, lineno);
			r = -EINVAL;
			break;
		}
		*eq = 0;
		key = trim(s);
		val = trim(eq + 1);
		/* Optional double quotes around a value */
		if (val[0] == '"' && strlen(val) >= 2 && val[strlen(val) - 1] == '"') {
			val[strlen(val) - 1] = 0;
			val++;
		}
		r = config_set(c, key, val, msg, sizeof(msg));
		if (r < 0) {
			snprintf(err, errlen, "%s:%u: %s", path, lineno, msg);
			break;
		}
	}
	if (!r && ferror(f)) {
		r = -EIO;
		snprintf(err, errlen, "%s: read error", path);
	}
	if (!r && (c->sm_key || c->sa_key || c->m_key)) {
		struct stat st;

		/*
		 * Whoever reads a key can take the subnet over (or, sa_key, read
		 * and change every SA record); whoever writes it, too
		 */
		if (fstat(fileno(f), &st) < 0) {
			r = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		} else if (st.st_mode & (S_IROTH | S_IWOTH)) {
			r = -EACCES;
			snprintf(err, errlen, "%s: sets %s but others may %s it (mode %04o): "
				 "chmod o-rw %s", path, c->sm_key ? "sm_key" : c->sa_key ? "sa_key" :
				 "m_key",
				 st.st_mode & S_IROTH ? "read" : "write",
				 (unsigned int)(st.st_mode & 07777), path);
		}
	}
	/* Layered routes own the SL-to-VL tables: a QoS mapping would undo them */
	if (!r && c->sl2vl.set && c->max_vls != 1) {
		r = -EINVAL;
		snprintf(err, errlen, "%s: sl2vl applies to one-VL routing only (max_vls = 1)",
			 path);
	}
	fclose(f);
	return r;
}

void config_print(const struct smd_config *c, FILE *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		fprintf(out, "%s = ", keys[i].name);
		keys[i].print(&keys[i], (const char *)c + keys[i].offset, out);
		fprintf(out, "\n");
	}
}

const char *config_key_name(size_t i, bool *live)
{
	if (i >= ARRAY_SIZE(keys))
		return NULL;
	if (live)
		*live = keys[i].reload == CONFIG_LIVE;
	return keys[i].name;
}

void config_reload(struct smd_config *run, const struct smd_config *next)
{
	for (size_t i = 0; i < ARRAY_SIZE(keys); i++) {
		const struct config_key *k = &keys[i];
		char *to = (char *)run + k->offset;
		const char *from = (const char *)next + k->offset;

		if (k->reload == CONFIG_LIVE)
			memcpy(to, from, k->size);
		else if (memcmp(to, from, k->size))
			log_warn("SIGHUP: %s applies after a restart%s%s%s", k->name,
				 k->restart_why ? " (" : "", k->restart_why ? k->restart_why : "",
				 k->restart_why ? ")" : "");
	}
}
