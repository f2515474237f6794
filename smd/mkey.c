// SPDX-License-Identifier: MIT
/* M_Key: the keys, which SMP carries which, taking ports back (policy in smd/mkey.h) */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <systemd/sd-event.h>

#include "db/store.h"
#include "mad/txn.h"
#include "mad/wire.h"
#include "util/log.h"
#include "smd/mkey.h"
#include "util/siphash.h"
#include "smd/smd.h"
#include "smd/status.h"
#include "topo/fabric.h"
#include "topo/pathmap.h"

#define US		UINT64_C(1000000)
#define MK_TICK_US	(1 * US)	/* how often the loop looks at ports to take back */
#define MK_SLOW_S	60		/* a port that cannot be taken back is read this often */

enum mk_state {
	MK_NONE,			/* nothing special: only its guard time is kept */
	MK_HOLDS,			/* holds a key smd knows (key) but does not want */
	MK_UNKNOWN,			/* holds a key smd does not know */
};

/* A port (CA port, or switch) smd knows something special about */
struct mk_port {
	uint64_t guid;			/* its PortGUID; 0: a free slot */
	enum mk_state state;
	uint64_t key;			/* MK_HOLDS: the key it holds */
	bool prev;			/* ... which is the previous m_key's */
	uint64_t due_us;		/* MK_UNKNOWN: when to read it again */
	uint64_t since_us;		/* MK_UNKNOWN: when it refused smd's key */
	uint64_t guard_us;		/* the last read that stopped its lease */
	uint16_t lease;			/* its M_KeyLeasePeriod as last read */
	bool lease_known;
	bool said;			/* "cannot be taken back" logged */
	bool busy;			/* a read or Set of the loop's is in flight */
	bool seen;			/* in the model (mkey_model) */
	/* Where it is, from the model: copied, the model goes with every sweep */
	struct dr_path path;
	uint8_t num;			/* PortInfo attribute modifier (0: a switch) */
	uint16_t lid;
	char name[128];
};

struct mkey {
	struct smd *smd;
	uint64_t secret;		/* the m_key the ports were last given */
	struct path_map *answers;	/* this sweep's NodeInfo answers: path -> PortGUID */
	struct path_map *known;		/* ... and earlier sweeps': where each port was last */
	struct fabric *boot;		/* the database's model, until a sweep completes */
	struct fab_port *boot_local;	/* the SM's port in it */
	struct fab_port *local;		/* the SM's port in smd->fabric */
	struct mk_port *ports;		/* open addressing by GUID, at most half full */
	size_t size, used;
	struct mkey_stats st;
	uint64_t log_us;		/* the last Bad M_Key trap logged */
	uint64_t log_quiet;		/* traps not logged since */
	char last[240];			/* the last Bad M_Key trap, for smctl status */
	time_t last_when;
	sd_event_source *timer;
	void (*kick)(void *arg);	/* mkey_attach(): the loop sends what the tick queued */
	void *kick_arg;
};

/* ---- keys ---- */

uint64_t mkey_derive(uint64_t secret, uint64_t port_guid)
{
	uint8_t m[12] = { 'm', 'k', 'e', 'y' };
	uint64_t k;

	for (int i = 0; i < 8; i++)
		m[4 + i] = (uint8_t)(port_guid >> (56 - 8 * i));
	/* The second key word names the use, as sm_auth's does ("smd-mkey") */
	k = siphash24(secret, UINT64_C(0x736d642d6d6b6579), m, sizeof(m));
	/* M_Key 0 would mean "no protection" (IBA 14.2.4.1) */
	return k ? k : 1;
}

/* The port whose M_Key answers for p: a switch's port 0, or p */
static const struct fab_port *holder(const struct fab_port *p)
{
	return p->node->type == NODE_TYPE_SWITCH ? &p->node->ports[0] : p;
}

static uint64_t holder_guid(const struct fab_port *p)
{
	if (p->node->type == NODE_TYPE_SWITCH)
		return p->node->ni.port_guid ? p->node->ni.port_guid : p->node->guid;
	return p->guid;
}

static uint64_t want_key(const struct mkey *m, uint64_t guid)
{
	uint64_t secret = m->smd->cfg.m_key;

	return secret && guid ? mkey_derive(secret, guid) : 0;
}

/*
 * The key a port of the model holds unless the table says otherwise: the
 * secret's it was last given. Until the sweep after a SIGHUP that changed
 * m_key moves the ports, that is the old secret's (smd's SMPs in between,
 * light sweeps and reads, keep working)
 */
static uint64_t held_key(const struct mkey *m, uint64_t guid)
{
	return m->secret && guid ? mkey_derive(m->secret, guid) : 0;
}

