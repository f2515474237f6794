// SPDX-License-Identifier: MIT
/*
 * smctl capture-stats FILE...: what a capture (smd.conf "capture") holds,
 * as tables for a bug report: frames by management class, method,
 * attribute and status, in each direction; CRC errors; and, from the
 * frames alone, how smd's own requests fared: answered, timed out
 * (never answered, or given back by the transport) and retried.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mad/capture.h"
#include "ctl/smctl.h"

/* ---- names (IBA 13.4.4, 13.4.5, 14.2.5, 15.2.5) ----------------------------- */

struct name {
	unsigned int v;
	const char *s;
};

static const struct name class_names[] = {
	{ 0x01, "SM-LID" }, { 0x81, "SM-DR" }, { 0x03, "SA" }, { 0x04, "Perf" },
	{ 0x05, "BM" }, { 0x06, "DevMgt" }, { 0x07, "CM" }, { 0x08, "SNMP" },
};

static const struct name method_names[] = {
	{ 0x01, "Get" }, { 0x02, "Set" }, { 0x03, "Send" }, { 0x05, "Trap" },
	{ 0x06, "Report" }, { 0x07, "TrapRepress" }, { 0x12, "GetTable" },
	{ 0x13, "GetTraceTable" }, { 0x14, "GetMulti" }, { 0x15, "Delete" },
	{ 0x81, "GetResp" }, { 0x82, "SetResp" }, { 0x86, "ReportResp" },
	{ 0x92, "GetTableResp" }, { 0x94, "GetMultiResp" }, { 0x95, "DeleteResp" },
};

static const struct name smp_attr_names[] = {
	{ 0x0001, "ClassPortInfo" }, { 0x0002, "Notice" }, { 0x0003, "InformInfo" },
	{ 0x0010, "NodeDescription" }, { 0x0011, "NodeInfo" }, { 0x0012, "SwitchInfo" },
	{ 0x0014, "GUIDInfo" }, { 0x0015, "PortInfo" }, { 0x0016, "P_KeyTable" },
	{ 0x0017, "SLtoVLMappingTable" }, { 0x0018, "VLArbitrationTable" },
	{ 0x0019, "LinearForwardingTable" }, { 0x001a, "RandomForwardingTable" },
	{ 0x001b, "MulticastForwardingTable" }, { 0x001c, "LinkSpeedWidthPairsTable" },
	{ 0x0020, "SMInfo" }, { 0x0030, "VendorDiag" }, { 0x0031, "LedInfo" },
};

static const struct name sa_attr_names[] = {
	{ 0x0001, "ClassPortInfo" }, { 0x0002, "Notice" }, { 0x0003, "InformInfo" },
	{ 0x0011, "NodeRecord" }, { 0x0012, "PortInfoRecord" },
	{ 0x0013, "SLtoVLMappingTableRecord" }, { 0x0014, "SwitchInfoRecord" },
	{ 0x0015, "LinearForwardingTableRecord" }, { 0x0016, "RandomForwardingTableRecord" },
	{ 0x0017, "MulticastForwardingTableRecord" }, { 0x0018, "SMInfoRecord" },
	{ 0x0019, "LinkSpeedWidthPairsTableRecord" }, { 0x0020, "LinkRecord" },
	{ 0x0030, "GuidInfoRecord" }, { 0x0031, "ServiceRecord" },
	{ 0x0033, "P_KeyTableRecord" }, { 0x0035, "PathRecord" },
	{ 0x0036, "VLArbitrationTableRecord" }, { 0x0038, "MCMemberRecord" },
	{ 0x0039, "TraceRecord" }, { 0x003a, "MultiPathRecord" },
	{ 0x003b, "ServiceAssociationRecord" }, { 0x00f3, "InformInfoRecord" },
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static const char *lookup(const struct name *t, size_t n, unsigned int v, char *buf, size_t len,
			  const char *fmt)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].v == v)
			return t[i].s;
	snprintf(buf, len, fmt, v);
	return buf;
}

/* ---- a small hash map: 64-bit key -> 32-bit value ---------------------------- */

struct map {
	uint64_t *keys;
	uint32_t *vals;
	size_t cap, n;	/* cap is a power of two; key 0 is stored as UINT64_MAX + 1 = never */
};

