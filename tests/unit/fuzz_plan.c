// SPDX-License-Identifier: MIT
/*
 * The cabling plan fuzzer (issue 21): plans made from a corpus (what
 * ibnetdiscover printed on a simulated fat-tree, smctl dump's golden
 * files, ibsim topology files) by mutating lines (bytes flipped, lines
 * dropped, doubled, swapped, cut short, cables recabled, hostile numbers,
 * NULs, CRs and binary, lines past the limit, GUID lines dropped) and by
 * truncating the file anywhere. plan_parse must never crash (the sanitizer
 * build runs this under ASan and UBSan) and either refuse with
 * "NAME:LINE: reason", the line within the file, or accept a plan that
 * holds together: every cable named back by its far end, ports in range,
 * no GUID twice. An accepted plan is then checked against the seed's own
 * fabric (discovered from it by fakefab), with and without enforcement:
 * the counts add up, the list is sorted and bounded, and enforcement
 * fences only switch-to-switch links, both ends, and never splits the
 * fabric into more pieces than it had.
 *
 *   fuzz_plan [-n ITERATIONS] [-s SEED] SEED-FILES...
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/fakefab.h"
#include "tests/unit/unit.h"
#include "topo/lid.h"
#include "topo/plan.h"

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

static unsigned long findings;

static void __attribute__((format(printf, 2, 3))) finding(unsigned long it, const char *fmt, ...)
{
	va_list ap;

	findings++;
	fprintf(stderr, "  FINDING %lu: ", it);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A growing output buffer (NULs allowed) */
struct out {
	char *b;
	size_t n, cap;
};

static void put(struct out *o, const char *s, size_t n)
{
	if (o->n + n + 1 > o->cap) {
		size_t cap = o->cap ? o->cap : 4096;

		while (cap < o->n + n + 1)
			cap *= 2;
		o->b = realloc(o->b, cap);
		if (!o->b)
			abort();
		o->cap = cap;
	}
	memcpy(o->b + o->n, s, n);
	o->n += n;
	o->b[o->n] = 0;
}

static void puts_(struct out *o, const char *s)
{
	put(o, s, strlen(s));
}

struct line {
	const char *s;
	size_t n;		/* without its newline */
};

static const char *const numbers[] = {
	"0", "1", "254", "255", "256", "-1", "4294967296", "99999999999999999999", "0x10", "",
	"3a",
};
static const char *const rates[] = {
	"4xQDR", "1xSDR", "12xEDR", "2xNDR", "4xFDR10", "3xQDR", "4xQQR", "0xSDR", "99xHDR",
	"4x", "x4QDR", "?????",
};

/* One mutated line from l (or a made-up one), into o */
static void mutate(struct out *o, const struct line *l, const struct line *lines, size_t nl)
{
	char buf[PLAN_LINE_MAX + 128];
	const struct line *x = &lines[below((unsigned int)nl)];
	size_t n;

	switch (below(12)) {
	case 0:	/* a byte flipped */
		n = l->n < sizeof(buf) ? l->n : sizeof(buf) - 1;
		memcpy(buf, l->s, n);
		if (n)
			buf[below((unsigned int)n)] ^= (char)(1u << below(8));
		put(o, buf, n);
		break;
	case 1:	/* dropped */
		return;
	case 2:	/* doubled */
		put(o, l->s, l->n);
		puts_(o, "\n");
		put(o, l->s, l->n);
		break;
	case 3:	/* another line instead (a cable moved, a node again) */
		put(o, x->s, x->n);
		break;
	case 4:	/* cut short */
		put(o, l->s, l->n ? below((unsigned int)l->n) : 0);
		break;
	case 5: {	/* a port line with hostile numbers */
		const char *q = memchr(l->s, '"', l->n);
		size_t idn = q ? strcspn(q + 1, "\"\n") : 0;

		snprintf(buf, sizeof(buf), "[%s]\t\"%.*s\"[%s]\t\t# lid 1 %s",
			 numbers[below(sizeof(numbers) / sizeof(numbers[0]))], (int)idn,
			 q ? q + 1 : "", numbers[below(sizeof(numbers) / sizeof(numbers[0]))],
			 rates[below(sizeof(rates) / sizeof(rates[0]))]);
		puts_(o, buf);
		break;
	}
	case 6:	/* a header with a hostile port count */
		snprintf(buf, sizeof(buf), "%s %s \"n%u\"", below(2) ? "Switch" : "Ca",
			 numbers[below(sizeof(numbers) / sizeof(numbers[0]))], below(8));
		puts_(o, buf);
		break;
	case 7:	/* binary: NUL, CR, bytes past ASCII, a stray control byte */
		put(o, l->s, l->n / 2);
		if (below(2))
			put(o, "\0", 1);
		else
			put(o, "\x01\xff\xfe", 3);
		put(o, l->s + l->n / 2, l->n - l->n / 2);
		if (below(2))
			puts_(o, "\r");
		break;
	case 8:	/* past the line limit */
		n = PLAN_LINE_MAX - 8 + below(16);
		memset(buf, below(2) ? '#' : 'a', n);
		put(o, buf, n);
		break;
	case 9:	/* a GUID line dropped or made hostile */
		if (l->n > 7 && memchr(l->s, '=', l->n)) {
			if (below(2))
				return;
			snprintf(buf, sizeof(buf), "%.*s=0x%s", (int)strcspn(l->s, "="), l->s,
				 below(2) ? "0" : "ffffffffffffffffff");
			puts_(o, buf);
			break;
		}
		put(o, l->s, l->n);
		break;
	case 10: {	/* recabled: this port line with another port line's far end */
		const char *q1 = memchr(l->s, '"', l->n), *q2 = memchr(x->s, '"', x->n);

		if (l->n && l->s[0] == '[' && q1 && q2 && x->s[0] == '[') {
			put(o, l->s, (size_t)(q1 - l->s));
			put(o, q2, x->n - (size_t)(q2 - x->s));
		} else {
			put(o, l->s, l->n);
		}
		break;
	}
	default:
		put(o, l->s, l->n);
		break;
	}
	puts_(o, "\n");
}

