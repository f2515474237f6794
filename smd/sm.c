// SPDX-License-Identifier: MIT
/*
 * SM election, standby polling and handover (IBA 14.4).
 *
 * Every sweep of the daemon starts in discovery, which reads the PortInfo
 * of every port; ports whose CapabilityMask has IsSM host an SM. smd asks
 * each of them for its SMInfo by directed route (so the election works
 * before any LID is assigned) and decides (IBA 14.4.1.1):
 *  - another SM is MASTER: become STANDBY and poll it, unless this SM is
 *    master itself and outranks the other (two masters after a merge: the
 *    lower one yields when its own sweep sees this one);
 *  - no master, and another SM outranks this one: STANDBY (it will be
 *    master; if it does not become one, the polls fail and smd looks again);
 *  - this SM is MASTER and a STANDBY outranks it: hand mastership over with
 *    SMInfo Set(HANDOVER), then poll the new master;
 *  - otherwise MASTER.
 * A standby programs nothing and its SA answers BUSY. It polls the master
 * every sm_poll_interval seconds; after sm_poll_retries misses in a row it
 * goes back to DISCOVERING and its next sweep (election included) makes it
 * master. LIDs survive a takeover because lid_assign keeps every valid LID
 * a port holds.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mad/port.h"
#include "mad/txn.h"
#include "mad/wire.h"
#include "util/log.h"
#include "smd/sm.h"
#include "smd/smd.h"
#include "topo/fabric.h"
#include "util/macros.h"

void sm_set_state(struct smd *smd, enum sm_state st, const char *why)
{
	enum sm_state from = smd->sm_state;

	if (from == st)
		return;
	log_notice("SM state %s -> %s: %s", sm_state_name(from), sm_state_name(st), why);
	/* A master again later asks the hosts to join their groups again */
	if (from == SM_MASTER)
		smd->rereg_done = false;
	smd->sm_state = st;
	smd->poll_misses = 0;
	/* The state's entry action (smd/loop.c), from the change itself */
	if (smd->sm_actions && (unsigned int)st < SM_STATES && smd->sm_actions->enter[st])
		smd->sm_actions->enter[st](smd, from);
}

static uint64_t own_guid(const struct smd *smd)
{
	return mad_port_attr(smd->port)->port_guid;
}

/* One SMInfo Get in flight: the answer lands in *peer */
struct sm_query {
	struct sm_peer peer;
	uint64_t key;			/* this SM's sm_key when it was sent */
	uint64_t me;			/* this SM's port GUID */
	bool answered;
};

/* One election: its SMInfo Gets, then maybe a HANDOVER Set (sm_elect_*) */
struct sm_election {
	struct sm_query q[SM_PEERS_MAX];
	size_t n;
	struct sm_query handover;	/* the Set to a better standby, once sent */
	uint64_t handover_to;		/* ... and the SM it went to */
	bool handing_over;
};

/*
 * This SM's SMInfo for port GUID to: as a request (answer false) or an
 * answer; SM_Key holds the value for that pair (sm_auth), or 0 when there
 * is no key or the requester did not show one (to 0)
 */
static struct sm_info own_info(const struct smd *smd, bool answer, uint64_t to)
{
	uint64_t key = smd->cfg.sm_key, me = own_guid(smd);

	return (struct sm_info){
		.guid = me, .sm_key = key && to ? sm_auth(key, answer, smd->act_count, me, to) : 0,
		.act_count = smd->act_count, .priority = (uint8_t)smd->cfg.sm_priority,
		.sm_state = smd->sm_state,
	};
}

static void sm_query_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct sm_query *q = arg;
	struct sm_info si;

	if (status != 0 || sm_info_decode(resp->data, &si) < 0)
		return;
	q->peer.foreign = !sm_auth_ok(q->key, true, si.act_count, si.guid, q->me, si.sm_key);
	q->peer.guid = si.guid;
	q->peer.act_count = si.act_count;
	q->peer.priority = si.priority;
	q->peer.state = si.sm_state;
	q->answered = true;
}

