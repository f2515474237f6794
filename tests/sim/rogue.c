// SPDX-License-Identifier: MIT
/*
 * rogue: a hostile management client for the simulator tests (issue 12).
 * It writes every MAD byte itself from the IBA (13.4.3 MAD header, 14.2.1
 * SMP layout, 14.2.5.13 SMInfo, 13.4.8.2 Notice), sharing no code with
 * smd, so that it attacks smd's decoders rather than agreeing with them.
 *
 *   rogue sm [--key K | --auth K] [--priority P] [--state S]
 *	Hold issm open (IsSM in our PortInfo), answer every SMInfo Get and
 *	Set as an SM with that priority and state (default: priority 15,
 *	MASTER), showing SM_Key K as the IBA has it (--key, default 0), or
 *	the per-direction value smd computes from K (--auth; SipHash-2-4 from
 *	its paper, written again here: see smd/sm.h). Commands on stdin:
 *	  set LID AMOD [GUID]  send SMInfo Set(AMOD) with our SMInfo to LID
 *	                 (GUID: its port GUID, for --auth) and print
 *	                 "set: status 0x.... state S key 0x...", or
 *	                 "set: no answer"
 *	  keys           print "seen key 0x..." for every SM_Key value the
 *	                 requests it got carried
 *	  stats          print "answered N"
 *	  quit
 *	Prints "ready guid 0x... lid N" once it serves.
 *
 *   rogue traps LID COUNT SECONDS
 *	Send COUNT LID-routed Trap(Notice) MADs to LID, evenly over SECONDS,
 *	trap numbers cycling through link, error, capability, M_Key, vendor
 *	and meaningless ones; print "sent N".
 *
 *   rogue mkey derive SECRET GUID
 *	Print the M_Key smd derives for the port GUID from m_key SECRET
 *	(SipHash-2-4 keyed with SECRET and "smd-mkey" over "mkey" and the
 *	GUID, big-endian; 0 becomes 1: see smd/mkey.h), computed here again.
 *
 *   rogue mkey set PATH PORT KEY NEWKEY PROTECT LEASE
 *	By directed route PATH ("0,1,3": exit ports, as smpquery -D takes
 *	them), with M_Key KEY: PortInfo Get of PORT, then a Set of what it
 *	read with M_Key NEWKEY, M_KeyProtectBits PROTECT and M_KeyLeasePeriod
 *	LEASE (PortState and PortPhysicalState 0: no change). Prints
 *	"get: mkey 0x... protect P lease L violations V" or "get: no answer",
 *	then the same for "set:"; exits 0 when the Set was answered, 1 if not.
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <fcntl.h>
#include <endian.h>
#include <arpa/inet.h>
#include <infiniband/umad.h>

#define MAD_LEN		256
#define CLASS_SMI	0x01
#define CLASS_SMI_DR	0x81
#define M_GET		0x01
#define M_SET		0x02
#define M_GET_RESP	0x81
#define M_TRAP		0x05
#define ATTR_NOTICE	0x0002
#define ATTR_SM_INFO	0x0020
#define ATTR_PORT_INFO	0x0015

static volatile sig_atomic_t stop;
static int portid = -1, agent_lr = -1, agent_dr = -1;
static uint8_t *sbuf, *rbuf;
static uint64_t my_guid, key, seen[64];
static unsigned int priority = 15, state = 3, answered, nseen;
static bool auth;
static uint16_t my_lid;

/* SipHash-2-4 (Aumasson, Bernstein 2012), little-endian words */
static uint64_t rotl64(uint64_t x, int b)
{
	return x << b | x >> (64 - b);
}

static void sipround(uint64_t *v)
{
	v[0] += v[1]; v[1] = rotl64(v[1], 13); v[1] ^= v[0]; v[0] = rotl64(v[0], 32);
	v[2] += v[3]; v[3] = rotl64(v[3], 16); v[3] ^= v[2];
	v[0] += v[3]; v[3] = rotl64(v[3], 21); v[3] ^= v[0];
	v[2] += v[1]; v[1] = rotl64(v[1], 17); v[1] ^= v[2]; v[2] = rotl64(v[2], 32);
}

