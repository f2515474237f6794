// SPDX-License-Identifier: MIT
/* The scheduler's tree of the fabric (topo/sched.h) and Slurm hostlists. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "topo/sched.h"

/* Letters, digits, '-', '_', '.': what a Slurm node or switch name may hold */
static bool name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '-' || c == '_' || c == '.';
}

/* The first n bytes of s as a name; true when a byte had to change */
static bool sanitize(const char *s, size_t n, char *out, size_t len)
{
	bool changed = false;
	size_t i;

	for (i = 0; i < n && i + 1 < len && s[i]; i++) {
		out[i] = name_char(s[i]) ? s[i] : '_';
		changed |= out[i] != s[i];
	}
	out[i] = 0;
	return changed;
}

struct ca_ent {
	const struct fab_node *n;
	char name[SCHED_NAME_LEN];
};

static int cmp_ca(const void *a, const void *b)
{
	const struct ca_ent *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	c = strcmp(x->n->desc, y->n->desc);
	if (c)
		return c;
	return x->n->guid < y->n->guid ? -1 : x->n->guid > y->n->guid;
}

/* The port of a CA that places its host: the first cabled to a switch */
static const struct fab_port *placing_port(const struct fab_node *n)
{
	for (unsigned int k = 1; k <= n->num_ports; k++) {
		const struct fab_port *p = &n->ports[k];

		if (p->peer && p->peer->node->type == NODE_TYPE_SWITCH && p->peer->num)
			return p;
	}
	return NULL;
}

static int cmp_sw(const void *a, const void *b)
{
	const struct sched_switch *x = a, *y = b;

	if (x->level != y->level)
		return x->level < y->level ? -1 : 1;
	return strcmp(x->name, y->name);
}

static const struct sched_switch *name_sort_base;

static int cmp_by_name(const void *a, const void *b)
{
	return strcmp(name_sort_base[*(const uint32_t *)a].name,
		      name_sort_base[*(const uint32_t *)b].name);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* Hosts: one per name, placed by its first CA's first port cabled to a switch */
static int place_hosts(const struct fabric *f, struct sched_tree *t)
{
	struct ca_ent *cas = calloc(f->nnodes ? f->nnodes : 1, sizeof(*cas));
	size_t n = 0;

	if (!cas)
		return -ENOMEM;
	for (size_t i = 0; i < f->nnodes; i++) {
		const struct fab_node *nd = f->nodes[i];
		size_t w;

		if (nd->type != NODE_TYPE_CA)
			continue;
		w = nd->desc_valid ? strcspn(nd->desc, " \t") : 0;
		if (!w) {
			t->unnamed++;
			continue;
		}
		cas[n].n = nd;
		t->renamed += sanitize(nd->desc, w, cas[n].name, sizeof(cas[n].name));
		n++;
	}
	if (n)
		qsort(cas, n, sizeof(*cas), cmp_ca);
	t->hosts = calloc(n ? n : 1, sizeof(*t->hosts));
	if (!t->hosts) {
		free(cas);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n;) {
		const struct fab_port *p = NULL;
		size_t j = i;

		for (; j < n && !strcmp(cas[j].name, cas[i].name); j++)
			if (!p)
				p = placing_port(cas[j].n);
		if (p) {
			struct sched_host *h = &t->hosts[t->nhosts++];

			memcpy(h->name, cas[i].name, sizeof(h->name));
			h->ca = p->node;
			h->port = p->num;
			h->leaf = p->peer->node->idx;	/* a node index until the switches are known */
		} else {
			t->unplaced++;
		}
		i = j;
	}
	free(cas);
	return 0;
}

/* Levels by breadth-first search from the leaves; UINT_MAX: no leaf reaches it */
static int level_switches(const struct fabric *f, struct sched_tree *t, unsigned int *level)
{
	uint32_t *queue = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*queue));
	size_t head = 0, tail = 0;

	if (!queue)
		return -ENOMEM;
	for (size_t i = 0; i < f->nnodes; i++)
		level[i] = UINT_MAX;
	for (size_t i = 0; i < t->nhosts; i++) {
		uint32_t s = t->hosts[i].leaf;

		if (level[s] == UINT_MAX) {
			level[s] = 0;
			queue[tail++] = s;
		}
	}
	while (head < tail) {
		const struct fab_node *n = f->nodes[queue[head++]];

		for (unsigned int k = 1; k <= n->num_ports; k++) {
			const struct fab_port *p = &n->ports[k];
			uint32_t o;

			if (!p->peer || p->peer->node->type != NODE_TYPE_SWITCH)
				continue;
			o = p->peer->node->idx;
			if (level[o] == UINT_MAX) {
				level[o] = level[n->idx] + 1;
				queue[tail++] = o;
			}
		}
	}
	free(queue);
	return 0;
}