static int sm_query_submit(struct smd *smd, struct sm_query *q, uint8_t method, uint32_t amod,
			   txn_cb cb, void *arg)
{
	/* What only a peer sharing the key can check, for this peer only */
	struct sm_info si = own_info(smd, false, q->peer.guid);
	struct smp req;
	int r;

	q->key = smd->cfg.sm_key;
	q->me = own_guid(smd);
	r = smp_init_dr(&req, method, SMP_ATTR_SM_INFO, amod, &q->peer.path);
	if (r < 0)
		return r;
	/*
	 * IBA 14.4.1: the sender's own SMInfo rides in a Set. It rides in a
	 * Get too: an SMA ignores a Get's data, and a master polled by a
	 * standby that outranks it learns so from it (sm_polled_by()).
	 */
	sm_info_encode(&si, req.data);
	return txn_submit(smd->txn, &req, 0, cb, arg);
}

static const struct sm_peer *peer_find(const struct smd *smd, uint64_t guid)
{
	for (size_t i = 0; i < smd->npeers; i++)
		if (smd->peers[i].guid == guid)
			return &smd->peers[i];
	return NULL;
}

static void become_standby(struct smd *smd, const struct sm_peer *m, const char *what)
{
	char why[160];

	snprintf(why, sizeof(why), "SM 0x%016" PRIx64 " (priority %u) %s", m->guid, m->priority,
		 what);
	smd->master = *m;
	sm_set_state(smd, SM_STANDBY, why);
	smd->poll_misses = 0;
}

/* IBA 14.4.1: the master hands over to a better standby (the answer: sm_elect_decide) */
static int hand_over(struct smd *smd, struct sm_election *e, const struct sm_peer *to)
{
	int r;

	log_notice("SM 0x%016" PRIx64 " (priority %u) outranks this SM: handing over", to->guid,
		   to->priority);
	memset(&e->handover, 0, sizeof(e->handover));
	e->handover.peer = *to;
	e->handover_to = to->guid;
	r = sm_query_submit(smd, &e->handover, MAD_METHOD_SET, SM_AM_HANDOVER, sm_query_cb,
			    &e->handover);
	if (r < 0) {
		log_warn("handover to SM 0x%016" PRIx64 " not answered (send failed); staying "
			 "master", to->guid);
		return r;
	}
	e->handing_over = true;
	return 0;
}

/* The answer to the HANDOVER Set: 1 when the other SM took over, 0 when this one stays */
static int handed_over(struct smd *smd, struct sm_election *e)
{
	const struct sm_query *q = &e->handover;

	e->handing_over = false;
	if (!q->answered || q->peer.guid != e->handover_to || q->peer.foreign) {
		log_warn("handover to SM 0x%016" PRIx64 " not answered; staying master",
			 e->handover_to);
		return 0;
	}
	become_standby(smd, &q->peer, "took over by handover");
	return 1;
}

int sm_elect_start(struct smd *smd, const struct fabric *f, const struct fab_port *own,
		   struct sm_election **out)
{
	struct sm_election *e;
	struct sm_query *q;
	uint64_t me = own_guid(smd);
	size_t i;
	int r = 0;