/* ---- the ports smd knows something special about ---- */

static size_t slot_hash(uint64_t g, size_t size)
{
	g ^= g >> 33;
	g *= UINT64_C(0xff51afd7ed558ccd);
	g ^= g >> 33;
	return (size_t)g & (size - 1);
}

static struct mk_port *find(const struct mkey *m, uint64_t guid)
{
	if (!guid || !m->size)
		return NULL;
	for (size_t i = slot_hash(guid, m->size);; i = (i + 1) & (m->size - 1)) {
		if (m->ports[i].guid == guid)
			return &m->ports[i];
		if (!m->ports[i].guid)
			return NULL;
	}
}

/* A table of size slots holding the entries keep() keeps */
static int rebuild(struct mkey *m, size_t size, bool (*keep)(const struct mk_port *))
{
	struct mk_port *old = m->ports, *nw = calloc(size, sizeof(*nw));
	size_t n = m->size, used = 0;

	if (!nw)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		size_t j;

		if (!old[i].guid || (keep && !keep(&old[i])))
			continue;
		for (j = slot_hash(old[i].guid, size); nw[j].guid; j = (j + 1) & (size - 1))
			;
		nw[j] = old[i];
		used++;
	}
	free(old);
	m->ports = nw;
	m->size = size;
	m->used = used;
	return 0;
}

static void where(struct mk_port *e, const struct fab_port *p)
{
	const struct fab_port *h = holder(p);
	const struct dr_path *route = fabric_port_route(h);
	const struct fab_node *n = h->node;

	if (route)
		e->path = *route;
	e->num = n->type == NODE_TYPE_SWITCH ? 0 : h->num;
	e->lid = h->lid ? h->lid : h->pi.lid;
	snprintf(e->name, sizeof(e->name), "%s port %u (GUID 0x%016" PRIx64 ")",
		 n->desc_valid && n->desc[0] ? n->desc : "(no description)", e->num, e->guid);
}

/* The entry of p's key holder, made when missing (NULL: no memory) */
static struct mk_port *entry(struct mkey *m, const struct fab_port *p)
{
	uint64_t guid = holder_guid(p);
	struct mk_port *e = find(m, guid);
	size_t i;

	if (!guid)
		return NULL;
	if (!e) {
		if ((m->used + 1) * 2 > m->size && rebuild(m, m->size ? m->size * 2 : 64, NULL))
			return NULL;
		for (i = slot_hash(guid, m->size); m->ports[i].guid; i = (i + 1) & (m->size - 1))
			;
		e = &m->ports[i];
		memset(e, 0, sizeof(*e));
		e->guid = guid;
		m->used++;
	}
	where(e, p);
	return e;
}

static uint64_t key_for_guid(const struct mkey *m, uint64_t guid)
{
	const struct mk_port *e = find(m, guid);

	if (e && e->state == MK_HOLDS)
		return e->key;
	return held_key(m, guid);
}

/* ---- which key an SMP carries ---- */

/*
 * A port of the table at the end of a route (its route from the model
 * that last had it): one hidden from the last sweep by a foreign key at
 * ProtectBits >= 2 and just taken back is read with its key, not with 0
 * (which would start its lease again). The table is small: ports smd
 * knows something special about.
 */
static uint64_t guid_by_path(const struct mkey *m, const uint8_t *port, unsigned int hops)
{
	for (size_t i = 0; i < m->size; i++) {
		const struct mk_port *e = &m->ports[i];

		if (e->guid && e->path.hops == hops && hops <= SMP_MAX_HOPS &&
		    !memcmp(e->path.port + 1, port + 1, hops))
			return e->guid;
	}
	return 0;
}

/* Where the SM's port is in the model Gets trust: the last sweep's, or the database's */
static const struct fab_port *ref_local(const struct mkey *m)
{
	if (m->smd->fabric)
		return m->local;
	return m->boot_local;
}

