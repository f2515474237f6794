/*
 * pkey_shim.c - LD_PRELOAD shim for an SM under test: it makes the
 * simulator's switches look like real ones that enforce partitions, and
 * writes down every Set SMP the SM sends, so that a test can judge what
 * went on the wire.
 *
 * ibsim 0.10 keeps P_Key tables (smpquery pkeys reads them back) but its
 * SwitchInfo says InboundEnforcementCap = OutboundEnforcementCap = 0 (IBA
 * 14.2.5.4: the switch cannot check P_Keys), and a PortInfo Set of
 * PartitionEnforcementInbound/Outbound (IBA 14.2.5.6) is dropped: a correct
 * SM sets neither there, and a test could not tell an SM that forgets them
 * from one that is right not to. This shim:
 *  - sets both capability bits (SwitchInfo bits 128, 129) in every SwitchInfo
 *    answer the SM reads (PKEY_SHIM_CAPS=0 leaves them as ibsim says);
 *  - remembers the enforcement bits of every PortInfo Set the SM sends to a
 *    switch port, and puts them back into the PortInfo answers of that port
 *    (ports are named by the node GUID the directed route leads to, learnt
 *    from the NodeInfo answers, and the port number), as a switch would;
 *  - logs every Set, one line each, to $PKEY_SHIM_LOG:
 *      set attr=0xAAAA amod=0xMMMMMMMM node=0xGUID [enf=I,O] [pkeys=K,K,...]
 *    (node: the node the route leads to, 0x0 when not known yet; enf: the
 *    PortInfo enforcement bits; pkeys: the non-zero entries of a P_KeyTable
 *    block, index:value).
 *
 * Build:  cc -shared -fPIC -O2 -o pkey_shim.so pkey_shim.c -ldl -lpthread
 * Use:    PKEY_SHIM_LOG=/tmp/sets LD_PRELOAD=./pkey_shim.so:libumad2sim.so smd ...
 * (the umad interposition is umad_shim.h's, shared with rereg_shim.c)
 */
#include "umad_shim.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ATTR_NODE_INFO	0x0011
#define ATTR_SWITCH_INFO 0x0012
#define ATTR_PORT_INFO	0x0015
#define ATTR_PKEY_TABLE	0x0016
/* PortInfo bits 348, 349 (byte 43: 0x08, 0x04); SwitchInfo bits 128, 129 (byte 16) */
#define PI_ENF_BYTE	43
#define PI_ENF_MASK	0x0c
#define SI_CAP_BYTE	16
#define SI_CAP_MASK	0xc0
#define MAX_ROUTES	65536
#define MAX_PORTS	65536

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

/* Directed route -> node GUID, from NodeInfo answers */
static struct route {
	uint8_t hops;
	uint8_t path[64];
	uint64_t guid;
} routes[MAX_ROUTES];
static unsigned int nroutes;

/* (node GUID, port) -> enforcement bits last set */
static struct enf {
	uint64_t guid;
	uint8_t port;
	uint8_t bits;
} enfs[MAX_PORTS];
static unsigned int nenfs;

static int is_dr_smp(const uint8_t *mad, size_t len)
{
	return len >= 256 && mad[M_CLASS] == 0x81;
}

static struct route *route_find(const uint8_t *mad, int add)
{
	uint8_t hops = mad[M_HOPCNT] & 0x3f;

	for (unsigned int i = 0; i < nroutes; i++)
		if (routes[i].hops == hops && !memcmp(routes[i].path, mad + M_PATH + 1, hops))
			return &routes[i];
	if (!add || nroutes == MAX_ROUTES)
		return NULL;
	routes[nroutes].hops = hops;
	memcpy(routes[nroutes].path, mad + M_PATH + 1, hops);
	return &routes[nroutes++];
}

static uint64_t node_of(const uint8_t *mad)
{
	struct route *r = route_find(mad, 0);

	return r ? r->guid : 0;
}

static struct enf *enf_find(uint64_t guid, uint8_t port, int add)
{
	for (unsigned int i = 0; i < nenfs; i++)
		if (enfs[i].guid == guid && enfs[i].port == port)
			return &enfs[i];
	if (!add || nenfs == MAX_PORTS)
		return NULL;
	enfs[nenfs] = (struct enf){ .guid = guid, .port = port };
	return &enfs[nenfs++];
}

static void log_set(const uint8_t *mad, uint64_t node)
{
	const char *path = getenv("PKEY_SHIM_LOG");
	uint16_t attr = get16(mad + M_ATTR);
	FILE *f;

	if (!path || !*path)
		return;
	f = fopen(path, "a");
	if (!f)
		return;
	fprintf(f, "set attr=0x%04x amod=0x%08x node=0x%016llx", attr, get32(mad + M_AMOD),
		(unsigned long long)node);
	if (attr == ATTR_PORT_INFO)
		fprintf(f, " enf=%u,%u", !!(mad[M_DATA + PI_ENF_BYTE] & 0x08),
			!!(mad[M_DATA + PI_ENF_BYTE] & 0x04));
	if (attr == ATTR_PKEY_TABLE) {
		const char *sep = " pkeys=";

		for (unsigned int i = 0; i < 32; i++) {
			uint16_t k = get16(mad + M_DATA + 2 * i);

			if (!(k & 0x7fff))
				continue;
			fprintf(f, "%s%u:0x%04x", sep, i, k);
			sep = ",";
		}
	}
	fprintf(f, "\n");
	fclose(f);
}

static void shim_sent(const uint8_t *mad, size_t len)
{
	uint64_t node;

	if (!((mad[M_CLASS] == 0x81 || mad[M_CLASS] == 0x01) && len >= 256 &&
	      mad[M_METHOD] == 0x02))
		return;
	pthread_mutex_lock(&lock);
	node = mad[M_CLASS] == 0x81 ? node_of(mad) : 0;
	log_set(mad, node);
	/* What a switch port keeps: the enforcement bits of the Set */
	if (node && get16(mad + M_ATTR) == ATTR_PORT_INFO) {
		struct enf *e = enf_find(node, (uint8_t)get32(mad + M_AMOD), 1);

		if (e)
			e->bits = mad[M_DATA + PI_ENF_BYTE] & PI_ENF_MASK;
	}
	pthread_mutex_unlock(&lock);
}

static void shim_received(uint8_t *mad, size_t len)
{
	const char *caps = getenv("PKEY_SHIM_CAPS");
	uint16_t attr;

	if (!is_dr_smp(mad, len) || mad[M_METHOD] != 0x81 || get16(mad + 4) & 0x7fff)
		return;
	attr = get16(mad + M_ATTR);
	pthread_mutex_lock(&lock);
	if (attr == ATTR_NODE_INFO) {
		struct route *r = route_find(mad, 1);

		if (r)
			r->guid = get64(mad + M_DATA + 12);	/* NodeGUID */
	} else if (attr == ATTR_SWITCH_INFO && !(caps && !strcmp(caps, "0"))) {
		mad[M_DATA + SI_CAP_BYTE] |= SI_CAP_MASK;
	} else if (attr == ATTR_PORT_INFO) {
		uint64_t node = node_of(mad);
		struct enf *e = node ? enf_find(node, (uint8_t)get32(mad + M_AMOD), 0) : NULL;

		if (e)
			mad[M_DATA + PI_ENF_BYTE] = (uint8_t)((mad[M_DATA + PI_ENF_BYTE] &
							       ~PI_ENF_MASK) | e->bits);
	}
	pthread_mutex_unlock(&lock);
}
