// SPDX-License-Identifier: MIT
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "iba/iba.h"
#include "topo/pathmap.h"

/* Open addressing, linear probing, at most half full */
struct pm_entry {
	uint64_t guid;			/* 0: empty slot */
	uint8_t hops;
	uint8_t port[SMP_MAX_HOPS];	/* exit ports 1..hops */
};

struct path_map {
	struct pm_entry *slots;
	size_t size, used;
};

/* FNV-1a over the hop count and the exit ports */
static size_t pm_hash(const uint8_t *port, unsigned int hops, size_t size)
{
	uint64_t h = UINT64_C(0xcbf29ce484222325) ^ hops;

	h *= UINT64_C(0x100000001b3);
	for (unsigned int i = 1; i <= hops; i++)
		h = (h ^ port[i]) * UINT64_C(0x100000001b3);
	return (size_t)(h ^ h >> 29) & (size - 1);
}

static bool pm_same(const struct pm_entry *e, const uint8_t *port, unsigned int hops)
{
	return e->hops == hops && !memcmp(e->port, port + 1, hops);
}

int path_map_new(struct path_map **out)
{
	struct path_map *m = calloc(1, sizeof(*m));

	if (!m)
		return -ENOMEM;
	m->size = 64;
	m->slots = calloc(m->size, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return -ENOMEM;
	}
	*out = m;
	return 0;
}

struct path_map *path_map_free(struct path_map *m)
{
	if (m)
		free(m->slots);
	free(m);
	return NULL;
}

static struct pm_entry *pm_find(const struct path_map *m, const uint8_t *port, unsigned int hops)
{
	size_t i = pm_hash(port, hops, m->size);

	for (;; i = (i + 1) & (m->size - 1)) {
		struct pm_entry *e = &m->slots[i];

		if (!e->guid || pm_same(e, port, hops))
			return e;
	}
}

static int pm_grow(struct path_map *m)
{
	struct pm_entry *old = m->slots;
	size_t n = m->size;

	m->slots = calloc(n * 2, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -ENOMEM;
	}
	m->size = n * 2;
	for (size_t i = 0; i < n; i++) {
		uint8_t port[SMP_MAX_HOPS + 1];

		if (!old[i].guid)
			continue;
		memcpy(port + 1, old[i].port, old[i].hops);
		*pm_find(m, port, old[i].hops) = old[i];
	}
	free(old);
	return 0;
}

int path_map_put(struct path_map *m, const uint8_t *port, unsigned int hops, uint64_t guid)
{
	struct pm_entry *e;
	int r;

	if (hops > SMP_MAX_HOPS || !guid)
		return -EINVAL;
	if ((m->used + 1) * 2 > m->size) {
		r = pm_grow(m);
		if (r < 0)
			return r;
	}
	e = pm_find(m, port, hops);
	if (!e->guid) {
		m->used++;
		memset(e, 0, sizeof(*e));
		e->hops = (uint8_t)hops;
		memcpy(e->port, port + 1, hops);
	}
	e->guid = guid;
	return 0;
}

uint64_t path_map_get(const struct path_map *m, const uint8_t *port, unsigned int hops)
{
	if (!m || hops > SMP_MAX_HOPS)
		return 0;
	return pm_find(m, port, hops)->guid;
}

void path_map_clear(struct path_map *m)
{
	memset(m->slots, 0, m->size * sizeof(*m->slots));
	m->used = 0;
}

size_t path_map_count(const struct path_map *m)
{
	return m->used;
}
