// SPDX-License-Identifier: MIT
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <endian.h>
#include <infiniband/umad.h>

#include "mad/capture.h"
#include "mad/port.h"

#define UMAD_BUF_SIZE	1024

struct mad_port {
	int portid;
	int issm_fd;
	int agent[MAD_AGENT_MAX];
	struct mad_port_attr attr;
	void *sbuf;
	void *rbuf;
	struct capture *cap;	/* NULL: not capturing */
};

static int port_fill_attr(const char *ca, int portnum, struct mad_port_attr *a)
{
	umad_port_t up;
	umad_ca_t uca;
	int r;

	r = umad_get_port(ca, portnum, &up);
	if (r < 0)
		return r;
	memset(a, 0, sizeof(*a));
	snprintf(a->ca_name, sizeof(a->ca_name), "%s", up.ca_name);
	a->port_num = up.portnum;
	a->port_guid = be64toh(up.port_guid);
	a->lid = (uint16_t)up.base_lid;
	a->lmc = (uint8_t)up.lmc;
	a->sm_lid = (uint16_t)up.sm_lid;
	a->state = (uint8_t)up.state;
	a->phys_state = (uint8_t)up.phys_state;
	/* umad2sim reports "IB", the kernel "InfiniBand": only RoCE is refused */
	r = strcmp(up.link_layer, "Ethernet") ? 0 : -ENOLINK;
	umad_release_port(&up);
	if (r == 0 && umad_get_ca(ca, &uca) == 0) {
		a->node_guid = be64toh(uca.node_guid);
		umad_release_ca(&uca);
	}
	return r;
}

int mad_port_parse_spec(const char *spec, char *ca, size_t ca_len, int *port_num,
			uint64_t *guid)
{
	const char *colon;
	char *end;

	ca[0] = 0;
	*port_num = -1;
	*guid = 0;
	if (!spec || !*spec)
		return 0;
	if (!strncmp(spec, "0x", 2) || !strncmp(spec, "0X", 2)) {
		errno = 0;
		*guid = strtoull(spec + 2, &end, 16);
		return errno || *end || end == spec + 2 || !*guid ? -EINVAL : 0;
	}
	colon = strrchr(spec, ':');
	if (!colon || colon == spec || (size_t)(colon - spec) >= ca_len)
		return -EINVAL;
	long v;

	errno = 0;
	v = strtol(colon + 1, &end, 10);
	if (errno || *end || end == colon + 1 || v < 1 || v > 254)
		return -EINVAL;
	memcpy(ca, spec, (size_t)(colon - spec));
	ca[colon - spec] = 0;
	*port_num = (int)v;
	return 0;
}

static int port_find(const char *spec, struct mad_port_attr *out)
{
	char cas[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN];
	char want_ca[UMAD_CA_NAME_LEN];
	uint64_t want_guid;
	int want_port, n, r;

	r = mad_port_parse_spec(spec, want_ca, sizeof(want_ca), &want_port, &want_guid);
	if (r < 0)
		return r;

	n = umad_get_cas_names(cas, UMAD_MAX_DEVICES);
	if (n < 0)
		return n;
	for (int i = 0; i < n; i++) {
		umad_ca_t ca;

		if (want_ca[0] && strcmp(want_ca, cas[i]))
			continue;
		if (umad_get_ca(cas[i], &ca) < 0)
			continue;
		int nports = ca.numports;

		umad_release_ca(&ca);
		for (int pn = 1; pn <= nports; pn++) {
			struct mad_port_attr a;

			if (want_port > 0 && pn != want_port)
				continue;
			r = port_fill_attr(cas[i], pn, &a);
			if (r < 0)
				continue;
			if (want_guid && a.port_guid != want_guid)
				continue;
			/* Default: the first IB port whose link is up (IBA: PhysState LinkUp) */
			if (!want_guid && want_port < 0 && a.phys_state != PHYS_STATE_LINKUP)
				continue;
			*out = a;
			return 0;
		}
	}
	return -ENODEV;
}

int mad_port_open(const char *spec, struct mad_port **out)
{
	return mad_port_open_mode(spec, MAD_PORT_SM, out);
}

