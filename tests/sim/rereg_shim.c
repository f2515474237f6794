/*
 * rereg_shim.c - LD_PRELOAD shim for an SM under test: it makes the
 * simulator's CA ports look like real HCAs that support client
 * reregistration, and writes down every ClientReregister the SM sends.
 *
 * ibsim's HCA ports do not advertise IsClientReregistrationSupported
 * (PortInfo CapabilityMask bit 25, IBA 14.2.5.6): a correct SM never sets
 * ClientReregister there, and a test could not tell a master that forgets
 * it from one that is right not to. This shim ORs bit 25 into the
 * CapabilityMask of every PortInfo answer the SM reads whose mask has bit
 * 22 set (IsDeviceManagementSupported: ibsim sets it on CA ports only), and
 * logs each PortInfo Set the SM sends with ClientReregister (bit 408 of the
 * attribute) set, as "rereg hops=N path=P1,P2,..." lines in $REREG_LOG
 * (the directed route names the port: the SM reaches each CA port by one).
 *
 * Build:  cc -shared -fPIC -O2 -o rereg_shim.so rereg_shim.c -ldl
 * Use:    REREG_LOG=/tmp/rereg LD_PRELOAD=./rereg_shim.so:libumad2sim.so smd ...
 * (the umad interposition is umad_shim.h's, shared with pkey_shim.c)
 */
#include "umad_shim.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define ATTR_PORT_INFO	0x0015
#define CAP_DEVMGT	(1u << 22)
#define CAP_REREG	(1u << 25)

static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static int is_port_info(const uint8_t *mad, size_t len)
{
	return len >= 128 && (mad[M_CLASS] == 0x81 || mad[M_CLASS] == 0x01) &&
	       get16(mad + M_ATTR) == ATTR_PORT_INFO;
}

static void log_rereg(const uint8_t *mad, size_t len)
{
	const char *path = getenv("REREG_LOG");
	unsigned int hops = mad[M_HOPCNT] & 0x3f;
	FILE *f;

	if (!path || !*path || mad[M_CLASS] != 0x81 || len < M_PATH + 64)
		return;
	pthread_mutex_lock(&log_lock);
	f = fopen(path, "a");
	if (f) {
		fprintf(f, "rereg hops=%u path=", hops);
		for (unsigned int i = 1; i <= hops; i++)
			fprintf(f, "%s%u", i > 1 ? "," : "", mad[M_PATH + i]);
		fprintf(f, "\n");
		fclose(f);
	}
	pthread_mutex_unlock(&log_lock);
}

static void shim_sent(const uint8_t *mad, size_t len)
{
	/* A Set of PortInfo with ClientReregister (attribute bit 408) */
	if (is_port_info(mad, len) && mad[M_METHOD] == 0x02 && (mad[M_DATA + 51] & 0x80))
		log_rereg(mad, len);
}

static void shim_received(uint8_t *mad, size_t len)
{
	if (is_port_info(mad, len) && (mad[M_METHOD] & 0x80) && len >= M_DATA + 24) {
		uint8_t *cm = mad + M_DATA + 20;
		uint32_t cap = get32(cm);

		if (cap & CAP_DEVMGT) {
			cap |= CAP_REREG;
			cm[0] = (uint8_t)(cap >> 24);
		}
	}
}
