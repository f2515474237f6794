// SPDX-License-Identifier: MIT
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/fakefab.h"

static int ff_add(struct fakefab *ff, const char *name, uint8_t type, int nports, uint64_t guid)
{
	struct ff_node *n;

	if (nports < 1 || nports > FF_MAX_PORTS)
		return -EINVAL;
	if (ff->n == ff->cap) {
		int ncap = ff->cap ? ff->cap * 2 : 64;
		struct ff_node *nn = realloc(ff->nodes, (size_t)ncap * sizeof(*nn));

		if (!nn)
			return -ENOMEM;
		ff->nodes = nn;
		ff->cap = ncap;
	}
	n = &ff->nodes[ff->n];
	memset(n, 0, sizeof(*n));
	snprintf(n->name, sizeof(n->name), "%s", name);
	n->type = type;
	n->nports = (uint8_t)nports;
	n->guid = guid ? guid : 0x5000000000000000ull + (uint64_t)ff->n * 0x100;
	for (int i = 0; i <= FF_MAX_PORTS; i++)
		n->peer[i] = -1;
	return ff->n++;
}

int ff_find(const struct fakefab *ff, const char *name)
{
	for (int i = 0; i < ff->n; i++)
		if (!strcmp(ff->nodes[i].name, name))
			return i;
	return -1;
}

static const char *quoted(const char *s, char *out, size_t len)
{
	const char *q = strchr(s, '"'), *e;

	if (!q || !(e = strchr(q + 1, '"')) || (size_t)(e - q - 1) >= len)
		return NULL;
	memcpy(out, q + 1, (size_t)(e - q - 1));
	out[e - q - 1] = 0;
	return e + 1;
}