/* Pieces the fabric falls into over the links routing may use */
static unsigned int pieces(const struct fabric *f)
{
	uint32_t *up = malloc((f->nnodes + 1) * sizeof(*up));
	unsigned int n = 0;

	for (size_t i = 0; i < f->nnodes; i++)
		up[i] = (uint32_t)i;
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int k = 1; k <= f->nodes[i]->num_ports; k++) {
			const struct fab_port *p = &f->nodes[i]->ports[k];
			uint32_t a = (uint32_t)i, b;

			if (!fabric_port_linked(p))
				continue;
			b = p->peer->node->idx;
			while (up[a] != a)
				a = up[a];
			while (up[b] != b)
				b = up[b];
			up[a] = b;
		}
	for (size_t i = 0; i < f->nnodes; i++)
		n += up[i] == i;
	free(up);
	return n;
}

/* An accepted plan holds together */
static void check_plan(unsigned long it, const struct plan *p)
{
	size_t ends = 0;

	for (size_t i = 0; i < p->nnodes; i++) {
		const struct plan_node *nd = &p->nodes[i];

		if (!nd->declared || !nd->nports || !nd->ports || strlen(nd->desc) > PLAN_DESC_LEN) {
			finding(it, "node %zu (%s) not whole", i, nd->id);
			return;
		}
		for (unsigned int k = 1; k <= nd->nports; k++) {
			const struct plan_port *pp = &nd->ports[k];
			const struct plan_node *b;

			if (pp->peer == PLAN_NONE)
				continue;
			ends++;
			if (pp->peer >= p->nnodes) {
				finding(it, "%s port %u: peer %u out of range", nd->id, k, pp->peer);
				return;
			}
			b = &p->nodes[pp->peer];
			if (pp->peer_port < 1 || pp->peer_port > b->nports ||
			    b->ports[pp->peer_port].peer != i ||
			    b->ports[pp->peer_port].peer_port != k) {
				finding(it, "%s port %u: the far end (%s port %u) does not name it back",
					nd->id, k, b->id, pp->peer_port);
				return;
			}
		}
		for (size_t j = 0; nd->guid && j < i; j++)
			if (p->nodes[j].guid == nd->guid)
				finding(it, "GUID of %s twice", nd->id);
	}
	if (ends != 2 * p->ncables)
		finding(it, "%zu cable ends, %zu cables", ends, p->ncables);
}

static void check_report(unsigned long it, const struct plan *p, struct fabric *f, bool enforce,
			 unsigned int before)
{
	struct plan_report *r = NULL;
	unsigned int sum = 0, held = 0;

	if (plan_check(p, f, enforce, &r) < 0) {
		finding(it, "plan_check failed");
		return;
	}
	for (unsigned int k = 0; k < PLAN_KINDS; k++)
		sum += r->count[k];
	if (sum != r->total || r->n > PLAN_LIST_MAX ||
	    r->n != (r->total < PLAN_LIST_MAX ? r->total : PLAN_LIST_MAX))
		finding(it, "counts %u, total %u, listed %zu", sum, r->total, r->n);
	for (size_t i = 0; i < r->n; i++) {
		const struct plan_mismatch *m = &r->list[i];

		if (m->kind >= PLAN_KINDS || (i && (m->kind < r->list[i - 1].kind ||
						    (m->kind == r->list[i - 1].kind &&
						     m->node_guid < r->list[i - 1].node_guid))))
			finding(it, "entry %zu out of order or of no kind", i);
		if (!enforce && m->action != PLAN_REPORTED)
			finding(it, "entry %zu enforced without enforcement", i);
	}
	for (size_t i = 0; i < f->nnodes; i++)
		for (unsigned int k = 1; k <= f->nodes[i]->num_ports; k++) {
			const struct fab_port *q = &f->nodes[i]->ports[k];

			if (!q->fenced)
				continue;
			held++;
			if (!enforce || !q->peer || !q->peer->fenced ||
			    q->node->type != NODE_TYPE_SWITCH ||
			    q->peer->node->type != NODE_TYPE_SWITCH)
				finding(it, "a fence on %s port %u that should not be", q->node->desc, k);
		}
	if (held != 2 * r->held)
		finding(it, "%u fenced ends, %u links held", held, r->held);
	if (pieces(f) != before)
		finding(it, "enforcement split the fabric: %u pieces, %u before", pieces(f), before);
	plan_report_free(r);
}