/* Switch names: their descriptions as names; a name two switches share gets their GUIDs */
static int name_switches(struct sched_tree *t)
{
	uint32_t *ord = malloc((t->nsw ? t->nsw : 1) * sizeof(*ord));

	if (!ord)
		return -ENOMEM;
	for (size_t i = 0; i < t->nsw; i++) {
		struct sched_switch *s = &t->sw[i];
		const struct fab_node *n = s->node;

		ord[i] = (uint32_t)i;
		if (n->desc_valid && n->desc[0])
			t->renamed += sanitize(n->desc, strlen(n->desc), s->name, sizeof(s->name));
		if (!s->name[0])
			snprintf(s->name, sizeof(s->name), "switch_%016" PRIx64, n->guid);
	}
	name_sort_base = t->sw;
	if (t->nsw)
		qsort(ord, t->nsw, sizeof(*ord), cmp_by_name);
	for (size_t i = 0; i < t->nsw;) {
		size_t j = i + 1;

		while (j < t->nsw && !strcmp(t->sw[ord[j]].name, t->sw[ord[i]].name))
			j++;
		for (size_t k = i; j - i > 1 && k < j; k++) {
			struct sched_switch *s = &t->sw[ord[k]];
			size_t l = strlen(s->name);

			if (l > sizeof(s->name) - 18)
				l = sizeof(s->name) - 18;
			snprintf(s->name + l, sizeof(s->name) - l, "_%016" PRIx64, s->node->guid);
		}
		i = j;
	}
	free(ord);
	return 0;
}

int sched_tree_build(const struct fabric *f, struct sched_tree **out)
{
	struct sched_tree *t = calloc(1, sizeof(*t));
	unsigned int *level = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*level));
	uint32_t *swix = malloc((f->nnodes ? f->nnodes : 1) * sizeof(*swix));
	int r = -ENOMEM;

	*out = NULL;
	if (!t || !level || !swix)
		goto out;
	r = place_hosts(f, t);
	if (r == 0)
		r = level_switches(f, t, level);
	if (r < 0)
		goto out;
	r = -ENOMEM;
	t->sw = calloc(f->nswitches ? f->nswitches : 1, sizeof(*t->sw));
	if (!t->sw)
		goto out;
	for (size_t i = 0; i < f->nswitches; i++) {
		const struct fab_node *n = f->switches[i];

		if (level[n->idx] == UINT_MAX) {
			t->unleveled++;
			continue;
		}
		t->sw[t->nsw].node = n;
		t->sw[t->nsw].level = level[n->idx];
		if (level[n->idx] + 1 > t->levels)
			t->levels = level[n->idx] + 1;
		t->nsw++;
	}
	r = name_switches(t);
	if (r < 0)
		goto out;
	r = -ENOMEM;
	if (t->nsw)
		qsort(t->sw, t->nsw, sizeof(*t->sw), cmp_sw);
	for (size_t i = 0; i < f->nnodes; i++)
		swix[i] = UINT32_MAX;
	for (size_t i = 0; i < t->nsw; i++)
		swix[t->sw[i].node->idx] = (uint32_t)i;
	/* Hosts are by name already: each leaf's list is too */
	for (size_t i = 0; i < t->nhosts; i++) {
		t->hosts[i].leaf = swix[t->hosts[i].leaf];
		t->sw[t->hosts[i].leaf].nhosts++;
	}
	for (size_t i = 0; i < t->nsw; i++) {
		t->sw[i].hosts = malloc((t->sw[i].nhosts + 1) * sizeof(*t->sw[i].hosts));
		if (!t->sw[i].hosts)
			goto out;
		t->sw[i].nhosts = 0;
	}
	for (size_t i = 0; i < t->nhosts; i++) {
		struct sched_switch *s = &t->sw[t->hosts[i].leaf];

		s->hosts[s->nhosts++] = (uint32_t)i;
	}
	for (size_t i = 0; i < t->nsw; i++) {
		struct sched_switch *s = &t->sw[i];
		const struct fab_node *n = s->node;

		if (!s->level)
			continue;
		s->below = malloc((n->num_ports + 1u) * sizeof(*s->below));
		if (!s->below)
			goto out;
		for (unsigned int k = 1; k <= n->num_ports; k++) {
			const struct fab_port *p = &n->ports[k];
			uint32_t o;
			bool seen = false;

			if (!p->peer || p->peer->node->type != NODE_TYPE_SWITCH)
				continue;
			o = swix[p->peer->node->idx];
			if (o == UINT32_MAX || t->sw[o].level + 1 != s->level)
				continue;
			for (size_t j = 0; j < s->nbelow && !seen; j++)
				seen = s->below[j] == o;
			if (!seen)
				s->below[s->nbelow++] = o;
		}
		if (s->nbelow)
			qsort(s->below, s->nbelow, sizeof(*s->below), cmp_u32);
	}
	r = 0;