uint64_t mkey_for_smp(void *arg, const struct smp *req, uint16_t dlid)
{
	struct smd *smd = arg;
	const struct mkey *m = smd->mkey;
	const struct fab_port *p;
	uint64_t guid = 0;

	/*
	 * A caller that knows the key sets it (the loop's reads and Sets of
	 * ports the model may lack: at ProtectBits >= 2 a foreign key hides
	 * a port from discovery)
	 */
	if (!m || req->mkey)
		return req->mkey;
	/*
	 * No port was given a key and none is known to hold one (m_key unset,
	 * the usual case): key_for_guid() is 0 for every port, and the
	 * lookups below cost a tenth of the loop thread's time in a k=40
	 * bring-up
	 */
	if (!m->secret && !m->used)
		return 0;
	if (req->hdr.mgmt_class == MAD_CLASS_SMI_DR) {
		const struct fab_port *from = ref_local(m);

		p = from ? fabric_walk(from, req->initial_path, req->hdr.hop_cnt) : NULL;
		guid = p ? holder_guid(p) : 0;
		/*
		 * Not in the last model (a sweep that a foreign key at
		 * ProtectBits >= 2 cut short): where an earlier sweep found
		 * a port. Key 0 there would be a violation, which starts the
		 * port's lease.
		 */
		if (!p)
			guid = path_map_get(m->known, req->initial_path, req->hdr.hop_cnt);
		if (!guid)
			guid = guid_by_path(m, req->initial_path, req->hdr.hop_cnt);
		/*
		 * A Get shows a key only to a port the trusted model has at the
		 * end of that route; a Set goes only to a port of the new model,
		 * which this sweep's answers name.
		 */
		if (req->hdr.method != MAD_METHOD_GET) {
			uint64_t g = path_map_get(m->answers, req->initial_path, req->hdr.hop_cnt);

			if (g)
				guid = g;
		}
	} else if (smd->fabric) {
		p = fabric_port_by_lid(smd->fabric, dlid);
		guid = p ? holder_guid(p) : 0;
	}
	return key_for_guid(m, guid);
}

int mkey_for_lid(const struct smd *smd, uint16_t lid, uint64_t *key)
{
	const struct mkey *m = smd->mkey;
	const struct fabric *f = smd->fabric ? smd->fabric : m ? m->boot : NULL;
	const struct fab_port *p = f ? fabric_port_by_lid(f, lid) : NULL;
	const struct mk_port *e = m && p ? find(m, holder_guid(p)) : NULL;

	*key = m && p ? key_for_guid(m, holder_guid(p)) : 0;
	if (!smd->cfg.m_key)
		return 0;
	/*
	 * A port smd cannot name, or whose key it does not know, would count
	 * a wrong key as a violation and trap again (IBA 14.2.4.2): a loop
	 */
	if (!p)
		return -ENOENT;
	return e && e->state == MK_UNKNOWN ? -ENOKEY : 0;
}

/* ---- life cycle ---- */

int mkey_new(struct smd *smd)
{
	struct mkey *m = calloc(1, sizeof(*m));
	struct store_sweep ss;
	int r;

	if (!m)
		return -ENOMEM;
	m->smd = smd;
	m->secret = smd->cfg.m_key;
	r = path_map_new(&m->answers);
	if (!r)
		r = path_map_new(&m->known);
	if (r < 0) {
		path_map_free(m->answers);
		free(m);
		return r;
	}
	smd->mkey = m;
	/* Gets of the first sweep carry the keys of the ports the database knows */
	if (smd->cfg.m_key && smd->store && store_load_fabric(smd->store, &m->boot, &ss) == 0) {
		const struct fab_node *n = fabric_find(m->boot, ss.sm_node_guid);

		for (unsigned int pn = 1; n && pn <= n->num_ports; pn++)
			if (n->ports[pn].guid == ss.sm_port_guid)
				m->boot_local = &n->ports[pn];
		if (!m->boot_local)
			m->boot = fabric_free(m->boot);
		else
			log_info("M_Key: %zu nodes of the saved fabric get their keys from the "
				 "first sweep on", m->boot->nnodes);
	}
	return 0;
}

void mkey_free(struct smd *smd)
{
	struct mkey *m = smd->mkey;

	if (!m)
		return;
	sd_event_source_unref(m->timer);
	path_map_free(m->answers);
	path_map_free(m->known);
	fabric_free(m->boot);
	free(m->ports);
	free(m);
	smd->mkey = NULL;
}

const struct mkey_stats *mkey_stats(const struct smd *smd)
{
	static const struct mkey_stats none;

	return smd->mkey ? &smd->mkey->st : &none;
}

/* ---- sweeps ---- */

void mkey_sweep_start(struct smd *smd)
{
	struct mkey *m = smd->mkey;
	const struct fabric *f = smd->fabric ? smd->fabric : m ? m->boot : NULL;
	uint64_t old;
	size_t n = 0;

	if (!m)
		return;
	path_map_clear(m->answers);
	if (smd->cfg.m_key == m->secret)
		return;
	/*
	 * m_key changed (SIGHUP): every port of the model holds the old key;
	 * this sweep moves each to its new one with it.
	 */
	old = m->secret;
	m->secret = smd->cfg.m_key;
	for (size_t i = 0; old && f && i < f->nnodes; i++) {
		const struct fab_node *nd = f->nodes[i];

		for (unsigned int pn = 0; pn <= nd->num_ports; pn++) {
			const struct fab_port *p = &nd->ports[pn];
			struct mk_port *e;

			if (!fabric_is_endport(p) || !holder_guid(p))
				continue;
			e = entry(m, p);
			if (e && e->state == MK_NONE) {
				e->state = MK_HOLDS;
				e->key = mkey_derive(old, e->guid);
				e->prev = true;
				n++;
			}
		}
	}
	log_notice("M_Key: m_key %s: %zu ports move from the old keys to %s", !old ? "set" :
		   m->secret ? "changed" : "removed", n, m->secret ? "their new ones" : "M_Key 0");
}