int main(int argc, char **argv)
{
	unsigned long iters = 3000, seed = 21, accepted = 0, refused = 0, compared = 0;
	struct seedfile {
		char *text;
		size_t len;
		struct line *lines;
		size_t nl;
		struct fabric *f;
		unsigned int pieces;
	} *seeds;
	int nseeds = 0, c;

	while ((c = getopt(argc, argv, "n:s:")) != -1) {
		switch (c) {
		case 'n': iters = strtoul(optarg, NULL, 0); break;
		case 's': seed = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: fuzz_plan [-n N] [-s SEED] SEED-FILES...\n");
			return 2;
		}
	}
	if (optind >= argc)
		return 2;
	seeds = calloc((size_t)(argc - optind), sizeof(*seeds));
	for (int i = optind; i < argc; i++) {
		struct seedfile *sf = &seeds[nseeds];
		struct plan *p = NULL;
		struct fakefab ff;
		struct lid_stats ls;
		char err[512];
		const char *s;

		sf->text = unit_read_file(argv[i], &sf->len);
		if (!sf->text)
			continue;
		/* Every seed is a good plan to start from */
		if (plan_parse(sf->text, sf->len, argv[i], &p, err, sizeof(err)) < 0) {
			fprintf(stderr, "seed %s refused: %s\n", argv[i], err);
			findings++;
		}
		plan_free(p);
		sf->lines = calloc(sf->len + 1, sizeof(*sf->lines));
		for (s = sf->text; s < sf->text + sf->len;) {
			const char *e = memchr(s, '\n', (size_t)(sf->text + sf->len - s));

			sf->lines[sf->nl].s = s;
			sf->lines[sf->nl].n = e ? (size_t)(e - s) : (size_t)(sf->text + sf->len - s);
			sf->nl++;
			s = e ? e + 1 : sf->text + sf->len;
		}
		/* Its own fabric, where fakefab reads the format (no routers) */
		if (ff_parse(&ff, sf->text) == 0 && fabric_new(&sf->f) == 0 &&
		    (ff_discover(&ff, sf->f, NULL) < 0 || lid_assign(sf->f, 0, NULL, NULL, &ls) < 0))
			sf->f = fabric_free(sf->f);
		ff_free(&ff);
		if (sf->f)
			sf->pieces = pieces(sf->f);
		nseeds++;
	}
	rng = seed * UINT64_C(0x9e3779b97f4a7c15) | 1;
	for (unsigned long it = 0; it < iters && nseeds; it++) {
		struct seedfile *sf = &seeds[below((unsigned int)nseeds)];
		struct out o = { 0 };
		struct plan *p = NULL;
		char err[1024] = "", name[32];
		unsigned int m1 = below((unsigned int)sf->nl), m2 = below(2) ? below((unsigned int)sf->nl) :
									  UINT32_MAX;
		unsigned int lines = 0;
		int r;

		snprintf(name, sizeof(name), "fuzz%lu.plan", it);
		for (size_t k = 0; k < sf->nl; k++) {
			if (k == m1 || k == m2) {
				mutate(&o, &sf->lines[k], sf->lines, sf->nl);
			} else {
				put(&o, sf->lines[k].s, sf->lines[k].n);
				puts_(&o, "\n");
			}
		}
		/* Sometimes cut anywhere, as a transfer that broke off */
		if (!below(8) && o.n)
			o.n = below((unsigned int)o.n);
		for (size_t k = 0; k < o.n; k++)
			lines += o.b[k] == '\n';
		r = plan_parse(o.b ? o.b : "", o.n, name, &p, err, sizeof(err));
		if (r < 0) {
			unsigned long line = 0;
			size_t nl = strlen(name);

			refused++;
			if (strncmp(err, name, nl) || err[nl] != ':' ||
			    (sscanf(err + nl + 1, "%lu:", &line) == 1 && (line < 1 || line > lines + 1)))
				finding(it, "refusal without the name and a line in the file: %s", err);
			else if (!strstr(err, "out of memory") && line == 0)
				finding(it, "refusal without a line: %s", err);
		} else {
			accepted++;
			check_plan(it, p);
			if (sf->f) {
				compared++;
				check_report(it, p, sf->f, false, sf->pieces);
				check_report(it, p, sf->f, true, sf->pieces);
			}
		}
		plan_free(p);
		free(o.b);
	}
	for (int i = 0; i < nseeds; i++) {
		free(seeds[i].text);
		free(seeds[i].lines);
		fabric_free(seeds[i].f);
	}
	free(seeds);
	printf("fuzz_plan: seed %lu, %lu plans, %lu accepted (%lu compared with a fabric), %lu "
	       "refused; %lu findings\n", seed, iters, accepted, compared, refused, findings);
	CHECK_EQ(findings, 0);
	CHECK(accepted > iters / 10);
	CHECK(refused > iters / 10);
	return unit_report();
}
