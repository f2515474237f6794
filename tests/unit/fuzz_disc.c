// SPDX-License-Identifier: MIT
/*
 * Discovery fuzzer (issue 12): on fake fabrics (fixed ones from
 * tests/fuzz/disc/ and random irregular ones), every discovery answer may
 * be dropped, replaced by another node's, or corrupted, either as the
 * decoded struct (what a decoder lets through) or as wire bytes run through
 * mad/'s decoders. Whatever the model ends up holding, the rest of a sweep
 * must run without a crash, hang or sanitizer report, and the model must
 * stay consistent: LIDs, every routing engine, the verifier, the SL-to-VL
 * and VL arbitration tables, the PathRecord table and the SA's answers.
 *
 *   fuzz_disc [-n ITERATIONS] [-s SEED] [FABRIC FILES...]
 *
 * Deterministic: the same seed gives the same run. make check runs a
 * bounded number of iterations (the default), under ASan and UBSan in the
 * sanitizer build; a longer run prints what it found.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mad/sa_codec.h"
#include "sa/sa.h"
#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/lid.h"
#include "topo/path.h"
#include "topo/route.h"

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * UINT64_C(0x2545f4914f6cdd1d);
}

static unsigned int below(unsigned int n)
{
	return n ? (unsigned int)(rnd() % n) : 0;
}

/* ---- the liar: a tamper hook that lies at random ---- */

struct chaos {
	const struct fakefab *ff;
	unsigned int rate;		/* one answer in rate is tampered with */
	unsigned long tampered, dropped, replaced, corrupted, wire;
};

static uint64_t some_guid(const struct chaos *c)
{
	switch (below(4)) {
	case 0: return 0;
	case 1: return rnd();
	default: return c->ff->nodes[below((unsigned int)c->ff->n)].guid + below(3);
	}
}

static void corrupt_ni(struct chaos *c, struct node_info *ni)
{
	switch (below(7)) {
	case 0: ni->node_type = (uint8_t)below(6); break;
	case 1: ni->num_ports = (uint8_t)rnd(); break;
	case 2:
		ni->local_port = below(2) ? (uint8_t)rnd() : (uint8_t)(ni->num_ports + below(3));
		break;
	case 3: ni->local_port = 0; break;
	case 4: ni->node_guid = some_guid(c); break;
	case 5: ni->port_guid = some_guid(c); break;
	default: ni->sys_guid = rnd(); break;
	}
}

static void corrupt_pi(struct port_info *pi)
{
	switch (below(12)) {
	case 0: pi->port_state = (uint8_t)below(16); break;
	case 1: pi->phys_state = (uint8_t)below(16); break;
	case 2: pi->lid = (uint16_t)rnd(); break;
	case 3: pi->lmc = (uint8_t)below(8); break;
	case 4: pi->vl_cap = (uint8_t)below(16); break;
	case 5: pi->mtu_cap = (uint8_t)below(16); break;
	case 6: pi->cap_mask ^= (uint32_t)1 << below(32); break;
	case 7: pi->vl_arb_high_cap = (uint8_t)rnd(); pi->vl_arb_low_cap = (uint8_t)rnd(); break;
	case 8:
		pi->link_width_active = (uint8_t)rnd();
		pi->link_speed_active = (uint8_t)below(16);
		break;
	case 9: pi->local_port = (uint8_t)rnd(); break;
	case 10: pi->op_vls = (uint8_t)below(16); pi->neighbor_mtu = (uint8_t)below(16); break;
	default: pi->guid_cap = (uint8_t)rnd(); pi->master_sm_lid = (uint16_t)rnd(); break;
	}
}

static void corrupt_si(struct switch_info *si)
{
	switch (below(4)) {
	case 0: si->lft_cap = (uint16_t)rnd(); break;
	case 1: si->lft_top = (uint16_t)rnd(); break;
	case 2: si->life_time_value = (uint8_t)below(32); si->port_state_change = 1; break;
	default: si->lids_per_port = (uint16_t)rnd(); si->mft_cap = (uint16_t)rnd(); break;
	}
}