out:
	free(level);
	free(swix);
	if (r < 0) {
		sched_tree_free(t);
		return r;
	}
	*out = t;
	return 0;
}

struct sched_tree *sched_tree_free(struct sched_tree *t)
{
	if (!t)
		return NULL;
	for (size_t i = 0; t->sw && i < t->nsw; i++) {
		free(t->sw[i].hosts);
		free(t->sw[i].below);
	}
	free(t->sw);
	free(t->hosts);
	free(t);
	return NULL;
}

/* ---- hostlists ---- */

struct hl_ent {
	const char *name;
	size_t plen;		/* prefix length: the name without its trailing digits */
	unsigned int width;	/* zero-padded numbers: their width; 0: not padded */
	unsigned long long num;
	bool has_num;
};

static int cmp_hl(const void *a, const void *b)
{
	const struct hl_ent *x = a, *y = b;
	size_t n = x->plen < y->plen ? x->plen : y->plen;
	int c = memcmp(x->name, y->name, n);

	if (c)
		return c;
	if (x->plen != y->plen)
		return x->plen < y->plen ? -1 : 1;
	if (x->has_num != y->has_num)
		return x->has_num ? 1 : -1;
	if (x->width != y->width)
		return x->width < y->width ? -1 : 1;
	if (x->num != y->num)
		return x->num < y->num ? -1 : 1;
	return strcmp(x->name, y->name);
}

static bool same_group(const struct hl_ent *a, const struct hl_ent *b)
{
	return a->has_num && b->has_num && a->plen == b->plen && a->width == b->width &&
	       !memcmp(a->name, b->name, a->plen);
}

struct strbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void __attribute__((format(printf, 2, 3))) sb_add(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->s && b->len + (size_t)n < b->cap) {
			b->len += (size_t)n;
			return;
		}
		{
			size_t cap = b->cap ? b->cap * 2 : 256;
			char *s;

			while (cap <= b->len + (size_t)n)
				cap *= 2;
			s = realloc(b->s, cap);
			if (!s) {
				b->oom = true;
				return;
			}
			b->s = s;
			b->cap = cap;
		}
	}
}

char *sched_hostlist(const char *const *names, size_t n)
{
	struct hl_ent *e = calloc(n ? n : 1, sizeof(*e));
	struct strbuf b = { 0 };

	if (!e)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		size_t len = strlen(names[i]), p = len;

		while (p > 0 && names[i][p - 1] >= '0' && names[i][p - 1] <= '9')
			p--;
		e[i].name = names[i];
		e[i].plen = len;
		/* Trailing digits make a number, unless there are too many to count */
		if (p < len && len - p <= 18) {
			e[i].plen = p;
			e[i].has_num = true;
			e[i].num = strtoull(names[i] + p, NULL, 10);
			e[i].width = names[i][p] == '0' && len - p > 1 ? (unsigned int)(len - p) : 0;
		}
	}
	if (n)
		qsort(e, n, sizeof(*e), cmp_hl);
	sb_add(&b, "%s", "");
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;

		while (j < n && same_group(&e[i], &e[j]))
			j++;
		if (b.len)
			sb_add(&b, ",");
		if (j - i == 1) {
			sb_add(&b, "%s", e[i].name);
			i = j;
			continue;
		}
		sb_add(&b, "%.*s[", (int)e[i].plen, e[i].name);
		for (size_t k = i; k < j;) {
			size_t m = k;

			/* A run of consecutive numbers (a repeated one is the same host) */
			while (m + 1 < j && (e[m + 1].num == e[m].num + 1 || e[m + 1].num == e[m].num))
				m++;
			if (k > i)
				sb_add(&b, ",");
			sb_add(&b, "%0*llu", (int)e[k].width, e[k].num);
			if (e[m].num != e[k].num)
				sb_add(&b, "-%0*llu", (int)e[m].width, e[m].num);
			k = m + 1;
		}
		sb_add(&b, "]");
		i = j;
	}
	free(e);
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}
