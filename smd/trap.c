// SPDX-License-Identifier: MIT
/* Traps: what they mean, from whom, how often (policy in smd/trap.h) */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mad/port.h"
#include "mad/txn.h"
#include "mad/wire.h"
#include "util/log.h"
#include "smd/mkey.h"
#include "smd/smd.h"
#include "smd/trap.h"
#include "topo/fabric.h"
#include "topo/route.h"

#define US	1000000ull

struct trap_src {
	uint64_t last_us;		/* the last trap */
	uint64_t sweep_us;		/* the last heavy sweep it started */
	uint64_t win_us;		/* start of its flood window */
	uint32_t win_count;		/* traps in that window */
	bool flooding;
	bool deferred;			/* a change of its waits for the deferred sweep */
};

struct trap_table {
	struct trap_src *src;		/* [LID_UCAST_MAX + 1], by source LID */
	uint16_t *deferred;		/* LIDs with deferred set */
	uint32_t ndeferred;
	uint64_t due_us;
	struct trap_stats st;
};

int trap_table_new(struct trap_table **out)
{
	struct trap_table *t = calloc(1, sizeof(*t));

	if (!t)
		return -ENOMEM;
	/* Zero pages until a LID sends a trap: 2 MB reserved, little resident */
	t->src = calloc(LID_UCAST_MAX + 1, sizeof(*t->src));
	t->deferred = calloc(LID_UCAST_MAX + 1, sizeof(*t->deferred));
	if (!t->src || !t->deferred) {
		trap_table_free(t);
		return -ENOMEM;
	}
	*out = t;
	return 0;
}

void trap_table_free(struct trap_table *t)
{
	if (!t)
		return;
	free(t->src);
	free(t->deferred);
	free(t);
}

static void undefer(struct trap_table *t, uint16_t lid)
{
	for (uint32_t i = 0; i < t->ndeferred; i++)
		if (t->deferred[i] == lid) {
			t->deferred[i] = t->deferred[--t->ndeferred];
			break;
		}
	t->src[lid].deferred = false;
	if (!t->ndeferred)
		t->due_us = 0;
}

enum trap_verdict trap_judge(struct trap_table *t, const struct fabric *f, uint16_t slid,
			     bool generic, uint16_t num, uint64_t now_us,
			     const struct fab_port **src)
{
	const struct fab_port *ep = f ? fabric_port_by_lid(f, slid) : NULL;
	struct trap_src *s;
	uint64_t due;

	t->st.total++;
	*src = ep;
	if (!ep) {
		t->st.unknown++;
		return TRAP_UNKNOWN;
	}
	s = &t->src[slid];
	if (s->flooding && now_us - s->last_us >= TRAP_QUIET_S * US)
		s->flooding = false;
	s->last_us = now_us;
	if (!s->win_us || now_us - s->win_us >= TRAP_FLOOD_WINDOW_S * US) {
		s->win_us = now_us;
		s->win_count = 0;
	}
	s->win_count++;
	if (s->flooding) {
		t->st.flooding++;
		return TRAP_FLOODING;
	}
	if (s->win_count > TRAP_FLOOD_COUNT) {
		s->flooding = true;
		if (s->deferred)
			undefer(t, slid);
		t->st.flood_starts++;
		t->st.flooding++;
		return TRAP_FLOOD_START;
	}
	switch (trap_kind(generic, num, ep->node->type == NODE_TYPE_SWITCH)) {
	case TRAP_ERROR:
	case TRAP_SECURITY:
		t->st.reported++;
		return TRAP_REPORT;
	case TRAP_OTHER:
		t->st.ignored++;
		return TRAP_IGNORE;
	case TRAP_CHANGE:
		break;
	}
	if (!s->sweep_us || now_us - s->sweep_us >= TRAP_HOLDOFF_S * US) {
		s->sweep_us = now_us;
		t->st.swept++;
		return TRAP_SWEEP;
	}
	t->st.deferred++;
	if (!s->deferred) {
		s->deferred = true;
		t->deferred[t->ndeferred++] = slid;
		due = s->sweep_us + TRAP_HOLDOFF_S * US;
		if (!t->due_us || due < t->due_us)
			t->due_us = due;
	}
	return TRAP_DEFER;
}