/* Encode, flip a few bytes, decode as smd would: a decoder refusal is a lost answer */
static int corrupt_wire(const struct disc_probe *p, struct ff_answers *a)
{
	uint8_t d[SMP_DATA_SIZE];
	unsigned int flips = 1 + below(4);

	switch (p->kind) {
	case DISC_NODE_INFO:
	case DISC_VERIFY: node_info_encode(a->ni, d); break;
	case DISC_NODE_DESC: node_desc_encode(a->nd, d); break;
	case DISC_SWITCH_INFO: switch_info_encode(a->si, d); break;
	case DISC_PORT_INFO: port_info_encode(a->pi, d); break;
	}
	for (unsigned int i = 0; i < flips; i++)
		d[below(SMP_DATA_SIZE)] ^= (uint8_t)(1u << below(8));
	switch (p->kind) {
	case DISC_NODE_INFO:
	case DISC_VERIFY: return node_info_decode(d, a->ni) < 0 ? -EBADMSG : 0;
	case DISC_NODE_DESC: return node_desc_decode(d, a->nd) < 0 ? -EBADMSG : 0;
	case DISC_SWITCH_INFO: return switch_info_decode(d, a->si) < 0 ? -EBADMSG : 0;
	case DISC_PORT_INFO: return port_info_decode(d, a->pi) < 0 ? -EBADMSG : 0;
	}
	return 0;
}

static int tamper(void *ctx, const struct disc_probe *p, int idx, uint8_t in, struct ff_answers *a)
{
	struct chaos *c = ctx;
	const struct fakefab *ff = c->ff;

	(void)idx;
	(void)in;
	if (below(c->rate))
		return 0;
	c->tampered++;
	switch (below(4)) {
	case 0:
		c->dropped++;
		return -ETIMEDOUT;
	case 1:
		/* Another node's identity, or a cable claimed where there is none */
		c->replaced++;
		if (p->kind == DISC_NODE_INFO || p->kind == DISC_VERIFY) {
			const struct ff_node *o = &ff->nodes[below((unsigned int)ff->n)];

			a->ni->node_guid = o->guid;
			a->ni->node_type = o->type;
			a->ni->num_ports = o->nports;
			a->ni->local_port = (uint8_t)(1 + below(o->nports));
			a->ni->port_guid = o->guid + a->ni->local_port;
		} else if (p->kind == DISC_PORT_INFO) {
			bool up = below(2);

			a->pi->phys_state = up ? PHYS_STATE_LINKUP : 2;
			a->pi->port_state = up ? PORT_STATE_INIT : PORT_STATE_DOWN;
		}
		return 0;
	case 2:
		c->corrupted++;
		switch (p->kind) {
		case DISC_NODE_INFO:
		case DISC_VERIFY: corrupt_ni(c, a->ni); break;
		case DISC_NODE_DESC:
			for (int i = 0; i < SMP_DATA_SIZE; i++)
				a->nd->desc[i] = (char)(1 + below(255));
			a->nd->desc[SMP_DATA_SIZE] = (char)below(2);
			break;
		case DISC_SWITCH_INFO: corrupt_si(a->si); break;
		case DISC_PORT_INFO: corrupt_pi(a->pi); break;
		}
		return 0;
	default:
		c->wire++;
		return corrupt_wire(p, a);
	}
}

/* ---- fabrics ---- */

