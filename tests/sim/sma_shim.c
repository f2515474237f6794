// SPDX-License-Identifier: MIT
/*
 * sma_shim.c - LD_PRELOAD shim for ibsim that gives the simulated fabric
 * the subnet management agent features ibsim 0.10 lacks: M_Key checks and
 * a writable GUIDInfo table per endport.
 *
 * It sits on ibsim's client sockets: every MAD a client sends is read() by
 * ibsim as one struct sim_request, answered in place and write()n back.
 * For each SMP request the shim works out the port that receives it
 * (directed route: a walk of the topology file ibsim was given, from the
 * node the client attached to; LID routed: the LIDs the PortInfo answers
 * showed), and then acts on the request (drop it) or on ibsim's answer
 * (rewrite it).
 *
 * M_Key. ibsim neither enforces nor remembers M_Key: sim_mad.c decodes no
 * SMP M_Key (the line is commented out) and its PortInfo Set stores no
 * M_Key, M_KeyProtectBits or M_KeyLeasePeriod. The shim keeps each port's
 * M_Key, ProtectBits, LeasePeriod and M_KeyViolations, and acts as IBA
 * 14.2.4 (and Linux's software SMAs, qib/hfi1 check_mkey()) say:
 *  - a port whose M_Key is 0 takes any key; otherwise an SMP is valid when
 *    its M_Key matches;
 *  - an invalid Get is answered while ProtectBits < 2 (at 1, a PortInfo
 *    answer shows M_Key 0); an invalid Get at 2 or 3, an invalid Set or
 *    TrapRepress is dropped (ibsim never sees it), counted in
 *    M_KeyViolations, starts the lease timer (LeasePeriod seconds, when
 *    not 0 and not running), and the port sends Trap 256 "Bad M_Key"
 *    (IBA 14.2.5.1, Notice data as the IBA lays it out) to its MasterSMLID;
 *  - a valid Get, Set or TrapRepress stops a running lease timer; when it
 *    expires, ProtectBits go to 0 (checked when the next SMP arrives);
 *  - a valid PortInfo Set writes M_Key, ProtectBits and LeasePeriod (and
 *    clears M_KeyViolations when it writes 0); every PortInfo answer
 *    carries the fields the shim keeps.
 * A switch has one key, kept for port 0; a PortInfo Set to any of its
 * ports writes it (harsher than the IBA, where those fields of external
 * ports are reserved, so that a Set that would wipe the key is caught).
 *
 * GUIDInfo (IBA 14.2.5.5). ibsim answers a GUIDInfo Get with the port GUID
 * at index 0 of block 0 and zeros elsewhere, and refuses every Set (status
 * 0x0008, "only get currently supported"). The shim keeps a table per
 * endport (CA port, switch port 0) of GUIDCap entries, GUIDCap as the
 * port's PortInfo answers show it (ibsim: 32 for a CA port, 1 for switch
 * port 0). The attribute modifier is the block number, 8 GUIDs a block:
 *  - a block at or past (GUIDCap + 7) / 8 is refused with status 0x001c
 *    (invalid attribute modifier), Get or Set;
 *  - a Set writes the block's entries, except index 0 (the port GUID,
 *    read-only) and indexes at or past GUIDCap (not there, read as 0);
 *  - Get and Set answer the block as the port now holds it, index 0 being
 *    what ibsim shows (so a console "Guid" change is followed).
 * Until a PortInfo answer has shown the port's GUIDCap the shim leaves
 * ibsim's GUIDInfo answers alone ("unresolved" in the log).
 * The shim sends nothing but the M_Key traps.
 *
 * Environment: SMA_SHIM_NET (the topology file ibsim loads; without it the
 * shim does nothing), SMA_SHIM_LOG (one line per event: "violation",
 * "trap", "set", "lease-start", "lease-stopped", "lease-expired",
 * "key-seen" the first time a client uses a nonzero M_Key for a port,
 * "guidinfo-set" for every GUIDInfo Set taken, "guidinfo-bad-block",
 * "unresolved" for an SMP whose port it cannot name), SMA_SHIM_DEBUG (a
 * "debug" line per SMP).
 *
 * Limits: the topology is the file's (console Link/Unlink/ReLink are not
 * followed); a CA's PortInfo for another of its ports (attribute modifier)
 * is checked against the receiving port; LID-routed SMPs to a LID no
 * PortInfo answer showed yet pass unchecked ("unresolved"); the GUIDInfo
 * tables live as long as ibsim (a port that is unplugged keeps its table).
 *
 * Build:  cc -shared -fPIC -O2 -o sma_shim.so sma_shim.c -ldl
 * Use:    SMA_SHIM_NET=net SMA_SHIM_LOG=log LD_PRELOAD=./sma_shim.so ibsim -s net
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dlfcn.h>
#include <endian.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* ibsim's wire structs (ibsim/include/ibsim.h, 0.10) */
struct sim_request {
	uint32_t dlid;
	uint32_t slid;
	uint32_t dqp;
	uint32_t sqp;
	uint32_t status;
	uint64_t length;
	char mad[256];
};