void trap_sweep_started(struct trap_table *t)
{
	if (!t)
		return;
	while (t->ndeferred)
		undefer(t, t->deferred[t->ndeferred - 1]);
}

uint64_t trap_due(const struct trap_table *t)
{
	return t ? t->due_us : 0;
}

const struct trap_stats *trap_stats(const struct trap_table *t)
{
	return &t->st;
}

unsigned int trap_flooders(const struct trap_table *t, uint64_t now_us, uint16_t *lids,
			   unsigned int n)
{
	unsigned int k = 0;

	/* A flooder is rare and listing it is rare: a plain scan */
	for (uint32_t lid = 1; t->st.flood_starts && lid <= LID_UCAST_MAX; lid++) {
		const struct trap_src *s = &t->src[lid];

		if (!s->flooding || now_us - s->last_us >= TRAP_QUIET_S * US)
			continue;
		if (k < n)
			lids[k] = (uint16_t)lid;
		k++;
	}
	return k;
}

/* ---- the daemon's side ---- */

static const char *port_name(const struct fab_port *p, char *buf, size_t len)
{
	const struct fab_node *n = p->node;

	snprintf(buf, len, "%s port %u (GUID 0x%016" PRIx64 ")",
		 n->desc_valid && n->desc[0] ? n->desc : "(no description)", p->num, p->guid);
	return buf;
}

static void disable_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	uint64_t guid = (uint64_t)(uintptr_t)arg;

	if (status < 0)
		log_warn("trap flood: disabling port %u of switch 0x%016" PRIx64 " failed: %s",
			 req->hdr.attr_mod, guid, strerror(-status));
	else
		log_notice("trap flood: port %u of switch 0x%016" PRIx64 " disabled",
			   req->hdr.attr_mod, guid);
}

/*
 * trap_flood_action = disable: PortPhysicalState Disabled (IBA 14.2.5.6) on
 * the switch port the flooder hangs off: the switch is the fabric's, the
 * flooder's own port is not to be trusted to obey. Every other field is
 * the port's own, or "no change".
 */
static void flood_disable(struct smd *smd, const struct fab_port *ep)
{
	struct fab_node *sw;
	struct port_info pi;
	struct smp req;
	uint8_t num;

	sw = route_attach_switch(ep, &num);
	if (!sw || sw == ep->node || !num || !sw->ports[num].pi_valid) {
		log_warn("trap flood: LID %u is a switch or hangs off none: reported only",
			 ep->lid);
		return;
	}
	pi = sw->ports[num].pi;
	pi.port_state = PORT_STATE_NOP;
	pi.phys_state = 3;		/* Disabled */
	pi.link_down_default_state = 0;
	pi.link_width_enabled = 0;
	pi.link_speed_enabled = 0;
	pi.link_speed_ext_enabled = 0;
	pi.link_speed_ext_enabled2 = 0;	/* as written before IBA 1.7: no change */
	mkey_fill(smd, &sw->ports[num], &pi);
	if (smp_init_dr(&req, MAD_METHOD_SET, SMP_ATTR_PORT_INFO, num, &sw->path) < 0)
		return;
	port_info_encode(&pi, req.data);
	if (txn_submit(smd->txn, &req, 0, disable_cb, (void *)(uintptr_t)sw->guid) < 0)
		log_warn("trap flood: cannot send the PortInfo Set to disable the port");
}

static void repress(struct smd *smd, const uint8_t *mad, size_t len, const struct mad_addr *from)
{
	uint8_t buf[MAD_SIZE];
	struct smp smp;

	/*
	 * IBA 13.4.9: TrapRepress, same TID and attribute, stops the SMA
	 * repeating it; with the port's M_Key, or it is a violation (14.2.4)
	 */
	if (smp_decode(mad, len, &smp) < 0 || smp.hdr.mgmt_class != MAD_CLASS_SMI)
		return;
	smp.hdr.method = MAD_METHOD_TRAP_REPRESS;
	smp.hdr.status = 0;
	if (mkey_for_lid(smd, from->slid, &smp.mkey) < 0) {
		log_debug("trap from LID %u not repressed: smd does not know its M_Key",
			  from->slid);
		return;
	}
	/* To the trap's sender as the trap came (its SL and P_Key index) */
	if (smp_encode(&smp, buf) == 0)
		smd_send(smd, MAD_AGENT_SMI, buf, MAD_SIZE, from, 0);
}