/* A random irregular fabric: S switches of 8 ports, random cables, hosts, some dual-ported */
static char *random_net(unsigned int S)
{
	size_t cap = 64 * 1024, len = 0;
	char *t = malloc(cap);
	int peer[16][9];
	int hosts = 0;

	memset(peer, -1, sizeof(peer));
	if (S > 16)
		S = 16;
	len += (size_t)snprintf(t + len, cap - len, "Hca 1 \"sm\"\n[1] \"s0\"[8]\n");
	peer[0][8] = 1000;
	/* A random spanning tree, then extra cables (parallel ones too) */
	for (unsigned int s = 1; s < S; s++) {
		unsigned int u = below(s);
		int pu = 0, ps = 0;

		for (int p = 1; p <= 7 && !pu; p++)
			if (peer[u][p] < 0)
				pu = p;
		for (int p = 1; p <= 7 && !ps; p++)
			if (peer[s][p] < 0)
				ps = p;
		if (!pu || !ps)
			continue;
		peer[u][pu] = (int)(s * 16 + (unsigned int)ps);
		peer[s][ps] = (int)(u * 16 + (unsigned int)pu);
	}
	for (unsigned int k = below(S * 2); k > 0; k--) {
		unsigned int a = below(S), b = below(S);
		int pa = 1 + (int)below(7), pb = 1 + (int)below(7);

		if (a == b || peer[a][pa] >= 0 || peer[b][pb] >= 0)
			continue;
		peer[a][pa] = (int)(b * 16 + (unsigned int)pb);
		peer[b][pb] = (int)(a * 16 + (unsigned int)pa);
	}
	for (unsigned int s = 0; s < S; s++)
		for (int p = 1; p <= 7; p++)
			if (peer[s][p] < 0 && below(3) == 0)
				peer[s][p] = 2000 + hosts++;
	for (unsigned int s = 0; s < S; s++) {
		len += (size_t)snprintf(t + len, cap - len, "Switch 8 \"s%u\"\n", s);
		for (int p = 1; p <= 8; p++) {
			int q = peer[s][p];

			if (q < 0)
				continue;
			if (q == 1000)
				len += (size_t)snprintf(t + len, cap - len, "[%d] \"sm\"[1]\n", p);
			else if (q >= 2000)
				len += (size_t)snprintf(t + len, cap - len, "[%d] \"h%d\"[1]\n", p,
							q - 2000);
			else
				len += (size_t)snprintf(t + len, cap - len, "[%d] \"s%d\"[%d]\n", p,
							q / 16, q % 16);
		}
	}
	for (unsigned int s = 0; s < S; s++)
		for (int p = 1; p <= 7; p++)
			if (peer[s][p] >= 2000)
				len += (size_t)snprintf(t + len, cap - len,
							"Hca 1 \"h%d\"\n[1] \"s%u\"[%d]\n",
							peer[s][p] - 2000, s, p);
	return t;
}

/* ---- what a sweep does with the model ---- */

struct tally {
	unsigned long iterations, engines_ok, engines_err, pairs, sa_answers, dups, rejected;
	unsigned long findings;
};

static void finding(struct tally *t, const char *what, unsigned long iter)
{
	t->findings++;
	fprintf(stderr, "  FINDING at iteration %lu: %s\n", iter, what);
}

/* The model holds together: cables both ways, indexes right, LIDs unique */
static void check_model(struct fabric *f, struct tally *t, unsigned long iter)
{
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *n = f->nodes[i];

		if (n->idx != i || fabric_find(f, n->guid) != n)
			finding(t, "node index", iter);
		if (n->type == NODE_TYPE_SWITCH && f->switches[n->sw_idx] != n)
			finding(t, "switch index", iter);
		for (unsigned int p = 0; p <= n->num_ports; p++) {
			struct fab_port *pp = &n->ports[p];

			if (pp->num != p || pp->node != n)
				finding(t, "port numbering", iter);
			if (fabric_port_linked(pp) && (!fabric_port_linked(pp->peer) ||
						       pp->peer->peer != pp))
				finding(t, "one-way cable", iter);
		}
	}
	if (fabric_index_lids(f) < 0)
		finding(t, "LIDs not unique", iter);
}

static unsigned int sent_count;

static int count_send(void *ctx, const uint8_t mad[MAD_SIZE], size_t len,
		      const struct mad_addr *to)
{
	(void)ctx;
	(void)mad;
	(void)len;
	(void)to;
	sent_count++;
	return 0;
}

static void sa_ask(struct sa *sa, uint8_t method, uint16_t attr, uint64_t mask,
		   const uint8_t *rec, uint64_t tid)
{
	static const struct mad_addr from = { .slid = 1, .qpn = 1 };
	struct sa_mad m;
	uint8_t buf[MAD_SIZE];

	sa_mad_init(&m, method, attr, mask, tid);
	if (rec)
		memcpy(m.data, rec, 64);
	if (sa_mad_encode(&m, buf) == 0)
		sa_handle(sa, buf, MAD_SIZE, &from);
}