struct sim_ctl {
	uint32_t magic;
	uint32_t clientid;
	uint32_t type;
	uint32_t len;
	char data[64];
};

struct sim_client_info {
	uint32_t id;
	uint32_t qp;
	uint32_t issm;
	char nodeid[32];
};

#define SIM_MAGIC		0xdeadbeef
#define SIM_CTL_CONNECT		1
#define SIM_CTL_SET_ISSM	9
#define MAX_CLIENTS		10

/* MAD layout: IBA 13.4.3 (header), 14.2.1 (SMP) */
#define CLASS_SMI		0x01
#define CLASS_SMI_DR		0x81
#define M_GET			0x01
#define M_SET			0x02
#define M_TRAP			0x05
#define M_TRAP_REPRESS		0x07
#define ATTR_NOTICE		0x0002
#define ATTR_GUID_INFO		0x0014
#define ATTR_PORT_INFO		0x0015
/* IBA 13.4.7: an invalid value in the attribute or its modifier */
#define MAD_STATUS_BAD_FIELD	0x001c
#define NODE_CA			1
#define NODE_SWITCH		2

struct node {
	char name[64];
	uint64_t guid;
	int type;
	int nports;
	int base;			/* first entry in ports[] (port 0 of a switch, 1 of a CA) */
};

struct link {
	int node, port;			/* -1: no cable */
};

/* One M_Key holder: a switch (its port 0) or a CA port */
struct holder {
	uint64_t mkey;
	uint64_t lease_deadline_ns;	/* 0: the lease timer is not running */
	uint16_t lease;
	uint16_t violations;
	uint16_t lid, smlid;
	uint8_t lmc;
	uint8_t protect;
	/* GUIDInfo of an endport (CA port, switch port 0): IBA 14.2.5.5 */
	bool guid_cap_known;
	uint8_t guid_cap;
	uint64_t *guids;		/* [guid_cap], index 0 unused (ibsim's port GUID) */
};

static struct node *nodes;
static int nnodes;
static struct link *links;		/* per (node, port): links[nodes[i].base + port] */
static struct holder *holders;		/* same index; a switch uses its port 0 entry */
static int nslots;
static bool active;
static FILE *logf;

static int ctl_fd = -1;
static int client_fd[MAX_CLIENTS] = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 };
static int client_node[MAX_CLIENTS] = { -1, -1, -1, -1, -1, -1, -1, -1, -1, -1 };
static bool client_issm[MAX_CLIENTS];
static uint64_t *seen_keys;		/* key-seen lines: (client, holder) pairs logged */

/* The request being answered: ibsim answers in place right after reading it */
static struct {
	bool valid;
	uint32_t tid_low;
	int slot;			/* holder of the receiving port */
	int port_slot;			/* links[] index of the receiving port */
	uint64_t mkey;
	uint8_t method;
	uint16_t attr;
	uint32_t amod;			/* its low byte (PortInfo: the port) */
	uint32_t amod32;		/* all of it (GUIDInfo: the block) */
	uint8_t data[64];		/* the SMP data of a Set */
} pending;

