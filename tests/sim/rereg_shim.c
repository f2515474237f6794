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
 * (before libumad2sim.so: both wrap open, read and write; see
 * tests/bench/madcount.c.)
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>
#include <infiniband/umad.h>

#define MAX_TRACKED_FD	65536
#define UMAD_HDR	offsetof(struct ib_user_mad, data)
/* MAD offsets (IBA 13.4.2, 14.2.1.2): class, method, attribute, DR paths, data */
#define M_CLASS		1
#define M_METHOD	3
#define M_ATTR		16
#define M_HOPCNT	7
#define M_DATA		64
#define M_PATH		128
#define ATTR_PORT_INFO	0x0015
#define CAP_DEVMGT	(1u << 22)
#define CAP_REREG	(1u << 25)

static unsigned char umad_fd[MAX_TRACKED_FD];
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_read)(int, void *, size_t);
static int (*real_open)(const char *, int, ...);
static pthread_mutex_t log_lock = PTHREAD_MUTEX_INITIALIZER;

static int is_port_info(const uint8_t *mad, size_t len)
{
	return len >= 128 && (mad[M_CLASS] == 0x81 || mad[M_CLASS] == 0x01) &&
	       ((mad[M_ATTR] << 8) | mad[M_ATTR + 1]) == ATTR_PORT_INFO;
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

int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	int fd;

	if (!real_open)
		real_open = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;

		va_start(ap, flags);
		mode = (mode_t)va_arg(ap, int);
		va_end(ap);
	}
	fd = real_open(path, flags, mode);
	if (fd >= 0 && fd < MAX_TRACKED_FD && !strncmp(path, "/dev/infiniband/umad", 20))
		umad_fd[fd] = 1;
	return fd;
}

ssize_t write(int fd, const void *buf, size_t count)
{
	if (!real_write)
		real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	if (fd >= 0 && fd < MAX_TRACKED_FD && umad_fd[fd] && count > UMAD_HDR) {
		const uint8_t *mad = (const uint8_t *)buf + UMAD_HDR;
		size_t len = count - UMAD_HDR;

		/* A Set of PortInfo with ClientReregister (attribute bit 408) */
		if (is_port_info(mad, len) && mad[M_METHOD] == 0x02 &&
		    (mad[M_DATA + 51] & 0x80))
			log_rereg(mad, len);
	}
	return real_write(fd, buf, count);
}

ssize_t read(int fd, void *buf, size_t count)
{
	ssize_t n;

	if (!real_read)
		real_read = (ssize_t (*)(int, void *, size_t))dlsym(RTLD_NEXT, "read");
	n = real_read(fd, buf, count);
	if (n > (ssize_t)UMAD_HDR && fd >= 0 && fd < MAX_TRACKED_FD && umad_fd[fd]) {
		uint8_t *mad = (uint8_t *)buf + UMAD_HDR;
		size_t len = (size_t)n - UMAD_HDR;

		if (is_port_info(mad, len) && (mad[M_METHOD] & 0x80) && len >= M_DATA + 24) {
			uint8_t *cm = mad + M_DATA + 20;
			uint32_t cap = (uint32_t)cm[0] << 24 | (uint32_t)cm[1] << 16 |
				       (uint32_t)cm[2] << 8 | cm[3];

			if (cap & CAP_DEVMGT) {
				cap |= CAP_REREG;
				cm[0] = (uint8_t)(cap >> 24);
			}
		}
	}
	return n;
}