int ff_parse(struct fakefab *ff, const char *text)
{
	struct pending {
		int node;
		int port;
		char remote[64];
		int rport;
	} *links = NULL;
	size_t nlinks = 0, lcap = 0;
	char *copy = strdup(text), *save = NULL, *line;
	uint64_t next_guid = 0;
	int cur = -1, r = 0;

	memset(ff, 0, sizeof(*ff));
	ff->sm_node = -1;
	if (!copy)
		return -ENOMEM;
	for (line = strtok_r(copy, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char name[64];
		int nports, port, rport;
		const char *rest;

		while (isspace((unsigned char)*line))
			line++;
		if (!*line || *line == '#')
			continue;
		if (!strncmp(line, "caguid=", 7) || !strncmp(line, "switchguid=", 11)) {
			next_guid = strtoull(strchr(line, '=') + 1, NULL, 0);
			continue;
		}
		if (!strncmp(line, "Switch", 6) || !strncmp(line, "Hca", 3) ||
		    !strncmp(line, "Ca", 2)) {
			bool sw = line[0] == 'S';

			if (sscanf(line + (sw ? 6 : (line[1] == 'c' ? 3 : 2)), "%d", &nports) != 1 ||
			    !quoted(line, name, sizeof(name))) {
				r = -EINVAL;
				break;
			}
			cur = ff_add(ff, name, sw ? NODE_TYPE_SWITCH : NODE_TYPE_CA, nports,
				     next_guid);
			next_guid = 0;
			if (cur < 0) {
				r = cur;
				break;
			}
			continue;
		}
		if (*line == '[' && cur >= 0) {
			if (sscanf(line, "[%d]", &port) != 1 || !(rest = quoted(line, name, sizeof(name))) ||
			    sscanf(rest, "[%d]", &rport) != 1) {
				r = -EINVAL;
				break;
			}
			if (nlinks == lcap) {
				lcap = lcap ? lcap * 2 : 256;
				links = realloc(links, lcap * sizeof(*links));
				if (!links) {
					r = -ENOMEM;
					break;
				}
			}
			links[nlinks].node = cur;
			links[nlinks].port = port;
			snprintf(links[nlinks].remote, sizeof(links[nlinks].remote), "%s", name);
			links[nlinks].rport = rport;
			nlinks++;
			continue;
		}
		/* vendid=, devid=, sysimgguid= and the like are ignored */
	}
	for (size_t i = 0; r == 0 && i < nlinks; i++) {
		struct ff_node *a = &ff->nodes[links[i].node];
		int b = ff_find(ff, links[i].remote);

		if (b < 0 || links[i].port < 1 || links[i].port > a->nports ||
		    links[i].rport < 1 || links[i].rport > ff->nodes[b].nports) {
			fprintf(stderr, "fakefab: bad link %s[%d] -> %s[%d]\n", a->name,
				links[i].port, links[i].remote, links[i].rport);
			r = -EINVAL;
			break;
		}
		a->peer[links[i].port] = b;
		a->peer_port[links[i].port] = (uint8_t)links[i].rport;
		ff->nodes[b].peer[links[i].rport] = links[i].node;
		ff->nodes[b].peer_port[links[i].rport] = (uint8_t)links[i].port;
	}
	free(links);
	free(copy);
	if (r == 0 && ff->n > 0) {
		/* Like ibsim: the SM sits on the first node, at its first cabled port */
		ff->sm_node = 0;
		for (int p = 1; p <= ff->nodes[0].nports; p++)
			if (ff->nodes[0].peer[p] >= 0) {
				ff->sm_port = (uint8_t)p;
				break;
			}
		if (!ff->sm_port)
			ff->sm_port = 1;
	}
	return r;
}

int ff_load(struct fakefab *ff, const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf;
	long len;
	int r;

	if (!f)
		return -errno;
	fseek(f, 0, SEEK_END);
	len = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = calloc(1, (size_t)len + 1);
	if (!buf || fread(buf, 1, (size_t)len, f) != (size_t)len) {
		free(buf);
		fclose(f);
		return -EIO;
	}
	fclose(f);
	r = ff_parse(ff, buf);
	free(buf);
	return r;
}

void ff_free(struct fakefab *ff)
{
	free(ff->nodes);
	memset(ff, 0, sizeof(*ff));
}

/* Follow a directed route (IBA 14.2.2): returns node index, entry port */
static int ff_walk(const struct fakefab *ff, const struct dr_path *path, uint8_t *in_port)
{
	int cur = ff->sm_node;
	uint8_t in = ff->sm_port;

	for (unsigned int h = 1; h <= path->hops; h++) {
		const struct ff_node *n = &ff->nodes[cur];
		uint8_t out = path->port[h];

		/* Only the first hop may leave a CA, and only through the SM's port */
		if (n->type != NODE_TYPE_SWITCH && (h > 1 || out != ff->sm_port))
			return -1;
		if (out < 1 || out > n->nports || n->peer[out] < 0)
			return -1;
		in = n->peer_port[out];
		cur = n->peer[out];
		if (ff->nodes[cur].dead)
			return -1;
	}
	*in_port = in;
	return cur;
}

int ff_answer(const struct fakefab *ff, const struct disc_probe *p, struct node_info *ni,
	      struct node_desc *nd, struct switch_info *si, struct port_info *pi)
{
	uint8_t in;
	int idx = ff_walk(ff, &p->path, &in);
	const struct ff_node *n;

	if (idx < 0)
		return -ETIMEDOUT;
	n = &ff->nodes[idx];
	switch (p->kind) {
	case DISC_NODE_INFO:
		memset(ni, 0, sizeof(*ni));
		ni->base_version = 1;
		ni->class_version = 1;
		ni->node_type = n->type;
		ni->num_ports = n->nports;
		ni->sys_guid = n->guid;
		ni->node_guid = n->guid;
		ni->local_port = n->type == NODE_TYPE_SWITCH ? in : in;
		ni->port_guid = n->type == NODE_TYPE_SWITCH ? n->guid : n->guid + in;
		return 0;
	case DISC_NODE_DESC:
		snprintf(nd->desc, sizeof(nd->desc), "%s", n->name);
		return 0;
	case DISC_SWITCH_INFO:
		if (n->type != NODE_TYPE_SWITCH)
			return -EREMOTEIO;
		memset(si, 0, sizeof(*si));
		si->lft_cap = 49152;
		si->mft_cap = 1024;	/* as ibsim's switches */
		return 0;
	case DISC_PORT_INFO:
		if (p->port > n->nports)
			return -EREMOTEIO;
		memset(pi, 0, sizeof(*pi));
		pi->local_port = p->port;
		pi->mtu_cap = 4;
		pi->vl_cap = 4;
		pi->link_width_active = 2;	/* 4x SDR: 10 Gb/s */
		pi->link_speed_active = 1;
		if (p->port == 0) {
			pi->port_state = PORT_STATE_ACTIVE;
			pi->phys_state = PHYS_STATE_LINKUP;
		} else if (n->peer[p->port] >= 0 && !ff->nodes[n->peer[p->port]].dead) {
			pi->port_state = PORT_STATE_INIT;
			pi->phys_state = PHYS_STATE_LINKUP;
		} else if (n->peer[p->port] >= 0) {
			/* The cable is there and up; the node behind it is silent */
			pi->port_state = PORT_STATE_INIT;
			pi->phys_state = PHYS_STATE_LINKUP;
		} else {
			pi->port_state = PORT_STATE_DOWN;
			pi->phys_state = 2;	/* Polling */
		}
		return 0;
	}
	return -EINVAL;
}

int ff_discover(const struct fakefab *ff, struct fabric *f, struct disc_stats *st)
{
	struct disc *d;
	struct disc_probe p;
	int r;

	r = disc_new(f, &d);
	if (r < 0)
		return r;
	r = disc_start(d);
	while (r == 0 && disc_next(d, &p)) {
		struct node_info ni;
		struct node_desc nd;
		struct switch_info si;
		struct port_info pi;
		int a = ff_answer(ff, &p, &ni, &nd, &si, &pi);

		if (a < 0) {
			disc_failed(d, &p, a);
			continue;
		}
		switch (p.kind) {
		case DISC_NODE_INFO: r = disc_node_info(d, &p, &ni); break;
		case DISC_NODE_DESC: r = disc_node_desc(d, &p, &nd); break;
		case DISC_SWITCH_INFO: r = disc_switch_info(d, &p, &si); break;
		case DISC_PORT_INFO: r = disc_port_info(d, &p, &pi); break;
		}
	}
	if (st)
		*st = *disc_stats(d);
	disc_free(d);
	return r;
}
