// SPDX-License-Identifier: MIT
/*
 * smctl sa ...: an SA client that reassembles RMPP itself (ACKing every
 * segment), so that multi-record answers work with or without kernel
 * RMPP (the simulator has none). Also a PathRecord load generator.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>

#include "mad/port.h"
#include "mad/sa_codec.h"
#include "mad/wire.h"
#include "mad/txn.h"
#include "util/json.h"
#include "ctl/smctl.h"
#include "util/macros.h"

#define SA_TIMEOUT_MS	4000
#define SA_TRIES	3
#define RMPP_RECV_WINDOW 16

struct client {
	struct mad_port *port;
	uint16_t sm_lid;
	uint32_t tid;
	uint64_t answers, timeouts;
	uint64_t sm_key;	/* carried in every request: the SA trusts its own key */
};

struct answer {
	uint16_t status;
	uint16_t attr_offset;
	uint8_t *data;		/* records, padded to attr_offset * 8 each */
	size_t len;
};

static int client_open(struct client *c, const char *port)
{
	int r = mad_port_open_mode(port, MAD_PORT_SA_CLIENT, &c->port);

	if (r < 0) {
		fprintf(stderr, "smctl: cannot open InfiniBand port: %s\n", strerror(-r));
		return r;
	}
	c->sm_lid = mad_port_attr(c->port)->sm_lid;
	if (!c->sm_lid) {
		fprintf(stderr, "smctl: the port knows no SM LID: is the subnet up?\n");
		return -EHOSTUNREACH;
	}
	c->tid = (uint32_t)txn_now_us();
	return 0;
}

static int send_mad(struct client *c, const struct sa_mad *m)
{
	uint8_t buf[MAD_SIZE];
	struct sa_mad k = *m;

	k.sm_key = c->sm_key;
	sa_mad_encode(&k, buf);
	return mad_port_send(c->port, MAD_AGENT_SA, buf, c->sm_lid, 1, SA_TIMEOUT_MS);
}

static void send_ack(struct client *c, const struct sa_mad *seg, uint32_t segnum)
{
	struct sa_mad ack = *seg;

	/* IBA 13.6.3.2: the ACK echoes the header with the response bit cleared */
	ack.hdr.method &= (uint8_t)~MAD_METHOD_RESP_BIT;
	ack.rmpp.type = RMPP_TYPE_ACK;
	ack.rmpp.flags = RMPP_FLAG_ACTIVE;
	ack.rmpp.data1 = segnum;
	ack.rmpp.data2 = segnum + RMPP_RECV_WINDOW;
	memset(ack.data, 0, sizeof(ack.data));
	send_mad(c, &ack);
}

/* The next SA MAD waiting: 0, -EAGAIN when none (failed sends and others skipped) */
static int recv_sa(struct client *c, struct sa_mad *m)
{
	for (;;) {
		uint8_t buf[MAD_SIZE];
		struct mad_addr from;
		size_t len;
		int st, r;

		r = mad_port_recv(c->port, buf, &len, &from, &st);
		if (r < 0)
			return r;
		if (!st && sa_mad_decode(buf, len, m) == 0)
			return 0;
	}
}

/* Wait for the MAD with our TID; -ETIMEDOUT after timeout_ms */
static int recv_mine(struct client *c, uint32_t tid, struct sa_mad *m, int timeout_ms)
{
	uint64_t end = txn_now_us() + (uint64_t)timeout_ms * 1000;
	struct pollfd pfd = { .fd = mad_port_fd(c->port), .events = POLLIN };

	for (;;) {
		uint64_t now = txn_now_us();
		int r = recv_sa(c, m);

		if (r == 0) {
			if ((uint32_t)m->hdr.tid != tid || !(m->hdr.method & MAD_METHOD_RESP_BIT))
				continue;
			return 0;
		}
		if (r != -EAGAIN)
			return r;
		if (now >= end)
			return -ETIMEDOUT;
		poll(&pfd, 1, (int)((end - now) / 1000) + 1);
	}
}

/* One query, answered by one MAD or an RMPP transfer we reassemble */
static int query(struct client *c, uint8_t method, uint16_t attr, uint64_t mask,
		 const uint8_t *rec, size_t rec_len, struct answer *ans)
{
	struct sa_mad req, m;
	uint32_t expect = 1;
	size_t cap = 0;
	int r = -ETIMEDOUT;

	memset(ans, 0, sizeof(*ans));
	sa_mad_init(&req, method, attr, mask, 0);
	if (rec)
		memcpy(req.data, rec, rec_len);
	for (int attempt = 0; attempt < SA_TRIES && r == -ETIMEDOUT; attempt++) {
		req.hdr.tid = ++c->tid;
		send_mad(c, &req);
		expect = 1;
		ans->len = 0;
		for (;;) {
			r = recv_mine(c, (uint32_t)req.hdr.tid, &m, SA_TIMEOUT_MS);
			if (r < 0)
				break;
			ans->status = m.hdr.status;
			ans->attr_offset = m.attr_offset;
			if (!(m.rmpp.flags & RMPP_FLAG_ACTIVE)) {
				/* A single MAD: the records are in its data */
				size_t n = m.attr_offset ? SA_DATA_SIZE / (m.attr_offset * 8u) : 0;

				ans->len = n ? (m.hdr.status ? 0 : m.attr_offset * 8u) : 0;
				ans->data = malloc(SA_DATA_SIZE);
				if (!ans->data)
					return -ENOMEM;
				memcpy(ans->data, m.data, SA_DATA_SIZE);
				break;
			}
			if (m.rmpp.type != RMPP_TYPE_DATA || m.rmpp.data1 != expect) {
				/* Out of order: ask for what we miss (IBA 13.6.3.2) */
				if (expect > 1)
					send_ack(c, &m, expect - 1);
				continue;
			}
			if (cap < ans->len + SA_DATA_SIZE) {
				uint8_t *nd;

				cap = cap ? cap * 2 : 16 * SA_DATA_SIZE;
				nd = realloc(ans->data, cap);
				if (!nd)
					return -ENOMEM;
				ans->data = nd;
			}
			memcpy(ans->data + ans->len, m.data, SA_DATA_SIZE);
			ans->len += SA_DATA_SIZE;
			send_ack(c, &m, expect);
			if (m.rmpp.flags & RMPP_FLAG_LAST) {
				/* PayloadLength of the last segment: what it really carries */
				uint32_t last = m.rmpp.data2 >= 20 ? m.rmpp.data2 - 20 : 0;

				if (last <= SA_DATA_SIZE)
					ans->len -= SA_DATA_SIZE - last;
				break;
			}
			expect++;
		}
	}
	if (r < 0)
		c->timeouts++;
	else
		c->answers++;
	return r;
}