void mkey_node_info(struct smd *smd, const struct dr_path *path, const struct node_info *ni)
{
	struct mkey *m = smd->mkey;

	if (!m || !ni->port_guid)
		return;
	if (path_map_put(m->answers, path->port, path->hops, ni->port_guid) < 0 ||
	    path_map_put(m->known, path->port, path->hops, ni->port_guid) < 0)
		log_debug("M_Key: cannot remember the port at the end of a route: no memory");
}

void mkey_port_read(struct smd *smd, const struct fab_port *p, const struct port_info *pi)
{
	struct mkey *m = smd->mkey;
	uint64_t guid, want;
	struct mk_port *e;

	if (!m || !fabric_is_endport(p))
		return;
	guid = holder_guid(p);
	want = want_key(m, guid);
	e = find(m, guid);
	if (pi->mkey) {
		/* It shows its key: ProtectBits 0, or this SMP carried it */
		if (pi->mkey == want) {
			if (e && e->state != MK_NONE)
				log_info("M_Key: %s holds smd's key", e->name);
			if (e)
				e->state = MK_NONE;
			return;
		}
		e = entry(m, p);
		if (e && (e->state != MK_HOLDS || e->key != pi->mkey)) {
			e->state = MK_HOLDS;
			e->key = pi->mkey;
			e->prev = false;
			log_info("M_Key: %s shows a key that is not smd's (M_KeyProtectBits %u): "
				 "smd writes its own with it", e->name, pi->mkey_protect_bits);
		}
	} else if (!pi->mkey_protect_bits && e && e->state != MK_NONE) {
		/* ProtectBits 0 show the key: it is 0, which takes any */
		e->state = MK_NONE;
	}
}

bool mkey_port_differs(const struct smd *smd, const struct fab_port *p)
{
	const struct mkey *m = smd->mkey;
	const struct mk_port *e;
	uint64_t guid;

	if (!m || !fabric_is_endport(p))
		return false;
	guid = holder_guid(p);
	e = find(m, guid);
	if (e && e->state != MK_NONE)
		return true;
	if (!smd->cfg.m_key)
		return p->pi.mkey != 0;
	return p->pi.mkey != want_key(m, guid) ||
	       p->pi.mkey_protect_bits != smd->cfg.m_key_protect_bits ||
	       p->pi.mkey_lease_period != smd->cfg.m_key_lease_period;
}

void mkey_fill(const struct smd *smd, const struct fab_port *p, struct port_info *pi)
{
	if (!smd->mkey)
		return;
	if (!smd->cfg.m_key) {
		/* Without m_key, a key smd can see is cleared (it shows no other) */
		pi->mkey = 0;
		return;
	}
	pi->mkey = want_key(smd->mkey, holder_guid(holder(p)));
	pi->mkey_protect_bits = (uint8_t)smd->cfg.m_key_protect_bits;
	pi->mkey_lease_period = (uint16_t)smd->cfg.m_key_lease_period;
}

bool mkey_locked(const struct smd *smd, const struct fab_port *p)
{
	const struct mk_port *e = smd->mkey ? find(smd->mkey, holder_guid(p)) : NULL;

	return e && e->state == MK_UNKNOWN;
}

/* Fields written as zero mean "no change" in a PortInfo Set (IBA 14.2.5.6) */
static void pi_nochange(struct port_info *pi)
{
	pi->port_state = PORT_STATE_NOP;
	pi->phys_state = 0;
	pi->link_down_default_state = 0;
	pi->link_width_enabled = 0;
	pi->link_speed_enabled = 0;
	pi->link_speed_ext_enabled = 0;
	pi->link_speed_ext_enabled2 = 0;	/* as written before IBA 1.7: no change */
	pi->client_reregister = 0;
}

/*
 * smd cannot know e's key: the refusal started its lease (IBA 14.2.4.2),
 * smd reads it again once the lease has run out. pi: what a Get read.
 */
