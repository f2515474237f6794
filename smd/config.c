// SPDX-License-Identifier: MIT
#include <ctype.h>
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
#include "smd/log.h"
#include "mad/capture.h"
#include "mad/port.h"
#include "topo/route.h"

void config_defaults(struct smd_config *c)
{
	memset(c, 0, sizeof(*c));
	/* Fixed, not under the install prefix: the state outlives reinstalls */
	snprintf(c->db, sizeof(c->db), "/var/lib/smd/smd.db");
	/* Measured under ibsim (tests/bench): throughput is flat from 16 up */
	c->max_outstanding_smps = 32;
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
	{ "300", 18 }, { "400", 21 }, { "600", 22 }, { NULL, 0 },
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

static void print_vlarb(FILE *out, const char *key, const struct config_vlarb *t)
{
	fprintf(out, "%s = ", key);
	if (t->automatic)
		fprintf(out, "auto");
	else if (!t->n)
		fprintf(out, "\"\"");
	for (unsigned int i = 0; i < t->n; i++)
		fprintf(out, "%s%u:%u", i ? "," : "", t->e[i].vl, t->e[i].weight);
	fprintf(out, "\n");
}

int config_set(struct smd_config *c, const char *key, const char *v, char *err, size_t errlen)
{
	int r = 0;

	if (!strcmp(key, "port")) {
		char ca[64];
		uint64_t guid;
		int pn;

		if (strlen(v) >= sizeof(c->port) ||
		    mad_port_parse_spec(v, ca, sizeof(ca), &pn, &guid) < 0)
			r = -EINVAL;
		else
			snprintf(c->port, sizeof(c->port), "%s", v);
	} else if (!strcmp(key, "db")) {
		if (!*v || strlen(v) >= sizeof(c->db))
			r = -EINVAL;
		else
			snprintf(c->db, sizeof(c->db), "%s", v);
	} else if (!strcmp(key, "max_outstanding_smps")) {
		r = parse_uint(v, 1, 4096, &c->max_outstanding_smps);
	} else if (!strcmp(key, "smp_timeout_ms")) {
		r = parse_uint(v, 1, 60000, &c->smp_timeout_ms);
	} else if (!strcmp(key, "smp_retries")) {
		r = parse_uint(v, 0, 100, &c->smp_retries);
	} else if (!strcmp(key, "lmc")) {
		r = parse_uint(v, 0, 7, &c->lmc);
	} else if (!strcmp(key, "subnet_prefix")) {
		r = parse_prefix(v, &c->subnet_prefix);
	} else if (!strcmp(key, "packet_life_time")) {
		r = parse_uint(v, 0, 19, &c->packet_life_time);
	} else if (!strcmp(key, "subnet_timeout")) {
		r = parse_uint(v, 0, 31, &c->subnet_timeout);
	} else if (!strcmp(key, "sm_priority")) {
		r = parse_uint(v, 0, 15, &c->sm_priority);
	} else if (!strcmp(key, "sm_poll_interval")) {
		r = parse_uint(v, 1, 3600, &c->sm_poll_interval);
	} else if (!strcmp(key, "sm_poll_retries")) {
		r = parse_uint(v, 1, 100, &c->sm_poll_retries);
	} else if (!strcmp(key, "routing_engine")) {
		char bad[64];

		if (strlen(v) >= sizeof(c->routing_engine) ||
		    route_list_valid(v, bad, sizeof(bad)) < 0)
			r = -ENOENT;
		else
			snprintf(c->routing_engine, sizeof(c->routing_engine), "%s", v);
	} else if (!strcmp(key, "routing_repair")) {
		r = parse_bool(v, &c->routing_repair);
	} else if (!strcmp(key, "max_vls")) {
		r = parse_uint(v, 0, 8, &c->max_vls);
	} else if (!strcmp(key, "sl2vl")) {
		r = parse_sl2vl(v, &c->sl2vl_set, c->sl2vl);
		if (r == -EINVAL)
			r = -EXFULL;
	} else if (!strcmp(key, "vlarb_low")) {
		r = parse_vlarb(v, true, &c->vlarb_low);
		if (r == -EINVAL)
			r = -EBADR;
	} else if (!strcmp(key, "vlarb_high")) {
		r = parse_vlarb(v, false, &c->vlarb_high);
		if (r == -EINVAL)
			r = -EBADR;
	} else if (!strcmp(key, "vlarb_high_limit")) {
		r = parse_uint(v, 0, 255, &c->vlarb_high_limit);
	} else if (!strcmp(key, "log_level")) {
		int l = log_parse_level(v);

		if (l < 0)
			r = -EINVAL;
		else
			c->log_level = l;
	} else if (!strcmp(key, "sweep_interval")) {
		r = parse_uint(v, 0, 86400, &c->sweep_interval);
	} else if (!strcmp(key, "capture")) {
		if (strlen(v) >= sizeof(c->capture))
			r = -EINVAL;
		else
			snprintf(c->capture, sizeof(c->capture), "%s", v);
	} else if (!strcmp(key, "capture_max_mb")) {
		r = parse_uint(v, 0, 1048576, &c->capture_max_mb);
	} else if (!strcmp(key, "capture_classes")) {
		if (capture_parse_classes(v, &c->capture_classes) < 0)
			r = -EDOM;
	} else if (!strcmp(key, "control_socket")) {
		if (strlen(v) >= sizeof(c->control_socket))
			r = -ENAMETOOLONG;
		else
			snprintf(c->control_socket, sizeof(c->control_socket), "%s", v);
	} else if (!strcmp(key, "ready_timeout")) {
		r = parse_uint(v, 0, 3600, &c->ready_timeout);
	} else if (!strcmp(key, "ipoib")) {
		r = parse_bool(v, &c->ipoib);
	} else if (!strcmp(key, "ipoib_mtu")) {
		r = parse_code(mtus, v, &c->ipoib_mtu) < 0 ? -EMLINK : 0;
	} else if (!strcmp(key, "ipoib_rate")) {
		r = parse_code(rates, v, &c->ipoib_rate) < 0 ? -EXDEV : 0;
	} else if (!strcmp(key, "ipoib_sl")) {
		r = parse_uint(v, 0, 15, &c->ipoib_sl);
	} else if (!strcmp(key, "client_reregister")) {
		r = parse_bool(v, &c->client_reregister);
	} else if (!strcmp(key, "partition_config")) {
		if (strlen(v) >= sizeof(c->partition_config))
			r = -EINVAL;
		else
			snprintf(c->partition_config, sizeof(c->partition_config), "%s", v);
	} else if (!strcmp(key, "sm_key")) {
		r = parse_u64(v, &c->sm_key);
	} else if (!strcmp(key, "trap_flood_action")) {
		if (!strcmp(v, "report"))
			c->trap_flood_action = CONFIG_TRAP_FLOOD_REPORT;
		else if (!strcmp(v, "disable"))
			c->trap_flood_action = CONFIG_TRAP_FLOOD_DISABLE;
		else
			r = -ENOTTY;
	} else if (!strcmp(key, "control_group")) {
		r = parse_group(v, c->control_group, sizeof(c->control_group));
	} else {
		snprintf(err, errlen, "unknown key '%s'", key);
		return -ENOKEY;
	}
	if (r < 0)
		snprintf(err, errlen, "bad value '%s' for %s%s", v, key,
			 r == -ERANGE ? " (out of range)" :
			 r == -ENOENT ? " (no such routing engine)" :
			 r == -EDOM ? " (a list of smp, sa, trap, other, or all)" :
			 r == -EBADR ? " (VL:WEIGHT entries, VL 0-14, weight 0-255, at most 64)" :
			 r == -EXFULL ? " (16 VLs 0-15, SL 0 first, or nothing)" :
			 r == -ENAMETOOLONG ? " (a socket path has at most 107 bytes)" :
			 r == -EPROTO ? " (yes or no)" :
			 r == -EMLINK ? " (bytes: 256, 512, 1024, 2048 or 4096)" :
			 r == -EXDEV ? " (Gb/s: 2.5, 5, 10, 14, 20, 25, 28, 30, 40, 50, 56, 60, 80, "
				       "100, 112, 120, 168, 200, 300, 400 or 600)" :
			 r == -ENOTTY ? " (report or disable)" :
			 r == -ESRCH ? " (no such group)" :
			 "");
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
	if (!r && c->sm_key) {
		struct stat st;

		/* Whoever reads the key can take the subnet over; whoever writes it, too */
		if (fstat(fileno(f), &st) < 0) {
			r = -errno;
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
		} else if (st.st_mode & (S_IROTH | S_IWOTH)) {
			r = -EACCES;
			snprintf(err, errlen, "%s: sets sm_key but others may %s it (mode %04o): "
				 "chmod o-rw %s", path, st.st_mode & S_IROTH ? "read" : "write",
				 (unsigned int)(st.st_mode & 07777), path);
		}
	}
	/* Layered routes own the SL-to-VL tables: a QoS mapping would undo them */
	if (!r && c->sl2vl_set && c->max_vls != 1) {
		r = -EINVAL;
		snprintf(err, errlen, "%s: sl2vl applies to one-VL routing only (max_vls = 1)",
			 path);
	}
	fclose(f);
	return r;
}

void config_print(const struct smd_config *c, FILE *out)
{
	fprintf(out, "port = \"%s\"\n", c->port);
	fprintf(out, "db = \"%s\"\n", c->db);
	fprintf(out, "max_outstanding_smps = %u\n", c->max_outstanding_smps);
	fprintf(out, "smp_timeout_ms = %u\n", c->smp_timeout_ms);
	fprintf(out, "smp_retries = %u\n", c->smp_retries);
	fprintf(out, "lmc = %u\n", c->lmc);
	struct in6_addr a = { 0 };
	char txt[INET6_ADDRSTRLEN] = "";

	for (int i = 0; i < 8; i++)
		a.s6_addr[i] = (uint8_t)(c->subnet_prefix >> (56 - 8 * i));
	inet_ntop(AF_INET6, &a, txt, sizeof(txt));
	fprintf(out, "subnet_prefix = %s/64\n", txt);
	fprintf(out, "packet_life_time = %u\n", c->packet_life_time);
	fprintf(out, "subnet_timeout = %u\n", c->subnet_timeout);
	fprintf(out, "sm_priority = %u\n", c->sm_priority);
	fprintf(out, "sm_poll_interval = %u\n", c->sm_poll_interval);
	fprintf(out, "sm_poll_retries = %u\n", c->sm_poll_retries);
	fprintf(out, "routing_engine = %s\n", c->routing_engine);
	fprintf(out, "routing_repair = %s\n", c->routing_repair ? "yes" : "no");
	fprintf(out, "max_vls = %u\n", c->max_vls);
	fprintf(out, "sl2vl = ");
	if (!c->sl2vl_set)
		fprintf(out, "\"\"");
	for (unsigned int i = 0; c->sl2vl_set && i < 16; i++)
		fprintf(out, "%s%u", i ? "," : "", c->sl2vl[i]);
	fprintf(out, "\n");
	print_vlarb(out, "vlarb_low", &c->vlarb_low);
	print_vlarb(out, "vlarb_high", &c->vlarb_high);
	fprintf(out, "vlarb_high_limit = %u\n", c->vlarb_high_limit);
	fprintf(out, "log_level = %s\n", log_level_name(c->log_level));
	fprintf(out, "sweep_interval = %u\n", c->sweep_interval);
	char classes[64];

	capture_format_classes(c->capture_classes, classes, sizeof(classes));
	fprintf(out, "capture = \"%s\"\n", c->capture);
	fprintf(out, "capture_max_mb = %u\n", c->capture_max_mb);
	fprintf(out, "capture_classes = %s\n", classes);
	fprintf(out, "control_socket = \"%s\"\n", c->control_socket);
	fprintf(out, "ready_timeout = %u\n", c->ready_timeout);
	fprintf(out, "ipoib = %s\n", c->ipoib ? "yes" : "no");
	fprintf(out, "ipoib_mtu = %s\n", code_text(mtus, c->ipoib_mtu));
	fprintf(out, "ipoib_rate = %s\n", code_text(rates, c->ipoib_rate));
	fprintf(out, "ipoib_sl = %u\n", c->ipoib_sl);
	fprintf(out, "client_reregister = %s\n", c->client_reregister ? "yes" : "no");
	fprintf(out, "partition_config = \"%s\"\n", c->partition_config);
	fprintf(out, "sm_key = 0x%016" PRIx64 "\n", c->sm_key);
	fprintf(out, "trap_flood_action = %s\n",
		c->trap_flood_action == CONFIG_TRAP_FLOOD_DISABLE ? "disable" : "report");
	fprintf(out, "control_group = \"%s\"\n", c->control_group);
}