	*out = NULL;
	e = calloc(1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	*out = e;
	q = e->q;
	for (i = 0; i < f->nnodes; i++) {
		const struct fab_node *nd = f->nodes[i];
		/* A switch hosts an SM on port 0, a CA on any of its ports */
		unsigned int first = nd->type == NODE_TYPE_SWITCH ? 0 : 1;
		unsigned int last = nd->type == NODE_TYPE_SWITCH ? 0 : nd->num_ports;

		for (unsigned int pn = first; pn <= last; pn++) {
			const struct fab_port *p = &nd->ports[pn];
			const struct dr_path *path;
			size_t n = e->n;

			if (p == own || p->guid == me || !p->pi_valid ||
			    !(p->pi.cap_mask & PORT_CAP_IS_SM))
				continue;
			path = fabric_port_route(p);
			if (!path)
				continue;
			if (n == SM_PEERS_MAX) {
				log_warn("more than %u other SMs on the subnet: the others are "
					 "not asked", SM_PEERS_MAX);
				return 0;
			}
			q[n].peer.guid = p->guid;
			q[n].peer.node_guid = nd->guid;
			q[n].peer.port_num = (uint8_t)pn;
			q[n].peer.path = *path;
			r = sm_query_submit(smd, &q[n], MAD_METHOD_GET, 0, sm_query_cb, &q[n]);
			if (r < 0)
				return r;
			e->n++;
		}
	}
	return 0;
}

struct sm_election *sm_election_free(struct sm_election *e)
{
	free(e);
	return NULL;
}

int sm_elect_decide(struct smd *smd, struct sm_election *e)
{
	const struct sm_query *q = e->q;
	const struct sm_peer *master = NULL, *best = NULL;
	struct sm_peer *peers = NULL;
	uint8_t prio = (uint8_t)smd->cfg.sm_priority;
	uint64_t me = own_guid(smd);
	size_t n = e->n, np = 0, i;
	int r = 0;

	if (e->handing_over)
		return handed_over(smd, e);

	/* Keep what answered; tell the operator what changed among them */
	peers = calloc(SM_PEERS_MAX, sizeof(*peers));
	if (!peers)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		const struct sm_peer *p = &q[i].peer, *old;

		if (!q[i].answered) {
			log_debug("port 0x%016" PRIx64 " says IsSM but its SM does not answer SMInfo",
				  p->guid);
			continue;
		}
		old = peer_find(smd, p->guid);
		if (p->foreign && (!old || !old->foreign))
			log_warn("SM 0x%016" PRIx64 " (priority %u, %s) answers with another "
				 "SM_Key: it takes no part in the election", p->guid, p->priority,
				 sm_state_name(p->state));
		else if (!p->foreign && (!old || old->state != p->state ||
					 old->priority != p->priority || old->foreign))
			log_notice("SM 0x%016" PRIx64 " (priority %u) is %s", p->guid, p->priority,
				   sm_state_name(p->state));
		peers[np++] = *p;
	}
	for (i = 0; i < smd->npeers; i++) {
		bool seen = false;

		for (size_t j = 0; j < np; j++)
			seen |= peers[j].guid == smd->peers[i].guid;
		if (!seen)
			log_notice("SM 0x%016" PRIx64 " is gone", smd->peers[i].guid);
	}
	memcpy(smd->peers, peers, np * sizeof(*peers));
	smd->npeers = np;
	free(peers);

	for (i = 0; i < smd->npeers; i++) {
		const struct sm_peer *p = &smd->peers[i];

		if (p->state == SM_NOT_ACTIVE || p->foreign)
			continue;
		if (p->state == SM_MASTER &&
		    (!master || sm_outranks(p->priority, p->guid, master->priority, master->guid)))
			master = p;
		if (!best || sm_outranks(p->priority, p->guid, best->priority, best->guid))
			best = p;
	}

	if (master) {
		if (smd->sm_state != SM_MASTER ||
		    sm_outranks(master->priority, master->guid, prio, me)) {
			become_standby(smd, master, "is master");
			r = 1;
		} else {
			log_warn("SM 0x%016" PRIx64 " (priority %u) is master too; this SM "
				 "outranks it and stays master", master->guid, master->priority);
		}
	} else if (best && sm_outranks(best->priority, best->guid, prio, me)) {
		if (smd->sm_state != SM_MASTER) {
			become_standby(smd, best, "outranks this SM");
			r = 1;
		} else if (best->state == SM_STANDBY && hand_over(smd, e, best) == 0) {
			return SM_ELECT_AGAIN;
		}
	}
	if (r == 0 && smd->sm_state != SM_MASTER)
		sm_set_state(smd, SM_MASTER, best ? "no other SM outranks this one" :
			     smd->npeers ? "no other SM with this SM_Key on the subnet" :
			     "no other SM on the subnet");
	return r;
}