static size_t nrecords(const struct answer *a)
{
	return a->attr_offset ? a->len / (a->attr_offset * 8u) : 0;
}

static const uint8_t *record(const struct answer *a, size_t i)
{
	return a->data + i * a->attr_offset * 8u;
}

static void gid_str(const uint8_t g[16], char *out, size_t len)
{
	inet_ntop(AF_INET6, g, out, (socklen_t)len);
}

static void print_path(const uint8_t *rec)
{
	struct path_record pr;
	char s[64], d[64];

	path_record_decode(rec, &pr);
	gid_str(pr.sgid, s, sizeof(s));
	gid_str(pr.dgid, d, sizeof(d));
	printf("%-5u %-5u %-26s %-26s sl %u mtu %u rate %u plt %u pkey 0x%04x rev %u pref %u",
	       pr.slid, pr.dlid, s, d, pr.sl, pr.mtu, pr.rate, pr.packet_life_time, pr.pkey,
	       pr.reversible, pr.preference);
	if (pr.service_id)
		printf(" sid 0x%016" PRIx64, pr.service_id);
	if (pr.tclass || pr.flow_label || pr.hop_limit || pr.qos_class)
		printf(" tclass 0x%02x flow 0x%05x hop %u qos 0x%03x", pr.tclass, pr.flow_label,
		       pr.hop_limit, pr.qos_class);
	printf("\n");
}

static void print_node(const uint8_t *rec)
{
	uint8_t ni_buf[SMP_DATA_SIZE] = { 0 };
	struct node_info ni;
	struct node_desc nd;

	memcpy(ni_buf, rec + 4, 40);
	node_info_decode(ni_buf, &ni);
	node_desc_decode(rec + 44, &nd);
	printf("%-5" PRIu64 " %-6s 0x%016" PRIx64 " 0x%016" PRIx64 " %3u ports, port %u \"%s\"\n",
	       sa_record_field(SA_ATTR_NODE_RECORD, rec, 0),
	       ni.node_type == NODE_TYPE_SWITCH ? "switch" : ni.node_type == NODE_TYPE_CA ? "ca" :
	       "router", ni.node_guid, ni.port_guid, ni.num_ports, ni.local_port, nd.desc);
}

/*
 * A record's first 12 fields on one line: up to 32 bits in decimal, 64-bit
 * ones (GUIDs, keys, SL-to-VL maps) in hex, and the wide tables byte by
 * byte: an LFT block as the egress port of each of its 64 LIDs ("-" for
 * 255, no port), others (GUIDInfo blocks, VL arbitration) as 64-bit words
 */
static void print_generic(uint16_t attr, const uint8_t *rec, size_t size)
{
	unsigned int n = sa_record_nfields(attr);

	for (unsigned int i = 0; i < n && i < 12; i++) {
		const char *sep = i ? " " : "", *name;
		unsigned int off, w;

		if (sa_record_field_info(attr, i, &name, &off, &w) < 0)
			continue;
		if (w <= 32) {
			printf("%s%" PRIu64, sep, sa_record_field(attr, rec, i));
		} else if (w == 64) {
			printf("%s0x%016" PRIx64, sep, sa_record_field(attr, rec, i));
		} else if (off % 8 || w % 64 || (off + w) / 8 > size) {
			printf("%s?", sep);	/* no table has such a field */
		} else if (attr == SA_ATTR_LFT_RECORD) {
			for (unsigned int b = 0; b < w / 8; b++) {
				uint8_t port = rec[off / 8 + b];

				if (port == 0xff)
					printf("%s-", b ? " " : sep);
				else
					printf("%s%u", b ? " " : sep, port);
			}
		} else {
			for (unsigned int b = 0; b < w / 8; b++)
				printf("%s%02x", b % 8 ? "" : b ? " 0x" : i ? " 0x" : "0x",
				       rec[off / 8 + b]);
		}
	}
	printf("\n");
}

static const char *join_state_text(uint8_t js, char *buf, size_t len)
{
	static const char *const names[] = { "full", "non", "sendonly-non", "sendonly-full" };
	size_t o = 0;

	buf[0] = 0;
	for (unsigned int i = 0; i < 4; i++)
		if (js & (1u << i))
			o += (size_t)snprintf(buf + o, len > o ? len - o : 0, "%s%s", o ? "," : "",
					      names[i]);
	if (!o)
		snprintf(buf, len, "-");
	return buf;
}

