/* SPDX-License-Identifier: MIT */
/*
 * The umad transport: one InfiniBand port opened through libibumad, the SM
 * agents registered on it, and the issm device held open so the port
 * advertises IsSM. Sends and receives are whole 256-byte MADs.
 *
 * On kernels that split a port's QP0 from its QP1 (6.11+, multi-plane
 * HCAs: an "SMI" device for the SMPs, a "GSI" device for the rest), the
 * SMI agents go to the SMI device and the SA agent to the GSI one, when
 * libibumad knows the pairs (HAVE_UMAD_GET_SMI_GSI_PAIR_BY_CA_NAME); the
 * caller still sees one port and one descriptor.
 */
#ifndef SMD_MAD_PORT_H
#define SMD_MAD_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mad/wire.h"

enum mad_agent {
	MAD_AGENT_SMI_DR,	/* class 0x81 */
	MAD_AGENT_SMI,		/* class 0x01 */
	MAD_AGENT_SA,		/* class 0x03, version 2, RMPP in user space */
	MAD_AGENT_PERF,		/* class 0x04: a performance manager's requests (answers only) */
	MAD_AGENT_MAX
};

struct mad_port_attr {
	char ca_name[32];		/* the SMI side when the port is split */
	int port_num;
	char gsi_name[32];		/* the GSI side: ca_name unless split */
	int gsi_port_num;
	uint64_t port_guid;
	uint64_t node_guid;
	uint16_t lid;
	uint16_t sm_lid;
	uint8_t lmc;
	uint8_t state;
	uint8_t phys_state;
	uint32_t cap_mask;		/* PortInfo.CapabilityMask as the kernel read it */
};

/*
 * The other end of a MAD and the path it took, as the kernel hands them
 * over with a received MAD (struct ib_mad_addr): for a request, exactly
 * what its answer needs. The kernel builds it for a reply already (a
 * received GRH's source GID is in gid, the local GID it was sent to is
 * gid_index), so an answer goes out with the request's mad_addr unchanged:
 * with the request's P_Key index and SL (IBA 13.5.4: a response travels
 * on the request's P_Key and SL), and with a GRH exactly when the request
 * had one (the requester's kernel drops a response whose GRH presence
 * differs from its request's: mad.c, rcv_has_same_gid).
 */
struct mad_addr {
	uint16_t slid;		/* the peer's LID: where it came from, where it goes */
	uint32_t qpn;		/* the peer's QP */
	uint8_t sl;
	uint16_t pkey_index;	/* into the local port's P_Key table */
	bool grh;		/* a GRH came with it, or goes with it */
	uint8_t gid_index;	/* the local GID (the GRH's source GID) */
	uint8_t hop_limit;
	uint8_t traffic_class;
	uint32_t flow_label;	/* 20 bits */
	uint8_t gid[16];	/* the peer's GID (the GRH's destination GID) */
};

/* A plain LID-routed address: SL 0, P_Key index 0, no GRH */
static inline struct mad_addr mad_addr_lid(uint16_t lid, uint32_t qpn)
{
	return (struct mad_addr){ .slid = lid, .qpn = qpn };
}

struct mad_port;

enum mad_port_mode {
	MAD_PORT_SM,		/* SMI agents, SA server agent, issm held open */
	MAD_PORT_SA_CLIENT,	/* an SA client: one agent for class 0x03 answers */
};
struct capture;

/*
 * spec: NULL or "" picks the first InfiniBand port whose link is up;
 * "CA:PORT" names one; "0x<guid>" picks the port with that GUID.
 */
int mad_port_open(const char *spec, struct mad_port **out);
int mad_port_open_mode(const char *spec, enum mad_port_mode mode, struct mad_port **out);

