// SPDX-License-Identifier: MIT
/*
 * The metrics renderer (smd/status_metrics.c) and the writer of the text
 * format (util/metrics.c), on snapshots made here: every problem counter
 * of the sweep is a sample of smd_sweep_problems with its key as label and
 * its own value; every page keeps the format's rules, as an independent
 * reader below checks them line by line (HELP and TYPE once per family and
 * before its samples, a family's samples together, no sample twice,
 * counters named _total, label values escaped and UTF-8, values numbers);
 * the writer escapes hostile label values (a node description off the
 * wire) and refuses what would break a page; man/smd_exporter.8 names every
 * family. `test_metrics --dump DIR` writes the pages for promtool
 * (metrics_promtool.sh).
 */
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smd/sm.h"
#include "smd/status.h"
#include "tests/unit/unit.h"
#include "util/ctl_proto.h"
#include "util/metrics.h"
#include "util/utf8.h"

/* What a node description off the wire may hold, and what the page gets of it */
static const char hostile_desc[] = "a\"b\\c\nd\x01\x7f\xff\xc3\xa9 e}{=,";
static const char hostile_want[] = "a\\\"b\\\\c\\nd??\xef\xbf\xbd\xc3\xa9 e}{=,";

static struct sweep_result sweep;
static char *man;		/* man/smd_exporter.8 */
static struct status_port ports[3];

enum kind { MASTER, STANDBY, STARTING, FAILED, NKINDS };
static const char *const kind_name[NKINDS] = { "master", "standby", "starting", "failed" };

/* A snapshot with distinct figures everywhere; every problem counter 101 + its index */
static void make_snapshot(struct status_snapshot *s, enum kind k)
{
	memset(&sweep, 0, sizeof(sweep));
	sweep.nodes = 40;
	sweep.switches = 20;
	sweep.cas = 20;
	sweep.endports = 45;
	sweep.links = 60;
	sweep.lids = 44;
	sweep.up = true;
	sweep.seconds = 1.25;
	for (size_t i = 0; i < status_nproblems; i++) {
		char *f = (char *)&sweep + status_problems[i].off;

		if (status_problems[i].wide)
			*(uint64_t *)(void *)f = 101 + i;
		else
			*(unsigned int *)(void *)f = (unsigned int)(101 + i);
	}
	memset(s, 0, sizeof(*s));
	s->status = CONTROL_STATUS_OK;
	s->version = "1.2.3";
	s->started = 1700000000;
	s->now = 1700000100;
	s->state = k == STANDBY ? "STANDBY" : k == STARTING ? "DISCOVERING" : "MASTER";
	s->sm_priority = 7;
	s->loop_longest_ms = 12.5;
	s->loop_slow = 3;
	s->standby = k == STANDBY;
	s->subnet = k == STANDBY ? STATUS_SUBNET_MASTERS : k == STARTING ? STATUS_SUBNET_UNKNOWN :
		    STATUS_SUBNET_KNOWN;
	s->model = k == STARTING ? NULL : &sweep;
	s->sa_serving = k == MASTER;
	s->has_sa = k != STARTING;
	s->sa_received = 1000;
	s->sa_answered = 900;
	s->sa_errors = 90;
	s->sa_refused = 9;
	s->sa_dropped = 5;
	s->sa_bad_keys = 6;
	s->smps_all = 234567;
	s->sa_key = true;
	s->has_mcast = k == MASTER;
	s->mc_groups = 3;
	s->mc_memberships = 33;
	s->heavy_sweeps = 17;
	s->light_sweeps = 230;
	s->sweeping = k == STARTING;
	s->last = k == STARTING ? NULL : &sweep;
	s->last_end = 1700000090;
	s->last_failed = k == FAILED;
	s->smps_sent = 123456;
	s->smps_timed_out = 321;
	s->smps_lost = 12;
	s->traps = 4444;
	s->problems = 2;
	/* A master compared its model with a cabling plan; a standby never did */
	s->cabling = (struct status_cabling){
		.configured = k != STARTING, .file = "/etc/smd/plan.ibnd",
		.error = k == FAILED ? "plan.ibnd:3: port cabled twice" : "",
		.compared = k == MASTER || k == FAILED, .count = { 4, 1, 2, 3, 5 }, .total = 15,
		.held = 2, .kept = 1,
	};
	/* Health: a master that read three ports, one isolated, one unhealthy */
	if (k == STARTING)
		return;
	s->health = (struct status_health){
		.perf_enabled = true, .perf_interval = 10, .perf_sweeps = k == MASTER ? 12 : 0,
		.perf_last_seconds = 0.375, .perf_last_end = 1700000095, .perf_last_ports = 3,
		.perf_last_read = 2, .perf_last_unanswered = 1, .gmps_sent = 777,
		.gmps_timed_out = 7, .gmps_unanswered = 3, .bad_answers = 5, .bad_status = 4,
		.clears = 8, .resets = 9, .saturations = 1, .action = "isolate", .window = 600,
		.unhealthy = 2, .broken = { 1, 0, 1, 0 }, .became = { 3, 1, 2, 4 }, .isolated = 1,
		.kept = 2, .reports = 6, .links_seen_down = 11,
	};
	if (k != MASTER)
		return;
	memset(ports, 0, sizeof(ports));
	for (unsigned int i = 0; i < 3; i++) {
		ports[i].guid = 0x0011750000000001ull + i;
		ports[i].port = (uint8_t)(i + 1);
		ports[i].healthy = i != 1;
		ports[i].isolated = i == 1;
		snprintf(ports[i].desc, sizeof(ports[i].desc), "sw-%u", i);
		for (unsigned int c = 0; c < PERF_COUNTERS; c++)
			ports[i].total[c] = 1000u * (i + 1) + c;
	}
	memcpy(ports[2].desc, hostile_desc, sizeof(hostile_desc));
	s->ports = ports;
	s->nports = 3;
}