/* Groups with their members: records of one group come one after the other */
static void print_mcast(const struct answer *a)
{
	uint8_t prev[16] = { 0 };
	size_t groups = 0;

	for (size_t i = 0; i < nrecords(a); i++) {
		struct mc_member_record r;
		char g[64], js[64];
		uint64_t prefix, guid;

		mc_member_record_decode(record(a, i), &r);
		if (!i || memcmp(prev, r.mgid, 16)) {
			gid_str(r.mgid, g, sizeof(g));
			printf("%s%-38s MLID 0x%04x Q_Key 0x%08x P_Key 0x%04x MTU %u rate %u "
			       "SL %u scope %u\n", groups ? "\n" : "", g, r.mlid, r.qkey, r.pkey,
			       mtu_to_bytes(r.mtu), iba_rate_to_dgbps(r.rate) / 10, r.sl, r.scope);
			memcpy(prev, r.mgid, 16);
			groups++;
		}
		gid_decode(r.port_gid, &prefix, &guid);
		if (!guid) {
			printf("    (no members)\n");
			continue;
		}
		gid_str(r.port_gid, g, sizeof(g));
		printf("    %-38s %s%s\n", g, join_state_text(r.join_state, js, sizeof(js)),
		       r.proxy_join ? " (proxy)" : "");
	}
	printf("%zu groups, %zu records\n", groups, nrecords(a));
}

static void print_service(const uint8_t *rec, bool lost)
{
	struct service_record r;
	char g[64], name[65];
	size_t i;

	service_record_decode(rec, &r);
	gid_str(r.gid, g, sizeof(g));
	for (i = 0; i < 64 && r.name[i]; i++)
		name[i] = r.name[i] >= 0x20 && r.name[i] < 0x7f ? (char)r.name[i] : '?';
	name[i] = 0;
	printf("0x%016" PRIx64 " %-26s P_Key 0x%04x ", r.id, g, r.pkey);
	if (r.lease == SR_LEASE_INFINITE)
		printf("lease none   ");
	else
		printf("lease %-6u ", r.lease);
	printf("\"%s\"%s\n", name, lost ? " (bytes lost in transit)" : "");
}

static void print_inform(const uint8_t *rec)
{
	struct inform_info ii;
	char g[64];

	inform_info_decode(rec + 24, &ii);
	gid_str(rec, g, sizeof(g));
	printf("%-26s enum %-4" PRIu64 " trap ", g, sa_record_field(SA_ATTR_INFORM_INFO_RECORD,
								  rec, 1));
	if (ii.trap_num == 0xffff)
		printf("any ");
	else
		printf("%-3u ", ii.trap_num);
	if (ii.type == 0xffff)
		printf("type any ");
	else
		printf("type %u ", ii.type);
	if (ii.producer == 0xffffff)
		printf("producer any ");
	else
		printf("producer %u ", ii.producer);
	printf("QPN %u%s\n", ii.qpn, ii.generic ? "" : " (vendor)");
}

/* P_KeyTableRecord (IBA 15.2.5.11): LID, port, block and the keys it holds */
static void print_pkeys(const uint8_t *rec)
{
	unsigned int blk = (unsigned int)sa_record_field(SA_ATTR_PKEY_RECORD, rec, 1);
	uint16_t keys[32];
	bool any = false;

	printf("%-5" PRIu64 " %-4" PRIu64 " %-5u", sa_record_field(SA_ATTR_PKEY_RECORD, rec, 0),
	       sa_record_field(SA_ATTR_PKEY_RECORD, rec, 2), blk);
	/* The block follows LID, block number and port (IBA 15.2.5.11): 8 bytes */
	pkey_block_decode(rec + 8, keys);
	for (unsigned int i = 0; i < 32; i++) {
		unsigned int k = keys[i];

		if (!(k & 0x7fff))
			continue;
		printf(" %u:0x%04x(%s)", blk * 32 + i, k, k & 0x8000 ? "full" : "limited");
		any = true;
	}
	printf("%s\n", any ? "" : " (empty)");
}

static void print_mft(const uint8_t *rec)
{
	uint16_t lid, blk, masks[32];
	uint8_t pos;

	sa_mft_record_decode(rec, &lid, &pos, &blk, masks);
	for (unsigned int k = 0; k < 32; k++) {
		unsigned int mask = masks[k];

		if (!mask)
			continue;
		printf("%-5u 0x%04x ports", lid, LID_MCAST_MIN + blk * 32u + k);
		for (unsigned int b = 0; b < 16; b++)
			if (mask & (1u << b))
				printf(" %u", pos * 16 + b);
		printf("\n");
	}
}

/*
 * A record as a JSON object, field by field from mad/'s table: numbers up
 * to 32 bits, 64-bit fields (GUIDs, keys) and wider ones as hex strings,
 * GIDs as IPv6 text, NodeDescription as text; reserved fields left out
 */
