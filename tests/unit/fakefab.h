/* SPDX-License-Identifier: MIT */
/*
 * An in-memory fabric that answers directed-route probes like the SMAs of
 * a real one, built from an ibnetdiscover/ibsim topology text. Used to
 * drive topo/ discovery, LIDs and routing without I/O, and to check the
 * resulting forwarding tables against the true cabling.
 */
#ifndef SMD_TESTS_FAKEFAB_H
#define SMD_TESTS_FAKEFAB_H

#include <stdbool.h>
#include <stdint.h>

#include "topo/discover.h"

#define FF_MAX_PORTS 64

struct ff_node {
	char name[64];
	uint64_t guid;
	uint8_t type;
	uint8_t nports;
	int peer[FF_MAX_PORTS + 1];	/* node index or -1 */
	uint8_t peer_port[FF_MAX_PORTS + 1];
	bool dead;			/* never answers */
};

/*
 * A node that lies: called with every answer ff_answer built (node idx, the
 * port the probe entered by); it may change the answer, or return -errno to
 * drop it. Tests of hostile or buggy firmware use it.
 */
struct ff_answers {
	struct node_info *ni;
	struct node_desc *nd;
	struct switch_info *si;
	struct port_info *pi;
};

typedef int (*ff_tamper_fn)(void *ctx, const struct disc_probe *p, int idx, uint8_t in_port,
			    struct ff_answers *a);

struct fakefab {
	struct ff_node *nodes;
	int n, cap;
	int sm_node;
	uint8_t sm_port;
	ff_tamper_fn tamper;		/* NULL: every node tells the truth */
	void *tamper_ctx;
};

/* Parse topology text; 0 or -EINVAL (with a message on stderr) */
int ff_parse(struct fakefab *ff, const char *text);
int ff_load(struct fakefab *ff, const char *path);
void ff_free(struct fakefab *ff);
int ff_find(const struct fakefab *ff, const char *name);

/*
 * Answer one discovery probe as the fabric would: 0 and the attribute's
 * struct, or -ETIMEDOUT when the route leads nowhere or to a dead node.
 */
int ff_answer(const struct fakefab *ff, const struct disc_probe *p, struct node_info *ni,
	      struct node_desc *nd, struct switch_info *si, struct port_info *pi);
/*
 * Run a whole discovery of ff into f, as smd does: a rejected answer counts
 * as a failed probe (st->failed, st->rejected) and discovery goes on.
 */
int ff_discover(const struct fakefab *ff, struct fabric *f, struct disc_stats *st);

#endif