static char *render(const struct status_snapshot *s, unsigned int *invalid)
{
	struct metrics m;
	char *out;

	metrics_init(&m);
	status_metrics(s, &m);
	out = metrics_text(&m) ? strdup(metrics_text(&m)) : NULL;
	*invalid = m.invalid;
	metrics_free(&m);
	return out;
}

/* ---- an independent reader of the text format, version 0.0.4 ---- */

#define FAMILIES_MAX	256
#define SAMPLES_MAX	4096

struct page {
	char family[FAMILIES_MAX][METRICS_NAME_MAX + 1];
	char type[FAMILIES_MAX][16];
	unsigned int nfamilies;
	char *sample[SAMPLES_MAX];	/* name and labels, as written */
	unsigned int nsamples;
};

static bool name_ok(const char *s, size_t n, bool colon)
{
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!(isalpha((unsigned char)c) || c == '_' || (colon && c == ':') ||
		      (i && isdigit((unsigned char)c))))
			return false;
	}
	return true;
}

/* A label value from p (after the opening quote) to its closing quote; NULL if broken */
static const char *read_value(const char *p, const char *end)
{
	while (p < end && *p != '"') {
		uint32_t cp;
		size_t k;

		if (*p == '\\') {
			if (p + 1 >= end || (p[1] != '\\' && p[1] != '"' && p[1] != 'n'))
				return NULL;
			p += 2;
			continue;
		}
		if ((unsigned char)*p < 0x20)
			return NULL;
		k = utf8_len((const uint8_t *)p, (size_t)(end - p), &cp);
		if (!k)
			return NULL;
		p += k;
	}
	return p < end ? p : NULL;
}