static void json_record(struct json *j, uint16_t attr, const uint8_t *rec, size_t size)
{
	unsigned int n = sa_record_nfields(attr);

	json_obj_begin(j, NULL);
	for (unsigned int i = 0; i < n; i++) {
		const char *name;
		unsigned int off, w;
		char key[16], buf[160];

		if (sa_record_field_info(attr, i, &name, &off, &w) < 0)
			continue;
		if (!name) {
			snprintf(key, sizeof(key), "field%u", i);
			name = key;
		}
		if (!strncmp(name, "reserved", 8))
			continue;
		if (w <= 32) {
			json_u64(j, name, sa_record_field(attr, rec, i));
		} else if (w == 64) {
			json_hex64(j, name, sa_record_field(attr, rec, i));
		} else if (off % 8 || (off + w) / 8 > size) {
			continue;	/* not a whole number of bytes: no table has one */
		} else if (w == 128) {
			gid_str(rec + off / 8, buf, sizeof(buf));
			json_str(j, name, buf);
		} else if (!strcmp(name, "node_description")) {
			snprintf(buf, sizeof(buf), "%.*s", (int)(w / 8), (const char *)rec + off / 8);
			json_str(j, name, buf);
		} else {
			char *hex = malloc(w / 4 + 1);

			if (!hex)
				continue;
			for (unsigned int b = 0; b < w / 8; b++)
				snprintf(hex + 2 * b, 3, "%02x", rec[off / 8 + b]);
			json_str(j, name, hex);
			free(hex);
		}
	}
	json_obj_end(j);
}

/* The answer as one JSON object; 0, or 1 when it could not be built */
static int json_answer(const char *kind, uint16_t attr, const struct answer *a, bool count)
{
	struct json j;
	const char *t;

	json_init(&j);
	json_obj_begin(&j, NULL);
	json_str(&j, "status", "ok");
	json_str(&j, "kind", kind);
	json_strf(&j, "attribute", "0x%04x", attr);
	json_u64(&j, "count", nrecords(a));
	if (!count) {
		json_arr_begin(&j, "records");
		for (size_t i = 0; i < nrecords(a); i++)
			json_record(&j, attr, record(a, i), a->attr_offset * 8u);
		json_arr_end(&j);
	}
	json_obj_end(&j);
	t = json_text(&j);
	if (t)
		printf("%s\n", t);
	else
		fprintf(stderr, "smctl: out of memory\n");
	json_free(&j);
	return t ? 0 : 1;
}

static void json_sa_error(const char *why)
{
	struct json j;
	const char *t;

	json_init(&j);
	json_obj_begin(&j, NULL);
	json_str(&j, "status", "error");
	json_str(&j, "error", why);
	json_obj_end(&j);
	t = json_text(&j);
	if (t)
		printf("%s\n", t);
	json_free(&j);
}

static const struct {
	const char *name;
	uint16_t attr;
	const char *header;
} kinds[] = {
	{ "nodes", SA_ATTR_NODE_RECORD, "LID   type   NodeGUID           PortGUID" },
	{ "ports", SA_ATTR_PORT_INFO_RECORD, "EndportLID PortNum Options MKey GIDPrefix LID SMLID ..." },
	{ "switches", SA_ATTR_SWITCH_INFO_RECORD, "LID reserved LFTCap RFTCap MFTCap LFTTop ..." },
	{ "links", SA_ATTR_LINK_RECORD, "FromLID FromPort ToPort ToLID" },
	{ "lft", SA_ATTR_LFT_RECORD,
	  "LID Block reserved, then the port of each of the block's 64 LIDs (- none)" },
	{ "sminfo", SA_ATTR_SM_INFO_RECORD, "LID reserved GUID SMKey ActCount Priority State" },
	{ "pkeys", SA_ATTR_PKEY_RECORD, "LID   Port Block index:P_Key(membership)..." },
	{ "guids", SA_ATTR_GUID_INFO_RECORD, "LID Block reserved reserved GUID0 ... GUID7" },
	{ "sl2vl", SA_ATTR_SL2VL_RECORD, "LID InPort OutPort reserved" },
	{ "vlarb", SA_ATTR_VLARB_RECORD, "LID OutPort Block reserved" },
	{ "path", SA_ATTR_PATH_RECORD, "SLID  DLID  SGID                       DGID" },
	{ "mcast", SA_ATTR_MCMEMBER_RECORD, "MGID (group), then its members: port GID, JoinState" },
	{ "mft", SA_ATTR_MFT_RECORD, "LID   MLID   ports (switch port numbers)" },
	{ "services", SA_ATTR_SERVICE_RECORD, "ServiceID          ServiceGID                 ..." },
	{ "informs", SA_ATTR_INFORM_INFO_RECORD,
	  "SubscriberGID (own subscriptions; all with --sm-key)" },
};

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: smctl sa KIND [--port SPEC] [--lid LID] [--get] [--count]\n"
		"       smctl sa path [--slid LID] [--dlid LID] [--sgid GID] [--dgid GID] [--count]\n"
		"                     [--numb-path N] [--service-id ID] [--tclass T] [--flow-label F]\n"
		"                     [--hop-limit H] [--qos-class Q] [--sl SL] [--reversible]\n"
		"       smctl sa services [--service-id ID] [--name NAME]\n"
		"       smctl sa bench [--requests N] [--inflight K] [--seed S] [--max-lid L]\n"
		"                      [--slid LID | --sgid GID] [--table]\n"
		"       smctl sa path-sl [--inflight K] < PAIRS   (lines \"SLID DLID\")\n"
		"       --sm-key KEY: requests carry KEY (the SA shows group members to its own)\n"
		"       --json: one JSON object, \"status\" first, the records field by field\n"
		"KIND: nodes ports switches links lft sminfo pkeys guids sl2vl vlarb path mcast mft\n"
		"      services informs\n"
		"(mcast: --lid names an MLID)\n");
}

static int parse_gid(const char *s, uint8_t g[16])
{
	return inet_pton(AF_INET6, s, g) == 1 ? 0 : -EINVAL;
}