static void unknown(struct mkey *m, struct mk_port *e, const struct port_info *pi, const char *why)
{
	bool knew = e->lease_known;
	char lease[64] = "";

	if (pi) {
		e->lease = pi->mkey_lease_period;
		e->lease_known = true;
	}
	if (e->state != MK_UNKNOWN) {
		e->state = MK_UNKNOWN;
		e->since_us = txn_now_us();
		e->said = false;
		knew = false;
		m->st.refused++;
		if (e->lease_known && e->lease)
			snprintf(lease, sizeof(lease), " (M_KeyLeasePeriod %u s)", e->lease);
		if (!e->lease_known || e->lease)
			log_warn("M_Key unknown: %s does not take smd's M_Key (%s; another SM "
				 "or an old m_key set one): smd takes it back when its lease has "
				 "run out%s",
				 e->name, why, lease);
	}
	if (knew)
		return;
	e->due_us = e->since_us + ((uint64_t)(e->lease_known ? e->lease :
					       m->smd->cfg.m_key_lease_period) + 1) * US;
	if (e->lease_known && !e->lease) {
		e->due_us = e->since_us + MK_SLOW_S * US;
		if (!e->said)
			log_error("M_Key unknown: %s does not take smd's M_Key (%s; another SM "
				  "or an old m_key set one) and its M_KeyLeasePeriod is 0: smd "
				  "cannot take it back; reset the port, or give it smd's key",
				  e->name, why);
		e->said = true;
	}
}

void mkey_set_refused(struct smd *smd, const struct fab_port *p, const struct port_info *pi)
{
	struct mkey *m = smd->mkey;
	struct mk_port *e;

	if (!m || !pi || !fabric_is_endport(holder(p)))
		return;
	/*
	 * Evidence, not a guess: the key is hidden (M_Key 0 shown with
	 * ProtectBits 1) and the port counted the refusal in
	 * M_KeyViolations. A Set lost on the way leaves the counter alone.
	 */
	if (pi->mkey || !pi->mkey_protect_bits)
		return;
	if (pi->mkey_violations == holder(p)->pi.mkey_violations && pi->mkey_violations != 0xffff)
		return;
	e = entry(m, p);
	if (e)
		unknown(m, e, pi, "it counted smd's Set as an M_Key violation");
}

/* ---- taking a port over with the key it holds ---- */

struct take_ctx {
	struct mkey *m;
	uint64_t guid;
	struct fab_port *port;		/* mkey_takeover: the model's port (lives as long) */
	bool recover;			/* the loop's, after a lease ran out */
};

static void take_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct take_ctx *tc = arg;
	struct mkey *m = tc->m;
	struct mk_port *e = find(m, tc->guid);
	struct port_info pi;
	bool ok;

	ok = resp && (status == 0 || status == -EREMOTEIO) && !port_info_decode(resp->data, &pi) &&
	     pi.mkey == want_key(m, tc->guid);
	if (ok && tc->port)
		tc->port->pi = pi;
	if (!e) {
		free(tc);
		return;
	}
	e->busy = false;
	if (ok) {
		m->st.taken++;
		if (tc->recover)
			m->st.recovered++;
		if (tc->recover)
			log_notice("M_Key: took %s back after its lease ran out: it holds "
				   "smd's key again", e->name);
		else
			log_notice("M_Key: %s held %s: it holds smd's key now", e->name,
				   e->prev ? "the previous m_key's key" :
				   "another key, which it showed");
		e->state = MK_NONE;
		if (tc->recover)
			m->smd->resweep = true;	/* its LID, state, ...: a sweep sets them */
	} else if (e->state == MK_HOLDS && !tc->recover) {
		/* The key it showed is not the one it holds: wait for its lease */
		unknown(m, e, NULL, "it refused the key it had shown");
	} else {
		/* The loop's Set: read again once the lease it may have started ran out */
		e->state = MK_UNKNOWN;
		e->due_us = txn_now_us() + ((uint64_t)(e->lease_known ? e->lease : 0) + 1) * US;
	}
	(void)req;
	free(tc);
}

/* One PortInfo Set to port e with pi (as read) carrying smd's M_Key fields */
static int take_submit(struct mkey *m, struct mk_port *e, struct port_info pi,
		       struct fab_port *port, bool recover)
{
	const struct smd_config *cfg = &m->smd->cfg;
	struct take_ctx *tc = calloc(1, sizeof(*tc));
	struct smp req;
	int r;

	if (!tc)
		return -ENOMEM;
	*tc = (struct take_ctx){ .m = m, .guid = e->guid, .port = port, .recover = recover };
	pi_nochange(&pi);
	pi.mkey = want_key(m, e->guid);
	if (cfg->m_key) {
		pi.mkey_protect_bits = (uint8_t)cfg->m_key_protect_bits;
		pi.mkey_lease_period = (uint16_t)cfg->m_key_lease_period;
	}
	smp_init_dr(&req, MAD_METHOD_SET, SMP_ATTR_PORT_INFO, e->num, &e->path);
	req.mkey = key_for_guid(m, e->guid);
	port_info_encode(&pi, req.data);
	r = txn_submit(m->smd->txn, &req, 0, take_cb, tc);
	if (r < 0)
		free(tc);
	else
		e->busy = true;
	return r;
}