static uint64_t sip(uint64_t k0, uint64_t k1, const uint8_t *m, size_t len)
{
	uint64_t v[4] = { k0 ^ 0x736f6d6570736575ULL, k1 ^ 0x646f72616e646f6dULL,
			  k0 ^ 0x6c7967656e657261ULL, k1 ^ 0x7465646279746573ULL };
	uint8_t last[8] = { 0 };
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		uint64_t w = 0;

		for (int j = 7; j >= 0; j--)
			w = w << 8 | m[i + j];
		v[3] ^= w;
		sipround(v);
		sipround(v);
		v[0] ^= w;
	}
	memcpy(last, m + i, len - i);
	last[7] = (uint8_t)len;
	{
		uint64_t w = 0;

		for (int j = 7; j >= 0; j--)
			w = w << 8 | last[j];
		v[3] ^= w;
		sipround(v);
		sipround(v);
		v[0] ^= w;
	}
	v[2] ^= 0xff;
	for (int r = 0; r < 4; r++)
		sipround(v);
	return v[0] ^ v[1] ^ v[2] ^ v[3];
}

/* smd's SM_Key value: 'q' or 'r', ActCount, from, to, all big-endian */
static uint64_t auth_value(bool answer, uint32_t act, uint64_t from, uint64_t to)
{
	uint8_t m[21];

	m[0] = answer ? 'r' : 'q';
	for (int i = 0; i < 4; i++)
		m[1 + i] = (uint8_t)(act >> (24 - 8 * i));
	for (int i = 0; i < 8; i++) {
		m[5 + i] = (uint8_t)(from >> (56 - 8 * i));
		m[13 + i] = (uint8_t)(to >> (56 - 8 * i));
	}
	return sip(key, 0x736d642d736d6b79ULL, m, sizeof(m));
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, (uint32_t)(v >> 32));
	put32(p + 4, (uint32_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 0; i < 8; i++)
		v = v << 8 | p[i];
	return v;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* IBA 14.2.5.13: GUID, SM_Key, ActCount, Priority (4 bits) and SMState (4 bits) */
static void sminfo_put(uint8_t *data, bool answer, uint64_t to)
{
	memset(data, 0, 64);
	put64(data, my_guid);
	put64(data + 8, auth ? auth_value(answer, answered, my_guid, to) : key);
	put32(data + 16, answered);
	data[20] = (uint8_t)(priority << 4 | (state & 0xf));
}

/* IBA 13.4.3 common header */
static void hdr_put(uint8_t *mad, uint8_t mclass, uint8_t method, uint64_t tid, uint16_t attr,
		    uint32_t amod)
{
	memset(mad, 0, MAD_LEN);
	mad[0] = 1;
	mad[1] = mclass;
	mad[2] = 1;
	mad[3] = method;
	put64(mad + 8, tid);
	put16(mad + 16, attr);
	put32(mad + 20, amod);
}

static int send_mad(int agent, const uint8_t *mad, uint16_t dlid)
{
	memcpy(umad_get_mad(sbuf), mad, MAD_LEN);
	umad_set_addr(sbuf, dlid, 0, 0, 0);
	return umad_send(portid, agent, sbuf, MAD_LEN, 0, 0);
}

/* One MAD, waiting at most ms; 0 and the MAD and its source LID, or -1 */
static int recv_mad(uint8_t *mad, uint16_t *slid, int ms)
{
	struct pollfd pfd = { .fd = umad_get_fd(portid), .events = POLLIN };
	int len = MAD_LEN;

	poll(&pfd, 1, ms);
	if (umad_recv(portid, rbuf, &len, 0) < 0 || len < 64)
		return -1;
	memset(mad, 0, MAD_LEN);
	memcpy(mad, umad_get_mad(rbuf), len > MAD_LEN ? MAD_LEN : (size_t)len);
	*slid = ntohs(umad_get_mad_addr(rbuf)->lid);
	return umad_status(rbuf) ? -1 : 0;
}

/* Answer an SMInfo request as the SM we pretend to be */
static void serve(uint8_t *mad, uint16_t slid)
{
	bool dr = mad[1] == CLASS_SMI_DR;

	if ((mad[1] != CLASS_SMI && !dr) || (mad[3] != M_GET && mad[3] != M_SET) ||
	    get16(mad + 16) != ATTR_SM_INFO)
		return;
	{
		uint64_t k = get64(mad + 64 + 8), from = get64(mad + 64);
		unsigned int i;

		for (i = 0; i < nseen && seen[i] != k; i++)
			;
		if (i == nseen && nseen < 64)
			seen[nseen++] = k;
		mad[3] = M_GET_RESP;
		mad[4] = dr ? 0x80 : 0;		/* DR: direction bit set, status 0 */
		mad[5] = 0;
		/* A DR answer from an SM keeps the hop pointer as it arrived (as smd does) */
		sminfo_put(mad + 64, true, from);
	}
	send_mad(dr ? agent_dr : agent_lr, mad, dr ? 0xffff : slid);
	answered++;
}

static void do_set(uint16_t lid, uint32_t amod, uint64_t to)
{
	uint8_t mad[MAD_LEN], in[MAD_LEN];
	uint64_t tid = (uint64_t)rand() << 8 | 0x5a;
	uint16_t slid;
	double end;

	hdr_put(mad, CLASS_SMI, M_SET, tid, ATTR_SM_INFO, amod);
	sminfo_put(mad + 64, false, to);
	if (send_mad(agent_lr, mad, lid) < 0) {
		printf("set: send failed\n");
		return;
	}
	for (end = now() + 3; now() < end && !stop;) {
		if (recv_mad(in, &slid, 50) < 0)
			continue;
		if (in[3] == M_GET_RESP && (get64(in + 8) & 0xffffffffu) == (tid & 0xffffffffu)) {
			printf("set: status 0x%04x state %u key 0x%016llx\n", get16(in + 4),
			       in[64 + 20] & 0xf, (unsigned long long)get64(in + 64 + 8));
			return;
		}
		serve(in, slid);
	}
	printf("set: no answer\n");
}

static int open_port(bool sm)
{
	char cas[UMAD_MAX_DEVICES][UMAD_CA_NAME_LEN], issm[256];
	long mask[16 / sizeof(long)] = { 0 };
	umad_port_t up;

	if (umad_init() < 0 || umad_get_cas_names(cas, UMAD_MAX_DEVICES) < 1 ||
	    umad_get_port(cas[0], 1, &up) < 0) {
		fprintf(stderr, "rogue: no port\n");
		return -1;
	}
	my_guid = be64toh(up.port_guid);
	my_lid = (uint16_t)up.base_lid;
	umad_release_port(&up);
	portid = umad_open_port(cas[0], 1);
	sbuf = calloc(1, 4096);
	rbuf = calloc(1, 4096);
	if (portid < 0 || !sbuf || !rbuf)
		return -1;
	mask[0] = sm ? (1L << M_GET) | (1L << M_SET) : 0;
	agent_lr = umad_register(portid, CLASS_SMI, 1, 0, sm ? mask : NULL);
	agent_dr = umad_register(portid, CLASS_SMI_DR, 1, 0, sm ? mask : NULL);
	if (agent_lr < 0 || agent_dr < 0)
		return -1;
	/* Unsolicited SMInfo requests reach only a client holding issm (tests/sim/README.md) */
	if (sm && (umad_get_issm_path(cas[0], 1, issm, sizeof(issm)) < 0 ||
		   open(issm, O_RDWR) < 0)) {
		fprintf(stderr, "rogue: cannot open issm\n");
		return -1;
	}
	return 0;
}

/* ---- M_Key (IBA 14.2.4; PortInfo fields: IBA 14.2.5.6) ---- */

static uint64_t mkey_derive(uint64_t secret, uint64_t guid)
{
	uint8_t m[12] = { 'm', 'k', 'e', 'y' };
	uint64_t k;

	for (int i = 0; i < 8; i++)
		m[4 + i] = (uint8_t)(guid >> (56 - 8 * i));
	k = sip(secret, 0x736d642d6d6b6579ULL, m, sizeof(m));
	return k ? k : 1;
}

/* One DR PortInfo request along path (hops exit ports); answer data in out */
static int dr_portinfo(uint8_t method, const uint8_t *path, unsigned int hops, uint8_t port,
		       uint64_t mkey, const uint8_t *data, uint8_t *out)
{
	uint8_t mad[MAD_LEN], in[MAD_LEN];
	uint64_t tid = (uint64_t)rand() << 8 | 0x6b;
	uint16_t slid;
	double end;

	hdr_put(mad, CLASS_SMI_DR, method, tid, ATTR_PORT_INFO, port);
	mad[7] = (uint8_t)hops;			/* HopCount; HopPointer 0 */
	put64(mad + 24, mkey);
	put16(mad + 32, 0xffff);		/* DrSLID, DrDLID: permissive */
	put16(mad + 34, 0xffff);
	if (data)
		memcpy(mad + 64, data, 64);
	memcpy(mad + 128 + 1, path, hops);	/* InitialPath[1..hops] */
	if (send_mad(agent_dr, mad, 0xffff) < 0)
		return -1;
	/* The SMA drops an SMP with a wrong key: no answer (IBA 14.2.4.1) */
	for (end = now() + 2; now() < end && !stop;) {
		if (recv_mad(in, &slid, 50) < 0)
			continue;
		if (in[3] == M_GET_RESP && (get64(in + 8) & 0xffffffffu) == (tid & 0xffffffffu)) {
			memcpy(out, in + 64, 64);
			return 0;
		}
	}
	return -1;
}

static void pi_print(const char *what, int r, const uint8_t *pi)
{
	if (r < 0)
		printf("%s: no answer\n", what);
	else
		printf("%s: mkey 0x%016llx protect %u lease %u violations %u\n", what,
		       (unsigned long long)get64(pi), pi[34] >> 6, get16(pi + 26), get16(pi + 44));
	fflush(stdout);
}

static int run_mkey_set(const char *spath, uint8_t port, uint64_t mkey, uint64_t nkey,
			unsigned int protect, unsigned int lease)
{
	uint8_t path[64], pi[64], set[64];
	unsigned int hops = 0;
	const char *p = spath;
	int r;

	/* "0,1,3": the leading 0 is the local port, the rest are exit ports */
	while (*p && hops < 63) {
		unsigned long v = strtoul(p, (char **)&p, 10);

		if (p != spath && v > 0 && v < 255)
			path[hops++] = (uint8_t)v;
		if (*p == ',')
			p++;
		else
			break;
	}
	if (open_port(false) < 0)
		return 2;
	r = dr_portinfo(M_GET, path, hops, port, mkey, NULL, pi);
	pi_print("get", r, pi);
	if (r < 0)
		memset(pi, 0, sizeof(pi));
	memcpy(set, pi, 64);
	put64(set, nkey);
	put16(set + 26, (uint16_t)lease);
	set[34] = (uint8_t)((set[34] & 0x3f) | (protect & 3) << 6);
	set[32] &= 0xf0;			/* PortState: no change */
	set[33] &= 0x0f;			/* PortPhysicalState: no change */
	r = dr_portinfo(M_SET, path, hops, port, mkey, set, pi);
	pi_print("set", r, pi);
	return r < 0 ? 1 : 0;
}

static int run_sm(void)
{
	char line[128];
	uint8_t mad[MAD_LEN];
	uint16_t slid;

	if (open_port(true) < 0)
		return 1;
	/* poll() sees the pipe, not stdio's buffer: read commands unbuffered */
	setvbuf(stdin, NULL, _IONBF, 0);
	printf("ready guid 0x%016llx lid %u\n", (unsigned long long)my_guid, my_lid);
	fflush(stdout);
	while (!stop) {
		struct pollfd in = { .fd = 0, .events = POLLIN };

		if (recv_mad(mad, &slid, 50) == 0)
			serve(mad, slid);
		if (poll(&in, 1, 0) <= 0)
			continue;
		if (!fgets(line, sizeof(line), stdin))
			break;
		unsigned int lid, amod;
		unsigned long long to = 0;

		if (sscanf(line, "set %u %u %llx", &lid, &amod, &to) >= 2)
			do_set((uint16_t)lid, amod, to);
		else if (!strncmp(line, "keys", 4))
			for (unsigned int i = 0; i < nseen; i++)
				printf("seen key 0x%016llx\n", (unsigned long long)seen[i]);
		else if (!strncmp(line, "stats", 5))
			printf("answered %u\n", answered);
		else if (!strncmp(line, "quit", 4))
			break;
		fflush(stdout);
	}
	return 0;
}

/* IBA 13.4.8.2 Notice: IsGeneric, Type, ProducerType, TrapNumber, IssuerLID, Toggle/Count */
static int run_traps(uint16_t lid, unsigned int count, double seconds)
{
	static const uint16_t numbers[] = { 128, 129, 130, 131, 144, 145, 256, 257, 258, 259,
					    64, 65, 1, 2, 1000, 65535 };
	uint8_t mad[MAD_LEN], in[MAD_LEN];
	double t0, gap = count ? seconds / count : 0;
	unsigned int sent = 0;
	uint16_t slid;

	if (open_port(false) < 0)
		return 1;
	t0 = now();
	for (unsigned int i = 0; i < count && !stop; i++) {
		uint16_t num = numbers[i % (sizeof(numbers) / sizeof(numbers[0]))];
		uint8_t *n = mad + 64;

		while (now() < t0 + i * gap && !stop)
			recv_mad(in, &slid, 10);
		hdr_put(mad, CLASS_SMI, M_TRAP, 0x100000u + i, ATTR_NOTICE, 0);
		n[0] = 0x80 | 1;		/* generic, type 1 (urgent) */
		n[3] = 2;			/* producer: switch */
		put16(n + 4, num);
		put16(n + 6, my_lid);
		put16(n + 8, (uint16_t)(i & 0x7fff));
		put16(n + 10, my_lid);		/* data details: "the LID that changed" */
		if (send_mad(agent_lr, mad, lid) == 0)
			sent++;
	}
	printf("sent %u\n", sent);
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	int r;

	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	srand((unsigned int)getpid());
	if (argc >= 2 && !strcmp(argv[1], "sm")) {
		for (int i = 2; i + 1 < argc; i += 2) {
			if (!strcmp(argv[i], "--key") || !strcmp(argv[i], "--auth")) {
				key = strtoull(argv[i + 1], NULL, 0);
				auth = !strcmp(argv[i], "--auth");
			}
			else if (!strcmp(argv[i], "--priority"))
				priority = (unsigned int)strtoul(argv[i + 1], NULL, 0) & 0xf;
			else if (!strcmp(argv[i], "--state"))
				state = (unsigned int)strtoul(argv[i + 1], NULL, 0) & 0xf;
		}
		r = run_sm();
	} else if (argc == 5 && !strcmp(argv[1], "traps")) {
		r = run_traps((uint16_t)strtoul(argv[2], NULL, 0),
			      (unsigned int)strtoul(argv[3], NULL, 0), strtod(argv[4], NULL));
	} else if (argc == 5 && !strcmp(argv[1], "mkey") && !strcmp(argv[2], "derive")) {
		printf("0x%016llx\n", (unsigned long long)mkey_derive(strtoull(argv[3], NULL, 0),
								strtoull(argv[4], NULL, 0)));
		r = 0;
	} else if (argc == 9 && !strcmp(argv[1], "mkey") && !strcmp(argv[2], "set")) {
		r = run_mkey_set(argv[3], (uint8_t)strtoul(argv[4], NULL, 0),
				 strtoull(argv[5], NULL, 0), strtoull(argv[6], NULL, 0),
				 (unsigned int)strtoul(argv[7], NULL, 0),
				 (unsigned int)strtoul(argv[8], NULL, 0));
	} else {
		fprintf(stderr, "usage: rogue sm [--key K | --auth K] [--priority P] [--state S] | "
			"rogue traps LID COUNT SECONDS | rogue mkey derive SECRET GUID | "
			"rogue mkey set PATH PORT KEY NEWKEY PROTECT LEASE\n");
		return 2;
	}
	fflush(stdout);
	/* Back through exit(): umad2sim's atexit handler frees the simulator's slot */
	return r;
}