int mad_port_open_mode(const char *spec, enum mad_port_mode mode, struct mad_port **out)
{
	char issm[256];
	struct mad_port *p;
	int r;

	if (umad_init() < 0)
		return -EIO;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->portid = -1;
	p->issm_fd = -1;
	for (int i = 0; i < MAD_AGENT_MAX; i++)
		p->agent[i] = -1;

	r = port_find(spec, &p->attr);
	if (r < 0)
		goto fail;
	/*
	 * umad_size() can be smaller than the offset umad_get_mad() uses
	 * (56 vs 64 with rdma-core 44), and umad2sim copies past the MAD:
	 * leave generous room rather than trust either.
	 */
	p->sbuf = calloc(1, UMAD_BUF_SIZE);
	p->rbuf = calloc(1, UMAD_BUF_SIZE);
	if (!p->sbuf || !p->rbuf) {
		r = -ENOMEM;
		goto fail;
	}
	p->portid = umad_open_port(p->attr.ca_name, p->attr.port_num);
	if (p->portid < 0) {
		r = p->portid;
		goto fail;
	}
	if (mode == MAD_PORT_SA_CLIENT) {
		/* A client only receives answers to what it sends: no method mask */
		p->agent[MAD_AGENT_SA] = umad_register(p->portid, MAD_CLASS_SA, 2, 0, NULL);
		if (p->agent[MAD_AGENT_SA] < 0) {
			r = p->agent[MAD_AGENT_SA];
			goto fail;
		}
		*out = p;
		return 0;
	}
	/* Unsolicited SMPs for the SM: SMInfo Get/Set and Traps (IBA 14.4) */
	long dr_mask[16 / sizeof(long)] = { 0 };
	long lr_mask[16 / sizeof(long)] = { 0 };

	dr_mask[0] = (1L << MAD_METHOD_GET) | (1L << MAD_METHOD_SET);
	lr_mask[0] = (1L << MAD_METHOD_GET) | (1L << MAD_METHOD_SET) |
		     (1L << MAD_METHOD_TRAP) | (1L << MAD_METHOD_TRAP_REPRESS);
	p->agent[MAD_AGENT_SMI_DR] = umad_register(p->portid, MAD_CLASS_SMI_DR, 1, 0, dr_mask);
	p->agent[MAD_AGENT_SMI] = umad_register(p->portid, MAD_CLASS_SMI, 1, 0, lr_mask);
	/*
	 * The SA: requests of every method a client may send, and RMPP ACKs
	 * (a kernel RMPP receiver ACKs with the request method, IBA 13.6.2).
	 * rmpp_version 0: segmentation is done here, not by the kernel.
	 */
	long sa_mask[16 / sizeof(long)] = { 0 };

	sa_mask[0] = (1L << MAD_METHOD_GET) | (1L << MAD_METHOD_SET) | (1L << 0x12) |
		     (1L << 0x14) | (1L << 0x15);
	p->agent[MAD_AGENT_SA] = umad_register(p->portid, MAD_CLASS_SA, 2, 0, sa_mask);
	if (p->agent[MAD_AGENT_SMI_DR] < 0 || p->agent[MAD_AGENT_SMI] < 0) {
		r = p->agent[MAD_AGENT_SMI_DR] < 0 ? p->agent[MAD_AGENT_SMI_DR] :
						      p->agent[MAD_AGENT_SMI];
		if (r >= 0)
			r = -EIO;
		goto fail;
	}
	/* Holding issm open sets IsSM in our PortInfo.CapabilityMask */
	if (umad_get_issm_path(p->attr.ca_name, p->attr.port_num, issm, sizeof(issm)) == 0)
		p->issm_fd = open(issm, O_RDWR | O_CLOEXEC);
	if (p->issm_fd < 0) {
		r = -errno ? -errno : -EIO;
		goto fail;
	}
	*out = p;
	return 0;
fail:
	mad_port_close(p);
	return r;
}

struct mad_port *mad_port_close(struct mad_port *p)
{
	if (!p)
		return NULL;
	for (int i = 0; i < MAD_AGENT_MAX; i++)
		if (p->agent[i] >= 0)
			umad_unregister(p->portid, p->agent[i]);
	if (p->portid >= 0)
		umad_close_port(p->portid);
	if (p->issm_fd >= 0)
		close(p->issm_fd);
	free(p->sbuf);
	free(p->rbuf);
	free(p);
	return NULL;
}

int mad_port_fd(const struct mad_port *p)
{
	return umad_get_fd(p->portid);
}

const struct mad_port_attr *mad_port_attr(const struct mad_port *p)
{
	return &p->attr;
}