int mkey_takeover(struct smd *smd, struct fabric *f)
{
	struct mkey *m = smd->mkey;
	unsigned int n = 0;
	int r;

	if (!m || !m->used)
		return 0;
	for (size_t i = 0; i < f->nnodes; i++) {
		struct fab_node *nd = f->nodes[i];

		for (unsigned int pn = 0; pn <= nd->num_ports; pn++) {
			struct fab_port *p = &nd->ports[pn];
			struct mk_port *e;

			if (!fabric_is_endport(p) || !p->pi_valid || !fabric_port_route(p))
				continue;
			e = find(m, holder_guid(p));
			if (!e || e->state != MK_HOLDS || e->busy)
				continue;
			where(e, p);
			r = take_submit(m, e, p->pi, p, false);
			if (r < 0)
				return r;
			n++;
		}
	}
	if (!n)
		return 0;
	/* The sweep's driver waits for the answers (take_cb) before its next phase */
	log_info("M_Key: %u ports hold keys smd knows but does not want: writing smd's", n);
	return 0;
}

/* ---- after a sweep ---- */

/*
 * A port waiting for its lease stays even when the sweep missed it: at
 * ProtectBits 2 or 3 its foreign key hides it from discovery too; so does
 * one that holds the previous m_key's key, until a sweep moves it
 */
static bool keep_seen(const struct mk_port *e)
{
	return e->state == MK_UNKNOWN || (e->state == MK_HOLDS && e->prev) ||
	       (e->seen && e->state != MK_NONE);
}

void mkey_model(struct smd *smd, const struct fab_port *own)
{
	struct mkey *m = smd->mkey;
	const struct fabric *f = smd->fabric;

	if (!m || !f)
		return;
	m->local = (struct fab_port *)own;
	/* Routes of long gone ports are forgotten once they outnumber today's */
	if (path_map_count(m->known) > 2 * path_map_count(m->answers) + 1024) {
		struct path_map *t = m->known;

		m->known = m->answers;
		m->answers = t;
	}
	m->boot = fabric_free(m->boot);
	m->boot_local = NULL;
	if (!m->used)
		return;
	/* Ports that left the model are forgotten; the others' routes refreshed */
	for (size_t i = 0; i < m->size; i++)
		m->ports[i].seen = false;
	for (size_t i = 0; i < f->nnodes; i++) {
		const struct fab_node *nd = f->nodes[i];

		for (unsigned int pn = 0; pn <= nd->num_ports; pn++) {
			const struct fab_port *p = &nd->ports[pn];
			struct mk_port *e;

			if (!fabric_is_endport(p) || !(e = find(m, holder_guid(p))))
				continue;
			where(e, p);
			e->seen = true;
		}
	}
	if (rebuild(m, m->size, keep_seen) < 0)
		log_debug("M_Key: no memory to forget the ports that left");
}

/* ---- the loop: ports waiting for their lease to run out ---- */

struct rec_ctx {
	struct mkey *m;
	uint64_t guid;
};