/* Checks one page; returns the failures (each said on stderr) */
static unsigned int check_page(const char *text, struct page *pg, const char *what)
{
	const char *p = text;
	char cur[METRICS_NAME_MAX + 1] = "";
	bool typed = false, helped = false;
	unsigned int bad = 0;

#define BAD(...) do { bad++; fprintf(stderr, "%s: ", what); fprintf(stderr, __VA_ARGS__); \
		      fprintf(stderr, "\n"); } while (0)
	memset(pg, 0, sizeof(*pg));
	if (!*text || text[strlen(text) - 1] != '\n')
		BAD("the page does not end with a line feed");
	while (*p) {
		const char *nl = strchr(p, '\n'), *end = nl ? nl : p + strlen(p);
		size_t len = (size_t)(end - p);

		if (!strncmp(p, "# HELP ", 7) || !strncmp(p, "# TYPE ", 7)) {
			bool help = p[2] == 'H';
			const char *name = p + 7, *sp = memchr(name, ' ', (size_t)(end - name));
			size_t n = sp ? (size_t)(sp - name) : 0;

			if (!sp || !name_ok(name, n, true) || n > METRICS_NAME_MAX) {
				BAD("bad comment line: %.*s", (int)len, p);
			} else if (help) {
				/* A new family starts with its HELP, never seen before */
				for (unsigned int i = 0; i < pg->nfamilies; i++)
					if (strlen(pg->family[i]) == n &&
					    !strncmp(pg->family[i], name, n))
						BAD("family %.*s twice", (int)n, name);
				if (pg->nfamilies < FAMILIES_MAX) {
					memcpy(pg->family[pg->nfamilies], name, n);
					pg->family[pg->nfamilies][n] = 0;
					pg->nfamilies++;
				}
				memcpy(cur, name, n);
				cur[n] = 0;
				helped = true;
				typed = false;
				for (const char *c = sp + 1; c < end; c++) {
					if (*c != '\\')
						continue;
					if (c + 1 >= end || (c[1] != '\\' && c[1] != 'n'))
						BAD("HELP of %s: a stray backslash", cur);
					c++;
				}
			} else {
				const char *t = sp + 1;
				size_t tl = (size_t)(end - t);

				if (!helped || strlen(cur) != n || strncmp(cur, name, n) || typed)
					BAD("TYPE of %.*s not right after its HELP", (int)n, name);
				if (!((tl == 7 && !strncmp(t, "counter", 7)) ||
				      (tl == 5 && !strncmp(t, "gauge", 5))))
					BAD("type of %s: %.*s", cur, (int)tl, t);
				if (tl == 7 && (n < 6 || strncmp(name + n - 6, "_total", 6)))
					BAD("counter %s not named _total", cur);
				if (pg->nfamilies)
					snprintf(pg->type[pg->nfamilies - 1], sizeof(pg->type[0]),
						 "%.*s", (int)tl, t);
				typed = true;
			}
		} else if (*p == '#') {
			BAD("a comment that is neither HELP nor TYPE: %.*s", (int)len, p);
		} else {
			const char *q = p, *sp;
			char *num_end;
			size_t n;

			while (q < end && *q != '{' && *q != ' ')
				q++;
			n = (size_t)(q - p);
			if (!typed || strlen(cur) != n || strncmp(cur, p, n))
				BAD("sample outside its family (%s): %.*s", cur, (int)len, p);
			if (q < end && *q == '{') {
				bool broken = false;

				q++;
				while (q < end && *q != '}') {
					const char *eq = memchr(q, '=', (size_t)(end - q));

					if (!eq || !name_ok(q, (size_t)(eq - q), false) ||
					    !strncmp(q, "__", 2) || eq[1] != '"') {
						BAD("bad label in: %.*s", (int)len, p);
						broken = true;
						break;
					}
					const char *close = read_value(eq + 2, end);

					if (!close) {
						BAD("bad label value in: %.*s", (int)len, p);
						broken = true;
						break;
					}
					q = close + 1;
					if (q < end && *q == ',')
						q++;
				}
				if (broken) {
					q = NULL;
				} else if (q >= end) {
					BAD("unclosed labels: %.*s", (int)len, p);
					q = NULL;
				} else {
					q++;
				}
			}
			sp = q;
			if (!sp) {
				/* said above */
			} else if (sp >= end || *sp != ' ') {
				BAD("no value: %.*s", (int)len, p);
			} else {
				errno = 0;
				strtod(sp + 1, &num_end);
				if (num_end != end && strncmp(sp + 1, "NaN", 3) &&
				    strncmp(sp + 1, "+Inf", 4) && strncmp(sp + 1, "-Inf", 4))
					BAD("value is not a number: %.*s", (int)len, p);
				for (unsigned int i = 0; i < pg->nsamples; i++)
					if (strlen(pg->sample[i]) == (size_t)(sp - p) &&
					    !strncmp(pg->sample[i], p, (size_t)(sp - p)))
						BAD("sample twice: %.*s", (int)len, p);
				if (pg->nsamples < SAMPLES_MAX)
					pg->sample[pg->nsamples++] = strndup(p, (size_t)(sp - p));
			}
		}
		p = nl ? nl + 1 : end;
	}