/* What an SM's port open failed at (mad_port_open_sm) */
enum mad_port_stage {
	MAD_PORT_STAGE_NONE,
	MAD_PORT_STAGE_FIND,		/* no such port (or none with its link up) */
	MAD_PORT_STAGE_SMI,		/* the port has no SMI device (a GSI-only plane) */
	MAD_PORT_STAGE_SM_DISABLED,	/* PortInfo.CapabilityMask says IsSMDisabled */
	MAD_PORT_STAGE_ISSM_BUSY,	/* another SM holds the port's issm */
	MAD_PORT_STAGE_ISSM,		/* issm cannot be opened for another reason */
	MAD_PORT_STAGE_OPEN,		/* the umad device cannot be opened */
	MAD_PORT_STAGE_AGENT_SMI,	/* the kernel refused the SMI agents */
	MAD_PORT_STAGE_AGENT_SA,	/* the kernel refused the SA agent */
};

struct mad_port_failure {
	enum mad_port_stage stage;
	struct mad_port_attr attr;	/* the port it was about (from FIND on) */
	char path[256];			/* the device file, when one was refused */
};

/*
 * An SM's port (MAD_PORT_SM): issm first, opened without blocking (it is
 * the SM's lock on the port: with it held by another SM, open() would
 * block for as long as that SM runs, user_mad.rst), then the umad
 * device(s) and the agents. A port that says IsSMDisabled is refused.
 * On failure, *why (may be NULL) says at which step and for which port.
 */
int mad_port_open_sm(const char *spec, struct mad_port **out, struct mad_port_failure *why);
/* Split a spec: ca[0] = 0 and *port_num = -1 when not given; -EINVAL if malformed */
int mad_port_parse_spec(const char *spec, char *ca, size_t ca_len, int *port_num,
			uint64_t *guid);
struct mad_port *mad_port_close(struct mad_port *p);
/*
 * An agent's id, or why the port has none: the SM's port registers the
 * performance manager's agent (MAD_AGENT_PERF) on its GSI side, and a
 * kernel that refuses it costs smd its counters only (-errno here)
 */
int mad_port_agent(const struct mad_port *p, enum mad_agent agent);
int mad_port_fd(const struct mad_port *p);
const struct mad_port_attr *mad_port_attr(const struct mad_port *p);

/*
 * Send one MAD; dlid 0xffff + qpn 0 for directed route. GSI MADs (qpn != 0)
 * carry the well-known Q_Key 0x80010000 (IBA 13.5.1). SL 0, P_Key index 0,
 * no GRH. timeout_ms > 0: a request the kernel waits for an answer to (it
 * refuses another request with the same TID meanwhile: -EINVAL).
 * Returns 0 or the kernel's -errno: -EIO (or -ENODEV) when the device has
 * gone away (mad_port_fatal).
 */
int mad_port_send(struct mad_port *p, enum mad_agent agent, const uint8_t mad[MAD_SIZE],
		  uint16_t dlid, uint32_t qpn, int timeout_ms);
/*
 * To an address with its SL, P_Key index and GRH (an answer: the request's
 * mad_addr), the first len bytes only (24..256): the kernel pads a GSI MAD
 * to 256 bytes on the wire, the simulator hands the reader len bytes, which
 * is how clients that count records by length (saquery) see the last segment.
 */
int mad_port_send_to(struct mad_port *p, enum mad_agent agent, const uint8_t mad[MAD_SIZE],
		     size_t len, const struct mad_addr *to, int timeout_ms);
/*
 * Non-blocking receive of one MAD: 0 with *len set, -EAGAIN when nothing
 * is queued, else the kernel's -errno (-EIO: the device went away; the
 * kernel keeps a MAD it could not hand over, so any error comes again).
 * *send_status is the transport's status (non-zero: the send with that TID
 * failed or timed out in the kernel or simulator).
 */
int mad_port_recv(struct mad_port *p, uint8_t mad[MAD_SIZE], size_t *len,
		  struct mad_addr *from, int *send_status);
/*
 * Record every MAD sent and received from now on in cap (mad/capture.h);
 * NULL stops. The caller keeps cap open while it is set.
 */
void mad_port_set_capture(struct mad_port *p, struct capture *cap);
/*
 * An error after which the port is of no more use: the device went away
 * (HCA reset, driver unloaded: the kernel kills the agents, read and write
 * fail with -EIO for ever, poll says POLLERR) or the descriptor is gone
 */
bool mad_port_fatal(int err);

#endif