bool mad_port_fatal(int err)
{
	return err == -EIO || err == -ENODEV || err == -ENXIO || err == -EBADF;
}

int mad_port_send(struct mad_port *p, enum mad_agent agent, const uint8_t mad[MAD_SIZE],
		  uint16_t dlid, uint32_t qpn, int timeout_ms)
{
	struct mad_addr to = mad_addr_lid(dlid, qpn);

	return mad_port_send_to(p, agent, mad, MAD_SIZE, &to, timeout_ms);
}

int mad_port_send_to(struct mad_port *p, enum mad_agent agent, const uint8_t mad[MAD_SIZE],
		     size_t len, const struct mad_addr *to, int timeout_ms)
{
	ib_mad_addr_t *addr;
	int r;

	if ((unsigned int)agent >= MAD_AGENT_MAX || len < 24 || len > MAD_SIZE)
		return -EINVAL;
	if (p->agent[agent] < 0)
		return -EOPNOTSUPP;
	memcpy(umad_get_mad(p->sbuf), mad, MAD_SIZE);
	addr = umad_get_mad_addr(p->sbuf);
	memset(addr, 0, sizeof(*addr));
	umad_set_addr(p->sbuf, to->slid, (int)to->qpn, to->sl,
		      to->qpn ? (int)0x80010000 : 0);
	umad_set_pkey(p->sbuf, to->pkey_index);
	/*
	 * The fields, not umad_set_grh(): it takes the flow label in host
	 * order, where a received address has it in network order, and leaves
	 * the GID index alone
	 */
	if (to->grh) {
		addr->grh_present = 1;
		addr->gid_index = to->gid_index;
		addr->hop_limit = to->hop_limit;
		addr->traffic_class = to->traffic_class;
		addr->flow_label = htonl(to->flow_label & 0xfffff);
		memcpy(addr->gid, to->gid, 16);
	}
	/* umad_send() returns -EIO for any failure; errno is the kernel's */
	errno = 0;
	r = umad_send(p->portid, p->agent[agent], p->sbuf, (int)len, timeout_ms, 0);
	if (r < 0)
		return errno ? -errno : -EIO;
	if (p->cap)
		capture_sent(p->cap, mad, to->slid, to->qpn);
	return 0;
}

int mad_port_recv(struct mad_port *p, uint8_t mad[MAD_SIZE], size_t *len,
		  struct mad_addr *from, int *send_status)
{
	int length = MAD_SIZE, r;
	ib_mad_addr_t *addr;

	errno = 0;
	r = umad_recv(p->portid, p->rbuf, &length, 0);
	/*
	 * umad_recv() returns the MAD's agent id, or -errno: umad2sim hands
	 * over some MADs with agent id -1 (its table's "none"), a MAD all the
	 * same, told apart by errno, which only a failure sets. umad2sim
	 * returns -EWOULDBLOCK itself; a kernel's read says EAGAIN.
	 */
	if (r < 0 && errno != 0)
		return (r == -ETIMEDOUT || r == -EWOULDBLOCK || r == -EAGAIN) ? -EAGAIN : r;
	if (length < 0 || length > MAD_SIZE)
		length = length < 0 ? 0 : MAD_SIZE;
	memset(mad, 0, MAD_SIZE);
	memcpy(mad, umad_get_mad(p->rbuf), (size_t)length);
	*len = (size_t)length;
	if (send_status)
		*send_status = umad_status(p->rbuf);
	addr = umad_get_mad_addr(p->rbuf);
	if (from) {
		memset(from, 0, sizeof(*from));
		from->slid = ntohs(addr->lid);
		from->qpn = ntohl(addr->qpn);
		from->sl = addr->sl;
		from->pkey_index = addr->pkey_index;
		from->grh = addr->grh_present;
		if (from->grh) {
			from->gid_index = addr->gid_index;
			from->hop_limit = addr->hop_limit;
			from->traffic_class = addr->traffic_class;
			from->flow_label = ntohl(addr->flow_label) & 0xfffff;
			memcpy(from->gid, addr->gid, 16);
		}
	}
	if (p->cap)
		capture_received(p->cap, mad, (size_t)length, ntohs(addr->lid), ntohl(addr->qpn),
				 addr->sl, umad_status(p->rbuf));
	return 0;
}

void mad_port_set_capture(struct mad_port *p, struct capture *cap)
{
	p->cap = cap;
}