#undef BAD
	return bad;
}

static void page_free(struct page *pg)
{
	for (unsigned int i = 0; i < pg->nsamples; i++)
		free(pg->sample[i]);
	pg->nsamples = 0;
}

/* The value of sample "name{labels}" on the page, or NaN when it is not there once */
static double value_of(const char *text, const char *sample)
{
	size_t n = strlen(sample);
	double v = NAN;
	int found = 0;

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, sample, n) && p[n] == ' ') {
			v = strtod(p + n + 1, NULL);
			found++;
		}
	return found == 1 ? v : NAN;
}

/* word occurs in s on its own (not inside a longer name) */
static bool has_word(const char *s, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = strstr(s, word); p; p = strstr(p + 1, word)) {
		bool before = p == s || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
		bool after = !(isalnum((unsigned char)p[n]) || p[n] == '_');

		if (before && after)
			return true;
	}
	return false;
}

/* ---- the tests ---- */

static void test_problem_counters(void)
{
	struct status_snapshot s;
	unsigned int invalid, lines = 0;
	char want[160], *t;

	make_snapshot(&s, MASTER);
	t = render(&s, &invalid);
	CHECK(t != NULL);
	CHECK_EQ(invalid, 0);
	CHECK(status_nproblems >= 10);
	for (size_t i = 0; t && i < status_nproblems; i++) {
		snprintf(want, sizeof(want), "\nsmd_sweep_problems{problem=\"%s\"} %zu\n",
			 status_problems[i].key, 101 + i);
		CHECK_MSG(strstr(t, want), "the page has %s", want + 1);
	}
	for (const char *p = t; p && (p = strstr(p, "\nsmd_sweep_problems{")); p++)
		lines++;
	CHECK_EQ(lines, status_nproblems);
	free(t);
	/* A failed sweep's counters mean nothing: not shown, as in the JSON */
	make_snapshot(&s, FAILED);
	t = render(&s, &invalid);
	CHECK(t && !strstr(t, "smd_sweep_problems{"));
	CHECK(t && value_of(t, "smd_sweep_failed") == 1);
	free(t);
}

static void test_format(void)
{
	for (int k = 0; k < NKINDS; k++) {
		struct status_snapshot s;
		unsigned int invalid;
		struct page pg;
		char *t;

		make_snapshot(&s, (enum kind)k);
		t = render(&s, &invalid);
		CHECK(t != NULL);
		if (!t)
			continue;
		CHECK_MSG(invalid == 0, "%s: the writer refused %u names", kind_name[k], invalid);
		CHECK_MSG(check_page(t, &pg, kind_name[k]) == 0, "%s: the page keeps the format",
			  kind_name[k]);
		CHECK(pg.nfamilies >= 10);
		/* Exactly one SM state is 1, and there is one sample per state */
		{
			double sum = 0;

			for (int i = 0; i < SM_STATES; i++) {
				char name[64];

				snprintf(name, sizeof(name), "smd_sm_state{state=\"%s\"}",
					 sm_state_name((enum sm_state)i));
				sum += value_of(t, name);
			}
			CHECK_MSG(sum == 1, "%s: one SM state is 1 (sum %g)", kind_name[k], sum);
		}
		for (unsigned int i = 0; i < pg.nfamilies; i++)
			CHECK_MSG(man && has_word(man, pg.family[i]),
				  "man/smd_exporter.8 names %s", pg.family[i]);
		page_free(&pg);
		free(t);
	}
}

