// SPDX-License-Identifier: MIT
/*
 * The status snapshot's two renderers (smd/status.h), on snapshots made
 * here: every problem counter of the sweep, each with its own non-zero
 * value, shows in the text ("N words") and in the JSON ("key":N), and
 * man/smctl.8 names each counter's key; every key the JSON answer can hold
 * (all optional parts present, as a master and as a standby) is named in
 * man/smctl.8 too, so that the page cannot drift from the answer again.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smd/status.h"
#include "tests/unit/unit.h"
#include "util/ctl_proto.h"
#include "util/json.h"

static char text[65536];
static size_t text_len;

static void __attribute__((format(printf, 2, 3))) emit(void *ctx, const char *fmt, ...)
{
	va_list ap;
	int n;

	(void)ctx;
	va_start(ap, fmt);
	n = vsnprintf(text + text_len, sizeof(text) - text_len, fmt, ap);
	va_end(ap);
	if (n > 0 && text_len + (size_t)n < sizeof(text))
		text_len += (size_t)n;
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

static struct sweep_result sweep;
static char *man;		/* man/smctl.8 */
static struct status_mkey_port unknown[2] = {
	{ 0x0002c90300000011, "host-0001 port 1", false, 30 },
	{ 0x0002c90300000012, "host-0002 port 1", true, 0 },
};
static const struct status_foreign_sm foreign[1] = { { 0x0002c90300000099, 3, "MASTER" } };

/* A master's snapshot with every optional part present, every counter distinct */
static void make_snapshot(struct status_snapshot *s, bool standby)
{
	memset(&sweep, 0, sizeof(sweep));
	sweep.nodes = 40;
	sweep.switches = 20;
	sweep.cas = 20;
	sweep.endports = 40;
	sweep.links = 60;
	sweep.lids = 40;
	sweep.up = false;
	sweep.seconds = 1.5;
	sweep.smps = 5000;
	snprintf(sweep.engine, sizeof(sweep.engine), "dfree");
	for (size_t i = 0; i < status_nproblems; i++) {
		char *f = (char *)&sweep + status_problems[i].off;

		if (status_problems[i].wide)
			*(uint64_t *)(void *)f = 101 + i;
		else
			*(unsigned int *)(void *)f = (unsigned int)(101 + i);
	}
	sweep.ndups = 1;
	sweep.dups[0].guid = 0x0002c90300000042;

	memset(s, 0, sizeof(*s));
	s->status = CONTROL_STATUS_DOWN;
	s->version = "test";
	s->pid = 42;
	s->started = 1000;
	s->now = 2000;
	s->state = standby ? "STANDBY" : "MASTER";
	s->sm_guid = 0x0002c90300000001;
	s->sm_priority = 5;
	s->sm_lid = 1;
	s->sweeping = true;
	s->progress.kind = "heavy";
	s->progress.phase = "lfts";
	s->progress.phase_no = 9;
	s->progress.phases = 15;
	s->loop_longest_what = "MAD poll";
	s->standby = standby;
	s->master_guid = 0x0002c90300000099;
	s->subnet = standby ? STATUS_SUBNET_MASTERS : STATUS_SUBNET_KNOWN;
	s->model = &sweep;
	s->partition_file = "/etc/smd/partitions.conf";
	s->sm_key = true;
	s->foreign = foreign;
	s->nforeign = 1;
	s->mkey.set = true;
	s->mkey.tracking = true;
	s->mkey.last = "Bad M_Key from LID 7";
	s->mkey.unknown = unknown;
	s->mkey.nunknown = 2;
	s->has_sa = true;
	s->has_mcast = true;
	s->has_forest = true;
	s->has_light = true;
	s->last = &sweep;
	s->last_result = "NOT up";
	s->has_traps = true;
	s->has_window = true;
	s->window.size = 16;
	s->window.min = 4;
	s->window.max = 32;
	s->window.shrinks = 2;
	s->nflooders = 1;
	s->flooders[0].lid = 7;
	s->flooders[0].node = "host-0007";
	s->resweep_pending = "no";
	s->problems = 2;
	s->problem_list[0] = "port 3 of leaf-0 not ACTIVE";
	s->nproblem_list = 1;
	s->cabling = (struct status_cabling){
		.configured = true, .file = "/etc/smd/plan.ibnd", .error = "plan.ibnd:3: bad",
		.nodes = 36, .cables = 48, .enforce = true, .compared = true, .sweep = 7,
		.count = { 4, 1, 2, 1, 1 }, .total = 9, .held = 2, .kept = 1,
	};
	s->health = (struct status_health){
		.perf_enabled = true, .perf_interval = 10, .perf_sweeps = 3, .perf_last_seconds = 0.5,
		.perf_last_end = 1990, .perf_last_ports = 80, .perf_last_read = 79,
		.perf_last_unanswered = 1, .action = "isolate", .window = 600, .unhealthy = 2,
		.broken = { 1, 1, 0, 0 }, .became = { 1, 1, 0, 0 }, .isolated = 1, .kept = 1,
	};
}

