/* SPDX-License-Identifier: MIT */
/*
 * M_Key (IBA 14.2.4): every port's management key, derived from the one
 * secret m_key, written by smd and shown in every SMP it sends.
 *
 *  - Keys: the M_Key of a port is SipHash-2-4 keyed with (m_key,
 *    "smd-mkey") over "mkey" and its GUID (NodeInfo.PortGUID: a CA port,
 *    or a switch's port 0, whose key is the whole switch's), never 0; a
 *    port's key tells nothing of another's.
 *  - Which key an SMP carries: the key of the port at the end of its
 *    directed route. A Get carries a key only where the last model (or,
 *    after a restart, the one in the database) has that port: a node that
 *    copies a GUID at a new place is never shown that port's key before
 *    discovery has found it out. Sets go only to ports of the new model,
 *    named by the NodeInfo answers of this sweep. LID-routed SMPs
 *    (TrapRepress) carry the key of the port holding the LID.
 *  - smd writes M_Key, M_KeyProtectBits and M_KeyLeasePeriod in the
 *    PortInfo Set it sends to every CA port and switch (all of a switch's
 *    ports get the switch's key, so that none wipes it).
 *  - A port that shows another key (ProtectBits 0, or an m_key changed by
 *    SIGHUP: the old one is known) is taken over with that key. A port
 *    whose key smd cannot know (another SM's, an old secret) refuses
 *    smd's Set: that starts its lease (IBA 14.2.4.2); smd reads it again
 *    when the lease has run out and the port shows its key, and takes it
 *    back. With M_KeyLeasePeriod 0 that never happens: smd says so.
 *  - Trap 256 (Bad M_Key): counted, logged with the port that refused and
 *    the requester (at most once per MKEY_LOG_EVERY_S, the rest counted),
 *    shown by smctl status, never a reason to sweep. A port that reports
 *    another's violation is read at once with its key, which stops the
 *    lease the violation started: an intruder cannot unlock a port by
 *    failing on purpose.
 */
#ifndef SMD_MKEY_H
#define SMD_MKEY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "iba/iba.h"

#define MKEY_LOG_EVERY_S	10	/* Bad M_Key trap log lines: at most one per 10 s */
#define MKEY_GUARD_EVERY_S	1	/* reads of a port that reported a violation */

struct smd;
struct smp;
struct fabric;
struct fab_port;
struct mad_addr;
struct mkey;
typedef struct sd_event sd_event;

/* The M_Key of a port (CA port GUID, or a switch's port 0 GUID); never 0 */
uint64_t mkey_derive(uint64_t secret, uint64_t port_guid);

/*
 * Sets smd->mkey; with m_key set and a database, the fabric it saved is
 * where Gets find their keys until the first sweep completes.
 */
int mkey_new(struct smd *smd);
void mkey_free(struct smd *smd);
/*
 * The daemon's loop: re-reads the ports smd waits to take back; kick(arg)
 * after a tick queued SMPs, for the loop to send them
 */
int mkey_attach(struct smd *smd, sd_event *ev, void (*kick)(void *arg), void *arg);

/* mad/txn.c's M_Key callback (arg: the smd); a request whose M_Key is set keeps it */
uint64_t mkey_for_smp(void *arg, const struct smp *req, uint16_t dlid);
/*
 * The key of the port holding a LID in the model (TrapRepress): 0, or with
 * m_key -ENOENT for a LID the model lacks, -ENOKEY for a port whose key
 * smd does not know (*key is then only a guess: better not sent)
 */
int mkey_for_lid(const struct smd *smd, uint16_t lid, uint64_t *key);

/* A heavy sweep starts: this sweep's NodeInfo answers name the ports */
void mkey_sweep_start(struct smd *smd);
/* NodeInfo at path answered with its PortGUID (accepted by discovery) */
void mkey_node_info(struct smd *smd, const struct dr_path *path, const struct node_info *ni);
/* A PortInfo answer from endport p (a CA port, a switch's port 0): what it shows of its key */
void mkey_port_read(struct smd *smd, const struct fab_port *p, const struct port_info *pi);
/* Whether endport p's M_Key fields, as read, differ from what smd writes */
bool mkey_port_differs(const struct smd *smd, const struct fab_port *p);
/* The M_Key fields of a PortInfo Set to port p (any port of a switch) */
void mkey_fill(const struct smd *smd, const struct fab_port *p, struct port_info *pi);
/* smd cannot reach port p with a key (it refused a Set): leave it alone */
bool mkey_locked(const struct smd *smd, const struct fab_port *p);
/*
 * Before the ports are configured: the ports of model f that hold a key
 * smd knows but does not want get one Set each with it (a switch's from
 * port 0 alone, so that its other Sets all carry the new key). It only
 * submits them: the sweep's driver waits for their answers before the next
 * phase (smd/sweep.c, phase mkey). 0 or -errno.
 */
int mkey_takeover(struct smd *smd, struct fabric *f);
/*
 * A PortInfo Set to p went unanswered; pi: what a Get read back (NULL:
 * nothing). Decides whether p holds a key smd does not know.
 */
void mkey_set_refused(struct smd *smd, const struct fab_port *p, const struct port_info *pi);
/* The sweep that built the model smd now holds ended; own: the SM's port */
void mkey_model(struct smd *smd, const struct fab_port *own);
/* Trap 256 from LID slid (src: its port in the model, NULL when unknown) */
void mkey_trap(struct smd *smd, const uint8_t *mad, size_t len, const struct fab_port *src,
	       uint16_t slid);

struct mkey_stats {
	uint64_t traps;			/* Bad M_Key traps received */
	uint64_t traps_own;		/* ... about smd's own SMPs */
	uint64_t guards;		/* ports read at once to stop a lease */
	uint64_t refused;		/* ports found holding a key smd does not know */
	uint64_t taken;			/* ports given smd's key with one they held */
	uint64_t recovered;		/* ... of them once their lease had run out */
};
const struct mkey_stats *mkey_stats(const struct smd *smd);
struct status_mkey;
/*
 * What smctl status shows of M_Keys (smd/status.h): the settings, the
 * counts, the last Bad M_Key trap, the ports with an unknown key; *owned
 * gets what was allocated for the last (the caller frees it)
 */
int mkey_status_fill(const struct smd *smd, struct status_mkey *k, void **owned);

#endif