/* The figures are the snapshot's; what smd does not know is not there */
static void test_values(void)
{
	struct status_snapshot s;
	unsigned int invalid;
	char *t;

	make_snapshot(&s, MASTER);
	t = render(&s, &invalid);
	CHECK(t != NULL);
	if (!t)
		return;
	CHECK(value_of(t, "smd_sm_state{state=\"MASTER\"}") == 1);
	CHECK(value_of(t, "smd_sm_state{state=\"STANDBY\"}") == 0);
	CHECK(value_of(t, "smd_build_info{version=\"1.2.3\"}") == 1);
	CHECK(value_of(t, "smd_start_time_seconds") == 1700000000);
	CHECK(value_of(t, "smd_sweeps_total{kind=\"heavy\"}") == 17);
	CHECK(value_of(t, "smd_sweeps_total{kind=\"light\"}") == 230);
	CHECK(value_of(t, "smd_sweep_duration_seconds") == 1.25);
	CHECK(value_of(t, "smd_sweep_end_time_seconds") == 1700000090);
	CHECK(value_of(t, "smd_subnet_up") == 1);
	CHECK(value_of(t, "smd_subnet_nodes") == 40);
	CHECK(value_of(t, "smd_subnet_switches") == 20);
	CHECK(value_of(t, "smd_subnet_ca_ports") == 25);
	CHECK(value_of(t, "smd_subnet_lids") == 44);
	CHECK(value_of(t, "smd_smps_total") == 123456);
	CHECK(value_of(t, "smd_smp_timeouts_total") == 321);
	CHECK(value_of(t, "smd_smps_unanswered_total") == 12);
	CHECK(value_of(t, "smd_sa_requests_total") == 1000);
	CHECK(value_of(t, "smd_sa_requests_answered_total") == 900);
	CHECK(value_of(t, "smd_sa_requests_errors_total") == 90);
	CHECK(value_of(t, "smd_sa_requests_refused_total") == 9);
	CHECK(value_of(t, "smd_sa_requests_dropped_total") == 5);
	CHECK(value_of(t, "smd_sa_requests_bad_key_total") == 6);
	CHECK(value_of(t, "smd_smps_all_total") == 234567);
	CHECK(value_of(t, "smd_sa_key_set") == 1);
	CHECK(value_of(t, "smd_traps_total") == 4444);
	CHECK(value_of(t, "smd_event_loop_longest_handler_seconds") == 0.0125);
	CHECK(value_of(t, "smd_event_loop_slow_handlers_total") == 3);
	CHECK(value_of(t, "smd_mcast_groups") == 3);
	CHECK(value_of(t, "smd_cabling_plan_loaded") == 1);
	CHECK(value_of(t, "smd_cabling_plan_error") == 0);
	CHECK(value_of(t, "smd_cabling_mismatches{kind=\"miswired\"}") == 4);
	CHECK(value_of(t, "smd_cabling_mismatches{kind=\"unexpected\"}") == 1);
	CHECK(value_of(t, "smd_cabling_mismatches{kind=\"missing\"}") == 2);
	CHECK(value_of(t, "smd_cabling_mismatches{kind=\"degraded\"}") == 3);
	CHECK(value_of(t, "smd_cabling_mismatches{kind=\"unknown_node\"}") == 5);
	CHECK(value_of(t, "smd_cabling_links_held") == 2);
	CHECK(value_of(t, "smd_cabling_links_kept") == 1);
	CHECK(value_of(t, "smd_perf_sweeps_total") == 12);
	CHECK(value_of(t, "smd_perf_sweep_duration_seconds") == 0.375);
	CHECK(value_of(t, "smd_perf_ports_unanswered") == 1);
	CHECK(value_of(t, "smd_perf_gmps_total") == 777);
	CHECK(value_of(t, "smd_perf_answers_dropped_total") == 5);
	CHECK(value_of(t, "smd_health_unhealthy_ports{rule=\"symbol_errors\"}") == 1);
	CHECK(value_of(t, "smd_health_unhealthy_ports{rule=\"link_downs\"}") == 0);
	CHECK(value_of(t, "smd_health_unhealthy_total{rule=\"degraded\"}") == 4);
	CHECK(value_of(t, "smd_health_isolated_links") == 1);
	CHECK(value_of(t, "smd_health_kept_links") == 2);
	/* Per port: running totals, data in bytes (the IBA counts 4-byte words), verdicts */
	CHECK(value_of(t, "smd_port_symbol_errors_total{node_guid=\"0x0011750000000001\","
		       "port=\"1\",node_desc=\"sw-0\"}") == 1000 + PERF_SYMBOL_ERRORS);
	CHECK(value_of(t, "smd_port_xmit_data_bytes_total{node_guid=\"0x0011750000000002\","
		       "port=\"2\",node_desc=\"sw-1\"}") == 4 * (2000 + PERF_XMIT_DATA));
	CHECK(value_of(t, "smd_port_rcv_packets_total{node_guid=\"0x0011750000000002\","
		       "port=\"2\",node_desc=\"sw-1\"}") == 2000 + PERF_RCV_PKTS);
	CHECK(value_of(t, "smd_port_healthy{node_guid=\"0x0011750000000002\",port=\"2\","
		       "node_desc=\"sw-1\"}") == 0);
	CHECK(value_of(t, "smd_port_isolated{node_guid=\"0x0011750000000002\",port=\"2\","
		       "node_desc=\"sw-1\"}") == 1);
	CHECK(value_of(t, "smd_port_isolated{node_guid=\"0x0011750000000001\",port=\"1\","
		       "node_desc=\"sw-0\"}") == 0);
	free(t);
	/* A refused plan shows; a standby that never compared has no mismatch series */
	make_snapshot(&s, FAILED);
	t = render(&s, &invalid);
	CHECK(t && value_of(t, "smd_cabling_plan_error") == 1);
	free(t);

	/* A standby does not know the master's subnet */
	make_snapshot(&s, STANDBY);
	t = render(&s, &invalid);
	CHECK(t && value_of(t, "smd_sm_state{state=\"STANDBY\"}") == 1);
	CHECK(t && !strstr(t, "smd_subnet_"));
	CHECK(t && !strstr(t, "smd_mcast_"));
	CHECK(t && value_of(t, "smd_cabling_plan_loaded") == 1);
	CHECK(t && !strstr(t, "smd_cabling_mismatches"));
	/* No counter sweep yet: no duration; no port read: no per-port family */
	CHECK(t && !strstr(t, "smd_perf_sweep_duration_seconds"));
	CHECK(t && value_of(t, "smd_perf_sweeps_total") == 0);
	CHECK(t && !strstr(t, "smd_port_"));
	free(t);
	/* Before the first sweep: no sweep figures, no subnet, no SA counters */
	make_snapshot(&s, STARTING);
	t = render(&s, &invalid);
	CHECK(t && value_of(t, "smd_sm_state{state=\"DISCOVERING\"}") == 1);
	CHECK(t && value_of(t, "smd_sweep_running") == 1);
	CHECK(t && !strstr(t, "smd_subnet_"));
	CHECK(t && !strstr(t, "smd_sweep_duration_seconds"));
	CHECK(t && !strstr(t, "smd_sa_requests_total"));
	CHECK(t && !strstr(t, "smd_cabling_"));
	free(t);
}