static char *render_json(const struct status_snapshot *s)
{
	struct json j;
	const char *t;
	char *out;

	json_init(&j);
	status_json(s, &j);
	t = json_text(&j);
	out = t ? strdup(t) : NULL;
	json_free(&j);
	return out;
}

static void test_problem_counters(void)
{
	struct status_snapshot s;
	char *js, want[160];

	make_snapshot(&s, false);
	text_len = 0;
	status_text(&s, emit, NULL);
	js = render_json(&s);
	CHECK(js != NULL);
	CHECK(status_nproblems >= 10);
	for (size_t i = 0; js && i < status_nproblems; i++) {
		const struct status_problem *p = &status_problems[i];

		snprintf(want, sizeof(want), "%zu %s", 101 + i, p->many);
		CHECK_MSG(strstr(text, want), "text shows \"%s\"", want);
		snprintf(want, sizeof(want), "\"%s\":%zu", p->key, 101 + i);
		CHECK_MSG(strstr(js, want), "JSON has %s", want);
		CHECK_MSG(has_word(man, p->key), "man/smctl.8 names %s", p->key);
	}
	/* One of each: the singular */
	for (size_t i = 0; i < status_nproblems; i++) {
		char *f = (char *)&sweep + status_problems[i].off;

		if (status_problems[i].wide)
			*(uint64_t *)(void *)f = 1;
		else
			*(unsigned int *)(void *)f = 1;
	}
	text_len = 0;
	status_text(&s, emit, NULL);
	for (size_t i = 0; i < status_nproblems; i++) {
		snprintf(want, sizeof(want), "1 %s", status_problems[i].one);
		CHECK_MSG(strstr(text, want), "text shows \"%s\"", want);
	}
	CHECK(strstr(text, "\nstatus: down\n") != NULL);
	free(js);
}

/* Every "key": of a JSON text (keys are lower case names here) */
static void check_keys(const char *js)
{
	for (const char *p = strchr(js, '"'); p; p = strchr(p + 1, '"')) {
		const char *q = p + 1;
		char key[64];
		size_t n;

		while (*q == '_' || islower((unsigned char)*q) || isdigit((unsigned char)*q))
			q++;
		n = (size_t)(q - p - 1);
		if (q[0] != '"' || q[1] != ':' || !n || n >= sizeof(key) ||
		    (p[-1] != '{' && p[-1] != ','))
			continue;
		memcpy(key, p + 1, n);
		key[n] = 0;
		CHECK_MSG(has_word(man, key), "man/smctl.8 documents status JSON key %s", key);
		p = q;
	}
}

static void test_json_keys(void)
{
	struct status_snapshot s;
	char *js;

	make_snapshot(&s, false);
	js = render_json(&s);
	CHECK(js && !strncmp(js, "{\"status\":\"down\"", 16));
	if (js)
		check_keys(js);
	free(js);
	make_snapshot(&s, true);
	js = render_json(&s);
	CHECK(js && strstr(js, "\"master\":{"));
	if (js)
		check_keys(js);
	free(js);
}

/* The text shows what the JSON shows, by the same snapshot */
static void test_same_figures(void)
{
	struct status_snapshot s;
	char *js;

	make_snapshot(&s, false);
	s.sa_received = 1234567;
	s.sa_dropped = 7654321;
	s.sa_bad_keys = 3141592;
	s.traps = 4444;
	text_len = 0;
	status_text(&s, emit, NULL);
	js = render_json(&s);
	CHECK(strstr(text, "sa_requests: 1234567 received") != NULL);
	CHECK(strstr(text, "7654321 dropped") != NULL);
	CHECK(strstr(text, "traps: 4444\n") != NULL);
	CHECK(js && strstr(js, "\"received\":1234567"));
	CHECK(js && strstr(js, "\"dropped\":7654321"));
	CHECK(strstr(text, "3141592 with an SM_Key not trusted") != NULL);
	CHECK(js && strstr(js, "\"bad_keys\":3141592"));
	CHECK(js && strstr(js, "\"traps\":4444"));
	free(js);
}

