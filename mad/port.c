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
#include <sys/epoll.h>
#include <infiniband/umad.h>

#include "autoconfig.h"
#include "mad/capture.h"
#include "mad/port.h"

#define UMAD_BUF_SIZE	1024
/* PortInfo.CapabilityMask bit 10, IsSMDisabled (IBA 14.2.5.6) */
#define PORT_CAP_SM_DISABLED	(1u << 10)

#if defined(HAVE_UMAD_GET_SMI_GSI_PAIR_BY_CA_NAME) && defined(HAVE_UMAD_OPEN_SMI_PORT)
#define PORT_SMI_GSI	1
#endif

struct mad_port {
	int smi_id;		/* the umad device of QP0 (the SMI agents) */
	int gsi_id;		/* ... of QP1 (the SA): smi_id unless the port is split */
	int epfd;		/* split: one descriptor for both; else -1 */
	bool next_gsi;		/* split: which side is read first next time */
	int issm_fd;
	int agent[MAD_AGENT_MAX];
	struct mad_port_attr attr;
	void *sbuf;
	void *rbuf;
	struct capture *cap;	/* NULL: not capturing */
};

static int agent_dev(const struct mad_port *p, enum mad_agent agent)
{
	return agent == MAD_AGENT_SA || agent == MAD_AGENT_PERF ? p->gsi_id : p->smi_id;
}

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
	snprintf(a->gsi_name, sizeof(a->gsi_name), "%s", up.ca_name);
	a->gsi_port_num = up.portnum;
	a->port_guid = be64toh(up.port_guid);
	a->lid = (uint16_t)up.base_lid;
	a->lmc = (uint8_t)up.lmc;
	a->sm_lid = (uint16_t)up.sm_lid;
	a->state = (uint8_t)up.state;
	a->phys_state = (uint8_t)up.phys_state;
	/* libibumad keeps sysfs's cap_mask in network order */
	a->cap_mask = be32toh(up.capmask);
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

#ifdef PORT_SMI_GSI
/*
 * The SMI and GSI devices behind the port found (kernel 6.11+ splits them
 * on multi-plane HCAs): the SM's port is the SMI one, its LID and GUID are
 * what the SM is; the SA lives on the GSI one. One device for both where
 * nothing is split. -ENODEV: the port has no SMI device.
 */
static int port_pair(struct mad_port_attr *a)
{
	struct umad_ca_pair pair;
	struct mad_port_attr smi;
	char gsi[sizeof(a->gsi_name)];
	int r;

	r = umad_get_smi_gsi_pair_by_ca_name(a->ca_name, (uint8_t)a->port_num, &pair, 1);
	if (r != 0 || !pair.smi_name[0] || !pair.gsi_name[0])
		return -ENODEV;
	snprintf(gsi, sizeof(gsi), "%s", pair.gsi_name);
	if (strcmp(pair.smi_name, a->ca_name) || (int)pair.smi_preferred_port != a->port_num) {
		r = port_fill_attr(pair.smi_name, (int)pair.smi_preferred_port, &smi);
		if (r < 0)
			return r;
		*a = smi;
	}
	snprintf(a->gsi_name, sizeof(a->gsi_name), "%s", gsi);
	a->gsi_port_num = (int)pair.gsi_preferred_port;
	return 0;
}
#endif

static int open_umad(const char *ca, int port_num, bool smi)
{
#ifdef PORT_SMI_GSI
	if (smi)
		return umad_open_smi_port(ca, port_num);
#endif
	return umad_open_port(ca, port_num);
}

/* Split: one epoll descriptor that is readable when either side is */
static int port_epoll(struct mad_port *p)
{
	struct epoll_event ev = { .events = EPOLLIN };

	p->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (p->epfd < 0)
		return -errno;
	ev.data.fd = umad_get_fd(p->smi_id);
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
		return -errno;
	ev.data.fd = umad_get_fd(p->gsi_id);
	if (epoll_ctl(p->epfd, EPOLL_CTL_ADD, ev.data.fd, &ev) < 0)
		return -errno;
	return 0;
}

static struct mad_port *port_new(void)
{
	struct mad_port *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->smi_id = p->gsi_id = -1;
	p->epfd = -1;
	p->issm_fd = -1;
	for (int i = 0; i < MAD_AGENT_MAX; i++)
		p->agent[i] = -ENOENT;
	/*
	 * umad_size() can be smaller than the offset umad_get_mad() uses
	 * (56 vs 64 with rdma-core 44), and umad2sim copies past the MAD:
	 * leave generous room rather than trust either.
	 */
	p->sbuf = calloc(1, UMAD_BUF_SIZE);
	p->rbuf = calloc(1, UMAD_BUF_SIZE);
	if (!p->sbuf || !p->rbuf)
		return mad_port_close(p);
	return p;
}

/* umad_register() says -EPERM whatever the kernel said: errno has it */
static int reg_agent(int dev, int mclass, int version, long *mask)
{
	int r;

	errno = 0;
	r = umad_register(dev, mclass, version, 0, mask);
	if (r >= 0)
		return r;
	return errno ? -errno : -EIO;
}