static void test_escaping(void)
{
	struct metrics_port_labels pl;
	struct metrics m;
	struct page pg;
	char want[256];
	const char *t;

	metrics_init(&m);
	metrics_family(&m, "smd_port_symbol_errors_total", METRICS_COUNTER, "back\\slash\nnew line");
	metrics_u64(&m, metrics_port_labels(&pl, 0x0002c90300000011ull, 7, hostile_desc),
		    METRICS_PORT_LABELS, 42);
	metrics_u64(&m, metrics_port_labels(&pl, 0xfedcba9876543210ull, 255, NULL),
		    METRICS_PORT_LABELS, 0);
	metrics_family(&m, "smd_port_healthy", METRICS_GAUGE, "x");
	metrics_double(&m, NULL, 0, NAN);
	t = metrics_text(&m);
	CHECK(t != NULL);
	CHECK_EQ(m.invalid, 0);
	if (t) {
		CHECK(strstr(t, "# HELP smd_port_symbol_errors_total back\\\\slash\\nnew line\n"));
		snprintf(want, sizeof(want), "\nsmd_port_symbol_errors_total{node_guid="
			 "\"0x0002c90300000011\",port=\"7\",node_desc=\"%s\"} 42\n", hostile_want);
		CHECK_MSG(strstr(t, want), "escaped: %s", want + 1);
		CHECK(strstr(t, "\nsmd_port_symbol_errors_total{node_guid=\"0xfedcba9876543210\","
			  "port=\"255\",node_desc=\"\"} 0\n"));
		CHECK(strstr(t, "\nsmd_port_healthy NaN\n"));
		CHECK_EQ(check_page(t, &pg, "escaping"), 0);
		page_free(&pg);
	}
	metrics_free(&m);
}