/* The source of a bench run that fixes it (--slid/--sgid), and --table */
struct bench_src {
	struct path_record pr;	/* slid, sgid */
	uint64_t mask;		/* PR_CM_SLID, PR_CM_SGID: 0 for random pairs */
	bool table;
};

/*
 * umad2sim hands a receiver only the first 224 bytes of each MAD: bytes
 * 168-199 of every segment's data are lost (measured here: its receiver
 * thread reads into a buffer the size of its own request header).
 * A record whose checked fields lie there cannot be judged; every other
 * one is.
 */
static bool sim_lost(size_t off, size_t len)
{
	size_t in = off % SA_DATA_SIZE;

	return in + len > 168 && in < SA_DATA_SIZE;
}

/*
 * n PathRecord GetTables of the source to every destination, each checked:
 * one record per LID the SA confirmed, every one from the source
 */
static int bench_tables(struct client *c, unsigned int n, const struct bench_src *src,
			const uint16_t *lids, size_t nlids)
{
	uint64_t t0, t1, ok = 0, bad = 0, lost = 0, unchecked = 0;
	uint8_t *seen = calloc(LID_UCAST_MAX + 1, 1), rec[SA_DATA_SIZE] = { 0 };
	size_t nrec = 0;

	if (!seen)
		return 1;
	path_record_encode(&src->pr, rec);
	t0 = txn_now_us();
	for (unsigned int i = 0; i < n; i++) {
		struct answer a;
		size_t k, match = 0, unsure = 0;

		if (query(c, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, src->mask, rec, sizeof(rec),
			  &a) < 0) {
			lost++;
			if (!ok)
				break;	/* no RMPP here (opensm without a kernel) */
			continue;
		}
		memset(seen, 0, LID_UCAST_MAX + 1);
		for (k = 0; k < nlids; k++)
			seen[lids[k]] = 1;
		nrec = a.status ? 0 : nrecords(&a);
		for (k = 0; k < nrec; k++) {
			size_t at = (size_t)(record(&a, k) - a.data);
			struct path_record pr;

			path_record_decode(record(&a, k), &pr);
			if (pr.dlid <= LID_UCAST_MAX && seen[pr.dlid] == 1 &&
			    (!(src->mask & PR_CM_SLID) || pr.slid == src->pr.slid) &&
			    (!(src->mask & PR_CM_SGID) || !memcmp(pr.sgid, src->pr.sgid, 16))) {
				seen[pr.dlid] = 2;
				match++;
			} else if (sim_lost(at + 40, 4) ||
				   ((src->mask & PR_CM_SGID) && sim_lost(at + 24, 16))) {
				unsure++;
			}
		}
		free(a.data);
		if (match + unsure == nlids && nrec == nlids) {
			ok++;
			unchecked += unsure;
		}
		else
			bad++;
	}
	t1 = txn_now_us();
	free(seen);
	printf("PathRecord GetTables: %" PRIu64 " correct, %" PRIu64 " wrong, %" PRIu64
	       " unanswered, %zu records each, %" PRIu64
	       " records unchecked (lost by the transport), %.3f s, %.0f per second\n",
	       ok, bad, lost, nlids, unchecked, (double)(t1 - t0) / 1e6,
	       (double)ok * 1e6 / (double)(t1 - t0));
	return bad || lost ? 1 : 0;
}

/*
 * PathRecord Gets, K in flight, prints a rate: for random (SLID, DLID)
 * pairs, or from one source (--slid/--sgid) to each LID in turn; or
 * GetTables of that source (--table)
 */