static void rec_get_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	struct rec_ctx *rc = arg;
	struct mkey *m = rc->m;
	struct mk_port *e = find(m, rc->guid);
	uint64_t now = txn_now_us(), want;
	struct port_info pi;

	free(rc);
	if (!e || e->state != MK_UNKNOWN)
		return;
	e->busy = false;
	if (status < 0 || port_info_decode(resp->data, &pi) < 0) {
		/* ProtectBits 2 or 3 hide the port from Gets too */
		e->due_us = now + ((e->lease_known ? e->lease : m->smd->cfg.m_key_lease_period) +
				   1) * US;
		return;
	}
	want = want_key(m, e->guid);
	e->lease = pi.mkey_lease_period;
	e->lease_known = true;
	if (pi.mkey && pi.mkey == want) {
		log_info("M_Key: %s holds smd's key again", e->name);
		e->state = MK_NONE;
		m->smd->resweep = true;
		return;
	}
	if (!pi.mkey && pi.mkey_protect_bits && !e->lease) {
		e->due_us = now + MK_SLOW_S * US;
		if (!e->said)
			log_error("M_Key unknown: %s has M_KeyLeasePeriod 0: smd cannot take it "
				  "back; reset the port, or give it smd's key", e->name);
		e->said = true;
		return;
	}
	/*
	 * Its key shows (the lease ran out, ProtectBits are 0): written over
	 * with it (the Set carries it: mkey_for_smp). Still hidden: this Set
	 * with smd's key is refused, which starts the lease if nothing runs
	 * it (IBA 14.2.4.2); the port is read again after it.
	 */
	if (pi.mkey) {
		e->state = MK_HOLDS;
		e->key = pi.mkey;
		e->prev = false;
	}
	e->due_us = now + ((uint64_t)e->lease + 1) * US;
	if (take_submit(m, e, pi, NULL, true) < 0) {
		log_debug("M_Key: cannot send the Set that takes %s back", e->name);
		e->state = MK_UNKNOWN;
	}
	(void)req;
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata)
{
	struct smd *smd = userdata;
	struct mkey *m = smd->mkey;
	uint64_t now = txn_now_us();
	bool sent = false;

	for (size_t i = 0; m && smd->sm_state == SM_MASTER && i < m->size; i++) {
		struct mk_port *e = &m->ports[i];
		struct rec_ctx *rc;
		struct smp req;

		if (!e->guid || e->state != MK_UNKNOWN || e->busy || e->due_us > now)
			continue;
		rc = malloc(sizeof(*rc));
		if (!rc)
			break;
		*rc = (struct rec_ctx){ m, e->guid };
		smp_init_dr(&req, MAD_METHOD_GET, SMP_ATTR_PORT_INFO, e->num, &e->path);
		req.mkey = key_for_guid(m, e->guid);
		if (txn_submit(smd->txn, &req, 0, rec_get_cb, rc) < 0) {
			free(rc);
			break;
		}
		e->busy = true;
		sent = true;
	}
	if (sent && m->kick)
		m->kick(m->kick_arg);	/* the loop sends them, and watches their deadlines */
	sd_event_source_set_time(s, usec + MK_TICK_US);
	return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int mkey_attach(struct smd *smd, sd_event *ev, void (*kick)(void *arg), void *arg)
{
	if (!smd->mkey)
		return 0;
	smd->mkey->kick = kick;
	smd->mkey->kick_arg = arg;
	return sd_event_add_time_relative(ev, &smd->mkey->timer, CLOCK_MONOTONIC, MK_TICK_US,
					  100000, on_tick, smd);
}

/* ---- Bad M_Key traps ---- */

static const char *method_name(uint8_t m)
{
	switch (m) {
	case MAD_METHOD_GET: return "Get";
	case MAD_METHOD_SET: return "Set";
	case MAD_METHOD_TRAP_REPRESS: return "TrapRepress";
	}
	return "request";
}

static const char *attr_name(uint16_t a)
{
	switch (a) {
	case SMP_ATTR_NODE_DESC: return "NodeDescription";
	case SMP_ATTR_NODE_INFO: return "NodeInfo";
	case SMP_ATTR_SWITCH_INFO: return "SwitchInfo";
	case SMP_ATTR_GUID_INFO: return "GUIDInfo";
	case SMP_ATTR_PORT_INFO: return "PortInfo";
	case SMP_ATTR_PKEY_TABLE: return "P_KeyTable";
	case SMP_ATTR_SL2VL_TABLE: return "SLtoVLMappingTable";
	case SMP_ATTR_VL_ARB_TABLE: return "VLArbitrationTable";
	case SMP_ATTR_LFT: return "LinearForwardingTable";
	case SMP_ATTR_MFT: return "MulticastForwardingTable";
	case SMP_ATTR_SM_INFO: return "SMInfo";
	case SMP_ATTR_NOTICE: return "Notice";
	}
	return "an attribute";
}

static const char *port_text(const struct fab_port *p, char *buf, size_t len)
{
	const struct fab_node *n = p->node;

	snprintf(buf, len, "%s port %u (GUID 0x%016" PRIx64 ")",
		 n->desc_valid && n->desc[0] ? n->desc : "(no description)",
		 n->type == NODE_TYPE_SWITCH ? 0 : p->num, holder_guid(p));
	return buf;
}

/* Read p at once with its key: a valid Get stops the lease a violation started */
static void guard_cb(void *arg, int status, const struct smp *req, const struct smp *resp)
{
	(void)arg, (void)req, (void)resp;
	if (status < 0)
		log_debug_errno(status, "M_Key: the read that stops a port's lease failed");
}

static void guard(struct mkey *m, const struct fab_port *src)
{
	const struct fab_port *h = holder(src);
	const struct dr_path *route = fabric_port_route(h);
	struct mk_port *e = entry(m, src);
	uint64_t now = txn_now_us();
	struct smp req;

	if (!e || !route || e->state != MK_NONE || now - e->guard_us < MKEY_GUARD_EVERY_S * US)
		return;
	e->guard_us = now;
	smp_init_dr(&req, MAD_METHOD_GET, SMP_ATTR_PORT_INFO, e->num, route);
	req.mkey = key_for_guid(m, e->guid);
	if (txn_submit(m->smd->txn, &req, 0, guard_cb, NULL) == 0)
		m->st.guards++;
}

void mkey_trap(struct smd *smd, const uint8_t *mad, size_t len, const struct fab_port *src,
	       uint16_t slid)
{
	struct mkey *m = smd->mkey;
	const struct fab_port *req_port;
	struct notice_bad_mkey n;
	char a[128], b[128], dr[48] = "";
	uint64_t now = txn_now_us();
	bool own;

	if (!m || notice_bad_mkey_decode(mad, len, &n) < 0)
		return;
	m->st.traps++;
	req_port = smd->fabric && n.lid ? fabric_port_by_lid(smd->fabric, n.lid) : NULL;
	/* smd's own SMP, with the key smd has for that port: the port holds another */
	own = src && n.lid && n.lid == smd->sm_lid && n.mkey &&
	      n.mkey == key_for_guid(m, holder_guid(src));
	if (own) {
		struct mk_port *e = entry(m, src);

		m->st.traps_own++;
		if (e && e->state != MK_UNKNOWN)
			unknown(m, e, NULL, "it sent a Bad M_Key trap about smd's own SMP");
	} else if (src) {
		guard(m, src);
	}
	if (n.dr_notice)
		snprintf(dr, sizeof(dr), ", by directed route (%u hops)", n.dr_hops);
	snprintf(m->last, sizeof(m->last), "%s (LID %u) refused a %s of %s (modifier 0x%08x) "
		 "from %s%s with %s",
		 src ? port_text(src, a, sizeof(a)) : "a port not in the model",
		 slid, method_name(n.method), attr_name(n.attr_id), n.attr_mod,
		 own ? "this SM" : req_port ? port_text(req_port, b, sizeof(b)) :
		 n.lid && n.lid < LID_PERMISSIVE ? "a LID not in the model" :
		 "an unknown requester",
		 dr, n.mkey ? "a wrong M_Key" : "no M_Key");
	if (req_port || (n.lid && n.lid < LID_PERMISSIVE)) {
		size_t l = strlen(m->last);

		snprintf(m->last + l, sizeof(m->last) - l, " (requester LID %u)", n.lid);
	}
	m->last_when = time(NULL);
	/* One line per MKEY_LOG_EVERY_S; the traps in between are counted */
	if (m->log_us && now - m->log_us < MKEY_LOG_EVERY_S * US) {
		m->log_quiet++;
		return;
	}
	if (own)
		log_info("Bad M_Key trap: %s", m->last);
	else
		log_warn("Bad M_Key trap: %s", m->last);
	if (m->log_quiet)
		log_warn("Bad M_Key trap: %" PRIu64 " more in the last %u s not logged",
			 m->log_quiet, MKEY_LOG_EVERY_S);
	m->log_us = now;
	m->log_quiet = 0;
}

/* ---- smctl status ---- */

int mkey_status_fill(const struct smd *smd, struct status_mkey *k, void **owned)
{
	const struct mkey *m = smd->mkey;
	const struct smd_config *c = &smd->cfg;
	struct status_mkey_port *u;
	uint64_t now = txn_now_us();
	size_t n = 0;

	memset(k, 0, sizeof(*k));
	*owned = NULL;
	k->set = c->m_key != 0;
	k->protect_bits = c->m_key_protect_bits;
	k->lease_period = c->m_key_lease_period;
	if (!m)
		return 0;
	k->tracking = true;
	k->traps = m->st.traps;
	k->traps_own = m->st.traps_own;
	k->guards = m->st.guards;
	k->taken = m->st.taken;
	k->recovered = m->st.recovered;
	if (m->last[0]) {
		k->last = m->last;
		k->last_when = m->last_when;
	}
	for (size_t i = 0; i < m->size; i++)
		n += m->ports[i].guid && m->ports[i].state == MK_UNKNOWN;
	if (!n)
		return 0;
	u = calloc(n, sizeof(*u));
	if (!u)
		return -ENOMEM;
	n = 0;
	for (size_t i = 0; i < m->size; i++) {
		const struct mk_port *e = &m->ports[i];

		if (!e->guid || e->state != MK_UNKNOWN)
			continue;
		u[n].guid = e->guid;
		u[n].name = e->name;
		u[n].never = e->lease_known && !e->lease;
		u[n].read_again_s = e->due_us > now ? (e->due_us - now + US - 1) / US : 0;
		n++;
	}
	k->unknown = u;
	k->nunknown = n;
	*owned = u;
	return 0;
}