static void fail_at(struct mad_port_failure *why, enum mad_port_stage stage)
{
	if (why)
		why->stage = stage;
}

int mad_port_open(const char *spec, struct mad_port **out)
{
	return mad_port_open_sm(spec, out, NULL);
}

int mad_port_open_sm(const char *spec, struct mad_port **out, struct mad_port_failure *why)
{
	long dr_mask[16 / sizeof(long)] = { 0 };
	long lr_mask[16 / sizeof(long)] = { 0 };
	long sa_mask[16 / sizeof(long)] = { 0 };
	char issm[256];
	struct mad_port *p;
	int r;

	if (why)
		memset(why, 0, sizeof(*why));
	if (umad_init() < 0)
		return fail_at(why, MAD_PORT_STAGE_OPEN), -EIO;
	p = port_new();
	if (!p)
		return -ENOMEM;
	r = port_find(spec, &p->attr);
	if (r < 0) {
		fail_at(why, MAD_PORT_STAGE_FIND);
		goto fail;
	}
	if (why)
		why->attr = p->attr;
#ifdef PORT_SMI_GSI
	r = port_pair(&p->attr);
	if (why)
		why->attr = p->attr;
	if (r < 0) {
		fail_at(why, MAD_PORT_STAGE_SMI);
		goto fail;
	}
#endif
	/* IBA 14.2.5.6: a port that may not be an SM's (and a GSI-only plane) */
	if (p->attr.cap_mask & PORT_CAP_SM_DISABLED) {
		r = -EPERM;
		fail_at(why, MAD_PORT_STAGE_SM_DISABLED);
		goto fail;
	}
	/*
	 * issm before anything else: it is the SM's lock on the port (held, it
	 * sets IsSM in PortInfo.CapabilityMask). O_NONBLOCK: with another SM
	 * holding it, open() would block until that SM closes it; the kernel
	 * says EAGAIN instead (user_mad.rst, "Setting IsSM Capability Bit").
	 */
	r = umad_get_issm_path(p->attr.ca_name, p->attr.port_num, issm, sizeof(issm));
	if (r < 0) {
		fail_at(why, MAD_PORT_STAGE_ISSM);
		goto fail;
	}
	if (why)
		snprintf(why->path, sizeof(why->path), "%s", issm);
	p->issm_fd = open(issm, O_RDWR | O_NONBLOCK | O_CLOEXEC);
	if (p->issm_fd < 0) {
		r = errno ? -errno : -EIO;
		if (r == -EAGAIN || r == -EBUSY || r == -EPERM) {
			r = -EBUSY;
			fail_at(why, MAD_PORT_STAGE_ISSM_BUSY);
		} else {
			fail_at(why, MAD_PORT_STAGE_ISSM);
		}
		goto fail;
	}
	if (why)
		why->path[0] = 0;
	p->smi_id = open_umad(p->attr.ca_name, p->attr.port_num, true);
	if (p->smi_id < 0) {
		r = p->smi_id;
		fail_at(why, MAD_PORT_STAGE_OPEN);
		goto fail;
	}
	if (!strcmp(p->attr.gsi_name, p->attr.ca_name) && p->attr.gsi_port_num == p->attr.port_num) {
		p->gsi_id = p->smi_id;
	} else {
		p->gsi_id = open_umad(p->attr.gsi_name, p->attr.gsi_port_num, false);
		if (p->gsi_id < 0) {
			r = p->gsi_id;
			fail_at(why, MAD_PORT_STAGE_OPEN);
			goto fail;
		}
		r = port_epoll(p);
		if (r < 0) {
			fail_at(why, MAD_PORT_STAGE_OPEN);
			goto fail;
		}
	}
	/* Unsolicited SMPs for the SM: SMInfo Get/Set and Traps (IBA 14.4) */
	dr_mask[0] = (1L << MAD_METHOD_GET) | (1L << MAD_METHOD_SET);
	lr_mask[0] = (1L << MAD_METHOD_GET) | (1L << MAD_METHOD_SET) |
		     (1L << MAD_METHOD_TRAP) | (1L << MAD_METHOD_TRAP_REPRESS);
	r = reg_agent(p->smi_id, MAD_CLASS_SMI_DR, 1, dr_mask);
	p->agent[MAD_AGENT_SMI_DR] = r;
	if (r >= 0)
		p->agent[MAD_AGENT_SMI] = r = reg_agent(p->smi_id, MAD_CLASS_SMI, 1, lr_mask);
	if (r < 0) {
		fail_at(why, MAD_PORT_STAGE_AGENT_SMI);
		goto fail;
	}
	/*
	 * The SA: every request method a client may send, answered (those it
	 * does not serve with "method not supported", IBA 13.4.7: outside the
	 * mask the kernel would drop them and the client time out), which
	 * includes the RMPP ACKs of a kernel receiver (sent with the request
	 * method, IBA 13.6.2). Not Send (no response exists), Trap,
	 * TrapRepress, nor Report: another agent on this host may take
	 * Reports for its subscriptions. rmpp_version 0: segmentation is
	 * done here, not by the kernel.
	 */
	{
		unsigned long bits[16 / sizeof(long)] = { 0 };

		for (unsigned int m = 1; m < MAD_METHOD_RESP_BIT; m++) {
			if (m == 0x03 || m == MAD_METHOD_TRAP || m == MAD_METHOD_TRAP_REPRESS ||
			    m == 0x06)
				continue;
			bits[m / (8 * sizeof(long))] |= 1UL << (m % (8 * sizeof(long)));
		}
		memcpy(sa_mask, bits, sizeof(bits));
	}
	r = reg_agent(p->gsi_id, MAD_CLASS_SA, 2, sa_mask);
	p->agent[MAD_AGENT_SA] = r;
	if (r < 0) {
		fail_at(why, MAD_PORT_STAGE_AGENT_SA);
		goto fail;
	}
	/*
	 * The performance manager (IBA 16.1): a client of every node's PMA,
	 * so no method mask (the kernel hands it the answers to its own
	 * requests). Refused, smd runs without counters (mad_port_agent).
	 */
	p->agent[MAD_AGENT_PERF] = reg_agent(p->gsi_id, MAD_CLASS_PERF, PMA_CLASS_VERSION, NULL);
	*out = p;
	return 0;
fail:
	mad_port_close(p);
	return r < 0 ? r : -EIO;
}