static uint64_t mix(uint64_t k)
{
	k ^= k >> 33;
	k *= UINT64_C(0xff51afd7ed558ccd);
	k ^= k >> 33;
	return k;
}

static int map_grow(struct map *m)
{
	size_t ncap = m->cap ? m->cap * 2 : 1024;
	uint64_t *nk = calloc(ncap, sizeof(*nk));
	uint32_t *nv = calloc(ncap, sizeof(*nv));

	if (!nk || !nv) {
		free(nk);
		free(nv);
		return -1;
	}
	for (size_t i = 0; i < m->cap; i++) {
		if (!m->keys[i])
			continue;
		size_t j = mix(m->keys[i]) & (ncap - 1);

		while (nk[j])
			j = (j + 1) & (ncap - 1);
		nk[j] = m->keys[i];
		nv[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = nk;
	m->vals = nv;
	m->cap = ncap;
	return 0;
}

/* The slot for key (stored as key | 1 << 63 so that 0 means empty); NULL on ENOMEM */
static uint32_t *map_slot(struct map *m, uint64_t key, bool *found)
{
	key |= UINT64_C(1) << 63;
	if ((m->n + 1) * 2 > m->cap && map_grow(m) < 0)
		return NULL;
	size_t j = mix(key) & (m->cap - 1);

	while (m->keys[j] && m->keys[j] != key)
		j = (j + 1) & (m->cap - 1);
	*found = m->keys[j] == key;
	if (!*found) {
		m->keys[j] = key;
		m->vals[j] = 0;
		m->n++;
	}
	return &m->vals[j];
}

static void map_free(struct map *m)
{
	free(m->keys);
	free(m->vals);
}

/* ---- counting ------------------------------------------------------------------- */

struct row {
	uint64_t key;	/* class << 40 | method << 32 | attr << 16 | status */
	uint64_t sent, received;
};

struct tally {
	struct row *rows;
	size_t nrows, cap;
	uint64_t frames, sent, received, lost, not_ib, icrc_bad, vcrc_bad;
	uint64_t first_ns, last_ns;
	/* smd's requests: tries, answered, retries */
	uint64_t req_out, req_out_answered, retries;
	/* requests to smd (SA queries, SMInfo, traps) */
	uint64_t req_in, req_in_answered;
	struct map out_tid;	/* class|TID (low 32 bits) of our requests -> content index */
	struct map in_tid;	/* class|TID of requests to us -> 1 = open, 2 = answered */
	struct map content;	/* hash of a request without its TID -> unanswered tries */
	uint64_t *hashes;	/* content index -> hash */
	size_t nhashes, hcap;
	bool oom;
};

static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	return x->key < y->key ? -1 : x->key > y->key;
}

static struct row *row_get(struct tally *t, uint64_t key)
{
	struct row probe = { .key = key }, *r;

	r = t->nrows ? bsearch(&probe, t->rows, t->nrows, sizeof(*r), row_cmp) : NULL;
	if (r)
		return r;
	if (t->nrows == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		struct row *nr = realloc(t->rows, ncap * sizeof(*nr));

		if (!nr)
			return NULL;
		t->rows = nr;
		t->cap = ncap;
	}
	size_t i = t->nrows;

	while (i > 0 && t->rows[i - 1].key > key) {
		t->rows[i] = t->rows[i - 1];
		i--;
	}
	t->rows[i] = probe;
	t->nrows++;
	return &t->rows[i];
}

static bool is_response(uint8_t method)
{
	return (method & MAD_METHOD_RESP_BIT) || method == MAD_METHOD_TRAP_REPRESS;
}

/* RMPP ACK/STOP/ABORT (IBA 13.6.2.1): part of a transfer, not a request of its own */
static bool is_rmpp_control(const struct mad_summary *m)
{
	return m->mgmt_class == MAD_CLASS_SA && (m->rmpp_flags & 0x01) && m->rmpp_type != 1;
}

static uint64_t tid_key(const struct mad_summary *m)
{
	return (uint64_t)m->mgmt_class << 32 | (uint32_t)m->tid;
}

static void count_outbound_request(struct tally *t, const uint8_t *mad,
				   const struct mad_summary *m)
{
	uint64_t h = mad_hash_but_tid(mad);
	uint32_t *unanswered, *idx;
	bool found;

	t->req_out++;
	unanswered = map_slot(&t->content, h, &found);
	if (!unanswered)
		goto oom;
	if (*unanswered)
		t->retries++;	/* the same request while an earlier copy is unanswered */
	(*unanswered)++;
	idx = map_slot(&t->out_tid, tid_key(m), &found);
	if (!idx)
		goto oom;
	if (t->nhashes == t->hcap) {
		size_t ncap = t->hcap ? t->hcap * 2 : 1024;
		uint64_t *nh = realloc(t->hashes, ncap * sizeof(*nh));

		if (!nh)
			goto oom;
		t->hashes = nh;
		t->hcap = ncap;
	}
	t->hashes[t->nhashes] = h;
	*idx = (uint32_t)++t->nhashes;	/* 0: answered or unknown */
	return;
oom:
	t->oom = true;
}

static void count_inbound_response(struct tally *t, const struct mad_summary *m)
{
	uint32_t *idx, *unanswered;
	bool found;

	idx = map_slot(&t->out_tid, tid_key(m), &found);
	if (!idx) {
		t->oom = true;
		return;
	}
	if (!found || !*idx)
		return;	/* not to one of our requests, or a duplicate */
	t->req_out_answered++;
	unanswered = map_slot(&t->content, t->hashes[*idx - 1], &found);
	/* One answer settles the request, whichever try it answers */
	if (unanswered)
		*unanswered = 0;
	*idx = 0;
}

static void count_frame(struct tally *t, const struct capture_frame *f)
{
	const uint8_t *mad = f->mad;
	struct mad_summary m;
	uint64_t key;
	struct row *row;
	uint32_t *state;
	bool found;

	mad_summarize(mad, MAD_SIZE, &m);
	key = (uint64_t)m.mgmt_class << 40 | (uint64_t)m.method << 32 |
	      (uint64_t)m.attr_id << 16 | m.status;

	if (f->lost) {
		/* Our request given back undelivered: its try stays unanswered */
		t->lost++;
		return;
	}
	row = row_get(t, key);
	if (!row) {
		t->oom = true;
		return;
	}
	if (f->inbound) {
		row->received++;
		t->received++;
	} else {
		row->sent++;
		t->sent++;
	}
	if (is_rmpp_control(&m))
		return;
	if (!f->inbound && !is_response(m.method)) {
		count_outbound_request(t, mad, &m);
	} else if (f->inbound && is_response(m.method)) {
		count_inbound_response(t, &m);
	} else if (f->inbound) {
		state = map_slot(&t->in_tid, tid_key(&m), &found);
		if (!state) {
			t->oom = true;
		} else if (!found) {
			*state = 1;
			t->req_in++;
		}
	} else {
		state = map_slot(&t->in_tid, tid_key(&m), &found);
		if (state && *state == 1) {
			*state = 2;
			t->req_in_answered++;
		}
	}
}

/* 0, -1 after a part of the file (the report still counts), -2 when unreadable */
static int read_file(struct tally *t, const char *path)
{
	struct capture_reader *r;
	struct capture_frame f;
	bool ib;
	int n;

	n = capture_reader_open(path, &r);
	if (n < 0) {
		fprintf(stderr, "smctl: %s: %s\n", path, n == -EBADMSG ? "not a pcap file" :
			n == -EPROTONOSUPPORT ? "not an ERF capture (link type 197)" :
			strerror(-n));
		return -2;
	}
	while ((n = capture_reader_next(r, &f, &ib)) == 1) {
		t->frames++;
		if (!t->first_ns || f.ts_ns < t->first_ns)
			t->first_ns = f.ts_ns;
		if (f.ts_ns > t->last_ns)
			t->last_ns = f.ts_ns;
		if (!ib) {
			t->not_ib++;
			continue;
		}
		t->icrc_bad += !f.icrc_ok;
		t->vcrc_bad += !f.vcrc_ok;
		count_frame(t, &f);
	}
	capture_reader_close(r);
	if (n < 0) {
		fprintf(stderr, "smctl: %s: truncated or corrupt after %" PRIu64 " frames\n", path,
			t->frames);
		return -1;
	}
	return 0;
}

static void print_time(const char *label, uint64_t ns)
{
	time_t s = (time_t)(ns / 1000000000u);
	char buf[64];
	struct tm tm;

	localtime_r(&s, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S", &tm);
	printf("%-20s %s.%06u\n", label, buf, (unsigned int)(ns % 1000000000u / 1000u));
}

static const char *attr_name(unsigned int mclass, unsigned int attr, char *buf, size_t len)
{
	if (mclass == MAD_CLASS_SA)
		return lookup(sa_attr_names, N(sa_attr_names), attr, buf, len, "0x%04x");
	if (mclass == MAD_CLASS_SMI || mclass == MAD_CLASS_SMI_DR)
		return lookup(smp_attr_names, N(smp_attr_names), attr, buf, len, "0x%04x");
	snprintf(buf, len, "0x%04x", attr);
	return buf;
}

static void print_report(const struct tally *t)
{
	char b1[16], b2[16], b3[16];

	printf("%-20s %" PRIu64 " (%" PRIu64 " sent, %" PRIu64 " received, %" PRIu64
	       " given back by the transport, %" PRIu64 " not InfiniBand)\n", "frames:",
	       t->frames, t->sent, t->received, t->lost, t->not_ib);
	if (t->frames) {
		print_time("first:", t->first_ns);
		print_time("last:", t->last_ns);
		printf("%-20s %.6f s\n", "span:", (double)(t->last_ns - t->first_ns) / 1e9);
	}
	printf("%-20s %" PRIu64 " ICRC, %" PRIu64 " VCRC\n", "CRC errors:", t->icrc_bad,
	       t->vcrc_bad);
	printf("%-20s %" PRIu64 " sent, %" PRIu64 " answered, %" PRIu64 " timed out, %" PRIu64
	       " retries\n", "smd's requests:", t->req_out, t->req_out_answered,
	       t->req_out - t->req_out_answered, t->retries);
	printf("%-20s %" PRIu64 " received, %" PRIu64 " answered\n", "requests to smd:",
	       t->req_in, t->req_in_answered);
	printf("\n%-7s %-13s %-31s %-6s %10s %10s\n", "class", "method", "attribute", "status",
	       "sent", "received");
	for (size_t i = 0; i < t->nrows; i++) {
		const struct row *r = &t->rows[i];
		unsigned int mclass = (unsigned int)(r->key >> 40) & 0xff;
		unsigned int method = (unsigned int)(r->key >> 32) & 0xff;
		unsigned int attr = (unsigned int)(r->key >> 16) & 0xffff;
		unsigned int status = (unsigned int)r->key & 0xffff;

		printf("%-7s %-13s %-31s 0x%04x %10" PRIu64 " %10" PRIu64 "\n",
		       lookup(class_names, N(class_names), mclass, b1, sizeof(b1), "0x%02x"),
		       lookup(method_names, N(method_names), method, b2, sizeof(b2), "0x%02x"),
		       attr_name(mclass, attr, b3, sizeof(b3)), status, r->sent, r->received);
	}
}

int smctl_capture_stats(struct smctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char use[] = "FILE...";
	struct tally t = { 0 };
	int c, r, rc = 0, opened = 0;

	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'h': printf("Usage: smctl %s %s\n", argv[0], use); return 0;
		default: fprintf(stderr, "Usage: smctl %s %s\n", argv[0], use); return 2;
		}
	}
	if (optind == argc) {
		fprintf(stderr, "Usage: smctl %s %s\n", argv[0], use);
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		r = read_file(&t, argv[i]);
		if (r < 0)
			rc = 1;
		if (r == -2)
			continue;
		printf("%-20s %s\n", "capture:", argv[i]);
		opened++;
	}
	if (t.oom) {
		fprintf(stderr, "smctl: out of memory\n");
		rc = 1;
	}
	if (opened)
		print_report(&t);
	free(t.rows);
	free(t.hashes);
	map_free(&t.out_tid);
	map_free(&t.in_tid);
	map_free(&t.content);
	return rc;
}