static int bench(struct client *c, unsigned int n, unsigned int inflight, unsigned int seed,
		 unsigned int max_lid, const struct bench_src *src)
{
	size_t next_dst = 0;
	struct answer a;
	uint16_t *lids = NULL;
	size_t nlids = 0;
	uint64_t t0, t1, bad = 0, ok = 0, sent = 0, lost = 0;
	struct pollfd pfd = { .fd = mad_port_fd(c->port), .events = POLLIN };
	struct slot { uint32_t tid; uint16_t slid, dlid; uint64_t deadline; bool busy; } *slots;
	int r;

	/* The LIDs of the subnet, from the SA itself */
	r = max_lid ? -ENOENT : query(c, SA_METHOD_GET_TABLE, SA_ATTR_NODE_RECORD, 0, NULL, 0, &a);
	if (r < 0 || a.status) {
		if (!max_lid) {
			fprintf(stderr, "smctl: cannot list nodes: %s\n",
				r < 0 ? strerror(-r) : "status");
			return 1;
		}
		if (r == 0)
			free(a.data);
		memset(&a, 0, sizeof(a));
	}
	lids = calloc(nrecords(&a) + max_lid + 1, sizeof(*lids));
	slots = calloc(inflight, sizeof(*slots));
	if (!lids || !slots)
		return 1;
	/*
	 * Keep only LIDs a single-record Get confirms: under the simulator a
	 * table arrives with bytes 168-199 of every segment lost (umad2sim).
	 */
	/*
	 * Candidates: the table's LIDs, or 1..--max-lid for an SA that cannot
	 * send a whole table here (opensm has no RMPP without a kernel).
	 */
	for (size_t i = 0; i < nrecords(&a) + max_lid; i++) {
		uint16_t lid = i < nrecords(&a) ?
			(uint16_t)sa_record_field(SA_ATTR_NODE_RECORD, record(&a, i), 0) :
			(uint16_t)(i - nrecords(&a) + 1);
		bool dup = false;

		for (size_t k = 0; k < nlids && !dup; k++)
			dup = lids[k] == lid;
		if (dup)
			continue;
		uint8_t rec[128] = { 0 };
		struct answer one;

		if (!lid || lid > LID_UCAST_MAX)
			continue;
		sa_record_set_field(SA_ATTR_NODE_RECORD, rec, 0, lid);
		if (query(c, SA_METHOD_GET, SA_ATTR_NODE_RECORD, 1, rec, sizeof(rec), &one) == 0) {
			if (!one.status && nrecords(&one) >= 1 &&
			    sa_record_field(SA_ATTR_NODE_RECORD, record(&one, 0), 0) == lid)
				lids[nlids++] = lid;
			free(one.data);
		}
	}
	free(a.data);
	if (nlids < 2) {
		fprintf(stderr, "smctl: need two LIDs at least\n");
		return 1;
	}
	if (src->table) {
		r = bench_tables(c, n, src, lids, nlids);
		free(lids);
		free(slots);
		return r;
	}
	srandom(seed);
	t0 = txn_now_us();
	while (ok + bad + lost < n) {
		uint64_t now = txn_now_us();

		for (unsigned int k = 0; k < inflight; k++) {
			struct slot *s = &slots[k];

			if (s->busy && s->deadline <= now) {
				s->busy = false;
				lost++;
			}
			if (!s->busy && sent < n) {
				struct sa_mad req;
				struct path_record pr = { 0 };

				if (src->mask) {
					pr = src->pr;
					s->slid = pr.slid;
					s->dlid = lids[next_dst++ % nlids];
				} else {
					s->slid = lids[random() % nlids];
					s->dlid = lids[random() % nlids];
				}
				pr.slid = s->slid;
				pr.dlid = s->dlid;
				s->tid = ++c->tid;
				sa_mad_init(&req, SA_METHOD_GET, SA_ATTR_PATH_RECORD,
					    (src->mask ? src->mask : PR_CM_SLID) | PR_CM_DLID, s->tid);
				path_record_encode(&pr, req.data);
				s->deadline = now + SA_TIMEOUT_MS * 1000u;
				s->busy = true;
				sent++;
				send_mad(c, &req);
			}
		}
		poll(&pfd, 1, 10);
		for (struct sa_mad m; recv_sa(c, &m) == 0;) {
			for (unsigned int k = 0; k < inflight; k++) {
				struct slot *s = &slots[k];
				struct path_record pr;

				if (!s->busy || s->tid != (uint32_t)m.hdr.tid)
					continue;
				s->busy = false;
				path_record_decode(m.data, &pr);
				/*
				 * Correct: status 0 and the very path asked for (an SA
				 * asked by SGID alone fills in the SLID)
				 */
				if (!m.hdr.status && pr.dlid == s->dlid &&
				    (pr.slid == s->slid || !(src->mask & PR_CM_SLID)) &&
				    (!(src->mask & PR_CM_SGID) ||
				     !memcmp(pr.sgid, src->pr.sgid, 16)))
					ok++;
				else
					bad++;
				break;
			}
		}
	}
	t1 = txn_now_us();
	printf("PathRecord Gets: %" PRIu64 " sent, %" PRIu64 " correct, %" PRIu64 " wrong, %" PRIu64
	       " unanswered, %u in flight, %.3f s, %.0f per second\n", sent, ok, bad, lost,
	       inflight, (double)(t1 - t0) / 1e6, (double)ok * 1e6 / (double)(t1 - t0));
	free(lids);
	free(slots);
	return bad || lost ? 1 : 0;
}

/*
 * One PathRecord Get per "SLID DLID" line of stdin, K in flight, each
 * retried twice when unanswered; prints "SLID DLID SL" (or "SLID DLID -
 * STATUS" when the SA gives no path), in the order of the input.
 */