int mad_port_open_mode(const char *spec, enum mad_port_mode mode, struct mad_port **out)
{
	struct mad_port *p;
	int r;

	if (mode == MAD_PORT_SM)
		return mad_port_open_sm(spec, out, NULL);
	if (umad_init() < 0)
		return -EIO;
	p = port_new();
	if (!p)
		return -ENOMEM;
	r = port_find(spec, &p->attr);
	if (r < 0)
		goto fail;
	p->smi_id = umad_open_port(p->attr.ca_name, p->attr.port_num);
	if (p->smi_id < 0) {
		r = p->smi_id;
		goto fail;
	}
	p->gsi_id = p->smi_id;
	/* A client only receives answers to what it sends: no method mask */
	r = reg_agent(p->gsi_id, MAD_CLASS_SA, 2, NULL);
	p->agent[MAD_AGENT_SA] = r;
	if (r < 0)
		goto fail;
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
			umad_unregister(agent_dev(p, (enum mad_agent)i), p->agent[i]);
	if (p->epfd >= 0)
		close(p->epfd);
	if (p->gsi_id >= 0 && p->gsi_id != p->smi_id)
		umad_close_port(p->gsi_id);
	if (p->smi_id >= 0)
		umad_close_port(p->smi_id);
	if (p->issm_fd >= 0)
		close(p->issm_fd);
	free(p->sbuf);
	free(p->rbuf);
	free(p);
	return NULL;
}

int mad_port_agent(const struct mad_port *p, enum mad_agent agent)
{
	if ((unsigned int)agent >= MAD_AGENT_MAX)
		return -EINVAL;
	return p->agent[agent];
}

int mad_port_fd(const struct mad_port *p)
{
	return p->epfd >= 0 ? p->epfd : umad_get_fd(p->smi_id);
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
	r = umad_send(agent_dev(p, agent), p->agent[agent], p->sbuf, (int)len, timeout_ms, 0);
	if (r < 0)
		return errno ? -errno : -EIO;
	if (p->cap)
		capture_sent(p->cap, mad, to->slid, to->qpn);
	return 0;
}

static int recv_one(struct mad_port *p, int dev, int *length)
{
	int r;

	*length = MAD_SIZE;
	errno = 0;
	r = umad_recv(dev, p->rbuf, length, 0);
	/*
	 * umad_recv() returns the MAD's agent id, or -errno: umad2sim hands
	 * over some MADs with agent id -1 (its table's "none"), a MAD all the
	 * same, told apart by errno, which only a failure sets
	 */
	if (r >= 0 || errno == 0)
		return 0;
	/* umad2sim returns -EWOULDBLOCK itself; a kernel's read says EAGAIN */
	if (r == -ETIMEDOUT || r == -EWOULDBLOCK || r == -EAGAIN)
		return -EAGAIN;
	return r;
}

int mad_port_recv(struct mad_port *p, uint8_t mad[MAD_SIZE], size_t *len,
		  struct mad_addr *from, int *send_status)
{
	int length, r;
	ib_mad_addr_t *addr;

	if (p->gsi_id == p->smi_id) {
		r = recv_one(p, p->smi_id, &length);
	} else {
		/* Split: both sides in turn, so that neither starves the other */
		int first = p->next_gsi ? p->gsi_id : p->smi_id;

		p->next_gsi = !p->next_gsi;
		r = recv_one(p, first, &length);
		if (r == -EAGAIN)
			r = recv_one(p, first == p->smi_id ? p->gsi_id : p->smi_id, &length);
	}
	if (r < 0)
		return r;
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