void trap_handle(struct smd *smd, const uint8_t *mad, size_t len, const struct mad_addr *from)
{
	const struct fab_port *src = NULL;
	enum trap_verdict v;
	uint16_t num = 0;
	bool generic = false;
	char lbl[160];

	smd->stats.traps++;
	repress(smd, mad, len, from);
	{
		struct notice_summary ns;
		struct mad_summary ms;

		if (mad_summarize(mad, len, &ms) == 0 && ms.mgmt_class == MAD_CLASS_SMI &&
		    notice_decode(mad, len, &ns) == 0) {
			generic = ns.generic;
			num = ns.trap_number;
		}
	}
	if (!smd->trapt)
		return;
	v = trap_judge(smd->trapt, smd->fabric, from->slid, generic, num, txn_now_us(), &src);
	/*
	 * A port's local changes (144) and SystemImageGUID (145) go on to the
	 * SA's subscribers (srp_daemon finds targets by 144), from known,
	 * non-flooding sources only
	 */
	if ((v == TRAP_SWEEP || v == TRAP_DEFER) && (num == 144 || num == 145) && smd->sa &&
	    smd->sa_serving)
		sa_report_forward(smd->sa, mad + 64, SMP_DATA_SIZE, from->slid);
	/* Bad M_Key: counted and answered whatever the source's rate (smd/mkey.h) */
	if (generic && num == 256)
		mkey_trap(smd, mad, len, v == TRAP_UNKNOWN ? NULL : src, from->slid);
	switch (v) {
	case TRAP_SWEEP:
		log_debug("trap %u from %s (LID %u): heavy sweep", num,
			  port_name(src, lbl, sizeof(lbl)), from->slid);
		smd->traps++;
		smd->resweep = true;
		break;
	case TRAP_DEFER:
		log_debug("trap %u from %s (LID %u): looked at when its hold-off ends", num,
			  port_name(src, lbl, sizeof(lbl)), from->slid);
		break;
	case TRAP_REPORT:
		if (num == 256 && smd->mkey)
			break;		/* mkey_trap reported it */
		log_warn("trap %u (%s) from %s (LID %u)", num,
			 num == 129 ? "link integrity errors" : num == 130 ? "buffer overruns" :
			 num == 131 ? "flow control watchdog" : num == 256 ? "bad M_Key" :
			 num == 257 ? "bad P_Key" : num == 258 ? "bad Q_Key" :
			 "bad P_Key at a switch port", port_name(src, lbl, sizeof(lbl)),
			 from->slid);
		break;
	case TRAP_IGNORE:
		log_debug("trap %u (%s) from LID %u: not a change smd sweeps for", num,
			  generic ? "generic" : "vendor", from->slid);
		break;
	case TRAP_UNKNOWN:
		log_debug("trap %u from LID %u, which the model does not hold: ignored", num,
			  from->slid);
		break;
	case TRAP_FLOOD_START:
		log_warn("trap flood: %s (LID %u) sent more than %u traps in %u s; its traps are "
			 "ignored until it is quiet for %u s%s", port_name(src, lbl, sizeof(lbl)),
			 from->slid, TRAP_FLOOD_COUNT, TRAP_FLOOD_WINDOW_S, TRAP_QUIET_S,
			 smd->cfg.trap_flood_action == CONFIG_TRAP_FLOOD_DISABLE ?
			 ", and the switch port it hangs off is disabled" : "");
		if (smd->cfg.trap_flood_action == CONFIG_TRAP_FLOOD_DISABLE)
			flood_disable(smd, src);
		break;
	case TRAP_FLOODING:
		break;
	}
}
