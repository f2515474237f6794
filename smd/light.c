// SPDX-License-Identifier: MIT
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "smd/light.h"
#include "util/log.h"

struct light {
	struct smd *smd;
	struct light_result *res;
	unsigned int pending;		/* SMPs not answered yet */
	unsigned int done;		/* ... and answered (or given up) */
	uint64_t sent0, t0;		/* the transaction layer's count, the clock at start */
	int err;
};

struct light_ctx {
	struct light *l;
	struct fab_node *n;
};

static const char *name(const struct fab_node *n)
{
	return n->desc_valid && n->desc[0] ? n->desc : "(no description)";
}

static void note(struct light *l, const char *fmt, ...)
{
	va_list ap;

	if (l->res->reason[0])
		return;
	va_start(ap, fmt);
	vsnprintf(l->res->reason, sizeof(l->res->reason), fmt, ap);
	va_end(ap);
}

static void clear_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct light_ctx *c = arg;

	c->l->pending--;
	c->l->done++;
	/* Not cleared: the next light sweep finds the bit again, no harm */
	if (status == 0)
		c->n->psc_cleared = true;
	else
		log_debug_errno(status, "light sweep: clearing PortStateChange on %s failed",
				name(c->n));
	free(c);
}

static void get_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct light_ctx *c = arg;
	struct light *l = c->l;
	struct fab_node *n = c->n;
	struct switch_info si;
	struct smp set;
	int r;

	l->pending--;
	l->done++;
	if (status == -ECANCELED) {
		free(c);
		return;
	}
	if (status < 0 || switch_info_decode(resp->data, &si) < 0) {
		l->res->silent++;
		note(l, "switch %s (GUID 0x%016" PRIx64 ") does not answer SwitchInfo", name(n),
		     n->guid);
		free(c);
		return;
	}
	if (si.lft_top != n->si.lft_top || si.life_time_value != n->si.life_time_value) {
		/* A reset switch comes back with LinearFDBTop 0 */
		l->res->differ++;
		note(l, "switch %s (GUID 0x%016" PRIx64 ") holds LinearFDBTop %u, not %u: reset?",
		     name(n), n->guid, si.lft_top, n->si.lft_top);
	}
	if (!si.port_state_change) {
		n->psc_cleared = true;
		free(c);
		return;
	}
	l->res->changed++;
	note(l, "PortStateChange on switch %s (GUID 0x%016" PRIx64 ")", name(n), n->guid);
	/*
	 * IBA 14.2.5.4: writing 1 clears PortStateChange. The rest of the Set
	 * is what the switch just reported, so nothing else changes.
	 */
	si.port_state_change = 1;
	smp_init_dr(&set, MAD_METHOD_SET, SMP_ATTR_SWITCH_INFO, 0, &n->path);
	switch_info_encode(&si, set.data);
	l->res->sets++;
	r = txn_submit(l->smd->txn, &set, 0, clear_cb, c);
	if (r < 0) {
		l->err = r;
		free(c);
		return;
	}
	l->pending++;
}

int light_start(struct smd *smd, struct light_result *res, struct light **out)
{
	struct light *l = calloc(1, sizeof(*l));
	const struct txn_stats *ts = txn_stats(smd->txn);
	struct fabric *f = smd->fabric;
	int r;

	*out = NULL;
	if (!l)
		return -ENOMEM;
	memset(res, 0, sizeof(*res));
	l->smd = smd;
	l->res = res;
	l->sent0 = ts->sent;
	l->t0 = txn_now_us();
	for (size_t i = 0; f && i < f->nswitches; i++) {
		struct fab_node *n = f->switches[i];
		struct light_ctx *c;
		struct smp req;

		n->psc_cleared = false;
		/* One that never answered SwitchInfo is known broken: not news */
		if (!n->si_valid)
			continue;
		c = malloc(sizeof(*c));
		if (!c) {
			l->err = -ENOMEM;
			break;
		}
		c->l = l;
		c->n = n;
		smp_init_dr(&req, MAD_METHOD_GET, SMP_ATTR_SWITCH_INFO, 0, &n->path);
		r = txn_submit(smd->txn, &req, 0, get_cb, c);
		if (r < 0) {
			free(c);
			l->err = r;
			break;
		}
		l->pending++;
		res->switches++;
	}
	/* Even after a failure: what was submitted is answered before light_end */
	*out = l;
	return 0;
}

bool light_done(const struct light *l)
{
	return l->pending == 0;
}

int light_end(struct light *l)
{
	const struct txn_stats *ts = txn_stats(l->smd->txn);
	int r = l->err;

	l->res->smps = ts->sent - l->sent0;
	l->res->seconds = (double)(txn_now_us() - l->t0) / 1e6;
	free(l);
	return r;
}

void light_progress(const struct light *l, struct sweep_progress *p)
{
	memset(p, 0, sizeof(*p));
	p->kind = "light";
	p->phase = "switch-info";
	p->phase_no = p->phases = 1;
	p->seconds = p->phase_seconds = (double)(txn_now_us() - l->t0) / 1e6;
	p->smps_sent = txn_stats(l->smd->txn)->sent - l->sent0;
	p->smps_done = l->done;
	p->smps_waiting = l->pending;
}