/* A standby's poll of its master, in flight: the answer is judged when it comes */
struct sm_poll {
	struct smd *smd;
	struct sm_query q;
};

static void sm_poll_result(struct smd *smd, const struct sm_query *q, uint64_t asked)
{
	const char *why;

	if (smd->sm_state != SM_STANDBY || asked != smd->master.guid)
		return;		/* the state changed meanwhile (a handover, a Set) */
	if (q->answered && q->peer.guid == asked && q->peer.state == SM_MASTER &&
	    !q->peer.foreign) {
		if (smd->poll_misses)
			log_info("master SM 0x%016" PRIx64 " answers again", q->peer.guid);
		smd->poll_misses = 0;
		smd->master = q->peer;
		return;
	}
	why = !q->answered ? "did not answer" :
	      q->peer.guid != asked ? "is not there (another SM answered)" :
	      q->peer.foreign ? "answers with another SM_Key" :
	      "is no longer master";
	smd->poll_misses++;
	log_warn("master SM 0x%016" PRIx64 " %s (%u of %u polls missed)", smd->master.guid, why,
		 smd->poll_misses, smd->cfg.sm_poll_retries);
	if (smd->poll_misses >= smd->cfg.sm_poll_retries)
		sm_set_state(smd, SM_DISCOVERING, "the master is lost: looking for a new one");
}

static void sm_poll_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct sm_poll *p = arg;
	uint64_t asked = p->q.peer.guid;

	p->smd->poll_busy = false;
	if (status != -ECANCELED) {
		sm_query_cb(&p->q, status, req, resp);
		sm_poll_result(p->smd, &p->q, asked);
	}
	free(p);
}

int sm_poll_master(struct smd *smd)
{
	struct sm_poll *p;
	int r;

	if (smd->poll_busy)
		return -EALREADY;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->smd = smd;
	p->q.peer = smd->master;
	r = sm_query_submit(smd, &p->q, MAD_METHOD_GET, 0, sm_poll_cb, p);
	if (r < 0) {
		free(p);
		return r;
	}
	smd->poll_busy = true;
	return 0;
}

static void ack_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	log_debug("handover acknowledgement %s", status == 0 ? "answered" : "not answered");
}

/* IBA 14.4.1: the new master acknowledges a handover to the old one */
static void send_ack(struct smd *smd, const struct sm_peer *to)
{
	struct sm_info si = own_info(smd, false, to->guid);
	struct smp req;

	if (smp_init_dr(&req, MAD_METHOD_SET, SMP_ATTR_SM_INFO, SM_AM_ACKNOWLEDGE, &to->path) < 0)
		return;
	sm_info_encode(&si, req.data);
	txn_submit(smd->txn, &req, 0, ack_cb, NULL);
}

static const char *am_name(uint32_t amod)
{
	static const char *const names[] = {
		[SM_AM_HANDOVER] = "HANDOVER", [SM_AM_ACKNOWLEDGE] = "ACKNOWLEDGE",
		[SM_AM_DISABLE] = "DISABLE", [SM_AM_STANDBY] = "STANDBY",
		[SM_AM_DISCOVER] = "DISCOVER",
	};

	return amod < ARRAY_SIZE(names) && names[amod] ? names[amod] : "unknown";
}

/*
 * A Set not obeyed: counted, and logged at most every 10 s (with how many
 * since) so that a flood of them cannot flood the journal too
 */