static int path_sls(struct client *c, unsigned int inflight)
{
	struct pair { uint16_t slid, dlid; int sl; uint16_t status; } *pairs = NULL;
	struct slot { uint32_t tid; size_t idx; uint64_t deadline; unsigned int tries; bool busy; }
		*slots;
	struct pollfd pfd = { .fd = mad_port_fd(c->port), .events = POLLIN };
	size_t n = 0, cap = 0, next = 0, done = 0;
	unsigned int a, b;
	int rc = 0;

	while (scanf("%u %u", &a, &b) == 2) {
		if (!a || !b || a > 0xffff || b > 0xffff) {
			fprintf(stderr, "smctl: bad LID pair %u %u\n", a, b);
			free(pairs);
			return 2;
		}
		if (n == cap) {
			struct pair *np;

			cap = cap ? 2 * cap : 1024;
			np = realloc(pairs, cap * sizeof(*pairs));
			if (!np) {
				free(pairs);
				return 1;
			}
			pairs = np;
		}
		pairs[n++] = (struct pair){ .slid = (uint16_t)a, .dlid = (uint16_t)b, .sl = -2 };
	}
	slots = calloc(inflight, sizeof(*slots));
	if (!slots) {
		free(pairs);
		return 1;
	}
	while (done < n) {
		uint64_t now = txn_now_us();

		for (unsigned int k = 0; k < inflight; k++) {
			struct slot *s = &slots[k];
			struct sa_mad req;
			struct path_record pr = { 0 };

			if (s->busy && s->deadline <= now && s->tries >= 3) {
				s->busy = false;
				pairs[s->idx].sl = -1;	/* never answered */
				done++;
			}
			if (!s->busy) {
				if (next >= n)
					continue;
				s->idx = next++;
				s->tries = 0;
			} else if (s->deadline > now) {
				continue;
			}
			pr.slid = pairs[s->idx].slid;
			pr.dlid = pairs[s->idx].dlid;
			s->tid = ++c->tid;
			sa_mad_init(&req, SA_METHOD_GET, SA_ATTR_PATH_RECORD, PR_CM_SLID | PR_CM_DLID,
				    s->tid);
			path_record_encode(&pr, req.data);
			s->deadline = now + 1000000u;
			s->tries++;
			s->busy = true;
			send_mad(c, &req);
		}
		poll(&pfd, 1, 10);
		for (struct sa_mad m; recv_sa(c, &m) == 0;) {
			for (unsigned int k = 0; k < inflight; k++) {
				struct slot *s = &slots[k];
				struct pair *p = &pairs[s->idx];
				struct path_record pr;

				if (!s->busy || s->tid != (uint32_t)m.hdr.tid)
					continue;
				s->busy = false;
				done++;
				path_record_decode(m.data, &pr);
				if (m.hdr.status || pr.slid != p->slid || pr.dlid != p->dlid) {
					p->sl = -1;
					p->status = m.hdr.status ? m.hdr.status : 0xffff;
				} else {
					p->sl = pr.sl;
				}
				break;
			}
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (pairs[i].sl >= 0) {
			printf("%u %u %d\n", pairs[i].slid, pairs[i].dlid, pairs[i].sl);
		} else if (pairs[i].status) {
			printf("%u %u - 0x%04x\n", pairs[i].slid, pairs[i].dlid, pairs[i].status);
			rc = 1;
		} else {
			printf("%u %u - timeout\n", pairs[i].slid, pairs[i].dlid);
			rc = 1;
		}
	}
	free(slots);
	free(pairs);
	return rc;
}

int smctl_sa(struct smctl_ctx *ctx, int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "lid", required_argument, NULL, 'l' },
		{ "slid", required_argument, NULL, 's' },
		{ "dlid", required_argument, NULL, 'd' },
		{ "sgid", required_argument, NULL, 'S' },
		{ "dgid", required_argument, NULL, 'D' },
		{ "count", no_argument, NULL, 'c' },
		{ "get", no_argument, NULL, 'g' },
		{ "requests", required_argument, NULL, 'n' },
		{ "inflight", required_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 'r' },
		{ "max-lid", required_argument, NULL, 'm' },
		{ "table", no_argument, NULL, 't' },
		{ "sm-key", required_argument, NULL, 'K' },
		{ "numb-path", required_argument, NULL, 'N' },
		{ "service-id", required_argument, NULL, 'I' },
		{ "tclass", required_argument, NULL, 'T' },
		{ "flow-label", required_argument, NULL, 'F' },
		{ "hop-limit", required_argument, NULL, 'H' },
		{ "qos-class", required_argument, NULL, 'Q' },
		{ "sl", required_argument, NULL, 'L' },
		{ "reversible", no_argument, NULL, 'R' },
		{ "name", required_argument, NULL, 'a' },
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *port = NULL;
	struct path_record pr = { 0 };
	uint64_t mask = 0;
	long lid = -1;
	bool count = false, get = false, table = false;
	unsigned int n = 20000, inflight = 32, seed = 1, max_lid = 0;
	struct client c = { 0 };
	struct answer a;
	uint8_t rec[SA_DATA_SIZE] = { 0 };
	int ch, r, rc = 1;
	const char *kind;
	int ki = -1;
	uint64_t pmask = 0, sid = 0;
	const char *name = NULL;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	kind = argv[1];
	optind = 2;
	while ((ch = getopt_long(argc, argv, "p:l:s:d:S:D:cgn:k:r:m:tK:jhN:I:T:F:H:Q:L:Ra:", opts,
				 NULL)) != -1) {
		switch (ch) {
		case 'j': ctx->json = true; break;
		case 'p': port = optarg; break;
		case 'l': lid = strtol(optarg, NULL, 0); break;
		case 's': pr.slid = (uint16_t)strtoul(optarg, NULL, 0); mask |= PR_CM_SLID; break;
		case 'd': pr.dlid = (uint16_t)strtoul(optarg, NULL, 0); mask |= PR_CM_DLID; break;
		case 'S':
			if (parse_gid(optarg, pr.sgid) < 0)
				goto bad_gid;
			mask |= PR_CM_SGID;
			break;
		case 'D':
			if (parse_gid(optarg, pr.dgid) < 0)
				goto bad_gid;
			mask |= PR_CM_DGID;
			break;
		case 'c': count = true; break;
		case 'g': get = true; break;
		case 'n': n = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'k': inflight = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'r': seed = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 'm': max_lid = (unsigned int)strtoul(optarg, NULL, 0); break;
		case 't': table = true; break;
		case 'K': c.sm_key = strtoull(optarg, NULL, 0); break;
		/* PathRecord components (IBA 15.2.5.16), as rdma_cm sends them */
		case 'N': pr.numb_path = (uint8_t)(strtoul(optarg, NULL, 0) & 0x7f);
			pmask |= PR_CM_NUMB_PATH; break;
		case 'I': sid = pr.service_id = strtoull(optarg, NULL, 0);
			pmask |= PR_CM_SERVICE_ID; break;
		case 'T': pr.tclass = (uint8_t)strtoul(optarg, NULL, 0); pmask |= PR_CM_TCLASS;
			break;
		case 'F': pr.flow_label = (uint32_t)strtoul(optarg, NULL, 0) & 0xfffff;
			pmask |= PR_CM_FLOW_LABEL; break;
		case 'H': pr.hop_limit = (uint8_t)strtoul(optarg, NULL, 0);
			pmask |= PR_CM_HOP_LIMIT; break;
		case 'Q': pr.qos_class = (uint16_t)(strtoul(optarg, NULL, 0) & 0xfff);
			pmask |= PR_CM_QOS_CLASS; break;
		case 'L': pr.sl = (uint8_t)(strtoul(optarg, NULL, 0) & 0xf); pmask |= PR_CM_SL;
			break;
		case 'R': pr.reversible = 1; pmask |= PR_CM_REVERSIBLE; break;
		case 'a': name = optarg; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || !inflight || inflight > 4096 || lid > 0xffff) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(kind, "bench")) {
		if (client_open(&c, port) < 0)
			return 1;
		struct bench_src src = { .pr = pr, .mask = mask & (PR_CM_SLID | PR_CM_SGID),
					 .table = table };

		if (table && !src.mask) {
			fprintf(stderr, "smctl sa bench --table needs --slid or --sgid\n");
			mad_port_close(c.port);
			return 2;
		}
		rc = bench(&c, n, inflight, seed, max_lid > LID_UCAST_MAX ? LID_UCAST_MAX : max_lid,
			   &src);
		mad_port_close(c.port);
		return rc;
	}
	if (!strcmp(kind, "path-sl")) {
		if (client_open(&c, port) < 0)
			return 1;
		rc = path_sls(&c, inflight);
		mad_port_close(c.port);
		return rc;
	}
	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (!strcmp(kind, kinds[i].name))
			ki = (int)i;
	if (ki < 0) {
		fprintf(stderr, "smctl sa: unknown kind '%s'\n", kind);
		usage(stderr);
		return 2;
	}
	if (kinds[ki].attr == SA_ATTR_PATH_RECORD) {
		mask |= pmask;
		path_record_encode(&pr, rec);
	} else if (kinds[ki].attr == SA_ATTR_SERVICE_RECORD) {
		struct service_record sr = { .id = sid };

		if (name)
			snprintf((char *)sr.name, sizeof(sr.name), "%s", name);
		service_record_encode(&sr, rec);
		mask = ((pmask & PR_CM_SERVICE_ID) ? SR_CM_ID : 0) | (name ? SR_CM_NAME : 0);
	} else if (kinds[ki].attr == SA_ATTR_INFORM_INFO_RECORD) {
		mask = 0;
	} else if (kinds[ki].attr == SA_ATTR_MCMEMBER_RECORD) {
		struct mc_member_record mr = { .mlid = (uint16_t)lid };

		mc_member_record_encode(&mr, rec);
		mask = lid >= 0 ? MCR_CM_MLID : 0;
	} else if (lid >= 0) {
		/* Every record but PathRecord starts with its LID, component 0 */
		sa_record_set_field(kinds[ki].attr, rec, 0, (uint64_t)lid);
		mask = 1;
	}
	if (client_open(&c, port) < 0) {
		if (ctx->json)
			json_sa_error("cannot reach the SA (see the message on stderr)");
		return 1;
	}
	r = query(&c, get ? SA_METHOD_GET : SA_METHOD_GET_TABLE, kinds[ki].attr, mask, rec,
		  sizeof(rec), &a);
	if (r < 0) {
		char why[128];

		snprintf(why, sizeof(why), "no answer from the SA at LID %u: %s", c.sm_lid,
			 strerror(-r));
		fprintf(stderr, "smctl: %s\n", why);
		if (ctx->json)
			json_sa_error(why);
	} else if (a.status) {
		char why[64];

		snprintf(why, sizeof(why), "the SA answered with status 0x%04x", a.status);
		fprintf(stderr, "smctl: %s\n", why);
		if (ctx->json)
			json_sa_error(why);
	} else if (ctx->json) {
		rc = json_answer(kind, kinds[ki].attr, &a, count);
	} else if (count) {
		printf("%zu\n", nrecords(&a));
		rc = 0;
	} else {
		printf("%s\n", kinds[ki].header);
		if (kinds[ki].attr == SA_ATTR_MCMEMBER_RECORD)
			print_mcast(&a);
		for (size_t i = 0; i < nrecords(&a) && kinds[ki].attr != SA_ATTR_MCMEMBER_RECORD;
		     i++) {
			if (kinds[ki].attr == SA_ATTR_MFT_RECORD)
				print_mft(record(&a, i));
			else if (kinds[ki].attr == SA_ATTR_PATH_RECORD)
				print_path(record(&a, i));
			else if (kinds[ki].attr == SA_ATTR_NODE_RECORD)
				print_node(record(&a, i));
			else if (kinds[ki].attr == SA_ATTR_SERVICE_RECORD)
				print_service(record(&a, i), false);
			else if (kinds[ki].attr == SA_ATTR_INFORM_INFO_RECORD)
				print_inform(record(&a, i));
			else if (kinds[ki].attr == SA_ATTR_PKEY_RECORD)
				print_pkeys(record(&a, i));
			else
				print_generic(kinds[ki].attr, record(&a, i), a.attr_offset * 8u);
		}
		rc = 0;
	}
	if (r == 0)
		free(a.data);
	mad_port_close(c.port);
	return rc;
bad_gid:
	fprintf(stderr, "smctl sa: bad GID '%s'\n", optarg);
	return 2;
}