/* The cabling plan's figures: text, JSON and STATUS= from one snapshot */
static void test_cabling(void)
{
	struct status_snapshot s;
	char *js, sum[1024];

	make_snapshot(&s, false);
	s.sweeping = false;
	text_len = 0;
	status_text(&s, emit, NULL);
	js = render_json(&s);
	status_summary(&s, sum, sizeof(sum));
	CHECK_MSG(strstr(text, "\ncabling: plan /etc/smd/plan.ibnd (36 nodes, 48 cables), enforce "
			 "yes; sweep 7: 9 mismatches (4 miswired, 1 unexpected, 2 missing, 1 "
			 "degraded, 1 unknown_node), 2 links held at INIT, 1 left up to keep the "
			 "fabric connected\n"), "%s", text);
	CHECK(strstr(text, "\ncabling_error: plan.ibnd:3: bad\n") != NULL);
	CHECK(js && strstr(js, "\"cabling\":{\"file\":\"/etc/smd/plan.ibnd\",\"error\":"
			  "\"plan.ibnd:3: bad\",\"nodes\":36,\"cables\":48,\"enforce\":true,"
			  "\"compared\":true,\"sweep\":7,\"total\":9,\"counts\":{\"miswired\":4,"
			  "\"unexpected\":1,\"missing\":2,\"degraded\":1,\"unknown_node\":1},"
			  "\"links_held\":2,\"links_kept\":1}"));
	CHECK_MSG(strstr(sum, "; cabling: 9 mismatches") != NULL, "%s", sum);
	free(js);
	/* One mismatch: the singular */
	s.cabling.total = 1;
	status_summary(&s, sum, sizeof(sum));
	CHECK_MSG(strstr(sum, "; cabling: 1 mismatch") && !strstr(sum, "mismatches"), "%s", sum);
	/* No plan: said so, null in JSON, nothing in STATUS= */
	memset(&s.cabling, 0, sizeof(s.cabling));
	text_len = 0;
	status_text(&s, emit, NULL);
	js = render_json(&s);
	status_summary(&s, sum, sizeof(sum));
	CHECK(strstr(text, "\ncabling: no plan\n") != NULL);
	CHECK(js && strstr(js, "\"cabling\":null"));
	CHECK(!strstr(sum, "cabling"));
	free(js);
}

/* Routing beside the P_Key phase: both named, in the text, JSON and STATUS= */
static void test_beside(void)
{
	struct status_snapshot s;
	char *js, sum[1024];

	make_snapshot(&s, false);
	s.progress.phase = "pkeys";
	s.progress.beside = "route";
	text_len = 0;
	status_text(&s, emit, NULL);
	js = render_json(&s);
	status_summary(&s, sum, sizeof(sum));
	CHECK_MSG(strstr(text, "\nsweep_running: heavy, phase 9 of 15 (pkeys, route computing "
			 "beside it), ") != NULL, "%s", text);
	CHECK(js && strstr(js, "\"phase\":\"pkeys\"") &&
	      strstr(js, "\"computing\":false,\"beside\":\"route\""));
	CHECK_MSG(strstr(sum, "heavy sweep: pkeys (9/15, route computing beside it), ") != NULL,
		  "%s", sum);
	free(js);
	/* Nothing beside: null, and no words for it */
	s.progress.phase = "route";
	s.progress.beside = NULL;
	s.progress.computing = true;
	text_len = 0;
	status_text(&s, emit, NULL);
	js = render_json(&s);
	status_summary(&s, sum, sizeof(sum));
	CHECK_MSG(strstr(text, "\nsweep_running: heavy, phase 9 of 15 (route, computing), ") !=
		  NULL, "%s", text);
	CHECK(js && strstr(js, "\"computing\":true,\"beside\":null"));
	CHECK_MSG(strstr(sum, "heavy sweep: route (9/15, computing), ") != NULL, "%s", sum);
	free(js);
}

int main(void)
{
	const char *srcdir = getenv("srcdir");
	char path[4096];

	snprintf(path, sizeof(path), "%s/man/smctl.8", srcdir ? srcdir : ".");
	man = unit_read_file(path, NULL);
	if (!man) {
		fprintf(stderr, "cannot read %s\n", path);
		return 1;
	}
	RUN(test_problem_counters);
	RUN(test_json_keys);
	RUN(test_same_figures);
	RUN(test_cabling);
	RUN(test_beside);
	free(man);
	return unit_report();
}