/*
 * The answer written in pieces (control.c sends the per-port families as
 * the reader takes them): whatever the piece size, the same page
 */
static void test_pieces(void)
{
	static struct status_port many[300];
	struct status_snapshot s;
	unsigned int invalid;
	char *whole;

	make_snapshot(&s, MASTER);
	for (unsigned int i = 0; i < 300; i++) {
		many[i] = ports[i % 3];
		many[i].guid += (uint64_t)i << 8;
	}
	s.ports = many;
	s.nports = 300;
	whole = render(&s, &invalid);
	CHECK(whole != NULL);
	for (size_t piece = 1; whole && piece <= 1u << 20; piece *= 16) {
		struct status_metrics_cursor c = { 0 };
		struct metrics m;
		size_t len = 0, cap = strlen(whole) + 1, pieces = 0;
		char *out = malloc(cap);
		bool done = false;
		struct page pg;

		metrics_init(&m);
		status_metrics_head(&s, &m);
		while (!done && out) {
			const char *t;

			done = status_metrics_ports(&s, &m, &c, piece);
			t = metrics_text(&m);
			if (!t || len + metrics_len(&m) >= cap)
				break;
			memcpy(out + len, t, metrics_len(&m));
			len += metrics_len(&m);
			metrics_drop_text(&m);
			pieces++;
		}
		CHECK(done);
		CHECK_EQ(m.invalid, 0);
		if (out) {
			out[len] = 0;
			CHECK_MSG(!strcmp(out, whole), "pieces of %zu bytes make the page", piece);
			CHECK_EQ(check_page(out, &pg, "pieces"), 0);
			page_free(&pg);
		}
		/* Small pieces: many of them, each a sample or more */
		if (piece == 1)
			CHECK(pieces >= 300 * 11);
		metrics_free(&m);
		free(out);
	}
	free(whole);
}