static void after_discovery(struct fabric *f, struct tally *t, unsigned long iter)
{
	static const char *const lists[] = {
		"dfree,updn,minhop", "updn", "layered,updn", "minhop",
	};
	const struct route_engine *e;
	struct route_result *keep = NULL;
	struct route_check chk;
	struct route_stats st;
	struct route_attempt att[4];
	struct lid_stats ls;
	struct path_table *pt = NULL;
	unsigned int tried;
	int r;

	r = lid_assign(f, (uint8_t)below(3), NULL, NULL, &ls);
	if (r < 0) {
		if (r != -ENOSPC)
			finding(t, "lid_assign failed", iter);
		return;
	}
	check_model(f, t, iter);
	for (unsigned int i = 0; (e = route_engine_at(i)); i++) {
		struct route_opts o = { .max_vls = below(9) };
		struct route_result *res = NULL;

		r = route_compute(e, f, &o, &st, &res);
		if (r < 0) {
			t->engines_err++;
			if (r != -ENOSPC && r != -EPROTO)
				finding(t, "engine failed with an unexpected error", iter);
			continue;
		}
		t->engines_ok++;
		if (route_check(f, res, &chk) < 0)
			finding(t, "verifier failed", iter);
		else if (e->deadlock_free && (chk.loops || chk.unreachable))
			finding(t, "deadlock-free engine left loops or unreachable pairs", iter);
		route_result_free(res);
	}
	/* As smd does: an ordered list, verified, the result kept for the SA */
	r = route_compute_list(lists[below(4)], f, NULL, &st, &keep, &chk, att, 4, &tried);
	if (r < 0 && r != -ENOSPC && r != -EPROTO && r != -EHOSTUNREACH && r != -EDEADLK &&
	    r != -ELOOP)
		finding(t, "engine list failed with an unexpected error", iter);
	/* VL tables for every node and port pair */
	for (size_t i = 0; i < f->nnodes; i++) {
		const struct fab_node *n = f->nodes[i];
		uint8_t vl[ROUTE_NUM_SLS];

		for (unsigned int in = 0; in <= n->num_ports; in++) {
			for (unsigned int out = 0; out <= n->num_ports; out++) {
				if (route_sl2vl(keep, n, in, out, vl) < 0)
					continue;
				for (int sl = 0; sl < ROUTE_NUM_SLS; sl++)
					if (vl[sl] >= route_vls_used(keep))
						finding(t, "SL-to-VL beyond the VLs used", iter);
			}
		}
	}
	{
		struct route_vlarb tab[64];

		if (route_vlarb_default(route_vls_used(keep), (uint8_t)rnd(), tab, 64) >
		    ROUTE_MAX_VLS)
			finding(t, "VL arbitration table too long", iter);
	}
	/* PathRecords: every pair of LIDs through the table the SA uses */
	if (path_table_build(f, &pt) == 0) {
		for (uint32_t s = 1; s <= f->max_lid; s++)
			for (uint32_t d = 1; d <= f->max_lid; d++) {
				struct path_attr pa;

				if (path_lookup(pt, (uint16_t)s, (uint16_t)d, &pa) == 0)
					t->pairs++;
			}
		path_table_free(pt);
	}
	/* And the SA itself, on this model */
	{
		struct sa_env env = {
			.sm_guid = 1, .sm_lid = 1, .subnet_prefix = UINT64_C(0xfe80000000000000),
			.packet_life_time = 18, .send = count_send,
		};
		struct path_record pr = { 0 };
		struct sa *sa;
		uint8_t rec[64];

		if (sa_new(&env, &sa) == 0) {
			sa_update(sa, f, keep);
			sent_count = 0;
			for (int k = 0; k < 8; k++) {
				pr.slid = (uint16_t)(1 + below(f->max_lid + 2));
				pr.dlid = (uint16_t)(1 + below(f->max_lid + 2));
				path_record_encode(&pr, rec);
				sa_ask(sa, SA_METHOD_GET, SA_ATTR_PATH_RECORD,
				       PR_CM_SLID | PR_CM_DLID, rec, (uint64_t)k);
			}
			sa_ask(sa, SA_METHOD_GET_TABLE, SA_ATTR_PATH_RECORD, PR_CM_SLID, rec, 100);
			sa_ask(sa, SA_METHOD_GET_TABLE, SA_ATTR_NODE_RECORD, 0, NULL, 101);
			sa_ask(sa, SA_METHOD_GET_TABLE, SA_ATTR_LINK_RECORD, 0, NULL, 102);
			sa_ask(sa, SA_METHOD_GET_TABLE, SA_ATTR_PORT_INFO_RECORD, 0, NULL, 103);
			sa_ask(sa, SA_METHOD_GET_TABLE, SA_ATTR_SWITCH_INFO_RECORD, 0, NULL, 104);
			sa_ask(sa, SA_METHOD_GET_TABLE, SA_ATTR_LFT_RECORD, 0, NULL, 105);
			for (int k = 0; k < 20; k++)
				sa_tick(sa);
			t->sa_answers += sent_count;
			sa_free(sa);
		}
	}
	route_result_free(keep);
}