static void sm_refused(struct smd *smd, uint32_t amod, const struct sm_info *from,
		       const struct mad_addr *src, const char *why)
{
	uint64_t now = txn_now_us();

	smd->sminfo_refused++;
	if (smd->sminfo_refused_when && now - smd->sminfo_refused_when < 10000000u)
		return;
	log_warn("SMInfo Set(%s) from SM 0x%016" PRIx64 " (%s, LID %u) not obeyed: %s (%" PRIu64
		 " refused since the last report)", am_name(amod), from->guid,
		 sm_state_name((enum sm_state)(from->sm_state & 3)), src->slid, why,
		 smd->sminfo_refused - smd->sminfo_refused_logged);
	smd->sminfo_refused_logged = smd->sminfo_refused;
	smd->sminfo_refused_when = now;
}

/* SMInfo Set from another SM (IBA 14.4.1, table 181): the state to move to */
static uint16_t sm_control(struct smd *smd, uint32_t amod, const struct sm_info *from,
			   const struct mad_addr *src)
{
	char why[128];
	int to;

	if (!sm_auth_ok(smd->cfg.sm_key, false, from->act_count, from->guid, own_guid(smd),
			from->sm_key)) {
		sm_refused(smd, amod, from, src, "wrong SM_Key");
		return MAD_STATUS_INVALID_FIELD;
	}
	to = sm_set_transition(smd->sm_state, from->sm_state, amod);
	if (to < 0) {
		snprintf(why, sizeof(why), "not allowed from a %s SM to a %s one",
			 sm_state_name((enum sm_state)(from->sm_state & 3)),
			 sm_state_name(smd->sm_state));
		sm_refused(smd, amod, from, src, why);
		return MAD_STATUS_INVALID_FIELD;
	}
	switch (amod) {
	case SM_AM_HANDOVER:
		snprintf(why, sizeof(why), "SM 0x%016" PRIx64 " handed mastership over",
			 from->guid);
		/* The entry action sweeps at once: the subnet is this SM's now */
		smd->resweep = true;
		sm_set_state(smd, SM_MASTER, why);
		if (smd->master.guid == from->guid)
			send_ack(smd, &smd->master);
		else
			log_info("handover from SM 0x%016" PRIx64 ", which this SM cannot reach "
				 "to acknowledge", from->guid);
		break;
	case SM_AM_ACKNOWLEDGE:
		log_info("SM 0x%016" PRIx64 " acknowledged the handover", from->guid);
		break;
	case SM_AM_DISABLE:
		snprintf(why, sizeof(why), "disabled by SM 0x%016" PRIx64 " (LID %u)", from->guid,
			 src->slid);
		sm_set_state(smd, SM_NOT_ACTIVE, why);
		break;
	case SM_AM_STANDBY:
	case SM_AM_DISCOVER:
		/* NOT-ACTIVE wakes up; discovery then finds the master to poll */
		snprintf(why, sizeof(why), "woken by SM 0x%016" PRIx64, from->guid);
		smd->resweep = true;
		sm_set_state(smd, SM_DISCOVERING, why);
		break;
	}
	return 0;
}

int sm_enable(struct smd *smd, const char *who)
{
	char why[128];

	if (smd->sm_state != SM_NOT_ACTIVE)
		return -EALREADY;
	snprintf(why, sizeof(why), "enabled by %s", who);
	smd->resweep = true;
	sm_set_state(smd, SM_DISCOVERING, why);
	return 0;
}

/*
 * A standby the last election saw otherwise (still DISCOVERING, say: it
 * finished its first sweep after this master asked) shows what it is now
 * in its poll: the peer list and the SA's SMInfoRecords follow at once.
 */
static void sm_peer_update(struct smd *smd, const struct sm_info *si)
{
	struct sm_peer *p = (struct sm_peer *)peer_find(smd, si->guid);

	if (!p || p->foreign)
		return;
	p->state = SM_STANDBY;
	p->priority = si->priority;
	p->act_count = si->act_count;
	log_notice("SM 0x%016" PRIx64 " (priority %u) is %s", p->guid, p->priority,
		   sm_state_name(p->state));
	for (size_t i = 0; i < smd->sa_env.nsms; i++) {
		if (smd->sa_sms[i].si.guid != si->guid)
			continue;
		smd->sa_sms[i].si.sm_state = SM_STANDBY;
		smd->sa_sms[i].si.priority = si->priority;
		smd->sa_sms[i].si.act_count = si->act_count;
	}
}