static ssize_t (*real_read)(int, void *, size_t);
static ssize_t (*real_write)(int, const void *, size_t);
static int (*real_bind)(int, const struct sockaddr *, socklen_t);
static ssize_t (*real_recvfrom)(int, void *, size_t, int, struct sockaddr *, socklen_t *);
static ssize_t (*real_sendto)(int, const void *, size_t, int, const struct sockaddr *,
			      socklen_t);

static void logmsg(const char *fmt, ...)
{
	va_list ap;

	if (!logf)
		return;
	va_start(ap, fmt);
	vfprintf(logf, fmt, ap);
	va_end(ap);
	fputc('\n', logf);
	fflush(logf);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Big-endian fields of a MAD (IBA numbers bytes from the most significant) */
static uint64_t get_be(const uint8_t *p, int n)
{
	uint64_t v = 0;

	for (int i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void put_be(uint8_t *p, int n, uint64_t v)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		p[i] = (uint8_t)v;
}

/* ---- the topology file (ibnetdiscover format, as ibsim reads it) ---- */

static int slot_of(int n, int p);

static int node_by_name(const char *name)
{
	for (int i = 0; i < nnodes; i++)
		if (!strcmp(nodes[i].name, name))
			return i;
	return -1;
}

static int quoted(const char *s, char *out, size_t len)
{
	const char *a = strchr(s, '"'), *b = a ? strchr(a + 1, '"') : NULL;

	if (!b || (size_t)(b - a - 1) >= len)
		return -1;
	memcpy(out, a + 1, (size_t)(b - a - 1));
	out[b - a - 1] = 0;
	return (int)(b - s + 1);
}

static int load_net(const char *path)
{
	char line[512], name[64], rname[64];
	uint64_t guid = 0;
	int cur = -1, pass;
	FILE *f;

	/* Pass 0 counts and names the nodes, pass 1 reads the cables */
	for (pass = 0; pass < 2; pass++) {
		f = fopen(path, "re");
		if (!f)
			return -1;
		cur = -1;
		while (fgets(line, sizeof(line), f)) {
			char *s = line;

			while (isspace((unsigned char)*s))
				s++;
			if (!strncmp(s, "switchguid=", 11) || !strncmp(s, "caguid=", 7)) {
				guid = strtoull(strchr(s, '=') + 1, NULL, 0);
			} else if (!strncmp(s, "Switch", 6) || !strncmp(s, "Hca", 3) ||
				   !strncmp(s, "Ca", 2)) {
				int type = s[0] == 'S' ? NODE_SWITCH : NODE_CA;
				char *e = s;

				while (*e && !isspace((unsigned char)*e))
					e++;
				if (quoted(s, name, sizeof(name)) < 0)
					continue;
				cur = pass ? node_by_name(name) : nnodes;
				if (pass == 0) {
					struct node *nn = realloc(nodes, (size_t)(nnodes + 1) *
								  sizeof(*nodes));

					if (!nn)
						return -1;
					nodes = nn;
					memset(&nodes[nnodes], 0, sizeof(*nodes));
					snprintf(nodes[nnodes].name, sizeof(nodes[0].name), "%s",
						 name);
					nodes[nnodes].type = type;
					nodes[nnodes].nports = atoi(e);
					nodes[nnodes].guid = guid;
					nnodes++;
				}
				guid = 0;
			} else if (pass == 1 && s[0] == '[' && cur >= 0) {
				int port = atoi(s + 1), rport, rn, k;
				char *q = strchr(s, ']');

				if (!q || (k = quoted(q, rname, sizeof(rname))) < 0)
					continue;
				q += k;
				if (*q != '[')
					continue;
				rport = atoi(q + 1);
				rn = node_by_name(rname);
				if (rn < 0 || slot_of(cur, port) < 0)
					continue;
				links[slot_of(cur, port)] = (struct link){ rn, rport };
			}
		}
		fclose(f);
		if (pass == 0) {
			for (int i = 0; i < nnodes; i++) {
				nodes[i].base = nslots;
				nslots += nodes[i].nports + (nodes[i].type == NODE_SWITCH);
			}
			links = calloc((size_t)nslots + 1, sizeof(*links));
			holders = calloc((size_t)nslots + 1, sizeof(*holders));
			seen_keys = calloc((size_t)(nslots + 1) * MAX_CLIENTS / 64 + 1,
					   sizeof(*seen_keys));
			if (!links || !holders || !seen_keys)
				return -1;
			for (int i = 0; i < nslots; i++)
				links[i] = (struct link){ -1, -1 };
		}
	}
	return 0;
}

/* links[]/holders[] index of port p of node n (a CA's ports start at 1) */
static int slot_of(int n, int p)
{
	if (n < 0 || p < (nodes[n].type == NODE_SWITCH ? 0 : 1) || p > nodes[n].nports)
		return -1;
	return nodes[n].base + p - (nodes[n].type == NODE_CA);
}

/* The node a links[]/holders[] index belongs to, and its port number */
static int node_of_slot(int slot, int *port)
{
	for (int i = 0; i < nnodes; i++) {
		int ns = nodes[i].nports + (nodes[i].type == NODE_SWITCH);

		if (slot >= nodes[i].base && slot < nodes[i].base + ns) {
			if (port)
				*port = slot - nodes[i].base + (nodes[i].type == NODE_CA);
			return i;
		}
	}
	return -1;
}

/* The holder of a port's M_Key: the switch's port 0, or the CA port itself */
static int holder_of(int n, int p)
{
	return nodes[n].type == NODE_SWITCH ? nodes[n].base : slot_of(n, p);
}

static void slot_name(int slot, char *buf, size_t len)
{
	int p, i = node_of_slot(slot, &p);

	if (i < 0) {
		snprintf(buf, len, "slot=%d", slot);
		return;
	}
	/* ibsim: a CA port's GUID is the node GUID plus the port number */
	snprintf(buf, len, "node=%s port=%d guid=0x%016llx", nodes[i].name, p,
		 (unsigned long long)(nodes[i].guid +
				      (nodes[i].type == NODE_CA ? (unsigned int)p : 0)));
}

/*
 * The port a directed-route SMP from a client at node c reaches (IBA
 * 14.2.2: exit ports initial_path[1..hops]; only a switch is crossed).
 * The client sits on port 1 of a CA, or on a switch's port 0.
 */
static int walk_dr(int c, const uint8_t *path, int hops, int *port, uint8_t *rp)
{
	int n = c, p = nodes[c].type == NODE_SWITCH ? 0 : 1;

	for (int i = 1; i <= hops; i++) {
		int s;

		if (i > 1 && nodes[n].type != NODE_SWITCH)
			return -1;
		if (nodes[n].type == NODE_SWITCH && path[i] == 0) {
			p = 0;
		} else {
			s = slot_of(n, path[i]);
			if (s < 0 || links[s].node < 0)
				return -1;
			p = links[s].port;
			n = links[s].node;
		}
		rp[i] = (uint8_t)p;	/* the return path: where it came in at each hop */
	}
	*port = p;
	return n;
}

static int slot_by_lid(uint16_t lid)
{
	for (int i = 0; i < nslots && lid; i++) {
		const struct holder *h = &holders[i];

		if (h->lid && lid >= h->lid && lid < h->lid + (1u << h->lmc))
			return i;
	}
	return -1;
}

/* ---- M_Key (IBA 14.2.4) ---- */

static void lease_check(int slot)
{
	struct holder *h = &holders[slot];
	char who[160];

	if (h->lease_deadline_ns && now_ns() >= h->lease_deadline_ns) {
		h->lease_deadline_ns = 0;
		h->protect = 0;
		slot_name(slot, who, sizeof(who));
		logmsg("lease-expired %s", who);
	}
}

/* Trap 256 (IBA 14.2.5.1, Notice; data details as in IBA table 144) to the port's SM */
static void send_bad_mkey_trap(int slot, const uint8_t *req, uint16_t req_lid,
			       const uint8_t *rp)
{
	struct holder *h = &holders[slot];
	struct sim_request t;
	uint8_t *m = (uint8_t *)t.mad, *d = m + 64;
	static uint32_t tid = 0x6b650000;
	int sm = slot_by_lid(h->smlid), smnode = sm >= 0 ? node_of_slot(sm, NULL) : -1, cl = -1;
	char who[160];

	slot_name(slot, who, sizeof(who));
	for (int i = 0; smnode >= 0 && i < MAX_CLIENTS; i++)
		if (client_fd[i] >= 0 && client_issm[i] && client_node[i] == smnode)
			cl = i;
	if (!h->lid || !h->smlid || cl < 0) {
		logmsg("trap %s lid=%u smlid=%u delivered=no", who, h->lid, h->smlid);
		return;
	}
	memset(&t, 0, sizeof(t));
	m[0] = 1;				/* BaseVersion */
	m[1] = CLASS_SMI;			/* LID routed */
	m[2] = 1;				/* ClassVersion */
	m[3] = M_TRAP;
	put_be(m + 8, 8, ++tid);
	put_be(m + 16, 2, ATTR_NOTICE);
	/* Notice: IsGeneric, Type 2 (security), ProducerType, TrapNumber, IssuerLID */
	d[0] = 0x80 | 0x02;
	put_be(d + 1, 3, nodes[node_of_slot(slot, NULL)].type == NODE_SWITCH ? 2 : 1);
	put_be(d + 4, 2, 256);
	put_be(d + 6, 2, h->lid);
	/* Data details: requester LID, DrSLID, method, attribute, modifier, M_Key */
	put_be(d + 12, 2, req_lid);
	put_be(d + 18, 2, get_be(req + 16, 2));
	d[16] = req[3];
	put_be(d + 20, 4, get_be(req + 20, 4));
	put_be(d + 24, 8, get_be(req + 24, 8));
	if (req[1] == CLASS_SMI_DR) {
		int hops = req[7] > 30 ? 30 : req[7];

		put_be(d + 14, 2, get_be(req + 32, 2));
		d[33] = (uint8_t)(0x80 | (req[7] > 30 ? 0x40 : 0) | hops);
		memcpy(d + 34, rp + 1, (size_t)hops);
	}
	t.dlid = htobe16(h->smlid);
	t.slid = htobe16(h->lid);
	t.length = htobe64(256);
	if (real_write(client_fd[cl], &t, sizeof(t)) != sizeof(t)) {
		logmsg("trap %s lid=%u smlid=%u delivered=no (%s)", who, h->lid, h->smlid,
		       strerror(errno));
		return;
	}
	logmsg("trap %s lid=%u smlid=%u delivered=yes", who, h->lid, h->smlid);
}

/*
 * One SMP request from client cl: false when the SMA drops it. Fills
 * pending so that the answer can carry the M_Key fields.
 */
static bool check_request(int cl, struct sim_request *r)
{
	uint8_t *m = (uint8_t *)r->mad;
	uint8_t mclass = m[1], method = m[3];
	uint16_t attr = (uint16_t)get_be(m + 16, 2), req_lid = 0;
	uint64_t key = get_be(m + 24, 8);
	uint8_t rp[64] = { 0 };
	int n = -1, p = 0, slot, ps, me;
	struct holder *h;
	bool valid;
	char who[160];

	pending.valid = false;
	if (cl < 0 || client_node[cl] < 0 || (mclass != CLASS_SMI && mclass != CLASS_SMI_DR) ||
	    (method & 0x80))
		return true;
	me = holder_of(client_node[cl], nodes[client_node[cl]].type == NODE_SWITCH ? 0 : 1);
	if (mclass == CLASS_SMI_DR) {
		n = m[7] < 64 ? walk_dr(client_node[cl], m + 128, m[7], &p, rp) : -1;
		req_lid = me >= 0 ? holders[me].lid : 0;
	} else {
		uint16_t dlid = be16toh((uint16_t)r->dlid);
		int s = slot_by_lid(dlid);

		n = s >= 0 ? node_of_slot(s, &p) : -1;
		req_lid = r->slid ? be16toh((uint16_t)r->slid) : me >= 0 ? holders[me].lid : 0;
	}
	if (n < 0) {
		logmsg("unresolved class=0x%02x method=0x%02x attr=0x%04x from=%s", mclass, method,
		       attr, nodes[client_node[cl]].name);
		return true;
	}
	slot = holder_of(n, p);
	ps = slot_of(n, p);
	if (getenv("SMA_SHIM_DEBUG"))
		logmsg("debug class=0x%02x method=0x%02x attr=0x%04x amod=%u node=%s port=%d "
		       "key=0x%llx data0=0x%llx", mclass, method, attr,
		       (unsigned int)get_be(m + 20, 4), nodes[n].name, p, (unsigned long long)key,
		       (unsigned long long)get_be(m + 64, 8));
	if (slot < 0 || ps < 0)
		return true;
	h = &holders[slot];
	slot_name(slot, who, sizeof(who));
	if (key) {
		size_t bit = (size_t)slot * MAX_CLIENTS + (size_t)cl;

		if (!(seen_keys[bit / 64] & (1ull << (bit % 64)))) {
			seen_keys[bit / 64] |= 1ull << (bit % 64);
			logmsg("key-seen %s key=0x%016llx from=%s", who, (unsigned long long)key,
			       nodes[client_node[cl]].name);
		}
	}
	lease_check(slot);
	valid = !h->mkey || h->mkey == key;
	if (valid && h->lease_deadline_ns &&
	    (method == M_GET || method == M_SET || method == M_TRAP_REPRESS)) {
		h->lease_deadline_ns = 0;
		logmsg("lease-stopped %s", who);
	}
	if (!valid && (method == M_SET || method == M_TRAP_REPRESS ||
		       (method == M_GET && h->protect >= 2))) {
		if (h->violations != 0xffff)
			h->violations++;
		if (!h->lease_deadline_ns && h->lease) {
			h->lease_deadline_ns = now_ns() + (uint64_t)h->lease * 1000000000u;
			logmsg("lease-start %s seconds=%u", who, h->lease);
		}
		logmsg("violation %s method=0x%02x attr=0x%04x amod=0x%08x key=0x%016llx "
		       "from=%s count=%u", who, method, attr, (unsigned int)get_be(m + 20, 4),
		       (unsigned long long)key, nodes[client_node[cl]].name, h->violations);
		send_bad_mkey_trap(slot, m, req_lid, rp);
		return false;
	}
	/* PortInfo's modifier names the port in bits 0-7 (bit 31: extended speeds) */
	if (valid && method == M_SET && attr == ATTR_PORT_INFO &&
	    (nodes[n].type == NODE_SWITCH || (m[23] == 0 || m[23] == p))) {
		const uint8_t *d = m + 64;
		uint64_t nk = get_be(d, 8);
		uint16_t nl = (uint16_t)get_be(d + 26, 2);
		uint8_t np = d[34] >> 6;

		if (nk != h->mkey || nl != h->lease || np != h->protect)
			logmsg("set %s key=0x%016llx protect=%u lease=%u from=%s", who,
			       (unsigned long long)nk, np, nl, nodes[client_node[cl]].name);
		h->mkey = nk;
		h->lease = nl;
		h->protect = np;
		if (get_be(d + 44, 2) == 0)
			h->violations = 0;
	}
	pending = (typeof(pending)){
		.valid = true, .tid_low = (uint32_t)get_be(m + 12, 4), .slot = slot,
		.port_slot = ps, .mkey = key, .method = method, .attr = attr,
		.amod = m[23], .amod32 = (uint32_t)get_be(m + 20, 4),
	};
	memcpy(pending.data, m + 64, sizeof(pending.data));
	return true;
}

/* ---- GUIDInfo (IBA 14.2.5.5) ---- */

/* An endport's GUIDCap, as a PortInfo answer shows it (PortInfo byte 50) */
static void guid_cap_learn(struct holder *e, uint8_t cap)
{
	uint64_t *g;

	if (e->guid_cap_known && e->guid_cap == cap)
		return;
	g = calloc(cap ? cap : 1, sizeof(*g));
	if (!g)
		return;
	for (unsigned int i = 0; e->guids && i < cap && i < e->guid_cap; i++)
		g[i] = e->guids[i];
	free(e->guids);
	e->guids = g;
	e->guid_cap = cap;
	e->guid_cap_known = true;
}

/* ibsim's answer to the pending GUIDInfo Get or Set, replaced by the table's */
static void guidinfo_answer(uint8_t *m)
{
	struct holder *e = &holders[pending.slot];
	uint8_t *d = m + 64;
	uint32_t block = pending.amod32;
	uint16_t dbit = m[1] == CLASS_SMI_DR ? (uint16_t)(get_be(m + 4, 2) & 0x8000) : 0;
	uint64_t guid0 = get_be(d, 8);	/* ibsim's: the port GUID in block 0 */
	char who[160];

	slot_name(pending.slot, who, sizeof(who));
	if (!e->guid_cap_known) {
		logmsg("unresolved guidinfo %s: no PortInfo answer has shown its GUIDCap", who);
		return;
	}
	if (block >= (e->guid_cap + 7u) / 8) {
		memset(d, 0, 64);
		put_be(m + 4, 2, dbit | MAD_STATUS_BAD_FIELD);
		logmsg("guidinfo-bad-block %s method=0x%02x block=%u cap=%u", who,
		       pending.method, block, e->guid_cap);
		return;
	}
	if (pending.method == M_SET) {
		for (unsigned int k = 0; k < 8; k++) {
			unsigned int i = block * 8 + k;

			/* index 0 is the port GUID, read-only; past GUIDCap is nothing */
			if (i && i < e->guid_cap)
				e->guids[i] = get_be(pending.data + 8 * k, 8);
		}
		logmsg("guidinfo-set %s block=%u", who, block);
	}
	for (unsigned int k = 0; k < 8; k++) {
		unsigned int i = block * 8 + k;

		put_be(d + 8 * k, 8, i == 0 ? guid0 : i < e->guid_cap ? e->guids[i] : 0);
	}
	put_be(m + 4, 2, dbit);
}

/*
 * The answer to the pending request: PortInfo carries the fields the shim
 * keeps, GUIDInfo the table it keeps
 */
static void fix_answer(struct sim_request *r)
{
	uint8_t *m = (uint8_t *)r->mad, *d = m + 64;
	struct holder *h;
	int n, p = -1;

	if (!pending.valid || (m[1] != CLASS_SMI && m[1] != CLASS_SMI_DR) || m[3] != 0x81 ||
	    (uint32_t)get_be(m + 12, 4) != pending.tid_low ||
	    get_be(m + 16, 2) != pending.attr)
		return;
	pending.valid = false;
	if (pending.attr == ATTR_GUID_INFO) {
		guidinfo_answer(m);
		return;
	}
	if (pending.attr != ATTR_PORT_INFO)
		return;
	h = &holders[pending.slot];
	/* What the port holds: learnt from its answers (endports: CA ports, switch port 0) */
	n = node_of_slot(pending.port_slot, &p);
	/* GUIDCap: only from the answer that describes the endport itself */
	if (n >= 0 &&
	    (pending.amod == 0 || (nodes[n].type == NODE_CA && pending.amod == (uint32_t)p)))
		guid_cap_learn(&holders[pending.slot], d[50]);
	if (n >= 0 && (nodes[n].type == NODE_CA || pending.amod == 0)) {
		/* A switch's LID is its port 0's, whichever port the SMP came in by */
		struct holder *e = &holders[nodes[n].type == NODE_CA ? pending.port_slot :
					    pending.slot];

		e->lid = (uint16_t)get_be(d + 16, 2);
		e->smlid = (uint16_t)get_be(d + 18, 2);
		e->lmc = d[34] & 7;
	}
	/* IBA 14.2.5.6: at ProtectBits 1 a Get without the key shows M_Key 0 */
	if (pending.method == M_GET && h->mkey != pending.mkey && h->protect == 1)
		put_be(d, 8, 0);
	else
		put_be(d, 8, h->mkey);
	put_be(d + 26, 2, h->lease);
	d[34] = (uint8_t)((d[34] & 0x3f) | h->protect << 6);
	put_be(d + 44, 2, h->violations);
}

/* ---- the hooks ---- */

static int client_of_fd(int fd)
{
	for (int i = 0; i < MAX_CLIENTS && fd >= 0; i++)
		if (client_fd[i] == fd)
			return i;
	return -1;
}

__attribute__((constructor)) static void init(void)
{
	const char *net = getenv("SMA_SHIM_NET"), *lp = getenv("SMA_SHIM_LOG");

	real_read = dlsym(RTLD_NEXT, "read");
	real_write = dlsym(RTLD_NEXT, "write");
	real_bind = dlsym(RTLD_NEXT, "bind");
	real_recvfrom = dlsym(RTLD_NEXT, "recvfrom");
	real_sendto = dlsym(RTLD_NEXT, "sendto");
	if (!net)
		return;
	if (lp)
		logf = fopen(lp, "ae");
	if (load_net(net) < 0) {
		logmsg("error cannot load %s", net);
		return;
	}
	active = true;
	logmsg("load nodes=%d ports=%d", nnodes, nslots);
}

int bind(int fd, const struct sockaddr *a, socklen_t len)
{
	const struct sockaddr_un *u = (const void *)a;
	int r = real_bind(fd, a, len);

	/* ibsim's abstract names: "<base>:ctl", "<base>:out<i>" (client i) */
	if (r == 0 && active && a && a->sa_family == AF_UNIX &&
	    len > (socklen_t)offsetof(struct sockaddr_un, sun_path) + 1) {
		size_t n = len - offsetof(struct sockaddr_un, sun_path) - 1;
		char name[108] = "";
		const char *c;

		memcpy(name, u->sun_path + 1, n < sizeof(name) - 1 ? n : sizeof(name) - 1);
		c = strrchr(name, ':');
		if (c && !strcmp(c, ":ctl"))
			ctl_fd = fd;
		else if (c && !strncmp(c, ":out", 4) && atoi(c + 4) < MAX_CLIENTS)
			client_fd[atoi(c + 4)] = fd;
	}
	return r;
}

ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
		 socklen_t *fromlen)
{
	ssize_t r = real_recvfrom(fd, buf, len, flags, from, fromlen);
	const struct sim_ctl *c = buf;

	if (active && fd == ctl_fd && r == (ssize_t)sizeof(*c) && c->magic == SIM_MAGIC &&
	    c->type == SIM_CTL_SET_ISSM && c->clientid < MAX_CLIENTS) {
		int issm;

		memcpy(&issm, c->data, sizeof(issm));
		client_issm[c->clientid] = issm != 0;
	}
	return r;
}

ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
	       socklen_t tolen)
{
	const struct sim_ctl *c = buf;

	/* ibsim's answer to a connect names the client's id and node */
	if (active && fd == ctl_fd && len == sizeof(*c) && c->magic == SIM_MAGIC &&
	    c->type == SIM_CTL_CONNECT) {
		struct sim_client_info ci;

		memcpy(&ci, c->data, sizeof(ci));
		ci.nodeid[sizeof(ci.nodeid) - 1] = 0;
		if (ci.id < MAX_CLIENTS) {
			client_node[ci.id] = node_by_name(ci.nodeid);
			client_issm[ci.id] = ci.issm != 0;
			logmsg("client id=%u node=%s known=%s", ci.id, ci.nodeid,
			       client_node[ci.id] >= 0 ? "yes" : "no");
		}
	}
	return real_sendto(fd, buf, len, flags, to, tolen);
}

ssize_t read(int fd, void *buf, size_t len)
{
	int cl = active ? client_of_fd(fd) : -1;
	ssize_t r;

	for (;;) {
		r = real_read(fd, buf, len);
		if (cl < 0 || r != (ssize_t)sizeof(struct sim_request))
			return r;
		if (check_request(cl, buf))
			return r;
		/* Dropped by the SMA: ibsim reads the next one, if any */
	}
}

ssize_t write(int fd, const void *buf, size_t len)
{
	if (active && len == sizeof(struct sim_request) && client_of_fd(fd) >= 0) {
		struct sim_request r;

		memcpy(&r, buf, sizeof(r));
		fix_answer(&r);
		return real_write(fd, &r, len);
	}
	return real_write(fd, buf, len);
}