static int load(const char *path, char **out)
{
	FILE *fp = fopen(path, "re");
	long len;

	if (!fp)
		return -errno;
	fseek(fp, 0, SEEK_END);
	len = ftell(fp);
	fseek(fp, 0, SEEK_SET);
	*out = calloc(1, (size_t)len + 1);
	if (!*out || fread(*out, 1, (size_t)len, fp) != (size_t)len) {
		fclose(fp);
		return -EIO;
	}
	fclose(fp);
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long iters = 300, seed = 12;
	struct tally t = { 0 };
	char **texts = NULL;
	int ntexts = 0, c;

	while ((c = getopt(argc, argv, "n:s:")) != -1) {
		switch (c) {
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: fuzz_disc [-n ITERATIONS] [-s SEED] [FILES...]\n");
			return 2;
		}
	}
	texts = calloc((size_t)(argc - optind) + 1, sizeof(*texts));
	for (int i = optind; i < argc; i++) {
		if (load(argv[i], &texts[ntexts]) < 0) {
			fprintf(stderr, "fuzz_disc: cannot read %s\n", argv[i]);
			return 2;
		}
		ntexts++;
	}
	rng = seed * UINT64_C(0x9e3779b97f4a7c15) | 1;
	for (unsigned long it = 0; it < iters; it++) {
		char *text = ntexts && below(2) ? NULL : random_net(2 + below(12));
		struct fakefab ff;
		struct disc_stats ds;
		struct chaos ch;
		struct fabric *f;

		if (ff_parse(&ff, text ? text : texts[below((unsigned int)ntexts)]) < 0) {
			finding(&t, "fabric text did not parse", it);
			free(text);
			continue;
		}
		ch = (struct chaos){ .ff = &ff, .rate = 4 + below(60) };
		ff.tamper = tamper;
		ff.tamper_ctx = &ch;
		if (fabric_new(&f) < 0)
			return 1;
		if (ff_discover(&ff, f, &ds) < 0)
			finding(&t, "discovery failed", it);
		t.dups += ds.duplicates;
		t.rejected += ds.rejected;
		check_model(f, &t, it);
		after_discovery(f, &t, it);
		fabric_free(f);
		ff_free(&ff);
		free(text);
		t.iterations++;
	}
	for (int i = 0; i < ntexts; i++)
		free(texts[i]);
	free(texts);
	printf("fuzz_disc: seed %lu, %lu iterations, %lu engine runs (%lu refused the model), "
	       "%lu rejected answers, %lu duplicate GUIDs, %lu path lookups, %lu SA MADs; "
	       "%lu findings\n", seed, t.iterations, t.engines_ok + t.engines_err, t.engines_err,
	       t.rejected, t.dups, t.pairs, t.sa_answers, t.findings);
	CHECK_EQ(t.findings, 0);
	return unit_report();
}
