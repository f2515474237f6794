/* SPDX-License-Identifier: MIT */
/*
 * The fabric as a batch scheduler needs it (issue 21): which hosts share a
 * leaf switch and which switches sit above the leaves, what Slurm's
 * topology/tree plugin reads as topology.conf (smctl topology). Pure
 * logic: no I/O.
 *
 * A host is a CA's host name, the first word of its NodeDescription
 * ("node17 mlx5_0"); a host with several ports or HCAs appears once, under
 * the switch its first port is cabled to (its HCAs in description order,
 * then by GUID; their ports in order). A leaf is a switch with hosts;
 * every other switch is one level above the nearest leaf's level, and
 * lists the switches one level below it that it is cabled to. Names keep
 * only what Slurm accepts in a name (letters, digits, '-', '_', '.'; the
 * rest become '_'); two switches that would share a name both get their
 * GUID appended.
 */
#ifndef SMD_TOPO_SCHED_H
#define SMD_TOPO_SCHED_H

#include <stddef.h>
#include <stdint.h>

#include "topo/fabric.h"

#define SCHED_NAME_LEN	(SMP_DATA_SIZE + 24)

struct sched_switch {
	const struct fab_node *node;
	char name[SCHED_NAME_LEN];
	unsigned int level;		/* 0: a leaf */
	uint32_t *hosts;		/* indexes into sched_tree.hosts, by name */
	size_t nhosts;
	uint32_t *below;		/* indexes into sched_tree.sw, one level down */
	size_t nbelow;
};

struct sched_host {
	char name[SCHED_NAME_LEN];
	const struct fab_node *ca;	/* the CA and port that place it */
	uint8_t port;
	uint32_t leaf;			/* index into sched_tree.sw */
};

struct sched_tree {
	struct sched_switch *sw;	/* by level, then name */
	size_t nsw;
	struct sched_host *hosts;	/* by name */
	size_t nhosts;
	unsigned int levels;		/* 0 without switches */
	size_t unnamed;			/* CAs without a host name: left out */
	size_t unplaced;		/* hosts none of whose ports is cabled to a switch */
	size_t renamed;			/* names changed to what Slurm accepts */
	size_t unleveled;		/* switches no leaf reaches: left out */
};

/* 0 with *out, or -ENOMEM */
int sched_tree_build(const struct fabric *f, struct sched_tree **out);
struct sched_tree *sched_tree_free(struct sched_tree *t);
/*
 * names[0..n) as one Slurm hostlist expression, ranges where trailing
 * numbers run on ("h2_[0-17],login1"; zero-padded numbers keep their
 * width); malloc'd, NULL when out of memory.
 */
char *sched_hostlist(const char *const *names, size_t n);

#endif