/*
 * A master polled by a standby: the peer list follows what the poll says;
 * and when the standby outranks this master, the election of the next
 * heavy sweep hands over to it. Without this, a standby that came up while
 * this master swept (both started at once) would stay unseen: light sweeps
 * do not look for SMs, and its IsSM trap may have gone nowhere. A Get with
 * no SMInfo in it (sminfo(8) sends zeros) is not a poll.
 */
static void sm_polled_by(struct smd *smd, const struct sm_info *si)
{
	const struct sm_peer *known;
	uint64_t me = own_guid(smd);

	if (smd->sm_state != SM_MASTER || !si->guid || si->guid == me ||
	    si->sm_state != SM_STANDBY ||
	    !sm_auth_ok(smd->cfg.sm_key, false, si->act_count, si->guid, me, si->sm_key))
		return;
	known = peer_find(smd, si->guid);
	if (known && known->state == SM_STANDBY && known->priority == si->priority)
		return;		/* the last election saw it as it is */
	sm_peer_update(smd, si);
	if (!sm_outranks(si->priority, si->guid, (uint8_t)smd->cfg.sm_priority, me))
		return;
	if (!smd->resweep)
		log_info("SM 0x%016" PRIx64 " (priority %u) polls this master and outranks it: "
			 "heavy sweep to hand over", si->guid, si->priority);
	smd->resweep = true;
}

void sm_handle_sminfo(struct smd *smd, const uint8_t *mad, size_t len,
		      const struct mad_addr *from)
{
	struct sm_info si = { 0 };
	uint8_t buf[MAD_SIZE];
	uint16_t status = 0;
	struct mad_addr to;
	struct smp smp;
	uint8_t hop_ptr;
	bool dr, shown;
	int r;

	if (smp_decode(mad, len, &smp) < 0)
		return;
	dr = smp.hdr.mgmt_class == MAD_CLASS_SMI_DR;
	if (!dr && smp.hdr.mgmt_class != MAD_CLASS_SMI)
		return;
	if (smp.hdr.method == MAD_METHOD_SET) {
		if (sm_info_decode(smp.data, &si) < 0)
			status = MAD_STATUS_INVALID_FIELD;
		else
			status = sm_control(smd, smp.hdr.attr_mod, &si, from);
	} else if (smp.hdr.method != MAD_METHOD_GET) {
		status = MAD_STATUS_METHOD_UNSUPP;
	} else if (sm_info_decode(smp.data, &si) == 0) {
		sm_polled_by(smd, &si);
	}
	/* The answer carries this SM's SMInfo, in its state after the request */
	shown = smd->cfg.sm_key && si.guid &&
		sm_auth_ok(smd->cfg.sm_key, false, si.act_count, si.guid, own_guid(smd), si.sm_key);
	si = own_info(smd, true, shown ? si.guid : 0);
	hop_ptr = smp.hdr.hop_ptr;
	smp_make_response(&smp, status);
	/*
	 * A DR answer from an SM (not an SMA) leaves the hop pointer as it
	 * arrived: a kernel delivers hop_cnt + 1 and steps it back itself
	 * (IBA 14.2.2.2), the simulator delivers 0 and insists on 0.
	 */
	smp.hdr.hop_ptr = hop_ptr;
	sm_info_encode(&si, smp.data);
	if (smp_encode(&smp, buf) < 0)
		return;
	/* As the request came (its SL and P_Key index); DR: back along its path */
	to = *from;
	if (dr) {
		to.slid = LID_PERMISSIVE;
		to.qpn = 0;
	}
	r = smd_send(smd, dr ? MAD_AGENT_SMI_DR : MAD_AGENT_SMI, buf, MAD_SIZE, &to, 0);
	if (r < 0)
		log_debug_errno(r, "SMInfo answer to LID %u failed", from->slid);
}