/* What would break a page is refused, counted, and leaves no trace */
static void test_refused(void)
{
	static const struct metrics_label bad1 = { "__name", "x" }, bad2 = { "a-b", "x" },
					  good = { "kind", "x" };
	struct metrics m;
	struct page pg;
	const char *t;

	metrics_init(&m);
	metrics_u64(&m, NULL, 0, 1);			/* no family yet */
	metrics_family(&m, "1bad", METRICS_GAUGE, "x");
	metrics_u64(&m, NULL, 0, 2);			/* its family was refused */
	metrics_family(&m, "smd_things", METRICS_COUNTER, "not _total");
	metrics_family(&m, "smd_ok_total", METRICS_COUNTER, "fine");
	metrics_u64(&m, &bad1, 1, 3);
	metrics_u64(&m, &bad2, 1, 4);
	metrics_u64(&m, &good, 1, 5);
	metrics_family(&m, "smd_ok_total", METRICS_COUNTER, "again");
	metrics_u64(&m, NULL, 0, 6);
	CHECK_EQ(m.invalid, 8);
	t = metrics_text(&m);
	CHECK(t && !strcmp(t, "# HELP smd_ok_total fine\n# TYPE smd_ok_total counter\n"
			      "smd_ok_total{kind=\"x\"} 5\n"));
	CHECK(t && check_page(t, &pg, "refused") == 0);
	page_free(&pg);
	metrics_free(&m);
	CHECK(metrics_name_ok("smd:rule_total"));
	CHECK(!metrics_label_name_ok("smd:rule"));
	CHECK(!metrics_name_ok(""));
}

/* The reader above is not blind: broken pages fail it */
static void test_reader(void)
{
	static const char *const broken[] = {
		"# HELP a x\n# TYPE a gauge\na 1\n# HELP a x\n# TYPE a gauge\na 2\n",
		"# HELP a x\n# TYPE a gauge\nb 1\n",
		"# HELP a_total x\n# TYPE a_total counter\na_total{k=\"1\"} 1\na_total{k=\"1\"} 2\n",
		"# HELP a x\n# TYPE a counter\na 1\n",
		"# HELP a x\n# TYPE a gauge\na{k=\"x\\q\"} 1\n",
		"# HELP a x\n# TYPE a gauge\na{k=\"x\xff\"} 1\n",
		"# HELP a x\n# TYPE a gauge\na one\n",
		"# HELP a x\na 1\n",
		"# HELP a x\n# TYPE a gauge\na 1",
	};
	struct page pg;

	for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
		CHECK_MSG(check_page(broken[i], &pg, "(a broken page, as it should be)") > 0,
			  "broken page %zu found", i);
		page_free(&pg);
	}
}

/* Every page, and one with hostile port labels, as files for promtool */
static int dump(const char *dir)
{
	struct metrics_port_labels pl;
	struct metrics m;
	char path[4096];
	FILE *f;

	for (int k = 0; k <= NKINDS; k++) {
		struct status_snapshot s;
		unsigned int invalid;
		char *t;

		if (k < NKINDS) {
			make_snapshot(&s, (enum kind)k);
			t = render(&s, &invalid);
		} else {
			metrics_init(&m);
			metrics_family(&m, "smd_port_symbol_errors_total", METRICS_COUNTER,
				       "Symbol errors");
			metrics_u64(&m, metrics_port_labels(&pl, 0x0002c90300000011ull, 7,
							    hostile_desc), METRICS_PORT_LABELS, 42);
			t = metrics_text(&m) ? strdup(metrics_text(&m)) : NULL;
			metrics_free(&m);
		}
		snprintf(path, sizeof(path), "%s/%s.prom", dir, k < NKINDS ? kind_name[k] :
			 "hostile");
		f = fopen(path, "w");
		if (!f || !t || fputs(t, f) < 0 || fclose(f)) {
			fprintf(stderr, "cannot write %s\n", path);
			free(t);
			return 1;
		}
		free(t);
	}
	return 0;
}

int main(int argc, char **argv)
{
	const char *srcdir = getenv("srcdir");
	char path[4096];

	if (argc == 3 && !strcmp(argv[1], "--dump"))
		return dump(argv[2]);
	snprintf(path, sizeof(path), "%s/man/smd_exporter.8", srcdir ? srcdir : ".");
	man = unit_read_file(path, NULL);
	CHECK_MSG(man != NULL, "cannot read %s", path);
	RUN(test_problem_counters);
	RUN(test_format);
	RUN(test_values);
	RUN(test_escaping);
	RUN(test_pieces);
	RUN(test_refused);
	RUN(test_reader);
	free(man);
	return unit_report();
}
